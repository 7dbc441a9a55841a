#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# node.sh RESULTS_DIR -- one node of the make check-cluster cluster; runs in
# each guest, chrooted into the host's root (read-only), started by
# tests/vm/init.sh (GUEST= in run.env).  The node's number comes from the
# kernel command line (ordnode=N).  RESULTS_DIR is shared read-write, without
# caching, by all the guests:
#   nodeN/            this node's files (written only by it):
#     harness.tap     TAP of the node's harness checks
#     NAME.tap NAME.err NAME.rc NAME.time   each test program's output
#     NAME.views      ordlock's debugfs views after a program that failed
#     NAME.dmesg NAME.dlm   after one that timed out: the kernel log with
#                     the blocked tasks, the DLM's lockspaces and locks
#     corosync.log dlm_controld.log dmesg.txt timing
#     kmemleak.txt kmemleak-loaded.txt   DEBUG=1 (the debug kernel of make
#                     check-cluster-debug): kmemleak's scan after the
#                     modules were unloaded, and one just before
#     done            written last
#   shared/           the tests' meeting point (cluster barriers, shared
#                     files): shared/NAME/ for test NAME
#
# Steps: the clock from the host's, link-local address on the bridge,
# writable copies of the cluster daemons' directories, corosync (knet)
# until quorate, dlm.ko and dlm_controld until it answers, ordlock.ko (and
# the companion, when built),
# a barrier with the other nodes, the test programs (all nodes run the same
# program at the same time), a last barrier (no node leaves the membership
# while another still tests), teardown.  Progress lines on the console start
# with "ordlock-cl:".
set -uo pipefail # no -e: a failing step is recorded, the run goes on

results=$1
# shellcheck source=/dev/null
. "$results/run.env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TMPDIR=/tmp LC_ALL=C.UTF-8 ORDLOCK_REPO=$REPO
cd "$REPO" || exit 1
# shellcheck source-path=SCRIPTDIR source=../harness/kcheck.sh
. "$REPO/tests/harness/kcheck.sh"

node=$(sed -n 's/.*ordnode=\([0-9]*\).*/\1/p' /proc/cmdline)
[[ -n $node ]] || { echo "ordlock-cl: FATAL: no ordnode= on the command line"; exit 1; }
out=$results/node$node
mkdir -p "$out"
# A node the host killed and booted again (run.sh: shared/.restart.N) is in
# its second (or later) life: its harness points say so, the programs that
# ended in an earlier life are not run again, and the one that was running
# (the case that killed it) runs again with ORDLOCK_LIFE set: it knows how
# to rejoin (c_faults).
life=1
[[ -f $results/restarted.$node ]] && life=$(($(wc -l <"$results/restarted.$node") + 1))
t_start=$(cut -d' ' -f1 /proc/uptime)

say() { echo "ordlock-cl: node$node: $*"; }
npoint=0
lifename=
((life > 1)) && lifename=" (life $life)"
harness() { # harness STATUS NAME: one TAP point into harness.tap
	npoint=$((npoint + 1))
	if [[ $1 == 0 ]]; then
		echo "ok $npoint - $2$lifename"
	else
		echo "not ok $npoint - $2$lifename"
	fi >>"$out/harness.tap"
	return "$1"
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }
timing() { echo "$1 $(uptime_s)" >>"$out/timing"; }
timing userspace

# wait_for SECONDS CMD...: poll CMD every 0.5 s until it succeeds
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS < end)) || return 1
		sleep 0.5
	done
}

# barrier NAME: wait until every node reached NAME (files in shared/); a
# node the host killed on a case's request (shared/.dead.N) is not waited for
barrier() {
	local i n
	touch "$results/shared/.bar.$1.$node"
	for ((i = 0; i < BARRIER_TIMEOUT * 5; i++)); do
		n=0
		for ((j = 1; j <= NODES; j++)); do
			if [[ -e $results/shared/.bar.$1.$j || -e $results/shared/.dead.$j ]]; then
				n=$((n + 1))
			fi
		done
		((n == NODES)) && return 0
		sleep 0.2
	done
	return 1
}

# kmod NAME: modprobe NAME; nothing on a kernel without /lib/modules (the
# debug kernel of make check-cluster-debug: all built in)
kmod() {
	[[ -d /lib/modules/$(uname -r) ]] || return 0
	modprobe "$1"
}

