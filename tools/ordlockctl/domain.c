// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl domain: show or change a domain's policy, detection delay and
 * rank names, through netlink DOMAIN_GET / DOMAIN_SET. When netlink cannot
 * serve (another network namespace), the policy and the delay are read and
 * changed through the ioctl ORDLOCK_IOC_DOMAIN_CONFIG instead.
 */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "libordlock.h"
#include "ordlockctl.h"

/*
 * Why cycles across nodes are not detected in cluster domain @d, NULL
 * when they are (a registered ordlock-xdetectd in its group with every
 * member)
 */
static const char *olc_domain_xd_off(const struct olc_nl_domain *d)
{
	if (!d->xd_pid)
		return "no ordlock-xdetectd";
	if (d->xd_state != ORDLOCK_XD_ON)
		return "ordlock-xdetectd is not in its group with every member";
	return NULL;
}

/* The detection of a cluster domain with policy detect, a line of its own */
static void olc_domain_xd_text(const struct olc_nl_domain *d)
{
	const char *off = olc_domain_xd_off(d);

	if (!d->have_xd || d->policy != ORDLOCK_POLICY_DETECT)
		return;
	if (!off)
		printf("  detect: across nodes (ordlock-xdetectd pid %u, %u members)\n",
		       d->xd_pid, d->xd_members);
	else
		printf("  detect: this node only (%s: cycles across nodes end by their timeouts)\n",
		       off);
}

static void olc_domain_text(const struct olc_nl_domain *d)
{
	unsigned int i;

	printf("%sdomain %s%s: policy %s, detect_delay_ms %u%s", olc_c(OLC_BOLD),
	       d->name, olc_c(OLC_RESET), olc_policy_str(d->policy),
	       d->detect_delay_ms, d->strict ? ", strict ranks" : "");
	if (d->cluster)
		printf(", cluster on");
	if (d->max_hold_ms)
		printf(", max_hold_ms %u", d->max_hold_ms);
	if (d->fastpath)
		printf(", fastpath uid %u", d->fastpath_uid);
	putchar('\n');
	olc_domain_xd_text(d);
	if (!d->have_names)
		return;
	printf("  rank names:");
	if (!d->names.n)
		printf(" none");
	for (i = 0; i < d->names.n; i++)
		printf(" %s=%u", d->names.v[i].name, d->names.v[i].rank);
	putchar('\n');
}

static void olc_domain_json(struct olc_json *j, const struct olc_nl_domain *d)
{
	unsigned int i;

	olc_json_obj(j, NULL);
	olc_json_str(j, "domain", d->name);
	olc_json_str(j, "policy", olc_policy_str(d->policy));
	olc_json_u64(j, "detect_delay_ms", d->detect_delay_ms);
	olc_json_bool(j, "strict", d->strict);
	olc_json_u64(j, "max_hold_ms", d->max_hold_ms);
	olc_json_bool(j, "cluster", d->cluster);
	if (d->have_xd) {
		const char *off = olc_domain_xd_off(d);

		olc_json_obj(j, "xdetect");
		olc_json_str(j, "state", off ? "off" : "on");
		if (off)
			olc_json_str(j, "reason", off);
		else
			olc_json_null(j, "reason");
		olc_json_u64(j, "members", d->xd_members);
		if (d->xd_pid)
			olc_json_u64(j, "pid", d->xd_pid);
		else
			olc_json_null(j, "pid");
		olc_json_obj_end(j);
	} else {
		olc_json_null(j, "xdetect");
	}
	olc_json_bool(j, "fastpath", d->fastpath);
	if (d->fastpath)
		olc_json_u64(j, "fastpath_uid", d->fastpath_uid);
	else
		olc_json_null(j, "fastpath_uid");
	if (d->have_names) {
		olc_json_arr(j, "rank_names");
		for (i = 0; i < d->names.n; i++) {
			olc_json_obj(j, NULL);
			olc_json_u64(j, "rank", d->names.v[i].rank);
			olc_json_str(j, "name", d->names.v[i].name);
			olc_json_obj_end(j);
		}
		olc_json_arr_end(j);
	} else {
		olc_json_null(j, "rank_names");
	}
	olc_json_obj_end(j);
}

/*
 * Netlink cannot serve at all (as opposed to refusing a request): no
 * socket of the family, or a network namespace the family does not serve
 */
