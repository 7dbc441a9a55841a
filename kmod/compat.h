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

#include <linux/dlm.h>
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

/*
 * ORDLOCK_DLM_LSFL_CB: the flags of dlm_new_lockspace() that let the DLM
 * call a lockspace's ASTs (and BASTs) at once, from the context that
 * completes the operation (the dlm_lock() or dlm_unlock() caller for a
 * locally mastered resource, the DLM's receive path for a remote one:
 * softirq at the strongest), instead of handing each to its callback
 * workqueue: a context switch less per callback. 6.12's DLM has it
 * (DLM_LSFL_SOFTIRQ, include/linux/dlm.h; a setting of this node's copy
 * of the lockspace only, not compared with the other nodes'); 6.1's has
 * none (0: the callbacks come from the DLM's worker). Callbacks made that
 * way must be softirq safe: see the head comment of ordlock_dlm.c.
 */
#ifdef DLM_LSFL_SOFTIRQ
#define ORDLOCK_DLM_LSFL_CB	DLM_LSFL_SOFTIRQ
#else
#define ORDLOCK_DLM_LSFL_CB	0
#endif

/*
 * vm_flags_set() (6.3) replaced the direct write of vma->vm_flags; the
 * caller holds the mm's lock for writing (an mmap handler)
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define ordlock_vm_flags_set(vma, flags) vm_flags_set(vma, flags)
#define ordlock_vm_flags_clear(vma, flags) vm_flags_clear(vma, flags)
#else
#define ordlock_vm_flags_set(vma, flags) ((vma)->vm_flags |= (flags))
#define ordlock_vm_flags_clear(vma, flags) ((vma)->vm_flags &= ~(flags))
#endif

#endif /* ORDLOCK_COMPAT_H */
