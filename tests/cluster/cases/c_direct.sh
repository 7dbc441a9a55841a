#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_direct: ordlock_dlm's direct requests (dlm_lock() in the caller, no
# work item) and the recovery tracking that keeps them out of a recovering
# lockspace, through the test module ordlock_cltest and ordlock_dlm's
# debug messages (dynamic debug): a key's first lock on a node goes
# through the work item (it takes the key's NL anchor first), the next
# one is direct; a node leaving the lockspace and joining again makes the
# others recover (recover_prep, recover_done seen), and the next lock is
# direct again (the tracking was reset by recover_done); a direct try-lock
# against a remote holder fails with EAGAIN, a direct 1.5 s wait times out
# after its deadline and leaves nothing behind (the key is granted to that
# node once the holder let go, and refused to a third). Releases: a
# granted lock is released directly (dlm_unlock() in the caller), and a
# release while the lockspace recovers goes through the work item instead
# and still completes: node 2 stops its dlm_controld (SIGSTOP) and node 3
# leaves, so node 1's lockspace stops (recover_prep) and stays stopped
# (its dlm_controld waits for node 2's); node 1's release returns at once,
# its work item's dlm_unlock() waits, and once node 2's daemon goes on
# (SIGCONT) and the recovery ends, the key is free for node 2. The
# releases, whose unlock ASTs free the locks, let the space be left and
# the companion unload. The lockspace's ASTs: on 6.12 called at once
# (DLM_LSFL_SOFTIRQ, compat.h), so a direct lock of a key this node
# masters has its AST inside dlm_lock(); on 6.1 by the DLM's callback
# worker (the join says which). (TAP, all nodes at once.)
#
# cluster-timeout: 300
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
ls=cdirect
res="00000007:0000000000000001"
# the kernel log since mark NAME (written by mark NAME)
mark() { echo "c_direct: mark $1" >/dev/kmsg; }
since() { dmesg | sed -n "/c_direct: mark $1\$/,\$p"; }
# logged LINE-REGEX MARK: ordlock_dlm logged a line matching since MARK
logged() { since "$2" | grep -Eq "ordlock_dlm: ordlock\.$ls: $1"; }
dump() { since "$1" | grep ordlock_dlm | tail -8 | sed 's/^/# /'; }
# by_work MARK: a request of (7,1) was made by the work item since MARK
by_work() { logged "$res: requested by the work item" "$1"; }
# recovered MARK [MEMBERS]: wait (20 s) for a recover_done with MEMBERS
# (3) members after a recover_prep since MARK
recovered() {
	local i
	for ((i = 0; i < 100; i++)); do
		since "$1" | sed -n "/ordlock_dlm: ordlock\\.$ls: recovery begins/,\$p" |
			grep -Eq "ordlock_dlm: ordlock\\.$ls: recovered, generation [0-9]+, ${2:-3} members" &&
			return 0
		sleep 0.2
	done
	return 1
}
# poll_logged LINE-REGEX MARK: wait (20 s) until logged LINE-REGEX MARK
poll_logged() {
	local i
	for ((i = 0; i < 100; i++)); do
		logged "$1" "$2" && return 0
		sleep 0.2
	done
	return 1
}

if [[ ! -e $clt ]]; then
	echo "1..0 # SKIP ordlock_cltest.ko is not loaded"
	exit 0
