// SPDX-License-Identifier: GPL-2.0
/*
 * t_learn_nl: the learned lock order (issue 17) over netlink and through
 * ordlockctl exec on a descriptor.
 *
 *  - DOMAIN_SET with ORDLOCK_A_FLAGS ORDLOCK_DOMAIN_RESET_ORDER forgets
 *    the learned order (edges, potential deadlocks, the dropped count),
 *    and learning goes on after it; with another setting in the same
 *    request both are done;
 *  - refused, and nothing forgotten: another flag bit (EINVAL, extack
 *    naming the flag; the policy given with it is not applied either),
 *    a sender without CAP_NET_ADMIN (EPERM), FLAGS in DOMAIN_GET (EINVAL);
 *  - the edge cache (an owner's cache of known edges): one owner repeating
 *    a grant 130 times counts it exactly as batched (129: the first
 *    learned, then two batches of 64 added, one grant pending), for a
 *    rank pair, ids up and down within a rank (reported once), two
 *    ranks held, and a rank held and taken with another held; a reset in between invalidates every cache: the next
 *    grant learns the edge again (count 1), nothing is counted into the
 *    forgotten edges;
 *  - the summary of a known grant (two ranks held, one key taken) counts
 *    exactly through its batches, and a conversion of a held key makes
 *    it again (the new edge is learned, the old one not counted);
 *  - the dropped count where a potential deadlock is reported: a report
 *    made after the order was full once carries it in the netlink event
 *    (ORDLOCK_A_ORDER_DROPPED) and in the kernel log;
 *  - ordlockctl exec -L LABEL FD: the descriptor's owner gets the label
 *    before it takes the keys and keeps it (the edge a later request
 *    makes names it); a bad label, and -L with -u, are usage errors (64)
 *    that set nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define SH ORDLOCK_MODE_SHARED

static char ctl[PATH_MAX];
static struct ordlock *admin;

static struct ordlock_order_edge E[64];
static uint32_t W[256];
static struct ordlock_order_get G;

static void get_order(const char *domain)
{
	if (olt_order_read(admin, domain, E, ARRAY_SIZE(E), W, ARRAY_SIZE(W), &G))
		bail_out("no learned order of %s", domain);
}

/* A program: takes ranks r[0], r[1], ... one request each, holding all */
struct path {
	const char *domain;
	unsigned int n;
	uint32_t r[4];
};

static int path_child(void *arg)
{
	const struct path *p = arg;
	struct ordlock *ol = ordlock_open(p->domain);
	unsigned int i;

	if (!ol)
		return 99;
	for (i = 0; i < p->n; i++) {
		struct ordlock_key k = ordlock_key(p->r[i], 1, EX);

		if (ordlock_acquire(ol, &k, 1, 5000, 0, NULL))
			return 100 + i;
	}
	ordlock_close(ol);
	return 0;
}

static int run_path(const char *domain, unsigned int n, uint32_t a, uint32_t b,
		    uint32_t c)
{
	struct path p = { domain, n, { a, b, c } };

	return child_wait(child_start(path_child, &p), 30);
}

static const char *new_domain(const char *prefix)
{
	const char *d = strdup(olt_domain(prefix));

	if (!d || ordlock_set_policy(admin, d, ORDLOCK_POLICY_DETECT, 0))
		bail_out("cannot set the policy of %s", d);
	return d;
}

/* DOMAIN_SET of @domain with ORDLOCK_A_FLAGS @flags, and @policy unless < 0 */
static int nl_set_flags(struct nlt *s, const char *domain, uint32_t flags,
			int policy, struct olc_nl_domain *d)
{
	const struct nlt_u32 a[] = {
		{ ORDLOCK_A_FLAGS, flags }, { ORDLOCK_A_POLICY, (uint32_t)policy },
	};

	return nlt_domain_set_u32(s, domain, a, policy >= 0 ? 2 : 1, d);
}

/* A child without CAP_NET_ADMIN: the errno of its reset */
static int unprivileged_reset(void *arg)
{
	struct nlt *s;
	int ret;

	if (olt_drop_cap(CAP_NET_ADMIN))
		return 91;
	s = nlt_open(&ret);
	if (!s)
		return 92;
	ret = nl_set_flags(s, arg, ORDLOCK_DOMAIN_RESET_ORDER, -1, NULL);
	nlt_close(s);
	return -ret;
}

