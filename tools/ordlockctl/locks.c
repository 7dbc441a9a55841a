// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl locks: every holder and queued waiter of every resource; in a
 * cluster domain, also other nodes' holders and waiters as the DLM of this
 * node shows them (dlmview.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dlmview.h"
#include "ordlockctl.h"
#include "xdparse.h"

/*
 * A row: this host's lock @l, another node's @r as this node's DLM shows
 * it, or another node's @x as its ordlock-xdetectd answered; in @domain
 */
struct olc_lrow {
	const struct olc_lock *l;
	const struct olc_dlm_lock *r;
	const struct olc_xd_lock *x;
	const char *domain;
};

static uint32_t olc_lrow_rank(const struct olc_lrow *w)
{
	return w->l ? w->l->rank : w->x ? w->x->o.rank : w->r->rank;
}

static uint64_t olc_lrow_id(const struct olc_lrow *w)
{
	return w->l ? w->l->id : w->x ? w->x->o.id : w->r->id;
}

static unsigned int olc_lrow_role(const struct olc_lrow *w)
{
	return w->l ? w->l->role : w->x ? w->x->role : w->r->role;
}

/* 0 for this host's rows, else the node's id */
static uint32_t olc_lrow_node(const struct olc_lrow *w)
{
	return w->l ? 0 : w->x ? w->x->o.node : (uint32_t)w->r->node;
}

static uint32_t olc_lrow_pos(const struct olc_lrow *w)
{
	return w->l ? w->l->pos : w->x ? w->x->pos : w->r->pos;
}

static int olc_lrow_cmp(const void *a, const void *b)
{
	const struct olc_lrow *x = a, *y = b;
	int c = strcmp(x->domain, y->domain);

	if (c)
		return c;
	if (olc_lrow_rank(x) != olc_lrow_rank(y))
		return olc_lrow_rank(x) < olc_lrow_rank(y) ? -1 : 1;
	if (olc_lrow_id(x) != olc_lrow_id(y))
		return olc_lrow_id(x) < olc_lrow_id(y) ? -1 : 1;
	/* holders first, then the queue */
	if ((olc_lrow_role(x) == ORDLOCK_ROLE_HOLDER) != (olc_lrow_role(y) == ORDLOCK_ROLE_HOLDER))
		return olc_lrow_role(x) == ORDLOCK_ROLE_HOLDER ? -1 : 1;
	/* this host's rows, then the other nodes' (by node, then queue) */
	if (olc_lrow_node(x) != olc_lrow_node(y))
		return olc_lrow_node(x) < olc_lrow_node(y) ? -1 : 1;
	return olc_lrow_pos(x) < olc_lrow_pos(y) ? -1 : olc_lrow_pos(x) > olc_lrow_pos(y);
}

/* "NODE" of this node, for the notes: "node 1 (this node)" or "this node" */
static const char *olc_here(const struct olc_dlm_spaces *sp)
{
	static char buf[48];

	if (sp->our_node < 0)
		return "this node";
	snprintf(buf, sizeof(buf), "node %d (this node)", sp->our_node);
	return buf;
}

/* The JSON of the cluster domains: what was read, and what it can tell */
static void olc_locks_json_cluster(struct olc_json *j, const struct olc_dlm_spaces *sp)
{
	char tbuf[64];
	size_t i, k;

	olc_json_arr(j, "cluster");
	for (i = 0; i < sp->n; i++) {
		const struct olc_dlm_space *s = &sp->v[i];

		olc_json_obj(j, NULL);
		olc_json_str(j, "domain", s->domain);
		olc_json_str(j, "lockspace", s->lockspace);
		olc_json_str(j, "file", s->path);
		olc_json_bool(j, "snapshot", 1);
		olc_json_str(j, "read_at", olc_time_str(tbuf, sizeof(tbuf), s->read_ns));
		if (sp->our_node >= 0)
			olc_json_int(j, "this_node", sp->our_node);
		else
			olc_json_null(j, "this_node");
		olc_json_bool(j, "readable", !s->err);
		if (s->err) {
			/* the same keys as a readable one's: null, not known */
			olc_json_str(j, "error", s->why);
			olc_json_null(j, "ignored_resources");
			olc_json_null(j, "keys");
			olc_json_obj_end(j);
			continue;
		}
		olc_json_null(j, "error");
		olc_json_u64(j, "ignored_resources", s->view.ignored);
		olc_json_arr(j, "keys");
		for (k = 0; k < s->view.nres; k++) {
			const struct olc_dlm_res *r = &s->view.res[k];

			olc_json_obj(j, NULL);
			olc_json_key(j, s->domain, r->rank, r->id);
			olc_json_str(j, "master", r->master == 0 ? "here" :
				     r->master > 0 ? "elsewhere" : "unknown");
			if (r->master > 0)
				olc_json_int(j, "master_node", r->master);
			else if (r->master == 0 && sp->our_node >= 0)
				olc_json_int(j, "master_node", sp->our_node);
			else
				olc_json_null(j, "master_node");
			/* mastered here: every node's locks are listed */
			olc_json_bool(j, "all_nodes_known", r->master == 0);
			olc_json_obj_end(j);
		}
		olc_json_arr_end(j);
		olc_json_obj_end(j);
	}
	olc_json_arr_end(j);
}

/*
 * What the table cannot say: per cluster domain, where its NODE rows come
 * from, or why there are none; the keys whose other holders are known on
 * their master only
 */
static void olc_locks_notes(FILE *f, const struct olc_dlm_spaces *sp)
{
	char tbuf[64];
	size_t i, k;

	for (i = 0; i < sp->n; i++) {
		const struct olc_dlm_space *s = &sp->v[i];

		if (s->err) {
			fprintf(f, "cluster domain %s: other nodes' locks unknown: cannot read %s: %s\n",
				s->domain, s->path, s->why);
			continue;
		}
		fprintf(f, "cluster domain %s: the rows of other nodes (NODE) are what the DLM on %s\n"
			"  showed, a snapshot of %s at %s;\n"
			"  keys this node has not used are not in it\n",
			s->domain, olc_here(sp), s->path,
			olc_time_str(tbuf, sizeof(tbuf), s->read_ns));
		for (k = 0; k < s->view.nres; k++) {
			const struct olc_dlm_res *r = &s->view.res[k];

			if (r->master > 0)
				fprintf(f, "  %s: mastered by node %d: other nodes' locks on it are known there only\n",
					olc_key(s->domain, r->rank, r->id), r->master);
			else if (r->master < 0)
				fprintf(f, "  %s: its master is being looked up: other nodes' locks not known yet\n",
					olc_key(s->domain, r->rank, r->id));
		}
	}
}

/*
 * The holders granted on this node that wait for the cluster (TOKEN "-",
 * WAITED set): say so, and who holds the key elsewhere as far as this
 * node's DLM tells
 */
/*
 * The other nodes' owners that hold the key of this host's lock @l granted
 * in the cluster, as the daemons answered (@xv): ": held by node 2 pid
 * 238 (transfer)"; returns how many were named
 */
static int olc_locks_xd_holders(FILE *f, const struct olc_lock *l,
				const struct olc_xd_view *xv)
{
	int named = 0;
	size_t k;

	for (k = 0; k < xv->n; k++) {
		const struct olc_xd_lock *x = &xv->v[k];

		if (x->o.node == xv->node || x->role != ORDLOCK_ROLE_HOLDER || x->o.in_dlm ||
		    x->o.rank != l->rank || x->o.id != l->id || strcmp(x->domain, l->domain) ||
		    (x->o.mode == ORDLOCK_MODE_SHARED && l->mode == ORDLOCK_MODE_SHARED))
			continue;
		fprintf(f, "%s node %u pid %u (%s)", named++ ? "," : ": held by", x->o.node,
			x->o.pid, x->o.comm);
	}
	return named;
}

static void olc_locks_cluster_notes(FILE *f, const struct olc_lrow *rows, size_t n,
				    const char *domain, const struct olc_args *a,
				    const struct olc_dlm_spaces *sp,
				    const struct olc_xd_view *xv)
{
	const struct olc_dlm_space *s;
	const struct olc_dlm_res *r;
	size_t i, k;

	for (i = 0; i < n; i++) {
		const struct olc_lock *l = rows[i].l;
		int named = 0;

		if (!l || !l->cluster_wait || (domain && strcmp(l->domain, domain)) ||
		    (a->have_pid && !olc_pid_match(a->pid, l->owner.pid)))
			continue;
		fprintf(f, "%s: pid %u (owner %llu) holds it on this node and waits for its lock in the cluster",
			olc_key(l->domain, l->rank, l->id), l->owner.pid,
			(unsigned long long)l->owner.id);
		s = olc_dlm_space_of(sp, l->domain);
		r = s ? olc_dlm_res_of(s, l->rank, l->id) : NULL;
		if (olc_locks_xd_holders(f, l, xv)) {
			/* named by the daemons, with their pids */
		} else if (r && r->master == 0) {
			for (k = 0; k < s->view.nlocks; k++) {
				const struct olc_dlm_lock *d = &s->view.locks[k];

				if (d->rank != l->rank || d->id != l->id ||
				    !olc_dlm_lock_blocks(d, l->mode))
					continue;
				fprintf(f, "%s node %d", named++ ? "," : ": held by", d->node);
			}
		} else if (r && r->master > 0) {
			fprintf(f, " (held on another node: its master, node %d, knows which)",
				r->master);
		}
		fputc('\n', f);
	}
}

static const struct olc_option olc_locks_options[] = {
	OLC_OPTION_DOMAIN("only this domain"),
	OLC_OPTIONS_TABLE("only the rows of the owners of process PID\n"
			  "(of an ordlockctl exec: of its command too)"),
	{ 0 },
};

/* the default columns without cluster domains: all but NODE */
#define OLC_LOCKS_LOCAL_COLUMNS "DOMAIN,KEY,ROLE,POS,OWNER,PID,COMM,MODE,TOKEN,WAITED,LEASE"

static const char *const olc_locks_headers[] = {
	"DOMAIN", "KEY", "ROLE", "POS", "OWNER", "PID", "COMM", "MODE",
	"TOKEN", "WAITED", "LEASE", "NODE", NULL,
};

/* Whether ordlock-xdetectd's view @xv has node @node's rows */
static bool olc_xd_answered(const struct olc_xd_view *xv, uint32_t node)
{
	size_t i;

	for (i = 0; i < xv->nnodes; i++)
		if (xv->nodes[i] == node)
			return true;
	return false;
}

/*
 * Gather this host's rows and the other nodes' into one sorted array: the
 * other nodes' from their ordlock-xdetectd (@xv, those of a cluster domain
 * of this node's), else from this node's DLM
 */
static struct olc_lrow *olc_lrows(const struct olc_locks *locks,
				  const struct olc_dlm_spaces *sp,
				  const struct olc_xd_view *xv, size_t *n)
{
	size_t i, k, total = locks->n + xv->n;
	struct olc_lrow *rows;

	for (i = 0; i < sp->n; i++)
		total += sp->v[i].view.nlocks;
	rows = calloc(total ? total : 1, sizeof(*rows));
	if (!rows)
		return NULL;
	*n = 0;
	for (i = 0; i < locks->n; i++) {
		rows[*n].l = &locks->v[i];
		rows[(*n)++].domain = locks->v[i].domain;
	}
	for (i = 0; i < sp->n; i++)
		for (k = 0; k < sp->v[i].view.nlocks; k++) {
			const struct olc_dlm_lock *r = &sp->v[i].view.locks[k];

			/* the daemon of that node answered: its rows say more */
			if (r->node > 0 && olc_xd_answered(xv, (uint32_t)r->node))
				continue;
			rows[*n].r = r;
			rows[(*n)++].domain = sp->v[i].domain;
		}
	for (i = 0; i < xv->n; i++) {
		const struct olc_xd_lock *x = &xv->v[i];

		if (x->o.node == xv->node || !olc_dlm_space_of(sp, x->domain))
			continue;
		rows[*n].x = x;
		rows[(*n)++].domain = x->domain;
	}
	qsort(rows, *n, sizeof(*rows), olc_lrow_cmp);
	return rows;
}

static void olc_locks_json_remote(struct olc_json *j, const struct olc_lrow *w)
{
	const struct olc_dlm_lock *r = w->r;

	olc_json_str(j, "domain", w->domain);
	olc_json_key(j, w->domain, r->rank, r->id);
	olc_json_str(j, "role", olc_role_str(r->role));
	/* as on this host's rows: 0 for a holder */
	olc_json_u64(j, "position", r->pos);
	olc_json_null(j, "owner_id");
	olc_json_null(j, "pid");
	olc_json_null(j, "comm");
	olc_json_null(j, "pid_exited");
	olc_json_str(j, "mode", olc_mode_str(r->mode));
	olc_json_null(j, "token");
	olc_json_null(j, "waited_us");
	olc_json_null(j, "lease_left_ms");
	olc_json_null(j, "cluster_wait");
	olc_json_null(j, "fast_index");
	olc_json_int(j, "node", r->node);
	if (r->grmode == OLC_DLM_IV)
		olc_json_null(j, "dlm_granted");
	else
		olc_json_str(j, "dlm_granted", olc_dlm_mode_str(r->grmode));
	if (r->rqmode == OLC_DLM_IV)
		olc_json_null(j, "dlm_requested");
	else
		olc_json_str(j, "dlm_requested", olc_dlm_mode_str(r->rqmode));
}

static void olc_locks_cells_remote(struct olc_table *t, const struct olc_lrow *w)
{
	const struct olc_dlm_lock *r = w->r;
	int holder = r->role == ORDLOCK_ROLE_HOLDER;

	olc_table_cell(t, OLC_RESET, "%s", w->domain);
	olc_table_cell(t, OLC_BOLD, "%s", olc_key(w->domain, r->rank, r->id));
	olc_table_cell(t, holder ? OLC_GREEN : OLC_YELLOW, "%s", olc_role_str(r->role));
	/* the table (c_views reads it) keeps "-" for another node's holder */
	if (r->pos)
		olc_table_cell(t, OLC_RESET, "%u", r->pos);
	else
		olc_table_cell(t, OLC_RESET, "-");
	olc_table_cell(t, OLC_RESET, "-");
	olc_table_cell(t, OLC_RESET, "-");
	olc_table_cell(t, OLC_RESET, "-");
	olc_table_cell(t, OLC_RESET, "%s", olc_mode_str(r->mode));
	olc_table_cell(t, OLC_RESET, "-");
	olc_table_cell(t, OLC_RESET, "-");
	olc_table_cell(t, OLC_RESET, "-");
	olc_table_cell(t, OLC_CYAN, "%d", r->node);
}

/* Another node's row as its ordlock-xdetectd answered */
static void olc_locks_json_xd(struct olc_json *j, const struct olc_lrow *w)
{
	const struct olc_xd_lock *x = w->x;

	olc_json_str(j, "domain", w->domain);
	olc_json_key(j, w->domain, x->o.rank, x->o.id);
	olc_json_str(j, "role", olc_role_str(x->role));
	olc_json_u64(j, "position", x->pos);
	olc_json_u64(j, "owner_id", x->o.owner_id);
	olc_json_u64(j, "pid", x->o.pid);
	olc_json_str(j, "comm", x->o.comm);
	olc_json_null(j, "pid_exited");
	olc_json_str(j, "mode", olc_mode_str(x->o.mode));
	olc_json_null(j, "token");
	if (x->has_waited)
		olc_json_u64(j, "waited_us", x->waited_us);
	else
		olc_json_null(j, "waited_us");
	olc_json_null(j, "lease_left_ms");
	olc_json_bool(j, "cluster_wait", x->role == ORDLOCK_ROLE_HOLDER && x->o.in_dlm);
	olc_json_null(j, "fast_index");
	olc_json_int(j, "node", (int)x->o.node);
	olc_json_null(j, "dlm_granted");
	olc_json_null(j, "dlm_requested");
	olc_json_str(j, "view", "xdetectd");
}

static void olc_locks_cells_xd(struct olc_table *t, const struct olc_lrow *w)
{
	const struct olc_xd_lock *x = w->x;
	int holder = x->role == ORDLOCK_ROLE_HOLDER && !x->o.in_dlm;
	char buf[32];

	olc_table_cell(t, OLC_RESET, "%s", w->domain);
	olc_table_cell(t, OLC_BOLD, "%s", olc_key(w->domain, x->o.rank, x->o.id));
	olc_table_cell(t, holder ? OLC_GREEN : OLC_YELLOW, "%s", olc_role_str(x->role));
	olc_table_cell(t, OLC_RESET, "%u", x->pos);
	olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)x->o.owner_id);
	olc_table_cell(t, OLC_RESET, "%u", x->o.pid);
	olc_table_cell(t, OLC_RESET, "%s", x->o.comm);
	olc_table_cell(t, OLC_RESET, "%s", olc_mode_str(x->o.mode));
	/* the token is its node's: "-" */
	olc_table_cell(t, OLC_RESET, "-");
	if (x->has_waited)
		olc_table_cell(t, OLC_RESET, "%s", olc_us_cell(buf, sizeof(buf), x->waited_us));
	else
		olc_table_cell(t, OLC_RESET, "-");
	olc_table_cell(t, OLC_RESET, "-");
	olc_table_cell(t, OLC_CYAN, "%u", x->o.node);
}

