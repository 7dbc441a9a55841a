// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "ordlock": locks for event-driven programs,
 * queries and administration, and the "events" multicast group.
 *
 * A netlink owner is one socket (port id) of the initial network
 * namespace. Its requests go through the same request code as the ioctls
 * (request.c); a queued request is moved on by ordlock_nl_work(), which the
 * grant (through the waiter's notify hook) or a timer queues, and ends with
 * one ORDLOCK_CMD_RESULT message to the port.
 */
#include <linux/cred.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/notifier.h>
#include <linux/ratelimit.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/sock.h>
#include <net/net_namespace.h>

#include "access.h"
#include "compat.h"
#include "domain.h"
#include "events.h"
#include "graph.h"
#include "keys.h"
#include "netlink.h"
#include "owner.h"
#include "params.h"
#include "request.h"
#include "table.h"
#include "user.h"

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
	struct work_struct work;
	struct hrtimer timer;
};

#define ORDLOCK_NL_HASH 64

/* The extack of a domain its creator's user may not create */
#define ORDLOCK_NL_DOMAIN_LIMIT_MSG \
	"this user has max_domains_per_user domains already"

/*
 * ordlock_nl_lock protects ordlock_nl_owners. It nests outside owner->lock
 * (module exit destroys owners under it) and is never taken inside it.
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
static DEFINE_RATELIMIT_STATE(ordlock_nl_event_ratelimit, HZ, 100);

static struct genl_family ordlock_genl_family;

enum {
	ORDLOCK_NL_MCGRP_EVENTS,
};

static const struct genl_multicast_group ordlock_nl_mcgrps[] = {
	[ORDLOCK_NL_MCGRP_EVENTS] = {
		.name = ORDLOCK_GENL_MCGRP_EVENTS,
#ifdef GENL_MCAST_CAP_NET_ADMIN
		/* Events name any user's owners and keys: an admin view */
		.flags = GENL_MCAST_CAP_NET_ADMIN,
#endif
	},
};

static const struct nla_policy ordlock_nl_key_policy[ORDLOCK_K_MAX + 1] = {
	[ORDLOCK_K_RANK] = { .type = NLA_U32 },
	[ORDLOCK_K_ID] = { .type = NLA_U64 },
	[ORDLOCK_K_MODE] = NLA_POLICY_RANGE(NLA_U32, 0, ORDLOCK_MODE_EXCLUSIVE),
};

static const struct nla_policy ordlock_nl_entry_policy[ORDLOCK_E_MAX + 1] = {
	[ORDLOCK_E_RANK] = { .type = NLA_U32 },
	[ORDLOCK_E_NAME] = { .type = NLA_NUL_STRING, .len = ORDLOCK_RANK_NAME_MAX - 1 },
};

static const struct nla_policy ordlock_nl_policy[ORDLOCK_A_MAX + 1] = {
	[ORDLOCK_A_DOMAIN] = { .type = NLA_NUL_STRING, .len = ORDLOCK_DOMAIN_NAME_MAX - 1 },
	[ORDLOCK_A_KEYS] = NLA_POLICY_NESTED_ARRAY(ordlock_nl_key_policy),
	[ORDLOCK_A_FLAGS] = { .type = NLA_U32 },
	[ORDLOCK_A_TIMEOUT_NS] = { .type = NLA_U64 },
	[ORDLOCK_A_COOKIE] = { .type = NLA_U64 },
	[ORDLOCK_A_POLICY] = NLA_POLICY_MAX(NLA_U32, ORDLOCK_POLICY_TIMEOUT),
	[ORDLOCK_A_DETECT_DELAY_MS] = { .type = NLA_U32 },
	[ORDLOCK_A_RANK_NAMES] = NLA_POLICY_NESTED_ARRAY(ordlock_nl_entry_policy),
};

/* Reject attributes the command does not take (@allowed: bit per attribute) */
static int ordlock_nl_only(struct genl_info *info, unsigned long allowed)
{
	unsigned int i;

	for (i = 1; i <= ORDLOCK_A_MAX; i++) {
		if (info->attrs[i] && !(allowed & BIT(i))) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[i],
					    "attribute not taken by this command");
			return -EINVAL;
		}
	}
	return 0;
}

