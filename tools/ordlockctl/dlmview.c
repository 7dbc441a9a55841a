// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: other nodes' locks on the keys of cluster domains, as the DLM
 * of this node shows them in debugfs (docs/cluster.md, "Views").
 *
 * The cluster domains of this host are the DLM lockspaces named
 * ORDLOCK_DLM_LS_PREFIX "DOMAIN" (/sys/kernel/dlm/, in sysfs, always there
 * while the DLM is loaded); each one's locks are read from the DLM's debugfs
 * file /sys/kernel/debug/dlm/LS_all, parsed by ../common/dlmdebug.c. The
 * directories can be moved with $ORDLOCK_DLM_SYSFS, $ORDLOCK_DLM_DEBUGFS and
 * $ORDLOCK_DLM_CONFIGFS (the tests do).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/statfs.h>

#include "dlmview.h"
#include "ordlockctl.h"

#define OLC_DLM_SYSFS		"/sys/kernel/dlm"
#define OLC_DLM_DEBUGFS		"/sys/kernel/debug/dlm"
#define OLC_DLM_CONFIGFS	"/sys/kernel/config/dlm/cluster/comms"
#define OLC_DEBUGFS_TOP		"/sys/kernel/debug"
#define OLC_DEBUGFS_MAGIC_NR	0x64626720

static const char *olc_env_dir(const char *var, const char *def)
{
	const char *d = getenv(var);

	return d && *d ? d : def;
}

/* This node's id: the comms entry of the DLM's configfs marked local; or -1 */
static int olc_dlm_our_node(void)
{
	const char *dir = olc_env_dir("ORDLOCK_DLM_CONFIGFS", OLC_DLM_CONFIGFS);
	char path[4096], *data = NULL;
	struct dirent *de;
	size_t len = 0;
	int node = -1;
	uint32_t v;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -1;
	while (node < 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.' || olc_parse_u32(de->d_name, &v) || v > 0x7fffffff)
			continue;
		snprintf(path, sizeof(path), "%s/%s/local", dir, de->d_name);
		if (olc_read_file(path, &data, &len))
			continue;
		if (len >= 1 && data[0] == '1')
			node = (int)v;
		free(data);
		data = NULL;
	}
	closedir(d);
	return node;
}

/* Why the DLM's debugfs file could not be read */
static void olc_dlm_why(struct olc_dlm_space *s, int err)
{
	struct statfs sfs;

	if (err == EACCES || err == EPERM) {
		snprintf(s->why, sizeof(s->why),
			 "permission denied (the DLM's debugfs files are root's)");
	} else if (err == ENOENT && !getenv("ORDLOCK_DLM_DEBUGFS") &&
		   (statfs(OLC_DEBUGFS_TOP, &sfs) || sfs.f_type != OLC_DEBUGFS_MAGIC_NR)) {
		snprintf(s->why, sizeof(s->why),
			 "debugfs is not mounted on %s (mount -t debugfs none %s)",
			 OLC_DEBUGFS_TOP, OLC_DEBUGFS_TOP);
	} else if (err == ENOENT) {
		snprintf(s->why, sizeof(s->why), "no such file (a DLM without debugfs files?)");
	} else {
		snprintf(s->why, sizeof(s->why), "%s", strerror(err));
	}
}

static int olc_space_cmp(const void *a, const void *b)
{
	const struct olc_dlm_space *x = a, *y = b;

	return strcmp(x->domain, y->domain);
}

static void olc_dlm_read(struct olc_dlm_space *s)
{
	char *data = NULL, msg[160];
	unsigned int line = 0;
	struct timespec ts;
	size_t len = 0;
	int ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	s->read_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	ret = olc_read_file(s->path, &data, &len);
	if (ret) {
		s->err = -ret;
		olc_dlm_why(s, -ret);
		return;
	}
	ret = olc_dlm_parse(data, len, &s->view, &line, msg, sizeof(msg));
	free(data);
	if (ret == -EPROTO) {
		s->err = EPROTO;
		snprintf(s->why, sizeof(s->why), "line %u: %s", line, msg);
	} else if (ret) {
		s->err = -ret;
		snprintf(s->why, sizeof(s->why), "%s", strerror(-ret));
	}
}

