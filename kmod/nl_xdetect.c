// SPDX-License-Identifier: GPL-2.0
/*
 * Detection across nodes, the daemon's interface (docs/cluster.md,
 * "Deadlocks across nodes"; include/uapi/linux/ordlock.h, DOC: Detection
 * across nodes): XD_HELLO registers ordlock-xdetectd's socket, the wait
 * events go to the "xdetect" group while it is registered, XD_CHECK says
 * whether this node's vertices of a cycle still stand, XD_FAIL fails the
 * victim's wait. xdetect.c keeps the generations.
 *
 * The registered daemon is one socket (a reference held, so that its
 * pointer names it until it is dropped): its close (NETLINK_URELEASE, on
 * every kernel the module supports) unregisters it.
 *
 * XD_CHECK and XD_FAIL find owners by id in the list of all owners
 * (ordlock_owners_lock: an owner in it is not freed meanwhile) and read
 * their waits under ordlock_graph_lock, as the views do; neither takes an
 * owner's lock (a waiting owner's task may hold it only between its
 * sleeps). XD_FAIL sets the victim mark with the wait still in place
 * (in the graph: under the bucket lock of its key, not granted; in the
 * DLM: its request armed, cluster.c) and wakes it; the wait ends itself,
 * as a revoked one does. A grant that came first wins, as it does over a
 * timeout: the cycle is gone then anyway.
 */
#include <linux/mm.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "cluster.h"
#include "domain.h"
#include "graph.h"
#include "keys.h"
#include "netlink.h"
#include "owner.h"
#include "request.h"
#include "resource.h"
#include "table.h"
#include "xdetect.h"

/**
 * struct ordlock_nl_xd_daemon - the registered ordlock-xdetectd
 * @sk: its socket (a reference), NULL when none is registered
 * @portid: the socket's port id
 * @pid: the registering process (its thread group id)
 * @node: this node's corosync node id, as the daemon says
 * @state: an enum ordlock_xd_state, as the daemon says
 * @members: members of its CPG group, as it says
 */
struct ordlock_nl_xd_daemon {
	struct sock *sk;
	u32 portid;
	pid_t pid;
	u32 node;
	u32 state;
	u32 members;
};

/*
 * ordlock_nl_xd_lock protects ordlock_nl_xd: taken alone (see the lock
 * order in main.c)
 */
static DEFINE_MUTEX(ordlock_nl_xd_lock);
static struct ordlock_nl_xd_daemon ordlock_nl_xd;

/* The fields of a vertex (XD_PATH) or of a cycle's step (XD_FAIL) */
static const struct nla_policy ordlock_nl_xd_vertex_policy[ORDLOCK_E_MAX + 1] = {
	[ORDLOCK_E_OWNER_ID] = { .type = NLA_U64 },
	[ORDLOCK_E_PID] = { .type = NLA_U32 },
	[ORDLOCK_E_COMM] = { .type = NLA_NUL_STRING, .len = ORDLOCK_COMM_LEN - 1 },
	[ORDLOCK_E_DOMAIN] = { .type = NLA_NUL_STRING,
			       .len = ORDLOCK_DOMAIN_NAME_MAX - 1 },
	[ORDLOCK_E_KEY] = NLA_POLICY_NESTED(ordlock_nl_key_policy),
	[ORDLOCK_E_EDGE] = NLA_POLICY_RANGE(NLA_U32, ORDLOCK_EDGE_HARD,
					    ORDLOCK_EDGE_SOFT),
	[ORDLOCK_E_MODE] = NLA_POLICY_RANGE(NLA_U32, ORDLOCK_MODE_SHARED,
					    ORDLOCK_MODE_EXCLUSIVE),
	[ORDLOCK_E_TIME_NS] = { .type = NLA_U64 },
	[ORDLOCK_E_CLUSTER_WAIT] = { .type = NLA_FLAG },
	[ORDLOCK_E_XD_GEN] = { .type = NLA_U64 },
	[ORDLOCK_E_XD_HOLD_GEN] = { .type = NLA_U64 },
	[ORDLOCK_E_XD_NODE] = { .type = NLA_U32 },
	[ORDLOCK_E_XD_BOOT] = { .type = NLA_U64 },
	[ORDLOCK_E_XD_LKID] = { .type = NLA_U32 },
};

