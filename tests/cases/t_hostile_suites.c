// SPDX-License-Identifier: GPL-2.0
/*
 * t_hostile_suites: the shapes of other lock managers' test suites, ported
 * to ordlock and judged by what ordlock documents (written here from the
 * shapes alone: no code of those suites).
 *
 *  - PostgreSQL's isolation deadlock specs: deadlock-simple (two shared
 *    holders both upgrade: the second fails at once, reason upgrade);
 *    deadlock-hard (a ring of 8 owners, each holding one key and waiting
 *    for the next: one victim, the request that closes the ring, the 7
 *    others proceed one by one; once at once, once with a detection
 *    delay); deadlock-soft and deadlock-soft-2 (cycles that exist only
 *    through soft edges, a request queued behind a conflicting queued
 *    request). PostgreSQL rearranges its wait queue to let those through;
 *    ordlock grants FIFO and never rearranges (docs/design.md), so each is
 *    a real cycle: one victim, whose steps name the soft edges; the same
 *    shapes without the closing wait are no deadlock and get no EDEADLK.
 *    Also: deadlock-soft closed by a netlink request (refused at once,
 *    with the cycle), a victim whose request had taken keys gives them
 *    back, a soft edge to a queued upgrade.
 *  - LTP's fcntl/flock cases: a three-process deadlock (fcntl17) in a
 *    detect domain, and refused by the order rule in an enforce one;
 *    try-lock matrices over keys another owner holds (and over a queued
 *    writer); keys released when the holder's last descriptor closes
 *    (also a descriptor shared with a forked child) or when the holder is
 *    SIGKILLed while others wait: the waiters get them in FIFO order;
 *    invalid input (modes, reserved fields, sizes, key counts) failing with
 *    the documented errno and changing nothing.
 *  - DLM conversion cases: conversions granted ahead of queued requests;
 *    a downgrade letting the queued shared waiters at the head in at once;
 *    an upgrade that times out leaves the key shared and lets in what
 *    queued behind it; the conversion deadlock (reason upgrade) in every
 *    policy; a holder killed while its upgrade waits; converting a key
 *    not held.
 *  - A fair read-write lock (Java's fair ReentrantReadWriteLock): a reader
 *    does not overtake a queued writer; the readers queued behind a writer
 *    are granted together when it releases; a queued writer that gives up
 *    (its timeout, SIGKILL, a signal) lets the readers behind it in at
 *    once; a reader asking its read lock again is refused (no
 *    reentrancy); the failure record of a reader that only the queued
 *    writer keeps out names the writer as queued (holder_mode 0), not as
 *    a holder.
 *
 * Every interleaving is forced: a request expected to wait is seen asleep
 * in the kernel before the next step, and who holds or waits is read from
 * debugfs "locks". No point depends on the wall clock; the timeouts of
 * waits expected to be granted are long.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE
#define ACQ ORDLOCK_IOC_ACQUIRE
#define CONV ORDLOCK_IOC_CONVERT
#define LONG_MS 60000
#define MAXL 64

static struct ordlock *tester;

/* Does debugfs "locks" show owner @oid on 1:@id in @role (and @mode, if not 0)? */
static int has_role(const char *d, uint64_t oid, uint64_t id, int role,
		    unsigned int mode)
{
	struct gt_lock l[MAXL];
	int n = gt_locks_read(d, l, MAXL), i;

	for (i = 0; i < n && i < MAXL; i++)
		if (l[i].owner_id == oid && l[i].rank == 1 && l[i].id == id &&
		    l[i].role == role && (!mode || l[i].mode == mode))
			return 1;
	return 0;
}

/* How many owners hold 1:@id in @mode (0: any) */
static int nholders(const char *d, uint64_t id, unsigned int mode)
{
	struct gt_lock l[MAXL];
	int n = gt_locks_read(d, l, MAXL), i, c = 0;

	for (i = 0; i < n && i < MAXL; i++)
		if (l[i].rank == 1 && l[i].id == id && l[i].role == GT_HOLDER &&
		    (!mode || l[i].mode == mode))
			c++;
	return c;
}

/* Actor @a still waits for 1:@id: busy, and queued in debugfs */
static int waits(const char *d, struct gt_actor *a, uint64_t id)
{
	return gt_collect(a, 0) == -ETIMEDOUT &&
	       has_role(d, a->owner_id[0], id, GT_WAITER, 0);
}

/* Actor @a's submitted request ends, granted */
static int granted(struct gt_actor *a)
{
	return !gt_collect(a, LONG_MS) && !a->res->ret;
}

static int release_all(struct gt_actor *a)
{
	return gt_call(a, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
}

/* Does cycle step @s name @a waiting for 1:@id in @mode, by @edge, @bmode? */
static int step_is(const struct ordlock_cycle_step *s, struct gt_actor *a,
		   uint64_t id, unsigned int mode, unsigned int edge,
		   unsigned int bmode)
{
	return s->owner_id == a->owner_id[0] && (pid_t)s->pid == a->pid &&
	       olt_key_eq(&s->key, 1, id, mode) && s->edge == edge &&
	       s->blocker_mode == bmode;
}

static void show_cycle(const struct gt_result *r)
{
	int i;

	for (i = 0; i < r->ncycle && i < ORDLOCK_CYCLE_MAX; i++)
		diag("  step %d: %s", i, gt_step_str(&r->cycle[i]));
}

/* ------------------------------------------------------------------ */
/* PostgreSQL: deadlock-simple                                         */

static void test_pg_simple(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	uint64_t ta;
	int ret;

	gt_new_domain(d, "hs-pgs", ORDLOCK_POLICY_DETECT, 0);
	a = gt_actor_start("pgs-a", d, 1);
	b = gt_actor_start("pgs-b", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0),
	   "pg simple: A and B hold 1:1 shared");
	ta = a->res->token;
	gt_submit1(a, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(a, CONV), 0, "pg simple: A's upgrade waits for B");
	ret = gt_call1(b, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
	ok(ret == -EDEADLK && b->res->failure.reason == ORDLOCK_REASON_UPGRADE &&
	   (pid_t)b->res->failure.pid == a->pid,
	   "pg simple: B's upgrade fails at once, EDEADLK reason upgrade naming A (%d, %s, pid %u)",
	   ret, ordlock_reason_name(b->res->failure.reason), b->res->failure.pid);
	ok(b->res->nheld == 1 && has_role(d, b->owner_id[0], 1, GT_HOLDER, SH),
	   "pg simple: B still holds 1:1 shared");
	ok(gt_collect(a, 0) == -ETIMEDOUT &&
	   has_role(d, a->owner_id[0], 1, GT_CONVERTER, EX),
	   "pg simple: A still waits to upgrade");
	is_int(release_all(b), 0, "pg simple: B aborts (releases)");
	ok(granted(a) && a->res->token > ta,
	   "pg simple: A's upgrade is granted, with a new token");
	ok(has_role(d, a->owner_id[0], 1, GT_HOLDER, EX), "pg simple: A holds 1:1 exclusive");
	is_int(gt_stat_of(d, "upgrade_deadlocks"), 1, "pg simple: one upgrade deadlock counted");
	is_int(gt_stat_of(d, "deadlocks"), 0, "pg simple: no cycle deadlock counted");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_gauges_zero(d, "pg simple");
}

/* ------------------------------------------------------------------ */
/* PostgreSQL: deadlock-hard, a ring of 8                              */

#define RING 8

static void test_pg_hard(unsigned int delay_ms)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], what[32];
	struct gt_actor *a[RING];
	struct gt_deadlock dl[4];
	int i, j, v = -1, nvict = 0, good, ret, others, ndl;
	uint64_t t0;
	char comm[16];

	snprintf(what, sizeof(what), "pg hard (delay %u)", delay_ms);
	gt_new_domain(d, "hs-pgh", ORDLOCK_POLICY_DETECT, delay_ms);
	good = 1;
	for (i = 0; i < RING; i++) {
		snprintf(comm, sizeof(comm), "ring-%d", i);
		a[i] = gt_actor_start(comm, d, 1);
		good &= !gt_call1(a[i], GT_OP_ACQUIRE, 0, 1, i, EX, LONG_MS, 0);
	}
	ok(good, "%s: each of %d owners holds its key 1:i", what, RING);
	good = 1;
	for (i = 0; i < RING - 1; i++) {
		gt_submit1(a[i], GT_OP_ACQUIRE, 0, 1, i + 1, EX, LONG_MS, 0);
		good &= !gt_blocked(a[i], ACQ);
	}
	ok(good, "%s: owners 0 to 6 wait for the next key, one after the other", what);
	gt_submit1(a[RING - 1], GT_OP_ACQUIRE, 0, 1, 0, EX, LONG_MS, 0);
	/*
	 * The one that ends: without a delay, the request that closed the
	 * ring, at once; with one, the first whose check finds the ring
	 * closed (the last to join, or one whose delay ended after that)
	 */
	ret = -ETIMEDOUT;
	t0 = now_ms();
	while (ret == -ETIMEDOUT && now_ms() - t0 < LONG_MS)
		for (i = RING - 1; i >= 0 && ret == -ETIMEDOUT; i--)
			if (!gt_collect(a[i], 50)) {
				ret = 0;
				v = i;
			}
	if (v < 0) {
		ok(0, "%s: some request of the ring ends", what);
		v = RING - 1;
	}
	for (i = 0; i < RING; i++)
		if (i != v && !gt_collect(a[i], 0)) {
			diag("%s: owner %d ended too: %d", what, i, a[i]->res->ret);
			nvict++;
		}
	ok(!ret && a[v]->res->ret == -EDEADLK &&
	   a[v]->res->failure.reason == ORDLOCK_REASON_DEADLOCK,
	   "%s: a request fails with EDEADLK, reason deadlock (owner %d: %d, %s)",
	   what, v, a[v]->res->ret, ordlock_reason_name(a[v]->res->failure.reason));
	if (!delay_ms)
		is_int(v, RING - 1, "%s: the victim is the request that closed the ring", what);
	is_int(nvict, 0, "%s: exactly one victim: the other %d still wait", what, RING - 1);
	is_int(a[v]->res->ncycle, RING, "%s: the cycle has %d steps", what, RING);
	good = a[v]->res->ncycle == RING;
	for (j = 0; good && j < RING; j++) {
		i = (v + j) % RING;
		good = step_is(&a[v]->res->cycle[j], a[i], (i + 1) % RING, EX,
			       ORDLOCK_EDGE_HARD, EX);
	}
	ok(good, "%s: the steps go round the ring from the victim, all hard", what);
	if (!good)
		show_cycle(a[v]->res);
	is_int(a[v]->res->nheld, 1, "%s: the victim still holds its own key", what);
	ndl = gt_deadlocks_read(d, dl, 4);
	ok(ndl == 1 && dl[0].len == RING, "%s: debugfs deadlocks has one, of %d steps (%d)",
	   what, RING, ndl);
	is_int(gt_stat_of(d, "deadlocks"), 1, "%s: one deadlock counted", what);
	is_int(release_all(a[v]), 0, "%s: the victim aborts", what);
	/* the ring unwinds backwards from the victim */
	good = 1;
	for (j = 1; j < RING; j++) {
		i = (v - j + RING) % RING;
		if (!granted(a[i])) {
			diag("%s: owner %d not granted (%d)", what, i, a[i]->res->ret);
			good = 0;
			break;
		}
		others = 1;
		if (j < RING - 1)
			others = waits(d, a[(i - 1 + RING) % RING], i);
		if (!others) {
			diag("%s: owner %d granted before owner %d let go", what,
			     (i - 1 + RING) % RING, i);
			good = 0;
		}
		good &= a[i]->res->nheld == 2 && !release_all(a[i]);
	}
	ok(good, "%s: the other %d are granted one by one, each when the next let go",
	   what, RING - 1);
	is_int(gt_stat_of(d, "deadlocks"), 1, "%s: still one deadlock counted", what);
	for (i = 0; i < RING; i++)
		gt_actor_stop(a[i]);
	gt_gauges_zero(d, what);
}

