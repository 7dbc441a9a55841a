// SPDX-License-Identifier: GPL-2.0
/*
 * Leases: the deadline of what an owner holds, and its revocation.
 *
 * An owner has one lease for all it holds (struct ordlock_lease, in the
 * owner). A grant with a lease (the request's, capped by the domain's
 * max_hold_ms, or max_hold_ms itself) sets the deadline, or brings it
 * forward; RENEW moves it to now + the period. Renewing only writes the
 * deadline: the timer, armed for the earlier deadline, fires, and its work
 * finds the deadline moved and arms the timer again. So a renewal takes
 * the owner's lock, reads the clock and writes two words, as a failed
 * try-lock takes its lock and bucket lock.
 *
 * The timer only queues the work item (on PREEMPT_RT it runs in softirq
 * context, where nothing may sleep); the work takes the owner's lock, as a
 * request does, and revokes: it releases every key (which grants them to
 * the waiters, with new tokens), keeps the list of what it revoked for the
 * failure record, and tells the owner (poll, signal, netlink hook) and the
 * events seam. An owner busy in a request (waiting for another key, with
 * its lock dropped) is revoked all the same: what it holds is released at
 * the deadline, but for the key a conversion in progress converts, which
 * the request still works on (owner->converting); then the request's wait
 * is woken (ordlock_wait_kick()) and the request fails with EKEYEXPIRED,
 * releasing what it took for itself (all or nothing). Whatever a request
 * in progress still holds when it ends, on a revoked owner (that key, or
 * keys granted as the revocation came), the front end's
 * ordlock_lease_check() releases. The keys the request is taking are not
 * the owner's yet, and have no lease.
 *
 * From the deadline on, the owner's tokens are stale to the token check
 * even before the work has run (ordlock_lease_live()).
 *
 * The keys the owner holds by the fast path (taken in user space, with no
 * lease of their own) are revoked with the rest: ordlock_fast_revoke()
 * raises the owner page's flag and lets their words go; the failure
 * record lists them with token 0, among the others in key order.
 *
 * A fast-path hold has no lease of its own until the kernel first sees it
 * contended: when a kernel request queues behind it (ordlock_fast_queued()
 * sets WAITERS, or finds it set), ordlock_lease_fast_seen() gives its
 * holder's lease the deadline now + the domain's max_hold_ms (or keeps an
 * earlier one). Every waiter that queues does so, so that a max-hold set
 * while the key was contended applies from the next waiter on. That
 * happens under the waiter's owner->lock and the key's bucket lock, where
 * the holder's owner->lock may not be taken (two owners' locks): the
 * deadline is posted in l->fast_due (a lockless minimum) and the work is
 * queued; the work, under the holder's lock, takes it into l->expires and
 * arms the timer, or revokes at once when it is already due. The holder
 * cannot be freed meanwhile: it is looked up in its domain's owner table,
 * under that table's lock, which its destruction takes (erasing it) before
 * ordlock_lease_owner_free() cancels the work. From then on the lease is
 * the owner's one lease, as a kernel grant's: RENEW moves it, it ends when
 * the owner holds nothing (kernel or fast-path holds) as the work or a
 * request sees it, and an owner that keeps holding something is revoked
 * at the deadline. A fast-path hold that nobody waits for gets no lease.
 *
 * Locks: the work takes owner->lock and what nests in it (bucket locks
 * through the release, the event chain); it is queued under the hrtimer's
 * base lock, or under a bucket lock and the fast owner table's lock
 * (ordlock_lease_fast_seen(): queue_work() takes only the workqueue's
 * own raw locks). The owner's destruction marks the lease dead
 * under owner->lock, then cancels the timer and the work with no lock held.
 * No new lock: see the lock order in main.c.
 */
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "domain.h"
#include "events.h"
#include "fastpath.h"
#include "keys.h"
#include "lease.h"
#include "owner.h"
#include "request.h"
#include "resource.h"
#include "table.h"
#include "wait.h"

/* Runs the revocations; high priority, for a revocation is a wake-up */
static struct workqueue_struct *ordlock_lease_wq;

int ordlock_lease_init(void)
{
	ordlock_lease_wq = alloc_workqueue("ordlock_lease", WQ_HIGHPRI, 0);
	return ordlock_lease_wq ? 0 : -ENOMEM;
}

/* After every owner is gone: each cancelled its own work */
void ordlock_lease_exit(void)
{
	destroy_workqueue(ordlock_lease_wq);
}

