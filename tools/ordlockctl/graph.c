// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl graph: the wait-for graph, as a table, JSON or Graphviz DOT.
 *
 * DOT: one node per owner (waiters and holders), one cluster per domain; an
 * edge from each waiter to each owner it waits for, solid when that owner
 * holds the key (hard), dashed when it is queued ahead (soft); the edges
 * and owners that lie on a cycle in red.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ordlockctl.h"

/* A DOT string: the text between the quotes */
static void olc_dot_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
}

/*
 * The edges on some cycle: u -> v with u and v in the same strongly
 * connected component. @on gets a flag per edge index, @von per vertex.
 */
static int olc_on_cycles(const struct olc_wfg *w, unsigned char *on,
			 unsigned char *von)
{
	unsigned int *comp = calloc((size_t)w->nv + 1, sizeof(*comp));
	unsigned int v, e;
	int ret;

	if (!comp)
		return -ENOMEM;
	ret = cf_components(&w->g, comp);
	if (ret) {
		free(comp);
		return ret;
	}
	for (v = 0; v < w->nv; v++) {
		for (e = w->g.off[v]; e < w->g.off[v + 1]; e++) {
			if (comp[w->g.dst[e]] != comp[v])
				continue;
			on[w->edge[e]] = 1;
			von[v] = 1;
			von[w->g.dst[e]] = 1;
		}
	}
	free(comp);
	return 0;
}

static int olc_graph_dot(const struct olc_edges *edges, const char *domain)
{
	unsigned char *on = NULL, *von = NULL, *done = NULL;
	const char **domains = NULL;
	struct olc_wfg w;
	size_t i, nd = 0, d;
	unsigned int v;
	int ret;

	ret = olc_wfg_build(&w, edges, domain);
	if (ret)
		return ret;
	on = calloc(edges->n + 1, 1);
	von = calloc((size_t)w.nv + 1, 1);
	done = calloc((size_t)w.nv + 1, 1);
	domains = calloc((size_t)w.nv + 1, sizeof(*domains));
	ret = -ENOMEM;
	if (!on || !von || !done || !domains)
		goto out;
	ret = olc_on_cycles(&w, on, von);
	if (ret)
		goto out;
	for (v = 0; v < w.nv; v++) {
		for (d = 0; d < nd; d++)
			if (!strcmp(domains[d], w.domain[v]))
				break;
		if (d == nd)
			domains[nd++] = w.domain[v];
	}

	/*
	 * nodesep: the labels of the two arcs of a 2-cycle sit in the same
	 * gap between ranks, one above the other, this far apart at least
	 * (at the default 0.25 in, two-line labels touched)
	 */
	printf("digraph ordlock {\n"
	       "\tgraph [rankdir=LR, nodesep=0.7, fontname=\"Helvetica\", label=\"ordlock wait-for graph: an arrow from A to B means A waits for B;\\n"
	       "its label: the key and the mode A wants, then what B does with it.\\n"
	       "Solid: B holds the key; dashed: B is queued ahead of A for it; red: on a cycle (a deadlock)\"];\n"
	       "\tnode [shape=box, style=rounded, fontname=\"Helvetica\"];\n"
	       "\tedge [fontname=\"Helvetica\", fontsize=10];\n");
	for (d = 0; d < nd; d++) {
		printf("\tsubgraph \"cluster_");
		olc_dot_str(stdout, domains[d]);
		printf("\" {\n\t\tlabel=\"domain ");
		olc_dot_str(stdout, domains[d]);
		printf("\";\n");
		for (v = 0; v < w.nv; v++) {
			if (strcmp(w.domain[v], domains[d]))
				continue;
			printf("\t\to%llu [label=\"pid %u (", (unsigned long long)w.ids[v],
			       w.who[v]->pid);
			olc_dot_str(stdout, w.who[v]->comm);
			printf(")\\nowner %llu\"%s];\n", (unsigned long long)w.ids[v],
			       von[v] ? ", color=red, fontcolor=red, penwidth=2" : "");
		}
		printf("\t}\n");
	}
	for (i = 0; i < edges->n; i++) {
		const struct olc_edge *e = &edges->v[i];

		if (domain && strcmp(e->domain, domain))
			continue;
		if (e->waiter.id == e->blocker.id)
			continue;
		printf("\to%llu -> o%llu [label=\"%s ", (unsigned long long)e->waiter.id,
		       (unsigned long long)e->blocker.id, olc_mode_str(e->mode));
		olc_dot_str(stdout, olc_key(e->domain, e->rank, e->id));
		printf("\\n%s %s\", style=%s%s];\n",
		       e->type == ORDLOCK_EDGE_SOFT ? "queued" :
		       e->type == ORDLOCK_EDGE_THREAD ? "its thread waits" : "held",
		       olc_mode_str(e->blocker_mode),
		       e->type == ORDLOCK_EDGE_SOFT ? "dashed" :
		       e->type == ORDLOCK_EDGE_THREAD ? "dotted" : "solid",
		       on[i] ? ", color=red, fontcolor=red, penwidth=2" : "");
	}
	printf("}\n");
	ret = 0;
out:
	free(on);
	free(von);
	free(done);
	free(domains);
	olc_wfg_free(&w);
	return ret;
}

enum { OLC_OPT_DOT = 0x200 };

struct olc_graph_args {
	struct olc_args base;
	int dot;
};

static const struct olc_option olc_graph_options[] = {
	OLC_OPTION_DOMAIN("only this domain"),
	OLC_OPTION_FILE,
	{ OLC_OPT_DOT, "dot", NULL, "Graphviz DOT: owners as nodes, hard edges solid, soft\nedges dashed, cycles in red (ordlockctl graph --dot |\ndot -Tsvg > graph.svg)" },
	{ 0 },
};

