// SPDX-License-Identifier: GPL-2.0
/*
 * t_seeds: the scenarios of the source documents, run against the module
 * by real processes sharing memory, with barriers that force the bad
 * interleaving on every run.
 *
 *  - 003 (Bulgarian lesson): two warehouses, Sofia (id 1) and Plovdiv
 *    (id 2), and transfers in opposite directions; the version that locks
 *    source then target (the deadlock of the lesson) is refused by the order
 *    rule instead of hanging; the version with one request never hangs and
 *    keeps exact totals over 1000 + 1000 transfers; three wallets in a ring;
 *    the nightly audit that locks in the wrong order; try-lock with backoff.
 *  - 004 (Japanese blog): orders (rank 1) and inventories (rank 2) keyed
 *    (rank, id), updated by API, batch and webhook paths each in their own
 *    natural order; a lock discovered late; shared-to-exclusive upgrades.
 *  - 000 (Japanese guide): a lock hierarchy SYSTEM < REGION < ACCOUNT.
 *
 * Every counter update is a read, a sched_yield() and a write, so that a
 * lock that let two writers in would lose updates and break the totals.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

/* rank of the warehouses and wallets */
#define R_STORE		1
#define SOFIA		1
#define PLOVDIV		2

/* ranks of the shop (004) */
#define R_ORDER		1
#define R_INVENTORY	2

/* the timeout of every wait that must be granted: a hang fails the test */
#define WAIT_MS		30000

#define MAXP		3
#define FORCED		20	/* rounds where the first holder waits for the others */

/* *p += d, slowly: a lost update shows when two writers overlap */
static void slow_add(long *p, long d)
{
	long v = __atomic_load_n(p, __ATOMIC_RELAXED);

	sched_yield();
	__atomic_store_n(p, v + d, __ATOMIC_RELAXED);
}

struct job {
	int src, dst;
	long qty;
	int n;
	/* results */
	int done;
	int errors;
	int first_err;
	struct ordlock_failure failure;
};

/*
 * A ring of nproc processes moving stock between cells of @stock, each
 * with one request for {source, target} in its natural order. With @audit,
 * an extra process repeatedly sums all cells under one shared request.
 */
struct ring {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	int nproc;
	int ncells;
	int audit;
	struct pbarrier *meet;
	pid_t pid[MAXP];
	unsigned int first[FORCED];
	long stock[MAXP + 1];
	struct job job[MAXP];
	int who;
	/* the audit */
	int stop;
	long total;
	long audits;
	long bad_audits;
	long bad_total;
	int audit_err;
	int wrong_ret;
	struct ordlock_failure wrong_failure;
};

static struct ring *ring;

static int ring_worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	struct job *j = &ring->job[me];
	struct ordlock *ol = olt_child_open(ring->domain);
	int i, p;

	/*
	 * Its own pid, before the first barrier: the parent's store of the
	 * pid child_start() returned may come after the others passed it
	 */
	__atomic_store_n(&ring->pid[me], getpid(), __ATOMIC_SEQ_CST);
	for (i = 0; i < j->n; i++) {
		struct ordlock_key k[2] = {
			ORDLOCK_EX(R_STORE, j->src), ORDLOCK_EX(R_STORE, j->dst),
		};
		int ret;

		if (pbarrier_wait(ring->meet))
			return 2;
		ret = ordlock_acquire(ol, k, 2, WAIT_MS, 0, NULL);
		if (ret) {
			if (!j->errors++) {
				j->first_err = -ret;
				j->failure = *ordlock_last_failure(ol);
			}
			continue;
		}
		if (i < FORCED && shared_counter_next(&ring->first[i]) == 0) {
			/* the first holder of the round waits for the others */
			for (p = 0; p < ring->nproc; p++)
				if (p != me &&
				    wait_blocked_ioctl(ring->pid[p],
						       ORDLOCK_IOC_ACQUIRE, 0))
					j->errors++;
		}
		slow_add(&ring->stock[j->src], -j->qty);
		slow_add(&ring->stock[j->dst], j->qty);
		j->done++;
		ordlock_release_all(ol);
	}
	ordlock_close(ol);
	return 0;
}