/* ------------------------------------------------------------------ */
/* PostgreSQL: deadlock-soft                                           */

/*
 * D1 holds a1 (1:1) shared, D2 holds a2 (1:2) shared; E1 waits for a2
 * exclusive, E2 for a1 exclusive; D1 asks a2 shared, queued behind E1
 * (soft); D2 asks a1 shared, queued behind E2 (soft): the cycle
 * D2 -> E2 -> D1 -> E1 -> D2. With @close 0, D2's second request is
 * not made while E2 waits: no cycle.
 */
static void test_pg_soft(int close)
{
	const char *what = close ? "pg soft" : "pg soft, no cycle";
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *d1, *d2, *e1, *e2 = NULL;
	struct gt_edge e[16];
	const struct gt_result *r;
	int n, i, soft = 0, ret;

	gt_new_domain(d, "hs-pgsoft", ORDLOCK_POLICY_DETECT, 0);
	d1 = gt_actor_start("soft-d1", d, 1);
	d2 = gt_actor_start("soft-d2", d, 1);
	e1 = gt_actor_start("soft-e1", d, 1);
	ok(!gt_call1(d1, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0) &&
	   !gt_call1(d2, GT_OP_ACQUIRE, 0, 1, 2, SH, LONG_MS, 0),
	   "%s: D1 holds a1 shared, D2 holds a2 shared", what);
	gt_submit1(e1, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(e1, ACQ), 0, "%s: E1 waits for a2 exclusive", what);
	if (close) {
		e2 = gt_actor_start("soft-e2", d, 1);
		gt_submit1(e2, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
		is_int(gt_blocked(e2, ACQ), 0, "%s: E2 waits for a1 exclusive", what);
	}
	gt_submit1(d1, GT_OP_ACQUIRE, 0, 1, 2, SH, LONG_MS, 0);
	is_int(gt_blocked(d1, ACQ), 0,
	       "%s: D1 asks a2 shared: queued behind E1, no victim", what);
	n = gt_graph_read(d, e, 16);
	for (i = 0; i < n && i < 16; i++)
		if (e[i].waiter_id == d1->owner_id[0] && e[i].blocker_id == e1->owner_id[0] &&
		    e[i].edge == ORDLOCK_EDGE_SOFT && e[i].mode == SH && e[i].blocker_mode == EX)
			soft++;
	ok(soft == 1 && n == (close ? 3 : 2),
	   "%s: the graph has D1 -> E1 soft among its %d edges", what, n);

	if (!close) {
		/* D2 takes a1 shared: nobody queued there, granted at once */
		ret = gt_call1(d2, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
		is_int(ret, 0, "%s: D2 takes a1 shared too: granted, no EDEADLK", what);
		ok(waits(d, d1, 2) && waits(d, e1, 2), "%s: D1 and E1 still wait", what);
		is_int(release_all(d2), 0, "%s: D2 lets go", what);
		ok(granted(e1), "%s: E1 (queued first) is granted a2", what);
		ok(waits(d, d1, 2), "%s: D1 still waits, behind E1", what);
		is_int(release_all(e1), 0, "%s: E1 lets go", what);
		ok(granted(d1), "%s: then D1 is granted a2", what);
		is_int(gt_stat_of(d, "deadlocks"), 0, "%s: no deadlock counted", what);
		gt_actor_stop(d1);
		gt_actor_stop(d2);
		gt_actor_stop(e1);
		gt_gauges_zero(d, what);
		return;
	}

	ret = gt_call1(d2, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	r = d2->res;
	ok(ret == -EDEADLK && r->failure.reason == ORDLOCK_REASON_DEADLOCK,
	   "%s: D2 asks a1 shared, behind E2: it closes the cycle, EDEADLK (%d, %s)",
	   what, ret, ordlock_reason_name(r->failure.reason));
	is_int(r->ncycle, 4, "%s: a cycle of 4 steps", what);
	ok(r->ncycle == 4 &&
	   step_is(&r->cycle[0], d2, 1, SH, ORDLOCK_EDGE_SOFT, EX) &&
	   step_is(&r->cycle[1], e2, 1, EX, ORDLOCK_EDGE_HARD, SH) &&
	   step_is(&r->cycle[2], d1, 2, SH, ORDLOCK_EDGE_SOFT, EX) &&
	   step_is(&r->cycle[3], e1, 2, EX, ORDLOCK_EDGE_HARD, SH),
	   "%s: D2 -soft-> E2 -hard-> D1 -soft-> E1 -hard-> D2", what);
	show_cycle(r);
	is_int(r->nheld, 1, "%s: D2 still holds a2", what);
	ok(waits(d, d1, 2) && waits(d, e1, 2) && waits(d, e2, 1),
	   "%s: one victim: D1, E1 and E2 still wait", what);
	is_int(release_all(d2), 0, "%s: D2 aborts", what);
	ok(granted(e1), "%s: E1 is granted a2", what);
	ok(waits(d, d1, 2) && waits(d, e2, 1), "%s: D1 (behind E1) and E2 wait", what);
	is_int(release_all(e1), 0, "%s: E1 lets go", what);
	ok(granted(d1) && d1->res->nheld == 2, "%s: D1 is granted a2 (holds both)", what);
	ok(waits(d, e2, 1), "%s: E2 still waits for D1", what);
	is_int(release_all(d1), 0, "%s: D1 lets go", what);
	ok(granted(e2), "%s: E2 is granted a1", what);
	is_int(gt_stat_of(d, "deadlocks"), 1, "%s: one deadlock counted", what);
	gt_actor_stop(d1);
	gt_actor_stop(d2);
	gt_actor_stop(e1);
	gt_actor_stop(e2);
	gt_gauges_zero(d, what);
}

/*
 * deadlock-soft again, D2 a netlink socket: its request that closes the
 * cycle is refused at once with the cycle; a netlink try behind a queued
 * writer names it, queued (holder_mode 0)
 */
static void test_pg_soft_nl(void)
{
	const char *what = "pg soft (netlink)";
	struct ordlock_key a2 = ORDLOCK_SH(1, 2), a1 = ORDLOCK_SH(1, 1);
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *d1, *e1, *e2;
	struct olc_nl_outcome o;
	struct nlt *d2, *t;
	int ret;

	gt_new_domain(d, "hs-pgsoftnl", ORDLOCK_POLICY_DETECT, 0);
	d1 = gt_actor_start("softnl-d1", d, 1);
	e1 = gt_actor_start("softnl-e1", d, 1);
	e2 = gt_actor_start("softnl-e2", d, 1);
	d2 = nlt_must_open();
	t = nlt_must_open();
	memset(&o, 0, sizeof(o));
	ret = nlt_acquire(d2, d, &a2, 1, 0, 0, 1, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_GRANTED &&
	   !gt_call1(d1, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0),
	   "%s: D1 holds a1 shared, the socket D2 holds a2 shared (%d)", what, ret);
	gt_submit1(e1, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(e1, ACQ), 0, "%s: E1 waits for a2 exclusive", what);
	gt_submit1(e2, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(e2, ACQ), 0, "%s: E2 waits for a1 exclusive", what);
	memset(&o, 0, sizeof(o));
	ret = nlt_acquire(t, d, &a1, 1, 0, ORDLOCK_ACQUIRE_TRY, 2, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == EAGAIN &&
	   o.failure.reason == ORDLOCK_REASON_BUSY && (pid_t)o.failure.pid == e2->pid &&
	   o.failure.holder_mode == 0,
	   "%s: a netlink try of a1 shared: refused, busy, naming E2 queued (holder_mode %u)",
	   what, o.failure.holder_mode);
	gt_submit1(d1, GT_OP_ACQUIRE, 0, 1, 2, SH, LONG_MS, 0);
	is_int(gt_blocked(d1, ACQ), 0, "%s: D1 asks a2 shared, queued behind E1", what);
	memset(&o, 0, sizeof(o));
	ret = nlt_acquire(d2, NULL, &a1, 1, 60000000000ULL, 0, 3, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == EDEADLK &&
	   o.failure.reason == ORDLOCK_REASON_DEADLOCK && o.failure.cycle_len == 4,
	   "%s: D2 asks a1 shared: refused at once, EDEADLK, a cycle of 4 (%d, status %u, %u)",
	   what, ret, o.status, o.error);
	ok(o.ncycle == 4 && o.cycle[0].edge == ORDLOCK_EDGE_SOFT &&
	   o.cycle[1].owner_id == e2->owner_id[0] && o.cycle[1].edge == ORDLOCK_EDGE_HARD &&
	   o.cycle[2].owner_id == d1->owner_id[0] && o.cycle[2].edge == ORDLOCK_EDGE_SOFT &&
	   o.cycle[3].owner_id == e1->owner_id[0] && o.cycle[3].edge == ORDLOCK_EDGE_HARD,
	   "%s: the cycle D2 -soft-> E2 -hard-> D1 -soft-> E1 -hard-> D2", what);
	ok(waits(d, d1, 2) && waits(d, e1, 2) && waits(d, e2, 1),
	   "%s: one victim: D1, E1, E2 still wait", what);
	nlt_close(d2);
	ok(granted(e1), "%s: D2's socket closes: E1 is granted a2", what);
	release_all(e1);
	ok(granted(d1), "%s: then D1", what);
	release_all(d1);
	ok(granted(e2), "%s: then E2 gets a1", what);
	nlt_close(t);
	gt_actor_stop(d1);
	gt_actor_stop(e1);
	gt_actor_stop(e2);
	gt_gauges_zero(d, what);
}

/* ------------------------------------------------------------------ */
/* PostgreSQL: deadlock-soft-2                                         */

/*
 * S1 holds a1 (1:1) exclusive, S2 holds a2 (1:2) shared and (@close)
 * waits for a1; S3 and S4 queue for a2 exclusive; S1 asks a2 shared: the
 * holder S2 does not conflict, but S3 and S4 are queued ahead with
 * conflicting requests (two soft edges). With S2 waiting for a1, that
 * closes S1 -> S3 -> S2 -> S1: S1 is the victim. Without, S1 waits its
 * turn, behind S3 and S4.
 */
static void test_pg_soft2(int close)
{
	const char *what = close ? "pg soft-2" : "pg soft-2, no cycle";
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *s1, *s2, *s3, *s4;
	const struct gt_result *r;
	int ret;

	gt_new_domain(d, "hs-pgsoft2", ORDLOCK_POLICY_DETECT, 0);
	s1 = gt_actor_start("soft2-s1", d, 1);
	s2 = gt_actor_start("soft2-s2", d, 1);
	s3 = gt_actor_start("soft2-s3", d, 1);
	s4 = gt_actor_start("soft2-s4", d, 1);
	ok(!gt_call1(s1, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) &&
	   !gt_call1(s2, GT_OP_ACQUIRE, 0, 1, 2, SH, LONG_MS, 0),
	   "%s: S1 holds a1 exclusive, S2 holds a2 shared", what);
	if (close) {
		gt_submit1(s2, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
		is_int(gt_blocked(s2, ACQ), 0, "%s: S2 waits for a1", what);
	}
	gt_submit1(s3, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(s3, ACQ), 0, "%s: S3 waits for a2 exclusive", what);
	gt_submit1(s4, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(s4, ACQ), 0, "%s: S4 waits for a2 exclusive, behind S3", what);

	if (!close) {
		gt_submit1(s1, GT_OP_ACQUIRE, 0, 1, 2, SH, LONG_MS, 0);
		is_int(gt_blocked(s1, ACQ), 0,
		       "%s: S1 asks a2 shared: it fits the holder but waits behind S3 and S4, no EDEADLK",
		       what);
		is_int(nholders(d, 2, 0), 1, "%s: S1 did not jump the queue", what);
		is_int(release_all(s2), 0, "%s: S2 lets go of a2", what);
		ok(granted(s3), "%s: S3 is granted a2", what);
		ok(waits(d, s4, 2) && waits(d, s1, 2), "%s: S4 and S1 wait", what);
		is_int(release_all(s3), 0, "%s: S3 lets go", what);
		ok(granted(s4), "%s: S4 is granted a2", what);
		ok(waits(d, s1, 2), "%s: S1 still waits, behind S4", what);
		is_int(release_all(s4), 0, "%s: S4 lets go", what);
		ok(granted(s1) && s1->res->nheld == 2, "%s: S1 is granted a2 last", what);
		is_int(gt_stat_of(d, "deadlocks"), 0, "%s: no deadlock counted", what);
		goto out;
	}

	ret = gt_call1(s1, GT_OP_ACQUIRE, 0, 1, 2, SH, LONG_MS, 0);
	r = s1->res;
	ok(ret == -EDEADLK && r->failure.reason == ORDLOCK_REASON_DEADLOCK,
	   "%s: S1 asks a2 shared, behind S3 and S4: EDEADLK (%d, %s)", what, ret,
	   ordlock_reason_name(r->failure.reason));
	/*
	 * A shared waiter's walk follows its nearest exclusive waiter ahead
	 * (docs/design.md, the wait-for graph): S4 here; S3 is as good a
	 * shortest cycle, and either is a real one.
	 */
	ok(r->ncycle == 3 &&
	   step_is(&r->cycle[0], s1, 2, SH, ORDLOCK_EDGE_SOFT, EX) &&
	   (step_is(&r->cycle[1], s4, 2, EX, ORDLOCK_EDGE_HARD, SH) ||
	    step_is(&r->cycle[1], s3, 2, EX, ORDLOCK_EDGE_HARD, SH)) &&
	   step_is(&r->cycle[2], s2, 1, SH, ORDLOCK_EDGE_HARD, EX),
	   "%s: the shortest cycle, S1 -soft-> S4 (or S3) -hard-> S2 -hard-> S1 (%d steps)",
	   what, r->ncycle);
	show_cycle(r);
	is_int(r->nheld, 1, "%s: S1 still holds a1", what);
	ok(waits(d, s2, 1) && waits(d, s3, 2) && waits(d, s4, 2),
	   "%s: one victim: S2, S3 and S4 still wait", what);
	is_int(release_all(s1), 0, "%s: S1 aborts", what);
	ok(granted(s2) && s2->res->nheld == 2, "%s: S2 is granted a1", what);
	ok(waits(d, s3, 2) && waits(d, s4, 2), "%s: S3 and S4 wait for S2's a2", what);
	is_int(release_all(s2), 0, "%s: S2 lets go", what);
	ok(granted(s3), "%s: S3 is granted a2", what);
	ok(waits(d, s4, 2), "%s: S4 waits behind S3", what);
	is_int(release_all(s3), 0, "%s: S3 lets go", what);
	ok(granted(s4), "%s: S4 is granted a2", what);
	is_int(gt_stat_of(d, "deadlocks"), 1, "%s: one deadlock counted", what);
out:
	gt_actor_stop(s1);
	gt_actor_stop(s2);
	gt_actor_stop(s3);
	gt_actor_stop(s4);
	gt_gauges_zero(d, what);
}

/*
 * The victim's request is several keys and had taken some: A holds 1:1,
 * B holds 1:3; A asks {1:2, 1:3}: takes 1:2, waits for 1:3; B asks
 * {1:0, 1:2}: takes 1:0, waits for 1:2, held by A's request: B closes the
 * cycle and gives back 1:0 (all or nothing).
 */
static void test_pg_multikey(void)
{
	struct ordlock_key ka[2] = { ORDLOCK_EX(1, 3), ORDLOCK_EX(1, 2) };
	struct ordlock_key kb[2] = { ORDLOCK_EX(1, 2), ORDLOCK_EX(1, 0) };
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	const struct gt_result *r;
	int ret;

	gt_new_domain(d, "hs-multi", ORDLOCK_POLICY_DETECT, 0);
	a = gt_actor_start("multi-a", d, 1);
	b = gt_actor_start("multi-b", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 3, EX, LONG_MS, 0),
	   "multi-key: A holds 1:1, B holds 1:3");
	gt_submit(a, GT_OP_ACQUIRE, 0, ka, 2, LONG_MS, 0);
	is_int(gt_blocked(a, ACQ), 0, "multi-key: A asks {1:2, 1:3}, waits for 1:3");
	ok(has_role(d, a->owner_id[0], 2, GT_HOLDER, EX),
	   "multi-key: A's request took 1:2 on its way");
	ret = gt_call(b, GT_OP_ACQUIRE, 0, kb, 2, LONG_MS, 0);
	r = b->res;
	ok(ret == -EDEADLK && r->failure.reason == ORDLOCK_REASON_DEADLOCK && r->ncycle == 2 &&
	   olt_key_eq(&r->failure.key, 1, 2, EX) && r->failure.index == 0,
	   "multi-key: B asks {1:2, 1:0}: takes 1:0, closes the cycle on 1:2: EDEADLK, index 0 (%d, %s, %u)",
	   ret, ordlock_reason_name(r->failure.reason), r->failure.index);
	ok(r->nheld == 1 && olt_probe(d, 1, 0, EX) == 0,
	   "multi-key: B gave 1:0 back: it holds 1:3 only, 1:0 is free");
	ok(waits(d, a, 3), "multi-key: A still waits");
	is_int(release_all(b), 0, "multi-key: B aborts");
	ok(granted(a) && a->res->nheld == 3, "multi-key: A is granted, holds 3 keys");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_gauges_zero(d, "multi-key");
}

/*
 * A soft edge to a conversion: A and B hold 1:1 shared, C holds 1:2; A
 * upgrades (waits for B); C asks 1:1 shared: it fits the holders but
 * queues behind the upgrade (soft edge C -> A); B asks 1:2 and closes
 * B -> C -> A -> B.
 */
static void test_convert_soft(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b, *c;
	const struct gt_result *r;
	int ret;

	gt_new_domain(d, "hs-cvsoft", ORDLOCK_POLICY_DETECT, 0);
	a = gt_actor_start("cvsoft-a", d, 1);
	b = gt_actor_start("cvsoft-b", d, 1);
	c = gt_actor_start("cvsoft-c", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0) &&
	   !gt_call1(c, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0),
	   "convert soft: A and B hold 1:1 shared, C holds 1:2");
	gt_submit1(a, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(a, CONV), 0, "convert soft: A's upgrade waits for B");
	gt_submit1(c, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(c, ACQ), 0, "convert soft: C's shared request queues behind it");
	ret = gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	r = b->res;
	ok(ret == -EDEADLK && r->failure.reason == ORDLOCK_REASON_DEADLOCK,
	   "convert soft: B asks 1:2: EDEADLK (%d, %s)", ret,
	   ordlock_reason_name(r->failure.reason));
	ok(r->ncycle == 3 &&
	   step_is(&r->cycle[0], b, 2, EX, ORDLOCK_EDGE_HARD, EX) &&
	   step_is(&r->cycle[1], c, 1, SH, ORDLOCK_EDGE_SOFT, EX) &&
	   step_is(&r->cycle[2], a, 1, EX, ORDLOCK_EDGE_HARD, SH),
	   "convert soft: B -hard-> C -soft-> A (upgrading) -hard-> B (%d steps)", r->ncycle);
	show_cycle(r);
	ok(gt_collect(a, 0) == -ETIMEDOUT && waits(d, c, 1),
	   "convert soft: A and C still wait");
	is_int(release_all(b), 0, "convert soft: B aborts");
	ok(granted(a), "convert soft: A's upgrade is granted");
	ok(waits(d, c, 1), "convert soft: C waits for A's exclusive hold");
	is_int(release_all(a), 0, "convert soft: A lets go");
	ok(granted(c), "convert soft: C is granted 1:1");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_actor_stop(c);
	gt_gauges_zero(d, "convert soft");
}

/* ------------------------------------------------------------------ */
/* LTP: fcntl17, three processes                                       */

static void test_ltp_three(unsigned int policy)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], what[32];
	struct gt_actor *a, *b, *c;
	const struct gt_result *r;
	int ret;

	snprintf(what, sizeof(what), "ltp three (%s)", ordlock_policy_name(policy));
	gt_new_domain(d, "hs-three", policy, 0);
	a = gt_actor_start("three-a", d, 1);
	b = gt_actor_start("three-b", d, 1);
	c = gt_actor_start("three-c", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0) &&
	   !gt_call1(c, GT_OP_ACQUIRE, 0, 1, 3, EX, LONG_MS, 0),
	   "%s: A, B, C hold 1:1, 1:2, 1:3", what);
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(a, ACQ), 0, "%s: A waits for 1:2", what);
	gt_submit1(b, GT_OP_ACQUIRE, 0, 1, 3, EX, LONG_MS, 0);
	is_int(gt_blocked(b, ACQ), 0, "%s: B waits for 1:3", what);
	ret = gt_call1(c, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	r = c->res;
	if (policy == ORDLOCK_POLICY_DETECT) {
		ok(ret == -EDEADLK && r->failure.reason == ORDLOCK_REASON_DEADLOCK &&
		   r->ncycle == 3,
		   "%s: C asks 1:1 and closes the cycle: EDEADLK, 3 steps (%d, %s, %d)",
		   what, ret, ordlock_reason_name(r->failure.reason), r->ncycle);
		ok(r->ncycle == 3 &&
		   step_is(&r->cycle[0], c, 1, EX, ORDLOCK_EDGE_HARD, EX) &&
		   step_is(&r->cycle[1], a, 2, EX, ORDLOCK_EDGE_HARD, EX) &&
		   step_is(&r->cycle[2], b, 3, EX, ORDLOCK_EDGE_HARD, EX),
		   "%s: the steps C -> A -> B -> C", what);
		ok((pid_t)r->failure.pid == a->pid && olt_key_eq(&r->failure.key, 1, 1, EX),
		   "%s: the record names 1:1 and its holder A", what);
	} else {
		ok(ret == -EDEADLK && r->failure.reason == ORDLOCK_REASON_ORDER &&
		   olt_key_eq(&r->failure.held, 1, 3, EX),
		   "%s: C's 1:1 is below its 1:3: refused by the order rule (%d, %s)",
		   what, ret, ordlock_reason_name(r->failure.reason));
		ok(r->elapsed_ms < LONG_MS / 2, "%s: without waiting", what);
	}
	is_int(r->nheld, 1, "%s: C still holds 1:3 alone", what);
	ok(waits(d, a, 2) && waits(d, b, 3), "%s: A and B still wait", what);
	is_int(release_all(c), 0, "%s: C lets go", what);
	ok(granted(b), "%s: B is granted 1:3", what);
	ok(waits(d, a, 2), "%s: A still waits for B", what);
	is_int(release_all(b), 0, "%s: B lets go", what);
	ok(granted(a) && a->res->nheld == 2, "%s: A is granted 1:2", what);
	is_int(gt_stat_of(d, "deadlocks"), policy == ORDLOCK_POLICY_DETECT ? 1 : 0,
	       "%s: deadlocks counted", what);
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_actor_stop(c);
	gt_gauges_zero(d, what);
}

