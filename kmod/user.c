// SPDX-License-Identifier: GPL-2.0
/*
 * Users: per-uid counts of owners, held keys, waiters, domains and learned
 * edges, and the per-user limits. See user.h.
 *
 * A user exists while it has an owner or a domain created for it. The
 * counts are per-CPU counters changed by the user's owners under their own
 * lock (and, for domains, when a domain is created or freed), so one user's
 * requests never wait for another's, and the owners of one user on
 * different CPUs do not write a shared cache line on every acquire; the
 * sum is only computed near the limit. A charge that would pass the limit
 * changes nothing and fails with EDQUOT (two racing charges near the limit
 * may both fail where one would fit: never more than the limit).
 */
#include <linux/capability.h>
#include <linux/hashtable.h>
#include <linux/limits.h>
#include <linux/mutex.h>
#include <linux/percpu_counter.h>
#include <linux/printk.h>
#include <linux/slab.h>

#include "params.h"
#include "user.h"

#define ORDLOCK_USERS_HASH_BITS 6

/*
 * ordlock_users_lock protects ordlock_users, the users that have owners
 * or domains. It is a leaf: nothing is taken under it. See the lock order
 * in main.c.
 */
static DEFINE_MUTEX(ordlock_users_lock);
static DEFINE_HASHTABLE(ordlock_users, ORDLOCK_USERS_HASH_BITS);

static const char * const ordlock_user_count_names[ORDLOCK_USER_NR] = {
	[ORDLOCK_USER_OWNERS] = "owners",
	[ORDLOCK_USER_KEYS] = "keys",
	[ORDLOCK_USER_WAITERS] = "waiters",
	[ORDLOCK_USER_DOMAINS] = "domains",
	[ORDLOCK_USER_EDGES] = "edges",
};

/**
 * ordlock_user_get() - the user of @uid, created when needed, referenced
 * @uid: the uid
 *
 * Return: the user, or ERR_PTR(-ENOMEM).
 */
struct ordlock_user *ordlock_user_get(kuid_t uid)
{
	struct ordlock_user *user;
	unsigned int i;

	mutex_lock(&ordlock_users_lock);
	hash_for_each_possible(ordlock_users, user, node, __kuid_val(uid)) {
		if (uid_eq(user->uid, uid)) {
			refcount_inc(&user->ref);
			goto out;
		}
	}
	user = kzalloc(sizeof(*user), GFP_KERNEL_ACCOUNT);
	if (!user)
		goto err;
	for (i = 0; i < ORDLOCK_USER_NR; i++)
		if (percpu_counter_init(&user->count[i], 0, GFP_KERNEL_ACCOUNT))
			goto err_counters;
	refcount_set(&user->ref, 1);
	user->uid = uid;
	hash_add(ordlock_users, &user->node, __kuid_val(uid));
out:
	mutex_unlock(&ordlock_users_lock);
	return user;

err_counters:
	while (i--)
		percpu_counter_destroy(&user->count[i]);
	kfree(user);
err:
	mutex_unlock(&ordlock_users_lock);
	return ERR_PTR(-ENOMEM);
}

/**
 * ordlock_user_hold() - take one more reference to a user
 * @user: a user the caller holds a reference to
 *
 * Takes no lock: the caller's reference keeps @user alive.
 *
 * Return: @user.
 */
struct ordlock_user *ordlock_user_hold(struct ordlock_user *user)
{
	refcount_inc(&user->ref);
	return user;
}

/**
 * ordlock_user_put() - drop a reference; the last one frees the user
 * @user: the user; its owners and domains have given back everything they
 *	charged
 *
 * The last reference takes ordlock_users_lock: see the lock order in
 * main.c for where that may be.
 */
void ordlock_user_put(struct ordlock_user *user)
{
	unsigned int i;
	s64 n;

	if (!refcount_dec_and_mutex_lock(&user->ref, &ordlock_users_lock))
		return;
	hash_del(&user->node);
	mutex_unlock(&ordlock_users_lock);
	for (i = 0; i < ORDLOCK_USER_NR; i++) {
		n = percpu_counter_sum(&user->count[i]);
		if (n)
			pr_err("ordlock: uid %u leaked %lld %s\n",
			       ordlock_user_uid(user), n,
			       ordlock_user_count_names[i]);
		percpu_counter_destroy(&user->count[i]);
	}
	kfree(user);
}

/**
 * ordlock_user_exempt() - whether an owner created now is exempt
 *
 * Return: true when the calling task has CAP_SYS_RESOURCE in the initial
 * user namespace (checked without an audit record: most callers lack it).
 */
bool ordlock_user_exempt(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_RESOURCE);
}

static unsigned int ordlock_user_limit(enum ordlock_user_count what)
{
	switch (what) {
	case ORDLOCK_USER_OWNERS:
		return ordlock_max_owners_per_user();
	case ORDLOCK_USER_KEYS:
		return ordlock_max_keys_per_user();
	case ORDLOCK_USER_WAITERS:
		return ordlock_max_waiters_per_user();
	case ORDLOCK_USER_EDGES:
		return ordlock_order_max_edges_per_user();
	default:
		return ordlock_max_domains_per_user();
	}
}

