// SPDX-License-Identifier: GPL-2.0
/*
 * t_graph: cycles of waits and how the kernel breaks them.
 *
 *  - the two warehouses of the seeds in a "detect" domain: both transfers
 *    hold their source and meet at a barrier, then ask for the other
 *    warehouse. Exactly one gets EDEADLK with the whole cycle, the other
 *    completes, the victim retries, the stock is exact, the kernel log
 *    names the cycle. Once with the order forced (the second asks only
 *    when the first sleeps: it is the victim), then racing for 20 rounds.
 *  - a ring of three and a ring of eight owners (PostgreSQL's
 *    "deadlock-hard"): exactly one victim, whose cycle has every step.
 *  - a cycle closed only through a soft edge (a waiter blocked by the
 *    queue, not by a holder).
 *  - the two-descriptor evasion in an "enforce" domain: one thread holds a
 *    key on one descriptor and waits on another; and the same shape with
 *    two threads, which is no deadlock and must not be reported as one.
 *
 * Every wait the test expects to end has a long timeout (a hang fails
 * instead of blocking the suite); every interleaving is forced with
 * barriers or by waiting until a process sleeps in the kernel.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE
#define ACQ ORDLOCK_IOC_ACQUIRE

/* the timeout of every wait that must end otherwise */
#define LONG_MS		30000

/* the warehouses of seed 003 */
#define R_STORE		1
#define SOFIA		1
#define PLOVDIV		2
#define MAX_ROUNDS	32

/* *p += d, slowly: a lost update shows when two writers overlap */
static void slow_add(long *p, long d)
{
	long v = __atomic_load_n(p, __ATOMIC_RELAXED);

	sched_yield();
	__atomic_store_n(p, v + d, __ATOMIC_RELAXED);
}

struct wh_side {
	pid_t pid;
	uint64_t owner_id;
	int ret0;			/* round 0: the request for the target */
	long nheld0;			/* round 0: held right after it failed */
	struct ordlock_failure f0;	/* round 0: the failure, if any */
	int ncycle0;
	struct ordlock_cycle_step cycle0[4];
	int error;			/* first unexpected -errno */
	unsigned int victims;
};

struct wh {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	long stock[3];			/* indexed by warehouse id */
	unsigned int rounds;
	int forced;
	struct pbarrier *meet;		/* both hold their source */
	struct pbarrier *done;		/* both finished the round */
	struct wh_side s[2];
	unsigned int victim[MAX_ROUNDS]; /* bit i: side i was the victim */
};

static struct wh *wh;

/*
 * Side 0 moves 5 from Sofia to Plovdiv, side 1 moves 3 back, each locking
 * its source first, as in the seed's deadlock. A victim releases what it
 * holds and retries the same way; by then the winner holds both keys.
 */
static int transfer_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct wh_side *me = &wh->s[i];
	struct ordlock_key src = ORDLOCK_EX(R_STORE, i ? PLOVDIV : SOFIA);
	struct ordlock_key dst = ORDLOCK_EX(R_STORE, i ? SOFIA : PLOVDIV);
	long qty = i ? 3 : 5;
	struct ordlock *ol;
	unsigned int r;
	int ret;

	prctl(PR_SET_NAME, "transfer", 0, 0, 0);
	ol = ordlock_open(NULL);
	if (!ol || ordlock_set_domain(ol, wh->domain)) {
		me->error = -errno;
		pbarrier_break(wh->meet);
		return 10;
	}
	me->pid = getpid();
	me->owner_id = gt_owner_id(ol);
	for (r = 0; r < wh->rounds; r++) {
		ret = ordlock_acquire(ol, &src, 1, LONG_MS, 0, NULL);
		if (ret) {
			me->error = ret;
			pbarrier_break(wh->meet);
			return 11;
		}
		if (pbarrier_wait(wh->meet))
			return 12;
		/* forced: side 1 asks only once side 0 sleeps on its request */
		if (wh->forced && i == 1 &&
		    wait_blocked_ioctl(wh->s[0].pid, ACQ, 0)) {
			me->error = -ETIMEDOUT;
			ordlock_release_all(ol);
			pbarrier_break(wh->done);
			return 13;
		}
		ret = ordlock_acquire(ol, &dst, 1, LONG_MS, 0, NULL);
		if (r == 0) {
			me->ret0 = ret;
			me->nheld0 = olt_nheld(ol);
			if (ret) {
				me->f0 = *ordlock_last_failure(ol);
				me->ncycle0 = ordlock_last_cycle(ol, me->cycle0, 4);
			}
		}
		if (ret == -EDEADLK) {
			__atomic_or_fetch(&wh->victim[r], 1U << i, __ATOMIC_SEQ_CST);
			me->victims++;
			ordlock_release_all(ol);
			ret = ordlock_acquire(ol, &src, 1, LONG_MS, 0, NULL);
			if (!ret)
				ret = ordlock_acquire(ol, &dst, 1, LONG_MS, 0, NULL);
		}
		if (ret) {
			if (!me->error)
				me->error = ret;
		} else {
			slow_add(&wh->stock[src.id], -qty);
			slow_add(&wh->stock[dst.id], qty);
		}
		ordlock_release_all(ol);
		if (pbarrier_wait(wh->done))
			return 14;
	}
	ordlock_close(ol);
	return 0;
}

