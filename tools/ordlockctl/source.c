// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: where the data comes from.
 *
 * The debugfs files (root only) are read when they are readable; else the
 * netlink dumps (anyone) serve. -S forces one of them. When neither works
 * the user is told why: the module is not loaded, debugfs is not mounted,
 * the files are root's, or the kernel refused the netlink request.
 */
#include <linux/capability.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ordlockctl.h"

#define OLC_DEBUGFS_DIR		"/sys/kernel/debug/ordlock"
#define OLC_DEBUGFS_MOUNT	"/sys/kernel/debug"
#define OLC_DEBUGFS_MAGIC	0x64626720

const char *olc_debugfs_dir(void)
{
	const char *dir = getenv("ORDLOCK_DEBUGFS");

	return dir && *dir ? dir : OLC_DEBUGFS_DIR;
}

const char *olc_module_missing(void)
{
	if (!access("/sys/module/ordlock", F_OK))
		return NULL;
	return "the ordlock module is not loaded (insmod ordlock.ko, or modprobe ordlock)";
}

/* Why a debugfs file could not be read (errno @err) */
static const char *olc_debugfs_why(int err, char *buf, size_t len)
{
	struct statfs sfs;
	const char *missing;

	if (err == EACCES || err == EPERM)
		return "permission denied (the debugfs files are root's)";
	if (err != ENOENT)
		return strerror(err);
	if (getenv("ORDLOCK_DEBUGFS"))
		return strerror(err);
	missing = olc_module_missing();
	if (missing)
		return missing;
	if (statfs(OLC_DEBUGFS_MOUNT, &sfs) || sfs.f_type != OLC_DEBUGFS_MAGIC) {
		snprintf(buf, len,
			 "debugfs is not mounted on %s (mount -t debugfs none %s)",
			 OLC_DEBUGFS_MOUNT, OLC_DEBUGFS_MOUNT);
		return buf;
	}
	return "no such file: a kernel without debugfs, or an older module";
}

/*
 * Read debugfs file @name. 0, or -errno with @why set to a sentence
 * (@buf holds it when needed).
 */
static int olc_debugfs_read(const char *name, char **data, size_t *len,
			    const char **why, char *buf, size_t buflen)
{
	char path[4096];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", olc_debugfs_dir(), name);
	ret = olc_read_file(path, data, len);
	if (ret)
		*why = olc_debugfs_why(-ret, buf, buflen);
	return ret;
}

/* The shared netlink socket */

static struct olc_nl *olc_nl_shared;
static int olc_nl_error;

void olc_nl_report(struct olc_nl *nl, int err, const char *what)
{
	const char *ext = olc_nl_extack(nl);

	if (err == -ENOENT && !nl) {
		const char *missing = olc_module_missing();

		olc_err("%s: %s", what, missing ? missing :
			"no generic netlink family \"ordlock\" (a module without netlink?)");
		return;
	}
	if (ext && *ext)
		olc_err("%s: %s; kernel reports: %s", what, strerror(-err), ext);
	else if (err == -EOPNOTSUPP)
		/* dumps refused at their start carry no extack on older kernels */
		olc_err("%s: %s (ordlock's netlink family serves the initial network namespace only)",
			what, strerror(-err));
	else
		olc_err("%s: %s", what, strerror(-err));
}

struct olc_nl *olc_netlink(int quiet)
{
	if (olc_nl_shared)
		return olc_nl_shared;
	if (olc_nl_error)
		return NULL;
	olc_nl_error = olc_nl_open_ctl(&olc_nl_shared);
	if (olc_nl_error && !quiet)
		olc_nl_report(NULL, olc_nl_error, "netlink");
	return olc_nl_shared;
}

/* Explain why netlink cannot serve @what after debugfs could not either */
static int olc_both_failed(const char *what, int dret, const char *dwhy,
			   struct olc_nl *nl, int nret)
{
	const char *missing = olc_module_missing();

	char buf[128];

	if (missing) {
		olc_err("cannot read %s: %s", what, missing);
		return -ENOENT;
	}
	if (dret)
		olc_err("cannot read %s from debugfs: %s", what, dwhy);
	snprintf(buf, sizeof(buf), "cannot read %s through netlink", what);
	if (!nl) {
		olc_nl_report(NULL, olc_nl_error, buf);
		return olc_nl_error;
	}
	olc_nl_report(nl, nret, buf);
	return nret;
}

