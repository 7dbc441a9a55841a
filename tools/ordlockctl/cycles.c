// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl cycles: every elementary cycle of the wait-for graph now, or
 * (--history) the deadlocks the kernel detected and broke.
 *
 * A cycle is printed one step per line, PostgreSQL style, then the chain
 * of keys lockdep style:
 *
 *   pid 101 (transfer) waits for exclusive wh:1; blocked by pid 102 (transfer), which holds it exclusive
 *   pid 102 (transfer) waits for exclusive wh:2; blocked by pid 101 (transfer), which holds it exclusive
 *   wh:2 => wh:1 => wh:2
 *
 * (the first owner holds the last key and waits for the first, and so on).
 */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cyclefind.h"
#include "dlmview.h"
#include "ordlockctl.h"
#include "xdparse.h"

#define OLC_DEFAULT_LIMIT	100

void olc_step_line(FILE *f, const char *domain, const struct olc_who *w,
		   unsigned int mode, uint32_t rank, uint64_t id,
		   const struct olc_who *b, unsigned int bmode, unsigned int edge)
{
	if (edge == ORDLOCK_EDGE_THREAD) {
		/* the holder's thread waits through another owner */
		fprintf(f, "pid %u (%s) owner %llu cannot release: its thread waits for %s %s%s%s through owner %llu\n",
			w->pid, w->comm, (unsigned long long)w->id, olc_mode_str(mode),
			olc_c(OLC_BOLD), olc_key(domain, rank, id), olc_c(OLC_RESET),
			(unsigned long long)b->id);
		return;
	}
	if (w->node)
		fprintf(f, "node %u ", w->node);
	fprintf(f, "pid %u (%s) waits for %s %s%s%s; blocked by ",
		w->pid, w->comm, olc_mode_str(mode), olc_c(OLC_BOLD),
		olc_key(domain, rank, id), olc_c(OLC_RESET));
	if (b->node)
		fprintf(f, "node %u ", b->node);
	fprintf(f, "pid %u (%s), ", b->pid, b->comm);
	if (edge == ORDLOCK_EDGE_SOFT)
		fprintf(f, "which is queued ahead of it for %s\n", olc_mode_str(bmode));
	else
		fprintf(f, "which holds it %s\n", olc_mode_str(bmode));
}

static int olc_cycles_keep(void *arg, const unsigned int *v,
			   const unsigned int *e, unsigned int len)
{
	struct olc_cycles *c = arg;
	unsigned int i;

	(void)v;
	if (c->limit && c->nkept >= c->limit)
		return c->stop;
	if (c->nkept == c->kcap) {
		size_t cap = c->kcap ? c->kcap * 2 : 16;
		unsigned int *s = realloc(c->start, cap * sizeof(*s));
		unsigned int *l;

		if (!s) {
			c->nomem = 1;
			return 1;
		}
		c->start = s;
		l = realloc(c->len, cap * sizeof(*l));
		if (!l) {
			c->nomem = 1;
			return 1;
		}
		c->len = l;
		c->kcap = cap;
	}
	if (c->nsteps + len > c->cap) {
		size_t cap = c->cap ? c->cap : 64;
		unsigned int *s;

		while (cap < c->nsteps + len)
			cap *= 2;
		s = realloc(c->steps, cap * sizeof(*s));
		if (!s) {
			c->nomem = 1;
			return 1;
		}
		c->steps = s;
		c->cap = cap;
	}
	c->start[c->nkept] = (unsigned int)c->nsteps;
	c->len[c->nkept] = len;
	for (i = 0; i < len; i++)
		c->steps[c->nsteps++] = c->w->edge[e[i]];
	c->nkept++;
	return c->stop && c->nkept >= c->limit;
}

void olc_cycles_free(struct olc_cycles *c)
{
	free(c->steps);
	free(c->start);
	free(c->len);
}

