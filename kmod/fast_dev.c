// SPDX-License-Identifier: GPL-2.0
/*
 * The fast path's device side: the ioctls (ORDLOCK_IOC_FAST_PIN,
 * FAST_RELEASE and FAST_LEARN, which device.c hands over), the mappings
 * of the words, the owner page and the learned pairs, and the life of the
 * state behind them: a domain's made on its first pin and freed with the
 * domain (or when its fast path is turned off), an owner's made on its
 * first pin and freed when the owner goes. What a word means is
 * fastpath.c's; the state shared with it is in fast_internal.h. One
 * file, for one lock: ordlock_fast_lock is taken here only.
 *
 * The learned order (policies detect and timeout): a page of header and
 * ORDLOCK_FAST_SLOTS^2 bits (128 KiB) per domain, struct
 * ordlock_fast_edges, mapped read-only into the members: a bit per pair
 * of slots (held -> taken) whose edge the kernel learned. A member that
 * took a key by the fast path while holding one whose pair is not known
 * calls ORDLOCK_IOC_FAST_LEARN: the kernel checks that both words name
 * it, learns the edge (order.c, reported as for any grant: an allowed
 * upward call, kmod/layers.txt) and sets the bit; a known pair costs the
 * member no system call. Only the kernel writes these pages (under
 * ordlock_fast_lock); it never reads back anything of them but its own
 * bits.
 *
 * Death: the owner's destruction lets go of every word of the domain that
 * names it (the kernel scans the words rather than trust the held stack
 * of the owner page); the owner's index is reused only after that.
 *
 * Locks: ordlock_fast_lock (a mutex, below owner->lock, above the bucket
 * locks: main.c) serialises the creation of a domain's fast state, the
 * pinning of keys, the owner indices and the learned pairs. A domain's
 * fast state lives as long as the domain: it is created on the first pin
 * and freed with the domain (ordlock_fast_domain_free()), and found from
 * a resource by its domain id in ordlock_fast_domains (an xarray).
 */
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>
#include <linux/ordlock.h>

#include "compat.h"
#include "domain.h"
#include "fast_internal.h"
#include "order.h"
#include "owner.h"
#include "resource.h"
#include "table.h"

/* See the head of the file */
static DEFINE_MUTEX(ordlock_fast_lock);

/* The pages of the learned pairs; 0 or -ENOMEM (nothing allocated) */
static int ordlock_fast_edges_alloc(struct ordlock_fast_domain *fd)
{
	unsigned int i;

	for (i = 0; i < ORDLOCK_FAST_EPAGES; i++) {
		fd->epages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!fd->epages[i])
			goto fail;
	}
	return 0;

fail:
	while (i--)
		put_page(fd->epages[i]);
	return -ENOMEM;
}

static void ordlock_fast_edges_free(struct ordlock_fast_domain *fd)
{
	unsigned int i;

	for (i = 0; i < ORDLOCK_FAST_EPAGES; i++)
		put_page(fd->epages[i]);
}

/* The header's @learning from @domain's policy; under ordlock_fast_lock */
static void ordlock_fast_edges_learning(struct ordlock_fast_domain *fd,
					struct ordlock_domain *domain)
{
	struct ordlock_fast_edges *e = page_address(fd->epages[0]);

	lockdep_assert_held(&ordlock_fast_lock);
	WRITE_ONCE(e->learning,
		   READ_ONCE(domain->policy) != ORDLOCK_POLICY_ENFORCE);
}

/* The byte of pair @from -> @to, and its bit in @bit */
static u8 *ordlock_fast_edge_byte(struct ordlock_fast_domain *fd, u32 from,
				  u32 to, u8 *bit)
{
	size_t idx = (size_t)from * ORDLOCK_FAST_SLOTS + to;
	size_t off = offsetof(struct ordlock_fast_edges, bits) + idx / 8;

	*bit = BIT(idx % 8);
	return (u8 *)page_address(fd->epages[off / PAGE_SIZE]) + off % PAGE_SIZE;
}

