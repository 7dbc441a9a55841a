/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Domains: named lock namespaces. Keys of different domains never contend.
 */
#ifndef _ORDLOCK_DOMAIN_H
#define _ORDLOCK_DOMAIN_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/ordlock.h>

struct ordlock_backend;
struct ordlock_backend_space;
struct ordlock_order;
struct ordlock_user;

/**
 * enum ordlock_stat - event counters of a domain
 * @ORDLOCK_STAT_ACQUIRES: successful acquires
 * @ORDLOCK_STAT_CONTENDED: acquires that had to wait for at least one key
 * @ORDLOCK_STAT_TIMEOUTS: requests that timed out
 * @ORDLOCK_STAT_TRY_FAILURES: try requests that found a key busy
 * @ORDLOCK_STAT_ORDER_VIOLATIONS: requests refused by the order rule
 * @ORDLOCK_STAT_DEADLOCKS: cycles detected (victims)
 * @ORDLOCK_STAT_UPGRADE_DEADLOCKS: conversions refused as upgrade deadlocks
 * @ORDLOCK_STAT_CONVERSIONS: successful conversions
 * @ORDLOCK_STAT_SIGNALS: waits interrupted by a signal
 * @ORDLOCK_STAT_LIMITS: requests refused by a limit
 * @ORDLOCK_STAT_RELEASES: keys released
 * @ORDLOCK_STAT_REVOCATIONS: leases revoked
 * @ORDLOCK_STAT_XD_ROUNDS: XD_CHECK queries (nl_xdetect.c)
 * @ORDLOCK_STAT_XD_VICTIMS: waits failed by XD_FAIL
 * @ORDLOCK_STAT_XD_STALE: XD_CHECK answers "not live" and XD_FAILs refused
 *	as stale
 * @ORDLOCK_STAT_NR: number of counters
 */
enum ordlock_stat {
	ORDLOCK_STAT_ACQUIRES,
	ORDLOCK_STAT_CONTENDED,
	ORDLOCK_STAT_TIMEOUTS,
	ORDLOCK_STAT_TRY_FAILURES,
	ORDLOCK_STAT_ORDER_VIOLATIONS,
	ORDLOCK_STAT_DEADLOCKS,
	ORDLOCK_STAT_UPGRADE_DEADLOCKS,
	ORDLOCK_STAT_CONVERSIONS,
	ORDLOCK_STAT_SIGNALS,
	ORDLOCK_STAT_LIMITS,
	ORDLOCK_STAT_RELEASES,
	ORDLOCK_STAT_REVOCATIONS,
	ORDLOCK_STAT_XD_ROUNDS,
	ORDLOCK_STAT_XD_VICTIMS,
	ORDLOCK_STAT_XD_STALE,
	ORDLOCK_STAT_NR,
};

/* Wait-time histogram: bucket i counts waits below 2^i microseconds */
#define ORDLOCK_WAIT_HIST 24

/**
 * struct ordlock_stats - per-CPU counters of a domain
 * @count: event counters, indexed by enum ordlock_stat
 * @wait_hist: wait times, bucket i for waits below 2^i us (the last one
 *	takes all longer waits)
 */
struct ordlock_stats {
	u64 count[ORDLOCK_STAT_NR];
	u64 wait_hist[ORDLOCK_WAIT_HIST];
};

/**
 * struct ordlock_gauge - a current value and its peak
 * @cur: the current value
 * @peak: the highest value seen
 */
struct ordlock_gauge {
	atomic_t cur;
	atomic_t peak;
};

/**
 * struct ordlock_rank_name - a name for a rank of a domain
 * @rank: the rank
 * @name: its name, NUL-terminated
 */
struct ordlock_rank_name {
	u32 rank;
	char name[ORDLOCK_RANK_NAME_MAX];
};

/* Kernel-internal flag of ordlock_domain_configure(): set the rank names */
#define ORDLOCK_DOMAIN_SET_RANK_NAMES	BIT(31)
/*
 * Kernel-internal flag of ordlock_domain_configure(): with
 * ORDLOCK_DOMAIN_SET_STRICT, the new value of strict is 1 (0 without it)
 */
