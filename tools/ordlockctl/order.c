// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl order: the lock order a detect or timeout domain learned
 * (ORDLOCK_IOC_GET_ORDER): its edges with their first observations, the
 * potential deadlocks, a Graphviz picture, and --suggest: a rank order
 * consistent with what was seen (or the one that changes the fewest
 * edges), as the "ordlockctl domain ... set" command that enforces it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libordlock.h"
#include "ordlockctl.h"

enum { OLC_OPT_ORDER_DOT = 0x200, OLC_OPT_SUGGEST, OLC_OPT_RESET };

struct olc_order_args {
	struct olc_args base;
	int dot;
	int suggest;
	int reset;
};

/* What the kernel said */
struct olc_order {
	const char *domain;
	struct ordlock_order_get info;
	struct ordlock_order_edge *e;
	unsigned int ne;
	uint32_t *w;
	unsigned int nw;
	const struct olc_rank_names *names;
};

/* The suggestion */
struct olc_suggest {
	unsigned int nr;
	uint32_t *rank;		/* the ranks in the suggested order */
	uint32_t *num;		/* the number each gets */
	unsigned int nchanged;	/* rank pairs against the order */
	unsigned char *against;	/* per edge: against the suggested order */
	int exact;
};

static const char *olc_mode_word(unsigned int mode)
{
	return mode == ORDLOCK_MODE_EXCLUSIVE ? "exclusive" : "shared";
}

static const char *olc_kind_word(uint32_t kind)
{
	switch (kind) {
	case ORDLOCK_ORDER_ASCENDING:
		return "ascending";
	case ORDLOCK_ORDER_DESCENDING:
		return "descending";
	default:
		return "ranks";
	}
}

/* A rank as NAME (or its number), static buffers used in turn */
static const char *olc_rank_str(const struct olc_order *o, uint32_t rank)
{
	static char bufs[8][48];
	static unsigned int next;
	const char *name = o->names ? olc_rank_name(o->names, rank) : NULL;
	char *b = bufs[next++ % 8];

	if (name)
		snprintf(b, sizeof(bufs[0]), "%s", name);
	else
		snprintf(b, sizeof(bufs[0]), "%u", rank);
	return b;
}

static const char *olc_order_time(uint64_t ns)
{
	static char buf[40];
	time_t t = (time_t)(ns / 1000000000ULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)ns);
	return buf;
}

static int olc_order_load(struct olc_order *o, const char *domain)
{
	struct ordlock *ol = ordlock_open(NULL);
	int ret, tries;

	if (!ol) {
		olc_err("cannot open " ORDLOCK_DEVICE ": %s%s%s", strerror(errno),
			olc_module_missing() ? "; " : "",
			olc_module_missing() ? olc_module_missing() : "");
		return -errno;
	}
	memset(o, 0, sizeof(*o));
	o->domain = domain;
	/* Sizes first, then the data; again if it grew meanwhile */
	for (tries = 0; tries < 5; tries++) {
		ret = ordlock_get_order(ol, domain, o->e, o->ne, o->w, o->nw, &o->info);
		if (ret)
			break;
		if (o->info.nedges <= o->ne && o->info.npotential_words <= o->nw)
			break;
		o->ne = o->info.nedges + 16;
		o->nw = o->info.npotential_words + 64;
		free(o->e);
		free(o->w);
		o->e = calloc(o->ne, sizeof(*o->e));
		o->w = calloc(o->nw, sizeof(*o->w));
		if (!o->e || !o->w) {
			ret = -ENOMEM;
			break;
		}
	}
	ordlock_close(ol);
	if (ret) {
		if (ret == -ENOENT)
			olc_err("domain %s does not exist", domain);
		else
			olc_err("reading the learned order of %s: %s", domain, strerror(-ret));
		return ret;
	}
	o->ne = o->info.nedges < o->ne ? o->info.nedges : o->ne;
	o->nw = o->info.npotential_words < o->nw ? o->info.npotential_words : o->nw;
	o->names = olc_names(domain);
	return 0;
}

