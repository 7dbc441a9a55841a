// SPDX-License-Identifier: GPL-2.0
/*
 * The fast path's word protocol (docs/fastpath.md, issue 28): a domain
 * given the fast path by an admin has module-owned pages of 64-bit words,
 * one per pinned key (a *slot*), mapped read-write into its members; a
 * member takes a free word and lets go of its own by compare-and-swap in
 * user space, and enters the kernel only when there is something to
 * referee. This file is the kernel's side of a word, under the key's
 * bucket lock, and nothing else: an owner's words as its requests and
 * leases see them are fast_owner.c's; the ioctls, the pages and the
 * state's life are fast_dev.c's (what the three share: fast_internal.h).
 * As futex keeps the word's protocol in core.c and the PI state in pi.c.
 *
 * A word is {generation: 32, owner: 24, WAITERS: 1, spare: 7}. Owner 0 is
 * free; ORDLOCK_FAST_OWNER_KERNEL stands for the holders the kernel granted
 * (struct ordlock_resource's holders, any mode); any other owner is the
 * index of an owner of the domain that holds the key exclusively by the
 * fast path. WAITERS is set, by the kernel only, when its queue of the key
 * has waiters while a fast-path owner holds it: that owner's release CAS
 * then fails and it lets go with ORDLOCK_IOC_FAST_RELEASE, which hands the
 * key to the first waiter as FUTEX_UNLOCK_PI does (the word goes from the
 * old owner to the kernel's holders without being free in between:
 * ordlock_fast_let_go()), or, when its first waiter may be passed (the
 * fairness rule, resource.c), frees it with WAITERS kept, {g, 0, WAITERS},
 * and wakes that waiter: a member's CAS (or a kernel request) that comes
 * first may take it, keeping WAITERS ({g + 1, member, WAITERS}), so that
 * its release comes here again; the woken waiter takes it from the kernel
 * (the claim) or, having lost it, stays first and counts a pass (issue 40).
 *
 * The kernel's side: a pinned key's resource is marked fast, never turns
 * idle while its domain lives, and the grant decisions of resource.c take
 * its word first (the claim); a release or a wait that ends puts the word
 * right (the settle); a waiter that queues behind a fast-path holder sets
 * WAITERS (queued). resource.c is the one engine file that calls these,
 * through the inline hooks of fastpath.h, which return at once for a key
 * that is not pinned. All of it under the key's bucket lock, and every
 * access to a word a load, a cmpxchg against what was loaded, or the one
 * fetch-or that sets WAITERS (ordlock_fast_reserve(): a queue is never
 * left unseen by a member that loops on the key): members may write
 * anything at any time. The loops are bounded (ORDLOCK_FAST_TRIES): a
 * member that keeps rewriting a word makes its key look busy (or the call
 * fail with EIO), never the kernel spin.
 *
 * Nothing here calls back into resource.c: where a word says the queue
 * may go, the settle says so and resource.c grants it (which comes back
 * here for the claim), so that the hooks go one way. One call leaves the
 * file: a waiter queued behind a member starts that member's lease
 * (ordlock_lease_fast_seen(), an allowed upward call, kmod/layers.txt),
 * which only posts a deadline and queues work.
 */
#include "domain.h"
#include "fast_internal.h"
#include "lease.h"
#include "owner.h"
#include "resource.h"

/* See fast_internal.h */
DEFINE_XARRAY(ordlock_fast_domains);

/*
 * The slot of a key, or -1; lockless, under RCU (or ordlock_fast_lock): a
 * slot found may be recycled afterwards unless the caller holds the key's
 * bucket lock with the key marked fast (ordlock_fast_lock_slot() for a
 * slot only)
 */
int ordlock_fast_lookup(struct ordlock_fast_domain *fd, u32 rank, u64 id)
{
	u32 h = ordlock_fast_hash(rank, id), i;
	struct ordlock_fast_slot *s;
	int ret = -1;
	u16 *hash, e;

	rcu_read_lock();
	/* pairs with the rebuild's rcu_assign_pointer() */
	hash = rcu_dereference(fd->hash);
	for (i = 0; i < ORDLOCK_FAST_HASH; i++) {
		/* pairs with the pin's release: the slot's key is written */
		e = smp_load_acquire(&hash[(h + i) & (ORDLOCK_FAST_HASH - 1)]);
		if (!e)
			break;
		if (e == ORDLOCK_FAST_TOMB)
			continue;
		s = rcu_dereference(fd->slots[e - 1]);
		if (s && s->rank == rank && s->id == id) {
			ret = e - 1;
			break;
		}
	}
	rcu_read_unlock();
	return ret;
}

/*
 * The word of a fast resource (under its bucket lock), or NULL: a key
 * that lost its slot is marked fast until its retirement ends, and is
 * then the kernel's alone (no member can reach it by a word)
 */
static u64 *ordlock_fast_res_word(const struct ordlock_resource *res)
{
	struct ordlock_fast_domain *fd;
	int slot;

	fd = xa_load(&ordlock_fast_domains, res->domain_id);
	if (WARN_ON_ONCE(!fd))
		return NULL;
	slot = ordlock_fast_lookup(fd, res->rank, res->id);
	if (slot < 0)
		return NULL;
	return ordlock_fast_wordp(fd, slot);
}

