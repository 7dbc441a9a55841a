// SPDX-License-Identifier: GPL-2.0
/*
 * Requests: the acquire state machine, the grant, and release. Beside it:
 * the order rule and REORDER (rule.c), conversions (convert.c), the
 * cluster variant (cluster.c), the fast path behind the hooks of
 * fastpath.h.
 *
 * An acquire takes its keys one by one in ascending order. For each key it
 * finds (or creates) the resource under the bucket lock, and is granted at
 * once when the mode is compatible with the holders and nobody is queued:
 * the uncontended path takes one spinlock and allocates nothing when the
 * resource exists and the owner has spare holds. Otherwise it queues at the
 * tail (resource.c) and waits (wait.c), in the calling task or, for an
 * asynchronous request, until the front end polls it again. An ioctl
 * acquire of one key that is granted at once (or a try-lock of one that is
 * not) goes through the one-key path, ordlock_acquire_one(): the same
 * checks without the request's machinery; anything else it hands to the
 * general path. Every grant ends in ordlock_grant(), which makes the
 * token (ordlock_domain_mint_token(): tokens never go backwards).
 *
 * A request that fails releases what it took, and tells events.c why.
 *
 * A REORDER request (ORDLOCK_ACQUIRE_REORDER) may ask for keys that sort
 * below held ones: those are taken without waiting; the first that would
 * wait makes the request let go of the held keys above and start again on
 * the union of both, in order (ordlock_reorder()).
 */
#include <linux/ktime.h>
#include <linux/mm.h>

#include "cluster.h"
#include "domain.h"
#include "events.h"
#include "fastpath.h"
#include "keys.h"
#include "order.h"
#include "owner.h"
#include "params.h"
#include "request.h"
#include "resource.h"
#include "table.h"
#include "user.h"
#include "wait.h"
#include "xdetect.h"

/* Give back what req->credit still reserves of the resources in use */
static void ordlock_request_unreserve(struct ordlock_request *req)
{
	lockdep_assert_held(&req->owner->lock);
	if (req->credit) {
		ordlock_table_uncharge(req->credit);
		req->credit = 0;
	}
}

/*
 * Take key req->next for the hold req->cur of @req, whose owner is
 * locked. On failure, the owner's failure record says why.
 *
 * Return: 0 when granted at once, 1 when queued (and in the graph),
 * ORDLOCK_TAKE_WOULD_WAIT when the key is only to be tried (req->try_upto)
 * and is not free (nothing recorded), or a negative errno (the wait, if
 * any, is over).
 */
static int ordlock_take(struct ordlock_request *req)
{
	const struct ordlock_rkey *key = &req->keys[req->next];
	struct ordlock_owner *owner = req->owner;
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_resource *res, *spare = NULL;
	struct ordlock_bucket *bucket;
	struct ordlock_hold *hold;
	int ret = 0;

	lockdep_assert_held(&owner->lock);
	hold = req->cur;
	bucket = ordlock_table_bucket(domain, key->rank, key->id);
	spin_lock(&bucket->lock);
	res = ordlock_table_get(bucket, domain, key->rank, key->id, &spare,
				&req->credit);
	if (!res) {
		spin_unlock(&bucket->lock);
		spare = ordlock_resource_alloc(&req->credit);
		if (IS_ERR(spare)) {
			ret = PTR_ERR(spare);
			goto fail;
		}
		spin_lock(&bucket->lock);
		/* with a spare, this cannot fail */
		res = ordlock_table_get(bucket, domain, key->rank, key->id, &spare,
					&req->credit);
	}
	if (IS_ERR(res)) {
		spin_unlock(&bucket->lock);
		ret = PTR_ERR(res);
		goto fail;
	}

	hold->res = res;
	hold->owner = owner;
	hold->mode = key->mode;
	hold->token = 0;
	if (owner->cluster)
		*ordlock_hold_blkp(hold) = NULL;
	if (ordlock_res_open(res) && ordlock_res_compatible(res, key->mode)) {
		ordlock_res_add_holder(res, &hold->res_node, key->mode);
	} else if (req->try) {
		ret = ordlock_owner_fail(owner, ORDLOCK_REASON_BUSY, -EAGAIN, key);
		ordlock_res_blame(res, owner, key->mode, NULL);
	} else if (req->next < req->try_upto) {
		/* Waiting for it could close a cycle: the caller reorders */
		ret = ORDLOCK_TAKE_WOULD_WAIT;
	} else if (ordlock_user_charge(owner->user, ORDLOCK_USER_WAITERS, 1,
				       owner->user_exempt)) {
		/* Not queued: the resource has holders or waiters, it stays */
		ret = ordlock_owner_fail(owner, ORDLOCK_REASON_USER_LIMIT, -EDQUOT, key);
		ordlock_res_blame(res, owner, key->mode, NULL);
	} else {
		/* Uncharged when the wait ends (wait.c) */
		ordlock_waiter_init(req, hold, key->mode, false);
		/* Never passed while it holds keys (resource.c) */
		req->w.holds_fast = ordlock_fast_held(owner) != 0;
		ordlock_res_queue(res, &req->w);
		ret = 1;
	}
	spin_unlock(&bucket->lock);
	if (spare)
		ordlock_resource_free(spare);
	if (ret == 1) {
		/* A reservation does not wait: the keys left count again after */
		ordlock_request_unreserve(req);
		ret = ordlock_wait_begin(req);
	}
	if (ret < 0 || ret == ORDLOCK_TAKE_WOULD_WAIT)
		hold->res = NULL;
	return ret;

fail:
	return ordlock_owner_fail(owner, ret == -ENOSPC ?
				  ORDLOCK_REASON_RESOURCE_LIMIT :
				  ORDLOCK_REASON_NOMEM, ret, key);
}

