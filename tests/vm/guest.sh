#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh RESULTS_DIR -- runs inside the test VM, chrooted into the host's
# root (read-only) with RESULTS_DIR a writable share; started by init.sh.
#
# Loads kmod/ordlock.ko, runs the test programs (MODE=check: tests/build/vm/*,
# or the subset in TESTS; MODE=demo: tests/build/demo/*; MODE=bench:
# tests/build/bench/*), unloads the module and saves the kernel log.  Into
# RESULTS_DIR it writes:
#   harness.tap       TAP of the harness checks (module loaded/unloaded, ...)
#   NAME.tap NAME.err NAME.rc NAME.time   stdout, stderr, exit status, seconds
#                     (NAME.csv instead of NAME.tap for a benchmark, whose
#                     stderr also goes to the console as "bench NAME: ...")
#   dmesg.txt         the kernel log at the end
#   kmemleak.txt      DEBUG=1 (the debug kernel): what kmemleak reports after
#                     the module was unloaded (its frames are bare addresses
#                     then); kmemleak-loaded.txt: a scan just before the
#                     unload, which names the module's functions
#   done              written last: the guest ran to completion
# The host (run.sh) judges all of it.  Progress lines on the console start
# with "ordlock-vm:".
set -uo pipefail # no -e: a failing step is recorded, the run goes on

results=$1
# shellcheck source=/dev/null
. "$results/run.env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TMPDIR=/tmp LC_ALL=C.UTF-8 ORDLOCK_REPO=$REPO
# where a program may leave files for the host (make demo: its picture)
export ORDLOCK_RESULTS=$results
cd "$REPO" || exit 1

say() { echo "ordlock-vm: $*"; }

npoint=0
harness() { # harness STATUS NAME: one TAP point into harness.tap
	npoint=$((npoint + 1))
	if [[ $1 == 0 ]]; then
		echo "ok $npoint - $2"
	else
		echo "not ok $npoint - $2"
	fi >>"$results/harness.tap"
}

# the module to load (t_reload reloads it too)
KO=${KO:-$REPO/kmod/ordlock.ko}
export ORDLOCK_KO=$KO

kmemleak=/sys/kernel/debug/kmemleak
# the debug kernel is several times slower: stretch the tests' hang guards
# (still below TEST_TIMEOUT, 900 s per program there)
[[ ${DEBUG:-0} == 1 ]] && export ORDLOCK_WATCHDOG_SCALE=${ORDLOCK_WATCHDOG_SCALE:-3}
if [[ ${DEBUG:-0} == 1 ]]; then
	# The debug kernel's checkers must really be on: a kernel without
	# them would pass everything below.
	missing=
	[[ $(dmesg) == *'KernelAddressSanitizer initialized'* ]] || missing+=" KASAN"
	[[ -e /proc/lockdep ]] || missing+=" lockdep"
	[[ -w $kmemleak ]] || missing+=" kmemleak"
	[[ -d /sys/kernel/debug/debug_objects ]] || missing+=" DEBUG_OBJECTS"
	[[ -d /sys/kernel/debug/failslab ]] || missing+=" failslab"
	[[ -z $missing ]]
	harness $? "debug kernel: KASAN, lockdep, kmemleak, DEBUG_OBJECTS, failslab on"
	[[ -z $missing ]] || say "debug kernel without:$missing"
	# Leak suspects of the boot are not ours: scan once and forget them.
	if [[ -w $kmemleak ]]; then
		echo scan >"$kmemleak"
		echo clear >"$kmemleak"
	fi
fi

# Everything after this line in the kernel log is ours.
echo "ordlock-vm: begin" >/dev/kmsg

say "kernel $(uname -r), $(nproc) cpus"
insmod_out=$(insmod "$KO" 2>&1)
loaded=$?
harness $loaded "module loaded"
[[ $loaded == 0 ]] || say "insmod failed: $insmod_out"

# devtmpfs creates the node as soon as the misc device registers.
for _ in 1 2 3 4 5 6 7 8 9 10; do
	[[ -c /dev/ordlock ]] && break
	sleep 0.1
done
[[ -c /dev/ordlock ]]
harness $? "/dev/ordlock exists"