/**
 * __ordlock_fast_claim() - take the word of @res for the kernel's holders
 * @res: a fast resource whose holder counts allow a grant
 *
 * Return: true when the word is the kernel's (it was, or it was free and
 * is now, with a new generation): the caller may grant; false when a
 * fast-path owner holds the key, or the word is corrupt.
 */
bool __ordlock_fast_claim(struct ordlock_resource *res)
{
	u64 *wp = ordlock_fast_res_word(res);
	u64 old;
	int i;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	/* A key retiring from its slot: no word, the kernel's alone */
	if (!wp)
		return true;
	old = READ_ONCE(*wp);
	for (i = 0; i < ORDLOCK_FAST_TRIES; i++) {
		u32 owner = ORDLOCK_FAST_OWNER(old);

		if (owner == ORDLOCK_FAST_K)
			return true;
		/* Free, with WAITERS or not: resource.c decided who may take it */
		if (owner)
			return false;
		if (try_cmpxchg(wp, &old,
				ordlock_fast_make(old, ORDLOCK_FAST_GEN(old) + 1,
						  ORDLOCK_FAST_K)))
			return true;
	}
	return false;
}

static bool ordlock_fast_reserve(struct ordlock_resource *res, u64 *wp,
				 bool pass);

/**
 * __ordlock_fast_settle() - put the word of @res right after a change of
 *	its holders or waiters
 * @res: a fast resource
 * @pass: its first waiter was woken for the free key and may still be
 *	passed (ordlock_res_passable())
 *
 * The kernel's word with no kernel holder left turns free; WAITERS with an
 * empty queue is cleared; a queue whose word is free (or the kernel's with
 * no holder) is to be granted from its head: the word stays (or becomes,
 * by the grant's claim) the kernel's. With @pass, a free word is left
 * free for the woken waiter instead, {g, 0, WAITERS}: whoever comes first
 * takes it (the fairness rule).
 *
 * Return: true when the caller is to grant the queue from its head
 * (ordlock_res_grant_waiters()).
 */
bool __ordlock_fast_settle(struct ordlock_resource *res, bool pass)
{
	u64 *wp = ordlock_fast_res_word(res);
	bool held = res->nshared || res->nexcl;
	u64 old, new;
	int i;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (!wp)
		return false;
	old = READ_ONCE(*wp);
	for (i = 0; i < ORDLOCK_FAST_TRIES; i++) {
		u32 owner = ORDLOCK_FAST_OWNER(old);

		if (owner == ORDLOCK_FAST_K) {
			if (held)
				return false;
			if (!list_empty(&res->waiters) && !pass)
				return true;
			/* Free; for the woken waiter with WAITERS */
			new = ordlock_fast_freed(old, !list_empty(&res->waiters));
		} else if (owner) {
			/* A queue behind a member: its release must come here */
			if (!list_empty(&res->waiters))
				return !(old & ORDLOCK_FAST_WAITERS) &&
				       ordlock_fast_reserve(res, wp, pass);
			if (!(old & ORDLOCK_FAST_WAITERS))
				return false;
			new = old & ~ORDLOCK_FAST_WAITERS;
		} else if (list_empty(&res->waiters)) {
			/* Free for a waiter that left: WAITERS is cleared */
			if (!(old & ORDLOCK_FAST_WAITERS))
				return false;
			new = old & ~ORDLOCK_FAST_WAITERS;
		} else {
			return ordlock_fast_reserve(res, wp, pass);
		}
		if (try_cmpxchg(wp, &old, new))
			return false;
	}
	return false;
}

/*
 * The index of @owner in its domain's owner table, 0 when it has no fast
 * state: @owner is one an ordlock_word_holder_fn got (under the table's
 * lock, which keeps its fast state)
 */
static u32 ordlock_fast_index(const struct ordlock_owner *owner)
{
	const struct ordlock_fast_owner *fo = READ_ONCE(owner->fast);

	return fo ? fo->index : 0;
}

/*
 * The holder of a key that a waiter just queued behind (WAITERS set): its
 * lease starts, or keeps an earlier deadline (ordlock_lease_fast_seen());
 * under the owner table's lock
 */
static bool ordlock_fast_seen_fn(void *arg, const struct ordlock_word_holder *h)
{
	/* An owner whose index is being freed has no fast state any more */
	if (h->owner && ordlock_fast_index(h->owner) == h->index)
		ordlock_lease_fast_seen(h->owner, READ_ONCE(h->domain->max_hold_ms));
	return true;
}

