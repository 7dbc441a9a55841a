/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host shim: just enough of the kernel's types for the pure logic of
 * kmod/keys.c, which the unit tests include directly.
 */
#ifndef ORDLOCK_KSHIM_H
#define ORDLOCK_KSHIM_H
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
#endif
