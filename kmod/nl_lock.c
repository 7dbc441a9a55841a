// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink owners and their lock requests: ACQUIRE, CONVERT, RELEASE and
 * CANCEL.
 *
 * A netlink owner is one socket of the initial network namespace, created
 * by the socket's first lock request and destroyed when the socket closes
 * (NETLINK_URELEASE). Its requests go through the same request code as the
 * ioctls (request.c); a queued request is moved on by ordlock_nl_work(),
 * which the grant (through the waiter's notify hook) or a timer queues, and
 * ends with one ORDLOCK_CMD_RESULT message to the port.
 */
#include <linux/cred.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/notifier.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/sock.h>
#include <net/net_namespace.h>

#include "access.h"
#include "domain.h"
#include "keys.h"
#include "lease.h"
#include "netlink.h"
#include "order.h"
#include "owner.h"
#include "params.h"
#include "request.h"

/**
 * struct ordlock_nl_owner - the owner of one netlink socket
 * @node: entry in ordlock_nl_owners, under ordlock_nl_lock
 * @portid: the socket's port id
 * @sk: the socket (a reference): a closing socket's port id is free before
 *	the family hears of the close (NETLINK_URELEASE), and a new socket
 *	bound to it in between must not reach this owner
 * @owner: the owner; owner->lock protects everything below
 * @req: the request in progress (req.active), if any
 * @keys: the keys of @req
 * @cookie: the requester's cookie of @req
 * @lease_ms: the lease @req asked for
 * @work: moves @req on
 * @timer: queues @work at the deadline or detection time of @req
 */
struct ordlock_nl_owner {
	struct hlist_node node;
	u32 portid;
	struct sock *sk;
	struct ordlock_owner *owner;
	struct ordlock_request req;
	struct ordlock_rkey *keys;
	u64 cookie;
	u32 lease_ms;
	struct work_struct work;
	struct hrtimer timer;
};

#define ORDLOCK_NL_HASH 64

/*
 * ordlock_nl_lock protects ordlock_nl_owners. It nests outside owner->lock
 * (module exit destroys owners under it) and is never taken inside it: see
 * the lock order in main.c.
 */
static DEFINE_MUTEX(ordlock_nl_lock);
static struct hlist_head ordlock_nl_owners[ORDLOCK_NL_HASH];
/*
 * Moves queued netlink requests on. Per-CPU, not unbound: the work runs on
 * the CPU of the release (or timer) that queued it, where the releaser's
 * caches are warm, instead of waking another CPU; an unbound queue made a
 * netlink handoff cost milliseconds under qemu, 55 times a bound one.
 */
static struct workqueue_struct *ordlock_nl_wq;

/* ACQUIRE and CONVERT */
const struct ordlock_nl_take ordlock_nl_lock_takes[] = {
	{ ORDLOCK_A_DOMAIN, ORDLOCK_NL_TAKES_DOMAIN },
	{ ORDLOCK_A_KEYS, ORDLOCK_NL_TAKES_KEYS },
	{ ORDLOCK_A_FLAGS, ORDLOCK_NL_TAKES_FLAGS },
	{ ORDLOCK_A_TIMEOUT_NS, ORDLOCK_NL_TAKES_TIMEOUT_NS },
	{ ORDLOCK_A_COOKIE, ORDLOCK_NL_TAKES_COOKIE },
	{ ORDLOCK_A_LEASE_MS, ORDLOCK_NL_TAKES_LEASE_MS },
	{ }
};

const struct ordlock_nl_take ordlock_nl_release_takes[] = {
	{ ORDLOCK_A_KEYS, ORDLOCK_NL_TAKES_KEYS },
	{ ORDLOCK_A_FLAGS, ORDLOCK_NL_TAKES_FLAGS },
	{ }
};

const struct ordlock_nl_take ordlock_nl_cancel_takes[] = {
	{ ORDLOCK_A_COOKIE, ORDLOCK_NL_TAKES_COOKIE },
	{ }
};

const struct ordlock_nl_take ordlock_nl_label_takes[] = {
	{ ORDLOCK_A_LABEL, ORDLOCK_NL_TAKES_LABEL },
	{ }
};

/* Parse ORDLOCK_A_KEYS into a sorted, merged array the caller kvfree()s */
static int ordlock_nl_parse_keys(struct genl_info *info, bool mode_required,
				 struct ordlock_rkey **out, unsigned int *n)
{
	struct nlattr *keys = info->attrs[ORDLOCK_A_KEYS];
	struct nlattr *tb[ORDLOCK_K_MAX + 1];
	struct ordlock_rkey *rkeys;
	unsigned int count = 0, i = 0;
	struct nlattr *key;
	int rem, ret;

	if (!keys) {
		NL_SET_ERR_MSG(info->extack, "missing keys");
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, ORDLOCK_A_KEYS);
		return -EINVAL;
	}
	nla_for_each_nested(key, keys, rem)
		count++;
	if (!count) {
		NL_SET_ERR_MSG_ATTR(info->extack, keys, "no keys");
		return -EINVAL;
	}
	if (count > (mode_required ? ordlock_max_keys_per_request() :
		     ordlock_max_keys_per_release())) {
		NL_SET_ERR_MSG_ATTR(info->extack, keys,
				    "more keys than max_keys_per_request");
		return -E2BIG;
	}
	rkeys = kvmalloc_array(count, sizeof(*rkeys), GFP_KERNEL_ACCOUNT);
	if (!rkeys)
		return -ENOMEM;
	nla_for_each_nested(key, keys, rem) {
		ret = -EINVAL;
		if (nla_type(key) != ORDLOCK_A_KEY) {
			NL_SET_ERR_MSG_ATTR(info->extack, key,
					    "keys holds ORDLOCK_A_KEY entries only");
			goto err;
		}
		ret = nla_parse_nested(tb, ORDLOCK_K_MAX, key, ordlock_nl_key_policy,
				       info->extack);
		if (ret)
			goto err;
		ret = -EINVAL;
		if (!tb[ORDLOCK_K_RANK] || !tb[ORDLOCK_K_ID]) {
			NL_SET_ERR_MSG_ATTR(info->extack, key, "key without rank or id");
			goto err;
		}
		rkeys[i].rank = nla_get_u32(tb[ORDLOCK_K_RANK]);
		rkeys[i].id = nla_get_u64(tb[ORDLOCK_K_ID]);
		rkeys[i].mode = tb[ORDLOCK_K_MODE] ? nla_get_u32(tb[ORDLOCK_K_MODE]) : 0;
		rkeys[i].index = i;
		if (tb[ORDLOCK_K_TOKEN]) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[ORDLOCK_K_TOKEN],
					    "a token is not taken here");
			goto err;
		}
		if (mode_required && !rkeys[i].mode) {
			NL_SET_ERR_MSG_ATTR(info->extack, key, "key without a mode");
			goto err;
		}
		i++;
	}
	*n = ordlock_keys_sort_merge(rkeys, count);
	*out = rkeys;
	return 0;
