// SPDX-License-Identifier: GPL-2.0
/*
 * ordlock: ordered multi-resource locks for processes.
 *
 * This file orders initialisation and teardown, and states the lock order
 * of the whole module (each lock's declaration points here).
 *
 * Lock order
 *
 * Outermost first. A lock is taken only while holding nothing but locks
 * above it on its own branch: never while holding one below it or on
 * another branch.
 *
 *	ordlock_nl_lock			mutex, nl_lock.c
 *	  ordlock_owners_lock		mutex, owner.c
 *	    owner->lock			(PREEMPT_RT only, see owner->domain_seq)
 *	    ordlock_graph_lock		(the views' thread edges)
 *	  owner->lock			mutex, struct ordlock_owner; one at a time
 *	    ordlock_domains_lock	mutex, domain.c
 *	    ordlock_users_lock		mutex, user.c
 *	    ordlock_event_chain		rwsem of a notifier chain, events.c
 *	    ordlock_xd_chain		rwsem of a notifier chain, xdetect.c
 *	    owner->domain_seq		seqcount of owner->lock, write side
 *	    ordlock_graph_lock		spinlock, graph.c
 *	      bucket->lock		spinlock, struct ordlock_bucket; one at a time
 *		fd->owners		xa_lock of a fast owner table, fast_internal.h
 *	      ordlock_xd_dlm_lock	spinlock, xdetect.c (XD_FAIL; XD_WALK's lock ids)
 *	    ordlock_xd_dlm_lock		(a wait in the DLM armed, its victim taken)
 *	    ordlock_fast_lock		mutex, fast_dev.c
 *	      bucket->lock
 *	      fd->owners
 *	      order->lock		(ORDLOCK_IOC_FAST_LEARN)
 *	    bucket->lock
 *	    ordlock_history_lock	spinlock, events.c
 *	    order->lock			mutex, struct ordlock_order (order.c); one at a time
 *	      ordlock_event_chain
 *	      ordlock_users_lock
 *	ordlock_domains_lock
 *	  order->lock
 *	order->lock
 *	  ordlock_users_lock
 *	ordlock_backends_lock		mutex, backend.c; alone
 *	ordlock_nl_xd_lock		mutex, nl_xdetect.c; alone
 *
 * ordlock_nl_lock (the hash of netlink owners) is outermost: a socket's
 * owner is created under it (taking ordlock_users_lock, ordlock_owners_lock
 * and, for an owner refused by max_owners_per_user, ordlock_event_chain),
 * and module exit destroys the remaining netlink owners under it (taking
 * owner->lock and all that nests there, and ordlock_owners_lock). The
 * work item that moves a queued netlink request on takes owner->lock; it is
 * flushed (cancel_work_sync()) with ordlock_nl_lock held, never with
 * owner->lock held.
 *
 * ordlock_owners_lock (the list of all owners) is otherwise taken alone: by
 * owner creation and destruction (before owner->lock), by debugfs "owners"
 * and the GET_OWNERS dump, which read each owner's domain name through
 * owner->domain_seq. On PREEMPT_RT such a reader that meets a write in
 * progress takes and drops that owner's lock: the one case of owner->lock
 * under ordlock_owners_lock. Nothing else takes owner->lock under it. The
 * views of the graph (debugfs "graph", the GET_GRAPH dump) take
 * ordlock_graph_lock under it to list the thread edges (graph.c), and
 * nothing under that but what ordlock_graph_lock allows.
 *
 * owner->lock serialises one owner's requests and state. It is held
 * across a whole request (dropped only while the task sleeps), across the
 * ioctls' copies from and to user space (so the mm's locks nest inside
 * it; nothing of this module is taken under them), and across the
 * netlink replies and RESULT messages sent to the owner's socket. The
 * locks below it:
 * - ordlock_domains_lock (the list and settings of domains) is taken under
 *   owner->lock when an owner moves to another domain; without it when a
 *   destroyed owner drops its domain, by ioctl DOMAIN_CONFIG (which runs
 *   without the owner's lock: a cluster join may take long), by netlink
 *   DOMAIN_GET/DOMAIN_SET and by debugfs "stats". Nothing of this
 *   module is taken under it but order->lock, by debugfs "order": a freed
 *   domain drops it before putting its creator's user and freeing its
 *   learned order (ordlock_domain_free()).
 * - ordlock_users_lock (the hash of users) is a leaf. Under owner->lock it
 *   is taken when a domain freed by a move or by DOMAIN_CONFIG puts its
 *   creator's user; under order->lock when a learned order forgets its
 *   edges (a reset, or the freeing of the domain, alone or under
 *   owner->lock) and puts the users they were charged to; under
 *   ordlock_nl_lock as above; alone otherwise. Never under
 *   ordlock_domains_lock.
 * - ordlock_event_chain (events.c's notifier chain) is read-held while the
 *   subscribers hear of an event; subscribers take no lock of this module.
 *   It is write-held only by subscribe and unsubscribe, at init and exit,
 *   with no lock held.
 * - owner->domain_seq orders the writes of the owner's copy of its domain
 *   name (under owner->lock) against lockless readers.
 * - ordlock_graph_lock (the wait-for graph, one for all domains: a thread
 *   may hold in one domain and wait in another) is taken by a request
 *   joining, walking or leaving the graph; the walk takes the bucket locks
 *   of the resources it passes, one at a time, in any domain.
 * - bucket->lock (a hash chain and every resource on it: counts, holders,
 *   waiters) is taken under owner->lock or ordlock_graph_lock by requests,
 *   and alone by the reaper, debugfs "locks" and "graph" and the GET_LOCKS and
 *   GET_GRAPH dumps. A thread never holds two. Under it the granter wakes a
 *   task or queues the netlink work item, and the table queues its reaper.
 * - ordlock_fast_lock (the fast path's domain state and pinned keys,
 *   fast_dev.c) is taken under owner->lock by ORDLOCK_IOC_FAST_PIN (which
 *   takes a bucket lock under it) and by the release of an owner's fast
 *   state; alone (bucket locks under it) when a domain's fast state is
 *   freed (the fast path turned off, or the domain freed). A pinned key's
 *   word is only loaded and cmpxchg'd under its bucket lock, and mmap()
 *   (under the mm's lock) takes no lock at all.
 * - fd->owners (the xa_lock of a domain's fast owner table, index ->
 *   owner, fast_internal.h) is a leaf: taken under a bucket lock (and so
 *   under whatever is above it) by __ordlock_fast_holder() (fastpath.c),
 *   which names the member a word names for the views, the failure record
 *   and the graph walk (ordlock_res_word_holder()), and for the lease of
 *   a fast hold a waiter queued behind (which only queues the holder's
 *   lease work under it, lease.c); under
 *   ordlock_fast_lock when an index is handed out or given back.
 * - ordlock_history_lock (the ring of the last deadlocks) is a leaf, taken
 *   when a deadlock is recorded (under owner->lock) and by debugfs
 *   "deadlocks".
 * - order->lock (a domain's learned lock order, order.c) is taken under
 *   owner->lock by a grant that meets an edge its owner does not know,
 *   and by ORDLOCK_IOC_GET_ORDER; alone by a reset (DOMAIN_CONFIG, after
 *   ordlock_domains_lock is dropped) and by the domain's freeing; under
 *   ordlock_domains_lock by debugfs "order" (the one lock taken under
 *   ordlock_domains_lock). Under it a potential deadlock is logged and
 *   its event sent (ordlock_event_chain read-held), and a forgotten
 *   edge puts its user (ordlock_users_lock). It allocates
 *   (GFP_KERNEL): reclaim takes nothing of this module. A grant whose
 *   edges its owner knows takes no lock: the owner's cache is checked
 *   against the order's id and its edges read under rcu_read_lock()
 *   (a reset frees them with kfree_rcu()).
 *
 * ordlock_backends_lock (the registered cluster backends, backend.c) is
 * taken alone: by a companion module registering or unregistering its
 * backend, and by a lookup, which takes the backend's module reference
 * under it. request_module() and every call into a backend that may wait
 * are made with no lock of this module held: the cluster join and leave of
 * a domain (ordlock_domains_lock dropped, the domain marked changing), and
 * a request's cluster lock and conversion (owner->lock dropped, the owner
 * busy, as for a local wait). A release's backend unlock may run under
 * owner->lock (and, at module exit, under ordlock_nl_lock as well): it
 * does not wait for the cluster but may sleep (it flushes the request's
 * work item and may call dlm_unlock() itself, which waits out a lockspace
 * recovery entered a moment before the companion heard of it:
 * ordlock_dlm.c). So do the asynchronous lock and conversion of a netlink
 * request (lock_async, lock_result, convert_async and convert_result,
 * which never wait) and the unlock that cancels it. The backend calls the
 * request's done hook under its own leaf spinlock, in atomic context: from
 * the DLM's callback worker (6.1), or (6.12, ORDLOCK_DLM_LSFL_CB) at once,
 * in softirq or inside any dlm_lock() or dlm_unlock() of this node, such
 * as another owner's release under that owner's lock (ordlock_dlm.c,
 * "Callbacks"). So the hook takes no lock of this module: it only queues
 * the netlink owner's work item. The unlock that detaches it takes that
 * spinlock (with bottom halves off) under owner->lock.
 *
 * ordlock_nl_xd_lock (the registered ordlock-xdetectd) is taken alone, by
 * its commands, DOMAIN_GET and the netlink notifier. The wait events of
 * detection across nodes (ordlock_xd_chain) are sent under owner->lock,
 * with no spinlock held, like the other events. XD_CHECK and XD_FAIL take
 * ordlock_owners_lock, then ordlock_graph_lock and a bucket lock under it,
 * as the views do (nl_xdetect.c).
 *
 * Not locks of this module, and leaves wherever they appear: the internal
 * locks of per-CPU counters, rate limits, workqueues, hrtimers, wait
 * queues, signal delivery and netlink. No lock is taken in interrupt
 * context and none disables interrupts: the hrtimers (nl_lock.c's, and
 * each owner's lease timer, lease.c) only queue work.
 *
 * The lease work item (lease.c) takes owner->lock like a request, and
 * what nests in it; it is cancelled (cancel_work_sync()) only with no lock
 * held, or under ordlock_nl_lock (module exit destroying netlink owners),
 * never under owner->lock. Leases add no lock. The genetlink
 * handlers run without genl_mutex (parallel_ops); a dump runs under its
 * socket's callback mutex, and takes ordlock_owners_lock or bucket locks
 * under it. The module does not use RCU itself (the notifier chain does,
 * inside) except for order.c's edges, read under rcu_read_lock() by
 * the owners' caches and freed after a grace period. Counters, gauges,
 * ids and tokens are atomic or per CPU, under no lock.
 */