const struct ordlock_nl_take ordlock_nl_xd_hello_takes[] = {
	{ ORDLOCK_A_XD_NODE, NLA_POLICY_MIN(NLA_U32, 1) },
	{ ORDLOCK_A_XD_STATE, NLA_POLICY_MAX(NLA_U32, ORDLOCK_XD_ON) },
	{ ORDLOCK_A_XD_MEMBERS, { .type = NLA_U32 } },
	{ }
};

const struct ordlock_nl_take ordlock_nl_xd_check_takes[] = {
	{ ORDLOCK_A_DOMAIN, ORDLOCK_NL_TAKES_DOMAIN },
	{ ORDLOCK_A_XD_PATH, NLA_POLICY_NESTED_ARRAY(ordlock_nl_xd_vertex_policy) },
	{ }
};

const struct ordlock_nl_take ordlock_nl_xd_fail_takes[] = {
	{ ORDLOCK_A_DOMAIN, ORDLOCK_NL_TAKES_DOMAIN },
	{ ORDLOCK_A_XD_OWNER, { .type = NLA_U64 } },
	{ ORDLOCK_A_XD_GEN, NLA_POLICY_MIN(NLA_U64, 1) },
	{ ORDLOCK_A_CYCLE, NLA_POLICY_NESTED_ARRAY(ordlock_nl_xd_vertex_policy) },
	{ }
};

/* The attributes a command must have: the extack names the first missing */
static int ordlock_nl_xd_need(struct genl_info *info, const u16 *attrs,
			      unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (GENL_REQ_ATTR_CHECK(info, attrs[i])) {
			NL_SET_ERR_MSG(info->extack, "missing attribute");
			return -EINVAL;
		}
	}
	return 0;
}

/* Drop the registration; ordlock_nl_xd_lock held */
static void ordlock_nl_xd_drop(void)
{
	lockdep_assert_held(&ordlock_nl_xd_lock);
	if (!ordlock_nl_xd.sk)
		return;
	ordlock_xd_set_listening(false);
	sock_put(ordlock_nl_xd.sk);
	memset(&ordlock_nl_xd, 0, sizeof(ordlock_nl_xd));
}

/*
 * One XD_EVENT of @kind (@end: how a wait ended) for the wait @v of
 * @domain, to the "xdetect" group
 */
static void ordlock_nl_xd_send(u32 kind, u32 end, const char *domain,
			       const struct ordlock_nl_xd_vert *v)
{
	struct nlattr *entry;
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&ordlock_genl_family, &init_net,
				ORDLOCK_NL_MCGRP_XDETECT))
		return;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &ordlock_genl_family, 0, ORDLOCK_CMD_XD_EVENT);
	if (!hdr ||
	    nla_put_u32(msg, ORDLOCK_A_XD_KIND, kind) ||
	    nla_put_string(msg, ORDLOCK_A_DOMAIN, domain) ||
	    nla_put_u64_64bit(msg, ORDLOCK_A_XD_BOOT, ordlock_xd_boot, ORDLOCK_A_PAD) ||
	    (kind == ORDLOCK_XD_WAIT_END && nla_put_u32(msg, ORDLOCK_A_XD_END, end)))
		goto err;
	entry = nla_nest_start(msg, ORDLOCK_A_ENTRY);
	if (!entry ||
	    ordlock_nl_put_owner(msg, v->owner, v->pid, v->comm) ||
	    ordlock_nl_put_key(msg, ORDLOCK_E_KEY, v->rank, v->id, v->mode) ||
	    nla_put_u64_64bit(msg, ORDLOCK_E_XD_GEN, v->gen, ORDLOCK_E_PAD) ||
	    nla_put_u64_64bit(msg, ORDLOCK_E_TIME_NS, v->since, ORDLOCK_E_PAD) ||
	    (v->cluster_wait && nla_put_flag(msg, ORDLOCK_E_CLUSTER_WAIT)) ||
	    (v->lkid && nla_put_u32(msg, ORDLOCK_E_XD_LKID, v->lkid)))
		goto err;
	nla_nest_end(msg, entry);
	genlmsg_end(msg, hdr);
	genlmsg_multicast_netns(&ordlock_genl_family, &init_net, msg, 0,
				ORDLOCK_NL_MCGRP_XDETECT, GFP_KERNEL);
	return;
