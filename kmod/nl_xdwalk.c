// SPDX-License-Identifier: GPL-2.0
/*
 * XD_WALK (docs/cluster.md, "Deadlocks across nodes"): the paths of waits
 * on this node that ordlock-xdetectd's probes extend, from the holders of a
 * key a remote waiter waits for, or from an owner's wait. One snapshot for
 * the whole dump, taken at its start under ordlock_owners_lock and
 * ordlock_graph_lock (as XD_CHECK reads, nl_xdetect.c), then sent message
 * by message; the walk is a depth-first search kept in the snapshot.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "cluster.h"
#include "domain.h"
#include "graph.h"
#include "keys.h"
#include "netlink.h"
#include "owner.h"
#include "resource.h"
#include "table.h"
#include "xdetect.h"

/* The blockers of one vertex the walk follows, at most */
#define ORDLOCK_NL_XD_FANOUT	16

/**
 * struct ordlock_nl_xd_next - the blockers of a vertex, for the walk
 * @res: the resource waited for (its bucket lock held while they are read)
 * @n: how many
 * @to: the blocking owners
 * @edge: the enum ordlock_edge of each
 * @mode: the mode each blocks in
 * @hold_gen: the generation of each hard edge's hold, else 0
 */
struct ordlock_nl_xd_next {
	struct ordlock_resource *res;
	unsigned int n;
	struct ordlock_owner *to[ORDLOCK_NL_XD_FANOUT];
	u32 edge[ORDLOCK_NL_XD_FANOUT];
	u32 mode[ORDLOCK_NL_XD_FANOUT];
	u64 hold_gen[ORDLOCK_NL_XD_FANOUT];
};

/**
 * struct ordlock_nl_xd_walk - the snapshot of an XD_WALK dump
 * @domain: the domain's name
 * @npaths: paths found
 * @len: each path's vertices
 * @paths: the paths
 * @depth: vertices on the path being walked (@cur, @on, @next, @idx)
 * @cur: the path being walked
 * @on: its owners
 * @next: the blockers of each of its vertices
 * @idx: the next of them to follow
 *
 * The walk is a depth-first search without recursion (the kernel's stack
 * is small): its state is here, allocated for the dump.
 */
struct ordlock_nl_xd_walk {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int npaths;
	unsigned int len[ORDLOCK_XD_PATHS_MAX];
	struct ordlock_nl_xd_vert paths[ORDLOCK_XD_PATHS_MAX][ORDLOCK_CYCLE_MAX];
	unsigned int depth;
	struct ordlock_nl_xd_vert cur[ORDLOCK_CYCLE_MAX];
	struct ordlock_owner *on[ORDLOCK_CYCLE_MAX];
	struct ordlock_nl_xd_next next[ORDLOCK_CYCLE_MAX];
	unsigned int idx[ORDLOCK_CYCLE_MAX];
};

/* The generation of @owner's cluster grant of @res, 0: none; bucket locked */
static u64 ordlock_nl_xd_hold_gen(struct ordlock_resource *res,
				  struct ordlock_owner *owner)
{
	struct ordlock_hold *hold;

	if (!owner->cluster)
		return 0;
	list_for_each_entry(hold, &res->holders, res_node)
		if (hold->owner == owner)
			return READ_ONCE(*ordlock_hold_xd_gen(hold));
	return 0;
}

/* An edge of the graph to @to (ordlock_graph_edges()'s callback) */
static bool ordlock_nl_xd_edge(void *arg, struct ordlock_owner *to, u32 edge,
			       u32 mode, u32 fast)
{
	struct ordlock_nl_xd_next *nx = arg;

	edge &= ~ORDLOCK_EDGE_FAST_HOLDER;
	nx->to[nx->n] = to;
	nx->edge[nx->n] = edge;
	nx->mode[nx->n] = mode;
	nx->hold_gen[nx->n] = edge == ORDLOCK_EDGE_HARD ?
			      ordlock_nl_xd_hold_gen(nx->res, to) : 0;
	return ++nx->n == ORDLOCK_NL_XD_FANOUT;
}

