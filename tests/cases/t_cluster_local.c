// SPDX-License-Identifier: GPL-2.0
/*
 * t_cluster_local: the cluster setting of a domain (issue 19) where there
 * is no cluster: what make check can test without corosync or the DLM.
 *
 *  - ioctl DOMAIN_CONFIG with ORDLOCK_DOMAIN_SET_CLUSTER: refused without
 *    CAP_SYS_ADMIN (EPERM), @cluster 2 (EINVAL), the default domain
 *    (EINVAL), a domain with an owner in it (EBUSY); policy detect in the
 *    same call or already set is no reason (issue 41: detect across
 *    nodes), the missing cluster is, and the policy is not set;
 *  - without the companion module (request_module() cannot find
 *    ordlock_dlm in the VM): ENOPKG; with dlm.ko and the tree's
 *    ordlock_dlm.ko loaded but no dlm_controld: ENOTCONN; each failed call
 *    changed nothing (cluster 0, the policy asked for in the same call not
 *    set), and the companion is not left pinned (rmmod works);
 *  - netlink DOMAIN_SET/GET carry ORDLOCK_A_CLUSTER (ERANGE above 1, not
 *    taken by ACQUIRE), refusals with an extack saying why;
 *  - ordlockctl domain NAME set cluster on|off: the message, the usage
 *    error, "cluster": false in the JSON.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

static int config(struct ordlock *ol, const char *dom, unsigned int flags,
		  unsigned int policy, unsigned int cluster,
		  struct ordlock_domain_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->flags = flags;
	cfg->policy = policy;
	cfg->cluster = cluster;
	return ordlock_domain_config(ol, dom, cfg);
}

static char tree[PATH_MAX];

/* The run's tree, from tests/build/vm/t_cluster_local */
static void find_tree(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		bail_out("readlink: %s", strerror(errno));
	self[n] = '\0';
	snprintf(tree, sizeof(tree), "%.*s/../../..",
		 (int)(strrchr(self, '/') - self), self);
}

/* Run @cmd through the shell; its output into @out. Returns the exit status */
static int run(const char *cmd, char *out, size_t len)
{
	return olt_run(out, len, "%s 2>&1", cmd);
}

static int ctl(const char *args, char *out, size_t len)
{
	char cmd[PATH_MAX + 256];

	snprintf(cmd, sizeof(cmd), "%s/tools/ordlockctl/ordlockctl %s", tree, args);
	return run(cmd, out, len);
}

/* The error of a SET_CLUSTER by a process without CAP_SYS_ADMIN */
static int unprivileged_set(const char *dom)
{
	struct ordlock_domain_config cfg;
	int st, fds[2], err = 0;
	pid_t pid;

	if (pipe(fds))
		bail_out("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (!pid) {
		struct ordlock *ol = olt_open(NULL);

		err = setgid(65534) || setuid(65534) ? -1000 :
		      config(ol, dom, ORDLOCK_DOMAIN_SET_CLUSTER, 0, 1, &cfg);
		if (write(fds[1], &err, sizeof(err)) != sizeof(err))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &err, sizeof(err)) != sizeof(err))
		err = -2000;
	close(fds[0]);
	waitpid(pid, &st, 0);
	return err;
}