err:
	nlmsg_free(msg);
}

/* A wait event of xdetect.c as one XD_EVENT message to the "xdetect" group */
static int ordlock_nl_xd_event(struct notifier_block *nb, unsigned long kind,
			       void *data)
{
	const struct ordlock_xd_event *ev = data;
	struct ordlock_owner *owner = ev->owner;
	struct ordlock_nl_xd_vert v = {
		.owner = owner->id,
		.pid = READ_ONCE(owner->pid),
		.rank = ev->rank,
		.id = ev->id,
		.mode = ev->mode,
		.gen = ev->gen,
		.since = ev->since_ns,
		.cluster_wait = ev->cluster_wait,
	};

	/* known when the request is made in the DLM already */
	if (kind == ORDLOCK_XD_WAIT && ev->cluster_wait)
		v.lkid = ordlock_cluster_lkid(owner);

	strscpy(v.comm, owner->comm, sizeof(v.comm));
	ordlock_nl_xd_send(ev->kind, ev->end, owner->domain->name, &v);
	return NOTIFY_OK;
}

/*
 * ordlock_nl_xd_replay() - the current waits of the cluster domains with
 * policy detect, as XD_EVENT WAIT, for a daemon that just registered
 * (uapi: %ORDLOCK_CMD_XD_HELLO). A wait that ends after the snapshot is
 * replayed all the same: its WAIT_END may reach the daemon first, and its
 * generation, which XD_WALK and XD_CHECK compare, tells it stale.
 */
static void ordlock_nl_xd_replay(void)
{
	struct ordlock_nl_xd_wait *w;
	int i, n;

	n = ordlock_nl_xd_replay_snap(&w);
	for (i = 0; i < n; i++)
		ordlock_nl_xd_send(ORDLOCK_XD_WAIT, 0, w[i].domain, &w[i].v);
	kvfree(w);
}

int ordlock_nl_xd_hello_doit(struct sk_buff *skb, struct genl_info *info)
{
	static const u16 need[] = {
		ORDLOCK_A_XD_NODE, ORDLOCK_A_XD_STATE, ORDLOCK_A_XD_MEMBERS,
	};
	struct sock *sk = NETLINK_CB(skb).sk;
	struct sk_buff *msg;
	bool first;
	void *hdr;
	int ret;

	ret = ordlock_nl_xd_need(info, need, ARRAY_SIZE(need));
	if (ret)
		return ret;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ordlock_genl_family, 0,
				ORDLOCK_CMD_XD_HELLO);
	if (!hdr || nla_put_u64_64bit(msg, ORDLOCK_A_XD_BOOT, ordlock_xd_boot,
				      ORDLOCK_A_PAD)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);

	mutex_lock(&ordlock_nl_xd_lock);
	if (ordlock_nl_xd.sk && ordlock_nl_xd.sk != sk) {
		mutex_unlock(&ordlock_nl_xd_lock);
		nlmsg_free(msg);
		NL_SET_ERR_MSG(info->extack,
			       "another socket is registered as this node's ordlock-xdetectd");
		return -EBUSY;
	}
	first = !ordlock_nl_xd.sk;
	if (first) {
		sock_hold(sk);
		ordlock_nl_xd.sk = sk;
		ordlock_nl_xd.portid = info->snd_portid;
		ordlock_nl_xd.pid = task_tgid_nr(current);
	}
	ordlock_nl_xd.node = nla_get_u32(info->attrs[ORDLOCK_A_XD_NODE]);
	ordlock_nl_xd.state = nla_get_u32(info->attrs[ORDLOCK_A_XD_STATE]);
	ordlock_nl_xd.members = nla_get_u32(info->attrs[ORDLOCK_A_XD_MEMBERS]);
	ordlock_xd_set_listening(true);
	mutex_unlock(&ordlock_nl_xd_lock);
	ret = genlmsg_reply(msg, info);
	/*
	 * After the reply (the daemon knows the boot id), the waits that began
	 * before: a wait that starts from now on is announced (listening set,
	 * ordlock_xd_set_listening()'s barrier), one before is in the snapshot;
	 * one in both comes twice, with one generation.
	 */
	if (first && !ret)
		ordlock_nl_xd_replay();
	return ret;
}

