// SPDX-License-Identifier: GPL-2.0
/*
 * Events: failures counted, deadlocks logged and kept, subscribers told.
 *
 * The lock core calls one function per kind of event, with the owner
 * concerned locked. Each failure reason counts in one counter of the
 * owner's domain (the table below); a deadlock is also written to the
 * kernel log (rate-limited) and kept in the history debugfs shows; then
 * the subscribers hear of it through a notifier chain. A front end that
 * wants events (netlink.c's "events" group) subscribes at init and
 * unsubscribes at exit; nothing here knows how it delivers them.
 */
#include <linux/ratelimit.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "domain.h"
#include "events.h"
#include "graph.h"
#include "owner.h"
#include "params.h"
#include "xdetect.h"

/* Steps of a cycle kept in the history, and printed in the kernel log */
#define ORDLOCK_HISTORY_STEPS	16
#define ORDLOCK_LOG_STEPS	8

/**
 * struct ordlock_deadlock - a detected deadlock, as debugfs shows it
 * @seq: sequence number, from 1
 * @time_ns: wall-clock time of the detection
 * @domain: the domain's name
 * @len: number of steps of the cycle
 * @steps: the first ORDLOCK_HISTORY_STEPS steps, victim first
 * @step_domain: the domain of each of @steps flagged
 *	ORDLOCK_STEP_OTHER_DOMAIN (the others are in @domain; not written)
 */
struct ordlock_deadlock {
	u64 seq;
	u64 time_ns;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	u32 len;
	struct ordlock_cycle_step steps[ORDLOCK_HISTORY_STEPS];
	char step_domain[ORDLOCK_HISTORY_STEPS][ORDLOCK_DOMAIN_NAME_MAX];
};

/*
 * ordlock_history_lock protects the ring of the last deadlocks
 * (ordlock_history, ordlock_history_seq). A leaf: see the lock order in
 * main.c.
 */
static DEFINE_SPINLOCK(ordlock_history_lock);
static struct ordlock_deadlock *ordlock_history;
static unsigned int ordlock_history_len;
static u64 ordlock_history_seq;

static DEFINE_RATELIMIT_STATE(ordlock_log_ratelimit, 5 * HZ, 10);

/*
 * The subscribers. The chain's rwsem is read-held while they are called
 * (under owner->lock or ordlock_nl_lock) and write-held only by
 * subscribe and unsubscribe: see the lock order in main.c.
 */
static BLOCKING_NOTIFIER_HEAD(ordlock_event_chain);

/* The counter of the owner's domain each failure reason counts in */
static const u8 ordlock_reason_stats[] = {
	[ORDLOCK_REASON_ORDER] = ORDLOCK_STAT_ORDER_VIOLATIONS,
	[ORDLOCK_REASON_STRICT] = ORDLOCK_STAT_ORDER_VIOLATIONS,
	[ORDLOCK_REASON_TIMEOUT] = ORDLOCK_STAT_TIMEOUTS,
	[ORDLOCK_REASON_BUSY] = ORDLOCK_STAT_TRY_FAILURES,
	[ORDLOCK_REASON_SIGNAL] = ORDLOCK_STAT_SIGNALS,
	[ORDLOCK_REASON_DEADLOCK] = ORDLOCK_STAT_DEADLOCKS,
	[ORDLOCK_REASON_UPGRADE] = ORDLOCK_STAT_UPGRADE_DEADLOCKS,
	[ORDLOCK_REASON_OWNER_LIMIT] = ORDLOCK_STAT_LIMITS,
	[ORDLOCK_REASON_RESOURCE_LIMIT] = ORDLOCK_STAT_LIMITS,
	[ORDLOCK_REASON_USER_LIMIT] = ORDLOCK_STAT_LIMITS,
	[ORDLOCK_REASON_REVOKED] = ORDLOCK_STAT_REVOCATIONS,
};