/* ------------------------------------------------------------------ */
/* LTP: try-lock matrices                                              */

static void try_cell(const char *d, struct gt_actor *h, unsigned int held,
		     unsigned int want, int expect, const char *why)
{
	struct ordlock_key k = ordlock_key(1, 1, want);
	const struct ordlock_failure *f;
	uint64_t tok = 0;
	int ret;

	ret = ordlock_try_acquire(tester, &k, 1, &tok);
	f = ordlock_last_failure(tester);
	if (!expect) {
		ok(!ret && tok && olt_nheld(tester) == 1,
		   "try: %s held %s, try %s: granted (%d)", why,
		   ordlock_mode_name(held), ordlock_mode_name(want), ret);
		ordlock_release_all(tester);
		return;
	}
	ok(ret == -EAGAIN && f->reason == ORDLOCK_REASON_BUSY &&
	   olt_key_eq(&f->key, 1, 1, want) && (pid_t)f->pid == h->pid &&
	   olt_nheld(tester) == 0,
	   "try: %s held %s, try %s: EAGAIN, busy, naming the holder, nothing taken (%d, %s, pid %u)",
	   why, ordlock_mode_name(held), ordlock_mode_name(want), ret,
	   ordlock_reason_name(f->reason), f->pid);
	(void)d;
}