/**
 * ordlock_nl_xd_put_state() - the detection across nodes of a cluster
 *	domain, for DOMAIN_GET: ORDLOCK_A_XD_STATE and ORDLOCK_A_XD_MEMBERS,
 *	and ORDLOCK_A_XD_PID and ORDLOCK_A_XD_NODE while a daemon is registered
 * @msg: the reply
 *
 * Return: 0 or -EMSGSIZE.
 */
int ordlock_nl_xd_put_state(struct sk_buff *msg)
{
	struct ordlock_nl_xd_daemon d;

	mutex_lock(&ordlock_nl_xd_lock);
	d = ordlock_nl_xd;
	mutex_unlock(&ordlock_nl_xd_lock);
	if (nla_put_u32(msg, ORDLOCK_A_XD_STATE, d.sk ? d.state : ORDLOCK_XD_OFF) ||
	    nla_put_u32(msg, ORDLOCK_A_XD_MEMBERS, d.sk ? d.members : 0))
		return -EMSGSIZE;
	if (d.sk && (nla_put_u32(msg, ORDLOCK_A_XD_PID, d.pid) ||
		     nla_put_u32(msg, ORDLOCK_A_XD_NODE, d.node)))
		return -EMSGSIZE;
	return 0;
}

/* This node's id as the registered daemon says, 0 when none is */
static u32 ordlock_nl_xd_node(void)
{
	u32 node;

	mutex_lock(&ordlock_nl_xd_lock);
	node = ordlock_nl_xd.node;
	mutex_unlock(&ordlock_nl_xd_lock);
	return node;
}

/* The domain of ORDLOCK_A_DOMAIN, a reference held; NULL: an extack said why */
static struct ordlock_domain *ordlock_nl_xd_domain(struct genl_info *info,
						   int *ret)
{
	struct nlattr *attr = info->attrs[ORDLOCK_A_DOMAIN];
	struct ordlock_domain *domain;

	*ret = -EINVAL;
	if (ordlock_domain_name_check(nla_data(attr))) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "bad domain name: 1 to 31 of [A-Za-z0-9._-]");
		return NULL;
	}
	domain = ordlock_domain_find_get(nla_data(attr));
	if (!domain) {
		*ret = -ENOENT;
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such domain");
		return NULL;
	}
	if (!READ_ONCE(domain->backend)) {
		ordlock_domain_put(domain);
		*ret = -EOPNOTSUPP;
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "not a cluster domain");
		return NULL;
	}
	return domain;
}

/* The owner @id of @domain; ordlock_owners_lock held (@owners) */
struct ordlock_owner *ordlock_nl_xd_owner(struct list_head *owners,
					  struct ordlock_domain *domain, u64 id)
{
	struct ordlock_owner *owner;

	list_for_each_entry(owner, owners, node)
		if (owner->id == id)
			return owner->domain == domain ? owner : NULL;
	return NULL;
}

/*
 * Whether @owner holds key (@rank, @id) of @domain with the cluster grant
 * of generation @gen; ordlock_graph_lock held
 */
static bool ordlock_nl_xd_holds(struct ordlock_owner *owner,
				struct ordlock_domain *domain, u32 rank, u64 id,
				u64 gen)
{
	struct ordlock_bucket *bucket = ordlock_table_bucket(domain, rank, id);
	struct ordlock_resource *res;
	struct ordlock_hold *hold;
	bool live = false;

	lockdep_assert_held(&ordlock_graph_lock);
	spin_lock(&bucket->lock);
	res = ordlock_table_find(bucket, domain, rank, id);
	if (res) {
		list_for_each_entry(hold, &res->holders, res_node) {
			if (hold->owner != owner)
				continue;
			live = READ_ONCE(*ordlock_hold_xd_gen(hold)) == gen;
			break;
		}
	}
	spin_unlock(&bucket->lock);
	return live;
}

