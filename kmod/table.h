/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The resource table: every key that is held or waited for, in a hash
 * table of buckets with one spinlock each.
 */
#ifndef _ORDLOCK_TABLE_H
#define _ORDLOCK_TABLE_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct ordlock_domain;

/**
 * struct ordlock_bucket - a hash chain and its lock
 * @lock: protects @chain and the whole state of every resource on it:
 *	counts, holders (struct ordlock_hold.res_node) and waiters (struct
 *	ordlock_waiter.node, and their status). Nests inside owner->lock; a
 *	thread never holds two bucket locks at once. Never taken from
 *	interrupt context.
 * @chain: the resources whose key hashes here
 */
struct ordlock_bucket {
	/* the chain and its resources: see above */
	spinlock_t lock;
	struct hlist_head chain;
};

/**
 * struct ordlock_resource - one key of one domain that has holders or waiters
 * @node: entry in @bucket's chain
 * @bucket: the bucket whose lock protects everything below
 * @domain: the domain of the key (compared by address)
 * @id: key id
 * @rank: key rank
 * @nshared: number of shared holders
 * @nexcl: number of exclusive holders (0 or 1)
 * @holders: the holds granted on this resource, oldest first
 * @waiters: the queue of waiters, FIFO
 *
 * A resource exists exactly while it has a holder or a waiter: the last
 * one to leave frees it, under the bucket lock.
 */
struct ordlock_resource {
	struct hlist_node node;
	struct ordlock_bucket *bucket;
	const struct ordlock_domain *domain;
	u64 id;
	u32 rank;
	u32 nshared;
	u32 nexcl;
	struct list_head holders;
	struct list_head waiters;
};

extern atomic_t ordlock_nresources;

int ordlock_table_init(void);
void ordlock_table_exit(void);
struct ordlock_bucket *ordlock_table_bucket(const struct ordlock_domain *domain,
					    u32 rank, u64 id);
struct ordlock_resource *ordlock_table_lookup(struct ordlock_bucket *bucket,
					      const struct ordlock_domain *domain,
					      u32 rank, u64 id);
unsigned int ordlock_table_size(void);
struct ordlock_bucket *ordlock_table_bucket_at(unsigned int i);
struct ordlock_resource *ordlock_resource_alloc(void);
void ordlock_resource_free(struct ordlock_resource *res);
void ordlock_resource_insert(struct ordlock_bucket *bucket,
			     struct ordlock_resource *res,
			     const struct ordlock_domain *domain, u32 rank, u64 id);
bool ordlock_resource_put_unused(struct ordlock_resource *res);

#endif /* _ORDLOCK_TABLE_H */
