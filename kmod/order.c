// SPDX-License-Identifier: GPL-2.0
/*
 * The learned lock order (order.h): how a grant teaches it, the edge
 * cache that makes a known grant cheap, the cycle a new edge would close
 * and its report. Its views (GET_ORDER, debugfs) are in order_view.c,
 * the structures both read in order_internal.h.
 *
 * Classes are the ranks of a domain. Each grant to an owner that held keys
 * makes, for every rank it held and every rank it took, one edge held ->
 * taken (ORDLOCK_ORDER_RANKS), or for the same rank one edge ASCENDING or
 * DESCENDING by id. An edge is known by its ranks, its kind and its modes
 * (the strongest mode of the rank's held keys, and of the taken keys):
 * the first observation of each is kept, later ones are counted.
 *
 * Modes count: a rank R on a cycle can only stop it when the mode it is
 * waited for in (the edge entering R) conflicts with the mode it is held
 * in (the edge leaving R). Each rank is therefore four vertices of an
 * incremental topological order (topo.h): "waited for shared", "waited
 * for exclusive", "held shared", "held exclusive", joined inside the rank
 * only where the modes conflict (exclusive-in to both outs, shared-in to
 * exclusive-out). An observation held (A, m1) -> taken (B, m2) is the edge
 * A.out[m1] -> B.in[m2]. A cycle of this graph is exactly a cycle of ranks
 * that can deadlock given the modes; one of shared keys only has none.
 *
 * An edge that would close a cycle is refused by the order (as Abseil's
 * GraphCycles does), flagged INVERTED and reported as a potential deadlock
 * with the observations of the path that exists already, once per cycle
 * of ranks. A rank taken both by ascending and by descending ids in modes
 * that conflict both ways is reported likewise (once per rank).
 *
 * The edge cache: each owner caches the edges it saw its domain learn
 * (owner->order_cache): a grant whose edges are all in its cache (the
 * cached grant, __ordlock_order_grant()) takes no lock, no atomic and no
 * RCU, only counts in its cache slots. The walk of a grant's pairs
 * (ordlock_order_grant_walk()) adds a slot's count to its edge every
 * ORDLOCK_ORDER_BATCH grants (so an edge's count may lag by less than
 * that per owner), under rcu_read_lock(): edges are freed after a grace
 * period (a reset), and a cache is only used while the domain's order has
 * the id the cache was filled under. A grant that meets an edge its cache
 * does not know takes order->lock.
 */
#include <linux/atomic.h>
#include <linux/ctype.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "domain.h"
#include "events.h"
#include "order.h"
#include "order_internal.h"
#include "owner.h"
#include "topo.h"
#include "user.h"

bool ordlock_order_learn_on = true;
module_param_named(order_learn, ordlock_order_learn_on, bool, 0644);
MODULE_PARM_DESC(order_learn, "Learn the lock order in detect and timeout domains (default Y; off only to measure its cost)");

static unsigned int order_max_edges = 16384;
module_param(order_max_edges, uint, 0644);
MODULE_PARM_DESC(order_max_edges, "Most edges of the learned lock order per domain; later new edges are counted as dropped (default 16384, at most 1048576)");

/* Grants an owner's cache counts before it adds them to the edge */
#define ORDLOCK_ORDER_BATCH	64
/* Pairs of (held rank, taken rank) one grant learns at most */
#define ORDLOCK_ORDER_PAIRS_MAX	4096

/**
 * struct ordlock_order_rank - a rank of a learned order
 * @hnode: entry in order->ranks
 * @rank: the rank
 * @vbase: its first vertex (four: see the top of the file)
 */
struct ordlock_order_rank {
	struct hlist_node hnode;
	u32 rank;
	u32 vbase;
};

/* The ids of orders and of their resets: never 0, never reused */
static atomic64_t ordlock_order_seq = ATOMIC64_INIT(0);

u32 ordlock_order_max_edges(void)
{
	return min(READ_ONCE(order_max_edges), 1048576U);
}

/**
 * ordlock_order_label_check() - check a NUL-terminated owner label
 * @label: the label
 *
 * Return: 0 for up to ORDLOCK_LABEL_MAX - 1 characters of [A-Za-z0-9._-]
 * (empty removes the label), else -EINVAL.
 */
int ordlock_order_label_check(const char *label)
{
	size_t len = strnlen(label, ORDLOCK_LABEL_MAX), i;

	if (len == ORDLOCK_LABEL_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!isalnum(label[i]) && label[i] != '.' && label[i] != '_' &&
		    label[i] != '-')
			return -EINVAL;
	return 0;
}

