// SPDX-License-Identifier: GPL-2.0
/*
 * t_strict: strict ranks, seed 000's lock hierarchy with levels ("a lock
 * may only be taken at a level above every level held").
 *
 *  - off (the default): a higher id of a held rank is allowed later;
 *  - on (ioctl DOMAIN_CONFIG): the same request fails with EDEADLK, reason
 *    "strict", naming the held key, and takes nothing; a higher rank is
 *    fine; a lower key is still an order violation (reason "order"); one
 *    request may take several keys of one rank; the refusal counts as an
 *    order violation and is an ORDER event;
 *  - bad values are refused; in a "detect" domain it has no effect;
 *  - netlink DOMAIN_SET/GET carry ORDLOCK_A_STRICT (ERANGE above 1, not
 *    taken by ACQUIRE), a netlink ACQUIRE is refused the same way;
 *  - ordlockctl domain NAME set strict on|off, text and JSON.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define LONG_MS 30000

static int config(struct ordlock *ol, const char *dom, unsigned int flags,
		  unsigned int strict, struct ordlock_domain_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->flags = flags;
	cfg->strict = strict;
	return ordlock_domain_config(ol, dom, cfg);
}

static void test_ioctl(const char *dom)
{
	struct ordlock_key k30 = ORDLOCK_EX(2, 30), k40 = ORDLOCK_EX(2, 40);
	struct ordlock_key k10 = ORDLOCK_EX(2, 10), k3 = ORDLOCK_EX(3, 1);
	struct ordlock_key pair[2] = { ORDLOCK_EX(4, 2), ORDLOCK_EX(4, 1) };
	struct ordlock_key k43 = ORDLOCK_EX(4, 3);
	struct ordlock *adm = olt_open(NULL), *a;
	struct ordlock_domain_config cfg;
	struct ordlock_failure kf;
	const struct ordlock_failure *f;
	char buf[256];
	int fd;

	is_int(config(adm, dom, 0, 0, &cfg), 0, "ioctl: read a new domain");
	is_int(cfg.strict, 0, "ioctl: strict ranks are off by default");
	a = olt_open(dom);
	is_int(ordlock_acquire(a, &k30, 1, LONG_MS, 0, NULL), 0, "off: hold 2:30");
	is_int(ordlock_acquire(a, &k40, 1, LONG_MS, 0, NULL), 0,
	       "off: 2:40 later is allowed (same rank, higher id)");
	is_int(ordlock_release_all(a), 0, "off: release");

	is_int(ordlock_set_strict(adm, dom, 1), 0, "on: ordlock_set_strict(1)");
	is_int(config(adm, dom, 0, 0, &cfg), 0, "on: read back");
	is_int(cfg.strict, 1, "on: strict 1");
	is_int(cfg.policy, ORDLOCK_POLICY_ENFORCE, "on: the policy is untouched");

	is_int(ordlock_acquire(a, &k30, 1, LONG_MS, 0, NULL), 0, "on: hold 2:30");
	is_errno(ordlock_acquire(a, &k40, 1, LONG_MS, 0, NULL), EDEADLK,
		 "on: 2:40 later: EDEADLK");
	f = ordlock_last_failure(a);
	is_int(f->reason, ORDLOCK_REASON_STRICT, "on: reason strict");
	ok(olt_key_eq(&f->key, 2, 40, EX), "on: failure.key 2:40");
	ok(olt_key_eq(&f->held, 2, 30, EX), "on: failure.held 2:30");
	ok(!strcmp(ordlock_reason_name(f->reason), "strict"), "on: reason name \"strict\"");
	ordlock_strfailure(f, buf, sizeof(buf));
	ok(!strcmp(buf, "strict ranks: requested exclusive 2:40 is not of a rank above held exclusive 2:30"),
	   "on: strfailure \"%s\"", buf);
	is_int(ordlock_kernel_last_failure(a, &kf), 0, "on: LAST_FAILURE");
	is_int(kf.reason, ORDLOCK_REASON_STRICT, "on: the kernel keeps the record");
	is_int(olt_nheld(a), 1, "on: nothing taken");
	is_int(olt_probe(dom, 2, 40, EX), 0, "on: 2:40 is free");
	is_errno(ordlock_try_acquire(a, &k40, 1, NULL), EDEADLK,
		 "on: a try-lock is refused the same way");
	is_errno(ordlock_acquire(a, &k10, 1, LONG_MS, 0, NULL), EDEADLK,
		 "on: 2:10 (below) is refused");
	is_int(ordlock_last_failure(a)->reason, ORDLOCK_REASON_ORDER,
	       "on: ...as an order violation: the plain rule is broken too");
	is_int(ordlock_acquire(a, &k3, 1, LONG_MS, 0, NULL), 0,
	       "on: rank 3 above rank 2 is granted");
	is_int(ordlock_acquire(a, pair, 2, LONG_MS, 0, NULL), 0,
	       "on: one request takes 4:1 and 4:2 together");
	is_errno(ordlock_acquire(a, &k43, 1, LONG_MS, 0, NULL), EDEADLK,
		 "on: 4:3 after them is refused");
	ok(olt_key_eq(&ordlock_last_failure(a)->held, 4, 1, EX),
	   "on: failure.held names the lowest held key of rank 4");
	is_int(olt_nheld(a), 4, "on: four keys held");
	ordlock_close(a);

	/* bad input changes nothing */
	is_errno(config(adm, dom, ORDLOCK_DOMAIN_SET_STRICT, 2, &cfg), EINVAL,
		 "bad: strict 2: EINVAL");
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	snprintf(cfg.name, sizeof(cfg.name), "%s", dom);
	cfg.flags = ORDLOCK_DOMAIN_SET_STRICT | ORDLOCK_DOMAIN_SET_CLUSTER;
	cfg.cluster = 2;
	fd = olt_raw_fd();
	is_errno(olt_ioctl(fd, ORDLOCK_IOC_DOMAIN_CONFIG, &cfg), EINVAL,
		 "bad: cluster 2 (with strict): EINVAL");
	close(fd);
	is_int(config(adm, dom, 0, 0, &cfg), 0, "bad: read back");
	is_int(cfg.strict, 1, "bad: still strict");

	/* in a "detect" domain strict ranks change nothing */
	is_int(ordlock_set_policy(adm, dom, ORDLOCK_POLICY_DETECT, 0), 0,
	       "detect: policy detect");
	a = olt_open(dom);
	is_int(ordlock_acquire(a, &k30, 1, LONG_MS, 0, NULL), 0, "detect: hold 2:30");
	is_int(ordlock_acquire(a, &k40, 1, LONG_MS, 0, NULL), 0,
	       "detect: 2:40 later is allowed (any order)");
	ordlock_close(a);
	is_int(ordlock_set_policy(adm, dom, ORDLOCK_POLICY_ENFORCE, 0), 0,
	       "detect: back to enforce");
	is_int(ordlock_set_strict(adm, dom, 0), 0, "off: ordlock_set_strict(0)");
	a = olt_open(dom);
	is_int(ordlock_acquire(a, &k30, 1, LONG_MS, 0, NULL), 0, "off again: hold 2:30");
	is_int(ordlock_acquire(a, &k40, 1, LONG_MS, 0, NULL), 0, "off again: 2:40 allowed");
	ordlock_close(a);
	ordlock_close(adm);
}