/**
 * struct ordlock_nl_xd_vertex - a vertex of XD_CHECK
 * @owner: the owner id
 * @gen: its wait's generation
 * @hold_gen: the generation of the hold of the incoming hard edge, 0: none
 * @rank: that hold's key
 * @id: its id
 */
struct ordlock_nl_xd_vertex {
	u64 owner;
	u64 gen;
	u64 hold_gen;
	u32 rank;
	u64 id;
};

/**
 * ordlock_nl_xd_key() - parse the key nest @attr of an XD command
 * @attr: an ORDLOCK_A_KEY or ORDLOCK_E_KEY
 * @extack: where a refusal says why
 * @need_mode: the key needs its mode too
 * @key: receives it (mode 0 when absent)
 *
 * Return: 0, or -EINVAL with an extack.
 */
int ordlock_nl_xd_key(struct nlattr *attr, struct netlink_ext_ack *extack,
		      bool need_mode, struct ordlock_key *key)
{
	struct nlattr *kb[ORDLOCK_K_MAX + 1];
	int ret;

	ret = nla_parse_nested(kb, ORDLOCK_K_MAX, attr, ordlock_nl_key_policy, extack);
	if (ret)
		return ret;
	if (!kb[ORDLOCK_K_RANK] || !kb[ORDLOCK_K_ID]) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "the key needs its rank and id");
		return -EINVAL;
	}
	if (need_mode && (!kb[ORDLOCK_K_MODE] || !nla_get_u32(kb[ORDLOCK_K_MODE]))) {
		NL_SET_ERR_MSG_ATTR(extack, attr, "the key needs its mode");
		return -EINVAL;
	}
	key->rank = nla_get_u32(kb[ORDLOCK_K_RANK]);
	key->id = nla_get_u64(kb[ORDLOCK_K_ID]);
	key->mode = kb[ORDLOCK_K_MODE] ? nla_get_u32(kb[ORDLOCK_K_MODE]) : 0;
	return 0;
}

/* Parse a vertex of XD_PATH; -EINVAL with an extack for a bad one */
static int ordlock_nl_xd_parse_vertex(struct genl_info *info,
				      struct nlattr *attr, u32 node,
				      struct ordlock_nl_xd_vertex *v, bool *skip)
{
	struct nlattr *tb[ORDLOCK_E_MAX + 1];
	struct ordlock_key key;
	int ret;

	ret = nla_parse_nested(tb, ORDLOCK_E_MAX, attr,
			       ordlock_nl_xd_vertex_policy, info->extack);
	if (ret)
		return ret;
	*skip = tb[ORDLOCK_E_XD_NODE] && nla_get_u32(tb[ORDLOCK_E_XD_NODE]) &&
		nla_get_u32(tb[ORDLOCK_E_XD_NODE]) != node;
	if (*skip)
		return 0;
	if (!tb[ORDLOCK_E_OWNER_ID] || !tb[ORDLOCK_E_XD_GEN]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "a vertex needs its owner id and wait generation");
		return -EINVAL;
	}
	if (!tb[ORDLOCK_E_KEY] != !tb[ORDLOCK_E_XD_HOLD_GEN]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "a hard edge needs both its key and its hold generation");
		return -EINVAL;
	}
	v->owner = nla_get_u64(tb[ORDLOCK_E_OWNER_ID]);
	v->gen = nla_get_u64(tb[ORDLOCK_E_XD_GEN]);
	v->hold_gen = 0;
	if (!tb[ORDLOCK_E_KEY])
		return 0;
	ret = ordlock_nl_xd_key(tb[ORDLOCK_E_KEY], info->extack, false, &key);
	if (ret)
		return ret;
	v->rank = key.rank;
	v->id = key.id;
	v->hold_gen = nla_get_u64(tb[ORDLOCK_E_XD_HOLD_GEN]);
	return 0;
}

