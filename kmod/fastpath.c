// SPDX-License-Identifier: GPL-2.0
/*
 * The fast path (docs/fastpath.md, issue 28): a domain given it by an admin
 * has module-owned pages of 64-bit words, one per pinned key (a *slot*),
 * mapped read-write into its members; a member takes a free word and lets
 * go of its own by compare-and-swap in user space, and enters the kernel
 * only when there is something to referee.
 *
 * Over 1000 lines: the words, the owner pages, the learned pairs' bitmap
 * and the fast ioctls share this file's slot and owner helpers; the ioctls
 * (with FAST_LEARN, which calls the learned order of order.c: an allowed
 * upward call, kmod/layers.txt) are to move to a file of their own.
 *
 * A word is {generation: 32, owner: 24, WAITERS: 1, spare: 7}. Owner 0 is
 * free; ORDLOCK_FAST_OWNER_KERNEL stands for the holders the kernel granted
 * (struct ordlock_resource's holders, any mode); any other owner is the
 * index of an owner of the domain that holds the key exclusively by the
 * fast path. WAITERS is set, by the kernel only, when its queue of the key
 * has waiters while a fast-path owner holds it: that owner's release CAS
 * then fails and it lets go with ORDLOCK_IOC_FAST_RELEASE, which hands the
 * key to the first waiter as FUTEX_UNLOCK_PI does (the word goes from the
 * old owner to the kernel's holders without being free in between).
 *
 * The kernel's side: a pinned key's resource is marked fast, never turns
 * idle while its domain lives, and the grant decisions of resource.c take
 * its word first (ordlock_fast_claim()); a release or a wait that ends
 * puts the word right (ordlock_fast_settle()); a waiter that queues behind
 * a fast-path holder sets WAITERS (ordlock_fast_queued()). All of it under
 * the key's bucket lock, and every access to a word a load or a cmpxchg
 * against what was loaded: members may write anything at any time. The
 * loops are bounded (ORDLOCK_FAST_TRIES): a member that keeps rewriting a
 * word makes its key look busy (or the call fail with EIO), never the
 * kernel spin.
 *
 * The learned order (policies detect and timeout): a page of header and
 * ORDLOCK_FAST_SLOTS^2 bits (128 KiB) per domain, struct
 * ordlock_fast_edges, mapped read-only into the members: a bit per pair
 * of slots (held -> taken) whose edge the kernel learned. A member that
 * took a key by the fast path while holding one whose pair is not known
 * calls ORDLOCK_IOC_FAST_LEARN: the kernel checks that both words name
 * it, learns the edge (order.c, reported as for any grant) and sets the
 * bit; a known pair costs the member no system call. Only the kernel
 * writes these pages (under ordlock_fast_lock); it never reads back
 * anything of them but its own bits.
 *
 * Death: the file's release lets go of every word of the domain that
 * names the owner (the kernel scans the words rather than trust the held
 * stack of the owner page); the owner's index is reused only after that.
 *
 * Locks: ordlock_fast_lock (a mutex, below owner->lock, above the bucket
 * locks: main.c) serialises the creation of a domain's fast state and the
 * pinning of keys. A domain's fast state lives as long as the domain: it
 * is created on the first pin and freed with the domain
 * (ordlock_fast_domain_free()), and found from a resource by its domain id
 * in ordlock_fast_domains (an xarray).
 */
#include <linux/cred.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>
#include "compat.h"
#include "domain.h"
#include "fast_internal.h"
#include "lease.h"
#include "order.h"
#include "owner.h"
#include "resource.h"
#include "table.h"
#include "user.h"

/* See the head of the file */
static DEFINE_MUTEX(ordlock_fast_lock);
DEFINE_XARRAY(ordlock_fast_domains);
/* Keys pinned in all domains (resources kept in use by the fast path) */
static atomic64_t ordlock_fast_pinned = ATOMIC64_INIT(0);

/* The slot of a key, or -1; lockless */
int ordlock_fast_lookup(struct ordlock_fast_domain *fd, u32 rank, u64 id)
{
	u32 h = ordlock_fast_hash(rank, id), i;
	u16 e;

	for (i = 0; i < ORDLOCK_FAST_HASH; i++) {
		/* pairs with the pin's release: the slot's key is written */
		e = smp_load_acquire(&fd->hash[(h + i) & (ORDLOCK_FAST_HASH - 1)]);
		if (!e)
			return -1;
		if (fd->slots[e - 1].rank == rank && fd->slots[e - 1].id == id)
			return e - 1;
	}
	return -1;
}

