#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fault_xfer.sh DIR DOMAIN NODE OP A B HIST -- one transfer of c_faults
# (tests/cluster/cases/c_faults.sh), run by "ordlockctl exec -x 1:A -x 1:B"
# under both keys (ORDLOCK_TOKEN: the grant's fencing token).  DIR is the
# case's shared directory.  Records in HIST (the client's history) and in
# DIR/grants.K (each key's grant log, written under the key), in the
# format of tests/cluster/lib/fault_check.awk:
# - ok, then for each key its grant with the op whose holder marker
#   (DIR/own.K) was still there (prev), and this op's marker;
# - the accounts read through the storage (DIR/state: "V1 V2 V3 F1 F2
#   F3", the three accounts' stock and the highest token the storage has
#   seen for each key), under its own mutex (DIR/store.lck): a token below
#   either key's fence is fenced, else both fences rise to it
#   ("registered", in DIR/store.log);
# - the write: refused by the holder itself if check-token says its grant
#   is stale, else given to the storage, which (under its mutex) accepts
#   it only if the token is still at least both keys' fences, and then
#   writes A's stock - 1 and B's + 1 from the values read under the keys
#   (two holders that overlap lose an update: the total changes) in one
#   rename, and logs it;
# - the markers removed, then check-token again (stale=1: the grant was
#   revoked by then), "end".
# The storage's mutex left by a holder that died (its node killed: the
# control directory's .dead.N, or its life over: DIR/life.N) is broken.
set -u
dir=$1 dom=$2 node=$3 op=$4 a=$5 b=$6 hist=$7
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
control=${ORDLOCK_CONTROL:-$dir/..}
tok=$ORDLOCK_TOKEN
# the time in ms, without a program (the guests are slow to start one)
ms() { local t=${EPOCHREALTIME/./}; echo "${t:0:${#t}-3}"; }

echo "$(ms) $node $op ok token=$tok" >>"$hist"
# the holder's pid, for the pause fault (op: NODE.LIFE.CLIENT.SEQ)
cl=${op#*.*.} cl=${cl%%.*}
echo $$ >"$dir/holder.$node.$cl"
for k in "$a" "$b"; do
	{ prev=$(<"$dir/own.$k"); } 2>/dev/null || prev=-
	echo "$op" >"$dir/own.$k"
	echo "$(ms) $node $op grant key=1:$k token=$tok prev=${prev:--}" >>"$dir/grants.$k"
done
life=$(<"$dir/life.$node")
# store_lock / store_unlock: the storage's own mutex
store_lock() {
	local i on ol
	for ((i = 0; ; i++)); do
		mkdir "$dir/store.lck" 2>/dev/null && break
		if ((i % 50 == 49)); then
			read -r on ol <"$dir/store.lck/owner" 2>/dev/null
			if [[ -n ${on:-} ]] && { [[ -e $control/.dead.$on ]] ||
				[[ $(<"$dir/life.$on") != "$ol" ]]; } 2>/dev/null; then
				rm -rf "$dir/store.lck"
			fi
		fi
		((i < 3000)) || { echo "$(ms) $node $op write result=storage-stuck" >>"$hist"; exit 3; }
		sleep 0.02
	done
	echo "$node $life" >"$dir/store.lck/owner"
}
store_unlock() { rm -rf "$dir/store.lck"; }
# The read goes through the storage too and registers the token (the
# keys' fences rise to it): a holder revoked after its last check and
# before its write is then fenced even if the next holder has only read
# (a storage that fenced writes alone accepted such a write after the next
# holder's read, and the next holder's write lost it: seed 1's total 3002)
store_lock
read -r -a st <"$dir/state"
if ((tok >= st[a + 2] && tok >= st[b + 2])); then
	x=${st[a - 1]} y=${st[b - 1]}
	st[a + 2]=$tok
	st[b + 2]=$tok
	echo "${st[*]}" >"$dir/state.$op"
	mv "$dir/state.$op" "$dir/state"
	res=registered
else
	res=read-fenced
fi
echo "$(ms) $node $op store result=$res token=$tok keys=1:$a,1:$b" >>"$dir/store.log"
store_unlock
sleep 0.05

"$olc" check-token -d "$dom" "1:$a" "$tok" >/dev/null 2>&1
live=$?
if [[ $res == read-fenced ]]; then
	res=fenced
elif ((live == 0)); then
	store_lock
	read -r -a cur <"$dir/state"
	if ((tok >= cur[a + 2] && tok >= cur[b + 2])); then
		cur[a - 1]=$((x - 1))
		cur[b - 1]=$((y + 1))
		echo "${cur[*]}" >"$dir/state.$op"
		mv "$dir/state.$op" "$dir/state"
		res=accepted
	else
		res=fenced
	fi
	echo "$(ms) $node $op store result=$res token=$tok keys=1:$a,1:$b" >>"$dir/store.log"
	store_unlock
else
	res=refused # (check-token's exit: 1 stale, else its own failure)
	((live == 1)) || res=refused-$live
fi
echo "$(ms) $node $op write result=$res" >>"$hist"
for k in "$a" "$b"; do
	{ [[ $(<"$dir/own.$k") == "$op" ]]; } 2>/dev/null && rm -f "$dir/own.$k"
done
rm -f "$dir/holder.$node.$cl"
"$olc" check-token -d "$dom" "1:$a" "$tok" >/dev/null 2>&1
stale=$?
echo "$(ms) $node $op end stale=$stale" >>"$hist"
