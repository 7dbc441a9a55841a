// SPDX-License-Identifier: GPL-2.0
/*
 * ordlock_dlm: the cluster backend of ordlock, on the Linux DLM (fs/dlm).
 *
 * A companion module of ordlock.ko, built only when the kernel has the DLM
 * (CONFIG_DLM); it depends on dlm.ko, ordlock.ko does not. It registers the
 * backend "dlm" (backend.h), which ordlock.ko loads on demand.
 *
 * A space is a DLM lockspace named "ordlock.DOMAIN". A key (rank, id) is
 * the DLM resource "RRRRRRRR:IIIIIIIIIIIIIIII" (both in hex) of it;
 * exclusive maps to EX, shared to PR; a try-lock is NOQUEUE.
 *
 * Deadlines. The kernel API of the DLM has no timeout, and dlm_lock() and
 * dlm_unlock() themselves block while the lockspace recovers. So the
 * caller calls dlm_lock() itself only while no recovery is in progress
 * (space->recovering, kept by the recover_prep and recover_done callbacks)
 * and the key's anchor (below) exists: the *direct* request, which costs
 * no hand-off to a worker. Otherwise (a recovery, or a key's first use,
 * whose anchor is taken first) a work item makes the request. Either way
 * the caller waits for the completion AST only until its deadline (or a
 * signal). A caller that gives up leaves the lock to the clean-up work
 * item, which cancels the request (DLM_LKF_CANCEL) and waits for the one
 * AST that follows: either the cancel's, or the grant's when the cancel
 * lost the race; a grant is released at once. The caller never waits for
 * the cluster past its deadline; the clean-up may (a lockspace in
 * recovery), and a space is left when all of its locks are gone.
 *
 * A lockspace that never recovers (this node lost the cluster for good:
 * its dlm_controld exited). dlm_lock() and dlm_unlock() wait inside the
 * DLM, uninterruptibly, for the end of a recovery (the lockspace's
 * in_recovery semaphore), so the work items never call the DLM while
 * the space is recovering (odlm_gate()): they wait outside it, for the
 * recovery's end or the leave giving up, and wait for an AST only until
 * then (odlm_wait_ast()). The leave (odlm_leave()) is bounded by
 * leave_timeout_ms and a fatal signal; past them it leaves by force
 * (odlm_leave_force()): the work items stop (abandoned: no DLM call,
 * nothing freed), the lockspace is released with the DLM's force level,
 * and what an AST could still have touched until then is leaked, not
 * freed. Each space has its own workqueue, which the leave drains.
 *
 * Releases. Every caller of ops->unlock may sleep: ordlock.ko calls it
 * from process context holding only the owner's mutex (the ioctls, the
 * netlink commands and work item, lease revocation's work item, the
 * owner's destruction at close), never under a spinlock, in a timer or an
 * AST. But under that mutex it must not wait for the cluster. So a granted
 * lock with no operation in flight (no request, conversion or revert) is
 * released by the caller itself, while no recovery is in progress: a
 * *direct* dlm_unlock(), which only queues the release in the DLM (sent to
 * the master if remote) and does not wait for it: the unlock's AST frees
 * the lock. Otherwise (a recovery, a pending request to cancel, a
 * conversion still being undone) the clean-up work item does it as above.
 * The same race as a direct request is left: a dlm_unlock() entered
 * between the DLM stopping and recover_prep waits for the recovery (under
 * the owner's mutex).
 *
 * The race left: the DLM stops locking (its recoverd takes the lockspace's
 * in_recovery semaphore) a moment before it calls recover_prep, so a
 * direct dlm_lock() entered in that moment waits inside the DLM until the
 * recovery ends; the request is then made (a late grant, after the
 * caller's deadline, is released by the clean-up work as above). Only
 * that window is unbounded by ordlock's deadline, as long as the DLM's
 * recovery itself (0.1-0.3 s measured, after the membership change).
 *
 * An asynchronous request (lock_async, for netlink owners) is made the same
 * way, but nobody waits: the AST calls the caller's done hook, once, and the
 * caller reads the outcome (lock_result) without waiting; giving up is an
 * unlock, which detaches the hook (under done_lock) and leaves the request
 * to the clean-up work item as above.
 *
 * An asynchronous conversion (convert_async, for netlink owners) is made by
 * the lock's conversion work (the revert work item), which first ends what
 * an earlier conversion left to it: an upgrade its caller gave up on is
 * reverted, a downgrade nobody waits for is finished. An upgrade's AST calls
 * the caller's done hook, and the caller reads the outcome (convert_result)
 * without waiting; giving it up (convert_result's abandon) detaches the
 * hook and asks the same work to revert it, as for a synchronous caller
 * that gave up. A downgrade counts as made at once: the work makes it and
 * waits for its AST, nobody else does.
 *
 * Value blocks. The DLM keeps a resource's value block only while some
 * lock of the resource exists somewhere: the fencing value an exclusive
 * release writes there would be lost as soon as the key is free. So each
 * node keeps an *anchor*, a lock in mode NL (compatible with everything)
 * on every key it used, up to max_anchors per space (the oldest go first),
 * taken by the request work before the request itself and released when
 * the space is left. Anchors are taken with DLM_LKF_VALBLK: when a key's
 * master node dies, the new master rebuilds the value block from the
 * survivors' locks that carry one (fs/dlm/recover.c, recover_lvb()), from
 * a PR or EX lock's as it is, and flags it invalid (DLM_SBF_VALNOTVALID)
 * when only NL or CR locks carry one; a lock without DLM_LKF_VALBLK is not
 * looked at, and when none carries one the new master's value block
 * reads zero, not flagged. An anchor also keeps what this node last knew
 * of the key: the highest value it read or wrote, and the recovery
 * generation of that read.
 *
 * The fencing floor (odlm_value()). A grant's value is the value block's,
 * unless the value block cannot be trusted: flagged invalid, zero (a key
 * no lock kept: never used, forgotten by every node, every node left the
 * space, or rebuilt from no lock), below what this node last knew of the
 * key, or read across a recovery (the space recovering, or its generation
 * changed since the request began or since this node last read the key).
 * Then it is at least the wall clock in microseconds, which is above
 * every earlier token as long as the nodes' clocks agree to within half
 * the time between the last exclusive grant before the loss and the first
 * after it, and the domain averages fewer than one grant a microsecond
 * (docs/cluster.md, "Fencing tokens"). A lock also keeps its grant's value
 * in its own value block (a PR lock's is sent to the new master when its
 * master dies, and taken as the key's).
 *
 * Callbacks. The lockspaces are made with ORDLOCK_DLM_LSFL_CB (compat.h):
 * on 6.12 (DLM_LSFL_SOFTIRQ) the DLM calls an AST at once, from the
 * context that completes the operation, with bottom halves disabled (and
 * under the DLM's own locks): inside the dlm_lock() or dlm_unlock() of
 * whoever made the operation (or another one on the same resource: a
 * release's dlm_unlock() may grant a queued request of this node), or in
 * the DLM's receive path for a remote master; softirq at the strongest.
 * On 6.1 (no flag) the DLM's callback worker calls them (process
 * context). So every callback here (odlm_ast(), odlm_anchor_ast(), and
 * the done hooks they call) may not sleep and takes only: its lock's
 * done_lock, space->idle's lock, its completion's and the workqueues'
 * internal locks (a done hook only queues work: ordlock.ko's takes none
 * of its locks), and frees memory. No callback calls the DLM, takes
 * space->anchor_lock or a mutex. Every lock a callback takes is taken
 * _bh (done_lock) or irqsave (idle's lock) everywhere else, and none of
 * them is held across a dlm_lock() or dlm_unlock() (the call may run a
 * callback that takes it: a recursion on the same CPU). The callers of
 * the backend's ops hold at most owner->lock and ordlock_nl_lock
 * (mutexes, main.c), which no callback takes. The flag is this node's
 * setting of its copy of the lockspace: the DLM does not compare it with
 * the other nodes' (it is left out of the flags they must share), and a
 * lockspace another module joined first on this node keeps that one's.
 * There are no BASTs (none is passed: nobody is told of a blocked
 * request). The recovery callbacks come from the DLM's recovery thread,
 * in process context, either way.
 *
 * Locks: space->anchor_lock (a spinlock, a leaf, process context only)
 * protects the space's anchors (hash, LRU list, count, leaving);
 * space->idle's own lock orders the last put of a space's lock count
 * before the space is freed (irqsave: an AST may take it); a lock's
 * done_lock (a spinlock, a leaf, taken with bottom halves off: an AST
 * takes it) protects its done hook and the completion of its AST, and is
 * taken once more before the lock is freed (odlm_complete()); it also
 * protects what is asked of the lock's conversion work (revert_asked,
 * cvt_*) and the re-arming and completion of idle. space->gate's own
 * lock only orders its waiters and wakers (the recovery callbacks, the
 * leave); space->abandoned is written once (WRITE_ONCE(), by the leave,
 * before it wakes gate and drains the workqueue) and read without a lock.
 * Each lock's other fields are written by one party at a time, handed
 * over through the work items and the completion: the request work until
 * dlm_lock() returned (flush_work()), the AST until complete() (under
 * done_lock), then the caller or the clean-up work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dlm.h>
#include <linux/err.h>
#include <linux/hashtable.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/ordlock.h>

#include "backend.h"
#include "compat.h"

/* lockspace names: the prefix and an ordlock domain name */
#define ODLM_LS_PREFIX	ORDLOCK_DLM_LS_PREFIX
#define ODLM_LS_LEN	(sizeof(ODLM_LS_PREFIX) - 1 + ORDLOCK_DOMAIN_NAME_MAX)
/* the value block of every resource (room for a fencing token and more) */
#define ODLM_LVB_LEN	32
/* a key's resource name (UAPI: what ordlockctl reads back) and its NUL */
#define ODLM_RES_LEN	(ORDLOCK_DLM_RES_LEN + 1)

