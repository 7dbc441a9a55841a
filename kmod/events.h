/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events: how the lock core reports what went wrong. The core announces a
 * failure, a refused domain, a refused owner or an owner that died holding
 * keys; this file counts it in the domain's counters, logs and records a
 * deadlock, and tells the subscribers (the netlink family's "events" group
 * is one). The core knows nothing of its subscribers.
 */
#ifndef _ORDLOCK_EVENTS_H
#define _ORDLOCK_EVENTS_H

#include <linux/notifier.h>
#include <linux/seq_file.h>
#include <linux/types.h>

struct ordlock_order_edge;
struct ordlock_owner;
struct ordlock_user;

/**
 * struct ordlock_event_info - what a subscriber is told
 * @event: an enum ordlock_event (also the notifier's action)
 * @domain: the name of the domain the event concerns: the owner's, or the
 *	one it could not move to
 * @owner: the owner concerned, locked, with its failure record for
 *	DEADLOCK, TIMEOUT, ORDER and LIMIT; NULL for an owner that was refused
 * @kind: the enum ordlock_owner_kind asked for, when @owner is NULL
 * @user: the user of the refused owner, when @owner is NULL
 * @potential: for POTENTIAL_DEADLOCK: the first observations of the edges
 *	of the cycle (the one that closed it last), @npotential of them
 * @npotential: entries of @potential
 * @potential_kind: an enum ordlock_potential_kind
 * @dropped: the domain's learned order's dropped count
 */
struct ordlock_event_info {
	u32 event;
	const char *domain;
	struct ordlock_owner *owner;
	u32 kind;
	const struct ordlock_user *user;
	const struct ordlock_order_edge *potential;
	u32 npotential;
	u32 potential_kind;
	u64 dropped;
};

int ordlock_events_init(void);
void ordlock_events_exit(void);

/*
 * Subscribers are called in process context, may sleep, and must not take
 * an owner's lock (the caller may hold it): see the lock order in main.c.
 */
int ordlock_events_subscribe(struct notifier_block *nb);
void ordlock_events_unsubscribe(struct notifier_block *nb);

void ordlock_event_failure(struct ordlock_owner *owner);
void ordlock_event_domain_refused(struct ordlock_owner *owner, const char *name);
void ordlock_event_owner_refused(u32 kind, const struct ordlock_user *user);
void ordlock_event_owner_died(struct ordlock_owner *owner);
void ordlock_event_potential(struct ordlock_owner *owner, u32 kind,
			     const struct ordlock_order_edge *edges, u32 n,
			     u64 dropped);

void ordlock_events_show_deadlocks(struct seq_file *m);

#endif /* _ORDLOCK_EVENTS_H */
