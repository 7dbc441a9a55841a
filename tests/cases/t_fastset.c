// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastset: the fast-path setting (issue 28, docs/fastpath.md) through
 * netlink DOMAIN_SET / DOMAIN_GET (ORDLOCK_A_FASTPATH and
 * ORDLOCK_A_FASTPATH_UID) and through ordlockctl (domain NAME set
 * fastpath on uid USER|UID / off, shown by domain show and list, text and
 * JSON): it round-trips, agrees with the ioctl, and every refusal (the
 * default domain, a cluster domain, a domain with owners, a missing,
 * surplus or unmapped uid, a value out of range) is refused with its errno
 * and extack, changing nothing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

static struct nlt *S;
static char ctl[4096];
static char out[16384];

/* DOMAIN_SET with the fast-path attributes given (negative: left out) */
static int nl_set(const char *dom, long fast, long uid, long cluster,
		  struct olc_nl_domain *d)
{
	struct nlt_u32 a[3];
	unsigned int n = 0;

	if (fast >= 0)
		a[n++] = (struct nlt_u32){ ORDLOCK_A_FASTPATH, (uint32_t)fast };
	if (uid >= 0)
		a[n++] = (struct nlt_u32){ ORDLOCK_A_FASTPATH_UID, (uint32_t)uid };
	if (cluster >= 0)
		a[n++] = (struct nlt_u32){ ORDLOCK_A_CLUSTER, (uint32_t)cluster };
	return nlt_domain_set_u32(S, dom, a, n, d);
}

/* The setting as DOMAIN_GET and the ioctl read it agree with @fast, @uid */
static void both_say(const char *dom, uint32_t fast, uint32_t uid, const char *what)
{
	struct ordlock_domain_config cfg;
	struct olc_nl_domain d;
	struct ordlock *ol;
	int ret;

	ret = nlt_domain_get(S, dom, &d);
	ok(!ret && d.fastpath == fast && d.fastpath_uid == uid,
	   "%s: DOMAIN_GET fastpath %u uid %u (ret %d, got %u %u)", what, fast, uid,
	   ret, d.fastpath, d.fastpath_uid);
	ol = olt_open(NULL);
	memset(&cfg, 0, sizeof(cfg));
	ret = ordlock_domain_config(ol, dom, &cfg);
	ordlock_close(ol);
	ok(!ret && cfg.fastpath == fast && (!fast || cfg.fastpath_uid == uid),
	   "%s: the ioctl reads the same (ret %d, got %u %u)", what, ret,
	   cfg.fastpath, cfg.fastpath_uid);
}

static int has_msg(const char *needle)
{
	if (strstr(S->nl->ext.msg, needle))
		return 1;
	diag("extack: %s", nlt_extack_str(S));
	return 0;
}