static void olc_cycle_text(const struct olc_cycles *c, size_t k, size_t total)
{
	const struct olc_edge *v = c->edges->v;
	const unsigned int *s = &c->steps[c->start[k]];
	unsigned int i, n = c->len[k];
	const char *domain = v[s[0]].domain;
	int across = 0;

	for (i = 1; i < n; i++)
		if (strcmp(v[s[i]].domain, domain))
			across = 1;
	if (across)
		printf("%scycle %zu of %zu%s across domains (%u owners):\n",
		       olc_c(OLC_RED), k + 1, total, olc_c(OLC_RESET), n);
	else
		printf("%scycle %zu of %zu%s in domain \"%s\" (%u owners):\n",
		       olc_c(OLC_RED), k + 1, total, olc_c(OLC_RESET), domain, n);
	for (i = 0; i < n; i++) {
		const struct olc_edge *e = &v[s[i]];

		fputs("  ", stdout);
		olc_step_line(stdout, e->domain, &e->waiter, e->mode, e->rank, e->id,
			      &e->blocker, e->blocker_mode, e->type);
	}
	printf("  %s%s", olc_c(OLC_RED),
	       olc_key(v[s[n - 1]].domain, v[s[n - 1]].rank, v[s[n - 1]].id));
	for (i = 0; i < n; i++)
		printf(" => %s", olc_key(v[s[i]].domain, v[s[i]].rank, v[s[i]].id));
	printf("%s\n", olc_c(OLC_RESET));
}

static void olc_cycle_json(struct olc_json *j, const struct olc_cycles *c, size_t k)
{
	const struct olc_edge *v = c->edges->v;
	const unsigned int *s = &c->steps[c->start[k]];
	unsigned int i, n = c->len[k];
	const char *domain = v[s[0]].domain;

	olc_json_obj(j, NULL);
	olc_json_str(j, "domain", domain);
	olc_json_u64(j, "length", n);
	olc_json_arr(j, "steps");
	for (i = 0; i < n; i++) {
		const struct olc_edge *e = &v[s[i]];

		olc_json_obj(j, NULL);
		olc_json_u64(j, "owner_id", e->waiter.id);
		olc_json_u64(j, "pid", e->waiter.pid);
		olc_json_str(j, "comm", e->waiter.comm);
		olc_json_str(j, "mode", olc_mode_str(e->mode));
		olc_json_key(j, e->domain, e->rank, e->id);
		olc_json_str(j, "edge", olc_edge_shown(e));
		olc_json_u64(j, "waited_us", e->waited_us);
		olc_json_obj(j, "blocker");
		olc_json_u64(j, "owner_id", e->blocker.id);
		olc_json_u64(j, "pid", e->blocker.pid);
		olc_json_str(j, "comm", e->blocker.comm);
		olc_json_str(j, "mode", olc_mode_str(e->blocker_mode));
		olc_json_obj_end(j);
		olc_json_obj_end(j);
	}
	olc_json_arr_end(j);
	olc_json_arr(j, "chain");
	olc_json_str(j, NULL, olc_key(domain, v[s[n - 1]].rank, v[s[n - 1]].id));
	for (i = 0; i < n; i++)
		olc_json_str(j, NULL, olc_key(domain, v[s[i]].rank, v[s[i]].id));
	olc_json_arr_end(j);
	olc_json_obj_end(j);
}

int olc_find_cycles(const struct olc_edges *edges, const char *domain,
		    unsigned long limit, int stop, uint64_t max_work,
		    struct olc_wfg *w, struct olc_cycles *found)
{
	int ret;

	memset(found, 0, sizeof(*found));
	ret = olc_wfg_build(w, edges, domain);
	if (ret)
		return ret;
	found->edges = edges;
	found->w = w;
	found->limit = limit;
	found->stop = stop && limit;
	ret = cf_find_cycles(&w->g, max_work, olc_cycles_keep, found, &found->res);
	if (!ret && found->nomem)
		ret = -ENOMEM;
	return ret;
}

/* The edges of the cycles kept in @found, as a flag per edge index */
unsigned char *olc_cycle_edges(const struct olc_cycles *found, size_t nedges)
{
	unsigned char *on = calloc(nedges + 1, 1);
	size_t i;

	if (!on)
		return NULL;
	for (i = 0; i < found->nsteps; i++)
		on[found->steps[i]] = 1;
	return on;
}

/* --history */

