/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Users: what the owners of one uid hold, wait for and are, and the
 * domains they created, against the per-user limits (module parameters
 * max_owners_per_user, max_keys_per_user, max_waiters_per_user,
 * max_domains_per_user, order_max_edges_per_user).
 *
 * An owner belongs to the user of its creator: the effective uid of the
 * task that opened /dev/ordlock, or that made the first lock request of a
 * netlink socket (the uid the device's permission check used). It keeps
 * that user for life, whoever uses it later. An owner whose creator had
 * CAP_SYS_RESOURCE (in the initial user namespace) is counted like the
 * others but never refused.
 *
 * A domain belongs to the user it was created for: the user of the owner
 * that moved to it (or that configured it with ORDLOCK_IOC_DOMAIN_CONFIG),
 * or the user of the task that configured it through netlink. It counts
 * against that user until it is freed, whoever uses it meanwhile; joining
 * an existing domain charges nothing.
 *
 * An edge of a domain's learned lock order (order.c) belongs to the user
 * of the owner whose grant taught it, and counts against that user, in
 * whatever domain, until the order forgets it (a reset, or the domain is
 * freed). Past the limit the user's new edges are not kept: they are
 * counted in its edges_dropped, not in refused (no request failed).
 */
#ifndef _ORDLOCK_USER_H
#define _ORDLOCK_USER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/percpu_counter.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

/**
 * enum ordlock_user_count - what is counted per user
 * @ORDLOCK_USER_OWNERS: owners (open descriptions, netlink sockets)
 * @ORDLOCK_USER_KEYS: keys held, and keys of acquires in progress (charged
 *	when the acquire starts, uncharged when it fails or they are released)
 * @ORDLOCK_USER_WAITERS: requests queued on a resource
 * @ORDLOCK_USER_DOMAINS: domains created for the user that exist (charged
 *	when the domain is created, uncharged when it is freed)
 * @ORDLOCK_USER_EDGES: edges of learned lock orders the user's grants
 *	taught (charged when the edge is added, uncharged when its order
 *	forgets it)
 * @ORDLOCK_USER_NR: number of counts
 */
enum ordlock_user_count {
	ORDLOCK_USER_OWNERS,
	ORDLOCK_USER_KEYS,
	ORDLOCK_USER_WAITERS,
	ORDLOCK_USER_DOMAINS,
	ORDLOCK_USER_EDGES,
	ORDLOCK_USER_NR,
};

/**
 * struct ordlock_user - the counts of one uid
 * @node: entry in the hash of users, under ordlock_users_lock (user.c)
 * @ref: one reference per owner of the user, one per domain created
 *	for it (domain->creator) and one per learned edge charged to it; the
 *	last one frees it
 * @uid: the uid, constant
 * @count: the counts, indexed by enum ordlock_user_count; per-CPU
 *	counters. The owners of the user change them under their
 *	owner->lock, except the count of domains: charged under
 *	ordlock_domains_lock (domain.c), uncharged by whoever frees the
 *	domain, after that lock; and the count of edges: changed under the
 *	order->lock of the edge's domain (order.c)
 * @refused: requests, owners and domains refused by a per-user limit;
 *	atomic
 * @edges_dropped: new edges of learned orders not kept because the user
 *	had order_max_edges_per_user; atomic
 */
struct ordlock_user {
	struct hlist_node node;
	refcount_t ref;
	kuid_t uid;
	struct percpu_counter count[ORDLOCK_USER_NR];
	atomic_t refused;
	atomic_long_t edges_dropped;
};

struct ordlock_user *ordlock_user_get(kuid_t uid);
struct ordlock_user *ordlock_user_hold(struct ordlock_user *user);
void ordlock_user_put(struct ordlock_user *user);
bool ordlock_user_exempt(void);
int ordlock_user_charge(struct ordlock_user *user, enum ordlock_user_count what,
			unsigned int n, bool exempt);
int ordlock_user_refuse(struct ordlock_user *user, enum ordlock_user_count what,
			unsigned int n, bool exempt);
int ordlock_user_charge_edge(struct ordlock_user *user, bool exempt);
void ordlock_user_uncharge(struct ordlock_user *user,
			   enum ordlock_user_count what, unsigned int n);
void ordlock_user_show(struct seq_file *m);
void ordlock_user_exit(void);

/* ordlock_user_uid() - the uid of @user in the initial user namespace */
static inline u32 ordlock_user_uid(const struct ordlock_user *user)
{
	return from_kuid_munged(&init_user_ns, user->uid);
}

#endif /* _ORDLOCK_USER_H */