/*
 * The vertex of @owner, which waits (on the node, or in the DLM), entered
 * through its hold of generation @hold_gen; ordlock_graph_lock held
 */
void ordlock_nl_xd_vert_of(struct ordlock_nl_xd_vert *v,
			   struct ordlock_owner *owner, u64 hold_gen)
{
	struct ordlock_waiter *w = owner->waiting;

	memset(v, 0, sizeof(*v));
	v->owner = owner->id;
	v->pid = READ_ONCE(owner->pid);
	memcpy(v->comm, owner->comm_safe, sizeof(v->comm));
	v->comm[sizeof(v->comm) - 1] = '\0';
	if (w) {
		v->rank = w->hold->res->rank;
		v->id = w->hold->res->id;
		v->mode = w->mode;
	} else {
		v->rank = READ_ONCE(owner->pending.rank);
		v->id = READ_ONCE(owner->pending.id);
		v->mode = READ_ONCE(owner->pending.mode);
		v->cluster_wait = true;
		v->lkid = ordlock_cluster_lkid(owner);
	}
	v->gen = READ_ONCE(owner->xd_gen);
	v->hold_gen = hold_gen;
	v->since = owner->xd_since;
}

/**
 * ordlock_nl_xd_replay_snap() - the current waits of the cluster domains
 *	with policy detect, for a daemon that registers (XD_HELLO)
 * @out: receives a kvcalloc()ed array of the waits (NULL when none), for
 *	the caller to kvfree()
 *
 * One snapshot under ordlock_owners_lock and ordlock_graph_lock, as
 * XD_WALK's: every wait on the node has its generation under the graph's
 * lock; one in the DLM is read with READ_ONCE() (a wait that ends
 * meanwhile is replayed with its generation, which the daemon's walk then
 * finds stale).
 *
 * Return: the number of waits, or -ENOMEM.
 */
int ordlock_nl_xd_replay_snap(struct ordlock_nl_xd_wait **out)
{
	struct ordlock_owner *owner;
	struct list_head *owners;
	unsigned int max = 0, n = 0;

	*out = NULL;
	owners = ordlock_owner_lock_list();
	/* the list does not change while it is locked: count, then fill */
	list_for_each_entry(owner, owners, node)
		max += owner->cluster;
	if (max) {
		*out = kvcalloc(max, sizeof(**out), GFP_KERNEL);
		if (!*out) {
			ordlock_owner_unlock_list();
			return -ENOMEM;
		}
	}
	spin_lock(&ordlock_graph_lock);
	list_for_each_entry(owner, owners, node) {
		if (!owner->cluster || !READ_ONCE(owner->xd_gen) ||
		    READ_ONCE(owner->domain->policy) != ORDLOCK_POLICY_DETECT)
			continue;
		ordlock_nl_xd_vert_of(&(*out)[n].v, owner, 0);
		strscpy((*out)[n].domain, owner->domain->name,
			sizeof((*out)[n].domain));
		n++;
	}
	spin_unlock(&ordlock_graph_lock);
	ordlock_owner_unlock_list();
	return n;
}

/* Whether @owner waits in a way the walk follows: on the node or in the DLM */
static bool ordlock_nl_xd_waits(struct ordlock_owner *owner)
{
	return owner->waiting || READ_ONCE(owner->xd_gen);
}

/* wk->cur's path, its last vertex an owner that waits in the DLM, is one */
static void ordlock_nl_xd_path(struct ordlock_nl_xd_walk *wk)
{
	wk->cur[wk->depth - 1].edge = 0;
	wk->cur[wk->depth - 1].bmode = 0;
	wk->len[wk->npaths] = wk->depth;
	memcpy(wk->paths[wk->npaths++], wk->cur, wk->depth * sizeof(*wk->cur));
}

/*
 * The blockers of the last vertex of wk->cur, which waits on the node, into
 * its wk->next; ordlock_graph_lock held
 */
