/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family "ordlock".
 */
#ifndef _ORDLOCK_NETLINK_H
#define _ORDLOCK_NETLINK_H

#include <linux/types.h>

int ordlock_nl_init(void);
void ordlock_nl_exit(void);

#endif /* _ORDLOCK_NETLINK_H */