static int olc_nl_unusable(const struct olc_nl *nl, int err)
{
	/*
	 * EOPNOTSUPP is also a setting refused (the fast path with a
	 * cluster): the kernel's message tells them apart
	 */
	return !nl || (err == -EOPNOTSUPP &&
		       (!nl->ext.msg[0] || strstr(nl->ext.msg, "initial network namespace")));
}

/* The ioctl: read (@flags 0) or change the policy and delay */
static int olc_domain_ioctl(const char *name, unsigned int flags,
			    unsigned int policy, unsigned int delay,
			    unsigned int strict, unsigned int max_hold,
			    unsigned int cluster, unsigned int fastpath,
			    unsigned int fast_uid, struct olc_nl_domain *out)
{
	struct ordlock_domain_config cfg;
	struct ordlock *ol;
	int ret;

	ol = ordlock_open(NULL);
	if (!ol) {
		ret = -errno;
		if (ret == -ENOENT && olc_module_missing())
			olc_err("domain %s: %s", name, olc_module_missing());
		else
			olc_err("domain %s: cannot open %s: %s", name, ORDLOCK_DEVICE,
				strerror(-ret));
		return ret;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = flags;
	cfg.policy = policy;
	cfg.detect_delay_ms = delay;
	cfg.strict = strict;
	cfg.max_hold_ms = max_hold;
	cfg.cluster = cluster;
	cfg.fastpath = fastpath;
	cfg.fastpath_uid = fast_uid;
	ret = ordlock_domain_config(ol, name, &cfg);
	ordlock_close(ol);
	if (ret) {
		olc_err("domain %s: %s%s", name, strerror(-ret),
			ret == -EPERM ? " (changing a domain needs CAP_SYS_ADMIN)" :
			ret == -EOPNOTSUPP ? " (the fast path and the cluster setting exclude each other)" :
			ret == -ENOTCONN ? " (no cluster: dlm_controld is not running, or this node is not in a quorate cluster)" :
			ret == -ENOPKG ? " (no cluster backend: ordlock_dlm.ko is not installed)" :
			ret == -EBUSY && (flags & ORDLOCK_DOMAIN_SET_CLUSTER) ?
			" (the cluster setting changes only in a domain without owners)" :
			ret == -EBUSY && (flags & ORDLOCK_DOMAIN_SET_FASTPATH) ?
			" (the fast path changes only in a domain without owners)" : "");
		return ret;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->policy = cfg.policy;
	out->detect_delay_ms = cfg.detect_delay_ms;
	out->have_strict = 1;
	out->strict = cfg.strict;
	out->max_hold_ms = cfg.max_hold_ms;
	out->cluster = cfg.cluster;
	out->fastpath = cfg.fastpath;
	out->fastpath_uid = cfg.fastpath ? cfg.fastpath_uid : 0;
	return 0;
}

static int olc_domain_get(const char *name, struct olc_nl_domain *out)
{
	struct olc_nl *nl = olc_netlink(1);
	int ret;

	ret = nl ? olc_nl_domain_get(nl, name, out) : -ENOENT;
	if (!ret)
		return 0;
	if (!olc_nl_unusable(nl, ret)) {
		char what[64];

		snprintf(what, sizeof(what), "domain %s", name);
		olc_nl_report(nl, ret, what);
		return ret;
	}
	if (olc_module_missing()) {
		olc_err("domain %s: %s", name, olc_module_missing());
		return -ENOENT;
	}
	if (olc_opt.verbose)
		olc_err("netlink cannot serve (%s); reading through the ioctl",
			strerror(-ret));
	return olc_domain_ioctl(name, 0, 0, 0, 0, 0, 0, 0, 0, out);
}

/* The names of the domains: from debugfs stats, else the owners and "default" */
static int olc_domain_names(char (**names)[ORDLOCK_DOMAIN_NAME_MAX], size_t *n)
{
	struct olc_stats stats = { 0 };
	size_t i;
	int ret;

	ret = olc_load_stats(&stats, NULL, NULL);
	if (ret)
		return ret;
	*names = calloc(stats.n + 1, sizeof(**names));
	if (!*names) {
		olc_stats_free(&stats);
		return -ENOMEM;
	}
	for (i = 0; i < stats.n; i++)
		memcpy((*names)[i], stats.v[i].name, ORDLOCK_DOMAIN_NAME_MAX);
	*n = stats.n;
	olc_stats_free(&stats);
	return 0;
}

static int olc_domain_list(void)
{
	char (*names)[ORDLOCK_DOMAIN_NAME_MAX] = NULL;
	struct olc_nl_domain info;
	struct olc_json j;
	size_t i, n = 0;
	int ret, status = OLC_EXIT_OK;

	ret = olc_domain_names(&names, &n);
	if (ret)
		return olc_exit_errno(ret);
	if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_json_obj(&j, NULL);
		olc_json_arr(&j, "domains");
	}
	for (i = 0; i < n; i++) {
		ret = olc_domain_get(names[i], &info);
		/* gone meanwhile */
		if (ret == -ENOENT && !olc_module_missing())
			continue;
		if (ret) {
			status = olc_exit_errno(ret);
			break;
		}
		if (olc_opt.json)
			olc_domain_json(&j, &info);
		else
			olc_domain_text(&info);
	}
	if (olc_opt.json) {
		olc_json_arr_end(&j);
		olc_json_obj_end(&j);
		olc_json_end(&j);
	}
	free(names);
	return status;
}

/* "NAME=N" */
static int olc_rank_assign(const struct olc_cmd *cmd, const char *arg,
			   struct olc_rank_names *names)
{
	const char *eq = strchr(arg, '=');
	struct olc_rank_name *r;
	size_t len;

	if (!eq)
		return olc_usage(cmd, "rank \"%s\": write rank NAME=N", arg);
	len = (size_t)(eq - arg);
	if (names->n == ORDLOCK_RANK_NAMES_MAX)
		return olc_usage(cmd, "more than %d rank names", ORDLOCK_RANK_NAMES_MAX);
	r = &names->v[names->n];
	if (len >= sizeof(r->name))
		return olc_usage(cmd, "rank \"%s\": the name is longer than %d characters",
				 arg, ORDLOCK_RANK_NAME_MAX - 1);
	memcpy(r->name, arg, len);
	r->name[len] = '\0';
	if (olc_rank_name_check(r->name))
		return olc_usage(cmd, "rank \"%s\": a name is [A-Za-z0-9._-], starting with a letter",
				 arg);
	if (olc_parse_u32(eq + 1, &r->rank))
		return olc_usage(cmd, "rank \"%s\": \"%s\" is not a 32-bit rank", arg, eq + 1);
	names->n++;
	return -1;
}

static int olc_ms_arg(const struct olc_cmd *cmd, const char *what, const char *arg,
		      unsigned int *ms)
{
	uint32_t v;

	if (!arg)
		return olc_usage(cmd, "%s needs a number of milliseconds", what);
	if (olc_parse_u32(arg, &v))
		return olc_usage(cmd, "%s: \"%s\" is not a number of milliseconds",
				 what, arg);
	*ms = v;
	return -1;
}

/* What DOMAIN_SET changes */
struct olc_domain_set {
	int set_policy;
	unsigned int policy;
	int set_delay;
	unsigned int detect_delay_ms;
	int set_max_hold;
	unsigned int max_hold_ms;
	int set_names;
	struct olc_rank_names names;
	int set_strict;
	unsigned int strict;
	int set_cluster;
	unsigned int cluster;
	int set_fastpath;
	unsigned int fastpath;
	unsigned int fast_uid;
};

/* "fastpath on uid USER|UID" or "fastpath off": the words used, or an exit status */
static int olc_fastpath_arg(const struct olc_cmd *cmd, int argc, char **argv,
			    struct olc_domain_set *set)
{
	const struct passwd *pw;
	uint32_t uid;

	if (argc < 1 || (strcmp(argv[0], "on") && strcmp(argv[0], "off")))
		return -olc_usage(cmd, "fastpath needs on uid USER|UID, or off");
	set->set_fastpath = 1;
	set->fastpath = !strcmp(argv[0], "on");
	if (!set->fastpath)
		return 1;
	if (argc < 3 || strcmp(argv[1], "uid"))
		return -olc_usage(cmd, "fastpath on needs uid USER|UID: the only user whose owners may use it");
	if (!olc_parse_u32(argv[2], &uid) && uid != (uint32_t)-1) {
		set->fast_uid = uid;
		return 3;
	}
	pw = getpwnam(argv[2]);
	if (!pw)
		return -olc_usage(cmd, "fastpath uid \"%s\": no such user", argv[2]);
	set->fast_uid = pw->pw_uid;
	return 3;
}

static int olc_domain_set_cmd(const struct olc_cmd *cmd, const char *name,
			      int argc, char **argv)
{
	struct olc_domain_set set;
	struct olc_nl_domain info;
	struct olc_json j;
	struct olc_nl *nl;
	char what[64];
	int i, ret;

	memset(&set, 0, sizeof(set));
	if (argc < 1)
		return olc_usage(cmd, "set what? policy, delay, max-hold, strict, cluster, fastpath, rank or norank");
	for (i = 0; i < argc; i++) {
		const char *word = argv[i], *arg = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(word, "policy")) {
			int p;

			if (!arg)
				return olc_usage(cmd, "policy needs enforce, detect or timeout");
			p = olc_policy_parse(arg);
			if (p < 0)
				return olc_usage(cmd, "policy \"%s\" is not enforce, detect or timeout",
						 arg);
			set.set_policy = 1;
			set.policy = (unsigned int)p;
			i++;
		} else if (!strcmp(word, "delay") || !strcmp(word, "timeout")) {
			ret = olc_ms_arg(cmd, word, arg, &set.detect_delay_ms);
			if (ret >= 0)
				return ret;
			set.set_delay = 1;
			i++;
		} else if (!strcmp(word, "max-hold")) {
			ret = olc_ms_arg(cmd, word, arg, &set.max_hold_ms);
			if (ret >= 0)
				return ret;
			set.set_max_hold = 1;
			i++;
		} else if (!strcmp(word, "rank")) {
			if (!arg)
				return olc_usage(cmd, "rank needs NAME=N");
			ret = olc_rank_assign(cmd, arg, &set.names);
			if (ret >= 0)
				return ret;
			set.set_names = 1;
			i++;
		} else if (!strcmp(word, "norank")) {
			set.set_names = 1;
		} else if (!strcmp(word, "strict")) {
			if (!arg || (strcmp(arg, "on") && strcmp(arg, "off")))
				return olc_usage(cmd, "strict needs on or off");
			set.set_strict = 1;
			set.strict = !strcmp(arg, "on");
			i++;
		} else if (!strcmp(word, "cluster")) {
			if (!arg || (strcmp(arg, "on") && strcmp(arg, "off")))
				return olc_usage(cmd, "cluster needs on or off");
			set.set_cluster = 1;
			set.cluster = !strcmp(arg, "on");
			i++;
		} else if (!strcmp(word, "fastpath")) {
			ret = olc_fastpath_arg(cmd, argc - i - 1, argv + i + 1, &set);
			if (ret <= 0)
				return -ret;
			i += ret;
		} else {
			return olc_usage(cmd,
					 "\"%s\" is not policy, delay, timeout, max-hold, strict, cluster, fastpath, rank or norank",
					 word);
		}
	}
	snprintf(what, sizeof(what), "domain %s", name);
	nl = olc_netlink(1);
	ret = nl ? olc_nl_domain_set_fast(nl, name, set.set_policy ? (long)set.policy : -1,
					  set.set_delay ? (long)set.detect_delay_ms : -1,
					  set.set_strict ? (long)set.strict : -1,
					  set.set_max_hold ? (long)set.max_hold_ms : -1,
					  set.set_cluster ? (long)set.cluster : -1,
					  set.set_fastpath ? (long)set.fastpath : -1,
					  set.set_fastpath && set.fastpath ?
					  (long)set.fast_uid : -1,
					  set.set_names ? &set.names : NULL, &info) : -ENOENT;
	if (ret && olc_nl_unusable(nl, ret)) {
		if (olc_module_missing()) {
			olc_err("%s: %s", what, olc_module_missing());
			return OLC_EXIT_UNAVAILABLE;
		}
		if (set.set_names) {
			olc_nl_report(nl, ret, what);
			olc_err("rank names can only be set through netlink");
			return olc_exit_errno(ret);
		}
		if (olc_opt.verbose)
			olc_err("netlink cannot serve (%s); using the ioctl", strerror(-ret));
		ret = olc_domain_ioctl(name,
				       (set.set_policy ? ORDLOCK_DOMAIN_SET_POLICY : 0) |
				       (set.set_delay ? ORDLOCK_DOMAIN_SET_DETECT_DELAY : 0) |
				       (set.set_strict ? ORDLOCK_DOMAIN_SET_STRICT : 0) |
				       (set.set_max_hold ? ORDLOCK_DOMAIN_SET_MAX_HOLD : 0) |
				       (set.set_cluster ? ORDLOCK_DOMAIN_SET_CLUSTER : 0) |
				       (set.set_fastpath ? ORDLOCK_DOMAIN_SET_FASTPATH : 0),
				       set.policy, set.detect_delay_ms, set.strict,
				       set.max_hold_ms, set.cluster, set.fastpath,
				       set.fast_uid, &info);
		if (ret)
			return olc_exit_refused(ret);
	} else if (ret) {
		olc_nl_report(nl, ret, what);
		if (ret == -EPERM)
			olc_err("changing a domain needs CAP_NET_ADMIN");
		return olc_exit_refused(ret);
	}
	if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_domain_json(&j, &info);
		olc_json_end(&j);
	} else {
		olc_domain_text(&info);
	}
	return OLC_EXIT_OK;
}

