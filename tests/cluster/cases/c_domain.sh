#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_domain: cluster domains (issue 19) through the real interfaces, on
# every node at once: "ordlockctl domain NAME set cluster on" (netlink
# DOMAIN_SET; the first one loads ordlock_dlm on demand), the view says
# "cluster on"; then ordlockctl exec (the ioctls of libordlock):
# - a key held exclusively on node 1 is refused to a try-lock on the
#   other nodes (EAGAIN, exit 1) and on node 1 by another owner;
# - a 2 s wait for it on another node times out after its deadline;
# - rollback: a request for a free key and the held one times out, and the
#   free key it took (locally and in the DLM) is free again for a third
#   node;
# - a waiter on node 2 gets the key only after node 1 released it;
# - exclusion: 3 nodes x 20 increments of one counter on the shared
#   directory (9p without caching), each under the key: the total is exact;
# - fencing tokens of one key rise across nodes although the nodes' local
#   counters differ by 2,000,000;
# - policy detect is taken in the cluster domain, and says it reaches this
#   node only without ordlock-xdetectd (issue 41); cluster off again.
# (TAP; run on every node at once by tests/cluster/node.sh.)
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
dom=cd1
ms() { echo $((($(date +%s%N)) / 1000000)); }
dump() { dlm_tool lockdebug -sv "ordlock.$dom" 2>&1 | sed 's/^/# /'; }

# node 3 creates the domain 2 s after the others: its local token counter
# starts about 2,000,000 above theirs (tokens are seeded by the clock in
# microseconds), so only the cluster's value block keeps tokens rising
((node == 3)) && sleep 2
out=$("$olc" domain $dom set cluster on 2>&1)
point $? "node$node: domain $dom set cluster on ($out)"
[[ $out == *"cluster on"* ]]
point $? "node$node: the reply says cluster on"
grep -q '^ordlock_dlm ' /proc/modules
point $? "node$node: ordlock_dlm was loaded on demand"
out=$("$olc" -j domain $dom 2>&1)
[[ $out == *'"cluster":true'* || $out == *'"cluster": true'* ]]
point $? "node$node: the JSON view says \"cluster\": true ($out)"
out=$("$olc" domain $dom set policy detect 2>&1)
point $? "node$node: a cluster domain takes policy detect ($out)"
[[ $out == *"detect: this node only (no ordlock-xdetectd: cycles across nodes end by their timeouts)"* ]]
point $? "node$node: ... and says it reaches this node only without ordlock-xdetectd"
out=$("$olc" -j domain $dom 2>&1)
[[ $out == *'"xdetect"'* && $out == *'"off"'* && $out == *'"no ordlock-xdetectd"'* ]]
point $? "node$node: the JSON view's xdetect: off, no ordlock-xdetectd ($out)"
out=$("$olc" domain $dom set policy enforce 2>&1)
point $? "node$node: policy enforce again ($out)"
barrier on

# node 1 holds 1:1 and 1:2 exclusively until told
if ((node == 1)); then
	"$olc" exec -d $dom -x 1:1 -x 1:2 -- \
		sh -c "touch $shared/held1; while [ ! -e $shared/release1 ]; do sleep 0.1; done; touch $shared/released1" &
	holder=$!
	for _ in $(seq 300); do [[ -e $shared/held1 ]] && break; sleep 0.1; done
	[[ -e $shared/held1 ]]
	point $? "node1: holds 1:1 and 1:2"
	"$olc" exec -q -d $dom -n -x 1:1 -- true
	point $(($? != 1)) "node1: another local owner's try-lock of 1:1: refused (exit 1)"
fi
barrier held

if ((node != 1)); then
	out=$("$olc" exec -d $dom -n -x 1:1 -- true 2>&1)
	point $(($? != 1)) "node$node: try-lock of 1:1 held on node1: refused (exit 1: $out)"
fi
if ((node == 2)); then
	t0=$(ms)
	out=$("$olc" exec -d $dom -w 2 -x 1:2 -- true 2>&1)
	rc=$?
	el=$(($(ms) - t0))
	point $((rc != 1)) "node2: 2 s wait for 1:2 held on node1: timed out (exit 1: $out)"
	((el >= 1900 && el < 60000))
	point $? "node2: ... after the deadline, not before, not hung (${el} ms)"
	# rollback: 1:0 is free, 1:2 is not: the request gives 1:0 back
	out=$("$olc" exec -d $dom -w 2 -x 1:0 -x 1:2 -- true 2>&1)
	point $(($? != 1)) "node2: 1:0 + 1:2 times out on 1:2 (exit 1: $out)"
fi
barrier rolledback
if ((node == 3)); then
	"$olc" exec -d $dom -w 20 -x 1:0 -- true
	point $? "node3: 1:0 is free again after node2's failed request (no lock left behind)" || dump
fi
barrier reused

# node 2 waits for 1:1; node 1 releases; node 2's command runs only after
# node 1's command ended (which marks released1 last)
if ((node == 2)); then
	"$olc" exec -d $dom -w 120 -x 1:1 -- sh -c "test -e $shared/released1" &
	waiter=$!
	sleep 3 # queued behind node 1 by then (passes either way)
fi
barrier waiting
if ((node == 1)); then
	touch "$shared/release1"
	wait "$holder"
	point $? "node1: the holder's command ended, the keys are released"
fi
if ((node == 2)); then
	wait "$waiter"
	point $? "node2: 1:1 granted after node1 released it, not before" || dump
fi
barrier handed

# exclusion: 20 increments per node of one counter, each under key 2:1
((node == 1)) && echo 0 >"$shared/counter"
barrier counter
bad=0
for _ in $(seq 20); do
	"$olc" exec -d $dom -w 120 -x 2:1 -- \
		sh -c "v=\$(cat $shared/counter); sleep 0.01; echo \$((v + 1)) >$shared/counter" || bad=1
done
point $bad "node$node: 20 increments under 2:1"
barrier counted
total=$(cat "$shared/counter")
[[ $total == $((20 * nodes)) ]]
point $? "node$node: the counter is exactly $((20 * nodes)) (got $total)"
barrier read

# fencing tokens of key 2:9 rise across nodes: node 3 (the high counter)
# first, then 1, 2 and 3 again; each token above the one before
prev=0
i=0
for who in 3 1 2 3; do
	i=$((i + 1))
	if ((node == who)); then
		"$olc" exec -d $dom -w 60 -x 2:9 -- sh -c "echo \$ORDLOCK_TOKEN >$shared/tok.$i"
		tok=$(cat "$shared/tok.$i")
		((tok > prev))
		point $? "node$node: grant $i of 2:9: token $tok above the last one, $prev"
	fi
	barrier "tok$i"
	prev=$(cat "$shared/tok.$i")
done

out=$("$olc" domain $dom set cluster off 2>&1)
point $? "node$node: domain $dom set cluster off ($out)"
[[ $out != *"cluster on"* ]]
point $? "node$node: the reply no longer says cluster on"
barrier off

finish
