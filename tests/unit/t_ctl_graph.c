// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit tests of ordlockctl's graph parser and cycle finder
 * (tools/ordlockctl/parse.c and cyclefind.c, linked in by tests/Makefile):
 * the debugfs formats, malformed lines named by number, crafted wait-for
 * graphs (rings, cycles sharing owners, soft and parallel edges, none),
 * Johnson's algorithm against brute force, its work bound, and graphs of
 * 100 000 edges (with a generous hang guard, no timing assertion).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cyclefind.h"
#include "parse.h"
#include "tap.h"

#define HDR "# ordlock graph v1\n" \
	"# waiter_id waiter_pid waiter_comm domain rank:id mode blocker_id blocker_pid blocker_comm blocker_mode edge waited_us\n"

/* A growing text buffer */
struct text {
	char *s;
	size_t len, cap;
};

static void text_add(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0,
			      fmt, ap);
		va_end(ap);
		if (t->s && (size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		t->cap = (t->cap + (size_t)n + 1) * 2;
		t->s = realloc(t->s, t->cap);
		if (!t->s)
			bail_out("out of memory");
	}
}

/* One edge line: waiter W blocked by B on key 1:K, hard or soft */
static void edge(struct text *t, const char *domain, unsigned int w,
		 unsigned int b, unsigned int key, int soft)
{
	text_add(t, "%u %u w%u %s 1:%u exclusive %u %u w%u exclusive %s 10\n",
		 w, 1000 + w, w, domain, key, b, 1000 + b, b, soft ? "soft" : "hard");
}

/* The cycles found, as owner-id sequences, "1 2 3|4 5|..." */
struct collect {
	const struct olc_wfg *w;
	char out[8192];
	size_t len;
	unsigned long n;
};

static int collect_fn(void *arg, const unsigned int *v, const unsigned int *e,
		      unsigned int len)
{
	struct collect *c = arg;
	unsigned int i;

	(void)e;
	c->n++;
	if (c->len)
		c->len += (size_t)snprintf(c->out + c->len, sizeof(c->out) - c->len, "|");
	for (i = 0; i < len && c->len < sizeof(c->out) - 32; i++)
		c->len += (size_t)snprintf(c->out + c->len, sizeof(c->out) - c->len,
					   "%s%llu", i ? " " : "",
					   (unsigned long long)c->w->ids[v[i]]);
	return 0;
}

/* Parse @t, build the graph of @domain, collect its cycles into @c */
static int cycles_of(const struct text *t, const char *domain, struct collect *c,
		     struct cf_result *res)
{
	struct olc_edges edges = { 0 };
	struct olc_perr err;
	struct olc_wfg w;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = olc_parse_graph(t->s, t->len, &edges, &err);
	if (ret) {
		diag("parse: line %u: %s", err.line, err.msg);
		return ret;
	}
	ret = olc_wfg_build(&w, &edges, domain);
	if (ret)
		return ret;
	c->w = &w;
	ret = cf_find_cycles(&w.g, 0, collect_fn, c, res);
	c->w = NULL;
	olc_wfg_free(&w);
	olc_edges_free(&edges);
	return ret;
}