static char *cluster;
module_param(cluster, charp, 0444);
MODULE_PARM_DESC(cluster,
		 "the corosync cluster_name the lockspaces must belong to (empty: any)");

static unsigned int max_anchors = 4096;
module_param(max_anchors, uint, 0644);
MODULE_PARM_DESC(max_anchors,
		 "NL locks kept per lockspace on keys used, which keep their value blocks (fencing) alive");

static bool direct_release = true;
module_param(direct_release, bool, 0644);
MODULE_PARM_DESC(direct_release,
		 "release granted locks in the caller when no recovery is in progress (N: always through the work item, to measure the difference)");

static unsigned int leave_timeout_ms = 60000;
module_param(leave_timeout_ms, uint, 0644);
MODULE_PARM_DESC(leave_timeout_ms,
		 "how long leaving a lockspace waits for the DLM (its recovery, the releases in flight) before it gives up and leaves by force");

/* ANCHOR_BITS: the size of a space's hash of anchors */
#define ODLM_ANCHOR_BITS	8

/*
 * An NL lock that keeps a key's resource, and its value block, alive; with
 * DLM_LKF_VALBLK (lvb), so that the DLM's recovery counts it. seen and gen
 * (under the space's anchor_lock): the highest fencing value this node
 * read or wrote of the key, and the space's recovery generation when it
 * last read it (or took the anchor).
 */
struct odlm_anchor {
	struct hlist_node hnode;
	struct list_head lru;
	struct ordlock_backend_space *space;
	struct dlm_lksb lksb;
	__le64 lvb[ODLM_LVB_LEN / 8];
	struct completion granted;
	bool unlocking;
	u32 rank;
	u32 gen;
	u64 id;
	u64 seen;
};

struct ordlock_backend_space {
	dlm_lockspace_t *ls;
	/*
	 * the generation of the lockspace's last recovery (recover_done; the
	 * DLM's, the same on every node)
	 */
	atomic_t generation;
	/*
	 * 1 from the DLM's recover_prep to its recover_done (the DLM has
	 * stopped locking: dlm_lock() would block), and from the join to the
	 * first recover_done (without the DLM's recovery callbacks, always):
	 * requests go through the work item meanwhile. Read without a lock:
	 * a request that reads a stale 0 is the race described at the top.
	 */
	atomic_t recovering;
	/* locks of the space still alive, also those being cleaned up */
	atomic_t nlocks;
	wait_queue_head_t idle;
	/*
	 * gate: woken when a recovery ends (recover_done) and when the leave
	 * gives up on the DLM (abandoned); the work items wait on it before
	 * they call the DLM while it recovers (odlm_gate())
	 */
	wait_queue_head_t gate;
	/*
	 * the DLM has called this space's recover_done once: its recovery
	 * callbacks are this space's (not without the DLM's
	 * recover_callbacks, nor in a lockspace another joiner made first on
	 * this node, which keeps that one's callbacks: dlm_new_lockspace()
	 * returns 0 all the same, and recovering then stays 1). Until then
	 * the gate holds nobody back. Written once (WRITE_ONCE()).
	 */
	bool has_cb;
	/*
	 * Set once by odlm_leave() when it gives up on the DLM: the work items
	 * make no more DLM calls and free nothing (see odlm_leave())
	 */
	bool abandoned;
	/* the work items of the space's locks (drained by odlm_leave()) */
	struct workqueue_struct *wq;
	/* the anchors (see above), under anchor_lock */
	spinlock_t anchor_lock;
	DECLARE_HASHTABLE(anchors, ODLM_ANCHOR_BITS);
	struct list_head lru;
	unsigned int nanchors;
	bool leaving;
	char name[ODLM_LS_LEN];
};

/* The state of a lock's conversion of convert_async */
enum odlm_cvt {
	ODLM_CVT_NONE,		/* none, or its outcome read */
	ODLM_CVT_QUEUED,	/* asked, for the conversion work to make */
	ODLM_CVT_MADE,		/* an upgrade in the DLM: its AST, ast, says */
};

