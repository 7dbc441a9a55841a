// SPDX-License-Identifier: GPL-2.0
/*
 * t_reorder: ORDLOCK_ACQUIRE_REORDER, seed 004's "a lock discovered late
 * that sorts earlier: roll back, re-check and re-acquire in order".
 *
 * The webhook of the seed holds inventory 30 (rank 2) and then needs order
 * 10 (rank 1):
 *  - order 10 free: granted in place, inventory 30 keeps its token, no
 *    RELEASED flag;
 *  - order 10 held by the batch: the webhook lets inventory 30 go (another
 *    owner can take it meanwhile), waits for order 10 holding nothing above
 *    it (asserted in debugfs "locks" and "graph" while it sleeps), and gets
 *    both with a new token and the RELEASED flag;
 *  - the same wait timing out: the failure says RELEASED, names inventory
 *    30 as let go, and the webhook keeps only what sorts below order 10;
 *  - the rest: a busy key above the held ones waits without letting
 *    anything go; TRY never lets go; a held key is refused; strict ranks;
 *    a convert refuses the flag; the netlink request says RELEASED in its
 *    QUEUED reply and in its RESULT.
 *
 * Interleavings are forced: the other owners hold their keys before the
 * webhook asks, and the test waits until the webhook sleeps in the kernel.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
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
#define REORDER ORDLOCK_ACQUIRE_REORDER

/* seed 004: the order key is (rank of the kind, id) */
#define ORDERS		1
#define INVENTORIES	2

#define LONG_MS		30000

/* The holder entry of (@rank, @id) in @domain's lock table, or NULL */
static const struct gt_lock *holder_of(const struct gt_lock *l, int n,
				       uint32_t rank, uint64_t id)
{
	int i;

	for (i = 0; i < n; i++)
		if (l[i].rank == rank && l[i].id == id && l[i].role == GT_HOLDER)
			return &l[i];
	return NULL;
}

/* The token with which @owner holds (@rank, @id), 0 if it does not */
static uint64_t held_token(const char *domain, uint64_t owner, uint32_t rank,
			   uint64_t id)
{
	struct gt_lock l[32];
	const struct gt_lock *h;
	int n = gt_locks_read(domain, l, 32);

	h = n > 0 ? holder_of(l, n < 32 ? n : 32, rank, id) : NULL;
	return h && h->owner_id == owner ? h->value : 0;
}

/*
 * While @owner waits for (@rank, @id): it holds no key that sorts at or
 * above it, and the graph says whom it waits for
 */
static void assert_waits_holding_nothing_above(const char *domain, uint64_t owner,
					       uint32_t rank, uint64_t id,
					       uint64_t blocker, const char *what)
{
	struct gt_lock l[32];
	struct gt_edge e[8];
	int n, i, waits = 0, above = 0, edges = 0;

	n = gt_locks_read(domain, l, 32);
	ok(n > 0 && n <= 32, "%s: the lock table reads (%d entries)", what, n);
	for (i = 0; i < n && i < 32; i++) {
		if (l[i].owner_id != owner)
			continue;
		if (l[i].role == GT_WAITER && l[i].rank == rank && l[i].id == id)
			waits++;
		if (l[i].role == GT_HOLDER &&
		    (l[i].rank > rank || (l[i].rank == rank && l[i].id >= id))) {
			diag("holds %u:%llu while it waits for %u:%llu", l[i].rank,
			     (unsigned long long)l[i].id, rank, (unsigned long long)id);
			above++;
		}
	}
	is_int(waits, 1, "%s: it is queued for %u:%llu", what, rank,
	       (unsigned long long)id);
	is_int(above, 0, "%s: it holds no key at or above the one it waits for",
	       what);
	n = gt_graph_read(domain, e, 8);
	for (i = 0; i < n && i < 8; i++)
		if (e[i].waiter_id == owner && e[i].blocker_id == blocker &&
		    e[i].rank == rank && e[i].id == id)
			edges++;
	is_int(edges, 1, "%s: the graph has its edge to the holder", what);
}