static void test_ltp_try(void)
{
	static const unsigned int modes[2] = { SH, EX };
	struct ordlock_key two[2] = { ORDLOCK_EX(1, 5), ORDLOCK_EX(1, 1) };
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *h, *w;
	int i, j, ret;

	gt_new_domain(d, "hs-try", ORDLOCK_POLICY_ENFORCE, 0);
	is_int(ordlock_set_domain(tester, d), 0, "try: the tester joins the domain");
	h = gt_actor_start("try-h", d, 1);
	for (i = 0; i < 2; i++) {
		is_int(gt_call1(h, GT_OP_ACQUIRE, 0, 1, 1, modes[i], LONG_MS, 0), 0,
		       "try: H holds 1:1 %s", ordlock_mode_name(modes[i]));
		for (j = 0; j < 2; j++)
			try_cell(d, h, modes[i], modes[j],
				 !(modes[i] == SH && modes[j] == SH), "another owner");
		ret = ordlock_try_acquire(tester, two, 2, NULL);
		ok(ret == -EAGAIN && olt_nheld(tester) == 0 && olt_probe(d, 1, 5, EX) == 0,
		   "try: 1:5 free and 1:1 held %s: a try of both fails and takes neither (%d)",
		   ordlock_mode_name(modes[i]), ret);
		release_all(h);
	}
	/* a writer queued behind a reader: a try never overtakes it */
	is_int(gt_call1(h, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0), 0,
	       "try: H holds 1:1 shared again");
	w = gt_actor_start("try-w", d, 1);
	gt_submit1(w, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(w, ACQ), 0, "try: W waits for 1:1 exclusive");
	for (j = 0; j < 2; j++) {
		struct ordlock_key k = ordlock_key(1, 1, modes[j]);
		const struct ordlock_failure *f = ordlock_last_failure(tester);

		ret = ordlock_try_acquire(tester, &k, 1, NULL);
		ok(ret == -EAGAIN && f->reason == ORDLOCK_REASON_BUSY &&
		   olt_nheld(tester) == 0,
		   "try: shared held, a writer queued, try %s: EAGAIN (%d)",
		   ordlock_mode_name(modes[j]), ret);
		diag("try %s: %s", ordlock_mode_name(modes[j]), olt_fail_str(f));
		if (modes[j] == EX)
			ok((pid_t)f->pid == h->pid && f->holder_mode == SH,
			   "try: exclusive: the record names the shared holder H (pid %u, %s)",
			   f->pid, ordlock_mode_name(f->holder_mode));
		else
			ok((pid_t)f->pid == w->pid && f->holder_mode == 0 &&
			   !strstr(olt_fail_str(f), "held") && strstr(olt_fail_str(f), "queued"),
			   "try: shared: only the queue blocks it: the record names W, queued (holder_mode 0: W holds nothing), and the text says queued, not held (pid %u, holder_mode %u)",
			   f->pid, f->holder_mode);
	}
	ok(waits(d, w, 1), "try: W still waits, first in the queue");
	release_all(h);
	ok(granted(w), "try: H lets go: W is granted");
	gt_actor_stop(w);
	gt_actor_stop(h);
	ordlock_set_domain(tester, NULL);
	gt_gauges_zero(d, "try");
}

