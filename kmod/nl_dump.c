// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink dumps: GET_LOCKS and GET_GRAPH walk the resource table one
 * bucket at a time, under that bucket's lock only; GET_OWNERS walks the
 * list of owners. A sender without CAP_NET_ADMIN sees only the entries of
 * its own user's owners.
 */
#include <linux/cred.h>
#include <net/genetlink.h>
#include <net/sock.h>
#include <net/net_namespace.h>

#include "domain.h"
#include "graph.h"
#include "netlink.h"
#include "owner.h"
#include "request.h"
#include "resource.h"
#include "table.h"
#include "user.h"

/*
 * The dumps take no attribute. They have always let a request carry any
 * of the family's request attributes, which they validate and ignore: so
 * they still do.
 */
const struct ordlock_nl_take ordlock_nl_dump_takes[] = {
	{ ORDLOCK_A_DOMAIN, ORDLOCK_NL_TAKES_DOMAIN },
	{ ORDLOCK_A_KEYS, ORDLOCK_NL_TAKES_KEYS },
	{ ORDLOCK_A_FLAGS, ORDLOCK_NL_TAKES_FLAGS },
	{ ORDLOCK_A_TIMEOUT_NS, ORDLOCK_NL_TAKES_TIMEOUT_NS },
	{ ORDLOCK_A_COOKIE, ORDLOCK_NL_TAKES_COOKIE },
	{ ORDLOCK_A_POLICY, ORDLOCK_NL_TAKES_POLICY },
	{ ORDLOCK_A_DETECT_DELAY_MS, ORDLOCK_NL_TAKES_DETECT_DELAY_MS },
	{ ORDLOCK_A_RANK_NAMES, ORDLOCK_NL_TAKES_RANK_NAMES },
	{ }
};

/*
 * cb->args of the dumps past their positions: whether the dump shows only
 * the owners of one user (the sender is not an admin), and that user's uid
 */
#define ORDLOCK_NL_DUMP_OWN_ONLY	4
#define ORDLOCK_NL_DUMP_UID		5