/* The word of a fast resource (under its bucket lock), or NULL */
static u64 *ordlock_fast_res_word(const struct ordlock_resource *res)
{
	struct ordlock_fast_domain *fd;
	int slot;

	fd = xa_load(&ordlock_fast_domains, res->domain_id);
	if (WARN_ON_ONCE(!fd))
		return NULL;
	slot = ordlock_fast_lookup(fd, res->rank, res->id);
	if (WARN_ON_ONCE(slot < 0))
		return NULL;
	return ordlock_fast_wordp(fd, slot);
}

/**
 * ordlock_fast_claim() - take the word of @res for the kernel's holders
 * @res: a fast resource whose holder counts allow a grant
 *
 * Return: true when the word is the kernel's (it was, or it was free and
 * is now, with a new generation): the caller may grant; false when a
 * fast-path owner holds the key, or the word is corrupt.
 */
bool ordlock_fast_claim(struct ordlock_resource *res)
{
	u64 *wp = ordlock_fast_res_word(res);
	u64 old;
	int i;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (!wp)
		return false;
	old = READ_ONCE(*wp);
	for (i = 0; i < ORDLOCK_FAST_TRIES; i++) {
		u32 owner = ORDLOCK_FAST_OWNER(old);

		if (owner == ORDLOCK_FAST_K)
			return true;
		if (owner || (old & ORDLOCK_FAST_WAITERS))
			return false;
		if (try_cmpxchg(wp, &old,
				ordlock_fast_make(ORDLOCK_FAST_GEN(old) + 1,
						  ORDLOCK_FAST_K)))
			return true;
	}
	return false;
}

/**
 * ordlock_fast_settle() - put the word of @res right after a change of its
 *	holders or waiters
 * @res: a fast resource
 *
 * The kernel's word with no kernel holder left turns free; WAITERS with an
 * empty queue is cleared; a queue whose word is free (or the kernel's with
 * no holder) is granted from its head.
 */
void ordlock_fast_settle(struct ordlock_resource *res)
{
	u64 *wp = ordlock_fast_res_word(res);
	bool held = res->nshared || res->nexcl;
	u64 old, new;
	int i;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (!wp)
		return;
	old = READ_ONCE(*wp);
	for (i = 0; i < ORDLOCK_FAST_TRIES; i++) {
		u32 owner = ORDLOCK_FAST_OWNER(old);

		if (owner == ORDLOCK_FAST_K) {
			if (held)
				return;
			if (!list_empty(&res->waiters)) {
				ordlock_res_grant_waiters(res);
				return;
			}
			new = ordlock_fast_make(ORDLOCK_FAST_GEN(old), 0);
		} else if (owner) {
			if (!(old & ORDLOCK_FAST_WAITERS) || !list_empty(&res->waiters))
				return;
			new = old & ~ORDLOCK_FAST_WAITERS;
		} else {
			/* WAITERS without an owner: corrupt, left alone */
			if (list_empty(&res->waiters) || (old & ORDLOCK_FAST_WAITERS))
				return;
			ordlock_res_grant_waiters(res);
			return;
		}
		if (try_cmpxchg(wp, &old, new))
			return;
	}
}

/*
 * The holder of a key that a waiter just queued behind (WAITERS set): its
 * lease starts, or keeps an earlier deadline (ordlock_lease_fast_seen());
 * under the owner table's lock
 */
static bool ordlock_fast_seen_fn(void *arg, const struct ordlock_fast_holder *h)
{
	/* An owner whose index is being freed has no fast state any more */
	if (h->owner && ordlock_fast_index(h->owner) == h->index)
		ordlock_lease_fast_seen(h->owner, READ_ONCE(h->domain->max_hold_ms));
	return true;
}

/**
 * ordlock_fast_queued() - a waiter was queued on @res: make sure it will
 *	be woken
 * @res: a fast resource
 *
 * Behind a fast-path holder, WAITERS is set (so that its release comes to
 * the kernel); if the key was let go meanwhile, the queue is granted at
 * once from its head.
 */
void ordlock_fast_queued(struct ordlock_resource *res)
{
	u64 *wp = ordlock_fast_res_word(res);
	u64 old;
	int i;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (!wp)
		return;
	old = READ_ONCE(*wp);
	for (i = 0; ; i++) {
		u32 owner = ORDLOCK_FAST_OWNER(old);

		/* A member that keeps rewriting the word: left busy */
		if (i == ORDLOCK_FAST_TRIES)
			return;
		if (owner == ORDLOCK_FAST_K || !owner) {
			ordlock_fast_settle(res);
			return;
		}
		if ((old & ORDLOCK_FAST_WAITERS) ||
		    try_cmpxchg(wp, &old, old | ORDLOCK_FAST_WAITERS))
			break;
	}
	/*
	 * Seen contended: the holder's lease starts, or keeps its earlier
	 * deadline. Each waiter that queues says so, not only the first: a
	 * max-hold set while the key was contended already applies from the
	 * next waiter on.
	 */
	ordlock_fast_holder(res, ordlock_fast_seen_fn, NULL);
}

