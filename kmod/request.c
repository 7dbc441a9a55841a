// SPDX-License-Identifier: GPL-2.0
/*
 * Requests.
 *
 * An acquire takes its keys one by one in ascending order. For each key it
 * finds (or creates) the resource under the bucket lock, and is granted at
 * once when the mode is compatible with the holders and nobody is queued:
 * the uncontended path takes one spinlock and allocates nothing when the
 * resource exists and the owner has spare holds. Otherwise it queues at the
 * tail and sleeps. Whoever makes a waiter grantable (a release, a waiter
 * leaving the head of the queue) grants it in place: it moves the waiter's
 * hold onto the holders, then wakes it. Grants are FIFO: the queue is
 * granted from the head and stops at the first waiter that does not fit,
 * so an exclusive request is never overtaken by later shared ones.
 *
 * A request that fails releases what it took before returning.
 */
#include <linux/hrtimer.h>
#include <linux/sched/signal.h>

#include "domain.h"
#include "keys.h"
#include "owner.h"
#include "params.h"
#include "request.h"
#include "table.h"

static int ordlock_hold_cmp(const struct ordlock_hold *hold,
			    const struct ordlock_rkey *key)
{
	return ordlock_key_cmp(hold->res->rank, hold->res->id, key->rank, key->id);
}

static bool ordlock_res_compatible(const struct ordlock_resource *res, u32 mode)
{
	if (mode == ORDLOCK_MODE_EXCLUSIVE)
		return !res->nshared && !res->nexcl;
	return !res->nexcl;
}

static void ordlock_res_add_holder(struct ordlock_resource *res,
				   struct ordlock_hold *hold)
{
	lockdep_assert_held(&res->bucket->lock);
	list_add_tail(&hold->res_node, &res->holders);
	if (hold->mode == ORDLOCK_MODE_EXCLUSIVE)
		res->nexcl++;
	else
		res->nshared++;
}

/* Grant queued waiters from the head for as long as they fit */
static void ordlock_res_grant_waiters(struct ordlock_resource *res)
{
	struct ordlock_waiter *w, *tmp;

	lockdep_assert_held(&res->bucket->lock);
	list_for_each_entry_safe(w, tmp, &res->waiters, node) {
		if (!ordlock_res_compatible(res, w->hold->mode))
			break;
		list_del_init(&w->node);
		ordlock_res_add_holder(res, w->hold);
		/* The waiter cannot leave before it retakes the bucket lock */
		w->granted = true;
		wake_up_process(w->task);
	}
}

/* Remove @hold from its resource; wake who can go; free an unused resource */
static void ordlock_res_drop_hold(struct ordlock_hold *hold)
{
	struct ordlock_resource *res = hold->res;
	struct ordlock_bucket *bucket = res->bucket;

	spin_lock(&bucket->lock);
	list_del(&hold->res_node);
	if (hold->mode == ORDLOCK_MODE_EXCLUSIVE)
		res->nexcl--;
	else
		res->nshared--;
	ordlock_res_grant_waiters(res);
	ordlock_resource_put_unused(res);
	spin_unlock(&bucket->lock);
	hold->res = NULL;
}

/*
 * Name who blocks a request for @mode on @res in the owner's failure
 * record: the first holder in a conflicting mode or, when only the queue
 * blocks it, the first conflicting waiter.
 */
static void ordlock_res_blame(struct ordlock_resource *res, u32 mode,
			      struct ordlock_failure *f)
{
	struct ordlock_hold *hold;
	struct ordlock_waiter *w;

	lockdep_assert_held(&res->bucket->lock);
	list_for_each_entry(hold, &res->holders, res_node) {
		if (ordlock_modes_conflict(hold->mode, mode)) {
			f->pid = READ_ONCE(hold->owner->pid);
			f->holder_mode = hold->mode;
			return;
		}
	}
	list_for_each_entry(w, &res->waiters, node) {
		if (ordlock_modes_conflict(w->hold->mode, mode)) {
			f->pid = READ_ONCE(w->hold->owner->pid);
			f->holder_mode = w->hold->mode;
			return;
		}
	}
}

/*
 * Sleep until @w is granted, the deadline passes or a signal comes.
 * Called and returns with the bucket lock held.
 */
static int ordlock_wait(struct ordlock_waiter *w, ktime_t deadline)
{
	struct ordlock_bucket *bucket = w->hold->res->bucket;

	lockdep_assert_held(&bucket->lock);
	for (;;) {
		if (w->granted)
			return 0;
		if (signal_pending(current))
			return -EINTR;
		if (ktime_compare(ktime_get(), deadline) >= 0)
			return -ETIMEDOUT;
		set_current_state(TASK_INTERRUPTIBLE);
		spin_unlock(&bucket->lock);
		schedule_hrtimeout_range(&deadline, current->timer_slack_ns,
					 HRTIMER_MODE_ABS);
		spin_lock(&bucket->lock);
	}
}