# DEBUG=1, the debug kernel: its checkers must really be on, the boot's
# leak suspects are not ours, the hang guards of the tests are stretched
kmemleak=/sys/kernel/debug/kmemleak
if [[ ${DEBUG:-0} == 1 ]]; then
	export ORDLOCK_WATCHDOG_SCALE=${ORDLOCK_WATCHDOG_SCALE:-3}
	export BARRIER_S=${BARRIER_S:-$BARRIER_TIMEOUT}
	missing=
	[[ $(dmesg) == *'KernelAddressSanitizer initialized'* ]] || missing+=" KASAN"
	[[ -e /proc/lockdep ]] || missing+=" lockdep"
	[[ -w $kmemleak ]] || missing+=" kmemleak"
	[[ -d /sys/kernel/debug/debug_objects ]] || missing+=" DEBUG_OBJECTS"
	[[ -z $missing ]]
	harness $? "node$node: debug kernel: KASAN, lockdep, kmemleak, DEBUG_OBJECTS on" ||
		say "debug kernel without:$missing"
fi

# --- the clock: the host's (issue 41) ----------------------------------------
# The guest's clock starts from the emulated RTC (whole seconds) and its
# rate came from a TSC calibrated at boot on a loaded host (two guests once
# ran 6.3% slow): run.sh gives the guests clocksource=hpet (QEMU's HPET
# counts the host's time), and the clock is set here, once, before any
# daemon starts (never again: the token rule assumes clocks that do not
# step back), from the host's clock (tests/cluster/lib/clock.sh). The skew
# after it is a harness point (within CLOCK_BOUND_MS, 500 ms); c_faults
# measures it again at the start and end of its schedule.
# shellcheck source-path=SCRIPTDIR source=lib/clock.sh
. "$REPO/tests/cluster/lib/clock.sh"
# (no process substitution: the guest has no /dev/fd)
read -r skew0 _ <<<"$(clock_skew "$out/.clock")"
if [[ -n ${skew0:-} ]]; then
	python3 -c 'import sys, time
time.clock_settime(time.CLOCK_REALTIME, time.clock_gettime(time.CLOCK_REALTIME) - float(sys.argv[1]) / 1000)' "$skew0" ||
		date -s "@$(awk -v s="$skew0" -v t="$EPOCHREALTIME" 'BEGIN { printf "%.3f", t - s / 1000 }')" >/dev/null