static void test_nl_reset(void)
{
	const char *d = new_domain("nlreset");
	struct nlt *s = nlt_must_open();
	struct olc_nl_domain info;

	/* 1 -> 2, 2 -> 1: two edges and a potential deadlock; then a drop */
	ok(!run_path(d, 2, 1, 2, 0) && !run_path(d, 2, 2, 1, 0), "two programs, inverse orders");
	if (olt_param_set("order_max_edges", 2))
		bail_out("cannot set order_max_edges");
	is_int(run_path(d, 2, 3, 4, 0), 0, "a third program, with the order full");
	olt_param_restore();
	get_order(d);
	ok(G.nedges == 2 && G.npotential == 1 && G.dropped == 1,
	   "learned: 2 edges, 1 potential deadlock, 1 dropped (%u, %llu, %llu)", G.nedges,
	   (unsigned long long)G.npotential, (unsigned long long)G.dropped);

	is_int(nl_set_flags(s, d, ORDLOCK_DOMAIN_RESET_ORDER | (1U << 0),
			    ORDLOCK_POLICY_TIMEOUT, NULL), -EINVAL,
	       "DOMAIN_SET, a flag bit other than RESET_ORDER: EINVAL");
	ok(strstr(nlt_extack_str(s), "ORDLOCK_DOMAIN_RESET_ORDER") != NULL,
	   "  extack names the flag it takes: %s", nlt_extack_str(s));
	is_int(nl_set_flags(s, d, 1U << 31, -1, NULL), -EINVAL, "DOMAIN_SET, flag bit 31: EINVAL");
	is_int(nl_set_flags(s, d, 0, -1, NULL), -EINVAL, "DOMAIN_SET, flags 0 alone: nothing to set");
	ok(strstr(nlt_extack_str(s), "nothing to set") != NULL, "  extack: %s",
	   nlt_extack_str(s));
	is_int(child_wait(child_start(unprivileged_reset, (void *)d), 30), EPERM,
	       "DOMAIN_SET reset without CAP_NET_ADMIN: EPERM");
	{
		struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_DOMAIN_GET, 0);

		if (nla_put_string(msg, ORDLOCK_A_DOMAIN, d) ||
		    nla_put_u32(msg, ORDLOCK_A_FLAGS, ORDLOCK_DOMAIN_RESET_ORDER))
			bail_out("DOMAIN_GET: message too big");
		is_int(nlt_request(s, msg, NULL), -EINVAL, "DOMAIN_GET does not take the flags");
	}
	get_order(d);
	ok(G.nedges == 2 && G.npotential == 1 && G.dropped == 1,
	   "refused: nothing was forgotten (%u edges)", G.nedges);
	is_int(nlt_domain_get(s, d, &info), 0, "DOMAIN_GET");
	is_int(info.policy, ORDLOCK_POLICY_DETECT,
	       "refused: the policy sent with the bad flag was not applied");

	is_int(nl_set_flags(s, d, ORDLOCK_DOMAIN_RESET_ORDER, -1, &info), 0,
	       "DOMAIN_SET ORDLOCK_A_FLAGS RESET_ORDER");
	is_int(info.policy, ORDLOCK_POLICY_DETECT, "  the reply: the domain, unchanged otherwise");
	get_order(d);
	ok(!G.nedges && !G.npotential && !G.dropped && !G.nranks,
	   "reset: no edge, potential deadlock, drop or rank left");
	is_int(run_path(d, 3, 1, 2, 3), 0, "a program of three ranks after the reset");
	get_order(d);
	is_int(G.nedges, 3, "learning goes on: 3 edges");
	ok(E[0].from_rank == 1 && E[0].to_rank == 2, "  the first is 1 -> 2 (%u -> %u)",
	   E[0].from_rank, E[0].to_rank);

	is_int(nl_set_flags(s, d, ORDLOCK_DOMAIN_RESET_ORDER, ORDLOCK_POLICY_TIMEOUT, &info), 0,
	       "DOMAIN_SET reset and policy timeout in one request");
	is_int(info.policy, ORDLOCK_POLICY_TIMEOUT, "  the policy is applied");
	get_order(d);
	is_int(G.nedges, 0, "  and the order forgotten");
	nlt_close(s);
}

