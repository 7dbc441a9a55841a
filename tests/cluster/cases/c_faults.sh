#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_faults: a seeded schedule of faults while clients on every node move
# stock between three accounts under the accounts' keys, every step
# recorded to a history that a checker reads at the end (issue 27: the
# fault-injection harness, Jepsen-style).
#
# The seed is FAULT_SEED (node.sh's environment, else the time at node 1's
# start), printed and kept in the shared directory: every node draws the
# same schedule from it (awk's srand), so a failing seed replays with
# FAULT_SEED=SEED (FAULT_KINDS: the kinds drawn from, default all).  It
# runs only when named (cluster-named-only: make check-faults, with
# corosync's token at 5000 ms: a guest the host starves past a 2000 ms
# token splits the membership, which is not the fault under test).
# FAULTS faults (default 12), each of one kind (the target node, the
# length: drawn too):
# - restart: every node leaves the domain and joins it again (cluster off,
#   then on, on all nodes: the lockspace and its value blocks are gone);
# - reload: one node leaves, unloads ordlock_dlm, joins again (loaded on
#   demand): a DLM recovery on the others while they go on;
# - lru: max_anchors 1 on every node, each takes a key of its own (every
#   anchor of the accounts dropped), max_anchors again;
# - pause: one node's holder stopped (SIGSTOP) in the middle of a transfer
#   for 2-16 s, past its lease (10 s, the domain's max-hold) or not,
#   then resumed: revoked, it must not write (check-token), or the storage
#   fences it;
# - gstop: one node's whole guest stopped (SIGSTOP to its qemu, by the
#   host) for 1-4 s, below corosync's token, then continued;
# - part: one node cut off (its tap, the bridge's port, down, by the host)
#   for 1-4 s, below the token, then back;
# - kill: one node killed (SIGKILL to its qemu, by the host) while its
#   clients run, the others go on for 15 s (a waiter of its keys must get
#   them: the DLM's recovery), then it boots again (node.sh runs this case
#   again in its second life: ORDLOCK_LIFE), rejoins corosync, the DLM and
#   the domain, and its clients go on.
# Meanwhile CLIENTS clients on every node (default 2) each take two of the
# accounts 1:1..1:3 exclusively in one request (ordlockctl exec, -w 90 for
# the first client, -w 5 for the others: their waits time out) and move one unit from one to the other
# (tests/cluster/lib/fault_xfer.sh: the storage fences stale tokens); each
# client records invoke, ok, its writes, end and exit with times (ms) and
# tokens.  A node whose part of a fault needs its clients quiet (its
# domain left, or its anchors dropped) holds them between two grants.
# The checker (tests/cluster/lib/fault_check.awk, on one node at the end,
# over the whole history and the host's log): tokens rise at every grant of
# a key; no two live holders overlap; the storage accepted rising tokens
# and no lost update (it registers a holder's token at its read);
# no wait past its timeout + 10 s (a guest stop of up to 4 s, a program's
# start under TCG); no key held 10 s after its holder's lease
# ended or 60 s after its node was killed while a waiter waited; every
# grant ended.  Besides: the accounts' total is exact, every node's
# clients made transfers, no node lists a holder of the domain at the end,
# and every guest's clock stayed within CLOCK_BOUND_MS (500 ms) of the
# host's at the start (of each life) and at the end of the schedule (the
# skew and its drift are in the figures: issue 41, two guests once ran
# 6.3% slow; tests/cluster/lib/clock.sh).
# FAULT_POLICY (default enforce; make check-faults runs each schedule with
# enforce and with detect: tests/cluster/faults.sh) is the domain's policy;
# with detect (probe delay 100 ms) ordlock-xdetectd runs on every node in
# each life (its log shared/xd.NODE.LIFE.log) and must be on, and since
# every transfer takes its keys in one request, sorted by the kernel (the
# order rule), no cycle can exist: any deadlock victim (EDEADLK, the exit
# of the op records the failure's reason) is a false victim, a violation
# of the checker, and no daemon may have decided a round (issue 41).
#
# cluster-kills-a-node (the kill fault: run.sh restarts the node)
# cluster-timeout: 7200
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/clock.sh
. "$ORDLOCK_REPO/tests/cluster/lib/clock.sh"
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
lib=$ORDLOCK_REPO/tests/cluster/lib
dom=c_flt
param=/sys/module/ordlock_dlm/parameters/max_anchors
nfaults=${FAULTS:-12}
life=${ORDLOCK_LIFE:-1}
clients=${CLIENTS:-2}
accounts=3
start_stock=1000
LEASE_MS=10000  # the domain's max-hold: a transfer takes 2-6 s under TCG
WAIT_S=90       # client 1's wait (above the checker's 60 s after a kill)
WAIT_SHORT_S=5  # the other clients' (their waits time out)
kinds=${FAULT_KINDS:-restart reload lru pause gstop part kill}
policy=${FAULT_POLICY:-enforce}
delay=() # detect's probe delay (c_xdcycles')
[[ $policy != detect ]] || delay=(delay 100)
xdsock=/tmp/ordlock-xdetectd.sock
ms() { local t=${EPOCHREALTIME/./}; echo "${t:0:${#t}-3}"; }