static enum hrtimer_restart ordlock_lease_timer(struct hrtimer *timer)
{
	struct ordlock_lease *l = container_of(timer, struct ordlock_lease, timer);

	queue_work(ordlock_lease_wq, &l->work);
	return HRTIMER_NORESTART;
}

/* Arm the timer for l->expires, unless it is armed for earlier already */
static void ordlock_lease_arm(struct ordlock_lease *l)
{
	if (hrtimer_active(&l->timer) &&
	    !ktime_before(l->expires, hrtimer_get_softexpires(&l->timer)))
		return;
	hrtimer_start_range_ns(&l->timer, l->expires, l->slack_ns,
			       HRTIMER_MODE_ABS);
}

/* Whether @owner, locked, holds anything: kernel grants or fast-path holds */
static bool ordlock_lease_holds(struct ordlock_owner *owner)
{
	lockdep_assert_held(&owner->lock);
	return owner->nheld || ordlock_fast_held(owner);
}

/*
 * Take the deadline that ordlock_lease_fast_seen() posted into the lease
 * of @owner, locked: the earlier of it and the current deadline; the
 * timer is armed for it. Nothing when the owner no longer holds anything
 * by the fast path (the contended hold was let go), or is revoked.
 */
static void ordlock_lease_fast_take(struct ordlock_owner *owner)
{
	struct ordlock_lease *l = &owner->lease;
	s64 due = atomic64_xchg(&l->fast_due, 0);
	u64 ns;

	lockdep_assert_held(&owner->lock);
	if (!due || l->revoked || !ordlock_fast_held(owner))
		return;
	/* The domain's max-hold, the period of a renewal without one */
	ns = (u64)READ_ONCE(owner->domain->max_hold_ms) * NSEC_PER_MSEC;
	if (!ns)
		return;
	if (!l->expires || ktime_before(ns_to_ktime(due), l->expires))
		WRITE_ONCE(l->expires, ns_to_ktime(due));
	if (!l->period_ns)
		l->period_ns = ns;
	ordlock_lease_arm(l);
}

/**
 * ordlock_lease_fast_seen() - a kernel request queued behind a fast-path
 *	hold of @owner: start its lease (see the head of the file)
 * @owner: the holder, as __ordlock_fast_holder() found it: its owner->lock
 *	NOT held (the waiter's is), the fast owner table's lock held, which
 *	keeps it from being freed
 * @max_hold_ms: the domain's max_hold_ms; 0: no lease
 *
 * The deadline is now + @max_hold_ms, or an earlier one already posted.
 */
void ordlock_lease_fast_seen(struct ordlock_owner *owner, u32 max_hold_ms)
{
	struct ordlock_lease *l = &owner->lease;
	s64 due, old;

	if (!max_hold_ms)
		return;
	due = ktime_to_ns(ktime_add_ns(ktime_get(),
				       (u64)max_hold_ms * NSEC_PER_MSEC));
	old = atomic64_read(&l->fast_due);
	do {
		/* An earlier one is posted: its work is queued */
		if (old && old <= due)
			return;
	} while (!atomic64_try_cmpxchg(&l->fast_due, &old, due));
	queue_work(ordlock_lease_wq, &l->work);
}

/* The owner holds nothing: no lease */
static void ordlock_lease_clear(struct ordlock_lease *l)
{
	WRITE_ONCE(l->expires, 0);
	l->period_ns = 0;
}

/* The failure record of a revoked owner; return: -EKEYEXPIRED */
int ordlock_lease_refuse(struct ordlock_owner *owner)
{
	struct ordlock_lease *l = &owner->lease;
	struct ordlock_failure *f = &owner->failure;

	lockdep_assert_held(&owner->lock);
	ordlock_owner_fail(owner, ORDLOCK_REASON_REVOKED, -EKEYEXPIRED, NULL);
	f->pid = READ_ONCE(owner->pid);
	f->key = l->first.key;
	f->held = l->last.key;
	f->cycle_len = l->nkeys;
	return -EKEYEXPIRED;
}

/*
 * Release what @owner holds but @keep, the key a conversion in progress
 * converts: its request releases it when it ends (ordlock_lease_check())
 */
static void ordlock_lease_release_but(struct ordlock_owner *owner,
				      struct ordlock_hold *keep)
{
	struct ordlock_hold *hold, *tmp;
	LIST_HEAD(done);

	lockdep_assert_held(&owner->lock);
	list_for_each_entry_safe_reverse(hold, tmp, &owner->held, owner_node)
		if (hold != keep)
			ordlock_owner_drop_hold(owner, hold, &done);
	ordlock_owner_put_holds(owner, &done);
}

