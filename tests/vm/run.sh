#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh [--demo | --bench | --debug] [NAME...]
#
# Boots Debian's kernel in qemu (TCG, 2 CPUs) with the host's root shared
# read-only over virtio-9p, loads kmod/ordlock.ko there, runs the in-VM test
# programs (tests/build/vm/*, or only the NAMEs given) with tests/vm/guest.sh,
# unloads the module, and judges the results here: TAP of every program, the
# harness checks (module loaded, /dev/ordlock, module unloaded, VM finished)
# and the kernel log (no WARNING/BUG/Oops/leak).  Ends with "N passed,
# N failed" and exits non-zero when anything failed.
#
# --demo runs tests/build/demo/* instead, with their output live.
# --bench runs the benchmarks tests/build/bench/* instead (make bench): each
# one's stdout (CSV rows) lands in NAME.csv of a results directory
# tests/build/bench-results/TIMESTAMP/ ("latest" points at the last one);
# they are judged only on their exit status (benchmarks report, they do not
# pass or fail); tests/bench/report.py turns the directory into the table.
# --debug (make check-debug) runs the suite on the debug kernel of
# tests/debug-kernel/ (give its KVER, VMLINUZ and ORDLOCK_KO): the programs
# of tests/build/vm-debug/ too (they need its fault injection), and judges
# more: the kernel's checkers must be on, and KASAN, lockdep, UBSAN,
# DEBUG_OBJECTS and kmemleak (scanned after the module is unloaded) must
# have reported nothing.
#
# Environment: KVER (kernel release, default: tests/kver.sh's), VMLINUZ (default /boot/vmlinuz-$KVER), VM_TIMEOUT (whole
# VM, seconds, default 1500), TEST_TIMEOUT (per program, default 300),
# VM_MEM (MiB, default 2048), VM_CPUS (default 2), VM_ACCEL (qemu
# accelerator, default tcg), VM_APPEND (more kernel command line),
# QEMU_EXTRA (more qemu arguments), VM_LANES (guests at once, default 1;
# make check runs 2: see "lanes" below), ORDLOCK_KO (the module to load,
# default kmod/ordlock.ko),
# ORDLOCK_BENCH_* (passed to the guest's benchmarks), ORDLOCK_STRESS_*,
# ORDLOCK_FUZZ_*, ORDLOCK_RELOAD_* and ORDLOCK_MODEL_* (to its tests: t_model's
# seed and length), TAP_VERBOSE=1 (print
# every program's output),
# ORDLOCK_SUMMARY (file to append "PASSED FAILED" to, used by make check),
# ORDLOCK_PART (make check: the kernel's name, prefixed to every verdict).
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$repo/tests/build
# shellcheck source-path=SCRIPTDIR source=../harness/tap.sh
. "$repo/tests/harness/tap.sh"
# shellcheck source-path=SCRIPTDIR source=../harness/kcheck.sh
. "$repo/tests/harness/kcheck.sh"

mode=check
debug=0
case ${1:-} in
--demo | --bench)
	mode=${1#--}
	shift
	;;
--debug)
	debug=1
	shift
	;;
esac

die() { echo "run.sh: $*" >&2; exit 2; }

# Under make check, a run that stops before its verdict (die, or any error
# under set -e) must not look like a pass: it counts as one failure.
verdict=0
on_exit() {
	if ((!verdict)) && [[ -n "${ORDLOCK_SUMMARY:-}" ]]; then
		echo "FAIL vm: run.sh stopped before its verdict"
		echo "0 1" >>"$ORDLOCK_SUMMARY"
	fi
}
trap on_exit EXIT

# --- what to boot ----------------------------------------------------------
if [[ -z "${KVER:-}" ]]; then
	KVER=$(sh "$repo/tests/kver.sh")
