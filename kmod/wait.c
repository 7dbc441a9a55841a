// SPDX-License-Identifier: GPL-2.0
/*
 * Waits: a request queued on a resource joins the wait-for graph (graph.c),
 * is checked for a cycle at once or after the domain's detection delay,
 * and then either sleeps in the calling task (the ioctls) or returns to a
 * front end that polls it when notified or at its next deadline
 * (netlink). However the wait ends (granted, timed out, signalled,
 * cancelled, the victim of a deadlock), one function ends it: it leaves
 * the graph and, unless the grant won the race, the queue.
 *
 * The owner's lock is held throughout, except while the task sleeps (the
 * owner is busy meanwhile).
 *
 * A wait also ends when the owner's lease is revoked meanwhile (lease.c
 * revokes a busy owner too, then wakes its wait: ordlock_wait_kick()): the
 * request fails with EKEYEXPIRED, and a wait it begins after (a key
 * granted as the revocation came) fails at once.
 */
#include <linux/hrtimer.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>

#include "domain.h"
#include "graph.h"
#include "owner.h"
#include "params.h"
#include "request.h"
#include "resource.h"
#include "user.h"
#include "wait.h"
#include "xdetect.h"

/*
 * A waiter spins on its CPU for a while before it sleeps (spin_us), as the
 * kernel's mutexes spin while their owner runs: a key held for a moment by
 * a task that runs on another CPU comes free before a sleep and a wake-up
 * would have cost, and its release hands it to a spinning waiter in place
 * (resource.c). It spins only while the key's holder runs on a CPU
 * (ordlock_res_running_holder()); for a key whose holder the kernel does
 * not know (one held by the fast path, or free for a waiter ahead), only
 * the first waiter spins, and only while no other task is runnable on its
 * CPU (the holder may be the one waiting for this CPU). It stops as soon
 * as it is granted or woken, its lease is revoked, a signal comes, its CPU
 * is wanted (need_resched()) or the time is up; never past @until.
 *
 * Called with the bucket lock of the key held; drops it while spinning.
 *
 * Return: true when it spun (look again), false when it did not start.
 */
static bool ordlock_spin(struct ordlock_owner *owner, struct ordlock_waiter *w,
			 ktime_t until)
{
	struct ordlock_resource *res = w->hold->res;
	struct ordlock_bucket *bucket = ordlock_res_bucket(res);
	u64 budget = ordlock_spin_ns(), start;
	struct task_struct *holder;

	lockdep_assert_held(&bucket->lock);
	if (!budget)
		return false;
	rcu_read_lock();
	holder = ordlock_res_running_holder(res);
	if (!holder &&
	    (!list_empty(&res->holders) || !single_task_running() ||
	     list_first_entry(&res->waiters, struct ordlock_waiter, node) != w)) {
		rcu_read_unlock();
		return false;
	}
	w->spinning = true;
	spin_unlock(&bucket->lock);
	start = local_clock();
	while (!READ_ONCE(w->granted) && !READ_ONCE(w->woken)) {
		if (need_resched() || signal_pending(current) ||
		    (holder ? !owner_on_cpu(holder) : !single_task_running()) ||
		    READ_ONCE(owner->lease.revoked) ||
		    local_clock() - start > budget ||
		    ktime_compare(ktime_get(), until) >= 0)
			break;
		cpu_relax();
	}
	rcu_read_unlock();
	spin_lock(&bucket->lock);
	w->spinning = false;
	return true;
}

/*
 * Sleep until @w (a waiter of @owner) is granted, @owner's lease is
 * revoked, the deadline passes, a signal comes, or @check_at (when not 0)
 * passes. The revocation is written before the bucket lock is taken to
 * wake the task (ordlock_wait_kick()), and read under it. A waiter woken
 * for a free key (@w->woken: ordlock_res_release_waiters()) takes it
 * itself, unless a request that came meanwhile took it first; a waiter
 * spins a while before each sleep while the key's holder runs
 * (ordlock_spin()).
 *
 * Return: 0 when granted, -EKEYEXPIRED, -EINTR, -ETIMEDOUT, -EDEADLK (the
 * victim of a cycle across nodes: XD_FAIL, xdetect.c), or 1 when it is
 * time to look for a cycle or to announce the wait
 * (ordlock_request_check_at()).
 */