static void test_ioctl(const char *dom)
{
	struct ordlock *adm = olt_open(NULL), *in;
	struct ordlock_domain_config cfg;
	int ret;

	is_int(config(adm, dom, 0, 0, 0, &cfg), 0, "ioctl: read a new domain");
	is_int(cfg.cluster, 0, "ioctl: not a cluster domain by default");
	is_int(unprivileged_set(dom), -EPERM, "ioctl: SET_CLUSTER without CAP_SYS_ADMIN: EPERM");
	is_errno(config(adm, dom, ORDLOCK_DOMAIN_SET_CLUSTER, 0, 2, &cfg), EINVAL,
		 "ioctl: cluster 2: EINVAL");
	is_errno(config(adm, ORDLOCK_DEFAULT_DOMAIN, ORDLOCK_DOMAIN_SET_CLUSTER, 0, 1, &cfg),
		 EINVAL, "ioctl: the default domain cannot be a cluster domain: EINVAL");
	ret = config(adm, dom, ORDLOCK_DOMAIN_SET_CLUSTER | ORDLOCK_DOMAIN_SET_POLICY,
		     ORDLOCK_POLICY_DETECT, 1, &cfg);
	ok(ret == -ENOPKG || ret == -ENOTCONN,
	   "ioctl: cluster on with policy detect in the same call: refused for the missing cluster only (%d)",
	   ret);
	is_int(config(adm, dom, 0, 0, 0, &cfg), 0, "ioctl: read back");
	is_int(cfg.policy, ORDLOCK_POLICY_ENFORCE, "ioctl: the policy asked for is not set");
	is_int(config(adm, dom, ORDLOCK_DOMAIN_SET_POLICY, ORDLOCK_POLICY_DETECT, 0, &cfg), 0,
	       "ioctl: policy detect");
	ret = config(adm, dom, ORDLOCK_DOMAIN_SET_CLUSTER, 0, 1, &cfg);
	ok(ret == -ENOPKG || ret == -ENOTCONN,
	   "ioctl: cluster on in a detect domain: refused for the missing cluster only (%d)",
	   ret);
	is_int(config(adm, dom, 0, 0, 0, &cfg), 0, "ioctl: read back");
	is_int(cfg.policy, ORDLOCK_POLICY_DETECT, "ioctl: still detect");
	is_int(cfg.cluster, 0, "ioctl: still not a cluster domain");
	is_int(config(adm, dom, ORDLOCK_DOMAIN_SET_POLICY, ORDLOCK_POLICY_ENFORCE, 0, &cfg), 0,
	       "ioctl: back to enforce");

	in = olt_open(dom);
	is_errno(config(adm, dom, ORDLOCK_DOMAIN_SET_CLUSTER, 0, 1, &cfg), EBUSY,
		 "ioctl: cluster on while an owner is in the domain: EBUSY");
	is_int(config(adm, dom, ORDLOCK_DOMAIN_SET_CLUSTER, 0, 0, &cfg), 0,
	       "ioctl: cluster off where it is off already: nothing to do, 0");
	ordlock_close(in);
	ordlock_close(adm);
}

/* ENOPKG or ENOTCONN: what a cluster-on call says, and that it changed nothing */
static void test_no_cluster(const char *dom, int want, const char *what)
{
	struct ordlock *adm = olt_open(NULL);
	struct ordlock_domain_config cfg;

	is_errno(config(adm, dom, ORDLOCK_DOMAIN_SET_CLUSTER | ORDLOCK_DOMAIN_SET_POLICY,
			ORDLOCK_POLICY_TIMEOUT, 1, &cfg), want,
		 "%s: cluster on (and policy timeout): %s", what, strerror(want));
	is_int(config(adm, dom, 0, 0, 0, &cfg), 0, "%s: read back", what);
	is_int(cfg.cluster, 0, "%s: not a cluster domain", what);
	is_int(cfg.policy, ORDLOCK_POLICY_ENFORCE, "%s: the policy of the failed call was not set",
	       what);
	ordlock_close(adm);
}

static void test_modules(const char *dom)
{
	char cmd[PATH_MAX + 64], path[PATH_MAX + 32], out[4096];
	const char *ko;

	/* Loaded by an earlier test: it is not in use, so it goes */
	if (!access("/sys/module/ordlock_dlm", F_OK))
		is_int(run("rmmod ordlock_dlm", out, sizeof(out)), 0,
		       "an ordlock_dlm loaded before is unloaded: %s", out);
	test_no_cluster(dom, ENOPKG, "no companion");
	ok(access("/sys/module/ordlock_dlm", F_OK), "no companion: none was loaded");
	/* The companion built next to the module under test (ORDLOCK_KO) */
	ko = getenv("ORDLOCK_KO");
	if (ko && strrchr(ko, '/'))
		snprintf(path, sizeof(path), "%.*s/ordlock_dlm.ko",
			 (int)(strrchr(ko, '/') - ko), ko);
	else
		snprintf(path, sizeof(path), "%s/kmod/ordlock_dlm.ko", tree);
	/* dlm.ko ships with Debian's 6.1 and 6.12 kernels; the debug kernel has none */
	if (run("modinfo dlm", out, sizeof(out)) && access("/sys/module/dlm", F_OK)) {
		ok(access(path, F_OK), "a kernel without the DLM: no companion was built (%s)",
		   path);
		test_no_cluster(dom, ENOPKG, "a kernel without the DLM");
		return;
	}
	ok(!run("modprobe dlm", out, sizeof(out)), "modprobe dlm: %s", out);
	snprintf(cmd, sizeof(cmd), "insmod %s", path);
	is_int(run(cmd, out, sizeof(out)), 0, "insmod ordlock_dlm.ko: %s", out);
	test_no_cluster(dom, ENOTCONN, "no dlm_controld");
	is_int(run("rmmod ordlock_dlm", out, sizeof(out)), 0,
	       "the failed join left the companion unpinned: rmmod works %s", out);
}

/* DOMAIN_SET of cluster @v, and @policy unless < 0 */
static int nl_set(struct nlt *s, const char *dom, int policy, uint32_t v,
		  struct olc_nl_domain *d)
{
	const struct nlt_u32 a[] = {
		{ ORDLOCK_A_CLUSTER, v }, { ORDLOCK_A_POLICY, (uint32_t)policy },
	};

