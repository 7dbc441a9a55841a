#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# faults.sh -- make check-faults: c_faults (tests/cluster/cases/c_faults.sh)
# over several seeded schedules, one fresh three-node cluster each
# (tests/cluster/run.sh c_faults), then a summary: per seed, the result, the
# time, the faults of each kind, the checker's figures and the guests'
# clock skew against the host's (node 1's TAP diagnostics).  Exits non-zero if any schedule failed.
#
# Environment: FAULT_SEEDS (default "1 2 3 4 5"; FAULT_SEED=N alone: that
# schedule only, to replay it), FAULTS (per schedule, default 40),
# FAULT_KINDS (default: every kind), FAULT_POLICIES (default "enforce
# detect": each schedule runs once with each policy of the domain, a fresh
# cluster each; detect with ordlock-xdetectd on every node, where any
# deadlock victim is a false one: issue 41), CLUSTER_TOKEN_MS (make
# check-faults: 5000), and run.sh's own.  Each run is bounded:
# CLUSTER_TIMEOUT defaults to 900 s + 90 s per fault.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
seeds=${FAULT_SEED:-${FAULT_SEEDS:-1 2 3 4 5}}
export FAULTS=${FAULTS:-40}
export CLUSTER_TIMEOUT=${CLUSTER_TIMEOUT:-$((900 + FAULTS * 90))}
# the VM lock for all the schedules (run.sh takes it per run otherwise,
# and another user's run could come between two schedules)
exec {vmlock}>/tmp/ordlock-vm.lock
if ! flock -n "$vmlock"; then
	echo "faults: waiting for the VM lock (/tmp/ordlock-vm.lock)"
	flock "$vmlock"
fi
export ORDLOCK_VM_LOCK_HELD=1
rc=0
summary=()
t_all=$(date +%s)
for seed in $seeds; do
	for policy in ${FAULT_POLICIES:-enforce detect}; do
		t0=$(date +%s)
		echo "faults: seed $seed, $FAULTS faults, policy $policy (bound ${CLUSTER_TIMEOUT}s)"
		FAULT_SEED=$seed FAULT_POLICY=$policy bash "$here/run.sh" c_faults
		r=$?
		((r == 0)) || rc=1
		res=$repo/tests/build/results/cluster
		figs=$(sed -n 's/^# \(seed [0-9]*: .*faults (.*)\)$/\1/p; s/^# figures: //p; s/^# \(clocks (.*\)$/\1;/p' "$res/node1/c_faults.tap" 2>/dev/null | tr '\n' ' ')
		summary+=("seed $seed, $policy: $( ((r == 0)) && echo passed || echo FAILED) in $(($(date +%s) - t0)) s ($(readlink "$res")): ${figs:-no figures}")
	done
done
echo "faults: ${#summary[@]} schedules in $(($(date +%s) - t_all)) s"
printf 'faults: %s\n' "${summary[@]}"
exit "$rc"