/**
 * ordlock_fast_holder() - the member that holds @res by the fast path, as
 *	the key's word names it
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
bool ordlock_fast_holder(struct ordlock_resource *res, ordlock_fast_holder_fn fn,
			 void *arg)
{
	struct ordlock_fast_holder h = {};
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
	if (WARN_ON_ONCE(slot < 0))
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

/**
 * ordlock_fast_index() - the index of @owner in its domain's owner table
 * @owner: an owner that an ordlock_fast_holder_fn got (under the table's
 *	lock, which keeps its fast state)
 *
 * Return: the index, 0 when the owner has no fast state.
 */
u32 ordlock_fast_index(const struct ordlock_owner *owner)
{
	const struct ordlock_fast_owner *fo = READ_ONCE(owner->fast);

	return fo ? fo->index : 0;
}

/**
 * ordlock_fast_held() - the keys @owner holds by the fast path now
 * @owner: an owner on the list of owners, ordlock_owners_lock held (its
 *	fast state is freed only after it leaves the list), or locked
 *
 * Counts the words of its domain that name its index, each read once
 * without a lock (so a count, not a snapshot): at most ORDLOCK_FAST_SLOTS
 * loads, for the views of the owners.
 *
 * Return: the count; 0 for an owner without fast state.
 */
u32 ordlock_fast_held(struct ordlock_owner *owner)
{
	/* pairs with ordlock_fast_owner_get() */
	struct ordlock_fast_owner *fo = smp_load_acquire(&owner->fast);
	u32 slot, n, held = 0;

	if (!fo)
		return 0;
	/* pairs with the pin: a slot below the count is written */
	n = smp_load_acquire(&fo->fd->nslots);
	for (slot = 0; slot < n; slot++)
		held += ORDLOCK_FAST_OWNER(READ_ONCE(*ordlock_fast_wordp(fo->fd, slot))) ==
			fo->index;
	return held;
}

/*
 * The first fast hold of @owner (as a word names it) that @key may not
 * follow: it does not sort below @key, or with @strict ranks its rank is
 * not below. The lowest such, and in *@top the highest fast hold.
 */
static const struct ordlock_fast_slot *
ordlock_fast_above(struct ordlock_fast_owner *fo, const struct ordlock_rkey *key,
		   bool strict, const struct ordlock_fast_slot **top)
{
	const struct ordlock_fast_slot *s, *low = NULL;
	u32 slot, nslots;

	*top = NULL;
	/* pairs with the pin: a slot below the count is written */
	nslots = smp_load_acquire(&fo->fd->nslots);
	for (slot = 0; slot < nslots; slot++) {
		if (ORDLOCK_FAST_OWNER(READ_ONCE(*ordlock_fast_wordp(fo->fd, slot))) !=
		    fo->index)
			continue;
		s = &fo->fd->slots[slot];
		if (!*top || ordlock_key_cmp(s->rank, s->id, (*top)->rank, (*top)->id) > 0)
			*top = s;
		if (ordlock_key_cmp(s->rank, s->id, key->rank, key->id) < 0 &&
		    !(strict && s->rank >= key->rank))
			continue;
		if (!low || ordlock_key_cmp(s->rank, s->id, low->rank, low->id) < 0)
			low = s;
	}
	return low;
}

/**
 * ordlock_fast_check() - the order checks of a request in the kernel
 *	against the keys its owner holds by the fast path
 * @owner: the owner, locked
 * @keys: the request's keys, validated, sorted and merged
 * @n: their number, at least 1
 * @order: the order rule (an enforce domain): the first key must sort above
 *	every key held by the fast path (with @strict ranks, have a rank above
 *	every such key's); without it, only that no key of the request is one
 * @strict: strict ranks
 *
 * The kernel's own holds are checked by the caller (request.c); the keys
 * taken by a compare-and-swap in user space are not among them, yet they
 * bind a request that goes to the kernel as much: one in shared mode, with
 * a lease or a token, REORDER, or of another process of the same owner (a
 * fork child, a nested "ordlockctl exec"). The fast holds are the words of
 * the domain that name the owner, each read once (the held stack of the
 * owner page is the library's and not trusted): a member that rewrites its
 * words changes only what its own requests are judged against.
 *
 * Return: 0, or -EDEADLK with the failure recorded: reason ORDER (STRICT
 * when only the strict rule is broken), the key and the lowest fast hold
 * it may not follow, or the key that is held already.
 */
