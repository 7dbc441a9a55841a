#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_kver -- tests/kver.sh picks the kernels deliberately: the default is
# the running kernel when its headers are installed, else Debian 12's 6.1,
# else 6.12; the matrix is the newest 6.1, 6.12 and 6.12-rt, never a cloud
# or other flavour, and an empty entry for a flavour that is missing.  On a
# fake /lib/modules (ORDLOCK_MODULES_DIR).  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
kver=$repo/tests/kver.sh
unit_work
mk() { for k in "$@"; do mkdir -p "$work/$k/build"; done; }
run() { ORDLOCK_MODULES_DIR=$work ORDLOCK_UNAME_R=${UNAME:-9.9.9-host} sh "$kver" "$@"; }

mk 6.1.0-56-amd64 6.1.0-57-amd64 6.1.0-57-cloud-amd64 6.1.0-57-rt-amd64 \
	6.12.113+deb12-amd64 6.12.117+deb12-amd64 6.12.117+deb12-cloud-amd64 \
	6.12.115+deb12-rt-amd64 6.12.117+deb12-rt-amd64
mkdir -p "$work/6.13.0-99-amd64"	# an image without headers
is "$(run)" 6.1.0-57-amd64 "default: Debian 12's 6.1, the newest, not the cloud or rt one"
is "$(run --matrix)" "$(printf '6.1 6.1.0-57-amd64\n6.12 6.12.117+deb12-amd64\n6.12-rt 6.12.117+deb12-rt-amd64')" \
	"matrix: the newest of each flavour"
is "$(UNAME=6.12.113+deb12-amd64 run)" 6.12.113+deb12-amd64 \
	"default: the running kernel, when its headers are installed"
is "$(UNAME=6.13.0-99-amd64 run)" 6.1.0-57-amd64 "a running kernel without headers is not chosen"
rm -rf "$work"/6.1.*
is "$(run)" 6.12.117+deb12-amd64 "no 6.1: the newest 6.12"
is "$(run --matrix | head -n 1)" "6.1 " "matrix: a missing flavour is an empty entry"
is "$(run "$work/6.12.115+deb12-rt-amd64/build")" 6.12.115+deb12-rt-amd64 "KDIR: its release"
rm -rf "$work"/*
is "$(run)" "" "no headers at all: nothing"
unit_done