/* The request is over: give back the holds it did not keep */
static void ordlock_request_put(struct ordlock_request *req)
{
	ordlock_owner_put_holds(req->owner, &req->holds);
	if (req->own_keys) {
		kvfree(req->own_keys);
		req->own_keys = NULL;
		req->keys = NULL;
	}
	req->active = false;
	req->owner->busy = false;
	req->owner->converting = NULL;
}

/*
 * Let go of @hold of @owner; return 1 when its resource turned idle and
 * is still counted in use (the caller uncounts them all at once), else 0.
 * In a cluster domain each release may sleep (its unlock in the cluster):
 * the resource is uncounted at once, so that it is not counted twice
 * meanwhile when another owner takes it back into use.
 */
static unsigned int ordlock_req_drop_hold(struct ordlock_owner *owner,
					  struct ordlock_hold *hold)
{
	lockdep_assert_held(&owner->lock);
	if (owner->cluster) {
		ordlock_res_drop_hold(hold);
		return 0;
	}
	return __ordlock_res_drop_hold(hold);
}

/* The request failed with @ret: undo what it took */
int ordlock_request_fail(struct ordlock_request *req, int ret)
{
	struct ordlock_owner *owner = req->owner;
	struct ordlock_hold *hold;
	unsigned int idle = 0;

	lockdep_assert_held(&owner->lock);
	if (req->convert) {
		ordlock_order_held_changed(&owner->order_cache);
		if (req->hold->mode != req->old_mode) {
			/* A cancel that lost the race to the grant: undo it */
			spin_lock(&ordlock_res_bucket(req->hold->res)->lock);
			ordlock_res_set_mode(req->hold->res, req->hold, req->old_mode);
			ordlock_res_grant_waiters(req->hold->res);
			spin_unlock(&ordlock_res_bucket(req->hold->res)->lock);
		}
	} else {
		hold = req->cur;
		list_for_each_entry_continue_reverse(hold, &req->holds, owner_node)
			idle += ordlock_req_drop_hold(owner, hold);
		/* The resources that turned idle and the reservation: one count */
		req->credit += idle;
		/* Every key of the request was charged when it started */
		ordlock_user_uncharge(owner->user, ORDLOCK_USER_KEYS, req->n);
	}
	ordlock_request_unreserve(req);
	/* What a REORDER let go is lost: the record names the lowest of it */
	if (req->result_flags & ORDLOCK_RESULT_RELEASED)
		owner->failure.held = req->released;
	ordlock_request_put(req);
	ordlock_event_failure(owner);
	return ret;
}

/*
 * The token of a grant of @holds (NULL: of @hold alone), given to each of
 * them and kept as the owner's last; in a cluster domain (@cluster) above
 * the keys' fencing values in the cluster, and written to them (cluster.c)
 */
static __always_inline u64 ordlock_grant_token(struct ordlock_owner *owner,
					       struct list_head *holds,
					       struct ordlock_hold *hold,
					       bool cluster)
{
	u64 token;

	token = ordlock_domain_mint_token(owner->domain, cluster ?
					  ordlock_cluster_floor(holds, hold) : 0);
	owner->last_token = token;
	if (!holds)
		hold->token = token;
	else
		list_for_each_entry(hold, holds, owner_node)
			hold->token = token;
	if (cluster)
		ordlock_cluster_fence(holds, hold, token);
	return token;
}

/*
 * ordlock_grant() - the owner's side of every grant: an acquire's
 * (ordlock_request_done()), the one-key path's, and a fast-path hold's
 * taken over by the kernel (ordlock_adopt()). The holds granted, @holds
 * (on their resources, sorted, off owner->held; NULL: @hold alone, else
 * @hold is the first) of the @n keys @keys, get the grant's token and go
 * on owner->held in order: appended (always in an enforce domain) or
 * inserted. What a grant learns of the order is the caller's (a hold
 * taken over teaches nothing). Inline, for each caller's constants.
 * Return: the token.
 */