/**
 * ordlock_fast_edges_reset() - the policy of @domain was set or its
 *	learned order reset: forget every pair known, and say whether the
 *	domain learns now
 * @domain: the domain
 *
 * Called after the order's reset, and the pairs are set under
 * ordlock_fast_lock together with the learning of their edge: a pair set
 * after this call was learned in the new order.
 */
void ordlock_fast_edges_reset(struct ordlock_domain *domain)
{
	struct ordlock_fast_domain *fd;
	unsigned int i;

	mutex_lock(&ordlock_fast_lock);
	fd = xa_load(&ordlock_fast_domains, domain->id);
	if (fd) {
		/* the bits (past the header page) first, then @learning */
		for (i = 1; i < ORDLOCK_FAST_EPAGES; i++)
			memset(page_address(fd->epages[i]), 0, PAGE_SIZE);
		/* pairs with nothing: user space reads @learning, then bits */
		smp_wmb();
		ordlock_fast_edges_learning(fd, domain);
	}
	mutex_unlock(&ordlock_fast_lock);
}

/* ORDLOCK_IOC_FAST_LEARN, under owner->lock */
static int ordlock_fast_learn(struct ordlock_owner *owner,
			      struct ordlock_fast_learn *arg)
{
	/* pairs with ordlock_fast_owner_get() */
	struct ordlock_fast_owner *fo = smp_load_acquire(&owner->fast);
	struct ordlock_fast_slot *sf, *st;
	struct ordlock_fast_domain *fd;
	u32 n, from = arg->from, to = arg->to;
	u8 *byte, bit;

	lockdep_assert_held(&owner->lock);
	if (arg->flags || arg->__reserved)
		return -EINVAL;
	if (!fo)
		return -EOPNOTSUPP;
	/* Revoked: nothing is learned of a hold until it is acknowledged */
	if (READ_ONCE(owner->lease.revoked))
		return -EKEYEXPIRED;
	fd = fo->fd;
	/* pairs with the pin: a slot below the count is written */
	n = smp_load_acquire(&fd->nslots);
	if (from >= n || to >= n || from == to)
		return -EINVAL;
	arg->known = 0;
	mutex_lock(&ordlock_fast_lock);
	/*
	 * Hints from user space: the words must name the caller now (a slot
	 * whose word names an owner is not recycled: its keys stay)
	 */
	sf = ordlock_fast_slot(fd, from);
	st = ordlock_fast_slot(fd, to);
	if (!sf || !st || !ordlock_fast_names(fd, from, fo->index) ||
	    !ordlock_fast_names(fd, to, fo->index)) {
		mutex_unlock(&ordlock_fast_lock);
		return -ENOENT;
	}
	if (ordlock_order_learn_pair(owner, sf->rank, sf->id, st->rank, st->id,
				     ORDLOCK_MODE_EXCLUSIVE)) {
		byte = ordlock_fast_edge_byte(fd, from, to, &bit);
		WRITE_ONCE(*byte, *byte | bit);
		arg->known = 1;
	}
	mutex_unlock(&ordlock_fast_lock);
	return 0;
}

static struct ordlock_fast_domain *ordlock_fast_domain_create(struct ordlock_domain *domain)
{
	struct ordlock_fast_domain *fd;
	unsigned int i;

	lockdep_assert_held(&ordlock_fast_lock);
	fd = kvzalloc(sizeof(*fd), GFP_KERNEL_ACCOUNT);
	if (!fd)
		return ERR_PTR(-ENOMEM);
	fd->domain_id = domain->id;
	fd->domain = domain;
	RCU_INIT_POINTER(fd->hash, fd->hashes[0]);
	INIT_LIST_HEAD(&fd->retiring);
	ida_init(&fd->indices);
	xa_init(&fd->owners);
	for (i = 0; i < ORDLOCK_FAST_NPAGES; i++) {
		fd->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!fd->pages[i])
			goto fail;
	}
	if (ordlock_fast_edges_alloc(fd))
		goto fail;
	ordlock_fast_edges_learning(fd, domain);
	fd->hash_cookie = get_state_synchronize_rcu();
	if (xa_err(xa_store(&ordlock_fast_domains, domain->id, fd, GFP_KERNEL)))
		goto fail_edges;
	return fd;