static int olc_domain_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	struct olc_nl_domain info;
	struct olc_json j;
	const char *name;
	int ret;

	/* options anywhere ("domain shop -j"); "--" ends them */
	ret = olc_getopt(cmd, argc, argv, NULL);
	if (ret >= 0)
		return ret;
	if (optind >= argc)
		return olc_domain_list();
	name = argv[optind++];
	if (olc_domain_check(name))
		return olc_usage(cmd, "\"%s\" is not a domain name (1 to 31 of [A-Za-z0-9._-])",
				 name);
	if (optind < argc) {
		if (strcmp(argv[optind], "set"))
			return olc_usage(cmd, "\"%s\": expected \"set\"", argv[optind]);
		return olc_domain_set_cmd(cmd, name, argc - optind - 1, argv + optind + 1);
	}
	ret = olc_domain_get(name, &info);
	if (ret)
		return olc_exit_errno(ret);
	if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_domain_json(&j, &info);
		olc_json_end(&j);
	} else {
		olc_domain_text(&info);
	}
	return OLC_EXIT_OK;
}

const struct olc_cmd olc_cmd_domain = {
	.name = "domain",
	.run = olc_domain_run,
	.flags = OLC_CMD_ARGS,
	.summary = "show or change a domain's policy, detection delay and rank names",
	.usage = "domain [-j]\n"
		 "domain [-j] NAME\n"
		 "domain [-j] NAME set [policy enforce|detect|timeout] [delay MS] [max-hold MS]\n"
		 "                     [strict on|off] [cluster on|off]\n"
		 "                     [fastpath on uid USER|UID | fastpath off]\n"
		 "                     [rank NAME=N]... [norank]",
	.about =
	"Without NAME: every domain (those in debugfs stats; through netlink only,\n"
	"\"default\" and the domains that have owners). With NAME: that domain.\n"
	"\"set\" changes it (netlink DOMAIN_SET, needs CAP_NET_ADMIN; when netlink\n"
	"cannot serve, the policy and delay go through the ioctl, needing\n"
	"CAP_SYS_ADMIN). A domain that was changed lives until the module unloads.\n"
	"\n"
	"  policy P        enforce (the order rule), detect (any order; a wait that\n"
	"                  closes a cycle fails), timeout (any order; timeouts break\n"
	"                  cycles)\n"
	"  delay MS        in a detect domain, how long a waiter waits before it\n"
	"                  looks for a cycle; \"timeout MS\" is the same setting\n"
	"                  under PostgreSQL's name (deadlock_timeout)\n"
	"  max-hold MS     the longest lease of a grant (a holder that stops renewing\n"
	"                  is revoked after it), and the lease of a request that\n"
	"                  asks for none; 0 (the default): no limit\n"
	"  rank NAME=N     name rank N (keys may then be written NAME:ID); the names\n"
	"                  given replace all the domain's names\n"
	"  norank          remove every rank name\n"
	"  cluster on|off  a cluster domain: its keys are also locks of the Linux\n"
	"                  DLM across the corosync cluster's nodes (lockspace\n"
	"                  ordlock.NAME); only in a domain without owners; not\n"
	"                  with policy detect (the DLM sees no cycles across keys)\n"
	"  fastpath on uid USER|UID\n"
	"                  the fast path: uncontended exclusive keys taken and let\n"
	"                  go in user space by libordlock; only the owners of that\n"
	"                  user may use it (they can write each other's words);\n"
	"                  only in a domain without owners, not the default\n"
	"                  domain, not a cluster domain\n"
	"  fastpath off    take the fast path away (the default)\n",
	.help =
	"JSON: {\"domain\", \"policy\", \"detect_delay_ms\", \"max_hold_ms\", \"cluster\",\n"
	"\"fastpath\" (bool), \"fastpath_uid\" (null without the fast path),\n"
	"\"rank_names\": [{\"rank\",\n"
	"\"name\"}] or null (unknown: read through the ioctl)}; without NAME:\n"
	"{\"domains\": [...]}.\n",
};
