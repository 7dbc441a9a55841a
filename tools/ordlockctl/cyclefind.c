// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: Johnson's algorithm for all elementary cycles, iterative,
 * component by component; and the wait-for graph of owners (cyclefind.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cyclefind.h"

#define CF_NONE		(~0U)

int cf_graph_init(struct cf_graph *g, unsigned int nv, const unsigned int *src,
		  const unsigned int *dst, unsigned int ne, unsigned int *map)
{
	unsigned int i, *pos;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < ne; i++)
		if (src[i] >= nv || dst[i] >= nv)
			return -EINVAL;
	g->nv = nv;
	g->ne = ne;
	g->off = calloc((size_t)nv + 1, sizeof(*g->off));
	g->dst = malloc(((size_t)ne + 1) * sizeof(*g->dst));
	pos = malloc(((size_t)nv + 1) * sizeof(*pos));
	if (!g->off || !g->dst || !pos) {
		free(pos);
		cf_graph_free(g);
		return -ENOMEM;
	}
	/* counting sort by source, stable */
	for (i = 0; i < ne; i++)
		g->off[src[i] + 1]++;
	for (i = 0; i < nv; i++)
		g->off[i + 1] += g->off[i];
	memcpy(pos, g->off, ((size_t)nv + 1) * sizeof(*pos));
	for (i = 0; i < ne; i++) {
		unsigned int at = pos[src[i]]++;

		g->dst[at] = dst[i];
		if (map)
			map[at] = i;
	}
	free(pos);
	return 0;
}

void cf_graph_free(struct cf_graph *g)
{
	free(g->off);
	free(g->dst);
	memset(g, 0, sizeof(*g));
}

/* A component to search: cbuf[start..start+len-1], least vertex min */
struct cf_comp {
	unsigned int start;
	unsigned int len;
	unsigned int min;
};

/* The state of one search; arrays of nv or ne entries */
struct cf_state {
	const struct cf_graph *g;
	uint64_t max_work;
	uint64_t work;
	uint64_t ncycles;
	int stopped;
	cf_fn fn;
	void *arg;

	/* the component being searched: stamp[v] == cur, and alive */
	uint64_t cur;
	uint64_t *stamp;
	unsigned char *alive;

	/* Tarjan */
	unsigned int *index;
	unsigned int *low;
	unsigned char *onstack;
	unsigned int *tstack;
	unsigned int *call;
	unsigned int *it;

	/* Johnson */
	unsigned char *blocked;
	unsigned char *found;
	unsigned int *path;
	unsigned int *pathe;
	unsigned int *bhead;	/* per vertex: list of edges v->w with v in B(w) */
	unsigned int *bnext;	/* per edge */
	uint64_t *inb;		/* per edge: == cur while in a B list */
	unsigned int *src;	/* per edge */
	unsigned int *ustack;

	/* components still to search: slices of cbuf, a stack */
	unsigned int *cbuf;
	struct cf_comp *comps;
	unsigned int ncomp;
	unsigned int *tout;	/* Tarjan's output, and component ends */
	unsigned int *tbound;
};

static int cf_in(const struct cf_state *st, unsigned int v)
{
	return st->stamp[v] == st->cur && st->alive[v];
}

static int cf_over(const struct cf_state *st)
{
	return st->max_work && st->work > st->max_work;
}

static int cf_has_self_loop(const struct cf_state *st, unsigned int v)
{
	const struct cf_graph *g = st->g;
	unsigned int e;

	for (e = g->off[v]; e < g->off[v + 1]; e++)
		if (g->dst[e] == v)
			return 1;
	return 0;
}

/*
 * Tarjan's algorithm on the vertices @vs[0..@n-1] (those in the current
 * component); writes the components to st->tout, their ends to st->tbound.
 * Returns the number of components.
 */