static void wh_run(unsigned int rounds, int forced)
{
	pid_t pid[2];
	int i;

	wh = shm_alloc(sizeof(*wh));
	gt_new_domain(wh->domain, "wh", ORDLOCK_POLICY_DETECT, 0);
	wh->stock[SOFIA] = 500;
	wh->stock[PLOVDIV] = 300;
	wh->rounds = rounds;
	wh->forced = forced;
	wh->meet = pbarrier_new(2);
	wh->done = pbarrier_new(2);
	for (i = 0; i < 2; i++)
		pid[i] = child_start(transfer_main, (void *)(intptr_t)i);
	for (i = 0; i < 2; i++)
		is_int(child_wait(pid[i], 0), 0, "%s: transfer %d ran its %u rounds",
		       forced ? "forced" : "racing", i, rounds);
	for (i = 0; i < 2; i++)
		if (wh->s[i].error)
			diag("transfer %d: unexpected error %s", i,
			     strerror(-wh->s[i].error));
}

static void wh_free(void)
{
	pbarrier_free(wh->meet);
	pbarrier_free(wh->done);
	shm_free(wh, sizeof(*wh));
	wh = NULL;
}

static void check_step(const struct ordlock_cycle_step *s, const char *what,
		       uint64_t owner_id, pid_t pid, const char *comm,
		       uint32_t rank, uint64_t id, unsigned int mode,
		       unsigned int edge, unsigned int blocker_mode)
{
	int good = s->owner_id == owner_id && s->pid == (uint32_t)pid &&
		   (!comm || !strncmp(s->comm, comm, sizeof(s->comm))) &&
		   olt_key_eq(&s->key, rank, id, mode) && s->edge == edge &&
		   s->blocker_mode == blocker_mode;

	ok(good, "%s: %s", what, gt_step_str(s));
	if (!good)
		diag("  want owner %llu pid %d (%s) waiting for %s %u:%llu, %s edge, blocker %s",
		     (unsigned long long)owner_id, (int)pid, comm ? comm : "*",
		     ordlock_mode_name(mode), rank, (unsigned long long)id,
		     edge == ORDLOCK_EDGE_SOFT ? "soft" : "hard",
		     ordlock_mode_name(blocker_mode));
}

/*
 * The victim rule: the owner whose wait closes the cycle. Side 0 waits
 * first (for Plovdiv, held by side 1); side 1's request for Sofia closes
 * the cycle.
 */