/*
 * The slot of an edge in an owner's cache: a few adds (address
 * arithmetic), cheaper than a multiplicative hash in the cached grant of
 * every grant that teaches; neighbouring ranks and the kinds of one pair
 * land apart. A collision only costs a miss (the walk counts).
 */
static u32 ordlock_order_slot_of(u32 from, u32 to, u32 what)
{
	BUILD_BUG_ON(!is_power_of_2(ORDLOCK_ORDER_CACHE));
	return (from * 3 + to * 5 + what) & (ORDLOCK_ORDER_CACHE - 1);
}

static struct ordlock_order *ordlock_order_alloc(void)
{
	struct ordlock_order *order = kvzalloc(sizeof(*order), GFP_KERNEL_ACCOUNT);
	unsigned int i;

	if (!order)
		return NULL;
	mutex_init(&order->lock);
	order->id = atomic64_inc_return(&ordlock_order_seq);
	for (i = 0; i < ARRAY_SIZE(order->edges); i++) {
		INIT_HLIST_HEAD(&order->edges[i]);
		INIT_HLIST_HEAD(&order->ranks[i]);
	}
	INIT_LIST_HEAD(&order->edge_list);
	INIT_LIST_HEAD(&order->pots);
	ordlock_topo_init(&order->topo);
	return order;
}

/* The domain's order, created on first need (NULL when out of memory) */
struct ordlock_order *ordlock_order_of(struct ordlock_domain *domain)
{
	struct ordlock_order *order = READ_ONCE(domain->order), *old;

	if (order)
		return order;
	order = ordlock_order_alloc();
	if (!order)
		return NULL;
	old = cmpxchg(&domain->order, NULL, order);
	if (old) {
		kvfree(order);
		return old;
	}
	return order;
}

/*
 * Forget everything @order learned; it gets a new id. Under order->lock.
 * Each edge's charge goes back to its user (the put may take
 * ordlock_users_lock, a leaf).
 */
static void ordlock_order_clear(struct ordlock_order *order)
{
	struct ordlock_order_edge_k *e, *et;
	struct ordlock_order_pot *p, *pt;
	struct ordlock_order_rank *r;
	struct hlist_node *tmp;
	unsigned int i;

	lockdep_assert_held(&order->lock);
	/* First: no cache filled before trusts an edge from now on */
	WRITE_ONCE(order->id, atomic64_inc_return(&ordlock_order_seq));
	list_for_each_entry_safe(p, pt, &order->pots, node)
		kfree(p);
	INIT_LIST_HEAD(&order->pots);
	list_for_each_entry_safe(e, et, &order->edge_list, node) {
		hlist_del(&e->hnode);
		/* Owners' caches read the counts only: the user may go now */
		ordlock_user_uncharge(e->user, ORDLOCK_USER_EDGES, 1);
		ordlock_user_put(e->user);
		e->user = NULL;
		kfree_rcu(e, rcu);
	}
	INIT_LIST_HEAD(&order->edge_list);
	for (i = 0; i < ARRAY_SIZE(order->ranks); i++)
		hlist_for_each_entry_safe(r, tmp, &order->ranks[i], hnode) {
			hlist_del(&r->hnode);
			kfree(r);
		}
	ordlock_topo_destroy(&order->topo);
	kvfree(order->slot_rank);
	order->slot_rank = NULL;
	order->nslots = 0;
	order->slot_cap = 0;
	order->nedges = 0;
	order->nranks = 0;
	order->npots = 0;
	order->npotential = 0;
	order->dropped = 0;
}

/**
 * ordlock_order_free() - free a domain's learned order, with the domain
 * @domain: the domain, which nobody uses any more
 */
void ordlock_order_free(struct ordlock_domain *domain)
{
	struct ordlock_order *order = domain->order;

	if (!order)
		return;
	mutex_lock(&order->lock);
	ordlock_order_clear(order);
	mutex_unlock(&order->lock);
	/* The edges wait for a grace period; the order itself is not cached */
	kvfree(order);
	domain->order = NULL;
}

/**
 * ordlock_order_reset() - forget what a domain learned
 * @domain: the domain (a reference held)
 */
void ordlock_order_reset(struct ordlock_domain *domain)
{
	struct ordlock_order *order = READ_ONCE(domain->order);

	if (!order)
		return;
	mutex_lock(&order->lock);
	ordlock_order_clear(order);
	mutex_unlock(&order->lock);
}