err:
	kvfree(rkeys);
	return ret;
}

static u32 ordlock_nl_status(int ret)
{
	switch (ret) {
	case 0:
		return ORDLOCK_STATUS_GRANTED;
	case -EINPROGRESS:
		return ORDLOCK_STATUS_QUEUED;
	case -ECANCELED:
		return ORDLOCK_STATUS_CANCELLED;
	default:
		return ORDLOCK_STATUS_REFUSED;
	}
}

/* The outcome of a request: the reply, or the RESULT of a queued one */
static struct sk_buff *ordlock_nl_outcome(struct ordlock_nl_owner *nlo, u8 cmd,
					  u32 portid, u32 seq, u32 status, int ret)
{
	struct ordlock_owner *owner = nlo->owner;
	struct sk_buff *msg;
	void *hdr;

	lockdep_assert_held(&owner->lock);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return NULL;
	hdr = genlmsg_put(msg, portid, seq, &ordlock_genl_family, 0, cmd);
	if (!hdr)
		goto err;
	if (nla_put_u64_64bit(msg, ORDLOCK_A_COOKIE, nlo->cookie, ORDLOCK_A_PAD) ||
	    nla_put_u32(msg, ORDLOCK_A_STATUS, status))
		goto err;
	/* An acquire's outcome says whether it let held keys go */
	if (cmd != ORDLOCK_CMD_RELEASE && !nlo->req.convert &&
	    nla_put_u32(msg, ORDLOCK_A_RESULT_FLAGS, nlo->req.result_flags))
		goto err;
	if (!ret) {
		if (nla_put_u64_64bit(msg, ORDLOCK_A_TOKEN, nlo->req.token,
				      ORDLOCK_A_PAD))
			goto err;
	} else if (ret != -EINPROGRESS) {
		if (nla_put_u32(msg, ORDLOCK_A_ERRNO, -ret) ||
		    ordlock_nl_put_failure(msg, &owner->failure) ||
		    ordlock_nl_put_cycle(msg, owner))
			goto err;
	}
	genlmsg_end(msg, hdr);
	return msg;
err:
	nlmsg_free(msg);
	return NULL;
}