static int ordlock_nl_pre_doit(const struct ordlock_genl_split_ops *ops,
			       struct sk_buff *skb, struct genl_info *info)
{
	if (!net_eq(genl_info_net(info), &init_net)) {
		NL_SET_ERR_MSG(info->extack,
			       "ordlock serves the initial network namespace only");
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * cb->args of the dumps past their positions: whether the dump shows only
 * the owners of one user (the sender is not an admin), and that user's uid
 */
#define ORDLOCK_NL_DUMP_OWN_ONLY	4
#define ORDLOCK_NL_DUMP_UID		5

static int ordlock_nl_dump_check(struct netlink_callback *cb)
{
	if (!net_eq(sock_net(cb->skb->sk), &init_net)) {
		NL_SET_ERR_MSG(cb->extack,
			       "ordlock serves the initial network namespace only");
		return -EOPNOTSUPP;
	}
	/* The same test as GENL_ADMIN_PERM: the sender and the socket's opener */
	cb->args[ORDLOCK_NL_DUMP_OWN_ONLY] = !netlink_capable(cb->skb, CAP_NET_ADMIN);
	cb->args[ORDLOCK_NL_DUMP_UID] = __kuid_val(current_euid());
	return 0;
}

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

static int ordlock_nl_put_key(struct sk_buff *skb, int type, u32 rank, u64 id,
			      u32 mode)
{
	struct nlattr *nest = nla_nest_start(skb, type);

	if (!nest ||
	    nla_put_u32(skb, ORDLOCK_K_RANK, rank) ||
	    nla_put_u64_64bit(skb, ORDLOCK_K_ID, id, ORDLOCK_K_PAD) ||
	    (mode && nla_put_u32(skb, ORDLOCK_K_MODE, mode)))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int ordlock_nl_put_failure(struct sk_buff *skb,
				  const struct ordlock_failure *f)
{
	struct nlattr *nest = nla_nest_start(skb, ORDLOCK_A_FAILURE);

	if (!nest ||
	    nla_put_u32(skb, ORDLOCK_F_REASON, f->reason) ||
	    nla_put_u32(skb, ORDLOCK_F_ERRNO, f->error) ||
	    nla_put_u32(skb, ORDLOCK_F_PID, f->pid) ||
	    nla_put_u32(skb, ORDLOCK_F_INDEX, f->index) ||
	    ordlock_nl_put_key(skb, ORDLOCK_F_KEY, f->key.rank, f->key.id, f->key.mode) ||
	    (f->held.mode &&
	     ordlock_nl_put_key(skb, ORDLOCK_F_HELD, f->held.rank, f->held.id,
				f->held.mode)) ||
	    nla_put_u32(skb, ORDLOCK_F_HOLDER_MODE, f->holder_mode) ||
	    nla_put_u32(skb, ORDLOCK_F_CYCLE_LEN, f->cycle_len))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int ordlock_nl_put_owner(struct sk_buff *skb, u64 id, pid_t pid,
				const char *comm)
{
	char clean[ORDLOCK_COMM_LEN];

	ordlock_comm_sanitize(clean, comm);
	if (nla_put_u64_64bit(skb, ORDLOCK_E_OWNER_ID, id, ORDLOCK_E_PAD) ||
	    nla_put_u32(skb, ORDLOCK_E_PID, pid) ||
	    nla_put_string(skb, ORDLOCK_E_COMM, clean))
		return -EMSGSIZE;
	return 0;
}

static int ordlock_nl_put_cycle(struct sk_buff *skb, struct ordlock_owner *owner)
{
	struct nlattr *cycle, *step;
	unsigned int i;

	if (owner->failure.reason != ORDLOCK_REASON_DEADLOCK || !owner->cycle)
		return 0;
	cycle = nla_nest_start(skb, ORDLOCK_A_CYCLE);
	if (!cycle)
		return -EMSGSIZE;
	for (i = 0; i < owner->ncycle; i++) {
		const struct ordlock_cycle_step *s = &owner->cycle[i];

		step = nla_nest_start(skb, ORDLOCK_A_ENTRY);
		if (!step ||
		    ordlock_nl_put_owner(skb, s->owner_id, s->pid, s->comm) ||
		    ordlock_nl_put_key(skb, ORDLOCK_E_KEY, s->key.rank, s->key.id,
				       s->key.mode) ||
		    nla_put_u32(skb, ORDLOCK_E_EDGE, s->edge) ||
		    nla_put_u32(skb, ORDLOCK_E_MODE, s->blocker_mode))
			return -EMSGSIZE;
		nla_nest_end(skb, step);
	}
	nla_nest_end(skb, cycle);
	return 0;
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

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return NULL;
	hdr = genlmsg_put(msg, portid, seq, &ordlock_genl_family, 0, cmd);
	if (!hdr)
		goto err;
	if (nla_put_u64_64bit(msg, ORDLOCK_A_COOKIE, nlo->cookie, ORDLOCK_A_PAD) ||
	    nla_put_u32(msg, ORDLOCK_A_STATUS, status))
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
 * without waiting (always, after an upgrade).
 */
static void ordlock_nl_undo(struct ordlock_nl_owner *nlo)
{
	struct ordlock_rkey key;
	u64 token;

	lockdep_assert_held(&nlo->owner->lock);
	if (!nlo->req.convert) {
		ordlock_req_release_token(nlo->owner, nlo->req.token);
		return;
	}
	key = nlo->req.keys[0];
	key.mode = nlo->req.old_mode;
	ordlock_req_convert(nlo->owner, &key, 0, true, &token);
}

/* The request of @nlo ended with @ret: tell its port, once */
static void ordlock_nl_finish(struct ordlock_nl_owner *nlo, int ret)
{
	struct ordlock_owner *owner = nlo->owner;
	struct sk_buff *msg;
	u32 status;

	lockdep_assert_held(&owner->lock);
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

	ret = ordlock_nl_only(info, BIT(ORDLOCK_A_DOMAIN) | BIT(ORDLOCK_A_KEYS) |
			      BIT(ORDLOCK_A_TIMEOUT_NS) | BIT(ORDLOCK_A_FLAGS) |
			      BIT(ORDLOCK_A_COOKIE));
	if (ret)
		return ret;
	if (info->attrs[ORDLOCK_A_FLAGS])
		flags = nla_get_u32(info->attrs[ORDLOCK_A_FLAGS]);
	if (flags & ~ORDLOCK_ACQUIRE_FLAGS) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_FLAGS],
				    "unknown flags");
		return -EINVAL;
	}
	if (info->attrs[ORDLOCK_A_TIMEOUT_NS])
		timeout = nla_get_u64(info->attrs[ORDLOCK_A_TIMEOUT_NS]);
	if (info->attrs[ORDLOCK_A_DOMAIN] &&
	    ordlock_domain_name_check(nla_data(info->attrs[ORDLOCK_A_DOMAIN]))) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
				    "bad domain name: 1 to 31 of [A-Za-z0-9._-]");
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
	nlo->req.notify = ordlock_nl_notify;
	nlo->cookie = info->attrs[ORDLOCK_A_COOKIE] ?
		      nla_get_u64(info->attrs[ORDLOCK_A_COOKIE]) : 0;
	timeout = ordlock_timeout_ns(timeout);
	if (convert)
		ret = ordlock_request_convert(&nlo->req, timeout);
	else
		ret = ordlock_request_start(&nlo->req, timeout);
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

static int ordlock_nl_acquire_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ordlock_nl_lock_request(skb, info, false);
}

static int ordlock_nl_convert_doit(struct sk_buff *skb, struct genl_info *info)
{
	return ordlock_nl_lock_request(skb, info, true);
}

static int ordlock_nl_release_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ordlock_rkey *keys = NULL;
	struct ordlock_nl_owner *nlo;
	unsigned int n = 0;
	u32 flags = 0;
	int ret;