/* The rank's first vertex, the rank added if new; -ENOMEM */
static int ordlock_order_rank(struct ordlock_order *order, u32 rank, u32 *vbase)
{
	struct ordlock_order_rank *r;
	u32 h = hash_32(rank, ORDLOCK_ORDER_HASH_BITS), base, len, path[1];
	u32 *slots;

	hlist_for_each_entry(r, &order->ranks[h], hnode)
		if (r->rank == rank) {
			*vbase = r->vbase;
			return 0;
		}
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	if (order->nslots == order->slot_cap) {
		u32 cap = order->slot_cap ? order->slot_cap * 2 : 16;

		slots = kvmalloc_array(cap, sizeof(u32), GFP_KERNEL_ACCOUNT);
		if (!slots)
			goto err;
		if (order->nslots)
			memcpy(slots, order->slot_rank, order->nslots * sizeof(u32));
		kvfree(order->slot_rank);
		order->slot_rank = slots;
		order->slot_cap = cap;
	}
	if (ordlock_topo_add_vertices(&order->topo, 4, &base))
		goto err;
	/*
	 * The conflicts inside the rank. The vertices are new, without
	 * edges: no cycle; only memory can fail, and then the four stay
	 * unused (a later attempt adds four more).
	 */
	if (ordlock_topo_insert(&order->topo, base + 1, base + 2, path, 1, &len) ||
	    ordlock_topo_insert(&order->topo, base + 1, base + 3, path, 1, &len) ||
	    ordlock_topo_insert(&order->topo, base + 0, base + 3, path, 1, &len))
		goto err;
	order->slot_rank[base / 4] = rank;
	order->nslots = base / 4 + 1;
	r->rank = rank;
	r->vbase = base;
	hlist_add_head(&r->hnode, &order->ranks[h]);
	order->nranks++;
	*vbase = base;
	return 0;
err:
	kfree(r);
	return -ENOMEM;
}

/* The vertex of rank @vbase held (out) or waited for (in) in @mode */
static u32 ordlock_order_vin(u32 vbase, u32 mode)
{
	return vbase + (mode == ORDLOCK_MODE_EXCLUSIVE);
}

static u32 ordlock_order_vout(u32 vbase, u32 mode)
{
	return vbase + 2 + (mode == ORDLOCK_MODE_EXCLUSIVE);
}

/* What a grant learns: one pair of a rank held and a rank taken */
struct ordlock_order_pair {
	u32 from;
	u32 to;
	u32 what;
	struct ordlock_key held;
	struct ordlock_key taken;
};

/*
 * A new edge of @pair, learned under order->lock; NULL when not kept: the
 * domain's order is full, or @owner's user has taught
 * order_max_edges_per_user edges (all domains), or out of memory. The
 * edge is charged to that user until the order forgets it.
 */
static struct ordlock_order_edge_k *
ordlock_order_add(struct ordlock_order *order, struct ordlock_owner *owner,
		  const struct ordlock_order_pair *pair)
{
	struct ordlock_order_edge_k *e;
	struct timespec64 ts;
	u32 kind = ORDLOCK_WHAT_KIND(pair->what), vf, vt, len;
	int ret = 0;

	lockdep_assert_held(&order->lock);
	if (order->nedges >= ordlock_order_max_edges())
		goto drop;
	if (ordlock_user_charge_edge(owner->user, owner->user_exempt))
		goto drop;
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		goto drop_uncharge;
	e->from = pair->from;
	e->to = pair->to;
	e->what = pair->what;
	atomic64_set(&e->count, 1);
	e->first.from_rank = pair->from;
	e->first.to_rank = pair->to;
	e->first.kind = kind;
	e->first.held = pair->held;
	e->first.taken = pair->taken;
	e->first.owner_id = owner->id;
	ktime_get_real_ts64(&ts);
	e->first.time_ns = timespec64_to_ns(&ts);
	e->first.pid = READ_ONCE(owner->pid);
	e->first.uid = ordlock_user_uid(owner->user);
	ordlock_comm_sanitize(e->first.comm, owner->comm);
	strscpy(e->first.label, owner->label, sizeof(e->first.label));

	if (kind == ORDLOCK_ORDER_RANKS) {
		if (ordlock_order_rank(order, pair->from, &vf) ||
		    ordlock_order_rank(order, pair->to, &vt))
			goto drop_free;
		ret = ordlock_topo_insert(&order->topo,
					  ordlock_order_vout(vf, pair->held.mode),
					  ordlock_order_vin(vt, pair->taken.mode),
					  order->path, ORDLOCK_ORDER_PATH_MAX, &len);
		if (ret < 0)
			goto drop_free;
		if (ret)
			e->flags |= ORDLOCK_ORDER_EDGE_INVERTED;
	}
	e->user = ordlock_user_hold(owner->user);
	e->index = order->nedges++;
	hlist_add_head(&e->hnode,
		       &order->edges[ordlock_order_hash(e->from, e->to, e->what)]);
	list_add_tail(&e->node, &order->edge_list);
	if (kind == ORDLOCK_ORDER_RANKS && ret)
		ordlock_order_cycle(order, owner, e, len);
	else if (kind != ORDLOCK_ORDER_RANKS)
		ordlock_order_ids(order, owner, e);
	return e;

drop_free:
	kfree(e);
drop_uncharge:
	ordlock_user_uncharge(owner->user, ORDLOCK_USER_EDGES, 1);
drop:
	order->dropped++;
	return NULL;
}

