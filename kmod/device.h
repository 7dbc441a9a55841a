/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/ordlock: the misc device and its ioctls.
 */
#ifndef _ORDLOCK_DEVICE_H
#define _ORDLOCK_DEVICE_H

int ordlock_device_init(void);
void ordlock_device_exit(void);

#endif /* _ORDLOCK_DEVICE_H */
