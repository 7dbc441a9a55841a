/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Resources: one key of one domain, its holders in their modes, and its
 * FIFO queue of waiters. Everything here is under the lock of the
 * resource's bucket (table.h).
 */
#ifndef _ORDLOCK_RESOURCE_H
#define _ORDLOCK_RESOURCE_H

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/types.h>

#include "table.h"

struct ordlock_domain;
struct ordlock_hold;
struct ordlock_owner;
struct task_struct;

/**
 * struct ordlock_resource - one key of one domain
 * @next: the next resource on the bucket's chain
 * @id: key id
 * @rank: key rank
 * @domain_id: the id of the key's domain (domain ids are never reused
 *	while the module is loaded, so an idle resource never matches a key
 *	of another domain)
 * @bucket: index of the bucket whose lock protects everything here (see
 *	the lock order in main.c)
 * @nshared: number of shared holders
 * @fast: the key is pinned in its domain's fast path (fastpath.h): its
 *	word is the truth about who holds it, and the resource never turns
 *	idle; set by the pin, cleared when the domain's fast state is freed
 *	(fast_dev.c), under the bucket lock
 * @nexcl: number of exclusive holders (0 or 1)
 * @idle: nobody holds or waits: the resource only waits for reuse
 * @aged: idle through one pass of the reaper; the next pass frees it
 * @holders: the holds granted on this resource (struct
 *	ordlock_hold.res_node), oldest first
 * @waiters: the queue of waiters (struct ordlock_waiter.node), FIFO
 *
 * 64 bytes: with a struct ordlock_hold (64 too), a held key costs 128 bytes.
 */
struct ordlock_resource {
	struct ordlock_resource *next;
	u64 id;
	u32 rank;
	u32 domain_id;
	u32 bucket;
	u32 nshared : 28;
	u32 fast : 1;
	u32 nexcl : 1;
	u32 idle : 1;
	u32 aged : 1;
	struct list_head holders;
	struct list_head waiters;
};

/**
 * struct ordlock_waiter - an owner queued on a resource
 * @node: entry in res->waiters; under the bucket lock
 * @task: the task to wake when the key is granted, or NULL
 * @notify: called instead, under the bucket lock, when @task is NULL; it
 *	must not sleep (it queues work)
 * @hold: the hold to grant (acquire), or the hold to convert; its res and
 *	owner say who waits for what
 * @mode: the mode asked for
 * @convert: a conversion of @hold, queued ahead of the acquires
 * @granted: set, under the bucket lock, by whoever grants the request:
 *	the granter has already put @hold on the resource's holders, or
 *	changed its mode
 * @woken: set, under the bucket lock, by a release that left the key free
 *	for this waiter, the first of the queue, instead of granting it
 *	(ordlock_res_release_waiters()); the waiter clears it and takes the
 *	key itself, unless a request that came meanwhile took it first
 * @holds_fast: its owner held keys by the fast path when it queued (it
 *	is busy while it waits: its own CAS cannot add any); such a waiter is
 *	never passed, as one that holds keys granted by the kernel
 * @spinning: the waiter's task spins on its CPU for the key (wait.c's
 *	ordlock_spin()); set and cleared by that task under the bucket lock.
 *	A release that finds the first waiter asleep hands the key to a
 *	spinning waiter behind it in place: it runs, and takes it without a
 *	wake-up (ordlock_res_release_waiters())
 * @passed: how many times it was passed: woken for the key and found it
 *	taken by a request that came meanwhile, or left asleep while a
 *	spinning waiter behind it was handed the key; under the bucket lock
 * @since: when the wait started
 * @seq: its place in the queue, under the bucket lock: of two waiters
 *	queued on one resource, the one ahead has the smaller @seq (a
 *	conversion, at the head, has 0); set by ordlock_res_queue()
 * @excl_ahead: the nearest exclusive waiter ahead of it in the queue, or
 *	NULL when there is none but maybe a conversion that came to the head
 *	after it; under the bucket lock, kept true as waiters leave
 *	(ordlock_res_unqueue()): never a waiter that left. The wait-for
 *	graph's walk follows it instead of the whole queue ahead (graph.c)
 */
struct ordlock_waiter {
	struct list_head node;
	struct task_struct *task;
	void (*notify)(struct ordlock_waiter *w);
	struct ordlock_hold *hold;
	u32 mode;
	bool convert;
	bool granted;
	bool woken;
	bool holds_fast;
	bool spinning;
	u8 passed;
	ktime_t since;
	u64 seq;
	struct ordlock_waiter *excl_ahead;
};

/* ordlock_res_bucket() - the bucket whose lock protects @res */
static inline struct ordlock_bucket *
ordlock_res_bucket(const struct ordlock_resource *res)
{
	return &ordlock_buckets[res->bucket];
}

bool ordlock_res_claim(struct ordlock_resource *res);
struct task_struct *ordlock_res_running_holder(struct ordlock_resource *res);

/* Would a new holder in @mode fit the holders of @res? */
static inline bool ordlock_res_compatible(struct ordlock_resource *res,
					  u32 mode)
{
	bool ok;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (mode == ORDLOCK_MODE_EXCLUSIVE)
		ok = !res->nshared && !res->nexcl;
	else
		ok = !res->nexcl;
	/* A fast key's word is taken for the kernel's holders first */
	if (ok && unlikely(res->fast))
		ok = ordlock_res_claim(res);
	return ok;
}