/*
 * Remember @e in @owner's cache, whose id is the order's: under
 * order->lock, so the edge a reused slot names is still there
 */
static void ordlock_order_cache_put(struct ordlock_order_cache *c,
				    const struct ordlock_order_pair *pair,
				    struct ordlock_order_edge_k *e)
{
	struct ordlock_order_slot *s;

	s = &c->slot[ordlock_order_slot_of(pair->from, pair->to, pair->what)];
	if (s->what && s->pending)
		atomic64_add(s->pending, &s->edge->count);
	s->pending = 0;
	s->edge = e;
	/* The summary may name this slot */
	c->sum_room = 0;
	s->from = pair->from;
	s->to = pair->to;
	s->what = pair->what;
}

/* Learn the pairs the owner's cache did not know, under order->lock */
static void ordlock_order_learn(struct ordlock_order *order,
				struct ordlock_owner *owner,
				const struct ordlock_order_pair *pairs, u32 n)
{
	struct ordlock_order_cache *c = &owner->order_cache;
	struct ordlock_order_edge_k *e;
	u32 i;

	mutex_lock(&order->lock);
	if (c->id != order->id) {
		memset(c, 0, sizeof(*c));
		c->id = order->id;
	}
	for (i = 0; i < n; i++) {
		e = ordlock_order_find(order, pairs[i].from, pairs[i].to,
				       pairs[i].what);
		if (e)
			atomic64_inc(&e->count);
		else
			e = ordlock_order_add(order, owner, &pairs[i]);
		if (e)
			ordlock_order_cache_put(c, &pairs[i], e);
	}
	mutex_unlock(&order->lock);
}

/* The strongest mode of @a and @b */
static u32 ordlock_order_max_mode(u32 a, u32 b)
{
	return a == ORDLOCK_MODE_EXCLUSIVE ? a : b;
}

/*
 * Look for @pair in the cache; count it when found. Return true when
 * found. Under rcu_read_lock(), with the cache's id checked.
 */
static bool ordlock_order_cached(struct ordlock_order_cache *c,
				 const struct ordlock_order_pair *pair)
{
	struct ordlock_order_slot *s;

	s = &c->slot[ordlock_order_slot_of(pair->from, pair->to, pair->what)];
	if (s->what != pair->what || s->from != pair->from || s->to != pair->to)
		return false;
	/* Counted in batches: no shared cache line on most grants */
	if (++s->pending >= ORDLOCK_ORDER_BATCH) {
		atomic64_add(s->pending, &s->edge->count);
		s->pending = 0;
	}
	return true;
}

/*
 * The pairs of a grant, one at a time (ordlock_order_walk_next()): for each
 * rank held (owner->held, by rank) and each rank taken (the keys, by
 * rank), one pair of ranks, or for the same rank "up" then "down". The
 * cached grant (__ordlock_order_grant()) looks them up in the same order,
 * so that a walk can skip the ones it counted.
 */
struct ordlock_order_walk {
	const struct list_head *held;
	const struct ordlock_hold *next;	/* the next rank held's first */
	const struct ordlock_hold *hfirst;	/* the rank held: its lowest key */
	const struct ordlock_hold *hlast;	/* ... its highest */
	u32 hmode;				/* ... its strongest mode */
	const struct ordlock_rkey *keys;
	unsigned int n;
	unsigned int i, j;			/* the rank taken: keys[i .. j - 1] */
	u32 tmode;				/* ... its strongest mode */
	u32 kind;				/* the next pair's; 0: the next ranks */
};