/*
 * The owner of socket @sk, bound to @portid; with @sk NULL, an owner of a
 * socket bound to @portid that is closing (SOCK_DEAD, set before netlink
 * tells the families)
 */
static struct ordlock_nl_owner *ordlock_nl_find(u32 portid, const struct sock *sk)
{
	struct ordlock_nl_owner *nlo;

	lockdep_assert_held(&ordlock_nl_lock);
	hlist_for_each_entry(nlo, &ordlock_nl_owners[portid % ORDLOCK_NL_HASH], node)
		if (nlo->portid == portid &&
		    (sk ? nlo->sk == sk : sock_flag(nlo->sk, SOCK_DEAD)))
			return nlo;
	return NULL;
}

static void ordlock_nl_work(struct work_struct *work);
static void ordlock_nl_revoked(struct ordlock_owner *owner, void *data);

static enum hrtimer_restart ordlock_nl_timer(struct hrtimer *timer)
{
	struct ordlock_nl_owner *nlo = container_of(timer, struct ordlock_nl_owner,
						    timer);

	queue_work(ordlock_nl_wq, &nlo->work);
	return HRTIMER_NORESTART;
}

/* Called under a bucket lock when the request's current key is granted */
static void ordlock_nl_notify(struct ordlock_waiter *w)
{
	struct ordlock_request *req = container_of(w, struct ordlock_request, w);
	struct ordlock_nl_owner *nlo = container_of(req, struct ordlock_nl_owner, req);

	queue_work(ordlock_nl_wq, &nlo->work);
}

/* The socket that sent @skb (set by netlink for every request it delivers) */
static struct sock *ordlock_nl_sender(struct sk_buff *skb)
{
	return NETLINK_CB(skb).sk;
}

/*
 * The owner of the socket that sent @skb, created on its first lock
 * request, for the user of the requesting task, if that task may open
 * /dev/ordlock. Return: the owner, or ERR_PTR(-EACCES, -EDQUOT or -ENOMEM).
 */
static struct ordlock_nl_owner *ordlock_nl_get(struct sk_buff *skb, u32 portid)
{
	struct sock *sk = ordlock_nl_sender(skb);
	struct ordlock_owner *owner;
	struct ordlock_nl_owner *nlo;
	int ret;

