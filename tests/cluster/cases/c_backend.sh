#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_backend: ordlock's backend seam and its DLM companion, across the nodes,
# through the test module ordlock_cltest (tests/cluster/kmod/): the first
# join loads ordlock_dlm on demand and pins it; exclusive keys exclude
# across nodes, shared ones do not; a try-lock against a remote holder
# fails with EAGAIN at once; a bounded wait against it times out
# (ETIMEDOUT; the cancel cleans up: the key is free for the next owner);
# a release grants the key to a waiter on another node; after the last
# leave the companion unloads and loads again on the next join. (TAP; run
# on every node at once by tests/cluster/node.sh.)
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
# the DLM's view of the lockspace, as diagnostics
dump() { dlm_tool lockdebug -sv "ordlock.$ls" 2>&1 | sed 's/^/# /'; }
dlm_refs() { awk '$1 == "ordlock_dlm" { print $3 }' /proc/modules; }

if [[ ! -e $clt ]]; then
	echo "1..0 # SKIP ordlock_cltest.ko is not loaded"
	exit 0
fi

ls=c1
exec 3<>"$clt"
clt 3 "join $ls"
point $? "node$node: join $ls (backend dlm)"
grep -q '^ordlock_dlm ' /proc/modules
point $? "node$node: ordlock_dlm was loaded on demand"
refs=$(dlm_refs)
((${refs:-0} >= 1))
point $? "node$node: ordlock_dlm is pinned while a space uses it (refcount ${refs:-none})"
grep -q '^ordlock_dlm ' /proc/modules && ! rmmod ordlock_dlm 2>/dev/null &&
	grep -q '^ordlock_dlm ' /proc/modules
point $? "node$node: rmmod ordlock_dlm refused while in use"
barrier joined

# node 1 holds (1,1) exclusive and (1,2) shared
if ((node == 1)); then
	clt 3 "lock 1 1 ex -1"
	point $? "node1: lock (1,1) ex"
	clt 3 "lock 1 2 sh -1"
	point $? "node1: lock (1,2) sh"
fi
barrier held
if ((node != 1)); then
	clt_expect 3 "lock 1 1 ex 30000 try" "Resource temporarily unavailable" \
		"node$node: try-lock of (1,1) held by node1: EAGAIN"
	clt_expect 3 "lock 1 1 sh -1 try" "Resource temporarily unavailable" \
		"node$node: shared try-lock of (1,1) held ex by node1: EAGAIN"
	start=$(date +%s%N)
	clt_expect 3 "lock 1 1 ex 1500" "Connection timed out" \
		"node$node: 1.5 s wait for (1,1) held by node1: ETIMEDOUT"
	ms=$((($(date +%s%N) - start) / 1000000))
	((ms >= 1400 && ms < 60000))
	point $? "node$node: ... after the deadline, not before and not hung (${ms} ms)"
	clt 3 "lock 1 2 sh 60000"
	point $? "node$node: shared (1,2) granted next to node1's shared hold"
	clt_expect 3 "lock 1 2 ex 30000 try" "Resource temporarily unavailable" \
		"node$node: exclusive try-lock of (1,2) against shared holders: EAGAIN"
fi
barrier tried

# node 2 waits for (1,1) (60 s bound); node 1 releases it: node 2 gets it
if ((node == 2)); then
	(
		exec 4<>"$clt"
		clt 4 "join $ls" || exit 1
		clt 4 "lock 1 1 ex 60000" >"$shared/n2.err"
		echo $? >"$shared/n2.rc"
		# keep it until node 3 has looked
		while [[ ! -e $shared/looked.3 ]]; do sleep 0.2; done
	) &
	waiter=$!
	sleep 3 # (long enough to be queued behind node 1; passes either way)
fi
barrier waiting
if ((node == 1)); then
	clt 3 "unlock 1 1"
	point $? "node1: unlock (1,1)"
fi
barrier released
if ((node == 2)); then
	for _ in $(seq 300); do
		[[ -e $shared/n2.rc ]] && break
		sleep 0.2
	done
	[[ $(cat "$shared/n2.rc" 2>/dev/null) == 0 ]]
	point $? "node2: (1,1) granted after node1's release ($(cat "$shared/n2.err" 2>/dev/null))" || dump
fi
barrier granted
if ((node == 3)); then
	clt_expect 3 "lock 1 1 ex 30000 try" "Resource temporarily unavailable" \
		"node3: try-lock of (1,1) now held by node2: EAGAIN"
fi
touch "$shared/looked.$node"
((node == 2)) && wait "$waiter"
barrier looked

# after the time-outs' cancels: the key is free for anyone
if ((node == 3)); then
	clt 3 "lock 1 1 ex 30000"
	point $? "node3: (1,1) granted once node2 let go (the cancelled waits left nothing)" || dump
	clt 3 "unlock 1 1"
fi
barrier reused

clt 3 "leave"
point $? "node$node: leave"
exec 3>&-
# the releases finish in the background: ordlock_dlm unloads once idle
for _ in $(seq 100); do
	rmmod ordlock_dlm 2>/dev/null && break
	sleep 0.2
done
! grep -q '^ordlock_dlm ' /proc/modules
point $? "node$node: ordlock_dlm unloads after the last leave"
barrier unloaded
exec 3<>"$clt"
clt 3 "join $ls"
point $? "node$node: join again (ordlock_dlm loaded again)"
barrier rejoined
if ((node == 1)); then
	clt 3 "lock 7 7 ex -1"
	point $? "node1: lock (7,7) ex after the reload"
fi
barrier held2
if ((node != 1)); then
	clt_expect 3 "lock 7 7 ex 30000 try" "Resource temporarily unavailable" \
		"node$node: exclusion across nodes after the reload (EAGAIN)"
fi
barrier "done"
exec 3>&-
finish