int olc_view_filtered;

/* The caller has CAP_NET_ADMIN (effective): the netlink dumps show it all */
static int olc_net_admin(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return 0;
	return !!(d[CAP_TO_INDEX(CAP_NET_ADMIN)].effective & CAP_TO_MASK(CAP_NET_ADMIN));
}

typedef int (*olc_text_parser)(const char *buf, size_t len, void *out,
			       struct olc_perr *err);
typedef int (*olc_nl_loader)(struct olc_nl *nl, void *out);

/* Load @file from debugfs or with @nl_load (@what for messages) */
static int olc_load(const char *file, const char *what, olc_text_parser parse,
		    olc_nl_loader nl_load, void *out, const char **used)
{
	const char *why = NULL;
	char whybuf[256];
	struct olc_perr perr;
	struct olc_nl *nl;
	size_t len = 0;
	char *data = NULL;
	int ret = 0, nret;

	if (olc_opt.source != OLC_SRC_NETLINK) {
		ret = olc_debugfs_read(file, &data, &len, &why, whybuf, sizeof(whybuf));
		if (!ret) {
			ret = parse(data, len, out, &perr);
			free(data);
			if (ret == -EPROTO) {
				olc_err("%s/%s: line %u: %s", olc_debugfs_dir(), file,
					perr.line, perr.msg);
				return ret;
			}
			if (ret) {
				olc_err("%s/%s: %s", olc_debugfs_dir(), file, strerror(-ret));
				return ret;
			}
			if (used)
				*used = "debugfs";
			if (olc_opt.verbose)
				olc_err("read %s/%s", olc_debugfs_dir(), file);
			return 0;
		}
		if (olc_opt.source == OLC_SRC_DEBUGFS) {
			olc_err("cannot read %s/%s: %s", olc_debugfs_dir(), file, why);
			return ret;
		}
	}
	nl = olc_netlink(1);
	nret = nl ? nl_load(nl, out) : olc_nl_error;
	if (nl && !nret) {
		if (used)
			*used = "netlink";
		olc_view_filtered = !olc_net_admin();
		if (olc_opt.verbose)
			olc_err("%s from the netlink dump%s%s", file,
				why ? " (debugfs: " : "", why ? why : "");
		return 0;
	}
	return olc_both_failed(what, ret, why, nl, nret);
}

static int olc_parse_graph_v(const char *b, size_t l, void *o, struct olc_perr *e)
{
	return olc_parse_graph(b, l, o, e);
}

static int olc_parse_locks_v(const char *b, size_t l, void *o, struct olc_perr *e)
{
	return olc_parse_locks(b, l, o, e);
}

static int olc_parse_owners_v(const char *b, size_t l, void *o, struct olc_perr *e)
{
	return olc_parse_owners(b, l, o, e);
}

static int olc_nl_graph_v(struct olc_nl *nl, void *o)
{
	return olc_nl_get_graph(nl, o);
}

static int olc_nl_locks_v(struct olc_nl *nl, void *o)
{
	return olc_nl_get_locks(nl, o);
}

static int olc_nl_owners_v(struct olc_nl *nl, void *o)
{
	return olc_nl_get_owners(nl, o);
}

int olc_load_graph(struct olc_edges *out, const char **used)
{
	return olc_load("graph", "the wait-for graph", olc_parse_graph_v, olc_nl_graph_v, out, used);
}

int olc_load_locks(struct olc_locks *out, const char **used)
{
	return olc_load("locks", "the lock table", olc_parse_locks_v, olc_nl_locks_v, out, used);
}

/*
 * The labels of debugfs "labels" ("OWNER_ID LABEL" lines) into the owners
 * read from debugfs "owners"; a kernel without the file has no labels
 */
static void olc_debugfs_labels(struct olc_owners *out)
{
	char *data = NULL, *line, *save = NULL, whybuf[128], label[ORDLOCK_LABEL_MAX + 1];
	const char *why = NULL;
	unsigned long long id;
	size_t len = 0, i;

	if (olc_debugfs_read("labels", &data, &len, &why, whybuf, sizeof(whybuf)))
		return;
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || sscanf(line, "%llu %32s", &id, label) != 2 ||
		    strlen(label) >= ORDLOCK_LABEL_MAX)
			continue;
		for (i = 0; i < out->n; i++)
			if (out->v[i].who.id == id)
				snprintf(out->v[i].label, sizeof(out->v[i].label), "%s", label);
	}
	free(data);
}