static int ring_auditor(void *arg)
{
	struct ordlock_key all[MAXP + 1], k;
	struct ordlock *ol = olt_child_open(ring->domain);
	int c, n = 0;

	(void)arg;

	/* the nightly audit with the bug: Plovdiv first, then Sofia */
	k = ORDLOCK_SH(R_STORE, PLOVDIV);
	if (ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL))
		return 2;
	k = ORDLOCK_SH(R_STORE, SOFIA);
	ring->wrong_ret = ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL);
	ring->wrong_failure = *ordlock_last_failure(ol);
	ordlock_release_all(ol);

	/* the correct audit: every cell in one request, any order */
	for (c = ring->ncells; c >= 1; c--)
		all[n++] = ORDLOCK_SH(R_STORE, c);
	while (!__atomic_load_n(&ring->stop, __ATOMIC_SEQ_CST)) {
		long sum = 0;

		if (ordlock_acquire(ol, all, (unsigned int)n, WAIT_MS, 0,
				    NULL)) {
			ring->audit_err = errno;
			break;
		}
		for (c = 1; c <= ring->ncells; c++)
			sum += __atomic_load_n(&ring->stock[c],
					       __ATOMIC_RELAXED);
		ring->audits++;
		if (sum != ring->total) {
			ring->bad_audits++;
			ring->bad_total = sum;
		}
		ordlock_release_all(ol);
		sched_yield();
	}
	ordlock_close(ol);
	return 0;
}

/*
 * The warehouses' domain: the lesson's deadlock and then the 1000 + 1000
 * transfers run in the same one, as they would in one application.
 */
static char wh_domain[ORDLOCK_DOMAIN_NAME_MAX];

static struct ring *ring_new(const char *prefix, int nproc, int ncells)
{
	struct ring *r = shm_alloc(sizeof(*r));

	if (!strcmp(prefix, "warehouses"))
		snprintf(r->domain, sizeof(r->domain), "%s", wh_domain);
	else
		snprintf(r->domain, sizeof(r->domain), "%s", olt_domain(prefix));
	r->nproc = nproc;
	r->ncells = ncells;
	r->meet = pbarrier_new((unsigned int)nproc);
	return r;
}

static void ring_free(struct ring *r)
{
	pbarrier_free(r->meet);
	shm_free(r, sizeof(*r));
}

/* run the ring; returns 1 if every process ended well */
static int ring_run(struct ring *r)
{
	pid_t auditor = 0;
	int p, good = 1;

	ring = r;
	for (p = 1; p <= r->ncells; p++)
		r->total += r->stock[p];
	if (r->audit)
		auditor = child_start(ring_auditor, NULL);
	for (p = 0; p < r->nproc; p++)
		r->pid[p] = child_start(ring_worker, (void *)(intptr_t)p);
	for (p = 0; p < r->nproc; p++)
		if (child_wait(r->pid[p], 0))
			good = 0;
	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
	if (auditor && child_wait(auditor, 0))
		good = 0;
	return good;
}

static void report_jobs(struct ring *r, const char *what)
{
	int p;

	for (p = 0; p < r->nproc; p++) {
		struct job *j = &r->job[p];

		is_int(j->done, j->n, "%s: process %d (%d -> %d) completed %d transfers",
		       what, p, j->src, j->dst, j->n);
		if (!is_int(j->errors, 0, "%s: process %d had no failure", what, p))
			diag("  first failure: %s: %s", strerror(j->first_err),
			     olt_fail_str(&j->failure));
	}
}

