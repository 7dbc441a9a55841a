#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_leave_dead: a node whose DLM never recovers leaves its lockspaces within
# a bound instead of hanging in state D (docs/cluster.md, "Bounds").
# Every node makes a cluster domain (c_leaved) and a space of the backend
# seam (c_leavec: ordlock_cltest) and uses a key of each, so that it
# anchors them. Node 3 then holds 2:3 of the domain (an ordlockctl exec)
# and (5,3) of the space, sets ordlock_dlm's leave_timeout_ms to 5000 and
# has its dlm_controld killed (SIGKILL): the kernel stops the node's
# lockspaces ("dlm user daemon left"), and they never recover. Asserted
# on node 3, each operation run in the background and waited for BOUND_S
# at most (a hang is a failed point, not a hung case): the owner's exit
# (SIGKILL: its close releases its cluster key) returns; the seam's "leave" (which
# releases (5,3) and leaves) returns ETIMEDOUT; "domain c_leaved set
# cluster off" fails with ETIMEDOUT and the domain is local afterwards
# (a local exclusive grant of 1:1 works); the kernel log names both
# lockspaces as left by force; and at the end the harness unloads
# ordlock_dlm.ko and ordlock.ko on node 3 (no space pins them). On nodes
# 1 and 2 the cluster goes on: node 3 is removed from the lockspaces,
# 1:1 is granted and "cluster off" succeeds.
# Before the fix (main's kmod/, include/ and tests/cluster/kmod/ at
# 3590637 with this case, 6.1, run 2026-12-04): the seam's leave and
# "cluster off" hang in dlm_unlock() <- odlm_anchor_drop() <- odlm_leave();
# node 3 failed points 10-13 (neither returned within 60 s: 102798 and
# 99605 ms, and neither had ended when the case stopped) and 15, and the
# harness's unloads of ordlock_dlm.ko, ordlock_cltest.ko and ordlock.ko
# failed (the spaces pin them). With the fix: 15 of 15, the unloads pass.
#
# cluster-stops-dlm (run.sh runs this case last, at most one per run:
# node 3's DLM is gone for the rest of the run; node.sh skips its checks of
# the daemons for it after this case)
# cluster-timeout: 300
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh disable=SC2317 # seam_leave, exited: run by bounded()
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
BOUND_S=60
victim=3
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
dom=c_leaved
space=c_leavec
param=/sys/module/ordlock_dlm/parameters/leave_timeout_ms

if [[ ! -e $clt ]]; then
	echo "1..0 # SKIP ordlock_cltest.ko is not loaded"
	exit 0
fi
((nodes >= 3)) || { echo "1..0 # SKIP needs 3 nodes"; exit 0; }

# Run "$@" in the background, its output to $shared/NAME.$node.out and its
# exit status to $shared/NAME.$node.rc; wait BOUND_S for it at most.
# Returns 0 when it ended in time (its status in $rc), 1 when it did not.
bounded() {
	local name=$1 f i
	shift
	f=$shared/$name.$node
	("$@" >"$f.out" 2>&1; echo $? >"$f.rc") &
	for ((i = 0; i < BOUND_S * 5; i++)); do
		[[ -s $f.rc ]] && break
		sleep 0.2
	done
	rc=$(cat "$f.rc" 2>/dev/null)
	out=$(cat "$f.out" 2>/dev/null)
	[[ -n $rc ]]
}
# the seam's leave on the holder of FD 3, as bounded() runs it
seam_leave() { clt 3 "leave"; }
# until each process PID given has exited (gone, or a zombie not waited for yet)
exited() {
	local s p
	for p; do
		while s=$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null) && [[ $s != Z ]]; do
			sleep 0.2
		done
	done
}

exec 3<>"$clt"
clt 3 "join $space"
point $? "node$node: join $space"
cluster_set $dom on
barrier joined

# each node uses a key of each: it anchors them (the leave releases anchors)
"$olc" exec -d $dom -w 60 -x "1:$node" -- true
point $? "node$node: 1:$node of $dom taken and released (anchored)"
clt 3 "lock 5 $node ex 30000" && clt 3 "unlock 5 $node"
point $? "node$node: (5,$node) of $space taken and released (anchored)"
barrier anchored

