/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wait-for graph: its edges, joining and leaving it, cycle detection.
 * (A deadlock found is reported by events.c.)
 */
#ifndef _ORDLOCK_GRAPH_H
#define _ORDLOCK_GRAPH_H

#include <linux/bits.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct ordlock_owner;
struct ordlock_resource;
struct ordlock_waiter;

/* The lock of the module-wide wait-for graph: see graph.c and main.c */
extern spinlock_t ordlock_graph_lock;

unsigned int ordlock_graph_find_cycle(struct ordlock_owner *start,
				      struct ordlock_waiter *w);
void ordlock_graph_join(struct ordlock_owner *owner, struct ordlock_waiter *w);
void ordlock_graph_leave(struct ordlock_owner *owner);
/*
 * ORDLOCK_EDGE_FAST_HOLDER - or'd into the @edge of an ordlock_edge_fn
 * (never into what user space sees as an edge): a hard edge to the member
 * that holds the key by the fast path, as the key's word names it. The
 * callback runs under the lock of the domain's fast owner table then
 * (ordlock_res_word_holder()): it may not sleep.
 */
#define ORDLOCK_EDGE_FAST_HOLDER	BIT(16)

/*
 * ordlock_edge_fn - called for an edge to @to, of type @edge (enum
 * ordlock_edge, maybe with ORDLOCK_EDGE_FAST_HOLDER), where @to blocks the
 * waiter in @mode; @fast is the index the key's word names with
 * ORDLOCK_EDGE_FAST_HOLDER (@to's), else 0; true stops the walk
 */
typedef bool (*ordlock_edge_fn)(void *arg, struct ordlock_owner *to, u32 edge,
				u32 mode, u32 fast);

/*
 * ordlock_thread_edge_fn - called for a thread edge from @holder to @to
 * (ORDLOCK_EDGE_THREAD): @to waits, with to->waiting; true stops the walk
 */
typedef bool (*ordlock_thread_edge_fn)(void *arg, struct ordlock_owner *holder,
				       struct ordlock_owner *to);

bool ordlock_graph_thread_edges(ordlock_thread_edge_fn fn, void *arg);
bool ordlock_graph_edges(struct ordlock_resource *res,
			 struct ordlock_waiter *w, ordlock_edge_fn fn,
			 void *arg);

#endif /* _ORDLOCK_GRAPH_H */