/* 003: the first program of the lesson, with one request per transfer */
static void test_two_transfers(void)
{
	struct ring *r = ring_new("wh1", 2, 2);

	r->stock[SOFIA] = 500;
	r->stock[PLOVDIV] = 300;
	r->job[0] = (struct job){ .src = SOFIA, .dst = PLOVDIV, .qty = 5, .n = 1 };
	r->job[1] = (struct job){ .src = PLOVDIV, .dst = SOFIA, .qty = 3, .n = 1 };
	ok(ring_run(r), "two opposite transfers started together end");
	report_jobs(r, "5 Sofia->Plovdiv, 3 Plovdiv->Sofia");
	is_int(r->stock[SOFIA], 498, "Sofia: 498");
	is_int(r->stock[PLOVDIV], 302, "Plovdiv: 302");
	ring_free(r);
}

/* 003: 1000 + 1000 transfers, stock 500/300, with the audit running */
static void test_thousand_transfers(void)
{
	struct ring *r = ring_new("warehouses", 2, 2);
	uint64_t t0 = now_ms();
	char buf[200];

	r->stock[SOFIA] = 500;
	r->stock[PLOVDIV] = 300;
	r->audit = 1;
	r->job[0] = (struct job){ .src = SOFIA, .dst = PLOVDIV, .qty = 1, .n = 1000 };
	r->job[1] = (struct job){ .src = PLOVDIV, .dst = SOFIA, .qty = 1, .n = 1000 };
	ok(ring_run(r), "1000 + 1000 opposite transfers (barrier every round) end");
	diag("took %llu ms; %ld audits ran meanwhile",
	     (unsigned long long)(now_ms() - t0), r->audits);
	report_jobs(r, "warehouses 500/300");
	is_int(r->stock[SOFIA], 500, "Sofia: 500 (1000 out, 1000 in)");
	is_int(r->stock[PLOVDIV], 300, "Plovdiv: 300");
	is_int(r->stock[SOFIA] + r->stock[PLOVDIV], 800, "total: 800");

	/* the audits */
	is_errno(r->wrong_ret, EDEADLK,
		 "nightly audit locking Plovdiv then Sofia: refused with EDEADLK");
	is_int(r->wrong_failure.reason, ORDLOCK_REASON_ORDER, "reason ORDER");
	ok(olt_key_eq(&r->wrong_failure.held, R_STORE, PLOVDIV, SH),
	   "it names the held key: Plovdiv 1:2 (shared)");
	ok(olt_key_eq(&r->wrong_failure.key, R_STORE, SOFIA, SH),
	   "and the requested key: Sofia 1:1 (shared)");
	ordlock_strfailure(&r->wrong_failure, buf, sizeof(buf));
	ok(!strcmp(buf, "order violation: requested shared 1:1 sorts at or below held shared 1:2"),
	   "the kernel's explanation: \"%s\"", buf);
	ok(r->audits > 0, "the correct audit (one shared request) ran %ld times",
	   r->audits);
	is_int(r->audit_err, 0, "no audit failed");
	if (!is_int(r->bad_audits, 0, "every audit saw a total of exactly 800"))
		diag("  e.g. %ld", r->bad_total);
	ring_free(r);
}

/* 003: the lesson's numbers: 5000/3000, 1000 x 2 one way, 1000 x 1 back */
static void test_seed_numbers(void)
{
	struct ring *r = ring_new("wh3", 2, 2);

	r->stock[SOFIA] = 5000;
	r->stock[PLOVDIV] = 3000;
	r->job[0] = (struct job){ .src = SOFIA, .dst = PLOVDIV, .qty = 2, .n = 1000 };
	r->job[1] = (struct job){ .src = PLOVDIV, .dst = SOFIA, .qty = 1, .n = 1000 };
	ok(ring_run(r), "1000 x 2 Sofia->Plovdiv and 1000 x 1 back end");
	report_jobs(r, "warehouses 5000/3000");
	is_int(r->stock[SOFIA], 4000, "Sofia: 4000");
	is_int(r->stock[PLOVDIV], 4000, "Plovdiv: 4000");
	is_int(r->stock[SOFIA] + r->stock[PLOVDIV], 8000, "total: 8000");
	ring_free(r);
}