/* The potential deadlock at word @at: kind, n, edges; returns the next word */
static unsigned int olc_pot(const struct olc_order *o, unsigned int at,
			    uint32_t *kind, uint32_t *n, const uint32_t **edges)
{
	if (at + 2 > o->nw || at + 2 + o->w[at + 1] > o->nw)
		return o->nw;
	*kind = o->w[at];
	*n = o->w[at + 1];
	*edges = &o->w[at + 2];
	return at + 2 + *n;
}

static void olc_who_str(char *buf, size_t len, const struct ordlock_order_edge *e)
{
	if (!e->pid && !e->comm[0])
		snprintf(buf, len, "owner %llu of uid %u (hidden)",
			 (unsigned long long)e->owner_id, e->uid);
	else
		snprintf(buf, len, "\"%s\" (pid %u %s, owner %llu)",
			 e->label[0] ? e->label : "-", e->pid, e->comm,
			 (unsigned long long)e->owner_id);
}

static void olc_obs_line(const struct olc_order *o, const struct ordlock_order_edge *e,
			 const char *prefix)
{
	char who[128];

	olc_who_str(who, sizeof(who), e);
	printf("%s%s: held %s %s, then took %s %s (%s)\n", prefix, who,
	       olc_key(o->domain, e->held.rank, e->held.id), olc_mode_word(e->held.mode),
	       olc_key(o->domain, e->taken.rank, e->taken.id),
	       olc_mode_word(e->taken.mode), olc_order_time(e->time_ns));
}

/* --- the suggestion ------------------------------------------------------ */

static int olc_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int olc_rank_index(const uint32_t *ranks, unsigned int n, uint32_t r)
{
	const uint32_t *p = bsearch(&r, ranks, n, sizeof(*ranks), olc_u32_cmp);

	return p ? (int)(p - ranks) : -1;
}

/* Up to this many ranks the order is exact (a DP over subsets) */
#define OLC_SUGGEST_EXACT 16

/*
 * Order the ranks so that the fewest rank pairs (a -> b seen, with b
 * placed before a) go against it; ties by the fewest observations
 * against it, then by the present numbers.
 */