int ordlock_fast_check(struct ordlock_owner *owner, const struct ordlock_rkey *keys,
		       unsigned int n, bool order, bool strict)
{
	/* pairs with ordlock_fast_owner_get() */
	struct ordlock_fast_owner *fo = smp_load_acquire(&owner->fast);
	const struct ordlock_fast_slot *bad = NULL, *top;
	const struct ordlock_rkey *key = &keys[0];
	u32 reason = ORDLOCK_REASON_ORDER;
	unsigned int i;
	int slot, ret;

	lockdep_assert_held(&owner->lock);
	if (!fo)
		return 0;
	if (order) {
		bad = ordlock_fast_above(fo, key, false, &top);
		if (!bad && strict) {
			bad = ordlock_fast_above(fo, key, true, &top);
			reason = ORDLOCK_REASON_STRICT;
		}
	} else {
		/* A key held already: the request would wait for itself */
		for (i = 0; i < n && !bad; i++) {
			slot = ordlock_fast_lookup(fo->fd, keys[i].rank, keys[i].id);
			if (slot >= 0 &&
			    ORDLOCK_FAST_OWNER(READ_ONCE(*ordlock_fast_wordp(fo->fd, slot))) ==
			    fo->index) {
				bad = &fo->fd->slots[slot];
				key = &keys[i];
			}
		}
	}
	if (!bad)
		return 0;
	ret = ordlock_owner_fail(owner, reason, -EDEADLK, key);
	owner->failure.held.rank = bad->rank;
	owner->failure.held.id = bad->id;
	owner->failure.held.mode = ORDLOCK_MODE_EXCLUSIVE;
	return ret;
}

/**
 * ordlock_fast_granted() - learn the order of a grant in the kernel after
 *	keys held by the fast path
 * @owner: the owner, locked, whose request was granted @keys
 * @keys: the keys granted
 * @n: their number
 *
 * In a domain that learns, the edges from the highest key the owner holds
 * by the fast path (the top of an honest member's stack: its fast
 * acquires are ascending) to each key granted are learned and reported,
 * as for a grant after the kernel's own holds (ordlock_order_grant()).
 */
void ordlock_fast_granted(struct ordlock_owner *owner, const struct ordlock_rkey *keys,
			  unsigned int n)
{
	/* pairs with ordlock_fast_owner_get() */
	struct ordlock_fast_owner *fo = smp_load_acquire(&owner->fast);
	const struct ordlock_fast_slot *top;
	unsigned int i;

	lockdep_assert_held(&owner->lock);
	if (!fo || READ_ONCE(owner->domain->policy) == ORDLOCK_POLICY_ENFORCE)
		return;
	ordlock_fast_above(fo, &keys[0], false, &top);
	for (i = 0; top && i < n; i++)
		if (!ordlock_order_learn_pair(owner, top->rank, top->id, keys[i].rank,
					      keys[i].id, keys[i].mode))
			break;
}

/**
 * ordlock_fast_adopt() - turn a key @owner holds by the fast path into a
 *	hold of the kernel's, for a request that needs it there
 * @owner: the owner, locked
 * @key: the key (its mode is ignored)
 *
 * A conversion (ORDLOCK_IOC_CONVERT) works on the kernel's holds; a key
 * taken by CAS is the owner's all the same, so the kernel takes it over
 * first: under the key's bucket lock its word goes from {g, owner, W} to
 * {g + 1, KERNEL} (WAITERS is for members' holds only; the queue stays
 * and is granted from when the kernel's hold goes), and the owner gets an
 * exclusive hold with a new token, as a grant would give it. The member's
 * library drops the key from its stack (its word no longer names it).
 *
 * Return: the hold (on owner->held), NULL when the owner does not hold
 * @key by the fast path, or an ERR_PTR with the failure recorded (-ENOMEM,
 * the user's key limit, -EIO when the word kept changing); nothing is
 * changed then.
 */