fi
[[ -n "$KVER" ]] || die "no kernel found (run tests/install-deps.sh)"
VMLINUZ=${VMLINUZ:-/boot/vmlinuz-$KVER}
[[ -r "$VMLINUZ" ]] || die "cannot read $VMLINUZ"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (run tests/install-deps.sh)"
ko=${ORDLOCK_KO:-$repo/kmod/ordlock.ko}
[[ -f "$ko" ]] || die "${ko#"$repo"/} not built (make modules)"
if ! modinfo -F vermagic "$ko" | grep -q "^$KVER "; then
	die "${ko#"$repo"/} was not built for $KVER ($(modinfo -F vermagic "$ko"))"
fi

# --- which programs --------------------------------------------------------
case $mode in
demo | bench)
	progdir=$build/$mode
	label=$mode
	;;
*)
	progdir=$build/vm
	label=vm
	;;
esac
# --debug: the programs that only the debug kernel can run, after the others
extradir=
((debug)) && extradir=$build/vm-debug
all=()
for d in "$progdir" ${extradir:+"$extradir"}; do
	[[ -d "$d" ]] || continue
	for f in "$d"/*; do
		[[ -f "$f" && -x "$f" ]] && all+=("$(basename "$f")")
	done
done
tests=()
if [[ $# -gt 0 ]]; then
	for arg in "$@"; do
		# accept "name", "tests/cases/name.c", "tests/build/vm/name"
		name=$(basename "$arg")
		name=${name%.c}
		[[ -x "$progdir/$name" || (-n $extradir && -x "$extradir/$name") ]] ||
			die "no test program $progdir/$name"
		tests+=("$name")
	done
elif ((debug)) && [[ -f $repo/tests/debug-kernel/skip.txt ]]; then
	# the whole suite but the programs tests/debug-kernel/skip.txt names
	# (each with its reason: they run on the three kernels; T= runs them)
	declare -A skip=()
	while read -r n why; do
		[[ $n == \#* || -z $n ]] && continue
		skip[$n]=$why
	done <"$repo/tests/debug-kernel/skip.txt"
	for n in ${all[@]+"${all[@]}"}; do
		if [[ -n ${skip[$n]:-} ]]; then
			echo "vm: $n: not on the debug kernel (tests/debug-kernel/skip.txt: ${skip[$n]})"
		else
			tests+=("$n")
		fi
	done
else
	tests=(${all[@]+"${all[@]}"})
fi
if [[ $mode == check && ${#tests[@]} -eq 0 ]]; then
	echo "run.sh: note: no test programs in $progdir; running the harness checks only"
fi

# --- lanes: VM_LANES=N runs the programs in N guests at once ----------------
# A run of the suite spends much of its time waiting (timeouts, leases,
# detection delays, children started under TCG); two guests on the two
# cores of the machine share that.  The programs are dealt out by their
# cost (tests/vm/costs.txt: seconds each took on 6.1, or on the debug
# kernel under --debug; 5 for one not listed), the dearest first to the lane with the least so far;
# each lane keeps the suite's order and is a whole run of this script: its
# own guest, module load and unload, kernel-log and checker verdicts, its
# own results directory.  Lane 1's output is shown as it comes, the
# others' when they end; every line of a lane's verdicts is marked
# "[PART lane K/N]".  The closing "N passed, N failed" adds up the lanes.
nlanes=${VM_LANES:-1}
[[ $nlanes =~ ^[1-9][0-9]*$ ]] || die "VM_LANES=$nlanes: a number of guests"
((nlanes > ${#tests[@]})) && nlanes=${#tests[@]}
if [[ $mode == check ]] && ((nlanes > 1)); then
	declare -A cost=() lane_of=()
	if [[ -f $here/costs.txt ]]; then
		while read -r n c cd; do
			[[ $n == \#* || -z $n ]] && continue
			((debug)) && c=${cd:-$c}
			cost[$n]=$c
		done <"$here/costs.txt"
	fi
	load=()
	for ((l = 0; l < nlanes; l++)); do load[l]=0; done
	while read -r c n; do
		best=0
		for ((l = 1; l < nlanes; l++)); do
			((load[l] < load[best])) && best=$l
		done
		lane_of[$n]=$best
		load[best]=$((load[best] + c))
	done < <(for n in "${tests[@]}"; do echo "${cost[$n]:-5} $n"; done | sort -k1,1nr -k2)
	own_summary=
	if [[ -z ${ORDLOCK_SUMMARY:-} ]]; then
		own_summary=$(mktemp)
		export ORDLOCK_SUMMARY=$own_summary
	fi
	mkdir -p "$build/results"
	lanelog=$(mktemp -d "$build/results/lanes-XXXX")
	pids=()
	for ((l = 0; l < nlanes; l++)); do
		names=()
		for n in "${tests[@]}"; do
			[[ ${lane_of[$n]} == "$l" ]] && names+=("$n")
		done
		part="${ORDLOCK_PART:+$ORDLOCK_PART }lane $((l + 1))/$nlanes"
		args=()
		((debug)) && args+=(--debug)
		echo "vm: lane $((l + 1))/$nlanes: ${names[*]} (about ${load[l]}s)"
		if ((l == 0)); then
			(
				VM_LANES=1 ORDLOCK_PART=$part bash "$here/run.sh" "${args[@]}" "${names[@]}" \
					2>&1 | tee "$lanelog/$l"
				exit "${PIPESTATUS[0]}"
			) &
		else
			VM_LANES=1 ORDLOCK_PART=$part bash "$here/run.sh" "${args[@]}" "${names[@]}" \
				>"$lanelog/$l" 2>&1 &
		fi
		pids+=($!)
		# the lanes' guests do not boot at the very same moment
		sleep 2
	done
	rc=0
	for ((l = 0; l < nlanes; l++)); do
		wait "${pids[l]}" || rc=1
		((l == 0)) || cat "$lanelog/$l"
	done
	rm -rf "$lanelog"
	verdict=1
	if [[ -n $own_summary ]]; then
		p=0 f=0
		while read -r a b; do
			p=$((p + a))
			f=$((f + b))
		done <"$own_summary"
		rm -f "$own_summary"
		echo "$p passed, $f failed"
		((f == 0 && rc == 0))
		exit
	fi
	exit "$rc"
fi

# --- the run's results directory (shared read-write with the guest) -------
stamp=$(date +%Y%m%d-%H%M%S)
if [[ $mode == bench ]]; then
	# benchmark results are kept (they are small): bench-results/STAMP
	mkdir -p "$build/bench-results"
	results=$build/bench-results/$stamp
	mkdir "$results" 2>/dev/null || results=$(mktemp -d "$results-XXXX")
	ln -sfn "$(basename "$results")" "$build/bench-results/latest"
else
	mkdir -p "$build/results"
	rmode=$mode
	((debug)) && rmode=debug
	results=$(mktemp -d "$build/results/$rmode-$stamp-XXXX")
	# A run holds the lock of its directory until it exits, so that runs
	# going on at the same time (other shells, other checkouts' users)
	# never delete each other's results.
	exec {results_lock}>"$results/.lock"
	flock -n "$results_lock"
	# keep the newest 12 finished runs per mode (a make check of three
	# kernels in two lanes makes 6); "results/MODE" points at the last
	# one started
	# shellcheck disable=SC2012 # our own names, no odd characters
	ls -1dt "$build/results/$rmode"-*-* 2>/dev/null | tail -n +13 | while read -r old; do
		[[ "$old" != "$results" && -d "$old" ]] || continue
		# unfinished and recent: maybe a run of an older run.sh (no lock)
		[[ -f "$old/done" || -n "$(find "$old" -maxdepth 0 -mmin +60)" ]] || continue
		(flock -n 9 && rm -rf "$old") 9>>"$old/.lock" 2>/dev/null || true
	done
	ln -sfn "$(basename "$results")" "$build/results/$rmode"
fi
chmod 0755 "$results"

TAP_TIMEOUT=${TEST_TIMEOUT:-300}
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; } # quote for sh
{
	echo "REPO=$(q "$repo")"
	echo "RESULTS=$(q "$results")"
	echo "MODE=$mode"
	echo "TESTS=$(q "${tests[*]+"${tests[*]}"}")"
	echo "TEST_TIMEOUT=$TAP_TIMEOUT"
	echo "KO=$(q "$ko")"
	echo "DEBUG=$debug"
	echo "EXTRA_DIR=$(q "${extradir#"$repo"/}")"
	if [[ $mode == bench ]]; then
		for v in $(compgen -v ORDLOCK_BENCH_ || true); do
			echo "export $v=$(q "${!v}")"
		done
	fi
	# the length of the stress, fuzz and reload tests (make stress, fuzz-vm),
	# t_model's seed and length (ORDLOCK_MODEL_SEED replays a run)
	for v in $(compgen -v ORDLOCK_STRESS_ || true) $(compgen -v ORDLOCK_FUZZ_ || true) \
		$(compgen -v ORDLOCK_RELOAD_ || true) $(compgen -v ORDLOCK_MODEL_ || true); do
		echo "export $v=$(q "${!v}")"
	done
} >"$results/run.env"

initrd=$build/initramfs-$KVER.cpio.gz
if ((debug)); then
	bash "$here/mkinitramfs.sh" --builtin "$KVER" "$initrd"
else
	bash "$here/mkinitramfs.sh" "$KVER" "$initrd"
fi

# --- boot ---------------------------------------------------------------------
vm_timeout=${VM_TIMEOUT:-1500}
# no_timer_check: the kernel's boot test that the IO-APIC timer ticks
# (check_timer(): a few jiffies' busy wait for IRQ 0) fails when the host
# does not run the TCG guest meanwhile, and the boot panics "IO-APIC +
# timer doesn't work!" (seen under heavy host load); the guest's timer is
# qemu's and works, so the test is skipped, as tests/cluster/run.sh does
append="console=ttyS0 panic=-1 quiet no_timer_check"
# every KASAN report, not only the first; caches of their own, so that
# kmem_cache_destroy() sees objects the module left in its caches; PCI
# interrupt routing without ACPI (under KASAN and lockdep, qemu's _PRT
# method runs into ACPI's 30 s loop timeout, once per virtio device); the
# module's resource cache open to failslab's cache filter (t_failslab)
((debug)) && append+=" kasan_multi_shot slab_nomerge pci=noacpi slub_debug=A,ordlock_resource"
# shellcheck disable=SC2054 # the commas are qemu's
qemu=(
	qemu-system-x86_64
	-smp "${VM_CPUS:-2}" -m "${VM_MEM:-2048}" -accel "${VM_ACCEL:-tcg}"
	-nographic -no-reboot -nic none
	-kernel "$VMLINUZ" -initrd "$initrd"
	-append "$append${VM_APPEND:+ $VM_APPEND}"
	-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=root,mount_tag=hostroot
	-fsdev "local,id=results,path=$results,security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=results,mount_tag=results
	-pidfile "$results/qemu.pid"
)
# shellcheck disable=SC2206
[[ -n "${QEMU_EXTRA:-}" ]] && qemu+=($QEMU_EXTRA)

console=$results/console.log
# The console without the firmware's banner and terminal control sequences
# (SeaBIOS resets the terminal).  Unbuffered all the way: the console log
# is watched while the VM runs, and the demo is shown live.
clean_console() {
	sed -u -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1b[c78]//g' \
		-e '/^SeaBIOS (version[^)]*)$/d' -e '/^Booting from ROM\.*$/d' \
		-e 's/^Booting from ROM\.*//'
}
# A kernel that oopsed or locked up rarely finishes the run (a CPU spins on
# a lock the dead task held): stop the VM VM_OOPS_GRACE seconds (default 60)
# after the console first shows such a failure, instead of waiting for
# VM_TIMEOUT.  (WARNINGs are judged at the end, they do not stop the run.)
fatal='(BUG:|Oops|Kernel panic|kernel BUG|soft lockup|hard LOCKUP|rcu: INFO: .* stall)'
watch_console() {
	local pid first=0 grace=${VM_OOPS_GRACE:-60}
	while sleep 2; do
		pid=$(cat "$results/qemu.pid" 2>/dev/null) || continue
		kill -0 "$pid" 2>/dev/null || return 0
		if ((first == 0)) && grep -qE "$fatal" "$console" 2>/dev/null; then
			first=$SECONDS
			echo "vm: kernel failure on the console; stopping the VM in ${grace}s"
		fi
		if ((first && SECONDS - first >= grace)); then
			echo stopped >"$results/stopped"
			kill "$pid" 2>/dev/null
			return 0
		fi
	done
}