	ret = ordlock_nl_only(info, BIT(ORDLOCK_A_KEYS) | BIT(ORDLOCK_A_FLAGS));
	if (ret)
		return ret;
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
	if (flags & ORDLOCK_RELEASE_ALL)
		ordlock_req_release_all(nlo->owner);
	else
		ret = ordlock_req_release_keys(nlo->owner, keys, n);
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

static int ordlock_nl_cancel_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ordlock_nl_owner *nlo;
	int ret;

	ret = ordlock_nl_only(info, BIT(ORDLOCK_A_COOKIE));
	if (ret)
		return ret;
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

/* Dumps of the lock table and graph: cb->args[0] bucket, args[1] entry */
struct ordlock_nl_dump {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	unsigned long skip;
	unsigned long done;
	struct ordlock_resource *res;
	struct ordlock_waiter *w;
	bool own_only;
	kuid_t uid;
};

static void ordlock_nl_dump_init(struct ordlock_nl_dump *d, struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	d->skb = skb;
	d->cb = cb;
	d->own_only = cb->args[ORDLOCK_NL_DUMP_OWN_ONLY];
	d->uid = KUIDT_INIT((uid_t)cb->args[ORDLOCK_NL_DUMP_UID]);
}

/* Whether the dump leaves out the entries of @owner: not the sender's user */
static bool ordlock_nl_dump_hides(const struct ordlock_nl_dump *d,
				  const struct ordlock_owner *owner)
{
	return d->own_only && !uid_eq(owner->user->uid, d->uid);
}

static void *ordlock_nl_dump_start(struct ordlock_nl_dump *d, u8 cmd,
				   struct nlattr **entry)
{
	void *hdr;

	if (d->done++ < d->skip)
		return NULL;
	hdr = genlmsg_put(d->skb, NETLINK_CB(d->cb->skb).portid, d->cb->nlh->nlmsg_seq,
			  &ordlock_genl_family, NLM_F_MULTI, cmd);
	if (!hdr)
		return ERR_PTR(-EMSGSIZE);
	*entry = nla_nest_start(d->skb, ORDLOCK_A_ENTRY);
	if (!*entry) {
		genlmsg_cancel(d->skb, hdr);
		return ERR_PTR(-EMSGSIZE);
	}
	return hdr;
}

static int ordlock_nl_dump_end(struct ordlock_nl_dump *d, void *hdr,
			       struct nlattr *entry, int err)
{
	if (err) {
		genlmsg_cancel(d->skb, hdr);
		d->done--;
		return -EMSGSIZE;
	}
	nla_nest_end(d->skb, entry);
	genlmsg_end(d->skb, hdr);
	return 0;
}

static int ordlock_nl_lock_entry(struct ordlock_nl_dump *d, u32 role, u32 pos,
				 struct ordlock_owner *owner, u32 mode, u64 value)
{
	struct ordlock_resource *res = d->res;
	struct nlattr *entry;
	void *hdr;