fail_edges:
	ordlock_fast_edges_free(fd);
fail:
	while (i--)
		put_page(fd->pages[i]);
	kvfree(fd);
	return ERR_PTR(-ENOMEM);
}

/*
 * The fast state of @owner, made on first need: the domain must have the
 * fast path; the caller must have the domain's fastpath uid, at every pin.
 * Under owner->lock.
 */
static struct ordlock_fast_owner *ordlock_fast_owner_get(struct ordlock_owner *owner)
{
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_fast_owner *fo = owner->fast;
	struct ordlock_fast_domain *fd;
	struct ordlock_fast_page *fp;
	int ret;

	lockdep_assert_held(&owner->lock);
	if (fo && fo->domain != domain)
		return ERR_PTR(-EXDEV);
	/*
	 * Every pin, not only the first: a descriptor passed to a task of
	 * another uid must not pin (and use up the domain's slots) for it
	 */
	if (!uid_eq(current_euid(), domain->fast_uid))
		return ERR_PTR(-EACCES);
	if (fo)
		return fo;
	if (!READ_ONCE(domain->fastpath) || READ_ONCE(domain->backend))
		return ERR_PTR(-EOPNOTSUPP);
	fo = kzalloc(sizeof(*fo), GFP_KERNEL_ACCOUNT);
	if (!fo)
		return ERR_PTR(-ENOMEM);
	fo->page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!fo->page) {
		ret = -ENOMEM;
		goto fail_page;
	}
	mutex_lock(&ordlock_fast_lock);
	fd = xa_load(&ordlock_fast_domains, domain->id);
	if (!fd)
		fd = ordlock_fast_domain_create(domain);
	if (IS_ERR(fd)) {
		ret = PTR_ERR(fd);
		goto fail_fd;
	}
	ret = ida_alloc_range(&fd->indices, 1, ORDLOCK_FAST_K - 1, GFP_KERNEL);
	if (ret < 0)
		goto fail_fd;
	fo->index = ret;
	/* In the owner table before any word can name the index */
	ret = xa_err(xa_store(&fd->owners, fo->index, owner, GFP_KERNEL));
	if (ret)
		goto fail_index;
	mutex_unlock(&ordlock_fast_lock);
	fo->fd = fd;
	fo->domain = domain;
	kref_get(&domain->ref);
	fp = page_address(fo->page);
	WRITE_ONCE(fp->index, fo->index);
	if (owner->nheld || owner->busy)
		WRITE_ONCE(fp->revoked, ORDLOCK_FAST_PAGE_KERNEL);
	/* ordlock_fast_mmap() reads it without owner->lock: fo first */
	smp_store_release(&owner->fast, fo);
	return fo;

fail_index:
	ida_free(&fd->indices, fo->index);
fail_fd:
	mutex_unlock(&ordlock_fast_lock);
	put_page(fo->page);
fail_page:
	kfree(fo);
	return ERR_PTR(ret);
}

/*
 * Slot recycling (issue 40). A domain has ORDLOCK_FAST_SLOTS slots; once
 * they are used, a pin takes the slot of a key that nobody holds or waits
 * for (its word free as the kernel left it, no holder or waiter in the
 * kernel), first among the slots no live owner pinned (@pins 0: pinned by
 * owners gone), else from live owners (their pins are taken: @stale).
 *
 * A library that cached the old key's slot must not take the new key with
 * it: the word's incarnation (ORDLOCK_FAST_INC) moves on under the old
 * key's bucket lock, by a CAS from the free word, and every member CAS
 * expects the incarnation its pin returned; a stale one fails, and the
 * library pins again. The incarnation has 7 bits: a slot is not recycled
 * onto an incarnation that an owner whose pin was taken may still cache
 * (@stale_base to @inc). A generation never goes back (it goes on from
 * the old key's); tokens are the domain's and are not touched. The
 * learned pairs of the slot are forgotten before it is reused.
 *
 * Lockless readers find a slot's key under RCU (struct ordlock_fast_slot
 * is never changed, a recycled slot gets a new one) and the old key's
 * resource stays marked fast, without a word, until a grace period later
 * (the retiring list): a reader that locks its bucket finds it alive.
 */