static void olc_deadlock_text(const struct olc_deadlock *d)
{
	char when[64];
	unsigned int i, n = d->nsteps;
	int whole = n == d->len;

	printf("%sdeadlock %" PRIu64 "%s at %s in domain \"%s\" (%u owners)",
	       olc_c(OLC_RED), d->seq, olc_c(OLC_RESET),
	       olc_time_str(when, sizeof(when), d->time_ns), d->domain, d->len);
	if (n)
		printf(", victim pid %u (%s)", d->steps[0].who.pid, d->steps[0].who.comm);
	printf(":\n");
	for (i = 0; i < n; i++) {
		const struct olc_dstep *s = &d->steps[i];

		fputs("  ", stdout);
		if (whole || i + 1 < n) {
			const struct olc_dstep *t = &d->steps[(i + 1) % n];

			olc_step_line(stdout, s->domain, &s->who, s->mode, s->rank,
				      s->id, &t->who, s->blocker_mode, s->edge);
		} else {
			printf("pid %u (%s) waits for %s %s (%s by the next, not recorded)\n",
			       s->who.pid, s->who.comm, olc_mode_str(s->mode),
			       olc_key(s->domain, s->rank, s->id),
			       s->edge == ORDLOCK_EDGE_SOFT ? "queued ahead" : "held");
		}
	}
	if (!whole) {
		printf("  ... %u more steps not recorded\n", d->len - n);
		return;
	}
	if (!n)
		return;
	printf("  %s%s", olc_c(OLC_RED),
	       olc_key(d->domain, d->steps[n - 1].rank, d->steps[n - 1].id));
	for (i = 0; i < n; i++)
		printf(" => %s", olc_key(d->domain, d->steps[i].rank, d->steps[i].id));
	printf("%s\n", olc_c(OLC_RESET));
}

static void olc_deadlock_json(struct olc_json *j, const struct olc_deadlock *d)
{
	char when[64];
	unsigned int i, n = d->nsteps;

	olc_json_obj(j, NULL);
	olc_json_u64(j, "seq", d->seq);
	olc_json_u64(j, "time_ns", d->time_ns);
	olc_json_str(j, "time", olc_time_str(when, sizeof(when), d->time_ns));
	olc_json_str(j, "domain", d->domain);
	olc_json_u64(j, "length", d->len);
	olc_json_bool(j, "complete", n == d->len);
	olc_json_arr(j, "steps");
	for (i = 0; i < n; i++) {
		const struct olc_dstep *s = &d->steps[i];

		olc_json_obj(j, NULL);
		olc_json_u64(j, "index", s->index);
		olc_json_u64(j, "owner_id", s->who.id);
		olc_json_u64(j, "pid", s->who.pid);
		olc_json_str(j, "comm", s->who.comm);
		olc_json_str(j, "mode", olc_mode_str(s->mode));
		olc_json_key(j, d->domain, s->rank, s->id);
		olc_json_str(j, "edge", olc_edge_str(s->edge));
		olc_json_str(j, "blocker_mode", olc_mode_str(s->blocker_mode));
		olc_json_obj_end(j);
	}
	olc_json_arr_end(j);
	if (n && n == d->len) {
		olc_json_arr(j, "chain");
		olc_json_str(j, NULL, olc_key(d->domain, d->steps[n - 1].rank,
					       d->steps[n - 1].id));
		for (i = 0; i < n; i++)
			olc_json_str(j, NULL, olc_key(d->domain, d->steps[i].rank,
						       d->steps[i].id));
		olc_json_arr_end(j);
	} else {
		olc_json_null(j, "chain");
	}
	olc_json_obj_end(j);
}

/* A deadlock across nodes: a round ordlock-xdetectd decided */
static void olc_round_text(const struct olc_xd_round *r, uint32_t here)
{
	char when[64];
	size_t i, n = r->n;

	printf("%sdeadlock across nodes%s (round %s) at %s in domain \"%s\" (%zu owners)",
	       olc_c(OLC_RED), olc_c(OLC_RESET), r->round,
	       olc_time_str(when, sizeof(when), r->closed_ns), r->domain, n);
	if (r->victim >= 0) {
		const struct olc_xd_owner *v = &r->cycle[r->victim];

		printf(", victim node %u pid %u (%s)%s", v->node, v->pid, v->comm,
		       v->node == here ? " (this node)" : "");
	}
	printf(":\n");
	for (i = 0; i < n; i++) {
		const struct olc_xd_owner *w = &r->cycle[i], *b = &r->cycle[(i + 1) % n];

		printf("  node %u pid %u (%s) waits for %s %s%s%s%s; blocked by node %u pid %u (%s)\n",
		       w->node, w->pid, w->comm, olc_mode_str(w->mode), olc_c(OLC_BOLD),
		       olc_key(r->domain, w->rank, w->id), olc_c(OLC_RESET),
		       w->in_dlm ? " in the DLM" : "", b->node, b->pid, b->comm);
	}
	if (!n)
		return;
	printf("  %s%s", olc_c(OLC_RED), olc_key(r->domain, r->cycle[n - 1].rank, r->cycle[n - 1].id));
	for (i = 0; i < n; i++)
		printf(" => %s", olc_key(r->domain, r->cycle[i].rank, r->cycle[i].id));
	printf("%s\n", olc_c(OLC_RESET));
}

