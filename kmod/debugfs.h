/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /sys/kernel/debug/ordlock/: the lock table, the owners, the wait-for
 * graph, the deadlock history and the counters, as text.
 */
#ifndef _ORDLOCK_DEBUGFS_H
#define _ORDLOCK_DEBUGFS_H

void ordlock_debugfs_init(void);
void ordlock_debugfs_exit(void);

#endif /* _ORDLOCK_DEBUGFS_H */
