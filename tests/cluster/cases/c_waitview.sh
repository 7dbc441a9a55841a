#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_waitview: the views of an owner that is granted a key on its node and
# waits for the key's lock in the cluster (issue 19, docs/cluster.md
# "Views"): ordlock grants a key of a cluster domain locally first, then
# the request waits in the DLM. While node 2 holds 1:1 (mastered by node
# 1, which used it first), node 3's owner and then node 1's wait for it:
# - on the waiting node 3 (which does not master 1:1):
#   ordlockctl locks: the owner's row is a holder waiting for the cluster
#   (table: TOKEN "-", WAITED set, a note naming it; JSON cluster_wait
#   true, token null, waited_us set), from debugfs and from netlink alike;
#   ordlockctl owners: the owner waits for exclusive 1:1 (not "-");
#   ordlockctl blockers PID: exits 1 with a row saying 1:1 is held on
#   another node, known on its master node 1 only (JSON blocking_nodes
#   empty, blocking_pids empty, a blocker with node null, master_node 1);
# - on the master node 1: the same for its own waiting owner, and blockers
#   names node 2's holder (PID "-", NODE 2, holds exclusive; JSON
#   blocking_nodes [2]);
# - after node 2's release both are granted in turn: holders with tokens,
#   nobody waits, blockers exits 0 "waits for no key".
# (TAP, all nodes at once.)
#
# cluster-timeout: 300
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
dom=c_wv
export NO_COLOR=1

# node 1 masters 1:1, node 2 holds it exclusively until told
remote_holder $dom

# The views of this node's waiting owner: ordlockctl exec's child, which
# takes the key as "true" (its command's name); $1: this node masters 1:1.
# Sets pid.
check_waiting() {
	local master=$1 j t rc
	# until the owner holds 1:1 here and waits (hang guard 150 tries)
	pid=
	for _ in $(seq 150); do
		j=$("$olc" -j locks -d $dom 2>/dev/null)
		pid=$(jq -r '[.locks[] | select(.node == null and .comm == "true")][0].pid // empty' \
			<<<"$j")
		[[ $pid ]] && jqok "$j" "[.locks[] | select(.pid == $pid and .cluster_wait)] |
			length == 1" && break
		sleep 0.2
	done
	[[ $pid ]]
	point $? "node$node: the waiting owner (pid $pid) holds 1:1 on this node" || diag "$j"
	pid=${pid:-0}
	jqok "$j" "[.locks[] | select(.pid == $pid and .node == null and .role == \"holder\"
		and .cluster_wait == true and .token == null and .waited_us > 0
		and .mode == \"exclusive\" and .key == \"1:1\")] | length == 1"
	point $? "node$node: locks -j: pid $pid holds 1:1 here and waits for the cluster" ||
		diag "$j"
	j=$("$olc" -S netlink -j locks -d $dom 2>/dev/null)
	jqok "$j" "[.locks[] | select(.pid == $pid and .role == \"holder\"
		and .cluster_wait == true and .token == null and .waited_us > 0)] | length == 1"
	point $? "node$node: locks -j (netlink): the same" || diag "$j"
	t=$("$olc" locks -d $dom 2>&1)
	grep -Eq "^c_wv +1:1 +holder +0 +[0-9]+ +$pid +true +exclusive +- +[0-9.]+ (us|ms|s|min) +- +local *\$" <<<"$t"
	point $? "node$node: locks table: a holder row without a token, with WAITED" || diag "$t"
	grep -q "1:1: pid $pid (owner [0-9]*) holds it on this node and waits for its lock in the cluster" <<<"$t"
	point $? "node$node: locks table: a note says pid $pid waits for the cluster" || diag "$t"
	t=$("$olc" -S netlink owners -d $dom -w -p "$pid" -r -n -o PID,WAITS_FOR 2>&1)
	[[ $t == "$pid exclusive-1:1" ]]
	point $? "node$node: owners -w: pid $pid waits for exclusive 1:1 ($t)"
	j=$("$olc" -j owners -d $dom -p "$pid" 2>/dev/null)
	jqok "$j" '.owners[0].waiting | .mode == "exclusive" and .key == "1:1" and .waited_us > 0'
	point $? "node$node: owners -j: waiting for exclusive 1:1" || diag "$j"
	t=$("$olc" blockers -d $dom "$pid" 2>&1)
	rc=$?
	((rc == 1))
	point $? "node$node: blockers $pid exits 1 (blocked; got $rc)" || diag "$t"
	if ((master)); then
		grep -Eq '^ *- +- +- +holds exclusive +1:1 +cluster +[0-9]+ +exclusive +[0-9.]+ (us|ms|s|min) +2 *$' <<<"$t"
		point $? "node$node: blockers $pid: a row naming node 2's holder (PID -, NODE 2)" ||
			diag "$t"
		j=$("$olc" -j blockers -d $dom "$pid" 2>/dev/null)
		jqok "$j" '(.blocking_pids == []) and (.blocking_nodes == [2]) and
			([.blockers[] | select(.pid == null and .node == 2 and .mode == "exclusive"
			  and .edge == "cluster" and .key == "1:1")] | length == 1)'
		point $? "node$node: blockers -j: node 2 blocks it, no local pid" || diag "$j"
	else
		grep -q "1:1 is held on another node: its master, node 1, knows which" <<<"$t"
		point $? "node$node: blockers $pid: held on another node, known on master node 1" ||
			diag "$t"
		j=$("$olc" -j blockers -d $dom "$pid" 2>/dev/null)
		jqok "$j" '(.blocking_pids == []) and (.blocking_nodes == []) and
			([.blockers[] | select(.pid == null and .node == null and .master_node == 1
			  and .edge == "cluster" and .key == "1:1")] | length == 1)'
		point $? "node$node: blockers -j: held elsewhere, master_node 1" || diag "$j"
	fi
}

# node 3 waits first, then node 1 (so node 1's DLM queue has node 3 ahead)
if ((node == 3)); then
	"$olc" exec -d $dom -w 280 -x 1:1 -- true &
	waiter=$!
	check_waiting 0
	touch "$shared/seen3"
fi
if ((node == 1)); then
	for _ in $(seq 600); do [[ -e $shared/seen3 ]] && break; sleep 0.1; done
	"$olc" exec -d $dom -w 280 -x 1:1 -- true &
	waiter=$!
	check_waiting 1
fi
barrier looked

((node == 2)) && touch "$shared/release"
if ((node == 2)); then
	wait "$holder"
	point $? "node2: the holder ended"
fi
if ((node == 1 || node == 3)); then
	wait "$waiter"
	point $? "node$node: granted 1:1 after node 2's release"
	t=$("$olc" blockers -d $dom "$pid" 2>&1)
	rc=$?
	((rc == 0)) && grep -q "pid $pid waits for no key" <<<"$t"
	point $? "node$node: blockers after the grant: waits for no key (exit $rc)" || diag "$t"
	j=$("$olc" -j locks -d $dom 2>/dev/null)
	jqok "$j" '[.locks[] | select(.node == null)] | length == 0'
	point $? "node$node: locks -j after the grant: no local row" || diag "$j"
fi
barrier released

out=$("$olc" domain $dom set cluster off 2>&1)
point $? "node$node: domain $dom set cluster off ($out)"
barrier off
finish
