// SPDX-License-Identifier: GPL-2.0
/*
 * t_learn: the lock order learned across processes (order.c), potential
 * deadlocks reported before they happen.
 *
 *  - source 004: the API (orders then inventories, inventories 20 then
 *    30), the batch (inventories then orders) and the webhook (orders,
 *    then inventories 30 then 20) run one after another, never at once
 *    (no deadlock can happen): the potential deadlock orders <->
 *    inventories is reported naming "api" and "batch" (kernel log, debugfs
 *    "order", ORDLOCK_IOC_GET_ORDER, ordlockctl order), and the id
 *    inversion of inventories naming "api" and "webhook"; ordlockctl order
 *    --suggest puts orders before inventories; its command applied, the
 *    domain enforces it and the batch's path fails at once with EDEADLK
 *    while the API's goes through;
 *  - a cycle of three ranks built by three programs, each taking two;
 *  - source 003's two warehouses: transfers in both directions, one
 *    after the other, report the id inversion of the warehouse rank;
 *  - the false positives stay silent: shared/shared inversions, an
 *    inversion inside one request (the kernel sorts it), readers on the
 *    inverted side; and its control (writers there) is reported;
 *  - an owner that holds nothing before a request teaches nothing;
 *  - the bound (order_max_edges) and the dropped count, everywhere;
 *  - reset (admin only), and learning goes on after it; enforce domains
 *    do not learn;
 *  - labels: ioctl (EINVAL for bad ones), netlink SET_LABEL, debugfs
 *    owners; the netlink event POTENTIAL_DEADLOCK with every edge's
 *    first observation and labels.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

static char ctl[PATH_MAX];
static struct ordlock *admin;

/* One request of a path: up to 4 keys */
struct req {
	unsigned int n;
	struct ordlock_key k[4];
};

/* A program: its label and requests, taken one after the other, holding all */
struct path {
	const char *domain;
	const char *label;
	unsigned int nreq;
	struct req r[6];
};

#define K(r_, i_, m_) { .rank = (r_), .id = (i_), .mode = (m_) }
#define R1(a) { .n = 1, .k = { a } }

/* Child: run @arg's path; exit 0, or 100 + errno of the request that failed */
static int path_child(void *arg)
{
	const struct path *p = arg;
	struct ordlock *ol = ordlock_open(p->domain);
	unsigned int i;
	int ret;

	if (!ol)
		return 99;
	if (p->label && ordlock_set_label(ol, p->label))
		return 98;
	for (i = 0; i < p->nreq; i++) {
		ret = ordlock_acquire(ol, p->r[i].k, p->r[i].n, 5000, 0, NULL);
		if (ret)
			return 100 + (-ret & 0x3f);
	}
	ordlock_close(ol);
	return 0;
}

/* Run @p in its own process, to the end; its exit status */
static int run_path(const struct path *p)
{
	return child_wait(child_start(path_child, (void *)p), 30);
}

static const char *new_domain(const char *prefix, unsigned int policy)
{
	/* olt_domain() has one static buffer */
	const char *d = strdup(olt_domain(prefix));

	if (!d || ordlock_set_policy(admin, d, policy, 0))
		bail_out("cannot set the policy of %s", d);
	return d;
}

/* The learned order of @domain */
static struct ordlock_order_edge E[512];
static uint32_t W[2048];
static struct ordlock_order_get G;

static int get_order(const char *domain)
{
	return olt_order_read(admin, domain, E, ARRAY_SIZE(E), W, ARRAY_SIZE(W), &G);
}

/*
 * Potential deadlocks of kind @kind whose edges carry labels @a and @b
 * (NULL: any) and that have @n edges (0: any)
 */
static int count_pots(uint32_t kind, const char *a, const char *b, uint32_t n)
{
	unsigned int at = 0, i, found = 0;

	while (at + 2 <= G.npotential_words && at < 2048) {
		uint32_t k = W[at], len = W[at + 1];
		int has_a = !a, has_b = !b;

		for (i = 0; i < len; i++) {
			const char *l = E[W[at + 2 + i]].label;

			if (a && !strcmp(l, a))
				has_a = 1;
			if (b && !strcmp(l, b))
				has_b = 1;
		}
		if (k == kind && has_a && has_b && (!n || len == n))
			found++;
		at += 2 + len;
	}
	return found;
}

