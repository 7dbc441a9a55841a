// SPDX-License-Identifier: GPL-2.0
/*
 * The resource table.
 *
 * The table has a fixed number of buckets (hash_bits). Keys are hashed with
 * hsiphash (SipHash-1-3 on 64-bit machines: the kernel's keyed hash for
 * hash tables, whose output is never shown) under a secret key of their
 * domain, chosen at random when the domain is made, so that user space
 * cannot aim many keys at one chain. A key of its own per domain keeps
 * the domain out of the hashed words: (id, rank) is three of them, one
 * round of SipHash fewer than four. A lookup
 * walks one chain under its bucket lock: there is no global lock, and the
 * cost does not depend on other buckets.
 *
 * When the last holder or waiter leaves a resource, the resource stays on
 * its chain, idle: the next request for the key takes it back without
 * allocating, so a key taken and released over and over costs no
 * allocation. A bucket keeps at most ORDLOCK_BUCKET_IDLE_MAX idle
 * resources, and a reaper, armed while any resource may be idle, frees
 * those that stayed idle through two of its passes (one to two seconds).
 * Idle resources are not in use: they count neither against max_resources
 * nor in any gauge, and no view shows them.
 */
#include <linux/mm.h>
#include <linux/percpu_counter.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "domain.h"
#include "params.h"
#include "resource.h"
#include "table.h"

#define ORDLOCK_REAP_PERIOD	HZ

struct ordlock_bucket *ordlock_buckets;
static unsigned int ordlock_bucket_mask;
static struct kmem_cache *ordlock_resource_cache;
struct percpu_counter ordlock_nresources;
/* Of those, the keys the fast path pins (kept in use until their domain goes) */
static atomic64_t ordlock_npinned = ATOMIC64_INIT(0);

static void ordlock_table_reap(struct work_struct *work);
DECLARE_DELAYED_WORK(ordlock_reap_work, ordlock_table_reap);

int ordlock_table_init(void)
{
	unsigned int bits = clamp(ordlock_hash_bits, 8U, 24U);
	unsigned int n = 1U << bits, i;
	int ret;

	BUILD_BUG_ON(sizeof(struct ordlock_resource) > 64);
	ret = percpu_counter_init(&ordlock_nresources, 0, GFP_KERNEL);
	if (ret)
		return ret;
	ret = -ENOMEM;
	ordlock_resource_cache = KMEM_CACHE(ordlock_resource, SLAB_ACCOUNT);
	if (!ordlock_resource_cache)
		goto err_counter;
	ordlock_buckets = kvcalloc(n, sizeof(*ordlock_buckets), GFP_KERNEL);
	if (!ordlock_buckets)
		goto err_cache;
	for (i = 0; i < n; i++)
		spin_lock_init(&ordlock_buckets[i].lock);
	ordlock_bucket_mask = n - 1;
	return 0;

err_cache:
	kmem_cache_destroy(ordlock_resource_cache);
err_counter:
	percpu_counter_destroy(&ordlock_nresources);
	return ret;
}

/* Unlink @res from the chain of @bucket */
static void ordlock_bucket_unlink(struct ordlock_bucket *bucket,
				  struct ordlock_resource *res)
{
	struct ordlock_resource **pp = &bucket->chain;

	lockdep_assert_held(&bucket->lock);
	while (*pp != res)
		pp = &(*pp)->next;
	WRITE_ONCE(*pp, res->next);
}

/*
 * Free the idle resources of @bucket: all of them (@all), or those the
 * reaper already saw idle (marking the others). Return: how many remain.
 */
static unsigned int ordlock_bucket_reap(struct ordlock_bucket *bucket, bool all)
{
	struct ordlock_resource **pp = &bucket->chain, *res;

	lockdep_assert_held(&bucket->lock);
	while ((res = *pp)) {
		if (!res->idle) {
			pp = &res->next;
		} else if (all || res->aged) {
			WRITE_ONCE(*pp, res->next);
			bucket->nidle--;
			kmem_cache_free(ordlock_resource_cache, res);
		} else {
			res->aged = 1;
			pp = &res->next;
		}
	}
	return bucket->nidle;
}

static void ordlock_table_reap(struct work_struct *work)
{
	struct ordlock_bucket *bucket;
	bool remain = false;
	unsigned int i;

	for (i = 0; i <= ordlock_bucket_mask; i++) {
		bucket = &ordlock_buckets[i];
		if (!READ_ONCE(bucket->nidle))
			continue;
		spin_lock(&bucket->lock);
		if (ordlock_bucket_reap(bucket, false))
			remain = true;
		spin_unlock(&bucket->lock);
		cond_resched();
	}
	if (remain)
		schedule_delayed_work(&ordlock_reap_work, ORDLOCK_REAP_PERIOD);
}