/* 003 exercise: three wallets of 1000 EUR in a ring, 3 x 1000 x 5 EUR */
static void test_wallets(void)
{
	struct ring *r = ring_new("wallets", 3, 3);
	int w;

	for (w = 1; w <= 3; w++)
		r->stock[w] = 1000;
	for (w = 0; w < 3; w++)
		r->job[w] = (struct job){
			.src = w + 1, .dst = (w + 1) % 3 + 1, .qty = 5, .n = 1000,
		};
	r->audit = 1;
	ok(ring_run(r), "three processes move 5 EUR around the ring 1000 times each");
	report_jobs(r, "wallets");
	for (w = 1; w <= 3; w++)
		is_int(r->stock[w], 1000, "wallet %d: 1000 EUR", w);
	is_int(r->stock[1] + r->stock[2] + r->stock[3], 3000, "total: 3000 EUR");
	is_errno(r->wrong_ret, EDEADLK,
		 "an audit locking wallet 2 then wallet 1 is refused");
	ok(r->audits > 0 && r->bad_audits == 0,
	   "%ld audits under one shared request all saw 3000 EUR (bad: %ld)",
	   r->audits, r->bad_audits);
	ring_free(r);
}

/*
 * 003, the deadlock of the lesson: each transfer locks its source, meets
 * the other (both hold their first key), then locks its target. The one
 * whose target sorts below its source is refused at once (no hang, no
 * timeout needed); it releases, retries in order, and both complete.
 */
struct late {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct pbarrier *meet;
	int n;
	long stock[MAXP + 1];
	struct {
		int src, dst;
		long qty;
		int second_ret;
		uint64_t second_ms;
		struct ordlock_failure failure;
		int retry_ret;
	} t[MAXP];
};

static struct late *late;

static int late_worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	struct ordlock *ol = olt_child_open(late->domain);
	struct ordlock_key k;
	uint64_t t0;

	k = ORDLOCK_EX(R_STORE, late->t[me].src);
	if (ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL))
		return 2;
	if (pbarrier_wait(late->meet))	/* everyone holds its first key */
		return 3;
	k = ORDLOCK_EX(R_STORE, late->t[me].dst);
	t0 = now_ms();
	late->t[me].second_ret = ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL);
	late->t[me].second_ms = now_ms() - t0;
	if (late->t[me].second_ret) {
		struct ordlock_key both[2] = {
			ORDLOCK_EX(R_STORE, late->t[me].src),
			ORDLOCK_EX(R_STORE, late->t[me].dst),
		};

		late->t[me].failure = *ordlock_last_failure(ol);
		/* roll back and take everything again, in one request */
		ordlock_release_all(ol);
		late->t[me].retry_ret = ordlock_acquire(ol, both, 2, WAIT_MS,
							 0, NULL);
		if (late->t[me].retry_ret)
			return 4;
	}
	slow_add(&late->stock[late->t[me].src], -late->t[me].qty);
	slow_add(&late->stock[late->t[me].dst], late->t[me].qty);
	ordlock_close(ol);
	return 0;
}

static void run_late(int n)
{
	pid_t pid[MAXP];
	int p;

	late->meet = pbarrier_new((unsigned int)n);
	late->n = n;
	for (p = 0; p < n; p++)
		pid[p] = child_start(late_worker, (void *)(intptr_t)p);
	for (p = 0; p < n; p++)
		is_int(child_wait(pid[p], 0), 0,
		       "transfer %d -> %d ends without hanging", late->t[p].src,
		       late->t[p].dst);
	pbarrier_free(late->meet);
}

