// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster variant of requests: a cluster domain's keys are taken in
 * the cluster too, through its backend (backend.h), after the local grant.
 *
 * The request code (request.c) decides local or cluster at one point per
 * operation through the hooks of cluster.h, which return at once for a
 * local domain; the functions here talk to the backend and return an
 * outcome (0, -EINPROGRESS, ORDLOCK_TAKE_WOULD_WAIT or a recorded errno):
 * they never move a request on themselves, the request code continues.
 */
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>

#include "backend.h"
#include "cluster.h"
#include "domain.h"
#include "keys.h"
#include "owner.h"
#include "request.h"
#include "resource.h"
#include "xdetect.h"

/* The fencing value of the key of @hold in the cluster; 0 without a lock */
static u64 ordlock_cluster_value(struct ordlock_hold *hold)
{
	struct ordlock_backend_lock *blk = ordlock_hold_blk(hold);

	return blk ? READ_ONCE(hold->owner->domain->backend)->ops->value(blk) : 0;
}

/*
 * ordlock_cluster_floor() - what the token of a grant of @holds (NULL: of
 * @hold alone) in a cluster domain must be above: the fencing value of
 * each of its keys in the cluster (the value block of the key, which every
 * exclusive release writes). request.c makes the token
 * (ordlock_domain_mint_token()) above it.
 */
u64 ordlock_cluster_floor(struct list_head *holds, struct ordlock_hold *hold)
{
	u64 floor = 0;

	if (!holds)
		return ordlock_cluster_value(hold);
	list_for_each_entry(hold, holds, owner_node)
		floor = max(floor, ordlock_cluster_value(hold));
	return floor;
}

/* Write @token as the fencing value of @hold's key, if exclusive and locked */
static void ordlock_cluster_set_value(struct ordlock_hold *hold, u64 token)
{
	struct ordlock_backend_lock *blk = ordlock_hold_blk(hold);

	if (blk && hold->mode == ORDLOCK_MODE_EXCLUSIVE)
		READ_ONCE(hold->owner->domain->backend)->ops->set_value(blk, token);
}

/*
 * ordlock_cluster_fence() - @token was granted with @holds (NULL: @hold
 * alone) in a cluster domain: it becomes the fencing value in the cluster
 * of each key held exclusively
 */
void ordlock_cluster_fence(struct list_head *holds, struct ordlock_hold *hold,
			   u64 token)
{
	if (!holds) {
		ordlock_cluster_set_value(hold, token);
		return;
	}
	list_for_each_entry(hold, holds, owner_node)
		ordlock_cluster_set_value(hold, token);
}

/*
 * The shortest wait of a try-lock for the cluster's answer: NOQUEUE does
 * not queue, but the answer comes from the key's master node, which may be
 * another one (or recovering)
 */
#define ORDLOCK_CLUSTER_TRY_MS	5000

/* The deadline of the whole request, set when it first needs one */
static ktime_t ordlock_request_deadline(struct ordlock_request *req)
{
	if (!req->deadline)
		req->deadline = ktime_add_ns(ktime_get(),
					     min_t(u64, req->timeout_ns, KTIME_MAX / 4));
	return req->deadline;
}

static int ordlock_cluster_failed(struct ordlock_request *req, int ret);

/* The backend's done hook of an asynchronous request: move it on */
static void ordlock_cluster_done(void *data)
{
	struct ordlock_request *req = data;

	req->notify(&req->w);
}

/*
 * In a domain with policy detect, a wait in the DLM can be chosen as the
 * victim of a cycle across nodes: XD_FAIL (nl_xdetect.c) finds it through
 * owner->xd_req (and wakes owner->xd_task, or the asynchronous request's
 * notify hook), under xdetect.c's lock of waits in the DLM. @on: the wait
 * starts, else ends.
 */
