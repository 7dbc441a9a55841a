/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lock backends: the seam through which a companion module gives a domain's
 * keys an exclusion wider than this host (ordlock_dlm.ko: the Linux DLM).
 *
 * ordlock.ko knows no backend: a companion registers one with
 * ordlock_backend_register() from its init, and unregisters it from its
 * exit. A user of a backend (a cluster domain) takes it with
 * ordlock_backend_get(), which loads the companion on demand
 * (request_module("ordlock_NAME")) and pins it (try_module_get()) until
 * ordlock_backend_put(). A companion depends on ordlock.ko (it calls the
 * register functions), so ordlock.ko outlives every registered backend.
 *
 * A backend's calls may sleep, so none is made in atomic context. Those
 * that may wait for the cluster are made with no lock of ordlock.ko held;
 * @unlock, @lock_async, @lock_result, @convert_async and @convert_result
 * never wait for the cluster and are made under an owner's lock (a mutex),
 * except @lock_async with %ORDLOCK_BACKEND_DIRECT (no lock held).
 */
#ifndef _ORDLOCK_BACKEND_H
#define _ORDLOCK_BACKEND_H

#include <linux/bits.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/types.h>

struct module;
struct ordlock_backend_space;
struct ordlock_backend_lock;

/* The backend of cluster domains (its module: ordlock_dlm) */
#define ORDLOCK_CLUSTER_BACKEND "dlm"

/* Size of a backend's name, NUL included */
#define ORDLOCK_BACKEND_NAME_MAX 16

/* Flags of ordlock_backend_ops.lock() */
/* fail with -EAGAIN at once when the key is held incompatibly elsewhere */
#define ORDLOCK_BACKEND_TRY		BIT(0)
/*
 * lock_async() only: the caller holds no lock of ordlock.ko and may sleep,
 * as for lock(): the backend may make the request in the call (as its
 * lock() does), and @done may then be called before the call returns
 */
#define ORDLOCK_BACKEND_DIRECT		BIT(1)

/**
 * struct ordlock_backend_ops - what a backend does
 * @join: open the backend's space for the domain named @domain (a
 *	lockspace of the DLM); returns it or an ERR_PTR(): -ENOTCONN no
 *	cluster (or no quorum), another errno for a join that failed. May
 *	sleep long (a cluster-wide join); interruptible by a fatal signal.
 * @leave: close a space that no lock of it uses any more; may sleep, but
 *	within a bound of the backend's (ordlock_dlm: leave_timeout_ms), and
 *	less on a fatal signal. Returns 0, or -ETIMEDOUT (the bound passed)
 *	or -EINTR (a fatal signal): the backend then left the space by force
 *	and logged what it abandoned. Either way the space is gone for the
 *	caller.
 * @lock: take key (@rank, @id) of @space, exclusive or shared, waiting
 *	until @deadline (CLOCK_MONOTONIC, KTIME_MAX: no deadline) at most.
 *	Returns 0 and the lock in *@out, or -EAGAIN (%ORDLOCK_BACKEND_TRY and
 *	the key is busy), -ETIMEDOUT (the deadline passed), -EINTR (a signal),
 *	-EDEADLK (the backend saw a deadlock), or another errno (the cluster
 *	failed). A lock that failed holds nothing, whatever happens to the
 *	request in the backend afterwards: the backend cleans up on its own.
 * @convert: change the mode of a granted lock to exclusive or shared,
 *	waiting until @deadline at most; returns as @lock (-EDEADLK: the
 *	backend's conversion deadlock, two holders upgrading at once). A
 *	conversion that failed leaves the lock held in its old mode, whatever
 *	the request does afterwards (the backend reverts it on its own; a
 *	later operation on the lock waits for that, within its own deadline)
 * @lock_async: start taking key (@rank, @id) of @space as @lock does, without
 *	waiting: returns 0 and the pending lock in *@out, or -ENOMEM. @done
 *	is called once with @data when the request ends (granted or failed),
 *	from the backend's context (atomic: it may not sleep; in softirq, or
 *	inside another backend call of this host, made under an owner's
 *	lock: so it may take none of ordlock.ko's locks), unless @unlock
 *	came first; its outcome is then read with @lock_result. @unlock of
 *	a pending lock cancels it: nothing is held afterwards, and @done is
 *	not called after @unlock returned
 * @lock_result: the outcome of @lock_async, without waiting: -EINPROGRESS
 *	while pending (the lock stays the caller's), 0 granted (it is a lock
 *	as @lock gives), or an errno as @lock returns (the lock is gone: the
 *	backend frees it)
 * @unlock: release a lock taken by @lock or @lock_async (cancelling it if
 *	still pending); does not wait for the cluster, but may sleep (the
 *	backend may make the release in the caller: ordlock_dlm's direct
 *	dlm_unlock())
 * @value: the fencing floor of a granted lock: the value the key's value
 *	block held when @lock (or @convert) granted it, or, when the backend
 *	cannot trust that value (flagged lost, zero, below what this node
 *	knew of the key, read across a recovery), at least the wall clock in
 *	microseconds: the token rule of the UAPI header ("DOC: Cluster
 *	domains") and docs/cluster.md
 * @set_value: the value an exclusive lock writes to the key's value block
 *	when it is released (a shared one writes nothing)
 * @convert_async: start changing the mode of a granted lock as @convert
 *	does, without waiting (for netlink owners; never sleeps): returns 0,
 *	or an errno as @convert returns (nothing started). An upgrade is
 *	pending until @done is called once with @data (from the backend's
 *	context, as for @lock_async), unless @convert_result abandoned it
 *	first; its outcome is then read with @convert_result. A downgrade
 *	never waits: the lock counts as shared at once (shared on this node
 *	while still exclusive in the cluster is safe), the backend finishes
 *	the conversion on its own, and @done is not called. A conversion
 *	still being reverted or finished (of @convert or @convert_async) ends
 *	first, in the backend. No other operation on the lock, @unlock
 *	included, may be made while an upgrade is pending: end it with
 *	@convert_result first
 * @convert_result: the outcome of an upgrade of @convert_async, without
 *	waiting: -EINPROGRESS while pending, 0 converted, or an errno as
 *	@convert returns (the lock is held in its old mode). With @abandon,
 *	the caller gives the pending upgrade up instead (its deadline, a
 *	cancel, the owner's death): the backend brings the lock back to its
 *	old mode on its own (the cluster's request cancelled, or converted
 *	back if the grant won the race, as for @convert's caller giving up),
 *	@done is not called after this returns, and it returns 0
 * @lkid: the cluster's own id of @lock's request (the DLM's lock id), 0
 *	while not known yet (the request not made); optional (NULL: never
 *	known). Never sleeps, takes no lock: the caller keeps @lock alive
 *	(cluster.c: ordlock_cluster_lkid())
 */