static int olc_suggest(const struct olc_order *o, struct olc_suggest *s)
{
	unsigned int nr = 0, i, j, k, v;
	uint32_t *ranks;
	uint64_t *pairw;	/* pairw[a * nr + b]: count of a -> b, 0: none */
	unsigned int *pos;

	memset(s, 0, sizeof(*s));
	ranks = calloc(2 * o->ne + 1, sizeof(*ranks));
	if (!ranks)
		return -ENOMEM;
	for (i = 0; i < o->ne; i++)
		if (o->e[i].kind == ORDLOCK_ORDER_RANKS) {
			ranks[nr++] = o->e[i].from_rank;
			ranks[nr++] = o->e[i].to_rank;
		}
	qsort(ranks, nr, sizeof(*ranks), olc_u32_cmp);
	for (i = j = 0; i < nr; i++)
		if (!j || ranks[j - 1] != ranks[i])
			ranks[j++] = ranks[i];
	nr = j;
	pairw = calloc((size_t)nr * nr + 1, sizeof(*pairw));
	pos = calloc(nr + 1, sizeof(*pos));
	s->rank = calloc(nr + 1, sizeof(uint32_t));
	s->num = calloc(nr + 1, sizeof(uint32_t));
	s->against = calloc(o->ne + 1, 1);
	if (!pairw || !pos || !s->rank || !s->num || !s->against) {
		free(ranks);
		free(pairw);
		free(pos);
		return -ENOMEM;
	}
	for (i = 0; i < o->ne; i++)
		if (o->e[i].kind == ORDLOCK_ORDER_RANKS)
			pairw[olc_rank_index(ranks, nr, o->e[i].from_rank) * nr +
			      olc_rank_index(ranks, nr, o->e[i].to_rank)] += o->e[i].count;
	s->nr = nr;
	if (nr <= OLC_SUGGEST_EXACT) {
		/* best[S]: cost of placing the set S first; cost = pairs << 40 | count */
		size_t full = (size_t)1 << nr, S;
		uint64_t *best = malloc(full * sizeof(*best));
		unsigned char *pick = malloc(full);

		if (!best || !pick) {
			free(best);
			free(pick);
			free(ranks);
			free(pairw);
			free(pos);
			return -ENOMEM;
		}
		for (S = 0; S < full; S++)
			best[S] = UINT64_MAX;
		best[0] = 0;
		for (S = 0; S < full; S++) {
			if (best[S] == UINT64_MAX)
				continue;
			for (v = 0; v < nr; v++) {
				uint64_t c = best[S];

				if (S & ((size_t)1 << v))
					continue;
				/* v after every u of S: the edges v -> u go against */
				for (k = 0; k < nr; k++)
					if ((S & ((size_t)1 << k)) && pairw[v * nr + k])
						c += ((uint64_t)1 << 40) + pairw[v * nr + k];
				if (c < best[S | ((size_t)1 << v)]) {
					best[S | ((size_t)1 << v)] = c;
					pick[S | ((size_t)1 << v)] = (unsigned char)v;
				}
			}
		}
		/* Walk back from the full set: the last one picked is placed last */
		S = full - 1;
		for (i = nr; i-- > 0;) {
			v = pick[S];
			s->rank[i] = ranks[v];
			S &= ~((size_t)1 << v);
		}
		free(best);
		free(pick);
		s->exact = 1;
	} else {
		/* Greedy: repeatedly the rank with the least weight against it */
		unsigned char *placed = calloc(nr, 1);

		if (!placed) {
			free(ranks);
			free(pairw);
			free(pos);
			return -ENOMEM;
		}
		for (i = 0; i < nr; i++) {
			uint64_t bestc = UINT64_MAX;
			unsigned int bv = 0;

			for (v = 0; v < nr; v++) {
				uint64_t c = 0;

				if (placed[v])
					continue;
				for (k = 0; k < nr; k++)
					if (!placed[k] && k != v && pairw[k * nr + v])
						c += ((uint64_t)1 << 40) + pairw[k * nr + v];
				if (c < bestc) {
					bestc = c;
					bv = v;
				}
			}
			placed[bv] = 1;
			s->rank[i] = ranks[bv];
		}
		free(placed);
	}
	/* The numbers the ranks have now, handed out in the new order */
	for (i = 0; i < nr; i++) {
		s->num[i] = ranks[i];
		pos[olc_rank_index(ranks, nr, s->rank[i])] = i;
	}
	for (i = 0; i < nr; i++)
		for (j = 0; j < nr; j++)
			if (pairw[i * nr + j] && pos[i] > pos[j])
				s->nchanged++;
	for (i = 0; i < o->ne; i++)
		if (o->e[i].kind == ORDLOCK_ORDER_RANKS &&
		    pos[olc_rank_index(ranks, nr, o->e[i].from_rank)] >
		    pos[olc_rank_index(ranks, nr, o->e[i].to_rank)])
			s->against[i] = 1;
	free(ranks);
	free(pairw);
	free(pos);
	return 0;
}

/* The number @rank gets in the suggestion (itself when not in it) */
static uint32_t olc_suggest_num(const struct olc_suggest *s, uint32_t rank)
{
	unsigned int i;

	for (i = 0; i < s->nr; i++)
		if (s->rank[i] == rank)
			return s->num[i];
	return rank;
}

/* "ordlockctl domain D set policy enforce rank NAME=N..." into @buf */
static void olc_suggest_cmd(const struct olc_order *o, const struct olc_suggest *s,
			    char *buf, size_t len)
{
	size_t at;
	unsigned int i;

	at = (size_t)snprintf(buf, len, "ordlockctl domain %s set policy enforce", o->domain);
	if (!o->names)
		return;
	for (i = 0; i < o->names->n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, " rank %s=%u", o->names->v[i].name,
				       olc_suggest_num(s, o->names->v[i].rank));
}

static void olc_suggest_free(struct olc_suggest *s)
{
	free(s->rank);
	free(s->num);
	free(s->against);
}