/*
 * ordlock_fast_reserve() - the queue of @res must be seen: set WAITERS in
 * its word @wp, under the bucket lock, with one atomic fetch-or (issue 40,
 * docs/fastpath.md "Queueing behind a member that loops"). A CAS loop that
 * sets it can be made to fail for ever by a member that takes and lets go
 * of the key by CAS, each time between the kernel's load and its CAS: the
 * waiter was then left queued without WAITERS, the member's releases never
 * came to the kernel, and once it stopped the waiter slept on a free key
 * until its timeout. No member's write makes a fetch-or fail; the kernel
 * acts on the word it replaced:
 *
 *  - a member's index: WAITERS is set behind it, its release CAS (which
 *    expects WAITERS clear) fails and it lets go through FAST_RELEASE,
 *    which hands the key over; its lease starts (max-hold);
 *  - free: the word is {g, 0, WAITERS}; unless the first waiter was woken
 *    for it and may be passed (@pass: the word stays so, for whoever
 *    comes first, the fairness rule), it is the kernel's to take,
 *    {g + 1, KERNEL}, and the queue is granted;
 *  - the kernel's: WAITERS was not needed and is cleared again (no member
 *    writes a KERNEL word); the queue goes on as the holders allow.
 *
 * The CAS of a free word to the kernel's fails on a member's CAS that took
 * {g, 0, WAITERS} first (passing: WAITERS is then set behind it, as
 * wanted), or on a word a member wrote by hand (it breaks its own
 * domain): either way the word is left as it is.
 *
 * Return: true when the caller is to grant the queue from its head.
 */
static bool ordlock_fast_reserve(struct ordlock_resource *res, u64 *wp,
				 bool pass)
{
	u64 old = atomic64_fetch_or(ORDLOCK_FAST_WAITERS, (atomic64_t *)wp);
	u64 set = old | ORDLOCK_FAST_WAITERS;
	u32 owner = ORDLOCK_FAST_OWNER(old);

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (owner == ORDLOCK_FAST_K) {
		if (!(old & ORDLOCK_FAST_WAITERS))
			cmpxchg(wp, set, old);
		return !res->nshared && !res->nexcl;
	}
	if (!owner) {
		/* Free for the woken first waiter, or whoever comes first */
		if (pass)
			return false;
		return cmpxchg(wp, set, ordlock_fast_make(old, ORDLOCK_FAST_GEN(old) + 1,
							  ORDLOCK_FAST_K)) == set;
	}
	/*
	 * Seen contended: the holder's lease starts, or keeps its earlier
	 * deadline. Each waiter that queues says so, not only the first: a
	 * max-hold set while the key was contended already applies from the
	 * next waiter on.
	 */
	__ordlock_fast_holder(res, ordlock_fast_seen_fn, NULL);
	return false;
}

/**
 * __ordlock_fast_queued() - a waiter was queued on @res: make sure it will
 *	be woken
 * @res: a fast resource
 * @pass: as __ordlock_fast_settle()'s
 *
 * Behind a fast-path holder, WAITERS is set (so that its release comes to
 * the kernel); a free word is taken for the queue (ordlock_fast_reserve()).
 *
 * Return: true when the caller is to grant the queue from its head at once.
 */
bool __ordlock_fast_queued(struct ordlock_resource *res, bool pass)
{
	u64 *wp = ordlock_fast_res_word(res);

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (!wp)
		return false;
	return ordlock_fast_reserve(res, wp, pass);
}

/**
 * __ordlock_fast_holder() - the member that holds @res by the fast path, as
 *	the key's word names it (ordlock_res_word_holder() says more)
 * @res: a resource; its bucket lock held
 * @fn: called when the word names a member's index (not free, not the
 *	kernel's holders), with the key's domain, the owner of that index in
 *	the domain's owner table (NULL when the index names no owner: the word
 *	is garbage, or names an owner that is going), the index and the
 *	generation. Called under the owner table's lock: @fn may not sleep,
 *	and the owner may be used only until it returns
 * @arg: passed to @fn
 *
 * The word is read once (READ_ONCE()); a member may rewrite it at any time,
 * so what @fn gets is what the word said at that instant, and the owner is
 * looked up in the kernel's own table, never taken from a user page.
 * Bounded: one hash lookup and one xarray lookup.
 *
 * Return: what @fn returned; false when @res is not a fast key or no member
 * holds it.
 */
bool __ordlock_fast_holder(struct ordlock_resource *res,
			   ordlock_word_holder_fn fn, void *arg)
{
	struct ordlock_word_holder h = {};
	struct ordlock_fast_domain *fd;
	u64 word;
	int slot;
	bool ret;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (likely(!res->fast))
		return false;
	/* res->fast under the bucket lock: the fast state is not freed */
	fd = xa_load(&ordlock_fast_domains, res->domain_id);
	if (WARN_ON_ONCE(!fd))
		return false;
	slot = ordlock_fast_lookup(fd, res->rank, res->id);
	/* retiring from its slot: no member holds it */
	if (slot < 0)
		return false;
	word = READ_ONCE(*ordlock_fast_wordp(fd, slot));
	h.index = ORDLOCK_FAST_OWNER(word);
	if (!h.index || h.index == ORDLOCK_FAST_K)
		return false;
	h.gen = ORDLOCK_FAST_GEN(word);
	h.domain = fd->domain;
	xa_lock(&fd->owners);
	h.owner = xa_load(&fd->owners, h.index);
	ret = fn(arg, &h);
	xa_unlock(&fd->owners);
	return ret;
}
