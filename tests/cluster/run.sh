#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh [NAME...] -- make check-cluster: a three-node corosync/DLM cluster
# of qemu guests, and the cluster test programs on every node.
#
# The network is a bridge inside a network namespace made here (no uplink,
# one tap per guest); the guests use link-local addresses ($NET_PREFIX.N)
# only, so nothing leaves the machine.  Each guest boots Debian's kernel with
# the host's root shared read-only over 9p (the initramfs and /init of
# tests/vm/), and runs tests/cluster/node.sh: corosync (knet, no crypto) to
# quorum, dlm_controld, ordlock.ko, then the programs of
# tests/build/cluster/ (or the NAMEs given), all nodes at once.  One results
# directory, tests/build/results/cluster-*, is shared read-write (no
# caching) by the guests: nodeN/ for each node's output, shared/ for the
# tests' barriers and shared files.  Judged here: every node's harness
# checks and programs' TAP (as "nodeN: NAME"), and every node's kernel log
# (no WARNING/BUG/Oops).  Ends with "N passed, N failed"; exits non-zero
# when anything failed.
#
# A case may have the host kill a node (the marker "cluster-kills-a-node" in
# its source, kill_node of tests/cluster/lib/case.sh): such a case runs
# last, the node's qemu gets SIGKILL, the two nodes left go on quorate, and
# the dead node is judged up to that case.  The host's other faults, on a
# case's request (c_faults): a killed node booted again (it is then judged
# on its last life), a guest stopped (SIGSTOP to its qemu) for a while, a
# node's tap down for a while (the killer below).
#
# The VM lock (/tmp/ordlock-vm.lock) is held for the whole run: the three
# guests take the machine.  The namespace is deleted and the guests killed on
# every exit path; CLUSTER_TIMEOUT (default 1200 s) bounds the whole run.
#
# Environment: KVER, VMLINUZ (as tests/vm/run.sh), ORDLOCK_KO (default
# kmod/ordlock.ko; its companion ordlock_dlm.ko is taken from the same
# directory), ORDLOCK_CLTEST_KO (the test module of the backend seam,
# default tests/cluster/kmod/ordlock_cltest.ko), CLUSTER_NODES (default 3), CLUSTER_MEM (MiB per guest,
# default 768), CLUSTER_TIMEOUT, TEST_TIMEOUT (per program, default 300),
# (each case may state its own: "cluster-timeout: SECONDS" in its source),
# CLUSTER_BENCH=1 (the programs of tests/cluster/bench/: make bench-cluster),
# CLUSTER_ICOUNT=1 (qemu -icount shift=0,sleep=on: a guest's clock counts
# its instructions while it runs; make bench-cluster ICOUNT=1),
# QUORUM_TIMEOUT (default 180), CLUSTER_TOKEN_MS (corosync token, default
# 5000: with 2000 a guest the host starved missed it, and the membership
# split and merged under a test; see node.sh), FAULT_SEED, FAULTS and
# FAULT_KINDS, FAULT_POLICY (c_faults: the seed of its schedule, how many
# faults, of which kinds, the domain's policy), TAP_VERBOSE=1.
#
# CLUSTER_DEBUG=1 (make check-cluster-debug, tests/cluster/check-debug.sh):
# KVER and VMLINUZ are the debug kernel of tests/debug-kernel/build.sh
# --variant cluster, with everything built in (no /lib/modules: the
# initramfs has no modules, node.sh modprobes nothing); the kernel command
# line of make check-debug's guest (every KASAN report, caches of their
# own, PCI interrupts without ACPI); the guests check that the checkers are
# on, and scan for kmemleak after unloading the modules; each node is
# judged as make check-debug judges its guest (tests/harness/kcheck.sh:
# KASAN, lockdep, UBSAN, DEBUG_OBJECTS, kmemleak, lockdep still on at the
# end).  The defaults are then slower: TEST_TIMEOUT 900, a case's own
# "cluster-timeout" times 3, CLUSTER_TIMEOUT 5400, QUORUM_TIMEOUT and
# BARRIER_TIMEOUT 900, CLUSTER_TOKEN_MS 10000, CLUSTER_MEM 1024.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$repo/tests/build
# shellcheck source-path=SCRIPTDIR source=../harness/tap.sh
. "$repo/tests/harness/tap.sh"
# shellcheck source-path=SCRIPTDIR source=../harness/kcheck.sh
. "$repo/tests/harness/kcheck.sh"

