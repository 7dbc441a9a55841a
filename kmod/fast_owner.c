// SPDX-License-Identifier: GPL-2.0
/*
 * An owner's fast holds as the kernel's requests and leases see them: the
 * words of its domain that name its index (fast_internal.h). The held
 * stack of the owner page is the library's and never trusted; each word
 * is read once, so what an owner's requests are judged against is what
 * its own words say, and a member that rewrites them changes only that.
 *
 * The engine reaches this file through the hooks of fastpath.h, each
 * returning at once for an owner without fast state: a request's order
 * checks against the fast holds and the order its grant learns from them,
 * the kernel taking over a fast hold for a conversion (request.c grants
 * it, as any grant), RELEASE and RELEASE_ALL of keys held by CAS, the
 * owner page's KERNEL bit, the count of the fast holds, and a lease's
 * revocation and its acknowledgment. Letting go of a word is the word
 * protocol's (ordlock_fast_let_go(), fastpath.c); an owner's fast state is
 * made and freed by the device side (fast_dev.c).
 *
 * Everything here runs under owner->lock, but the count (also for the
 * views, under ordlock_owners_lock), and takes no lock of its own: a word
 * changes under its bucket lock only. One upward call: the order a grant
 * learns from the fast holds (ordlock_order_learn_pair(), kmod/layers.txt).
 */
#include <linux/ordlock.h>

#include "domain.h"
#include "fast_internal.h"
#include "order.h"
#include "owner.h"
#include "resource.h"
#include "user.h"

/**
 * __ordlock_fast_lock_slot() - lock the bucket of the key of @slot
 * @fd: the fast state
 * @slot: a slot below ORDLOCK_FAST_SLOTS (from user space, or a walk)
 *
 * A recycling swaps a slot's key under the old key's bucket lock: with
 * that lock held and the slot still naming the key, the word is that
 * key's until the lock is dropped. The key's resource outlives a grace
 * period after it lost its slot (the retiring list, fast_dev.c).
 *
 * Return: the key, its bucket locked; NULL (nothing locked) for a free
 * slot. Called through ordlock_fast_lock_slot(), which tells sparse.
 */
static struct ordlock_fast_slot *__ordlock_fast_lock_slot(struct ordlock_fast_domain *fd,
							  u32 slot)
{
	struct ordlock_fast_slot *s;

	rcu_read_lock();
	for (;;) {
		s = rcu_dereference(fd->slots[slot]);
		if (!s)
			break;
		spin_lock(&ordlock_res_bucket(s->res)->lock);
		if (rcu_access_pointer(fd->slots[slot]) == s) {
			/* held for the caller (ordlock_fast_lock_slot()) */
			__release(&ordlock_res_bucket(s->res)->lock);
			break;
		}
		spin_unlock(&ordlock_res_bucket(s->res)->lock);
	}
	rcu_read_unlock();
	return s;
}

/*
 * ordlock_fast_lock_slot() - @sp = the key of @slot with its bucket locked
 * (true), or NULL for a free slot (false, nothing locked)
 */
#define ordlock_fast_lock_slot(fd, slot, sp) \
	__cond_lock(ordlock_fast_domains, ((sp) = __ordlock_fast_lock_slot(fd, slot)) != NULL)

/*
 * Let go of the word of @slot held by owner @index (at generation @gen,
 * unless @any_gen): free it, or hand it to the queue's head, under the
 * key's bucket lock (FAST_RELEASE, a RELEASE in the kernel, a revocation,
 * the owner's death). A first waiter that may be passed (the fairness
 * rule, ordlock_res_pass_first()) is woken instead, and the word freed
 * with WAITERS kept, {g, 0, WAITERS}: a member's CAS or a kernel request
 * that comes first may take it, and the woken waiter takes it from the
 * kernel if nobody did (fastpath.c). Return: 0, -ENOENT when the word is not that
 * owner's, -EIO when it kept changing.
 */