/**
 * ordlock_user_charge() - count @n more of @what, within the user's limit
 * @user: the user
 * @what: an enum ordlock_user_count
 * @n: how many
 * @exempt: the owner is exempt from the limit (it is still counted)
 *
 * Either all @n are charged or none is.
 *
 * Return: 0, or -EDQUOT when the count would pass the limit.
 */
int ordlock_user_charge(struct ordlock_user *user, enum ordlock_user_count what,
			unsigned int n, bool exempt)
{
	struct percpu_counter *count = &user->count[what];

	percpu_counter_add(count, n);
	if (!exempt && __percpu_counter_compare(count, ordlock_user_limit(what),
						percpu_counter_batch) > 0) {
		percpu_counter_sub(count, n);
		atomic_inc(&user->refused);
		return -EDQUOT;
	}
	return 0;
}

/**
 * ordlock_user_charge_edge() - count one more learned edge, within the limit
 * @user: the user whose grant taught the edge
 * @exempt: that owner is exempt from the limit (the edge is still counted)
 *
 * Called under the order->lock of the edge's domain. An edge past the
 * limit is counted in @user's edges_dropped (not in refused: no request
 * fails for it).
 *
 * Return: 0, or -EDQUOT when the user has order_max_edges_per_user.
 */
int ordlock_user_charge_edge(struct ordlock_user *user, bool exempt)
{
	struct percpu_counter *count = &user->count[ORDLOCK_USER_EDGES];

	percpu_counter_inc(count);
	if (!exempt &&
	    __percpu_counter_compare(count, ordlock_order_max_edges_per_user(),
				     percpu_counter_batch) > 0) {
		percpu_counter_dec(count);
		atomic_long_inc(&user->edges_dropped);
		return -EDQUOT;
	}
	return 0;
}

/**
 * ordlock_user_refuse() - would ordlock_user_charge() refuse @n more?
 * @user: the user
 * @what: an enum ordlock_user_count
 * @n: how many
 * @exempt: the owner is exempt from the limit
 *
 * Charges nothing. For a request that fails anyway (a try-lock of a taken
 * key): it reports the user's limit, as the charge it would have made
 * first, and counts it refused, without charging and giving back.
 *
 * Return: 0 when the charge would pass, else -EDQUOT.
 */
int ordlock_user_refuse(struct ordlock_user *user, enum ordlock_user_count what,
			unsigned int n, bool exempt)
{
	if (exempt || __percpu_counter_compare(&user->count[what],
					       (s64)ordlock_user_limit(what) - n,
					       percpu_counter_batch) <= 0)
		return 0;
	atomic_inc(&user->refused);
	return -EDQUOT;
}

/**
 * ordlock_user_uncharge() - give back @n of @what
 * @user: the user
 * @what: an enum ordlock_user_count
 * @n: how many; no more than were charged
 */
void ordlock_user_uncharge(struct ordlock_user *user,
			   enum ordlock_user_count what, unsigned int n)
{
	percpu_counter_sub(&user->count[what], n);
}

/**
 * ordlock_user_show() - one line per user, for debugfs
 * @m: the seq_file
 *
 * "UID OWNERS KEYS WAITERS REFUSED DOMAINS EDGES EDGES_DROPPED"; the
 * counts are read racily.
 */
void ordlock_user_show(struct seq_file *m)
{
	struct ordlock_user *user;
	unsigned int bkt;

	mutex_lock(&ordlock_users_lock);
	hash_for_each(ordlock_users, bkt, user, node)
		seq_printf(m, "%u %lld %lld %lld %d %lld %lld %ld\n",
			   ordlock_user_uid(user),
			   percpu_counter_sum(&user->count[ORDLOCK_USER_OWNERS]),
			   percpu_counter_sum(&user->count[ORDLOCK_USER_KEYS]),
			   percpu_counter_sum(&user->count[ORDLOCK_USER_WAITERS]),
			   atomic_read(&user->refused),
			   percpu_counter_sum(&user->count[ORDLOCK_USER_DOMAINS]),
			   percpu_counter_sum(&user->count[ORDLOCK_USER_EDGES]),
			   atomic_long_read(&user->edges_dropped));
	mutex_unlock(&ordlock_users_lock);
}

/*
 * ordlock_user_exit() - at unload every user must be gone with its owners
 * and domains (call it after ordlock_domain_exit())
 */
void ordlock_user_exit(void)
{
	struct ordlock_user *user;
	unsigned int bkt;

	mutex_lock(&ordlock_users_lock);
	hash_for_each(ordlock_users, bkt, user, node)
		pr_err("ordlock: leaked user %u (%d references)\n",
		       ordlock_user_uid(user), refcount_read(&user->ref));
	mutex_unlock(&ordlock_users_lock);
}