	return nlt_domain_set_u32(s, dom, a, policy >= 0 ? 2 : 1, d);
}

static void test_netlink(const char *dom)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct nlt *s = nlt_must_open();
	struct olc_nl_domain d;
	struct nl_msg *msg;
	int ret;

	is_int(nl_set(s, dom, -1, 0, &d), 0, "nl: DOMAIN_SET cluster 0");
	is_int(d.cluster, 0, "nl: the reply says cluster 0");
	is_int(nl_set(s, dom, -1, 2, NULL), -ERANGE, "nl: cluster 2: ERANGE (%s)",
	       nlt_extack_str(s));
	ret = nl_set(s, dom, ORDLOCK_POLICY_DETECT, 1, NULL);
	ok(ret == -ENOPKG || ret == -ENOTCONN,
	   "nl: cluster 1 with policy detect: refused for the missing cluster only (%s)",
	   nlt_extack_str(s));
	ok(strstr(nlt_extack_str(s), "no cluster") != NULL,
	   "nl: the extack says no cluster");
	is_int(nl_set(s, ORDLOCK_DEFAULT_DOMAIN, -1, 1, NULL), -EINVAL,
	       "nl: the default domain: EINVAL (%s)", nlt_extack_str(s));
	ok(strstr(nlt_extack_str(s), "default domain") != NULL, "nl: the extack says so");
	ret = nl_set(s, dom, -1, 1, NULL);
	ok(ret == -ENOPKG || ret == -ENOTCONN,
	   "nl: cluster 1 without a cluster: %d (%s)", ret, nlt_extack_str(s));
	ok(strstr(nlt_extack_str(s), "no cluster") != NULL, "nl: the extack says no cluster");
	is_int(nlt_domain_get(s, dom, &d), 0, "nl: DOMAIN_GET");
	is_int(d.cluster, 0, "nl: DOMAIN_GET says cluster 0");
	is_int(d.policy, ORDLOCK_POLICY_ENFORCE, "nl: the refused calls set no policy");
	msg = nlt_acquire_msg(s, dom, &k, 1, 0, 0, 1);
	if (!msg || nla_put_u32(msg, ORDLOCK_A_CLUSTER, 1))
		bail_out("cannot build ACQUIRE");
	is_int(nlt_request(s, msg, NULL), -EINVAL,
	       "nl: ACQUIRE does not take ORDLOCK_A_CLUSTER (%s)", nlt_extack_str(s));
	nlt_close(s);
}

static void test_ctl(const char *dom)
{
	char args[128], out[4096];

	snprintf(args, sizeof(args), "domain %s set cluster on", dom);
	ok(ctl(args, out, sizeof(out)) != 0, "ctl: %s fails", args);
	ok(strstr(out, "no cluster") != NULL, "ctl: saying no cluster: %s", out);
	snprintf(args, sizeof(args), "domain %s set policy detect cluster on", dom);
	ok(ctl(args, out, sizeof(out)) != 0, "ctl: %s fails", args);
	ok(strstr(out, "no cluster") != NULL,
	   "ctl: for the missing cluster, not for detect: %s", out);
	snprintf(args, sizeof(args), "domain %s set cluster maybe", dom);
	is_int(ctl(args, out, sizeof(out)), 64, "ctl: cluster maybe is a usage error (EX_USAGE)");
	ok(strstr(out, "cluster needs on or off") != NULL, "ctl: saying so: %s", out);
	snprintf(args, sizeof(args), "domain %s set cluster off", dom);
	is_int(ctl(args, out, sizeof(out)), 0, "ctl: %s", args);
	ok(strstr(out, "cluster on") == NULL, "ctl: not a cluster domain: %s", out);
	snprintf(args, sizeof(args), "--json domain %s", dom);
	is_int(ctl(args, out, sizeof(out)), 0, "ctl: %s", args);
	ok(strstr(out, "\"cluster\":false") || strstr(out, "\"cluster\": false"),
	   "ctl: the JSON has \"cluster\": false: %s", out);
}

int main(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];

	watchdog_start(300);
	find_tree();
	snprintf(dom, sizeof(dom), "%s", olt_domain("cl"));
	test_ioctl(dom);
	snprintf(dom, sizeof(dom), "%s", olt_domain("clmod"));
	test_modules(dom);
	snprintf(dom, sizeof(dom), "%s", olt_domain("clnl"));
	test_netlink(dom);
	snprintf(dom, sizeof(dom), "%s", olt_domain("clctl"));
	test_ctl(dom);
	return tap_done();
}
