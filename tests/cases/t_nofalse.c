// SPDX-License-Identifier: GPL-2.0
/*
 * t_nofalse: no false positive. Several processes lock random sorted sets
 * of keys, in both modes, in several ascending steps (and sometimes drop
 * their highest keys and take other, higher ones), always obeying the
 * order rule. No cycle can form, so no request may ever get EDEADLK: in a
 * "detect" domain (where the graph is searched on every wait) and in an
 * "enforce" domain (where the order rule is checked as well). Downgrades
 * and try-acquires are mixed in; upgrades are not (two upgraders are a
 * real deadlock).
 *
 * The pseudo-random sequence of each process is fixed, so every run makes
 * the same requests; the iteration count is bounded, and so is the time.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

#define NPROC		4
#define ITERS		1500
#define BUDGET_MS	60000
#define WAIT_MS		20000

/* the key pool: rank 1 ids 1..6, then rank 2 ids 1..4, in key order */
#define NKEYS		10

static struct ordlock_key pool_key(unsigned int i, unsigned int mode)
{
	return i < 6 ? ordlock_key(1, i + 1, mode) : ordlock_key(2, i - 5, mode);
}

struct counts {
	unsigned long iters;
	unsigned long requests;
	unsigned long waits_granted;
	unsigned long try_busy;
	unsigned long downgrades;
	unsigned long edeadlk;
	unsigned long other;
	int first_error;
	struct ordlock_failure first_failure;
};

struct work {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct pbarrier *start;
	struct counts c[NPROC];
};

static struct work *wk;

static void note_error(struct counts *c, struct ordlock *ol, int ret)
{
	if (ret == -EDEADLK)
		c->edeadlk++;
	else
		c->other++;
	if (!c->first_error) {
		c->first_error = ret;
		c->first_failure = *ordlock_last_failure(ol);
	}
}

/*
 * Take the pool keys [lo, hi) that @pick selects, with random modes, in
 * one request. Returns 0, 1 when there was nothing to take, or -errno.
 */
static int take(struct ordlock *ol, struct counts *c, unsigned int *seed,
		unsigned int lo, unsigned int hi, unsigned int pick,
		unsigned int *held_mode)
{
	struct ordlock_key k[NKEYS];
	unsigned int i, n = 0, flags = 0;
	uint64_t t0;
	int ret;

	for (i = lo; i < hi; i++) {
		if (!(pick & (1U << i)))
			continue;
		held_mode[i] = rand_r(seed) % 3 ? SH : EX;
		k[n++] = pool_key(i, held_mode[i]);
	}
	if (!n)
		return 1;
	/* shuffle: the kernel sorts */
	for (i = n; i > 1; i--) {
		unsigned int j = rand_r(seed) % i;
		struct ordlock_key t = k[i - 1];

		k[i - 1] = k[j];
		k[j] = t;
	}
	if (rand_r(seed) % 5 == 0)
		flags = ORDLOCK_ACQUIRE_TRY;
	c->requests++;
	t0 = now_ms();
	ret = ordlock_acquire(ol, k, n, WAIT_MS, flags, NULL);
	if (ret == -EAGAIN && flags) {
		c->try_busy++;
		return ret;
	}
	if (ret) {
		note_error(c, ol, ret);
		return ret;
	}
	if (now_ms() - t0 > 0)
		c->waits_granted++;
	return 0;
}