static void ordlock_nl_xd_expand(struct ordlock_nl_xd_walk *wk)
{
	struct ordlock_nl_xd_next *nx = &wk->next[wk->depth - 1];
	struct ordlock_waiter *w = wk->on[wk->depth - 1]->waiting;
	struct ordlock_bucket *bucket;

	nx->n = 0;
	nx->res = w->hold->res;
	wk->idx[wk->depth - 1] = 0;
	bucket = ordlock_res_bucket(nx->res);
	spin_lock(&bucket->lock);
	if (!w->granted)
		ordlock_graph_edges(nx->res, w, ordlock_nl_xd_edge, nx);
	spin_unlock(&bucket->lock);
}

/* Whether @owner is on wk->cur's path (a cycle within the node: its own) */
static bool ordlock_nl_xd_on_path(struct ordlock_nl_xd_walk *wk,
				  struct ordlock_owner *owner)
{
	unsigned int i;

	for (i = 0; i < wk->depth; i++)
		if (wk->on[i] == owner)
			return true;
	return false;
}

/*
 * Start the walk at @owner, entered through its hold of generation
 * @hold_gen: a wait in the DLM ends a path, a wait on the node goes on
 * through each owner that blocks it; ordlock_owners_lock and
 * ordlock_graph_lock held
 */
static void ordlock_nl_xd_walk_from(struct ordlock_nl_xd_walk *wk,
				    struct ordlock_owner *owner, u64 hold_gen)
{
	struct ordlock_nl_xd_next *nx;
	struct ordlock_owner *to;
	unsigned int lvl, i;

	lockdep_assert_held(&ordlock_graph_lock);
	if (wk->npaths == ORDLOCK_XD_PATHS_MAX)
		return;
	wk->depth = 1;
	wk->on[0] = owner;
	ordlock_nl_xd_vert_of(&wk->cur[0], owner, hold_gen);
	if (!owner->waiting) {
		ordlock_nl_xd_path(wk);
		return;
	}
	ordlock_nl_xd_expand(wk);
	while (wk->depth && wk->npaths < ORDLOCK_XD_PATHS_MAX) {
		lvl = wk->depth - 1;
		nx = &wk->next[lvl];
		if (wk->idx[lvl] == nx->n || wk->depth == ORDLOCK_CYCLE_MAX) {
			wk->depth--;
			continue;
		}
		i = wk->idx[lvl]++;
		to = nx->to[i];
		if (ordlock_nl_xd_on_path(wk, to) || !ordlock_nl_xd_waits(to))
			continue;
		wk->cur[lvl].edge = nx->edge[i];
		wk->cur[lvl].bmode = nx->mode[i];
		wk->on[wk->depth] = to;
		ordlock_nl_xd_vert_of(&wk->cur[wk->depth++], to, nx->hold_gen[i]);
		if (!to->waiting) {
			ordlock_nl_xd_path(wk);
			wk->depth--;
			continue;
		}
		ordlock_nl_xd_expand(wk);
	}
}

/*
 * The walk from the owners of @domain's key (@rank, @id) that hold it
 * granted in the DLM in a mode that conflicts with @mode, and wait;
 * ordlock_owners_lock and ordlock_graph_lock held
 */
static void ordlock_nl_xd_walk_key(struct ordlock_nl_xd_walk *wk,
				   struct ordlock_domain *domain, u32 rank,
				   u64 id, u32 mode)
{
	struct ordlock_bucket *bucket = ordlock_table_bucket(domain, rank, id);
	struct ordlock_owner *start[ORDLOCK_NL_XD_FANOUT];
	u64 gen[ORDLOCK_NL_XD_FANOUT];
	struct ordlock_resource *res;
	struct ordlock_hold *hold;
	unsigned int n = 0, i;

	spin_lock(&bucket->lock);
	res = ordlock_table_find(bucket, domain, rank, id);
	if (res) {
		list_for_each_entry(hold, &res->holders, res_node) {
			if (n == ORDLOCK_NL_XD_FANOUT)
				break;
			if (!hold->owner->cluster ||
			    !ordlock_modes_conflict(hold->mode, mode) ||
			    !READ_ONCE(*ordlock_hold_xd_gen(hold)))
				continue;
			start[n] = hold->owner;
			gen[n++] = READ_ONCE(*ordlock_hold_xd_gen(hold));
		}
	}
	spin_unlock(&bucket->lock);
	for (i = 0; i < n; i++)
		if (ordlock_nl_xd_waits(start[i]))
			ordlock_nl_xd_walk_from(wk, start[i], gen[i]);
}

