// SPDX-License-Identifier: GPL-2.0
/*
 * The potential deadlocks of the learned order (order.c): a new edge of
 * ranks that closed a cycle (ordlock_order_cycle(), with the path the
 * order already had), or a new same-rank edge whose other direction
 * conflicts with it (ordlock_order_ids()). Each is kept and reported once
 * per cycle of ranks (once per rank for ids): logged, rate-limited, and
 * sent to the event subscribers. Everything here runs under order->lock,
 * from ordlock_order_add(); it calls nothing of order.c back.
 */
#include <linux/printk.h>
#include <linux/ratelimit.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "events.h"
#include "keys.h"
#include "order.h"
#include "order_internal.h"
#include "owner.h"

static DEFINE_RATELIMIT_STATE(ordlock_order_ratelimit, 5 * HZ, 10);

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
void ordlock_order_cycle(struct ordlock_order *order, struct ordlock_owner *owner,
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
void ordlock_order_ids(struct ordlock_order *order, struct ordlock_owner *owner,
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
