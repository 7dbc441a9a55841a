// SPDX-License-Identifier: GPL-2.0
/*
 * Owners: creation, destruction, domain choice, the list of holds and its
 * cache of spare ones, and the failure record.
 */
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "cluster.h"
#include "domain.h"
#include "events.h"
#include "keys.h"
#include "owner.h"
#include "request.h"
#include "resource.h"
#include "user.h"
#include "xdetect.h"

/* Keep at most this many spare holds per owner */
#define ORDLOCK_OWNER_SPARE_MAX 64

/* Number of owners; atomic, no lock */
atomic_t ordlock_nowners = ATOMIC_INIT(0);
static atomic64_t ordlock_owner_ids = ATOMIC64_INIT(0);

/*
 * ordlock_owners_lock protects ordlock_owners, the list of all owners; see
 * the lock order in main.c
 */
static DEFINE_MUTEX(ordlock_owners_lock);
static LIST_HEAD(ordlock_owners);
/* The holds of local domains, and those of cluster domains (owner.h) */
static struct kmem_cache *ordlock_hold_cache;
static struct kmem_cache *ordlock_cluster_hold_cache;

int ordlock_owner_init(void)
{
	BUILD_BUG_ON(sizeof(struct ordlock_hold) > 64);
	ordlock_hold_cache = KMEM_CACHE(ordlock_hold, SLAB_ACCOUNT);
	if (!ordlock_hold_cache)
		return -ENOMEM;
	ordlock_cluster_hold_cache = KMEM_CACHE(ordlock_cluster_hold, SLAB_ACCOUNT);
	if (!ordlock_cluster_hold_cache) {
		kmem_cache_destroy(ordlock_hold_cache);
		return -ENOMEM;
	}
	return 0;
}

void ordlock_owner_exit(void)
{
	kmem_cache_destroy(ordlock_cluster_hold_cache);
	kmem_cache_destroy(ordlock_hold_cache);
}

/* The cache of @owner's holds */
static struct kmem_cache *ordlock_owner_hold_cache(const struct ordlock_owner *owner)
{
	return owner->cluster ? ordlock_cluster_hold_cache : ordlock_hold_cache;
}

/* Free the spare holds of @owner (locked) */
static void ordlock_owner_free_spare(struct ordlock_owner *owner)
{
	struct kmem_cache *cache = ordlock_owner_hold_cache(owner);
	struct ordlock_hold *hold, *tmp;

	lockdep_assert_held(&owner->lock);
	list_for_each_entry_safe(hold, tmp, &owner->spare, owner_node)
		kmem_cache_free(cache, hold);
	INIT_LIST_HEAD(&owner->spare);
	owner->nspare = 0;
}

/**
 * ordlock_owner_create() - a new owner in the default domain
 * @kind: an enum ordlock_owner_kind
 *
 * The owner belongs to the user of the calling task's effective uid, and
 * counts against its max_owners_per_user unless the task has
 * CAP_SYS_RESOURCE.
 *
 * Return: the owner, ERR_PTR(-EDQUOT) when the user has as many owners as
 * it may (an event tells the "events" group), or ERR_PTR(-ENOMEM).
 */
struct ordlock_owner *ordlock_owner_create(u32 kind)
{
	struct ordlock_owner *owner;
	struct ordlock_user *user;
	bool exempt;
	int ret;

	/*
	 * An owner keeps the module in use, so that no unload takes what it
	 * holds or waits for: a device owner through its file (fops.owner),
	 * a netlink owner through this reference, dropped when the socket
	 * closes. It fails only while the module is being unloaded.
	 */
	if (kind == ORDLOCK_KIND_NETLINK && !try_module_get(THIS_MODULE))
		return ERR_PTR(-ENODEV);
	user = ordlock_user_get(current_euid());
	if (IS_ERR(user)) {
		ret = PTR_ERR(user);
		goto err_module;
	}
	exempt = ordlock_user_exempt();
	ret = ordlock_user_charge(user, ORDLOCK_USER_OWNERS, 1, exempt);
	if (ret) {
		ordlock_event_owner_refused(kind, user);
		goto err_put;
	}
	owner = kzalloc(sizeof(*owner), GFP_KERNEL_ACCOUNT);
	if (!owner) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	owner->user = user;
	owner->user_exempt = exempt;
	mutex_init(&owner->lock);
	seqcount_mutex_init(&owner->domain_seq, &owner->lock);
	INIT_LIST_HEAD(&owner->held);
	INIT_LIST_HEAD(&owner->spare);
	owner->domain = ordlock_domain_get_default();
	INIT_HLIST_NODE(&owner->tid_node);
	ordlock_lease_owner_init(owner);
	owner->kind = kind;
	memcpy(owner->domain_name, owner->domain->name, sizeof(owner->domain_name));
	owner->id = atomic64_inc_return(&ordlock_owner_ids);
	owner->pid = task_tgid_nr(current);
	owner->tid = task_pid_nr(current);
	owner->tid_start = current->start_time;
	get_task_comm(owner->comm, current);
	ordlock_comm_sanitize(owner->comm_safe, owner->comm);
	ordlock_gauge_inc(&owner->domain->owners);
	atomic_inc(&ordlock_nowners);
	mutex_lock(&ordlock_owners_lock);
	list_add_tail(&owner->node, &ordlock_owners);
	mutex_unlock(&ordlock_owners_lock);
	return owner;

err_uncharge:
	ordlock_user_uncharge(user, ORDLOCK_USER_OWNERS, 1);
err_put:
	ordlock_user_put(user);
err_module:
	if (kind == ORDLOCK_KIND_NETLINK)
		module_put(THIS_MODULE);
	return ERR_PTR(ret);
}

