#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_token_restart: fencing tokens of a cluster domain keep rising per key
# when the DLM forgets the key's value block without any death (issue 27,
# defect 4). Every grant's token is appended, under the key (in the command
# of ordlockctl exec), to the key's log in the shared directory: the log's
# order is the order of the grants.
#
# - Every node leaves and re-joins: nodes 1, 2 and 3 take 1:1 of domain
#   c_trst in turn (node 3's token is then above every node's counter),
#   then every node sets "cluster off" (the lockspace is gone with its value
#   blocks) and "cluster on" again; then nodes 1, 2, 3 take 1:1 in turn.
# - The anchors dropped everywhere: in domain c_tlru with ordlock_dlm's
#   max_anchors at 1 on every node, nodes 1, 2, 3 take 2:1 in turn, then
#   each node takes a key of its own (2:1N: its anchor of 2:1 goes, and
#   2:1's resource is gone from its DLM), then nodes 1, 2, 3 take 2:1 again.
# Asserted: in each key's log every token is above every one before it.
# Before the fix the first grant after took the node's own counter (node 1:
# its own last token plus one or two, at most node 3's).
#
# cluster-timeout: 300
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
param=/sys/module/ordlock_dlm/parameters/max_anchors

# A key's log is a directory of the shared directory, a file per grant
# (numbered, written under the key: no O_APPEND over 9p)
logdir() { echo "$shared/log.$1.${2/:/_}"; }
log_cat() { cat "$(logdir "$1" "$2")"/* 2>/dev/null; }
# grant DOM KEY WHAT: take KEY of DOM exclusively and add "TOKEN NODE
# WHAT" to its log under it; the exit status of ordlockctl exec
grant() {
	local d
	d=$(logdir "$1" "$2")
	mkdir -p "$d"
	"$olc" exec -d "$1" -w 120 -x "$2" -- sh -c \
		"n=\$(ls $d | wc -l); echo \"\$ORDLOCK_TOKEN $node $3\" >$d/\$(printf %05d \$n)"
}
check_log() {
	local bad
	bad=$(log_cat "$1" "$2" | awk '{ if (NR > 1 && $1 <= max) { print "grant " NR " (" $0 ") not above " max " (" who ")"; exit } if ($1 > max) { max = $1; who = $0 } }' 2>&1)
	[[ -n $(log_cat "$1" "$2") && -z $bad ]]
	point $? "node$node: $1 $2: $(log_cat "$1" "$2" | wc -l) grants, each token above every one before it${bad:+: $bad}"
}
# in_turn DOM KEY WHAT: nodes 1..N take KEY one after the other
in_turn() {
	local t
	for ((t = 1; t <= nodes; t++)); do
		if ((node == t)); then
			grant "$1" "$2" "$3"
			point $? "node$node: $1 $2 granted ($3)"
		fi
		barrier "$1.$3.$t"
	done
}
cluster() {
	local out
	out=$("$olc" domain "$1" set cluster "$2" 2>&1)
	point $? "node$node: domain $1 set cluster $2" || diag "$out"
}

# --- every node leaves and re-joins ---------------------------------------
dom=c_trst
cluster $dom on
barrier on
in_turn $dom 1:1 before
cluster $dom off
barrier off
[[ ! -e /sys/kernel/dlm/ordlock.$dom ]]
point $? "node$node: the lockspace ordlock.$dom is left"
cluster $dom on
barrier on-again
in_turn $dom 1:1 after
check_log $dom 1:1
diag "$(log_cat $dom 1:1 | tr '\n' ';')"
barrier restart-checked
cluster $dom off

# --- the anchors dropped on every node ------------------------------------
dom=c_tlru
ls_all=/sys/kernel/debug/dlm/ordlock.${dom}_all
cluster $dom on
old=$(cat $param)
echo 1 >$param && [[ $(cat $param) == 1 ]]
point $? "node$node: max_anchors 1 (was $old)"
barrier lru
in_turn $dom 2:1 before
grant $dom "2:1$node" own >/dev/null
point $? "node$node: its own key 2:1$node granted"
barrier own
gone=1
for _ in $(seq 100); do
	grep -q ' 00000002:0000000000000001$' "$ls_all" || { gone=0; break; }
	sleep 0.1
done
point $gone "node$node: 2:1 is gone from this node's DLM (its anchor dropped)" ||
	diag "$(cat "$ls_all" 2>&1)"
barrier dropped
in_turn $dom 2:1 after
check_log $dom 2:1
diag "$(log_cat $dom 2:1 | tr '\n' ';')"
echo "$old" >$param && [[ $(cat $param) == "$old" ]]
point $? "node$node: max_anchors $old again"
barrier lru-checked
cluster $dom off
finish