static int olc_suggest_text(const struct olc_order *o, const struct olc_suggest *s)
{
	char cmd[4096];
	unsigned int i, unnamed = 0;

	if (!s->nr) {
		printf("nothing learned between ranks in domain %s yet: no order to suggest\n",
		       o->domain);
		return OLC_EXIT_OK;
	}
	printf("suggested order of domain %s:", o->domain);
	for (i = 0; i < s->nr; i++)
		printf("%s %s", i ? " <" : "", olc_rank_str(o, s->rank[i]));
	printf("\n");
	if (!s->nchanged)
		printf("it agrees with every observation\n");
	else
		printf("%u rank pair%s of the observations go against it%s (their code must change):\n",
		       s->nchanged, s->nchanged == 1 ? "" : "s",
		       s->exact ? ", the fewest possible" : " (greedy: many ranks)");
	for (i = 0; i < o->ne; i++)
		if (s->against[i]) {
			printf("  %s -> %s, first seen: ", olc_rank_str(o, o->e[i].from_rank),
			       olc_rank_str(o, o->e[i].to_rank));
			olc_obs_line(o, &o->e[i], "");
		}
	for (i = 0; i < s->nr; i++) {
		const char *name = o->names ? olc_rank_name(o->names, s->rank[i]) : NULL;

		if (!name && s->num[i] != s->rank[i]) {
			printf("rank %u has no name: code that uses rank %u must use %u\n",
			       s->rank[i], s->rank[i], s->num[i]);
			unnamed++;
		}
	}
	olc_suggest_cmd(o, s, cmd, sizeof(cmd));
	printf("to enforce it:\n  %s\n", cmd);
	if (unnamed)
		printf("(name those ranks first, with \"rank NAME=N\", so that keys NAME:ID follow)\n");
	return OLC_EXIT_OK;
}

/* --- views --------------------------------------------------------------- */

static void olc_order_head(const struct olc_order *o)
{
	printf("%slearned lock order of domain %s%s: %s, %u ranks, %u edges (at most %u), %llu potential deadlock%s, %llu dropped\n",
	       olc_c(OLC_BOLD), o->domain, olc_c(OLC_RESET),
	       o->info.learning ? "learning" : "not learning (enforce domain, or order_learn off)",
	       o->info.nranks, o->info.nedges, o->info.max_edges,
	       (unsigned long long)o->info.npotential,
	       o->info.npotential == 1 ? "" : "s",
	       (unsigned long long)o->info.dropped);
	if (o->info.dropped)
		printf("%swarning%s: the learned order was full (order_max_edges), or a user had taught order_max_edges_per_user edges: %llu observations or reports were dropped, what follows is not all there is\n",
		       olc_c(OLC_RED), olc_c(OLC_RESET), (unsigned long long)o->info.dropped);
}

static int olc_order_text(const struct olc_order *o)
{
	unsigned int i, at;
	uint32_t kind, n, seq = 0;
	const uint32_t *ed;

	olc_order_head(o);
	if (o->ne)
		printf("edges:\n");
	for (i = 0; i < o->ne; i++) {
		const struct ordlock_order_edge *e = &o->e[i];

		if (e->kind == ORDLOCK_ORDER_RANKS)
			printf("  #%u %s -> %s", i, olc_rank_str(o, e->from_rank),
			       olc_rank_str(o, e->to_rank));
		else
			printf("  #%u %s by %s id", i, olc_rank_str(o, e->from_rank),
			       olc_kind_word(e->kind));
		printf(" (%s -> %s), seen %llu time%s%s%s%s\n", olc_mode_word(e->held.mode),
		       olc_mode_word(e->taken.mode), (unsigned long long)e->count,
		       e->count == 1 ? "" : "s",
		       e->flags & ORDLOCK_ORDER_EDGE_INVERTED ? olc_c(OLC_RED) : "",
		       e->flags & ORDLOCK_ORDER_EDGE_INVERTED ? ", INVERTED" : "",
		       olc_c(OLC_RESET));
		olc_obs_line(o, e, "      first: ");
	}
	for (at = 0; at < o->nw;) {
		at = olc_pot(o, at, &kind, &n, &ed);
		if (at > o->nw || !n)
			break;
		printf("%spotential deadlock #%u%s: %s\n", olc_c(OLC_RED), ++seq, olc_c(OLC_RESET),
		       kind == ORDLOCK_POTENTIAL_IDS ?
		       "a rank taken by ascending and by descending ids" :
		       "possible circular locking dependency");
		for (i = 0; i < n; i++) {
			if (ed[i] >= o->ne)
				continue;
			olc_obs_line(o, &o->e[ed[i]], i + 1 == n ? "  and then, closing it: " :
				     "  seen: ");
		}
		if (kind == ORDLOCK_POTENTIAL_CYCLE) {
			printf("  ranks:");
			for (i = 0; i < n; i++)
				if (ed[i] < o->ne)
					printf(" %s ->", olc_rank_str(o, o->e[ed[i]].from_rank));
			if (ed[0] < o->ne)
				printf(" %s", olc_rank_str(o, o->e[ed[0]].from_rank));
			printf("\n");
		}
	}
	if (!seq && !o->ne)
		printf("nothing learned yet\n");
	else if (!seq)
		printf("no potential deadlock\n");
	return seq ? OLC_EXIT_FOUND : OLC_EXIT_OK;
}