/*
 * --history: the rounds decided across nodes that ordlock-xdetectd of
 * this node saw (every node's daemon sees every round), with -d and
 * --since; --after SEQ numbers the kernel's records: none. Returns how
 * many were shown (or counted with @quiet); @before: the kernel's shown.
 */
static size_t olc_history_rounds(const char *domain, int quiet, uint64_t since_ns,
				 int have_after, size_t before)
{
	struct olc_dlm_spaces sp = { 0 };
	struct olc_xd_state st;
	size_t i, shown = 0;
	char why[256];
	int ret;

	if (have_after)
		return 0;
	ret = olc_xd_load_state(&st, why, sizeof(why), NULL);
	if (ret) {
		/* on a host with cluster domains only: say what is not seen */
		if (!quiet && !olc_load_dlm(&sp, domain) && sp.n)
			printf("deadlocks across nodes unknown: %s\n", why);
		olc_dlm_spaces_free(&sp);
		return 0;
	}
	for (i = 0; i < st.n; i++) {
		const struct olc_xd_round *r = &st.r[i];

		if (strcmp(r->state, "decided") || (domain && strcmp(r->domain, domain)) ||
		    r->closed_ns < since_ns)
			continue;
		if (!quiet) {
			if (shown || before)
				putchar('\n');
			olc_round_text(r, st.node);
		}
		shown++;
	}
	olc_xd_state_free(&st);
	return shown;
}

/*
 * After the live cycles: what ordlock-xdetectd has across nodes (rounds
 * pending, deadlocks decided), when it answers
 */
static void olc_cycles_across(const char *domain)
{
	size_t i, pending = 0, decided = 0;
	struct olc_xd_state st;
	char why[256];

	if (olc_xd_load_state(&st, why, sizeof(why), NULL))
		return;
	for (i = 0; i < st.n; i++) {
		if (domain && strcmp(st.r[i].domain, domain))
			continue;
		pending += !strcmp(st.r[i].state, "pending");
		decided += !strcmp(st.r[i].state, "decided");
	}
	printf("across nodes (ordlock-xdetectd of node %u): %zu round%s being confirmed, %zu deadlock%s broken (cycles --history shows them)\n",
	       st.node, pending, pending == 1 ? "" : "s", decided, decided == 1 ? "" : "s");
	olc_xd_state_free(&st);
}

/*
 * --since TIME: a duration ago ("90s", "10m", "2h", "1d"; a bare number is
 * seconds), "@EPOCH" seconds, or a local "YYYY-MM-DD[THH:MM[:SS]]" (a
 * space may stand for the T). Into wall-clock nanoseconds, the clock of the
 * kernel's records (ktime_get_real_ns()).
 */