/* Whether another retirement than @s is of the same resource */
static bool ordlock_fast_retiring(struct ordlock_fast_domain *fd,
				  struct ordlock_fast_slot *s)
{
	struct ordlock_fast_slot *t;

	list_for_each_entry(t, &fd->retiring, node)
		if (t != s && t->res == s->res)
			return true;
	return false;
}

/* Retirements whose grace period ended (all of them, waiting, with @wait) */
static void ordlock_fast_retire_poll(struct ordlock_fast_domain *fd, bool wait)
{
	struct ordlock_fast_slot *s, *tmp;
	struct ordlock_bucket *bucket;
	unsigned int idle = 0, n = 0;

	lockdep_assert_held(&ordlock_fast_lock);
	if (list_empty(&fd->retiring))
		return;
	if (wait)
		synchronize_rcu();
	list_for_each_entry_safe(s, tmp, &fd->retiring, node) {
		if (!poll_state_synchronize_rcu(s->cookie))
			continue;
		bucket = ordlock_res_bucket(s->res);
		spin_lock(&bucket->lock);
		/*
		 * Not pinned again meanwhile (a new slot, the same resource),
		 * nor retiring again from it (a reader may still lock it)
		 */
		if (ordlock_fast_lookup(fd, s->rank, s->id) < 0 &&
		    !ordlock_fast_retiring(fd, s)) {
			s->res->fast = 0;
			if (ordlock_resource_put_unused(bucket, s->res)) {
				ordlock_gauge_dec(&fd->domain->resources);
				idle++;
			}
		}
		spin_unlock(&bucket->lock);
		list_del(&s->node);
		kfree(s);
		n++;
	}
	if (idle)
		ordlock_table_uncharge(idle);
	ordlock_table_pin(-(s64)n);
}

static u16 *ordlock_fast_hash_now(struct ordlock_fast_domain *fd)
{
	return rcu_dereference_protected(fd->hash, lockdep_is_held(&ordlock_fast_lock));
}

static void ordlock_fast_hash_add(struct ordlock_fast_domain *fd, u16 *hash,
				  u32 rank, u64 id, u32 slot)
{
	u32 h = ordlock_fast_hash(rank, id);

	while (hash[h] && hash[h] != ORDLOCK_FAST_TOMB)
		h = (h + 1) & (ORDLOCK_FAST_HASH - 1);
	if (hash[h] == ORDLOCK_FAST_TOMB)
		fd->ntomb--;
	/* the slot first, then the hash entry (ordlock_fast_lookup()) */
	smp_store_release(&hash[h], slot + 1);
}

/*
 * Too many tombstones (lookups of keys not pinned walk them): fill the
 * other array with the keys that have a slot and publish it
 */
static void ordlock_fast_rehash(struct ordlock_fast_domain *fd)
{
	u16 *cur = ordlock_fast_hash_now(fd);
	u16 *next = cur == fd->hashes[0] ? fd->hashes[1] : fd->hashes[0];
	struct ordlock_fast_slot *s;
	u32 slot;

	/* the readers of @next from before the last rebuild are gone */
	if (!poll_state_synchronize_rcu(fd->hash_cookie))
		synchronize_rcu();
	memset(next, 0, sizeof(fd->hashes[0]));
	fd->ntomb = 0;
	for (slot = 0; slot < fd->nslots; slot++) {
		s = ordlock_fast_slot(fd, slot);
		if (s)
			ordlock_fast_hash_add(fd, next, s->rank, s->id, slot);
	}
	rcu_assign_pointer(fd->hash, next);
	fd->hash_cookie = get_state_synchronize_rcu();
}

/* The pairs of @slot (either side) are forgotten */
static void ordlock_fast_edges_forget(struct ordlock_fast_domain *fd, u32 slot)
{
	u8 *byte, bit;
	u32 i;

	for (i = 0; i < ORDLOCK_FAST_SLOTS; i++) {
		byte = ordlock_fast_edge_byte(fd, slot, i, &bit);
		WRITE_ONCE(*byte, *byte & ~bit);
		byte = ordlock_fast_edge_byte(fd, i, slot, &bit);
		WRITE_ONCE(*byte, *byte & ~bit);
	}
}

