#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_faults: a seeded schedule of faults while clients on every node move
# stock between three accounts under the accounts' keys (issue 27, a first
# version of the fault-injection harness, inside one cluster run: the
# faults that need no host, so no death and no partition yet).
#
# The seed is FAULT_SEED (node.sh's environment, else the time at node 1's
# start), printed and kept in the shared directory: every node draws the
# same schedule from it (awk's srand), so a failing seed replays with
# FAULT_SEED=SEED.  It runs only when named (cluster-named-only: make
# check-faults, with corosync's token at 5000 ms: a guest the host starves
# past a 2000 ms token splits the membership, which is not the fault under
# test).  FAULTS faults (default 12), each of one kind:
# - restart: every node leaves the domain and joins it again (cluster off,
#   then on, on all nodes: the lockspace and its value blocks are gone);
# - reload: one node leaves, unloads ordlock_dlm, joins again (loaded on
#   demand): a DLM recovery on the others while they go on;
# - lru: max_anchors 1 on every node, each takes a key of its own (every
#   anchor of the accounts dropped), max_anchors again;
# - pause: one node's client stopped (SIGSTOP) while it holds its keys,
#   for 3 s, then resumed (no lease: the other nodes wait for it).
# Meanwhile each node's client takes two of the accounts 1:1..1:3
# exclusively in one request, moves one unit from one to the other (files
# of the shared directory, read and written under the keys) and adds its
# token to each key's history (a file per grant, written under the key, so
# the history's order is the order of the grants).  A node whose part of a
# fault needs its client quiet (its domain left, or its anchors dropped)
# holds it between two grants first.
# The checker (every node, at the end): every token of each key's history
# is above every one before it; the accounts' total is what it was (no two
# holders overlapped: a lost update would change it); every client made
# grants; figures (faults of each kind, grants) in the TAP diagnostics.
#
# cluster-timeout: 480
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
dom=c_flt
param=/sys/module/ordlock_dlm/parameters/max_anchors
nfaults=${FAULTS:-12}
accounts=3
start_stock=1000

# cluster on|off, as a point; EBUSY (the client's last owner still being
# closed) is tried again for up to 10 s
cluster() {
	local out rc t
	for ((t = 0; t < 50; t++)); do
		out=$("$olc" domain $dom set cluster "$1" 2>&1)
		rc=$?
		[[ $rc != 0 && ($out == *"has owners"* || $out == *"in progress"*) ]] || break
		sleep 0.2
	done
	point $rc "node$node: fault $i ($kind): domain $dom set cluster $1" || diag "$out"
}
# hold_client / release_client: this node's client stops between grants
hold_client() {
	touch "$shared/hold.$node"
	for _ in $(seq 1200); do [[ -e $shared/paused.$node ]] && return 0; sleep 0.1; done
	diag "node$node: the client did not stop"
	return 1
}
release_client() { rm -f "$shared/hold.$node"; }

# --- the seed and the schedule ---------------------------------------------
if ((node == 1)); then
	seed=${FAULT_SEED:-$(date +%s)}
	echo "$seed" >"$shared/seed.tmp" && mv "$shared/seed.tmp" "$shared/seed"
	for ((a = 1; a <= accounts; a++)); do
		mkdir -p "$shared/hist.$a"
		echo "$start_stock" >"$shared/acct.$a"
	done
fi
for _ in $(seq 300); do [[ -s $shared/seed ]] && break; sleep 0.1; done
seed=$(cat "$shared/seed")
diag "seed $seed (replay: FAULT_SEED=$seed), $nfaults faults"
schedule=$(awk -v s="$seed" -v n="$nfaults" -v nodes="$nodes" 'BEGIN {
	srand(s); split("restart reload lru pause", k, " ")
	for (i = 1; i <= n; i++) printf "%s %d %d\n", k[int(rand() * 4) + 1], int(rand() * nodes) + 1, int(rand() * 3) + 1 }')
out=$("$olc" domain $dom set cluster on 2>&1)
point $? "node$node: domain $dom set cluster on" || diag "$out"
barrier on

