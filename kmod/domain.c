// SPDX-License-Identifier: GPL-2.0
/*
 * Domains: created on first use by name, freed with their last owner. The
 * default domain, and any domain an admin configured, live until unload.
 * Every domain but the default one counts against the user it was created
 * for (max_domains_per_user, user.h) until it is freed.
 */
#include <linux/capability.h>
#include <linux/log2.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "cluster.h"
#include "fastpath.h"
#include "domain.h"
#include "order.h"
#include "keys.h"
#include "params.h"
#include "user.h"

/*
 * ordlock_domains_lock protects ordlock_domains, ordlock_ndomains,
 * ordlock_domain_ids and the settings of every domain. It nests inside
 * owner->lock and takes no other lock: the reference a freed domain holds
 * to its creator is dropped after it (ordlock_domain_free()). See the lock
 * order in main.c.
 */
static DEFINE_MUTEX(ordlock_domains_lock);
static LIST_HEAD(ordlock_domains);
static unsigned int ordlock_ndomains;
static u32 ordlock_domain_ids;
/*
 * The highest fencing token a freed domain handed out, so that a domain
 * created again under the same name never hands out a token at or below
 * one it gave before, even when the clock steps back; under
 * ordlock_domains_lock.
 */
static u64 ordlock_token_floor;
static struct ordlock_domain *ordlock_default_domain;

static const char * const ordlock_policy_names[] = {
	[ORDLOCK_POLICY_ENFORCE] = "enforce",
	[ORDLOCK_POLICY_DETECT] = "detect",
	[ORDLOCK_POLICY_TIMEOUT] = "timeout",
};

/* ordlock_domain_policy_name() - "enforce", "detect", "timeout", "unknown" */
const char *ordlock_domain_policy_name(u32 policy)
{
	if (policy < ARRAY_SIZE(ordlock_policy_names))
		return ordlock_policy_names[policy];
	return "unknown";
}

/*
 * The first fencing token of a new domain, less one: the wall clock in
 * microseconds since the epoch (below 2^53 until the year 2255, so that
 * JSON readers keep every digit), and at least every token a freed domain
 * handed out.  A domain that averages fewer grants than one a microsecond
 * keeps its tokens below the clock, so a domain created again after a
 * module reload starts above every token the earlier one handed out
 * (provided the wall clock did not step back); within one load of the
 * module, ordlock_token_floor guarantees it whatever the clock does.
 */
static u64 ordlock_token_seed(void)
{
	lockdep_assert_held(&ordlock_domains_lock);
	return max_t(u64, ktime_to_us(ktime_get_real()), ordlock_token_floor);
}

static struct ordlock_domain *ordlock_domain_find(const char *name)
{
	struct ordlock_domain *domain;

	lockdep_assert_held(&ordlock_domains_lock);
	list_for_each_entry(domain, &ordlock_domains, node)
		if (!strcmp(domain->name, name))
			return domain;
	return NULL;
}

/*
 * The domain @name with a new reference, created when needed for @user
 * (NULL: charged to nobody), which is then charged one domain unless
 * @exempt. Return: the domain, or ERR_PTR(-ENOSPC, -EDQUOT or -ENOMEM).
 */