int ordlock_fast_let_go(struct ordlock_fast_domain *fd, u32 slot, u32 index,
			u32 gen, bool any_gen)
{
	u64 *wp = ordlock_fast_wordp(fd, slot);
	struct ordlock_fast_slot *s;
	struct ordlock_resource *res;
	bool pass = false;
	int ret = -EIO, i;
	u64 old, new;

	/* A free slot's word is nobody's */
	if (!ordlock_fast_lock_slot(fd, slot, s))
		return -ENOENT;
	res = s->res;
	old = READ_ONCE(*wp);
	for (i = 0; i < ORDLOCK_FAST_TRIES; i++) {
		if (ORDLOCK_FAST_OWNER(old) != index ||
		    (!any_gen && ORDLOCK_FAST_GEN(old) != gen)) {
			ret = -ENOENT;
			break;
		}
		/* The fairness rule: the woken first waiter or who comes first */
		if (!pass && !list_empty(&res->waiters) && !res->nshared &&
		    !res->nexcl)
			pass = ordlock_res_pass_first(res);
		if (!list_empty(&res->waiters) && !pass)
			new = ordlock_fast_make(old, ORDLOCK_FAST_GEN(old) + 1,
						ORDLOCK_FAST_K);
		else
			new = ordlock_fast_freed(old, !list_empty(&res->waiters));
		if (try_cmpxchg(wp, &old, new)) {
			if (!list_empty(&res->waiters) && !pass) {
				ordlock_res_grant_waiters(res);
				if (__ordlock_fast_settle(res, false))
					ordlock_res_grant_waiters(res);
			}
			ret = 0;
			break;
		}
	}
	spin_unlock(&ordlock_res_bucket(res)->lock);
	return ret;
}

/**
 * __ordlock_fast_held() - the keys @owner holds by the fast path now
 * @owner: an owner on the list of owners, ordlock_owners_lock held (its
 *	fast state is freed only after it leaves the list), or locked
 *
 * Counts the words of its domain that name its index, each read once
 * without a lock (so a count, not a snapshot): at most ORDLOCK_FAST_SLOTS
 * loads, for the views of the owners.
 *
 * Return: the count; 0 for an owner without fast state.
 */
u32 __ordlock_fast_held(struct ordlock_owner *owner)
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
 * The slots @owner may hold by the fast path, as its library says (the
 * owner page's held stack, and the slot of an acquire between its CAS and
 * its push): at most ORDLOCK_FAST_STACK + 1, each checked below
 * ORDLOCK_FAST_SLOTS, duplicates possible. A caller believes one only when
 * its word names the owner: a member that hides a hold from its stack
 * changes only what its own requests are judged against (DOC: The fast
 * path). Return: the number in @slots.
 */
static unsigned int ordlock_fast_stack(struct ordlock_fast_owner *fo, u32 *slots)
{
	const struct ordlock_fast_page *fp = page_address(fo->page);
	unsigned int i, n, k = 0;
	u32 slot;

	/*
	 * Pending first: the library pushes, then clears it; a push missed
	 * here was still pending
	 */
	slot = READ_ONCE(fp->pending);
	if (slot && slot <= ORDLOCK_FAST_SLOTS)
		slots[k++] = slot - 1;
	/* pairs with nothing the kernel controls: the library's push order */
	smp_rmb();
	n = min_t(u32, READ_ONCE(fp->nheld), ORDLOCK_FAST_STACK);
	for (i = 0; i < n; i++) {
		slot = READ_ONCE(fp->held[i].slot);
		if (slot < ORDLOCK_FAST_SLOTS)
			slots[k++] = slot;
	}
	return k;
}

/*
 * The first fast hold of @owner (as a word names it, among the slots of
 * its held stack) that @key may not follow: it does not sort below @key,
 * or with @strict ranks its rank is not below. The lowest such, and in
 * *@top the highest fast hold. Under RCU: the keys returned are valid
 * until it ends. Its cost is the owner's holds, not the domain's slots.
 */