/* The next rank held, its taken ranks to walk from the first; false after the last */
static bool ordlock_order_walk_held(struct ordlock_order_walk *w)
{
	const struct ordlock_hold *h = w->next;

	if (list_entry_is_head(h, w->held, owner_node))
		return false;
	w->hfirst = h;
	w->hmode = h->mode;
	for (;;) {
		w->hlast = h;
		h = list_next_entry(h, owner_node);
		if (list_entry_is_head(h, w->held, owner_node) ||
		    h->res->rank != w->hfirst->res->rank)
			break;
		w->hmode = ordlock_order_max_mode(w->hmode, h->mode);
	}
	w->next = h;
	w->j = 0;
	return true;
}

/* The next pair of ranks (held, taken); false after the last */
static bool ordlock_order_walk_ranks(struct ordlock_order_walk *w)
{
	const struct ordlock_rkey *keys = w->keys;

	while (w->j == w->n)
		if (!ordlock_order_walk_held(w))
			return false;
	w->i = w->j;
	w->tmode = keys[w->i].mode;
	for (w->j = w->i + 1; w->j < w->n && keys[w->j].rank == keys[w->i].rank; w->j++)
		w->tmode = ordlock_order_max_mode(w->tmode, keys[w->j].mode);
	w->kind = w->hfirst->res->rank != keys[w->i].rank ?
		  ORDLOCK_ORDER_RANKS : ORDLOCK_ORDER_ASCENDING;
	return true;
}

/* The pair of @kind of the ranks the walk is at in @p; false when there is none */
static bool ordlock_order_walk_pair(const struct ordlock_order_walk *w,
				    u32 kind, struct ordlock_order_pair *p)
{
	const struct ordlock_rkey *tlo = &w->keys[w->i], *thi = &w->keys[w->j - 1];
	u64 hlo = w->hfirst->res->id, hhi = w->hlast->res->id;

	*p = (struct ordlock_order_pair) {
		.from = w->hfirst->res->rank,
		.to = tlo->rank,
		.what = ORDLOCK_WHAT(kind, w->hmode, w->tmode),
		.held = { .rank = w->hfirst->res->rank, .id = hhi, .mode = w->hmode },
		.taken = { .rank = tlo->rank, .id = tlo->id, .mode = w->tmode },
	};
	if (kind == ORDLOCK_ORDER_ASCENDING) {
		/* Up: a taken id above the lowest held */
		p->held.id = hlo;
		p->taken.id = thi->id;
		return thi->id >= hlo;
	}
	/* Down: a taken id below the highest held */
	return kind != ORDLOCK_ORDER_DESCENDING || tlo->id <= hhi;
}

/* The next pair of the grant in @p; false after the last */
static bool ordlock_order_walk_next(struct ordlock_order_walk *w,
				    struct ordlock_order_pair *p)
{
	u32 kind;

	do {
		if (!w->kind && !ordlock_order_walk_ranks(w))
			return false;
		kind = w->kind;
		/* Two ranks: one pair; the same rank: up, then down */
		w->kind = kind == ORDLOCK_ORDER_ASCENDING ? ORDLOCK_ORDER_DESCENDING : 0;
	} while (!ordlock_order_walk_pair(w, kind, p));
	return true;
}

/* The pairs a walk learns: those the cache does not know (on the stack when few) */
struct ordlock_order_scratch {
	struct ordlock_order_pair *pairs;
	u32 n;
	u32 room;
	struct ordlock_order_pair stack[4];
};

/* Add @pair to @s; false when there is no memory for it */
static bool ordlock_order_keep(struct ordlock_order_scratch *s,
			       const struct ordlock_order_pair *pair)
{
	struct ordlock_order_pair *more;

	if (s->n == s->room) {
		more = kmalloc_array(s->room * 4, sizeof(*more),
				     GFP_ATOMIC | __GFP_NOWARN);
		if (!more)
			return false;
		memcpy(more, s->pairs, s->n * sizeof(*more));
		if (s->pairs != s->stack)
			kfree(s->pairs);
		s->pairs = more;
		s->room *= 4;
	}
	s->pairs[s->n++] = *pair;
	return true;
}

/*
 * The walk of a grant: its pairs in the order of __ordlock_order_grant(),
 * but the first @skip, which the cached grant found in the cache and
 * counted already. Those the cache has are counted there; the others are
 * learned under order->lock, and past ORDLOCK_ORDER_PAIRS_MAX (or out of
 * memory) counted as dropped.
 */