int ordlock_events_init(void)
{
	ordlock_history_len = clamp(ordlock_deadlock_history, 1U, 4096U);
	ordlock_history = kvcalloc(ordlock_history_len, sizeof(*ordlock_history),
				   GFP_KERNEL);
	return ordlock_history ? 0 : -ENOMEM;
}

void ordlock_events_exit(void)
{
	kvfree(ordlock_history);
}

/**
 * ordlock_events_subscribe() - hear of every event from now on
 * @nb: its notifier_call gets the enum ordlock_event and a struct
 *	ordlock_event_info
 *
 * Return: 0, or -EEXIST when @nb is subscribed already.
 */
int ordlock_events_subscribe(struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&ordlock_event_chain, nb);
}

/* ordlock_events_unsubscribe() - no more events; none is in progress after */
void ordlock_events_unsubscribe(struct notifier_block *nb)
{
	blocking_notifier_chain_unregister(&ordlock_event_chain, nb);
}

static void ordlock_event_notify(struct ordlock_owner *owner, u32 event,
				 const char *domain)
{
	struct ordlock_event_info info = {
		.event = event,
		.domain = domain,
		.owner = owner,
	};

	blocking_notifier_call_chain(&ordlock_event_chain, event, &info);
}

/* Count the failure recorded for @owner in its domain's counters */
static void ordlock_event_count(struct ordlock_owner *owner)
{
	u32 reason = owner->failure.reason;

	if (reason < ARRAY_SIZE(ordlock_reason_stats) && ordlock_reason_stats[reason])
		ordlock_stat_inc(owner->domain, ordlock_reason_stats[reason]);
}

/* "node N " for step @i of @victim's cycle when it is another node's */
static size_t ordlock_event_log_node(struct ordlock_owner *victim,
				     unsigned int i, char *buf, size_t size)
{
	if (!(victim->cycle[i].flags & ORDLOCK_STEP_OTHER_NODE))
		return 0;
	return scnprintf(buf, size, "node %u ", ordlock_xd_step_node(victim, i));
}

static void ordlock_event_log_deadlock(struct ordlock_owner *victim,
				       unsigned int len)
{
	unsigned int i, n = min_t(unsigned int, victim->ncycle, ORDLOCK_LOG_STEPS);
	size_t size = 160 + n * 160, at;
	char *buf;

	if (!__ratelimit(&ordlock_log_ratelimit))
		return;
	buf = kmalloc(size, GFP_KERNEL | __GFP_NOWARN);
	if (!buf) {
		pr_warn("ordlock: deadlock in domain \"%s\": %u owners; victim pid %d\n",
			victim->domain->name, len, READ_ONCE(victim->pid));
		return;
	}
	at = scnprintf(buf, size, "deadlock in domain \"%s\": ", victim->domain->name);
	for (i = 0; i < n; i++) {
		const struct ordlock_cycle_step *s = &victim->cycle[i];
		const struct ordlock_cycle_step *t = &victim->cycle[(i + 1) % victim->ncycle];

		at += ordlock_event_log_node(victim, i, buf + at, size - at);
		at += scnprintf(buf + at, size - at, "pid %u (%s) waits for %s %u:%llu",
				s->pid, s->comm, ordlock_mode_str(s->key.mode),
				s->key.rank, s->key.id);
		if (s->flags & ORDLOCK_STEP_OTHER_DOMAIN)
			at += scnprintf(buf + at, size - at, " of domain \"%s\"",
					victim->cycle_domain[i]);
		at += scnprintf(buf + at, size - at, " %s by ",
				s->edge == ORDLOCK_EDGE_SOFT ? "queued ahead" : "held");
		at += ordlock_event_log_node(victim, (i + 1) % victim->ncycle,
					     buf + at, size - at);
		at += scnprintf(buf + at, size - at, "pid %u (%s); ", t->pid, t->comm);
	}
	if (n < len)
		at += scnprintf(buf + at, size - at, "... %u more steps; ", len - n);
	scnprintf(buf + at, size - at, "victim pid %d", READ_ONCE(victim->pid));
	pr_warn("ordlock: %s\n", buf);
	kfree(buf);
}