fi
exec 3<>"$clt"
clt 3 "join $ls"
point $? "node$node: join $ls" || finish
ddc=/sys/kernel/debug/dynamic_debug/control
[[ -e $ddc ]] || ddc=/proc/dynamic_debug/control
echo 'module ordlock_dlm +p' >"$ddc"
grep -Eq '\[ordlock_dlm\]odlm_lock =[a-z_]*p' "$ddc"
point $? "node$node: ordlock_dlm's debug messages on ($ddc)"
# the lockspace's callbacks (compat.h's ORDLOCK_DLM_LSFL_CB): called at
# once on 6.12 (DLM_LSFL_SOFTIRQ), by the DLM's callback worker on 6.1
case $(uname -r) in
6.1.*) cbs="by the DLM's callback worker" at_once=0 ;;
*) cbs="called at once \\(DLM_LSFL_SOFTIRQ\\)" at_once=1 ;;
esac
dmesg | grep -Eq "ordlock_dlm: ordlock\.$ls: joined; ASTs $cbs"
point $? "node$node: $ls joined with the ASTs ${cbs//\\/} ($(uname -r))"
barrier joined
sleep 1 # the last join's recovery ends on every node

if ((node == 1)); then
	mark first
	clt 3 "lock 7 1 ex -1" && clt 3 "unlock 7 1"
	point $? "node1: lock + unlock (7,1)"
	by_work first && logged "$res ex \\(work\\): status 0" first
	point $? "node1: the first lock of (7,1) went through the work item (anchor)" || dump first
	logged "$res: released directly" first && ! logged "$res: released by the work item" first
	point $? "node1: ... its release was direct (the work's request flushed)" || dump first
	mark second
	clt 3 "lock 7 1 ex -1" && clt 3 "unlock 7 1"
	point $? "node1: lock + unlock (7,1) again"
	logged "$res ex: status 0" second && ! by_work second
	point $? "node1: the second was direct (no work item)" || dump second
	if ((at_once)); then
		logged "$res ex: status 0 \\(AST in the call\\)" second
		point $? "node1: ... its AST came inside dlm_lock() (DLM_LSFL_SOFTIRQ: no switch to the DLM's worker)" || dump second
	fi
	logged "$res: released directly" second && ! logged "$res: released by the work item" second
	point $? "node1: ... and so was its release (dlm_unlock() in the caller)" || dump second
	poll_logged "$res: unlocked, status" second
	point $? "node1: ... whose AST came (it frees the lock)" || dump second
fi
mark recovery
barrier direct

# node 3 leaves the lockspace and joins again: nodes 1 and 2 recover twice
if ((node == 3)); then
	clt 3 "leave"
	point $? "node3: leave $ls"
	exec 3>&-
	sleep 1
	exec 3<>"$clt"
	clt 3 "join $ls"
	point $? "node3: join $ls again"
fi
barrier rejoined
if ((node != 3)); then
	recovered recovery
	point $? "node$node: recover_prep, then recover_done with 3 members (node3 left, then joined)" || dump recovery
fi
if ((node == 1)); then
	mark after
	clt 3 "lock 7 1 ex -1"
	point $? "node1: lock (7,1) after the recoveries (held on)"
	logged "$res ex: status 0" after && ! by_work after
	point $? "node1: ... direct again: recover_done ended the work item's turn" || dump after
fi
barrier held

# node 2 against node 1's hold: a try (work item, anchor), a direct try, a
# direct bounded wait
if ((node == 2)); then
	mark tries
	clt_expect 3 "lock 7 1 ex 30000 try" "Resource temporarily unavailable" \
		"node2: try-lock of (7,1) held by node1: EAGAIN"
	clt_expect 3 "lock 7 1 ex 30000 try" "Resource temporarily unavailable" \
		"node2: again: EAGAIN"
	[[ $(since tries | grep -c "ordlock\.$ls: $res: requested by the work item") == 1 ]] &&
		[[ $(since tries | grep -c "ordlock\.$ls: $res ex try: status -11") == 1 ]] &&
		[[ $(since tries | grep -c "ordlock\.$ls: $res ex try (work): status -11") == 1 ]]
	point $? "node2: ... the first by the work item (anchor), the second direct" || dump tries
	mark wait
	start=$(ms_now)
	clt_expect 3 "lock 7 1 ex 1500" "Connection timed out" \
		"node2: a 1.5 s wait for (7,1): ETIMEDOUT"
	ms=$(($(ms_now) - start))
	((ms >= 1400 && ms < 30000))
	point $? "node2: ... after its deadline, not before, not hung (${ms} ms)"
	! by_work wait
	point $? "node2: ... and it was a direct request" || dump wait
