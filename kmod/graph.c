// SPDX-License-Identifier: GPL-2.0
/*
 * The wait-for graph.
 *
 * The graph is not stored apart: its nodes are the owners and its edges are
 * read from the resources. A waiting owner has an edge to every other owner
 * that holds its resource in a conflicting mode (hard) and to every owner
 * queued ahead of it on that resource with a conflicting request (soft).
 *
 * There is one graph for the whole module, not one per domain: keys of
 * two domains never contend, but a thread can hold keys in one domain and
 * wait in another, and then it is the thread that waits (below). One lock,
 * ordlock_graph_lock, protects the graph of every domain.
 *
 * Before an owner sleeps, it walks the graph breadth-first from itself
 * under ordlock_graph_lock, taking one bucket lock at a time, and only
 * through owners that are part of the graph (owner->waiting set). The walk
 * costs time in proportion to the part of the graph reachable from it.
 * Joining the graph and walking happen in one critical section of
 * ordlock_graph_lock, so of the owners whose waits together close a cycle,
 * the last one to join finds it, and only that one: it is the victim.
 * Whether it looks at all is the policy of its own domain (none in a
 * "timeout" domain, whose waits are left to their timeouts); the cycle it
 * finds may pass through owners of any domain and any policy: each
 * domain's order rule ("enforce") rules out cycles inside that domain
 * only.
 *
 * One process may hold keys through several owners (file descriptions),
 * each obeying the order rule alone, in one domain or in several. An owner
 * that is not waiting, but whose last request came from a thread that is
 * now blocked in a wait through another owner, cannot release anything
 * before that thread wakes: the walk passes from it to the owner that
 * thread waits through (ordlock_waiting_tids), whatever the domains of the
 * two owners. Netlink waits block no thread and take no part. This
 * catches the cycles threads build across descriptors and across domains.
 *
 * No edge of a cycle found this way can be stale. Every owner on it is in
 * the middle of a wait, so it releases nothing, and leaving the graph needs
 * ordlock_graph_lock, which the walk holds. A member that was granted meanwhile is
 * recognised by its waiter's granted flag, read under the bucket lock, and
 * the walk does not pass through it.
 */
#include <linux/hash.h>

#include "domain.h"
#include "graph.h"
#include "keys.h"
#include "owner.h"
#include "resource.h"
#include "table.h"

/*
 * ordlock_graph_lock protects the wait-for graph of every domain:
 * owner->waiting, the walk fields of all owners, ordlock_graph_walk_gen and
 * ordlock_waiting_tids. Nests inside owner->lock and outside bucket->lock:
 * see the lock order in main.c.
 */
DEFINE_SPINLOCK(ordlock_graph_lock);

/* Generation of the last graph walk; under ordlock_graph_lock */
static u64 ordlock_graph_walk_gen;

/*
 * The owners in the graph whose wait blocks a task, hashed by the thread
 * id of that task (owner->tid_node); under ordlock_graph_lock
 */
#define ORDLOCK_TID_HASH_BITS	6
static struct hlist_head ordlock_waiting_tids[1 << ORDLOCK_TID_HASH_BITS];

static struct hlist_head *ordlock_tid_head(pid_t tid)
{
	return &ordlock_waiting_tids[hash_32((u32)tid, ORDLOCK_TID_HASH_BITS)];
}

/**
 * struct ordlock_graph_fast - an edge to a fast-path holder, for
 *	ordlock_graph_fast_edge()
 * @self: the waiting owner
 * @fn: the edge callback
 * @arg: its argument
 */
struct ordlock_graph_fast {
	struct ordlock_owner *self;
	ordlock_edge_fn fn;
	void *arg;
};

/*
 * The member that holds the key by the fast path, as its word names it (as
 * rt_mutex chain walks follow the owner a lock's word names): a hard edge,
 * exclusive. An index that names no owner gives no edge (nothing to
 * follow): the waiter waits for its timeout.
 */
static bool ordlock_graph_fast_edge(void *arg, const struct ordlock_word_holder *h)
{
	struct ordlock_graph_fast *e = arg;

	if (!h->owner || h->owner == e->self)
		return false;
	return e->fn(e->arg, h->owner, ORDLOCK_EDGE_HARD | ORDLOCK_EDGE_FAST_HOLDER,
		     ORDLOCK_MODE_EXCLUSIVE, h->index);
}

/*
 * The edges out of waiter @w, for ordlock_graph_edges() and the walk: inlined
 * into the walk with its own @fn, so that following an edge there is a
 * direct call, not an indirect one.
 */