static void show(const char *what, const char *text)
{
	char copy[8192], *line, *save = NULL;
	int n = 0;

	snprintf(copy, sizeof(copy), "%.8000s", text);
	for (line = strtok_r(copy, "\n", &save); line && n < 40;
	     line = strtok_r(NULL, "\n", &save), n++)
		diag("  %s: %s", what, line);
}

static void find_ctl(void)
{
	snprintf(ctl, sizeof(ctl), "%s", olt_ctl_path());
}

/* Source 004, with orders = rank 2 and inventories = rank 1 at first */
static void test_seed004(void)
{
	const char *d = new_domain("shop", ORDLOCK_POLICY_DETECT);
	struct path api = { d, "api", 3, {
		R1(K(2, 10, EX)), R1(K(1, 20, EX)), R1(K(1, 30, EX)) } };
	struct path batch = { d, "batch", 2, { R1(K(1, 20, EX)), R1(K(2, 10, EX)) } };
	struct path webhook = { d, "webhook", 3, {
		R1(K(2, 11, EX)), R1(K(1, 30, EX)), R1(K(1, 20, EX)) } };
	static char out[65536];
	char cmdline[512], *p, *q;
	unsigned int orders = 0, inv = 0;
	int st;

	st = olt_run(out, sizeof(out), "%s domain %s set rank orders=2 rank inventories=1 2>&1",
		     ctl, d);
	if (st) {
		show("domain set", out);
		bail_out("cannot name the ranks of %s", d);
	}
	is_int(run_path(&api), 0, "004: the API runs alone (orders, then inventories 20, 30)");
	is_int(run_path(&batch), 0, "004: then the batch alone (inventories, then orders)");
	is_int(run_path(&webhook), 0, "004: then the webhook alone (orders, inventories 30, 20)");
	if (get_order(d))
		return;
	ok(G.learning == 1, "004: a detect domain learns");
	is_int(count_pots(ORDLOCK_POTENTIAL_CYCLE, "api", "batch", 2), 1,
	       "004: one potential deadlock orders <-> inventories, naming api and batch");
	is_int(count_pots(ORDLOCK_POTENTIAL_IDS, "api", "webhook", 2), 1,
	       "004: the id inversion of inventories, naming api and webhook");
	is_int(G.npotential, 2, "004: exactly those two, each reported once");
	is_int(G.dropped, 0, "004: nothing dropped");

	st = olt_run(out, sizeof(out), "dmesg | grep -A12 'potential deadlock (learned order, none happened yet) in domain \"%s\": circular lock order'", d);
	ok(!st && strstr(out, "label \"batch\"") && strstr(out, "label \"api\"") &&
	   strstr(out, "held 1:20 exclusive, then took 2:10 exclusive"),
	   "004: the kernel log reports it before any deadlock, with both paths by label and their keys");
	if (st)
		show("dmesg", out);

	st = olt_run(out, sizeof(out), "grep ' %s ' /sys/kernel/debug/ordlock/order", d);
	ok(!st && strstr(out, "potential ") && strstr(out, " batch ") && strstr(out, " api ") &&
	   strstr(out, "inverted,reported"), "004: debugfs order has the edges, labels and reports");

	st = olt_run(out, sizeof(out), "%s order -d %s 2>&1", ctl, d);
	ok(st == 1 && strstr(out, "possible circular locking dependency") &&
	   strstr(out, "\"api\"") && strstr(out, "\"batch\"") && strstr(out, "orders:10"),
	   "004: ordlockctl order shows it with labels and named keys (exit 1)");
	if (st != 1)
		show("order", out);

	st = olt_run(out, sizeof(out), "%s order --dot -d %s 2>&1", ctl, d);
	ok(!st && strstr(out, "\"inventories\" -> \"orders\"") && strstr(out, "color=red"),
	   "004: --dot draws the inverted edge in red");

	st = olt_run(out, sizeof(out), "%s order -j -d %s 2>&1", ctl, d);
	ok(st == 1 && out[0] == '{' && strstr(out, "\"kind\":\"cycle\"") &&
	   strstr(out, "\"label\":\"batch\""),
	   "004: -j has the potential deadlocks and labels, in one object; exit 1 as the text form");
	if (st != 1)
		show("json", out);

	st = olt_run(out, sizeof(out), "%s order --suggest -d %s 2>&1", ctl, d);
	p = strstr(out, "ordlockctl domain ");
	ok(!st && strstr(out, "orders < inventories") && p,
	   "004: --suggest puts orders before inventories, with the command to enforce it");
	if (st || !p) {
		show("suggest", out);
		return;
	}
	q = strchr(p, '\n');
	snprintf(cmdline, sizeof(cmdline), "%.*s", q ? (int)(q - p) : (int)strlen(p), p);
	diag("suggested: %s", cmdline);
	p = strstr(cmdline, "orders=");
	q = strstr(cmdline, "inventories=");
	if (p)
		orders = (unsigned int)strtoul(p + 7, NULL, 10);
	if (q)
		inv = (unsigned int)strtoul(q + 12, NULL, 10);
	ok(orders == 1 && inv == 2 && strstr(cmdline, "policy enforce"),
	   "004: the command renumbers orders=1 inventories=2 and enforces");
	/* "ordlockctl" is the tool of this tree */
	st = olt_run(out, sizeof(out), "%s%s 2>&1", ctl, cmdline + strlen("ordlockctl"));
	is_int(st, 0, "004: the suggested command runs");

	/* The programs take their keys by name: with the new numbers */
	batch.r[0].k[0].rank = inv;
	batch.r[1].k[0].rank = orders;
	api.r[0].k[0].rank = orders;
	api.r[1].k[0].rank = inv;
	api.r[2].k[0].rank = inv;
	is_int(run_path(&batch), 100 + EDEADLK,
	       "004: enforced, the batch's path fails at once (EDEADLK, order)");
	is_int(run_path(&api), 0, "004: and the API's path goes through");
	if (get_order(d))
		return;
	ok(!G.learning, "004: an enforce domain does not learn");
}