# --- the client --------------------------------------------------------------
# one transfer: under keys 1:A and 1:B (exclusive), one unit from A to B,
# and the token into each key's history
transfer_cmd() {
	local a=$1 b=$2
	printf '%s' "echo \$\$ >$shared/holder.$node; " \
		"for k in $a $b; do n=\$(ls $shared/hist.\$k | wc -l); echo \"\$ORDLOCK_TOKEN $node\" >$shared/hist.\$k/\$(printf %06d \$n); done; " \
		"x=\$(cat $shared/acct.$a); y=\$(cat $shared/acct.$b); sleep 0.05; " \
		"echo \$((x - 1)) >$shared/acct.$a; echo \$((y + 1)) >$shared/acct.$b; rm -f $shared/holder.$node"
}
client() {
	local grants=0 errors=0 r=$((seed + node)) a b
	while [[ ! -e $shared/stop ]]; do
		if [[ -e $shared/hold.$node ]]; then
			touch "$shared/paused.$node"
			while [[ -e $shared/hold.$node && ! -e $shared/stop ]]; do sleep 0.1; done
			rm -f "$shared/paused.$node"
			continue
		fi
		r=$(((r * 1103515245 + 12345) % 2147483648))
		a=$((r % accounts + 1))
		b=$(((a + r / accounts % (accounts - 1)) % accounts + 1))
		if "$olc" exec -q -d $dom -w 120 -x "1:$a" -x "1:$b" -- sh -c "$(transfer_cmd $a $b)"; then
			grants=$((grants + 1))
		else
			errors=$((errors + 1))
		fi
	done
	echo "$grants $errors" >"$shared/client.$node"
}
client &
cpid=$!

# --- the faults --------------------------------------------------------------
declare -A count=()
i=0
while read -r kind target pausefor <&3; do
	i=$((i + 1))
	count[$kind]=$((${count[$kind]:-0} + 1))
	sleep 2 # the clients go on meanwhile
	barrier "f$i"
	((node == 1)) && diag "fault $i: $kind${target:+ (node$target)}"
	case $kind in
	restart)
		hold_client
		cluster off
		barrier "f$i.off"
		cluster on
		barrier "f$i.on"
		release_client
		;;
	reload)
		if ((node == target)); then
			hold_client
			cluster off
			out=$(rmmod ordlock_dlm 2>&1)
			point $? "node$node: fault $i (reload): ordlock_dlm unloaded" || diag "$out"
			cluster on
			release_client
		fi
		;;
	lru)
		hold_client
		old=$(cat $param)
		echo 1 >$param
		"$olc" exec -q -d $dom -w 120 -x "9:$node" -- true
		point $? "node$node: fault $i (lru): its own key taken with max_anchors 1"
		barrier "f$i.dropped"
		echo "$old" >$param
		release_client
		;;
	pause)
		if ((node == target)); then
			for _ in $(seq 600); do [[ -s $shared/holder.$node ]] && break; sleep 0.05; done
			p=$(cat "$shared/holder.$node" 2>/dev/null)
			if [[ -n $p ]] && kill -STOP "$p" 2>/dev/null; then
				sleep "$pausefor"
				kill -CONT "$p"
				count[paused]=$((${count[paused]:-0} + 1))
			fi
		fi
		;;
	esac
	barrier "f$i.done"
done 3<<<"$schedule"

touch "$shared/stop"
wait "$cpid"
barrier stopped

# --- the checker ----------------------------------------------------------------
read -r grants errors <"$shared/client.$node"
((grants > 0))
point $? "node$node: its client made $grants transfers ($errors not granted)"
total=0
for ((a = 1; a <= accounts; a++)); do
	total=$((total + $(cat "$shared/acct.$a")))
	bad=$(cat "$shared/hist.$a"/* | awk '{ if (NR > 1 && $1 <= max) { print "grant " NR " (" $0 ") not above " max " (" who ")"; exit } if ($1 > max) { max = $1; who = $0 } }')
	[[ -z $bad ]]
	point $? "node$node: 1:$a: $(find "$shared/hist.$a" -type f | wc -l) grants, each token above every one before it${bad:+: $bad}"
done
((total == accounts * start_stock))
point $? "node$node: the accounts' total is $total (of $((accounts * start_stock)))"
figures=""
for k in "${!count[@]}"; do figures+="$k ${count[$k]}, "; done
diag "seed $seed: $i faults (${figures%, }); this node's client $grants transfers"
barrier checked
out=$("$olc" domain $dom set cluster off 2>&1)
point $? "node$node: domain $dom set cluster off" || diag "$out"
finish