/* ------------------------------------------------------------------ */
/* LTP: released on close and on SIGKILL, FIFO                         */

static void test_ltp_close(void)
{
	static const unsigned int modes[4] = { EX, SH, SH, EX };
	char d[ORDLOCK_DOMAIN_NAME_MAX], comm[16];
	struct gt_actor *h, *w[4];
	int i, good = 1;

	gt_new_domain(d, "hs-close", ORDLOCK_POLICY_ENFORCE, 0);
	h = gt_actor_start("close-h", d, 1);
	is_int(gt_call1(h, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "close: H holds 1:1 exclusive");
	for (i = 0; i < 4; i++) {
		snprintf(comm, sizeof(comm), "close-w%d", i);
		w[i] = gt_actor_start(comm, d, 1);
		gt_submit1(w[i], GT_OP_ACQUIRE, 0, 1, 1, modes[i], LONG_MS, 0);
		good &= !gt_blocked(w[i], ACQ);
	}
	ok(good, "close: W0 exclusive, W1 shared, W2 shared, W3 exclusive queue in turn");
	is_int(gt_call(h, GT_OP_CLOSE, 0, NULL, 0, 0, 0), 0, "close: H closes its descriptor");
	ok(granted(w[0]), "close: W0 is granted");
	ok(waits(d, w[1], 1) && waits(d, w[2], 1) && waits(d, w[3], 1),
	   "close: W1, W2, W3 still wait");
	is_int(gt_call(w[0], GT_OP_CLOSE, 0, NULL, 0, 0, 0), 0, "close: W0 closes");
	ok(granted(w[1]) && granted(w[2]), "close: W1 and W2 are granted together");
	is_int(nholders(d, 1, SH), 2, "close: two shared holders");
	ok(waits(d, w[3], 1), "close: W3 still waits");
	gt_call(w[1], GT_OP_CLOSE, 0, NULL, 0, 0, 0);
	ok(waits(d, w[3], 1), "close: W1 closed, W3 waits for W2");
	gt_call(w[2], GT_OP_CLOSE, 0, NULL, 0, 0, 0);
	ok(granted(w[3]), "close: W2 closed: W3 is granted");
	gt_actor_stop(h);
	for (i = 0; i < 4; i++)
		gt_actor_stop(w[i]);
	gt_gauges_zero(d, "close");
}

struct fork_share {
	struct pbarrier *ready;
};

static int sharer_main(void *arg)
{
	struct fork_share *fs = arg;

	pbarrier_wait(fs->ready);
	pause();	/* until killed */
	return 0;
}

static void test_ltp_kill(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct fork_share *fs;
	struct olt_holder *h;
	struct gt_actor *w1, *w2;
	struct ordlock *ol;
	pid_t child;
	int st, fd;

	gt_new_domain(d, "hs-kill", ORDLOCK_POLICY_DETECT, 0);
	h = olt_holder_start(d, &k, 1);
	is_int(h->result, 0, "kill: a holder process holds 1:1");
	w1 = gt_actor_start("kill-w1", d, 1);
	w2 = gt_actor_start("kill-w2", d, 1);
	gt_submit1(w1, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(w1, ACQ), 0, "kill: W1 waits for 1:1");
	gt_submit1(w2, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(w2, ACQ), 0, "kill: W2 waits behind W1");
	st = olt_holder_kill(h, SIGKILL);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "kill: the holder dies of SIGKILL");
	ok(granted(w1), "kill: W1, first in line, is granted");
	ok(waits(d, w2, 1), "kill: W2 still waits");
	is_int(release_all(w1), 0, "kill: W1 lets go");
	ok(granted(w2), "kill: W2 is granted");
	release_all(w2);

	/* a descriptor shared with a forked child: the last reference counts */
	fs = shm_alloc(sizeof(*fs));
	fs->ready = pbarrier_new(2);
	ol = olt_open(d);
	k = ORDLOCK_EX(1, 2);
	is_int(ordlock_acquire(ol, &k, 1, LONG_MS, 0, NULL), 0,
	       "kill: the tester holds 1:2 through a new descriptor");
	child = child_start(sharer_main, fs);
	is_int(pbarrier_wait(fs->ready), 0, "kill: a forked child shares the descriptor");
	gt_submit1(w1, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(w1, ACQ), 0, "kill: W1 waits for 1:2");
	fd = ordlock_fd(ol);
	ordlock_detach(ol);
	is_int(close(fd), 0, "kill: the tester closes its descriptor");
	ok(waits(d, w1, 2), "kill: the child's reference keeps 1:2 held: W1 waits");
	st = child_kill(child, SIGKILL);
	ok(WIFSIGNALED(st), "kill: the child is killed");
	ok(granted(w1), "kill: the last reference gone, W1 is granted 1:2");
	pbarrier_free(fs->ready);
	shm_free(fs, sizeof(*fs));
	gt_actor_stop(w1);
	gt_actor_stop(w2);
	gt_gauges_zero(d, "kill");
}

/* ------------------------------------------------------------------ */
/* LTP: invalid input changes nothing                                  */

struct big_acquire {
	struct ordlock_acquire a;
	uint64_t extra[4];
};

static int raw_acquire(struct ordlock_acquire *a, unsigned int size,
		       const struct ordlock_key *keys, unsigned int n)
{
	a->size = size;
	a->nkeys = n;
	a->keys = (uintptr_t)keys;
	a->timeout_ns = 100000000ULL;
	return ioctl(ordlock_fd(tester), ACQ, a);
}