const struct ordlock_nl_take ordlock_nl_xd_walk_takes[] = {
	{ ORDLOCK_A_DOMAIN, ORDLOCK_NL_TAKES_DOMAIN },
	{ ORDLOCK_A_KEY, NLA_POLICY_NESTED(ordlock_nl_key_policy) },
	{ ORDLOCK_A_XD_OWNER, { .type = NLA_U64 } },
	{ ORDLOCK_A_XD_GEN, NLA_POLICY_MIN(NLA_U64, 1) },
	{ }
};

/* cb->args of XD_WALK: the snapshot, the next path to send (nl_dump.c has 4, 5) */
#define ORDLOCK_NL_XD_WALK_SNAP	0
#define ORDLOCK_NL_XD_WALK_NEXT	1

/* Take the snapshot of the walk @tb asks for in @wk; an extack says why not */
static int ordlock_nl_xd_walk_snap(struct netlink_callback *cb, struct nlattr **tb,
				   struct ordlock_nl_xd_walk *wk)
{
	struct ordlock_domain *domain;
	struct ordlock_key key;
	struct ordlock_owner *owner;
	struct list_head *owners;
	int ret = 0;

	if (!tb[ORDLOCK_A_DOMAIN] || !tb[ORDLOCK_A_KEY] == !tb[ORDLOCK_A_XD_OWNER] ||
	    !tb[ORDLOCK_A_XD_OWNER] != !tb[ORDLOCK_A_XD_GEN]) {
		NL_SET_ERR_MSG(cb->extack,
			       "XD_WALK takes a domain and either a key or an owner and its generation");
		return -EINVAL;
	}
	if (tb[ORDLOCK_A_KEY]) {
		ret = ordlock_nl_xd_key(tb[ORDLOCK_A_KEY], cb->extack, true, &key);
		if (ret)
			return ret;
	}
	if (ordlock_domain_name_check(nla_data(tb[ORDLOCK_A_DOMAIN]))) {
		NL_SET_ERR_MSG_ATTR(cb->extack, tb[ORDLOCK_A_DOMAIN], "bad domain name");
		return -EINVAL;
	}
	domain = ordlock_domain_find_get(nla_data(tb[ORDLOCK_A_DOMAIN]));
	if (!domain) {
		NL_SET_ERR_MSG_ATTR(cb->extack, tb[ORDLOCK_A_DOMAIN], "no such domain");
		return -ENOENT;
	}
	if (!READ_ONCE(domain->backend)) {
		NL_SET_ERR_MSG_ATTR(cb->extack, tb[ORDLOCK_A_DOMAIN], "not a cluster domain");
		ret = -EOPNOTSUPP;
		goto out;
	}
	strscpy(wk->domain, domain->name, sizeof(wk->domain));
	owners = ordlock_owner_lock_list();
	spin_lock(&ordlock_graph_lock);
	if (tb[ORDLOCK_A_KEY]) {
		ordlock_nl_xd_walk_key(wk, domain, key.rank, key.id, key.mode);
	} else {
		owner = ordlock_nl_xd_owner(owners, domain,
					    nla_get_u64(tb[ORDLOCK_A_XD_OWNER]));
		if (!owner || READ_ONCE(owner->xd_gen) !=
			      nla_get_u64(tb[ORDLOCK_A_XD_GEN]))
			ret = -ESTALE;
		else
			ordlock_nl_xd_walk_from(wk, owner, 0);
	}
	spin_unlock(&ordlock_graph_lock);
	ordlock_owner_unlock_list();
	if (ret)
		NL_SET_ERR_MSG_ATTR(cb->extack, tb[ORDLOCK_A_XD_GEN],
				    "the owner's current wait has another generation");
out:
	ordlock_domain_put(domain);
	return ret;
}

