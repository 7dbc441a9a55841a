#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_dkms -- builds the module the way DKMS does on a kernel upgrade: the
# sources "make dkms-source" installs (what "make dkms-install" copies to
# /usr/src/ordlock-VERSION), then dkms add, build -k KVER for every kernel
# of ORDLOCK_KVERS (make check: its whole matrix), else KVER, else
# tests/kver.sh's default, then remove --all. Private source and dkms trees
# (--sourcetree, --dkmstree): the machine's DKMS state is not touched
# (dkms itself may create its module signing key in /var/lib/dkms on its
# first build, as it does for any module). TAP; skips without dkms, root or
# headers. "make dkms-check" runs it alone.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
cd "$repo" || exit 1
unset MAKEFLAGS MFLAGS MAKELEVEL
# every kernel make check tests (ORDLOCK_KVERS), else KVER, else the default
kvers=${ORDLOCK_KVERS:-${KVER:-$(sh tests/kver.sh)}}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' tools/dkms/dkms.conf)

command -v dkms >/dev/null || skip "dkms is not installed (make deps)"
[[ $(id -u) == 0 ]] || skip "dkms needs root"
[[ -n ${kvers//[[:space:]]/} ]] || skip "no kernel headers"

unit_work
src=$work/src
tree=$work/dkms
mkdir -p "$src" "$tree"
dk() { dkms --dkmstree "$tree" --sourcetree "$src" "$@"; }

make -s --no-print-directory dkms-source DKMS_SRC="$src/ordlock-$version" >"$work/log" 2>&1
point $? "make dkms-source: the sources of ordlock $version"
dk add -m ordlock -v "$version" >>"$work/log" 2>&1
point $? "dkms add"
for kver in $kvers; do
	if [[ ! -d /lib/modules/$kver/build ]]; then
		point 1 "dkms build -k $kver: no headers in /lib/modules/$kver/build"
		continue
	fi
	t0=$SECONDS
	dk build -m ordlock -v "$version" -k "$kver" >>"$work/log" 2>&1
	rc=$?
	point $rc "dkms build -k $kver ($((SECONDS - t0))s)"
	if [[ $rc != 0 ]]; then
		sed 's/^/# /' "$work/log" | tail -n 20
		tail -n 20 "$tree/ordlock/$version/build/make.log" 2>/dev/null | sed 's/^/# /'
	fi
	ko=$(find "$tree/ordlock/$version/$kver" -name 'ordlock.ko*' 2>/dev/null | head -n 1)
	vermagic=$( [[ -n $ko ]] && modinfo -F vermagic "$ko" 2>/dev/null)
	[[ $vermagic == "$kver "* ]]
	point $? "ordlock.ko built for $kver (${ko#"$tree"/}: vermagic ${vermagic%% *})"
	# the DLM companion, for a kernel with the DLM (all of Debian 12's)
	if grep -qs '^CONFIG_DLM=[ym]' "/lib/modules/$kver/build/.config"; then
		ko=$(find "$tree/ordlock/$version/$kver" -name 'ordlock_dlm.ko*' 2>/dev/null | head -n 1)
		vermagic=$( [[ -n $ko ]] && modinfo -F vermagic "$ko" 2>/dev/null)
		[[ $vermagic == "$kver "* ]]
		point $? "ordlock_dlm.ko built for $kver (CONFIG_DLM; ${ko#"$tree"/})"
	fi
	[[ $(dk status -m ordlock -v "$version" -k "$kver" 2>/dev/null) == *built* ]]
	point $? "dkms status: built for $kver"
done
dk remove -m ordlock -v "$version" --all >>"$work/log" 2>&1
point $? "dkms remove --all"
[[ -z $(dk status -m ordlock 2>/dev/null) ]]
point $? "dkms status: nothing left"
unit_done