/* The live owners' pins of @slot are taken (they may cache it: stale) */
static void ordlock_fast_take_pins(struct ordlock_fast_domain *fd, u32 slot,
				   u8 old_inc)
{
	struct ordlock_fast_owner *fo;
	struct ordlock_owner *owner;
	unsigned long i;

	if (!fd->pins[slot])
		return;
	/* an owner leaves the table under ordlock_fast_lock: alive here */
	xa_for_each(&fd->owners, i, owner) {
		fo = READ_ONCE(owner->fast);
		if (!fo || !__test_and_clear_bit(slot, fo->pinned))
			continue;
		if (__test_and_set_bit(slot, fo->stale))
			continue;
		if (!fd->stale[slot]++)
			fd->stale_base[slot] = old_inc;
	}
	fd->pins[slot] = 0;
}

/*
 * Take @slot from its key if nobody holds or waits for it: the word, free
 * as the kernel left it, moves to the next incarnation, and the key
 * retires. Return: true when the slot is free now.
 */
static bool ordlock_fast_evict(struct ordlock_fast_domain *fd, u32 slot)
{
	struct ordlock_fast_slot *s = ordlock_fast_slot(fd, slot);
	u64 *wp = ordlock_fast_wordp(fd, slot);
	u8 inc = fd->inc[slot], next = (inc + 1) & ORDLOCK_FAST_INC_MASK;
	struct ordlock_bucket *bucket;
	u16 *hash;
	u64 old;
	u32 h;

	if (!s)
		return false;
	/* not onto an incarnation an owner whose pin was taken may cache */
	if (fd->stale[slot] && next == fd->stale_base[slot])
		return false;
	bucket = ordlock_res_bucket(s->res);
	spin_lock(&bucket->lock);
	old = READ_ONCE(*wp);
	/* free, no WAITERS, the kernel's incarnation: no member holds it */
	if (!list_empty(&s->res->holders) || !list_empty(&s->res->waiters) ||
	    (u32)old != inc ||
	    !try_cmpxchg(wp, &old, ORDLOCK_FAST_WORD(ORDLOCK_FAST_GEN(old), 0) | next)) {
		spin_unlock(&bucket->lock);
		return false;
	}
	fd->inc[slot] = next;
	/* under the old key's bucket lock (ordlock_fast_lock_slot()) */
	rcu_assign_pointer(fd->slots[slot], NULL);
	spin_unlock(&bucket->lock);
	hash = ordlock_fast_hash_now(fd);
	h = ordlock_fast_hash(s->rank, s->id);
	while (hash[h] != slot + 1)
		h = (h + 1) & (ORDLOCK_FAST_HASH - 1);
	/* pairs with ordlock_fast_lookup(): the key is skipped from now on */
	smp_store_release(&hash[h], ORDLOCK_FAST_TOMB);
	fd->ntomb++;
	ordlock_fast_edges_forget(fd, slot);
	ordlock_fast_take_pins(fd, slot, inc);
	s->cookie = get_state_synchronize_rcu();
	list_add_tail(&s->node, &fd->retiring);
	return true;
}

/*
 * A slot for a new key: one recycled and not used yet, one never used, or
 * one recycled now (pinned by nobody alive first). Return: it, or -1.
 */
static int ordlock_fast_free_slot(struct ordlock_fast_domain *fd, bool *fresh)
{
	u32 i, slot, pass;

	*fresh = false;
	if (fd->nfree)
		return fd->free[--fd->nfree];
	if (fd->nslots < ORDLOCK_FAST_SLOTS) {
		*fresh = true;
		return fd->nslots;
	}
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < ORDLOCK_FAST_SLOTS; i++) {
			slot = (fd->cursor + i) % ORDLOCK_FAST_SLOTS;
			if (!pass && fd->pins[slot])
				continue;
			if (ordlock_fast_evict(fd, slot)) {
				fd->cursor = slot + 1;
				return slot;
			}
		}
	return -1;
}

