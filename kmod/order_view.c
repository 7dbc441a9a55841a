// SPDX-License-Identifier: GPL-2.0
/*
 * The views of the learned order (order.h): what a domain learned, as
 * ORDLOCK_IOC_GET_ORDER copies it out and as debugfs "order" prints it.
 * They read under order->lock and change nothing; the learning, the
 * edge cache and the reports of potential deadlocks are order.c's (as
 * lockdep keeps its views in lockdep_proc.c). The structures both read
 * are in order_internal.h.
 */
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "domain.h"
#include "order.h"
#include "order_internal.h"

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