static void test_lesson_deadlock(void)
{
	char buf[200];
	int w;

	late = shm_alloc(sizeof(*late));
	snprintf(late->domain, sizeof(late->domain), "%s", wh_domain);
	late->stock[SOFIA] = 500;
	late->stock[PLOVDIV] = 300;
	late->t[0].src = SOFIA;
	late->t[0].dst = PLOVDIV;
	late->t[0].qty = 5;
	late->t[1].src = PLOVDIV;
	late->t[1].dst = SOFIA;
	late->t[1].qty = 3;
	run_late(2);
	is_int(late->t[0].second_ret, 0,
	       "Sofia->Plovdiv (holds 1:1, asks 1:2) is granted Plovdiv");
	is_errno(late->t[1].second_ret, EDEADLK,
		 "Plovdiv->Sofia (holds 1:2, asks 1:1) is refused: EDEADLK");
	ok(late->t[1].second_ms < 5000,
	   "at once, not after a timeout (%llu ms)",
	   (unsigned long long)late->t[1].second_ms);
	is_int(late->t[1].failure.reason, ORDLOCK_REASON_ORDER, "reason ORDER");
	ok(olt_key_eq(&late->t[1].failure.held, R_STORE, PLOVDIV, EX),
	   "failure.held is Plovdiv 1:2");
	ok(olt_key_eq(&late->t[1].failure.key, R_STORE, SOFIA, EX),
	   "failure.key is Sofia 1:1");
	ordlock_strfailure(&late->t[1].failure, buf, sizeof(buf));
	diag("refused transfer: %s", buf);
	is_int(late->t[1].retry_ret, 0,
	       "after releasing, the same transfer in order is granted");
	is_int(late->stock[SOFIA], 498, "Sofia: 498");
	is_int(late->stock[PLOVDIV], 302, "Plovdiv: 302");
	shm_free(late, sizeof(*late));

	/* the ring of three wallets, each locking its source first */
	late = shm_alloc(sizeof(*late));
	snprintf(late->domain, sizeof(late->domain), "%s", olt_domain("wal2"));
	for (w = 0; w < 3; w++) {
		late->stock[w + 1] = 1000;
		late->t[w].src = w + 1;
		late->t[w].dst = (w + 1) % 3 + 1;
		late->t[w].qty = 5;
	}
	run_late(3);
	is_int(late->t[0].second_ret, 0, "wallet 1 -> 2: granted");
	is_int(late->t[1].second_ret, 0, "wallet 2 -> 3: granted");
	is_errno(late->t[2].second_ret, EDEADLK,
		 "wallet 3 -> 1 (holds 1:3, asks 1:1): EDEADLK, the ring cannot close");
	ok(olt_key_eq(&late->t[2].failure.held, R_STORE, 3, EX) &&
	   olt_key_eq(&late->t[2].failure.key, R_STORE, 1, EX),
	   "failure names held 1:3 and requested 1:1");
	is_int(late->t[2].retry_ret, 0, "its retry in order is granted");
	ok(late->stock[1] == 1000 && late->stock[2] == 1000 &&
	   late->stock[3] == 1000, "every wallet ends at 1000 EUR");
	shm_free(late, sizeof(*late));
}

/* 003 and 000: try-lock with backoff on the whole sorted set */
struct backoff {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct pbarrier *meet;
	long stock[3];
	long retries[2];
	int errors[2];
};

static struct backoff *bo;

static int backoff_worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	int src = me ? PLOVDIV : SOFIA, dst = me ? SOFIA : PLOVDIV;
	struct ordlock_key k[2] = {
		ORDLOCK_EX(R_STORE, src), ORDLOCK_EX(R_STORE, dst),
	};
	struct ordlock *ol = olt_child_open(bo->domain);
	unsigned int seed = (unsigned int)getpid();
	int i;

	for (i = 0; i < 300; i++) {
		uint64_t deadline = now_ms() + WAIT_MS;

		if (pbarrier_wait(bo->meet))
			return 2;
		while (ordlock_try_acquire(ol, k, 2, NULL)) {
			if (errno != EAGAIN || now_ms() > deadline) {
				bo->errors[me]++;
				return 3;
			}
			bo->retries[me]++;
			/* random backoff breaks the rhythm (no livelock) */
			usleep((unsigned int)(rand_r(&seed) % 2000));
		}
		slow_add(&bo->stock[src], -1);
		slow_add(&bo->stock[dst], 1);
		ordlock_release_all(ol);
	}
	ordlock_close(ol);
	return 0;
}

