// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl blockers PID: who stands in the way of process PID, as
 * PostgreSQL's pg_blocking_pids(): from the wait-for graph, every owner
 * that holds a key an owner of PID waits for in a conflicting mode (hard
 * edge) or is queued ahead of it with a conflicting request (soft edge).
 * In a cluster domain, an owner of PID granted a key on this node may wait
 * for the key's lock in the cluster (the lock table's holder rows marked
 * cluster_wait): then the other nodes' holders that this node's DLM lists
 * (dlmview.c: only a key mastered here lists every node's locks), or a row
 * saying that the key is held on another node and which node knows more.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dlmview.h"
#include "ordlockctl.h"
#include "xdparse.h"

static const char *const olc_blockers_headers[] = {
	"PID", "COMM", "OWNER", "BECAUSE", "KEY", "EDGE", "WAITER", "WANTS", "WAITED",
	"NODE", NULL,
};

/* the default columns without cluster domains: all but NODE */
#define OLC_BLOCKERS_LOCAL_COLUMNS "PID,COMM,OWNER,BECAUSE,KEY,EDGE,WAITER,WANTS,WAITED"

static const struct olc_option olc_blockers_options[] = {
	OLC_OPTION_DOMAIN("only this domain"),
	OLC_OPTION_FILE,
	{ 'o', "output", "LIST", "the columns to print, comma-separated, in that order\n(see Columns below)" },
	{ 'n', "noheadings", NULL, "print no header line" },
	{ 'r', "raw", NULL, "raw output: one space between columns, no alignment" },
	{ 'q', "quiet", NULL, "print nothing: only the exit status" },
	{ 0 },
};

struct olc_blockers_args {
	struct olc_args base;
	int quiet;
};

/* -q */
static int olc_blockers_opt(const struct olc_cmd *cmd, int c, const char *arg,
			    void *args)
{
	(void)cmd;
	(void)c;
	(void)arg;
	((struct olc_blockers_args *)args)->quiet = 1;
	return -1;
}

static int olc_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/**
 * struct olc_blockers_out - where the rows go
 * @t: the table (NULL with -j or -q)
 * @j: the JSON (NULL without -j, or with -q)
 * @nodes: the other nodes named (for "blocking_nodes"), @nnodes of them
 * @notes: what the rows cannot say, printed after the table
 */
struct olc_blockers_out {
	struct olc_table *t;
	struct olc_json *j;
	int nodes[64];
	size_t nnodes;
	char notes[2048];
	size_t nlen;
};

/* Note node @node among the other nodes named */
static void olc_blockers_node(struct olc_blockers_out *o, int node)
{
	size_t i;

	for (i = 0; i < o->nnodes && o->nodes[i] != node; i++)
		;
	if (i == o->nnodes && o->nnodes < sizeof(o->nodes) / sizeof(o->nodes[0]))
		o->nodes[o->nnodes++] = node;
}

/*
 * One row of ordlock-xdetectd's view @xv: @b's blocker stands in the way
 * of its waiter; @here: this node's id (its rows' NODE "local")
 */
static void olc_blockers_xd_row(struct olc_blockers_out *o, const struct olc_xd_view *xv,
				const struct olc_xd_block *b)
{
	const struct olc_xd_lock *w = &xv->v[b->waiter], *h = &xv->v[b->blocker];
	int queued = b->edge == OLC_XD_QUEUED || b->edge == OLC_XD_DLM_QUEUED;
	int dlm = b->edge == OLC_XD_DLM_HOLDS || b->edge == OLC_XD_DLM_QUEUED;
	const char *edge = dlm ? "cluster" : queued ? "soft" : "hard";
	char buf[32];

	if (h->o.node != xv->node)
		olc_blockers_node(o, (int)h->o.node);
	if (o->j) {
		olc_json_obj(o->j, NULL);
		olc_json_u64(o->j, "pid", h->o.pid);
		olc_json_str(o->j, "comm", h->o.comm);
		olc_json_null(o->j, "pid_exited");
		olc_json_u64(o->j, "owner_id", h->o.owner_id);
		olc_json_str(o->j, "mode", olc_mode_str(h->o.mode));
		olc_json_str(o->j, "domain", w->domain);
		olc_json_key(o->j, w->domain, w->o.rank, w->o.id);
		olc_json_str(o->j, "edge", edge);
		olc_json_u64(o->j, "waiter_owner_id", w->o.owner_id);
		olc_json_str(o->j, "wants", olc_mode_str(w->o.mode));
		if (w->has_waited)
			olc_json_u64(o->j, "waited_us", w->waited_us);
		else
			olc_json_null(o->j, "waited_us");
		olc_json_int(o->j, "node", (int)h->o.node);
		olc_json_null(o->j, "master_node");
		olc_json_str(o->j, "because", queued ? "queued" : "holds");
		olc_json_obj_end(o->j);
	}
	if (!o->t)
		return;
	olc_table_cell(o->t, OLC_BOLD, "%u", h->o.pid);
	olc_table_cell(o->t, OLC_RESET, "%s", h->o.comm);
	olc_table_cell(o->t, OLC_RESET, "%llu", (unsigned long long)h->o.owner_id);
	olc_table_cell(o->t, queued ? OLC_DIM : OLC_RESET, "%s%s%s", queued ? "queued" : "holds",
		       olc_cell_sep(), olc_mode_str(h->o.mode));
	olc_table_cell(o->t, OLC_RESET, "%s", olc_key(w->domain, w->o.rank, w->o.id));
	olc_table_cell(o->t, OLC_RESET, "%s", edge);
	olc_table_cell(o->t, OLC_RESET, "%llu", (unsigned long long)w->o.owner_id);
	olc_table_cell(o->t, OLC_RESET, "%s", olc_mode_str(w->o.mode));
	if (w->has_waited)
		olc_table_cell(o->t, OLC_RESET, "%s", olc_us_cell(buf, sizeof(buf), w->waited_us));
	else
		olc_table_cell(o->t, OLC_RESET, "-");
	if (h->o.node == xv->node)
		olc_table_cell(o->t, OLC_RESET, "local");
	else
		olc_table_cell(o->t, OLC_CYAN, "%u", h->o.node);
}

/*
 * One row of a cluster wait of lock row @l: another node's lock @d that
 * holds @held in the way (@d NULL: not known here, the key's master is
 * @master, -1 unknown)
 */
static void olc_blockers_cluster_row(struct olc_blockers_out *o, const struct olc_lock *l,
				     const struct olc_dlm_lock *d, unsigned int held,
				     int master)
{
	char buf[32];

	if (d)
		olc_blockers_node(o, d->node);
	if (o->j) {
		olc_json_obj(o->j, NULL);
		olc_json_null(o->j, "pid");
		olc_json_null(o->j, "comm");
		olc_json_null(o->j, "pid_exited");
		olc_json_null(o->j, "owner_id");
		if (d)
			olc_json_str(o->j, "mode", olc_mode_str(held));
		else
			olc_json_null(o->j, "mode");
		olc_json_str(o->j, "domain", l->domain);
		olc_json_key(o->j, l->domain, l->rank, l->id);
		olc_json_str(o->j, "edge", "cluster");
		olc_json_u64(o->j, "waiter_owner_id", l->owner.id);
		olc_json_str(o->j, "wants", olc_mode_str(l->mode));
		olc_json_u64(o->j, "waited_us", l->value);
		if (d)
			olc_json_int(o->j, "node", d->node);
		else
			olc_json_null(o->j, "node");
		if (master >= 0)
			olc_json_int(o->j, "master_node", master);
		else
			olc_json_null(o->j, "master_node");
		olc_json_str(o->j, "because", d ? "holds" : "held elsewhere");
		olc_json_obj_end(o->j);
	}
	if (!o->t)
		return;
	olc_table_cell(o->t, OLC_BOLD, "-");
	olc_table_cell(o->t, OLC_RESET, "-");
	olc_table_cell(o->t, OLC_RESET, "-");
	if (d)
		olc_table_cell(o->t, OLC_RESET, "holds%s%s", olc_cell_sep(), olc_mode_str(held));
	else
		olc_table_cell(o->t, OLC_DIM, "held%selsewhere", olc_cell_sep());
	olc_table_cell(o->t, OLC_RESET, "%s", olc_key(l->domain, l->rank, l->id));
	olc_table_cell(o->t, OLC_RESET, "cluster");
	olc_table_cell(o->t, OLC_RESET, "%llu", (unsigned long long)l->owner.id);
	olc_table_cell(o->t, OLC_RESET, "%s", olc_mode_str(l->mode));
	olc_table_cell(o->t, OLC_RESET, "%s", olc_us_cell(buf, sizeof(buf), l->value));
	if (d)
		olc_table_cell(o->t, OLC_CYAN, "%d", d->node);
	else
		olc_table_cell(o->t, OLC_RESET, "?");
}

/* A note after the table */
static void olc_blockers_note(struct olc_blockers_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void olc_blockers_note(struct olc_blockers_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->nlen >= sizeof(o->notes))
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->notes + o->nlen, sizeof(o->notes) - o->nlen, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->nlen = o->nlen + (size_t)n < sizeof(o->notes) ? o->nlen + (size_t)n :
			  sizeof(o->notes);
}

/*
 * The rows of lock row @l, a holder granted here that waits for the
 * cluster: the other nodes' holders in the way that this node's DLM lists
 * (a key mastered here), else one row saying it is held elsewhere.
 * Returns the number of rows.
 */
static size_t olc_blockers_cluster(struct olc_blockers_out *o, const struct olc_lock *l,
				   const struct olc_dlm_spaces *sp)
{
	const struct olc_dlm_space *s = olc_dlm_space_of(sp, l->domain);
	const struct olc_dlm_res *r = s ? olc_dlm_res_of(s, l->rank, l->id) : NULL;
	const char *key = olc_key(l->domain, l->rank, l->id);
	size_t k, n = 0;
	unsigned int held;

	if (r && r->master == 0) {
		for (k = 0; k < s->view.nlocks; k++) {
			const struct olc_dlm_lock *d = &s->view.locks[k];

			if (d->rank != l->rank || d->id != l->id)
				continue;
			held = olc_dlm_lock_blocks(d, l->mode);
			if (!held)
				continue;
			olc_blockers_cluster_row(o, l, d, held, sp->our_node);
			n++;
		}
		if (n)
			return n;
		olc_blockers_note(o, "%s: this node masters it, and its DLM lists no other node's lock in the way now (a snapshot): the DLM's queue decides\n",
				  key);
		olc_blockers_cluster_row(o, l, NULL, 0, sp->our_node);
		return 1;
	}
	if (r && r->master > 0)
		olc_blockers_note(o, "%s is held on another node: its master, node %d, knows which (this node's DLM lists only its own locks of it)\n",
				  key, r->master);
	else if (r)
		olc_blockers_note(o, "%s is held on another node: its master is being looked up\n", key);
	else if (s && s->err)
		olc_blockers_note(o, "%s is held on another node: which one is not known here: cannot read %s: %s\n",
				  key, s->path, s->why);
	else
		olc_blockers_note(o, "%s is held on another node: this node's DLM does not list the key\n",
				  key);
	olc_blockers_cluster_row(o, l, NULL, 0, r ? r->master : -1);
	return 1;
}

/* pids of this host: olc_pid_match(); of another node: that pid */
static int olc_pid_same(uint32_t want, uint32_t pid)
{
	return want == pid;
}

/* Each blocking pid once, in order (pg_blocking_pids()); returns how many */
static size_t olc_blockers_uniq(uint32_t *pids, size_t npids)
{
	size_t k, m = 1;

	if (!npids)
		return 0;
	qsort(pids, npids, sizeof(*pids), olc_u32_cmp);
	for (k = 1; k < npids; k++)
		if (pids[k] != pids[m - 1])
			pids[m++] = pids[k];
	return m;
}

static int olc_blockers_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	struct olc_blockers_args a = { 0 };
	struct olc_dlm_spaces sp = { 0 };
	struct olc_locks locks = { 0 };
	struct olc_blockers_out o = { 0 };
	struct olc_edges edges = { 0 };
	struct olc_xd_view xv = { 0 };
	struct olc_xd_block *xb = NULL;
	const char *domain, *source = "file";
	struct olc_table *t = NULL;
	uint32_t pid, node, *pids;
	size_t i, n = 0, npids = 0, nxb = 0;
	struct olc_json j;
	char buf[32], why[256] = "";
	int ret, xret = -ENOENT, remote;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	if (optind != argc - 1)
		return olc_usage(cmd, "give one PID (or NODE:PID)");
	if (olc_xd_parse_who(argv[optind], &node, &pid))
		return olc_usage(cmd, "\"%s\" is not a process id (PID, or NODE:PID)", argv[optind]);
	if (node && a.base.file)
		return olc_usage(cmd, "NODE:PID asks the cluster, not a file");
	domain = a.base.domain;
	olc_saved_view = !!a.base.file;
	/* the cluster's view: on a host with cluster domains, or for NODE:PID */
	if (!a.base.file && olc_load_dlm(&sp, domain)) {
		olc_err("out of memory");
		return OLC_EXIT_OSERR;
	}
	if (!a.base.file && (sp.n || node))
		xret = olc_xd_load_view(&xv, why, sizeof(why), NULL);
	if (node && !xret && !xv.node) {
		snprintf(why, sizeof(why), "ordlock-xdetectd's answer names no node");
		xret = -EPROTO;
	}
	/* NODE:PID of this node is PID */
	remote = node && (xret || node != xv.node);
	if (remote && xret) {
		olc_err("%s: another node's owner: %s", argv[optind], why);
		olc_xd_view_free(&xv);
		olc_dlm_spaces_free(&sp);
		return OLC_EXIT_UNAVAILABLE;
	}
	if (!xret) {
		nxb = olc_xd_blockers(&xv, remote ? node : xv.node, pid,
				      remote ? olc_pid_same : olc_pid_match, NULL, 0);
		xb = calloc(nxb + 1, sizeof(*xb));
		if (!xb) {
			olc_err("out of memory");
			olc_xd_view_free(&xv);
			olc_dlm_spaces_free(&sp);
			return OLC_EXIT_OSERR;
		}
		olc_xd_blockers(&xv, remote ? node : xv.node, pid,
				remote ? olc_pid_same : olc_pid_match, xb, nxb);
	}
	if (!remote) {
		ret = a.base.file ? olc_load_graph_file(a.base.file, &edges) :
				    olc_load_graph(&edges, &source);
		/* a cluster wait is in the lock table, not the graph (not in a file) */
		if (!ret && !a.base.file)
			ret = olc_load_locks(&locks, NULL);
		if (ret) {
			free(xb);
			olc_xd_view_free(&xv);
			olc_dlm_spaces_free(&sp);
			olc_edges_free(&edges);
			return a.base.file ? olc_exit_file(ret) : olc_exit_errno(ret);
		}
	} else {
		source = "xdetectd";
	}
	pids = calloc(edges.n + nxb + 1, sizeof(*pids));
	if (!pids) {
		olc_err("out of memory");
		free(xb);
		olc_xd_view_free(&xv);
		olc_dlm_spaces_free(&sp);
		olc_locks_free(&locks);
		olc_edges_free(&edges);
		return OLC_EXIT_OSERR;
	}
	if (olc_opt.json && !a.quiet) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_json_obj(&j, NULL);
		olc_json_str(&j, "source", source);
		olc_json_u64(&j, "pid", pid);
		/* PID's node: null when it is this node's and its id is not known */
		if (remote || !xret)
			olc_json_int(&j, "node", (int)(remote ? node : xv.node));
		else if (sp.our_node >= 0)
			olc_json_int(&j, "node", sp.our_node);
		else
			olc_json_null(&j, "node");
		if (xret)
			olc_json_str(&j, "all_nodes_error", why);
		else
			olc_json_null(&j, "all_nodes_error");
		olc_json_arr(&j, "blockers");
	} else if (!a.quiet) {
		/* NODE by default only on a host with cluster domains */
		if (!sp.n && !remote)
			olc_tab.defaults = OLC_BLOCKERS_LOCAL_COLUMNS;
		t = olc_table_new(10, olc_blockers_headers, "rlrllrrlrr");
	}
	o.t = t;
	o.j = olc_opt.json && !a.quiet ? &j : NULL;
	for (i = 0; i < edges.n; i++) {
		const struct olc_edge *e = &edges.v[i];
		int soft = e->type == ORDLOCK_EDGE_SOFT;

		if (!olc_pid_match(pid, e->waiter.pid) || (domain && strcmp(e->domain, domain)))
			continue;
		n++;
		pids[npids++] = e->blocker.pid;
		if (a.quiet)
			continue;
		if (olc_opt.json) {
			olc_json_obj(&j, NULL);
			olc_json_u64(&j, "pid", e->blocker.pid);
			olc_json_str(&j, "comm", e->blocker.comm);
			olc_json_bool(&j, "pid_exited", olc_pid_exited(e->blocker.pid));
			olc_json_u64(&j, "owner_id", e->blocker.id);
			olc_json_str(&j, "mode", olc_mode_str(e->blocker_mode));
			olc_json_str(&j, "domain", e->domain);
			olc_json_key(&j, e->domain, e->rank, e->id);
			olc_json_str(&j, "edge", olc_edge_shown(e));
			olc_json_u64(&j, "waiter_owner_id", e->waiter.id);
			olc_json_str(&j, "wants", olc_mode_str(e->mode));
			olc_json_u64(&j, "waited_us", e->waited_us);
			/* every row has every key: another node's have these */
			olc_json_null(&j, "node");
			olc_json_null(&j, "master_node");
			olc_json_str(&j, "because", soft ? "queued" : "holds");
			olc_json_obj_end(&j);
			continue;
		}
		olc_table_cell(t, OLC_BOLD, "%u", e->blocker.pid);
		olc_table_cell(t, OLC_RESET, "%s", olc_comm_shown(e->blocker.pid, e->blocker.comm));
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)e->blocker.id);
		olc_table_cell(t, soft ? OLC_DIM : OLC_RESET, "%s%s%s", soft ? "queued" : "holds",
			       olc_cell_sep(), olc_mode_str(e->blocker_mode));
		olc_table_cell(t, OLC_RESET, "%s", olc_key(e->domain, e->rank, e->id));
		olc_table_cell(t, OLC_RESET, "%s", olc_edge_shown(e));
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)e->waiter.id);
		olc_table_cell(t, OLC_RESET, "%s", olc_mode_str(e->mode));
		olc_table_cell(t, OLC_RESET, "%s", olc_us_cell(buf, sizeof(buf), e->waited_us));
		olc_table_cell(t, OLC_RESET, "local");
	}
	/*
	 * The daemons' view: every row of another node's owner; of this
	 * node's, those across nodes (the graph has the others)
	 */
	for (i = 0; i < nxb; i++) {
		const struct olc_xd_lock *w = &xv.v[xb[i].waiter];

		if (!remote && xb[i].edge != OLC_XD_DLM_HOLDS && xb[i].edge != OLC_XD_DLM_QUEUED)
			continue;
		if (domain && strcmp(w->domain, domain))
			continue;
		n++;
		/* blocking_pids: those of PID's node */
		if (xv.v[xb[i].blocker].o.node == w->o.node)
			pids[npids++] = xv.v[xb[i].blocker].o.pid;
		if (!a.quiet)
			olc_blockers_xd_row(&o, &xv, &xb[i]);
	}
	/*
	 * The owners of PID granted a key here that wait for the cluster,
	 * when no daemon named who is in the way: this node's DLM
	 */
	for (i = 0; i < locks.n; i++) {
		const struct olc_lock *l = &locks.v[i];
		size_t k;

		if (!l->cluster_wait || !olc_pid_match(pid, l->owner.pid) ||
		    (domain && strcmp(l->domain, domain)))
			continue;
		for (k = 0; k < nxb; k++) {
			const struct olc_xd_lock *w = &xv.v[xb[k].waiter];

			if (w->o.owner_id == l->owner.id && w->o.rank == l->rank &&
			    w->o.id == l->id && !strcmp(w->domain, l->domain))
				break;
		}
		if (k == nxb)
			n += olc_blockers_cluster(&o, l, &sp);
	}
	npids = olc_blockers_uniq(pids, npids);
	if (a.quiet) {
		if (olc_view_filtered)
			olc_err("showing only the owners of uid %u: the others' need root or CAP_NET_ADMIN",
				(unsigned int)geteuid());
	} else if (olc_opt.json) {
		olc_json_arr_end(&j);
		olc_json_arr(&j, "blocking_nodes");
		for (i = 0; i < o.nnodes; i++)
			olc_json_int(&j, NULL, o.nodes[i]);
		olc_json_arr_end(&j);
		olc_json_arr(&j, "blocking_pids");
		for (i = 0; i < npids; i++)
			olc_json_u64(&j, NULL, pids[i]);
		/* olc_list_end() closes an array: "blocking_pids" */
		olc_list_end(&j, NULL, NULL, NULL);
	} else if (!n) {
		olc_table_free(t);
		if (olc_view_filtered)
			olc_err("showing only the owners of uid %u: the others' need root or CAP_NET_ADMIN",
				(unsigned int)geteuid());
		if (remote)
			printf("pid %u of node %u waits for no key%s\n", pid, node,
			       olc_in_domain(domain));
		else
			printf("pid %u waits for no key%s\n", pid, olc_in_domain(domain));
	} else {
		olc_list_end(NULL, t, "blockers", domain);
		fputs(o.notes, stdout);
	}
	/* why the other nodes' owners are unknown (a script's table: stderr) */
	if (!a.quiet && !olc_opt.json && sp.n && xret)
		fprintf(olc_tab.raw || olc_tab.noheadings ? stderr : stdout,
			"other nodes' owners unknown (this node's DLM only): %s\n", why);
	else if (!a.quiet && !olc_opt.json && !xret && !xv.complete)
		fprintf(olc_tab.raw || olc_tab.noheadings ? stderr : stdout,
			"not every node answered in time: their owners are not in this view\n");
	free(pids);
	free(xb);
	olc_xd_view_free(&xv);
	olc_dlm_spaces_free(&sp);
	olc_locks_free(&locks);
	olc_edges_free(&edges);
	if (n)
		return OLC_EXIT_FOUND;
	return olc_view_filtered ? OLC_EXIT_PARTIAL : OLC_EXIT_OK;
}