static struct ordlock_domain *
ordlock_domain_find_or_create(const char *name, struct ordlock_user *user,
			      bool exempt)
{
	struct ordlock_domain *domain;
	int ret;

	lockdep_assert_held(&ordlock_domains_lock);
	domain = ordlock_domain_find(name);
	if (domain) {
		kref_get(&domain->ref);
		return domain;
	}
	if (ordlock_ndomains >= ordlock_max_domains())
		return ERR_PTR(-ENOSPC);
	if (user) {
		ret = ordlock_user_charge(user, ORDLOCK_USER_DOMAINS, 1, exempt);
		if (ret)
			return ERR_PTR(ret);
	}
	ret = -ENOMEM;
	domain = kzalloc(sizeof(*domain), GFP_KERNEL_ACCOUNT);
	if (!domain)
		goto err_uncharge;
	domain->stats = alloc_percpu_gfp(struct ordlock_stats, GFP_KERNEL_ACCOUNT);
	if (!domain->stats)
		goto err_free;
	kref_init(&domain->ref);
	/* Uncharged and put in ordlock_domain_free() */
	domain->creator = user ? ordlock_user_hold(user) : NULL;
	domain->id = ++ordlock_domain_ids;
	get_random_bytes(&domain->hash_key, sizeof(domain->hash_key));
	atomic64_set(&domain->next_token, ordlock_token_seed());
	domain->policy = ordlock_default_policy();
	strscpy(domain->name, name, sizeof(domain->name));
	list_add_tail(&domain->node, &ordlock_domains);
	ordlock_ndomains++;
	return domain;

err_free:
	kfree(domain);
err_uncharge:
	if (user)
		ordlock_user_uncharge(user, ORDLOCK_USER_DOMAINS, 1);
	return ERR_PTR(ret);
}

/**
 * ordlock_domain_get() - find or create a domain and take a reference
 * @name: a valid name (see ordlock_domain_name_valid())
 * @user: the user a new domain is created for, or NULL for nobody
 * @exempt: @user's limit does not apply (the domain is counted all the same)
 *
 * Joining an existing domain charges nothing; creating one charges @user
 * one domain until the domain is freed.
 *
 * Return: the domain, ERR_PTR(-ENOSPC) when max_domains exist already,
 * ERR_PTR(-EDQUOT) when @user has max_domains_per_user domains already, or
 * ERR_PTR(-ENOMEM).
 */
struct ordlock_domain *ordlock_domain_get(const char *name,
					  struct ordlock_user *user, bool exempt)
{
	struct ordlock_domain *domain;

	mutex_lock(&ordlock_domains_lock);
	domain = ordlock_domain_find_or_create(name, user, exempt);
	mutex_unlock(&ordlock_domains_lock);
	return domain;
}

/* ordlock_domain_get_default() - a new reference to the default domain */
struct ordlock_domain *ordlock_domain_get_default(void)
{
	kref_get(&ordlock_default_domain->ref);
	return ordlock_default_domain;
}

/* Called with ordlock_domains_lock held, which it releases */
static void ordlock_domain_free(struct kref *ref)
{
	struct ordlock_domain *domain = container_of(ref, struct ordlock_domain, ref);
	struct ordlock_user *creator = domain->creator;

	lockdep_assert_held(&ordlock_domains_lock);
	ordlock_token_floor = max_t(u64, ordlock_token_floor,
				    atomic64_read(&domain->next_token));
	list_del(&domain->node);
	ordlock_ndomains--;
	mutex_unlock(&ordlock_domains_lock);
	/*
	 * The last owner is gone: its releases are on their way. A leave by
	 * force (the DLM did not answer within the backend's bound) is logged
	 * by the backend; the domain goes all the same.
	 */
	if (domain->space)
		ordlock_cluster_leave(domain->backend, domain->space);
	free_percpu(domain->stats);
	ordlock_fast_domain_free(domain);
	ordlock_order_free(domain);
	kfree(domain->rank_names);
	kfree(domain);
	/* After ordlock_domains_lock: the last put takes ordlock_users_lock */
	if (creator) {
		ordlock_user_uncharge(creator, ORDLOCK_USER_DOMAINS, 1);
		ordlock_user_put(creator);
	}
}

/* ordlock_domain_put() - drop a reference; the last one frees the domain */
void ordlock_domain_put(struct ordlock_domain *domain)
{
	kref_put_mutex(&domain->ref, ordlock_domain_free, &ordlock_domains_lock);
}

/*
 * Whether an owner is in @domain, or anyone but the caller of
 * ordlock_domain_configure() (one reference) holds it: every owner holds a
 * reference, and takes it under ordlock_domains_lock (but in the default
 * domain, which is never a cluster domain). A domain without owners has
 * no holders and no waiters.
 */
static bool ordlock_domain_in_use(struct ordlock_domain *domain)
{
	lockdep_assert_held(&ordlock_domains_lock);
	return kref_read(&domain->ref) > 1 + domain->pinned;
}