/* Tell the kernel log and the history of the deadlock @victim broke */
static void ordlock_event_record_deadlock(struct ordlock_owner *victim)
{
	unsigned int len = victim->failure.cycle_len, n, i;
	struct ordlock_deadlock *d;

	ordlock_event_log_deadlock(victim, len);

	spin_lock(&ordlock_history_lock);
	d = &ordlock_history[ordlock_history_seq % ordlock_history_len];
	d->seq = ++ordlock_history_seq;
	d->time_ns = ktime_get_real_ns();
	memcpy(d->domain, victim->domain->name, sizeof(d->domain));
	d->len = len;
	memset(d->steps, 0, sizeof(d->steps));
	if (victim->cycle) {
		n = min_t(unsigned int, victim->ncycle, ORDLOCK_HISTORY_STEPS);
		memcpy(d->steps, victim->cycle, n * sizeof(d->steps[0]));
		/* A step in the victim's domain is named by d->domain */
		for (i = 0; i < n; i++)
			if (d->steps[i].flags & ORDLOCK_STEP_OTHER_DOMAIN)
				memcpy(d->step_domain[i], victim->cycle_domain[i],
				       sizeof(d->step_domain[i]));
	}
	spin_unlock(&ordlock_history_lock);
}

/**
 * ordlock_event_failure() - a request of @owner failed
 * @owner: the owner, locked; its failure record says why
 *
 * Counts the failure; a deadlock is logged and kept in the history;
 * deadlocks, timeouts, order violations, limits and revocations (lease.c)
 * are told to the subscribers.
 */
void ordlock_event_failure(struct ordlock_owner *owner)
{
	lockdep_assert_held(&owner->lock);
	ordlock_event_count(owner);
	switch (owner->failure.reason) {
	case ORDLOCK_REASON_DEADLOCK:
		ordlock_event_record_deadlock(owner);
		ordlock_event_notify(owner, ORDLOCK_EVENT_DEADLOCK, owner->domain->name);
		break;
	case ORDLOCK_REASON_TIMEOUT:
		ordlock_event_notify(owner, ORDLOCK_EVENT_TIMEOUT, owner->domain->name);
		break;
	case ORDLOCK_REASON_ORDER:
	case ORDLOCK_REASON_STRICT:
		ordlock_event_notify(owner, ORDLOCK_EVENT_ORDER, owner->domain->name);
		break;
	case ORDLOCK_REASON_OWNER_LIMIT:
	case ORDLOCK_REASON_RESOURCE_LIMIT:
	case ORDLOCK_REASON_USER_LIMIT:
		ordlock_event_notify(owner, ORDLOCK_EVENT_LIMIT, owner->domain->name);
		break;
	case ORDLOCK_REASON_REVOKED:
		ordlock_event_notify(owner, ORDLOCK_EVENT_REVOKED, owner->domain->name);
		break;
	}
}

/**
 * ordlock_event_domain_refused() - @owner may not create the domain @name
 * @owner: the owner, locked, with its failure record (a per-user limit)
 * @name: the domain it would be in
 *
 * Counted in the owner's present domain, and told as a LIMIT event that
 * names @name, as the event of a refused owner names the default domain.
 */
void ordlock_event_domain_refused(struct ordlock_owner *owner, const char *name)
{
	lockdep_assert_held(&owner->lock);
	ordlock_event_count(owner);
	ordlock_event_notify(owner, ORDLOCK_EVENT_LIMIT, name);
}

/**
 * ordlock_event_owner_refused() - the calling task was refused an owner by
 *	max_owners_per_user
 * @kind: the enum ordlock_owner_kind it asked for
 * @user: its user
 *
 * There is no owner and no domain to count it in: only the subscribers
 * hear of it, as a LIMIT event in the default domain.
 */