static __always_inline u64 ordlock_grant(struct ordlock_owner *owner,
					 struct list_head *holds,
					 struct ordlock_hold *hold,
					 const struct ordlock_rkey *keys,
					 unsigned int n, bool cluster)
{
	struct ordlock_hold *h, *tmp;
	u64 token;

	lockdep_assert_held(&owner->lock);
	token = ordlock_grant_token(owner, holds, hold, cluster);
	if (!owner->nheld ||
	    ordlock_hold_cmp(list_last_entry(&owner->held, struct ordlock_hold,
					     owner_node), &keys[0]) < 0) {
		if (holds)
			list_splice_tail_init(holds, &owner->held);
		else
			list_move_tail(&hold->owner_node, &owner->held);
		owner->nheld += n;
		if (n == 1)
			ordlock_order_held_appended(&owner->order_cache, hold);
		else
			ordlock_order_held_changed(&owner->order_cache);
	} else if (holds) {
		list_for_each_entry_safe(h, tmp, holds, owner_node) {
			list_del(&h->owner_node);
			ordlock_owner_insert_hold(owner, h);
		}
	} else {
		list_del(&hold->owner_node);
		ordlock_owner_insert_hold(owner, hold);
	}
	return token;
}

/* Every key is granted: hand out the token */
static int ordlock_request_done(struct ordlock_request *req)
{
	struct ordlock_owner *owner = req->owner;
	struct ordlock_hold *hold;

	lockdep_assert_held(&owner->lock);
	/* What the request reserved and did not take into use */
	ordlock_request_unreserve(req);
	if (req->convert) {
		/* An upgrade gets a new token (above the key's in the cluster) */
		if (req->w.mode == ORDLOCK_MODE_EXCLUSIVE)
			ordlock_grant_token(owner, NULL, req->hold,
					    ordlock_hold_blk(req->hold));
		req->token = req->hold->token;
		ordlock_stat_inc(owner->domain, ORDLOCK_STAT_CONVERSIONS);
		ordlock_request_put(req);
		return 0;
	}
	ordlock_order_grant(owner, req->keys, req->n, owner->nheld);
	ordlock_fast_granted(owner, req->keys, req->n);
	hold = list_first_entry(&req->holds, struct ordlock_hold, owner_node);
	req->token = ordlock_grant(owner, &req->holds, hold, req->keys, req->n,
				   READ_ONCE(owner->domain->backend));
	ordlock_stat_inc(owner->domain, ORDLOCK_STAT_ACQUIRES);
	if (req->waited)
		ordlock_stat_inc(owner->domain, ORDLOCK_STAT_CONTENDED);
	ordlock_request_put(req);
	return 0;
}

/*
 * The conversion is granted locally: an upgrade in a cluster domain
 * converts in the cluster too (a failure undoes the local upgrade; an
 * asynchronous request goes on in ordlock_cluster_convert_poll())
 */
int ordlock_request_converted(struct ordlock_request *req)
{
	int ret;

	ordlock_order_held_changed(&req->owner->order_cache);
	if (req->w.mode == ORDLOCK_MODE_EXCLUSIVE && ordlock_hold_blk(req->hold)) {
		ret = ordlock_convert_cluster(req, &req->keys[0]);
		if (ret == -EINPROGRESS)
			return ret;
		if (ret)
			return ordlock_request_fail(req, ret);
	}
	return ordlock_request_done(req);
}

/* Key req->next is granted: go on to the next one */
static void ordlock_request_advance(struct ordlock_request *req)
{
	req->cur = list_next_entry(req->cur, owner_node);
	req->next++;
}

/*
 * Take the keys from req->next on, waiting in the task or queueing. The
 * resources in use are counted for all the keys left at once when they
 * fit (req->credit; a cluster domain's keys wait in the cluster one by
 * one, and count one by one): one add and one limit test instead of one
 * of each per key; when they do not all fit, each key counts its own.
 */
static int ordlock_request_step(struct ordlock_request *req)
{
	unsigned int left = req->n - req->next;
	int ret;

	if (left > 1 && !req->credit && !READ_ONCE(req->owner->domain->backend) &&
	    ordlock_table_reserve(left))
		req->credit = left;
	while (req->next < req->n) {
		ret = ordlock_take(req);
		if (ret == 1) {
			if (req->notify)
				return -EINPROGRESS;
			ret = ordlock_wait_sync(req);
		}
		/* (the test inline, cluster.h: a call per key otherwise) */
		if (!ret)
			ret = ordlock_cluster_take(req);
		if (ret == ORDLOCK_TAKE_WOULD_WAIT) {
			ret = ordlock_reorder(req);
			if (ret)
				return ordlock_request_fail(req, ret);
			continue;
		}
		if (ret == -EINPROGRESS)
			return ret;
		if (ret)
			return ordlock_request_fail(req, ret);
		ordlock_request_advance(req);
	}
	return ordlock_request_done(req);
}

