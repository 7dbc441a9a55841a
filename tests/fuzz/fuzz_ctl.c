// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzz target of ordlockctl's parsers and cycle finder: one input is
 * given to every debugfs parser (and to dlmdebug.c's of the DLM's LS_all
 * files); the graph, when it parses, goes through the cycle finder with a
 * small work bound. Whatever the input, nothing may
 * crash, and a refusal must name a line of the input and say why.
 *
 * Built two ways:
 *  - with -DORDLOCK_LIBFUZZER and clang -fsanitize=fuzzer (make fuzz-parsers):
 *    LLVMFuzzerTestOneInput();
 *  - included by tests/unit/t_ctl_fuzz.c, which feeds it random and mutated
 *    inputs in make check.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cyclefind.h"
#include "dlmdebug.h"
#include "parse.h"

/* The lines of @data: what a reported line number may be at most */
static unsigned int ctl_fuzz_lines(const uint8_t *data, size_t size)
{
	unsigned int n = 1;
	size_t i;

	for (i = 0; i < size; i++)
		if (data[i] == '\n')
			n++;
	return n;
}

/*
 * Returns 0 when the input was handled as it should be, or a small number
 * naming the broken promise (the libFuzzer target aborts on it).
 */
static int ctl_fuzz_one(const uint8_t *data, size_t size, unsigned int *parsed)
{
	const char *buf = (const char *)data;
	unsigned int lines = ctl_fuzz_lines(data, size);
	struct olc_edges edges = { 0 };
	struct olc_locks locks = { 0 };
	struct olc_owners owners = { 0 };
	struct olc_deadlocks dl = { 0 };
	struct olc_stats stats = { 0 };
	struct olc_perr err;
	int ret, bad = 0;

#define CTL_CHECK(call)							\
	do {								\
		memset(&err, 0, sizeof(err));				\
		ret = (call);						\
		if (ret == -EPROTO) {					\
			if (!err.line || err.line > lines || !err.msg[0]) \
				bad = 1;				\
		} else if (ret) {					\
			bad = 2;					\
		} else if (parsed) {					\
			(*parsed)++;					\
		}							\
	} while (0)

	CTL_CHECK(olc_parse_graph(buf, size, &edges, &err));
	if (!ret && edges.n) {
		struct olc_wfg w;
		struct cf_result res;
		size_t i;

		for (i = 0; i < edges.n; i++)
			if (!edges.v[i].line || edges.v[i].line > lines ||
			    edges.v[i].waiter.id == edges.v[i].blocker.id)
				bad = 3;
		if (olc_wfg_build(&w, &edges, NULL) ||
		    cf_find_cycles(&w.g, 100000, NULL, NULL, &res))
			bad = 4;
		else
			olc_wfg_free(&w);
	}
	CTL_CHECK(olc_parse_locks(buf, size, &locks, &err));
	CTL_CHECK(olc_parse_owners(buf, size, &owners, &err));
	CTL_CHECK(olc_parse_deadlocks(buf, size, &dl, &err));
	if (!ret) {
		size_t i;

		for (i = 0; i < dl.n; i++)
			if (dl.v[i].nsteps > dl.v[i].len)
				bad = 5;
	}
	CTL_CHECK(olc_parse_stats(buf, size, &stats, &err));
#undef CTL_CHECK
	/* the DLM's debugfs file of a cluster domain (dlmdebug.c) */
	{
		struct olc_dlm_view dv;
		unsigned int dline = 0;
		char dmsg[160] = "";
		size_t i;

		ret = olc_dlm_parse(buf, size, &dv, &dline, dmsg, sizeof(dmsg));
		if (ret == -EPROTO) {
			if (!dline || dline > lines || !dmsg[0])
				bad = 6;
		} else if (ret) {
			bad = 2;
		} else {
			for (i = 0; i < dv.nlocks; i++)
				if (dv.locks[i].node <= 0 ||
				    (dv.locks[i].role == ORDLOCK_ROLE_HOLDER) != !dv.locks[i].pos)
					bad = 7;
			if (parsed)
				(*parsed)++;
		}
		olc_dlm_free(&dv);
	}
	olc_edges_free(&edges);
	olc_locks_free(&locks);
	olc_owners_free(&owners);
	olc_deadlocks_free(&dl);
	olc_stats_free(&stats);
	return bad;
}

#ifdef ORDLOCK_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (ctl_fuzz_one(data, size, NULL))
		abort();
	return 0;
}
#endif