void ordlock_event_owner_refused(u32 kind, const struct ordlock_user *user)
{
	struct ordlock_event_info info = {
		.event = ORDLOCK_EVENT_LIMIT,
		.domain = ORDLOCK_DEFAULT_DOMAIN,
		.kind = kind,
		.user = user,
	};

	blocking_notifier_call_chain(&ordlock_event_chain, info.event, &info);
}

/**
 * ordlock_event_owner_died() - @owner's last process was killed by a
 *	signal while the owner held keys
 * @owner: the owner, locked, before its keys are released
 */
void ordlock_event_owner_died(struct ordlock_owner *owner)
{
	lockdep_assert_held(&owner->lock);
	ordlock_event_notify(owner, ORDLOCK_EVENT_OWNER_DIED, owner->domain->name);
}

/**
 * ordlock_event_potential() - the learned order of @owner's domain found a
 *	potential deadlock (order.c has logged it)
 * @owner: the owner whose grant closed it, locked
 * @kind: an enum ordlock_potential_kind
 * @edges: the first observations of its edges, the closing one last
 * @n: their number
 * @dropped: the learned order's dropped count
 *
 * Called under the domain's order->lock: see the lock order in main.c.
 */
void ordlock_event_potential(struct ordlock_owner *owner, u32 kind,
			     const struct ordlock_order_edge *edges, u32 n,
			     u64 dropped)
{
	struct ordlock_event_info info = {
		.event = ORDLOCK_EVENT_POTENTIAL_DEADLOCK,
		.domain = owner->domain->name,
		.owner = owner,
		.potential = edges,
		.npotential = n,
		.potential_kind = kind,
		.dropped = dropped,
	};

	lockdep_assert_held(&owner->lock);
	blocking_notifier_call_chain(&ordlock_event_chain, info.event, &info);
}

/**
 * ordlock_events_show_deadlocks() - print the last deadlocks, oldest first
 * @m: the seq_file of debugfs "deadlocks"
 *
 * Lines: "deadlock SEQ TIME_NS DOMAIN LEN", then one line per recorded step:
 * "step SEQ I OWNER_ID PID COMM MODE RANK:ID EDGE BLOCKER_MODE DOMAIN"
 * (DOMAIN: the step's, which a cycle through a thread may change).
 */
void ordlock_events_show_deadlocks(struct seq_file *m)
{
	u64 first, seq;
	unsigned int i;

	spin_lock(&ordlock_history_lock);
	first = ordlock_history_seq > ordlock_history_len ?
		ordlock_history_seq - ordlock_history_len : 0;
	for (seq = first; seq < ordlock_history_seq; seq++) {
		const struct ordlock_deadlock *d =
			&ordlock_history[seq % ordlock_history_len];
		unsigned int n = min_t(unsigned int, d->len, ORDLOCK_HISTORY_STEPS);

		seq_printf(m, "deadlock %llu %llu %s %u\n", d->seq, d->time_ns,
			   d->domain, d->len);
		for (i = 0; i < n; i++) {
			const struct ordlock_cycle_step *s = &d->steps[i];

			if (!s->pid && !s->owner_id)
				break;
			seq_printf(m, "step %llu %u %llu %u %s %s %u:%llu %s %s %s\n",
				   d->seq, i, s->owner_id, s->pid, s->comm,
				   ordlock_mode_str(s->key.mode), s->key.rank,
				   s->key.id,
				   s->edge == ORDLOCK_EDGE_SOFT ? "soft" : "hard",
				   ordlock_mode_str(s->blocker_mode),
				   s->flags & ORDLOCK_STEP_OTHER_DOMAIN ?
				   d->step_domain[i] : d->domain);
		}
	}
	spin_unlock(&ordlock_history_lock);
}
