// SPDX-License-Identifier: GPL-2.0
/*
 * Over 1000 lines: the learned order is being extended (per-user edge
 * charging); it is to be split by concern (edges, cycle search, views)
 * once that is merged.
 */
/*
 * The learned lock order (order.h).
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
 * Fast path: each owner caches the edges it saw its domain learn
 * (owner->order_cache): a grant whose edges are all in its cache takes no
 * lock, no atomic and no RCU (__ordlock_order_grant()), only counts in its
 * cache slots. The slow path (ordlock_order_grant_slow()) adds a slot's
 * count to its edge every ORDLOCK_ORDER_BATCH grants (so an edge's count
 * may lag by less than that per owner), under rcu_read_lock(): edges are
 * freed after a grace period (a reset), and a cache is only used while
 * the domain's order has the id the cache was filled under. A grant that
 * meets an edge its cache does not know takes order->lock.
 */
#include <linux/atomic.h>
#include <linux/ctype.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/ratelimit.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "domain.h"
#include "events.h"
#include "order.h"
#include "owner.h"
#include "topo.h"
#include "user.h"

bool ordlock_order_learn_on = true;
module_param_named(order_learn, ordlock_order_learn_on, bool, 0644);
MODULE_PARM_DESC(order_learn, "Learn the lock order in detect and timeout domains (default Y; off only to measure its cost)");

static unsigned int order_max_edges = 16384;
module_param(order_max_edges, uint, 0644);
MODULE_PARM_DESC(order_max_edges, "Most edges of the learned lock order per domain; later new edges are counted as dropped (default 16384, at most 1048576)");

#define ORDLOCK_ORDER_HASH_BITS	8
/* Edges kept in a potential deadlock (a longer cycle keeps its last ones) */
#define ORDLOCK_ORDER_POT_EDGES	16
/* Potential deadlocks kept per domain; later ones count as dropped */
#define ORDLOCK_ORDER_POTS_MAX	1024
/* Grants an owner's cache counts before it adds them to the edge */
#define ORDLOCK_ORDER_BATCH	64
/* Pairs of (held rank, taken rank) one grant learns at most */
#define ORDLOCK_ORDER_PAIRS_MAX	4096
/* Vertices of a cycle path looked at */
#define ORDLOCK_ORDER_PATH_MAX	(4 * ORDLOCK_ORDER_POT_EDGES + 2)

/* struct ordlock_order_slot.what: kind | held mode << 2 | taken mode << 4 */
#define ORDLOCK_WHAT(kind, hm, tm)	((kind) | (hm) << 2 | (tm) << 4)
#define ORDLOCK_WHAT_KIND(w)		((w) & 3)
#define ORDLOCK_WHAT_HELD(w)		(((w) >> 2) & 3)
#define ORDLOCK_WHAT_TAKEN(w)		(((w) >> 4) & 3)

/**
 * struct ordlock_order_edge_k - an edge of a learned order
 * @hnode: entry in order->edges; under order->lock
 * @node: entry in order->edge_list, in the order learned
 * @rcu: frees it after the readers of owners' caches
 * @from: the rank held
 * @to: the rank taken
 * @what: kind and modes, ORDLOCK_WHAT()
 * @flags: ORDLOCK_ORDER_EDGE_*; under order->lock
 * @index: position in order->edge_list
 * @count: grants that made it; atomic
 * @user: the user of the owner whose grant taught it (@first): one of
 *	its ORDLOCK_USER_EDGES and a reference, given back when the order
 *	forgets the edge (ordlock_order_clear()); constant
 * @first: the first observation; constant
 */
struct ordlock_order_edge_k {
	struct hlist_node hnode;
	struct list_head node;
	struct rcu_head rcu;
	u32 from;
	u32 to;
	u32 what;
	u32 flags;
	u32 index;
	atomic64_t count;
	struct ordlock_user *user;
	struct ordlock_order_edge first;
};

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

/**
 * struct ordlock_order_pot - a potential deadlock that was reported
 * @node: entry in order->pots
 * @sig: the cycle of ranks it is, as a hash (reported once per @sig)
 * @kind: an enum ordlock_potential_kind
 * @n: number of entries of @edges
 * @edges: its edges, the one that closed it last
 */