static void test_dropped_reported(void)
{
	const char *d = new_domain("nldrop");
	struct nlt *s = nlt_must_open();
	struct olc_nl_event ev;
	char out[8192];
	int ret, st;

	ret = nlt_subscribe(s);
	if (ret)
		bail_out("cannot join the events group: %s", strerror(-ret));
	if (olt_param_set("order_max_edges", 3))
		bail_out("cannot set order_max_edges");
	/* 1 -> 2, then 5 -> 6 and 5 -> 7 fill it: 6 -> 7 is dropped */
	ok(!run_path(d, 2, 1, 2, 0) && !run_path(d, 3, 5, 6, 7),
	   "drop: 1 -> 2, then three ranks with room for two more edges");
	get_order(d);
	ok(G.nedges == 3 && G.dropped == 1, "drop: 3 edges, 1 dropped (%u, %llu)", G.nedges,
	   (unsigned long long)G.dropped);
	if (olt_param_set("order_max_edges", 4))
		bail_out("cannot set order_max_edges");
	is_int(run_path(d, 2, 2, 1, 0), 0, "drop: with room for one more, 2 -> 1");
	olt_param_restore();
	ret = nlt_wait_event(s, ORDLOCK_EVENT_POTENTIAL_DEADLOCK, d, 5000, &ev);
	is_int(ret, 0, "drop: POTENTIAL_DEADLOCK is multicast");
	ok(!ret && ev.npotential == 2 && ev.order_dropped == 1,
	   "drop: the event carries both edges and the dropped count 1 (%u, %llu)",
	   ret ? 0 : ev.npotential, ret ? 0ULL : (unsigned long long)ev.order_dropped);
	st = olt_run(out, sizeof(out),
		     "dmesg | grep -A8 'potential deadlock (learned order, none happened yet) in domain \"%s\"' | grep 'learned 4 edges, 1 potential deadlocks, 1 dropped'",
		     d);
	is_int(st, 0, "drop: the kernel log says 1 dropped");
	nlt_close(s);
}

/* The count of edge @from -> @to of kind @kind in E (-1: no such edge) */
static long long edge_count(uint32_t from, uint32_t to, uint32_t kind)
{
	unsigned int i;

	for (i = 0; i < G.nedges && i < 64; i++)
		if (E[i].from_rank == from && E[i].to_rank == to && E[i].kind == kind)
			return (long long)E[i].count;
	return -1;
}

/* @times: take @n keys and release them (holding what @ol holds) */
static int repeat(struct ordlock *ol, const struct ordlock_key *k, unsigned int n,
		  unsigned int times)
{
	unsigned int i;
	int ret;

	for (i = 0; i < times; i++) {
		ret = ordlock_acquire(ol, k, n, 5000, 0, NULL);
		if (!ret)
			ret = ordlock_release(ol, k, n);
		if (ret)
			return ret;
	}
	return 0;
}

