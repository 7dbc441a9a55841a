// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastlib: libordlock uses the fast path transparently in a domain that
 * has it (issue 28): an uncontended exclusive acquire and release of one
 * or several keys make no system call (shown in a child whose every
 * ioctl() a seccomp filter fails with EPERM once its keys are pinned);
 * a contended key goes to the kernel and is handed over by the fast
 * holder's release; the order rule against the keys held by the fast
 * path; shared mode through the kernel; death; a fork child goes to the
 * kernel instead of touching mappings it does not have; the failure
 * record of a failed 1-key try by the fast path, whole and exact, after
 * any other record, with the caller's key array changed or freed.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define SH ORDLOCK_MODE_SHARED

static char dom[ORDLOCK_DOMAIN_NAME_MAX];

struct shared {
	int r[16];
	struct pbarrier *held;
	struct pbarrier *go;
};

static struct shared *sh;

/* A kernel try-acquire (raw, not the fast path) by a fresh owner of dom */
static int kprobe(uint64_t id)
{
	return olt_ktry(dom, ordlock_key(1, id, EX), NULL);
}

static int nosys_main(void *arg)
{
	struct ordlock_key k1 = ORDLOCK_EX(1, 1);
	struct ordlock_key k3[3] = { ORDLOCK_EX(1, 2), ORDLOCK_EX(1, 3), ORDLOCK_EX(2, 1) };
	struct ordlock_key k64[64];
	struct ordlock_key busy = ORDLOCK_EX(1, 50), fresh = ORDLOCK_EX(1, 99);
	struct ordlock *ol = olt_child_open(dom);
	int i;

	(void)arg;
	for (i = 0; i < 64; i++)
		k64[i] = ordlock_key(3, i, EX);
	/* pin everything once */
	sh->r[0] = ordlock_acquire(ol, &k1, 1, 1000, 0, NULL) ||
		   ordlock_release(ol, &k1, 1) ||
		   ordlock_acquire(ol, k3, 3, 1000, 0, NULL) ||
		   ordlock_release_all(ol) ||
		   ordlock_acquire(ol, k64, 64, 1000, 0, NULL) ||
		   ordlock_release_all(ol) ||
		   ordlock_try_acquire(ol, &busy, 1, NULL) != -EAGAIN;
	if (olt_no_ioctl()) {
		/* a kernel without CONFIG_SECCOMP (the debug kernel) */
		sh->r[15] = errno;
		return 2;
	}
	sh->r[1] = ordlock_acquire(ol, &k1, 1, 1000, 0, NULL);
	sh->r[2] = ordlock_release(ol, &k1, 1);
	sh->r[3] = ordlock_acquire(ol, k3, 3, 1000, 0, NULL);
	sh->r[4] = ordlock_release_all(ol);
	sh->r[5] = ordlock_acquire(ol, k64, 64, 1000, 0, NULL);
	sh->r[6] = ordlock_release(ol, k64, 64);
	sh->r[7] = ordlock_try_acquire(ol, &busy, 1, NULL);
	sh->r[8] = ordlock_last_failure(ol)->reason;
	sh->r[9] = ordlock_acquire(ol, &fresh, 1, 1000, 0, NULL);
	return 0;
}

static void test_no_syscall(struct ordlock *ol)
{
	struct ordlock_key busy = ORDLOCK_EX(1, 50);
	pid_t pid;
	int i, st;

	/* a point the child did not reach fails */
	for (i = 0; i < 16; i++)
		sh->r[i] = -9999;
	is_int(ordlock_acquire(ol, &busy, 1, 1000, 0, NULL), 0,
	       "the parent holds 1:50 (fast path)");
	is_int(olt_nheld(ol), 0, "which the kernel does not count as its hold");
	is_errno(kprobe(50), EAGAIN, "but refuses to another owner");
	pid = child_start(nosys_main, NULL);
	st = child_wait(pid, 120);
	is_int(sh->r[0], 0, "child: keys pinned (first acquires in the kernel)");
	if (st == 2 && sh->r[15] == EINVAL) {
		for (i = 0; i < 9; i++)
			ok(1, "# SKIP no seccomp filter in this kernel: the no-ioctl points");
		goto out;
	}
	is_int(st, 0, "the child ends");
	is_int(sh->r[1], 0, "no ioctl: acquire 1 key");
	is_int(sh->r[2], 0, "no ioctl: release it");
	is_int(sh->r[3], 0, "no ioctl: acquire 3 keys");
	is_int(sh->r[4], 0, "no ioctl: release all");
	is_int(sh->r[5], 0, "no ioctl: acquire 64 keys");
	is_int(sh->r[6], 0, "no ioctl: release the 64");
	is_int(sh->r[7], -EAGAIN, "no ioctl: a failed try-lock (EAGAIN)");
	is_int(sh->r[8], ORDLOCK_REASON_BUSY, "its record says BUSY");
	is_int(sh->r[9], -EPERM,
	       "a key never pinned goes to the kernel: the filter refuses it");
out:
	is_int(ordlock_release(ol, &busy, 1), 0, "the parent lets 1:50 go");
	is_int(kprobe(50), 0, "free for the kernel");
}

