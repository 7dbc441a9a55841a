// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters.
 */
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/time64.h>
#include <linux/ordlock.h>

#include "params.h"

unsigned short ordlock_dev_mode = 0660;
module_param_named(dev_mode, ordlock_dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode, "Mode of /dev/ordlock (default 0660)");

unsigned int ordlock_hash_bits = 16;
module_param_named(hash_bits, ordlock_hash_bits, uint, 0444);
MODULE_PARM_DESC(hash_bits, "log2 of the resource hash table size, 8 to 24 (default 16)");

unsigned int ordlock_param_max_keys_per_request = 1024;
module_param_named(max_keys_per_request, ordlock_param_max_keys_per_request, uint, 0644);
MODULE_PARM_DESC(max_keys_per_request, "Most keys in one request (default 1024, at most 65536)");

unsigned int ordlock_param_max_keys_per_owner = 4096;
module_param_named(max_keys_per_owner, ordlock_param_max_keys_per_owner, uint, 0644);
MODULE_PARM_DESC(max_keys_per_owner, "Most keys one owner may hold (default 4096)");

unsigned int ordlock_param_max_resources = 1048576;
module_param_named(max_resources, ordlock_param_max_resources, uint, 0644);
MODULE_PARM_DESC(max_resources, "Most resources held or waited for in all domains (default 1048576)");

unsigned int ordlock_param_max_domains = 1024;
module_param_named(max_domains, ordlock_param_max_domains, uint, 0644);
MODULE_PARM_DESC(max_domains, "Most domains at once (default 1024)");

unsigned int ordlock_param_max_owners_per_user = 1024;
module_param_named(max_owners_per_user, ordlock_param_max_owners_per_user, uint, 0644);
MODULE_PARM_DESC(max_owners_per_user, "Most owners of one user, unless CAP_SYS_RESOURCE (default 1024)");

unsigned int ordlock_param_max_keys_per_user = 65536;
module_param_named(max_keys_per_user, ordlock_param_max_keys_per_user, uint, 0644);
MODULE_PARM_DESC(max_keys_per_user, "Most keys the owners of one user may hold, unless CAP_SYS_RESOURCE (default 65536)");

unsigned int ordlock_param_max_waiters_per_user = 512;
module_param_named(max_waiters_per_user, ordlock_param_max_waiters_per_user, uint, 0644);
MODULE_PARM_DESC(max_waiters_per_user, "Most waiting requests of one user, unless CAP_SYS_RESOURCE (default 512)");

unsigned int ordlock_param_max_domains_per_user = 64;
module_param_named(max_domains_per_user, ordlock_param_max_domains_per_user, uint, 0644);
MODULE_PARM_DESC(max_domains_per_user, "Most domains created for one user at once, unless CAP_SYS_RESOURCE (default 64)");

unsigned int ordlock_param_order_max_edges_per_user = 1024;
module_param_named(order_max_edges_per_user, ordlock_param_order_max_edges_per_user, uint, 0644);
MODULE_PARM_DESC(order_max_edges_per_user, "Most edges of learned lock orders (all domains) taught by one user, unless CAP_SYS_RESOURCE; later new ones are dropped (default 1024)");

static unsigned int default_timeout_ms = 30000;
module_param(default_timeout_ms, uint, 0644);
MODULE_PARM_DESC(default_timeout_ms, "Timeout of a request that gives none, in ms (default 30000)");

static unsigned int max_timeout_ms = 600000;
module_param(max_timeout_ms, uint, 0644);
MODULE_PARM_DESC(max_timeout_ms, "Longest wait of any request, in ms (default 600000)");

/**
 * ordlock_max_keys_per_release() - most keys one release may name
 *
 * An owner may always release, in one call, as many keys as it may hold or
 * ask for, whatever the parameters became since it took them.
 *
 * Return: the limit.
 */
unsigned int ordlock_max_keys_per_release(void)
{
	return min(max(ordlock_max_keys_per_request(), ordlock_max_keys_per_owner()),
		   ORDLOCK_HARD_MAX_KEYS);
}

/**
 * ordlock_timeout_ns() - the timeout a request gets
 * @requested_ns: the caller's timeout, 0 for the default
 *
 * Return: @requested_ns, or the default when 0, capped by the maximum.
 */
u64 ordlock_timeout_ns(u64 requested_ns)
{
	u64 max_ms = clamp(READ_ONCE(max_timeout_ms), 1U, ORDLOCK_HARD_MAX_TIMEOUT_MS);
	u64 max_ns = max_ms * NSEC_PER_MSEC;

	if (!requested_ns)
		requested_ns = (u64)READ_ONCE(default_timeout_ms) * NSEC_PER_MSEC;
	return min(requested_ns, max_ns);
}

unsigned int ordlock_param_handoff_us = 1000;
module_param_named(handoff_us, ordlock_param_handoff_us, uint, 0644);
MODULE_PARM_DESC(handoff_us, "Fairness: a first waiter queued less than this (microseconds) may be passed by a request that comes while the key is free; an older one only if passed before, 64 times in all; one that holds keys never (default 1000; 0: always handed over)");

unsigned int ordlock_param_spin_us = 50;
module_param_named(spin_us, ordlock_param_spin_us, uint, 0644);
MODULE_PARM_DESC(spin_us, "How long a waiter spins on its CPU for the key, while the key's holder runs, before it sleeps, in microseconds (default 50, at most 10000; 0: never)");

static u32 default_policy = ORDLOCK_POLICY_ENFORCE;

static const char * const ordlock_param_policies[] = { "enforce", "detect", "timeout" };

static int ordlock_param_set_policy(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(ordlock_param_policies, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(default_policy, i);
	return 0;
}

static int ordlock_param_get_policy(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", ordlock_param_policies[READ_ONCE(default_policy)]);
}

static const struct kernel_param_ops ordlock_param_policy_ops = {
	.set = ordlock_param_set_policy,
	.get = ordlock_param_get_policy,
};

module_param_cb(default_policy, &ordlock_param_policy_ops, NULL, 0644);
MODULE_PARM_DESC(default_policy, "Policy of new domains: enforce, detect or timeout (default enforce)");

/* ordlock_default_policy() - the policy a new domain starts with */
u32 ordlock_default_policy(void)
{
	return READ_ONCE(default_policy);
}

unsigned int ordlock_deadlock_history = 64;
module_param_named(deadlock_history, ordlock_deadlock_history, uint, 0444);
MODULE_PARM_DESC(deadlock_history, "How many detected deadlocks debugfs remembers, 1 to 4096 (default 64)");
