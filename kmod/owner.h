/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Owners: whoever holds locks. An open file description of /dev/ordlock is
 * one owner (a netlink socket will be another kind).
 *
 * Lock order, stated once for the whole module:
 *
 *	owner->lock (mutex)
 *	  -> ordlock_domains_lock (mutex, domain.c)
 *	  -> bucket->lock (spinlock, table.h), one at a time
 */
#ifndef _ORDLOCK_OWNER_H
#define _ORDLOCK_OWNER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/ordlock.h>

struct ordlock_domain;
struct ordlock_resource;
struct ordlock_rkey;

/**
 * struct ordlock_owner - a holder of locks
 * @lock: serialises the requests of the owner, and protects every field
 *	below except @pid and @id. A request holds it for its whole duration,
 *	waits included.
 * @domain: the owner's domain; one reference held
 * @held: the holds granted to the owner (struct ordlock_hold.owner_node),
 *	in ascending key order
 * @nheld: number of entries in @held
 * @spare: holds kept for reuse, so that a request on a known resource
 *	allocates nothing
 * @nspare: number of entries in @spare
 * @last_token: fencing token of the last grant
 * @failure: the last failure record
 * @id: unique id, constant
 * @pid: thread group id of the last task that made a request (or opened
 *	the owner); written under @lock, read by anyone with READ_ONCE()
 */
struct ordlock_owner {
	struct mutex lock;
	struct ordlock_domain *domain;
	struct list_head held;
	unsigned int nheld;
	struct list_head spare;
	unsigned int nspare;
	u64 last_token;
	struct ordlock_failure failure;
	u64 id;
	pid_t pid;
};

/**
 * struct ordlock_hold - one key granted to one owner
 * @owner_node: entry in owner->held; under owner->lock
 * @res_node: entry in res->holders; under the resource's bucket lock
 * @res: the resource; it lives at least as long as the hold
 * @owner: the owner
 * @token: the fencing token of the grant
 * @mode: the mode it is held in
 */
struct ordlock_hold {
	struct list_head owner_node;
	struct list_head res_node;
	struct ordlock_resource *res;
	struct ordlock_owner *owner;
	u64 token;
	u32 mode;
};

extern atomic_t ordlock_nowners;

int ordlock_owner_init(void);
void ordlock_owner_exit(void);
struct ordlock_owner *ordlock_owner_create(void);
void ordlock_owner_destroy(struct ordlock_owner *owner);
int ordlock_owner_set_domain(struct ordlock_owner *owner, const char *name);
int ordlock_owner_get_holds(struct ordlock_owner *owner, unsigned int n,
			    struct list_head *list);
void ordlock_owner_put_holds(struct ordlock_owner *owner, struct list_head *list);

int ordlock_owner_fail(struct ordlock_owner *owner, u32 reason, int err,
		       const struct ordlock_rkey *key);

#endif /* _ORDLOCK_OWNER_H */