static void test_in_place(const char *dom)
{
	struct gt_actor *w = gt_actor_start("webhook", dom, 1);
	uint64_t t_inv, id = w->owner_id[0];

	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, INVENTORIES, 30, EX, LONG_MS, 0), 0,
	       "in place: the webhook holds inventory 30");
	t_inv = w->res->token;
	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, ORDERS, 10, EX, LONG_MS, 0), -EDEADLK,
	       "in place: without REORDER, order 10 is an order violation");
	is_int(w->res->failure.reason, ORDLOCK_REASON_ORDER, "in place: reason order");
	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, ORDERS, 10, EX, LONG_MS, REORDER), 0,
	       "in place: with REORDER, order 10 (free) is granted");
	is_int(w->res->result_flags, 0, "in place: nothing was let go");
	ok(w->res->token > t_inv, "in place: order 10 has a new token");
	is_int(w->res->nheld, 2, "in place: it holds both");
	ok(held_token(dom, id, INVENTORIES, 30) == t_inv,
	   "in place: inventory 30 keeps its first token");
	ok(held_token(dom, id, ORDERS, 10) == w->res->token,
	   "in place: order 10 is held with the new token");

	/* a key the owner holds is still refused, and nothing is let go */
	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, INVENTORIES, 30, SH, LONG_MS, REORDER),
	       -EDEADLK, "held key: asking for it again fails");
	is_int(w->res->failure.reason, ORDLOCK_REASON_ORDER, "held key: reason order");
	ok(olt_key_eq(&w->res->failure.held, INVENTORIES, 30, EX),
	   "held key: the record names it");
	is_int(w->res->result_flags, 0, "held key: nothing let go");
	is_int(w->res->nheld, 2, "held key: both still held");
	gt_actor_stop(w);
}

static void test_released_and_retaken(const char *dom)
{
	struct gt_actor *w = gt_actor_start("webhook", dom, 1);
	struct gt_actor *b = gt_actor_start("batch", dom, 1);
	struct gt_actor *c = gt_actor_start("api", dom, 1);
	uint64_t t_inv;
	int ret;

	is_int(gt_call1(b, GT_OP_ACQUIRE, 0, ORDERS, 10, EX, LONG_MS, 0), 0,
	       "wait: the batch holds order 10");
	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, INVENTORIES, 30, EX, LONG_MS, 0), 0,
	       "wait: the webhook holds inventory 30");
	t_inv = w->res->token;
	is_int(gt_submit1(w, GT_OP_ACQUIRE, 0, ORDERS, 10, EX, LONG_MS, REORDER), 0,
	       "wait: the webhook asks for order 10 with REORDER");
	is_int(gt_blocked(w, ACQ), 0, "wait: it sleeps in ACQUIRE");
	assert_waits_holding_nothing_above(dom, w->owner_id[0], ORDERS, 10,
					   b->owner_id[0], "wait");
	/* inventory 30 was really let go: another owner takes it meanwhile */
	is_int(gt_call1(c, GT_OP_ACQUIRE, 0, INVENTORIES, 30, EX, 0,
			ORDLOCK_ACQUIRE_TRY), 0,
	       "wait: another owner try-locks inventory 30 meanwhile");
	is_int(gt_call(c, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "wait: and gives it back");
	is_int(gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "wait: the batch releases order 10");
	ret = gt_collect(w, LONG_MS + GT_MARGIN_MS);
	is_int(ret, 0, "wait: the webhook's call returns");
	is_int(w->res->ret, 0, "wait: granted");
	is_int(w->res->result_flags, ORDLOCK_RESULT_RELEASED,
	       "wait: RESULT_RELEASED: what it read under inventory 30 is stale");
	ok(w->res->token > t_inv, "wait: a new token");
	is_int(w->res->nheld, 2, "wait: it holds both");
	ok(held_token(dom, w->owner_id[0], INVENTORIES, 30) == w->res->token,
	   "wait: inventory 30 is held again, with the new token");
	ok(held_token(dom, w->owner_id[0], ORDERS, 10) == w->res->token,
	   "wait: order 10 with the same token");
	gt_actor_stop(c);
	gt_actor_stop(b);
	gt_actor_stop(w);
}