static unsigned int cf_tarjan(struct cf_state *st, const unsigned int *vs,
			      unsigned int n)
{
	const struct cf_graph *g = st->g;
	unsigned int i, idx = 0, tsp = 0, csp = 0, nout = 0, ncomp = 0;

	for (i = 0; i < n; i++) {
		st->index[vs[i]] = CF_NONE;
		st->onstack[vs[i]] = 0;
	}
	for (i = 0; i < n; i++) {
		unsigned int root = vs[i];

		if (st->index[root] != CF_NONE || !cf_in(st, root))
			continue;
		st->index[root] = st->low[root] = idx++;
		st->tstack[tsp++] = root;
		st->onstack[root] = 1;
		st->it[root] = g->off[root];
		st->call[csp++] = root;
		while (csp) {
			unsigned int v = st->call[csp - 1];

			if (st->it[v] < g->off[v + 1]) {
				unsigned int w = g->dst[st->it[v]++];

				st->work++;
				if (!cf_in(st, w))
					continue;
				if (st->index[w] == CF_NONE) {
					st->index[w] = st->low[w] = idx++;
					st->tstack[tsp++] = w;
					st->onstack[w] = 1;
					st->it[w] = g->off[w];
					st->call[csp++] = w;
				} else if (st->onstack[w] && st->index[w] < st->low[v]) {
					st->low[v] = st->index[w];
				}
				continue;
			}
			csp--;
			if (st->low[v] == st->index[v]) {
				unsigned int x;

				do {
					x = st->tstack[--tsp];
					st->onstack[x] = 0;
					st->tout[nout++] = x;
				} while (x != v);
				st->tbound[ncomp++] = nout;
			}
			if (csp) {
				unsigned int u = st->call[csp - 1];

				if (st->low[v] < st->low[u])
					st->low[u] = st->low[v];
			}
		}
	}
	return ncomp;
}

static int cf_comp_cmp(const void *a, const void *b)
{
	const struct cf_comp *x = a, *y = b;

	/* descending least vertex: the least ends on top of the stack */
	return x->min < y->min ? 1 : x->min > y->min ? -1 : 0;
}

/*
 * Push the non-trivial components of the last cf_tarjan() (more than one
 * vertex, or a self-loop) as slices of cbuf from @at on; the one with the
 * least vertex ends on top, so components are searched in that order.
 */
static void cf_push_components(struct cf_state *st, unsigned int ncomp,
			       unsigned int at)
{
	unsigned int c, first = st->ncomp, i, start = 0;

	for (c = 0; c < ncomp; c++) {
		unsigned int end = st->tbound[c], len = end - start;
		unsigned int min = CF_NONE;

		if (len > 1 || cf_has_self_loop(st, st->tout[start])) {
			memcpy(&st->cbuf[at], &st->tout[start], len * sizeof(*st->cbuf));
			for (i = 0; i < len; i++)
				if (st->cbuf[at + i] < min)
					min = st->cbuf[at + i];
			st->comps[st->ncomp].start = at;
			st->comps[st->ncomp].len = len;
			st->comps[st->ncomp].min = min;
			st->ncomp++;
			at += len;
		}
		start = end;
	}
	if (st->ncomp - first > 1)
		qsort(&st->comps[first], st->ncomp - first, sizeof(*st->comps),
		      cf_comp_cmp);
}

static void cf_unblock(struct cf_state *st, unsigned int u)
{
	unsigned int sp = 0;

	st->blocked[u] = 0;
	st->ustack[sp++] = u;
	while (sp) {
		unsigned int x = st->ustack[--sp], e, next;

		for (e = st->bhead[x]; e != CF_NONE; e = next) {
			unsigned int y = st->src[e];

			next = st->bnext[e];
			st->inb[e] = 0;
			st->work++;
			if (st->blocked[y]) {
				st->blocked[y] = 0;
				st->ustack[sp++] = y;
			}
		}
		st->bhead[x] = CF_NONE;
	}
}

/* Every elementary cycle through @s within the current component */
static void cf_circuit(struct cf_state *st, unsigned int s)
{
	const struct cf_graph *g = st->g;
	unsigned int depth = 0;

	st->path[depth++] = s;
	st->blocked[s] = 1;
	st->found[s] = 0;
	st->it[s] = g->off[s];
	while (depth && !st->stopped) {
		unsigned int v = st->path[depth - 1];

		if (cf_over(st)) {
			st->stopped = 1;
			break;
		}
		if (st->it[v] < g->off[v + 1]) {
			unsigned int e = st->it[v]++, w = g->dst[e];

			st->work++;
			if (!cf_in(st, w))
				continue;
			if (w == s) {
				st->pathe[depth - 1] = e;
				st->ncycles++;
				st->found[v] = 1;
				if (st->fn && st->fn(st->arg, st->path, st->pathe, depth))
					st->stopped = 1;
			} else if (!st->blocked[w]) {
				st->pathe[depth - 1] = e;
				st->path[depth++] = w;
				st->blocked[w] = 1;
				st->found[w] = 0;
				st->it[w] = g->off[w];
			}
			continue;
		}
		depth--;
		if (st->found[v]) {
			cf_unblock(st, v);
		} else {
			unsigned int e;

			for (e = g->off[v]; e < g->off[v + 1]; e++) {
				unsigned int w = g->dst[e];

				st->work++;
				if (!cf_in(st, w) || st->inb[e] == st->cur)
					continue;
				st->inb[e] = st->cur;
				st->bnext[e] = st->bhead[w];
				st->bhead[w] = e;
			}
		}
		if (depth)
			st->found[st->path[depth - 1]] |= st->found[v];
	}
}

