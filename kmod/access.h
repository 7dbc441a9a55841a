/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Access: who may take locks. The device node's mode and group (dev_mode,
 * the udev rule) decide, whichever front end a task locks through.
 */
#ifndef _ORDLOCK_ACCESS_H
#define _ORDLOCK_ACCESS_H

#include <linux/types.h>

void ordlock_access_set_node(dev_t devt);
int ordlock_access_may_lock(void);

#endif /* _ORDLOCK_ACCESS_H */