/* Why a cluster change was refused (extack, kernel log) */
static const char ordlock_why_owners[] =
	"the domain has owners (holders, waiters or idle ones): change it when nobody is in it";
static const char ordlock_why_forced[] =
	"cluster off, but the DLM did not answer: its lockspace was left by force (kernel log)";
/*
 * The checks of a cluster change that hold whatever the join does: the
 * result of @set on @domain, whose lock is held. Return: 0 or an errno,
 * with set->why.
 */
static int ordlock_domain_cluster_check(struct ordlock_domain *domain,
					struct ordlock_domain_settings *set)
{
	bool cluster = set->flags & ORDLOCK_DOMAIN_SET_CLUSTER ? set->cluster :
		       !!domain->backend;

	lockdep_assert_held(&ordlock_domains_lock);
	if (!(set->flags & ORDLOCK_DOMAIN_SET_CLUSTER) || cluster == !!domain->backend)
		return 0;
	if (domain == ordlock_default_domain) {
		set->why = "the default domain cannot be a cluster domain";
		return -EINVAL;
	}
	if (domain->cluster_changing) {
		set->why = "another change of the domain's cluster setting is in progress";
		return -EBUSY;
	}
	if (ordlock_domain_in_use(domain)) {
		set->why = ordlock_why_owners;
		return -EBUSY;
	}
	return 0;
}

/*
 * The checks of a fast-path change (or of a cluster change, which cannot
 * have it): the result of @set on @domain, whose lock is held. The setting
 * changes only while nobody is in the domain, so that no owner has its
 * fast state meanwhile. Return: 0 or an errno, with set->why.
 */
static int ordlock_domain_fast_check(struct ordlock_domain *domain,
				     struct ordlock_domain_settings *set)
{
	bool cluster = set->flags & ORDLOCK_DOMAIN_SET_CLUSTER ? set->cluster :
		       !!domain->backend;
	bool fast = set->flags & ORDLOCK_DOMAIN_SET_FASTPATH ? set->fastpath :
		    domain->fastpath;

	lockdep_assert_held(&ordlock_domains_lock);
	if (cluster && fast) {
		set->why = "the fast path is not available in a cluster domain";
		return -EOPNOTSUPP;
	}
	if (!(set->flags & ORDLOCK_DOMAIN_SET_FASTPATH))
		return 0;
	if (domain == ordlock_default_domain) {
		set->why = "the default domain cannot have the fast path";
		return -EINVAL;
	}
	if (fast == domain->fastpath &&
	    (!fast || uid_eq(set->fast_uid, domain->fast_uid)))
		return 0;
	if (ordlock_domain_in_use(domain)) {
		set->why = ordlock_why_owners;
		return -EBUSY;
	}
	return 0;
}

/*
 * Join the cluster for @domain (set->cluster 1, the domain not a cluster
 * domain yet): ordlock_domains_lock is held on entry and on return, and
 * dropped meanwhile; the domain is marked changing so that no other change
 * of the setting runs at the same time. Return: 0 with the backend and its
 * space, or an errno with set->why.
 */
static int ordlock_domain_join(struct ordlock_domain *domain,
			       struct ordlock_domain_settings *set,
			       struct ordlock_backend **backendp,
			       struct ordlock_backend_space **spacep)
	__must_hold(&ordlock_domains_lock)
{
	int ret;

	lockdep_assert_held(&ordlock_domains_lock);
	domain->cluster_changing = true;
	mutex_unlock(&ordlock_domains_lock);
	/* No lock of ordlock held: loading the module and joining may sleep long */
	ret = ordlock_cluster_join(domain->name, &set->why, backendp, spacep);
	mutex_lock(&ordlock_domains_lock);
	domain->cluster_changing = false;
	return ret;
}