/*
 * Whether the vertex @v of @domain stands: its owner's current wait has
 * that generation, and it holds the key of the incoming edge with that
 * hold's generation; ordlock_owners_lock (@owners) and ordlock_graph_lock
 * held
 */
static bool ordlock_nl_xd_live(struct list_head *owners,
			       struct ordlock_domain *domain,
			       const struct ordlock_nl_xd_vertex *v)
{
	struct ordlock_owner *owner = ordlock_nl_xd_owner(owners, domain, v->owner);

	if (!owner || READ_ONCE(owner->xd_gen) != v->gen)
		return false;
	return !v->hold_gen ||
	       ordlock_nl_xd_holds(owner, domain, v->rank, v->id, v->hold_gen);
}

int ordlock_nl_xd_check_doit(struct sk_buff *skb, struct genl_info *info)
{
	static const u16 need[] = { ORDLOCK_A_DOMAIN, ORDLOCK_A_XD_PATH };
	struct ordlock_nl_xd_vertex *v;
	struct ordlock_domain *domain;
	struct list_head *owners;
	unsigned int n = 0, i;
	struct sk_buff *msg;
	struct nlattr *attr;
	bool live = true, skip;
	void *hdr;
	int rem, ret;

	ret = ordlock_nl_xd_need(info, need, ARRAY_SIZE(need));
	if (ret)
		return ret;
	v = kcalloc(ORDLOCK_CYCLE_MAX, sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	nla_for_each_nested(attr, info->attrs[ORDLOCK_A_XD_PATH], rem) {
		if (n == ORDLOCK_CYCLE_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "more than ORDLOCK_CYCLE_MAX vertices");
			ret = -E2BIG;
			goto out;
		}
		ret = ordlock_nl_xd_parse_vertex(info, attr, ordlock_nl_xd_node(),
						 &v[n], &skip);
		if (ret)
			goto out;
		if (!skip)
			n++;
	}
	if (!n) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_XD_PATH],
				    "no vertex of this node");
		ret = -EINVAL;
		goto out;
	}
	domain = ordlock_nl_xd_domain(info, &ret);
	if (!domain)
		goto out;
	owners = ordlock_owner_lock_list();
	spin_lock(&ordlock_graph_lock);
	for (i = 0; i < n && live; i++)
		live = ordlock_nl_xd_live(owners, domain, &v[i]);
	spin_unlock(&ordlock_graph_lock);
	ordlock_owner_unlock_list();
	ordlock_stat_inc(domain, ORDLOCK_STAT_XD_ROUNDS);
	if (!live)
		ordlock_stat_inc(domain, ORDLOCK_STAT_XD_STALE);
	ordlock_domain_put(domain);

	ret = -ENOMEM;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_put_reply(msg, info, &ordlock_genl_family, 0,
				ORDLOCK_CMD_XD_CHECK);
	if (!hdr || nla_put_u32(msg, ORDLOCK_A_XD_LIVE, live)) {
		nlmsg_free(msg);
		ret = -EMSGSIZE;
		goto out;
	}
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
out:
	kfree(v);
	return ret;
}