	mutex_lock(&ordlock_nl_lock);
	nlo = ordlock_nl_find(portid, sk);
	mutex_unlock(&ordlock_nl_lock);
	if (nlo)
		return nlo;
	/* A path walk: outside ordlock_nl_lock, once per socket */
	ret = ordlock_access_may_lock();
	if (ret)
		return ERR_PTR(ret);
	mutex_lock(&ordlock_nl_lock);
	/* Another request of the socket may have created it meanwhile */
	nlo = ordlock_nl_find(portid, sk);
	if (nlo)
		goto out;
	nlo = kzalloc(sizeof(*nlo), GFP_KERNEL_ACCOUNT);
	if (!nlo) {
		nlo = ERR_PTR(-ENOMEM);
		goto out;
	}
	owner = ordlock_owner_create(ORDLOCK_KIND_NETLINK);
	if (IS_ERR(owner)) {
		kfree(nlo);
		nlo = ERR_CAST(owner);
		goto out;
	}
	nlo->owner = owner;
	/* Not reachable yet: nobody else reads the hook */
	owner->lease.revoked_hook = ordlock_nl_revoked;
	owner->lease.hook_data = nlo;
	nlo->portid = portid;
	sock_hold(sk);
	nlo->sk = sk;
	INIT_WORK(&nlo->work, ordlock_nl_work);
	hrtimer_init(&nlo->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	nlo->timer.function = ordlock_nl_timer;
	hlist_add_head(&nlo->node, &ordlock_nl_owners[portid % ORDLOCK_NL_HASH]);
out:
	mutex_unlock(&ordlock_nl_lock);
	return nlo;
}

/* Why ordlock_nl_get() failed, in the extack; return: the errno */
static int ordlock_nl_get_error(struct genl_info *info, struct ordlock_nl_owner *nlo)
{
	if (PTR_ERR(nlo) == -EDQUOT)
		NL_SET_ERR_MSG(info->extack,
			       "this user has max_owners_per_user owners already");
	else if (PTR_ERR(nlo) == -EACCES)
		NL_SET_ERR_MSG(info->extack,
			       "locking needs the permission to open " ORDLOCK_DEVICE);
	else
		NL_SET_ERR_MSG(info->extack, "out of memory creating the socket's owner");
	return PTR_ERR(nlo);
}

/*
 * The grant of @nlo's request could not be told to its port: undo it, or the
 * requester would hold what it does not know of. An acquire releases what
 * it took; a conversion goes back to the mode it had, if that is possible
 * without waiting (always, after an upgrade). Back down, the socket's own
 * (ended) request does it: a downgrade of a netlink request never waits,
 * in a cluster domain either; back up, the ioctl's try (in a cluster
 * domain it waits for the DLM's answer, 5 s at most).
 */
static void ordlock_nl_undo(struct ordlock_nl_owner *nlo)
{
	struct ordlock_request *req = &nlo->req;
	struct ordlock_rkey key;
	u64 token;

	lockdep_assert_held(&nlo->owner->lock);
	if (!req->convert) {
		ordlock_req_release_token(nlo->owner, req->token);
		return;
	}
	key = req->keys[0];
	key.mode = req->old_mode;
	if (key.mode == ORDLOCK_MODE_SHARED) {
		req->keys = &key;
		req->n = 1;
		req->try = true;
		ordlock_request_convert(req, 0);
		req->keys = NULL;
		return;
	}
	ordlock_req_convert(nlo->owner, &key, 0, true, &token);
}

/* The request of @nlo ended with @ret: tell its port, once */
static void ordlock_nl_finish(struct ordlock_nl_owner *nlo, int ret)
{
	struct ordlock_owner *owner = nlo->owner;
	struct sk_buff *msg;
	u32 status;

	lockdep_assert_held(&owner->lock);
	/* An upgrade asks for no lease: as when it is granted at once */
	if (!ret && !nlo->req.convert)
		ordlock_lease_granted(owner, nlo->lease_ms);
	/* A lease that expired while the request waited: revoked now */
	if (ordlock_lease_check(owner))
		ret = -EKEYEXPIRED;
	status = ret == -ETIMEDOUT ? ORDLOCK_STATUS_TIMEOUT :
		 ret == -EDEADLK && owner->failure.reason == ORDLOCK_REASON_DEADLOCK ?
		 ORDLOCK_STATUS_DEADLOCK : ordlock_nl_status(ret);
	msg = ordlock_nl_outcome(nlo, ORDLOCK_CMD_RESULT, 0, 0, status, ret);
	/*
	 * The port id of a closing socket may be another socket's already:
	 * send nothing. (netlink frees the port id a moment before it marks
	 * the socket dead; that moment is not covered.)
	 */
	if (msg && sock_flag(nlo->sk, SOCK_DEAD)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	/* A grant the requester cannot learn of would never be released */
	if ((!msg || genlmsg_unicast(&init_net, msg, nlo->portid)) && !ret)
		ordlock_nl_undo(nlo);
	kvfree(nlo->keys);
	nlo->keys = NULL;
}

static void ordlock_nl_work(struct work_struct *work)
{
	struct ordlock_nl_owner *nlo = container_of(work, struct ordlock_nl_owner, work);
	struct ordlock_owner *owner = nlo->owner;
	int ret;

	mutex_lock(&owner->lock);
	if (!nlo->req.active)
		goto out;
	ret = ordlock_request_poll(&nlo->req);
	if (ret == -EINPROGRESS)
		hrtimer_start(&nlo->timer, ordlock_request_next_event(&nlo->req),
			      HRTIMER_MODE_ABS);
	else
		ordlock_nl_finish(nlo, ret);
out:
	mutex_unlock(&owner->lock);
}

/* Withdraw a request in progress; the owner is locked */
static void ordlock_nl_cancel(struct ordlock_nl_owner *nlo)
{
	lockdep_assert_held(&nlo->owner->lock);
	ordlock_request_cancel(&nlo->req);
	hrtimer_cancel(&nlo->timer);
	kvfree(nlo->keys);
	nlo->keys = NULL;
}

/* Free @nlo, already out of the table: release all it holds and waits for */
static void ordlock_nl_destroy(struct ordlock_nl_owner *nlo)
{
	mutex_lock(&nlo->owner->lock);
	if (nlo->req.active)
		ordlock_nl_cancel(nlo);
	mutex_unlock(&nlo->owner->lock);
	hrtimer_cancel(&nlo->timer);
	cancel_work_sync(&nlo->work);
	ordlock_owner_destroy(nlo->owner);
	sock_put(nlo->sk);
	kfree(nlo);
}

static int ordlock_nl_reply(struct genl_info *info, struct ordlock_nl_owner *nlo,
			    int ret)
{
	struct sk_buff *msg;

	msg = ordlock_nl_outcome(nlo, info->genlhdr->cmd, info->snd_portid,
				 info->snd_seq, ordlock_nl_status(ret), ret);
	if (!msg)
		return -ENOMEM;
	return genlmsg_reply(msg, info);
}

/* Common part of ACQUIRE and CONVERT */
static int ordlock_nl_lock_request(struct sk_buff *skb, struct genl_info *info,
				   bool convert)
{
	struct ordlock_nl_owner *nlo;
	struct ordlock_owner *owner;
	struct ordlock_rkey *keys;
	unsigned int n;
	u64 timeout = 0;
	u32 flags = 0;
	int ret;

	if (info->attrs[ORDLOCK_A_FLAGS])
		flags = nla_get_u32(info->attrs[ORDLOCK_A_FLAGS]);
	if (flags & ~ORDLOCK_ACQUIRE_FLAGS) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_FLAGS],
				    "unknown flags");
		return -EINVAL;
	}
	if (info->attrs[ORDLOCK_A_TIMEOUT_NS])
		timeout = nla_get_u64(info->attrs[ORDLOCK_A_TIMEOUT_NS]);
	if (convert && info->attrs[ORDLOCK_A_LEASE_MS]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_LEASE_MS],
				    "a conversion takes no lease");
		return -EINVAL;
	}
	if (info->attrs[ORDLOCK_A_DOMAIN] &&
	    ordlock_domain_name_check(nla_data(info->attrs[ORDLOCK_A_DOMAIN]))) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
				    "bad domain name: 1 to 31 of [A-Za-z0-9._-]");
		return -EINVAL;
	}
	if (convert && (flags & ORDLOCK_ACQUIRE_REORDER)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_FLAGS],
				    "convert does not take ORDLOCK_ACQUIRE_REORDER");
		return -EINVAL;
	}
	ret = ordlock_nl_parse_keys(info, true, &keys, &n);
	if (ret)
		return ret;
	if (convert && n != 1) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_KEYS],
				    "convert takes exactly one key");
		ret = -EINVAL;
		goto out_keys;
	}
	nlo = ordlock_nl_get(skb, info->snd_portid);
	if (IS_ERR(nlo)) {
		ret = ordlock_nl_get_error(info, nlo);
		goto out_keys;
	}
	owner = nlo->owner;
	mutex_lock(&owner->lock);
	if (nlo->req.active) {
		NL_SET_ERR_MSG(info->extack, "a request of this socket is in progress");
		ret = -EBUSY;
		goto out_unlock;
	}
	nlo->cookie = info->attrs[ORDLOCK_A_COOKIE] ?
		      nla_get_u64(info->attrs[ORDLOCK_A_COOKIE]) : 0;
	ret = ordlock_lease_check(owner);
	if (ret) {
		nlo->req.token = 0;
		ret = ordlock_nl_reply(info, nlo, ret) ? -ENOBUFS : 0;
		goto out_unlock;
	}
	if (info->attrs[ORDLOCK_A_DOMAIN]) {
		char name[ORDLOCK_DOMAIN_NAME_MAX] = {};

		nla_strscpy(name, info->attrs[ORDLOCK_A_DOMAIN], sizeof(name));
		ret = ordlock_owner_set_domain(owner, name);
		if (ret == -EBUSY)
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
					    "cannot change domain while holding keys");
		else if (ret == -EDQUOT)
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
					    ORDLOCK_NL_DOMAIN_LIMIT_MSG);
		else if (ret)
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
					    "cannot create the domain (limit or memory)");
		if (ret)
			goto out_unlock;
	}
	ordlock_owner_touch(owner);
	memset(&nlo->req, 0, sizeof(nlo->req));
	nlo->req.owner = owner;
	nlo->req.keys = keys;
	nlo->req.n = n;
	nlo->req.try = flags & ORDLOCK_ACQUIRE_TRY;
	nlo->req.reorder = flags & ORDLOCK_ACQUIRE_REORDER;
	nlo->req.notify = ordlock_nl_notify;
	nlo->lease_ms = info->attrs[ORDLOCK_A_LEASE_MS] ?
			nla_get_u32(info->attrs[ORDLOCK_A_LEASE_MS]) : 0;
	timeout = ordlock_timeout_ns(timeout);
	if (convert)
		ret = ordlock_request_convert(&nlo->req, timeout);
	else
		ret = ordlock_request_start(&nlo->req, timeout);
	if (!ret && !convert)
		ordlock_lease_granted(owner, nlo->lease_ms);
	if (ret == -EINPROGRESS) {
		nlo->keys = keys;
		keys = NULL;
		hrtimer_start(&nlo->timer, ordlock_request_next_event(&nlo->req),
			      HRTIMER_MODE_ABS);
	}
	/* Reply before unlocking, so that no RESULT can overtake it */
	if (ordlock_nl_reply(info, nlo, ret)) {
		if (ret == -EINPROGRESS)
			ordlock_nl_cancel(nlo);
		else if (!ret)
			ordlock_nl_undo(nlo);
		ret = -ENOBUFS;
	} else {
		ret = 0;
	}