	hdr = ordlock_nl_dump_start(d, ORDLOCK_CMD_GET_LOCKS, &entry);
	if (IS_ERR_OR_NULL(hdr))
		return PTR_ERR_OR_ZERO(hdr);
	return ordlock_nl_dump_end(d, hdr, entry,
		nla_put_string(d->skb, ORDLOCK_E_DOMAIN, owner->domain->name) ||
		ordlock_nl_put_key(d->skb, ORDLOCK_E_KEY, res->rank, res->id, 0) ||
		nla_put_u32(d->skb, ORDLOCK_E_ROLE, role) ||
		nla_put_u32(d->skb, ORDLOCK_E_POSITION, pos) ||
		ordlock_nl_put_owner(d->skb, owner->id, READ_ONCE(owner->pid), owner->comm) ||
		nla_put_u32(d->skb, ORDLOCK_E_MODE, mode) ||
		nla_put_u64_64bit(d->skb, role == ORDLOCK_ROLE_HOLDER ?
				  ORDLOCK_E_TOKEN : ORDLOCK_E_WAITED_US, value,
				  ORDLOCK_E_PAD));
}

static u64 ordlock_nl_us_since(ktime_t since)
{
	return div_u64(ktime_to_ns(ktime_sub(ktime_get(), since)), NSEC_PER_USEC);
}

static int ordlock_nl_locks_bucket(struct ordlock_nl_dump *d,
				   struct ordlock_bucket *bucket)
{
	struct ordlock_resource *res;
	struct ordlock_waiter *w;
	struct ordlock_hold *hold;
	u32 pos;
	int ret = 0;

	spin_lock(&bucket->lock);
	for (res = bucket->chain; res; res = res->next) {
		d->res = res;
		pos = 0;
		list_for_each_entry(hold, &res->holders, res_node) {
			if (ordlock_nl_dump_hides(d, hold->owner)) {
				pos++;
				continue;
			}
			ret = ordlock_nl_lock_entry(d, ORDLOCK_ROLE_HOLDER, pos++,
						    hold->owner, hold->mode, hold->token);
			if (ret)
				goto out;
		}
		pos = 0;
		list_for_each_entry(w, &res->waiters, node) {
			if (ordlock_nl_dump_hides(d, w->hold->owner)) {
				pos++;
				continue;
			}
			ret = ordlock_nl_lock_entry(d, w->convert ? ORDLOCK_ROLE_CONVERTER :
						    ORDLOCK_ROLE_WAITER, pos++,
						    w->hold->owner, w->mode,
						    ordlock_nl_us_since(w->since));
			if (ret)
				goto out;
		}
	}
out:
	spin_unlock(&bucket->lock);
	return ret;
}

static bool ordlock_nl_graph_edge(void *arg, struct ordlock_owner *to, u32 edge,
				  u32 mode)
{
	struct ordlock_nl_dump *d = arg;
	struct ordlock_owner *from = d->w->hold->owner;
	struct nlattr *entry, *blocker;
	void *hdr;
	int err;

	hdr = ordlock_nl_dump_start(d, ORDLOCK_CMD_GET_GRAPH, &entry);
	if (!hdr)
		return false;
	if (IS_ERR(hdr))
		return true;
	err = ordlock_nl_put_owner(d->skb, from->id, READ_ONCE(from->pid), from->comm) ||
	      nla_put_string(d->skb, ORDLOCK_E_DOMAIN, from->domain->name) ||
	      ordlock_nl_put_key(d->skb, ORDLOCK_E_KEY, d->res->rank, d->res->id,
				 d->w->mode) ||
	      nla_put_u32(d->skb, ORDLOCK_E_EDGE, edge) ||
	      nla_put_u64_64bit(d->skb, ORDLOCK_E_WAITED_US,
				ordlock_nl_us_since(d->w->since), ORDLOCK_E_PAD);
	blocker = err ? NULL : nla_nest_start(d->skb, ORDLOCK_E_BLOCKER);
	if (!blocker ||
	    ordlock_nl_put_owner(d->skb, to->id, READ_ONCE(to->pid), to->comm) ||
	    nla_put_u32(d->skb, ORDLOCK_E_MODE, mode))
		err = -EMSGSIZE;
	else
		nla_nest_end(d->skb, blocker);
	return ordlock_nl_dump_end(d, hdr, entry, err) != 0;
}

static int ordlock_nl_graph_bucket(struct ordlock_nl_dump *d,
				   struct ordlock_bucket *bucket)
{
	struct ordlock_resource *res;
	struct ordlock_waiter *w;
	int ret = 0;

	spin_lock(&bucket->lock);
	for (res = bucket->chain; res; res = res->next) {
		d->res = res;
		list_for_each_entry(w, &res->waiters, node) {
			if (ordlock_nl_dump_hides(d, w->hold->owner))
				continue;
			d->w = w;
			if (ordlock_graph_edges(res, w, ordlock_nl_graph_edge, d)) {
				ret = -EMSGSIZE;
				goto out;
			}
		}
	}
out:
	spin_unlock(&bucket->lock);
	return ret;
}

static int ordlock_nl_dump_table(struct sk_buff *skb, struct netlink_callback *cb,
				 int (*fn)(struct ordlock_nl_dump *d,
					   struct ordlock_bucket *bucket))
{
	struct ordlock_nl_dump d = {};
	unsigned long i;