static void ordlock_cluster_xd_arm(struct ordlock_request *req, bool on)
{
	struct ordlock_owner *owner = req->owner;

	lockdep_assert_held(&owner->lock);
	/* an asynchronous upgrade's conversion waits in the backend alone */
	if (on && ((req->convert && req->notify) ||
		   READ_ONCE(owner->domain->policy) != ORDLOCK_POLICY_DETECT))
		return;
	if (!on && !owner->xd_req)
		return;
	ordlock_xd_arm(owner, on ? req : NULL, on && !req->notify ? current : NULL);
}

/*
 * The victim of a cycle across nodes, its wait in the DLM given up: its
 * failure record gets the cycle (the failure is recorded already)
 */
static int ordlock_cluster_xd_victim(struct ordlock_owner *owner, int ret)
{
	lockdep_assert_held(&owner->lock);
	owner->failure.cycle_len = ordlock_xd_take_victim_dlm(owner);
	return ret;
}

/* The DLM's lock id of @req's pending lock (ordlock_xd_lkid()'s reader) */
static u32 ordlock_cluster_req_lkid(struct ordlock_request *req)
{
	const struct ordlock_backend *backend = READ_ONCE(req->owner->domain->backend);
	struct ordlock_hold *hold = req->convert ? req->hold : req->cur;
	struct ordlock_backend_lock *blk = READ_ONCE(*ordlock_hold_blkp(hold));

	return blk && backend && backend->ops->lkid ? backend->ops->lkid(blk) : 0;
}

/**
 * ordlock_cluster_lkid() - the cluster's id of @owner's pending lock, when
 *	it waits in the DLM and XD_FAIL may end that wait (soft edges across
 *	nodes); 0 when not known
 * @owner: the owner, any lock held or none
 *
 * Return: the id, or 0.
 */
u32 ordlock_cluster_lkid(struct ordlock_owner *owner)
{
	return ordlock_xd_lkid(owner, ordlock_cluster_req_lkid);
}

/*
 * The views: @hold, granted locally, waits for its lock (or conversion to
 * @mode) in the cluster from now on; the owner shows the wait as a local
 * one (owner->pending), the hold as waiting for the cluster
 */
static void ordlock_cluster_wait_begin(struct ordlock_request *req,
				       struct ordlock_hold *hold, u32 mode)
{
	struct ordlock_owner *owner = req->owner;

	lockdep_assert_held(&owner->lock);
	WRITE_ONCE(owner->pending_since, ktime_get_ns());
	WRITE_ONCE(owner->pending.rank, hold->res->rank);
	WRITE_ONCE(owner->pending.id, hold->res->id);
	WRITE_ONCE(owner->pending.mode, mode);
	/* the views read the flag, then the time (smp_rmb()) */
	smp_wmb();
	WRITE_ONCE(hold->cluster_wait, true);
	/* a wait in the DLM is a new wait: a generation of its own */
	ordlock_xd_wait_start(owner);
	ordlock_cluster_xd_arm(req, true);
	/*
	 * Announced once it lasts the probe delay (xdetect.c), by the waiting
	 * task (ordlock_cluster_lock_detect()) or the asynchronous request's
	 * poll; an upgrade in the calling task waits inside the backend's
	 * conversion, which nothing interrupts: announced at once
	 */
	req->xd_at = ordlock_xd_announce_at(owner, ktime_get());
	if (req->xd_at && req->convert && !req->notify) {
		req->xd_at = 0;
		ordlock_xd_wait_announce(owner, true);
	}
}

/*
 * The wait of @req in the DLM has lasted its probe delay (req->xd_at, now
 * @now): announce it, once
 */
static void ordlock_cluster_xd_due(struct ordlock_request *req, ktime_t now)
{
	lockdep_assert_held(&req->owner->lock);
	if (!req->xd_at || ktime_before(now, req->xd_at))
		return;
	req->xd_at = 0;
	ordlock_xd_wait_announce(req->owner, true);
}