static void test_timeout_after_release(const char *dom)
{
	struct ordlock_key two[2] = { ORDLOCK_EX(ORDERS, 5), ORDLOCK_EX(INVENTORIES, 30) };
	struct gt_actor *w = gt_actor_start("webhook", dom, 1);
	struct gt_actor *b = gt_actor_start("batch", dom, 1);
	const struct ordlock_failure *f;
	char buf[256];

	is_int(gt_call1(b, GT_OP_ACQUIRE, 0, ORDERS, 10, EX, LONG_MS, 0), 0,
	       "timeout: the batch holds order 10");
	is_int(gt_call(w, GT_OP_ACQUIRE, 0, two, 2, LONG_MS, 0), 0,
	       "timeout: the webhook holds order 5 and inventory 30");
	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, ORDERS, 10, EX, 300, REORDER),
	       -ETIMEDOUT, "timeout: REORDER of order 10 times out");
	f = &w->res->failure;
	is_int(f->reason, ORDLOCK_REASON_TIMEOUT, "timeout: reason timeout");
	ok(olt_key_eq(&f->key, ORDERS, 10, EX), "timeout: the key waited for is order 10");
	is_int(w->res->result_flags, ORDLOCK_RESULT_RELEASED,
	       "timeout: the result says held keys were let go");
	ok(olt_key_eq(&f->held, INVENTORIES, 30, EX),
	   "timeout: failure.held names inventory 30, the lowest key let go");
	is_int(w->res->nheld, 1, "timeout: it keeps only order 5");
	ok(held_token(dom, w->owner_id[0], ORDERS, 5) != 0, "timeout: order 5 is still its");
	is_int(olt_probe(dom, INVENTORIES, 30, EX), 0, "timeout: inventory 30 is free");
	is_int(olt_probe(dom, ORDERS, 10, EX), -EAGAIN, "timeout: order 10 is the batch's");
	ordlock_strfailure(f, buf, sizeof(buf));
	ok(strstr(buf, "timed out waiting for exclusive 1:10") != NULL,
	   "timeout: strfailure \"%s\"", buf);
	gt_actor_stop(b);
	gt_actor_stop(w);
}

static void test_wait_above_keeps(const char *dom)
{
	struct ordlock_key req[2] = { ORDLOCK_EX(ORDERS, 10), ORDLOCK_EX(INVENTORIES, 40) };
	struct gt_actor *w = gt_actor_start("webhook", dom, 1);
	struct gt_actor *c = gt_actor_start("api", dom, 1);
	uint64_t t_inv;

	is_int(gt_call1(c, GT_OP_ACQUIRE, 0, INVENTORIES, 40, EX, LONG_MS, 0), 0,
	       "above: another owner holds inventory 40");
	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, INVENTORIES, 30, EX, LONG_MS, 0), 0,
	       "above: the webhook holds inventory 30");
	t_inv = w->res->token;
	is_int(gt_submit(w, GT_OP_ACQUIRE, 0, req, 2, LONG_MS, REORDER), 0,
	       "above: REORDER {order 10, inventory 40}");
	is_int(gt_blocked(w, ACQ), 0, "above: it waits (for inventory 40)");
	assert_waits_holding_nothing_above(dom, w->owner_id[0], INVENTORIES, 40,
					   c->owner_id[0], "above");
	ok(held_token(dom, w->owner_id[0], INVENTORIES, 30) == t_inv,
	   "above: inventory 30 was not let go (40 sorts above it)");
	is_int(gt_call(c, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "above: inventory 40 is released");
	is_int(gt_collect(w, LONG_MS + GT_MARGIN_MS), 0, "above: the call returns");
	is_int(w->res->ret, 0, "above: granted");
	is_int(w->res->result_flags, 0, "above: nothing was let go");
	is_int(w->res->nheld, 3, "above: three keys held");
	ok(held_token(dom, w->owner_id[0], INVENTORIES, 30) == t_inv,
	   "above: inventory 30 keeps its token");
	gt_actor_stop(c);
	gt_actor_stop(w);
}