struct ordlock_backend_lock {
	struct ordlock_backend_space *space;
	struct dlm_lksb lksb;
	/* the value block: lvb[0] the key's fencing value, the rest zero */
	__le64 lvb[ODLM_LVB_LEN / 8];
	/* the space's recovery generation when the request or conversion began */
	u32 gen;
	/* an exclusive lock written by set_value(): its release writes lvb */
	bool write_lvb;
	/*
	 * set before the dlm_unlock() of the granted lock (a direct release,
	 * or the clean-up work's): that unlock's AST frees the lock (nobody
	 * waits for it)
	 */
	bool releasing;
	/*
	 * the AST of the operation in flight (complete_all(): a waiter does
	 * not consume it, so completion_done() tells whether it came; re-armed
	 * before the unlock); status its sb_status
	 */
	struct completion ast;
	int status;
	/* lock_async: called once when the request ends; under done_lock */
	spinlock_t done_lock;
	void (*done)(void *data);
	void *done_data;
	struct work_struct request;
	struct work_struct cleanup;
	/*
	 * revert: the lock's conversion work: it undoes a conversion its
	 * caller gave up on, finishes a downgrade nobody waits for (both
	 * asked by revert_asked), then makes the conversion of convert_async
	 * (cvt_state ODLM_CVT_QUEUED); idle is complete while it has nothing
	 * left to do. revert_asked, cvt_* and the switches of idle under
	 * done_lock.
	 */
	struct work_struct revert;
	struct completion idle;
	bool revert_asked;
	enum odlm_cvt cvt_state;
	bool cvt_detached;
	int cvt_mode;
	u32 cvt_flags;
	void (*cvt_done)(void *data);
	void *cvt_data;
	int old_mode;
	int mode;
	u32 flags;
	u32 rank;
	u64 id;
	char res[ODLM_RES_LEN];
};

/*
 * The last lock's put wakes the leaving task under the wait queue's lock,
 * which odlm_leave() takes before it frees the space
 */
static void odlm_space_put_lock(struct ordlock_backend_space *space)
{
	unsigned long flags;

	spin_lock_irqsave(&space->idle.lock, flags);
	if (atomic_dec_and_test(&space->nlocks))
		wake_up_locked(&space->idle);
	spin_unlock_irqrestore(&space->idle.lock, flags);
}

/*
 * Whether odlm_leave() gave up on the DLM of @space: the caller (a work
 * item) then makes no DLM call and frees nothing of what it was doing
 * (the lock stays allocated and counted: odlm_leave() accounts for it)
 */
static bool odlm_abandoned(struct ordlock_backend_space *space)
{
	return READ_ONCE(space->abandoned);
}

/*
 * Before a work item calls the DLM: wait while the lockspace recovers (a
 * dlm_lock() or dlm_unlock() would block inside the DLM, uninterruptibly,
 * and forever if the recovery never ends), until the recovery ends or the
 * leave gives up. Return: 0 (call the DLM), or -ESHUTDOWN (abandoned).
 * Without the recovery callbacks (has_cb) the state is unknown: it passes.
 */
static int odlm_gate(struct ordlock_backend_space *space)
{
	might_sleep();
	if (READ_ONCE(space->has_cb))
		wait_event_idle(space->gate,
				!atomic_read(&space->recovering) ||
				odlm_abandoned(space));
	return odlm_abandoned(space) ? -ESHUTDOWN : 0;
}

/*
 * A work item waits for the AST @done of an operation it made: until it
 * came (0) or the leave gave up on the DLM (-ESHUTDOWN), looking at the
 * latter every 200 ms (the AST's completion has its own wait queue)
 */
static int odlm_wait_ast(struct ordlock_backend_space *space,
			 struct completion *done)
{
	while (!wait_for_completion_timeout(done, HZ / 5))
		if (odlm_abandoned(space))
			return -ESHUTDOWN;
	return 0;
}

static void odlm_anchor_ast(void *arg)
{
	struct odlm_anchor *a = arg;
	struct ordlock_backend_space *space = a->space;

	if (!a->unlocking) {
		complete(&a->granted);
		return;
	}
	kfree(a);
	odlm_space_put_lock(space);
}

/* Release an anchor that is granted and no longer in the hash */
static void odlm_anchor_drop(struct odlm_anchor *a)
{
	struct ordlock_backend_space *space = a->space;
	int ret;

	a->unlocking = true;
	ret = dlm_unlock(space->ls, a->lksb.sb_lkid, 0, &a->lksb, a);
	if (ret) {
		/* no AST follows */
		pr_warn_ratelimited("%s: releasing the anchor of %08x:%016llx failed: %d\n",
				    space->name, a->rank, a->id, ret);
		kfree(a);
		odlm_space_put_lock(space);
	}
}

static struct odlm_anchor *odlm_anchor_find(struct ordlock_backend_space *space,
					    u32 rank, u64 id)
{
	struct odlm_anchor *a;

	lockdep_assert_held(&space->anchor_lock);
	hash_for_each_possible(space->anchors, a, hnode, id ^ rank)
		if (a->rank == rank && a->id == id)
			return a;
	return NULL;
}

/*
 * Whether this node anchors key (@rank, @id) already (it is then the most
 * recently used), or needs none (max_anchors 0). Never sleeps.
 */
static bool odlm_anchored(struct ordlock_backend_space *space, u32 rank,
			  u64 id)
{
	struct odlm_anchor *a;

	spin_lock(&space->anchor_lock);
	a = odlm_anchor_find(space, rank, id);
	if (a)
		list_move_tail(&a->lru, &space->lru);
	spin_unlock(&space->anchor_lock);
	return a || !max_anchors;
}

/*
 * Make sure this node anchors key (@rank, @id), resource @res: from the
 * request work, which may wait for the NL grant (it never waits for
 * anyone: NL is compatible with every mode, and DLM_LKF_EXPEDITE has the
 * DLM grant it at once, not behind the requests queued for the key: a
 * try-lock's first use of a key waited for those before)
 */
static void odlm_anchor(struct ordlock_backend_space *space, const char *res,
			u32 rank, u64 id)
{
	struct odlm_anchor *a, *victim = NULL;
	int ret;

	if (odlm_anchored(space, rank, id))
		return;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return;
	a->space = space;
	a->rank = rank;
	a->id = id;
	a->lksb.sb_lvbptr = (char *)a->lvb;
	init_completion(&a->granted);
	atomic_inc(&space->nlocks);
	/* the generation before the grant: a recovery after it is seen */
	a->gen = atomic_read(&space->generation);
	ret = odlm_gate(space);
	if (!ret)
		ret = dlm_lock(space->ls, DLM_LOCK_NL, &a->lksb,
			       DLM_LKF_VALBLK | DLM_LKF_EXPEDITE, res,
			       strlen(res), 0, odlm_anchor_ast, a, NULL);
	if (!ret) {
		if (odlm_wait_ast(space, &a->granted))
			/* abandoned: its AST may still come; counted, kept */
			return;
		ret = a->lksb.sb_status;
	}
	if (ret) {
		/* not granted: no lock to release */
		pr_debug("%s: anchor of %s not taken: %d\n", space->name, res, ret);
		kfree(a);
		odlm_space_put_lock(space);
		return;
	}
	spin_lock(&space->anchor_lock);
	if (space->leaving || odlm_anchor_find(space, rank, id)) {
		spin_unlock(&space->anchor_lock);
		/* abandoned: kept, counted (odlm_leave()) */
		if (!odlm_gate(space))
			odlm_anchor_drop(a);
		return;
	}
	hash_add(space->anchors, &a->hnode, id ^ rank);
	list_add_tail(&a->lru, &space->lru);
	if (++space->nanchors > max_anchors) {
		victim = list_first_entry(&space->lru, struct odlm_anchor, lru);
		hash_del(&victim->hnode);
		list_del(&victim->lru);
		space->nanchors--;
	}
	spin_unlock(&space->anchor_lock);
	if (victim && !odlm_gate(space))
		odlm_anchor_drop(victim);
}