static int waiter_main(void *arg)
{
	struct ordlock_key k = ORDLOCK_EX(1, 60);
	struct ordlock *ol = olt_child_open(dom);

	(void)arg;
	sh->r[0] = ordlock_acquire(ol, &k, 1, OLT_LONG_MS, 0, NULL);
	sh->r[1] = olt_nheld(ol);
	ordlock_close(ol);
	return 0;
}

static void test_contention(struct ordlock *ol)
{
	struct ordlock_key k = ORDLOCK_EX(1, 60);
	pid_t pid;

	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "hold 1:60");
	pid = child_start(waiter_main, NULL);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "a waiter sleeps in the kernel");
	is_int(ordlock_release(ol, &k, 1), 0, "the release hands it over");
	is_int(child_wait(pid, 60), 0, "the waiter ends");
	is_int(sh->r[0], 0, "granted");
	is_int(sh->r[1], 1, "as a kernel hold");
	is_int(kprobe(60), 0, "free after it closed");
}

/* A try of 2 keys whose second one another owner holds (fast path) */
static void test_try2(struct ordlock *ol)
{
	struct ordlock_key two[2] = { ORDLOCK_EX(1, 90), ORDLOCK_EX(1, 91) };
	struct ordlock *other = ordlock_open(dom);
	const struct ordlock_failure *f;

	is_int(other ? ordlock_acquire(other, &two[1], 1, 1000, 0, NULL) : -1, 0,
	       "another owner holds 1:91");
	is_errno(ordlock_try_acquire(ol, two, 2, NULL), EAGAIN,
		 "k=2 try of 1:90 + 1:91: EAGAIN");
	f = ordlock_last_failure(ol);
	is_int(f->reason, ORDLOCK_REASON_BUSY, "k=2 try: reason BUSY");
	is_int(f->index, 1, "k=2 try: at index 1");
	ok(olt_key_eq(&f->key, 1, 91, EX), "k=2 try: naming 1:91");
	is_int(kprobe(90), 0, "k=2 try: 1:90 given back");
	is_errno(ordlock_try_acquire(ol, &two[1], 1, NULL), EAGAIN,
		 "k=1 try of 1:91: EAGAIN");
	f = ordlock_last_failure(ol);
	ok(f->reason == ORDLOCK_REASON_BUSY && f->index == 0 &&
	   olt_key_eq(&f->key, 1, 91, EX) && f->held.rank == 0 && f->held.id == 0,
	   "k=1 try: the record says BUSY, index 0, 1:91, no held key");
	ordlock_close(other);
	is_int(ordlock_try_acquire(ol, two, 2, NULL), 0, "k=2 try once 1:91 is free");
	is_int(ordlock_release(ol, two, 2), 0, "and its release");
	is_int(kprobe(91), 0, "1:91 free");
}

/* The whole record of a failed 1-key try of (@rank, @id) exclusive */
static int busy_record_is(const struct ordlock_failure *f, uint32_t rank,
			  uint64_t id)
{
	return f->reason == ORDLOCK_REASON_BUSY && f->error == EAGAIN &&
	       f->pid == 0 && f->index == 0 && olt_key_eq(&f->key, rank, id, EX) &&
	       f->key.__reserved == 0 && f->held.rank == 0 && f->held.id == 0 &&
	       f->held.mode == 0 && f->holder_mode == 0 && f->cycle_len == 0;
}

static int retry_work(struct ordlock *ol, uint64_t token, void *arg)
{
	(void)ol;
	(void)token;
	(void)arg;
	return 0;
}

/*
 * The record of a failed 1-key try by the inline path (try_busy()): the
 * whole record, every time, whatever record was there before (a try's of
 * another key, a local ORDER, the kernel's BUSY with a pid, an errno's,
 * ordlock_retry()'s "none"), from a key array the caller then changes and
 * frees; a success in between leaves it as it was; the pointer
 * ordlock_last_failure() returns is the same one throughout.
 */