void ordlock_table_exit(void)
{
	struct ordlock_bucket *bucket;
	unsigned int i;

	cancel_delayed_work_sync(&ordlock_reap_work);
	for (i = 0; i <= ordlock_bucket_mask; i++) {
		bucket = &ordlock_buckets[i];
		spin_lock(&bucket->lock);
		ordlock_bucket_reap(bucket, true);
		WARN_ON(bucket->chain);
		spin_unlock(&bucket->lock);
	}
	kvfree(ordlock_buckets);
	kmem_cache_destroy(ordlock_resource_cache);
	percpu_counter_destroy(&ordlock_nresources);
}

/* ordlock_table_nresources() - the number of resources in use */
s64 ordlock_table_nresources(void)
{
	return percpu_counter_sum(&ordlock_nresources);
}

/* ordlock_table_pin() - @n keys more (or fewer) pinned by the fast path */
void ordlock_table_pin(s64 n)
{
	atomic64_add(n, &ordlock_npinned);
}

/* ordlock_table_npinned() - the resources in use that the fast path pins */
s64 ordlock_table_npinned(void)
{
	return atomic64_read(&ordlock_npinned);
}

/* ordlock_table_bucket() - the bucket of key (@rank, @id) in @domain */
struct ordlock_bucket *ordlock_table_bucket(const struct ordlock_domain *domain,
					    u32 rank, u64 id)
{
	u32 h = hsiphash_3u32(lower_32_bits(id), upper_32_bits(id), rank,
			      &domain->hash_key);

	return &ordlock_buckets[h & ordlock_bucket_mask];
}

/* ordlock_table_size() - the number of buckets */
unsigned int ordlock_table_size(void)
{
	return ordlock_bucket_mask + 1;
}

/* ordlock_table_bucket_at() - bucket number @i, for walks over the table */
struct ordlock_bucket *ordlock_table_bucket_at(unsigned int i)
{
	return &ordlock_buckets[i];
}

/**
 * ordlock_table_next_used() - skip empty buckets in a walk over the table
 * @i: the first bucket number to look at
 *
 * A peek without the bucket locks: a bucket that gains its first resource
 * just after the peek is like one that gains it just after the walk read
 * it, which a walk under one bucket lock at a time allows anyway.
 *
 * Return: the number of the first bucket from @i on whose chain is not
 * empty, or ordlock_table_size() if none is.
 */
unsigned int ordlock_table_next_used(unsigned int i)
{
	while (i <= ordlock_bucket_mask && !READ_ONCE(ordlock_buckets[i].chain))
		i++;
	return i;
}

/* Count @n more resources in use, within max_resources */
static __always_inline int ordlock_resource_charge(unsigned int n)
{
	percpu_counter_add(&ordlock_nresources, n);
	if (__percpu_counter_compare(&ordlock_nresources, ordlock_max_resources(),
				     percpu_counter_batch) > 0) {
		percpu_counter_sub(&ordlock_nresources, n);
		return -ENOSPC;
	}
	return 0;
}

/**
 * ordlock_table_reserve() - count resources in use ahead of their use
 * @n: how many
 *
 * A request of many keys reserves one for each of them at once (one add,
 * one limit test) and its ordlock_table_get() calls draw on the
 * reservation instead of counting one by one. Only far from the limit:
 * when the count read without adding (within the per-CPU counter's error)
 * leaves less than twice @n free, nothing is reserved or added, and the
 * request counts each resource it takes into use as it goes, exactly as
 * without a reservation: a request that needs no new resource never fails
 * for the limit. The reservation counts, while the request runs, keys
 * whose resource is in use already; far from the limit, that can make no
 * other request fail.
 *
 * Return: true when @n more fit within max_resources (and are counted),
 * false when not (nothing counted).
 */
bool ordlock_table_reserve(unsigned int n)
{
	s64 slack = (s64)percpu_counter_batch * num_online_cpus();

	if (percpu_counter_read(&ordlock_nresources) + 2 * (s64)n + slack >
	    (s64)ordlock_max_resources())
		return false;
	return !ordlock_resource_charge(n);
}

/**
 * ordlock_table_find() - the resource of a key, as it is
 * @bucket: the bucket of the key, locked
 * @domain: the key's domain
 * @rank: key rank
 * @id: key id
 *
 * Return: the key's resource, idle or in use (an idle one has neither
 * holders nor waiters; ordlock_table_revive() takes it into use), or NULL
 * when the key has none.
 */
struct ordlock_resource *ordlock_table_find(struct ordlock_bucket *bucket,
					    struct ordlock_domain *domain,
					    u32 rank, u64 id)
{
	struct ordlock_resource *res;

	lockdep_assert_held(&bucket->lock);
	for (res = bucket->chain; res; res = res->next)
		if (res->id == id && res->rank == rank &&
		    res->domain_id == domain->id)
			return res;
	return NULL;
}

/* Take the idle @res back into use; its charge is counted already */
static void ordlock_table_wake(struct ordlock_bucket *bucket,
			       struct ordlock_domain *domain,
			       struct ordlock_resource *res)
{
	res->idle = 0;
	res->aged = 0;
	bucket->nidle--;
	ordlock_gauge_inc(&domain->resources);
}

