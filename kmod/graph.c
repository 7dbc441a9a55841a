// SPDX-License-Identifier: GPL-2.0
/*
 * The wait-for graph.
 *
 * The graph is not stored apart: its nodes are the owners and its edges are
 * read from the resources. A waiting owner has an edge to every other owner
 * that holds its resource in a conflicting mode (hard) and to every owner
 * queued ahead of it on that resource with a conflicting request (soft).
 *
 * Before an owner sleeps, it walks the graph breadth-first from itself
 * under domain->graph_lock, taking one bucket lock at a time, and only
 * through owners that are part of the graph (owner->waiting set). The walk
 * costs time in proportion to the part of the graph reachable from it.
 * Joining the graph and walking happen in one critical section of
 * graph_lock, so of the owners whose waits together close a cycle, the
 * last one to join finds it, and only that one: it is the victim.
 *
 * One process may hold keys through several owners (file descriptions),
 * each obeying the order rule alone. An owner that is not waiting, but
 * whose last request came from a thread that is now blocked in a wait
 * through another owner, cannot release anything before that thread wakes:
 * the walk passes from it to the owner that thread waits through
 * (domain->waiting_tids). Netlink waits block no thread and take no part.
 * This catches the cycles a single thread builds across descriptors.
 *
 * No edge of a cycle found this way can be stale. Every owner on it is in
 * the middle of a wait, so it releases nothing, and leaving the graph needs
 * graph_lock, which the walk holds. A member that was granted meanwhile is
 * recognised by its waiter's granted flag, read under the bucket lock, and
 * the walk does not pass through it.
 */
#include <linux/ratelimit.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "domain.h"
#include "graph.h"
#include "keys.h"
#include "owner.h"
#include "params.h"
#include "request.h"
#include "table.h"

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
 */
struct ordlock_deadlock {
	u64 seq;
	u64 time_ns;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	u32 len;
	struct ordlock_cycle_step steps[ORDLOCK_HISTORY_STEPS];
};

/*
 * ordlock_history_lock protects the ring of the last deadlocks
 * (ordlock_history, ordlock_history_seq). It is a leaf lock.
 */
static DEFINE_SPINLOCK(ordlock_history_lock);
static struct ordlock_deadlock *ordlock_history;
static unsigned int ordlock_history_len;
static u64 ordlock_history_seq;

static DEFINE_RATELIMIT_STATE(ordlock_log_ratelimit, 5 * HZ, 10);

int ordlock_graph_init(void)
{
	ordlock_history_len = clamp(ordlock_deadlock_history, 1U, 4096U);
	ordlock_history = kvcalloc(ordlock_history_len, sizeof(*ordlock_history),
				   GFP_KERNEL);
	return ordlock_history ? 0 : -ENOMEM;
}

void ordlock_graph_exit(void)
{
	kvfree(ordlock_history);
}

/**
 * ordlock_graph_edges() - call @fn for each edge out of waiter @w
 * @res: the resource @w is queued on, bucket lock held
 * @w: a waiter that is not granted
 * @fn: called with the owner waited for, the enum ordlock_edge and the
 *	mode in which that owner blocks @w; returns true to stop
 * @arg: passed to @fn
 *
 * Return: true when @fn stopped the walk.
 */
bool ordlock_graph_edges(struct ordlock_resource *res,
			 struct ordlock_waiter *w, ordlock_edge_fn fn,
			 void *arg)
{
	struct ordlock_owner *self = w->hold->owner;
	struct ordlock_waiter *ahead;
	struct ordlock_hold *hold;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	list_for_each_entry(hold, &res->holders, res_node) {
		if (hold->owner == self || !ordlock_modes_conflict(hold->mode, w->mode))
			continue;
		if (fn(arg, hold->owner, ORDLOCK_EDGE_HARD, hold->mode))
			return true;
	}
	list_for_each_entry(ahead, &res->waiters, node) {
		if (ahead == w)
			break;
		if (ahead->hold->owner == self ||
		    !ordlock_modes_conflict(ahead->mode, w->mode))
			continue;
		if (fn(arg, ahead->hold->owner, ORDLOCK_EDGE_SOFT, ahead->mode))
			return true;
	}
	return false;
}

/**
 * struct ordlock_walk - state of one graph walk
 * @domain: the domain walked
 * @start: the owner the walk starts from
 * @start_blocks: @start waits in a task, which is blocked meanwhile
 * @from: the owner whose edges are being followed
 * @gen: the walk's generation
 * @queue: owners still to expand
 */
struct ordlock_walk {
	struct ordlock_domain *domain;
	struct ordlock_owner *start;
	bool start_blocks;
	struct ordlock_owner *from;
	u64 gen;
	struct list_head queue;
};

/**
 * ordlock_graph_join() - put @owner, about to wait with @w, in the graph
 * @domain: the domain, graph_lock held
 * @owner: the owner
 * @w: its waiter
 */