static void test_backoff(void)
{
	pid_t p0, p1;

	bo = shm_alloc(sizeof(*bo));
	snprintf(bo->domain, sizeof(bo->domain), "%s", olt_domain("wh5"));
	bo->meet = pbarrier_new(2);
	bo->stock[SOFIA] = 5000;
	bo->stock[PLOVDIV] = 3000;
	p0 = child_start(backoff_worker, (void *)(intptr_t)0);
	p1 = child_start(backoff_worker, (void *)(intptr_t)1);
	is_int(child_wait(p0, 0), 0, "try-lock + backoff, Sofia->Plovdiv x 300");
	is_int(child_wait(p1, 0), 0, "try-lock + backoff, Plovdiv->Sofia x 300");
	ok(!bo->errors[0] && !bo->errors[1], "no transfer gave up");
	diag("retries after EAGAIN: %ld and %ld", bo->retries[0], bo->retries[1]);
	ok(bo->stock[SOFIA] == 5000 && bo->stock[PLOVDIV] == 3000,
	   "stock exact: %ld / %ld", bo->stock[SOFIA], bo->stock[PLOVDIV]);
	pbarrier_free(bo->meet);
	shm_free(bo, sizeof(*bo));
}

/*
 * 004: orders (rank 1) and inventories (rank 2). Three paths update the
 * same rows, each passing its keys in its own natural order, unsorted and
 * with duplicates, to one request.
 */
enum { ORDER10, ORDER11, INV20, INV30, NCOUNT };

struct shop {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct pbarrier *meet;
	long count[NCOUNT];
	int done[3];
	int errors[3];
	int first_err[3];
	struct ordlock_failure failure[3];
};

static struct shop *shop;

#define SHOP_ROUNDS 1000

static int shop_worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	/* API: order 10, then inventory 20 */
	static const struct ordlock_key api[] = {
		{ .rank = R_ORDER, .id = 10, .mode = EX },
		{ .rank = R_INVENTORY, .id = 20, .mode = EX },
	};
	/* batch: inventory 20, order 10, inventory 30, order 11 */
	static const struct ordlock_key batch[] = {
		{ .rank = R_INVENTORY, .id = 20, .mode = EX },
		{ .rank = R_ORDER, .id = 10, .mode = EX },
		{ .rank = R_INVENTORY, .id = 30, .mode = EX },
		{ .rank = R_ORDER, .id = 11, .mode = EX },
	};
	/*
	 * webhook: inventory 30, order 10 (read, then write), inventory 20,
	 * inventory 30 again (read)
	 */
	static const struct ordlock_key hook[] = {
		{ .rank = R_INVENTORY, .id = 30, .mode = EX },
		{ .rank = R_ORDER, .id = 10, .mode = SH },
		{ .rank = R_ORDER, .id = 10, .mode = EX },
		{ .rank = R_INVENTORY, .id = 20, .mode = EX },
		{ .rank = R_INVENTORY, .id = 30, .mode = SH },
	};
	static const struct {
		const struct ordlock_key *keys;
		unsigned int n;
	} paths[3] = {
		{ api, 2 }, { batch, 4 }, { hook, 5 },
	};
	struct ordlock *ol = olt_child_open(shop->domain);
	int i;

	for (i = 0; i < SHOP_ROUNDS; i++) {
		if (pbarrier_wait(shop->meet))
			return 2;
		if (ordlock_acquire(ol, paths[me].keys, paths[me].n, WAIT_MS, 0,
				    NULL)) {
			if (!shop->errors[me]++) {
				shop->first_err[me] = errno;
				shop->failure[me] = *ordlock_last_failure(ol);
			}
			continue;
		}
		switch (me) {
		case 0:		/* API: an order takes one item */
			slow_add(&shop->count[ORDER10], 1);
			slow_add(&shop->count[INV20], -1);
			break;
		case 1:		/* batch: two orders, two inventories */
			slow_add(&shop->count[INV20], -1);
			slow_add(&shop->count[ORDER10], 1);
			slow_add(&shop->count[INV30], -1);
			slow_add(&shop->count[ORDER11], 1);
			break;
		default:	/* webhook */
			slow_add(&shop->count[INV30], -1);
			slow_add(&shop->count[ORDER10], 1);
			slow_add(&shop->count[INV20], -1);
			break;
		}
		shop->done[me]++;
		ordlock_release_all(ol);
	}
	ordlock_close(ol);
	return 0;
}