die() { echo "cluster: $*" >&2; exit 2; }

nodes=${CLUSTER_NODES:-3}
((nodes >= 2 && nodes <= 9)) || die "CLUSTER_NODES must be 2..9"
debug=${CLUSTER_DEBUG:-0}
if [[ $debug == 1 ]]; then
	# the debug kernel: KASAN, lockdep... several times slower
	mem=${CLUSTER_MEM:-1024}
	total_timeout=${CLUSTER_TIMEOUT:-5400}
	: "${TEST_TIMEOUT:=900}" "${QUORUM_TIMEOUT:=900}" "${BARRIER_TIMEOUT:=900}"
	: "${CLUSTER_TOKEN_MS:=10000}"
else
	debug=0
	mem=${CLUSTER_MEM:-768}
	total_timeout=${CLUSTER_TIMEOUT:-1200}
fi
net_prefix=169.254.77
cluster_name=ordlockcl

# --- what to boot and run ---------------------------------------------------
KVER=${KVER:-$(sh "$repo/tests/kver.sh")}
VMLINUZ=${VMLINUZ:-/boot/vmlinuz-$KVER}
[[ -r $VMLINUZ ]] || die "cannot read $VMLINUZ"
for tool in qemu-system-x86_64 ip corosync dlm_controld; do
	command -v "$tool" >/dev/null || die "$tool missing (tests/install-deps.sh --cluster)"
done
[[ $(id -u) == 0 ]] || die "needs root (network namespace, taps)"
ko=${ORDLOCK_KO:-$repo/kmod/ordlock.ko}
[[ -f $ko ]] || die "${ko#"$repo"/} not built (make modules)"
modinfo -F vermagic "$ko" | grep -q "^$KVER " || die "${ko#"$repo"/} was not built for $KVER"
# the test module of the backend seam (make check-cluster builds it)
cltest=${ORDLOCK_CLTEST_KO:-$here/kmod/ordlock_cltest.ko}
if [[ -f $cltest ]] && ! modinfo -F vermagic "$cltest" | grep -q "^$KVER "; then
	die "${cltest#"$repo"/} was not built for $KVER"
fi
# CLUSTER_BENCH=1 (make bench-cluster): the programs of tests/cluster/bench/
if [[ ${CLUSTER_BENCH:-0} == 1 ]]; then
	progdir=$build/cluster-bench casedir=$here/bench
else
	progdir=$build/cluster casedir=$here/cases