static noinline void ordlock_order_grant_walk(struct ordlock_owner *owner,
					      const struct ordlock_rkey *keys,
					      unsigned int n, u32 skip)
{
	struct ordlock_order_cache *c = &owner->order_cache;
	struct ordlock_order_walk w = {
		.held = &owner->held, .keys = keys, .n = n, .j = n,
		.next = list_first_entry(&owner->held, struct ordlock_hold, owner_node),
	};
	struct ordlock_order_scratch s = { .pairs = s.stack, .room = ARRAY_SIZE(s.stack) };
	struct ordlock_order_pair pair;
	struct ordlock_order *order;
	u32 seen = 0, lost = 0;
	bool cache_ok;

	lockdep_assert_held(&owner->lock);
	/* It counts in the cache: the summary's room would be wrong */
	c->sum_room = 0;
	if (READ_ONCE(owner->domain->policy) == ORDLOCK_POLICY_ENFORCE)
		return;
	order = ordlock_order_of(owner->domain);
	if (!order)
		return;

	rcu_read_lock();
	cache_ok = c->id == READ_ONCE(order->id);
	/* A reset since the cached grant: everything is new to the order */
	if (!cache_ok)
		skip = 0;
	while (ordlock_order_walk_next(&w, &pair)) {
		if (++seen <= skip)
			continue;
		if (seen > ORDLOCK_ORDER_PAIRS_MAX)
			lost++;
		else if (!(cache_ok && ordlock_order_cached(c, &pair)) &&
			 !ordlock_order_keep(&s, &pair))
			lost++;
	}
	rcu_read_unlock();
	if (s.n)
		ordlock_order_learn(order, owner, s.pairs, s.n);
	if (lost) {
		mutex_lock(&order->lock);
		order->dropped += lost;
		mutex_unlock(&order->lock);
	}
	if (s.pairs != s.stack)
		kfree(s.pairs);
}

/*
 * The cached grant's look-up of one pair in the owner's cache @c: count it
 * and return true when the cache has it, else false (and count nothing).
 * A slot whose count is due to be added to its edge (a shared atomic,
 * under rcu_read_lock()) is a miss: the walk adds it.
 */
static __always_inline bool ordlock_order_hit(struct ordlock_order_cache *c,
					      u32 from, u32 to, u32 what)
{
	struct ordlock_order_slot *s;

	s = &c->slot[ordlock_order_slot_of(from, to, what)];
	if (s->what != what || s->from != from || s->to != to ||
	    s->pending >= ORDLOCK_ORDER_BATCH - 1)
		return false;
	s->pending++;
	return true;
}

/*
 * The pairs of one rank held (@from in @hmode, its keys @hfirst ..
 * @hlast) and one rank taken (@to in @tmode, ids @tlo .. @thi), in the
 * order of ordlock_order_grant_walk(), looked up and counted; false at
 * the first one the cache does not have. *@seen counts those found.
 */
static __always_inline bool ordlock_order_hits(struct ordlock_order_cache *c,
					       u32 from, u32 hmode,
					       const struct ordlock_hold *hfirst,
					       const struct ordlock_hold *hlast,
					       u32 to, u32 tmode, u64 tlo, u64 thi,
					       u32 *seen)
{
	if (from != to) {
		if (!ordlock_order_hit(c, from, to,
				       ORDLOCK_WHAT(ORDLOCK_ORDER_RANKS, hmode, tmode)))
			return false;
		(*seen)++;
		return true;
	}
	/* The same rank: up (a taken id above the lowest held), and down */
	if (thi >= hfirst->res->id) {
		if (!ordlock_order_hit(c, from, to,
				       ORDLOCK_WHAT(ORDLOCK_ORDER_ASCENDING, hmode, tmode)))
			return false;
		(*seen)++;
	}
	if (tlo <= hlast->res->id) {
		if (!ordlock_order_hit(c, from, to,
				       ORDLOCK_WHAT(ORDLOCK_ORDER_DESCENDING, hmode, tmode)))
			return false;
		(*seen)++;
	}
	return true;
}

/*
 * The cached grant of keys of several ranks: every pair of rank
 * groups looked up in the cache, in the order of
 * ordlock_order_grant_walk(), which takes over at the first miss.
 */