static void test_parse_ok(void)
{
	const char *text = HDR
		"5 101 transfer wh 1:2 exclusive 6 102 transfer exclusive hard 1500\n"
		"7 103 rep.ort-x_1 other 4294967295:18446744073709551615 shared 5 101 transfer exclusive soft 0\n";
	struct olc_edges e = { 0 };
	struct olc_perr err;
	int ret;

	ret = olc_parse_graph(text, strlen(text), &e, &err);
	is_int(ret, 0, "a valid graph file parses");
	is_int(e.n, 2, "two edges");
	if (e.n == 2) {
		ok(e.v[0].waiter.id == 5 && e.v[0].waiter.pid == 101 &&
		   !strcmp(e.v[0].waiter.comm, "transfer") && !strcmp(e.v[0].domain, "wh") &&
		   e.v[0].rank == 1 && e.v[0].id == 2 &&
		   e.v[0].mode == ORDLOCK_MODE_EXCLUSIVE && e.v[0].blocker.id == 6 &&
		   e.v[0].blocker.pid == 102 && e.v[0].blocker_mode == ORDLOCK_MODE_EXCLUSIVE &&
		   e.v[0].type == ORDLOCK_EDGE_HARD && e.v[0].waited_us == 1500 &&
		   e.v[0].line == 3,
		   "every field of the first edge, and its line number");
		ok(e.v[1].rank == UINT32_MAX && e.v[1].id == UINT64_MAX &&
		   e.v[1].mode == ORDLOCK_MODE_SHARED && e.v[1].type == ORDLOCK_EDGE_SOFT &&
		   !strcmp(e.v[1].waiter.comm, "rep.ort-x_1") && e.v[1].line == 4,
		   "the largest rank and id, shared, soft");
		ok(!e.v[0].fast && !e.v[1].fast, "neither is a fast edge");
	}
	olc_edges_free(&e);
	/* a hard edge to a holder by the fast path */
	text = HDR "5 101 transfer wh 1:2 exclusive 6 102 transfer exclusive fast 7\n";
	ret = olc_parse_graph(text, strlen(text), &e, &err);
	ok(ret == 0 && e.n == 1 && e.v[0].type == ORDLOCK_EDGE_HARD && e.v[0].fast &&
	   !strcmp(olc_edge_shown(&e.v[0]), "fast"),
	   "edge \"fast\": hard, marked fast, shown as fast");
	olc_edges_free(&e);

	ret = olc_parse_graph(HDR, strlen(HDR), &e, &err);
	ok(!ret && !e.n, "a graph without edges parses: no edges");
	olc_edges_free(&e);

	text = "# ordlock graph v1\n5 1 a d 1:1 shared 6 2 b exclusive hard 0";
	ret = olc_parse_graph(text, strlen(text), &e, &err);
	ok(!ret && e.n == 1, "the last line may lack its newline");
	olc_edges_free(&e);
}

struct bad_case {
	const char *text;
	unsigned int line;
	const char *msg;	/* a part of the message */
};

static void test_parse_errors(void)
{
	static const struct bad_case cases[] = {
		{ "", 1, "no version line" },
		{ "5 1 a d 1:1 shared 6 2 b exclusive hard 0\n", 1, "first line" },
		{ "# ordlock locks v1\n", 1, "first line" },
		{ "# ordlock graph v2\n", 1, "version" },
		{ "# ordlock graph v1x\n", 1, "version" },
		{ HDR "5 1 a d 1:1 shared 6 2 b exclusive hard\n", 3, "11 fields" },
		{ HDR "5 1 a d 1:1 shared 6 2 b exclusive hard 0 9\n", 3, "13 fields" },
		{ HDR "5 1 a d 1:1 shared 6 2 b exclusive hard 0\n"
		  "x 1 a d 1:1 shared 6 2 b exclusive hard 0\n", 4, "owner id" },
		{ HDR "5 -1 a d 1:1 shared 6 2 b exclusive hard 0\n", 3, "pid" },
		{ HDR "5 4294967296 a d 1:1 shared 6 2 b exclusive hard 0\n", 3, "32-bit" },
		{ HDR "18446744073709551616 1 a d 1:1 shared 6 2 b exclusive hard 0\n", 3, "64-bit" },
		{ HDR "5 1 a d 1:1 sharde 6 2 b exclusive hard 0\n", 3, "shared or exclusive" },
		{ HDR "5 1 a d 1:1 shared 6 2 b exclusive firm 0\n", 3, "hard, soft, thread or fast" },
		{ HDR "5 1 a d 11 shared 6 2 b exclusive hard 0\n", 3, "no ':'" },
		{ HDR "5 1 a d 1:x shared 6 2 b exclusive hard 0\n", 3, "RANK:ID" },
		{ HDR "5 1 a d :1 shared 6 2 b exclusive hard 0\n", 3, "RANK:ID" },
		{ HDR "5 1 a d/x 1:1 shared 6 2 b exclusive hard 0\n", 3, "domain" },
		{ HDR "5 1 a dddddddddddddddddddddddddddddddd 1:1 shared 6 2 b exclusive hard 0\n",
		  3, "domain" },
		{ HDR "5 1 aaaaaaaaaaaaaaaa d 1:1 shared 6 2 b exclusive hard 0\n", 3, "comm" },
		{ HDR "5 1 a\tb d 1:1 shared 6 2 b exclusive hard 0\n", 3, "comm" },
		{ HDR "5 1 a d 1:1 shared  6 2 b exclusive hard 0\n", 3, "empty field" },
		{ HDR " 5 1 a d 1:1 shared 6 2 b exclusive hard 0\n", 3, "empty field" },
		{ HDR "5 1 a d 1:1 shared 6 2 b exclusive hard 0 \n", 3, "empty field" },
		{ HDR "5 1 a d 1:1 shared 5 2 b exclusive hard 0\n", 3, "itself" },
		{ HDR "\n\n# c\n5 1 a d 1:1 shared 6 2 b exclusive hard 0\n7 1\n", 7, "2 fields" },
	};
	struct olc_edges e = { 0 };
	struct olc_perr err;
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];

		memset(&err, 0, sizeof(err));
		ret = olc_parse_graph(c->text, strlen(c->text), &e, &err);
		ok(ret == -EPROTO && err.line == c->line && strstr(err.msg, c->msg),
		   "bad input %u is rejected at line %u (\"%s\")", i, c->line, c->msg);
		if (ret != -EPROTO || err.line != c->line || !strstr(err.msg, c->msg))
			diag("  got %d, line %u: %s", ret, err.line, err.msg);
		olc_edges_free(&e);
	}

	/* a NUL byte inside a line */
	{
		char buf[] = HDR "5 1 a d 1:1 shared 6 2 b exclusive hard 0\n";
		size_t len = sizeof(buf) - 1;

		buf[strlen(HDR) + 4] = '\0';
		ret = olc_parse_graph(buf, len, &e, &err);
		ok(ret == -EPROTO && err.line == 3 && strstr(err.msg, "NUL"),
		   "a NUL byte is rejected with its line");
		olc_edges_free(&e);
	}
}