# cluster on|off, as a point; EBUSY (the clients' last owner still being
# closed) is tried again for up to 10 s
cluster() {
	local out rc t
	for ((t = 0; t < 50; t++)); do
		if [[ $1 == on ]]; then
			out=$("$olc" domain $dom set policy "$policy" ${delay[@]+"${delay[@]}"} cluster on max-hold $LEASE_MS 2>&1)
		else
			out=$("$olc" domain $dom set cluster off 2>&1)
		fi
		rc=$?
		[[ $rc != 0 && ($out == *"has owners"* || $out == *"in progress"*) ]] || break
		sleep 0.2
	done
	point $rc "node$node: fault $i ($kind): domain $dom set cluster $1" || diag "$out"
}
# hold_clients / release_clients: this node's clients stop between grants
hold_clients() {
	local c
	touch "$shared/hold.$node"
	for _ in $(seq 3000); do
		for ((c = 1; c <= clients; c++)); do
			[[ -e $shared/paused.$node.$c ]] || { sleep 0.1; continue 2; }
		done
		return 0
	done
	diag "node$node: the clients did not stop"
	return 1
}
release_clients() { rm -f "$shared/hold.$node"; }
# host_fault KIND N MS: the host stops node N's guest (gstop) or cuts it off
# (part) for MS ms; waits (60 s) until done
host_fault() {
	local f=$control/.$1.$2
	rm -f "$f.done"
	echo "$3" >"$f.tmp" && mv "$f.tmp" "$f"
	for _ in $(seq 600); do [[ -e $f.done ]] && return 0; sleep 0.1; done
	return 1
}
# the fault's leader: a node that is not its target
leader() { ((node == (target == 1 ? 2 : 1))); }
flog() { echo "$(ms) 0 - fault kind=$kind node=$target i=$i${1:+ $1}" >>"$shared/faults.log"; }

# --- the seed and the schedule ---------------------------------------------
if ((node == 1 && life == 1)); then
	seed=${FAULT_SEED:-$(date +%s)}
	st=()
	for ((a = 1; a <= accounts; a++)); do st+=("$start_stock"); done
	for ((a = 1; a <= accounts; a++)); do st+=(0); done
	echo "${st[*]}" >"$shared/state"
	echo "$seed" >"$shared/seed.tmp" && mv "$shared/seed.tmp" "$shared/seed"