/*
 * The line that says where the other nodes' owners come from: their
 * ordlock-xdetectd (@ret 0), or why they are not there (this node's view
 * only); on a host with cluster domains only
 */
static int olc_node_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void olc_locks_xd_note(FILE *f, const struct olc_dlm_spaces *sp,
			      const struct olc_xd_view *xv, int ret, const char *why)
{
	uint32_t nodes[OLC_XD_NODES_MAX];
	size_t i;

	if (!sp->n)
		return;
	if (ret) {
		fprintf(f, "this view is this node's only (other nodes' owners unknown): %s\n", why);
		return;
	}
	memcpy(nodes, xv->nodes, xv->nnodes * sizeof(nodes[0]));
	qsort(nodes, xv->nnodes, sizeof(nodes[0]), olc_node_cmp);
	fprintf(f, "other nodes' owners (NODE): as their ordlock-xdetectd answered over CPG (nodes");
	for (i = 0; i < xv->nnodes; i++)
		fprintf(f, "%s%u%s", i ? ", " : " ", nodes[i],
			nodes[i] == xv->node ? " (this node)" : "");
	fputc(')', f);
	if (!xv->complete) {
		fprintf(f, "; not in time:");
		for (i = 0; i < xv->nmissing; i++)
			fprintf(f, "%s%u", i ? ", node " : " node ", xv->missing[i]);
		fprintf(f, " (their rows, if any, are the DLM's)");
	}
	fputc('\n', f);
}