int olc_parse_since(const char *s, uint64_t *ns)
{
	struct timespec now;
	struct tm tm;
	const char *end;
	char *e;
	double v;
	time_t t;

	if (!*s)
		return -1;
	if (*s == '@') {
		errno = 0;
		v = strtod(s + 1, &e);
		if (errno || e == s + 1 || *e || !(v >= 0) || v > 1e10)
			return -1;
		*ns = (uint64_t)(v * 1e9);
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (end) {
		if (*end == 'T' || *end == ' ') {
			const char *e2 = strptime(end + 1, "%H:%M:%S", &tm);

			end = e2 ? e2 : strptime(end + 1, "%H:%M", &tm);
			if (!end)
				return -1;
		}
		if (*end)
			return -1;
		tm.tm_isdst = -1;
		t = mktime(&tm);
		if (t == (time_t)-1 || t < 0)
			return -1;
		*ns = (uint64_t)t * 1000000000ULL;
		return 0;
	}
	errno = 0;
	v = strtod(s, &e);
	if (errno || e == s || !(v >= 0) || *s == '-' || *s == '+')
		return -1;
	if (!strcmp(e, "") || !strcmp(e, "s"))
		;
	else if (!strcmp(e, "m") || !strcmp(e, "min"))
		v *= 60;
	else if (!strcmp(e, "h"))
		v *= 3600;
	else if (!strcmp(e, "d"))
		v *= 86400;
	else
		return -1;
	if (v > 1e10)
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	v = (double)now.tv_sec * 1e9 + (double)now.tv_nsec - v * 1e9;
	*ns = v > 0 ? (uint64_t)v : 0;
	return 0;
}

static int olc_history(const char *domain, int quiet, uint64_t since_ns,
		       int have_after, uint64_t after_seq)
{
	struct olc_deadlocks dl = { 0 };
	struct olc_json j;
	size_t i, shown = 0;
	int ret;

	ret = olc_load_deadlocks(&dl);
	if (ret)
		return olc_exit_errno(ret);
	if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_json_obj(&j, NULL);
		/* the deadlocks across nodes: ordlock-xdetectd's rounds */
		olc_json_xdetectd(&j, "across_nodes", "state\n");
		olc_json_arr(&j, "deadlocks");
	}
	for (i = 0; i < dl.n; i++) {
		if (domain && strcmp(dl.v[i].domain, domain))
			continue;
		if (dl.v[i].time_ns < since_ns || (have_after && dl.v[i].seq <= after_seq))
			continue;
		if (quiet) {
			shown++;
			continue;
		}
		if (olc_opt.json)
			olc_deadlock_json(&j, &dl.v[i]);
		else
			olc_deadlock_text(&dl.v[i]);
		shown++;
	}
	/* the JSON has them in "across_nodes" */
	if (!olc_opt.json)
		shown += olc_history_rounds(domain, quiet, since_ns, have_after, shown);
	if (olc_opt.json)
		olc_list_end(&j, NULL, NULL, NULL);
	else if (!shown && !quiet)
		printf("no deadlocks recorded%s%s\n", olc_in_domain(domain),
		       since_ns ? " since then" : have_after ? " after that one" : "");
	olc_deadlocks_free(&dl);
	return shown ? OLC_EXIT_FOUND : OLC_EXIT_OK;
}

static int olc_parse_ulong(const char *s, unsigned long long *v)
{
	uint64_t x;

	if (olc_parse_u64(s, &x))
		return -1;
	*v = x;
	return 0;
}

enum { OLC_OPT_HISTORY = 0x200, OLC_OPT_MAX_WORK, OLC_OPT_SINCE, OLC_OPT_AFTER };

struct olc_cycles_args {
	struct olc_args base;
	unsigned long long limit;
	unsigned long long max_work;
	int history;
	int quiet;
	int have_since;
	uint64_t since_ns;	/* --since, wall-clock ns */
	int have_after;
	uint64_t after_seq;	/* --after */
};

static const struct olc_option olc_cycles_options[] = {
	OLC_OPTION_DOMAIN("only this domain"),
	OLC_OPTION_FILE,
	{ 'l', "limit", "N", "print at most N cycles (default 100; 0: all); all are\ncounted" },
	{ OLC_OPT_MAX_WORK, "max-work", "N", "stop the search after N edge visits (default 50000000,\nwell under a second; 0: no bound); then the count is a\nlower bound and the output says so" },
	{ 'q', "quiet", NULL, "print nothing: only the exit status (the search\nstops at the first cycle)" },
	{ OLC_OPT_HISTORY, "history", NULL, "the deadlocks the kernel detected and broke (debugfs\n\"deadlocks\", newest last)" },
	{ OLC_OPT_SINCE, "since", "TIME", "--history: only the deadlocks since TIME: a duration\nago (90s, 10m, 2h, 1d), @EPOCH seconds, or\nYYYY-MM-DD[THH:MM[:SS]] local time" },
	{ OLC_OPT_AFTER, "after", "SEQ", "--history: only the deadlocks after number SEQ (the\n\"seq\" of the last one a check has seen)" },
	{ 0 },
};