int ordlock_nl_dump_check(struct netlink_callback *cb)
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
	if (!hdr) {
		d->done--;	/* not sent: the next part of the dump starts with it */
		return ERR_PTR(-EMSGSIZE);
	}
	*entry = nla_nest_start(d->skb, ORDLOCK_A_ENTRY);
	if (!*entry) {
		genlmsg_cancel(d->skb, hdr);
		d->done--;
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

/*
 * One entry of GET_LOCKS: @value is a holder's token, else the time
 * waited; @cluster: a holder granted here that waits for the cluster
 * (@value the time waited)
 */
static int ordlock_nl_lock_entry(struct ordlock_nl_dump *d, u32 role, u32 pos,
				 struct ordlock_owner *owner, u32 mode, u64 value,
				 bool cluster)
{
	struct ordlock_resource *res = d->res;
	struct nlattr *entry;
	bool lease = false;
	u64 left = 0;
	void *hdr;

	hdr = ordlock_nl_dump_start(d, ORDLOCK_CMD_GET_LOCKS, &entry);
	if (IS_ERR_OR_NULL(hdr))
		return PTR_ERR_OR_ZERO(hdr);
	if (role == ORDLOCK_ROLE_HOLDER)
		left = ordlock_lease_left_ms(owner, &lease);
	return ordlock_nl_dump_end(d, hdr, entry,
		nla_put_string(d->skb, ORDLOCK_E_DOMAIN, owner->domain->name) ||
		ordlock_nl_put_key(d->skb, ORDLOCK_E_KEY, res->rank, res->id, 0) ||
		nla_put_u32(d->skb, ORDLOCK_E_ROLE, role) ||
		nla_put_u32(d->skb, ORDLOCK_E_POSITION, pos) ||
		ordlock_nl_put_owner(d->skb, owner->id, READ_ONCE(owner->pid), owner->comm) ||
		ordlock_nl_put_label(d->skb, owner->label) ||
		nla_put_u32(d->skb, ORDLOCK_E_MODE, mode) ||
		nla_put_u64_64bit(d->skb, role == ORDLOCK_ROLE_HOLDER && !cluster ?
				  ORDLOCK_E_TOKEN : ORDLOCK_E_WAITED_US, value,
				  ORDLOCK_E_PAD) ||
		(lease && nla_put_u64_64bit(d->skb, ORDLOCK_E_LEASE_LEFT_MS, left,
					    ORDLOCK_E_PAD)) ||
		(cluster && nla_put_flag(d->skb, ORDLOCK_E_CLUSTER_WAIT)));
}

/*
 * The member that holds a fast key by the fast path, as the key's word
 * names it (ordlock_res_word_holder()): a holder entry with ORDLOCK_E_FAST (the
 * index), no token; an index that names no owner: owner 0, pid 0, "?",
 * shown to admins only. True when the message is full.
 */
static bool ordlock_nl_lock_fast(void *arg, const struct ordlock_word_holder *h)
{
	struct ordlock_owner *owner = h->owner;
	struct ordlock_nl_dump *d = arg;
	struct nlattr *entry;
	void *hdr;

	if (owner ? ordlock_nl_dump_hides(d, owner) : d->own_only)
		return false;
	hdr = ordlock_nl_dump_start(d, ORDLOCK_CMD_GET_LOCKS, &entry);
	if (IS_ERR_OR_NULL(hdr))
		return IS_ERR(hdr);
	return ordlock_nl_dump_end(d, hdr, entry,
		nla_put_string(d->skb, ORDLOCK_E_DOMAIN, h->domain->name) ||
		ordlock_nl_put_key(d->skb, ORDLOCK_E_KEY, d->res->rank, d->res->id, 0) ||
		nla_put_u32(d->skb, ORDLOCK_E_ROLE, ORDLOCK_ROLE_HOLDER) ||
		nla_put_u32(d->skb, ORDLOCK_E_POSITION, 0) ||
		(owner ?
		 ordlock_nl_put_owner(d->skb, owner->id, READ_ONCE(owner->pid),
				      owner->comm) ||
		 ordlock_nl_put_label(d->skb, owner->label) :
		 ordlock_nl_put_owner(d->skb, 0, 0, "?")) ||
		nla_put_u32(d->skb, ORDLOCK_E_MODE, ORDLOCK_MODE_EXCLUSIVE) ||
		nla_put_u32(d->skb, ORDLOCK_E_FAST, h->index)) != 0;
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
	bool cluster;
	ktime_t since;
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
			cluster = READ_ONCE(hold->cluster_wait);
			/* the time of this wait: written before the flag */
			smp_rmb();
			since = ns_to_ktime(READ_ONCE(hold->owner->pending_since));
			ret = ordlock_nl_lock_entry(d, ORDLOCK_ROLE_HOLDER, pos++,
						    hold->owner, hold->mode,
						    cluster ? ordlock_nl_us_since(since) :
						    hold->token, cluster);
			if (ret)
				goto out;
		}
		if (unlikely(res->fast) &&
		    ordlock_res_word_holder(res, ordlock_nl_lock_fast, d)) {
			ret = -EMSGSIZE;
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
						    ordlock_nl_us_since(w->since), false);
			if (ret)
				goto out;
		}
	}
out:
	spin_unlock(&bucket->lock);
	return ret;
}

static bool ordlock_nl_graph_edge(void *arg, struct ordlock_owner *to, u32 edge,
				  u32 mode, u32 fast)
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
	      nla_put_u32(d->skb, ORDLOCK_E_EDGE, edge & ~ORDLOCK_EDGE_FAST_HOLDER) ||
	      nla_put_u64_64bit(d->skb, ORDLOCK_E_WAITED_US,
				ordlock_nl_us_since(d->w->since), ORDLOCK_E_PAD);
	blocker = err ? NULL : nla_nest_start(d->skb, ORDLOCK_E_BLOCKER);
	if (!blocker ||
	    ordlock_nl_put_owner(d->skb, to->id, READ_ONCE(to->pid), to->comm) ||
	    nla_put_u32(d->skb, ORDLOCK_E_MODE, mode) ||
	    /* the fast-path holder the key's word names (its index: to's) */
	    ((edge & ORDLOCK_EDGE_FAST_HOLDER) &&
	     nla_put_u32(d->skb, ORDLOCK_E_FAST, fast)))
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

