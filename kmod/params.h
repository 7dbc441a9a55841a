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

#include <linux/types.h>

/* Hard caps, whatever the parameters say */
#define ORDLOCK_HARD_MAX_KEYS		65536U
#define ORDLOCK_HARD_MAX_TIMEOUT_MS	(24U * 3600U * 1000U)

extern unsigned short ordlock_dev_mode;
extern unsigned int ordlock_hash_bits;

unsigned int ordlock_max_keys_per_request(void);
unsigned int ordlock_max_keys_per_owner(void);
unsigned int ordlock_max_keys_per_release(void);
unsigned int ordlock_max_resources(void);
unsigned int ordlock_max_domains(void);
unsigned int ordlock_max_owners_per_user(void);
unsigned int ordlock_max_keys_per_user(void);
unsigned int ordlock_max_waiters_per_user(void);
unsigned int ordlock_max_domains_per_user(void);
u64 ordlock_timeout_ns(u64 requested_ns);
u32 ordlock_default_policy(void);
extern unsigned int ordlock_deadlock_history;

#endif /* _ORDLOCK_PARAMS_H */