void ordlock_graph_join(struct ordlock_domain *domain,
			struct ordlock_owner *owner, struct ordlock_waiter *w)
{
	lockdep_assert_held(&domain->graph_lock);
	if (WARN_ON_ONCE(owner->waiting))
		return;
	owner->waiting = w;
	/* Only a wait in a task blocks the thread (netlink waits do not) */
	if (w->task)
		hlist_add_head(&owner->tid_node,
			       &domain->waiting_tids[owner->tid % ORDLOCK_TID_HASH]);
}

/**
 * ordlock_graph_leave() - take @owner out of the graph, if it is in
 * @domain: the domain, graph_lock held
 * @owner: the owner
 */
void ordlock_graph_leave(struct ordlock_domain *domain,
			 struct ordlock_owner *owner)
{
	lockdep_assert_held(&domain->graph_lock);
	if (!owner->waiting)
		return;
	owner->waiting = NULL;
	if (!hlist_unhashed(&owner->tid_node))
		hlist_del_init(&owner->tid_node);
}

/*
 * The owner through which the thread that made @holder's last request is
 * blocked, NULL when it is not.  The thread is known by its id and its
 * start time: a thread that reuses the id of one that exited is another
 * thread, and never links @holder to its own waits.
 */
static struct ordlock_owner *ordlock_graph_tid_owner(struct ordlock_walk *walk,
						     struct ordlock_owner *holder)
{
	pid_t tid = READ_ONCE(holder->tid);
	u64 start = READ_ONCE(holder->tid_start);
	struct ordlock_owner *owner;

	if (walk->start_blocks && tid == walk->start->tid &&
	    start == walk->start->tid_start)
		return walk->start;
	hlist_for_each_entry(owner, &walk->domain->waiting_tids[tid % ORDLOCK_TID_HASH],
			     tid_node)
		if (owner->tid == tid && owner->tid_start == start)
			return owner;
	return NULL;
}

/* Follow an edge walk->from -> @to; true when it closes the cycle */
static bool ordlock_graph_visit(void *arg, struct ordlock_owner *to,
				u32 edge, u32 mode)
{
	struct ordlock_walk *walk = arg;

	/* A holder whose thread waits elsewhere waits with that thread */
	if (to != walk->start && !to->waiting) {
		to = ordlock_graph_tid_owner(walk, to);
		if (!to)
			return false;
	}
	if (to != walk->start && to->walk_gen == walk->gen)
		return false;
	to->walk_parent = walk->from;
	to->walk_edge = edge;
	to->walk_mode = mode;
	if (to == walk->start)
		return true;
	to->walk_gen = walk->gen;
	list_add_tail(&to->walk_node, &walk->queue);
	return false;
}

/* Follow every edge out of walk->from, which waits with @w */
static bool ordlock_graph_expand(struct ordlock_walk *walk,
				 struct ordlock_waiter *w)
{
	struct ordlock_resource *res = w->hold->res;
	bool found = false;

	spin_lock(&ordlock_res_bucket(res)->lock);
	if (!w->granted)
		found = ordlock_graph_edges(res, w, ordlock_graph_visit, walk);
	spin_unlock(&ordlock_res_bucket(res)->lock);
	return found;
}

static void ordlock_graph_fill_step(struct ordlock_cycle_step *step,
				    struct ordlock_owner *owner,
				    struct ordlock_waiter *w,
				    struct ordlock_owner *next)
{
	memset(step, 0, sizeof(*step));
	step->owner_id = owner->id;
	step->pid = READ_ONCE(owner->pid);
	step->edge = next->walk_edge;
	step->key.rank = w->hold->res->rank;
	step->key.id = w->hold->res->id;
	step->key.mode = w->mode;
	step->blocker_mode = next->walk_mode;
	ordlock_comm_sanitize(step->comm, owner->comm);
}

/* Record the cycle found through @start in start->cycle; return its length */
static unsigned int ordlock_graph_record(struct ordlock_owner *start,
					 struct ordlock_waiter *sw)
{
	struct ordlock_owner *cur, *next = start;
	unsigned int len = 1, i;

	for (cur = start->walk_parent; cur != start; cur = cur->walk_parent)
		len++;
	/*
	 * Deadlocks are rare: the victim's record is allocated when one is
	 * found, not by every owner that waits. Without memory, the cycle is
	 * still broken, only not recorded.
	 */
	if (!start->cycle)
		start->cycle = kcalloc(ORDLOCK_CYCLE_MAX, sizeof(*start->cycle),
				       GFP_ATOMIC | __GFP_NOWARN);
	/* Parents lead backwards: from the last step down to the victim */
	cur = start->walk_parent;
	for (i = len - 1; ; i--) {
		if (start->cycle && i < ORDLOCK_CYCLE_MAX)
			ordlock_graph_fill_step(&start->cycle[i], cur,
						cur == start ? sw : cur->waiting,
						next);
		if (cur == start)
			break;
		next = cur;
		cur = cur->walk_parent;
	}
	start->ncycle = start->cycle ? min_t(unsigned int, len, ORDLOCK_CYCLE_MAX) : 0;
	return len;
}

