// SPDX-License-Identifier: GPL-2.0
/*
 * Detection across nodes, the core's half (docs/cluster.md, "Deadlocks
 * across nodes"; nl_xdetect.c is the daemon's interface).
 *
 * Generations: every wait of an owner of a cluster domain (a request's
 * wait for one key on this node, or for its lock in the DLM) and every
 * grant of a key in the DLM take the next value of one 64-bit counter of
 * this load of the module, which never repeats: a wait with a given
 * generation is one interval of time. The boot id, random at load, tells
 * this load's generations from another's. Owners of local domains take
 * none (their waits concern no other node).
 *
 * owner->xd_gen is the generation of the owner's current wait (0 when it
 * does not wait): written under owner->lock, and for a wait on this node
 * also under ordlock_graph_lock (set before it joins the graph, cleared
 * when it leaves), so that XD_FAIL, which holds ordlock_graph_lock, sees
 * a wait in the graph with its generation. Readers that hold neither
 * (XD_CHECK for a wait in the DLM) read it with READ_ONCE(): a generation
 * that matches is the same wait, whenever it is read.
 *
 * The events: a wait is announced (XD_EVENT WAIT) only once it has lasted
 * the probe delay (ordlock_xd_announce_at(): the domain's detect_delay_ms,
 * at least ORDLOCK_XD_ANNOUNCE_MIN_MS), before which the daemon would not
 * probe it anyway; the waiting task (or the asynchronous request's poll)
 * looks again at that time, as it does for a cycle on this node
 * (wait.c, cluster.c). Its end (WAIT_END) is told only for a wait so
 * announced (owner->xd_told): a wait granted before the delay sends
 * nothing. The replay of XD_HELLO (nl_xdetect.c) still sends every current
 * wait, announced or not yet; one replayed and never announced that ends
 * sends no WAIT_END, and the daemon drops it when its probe's walk answers
 * ESTALE.
 *
 * A victim: XD_FAIL sets owner->xd_victim to the wait's generation and
 * stages the cycle (owner->xd), under ordlock_graph_lock and the bucket
 * lock of the key waited for, then wakes the wait; the wait ends with
 * EDEADLK (wait.c: ordlock_sleep() and ordlock_request_poll() test
 * ordlock_xd_victim()) and copies the cycle into its failure record
 * (ordlock_xd_take_victim()) under ordlock_graph_lock. A wait in the DLM
 * (a domain with policy detect, cluster.c) is found through owner->xd_req
 * instead, under ordlock_xd_dlm_lock, which its victim mark, stage and
 * wake-up take too; and so does ordlock_xd_lkid(), which reads the wait's
 * lock id in the DLM while cluster.c keeps the lock (owner->xd_blk).
 */
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "domain.h"
#include "owner.h"
#include "request.h"
#include "xdetect.h"

/* The module's boot id: random, drawn at load (ordlock_xd_init()) */
u64 ordlock_xd_boot __ro_after_init;
/* The generations: atomic, under no lock */
atomic64_t ordlock_xd_gens = ATOMIC64_INIT(0);
/*
 * A daemon is registered (nl_xdetect.c): wait events are sent. Written by
 * ordlock_xd_set_listening(), read with READ_ONCE(): an event that races
 * a registration may be sent or not; the registration then replays the
 * current waits (nl_xdetect.c), which a full barrier on each side orders
 * against a wait's generation: a wait is announced, or replayed, or both.
 */
bool ordlock_xd_listening;

/*
 * ordlock_xd_dlm_lock protects owner->xd_req and owner->xd_task, and the
 * victim mark and stage of a wait in the DLM. A leaf: taken under
 * owner->lock (cluster.c), and under ordlock_graph_lock by XD_FAIL (see
 * the lock order in main.c).
 */
static DEFINE_SPINLOCK(ordlock_xd_dlm_lock);

/* The subscribers of the wait events: nl_xdetect.c */
static BLOCKING_NOTIFIER_HEAD(ordlock_xd_chain);

void __init ordlock_xd_init(void)
{
	/* never 0: the attribute's absence means "no boot id" */
	do {
		ordlock_xd_boot = get_random_u64();
	} while (!ordlock_xd_boot);
}

/**
 * ordlock_xd_subscribe() - hear of every wait event from now on
 * @nb: its notifier_call gets the enum ordlock_xd_kind and a struct
 *	ordlock_xd_event; called in process context, under the owner's lock
 *
 * Return: 0, or -EEXIST.
 */
