# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# clock.sh -- a guest's clock against the host's (issue 41), sourced by
# tests/cluster/node.sh (which sets the guest's clock from the host's at
# boot) and tests/cluster/cases/c_faults.sh (which measures the skew at the
# start and the end of its schedule).  No channel of its own: a file that a
# guest creates in a directory the host shares (9p, cache=none) gets its
# mtime from the host's kernel, i.e. the host's clock at that write.

# clock_probe FILE: prints "GUEST HOST ERR" in ms: this guest's clock at the
# middle of a write that creates FILE, FILE's mtime (the host's clock at the
# write), and half the write's time (the bound of the error); the guest's
# skew is GUEST - HOST
clock_probe() {
	local f=$1 t1 t2 h
	rm -f "$f"
	t1=$EPOCHREALTIME
	echo "$t1" >"$f" || return 1
	t2=$EPOCHREALTIME
	h=$(stat -c %.6Y "$f") || return 1
	awk -v a="$t1" -v b="$t2" -v h="$h" \
		'BEGIN { printf "%.3f %.3f %.3f\n", (a + b) / 2 * 1000, h * 1000, (b - a) / 2 * 1000 }'
}

# clock_skew FILE: prints the guest's skew (ms, signed, no decimals) and the
# error bound, "SKEW ERR"
clock_skew() {
	clock_probe "$1" | awk '{ printf "%+.0f %.0f\n", $1 - $2, $3 }'
}