	ordlock_nl_dump_init(&d, skb, cb);
	/* the bucket to resume in first, even if it is empty by now */
	for (i = cb->args[0]; i < ordlock_table_size();
	     i = ordlock_table_next_used(i + 1)) {
		d.skip = cb->args[1];
		d.done = 0;
		if (fn(&d, ordlock_table_bucket_at(i))) {
			/* Full: resume inside this bucket */
			cb->args[0] = i;
			cb->args[1] = d.done;
			return skb->len;
		}
		cb->args[1] = 0;
	}
	cb->args[0] = i;
	return skb->len;
}

static int ordlock_nl_locks_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return ordlock_nl_dump_table(skb, cb, ordlock_nl_locks_bucket);
}

static int ordlock_nl_graph_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return ordlock_nl_dump_table(skb, cb, ordlock_nl_graph_bucket);
}

static int ordlock_nl_owners_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct ordlock_nl_dump d = { .skip = cb->args[0] };
	struct list_head *owners;
	struct ordlock_owner *owner;
	char dname[ORDLOCK_DOMAIN_NAME_MAX];
	struct nlattr *entry;
	void *hdr;
	ktime_t since;
	u32 mode;
	int err;

	ordlock_nl_dump_init(&d, skb, cb);
	owners = ordlock_owner_lock_list();
	list_for_each_entry(owner, owners, node) {
		if (ordlock_nl_dump_hides(&d, owner))
			continue;
		hdr = ordlock_nl_dump_start(&d, ORDLOCK_CMD_GET_OWNERS, &entry);
		if (!hdr)
			continue;
		if (IS_ERR(hdr))
			break;
		mode = READ_ONCE(owner->pending.mode);
		since = ns_to_ktime(READ_ONCE(owner->pending_since));
		ordlock_owner_domain_name(owner, dname);
		err = ordlock_nl_put_owner(skb, owner->id, READ_ONCE(owner->pid),
					   owner->comm) ||
		      nla_put_string(skb, ORDLOCK_E_DOMAIN, dname) ||
		      nla_put_u32(skb, ORDLOCK_E_KIND, owner->kind) ||
		      nla_put_u32(skb, ORDLOCK_E_HELD, READ_ONCE(owner->nheld)) ||
		      nla_put_u32(skb, ORDLOCK_E_UID, ordlock_user_uid(owner->user)) ||
		      (mode &&
		       (ordlock_nl_put_key(skb, ORDLOCK_E_KEY, READ_ONCE(owner->pending.rank),
					   READ_ONCE(owner->pending.id), mode) ||
			nla_put_u64_64bit(skb, ORDLOCK_E_WAITED_US,
					  ordlock_nl_us_since(since), ORDLOCK_E_PAD)));
		if (ordlock_nl_dump_end(&d, hdr, entry, err))
			break;
	}
	ordlock_owner_unlock_list();
	cb->args[0] = d.done;
	return skb->len;
}

static int ordlock_nl_put_rank_names(struct sk_buff *skb,
				     struct ordlock_domain *domain)
{
	struct ordlock_rank_name *names;
	struct nlattr *nest, *entry;
	unsigned int i, n;
	int ret = -EMSGSIZE;

	names = kcalloc(ORDLOCK_RANK_NAMES_MAX, sizeof(*names), GFP_KERNEL);
	if (!names)
		return -ENOMEM;
	n = ordlock_domain_rank_names(domain, names, ORDLOCK_RANK_NAMES_MAX);
	nest = nla_nest_start(skb, ORDLOCK_A_RANK_NAMES);
	if (!nest)
		goto out;
	for (i = 0; i < n; i++) {
		entry = nla_nest_start(skb, ORDLOCK_A_ENTRY);
		if (!entry ||
		    nla_put_u32(skb, ORDLOCK_E_RANK, names[i].rank) ||
		    nla_put_string(skb, ORDLOCK_E_NAME, names[i].name))
			goto out;
		nla_nest_end(skb, entry);
	}
	nla_nest_end(skb, nest);
	ret = 0;
out:
	kfree(names);
	return ret;
}

/* A gauge as two counters: @type now, and the peak in the next attribute */
static int ordlock_nl_put_gauge(struct sk_buff *skb, int type,
				struct ordlock_gauge *g)
{
	if (nla_put_u64_64bit(skb, type, atomic_read(&g->cur), ORDLOCK_S_PAD) ||
	    nla_put_u64_64bit(skb, type + 1, atomic_read(&g->peak), ORDLOCK_S_PAD))
		return -EMSGSIZE;
	return 0;
}