static int nl_set_strict(struct nlt *s, const char *dom, uint32_t v,
			 struct olc_nl_domain *d)
{
	const struct nlt_u32 a = { ORDLOCK_A_STRICT, v };

	return nlt_domain_set_u32(s, dom, &a, 1, d);
}

static void test_netlink(const char *dom)
{
	struct ordlock_key k30 = ORDLOCK_EX(2, 30), k40 = ORDLOCK_EX(2, 40);
	uint64_t st0[ORDLOCK_S_MAX + 1], st1[ORDLOCK_S_MAX + 1];
	struct nlt *s = nlt_must_open(), *l = nlt_must_open();
	struct olc_nl_outcome o;
	struct olc_nl_event ev;
	struct olc_nl_domain d;
	struct nl_msg *msg;

	is_int(nl_set_strict(s, dom, 1, &d), 0, "nl: DOMAIN_SET strict 1");
	ok(d.have_strict && d.strict == 1, "nl: the reply says strict 1");
	is_int(nlt_domain_get(s, dom, &d), 0, "nl: DOMAIN_GET");
	ok(d.have_strict && d.strict == 1, "nl: DOMAIN_GET says strict 1");
	is_int(nl_set_strict(s, dom, 2, NULL), -ERANGE,
	       "nl: strict 2: ERANGE (%s)", nlt_extack_str(s));
	msg = nlt_acquire_msg(s, dom, &k30, 1, 0, 0, 1);
	if (!msg || nla_put_u32(msg, ORDLOCK_A_STRICT, 1))
		bail_out("cannot build ACQUIRE");
	is_int(nlt_request(s, msg, NULL), -EINVAL,
	       "nl: ACQUIRE does not take ORDLOCK_A_STRICT (%s)", nlt_extack_str(s));
	ok(strstr(nlt_extack_str(s), "not taken") != NULL, "nl: the extack says so");

	is_int(nlt_subscribe(l), 0, "nl: subscribed to events");
	is_int(nlt_get_stats(s, dom, st0), 0, "nl: counters before");
	is_int(nlt_acquire(s, dom, &k30, 1, 0, 0, 2, &o), 0, "nl: ACQUIRE 2:30");
	is_int(o.status, ORDLOCK_STATUS_GRANTED, "nl: granted");
	is_int(nlt_acquire(s, NULL, &k40, 1, 0, 0, 3, &o), 0, "nl: ACQUIRE 2:40");
	is_int(o.status, ORDLOCK_STATUS_REFUSED, "nl: refused");
	is_int(o.error, EDEADLK, "nl: EDEADLK");
	is_int(o.failure.reason, ORDLOCK_REASON_STRICT, "nl: reason strict");
	ok(olt_key_eq(&o.failure.held, 2, 30, EX), "nl: failure.held 2:30");
	is_int(nlt_get_stats(s, dom, st1), 0, "nl: counters after");
	is_int(st1[ORDLOCK_S_ORDER_VIOLATIONS] - st0[ORDLOCK_S_ORDER_VIOLATIONS], 1,
	       "nl: counted as an order violation");
	if (ok(!nlt_wait_event(l, ORDLOCK_EVENT_ORDER, dom, 5000, &ev),
	       "nl: an ORDER event")) {
		ok(ev.have_failure && ev.failure.reason == ORDLOCK_REASON_STRICT,
		   "nl: the event's failure has reason strict");
	}
	is_int(nlt_release(s, NULL, 0, &o), 0, "nl: release all");
	is_int(nl_set_strict(s, dom, 0, &d), 0, "nl: DOMAIN_SET strict 0");
	ok(d.have_strict && d.strict == 0, "nl: the reply says strict 0");
	nlt_close(l);
	nlt_close(s);
}