static noinline void ordlock_order_grant_ranks(struct ordlock_owner *owner,
					       const struct ordlock_rkey *keys,
					       unsigned int n)
{
	struct ordlock_order_cache *c = &owner->order_cache;
	const struct ordlock_hold *h, *hfirst, *hlast;
	u32 seen = 0, from, hmode;
	unsigned int i, j;

	h = list_first_entry(&owner->held, struct ordlock_hold, owner_node);
	while (!list_entry_is_head(h, &owner->held, owner_node)) {
		/* One rank held: hfirst .. hlast, and its strongest mode */
		hfirst = h;
		from = h->res->rank;
		hmode = h->mode;
		for (;;) {
			hlast = h;
			h = list_next_entry(h, owner_node);
			if (list_entry_is_head(h, &owner->held, owner_node) ||
			    h->res->rank != from)
				break;
			hmode = ordlock_order_max_mode(hmode, h->mode);
		}
		for (i = 0; i < n; i = j) {
			/* One rank taken: keys[i .. j - 1] */
			u32 to = keys[i].rank, tmode = keys[i].mode;

			for (j = i + 1; j < n && keys[j].rank == to; j++)
				tmode = ordlock_order_max_mode(tmode, keys[j].mode);
			if (!ordlock_order_hits(c, from, hmode, hfirst, hlast, to, tmode,
						keys[i].id, keys[j - 1].id, &seen)) {
				ordlock_order_grant_walk(owner, keys, n, seen);
				return;
			}
		}
	}
}

/*
 * The summary's pairs (struct ordlock_order_cache), when the held set is
 * the one it was made under, @to and @tmode those it was made for, and
 * none of its slots' counts is due: counted, true; else false.
 */
static __always_inline bool ordlock_order_summary(struct ordlock_order_cache *c,
						  u32 to, u32 tmode)
{
	u32 i = 0, n = c->sum_n;

	if (c->sum_gen != c->held_gen || c->sum_to != to ||
	    c->sum_mode != tmode || !c->sum_room)
		return false;
	c->sum_room--;
	do
		(*(u32 *)((char *)c + c->sum_pending[i]))++;
	while (++i < n);
	return true;
}

/*
 * The cached grant to an owner that holds several keys, or of several
 * keys of one rank (several ranks: ordlock_order_grant_ranks()): one look-up per
 * rank held, in the order of ordlock_order_grant_walk(), which takes over
 * at the first miss, or at a rank both held and taken (ids up or down).
 */
static noinline void ordlock_order_grant_many(struct ordlock_owner *owner,
					      const struct ordlock_rkey *keys,
					      unsigned int n)
{
	struct ordlock_order_cache *c = &owner->order_cache;
	const struct ordlock_hold *h;
	struct ordlock_order_slot *s;
	u32 to = keys[0].rank, tmode = keys[0].mode;
	u32 room = ORDLOCK_ORDER_BATCH, seen = 0, from, hmode, what;
	unsigned int j;

	if (keys[n - 1].rank != to) {
		c->sum_room = 0;
		ordlock_order_grant_ranks(owner, keys, n);
		return;
	}
	for (j = 1; j < n; j++)
		tmode = ordlock_order_max_mode(tmode, keys[j].mode);
	if (ordlock_order_summary(c, to, tmode))
		return;
	/* Its counts change: a new summary, made below if all pairs are known */
	c->sum_room = 0;
	h = list_first_entry(&owner->held, struct ordlock_hold, owner_node);
	while (!list_entry_is_head(h, &owner->held, owner_node)) {
		from = h->res->rank;
		if (from == to)
			goto walk;
		hmode = h->mode;
		for (;;) {
			h = list_next_entry(h, owner_node);
			if (list_entry_is_head(h, &owner->held, owner_node) ||
			    h->res->rank != from)
				break;
			hmode = ordlock_order_max_mode(hmode, h->mode);
		}
		what = ORDLOCK_WHAT(ORDLOCK_ORDER_RANKS, hmode, tmode);
		if (!ordlock_order_hit(c, from, to, what))
			goto walk;
		if (seen < ORDLOCK_ORDER_SUMMARY) {
			s = &c->slot[ordlock_order_slot_of(from, to, what)];
			c->sum_pending[seen] = (char *)&s->pending - (char *)c;
			/* Grants the summary may count before a count is due */
			room = min(room, ORDLOCK_ORDER_BATCH - 1 - s->pending);
		}
		seen++;
	}
	if (seen <= ORDLOCK_ORDER_SUMMARY && owner->nheld >= 2) {
		c->sum_room = room;
		c->sum_n = seen;
		c->sum_gen = c->held_gen;
		c->sum_to = to;
		c->sum_mode = tmode;
	}
	return;
walk:
	ordlock_order_grant_walk(owner, keys, n, seen);
}