/* ORDLOCK_IOC_FAST_PIN, under owner->lock */
static int ordlock_fast_pin(struct ordlock_owner *owner,
			    struct ordlock_fast_pin *arg)
{
	struct ordlock_resource *res, *spare = NULL;
	struct ordlock_fast_slot *ns = NULL;
	struct ordlock_fast_owner *fo;
	struct ordlock_fast_domain *fd;
	struct ordlock_bucket *bucket;
	unsigned int credit = 0;
	int slot, ret = 0;
	bool fresh;
	u64 *wp;

	if (arg->flags || arg->inc)
		return -EINVAL;
	fo = ordlock_fast_owner_get(owner);
	if (IS_ERR(fo))
		return PTR_ERR(fo);
	fd = fo->fd;
	arg->index = fo->index;
	spare = ordlock_resource_alloc(&credit);
	if (IS_ERR(spare))
		return PTR_ERR(spare);
	ns = kmalloc(sizeof(*ns), GFP_KERNEL_ACCOUNT);
	if (!ns) {
		ret = -ENOMEM;
		goto free;
	}
	mutex_lock(&ordlock_fast_lock);
	ordlock_fast_retire_poll(fd, false);
	slot = ordlock_fast_lookup(fd, arg->rank, arg->id);
	if (slot >= 0)
		goto pinned;
	slot = ordlock_fast_free_slot(fd, &fresh);
	if (slot < 0) {
		ret = -ENOSPC;
		goto unlock;
	}
	if (fd->ntomb > ORDLOCK_FAST_TOMB_MAX)
		ordlock_fast_rehash(fd);
	bucket = ordlock_table_bucket(owner->domain, arg->rank, arg->id);
	spin_lock(&bucket->lock);
	res = ordlock_table_get(bucket, owner->domain, arg->rank, arg->id,
				&spare, &credit);
	if (IS_ERR_OR_NULL(res)) {
		spin_unlock(&bucket->lock);
		ret = res ? PTR_ERR(res) : -ENOMEM;
		if (!fresh)
			fd->free[fd->nfree++] = slot;
		goto unlock;
	}
	ns->rank = arg->rank;
	ns->id = arg->id;
	ns->res = res;
	INIT_LIST_HEAD(&ns->node);
	wp = ordlock_fast_wordp(fd, slot);
	/* a recycled slot's generation goes on; its incarnation is the new one */
	WRITE_ONCE(*wp, ORDLOCK_FAST_WORD(fresh ? 0 : ORDLOCK_FAST_GEN(READ_ONCE(*wp)),
					  res->nshared || res->nexcl ? ORDLOCK_FAST_K : 0) |
		   fd->inc[slot]);
	rcu_assign_pointer(fd->slots[slot], ns);
	ns = NULL;
	ordlock_fast_hash_add(fd, ordlock_fast_hash_now(fd), arg->rank, arg->id, slot);
	/* Under the bucket lock, as every reader of the mark */
	res->fast = 1;
	spin_unlock(&bucket->lock);
	ordlock_table_pin(1);
	if (fresh)
		/* the slot first, then the count (release, death, mmap) */
		smp_store_release(&fd->nslots, slot + 1);
pinned:
	/* the owner's reference: its slot is recycled last */
	if (!__test_and_set_bit(slot, fo->pinned))
		fd->pins[slot]++;
	arg->slot = slot;
	arg->inc = fd->inc[slot];
unlock:
	mutex_unlock(&ordlock_fast_lock);
free:
	kfree(ns);
	if (spare)
		ordlock_resource_free(spare);
	return ret;
}

/* ORDLOCK_IOC_FAST_RELEASE */
static int ordlock_fast_release(struct ordlock_owner *owner,
				struct ordlock_fast_release *arg)
{
	/* pairs with ordlock_fast_owner_get(): no owner->lock here */
	struct ordlock_fast_owner *fo = smp_load_acquire(&owner->fast);
	int ret;