/* Three programs, two ranks each: 1 -> 2, 2 -> 3, 3 -> 1 */
static void test_three(void)
{
	const char *d = new_domain("ring", ORDLOCK_POLICY_TIMEOUT);
	struct path a = { d, "p12", 2, { R1(K(1, 1, EX)), R1(K(2, 1, EX)) } };
	struct path b = { d, "p23", 2, { R1(K(2, 1, EX)), R1(K(3, 1, EX)) } };
	struct path c = { d, "p31", 2, { R1(K(3, 1, EX)), R1(K(1, 1, EX)) } };
	unsigned int i, at;
	int labels = 0;

	ok(!run_path(&a) && !run_path(&b), "ring: two programs, no cycle yet");
	get_order(d);
	is_int(G.npotential, 0, "ring: nothing reported before the cycle closes");
	is_int(run_path(&c), 0, "ring: the third program closes it (in a timeout domain)");
	get_order(d);
	is_int(count_pots(ORDLOCK_POTENTIAL_CYCLE, "p12", "p31", 3), 1,
	       "ring: one potential deadlock of three edges");
	for (at = 0; at + 2 <= G.npotential_words; at += 2 + W[at + 1])
		for (i = 0; i < W[at + 1]; i++)
			labels |= !strcmp(E[W[at + 2 + i]].label, "p23") << 1 |
				  !strcmp(E[W[at + 2 + i]].label, "p12") |
				  !strcmp(E[W[at + 2 + i]].label, "p31") << 2;
	is_int(labels, 7, "ring: with all three programs' first observations");
	is_int(G.npotential, 1, "ring: reported once");
	is_int(run_path(&c), 0, "ring: the third program again");
	get_order(d);
	is_int(G.npotential, 1, "ring: still once (a known edge reports nothing)");
	ok(G.nedges == 3 && E[2].count == 2, "ring: the edge is counted (count 2)");
}