static void cf_state_free(struct cf_state *st)
{
	free(st->stamp);
	free(st->alive);
	free(st->index);
	free(st->low);
	free(st->onstack);
	free(st->tstack);
	free(st->call);
	free(st->it);
	free(st->blocked);
	free(st->found);
	free(st->path);
	free(st->pathe);
	free(st->bhead);
	free(st->bnext);
	free(st->inb);
	free(st->src);
	free(st->ustack);
	free(st->cbuf);
	free(st->comps);
	free(st->tout);
	free(st->tbound);
}

static int cf_state_init(struct cf_state *st, const struct cf_graph *g)
{
	size_t nv = (size_t)g->nv + 1, ne = (size_t)g->ne + 1;
	unsigned int v, e;

	st->g = g;
	st->stamp = calloc(nv, sizeof(*st->stamp));
	st->alive = malloc(nv);
	st->index = malloc(nv * sizeof(unsigned int));
	st->low = malloc(nv * sizeof(unsigned int));
	st->onstack = calloc(nv, 1);
	st->tstack = malloc(nv * sizeof(unsigned int));
	st->call = malloc(nv * sizeof(unsigned int));
	st->it = malloc(nv * sizeof(unsigned int));
	st->blocked = calloc(nv, 1);
	st->found = calloc(nv, 1);
	st->path = malloc(nv * sizeof(unsigned int));
	st->pathe = malloc(nv * sizeof(unsigned int));
	st->bhead = malloc(nv * sizeof(unsigned int));
	st->bnext = malloc(ne * sizeof(unsigned int));
	st->inb = calloc(ne, sizeof(*st->inb));
	st->src = malloc(ne * sizeof(unsigned int));
	st->ustack = malloc(nv * sizeof(unsigned int));
	st->cbuf = malloc(nv * sizeof(unsigned int));
	st->comps = malloc(nv * sizeof(*st->comps));
	st->tout = malloc(nv * sizeof(unsigned int));
	st->tbound = malloc(nv * sizeof(unsigned int));
	if (!st->stamp || !st->alive || !st->index || !st->low || !st->onstack ||
	    !st->tstack || !st->call || !st->it || !st->blocked || !st->found ||
	    !st->path || !st->pathe || !st->bhead || !st->bnext || !st->inb ||
	    !st->src || !st->ustack || !st->cbuf || !st->comps ||
	    !st->tout || !st->tbound)
		return -ENOMEM;
	memset(st->alive, 1, nv);
	for (v = 0; v < g->nv; v++) {
		st->bhead[v] = CF_NONE;
		for (e = g->off[v]; e < g->off[v + 1]; e++)
			st->src[e] = v;
	}
	return 0;
}

int cf_find_cycles(const struct cf_graph *g, uint64_t max_work, cf_fn fn,
		   void *arg, struct cf_result *res)
{
	struct cf_state st;
	unsigned int v, ncomp;
	int ret;

	memset(res, 0, sizeof(*res));
	memset(&st, 0, sizeof(st));
	ret = cf_state_init(&st, g);
	if (ret) {
		cf_state_free(&st);
		return ret;
	}
	st.max_work = max_work;
	st.fn = fn;
	st.arg = arg;

	/* the components of the whole graph */
	st.cur = 1;
	for (v = 0; v < g->nv; v++) {
		st.stamp[v] = 1;
		st.cbuf[v] = v;
	}
	ncomp = cf_tarjan(&st, st.cbuf, g->nv);
	cf_push_components(&st, ncomp, 0);

	while (st.ncomp && !st.stopped) {
		unsigned int c = --st.ncomp, start = st.comps[c].start;
		unsigned int len = st.comps[c].len, s = st.comps[c].min, i;

		if (cf_over(&st)) {
			st.stopped = 1;
			break;
		}
		st.cur++;
		for (i = 0; i < len; i++) {
			unsigned int x = st.cbuf[start + i];

			st.stamp[x] = st.cur;
			st.blocked[x] = 0;
			st.bhead[x] = CF_NONE;
		}
		cf_circuit(&st, s);
		if (st.stopped)
			break;
		/* what is left without s: its components, searched next */
		st.alive[s] = 0;
		ncomp = cf_tarjan(&st, &st.cbuf[start], len);
		cf_push_components(&st, ncomp, start);
	}
	res->ncycles = st.ncycles;
	res->work = st.work;
	res->complete = !st.stopped;
	cf_state_free(&st);
	return 0;
}