int ordlock_nl_xd_walk_start(struct netlink_callback *cb)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct ordlock_nl_xd_walk *wk;
	int ret;

	ret = ordlock_nl_dump_check(cb);
	if (ret)
		return ret;
	/* the generic netlink core validated them with the command's policy */
	ret = nlmsg_parse_deprecated(cb->nlh, GENL_HDRLEN, tb, ORDLOCK_A_MAX, NULL,
				     cb->extack);
	if (ret)
		return ret;
	wk = kvzalloc(sizeof(*wk), GFP_KERNEL);
	if (!wk)
		return -ENOMEM;
	ret = ordlock_nl_xd_walk_snap(cb, tb, wk);
	if (ret) {
		kvfree(wk);
		return ret;
	}
	cb->args[ORDLOCK_NL_XD_WALK_SNAP] = (unsigned long)wk;
	cb->args[ORDLOCK_NL_XD_WALK_NEXT] = 0;
	return 0;
}

int ordlock_nl_xd_walk_done(struct netlink_callback *cb)
{
	kvfree((void *)cb->args[ORDLOCK_NL_XD_WALK_SNAP]);
	return 0;
}

/* Vertex @v of a path as an ORDLOCK_A_ENTRY (the last one has no edge) */
static int ordlock_nl_xd_put_vertex(struct sk_buff *skb, const char *domain,
				    const struct ordlock_nl_xd_vert *v)
{
	struct nlattr *e = nla_nest_start(skb, ORDLOCK_A_ENTRY);

	if (!e ||
	    ordlock_nl_put_owner(skb, v->owner, v->pid, v->comm) ||
	    nla_put_string(skb, ORDLOCK_E_DOMAIN, domain) ||
	    ordlock_nl_put_key(skb, ORDLOCK_E_KEY, v->rank, v->id, v->mode) ||
	    (v->edge && (nla_put_u32(skb, ORDLOCK_E_EDGE, v->edge) ||
			 nla_put_u32(skb, ORDLOCK_E_MODE, v->bmode))) ||
	    nla_put_u64_64bit(skb, ORDLOCK_E_XD_GEN, v->gen, ORDLOCK_E_PAD) ||
	    (v->hold_gen && nla_put_u64_64bit(skb, ORDLOCK_E_XD_HOLD_GEN, v->hold_gen,
					      ORDLOCK_E_PAD)) ||
	    nla_put_u64_64bit(skb, ORDLOCK_E_TIME_NS, v->since, ORDLOCK_E_PAD) ||
	    (v->cluster_wait && nla_put_flag(skb, ORDLOCK_E_CLUSTER_WAIT)) ||
	    (v->lkid && nla_put_u32(skb, ORDLOCK_E_XD_LKID, v->lkid)))
		return -EMSGSIZE;
	nla_nest_end(skb, e);
	return 0;
}

int ordlock_nl_xd_walk_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct ordlock_nl_xd_walk *wk = (void *)cb->args[ORDLOCK_NL_XD_WALK_SNAP];
	unsigned long i = cb->args[ORDLOCK_NL_XD_WALK_NEXT];
	struct nlattr *path;
	unsigned int j;
	void *hdr;

	for (; i < wk->npaths; i++) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &ordlock_genl_family, NLM_F_MULTI, ORDLOCK_CMD_XD_WALK);
		if (!hdr)
			break;
		path = nla_nest_start(skb, ORDLOCK_A_XD_PATH);
		if (!path)
			goto full;
		for (j = 0; j < wk->len[i]; j++)
			if (ordlock_nl_xd_put_vertex(skb, wk->domain, &wk->paths[i][j]))
				goto full;
		nla_nest_end(skb, path);
		genlmsg_end(skb, hdr);
	}
	cb->args[ORDLOCK_NL_XD_WALK_NEXT] = i;
	return skb->len;
full:
	genlmsg_cancel(skb, hdr);
	cb->args[ORDLOCK_NL_XD_WALK_NEXT] = i;
	return skb->len;
}