static int ordlock_nl_domain_reply(struct genl_info *info,
				   struct ordlock_domain *domain, bool stats)
{
	struct ordlock_stats sum;
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;
	int ret = -EMSGSIZE;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ordlock_genl_family, 0,
				info->genlhdr->cmd);
	if (!hdr ||
	    nla_put_string(msg, ORDLOCK_A_DOMAIN, domain->name) ||
	    nla_put_u32(msg, ORDLOCK_A_POLICY, READ_ONCE(domain->policy)) ||
	    nla_put_u32(msg, ORDLOCK_A_DETECT_DELAY_MS, READ_ONCE(domain->detect_delay_ms)))
		goto err;
	if (stats) {
		static const u8 map[ORDLOCK_STAT_NR] = {
			[ORDLOCK_STAT_ACQUIRES] = ORDLOCK_S_ACQUIRES,
			[ORDLOCK_STAT_CONTENDED] = ORDLOCK_S_CONTENDED,
			[ORDLOCK_STAT_TIMEOUTS] = ORDLOCK_S_TIMEOUTS,
			[ORDLOCK_STAT_TRY_FAILURES] = ORDLOCK_S_TRY_FAILURES,
			[ORDLOCK_STAT_ORDER_VIOLATIONS] = ORDLOCK_S_ORDER_VIOLATIONS,
			[ORDLOCK_STAT_DEADLOCKS] = ORDLOCK_S_DEADLOCKS,
			[ORDLOCK_STAT_UPGRADE_DEADLOCKS] = ORDLOCK_S_UPGRADE_DEADLOCKS,
			[ORDLOCK_STAT_CONVERSIONS] = ORDLOCK_S_CONVERSIONS,
			[ORDLOCK_STAT_SIGNALS] = ORDLOCK_S_SIGNALS,
			[ORDLOCK_STAT_LIMITS] = ORDLOCK_S_LIMITS,
			[ORDLOCK_STAT_RELEASES] = ORDLOCK_S_RELEASES,
		};
		unsigned int i;

		ordlock_domain_stats(domain, &sum);
		nest = nla_nest_start(msg, ORDLOCK_A_STATS);
		if (!nest)
			goto err;
		for (i = 0; i < ORDLOCK_STAT_NR; i++)
			if (nla_put_u64_64bit(msg, map[i], sum.count[i], ORDLOCK_S_PAD))
				goto err;
		if (ordlock_nl_put_gauge(msg, ORDLOCK_S_OWNERS, &domain->owners) ||
		    ordlock_nl_put_gauge(msg, ORDLOCK_S_RESOURCES, &domain->resources) ||
		    ordlock_nl_put_gauge(msg, ORDLOCK_S_WAITERS, &domain->waiters))
			goto err;
		nla_nest_end(msg, nest);
	} else {
		/* -ENOMEM if its buffer cannot be allocated, not -EMSGSIZE */
		ret = ordlock_nl_put_rank_names(msg, domain);
		if (ret)
			goto err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
err:
	nlmsg_free(msg);
	return ret;
}

static int ordlock_nl_domain_name(struct genl_info *info, const char **name)
{
	if (GENL_REQ_ATTR_CHECK(info, ORDLOCK_A_DOMAIN)) {
		NL_SET_ERR_MSG(info->extack, "missing the domain name");
		return -EINVAL;
	}
	*name = nla_data(info->attrs[ORDLOCK_A_DOMAIN]);
	if (ordlock_domain_name_check(*name)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
				    "bad domain name: 1 to 31 of [A-Za-z0-9._-]");
		return -EINVAL;
	}
	return 0;
}

static int ordlock_nl_domain_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	bool stats = info->genlhdr->cmd == ORDLOCK_CMD_GET_STATS;
	struct ordlock_domain *domain;
	const char *name;
	int ret;

	ret = ordlock_nl_only(info, BIT(ORDLOCK_A_DOMAIN));
	if (!ret)
		ret = ordlock_nl_domain_name(info, &name);
	if (ret)
		return ret;
	domain = ordlock_domain_find_get(name);
	if (!domain) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
				    "no such domain");
		return -ENOENT;
	}
	ret = ordlock_nl_domain_reply(info, domain, stats);
	ordlock_domain_put(domain);
	return ret;
}

