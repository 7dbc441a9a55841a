/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Module parameters: limits, timeouts and the device mode.
 *
 * The writable ones may change at any time (root writes them under
 * /sys/module/ordlock/parameters/); readers take one READ_ONCE() snapshot
 * per request through the helpers below, which also clamp them to sane
 * values.
 */
#ifndef _ORDLOCK_PARAMS_H
#define _ORDLOCK_PARAMS_H

#include <linux/compiler.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include <linux/types.h>

/* Hard caps, whatever the parameters say */
#define ORDLOCK_HARD_MAX_KEYS		65536U
#define ORDLOCK_HARD_MAX_TIMEOUT_MS	(24U * 3600U * 1000U)

extern unsigned short ordlock_dev_mode;
extern unsigned int ordlock_hash_bits;

/*
 * The writable limits, for the inline helpers below only (the requests
 * read them on every call: a load, not a call)
 */
extern unsigned int ordlock_param_max_keys_per_request;
extern unsigned int ordlock_param_max_keys_per_owner;
extern unsigned int ordlock_param_max_resources;
extern unsigned int ordlock_param_max_domains;
extern unsigned int ordlock_param_max_owners_per_user;
extern unsigned int ordlock_param_max_keys_per_user;
extern unsigned int ordlock_param_max_waiters_per_user;
extern unsigned int ordlock_param_max_domains_per_user;
extern unsigned int ordlock_param_order_max_edges_per_user;

static inline unsigned int ordlock_max_keys_per_request(void)
{
	return clamp(READ_ONCE(ordlock_param_max_keys_per_request), 1U,
		     ORDLOCK_HARD_MAX_KEYS);
}

static inline unsigned int ordlock_max_keys_per_owner(void)
{
	return max(READ_ONCE(ordlock_param_max_keys_per_owner), 1U);
}

static inline unsigned int ordlock_max_resources(void)
{
	return max(READ_ONCE(ordlock_param_max_resources), 1U);
}

static inline unsigned int ordlock_max_domains(void)
{
	return max(READ_ONCE(ordlock_param_max_domains), 1U);
}

/*
 * The per-user limits; 0 refuses everything (an admin can lock users out
 * without unloading the module).
 */
static inline unsigned int ordlock_max_owners_per_user(void)
{
	return READ_ONCE(ordlock_param_max_owners_per_user);
}

static inline unsigned int ordlock_max_keys_per_user(void)
{
	return READ_ONCE(ordlock_param_max_keys_per_user);
}

static inline unsigned int ordlock_max_waiters_per_user(void)
{
	return READ_ONCE(ordlock_param_max_waiters_per_user);
}

static inline unsigned int ordlock_max_domains_per_user(void)
{
	return READ_ONCE(ordlock_param_max_domains_per_user);
}

/* Edges of learned orders (all domains) one user may have taught at once */
static inline unsigned int ordlock_order_max_edges_per_user(void)
{
	return READ_ONCE(ordlock_param_order_max_edges_per_user);
}

extern unsigned int ordlock_param_handoff_us;
extern unsigned int ordlock_param_spin_us;

/*
 * The most times a waiter older than handoff_us may be passed (resource.c,
 * the fairness rule; the UAPI header's "Fairness" says 64)
 */
#define ORDLOCK_MAX_PASSES	64

/* How long a waiter may be passed (resource.c): see handoff_us */
static inline u64 ordlock_handoff_ns(void)
{
	return (u64)READ_ONCE(ordlock_param_handoff_us) * NSEC_PER_USEC;
}

/* How long a waiter spins before it sleeps (wait.c): at most 10 ms */
static inline u64 ordlock_spin_ns(void)
{
	return (u64)min(READ_ONCE(ordlock_param_spin_us), 10000U) * NSEC_PER_USEC;
}

unsigned int ordlock_max_keys_per_release(void);
u64 ordlock_timeout_ns(u64 requested_ns);
u32 ordlock_default_policy(void);
extern unsigned int ordlock_deadlock_history;

#endif /* _ORDLOCK_PARAMS_H */