static void test_other_files(void)
{
	const char *locks = "# ordlock locks v1\n# c\n"
		"wh 1:2 holder 0 5 101 transfer exclusive 17\n"
		"wh 1:2 waiter 0 6 102 transfer shared 1234\n"
		"wh 1:2 converter 1 7 103 x exclusive 5\n";
	const char *owners = "# ordlock owners v1\n# c\n"
		"5 101 transfer wh device 2 - - 0\n"
		"6 102 transfer wh netlink 0 exclusive 1:2 99\n";
	const char *dl = "# ordlock deadlocks v1\n"
		"deadlock 3 1700000000000000000 wh 2\n"
		"step 3 0 5 101 a exclusive 1:2 hard exclusive\n"
		"step 3 1 6 102 b exclusive 1:1 soft shared\n"
		"deadlock 4 1700000000000000001 wh 70\n"
		"step 4 0 5 101 a exclusive 1:2 hard exclusive\n";
	const char *stats = "# ordlock stats v1\n# c\n"
		"global owners 3 resources 2\n"
		"domain wh policy timeout detect_delay_ms 0 owners 2 peak_owners 3 acquires 10 deadlocks 1\n"
		"wait_us wh lt_1 0 lt_2 5 more 1\n";
	struct olc_locks l = { 0 };
	struct olc_owners o = { 0 };
	struct olc_deadlocks d = { 0 };
	struct olc_stats s = { 0 };
	struct olc_perr err;

	ok(!olc_parse_locks(locks, strlen(locks), &l, &err) && l.n == 3 &&
	   l.v[0].role == ORDLOCK_ROLE_HOLDER && l.v[0].value == 17 &&
	   l.v[1].role == ORDLOCK_ROLE_WAITER && l.v[1].mode == ORDLOCK_MODE_SHARED &&
	   l.v[2].role == ORDLOCK_ROLE_CONVERTER && l.v[2].pos == 1,
	   "locks: holders, waiters and converters");
	olc_locks_free(&l);
	ok(!olc_parse_owners(owners, strlen(owners), &o, &err) && o.n == 2 &&
	   o.v[0].wmode == 0 && o.v[0].held == 2 && o.v[0].kind == ORDLOCK_KIND_DEVICE &&
	   o.v[1].wmode == ORDLOCK_MODE_EXCLUSIVE && o.v[1].wrank == 1 && o.v[1].wid == 2 &&
	   o.v[1].kind == ORDLOCK_KIND_NETLINK && o.v[1].waited_us == 99,
	   "owners: waiting and not");
	olc_owners_free(&o);
	ok(!olc_parse_deadlocks(dl, strlen(dl), &d, &err) && d.n == 2 &&
	   d.v[0].len == 2 && d.v[0].nsteps == 2 && d.v[0].steps[1].edge == ORDLOCK_EDGE_SOFT &&
	   d.v[0].steps[1].blocker_mode == ORDLOCK_MODE_SHARED &&
	   d.v[1].len == 70 && d.v[1].nsteps == 1,
	   "deadlocks: complete and truncated records");
	olc_deadlocks_free(&d);
	ok(!olc_parse_stats(stats, strlen(stats), &s, &err) && s.have_global &&
	   s.owners == 3 && s.n == 1 && !strcmp(s.v[0].policy, "timeout") &&
	   s.v[0].n == 4 && !strcmp(s.v[0].v[2].name, "acquires") && s.v[0].v[2].value == 10 &&
	   s.v[0].have_hist && s.v[0].nhist == 3 && s.v[0].hist[2].value == 1,
	   "stats: global, a domain and its histogram");
	olc_stats_free(&s);

	dl = "# ordlock deadlocks v1\nstep 3 0 5 101 a exclusive 1:2 hard exclusive\n";
	ok(olc_parse_deadlocks(dl, strlen(dl), &d, &err) == -EPROTO && err.line == 2,
	   "deadlocks: a step before its deadlock is rejected");
	olc_deadlocks_free(&d);
	dl = "# ordlock deadlocks v1\ndeadlock 3 1 wh 1\n"
	     "step 3 1 5 101 a exclusive 1:2 hard exclusive\n";
	ok(olc_parse_deadlocks(dl, strlen(dl), &d, &err) == -EPROTO && err.line == 3,
	   "deadlocks: steps out of order are rejected");
	olc_deadlocks_free(&d);
	stats = "# ordlock stats v1\nwait_us wh lt_1 0\n";
	ok(olc_parse_stats(stats, strlen(stats), &s, &err) == -EPROTO && err.line == 2,
	   "stats: a histogram before its domain is rejected");
	olc_stats_free(&s);
	owners = "# ordlock owners v1\n5 101 t wh device 2 - 1:2 0\n";
	ok(olc_parse_owners(owners, strlen(owners), &o, &err) == -EPROTO && err.line == 2,
	   "owners: a waiting key without a mode is rejected");
	olc_owners_free(&o);
}

