#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-module.sh KDIR DIR [MAKE ARGS...] -- builds the module against the
# kernel tree KDIR from a copy of the sources in DIR (DIR/kmod/ordlock.ko),
# so that builds for several kernels (make check's matrix, the debug
# kernel) never overwrite each other or kmod/ordlock.ko.  The copy keeps
# the timestamps: kbuild rebuilds only what changed.  MAKE ARGS go to
# kbuild (C=2 runs sparse, ORDLOCK_WERROR=1 turns warnings into errors).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
kdir=$1
mod=$2
shift 2
MAKE=${MAKE:-make}
case $mod in /*) ;; *) mod=$repo/$mod ;; esac

cd "$repo"
mkdir -p "$mod/kmod" "$mod/include/uapi/linux"
# sources that are gone from kmod/ go from the copy too
for f in "$mod"/kmod/*.[ch]; do
	[[ -e $f ]] || continue
	[[ $f == *.mod.c || -e kmod/${f##*/} ]] || rm -f "$f" "${f%.[ch]}.o"
done
cp -p Kbuild "$mod/"
cp -p kmod/Kbuild "$mod/kmod/"
for f in kmod/*.[ch]; do
	[[ $f == *.mod.c ]] || cp -p "$f" "$mod/kmod/"
done
cp -p include/uapi/linux/ordlock.h "$mod/include/uapi/linux/"
exec $MAKE --no-print-directory -C "$kdir" M="$mod" "$@" modules
