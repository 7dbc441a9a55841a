/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The resource table: every key that is held or waited for (resource.h),
 * in a hash table of buckets with one spinlock each. A resource nobody
 * uses any more stays on its chain for a while, idle, so that taking the
 * same key again allocates nothing; a reaper frees what stays idle.
 */
#ifndef _ORDLOCK_TABLE_H
#define _ORDLOCK_TABLE_H

#include <linux/list.h>
#include <linux/percpu_counter.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct ordlock_domain;
struct ordlock_resource;

/**
 * struct ordlock_bucket - a hash chain and its lock
 * @lock: protects @chain, @nidle and the whole state of every resource on
 *	the chain: counts, holders (struct ordlock_hold.res_node) and waiters
 *	(struct ordlock_waiter.node, and their status). Nests inside
 *	owner->lock and ordlock_graph_lock; a thread never holds two bucket
 *	locks at once. Never taken from interrupt context. See the lock order
 *	in main.c.
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

/* At most this many idle resources per bucket; the oldest goes first */
#define ORDLOCK_BUCKET_IDLE_MAX	4

extern struct ordlock_bucket *ordlock_buckets;
/*
 * The reaper of idle resources; extern only for the inline test of
 * ordlock_resource_put_unused() (resource.h) whether it is armed
 */
extern struct delayed_work ordlock_reap_work;
/* Resources in use (not idle) in all domains; per CPU, no lock */
extern struct percpu_counter ordlock_nresources;

/**
 * ordlock_table_uncharge() - count @n resources fewer in use
 * @n: resources that turned idle (ordlock_resource_put_unused(), in
 *	resource.h), or the
 *	unused part of a reservation (ordlock_table_reserve())
 */
static inline void ordlock_table_uncharge(unsigned int n)
{
	percpu_counter_sub(&ordlock_nresources, n);
}

int ordlock_table_init(void);
void ordlock_table_exit(void);
s64 ordlock_table_nresources(void);
void ordlock_table_pin(s64 n);
s64 ordlock_table_npinned(void);
struct ordlock_bucket *ordlock_table_bucket(const struct ordlock_domain *domain,
					    u32 rank, u64 id);
unsigned int ordlock_table_size(void);
struct ordlock_bucket *ordlock_table_bucket_at(unsigned int i);
unsigned int ordlock_table_next_used(unsigned int i);
struct ordlock_resource *ordlock_table_find(struct ordlock_bucket *bucket,
					    struct ordlock_domain *domain,
					    u32 rank, u64 id);
int ordlock_table_revive(struct ordlock_bucket *bucket,
			 struct ordlock_domain *domain,
			 struct ordlock_resource *res);
struct ordlock_resource *ordlock_table_get(struct ordlock_bucket *bucket,
					   struct ordlock_domain *domain,
					   u32 rank, u64 id,
					   struct ordlock_resource **spare,
					   unsigned int *credit);
bool ordlock_table_reserve(unsigned int n);
struct ordlock_resource *ordlock_resource_alloc(unsigned int *credit);
void ordlock_resource_free(struct ordlock_resource *res);
void ordlock_table_trim(struct ordlock_bucket *bucket);
void ordlock_table_arm_reaper(void);

#endif /* _ORDLOCK_TABLE_H */
