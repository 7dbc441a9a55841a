/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The learned lock order: in a domain where any order is allowed (detect,
 * timeout), every grant to an owner that held keys already teaches the
 * domain which ranks are taken after which, and within a rank whether ids
 * go up or down. An edge that closes a cycle is a potential deadlock,
 * reported the first time it is seen, before it ever happens.
 *
 * The lock core calls ordlock_order_grant() once per granted acquire,
 * before the new holds join owner->held. Its lock's place in the module's
 * lock order is stated in main.c.
 */
#ifndef _ORDLOCK_ORDER_H
#define _ORDLOCK_ORDER_H

#include <linux/seq_file.h>
#include <linux/types.h>
#include <linux/ordlock.h>

#include "keys.h"

struct ordlock_domain;
struct ordlock_order;
struct ordlock_order_edge_k;
struct ordlock_owner;

/* Entries of an owner's cache of the edges it knows (a power of 2) */
#define ORDLOCK_ORDER_CACHE	16

/**
 * struct ordlock_order_slot - one edge an owner knows the domain has
 * @edge: the edge, valid while the domain's order has the id cached in
 *	struct ordlock_order_cache (freed after an RCU grace period)
 * @from: its held rank
 * @to: its taken rank
 * @what: kind and modes, see order.c; 0 for an empty slot
 * @pending: grants counted here, not yet added to the edge's count (added
 *	by ORDLOCK_ORDER_BATCH, and when the slot is reused)
 */
struct ordlock_order_slot {
	struct ordlock_order_edge_k *edge;
	u32 from;
	u32 to;
	u32 what;
	u32 pending;
};

/**
 * struct ordlock_order_cache - the edges an owner has seen its domain
 *	learn, so that a grant whose edges are known takes no shared lock;
 *	under owner->lock
 * @id: the id of the learned order the slots belong to (a reset and
 *	another domain have other ids); 0 for none
 * @slot: direct-mapped by edge
 */
struct ordlock_order_cache {
	u64 id;
	struct ordlock_order_slot slot[ORDLOCK_ORDER_CACHE];
};

extern bool ordlock_order_learn_on;

void __ordlock_order_grant(struct ordlock_owner *owner,
			   const struct ordlock_rkey *keys, unsigned int n);

/**
 * ordlock_order_grant() - learn from a grant
 * @owner: the owner, locked, whose owner->held is what it held before
 * @keys: the keys granted, sorted
 * @n: their number
 * @nheld: how many keys the owner held before (owner->nheld)
 *
 * An owner that held nothing teaches nothing and pays a test.
 */
static inline void ordlock_order_grant(struct ordlock_owner *owner,
				       const struct ordlock_rkey *keys,
				       unsigned int n, unsigned int nheld)
{
	if (nheld && READ_ONCE(ordlock_order_learn_on))
		__ordlock_order_grant(owner, keys, n);
}

int ordlock_order_label_check(const char *label);
void ordlock_order_free(struct ordlock_domain *domain);
void ordlock_order_reset(struct ordlock_domain *domain);
int ordlock_order_get(struct ordlock_domain *domain,
		      struct ordlock_order_get *arg, bool admin, u32 uid);
void ordlock_order_show(struct seq_file *m);
void ordlock_order_exit(void);

#endif /* _ORDLOCK_ORDER_H */
