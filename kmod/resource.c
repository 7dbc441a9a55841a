// SPDX-License-Identifier: GPL-2.0
/*
 * Resources: the state of one key.
 *
 * A resource counts its holders by mode and keeps them on a list; its
 * waiters queue FIFO, conversions at the head. Whoever makes a waiter
 * grantable (a release, a waiter leaving the head of the queue) grants it
 * in place: it moves the waiter's hold onto the holders, then wakes it.
 * Grants go from the head and stop at the first waiter that does not fit,
 * so an exclusive request is never overtaken by later shared ones.
 *
 * The exception (ordlock_res_release_waiters()): a release that frees the
 * key for a young first waiter only wakes it, and a request that comes
 * before it runs may take the key (ordlock_res_open()). A handoff per
 * contended pair costs a sleep and a wake-up on each side; letting the
 * running task go on is what makes flock(2) and the kernel's mutexes cheap
 * under contention. The waiter's age bounds it (handoff_us, the fairness
 * rule of the UAPI header).
 *
 * A key pinned by the fast path (res->fast) has a word in user space that
 * is the truth about who holds it: this file is the one engine file that
 * enters the word protocol, through the hooks of fastpath.h (the claim
 * before a grant, the settle after a change of holders or waiters, the
 * queued when a waiter queues), and the one the views ask who holds a key
 * by the fast path (ordlock_res_word_holder()). A word that lets the
 * queue go has it granted here, as a release would.
 *
 * Every function here but ordlock_res_drop_hold() and
 * __ordlock_res_drop_hold() runs under the bucket lock of the resource;
 * none sleeps.
 */
#include <linux/poison.h>
#include <linux/sched.h>

#include "cluster.h"
#include "domain.h"
#include "fastpath.h"
#include "keys.h"
#include "owner.h"
#include "params.h"
#include "resource.h"
#include "table.h"

/* Does the request of @w fit the holders of its resource @res? */
bool ordlock_res_fits(struct ordlock_resource *res,
		      const struct ordlock_waiter *w)
{
	u32 nshared = res->nshared, nexcl = res->nexcl;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (w->convert) {
		/* The converting owner's own hold does not count */
		if (w->hold->mode == ORDLOCK_MODE_EXCLUSIVE)
			nexcl--;
		else
			nshared--;
	}
	if (w->mode == ORDLOCK_MODE_EXCLUSIVE) {
		if (nshared || nexcl)
			return false;
	} else if (nexcl) {
		return false;
	}
	/* A fast key's word is taken for the kernel's holders first */
	return ordlock_fast_claim(res);
}

/*
 * ordlock_res_claim() - the claim of ordlock_res_compatible() (resource.h,
 * inline, calls it for a pinned key only)
 */
bool ordlock_res_claim(struct ordlock_resource *res)
{
	return ordlock_fast_claim(res);
}

/*
 * ordlock_res_settle() - the holders or waiters of @res changed: a pinned
 * key's word is put right, and the queue granted if the word lets it go
 */
void ordlock_res_settle(struct ordlock_resource *res)
{
	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (ordlock_fast_settle(res, !list_empty(&res->waiters) &&
				ordlock_res_passable(res)))
		ordlock_res_grant_waiters(res);
}

/* Unlinked as ordlock_holders_link() links (resource.h) */
static void ordlock_holders_unlink(struct ordlock_hold *hold)
{
	struct list_head *node = &hold->res_node;

	node->next->prev = node->prev;
	WRITE_ONCE(node->prev->next, node->next);
	node->next = LIST_POISON1;
	node->prev = LIST_POISON2;
}

/* Change the mode of @hold, a holder of @res, to @mode */
void ordlock_res_set_mode(struct ordlock_resource *res,
			  struct ordlock_hold *hold, u32 mode)
{
	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	ordlock_res_count(res, hold->mode, -1);
	hold->mode = mode;
	ordlock_res_count(res, mode, 1);
}

/*
 * Queue @w on @res: an acquire at the tail; a conversion at the head (the
 * caller made sure that no other conversion is queued)
 */