	if (arg->__reserved)
		return -EINVAL;
	if (!fo)
		return -EOPNOTSUPP;
	/* pairs with the pin: a slot below the count is written */
	if (arg->slot >= smp_load_acquire(&fo->fd->nslots))
		return -EINVAL;
	ret = ordlock_fast_let_go(fo->fd, arg->slot, fo->index, arg->gen, false);
	/* The word was let go by the revocation (racy read: a hint only) */
	if (ret == -ENOENT && READ_ONCE(owner->lease.revoked))
		ret = -EKEYEXPIRED;
	return ret;
}

/**
 * ordlock_fast_ioctl() - the fast path's ioctls
 * @owner: the caller's owner
 * @cmd: ORDLOCK_IOC_FAST_*
 * @uarg: the argument, size first
 *
 * Return: 0 or an errno (-ENOTTY for an unknown command).
 */
long ordlock_fast_ioctl(struct ordlock_owner *owner, unsigned int cmd,
			void __user *uarg)
{
	union {
		struct ordlock_fast_pin pin;
		struct ordlock_fast_release rel;
		struct ordlock_fast_learn learn;
	} buf;
	size_t size;
	u32 usize;
	long ret;

	switch (cmd) {
	case ORDLOCK_IOC_FAST_PIN:
		size = sizeof(buf.pin);
		break;
	case ORDLOCK_IOC_FAST_RELEASE:
		size = sizeof(buf.rel);
		break;
	case ORDLOCK_IOC_FAST_LEARN:
		size = sizeof(buf.learn);
		break;
	default:
		return -ENOTTY;
	}
	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < size)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&buf, size, uarg, usize);
	if (ret)
		return ret;
	if (cmd == ORDLOCK_IOC_FAST_RELEASE)
		return ordlock_fast_release(owner, &buf.rel);
	if (mutex_lock_interruptible(&owner->lock))
		return -ERESTARTSYS;
	/* A pin (or a pair learned) is not undone if the copy out fails */
	if (cmd == ORDLOCK_IOC_FAST_LEARN)
		ret = ordlock_fast_learn(owner, &buf.learn);
	else
		ret = ordlock_fast_pin(owner, &buf.pin);
	mutex_unlock(&owner->lock);
	if (!ret && copy_to_user(uarg, &buf, size))
		ret = -EFAULT;
	return ret;
}

/*
 * The learned pairs: read-only, and never to be made writable (mprotect);
 * the kernel's own data
 */
static int ordlock_fast_edges_mmap(struct ordlock_fast_owner *fo,
				   struct vm_area_struct *vma)
{
	if (vma->vm_flags & VM_WRITE)
		return -EACCES;
	if (vma_pages(vma) > ORDLOCK_FAST_EPAGES)
		return -EINVAL;
	ordlock_vm_flags_clear(vma, VM_MAYWRITE);
	return vm_map_pages_zero(vma, fo->fd->epages, vma_pages(vma));
}

/**
 * ordlock_fast_mmap() - map the words or the owner page
 * @owner: the owner of the file; it pinned a key first
 * @vma: a shared mapping at offset 0 (the words, at most
 *	ORDLOCK_FAST_WORDS_SIZE rounded up to pages) or at
 *	ORDLOCK_FAST_OWNER_OFFSET (the owner page, one page)
 *
 * Called with the mm's lock held: takes no lock of the module (owner->fast
 * is read with smp_load_acquire(), and never changes once set). Neither
 * mapping is copied into a child by fork().
 *
 * Return: 0, -EINVAL (no pin yet, a private mapping, a wrong offset or
 * size), or the error of the mapping.
 */