out_unlock:
	mutex_unlock(&owner->lock);
out_keys:
	kvfree(keys);
	return ret;
}

int ordlock_nl_acquire_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ordlock_nl_lock_request(skb, info, false);
}

int ordlock_nl_convert_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ordlock_nl_lock_request(skb, info, true);
}

int ordlock_nl_release_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ordlock_rkey *keys = NULL;
	struct ordlock_nl_owner *nlo;
	unsigned int n = 0;
	u32 flags = 0;
	int ret;

	if (info->attrs[ORDLOCK_A_FLAGS])
		flags = nla_get_u32(info->attrs[ORDLOCK_A_FLAGS]);
	if (flags & ~ORDLOCK_RELEASE_FLAGS) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_FLAGS],
				    "unknown flags");
		return -EINVAL;
	}
	if (!!(flags & ORDLOCK_RELEASE_ALL) == !!info->attrs[ORDLOCK_A_KEYS]) {
		NL_SET_ERR_MSG(info->extack, "give either keys or ORDLOCK_RELEASE_ALL");
		return -EINVAL;
	}
	if (!(flags & ORDLOCK_RELEASE_ALL)) {
		ret = ordlock_nl_parse_keys(info, false, &keys, &n);
		if (ret)
			return ret;
	}
	nlo = ordlock_nl_get(skb, info->snd_portid);
	if (IS_ERR(nlo)) {
		kvfree(keys);
		return ordlock_nl_get_error(info, nlo);
	}
	mutex_lock(&nlo->owner->lock);
	if (nlo->owner->busy) {
		NL_SET_ERR_MSG(info->extack, "a request of this socket is in progress");
		ret = -EBUSY;
		goto out_unlock;
	}
	if (flags & ORDLOCK_RELEASE_ALL) {
		ordlock_req_release_all(nlo->owner);
		ordlock_lease_acknowledge(nlo->owner);
		ret = 0;
	} else {
		ret = ordlock_lease_check(nlo->owner);
		if (!ret)
			ret = ordlock_req_release_keys(nlo->owner, keys, n);
	}
	nlo->cookie = 0;
	nlo->req.token = 0;
	if (ordlock_nl_reply(info, nlo, ret))
		ret = -ENOBUFS;
	else
		ret = 0;