static void test_warehouses_forced(void)
{
	char want[512], strc[512], logline[1024];
	struct wh_side *v, *w;
	int kfd, found;

	gt_kmsg_settle();
	kfd = gt_kmsg_open();
	if (kfd < 0)
		diag("/dev/kmsg: %s", strerror(-kfd));
	wh_run(1, 1);
	v = &wh->s[1];
	w = &wh->s[0];

	is_int(w->ret0, 0, "the first transfer (Sofia -> Plovdiv) completes");
	is_errno(v->ret0, EDEADLK,
		 "the second (Plovdiv -> Sofia), whose wait closes the cycle, gets EDEADLK");
	is_int(v->f0.reason, ORDLOCK_REASON_DEADLOCK, "reason DEADLOCK (%s)",
	       olt_fail_str(&v->f0));
	is_int(v->f0.error, EDEADLK, "failure.error EDEADLK");
	ok(olt_key_eq(&v->f0.key, R_STORE, SOFIA, EX),
	   "failure.key: exclusive 1:1, the key it waited for");
	is_int(v->f0.cycle_len, 2, "failure.cycle_len 2");
	ok(v->f0.pid == (uint32_t)w->pid || v->f0.pid == (uint32_t)v->pid,
	   "failure.pid names an owner of the cycle (%u)", v->f0.pid);
	is_int(v->nheld0, 1, "the victim still holds its source after EDEADLK");
	is_int(v->victims, 1, "the victim was chosen once");
	is_int(w->victims, 0, "the other was never a victim");
	is_int(v->ncycle0, 2, "ordlock_last_cycle() gives 2 steps");
	if (v->ncycle0 == 2) {
		check_step(&v->cycle0[0], "step 0 is the victim", v->owner_id,
			   v->pid, "transfer", R_STORE, SOFIA, EX,
			   ORDLOCK_EDGE_HARD, EX);
		check_step(&v->cycle0[1], "step 1 is the other transfer",
			   w->owner_id, w->pid, "transfer", R_STORE, PLOVDIV,
			   EX, ORDLOCK_EDGE_HARD, EX);
	}
	is_int(wh->stock[SOFIA], 498, "Sofia: 500 - 5 + 3");
	is_int(wh->stock[PLOVDIV], 302, "Plovdiv: 300 + 5 - 3");
	is_int(wh->stock[SOFIA] + wh->stock[PLOVDIV], 800, "total 800");

	snprintf(want, sizeof(want),
		 "ordlock: deadlock in domain \"%s\": pid %d (transfer) waits for exclusive 1:1 held by pid %d (transfer); pid %d (transfer) waits for exclusive 1:2 held by pid %d (transfer); victim pid %d",
		 wh->domain, (int)v->pid, (int)w->pid, (int)w->pid,
		 (int)v->pid, (int)v->pid);
	found = kfd >= 0 && gt_kmsg_find(kfd, want, logline, sizeof(logline),
					 3000);
	ok(found, "the kernel log names the cycle");
	if (!found)
		diag("  want: %s", want);
	snprintf(strc, sizeof(strc), "deadlock in domain \"%s\"", wh->domain);
	ok(found && !gt_kmsg_find(kfd, strc, NULL, 0, 300),
	   "the cycle is logged once");
	is_int(gt_deadlocks_read(wh->domain, NULL, 0), 1,
	       "debugfs deadlocks has one record of the domain");
	if (v->ncycle0 == 2) {
		ordlock_strcycle(v->cycle0, 2, strc, sizeof(strc));
		ok(strstr(want, strc) != NULL,
		   "ordlock_strcycle() says what the log says: %s", strc);
	}
	if (kfd >= 0)
		close(kfd);
	wh_free();
}

static void test_warehouses_racing(void)
{
	unsigned int r, rounds = 20, exact = 0, victims = 0;
	struct gt_stats st;

	wh_run(rounds, 0);
	for (r = 0; r < rounds; r++) {
		if (wh->victim[r] == 1 || wh->victim[r] == 2)
			exact++;
		else
			diag("round %u: victims mask %u", r, wh->victim[r]);
		victims += wh->victim[r] != 0;
	}
	is_int(exact, rounds, "racing: exactly one victim in each of %u rounds",
	       rounds);
	is_int(wh->s[0].error, 0, "racing: transfer 0 saw no other error");
	is_int(wh->s[1].error, 0, "racing: transfer 1 saw no other error");
	diag("racing: victims: side 0 %u times, side 1 %u times",
	     wh->s[0].victims, wh->s[1].victims);
	is_int(wh->stock[SOFIA], 500 - 2 * (long)rounds,
	       "racing: Sofia exact after %u + %u transfers", rounds, rounds);
	is_int(wh->stock[PLOVDIV], 300 + 2 * (long)rounds,
	       "racing: Plovdiv exact");
	is_int(gt_deadlocks_read(wh->domain, NULL, 0), rounds,
	       "racing: debugfs deadlocks has one record per round");
	is_int(gt_stats_read(wh->domain, &st), 0, "racing: stats has the domain");
	is_int(gt_stat(&st, "deadlocks"), rounds,
	       "racing: stats counts one deadlock per round");
	wh_free();
}

/*
 * The victim's request is rolled back: B holds 1:3 and asks for 1:0 and
 * 1:1 at once; it takes 1:0 (free), then its wait for 1:1 (held by A,
 * who waits for 1:3) closes the cycle. After EDEADLK, B holds 1:3 only.
 */
