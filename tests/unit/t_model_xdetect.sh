#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_model_xdetect -- the model check of the detection of deadlocks across
# nodes (tests/model/xdetect.pml, docs/cluster.md "Deadlocks across
# nodes") by spin: each configuration is generated (spin -a), compiled (cc)
# and searched exhaustively (./pan: the assertions "never false" and "at
# most one victim per cycle", invalid end states: an owner left waiting
# for ever, i.e. a cycle never broken; with neither timeouts nor deaths,
# exactly one victim); any error fails its point.  Then every planted bug
# of the model is searched in a configuration that exposes it, and each
# must be found by the property it breaks (the checker can fail).
# XDETECT_FULL=1 adds the configurations with faults searched with each
# node at its own pace (about 2 minutes more).  TAP; skips without spin
# (tests/install-deps.sh installs it).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here" && git rev-parse --show-toplevel 2>/dev/null) || repo=$(cd "$here/../.." && pwd)
[[ -f $repo/tests/model/xdetect.pml ]] || repo=$(cd "$here/../../.." && pwd)
model=$repo/tests/model/xdetect.pml
skip() { echo "1..0 # SKIP $*"; exit 0; }
command -v spin >/dev/null || skip "spin is not installed (make deps)"
[[ -f $model ]] || { echo "not ok 1 - $model is missing"; echo "1..1"; exit 1; }
n=0
failed=0
point() { # point STATUS DESCRIPTION
	n=$((n + 1))
	if [[ $1 == 0 ]]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$model" "$work/xdetect.pml"

# search DEFINES...: pan's output in $work/pan.txt (its verdict lines
# printed); status 0 when the search completed without an error, 1 when it
# found one, 2 when it could not run or did not complete (memory, depth)
search() {
	rm -f "$work"/pan "$work"/pan.[bchmt] "$work"/*.trail
	(cd "$work" && spin -a "$@" xdetect.pml >spin.out 2>&1) || { cat "$work/spin.out"; return 2; }
	(cd "$work" && cc -O1 -w -DSAFETY -DCOLLAPSE -DMEMLIM=1024 -DVECTORSZ=1024 -o pan pan.c 2>cc.out) ||
		{ cat "$work/cc.out"; return 2; }
	(cd "$work" && ./pan -m100000 >pan.txt 2>&1)
	grep -E '^pan:|errors:|states, stored|Search not completed' "$work/pan.txt" | sed 's/^/# /'
	grep -q 'errors: [1-9]' "$work/pan.txt" && return 1
	grep -q 'Search not completed' "$work/pan.txt" && return 2
	grep -q 'errors: 0' "$work/pan.txt" && return 0
	return 2
}

# The protocol: every configuration searched completely, no error
cfgs=(
	"-DNN=2|a 2-node cycle, each node delivering at its own pace"
	"-DNN=2 -DLOCKSTEP -DTIMEOUTS=1 -DROUNDS=2|a 2-node cycle, a wait that times out at any step and waits again (a new generation)"
	"-DNN=2 -DLOCKSTEP -DKILLS=1|a 2-node cycle, a node killed at any step (corosync notices later, the DLM frees its keys)"
	"-DNN=3 -DLOCKSTEP|a 3-node ring"
	"-DMIXED -DLOCKSTEP|two owners on node 0 (a local edge) and one on node 1"
)
if [[ ${XDETECT_FULL:-0} == 1 ]]; then
	cfgs+=(
		"-DNN=2 -DTIMEOUTS=1 -DROUNDS=2|a 2-node cycle at each node's pace, a wait that times out and waits again"
		"-DNN=2 -DKILLS=1|a 2-node cycle at each node's pace, a node killed"
		"-DNN=2 -DLOCKSTEP -DTIMEOUTS=1 -DROUNDS=2 -DKILLS=1|a 2-node cycle, a timeout and a death"
	)
fi
for c in "${cfgs[@]}"; do
	t0=$SECONDS
	# shellcheck disable=SC2086
	search ${c%%|*}
	point $? "no error: ${c#*|} (${c%%|*}, $((SECONDS - t0)) s)"
done

# Planted bugs: each must be found, by the property it breaks
bugs=(
	"-DBUG_NO_CONFIRM -DNN=2 -DTIMEOUTS=1|cycok|no confirming round: the initiator decides when its probe comes back"
	"-DBUG_NO_GEN -DNN=2 -DTIMEOUTS=1 -DROUNDS=2|cycok|the confirmation checks that the owner waits, not the wait's generation"
	"-DBUG_NOT_ALIKE -DNN=2|vict|the victim rule not applied alike: each node fails its own youngest"
	"-DBUG_NOT_ALIKE -DNN=3 -DLOCKSTEP|vict|the same in a 3-node ring"
	"-DBUG_IGNORE_DEATH -DNN=2 -DLOCKSTEP -DKILLS=1|cycok|a node of the cycle that left is dropped from the round, not aborting it"
	"-DBUG_DLM_WAITS_ONLY -DMIXED -DLOCKSTEP|invalid end state|only waits in the DLM probe: a cycle closed by a local wait is never found"
)
for c in "${bugs[@]}"; do
	defs=${c%%|*} rest=${c#*|}
	want=${rest%%|*} what=${rest#*|}
	# shellcheck disable=SC2086
	search $defs
	rc=$?
	[[ $rc == 1 ]] && grep -q "$want" "$work/pan.txt"
	point $? "planted bug found ($want): $what"
done
echo "1..$n"
((failed == 0))
