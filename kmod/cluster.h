/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cluster variant of requests (cluster.c): what the request code calls
 * for a key of a cluster domain. Only cluster.c talks to the backend.
 */
#ifndef _ORDLOCK_CLUSTER_H
#define _ORDLOCK_CLUSTER_H

#include <linux/list.h>
#include <linux/types.h>

struct ordlock_domain;
struct ordlock_hold;
struct ordlock_request;
struct ordlock_rkey;

u64 ordlock_cluster_next_token(struct ordlock_domain *domain, u64 floor);
u64 ordlock_cluster_token(struct ordlock_domain *domain,
			  struct list_head *holds);
void ordlock_cluster_wait_end(struct ordlock_request *req,
			      struct ordlock_hold *hold);
int ordlock_take_cluster(struct ordlock_request *req);
int ordlock_convert_cluster(struct ordlock_request *req,
			    const struct ordlock_rkey *key);
void ordlock_cluster_abandon(struct ordlock_request *req);
int ordlock_cluster_poll(struct ordlock_request *req);

#endif /* _ORDLOCK_CLUSTER_H */