fi
for _ in $(seq 300); do [[ -s $shared/seed ]] && break; sleep 0.1; done
seed=$(cat "$shared/seed")
echo "$life" >"$shared/life.$node"
# the guest's clock against the host's: "SKEW ERR START_MS" (ms)
clock_sample() {
	local f=$shared/clock.$node.$life.$1 sk
	sk=$(clock_skew "$f.probe") && echo "$sk $(ms)" >"$f"
}
clock_sample start
diag "node$node (life $life): seed $seed (replay: FAULT_SEED=$seed), $nfaults faults"
schedule=$(awk -v s="$seed" -v n="$nfaults" -v nodes="$nodes" -v kinds="$kinds" 'BEGIN {
	srand(s); nk = split(kinds, k, " ")
	for (i = 1; i <= n; i++) printf "%s %d %d\n", k[int(rand() * nk) + 1], int(rand() * nodes) + 1, int(rand() * 1000) }')
start_i=0
if ((life > 1)); then
	start_i=$(cat "$shared/rejoin.$node" 2>/dev/null)
	i=$start_i kind=kill target=$node
	[[ -n $start_i ]]
	point $? "node$node: life $life: rejoins after fault $start_i" || start_i=$nfaults
fi
i=0 kind=start
cluster on
# detect: this life's ordlock-xdetectd, on once every node's is in the group
xdpid=
if [[ $policy == detect ]]; then
	xdlog=$shared/xd.$node.$life.log
	"$ORDLOCK_REPO/tools/xdetectd/ordlock-xdetectd" -s $xdsock 2>>"$xdlog" &
	xdpid=$!
	((life == 1)) && barrier xd-started
	for _ in $(seq 600); do grep -qs 'detection across nodes on' "$xdlog" && break; sleep 0.1; done
	grep -qs 'detection across nodes on' "$xdlog"
	point $? "node$node (life $life): ordlock-xdetectd on (detection across nodes)" ||
		tail -n 20 "$xdlog" | sed 's/^/# /'
fi
((life == 1)) && barrier on

# --- the clients -------------------------------------------------------------
client() {
	local c=$1 a b seq=0 op rc
	local r=$((seed + node * 7 + c + life * 1000))
	local hist=$shared/h.$node.$c w=$WAIT_S err=/tmp/c_faults.err.$c
	((c == 1)) || w=$WAIT_SHORT_S
	while [[ ! -e $shared/stop ]]; do
		if [[ -e $shared/hold.$node ]]; then
			touch "$shared/paused.$node.$c"
			while [[ -e $shared/hold.$node && ! -e $shared/stop ]]; do sleep 0.1; done
			rm -f "$shared/paused.$node.$c"
			continue
		fi
		r=$(((r * 1103515245 + 12345) % 2147483648))
		a=$((r % accounts + 1))
		b=$(((a + r / accounts % (accounts - 1)) % accounts + 1))
		seq=$((seq + 1))
		op=$node.$life.$c.$seq
		echo "$(ms) $node $op invoke keys=1:$a,1:$b timeout=$((w * 1000))" >>"$hist"
		"$olc" exec -d $dom -w "$w" -E 75 -x "1:$a" -x "1:$b" -- \
			bash "$lib/fault_xfer.sh" "$shared" $dom "$node" "$op" "$a" "$b" "$hist" 2>"$err"
		rc=$?
		# why the keys were not obtained: ordlockctl's message
		why=
		if ((rc == 75)); then
			case $(grep -m1 '^ordlockctl: ' "$err") in
			"ordlockctl: deadlock"*) why=" reason=deadlock" ;;
			"ordlockctl: timed out"*) why=" reason=timeout" ;;
			*) why=" reason=other" ;;
			esac
			# a victim's cycle, for the checker's message
			[[ $why != " reason=deadlock" ]] || sed "s/^/$op: /" "$err" >>"$shared/victims.$node"
		fi
		echo "$(ms) $node $op exit rc=$rc$why" >>"$hist"
	done
}
cpids=()
for ((c = 1; c <= clients; c++)); do
	client "$c" &
	cpids+=($!)
