#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kver.sh [--matrix | KDIR] -- the kernel releases ordlock is built for.
#
#   no argument: the default kernel of "make", "make vm", "make demo" and
#            "make install-module", chosen in this order:
#              1. the running kernel, when its headers are installed
#                 (/lib/modules/$(uname -r)/build): what insmod loads into;
#              2. Debian 12's default kernel, the 6.1 release that
#                 linux-image-amd64 installs (the newest 6.1.*-amd64 with
#                 headers);
#              3. the newest Debian 6.12 kernel with headers (not -rt),
#                 then the newest 6.12 -rt one.
#   --matrix: the kernels "make check" tests, one line "FLAVOUR KVER" each,
#            in this order: 6.1 (linux-image-amd64), 6.12
#            (linux-image-6.12-amd64), 6.12-rt (linux-image-6.12-rt-amd64),
#            KVER the newest installed release of that flavour with headers,
#            or empty when none is installed.
#   KDIR:    the release whose /lib/modules/KVER/build is KDIR, else the
#            name of a Debian /usr/src/linux-headers-KVER tree, else the
#            tree's include/config/kernel.release.
# Prints nothing when it finds nothing.  ORDLOCK_MODULES_DIR (default
# /lib/modules) and ORDLOCK_UNAME_R (default: uname -r) are for its tests.

mods=${ORDLOCK_MODULES_DIR:-/lib/modules}

# newest REGEX: the newest release matching REGEX that has headers
newest() {
	for d in "$mods"/*/build; do
		[ -d "$d" ] && basename "$(dirname "$d")"
	done | grep -E "^$1\$" | sort -V | tail -n 1
}
k61() { newest '6\.1\.[0-9]+-[0-9]+-amd64'; }
k612() { newest '6\.12\.[0-9]+\+deb12-amd64'; }
k612rt() { newest '6\.12\.[0-9]+\+deb12-rt-amd64'; }

case $1 in
'')
	r=${ORDLOCK_UNAME_R:-$(uname -r)}
	if [ -d "$mods/$r/build" ]; then
		echo "$r"
		exit 0
	fi
	for f in k61 k612 k612rt; do
		r=$($f)
		if [ -n "$r" ]; then
			echo "$r"
			exit 0
		fi
	done
	exit 0
	;;
--matrix)
	echo "6.1 $(k61)"
	echo "6.12 $(k612)"
	echo "6.12-rt $(k612rt)"
	exit 0
	;;
esac
k=$(readlink -f "$1")
for d in "$mods"/*/build; do
	if [ -d "$d" ] && [ "$(readlink -f "$d")" = "$k" ]; then
		basename "$(dirname "$d")"
		exit 0
	fi
done
case $k in
*/linux-headers-*) echo "${k##*/linux-headers-}" ;;
*) cat "$k/include/config/kernel.release" 2>/dev/null ;;
esac
exit 0