static void test_shop(void)
{
	static const char *const names[3] = { "API", "batch", "webhook" };
	pid_t pid[3];
	int p;

	shop = shm_alloc(sizeof(*shop));
	snprintf(shop->domain, sizeof(shop->domain), "%s", olt_domain("shop"));
	shop->meet = pbarrier_new(3);
	shop->count[INV20] = 5000;
	shop->count[INV30] = 5000;
	for (p = 0; p < 3; p++)
		pid[p] = child_start(shop_worker, (void *)(intptr_t)p);
	for (p = 0; p < 3; p++)
		is_int(child_wait(pid[p], 0), 0, "the %s path ends", names[p]);
	for (p = 0; p < 3; p++) {
		is_int(shop->done[p], SHOP_ROUNDS,
		       "%s: %d updates, unsorted keys with duplicates, one request each",
		       names[p], SHOP_ROUNDS);
		if (!is_int(shop->errors[p], 0, "%s: no deadlock, no timeout",
			    names[p]))
			diag("  %s: %s", strerror(shop->first_err[p]),
			     olt_fail_str(&shop->failure[p]));
	}
	is_int(shop->count[ORDER10], 3 * SHOP_ROUNDS, "order 10 counter exact");
	is_int(shop->count[ORDER11], SHOP_ROUNDS, "order 11 counter exact");
	is_int(shop->count[INV20], 5000 - 3 * SHOP_ROUNDS,
	       "inventory 20 stock exact");
	is_int(shop->count[INV30], 5000 - 2 * SHOP_ROUNDS,
	       "inventory 30 stock exact");
	pbarrier_free(shop->meet);
	shm_free(shop, sizeof(*shop));
}