static void test_try_record(struct ordlock *ol)
{
	struct ordlock_key warm[5] = {
		ORDLOCK_EX(3, 1), ORDLOCK_EX(4, 1), ORDLOCK_EX(4, 2), ORDLOCK_EX(4, 5),
		ORDLOCK_EX(4, 9),
	};
	struct ordlock_key held[2] = { ORDLOCK_EX(4, 1), ORDLOCK_EX(4, 2) };
	struct ordlock_key k5 = ORDLOCK_EX(4, 5), k9 = ORDLOCK_EX(4, 9);
	struct ordlock_key low = ORDLOCK_EX(3, 1);
	struct ordlock_key s1 = ORDLOCK_SH(4, 1);
	struct ordlock *other = ordlock_open(dom);
	const struct ordlock_failure *f = ordlock_last_failure(ol);
	struct ordlock_key *ka;

	is_int(ordlock_acquire(ol, warm, 5, 1000, 0, NULL), 0,
	       "rec: 3:1 4:1 4:2 4:5 4:9 taken once (pinned, cached)");
	is_int(ordlock_release(ol, warm, 5), 0, "rec: and let go");
	is_int(other ? ordlock_acquire(other, held, 2, 1000, 0, NULL) : -1, 0,
	       "rec: another owner holds 4:1 and 4:2 (fast path)");
	is_int(olt_nheld(ol), 0, "rec: no kernel hold (the inline path is on)");

	/* the key array the try was given, changed and freed after it */
	ka = malloc(sizeof(*ka));
	*ka = ORDLOCK_EX(4, 1);
	is_errno(ordlock_try_acquire(ol, ka, 1, NULL), EAGAIN, "rec: try 4:1: EAGAIN");
	*ka = ORDLOCK_SH(7, 77);
	free(ka);
	ok(busy_record_is(ordlock_last_failure(ol), 4, 1),
	   "rec: BUSY, EAGAIN, index 0, 4:1 exclusive, nothing else (array changed, freed)");
	ok(ordlock_last_failure(ol) == f, "rec: the same record as before the call");
	is_int(ordlock_result_flags(ol), 0, "rec: no result flags");

	/* a try of another key right after: its key */
	ka = malloc(sizeof(*ka));
	*ka = ORDLOCK_EX(4, 2);
	is_errno(ordlock_try_acquire(ol, ka, 1, NULL), EAGAIN, "rec: try 4:2: EAGAIN");
	memset(ka, 0xff, sizeof(*ka));
	free(ka);
	ok(busy_record_is(f, 4, 2), "rec: the record says 4:2 now, the rest the same");

	/* successes in between leave the record as it was */
	is_int(ordlock_acquire(ol, &k9, 1, 1000, 0, NULL), 0, "rec: take 4:9");
	is_int(ordlock_release(ol, &k9, 1), 0, "rec: let it go");
	ok(busy_record_is(f, 4, 2), "rec: still the try's record after the successes");

	/* a local ORDER record (held key, EDEADLK), then a try */
	is_int(ordlock_acquire(ol, &k5, 1, 1000, 0, NULL), 0, "rec: hold 4:5");
	is_errno(ordlock_acquire(ol, &held[0], 1, 1000, 0, NULL), EDEADLK,
		 "rec: 4:1 below it: EDEADLK");
	ok(f->reason == ORDLOCK_REASON_ORDER && olt_key_eq(&f->held, 4, 5, EX),
	   "rec: ORDER, naming the held 4:5");
	is_int(ordlock_release(ol, &k5, 1), 0, "rec: let 4:5 go");
	is_errno(ordlock_try_acquire(ol, &held[1], 1, NULL), EAGAIN, "rec: try 4:2: EAGAIN");
	ok(busy_record_is(f, 4, 2), "rec: after ORDER: the whole try's record");

	/* with a key held below it (the inline order check passes) */
	is_int(ordlock_acquire(ol, &low, 1, 1000, 0, NULL), 0, "rec: hold 3:1");
	is_errno(ordlock_try_acquire(ol, &held[0], 1, NULL), EAGAIN,
		 "rec: try 4:1 above it: EAGAIN");
	ok(busy_record_is(f, 4, 1), "rec: holding 3:1: the try's record, index 0");
	is_int(ordlock_try_acquire(ol, &k9, 1, NULL), 0, "rec: try 4:9 (free): granted");
	ok(busy_record_is(f, 4, 1), "rec: which leaves the record as it was");
	is_int(ordlock_release(ol, &k9, 1), 0, "rec: let 4:9 go");
	is_int(ordlock_release(ol, &low, 1), 0, "rec: let 3:1 go");

	/* the kernel's record: a shared try names the holder's pid */
	is_errno(ordlock_try_acquire(ol, &s1, 1, NULL), EAGAIN,
		 "rec: try 4:1 shared (the kernel's): EAGAIN");
	ok(f->reason == ORDLOCK_REASON_BUSY && f->pid == (uint32_t)getpid() &&
	   f->holder_mode == EX && olt_key_eq(&f->key, 4, 1, SH),
	   "rec: the kernel's record: BUSY, pid %u, holder exclusive, 4:1 shared",
	   f->pid);
	is_int(olt_nheld(ol), 0, "rec: still no kernel hold");
	is_errno(ordlock_try_acquire(ol, &held[0], 1, NULL), EAGAIN, "rec: try 4:1: EAGAIN");
	ok(busy_record_is(f, 4, 1), "rec: after the kernel's: the whole try's record");

	/* an errno's record (no key, index ~0) */
	is_errno(ordlock_acquire(ol, held, 0, 1000, 0, NULL), EINVAL,
		 "rec: 0 keys: EINVAL");
	ok(f->reason != ORDLOCK_REASON_BUSY && f->error == EINVAL,
	   "rec: its record (reason %u, index %#x)", f->reason, f->index);
	is_errno(ordlock_try_acquire(ol, &held[1], 1, NULL), EAGAIN, "rec: try 4:2: EAGAIN");
	ok(busy_record_is(f, 4, 2), "rec: after EINVAL: the whole try's record");

	/* ordlock_retry()'s "no failure" */
	is_int(ordlock_retry(ol, &k9, 1, NULL, retry_work, NULL), 0,
	       "rec: ordlock_retry() of 4:9 succeeds");
	ok(f->reason == ORDLOCK_REASON_NONE && f->index == ~0U,
	   "rec: its record says none");
	is_int(ordlock_release_all(ol), 0, "rec: release all (no kernel hold left)");
	is_errno(ordlock_try_acquire(ol, &held[0], 1, NULL), EAGAIN, "rec: try 4:1: EAGAIN");
	ok(busy_record_is(f, 4, 1), "rec: after none: the whole try's record");
	ok(ordlock_last_failure(ol) == f, "rec: the same record throughout");

	ordlock_close(other);
}