const struct olc_cmd olc_cmd_blockers = {
	.name = "blockers",
	.run = olc_blockers_run,
	.flags = OLC_CMD_ONEARG | OLC_CMD_DOMAIN | OLC_CMD_FILE | OLC_CMD_TABLE,
	.options = olc_blockers_options,
	.opt = olc_blockers_opt,
	.columns = olc_blockers_headers,
	.summary = "who blocks process PID (as PostgreSQL's pg_blocking_pids())",
	.usage = "blockers [-d DOMAIN] [-f FILE] [-o LIST] [-n] [-r] [-q] [-j] PID|NODE:PID",
	.about =
	"One row per owner that stands in the way of a request of process PID: it\n"
	"holds the key PID waits for in a conflicting mode (holds), or is queued\n"
	"ahead of it with a conflicting request (queued; FIFO order). WAITER is the\n"
	"owner of PID that waits, WANTS the mode it asks for. PID of an ordlockctl\n"
	"exec (the $! of \"ordlockctl exec ... &\") answers for its command, the\n"
	"child that takes the keys.\n"
	"In a cluster domain a key is granted on this node first, then the owner\n"
	"waits for its lock in the cluster (EDGE cluster): the rows are then the\n"
	"other nodes' holders in the way as this node's DLM lists them (PID, COMM\n"
	"and OWNER \"-\", NODE their node id; \"local\" on this host's rows, a default\n"
	"column only on a host with cluster domains); the DLM lists every node's\n"
	"locks of a key only on the node that masters it, so elsewhere the row says\n"
	"\"held elsewhere\" (NODE \"?\") and a note names the master node.\n"
	"Where ordlock-xdetectd runs, those rows come from every node's daemon, from\n"
	"any node: the other nodes' holders of the key (holds) and their waits for it\n"
	"in the DLM since before (queued), with PID, COMM and OWNER. NODE:PID asks for\n"
	"process PID of node NODE (its corosync id): what blocks it on its node (EDGE\n"
	"hard, soft) and in the DLM (cluster), from the daemons' view.\n",
	.help =
	"Exit status: 1 PID is blocked (the rows say by whom), 0 it waits for\n"
	"nothing, 3 nothing seen but the view is filtered (without root or\n"
	"CAP_NET_ADMIN only your own owners are shown); ordlockctl's own failures\n"
	"as in \"ordlockctl help\".\n"
	"\n"
	"JSON: {\"source\", \"pid\", \"node\" (PID's, null if not known), \"all_nodes_error\"\n"
	"(why the daemons' view is missing, else null), \"blockers\": [{\"pid\", \"comm\",\n"
	"\"pid_exited\", \"owner_id\", \"mode\", \"because\" (holds, queued, held elsewhere),\n"
	"\"domain\", \"key\", \"rank\", \"id\", \"edge\", \"waiter_owner_id\", \"wants\",\n"
	"\"waited_us\", \"node\" (null on this host's rows; another node's holder: its\n"
	"id, with pid, comm and owner_id from the daemons, null from the DLM; null too\n"
	"when not known here), \"master_node\" (a row of the DLM: the key's master,\n"
	"null if unknown)}], \"blocking_nodes\": [NODE...] (the other nodes named),\n"
	"\"blocking_pids\": [PID...] (of PID's node, each once, sorted)}.\n",
};