int ordlock_xd_subscribe(struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&ordlock_xd_chain, nb);
}

/* ordlock_xd_unsubscribe() - no more events; none is in progress after */
void ordlock_xd_unsubscribe(struct notifier_block *nb)
{
	blocking_notifier_chain_unregister(&ordlock_xd_chain, nb);
}

/* ordlock_xd_set_listening() - a daemon registered (@on) or went away */
void ordlock_xd_set_listening(bool on)
{
	WRITE_ONCE(ordlock_xd_listening, on);
	/* pairs with ordlock_xd_wait_announce(): the replay reads the gens */
	smp_mb();
}

/* Whether the waits of @owner are told: a cluster domain with detect */
static bool ordlock_xd_told(struct ordlock_owner *owner)
{
	return READ_ONCE(ordlock_xd_listening) && owner->cluster &&
	       READ_ONCE(owner->domain->policy) == ORDLOCK_POLICY_DETECT;
}

/**
 * ordlock_xd_wait_start() - @owner starts a wait (owner->pending set):
 *	give it the next generation, if it is in a cluster domain
 * @owner: the owner, locked (and ordlock_graph_lock held for a wait on
 *	this node)
 */
void ordlock_xd_wait_start(struct ordlock_owner *owner)
{
	lockdep_assert_held(&owner->lock);
	if (likely(!owner->cluster))
		return;
	owner->xd_since = ktime_get_real_ns();
	WRITE_ONCE(owner->xd_gen, ordlock_xd_next_gen());
}

static void ordlock_xd_notify(struct ordlock_owner *owner, u32 kind, u32 end,
			      u64 gen, bool cluster_wait)
{
	struct ordlock_xd_event ev = {
		.kind = kind,
		.end = end,
		.owner = owner,
		.rank = owner->pending.rank,
		.id = owner->pending.id,
		.mode = owner->pending.mode,
		.gen = gen,
		.since_ns = owner->xd_since,
		.cluster_wait = cluster_wait,
	};

	blocking_notifier_call_chain(&ordlock_xd_chain, kind, &ev);
}

/**
 * ordlock_xd_announce_at() - when the wait @owner just started (at @since,
 *	CLOCK_MONOTONIC) is to be announced
 * @owner: the owner, locked, its wait started (ordlock_xd_wait_start())
 * @since: when it started
 *
 * Whether a daemon listens is asked at that time, not now: one that
 * registers meanwhile hears the announcement (and its end) too.
 *
 * Return: @since plus the probe delay of a wait of a cluster domain with
 * policy detect, else 0 (never).
 */
ktime_t ordlock_xd_announce_at(struct ordlock_owner *owner, ktime_t since)
{
	struct ordlock_domain *domain = owner->domain;

	lockdep_assert_held(&owner->lock);
	if (!owner->xd_gen || READ_ONCE(domain->policy) != ORDLOCK_POLICY_DETECT)
		return 0;
	return ktime_add_ms(since, max_t(u32, READ_ONCE(domain->detect_delay_ms),
					 ORDLOCK_XD_ANNOUNCE_MIN_MS));
}

/**
 * ordlock_xd_wait_announce() - tell the daemon of the current wait, which
 *	has lasted its probe delay (ordlock_xd_announce_at())
 * @owner: the owner, locked, no spinlock held
 * @cluster_wait: the wait is in the DLM
 */
void ordlock_xd_wait_announce(struct ordlock_owner *owner, bool cluster_wait)
{
	lockdep_assert_held(&owner->lock);
	if (!owner->xd_gen)
		return;
	/* pairs with ordlock_xd_set_listening(): the gen, then listening */
	smp_mb();
	if (!ordlock_xd_told(owner))
		return;
	owner->xd_told = owner->xd_gen;
	ordlock_xd_notify(owner, ORDLOCK_XD_WAIT, 0, owner->xd_gen, cluster_wait);
}

/**
 * ordlock_xd_wait_clear() - @owner's wait ends: it has no generation any
 *	more
 * @owner: the owner, locked (and ordlock_graph_lock held for a wait on
 *	this node)
 *
 * Return: the generation it had (0: none).
 */
u64 ordlock_xd_wait_clear(struct ordlock_owner *owner)
{
	u64 gen = owner->xd_gen;

	if (gen)
		WRITE_ONCE(owner->xd_gen, 0);
	return gen;
}