/*
 * Take one key for @hold (whose owner is locked), waiting until @deadline
 * unless @try. On failure, the owner's failure record says why.
 */
static int ordlock_take(struct ordlock_owner *owner,
			const struct ordlock_rkey *key,
			struct ordlock_hold *hold, ktime_t deadline, bool try)
{
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_resource *res, *spare = NULL;
	struct ordlock_bucket *bucket;
	struct ordlock_waiter w;
	int ret = 0;

	bucket = ordlock_table_bucket(domain, key->rank, key->id);
	spin_lock(&bucket->lock);
	res = ordlock_table_lookup(bucket, domain, key->rank, key->id);
	if (!res) {
		spin_unlock(&bucket->lock);
		spare = ordlock_resource_alloc();
		if (IS_ERR(spare)) {
			ret = PTR_ERR(spare);
			return ordlock_owner_fail(owner, ret == -ENOSPC ?
						  ORDLOCK_REASON_RESOURCE_LIMIT :
						  ORDLOCK_REASON_NOMEM, ret, key);
		}
		spin_lock(&bucket->lock);
		res = ordlock_table_lookup(bucket, domain, key->rank, key->id);
		if (!res) {
			ordlock_resource_insert(bucket, spare, domain,
						key->rank, key->id);
			res = spare;
			spare = NULL;
		}
	}

	hold->res = res;
	hold->owner = owner;
	hold->mode = key->mode;
	hold->token = 0;
	if (list_empty(&res->waiters) && ordlock_res_compatible(res, key->mode)) {
		ordlock_res_add_holder(res, hold);
		goto out;
	}
	if (try) {
		ret = ordlock_owner_fail(owner, ORDLOCK_REASON_BUSY, -EAGAIN, key);
		ordlock_res_blame(res, key->mode, &owner->failure);
		goto out;
	}

	w.task = current;
	w.hold = hold;
	w.granted = false;
	w.since = ktime_get();
	list_add_tail(&w.node, &res->waiters);
	ret = ordlock_wait(&w, deadline);
	if (ret) {
		list_del(&w.node);
		ordlock_owner_fail(owner, ret == -EINTR ? ORDLOCK_REASON_SIGNAL :
				   ORDLOCK_REASON_TIMEOUT, ret, key);
		ordlock_res_blame(res, key->mode, &owner->failure);
		/* Leaving the queue may let those behind us in */
		ordlock_res_grant_waiters(res);
		ordlock_resource_put_unused(res);
	}
out:
	spin_unlock(&bucket->lock);
	if (spare)
		ordlock_resource_free(spare);
	if (ret)
		hold->res = NULL;
	return ret;
}

/* Insert @hold into owner->held, keeping it sorted; appending is O(1) */
static void ordlock_owner_insert_hold(struct ordlock_owner *owner,
				      struct ordlock_hold *hold)
{
	struct ordlock_hold *pos;
	struct ordlock_rkey key = {
		.rank = hold->res->rank,
		.id = hold->res->id,
	};

	list_for_each_entry_reverse(pos, &owner->held, owner_node) {
		if (ordlock_hold_cmp(pos, &key) < 0)
			break;
	}
	list_add(&hold->owner_node, &pos->owner_node);
	owner->nheld++;
}

/* The order rule: every key of the request must sort above every held key */
static int ordlock_check_order(struct ordlock_owner *owner,
			       const struct ordlock_rkey *first)
{
	struct ordlock_failure *f = &owner->failure;
	struct ordlock_hold *hold;
	int ret;

	if (!owner->nheld || READ_ONCE(owner->domain->policy) != ORDLOCK_POLICY_ENFORCE)
		return 0;
	hold = list_last_entry(&owner->held, struct ordlock_hold, owner_node);
	if (ordlock_hold_cmp(hold, first) < 0)
		return 0;
	/* Name the lowest held key at or above the first requested one */
	list_for_each_entry(hold, &owner->held, owner_node)
		if (ordlock_hold_cmp(hold, first) >= 0)
			break;
	ret = ordlock_owner_fail(owner, ORDLOCK_REASON_ORDER, -EDEADLK, first);
	f->held.rank = hold->res->rank;
	f->held.id = hold->res->id;
	f->held.mode = hold->mode;
	return ret;
}

/**
 * ordlock_acquire() - take a set of keys, all or nothing
 * @owner: the owner, locked
 * @keys: the keys, validated, sorted and merged
 * @n: number of keys, at least 1
 * @timeout_ns: the longest the whole request may wait
 * @try: never wait
 * @token: receives the fencing token
 *
 * Return: 0, or a negative errno with the owner's failure record filled in;
 * on failure the owner holds what it held before.
 */
