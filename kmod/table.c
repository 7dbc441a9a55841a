// SPDX-License-Identifier: GPL-2.0
/*
 * The resource table.
 *
 * The table has a fixed number of buckets (hash_bits). Keys are hashed with
 * siphash under a key chosen at load time, so that user space cannot aim
 * many keys at one chain. A lookup walks one chain under its bucket lock:
 * there is no global lock, and the cost does not depend on other buckets.
 */
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/slab.h>

#include "domain.h"
#include "params.h"
#include "table.h"

/* Number of resources in all domains; atomic, no lock */
atomic_t ordlock_nresources = ATOMIC_INIT(0);

static struct ordlock_bucket *ordlock_buckets;
static unsigned int ordlock_bucket_mask;
static siphash_key_t ordlock_hash_key;
static struct kmem_cache *ordlock_resource_cache;

int ordlock_table_init(void)
{
	unsigned int bits = clamp(ordlock_hash_bits, 8U, 24U);
	unsigned int n = 1U << bits, i;

	ordlock_resource_cache = KMEM_CACHE(ordlock_resource, SLAB_ACCOUNT);
	if (!ordlock_resource_cache)
		return -ENOMEM;
	ordlock_buckets = kvcalloc(n, sizeof(*ordlock_buckets), GFP_KERNEL);
	if (!ordlock_buckets) {
		kmem_cache_destroy(ordlock_resource_cache);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		spin_lock_init(&ordlock_buckets[i].lock);
		INIT_HLIST_HEAD(&ordlock_buckets[i].chain);
	}
	ordlock_bucket_mask = n - 1;
	get_random_bytes(&ordlock_hash_key, sizeof(ordlock_hash_key));
	return 0;
}

void ordlock_table_exit(void)
{
	unsigned int i;

	for (i = 0; i <= ordlock_bucket_mask; i++)
		WARN_ON(!hlist_empty(&ordlock_buckets[i].chain));
	kvfree(ordlock_buckets);
	kmem_cache_destroy(ordlock_resource_cache);
}

/* ordlock_table_bucket() - the bucket of key (@rank, @id) in @domain */
struct ordlock_bucket *ordlock_table_bucket(const struct ordlock_domain *domain,
					    u32 rank, u64 id)
{
	u64 h = siphash_2u64(id, ((u64)domain->id << 32) | rank, &ordlock_hash_key);

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

/* ordlock_table_lookup() - the resource of a key, or NULL */
struct ordlock_resource *ordlock_table_lookup(struct ordlock_bucket *bucket,
					      const struct ordlock_domain *domain,
					      u32 rank, u64 id)
{
	struct ordlock_resource *res;

	lockdep_assert_held(&bucket->lock);
	hlist_for_each_entry(res, &bucket->chain, node)
		if (res->id == id && res->rank == rank && res->domain == domain)
			return res;
	return NULL;
}

/**
 * ordlock_resource_alloc() - allocate a resource, counted against the limit
 *
 * Called without any spinlock held: it may sleep.
 *
 * Return: the resource, ERR_PTR(-ENOSPC) when max_resources are in use, or
 * ERR_PTR(-ENOMEM).
 */
struct ordlock_resource *ordlock_resource_alloc(void)
{
	struct ordlock_resource *res;

	might_sleep();
	if (atomic_inc_return(&ordlock_nresources) > ordlock_max_resources()) {
		atomic_dec(&ordlock_nresources);
		return ERR_PTR(-ENOSPC);
	}
	res = kmem_cache_alloc(ordlock_resource_cache, GFP_KERNEL_ACCOUNT);
	if (!res) {
		atomic_dec(&ordlock_nresources);
		return ERR_PTR(-ENOMEM);
	}
	return res;
}

/* ordlock_resource_free() - free a resource that is not in the table */
void ordlock_resource_free(struct ordlock_resource *res)
{
	kmem_cache_free(ordlock_resource_cache, res);
	atomic_dec(&ordlock_nresources);
}

/* ordlock_resource_insert() - put a fresh resource for a key in its bucket */
void ordlock_resource_insert(struct ordlock_bucket *bucket,
			     struct ordlock_resource *res,
			     const struct ordlock_domain *domain, u32 rank, u64 id)
{
	lockdep_assert_held(&bucket->lock);
	res->bucket = bucket;
	res->domain = domain;
	res->id = id;
	res->rank = rank;
	res->nshared = 0;
	res->nexcl = 0;
	INIT_LIST_HEAD(&res->holders);
	INIT_LIST_HEAD(&res->waiters);
	hlist_add_head(&res->node, &bucket->chain);
}

/**
 * ordlock_resource_put_unused() - free @res if nobody holds or waits for it
 * @res: a resource in the table
 *
 * Return: true when @res was freed.
 */
bool ordlock_resource_put_unused(struct ordlock_resource *res)
{
	lockdep_assert_held(&res->bucket->lock);
	if (!list_empty(&res->holders) || !list_empty(&res->waiters))
		return false;
	hlist_del(&res->node);
	ordlock_resource_free(res);
	return true;
}