static const struct ordlock_fast_slot *
ordlock_fast_above(struct ordlock_fast_owner *fo, const struct ordlock_rkey *key,
		   bool strict, const struct ordlock_fast_slot **top)
{
	const struct ordlock_fast_slot *s, *low = NULL;
	u32 slots[ORDLOCK_FAST_STACK + 1];
	unsigned int i, n;

	*top = NULL;
	n = ordlock_fast_stack(fo, slots);
	for (i = 0; i < n; i++) {
		if (!ordlock_fast_names(fo->fd, slots[i], fo->index))
			continue;
		s = rcu_dereference(fo->fd->slots[slots[i]]);
		if (!s)
			continue;
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
 * __ordlock_fast_check() - the order checks of a request in the kernel
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
int __ordlock_fast_check(struct ordlock_owner *owner,
			 const struct ordlock_rkey *keys, unsigned int n,
			 bool order, bool strict)
{
	/* pairs with ordlock_fast_owner_get() */
	struct ordlock_fast_owner *fo = smp_load_acquire(&owner->fast);
	const struct ordlock_fast_slot *bad = NULL, *top;
	const struct ordlock_rkey *key = &keys[0];
	u32 reason = ORDLOCK_REASON_ORDER, rank = 0;
	unsigned int i;
	int slot, ret;
	u64 id = 0;

	lockdep_assert_held(&owner->lock);
	if (!fo)
		return 0;
	if (order) {
		rcu_read_lock();
		bad = ordlock_fast_above(fo, key, false, &top);
		if (!bad && strict) {
			bad = ordlock_fast_above(fo, key, true, &top);
			reason = ORDLOCK_REASON_STRICT;
		}
		if (bad) {
			rank = bad->rank;
			id = bad->id;
		}
		rcu_read_unlock();
	} else {
		/* A key held already: the request would wait for itself */
		for (i = 0; i < n && !bad; i++) {
			slot = ordlock_fast_lookup(fo->fd, keys[i].rank, keys[i].id);
			if (slot >= 0 && ordlock_fast_names(fo->fd, slot, fo->index)) {
				key = &keys[i];
				rank = key->rank;
				id = key->id;
				break;
			}
		}
		if (i == n)
			return 0;
	}
	if (order && !bad)
		return 0;
	ret = ordlock_owner_fail(owner, reason, -EDEADLK, key);
	owner->failure.held.rank = rank;
	owner->failure.held.id = id;
	owner->failure.held.mode = ORDLOCK_MODE_EXCLUSIVE;
	return ret;
}

/**
 * __ordlock_fast_granted() - learn the order of a grant in the kernel after
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
void __ordlock_fast_granted(struct ordlock_owner *owner,
			    const struct ordlock_rkey *keys, unsigned int n)
{
	/* pairs with ordlock_fast_owner_get() */
	struct ordlock_fast_owner *fo = smp_load_acquire(&owner->fast);
	const struct ordlock_fast_slot *top;
	unsigned int i;
	u32 rank = 0;
	u64 id = 0;

	lockdep_assert_held(&owner->lock);
	if (!fo || READ_ONCE(owner->domain->policy) == ORDLOCK_POLICY_ENFORCE)
		return;
	rcu_read_lock();
	ordlock_fast_above(fo, &keys[0], false, &top);
	if (top) {
		rank = top->rank;
		id = top->id;
	}
	rcu_read_unlock();
	for (i = 0; top && i < n; i++)
		if (!ordlock_order_learn_pair(owner, rank, id, keys[i].rank,
					      keys[i].id, keys[i].mode))
			break;
}

/**
 * __ordlock_fast_take_over() - the kernel takes over a key @owner holds by
 *	the fast path, for a request that needs it as a hold of the kernel's
 * @owner: the owner, locked
 * @key: the key (its mode is ignored)
 * @hold: a spare hold of the owner, charged to its user
 *
 * A conversion (ORDLOCK_IOC_CONVERT) works on the kernel's holds; a key
 * taken by CAS is the owner's all the same, so the kernel takes it over
 * first: under the key's bucket lock its word goes from {g, owner, W} to
 * {g + 1, KERNEL} (WAITERS is for members' holds only; the queue stays
 * and is granted from when the kernel's hold goes), and @hold goes on the
 * key's holders, exclusive. The rest is the grant's (request.c gives the
 * hold its token and puts it on owner->held). The member's library drops
 * the key from its stack (its word no longer names it).
 *
 * Return: 0, -ENOENT when the owner does not hold @key by the fast path,
 * or -EIO when the word kept changing; nothing is changed then.
 */
int __ordlock_fast_take_over(struct ordlock_owner *owner,
			     const struct ordlock_rkey *key,
			     struct ordlock_hold *hold)
{
	struct ordlock_fast_owner *fo = owner->fast;
	struct ordlock_resource *res;
	struct ordlock_fast_slot *s;
	int slot, ret = -EIO, i;
	u64 *wp, old;

	lockdep_assert_held(&owner->lock);
	slot = ordlock_fast_lookup(fo->fd, key->rank, key->id);
	if (slot < 0)
		return -ENOENT;
	wp = ordlock_fast_wordp(fo->fd, slot);
	if (!ordlock_fast_lock_slot(fo->fd, slot, s))
		return -ENOENT;
	res = s->res;
	old = READ_ONCE(*wp);
	for (i = 0; i < ORDLOCK_FAST_TRIES; i++) {
		/* The slot was recycled since the lookup: not held so */
		if (ORDLOCK_FAST_OWNER(old) != fo->index ||
		    s->rank != key->rank || s->id != key->id) {
			ret = -ENOENT;
			break;
		}
		if (try_cmpxchg(wp, &old, ordlock_fast_make(old, ORDLOCK_FAST_GEN(old) + 1,
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
	spin_unlock(&ordlock_res_bucket(res)->lock);
	return ret;
}

/**
 * __ordlock_fast_holds() - whether @owner holds @key by the fast path
 * @owner: the owner, locked
 * @key: the key (its mode is ignored)
 *
 * Return: its slot when the key's word names the owner, else -1.
 */
int __ordlock_fast_holds(struct ordlock_owner *owner,
			 const struct ordlock_rkey *key)
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
 * @slot: a slot __ordlock_fast_holds() found, or -1 for every word that
 *	names the owner among the slots of its held stack (RELEASE_ALL), or
 *	-2 for every word of the domain that names it (an acknowledgment)
 *
 * The keys an owner holds are its own whichever way it took them: a
 * process of the owner that took none of them by CAS (a fork child, which
 * goes to the kernel) may let them go, as it may let go of the kernel's.
 * Each word is let go as a release would (handed to the queue's head, or
 * freed); one that changed meanwhile (its holder let it go) is left.
 * RELEASE_ALL costs the owner's holds (its held stack, each word checked);
 * a hold its library hid from the stack is left to it (its own keys).
 *
 * Return: the number of keys let go.
 */
static unsigned int ordlock_fast_drop(struct ordlock_owner *owner, int slot)
{
	struct ordlock_fast_owner *fo = owner->fast;
	u32 slots[ORDLOCK_FAST_STACK + 1];
	unsigned int n = 0, i, k;
	u32 s, nslots;

	lockdep_assert_held(&owner->lock);
	if (!fo)
		return 0;
	if (slot >= 0)
		return !ordlock_fast_let_go(fo->fd, slot, fo->index, 0, true);
	if (slot == -1) {
		k = ordlock_fast_stack(fo, slots);
		for (i = 0; i < k; i++)
			if (ordlock_fast_names(fo->fd, slots[i], fo->index) &&
			    !ordlock_fast_let_go(fo->fd, slots[i], fo->index, 0, true))
				n++;
		return n;
	}
	/* pairs with the pin: a slot below the count is written */
	nslots = smp_load_acquire(&fo->fd->nslots);
	for (s = 0; s < nslots; s++)
		if (ordlock_fast_names(fo->fd, s, fo->index) &&
		    !ordlock_fast_let_go(fo->fd, s, fo->index, 0, true))
			n++;
	return n;
}

/**
 * __ordlock_fast_release_key() - RELEASE's part of the fast path: let go of
 *	@key if @owner holds it by the fast path (ordlock_fast_drop())
 * @owner: the owner, locked
 * @key: a key of the RELEASE that the kernel does not hold for @owner
 */
void __ordlock_fast_release_key(struct ordlock_owner *owner,
				const struct ordlock_rkey *key)
{
	int slot = __ordlock_fast_holds(owner, key);

	if (slot >= 0)
		ordlock_fast_drop(owner, slot);
}

/**
 * __ordlock_fast_release_all() - RELEASE_ALL's part of the fast path
 * @owner: the owner, locked, whose kernel holds were just let go
 *
 * Return: the number of keys held by the fast path that were let go
 * (ordlock_fast_drop()); the owner page's KERNEL bit is cleared.
 */
unsigned int __ordlock_fast_release_all(struct ordlock_owner *owner)
{
	unsigned int n = ordlock_fast_drop(owner, -1);

	__ordlock_fast_kernel_sync(owner, false);
	return n;
}

/**
 * __ordlock_fast_revoke() - @owner's lease expired: let go of the keys it
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
unsigned int __ordlock_fast_revoke(struct ordlock_owner *owner,
				   struct ordlock_revoked_key *keys,
				   unsigned int max)
{
	struct ordlock_fast_owner *fo = owner->fast;
	struct ordlock_fast_page *fp;
	struct ordlock_fast_slot *s;
	u32 slot, nslots, rank = 0;
	unsigned int n = 0;
	u64 id = 0;

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
		if (!ordlock_fast_names(fo->fd, slot, fo->index))
			continue;
		/* A slot is recycled only with its word free: not this one */
		rcu_read_lock();
		s = rcu_dereference(fo->fd->slots[slot]);
		if (s) {
			rank = s->rank;
			id = s->id;
		}
		rcu_read_unlock();
		if (!s || ordlock_fast_let_go(fo->fd, slot, fo->index, 0, true))
			continue;
		if (keys && n < max) {
			keys[n].key.rank = rank;
			keys[n].key.id = id;
			keys[n].key.mode = ORDLOCK_MODE_EXCLUSIVE;
			keys[n].key.__reserved = 0;
			keys[n].token = 0;
		}
		n++;
	}
	return n;
}

/**
 * __ordlock_fast_acknowledge() - a revoked @owner acknowledged (RELEASE_ALL):
 *	let go of a word an acquire racing the revocation took, and lower the
 *	owner page's revoked flag
 * @owner: the owner, locked
 */
void __ordlock_fast_acknowledge(struct ordlock_owner *owner)
{
	struct ordlock_fast_owner *fo = owner->fast;
	struct ordlock_fast_page *fp;

	lockdep_assert_held(&owner->lock);
	if (!fo)
		return;
	ordlock_fast_drop(owner, -2);
	fp = page_address(fo->page);
	/* After the words: an acquire that sees it clear finds them let go */
	smp_store_release(&fp->revoked,
			  READ_ONCE(fp->revoked) & ORDLOCK_FAST_PAGE_KERNEL);
}

/**
 * __ordlock_fast_kernel_sync() - tell @owner's library whether the kernel
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
 * the words (__ordlock_fast_check()), with a full barrier between, and an
 * acquire reads it after its CAS: of a CAS and a request racing, either
 * the check sees the word or the acquire sees the bit (the handshake of a
 * revocation, tests/model/fastpath.pml). Cleared when the owner holds
 * nothing in the kernel and no request of it is there; a hold the kernel
 * lets go elsewhere (a lease's revocation) leaves it set until the next
 * request or release of the owner: one detour through the kernel.
 */
void __ordlock_fast_kernel_sync(struct ordlock_owner *owner, bool busy)
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
