# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Library of the shell cases of make check-cluster (source it from a case:
# . "$ORDLOCK_REPO/tests/cluster/lib/case.sh").  The environment comes from
# tests/cluster/node.sh: ORDLOCK_NODE (this node's number), ORDLOCK_NODES,
# ORDLOCK_SHARED (the case's directory, shared by all nodes without
# caching), ORDLOCK_CONTROL (the run's control directory: node kills).
#
#   point STATUS NAME     one TAP point ("ok N - NAME" when STATUS is 0)
#   diag TEXT...          a TAP diagnostic
#   alive N               node N has not been killed by the host
#   barrier NAME          every live node reached NAME (BARRIER_S hang
#                         guard, default 300 s); a node killed meanwhile is
#                         not waited for
#   kill_node N           ask the host to kill node N's qemu (SIGKILL) and
#                         wait (60 s) until it is gone: the case that calls
#                         it must carry the marker "cluster-kills-a-node"
#                         (run.sh runs it last); returns 1 if not done
#   ms_now                milliseconds of CLOCK_REALTIME
#   finish                prints the plan and exits 1 if a point failed
set -u
n=0
failed=0
node=$ORDLOCK_NODE
nodes=$ORDLOCK_NODES
shared=$ORDLOCK_SHARED
control=${ORDLOCK_CONTROL:-$shared/..}
point() {
	n=$((n + 1))
	if [[ $1 == 0 ]]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
	return "$1"
}
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }
alive() { [[ ! -e $control/.dead.$1 ]]; }
barrier() {
	local i j c
	touch "$shared/.b.$1.$node"
	for ((i = 0; i < ${BARRIER_S:-300} * 5; i++)); do
		c=0
		for ((j = 1; j <= nodes; j++)); do
			if [[ -e $shared/.b.$1.$j ]] || ! alive "$j"; then
				c=$((c + 1))
			fi
		done
		((c == nodes)) && return 0
		sleep 0.2
	done
	diag "barrier $1: only $c of $nodes nodes came"
	return 1
}
kill_node() {
	local i
	echo "$node ${0##*/}" >"$control/.kill.$1.tmp" && mv "$control/.kill.$1.tmp" "$control/.kill.$1"
	for ((i = 0; i < 300; i++)); do
		alive "$1" || return 0
		sleep 0.2
	done
	return 1
}
ms_now() { echo $(($(date +%s%N) / 1000000)); }
finish() {
	echo "1..$n"
	exit $failed
}

# The test module's holders (tests/cluster/kmod/ordlock_cltest.c): open one
# with "exec FD<>$clt", then
#   clt FD COMMAND             one command; prints the error text
#                              ("Connection timed out"...) and fails when
#                              the command failed
#   clt_expect FD CMD ERR NAME a point: the command fails with error text ERR
# shellcheck disable=SC2034 # used by the cases
clt=/sys/kernel/debug/ordlock_cltest
clt() {
	local out
	out=$( { printf '%s\n' "$2" >&"$1"; } 2>&1) && return 0
	echo "${out##*write error: }"
	return 1
}
clt_expect() {
	local got
	got=$(clt "$1" "$2")
	[[ $? != 0 && $got == "$3" ]]
	point $? "$4${got:+ (got: $got)}"
}