static void olc_dot_esc(const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
}

static int olc_order_dot(const struct olc_order *o)
{
	unsigned int i;

	printf("digraph \"ordlock-order-");
	olc_dot_esc(o->domain);
	printf("\" {\n\tgraph [label=\"learned lock order of domain ");
	olc_dot_esc(o->domain);
	printf(": an edge A -> B: B was taken while A was held; red = inverted (a potential deadlock)\"];\n");
	printf("\tnode [shape=box, fontname=\"Helvetica\"];\n");
	for (i = 0; i < o->ne; i++) {
		const struct ordlock_order_edge *e = &o->e[i];
		int red = e->flags & ORDLOCK_ORDER_EDGE_INVERTED;

		printf("\t\"");
		olc_dot_esc(olc_rank_str(o, e->from_rank));
		printf("\" -> \"");
		olc_dot_esc(olc_rank_str(o, e->to_rank));
		printf("\" [label=\"");
		if (e->kind != ORDLOCK_ORDER_RANKS)
			printf("ids %s ", e->kind == ORDLOCK_ORDER_ASCENDING ? "up" : "down");
		printf("%c%c x%llu ", e->held.mode == ORDLOCK_MODE_EXCLUSIVE ? 'X' : 'S',
		       e->taken.mode == ORDLOCK_MODE_EXCLUSIVE ? 'X' : 'S',
		       (unsigned long long)e->count);
		olc_dot_esc(e->label[0] ? e->label : e->comm);
		printf("\"%s];\n", red ? ", color=red, fontcolor=red, penwidth=2" : "");
	}
	printf("}\n");
	return OLC_EXIT_OK;
}

static void olc_json_okey(struct olc_json *j, const char *name, const char *domain,
			  const struct ordlock_key *k)
{
	olc_json_obj(j, name);
	olc_json_str(j, "key", olc_key(domain, k->rank, k->id));
	olc_json_u64(j, "rank", k->rank);
	olc_json_u64(j, "id", k->id);
	olc_json_str(j, "mode", olc_mode_word(k->mode));
	olc_json_obj_end(j);
}

