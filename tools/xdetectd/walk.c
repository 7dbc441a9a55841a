// SPDX-License-Identifier: GPL-2.0
/*
 * The walks of ordlock-xdetectd where the kernel does not serve XD_WALK
 * (docs/cluster.md, "What the kernel has built"): the same paths, built
 * here from the node's waits (the XD_EVENTs the daemon keeps, each with
 * its generation), the wait-for graph within the node (GET_GRAPH) and the
 * holders of a key (GET_LOCKS). The dumps are not one snapshot: a path
 * may hold a vertex whose wait ended meanwhile, or an edge of another
 * moment. That is what the confirming round is for: every vertex is
 * checked by its wait's generation (XD_CHECK), and a wait of an owner
 * holds what the owner held when it started (the model's assumption, as
 * XD_CHECK without hold generations has it), so a round decides only on
 * waits that stood, with their edges, when its CONFIRM was sent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>

#include "nl.h"
#include "proto.h"
#include "walk.h"

#define XW_EDGES_MAX	65536

struct xw_edge {
	uint64_t waiter, blocker;
	bool soft;
};

struct xw_snap {
	const char *domain;
	struct xw_edge *e;
	unsigned int n, cap;
	/* GET_LOCKS: the holders of one key */
	const struct xd_vertex *want;
	uint64_t holders[XD_PATHS_MAX];
	unsigned int nholders;
};

static int xw_graph_entry(struct nlattr **tb, void *arg)
{
	struct xw_snap *sn = arg;
	struct olc_nl_entry e;

	if (!tb[ORDLOCK_A_ENTRY] || olc_nl_parse_entry(tb[ORDLOCK_A_ENTRY], &e))
		return 0;
	if (strcmp(e.domain, sn->domain) || !OLC_NL_HAS(&e, ORDLOCK_E_BLOCKER) ||
	    (e.edge != ORDLOCK_EDGE_HARD && e.edge != ORDLOCK_EDGE_SOFT))
		return 0;
	if (sn->n == sn->cap) {
		struct xw_edge *ne;

		if (sn->cap == XW_EDGES_MAX)
			return 0;
		ne = realloc(sn->e, (sn->cap ? sn->cap * 2 : 256) * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		sn->e = ne;
		sn->cap = sn->cap ? sn->cap * 2 : 256;
	}
	sn->e[sn->n].waiter = e.owner_id;
	sn->e[sn->n].blocker = e.blocker.owner_id;
	sn->e[sn->n].soft = e.edge == ORDLOCK_EDGE_SOFT;
	sn->n++;
	return 0;
}

static bool xw_conflict(uint32_t a, uint32_t b)
{
	return a == ORDLOCK_MODE_EXCLUSIVE || b == ORDLOCK_MODE_EXCLUSIVE;
}

/* A holder here of the key @sn->want waits for, granted in the DLM */
static int xw_lock_entry(struct nlattr **tb, void *arg)
{
	struct xw_snap *sn = arg;
	struct olc_nl_entry e;

	if (!tb[ORDLOCK_A_ENTRY] || olc_nl_parse_entry(tb[ORDLOCK_A_ENTRY], &e))
		return 0;
	if (strcmp(e.domain, sn->domain) || e.role != ORDLOCK_ROLE_HOLDER ||
	    OLC_NL_HAS(&e, ORDLOCK_E_CLUSTER_WAIT) || e.key.rank != sn->want->key_rank ||
	    e.key.id != sn->want->key_id || !xw_conflict(e.mode, sn->want->mode) ||
	    sn->nholders == XD_PATHS_MAX)
		return 0;
	sn->holders[sn->nholders++] = e.owner_id;
	return 0;
}

static const struct xd_wait *xw_wait(const struct xd_state *s, const char *domain,
				     uint64_t owner)
{
	unsigned int i;

	for (i = 0; i < s->nwaits; i++)
		if (s->waits[i].v.owner == owner && !strcmp(s->waits[i].domain, domain))
			return &s->waits[i];
	return NULL;
}

/*
 * Extend @p (its last vertex waits on this node) through the graph's
 * edges: a path that reaches a wait in the DLM is kept in @out; one that
 * comes back into itself (a cycle within the node: the kernel's own) or
 * reaches an owner that does not wait is left out.
 */
static void xw_follow(const struct xd_state *s, const struct xw_snap *sn,
		      struct xd_path *p, struct xd_paths *out)
{
	const struct xd_vertex *last = &p->v[p->len - 1];
	unsigned int i, j;

	if (last->flags & XD_V_CLUSTER_WAIT) {
		if (out->n < XD_PATHS_MAX)
			out->p[out->n++] = *p;
		return;
	}
	if (p->len == XD_PATH_MAX)
		return;
	for (i = 0; i < sn->n && out->n < XD_PATHS_MAX; i++) {
		const struct xd_wait *w;

		if (sn->e[i].waiter != last->owner)
			continue;
		w = xw_wait(s, sn->domain, sn->e[i].blocker);
		if (!w)
			continue;
		for (j = 0; j < p->len && p->v[j].owner != w->v.owner; j++)
			;
		if (j < p->len)
			continue;
		p->v[p->len] = w->v;
		p->v[p->len].hold_gen = 0;
		p->v[p->len].flags = (w->v.flags & ~XD_V_SOFT) | (sn->e[i].soft ? XD_V_SOFT : 0);
		p->len++;
		xw_follow(s, sn, p, out);
		p->len--;
	}
}

static int xw_graph(struct olc_nl *nl, struct xw_snap *sn)
{
	return olc_nl_dump(nl, ORDLOCK_CMD_GET_GRAPH, xw_graph_entry, sn);
}

int xw_walk_owner(struct olc_nl *nl, const struct xd_state *s, const char *domain,
		  uint64_t owner, uint64_t gen, struct xd_paths *out)
{
	static struct xd_path p;
	struct xw_snap sn = { .domain = domain };
	const struct xd_wait *w = xw_wait(s, domain, owner);
	int ret;

	out->n = 0;
	if (!w || w->v.gen != gen)
		return -ESTALE;
	p.len = 1;
	p.v[0] = w->v;
	p.v[0].hold_gen = 0;
	if (!(w->v.flags & XD_V_CLUSTER_WAIT)) {
		ret = xw_graph(nl, &sn);
		if (ret < 0) {
			free(sn.e);
			return ret;
		}
	}
	xw_follow(s, &sn, &p, out);
	free(sn.e);
	return 0;
}

int xw_walk_key(struct olc_nl *nl, const struct xd_state *s, const char *domain,
		const struct xd_vertex *waiter, struct xd_paths *out)
{
	static struct xd_path p;
	struct xw_snap sn = { .domain = domain, .want = waiter };
	bool graph = false;
	unsigned int i;
	int ret;

	out->n = 0;
	ret = olc_nl_dump(nl, ORDLOCK_CMD_GET_LOCKS, xw_lock_entry, &sn);
	if (ret < 0)
		return ret;
	for (i = 0; i < sn.nholders && out->n < XD_PATHS_MAX; i++) {
		const struct xd_wait *w = xw_wait(s, domain, sn.holders[i]);

		if (!w)
			continue;	/* a holder that does not wait */
		if (!graph && !(w->v.flags & XD_V_CLUSTER_WAIT)) {
			ret = xw_graph(nl, &sn);
			if (ret < 0)
				break;
			graph = true;
		}
		p.len = 1;
		p.v[0] = w->v;
		p.v[0].hold_gen = 0;
		p.v[0].flags &= ~XD_V_SOFT;
		xw_follow(s, &sn, &p, out);
	}
	free(sn.e);
	return ret < 0 ? ret : 0;
}
