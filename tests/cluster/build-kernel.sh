#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh KVER -- what the cluster suite needs for one kernel of
# make check's matrix, built apart from the tree's kmod/ so that the
# kernels never overwrite each other: ordlock.ko and ordlock_dlm.ko in
# tests/build/kernels/KVER/kmod/ (tests/harness/build-module.sh, as the
# in-VM suite of that kernel uses them) and the test module
# ordlock_cltest.ko in tests/build/kernels/KVER/cltest/, built against
# that copy's sources and symbols.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
kver=$1
kdir=/lib/modules/$kver/build
MAKE=${MAKE:-make}
[[ -d $kdir ]] || { echo "build-kernel.sh: no headers for $kver ($kdir)" >&2; exit 2; }
out=$repo/tests/build/kernels/$kver

bash "$repo/tests/harness/build-module.sh" "$kdir" "$out" ORDLOCK_WERROR=1
mkdir -p "$out/cltest"
cp -p "$repo/tests/cluster/kmod/Kbuild" "$repo/tests/cluster/kmod/ordlock_cltest.c" "$out/cltest/"
exec $MAKE --no-print-directory -C "$kdir" M="$out/cltest" ORDLOCK_SRC="$out" \
	KBUILD_EXTRA_SYMBOLS="$out/Module.symvers" modules