struct ordlock_order_pot {
	struct list_head node;
	u64 sig;
	u32 kind;
	u32 n;
	struct ordlock_order_edge_k *edges[ORDLOCK_ORDER_POT_EDGES];
};

/**
 * struct ordlock_order - the learned order of one domain
 * @lock: protects everything below but @id's lockless readers and the
 *	edges' counts. A mutex: it allocates, and reports under it. Taken
 *	under owner->lock by a grant, alone by debugfs, GET_ORDER and a
 *	reset; see the lock order in main.c
 * @id: unique among all orders and resets, never 0: what owners' caches
 *	are valid for; written under @lock, read with READ_ONCE()
 * @edges: hash of the edges
 * @ranks: hash of the ranks
 * @edge_list: the edges in the order learned
 * @pots: the potential deadlocks kept, in the order reported
 * @topo: the order of the rank vertices
 * @slot_rank: the rank of each group of four vertices
 * @nslots: entries of @slot_rank in use
 * @slot_cap: room in @slot_rank
 * @nedges: edges
 * @nranks: ranks
 * @npots: entries of @pots
 * @npotential: potential deadlocks reported since creation or reset
 * @dropped: observations and potential deadlocks not kept (full, or the
 *	user that made the observation had order_max_edges_per_user)
 * @path: scratch for a cycle's path
 */
struct ordlock_order {
	/* everything of the learned order: see above and main.c */
	struct mutex lock;
	u64 id;
	struct hlist_head edges[1 << ORDLOCK_ORDER_HASH_BITS];
	struct hlist_head ranks[1 << ORDLOCK_ORDER_HASH_BITS];
	struct list_head edge_list;
	struct list_head pots;
	struct ordlock_topo topo;
	u32 *slot_rank;
	u32 nslots;
	u32 slot_cap;
	u32 nedges;
	u32 nranks;
	u32 npots;
	u64 npotential;
	u64 dropped;
	u32 path[ORDLOCK_ORDER_PATH_MAX];
};

/* The ids of orders and of their resets: never 0, never reused */
static atomic64_t ordlock_order_seq = ATOMIC64_INIT(0);

static DEFINE_RATELIMIT_STATE(ordlock_order_ratelimit, 5 * HZ, 10);

static u32 ordlock_order_max_edges(void)
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

static u32 ordlock_order_hash(u32 from, u32 to, u32 what)
{
	return hash_64(((u64)from << 32 | to) ^ ((u64)what << 58),
		       ORDLOCK_ORDER_HASH_BITS);
}

/*
 * The slot of an edge in an owner's cache: a few adds (address
 * arithmetic), cheaper than a multiplicative hash on the fast path of
 * every grant that teaches; neighbouring ranks and the kinds of one pair
 * land apart. A collision only costs a miss (the slow path counts).
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
static struct ordlock_order *ordlock_order_of(struct ordlock_domain *domain)
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

static struct ordlock_order_edge_k *
ordlock_order_find(struct ordlock_order *order, u32 from, u32 to, u32 what)
{
	struct ordlock_order_edge_k *e;

	hlist_for_each_entry(e, &order->edges[ordlock_order_hash(from, to, what)],
			     hnode)
		if (e->from == from && e->to == to && e->what == what)
			return e;
	return NULL;
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

/* The order of ranks of a cycle, as a hash that does not depend on where it starts */
static u64 ordlock_order_sig(const u32 *ranks, u32 n, u32 kind)
{
	u64 sig = kind, best = 0;
	u32 i, j, start = 0;

	for (i = 1; i < n; i++)
		if (ranks[i] < ranks[start])
			start = i;
	for (j = 0; j < n; j++)
		sig = (sig ^ ranks[(start + j) % n]) * 0x100000001b3ULL;
	best = sig ? sig : 1;
	return best;
}

static bool ordlock_order_reported(struct ordlock_order *order, u64 sig)
{
	struct ordlock_order_pot *p;

	list_for_each_entry(p, &order->pots, node)
		if (p->sig == sig)
			return true;
	return false;
}