static void test_netlink(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	uint32_t me = (uint32_t)geteuid();
	struct olc_nl_domain d;
	struct ordlock *own;
	int ret;

	diag("netlink");
	snprintf(dom, sizeof(dom), "%s", olt_domain("fs"));
	ret = nl_set(dom, 0, -1, -1, &d);
	ok(!ret && d.fastpath == 0, "FASTPATH 0 creates the domain without the fast path (%d)",
	   ret);
	ret = nl_set(dom, 1, me, -1, &d);
	ok(!ret && d.fastpath == 1 && d.fastpath_uid == me,
	   "FASTPATH 1 UID %u: the reply says so (ret %d, %u %u)", me, ret,
	   d.fastpath, d.fastpath_uid);
	both_say(dom, 1, me, "after FASTPATH 1");
	ret = nl_set(dom, 1, 4242, -1, &d);
	ok(!ret && d.fastpath_uid == 4242, "another uid while nobody is in it (%d)", ret);
	both_say(dom, 1, 4242, "after UID 4242");

	ret = nl_set(dom, 1, -1, -1, NULL);
	is_errno(ret, EINVAL, "FASTPATH 1 without a uid: EINVAL");
	ok(has_msg("FASTPATH_UID"), "extack names the missing uid");
	ret = nl_set(dom, -1, me, -1, NULL);
	is_errno(ret, EINVAL, "FASTPATH_UID without FASTPATH: EINVAL");
	ok(has_msg("only with"), "extack: taken only with FASTPATH");
	ret = nl_set(dom, 1, 0xffffffffL, -1, NULL);
	is_errno(ret, EINVAL, "an unmapped uid (-1): EINVAL");
	ok(has_msg("does not map"), "extack: does not map");
	ret = nl_set(dom, 2, me, -1, NULL);
	ok(ret == -ERANGE || ret == -EINVAL, "FASTPATH 2: refused by the policy (%d)", ret);
	both_say(dom, 1, 4242, "nothing changed by the refusals");

	ret = nl_set("default", 1, me, -1, NULL);
	is_errno(ret, EINVAL, "the default domain given the fast path: EINVAL");
	ok(has_msg("default domain"), "extack: the default domain");
	ok(S->nl->ext.have_off, "extack names the attribute");
	ret = nl_set("default", 0, -1, -1, NULL);
	is_errno(ret, EINVAL, "the default domain, FASTPATH 0: EINVAL as well");
	both_say("default", 0, 0, "the default domain unchanged");

	ret = nl_set(dom, -1, -1, 1, NULL);
	is_errno(ret, EOPNOTSUPP, "CLUSTER 1 in a fast-path domain: EOPNOTSUPP");
	ok(has_msg("cluster domain"), "extack: not in a cluster domain");
	ret = nl_set(dom, 0, -1, 1, NULL);
	ok(ret != -EOPNOTSUPP || !strstr(S->nl->ext.msg, "fast path"),
	   "FASTPATH 0 with CLUSTER 1 is not refused for the fast path (%d: %s)",
	   ret, nlt_extack_str(S));
	both_say(dom, ret ? 1 : 0, ret ? 4242 : 0, "after FASTPATH 0 with CLUSTER 1");
	if (!ret) {
		/* a cluster host: leave the cluster again before going on */
		nl_set(dom, -1, -1, 0, NULL);
		nl_set(dom, 1, 4242, -1, NULL);
	}
	ret = nl_set(dom, 1, me, 1, NULL);
	is_errno(ret, EOPNOTSUPP, "FASTPATH 1 with CLUSTER 1: EOPNOTSUPP");
	ok(has_msg("fast path is not available in a cluster domain"),
	   "extack: the fast path in a cluster domain");
	both_say(dom, 1, 4242, "nothing changed by the cluster refusals");

	own = olt_open(dom);
	ret = nl_set(dom, 0, -1, -1, NULL);
	is_errno(ret, EBUSY, "FASTPATH 0 while an owner is in the domain: EBUSY");
	ok(has_msg("has owners"), "extack: the domain has owners");
	ret = nl_set(dom, 1, me, -1, NULL);
	is_errno(ret, EBUSY, "another uid while an owner is in it: EBUSY");
	ret = nl_set(dom, 1, 4242, -1, &d);
	ok(!ret && d.fastpath == 1, "the same setting again with an owner: no change, 0 (%d)",
	   ret);
	both_say(dom, 1, 4242, "nothing changed while the owner was in");
	ordlock_close(own);

	ret = nl_set(dom, 0, 77, -1, &d);
	ok(!ret && d.fastpath == 0 && d.fastpath_uid == 0,
	   "FASTPATH 0 once nobody is in it (a uid with 0 is ignored) (%d)", ret);
	both_say(dom, 0, 0, "after FASTPATH 0");
}