boot() {
	watch_console &
	watcher=$!
	set +e
	if [[ $mode == demo ]]; then
		# everything the guest prints, live
		timeout -k 10 "$vm_timeout" "${qemu[@]}" </dev/null 2>&1 |
			clean_console | tee "$console"
	else
		# only the guest's progress lines
		timeout -k 10 "$vm_timeout" "${qemu[@]}" </dev/null 2>&1 |
			clean_console | tee "$console" |
			grep --line-buffered -E '^ordlock-vm: (run|end|FATAL|insmod|rmmod|kernel|guest|bench)' |
			sed -u 's/^ordlock-vm: /vm: /'
	fi
	qrc=${PIPESTATUS[0]}
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
	set -e
}

echo "vm: booting $KVER (${#tests[@]} $mode programs; log: ${console#"$repo"/})"
t0=$(date +%s)
boot
# qemu itself killed by a signal (exit 128+N; timeout's are 124 and 137)
# before the guest's init printed a line: nothing of ordlock ran, the host's
# qemu crashed (seen once: SIGSEGV 3 s after the start, the console empty,
# while another guest booted beside it).  Booted once more, and said so;
# not a guest watch_console() stopped for a kernel failure on the console.
if ((qrc > 128 && qrc != 137)) && [[ ! -f "$results/done" && ! -f "$results/stopped" ]] &&
	! grep -q '^ordlock-vm:' "$console" 2>/dev/null; then
	echo "vm: qemu died (exit $qrc) before the guest started; booting once more"
	mv -f "$console" "$console.qemu-$qrc"
	rm -f "$results/qemu.pid"
	boot