static int olc_order_json(const struct olc_order *o, const struct olc_suggest *s)
{
	struct olc_json j;
	unsigned int i, at;
	uint32_t kind, n, seq = 0;
	const uint32_t *ed;
	char cmd[4096];

	olc_json_init(&j, stdout, olc_opt.pretty);
	olc_json_obj(&j, NULL);
	olc_json_str(&j, "domain", o->domain);
	olc_json_bool(&j, "learning", o->info.learning);
	olc_json_u64(&j, "ranks", o->info.nranks);
	olc_json_u64(&j, "max_edges", o->info.max_edges);
	olc_json_u64(&j, "npotential", o->info.npotential);
	olc_json_u64(&j, "dropped", o->info.dropped);
	olc_json_arr(&j, "edges");
	for (i = 0; i < o->ne; i++) {
		const struct ordlock_order_edge *e = &o->e[i];

		olc_json_obj(&j, NULL);
		olc_json_u64(&j, "index", i);
		olc_json_str(&j, "from", olc_rank_str(o, e->from_rank));
		olc_json_str(&j, "to", olc_rank_str(o, e->to_rank));
		olc_json_u64(&j, "from_rank", e->from_rank);
		olc_json_u64(&j, "to_rank", e->to_rank);
		olc_json_str(&j, "kind", olc_kind_word(e->kind));
		olc_json_u64(&j, "count", e->count);
		olc_json_bool(&j, "inverted", !!(e->flags & ORDLOCK_ORDER_EDGE_INVERTED));
		olc_json_bool(&j, "reported", !!(e->flags & ORDLOCK_ORDER_EDGE_REPORTED));
		olc_json_obj(&j, "first");
		olc_json_u64(&j, "owner_id", e->owner_id);
		olc_json_u64(&j, "pid", e->pid);
		olc_json_u64(&j, "uid", e->uid);
		olc_json_str(&j, "comm", e->comm);
		olc_json_str(&j, "label", e->label);
		olc_json_okey(&j, "held", o->domain, &e->held);
		olc_json_okey(&j, "taken", o->domain, &e->taken);
		olc_json_u64(&j, "time_ns", e->time_ns);
		olc_json_obj_end(&j);
		olc_json_obj_end(&j);
	}
	olc_json_arr_end(&j);
	olc_json_arr(&j, "potential");
	for (at = 0; at < o->nw;) {
		at = olc_pot(o, at, &kind, &n, &ed);
		if (at > o->nw || !n)
			break;
		seq++;
		olc_json_obj(&j, NULL);
		olc_json_str(&j, "kind", kind == ORDLOCK_POTENTIAL_IDS ? "ids" : "cycle");
		olc_json_arr(&j, "edges");
		for (i = 0; i < n; i++)
			olc_json_u64(&j, NULL, ed[i]);
		olc_json_arr_end(&j);
		olc_json_arr(&j, "labels");
		for (i = 0; i < n; i++)
			if (ed[i] < o->ne)
				olc_json_str(&j, NULL, o->e[ed[i]].label);
		olc_json_arr_end(&j);
		olc_json_obj_end(&j);
	}
	olc_json_arr_end(&j);
	if (s) {
		olc_json_obj(&j, "suggest");
		olc_json_arr(&j, "order");
		for (i = 0; i < s->nr; i++) {
			olc_json_obj(&j, NULL);
			olc_json_str(&j, "rank", olc_rank_str(o, s->rank[i]));
			olc_json_u64(&j, "was", s->rank[i]);
			olc_json_u64(&j, "becomes", s->num[i]);
			olc_json_obj_end(&j);
		}
		olc_json_arr_end(&j);
		olc_json_u64(&j, "pairs_against", s->nchanged);
		olc_json_bool(&j, "exact", s->exact);
		olc_json_arr(&j, "edges_against");
		for (i = 0; i < o->ne; i++)
			if (s->against[i])
				olc_json_u64(&j, NULL, i);
		olc_json_arr_end(&j);
		olc_suggest_cmd(o, s, cmd, sizeof(cmd));
		olc_json_str(&j, "command", cmd);
		olc_json_obj_end(&j);
	}
	olc_json_obj_end(&j);
	olc_json_end(&j);
	/* the exit status of the text form it stands for */
	return !s && seq ? OLC_EXIT_FOUND : OLC_EXIT_OK;
}

static int olc_order_reset(const char *domain)
{
	struct ordlock *ol = ordlock_open(NULL);
	int ret;

	if (!ol) {
		ret = errno;
		olc_err("cannot open " ORDLOCK_DEVICE ": %s", strerror(ret));
		return olc_exit_errno(ret);
	}
	ret = ordlock_reset_order(ol, domain);
	ordlock_close(ol);
	if (ret) {
		olc_err("resetting the learned order of %s: %s%s", domain, strerror(-ret),
			ret == -EPERM ? " (needs CAP_SYS_ADMIN)" : "");
		return olc_exit_refused(ret);
	}
	printf("the learned order of domain %s is forgotten\n", domain);
	return OLC_EXIT_OK;
}