static __always_inline bool __ordlock_graph_edges(struct ordlock_resource *res,
						  struct ordlock_waiter *w,
						  ordlock_edge_fn fn, void *arg)
{
	struct ordlock_owner *self = w->hold->owner;
	struct ordlock_waiter *ahead;
	struct ordlock_hold *hold;

	lockdep_assert_held(&ordlock_res_bucket(res)->lock);
	list_for_each_entry(hold, &res->holders, res_node) {
		if (hold->owner == self || !ordlock_modes_conflict(hold->mode, w->mode))
			continue;
		if (fn(arg, hold->owner, ORDLOCK_EDGE_HARD, hold->mode, 0))
			return true;
	}
	if (unlikely(res->fast)) {
		struct ordlock_graph_fast e = { .self = self, .fn = fn, .arg = arg };

		/* @fn runs under the owner table's lock: the owner stays */
		if (ordlock_res_word_holder(res, ordlock_graph_fast_edge, &e))
			return true;
	}
	list_for_each_entry(ahead, &res->waiters, node) {
		if (ahead == w)
			break;
		if (ahead->hold->owner == self ||
		    !ordlock_modes_conflict(ahead->mode, w->mode))
			continue;
		if (fn(arg, ahead->hold->owner, ORDLOCK_EDGE_SOFT, ahead->mode, 0))
			return true;
	}
	return false;
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
	return __ordlock_graph_edges(res, w, fn, arg);
}

/**
 * struct ordlock_walk - state of one graph walk
 * @start: the owner the walk starts from
 * @start_blocks: @start waits in a task, which is blocked meanwhile
 * @from: the owner whose edges are being followed
 * @gen: the walk's generation
 * @head: owners still to expand, a FIFO linked by their walk_next (an
 *	owner joins it once per walk: its walk_gen says it did)
 * @tail: where the next one joins: the last one's walk_next, or @head
 */
struct ordlock_walk {
	struct ordlock_owner *start;
	bool start_blocks;
	struct ordlock_owner *from;
	u64 gen;
	struct ordlock_owner *head;
	struct ordlock_owner **tail;
};

/* @owner joins the walk's queue */
static void ordlock_walk_push(struct ordlock_walk *walk, struct ordlock_owner *owner)
{
	owner->walk_next = NULL;
	*walk->tail = owner;
	walk->tail = &owner->walk_next;
}

/* The next owner to expand, or NULL when none is left */
static struct ordlock_owner *ordlock_walk_pop(struct ordlock_walk *walk)
{
	struct ordlock_owner *owner = walk->head;

	if (owner) {
		walk->head = owner->walk_next;
		if (!walk->head)
			walk->tail = &walk->head;
	}
	return owner;
}

/**
 * ordlock_graph_join() - put @owner, about to wait with @w, in the graph
 * @owner: the owner; ordlock_graph_lock held
 * @w: its waiter
 */
void ordlock_graph_join(struct ordlock_owner *owner, struct ordlock_waiter *w)
{
	lockdep_assert_held(&ordlock_graph_lock);
	if (WARN_ON_ONCE(owner->waiting))
		return;
	owner->waiting = w;
	/* Only a wait in a task blocks the thread (netlink waits do not) */
	if (w->task)
		hlist_add_head(&owner->tid_node, ordlock_tid_head(owner->tid));
}

/**
 * ordlock_graph_leave() - take @owner out of the graph, if it is in
 * @owner: the owner; ordlock_graph_lock held
 */
void ordlock_graph_leave(struct ordlock_owner *owner)
{
	lockdep_assert_held(&ordlock_graph_lock);
	if (!owner->waiting)
		return;
	owner->waiting = NULL;
	if (!hlist_unhashed(&owner->tid_node))
		hlist_del_init(&owner->tid_node);
}

/*
 * The owner through which the thread that made @holder's last request is
 * blocked, in any domain, NULL when it is not.  The thread is known by its
 * id and its start time: a thread that reuses the id of one that exited is
 * another thread, and never links @holder to its own waits.
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
	hlist_for_each_entry(owner, ordlock_tid_head(tid), tid_node)
		if (owner->tid == tid && owner->tid_start == start)
			return owner;
	return NULL;
}

/*
 * Follow an edge walk->from -> @to; true when it closes the cycle. Inlined
 * into the walk (its loop over the edges) with the edge iterator.
 */
static __always_inline bool ordlock_graph_visit(void *arg,
						struct ordlock_owner *to,
						u32 edge, u32 mode, u32 fast)
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
	to->walk_edge = edge & ~ORDLOCK_EDGE_FAST_HOLDER;
	to->walk_mode = mode;
	if (to == walk->start)
		return true;
	to->walk_gen = walk->gen;
	ordlock_walk_push(walk, to);
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
		found = __ordlock_graph_edges(res, w, ordlock_graph_visit, walk);
	spin_unlock(&ordlock_res_bucket(res)->lock);
	return found;
}