/* Whether row @w is shown: in @domain (NULL: any), of the pid asked for */
static bool olc_lrow_shown(const struct olc_lrow *w, const char *domain,
			   const struct olc_args *a)
{
	if (domain && strcmp(w->domain, domain))
		return false;
	/* -p PID: this host's process */
	return !a->have_pid || (w->l && olc_pid_match(a->pid, w->l->owner.pid));
}

static int olc_locks_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	const char *const *headers = olc_locks_headers;
	struct olc_dlm_spaces sp = { 0 };
	struct olc_xd_view xv = { 0 };
	struct olc_locks locks = { 0 };
	char why[256] = "", *raw = NULL;
	int xret = -ENOENT;
	struct olc_args a = { 0 };
	const char *domain, *source = NULL;
	struct olc_lrow *rows;
	struct olc_table *t;
	struct olc_json j;
	size_t i, nrows = 0;
	char buf[32];
	int ret;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	domain = a.domain;
	ret = olc_load_locks(&locks, &source);
	if (ret)
		return olc_exit_errno(ret);
	/* a domain named by mistake is an error, not an empty table */
	for (i = 0; domain && i < locks.n; i++)
		if (!strcmp(locks.v[i].domain, domain))
			break;
	if (domain && i == locks.n) {
		ret = olc_domain_known(domain);
		if (ret) {
			olc_locks_free(&locks);
			return olc_exit_errno(ret);
		}
	}
	ret = olc_load_dlm(&sp, domain);
	/* other nodes' owners: from their daemons, on a host with cluster domains */
	if (!ret && (sp.n || olc_opt.json))
		xret = olc_xd_load_view(&xv, why, sizeof(why), &raw);
	rows = ret ? NULL : olc_lrows(&locks, &sp, &xv, &nrows);
	if (!rows) {
		olc_err("out of memory");
		olc_xd_view_free(&xv);
		olc_dlm_spaces_free(&sp);
		olc_locks_free(&locks);
		return OLC_EXIT_OSERR;
	}

	if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_json_obj(&j, NULL);
		olc_json_str(&j, "source", source);
		olc_locks_json_cluster(&j, &sp);
		/* every node's owners, from ordlock-xdetectd over CPG */
		if (raw)
			olc_json_raw(&j, "all_nodes", raw);
		else
			olc_json_null(&j, "all_nodes");
		if (xret)
			olc_json_str(&j, "all_nodes_error", why);
		else
			olc_json_null(&j, "all_nodes_error");
		olc_json_arr(&j, "locks");
		for (i = 0; i < nrows; i++) {
			const struct olc_lock *l = rows[i].l;
			int holder;

			if (!olc_lrow_shown(&rows[i], domain, &a))
				continue;
			olc_json_obj(&j, NULL);
			if (rows[i].x) {
				olc_locks_json_xd(&j, &rows[i]);
				olc_json_obj_end(&j);
				continue;
			}
			if (!l) {
				olc_locks_json_remote(&j, &rows[i]);
				olc_json_str(&j, "view", "dlm");
				olc_json_obj_end(&j);
				continue;
			}
			/* granted here, waiting for the cluster: no token yet */
			holder = l->role == ORDLOCK_ROLE_HOLDER && !l->cluster_wait &&
				 !l->fast;
			olc_json_str(&j, "domain", l->domain);
			olc_json_key(&j, l->domain, l->rank, l->id);
			olc_json_str(&j, "role", olc_role_str(l->role));
			olc_json_u64(&j, "position", l->pos);
			olc_json_u64(&j, "owner_id", l->owner.id);
			olc_json_u64(&j, "pid", l->owner.pid);
			olc_json_str(&j, "comm", l->owner.comm);
			olc_json_bool(&j, "pid_exited", olc_pid_exited(l->owner.pid));
			olc_json_str(&j, "mode", olc_mode_str(l->mode));
			if (holder)
				olc_json_u64(&j, "token", l->value);
			else
				olc_json_null(&j, "token");
			if (holder || l->fast)
				olc_json_null(&j, "waited_us");
			else
				olc_json_u64(&j, "waited_us", l->value);
			if (l->has_lease)
				olc_json_u64(&j, "lease_left_ms", l->lease_left_ms);
			else
				olc_json_null(&j, "lease_left_ms");
			olc_json_bool(&j, "cluster_wait", l->cluster_wait);
			/* held by the fast path: the owner index its word names */
			if (l->fast)
				olc_json_u64(&j, "fast_index", l->value);
			else
				olc_json_null(&j, "fast_index");
			/* every row has the keys of every other row */
			olc_json_null(&j, "node");
			olc_json_null(&j, "dlm_granted");
			olc_json_null(&j, "dlm_requested");
			olc_json_str(&j, "view", "local");
			olc_json_obj_end(&j);
		}
		olc_list_end(&j, NULL, NULL, NULL);
		goto out;
	}

	/* NODE by default only on a host with cluster domains: other tables unchanged */
	if (!sp.n)
		olc_tab.defaults = OLC_LOCKS_LOCAL_COLUMNS;
	t = olc_table_new(12, headers, "llllrrllrrrr");
	for (i = 0; i < nrows; i++) {
		const struct olc_lock *l = rows[i].l;
		int holder;

		if (!olc_lrow_shown(&rows[i], domain, &a))
			continue;
		if (rows[i].x) {
			olc_locks_cells_xd(t, &rows[i]);
			continue;
		}
		if (!l) {
			olc_locks_cells_remote(t, &rows[i]);
			continue;
		}
		holder = l->role == ORDLOCK_ROLE_HOLDER && !l->cluster_wait;
		olc_table_cell(t, OLC_RESET, "%s", l->domain);
		olc_table_cell(t, OLC_BOLD, "%s", olc_key(l->domain, l->rank, l->id));
		olc_table_cell(t, holder ? OLC_GREEN : OLC_YELLOW, "%s",
			       olc_role_str(l->role));
		olc_table_cell(t, OLC_RESET, "%u", l->pos);
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)l->owner.id);
		olc_table_cell(t, OLC_RESET, "%u", l->owner.pid);
		olc_table_cell(t, OLC_RESET, "%s", olc_comm_shown(l->owner.pid, l->owner.comm));
		olc_table_cell(t, OLC_RESET, "%s", olc_mode_str(l->mode));
		if (holder && l->fast) {
			/* held by the fast path: no token, the word's owner index */
			olc_table_cell(t, OLC_RESET, "fast:%llu",
				       (unsigned long long)l->value);
			olc_table_cell(t, OLC_RESET, "-");
		} else if (holder) {
			olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)l->value);
			olc_table_cell(t, OLC_RESET, "-");
		} else {
			olc_table_cell(t, OLC_RESET, "-");
			olc_table_cell(t, OLC_RESET, "%s",
				       olc_us_cell(buf, sizeof(buf), l->value));
		}
		if (l->has_lease)
			olc_table_cell(t, OLC_RESET, olc_tab.raw ? "%llu" : "%llums",
				       (unsigned long long)l->lease_left_ms);
		else
			olc_table_cell(t, OLC_RESET, "-");
		olc_table_cell(t, OLC_RESET, "local");
	}
	olc_list_end(NULL, t, a.have_pid ? "locks held or waited for by that pid" :
			 "locks held or waited for", domain);
	/* a script's table (-n, -r) keeps its rows alone on stdout */
	olc_locks_cluster_notes(olc_tab.raw || olc_tab.noheadings ? stderr : stdout,
				rows, nrows, domain, &a, &sp, &xv);
	if (!a.have_pid)
		olc_locks_notes(olc_tab.raw || olc_tab.noheadings ? stderr : stdout, &sp);
	olc_locks_xd_note(olc_tab.raw || olc_tab.noheadings ? stderr : stdout, &sp, &xv,
			  xret, why);