fi
t1=$(date +%s)
echo "vm: qemu exited ($qrc) after $((t1 - t0))s"

# --- judge ----------------------------------------------------------------------
show_console() {
	local first
	# (|| true: no failure on the console is no reason to stop here)
	first=$(grep -m1 -n -E "$fatal" "$console" | cut -d: -f1) || true
	if [[ -n "$first" ]]; then
		# the first kernel failure, not the lock-up noise after it
		echo "---- console (from line $((first > 5 ? first - 5 : 1)) of ${console#"$repo"/}) ----"
		# (|| true: head may close the pipe early, pipefail is on)
		tail -n +$((first > 5 ? first - 5 : 1)) "$console" | head -n 60 || true
	else
		echo "---- console (last 60 lines of ${console#"$repo"/}) ----"
		tail -n 60 "$console"
	fi
	echo "----"
}

# harness checks from the guest
if [[ -f "$results/harness.tap" ]]; then
	while read -r line; do
		case $line in
		"ok "*) tap_point 0 "vm: ${line#ok * - }" || true ;;
		"not ok "*) tap_point 1 "vm: ${line#not ok * - }" || true ;;
		esac
	done <"$results/harness.tap"
fi
finished=0
[[ -f "$results/done" ]] && finished=1
if ((finished)); then
	tap_point 0 "vm: guest ran to completion" || true