void ordlock_res_queue(struct ordlock_resource *res, struct ordlock_waiter *w)
{
	struct ordlock_waiter *prev;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (w->convert) {
		w->seq = 0;
		w->excl_ahead = NULL;
		list_add(&w->node, &res->waiters);
	} else if (list_empty(&res->waiters)) {
		w->seq = 1;
		w->excl_ahead = NULL;
		list_add_tail(&w->node, &res->waiters);
	} else {
		/* O(1): the tail knows the nearest exclusive waiter ahead of it */
		prev = list_last_entry(&res->waiters, struct ordlock_waiter, node);
		w->seq = prev->seq + 1;
		w->excl_ahead = prev->mode == ORDLOCK_MODE_EXCLUSIVE ? prev :
				prev->excl_ahead;
		list_add_tail(&w->node, &res->waiters);
	}
	/* Behind a fast-path holder: its release must come to the kernel */
	if (ordlock_fast_queued(res, ordlock_res_passable(res)))
		ordlock_res_grant_waiters(res);
}

/*
 * ordlock_res_unqueue() - unlink @w from the queue of @res. The waiters
 * whose nearest exclusive waiter ahead was @w (the run behind it, up to
 * and with the next exclusive one) get @w's own: nothing keeps a pointer
 * to a waiter that left. Costs the shared waiters directly behind an
 * exclusive one, once when it leaves.
 */
static void ordlock_res_unqueue(struct ordlock_resource *res,
				struct ordlock_waiter *w)
{
	struct ordlock_waiter *next = w;

	if (w->mode == ORDLOCK_MODE_EXCLUSIVE) {
		list_for_each_entry_continue(next, &res->waiters, node) {
			if (next->excl_ahead != w)
				break;
			next->excl_ahead = w->excl_ahead;
		}
	}
	list_del_init(&w->node);
}

/*
 * @w, not granted, leaves the queue of @res: those behind it may go in;
 * a resource nobody uses any more turns idle
 */
void ordlock_res_dequeue(struct ordlock_resource *res, struct ordlock_waiter *w)
{
	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	ordlock_res_unqueue(res, w);
	ordlock_res_grant_waiters(res);
	if (unlikely(res->fast))
		ordlock_res_settle(res);
	if (ordlock_resource_put_unused(ordlock_res_bucket(res), res)) {
		ordlock_gauge_dec(&w->hold->owner->domain->resources);
		ordlock_table_uncharge(1);
	}
}

/*
 * Two owners that hold a key shared and both wait to upgrade it wait for
 * each other: return the one already converting, if any.
 */
struct ordlock_waiter *ordlock_res_converting(struct ordlock_resource *res)
{
	struct ordlock_waiter *w;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	list_for_each_entry(w, &res->waiters, node) {
		if (!w->convert)
			break;
		return w;
	}
	return NULL;
}

/* Grant queued waiters from the head for as long as they fit */
void ordlock_res_grant_waiters(struct ordlock_resource *res)
{
	struct ordlock_waiter *w, *tmp;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	list_for_each_entry_safe(w, tmp, &res->waiters, node) {
		if (!ordlock_res_fits(res, w))
			break;
		ordlock_res_unqueue(res, w);
		if (w->convert)
			ordlock_res_set_mode(res, w->hold, w->mode);
		else
			ordlock_res_add_holder(res, &w->hold->res_node, w->hold->mode);
		/* The waiter cannot leave before it retakes the bucket lock */
		w->granted = true;
		if (w->task)
			wake_up_process(w->task);
		else
			w->notify(w);
	}
}

/*
 * May @w be passed? The fairness rule (the UAPI header, "Fairness"): a
 * waiter may be passed by a request that comes while the key is free for
 * it while it is younger than handoff_us; after that only if it was
 * passed before, ORDLOCK_MAX_PASSES times in all; then it is handed the
 * key. A waiter that has waited its time without ever being woken is
 * handed the key at once. Only a waiter that holds no key (granted by
 * the kernel, or taken by the fast path when it queued: @w->holds_fast)
 * and sleeps in its task, for a key of a local domain, asking to acquire
 * (not convert), is ever passed: the others are always handed the key in
 * place. A key pinned by the fast path is passed as any other (its word
 * is left free for the woken waiter: fastpath.c).
 */