/* Source 003: Sofia (1) and Plovdiv (2), transfers both ways */
static void test_warehouses(void)
{
	const char *d = new_domain("wh", ORDLOCK_POLICY_DETECT);
	struct path sp = { d, "sofia-plovdiv", 2, { R1(K(7, 1, EX)), R1(K(7, 2, EX)) } };
	struct path ps = { d, "plovdiv-sofia", 2, { R1(K(7, 2, EX)), R1(K(7, 1, EX)) } };
	struct path audit = { d, "audit", 2, { R1(K(7, 1, SH)), R1(K(7, 2, SH)) } };

	ok(!run_path(&sp) && !run_path(&audit), "warehouses: ascending transfers and an audit");
	get_order(d);
	is_int(G.npotential, 0, "warehouses: ids always ascending: silent");
	is_int(run_path(&ps), 0, "warehouses: then a transfer the other way, alone");
	get_order(d);
	is_int(count_pots(ORDLOCK_POTENTIAL_IDS, "sofia-plovdiv", "plovdiv-sofia", 2), 1,
	       "warehouses: the id inversion of rank 7, naming both transfers");
}

static void test_false_positives(void)
{
	const char *d = new_domain("fp", ORDLOCK_POLICY_DETECT);
	struct path s1 = { d, "r1", 2, { R1(K(1, 1, SH)), R1(K(2, 1, SH)) } };
	struct path s2 = { d, "r2", 2, { R1(K(2, 1, SH)), R1(K(1, 1, SH)) } };
	struct path one1 = { d, "one1", 1, { { 2, { K(4, 1, EX), K(3, 1, EX) } } } };
	struct path one2 = { d, "one2", 1, { { 2, { K(3, 1, EX), K(4, 1, EX) } } } };
	struct path w = { d, "writer", 2, { R1(K(5, 1, EX)), R1(K(6, 1, SH)) } };
	struct path r = { d, "reader", 2, { R1(K(6, 1, SH)), R1(K(5, 1, SH)) } };
	struct path ids1 = { d, "ids1", 2, { R1(K(8, 1, SH)), R1(K(8, 2, SH)) } };
	struct path ids2 = { d, "ids2", 2, { R1(K(8, 2, SH)), R1(K(8, 1, SH)) } };
	const char *d2 = new_domain("fpc", ORDLOCK_POLICY_DETECT);
	struct path cw = { d2, "cwriter", 2, { R1(K(5, 1, EX)), R1(K(6, 1, EX)) } };
	struct path cr = { d2, "creader", 2, { R1(K(6, 1, SH)), R1(K(5, 1, SH)) } };

	ok(!run_path(&s1) && !run_path(&s2), "false positives: shared/shared both ways");
	ok(!run_path(&one1) && !run_path(&one2),
	   "false positives: two orders inside one request each (the kernel sorts them)");
	ok(!run_path(&w) && !run_path(&r),
	   "false positives: a writer takes 6 shared after 5; readers take 5 after 6");
	ok(!run_path(&ids1) && !run_path(&ids2), "false positives: ids both ways, shared only");
	get_order(d);
	is_int(G.npotential, 0, "false positives: none is reported");
	ok(G.nedges >= 5, "false positives: they were learned all the same (%u edges)", G.nedges);
	ok(!run_path(&cw) && !run_path(&cr),
	   "control: the writer takes 6 exclusive after 5; readers 5 after 6");
	get_order(d2);
	is_int(count_pots(ORDLOCK_POTENTIAL_CYCLE, "cwriter", "creader", 2), 1,
	       "control: the readers wait for the writer both ways: reported");
}

static void test_nothing_held(void)
{
	const char *d = new_domain("free", ORDLOCK_POLICY_DETECT);
	struct path p = { d, "solo", 3, {
		{ 3, { K(3, 1, EX), K(1, 1, EX), K(2, 1, EX) } } } };

	p.nreq = 1;
	is_int(run_path(&p), 0, "nothing held: one request of three ranks");
	get_order(d);
	is_int(G.nedges, 0, "nothing held: teaches nothing (no edge)");
}