struct ordlock_hold *ordlock_fast_adopt(struct ordlock_owner *owner,
					const struct ordlock_rkey *key)
{
	struct ordlock_fast_owner *fo = owner->fast;
	struct ordlock_resource *res;
	struct ordlock_bucket *bucket;
	struct ordlock_hold *hold;
	LIST_HEAD(list);
	int slot, ret, i;
	u64 *wp, old;

	lockdep_assert_held(&owner->lock);
	if (!fo)
		return NULL;
	slot = ordlock_fast_lookup(fo->fd, key->rank, key->id);
	if (slot < 0)
		return NULL;
	wp = ordlock_fast_wordp(fo->fd, slot);
	if (ORDLOCK_FAST_OWNER(READ_ONCE(*wp)) != fo->index)
		return NULL;
	ret = ordlock_owner_get_holds(owner, 1, &list);
	if (ret) {
		ordlock_owner_fail(owner, ORDLOCK_REASON_NOMEM, ret, key);
		return ERR_PTR(ret);
	}
	ret = ordlock_user_charge(owner->user, ORDLOCK_USER_KEYS, 1, owner->user_exempt);
	if (ret) {
		ordlock_owner_fail(owner, ORDLOCK_REASON_USER_LIMIT, ret, key);
		goto put;
	}
	hold = list_first_entry(&list, struct ordlock_hold, owner_node);
	res = fo->fd->slots[slot].res;
	bucket = ordlock_res_bucket(res);
	spin_lock(&bucket->lock);
	old = READ_ONCE(*wp);
	ret = -EIO;
	for (i = 0; i < ORDLOCK_FAST_TRIES; i++) {
		if (ORDLOCK_FAST_OWNER(old) != fo->index) {
			ret = -ENOENT;
			break;
		}
		if (try_cmpxchg(wp, &old, ordlock_fast_make(ORDLOCK_FAST_GEN(old) + 1,
							    ORDLOCK_FAST_K))) {
			ret = 0;
			break;
		}
	}
	if (!ret) {
		hold->res = res;
		hold->owner = owner;
		hold->mode = ORDLOCK_MODE_EXCLUSIVE;
		ordlock_res_add_holder(res, &hold->res_node, ORDLOCK_MODE_EXCLUSIVE);
	}
	spin_unlock(&bucket->lock);
	if (ret)
		goto uncharge;
	list_del(&hold->owner_node);
	owner->last_token = ordlock_domain_next_token(owner->domain);
	hold->token = owner->last_token;
	ordlock_owner_insert_hold(owner, hold);
	return hold;

uncharge:
	ordlock_user_uncharge(owner->user, ORDLOCK_USER_KEYS, 1);
	if (ret == -EIO)
		ordlock_owner_fail(owner, ORDLOCK_REASON_INVALID, ret, key);
put:
	ordlock_owner_put_holds(owner, &list);
	return ret == -ENOENT ? NULL : ERR_PTR(ret);
}

/*
 * Let go of the word of @slot held by owner @index (at generation @gen,
 * unless @any_gen): free it, or hand it to the queue's head. Return: 0,
 * -ENOENT when the word is not that owner's, -EIO when it kept changing.
 */
int ordlock_fast_let_go(struct ordlock_fast_domain *fd, u32 slot, u32 index,
			u32 gen, bool any_gen)
{
	struct ordlock_resource *res = fd->slots[slot].res;
	struct ordlock_bucket *bucket = ordlock_res_bucket(res);
	u64 *wp = ordlock_fast_wordp(fd, slot);
	int ret = -EIO, i;
	u64 old, new;

	spin_lock(&bucket->lock);
	old = READ_ONCE(*wp);
	for (i = 0; i < ORDLOCK_FAST_TRIES; i++) {
		if (ORDLOCK_FAST_OWNER(old) != index ||
		    (!any_gen && ORDLOCK_FAST_GEN(old) != gen)) {
			ret = -ENOENT;
			break;
		}
		if (list_empty(&res->waiters))
			new = ordlock_fast_make(ORDLOCK_FAST_GEN(old), 0);
		else
			new = ordlock_fast_make(ORDLOCK_FAST_GEN(old) + 1,
						ORDLOCK_FAST_K);
		if (try_cmpxchg(wp, &old, new)) {
			if (!list_empty(&res->waiters)) {
				ordlock_res_grant_waiters(res);
				ordlock_fast_settle(res);
			}
			ret = 0;
			break;
		}
	}
	spin_unlock(&bucket->lock);
	return ret;
}

/**
 * ordlock_fast_holds() - whether @owner holds @key by the fast path
 * @owner: the owner, locked
 * @key: the key (its mode is ignored)
 *
 * Return: its slot when the key's word names the owner, else -1.
 */
int ordlock_fast_holds(struct ordlock_owner *owner, const struct ordlock_rkey *key)
{
	struct ordlock_fast_owner *fo = owner->fast;
	int slot;

	lockdep_assert_held(&owner->lock);
	if (!fo)
		return -1;
	slot = ordlock_fast_lookup(fo->fd, key->rank, key->id);
	if (slot < 0 ||
	    ORDLOCK_FAST_OWNER(READ_ONCE(*ordlock_fast_wordp(fo->fd, slot))) != fo->index)
		return -1;
	return slot;
}