/**
 * ordlock_domain_configure() - read or change the settings of a domain
 * @name: a valid domain name; the domain is created if needed
 * @set: what to change (see struct ordlock_domain_settings); set->why
 *	receives the reason of a refusal
 * @user: the user a new domain is created for (see ordlock_domain_get())
 * @exempt: @user's limit does not apply
 * @out: receives the domain, with a reference the caller drops
 *
 * The caller checks the privileges, and holds no lock of this module:
 * turning the cluster setting on loads the backend and joins the domain's
 * space in the cluster, turning it off leaves it. A domain that was
 * changed lives until the module is unloaded, and stays charged to the
 * user it was created for. A call that fails changes nothing.
 *
 * Return: 0, -EINVAL for an unknown policy, a cluster setting other than 0
 * or 1 or the default domain made a cluster domain, -EEXIST when a rank or
 * a name appears twice in @names, -EOPNOTSUPP for the fast path in a
 * cluster domain, -EBUSY for a cluster change of a domain with owners,
 * -ENOPKG (no backend), -ENOTCONN (no cluster) or -EIO (the join failed),
 * -ENOSPC, -EDQUOT or -ENOMEM; or, turning the cluster setting off, the
 * one failure that changes something: -ETIMEDOUT (the DLM did not let the
 * lockspace go within the backend's bound) or -EINTR (a fatal signal
 * came meanwhile): the change is made all the same (the domain is a local
 * one), the lockspace was left by force, and set->why says so.
 */
