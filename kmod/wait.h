/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Waits of requests: joining the wait-for graph, looking for cycles,
 * sleeping, and ending the wait. Used by request.c, and by lease.c to
 * wake the wait of an owner it revoked.
 */
#ifndef _ORDLOCK_WAIT_H
#define _ORDLOCK_WAIT_H

#include <linux/types.h>

struct ordlock_hold;
struct ordlock_owner;
struct ordlock_request;
struct ordlock_waiter;

void ordlock_waiter_init(struct ordlock_request *req, struct ordlock_hold *hold,
			 u32 mode, bool convert);
bool ordlock_waiter_granted(struct ordlock_waiter *w);
int ordlock_wait_begin(struct ordlock_request *req);
int ordlock_wait_check(struct ordlock_request *req);
int ordlock_wait_sync(struct ordlock_request *req);
int ordlock_wait_end(struct ordlock_request *req, int ret);
void ordlock_wait_kick(struct ordlock_owner *owner);

#endif /* _ORDLOCK_WAIT_H */