static bool ordlock_res_may_pass(struct ordlock_resource *res,
				 struct ordlock_waiter *w)
{
	u64 handoff;

	struct ordlock_owner *owner = w->hold->owner;

	if (!w->task || w->convert || owner->cluster)
		return false;
	/*
	 * A waiter that holds keys is never passed: whoever passes it may
	 * wait for one of them next, a cycle that the handoff would not have
	 * let form (a deadlock's victim that lets go and takes its first key
	 * again would find the same cycle)
	 */
	if (READ_ONCE(owner->nheld) || w->holds_fast)
		return false;
	handoff = ordlock_handoff_ns();
	if (!handoff)
		return false;
	if (w->passed)
		return w->passed < ORDLOCK_MAX_PASSES;
	return ktime_to_ns(ktime_sub(ktime_get(), w->since)) < (s64)handoff;
}

/* The member that holds a fast key by its word, if it runs (below) */
static bool ordlock_res_running_member(void *arg,
				       const struct ordlock_word_holder *h)
{
	struct task_struct **t = arg;

	*t = h->owner ? ordlock_owner_running(h->owner) : NULL;
	return true;
}

/**
 * ordlock_res_running_holder() - the task of @res's oldest holder granted
 *	by the kernel, or of the member that holds it by the fast path, when
 *	it runs on a CPU now, or NULL
 * @res: the resource; its bucket lock held, and rcu_read_lock(), which
 *	keeps the task returned valid (ordlock_owner_running())
 *
 * A waiter spins only while the holder it waits for runs: a holder that
 * does not run will not let go soon (the kernel's mutexes spin so).
 */
struct task_struct *ordlock_res_running_holder(struct ordlock_resource *res)
{
	struct task_struct *t = NULL;
	struct ordlock_hold *hold;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (list_empty(&res->holders)) {
		if (unlikely(res->fast))
			ordlock_fast_holder(res, ordlock_res_running_member, &t);
		return t;
	}
	hold = list_first_entry(&res->holders, struct ordlock_hold, res_node);
	return ordlock_owner_running(hold->owner);
}

/**
 * ordlock_res_take_woken() - @w, woken for the free key of @res, runs: it
 *	takes the key, or counts that it was passed
 * @res: its resource; its bucket lock held
 * @w: a waiter of @res whose woken flag is set
 */
void ordlock_res_take_woken(struct ordlock_resource *res,
			    struct ordlock_waiter *w)
{
	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	w->woken = false;
	/* First in the queue: a grant from the head reaches it */
	ordlock_res_grant_waiters(res);
	if (!w->granted && w->passed < U8_MAX)
		w->passed++;
}

/**
 * ordlock_res_passable() - the first waiter of @res was woken for the free
 *	key and may still be passed: a request that comes now may take the key
 *	first (ordlock_res_open())
 * @res: a resource with waiters; its bucket lock held
 *
 * Return: true when a new request may take @res as if nobody waited.
 */
bool ordlock_res_passable(struct ordlock_resource *res)
{
	struct ordlock_waiter *w;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	w = list_first_entry(&res->waiters, struct ordlock_waiter, node);
	return w->woken && ordlock_res_may_pass(res, w);
}

/**
 * ordlock_res_pass_first() - a member let go of the fast key @res, which
 *	has waiters: may its word be left free for the first waiter?
 * @res: a fast resource with waiters, no holder of the kernel's; its
 *	bucket lock held
 *
 * As ordlock_res_release_waiters() for a key whose word a member held:
 * a first waiter that may still be passed is woken (once) and takes the
 * key when it runs, unless a request or a member's CAS that comes first
 * takes it; the caller then frees the word, WAITERS kept
 * (ordlock_fast_let_go()). Else the caller hands the key to the queue.
 *
 * Return: true when the word is to be left free for the woken waiter.
 */