static int ordlock_nl_domain_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ordlock_rank_name *names = NULL;
	struct nlattr *tb[ORDLOCK_E_MAX + 1];
	struct ordlock_domain *domain;
	struct ordlock_user *user;
	unsigned int n = 0, flags = 0;
	struct nlattr *entry;
	const char *name;
	u32 policy = 0, delay = 0;
	int rem, ret;

	ret = ordlock_nl_only(info, BIT(ORDLOCK_A_DOMAIN) | BIT(ORDLOCK_A_POLICY) |
			      BIT(ORDLOCK_A_DETECT_DELAY_MS) | BIT(ORDLOCK_A_RANK_NAMES));
	if (!ret)
		ret = ordlock_nl_domain_name(info, &name);
	if (ret)
		return ret;
	if (info->attrs[ORDLOCK_A_POLICY]) {
		flags |= ORDLOCK_DOMAIN_SET_POLICY;
		policy = nla_get_u32(info->attrs[ORDLOCK_A_POLICY]);
	}
	if (info->attrs[ORDLOCK_A_DETECT_DELAY_MS]) {
		flags |= ORDLOCK_DOMAIN_SET_DETECT_DELAY;
		delay = nla_get_u32(info->attrs[ORDLOCK_A_DETECT_DELAY_MS]);
	}
	if (info->attrs[ORDLOCK_A_RANK_NAMES]) {
		names = kcalloc(ORDLOCK_RANK_NAMES_MAX, sizeof(*names), GFP_KERNEL);
		if (!names)
			return -ENOMEM;
		nla_for_each_nested(entry, info->attrs[ORDLOCK_A_RANK_NAMES], rem) {
			ret = -EINVAL;
			if (nla_type(entry) != ORDLOCK_A_ENTRY) {
				NL_SET_ERR_MSG_ATTR(info->extack, entry,
						    "rank names holds ORDLOCK_A_ENTRY entries only");
				goto out;
			}
			if (n == ORDLOCK_RANK_NAMES_MAX) {
				NL_SET_ERR_MSG_ATTR(info->extack, entry, "too many rank names");
				goto out;
			}
			ret = nla_parse_nested(tb, ORDLOCK_E_MAX, entry,
					       ordlock_nl_entry_policy, info->extack);
			if (ret)
				goto out;
			if (!tb[ORDLOCK_E_RANK] || !tb[ORDLOCK_E_NAME] ||
			    ordlock_rank_name_check(nla_data(tb[ORDLOCK_E_NAME]))) {
				NL_SET_ERR_MSG_ATTR(info->extack, entry,
						    "a rank name needs a rank and a name of [A-Za-z0-9._-] starting with a letter");
				ret = -EINVAL;
				goto out;
			}
			names[n].rank = nla_get_u32(tb[ORDLOCK_E_RANK]);
			nla_strscpy(names[n].name, tb[ORDLOCK_E_NAME], sizeof(names[n].name));
			n++;
		}
		flags |= ORDLOCK_DOMAIN_SET_RANK_NAMES;
	}
	if (!flags) {
		NL_SET_ERR_MSG(info->extack, "nothing to set");
		ret = -EINVAL;
		goto out;
	}
	/* A domain created here is charged to the sender's user */
	user = ordlock_user_get(current_euid());
	if (IS_ERR(user)) {
		ret = PTR_ERR(user);
		goto out;
	}
	ret = ordlock_domain_configure(name, flags, policy, delay, names, n,
				       user, ordlock_user_exempt(), &domain);
	ordlock_user_put(user);
	if (ret) {
		if (ret == -EEXIST)
			NL_SET_ERR_MSG(info->extack, "a rank or a name appears twice");
		else if (ret == -EDQUOT)
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
					    ORDLOCK_NL_DOMAIN_LIMIT_MSG);
		else
			NL_SET_ERR_MSG(info->extack, "cannot configure the domain");
		goto out;
	}
	ret = ordlock_nl_domain_reply(info, domain, false);
	ordlock_domain_put(domain);
out:
	kfree(names);
	return ret;
}