static int ordlock_sleep(struct ordlock_owner *owner, struct ordlock_waiter *w,
			 ktime_t deadline, ktime_t check_at)
{
	struct ordlock_resource *res = w->hold->res;
	struct ordlock_bucket *bucket = ordlock_res_bucket(res);
	bool spun = false;
	ktime_t now, until;
	int ret;

	spin_lock(&bucket->lock);
	for (;;) {
		/* Passed: a spinner may spin again while the new holder runs */
		if (w->woken) {
			ordlock_res_take_woken(res, w);
			spun = false;
		}
		if (w->granted) {
			ret = 0;
			break;
		}
		if (READ_ONCE(owner->lease.revoked)) {
			ret = -EKEYEXPIRED;
			break;
		}
		if (unlikely(ordlock_xd_victim(owner))) {
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
		if (check_at) {
			if (ktime_compare(now, check_at) >= 0) {
				ret = 1;
				break;
			}
			until = min(check_at, deadline);
		}
		if (!spun) {
			spun = true;
			if (ordlock_spin(owner, w, until))
				continue;
		}
		set_current_state(TASK_INTERRUPTIBLE);
		spin_unlock(&bucket->lock);
		schedule_hrtimeout_range(&until, current->timer_slack_ns,
					 HRTIMER_MODE_ABS);
		spin_lock(&bucket->lock);
		spun = false;
	}
	spin_unlock(&bucket->lock);
	return ret;
}

static u32 ordlock_wait_reason(int err)
{
	switch (err) {
	case -EINTR:
		return ORDLOCK_REASON_SIGNAL;
	case -EDEADLK:
		return ORDLOCK_REASON_DEADLOCK;
	case -ECANCELED:
	/*
	 * Withdrawn by a revocation, which was counted and told already: the
	 * front end's record then says revoked (ordlock_lease_check())
	 */
	case -EKEYEXPIRED:
		return ORDLOCK_REASON_CANCELLED;
	default:
		return ORDLOCK_REASON_TIMEOUT;
	}
}

/*
 * End the wait of @req with @ret (0 when granted), ordlock_graph_lock
 * held: leave the graph, and unless the key was granted meanwhile (which
 * wins), leave the queue and record why. Drops ordlock_graph_lock.
 *
 * Return: 0 when granted, else @ret.
 */
static int __ordlock_wait_end(struct ordlock_request *req, int ret)
	__releases(&ordlock_graph_lock)
{
	struct ordlock_owner *owner = req->owner;
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_waiter *w = &req->w;
	struct ordlock_resource *res = w->hold->res;
	struct ordlock_bucket *bucket = ordlock_res_bucket(res);
	u64 gen;

	lockdep_assert_held(&ordlock_graph_lock);
	ordlock_graph_leave(owner);
	/* A victim of a cycle across nodes: its record, before it is cleared */
	if (ret == -EDEADLK && !req->cycle_len && ordlock_xd_victim(owner))
		req->cycle_len = ordlock_xd_take_victim(owner);
	gen = ordlock_xd_wait_clear(owner);
	req->xd_at = 0;
	spin_lock(&bucket->lock);
	if (w->granted) {
		ret = 0;
	} else {
		ordlock_owner_fail(owner, ordlock_wait_reason(ret), ret, NULL);
		owner->failure.index = ordlock_request_index(req);
		owner->failure.key.rank = res->rank;
		owner->failure.key.id = res->id;
		owner->failure.key.mode = w->mode;
		owner->failure.cycle_len = ret == -EDEADLK ? req->cycle_len : 0;
		ordlock_res_blame(res, owner, w->mode, w);
		/* Leaving the queue may let those behind in */
		ordlock_res_dequeue(res, w);
	}
	spin_unlock(&bucket->lock);
	spin_unlock(&ordlock_graph_lock);

	ordlock_xd_wait_end(owner, gen, ret, false);
	WRITE_ONCE(owner->pending.mode, 0);
	ordlock_gauge_dec(&domain->waiters);
	ordlock_user_uncharge(owner->user, ORDLOCK_USER_WAITERS, 1);
	ordlock_stat_wait(domain, ktime_to_ns(ktime_sub(ktime_get(), w->since)));
	return ret;
}

/* ordlock_wait_end() - end the wait of @req with @ret; as __ordlock_wait_end() */
int ordlock_wait_end(struct ordlock_request *req, int ret)
{
	lockdep_assert_held(&req->owner->lock);
	spin_lock(&ordlock_graph_lock);
	return __ordlock_wait_end(req, ret);
}

/*
 * The waiter of @req was just queued on its resource (and the bucket lock
 * dropped): join the wait-for graph. Unless the domain's policy is
 * "timeout", first look for a cycle the wait would close, at once or (in a
 * "detect" domain with a delay) when req->check_at passes; the owner whose
 * wait closes a cycle is the victim. The cycle may pass through owners of
 * other domains, whatever their policies (graph.c). The wait of an owner
 * revoked while its request went on ends at once. A wait of a cluster
 * domain with policy "detect" is announced to ordlock-xdetectd when
 * req->xd_at passes (xdetect.c), not now.
 *
 * Return: 1 while waiting; else the wait ended: 0 (granted), -EDEADLK or
 * -EKEYEXPIRED.
 */
int ordlock_wait_begin(struct ordlock_request *req)
{
	struct ordlock_owner *owner = req->owner;
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_waiter *w = &req->w;
	struct ordlock_resource *res = w->hold->res;
	u32 policy = READ_ONCE(domain->policy);
	u32 delay_ms;

	lockdep_assert_held(&owner->lock);
	req->waited = true;
	req->check_at = 0;
	req->xd_at = 0;
	if (!req->deadline)
		req->deadline = ktime_add_ns(w->since, min_t(u64, req->timeout_ns,
							     KTIME_MAX / 4));
	req->cycle_len = 0;
	if (w->task)
		get_task_comm(owner->comm, current);
	WRITE_ONCE(owner->pending_since, ktime_to_ns(w->since));
	WRITE_ONCE(owner->pending.rank, res->rank);
	WRITE_ONCE(owner->pending.id, res->id);
	WRITE_ONCE(owner->pending.mode, w->mode);
	ordlock_gauge_inc(&domain->waiters);

	spin_lock(&ordlock_graph_lock);
	if (owner->lease.revoked)
		return __ordlock_wait_end(req, -EKEYEXPIRED);
	if (policy != ORDLOCK_POLICY_TIMEOUT) {
		delay_ms = policy == ORDLOCK_POLICY_DETECT ?
			   READ_ONCE(domain->detect_delay_ms) : 0;
		if (delay_ms) {
			req->check_at = ktime_add_ms(w->since, delay_ms);
		} else {
			req->cycle_len = ordlock_graph_find_cycle(owner, w);
			if (req->cycle_len)
				return __ordlock_wait_end(req, -EDEADLK);
		}
	}
	ordlock_xd_wait_start(owner);
	ordlock_graph_join(owner, w);
	spin_unlock(&ordlock_graph_lock);
	req->xd_at = ordlock_xd_announce_at(owner, w->since);
	return 1;
}

/*
 * The detection delay passed: look for a cycle, unless the domain's policy
 * was changed to "timeout" meanwhile (its cycles are left to the timeouts).
 * Return as ordlock_wait_begin().
 */
static int ordlock_wait_find(struct ordlock_request *req)
{
	req->check_at = 0;
	if (READ_ONCE(req->owner->domain->policy) == ORDLOCK_POLICY_TIMEOUT)
		return 1;
	spin_lock(&ordlock_graph_lock);
	req->cycle_len = ordlock_graph_find_cycle(req->owner, &req->w);
	if (req->cycle_len)
		return __ordlock_wait_end(req, -EDEADLK);
	spin_unlock(&ordlock_graph_lock);
	return 1;
}

/*
 * ordlock_wait_check() - ordlock_request_check_at() passed: look for a
 * cycle if req->check_at did (a cycle found ends the wait), then announce
 * the wait if req->xd_at did. Return as ordlock_wait_begin().
 */
int ordlock_wait_check(struct ordlock_request *req)
{
	ktime_t now = ktime_get();
	int ret = 1;

	lockdep_assert_held(&req->owner->lock);
	if (req->check_at && ktime_compare(now, req->check_at) >= 0)
		ret = ordlock_wait_find(req);
	if (ret == 1 && req->xd_at && ktime_compare(now, req->xd_at) >= 0) {
		req->xd_at = 0;
		ordlock_xd_wait_announce(req->owner, false);
	}
	return ret;
}

/*
 * Wait in the calling task, after ordlock_wait_begin() returned 1.
 * Return: 0 when granted, else why not.
 */
int ordlock_wait_sync(struct ordlock_request *req)
{
	int ret = 1;

	lockdep_assert_held(&req->owner->lock);
	while (ret == 1) {
		/* Let other users of the owner in: they find it busy */
		mutex_unlock(&req->owner->lock);
		ret = ordlock_sleep(req->owner, &req->w, req->deadline,
				    ordlock_request_check_at(req));
		mutex_lock(&req->owner->lock);
		if (ret == 1)
			ret = ordlock_wait_check(req);
		else
			ret = ordlock_wait_end(req, ret);
	}
	return ret;
}

/* Ready the waiter of @req to wait for @hold in @mode (a conversion: @convert) */
void ordlock_waiter_init(struct ordlock_request *req, struct ordlock_hold *hold,
			 u32 mode, bool convert)
{
	struct ordlock_waiter *w = &req->w;

	w->task = req->notify ? NULL : current;
	w->notify = req->notify;
	w->hold = hold;
	w->mode = mode;
	w->convert = convert;
	w->granted = false;
	w->woken = false;
	w->holds_fast = false;
	w->passed = 0;
	w->since = ktime_get();
}

/* Whether @w was granted, as its granter left it */
bool ordlock_waiter_granted(struct ordlock_waiter *w)
{
	struct ordlock_bucket *bucket = ordlock_res_bucket(w->hold->res);
	bool granted;

	spin_lock(&bucket->lock);
	granted = w->granted;
	spin_unlock(&bucket->lock);
	return granted;
}

/**
 * ordlock_wait_kick() - wake the wait of @owner's request in progress
 * @owner: the owner, locked; its lease was just revoked (lease.c)
 *
 * A wait in the calling task (ordlock_sleep()) finds the owner revoked;
 * an asynchronous request is notified, as by a grant, and its poll finds
 * the same (ordlock_request_poll()): either fails with EKEYEXPIRED, unless
 * the key was granted first. A wait that is not in the graph (none, or a
 * wait for the cluster's lock) is not woken. The waiter cannot go away
 * meanwhile: it leaves the graph only under @owner's lock.
 */
void ordlock_wait_kick(struct ordlock_owner *owner)
{
	struct ordlock_bucket *bucket;
	struct ordlock_waiter *w;

	lockdep_assert_held(&owner->lock);
	spin_lock(&ordlock_graph_lock);
	w = owner->waiting;
	if (w) {
		bucket = ordlock_res_bucket(w->hold->res);
		spin_lock(&bucket->lock);
		/* A granted waiter was woken by its granter */
		if (!w->granted) {
			if (w->task)
				wake_up_process(w->task);
			else
				w->notify(w);
		}
		spin_unlock(&bucket->lock);
	}
	spin_unlock(&ordlock_graph_lock);
}