/*
 * The task that drops the owner's last reference is dying of a signal (the
 * last close of an exiting task, whose exit code carries the signal): the
 * owner died.  A close, a normal exit, or a kernel thread's delayed close
 * that leaves keys behind is no death.
 */
static bool ordlock_owner_killed(void)
{
	return (current->flags & PF_EXITING) && (current->exit_code & 0x7f);
}

/**
 * ordlock_owner_destroy() - release everything and free the owner
 * @owner: an owner nobody else can reach any more
 */
void ordlock_owner_destroy(struct ordlock_owner *owner)
{
	mutex_lock(&ordlock_owners_lock);
	list_del(&owner->node);
	mutex_unlock(&ordlock_owners_lock);

	mutex_lock(&owner->lock);
	ordlock_lease_owner_kill(owner);
	if (owner->nheld && ordlock_owner_killed())
		ordlock_event_owner_died(owner);
	ordlock_req_owner_gone(owner);
	ordlock_owner_free_spare(owner);
	mutex_unlock(&owner->lock);
	/* Its timer and work item take owner->lock: cancelled unlocked */
	ordlock_lease_owner_free(owner);
	ordlock_gauge_dec(&owner->domain->owners);
	ordlock_domain_put(owner->domain);
	mutex_destroy(&owner->lock);
	ordlock_user_uncharge(owner->user, ORDLOCK_USER_OWNERS, 1);
	ordlock_user_put(owner->user);
	kfree(owner->cycle);
	kfree(owner->xd);
	atomic_dec(&ordlock_nowners);
	/*
	 * Last: the module may go once the reference is dropped.  Its exit
	 * waits for the notifier or work item that destroys a netlink owner
	 * (netlink_unregister_notifier(), destroy_workqueue()).
	 */
	if (owner->kind == ORDLOCK_KIND_NETLINK)
		module_put(THIS_MODULE);
	kfree(owner);
}

/*
 * @owner may not create the domain @name: its user has max_domains_per_user
 * domains. Reported as the other per-user limits are: a failure record
 * (reason user-limit, no key), then the event (see events.c).
 */
static int ordlock_owner_domain_limit(struct ordlock_owner *owner,
				      const char *name)
{
	ordlock_owner_fail(owner, ORDLOCK_REASON_USER_LIMIT, -EDQUOT, NULL);
	ordlock_event_domain_refused(owner, name);
	return -EDQUOT;
}

/**
 * ordlock_owner_set_domain() - move @owner to the domain @name
 * @owner: the owner, locked
 * @name: a name buffer of ORDLOCK_DOMAIN_NAME_MAX bytes
 *
 * A domain that does not exist is created for the owner's user (see
 * user.h), and counts against its max_domains_per_user until it is freed.
 *
 * Return: 0, -EINVAL for a bad name, -EBUSY while the owner holds keys
 * or once it used the fast path, -ENOSPC or -ENOMEM when the domain cannot
 * be created, -EDQUOT when the owner's user has max_domains_per_user
 * domains already (the failure is recorded and reported).
 */
int ordlock_owner_set_domain(struct ordlock_owner *owner, const char *name)
{
	struct ordlock_domain *domain;

	lockdep_assert_held(&owner->lock);
	if (ordlock_domain_name_valid(name))
		return -EINVAL;
	if (!strcmp(owner->domain->name, name))
		return 0;
	/*
	 * An owner that used the fast path stays in its domain: its owner
	 * page, its index in the domain's words and its mapping of them are
	 * the domain's (fast_dev.c), whether it holds a key now or not
	 */
	if (owner->nheld || owner->busy || READ_ONCE(owner->fast))
		return -EBUSY;
	domain = ordlock_domain_get(name, owner->user, owner->user_exempt);
	if (PTR_ERR_OR_ZERO(domain) == -EDQUOT)
		return ordlock_owner_domain_limit(owner, name);
	if (IS_ERR(domain))
		return PTR_ERR(domain);
	ordlock_gauge_dec(&owner->domain->owners);
	ordlock_domain_put(owner->domain);
	/* The spare holds are of the old domain's kind */
	ordlock_owner_free_spare(owner);
	owner->domain = domain;
	/* Constant from here on: the owner's reference keeps the domain in use */
	owner->cluster = !!READ_ONCE(domain->backend);
	ordlock_gauge_inc(&domain->owners);
	write_seqcount_begin(&owner->domain_seq);
	memcpy(owner->domain_name, domain->name, sizeof(owner->domain_name));
	write_seqcount_end(&owner->domain_seq);
	return 0;
}