int olc_load_dlm(struct olc_dlm_spaces *out, const char *domain)
{
	const char *sysdir = olc_env_dir("ORDLOCK_DLM_SYSFS", OLC_DLM_SYSFS);
	const char *dbgdir = olc_env_dir("ORDLOCK_DLM_DEBUGFS", OLC_DLM_DEBUGFS);
	const size_t plen = strlen(ORDLOCK_DLM_LS_PREFIX);
	struct olc_dlm_space *s;
	struct dirent *de;
	size_t i;
	DIR *d;

	memset(out, 0, sizeof(*out));
	out->our_node = -1;
	d = opendir(sysdir);
	if (!d)
		return 0;	/* no DLM: no cluster domain here */
	while ((de = readdir(d))) {
		const char *dom = de->d_name + plen;

		if (strncmp(de->d_name, ORDLOCK_DLM_LS_PREFIX, plen) || olc_domain_check(dom))
			continue;
		if (domain && strcmp(dom, domain))
			continue;
		if (out->n == out->cap) {
			size_t cap = out->cap ? out->cap * 2 : 4;

			s = realloc(out->v, cap * sizeof(*s));
			if (!s) {
				closedir(d);
				olc_dlm_spaces_free(out);
				return -ENOMEM;
			}
			out->v = s;
			out->cap = cap;
		}
		s = &out->v[out->n++];
		memset(s, 0, sizeof(*s));
		snprintf(s->domain, sizeof(s->domain), "%.*s", (int)sizeof(s->domain) - 1, dom);
		snprintf(s->lockspace, sizeof(s->lockspace), ORDLOCK_DLM_LS_PREFIX "%s", s->domain);
		snprintf(s->path, sizeof(s->path), "%s/%s_all", dbgdir, s->lockspace);
	}
	closedir(d);
	if (!out->n)
		return 0;
	qsort(out->v, out->n, sizeof(*out->v), olc_space_cmp);
	for (i = 0; i < out->n; i++)
		olc_dlm_read(&out->v[i]);
	out->our_node = olc_dlm_our_node();
	return 0;
}

void olc_dlm_spaces_free(struct olc_dlm_spaces *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		olc_dlm_free(&s->v[i].view);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

const struct olc_dlm_space *olc_dlm_space_of(const struct olc_dlm_spaces *sp,
					     const char *domain)
{
	size_t i;

	for (i = 0; i < sp->n; i++)
		if (!strcmp(sp->v[i].domain, domain))
			return &sp->v[i];
	return NULL;
}

const struct olc_dlm_res *olc_dlm_res_of(const struct olc_dlm_space *s,
					 uint32_t rank, uint64_t id)
{
	size_t i;

	if (s->err)
		return NULL;
	for (i = 0; i < s->view.nres; i++)
		if (s->view.res[i].rank == rank && s->view.res[i].id == id)
			return &s->view.res[i];
	return NULL;
}

unsigned int olc_dlm_lock_blocks(const struct olc_dlm_lock *l, unsigned int mode)
{
	unsigned int held;

	if (l->role == ORDLOCK_ROLE_HOLDER)
		held = l->mode;
	else if (l->role == ORDLOCK_ROLE_CONVERTER && l->grmode == OLC_DLM_PR)
		held = ORDLOCK_MODE_SHARED;
	else if (l->role == ORDLOCK_ROLE_CONVERTER && l->grmode == OLC_DLM_EX)
		held = ORDLOCK_MODE_EXCLUSIVE;
	else
		return 0;
	if (held == ORDLOCK_MODE_SHARED && mode == ORDLOCK_MODE_SHARED)
		return 0;
	return held;
}