out_unlock:
	mutex_unlock(&nlo->owner->lock);
	kvfree(keys);
	return ret;
}

/* RENEW */
const struct ordlock_nl_take ordlock_nl_renew_takes[] = {
	{ ORDLOCK_A_LEASE_MS, ORDLOCK_NL_TAKES_LEASE_MS },
	{ }
};

/* TOKEN_CHECK: the key (with its token) comes in ORDLOCK_A_KEY */
const struct ordlock_nl_take ordlock_nl_token_check_takes[] = {
	{ ORDLOCK_A_DOMAIN, ORDLOCK_NL_TAKES_DOMAIN },
	{ ORDLOCK_A_KEY, NLA_POLICY_NESTED(ordlock_nl_key_policy) },
	{ }
};

/* Put one revoked key, with its mode and token */
static int ordlock_nl_put_revoked_key(struct sk_buff *msg,
				      const struct ordlock_revoked_key *r)
{
	struct nlattr *nest = nla_nest_start(msg, ORDLOCK_A_KEY);

	if (!nest ||
	    nla_put_u32(msg, ORDLOCK_K_RANK, r->key.rank) ||
	    nla_put_u64_64bit(msg, ORDLOCK_K_ID, r->key.id, ORDLOCK_K_PAD) ||
	    nla_put_u32(msg, ORDLOCK_K_MODE, r->key.mode) ||
	    nla_put_u64_64bit(msg, ORDLOCK_K_TOKEN, r->token, ORDLOCK_K_PAD))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/*
 * The lease of the socket's owner was revoked (lease.c, owner locked):
 * tell the port, with the failure record and every revoked key. Lost when
 * the socket's buffer is full, as a RESULT would be: the next request is
 * refused with EKEYEXPIRED all the same.
 */
static void ordlock_nl_revoked(struct ordlock_owner *owner, void *data)
{
	struct ordlock_nl_owner *nlo = data;
	struct ordlock_lease *l = &owner->lease;
	unsigned int i, n = l->keys ? l->nkeys : min(l->nkeys, 2U);
	struct nlattr *keys;
	struct sk_buff *msg;
	void *hdr;

	lockdep_assert_held(&owner->lock);
	if (sock_flag(nlo->sk, SOCK_DEAD))
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE + (size_t)n * 64, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &ordlock_genl_family, 0, ORDLOCK_CMD_REVOKED);
	if (!hdr || ordlock_nl_put_failure(msg, &owner->failure))
		goto err;
	keys = nla_nest_start(msg, ORDLOCK_A_KEYS);
	if (!keys)
		goto err;
	for (i = 0; i < n; i++)
		if (ordlock_nl_put_revoked_key(msg, l->keys ? &l->keys[i] :
					       i ? &l->last : &l->first))
			goto err;
	nla_nest_end(msg, keys);
	genlmsg_end(msg, hdr);
	genlmsg_unicast(&init_net, msg, nlo->portid);
	return;
err:
	nlmsg_free(msg);
}

