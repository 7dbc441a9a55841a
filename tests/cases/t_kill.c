// SPDX-License-Identifier: GPL-2.0
/*
 * t_kill: an owner's locks die with its last file reference: kill -9 of a
 * holder wakes its waiters, kill -9 of a waiter takes it out of the queue,
 * close() releases, a dup()ed descriptor keeps the owner alive, and a
 * forked child shares the owner of its parent's descriptor.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

struct waiter {
	struct ordlock_key keys[4];
	unsigned int nkeys;
	int ret;
	uint64_t elapsed;
	struct ordlock_failure failure;
};

static int waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ordlock *ol = olt_child_open(NULL);
	uint64_t t0 = now_ms();

	w->ret = ordlock_acquire(ol, w->keys, w->nkeys, OLT_LONG_MS, 0, NULL);
	w->elapsed = now_ms() - t0;
	w->failure = *ordlock_last_failure(ol);
	return w->ret ? 2 : 0;
}

/* A waiter (a child) for @w's keys, asleep in ACQUIRE (a point, @what): its pid */
static pid_t start_waiter(struct waiter *w, const char *what)
{
	pid_t pid = child_start(waiter_main, w);

	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0, "%s", what);
	return pid;
}

static void test_kill_holder(void)
{
	struct ordlock_key hk[3] = {
		ORDLOCK_EX(10, 1), ORDLOCK_EX(10, 2), ORDLOCK_SH(10, 3),
	};
	struct olt_holder *h = olt_holder_start(NULL, hk, 3);
	struct waiter *w = shm_alloc(sizeof(*w));
	int status;
	pid_t pid;

	is_int(h->result, 0, "a child holds 10:1, 10:2, 10:3");
	w->keys[0] = ORDLOCK_EX(10, 2);
	w->keys[1] = ORDLOCK_EX(10, 3);
	w->nkeys = 2;
	pid = start_waiter(w, "a waiter for {10:2, 10:3} blocks");
	status = olt_holder_kill(h, SIGKILL);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	   "kill -9 the holder");
	is_int(child_wait(pid, 30), 0,
	       "the waiter is granted once the holder died");
	is_int(w->ret, 0, "its acquire returned 0");
	is_int(olt_probe(NULL, 10, 1, EX), 0,
	       "10:1, held by the dead holder alone, is free");
	is_int(olt_probe(NULL, 10, 2, EX), 0, "10:2 is free (waiter exited)");
	shm_free(w, sizeof(*w));
}

static void test_kill_waiter(void)
{
	struct ordlock_key hk = ORDLOCK_EX(10, 12);
	struct olt_holder *h = olt_holder_start(NULL, &hk, 1);
	struct waiter *w1 = shm_alloc(sizeof(*w1));
	struct waiter *w2 = shm_alloc(sizeof(*w2));
	pid_t p1, p2;
	int status;

	w1->keys[0] = ORDLOCK_EX(10, 12);
	w1->keys[1] = ORDLOCK_EX(10, 11);
	w1->nkeys = 2;
	p1 = start_waiter(w1, "waiter 1 for {10:11, 10:12} blocks (holding 10:11)");
	w2->keys[0] = ORDLOCK_SH(10, 12);
	w2->nkeys = 1;
	p2 = start_waiter(w2, "waiter 2 for 10:12 queues behind it");
	is_errno(olt_probe(NULL, 10, 11, SH), EAGAIN, "10:11 is held by waiter 1");

	status = child_kill(p1, SIGKILL);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	   "kill -9 waiter 1 while it waits");
	is_int(olt_probe(NULL, 10, 11, EX), 0,
	       "the key it held while waiting is free");
	is_int(olt_holder_stop(h), 0, "the holder of 10:12 leaves");
	is_int(child_wait(p2, 30), 0,
	       "waiter 2 is granted: the dead waiter left the queue");
	is_int(w2->ret, 0, "waiter 2's acquire returned 0");
	shm_free(w1, sizeof(*w1));
	shm_free(w2, sizeof(*w2));
}

/* ACQUIRE on a descriptor opened without the library: -errno (errno too) */
static int raw_acquire(int fd, struct ordlock_key *keys, unsigned int n,
		       unsigned int flags)
{
	struct ordlock *ol = ordlock_open_fd(fd);
	int ret;

	if (!ol)
		return -errno;
	ret = ordlock_acquire(ol, keys, n, OLT_LONG_MS, flags, NULL);
	/* the descriptor stays the caller's */
	ordlock_detach(ol);
	if (ret)
		errno = -ret;
	return ret;
}

