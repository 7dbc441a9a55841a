// SPDX-License-Identifier: GPL-2.0
/*
 * The incremental topological order (topo.h).
 *
 * The positions of the vertices are always a permutation of 0 .. nv - 1.
 * Inserting x -> y with ord[x] > ord[y] searches forward from y through
 * the vertices placed before x, and backward from x through those placed
 * after y: reaching x from y means a cycle (the edge is refused).
 * Otherwise the vertices found backward are placed, in their old order,
 * before those found forward, in the positions the two sets held: only the
 * region between y and x moves, and usually much less of it.
 */
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "topo.h"

/**
 * ordlock_topo_init() - an empty graph
 * @t: the graph
 */
void ordlock_topo_init(struct ordlock_topo *t)
{
	memset(t, 0, sizeof(*t));
}

/**
 * ordlock_topo_destroy() - free everything of @t, which is empty again
 * @t: the graph
 */
void ordlock_topo_destroy(struct ordlock_topo *t)
{
	u32 i;

	for (i = 0; i < t->nv; i++) {
		kvfree(t->out[i].v);
		kvfree(t->in[i].v);
	}
	kvfree(t->ord);
	kvfree(t->out);
	kvfree(t->in);
	kvfree(t->mark);
	kvfree(t->parent);
	kvfree(t->stack);
	kvfree(t->fwd);
	kvfree(t->bwd);
	kvfree(t->pos);
	ordlock_topo_init(t);
}

/* A copy of the @n first elements of @old (of @size bytes) in room for @cap */
static void *ordlock_topo_grow(void *old, size_t size, u32 n, u32 cap)
{
	void *p = kvmalloc_array(cap, size, GFP_KERNEL);

	if (!p)
		return NULL;
	if (n)
		memcpy(p, old, (size_t)n * size);
	memset((char *)p + (size_t)n * size, 0, (size_t)(cap - n) * size);
	return p;
}

/* Make room for @need vertices; nothing changes on failure */
static int ordlock_topo_reserve(struct ordlock_topo *t, u32 need)
{
	void *p[10];
	u32 cap;
	int i;

	if (need <= t->cap)
		return 0;
	cap = t->cap ? t->cap * 2 : 64U;
	if (cap < need)
		cap = need;
	p[0] = ordlock_topo_grow(t->ord, sizeof(u32), t->nv, cap);
	p[1] = ordlock_topo_grow(t->out, sizeof(*t->out), t->nv, cap);
	p[2] = ordlock_topo_grow(t->in, sizeof(*t->in), t->nv, cap);
	p[3] = ordlock_topo_grow(t->mark, sizeof(u32), t->nv, cap);
	p[4] = ordlock_topo_grow(t->parent, sizeof(u32), 0, cap);
	p[5] = ordlock_topo_grow(t->stack, sizeof(u32), 0, cap);
	p[6] = ordlock_topo_grow(t->fwd, sizeof(u64), 0, cap);
	p[7] = ordlock_topo_grow(t->bwd, sizeof(u64), 0, cap);
	p[8] = ordlock_topo_grow(t->pos, sizeof(u32), 0, cap);
	for (i = 0; i < 9; i++)
		if (!p[i])
			goto fail;
	kvfree(t->ord);
	kvfree(t->out);
	kvfree(t->in);
	kvfree(t->mark);
	kvfree(t->parent);
	kvfree(t->stack);
	kvfree(t->fwd);
	kvfree(t->bwd);
	kvfree(t->pos);
	t->ord = p[0];
	t->out = p[1];
	t->in = p[2];
	t->mark = p[3];
	t->parent = p[4];
	t->stack = p[5];
	t->fwd = p[6];
	t->bwd = p[7];
	t->pos = p[8];
	t->cap = cap;
	return 0;
fail:
	for (i = 0; i < 9; i++)
		kvfree(p[i]);
	return -ENOMEM;
}

/**
 * ordlock_topo_add_vertices() - add @n vertices without edges
 * @t: the graph
 * @n: how many
 * @first: receives the number of the first one (they are consecutive)
 *
 * Return: 0, or -ENOMEM (nothing changed).
 */
int ordlock_topo_add_vertices(struct ordlock_topo *t, u32 n, u32 *first)
{
	u32 i;

	if (t->nv + n < t->nv)
		return -ENOMEM;
	if (ordlock_topo_reserve(t, t->nv + n))
		return -ENOMEM;
	*first = t->nv;
	for (i = 0; i < n; i++) {
		/* Last in the order: no edge constrains it yet */
		t->ord[t->nv] = t->nv;
		t->nv++;
	}
	return 0;
}

/* Append @v to @a; nothing changes on failure */
static int ordlock_topo_adj_add(struct ordlock_topo_adj *a, u32 v)
{
	u32 *p;

	if (a->n == a->cap) {
		p = ordlock_topo_grow(a->v, sizeof(u32), a->n,
				      a->cap ? a->cap * 2 : 4);
		if (!p)
			return -ENOMEM;
		kvfree(a->v);
		a->v = p;
		a->cap = a->cap ? a->cap * 2 : 4;
	}
	a->v[a->n++] = v;
	return 0;
}

/**
 * ordlock_topo_has_edge() - whether @t has the edge @x -> @y
 * @t: the graph
 * @x: the source
 * @y: the target
 *
 * Return: true when it has.
 */
