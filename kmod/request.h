/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Requests: acquiring a sorted set of keys all or nothing, waiting in FIFO
 * order, and releasing. One code path for every front end.
 */
#ifndef _ORDLOCK_REQUEST_H
#define _ORDLOCK_REQUEST_H

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/types.h>

struct ordlock_hold;
struct ordlock_owner;
struct ordlock_rkey;
struct task_struct;

/**
 * struct ordlock_waiter - an owner queued on a resource
 * @node: entry in res->waiters; under the bucket lock
 * @task: the task to wake when the key is granted
 * @hold: the hold to grant (acquire), or the hold to convert; its res and
 *	owner say who waits for what
 * @mode: the mode asked for
 * @convert: a conversion of @hold, queued ahead of the acquires
 * @granted: set, under the bucket lock, by whoever grants the request:
 *	the granter has already put @hold on the resource's holders, or
 *	changed its mode
 * @since: when the wait started
 */
struct ordlock_waiter {
	struct list_head node;
	struct task_struct *task;
	struct ordlock_hold *hold;
	u32 mode;
	bool convert;
	bool granted;
	ktime_t since;
};

int ordlock_acquire(struct ordlock_owner *owner, const struct ordlock_rkey *keys,
		    unsigned int n, u64 timeout_ns, bool try, u64 *token);
int ordlock_convert(struct ordlock_owner *owner, const struct ordlock_rkey *key,
		    u64 timeout_ns, bool try, u64 *token);
int ordlock_release_keys(struct ordlock_owner *owner,
			 const struct ordlock_rkey *keys, unsigned int n);
unsigned int ordlock_release_token(struct ordlock_owner *owner, u64 token);
unsigned int ordlock_release_all(struct ordlock_owner *owner);

#endif /* _ORDLOCK_REQUEST_H */