/* --dot */
static int olc_graph_opt(const struct olc_cmd *cmd, int c, const char *arg,
			 void *args)
{
	(void)cmd;
	(void)c;
	(void)arg;
	((struct olc_graph_args *)args)->dot = 1;
	return -1;
}

static int olc_graph_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	static const char *const headers[] = {
		"DOMAIN", "WAITER", "PID", "COMM", "WANTS", "BLOCKER", "PID", "COMM",
		"BECAUSE", "EDGE", "WAITED",
	};
	struct olc_graph_args a = { 0 };
	struct olc_edges edges = { 0 };
	const char *domain, *source = "file";
	struct olc_table *t;
	struct olc_json j;
	char buf[32];
	size_t i;
	int ret;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	domain = a.base.domain;
	if (a.dot && olc_opt.json)
		return olc_usage(cmd, "--dot and --json exclude each other");
	ret = a.base.file ? olc_load_graph_file(a.base.file, &edges) :
		       olc_load_graph(&edges, &source);
	if (ret)
		return a.base.file ? olc_exit_file(ret) : olc_exit_errno(ret);

	if (a.dot) {
		ret = olc_graph_dot(&edges, domain);
		olc_edges_free(&edges);
		if (ret) {
			olc_err("graph: %s", strerror(-ret));
			return olc_exit_errno(ret);
		}
		return OLC_EXIT_OK;
	}
	if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_json_obj(&j, NULL);
		olc_json_str(&j, "source", source);
		olc_json_arr(&j, "edges");
		for (i = 0; i < edges.n; i++) {
			const struct olc_edge *e = &edges.v[i];

			if (domain && strcmp(e->domain, domain))
				continue;
			olc_json_obj(&j, NULL);
			olc_json_str(&j, "domain", e->domain);
			olc_json_who(&j, "waiter", &e->waiter);
			olc_json_str(&j, "mode", olc_mode_str(e->mode));
			olc_json_key(&j, e->domain, e->rank, e->id);
			olc_json_obj(&j, "blocker");
			olc_json_u64(&j, "owner_id", e->blocker.id);
			olc_json_u64(&j, "pid", e->blocker.pid);
			olc_json_str(&j, "comm", e->blocker.comm);
			olc_json_str(&j, "mode", olc_mode_str(e->blocker_mode));
			olc_json_obj_end(&j);
			olc_json_str(&j, "edge", olc_edge_shown(e));
			olc_json_u64(&j, "waited_us", e->waited_us);
			olc_json_obj_end(&j);
		}
		olc_list_end(&j, NULL, NULL, NULL);
		olc_edges_free(&edges);
		return OLC_EXIT_OK;
	}
	t = olc_table_new(11, headers, "lrrllrrlllr");
	for (i = 0; i < edges.n; i++) {
		const struct olc_edge *e = &edges.v[i];

		if (domain && strcmp(e->domain, domain))
			continue;
		olc_table_cell(t, OLC_RESET, "%s", e->domain);
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)e->waiter.id);
		olc_table_cell(t, OLC_RESET, "%u", e->waiter.pid);
		olc_table_cell(t, OLC_RESET, "%s", e->waiter.comm);
		olc_table_cell(t, OLC_BOLD, "%s %s", olc_mode_str(e->mode),
			       olc_key(e->domain, e->rank, e->id));
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)e->blocker.id);
		olc_table_cell(t, OLC_RESET, "%u", e->blocker.pid);
		olc_table_cell(t, OLC_RESET, "%s", e->blocker.comm);
		olc_table_cell(t, OLC_RESET, "%s %s",
			       e->type == ORDLOCK_EDGE_SOFT ? "queued" :
			       e->type == ORDLOCK_EDGE_THREAD ? "thread waits" : "holds",
			       olc_mode_str(e->blocker_mode));
		olc_table_cell(t, e->type == ORDLOCK_EDGE_SOFT ? OLC_DIM : OLC_RESET,
			       "%s", olc_edge_shown(e));
		olc_table_cell(t, OLC_RESET, "%s",
			       olc_us_str(buf, sizeof(buf), e->waited_us));
	}
	olc_list_end(NULL, t, "owner waits", domain);
	olc_edges_free(&edges);
	return OLC_EXIT_OK;
}

const struct olc_cmd olc_cmd_graph = {
	.name = "graph",
	.run = olc_graph_run,
	.flags = OLC_CMD_DOMAIN | OLC_CMD_FILE,
	.options = olc_graph_options,
	.opt = olc_graph_opt,
	.summary = "show the wait-for graph (table, JSON or Graphviz DOT)",
	.usage = "graph [-d DOMAIN] [-f FILE] [-j | --dot]",
	.about =
	"One row per edge: WAITER waits for the key it WANTS and BLOCKER stands in its\n"
	"way, because it holds the key in a conflicting mode (hard edge) or is queued\n"
	"ahead of it with a conflicting request (soft edge).\n",
	.help =
	"JSON: {\"source\", \"edges\": [{\"domain\", \"waiter\": {\"owner_id\", \"pid\", \"comm\"},\n"
	"\"mode\", \"key\", \"rank\", \"id\", \"blocker\": {\"owner_id\", \"pid\", \"comm\", \"mode\"},\n"
	"\"edge\" (hard|soft|thread|fast: a hard edge to a holder by the fast path),\n"
	"\"waited_us\"}]}.\n",
};
