/* SPDX-License-Identifier: GPL-2.0 */
/* Host shim: the kernel's isalnum() is the C library's for ASCII. */
#include <ctype.h>