static void test_try_never_lets_go(const char *dom)
{
	struct gt_actor *w = gt_actor_start("webhook", dom, 1);
	struct gt_actor *b = gt_actor_start("batch", dom, 1);

	is_int(gt_call1(b, GT_OP_ACQUIRE, 0, ORDERS, 10, EX, LONG_MS, 0), 0,
	       "try: the batch holds order 10");
	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, INVENTORIES, 30, EX, LONG_MS, 0), 0,
	       "try: the webhook holds inventory 30");
	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, ORDERS, 10, EX, 0,
			REORDER | ORDLOCK_ACQUIRE_TRY), -EAGAIN,
	       "try: REORDER|TRY of the busy order 10: EAGAIN");
	is_int(w->res->failure.reason, ORDLOCK_REASON_BUSY, "try: reason busy");
	is_int(w->res->result_flags, 0, "try: nothing let go");
	is_int(w->res->nheld, 1, "try: inventory 30 still held");
	gt_actor_stop(b);
	gt_actor_stop(w);
}

/* A domain with strict ranks: the same rank is "out of order" too */
static void test_strict(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *w, *b;
	struct ordlock *ol = olt_open(NULL);

	gt_new_domain(dom, "rostrict", ORDLOCK_POLICY_ENFORCE, 0);
	is_int(ordlock_set_strict(ol, dom, 1), 0, "strict: strict ranks on");
	ordlock_close(ol);
	w = gt_actor_start("webhook", dom, 1);
	b = gt_actor_start("batch", dom, 1);
	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, INVENTORIES, 30, EX, LONG_MS, 0), 0,
	       "strict: the webhook holds inventory 30");
	is_int(gt_call1(w, GT_OP_ACQUIRE, 0, INVENTORIES, 40, EX, LONG_MS, 0), -EDEADLK,
	       "strict: inventory 40 without REORDER is refused");
	is_int(w->res->failure.reason, ORDLOCK_REASON_STRICT, "strict: reason strict");
	is_int(gt_call1(b, GT_OP_ACQUIRE, 0, INVENTORIES, 40, EX, LONG_MS, 0), 0,
	       "strict: the batch holds inventory 40");
	is_int(gt_submit1(w, GT_OP_ACQUIRE, 0, INVENTORIES, 40, EX, LONG_MS, REORDER), 0,
	       "strict: REORDER of inventory 40");
	is_int(gt_blocked(w, ACQ), 0, "strict: it waits");
	/* the union {30, 40}: 30 retaken first, then the wait for 40 */
	assert_waits_holding_nothing_above(dom, w->owner_id[0], INVENTORIES, 40,
					   b->owner_id[0], "strict");
	is_int(gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "strict: the batch lets go");
	is_int(gt_collect(w, LONG_MS + GT_MARGIN_MS), 0, "strict: the call returns");
	is_int(w->res->ret, 0, "strict: granted");
	is_int(w->res->result_flags, ORDLOCK_RESULT_RELEASED, "strict: RELEASED");
	is_int(w->res->nheld, 2, "strict: both held");
	gt_actor_stop(b);
	gt_actor_stop(w);
}