if ((node == victim)); then
	"$olc" exec -d $dom -w 60 -x 2:3 -- sh -c "touch $shared/held3; exec sleep 900" &
	holder=$!
	for _ in $(seq 300); do [[ -e $shared/held3 ]] && break; sleep 0.1; done
	[[ -e $shared/held3 ]]
	point $? "node$node: holds 2:3 of $dom (ordlockctl exec)"
	clt 3 "lock 5 3 ex 30000"
	point $? "node$node: holds (5,3) of $space"
	# absent before the fix: the leave then has no bound to set
	echo 5000 >"$param" 2>/dev/null
	diag "leave_timeout_ms: $(cat "$param" 2>/dev/null || echo none)"

	# node.sh: this node's dlm_controld goes on purpose
	touch "$control/.dlm_stopped.$node"
	# dlm_controld may run as more than one process: kill them all
	read -ra pids <<<"$(pidof dlm_controld)"
	((${#pids[@]})) && kill -9 "${pids[@]}"
	point $? "node$node: dlm_controld (${pids[*]}) killed"
	for _ in $(seq 150); do
		dmesg | grep -q 'dlm user daemon left' && break
		sleep 0.2
	done
	dmesg | grep -q 'dlm user daemon left'
	point $? "node$node: the kernel stopped the lockspaces (dlm user daemon left)" ||
		diag "$(dmesg | tail -n 5)"

	# the owner's exit releases its cluster key (a release never waits)
	# the exec and its command (sleep) both have the owner's file, as
	# flock(1)'s child has the lock: both are killed
	read -ra kids <<<"$(cat /proc/"$holder"/task/*/children 2>/dev/null)"
	kill -9 "$holder" "${kids[@]}"
	bounded owner_exit exited "$holder" "${kids[@]}"
	point $? "node$node: the owner holding 2:3 (${kids[*]} under $holder) exits within ${BOUND_S}s"

	# the seam's leave: releases (5,3), leaves by force past 5 s
	t0=$(ms_now)
	bounded seam_leave seam_leave
	point $? "node$node: the seam's leave of $space returns within ${BOUND_S}s ($(($(ms_now) - t0)) ms)"
	[[ $rc != 0 && $out == *"timed out"* ]]
	point $? "node$node: ... with ETIMEDOUT (rc ${rc:-none}: $out)"

	t0=$(ms_now)
	bounded cluster_off "$olc" domain $dom set cluster off
	point $? "node$node: domain $dom set cluster off returns within ${BOUND_S}s ($(($(ms_now) - t0)) ms)"
	[[ $rc != 0 && $out == *"timed out"* ]]
	point $? "node$node: ... with ETIMEDOUT (rc ${rc:-none}: $out)"
	out=$("$olc" domain $dom 2>&1)
	diag "$out"
	bounded local_grant "$olc" exec -d $dom -w 10 -x 1:1 -- true
	[[ $rc == 0 ]]
	point $? "node$node: $dom is a local domain now: 1:1 granted (rc ${rc:-none}: $out)"
	log=$(dmesg | grep 'left by force')
	[[ $log == *"ordlock.$dom: left by force (timed out"* && $log == *"ordlock.$space: left by force (timed out"* ]]
	point $? "node$node: the kernel log names both lockspaces as left by force" ||
		diag "$(dmesg | grep -i ordlock | tail -n 8)"
	diag "$log"
	touch "$shared/victim_done"
else
	# the others go on: node 3 is removed from the lockspaces
	for _ in $(seq $((BOUND_S * 5 * 3))); do
		[[ -e $shared/victim_done ]] && break
		sleep 0.2
	done
	bounded grant "$olc" exec -d $dom -w 60 -x 1:1 -- true
	[[ $rc == 0 ]]
	point $? "node$node: 1:1 of $dom granted after node$victim lost its DLM (rc ${rc:-none}: $out)"
	clt 3 "leave"
	point $? "node$node: the seam's leave of $space"
	bounded cluster_off "$olc" domain $dom set cluster off
	[[ $rc == 0 ]]
	point $? "node$node: domain $dom set cluster off (rc ${rc:-none}: $out)"
fi
exec 3>&-
barrier end
finish