/*
 * The cluster's lock of key req->next ended with @ret (as
 * ordlock_take_cluster() returns it; 0 for a local domain): go on to the
 * next key, reorder (ORDLOCK_TAKE_WOULD_WAIT), or fail
 */
static int ordlock_request_next(struct ordlock_request *req, int ret)
{
	if (ret == ORDLOCK_TAKE_WOULD_WAIT)
		ret = ordlock_reorder(req);
	else if (!ret)
		ordlock_request_advance(req);
	if (ret == -EINPROGRESS)
		return ret;
	if (ret)
		return ordlock_request_fail(req, ret);
	return ordlock_request_step(req);
}

/* The wait of the current key ended with @ret (0: granted) */
int ordlock_request_took(struct ordlock_request *req, int ret)
{
	if (ret)
		return ordlock_request_fail(req, ret);
	if (req->convert)
		return ordlock_request_converted(req);
	return ordlock_request_next(req, ordlock_cluster_take(req));
}

/* Common start of an acquire and a conversion; the owner is locked */
int ordlock_request_init(struct ordlock_request *req, bool convert)
{
	struct ordlock_owner *owner = req->owner;

	lockdep_assert_held(&owner->lock);
	if (owner->busy)
		return -EBUSY;
	if (!req->notify)
		ordlock_owner_touch(owner);
	INIT_LIST_HEAD(&req->holds);
	req->deadline = 0;
	req->convert = convert;
	req->next = 0;
	req->waited = false;
	req->token = 0;
	req->try_upto = 0;
	req->result_flags = 0;
	req->own_keys = NULL;
	req->cluster_wait = false;
	req->credit = 0;
	return 0;
}

/*
 * The order checks of an acquire: the order rule in an enforce domain
 * (which a REORDER request may break: ordlock_reorder_split()), else only
 * that no key is held already
 */
static int ordlock_request_check(struct ordlock_request *req)
{
	struct ordlock_owner *owner = req->owner;
	struct ordlock_domain *domain = owner->domain;

	lockdep_assert_held(&owner->lock);
	if (READ_ONCE(domain->policy) != ORDLOCK_POLICY_ENFORCE)
		return ordlock_check_held(owner, req->keys, req->n) ?:
		       ordlock_fast_check(owner, req->keys, req->n, false, false);
	req->strict = READ_ONCE(domain->strict);
	if (!req->reorder)
		return ordlock_check_order(owner, &req->keys[0], req->strict) ?:
		       ordlock_fast_check(owner, req->keys, req->n, true, req->strict);
	if (!req->try)
		req->try_upto = ordlock_reorder_split(req);
	/* The keys held by the fast path are not reordered: the rule holds */
	return ordlock_check_held(owner, req->keys, req->n) ?:
	       ordlock_fast_check(owner, req->keys, req->n, true, req->strict);
}

/**
 * ordlock_request_start() - start an acquire
 * @req: the request: owner (locked), keys (validated, sorted, merged), n,
 *	try, and notify (NULL to wait in the calling task) filled in
 * @timeout_ns: the longest the whole request may wait
 *
 * Return: 0 when granted (req->token), -EINPROGRESS when queued (only with
 * req->notify: the front end then calls ordlock_request_poll() when
 * notified and at ordlock_request_next_event()), or a negative errno with
 * the owner's failure record filled in; on failure the owner holds what it
 * held before, unless a REORDER let held keys go (req->result_flags says
 * ORDLOCK_RESULT_RELEASED, the record's held key the lowest of them).
 */