struct ordlock_backend_ops {
	struct ordlock_backend_space *(*join)(const char *domain);
	int (*leave)(struct ordlock_backend_space *space);
	int (*lock)(struct ordlock_backend_space *space, u32 rank, u64 id,
		    bool exclusive, u32 flags, ktime_t deadline,
		    struct ordlock_backend_lock **out);
	int (*convert)(struct ordlock_backend_lock *lock, bool exclusive,
		       u32 flags, ktime_t deadline);
	int (*lock_async)(struct ordlock_backend_space *space, u32 rank, u64 id,
			  bool exclusive, u32 flags, void (*done)(void *data),
			  void *data, struct ordlock_backend_lock **out);
	int (*lock_result)(struct ordlock_backend_lock *lock);
	void (*unlock)(struct ordlock_backend_lock *lock);
	u64 (*value)(struct ordlock_backend_lock *lock);
	void (*set_value)(struct ordlock_backend_lock *lock, u64 value);
	int (*convert_async)(struct ordlock_backend_lock *lock, bool exclusive,
			     u32 flags, void (*done)(void *data), void *data);
	int (*convert_result)(struct ordlock_backend_lock *lock, bool abandon);
	u32 (*lkid)(struct ordlock_backend_lock *lock);
};

/**
 * struct ordlock_backend - a registered backend
 * @name: its name, [a-z0-9_], shorter than %ORDLOCK_BACKEND_NAME_MAX; the
 *	companion module is "ordlock_" followed by it
 * @owner: the module that implements it (THIS_MODULE)
 * @ops: its operations
 * @node: entry in the list of backends, under ordlock_backends_lock
 *	(backend.c)
 */
struct ordlock_backend {
	const char *name;
	struct module *owner;
	const struct ordlock_backend_ops *ops;
	struct list_head node;
};

int ordlock_backend_register(struct ordlock_backend *backend);
void ordlock_backend_unregister(struct ordlock_backend *backend);
struct ordlock_backend *ordlock_backend_get(const char *name);
void ordlock_backend_put(struct ordlock_backend *backend);

#endif /* _ORDLOCK_BACKEND_H */