static void test_bound(void)
{
	const char *d = new_domain("bound", ORDLOCK_POLICY_DETECT);
	struct path p = { d, "many", 6, {
		R1(K(1, 1, EX)), R1(K(2, 1, EX)), R1(K(3, 1, EX)), R1(K(4, 1, EX)),
		R1(K(5, 1, EX)), R1(K(6, 1, EX)) } };
	static char out[65536];
	int st;

	if (olt_param_set("order_max_edges", 4))
		bail_out("cannot set order_max_edges");
	is_int(run_path(&p), 0, "bound: six ranks one after the other (15 edges) with room for 4");
	get_order(d);
	ok(G.nedges == 4 && G.max_edges == 4, "bound: 4 edges kept (%u)", G.nedges);
	is_int(G.dropped, 11, "bound: 11 dropped, counted");
	st = olt_run(out, sizeof(out), "grep '^domain %s ' /sys/kernel/debug/ordlock/order", d);
	ok(!st && strstr(out, "dropped 11"), "bound: debugfs says dropped 11");
	st = olt_run(out, sizeof(out), "%s order -d %s 2>&1", ctl, d);
	ok(strstr(out, "11 dropped") && strstr(out, "not all there is"),
	   "bound: ordlockctl order says so");
	st = olt_run(out, sizeof(out), "%s order -j -d %s 2>&1", ctl, d);
	ok(strstr(out, "\"dropped\":11") != NULL, "bound: and its JSON");
	olt_param_restore();

	is_int(ordlock_reset_order(admin, d), 0, "reset: an admin forgets the learned order");
	get_order(d);
	ok(!G.nedges && !G.dropped && !G.npotential, "reset: nothing left, dropped count included");
	is_int(run_path(&p), 0, "reset: the same program again");
	get_order(d);
	is_int(G.nedges, 15, "reset: learning goes on: all 15 edges");
}

static int reset_unprivileged(void *arg)
{
	struct ordlock *ol = ordlock_open(NULL);

	if (!ol || setresuid(65534, 65534, 65534))
		return 99;
	return -ordlock_reset_order(ol, arg);
}