int ordlock_request_start(struct ordlock_request *req, u64 timeout_ns)
{
	struct ordlock_owner *owner = req->owner;
	const struct ordlock_rkey *keys = req->keys;
	int ret;

	ret = ordlock_request_init(req, false);
	if (ret)
		return ret;

	ret = ordlock_request_check(req);
	if (ret)
		goto fail;
	if (owner->nheld + req->n > ordlock_max_keys_per_owner() ||
	    owner->nheld + req->n < req->n) {
		ret = ordlock_owner_fail(owner, ORDLOCK_REASON_OWNER_LIMIT,
					 -ENOSPC, &keys[0]);
		goto fail;
	}
	/* Kept when granted; uncharged by ordlock_request_fail() or release */
	ret = ordlock_user_charge(owner->user, ORDLOCK_USER_KEYS, req->n,
				  owner->user_exempt);
	if (ret) {
		ordlock_owner_fail(owner, ORDLOCK_REASON_USER_LIMIT, ret, &keys[0]);
		goto fail;
	}
	ret = ordlock_owner_get_holds(owner, req->n, &req->holds);
	if (ret) {
		ordlock_user_uncharge(owner->user, ORDLOCK_USER_KEYS, req->n);
		ret = ordlock_owner_fail(owner, ORDLOCK_REASON_NOMEM, ret, NULL);
		goto fail;
	}
	req->cur = list_first_entry(&req->holds, struct ordlock_hold, owner_node);
	req->active = true;
	owner->busy = true;
	req->timeout_ns = timeout_ns;
	return ordlock_request_step(req);

fail:
	ordlock_event_failure(owner);
	return ret;
}

/**
 * ordlock_request_next_event() - when a queued request must be polled
 * @req: a request in progress
 *
 * Return: the deadline, or the time to look for a cycle or to announce the
 * wait (ordlock_request_check_at()) if earlier.
 */
ktime_t ordlock_request_next_event(const struct ordlock_request *req)
{
	ktime_t check = ordlock_request_check_at(req);

	if (req->cluster_wait) {
		if (req->xd_at && ktime_before(req->xd_at, req->cluster_deadline))
			return req->xd_at;
		return req->cluster_deadline;
	}
	if (check && ktime_before(check, req->deadline))
		return check;
	return req->deadline;
}

/**
 * ordlock_request_poll() - move a queued request on
 * @req: a request in progress, owner locked
 *
 * Return: as ordlock_request_start().
 */
int ordlock_request_poll(struct ordlock_request *req)
{
	ktime_t now = ktime_get();
	int ret;

	lockdep_assert_held(&req->owner->lock);
	if (req->cluster_wait) {
		ret = ordlock_cluster_poll(req);
		if (ret == -EINPROGRESS || !req->convert)
			return ordlock_request_next(req, ret);
		return ret ? ordlock_request_fail(req, ret) : ordlock_request_done(req);
	}
	if (ordlock_waiter_granted(&req->w))
		ret = ordlock_wait_end(req, 0);
	else if (req->owner->lease.revoked)
		/* Revoked while it waited (lease.c woke it): it fails */
		ret = ordlock_wait_end(req, -EKEYEXPIRED);
	else if (ordlock_xd_victim(req->owner))
		/* The victim of a cycle across nodes (XD_FAIL woke it) */
		ret = ordlock_wait_end(req, -EDEADLK);
	else if (ktime_compare(now, req->deadline) >= 0)
		ret = ordlock_wait_end(req, -ETIMEDOUT);
	else if (ordlock_request_check_at(req) &&
		 ktime_compare(now, ordlock_request_check_at(req)) >= 0)
		ret = ordlock_wait_check(req);
	else
		ret = 1;
	if (ret == 1)
		return -EINPROGRESS;
	return ordlock_request_took(req, ret);
}

/**
 * ordlock_request_cancel() - withdraw a queued request
 * @req: a request in progress, owner locked
 *
 * Whatever it took is released, even a key granted a moment ago.
 *
 * Return: -ECANCELED.
 */
int ordlock_request_cancel(struct ordlock_request *req)
{
	int ret;

	lockdep_assert_held(&req->owner->lock);
	if (req->cluster_wait) {
		/*
		 * Granted locally: released with the pending cluster lock; a
		 * conversion's is abandoned (the backend brings it back to the
		 * old mode) and ordlock_request_fail() undoes the local one
		 */
		ordlock_cluster_cancel(req);
		ret = 0;
	} else {
		ret = ordlock_wait_end(req, -ECANCELED);
	}
	if (!ret && !req->convert)
		ordlock_request_advance(req);
	if (!ret) {
		ordlock_owner_fail(req->owner, ORDLOCK_REASON_CANCELLED,
				   -ECANCELED, NULL);
		req->owner->failure.index = ordlock_request_index(req);
	}
	return ordlock_request_fail(req, -ECANCELED);
}

/* ordlock_acquire_one(): the key is not free, or a case it leaves alone */
#define ORDLOCK_ONE_GENERAL 1