int ordlock_nl_renew_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ordlock_nl_owner *nlo;
	struct sk_buff *msg;
	u32 lease_ms = 0;
	u64 left_ms = 0;
	void *hdr;
	int ret;

	if (info->attrs[ORDLOCK_A_LEASE_MS])
		lease_ms = nla_get_u32(info->attrs[ORDLOCK_A_LEASE_MS]);
	nlo = ordlock_nl_get(skb, info->snd_portid);
	if (IS_ERR(nlo))
		return ordlock_nl_get_error(info, nlo);
	mutex_lock(&nlo->owner->lock);
	if (nlo->owner->busy) {
		NL_SET_ERR_MSG(info->extack, "a request of this socket is in progress");
		ret = -EBUSY;
		goto out_unlock;
	}
	ret = ordlock_lease_renew(nlo->owner, lease_ms, &left_ms);
	nlo->cookie = 0;
	nlo->req.token = 0;
	if (ret) {
		ret = ordlock_nl_reply(info, nlo, ret) ? -ENOBUFS : 0;
		goto out_unlock;
	}
	ret = -ENOBUFS;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		goto out_unlock;
	hdr = genlmsg_put(msg, info->snd_portid, info->snd_seq,
			  &ordlock_genl_family, 0, ORDLOCK_CMD_RENEW);
	if (!hdr ||
	    nla_put_u32(msg, ORDLOCK_A_STATUS, ORDLOCK_STATUS_GRANTED) ||
	    nla_put_u64_64bit(msg, ORDLOCK_A_LEFT_MS, left_ms, ORDLOCK_A_PAD)) {
		nlmsg_free(msg);
		goto out_unlock;
	}
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info) ? -ENOBUFS : 0;
out_unlock:
	mutex_unlock(&nlo->owner->lock);
	return ret;
}

int ordlock_nl_token_check_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[ORDLOCK_K_MAX + 1];
	struct ordlock_domain *domain;
	struct ordlock_rkey key = {};
	const char *name = ORDLOCK_DEFAULT_DOMAIN;
	int ret;

	if (!info->attrs[ORDLOCK_A_KEY]) {
		NL_SET_ERR_MSG(info->extack, "missing the key");
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, ORDLOCK_A_KEY);
		return -EINVAL;
	}
	ret = nla_parse_nested(tb, ORDLOCK_K_MAX, info->attrs[ORDLOCK_A_KEY],
			       ordlock_nl_key_policy, info->extack);
	if (ret)
		return ret;
	if (!tb[ORDLOCK_K_RANK] || !tb[ORDLOCK_K_ID] || !tb[ORDLOCK_K_TOKEN]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_KEY],
				    "the key needs a rank, an id and a token");
		return -EINVAL;
	}
	if (info->attrs[ORDLOCK_A_DOMAIN]) {
		name = nla_data(info->attrs[ORDLOCK_A_DOMAIN]);
		if (ordlock_domain_name_check(name)) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
					    "bad domain name: 1 to 31 of [A-Za-z0-9._-]");
			return -EINVAL;
		}
	}
	key.rank = nla_get_u32(tb[ORDLOCK_K_RANK]);
	key.id = nla_get_u64(tb[ORDLOCK_K_ID]);
	domain = ordlock_domain_find_get(name);
	ret = domain ? ordlock_lease_token_check(domain, &key,
						 nla_get_u64(tb[ORDLOCK_K_TOKEN])) :
		       -ESTALE;
	if (domain)
		ordlock_domain_put(domain);
	if (ret)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_KEY],
				    "stale token: not the live grant of the key");
	return ret;
}