/* 004: a lock discovered late, the per-transaction rule, upgrades */
static void test_shop_late(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock *ol, *o2;
	const struct ordlock_failure *f;
	struct ordlock_key k, both[2];
	char buf[200];

	snprintf(dom, sizeof(dom), "%s", olt_domain("shop2"));
	ol = olt_open(dom);
	o2 = olt_open(dom);

	k = ORDLOCK_EX(R_INVENTORY, 20);
	is_int(ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL), 0,
	       "the webhook locks inventory 20");
	k = ORDLOCK_EX(R_ORDER, 10);
	is_errno(ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL), EDEADLK,
		 "then discovers it needs order 10: EDEADLK");
	f = ordlock_last_failure(ol);
	ok(olt_key_eq(&f->held, R_INVENTORY, 20, EX) &&
	   olt_key_eq(&f->key, R_ORDER, 10, EX),
	   "failure: held inventory 2:20, requested order 1:10");
	ordlock_strfailure(f, buf, sizeof(buf));
	ok(!strcmp(buf, "order violation: requested exclusive 1:10 sorts at or below held exclusive 2:20"),
	   "strfailure: \"%s\"", buf);
	is_int(ordlock_release_all(ol), 0, "roll back: release everything");
	both[0] = ORDLOCK_EX(R_INVENTORY, 20);
	both[1] = ORDLOCK_EX(R_ORDER, 10);
	is_int(ordlock_acquire(ol, both, 2, WAIT_MS, 0, NULL), 0,
	       "re-acquire {inventory 20, order 10} in one request: granted");
	ordlock_release_all(ol);

	/* the rule holds for the whole transaction, not per function */
	k = ORDLOCK_EX(R_INVENTORY, 30);
	ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL);
	both[0] = ORDLOCK_EX(R_ORDER, 10);
	both[1] = ORDLOCK_EX(R_INVENTORY, 20);
	is_errno(ordlock_acquire(ol, both, 2, WAIT_MS, 0, NULL), EDEADLK,
		 "inventory 30 held, then a common function locks order 10 + inventory 20: EDEADLK");
	is_int(ordlock_last_failure(ol)->index, 0,
	       "failure.index 0: order 10 is the culprit");
	is_int(olt_nheld(ol), 1, "nothing more taken");
	ordlock_release_all(ol);

	/* batch, one transaction: order 10, inventory 20, then order 11 */
	k = ORDLOCK_EX(R_ORDER, 10);
	ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL);
	k = ORDLOCK_EX(R_INVENTORY, 20);
	is_int(ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL), 0,
	       "batch: order 10 then inventory 20 is in order");
	k = ORDLOCK_EX(R_ORDER, 11);
	is_errno(ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL), EDEADLK,
		 "batch: then order 11 after an inventory: EDEADLK");
	ordlock_release_all(ol);

	/* same id, different kind: different resources */
	k = ORDLOCK_EX(R_ORDER, 10);
	ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL);
	k = ORDLOCK_EX(R_INVENTORY, 10);
	is_int(ordlock_try_acquire(o2, &k, 1, NULL), 0,
	       "order 10 and inventory 10 are different resources");
	ordlock_release_all(ol);
	ordlock_release_all(o2);

	/* two shared holders who both try to upgrade: refused, no hang */
	k = ORDLOCK_SH(R_INVENTORY, 20);
	ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL);
	ordlock_acquire(o2, &k, 1, WAIT_MS, 0, NULL);
	k = ORDLOCK_EX(R_INVENTORY, 20);
	is_errno(ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL), EDEADLK,
		 "shared holder 1 asks exclusive on the same row: EDEADLK at once");
	is_errno(ordlock_acquire(o2, &k, 1, WAIT_MS, 0, NULL), EDEADLK,
		 "shared holder 2 too: the upgrade deadlock cannot form");
	ok(olt_key_eq(&ordlock_last_failure(o2)->held, R_INVENTORY, 20, SH),
	   "failure.held is the shared 2:20");
	ordlock_close(ol);
	ordlock_close(o2);
}

/* 000: a lock hierarchy, SYSTEM (0) < REGION (1) < ACCOUNT (2) < TX (3) */
static void test_hierarchy(void)
{
	enum { SYSTEM, REGION, ACCOUNT, TX };
	struct ordlock *ol = olt_open(olt_domain("hier"));
	struct ordlock_key k;

	k = ORDLOCK_SH(SYSTEM, 0);
	is_int(ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL), 0, "SYSTEM");
	k = ORDLOCK_EX(REGION, 7);
	is_int(ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL), 0,
	       "then REGION 7");
	k = ORDLOCK_EX(ACCOUNT, 1234);
	is_int(ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL), 0,
	       "then ACCOUNT 1234");
	k = ORDLOCK_EX(REGION, 8);
	is_errno(ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL), EDEADLK,
		 "REGION 8 while holding an ACCOUNT: EDEADLK (parent before child)");
	k = ORDLOCK_EX(TX, 1);
	is_int(ordlock_acquire(ol, &k, 1, WAIT_MS, 0, NULL), 0,
	       "TX below the ACCOUNT: granted");
	is_int(olt_nheld(ol), 4, "4 levels held");
	ordlock_close(ol);
}

int main(void)
{
	watchdog_start(1200);
	snprintf(wh_domain, sizeof(wh_domain), "%s", olt_domain("warehouses"));
	test_two_transfers();
	test_lesson_deadlock();
	test_thousand_transfers();
	test_seed_numbers();
	test_wallets();
	test_backoff();
	test_shop();
	test_shop_late();
	test_hierarchy();
	return tap_done();
}