#include <linux/module.h>

#include "debugfs.h"
#include "device.h"
#include "domain.h"
#include "events.h"
#include "lease.h"
#include "netlink.h"
#include "order.h"
#include "owner.h"
#include "table.h"
#include "user.h"
#include "xdetect.h"

static int __init ordlock_init(void)
{
	int ret;

	ordlock_xd_init();
	ret = ordlock_table_init();
	if (ret)
		return ret;
	ret = ordlock_owner_init();
	if (ret)
		goto err_table;
	ret = ordlock_events_init();
	if (ret)
		goto err_owner;
	ret = ordlock_domain_init();
	if (ret)
		goto err_events;
	ret = ordlock_lease_init();
	if (ret)
		goto err_domain;
	ordlock_debugfs_init();
	ret = ordlock_nl_init();
	if (ret)
		goto err_debugfs;
	ret = ordlock_device_init();
	if (ret)
		goto err_nl;
	pr_info("ordlock: loaded\n");
	return 0;

err_nl:
	ordlock_nl_exit();
err_debugfs:
	ordlock_debugfs_exit();
	ordlock_lease_exit();
err_domain:
	ordlock_domain_exit();
err_events:
	ordlock_events_exit();
err_owner:
	ordlock_owner_exit();
err_table:
	ordlock_table_exit();
	return ret;
}

static void __exit ordlock_exit(void)
{
	s64 nres;

	ordlock_device_exit();
	ordlock_nl_exit();
	/* The fast path's pinned keys stay in use until their domain goes */
	nres = ordlock_table_nresources() - ordlock_table_npinned();
	if (atomic_read(&ordlock_nowners) || nres)
		pr_err("ordlock: leaked %d owners and %lld resources\n",
		       atomic_read(&ordlock_nowners), nres);
	ordlock_debugfs_exit();
	/* Every owner is gone, and cancelled its lease's work */
	ordlock_lease_exit();
	/* Domains hold references to the users they were created for */
	ordlock_domain_exit();
	ordlock_user_exit();
	ordlock_events_exit();
	ordlock_owner_exit();
	ordlock_table_exit();
	ordlock_order_exit();
	pr_info("ordlock: unloaded\n");
}

module_init(ordlock_init);
module_exit(ordlock_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Ordered multi-resource locks for processes");
MODULE_AUTHOR("The ordlock developers");