/*
 * The operation in flight ended with @status: complete the AST and call
 * the done hook of lock_async, once. All under done_lock, which
 * odlm_lock_free() takes before it frees @l: the party woken by the
 * completion may free @l at once, and this must not touch @l after.
 */
static void odlm_complete(struct ordlock_backend_lock *l, int status)
{
	void (*done)(void *data);

	spin_lock_bh(&l->done_lock);
	l->status = status;
	complete_all(&l->ast);
	done = l->done;
	l->done = NULL;
	if (done)
		done(l->done_data);
	spin_unlock_bh(&l->done_lock);
}

static void odlm_lock_free(struct ordlock_backend_lock *l);

static void odlm_ast(void *arg)
{
	struct ordlock_backend_lock *l = arg;

	if (l->releasing) {
		/* the release's unlock: nobody waits for it */
		pr_debug("%s: %s: unlocked, status %d\n", l->space->name,
			 l->res, l->lksb.sb_status);
		odlm_lock_free(l);
		return;
	}
	odlm_complete(l, l->lksb.sb_status);
}

/*
 * Make the request of @l (mode and flags set, the AST re-armed): by the
 * request work, or by the caller itself (odlm_direct())
 */
static void odlm_request(struct ordlock_backend_lock *l)
{
	int ret;

	ret = dlm_lock(l->space->ls, l->mode, &l->lksb, l->flags, l->res,
		       ORDLOCK_DLM_RES_LEN, 0, odlm_ast, l, NULL);
	if (ret)
		/* no AST follows a refused request */
		odlm_complete(l, ret);
}

static void odlm_request_fn(struct work_struct *work)
{
	struct ordlock_backend_lock *l =
		container_of(work, struct ordlock_backend_lock, request);

	pr_debug("%s: %s: requested by the work item\n", l->space->name,
		 l->res);
	odlm_anchor(l->space, l->res, l->rank, l->id);
	/* abandoned: nobody waits for it but work items, which look too */
	if (odlm_gate(l->space))
		return;
	odlm_request(l);
}

/*
 * Make the request of @l from a caller that may sleep: directly when no
 * recovery is in progress and the key is anchored (see the top), else by
 * the request work. Return: whether the request was made directly (it is
 * then in the DLM, or failed, when this returns: no work to wait for).
 */
static bool odlm_direct(struct ordlock_backend_lock *l)
{
	if (!atomic_read(&l->space->recovering) &&
	    odlm_anchored(l->space, l->rank, l->id)) {
		odlm_request(l);
		return true;
	}
	queue_work(l->space->wq, &l->request);
	return false;
}

static void odlm_lock_free(struct ordlock_backend_lock *l)
{
	struct ordlock_backend_space *space = l->space;

	/* the last odlm_complete() has let go of @l (see there) */
	spin_lock_bh(&l->done_lock);
	spin_unlock_bh(&l->done_lock);
	kfree(l);
	odlm_space_put_lock(space);
}

/* dlm_unlock() with @flags, retried while another operation is in flight */
static int odlm_unlock_retry(struct ordlock_backend_lock *l, u32 flags)
{
	int ret;

	for (;;) {
		ret = odlm_gate(l->space);
		if (ret)
			return ret;
		ret = dlm_unlock(l->space->ls, l->lksb.sb_lkid, flags, &l->lksb,
				 l);
		if (ret != -EBUSY)
			return ret;
		/* a cancel has nothing to do once the request completed */
		if ((flags & DLM_LKF_CANCEL) && completion_done(&l->ast))
			return ret;
		msleep(20);
	}
}

static void odlm_cleanup_fn(struct work_struct *work)
{
	struct ordlock_backend_lock *l =
		container_of(work, struct ordlock_backend_lock, cleanup);
	int ret;

	/* a conversion given up on is reverted first */
	flush_work(&l->revert);
	/* dlm_lock() has returned: sb_lkid is set, or the request failed */
	flush_work(&l->request);
	/* abandoned: l may still be in the DLM; odlm_leave() accounts for it */
	if (odlm_abandoned(l->space))
		return;
	if (!completion_done(&l->ast)) {
		/* still queued in the DLM: cancel; one AST says who won */
		ret = odlm_unlock_retry(l, DLM_LKF_CANCEL);
		if (ret == -ESHUTDOWN)
			return;
		if (ret && ret != -EBUSY)
			pr_warn_ratelimited("%s: cancel of %s failed: %d\n",
					    l->space->name, l->res, ret);
		if (odlm_wait_ast(l->space, &l->ast))
			return;
		pr_debug("%s: %s: cancel %d, then status %d\n", l->space->name,
			 l->res, ret, l->status);
	}
	if (!l->status) {
		/*
		 * Granted (a release, or a grant that beat the cancel). Only a
		 * lock that was used writes the value block: writing back what
		 * a grant read would mark a lost value block valid again. The
		 * unlock's AST frees the lock: l is not touched after a
		 * dlm_unlock() that succeeded.
		 */
		pr_debug("%s: %s: released by the work item\n",
			 l->space->name, l->res);
		l->releasing = true;
		ret = odlm_unlock_retry(l, l->write_lvb ? DLM_LKF_VALBLK : 0);
		if (!ret || ret == -ESHUTDOWN)
			return;
		pr_warn_ratelimited("%s: unlock of %s failed: %d\n",
				    l->space->name, l->res, ret);
	}
	odlm_lock_free(l);
}

static long odlm_timeout(ktime_t deadline)
{
	s64 ns;

	if (deadline == KTIME_MAX)
		return MAX_SCHEDULE_TIMEOUT;
	ns = ktime_to_ns(ktime_sub(deadline, ktime_get()));
	return ns > 0 ? nsecs_to_jiffies(ns) + 1 : 0;
}

/*
 * A conversion whose caller gave up. A downgrade (EX to PR) is not undone:
 * its caller went on as if it had been granted (shared on this node while
 * the cluster may still say exclusive is safe), so only wait for its AST.
 * An upgrade is cancelled, and if the grant won the race, converted back
 * down (always granted), writing the value block only if the grant found
 * it valid (writing back a lost one would mark it valid again). Either way
 * the lock ends in its old mode (an upgrade) or the new one (a downgrade).
 */