/**
 * ordlock_graph_thread_edges() - call @fn for each thread edge of the graph
 * @fn: called with the owner that holds and is not waiting, and the owner
 *	its thread waits through (any domain); true stops. Called under
 *	ordlock_graph_lock: @fn may not sleep
 * @arg: passed to @fn
 *
 * For the views (debugfs "graph", GET_GRAPH). Takes ordlock_owners_lock,
 * then ordlock_graph_lock. The holder's fields are read racily.
 *
 * Return: true when @fn stopped.
 */
bool ordlock_graph_thread_edges(ordlock_thread_edge_fn fn, void *arg)
{
	struct list_head *owners = ordlock_owner_lock_list();
	struct ordlock_owner *holder, *owner;
	bool stop = false;
	pid_t tid;
	u64 start;

	spin_lock(&ordlock_graph_lock);
	list_for_each_entry(holder, owners, node) {
		if (holder->waiting || !READ_ONCE(holder->nheld))
			continue;
		tid = READ_ONCE(holder->tid);
		start = READ_ONCE(holder->tid_start);
		hlist_for_each_entry(owner, ordlock_tid_head(tid), tid_node) {
			if (owner == holder || owner->tid != tid ||
			    owner->tid_start != start)
				continue;
			stop = fn(arg, holder, owner);
			break;
		}
		if (stop)
			break;
	}
	spin_unlock(&ordlock_graph_lock);
	ordlock_owner_unlock_list();
	return stop;
}

static void ordlock_graph_fill_step(struct ordlock_cycle_step *step,
				    char *domain, struct ordlock_owner *start,
				    struct ordlock_owner *owner,
				    struct ordlock_waiter *w,
				    struct ordlock_owner *next)
{
	memset(step, 0, sizeof(*step));
	/*
	 * A waiting owner stays in its domain until its wait ends. A step in
	 * the victim's domain (named once per cycle) names none of its own.
	 */
	if (owner->domain != start->domain) {
		step->flags |= ORDLOCK_STEP_OTHER_DOMAIN;
		strscpy(domain, owner->domain->name, ORDLOCK_DOMAIN_NAME_MAX);
	}
	step->owner_id = owner->id;
	step->pid = READ_ONCE(owner->pid);
	step->edge = next->walk_edge;
	step->key.rank = w->hold->res->rank;
	step->key.id = w->hold->res->id;
	step->key.mode = w->mode;
	step->blocker_mode = next->walk_mode;
	/* Sanitized when it was written: a copy of a size known at build time */
	BUILD_BUG_ON(sizeof(step->comm) != sizeof(owner->comm_safe));
	memcpy(step->comm, owner->comm_safe, sizeof(step->comm));
	step->comm[sizeof(step->comm) - 1] = '\0';
}

/* Record the cycle found through @start in start->cycle; return its length */
static unsigned int ordlock_graph_record(struct ordlock_owner *start,
					 struct ordlock_waiter *sw)
{
	struct ordlock_owner *cur, *next = start;
	unsigned int len = 1, i;

	for (cur = start->walk_parent; cur != start; cur = cur->walk_parent)
		len++;
	/* Without memory, the cycle is still broken, only not recorded */
	if (ordlock_owner_cycle_alloc(start))
		strscpy(start->cycle_domain[ORDLOCK_CYCLE_MAX], start->domain->name,
			ORDLOCK_DOMAIN_NAME_MAX);
	/* Parents lead backwards: from the last step down to the victim */
	cur = start->walk_parent;
	for (i = len - 1; ; i--) {
		if (start->cycle && i < ORDLOCK_CYCLE_MAX)
			ordlock_graph_fill_step(&start->cycle[i],
						start->cycle_domain[i], start, cur,
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
 * @start: the owner about to wait (or waiting) with @w; ordlock_graph_lock
 *	held
 * @w: its waiter, queued on its resource
 *
 * The walk follows the owners of every domain. When it finds a cycle, it
 * records its steps in start->cycle and their domains in
 * start->cycle_domain (ordlock_owner_cycle_domain()).
 *
 * Return: the length of the cycle, in owners, or 0 when there is none.
 */
unsigned int ordlock_graph_find_cycle(struct ordlock_owner *start,
				      struct ordlock_waiter *w)
{
	struct ordlock_walk walk = {
		.start = start,
		.start_blocks = w->task,
	};
	struct ordlock_owner *x;
	bool found = false;

	lockdep_assert_held(&ordlock_graph_lock);
	walk.tail = &walk.head;
	walk.gen = ++ordlock_graph_walk_gen;
	start->walk_gen = walk.gen;
	ordlock_walk_push(&walk, start);
	while (!found && (x = ordlock_walk_pop(&walk))) {
		walk.from = x;
		found = ordlock_graph_expand(&walk, x == start ? w : x->waiting);
	}
	/* what is left in the queue needs no unlinking: the next walk's gen differs */
	return found ? ordlock_graph_record(start, w) : 0;
}