int ordlock_acquire(struct ordlock_owner *owner, const struct ordlock_rkey *keys,
		    unsigned int n, u64 timeout_ns, bool try, u64 *token)
{
	struct ordlock_hold *hold, *tmp;
	LIST_HEAD(blank);
	LIST_HEAD(taken);
	ktime_t deadline;
	unsigned int i;
	int ret;

	lockdep_assert_held(&owner->lock);
	WRITE_ONCE(owner->pid, task_tgid_nr(current));

	ret = ordlock_check_order(owner, &keys[0]);
	if (ret)
		return ret;
	if (owner->nheld + n > ordlock_max_keys_per_owner() ||
	    owner->nheld + n < n)
		return ordlock_owner_fail(owner, ORDLOCK_REASON_OWNER_LIMIT,
					  -ENOSPC, &keys[0]);
	ret = ordlock_owner_get_holds(owner, n, &blank);
	if (ret)
		return ordlock_owner_fail(owner, ORDLOCK_REASON_NOMEM, ret, NULL);

	deadline = ktime_add_ns(ktime_get(), min_t(u64, timeout_ns, KTIME_MAX / 2));
	for (i = 0; i < n; i++) {
		hold = list_first_entry(&blank, struct ordlock_hold, owner_node);
		ret = ordlock_take(owner, &keys[i], hold, deadline, try);
		if (ret)
			break;
		list_move_tail(&hold->owner_node, &taken);
	}

	if (ret) {
		list_for_each_entry_reverse(hold, &taken, owner_node)
			ordlock_res_drop_hold(hold);
		list_splice_init(&taken, &blank);
		ordlock_owner_put_holds(owner, &blank);
		return ret;
	}

	owner->last_token = ordlock_domain_next_token(owner->domain);
	*token = owner->last_token;
	list_for_each_entry_safe(hold, tmp, &taken, owner_node) {
		list_del(&hold->owner_node);
		hold->token = owner->last_token;
		ordlock_owner_insert_hold(owner, hold);
	}
	return 0;
}

static void ordlock_owner_drop(struct ordlock_owner *owner,
			       struct ordlock_hold *hold, struct list_head *done)
{
	ordlock_res_drop_hold(hold);
	list_move(&hold->owner_node, done);
	owner->nheld--;
}

/**
 * ordlock_release_keys() - release held keys, all of them or none
 * @owner: the owner, locked
 * @keys: the keys, validated, sorted and merged
 * @n: number of keys
 *
 * Return: 0, or -ENOENT (nothing released) naming the first key not held.
 */
int ordlock_release_keys(struct ordlock_owner *owner,
			 const struct ordlock_rkey *keys, unsigned int n)
{
	struct ordlock_hold *hold, *next;
	LIST_HEAD(done);
	unsigned int i;

	lockdep_assert_held(&owner->lock);
	/* Both lists are sorted: one merge walk finds every key or the culprit */
	hold = list_first_entry(&owner->held, struct ordlock_hold, owner_node);
	for (i = 0; i < n; i++) {
		while (!list_entry_is_head(hold, &owner->held, owner_node) &&
		       ordlock_hold_cmp(hold, &keys[i]) < 0)
			hold = list_next_entry(hold, owner_node);
		if (list_entry_is_head(hold, &owner->held, owner_node) ||
		    ordlock_hold_cmp(hold, &keys[i]))
			return ordlock_owner_fail(owner, ORDLOCK_REASON_NOT_HELD,
						  -ENOENT, &keys[i]);
	}

	hold = list_first_entry(&owner->held, struct ordlock_hold, owner_node);
	for (i = 0; i < n; i++) {
		while (ordlock_hold_cmp(hold, &keys[i]) < 0)
			hold = list_next_entry(hold, owner_node);
		next = list_next_entry(hold, owner_node);
		ordlock_owner_drop(owner, hold, &done);
		hold = next;
	}
	ordlock_owner_put_holds(owner, &done);
	return 0;
}

/**
 * ordlock_release_token() - release the keys granted with fencing @token
 * @owner: the owner, locked
 * @token: a token returned by ordlock_acquire()
 *
 * Used to undo a grant the caller could not be told about.
 *
 * Return: the number of keys released.
 */
unsigned int ordlock_release_token(struct ordlock_owner *owner, u64 token)
{
	struct ordlock_hold *hold, *tmp;
	unsigned int n = 0;
	LIST_HEAD(done);

	lockdep_assert_held(&owner->lock);
	list_for_each_entry_safe_reverse(hold, tmp, &owner->held, owner_node) {
		if (hold->token != token)
			continue;
		ordlock_owner_drop(owner, hold, &done);
		n++;
	}
	ordlock_owner_put_holds(owner, &done);
	return n;
}

/**
 * ordlock_release_all() - release every key the owner holds
 * @owner: the owner, locked
 *
 * Return: the number of keys released.
 */
unsigned int ordlock_release_all(struct ordlock_owner *owner)
{
	struct ordlock_hold *hold, *tmp;
	unsigned int n = 0;
	LIST_HEAD(done);

	lockdep_assert_held(&owner->lock);
	list_for_each_entry_safe_reverse(hold, tmp, &owner->held, owner_node) {
		ordlock_owner_drop(owner, hold, &done);
		n++;
	}
	ordlock_owner_put_holds(owner, &done);
	return n;
}