/**
 * ordlock_owner_domain_name() - a consistent copy of the owner's domain name
 * @owner: the owner; its lock need not be held
 * @buf: ORDLOCK_DOMAIN_NAME_MAX bytes
 */
void ordlock_owner_domain_name(struct ordlock_owner *owner, char *buf)
{
	unsigned int seq;

	do {
		seq = read_seqcount_begin(&owner->domain_seq);
		memcpy(buf, owner->domain_name, ORDLOCK_DOMAIN_NAME_MAX);
	} while (read_seqcount_retry(&owner->domain_seq, seq));
	buf[ORDLOCK_DOMAIN_NAME_MAX - 1] = '\0';
}

/**
 * ordlock_owner_touch() - note the task making a request
 * @owner: the owner, locked
 */
void ordlock_owner_touch(struct ordlock_owner *owner)
{
	pid_t pid = task_tgid_nr(current);

	lockdep_assert_held(&owner->lock);
	WRITE_ONCE(owner->tid, task_pid_nr(current));
	WRITE_ONCE(owner->tid_start, current->start_time);
	if (likely(owner->pid == pid))
		return;
	WRITE_ONCE(owner->pid, pid);
	get_task_comm(owner->comm, current);
	ordlock_comm_sanitize(owner->comm_safe, owner->comm);
}

/**
 * ordlock_owner_lock_list() - lock the list of owners and return it
 *
 * Return: the list of struct ordlock_owner, linked by node; unlock it with
 * ordlock_owner_unlock_list(). Fields of the owners may only be read racily.
 */
struct list_head *ordlock_owner_lock_list(void)
{
	mutex_lock(&ordlock_owners_lock);
	return &ordlock_owners;
}

void ordlock_owner_unlock_list(void)
{
	mutex_unlock(&ordlock_owners_lock);
}

/**
 * ordlock_owner_get_holds() - take @n blank holds
 * @owner: the owner, locked
 * @n: how many
 * @list: an empty list; receives them, linked by owner_node
 *
 * Return: 0, or -ENOMEM (and @list is left empty).
 */
int ordlock_owner_get_holds(struct ordlock_owner *owner, unsigned int n,
			    struct list_head *list)
{
	unsigned int take = min(n, owner->nspare), i;
	struct list_head *last = &owner->spare;
	struct ordlock_hold *hold;

	lockdep_assert_held(&owner->lock);
	if (take) {
		for (i = 0; i < take; i++)
			last = last->next;
		list_cut_position(list, &owner->spare, last);
		owner->nspare -= take;
	}
	for (n -= take; n; n--) {
		hold = kmem_cache_alloc(ordlock_owner_hold_cache(owner),
					GFP_KERNEL_ACCOUNT);
		if (!hold) {
			ordlock_owner_put_holds(owner, list);
			return -ENOMEM;
		}
		/* Not waiting for the cluster: its waits end so (cluster.c) */
		hold->cluster_wait = false;
		/* No lock in a cluster: ordlock_res_drop_hold() keeps it so */
		if (owner->cluster)
			*ordlock_hold_blkp(hold) = NULL;
		list_add_tail(&hold->owner_node, list);
	}
	return 0;
}

/* ordlock_owner_put_holds() - give back unused holds; @list ends empty */
void ordlock_owner_put_holds(struct ordlock_owner *owner, struct list_head *list)
{
	unsigned int room = ORDLOCK_OWNER_SPARE_MAX - owner->nspare, n = 0;
	struct ordlock_hold *hold, *tmp;

	lockdep_assert_held(&owner->lock);
	list_for_each_entry_safe(hold, tmp, list, owner_node) {
		if (n < room) {
			n++;
			continue;
		}
		list_del(&hold->owner_node);
		kmem_cache_free(ordlock_owner_hold_cache(owner), hold);
	}
	list_splice_init(list, &owner->spare);
	owner->nspare += n;
}

/**
 * ordlock_owner_put_nholds() - ordlock_owner_put_holds() of a list of @n
 * @owner: the owner, locked
 * @list: @n unused holds; ends empty
 * @n: their number
 *
 * When they all fit among the spares, one splice without a walk.
 */