static const char *ordlock_order_mode(u32 mode)
{
	return mode == ORDLOCK_MODE_EXCLUSIVE ? "exclusive" : "shared";
}

/* One edge's first observation, as a line of the kernel log */
static void ordlock_order_log_edge(const char *what,
				   const struct ordlock_order_edge *o)
{
	pr_warn("ordlock:   %s owner %llu label \"%s\" pid %u comm %s: held %u:%llu %s, then took %u:%llu %s\n",
		what, o->owner_id, o->label[0] ? o->label : "-", o->pid,
		o->comm, o->held.rank, o->held.id,
		ordlock_order_mode(o->held.mode), o->taken.rank, o->taken.id,
		ordlock_order_mode(o->taken.mode));
}

/*
 * Report potential deadlock @p of the domain: log it (rate-limited) and
 * tell the subscribers. Under order->lock (and the reporting owner's lock).
 */
static void ordlock_order_report(struct ordlock_order *order,
				 struct ordlock_owner *owner,
				 struct ordlock_order_edge_k **edges, u32 n,
				 u32 kind, bool kept)
{
	struct ordlock_order_edge *snap;
	u32 i;

	lockdep_assert_held(&order->lock);
	order->npotential++;
	if (__ratelimit(&ordlock_order_ratelimit)) {
		pr_warn("ordlock: ======================================================\n");
		if (kind == ORDLOCK_POTENTIAL_IDS)
			pr_warn("ordlock: potential deadlock (learned order, none happened yet) in domain \"%s\": rank %u taken by ascending and by descending ids\n",
				owner->domain_name, edges[n - 1]->from);
		else
			pr_warn("ordlock: potential deadlock (learned order, none happened yet) in domain \"%s\": circular lock order of %u ranks across owners\n",
				owner->domain_name, n);
		pr_warn("ordlock: ------------------------------------------------------\n");
		ordlock_order_log_edge("new:", &edges[n - 1]->first);
		pr_warn("ordlock: but this order was seen before (first observation of each step):\n");
		for (i = 0; i + 1 < n; i++)
			ordlock_order_log_edge(i ? "and:" : "seen:", &edges[i]->first);
		pr_warn("ordlock: if these run at the same moment each can wait for the next: deadlock\n");
		pr_warn("ordlock: learned %u edges, %llu potential deadlocks, %llu dropped%s\n",
			order->nedges, order->npotential, order->dropped,
			kept ? "" : " (this report not kept: full)");
	}
	snap = kmalloc_array(n, sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return;
	for (i = 0; i < n; i++) {
		snap[i] = edges[i]->first;
		snap[i].count = atomic64_read(&edges[i]->count);
		snap[i].flags = edges[i]->flags;
	}
	ordlock_event_potential(owner, kind, snap, n, order->dropped);
	kfree(snap);
}

/* Keep and report a potential deadlock, once per @sig */
static void ordlock_order_potential(struct ordlock_order *order,
				    struct ordlock_owner *owner,
				    struct ordlock_order_edge_k **edges, u32 n,
				    u32 kind, u64 sig)
{
	struct ordlock_order_pot *p = NULL;
	u32 i;

	if (ordlock_order_reported(order, sig))
		return;
	for (i = 0; i < n; i++)
		edges[i]->flags |= ORDLOCK_ORDER_EDGE_REPORTED;
	if (order->npots < ORDLOCK_ORDER_POTS_MAX)
		p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (p) {
		p->sig = sig;
		p->kind = kind;
		p->n = n;
		memcpy(p->edges, edges, n * sizeof(*edges));
		list_add_tail(&p->node, &order->pots);
		order->npots++;
	} else {
		order->dropped++;
	}
	ordlock_order_report(order, owner, edges, n, kind, p);
}

/*
 * New edge @e closed a cycle: the path order->path[0 .. len - 1] runs from
 * its target to its source. Find the edges of the path.
 */
static void ordlock_order_cycle(struct ordlock_order *order,
				struct ordlock_owner *owner,
				struct ordlock_order_edge_k *e, u32 len)
{
	struct ordlock_order_edge_k *edges[ORDLOCK_ORDER_POT_EDGES];
	u32 ranks[ORDLOCK_ORDER_POT_EDGES], n = 0, i, a, b;
	struct ordlock_order_edge_k *step;
	u32 *path = order->path;

	if (len > ORDLOCK_ORDER_PATH_MAX)
		len = ORDLOCK_ORDER_PATH_MAX;
	for (i = 0; i + 1 < len && n < ORDLOCK_ORDER_POT_EDGES - 1; i++) {
		a = path[i];
		b = path[i + 1];
		if (a / 4 == b / 4)
			continue;	/* inside a rank */
		step = ordlock_order_find(order, order->slot_rank[a / 4],
					  order->slot_rank[b / 4],
					  ORDLOCK_WHAT(ORDLOCK_ORDER_RANKS,
						       a % 4 == 3 ? ORDLOCK_MODE_EXCLUSIVE :
						       ORDLOCK_MODE_SHARED,
						       b % 4 == 1 ? ORDLOCK_MODE_EXCLUSIVE :
						       ORDLOCK_MODE_SHARED));
		if (!step)
			continue;
		ranks[n] = step->from;
		edges[n++] = step;
	}
	ranks[n] = e->from;
	edges[n++] = e;
	ordlock_order_potential(order, owner, edges, n, ORDLOCK_POTENTIAL_CYCLE,
				ordlock_order_sig(ranks, n, ORDLOCK_POTENTIAL_CYCLE));
}

/* New same-rank edge @e: does the other direction conflict with it? */
static void ordlock_order_ids(struct ordlock_order *order,
			      struct ordlock_owner *owner,
			      struct ordlock_order_edge_k *e)
{
	u32 other = ORDLOCK_WHAT_KIND(e->what) == ORDLOCK_ORDER_ASCENDING ?
		    ORDLOCK_ORDER_DESCENDING : ORDLOCK_ORDER_ASCENDING;
	u32 hm = ORDLOCK_WHAT_HELD(e->what), tm = ORDLOCK_WHAT_TAKEN(e->what);
	struct ordlock_order_edge_k *edges[2], *o;
	u32 ohm, otm;

	/* The most conflicting other side first: it names the worst case */
	for (ohm = ORDLOCK_MODE_EXCLUSIVE; ohm >= ORDLOCK_MODE_SHARED; ohm--)
		for (otm = ORDLOCK_MODE_EXCLUSIVE; otm >= ORDLOCK_MODE_SHARED; otm--) {
			/* Each side must wait for what the other holds */
			if (!ordlock_modes_conflict(hm, otm) ||
			    !ordlock_modes_conflict(ohm, tm))
				continue;
			o = ordlock_order_find(order, e->from, e->to,
					       ORDLOCK_WHAT(other, ohm, otm));
			if (!o)
				continue;
			e->flags |= ORDLOCK_ORDER_EDGE_INVERTED;
			edges[0] = o;
			edges[1] = e;
			ordlock_order_potential(order, owner, edges, 2,
						ORDLOCK_POTENTIAL_IDS,
						ordlock_order_sig(&e->from, 1,
								  ORDLOCK_POTENTIAL_IDS));
			return;
		}
}

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

/* The slow path: pairs the owner's cache did not know */
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

/* Scratch of one grant: pairs not in the cache (on the stack when few) */
#define ORDLOCK_ORDER_STACK_PAIRS 4

/*
 * The slow path of a grant: the pairs of __ordlock_order_grant() in the
 * same order, but the first @skip, which the fast path found in the cache
 * and counted already; those the cache does not know are learned under
 * order->lock.
 */
static noinline void ordlock_order_grant_slow(struct ordlock_owner *owner,
					      const struct ordlock_rkey *keys,
					      unsigned int n, u32 skip)
{
	struct ordlock_order_pair stack[ORDLOCK_ORDER_STACK_PAIRS], *pairs = stack;
	struct ordlock_domain *domain = owner->domain;
	struct ordlock_order_cache *c = &owner->order_cache;
	struct ordlock_hold *h, *hfirst, *hmax;
	struct ordlock_order_pair pair;
	struct ordlock_order *order;
	u32 npairs = 0, room = ORDLOCK_ORDER_STACK_PAIRS, hmode, tmode;
	u32 seen = 0, lost = 0;
	unsigned int i, j, k;
	bool cache_ok;

	lockdep_assert_held(&owner->lock);
	/* It counts in the cache: the summary's room would be wrong */
	c->sum_room = 0;
	if (READ_ONCE(domain->policy) == ORDLOCK_POLICY_ENFORCE)
		return;
	order = ordlock_order_of(domain);
	if (!order)
		return;

	rcu_read_lock();
	cache_ok = c->id == READ_ONCE(order->id);
	/* A reset since the fast path: everything is new to the order */
	if (!cache_ok)
		skip = 0;
	h = list_first_entry(&owner->held, struct ordlock_hold, owner_node);
	while (!list_entry_is_head(h, &owner->held, owner_node)) {
		/* One rank held: h .. the last key of that rank */
		hfirst = h;
		hmax = h;
		hmode = h->mode;
		for (h = list_next_entry(h, owner_node);
		     !list_entry_is_head(h, &owner->held, owner_node) &&
		     h->res->rank == hfirst->res->rank;
		     h = list_next_entry(h, owner_node)) {
			hmode = ordlock_order_max_mode(hmode, h->mode);
			hmax = h;
		}
		for (i = 0; i < n; i = j) {
			/* One rank taken: keys[i .. j - 1] */
			tmode = keys[i].mode;
			for (j = i + 1; j < n && keys[j].rank == keys[i].rank; j++)
				tmode = ordlock_order_max_mode(tmode, keys[j].mode);
			pair.from = hfirst->res->rank;
			pair.to = keys[i].rank;
			pair.held.rank = pair.from;
			pair.held.mode = hmode;
			pair.taken.rank = pair.to;
			pair.taken.mode = tmode;
			for (k = 0; k < 2; k++) {
				if (pair.from != pair.to) {
					if (k)
						break;
					pair.what = ORDLOCK_WHAT(ORDLOCK_ORDER_RANKS,
								 hmode, tmode);
					pair.held.id = hmax->res->id;
					pair.taken.id = keys[i].id;
				} else if (!k) {
					/* Up: a taken id above the lowest held */
					if (keys[j - 1].id < hfirst->res->id)
						continue;
					pair.what = ORDLOCK_WHAT(ORDLOCK_ORDER_ASCENDING,
								 hmode, tmode);
					pair.held.id = hfirst->res->id;
					pair.taken.id = keys[j - 1].id;
				} else {
					/* Down: a taken id below the highest held */
					if (keys[i].id > hmax->res->id)
						continue;
					pair.what = ORDLOCK_WHAT(ORDLOCK_ORDER_DESCENDING,
								 hmode, tmode);
					pair.held.id = hmax->res->id;
					pair.taken.id = keys[i].id;
				}
				if (++seen <= skip)
					continue;
				if (seen > ORDLOCK_ORDER_PAIRS_MAX) {
					lost++;
					continue;
				}
				if (cache_ok && ordlock_order_cached(c, &pair))
					continue;
				if (npairs == room) {
					struct ordlock_order_pair *more;

					more = kmalloc_array(room * 4, sizeof(*more),
							     GFP_ATOMIC | __GFP_NOWARN);
					if (!more) {
						lost++;
						continue;
					}
					memcpy(more, pairs, npairs * sizeof(*more));
					if (pairs != stack)
						kfree(pairs);
					pairs = more;
					room *= 4;
				}
				pairs[npairs++] = pair;
			}
		}
	}
	rcu_read_unlock();
	if (npairs)
		ordlock_order_learn(order, owner, pairs, npairs);
	if (lost) {
		mutex_lock(&order->lock);
		order->dropped += lost;
		mutex_unlock(&order->lock);
	}
	if (pairs != stack)
		kfree(pairs);
}

/*
 * The fast path's look-up of one pair in the owner's cache @c: count it
 * and return true when the cache has it, else false (and count nothing).
 * A slot whose count is due to be added to its edge (a shared atomic,
 * under rcu_read_lock()) is a miss: the slow path adds it.
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
 * order of ordlock_order_grant_slow(), looked up and counted; false at
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
 * The fast path of a grant of keys of several ranks: every pair of rank
 * groups looked up in the cache, in the order of
 * ordlock_order_grant_slow(), which takes over at the first miss.
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
				ordlock_order_grant_slow(owner, keys, n, seen);
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
 * The fast path of a grant that holds several keys or takes several of
 * one rank (several ranks: ordlock_order_grant_ranks()): one look-up per
 * rank held, in the order of ordlock_order_grant_slow(), which takes over
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
			goto slow;
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
			goto slow;
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
slow:
	ordlock_order_grant_slow(owner, keys, n, seen);
}

/**
 * __ordlock_order_grant() - learn the edges of a grant (see order.h)
 * @owner: the owner, locked, holding what it held before the grant
 * @keys: the keys granted, sorted by (rank, id)
 * @n: their number
 *
 * The fast path: while every pair of the grant is in the owner's cache
 * (the edges it saw its domain learn, under the order's current id), it
 * only counts them in the cache: no lock, no atomic, no RCU, nothing on
 * the stack. The pairs are those of ordlock_order_grant_slow(), in the
 * same order: at the first one the cache does not know, the slow path
 * takes over from there. A grant has distinct pairs, and the cache
 * ORDLOCK_ORDER_CACHE slots: the fast path never reaches
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
		goto slow;
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
slow:
	ordlock_order_grant_slow(owner, keys, n, 0);
	return;
many:
	ordlock_order_grant_many(owner, keys, n);
}

/**
 * ordlock_order_learn_pair() - learn from a grant after a fast-path hold
 *	(fastpath.c)
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

/* Whether the caller may see who made observation @o */
static void ordlock_order_hide(struct ordlock_order_edge *o, bool admin, u32 uid)
{
	if (admin || o->uid == uid)
		return;
	o->pid = 0;
	memset(o->comm, 0, sizeof(o->comm));
	memset(o->label, 0, sizeof(o->label));
}

/**
 * ordlock_order_get() - what a domain learned, for ORDLOCK_IOC_GET_ORDER
 * @domain: the domain (a reference held)
 * @arg: the argument, copied in; its out fields are filled in
 * @admin: the caller may see every observation
 * @uid: the caller's user, who may see its own
 *
 * Called with the caller's owner locked, and no lock of this file.
 *
 * Return: 0, -EINVAL, -EFAULT or -ENOMEM.
 */
int ordlock_order_get(struct ordlock_domain *domain,
		      struct ordlock_order_get *arg, bool admin, u32 uid)
{
	struct ordlock_order *order = ordlock_order_of(domain);
	struct ordlock_order_edge *edges = NULL;
	struct ordlock_order_edge_k *e;
	struct ordlock_order_pot *p;
	u32 *words = NULL, nedges, nwords, room, wroom, i, w = 0;
	int ret = 0;

	if (arg->edge_size < sizeof(struct ordlock_order_edge) ||
	    arg->edge_size > PAGE_SIZE)
		return -EINVAL;
	if (!order)
		return -ENOMEM;
	room = min(arg->nedges, ordlock_order_max_edges());
	wroom = min(arg->npotential_words,
		    ORDLOCK_ORDER_POTS_MAX * (ORDLOCK_ORDER_POT_EDGES + 2));
	if (!arg->edges)
		room = 0;
	if (!arg->potentials)
		wroom = 0;
	if (room) {
		edges = kvmalloc_array(room, sizeof(*edges), GFP_KERNEL);
		if (!edges)
			return -ENOMEM;
	}
	if (wroom) {
		words = kvmalloc_array(wroom, sizeof(u32), GFP_KERNEL);
		if (!words) {
			kvfree(edges);
			return -ENOMEM;
		}
	}

	mutex_lock(&order->lock);
	nedges = order->nedges;
	i = 0;
	list_for_each_entry(e, &order->edge_list, node) {
		if (i == room)
			break;
		edges[i] = e->first;
		edges[i].count = atomic64_read(&e->count);
		edges[i].flags = e->flags;
		ordlock_order_hide(&edges[i], admin, uid);
		i++;
	}
	nwords = 0;
	list_for_each_entry(p, &order->pots, node) {
		if (nwords + 2 + p->n <= wroom) {
			words[w++] = p->kind;
			words[w++] = p->n;
			for (i = 0; i < p->n; i++)
				words[w++] = p->edges[i]->index;
		}
		nwords += 2 + p->n;
	}
	arg->npotential = order->npotential;
	arg->dropped = order->dropped;
	arg->nranks = order->nranks;
	mutex_unlock(&order->lock);

	arg->max_edges = ordlock_order_max_edges();
	arg->learning = READ_ONCE(domain->policy) != ORDLOCK_POLICY_ENFORCE &&
			READ_ONCE(ordlock_order_learn_on);
	for (i = 0; i < min(room, nedges); i++)
		if (copy_to_user(u64_to_user_ptr(arg->edges) +
				 (size_t)i * arg->edge_size, &edges[i],
				 sizeof(*edges))) {
			ret = -EFAULT;
			goto out;
		}
	if (w && copy_to_user(u64_to_user_ptr(arg->potentials), words,
			      w * sizeof(u32)))
		ret = -EFAULT;
	arg->nedges = nedges;
	arg->npotential_words = nwords;
out:
	kvfree(edges);
	kvfree(words);
	return ret;
}

static const char * const ordlock_order_kinds[] = {
	[ORDLOCK_ORDER_RANKS] = "ranks",
	[ORDLOCK_ORDER_ASCENDING] = "ascending",
	[ORDLOCK_ORDER_DESCENDING] = "descending",
};

static void ordlock_order_show_domain(struct seq_file *m,
				      struct ordlock_domain *domain)
{
	struct ordlock_order *order = READ_ONCE(domain->order);
	struct ordlock_order_edge_k *e;
	struct ordlock_order_pot *p;
	u64 seq = 0;
	u32 i;

	if (!order)
		return;
	mutex_lock(&order->lock);
	seq_printf(m, "domain %s policy %s learning %d ranks %u edges %u max_edges %u potential %llu kept %u dropped %llu\n",
		   domain->name,
		   ordlock_domain_policy_name(READ_ONCE(domain->policy)),
		   READ_ONCE(domain->policy) != ORDLOCK_POLICY_ENFORCE &&
		   READ_ONCE(ordlock_order_learn_on),
		   order->nranks, order->nedges, ordlock_order_max_edges(),
		   order->npotential, order->npots, order->dropped);
	list_for_each_entry(e, &order->edge_list, node) {
		const struct ordlock_order_edge *o = &e->first;

		seq_printf(m, "edge %s %u %u %u %s %s %s %llu %s%s %llu %u %s %s %u:%llu %u:%llu %llu\n",
			   domain->name, e->index, e->from, e->to,
			   ordlock_order_kinds[o->kind],
			   ordlock_order_mode(o->held.mode),
			   ordlock_order_mode(o->taken.mode),
			   (u64)atomic64_read(&e->count),
			   e->flags & ORDLOCK_ORDER_EDGE_INVERTED ? "inverted" : "ok",
			   e->flags & ORDLOCK_ORDER_EDGE_REPORTED ? ",reported" : "",
			   o->owner_id, o->pid, o->comm,
			   o->label[0] ? o->label : "-", o->held.rank, o->held.id,
			   o->taken.rank, o->taken.id, o->time_ns);
	}
	list_for_each_entry(p, &order->pots, node) {
		seq_printf(m, "potential %s %llu %s %u", domain->name, ++seq,
			   p->kind == ORDLOCK_POTENTIAL_IDS ? "ids" : "cycle",
			   p->n);
		for (i = 0; i < p->n; i++)
			seq_printf(m, " %u", p->edges[i]->index);
		seq_putc(m, '\n');
	}
	mutex_unlock(&order->lock);
}

/**
 * ordlock_order_show() - debugfs "order": every domain's learned order
 * @m: the file
 */
void ordlock_order_show(struct seq_file *m)
{
	struct list_head *domains;
	struct ordlock_domain *domain;

	domains = ordlock_domain_lock_list();
	list_for_each_entry(domain, domains, node)
		ordlock_order_show_domain(m, domain);
	ordlock_domain_unlock_list();
}

/* ordlock_order_exit() - wait for the edges freed after a grace period */
void ordlock_order_exit(void)
{
	rcu_barrier();
}
