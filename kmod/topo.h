/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An incremental topological order of a directed acyclic graph (the
 * dynamic order of Pearce and Kelly): inserting an edge that agrees with
 * the order costs nothing; one that does not reorders only the vertices
 * between its two ends; one that would close a cycle is refused and the
 * cycle is returned.
 *
 * This file has no locks and no state of its own: the caller serialises
 * every call on one graph. It is pure logic, built into the module and
 * into the host-side unit tests (tests/unit/t_topo.c).
 */
#ifndef _ORDLOCK_TOPO_H
#define _ORDLOCK_TOPO_H

#include <linux/types.h>

/**
 * struct ordlock_topo_adj - the edges of one vertex in one direction
 * @v: the other ends
 * @n: number of entries of @v
 * @cap: room in @v
 */
struct ordlock_topo_adj {
	u32 *v;
	u32 n;
	u32 cap;
};

/**
 * struct ordlock_topo - a graph and a topological order of it
 * @nv: number of vertices, numbered 0 to @nv - 1
 * @cap: room for vertices in every array below
 * @nedges: number of edges
 * @ord: the position of each vertex in the order: an edge u -> v always
 *	has @ord[u] < @ord[v]; the positions are distinct
 * @out: the edges leaving each vertex
 * @in: the edges entering each vertex
 * @mark: visit marks of the searches (a vertex is visited when its mark
 *	is @gen)
 * @parent: the vertex a forward search came from (for the cycle path)
 * @gen: the generation of the current search
 * @stack: scratch: the search stack
 * @fwd: scratch: the vertices the forward search reached
 * @bwd: scratch: the vertices the backward search reached
 * @pos: scratch: their positions, sorted
 * @nfwd: entries of @fwd
 * @nbwd: entries of @bwd
 */
struct ordlock_topo {
	u32 nv;
	u32 cap;
	u32 nedges;
	u32 *ord;
	struct ordlock_topo_adj *out;
	struct ordlock_topo_adj *in;
	u32 *mark;
	u32 *parent;
	u32 gen;
	u32 *stack;
	u64 *fwd;
	u64 *bwd;
	u32 *pos;
	u32 nfwd;
	u32 nbwd;
};

void ordlock_topo_init(struct ordlock_topo *t);
void ordlock_topo_destroy(struct ordlock_topo *t);
int ordlock_topo_add_vertices(struct ordlock_topo *t, u32 n, u32 *first);
int ordlock_topo_insert(struct ordlock_topo *t, u32 x, u32 y, u32 *path,
			u32 max, u32 *len);
bool ordlock_topo_has_edge(const struct ordlock_topo *t, u32 x, u32 y);

#endif /* _ORDLOCK_TOPO_H */