fi
barrier tried
if ((node == 1)); then
	clt 3 "unlock 7 1"
	point $? "node1: unlock (7,1)"
fi
barrier released
if ((node == 2)); then
	clt 3 "lock 7 1 ex 30000"
	point $? "node2: (7,1) granted once node1 let go (the timed-out wait left nothing)"
fi
barrier granted
if ((node == 3)); then
	clt_expect 3 "lock 7 1 ex 30000 try" "Resource temporarily unavailable" \
		"node3: try-lock of (7,1) held by node2: EAGAIN"
fi
barrier looked

# A release during a recovery: node 2's dlm_controld stopped, node 3 leaves
res2="00000007:0000000000000002"
if ((node == 1)); then
	clt 3 "lock 7 2 ex -1"
	point $? "node1: lock (7,2) (held on)"
fi
mark stall
barrier held2
if ((node == 2)); then
	# the daemon (the oldest: it forks a helper)
	dlmc=$(pgrep -o -x dlm_controld)
	# whatever happens below, the daemon goes on
	trap 'kill -CONT $dlmc 2>/dev/null' EXIT
	kill -STOP "$dlmc"
	point $? "node2: dlm_controld ($dlmc) stopped"
fi
barrier frozen
if ((node == 3)); then
	clt 3 "leave"
	point $? "node3: leave $ls (the others recover)"
	exec 3>&-
fi
if ((node == 1)); then
	poll_logged "recovery begins" stall && ! logged "recovered" stall
	point $? "node1: recover_prep (node3 left), no recover_done: node2's daemon is stopped" || dump stall
	start=$(ms_now)
	clt 3 "unlock 7 2"
	point $? "node1: unlock (7,2) during the recovery"
	ms=$(($(ms_now) - start))
	((ms < 5000))
	point $? "node1: ... returned at once (${ms} ms), not after the recovery"
	poll_logged "$res2: released by the work item" stall && ! logged "$res2: released directly" stall
	point $? "node1: ... released by the work item, not directly" || dump stall
	sleep 1
	! logged "recovered" stall && ! logged "$res2: unlocked, status" stall
	point $? "node1: ... whose dlm_unlock() waits: still recovering, no AST yet" || dump stall
fi
barrier released2
if ((node == 2)); then
	kill -CONT "$dlmc"
	point $? "node2: dlm_controld goes on"
	trap - EXIT
fi
if ((node == 1)); then
	recovered stall 2
	point $? "node1: recover_done with 2 members" || dump stall
	poll_logged "$res2: unlocked, status" stall
	point $? "node1: ... then the release's AST came (the lock freed)" || dump stall
fi
barrier recovered2
if ((node == 2)); then
	clt 3 "lock 7 2 ex 30000 try" && clt 3 "unlock 7 2"
	point $? "node2: try-lock of (7,2) granted: node1's release reached the cluster"
fi
barrier tried2
# node 3 left already: its leave below has nothing to do
((node == 3)) && exec 3<>"$clt"

clt 3 "leave"
point $? "node$node: leave"
exec 3>&-
echo 'module ordlock_dlm -p' >"$ddc"
# the releases (unlock ASTs free the locks) end: the space is left, the
# companion unloads
for _ in $(seq 100); do
	rmmod ordlock_dlm 2>/dev/null && break
	sleep 0.2
done
! grep -q '^ordlock_dlm ' /proc/modules
point $? "node$node: ordlock_dlm unloads after the leave"
! dmesg | grep -q "ordlock_dlm: ordlock\.$ls: leaving waits"
point $? "node$node: the leave did not wait for locks left in the cluster"
barrier finished
finish