int olc_load_owners(struct olc_owners *out, const char **used)
{
	const char *src = NULL;
	int ret = olc_load("owners", "the owners", olc_parse_owners_v, olc_nl_owners_v, out,
			   &src);

	if (!ret && src && !strcmp(src, "debugfs"))
		olc_debugfs_labels(out);
	if (used)
		*used = src;
	return ret;
}

/*
 * Stats through netlink: GET_STATS of @domain, or of every domain the
 * owners dump names (netlink has no list of domains), plus "default".
 */
static int olc_nl_stats(struct olc_nl *nl, struct olc_stats *out,
			const char *domain)
{
	struct olc_owners owners = { 0 };
	struct olc_domain_stats *d;
	const char **names = NULL;
	size_t i, j, n = 0;
	int ret;

	if (!domain) {
		ret = olc_nl_get_owners(nl, &owners);
		if (ret)
			return ret;
		names = calloc(owners.n + 1, sizeof(*names));
		if (!names) {
			olc_owners_free(&owners);
			return -ENOMEM;
		}
		names[n++] = ORDLOCK_DEFAULT_DOMAIN;
		for (i = 0; i < owners.n; i++) {
			for (j = 0; j < n; j++)
				if (!strcmp(names[j], owners.v[i].domain))
					break;
			if (j == n)
				names[n++] = owners.v[i].domain;
		}
	}
	ret = 0;
	for (i = 0; i < (domain ? 1 : n); i++) {
		struct olc_domain_stats one;
		int r = olc_nl_domain_stats(nl, domain ? domain : names[i], &one);

		/* a domain without owners may be gone by now */
		if (r == -ENOENT && !domain)
			continue;
		if (r) {
			ret = r;
			break;
		}
		d = olc_stats_add(out);
		if (!d) {
			ret = -ENOMEM;
			break;
		}
		*d = one;
	}
	free(names);
	olc_owners_free(&owners);
	return ret;
}

int olc_load_stats(struct olc_stats *out, const char *domain, const char **used)
{
	const char *why = NULL;
	char whybuf[256];
	struct olc_perr perr;
	struct olc_nl *nl;
	size_t len = 0, i;
	char *data = NULL;
	int ret = 0, nret;

	if (olc_opt.source != OLC_SRC_NETLINK) {
		ret = olc_debugfs_read("stats", &data, &len, &why, whybuf,
				       sizeof(whybuf));
		if (!ret) {
			ret = olc_parse_stats(data, len, out, &perr);
			free(data);
			if (ret) {
				if (ret == -EPROTO)
					olc_err("%s/stats: line %u: %s", olc_debugfs_dir(),
						perr.line, perr.msg);
				return ret;
			}
			if (used)
				*used = "debugfs";
			if (!domain)
				return 0;
			for (i = 0; i < out->n; i++)
				if (!strcmp(out->v[i].name, domain))
					break;
			if (i == out->n) {
				olc_err("stats: no domain \"%s\"", domain);
				return -ENOENT;
			}
			/* keep only that domain */
			out->v[0] = out->v[i];
			out->n = 1;
			return 0;
		}
		if (olc_opt.source == OLC_SRC_DEBUGFS) {
			olc_err("cannot read %s/stats: %s", olc_debugfs_dir(), why);
			return ret;
		}
	}
	nl = olc_netlink(1);
	nret = nl ? olc_nl_stats(nl, out, domain) : olc_nl_error;
	if (nl && !nret) {
		if (used)
			*used = "netlink";
		return 0;
	}
	return olc_both_failed("the statistics", ret, why, nl, nret);
}