/* How a wait that ended with @ret ended, for the daemon */
static u32 ordlock_xd_end_of(int ret)
{
	switch (ret) {
	case 0:
		return ORDLOCK_XD_END_GRANTED;
	case -ETIMEDOUT:
		return ORDLOCK_XD_END_TIMEOUT;
	case -EINTR:
		return ORDLOCK_XD_END_SIGNAL;
	case -ECANCELED:
		return ORDLOCK_XD_END_CANCELLED;
	case -EKEYEXPIRED:
		return ORDLOCK_XD_END_REVOKED;
	case -EDEADLK:
		return ORDLOCK_XD_END_DEADLOCK;
	default:
		return ORDLOCK_XD_END_OTHER;
	}
}

/**
 * ordlock_xd_wait_end() - tell the daemon the wait of generation @gen ended,
 *	if it was announced
 * @owner: the owner, locked, no spinlock held; owner->pending still names
 *	the key
 * @gen: what ordlock_xd_wait_clear() returned (0: nothing is told)
 * @ret: how it ended (0: granted)
 * @cluster_wait: the wait was in the DLM
 *
 * A wait that ended before its announcement sends nothing. One announced
 * is told its end even if the domain's policy changed meanwhile (the
 * daemon follows it until then).
 */
void ordlock_xd_wait_end(struct ordlock_owner *owner, u64 gen, int ret,
			 bool cluster_wait)
{
	lockdep_assert_held(&owner->lock);
	if (!gen || owner->xd_told != gen)
		return;
	owner->xd_told = 0;
	if (READ_ONCE(ordlock_xd_listening))
		ordlock_xd_notify(owner, ORDLOCK_XD_WAIT_END,
				  ordlock_xd_end_of(ret), gen, cluster_wait);
}

/*
 * ordlock_xd_victim() - XD_FAIL chose @owner's current wait (its lock, or
 * the bucket lock of the key it waits for, or ordlock_graph_lock held)
 */
bool ordlock_xd_victim(struct ordlock_owner *owner)
{
	u64 gen = READ_ONCE(owner->xd_gen);

	return gen && READ_ONCE(owner->xd_victim) == gen;
}

/**
 * ordlock_xd_take_victim() - the victim's wait ends with EDEADLK: make the
 *	staged cycle its failure record's
 * @owner: the victim, locked, ordlock_graph_lock held
 *
 * Return: the length of the cycle (0 if there is no memory to record it:
 * the wait fails all the same).
 */
unsigned int ordlock_xd_take_victim(struct ordlock_owner *owner)
{
	struct ordlock_xd_cycle *xd = owner->xd;
	unsigned int n;

	lockdep_assert_held(&owner->lock);
	if (!xd || !ordlock_owner_cycle_alloc(owner))
		return 0;
	n = min_t(u32, xd->n, ORDLOCK_CYCLE_MAX);
	memcpy(owner->cycle, xd->steps, n * sizeof(*owner->cycle));
	memcpy(xd->rec_nodes, xd->nodes, n * sizeof(*xd->nodes));
	strscpy(owner->cycle_domain[ORDLOCK_CYCLE_MAX], owner->domain->name,
		ORDLOCK_DOMAIN_NAME_MAX);
	owner->ncycle = n;
	xd->rec_n = n;
	return n;
}

/**
 * ordlock_xd_copy_nodes() - the node ids of the first @n steps of @owner's
 *	failure record (0: this node) to the user's array at @uptr
 * @owner: the owner, locked
 * @uptr: a user pointer to @n u32
 * @n: at most ORDLOCK_CYCLE_MAX
 *
 * Return: 0 or -EFAULT.
 */
int ordlock_xd_copy_nodes(struct ordlock_owner *owner, u64 uptr, unsigned int n)
{
	u32 nodes[ORDLOCK_CYCLE_MAX];
	unsigned int i;

	lockdep_assert_held(&owner->lock);
	n = min_t(unsigned int, n, ORDLOCK_CYCLE_MAX);
	for (i = 0; i < n; i++)
		nodes[i] = ordlock_xd_step_node(owner, i);
	return copy_to_user(u64_to_user_ptr(uptr), nodes, n * sizeof(*nodes)) ?
	       -EFAULT : 0;
}

/**
 * ordlock_xd_arm() - @owner's wait in the DLM can (@req) or can no longer
 *	(NULL) be failed by XD_FAIL
 * @owner: the owner, locked
 * @req: its request, NULL when the wait ends
 * @task: the task that waits, NULL for an asynchronous request (woken by
 *	its notify hook)
 */
