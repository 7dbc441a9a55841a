// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastcontend: the stuck waiter of issue 40. Two processes on one key of
 * a fast-path domain, pinned to two CPUs: a looper takes and lets go of
 * the key by CAS as fast as it can, a waiter acquires it through the
 * kernel (its CAS met the looper's hold) with a timeout far above the
 * looper's run. The kernel must set WAITERS behind the looper so that
 * its next release hands the key over; today's ordlock_fast_queued()
 * gives up when the looper's CASes keep changing the word (and
 * ordlock_fast_settle() loses its grant to the looper's next CAS), so the
 * waiter stays queued with WAITERS clear while the looper's releases
 * never enter the kernel, and once the looper stops it waits until its
 * timeout for a key that is free. The model (tests/model/fastpath.pml,
 * BUG_QUEUED_GIVES_UP) shows the interleaving; docs/fastpath.md states
 * the rule that fixes it.
 *
 * After one contended acquire a handle's requests go to the kernel until
 * ordlock_release_all(), so the race exists only at a handle's contended
 * acquire from the fast path: the waiter calls ordlock_release_all() after
 * each acquire the kernel granted (and the looper every 256 pairs, in case
 * it met the waiter's hold), so that each of its acquires is a new chance;
 * the race hits either way (a looper whose CAS met the waiter's hold waits
 * in the kernel too). Each round both run LOOP_MS, then stop. Points: no
 * acquire of either ever fails (a stuck one times out: ETIMEDOUT after
 * LOOP_MS + GRACE_MS, its peer stopped long before), the waiter met the
 * looper in the kernel, the counter both update under the key lost
 * nothing. On today's module (6.1, TCG, 2 vCPUs): 2 acquires stuck in
 * 10 rounds, then 1 in round 1 of 20; the test stops at the first.
 *
 * Hang guards only: the timeout (LOOP_MS + GRACE_MS) is 16 times a round,
 * and a waiter that is queued right gets the key within microseconds, at
 * its peer's next release. Environment: ORDLOCK_STRESS_CONTEND_ROUNDS
 * (default 20), ORDLOCK_STRESS_CONTEND_ALL=1 (go on after a stuck waiter
 * and count them all: to measure how often the race hits).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define LOOP_MS		100	/* both workers' run per round */
#define GRACE_MS	1500	/* the timeout of an acquire, beyond a round */
#define KEY_ID		40

static char dom[ORDLOCK_DOMAIN_NAME_MAX];

struct worker {
	unsigned long pairs;		/* pairs made, all rounds */
	unsigned long kernel;		/* acquires the kernel granted */
	int err;			/* first error (-errno) */
	unsigned int stuck;		/* acquires that failed */
	uint64_t stop_ms;		/* when it stopped this round */
	uint64_t fstart, fend;		/* its last failed acquire */
	int fround;			/* ... in this round */
};

struct shared {
	struct pbarrier *start, *end;
	unsigned long counter;		/* updated under the key by both */
	unsigned int rounds;
	int all;
	struct worker w[2];		/* 0: the looper, 1: the waiter */
};

static struct shared *sh;

static void pin(unsigned int i)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(n > 0 ? i % n : 0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Worker 0 loops by CAS (back on the fast path every 256 pairs, should it
 * have met the other's hold); worker 1 asks the kernel how each acquire
 * was granted, and goes back on the fast path after a kernel grant
 */
static int worker_main(void *arg)
{
	struct ordlock_key k = ORDLOCK_EX(1, KEY_ID);
	unsigned int me = (unsigned int)(uintptr_t)arg, r;
	struct worker *w = &sh->w[me];
	struct ordlock *ol;

	pin(me);
	ol = ordlock_open(dom);
	if (!ol)
		return 1;
	for (r = 0; r < sh->rounds; r++) {
		unsigned long n = 0;
		uint64_t t0, t;
		int ret, kern;

		if (pbarrier_wait(sh->start))
			return 1;
		t0 = now_ms();
		for (;;) {
			t = now_ms();
			ret = ordlock_acquire(ol, &k, 1, LOOP_MS + GRACE_MS, 0, NULL);
			if (ret) {
				ret = -errno;
				w->fstart = t;
				w->fend = now_ms();
				w->fround = (int)r;
				w->stuck++;
				if (!w->err)
					w->err = ret;
				if (ret != -ETIMEDOUT)
					return 2;
				if (!sh->all)
					break;
				continue;
			}
			sh->counter++;
			n++;
			kern = me == 1 && olt_nheld(ol) == 1;
			if (ordlock_release(ol, &k, 1)) {
				if (!w->err)
					w->err = -errno;
				return 2;
			}
			if (kern || (me == 0 && !(n & 255))) {
				w->kernel += kern;
				if (ordlock_release_all(ol) < 0) {
					if (!w->err)
						w->err = -errno;
					return 2;
				}
			}
			if ((me == 1 || !(n & 15)) && now_ms() - t0 >= LOOP_MS)
				break;
		}
		w->pairs += n;
		w->stop_ms = now_ms();
		if (pbarrier_wait(sh->end))
			return 1;
		/* all three stop after the same round */
		if ((sh->w[0].stuck || sh->w[1].stuck) && !sh->all)
			break;
	}
	ordlock_close(ol);
	return 0;
}

int main(void)
{
	unsigned int r, rounds = 20, i;
	uint64_t t0;
	pid_t pid[2];
	const char *e;

	watchdog_start(240);
	if (geteuid())
		bail_out("needs root (DOMAIN_CONFIG)");
	sh = shm_alloc(sizeof(*sh));
	e = getenv("ORDLOCK_STRESS_CONTEND_ROUNDS");
	if (e && atoi(e) > 0)
		rounds = atoi(e);
	e = getenv("ORDLOCK_STRESS_CONTEND_ALL");
	sh->all = e && *e == '1';
	sh->rounds = rounds;
	sh->start = pbarrier_new(3);
	sh->end = pbarrier_new(3);
	snprintf(dom, sizeof(dom), "%s", olt_domain("fastcontend"));
	is_int(olt_fast_domain_set(dom, 1), 0, "%s: fast path on", dom);
	diag("%ld CPUs; %u rounds of %d ms: a looper by CAS, a waiter through the kernel, each acquire with a timeout of %d ms",
	     sysconf(_SC_NPROCESSORS_ONLN), rounds, LOOP_MS, LOOP_MS + GRACE_MS);

	t0 = now_ms();
	for (i = 0; i < 2; i++)
		pid[i] = child_start(worker_main, (void *)(uintptr_t)i);
	for (r = 0; r < rounds; r++) {
		if (pbarrier_wait(sh->start) || pbarrier_wait(sh->end))
			break;
		if ((sh->w[0].stuck || sh->w[1].stuck) && !sh->all) {
			r++;
			break;
		}
	}
	for (i = 0; i < 2; i++) {
		struct worker *w = &sh->w[i];
		const struct worker *o = &sh->w[!i];

		is_int(child_wait(pid[i], 60), 0, "the %s ends", i ? "waiter" : "looper");
		if (w->stuck)
			diag("%s: %u acquires failed (%s); the last, in round %d, after %llu ms (its peer stopped %llu ms after it began)",
			     i ? "waiter" : "looper", w->stuck, strerror(-w->err), w->fround,
			     (unsigned long long)(w->fend - w->fstart),
			     (unsigned long long)(o->stop_ms > w->fstart ? o->stop_ms - w->fstart : 0));
		ok(w->stuck == 0 && w->err == 0,
		   "the %s's acquires were all granted: none timed out on a key its peer let go (%u failed)",
		   i ? "waiter" : "looper", w->stuck);
	}
	diag("%u rounds in %llu ms; pairs: looper %lu, waiter %lu, of which %lu granted by the kernel",
	     r, (unsigned long long)(now_ms() - t0), sh->w[0].pairs, sh->w[1].pairs,
	     sh->w[1].kernel);
	ok(sh->w[1].kernel > 0, "the waiter met the looper in the kernel (%lu times)",
	   sh->w[1].kernel);
	is_int(sh->counter, sh->w[0].pairs + sh->w[1].pairs,
	       "the counter under the key lost no update");

	is_int(olt_fast_domain_set(dom, 0), 0,
	       "fast path off at the end (its keys unpinned)");
	return tap_done();
}