static const struct genl_ops ordlock_nl_ops[] = {
	{
		.cmd = ORDLOCK_CMD_ACQUIRE,
		.doit = ordlock_nl_acquire_doit,
	},
	{
		.cmd = ORDLOCK_CMD_RELEASE,
		.doit = ordlock_nl_release_doit,
	},
	{
		.cmd = ORDLOCK_CMD_CONVERT,
		.doit = ordlock_nl_convert_doit,
	},
	{
		.cmd = ORDLOCK_CMD_CANCEL,
		.doit = ordlock_nl_cancel_doit,
	},
	{
		.cmd = ORDLOCK_CMD_GET_LOCKS,
		.start = ordlock_nl_dump_check,
		.dumpit = ordlock_nl_locks_dumpit,
	},
	{
		.cmd = ORDLOCK_CMD_GET_OWNERS,
		.start = ordlock_nl_dump_check,
		.dumpit = ordlock_nl_owners_dumpit,
	},
	{
		.cmd = ORDLOCK_CMD_GET_GRAPH,
		.start = ordlock_nl_dump_check,
		.dumpit = ordlock_nl_graph_dumpit,
	},
	{
		.cmd = ORDLOCK_CMD_GET_STATS,
		.doit = ordlock_nl_domain_get_doit,
	},
	{
		.cmd = ORDLOCK_CMD_DOMAIN_GET,
		.doit = ordlock_nl_domain_get_doit,
	},
	{
		.cmd = ORDLOCK_CMD_DOMAIN_SET,
		.doit = ordlock_nl_domain_set_doit,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family ordlock_genl_family __ro_after_init = {
	.name = ORDLOCK_GENL_NAME,
	.version = ORDLOCK_GENL_VERSION,
	.maxattr = ORDLOCK_A_MAX,
	.policy = ordlock_nl_policy,
	.netnsok = true,
	.parallel_ops = true,
	.pre_doit = ordlock_nl_pre_doit,
	.module = THIS_MODULE,
	.ops = ordlock_nl_ops,
	.n_ops = ARRAY_SIZE(ordlock_nl_ops),
	.resv_start_op = ORDLOCK_CMD_ACQUIRE,
	.mcgrps = ordlock_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ordlock_nl_mcgrps),
};

/*
 * A new event message with ORDLOCK_A_EVENT and ORDLOCK_A_DOMAIN, in *@hdr;
 * NULL when nobody listens, the rate limit was reached or memory is short.
 */
static struct sk_buff *ordlock_nl_event_new(u32 event, const char *domain,
					    void **hdr)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&ordlock_genl_family, &init_net,
				ORDLOCK_NL_MCGRP_EVENTS))
		return NULL;
	if (!__ratelimit(&ordlock_nl_event_ratelimit))
		return NULL;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put(msg, 0, 0, &ordlock_genl_family, 0, ORDLOCK_CMD_EVENT);
	if (!*hdr ||
	    nla_put_u32(msg, ORDLOCK_A_EVENT, event) ||
	    nla_put_string(msg, ORDLOCK_A_DOMAIN, domain)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void ordlock_nl_event_send(struct sk_buff *msg, void *hdr)
{
	genlmsg_end(msg, hdr);
	genlmsg_multicast_netns(&ordlock_genl_family, &init_net, msg, 0,
				ORDLOCK_NL_MCGRP_EVENTS, GFP_KERNEL);
}

/* The owner fields of an event's ORDLOCK_A_ENTRY */
static int ordlock_nl_event_entry(struct sk_buff *msg, u64 id, pid_t pid,
				  const char *comm, u32 kind, u32 held,
				  const struct ordlock_user *user)
{
	struct nlattr *entry = nla_nest_start(msg, ORDLOCK_A_ENTRY);

	if (!entry ||
	    ordlock_nl_put_owner(msg, id, pid, comm) ||
	    nla_put_u32(msg, ORDLOCK_E_KIND, kind) ||
	    nla_put_u32(msg, ORDLOCK_E_HELD, held) ||
	    nla_put_u32(msg, ORDLOCK_E_UID, ordlock_user_uid(user)))
		return -EMSGSIZE;
	nla_nest_end(msg, entry);
	return 0;
}

/* An event about @owner in @domain */
static void ordlock_nl_event_owner(struct ordlock_owner *owner, u32 event,
				   const char *domain)
{
	struct sk_buff *msg;
	void *hdr;

	msg = ordlock_nl_event_new(event, domain, &hdr);
	if (!msg)
		return;
	if (ordlock_nl_event_entry(msg, owner->id, READ_ONCE(owner->pid),
				   owner->comm, owner->kind, owner->nheld,
				   owner->user))
		goto err;
	if (event != ORDLOCK_EVENT_OWNER_DIED &&
	    (ordlock_nl_put_failure(msg, &owner->failure) ||
	     ordlock_nl_put_cycle(msg, owner)))
		goto err;
	ordlock_nl_event_send(msg, hdr);
	return;
err:
	nlmsg_free(msg);
}

/*
 * The calling task was refused an owner of @kind for @user: there is no
 * owner, the entry has owner id 0 and the calling task
 */
static void ordlock_nl_event_refused(u32 event, const char *domain, u32 kind,
				     const struct ordlock_user *user)
{
	struct ordlock_failure f = {
		.reason = ORDLOCK_REASON_USER_LIMIT,
		.error = EDQUOT,
		.index = ~0U,
	};
	char comm[TASK_COMM_LEN];
	struct sk_buff *msg;
	void *hdr;

	msg = ordlock_nl_event_new(event, domain, &hdr);
	if (!msg)
		return;
	get_task_comm(comm, current);
	if (ordlock_nl_event_entry(msg, 0, task_tgid_nr(current), comm, kind, 0,
				   user) ||
	    ordlock_nl_put_failure(msg, &f)) {
		nlmsg_free(msg);
		return;
	}
	ordlock_nl_event_send(msg, hdr);
}

/* The events.c subscriber: multicast each event, rate-limited */
static int ordlock_nl_event(struct notifier_block *nb, unsigned long event,
			    void *data)
{
	const struct ordlock_event_info *info = data;

	if (info->owner)
		ordlock_nl_event_owner(info->owner, info->event, info->domain);
	else
		ordlock_nl_event_refused(info->event, info->domain, info->kind,
					 info->user);
	return NOTIFY_DONE;
}

static struct notifier_block ordlock_nl_event_nb = {
	.notifier_call = ordlock_nl_event,
};

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

int ordlock_nl_init(void)
{
	int ret;

	ordlock_nl_wq = alloc_workqueue("ordlock", 0, 0);
	if (!ordlock_nl_wq)
		return -ENOMEM;
	ret = netlink_register_notifier(&ordlock_nl_nb);
	if (ret)
		goto err_wq;
	ret = genl_register_family(&ordlock_genl_family);
	if (ret)
		goto err_notifier;
	ret = ordlock_events_subscribe(&ordlock_nl_event_nb);
	if (ret)
		goto err_family;
	return 0;

err_family:
	genl_unregister_family(&ordlock_genl_family);
err_notifier:
	netlink_unregister_notifier(&ordlock_nl_nb);
err_wq:
	destroy_workqueue(ordlock_nl_wq);
	return ret;
}

void ordlock_nl_exit(void)
{
	struct ordlock_nl_owner *nlo;
	struct hlist_node *tmp;
	unsigned int i;

	ordlock_events_unsubscribe(&ordlock_nl_event_nb);
	genl_unregister_family(&ordlock_genl_family);
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