static void test_rollback(void)
{
	struct ordlock_key k[2] = { ORDLOCK_EX(1, 1), ORDLOCK_EX(1, 0) };
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	int ret;

	gt_new_domain(domain, "rollback", ORDLOCK_POLICY_DETECT, 0);
	a = gt_actor_start("rb-a", domain, 1);
	b = gt_actor_start("rb-b", domain, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 3, EX, LONG_MS, 0),
	   "rollback: A holds 1:1, B holds 1:3");
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 3, EX, LONG_MS, 0);
	is_int(gt_blocked(a, ACQ), 0, "rollback: A waits for 1:3");
	ret = gt_call(b, GT_OP_ACQUIRE, 0, k, 2, LONG_MS, 0);
	is_errno(ret, EDEADLK,
		 "rollback: B asks for 1:0 and 1:1; waiting for 1:1 closes the cycle");
	ok(olt_key_eq(&b->res->failure.key, 1, 1, EX),
	   "rollback: failure.key is 1:1");
	is_int(b->res->failure.index, 0,
	       "rollback: failure.index: 1:1 is key 0 of B's array");
	is_int(b->res->nheld, 1, "rollback: B holds only 1:3 again");
	is_int(olt_probe(domain, 1, 0, EX), 0,
	       "rollback: 1:0, taken by the failed request, is free again");
	ok(gt_collect(a, 200) == -ETIMEDOUT, "rollback: A still waits");
	gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ok(!gt_collect(a, LONG_MS) && !a->res->ret, "rollback: A is granted 1:3");
	gt_actor_stop(a);
	gt_actor_stop(b);
}

/*
 * A ring of @n owners: owner i holds key i, then waits for key i + 1
 * (the last one for key 0). Each waits before the next asks; the last
 * closes the ring and is the victim.
 */
