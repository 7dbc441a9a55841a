/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The learned order's own structures, shared by the three files that keep
 * it: order.c learns (edges, ranks, the edge cache), order_report.c
 * reports the potential deadlocks a new edge shows, order_view.c shows
 * what was learned (GET_ORDER, debugfs "order"). order.c calls the
 * report, the views call order.c, nothing calls back. Nothing else
 * includes this header: the rest of the module sees the order through
 * order.h.
 */
#ifndef _ORDLOCK_ORDER_INTERNAL_H
#define _ORDLOCK_ORDER_INTERNAL_H

#include <linux/atomic.h>
#include <linux/hash.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

#include "order.h"
#include "topo.h"

struct ordlock_owner;
struct ordlock_user;

#define ORDLOCK_ORDER_HASH_BITS	8
/* Edges kept in a potential deadlock (a longer cycle keeps its last ones) */
#define ORDLOCK_ORDER_POT_EDGES	16
/* Potential deadlocks kept per domain; later ones count as dropped */
#define ORDLOCK_ORDER_POTS_MAX	1024
/* Vertices of a cycle path looked at */
#define ORDLOCK_ORDER_PATH_MAX	(4 * ORDLOCK_ORDER_POT_EDGES + 2)

/* struct ordlock_order_slot.what: kind | held mode << 2 | taken mode << 4 */
#define ORDLOCK_WHAT(kind, hm, tm)	((kind) | (hm) << 2 | (tm) << 4)
#define ORDLOCK_WHAT_KIND(w)		((w) & 3)
#define ORDLOCK_WHAT_HELD(w)		(((w) >> 2) & 3)
#define ORDLOCK_WHAT_TAKEN(w)		(((w) >> 4) & 3)

/**
 * struct ordlock_order_edge_k - an edge of a learned order
 * @hnode: entry in order->edges; under order->lock
 * @node: entry in order->edge_list, in the order learned
 * @rcu: frees it after the readers of owners' caches
 * @from: the rank held
 * @to: the rank taken
 * @what: kind and modes, ORDLOCK_WHAT()
 * @flags: ORDLOCK_ORDER_EDGE_*; under order->lock
 * @index: position in order->edge_list
 * @count: grants that made it; atomic
 * @user: the user of the owner whose grant taught it (@first): one of
 *	its ORDLOCK_USER_EDGES and a reference, given back when the order
 *	forgets the edge (ordlock_order_clear()); constant
 * @first: the first observation; constant
 */
struct ordlock_order_edge_k {
	struct hlist_node hnode;
	struct list_head node;
	struct rcu_head rcu;
	u32 from;
	u32 to;
	u32 what;
	u32 flags;
	u32 index;
	atomic64_t count;
	struct ordlock_user *user;
	struct ordlock_order_edge first;
};

/**
 * struct ordlock_order_pot - a potential deadlock that was reported
 * @node: entry in order->pots
 * @sig: the cycle of ranks it is, as a hash (reported once per @sig)
 * @kind: an enum ordlock_potential_kind
 * @n: number of entries of @edges
 * @edges: its edges, the one that closed it last
 */
struct ordlock_order_pot {
	struct list_head node;
	u64 sig;
	u32 kind;
	u32 n;
	struct ordlock_order_edge_k *edges[ORDLOCK_ORDER_POT_EDGES];
};

/**
 * struct ordlock_order - the learned order of one domain
 * @lock: protects everything below but @id's lockless readers and the
 *	edges' counts. A mutex: it allocates, and reports under it. Taken
 *	under owner->lock by a grant, alone by debugfs, GET_ORDER and a
 *	reset; see the lock order in main.c
 * @id: unique among all orders and resets, never 0: what owners' caches
 *	are valid for; written under @lock, read with READ_ONCE()
 * @edges: hash of the edges
 * @ranks: hash of the ranks
 * @edge_list: the edges in the order learned
 * @pots: the potential deadlocks kept, in the order reported
 * @topo: the order of the rank vertices
 * @slot_rank: the rank of each group of four vertices
 * @nslots: entries of @slot_rank in use
 * @slot_cap: room in @slot_rank
 * @nedges: edges
 * @nranks: ranks
 * @npots: entries of @pots
 * @npotential: potential deadlocks reported since creation or reset
 * @dropped: observations and potential deadlocks not kept (full, or the
 *	user that made the observation had order_max_edges_per_user)
 * @path: scratch for a cycle's path
 */
struct ordlock_order {
	/* everything of the learned order: see above and main.c */
	struct mutex lock;
	u64 id;
	struct hlist_head edges[1 << ORDLOCK_ORDER_HASH_BITS];
	struct hlist_head ranks[1 << ORDLOCK_ORDER_HASH_BITS];
	struct list_head edge_list;
	struct list_head pots;
	struct ordlock_topo topo;
	u32 *slot_rank;
	u32 nslots;
	u32 slot_cap;
	u32 nedges;
	u32 nranks;
	u32 npots;
	u64 npotential;
	u64 dropped;
	u32 path[ORDLOCK_ORDER_PATH_MAX];
};

static inline u32 ordlock_order_hash(u32 from, u32 to, u32 what)
{
	return hash_64(((u64)from << 32 | to) ^ ((u64)what << 58),
		       ORDLOCK_ORDER_HASH_BITS);
}

/* The edge of ranks @from, @to, kind and modes @what; under order->lock */
static inline struct ordlock_order_edge_k *
ordlock_order_find(struct ordlock_order *order, u32 from, u32 to, u32 what)
{
	struct ordlock_order_edge_k *e;

	hlist_for_each_entry(e, &order->edges[ordlock_order_hash(from, to, what)],
			     hnode)
		if (e->from == from && e->to == to && e->what == what)
			return e;
	return NULL;
}

static inline const char *ordlock_order_mode(u32 mode)
{
	return mode == ORDLOCK_MODE_EXCLUSIVE ? "exclusive" : "shared";
}

/* order.c */
u32 ordlock_order_max_edges(void);
struct ordlock_order *ordlock_order_of(struct ordlock_domain *domain);

/* order_report.c: a new edge's potential deadlocks, under order->lock */
void ordlock_order_cycle(struct ordlock_order *order, struct ordlock_owner *owner,
			 struct ordlock_order_edge_k *e, u32 len);
void ordlock_order_ids(struct ordlock_order *order, struct ordlock_owner *owner,
		       struct ordlock_order_edge_k *e);

#endif /* _ORDLOCK_ORDER_INTERNAL_H */