static void odlm_revert(struct ordlock_backend_lock *l)
{
	int ret;

	flush_work(&l->request);
	if (l->old_mode == DLM_LOCK_EX && l->mode == DLM_LOCK_PR) {
		if (odlm_wait_ast(l->space, &l->ast))
			return;
		if (l->status) {
			/* still exclusive in the DLM, shared here: safe */
			pr_warn_ratelimited("%s: converting %s down failed: %d\n",
					    l->space->name, l->res, l->status);
			l->mode = DLM_LOCK_EX;
		}
		l->status = 0;
		return;
	}
	if (!completion_done(&l->ast)) {
		ret = odlm_unlock_retry(l, DLM_LKF_CANCEL);
		if (ret == -ESHUTDOWN)
			return;
		if (ret && ret != -EBUSY)
			pr_warn_ratelimited("%s: cancel of the conversion of %s failed: %d\n",
					    l->space->name, l->res, ret);
		if (odlm_wait_ast(l->space, &l->ast))
			return;
	}
	if (!l->status) {
		/* converted after all: back to the old mode */
		reinit_completion(&l->ast);
		l->mode = l->old_mode;
		l->flags = DLM_LKF_CONVERT;
		if (!(l->lksb.sb_flags & DLM_SBF_VALNOTVALID))
			l->flags |= DLM_LKF_VALBLK;
		queue_work(l->space->wq, &l->request);
		flush_work(&l->request);
		if (odlm_wait_ast(l->space, &l->ast))
			return;
		if (l->status)
			pr_warn_ratelimited("%s: converting %s back failed: %d\n",
					    l->space->name, l->res, l->status);
	}
	l->mode = l->old_mode;
	/* the granted lock's status, for the release */
	l->status = 0;
}

/*
 * Make the conversion asked by convert_async (from the conversion work,
 * which has ended what earlier conversions left to it)
 */
static void odlm_cvt_make(struct ordlock_backend_lock *l)
{
	bool same;

	/* the previous request's dlm_lock() has returned */
	flush_work(&l->request);
	spin_lock_bh(&l->done_lock);
	if (l->cvt_state != ODLM_CVT_QUEUED) {
		/* abandoned before it was made: nothing to do */
		spin_unlock_bh(&l->done_lock);
		return;
	}
	l->old_mode = l->mode;
	l->mode = l->cvt_mode;
	l->gen = atomic_read(&l->space->generation);
	same = l->mode == l->old_mode;
	/* down from EX writes the value block, up to EX reads it */
	l->flags = DLM_LKF_CONVERT | DLM_LKF_VALBLK | l->cvt_flags;
	reinit_completion(&l->ast);
	if (l->cvt_detached) {
		/* a downgrade: nobody waits, this work finishes it next */
		l->cvt_state = ODLM_CVT_NONE;
		l->revert_asked = !same;
	} else {
		l->cvt_state = ODLM_CVT_MADE;
		l->done = l->cvt_done;
		l->done_data = l->cvt_data;
	}
	l->cvt_done = NULL;
	spin_unlock_bh(&l->done_lock);
	pr_debug("%s: %s convert to %s%s (async)\n", l->space->name, l->res,
		 l->mode == DLM_LOCK_EX ? "ex" : "sh",
		 same ? ": in that mode already" : "");
	if (same)
		/* a downgrade the DLM refused before left it in that mode */
		odlm_complete(l, 0);
	else if (!odlm_gate(l->space))
		odlm_request(l);
}

/*
 * The lock's conversion work: what a conversion given up on (or a
 * downgrade nobody waits for) left to do first, then the conversion of
 * convert_async, until nothing is left; idle is complete then
 */
static void odlm_revert_fn(struct work_struct *work)
{
	struct ordlock_backend_lock *l =
		container_of(work, struct ordlock_backend_lock, revert);

	for (;;) {
		spin_lock_bh(&l->done_lock);
		if (l->revert_asked) {
			l->revert_asked = false;
			spin_unlock_bh(&l->done_lock);
			odlm_revert(l);
			continue;
		}
		if (l->cvt_state != ODLM_CVT_QUEUED) {
			complete_all(&l->idle);
			spin_unlock_bh(&l->done_lock);
			return;
		}
		spin_unlock_bh(&l->done_lock);
		odlm_cvt_make(l);
	}
}

/*
 * The errno of a failed request's status (@what: "lock" or "conversion"),
 * as ops->lock() and ops->convert() return it
 */
static int odlm_errno(struct ordlock_backend_lock *l, int status, const char *what)
{
	switch (status) {
	case -EAGAIN:
	case -EDEADLK:
	case -ENOMEM:
		return status;
	default:
		pr_warn_ratelimited("%s: %s of %s failed: %d\n",
				    l->space->name, what, l->res, status);
		return -EIO;
	}
}

static int odlm_convert(struct ordlock_backend_lock *l, bool exclusive,
			u32 flags, ktime_t deadline)
{
	int mode = exclusive ? DLM_LOCK_EX : DLM_LOCK_PR;
	bool direct;
	long left;
	int status;

	/* an earlier conversion still being reverted */
	left = wait_for_completion_interruptible_timeout(&l->idle,
							 odlm_timeout(deadline));
	if (left <= 0)
		return left ? -EINTR : -ETIMEDOUT;
	if (mode == l->mode)
		return 0;
	l->old_mode = l->mode;
	l->mode = mode;
	l->gen = atomic_read(&l->space->generation);
	/* down from EX writes the value block, up to EX reads it */
	l->flags = DLM_LKF_CONVERT | DLM_LKF_VALBLK;
	if (flags & ORDLOCK_BACKEND_TRY)
		l->flags |= DLM_LKF_NOQUEUE;
	reinit_completion(&l->ast);
	direct = odlm_direct(l);
	left = wait_for_completion_interruptible_timeout(&l->ast,
							 odlm_timeout(deadline));
	if (left <= 0) {
		spin_lock_bh(&l->done_lock);
		l->revert_asked = true;
		reinit_completion(&l->idle);
		spin_unlock_bh(&l->done_lock);
		queue_work(l->space->wq, &l->revert);
		/* a downgrade cannot fail: the revert work finishes it */
		if (!exclusive)
			return 0;
		return left ? -EINTR : -ETIMEDOUT;
	}
	if (!direct)
		flush_work(&l->request);
	status = l->status;
	pr_debug("%s: %s convert to %s: status %d\n", l->space->name, l->res,
		 exclusive ? "ex" : "sh", status);
	if (!status)
		return 0;
	/* refused: still granted in the old mode */
	l->mode = l->old_mode;
	l->status = 0;
	return odlm_errno(l, status, "conversion");
}

static int odlm_convert_async(struct ordlock_backend_lock *l, bool exclusive,
			      u32 flags, void (*done)(void *data), void *data)
{
	spin_lock_bh(&l->done_lock);
	l->cvt_mode = exclusive ? DLM_LOCK_EX : DLM_LOCK_PR;
	l->cvt_flags = flags & ORDLOCK_BACKEND_TRY ? DLM_LKF_NOQUEUE : 0;
	l->cvt_detached = !exclusive;
	l->cvt_done = exclusive ? done : NULL;
	l->cvt_data = data;
	/*
	 * A downgrade asked but not made yet is replaced by this: the lock
	 * stays exclusive in the DLM, which is what is asked now
	 */
	l->cvt_state = ODLM_CVT_QUEUED;
	reinit_completion(&l->idle);
	spin_unlock_bh(&l->done_lock);
	queue_work(l->space->wq, &l->revert);
	return 0;
}