/* Parse step @i of XD_FAIL's cycle into @xd; -EINVAL with an extack */
static int ordlock_nl_xd_parse_step(struct genl_info *info, struct nlattr *attr,
				    u32 node, struct ordlock_xd_cycle *xd,
				    unsigned int i)
{
	struct nlattr *tb[ORDLOCK_E_MAX + 1];
	struct ordlock_cycle_step *s = &xd->steps[i];
	u32 step_node = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = nla_parse_nested(tb, ORDLOCK_E_MAX, attr,
			       ordlock_nl_xd_vertex_policy, info->extack);
	if (ret)
		return ret;
	if (!tb[ORDLOCK_E_OWNER_ID] || !tb[ORDLOCK_E_KEY]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "a step needs its owner id and its key");
		return -EINVAL;
	}
	ret = ordlock_nl_xd_key(tb[ORDLOCK_E_KEY], info->extack, true, &s->key);
	if (ret)
		return ret;
	if (tb[ORDLOCK_E_XD_NODE])
		step_node = nla_get_u32(tb[ORDLOCK_E_XD_NODE]);
	if (step_node == node)
		step_node = 0;
	s->owner_id = nla_get_u64(tb[ORDLOCK_E_OWNER_ID]);
	s->pid = tb[ORDLOCK_E_PID] ? nla_get_u32(tb[ORDLOCK_E_PID]) : 0;
	s->edge = tb[ORDLOCK_E_EDGE] ? nla_get_u32(tb[ORDLOCK_E_EDGE]) :
		  ORDLOCK_EDGE_HARD;
	s->blocker_mode = tb[ORDLOCK_E_MODE] ? nla_get_u32(tb[ORDLOCK_E_MODE]) :
			  ORDLOCK_MODE_EXCLUSIVE;
	if (step_node)
		s->flags = ORDLOCK_STEP_OTHER_NODE;
	if (tb[ORDLOCK_E_COMM])
		ordlock_comm_sanitize(s->comm, nla_data(tb[ORDLOCK_E_COMM]));
	else
		strscpy(s->comm, "?", sizeof(s->comm));
	xd->nodes[i] = step_node;
	return 0;
}

/*
 * Parse XD_FAIL's cycle into @xd: 2 to ORDLOCK_CYCLE_MAX steps, the first
 * the victim (this node's owner @victim), at least one of another node
 */
static int ordlock_nl_xd_parse_cycle(struct genl_info *info, u64 victim,
				     struct ordlock_xd_cycle *xd)
{
	struct nlattr *cycle = info->attrs[ORDLOCK_A_CYCLE], *attr;
	u32 node = ordlock_nl_xd_node();
	bool remote = false;
	unsigned int n = 0;
	int rem, ret;

	nla_for_each_nested(attr, cycle, rem) {
		if (n == ORDLOCK_CYCLE_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "more than ORDLOCK_CYCLE_MAX steps");
			return -E2BIG;
		}
		ret = ordlock_nl_xd_parse_step(info, attr, node, xd, n);
		if (ret)
			return ret;
		remote |= xd->nodes[n] != 0;
		n++;
	}
	if (n < 2 || !remote) {
		NL_SET_ERR_MSG_ATTR(info->extack, cycle,
				    "a cycle across nodes has 2 steps or more, one of another node");
		return -EINVAL;
	}
	if (xd->nodes[0] || xd->steps[0].owner_id != victim) {
		NL_SET_ERR_MSG_ATTR(info->extack, cycle,
				    "the first step is the victim: ORDLOCK_A_XD_OWNER of this node");
		return -EINVAL;
	}
	xd->n = n;
	return 0;
}

/*
 * Mark the wait @gen of @owner a victim and wake it, with the cycle @stage
 * (taken when the owner has no buffer yet: *@stage is then NULL);
 * ordlock_graph_lock held. Return: 0, -ESTALE (not that wait, or chosen
 * already, or granted), -EOPNOTSUPP (a wait nothing can end: an upgrade's
 * in the DLM).
 */
static int ordlock_nl_xd_mark(struct ordlock_owner *owner, u64 gen,
			      struct ordlock_xd_cycle **stage)
{
	struct ordlock_waiter *w = owner->waiting;
	struct ordlock_bucket *bucket;
	int ret = 0;

	lockdep_assert_held(&ordlock_graph_lock);
	if (READ_ONCE(owner->xd_gen) != gen || owner->xd_victim == gen)
		return -ESTALE;
	/* a wait in the DLM (cluster.c armed it), or none that can end */
	if (!w)
		return ordlock_xd_fail_dlm(owner, gen, stage);
	bucket = ordlock_res_bucket(w->hold->res);
	spin_lock(&bucket->lock);
	if (w->granted) {
		ret = -ESTALE;
	} else {
		ordlock_xd_stage(owner, gen, stage);
		ordlock_xd_wake(w->task, w);
	}
	spin_unlock(&bucket->lock);
	return ret;
}

