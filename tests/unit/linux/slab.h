/* SPDX-License-Identifier: GPL-2.0 */
/* Host shim of the kernel's allocators: the unit tests build kmod/topo.c in user space. */
#ifndef ORDLOCK_SHIM_SLAB_H
#define ORDLOCK_SHIM_SLAB_H
#include <stdlib.h>

#define GFP_KERNEL 0
extern unsigned long shim_alloc_fail_after;	/* 0: never fail */

static inline void *kvmalloc_array(size_t n, size_t size, int gfp)
{
	(void)gfp;
	if (shim_alloc_fail_after && !--shim_alloc_fail_after)
		return NULL;
	return malloc(n && size ? n * size : 1);
}

static inline void kvfree(const void *p)
{
	free((void *)p);
}
#endif