static void test_keys(void)
{
	struct olc_rank_names names = { .n = 2 };
	uint32_t rank = 0;
	uint64_t id = 0;
	char why[160], buf[64];

	names.v[0].rank = 1;
	strcpy(names.v[0].name, "wh");
	names.v[1].rank = 7;
	strcpy(names.v[1].name, "orders");
	ok(!olc_key_parse("3:42", NULL, &rank, &id, why, sizeof(why)) && rank == 3 &&
	   id == 42, "RANK:ID");
	ok(!olc_key_parse("orders:9", &names, &rank, &id, why, sizeof(why)) &&
	   rank == 7 && id == 9, "NAME:ID");
	ok(olc_key_parse("nope:9", &names, &rank, &id, why, sizeof(why)) == -EINVAL &&
	   strstr(why, "not a rank name"), "an unknown name is refused");
	ok(olc_key_parse("wh:9", NULL, &rank, &id, why, sizeof(why)) == -EINVAL,
	   "a name without the domain's names is refused");
	ok(olc_key_parse("1:", NULL, &rank, &id, why, sizeof(why)) == -EINVAL &&
	   olc_key_parse("12", NULL, &rank, &id, why, sizeof(why)) == -EINVAL &&
	   olc_key_parse("4294967296:1", NULL, &rank, &id, why, sizeof(why)) == -EINVAL &&
	   olc_key_parse("1:18446744073709551616", NULL, &rank, &id, why, sizeof(why)) == -EINVAL &&
	   olc_key_parse("-1:1", NULL, &rank, &id, why, sizeof(why)) == -EINVAL,
	   "malformed keys are refused");
	ok(!strcmp(olc_key_str(buf, sizeof(buf), &names, 1, 5), "wh:5") &&
	   !strcmp(olc_key_str(buf, sizeof(buf), &names, 2, 5), "2:5") &&
	   !strcmp(olc_key_str(buf, sizeof(buf), NULL, 1, 5), "1:5"),
	   "keys print with the rank's name when it has one");
}