static void test_ring(unsigned int n)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX], name[16];
	struct gt_actor *a[8];
	const struct gt_result *res;
	struct gt_deadlock dl;
	unsigned int i, blocked = 1, good = 1;
	int ret;

	gt_new_domain(domain, "ring", ORDLOCK_POLICY_DETECT, 0);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "ring%u", i);
		a[i] = gt_actor_start(name, domain, 1);
		if (gt_call1(a[i], GT_OP_ACQUIRE, 0, 1, i + 1, EX, LONG_MS, 0))
			good = 0;
	}
	ok(good, "ring of %u: each owner holds its key", n);
	for (i = 0; i + 1 < n; i++) {
		gt_submit1(a[i], GT_OP_ACQUIRE, 0, 1, i + 2, EX, LONG_MS, 0);
		if (gt_blocked(a[i], ACQ))
			blocked = 0;
	}
	ok(blocked, "ring of %u: owners 0..%u wait, each for the next", n,
	   n - 2);
	is_int(gt_wait_edges(domain, n - 1, 5000), 0,
	       "ring of %u: the graph shows %u edges", n, n - 1);

	ret = gt_call1(a[n - 1], GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	res = a[n - 1]->res;
	is_errno(ret, EDEADLK, "ring of %u: the last owner, closing the ring, gets EDEADLK",
		 n);
	ok(res->elapsed_ms < LONG_MS / 2, "ring of %u: at once (%llu ms)", n,
	   (unsigned long long)res->elapsed_ms);
	is_int(res->failure.reason, ORDLOCK_REASON_DEADLOCK,
	       "ring of %u: reason DEADLOCK", n);
	is_int(res->failure.cycle_len, n, "ring of %u: failure.cycle_len", n);
	is_int(res->ncycle, n, "ring of %u: the cycle has %u steps", n, n);
	if (res->ncycle == (int)n) {
		const struct ordlock_cycle_step *s = res->cycle;

		good = s[0].owner_id == a[n - 1]->owner_id[0] &&
		       s[0].pid == (uint32_t)a[n - 1]->pid &&
		       olt_key_eq(&s[0].key, 1, 1, EX);
		for (i = 1; i < n; i++) {
			/* step i: owner i - 1 waits for key i + 1 of owner i */
			if (s[i].owner_id != a[i - 1]->owner_id[0] ||
			    s[i].pid != (uint32_t)a[i - 1]->pid ||
			    strcmp(s[i].comm, a[i - 1]->comm) ||
			    !olt_key_eq(&s[i].key, 1, i + 1, EX) ||
			    s[i].edge != ORDLOCK_EDGE_HARD ||
			    s[i].blocker_mode != EX)
				good = 0;
		}
		ok(good, "ring of %u: the victim first, then every owner in ring order",
		   n);
		if (!good)
			for (i = 0; i < n; i++)
				diag("  step %u: %s", i, gt_step_str(&s[i]));
	}
	is_int(res->nheld, 1, "ring of %u: the victim still holds its key", n);
	good = 1;
	for (i = 0; i + 1 < n; i++)
		if (gt_collect(a[i], i ? 0 : 200) != -ETIMEDOUT)
			good = 0;
	ok(good, "ring of %u: nobody else was woken: the others still wait", n);
	ok(gt_deadlocks_read(domain, &dl, 1) == 1 && dl.len == n &&
	   dl.nsteps == n && dl.steps[0].pid == a[n - 1]->pid,
	   "ring of %u: debugfs deadlocks has the record, %u steps, victim first",
	   n, n);

	/* the victim lets go: the ring unwinds from its end */
	is_int(gt_call(a[n - 1], GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "ring of %u: the victim releases", n);
	good = 1;
	for (i = n - 1; i-- > 0;) {
		if (gt_collect(a[i], LONG_MS) || a[i]->res->ret) {
			diag("ring of %u: owner %u: %s", n, i,
			     a[i]->busy ? "still waits" :
			     strerror(-a[i]->res->ret));
			good = 0;
			break;
		}
		gt_call(a[i], GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	}
	ok(good, "ring of %u: every other owner is granted in turn", n);
	for (i = 0; i < n; i++)
		gt_actor_stop(a[i]);
	is_int(gt_graph_read(domain, NULL, 0), 0,
	       "ring of %u: no edge left in the graph", n);
}

/*
 * A holds 1:1 shared. B asks for 1:1 exclusive: it waits for A (hard).
 * C holds 1:2 exclusive and asks for 1:1 shared: compatible with A, but
 * B is queued ahead with a conflicting request, so C waits for B (soft).
 * A asks for 1:2: it waits for C, and the cycle A -> C -> B -> A closes
 * only through the soft edge. A's wait closes it: A is the victim.
 */
static void test_soft_cycle(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX], want[768], line[1024];
	struct gt_actor *a, *b, *c;
	const struct gt_result *res;
	struct gt_edge e[4];
	int n, kfd, ret, i, seen_soft = 0, seen_hard = 0;

	gt_new_domain(domain, "soft", ORDLOCK_POLICY_DETECT, 0);
	a = gt_actor_start("soft-a", domain, 1);
	b = gt_actor_start("soft-b", domain, 1);
	c = gt_actor_start("soft-c", domain, 1);

	is_int(gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0), 0,
	       "soft: A holds 1:1 shared");
	gt_submit1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(b, ACQ), 0, "soft: B waits for 1:1 exclusive");
	is_int(gt_call1(c, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0), 0,
	       "soft: C holds 1:2 exclusive");
	gt_submit1(c, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(c, ACQ), 0,
	       "soft: C waits for 1:1 shared, behind B in the queue");
	n = gt_graph_read(domain, e, 4);
	is_int(n, 2, "soft: two edges before the cycle closes");
	for (i = 0; i < n && i < 4; i++) {
		if (e[i].waiter_id == c->owner_id[0] &&
		    e[i].blocker_id == b->owner_id[0] &&
		    e[i].edge == ORDLOCK_EDGE_SOFT && e[i].mode == SH &&
		    e[i].blocker_mode == EX)
			seen_soft = 1;
		if (e[i].waiter_id == b->owner_id[0] &&
		    e[i].blocker_id == a->owner_id[0] &&
		    e[i].edge == ORDLOCK_EDGE_HARD && e[i].mode == EX &&
		    e[i].blocker_mode == SH)
			seen_hard = 1;
	}
	ok(seen_soft, "soft: C -> B is a soft edge (shared behind exclusive)");
	ok(seen_hard, "soft: B -> A is a hard edge (exclusive vs shared holder)");

	gt_kmsg_settle();
	kfd = gt_kmsg_open();
	ret = gt_call1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	res = a->res;
	is_errno(ret, EDEADLK, "soft: A's request for 1:2 closes the cycle: EDEADLK");
	is_int(res->failure.reason, ORDLOCK_REASON_DEADLOCK,
	       "soft: reason DEADLOCK");
	is_int(res->ncycle, 3, "soft: the cycle has 3 steps");
	if (res->ncycle == 3) {
		check_step(&res->cycle[0], "soft: step 0, A waits for C",
			   a->owner_id[0], a->pid, "soft-a", 1, 2, EX,
			   ORDLOCK_EDGE_HARD, EX);
		check_step(&res->cycle[1], "soft: step 1, C waits behind B",
			   c->owner_id[0], c->pid, "soft-c", 1, 1, SH,
			   ORDLOCK_EDGE_SOFT, EX);
		check_step(&res->cycle[2], "soft: step 2, B waits for A",
			   b->owner_id[0], b->pid, "soft-b", 1, 1, EX,
			   ORDLOCK_EDGE_HARD, SH);
	}
	snprintf(want, sizeof(want),
		 "ordlock: deadlock in domain \"%s\": pid %d (soft-a) waits for exclusive 1:2 held by pid %d (soft-c); pid %d (soft-c) waits for shared 1:1 queued ahead by pid %d (soft-b); pid %d (soft-b) waits for exclusive 1:1 held by pid %d (soft-a); victim pid %d",
		 domain, (int)a->pid, (int)c->pid, (int)c->pid, (int)b->pid,
		 (int)b->pid, (int)a->pid, (int)a->pid);
	ok(kfd >= 0 && gt_kmsg_find(kfd, want, line, sizeof(line), 3000),
	   "soft: the kernel log says \"queued ahead\" for the soft edge");
	if (kfd >= 0)
		close(kfd);
	is_int(res->nheld, 1, "soft: A still holds 1:1 shared");
	is_int(gt_wait_edges(domain, 2, 5000), 0,
	       "soft: the victim left the graph, the two other edges stay");

	is_int(gt_call(a, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "soft: A releases");
	ok(!gt_collect(b, LONG_MS) && !b->res->ret, "soft: B is granted 1:1");
	ok(gt_collect(c, 300) == -ETIMEDOUT, "soft: C still waits behind B");
	gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ok(!gt_collect(c, LONG_MS) && !c->res->ret,
	   "soft: C is granted 1:1 after B");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_actor_stop(c);
}