out:
	free(rows);
	free(raw);
	olc_xd_view_free(&xv);
	olc_dlm_spaces_free(&sp);
	olc_locks_free(&locks);
	return OLC_EXIT_OK;
}

const struct olc_cmd olc_cmd_locks = {
	.name = "locks",
	.run = olc_locks_run,
	.flags = OLC_CMD_DOMAIN | OLC_CMD_TABLE,
	.columns = olc_locks_headers,
	.summary = "list the holders and queued waiters of every key",
	.usage = "locks [-d DOMAIN] [-p PID] [-o LIST] [-n] [-r] [-j]",
	.options = olc_locks_options,
	.about =
	"One row per holder and per queued waiter (FIFO position POS) of every key;\n"
	"TOKEN is a holder's fencing token, WAITED how long a waiter has waited,\n"
	"LEASE what is left of a holder's lease before the kernel revokes it.\n"
	"In a cluster domain a key is granted on this node first, then its owner\n"
	"waits for the key's lock in the cluster: such a holder has no TOKEN yet and\n"
	"WAITED says how long it has waited (yellow); a note after the table names\n"
	"it, and the node that holds the key when this node's DLM tells.\n"
	"In a cluster domain, other nodes' holders and waiters follow this host's, as\n"
	"the DLM of this node shows them in debugfs (/sys/kernel/debug/dlm, root's):\n"
	"NODE is their node id (\"local\" on this host's rows; a default column only\n"
	"on a host with cluster domains), MODE what they hold or ask for (the DLM's\n"
	"PR is shared, EX exclusive), POS their place in the DLM's queue; they have no\n"
	"OWNER, PID, COMM or TOKEN. Only a key this node masters lists every node's\n"
	"locks: notes after the table say which keys are mastered elsewhere, that the\n"
	"view is a snapshot, or why it cannot be shown (no debugfs, no permission).\n"
	"Where ordlock-xdetectd runs, the other nodes' rows are their owners as each\n"
	"node's daemon answered over CPG instead (OWNER, PID, COMM, POS and WAITED of\n"
	"that node); a line after the table says so, or, on a host with cluster\n"
	"domains and no daemon, that the view is this node's only, and why.\n",
	.help =
	"JSON: {\"source\", \"locks\": [{\"domain\", \"key\", \"rank\", \"id\", \"role\"\n"
	"(holder|waiter|converter), \"position\", \"owner_id\", \"pid\", \"comm\",\n"
	"\"pid_exited\" (true: that process has exited, the owner lives on), \"mode\",\n"
	"\"token\" (null for waiters), \"waited_us\" (null for holders),\n"
	"\"lease_left_ms\" (null without a lease), \"cluster_wait\" (true: a holder\n"
	"granted here that waits for the cluster, token null and waited_us set; null\n"
	"on another node's row), \"node\" (null: this host; another\n"
	"node's row: its node id, null owner_id, pid, comm, token and waited_us),\n"
	"\"dlm_granted\", \"dlm_requested\" (another node's row: NL, PR, EX, or null for\n"
	"none; null on this host's rows), \"view\" (local, dlm: this node's DLM, or\n"
	"xdetectd: that node's daemon, with its owner_id, pid, comm, waited_us):\n"
	"every row has every key, a holder's position is 0}],\n"
	"\"cluster\": [{\"domain\", \"lockspace\", \"file\", \"snapshot\" (true), \"read_at\",\n"
	"\"this_node\" (null: not known), \"readable\", \"error\" (null when readable),\n"
	"\"ignored_resources\", \"keys\" (both null when not readable): [{\"key\", \"rank\",\n"
	"\"id\", \"master\" (here|elsewhere|unknown), \"master_node\", \"all_nodes_known\"}]}],\n"
	"\"all_nodes\" (null without ordlock-xdetectd): {\"node\", \"nodes\" (that answered),\n"
	"\"missing\", \"complete\", \"locks\": [{\"domain\", \"role\", \"position\",\n"
	"\"waited_us\", \"owner\": {\"node\", \"owner_id\", \"pid\", \"comm\", \"key\",\n"
	"\"mode\", \"in_dlm\", ...}}]}: every node's owners, \"all_nodes_error\" (why\n"
	"all_nodes is null, else null)}.\n",
};