int ordlock_domain_configure(const char *name,
			     struct ordlock_domain_settings *set,
			     struct ordlock_user *user,
			     bool exempt, struct ordlock_domain **out)
{
	struct ordlock_backend_space *space = NULL, *old_space = NULL;
	struct ordlock_backend *backend = NULL, *old_backend = NULL;
	struct ordlock_rank_name *copy = NULL;
	const struct ordlock_rank_name *names = set->names;
	unsigned int nnames = set->nnames, i, j;
	struct ordlock_domain *domain;
	u32 flags = set->flags;
	int ret;

	set->why = NULL;
	if ((flags & ORDLOCK_DOMAIN_SET_POLICY) && set->policy > ORDLOCK_POLICY_TIMEOUT)
		return -EINVAL;
	if ((flags & ORDLOCK_DOMAIN_SET_CLUSTER) && set->cluster > 1)
		return -EINVAL;
	if ((flags & ORDLOCK_DOMAIN_SET_FASTPATH) && set->fastpath > 1)
		return -EINVAL;
	if (flags & ORDLOCK_DOMAIN_SET_RANK_NAMES) {
		for (i = 0; i < nnames; i++)
			for (j = 0; j < i; j++)
				if (names[i].rank == names[j].rank ||
				    !strcmp(names[i].name, names[j].name))
					return -EEXIST;
		if (nnames) {
			copy = kmemdup(names, nnames * sizeof(*names), GFP_KERNEL_ACCOUNT);
			if (!copy)
				return -ENOMEM;
		}
	}
	mutex_lock(&ordlock_domains_lock);
	domain = ordlock_domain_find_or_create(name, user, exempt);
	if (IS_ERR(domain)) {
		mutex_unlock(&ordlock_domains_lock);
		kfree(copy);
		return PTR_ERR(domain);
	}
	ret = ordlock_domain_cluster_check(domain, set);
	if (!ret)
		ret = ordlock_domain_fast_check(domain, set);
	if (!ret && (flags & ORDLOCK_DOMAIN_SET_CLUSTER) && set->cluster &&
	    !domain->backend) {
		ret = ordlock_domain_join(domain, set, &backend, &space);
		/* What may have changed while the lock was dropped */
		if (!ret)
			ret = ordlock_domain_cluster_check(domain, set);
		if (!ret)
			ret = ordlock_domain_fast_check(domain, set);
		if (ret) {
			/* Left below, with no lock held */
			old_backend = backend;
			old_space = space;
			backend = NULL;
		}
	}
	if (ret) {
		mutex_unlock(&ordlock_domains_lock);
		goto fail;
	}
	if ((flags & ORDLOCK_DOMAIN_SET_CLUSTER) &&
	    set->cluster != !!domain->backend) {
		/* Nobody is in the domain: no request or release reads these */
		old_backend = domain->backend;
		old_space = domain->space;
		WRITE_ONCE(domain->space, space);
		WRITE_ONCE(domain->backend, backend);
	}
	if (flags & ORDLOCK_DOMAIN_SET_POLICY)
		WRITE_ONCE(domain->policy, set->policy);
	if (flags & ORDLOCK_DOMAIN_SET_FASTPATH) {
		/* Nobody is in the domain (ordlock_domain_fast_check()) */
		domain->fast_uid = set->fast_uid;
		WRITE_ONCE(domain->fastpath, !!set->fastpath);
	}
	if (flags & ORDLOCK_DOMAIN_SET_DETECT_DELAY)
		WRITE_ONCE(domain->detect_delay_ms, set->detect_delay_ms);
	if (flags & ORDLOCK_DOMAIN_SET_STRICT)
		WRITE_ONCE(domain->strict, !!(flags & ORDLOCK_DOMAIN_STRICT_ON));
	if (flags & ORDLOCK_DOMAIN_SET_MAX_HOLD)
		WRITE_ONCE(domain->max_hold_ms, set->max_hold_ms);
	if (flags & ORDLOCK_DOMAIN_SET_RANK_NAMES) {
		swap(domain->rank_names, copy);
		domain->nrank_names = nnames;
	}
	if ((flags & ~ORDLOCK_DOMAIN_STRICT_ON) && !domain->pinned) {
		domain->pinned = true;
		kref_get(&domain->ref);
	}
	mutex_unlock(&ordlock_domains_lock);
	kfree(copy);
	if (old_space)
		ret = ordlock_cluster_leave(old_backend, old_space);
	/* Turned off with nobody in it: the pinned keys are let go */
	if ((flags & ORDLOCK_DOMAIN_SET_FASTPATH) && !set->fastpath)
		ordlock_fast_domain_free(domain);
	if (flags & ORDLOCK_DOMAIN_RESET_ORDER)
		ordlock_order_reset(domain);
	/* After the reset: the fast path's pairs known are forgotten */
	if (flags & (ORDLOCK_DOMAIN_SET_POLICY | ORDLOCK_DOMAIN_RESET_ORDER))
		ordlock_fast_edges_reset(domain);
	if (ret) {
		/*
		 * The one failure that changes something: the cluster setting
		 * is off (the domain is local, consistent, usable), but the
		 * backend left the DLM lockspace by force (its log says what
		 * it abandoned)
		 */
		set->why = ordlock_why_forced;
		ordlock_domain_put(domain);
		return ret;
	}
	*out = domain;
	return 0;

fail:
	kfree(copy);
	if (old_space)
		ordlock_cluster_leave(old_backend, old_space);
	ordlock_domain_put(domain);
	return ret;
}

/**
 * ordlock_domain_configure_admin() - ordlock_domain_configure() where the
 *	caller needs CAP_SYS_ADMIN to change anything (the ioctl)
 * @name: a valid domain name
 * @set: as for ordlock_domain_configure(), without rank names
 * @user: the user a new domain is created for (see ordlock_domain_get())
 * @exempt: @user's limit does not apply
 * @out: receives the domain, with a reference the caller drops
 *
 * Return: as ordlock_domain_configure(), or -EPERM when changing without
 * CAP_SYS_ADMIN.
 */
