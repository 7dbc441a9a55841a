// SPDX-License-Identifier: GPL-2.0
/*
 * t_hostile_fd: what LTP's fcntl/flock tests do to a lock's descriptor,
 * done to an owner while one of its threads waits in ACQUIRE, having
 * taken part of its request ({1:1 free, 1:2 held by another owner}):
 *  - execve() by another thread (the kernel kills the waiting thread):
 *    without O_CLOEXEC the new program inherits the owner, which holds
 *    nothing (the partial grant was undone), is not busy, and takes keys;
 *    with O_CLOEXEC the owner is gone and 1:1 is free;
 *  - close() of the descriptor by another thread: the wait goes on (the
 *    ioctl holds the file), its grant is released when the ioctl returns
 *    (the last reference): nothing is left held;
 *  - fork() by another thread: the child's copy of the descriptor is the
 *    same owner, busy: ACQUIRE, RELEASE fail with EBUSY at once and change
 *    nothing, OWNER_INFO answers; the parent's wait is granted after.
 * Another owner's try-lock (olt_probe) is the judge. The program runs
 * itself again (argv[1] "--after-exec") for the exec cases and reports
 * what it saw in its exit status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE

/* what the program run by execve() reports, one bit each */
#define AX_FD_OPEN	0x01	/* the descriptor is open (no O_CLOEXEC) */
#define AX_NHELD0	0x02	/* its owner holds nothing */
#define AX_TAKES	0x04	/* it takes 1:1 (not EBUSY) */
#define AX_HELD_NOW	0x08	/* then another owner sees 1:1 held */
#define AX_FD_CLOSED	0x10	/* the descriptor is closed (O_CLOEXEC) */
#define AX_FREE		0x20	/* 1:1 is free */
#define AX_BAD		0x40	/* the arguments did not parse */

struct waiter {
	struct ordlock *ol;
	pid_t tid;
	int ret;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ordlock_key k[2] = { ORDLOCK_EX(1, 1), ORDLOCK_EX(1, 2) };

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	w->ret = ordlock_acquire(w->ol, k, 2, OLT_LONG_MS, 0, NULL);
	return NULL;
}

/* Start the waiting thread and return once it sleeps in ACQUIRE */
static int start_waiter(pthread_t *th, struct waiter *w)
{
	uint64_t deadline = now_ms() + BLOCKED_TIMEOUT_MS;

	if (pthread_create(th, NULL, waiter_main, w))
		return -1;
	while (!__atomic_load_n(&w->tid, __ATOMIC_SEQ_CST) && now_ms() < deadline)
		usleep(1000);
	return wait_blocked_ioctl(w->tid, ORDLOCK_IOC_ACQUIRE, 0);
}

/* The program execve() started: look at descriptor @fd of domain @d */
static int after_exec(const char *d, const char *fdstr)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct ordlock *ol;
	int fd = atoi(fdstr), bits = 0;

	if (!*d || fd <= 2)
		return AX_BAD;
	if (fcntl(fd, F_GETFD) < 0) {
		bits |= errno == EBADF ? AX_FD_CLOSED : 0;
		if (!olt_probe(d, 1, 1, EX))
			bits |= AX_FREE;
		return bits;
	}
	bits |= AX_FD_OPEN;
	ol = ordlock_open_fd(fd);
	if (!ol)
		return bits;
	if (olt_fd_nheld(fd) == 0)
		bits |= AX_NHELD0;
	if (!ordlock_try_acquire(ol, &k, 1, NULL))
		bits |= AX_TAKES;
	if (olt_probe(d, 1, 1, EX) == -EAGAIN)
		bits |= AX_HELD_NOW;
	ordlock_close(ol);
	return bits;
}

struct exec_case {
	const char *d;
	int cloexec;
};

/* A process whose second thread waits while its first one calls execve() */
static int exec_while_waiting(void *arg)
{
	const struct exec_case *c = arg;
	static struct waiter w;
	char fdstr[16];
	pthread_t th;
	int fd;

	fd = open(ORDLOCK_DEVICE, O_RDWR | (c->cloexec ? O_CLOEXEC : 0));
	if (fd < 0)
		return 100;
	/* not 0-2: the exec'd program tells a closed descriptor by its number */
	if (fd <= 2)
		return 101;
	w.ol = ordlock_open_fd(fd);
	if (!w.ol || ordlock_set_domain(w.ol, c->d))
		return 102;
	if (start_waiter(&th, &w))
		return 103;
	snprintf(fdstr, sizeof(fdstr), "%d", fd);
	execl("/proc/self/exe", "t_hostile_fd", "--after-exec", c->d, fdstr, (char *)NULL);
	return 104;
}