/*
 * The one-key path of ordlock_req_acquire() (not REORDER): the
 * same checks in the same order as ordlock_request_start() and
 * ordlock_take(), and the same results, without a request, its list of
 * holds or its steps. It never waits for a key and never queues (it may
 * still sleep where the general path does: the learned order's lock and
 * allocation, the event chain): when the key's
 * resource must be allocated, when the owner has no spare hold, in a
 * cluster domain (its keys are taken in the cluster too), or when a
 * request that may wait finds the key taken, it gives back what it charged
 * and returns ORDLOCK_ONE_GENERAL, having changed nothing, and the caller goes
 * the general way (which checks everything again under the same owner
 * lock). A try-lock that finds the key taken fails here, as ordlock_take()
 * and ordlock_request_fail() would make it fail.
 *
 * @fast (the owner has fast state) adds the checks and the learning
 * against the keys it holds by the fast path; a constant where inlined.
 *
 * Return: 0 (granted, *@token set), ORDLOCK_ONE_GENERAL, or a negative errno
 * with the failure recorded and reported.
 */
static __always_inline int ordlock_acquire_one(struct ordlock_owner *owner,
					       const struct ordlock_rkey *key,
					       bool try, u64 *token, bool fast)
{
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_resource *res;
	struct ordlock_bucket *bucket;
	struct ordlock_hold *hold;
	int ret;

	lockdep_assert_held(&owner->lock);
	if (owner->busy)
		return -EBUSY;
	/* A cluster domain's key is taken in the cluster too: the general way */
	if (!owner->nspare || READ_ONCE(domain->backend))
		return ORDLOCK_ONE_GENERAL;
	ordlock_owner_touch(owner);
	/* Both order checks pass when nothing is held: every policy alike */
	if (owner->nheld || fast) {
		bool order = READ_ONCE(domain->policy) == ORDLOCK_POLICY_ENFORCE;
		bool strict = order && READ_ONCE(domain->strict);

		if (!order)
			ret = ordlock_check_held(owner, key, 1);
		else
			ret = ordlock_check_order(owner, key, strict);
		if (!ret && fast)
			ret = ordlock_fast_check(owner, key, 1, order, strict);
		if (ret)
			goto fail;
	}
	if (owner->nheld + 1 > ordlock_max_keys_per_owner() ||
	    owner->nheld + 1 < 1) {
		ret = ordlock_owner_fail(owner, ORDLOCK_REASON_OWNER_LIMIT,
					 -ENOSPC, key);
		goto fail;
	}

	/*
	 * The key first: the charge below (and for an idle resource the
	 * resource count) come in the general path's order, but a key that
	 * is taken costs no charge given back. Idle, it has neither holders
	 * nor waiters.
	 */
	bucket = ordlock_table_bucket(domain, key->rank, key->id);
	spin_lock(&bucket->lock);
	res = ordlock_table_find(bucket, domain, key->rank, key->id);
	if (!res) {
		/* Not in the table: the general path allocates it */
		spin_unlock(&bucket->lock);
		return ORDLOCK_ONE_GENERAL;
	}
	if (!ordlock_res_open(res) || !ordlock_res_compatible(res, key->mode)) {
		/* A request that may wait queues the general way */
		if (!try) {
			spin_unlock(&bucket->lock);
			return ORDLOCK_ONE_GENERAL;
		}
		/*
		 * A try-lock fails: for the user's limit when the charge would
		 * have failed (it comes first), else because the key is taken
		 */
		ret = ordlock_user_refuse(owner->user, ORDLOCK_USER_KEYS, 1,
					  owner->user_exempt);
		if (ret) {
			ordlock_owner_fail(owner, ORDLOCK_REASON_USER_LIMIT, ret, key);
		} else {
			ret = ordlock_owner_fail(owner, ORDLOCK_REASON_BUSY,
						 -EAGAIN, key);
			ordlock_res_blame(res, owner, key->mode, NULL);
		}
		spin_unlock(&bucket->lock);
		goto fail;
	}
	ret = ordlock_user_charge(owner->user, ORDLOCK_USER_KEYS, 1,
				  owner->user_exempt);
	if (ret) {
		/* A fast key's word was claimed for the grant: given back */
		if (unlikely(res->fast))
			ordlock_res_settle(res);
		spin_unlock(&bucket->lock);
		ordlock_owner_fail(owner, ORDLOCK_REASON_USER_LIMIT, ret, key);
		goto fail;
	}
	if (res->idle && ordlock_table_revive(bucket, domain, res)) {
		ret = ordlock_owner_fail(owner, ORDLOCK_REASON_RESOURCE_LIMIT,
					 -ENOSPC, key);
		spin_unlock(&bucket->lock);
		ordlock_user_uncharge(owner->user, ORDLOCK_USER_KEYS, 1);
		goto fail;
	}
	hold = list_first_entry(&owner->spare, struct ordlock_hold, owner_node);
	owner->nspare--;
	hold->res = res;
	hold->owner = owner;
	hold->mode = key->mode;
	ordlock_res_add_holder(res, &hold->res_node, key->mode);
	spin_unlock(&bucket->lock);

	/* As ordlock_request_done() */
	ordlock_order_grant(owner, key, 1, owner->nheld);
	if (fast)
		ordlock_fast_granted(owner, key, 1);
	*token = ordlock_grant(owner, NULL, hold, key, 1, false);
	ordlock_stat_inc(domain, ORDLOCK_STAT_ACQUIRES);
	return 0;

fail:
	ordlock_event_failure(owner);
	return ret;
}

