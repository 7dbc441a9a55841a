/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fast path (docs/fastpath.md): per domain, module-owned pages of
 * 64-bit words, one per pinned key, that the members take and let go of
 * by compare-and-swap in user space. Its files: the word protocol
 * (fastpath.c), an owner's fast holds (fast_owner.c), the device side
 * (fast_dev.c), and what they share (fast_internal.h).
 *
 * The engine reaches it through the hooks below and nothing else, one per
 * operation, as cluster.h does for the cluster variant: each is inline
 * and returns at once (one load and one branch) for a key that is not
 * pinned or an owner without fast state, and calls the fast path's
 * function (named __ordlock_fast_*, for the hooks alone) otherwise. Who
 * calls them: resource.c the word's (claim, settle, queued, holder: the
 * views ask resource.c, ordlock_res_word_holder()); request.c a request's
 * (check, granted, take over, holds, release, kernel bit, held, and an
 * owner's death); lease.c a lease's (revoke, acknowledge, held); device.c
 * the device's (the ioctls, mmap, RELEASE_ALL); domain.c a domain's
 * (its state freed, its pairs forgotten).
 */
#ifndef _ORDLOCK_FASTPATH_H
#define _ORDLOCK_FASTPATH_H

#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/types.h>

#include "owner.h"
#include "resource.h"

struct ordlock_domain;
struct ordlock_hold;
struct ordlock_revoked_key;
struct ordlock_rkey;
struct vm_area_struct;

/* The word protocol (fastpath.c): under the key's bucket lock */
bool __ordlock_fast_claim(struct ordlock_resource *res);
bool __ordlock_fast_settle(struct ordlock_resource *res, bool pass);
bool __ordlock_fast_queued(struct ordlock_resource *res, bool pass);
bool __ordlock_fast_holder(struct ordlock_resource *res,
			   ordlock_word_holder_fn fn, void *arg);

/* An owner's fast holds (fast_owner.c): under owner->lock, but held */
u32 __ordlock_fast_held(struct ordlock_owner *owner);
int __ordlock_fast_check(struct ordlock_owner *owner,
			 const struct ordlock_rkey *keys, unsigned int n,
			 bool order, bool strict);
void __ordlock_fast_granted(struct ordlock_owner *owner,
			    const struct ordlock_rkey *keys, unsigned int n);
int __ordlock_fast_take_over(struct ordlock_owner *owner,
			     const struct ordlock_rkey *key,
			     struct ordlock_hold *hold);
int __ordlock_fast_holds(struct ordlock_owner *owner,
			 const struct ordlock_rkey *key);
void __ordlock_fast_release_key(struct ordlock_owner *owner,
				const struct ordlock_rkey *key);
unsigned int __ordlock_fast_release_all(struct ordlock_owner *owner);
void __ordlock_fast_kernel_sync(struct ordlock_owner *owner, bool busy);
unsigned int __ordlock_fast_revoke(struct ordlock_owner *owner,
				   struct ordlock_revoked_key *keys,
				   unsigned int max);
void __ordlock_fast_acknowledge(struct ordlock_owner *owner);

/* The device side (fast_dev.c) */
void __ordlock_fast_owner_death(struct ordlock_owner *owner);

/*
 * The word's hooks (resource.c), under the bucket lock of @res
 */

/*
 * ordlock_fast_claim() - a grant on @res, whose holder counts allow it,
 * may go: for a pinned key, its word is taken for the kernel's holders
 * first (false: a member holds it, or the word is corrupt)
 */
static inline bool ordlock_fast_claim(struct ordlock_resource *res)
{
	return likely(!res->fast) || __ordlock_fast_claim(res);
}

/*
 * ordlock_fast_settle() - the holders or waiters of @res changed: put a
 * pinned key's word right; @pass: the first waiter was woken for the free
 * key and may still be passed (ordlock_res_passable()), so a free word is
 * left free for it, with WAITERS. Return: true when the queue is to be
 * granted from its head (the word let it go), which the caller does.
 */
static inline bool ordlock_fast_settle(struct ordlock_resource *res, bool pass)
{
	return unlikely(res->fast) && __ordlock_fast_settle(res, pass);
}

/*
 * ordlock_fast_queued() - a waiter was queued on @res: behind a member,
 * make its release come to the kernel. @pass and the return: as
 * ordlock_fast_settle().
 */
static inline bool ordlock_fast_queued(struct ordlock_resource *res, bool pass)
{
	return unlikely(res->fast) && __ordlock_fast_queued(res, pass);
}

/*
 * ordlock_fast_holder() - the member that holds @res by the fast path, for
 * @fn (struct ordlock_word_holder, resource.h); false when none does
 */
static inline bool ordlock_fast_holder(struct ordlock_resource *res,
				       ordlock_word_holder_fn fn, void *arg)
{
	return unlikely(res->fast) && __ordlock_fast_holder(res, fn, arg);
}

/*
 * An owner's hooks: under owner->lock, but ordlock_fast_held(). owner->fast
 * is set under owner->lock, and cleared only when nothing else can reach
 * the owner.
 */

/* ordlock_fast_held() - the keys @owner holds by the fast path (a count) */
static inline u32 ordlock_fast_held(struct ordlock_owner *owner)
{
	return READ_ONCE(owner->fast) ? __ordlock_fast_held(owner) : 0;
}

/*
 * ordlock_fast_check() - a request's order checks against the keys its
 * owner holds by the fast path. Return: 0, or -EDEADLK recorded.
 */
static inline int ordlock_fast_check(struct ordlock_owner *owner,
				     const struct ordlock_rkey *keys,
				     unsigned int n, bool order, bool strict)
{
	if (likely(!owner->fast))
		return 0;
	return __ordlock_fast_check(owner, keys, n, order, strict);
}

/* ordlock_fast_granted() - a grant learns its order from the fast holds */
static inline void ordlock_fast_granted(struct ordlock_owner *owner,
					const struct ordlock_rkey *keys,
					unsigned int n)
{
	if (unlikely(owner->fast))
		__ordlock_fast_granted(owner, keys, n);
}

/*
 * ordlock_fast_take_over() - the kernel takes over @key, which @owner
 * holds by the fast path, as @hold. Return: 0 (@hold is on the key's
 * holders), -ENOENT (not held so), or -EIO (the word kept changing).
 */
static inline int ordlock_fast_take_over(struct ordlock_owner *owner,
					 const struct ordlock_rkey *key,
					 struct ordlock_hold *hold)
{
	if (likely(!owner->fast))
		return -ENOENT;
	return __ordlock_fast_take_over(owner, key, hold);
}

/* ordlock_fast_holds() - the slot of @key if @owner holds it so, else -1 */
static inline int ordlock_fast_holds(struct ordlock_owner *owner,
				     const struct ordlock_rkey *key)
{
	if (likely(!owner->fast))
		return -1;
	return __ordlock_fast_holds(owner, key);
}

/* ordlock_fast_release_key() - RELEASE of a key the kernel does not hold */
static inline void ordlock_fast_release_key(struct ordlock_owner *owner,
					    const struct ordlock_rkey *key)
{
	if (unlikely(owner->fast))
		__ordlock_fast_release_key(owner, key);
}

/* ordlock_fast_release_all() - RELEASE_ALL's part; the keys let go */
static inline unsigned int ordlock_fast_release_all(struct ordlock_owner *owner)
{
	return unlikely(owner->fast) ? __ordlock_fast_release_all(owner) : 0;
}

/*
 * ordlock_fast_kernel_sync() - the owner page's KERNEL bit says whether
 * the kernel holds keys for @owner (or @busy: a request is starting)
 */
static inline void ordlock_fast_kernel_sync(struct ordlock_owner *owner,
					    bool busy)
{
	if (unlikely(owner->fast))
		__ordlock_fast_kernel_sync(owner, busy);
}

/* ordlock_fast_revoke() - a lease expired: its fast holds are let go */
static inline unsigned int ordlock_fast_revoke(struct ordlock_owner *owner,
					       struct ordlock_revoked_key *keys,
					       unsigned int max)
{
	return owner->fast ? __ordlock_fast_revoke(owner, keys, max) : 0;
}

/* ordlock_fast_acknowledge() - a revoked owner acknowledged */
static inline void ordlock_fast_acknowledge(struct ordlock_owner *owner)
{
	if (owner->fast)
		__ordlock_fast_acknowledge(owner);
}

/*
 * ordlock_fast_owner_death() - @owner is destroyed: the words that name
 * it are let go, its index and its fast state freed
 */
static inline void ordlock_fast_owner_death(struct ordlock_owner *owner)
{
	if (owner->fast)
		__ordlock_fast_owner_death(owner);
}

/*
 * The device's and the domain's entries (fast_dev.c): not on any path a
 * lock takes, so plain calls
 */
long ordlock_fast_ioctl(struct ordlock_owner *owner, unsigned int cmd,
			void __user *uarg);
int ordlock_fast_mmap(struct ordlock_owner *owner, struct vm_area_struct *vma);
void ordlock_fast_domain_free(struct ordlock_domain *domain);
void ordlock_fast_edges_reset(struct ordlock_domain *domain);

#endif /* _ORDLOCK_FASTPATH_H */
