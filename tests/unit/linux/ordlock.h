/* SPDX-License-Identifier: GPL-2.0 */
/* Host shim: the UAPI header, as the kernel build finds it. */
#include "../../../include/uapi/linux/ordlock.h"