static void test_close_dup(void)
{
	struct ordlock_key k = ORDLOCK_EX(10, 20);
	int fd, fd2;

	fd = olt_raw_fd();
	is_int(raw_acquire(fd, &k, 1, 0), 0, "raw fd takes 10:20");
	is_errno(olt_probe(NULL, 10, 20, SH), EAGAIN, "10:20 is held");
	close(fd);
	is_int(olt_probe(NULL, 10, 20, EX), 0, "close() released it");

	fd = olt_raw_fd();
	is_int(raw_acquire(fd, &k, 1, 0), 0, "a new owner takes 10:20");
	fd2 = dup(fd);
	ok(fd2 >= 0, "dup() the descriptor");
	close(fd);
	is_errno(olt_probe(NULL, 10, 20, SH), EAGAIN,
		 "after closing the original, the dup keeps 10:20 held");
	is_int(olt_fd_nheld(fd2), 1, "the owner behind the dup holds 1 key");
	k = ORDLOCK_EX(10, 21);
	is_int(raw_acquire(fd2, &k, 1, 0), 0,
	       "the dup acts for the same owner: 10:21 above 10:20 granted");
	k = ORDLOCK_EX(10, 19);
	is_errno(raw_acquire(fd2, &k, 1, 0), EDEADLK,
		 "and the order rule still sees 10:20 held (10:19: EDEADLK)");
	close(fd2);
	is_int(olt_probe(NULL, 10, 20, EX), 0, "the last close released 10:20");
	is_int(olt_probe(NULL, 10, 21, EX), 0, "and 10:21");
}

struct forked {
	int fd;
	uint64_t owner_id;
	long nheld;
	int ret;
	int rel;
};

static int fork_child_take(void *arg)
{
	struct forked *fk = arg;
	struct ordlock_owner_info info;
	struct ordlock_key k = ORDLOCK_EX(10, 31);

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (olt_ioctl(fk->fd, ORDLOCK_IOC_OWNER_INFO, &info) < 0)
		return 1;
	fk->owner_id = info.owner_id;
	fk->nheld = info.nheld;
	fk->ret = raw_acquire(fk->fd, &k, 1, 0) ? -errno : 0;
	/* exit without closing: the parent still holds a reference */
	return 0;
}

static int fork_child_release(void *arg)
{
	struct forked *fk = arg;
	struct ordlock_key k = ordlock_key(10, 30, 0);
	struct ordlock_release r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.nkeys = 1;
	r.keys = (uintptr_t)&k;
	fk->rel = olt_ioctl(fk->fd, ORDLOCK_IOC_RELEASE, &r) ? -errno : 0;
	return 0;
}

static void test_fork(void)
{
	struct ordlock_key k = ORDLOCK_EX(10, 30);
	struct forked *fk = shm_alloc(sizeof(*fk));
	struct ordlock_owner_info info;
	struct ordlock *probe = olt_open(NULL);
	pid_t pid;

	fk->fd = olt_raw_fd();
	is_int(raw_acquire(fk->fd, &k, 1, 0), 0, "the parent takes 10:30");
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	olt_ioctl(fk->fd, ORDLOCK_IOC_OWNER_INFO, &info);

	pid = child_start(fork_child_take, fk);
	is_int(child_wait(pid, 0), 0, "a forked child uses the inherited fd");
	is_int(fk->owner_id, info.owner_id,
	       "the child sees the same owner id (one file description, one owner)");
	is_int(fk->nheld, 1, "the child sees the parent's key as its own");
	is_int(fk->ret, 0, "the child takes 10:31 for the shared owner");
	is_int(olt_fd_nheld(fk->fd), 2,
	       "after the child exited the owner still holds 2 keys");
	k = ORDLOCK_EX(10, 31);
	is_errno(ordlock_try_acquire(probe, &k, 1, NULL), EAGAIN,
		 "10:31 outlives the child that took it");
	diag("observed: the holder pid of 10:31 (taken by child %d, parent %d) is reported as %u",
	     (int)pid, (int)getpid(), ordlock_last_failure(probe)->pid);
	ok(ordlock_last_failure(probe)->pid == (unsigned int)pid ||
	   ordlock_last_failure(probe)->pid == (unsigned int)getpid(),
	   "the reported holder pid is the child's or the parent's");

	pid = child_start(fork_child_release, fk);
	is_int(child_wait(pid, 0), 0, "another child releases 10:30");
	is_int(fk->rel, 0, "through the inherited fd: allowed (same owner)");
	is_int(olt_fd_nheld(fk->fd), 1, "the parent's owner now holds 1 key");
	is_int(olt_probe(NULL, 10, 30, EX), 0, "10:30 is free");
	close(fk->fd);
	is_int(olt_probe(NULL, 10, 31, EX), 0,
	       "the parent's close (the last reference) released 10:31");
	ordlock_close(probe);
	shm_free(fk, sizeof(*fk));
}

static int exit_holding(void *arg)
{
	struct ordlock_key keys[64];
	struct ordlock *ol = olt_child_open(NULL);
	int i;

	(void)arg;
	for (i = 0; i < 64; i++)
		keys[i] = ORDLOCK_EX(11, (uint64_t)i);
	if (ordlock_acquire(ol, keys, 64, OLT_LONG_MS, 0, NULL))
		return 2;
	return 0;	/* exit holding 64 keys */
}

static void test_exit(void)
{
	pid_t pid = child_start(exit_holding, NULL);
	int i, all_free = 1;

	is_int(child_wait(pid, 0), 0, "a child exits holding 64 keys");
	for (i = 0; i < 64; i++)
		if (olt_probe(NULL, 11, (uint64_t)i, EX))
			all_free = 0;
	ok(all_free, "all 64 keys are free after its exit");
}

int main(void)
{
	watchdog_start(600);
	test_kill_holder();
	test_kill_waiter();
	test_close_dup();
	test_fork();
	test_exit();
	return tap_done();
}
