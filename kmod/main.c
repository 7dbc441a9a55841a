// SPDX-License-Identifier: GPL-2.0
/*
 * ordlock: ordered multi-resource locks for processes.
 *
 * This file only orders initialisation and teardown.
 */
#include <linux/module.h>

#include "debugfs.h"
#include "device.h"
#include "domain.h"
#include "events.h"
#include "netlink.h"
#include "owner.h"
#include "table.h"
#include "user.h"

static int __init ordlock_init(void)
{
	int ret;

	ret = ordlock_table_init();
	if (ret)
		return ret;
	ret = ordlock_owner_init();
	if (ret)
		goto err_table;
	ret = ordlock_events_init();
	if (ret)
		goto err_owner;
	ret = ordlock_domain_init();
	if (ret)
		goto err_events;
	ordlock_debugfs_init();
	ret = ordlock_nl_init();
	if (ret)
		goto err_debugfs;
	ret = ordlock_device_init();
	if (ret)
		goto err_nl;
	pr_info("ordlock: loaded\n");
	return 0;

err_nl:
	ordlock_nl_exit();
err_debugfs:
	ordlock_debugfs_exit();
	ordlock_domain_exit();
err_events:
	ordlock_events_exit();
err_owner:
	ordlock_owner_exit();
err_table:
	ordlock_table_exit();
	return ret;
}

static void __exit ordlock_exit(void)
{
	ordlock_device_exit();
	ordlock_nl_exit();
	if (atomic_read(&ordlock_nowners) || ordlock_table_nresources())
		pr_err("ordlock: leaked %d owners and %lld resources\n",
		       atomic_read(&ordlock_nowners),
		       ordlock_table_nresources());
	ordlock_debugfs_exit();
	/* Domains hold references to the users they were created for */
	ordlock_domain_exit();
	ordlock_user_exit();
	ordlock_events_exit();
	ordlock_owner_exit();
	ordlock_table_exit();
	pr_info("ordlock: unloaded\n");
}

module_init(ordlock_init);
module_exit(ordlock_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Ordered multi-resource locks for processes");
MODULE_AUTHOR("The ordlock developers");