static int odlm_convert_result(struct ordlock_backend_lock *l, bool abandon)
{
	int status;

	spin_lock_bh(&l->done_lock);
	if (abandon) {
		/* no done hook after this */
		l->done = NULL;
		if (l->cvt_state == ODLM_CVT_MADE) {
			/* cancelled, or converted back after a grant */
			l->revert_asked = true;
			reinit_completion(&l->idle);
			queue_work(l->space->wq, &l->revert);
		}
		/* not made yet: the conversion work drops it */
		l->cvt_state = ODLM_CVT_NONE;
		spin_unlock_bh(&l->done_lock);
		return 0;
	}
	if (l->cvt_state == ODLM_CVT_QUEUED ||
	    (l->cvt_state == ODLM_CVT_MADE && !completion_done(&l->ast))) {
		spin_unlock_bh(&l->done_lock);
		return -EINPROGRESS;
	}
	l->cvt_state = ODLM_CVT_NONE;
	status = l->status;
	if (status) {
		/* refused: still granted in the old mode */
		l->mode = l->old_mode;
		l->status = 0;
	}
	spin_unlock_bh(&l->done_lock);
	pr_debug("%s: %s convert to %s (async): status %d\n", l->space->name,
		 l->res, l->cvt_mode == DLM_LOCK_EX ? "ex" : "sh", status);
	return status ? odlm_errno(l, status, "conversion") : 0;
}

/* A new lock of key (@rank, @id) of @space, not requested yet */
/*
 * The resource name of key (@rank, @id) into @buf (ODLM_RES_LEN bytes):
 * exactly what ORDLOCK_DLM_RES_FMT prints, without vsnprintf()'s parse of
 * the format on every lock (a fifth of the seam's own instructions)
 */
static void odlm_res_name(char *buf, u32 rank, u64 id)
{
	int i;

	for (i = 7; i >= 0; i--, rank >>= 4)
		buf[i] = hex_asc_lo(rank);
	buf[8] = ':';
	for (i = ORDLOCK_DLM_RES_LEN - 1; i > 8; i--, id >>= 4)
		buf[i] = hex_asc_lo(id);
	buf[ORDLOCK_DLM_RES_LEN] = '\0';
}

static struct ordlock_backend_lock *odlm_lock_new(struct ordlock_backend_space *space,
						  u32 rank, u64 id,
						  bool exclusive, u32 flags)
{
	struct ordlock_backend_lock *l;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return NULL;
	l->space = space;
	atomic_inc(&space->nlocks);
	l->lksb.sb_lvbptr = (char *)l->lvb;
	init_completion(&l->ast);
	INIT_WORK(&l->request, odlm_request_fn);
	INIT_WORK(&l->cleanup, odlm_cleanup_fn);
	INIT_WORK(&l->revert, odlm_revert_fn);
	init_completion(&l->idle);
	complete_all(&l->idle);
	l->mode = exclusive ? DLM_LOCK_EX : DLM_LOCK_PR;
	l->flags = DLM_LKF_VALBLK;
	if (flags & ORDLOCK_BACKEND_TRY)
		l->flags |= DLM_LKF_NOQUEUE;
	l->rank = rank;
	l->id = id;
	l->gen = atomic_read(&space->generation);
	odlm_res_name(l->res, rank, id);
	spin_lock_init(&l->done_lock);
	return l;
}

static int odlm_lock(struct ordlock_backend_space *space, u32 rank, u64 id,
		     bool exclusive, u32 flags, ktime_t deadline,
		     struct ordlock_backend_lock **out)
{
	struct ordlock_backend_lock *l;
	bool direct, at_once;
	long left;
	int status;

	l = odlm_lock_new(space, rank, id, exclusive, flags);
	if (!l)
		return -ENOMEM;

	direct = odlm_direct(l);
	/* the AST came inside dlm_lock() (compat.h's ORDLOCK_DLM_LSFL_CB) */
	at_once = direct && completion_done(&l->ast);
	left = wait_for_completion_interruptible_timeout(&l->ast,
							 odlm_timeout(deadline));
	if (left <= 0) {
		/* the deadline passed or a signal came: nothing is held */
		queue_work(l->space->wq, &l->cleanup);
		return left ? -EINTR : -ETIMEDOUT;
	}
	/* a request by the work: dlm_lock() has returned (sb_lkid set) */
	if (!direct)
		flush_work(&l->request);
	status = l->status;
	pr_debug("%s: %s %s%s%s: status %d%s\n", space->name, l->res,
		 exclusive ? "ex" : "sh", l->flags & DLM_LKF_NOQUEUE ? " try" : "",
		 direct ? "" : " (work)", status,
		 at_once ? " (AST in the call)" : "");
	if (!status) {
		*out = l;
		return 0;
	}
	status = odlm_errno(l, status, "lock");
	odlm_lock_free(l);
	return status;
}

static int odlm_lock_async(struct ordlock_backend_space *space, u32 rank,
			   u64 id, bool exclusive, u32 flags,
			   void (*done)(void *data), void *data,
			   struct ordlock_backend_lock **out)
{
	struct ordlock_backend_lock *l;

	l = odlm_lock_new(space, rank, id, exclusive, flags);
	if (!l)
		return -ENOMEM;
	/* nobody else sees l yet */
	l->done = done;
	l->done_data = data;
	*out = l;
	/* a caller that may wait as lock()'s does: the same direct request */
	if (flags & ORDLOCK_BACKEND_DIRECT)
		odlm_direct(l);
	else
		queue_work(l->space->wq, &l->request);
	return 0;
}

/*
 * Release @l in the caller (a *direct* release, no hand-off to the clean-up
 * work) when it is granted with no operation in flight and no recovery is
 * in progress: dlm_unlock() then does not wait for the cluster, and its AST
 * frees the lock. Return: whether it did; otherwise (a request or a
 * conversion in flight or being undone, a recovery, the DLM busy) the
 * clean-up work item does it all.
 */
static bool odlm_release_direct(struct ordlock_backend_lock *l)
{
	int ret;

	/* a conversion given up on: its revert work is not done yet */
	if (!READ_ONCE(direct_release) || !completion_done(&l->idle) ||
	    !completion_done(&l->ast) || l->status ||
	    atomic_read(&l->space->recovering))
		return false;
	/*
	 * Granted: a request made by the work may still be returning from
	 * dlm_lock() (its AST came first); never queued, this returns at once
	 */
	flush_work(&l->request);
	/* before the call: its AST may free l at once */
	pr_debug("%s: %s: released directly\n", l->space->name, l->res);
	l->releasing = true;
	ret = dlm_unlock(l->space->ls, l->lksb.sb_lkid,
			 l->write_lvb ? DLM_LKF_VALBLK : 0, &l->lksb, l);
	if (!ret)
		return true;
	/* no AST follows: the clean-up work retries (-EBUSY) or frees it */
	l->releasing = false;
	pr_debug("%s: %s: the direct release failed (%d): left to the work item\n",
		 l->space->name, l->res, ret);
	return false;
}

static void odlm_unlock(struct ordlock_backend_lock *l)
{
	/* no done hook after this, whatever the request does now */
	spin_lock_bh(&l->done_lock);
	l->done = NULL;
	spin_unlock_bh(&l->done_lock);
	if (odlm_release_direct(l))
		return;
	queue_work(l->space->wq, &l->cleanup);
}

/* The DLM's lock id: written by dlm_lock() in the request (0 before) */
static u32 odlm_lkid(struct ordlock_backend_lock *l)
{
	return READ_ONCE(l->lksb.sb_lkid);
}