/*
 * The wait of @hold in the cluster ended with @ret (0: granted; else
 * failed or given up); a grant takes the next generation
 */
static void ordlock_cluster_wait_end(struct ordlock_request *req,
				     struct ordlock_hold *hold, int ret)
{
	struct ordlock_owner *owner = req->owner;

	lockdep_assert_held(&owner->lock);
	if (!ret)
		WRITE_ONCE(*ordlock_hold_xd_gen(hold), ordlock_xd_next_gen());
	ordlock_cluster_xd_arm(req, false);
	req->xd_at = 0;
	ordlock_xd_wait_end(owner, ordlock_xd_wait_clear(owner), ret, true);
	WRITE_ONCE(hold->cluster_wait, false);
	WRITE_ONCE(owner->pending.mode, 0);
}

/*
 * A key below req->try_upto (REORDER) is busy in the cluster: undo its
 * local grant, nothing recorded; the caller reorders as for a key busy on
 * this node (ordlock_take())
 */
static int ordlock_cluster_would_wait(struct ordlock_request *req)
{
	struct ordlock_hold *hold = req->cur;

	lockdep_assert_held(&req->owner->lock);
	*ordlock_hold_blkp(hold) = NULL;
	ordlock_res_drop_hold(hold);
	return ORDLOCK_TAKE_WOULD_WAIT;
}

/**
 * struct ordlock_cluster_sync - a wait in the calling task for an
 *	asynchronous lock of the backend
 * @task: the task
 * @done: the backend's done hook ran
 */
struct ordlock_cluster_sync {
	struct task_struct *task;
	bool done;
};

/*
 * The backend's done hook of ordlock_cluster_lock_detect(), in atomic
 * context: once @s->done is set the waiter may return and @s (on its
 * stack) be gone, so the task is read first; it cannot be freed before
 * this atomic section ends (an RCU grace period)
 */
static void ordlock_cluster_sync_done(void *data)
{
	struct ordlock_cluster_sync *s = data;
	struct task_struct *task = s->task;

	/* pairs with the waiter's smp_load_acquire(): the outcome, then done */
	smp_store_release(&s->done, true);
	wake_up_process(task);
}

/*
 * The jiffies from @now to @until, rounded up: the wait for the DLM sleeps
 * on the timer wheel, as the backend's synchronous lock does, not on an
 * hrtimer, which cost more instructions (performance.md, "Deadlocks across
 * nodes")
 */
static long ordlock_cluster_jiffies(ktime_t now, ktime_t until)
{
	unsigned long j = nsecs_to_jiffies(ktime_to_ns(ktime_sub(until, now))) + 1;

	return j < MAX_SCHEDULE_TIMEOUT ? (long)j : MAX_SCHEDULE_TIMEOUT - 1;
}

/*
 * Wait in the calling task, the owner's lock not held (taken again before
 * it returns), until the backend's done hook ran (0), XD_FAIL chose the
 * wait (-EDEADLK), a signal (-EINTR) or @deadline (-ETIMEDOUT); at
 * req->xd_at the task takes the owner's lock a moment to announce the wait
 */
