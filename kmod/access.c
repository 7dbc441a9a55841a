// SPDX-License-Identifier: GPL-2.0
/*
 * Access: the permission check of the front ends that do not open the
 * device node. /dev/ordlock is checked by open(2) itself; the netlink
 * family asks ordlock_access_may_lock() before it creates the owner of a
 * socket, so that one set of permissions says who may lock.
 */
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/ordlock.h>

#include "access.h"

/* The device number of /dev/ordlock, 0 while it is not registered; atomic */
static dev_t ordlock_access_devt;

/**
 * ordlock_access_set_node() - the device whose node decides
 * @devt: the device number of the registered misc device, or 0 when it
 *	goes away (then nobody may lock)
 */
void ordlock_access_set_node(dev_t devt)
{
	WRITE_ONCE(ordlock_access_devt, devt);
}

/**
 * ordlock_access_may_lock() - may the calling task take locks?
 *
 * It may when it may open /dev/ordlock for reading and writing. The node
 * is looked up as the task sees it (its root and mount namespace), must be
 * this module's device on a mount that allows devices, and must be
 * readable and writable by the task, as open(O_RDWR) requires. A path
 * walk: call it without any lock held.
 *
 * Return: 0, -EACCES, or -ENOMEM when the lookup could not allocate.
 */
int ordlock_access_may_lock(void)
{
	dev_t devt = READ_ONCE(ordlock_access_devt);
	struct inode *inode;
	struct path path;
	int ret;

	if (!devt)
		return -EACCES;
	ret = kern_path(ORDLOCK_DEVICE, LOOKUP_FOLLOW, &path);
	if (ret)
		/* out of memory is not a refusal; a missing node is */
		return ret == -ENOMEM ? -ENOMEM : -EACCES;
	inode = d_inode(path.dentry);
	if (!S_ISCHR(inode->i_mode) || inode->i_rdev != devt ||
	    (path.mnt->mnt_flags & MNT_NODEV))
		ret = -EACCES;
	else
		ret = path_permission(&path, MAY_READ | MAY_WRITE) ? -EACCES : 0;
	path_put(&path);
	return ret;
}