/* Run a shell command line, its output (both streams) in out[]; its status */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run(const char *fmt, ...)
{
	char cmd[4096 + 512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return olt_run(out, sizeof(out), "%s 2>&1", cmd);
}

static int check(int cond, const char *what)
{
	ok(cond, "%s", what);
	if (!cond)
		diag("  output: %s", out);
	return cond;
}

static void test_ctl(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX], want[128];
	uint32_t me = (uint32_t)geteuid();
	struct ordlock *own;
	int st;

	diag("ordlockctl");
	snprintf(ctl, sizeof(ctl), "%s", olt_ctl_path());
	snprintf(dom, sizeof(dom), "%s", olt_domain("fc"));
	st = run("%s domain %s set fastpath on uid %u", ctl, dom, me);
	snprintf(want, sizeof(want), "fastpath uid %u", me);
	check(st == 0 && strstr(out, want), "set fastpath on uid N: exit 0, says so");
	both_say(dom, 1, me, "after ordlockctl set fastpath on");
	st = run("%s domain %s", ctl, dom);
	check(st == 0 && strstr(out, want), "domain NAME shows it");
	st = run("%s domain", ctl);
	check(st == 0 && strstr(out, dom) && strstr(out, want), "the domain list shows it");
	st = run("%s domain -j %s", ctl, dom);
	snprintf(want, sizeof(want), "\"fastpath_uid\":%u", me);
	check(st == 0 && strstr(out, "\"fastpath\":true") && strstr(out, want),
	      "JSON: fastpath true, fastpath_uid");
	st = run("%s domain -j --pretty %s", ctl, dom);
	snprintf(want, sizeof(want), "\"fastpath_uid\": %u", me);
	check(st == 0 && strstr(out, "\"fastpath\": true") && strstr(out, want),
	      "pretty JSON: fastpath true, fastpath_uid");

	st = run("%s domain %s set fastpath on uid root", ctl, dom);
	check(st == 0 && strstr(out, "fastpath uid 0"), "a user name: root is uid 0");
	both_say(dom, 1, 0, "after uid root");
	st = run("%s domain %s set fastpath on", ctl, dom);
	check(st == 64, "fastpath on without uid: exit 64");
	st = run("%s domain %s set fastpath on uid no-such-user-fs", ctl, dom);
	check(st == 64 && strstr(out, "no such user"), "an unknown user: exit 64");
	st = run("%s domain %s set fastpath maybe", ctl, dom);
	check(st == 64, "fastpath maybe: exit 64");
	st = run("%s domain default set fastpath on uid 0", ctl);
	check(st != 0 && strstr(out, "default domain"), "the default domain: refused, says why");
	st = run("%s domain %s set cluster on", ctl, dom);
	check(st != 0 && strstr(out, "cluster domain"), "cluster on in a fast-path domain: refused");
	own = olt_open(dom);
	st = run("%s domain %s set fastpath off", ctl, dom);
	check(st != 0 && strstr(out, "has owners"), "with an owner: refused, says why");
	ordlock_close(own);
	both_say(dom, 1, 0, "nothing changed by the refusals");

	st = run("%s domain %s set fastpath off", ctl, dom);
	check(st == 0 && !strstr(out, "fastpath"), "set fastpath off: exit 0, not shown");
	st = run("%s domain -j %s", ctl, dom);
	check(st == 0 && strstr(out, "\"fastpath\":false") &&
	      strstr(out, "\"fastpath_uid\":null"), "JSON: fastpath false, fastpath_uid null");
	both_say(dom, 0, 0, "after ordlockctl set fastpath off");

	/* Where netlink cannot serve (another network namespace): the ioctl */
	if (run("unshare -n true")) {
		ok(1, "ioctl fallback # SKIP unshare -n does not work here");
		return;
	}
	st = run("unshare -n %s domain %s set fastpath on uid 4243", ctl, dom);
	check(st == 0 && strstr(out, "fastpath uid 4243"),
	      "in another network namespace: set through the ioctl");
	both_say(dom, 1, 4243, "after the ioctl fallback");
	st = run("unshare -n %s domain -j %s", ctl, dom);
	check(st == 0 && strstr(out, "\"fastpath_uid\":4243"),
	      "in another network namespace: read through the ioctl");
}

int main(void)
{
	S = nlt_must_open();
	test_netlink();
	test_ctl();
	nlt_close(S);
	return tap_done();
}