static void test_exec(int cloexec)
{
	struct ordlock_key hk = ORDLOCK_EX(1, 2);
	const char *what = cloexec ? "O_CLOEXEC" : "no O_CLOEXEC";
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct exec_case c = { d, cloexec };
	struct olt_holder *h;
	int st;

	snprintf(d, sizeof(d), "%s", olt_domain("hfd-exec"));
	h = olt_holder_start(d, &hk, 1);
	is_int(h->result, 0, "%s: another owner holds 1:2", what);
	st = child_wait(child_start(exec_while_waiting, &c), 60);
	if (!cloexec) {
		ok(st >= 0 && st < 100 && (st & AX_FD_OPEN),
		   "%s: a thread waits for {1:1, 1:2}, another execs: the program has the descriptor (status %d)",
		   what, st);
		ok(st >= 0 && st < 100 && (st & AX_NHELD0),
		   "%s: its owner holds nothing (the partial grant of 1:1 was undone)", what);
		ok(st >= 0 && st < 100 && (st & AX_TAKES),
		   "%s: and takes 1:1 (not busy: the killed thread's request is gone)", what);
		ok(st >= 0 && st < 100 && (st & AX_HELD_NOW),
		   "%s: another owner sees 1:1 held then", what);
	} else {
		ok(st >= 0 && st < 100 && (st & AX_FD_CLOSED),
		   "%s: a thread waits for {1:1, 1:2}, another execs: the descriptor is closed (status %d)",
		   what, st);
		ok(st >= 0 && st < 100 && (st & AX_FREE),
		   "%s: the owner is gone with it: 1:1 is free", what);
	}
	is_int(olt_probe(d, 1, 1, EX), 0, "%s: 1:1 is free after the program exited", what);
	is_int(olt_probe(d, 1, 2, EX), -EAGAIN, "%s: 1:2 is still the holder's", what);
	olt_holder_stop(h);
	is_int(olt_probe(d, 1, 2, EX), 0, "%s: and free when it let go", what);
}

/* close() of the descriptor while another thread of the owner waits on it */
static void test_close_while_waiting(void)
{
	struct ordlock_key hk = ORDLOCK_EX(1, 2);
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	static struct waiter w;
	struct olt_holder *h;
	pthread_t th;
	int fd;

	snprintf(d, sizeof(d), "%s", olt_domain("hfd-close"));
	h = olt_holder_start(d, &hk, 1);
	w.ol = olt_open(d);
	fd = ordlock_fd(w.ol);
	is_int(start_waiter(&th, &w), 0, "close: a thread waits for {1:1, 1:2}, holding 1:1");
	is_int(olt_probe(d, 1, 1, EX), -EAGAIN, "close: 1:1 is taken by the waiting request");
	is_int(close(fd), 0, "close: another thread closes the descriptor");
	is_int(olt_probe(d, 1, 1, EX), -EAGAIN,
	       "close: the wait goes on (the ioctl holds the file): 1:1 still taken");
	olt_holder_stop(h);
	pthread_join(th, NULL);
	is_int(w.ret, 0, "close: the request is granted when the holder lets go");
	is_int(olt_probe(d, 1, 1, EX), 0, "close: 1:1 is free (the grant went with the last reference)");
	is_int(olt_probe(d, 1, 2, EX), 0, "close: 1:2 is free");
	ordlock_detach(w.ol);
}

struct fork_report {
	int acq, acq_err, rel, rel_err, relall, relall_err, info;
	long nheld;
};

/* fork() while another thread of the owner waits on the descriptor */
static void test_fork_while_waiting(void)
{
	struct ordlock_key hk = ORDLOCK_EX(1, 2), k3 = ORDLOCK_EX(1, 3), k1 = ORDLOCK_EX(1, 1);
	struct fork_report *r = shm_alloc(sizeof(*r));
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	static struct waiter w;
	struct olt_holder *h;
	pthread_t th;
	pid_t pid;

	snprintf(d, sizeof(d), "%s", olt_domain("hfd-fork"));
	h = olt_holder_start(d, &hk, 1);
	w.ol = olt_open(d);
	is_int(start_waiter(&th, &w), 0, "fork: a thread waits for {1:1, 1:2}");
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct ordlock_owner_info info;

		r->acq = ordlock_try_acquire(w.ol, &k3, 1, NULL);
		r->acq_err = errno;
		r->rel = ordlock_release(w.ol, &k1, 1);
		r->rel_err = errno;
		r->relall = ordlock_release_all(w.ol);
		r->relall_err = errno;
		r->info = ordlock_owner_info(w.ol, &info);
		r->nheld = r->info ? -1 : (long)info.nheld;
		_exit(0);
	}
	is_int(child_wait(pid, 30), 0, "fork: the child ran");
	ok(r->acq == -EBUSY && r->acq_err == EBUSY,
	   "fork: the child's ACQUIRE on the shared owner: EBUSY (%d)", r->acq);
	ok(r->rel == -EBUSY, "fork: its RELEASE of 1:1: EBUSY (%d)", r->rel);
	ok(r->relall == -EBUSY, "fork: its RELEASE_ALL: EBUSY (%d)", r->relall);
	ok(r->info == 0 && r->nheld == 0,
	   "fork: its OWNER_INFO answers: nothing held (all or nothing: the waiting request's 1:1 is not the owner's yet) (%ld)",
	   r->nheld);
	is_int(olt_probe(d, 1, 1, EX), -EAGAIN, "fork: 1:1 still taken by the waiting request");
	is_int(olt_probe(d, 1, 3, EX), 0, "fork: 1:3 was not taken");
	olt_holder_stop(h);
	pthread_join(th, NULL);
	is_int(w.ret, 0, "fork: the parent's request is granted after");
	is_int(olt_nheld(w.ol), 2, "fork: its owner holds 1:1 and 1:2");
	ordlock_close(w.ol);
	is_int(olt_probe(d, 1, 1, EX), 0, "fork: all free after close");
	shm_free(r, sizeof(*r));
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--after-exec"))
		return after_exec(argv[2], argv[3]);
	watchdog_start(300);
	test_exec(0);
	test_exec(1);
	test_close_while_waiting();
	test_fork_while_waiting();
	return tap_done();
}