bool ordlock_res_pass_first(struct ordlock_resource *res)
{
	struct ordlock_waiter *w;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	w = list_first_entry(&res->waiters, struct ordlock_waiter, node);
	if (!ordlock_res_may_pass(res, w))
		return false;
	if (!w->woken) {
		w->woken = true;
		wake_up_process(w->task);
	}
	return true;
}

/*
 * How far behind the first waiter a release looks for a spinning one: the
 * waiters a CPU can run are few, and each one passed is counted
 */
#define ORDLOCK_SPINNER_SCAN	4

/*
 * A release left @res with room for its first waiter @first, which sleeps
 * and may be passed: hand the key instead to a waiter close behind that
 * spins on its CPU for it (wait.c), if every waiter ahead of that one may
 * be passed too; each of them counts the pass. A running task takes the
 * key without a sleep and a wake-up on either side, which is what the
 * passing rule is for; the waiters passed sleep on, each still bounded by
 * the rule (the UAPI header, "Fairness"). Only a key of the kernel's own
 * (not pinned by the fast path, whose word has its own protocol), and only
 * a waiter that fits the holders as they are.
 *
 * Return: true when a spinning waiter was granted the key.
 */
static bool ordlock_res_grant_spinner(struct ordlock_resource *res,
				      struct ordlock_waiter *first)
{
	struct ordlock_waiter *w = first, *s;
	unsigned int n = 0;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	if (res->fast)
		return false;
	list_for_each_entry_continue(w, &res->waiters, node) {
		if (++n > ORDLOCK_SPINNER_SCAN)
			return false;
		if (w->spinning)
			break;
		if (!ordlock_res_may_pass(res, w))
			return false;
	}
	if (list_entry_is_head(w, &res->waiters, node) ||
	    w->convert || !ordlock_res_fits(res, w))
		return false;
	s = w;
	list_for_each_entry(w, &res->waiters, node) {
		if (w == s)
			break;
		if (!w->woken && w->passed < U8_MAX)
			w->passed++;
	}
	ordlock_res_unqueue(res, s);
	ordlock_res_add_holder(res, &s->hold->res_node, s->hold->mode);
	/* It spins until it sees this under the bucket lock: no wake-up */
	s->granted = true;
	return true;
}

/**
 * ordlock_res_release_waiters() - a release left @res with room: let its
 *	first waiter in
 * @res: a resource with waiters; its bucket lock held
 *
 * A first waiter that may still be passed (ordlock_res_may_pass()) is
 * woken and takes the key itself when it runs (ordlock_res_take_woken()),
 * unless a request that comes meanwhile takes it first: a running task
 * that releases and takes a key again does not wait for a sleeping one to
 * wake up, as with flock(2) and the kernel's mutexes (a first waiter that
 * spins sees the flag at once, and races the releaser for the key, as a
 * mutex's spinners do). A first waiter that sleeps lets a spinning waiter
 * close behind it take the key in place (ordlock_res_grant_spinner()).
 * Any other waiter is handed the key in place (ordlock_res_grant_waiters()).
 */
void ordlock_res_release_waiters(struct ordlock_resource *res)
{
	struct ordlock_waiter *w;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	w = list_first_entry(&res->waiters, struct ordlock_waiter, node);
	if (!ordlock_res_may_pass(res, w)) {
		ordlock_res_grant_waiters(res);
		return;
	}
	if (!w->spinning && ordlock_res_grant_spinner(res, w))
		return;
	if (!w->woken && ordlock_res_fits(res, w)) {
		w->woken = true;
		wake_up_process(w->task);
	}
}

/*
 * Remove @hold from its resource; wake who can go; retire an unused
 * resource. In a cluster domain, first release the key's lock in the
 * cluster (which does not wait for the cluster, but may sleep: every
 * caller holds the owner's mutex, in process context). Takes the bucket
 * lock. Return: 1 when the resource turned idle: the caller uncounts it
 * from the resources in use (ordlock_table_uncharge(), once for all the
 * holds it drops), else 0.
 */