static void test_ltp_invalid(void)
{
	static unsigned char page[8192];
	struct ordlock_key k = ORDLOCK_EX(5, 2), bad;
	struct ordlock_key held = ORDLOCK_EX(5, 1);
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct big_acquire big;
	struct ordlock_acquire a;
	struct ordlock_key *many;
	long max;
	struct ordlock_owner_info info;
	uint64_t last0;
	int ret, i, unchanged = 1;

	gt_new_domain(d, "hs-inval", ORDLOCK_POLICY_ENFORCE, 0);
	is_int(ordlock_set_domain(tester, d), 0, "invalid: the tester joins the domain");
	is_int(ordlock_acquire(tester, &held, 1, LONG_MS, 0, NULL), 0,
	       "invalid: the tester holds 5:1");
	ordlock_owner_info(tester, &info);
	last0 = info.last_token;

#define CHECK_UNCHANGED(what)						\
	do {								\
		if (olt_nheld(tester) != 1 || olt_probe(d, 5, 2, EX) ||	\
		    olt_probe(d, 5, 1, SH) != -EAGAIN) {		\
			diag("invalid: %s changed something", what);	\
			unchanged = 0;					\
		}							\
	} while (0)

	bad = k;
	bad.mode = 0;
	memset(&a, 0, sizeof(a));
	ret = raw_acquire(&a, sizeof(a), &bad, 1);
	ok(ret < 0 && errno == EINVAL && a.failure.reason == ORDLOCK_REASON_INVALID,
	   "invalid: mode 0: EINVAL, reason invalid (%d, %s)", ret, strerror(errno));
	CHECK_UNCHANGED("mode 0");
	bad.mode = 3;
	memset(&a, 0, sizeof(a));
	is_errno(raw_acquire(&a, sizeof(a), &bad, 1), EINVAL, "invalid: mode 3: EINVAL");
	CHECK_UNCHANGED("mode 3");
	bad = k;
	bad.__reserved = 1;
	memset(&a, 0, sizeof(a));
	is_errno(raw_acquire(&a, sizeof(a), &bad, 1), EINVAL,
		 "invalid: key.__reserved non-zero: EINVAL");
	CHECK_UNCHANGED("key reserved");
	memset(&a, 0, sizeof(a));
	a.__reserved2 = 1;
	is_errno(raw_acquire(&a, sizeof(a), &k, 1), EINVAL,
		 "invalid: __reserved2 non-zero: EINVAL");
	CHECK_UNCHANGED("reserved2");
	memset(&a, 0, sizeof(a));
	a.flags = 1U << 7;
	is_errno(raw_acquire(&a, sizeof(a), &k, 1), EINVAL, "invalid: unknown flag: EINVAL");
	CHECK_UNCHANGED("flag");
	memset(&a, 0, sizeof(a));
	is_errno(raw_acquire(&a, 8, &k, 1), EINVAL, "invalid: size 8: EINVAL");
	CHECK_UNCHANGED("size 8");
	memset(&a, 0, sizeof(a));
	is_errno(raw_acquire(&a, offsetof(struct ordlock_acquire, failure), &k, 1), EINVAL,
		 "invalid: size short of the first published one: EINVAL");
	CHECK_UNCHANGED("short size");
	memset(&big, 0, sizeof(big));
	big.extra[1] = 1;
	is_errno(raw_acquire(&big.a, sizeof(big), &k, 1), E2BIG,
		 "invalid: a larger size with non-zero bytes past the structure: E2BIG");
	CHECK_UNCHANGED("trailing bytes");
	memset(page, 0, sizeof(page));
	is_errno(raw_acquire((struct ordlock_acquire *)page, 4097, &k, 1), E2BIG,
		 "invalid: a size above a page: E2BIG");
	CHECK_UNCHANGED("size above a page");
	memset(&a, 0, sizeof(a));
	ret = raw_acquire(&a, sizeof(a), &k, 0);
	ok(ret < 0 && errno == EINVAL && a.failure.reason == ORDLOCK_REASON_INVALID,
	   "invalid: nkeys 0: EINVAL, reason invalid (%d, %s)", ret, strerror(errno));
	CHECK_UNCHANGED("nkeys 0");
	max = olt_param_get("max_keys_per_request");
	many = calloc((size_t)(max > 0 ? max : 0) + 1, sizeof(*many));
	if (max <= 0 || !many)
		bail_out("max_keys_per_request %ld", max);
	for (i = 0; i <= max; i++)
		many[i] = ORDLOCK_EX(6, (uint64_t)i);
	memset(&a, 0, sizeof(a));
	ret = raw_acquire(&a, sizeof(a), many, (unsigned int)max + 1);
	ok(ret < 0 && errno == E2BIG && a.failure.reason == ORDLOCK_REASON_INVALID,
	   "invalid: max_keys_per_request + 1 = %ld keys: E2BIG, reason invalid (%d, %s)",
	   max + 1, ret, strerror(errno));
	CHECK_UNCHANGED("too many keys");
	ok(olt_probe(d, 6, 0, EX) == 0 && olt_probe(d, 6, (uint64_t)max, EX) == 0,
	   "invalid: none of those keys was taken");
	ordlock_owner_info(tester, &info);
	ok(info.last_token == last0,
	   "invalid: the tester's last token is that of its one grant: no refused call granted");
	memset(&a, 0, sizeof(a));
	ret = raw_acquire(&a, sizeof(a), many, (unsigned int)max);
	ok(!ret && olt_nheld(tester) == 1 + max,
	   "invalid: exactly max_keys_per_request keys are granted (%d)", ret);
	ordlock_release(tester, many, (unsigned int)max);
	free(many);
	ok(unchanged, "invalid: no refused call changed what is held or free");
	memset(&big, 0, sizeof(big));
	ok(!raw_acquire(&big.a, sizeof(big), &k, 1) && olt_nheld(tester) == 2,
	   "invalid: a larger size with zero bytes past the structure is accepted");
	ok(ordlock_release(tester, &bad, 1) == -EINVAL && olt_nheld(tester) == 2,
	   "invalid: a release naming a key with __reserved set: EINVAL, nothing released");
	{
		struct ordlock_key rel[2] = { ORDLOCK_EX(5, 2), ORDLOCK_EX(5, 3) };

		ret = ordlock_release(tester, rel, 2);
		ok(ret == -ENOENT && olt_key_eq(&ordlock_last_failure(tester)->key, 5, 3, 0) &&
		   olt_nheld(tester) == 2,
		   "invalid: a release of a held and a free key: ENOENT naming 5:3, nothing released (%d)",
		   ret);
	}
	{
		struct ordlock_release rl;

		memset(&rl, 0, sizeof(rl));
		rl.size = sizeof(rl);
		rl.flags = ORDLOCK_RELEASE_ALL;
		rl.nkeys = 1;
		rl.keys = (uintptr_t)&k;
		ret = ioctl(ordlock_fd(tester), ORDLOCK_IOC_RELEASE, &rl);
		ok(ret < 0 && errno == EINVAL && olt_nheld(tester) == 2,
		   "invalid: RELEASE_ALL with nkeys 1: EINVAL, nothing released (%d)", ret);
		memset(&rl, 0, sizeof(rl));
		rl.size = sizeof(rl);
		rl.flags = 1U << 9;
		ret = ioctl(ordlock_fd(tester), ORDLOCK_IOC_RELEASE, &rl);
		ok(ret < 0 && errno == EINVAL && olt_nheld(tester) == 2,
		   "invalid: release with an unknown flag: EINVAL, nothing released (%d)", ret);
	}
	ordlock_release_all(tester);
	ordlock_set_domain(tester, NULL);
	gt_gauges_zero(d, "invalid");
#undef CHECK_UNCHANGED
}

/* ------------------------------------------------------------------ */
/* DLM: conversions                                                    */

static void test_dlm_ahead(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b, *c, *e;
	int ret;

	gt_new_domain(d, "hs-dlma", ORDLOCK_POLICY_ENFORCE, 0);
	a = gt_actor_start("dlma-a", d, 1);
	b = gt_actor_start("dlma-b", d, 1);
	c = gt_actor_start("dlma-c", d, 1);
	e = gt_actor_start("dlma-e", d, 1);
	/* the sole holder: its upgrade goes past the queue at once */
	is_int(gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0), 0,
	       "dlm ahead: A holds 1:1 shared");
	gt_submit1(c, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(c, ACQ), 0, "dlm ahead: C waits for 1:1 exclusive");
	ret = gt_call1(a, GT_OP_CONVERT, 0, 1, 1, EX, 5000, 0);
	ok(!ret && has_role(d, a->owner_id[0], 1, GT_HOLDER, EX),
	   "dlm ahead: the sole holder's upgrade is granted ahead of the queued C (%d)", ret);
	ok(waits(d, c, 1), "dlm ahead: C still waits");
	ret = gt_call1(a, GT_OP_CONVERT, 0, 1, 1, SH, LONG_MS, 0);
	is_int(ret, 0, "dlm ahead: A downgrades again");
	ok(waits(d, c, 1), "dlm ahead: C (exclusive) still waits for A's shared hold");

	release_all(a);
	ok(granted(c), "dlm ahead: A lets go: C is granted");
	release_all(c);
	/* two holders: the upgrade queues at the head, ahead of C and E */
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0),
	   "dlm ahead: A and B hold 1:1 shared");
	gt_submit1(c, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(c, ACQ), 0, "dlm ahead: C waits for 1:1 exclusive");
	gt_submit1(e, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(e, ACQ), 0, "dlm ahead: E waits for 1:1 shared, behind C");
	gt_submit1(a, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(a, CONV), 0, "dlm ahead: A's upgrade waits for B");
	ok(has_role(d, a->owner_id[0], 1, GT_CONVERTER, EX),
	   "dlm ahead: A is a converter");
	is_int(release_all(b), 0, "dlm ahead: B lets go");
	ok(granted(a), "dlm ahead: A's upgrade is granted before C and E");
	ok(waits(d, c, 1) && waits(d, e, 1), "dlm ahead: C and E still wait");
	release_all(a);
	ok(granted(c), "dlm ahead: C, then");
	ok(waits(d, e, 1), "dlm ahead: E waits for C");
	release_all(c);
	ok(granted(e), "dlm ahead: then E");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_actor_stop(c);
	gt_actor_stop(e);
	gt_gauges_zero(d, "dlm ahead");
}

