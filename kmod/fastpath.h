/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fast path (docs/fastpath.md): per domain, module-owned pages of
 * 64-bit words, one per pinned key, that the members take and let go of
 * by compare-and-swap in user space; the kernel's requests, releases and
 * waits on a pinned key's resource go through its word too (resource.c
 * calls the hooks below under the resource's bucket lock).
 */
#ifndef _ORDLOCK_FASTPATH_H
#define _ORDLOCK_FASTPATH_H

#include <linux/types.h>

struct ordlock_domain;
struct ordlock_owner;
struct ordlock_resource;
struct vm_area_struct;

long ordlock_fast_ioctl(struct ordlock_owner *owner, unsigned int cmd,
			void __user *uarg);
int ordlock_fast_mmap(struct ordlock_owner *owner, struct vm_area_struct *vma);
void ordlock_fast_owner_release(struct ordlock_owner *owner);
void ordlock_fast_domain_free(struct ordlock_domain *domain);
s64 ordlock_fast_npinned(void);

/* The hooks of resource.c, each under the bucket lock of a fast resource */
bool ordlock_fast_claim(struct ordlock_resource *res);
void ordlock_fast_settle(struct ordlock_resource *res);
void ordlock_fast_queued(struct ordlock_resource *res);

#endif /* _ORDLOCK_FASTPATH_H */
