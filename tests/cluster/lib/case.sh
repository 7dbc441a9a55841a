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
#   jqok JSON FILTER      jq's FILTER is true of JSON
#   remote_holder DOM     the views' start on every node: DOM a cluster
#                         domain (a point); node 1 takes and releases 1:1
#                         once, so that it masters the resource (its anchor
#                         keeps it there); then node 2 holds 1:1
#                         exclusively until $shared/release exists (the pid
#                         of its ordlockctl exec in $holder); barriers on,
#                         mastered, held
#   cluster_set DOM on|off  a point: "ordlockctl domain DOM set cluster
#                         on|off" succeeds (its output as a diagnostic when
#                         it does not)
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
jqok() { jq -e "$2" <<<"$1" >/dev/null; }
remote_holder() {
	local dom=$1 olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl out
	out=$("$olc" domain "$dom" set cluster on 2>&1)
	point $? "node$node: domain $dom set cluster on ($out)"
	barrier on
	if ((node == 1)); then
		"$olc" exec -d "$dom" -w 30 -x 1:1 -- true
		point $? "node1: 1:1 taken and released once (node 1 masters it now)"
	fi
	barrier mastered
	if ((node == 2)); then
		"$olc" exec -d "$dom" -w 60 -x 1:1 -- sh -c \
			"touch $shared/held; while [ ! -e $shared/release ]; do sleep 0.1; done" &
		# shellcheck disable=SC2034 # the case waits for it
		holder=$!
		for _ in $(seq 600); do [[ -e $shared/held ]] && break; sleep 0.1; done
		[[ -e $shared/held ]]
		point $? "node2: holds 1:1 exclusively"
	fi
	barrier held
}
cluster_set() {
	local out
	out=$("$ORDLOCK_REPO/tools/ordlockctl/ordlockctl" domain "$1" set cluster "$2" 2>&1)
	point $? "node$node: domain $1 set cluster $2" || diag "$out"
}
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