/*
 * A cycle through a soft edge from deep in a long queue (issue 40: the
 * walk follows a waiter's nearest exclusive waiter ahead, not the whole
 * queue). G holds 1:1 shared, V holds 1:2 exclusive. E1 asks for 1:1
 * exclusive: it waits for G. DEEP_N shared waiters queue behind E1, then
 * E2 (exclusive), DEEP_N more shared waiters, and E2 is killed: it leaves
 * the middle of the queue, and those behind it must now lead to E1. Then
 * @closer decides who closes the cycle G -> V -> E1 -> G, whose only way
 * back from V is the soft edge to E1 at the head, across 2 * DEEP_N
 * shared waiters that conflict with nobody:
 *  0: V asks for 1:1 shared (queued at the tail, behind everyone), then G
 *     asks for 1:2: G's walk reaches V deep in the queue; G is the victim;
 *  1: G asks for 1:2 first (waits for V), then V asks for 1:1 shared: the
 *     new waiter at the tail closes it; V is the victim.
 * A walk that looked only at the waiter just ahead, or kept a pointer to
 * E2 after it left, misses the cycle (the victim waits for its timeout).
 */
#define DEEP_N	24

struct deep_waiter {
	pthread_t thread;
	pid_t tid;
	int fd;
	int ret;
};

static void *deep_main(void *arg)
{
	struct deep_waiter *d = arg;
	struct ordlock_key k = { .rank = 1, .id = 1, .mode = SH };

	__atomic_store_n(&d->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	d->ret = olt_fd_acquire(d->fd, &k, 1, 0, LONG_MS * 1000000ULL, NULL) < 0 ?
		 -errno : 0;
	if (!d->ret)
		olt_fd_release_all(d->fd);
	return NULL;
}

/* Start @n shared waiters of 1:1 in @domain and wait until each sleeps */
static void deep_start(struct deep_waiter *d, unsigned int n, const char *domain)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		d[i].fd = olt_raw_fd();
		if (olt_fd_set_domain(d[i].fd, domain))
			bail_out("deep: SET_DOMAIN: %s", strerror(errno));
		if (pthread_create(&d[i].thread, NULL, deep_main, &d[i]))
			bail_out("deep: pthread_create");
	}
	for (i = 0; i < n; i++) {
		while (!__atomic_load_n(&d[i].tid, __ATOMIC_SEQ_CST))
			usleep(1000);
		if (wait_blocked_ioctl(d[i].tid, ACQ, 0))
			bail_out("deep: shared waiter %u does not wait", i);
	}
}