static void test_fast_counts(void)
{
	const char *d = new_domain("nlfast");
	struct ordlock *a = olt_open(d), *b = olt_open(d), *e = olt_open(d);
	struct ordlock_key held = ordlock_key(1, 5, EX);
	struct ordlock_key k2 = ordlock_key(2, 1, EX), up = ordlock_key(1, 9, EX);
	struct ordlock_key down = ordlock_key(1, 2, EX);
	struct ordlock_key held2[2] = { ordlock_key(3, 1, EX), ordlock_key(4, 1, SH) };
	struct ordlock_key k5[2] = { ordlock_key(5, 1, SH), ordlock_key(5, 2, EX) };
	struct ordlock_key held3[2] = { ordlock_key(6, 1, EX), ordlock_key(7, 1, EX) };
	struct ordlock_key k75 = ordlock_key(7, 5, EX);
	struct nlt *s = nlt_must_open();

	if (ordlock_acquire(a, &held, 1, 5000, 0, NULL) ||
	    ordlock_acquire(b, held2, 2, 5000, 0, NULL) ||
	    ordlock_acquire(e, held3, 2, 5000, 0, NULL))
		bail_out("cannot take the held keys");
	is_int(repeat(a, &k2, 1, 130), 0, "fast: holding 1:5, 2:1 taken and let go 130 times");
	is_int(repeat(a, &up, 1, 130), 0, "fast: 1:9 (ids up) 130 times");
	is_int(repeat(a, &down, 1, 130), 0, "fast: 1:2 (ids down) 130 times");
	is_int(repeat(b, k5, 2, 130), 0, "fast: holding 3:1 and 4:1, rank 5 (two keys) 130 times");
	is_int(repeat(e, &k75, 1, 130), 0,
	       "fast: holding 6:1 and 7:1, 7:5 (a rank held and taken) 130 times");
	get_order(d);
	is_int(G.nedges, 7, "fast: 7 edges, each learned once");
	ok(edge_count(6, 7, ORDLOCK_ORDER_RANKS) == 129 &&
	   edge_count(7, 7, ORDLOCK_ORDER_ASCENDING) == 129,
	   "fast: a rank held and taken: 6 -> 7 and 7 up each counted 129 (%lld %lld)",
	   edge_count(6, 7, ORDLOCK_ORDER_RANKS), edge_count(7, 7, ORDLOCK_ORDER_ASCENDING));
	ok(edge_count(1, 2, ORDLOCK_ORDER_RANKS) == 129 &&
	   edge_count(1, 1, ORDLOCK_ORDER_ASCENDING) == 129 &&
	   edge_count(1, 1, ORDLOCK_ORDER_DESCENDING) == 129,
	   "fast: one held key: 1 -> 2, up and down each counted 129 (%lld %lld %lld)",
	   edge_count(1, 2, ORDLOCK_ORDER_RANKS), edge_count(1, 1, ORDLOCK_ORDER_ASCENDING),
	   edge_count(1, 1, ORDLOCK_ORDER_DESCENDING));
	ok(edge_count(3, 5, ORDLOCK_ORDER_RANKS) == 129 &&
	   edge_count(4, 5, ORDLOCK_ORDER_RANKS) == 129,
	   "fast: two ranks held: 3 -> 5 and 4 -> 5 each counted 129 (%lld %lld)",
	   edge_count(3, 5, ORDLOCK_ORDER_RANKS), edge_count(4, 5, ORDLOCK_ORDER_RANKS));
	is_int(G.npotential, 1, "fast: the ids both ways reported once, not per grant");

	is_int(nl_set_flags(s, d, ORDLOCK_DOMAIN_RESET_ORDER, -1, NULL), 0, "fast: reset");
	is_int(repeat(a, &k2, 1, 1), 0, "fast: the cached grant again, after the reset");
	is_int(repeat(b, k5, 2, 1), 0, "fast: and the two-rank one");
	get_order(d);
	ok(G.nedges == 3 && edge_count(1, 2, ORDLOCK_ORDER_RANKS) == 1 &&
	   edge_count(3, 5, ORDLOCK_ORDER_RANKS) == 1 && edge_count(4, 5, ORDLOCK_ORDER_RANKS) == 1,
	   "fast: the caches were invalidated: learned again, count 1 (%u edges)", G.nedges);
	is_int(repeat(a, &k2, 1, 64), 0, "fast: 64 more");
	get_order(d);
	is_int(edge_count(1, 2, ORDLOCK_ORDER_RANKS), 65, "fast: counted again: 1 + a batch of 64");
	nlt_close(s);
	ordlock_close(a);
	ordlock_close(b);
	ordlock_close(e);
}