done
if ((life > 1)); then
	touch "$shared/back.$node"
	barrier "f$start_i.done"
fi

# --- the faults --------------------------------------------------------------
declare -A count=()
i=0
while read -r kind target r <&3; do
	i=$((i + 1))
	((i <= start_i)) && continue
	count[$kind]=$((${count[$kind]:-0} + 1))
	sleep 2 # the clients go on meanwhile
	barrier "f$i"
	leader && diag "$(date +%T.%N | cut -c1-12) fault $i: $kind (node$target)"
	case $kind in
	restart)
		leader && flog
		hold_clients
		cluster off
		barrier "f$i.off"
		cluster on
		barrier "f$i.on"
		release_clients
		;;
	reload)
		if ((node == target)); then
			hold_clients
			cluster off
			out=$(rmmod ordlock_dlm 2>&1)
			point $? "node$node: fault $i (reload): ordlock_dlm unloaded" || diag "$out"
			cluster on
			release_clients
		fi
		leader && flog
		;;
	lru)
		leader && flog
		hold_clients
		old=$(cat $param)
		echo 1 >$param
		"$olc" exec -q -d $dom -w 120 -x "9:$node" -- true
		point $? "node$node: fault $i (lru): its own key taken with max_anchors 1"
		barrier "f$i.dropped"
		echo "$old" >$param
		release_clients
		;;
	pause)
		if ((node == target)); then
			pausefor=$((2000 + r * 14))
			p=
			for _ in $(seq 600); do
				p=$(cat "$shared/holder.$node.1" 2>/dev/null) && [[ -n $p ]] && break
				sleep 0.05
			done
			if [[ -n $p ]] && kill -STOP "$p" 2>/dev/null; then
				flog "ms=$pausefor"
				sleep "$(awk -v m=$pausefor 'BEGIN { print m / 1000 }')"
				kill -CONT "$p"
				count[paused]=$((${count[paused]:-0} + 1))
			fi
		fi
		;;
	gstop | part)
		if leader; then
			d=$((1000 + r * 3))
			flog "ms=$d"
			host_fault "$kind" "$target" "$d"
			point $? "node$node: fault $i ($kind): node$target for $d ms"
		fi
		;;
	kill)
		if ((node == target)); then
			# killed meanwhile: this life ends here
			sleep 300
			point 1 "node$node: fault $i (kill): still alive 300 s later"
		elif leader; then
			sleep "$(awk -v m="$r" 'BEGIN { print m / 1000 }')"
			flog
			kill_node "$target"
			point $? "node$node: fault $i (kill): node$target killed"
			sleep 15 # the others go on without it
			echo "$i" >"$shared/rejoin.$target"
			t0=$(ms)
			touch "$control/.restart.$target"
			for _ in $(seq 1800); do [[ -e $shared/back.$target ]] && break; sleep 0.2; done
			[[ -e $shared/back.$target ]]
			point $? "node$node: fault $i (kill): node$target back in $(($(ms) - t0)) ms (booted, corosync, DLM, the domain, its clients)"
			rm -f "$shared/back.$target"
			rm -f "$control/.dead.$target"
			touch "$shared/kill$i.over"
		else
			# the third node: goes on until the target is back
			for _ in $(seq 3000); do [[ -e $shared/kill$i.over ]] && break; sleep 0.2; done
		fi
		;;
	esac
	barrier "f$i.done"
done 3<<<"$schedule"

touch "$shared/stop"
wait "${cpids[@]}"
clock_sample end
barrier stopped
# detect: no round decided, no victim (the daemon's counters, this life)
if [[ -n $xdpid ]]; then
	out=$(ORDLOCK_XDETECTD_SOCKET=$xdsock "$olc" cycles -j -d $dom 2>&1)
	jqok "$out" '.across_nodes.stats.decided == 0 and .across_nodes.stats.victims == 0'
	point $? "node$node (life $life): ordlock-xdetectd decided no round, chose no victim ($(jq -c '.across_nodes.stats | {probes_started, rounds, decided, aborted, victims}' <<<"$out" 2>/dev/null))" ||
		diag "$out"
	diag "node$node (life $life): xdetectd: $(jq -c '.across_nodes.stats' <<<"$out" 2>/dev/null)"