static void test_rings(void)
{
	static const unsigned int sizes[] = { 2, 3, 8 };
	struct cf_result res;
	struct collect c;
	unsigned int i, k;

	for (k = 0; k < 3; k++) {
		struct text t = { 0 };
		char want[256] = "";
		unsigned int n = sizes[k];

		text_add(&t, HDR);
		/* owner 10 + i holds key i, waits for key i + 1 (held by the next) */
		for (i = 0; i < n; i++)
			edge(&t, "ring", 10 + i, 10 + (i + 1) % n, (i + 1) % n, 0);
		for (i = 0; i < n; i++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%u",
				 i ? " " : "", 10 + i);
		ok(!cycles_of(&t, NULL, &c, &res) && res.ncycles == 1 && res.complete &&
		   !strcmp(c.out, want),
		   "a ring of %u: one cycle, in ring order from the oldest owner", n);
		if (strcmp(c.out, want))
			diag("  got \"%s\", want \"%s\"", c.out, want);
		free(t.s);
	}
}

static void test_shapes(void)
{
	struct cf_result res;
	struct collect c;
	struct text t = { 0 };

	/* two cycles sharing owner 2: 1 <-> 2 and 2 <-> 3 */
	text_add(&t, HDR);
	edge(&t, "d", 1, 2, 2, 0);
	edge(&t, "d", 2, 1, 1, 0);
	edge(&t, "d", 2, 3, 1, 0);	/* 2 waits for a key 1 and 3 hold shared */
	edge(&t, "d", 3, 2, 2, 0);
	ok(!cycles_of(&t, NULL, &c, &res) && res.ncycles == 2 &&
	   !strcmp(c.out, "1 2|2 3"), "two cycles sharing an owner: both found");
	diag("  %s", c.out);
	free(t.s);

	/* the same, and 3 also waits behind 1 on key 2 (soft): a third cycle */
	memset(&t, 0, sizeof(t));
	text_add(&t, HDR);
	edge(&t, "d", 1, 2, 2, 0);
	edge(&t, "d", 2, 1, 1, 0);
	edge(&t, "d", 2, 3, 1, 0);
	edge(&t, "d", 3, 2, 2, 0);
	edge(&t, "d", 3, 1, 2, 1);
	ok(!cycles_of(&t, NULL, &c, &res) && res.ncycles == 3 &&
	   !strcmp(c.out, "1 2|1 2 3|2 3"),
	   "a soft edge closes a third cycle through both: all three found");
	diag("  %s", c.out);
	free(t.s);

	/* no cycles: a chain and a fan-in */
	memset(&t, 0, sizeof(t));
	text_add(&t, HDR);
	edge(&t, "d", 1, 2, 2, 0);
	edge(&t, "d", 2, 3, 3, 0);
	edge(&t, "d", 4, 3, 3, 1);
	edge(&t, "d", 5, 3, 3, 0);
	edge(&t, "d", 5, 4, 3, 1);
	ok(!cycles_of(&t, NULL, &c, &res) && res.ncycles == 0 && res.complete,
	   "a chain and a fan-in: no cycles");
	free(t.s);

	/* parallel edges (held, and queued ahead) count once */
	memset(&t, 0, sizeof(t));
	text_add(&t, HDR);
	edge(&t, "d", 1, 2, 2, 1);
	edge(&t, "d", 1, 2, 2, 0);
	edge(&t, "d", 2, 1, 1, 0);
	ok(!cycles_of(&t, NULL, &c, &res) && res.ncycles == 1,
	   "a hard and a soft edge between the same owners: one cycle");
	free(t.s);

	/* a cycle of soft edges only */
	memset(&t, 0, sizeof(t));
	text_add(&t, HDR);
	edge(&t, "d", 1, 2, 2, 1);
	edge(&t, "d", 2, 1, 1, 1);
	ok(!cycles_of(&t, NULL, &c, &res) && res.ncycles == 1,
	   "soft edges make cycles too");
	free(t.s);

	/* two domains: the filter keeps one */
	memset(&t, 0, sizeof(t));
	text_add(&t, HDR);
	edge(&t, "a", 1, 2, 2, 0);
	edge(&t, "a", 2, 1, 1, 0);
	edge(&t, "b", 3, 4, 2, 0);
	edge(&t, "b", 4, 5, 1, 0);
	edge(&t, "b", 5, 3, 1, 0);
	ok(!cycles_of(&t, NULL, &c, &res) && res.ncycles == 2, "two domains: two cycles");
	ok(!cycles_of(&t, "b", &c, &res) && res.ncycles == 1 && !strcmp(c.out, "3 4 5"),
	   "the domain filter keeps the other domain's cycles out");
	free(t.s);

	/* the complete graph on 5 owners: sum C(5,k)(k-1)! = 84 cycles */
	memset(&t, 0, sizeof(t));
	text_add(&t, HDR);
	{
		unsigned int a, b;

		for (a = 1; a <= 5; a++)
			for (b = 1; b <= 5; b++)
				if (a != b)
					edge(&t, "k", a, b, b, 0);
	}
	ok(!cycles_of(&t, NULL, &c, &res) && res.ncycles == 84 && c.n == 84,
	   "the complete graph on 5 owners: 84 elementary cycles");
	free(t.s);
}

