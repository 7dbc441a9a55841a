// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl blockers PID: who stands in the way of process PID, as
 * PostgreSQL's pg_blocking_pids(): from the wait-for graph, every owner
 * that holds a key an owner of PID waits for in a conflicting mode (hard
 * edge) or is queued ahead of it with a conflicting request (soft edge).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ordlockctl.h"

static const char *const olc_blockers_headers[] = {
	"PID", "COMM", "OWNER", "BECAUSE", "KEY", "EDGE", "WAITER", "WANTS", "WAITED", NULL,
};

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

static int olc_blockers_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	struct olc_blockers_args a = { 0 };
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
	ret = a.base.file ? olc_load_graph_file(a.base.file, &edges) :
			    olc_load_graph(&edges, &source);
	if (ret)
		return a.base.file ? olc_exit_file(ret) : olc_exit_errno(ret);
	pids = calloc(edges.n + 1, sizeof(*pids));
	if (!pids) {
		olc_err("out of memory");
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
		t = olc_table_new(9, olc_blockers_headers, "rlrllrrlr");
	}
	for (i = 0; i < edges.n; i++) {
		const struct olc_edge *e = &edges.v[i];
		int soft = e->type == ORDLOCK_EDGE_SOFT;

		if (e->waiter.pid != pid || (domain && strcmp(e->domain, domain)))
			continue;
		n++;
		pids[npids++] = e->blocker.pid;
		if (a.quiet)
			continue;
		if (olc_opt.json) {
			olc_json_obj(&j, NULL);
			olc_json_u64(&j, "pid", e->blocker.pid);
			olc_json_str(&j, "comm", e->blocker.comm);
			olc_json_u64(&j, "owner_id", e->blocker.id);
			olc_json_str(&j, "mode", olc_mode_str(e->blocker_mode));
			olc_json_str(&j, "domain", e->domain);
			olc_json_key(&j, e->domain, e->rank, e->id);
			olc_json_str(&j, "edge", olc_edge_str(e->type));
			olc_json_u64(&j, "waiter_owner_id", e->waiter.id);
			olc_json_str(&j, "wants", olc_mode_str(e->mode));
			olc_json_u64(&j, "waited_us", e->waited_us);
			olc_json_obj_end(&j);
			continue;
		}
		olc_table_cell(t, OLC_BOLD, "%u", e->blocker.pid);
		olc_table_cell(t, OLC_RESET, "%s", e->blocker.comm);
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)e->blocker.id);
		olc_table_cell(t, soft ? OLC_DIM : OLC_RESET, "%s %s", soft ? "queued" : "holds",
			       olc_mode_str(e->blocker_mode));
		olc_table_cell(t, OLC_RESET, "%s", olc_key(e->domain, e->rank, e->id));
		olc_table_cell(t, OLC_RESET, "%s", olc_edge_str(e->type));
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)e->waiter.id);
		olc_table_cell(t, OLC_RESET, "%s", olc_mode_str(e->mode));
		olc_table_cell(t, OLC_RESET, "%s", olc_us_str(buf, sizeof(buf), e->waited_us));
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
	}
	free(pids);
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
	"owner of PID that waits, WANTS the mode it asks for.\n",
	.help =
	"Exit status: 1 PID is blocked (the rows say by whom), 0 it waits for\n"
	"nothing, 3 nothing seen but the view is filtered (without root or\n"
	"CAP_NET_ADMIN only your own owners are shown); ordlockctl's own failures\n"
	"as in \"ordlockctl help\".\n"
	"\n"
	"JSON: {\"source\", \"pid\", \"blockers\": [{\"pid\", \"comm\", \"owner_id\", \"mode\",\n"
	"\"domain\", \"key\", \"rank\", \"id\", \"edge\", \"waiter_owner_id\", \"wants\",\n"
	"\"waited_us\"}], \"blocking_pids\": [PID...] (each once, sorted)}.\n",
};