# guard CMD...: runs CMD under timeout(1) and returns its status, or 200
# when it did not exit even after SIGKILL (a task stuck in the kernel): then
# the blocked tasks' stacks go to the kernel log and the run moves on
# without waiting for it (the module will not unload).
guard() {
	local pid dog which rc
	timeout -k 10 "$TEST_TIMEOUT" "$@" &
	pid=$!
	sleep $((TEST_TIMEOUT + 30)) &
	dog=$!
	wait -n -p which "$pid" "$dog"
	rc=$?
	if [[ $which == "$pid" ]]; then
		kill "$dog" 2>/dev/null
		wait "$dog" 2>/dev/null
		return $rc
	fi
	say "$name: still running after SIGKILL: stuck in the kernel"
	echo w >/proc/sysrq-trigger
	return 200
}

case $MODE in
demo) dir=tests/build/demo ;;
bench) dir=tests/build/bench ;;
*) dir=tests/build/vm ;;
esac

# Each program starts from the module parameters as loaded: a program that
# changed some and died before putting them back must not skew the next.
params=/sys/module/ordlock/parameters
declare -A param_saved=()
for p in "$params"/*; do
	[[ -w $p ]] && param_saved[$p]=$(<"$p")
done
restore_params() {
	local p
	for p in "${!param_saved[@]}"; do
		[[ -w $p && $(<"$p") != "${param_saved[$p]}" ]] || continue
		say "$name left ${p##*/} at $(<"$p"): restored to ${param_saved[$p]}"
		echo "${param_saved[$p]}" >"$p" 2>/dev/null
	done
}

if [[ $loaded == 0 ]]; then
	for name in $TESTS; do
		prog=$REPO/$dir/$name
		# run.sh --debug: the debug kernel's own programs
		[[ -x $prog || -z ${EXTRA_DIR:-} ]] || prog=$REPO/$EXTRA_DIR/$name
		work=/tmp/run.$name
		mkdir -p "$work"
		start=$(date +%s)
		if [[ $MODE == demo ]]; then
			say "=== $name ==="
			# live on the console, and saved; through a fifo, not a
			# pipeline, so that a stuck program cannot hold us up
			mkfifo "$work/.out"
			tee "$results/$name.tap" <"$work/.out" &
			tee_pid=$!
			(cd "$work" && guard "$prog") >"$work/.out" 2>&1
			rc=$?
			[[ $rc == 200 ]] || wait "$tee_pid"
		elif [[ $MODE == bench ]]; then
			say "run $name"
			# stdout: the CSV rows; stderr: progress, shown at the end
			(cd "$work" && guard "$prog") >"$results/$name.csv" \
				2>"$results/$name.err" </dev/null
			rc=$?
			sed "s/^/ordlock-vm: bench $name: /" "$results/$name.err"
		else
			say "run $name"
			(cd "$work" && guard "$prog") \
				>"$results/$name.tap" 2>"$results/$name.err" </dev/null
			rc=$?
		fi
		restore_params
		echo $rc >"$results/$name.rc"
		echo $(($(date +%s) - start)) >"$results/$name.time"
		say "end $name: exit $rc, $(($(date +%s) - start))s"
	done
fi

if [[ $loaded == 0 && ${DEBUG:-0} == 1 && -w $kmemleak ]]; then
	echo scan >"$kmemleak"
	cat "$kmemleak" >"$results/kmemleak-loaded.txt"
fi
if [[ $loaded == 0 ]]; then
	rmmod_out=$(rmmod ordlock 2>&1)
	rc=$?
	harness $rc "module unloaded"
	[[ $rc == 0 ]] || say "rmmod failed: $rmmod_out"
fi
if [[ ${DEBUG:-0} == 1 ]]; then
	# Lockdep switches itself off after its first report (or when it
	# runs out of room): then it checked only part of the run.
	grep -q 'debug_locks: *1$' /proc/lockdep_stats
	harness $? "lockdep still on at the end"
	# kmemleak reports an object once it was unreferenced for 5 s, over
	# two scans (kmemleak.rst): what the module leaked is unreferenced
	# now that it is gone.
	if [[ -w $kmemleak ]]; then
		say "kmemleak scan"
		sleep 6
		echo scan >"$kmemleak"
		sleep 1
		echo scan >"$kmemleak"
		cat "$kmemleak" >"$results/kmemleak.txt"
	fi
fi
echo "1..$npoint" >>"$results/harness.tap"

dmesg >"$results/dmesg.txt" 2>&1
sync
echo ok >"$results/done"
say "finished"