static int odlm_lock_result(struct ordlock_backend_lock *l)
{
	int status;

	if (!completion_done(&l->ast))
		return -EINPROGRESS;
	status = l->status;
	pr_debug("%s: %s %s%s (async): status %d\n", l->space->name, l->res,
		 l->mode == DLM_LOCK_EX ? "ex" : "sh",
		 l->flags & DLM_LKF_NOQUEUE ? " try" : "", status);
	if (!status)
		return 0;
	status = odlm_errno(l, status, "lock");
	/*
	 * The request work may not have returned from dlm_lock() yet: the
	 * clean-up work waits for it and frees the lock (nothing is held)
	 */
	odlm_unlock(l);
	return status;
}

/* the reasons of odlm_untrusted() that are news (logged) */
static const char odlm_why_invalid[] =
	"flagged invalid by the DLM (lost with a dead holder or master)";
static const char odlm_why_below[] = "below what this node last knew of the key";

/*
 * Why the value block of granted lock @l cannot be trusted (see "The
 * fencing floor" at the top), or NULL; @a: this node's anchor of the key,
 * or NULL; @gen: the space's generation now. Under anchor_lock.
 */
static const char *odlm_untrusted(struct ordlock_backend_lock *l,
				  struct odlm_anchor *a, u64 v, u32 gen)
{
	if (l->lksb.sb_flags & DLM_SBF_VALNOTVALID)
		return odlm_why_invalid;
	if (!v)
		return "zero (no lock kept it, or rebuilt from none)";
	if (atomic_read(&l->space->recovering) || gen != l->gen)
		return "read across a recovery";
	if (a && a->gen != gen)
		return "a recovery since this node last read it";
	if (a && v < a->seen)
		return odlm_why_below;
	return NULL;
}

/*
 * The fencing floor of a granted lock: the value block's value when it can
 * be trusted, otherwise at least the wall clock in microseconds (and what
 * this node last knew of the key). Kept in the lock's own value block
 * (see the top) and in this node's anchor of the key.
 */
static u64 odlm_value(struct ordlock_backend_lock *l)
{
	struct ordlock_backend_space *space = l->space;
	u64 read = le64_to_cpu(l->lvb[0]), v = read;
	u32 gen = atomic_read(&space->generation);
	struct odlm_anchor *a;
	const char *why;

	spin_lock(&space->anchor_lock);
	a = odlm_anchor_find(space, l->rank, l->id);
	why = odlm_untrusted(l, a, v, gen);
	if (why)
		v = max_t(u64, v, ktime_to_us(ktime_get_real()));
	if (a) {
		v = max(v, a->seen);
		a->seen = v;
		a->gen = gen;
	}
	spin_unlock(&space->anchor_lock);
	l->lvb[0] = cpu_to_le64(v);
	if (!why)
		return v;
	/* a lost value block or a rollback is news; a key's first use is not */
	if (why == odlm_why_invalid || why == odlm_why_below)
		pr_info_ratelimited("%s: %s: value block %s (%llu): fencing floor %llu\n",
				    space->name, l->res, why, read, v);
	else
		pr_debug("%s: %s: value block %s (%llu): fencing floor %llu\n",
			 space->name, l->res, why, read, v);
	return v;
}

static void odlm_set_value(struct ordlock_backend_lock *l, u64 value)
{
	struct ordlock_backend_space *space = l->space;
	struct odlm_anchor *a;

	if (l->mode != DLM_LOCK_EX)
		return;
	l->lvb[0] = cpu_to_le64(value);
	l->write_lvb = true;
	spin_lock(&space->anchor_lock);
	a = odlm_anchor_find(space, l->rank, l->id);
	if (a && a->seen < value)
		a->seen = value;
	spin_unlock(&space->anchor_lock);
}

/* The DLM stopped locking for a recovery: requests take the work item */
static void odlm_recover_prep(void *arg)
{
	struct ordlock_backend_space *space = arg;

	atomic_set(&space->recovering, 1);
	pr_debug("%s: recovery begins\n", space->name);
}

static void odlm_recover_done(void *arg, struct dlm_slot *slots, int num_slots,
			      int our_slot, u32 generation)
{
	struct ordlock_backend_space *space = arg;

	atomic_set(&space->generation, generation);
	WRITE_ONCE(space->has_cb, true);
	atomic_set(&space->recovering, 0);
	wake_up_all(&space->gate);
	pr_debug("%s: recovered, generation %u, %d members\n", space->name,
		 generation, num_slots);
}

static const struct dlm_lockspace_ops odlm_ls_ops = {
	.recover_prep = odlm_recover_prep,
	.recover_done = odlm_recover_done,
};

static struct ordlock_backend_space *odlm_join(const char *domain)
{
	struct ordlock_backend_space *space;
	const char *want = cluster && *cluster ? cluster : NULL;
	int ret, ops_result = 0;

	space = kzalloc(sizeof(*space), GFP_KERNEL);
	if (!space)
		return ERR_PTR(-ENOMEM);
	atomic_set(&space->nlocks, 0);
	atomic_set(&space->recovering, 1);
	init_waitqueue_head(&space->idle);
	init_waitqueue_head(&space->gate);
	spin_lock_init(&space->anchor_lock);
	hash_init(space->anchors);
	INIT_LIST_HEAD(&space->lru);
	if (snprintf(space->name, sizeof(space->name), ODLM_LS_PREFIX "%s",
		     domain) >= sizeof(space->name)) {
		ret = -ENAMETOOLONG;
		goto err;
	}
	/* a workqueue's name has room for 23 characters (newer kernels warn) */
	space->wq = alloc_workqueue("odlm/%.18s", WQ_UNBOUND | WQ_MEM_RECLAIM,
				    0, domain);
	if (!space->wq) {
		ret = -ENOMEM;
		goto err;
	}
	/*
	 * 1: the lockspace existed on this node already, and is shared (its
	 * flags are the first joiner's)
	 */
	ret = dlm_new_lockspace(space->name, want, ORDLOCK_DLM_LSFL_CB,
				ODLM_LVB_LEN, &odlm_ls_ops, space, &ops_result,
				&space->ls);
	if (ret < 0) {
		switch (ret) {
		case -EUNATCH:
			pr_warn("%s: no cluster: dlm_controld is not running\n",
				space->name);
			ret = -ENOTCONN;
			break;
		case -EBADR:
			pr_warn("%s: this node is not in cluster \"%s\"\n",
				space->name, want);
			ret = -ENOTCONN;
			break;
		default:
			pr_warn("%s: joining the lockspace failed: %d\n",
				space->name, ret);
			break;
		}
		goto err_wq;
	}
	pr_debug("%s: joined; ASTs %s\n", space->name,
		 ORDLOCK_DLM_LSFL_CB ? "called at once (DLM_LSFL_SOFTIRQ)" :
		 "by the DLM's callback worker");
	if (ops_result)
		pr_info("%s: no recovery callbacks (%d): every request goes through the work item, and every value block is read as untrusted (the fencing floor is the clock)\n",
			space->name, ops_result);
	return space;
err_wq:
	destroy_workqueue(space->wq);
err:
	kfree(space);
	return ERR_PTR(ret);
}