/* Brute force: cycles whose least vertex is s, by depth-first search */
static unsigned long brute(unsigned int n, unsigned char adj[][12],
			   unsigned int s, unsigned int v, unsigned char *on)
{
	unsigned long count = 0;
	unsigned int w;

	for (w = 0; w < n; w++) {
		if (!adj[v][w])
			continue;
		if (w == s) {
			count++;
			continue;
		}
		if (w < s || on[w])
			continue;
		on[w] = 1;
		count += brute(n, adj, s, w, on);
		on[w] = 0;
	}
	return count;
}

static void test_brute_force(void)
{
	unsigned int round, bad = 0, total = 0;

	srand(12345);
	for (round = 0; round < 3000; round++) {
		unsigned char adj[12][12] = { { 0 } }, on[12];
		unsigned int src[144], dst[144], n = 1 + (unsigned int)rand() % 9, ne = 0;
		unsigned int density = 10 + (unsigned int)rand() % 50, a, b;
		unsigned long want = 0;
		struct cf_graph g;
		struct cf_result res;

		for (a = 0; a < n; a++) {
			for (b = 0; b < n; b++) {
				if ((unsigned int)rand() % 100 >= density)
					continue;
				adj[a][b] = 1;
				src[ne] = a;
				dst[ne] = b;
				ne++;
			}
		}
		for (a = 0; a < n; a++) {
			memset(on, 0, sizeof(on));
			on[a] = 1;
			want += brute(n, adj, a, a, on);
		}
		if (cf_graph_init(&g, n, src, dst, ne, NULL) ||
		    cf_find_cycles(&g, 0, NULL, NULL, &res) || res.ncycles != want ||
		    !res.complete) {
			if (!bad++)
				diag("  graph %u (%u vertices, %u edges): %llu cycles, brute force %lu",
				     round, n, ne, (unsigned long long)res.ncycles, want);
		}
		total += (unsigned int)want;
		cf_graph_free(&g);
	}
	ok(!bad, "3000 random graphs (self-loops included): Johnson counts as brute force does (%u cycles)",
	   total);
}

static int stop_at_10(void *arg, const unsigned int *v, const unsigned int *e,
		      unsigned int len)
{
	unsigned long *n = arg;

	(void)v;
	(void)e;
	(void)len;
	return ++*n >= 10;
}