/* sort() of the revoked keys: key order */
static int ordlock_lease_key_cmp(const void *a, const void *b)
{
	const struct ordlock_revoked_key *x = a, *y = b;

	return ordlock_key_cmp(x->key.rank, x->key.id, y->key.rank, y->key.id);
}

/*
 * The lease of @owner expired at l->expires: revoke what it holds, whether
 * or not a request of it is in progress (then it is woken, and fails)
 */
static void ordlock_lease_revoke(struct ordlock_owner *owner, ktime_t now)
{
	struct ordlock_lease *l = &owner->lease;
	unsigned int i = 0, room, nfast;
	struct ordlock_revoked_key r;
	struct ordlock_hold *hold;

	lockdep_assert_held(&owner->lock);
	l->late_ns = ktime_to_ns(ktime_sub(now, l->expires));
	kfree(l->keys);
	/* A count of the fast-path holds: room for them in the record */
	room = owner->nheld + ordlock_fast_held(owner);
	l->keys = kmalloc_array(room, sizeof(*l->keys),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	list_for_each_entry(hold, &owner->held, owner_node) {
		r.key.rank = hold->res->rank;
		r.key.id = hold->res->id;
		r.key.mode = hold->mode;
		r.key.__reserved = 0;
		r.token = hold->token;
		if (!i)
			l->first = r;
		l->last = r;
		if (l->keys)
			l->keys[i] = r;
		i++;
	}
	/* The fast-path holds too; their waiters are granted here */
	nfast = ordlock_fast_revoke(owner, l->keys ? l->keys + i : NULL, room - i);
	if (l->keys && nfast) {
		i += min(nfast, room - i);
		sort(l->keys, i, sizeof(*l->keys), ordlock_lease_key_cmp, NULL);
		l->first = l->keys[0];
		l->last = l->keys[i - 1];
	} else if (nfast) {
		/* Out of memory: counted, not listed */
		i += nfast;
	}
	l->nkeys = i;
	WRITE_ONCE(l->revoked, true);
	/* Revoked before the deadline is cleared: pairs with ordlock_lease_live() */
	smp_wmb();
	ordlock_lease_clear(l);
	/* The waiters are granted here, with tokens above every revoked one */
	if (owner->converting)
		ordlock_lease_release_but(owner, owner->converting);
	else
		ordlock_req_release_all(owner);
	ordlock_lease_refuse(owner);
	ordlock_event_failure(owner);
	wake_up_interruptible_poll(&l->wq, EPOLLPRI);
	if (l->signal && l->sig_pid)
		kill_pid(l->sig_pid, l->signal, 1);
	if (l->revoked_hook)
		l->revoked_hook(owner, l->hook_data);
	/* A request in progress (its wait, if any) ends with EKEYEXPIRED */
	if (owner->busy)
		ordlock_wait_kick(owner);
}

static void ordlock_lease_work(struct work_struct *work)
{
	struct ordlock_lease *l = container_of(work, struct ordlock_lease, work);
	struct ordlock_owner *owner = container_of(l, struct ordlock_owner, lease);
	ktime_t now;

	mutex_lock(&owner->lock);
	/* A busy owner too: its request waits with the lock dropped */
	if (l->dead)
		goto out;
	ordlock_lease_fast_take(owner);
	if (!l->expires)
		goto out;
	if (!ordlock_lease_holds(owner)) {
		ordlock_lease_clear(l);
		goto out;
	}
	now = ktime_get();
	if (ktime_before(now, l->expires))
		ordlock_lease_arm(l);
	else
		ordlock_lease_revoke(owner, now);
out:
	mutex_unlock(&owner->lock);
}

/* ordlock_lease_owner_init() - at the owner's creation */
void ordlock_lease_owner_init(struct ordlock_owner *owner)
{
	struct ordlock_lease *l = &owner->lease;

	hrtimer_init(&l->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	l->timer.function = ordlock_lease_timer;
	INIT_WORK(&l->work, ordlock_lease_work);
	init_waitqueue_head(&l->wq);
}

/* ordlock_lease_owner_kill() - the owner is being destroyed; it is locked */
void ordlock_lease_owner_kill(struct ordlock_owner *owner)
{
	lockdep_assert_held(&owner->lock);
	owner->lease.dead = true;
}

/*
 * ordlock_lease_owner_free() - after ordlock_lease_owner_kill(), with the
 * owner unlocked: nothing of the lease runs any more after it
 */
void ordlock_lease_owner_free(struct ordlock_owner *owner)
{
	struct ordlock_lease *l = &owner->lease;

	hrtimer_cancel(&l->timer);
	cancel_work_sync(&l->work);
	kfree(l->keys);
	put_pid(l->sig_pid);
}

/**
 * ordlock_lease_check() - before and after a request of @owner
 * @owner: the owner, locked
 *
 * Revokes at once a lease that expired while the work had not yet run:
 * an expired lease is never renewed, and a request never gets keys past
 * it. An owner revoked while a request of it was in progress may hold
 * keys when it ends (granted to it as the revocation came, or converted
 * by it): the request failed, and they are released here.
 *
 * Return: 0, or -EKEYEXPIRED (the owner is revoked; the failure record
 * says what it lost).
 */
int ordlock_lease_check(struct ordlock_owner *owner)
{
	struct ordlock_lease *l = &owner->lease;
	ktime_t now;

	lockdep_assert_held(&owner->lock);
	if (l->revoked) {
		if (owner->nheld && !owner->busy)
			ordlock_req_release_all(owner);
		return ordlock_lease_refuse(owner);
	}
	if (likely(!l->expires) || owner->busy)
		return 0;
	if (!ordlock_lease_holds(owner)) {
		ordlock_lease_clear(l);
		return 0;
	}
	now = ktime_get();
	if (ktime_before(now, l->expires))
		return 0;
	ordlock_lease_revoke(owner, now);
	return -EKEYEXPIRED;
}

/* The lease of @lease_ms in @domain, in ns: capped by max_hold_ms */
static u64 ordlock_lease_ns(struct ordlock_domain *domain, u32 lease_ms)
{
	u32 max = READ_ONCE(domain->max_hold_ms);

	if (!lease_ms || (max && lease_ms > max))
		lease_ms = max;
	return (u64)lease_ms * NSEC_PER_MSEC;
}

/* Start the lease of @ns from now, or bring the deadline forward */
static void ordlock_lease_start(struct ordlock_lease *l, u64 ns, bool renew)
{
	ktime_t expires = ktime_add_ns(ktime_get(), ns);

	if (renew || !l->expires || ktime_before(expires, l->expires))
		WRITE_ONCE(l->expires, expires);
	l->period_ns = renew || !l->period_ns ? ns : min(l->period_ns, ns);
	l->slack_ns = current->timer_slack_ns;
	ordlock_lease_arm(l);
}

/**
 * ordlock_lease_granted() - @owner was granted keys with @lease_ms
 * @owner: the owner, locked
 * @lease_ms: the lease the request asked for (0: the domain's max_hold_ms)
 */
void ordlock_lease_granted(struct ordlock_owner *owner, u32 lease_ms)
{
	u64 ns;

	lockdep_assert_held(&owner->lock);
	/* Granted as the lease was revoked: ordlock_lease_check() releases */
	if (owner->lease.revoked)
		return;
	ns = ordlock_lease_ns(owner->domain, lease_ms);
	if (ns && owner->nheld)
		ordlock_lease_start(&owner->lease, ns, false);
}

/**
 * ordlock_lease_renew() - extend the lease of what @owner holds
 * @owner: the owner, locked
 * @lease_ms: the new period, or 0 for the owner's
 * @left_ms: receives the time left of the lease, 0 when there is none
 *
 * Return: 0, -ENOENT when the owner holds nothing (failure record
 * NOT_HELD), -EKEYEXPIRED when the lease expired (it is revoked now, if it
 * was not yet), -EBUSY when a request of the owner is in progress.
 */
int ordlock_lease_renew(struct ordlock_owner *owner, u32 lease_ms, u64 *left_ms)
{
	struct ordlock_lease *l = &owner->lease;
	bool has;
	u64 ns;
	int ret;

	lockdep_assert_held(&owner->lock);
	*left_ms = 0;
	if (owner->busy)
		return -EBUSY;
	ret = ordlock_lease_check(owner);
	if (ret)
		return ret;
	if (!ordlock_lease_holds(owner))
		return ordlock_owner_fail(owner, ORDLOCK_REASON_NOT_HELD, -ENOENT, NULL);
	/* A fast-path hold's deadline not yet taken: the renewal replaces it */
	atomic64_xchg(&l->fast_due, 0);
	if (lease_ms)
		ns = ordlock_lease_ns(owner->domain, lease_ms);
	else
		ns = l->period_ns ? l->period_ns :
		     ordlock_lease_ns(owner->domain, 0);
	if (ns)
		ordlock_lease_start(l, ns, true);
	*left_ms = ordlock_lease_left_ms(owner, &has);
	return 0;
}

/**
 * ordlock_lease_set_signal() - the signal to send on revocation
 * @owner: the owner, locked
 * @signal: 1 to _NSIG, or 0 for none
 *
 * The calling process receives it, as F_SETOWN's target receives F_SETSIG's.
 *
 * Return: 0, or -EINVAL for a bad signal.
 */
int ordlock_lease_set_signal(struct ordlock_owner *owner, u32 signal)
{
	struct ordlock_lease *l = &owner->lease;

	lockdep_assert_held(&owner->lock);
	if (signal > _NSIG)
		return -EINVAL;
	put_pid(l->sig_pid);
	l->sig_pid = signal ? get_pid(task_tgid(current)) : NULL;
	l->signal = signal;
	return 0;
}

/**
 * ordlock_lease_acknowledge() - @owner releases everything (RELEASE_ALL)
 * @owner: the owner, locked; it holds nothing any more
 *
 * A revoked owner is an ordinary one again.
 */
void ordlock_lease_acknowledge(struct ordlock_owner *owner)
{
	struct ordlock_lease *l = &owner->lease;

	lockdep_assert_held(&owner->lock);
	ordlock_lease_clear(l);
	if (!l->revoked)
		return;
	/* What an acquire racing the revocation took by the fast path */
	ordlock_fast_acknowledge(owner);
	WRITE_ONCE(l->revoked, false);
	kfree(l->keys);
	l->keys = NULL;
	l->nkeys = 0;
}

/**
 * ordlock_lease_left_ms() - what is left of @owner's lease
 * @owner: the owner; racy without its lock (for the dumps)
 * @has: receives whether the owner has a lease
 *
 * Return: the milliseconds left, rounded up; 0 when due or none.
 */
u64 ordlock_lease_left_ms(const struct ordlock_owner *owner, bool *has)
{
	ktime_t expires = READ_ONCE(owner->lease.expires);
	s64 left;

	*has = expires != 0;
	if (!expires)
		return 0;
	left = ktime_to_ns(ktime_sub(expires, ktime_get()));
	return left > 0 ? DIV_ROUND_UP_ULL(left, NSEC_PER_MSEC) : 0;
}

/*
 * Whether the grants of @owner are live now: its lease is neither revoked
 * nor past its deadline (the work may not have run yet). Read without the
 * owner's lock, under the bucket lock of one of its holds (which keeps the
 * owner): the deadline, then the revoked flag, in the reverse order of
 * their writes in ordlock_lease_revoke(), so that a deadline already
 * cleared comes with the flag set. The clock is read last, after the call
 * began: a call made from the deadline on is answered stale.
 */
static bool ordlock_lease_live(const struct ordlock_owner *owner)
{
	const struct ordlock_lease *l = &owner->lease;
	ktime_t expires = READ_ONCE(l->expires);

	/* The deadline, then the flag: pairs with ordlock_lease_revoke() */
	smp_rmb();
	if (READ_ONCE(l->revoked))
		return false;
	return !expires || ktime_before(ktime_get(), expires);
}

/**
 * ordlock_lease_token_check() - is @token the live grant of @key?
 * @domain: the key's domain (a reference held by the caller)
 * @key: the key; its mode is ignored
 * @token: the token
 *
 * A grant whose holder's lease has reached its deadline is not live,
 * whether or not the kernel has released it yet.
 *
 * Return: 0 when an owner holds @key under @token and its lease (if any)
 * is live, else -ESTALE.
 */
int ordlock_lease_token_check(struct ordlock_domain *domain,
			      const struct ordlock_rkey *key, u64 token)
{
	struct ordlock_bucket *bucket;
	struct ordlock_resource *res;
	struct ordlock_hold *hold;
	int ret = -ESTALE;

	if (!token)
		return -ESTALE;
	bucket = ordlock_table_bucket(domain, key->rank, key->id);
	spin_lock(&bucket->lock);
	for (res = bucket->chain; res; res = res->next) {
		if (res->id != key->id || res->rank != key->rank ||
		    res->domain_id != domain->id)
			continue;
		list_for_each_entry(hold, &res->holders, res_node) {
			if (hold->token == token) {
				if (ordlock_lease_live(hold->owner))
					ret = 0;
				break;
			}
		}
		break;
	}
	spin_unlock(&bucket->lock);
	return ret;
}