void ordlock_xd_arm(struct ordlock_owner *owner, struct ordlock_request *req,
		    struct task_struct *task)
{
	lockdep_assert_held(&owner->lock);
	spin_lock(&ordlock_xd_dlm_lock);
	owner->xd_req = req;
	owner->xd_task = task;
	owner->xd_blk = !!req;
	spin_unlock(&ordlock_xd_dlm_lock);
}

/**
 * ordlock_xd_blk() - the cluster lock of @owner's armed wait in the DLM
 *	may (@readable) or may no longer be read for its lock id: cluster.c
 *	clears it before it asks the backend for an outcome or gives the
 *	lock up (either may free it), and sets it again when still pending
 * @owner: the owner, locked
 * @readable: whether ordlock_xd_lkid() may read it
 */
void ordlock_xd_blk(struct ordlock_owner *owner, bool readable)
{
	lockdep_assert_held(&owner->lock);
	spin_lock(&ordlock_xd_dlm_lock);
	owner->xd_blk = readable && owner->xd_req;
	spin_unlock(&ordlock_xd_dlm_lock);
}

/**
 * ordlock_xd_lkid() - the DLM's lock id of @owner's wait in the DLM, for
 *	the daemon's soft edges (docs/cluster.md, "Deadlocks across nodes")
 * @owner: the owner, any lock held or none (ordlock_xd_dlm_lock is a leaf)
 * @read: reads it from the armed request (cluster.c's, which knows the
 *	backend); called under ordlock_xd_dlm_lock, must not sleep
 *
 * Return: the id, 0 when not known (not armed: an asynchronous upgrade's,
 * or a policy other than detect; the request not made in the DLM yet; the
 * wait ending).
 */
u32 ordlock_xd_lkid(struct ordlock_owner *owner,
		    u32 (*read)(struct ordlock_request *req))
{
	u32 lkid = 0;

	spin_lock(&ordlock_xd_dlm_lock);
	/* armed and readable: cluster.c cannot let its lock go meanwhile */
	if (owner->xd_req && owner->xd_blk)
		lkid = read(owner->xd_req);
	spin_unlock(&ordlock_xd_dlm_lock);
	return lkid;
}

/**
 * ordlock_xd_stage() - mark @owner's wait @gen a victim, with the cycle
 *	@stage (taken when the owner has no buffer yet: *@stage is NULL then)
 * @owner: the owner; ordlock_graph_lock (a wait on the node) or
 *	ordlock_xd_dlm_lock (a wait in the DLM) held
 * @gen: the wait's generation
 * @stage: the cycle XD_FAIL parsed
 */
void ordlock_xd_stage(struct ordlock_owner *owner, u64 gen,
		      struct ordlock_xd_cycle **stage)
{
	if (!owner->xd) {
		owner->xd = *stage;
		*stage = NULL;
	} else {
		owner->xd->n = (*stage)->n;
		memcpy(owner->xd->steps, (*stage)->steps, sizeof((*stage)->steps));
		memcpy(owner->xd->nodes, (*stage)->nodes, sizeof((*stage)->nodes));
	}
	owner->xd->gen = gen;
	WRITE_ONCE(owner->xd_victim, gen);
}

/**
 * ordlock_xd_fail_dlm() - XD_FAIL of @owner's wait @gen in the DLM: mark
 *	it, stage the cycle and wake the wait
 * @owner: the owner, whose current wait has generation @gen and is not on
 *	the node (XD_FAIL checked, ordlock_graph_lock held)
 * @gen: its generation
 * @stage: as ordlock_xd_stage()
 *
 * Return: 0, or -EOPNOTSUPP when the wait cannot be ended (not armed: an
 * upgrade's, or a policy other than detect).
 */
int ordlock_xd_fail_dlm(struct ordlock_owner *owner, u64 gen,
			struct ordlock_xd_cycle **stage)
{
	int ret = 0;

	spin_lock(&ordlock_xd_dlm_lock);
	if (!owner->xd_req) {
		ret = -EOPNOTSUPP;
	} else {
		ordlock_xd_stage(owner, gen, stage);
		ordlock_xd_wake(owner->xd_task, &owner->xd_req->w);
	}
	spin_unlock(&ordlock_xd_dlm_lock);
	return ret;
}

/* ordlock_xd_take_victim() of a wait in the DLM (cluster.c), owner locked */
unsigned int ordlock_xd_take_victim_dlm(struct ordlock_owner *owner)
{
	unsigned int n;

	spin_lock(&ordlock_xd_dlm_lock);
	n = ordlock_xd_take_victim(owner);
	spin_unlock(&ordlock_xd_dlm_lock);
	return n;
}