/**
 * ordlock_table_revive() - take an idle resource back into use
 * @bucket: its bucket, locked
 * @domain: its domain
 * @res: a resource of @bucket from ordlock_table_find(), idle
 *
 * Return: 0, or -ENOSPC when max_resources are in use (nothing changed).
 */
int ordlock_table_revive(struct ordlock_bucket *bucket,
			 struct ordlock_domain *domain,
			 struct ordlock_resource *res)
{
	lockdep_assert_held(&bucket->lock);
	if (ordlock_resource_charge(1))
		return -ENOSPC;
	ordlock_table_wake(bucket, domain, res);
	return 0;
}

/**
 * ordlock_table_get() - the resource of a key, taken into use
 * @bucket: the bucket of the key, locked
 * @domain: the key's domain
 * @rank: key rank
 * @id: key id
 * @spare: a resource from ordlock_resource_alloc() to use if the key has
 *	none; set to NULL when used. Points at NULL on the first try.
 * @credit: resources reserved by ordlock_table_reserve() and not used yet
 *	(may be 0): an idle resource taken back uses one (one fewer) instead
 *	of counting itself
 *
 * Return: the resource (its holders and waiters may be empty: the caller
 * adds one before it drops the lock), NULL when the key has no resource
 * and *@spare is NULL (unlock, allocate one, lock and call again), or
 * ERR_PTR(-ENOSPC) when max_resources are in use (never with a spare).
 * The bucket stays locked.
 */
struct ordlock_resource *ordlock_table_get(struct ordlock_bucket *bucket,
					   struct ordlock_domain *domain,
					   u32 rank, u64 id,
					   struct ordlock_resource **spare,
					   unsigned int *credit)
{
	struct ordlock_resource *res;

	res = ordlock_table_find(bucket, domain, rank, id);
	if (res) {
		if (!res->idle)
			return res;
		if (!*spare) {
			if (*credit) {
				(*credit)--;
				ordlock_table_wake(bucket, domain, res);
				return res;
			}
			return ordlock_table_revive(bucket, domain, res) ?
			       ERR_PTR(-ENOSPC) : res;
		}
		/* the spare's charge moves to @res */
		kmem_cache_free(ordlock_resource_cache, *spare);
		*spare = NULL;
		ordlock_table_wake(bucket, domain, res);
		return res;
	}
	res = *spare;
	if (!res)
		return NULL;
	*spare = NULL;
	res->id = id;
	res->rank = rank;
	res->domain_id = domain->id;
	res->bucket = bucket - ordlock_buckets;
	res->nshared = 0;
	res->fast = 0;
	res->nexcl = 0;
	res->idle = 0;
	res->aged = 0;
	INIT_LIST_HEAD(&res->holders);
	INIT_LIST_HEAD(&res->waiters);
	res->next = bucket->chain;
	WRITE_ONCE(bucket->chain, res);
	ordlock_gauge_inc(&domain->resources);
	return res;
}

/**
 * ordlock_resource_alloc() - allocate a resource, counted against the limit
 * @credit: resources reserved by ordlock_table_reserve() and not used yet
 *	(may be 0): the new resource uses one if there is one, else counts
 *	itself (given back when the allocation fails)
 *
 * Called without any spinlock held: it may sleep.
 *
 * Return: the resource, ERR_PTR(-ENOSPC) when max_resources are in use, or
 * ERR_PTR(-ENOMEM).
 */
struct ordlock_resource *ordlock_resource_alloc(unsigned int *credit)
{
	struct ordlock_resource *res;

	might_sleep();
	if (*credit)
		(*credit)--;
	else if (ordlock_resource_charge(1))
		return ERR_PTR(-ENOSPC);
	res = kmem_cache_alloc(ordlock_resource_cache, GFP_KERNEL_ACCOUNT);
	if (!res) {
		percpu_counter_dec(&ordlock_nresources);
		return ERR_PTR(-ENOMEM);
	}
	return res;
}

/* ordlock_resource_free() - free a resource that is not in the table */
void ordlock_resource_free(struct ordlock_resource *res)
{
	kmem_cache_free(ordlock_resource_cache, res);
	percpu_counter_dec(&ordlock_nresources);
}

/**
 * ordlock_table_trim() - free the oldest idle resource of @bucket
 * @bucket: a bucket, locked, with more than ORDLOCK_BUCKET_IDLE_MAX idle
 *	resources (ordlock_resource_put_unused())
 */
void ordlock_table_trim(struct ordlock_bucket *bucket)
{
	struct ordlock_resource *pos, *old = NULL;

	lockdep_assert_held(&bucket->lock);
	/* the chain is newest first: the last idle one was inserted first */
	for (pos = bucket->chain; pos; pos = pos->next)
		if (pos->idle)
			old = pos;
	ordlock_bucket_unlink(bucket, old);
	bucket->nidle--;
	kmem_cache_free(ordlock_resource_cache, old);
}

/* ordlock_table_arm_reaper() - make sure the reaper will pass */
void ordlock_table_arm_reaper(void)
{
	schedule_delayed_work(&ordlock_reap_work, ORDLOCK_REAP_PERIOD);
}