static void test_exec_fd_label(void)
{
	const char *d = new_domain("execlbl");
	struct ordlock *ol = olt_open(d);
	int fd = ordlock_fd(ol), st;
	char out[4096];

	if (fcntl(fd, F_SETFD, 0))
		bail_out("fcntl: %s", strerror(errno));
	st = olt_run(out, sizeof(out), "%s exec -L 'bad label' -x 1:1 %d 2>&1", ctl, fd);
	is_int(st, 64, "exec -L 'bad label' FD: usage error (64)");
	st = olt_run(out, sizeof(out), "%s exec -u -L webhook %d 2>&1", ctl, fd);
	is_int(st, 64, "exec -u -L LABEL FD: usage error (64)");
	ok(strstr(out, "-u") != NULL, "  it says why: %s", out);
	is_int(olt_nheld(ol), 0, "  and nothing was taken");

	st = olt_run(out, sizeof(out), "%s exec -L webhook -x 1:1 %d 2>&1", ctl, fd);
	is_int(st, 0, "exec -L webhook -x 1:1 FD: %s", st ? out : "taken");
	st = olt_run(out, sizeof(out), "%s exec -x 2:1 %d 2>&1", ctl, fd);
	is_int(st, 0, "exec -x 2:1 FD, without -L: %s", st ? out : "taken");
	is_int(olt_nheld(ol), 2, "the descriptor's owner holds both keys");
	get_order(d);
	is_int(G.nedges, 1, "one edge learned, 1 -> 2");
	ok(!strcmp(E[0].label, "webhook"),
	   "its first observation names the label set through FD (\"%s\")", E[0].label);
	st = olt_run(out, sizeof(out), "grep -c ' webhook$' /sys/kernel/debug/ordlock/labels");
	ok(st == 0 && atoi(out) == 1, "debugfs labels shows it (%d lines)", atoi(out));

	st = olt_run(out, sizeof(out), "%s exec -L api -x 3:1 %d 2>&1", ctl, fd);
	is_int(st, 0, "exec -L api -x 3:1 FD: the label changes");
	get_order(d);
	ok(G.nedges == 3 && !strcmp(E[1].label, "api") && !strcmp(E[2].label, "api"),
	   "the edges 1 -> 3 and 2 -> 3 name \"api\" (%u edges)", G.nedges);
	st = olt_run(out, sizeof(out), "%s exec -u %d 2>&1", ctl, fd);
	is_int(st, 0, "exec -u FD releases everything");
	is_int(olt_nheld(ol), 0, "nothing held");
	ordlock_close(ol);
}

static void find_ctl(void)
{
	snprintf(ctl, sizeof(ctl), "%s", olt_ctl_path());
}

/* The count of edge @from -> @to (ranks) whose held mode is @hmode (-1: none) */
static long long mode_count(uint32_t from, uint32_t to, uint32_t hmode)
{
	uint32_t i;

	for (i = 0; i < G.nedges; i++)
		if (E[i].held.rank == from && E[i].taken.rank == to &&
		    E[i].kind == ORDLOCK_ORDER_RANKS && E[i].held.mode == hmode)
			return (long long)E[i].count;
	return -1;
}

/*
 * The summary of a known grant (two ranks held, one key taken, the bench's
 * row): counted exactly through its batches, and made again when the held
 * set changes in place (a conversion of a held key: its edges are others)
 */
static void test_summary(void)
{
	const char *d = new_domain("nlsum");
	struct ordlock *a = olt_open(d);
	struct ordlock_key held[2] = { ordlock_key(8, 1, SH), ordlock_key(9, 1, SH) };
	struct ordlock_key k10 = ordlock_key(10, 1, EX);

	if (ordlock_acquire(a, held, 2, 5000, 0, NULL))
		bail_out("cannot take the held keys");
	is_int(repeat(a, &k10, 1, 130), 0, "summary: holding 8:1 and 9:1 shared, 10:1 130 times");
	get_order(d);
	ok(mode_count(8, 10, SH) == 129 && mode_count(9, 10, SH) == 129,
	   "summary: 8 -> 10 and 9 -> 10 each counted 129 (%lld %lld)",
	   mode_count(8, 10, SH), mode_count(9, 10, SH));
	is_int(ordlock_convert(a, ordlock_key(9, 1, EX), 5000, 0, NULL), 0,
	       "summary: 9:1 converted to exclusive");
	is_int(repeat(a, &k10, 1, 2), 0, "summary: 10:1 twice more");
	get_order(d);
	/* The second is pending in the cache (batches of 64) */
	ok(mode_count(9, 10, EX) == 1 && mode_count(9, 10, SH) == 129,
	   "summary: the conversion made it again: 9 exclusive -> 10 learned (count %lld), the shared one untouched (%lld)",
	   mode_count(9, 10, EX), mode_count(9, 10, SH));
	ok(G.nedges == 3, "summary: 3 edges (%u)", G.nedges);
	ordlock_close(a);
}

int main(void)
{
	find_ctl();
	admin = olt_open(NULL);
	test_nl_reset();
	test_dropped_reported();
	test_fast_counts();
	test_summary();
	test_exec_fd_label();
	ordlock_close(admin);
	return tap_done();
}