int ordlock_nl_cancel_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ordlock_nl_owner *nlo;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, ORDLOCK_A_COOKIE)) {
		NL_SET_ERR_MSG(info->extack, "missing the cookie of the request to cancel");
		return -EINVAL;
	}
	mutex_lock(&ordlock_nl_lock);
	nlo = ordlock_nl_find(info->snd_portid, ordlock_nl_sender(skb));
	mutex_unlock(&ordlock_nl_lock);
	if (!nlo) {
		NL_SET_ERR_MSG(info->extack, "no request of this socket is queued");
		return -ENOENT;
	}
	mutex_lock(&nlo->owner->lock);
	if (!nlo->req.active ||
	    nlo->cookie != nla_get_u64(info->attrs[ORDLOCK_A_COOKIE])) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_COOKIE],
				    "no queued request with this cookie");
		ret = -ENOENT;
	} else {
		ordlock_nl_cancel(nlo);
		ret = ordlock_nl_reply(info, nlo, -ECANCELED) ? -ENOBUFS : 0;
	}
	mutex_unlock(&nlo->owner->lock);
	return ret;
}

static int ordlock_nl_notifier(struct notifier_block *nb, unsigned long state,
			       void *data)
{
	struct netlink_notify *n = data;
	struct ordlock_nl_owner *nlo;

	if (state != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	/* the closing socket is dead already; a new one on its port id is not */
	mutex_lock(&ordlock_nl_lock);
	nlo = ordlock_nl_find(n->portid, NULL);
	if (nlo)
		hlist_del(&nlo->node);
	mutex_unlock(&ordlock_nl_lock);
	if (nlo)
		ordlock_nl_destroy(nlo);
	return NOTIFY_DONE;
}

static struct notifier_block ordlock_nl_nb = {
	.notifier_call = ordlock_nl_notifier,
};

/* ordlock_nl_owners_init() - before the family is registered */
int ordlock_nl_owners_init(void)
{
	int ret;

	ordlock_nl_wq = alloc_workqueue("ordlock", 0, 0);
	if (!ordlock_nl_wq)
		return -ENOMEM;
	ret = netlink_register_notifier(&ordlock_nl_nb);
	if (ret)
		destroy_workqueue(ordlock_nl_wq);
	return ret;
}

/* ordlock_nl_owners_exit() - after the family is unregistered */
void ordlock_nl_owners_exit(void)
{
	struct ordlock_nl_owner *nlo;
	struct hlist_node *tmp;
	unsigned int i;

	netlink_unregister_notifier(&ordlock_nl_nb);
	/* Sockets may outlive the module: release what they hold */
	mutex_lock(&ordlock_nl_lock);
	for (i = 0; i < ORDLOCK_NL_HASH; i++) {
		hlist_for_each_entry_safe(nlo, tmp, &ordlock_nl_owners[i], node) {
			hlist_del(&nlo->node);
			ordlock_nl_destroy(nlo);
		}
	}
	mutex_unlock(&ordlock_nl_lock);
	destroy_workqueue(ordlock_nl_wq);
}

int ordlock_nl_set_label_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *attr = info->attrs[ORDLOCK_A_LABEL];
	struct ordlock_nl_owner *nlo;

	if (!attr) {
		NL_SET_ERR_MSG(info->extack, "missing label");
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, ORDLOCK_A_LABEL);
		return -EINVAL;
	}
	if (ordlock_order_label_check(nla_data(attr))) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "a label is up to 31 characters of [A-Za-z0-9._-]");
		return -EINVAL;
	}
	nlo = ordlock_nl_get(skb, info->snd_portid);
	if (IS_ERR(nlo))
		return ordlock_nl_get_error(info, nlo);
	mutex_lock(&nlo->owner->lock);
	strscpy(nlo->owner->label, nla_data(attr), sizeof(nlo->owner->label));
	mutex_unlock(&nlo->owner->lock);
	return 0;
}
