/* SPDX-License-Identifier: GPL-2.0 */
/* Host shim of the kernel's sort(): the unit tests build kmod/keys.c in user space. */
#ifndef ORDLOCK_SHIM_SORT_H
#define ORDLOCK_SHIM_SORT_H
#include <stdlib.h>

static inline void sort(void *base, size_t num, size_t size,
			int (*cmp)(const void *, const void *), void *swap)
{
	(void)swap;
	qsort(base, num, size, cmp);
}
#endif