#define ORDLOCK_DOMAIN_STRICT_ON	BIT(30)

/**
 * struct ordlock_domain - a lock namespace
 * @node: entry in the list of domains, under ordlock_domains_lock
 * @ref: one reference per owner in the domain, one for the default domain
 *	and one for a configured domain, which live until unload
 * @id: unique number, part of every resource's key (never reused while
 *	the module is loaded)
 * @hash_key: the secret key of the hash of the domain's keys (table.c),
 *	random, chosen when the domain is made; constant
 * @creator: the user the domain was created for, charged one
 *	ORDLOCK_USER_DOMAINS until the domain is freed; one reference held;
 *	NULL for the default domain; constant
 * @next_token: the last fencing token handed out (at creation, a seed
 *	above every token an earlier domain of the name handed out: see
 *	ordlock_token_seed()); atomic, no lock
 * @policy: an enum ordlock_policy; READ_ONCE(), written under
 *	ordlock_domains_lock
 * @detect_delay_ms: see struct ordlock_domain_config; like @policy
 * @strict: strict ranks (struct ordlock_domain_config); like @policy
 * @max_hold_ms: see struct ordlock_domain_config; like @policy
 * @pinned: configured by an admin; under ordlock_domains_lock
 * @rank_names: names of ranks, or NULL; under ordlock_domains_lock
 * @nrank_names: number of entries in @rank_names
 * @owners: owners in the domain
 * @resources: resources of the domain
 * @waiters: owners waiting in the domain
 * @stats: per-CPU counters
 * @order: the lock order learned in the domain (order.c), created on first
 *	need with cmpxchg(), freed with the domain; NULL before
 * @backend: the cluster backend of a cluster domain (pinned), NULL for a
 *	domain of this host. Written under ordlock_domains_lock, and only
 *	while no owner is in the domain (ordlock_domain_in_use()): constant
 *	for as long as an owner is in it, so that requests and releases read
 *	it (READ_ONCE()) without a lock
 * @space: the backend's space of the domain (its DLM lockspace); like
 *	@backend
 * @cluster_changing: a change of @backend is under way (the join runs
 *	with no lock held); under ordlock_domains_lock
 * @fastpath: the domain has the fast path (fastpath.h); written under
 *	ordlock_domains_lock while nobody is in the domain, read with
 *	READ_ONCE()
 * @fast_uid: the only user whose owners may use the fast path; like
 *	@fastpath
 * @name: NUL-terminated name
 */
struct ordlock_domain {
	struct list_head node;
	struct kref ref;
	u32 id;
	hsiphash_key_t hash_key;
	struct ordlock_user *creator;
	atomic64_t next_token;
	u32 policy;
	u32 detect_delay_ms;
	u32 strict;
	u32 max_hold_ms;
	bool pinned;
	struct ordlock_rank_name *rank_names;
	unsigned int nrank_names;
	struct ordlock_gauge owners;
	struct ordlock_gauge resources;
	struct ordlock_gauge waiters;
	struct ordlock_stats __percpu *stats;
	struct ordlock_order *order;
	struct ordlock_backend *backend;
	struct ordlock_backend_space *space;
	bool cluster_changing;
	bool fastpath;
	kuid_t fast_uid;
	char name[ORDLOCK_DOMAIN_NAME_MAX];
};

int ordlock_domain_init(void);
void ordlock_domain_exit(void);
struct ordlock_domain *ordlock_domain_get(const char *name,
					  struct ordlock_user *user, bool exempt);
