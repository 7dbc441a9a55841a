/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The resource table: every key that is held or waited for, in a hash
 * table of buckets with one spinlock each. A resource nobody uses any more
 * stays on its chain for a while, idle, so that taking the same key again
 * allocates nothing; a reaper frees what stays idle.
 */
#ifndef _ORDLOCK_TABLE_H
#define _ORDLOCK_TABLE_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct ordlock_domain;

/**
 * struct ordlock_bucket - a hash chain and its lock
 * @lock: protects @chain, @nidle and the whole state of every resource on
 *	the chain: counts, holders (struct ordlock_hold.res_node) and waiters
 *	(struct ordlock_waiter.node, and their status). Nests inside
 *	owner->lock; a thread never holds two bucket locks at once. Never
 *	taken from interrupt context.
 * @nidle: how many resources on @chain are idle
 * @chain: the resources whose key hashes here, newest first, linked by
 *	their @next. Written with WRITE_ONCE() so that walks over the table
 *	may peek at it without the lock to skip empty buckets.
 */
struct ordlock_bucket {
	/* the chain and its resources: see above */
	spinlock_t lock;
	u32 nidle;
	struct ordlock_resource *chain;
};

/**
 * struct ordlock_resource - one key of one domain
 * @next: the next resource on the bucket's chain
 * @id: key id
 * @rank: key rank
 * @domain_id: the id of the key's domain (domain ids are never reused
 *	while the module is loaded, so an idle resource never matches a key
 *	of another domain)
 * @bucket: index of the bucket whose lock protects everything here
 * @nshared: number of shared holders
 * @nexcl: number of exclusive holders (0 or 1)
 * @idle: nobody holds or waits: the resource only waits for reuse
 * @aged: idle through one pass of the reaper; the next pass frees it
 * @holders: the holds granted on this resource, oldest first
 * @waiters: the queue of waiters, FIFO
 *
 * 64 bytes: with a struct ordlock_hold, a held key costs 128 bytes.
 */
struct ordlock_resource {
	struct ordlock_resource *next;
	u64 id;
	u32 rank;
	u32 domain_id;
	u32 bucket;
	u32 nshared : 29;
	u32 nexcl : 1;
	u32 idle : 1;
	u32 aged : 1;
	struct list_head holders;
	struct list_head waiters;
};

extern struct ordlock_bucket *ordlock_buckets;

/* ordlock_res_bucket() - the bucket whose lock protects @res */
static inline struct ordlock_bucket *
ordlock_res_bucket(const struct ordlock_resource *res)
{
	return &ordlock_buckets[res->bucket];
}

int ordlock_table_init(void);
void ordlock_table_exit(void);
s64 ordlock_table_nresources(void);
struct ordlock_bucket *ordlock_table_bucket(const struct ordlock_domain *domain,
					    u32 rank, u64 id);
unsigned int ordlock_table_size(void);
struct ordlock_bucket *ordlock_table_bucket_at(unsigned int i);
unsigned int ordlock_table_next_used(unsigned int i);
struct ordlock_resource *ordlock_table_get(struct ordlock_bucket *bucket,
					   struct ordlock_domain *domain,
					   u32 rank, u64 id,
					   struct ordlock_resource **spare);
struct ordlock_resource *ordlock_resource_alloc(void);
void ordlock_resource_free(struct ordlock_resource *res);
bool ordlock_resource_put_unused(struct ordlock_resource *res);

#endif /* _ORDLOCK_TABLE_H */