void ordlock_owner_put_nholds(struct ordlock_owner *owner, struct list_head *list,
			      unsigned int n)
{
	lockdep_assert_held(&owner->lock);
	if (owner->nspare + n > ORDLOCK_OWNER_SPARE_MAX) {
		ordlock_owner_put_holds(owner, list);
		return;
	}
	list_splice_init(list, &owner->spare);
	owner->nspare += n;
}

/**
 * ordlock_owner_insert_hold() - add a granted hold to owner->held
 * @owner: the owner, locked
 * @hold: the hold, on its resource
 *
 * Keeps owner->held sorted; appending is O(1).
 */
void ordlock_owner_insert_hold(struct ordlock_owner *owner,
			       struct ordlock_hold *hold)
{
	struct ordlock_hold *pos;
	struct ordlock_rkey key = {
		.rank = hold->res->rank,
		.id = hold->res->id,
	};

	lockdep_assert_held(&owner->lock);
	list_for_each_entry_reverse(pos, &owner->held, owner_node) {
		if (ordlock_hold_cmp(pos, &key) < 0)
			break;
	}
	list_add(&hold->owner_node, &pos->owner_node);
	owner->nheld++;
	ordlock_order_held_changed(&owner->order_cache);
}

/**
 * ordlock_owner_find_hold() - the hold of @key, if @owner holds it
 * @owner: the owner, locked
 * @key: the key (its mode is ignored)
 *
 * Return: the hold, or NULL.
 */
struct ordlock_hold *ordlock_owner_find_hold(struct ordlock_owner *owner,
					     const struct ordlock_rkey *key)
{
	struct ordlock_hold *hold;

	lockdep_assert_held(&owner->lock);
	list_for_each_entry(hold, &owner->held, owner_node) {
		int c = ordlock_hold_cmp(hold, key);

		if (!c)
			return hold;
		if (c > 0)
			break;
	}
	return NULL;
}

/**
 * ordlock_owner_drop_hold() - release one held key
 * @owner: the owner, locked
 * @hold: one of its holds; it leaves its resource
 * @done: receives @hold, blank, for ordlock_owner_put_holds()
 */
void ordlock_owner_drop_hold(struct ordlock_owner *owner,
			     struct ordlock_hold *hold, struct list_head *done)
{
	lockdep_assert_held(&owner->lock);
	ordlock_res_drop_hold(hold);
	list_move(&hold->owner_node, done);
	owner->nheld--;
	ordlock_order_held_dropped(&owner->order_cache, hold);
	ordlock_user_uncharge(owner->user, ORDLOCK_USER_KEYS, 1);
	ordlock_stat_inc(owner->domain, ORDLOCK_STAT_RELEASES);
}

/**
 * ordlock_owner_cycle_alloc() - make room for a deadlock's cycle in
 *	@owner's failure record (owner->cycle and owner->cycle_domain)
 * @owner: the victim; under ordlock_graph_lock (or its own lock)
 *
 * Deadlocks are rare: the victim's record is allocated when one is found,
 * not by every owner that waits. The record's node ids (a cycle across
 * nodes, xdetect.c) are forgotten: the caller sets them for a cycle that
 * has some.
 *
 * Return: whether there is room (without memory, the cycle is still
 * broken, only not recorded).
 */
bool ordlock_owner_cycle_alloc(struct ordlock_owner *owner)
{
	if (owner->xd)
		owner->xd->rec_n = 0;
	if (owner->cycle)
		return true;
	owner->cycle = kzalloc(ORDLOCK_CYCLE_MAX * sizeof(*owner->cycle) +
			       (ORDLOCK_CYCLE_MAX + 1) * ORDLOCK_DOMAIN_NAME_MAX,
			       GFP_ATOMIC | __GFP_NOWARN);
	if (!owner->cycle)
		return false;
	owner->cycle_domain = (void *)(owner->cycle + ORDLOCK_CYCLE_MAX);
	return true;
}

/**
 * ordlock_owner_fail() - record a failure
 * @owner: the owner, locked
 * @reason: an enum ordlock_reason
 * @err: the negative errno the request returns
 * @key: the key concerned, or NULL
 *
 * Starts a new failure record; callers add the culprit's details.
 *
 * Return: @err.
 */
int ordlock_owner_fail(struct ordlock_owner *owner, u32 reason, int err,
		       const struct ordlock_rkey *key)
{
	struct ordlock_failure *f = &owner->failure;

	lockdep_assert_held(&owner->lock);
	memset(f, 0, sizeof(*f));
	f->reason = reason;
	f->error = -err;
	f->index = ~0U;
	if (key) {
		f->index = key->index;
		f->key.rank = key->rank;
		f->key.id = key->id;
		f->key.mode = key->mode;
	}
	return err;
}