int olc_domain_known(const char *domain)
{
	struct olc_stats stats = { 0 };
	struct olc_domain_stats one;
	const char *why = NULL;
	struct olc_perr perr;
	char whybuf[256];
	struct olc_nl *nl;
	char *data = NULL;
	size_t len = 0, i;
	int ret = 1;	/* not known yet */

	/* debugfs's stats list every domain */
	if (olc_opt.source != OLC_SRC_NETLINK &&
	    !olc_debugfs_read("stats", &data, &len, &why, whybuf, sizeof(whybuf))) {
		if (!olc_parse_stats(data, len, &stats, &perr)) {
			ret = -ENOENT;
			for (i = 0; i < stats.n; i++)
				if (!strcmp(stats.v[i].name, domain))
					ret = 0;
		}
		olc_stats_free(&stats);
		free(data);
	}
	/* netlink's lists only the domains with owners: ask for this one */
	if (ret > 0 && olc_opt.source != OLC_SRC_DEBUGFS) {
		nl = olc_netlink(1);
		if (nl && olc_nl_domain_stats(nl, domain, &one) == -ENOENT)
			ret = -ENOENT;
	}
	if (ret == -ENOENT) {
		olc_err("no domain \"%s\" (ordlockctl domain: the domains)", domain);
		return ret;
	}
	return 0;
}

int olc_load_deadlocks(struct olc_deadlocks *out)
{
	const char *why = NULL;
	char whybuf[256];
	struct olc_perr perr;
	size_t len = 0;
	char *data = NULL;
	int ret;

	ret = olc_debugfs_read("deadlocks", &data, &len, &why, whybuf,
			       sizeof(whybuf));
	if (ret) {
		olc_err("cannot read %s/deadlocks: %s (the history is in debugfs only)",
			olc_debugfs_dir(), why);
		return ret;
	}
	ret = olc_parse_deadlocks(data, len, out, &perr);
	free(data);
	if (ret == -EPROTO)
		olc_err("%s/deadlocks: line %u: %s", olc_debugfs_dir(), perr.line,
			perr.msg);
	else if (ret)
		olc_err("%s/deadlocks: %s", olc_debugfs_dir(), strerror(-ret));
	return ret;
}

int olc_load_graph_file(const char *path, struct olc_edges *out)
{
	struct olc_perr perr;
	size_t len = 0;
	char *data = NULL;
	int ret;

	ret = olc_read_file(path, &data, &len);
	if (ret) {
		olc_err("%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = olc_parse_graph(data, len, out, &perr);
	free(data);
	if (ret == -EPROTO)
		olc_err("%s: line %u: %s", strcmp(path, "-") ? path : "<stdin>",
			perr.line, perr.msg);
	else if (ret)
		olc_err("%s: %s", path, strerror(-ret));
	return ret;
}

/* Rank names, per domain, cached */

struct olc_names_entry {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	int valid;
	struct olc_rank_names names;
};

static struct olc_names_entry *olc_names_cache;
static size_t olc_names_n;

const struct olc_rank_names *olc_names(const char *domain)
{
	struct olc_nl_domain info;
	struct olc_names_entry *e;
	struct olc_nl *nl;
	size_t i;

	if (olc_opt.numeric || !domain || !*domain)
		return NULL;
	for (i = 0; i < olc_names_n; i++)
		if (!strcmp(olc_names_cache[i].domain, domain))
			return olc_names_cache[i].valid ? &olc_names_cache[i].names : NULL;
	e = realloc(olc_names_cache, (olc_names_n + 1) * sizeof(*e));
	if (!e)
		return NULL;
	olc_names_cache = e;
	e = &olc_names_cache[olc_names_n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->domain, sizeof(e->domain), "%s", domain);
	nl = olc_netlink(1);
	if (nl && !olc_nl_domain_get(nl, domain, &info)) {
		e->names = info.names;
		e->valid = 1;
	}
	return e->valid ? &e->names : NULL;
}

const char *olc_key(const char *domain, uint32_t rank, uint64_t id)
{
	static char bufs[8][ORDLOCK_RANK_NAME_MAX + 24];
	static unsigned int next;
	char *buf = bufs[next++ % 8];

	return olc_key_str(buf, sizeof(bufs[0]), olc_names(domain), rank, id);
}

void olc_json_who(struct olc_json *j, const char *key, const struct olc_who *w)
{
	olc_json_obj(j, key);
	olc_json_u64(j, "owner_id", w->id);
	olc_json_u64(j, "pid", w->pid);
	olc_json_str(j, "comm", w->comm);
	olc_json_obj_end(j);
}

/* "key": "NAME:ID", "rank": R, "id": I */
void olc_json_key(struct olc_json *j, const char *domain, uint32_t rank,
		  uint64_t id)
{
	olc_json_str(j, "key", olc_key(domain, rank, id));
	olc_json_u64(j, "rank", rank);
	olc_json_u64(j, "id", id);
}