fi
tests=()
if (($#)); then
	for arg in "$@"; do
		name=$(basename "$arg")
		name=${name%.c}
		name=${name%.sh}
		[[ -x $progdir/$name ]] || die "no cluster test program $progdir/$name"
		tests+=("$name")
	done
elif [[ -d $progdir ]]; then
	# a case marked "cluster-named-only" (c_faults: make check-faults'
	# schedules) runs only when named; but c_faults runs one short
	# schedule in every default run, in a cluster of its own after the
	# others: CLUSTER_SHORT_FAULTS="SEED N [POLICY]", default "7 5" (seed
	# 7's first five faults: pause, reload, kill, restart, part; policy
	# enforce, or detect: c_faults' FAULT_POLICY), "" for none
	short_faults=${CLUSTER_SHORT_FAULTS-7 5}
	for f in "$progdir"/*; do
		[[ -f $f && -x $f ]] || continue
		if grep -qs 'cluster-named-only' "$casedir/$(basename "$f")".*; then
			[[ $(basename "$f") == c_faults && -n $short_faults ]] &&
				short_run=$short_faults
			continue
		fi
		tests+=("$(basename "$f")")
	done
fi
# A case whose source carries the marker "cluster-kills-a-node" has the host
# kill a node (tests/cluster/lib/case.sh: kill_node): it runs last, on the
# nodes left, and only one such case runs in a cluster (three nodes stay
# quorate with two, not with one).  With several, the first runs last
# after the others, and each further one in a cluster of its own, booted
# afresh: run.sh runs itself once per cluster (each run takes the VM lock
# and has a results directory of its own), and fails if any of them failed.
# A case that stops a node's dlm_controld ("cluster-stops-dlm": that
# node's DLM never recovers) is ordered the same way: last, one a cluster.
kills_a_node() { grep -qsE 'cluster-kills-a-node|cluster-stops-dlm' "$casedir/$1".*; }
ordered=() killer='' more_killers=()
for name in ${tests[@]+"${tests[@]}"}; do
	if kills_a_node "$name"; then
		if [[ -z $killer ]]; then
			killer=$name
		else
			more_killers+=("$name")
		fi
	else
		ordered+=("$name")
	fi
done
if ((${#more_killers[@]})) || [[ -n ${short_run:-} ]]; then
	((${#more_killers[@]})) &&
		echo "cluster: more cases kill a node (${more_killers[*]}): a cluster of its own for each, after this one"
	rc=0
	if ((${#ordered[@]})) || [[ -n $killer ]]; then
		bash "${BASH_SOURCE[0]}" ${ordered[@]+"${ordered[@]}"} ${killer:+"$killer"} || rc=1
	fi
	for name in ${more_killers[@]+"${more_killers[@]}"}; do
		bash "${BASH_SOURCE[0]}" "$name" || rc=1
	done
	if [[ -n ${short_run:-} ]]; then
		read -r seed n pol <<<"$short_run"
		echo "cluster: c_faults, one short schedule (seed $seed, $n faults, policy ${pol:-enforce}; make check-faults runs the long ones)"
		FAULT_SEED=$seed FAULTS=${n:-5} FAULT_POLICY=${pol:-enforce} bash "${BASH_SOURCE[0]}" c_faults || rc=1
	fi
	((rc == 0)) || echo "cluster: a run of the ones above failed"
	exit "$rc"
fi
[[ -z $killer ]] || ordered+=("$killer")
tests=(${ordered[@]+"${ordered[@]}"})
[[ -z $killer ]] || ((nodes >= 3)) || die "$killer kills a node: it needs CLUSTER_NODES >= 3"

# --- the machine is ours -----------------------------------------------------
# (ORDLOCK_VM_LOCK_HELD=1: the caller holds it for several runs,
# tests/cluster/faults.sh)
if [[ ${ORDLOCK_VM_LOCK_HELD:-0} != 1 ]]; then
	exec {vmlock}>/tmp/ordlock-vm.lock
	if ! flock -n "$vmlock"; then
		echo "cluster: waiting for the VM lock (/tmp/ordlock-vm.lock)"
		flock "$vmlock"
	fi
fi
t0=$(date +%s)

mkdir -p "$build/results"
results=$(mktemp -d "$build/results/cluster-$(date +%Y%m%d-%H%M%S)-XXXX")
chmod 0755 "$results"
mkdir -p "$results/shared"
chmod 1777 "$results/shared"
ln -sfn "$(basename "$results")" "$build/results/cluster"

ns=ordlock-cl-$$
qpids=()
cleanup() {
	local p i
	# qemu by its pid file (under timeout(1) in a subshell), then the
	# subshells
	for ((i = 1; i <= nodes; i++)); do
		p=$(cat "$results/node$i.pid" 2>/dev/null) || continue
		kill "$p" 2>/dev/null || true
		kill -CONT "$p" 2>/dev/null || true # (a guest the killer stopped)
	done
	for p in ${qpids[@]+"${qpids[@]}"}; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	# the progress reader, the killer
	p=$(cat "$results/.tail.pid" 2>/dev/null) && kill "$p" 2>/dev/null || true
	[[ -z ${killer_pid:-} ]] || kill "$killer_pid" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# --- the network ---------------------------------------------------------------
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" link add br0 type bridge
ip -n "$ns" link set br0 up
for ((i = 1; i <= nodes; i++)); do
	ip -n "$ns" tuntap add dev "tap$i" mode tap
	ip -n "$ns" link set "tap$i" master br0 up
done

q() { printf "'%s'" "${1//\'/\'\\\'\'}"; } # quote for sh
{
	echo "REPO=$(q "$repo")"
	echo "RESULTS=$(q "$results")"
	echo "GUEST=tests/cluster/node.sh"
	echo "TESTS=$(q "${tests[*]+"${tests[*]}"}")"
	echo "PROGDIR=$(q "$progdir")"
	echo "CASEDIR=$(q "$casedir")"
	echo "TEST_TIMEOUT=${TEST_TIMEOUT:-300}"
	echo "QUORUM_TIMEOUT=${QUORUM_TIMEOUT:-180}"
	echo "BARRIER_TIMEOUT=${BARRIER_TIMEOUT:-300}"
	echo "TOKEN_MS=${CLUSTER_TOKEN_MS:-5000}"
	echo "KO=$(q "$ko")"
	echo "CLTEST_KO=$(q "$cltest")"
	echo "NODES=$nodes"
	echo "NET_PREFIX=$net_prefix"
	echo "CLUSTER_NAME=$cluster_name"
	echo "BENCH_PROFILE=${ORDLOCK_BENCH_PROFILE:-0}"
	echo "ICOUNT=${CLUSTER_ICOUNT:-0}"
	echo "FAULT_SEED=${FAULT_SEED:-}"
	echo "FAULTS=${FAULTS:-}"
	echo "FAULT_KINDS=$(q "${FAULT_KINDS:-}")"
	echo "FAULT_POLICY=${FAULT_POLICY:-}"
	echo "DEBUG=$debug"
} >"$results/run.env"

initrd=$build/initramfs-$KVER.cpio.gz
if ((debug)); then
	bash "$repo/tests/vm/mkinitramfs.sh" --builtin "$KVER" "$initrd"
else
	bash "$repo/tests/vm/mkinitramfs.sh" "$KVER" "$initrd"
fi

# --- boot -------------------------------------------------------------------------
clean_console() {
	sed -u -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1b[c78]//g'
}
echo "cluster: booting $nodes guests of $KVER (${#tests[@]} programs; results: ${results#"$repo"/})"
# boot_node N: start node N's qemu (a subshell in the background, its pid
# in $qpid); again for a node the host killed and restarts (the console
# goes on in the same file)
boot_node() {
	local i=$1 left=$((total_timeout - ($(date +%s) - t0)))
	local level=5
	# the debug kernel: errors only on the serial console too (below:
	# a printk from a hard interrupt writes to the 8250 there). The judge
	# reads the whole log (dmesg) of a node that ran to its end; a killed
	# node's is its console: its errors (KASAN, BUG, Oops), not its
	# warnings (docs/testing.md)
	((debug)) && level=4
	# clocksource=hpet: QEMU's HPET counts the host's time, where a TSC
	# calibrated at boot on a loaded host may run several % off (two
	# guests once ran 6.3% slow); node.sh sets the clock from the host's
	local append="console=ttyS0 panic=-1 quiet loglevel=$level no_timer_check clocksource=hpet ordnode=$i"
	((left > 60)) || left=60
	# the debug kernel: make check-debug's options (tests/vm/run.sh), and
	# highres=off: three TCG guests on a loaded host make hrtimer_interrupt
	# overrun, and its "hrtimer: interrupt took N ns" printk from hard IRQ
	# takes the 8250 console's spinlock_t, which 6.1's
	# PROVE_RAW_LOCK_NESTING reports ("Invalid wait context", a known
	# false positive of that option) and lockdep then switches itself off
	# for the rest of the run (every node, the first run of
	# check-cluster-debug); in low-resolution mode the tick runs the
	# timers and that printk does not exist
	((debug)) && append+=" kasan_multi_shot slab_nomerge pci=noacpi highres=off"
	# shellcheck disable=SC2054 # the commas are qemu's
	qemu=(
		qemu-system-x86_64 -smp 1 -m "$mem" -accel tcg
		-nographic -no-reboot -rtc base=utc,clock=host
		-kernel "$VMLINUZ" -initrd "$initrd"
		-append "$append"
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=root,mount_tag=hostroot
		-fsdev "local,id=results,path=$results,security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=results,mount_tag=results
		-netdev "tap,id=n0,ifname=tap$i,script=no,downscript=no"
		-device "virtio-net-pci,netdev=n0,mac=52:54:00:77:00:0$i,romfile="
		-pidfile "$results/node$i.pid"
	)
	# CLUSTER_ICOUNT=1: each guest's clock counts its instructions while it
	# runs (1 ns each) and real time while it idles (sleep=on keeps the
	# cluster's timeouts in step with the other guests)
	# shellcheck disable=SC2054 # the commas are qemu's
	[[ ${CLUSTER_ICOUNT:-0} == 1 ]] && qemu+=(-icount shift=0,sleep=on)
	(
		ip netns exec "$ns" timeout -k 10 "$left" "${qemu[@]}" </dev/null 2>&1 |
			clean_console >>"$results/node$i.console"
	) 2>/dev/null & # (no "Killed" from bash when the killer kills a guest)
	qpid=$!
}
for ((i = 1; i <= nodes; i++)); do
	: >"$results/node$i.console"
	boot_node "$i"
	qpids+=("$qpid")
done
# progress: the nodes' own lines
consoles=()
for ((i = 1; i <= nodes; i++)); do
	consoles+=("$results/node$i.console")
done
(
	tail -q -n +1 -F "${consoles[@]}" 2>/dev/null &
	echo $! >"$results/.tail.pid"
	wait
) | grep --line-buffered -E '^ordlock-(cl|vm): ' &
# The killer, the host's faults: a case asks for node N's death with the
# file shared/.kill.N ("REQUESTER CASE"); its qemu gets SIGKILL, and
# shared/.dead.N tells the nodes left (their barriers stop waiting for it).
# shared/.restart.N (after a kill): node N boots again (a second life:
# node.sh runs the case that killed it again, which knows from
# ORDLOCK_LIFE); the case removes .dead.N once the node is back.
# shared/.gstop.N holding MS: node N's whole guest stopped (SIGSTOP to its
# qemu) for MS ms, then continued (SIGCONT); shared/.part.N holding MS:
# node N cut off the network (its tap, the bridge's port, down) for MS ms.
# Each done, shared/.NAME.N.done; each logged with the host's time (ms) in
# shared/host.log ("TIME 0 - KIND node=N [ms=MS]", the checker's format:
# tests/cluster/lib/fault_check.awk).
hostlog() { echo "$(($(date +%s%N) / 1000000)) 0 - $*" >>"$results/shared/host.log"; }
(
	while :; do
		for ((i = 1; i <= nodes; i++)); do
			c=$results/shared
			if [[ -e $c/.kill.$i && ! -e $c/.dead.$i ]]; then
				p=$(cat "$results/node$i.pid" 2>/dev/null) || continue
				kill -9 "$p" 2>/dev/null
				while kill -0 "$p" 2>/dev/null; do sleep 0.05; done
				hostlog "kill node=$i"
				read -r by kcase <"$c/.kill.$i"
				echo "node$i $by $kcase $(date +%s.%N)" >>"$results/killed.$i"
				touch "$c/.dead.$i"
				echo "cluster: node$i killed (SIGKILL to its qemu) on the request of node$by's $kcase"
			fi
			if [[ -e $c/.restart.$i && -e $c/.dead.$i ]]; then
				rm -f "$c/.kill.$i" "$c/.restart.$i"
				date +%s.%N >>"$results/restarted.$i"
				hostlog "restart node=$i"
				boot_node "$i"
				echo "cluster: node$i restarted (life $(($(wc -l <"$results/restarted.$i") + 1)))"
			fi
			for f in gstop part; do
				[[ -e $c/.$f.$i && ! -e $c/.$f.$i.done ]] || continue
				ms=$(cat "$c/.$f.$i" 2>/dev/null)
				[[ $ms =~ ^[0-9]+$ ]] && ((ms <= 60000)) || ms=1000
				if [[ $f == gstop ]]; then
					p=$(cat "$results/node$i.pid" 2>/dev/null) || continue
					kill -STOP "$p" 2>/dev/null
					hostlog "gstop node=$i ms=$ms"
					sleep "$(awk -v m="$ms" 'BEGIN { print m / 1000 }')"
					kill -CONT "$p" 2>/dev/null
				else
					ip -n "$ns" link set "tap$i" down
					hostlog "part node=$i ms=$ms"
					sleep "$(awk -v m="$ms" 'BEGIN { print m / 1000 }')"
					ip -n "$ns" link set "tap$i" up
				fi
				hostlog "$f-end node=$i"
				rm -f "$c/.$f.$i"
				touch "$c/.$f.$i.done"
			done
		done
		sleep 0.2
	done
) &
killer_pid=$!
for p in "${qpids[@]}"; do
	wait "$p" || true
done
# a node the killer restarted: its qemu is the killer's child (its own
# timeout(1) bounds it)
for ((i = 1; i <= nodes; i++)); do
	[[ -f $results/restarted.$i ]] || continue
	while p=$(cat "$results/node$i.pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null &&
		[[ ! -e $results/node$i/done ]]; do
		sleep 1
	done
	sleep 2
done
kill "$killer_pid" 2>/dev/null || true
wait "$killer_pid" 2>/dev/null || true
killer_pid=
kill "$(cat "$results/.tail.pid")" 2>/dev/null || true
wait
t1=$(date +%s)
echo "cluster: guests stopped after $((t1 - t0))s"

# --- judge -------------------------------------------------------------------------
# CLUSTER_DEBUG=1: for node N, one point per checker of the debug kernel
# (tests/harness/kcheck.sh, as make check-debug judges its guest) from the
# marker on; what a checker said before it (the boot, the daemons' start:
# not ordlock's) is shown, not counted; kmemleak from the node's own scan
# after the modules were unloaded (none for a node the host killed)
debug_node() { # debug_node N LOG
	local i=$1 log=$2 ck hits
	local known='^$'
	kcheck_dlm_known "$log" && known=$kcheck_dlm_line
	for ck in "${!kcheck_names[@]}"; do
		hits=$(sed -n '/ordlock-cl: begin/,$p' "$log" | grep -E "${kcheck_res[ck]}" | grep -Ev "$known" || true)
		if [[ -z $hits ]]; then
			tap_point 0 "node$i: no ${kcheck_names[ck]} report" || true
		else
			tap_point 1 "node$i: no ${kcheck_names[ck]} report" "$(grep -c . <<<"$hits") lines" || true
			head -n 5 <<<"$hits" | sed 's/^/    | /'
		fi
		hits=$(sed '/ordlock-cl: begin/,$d' "$log" | grep -E "${kcheck_res[ck]}" || true)
		[[ -z $hits ]] ||
			echo "cluster: node$i: ${kcheck_names[ck]} before ordlock was loaded (not counted): $(head -n 1 <<<"$hits")"
	done
	if [[ -f $results/killed.$i && ! -f $results/restarted.$i ]]; then
		echo "cluster: node$i: killed by the host: no kmemleak scan"
	else
		kcheck_kmemleak "node$i" "$results/node$i/kmemleak.txt" "$results/node$i/kmemleak-loaded.txt"
	fi
}
fatal='(BUG:|Oops|Kernel panic|kernel BUG|soft lockup|hard LOCKUP|rcu: INFO: .* stall|WARNING:)'
for ((i = 1; i <= nodes; i++)); do
	out=$results/node$i
	if [[ -f $out/harness.tap ]]; then
		while read -r line; do
			case $line in
			"ok "*) tap_point 0 "${line#ok * - }" || true ;;
			"not ok "*) tap_point 1 "${line#not ok * - }" || true ;;
			esac
		done <"$out/harness.tap"
	fi
	if [[ -f $results/killed.$i && ! -f $results/restarted.$i ]]; then
		# killed on a case's request: judged up to that case (whose
		# points are the survivors')
		read -r _ by case _ <"$results/killed.$i"
		tap_point 0 "node$i: killed on the request of node$by's $case" || true
	elif [[ -f $out/done ]]; then
		tap_point 0 "node$i: ran to completion" || true
	else
		tap_point 1 "node$i: ran to completion" "see ${results#"$repo"/}/node$i.console" || true
		tail -n 30 "$results/node$i.console" | sed 's/^/    | /'
	fi
	for name in ${tests[@]+"${tests[@]}"}; do
		[[ -f $results/killed.$i && ! -f $results/restarted.$i && $name == "$killer" ]] && break
		rc=$(cat "$out/$name.rc" 2>/dev/null || echo 255)
		tap_eval "node$i: $name" "$out/$name.tap" "$rc" "$out/$name.err" || true
	done
	log=$out/dmesg.txt
	# a restarted node's dmesg.txt is its last life's: the console has all
	[[ -f $log && ! -f $results/restarted.$i ]] || log=$results/node$i.console
	# Known and harmless, not counted: 6.1's DLM copies a message into
	# struct rq_entry's last member with room allocated behind it
	# (fs/dlm/requestqueue.c, dlm_add_requestqueue(): kmalloc(sizeof(*e) +
	# length), memcpy(&e->request, ms, h_length)), and FORTIFY_SOURCE warns
	# once "field-spanning write" when a message arrives while a lockspace
	# recovers. Only that WARNING is dropped, and only next to its message.
	known='at fs/dlm/requestqueue\.c:[0-9]+ dlm_add_requestqueue'
	if grep -Eq 'memcpy: detected field-spanning write .* of single field "&e->request" at fs/dlm/requestqueue\.c' "$log"; then
		echo "cluster: node$i: the known FORTIFY warning of 6.1's dlm_add_requestqueue() (a false positive), not counted"
	else
		known='^$'
	fi
	# and with the debug kernel, 6.1's DLM's own lockdep report when a node
	# leaves (tests/harness/kcheck.sh), named here and left out
	if ((debug)) && kcheck_dlm_known "$log"; then
		echo "cluster: node$i: a lockdep report of 6.1's DLM on its own locks (tests/harness/kcheck.sh), not counted: lockdep checked ordlock up to $(grep -m1 -o "^\[ *[0-9.]*\] $kcheck_dlm_line" "$log" | sed 's/\].*/]/')"
		known="($known)|$kcheck_dlm_line"
	fi
	if hits=$(sed -n '/ordlock-cl: begin/,$p' "$log" | grep -E "$fatal" | grep -Ev "$known"); then
		tap_point 1 "node$i: kernel log clean" "$(head -n 1 <<<"$hits")" || true
		head -n 10 <<<"$hits" | sed 's/^/    | /'
	else
		tap_point 0 "node$i: kernel log clean" || true
	fi
	((debug == 0)) || debug_node "$i" "$log"
done

# --- what the run cost --------------------------------------------------------
# node.sh's timing: seconds since the guest's boot at each step
for ((i = 1; i <= nodes; i++)); do
	f=$results/node$i/timing
	[[ -f $f ]] || continue
	awk -v n="node$i" '
		{ t[$1] = $2 }
		END {
			s = n ": userspace " t["userspace"] "s"
			if ("quorate" in t) s = s ", quorate " t["quorate"] "s (corosync " t["quorate"] - t["corosync"] "s)"
			if ("dlm" in t) s = s ", dlm_controld " t["dlm"] "s"
			if ("ready" in t) s = s ", all ready " t["ready"] "s"
			if ("end" in t) s = s ", end " t["end"] "s"
			print "cluster: " s " after boot"
		}' "$f"
done | tee "$results/costs.txt"
# each program's time (seconds, the longest node's)
line=
for name in ${tests[@]+"${tests[@]}"}; do
	longest=0
	for ((i = 1; i <= nodes; i++)); do
		t=$(cat "$results/node$i/$name.time" 2>/dev/null) || continue
		if ((t > longest)); then longest=$t; fi
	done
	line+="${line:+, }$name ${longest}s"
done
[[ -z $line ]] || echo "cluster: programs: $line" | tee -a "$results/costs.txt"
echo "cluster: total $((t1 - t0))s for $nodes guests of ${mem} MiB" | tee -a "$results/costs.txt"
# the figures of the benches (make bench-cluster): "# bench ..." lines
# (none in make check-cluster: grep finds nothing, and that is no failure)
{ grep -h '^# bench' "$results"/node*/*.tap 2>/dev/null || true; } | sed 's/^# //' |
	tee "$results/bench.txt"
echo "cluster: results in ${results#"$repo"/}"
tap_print_total cluster
((TAP_FAILED == 0))