unsigned int __ordlock_res_drop_hold(struct ordlock_hold *hold)
{
	struct ordlock_resource *res = hold->res;
	struct ordlock_bucket *bucket = ordlock_res_bucket(res);
	unsigned int idle = 0;

	ordlock_cluster_release(hold);
	spin_lock(&bucket->lock);
	ordlock_holders_unlink(hold);
	ordlock_res_count(res, hold->mode, -1);
	if (!list_empty(&res->waiters))
		ordlock_res_release_waiters(res);
	if (unlikely(res->fast))
		ordlock_res_settle(res);
	if (ordlock_resource_put_unused(bucket, res)) {
		ordlock_gauge_dec(&hold->owner->domain->resources);
		idle = 1;
	}
	spin_unlock(&bucket->lock);
	hold->res = NULL;
	return idle;
}

/* __ordlock_res_drop_hold(), and uncount a resource that turned idle */
void ordlock_res_drop_hold(struct ordlock_hold *hold)
{
	if (__ordlock_res_drop_hold(hold))
		ordlock_table_uncharge(1);
}

/* A member holds the key by the fast path: it blocks any request */
static bool ordlock_res_blame_fast(void *arg, const struct ordlock_word_holder *h)
{
	struct ordlock_failure *f = arg;

	/* An index that names no owner: blamed, with no pid (0) */
	f->pid = h->owner ? READ_ONCE(h->owner->pid) : 0;
	f->holder_mode = ORDLOCK_MODE_EXCLUSIVE;
	return true;
}

/*
 * Name who blocks a request for @mode on @res in the failure record: the
 * first other holder in a conflicting mode (and the mode it holds), the
 * member that holds a fast key by the fast path (exclusive), or,
 * when only the queue blocks it, the first conflicting waiter ahead of
 * @self (NULL: the whole queue), with holder_mode 0: it holds nothing.
 */
void ordlock_res_blame(struct ordlock_resource *res,
		       struct ordlock_owner *owner, u32 mode,
		       struct ordlock_waiter *self)
{
	struct ordlock_failure *f = &owner->failure;
	struct ordlock_hold *hold;
	struct ordlock_waiter *w;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	list_for_each_entry(hold, &res->holders, res_node) {
		if (hold->owner != owner && ordlock_modes_conflict(hold->mode, mode)) {
			f->pid = READ_ONCE(hold->owner->pid);
			f->holder_mode = hold->mode;
			return;
		}
	}
	if (ordlock_fast_holder(res, ordlock_res_blame_fast, f))
		return;
	list_for_each_entry(w, &res->waiters, node) {
		if (w == self)
			break;
		if (w->hold->owner != owner && ordlock_modes_conflict(w->mode, mode)) {
			f->pid = READ_ONCE(w->hold->owner->pid);
			/* Queued, not holding: no mode it holds the key in */
			f->holder_mode = 0;
			return;
		}
	}
}

/**
 * ordlock_res_word_holder() - the member that holds @res by the fast path,
 *	as the key's word names it: the views' and the wait-for graph's one
 *	way to the fast path's holders (resource.h)
 * @res: a resource; its bucket lock held
 * @fn: called when the word names a member's index (not free, not the
 *	kernel's holders), with the key's domain, the owner of that index in
 *	the domain's owner table (NULL when the index names no owner: the word
 *	is garbage, or names an owner that is going), the index and the
 *	generation. Called under the owner table's lock: @fn may not sleep,
 *	and the owner may be used only until it returns
 * @arg: passed to @fn
 *
 * The word is read once: what @fn gets is what it said at that instant,
 * and the owner is looked up in the kernel's own table, never taken from
 * a user page. Bounded: one hash lookup and one xarray lookup.
 *
 * Return: what @fn returned; false when @res is not pinned or no member
 * holds it.
 */
bool ordlock_res_word_holder(struct ordlock_resource *res,
			     ordlock_word_holder_fn fn, void *arg)
{
	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	return ordlock_fast_holder(res, fn, arg);
}
