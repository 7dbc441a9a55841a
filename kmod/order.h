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
/* Ranks held that the cache's summary of a known grant covers at most */
#define ORDLOCK_ORDER_SUMMARY	8

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
 * @held_seq: the last number given to a state of owner->held
 * @held_gen: the number of the state owner->held is in: a new one at each
 *	change (a hold added or dropped, a mode converted), but dropping the
 *	hold @tail, appended last with nothing changed since (@held_gen is
 *	still @tail_after), goes back to @tail_before, the state before it
 * @tail: the hold appended last (compared, never followed), or NULL
 * @tail_before: @held_gen before @tail was appended
 * @tail_after: @held_gen after it
 * @sum_gen: the @held_gen under which the summary below was made
 * @sum_to: the summary's rank taken (keys of one rank, held in none)
 * @sum_mode: the strongest mode of those keys
 * @sum_room: grants the summary may still count before one of its slots'
 *	counts is due (then the walk adds it to the edge); 0 for no summary
 * @sum_n: how many pairs (one per rank held) the summary has
 * @sum_pending: where their slots' @pending are (offsets in this
 *	structure), in the order of the held ranks
 * @slot: direct-mapped by edge
 *
 * The summary remembers the last grant of keys of one rank whose edges
 * were all in the cache, so that the next one with the same held set and
 * the same rank and mode counts its pairs without walking owner->held.
 * A slot replaced and a reset (a new @id) clear it.
 */
struct ordlock_order_cache {
	u64 id;
	u64 held_seq;
	u64 held_gen;
	u64 tail_before;
	u64 tail_after;
	const void *tail;
	u64 sum_gen;
	u32 sum_to;
	u32 sum_mode;
	u32 sum_room;
	u32 sum_n;
	u16 sum_pending[ORDLOCK_ORDER_SUMMARY];
	struct ordlock_order_slot slot[ORDLOCK_ORDER_CACHE];
};

/**
 * ordlock_order_held_changed() - note that owner->held changed
 * @c: the owner's &owner->order_cache, under owner->lock
 */
static inline void ordlock_order_held_changed(struct ordlock_order_cache *c)
{
	c->held_gen = ++c->held_seq;
	c->tail = NULL;
}

/**
 * ordlock_order_held_appended() - note a hold added after all held keys
 * @c: the owner's &owner->order_cache, under owner->lock
 * @hold: the hold
 */
static inline void ordlock_order_held_appended(struct ordlock_order_cache *c,
					       const void *hold)
{
	c->tail_before = c->held_gen;
	c->held_gen = ++c->held_seq;
	c->tail_after = c->held_gen;
	c->tail = hold;
}

/**
 * ordlock_order_held_dropped() - note a hold dropped from owner->held
 * @c: the owner's &owner->order_cache, under owner->lock
 * @hold: the hold
 *
 * The hold appended last, with nothing changed since, leaves owner->held
 * as it was before: the state takes its number back (lock A and B, then
 * C and let it go: the next C finds the summary of the first).
 */
static inline void ordlock_order_held_dropped(struct ordlock_order_cache *c,
					      const void *hold)
{
	if (hold == c->tail && c->held_gen == c->tail_after) {
		c->held_gen = c->tail_before;
		c->tail = NULL;
		return;
	}
	ordlock_order_held_changed(c);
}

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

bool ordlock_order_learn_pair(struct ordlock_owner *owner, u32 hrank, u64 hid,
			      u32 trank, u64 tid, u32 tmode);
int ordlock_order_label_check(const char *label);
void ordlock_order_free(struct ordlock_domain *domain);
void ordlock_order_reset(struct ordlock_domain *domain);
void ordlock_order_exit(void);

/* The views (order_view.c): GET_ORDER and debugfs "order" */
int ordlock_order_get(struct ordlock_domain *domain,
		      struct ordlock_order_get *arg, bool admin, u32 uid);
void ordlock_order_show(struct seq_file *m);

#endif /* _ORDLOCK_ORDER_H */