struct ordlock_domain *ordlock_domain_get_default(void);
void ordlock_domain_put(struct ordlock_domain *domain);
/**
 * struct ordlock_domain_settings - what ordlock_domain_configure() changes
 * @flags: ORDLOCK_DOMAIN_SET_* bits (ORDLOCK_DOMAIN_SET_STRICT with
 *	ORDLOCK_DOMAIN_STRICT_ON or without it for the new strict setting),
 *	and ORDLOCK_DOMAIN_RESET_ORDER to forget the learned lock order
 * @policy: the new policy, with ORDLOCK_DOMAIN_SET_POLICY
 * @detect_delay_ms: the new delay, with ORDLOCK_DOMAIN_SET_DETECT_DELAY
 * @max_hold_ms: the new longest lease, with ORDLOCK_DOMAIN_SET_MAX_HOLD
 * @cluster: 1 or 0, with ORDLOCK_DOMAIN_SET_CLUSTER
 * @fastpath: 1 or 0, with ORDLOCK_DOMAIN_SET_FASTPATH
 * @fast_uid: the user of the fast path, with ORDLOCK_DOMAIN_SET_FASTPATH
 * @names: the new rank names, with ORDLOCK_DOMAIN_SET_RANK_NAMES
 * @nnames: their number
 * @why: receives a message saying why a change was refused (for extack
 *	and the kernel log), or stays NULL
 */
struct ordlock_domain_settings {
	u32 flags;
	u32 policy;
	u32 detect_delay_ms;
	u32 max_hold_ms;
	u32 cluster;
	u32 fastpath;
	kuid_t fast_uid;
	const struct ordlock_rank_name *names;
	unsigned int nnames;
	const char *why;
};

int ordlock_domain_configure_admin(const char *name,
				   struct ordlock_domain_settings *set,
				   struct ordlock_user *user,
				   bool exempt, struct ordlock_domain **out);
int ordlock_domain_configure(const char *name,
			     struct ordlock_domain_settings *set,
			     struct ordlock_user *user,
			     bool exempt, struct ordlock_domain **out);
struct ordlock_domain *ordlock_domain_find_get(const char *name);
unsigned int ordlock_domain_rank_names(struct ordlock_domain *domain,
				       struct ordlock_rank_name *names,
				       unsigned int max);
void ordlock_domain_stats(struct ordlock_domain *domain,
			  struct ordlock_stats *sum);
const char *ordlock_domain_policy_name(u32 policy);

/* Walk the domains, for debugfs: ordlock_domain_lock_list() then the list */
struct list_head *ordlock_domain_lock_list(void);
void ordlock_domain_unlock_list(void);

/**
 * ordlock_domain_mint_token() - a fresh fencing token of @domain: the one
 *	place tokens are made (request.c's grants call it, and nothing else)
 * @domain: the domain
 * @floor: a value the token must be above (a cluster key's fencing value,
 *	cluster.c), or 0
 *
 * Tokens never go backwards: the counter starts above every token of an
 * earlier domain (ordlock_token_seed()), is raised to @floor only by a
 * compare-and-swap from below it, never lowered, and each token is an
 * increment of it. Inline: with a constant @floor of 0 it is one atomic
 * add.
 *
 * Return: the token.
 */
static inline u64 ordlock_domain_mint_token(struct ordlock_domain *domain,
					    u64 floor)
{
	s64 cur;

	if (floor) {
		cur = atomic64_read(&domain->next_token);
		while ((u64)cur < floor &&
		       !atomic64_try_cmpxchg(&domain->next_token, &cur, floor))
			;
	}
	return atomic64_inc_return(&domain->next_token);
}

static inline void ordlock_stat_inc(struct ordlock_domain *domain,
				    enum ordlock_stat stat)
{
	this_cpu_inc(domain->stats->count[stat]);
}

static inline void ordlock_stat_add(struct ordlock_domain *domain,
				    enum ordlock_stat stat, unsigned int n)
{
	this_cpu_add(domain->stats->count[stat], n);
}

void ordlock_stat_wait(struct ordlock_domain *domain, u64 wait_ns);

static inline void ordlock_gauge_inc(struct ordlock_gauge *g)
{
	int cur = atomic_inc_return(&g->cur);
	int peak = atomic_read(&g->peak);

	while (cur > peak && !atomic_try_cmpxchg(&g->peak, &peak, cur))
		;
}

static inline void ordlock_gauge_dec(struct ordlock_gauge *g)
{
	atomic_dec(&g->cur);
}

#endif /* _ORDLOCK_DOMAIN_H */