static const struct olc_option olc_order_options[] = {
	OLC_OPTION_DOMAIN("the domain (default: \"default\")"),
	{ OLC_OPT_ORDER_DOT, "dot", NULL, "Graphviz DOT: ranks as nodes, inverted edges red" },
	{ OLC_OPT_SUGGEST, "suggest", NULL,
	  "a rank order consistent with what was seen (or the one\n"
	  "that goes against the fewest rank pairs, exact up to 16\n"
	  "ranks), with the \"ordlockctl domain ... set policy\n"
	  "enforce rank NAME=N...\" command that enforces it" },
	{ OLC_OPT_RESET, "reset", NULL, "forget what the domain learned (CAP_SYS_ADMIN)" },
	{ 0 },
};

static int olc_order_opt(const struct olc_cmd *cmd, int c, const char *arg, void *args)
{
	struct olc_order_args *a = args;

	(void)cmd;
	(void)arg;
	if (c == OLC_OPT_ORDER_DOT)
		a->dot = 1;
	else if (c == OLC_OPT_SUGGEST)
		a->suggest = 1;
	else
		a->reset = 1;
	return -1;
}

static int olc_order_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	struct olc_order_args a = { 0 };
	struct olc_suggest s;
	struct olc_order o;
	const char *domain;
	int ret;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	domain = a.base.domain ? a.base.domain : "default";
	if (a.dot + a.suggest + a.reset + olc_opt.json > 1 && !(a.suggest && olc_opt.json))
		return olc_usage(cmd, "--dot, --suggest, --reset and --json exclude each other (but --suggest -j)");
	if (a.reset)
		return olc_order_reset(domain);
	ret = olc_order_load(&o, domain);
	if (ret)
		return olc_exit_errno(ret);
	if (a.suggest && olc_suggest(&o, &s)) {
		olc_err("out of memory");
		return OLC_EXIT_ERROR;
	}
	if (olc_opt.json)
		ret = olc_order_json(&o, a.suggest ? &s : NULL);
	else if (a.dot)
		ret = olc_order_dot(&o);
	else if (a.suggest)
		ret = olc_suggest_text(&o, &s);
	else
		ret = olc_order_text(&o);
	if (a.suggest)
		olc_suggest_free(&s);
	free(o.e);
	free(o.w);
	return ret;
}

const struct olc_cmd olc_cmd_order = {
	.name = "order",
	.run = olc_order_run,
	.flags = OLC_CMD_DOMAIN,
	.options = olc_order_options,
	.opt = olc_order_opt,
	.summary = "the lock order a domain learned, its potential deadlocks, a suggested order",
	.usage = "order [-d DOMAIN] [-j | --dot | --suggest [-j] | --reset]",
	.about =
	"In a detect or timeout domain the kernel learns which ranks are taken while\n"
	"which are held (and, within a rank, whether ids go up or down), across every\n"
	"process, and reports a potential deadlock the first time an order closes a\n"
	"cycle that the modes allow to deadlock: no deadlock needs to happen.\n"
	"Shows each edge with its count and first observation (label, pid, command,\n"
	"both keys and modes, time), then the potential deadlocks.\n",
	.help =
	"Exit status: 1 when there are potential deadlocks (without --suggest).\n"
	"JSON: {\"domain\", \"learning\", \"ranks\", \"max_edges\", \"npotential\",\n"
	"\"dropped\", \"edges\": [{\"index\", \"from\", \"to\", \"from_rank\", \"to_rank\",\n"
	"\"kind\" (ranks|ascending|descending), \"count\", \"inverted\", \"reported\",\n"
	"\"first\": {\"owner_id\", \"pid\", \"uid\", \"comm\", \"label\", \"held\", \"taken\",\n"
	"\"time_ns\"}}], \"potential\": [{\"kind\" (cycle|ids), \"edges\", \"labels\"}],\n"
	"with --suggest \"suggest\": {\"order\": [{\"rank\", \"was\", \"becomes\"}],\n"
	"\"pairs_against\", \"exact\", \"edges_against\", \"command\"}}.\n",
};