/*
 * The body of ordlock_req_acquire(), inlined in both of its cases: @fast,
 * the owner has fast state (a constant in each, so that an owner without
 * it tests nothing more)
 */
static __always_inline int __ordlock_req_acquire(struct ordlock_owner *owner,
						 const struct ordlock_rkey *keys,
						 unsigned int n, u64 timeout_ns,
						 u32 flags, u64 *token,
						 u32 *result_flags,
						 ktime_t *deadline, bool fast)
{
	int ret;

	*token = 0;
	*deadline = 0;
	*result_flags = 0;
	if (n == 1 && !(flags & ORDLOCK_ACQUIRE_REORDER)) {
		ret = ordlock_acquire_one(owner, keys, flags & ORDLOCK_ACQUIRE_TRY,
					  token, fast);
		if (ret != ORDLOCK_ONE_GENERAL)
			return ret;
	}
	{
		/* Declared here: set up (zeroed whole) only when it is needed */
		struct ordlock_request req = {
			.owner = owner,
			.keys = keys,
			.n = n,
			.try = flags & ORDLOCK_ACQUIRE_TRY,
			.reorder = flags & ORDLOCK_ACQUIRE_REORDER,
		};

		ret = ordlock_request_start(&req, timeout_ns);
		*token = req.token;
		*result_flags = req.result_flags;
		*deadline = req.deadline;
	}
	return ret;
}

/**
 * ordlock_req_acquire() - take a set of keys, all or nothing, waiting in the
 * calling task
 * @owner: the owner, locked
 * @keys: the keys, validated, sorted and merged
 * @n: number of keys, at least 1
 * @timeout_ns: the longest the whole request may wait
 * @flags: ORDLOCK_ACQUIRE_* flags (validated)
 * @token: receives the fencing token
 * @result_flags: receives the ORDLOCK_RESULT_* flags, on failure too
 * @deadline: receives the deadline of the request's wait (set when it first
 *	queued; 0 if it never did), for the restart of an interrupted wait
 *
 * Return: as ordlock_request_start().
 */
int ordlock_req_acquire(struct ordlock_owner *owner, const struct ordlock_rkey *keys,
			unsigned int n, u64 timeout_ns, u32 flags, u64 *token,
			u32 *result_flags, ktime_t *deadline)
{
	int ret;

	if (likely(!owner->fast))
		return __ordlock_req_acquire(owner, keys, n, timeout_ns, flags, token,
					     result_flags, deadline, false);
	/*
	 * The owner page says that the kernel holds keys for the owner (or
	 * is deciding) meanwhile: the owner's other processes come here too
	 */
	ordlock_fast_kernel_sync(owner, true);
	ret = __ordlock_req_acquire(owner, keys, n, timeout_ns, flags, token,
				    result_flags, deadline, true);
	ordlock_fast_kernel_sync(owner, false);
	return ret;
}

/*
 * A key @owner (locked) holds by the fast path, which a conversion needs
 * as a hold of the kernel's: the kernel takes it over (its word turns the
 * kernel's, ordlock_fast_take_over()) and grants it as any hold is
 * granted, with a new token. Return: the hold, NULL when the owner does
 * not hold @key so, or an ERR_PTR with the failure recorded (-ENOMEM, the
 * user's key limit, -EIO when the word kept changing); nothing changed.
 */
struct ordlock_hold *ordlock_adopt(struct ordlock_owner *owner,
				   const struct ordlock_rkey *key)
{
	struct ordlock_hold *hold;
	LIST_HEAD(list);
	int ret;

	if (ordlock_fast_holds(owner, key) < 0)
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
	ret = ordlock_fast_take_over(owner, key, hold);
	if (ret) {
		ordlock_user_uncharge(owner->user, ORDLOCK_USER_KEYS, 1);
		if (ret == -EIO)
			ordlock_owner_fail(owner, ORDLOCK_REASON_INVALID, ret, key);
		goto put;
	}
	ordlock_grant(owner, NULL, hold, key, 1, false);
	return hold;

put:
	ordlock_owner_put_holds(owner, &list);
	return ret == -ENOENT ? NULL : ERR_PTR(ret);
}

/**
 * ordlock_req_release_keys() - release held keys, all of them or none
 * @owner: the owner, locked
 * @keys: the keys, validated, sorted and merged
 * @n: number of keys
 *
 * Return: 0, or -ENOENT (nothing released) naming the first key not held.
 */