fi
read -r skew1 err1 <<<"$(clock_skew "$out/.clock")"
rm -f "$out/.clock"
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
[[ -n ${skew1:-} ]] && ((${skew1#[+-]} <= ${CLOCK_BOUND_MS:-500}))
harness $? "node$node: clock set from the host's (${cs:-?}; skew ${skew0:-?} ms before, ${skew1:-?} ms after, +-${err1:-?} ms)"

# --- network: the guest's one interface, a link-local address ---------------
kmod virtio_net
ip link set lo up
ifc=
for _ in $(seq 50); do
	for f in /sys/class/net/*; do
		[[ ${f##*/} != lo ]] && ifc=${f##*/} && break
	done
	[[ -n $ifc ]] && break
	sleep 0.1
done
addr=$NET_PREFIX.$node
ip link set "$ifc" up && ip addr add "$addr/24" dev "$ifc"
harness $? "node$node: $addr on $ifc"

# --- writable copies of the daemons' directories -----------------------------
ok=0
for d in /etc/corosync /etc/dlm /var/lib/corosync /var/log /var/lib/dlm; do
	if [[ ! -d $d ]]; then
		say "$d missing in the host root (tests/install-deps.sh --cluster)"
		ok=1
		continue
	fi
	mkdir -p "/run/rw$d"
	cp -a "$d/." "/run/rw$d/" 2>/dev/null
	mount --bind "/run/rw$d" "$d" || ok=1
done
harness $ok "node$node: writable /etc/corosync /etc/dlm /var/lib/corosync /var/log /var/lib/dlm"
# libdlm opens /dev/misc/dlm-control
ln -sfn /dev /dev/misc

# --- corosync ----------------------------------------------------------------
{
	echo "totem {"
	echo "	version: 2"
	echo "	cluster_name: $CLUSTER_NAME"
	echo "	transport: knet"
	echo "	crypto_cipher: none"
	echo "	crypto_hash: none"
	echo "	token: $TOKEN_MS"
	echo "}"
	echo "nodelist {"
	for ((j = 1; j <= NODES; j++)); do
		echo "	node {"
		echo "		ring0_addr: $NET_PREFIX.$j"
		echo "		name: node$j"
		echo "		nodeid: $j"
		echo "	}"
	done
	echo "}"
	echo "quorum {"
	echo "	provider: corosync_votequorum"
	((NODES == 2)) && echo "	two_node: 1"
	echo "}"
	echo "logging {"
	echo "	to_stderr: yes"
	echo "	to_syslog: no"
	echo "	to_logfile: no"
	echo "}"
} >/etc/corosync/corosync.conf
timing corosync
corosync -f >"$out/corosync.log" 2>&1 &
corosync_pid=$!
# Quorate with every node a member, not just a majority: dlm_controld and
# the lockspace joins below start from the whole membership.  A node that
# joins corosync only after the others started their DLM turns the
# harness's lockspace join into a recovery that can outlast the join's
# wait (seen in CI on 6.12-rt: one guest's knet link came up 55 s late,
# and a peer's join, begun with two of the three members, failed).
all_members() {
	# each look bounded: CI once failed this wait (180 s) on a node whose
	# quorum.txt, written right after, showed all 3 members quorate
	timeout 10 corosync-quorumtool -s | awk -v n="$NODES" '
		/^Quorate:/ { q = ($2 == "Yes") }
		/^Total votes:/ { v = $3 }
		END { exit !(q && v == n) }'
}
wait_for "$QUORUM_TIMEOUT" all_members
harness $? "node$node: corosync quorate, all $NODES nodes members (${QUORUM_TIMEOUT}s)" && timing quorate
corosync-quorumtool -s >"$out/quorum.txt" 2>&1

# --- the DLM -----------------------------------------------------------------
kmod dlm
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
dlm_controld --foreground 1 --enable_fencing 0 --protocol tcp \
	>"$out/dlm_controld.log" 2>&1 &
dlm_pid=$!
wait_for 60 dlm_tool status
harness $? "node$node: dlm_controld answers" && timing dlm
# A lockspace of the harness, kept until the end: releasing a node's last
# lockspace shuts the DLM's connections down, and when the other nodes
# leave at the same moment that waits in dlm_midcomms_shutdown() for
# minutes (seen on 6.1); the tests' own leaves are then never the last.
wait_for 120 dlm_tool join ordlock_harness
harness $? "node$node: the harness's lockspace joined"

# --- ordlock ------------------------------------------------------------------
# the debug kernel: what the boot and the daemons' start left unreferenced
# is not ours (scanned once and forgotten)
if [[ ${DEBUG:-0} == 1 && -w $kmemleak ]]; then
	echo scan >"$kmemleak"
	echo clear >"$kmemleak"
fi
echo "ordlock-cl: begin" >/dev/kmsg
insmod_out=$(insmod "$KO" 2>&1)
loaded=$?
harness $loaded "node$node: ordlock.ko loaded" || say "insmod: $insmod_out"
# The companion, when built: loaded on demand by ordlock.ko's
# request_module("ordlock_dlm").  The guest's /lib/modules is the host's, so
# modprobe would not find it there: a modprobe of our own goes first.  The
# kernel runs it in init's root, the initramfs (a writable rootfs), where
# this chroot is /newroot (tests/vm/init.sh): the outer script there
# enters the chroot and runs the inner one.
companion=${KO%/*}/ordlock_dlm.ko
if [[ -f $companion && -w /proc/sys/kernel/modprobe && -d /proc/1/root/newroot ]]; then
	{
		echo '#!/bin/bash'
		echo '# request_module() of the test guest: ordlock_dlm from the tree'
		echo 'for a in "$@"; do'
		echo '	case $a in'
		echo '	ordlock_dlm)'
		# shellcheck disable=SC2016 # the script's own $(uname -r)
		echo '		[ ! -d /lib/modules/$(uname -r) ] || /sbin/modprobe dlm || exit 1'
		echo "		exec /sbin/insmod $(printf %q "$companion") cluster=$CLUSTER_NAME dyndbg=+p"
		echo '		;;'
		echo '	esac'
		echo 'done'
		echo 'exec /sbin/modprobe "$@"'
	} >/run/ordlock-modprobe
	printf '#!/bin/sh\nexec /bin/chroot /newroot /run/ordlock-modprobe "$@"\n' \
		>/proc/1/root/ordlock-modprobe
	chmod 0755 /run/ordlock-modprobe /proc/1/root/ordlock-modprobe
	echo /ordlock-modprobe >/proc/sys/kernel/modprobe
fi
export ORDLOCK_COMPANION=$companion
# the test module that drives the backend seam (c_backend)
if [[ $loaded == 0 && -f ${CLTEST_KO:-} ]]; then
	insmod "$CLTEST_KO"
	harness $? "node$node: ordlock_cltest.ko loaded"
fi

barrier ready
harness $? "node$node: all $NODES nodes ready" && timing ready

# --- the programs -------------------------------------------------------------
export ORDLOCK_NODE=$node ORDLOCK_NODES=$NODES ORDLOCK_CLUSTER=$CLUSTER_NAME
export BENCH_PROFILE=${BENCH_PROFILE:-0}
export BENCH_ICOUNT=${ICOUNT:-0}
export FAULT_SEED=${FAULT_SEED:-} FAULTS=${FAULTS:-} FAULT_KINDS=${FAULT_KINDS:-} FAULT_POLICY=${FAULT_POLICY:-}
export ORDLOCK_LIFE=$life
export ORDLOCK_NET_PREFIX=$NET_PREFIX ORDLOCK_CONTROL=$results/shared
for name in $TESTS; do
	prog=${PROGDIR:-$REPO/tests/build/cluster}/$name
	# a later life: what ended before is not run again; the earlier
	# life's output of the one that was running is kept aside
	if ((life > 1)); then
		[[ -f $out/$name.rc ]] && continue
		[[ -f $out/$name.tap ]] && mv "$out/$name.tap" "$out/$name.life$((life - 1)).tap"
	fi
	export ORDLOCK_SHARED=$results/shared/$name
	mkdir -p "$ORDLOCK_SHARED"
	# the case's own bound: a line "cluster-timeout: SECONDS" in its source
	bound=$(sed -n 's/.*cluster-timeout: *\([0-9][0-9]*\).*/\1/p;T;q' \
		"${CASEDIR:-$REPO/tests/cluster/cases}/$name".* 2>/dev/null)
	# (on the debug kernel three times that)
	[[ -n $bound && ${DEBUG:-0} == 1 ]] && bound=$((bound * 3))
	bound=${bound:-$TEST_TIMEOUT}
	# every node starts a program together: their barriers count on it
	barrier "start-$name" || say "start-$name: the other nodes did not come"
	say "run $name (bound ${bound}s)"
	start=$(date +%s)
	# a program stuck in the kernel survives SIGKILL: wait for it only
	# 30 s past its timeout (rc 200), as tests/vm/guest.sh does
	(cd /tmp && exec timeout -k 10 "$bound" "$prog") \
		>"$out/$name.tap" 2>"$out/$name.err" </dev/null &
	pid=$!
	sleep $((bound + 30)) &
	dog=$!
	wait -n -p which "$pid" "$dog"
	rc=$?
	if [[ $which == "$pid" ]]; then
		kill "$dog" 2>/dev/null
		wait "$dog" 2>/dev/null
	else
		say "$name: still running after SIGKILL: stuck in the kernel"
		rc=200
	fi
	if ((rc == 124 || rc == 137 || rc == 200)); then
		# timed out: where the tasks are stuck, and the DLM's view
		say "$name timed out: blocked tasks to the kernel log"
		echo w >/proc/sysrq-trigger
		dmesg >"$out/$name.dmesg" 2>&1
		# a recovery that does not end (a membership change under
		# load): the daemons' view, their last events (20 s each at
		# most: a daemon stuck too must not stop the report)
		{
			timeout 20 corosync-quorumtool -s
			timeout 20 dlm_tool status
			timeout 20 dlm_tool dump | tail -n 200
			timeout 20 dlm_tool ls
		} >"$out/$name.dlm" 2>&1
		for l in $(timeout 20 dlm_tool ls 2>/dev/null | awk '$1 == "name" { print $2 }'); do
			timeout 20 dlm_tool lockdebug -sv "$l" >>"$out/$name.dlm" 2>&1
		done
	fi
	if ((rc != 0)); then
		# failed or timed out: ordlock's views (who holds and who waits)
		for v in owners locks graph; do
			echo "== $v"
			cat "/sys/kernel/debug/ordlock/$v"
		done >"$out/$name.views" 2>&1
	fi
	echo $rc >"$out/$name.rc"
	echo $(($(date +%s) - start)) >"$out/$name.time"
	say "end $name: exit $rc, $(($(date +%s) - start))s"
	# The node's cluster daemons. A guest the host starves past
	# corosync's token sees the membership split and merge, and
	# dlm_controld then exits ("cluster is down"): the node's DLM
	# lockspaces never recover, and every later program would wait out
	# its guards (a request caught inside dlm_lock() as the DLM stopped
	# never returns). Say so, skip the node's later programs, and let the
	# other nodes stop waiting for it (shared/.dead.N, as for a killed
	# node).
	# A case that stops this node's dlm_controld on purpose (c_leave_dead)
	# says so first (shared/.dlm_stopped.N): only its later programs are
	# skipped; the node stays for the end (the unloads are judged).
	if ! kill -0 "$dlm_pid" 2>/dev/null && [[ -e $results/shared/.dlm_stopped.$node ]]; then
		say "dlm_controld stopped by $name on purpose: the node's later programs not run"
		break
	fi
	if ! kill -0 "$corosync_pid" 2>/dev/null || ! kill -0 "$dlm_pid" 2>/dev/null; then
		harness 1 "node$node: corosync and dlm_controld still running after $name"
		say "corosync or dlm_controld exited during $name: the node's cluster is down, its later programs not run"
		tail -n 5 "$out/dlm_controld.log" | sed "s/^/ordlock-cl: node$node: dlm_controld: /"
		touch "$results/shared/.dead.$node"
		break
	fi
done

barrier end
harness $? "node$node: all nodes finished their programs"
if [[ $loaded == 0 && ${DEBUG:-0} == 1 && -w $kmemleak ]]; then
	echo scan >"$kmemleak"
	cat "$kmemleak" >"$out/kmemleak-loaded.txt"
fi
if [[ $loaded == 0 ]]; then
	if grep -q '^ordlock_dlm ' /proc/modules; then
		rmmod ordlock_dlm
		harness $? "node$node: ordlock_dlm.ko unloaded"
	fi
	if grep -q '^ordlock_cltest ' /proc/modules; then
		rmmod ordlock_cltest
		harness $? "node$node: ordlock_cltest.ko unloaded"
	fi
	rmmod ordlock
	harness $? "node$node: ordlock.ko unloaded"
fi
if [[ ${DEBUG:-0} == 1 ]]; then
	# lockdep switches itself off after its first report (or out of
	# room): then it checked only part of the run
	if grep -q 'debug_locks: *1$' /proc/lockdep_stats; then
		harness 0 "node$node: lockdep still on at the end"
	else
		# ... except after 6.1's DLM's own report when a node leaves
		# (tests/harness/kcheck.sh): ordlock was checked up to it
		dmesg >"$out/lockdep-off.txt" 2>&1
		if kcheck_dlm_known "$out/lockdep-off.txt"; then
			say "lockdep turned itself off after the DLM's own report: $(grep -m1 "$kcheck_dlm_line" "$out/lockdep-off.txt")"
			harness 0 "node$node: lockdep still on at the end, or off only after 6.1's DLM's own report"
		else
			harness 1 "node$node: lockdep still on at the end"
		fi
	fi
	# kmemleak reports an object unreferenced for 5 s, over two scans
	if [[ $loaded == 0 && -w $kmemleak ]]; then
		say "kmemleak scan"
		sleep 6
		echo scan >"$kmemleak"
		sleep 1
		echo scan >"$kmemleak"
		cat "$kmemleak" >"$out/kmemleak.txt"
	fi
fi
# The daemons go with the guest: dlm_controld ignores SIGTERM while a
# lockspace (the harness's) is active, and leaving it could wait in the
# DLM's shutdown (above); nothing of theirs needs saving.
kill -9 "$dlm_pid" "$corosync_pid" 2>/dev/null
timing end
echo "1..$npoint" >>"$out/harness.tap"
dmesg >"$out/dmesg.txt" 2>&1
: "$t_start"
sync
echo ok >"$out/done"
say "finished"
