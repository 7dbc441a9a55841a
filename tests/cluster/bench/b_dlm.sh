#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_dlm: acquire + release of one exclusive key, locally and remotely
# mastered, through the DLM's own calls and through ordlock, timed in the
# same run (make bench-cluster; reports, does not fail).
#
# Node 1 measures; node 2 masters the remote keys (it holds an NL lock on
# each, so their resources live on node 2 and node 1's every request is a
# round trip to it).  A local key is one no other node touches (its
# resource is mastered on node 1 after the first round, which is not timed).
# Timed in the kernel by ordlock_cltest (tests/cluster/kmod/):
#   dlm      dlm_lock(EX) + AST, dlm_unlock() + AST, in a lockspace of its own
#   backend  ordlock_dlm's lock + unlock (the seam a cluster domain uses),
#            in the space of domain "clbench" (lockspace ordlock.clbench)
# ROUNDS rounds (LROUNDS for the local key), alternating dlm and backend;
# the median of each is
# reported with its ratio to the DLM's (targets: local <= 1.2x, remote
# <= the DLM + 10%).  Each round also times the local key's backend lock +
# unlock with ordlock_dlm's direct_release off (every release through its
# clean-up work item, as before the direct releases): the difference in
# the same run.  The cluster domain through the ioctl, from user space,
# comes in b_domain.
#
# cluster-timeout: 600
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
ROUNDS=${BENCH_ROUNDS:-5}
# the local key's rounds (short, and the noisier under a loaded host)
LROUNDS=${BENCH_LROUNDS:-15}
N_LOCAL=${BENCH_N_LOCAL:-2000}
N_REMOTE=${BENCH_N_REMOTE:-100}

if [[ ! -e $clt ]]; then
	echo "1..0 # SKIP ordlock_cltest.ko is not loaded"
	exit 0
fi

# node 2: the master of the remote keys (2,1), in both lockspaces
if ((node == 2)); then
	exec 3<>"$clt" 5<>"$clt"
	clt 3 "rawjoin clbench_raw" && clt 3 "rawhold 2 1"
	point $? "node2: masters (2,1) of the DLM's lockspace (NL held)"
	clt 5 "rawjoin ordlock.clbench" && clt 5 "rawhold 2 1"
	point $? "node2: masters (2,1) of ordlock.clbench (NL held)"
fi
barrier mastered
if ((node == 1)); then
	exec 3<>"$clt" 4<>"$clt"
	clt 3 "rawjoin clbench_raw"
	point $? "node1: joined the DLM's lockspace clbench_raw"
	clt 4 "join clbench"
	point $? "node1: joined domain clbench's space through the backend"
	declare -A ns
	# The harness loads ordlock_dlm with its debug messages on (diagnostics);
	# off while timing: the DLM's own calls print nothing either
	ddc=/sys/kernel/debug/dynamic_debug/control
	echo 'module ordlock_dlm -p' >"$ddc" 2>/dev/null &&
		diag "ordlock_dlm's debug messages off while timing"
	dr=/sys/module/ordlock_dlm/parameters/direct_release
	# one run: ns per acquire + release
	one() { # FD COMMAND
		local b
		clt "$1" "$2" || return 1
		b=$(grep '^bench ' <&"$1")
		awk '{ printf "%d\n", $3 / $2 }' <<<"$b"
	}
	for ((r = 1; r <= LROUNDS || r <= ROUNDS; r++)); do
		for what in local remote; do
			if [[ $what == local ]]; then ((r <= LROUNDS)) || continue; else ((r <= ROUNDS)) || continue; fi
			if [[ $what == local ]]; then key="1 1" cnt=$N_LOCAL; else key="2 1" cnt=$N_REMOTE; fi
			v=$(one 3 "rawbench $key $cnt") || { point 1 "dlm $what round $r"; continue; }
			ns[dlm-$what]+="$v "
			v=$(one 4 "bench $key $cnt") || { point 1 "backend $what round $r"; continue; }
			ns[backend-$what]+="$v "
			[[ $what == local ]] || continue
			echo N >"$dr"
			v=$(one 4 "bench $key $cnt")
			echo Y >"$dr"
			[[ -n $v ]] || { point 1 "backend (work releases) $what round $r"; continue; }
			ns[work-$what]+="$v "
		done
	done
	median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
	for what in local remote; do
		for how in dlm backend; do
			diag "bench $how $what: ${ns[$how-$what]}(ns per acquire + release)"
		done
		d=$(median "${ns[dlm-$what]}")
		b=$(median "${ns[backend-$what]}")
		ratio=$(awk -v b="$b" -v d="$d" 'BEGIN { if (d > 0) printf "%.2f", b / d; else print "?" }')
		if [[ $what == local ]]; then target="<= 1.20x"; else target="<= 1.10x"; fi
		diag "bench $what-mastered: dlm $((d / 1000)) us, ordlock backend $((b / 1000)) us, ratio ${ratio}x (target $target)"
		point 0 "node1: $what-mastered acquire + release: dlm ${d} ns, backend ${b} ns (${ratio}x; target $target)"
		[[ $what == local ]] || continue
		diag "bench work local: ${ns[work-local]}(ns per acquire + release, direct_release off)"
		w=$(median "${ns[work-local]}")
		ratio=$(awk -v b="$w" -v d="$d" 'BEGIN { if (d > 0) printf "%.2f", b / d; else print "?" }')
		diag "bench local-mastered, releases by the work item: ordlock backend $((w / 1000)) us, ratio ${ratio}x"
	done
	echo 'module ordlock_dlm +p' >"$ddc" 2>/dev/null
	clt 4 "leave"
fi
barrier measured
finish