/**
 * __ordlock_order_grant() - learn the edges of a grant (see order.h)
 * @owner: the owner, locked, holding what it held before the grant
 * @keys: the keys granted, sorted by (rank, id)
 * @n: their number
 *
 * The cached grant: while every pair of the grant is in the owner's cache
 * (the edges it saw its domain learn, under the order's current id), it
 * only counts them in the cache: no lock, no atomic, no RCU, nothing on
 * the stack. The pairs are those of ordlock_order_grant_walk(), in the
 * same order: at the first one the cache does not know, the walk
 * takes over from there. A grant has distinct pairs, and the cache
 * ORDLOCK_ORDER_CACHE slots: the cached grant never reaches
 * ORDLOCK_ORDER_PAIRS_MAX.
 *
 * One key held and one taken (the commonest grant that teaches: lock A,
 * then B) make one pair, or two for the same key: looked up here
 * directly; more keys in ordlock_order_grant_many().
 */
void __ordlock_order_grant(struct ordlock_owner *owner,
			   const struct ordlock_rkey *keys, unsigned int n)
{
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_order *order = READ_ONCE(domain->order);
	const struct ordlock_hold *h;
	u32 from, to, what;

	lockdep_assert_held(&owner->lock);
	if (READ_ONCE(domain->policy) == ORDLOCK_POLICY_ENFORCE)
		return;
	if (unlikely(!order || owner->order_cache.id != READ_ONCE(order->id)))
		goto walk;
	if (owner->nheld != 1 || n != 1) {
		if (n == 1 && ordlock_order_summary(&owner->order_cache, keys[0].rank,
						    keys[0].mode))
			return;
		ordlock_order_grant_many(owner, keys, n);
		return;
	}
	h = list_first_entry(&owner->held, struct ordlock_hold, owner_node);
	from = h->res->rank;
	to = keys[0].rank;
	if (from != to)
		what = ORDLOCK_WHAT(ORDLOCK_ORDER_RANKS, h->mode, keys[0].mode);
	else if (keys[0].id > h->res->id)
		what = ORDLOCK_WHAT(ORDLOCK_ORDER_ASCENDING, h->mode, keys[0].mode);
	else if (keys[0].id < h->res->id)
		what = ORDLOCK_WHAT(ORDLOCK_ORDER_DESCENDING, h->mode, keys[0].mode);
	else
		goto many;	/* the same key: both pairs */
	if (ordlock_order_hit(&owner->order_cache, from, to, what))
		return;
walk:
	ordlock_order_grant_walk(owner, keys, n, 0);
	return;
many:
	ordlock_order_grant_many(owner, keys, n);
}

/**
 * ordlock_order_learn_pair() - learn from a grant after a fast-path hold
 *	(FAST_LEARN, fast_dev.c; a grant after fast holds, fast_owner.c)
 * @owner: the owner, locked, that held key (@hrank, @hid) exclusively by
 *	the fast path (so not in owner->held) when it took key (@trank, @tid)
 *	in mode @tmode: by the fast path too, or granted by the kernel
 * @hrank: the held key's rank
 * @hid: its id
 * @trank: the taken key's rank
 * @tid: its id
 * @tmode: its mode (exclusive for a fast-path grant)
 *
 * The edge is learned, counted and reported as a grant through the
 * kernel would (ordlock_order_learn()).
 *
 * Return: true when the domain learns (the edge is known now, or counted
 * as dropped when the order is full), false when it does not (policy
 * enforce, learning off, no memory for the order).
 */
bool ordlock_order_learn_pair(struct ordlock_owner *owner, u32 hrank, u64 hid,
			      u32 trank, u64 tid, u32 tmode)
{
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_order_pair pair = {
		.from = hrank,
		.to = trank,
		.held = { .rank = hrank, .id = hid, .mode = ORDLOCK_MODE_EXCLUSIVE },
		.taken = { .rank = trank, .id = tid, .mode = tmode },
	};
	struct ordlock_order *order;
	u32 kind;

	lockdep_assert_held(&owner->lock);
	if (!READ_ONCE(ordlock_order_learn_on) ||
	    READ_ONCE(domain->policy) == ORDLOCK_POLICY_ENFORCE)
		return false;
	order = ordlock_order_of(domain);
	if (!order)
		return false;
	if (hrank != trank)
		kind = ORDLOCK_ORDER_RANKS;
	else if (tid > hid)
		kind = ORDLOCK_ORDER_ASCENDING;
	else
		kind = ORDLOCK_ORDER_DESCENDING;
	pair.what = ORDLOCK_WHAT(kind, ORDLOCK_MODE_EXCLUSIVE, tmode);
	/* The summary of the owner's cache is of owner->held: not this */
	owner->order_cache.sum_room = 0;
	ordlock_order_learn(order, owner, &pair, 1);
	return true;
}

/* ordlock_order_exit() - wait for the edges freed after a grace period */
void ordlock_order_exit(void)
{
	rcu_barrier();
}
