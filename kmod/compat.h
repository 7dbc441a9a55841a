/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the kernel API differences between the releases ordlock
 * supports (Debian 12's 6.1, and 6.12 with and without PREEMPT_RT), in
 * one place.  Every shim names the release that changed the API; the
 * logic files use only the names defined here and carry no version #if.
 *
 * Differences that need no shim, noted so that nobody adds one:
 * - no_llseek() is gone in 6.12: a file without .llseek that was opened
 *   with nonseekable_open() answers lseek() with ESPIPE on every release.
 * - PREEMPT_RT (6.12-rt): spinlock_t sleeps there.  The module takes its
 *   spinlocks only in process context and in work items; its one hrtimer
 *   (nl_lock.c) and the lease timers (lease.c) only queue a work item,
 *   which is safe in the softirq context RT runs such timers in.  Nothing disables interrupts or
 *   preemption around a spinlock_t.
 */
#ifndef ORDLOCK_COMPAT_H
#define ORDLOCK_COMPAT_H

#include <linux/version.h>
#include <net/genetlink.h>

/*
 * 6.2 (commit "genetlink: use a separate struct for the split ops") passes
 * pre_doit and post_doit a struct genl_split_ops instead of a genl_ops.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define ordlock_genl_split_ops genl_split_ops
#else
#define ordlock_genl_split_ops genl_ops
#endif

#endif /* ORDLOCK_COMPAT_H */
