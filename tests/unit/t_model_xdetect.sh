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
# node at its own pace, hash-compacted (about 1 minute more).  TAP; skips without spin
# (tests/install-deps.sh installs it).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here" && git rev-parse --show-toplevel 2>/dev/null) || repo=$(cd "$here/../.." && pwd)
[[ -f $repo/tests/model/xdetect.pml ]] || repo=$(cd "$here/../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../harness/spin.sh
. "$repo/tests/harness/spin.sh"
spin_setup xdetect.pml "-DSAFETY -DCOLLAPSE -DMEMLIM=1024 -DVECTORSZ=1024" 100000

# The protocol: every configuration searched completely, no error
cfgs=(
	"-DNN=2|a 2-node cycle, each node delivering at its own pace"
	"-DNN=2 -DLOCKSTEP -DTIMEOUTS=1 -DROUNDS=2|a 2-node cycle, a wait that times out at any step and waits again (a new generation)"
	"-DNN=2 -DLOCKSTEP -DKILLS=1|a 2-node cycle, a node killed at any step (corosync notices later, the DLM frees its keys)"
	"-DNN=3 -DLOCKSTEP|a 3-node ring"
	"-DMIXED -DLOCKSTEP|two owners on node 0 (a local edge) and one on node 1"
	"-DSOFT -DLOCKSTEP|a soft edge across nodes (a request queued ahead, seen on the key's master)"
)
# XDETECT_FULL=1: 7 to 21 million states each, hash-compacted (HC4: 4
# bytes a state, a state may rarely be taken for another and left out)
full=(
	"-DNN=2 -DTIMEOUTS=1 -DROUNDS=2|a 2-node cycle at each node's pace, a wait that times out and waits again"
	"-DNN=2 -DKILLS=1|a 2-node cycle at each node's pace, a node killed"
	"-DNN=2 -DLOCKSTEP -DTIMEOUTS=1 -DROUNDS=2 -DKILLS=1|a 2-node cycle, a timeout and a death"
)
[[ ${XDETECT_FULL:-0} == 1 ]] && cfgs+=("${full[@]/#/HC4 }")
for c in "${cfgs[@]}"; do
	t0=$SECONDS
	flags=$spin_cflags
	[[ $c == "HC4 "* ]] && c=${c#HC4 } spin_cflags="-DSAFETY -DHC4 -DMEMLIM=1024 -DVECTORSZ=1024"
	# shellcheck disable=SC2086
	spin_search ${c%%|*}
	point $? "no error: ${c#*|} (${c%%|*}, $((SECONDS - t0)) s)"
	spin_cflags=$flags
done

# Planted bugs: each must be found, by the property it breaks
bugs=(
	"-DBUG_NO_CONFIRM -DNN=2 -DTIMEOUTS=1|cycok|no confirming round: the initiator decides when its probe comes back"
	"-DBUG_NO_GEN -DNN=2 -DTIMEOUTS=1 -DROUNDS=2|cycok|the confirmation checks that the owner waits, not the wait's generation"
	"-DBUG_NOT_ALIKE -DNN=2|vict|the victim rule not applied alike: each node fails its own youngest"
	"-DBUG_NOT_ALIKE -DNN=3 -DLOCKSTEP|vict|the same in a 3-node ring"
	"-DBUG_IGNORE_DEATH -DNN=2 -DLOCKSTEP -DKILLS=1|cycok|a node of the cycle that left is dropped from the round, not aborting it"
	"-DBUG_DLM_WAITS_ONLY -DMIXED -DLOCKSTEP|invalid end state|only waits in the DLM probe: a cycle closed by a local wait is never found"
	"-DBUG_SOFT_NO_MASTER -DSOFT -DLOCKSTEP -DFLIPS|cycok|a soft edge across nodes not confirmed by the key's master (its queue's order changed)"
)
for c in "${bugs[@]}"; do
	defs=${c%%|*} rest=${c#*|}
	want=${rest%%|*} what=${rest#*|}
	# shellcheck disable=SC2086
	spin_search $defs
	rc=$?
	[[ $rc == 1 ]] && grep -q "$want" "$spin_work/pan.txt"
	point $? "planted bug found ($want): $what"
done
echo "1..$n"
((failed == 0))