int ordlock_nl_xd_fail_doit(struct sk_buff *skb, struct genl_info *info)
{
	static const u16 need[] = {
		ORDLOCK_A_DOMAIN, ORDLOCK_A_XD_OWNER, ORDLOCK_A_XD_GEN, ORDLOCK_A_CYCLE,
	};
	struct ordlock_xd_cycle *stage;
	struct ordlock_domain *domain;
	struct ordlock_owner *owner;
	struct list_head *owners;
	bool daemon;
	u64 id, gen;
	int ret;

	mutex_lock(&ordlock_nl_xd_lock);
	daemon = ordlock_nl_xd.sk && ordlock_nl_xd.sk == NETLINK_CB(skb).sk;
	mutex_unlock(&ordlock_nl_xd_lock);
	if (!daemon) {
		NL_SET_ERR_MSG(info->extack,
			       "only the registered ordlock-xdetectd's socket may fail a wait");
		return -EPERM;
	}
	ret = ordlock_nl_xd_need(info, need, ARRAY_SIZE(need));
	if (ret)
		return ret;
	id = nla_get_u64(info->attrs[ORDLOCK_A_XD_OWNER]);
	gen = nla_get_u64(info->attrs[ORDLOCK_A_XD_GEN]);
	stage = kzalloc(sizeof(*stage), GFP_KERNEL);
	if (!stage)
		return -ENOMEM;
	ret = ordlock_nl_xd_parse_cycle(info, id, stage);
	if (ret)
		goto out;
	domain = ordlock_nl_xd_domain(info, &ret);
	if (!domain)
		goto out;
	owners = ordlock_owner_lock_list();
	owner = ordlock_nl_xd_owner(owners, domain, id);
	spin_lock(&ordlock_graph_lock);
	ret = owner ? ordlock_nl_xd_mark(owner, gen, &stage) : -ESTALE;
	spin_unlock(&ordlock_graph_lock);
	ordlock_owner_unlock_list();
	if (!ret)
		ordlock_stat_inc(domain, ORDLOCK_STAT_XD_VICTIMS);
	else if (ret == -ESTALE)
		ordlock_stat_inc(domain, ORDLOCK_STAT_XD_STALE);
	ordlock_domain_put(domain);
	if (ret == -ESTALE)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_XD_GEN],
				    "the owner's current wait has another generation");
	else if (ret == -EOPNOTSUPP)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_XD_GEN],
				    "an upgrade's wait in the DLM cannot be failed");
out:
	kfree(stage);
	return ret;
}

static struct notifier_block ordlock_nl_xd_event_nb = {
	.notifier_call = ordlock_nl_xd_event,
};

/* The registered daemon's socket closed: it is gone */
static int ordlock_nl_xd_notifier(struct notifier_block *nb, unsigned long state,
				  void *data)
{
	struct netlink_notify *n = data;

	if (state != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	mutex_lock(&ordlock_nl_xd_lock);
	/* the closing socket is dead already; a new one on its port id is not */
	if (ordlock_nl_xd.sk && ordlock_nl_xd.portid == n->portid &&
	    sock_flag(ordlock_nl_xd.sk, SOCK_DEAD))
		ordlock_nl_xd_drop();
	mutex_unlock(&ordlock_nl_xd_lock);
	return NOTIFY_DONE;
}

static struct notifier_block ordlock_nl_xd_nb = {
	.notifier_call = ordlock_nl_xd_notifier,
};

/* ordlock_nl_xd_init() - after the family is registered */
int ordlock_nl_xd_init(void)
{
	int ret;

	ret = netlink_register_notifier(&ordlock_nl_xd_nb);
	if (ret)
		return ret;
	ret = ordlock_xd_subscribe(&ordlock_nl_xd_event_nb);
	if (ret)
		netlink_unregister_notifier(&ordlock_nl_xd_nb);
	return ret;
}

/* ordlock_nl_xd_exit() - before the family is unregistered */
void ordlock_nl_xd_exit(void)
{
	ordlock_xd_unsubscribe(&ordlock_nl_xd_event_nb);
	netlink_unregister_notifier(&ordlock_nl_xd_nb);
	mutex_lock(&ordlock_nl_xd_lock);
	ordlock_nl_xd_drop();
	mutex_unlock(&ordlock_nl_xd_lock);
}
