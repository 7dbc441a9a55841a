#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_install -- "make install" into a scratch DESTDIR, twice (the default
# PREFIX=/usr/local, and PREFIX=/opt/ordlock): checks the installed tree,
# the .pc file's prefix, the man pages (groff warnings), the bash
# completion, and that a small C program compiles and links against the
# installed library through "pkg-config --cflags --libs libordlock"
# (PKG_CONFIG_PATH into DESTDIR, PKG_CONFIG_SYSROOT_DIR=DESTDIR), shared and
# static, and runs; the Python binding imports from the installed tree. TAP.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here" && git rev-parse --show-toplevel 2>/dev/null) ||
	repo=$(cd "$here/../.." && pwd)
[[ -f $repo/dkms.conf ]] || repo=$(cd "$here/../../.." && pwd)
cd "$repo" || exit 1
unset MAKEFLAGS MFLAGS MAKELEVEL

n=0
failed=0
point() { # point STATUS DESCRIPTION [DIAGNOSTIC FILE]
	n=$((n + 1))
	if [[ $1 == 0 ]]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		[[ -n ${3:-} && -f ${3:-} ]] && tail -n 15 "$3" | sed 's/^/# /'
	fi
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/hello.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <libordlock.h>

int main(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 10);

	/* no device needed: the library's pure functions */
	printf("%s %s %u\n", ordlock_reason_name(ORDLOCK_REASON_ORDER),
	       ordlock_mode_name(k.mode), k.rank);
	return strcmp(ordlock_policy_name(ORDLOCK_POLICY_DETECT), "detect") != 0;
}
C

check_prefix() { # check_prefix PREFIX
	local prefix=$1 d=$work/dest${1//\//_} f missing=() libdir pc
	mkdir -p "$d"
	if [[ $prefix == /usr/local ]]; then
		make --no-print-directory install DESTDIR="$d" >"$work/install.log" 2>&1
	else
		make --no-print-directory install DESTDIR="$d" PREFIX="$prefix" >"$work/install.log" 2>&1
	fi
	point $? "make install DESTDIR=... PREFIX=$prefix" "$work/install.log"
	libdir=$prefix/lib
	for f in sbin/ordlockctl lib/libordlock.a lib/libordlock.so.1 \
		lib/libordlock.so lib/pkgconfig/libordlock.pc \
		include/libordlock.h include/linux/ordlock.h \
		share/man/man8/ordlockctl.8 share/man/man3/libordlock.3 \
		share/man/man3/ordlock_acquire.3 share/man/man4/ordlock.4 \
		share/bash-completion/completions/ordlockctl \
		lib/udev/rules.d/60-ordlock.rules \
		lib/python3/dist-packages/ordlock.py \
		share/doc/ordlock/examples/60-ordlock.rules \
		share/doc/ordlock/examples/modprobe.d-ordlock.conf \
		share/doc/ordlock/examples/modules-load.d-ordlock.conf; do
		[[ -e $d$prefix/$f ]] || missing+=("$f")
	done
	[[ ${#missing[@]} == 0 ]]
	point $? "$prefix: the whole tree is there${missing[*]:+ (missing: ${missing[*]})}"
	[[ -x $d$prefix/sbin/ordlockctl && -L $d$libdir/libordlock.so &&
		$(readlink "$d$libdir/libordlock.so") == libordlock.so.1 ]] &&
		# grep without -q reads everything: with pipefail, an early exit
		# would kill the writer with SIGPIPE and fail the point
		objdump -p "$d$libdir/libordlock.so.1" | grep 'SONAME *libordlock.so.1' >/dev/null
	point $? "$prefix: ordlockctl executable, libordlock.so -> libordlock.so.1 (its SONAME)"
	[[ -z $(find "$d" -path "$d$prefix" -prune -o -type f -print) ]]
	point $? "$prefix: nothing outside PREFIX (no /etc)"
	pc=$d$libdir/pkgconfig/libordlock.pc
	grep -qx "prefix=$prefix" "$pc" 2>/dev/null && grep -qx "libdir=$libdir" "$pc"
	point $? "$prefix: libordlock.pc has prefix=$prefix"
	local cflags libs
	cflags=$(PKG_CONFIG_PATH=$d$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d \
		pkg-config --cflags libordlock 2>&1)
	libs=$(PKG_CONFIG_PATH=$d$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d \
		pkg-config --libs libordlock 2>&1)
	cflags=${cflags%% } libs=${libs%% } # pkg-config pads with a space
	cflags=${cflags/  / } libs=${libs/  / }
	[[ $cflags == "-I$d$prefix/include" && $libs == "-L$d$libdir -lordlock" ]]
	point $? "$prefix: pkg-config --cflags --libs libordlock: $cflags $libs"
	# shellcheck disable=SC2086
	cc -Wall -Werror -o "$work/hello" "$work/hello.c" $cflags $libs \
		>"$work/cc.log" 2>&1
	point $? "$prefix: a C program compiles and links with the shared library" "$work/cc.log"
	[[ $(LD_LIBRARY_PATH=$d$libdir "$work/hello" 2>&1) == "order exclusive 1" ]] &&
		ldd "$work/hello" | grep libordlock.so.1 >/dev/null
	point $? "$prefix: and runs against the installed libordlock.so.1"
	# shellcheck disable=SC2086
	cc -Wall -Werror -o "$work/hello-static" "$work/hello.c" $cflags \
		"$d$libdir/libordlock.a" >"$work/cc.log" 2>&1 &&
		[[ $("$work/hello-static") == "order exclusive 1" ]]
	point $? "$prefix: and with the static library" "$work/cc.log"
	ORDLOCK_LIB=$d$libdir/libordlock.so.1 PYTHONPATH=$d$libdir/python3/dist-packages \
		python3 -c 'import ordlock, sys; sys.exit(ordlock.reason_name(2) != "order" or not ordlock.__file__.startswith(sys.argv[1]))' \
		"$d" >"$work/py.log" 2>&1
	point $? "$prefix: the Python binding imports from the tree and loads the library" "$work/py.log"
	make --no-print-directory uninstall DESTDIR="$d" PREFIX="$prefix" >"$work/install.log" 2>&1
	[[ -z $(find "$d" -type f -o -type l) ]]
	point $? "$prefix: make uninstall leaves no file" "$work/install.log"
}

check_prefix /usr/local
check_prefix /opt/ordlock

# the pages render without groff warnings; the completion loads
for page in tools/ordlockctl.8 tools/libordlock.3 tools/ordlock.4; do
	out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
	[[ -z $out ]]
	point $? "$page renders without warnings${out:+: $out}"
done
out=$(bash -c 'source tools/completion/ordlockctl.bash &&
	COMP_WORDS=(ordlockctl gr) COMP_CWORD=1 && _ordlockctl && echo "${COMPREPLY[*]}" &&
	COMP_WORDS=(ordlockctl graph --d) COMP_CWORD=2 && _ordlockctl && echo "${COMPREPLY[*]}"' 2>&1)
[[ $out == $'graph\n--domain --dot' ]]
point $? "bash completion: subcommands and their options (${out//$'\n'/; })"
grep -q '^KERNEL=="ordlock", .*GROUP="ordlock", MODE="0660"' tools/udev/60-ordlock.rules
point $? "udev rule: /dev/ordlock to group ordlock, 0660"
echo "1..$n"
((failed == 0))