static int worker_main(void *arg)
{
	int me = (int)(intptr_t)arg;
	struct counts *c = &wk->c[me];
	unsigned int seed = 0x5eed0000U + (unsigned int)me * 7919U;
	unsigned int held_mode[NKEYS];
	uint64_t deadline;
	struct ordlock *ol;

	ol = ordlock_open(NULL);
	if (!ol || ordlock_set_domain(ol, wk->domain)) {
		pbarrier_break(wk->start);
		return 1;
	}
	if (pbarrier_wait(wk->start))
		return 2;
	deadline = now_ms() + BUDGET_MS;
	while (c->iters < ITERS && now_ms() < deadline) {
		unsigned int pick = 0, cut1, cut2, i, top;
		int ret = 0;

		/* 1 to 4 distinct keys, taken in up to three ascending steps */
		for (i = 1 + rand_r(&seed) % 4; i; i--)
			pick |= 1U << (rand_r(&seed) % NKEYS);
		cut1 = rand_r(&seed) % (NKEYS + 1);
		cut2 = cut1 + rand_r(&seed) % (NKEYS + 1 - cut1);
		memset(held_mode, 0, sizeof(held_mode));
		if (take(ol, c, &seed, 0, cut1, pick, held_mode) < 0 ||
		    take(ol, c, &seed, cut1, cut2, pick, held_mode) < 0 ||
		    take(ol, c, &seed, cut2, NKEYS, pick, held_mode) < 0)
			goto release;

		/* sometimes downgrade an exclusive key (never upgrade) */
		for (i = 0; i < NKEYS; i++) {
			if (held_mode[i] != EX || rand_r(&seed) % 3)
				continue;
			ret = ordlock_convert(ol, pool_key(i, SH), WAIT_MS, 0,
					      NULL);
			if (ret) {
				note_error(c, ol, ret);
				goto release;
			}
			held_mode[i] = SH;
			c->downgrades++;
		}
		if (rand_r(&seed) % 2)
			sched_yield();

		/* sometimes drop the highest key and take higher ones */
		for (top = NKEYS; top > 0 && !held_mode[top - 1]; top--)
			;
		if (top > 0 && rand_r(&seed) % 2) {
			struct ordlock_key k = pool_key(top - 1, 0);
			unsigned int below = top - 1, more = 0;

			ret = ordlock_release(ol, &k, 1);
			if (ret) {
				note_error(c, ol, ret);
				goto release;
			}
			held_mode[top - 1] = 0;
			/* the new keys must sort above every key still held */
			while (below > 0 && !held_mode[below - 1])
				below--;
			for (i = below; i < NKEYS; i++)
				if (rand_r(&seed) % 3 == 0)
					more |= 1U << i;
			take(ol, c, &seed, below, NKEYS, more, held_mode);
		}
release:
		ret = ordlock_release_all(ol);
		if (ret)
			note_error(c, ol, ret);
		c->iters++;
	}
	ordlock_close(ol);
	return 0;
}

static void run(unsigned int policy)
{
	const char *what = ordlock_policy_name(policy);
	struct counts sum;
	struct gt_stats st;
	pid_t pid[NPROC];
	uint64_t t0;
	int i, ran = 1;

	wk = shm_alloc(sizeof(*wk));
	gt_new_domain(wk->domain, "nofalse", policy, 0);
	wk->start = pbarrier_new(NPROC);
	t0 = now_ms();
	for (i = 0; i < NPROC; i++)
		pid[i] = child_start(worker_main, (void *)(intptr_t)i);
	for (i = 0; i < NPROC; i++)
		if (child_wait(pid[i], BUDGET_MS / 1000 + 60))
			ran = 0;
	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < NPROC; i++) {
		struct counts *c = &wk->c[i];

		sum.iters += c->iters;
		sum.requests += c->requests;
		sum.waits_granted += c->waits_granted;
		sum.try_busy += c->try_busy;
		sum.downgrades += c->downgrades;
		sum.edeadlk += c->edeadlk;
		sum.other += c->other;
		if (c->first_error)
			diag("%s: process %d: first error %s: %s", what, i,
			     strerror(-c->first_error),
			     olt_fail_str(&c->first_failure));
	}
	diag("%s: %lu iterations, %lu requests, %lu waited, %lu busy tries, %lu downgrades in %llu ms",
	     what, sum.iters, sum.requests, sum.waits_granted, sum.try_busy,
	     sum.downgrades, (unsigned long long)(now_ms() - t0));
	ok(ran, "%s: %d processes ran to the end", what, NPROC);
	ok(sum.iters == (unsigned long)NPROC * ITERS,
	   "%s: all %d x %d iterations done (%lu)", what, NPROC, ITERS,
	   sum.iters);
	is_int(sum.edeadlk, 0, "%s: no request got EDEADLK", what);
	is_int(sum.other, 0, "%s: and no other error", what);
	ok(sum.waits_granted > 0 || sum.try_busy > 0,
	   "%s: the processes did contend", what);
	is_int(gt_stats_read(wk->domain, &st), 0, "%s: stats has the domain",
	       what);
	is_int(gt_stat(&st, "deadlocks"), 0, "%s: stats: deadlocks 0", what);
	is_int(gt_stat(&st, "order_violations"), 0,
	       "%s: stats: order_violations 0", what);
	is_int(gt_graph_read(wk->domain, NULL, 0), 0,
	       "%s: the graph is empty afterwards", what);
	pbarrier_free(wk->start);
	shm_free(wk, sizeof(*wk));
}

int main(void)
{
	watchdog_start(280);
	run(ORDLOCK_POLICY_DETECT);
	run(ORDLOCK_POLICY_ENFORCE);
	return tap_done();
}
