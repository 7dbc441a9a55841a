/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordlockctl: every elementary cycle of a directed graph (Johnson's
 * algorithm), and the wait-for graph of owners it runs on.
 *
 * Johnson, "Finding all the elementary circuits of a directed graph",
 * SIAM J. Comput. 4(1), 1975: O((V + E)(C + 1)) time for C cycles, O(V + E)
 * memory. Each strongly connected component is searched on its own: the
 * cycles through its least vertex s, then the components of what is left
 * without s. Everything is iterative (no recursion, whatever the depth of
 * the graph), and the work is counted so that a caller can bound it: a
 * graph can have exponentially many cycles.
 */
#ifndef ORDLOCKCTL_CYCLEFIND_H
#define ORDLOCKCTL_CYCLEFIND_H

#include <stddef.h>
#include <stdint.h>

#include "parse.h"

/* A graph in compressed sparse rows: the edges of v are off[v]..off[v+1]-1 */
struct cf_graph {
	unsigned int nv;
	unsigned int ne;
	unsigned int *off;	/* nv + 1 */
	unsigned int *dst;	/* ne */
};

/*
 * cf_graph_init() - build @g from @ne edges @src[i] -> @dst[i] between
 * vertices 0..@nv-1. Edges keep their input order within a vertex. If @map
 * is not NULL it receives, for every adjacency index, the input index of
 * the edge (ne entries). 0, -EINVAL (a vertex out of range) or -ENOMEM.
 */
int cf_graph_init(struct cf_graph *g, unsigned int nv, const unsigned int *src,
		  const unsigned int *dst, unsigned int ne, unsigned int *map);
void cf_graph_free(struct cf_graph *g);

/*
 * cf_fn - called for every cycle found: @v[0..@len-1] are its vertices,
 * @e[i] the adjacency index of the edge from @v[i] to @v[(i + 1) % @len].
 * Each cycle starts at its least vertex. Return non-zero to stop the search.
 */
typedef int (*cf_fn)(void *arg, const unsigned int *v, const unsigned int *e,
		     unsigned int len);

/**
 * struct cf_result - what a search did
 * @ncycles: cycles found (all of them when @complete)
 * @work: edges looked at, the measure of @max_work
 * @complete: the search ended by itself (not by @max_work or @fn)
 */
struct cf_result {
	uint64_t ncycles;
	uint64_t work;
	int complete;
};

/*
 * cf_find_cycles() - call @fn for every elementary cycle of @g (self-loops
 * are cycles of length 1), or until @max_work edges were looked at (0: no
 * limit). Fills @res. 0 or -ENOMEM.
 */
int cf_find_cycles(const struct cf_graph *g, uint64_t max_work, cf_fn fn,
		   void *arg, struct cf_result *res);

/*
 * cf_components() - the strongly connected components of @g: @comp[v]
 * receives the component of v (nv entries). An edge u -> v with u != v is
 * on some cycle exactly when comp[u] == comp[v]. 0 or -ENOMEM.
 */
int cf_components(const struct cf_graph *g, unsigned int *comp);

/* The default bound of cf_find_cycles() for ordlockctl: well under a second */
#define CF_DEFAULT_WORK		(50ULL * 1000 * 1000)

/**
 * struct olc_wfg - the wait-for graph of owners
 * @nv: owners that wait or block
 * @ids: their ids, ascending (vertex i is owner @ids[i])
 * @who: for each vertex, an edge that names it (for its pid and command)
 * @g: the graph; parallel edges (a hard and a soft one between the same
 *	two owners) are merged, the hard one kept
 * @edge: for each adjacency index of @g, the index of its olc_edge
 */
struct olc_wfg {
	unsigned int nv;
	uint64_t *ids;
	const struct olc_who **who;
	const char **domain;
	struct cf_graph g;
	unsigned int *edge;
};

/*
 * olc_wfg_build() - the graph of the edges of @domain (NULL: all). 0 or
 * -ENOMEM. Self-loops (which the parser rejects) are dropped.
 */
int olc_wfg_build(struct olc_wfg *w, const struct olc_edges *edges,
		  const char *domain);
void olc_wfg_free(struct olc_wfg *w);
/* The vertex of owner @id, or -1 */
int olc_wfg_vertex(const struct olc_wfg *w, uint64_t id);

#endif /* ORDLOCKCTL_CYCLEFIND_H */