else
	reason="qemu exit $qrc"
	((qrc == 124)) && reason="VM timed out after ${vm_timeout}s"
	[[ -f "$results/stopped" ]] && reason="VM stopped after a kernel failure"
	tap_point 1 "vm: guest ran to completion" "$reason" || true
	show_console
fi

# the programs
failed_before=$TAP_FAILED
for name in ${tests[@]+"${tests[@]}"}; do
	if [[ ! -f "$results/$name.rc" ]]; then
		if [[ -f "$results/$name.tap" ]]; then
			tap_point 1 "$label/$name" "the VM died while it ran" || true
		else
			tap_point 1 "$label/$name" "did not run" || true
		fi
		continue
	fi
	t=$(cat "$results/$name.time" 2>/dev/null || echo '?')
	if [[ $mode == demo || $mode == bench ]]; then
		rc=$(cat "$results/$name.rc")
		tap_point "$rc" "$label/$name (${t}s)" "$(tap_rc_reason "$rc")" || true
		if [[ $mode == bench && $rc != 0 && -s "$results/$name.err" ]]; then
			tail -n 5 "$results/$name.err" | sed 's/^/    | /'
		fi
	else
		tap_eval "vm/$name (${t}s)" "$results/$name.tap" "$(cat "$results/$name.rc")" \
			"$results/$name.err" || true
	fi
