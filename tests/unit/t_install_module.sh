#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_install_module -- "make install-module" leaves a module modprobe finds:
# into a DESTDIR tree for KVER (tests/kver.sh) it installs ordlock.ko
# under updates/ (ordlock.ko.xz where the kernel compresses its modules, as
# Debian's 6.12 does) and runs depmod there (issue 30: kbuild runs depmod only with a
# System.map, which Debian's headers do not ship, so "modprobe ordlock"
# said "not found" until "depmod -a"): modules.dep lists ordlock, and
# "modprobe -d DESTDIR -S KVER --show-depends ordlock" names the installed
# file.  Builds the module when it is not built.  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
unset MAKEFLAGS MFLAGS MAKELEVEL
kver=${KVER:-$(sh "$repo/tests/kver.sh" 2>/dev/null)}
depmod=$(command -v depmod || ls /sbin/depmod /usr/sbin/depmod 2>/dev/null | head -1)
modprobe=$(command -v modprobe || ls /sbin/modprobe /usr/sbin/modprobe 2>/dev/null | head -1)
[[ -n $kver && -d /lib/modules/$kver/build ]] || skip "no kernel headers (tests/kver.sh: ${kver:-none})"
[[ -n $depmod && -n $modprobe ]] || skip "no depmod/modprobe (kmod)"

unit_work
make -s --no-print-directory -C "$repo" install-module KVER="$kver" DESTDIR="$work" \
	>"$work/log" 2>&1
rc=$?
point $rc "make install-module KVER=$kver DESTDIR=$work" "$(tail -n 8 "$work/log")"
mods=$work/lib/modules/$kver
ko=$(cd "$mods" 2>/dev/null && find updates -name 'ordlock.ko*' | head -1)
[[ -n $ko ]]
point $? "ordlock.ko is installed under updates/ (${ko:-none})"
grep -q "^$ko:" "$mods/modules.dep" 2>/dev/null
point $? "depmod ran on DESTDIR: modules.dep lists $ko" \
	"$(ls "$mods" 2>&1 | tr '\n' ' ')"
[[ -f $mods/modules.dep.bin ]]
point $? "and modules.dep.bin, which modprobe reads, is there"
out=$("$modprobe" -d "$work" -S "$kver" --show-depends ordlock 2>&1)
[[ -n $ko && $out == *"insmod $mods/$ko"* ]]
point $? "modprobe finds ordlock there (--show-depends: the installed file)" "$out"
grep -q "depmod.*-b $work -a $kver" "$work/log"
point $? "make says the depmod it ran" "$(grep -i depmod "$work/log")"
# issue 42: the log does not read as a failure: no kbuild "Skipping depmod"
# before the depmod that runs, no sign-file errors (no key: not signed,
# one line says so)
bad=$(grep -E "Skipping depmod|sign-file|SSL error|At main.c" "$work/log")
[[ -z $bad ]]
point $? "no \"Skipping depmod\" and no sign-file errors in the log" "$bad"
key=$(sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"$/\1/p' "/lib/modules/$kver/build/.config" 2>/dev/null)
if grep -q '^CONFIG_MODULE_SIG_ALL=y' "/lib/modules/$kver/build/.config" 2>/dev/null &&
	[[ -n $key && ! -e /lib/modules/$kver/build/$key && ! -e $key ]]; then
	grep -q "not signed (no key" "$work/log"
	point $? "without the kernel's signing key: one line says the module is not signed" \
		"$(tail -n 5 "$work/log")"
fi
unit_done
