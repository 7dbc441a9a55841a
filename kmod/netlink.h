/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family "ordlock".
 */
#ifndef _ORDLOCK_NETLINK_H
#define _ORDLOCK_NETLINK_H

#include <linux/types.h>

struct ordlock_owner;
struct ordlock_user;

int ordlock_nl_init(void);
void ordlock_nl_exit(void);
void ordlock_nl_event(struct ordlock_owner *owner, u32 event);
void ordlock_nl_event_in(struct ordlock_owner *owner, u32 event,
			 const char *domain);
void ordlock_nl_event_owner_limit(u32 kind, const struct ordlock_user *user);

#endif /* _ORDLOCK_NETLINK_H */