done

# the kernel log, from our marker on (boot messages are not ours to judge)
bad='(WARNING:|BUG:|Oops|general protection fault[,:]|Kernel panic|kernel BUG|'
bad+='Call Trace:|UBSAN|KASAN|KFENCE|refcount_t:|list_(add|del) corruption|'
bad+='soft lockup|hard LOCKUP|blocked for more than|rcu_.* stall|'
bad+='ordlock: leaked|ordlock:.*leak|possible (circular|recursive) locking|'
bad+='scheduling while atomic|sleeping function called|ODEBUG:|'
bad+='inconsistent lock state|suspicious RCU usage|Invalid wait context)'
if [[ -f "$results/dmesg.txt" ]]; then
	# ours: from the marker on; all of it if the marker scrolled out
	ours() {
		if grep -q 'ordlock-vm: begin' "$results/dmesg.txt"; then
			sed -n '/ordlock-vm: begin/,$p' "$results/dmesg.txt"
		else
			cat "$results/dmesg.txt"
		fi
	}
	found=$(ours | grep -E "$bad" || true)
	if [[ -z "$found" ]]; then
		tap_point 0 "vm: kernel log clean" || true
	else
		tap_point 1 "vm: kernel log clean" "see ${results#"$repo"/}/dmesg.txt" || true
		ours |
			grep -E -B2 -A25 "$bad" | head -n 80 | sed 's/^/    | /' || true
	fi
else
	# the guest died before saving it (the console is shown above)
	tap_point 1 "vm: kernel log clean" "no kernel log saved; see the console" || true
fi

# --debug: one point per checker of the debug kernel.  The kernel log check
# above fails on their reports too and shows them; these say which checker
# spoke (its first lines), and kmemleak is read from its own file.
debug_point() { # debug_point NAME REGEX: NAME reported nothing after our marker
	local hits
	if [[ ! -f "$results/dmesg.txt" ]]; then
		tap_point 1 "vm: no $1 report" "no kernel log saved" || true
		return
	fi
	hits=$(ours | grep -E "$2" || true)
	if [[ -z "$hits" ]]; then
		tap_point 0 "vm: no $1 report" || true
	else
		tap_point 1 "vm: no $1 report" "$(grep -c . <<<"$hits") lines" || true
		head -n 5 <<<"$hits" | sed 's/^/    | /'
	fi
}
if ((debug)); then
	for ck in "${!kcheck_names[@]}"; do
		debug_point "${kcheck_names[ck]}" "${kcheck_res[ck]}"
	done
	# kmemleak: guest.sh cleared the boot's suspects before loading the
	# module and scanned after unloading it; every object it reports now
	# was allocated during the run and is unreachable.
	kcheck_kmemleak vm "$results/kmemleak.txt" "$results/kmemleak-loaded.txt"
fi
if ((finished && TAP_FAILED > failed_before)) && [[ $mode == check ]] && grep -q FATAL "$console"; then
	show_console
fi

echo "vm: results in ${results#"$repo"/}"
tap_record_summary
verdict=1
tap_print_total "$label"
((TAP_FAILED == 0))