int ordlock_nl_locks_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return ordlock_nl_dump_table(skb, cb, ordlock_nl_locks_bucket);
}

/* A thread edge (ORDLOCK_EDGE_THREAD), in the second phase of GET_GRAPH */
static bool ordlock_nl_graph_thread(void *arg, struct ordlock_owner *holder,
				    struct ordlock_owner *to)
{
	struct ordlock_nl_dump *d = arg;
	struct ordlock_waiter *w = to->waiting;
	struct nlattr *entry, *blocker;
	void *hdr;
	int err;

	if (ordlock_nl_dump_hides(d, holder))
		return false;
	hdr = ordlock_nl_dump_start(d, ORDLOCK_CMD_GET_GRAPH, &entry);
	if (!hdr)
		return false;
	if (IS_ERR(hdr))
		return true;
	err = ordlock_nl_put_owner(d->skb, holder->id, READ_ONCE(holder->pid),
				   holder->comm) ||
	      nla_put_string(d->skb, ORDLOCK_E_DOMAIN, to->domain->name) ||
	      ordlock_nl_put_key(d->skb, ORDLOCK_E_KEY, w->hold->res->rank,
				 w->hold->res->id, w->mode) ||
	      nla_put_u32(d->skb, ORDLOCK_E_EDGE, ORDLOCK_EDGE_THREAD) ||
	      nla_put_u64_64bit(d->skb, ORDLOCK_E_WAITED_US,
				ordlock_nl_us_since(w->since), ORDLOCK_E_PAD);
	blocker = err ? NULL : nla_nest_start(d->skb, ORDLOCK_E_BLOCKER);
	if (!blocker ||
	    ordlock_nl_put_owner(d->skb, to->id, READ_ONCE(to->pid), to->comm) ||
	    nla_put_u32(d->skb, ORDLOCK_E_MODE, w->mode))
		err = -EMSGSIZE;
	else
		nla_nest_end(d->skb, blocker);
	return ordlock_nl_dump_end(d, hdr, entry, err) != 0;
}

/*
 * GET_GRAPH: the waiters' edges, bucket by bucket (cb->args[0], [1]), then
 * the thread edges (cb->args[2] 1 while in that phase, [1] the entry to
 * resume at; 2 when done)
 */
#define ORDLOCK_NL_GRAPH_PHASE	2

int ordlock_nl_graph_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct ordlock_nl_dump d = {};
	int ret;

	if (!cb->args[ORDLOCK_NL_GRAPH_PHASE]) {
		ret = ordlock_nl_dump_table(skb, cb, ordlock_nl_graph_bucket);
		if (cb->args[0] < ordlock_table_size())
			return ret;
		cb->args[ORDLOCK_NL_GRAPH_PHASE] = 1;
		cb->args[1] = 0;
	}
	if (cb->args[ORDLOCK_NL_GRAPH_PHASE] == 1) {
		ordlock_nl_dump_init(&d, skb, cb);
		d.skip = cb->args[1];
		if (ordlock_graph_thread_edges(ordlock_nl_graph_thread, &d)) {
			cb->args[1] = d.done;	/* full: resume here */
			return skb->len;
		}
		cb->args[ORDLOCK_NL_GRAPH_PHASE] = 2;
	}
	return skb->len;
}

int ordlock_nl_owners_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
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
		      ordlock_nl_put_label(skb, owner->label) ||
		      nla_put_string(skb, ORDLOCK_E_DOMAIN, dname) ||
		      nla_put_u32(skb, ORDLOCK_E_KIND, owner->kind) ||
		      nla_put_u32(skb, ORDLOCK_E_HELD, ordlock_req_held(owner)) ||
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