static void test_convert_refuses(const char *dom)
{
	struct ordlock *ol = olt_open(dom);
	struct ordlock_key k = ORDLOCK_SH(ORDERS, 77);

	is_int(ordlock_acquire(ol, &k, 1, LONG_MS, 0, NULL), 0, "convert: hold 1:77 shared");
	k.mode = EX;
	is_errno(ordlock_convert(ol, k, LONG_MS, REORDER, NULL), EINVAL,
		 "convert: REORDER is not a flag of CONVERT");
	is_int(olt_nheld(ol), 1, "convert: still held");
	ordlock_close(ol);
}

static void test_netlink(const char *dom)
{
	struct ordlock_key inv = ORDLOCK_EX(INVENTORIES, 30), ord = ORDLOCK_EX(ORDERS, 10);
	struct olc_nl_outcome o;
	struct olc_nl_entry e;
	struct olt_holder *h;
	struct nlt *s = nlt_must_open();
	uint64_t t_inv;

	is_int(nlt_acquire(s, dom, &inv, 1, 0, 0, 1, &o), 0, "nl: ACQUIRE inventory 30");
	is_int(o.status, ORDLOCK_STATUS_GRANTED, "nl: granted");
	ok(o.have_result_flags && o.result_flags == 0,
	   "nl: RESULT_FLAGS 0 in the reply of a plain acquire");
	t_inv = o.token;
	h = olt_holder_start(dom, &ord, 1);
	is_int(h->result, 0, "nl: another process holds order 10");
	is_int(nlt_acquire(s, NULL, &ord, 1, (uint64_t)LONG_MS * 1000000, 0, 2, &o), 0,
	       "nl: ACQUIRE order 10 without REORDER");
	is_int(o.status, ORDLOCK_STATUS_REFUSED, "nl: refused");
	is_int(o.failure.reason, ORDLOCK_REASON_ORDER, "nl: reason order");
	is_int(nlt_acquire(s, NULL, &ord, 1, (uint64_t)LONG_MS * 1000000, REORDER, 3, &o), 0,
	       "nl: ACQUIRE order 10 with REORDER");
	is_int(o.status, ORDLOCK_STATUS_QUEUED, "nl: queued");
	ok(o.have_result_flags && o.result_flags == ORDLOCK_RESULT_RELEASED,
	   "nl: the QUEUED reply already says RELEASED");
	is_int(olt_probe(dom, INVENTORIES, 30, EX), 0,
	       "nl: inventory 30 is free while it waits");
	is_int(olt_holder_stop(h), 0, "nl: the holder of order 10 exits");
	is_int(nlt_wait_result(s, LONG_MS, &o), 0, "nl: a RESULT comes");
	is_int(o.status, ORDLOCK_STATUS_GRANTED, "nl: granted");
	ok(o.have_result_flags && o.result_flags == ORDLOCK_RESULT_RELEASED,
	   "nl: the RESULT says RELEASED");
	ok(o.token > t_inv, "nl: with a new token");
	is_int(nlt_find_lock(s, dom, INVENTORIES, 30, ORDLOCK_ROLE_HOLDER, 0, &e), 0,
	       "nl: inventory 30 is held again");
	ok(e.token == o.token, "nl: with the new token");
	is_int(nlt_convert(s, ORDLOCK_SH(ORDERS, 10), 0, REORDER, 4, &o), -EINVAL,
	       "nl: CONVERT refuses REORDER (%s)", nlt_extack_str(s));
	is_int(nlt_release(s, NULL, 0, &o), 0, "nl: release all");
	nlt_close(s);
}

int main(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];

	watchdog_start(600);
	gt_new_domain(dom, "reorder", ORDLOCK_POLICY_ENFORCE, 0);
	test_in_place(dom);
	test_released_and_retaken(dom);
	test_timeout_after_release(dom);
	test_wait_above_keeps(dom);
	test_try_never_lets_go(dom);
	test_strict();
	test_convert_refuses(dom);
	test_netlink(dom);
	return tap_done();
}