bool ordlock_topo_has_edge(const struct ordlock_topo *t, u32 x, u32 y)
{
	u32 i;

	for (i = 0; i < t->out[x].n; i++)
		if (t->out[x].v[i] == y)
			return true;
	return false;
}

static int ordlock_topo_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static int ordlock_topo_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* A new search generation: every vertex unvisited */
static void ordlock_topo_new_search(struct ordlock_topo *t)
{
	if (!++t->gen) {
		memset(t->mark, 0, (size_t)t->nv * sizeof(u32));
		t->gen = 1;
	}
}

/*
 * Search forward from @y through the vertices placed before @x. Return
 * true when it reaches @x (t->parent then leads from @x back to @y).
 */
static bool ordlock_topo_forward(struct ordlock_topo *t, u32 x, u32 y)
{
	u32 ub = t->ord[x], sp = 0, w, z, i;

	t->nfwd = 0;
	t->mark[y] = t->gen;
	t->parent[y] = y;
	t->stack[sp++] = y;
	while (sp) {
		w = t->stack[--sp];
		t->fwd[t->nfwd++] = (u64)t->ord[w] << 32 | w;
		for (i = 0; i < t->out[w].n; i++) {
			z = t->out[w].v[i];
			if (z == x) {
				t->parent[x] = w;
				return true;
			}
			if (t->mark[z] != t->gen && t->ord[z] < ub) {
				t->mark[z] = t->gen;
				t->parent[z] = w;
				t->stack[sp++] = z;
			}
		}
	}
	return false;
}

/* Search backward from @x through the vertices placed after @y */
static void ordlock_topo_backward(struct ordlock_topo *t, u32 x, u32 y)
{
	u32 lb = t->ord[y], sp = 0, w, z, i;

	t->nbwd = 0;
	t->mark[x] = t->gen;
	t->stack[sp++] = x;
	while (sp) {
		w = t->stack[--sp];
		t->bwd[t->nbwd++] = (u64)t->ord[w] << 32 | w;
		for (i = 0; i < t->in[w].n; i++) {
			z = t->in[w].v[i];
			if (t->mark[z] != t->gen && t->ord[z] > lb) {
				t->mark[z] = t->gen;
				t->stack[sp++] = z;
			}
		}
	}
}

/* Place the vertices found backward before those found forward */
static void ordlock_topo_reorder(struct ordlock_topo *t)
{
	u32 n = 0, i;

	sort(t->fwd, t->nfwd, sizeof(u64), ordlock_topo_cmp_u64, NULL);
	sort(t->bwd, t->nbwd, sizeof(u64), ordlock_topo_cmp_u64, NULL);
	for (i = 0; i < t->nbwd; i++)
		t->pos[n++] = t->bwd[i] >> 32;
	for (i = 0; i < t->nfwd; i++)
		t->pos[n++] = t->fwd[i] >> 32;
	sort(t->pos, n, sizeof(u32), ordlock_topo_cmp_u32, NULL);
	n = 0;
	for (i = 0; i < t->nbwd; i++)
		t->ord[(u32)t->bwd[i]] = t->pos[n++];
	for (i = 0; i < t->nfwd; i++)
		t->ord[(u32)t->fwd[i]] = t->pos[n++];
}

/* The path @y .. @x that the forward search found, into @path */
static u32 ordlock_topo_path(struct ordlock_topo *t, u32 x, u32 y, u32 *path,
			     u32 max)
{
	u32 len = 1, w, i;

	for (w = x; w != y; w = t->parent[w])
		len++;
	w = x;
	for (i = len; i-- > 0; w = t->parent[w])
		if (i < max)
			path[i] = w;
	return len;
}

/**
 * ordlock_topo_insert() - insert the edge @x -> @y, unless it closes a cycle
 * @t: the graph
 * @x: the source, a vertex of @t
 * @y: the target, a vertex of @t
 * @path: receives, when the edge would close a cycle, the vertices of the
 *	path from @y to @x that exists already (its first @max ones)
 * @max: room in @path
 * @len: receives the length of that path (1 when @x == @y)
 *
 * An edge that is there already is not inserted twice.
 *
 * Return: 0 when inserted (or there), 1 when refused as a cycle, -ENOMEM
 * (nothing changed).
 */
int ordlock_topo_insert(struct ordlock_topo *t, u32 x, u32 y, u32 *path,
			u32 max, u32 *len)
{
	if (x == y) {
		if (max)
			path[0] = x;
		*len = 1;
		return 1;
	}
	if (ordlock_topo_has_edge(t, x, y))
		return 0;
	if (t->ord[x] > t->ord[y]) {
		ordlock_topo_new_search(t);
		if (ordlock_topo_forward(t, x, y)) {
			*len = ordlock_topo_path(t, x, y, path, max);
			return 1;
		}
		ordlock_topo_backward(t, x, y);
	}
	if (ordlock_topo_adj_add(&t->out[x], y))
		return -ENOMEM;
	if (ordlock_topo_adj_add(&t->in[y], x)) {
		t->out[x].n--;
		return -ENOMEM;
	}
	/* The order changes only once the edge is in for sure */
	if (t->ord[x] > t->ord[y])
		ordlock_topo_reorder(t);
	t->nedges++;
	return 0;
}
