// SPDX-License-Identifier: GPL-2.0
/*
 * t_nl_admin: what the generic netlink family tells and configures.
 *
 *  - GET_STATS counters move as they should and match debugfs;
 *  - DOMAIN_SET / DOMAIN_GET: policy, delay and rank names round-trip;
 *  - events: order violation, timeout, limit, each with its contents, and
 *    the rate limit of a storm.
 *
 * Every wait that must end is bounded; interleavings are forced by the
 * replies (QUEUED means queued) or by waiting until an ioctl caller sleeps.
 * The checks are tests/lib/nlcheck.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "nlcheck.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

static void test_stats(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	uint64_t st0[ORDLOCK_S_MAX + 1], st1[ORDLOCK_S_MAX + 1];
	struct ordlock_key k11 = ORDLOCK_EX(1, 1), k10 = ORDLOCK_EX(1, 0);
	struct ordlock_key k21 = ORDLOCK_EX(2, 1);
	struct olt_holder *h = NULL;
	struct olc_nl_outcome o;
	struct ordlock *hol;
	struct gt_stats gs;
	struct nlt *s;
	int i, ret, same;

	diag("GET_STATS");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nls"));
	ret = nlt_get_stats(L, dom, st0);
	is_errno(ret, ENOENT, "GET_STATS of a domain that does not exist: ENOENT");
	ok(strstr(L->nl->ext.msg, "no such domain") != NULL, "extack: %s",
	   nlt_extack_str(L));

	hol = olt_open(dom);
	s = nlt_must_open();
	ret = nlt_get_stats(L, dom, st0);
	is_int(ret, 0, "GET_STATS once an owner created it");
	ret = nlt_acquire(s, dom, &k11, 1, 0, 0, 1, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "netlink acquire x1:1");
	is_errno(ordlock_try_acquire(hol, &k11, 1, NULL), EAGAIN, "ioctl try fails");
	ret = nlt_acquire(s, NULL, &k10, 1, 0, 0, 2, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED, "order violation");
	h = olt_holder_start(dom, &k21, 1);
	is_int(h->result, 0, "ioctl acquire x2:1 (a child)");
	ret = nlt_acquire(s, NULL, &k21, 1, 1500 * NS_PER_MS, 0, 3, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_QUEUED, "netlink waits for x2:1");
	ret = nlt_get_stats(L, dom, st1);
	ok(!ret && st1[ORDLOCK_S_WAITERS] == 1, "GET_STATS: 1 waiter meanwhile");
	result_ok(s, &o, ORDLOCK_STATUS_TIMEOUT, 3, "it times out");
	nlt_release(s, NULL, 0, NULL);

	ret = nlt_get_stats(L, dom, st1);
	is_int(ret, 0, "GET_STATS again");
	is_int(st1[ORDLOCK_S_ACQUIRES] - st0[ORDLOCK_S_ACQUIRES], 2, "acquires +2");
	is_int(st1[ORDLOCK_S_CONTENDED] - st0[ORDLOCK_S_CONTENDED], 0, "contended +0");
	is_int(st1[ORDLOCK_S_TRY_FAILURES] - st0[ORDLOCK_S_TRY_FAILURES], 1,
	       "try_failures +1");
	is_int(st1[ORDLOCK_S_ORDER_VIOLATIONS] - st0[ORDLOCK_S_ORDER_VIOLATIONS], 1,
	       "order_violations +1");
	is_int(st1[ORDLOCK_S_TIMEOUTS] - st0[ORDLOCK_S_TIMEOUTS], 1, "timeouts +1");
	is_int(st1[ORDLOCK_S_RELEASES] - st0[ORDLOCK_S_RELEASES], 1, "releases +1");
	is_int(st1[ORDLOCK_S_OWNERS], 3, "owners 3");
	is_int(st1[ORDLOCK_S_RESOURCES], 1, "resources 1");
	is_int(st1[ORDLOCK_S_WAITERS], 0, "waiters 0");
	ok(st1[ORDLOCK_S_PEAK_WAITERS] >= 1 && st1[ORDLOCK_S_PEAK_RESOURCES] >= 2,
	   "peaks: waiters %llu, resources %llu",
	   (unsigned long long)st1[ORDLOCK_S_PEAK_WAITERS],
	   (unsigned long long)st1[ORDLOCK_S_PEAK_RESOURCES]);

	ret = gt_stats_read(dom, &gs);
	if (ret) {
		ok(1, "# SKIP debugfs stats not readable (%s)", strerror(-ret));
	} else {
		same = 1;
		for (i = ORDLOCK_S_ACQUIRES; i <= ORDLOCK_S_MAX; i++) {
			if (gt_stat(&gs, olc_nl_stat_name(i)) != (long long)st1[i]) {
				diag("  %s: netlink %llu, debugfs %lld", olc_nl_stat_name(i),
				     (unsigned long long)st1[i],
				     gt_stat(&gs, olc_nl_stat_name(i)));
				same = 0;
			}
		}
		ok(same, "every counter equals the debugfs stats");
	}
	nlt_close(s);
	ordlock_close(hol);
	olt_holder_stop(h);
}

static int name_of(const struct olc_nl_domain *d, uint32_t rank, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->names.n; i++)
		if (d->names.v[i].rank == rank)
			return !strcmp(d->names.v[i].name, name);
	return 0;
}

static void test_domain_config(void)
{
	static const struct nlt_rank_name two[] = {
		{ 1, "orders" }, { 2, "inventories" },
	};
	static const struct nlt_rank_name one[] = { { 3, "shipments" } };
	struct nlt_rank_name many[ORDLOCK_RANK_NAMES_MAX];
	char names[ORDLOCK_RANK_NAMES_MAX][16];
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_domain_config cfg;
	struct olc_nl_domain d;
	struct ordlock *ol;
	unsigned int i;
	int ret, all;

	diag("DOMAIN_SET and DOMAIN_GET");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlcfg"));
	is_errno(nlt_domain_get(L, dom, &d), ENOENT,
		 "DOMAIN_GET of a domain that does not exist: ENOENT");
	ok(strstr(L->nl->ext.msg, "no such domain") != NULL, "extack: %s",
	   nlt_extack_str(L));

	ret = nlt_domain_set(L, dom, ORDLOCK_POLICY_DETECT, 250, two, 2, &d);
	is_int(ret, 0, "DOMAIN_SET policy detect, delay 250, two rank names");
	ok(!strcmp(d.name, dom) && d.policy == ORDLOCK_POLICY_DETECT &&
	   d.detect_delay_ms == 250 && d.names.n == 2,
	   "the reply shows the new settings");
	ret = nlt_domain_get(L, dom, &d);
	is_int(ret, 0, "DOMAIN_GET");
	ok(d.policy == ORDLOCK_POLICY_DETECT && d.detect_delay_ms == 250,
	   "policy and delay round-trip");
	ok(d.have_names && d.names.n == 2 && name_of(&d, 1, "orders") &&
	   name_of(&d, 2, "inventories"),
	   "rank names round-trip: 1 orders, 2 inventories");

	ol = olt_open(NULL);
	memset(&cfg, 0, sizeof(cfg));
	ret = ordlock_domain_config(ol, dom, &cfg);
	ok(!ret && cfg.policy == ORDLOCK_POLICY_DETECT && cfg.detect_delay_ms == 250,
	   "the ioctl DOMAIN_CONFIG sees the same settings");
	ordlock_close(ol);

	ret = nlt_domain_set(L, dom, -1, -1, one, 1, &d);
	is_int(ret, 0, "DOMAIN_SET of the names only");
	nlt_domain_get(L, dom, &d);
	ok(d.names.n == 1 && name_of(&d, 3, "shipments"),
	   "the names were replaced: 3 shipments");
	ok(d.policy == ORDLOCK_POLICY_DETECT && d.detect_delay_ms == 250,
	   "policy and delay unchanged");

	ret = nlt_domain_set(L, dom, ORDLOCK_POLICY_TIMEOUT, -1, NULL, -1, &d);
	is_int(ret, 0, "DOMAIN_SET of the policy only");
	nlt_domain_get(L, dom, &d);
	ok(d.policy == ORDLOCK_POLICY_TIMEOUT && d.detect_delay_ms == 250 &&
	   d.names.n == 1, "policy timeout; delay and names unchanged");

	ret = nlt_domain_set(L, dom, -1, -1, NULL, 0, &d);
	is_int(ret, 0, "DOMAIN_SET with an empty list of names");
	nlt_domain_get(L, dom, &d);
	is_int(d.names.n, 0, "no names any more");

	for (i = 0; i < ORDLOCK_RANK_NAMES_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "rank%u", i);
		many[i].rank = 100 + i;
		many[i].name = names[i];
	}
	ret = nlt_domain_set(L, dom, -1, -1, many, ORDLOCK_RANK_NAMES_MAX, &d);
	is_int(ret, 0, "DOMAIN_SET of %d names (the most)", ORDLOCK_RANK_NAMES_MAX);
	nlt_domain_get(L, dom, &d);
	all = d.names.n == ORDLOCK_RANK_NAMES_MAX;
	for (i = 0; all && i < ORDLOCK_RANK_NAMES_MAX; i++)
		all = name_of(&d, 100 + i, names[i]);
	ok(all, "all %u come back (%u)", ORDLOCK_RANK_NAMES_MAX, d.names.n);

	ret = nlt_domain_get(L, ORDLOCK_DEFAULT_DOMAIN, &d);
	ok(!ret && !strcmp(d.name, ORDLOCK_DEFAULT_DOMAIN),
	   "DOMAIN_GET of the default domain");
}

static void test_events(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k15 = ORDLOCK_EX(1, 5), k13 = ORDLOCK_EX(1, 3);
	struct ordlock_key k25 = ORDLOCK_EX(2, 5), k23 = ORDLOCK_EX(2, 3);
	struct ordlock_key k31 = ORDLOCK_EX(3, 1);
	struct olt_holder *h;
	struct ordlock_key three[3] = {
		ORDLOCK_EX(5, 1), ORDLOCK_EX(5, 2), ORDLOCK_EX(5, 3),
	};
	struct olc_nl_outcome o;
	struct olc_nl_event ev;
	struct ordlock *ol;
	struct nlt *s;
	uint64_t oid;
	long max;
	int ret;

	diag("events: order, timeout, limit");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nle"));
	h = olt_holder_start(dom, &k31, 1);
	ol = olt_open(dom);
	s = nlt_must_open();
	oid = gt_owner_id(ol);

	is_int(ordlock_acquire(ol, &k15, 1, LONG_MS, 0, NULL), 0, "ioctl takes x1:5");
	is_errno(ordlock_acquire(ol, &k13, 1, LONG_MS, 0, NULL), EDEADLK,
		 "then x1:3: order violation");
	if (event_ok(ORDLOCK_EVENT_ORDER, dom, &ev, "ioctl order violation")) {
		ok(ev.owner.owner_id == oid && ev.owner.kind == ORDLOCK_KIND_DEVICE &&
		   (pid_t)ev.owner.pid == getpid() && ev.owner.held == 1,
		   "event: the ioctl owner (id, kind, pid, 1 held)");
		ok(!strcmp(ev.owner.comm, "t_nl_admin"), "event: comm %s",
		   ev.owner.comm);
		fail_ok(&ev.failure, ORDLOCK_REASON_ORDER, EDEADLK, "event");
		key_ok(&ev.failure.key, 1, 3, EX, "event: requested key");
		key_ok(&ev.failure.held, 1, 5, EX, "event: held key");
	}

	ret = nlt_acquire(s, dom, &k25, 1, 0, 0, 1, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "netlink takes x2:5");
	ret = nlt_acquire(s, NULL, &k23, 1, 0, 0, 2, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED, "then x2:3: order violation");
	if (event_ok(ORDLOCK_EVENT_ORDER, dom, &ev, "netlink order violation")) {
		ok(ev.owner.kind == ORDLOCK_KIND_NETLINK &&
		   (pid_t)ev.owner.pid == getpid() && ev.owner.held == 1,
		   "event: the netlink owner");
		key_ok(&ev.failure.key, 2, 3, EX, "event: requested key");
		key_ok(&ev.failure.held, 2, 5, EX, "event: held key");
	}

	nlt_release(s, NULL, 0, NULL);
	is_errno(ordlock_acquire(ol, &k31, 1, 100, 0, NULL), ETIMEDOUT,
		 "ioctl waits 100 ms for x3:1 (a child holds it): ETIMEDOUT");
	if (event_ok(ORDLOCK_EVENT_TIMEOUT, dom, &ev, "ioctl timeout")) {
		ok(ev.owner.owner_id == oid && ev.owner.kind == ORDLOCK_KIND_DEVICE,
		   "event: the ioctl owner");
		fail_ok(&ev.failure, ORDLOCK_REASON_TIMEOUT, ETIMEDOUT, "event");
		key_ok(&ev.failure.key, 3, 1, EX, "event: key");
		is_int(ev.failure.pid, h->pid, "event: pid of the holder");
	}
	olt_holder_stop(h);

	max = olt_param_get("max_keys_per_owner");
	is_int(olt_param_set("max_keys_per_owner", 2), 0, "max_keys_per_owner 2");
	ret = nlt_acquire(s, NULL, three, 3, 0, 0, 3, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED, "3 keys: refused");
	is_int(o.error, ENOSPC, "ORDLOCK_A_ERRNO ENOSPC");
	fail_ok(&o.failure, ORDLOCK_REASON_OWNER_LIMIT, ENOSPC, "limit");
	olt_param_set("max_keys_per_owner", max);
	if (event_ok(ORDLOCK_EVENT_LIMIT, dom, &ev, "the limit")) {
		ok(ev.owner.kind == ORDLOCK_KIND_NETLINK && ev.owner.held == 0,
		   "event: the netlink owner, holding nothing");
		fail_ok(&ev.failure, ORDLOCK_REASON_OWNER_LIMIT, ENOSPC, "event");
	}
	nlt_close(s);
	ordlock_close(ol);
}

/* A storm of order violations: the events are rate-limited */
static void test_event_storm(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k15 = ORDLOCK_EX(1, 5), k13 = ORDLOCK_EX(1, 3);
	struct olc_nl_event ev;
	struct ordlock *ol;
	unsigned int i, bad = 0, got = 0, tries, most;
	uint64_t t0, dt;
	int ret;

	diag("a storm of events");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlstorm"));
	ol = olt_open(dom);
	ordlock_acquire(ol, &k15, 1, LONG_MS, 0, NULL);
	t0 = now_ms();
	for (i = 0; i < 1000; i++)
		if (ordlock_acquire(ol, &k13, 1, LONG_MS, 0, NULL) != -EDEADLK)
			bad++;
	dt = now_ms() - t0;
	is_int(bad, 0, "1000 order violations in %llu ms", (unsigned long long)dt);
	while (!(ret = nlt_wait_event(L, ORDLOCK_EVENT_ORDER, dom, 500, &ev)))
		got++;
	ok(ret == -ETIMEDOUT, "no overflow of the listener (%s)", strerror(-ret));
	/* 100 a second, and a window may have begun before the storm */
	most = 100 * (dt / 1000 + 2);
	ok(got >= 1 && got <= most && got < 1000,
	   "the listener got %u of 1000 events (at most %u)", got, most);
	for (tries = 0; tries < 100; tries++) {
		ordlock_acquire(ol, &k13, 1, LONG_MS, 0, NULL);
		if (!nlt_wait_event(L, ORDLOCK_EVENT_ORDER, dom, 100, &ev))
			break;
	}
	ok(tries < 100, "events flow again after the storm (%u tries)", tries);
	ordlock_close(ol);
}


int main(void)
{
	watchdog_start(200);
	L = nlt_must_open();
	if (nlt_subscribe(L))
		bail_out("cannot join the events group");
	test_stats();
	test_domain_config();
	test_events();
	test_event_storm();
	nlt_close(L);
	return tap_done();
}