static void test_ctl(const char *dom)
{
	struct ordlock_domain_config cfg;
	struct ordlock *adm = olt_open(NULL);
	char args[128], out[4096];

	snprintf(args, sizeof(args), "domain %s set strict on", dom);
	is_int(olt_ctl(out, sizeof(out), "%s", args), 0, "ctl: %s", args);
	ok(strstr(out, "strict ranks") != NULL, "ctl: the output says strict ranks: %s", out);
	is_int(config(adm, dom, 0, 0, &cfg), 0, "ctl: read through the ioctl");
	is_int(cfg.strict, 1, "ctl: the domain is strict");
	snprintf(args, sizeof(args), "--json domain %s", dom);
	is_int(olt_ctl(out, sizeof(out), "%s", args), 0, "ctl: %s", args);
	ok(strstr(out, "\"strict\":true") || strstr(out, "\"strict\": true"),
	   "ctl: the JSON has \"strict\": true: %s", out);
	snprintf(args, sizeof(args), "domain %s set strict maybe", dom);
	is_int(olt_ctl(out, sizeof(out), "%s", args), 64, "ctl: strict maybe is a usage error (EX_USAGE)");
	ok(strstr(out, "strict needs on or off") != NULL, "ctl: saying so: %s", out);
	snprintf(args, sizeof(args), "domain %s set strict off", dom);
	is_int(olt_ctl(out, sizeof(out), "%s", args), 0, "ctl: %s", args);
	ok(strstr(out, "strict ranks") == NULL, "ctl: no longer strict: %s", out);
	is_int(config(adm, dom, 0, 0, &cfg), 0, "ctl: read again");
	is_int(cfg.strict, 0, "ctl: the domain is not strict");
	ordlock_close(adm);
}

int main(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];

	watchdog_start(300);
	snprintf(dom, sizeof(dom), "%s", olt_domain("strict"));
	test_ioctl(dom);
	snprintf(dom, sizeof(dom), "%s", olt_domain("strictnl"));
	test_netlink(dom);
	snprintf(dom, sizeof(dom), "%s", olt_domain("strictctl"));
	test_ctl(dom);
	return tap_done();
}