/**
 * ordlock_graph_find_cycle() - would the wait of @start close a cycle?
 * @domain: the domain, graph_lock held
 * @start: the owner about to wait (or waiting) with @w
 * @w: its waiter, queued on its resource
 *
 * When it finds a cycle, it records its steps in start->cycle.
 *
 * Return: the length of the cycle, in owners, or 0 when there is none.
 */
unsigned int ordlock_graph_find_cycle(struct ordlock_domain *domain,
				      struct ordlock_owner *start,
				      struct ordlock_waiter *w)
{
	struct ordlock_walk walk = {
		.domain = domain,
		.start = start,
		.start_blocks = w->task,
	};
	struct ordlock_owner *x, *tmp;
	bool found = false;

	lockdep_assert_held(&domain->graph_lock);
	INIT_LIST_HEAD(&walk.queue);
	walk.gen = ++domain->walk_gen;
	start->walk_gen = walk.gen;
	list_add_tail(&start->walk_node, &walk.queue);
	while (!found && !list_empty(&walk.queue)) {
		x = list_first_entry(&walk.queue, struct ordlock_owner, walk_node);
		list_del_init(&x->walk_node);
		walk.from = x;
		found = ordlock_graph_expand(&walk, x == start ? w : x->waiting);
	}
	list_for_each_entry_safe(x, tmp, &walk.queue, walk_node)
		list_del_init(&x->walk_node);
	return found ? ordlock_graph_record(start, w) : 0;
}

const char *ordlock_mode_str(u32 mode)
{
	return mode == ORDLOCK_MODE_EXCLUSIVE ? "exclusive" :
	       mode == ORDLOCK_MODE_SHARED ? "shared" : "none";
}

static void ordlock_graph_log(struct ordlock_owner *victim, unsigned int len)
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

		at += scnprintf(buf + at, size - at,
				"pid %u (%s) waits for %s %u:%llu %s by pid %u (%s); ",
				s->pid, s->comm, ordlock_mode_str(s->key.mode),
				s->key.rank, s->key.id,
				s->edge == ORDLOCK_EDGE_SOFT ? "queued ahead" : "held",
				t->pid, t->comm);
	}
	if (n < len)
		at += scnprintf(buf + at, size - at, "... %u more steps; ", len - n);
	scnprintf(buf + at, size - at, "victim pid %d", READ_ONCE(victim->pid));
	pr_warn("ordlock: %s\n", buf);
	kfree(buf);
}

/**
 * ordlock_graph_report() - tell the kernel log and the history of a deadlock
 * @victim: the owner, locked, whose failure record holds the cycle
 */
void ordlock_graph_report(struct ordlock_owner *victim)
{
	unsigned int len = victim->failure.cycle_len;
	struct ordlock_deadlock *d;

	lockdep_assert_held(&victim->lock);
	ordlock_graph_log(victim, len);

	spin_lock(&ordlock_history_lock);
	d = &ordlock_history[ordlock_history_seq % ordlock_history_len];
	d->seq = ++ordlock_history_seq;
	d->time_ns = ktime_get_real_ns();
	memcpy(d->domain, victim->domain->name, sizeof(d->domain));
	d->len = len;
	memset(d->steps, 0, sizeof(d->steps));
	if (victim->cycle)
		memcpy(d->steps, victim->cycle,
		       min_t(unsigned int, victim->ncycle, ORDLOCK_HISTORY_STEPS) *
		       sizeof(d->steps[0]));
	spin_unlock(&ordlock_history_lock);
}

/**
 * ordlock_graph_show_history() - print the last deadlocks, oldest first
 * @m: the seq_file of debugfs "deadlocks"
 *
 * Lines: "deadlock SEQ TIME_NS DOMAIN LEN", then one line per recorded step:
 * "step SEQ I OWNER_ID PID COMM MODE RANK:ID EDGE BLOCKER_MODE".
 */
void ordlock_graph_show_history(struct seq_file *m)
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
			seq_printf(m, "step %llu %u %llu %u %s %s %u:%llu %s %s\n",
				   d->seq, i, s->owner_id, s->pid, s->comm,
				   ordlock_mode_str(s->key.mode), s->key.rank,
				   s->key.id,
				   s->edge == ORDLOCK_EDGE_SOFT ? "soft" : "hard",
				   ordlock_mode_str(s->blocker_mode));
		}
	}
	spin_unlock(&ordlock_history_lock);
}