int ordlock_domain_configure_admin(const char *name,
				   struct ordlock_domain_settings *set,
				   struct ordlock_user *user,
				   bool exempt, struct ordlock_domain **out)
{
	set->why = NULL;
	if ((set->flags & ORDLOCK_DOMAIN_SET_POLICY) &&
	    set->policy > ORDLOCK_POLICY_TIMEOUT)
		return -EINVAL;
	if ((set->flags & ORDLOCK_DOMAIN_SET_CLUSTER) && set->cluster > 1)
		return -EINVAL;
	if ((set->flags & ~ORDLOCK_DOMAIN_STRICT_ON) && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	set->names = NULL;
	set->nnames = 0;
	return ordlock_domain_configure(name, set, user, exempt, out);
}

/**
 * ordlock_domain_find_get() - find a domain without creating it
 * @name: the name
 *
 * Return: the domain with a reference, or NULL.
 */
struct ordlock_domain *ordlock_domain_find_get(const char *name)
{
	struct ordlock_domain *domain;

	mutex_lock(&ordlock_domains_lock);
	domain = ordlock_domain_find(name);
	if (domain)
		kref_get(&domain->ref);
	mutex_unlock(&ordlock_domains_lock);
	return domain;
}

/**
 * ordlock_domain_rank_names() - copy the rank names of @domain
 * @domain: the domain
 * @names: room for @max names
 * @max: how many fit
 *
 * Return: the number of names copied.
 */
unsigned int ordlock_domain_rank_names(struct ordlock_domain *domain,
				       struct ordlock_rank_name *names,
				       unsigned int max)
{
	unsigned int n;

	mutex_lock(&ordlock_domains_lock);
	n = min(domain->nrank_names, max);
	if (n)
		memcpy(names, domain->rank_names, n * sizeof(*names));
	mutex_unlock(&ordlock_domains_lock);
	return n;
}

/**
 * ordlock_domain_stats() - add up the per-CPU counters of @domain
 * @domain: the domain
 * @sum: receives the sums
 */
void ordlock_domain_stats(struct ordlock_domain *domain,
			  struct ordlock_stats *sum)
{
	unsigned int i;
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct ordlock_stats *s = per_cpu_ptr(domain->stats, cpu);

		for (i = 0; i < ORDLOCK_STAT_NR; i++)
			sum->count[i] += READ_ONCE(s->count[i]);
		for (i = 0; i < ORDLOCK_WAIT_HIST; i++)
			sum->wait_hist[i] += READ_ONCE(s->wait_hist[i]);
	}
}

/**
 * ordlock_stat_wait() - count a wait of @wait_ns in the histogram
 * @domain: the domain
 * @wait_ns: how long the wait lasted
 */
void ordlock_stat_wait(struct ordlock_domain *domain, u64 wait_ns)
{
	u64 us = div_u64(wait_ns, NSEC_PER_USEC);
	unsigned int bucket = us ? ilog2(us) + 1 : 0;

	this_cpu_inc(domain->stats->wait_hist[min_t(unsigned int, bucket,
						    ORDLOCK_WAIT_HIST - 1)]);
}

/**
 * ordlock_domain_lock_list() - lock the list of domains and return it
 *
 * Return: the list of struct ordlock_domain, linked by node. Unlock it with
 * ordlock_domain_unlock_list().
 */
struct list_head *ordlock_domain_lock_list(void)
{
	mutex_lock(&ordlock_domains_lock);
	return &ordlock_domains;
}

void ordlock_domain_unlock_list(void)
{
	mutex_unlock(&ordlock_domains_lock);
}

int ordlock_domain_init(void)
{
	/* Nobody's: the default domain is never created on anyone's behalf */
	struct ordlock_domain *domain = ordlock_domain_get(ORDLOCK_DEFAULT_DOMAIN,
							   NULL, false);

	if (IS_ERR(domain))
		return PTR_ERR(domain);
	ordlock_default_domain = domain;
	return 0;
}

/* ordlock_domain_exit() - free the domains; before ordlock_user_exit() */
void ordlock_domain_exit(void)
{
	struct ordlock_domain *domain, *tmp;

	/* Only the references of pinned domains remain */
	mutex_lock(&ordlock_domains_lock);
	list_for_each_entry_safe(domain, tmp, &ordlock_domains, node) {
		if (domain->pinned) {
			domain->pinned = false;
			if (kref_put(&domain->ref, ordlock_domain_free))
				mutex_lock(&ordlock_domains_lock);
		}
	}
	mutex_unlock(&ordlock_domains_lock);
	ordlock_domain_put(ordlock_default_domain);
	ordlock_default_domain = NULL;
	WARN_ON(!list_empty(&ordlock_domains));
}
