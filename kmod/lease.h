/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Leases: a deadline on what an owner holds, renewed by the owner and
 * enforced by the kernel, which revokes the keys when it passes; and the
 * token check of fencing storage. The semantics are the UAPI's ("DOC:
 * Leases").
 */
#ifndef _ORDLOCK_LEASE_H
#define _ORDLOCK_LEASE_H

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/ordlock.h>

struct ordlock_domain;
struct ordlock_owner;
struct ordlock_rkey;
struct pid;

/**
 * struct ordlock_lease - the lease of one owner (embedded in it)
 * @timer: fires at (or after) @expires and only queues @work; armed under
 *	the owner's lock, never moved later by a renewal (@work re-arms it)
 * @work: revokes when @expires has passed; takes the owner's lock
 * @period_ns: the lease period (0: the owner's holds have no lease);
 *	under owner->lock
 * @expires: the deadline (ktime_get()), 0 when none; written under
 *	owner->lock with WRITE_ONCE(), read racily by the dumps
 * @slack_ns: the timer slack the timer is armed with (that of the task
 *	that set the lease)
 * @revoked: the keys were revoked and the owner has not acknowledged;
 *	written under owner->lock, read by poll() with READ_ONCE()
 * @dead: the owner is being destroyed: @work does nothing; under
 *	owner->lock
 * @keys: the revoked keys with their tokens, or NULL (out of memory: only
 *	the failure record names the first and the last); under owner->lock
 * @nkeys: number of revoked keys (entries of @keys, when not NULL)
 * @first: the first revoked key, for the failure record
 * @last: the last revoked key
 * @signal: the signal to send on revocation, 0 for none; under owner->lock
 * @sig_pid: the process to send it to (a reference), or NULL
 * @wq: poll() waits here; woken on revocation
 * @revoked_hook: called under owner->lock after a revocation (netlink
 *	tells the socket), or NULL
 * @hook_data: for @revoked_hook
 * @late_ns: how late the last revocation ran after @expires (bench)
 * @fast_due: the deadline (ktime_get()) of a fast-path hold of the owner
 *	that the kernel first saw contended (a waiter queued behind it), not
 *	yet taken into @expires, 0 when none: lowered locklessly (a
 *	cmpxchg loop) by ordlock_lease_fast_seen(), which queues @work;
 *	taken (xchg to 0) by @work and by a renewal, under owner->lock
 */
struct ordlock_lease {
	struct hrtimer timer;
	struct work_struct work;
	u64 period_ns;
	ktime_t expires;
	u64 slack_ns;
	bool revoked;
	bool dead;
	struct ordlock_revoked_key *keys;
	unsigned int nkeys;
	struct ordlock_revoked_key first;
	struct ordlock_revoked_key last;
	int signal;
	struct pid *sig_pid;
	wait_queue_head_t wq;
	void (*revoked_hook)(struct ordlock_owner *owner, void *data);
	void *hook_data;
	u64 late_ns;
	atomic64_t fast_due;
};

/*
 * ordlock_lease_none() - @l is neither running nor revoked, so that
 * ordlock_lease_check() and ordlock_lease_acknowledge() would do nothing:
 * the test the lock and unlock paths make inline before calling them.
 * The owner is locked.
 */
static inline bool ordlock_lease_none(const struct ordlock_lease *l)
{
	return likely(!l->expires && !l->period_ns && !l->revoked);
}

int ordlock_lease_init(void);
void ordlock_lease_exit(void);

void ordlock_lease_owner_init(struct ordlock_owner *owner);
void ordlock_lease_owner_kill(struct ordlock_owner *owner);
void ordlock_lease_owner_free(struct ordlock_owner *owner);

int ordlock_lease_check(struct ordlock_owner *owner);
int ordlock_lease_refuse(struct ordlock_owner *owner);
void ordlock_lease_granted(struct ordlock_owner *owner, u32 lease_ms);
void ordlock_lease_fast_seen(struct ordlock_owner *owner, u32 max_hold_ms);
int ordlock_lease_renew(struct ordlock_owner *owner, u32 lease_ms, u64 *left_ms);
int ordlock_lease_set_signal(struct ordlock_owner *owner, u32 signal);
void ordlock_lease_acknowledge(struct ordlock_owner *owner);
u64 ordlock_lease_left_ms(const struct ordlock_owner *owner, bool *has);
int ordlock_lease_token_check(struct ordlock_domain *domain,
			      const struct ordlock_rkey *key, u64 token);

#endif /* _ORDLOCK_LEASE_H */