static int olc_cycles_opt(const struct olc_cmd *cmd, int c, const char *arg,
			  void *args)
{
	struct olc_cycles_args *a = args;

	switch (c) {
	case 'l':
		if (olc_parse_ulong(arg, &a->limit))
			return olc_usage(cmd, "--limit: \"%s\" is not a number", arg);
		return -1;
	case 'q':
		a->quiet = 1;
		return -1;
	case OLC_OPT_HISTORY:
		a->history = 1;
		return -1;
	case OLC_OPT_SINCE:
		if (olc_parse_since(arg, &a->since_ns))
			return olc_usage(cmd, "--since: \"%s\" is not a time (10m, 2h, @EPOCH, YYYY-MM-DDTHH:MM:SS)",
					 arg);
		a->have_since = 1;
		return -1;
	case OLC_OPT_AFTER:
		if (olc_parse_u64(arg, &a->after_seq))
			return olc_usage(cmd, "--after: \"%s\" is not a deadlock number", arg);
		a->have_after = 1;
		return -1;
	default:	/* --max-work */
		if (olc_parse_ulong(arg, &a->max_work))
			return olc_usage(cmd, "--max-work: \"%s\" is not a number", arg);
		return -1;
	}
}

static int olc_cycles_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	struct olc_cycles_args a = {
		.limit = OLC_DEFAULT_LIMIT,
		.max_work = CF_DEFAULT_WORK,
	};
	const char *domain, *file, *source = "file";
	unsigned long long limit, max_work;
	struct olc_edges edges = { 0 };
	struct olc_cycles found;
	struct olc_wfg w;
	struct olc_json j;
	int ret, history, quiet;
	size_t k;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	domain = a.base.domain;
	file = a.base.file;
	limit = a.limit;
	max_work = a.max_work;
	history = a.history;
	quiet = a.quiet;
	if (history && file)
		return olc_usage(cmd, "--history reads the kernel's record, not a file");
	if ((a.have_since || a.have_after) && !history)
		return olc_usage(cmd, "--since and --after go with --history");
	if (a.have_since && a.have_after)
		return olc_usage(cmd, "--since and --after exclude each other");
	if (history)
		return olc_history(domain, quiet, a.have_since ? a.since_ns : 0,
				   a.have_after, a.after_seq);

	if (file)
		ret = olc_load_graph_file(file, &edges);
	else
		ret = olc_load_graph(&edges, &source);
	if (ret)
		return file ? olc_exit_file(ret) : olc_exit_errno(ret);
	/* -q: the first cycle decides the exit status */
	ret = olc_find_cycles(&edges, domain, quiet ? 1 : (unsigned long)limit,
			      quiet, max_work, &w, &found);
	if (ret) {
		olc_err("cycles: %s", strerror(-ret));
		olc_edges_free(&edges);
		return olc_exit_errno(ret);
	}
	if (quiet) {
		/* nothing to print */
	} else if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_json_obj(&j, NULL);
		olc_json_str(&j, "source", source);
		olc_json_str(&j, "domain", domain);
		olc_json_u64(&j, "edges", edges.n);
		olc_json_u64(&j, "owners", w.nv);
		olc_json_u64(&j, "count", found.res.ncycles);
		olc_json_bool(&j, "complete", found.res.complete);
		olc_json_u64(&j, "shown", found.nkept);
		/* across nodes: ordlock-xdetectd's waits and rounds */
		olc_json_xdetectd(&j, "across_nodes", "state\n");
		olc_json_arr(&j, "cycles");
		for (k = 0; k < found.nkept; k++)
			olc_cycle_json(&j, &found, k);
		olc_list_end(&j, NULL, NULL, NULL);
	} else if (!found.res.ncycles) {
		printf("%sno cycles%s: %u owners wait or block, %u edges%s\n",
		       olc_c(OLC_GREEN), olc_c(OLC_RESET), w.nv, w.g.ne,
		       olc_in_domain(domain));
		if (!found.res.complete)
			printf("note: the search stopped at its work bound (--max-work %llu)\n",
			       max_work);
	} else {
		size_t total = found.res.ncycles;

		for (k = 0; k < found.nkept; k++) {
			if (k)
				putchar('\n');
			olc_cycle_text(&found, k, total);
		}
		if (found.nkept < total)
			printf("\n... %zu more cycles not shown (--limit %llu)\n",
			       total - found.nkept, limit);
		if (!found.res.complete)
			printf("note: the search stopped at its work bound after %zu cycles; there may be more (--max-work 0 searches on)\n",
			       total);
	}
	if (!quiet && !olc_opt.json && !file)
		olc_cycles_across(domain);
	ret = found.res.ncycles ? OLC_EXIT_FOUND : OLC_EXIT_OK;
	/* no cycle seen, but not everything could be seen */
	if (olc_view_filtered && (quiet || !olc_opt.json))
		olc_err("showing only the owners of uid %u: the others' need root or CAP_NET_ADMIN",
			(unsigned int)geteuid());
	if (ret == OLC_EXIT_OK && olc_view_filtered)
		ret = OLC_EXIT_PARTIAL;
	olc_cycles_free(&found);
	olc_wfg_free(&w);
	olc_edges_free(&edges);
	return ret;
}