static inline void ordlock_res_count(struct ordlock_resource *res, u32 mode,
				     int delta)
{
	if (mode == ORDLOCK_MODE_EXCLUSIVE)
		res->nexcl += delta;
	else
		res->nshared += delta;
}

/*
 * The holders list: linked and unlinked without CONFIG_DEBUG_LIST's
 * checks (two out-of-line calls per key and release otherwise). Its
 * invariants are simple: a hold is on one resource's holders at most,
 * from its grant to its release, always under the bucket lock, and nothing
 * reads the list without that lock. An unlinked node is poisoned as by
 * list_del(), so that a stale use still faults (resource.c).
 */
static inline void ordlock_holders_link(struct ordlock_resource *res,
					struct list_head *node)
{
	struct list_head *head = &res->holders, *prev = head->prev;

	node->next = head;
	node->prev = prev;
	WRITE_ONCE(prev->next, node);
	head->prev = node;
}

/**
 * ordlock_resource_put_unused() - retire @res if nobody holds or waits for it
 * @bucket: its bucket, locked
 * @res: a resource in use
 *
 * The resource turns idle and stays on its chain; the bucket's oldest idle
 * resource is freed if the bucket has too many (table.c). Inline: every
 * release of a key that nobody else holds or waits for comes here.
 *
 * Return: true when @res turned idle (the caller drops it from its
 * domain's gauge, and from the resources in use: ordlock_table_uncharge(),
 * at once or for many resources together).
 */
static inline bool ordlock_resource_put_unused(struct ordlock_bucket *bucket,
					       struct ordlock_resource *res)
{
	lockdep_assert_held(&bucket->lock);
	if (!list_empty(&res->holders) || !list_empty(&res->waiters))
		return false;
	/*
	 * Pinned: its word may still be held by the fast path (every caller
	 * put the word right first: ordlock_res_settle())
	 */
	if (unlikely(res->fast))
		return false;
	res->idle = 1;
	if (++bucket->nidle > ORDLOCK_BUCKET_IDLE_MAX)
		ordlock_table_trim(bucket);
	if (!delayed_work_pending(&ordlock_reap_work))
		ordlock_table_arm_reaper();
	return true;
}

bool ordlock_res_fits(struct ordlock_resource *res,
		      const struct ordlock_waiter *w);
/*
 * ordlock_res_add_holder() - grant @hold (its res_node), in @mode, its
 * hold->mode, on @res; inline: a grant per key of every request
 */
static inline void ordlock_res_add_holder(struct ordlock_resource *res,
					  struct list_head *node, u32 mode)
{
	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	ordlock_holders_link(res, node);
	ordlock_res_count(res, mode, 1);
}

void ordlock_res_set_mode(struct ordlock_resource *res,
			  struct ordlock_hold *hold, u32 mode);
void ordlock_res_queue(struct ordlock_resource *res, struct ordlock_waiter *w);
void ordlock_res_dequeue(struct ordlock_resource *res, struct ordlock_waiter *w);
struct ordlock_waiter *ordlock_res_converting(struct ordlock_resource *res);
void ordlock_res_grant_waiters(struct ordlock_resource *res);
void ordlock_res_take_woken(struct ordlock_resource *res,
			    struct ordlock_waiter *w);
void ordlock_res_release_waiters(struct ordlock_resource *res);
bool ordlock_res_passable(struct ordlock_resource *res);
bool ordlock_res_pass_first(struct ordlock_resource *res);

/*
 * ordlock_res_open() - may a new request take @res now, if its holders
 * allow? When nobody waits; or when the first waiter was woken for a free
 * key and has not taken it yet, and is young enough to be passed
 * (ordlock_res_passable(), resource.c: the fairness rule)
 */
static inline bool ordlock_res_open(struct ordlock_resource *res)
{
	return list_empty(&res->waiters) || ordlock_res_passable(res);
}

unsigned int __ordlock_res_drop_hold(struct ordlock_hold *hold);
void ordlock_res_drop_hold(struct ordlock_hold *hold);
void ordlock_res_blame(struct ordlock_resource *res,
		       struct ordlock_owner *owner, u32 mode,
		       struct ordlock_waiter *self);
void ordlock_res_settle(struct ordlock_resource *res);

/**
 * struct ordlock_word_holder - a member that holds a pinned key by the
 *	fast path, as the key's word names it (ordlock_res_word_holder())
 * @domain: the key's domain
 * @owner: the owner of the word's index in the domain's owner table; NULL
 *	when the index names no owner (shown as unknown)
 * @index: the word's owner index
 * @gen: the word's generation
 */
struct ordlock_word_holder {
	struct ordlock_domain *domain;
	struct ordlock_owner *owner;
	u32 index;
	u32 gen;
};

typedef bool (*ordlock_word_holder_fn)(void *arg,
				       const struct ordlock_word_holder *h);
bool ordlock_res_word_holder(struct ordlock_resource *res,
			     ordlock_word_holder_fn fn, void *arg);

#endif /* _ORDLOCK_RESOURCE_H */