static void test_rules(struct ordlock *ol)
{
	struct ordlock_key k5 = ORDLOCK_EX(1, 5), k3 = ORDLOCK_EX(1, 3);
	struct ordlock_key s7 = ORDLOCK_SH(1, 7), k8 = ORDLOCK_EX(1, 8);
	struct ordlock_key mixed[2];
	struct ordlock_key warm[6] = {
		ORDLOCK_EX(1, 3), ORDLOCK_EX(1, 4), ORDLOCK_EX(1, 82),
		ORDLOCK_EX(1, 83), ORDLOCK_EX(1, 90), ORDLOCK_EX(1, 91),
	};
	const struct ordlock_failure *f;

	/* pinned and in the slot cache: the checks below meet the inline path */
	is_int(ordlock_acquire(ol, warm, 6, 1000, 0, NULL), 0,
	       "1:3 1:4 1:82 1:83 1:90 1:91 taken once (pinned, cached)");
	is_int(ordlock_release(ol, warm, 6), 0, "and let go");
	is_int(ordlock_acquire(ol, &k5, 1, 1000, 0, NULL), 0, "hold 1:5");
	is_errno(ordlock_acquire(ol, &k3, 1, 1000, 0, NULL), EDEADLK,
		 "1:3 below it: EDEADLK (enforce)");
	f = ordlock_last_failure(ol);
	is_int(f->reason, ORDLOCK_REASON_ORDER, "reason ORDER");
	ok(olt_key_eq(&f->held, 1, 5, EX), "naming the held 1:5");
	is_errno(ordlock_acquire(ol, &k5, 1, 1000, 0, NULL), EDEADLK,
		 "1:5 again: EDEADLK");
	/* the same rules for a request of 2 keys (the inline loop) */
	mixed[0] = ORDLOCK_EX(1, 3);
	mixed[1] = ORDLOCK_EX(1, 4);
	is_errno(ordlock_acquire(ol, mixed, 2, 1000, 0, NULL), EDEADLK,
		 "k=2: 1:3 + 1:4 below 1:5: EDEADLK");
	f = ordlock_last_failure(ol);
	is_int(f->reason, ORDLOCK_REASON_ORDER, "k=2: reason ORDER");
	ok(olt_key_eq(&f->held, 1, 5, EX), "k=2: naming the held 1:5");
	is_int(kprobe(3), 0, "k=2: 1:3 was not taken");
	test_try2(ol);
	is_int(ordlock_acquire(ol, &s7, 1, 1000, 0, NULL), 0,
	       "1:7 shared: through the kernel");
	is_int(olt_nheld(ol), 1, "the kernel holds that one");
	is_int(ordlock_acquire(ol, &k8, 1, 1000, 0, NULL), 0,
	       "1:8 exclusive while a kernel hold exists: the kernel's");
	is_int(olt_nheld(ol), 2, "the kernel holds 2");
	is_errno(kprobe(5), EAGAIN, "1:5 still held");
	mixed[0] = k5;
	mixed[1] = s7;
	is_int(ordlock_release(ol, mixed, 2), 0,
	       "release 1:5 (fast) and 1:7 (kernel) in one call");
	is_int(olt_nheld(ol), 1, "the kernel holds 1:8 only");
	is_int(kprobe(5), 0, "1:5 free");
	is_int(ordlock_release_all(ol), 0, "release all");
	is_int(olt_nheld(ol), 0, "nothing in the kernel");
	is_int(kprobe(5), 0, "1:5 free");
	is_int(kprobe(8), 0, "1:8 free");
}