fi

# --- the checks ----------------------------------------------------------------
out=$("$olc" locks -j -d $dom 2>&1)
held=$(jq '[.. | objects | select(.role? == "holder")] | length' <<<"$out")
((held == 0))
point $? "node$node: no holder of $dom on this node after the clients stopped" || diag "$out"
made=$(cat "$shared"/h."$node".* 2>/dev/null | grep -c ' write result=accepted')
((made > 0))
point $? "node$node: its clients made $made transfers"
if ((node == 1)); then
	read -r -a st <"$shared/state"
	total=0
	for ((a = 0; a < accounts; a++)); do total=$((total + st[a])); done
	((total == accounts * start_stock))
	point $? "the accounts' total is $total (of $((accounts * start_stock)))"
	# the history: clients, key logs, storage, the faults, the host's
	# (none when no fault of the schedule was the host's)
	hostlog=$control/host.log
	[[ -f $hostlog ]] || hostlog=/dev/null
	awk -v lease_ms=$LEASE_MS -v wait_bound_ms=10000 -v gone_bound_ms=10000 -v kill_bound_ms=60000 \
		-f "$lib/fault_check.awk" "$shared"/h.* "$shared"/grants.* "$shared/store.log" \
		"$shared/faults.log" "$hostlog" >"$shared/check.out" 2>&1
	point $? "the checker finds no violation in the history ($(tail -n 1 "$shared/check.out"))" || {
		grep '^violation' "$shared/check.out" | head -n 20 | sed 's/^/# /'
		cat "$shared"/victims.* 2>/dev/null | head -n 20 | sed 's/^/# /'
	}
	# the clocks: every sample within the bound; the drift of each
	# node's last life from its start to the end (ppm of the host's)
	clocks=
	for f in "$shared"/clock.*.*.start; do
		[[ -f $f ]] || continue
		nl=${f#"$shared"/clock.} nl=${nl%.start}
		read -r s0 e0 t0 <"$f"
		s1=- e1=0 drift=
		if [[ -f $shared/clock.$nl.end ]]; then
			read -r s1 e1 t1 <"$shared/clock.$nl.end"
			drift=$(awk -v a="$s0" -v b="$s1" -v t="$((t1 - t0))" 'BEGIN { if (t > 0) printf ", %+.0f ppm", (b - a) / t * 1e6 }')
		fi
		ok=0
		for s in "$s0" "$s1"; do
			[[ $s == - ]] || ((${s#[+-]} <= ${CLOCK_BOUND_MS:-500})) || ok=1
		done
		point $ok "node ${nl%.*} (life ${nl#*.}): clock within ${CLOCK_BOUND_MS:-500} ms of the host's (start $s0 ms +-$e0, end $s1 ms +-$e1)"
		clocks+="${clocks:+, }node${nl%.*}.${nl#*.} $s0/$s1 ms$drift"
	done
	diag "clocks (guest - host, start/end): ${clocks:-none}"
	figures=$(awk '{ for (f = 5; f <= NF; f++) if ($f ~ /^kind=/) c[substr($f, 6)]++ }
		END { for (k in c) printf "%s %d, ", k, c[k] }' "$shared/faults.log")
	diag "policy $policy"
	diag "seed $seed: $nfaults faults (${figures%, })"
	diag "figures: $(tail -n 1 "$shared/check.out")"
fi
barrier checked
cluster_set $dom off
if [[ -n $xdpid ]]; then
	kill -TERM "$xdpid"
	wait "$xdpid"
	point $? "node$node (life $life): ordlock-xdetectd stopped"
fi
finish