int cf_components(const struct cf_graph *g, unsigned int *comp)
{
	struct cf_state st;
	unsigned int v, c, ncomp, start = 0;
	int ret;

	memset(&st, 0, sizeof(st));
	ret = cf_state_init(&st, g);
	if (ret) {
		cf_state_free(&st);
		return ret;
	}
	st.cur = 1;
	for (v = 0; v < g->nv; v++) {
		st.stamp[v] = 1;
		st.cbuf[v] = v;
	}
	ncomp = cf_tarjan(&st, st.cbuf, g->nv);
	for (c = 0; c < ncomp; c++) {
		for (v = start; v < st.tbound[c]; v++)
			comp[st.tout[v]] = c;
		start = st.tbound[c];
	}
	cf_state_free(&st);
	return 0;
}

/* The wait-for graph of owners */

struct olc_wfg_edge {
	unsigned int src, dst, idx, type;
};

static int olc_wfg_edge_cmp(const void *a, const void *b)
{
	const struct olc_wfg_edge *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	/* hard (1) before soft (2), then input order */
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int olc_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int olc_wfg_vertex(const struct olc_wfg *w, uint64_t id)
{
	unsigned int lo = 0, hi = w->nv;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (w->ids[mid] == id)
			return (int)mid;
		if (w->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void olc_wfg_free(struct olc_wfg *w)
{
	free(w->ids);
	free(w->who);
	free(w->domain);
	free(w->edge);
	cf_graph_free(&w->g);
	memset(w, 0, sizeof(*w));
}

int olc_wfg_build(struct olc_wfg *w, const struct olc_edges *edges,
		  const char *domain)
{
	struct olc_wfg_edge *we = NULL;
	unsigned int *src = NULL, *dst = NULL, *map = NULL;
	size_t i, n = 0, nids = 0, k;
	int ret = -ENOMEM;

	memset(w, 0, sizeof(*w));
	if (edges->n > 0x3fffffff)
		return -E2BIG;
	w->ids = malloc((edges->n * 2 + 1) * sizeof(*w->ids));
	we = malloc((edges->n + 1) * sizeof(*we));
	if (!w->ids || !we)
		goto out;
	for (i = 0; i < edges->n; i++) {
		const struct olc_edge *e = &edges->v[i];

		if (domain && strcmp(e->domain, domain))
			continue;
		if (e->waiter.id == e->blocker.id)
			continue;
		w->ids[nids++] = e->waiter.id;
		w->ids[nids++] = e->blocker.id;
	}
	qsort(w->ids, nids, sizeof(*w->ids), olc_u64_cmp);
	for (i = 0, k = 0; i < nids; i++)
		if (!k || w->ids[k - 1] != w->ids[i])
			w->ids[k++] = w->ids[i];
	w->nv = (unsigned int)k;
	w->who = calloc(k + 1, sizeof(*w->who));
	w->domain = calloc(k + 1, sizeof(*w->domain));
	if (!w->who || !w->domain)
		goto out;
	for (i = 0; i < edges->n; i++) {
		const struct olc_edge *e = &edges->v[i];
		int a, b;

		if (domain && strcmp(e->domain, domain))
			continue;
		if (e->waiter.id == e->blocker.id)
			continue;
		a = olc_wfg_vertex(w, e->waiter.id);
		b = olc_wfg_vertex(w, e->blocker.id);
		if (!w->who[a]) {
			w->who[a] = &e->waiter;
			w->domain[a] = e->domain;
		}
		if (!w->who[b]) {
			w->who[b] = &e->blocker;
			w->domain[b] = e->domain;
		}
		we[n].src = (unsigned int)a;
		we[n].dst = (unsigned int)b;
		we[n].idx = (unsigned int)i;
		we[n].type = e->type;
		n++;
	}
	qsort(we, n, sizeof(*we), olc_wfg_edge_cmp);
	for (i = 0, k = 0; i < n; i++)
		if (!k || we[k - 1].src != we[i].src || we[k - 1].dst != we[i].dst)
			we[k++] = we[i];
	n = k;
	src = calloc(n + 1, sizeof(*src));
	dst = calloc(n + 1, sizeof(*dst));
	map = malloc((n + 1) * sizeof(*map));
	w->edge = malloc((n + 1) * sizeof(*w->edge));
	if (!src || !dst || !map || !w->edge)
		goto out;
	for (i = 0; i < n; i++) {
		src[i] = we[i].src;
		dst[i] = we[i].dst;
	}
	ret = cf_graph_init(&w->g, w->nv, src, dst, (unsigned int)n, map);
	if (ret)
		goto out;
	for (i = 0; i < n; i++)
		w->edge[i] = we[map[i]].idx;
out:
	free(we);
	free(src);
	free(dst);
	free(map);
	if (ret)
		olc_wfg_free(w);
	return ret;
}