static void test_dlm_downgrade(void)
{
	static const unsigned int modes[4] = { SH, SH, EX, SH };
	char d[ORDLOCK_DOMAIN_NAME_MAX], comm[16];
	struct gt_actor *a, *w[4];
	uint64_t ta;
	int i, good = 1, ret;

	gt_new_domain(d, "hs-dlmd", ORDLOCK_POLICY_DETECT, 0);
	a = gt_actor_start("dlmd-a", d, 1);
	is_int(gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "dlm downgrade: A holds 1:1 exclusive");
	ta = a->res->token;
	for (i = 0; i < 4; i++) {
		snprintf(comm, sizeof(comm), "dlmd-w%d", i);
		w[i] = gt_actor_start(comm, d, 1);
		gt_submit1(w[i], GT_OP_ACQUIRE, 0, 1, 1, modes[i], LONG_MS, 0);
		good &= !gt_blocked(w[i], ACQ);
	}
	ok(good, "dlm downgrade: R0 shared, R1 shared, W2 exclusive, R3 shared queue");
	ret = gt_call1(a, GT_OP_CONVERT, 0, 1, 1, SH, LONG_MS, 0);
	ok(!ret && a->res->token == ta, "dlm downgrade: A downgrades, keeping its token (%d)", ret);
	ok(granted(w[0]) && granted(w[1]), "dlm downgrade: R0 and R1 are granted at once");
	is_int(nholders(d, 1, SH), 3, "dlm downgrade: A, R0, R1 hold shared");
	ok(waits(d, w[2], 1) && waits(d, w[3], 1),
	   "dlm downgrade: W2 waits, and R3 behind it");
	release_all(a);
	release_all(w[0]);
	ok(waits(d, w[2], 1), "dlm downgrade: W2 waits for R1");
	release_all(w[1]);
	ok(granted(w[2]), "dlm downgrade: W2 is granted");
	ok(waits(d, w[3], 1), "dlm downgrade: R3 waits for W2");
	release_all(w[2]);
	ok(granted(w[3]), "dlm downgrade: R3 is granted");
	gt_actor_stop(a);
	for (i = 0; i < 4; i++)
		gt_actor_stop(w[i]);
	gt_gauges_zero(d, "dlm downgrade");
}

static void test_dlm_upgrade_timeout(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b, *c;
	const struct gt_result *r;
	int ret;

	gt_new_domain(d, "hs-dlmt", ORDLOCK_POLICY_DETECT, 0);
	a = gt_actor_start("dlmt-a", d, 1);
	b = gt_actor_start("dlmt-b", d, 1);
	c = gt_actor_start("dlmt-c", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0),
	   "dlm timeout: A and B hold 1:1 shared");
	gt_submit1(a, GT_OP_CONVERT, 0, 1, 1, EX, 6000, 0);
	is_int(gt_blocked(a, CONV), 0, "dlm timeout: A's upgrade (6 s) waits for B");
	gt_submit1(c, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(c, ACQ), 0, "dlm timeout: C's shared request queues behind it");
	ok(gt_collect(a, 0) == -ETIMEDOUT && waits(d, c, 1),
	   "dlm timeout: both wait, A's upgrade still queued");
	ret = gt_collect(a, LONG_MS);
	r = a->res;
	ok(!ret && r->ret == -ETIMEDOUT && r->failure.reason == ORDLOCK_REASON_TIMEOUT &&
	   (pid_t)r->failure.pid == b->pid,
	   "dlm timeout: the upgrade times out, naming B (%d, %s)", r->ret,
	   ordlock_reason_name(r->failure.reason));
	ok(r->nheld == 1 && has_role(d, a->owner_id[0], 1, GT_HOLDER, SH) &&
	   !has_role(d, a->owner_id[0], 1, GT_CONVERTER, 0),
	   "dlm timeout: A still holds 1:1 shared, no conversion left queued");
	ok(granted(c), "dlm timeout: C, queued behind the upgrade, is granted at once");
	is_int(nholders(d, 1, SH), 3, "dlm timeout: A, B, C hold shared");
	ok(gt_call1(b, GT_OP_CONVERT, 0, 1, 1, EX, 0, ORDLOCK_ACQUIRE_TRY) == -EAGAIN &&
	   b->res->nheld == 1,
	   "dlm timeout: B's try-upgrade meets A and C: EAGAIN");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_actor_stop(c);
	gt_gauges_zero(d, "dlm timeout");
}

static void test_dlm_upgrade_deadlock(unsigned int policy)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], what[32];
	struct gt_actor *a, *b, *c;
	int rb, rc;

	snprintf(what, sizeof(what), "dlm upgrade (%s)", ordlock_policy_name(policy));
	gt_new_domain(d, "hs-dlmu", policy, 0);
	a = gt_actor_start("dlmu-a", d, 1);
	b = gt_actor_start("dlmu-b", d, 1);
	c = gt_actor_start("dlmu-c", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0) &&
	   !gt_call1(c, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0),
	   "%s: A, B, C hold 1:1 shared", what);
	gt_submit1(a, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(a, CONV), 0, "%s: A's upgrade waits", what);
	rb = gt_call1(b, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
	ok(rb == -EDEADLK && b->res->failure.reason == ORDLOCK_REASON_UPGRADE &&
	   (pid_t)b->res->failure.pid == a->pid && b->res->elapsed_ms < LONG_MS / 2,
	   "%s: B's upgrade: EDEADLK at once, reason upgrade, naming A (%d, %s)", what,
	   rb, ordlock_reason_name(b->res->failure.reason));
	rc = gt_call1(c, GT_OP_CONVERT, 0, 1, 1, EX, 0, ORDLOCK_ACQUIRE_TRY);
	ok(rc == -EDEADLK && c->res->failure.reason == ORDLOCK_REASON_UPGRADE,
	   "%s: C's try-upgrade: EDEADLK, reason upgrade (%d, %s)", what, rc,
	   ordlock_reason_name(c->res->failure.reason));
	ok(has_role(d, b->owner_id[0], 1, GT_HOLDER, SH) &&
	   has_role(d, c->owner_id[0], 1, GT_HOLDER, SH) &&
	   has_role(d, a->owner_id[0], 1, GT_CONVERTER, EX),
	   "%s: B and C still hold shared, A still converts", what);
	release_all(b);
	ok(gt_collect(a, 0) == -ETIMEDOUT, "%s: A waits for C", what);
	release_all(c);
	ok(granted(a) && has_role(d, a->owner_id[0], 1, GT_HOLDER, EX),
	   "%s: B and C let go: A holds 1:1 exclusive", what);
	is_int(gt_stat_of(d, "upgrade_deadlocks"), 2, "%s: two upgrade deadlocks counted", what);
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_actor_stop(c);
	gt_gauges_zero(d, what);
}

struct converter {
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct pbarrier *held;
};

/* Holds 1:1 shared, then upgrades it (and waits, until killed) */
static int converter_main(void *arg)
{
	struct converter *cv = arg;
	struct ordlock_key k = ORDLOCK_SH(1, 1);
	struct ordlock *ol = ordlock_open(cv->d);

	if (!ol || ordlock_acquire(ol, &k, 1, LONG_MS, 0, NULL))
		return 1;
	if (pbarrier_wait(cv->held))
		return 2;
	ordlock_convert(ol, ORDLOCK_EX(1, 1), LONG_MS, 0, NULL);
	return 3;
}

/* A holder killed while its upgrade waits: what queued behind goes in */
static void test_dlm_converter_killed(void)
{
	struct converter *cv = shm_alloc(sizeof(*cv));
	struct gt_actor *b, *c;
	pid_t pid;
	int st;

	gt_new_domain(cv->d, "hs-dlmk", ORDLOCK_POLICY_DETECT, 0);
	cv->held = pbarrier_new(2);
	b = gt_actor_start("dlmk-b", cv->d, 1);
	c = gt_actor_start("dlmk-c", cv->d, 1);
	is_int(gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0), 0,
	       "converter killed: B holds 1:1 shared");
	pid = child_start(converter_main, cv);
	is_int(pbarrier_wait(cv->held), 0, "converter killed: A holds 1:1 shared");
	is_int(wait_blocked_ioctl(pid, CONV, 0), 0, "converter killed: A's upgrade waits for B");
	gt_submit1(c, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(c, ACQ), 0, "converter killed: C's shared request queues behind it");
	st = child_kill(pid, SIGKILL);
	ok(WIFSIGNALED(st), "converter killed: A is killed while it upgrades");
	ok(granted(c), "converter killed: C is granted at once, B still holding");
	is_int(nholders(cv->d, 1, SH), 2, "converter killed: B and C hold 1:1 shared");
	gt_actor_stop(b);
	gt_actor_stop(c);
	pbarrier_free(cv->held);
	gt_gauges_zero(cv->d, "converter killed");
	shm_free(cv, sizeof(*cv));
}