static int holder_main(void *arg)
{
	struct ordlock_key k = ORDLOCK_EX(1, 70);
	struct ordlock *ol = ordlock_open(dom);

	(void)arg;
	if (!ol || ordlock_acquire(ol, &k, 1, 1000, 0, NULL))
		return 1;
	pbarrier_wait(sh->held);
	pause();
	return 0;
}

static int forked_main(void *arg)
{
	struct ordlock *ol = arg;
	struct ordlock_key k = ORDLOCK_EX(1, 81);
	struct ordlock_key two[2] = { ORDLOCK_EX(1, 82), ORDLOCK_EX(1, 83) };

	/* the parent's handle: the mappings are not here, the kernel is */
	if (ordlock_acquire(ol, &k, 1, 1000, 0, NULL))
		return 1;
	if (olt_nheld(ol) != 1)
		return 2;
	/* the parent's library does not know of it: let it go here */
	if (ordlock_release_all(ol))
		return 3;
	/* 2 keys (the inline loop's request) go to the kernel too */
	if (ordlock_acquire(ol, two, 2, 1000, 0, NULL) || olt_nheld(ol) != 2)
		return 4;
	return ordlock_release_all(ol) ? 5 : 0;
}

static void test_death_fork(struct ordlock *ol)
{
	struct ordlock_key k = ORDLOCK_EX(1, 80);
	pid_t pid;

	sh->held = pbarrier_new(2);
	pid = child_start(holder_main, NULL);
	pbarrier_wait(sh->held);
	is_errno(kprobe(70), EAGAIN, "a child holds 1:70");
	child_kill(pid, SIGKILL);
	child_wait(pid, 60);
	is_int(kprobe(70), 0, "free after kill -9");
	pbarrier_free(sh->held);

	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "hold 1:80");
	pid = child_start(forked_main, ol);
	is_int(child_wait(pid, 60), 0,
	       "a fork child's acquire on the same handle goes to the kernel");
	is_int(ordlock_release_all(ol), 0, "release all");
	is_int(kprobe(80), 0, "1:80 free");
	is_int(kprobe(81), 0, "1:81 free");
}

int main(void)
{
	struct ordlock *ol;

	watchdog_start(300);
	if (geteuid())
		bail_out("needs root (DOMAIN_CONFIG)");
	sh = shm_alloc(sizeof(*sh));
	snprintf(dom, sizeof(dom), "%s", olt_domain("fastlib"));
	is_int(olt_fast_domain_set(dom, 1), 0, "%s: fast path on", dom);
	ol = olt_open(dom);
	test_no_syscall(ol);
	test_contention(ol);
	test_rules(ol);
	test_try_record(ol);
	test_death_fork(ol);
	ordlock_close(ol);
	is_int(olt_fast_domain_set(dom, 0), 0,
	       "fast path off at the end (its keys unpinned)");
	return tap_done();
}