static void test_deep_soft(int closer)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX], what[32];
	struct deep_waiter *d = calloc(2 * DEEP_N, sizeof(*d));
	struct gt_actor *g, *v, *e1, *e2, *victim;
	const struct gt_result *res;
	unsigned int i;
	int good = 1;

	if (!d)
		bail_out("deep: out of memory");
	snprintf(what, sizeof(what), "deep %d", closer);
	gt_new_domain(domain, "deep", ORDLOCK_POLICY_DETECT, 0);
	g = gt_actor_start("deep-g", domain, 1);
	v = gt_actor_start("deep-v", domain, 1);
	e1 = gt_actor_start("deep-e1", domain, 1);
	e2 = gt_actor_start("deep-e2", domain, 1);
	is_int(gt_call1(g, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0), 0,
	       "%s: G holds 1:1 shared", what);
	is_int(gt_call1(v, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0), 0,
	       "%s: V holds 1:2 exclusive", what);
	if (closer) {
		gt_submit1(g, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
		is_int(gt_blocked(g, ACQ), 0, "%s: G waits for 1:2, held by V", what);
	}
	gt_submit1(e1, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(e1, ACQ), 0, "%s: E1 waits for 1:1 exclusive", what);
	deep_start(d, DEEP_N, domain);
	gt_submit1(e2, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(e2, ACQ), 0, "%s: E2 waits for 1:1 exclusive, behind %u shared",
	       what, DEEP_N);
	deep_start(d + DEEP_N, DEEP_N, domain);
	/* Its owner goes with it; gt_actor_stop() reaps it */
	kill(e2->pid, SIGKILL);
	/* E1 -> G, each shared waiter -> E1 (and G -> V when it waits) */
	is_int(gt_wait_edges(domain, 2 * DEEP_N + 1 + closer, LONG_MS), 0,
	       "%s: E2 left the middle of the queue", what);
	if (!closer) {
		gt_submit1(v, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
		is_int(gt_blocked(v, ACQ), 0, "%s: V waits for 1:1 shared, at the tail",
		       what);
	}
	victim = closer ? v : g;
	if (closer)
		is_errno(gt_call1(v, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0), EDEADLK,
			 "%s: V's request for 1:1 closes the cycle: EDEADLK", what);
	else
		is_errno(gt_call1(g, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0), EDEADLK,
			 "%s: G's request for 1:2 closes the cycle: EDEADLK", what);
	res = victim->res;
	is_int(res->ncycle, 3, "%s: the cycle has 3 steps", what);
	if (res->ncycle == 3) {
		const struct ordlock_cycle_step *sg = &res->cycle[closer ? 2 : 0];
		const struct ordlock_cycle_step *sv = &res->cycle[closer ? 0 : 1];
		const struct ordlock_cycle_step *se = &res->cycle[closer ? 1 : 2];

		check_step(sg, "G waits for 1:2, held by V", g->owner_id[0], g->pid,
			   "deep-g", 1, 2, EX, ORDLOCK_EDGE_HARD, EX);
		check_step(sv, "V waits for 1:1 behind E1 (soft)", v->owner_id[0],
			   v->pid, "deep-v", 1, 1, SH, ORDLOCK_EDGE_SOFT, EX);
		check_step(se, "E1 waits for 1:1, held by G", e1->owner_id[0], e1->pid,
			   "deep-e1", 1, 1, EX, ORDLOCK_EDGE_HARD, SH);
	}
	/* The victim lets go: the others are granted in turn */
	is_int(gt_call(victim, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "%s: the victim releases its key", what);
	if (closer) {
		ok(!gt_collect(g, LONG_MS) && !g->res->ret, "%s: G is granted 1:2", what);
		gt_call(g, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	}
	ok(!gt_collect(e1, LONG_MS) && !e1->res->ret, "%s: E1 is granted 1:1", what);
	gt_call(e1, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	if (!closer) {
		ok(!gt_collect(v, LONG_MS) && !v->res->ret, "%s: V is granted 1:1", what);
		gt_call(v, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	}
	for (i = 0; i < 2 * DEEP_N; i++) {
		pthread_join(d[i].thread, NULL);
		good &= !d[i].ret;
		close(d[i].fd);
	}
	ok(good, "%s: the %u shared waiters are granted", what, 2 * DEEP_N);
	gt_actor_stop(g);
	gt_actor_stop(v);
	gt_actor_stop(e1);
	gt_actor_stop(e2);
	free(d);
}

/*
 * The two-descriptor evasion, in an "enforce" domain. Process P opens two
 * owners. P1 (P's first) takes 1:2. Q takes 1:1 and asks for 1:2: it
 * waits for P1. Then P, through P2, asks for 1:1: P2 waits for Q. Every
 * owner obeys the order rule alone, but P's only thread now sleeps, so
 * P1 never releases 1:2: a deadlock the order rule cannot see.
 */
static void test_two_descriptors(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *p, *q;
	const struct gt_result *res;
	int ret, i, good;

	gt_new_domain(domain, "twofd", ORDLOCK_POLICY_ENFORCE, 0);
	p = gt_actor_start("twofd-p", domain, 2);
	q = gt_actor_start("twofd-q", domain, 1);

	is_int(gt_call1(p, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0), 0,
	       "two fds: P holds 1:2 on its first descriptor");
	is_int(gt_call1(q, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "two fds: Q holds 1:1");
	gt_submit1(q, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(q, ACQ), 0,
	       "two fds: Q asks for 1:2 (in order) and waits for P");
	ret = gt_call1(p, GT_OP_ACQUIRE, 1, 1, 1, EX, 5000, 0);
	res = p->res;
	is_errno(ret, EDEADLK,
		 "two fds: P's request for 1:1 on its second descriptor gets EDEADLK");
	if (ret == -ETIMEDOUT)
		diag("  not detected: P waited %llu ms and timed out (the cycle goes through P's thread, not an owner's wait)",
		     (unsigned long long)res->elapsed_ms);
	else
		ok(res->elapsed_ms < 2500, "two fds: at once (%llu ms)",
		   (unsigned long long)res->elapsed_ms);
	is_int(res->failure.reason, ORDLOCK_REASON_DEADLOCK,
	       "two fds: reason DEADLOCK");
	ok(res->ncycle >= 2, "two fds: a cycle of %d steps is reported",
	   res->ncycle);
	diag("  P's owners: %llu (holds 1:2), %llu (asks for 1:1); Q's: %llu",
	     (unsigned long long)p->owner_id[0],
	     (unsigned long long)p->owner_id[1],
	     (unsigned long long)q->owner_id[0]);
	if (res->ncycle >= 2) {
		int has_q = 0, has_p = 0;

		good = res->cycle[0].pid == (uint32_t)p->pid &&
		       res->cycle[0].owner_id == p->owner_id[1] &&
		       olt_key_eq(&res->cycle[0].key, 1, 1, EX);
		for (i = 0; i < res->ncycle; i++) {
			const struct ordlock_cycle_step *s = &res->cycle[i];

			diag("  step %d: %s", i, gt_step_str(s));
			if (s->pid == (uint32_t)q->pid &&
			    s->owner_id == q->owner_id[0] &&
			    olt_key_eq(&s->key, 1, 2, EX))
				has_q = 1;
			else if (s->pid == (uint32_t)p->pid)
				has_p = 1;
			else
				good = 0;
		}
		ok(good && has_q && has_p,
		   "two fds: step 0 is P's second descriptor waiting for 1:1, Q waits for 1:2, nobody else");
	}
	is_int(gt_call(p, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "two fds: P releases 1:2 on its first descriptor");
	ok(!gt_collect(q, LONG_MS) && !q->res->ret, "two fds: Q is granted 1:2");
	gt_actor_stop(p);
	gt_actor_stop(q);
}

/*
 * The same shape with two threads in P: thread 1 took 1:2 on the first
 * descriptor and stays awake; thread 2 waits on the second. Thread 1 can
 * still release, so there is no deadlock, and none may be reported.
 */
static void test_two_threads(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_twothr *tt;
	struct gt_actor *q;
	struct gt_edge e[4];
	pid_t pid;
	int n, i, p2q = 0, q2p = 0;

	gt_new_domain(d, "twothr", ORDLOCK_POLICY_ENFORCE, 0);
	q = gt_actor_start("twothr-q", d, 1);
	tt = gt_twothr_start("twothr-p", d, ORDLOCK_EX(1, 2), d, ORDLOCK_EX(1, 1));
	pid = tt->pid;
	pbarrier_wait(tt->held);
	is_int(tt->ret1, 0, "two threads: P's thread 1 holds 1:2 on descriptor 1");
	is_int(gt_call1(q, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "two threads: Q holds 1:1");
	gt_submit1(q, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(q, ACQ), 0, "two threads: Q waits for 1:2");
	pbarrier_wait(tt->go);
	pbarrier_wait(tt->blocked);
	is_int(tt->blocked_ret, 0,
	       "two threads: P's thread 2 waits for 1:1 on descriptor 2 (thread 1 is awake: no deadlock)");
	is_int(tt->ret2, 1, "two threads: thread 2's request has not returned");
	n = gt_graph_read(d, e, 4);
	for (i = 0; i < n && i < 4; i++) {
		if (e[i].waiter_pid == pid && e[i].blocker_id == q->owner_id[0])
			p2q = 1;
		if (e[i].waiter_id == q->owner_id[0] && e[i].blocker_pid == pid)
			q2p = 1;
	}
	ok(n == 2 && p2q && q2p,
	   "two threads: the graph shows P -> Q on 1:1 and Q -> P on 1:2 (%d edges)",
	   n);
	pbarrier_wait(tt->release);
	ok(!gt_collect(q, LONG_MS) && !q->res->ret,
	   "two threads: thread 1 releases 1:2, Q is granted");
	is_int(gt_call(q, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "two threads: Q releases");
	is_int(child_wait(pid, 0), 0, "two threads: P ends");
	is_int(tt->ret2, 0, "two threads: thread 2 is granted 1:1");
	gt_actor_stop(q);
	gt_twothr_free(tt);
}

int main(void)
{
	watchdog_start(280);
	test_warehouses_forced();
	test_rollback();
	test_ring(3);
	test_ring(8);
	test_soft_cycle();
	test_deep_soft(0);
	test_deep_soft(1);
	test_two_descriptors();
	test_two_threads();
	test_warehouses_racing();
	return tap_done();
}