static int ordlock_cluster_sync_wait(struct ordlock_request *req,
				     struct ordlock_cluster_sync *s,
				     ktime_t deadline)
{
	struct ordlock_owner *owner = req->owner;
	ktime_t now, until;
	int ret = 0;

	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		/* pairs with ordlock_cluster_sync_done()'s smp_store_release() */
		if (smp_load_acquire(&s->done))
			break;
		if (ordlock_xd_victim(owner)) {
			ret = -EDEADLK;
			break;
		}
		if (signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		now = ktime_get();
		if (ktime_compare(now, deadline) >= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		until = deadline;
		/* req->xd_at: this task's own, as the rest of the request */
		if (req->xd_at) {
			if (ktime_compare(now, req->xd_at) >= 0) {
				__set_current_state(TASK_RUNNING);
				mutex_lock(&owner->lock);
				ordlock_cluster_xd_due(req, now);
				mutex_unlock(&owner->lock);
				continue;
			}
			until = min(req->xd_at, deadline);
		}
		schedule_timeout(ordlock_cluster_jiffies(now, until));
	}
	__set_current_state(TASK_RUNNING);
	mutex_lock(&owner->lock);
	return ret;
}

/*
 * An upgrade's conversion in the cluster in the calling task, in a domain
 * with policy detect: as the backend's @convert, but also given up when
 * XD_FAIL chooses the wait as a victim (-EDEADLK), which the backend's own
 * wait does not see. A conversion given up is abandoned: the backend
 * cancels it in the cluster (or converts it back if the grant won), and
 * the key stays held shared. Return: as the backend's @convert.
 */
static int ordlock_cluster_convert_detect(struct ordlock_request *req,
					  struct ordlock_backend *backend,
					  u32 flags, ktime_t deadline)
{
	struct ordlock_backend_lock *blk = ordlock_hold_blk(req->hold);
	struct ordlock_cluster_sync s = { .task = current };
	int ret;

	ret = backend->ops->convert_async(blk, true, flags,
					  ordlock_cluster_sync_done, &s);
	if (ret)
		return ret;
	mutex_unlock(&req->owner->lock);
	ret = ordlock_cluster_sync_wait(req, &s, deadline);
	ordlock_xd_blk(req->owner, false);
	if (!ret)
		return backend->ops->convert_result(blk, false);
	backend->ops->convert_result(blk, true);
	return ret;
}

/*
 * The cluster's lock of key req->next in the calling task, in a domain with
 * policy detect: as the backend's @lock, but also given up when XD_FAIL
 * chooses the wait as a victim (-EDEADLK), which the backend's own wait
 * does not see; at req->xd_at the task takes the owner's lock a moment to
 * announce the wait. The owner's lock is dropped meanwhile. Return: as
 * the backend's @lock.
 */
static int ordlock_cluster_lock_detect(struct ordlock_request *req,
				       struct ordlock_backend *backend,
				       u32 flags, ktime_t deadline)
{
	const struct ordlock_rkey *key = &req->keys[req->next];
	struct ordlock_owner *owner = req->owner;
	struct ordlock_backend_lock **blkp = ordlock_hold_blkp(req->cur);
	struct ordlock_cluster_sync s = { .task = current };
	int ret;

	/*
	 * Made without the owner's lock, as the backend's @lock is: the
	 * backend may then make the request in this task (DIRECT), as @lock
	 * does, rather than through its work item
	 */
	mutex_unlock(&owner->lock);
	ret = backend->ops->lock_async(READ_ONCE(owner->domain->space), key->rank,
				       key->id, key->mode == ORDLOCK_MODE_EXCLUSIVE,
				       flags | ORDLOCK_BACKEND_DIRECT,
				       ordlock_cluster_sync_done, &s, blkp);
	if (ret) {
		mutex_lock(&owner->lock);
		return ret;
	}
	ret = ordlock_cluster_sync_wait(req, &s, deadline);
	/* either may free the lock: its id is no longer read (XD_WALK) */
	ordlock_xd_blk(owner, false);
	if (!ret)
		return backend->ops->lock_result(*blkp);
	/* given up: the pending lock is cancelled (a grant meanwhile let go) */
	backend->ops->unlock(*blkp);
	*blkp = NULL;
	return ret;
}

/*
 * Key req->next is granted locally (req->cur is on the resource's
 * holders). In a cluster domain, take its lock in the cluster too, before
 * the request goes on to the next key, waiting until the request's
 * deadline at most. The owner's lock is dropped meanwhile, as for a local
 * wait (the owner is busy); the local grant keeps the key's other local
 * owners queued behind, so that one local owner per key talks to the
 * cluster. A key of a REORDER request below a held one is only tried
 * (waiting for it in the DLM while holding keys above could close a cycle
 * across nodes that the DLM does not see). On failure the local grant is
 * undone and the record says why.
 *
 * Return: 0 (req->cur holds the cluster's lock too), -EINPROGRESS (an
 * asynchronous request), ORDLOCK_TAKE_WOULD_WAIT (a key only tried is
 * busy: the local grant undone, nothing recorded), or a negative errno.
 */
int ordlock_take_cluster(struct ordlock_request *req)
{
	const struct ordlock_rkey *key = &req->keys[req->next];
	struct ordlock_owner *owner = req->owner;
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_backend *backend = READ_ONCE(domain->backend);
	struct ordlock_hold *hold = req->cur;
	ktime_t deadline;
	u32 flags = 0;
	int ret;

	lockdep_assert_held(&owner->lock);
	if (likely(!backend))
		return 0;
	deadline = ordlock_request_deadline(req);
	if (req->try || req->next < req->try_upto) {
		flags |= ORDLOCK_BACKEND_TRY;
		deadline = max(deadline,
			       ktime_add_ms(ktime_get(), ORDLOCK_CLUSTER_TRY_MS));
	}
	if (req->notify) {
		/* Asynchronous: ordlock_request_poll() reads the outcome */
		ret = backend->ops->lock_async(READ_ONCE(domain->space), key->rank,
					       key->id,
					       key->mode == ORDLOCK_MODE_EXCLUSIVE,
					       flags, ordlock_cluster_done, req,
					       ordlock_hold_blkp(hold));
		if (ret)
			return ordlock_cluster_failed(req, ret);
		req->cluster_wait = true;
		req->cluster_deadline = deadline;
		ordlock_cluster_wait_begin(req, hold, key->mode);
		return -EINPROGRESS;
	}
	ordlock_cluster_wait_begin(req, hold, key->mode);
	if (owner->xd_req) {
		/* policy detect: XD_FAIL may end the wait */
		ret = ordlock_cluster_lock_detect(req, backend, flags, deadline);
	} else {
		mutex_unlock(&owner->lock);
		ret = backend->ops->lock(READ_ONCE(domain->space), key->rank,
					 key->id, key->mode == ORDLOCK_MODE_EXCLUSIVE,
					 flags, deadline, ordlock_hold_blkp(hold));
		mutex_lock(&owner->lock);
	}
	if (ret == -EDEADLK && ordlock_xd_victim(owner)) {
		ordlock_cluster_wait_end(req, hold, ret);
		return ordlock_cluster_xd_victim(owner, ordlock_cluster_failed(req, ret));
	}
	ordlock_cluster_wait_end(req, hold, ret);
	if (!ret)
		return 0;
	if (ret == -EAGAIN && req->next < req->try_upto)
		return ordlock_cluster_would_wait(req);
	return ordlock_cluster_failed(req, ret);
}

/*
 * Record a failure @ret of the cluster's lock or conversion of @key:
 * @deadlock is the reason of the backend's -EDEADLK; an errno the backend
 * does not document becomes -EIO, reason cluster. Return: the errno.
 */
static int ordlock_cluster_fail(struct ordlock_request *req, int ret,
				u32 deadlock, const struct ordlock_rkey *key)
{
	u32 reason;

	switch (ret) {
	case -EAGAIN:
		reason = ORDLOCK_REASON_BUSY;
		break;
	case -ETIMEDOUT:
		req->waited = true;
		reason = ORDLOCK_REASON_TIMEOUT;
		break;
	case -EINTR:
		reason = ORDLOCK_REASON_SIGNAL;
		break;
	case -EDEADLK:
		reason = deadlock;
		break;
	case -ENOMEM:
		reason = ORDLOCK_REASON_NOMEM;
		break;
	default:
		reason = ORDLOCK_REASON_CLUSTER;
		ret = -EIO;
		break;
	}
	return ordlock_owner_fail(req->owner, reason, ret, key);
}

/*
 * The cluster's lock of key req->next failed with @ret (it holds nothing:
 * req->cur's is gone): undo the local grant and record why
 */
static int ordlock_cluster_failed(struct ordlock_request *req, int ret)
{
	const struct ordlock_rkey *key = &req->keys[req->next];
	struct ordlock_owner *owner = req->owner;
	struct ordlock_hold *hold = req->cur;

	lockdep_assert_held(&owner->lock);
	*ordlock_hold_blkp(hold) = NULL;
	ordlock_res_drop_hold(hold);
	return ordlock_cluster_fail(req, ret, ORDLOCK_REASON_DEADLOCK, key);
}

/*
 * A conversion of a key of a cluster domain, in the cluster: the owner's
 * lock dropped meanwhile, as for ordlock_take_cluster(). An asynchronous
 * request (netlink) does not wait: its downgrade counts as made at once
 * (the backend finishes it), its upgrade waits for the backend's done
 * hook, as an acquire does, and ordlock_cluster_convert_poll() reads the
 * outcome. Return: 0, -EINPROGRESS (an asynchronous upgrade), or a
 * negative errno recorded (the key held as before in the cluster).
 */
int ordlock_convert_cluster(struct ordlock_request *req,
			    const struct ordlock_rkey *key)
{
	struct ordlock_owner *owner = req->owner;
	struct ordlock_backend *backend = READ_ONCE(owner->domain->backend);
	struct ordlock_hold *hold = req->hold;
	ktime_t deadline;
	u32 flags = 0;
	int ret;

	lockdep_assert_held(&owner->lock);
	if (!ordlock_hold_blk(hold))
		return 0;
	deadline = ordlock_request_deadline(req);
	if (req->try || key->mode == ORDLOCK_MODE_SHARED)
		deadline = max(deadline,
			       ktime_add_ms(ktime_get(), ORDLOCK_CLUSTER_TRY_MS));
	if (req->try)
		flags |= ORDLOCK_BACKEND_TRY;
	if (req->notify) {
		ret = backend->ops->convert_async(ordlock_hold_blk(hold),
						  key->mode == ORDLOCK_MODE_EXCLUSIVE,
						  flags, ordlock_cluster_done, req);
		if (ret)
			return ordlock_cluster_fail(req, ret, ORDLOCK_REASON_UPGRADE,
						    key);
		if (key->mode == ORDLOCK_MODE_SHARED)
			return 0;
		req->cluster_wait = true;
		req->cluster_deadline = deadline;
		ordlock_cluster_wait_begin(req, hold, key->mode);
		return -EINPROGRESS;
	}
	/* A downgrade waits for nobody: only an upgrade is shown waiting */
	if (key->mode == ORDLOCK_MODE_EXCLUSIVE)
		ordlock_cluster_wait_begin(req, hold, key->mode);
	if (owner->xd_req) {
		/* policy detect: XD_FAIL may end the upgrade's wait */
		ret = ordlock_cluster_convert_detect(req, backend, flags, deadline);
		if (ret == -EDEADLK && ordlock_xd_victim(owner)) {
			ordlock_cluster_wait_end(req, hold, ret);
			return ordlock_cluster_xd_victim(owner,
				ordlock_cluster_fail(req, ret, ORDLOCK_REASON_DEADLOCK, key));
		}
	} else {
		mutex_unlock(&owner->lock);
		ret = backend->ops->convert(ordlock_hold_blk(hold),
					    key->mode == ORDLOCK_MODE_EXCLUSIVE,
					    flags, deadline);
		mutex_lock(&owner->lock);
	}
	if (key->mode == ORDLOCK_MODE_EXCLUSIVE)
		ordlock_cluster_wait_end(req, hold, ret);
	if (!ret)
		return 0;
	/* Two nodes upgrading the key at once: the DLM refused this one */
	return ordlock_cluster_fail(req, ret, ORDLOCK_REASON_UPGRADE, key);
}

/* An asynchronous upgrade's conversion in the cluster is given up */
static void ordlock_cluster_abandon(struct ordlock_request *req)
{
	struct ordlock_backend *backend = READ_ONCE(req->owner->domain->backend);

	backend->ops->convert_result(ordlock_hold_blk(req->hold), true);
}

/*
 * An asynchronous upgrade, granted locally, waiting for the cluster's
 * conversion: converted, it is done; failed, or its deadline passed (the
 * conversion abandoned: the backend cancels it, or converts it back if the
 * grant won the race), the caller undoes the local upgrade and the key
 * stays held shared, locally and in the cluster, as after
 * ordlock_convert_cluster(). Return: -EINPROGRESS (still waiting), 0
 * (converted), or a negative errno recorded.
 */
static int ordlock_cluster_convert_poll(struct ordlock_request *req)
{
	struct ordlock_backend *backend = READ_ONCE(req->owner->domain->backend);
	struct ordlock_backend_lock *blk = ordlock_hold_blk(req->hold);
	ktime_t now;
	int ret;

	lockdep_assert_held(&req->owner->lock);
	ret = backend->ops->convert_result(blk, false);
	if (ret == -EINPROGRESS) {
		now = ktime_get();
		if (ktime_before(now, req->cluster_deadline)) {
			ordlock_cluster_xd_due(req, now);
			return ret;
		}
		ordlock_cluster_abandon(req);
		ret = -ETIMEDOUT;
	}
	req->cluster_wait = false;
	ordlock_cluster_wait_end(req, req->hold, ret);
	if (ret)
		return ordlock_cluster_fail(req, ret, ORDLOCK_REASON_UPGRADE,
					    &req->keys[0]);
	return 0;
}

/*
 * An asynchronous request waiting for the cluster's lock of key req->next:
 * granted, or failed, or the wait's deadline passed (the pending lock
 * cancelled: nothing is held). A conversion: as above. It only reads the
 * outcome: the request code moves the request on (ordlock_request_next()).
 *
 * Return: -EINPROGRESS (still waiting), or as ordlock_take_cluster(): 0,
 * ORDLOCK_TAKE_WOULD_WAIT (a key only tried is busy: the local grant
 * undone, nothing recorded), or a negative errno recorded (the local grant
 * undone).
 */
int ordlock_cluster_poll(struct ordlock_request *req)
{
	struct ordlock_backend *backend = READ_ONCE(req->owner->domain->backend);
	struct ordlock_hold *hold = req->cur;
	bool victim = false;
	ktime_t now;
	int ret;

	lockdep_assert_held(&req->owner->lock);
	if (req->convert)
		return ordlock_cluster_convert_poll(req);
	/* the outcome may free the lock: its id is not read meanwhile */
	ordlock_xd_blk(req->owner, false);
	ret = backend->ops->lock_result(*ordlock_hold_blkp(hold));
	if (ret == -EINPROGRESS) {
		/* chosen by XD_FAIL (which woke the request), or too late */
		victim = ordlock_xd_victim(req->owner);
		now = ktime_get();
		if (!victim && ktime_before(now, req->cluster_deadline)) {
			ordlock_xd_blk(req->owner, true);
			ordlock_cluster_xd_due(req, now);
			return ret;
		}
		backend->ops->unlock(*ordlock_hold_blkp(hold));
		ret = victim ? -EDEADLK : -ETIMEDOUT;
	}
	req->cluster_wait = false;
	ordlock_cluster_wait_end(req, hold, ret);
	if (victim)
		return ordlock_cluster_xd_victim(req->owner,
						 ordlock_cluster_failed(req, ret));
	/* A key only tried (REORDER): as ordlock_take_cluster() */
	if (ret == -EAGAIN && req->next < req->try_upto)
		return ordlock_cluster_would_wait(req);
	if (ret)
		return ordlock_cluster_failed(req, ret);
	return 0;
}

/*
 * Leave a cluster domain's space and release its backend; with no lock
 * held (the leave waits for the releases still in flight in the cluster,
 * within the backend's bound). Return: 0, or -ETIMEDOUT or -EINTR: the
 * space was left by force (the backend logged what it abandoned); it is
 * gone either way.
 */
int ordlock_cluster_leave(struct ordlock_backend *backend,
			  struct ordlock_backend_space *space)
{
	int ret;

	ret = backend->ops->leave(space);
	ordlock_backend_put(backend);
	return ret;
}

/*
 * ordlock_cluster_cancel() - the cancel of an asynchronous request waiting
 * for the cluster (req->cluster_wait): granted locally, its key is released
 * with the pending cluster lock (ordlock_cluster_unlock()); a conversion's
 * is abandoned (the backend brings it back to the old mode). The wait's
 * views end; the request code undoes the rest.
 */
void ordlock_cluster_cancel(struct ordlock_request *req)
{
	lockdep_assert_held(&req->owner->lock);
	if (req->convert)
		ordlock_cluster_abandon(req);
	req->cluster_wait = false;
	ordlock_cluster_wait_end(req, req->convert ? req->hold : req->cur,
				 -ECANCELED);
}

/*
 * ordlock_cluster_unlock() - release the cluster lock of @hold (an owner
 * in a cluster domain, the lock set), before the hold leaves its resource
 * (ordlock_cluster_release()): does not wait for the cluster, but may
 * sleep (every caller holds the owner's mutex, in process context)
 */
void ordlock_cluster_unlock(struct ordlock_hold *hold)
{
	might_sleep();
	/* Constant while the owner is in the domain (domain.h) */
	READ_ONCE(hold->owner->domain->backend)->ops->unlock(*ordlock_hold_blkp(hold));
	*ordlock_hold_blkp(hold) = NULL;
	WRITE_ONCE(*ordlock_hold_xd_gen(hold), 0);
}

/* Why a cluster join failed (extack, kernel log) */
static const char ordlock_why_nopkg[] =
	"no cluster backend: ordlock_dlm.ko is not installed, or the kernel has no DLM";
static const char ordlock_why_notconn[] =
	"no cluster: dlm_controld is not running, or this node is not in a quorate cluster";

/**
 * ordlock_cluster_join() - join the cluster for the domain named @name
 * @name: the domain's name
 * @why: receives the reason of a failure
 * @backendp: receives the cluster backend (pinned)
 * @spacep: receives the backend's space of the domain
 *
 * With no lock of ordlock held: loading the backend's module and joining
 * may sleep long. Return: 0, or -ENOPKG (no backend), -ENOTCONN (no
 * cluster), -ENOMEM, or -EIO (the join failed), with *@why.
 */
int ordlock_cluster_join(const char *name, const char **why,
			 struct ordlock_backend **backendp,
			 struct ordlock_backend_space **spacep)
{
	struct ordlock_backend_space *space;
	struct ordlock_backend *backend;
	int ret;

	backend = ordlock_backend_get(ORDLOCK_CLUSTER_BACKEND);
	if (IS_ERR(backend)) {
		*why = ordlock_why_nopkg;
		return -ENOPKG;
	}
	space = backend->ops->join(name);
	if (IS_ERR(space)) {
		ret = PTR_ERR(space);
		ordlock_backend_put(backend);
		if (ret == -ENOTCONN) {
			*why = ordlock_why_notconn;
		} else if (ret == -ENOMEM) {
			*why = "out of memory joining the DLM lockspace";
		} else {
			*why = "joining the DLM lockspace failed (the kernel log says why)";
			ret = -EIO;
		}
		return ret;
	}
	*backendp = backend;
	*spacep = space;
	return 0;
}