static void test_labels(void)
{
	const char *d = new_domain("lbl", ORDLOCK_POLICY_DETECT);
	struct ordlock_set_label sl = { .size = sizeof(sl) };
	struct ordlock *ol = olt_open(d);
	static char out[65536];
	struct nl_msg *msg;
	struct nlt *s;
	int ret;

	is_int(run_path(&(struct path){ d, "x", 2, { R1(K(1, 1, EX)), R1(K(2, 1, EX)) } }), 0,
	       "labels: a program to reset");
	is_int(child_wait(child_start(reset_unprivileged, (void *)d), 30), EPERM,
	       "reset: refused without CAP_SYS_ADMIN (EPERM)");
	get_order(d);
	is_int(G.nedges, 1, "reset: and nothing was forgotten");

	strcpy(sl.label, "bad label");
	ret = ioctl(ordlock_fd(ol), ORDLOCK_IOC_SET_LABEL, &sl);
	ok(ret < 0 && errno == EINVAL, "labels: a space is EINVAL");
	memset(sl.label, 'a', sizeof(sl.label));
	ret = ioctl(ordlock_fd(ol), ORDLOCK_IOC_SET_LABEL, &sl);
	ok(ret < 0 && errno == EINVAL, "labels: no NUL within 32 bytes is EINVAL");
	sl.flags = 1;
	strcpy(sl.label, "ok");
	ret = ioctl(ordlock_fd(ol), ORDLOCK_IOC_SET_LABEL, &sl);
	ok(ret < 0 && errno == EINVAL, "labels: unknown flags are EINVAL");
	is_int(ordlock_set_label(ol, "checkout.v2"), 0, "labels: a good label");
	olt_run(out, sizeof(out), "grep ' checkout.v2$' /sys/kernel/debug/ordlock/labels");
	ok(strstr(out, "checkout.v2") != NULL, "labels: debugfs labels shows it");
	olt_run(out, sizeof(out), "%s owners -d %s 2>&1", ctl, d);
	ok(strstr(out, "checkout.v2") && strstr(out, "LABEL"),
	   "labels: ordlockctl owners (debugfs) shows it");
	if (!strstr(out, "checkout.v2"))
		show("owners", out);
	olt_run(out, sizeof(out), "%s owners -S netlink -j -d %s 2>&1", ctl, d);
	ok(strstr(out, "\"label\":\"checkout.v2\"") != NULL,
	   "labels: and through netlink (GET_OWNERS)");
	if (!strstr(out, "checkout.v2"))
		show("owners -S netlink", out);
	ordlock_close(ol);

	s = nlt_must_open();
	msg = nlt_msg_new(s, ORDLOCK_CMD_SET_LABEL, 0);
	nla_put_string(msg, ORDLOCK_A_LABEL, "nl-path");
	is_int(nlt_request(s, msg, NULL), 0, "labels: netlink SET_LABEL");
	olt_run(out, sizeof(out), "grep ' nl-path$' /sys/kernel/debug/ordlock/labels");
	ok(strstr(out, "nl-path") != NULL, "labels: the socket's owner has it");
	msg = nlt_msg_new(s, ORDLOCK_CMD_SET_LABEL, 0);
	nla_put_string(msg, ORDLOCK_A_LABEL, "no/slash");
	ret = nlt_request(s, msg, NULL);
	ok(ret == -EINVAL && strstr(nlt_extack_str(s), "label"),
	   "labels: netlink refuses a bad label with an extack (%s)", nlt_extack_str(s));
	msg = nlt_msg_new(s, ORDLOCK_CMD_SET_LABEL, 0);
	ret = nlt_request(s, msg, NULL);
	ok(ret == -EINVAL && strstr(nlt_extack_str(s), "missing label"),
	   "labels: and a missing one");
	nlt_close(s);
}

static void test_event(void)
{
	const char *d = new_domain("ev", ORDLOCK_POLICY_DETECT);
	struct path a = { d, "left", 2, { R1(K(1, 5, EX)), R1(K(2, 6, SH)) } };
	struct path b = { d, "right", 2, { R1(K(2, 6, EX)), R1(K(1, 5, EX)) } };
	struct olc_nl_event ev;
	struct nlt *s = nlt_must_open();
	int ret;

	ret = nlt_subscribe(s);
	if (ret)
		bail_out("cannot join the events group: %s", strerror(-ret));
	ok(!run_path(&a) && !run_path(&b), "event: two programs in opposite orders");
	ret = nlt_wait_event(s, ORDLOCK_EVENT_POTENTIAL_DEADLOCK, d, 5000, &ev);
	is_int(ret, 0, "event: POTENTIAL_DEADLOCK is multicast");
	if (!ret) {
		ok(ev.npotential == 2 && !strcmp(ev.potential[0].label, "left") &&
		   !strcmp(ev.potential[1].label, "right"),
		   "event: both edges, the closing one last, with labels");
		ok(ev.potential[0].held.rank == 1 && ev.potential[0].held.id == 5 &&
		   ev.potential[0].taken.rank == 2 && ev.potential[0].taken.mode == SH &&
		   ev.potential[1].held.mode == EX && ev.potential[0].time_ns &&
		   ev.potential[0].pid && ev.potential[1].count == 1,
		   "event: each with its first observation (keys, modes, pid, time, count)");
		ok(!strcmp(ev.owner.label, "right") && ev.potential_kind == ORDLOCK_POTENTIAL_CYCLE &&
		   ev.order_dropped == 0, "event: the owner that closed it, kind and dropped count");
	}
	nlt_close(s);
}

int main(void)
{
	find_ctl();
	admin = olt_open(NULL);
	test_seed004();
	test_three();
	test_warehouses();
	test_false_positives();
	test_nothing_held();
	test_bound();
	test_labels();
	test_event();
	ordlock_close(admin);
	return tap_done();
}