static void test_dlm_not_held(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	int ret;

	gt_new_domain(d, "hs-dlmn", ORDLOCK_POLICY_ENFORCE, 0);
	a = gt_actor_start("dlmn-a", d, 1);
	b = gt_actor_start("dlmn-b", d, 1);
	is_int(gt_call1(b, GT_OP_ACQUIRE, 0, 1, 9, SH, LONG_MS, 0), 0,
	       "not held: B holds 1:9 shared");
	ret = gt_call1(a, GT_OP_CONVERT, 0, 1, 9, EX, LONG_MS, 0);
	ok(ret == -ENOENT && a->res->failure.reason == ORDLOCK_REASON_NOT_HELD &&
	   olt_key_eq(&a->res->failure.key, 1, 9, EX) && a->res->elapsed_ms < LONG_MS / 2,
	   "not held: A converts B's 1:9: ENOENT at once, reason not held (%d, %s)",
	   ret, ordlock_reason_name(a->res->failure.reason));
	ret = gt_call1(a, GT_OP_CONVERT, 0, 1, 8, SH, LONG_MS, 0);
	ok(ret == -ENOENT && a->res->failure.reason == ORDLOCK_REASON_NOT_HELD,
	   "not held: A downgrades 1:8, which nobody holds: ENOENT (%d)", ret);
	ok(a->res->nheld == 0 && nholders(d, 9, SH) == 1 &&
	   !has_role(d, a->owner_id[0], 9, GT_CONVERTER, 0) &&
	   !has_role(d, a->owner_id[0], 9, GT_WAITER, 0),
	   "not held: A holds and waits for nothing, B's hold unchanged");
	is_int(olt_probe(d, 1, 9, SH), 0, "not held: 1:9 is still shared and free of queue");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_gauges_zero(d, "not held");
}

/* ------------------------------------------------------------------ */
/* A fair read-write lock                                              */

static void test_rw_fair(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *r1, *r2, *r3, *w;
	int ret;

	gt_new_domain(d, "hs-rw", ORDLOCK_POLICY_ENFORCE, 0);
	r1 = gt_actor_start("rw-r1", d, 1);
	r2 = gt_actor_start("rw-r2", d, 1);
	r3 = gt_actor_start("rw-r3", d, 1);
	w = gt_actor_start("rw-w", d, 1);
	is_int(gt_call1(r1, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0), 0,
	       "rw: reader R1 holds the lock");
	gt_submit1(w, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(w, ACQ), 0, "rw: writer W queues");
	is_int(gt_call1(r2, GT_OP_ACQUIRE, 0, 1, 1, SH, 200, 0), -ETIMEDOUT,
	       "rw: a later reader R2 with a short timeout does not overtake W: it times out");
	ok((pid_t)r2->res->failure.pid == w->pid && r2->res->failure.holder_mode == 0,
	   "rw: its record names W, queued ahead, holding nothing (pid %u, holder_mode %u)",
	   r2->res->failure.pid, r2->res->failure.holder_mode);
	diag("rw: %s", olt_fail_str(&r2->res->failure));
	gt_submit1(r2, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(r2, ACQ), 0, "rw: a later reader R2 does not overtake W: it waits");
	is_int(nholders(d, 1, 0), 1, "rw: R1 is still the only holder");
	is_int(olt_probe(d, 1, 1, SH), -EAGAIN,
	       "rw: a reader's try-lock does not barge either");
	ret = gt_call1(r1, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	ok(ret == -EDEADLK && r1->res->failure.reason == ORDLOCK_REASON_ORDER &&
	   olt_key_eq(&r1->res->failure.held, 1, 1, SH) && r1->res->nheld == 1 &&
	   r1->res->elapsed_ms < LONG_MS / 2,
	   "rw: R1 asking its read lock again (no reentrancy) fails at once: EDEADLK, reason order, naming the held key (%d, %s)",
	   ret, ordlock_reason_name(r1->res->failure.reason));
	gt_submit1(r3, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(r3, ACQ), 0, "rw: R3 queues behind R2");
	release_all(r1);
	ok(granted(w), "rw: R1 lets go: W is granted");
	ok(waits(d, r2, 1) && waits(d, r3, 1), "rw: R2 and R3 wait for W");
	release_all(w);
	ok(granted(r2) && granted(r3), "rw: W lets go: R2 and R3 are granted");
	is_int(nholders(d, 1, SH), 2, "rw: together (two shared holders)");
	gt_actor_stop(r1);
	gt_actor_stop(r2);
	gt_actor_stop(r3);
	gt_actor_stop(w);
	gt_gauges_zero(d, "rw");
}

struct writer {
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	int ret;
	unsigned int reason;
};

static void on_usr1(int sig)
{
	(void)sig;
}

/* A writer that waits for 1:1; SIGUSR1 (no SA_RESTART) interrupts it */
static int writer_main(void *arg)
{
	struct writer *wr = arg;
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct sigaction sa;
	struct ordlock *ol;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	ol = ordlock_open(wr->d);
	if (!ol)
		return 1;
	wr->ret = ordlock_acquire(ol, &k, 1, LONG_MS, 0, NULL);
	wr->reason = ordlock_last_failure(ol)->reason;
	return olt_nheld(ol) == 0 ? 0 : 3;
}

/* A queued writer gives up: @how 0 its timeout, 1 SIGKILL, 2 a signal */
static void test_rw_writer_leaves(int how)
{
	static const char *const whats[] = {
		"rw writer timeout", "rw writer killed", "rw writer interrupted",
	};
	const char *what = whats[how];
	int sig = how != 0;
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *r1, *r2, *w = NULL;
	struct writer *wr = shm_alloc(sizeof(*wr));
	pid_t wpid = 0;
	int st, ret;

	gt_new_domain(d, "hs-rwl", ORDLOCK_POLICY_DETECT, 0);
	snprintf(wr->d, sizeof(wr->d), "%s", d);
	r1 = gt_actor_start("rwl-r1", d, 1);
	r2 = gt_actor_start("rwl-r2", d, 1);
	is_int(gt_call1(r1, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0), 0,
	       "%s: R1 holds the lock shared", what);
	if (sig) {
		wpid = child_start(writer_main, wr);
		is_int(wait_blocked_ioctl(wpid, ACQ, 0), 0, "%s: writer W queues", what);
	} else {
		w = gt_actor_start("rwl-w", d, 1);
		gt_submit1(w, GT_OP_ACQUIRE, 0, 1, 1, EX, 6000, 0);
		is_int(gt_blocked(w, ACQ), 0, "%s: writer W queues (for 6 s)", what);
	}
	gt_submit1(r2, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(r2, ACQ), 0, "%s: reader R2 queues behind W", what);
	if (how == 1) {
		st = child_kill(wpid, SIGKILL);
		ok(WIFSIGNALED(st), "%s: W is killed while it waits", what);
	} else if (how == 2) {
		kill(wpid, SIGUSR1);
		st = child_wait(wpid, 0);
		ok(!st && wr->ret == -EINTR && wr->reason == ORDLOCK_REASON_SIGNAL,
		   "%s: W's wait ends with EINTR, reason signal, holding nothing (%d, %d)",
		   what, st, wr->ret);
	} else {
		ok(gt_collect(w, 0) == -ETIMEDOUT,
		   "%s: W was still queued when R2 came", what);
		ret = gt_collect(w, LONG_MS);
		ok(!ret && w->res->ret == -ETIMEDOUT, "%s: W's wait times out (%d)",
		   what, w->res->ret);
	}
	ok(granted(r2), "%s: R2 is granted at once, R1 still holding", what);
	is_int(nholders(d, 1, SH), 2, "%s: R1 and R2 hold shared", what);
	gt_actor_stop(r1);
	gt_actor_stop(r2);
	if (w)
		gt_actor_stop(w);
	shm_free(wr, sizeof(*wr));
	gt_gauges_zero(d, what);
}

int main(void)
{
	watchdog_start(300);
	tester = olt_open(NULL);
	test_pg_simple();
	test_pg_hard(0);
	test_pg_hard(300);
	test_pg_soft(1);
	test_pg_soft(0);
	test_pg_soft_nl();
	test_pg_soft2(1);
	test_pg_soft2(0);
	test_pg_multikey();
	test_convert_soft();
	test_ltp_three(ORDLOCK_POLICY_DETECT);
	test_ltp_three(ORDLOCK_POLICY_ENFORCE);
	test_ltp_try();
	test_ltp_close();
	test_ltp_kill();
	test_ltp_invalid();
	test_dlm_ahead();
	test_dlm_downgrade();
	test_dlm_upgrade_timeout();
	test_dlm_upgrade_deadlock(ORDLOCK_POLICY_ENFORCE);
	test_dlm_upgrade_deadlock(ORDLOCK_POLICY_DETECT);
	test_dlm_upgrade_deadlock(ORDLOCK_POLICY_TIMEOUT);
	test_dlm_converter_killed();
	test_dlm_not_held();
	test_rw_fair();
	test_rw_writer_leaves(1);
	test_rw_writer_leaves(2);
	test_rw_writer_leaves(0);
	ordlock_close(tester);
	ok(olt_stats_resources() == 0, "no resource in use at the end (%ld)",
	   olt_stats_resources());
	return tap_done();
}