const struct olc_cmd olc_cmd_cycles = {
	.name = "cycles",
	.run = olc_cycles_run,
	.flags = OLC_CMD_DOMAIN | OLC_CMD_FILE,
	.options = olc_cycles_options,
	.opt = olc_cycles_opt,
	.summary = "find every cycle of waits (deadlock) in the wait-for graph",
	.usage = "cycles [-d DOMAIN] [-f FILE] [-l N] [-q] [--max-work N] [-j]\n"
		 "cycles --history [--since TIME | --after SEQ] [-d DOMAIN] [-q] [-j]",
	.about =
	"Reads the wait-for graph (debugfs when readable, else the netlink dump) and\n"
	"prints every elementary cycle: one line per waiting owner, then the chain of\n"
	"keys. Live cycles persist in \"timeout\" domains (and, in a \"detect\" domain,\n"
	"for its detection delay). Where ordlock-xdetectd answers, a last line counts\n"
	"its rounds across nodes: being confirmed, and deadlocks broken.\n",
	.help =
	"Exit status: 0 no cycles, 1 cycles, 3 no cycle seen but the view is filtered\n"
	"(without root or CAP_NET_ADMIN only your own owners are shown; a cycle among\n"
	"others' would go unseen); ordlockctl's own failures as in \"ordlockctl help\".\n"
	"--history: 1 when deadlocks are shown (those since TIME, after SEQ, or ever),\n"
	"0 when none. The kernel keeps the last deadlock_history records (seq, the\n"
	"wall-clock time of the detection, the cycle), so \"--since 10m\" is a health\n"
	"check: 1 means a deadlock was broken in the last 10 minutes. --after SEQ does\n"
	"not depend on the clock: keep the \"seq\" of the newest one seen.\n"
	"Where ordlock-xdetectd runs, --history shows the deadlocks across nodes too\n"
	"(every node's daemon sees them all): the round, when it was decided, the\n"
	"victim and every owner as node + pid + comm (-d and --since apply, --after\n"
	"leaves them out; they count for the exit status).\n"
	"\n"
	"JSON: {\"source\", \"domain\", \"edges\", \"owners\", \"count\", \"complete\", \"shown\",\n"
	"\"cycles\": [{\"domain\", \"length\", \"steps\": [{\"owner_id\", \"pid\", \"comm\", \"mode\",\n"
	"\"key\", \"rank\", \"id\", \"edge\", \"waited_us\", \"blocker\": {\"owner_id\", \"pid\",\n"
	"\"comm\", \"mode\"}}], \"chain\": [KEY...]}]}; --history: {\"deadlocks\": [{\"seq\",\n"
	"\"time_ns\", \"time\", \"domain\", \"length\", \"complete\", \"steps\": [{\"index\",\n"
	"\"owner_id\", \"pid\", \"comm\", \"mode\", \"key\", \"rank\", \"id\", \"edge\",\n"
	"\"blocker_mode\"}], \"chain\"}]}; both have \"across_nodes\" (null without\n"
	"ordlock-xdetectd): its state, with \"rounds\": [{\"round\", \"domain\", \"state\",\n"
	"\"opened_ns\", \"closed_ns\", \"victim\" (an index of the cycle), \"cycle\":\n"
	"[{\"node\", \"owner_id\", \"pid\", \"comm\", \"key\", \"mode\", ...}]}].\n",
};