/**
 * ordlock_fast_drop() - a RELEASE in the kernel of keys @owner holds by the
 *	fast path
 * @owner: the owner, locked
 * @slot: a slot ordlock_fast_holds() found, or -1 for every word that
 *	names the owner (RELEASE_ALL)
 *
 * The keys an owner holds are its own whichever way it took them: a
 * process of the owner that took none of them by CAS (a fork child, which
 * goes to the kernel) may let them go, as it may let go of the kernel's.
 * Each word is let go as a release would (handed to the queue's head, or
 * freed); one that changed meanwhile (its holder let it go) is left.
 *
 * Return: the number of keys let go.
 */
static unsigned int ordlock_fast_drop(struct ordlock_owner *owner, int slot)
{
	struct ordlock_fast_owner *fo = owner->fast;
	unsigned int n = 0;
	u32 s, nslots;

	lockdep_assert_held(&owner->lock);
	if (!fo)
		return 0;
	if (slot >= 0)
		return !ordlock_fast_let_go(fo->fd, slot, fo->index, 0, true);
	/* pairs with the pin: a slot below the count is written */
	nslots = smp_load_acquire(&fo->fd->nslots);
	for (s = 0; s < nslots; s++)
		if (ORDLOCK_FAST_OWNER(READ_ONCE(*ordlock_fast_wordp(fo->fd, s))) ==
		    fo->index && !ordlock_fast_let_go(fo->fd, s, fo->index, 0, true))
			n++;
	return n;
}

/**
 * ordlock_fast_release_key() - RELEASE's part of the fast path: let go of
 *	@key if @owner holds it by the fast path (ordlock_fast_drop())
 * @owner: the owner, locked
 * @key: a key of the RELEASE that the kernel does not hold for @owner
 */
void ordlock_fast_release_key(struct ordlock_owner *owner, const struct ordlock_rkey *key)
{
	int slot = ordlock_fast_holds(owner, key);

	if (slot >= 0)
		ordlock_fast_drop(owner, slot);
}

/**
 * ordlock_fast_release_all() - RELEASE_ALL's part of the fast path
 * @owner: the owner, locked, whose kernel holds were just let go
 *
 * Return: the number of keys held by the fast path that were let go
 * (ordlock_fast_drop()); the owner page's KERNEL bit is cleared.
 */