int ordlock_req_release_keys(struct ordlock_owner *owner,
			     const struct ordlock_rkey *keys, unsigned int n)
{
	struct ordlock_hold *hold, *next;
	LIST_HEAD(done);
	unsigned int i;

	lockdep_assert_held(&owner->lock);
	if (owner->busy)
		return -EBUSY;
	/*
	 * Both lists are sorted: one merge walk finds every key or the
	 * culprit. A key the kernel does not hold may be held by the fast path
	 * (of another process of the owner): let go of it too.
	 */
	hold = list_first_entry(&owner->held, struct ordlock_hold, owner_node);
	for (i = 0; i < n; i++) {
		while (!list_entry_is_head(hold, &owner->held, owner_node) &&
		       ordlock_hold_cmp(hold, &keys[i]) < 0)
			hold = list_next_entry(hold, owner_node);
		if ((list_entry_is_head(hold, &owner->held, owner_node) ||
		     ordlock_hold_cmp(hold, &keys[i])) &&
		    ordlock_fast_holds(owner, &keys[i]) < 0)
			return ordlock_owner_fail(owner, ORDLOCK_REASON_NOT_HELD,
						  -ENOENT, &keys[i]);
	}

	hold = list_first_entry(&owner->held, struct ordlock_hold, owner_node);
	for (i = 0; i < n; i++) {
		while (!list_entry_is_head(hold, &owner->held, owner_node) &&
		       ordlock_hold_cmp(hold, &keys[i]) < 0)
			hold = list_next_entry(hold, owner_node);
		if (list_entry_is_head(hold, &owner->held, owner_node) ||
		    ordlock_hold_cmp(hold, &keys[i])) {
			ordlock_fast_release_key(owner, &keys[i]);
			continue;
		}
		next = list_next_entry(hold, owner_node);
		ordlock_owner_drop_hold(owner, hold, &done);
		hold = next;
	}
	ordlock_owner_put_holds(owner, &done);
	return 0;
}

/**
 * ordlock_req_release_token() - release the keys granted with fencing @token
 * @owner: the owner, locked
 * @token: a token returned by ordlock_req_acquire()
 *
 * Used to undo a grant the caller could not be told about.
 *
 * Return: the number of keys released.
 */
unsigned int ordlock_req_release_token(struct ordlock_owner *owner, u64 token)
{
	struct ordlock_hold *hold, *tmp;
	unsigned int n = 0;
	LIST_HEAD(done);

	lockdep_assert_held(&owner->lock);
	list_for_each_entry_safe_reverse(hold, tmp, &owner->held, owner_node) {
		if (hold->token != token)
			continue;
		ordlock_owner_drop_hold(owner, hold, &done);
		n++;
	}
	ordlock_owner_put_holds(owner, &done);
	return n;
}

/**
 * ordlock_req_release_all() - release every key the owner holds
 * @owner: the owner, locked
 *
 * Return: the number of keys released.
 */
unsigned int ordlock_req_release_all(struct ordlock_owner *owner)
{
	struct ordlock_hold *hold;
	unsigned int n = 0, idle = 0;
	LIST_HEAD(done);

	lockdep_assert_held(&owner->lock);
	list_for_each_entry_reverse(hold, &owner->held, owner_node) {
		idle += ordlock_req_drop_hold(owner, hold);
		n++;
	}
	/* The resources that turned idle: one count for them all */
	if (idle)
		ordlock_table_uncharge(idle);
	list_splice_init(&owner->held, &done);
	owner->nheld = 0;
	ordlock_order_held_changed(&owner->order_cache);
	ordlock_user_uncharge(owner->user, ORDLOCK_USER_KEYS, n);
	ordlock_stat_add(owner->domain, ORDLOCK_STAT_RELEASES, n);
	ordlock_owner_put_nholds(owner, &done, n);
	return n;
}

/**
 * ordlock_req_owner_gone() - an owner being destroyed lets go of all it
 *	holds: the kernel's holds (ordlock_req_release_all()), then the words
 *	that name it, and its fast state with them
 * @owner: the owner, locked, that nobody else can reach any more
 */
void ordlock_req_owner_gone(struct ordlock_owner *owner)
{
	ordlock_req_release_all(owner);
	ordlock_fast_owner_death(owner);
}

/**
 * ordlock_req_held() - the keys @owner holds: granted by the kernel, and
 *	taken by the fast path (a count, for the views)
 * @owner: an owner on the list of owners (ordlock_owners_lock held), or
 *	locked
 *
 * Return: the count.
 */
u32 ordlock_req_held(struct ordlock_owner *owner)
{
	return READ_ONCE(owner->nheld) + ordlock_fast_held(owner);
}
