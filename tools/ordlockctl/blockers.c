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
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dlmview.h"
#include "ordlockctl.h"

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
	size_t i;

	if (d) {
		for (i = 0; i < o->nnodes && o->nodes[i] != d->node; i++)
			;
		if (i == o->nnodes && o->nnodes < sizeof(o->nodes) / sizeof(o->nodes[0]))
			o->nodes[o->nnodes++] = d->node;
	}
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

static int olc_blockers_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	struct olc_blockers_args a = { 0 };
	struct olc_dlm_spaces sp = { 0 };
	struct olc_locks locks = { 0 };
	struct olc_blockers_out o = { 0 };
	struct olc_edges edges = { 0 };
	const char *domain, *source = "file";
	struct olc_table *t = NULL;
	uint32_t pid, *pids;
	size_t i, n = 0, npids = 0;
	struct olc_json j;
	char buf[32];
	int ret;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	if (optind != argc - 1)
		return olc_usage(cmd, "give one PID");
	if (olc_parse_u32(argv[optind], &pid) || !pid)
		return olc_usage(cmd, "\"%s\" is not a process id", argv[optind]);
	domain = a.base.domain;
	olc_saved_view = !!a.base.file;
	ret = a.base.file ? olc_load_graph_file(a.base.file, &edges) :
			    olc_load_graph(&edges, &source);
	if (ret)
		return a.base.file ? olc_exit_file(ret) : olc_exit_errno(ret);
	/* a cluster wait is in the lock table, not the graph (not in a file) */
	if (!a.base.file) {
		ret = olc_load_locks(&locks, NULL);
		if (ret) {
			olc_edges_free(&edges);
			return olc_exit_errno(ret);
		}
		if (olc_load_dlm(&sp, domain)) {
			olc_err("out of memory");
			olc_locks_free(&locks);
			olc_edges_free(&edges);
			return OLC_EXIT_OSERR;
		}
	}
	pids = calloc(edges.n + 1, sizeof(*pids));
	if (!pids) {
		olc_err("out of memory");
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
		olc_json_arr(&j, "blockers");
	} else if (!a.quiet) {
		/* NODE by default only on a host with cluster domains */
		if (!sp.n)
			olc_tab.defaults = OLC_BLOCKERS_LOCAL_COLUMNS;
		t = olc_table_new(10, olc_blockers_headers, "rlrllrrlrr");
	}
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
	/* the owners of PID granted a key here that wait for the cluster */
	o.t = t;
	o.j = olc_opt.json && !a.quiet ? &j : NULL;
	for (i = 0; i < locks.n; i++) {
		const struct olc_lock *l = &locks.v[i];

		if (!l->cluster_wait || !olc_pid_match(pid, l->owner.pid) ||
		    (domain && strcmp(l->domain, domain)))
			continue;
		n += olc_blockers_cluster(&o, l, &sp);
	}
	/* pg_blocking_pids(): each blocking pid once, in order */
	qsort(pids, npids, sizeof(*pids), olc_u32_cmp);
	if (npids) {
		size_t k, m = 1;

		for (k = 1; k < npids; k++)
			if (pids[k] != pids[m - 1])
				pids[m++] = pids[k];
		npids = m;
	}
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
		printf("pid %u waits for no key%s\n", pid, olc_in_domain(domain));
	} else {
		olc_list_end(NULL, t, "blockers", domain);
		fputs(o.notes, stdout);
	}
	free(pids);
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
	.usage = "blockers [-d DOMAIN] [-f FILE] [-o LIST] [-n] [-r] [-q] [-j] PID",
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
	"\"held elsewhere\" (NODE \"?\") and a note names the master node.\n",
	.help =
	"Exit status: 1 PID is blocked (the rows say by whom), 0 it waits for\n"
	"nothing, 3 nothing seen but the view is filtered (without root or\n"
	"CAP_NET_ADMIN only your own owners are shown); ordlockctl's own failures\n"
	"as in \"ordlockctl help\".\n"
	"\n"
	"JSON: {\"source\", \"pid\", \"blockers\": [{\"pid\", \"comm\", \"pid_exited\", \"owner_id\",\n"
	"\"mode\",\n"
	"\"domain\", \"key\", \"rank\", \"id\", \"edge\", \"waiter_owner_id\", \"wants\",\n"
	"\"waited_us\", \"node\" (null on this host's rows; another node's holder: its\n"
	"id, null pid, comm and owner_id, edge \"cluster\"; null too when not known\n"
	"here), \"master_node\" (a cluster row: the key's master, null if unknown)}],\n"
	"\"blocking_nodes\": [NODE...] (the other nodes named), \"blocking_pids\": [PID...]\n"
	"(this host's, each once, sorted)}.\n",
};
