#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_master_kill: fencing tokens of a cluster domain keep rising per key when
# the key's master node dies (issue 27, defect 3), both when that node holds
# the key and when it is idle.  Every grant's token is appended, under the
# key (in the command of ordlockctl exec), to the key's log in the shared
# directory, so the log's order is the order of the grants.
#
# - Key B = 1:2 (the idle master's): node 3 takes it first (so node 3
#   masters it), then nodes 1, 2 and 3 take and release it in turn: nodes 1
#   and 2 keep their NL anchors on it, and node 3's last token is above
#   every node's counter (each grant is above the one before, and nodes 1
#   and 2 make no other grant in the domain before the death).
# - Key A = 1:1 (the holder's): node 3 takes it first (it masters it) and
#   holds it exclusively; node 1 waits for it (120 s), node 2's try-lock is
#   refused (it keeps an anchor on it too).
# - Nodes 1 and 2 check, in the DLM's debugfs, that node 3 masters both
#   keys; node 1 has the host kill node 3 (SIGKILL of its qemu).
# - Node 1's wait is granted after the recovery; node 2 then takes B; then
#   node 1 takes B and node 2 takes A.  Asserted on nodes 1 and 2: each
#   token is above every token of the key's log before it (above the dead
#   holder's own for A, above the idle master's last for B).
# Before the fix (ordlock_dlm's anchors carried no value block: the DLM
# rebuilt the new master's value block from no lock, zero, and did not flag
# it invalid) the survivors' grants took their own counters: below.
#
# cluster-kills-a-node (run.sh runs this case last, at most one per run)
# cluster-timeout: 300
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
victim=3
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
dom=c_mkill
ls_all=/sys/kernel/debug/dlm/ordlock.${dom}_all
res_a=00000001:0000000000000001
res_b=00000001:0000000000000002

((nodes >= 3)) || { echo "1..0 # SKIP needs 3 nodes"; exit 0; }

# A key's log is a directory of the shared directory, a file per grant
# (numbered, written under the key: no O_APPEND over 9p). log_cmd DIR
# WHAT: the command of ordlockctl exec that adds "TOKEN NODE WHAT" to it.
log_cmd() {
	printf '%s' "d=$1; n=\$(ls \$d | wc -l); echo \"\$ORDLOCK_TOKEN $node $2\" >\$d/\$(printf %05d \$n)"
}
logdir() { echo "$shared/log.${1/:/_}"; }
log_cat() { cat "$(logdir "$1")"/* 2>/dev/null; }
# grant KEY WHAT: take KEY of $dom exclusively and log its token; the exit
# status of ordlockctl exec
grant() {
	"$olc" exec -d $dom -w 120 -x "$1" -- sh -c "$(log_cmd "$(logdir "$1")" "$2")"
}
# check_log KEY: a point: every token of KEY's log is above every one before
check_log() {
	local bad
	bad=$(log_cat "$1" | awk '{ if (NR > 1 && $1 <= max) { print "grant " NR " (" $0 ") not above " max " (" who ")"; exit } if ($1 > max) { max = $1; who = $0 } }' 2>&1)
	[[ -n $(log_cat "$1") && -z $bad ]]
	point $? "node$node: $1: $(log_cat "$1" | wc -l) grants, each token above every one before it${bad:+: $bad}"
}
# master RES: the node id of RES's master as this node's DLM sees it (0: this
# node), from the rsb line of the lockspace's debugfs
master() { awk -v r="$2" '$1 == "rsb" && $NF == r { print $3; exit }' "$1"; }
last_token() { log_cat "$1" | tail -n 1 | awk '{ print $1 }'; }

cluster_set $dom on
((node == 1)) && mkdir "$(logdir 1:1)" "$(logdir 1:2)"
barrier on

# B: node 3 first (it masters B), then 1, 2, 3 in turn
if ((node == victim)); then
	grant 1:2 first
	point $? "node$node: 1:2 granted first (this node masters it)"
fi
barrier b0
for turn in 1 2 3; do
	if ((node == turn)); then
		grant 1:2 "turn $turn"
		point $? "node$node: 1:2 granted and released"
	fi
	barrier "b$turn"
done

# A: node 3 holds it (and masters it); node 1 waits; node 2 tries
if ((node == victim)); then
	"$olc" exec -d $dom -w 60 -x 1:1 -- sh -c \
		"$(log_cmd "$(logdir 1:1)" held); touch $shared/held; sleep 900" &
	for _ in $(seq 600); do [[ -e $shared/held ]] && break; sleep 0.1; done
	[[ -e $shared/held ]]
	point $? "node$node: holds 1:1 (first user: masters it)"
fi
barrier held
if ((node == 2)); then
	out=$("$olc" exec -q -d $dom -n -x 1:1 -- true 2>&1)
	point $(($? != 1)) "node2: try-lock of 1:1 refused (exit 1)"
fi
if ((node == 1)); then
	grant 1:1 "waited" >"$shared/wait.err" 2>&1 &
	waiter=$!
	sleep 4 # queued at node 3 by then (the point below passes either way)
fi
if ((node != victim)); then
	for res in $res_a $res_b; do
		m=$(master "$ls_all" "$res")
		[[ $m == "$victim" ]]
		point $? "node$node: node$victim masters $res (the DLM's debugfs says ${m:-nothing})" ||
			diag "$(grep -A3 "$res" "$ls_all" 2>&1)"
	done
fi
barrier waiting

if ((node == victim)); then
	# the host kills this node now
	sleep 600
	exit 1
fi
before_a=$(last_token 1:1)
before_b=$(last_token 1:2)
diag "before the death: last token of 1:1 $before_a (node$victim holds it), of 1:2 $before_b"

if ((node == 1)); then
	[[ $(log_cat 1:1 | wc -l) == 1 ]]
	point $? "node1: its wait for 1:1 still pending while node$victim holds it"
	kill_node "$victim"
	point $? "node1: node$victim killed by the host"
	wait "$waiter"
	point $? "node1: 1:1 granted after node$victim's death" || diag "$(cat "$shared/wait.err")"
	t=$(last_token 1:1)
	((t > before_a))
	point $? "node1: its token of 1:1 ($t) is above the dead holder's ($before_a)"
fi
for _ in $(seq 300); do alive "$victim" || break; sleep 0.2; done
barrier dead

if ((node == 2)); then
	grant 1:2 "after the death"
	point $? "node2: 1:2 granted after node$victim's death"
	t=$(last_token 1:2)
	((t > before_b))
	point $? "node2: its token of 1:2 ($t) is above the idle master's last ($before_b)"
fi
barrier b_after
if ((node == 1)); then
	grant 1:2 "after, node1"
	point $? "node1: 1:2 granted"
fi
barrier b_after1
if ((node == 2)); then
	grant 1:1 "after, node2"
	point $? "node2: 1:1 granted"
fi
barrier a_after

check_log 1:1
check_log 1:2
diag "1:1: $(log_cat 1:1 | tr '\n' ';')"
diag "1:2: $(log_cat 1:2 | tr '\n' ';')"
barrier logs
cluster_set $dom off
finish