unsigned int ordlock_fast_release_all(struct ordlock_owner *owner)
{
	unsigned int n = ordlock_fast_drop(owner, -1);

	ordlock_fast_kernel_sync(owner, false);
	return n;
}

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
	/* Hints from user space: the words must name the caller now */
	if (ORDLOCK_FAST_OWNER(READ_ONCE(*ordlock_fast_wordp(fd, from))) != fo->index ||
	    ORDLOCK_FAST_OWNER(READ_ONCE(*ordlock_fast_wordp(fd, to))) != fo->index)
		return -ENOENT;
	arg->known = 0;
	mutex_lock(&ordlock_fast_lock);
	if (ordlock_order_learn_pair(owner, fd->slots[from].rank, fd->slots[from].id,
				     fd->slots[to].rank, fd->slots[to].id,
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
 * fast path, and the caller the domain's fastpath uid. Under owner->lock.
 */
static struct ordlock_fast_owner *ordlock_fast_owner_get(struct ordlock_owner *owner)
{
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_fast_owner *fo = owner->fast;
	struct ordlock_fast_domain *fd;
	struct ordlock_fast_page *fp;
	int ret;

	lockdep_assert_held(&owner->lock);
	if (fo)
		return fo->domain == domain ? fo : ERR_PTR(-EXDEV);
	if (!READ_ONCE(domain->fastpath) || READ_ONCE(domain->backend))
		return ERR_PTR(-EOPNOTSUPP);
	if (!uid_eq(current_euid(), domain->fast_uid))
		return ERR_PTR(-EACCES);
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

/* ORDLOCK_IOC_FAST_PIN, under owner->lock */
static int ordlock_fast_pin(struct ordlock_owner *owner,
			    struct ordlock_fast_pin *arg)
{
	struct ordlock_resource *res, *spare = NULL;
	struct ordlock_fast_owner *fo;
	struct ordlock_fast_domain *fd;
	struct ordlock_bucket *bucket;
	unsigned int credit = 0;
	u32 h, n;
	int slot, ret = 0;

	if (arg->flags || arg->__reserved)
		return -EINVAL;
	fo = ordlock_fast_owner_get(owner);
	if (IS_ERR(fo))
		return PTR_ERR(fo);
	fd = fo->fd;
	arg->index = fo->index;
	slot = ordlock_fast_lookup(fd, arg->rank, arg->id);
	if (slot >= 0)
		goto out;
	spare = ordlock_resource_alloc(&credit);
	if (IS_ERR(spare))
		return PTR_ERR(spare);
	mutex_lock(&ordlock_fast_lock);
	slot = ordlock_fast_lookup(fd, arg->rank, arg->id);
	if (slot >= 0)
		goto unlock;
	n = fd->nslots;
	if (n >= ORDLOCK_FAST_SLOTS) {
		ret = -ENOSPC;
		goto unlock;
	}
	bucket = ordlock_table_bucket(owner->domain, arg->rank, arg->id);
	spin_lock(&bucket->lock);
	res = ordlock_table_get(bucket, owner->domain, arg->rank, arg->id,
				&spare, &credit);
	if (IS_ERR_OR_NULL(res)) {
		spin_unlock(&bucket->lock);
		ret = res ? PTR_ERR(res) : -ENOMEM;
		goto unlock;
	}
	fd->slots[n].rank = arg->rank;
	fd->slots[n].id = arg->id;
	fd->slots[n].res = res;
	WRITE_ONCE(*ordlock_fast_wordp(fd, n),
		   ordlock_fast_make(0, res->nshared || res->nexcl ?
				     ORDLOCK_FAST_K : 0));
	h = ordlock_fast_hash(arg->rank, arg->id);
	while (fd->hash[h])
		h = (h + 1) & (ORDLOCK_FAST_HASH - 1);
	/* the slot first, then the hash entry (ordlock_fast_lookup()) */
	smp_store_release(&fd->hash[h], n + 1);
	/* Under the bucket lock, as every reader of the mark */
	res->fast = 1;
	spin_unlock(&bucket->lock);
	atomic64_inc(&ordlock_fast_pinned);
	/* the slot first, then the count (release, death, mmap) */
	smp_store_release(&fd->nslots, n + 1);
	slot = n;
unlock:
	mutex_unlock(&ordlock_fast_lock);
	if (spare)
		ordlock_resource_free(spare);
	if (ret)
		return ret;
out:
	arg->slot = slot;
	return 0;
}

/**
 * ordlock_fast_revoke() - @owner's lease expired: let go of the keys it
 *	holds by the fast path, after raising its owner page's revoked flag
 * @owner: the owner, locked, being revoked (DOC: Leases)
 * @keys: receives the keys let go (exclusive, token 0: a fast-path grant
 *	has none), or NULL
 * @max: room in @keys
 *
 * The flag goes up before the words are read: an acquire whose CAS comes
 * after the walk read its word reads the flag after its CAS, sees it, and
 * gives the key back (the library's step 4, docs/fastpath.md); what such
 * a race leaves is let go by the acknowledgment. A word let go is handed
 * to the queue's head, or freed, as a release would: the holder's release
 * CAS then fails (the generation moved on), and FAST_RELEASE says
 * EKEYEXPIRED.
 *
 * Return: the number of keys let go (also those beyond @max).
 */
unsigned int ordlock_fast_revoke(struct ordlock_owner *owner,
				 struct ordlock_revoked_key *keys,
				 unsigned int max)
{
	struct ordlock_fast_owner *fo = owner->fast;
	struct ordlock_fast_page *fp;
	struct ordlock_resource *res;
	unsigned int n = 0;
	u32 slot, nslots;

	lockdep_assert_held(&owner->lock);
	if (!fo)
		return 0;
	fp = page_address(fo->page);
	WRITE_ONCE(fp->revoked, READ_ONCE(fp->revoked) | ORDLOCK_FAST_PAGE_REVOKED);
	/* The flag before the words (the library: its CAS, then the flag) */
	smp_mb();
	/* pairs with the pin: a slot below the count is written */
	nslots = smp_load_acquire(&fo->fd->nslots);
	for (slot = 0; slot < nslots; slot++) {
		if (ORDLOCK_FAST_OWNER(READ_ONCE(*ordlock_fast_wordp(fo->fd, slot))) !=
		    fo->index)
			continue;
		if (ordlock_fast_let_go(fo->fd, slot, fo->index, 0, true))
			continue;
		res = fo->fd->slots[slot].res;
		if (keys && n < max) {
			keys[n].key.rank = res->rank;
			keys[n].key.id = res->id;
			keys[n].key.mode = ORDLOCK_MODE_EXCLUSIVE;
			keys[n].key.__reserved = 0;
			keys[n].token = 0;
		}
		n++;
	}
	return n;
}

/**
 * ordlock_fast_acknowledge() - a revoked @owner acknowledged (RELEASE_ALL):
 *	let go of a word an acquire racing the revocation took, and lower the
 *	owner page's revoked flag
 * @owner: the owner, locked
 */
void ordlock_fast_acknowledge(struct ordlock_owner *owner)
{
	struct ordlock_fast_owner *fo = owner->fast;
	struct ordlock_fast_page *fp;

	lockdep_assert_held(&owner->lock);
	if (!fo)
		return;
	ordlock_fast_drop(owner, -1);
	fp = page_address(fo->page);
	/* After the words: an acquire that sees it clear finds them let go */
	smp_store_release(&fp->revoked,
			  READ_ONCE(fp->revoked) & ORDLOCK_FAST_PAGE_KERNEL);
}

/**
 * ordlock_fast_kernel_sync() - tell @owner's library whether the kernel
 *	holds keys for it (%ORDLOCK_FAST_PAGE_KERNEL in the owner page)
 * @owner: the owner, locked
 * @busy: a request of the owner is starting in the kernel
 *
 * The bit is set while the owner holds keys the kernel granted, or a
 * request of it is in the kernel: an acquire that took words by CAS then
 * gives them back and goes to the kernel, which judges it against both
 * kinds of holds. The library of the process that holds the kernel's keys
 * knows it already; this is for another process on the same owner (a fork
 * child, a nested script). A request sets it before its order checks read
 * the words (ordlock_fast_check()), with a full barrier between, and an
 * acquire reads it after its CAS: of a CAS and a request racing, either
 * the check sees the word or the acquire sees the bit (the handshake of a
 * revocation, tests/model/fastpath.pml). Cleared when the owner holds
 * nothing in the kernel and no request of it is there; a hold the kernel
 * lets go elsewhere (a lease's revocation) leaves it set until the next
 * request or release of the owner: one detour through the kernel.
 */
void ordlock_fast_kernel_sync(struct ordlock_owner *owner, bool busy)
{
	struct ordlock_fast_owner *fo = owner->fast;
	struct ordlock_fast_page *fp;
	u32 old, new;

	lockdep_assert_held(&owner->lock);
	if (!fo)
		return;
	fp = page_address(fo->page);
	old = READ_ONCE(fp->revoked);
	new = old & ~ORDLOCK_FAST_PAGE_KERNEL;
	if (busy || owner->busy || owner->nheld)
		new |= ORDLOCK_FAST_PAGE_KERNEL;
	if (new != old)
		WRITE_ONCE(fp->revoked, new);
	if (!busy)
		return;
	/*
	 * The bit before the words that the request's checks read; pairs
	 * with the library's CAS, then its load of the bit
	 */
	smp_mb();
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
 * ordlock_fast_owner_release() - the owner's file is released: let go of
 *	every word of its domain that names it, then free its index
 * @owner: an owner being destroyed
 */
void ordlock_fast_owner_release(struct ordlock_owner *owner)
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
		if (ORDLOCK_FAST_OWNER(READ_ONCE(*ordlock_fast_wordp(fd, slot))) ==
		    fo->index)
			ordlock_fast_let_go(fd, slot, fo->index, 0, true);
	mutex_lock(&ordlock_fast_lock);
	/* Waits for the views and walks that look at it (ordlock_fast_holder()) */
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
	struct ordlock_bucket *bucket;
	struct ordlock_resource *res;
	unsigned int i, idle = 0;

	/* against a pin that would find the state after a quick turn on */
	mutex_lock(&ordlock_fast_lock);
	fd = xa_load(&ordlock_fast_domains, domain->id);
	if (!fd) {
		mutex_unlock(&ordlock_fast_lock);
		return;
	}
	for (i = 0; i < fd->nslots; i++) {
		res = fd->slots[i].res;
		bucket = ordlock_res_bucket(res);
		spin_lock(&bucket->lock);
		res->fast = 0;
		idle += ordlock_resource_put_unused(bucket, res);
		spin_unlock(&bucket->lock);
	}
	if (idle)
		ordlock_table_uncharge(idle);
	atomic64_sub(fd->nslots, &ordlock_fast_pinned);
	/* No resource is marked any more: nothing looks it up */
	xa_erase(&ordlock_fast_domains, domain->id);
	mutex_unlock(&ordlock_fast_lock);
	for (i = 0; i < ORDLOCK_FAST_NPAGES; i++)
		put_page(fd->pages[i]);
	ordlock_fast_edges_free(fd);
	ida_destroy(&fd->indices);
	xa_destroy(&fd->owners);
	kvfree(fd);
}

/* ordlock_fast_npinned() - keys pinned now, in all domains */
s64 ordlock_fast_npinned(void)
{
	return atomic64_read(&ordlock_fast_pinned);
}