int ordlock_fast_mmap(struct ordlock_owner *owner, struct vm_area_struct *vma)
{
	/* pairs with ordlock_fast_owner_get(): no owner->lock here */
	struct ordlock_fast_owner *fo = smp_load_acquire(&owner->fast);
	unsigned long npages = vma_pages(vma);

	if (!fo || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	ordlock_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	if (vma->vm_pgoff == 0) {
		if (npages > ORDLOCK_FAST_NPAGES)
			return -EINVAL;
		return vm_map_pages_zero(vma, fo->fd->pages, npages);
	}
	if (vma->vm_pgoff == ORDLOCK_FAST_EDGES_OFFSET >> PAGE_SHIFT)
		return ordlock_fast_edges_mmap(fo, vma);
	if (vma->vm_pgoff != ORDLOCK_FAST_OWNER_OFFSET >> PAGE_SHIFT || npages != 1)
		return -EINVAL;
	return vm_map_pages_zero(vma, &fo->page, 1);
}

/**
 * __ordlock_fast_owner_death() - the owner is destroyed (its file
 *	released): let go of every word of its domain that names it, then
 *	free its index and its fast state
 * @owner: an owner being destroyed, locked
 */
void __ordlock_fast_owner_death(struct ordlock_owner *owner)
{
	struct ordlock_fast_owner *fo = owner->fast;
	struct ordlock_fast_domain *fd;
	u32 slot, n;

	if (!fo)
		return;
	fd = fo->fd;
	/* pairs with the pin: a slot below the count is written */
	n = smp_load_acquire(&fd->nslots);
	for (slot = 0; slot < n; slot++)
		if (ordlock_fast_names(fd, slot, fo->index))
			ordlock_fast_let_go(fd, slot, fo->index, 0, true);
	mutex_lock(&ordlock_fast_lock);
	/* Its pins and its stale incarnations go with it */
	for_each_set_bit(slot, fo->pinned, ORDLOCK_FAST_SLOTS)
		fd->pins[slot]--;
	for_each_set_bit(slot, fo->stale, ORDLOCK_FAST_SLOTS)
		fd->stale[slot]--;
	/* Waits for the views and walks that look at it (__ordlock_fast_holder()) */
	xa_erase(&fd->owners, fo->index);
	ida_free(&fd->indices, fo->index);
	mutex_unlock(&ordlock_fast_lock);
	owner->fast = NULL;
	put_page(fo->page);
	ordlock_domain_put(fo->domain);
	kfree(fo);
}

/**
 * ordlock_fast_domain_free() - free the fast state of a domain that is
 *	freed, or whose fast path was turned off (nobody is in it, and no
 *	owner has fast state in it): its keys are unpinned
 * @domain: the domain
 */
void ordlock_fast_domain_free(struct ordlock_domain *domain)
{
	struct ordlock_fast_domain *fd;
	struct ordlock_fast_slot *s;
	struct ordlock_bucket *bucket;
	struct ordlock_resource *res;
	unsigned int i, idle = 0, n = 0;

	/* against a pin that would find the state after a quick turn on */
	mutex_lock(&ordlock_fast_lock);
	fd = xa_load(&ordlock_fast_domains, domain->id);
	if (!fd) {
		mutex_unlock(&ordlock_fast_lock);
		return;
	}
	/* the keys that lost their slot first, a grace period after */
	ordlock_fast_retire_poll(fd, true);
	for (i = 0; i < fd->nslots; i++) {
		s = ordlock_fast_slot(fd, i);
		if (!s)
			continue;
		n++;
		res = s->res;
		bucket = ordlock_res_bucket(res);
		spin_lock(&bucket->lock);
		res->fast = 0;
		if (ordlock_resource_put_unused(bucket, res)) {
			/* As every resource that turns idle: out of the domain's count */
			ordlock_gauge_dec(&domain->resources);
			idle++;
		}
		spin_unlock(&bucket->lock);
	}
	if (idle)
		ordlock_table_uncharge(idle);
	ordlock_table_pin(-(s64)n);
	/* No resource is marked any more: nothing looks it up */
	xa_erase(&ordlock_fast_domains, domain->id);
	mutex_unlock(&ordlock_fast_lock);
	/* lockless lookups that found the state are gone before it is freed */
	synchronize_rcu();
	for (i = 0; i < fd->nslots; i++)
		kfree(rcu_dereference_protected(fd->slots[i], 1));
	for (i = 0; i < ORDLOCK_FAST_NPAGES; i++)
		put_page(fd->pages[i]);
	ordlock_fast_edges_free(fd);
	ida_destroy(&fd->indices);
	xa_destroy(&fd->owners);
	kvfree(fd);
}
