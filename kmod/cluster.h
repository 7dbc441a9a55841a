/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cluster variant of requests (cluster.c): what the request code calls
 * for a key of a cluster domain. Only cluster.c talks to the backend.
 */
#ifndef _ORDLOCK_CLUSTER_H
#define _ORDLOCK_CLUSTER_H

#include <linux/list.h>
#include <linux/types.h>

#include "domain.h"
#include "owner.h"
#include "request.h"

struct ordlock_backend;
struct ordlock_backend_lock;
struct ordlock_backend_space;
struct ordlock_domain;
struct ordlock_hold;
struct ordlock_request;
struct ordlock_rkey;

/**
 * struct ordlock_cluster_hold - a hold of an owner in a cluster domain
 * @hold: the hold
 * @blk: the key's lock in the cluster (backend.h), taken after the local
 *	grant and released with the hold (ordlock_res_drop_hold()); NULL
 *	while there is none; under owner->lock
 * @xd_gen: the generation of the grant of @blk (xdetect.c), 0 while there
 *	is none; written under owner->lock, read with READ_ONCE() under the
 *	resource's bucket lock (XD_CHECK)
 *
 * The owners of a cluster domain, and only they, have these: the holds of
 * a local domain stay small.
 */
struct ordlock_cluster_hold {
	struct ordlock_hold hold;
	struct ordlock_backend_lock *blk;
	u64 xd_gen;
};

/*
 * ordlock_hold_blkp() - where the cluster lock of @hold is kept; only for
 * a hold of an owner in a cluster domain (hold->owner->cluster)
 */
static inline struct ordlock_backend_lock **ordlock_hold_blkp(struct ordlock_hold *hold)
{
	return &container_of(hold, struct ordlock_cluster_hold, hold)->blk;
}

/* ordlock_hold_xd_gen() - where the generation of @hold's cluster grant is */
static inline u64 *ordlock_hold_xd_gen(struct ordlock_hold *hold)
{
	return &container_of(hold, struct ordlock_cluster_hold, hold)->xd_gen;
}

/* ordlock_hold_blk() - the cluster lock of @hold, or NULL (hold->owner set) */
static inline struct ordlock_backend_lock *ordlock_hold_blk(struct ordlock_hold *hold)
{
	return hold->owner->cluster ? *ordlock_hold_blkp(hold) : NULL;
}

u64 ordlock_cluster_floor(struct list_head *holds, struct ordlock_hold *hold);
void ordlock_cluster_fence(struct list_head *holds, struct ordlock_hold *hold,
			   u64 token);
int ordlock_take_cluster(struct ordlock_request *req);
int ordlock_convert_cluster(struct ordlock_request *req,
			    const struct ordlock_rkey *key);
int ordlock_cluster_poll(struct ordlock_request *req);
u32 ordlock_cluster_lkid(struct ordlock_owner *owner);
void ordlock_cluster_cancel(struct ordlock_request *req);
void ordlock_cluster_unlock(struct ordlock_hold *hold);
int ordlock_cluster_join(const char *name, const char **why,
			 struct ordlock_backend **backendp,
			 struct ordlock_backend_space **spacep);
int ordlock_cluster_leave(struct ordlock_backend *backend,
			  struct ordlock_backend_space *space);

/*
 * The hooks of the request code: each returns at once for a local domain
 * (one load and one branch), and calls cluster.c for a cluster domain.
 */

/*
 * ordlock_cluster_take() - key req->next is granted locally: in a cluster
 * domain, take it in the cluster too (ordlock_take_cluster()). Return: 0
 * for a local domain, else as ordlock_take_cluster().
 */
static inline int ordlock_cluster_take(struct ordlock_request *req)
{
	if (likely(!READ_ONCE(req->owner->domain->backend)))
		return 0;
	return ordlock_take_cluster(req);
}

/*
 * ordlock_cluster_release() - @hold leaves its resource: in a cluster
 * domain, release its lock in the cluster first, if it has one (may sleep)
 */
static inline void ordlock_cluster_release(struct ordlock_hold *hold)
{
	if (hold->owner->cluster && *ordlock_hold_blkp(hold))
		ordlock_cluster_unlock(hold);
}

#endif /* _ORDLOCK_CLUSTER_H */