static void test_bounds(void)
{
	unsigned int src[132], dst[132], ne = 0, a, b, comp[12];
	unsigned long seen = 0;
	struct cf_graph g;
	struct cf_result res;
	int ret;

	/* the complete graph on 12 vertices has about 1.1e8 cycles */
	for (a = 0; a < 12; a++)
		for (b = 0; b < 12; b++)
			if (a != b) {
				src[ne] = a;
				dst[ne++] = b;
			}
	cf_graph_init(&g, 12, src, dst, ne, NULL);
	ret = cf_find_cycles(&g, 100000, NULL, NULL, &res);
	ok(!ret && !res.complete && res.ncycles > 0 && res.work <= 100000 + 200,
	   "the work bound stops an exponential search (%llu cycles counted)",
	   (unsigned long long)res.ncycles);
	ok(!cf_find_cycles(&g, 0, stop_at_10, &seen, &res) && !res.complete &&
	   res.ncycles == 10 && seen == 10, "the callback can stop the search");
	cf_graph_free(&g);

	/* self-loop: a cycle of one; components */
	src[0] = 0; dst[0] = 0;
	src[1] = 1; dst[1] = 2;
	src[2] = 2; dst[2] = 1;
	src[3] = 2; dst[3] = 3;
	cf_graph_init(&g, 4, src, dst, 4, NULL);
	ok(!cf_find_cycles(&g, 0, NULL, NULL, &res) && res.ncycles == 2,
	   "cf_find_cycles: a self-loop is a cycle of length 1");
	ok(!cf_components(&g, comp) && comp[1] == comp[2] && comp[0] != comp[1] &&
	   comp[3] != comp[2], "cf_components: 1 and 2 together, 0 and 3 alone");
	cf_graph_free(&g);
	ok(cf_graph_init(&g, 2, src, dst, 4, NULL) == -EINVAL,
	   "cf_graph_init refuses a vertex out of range");
}

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void test_scale(void)
{
	const unsigned int n = 100000;
	struct timespec t0, t1, t2;
	struct cf_result res;
	struct collect c;
	struct text t = { 0 };
	unsigned int i, *src, *dst;
	struct cf_graph g;

	/* a ring of 100 000 owners, through the parser */
	text_add(&t, HDR);
	for (i = 0; i < n; i++)
		edge(&t, "big", i + 1, (i + 1) % n + 1, (i + 1) % n, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok(!cycles_of(&t, NULL, &c, &res) && res.ncycles == 1 && res.complete,
	   "a ring of 100000 owners (100000 edges, parsed): one cycle");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	diag("  parse + search: %.3f s", secs(&t0, &t1));
	free(t.s);

	src = malloc(n * sizeof(*src));
	dst = malloc(n * sizeof(*dst));
	if (!src || !dst)
		bail_out("out of memory");

	/* 50 000 pairs waiting for each other */
	for (i = 0; i < n; i++) {
		src[i] = i;
		dst[i] = i ^ 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok(!cf_graph_init(&g, n, src, dst, n, NULL) &&
	   !cf_find_cycles(&g, CF_DEFAULT_WORK, NULL, NULL, &res) &&
	   res.ncycles == n / 2 && res.complete,
	   "50000 deadlocked pairs (100000 edges): 50000 cycles");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	diag("  %.3f s", secs(&t0, &t1));
	cf_graph_free(&g);

	/* a lock table: 1000 keys, 100 waiters each behind a holder and each other */
	for (i = 0; i < n; i++) {
		unsigned int key = i / 100, waiter = i % 100;

		src[i] = 1000 + key * 100 + waiter;
		/* the holder, or the waiter queued just ahead */
		dst[i] = waiter ? src[i] - 1 : key;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok(!cf_graph_init(&g, 1000 + n, src, dst, n, NULL) &&
	   !cf_find_cycles(&g, CF_DEFAULT_WORK, NULL, NULL, &res) &&
	   res.ncycles == 0 && res.complete,
	   "1000 keys with 100 queued waiters each (100000 edges): no cycles");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	diag("  %.3f s", secs(&t0, &t1));
	cf_graph_free(&g);

	/* random forward edges (no cycles), then three back edges: known cycles */
	srand(7);
	for (i = 0; i < n; i++) {
		unsigned int a = (unsigned int)rand() % 50000, b = (unsigned int)rand() % 50000;

		if (a > b) {
			unsigned int x = a;

			a = b;
			b = x;
		}
		if (a == b)
			b = a + 1;
		src[i] = a;
		dst[i] = b;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok(!cf_graph_init(&g, 50001, src, dst, n, NULL) &&
	   !cf_find_cycles(&g, CF_DEFAULT_WORK, NULL, NULL, &res) &&
	   res.ncycles == 0 && res.complete,
	   "100000 random forward edges: no cycles");
	cf_graph_free(&g);
	/* a ring 0 -> 1 -> ... -> 9 -> 0 made of the last edges */
	for (i = 0; i < 10; i++) {
		src[n - 1 - i] = 50001 + i;
		dst[n - 1 - i] = 50001 + (i + 1) % 10;
	}
	ok(!cf_graph_init(&g, 50011, src, dst, n, NULL) &&
	   !cf_find_cycles(&g, CF_DEFAULT_WORK, NULL, NULL, &res) &&
	   res.ncycles == 1 && res.complete,
	   "and with a ring of 10 beside them: exactly one cycle");
	clock_gettime(CLOCK_MONOTONIC, &t2);
	diag("  both: %.3f s", secs(&t0, &t2));
	cf_graph_free(&g);
	free(src);
	free(dst);
}

int main(void)
{
	/* a hang guard only: these take well under a second */
	alarm(120);
	test_parse_ok();
	test_parse_errors();
	test_other_files();
	test_keys();
	test_rings();
	test_shapes();
	test_brute_force();
	test_bounds();
	test_scale();
	return tap_done();
}