/*
 * The rest of the leave's bound (leave_timeout_ms from @start), in
 * jiffies; at least 1, so that a wait that ran out says so
 */
static long odlm_leave_left(unsigned long end)
{
	return time_before(jiffies, end) ? (long)(end - jiffies) : 1;
}

/*
 * A wait of the leave until *@v is 0 (woken on @wq), until @end at most;
 * @killable: ended by a fatal signal too. Return: as
 * wait_event_killable_timeout() (0: timed out, < 0: a fatal signal).
 */
static long odlm_leave_wait(wait_queue_head_t *wq, atomic_t *v,
			    unsigned long end, bool killable)
{
	if (killable)
		return wait_event_killable_timeout(*wq, !atomic_read(v),
						   odlm_leave_left(end));
	return wait_event_timeout(*wq, !atomic_read(v), odlm_leave_left(end));
}

/*
 * Give up on the DLM of @space (odlm_leave(), its bound passed or a fatal
 * signal): the work items make no more DLM call and exit, then the
 * lockspace is released by force (level 2: whatever locks it holds). The
 * DLM frees its own lock blocks and stops its callbacks before it returns
 * 0 for the last user of the lockspace on this node, so that no AST comes
 * after it: the anchors never released (@anchors) are freed then. The
 * locks the work items left (their AST may have been due until the
 * release) and the releases whose AST never came are not freed but
 * leaked, counted in the log line: ordlock_dlm.ko does not know them all
 * by address, and an AST of one before the release could have freed it.
 * If the DLM does not release the lockspace (another user of it on this
 * node, or an error), an AST may still come: everything is leaked,
 * the space too. Return: @err.
 */
static int odlm_leave_force(struct ordlock_backend_space *space,
			    struct list_head *anchors, int err)
{
	struct odlm_anchor *a, *tmp;
	unsigned int nanchors = 0;
	int ret, nlocks;

	WRITE_ONCE(space->abandoned, true);
	wake_up_all(&space->gate);
	/* the work items see it within 200 ms and exit (odlm_wait_ast()) */
	drain_workqueue(space->wq);
	list_for_each_entry(a, anchors, lru)
		nanchors++;
	ret = dlm_release_lockspace(space->ls, 2);
	/* what the ASTs the release let run did not free */
	nlocks = atomic_read(&space->nlocks);
	if (ret) {
		pr_err("%s: leaving by force (%s): the DLM kept the lockspace (%d): leaked it with %d locks (%u of them anchors)\n",
		       space->name, err == -EINTR ? "a fatal signal" : "timed out",
		       ret, nlocks, nanchors);
		destroy_workqueue(space->wq);
		return err;
	}
	/*
	 * No AST comes any more (the last one's put of the lock count has let
	 * go of the space too): the anchors never released can go
	 */
	spin_lock_irq(&space->idle.lock);
	spin_unlock_irq(&space->idle.lock);
	list_for_each_entry_safe(a, tmp, anchors, lru) {
		list_del(&a->lru);
		kfree(a);
	}
	pr_err("%s: left by force (%s; the DLM %s): abandoned %u anchors (freed) and %d locks in flight (leaked)\n",
	       space->name, err == -EINTR ? "a fatal signal" : "timed out",
	       atomic_read(&space->recovering) ? "never ended its recovery" :
	       "did not answer every release", nanchors, nlocks - (int)nanchors);
	destroy_workqueue(space->wq);
	kfree(space);
	return err;
}

/*
 * Leave @space, which no lock of ordlock uses any more (its releases may
 * still be in flight): release the anchors once the DLM is not recovering,
 * wait for every lock to be gone, release the lockspace. Bounded by
 * leave_timeout_ms (the whole of it), and ended early by a fatal signal
 * (not in a task that is exiting: the last owner's close in the exit of
 * a killed process leaves as patiently as any other): then
 * odlm_leave_force(). Return: 0, or -ETIMEDOUT or -EINTR (left by force:
 * see there).
 */
static int odlm_leave(struct ordlock_backend_space *space)
{
	unsigned long end = jiffies + msecs_to_jiffies(READ_ONCE(leave_timeout_ms));
	bool killable = !(current->flags & PF_EXITING);
	struct odlm_anchor *a, *tmp;
	struct hlist_node *next;
	LIST_HEAD(anchors);
	unsigned int bkt;
	long left;
	int ret;

	might_sleep();
	/* No lock of the space is left but anchors: release them too */
	spin_lock(&space->anchor_lock);
	space->leaving = true;
	hash_for_each_safe(space->anchors, bkt, next, a, hnode) {
		hash_del(&a->hnode);
		list_move_tail(&a->lru, &anchors);
	}
	space->nanchors = 0;
	spin_unlock(&space->anchor_lock);

	/*
	 * dlm_unlock() blocks inside the DLM while the lockspace recovers,
	 * uninterruptibly, for ever if the recovery never ends (this node
	 * lost the cluster, dlm_controld died): wait for its end here first
	 */
	if (READ_ONCE(space->has_cb)) {
		left = odlm_leave_wait(&space->gate, &space->recovering, end,
				       killable);
		if (left <= 0)
			return odlm_leave_force(space, &anchors,
						left ? -EINTR : -ETIMEDOUT);
	}
	list_for_each_entry_safe(a, tmp, &anchors, lru) {
		list_del(&a->lru);
		odlm_anchor_drop(a);
	}

	/* the releases and cancels still in flight finish first */
	left = odlm_leave_wait(&space->idle, &space->nlocks, end, killable);
	if (left <= 0)
		return odlm_leave_force(space, &anchors,
					left ? -EINTR : -ETIMEDOUT);
	/* the last put has let go of the space (odlm_space_put_lock()) */
	spin_lock_irq(&space->idle.lock);
	spin_unlock_irq(&space->idle.lock);
	ret = dlm_release_lockspace(space->ls, 1);
	if (ret)
		pr_warn("%s: leaving the lockspace failed: %d\n",
			space->name, ret);
	destroy_workqueue(space->wq);
	kfree(space);
	return 0;
}

static const struct ordlock_backend_ops odlm_ops = {
	.join = odlm_join,
	.leave = odlm_leave,
	.lock = odlm_lock,
	.lock_async = odlm_lock_async,
	.lock_result = odlm_lock_result,
	.lkid = odlm_lkid,
	.convert = odlm_convert,
	.unlock = odlm_unlock,
	.value = odlm_value,
	.set_value = odlm_set_value,
	.convert_async = odlm_convert_async,
	.convert_result = odlm_convert_result,
};

static struct ordlock_backend odlm_backend = {
	.name = "dlm",
	.owner = THIS_MODULE,
	.ops = &odlm_ops,
};

static int __init odlm_init(void)
{
	int ret;

	ret = ordlock_backend_register(&odlm_backend);
	if (ret)
		return ret;
	return 0;
}

static void __exit odlm_exit(void)
{
	/* no space is left (each pinned the module): nothing is queued */
	ordlock_backend_unregister(&odlm_backend);
}

module_init(odlm_init);
module_exit(odlm_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ordlock's cluster backend on the Linux DLM");
MODULE_AUTHOR("The ordlock developers");
