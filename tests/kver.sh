#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kver.sh [KDIR] -- prints the kernel release the module is built for and the
# test VM boots.
#   no KDIR: the newest Debian *-amd64 kernel that has headers
#            (/lib/modules/KVER/build) -- not the running kernel;
#   KDIR:    the release whose /lib/modules/KVER/build is KDIR, else the
#            name of a Debian /usr/src/linux-headers-KVER tree, else the
#            tree's include/config/kernel.release.
# Prints nothing when it finds nothing.
if [ -z "$1" ]; then
	for d in /lib/modules/*-amd64/build; do
		[ -d "$d" ] && basename "$(dirname "$d")"
	done | sort -V | tail -n 1
	exit 0
fi
k=$(readlink -f "$1")
for d in /lib/modules/*/build; do
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
