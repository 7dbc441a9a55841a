// SPDX-License-Identifier: GPL-2.0
/*
 * Conversions: changing the mode of a held key (ORDLOCK_IOC_CONVERT and
 * netlink's CONVERT). A downgrade always fits; an upgrade fits when nobody
 * else holds the key, else it queues at the head of the key's queue, ahead
 * of the acquires, and waits as an acquire's key does (wait.c). Two owners
 * that hold a key shared and both wait to upgrade it would wait for each
 * other: the second fails at once (UPGRADE).
 *
 * A file of its own beside request.c, as the cluster variant is: a
 * conversion is a request of one key that uses the request's machinery
 * (its start, its failure, its wait's end, the grant: request.h) and
 * gives none back. A key its owner holds by the fast path is taken over
 * by the kernel first, as a grant (ordlock_adopt(), request.c); an upgrade
 * in a cluster domain converts in the cluster too (cluster.c).
 */
#include "cluster.h"
#include "domain.h"
#include "keys.h"
#include "order.h"
#include "owner.h"
#include "request.h"
#include "resource.h"
#include "user.h"
#include "wait.h"

/**
 * ordlock_request_convert() - start changing the mode of a held key
 * @req: the request: owner (locked), keys (one key, with its new mode), n
 *	(1), try and notify filled in
 * @timeout_ns: the longest an upgrade may wait
 *
 * Return: as ordlock_request_start(); on failure the key stays held in its
 * old mode.
 */
int ordlock_request_convert(struct ordlock_request *req, u64 timeout_ns)
{
	struct ordlock_owner *owner = req->owner;
	const struct ordlock_rkey *key = &req->keys[0];
	struct ordlock_waiter *other;
	struct ordlock_resource *res;
	struct ordlock_hold *hold;
	int ret = 0;

	ret = ordlock_request_init(req, true);
	if (ret)
		return ret;
	hold = ordlock_owner_find_hold(owner, key);
	/* A key taken by the fast path is the kernel's from now on */
	if (!hold && unlikely(owner->fast))
		hold = ordlock_adopt(owner, key);
	if (IS_ERR(hold))
		return PTR_ERR(hold);
	if (!hold)
		return ordlock_owner_fail(owner, ORDLOCK_REASON_NOT_HELD, -ENOENT, key);
	req->hold = hold;
	req->old_mode = hold->mode;
	ordlock_order_held_changed(&owner->order_cache);
	if (hold->mode == key->mode) {
		req->token = hold->token;
		return 0;
	}

	res = hold->res;
	req->active = true;
	owner->busy = true;
	owner->converting = hold;
	req->timeout_ns = timeout_ns;
	if (key->mode == ORDLOCK_MODE_SHARED) {
		/*
		 * A downgrade: in the cluster first (nothing to undo locally;
		 * an asynchronous request's only starts there, and never waits)
		 */
		ret = ordlock_convert_cluster(req, key);
		if (ret)
			return ordlock_request_fail(req, ret);
	}
	ordlock_waiter_init(req, hold, key->mode, true);
	spin_lock(&ordlock_res_bucket(res)->lock);
	/* A downgrade always fits; an upgrade fits when nobody else holds */
	if (ordlock_res_fits(res, &req->w) && !ordlock_res_converting(res)) {
		ordlock_res_set_mode(res, hold, key->mode);
		if (key->mode == ORDLOCK_MODE_SHARED)
			ordlock_res_grant_waiters(res);
		spin_unlock(&ordlock_res_bucket(res)->lock);
		return ordlock_request_converted(req);
	}
	other = ordlock_res_converting(res);
	if (other) {
		ret = ordlock_owner_fail(owner, ORDLOCK_REASON_UPGRADE, -EDEADLK, key);
		owner->failure.pid = READ_ONCE(other->hold->owner->pid);
		owner->failure.holder_mode = other->hold->mode;
	} else if (req->try) {
		ret = ordlock_owner_fail(owner, ORDLOCK_REASON_BUSY, -EAGAIN, key);
		ordlock_res_blame(res, owner, key->mode, NULL);
	} else if (ordlock_user_charge(owner->user, ORDLOCK_USER_WAITERS, 1,
				       owner->user_exempt)) {
		ret = ordlock_owner_fail(owner, ORDLOCK_REASON_USER_LIMIT, -EDQUOT, key);
		ordlock_res_blame(res, owner, key->mode, NULL);
	} else {
		/* No other conversion is queued: go to the head */
		ordlock_res_queue(res, &req->w);
	}
	spin_unlock(&ordlock_res_bucket(res)->lock);
	if (ret)
		return ordlock_request_fail(req, ret);

	ret = ordlock_wait_begin(req);
	if (ret == 1) {
		if (req->notify)
			return -EINPROGRESS;
		ret = ordlock_wait_sync(req);
	}
	return ordlock_request_took(req, ret);
}

/**
 * ordlock_req_convert() - change the mode of a held key, waiting in the task
 * @owner: the owner, locked
 * @key: the held key and its new mode
 * @timeout_ns: the longest an upgrade may wait
 * @try: never wait
 * @token: receives the fencing token of the hold
 *
 * Return: as ordlock_request_convert().
 */
int ordlock_req_convert(struct ordlock_owner *owner, const struct ordlock_rkey *key,
			u64 timeout_ns, bool try, u64 *token)
{
	struct ordlock_request req = {
		.owner = owner,
		.keys = key,
		.n = 1,
		.try = try,
	};
	int ret;

	ret = ordlock_request_convert(&req, timeout_ns);
	*token = req.token;
	return ret;
}
