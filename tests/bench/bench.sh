#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh -- "make bench": installs what is missing (tests/install-deps.sh
# --bench), builds the module, libordlock and the benchmarks, boots the test
# VM once (tests/vm/run.sh --bench) to run every tests/build/bench/b*
# program, and prints the table of tests/bench/report.py.  Everything lands
# in tests/build/bench-results/TIMESTAMP/ (results.csv, results.json,
# table.txt, plot.png; "latest" points at the last run).
#
# Benchmarks report, they never fail a build: the exit status is non-zero
# only when they could not run (dependencies, build, VM, a benchmark that
# crashed), never because a target was missed.
#
# Environment: ORDLOCK_BENCH_REPS (repetitions, default 7),
# ORDLOCK_BENCH_SCALE (operations per repetition, 1.0; 0.2 for a quick look),
# BENCH="b1_uncontended ..." (only these benchmarks), VM_CPUS (default 2),
# VM_ACCEL (default kvm when usable, else tcg); KDIR/KVER pass through.
# ICOUNT=1 (make bench ICOUNT=1): the deterministic mode: TCG with qemu's
# -icount shift=0,sleep=off on one vCPU, where the guest's clock advances
# one nanosecond per instruction; runs b8_insn (unless BENCH= says
# otherwise), whose table counts instructions per operation and repeats
# exactly from run to run.  The wall-clock mode (the default) stays for
# what needs real time: handoffs, timeouts, scaling.
# Knobs of single benchmarks: ORDLOCK_BENCH_CROSS=1 (b3: also across two
# CPUs), ORDLOCK_BENCH_RINGS="2,10,100,1000" (b5: cycle sizes),
# ORDLOCK_BENCH_FCNTL_MAX=100 (b5: largest fcntl ring).
# b10_contend (contention, issue 40) runs at most 3 repetitions (of
# ORDLOCK_BENCH_REPS) of 25 cells of 3 s each: it adds about 4 minutes.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
MAKE=${MAKE:-make}
mk() { $MAKE --no-print-directory "$@"; }
die() { echo "bench: $*" >&2; exit 1; }

echo "== dependencies"
bash tests/install-deps.sh --bench || die "cannot install the dependencies"

echo "== build"
mk -j"$(nproc)" modules tools >/dev/null || die "build failed"
mk -C tests bench >/dev/null || die "building the benchmarks failed"

# What the VM boots, as the Makefile sees it
eval "$(mk -s vm-env)"
export KVER VMLINUZ

# KVM when the CPU offers it (and say so); else TCG, where every kernel
# instruction is emulated: compare with the peers, not the floor.
accel_note=""
if [[ ${ICOUNT:-0} == 1 ]]; then
	# instructions, not time: TCG (KVM has no icount), one vCPU (no
	# other CPU's work in the figures), and idle time skipped, not slept
	VM_ACCEL=tcg
	VM_CPUS=1
	export QEMU_EXTRA="${QEMU_EXTRA:+$QEMU_EXTRA }-icount shift=0,sleep=off"
	export ORDLOCK_BENCH_ICOUNT=1
	BENCH=${BENCH:-b8_insn}
	# the guest's clock is not the host's: waiting for the host (9p)
	# leaps it forward, so that a guest-side timeout means nothing;
	# VM_TIMEOUT (real time, on the host) is the guard
	export TEST_TIMEOUT=${TEST_TIMEOUT:-1000000}
	accel_note="icount shift=0: guest ns = instructions"
fi
if [[ -z "${VM_ACCEL:-}" ]]; then
	if [[ -r /dev/kvm && -w /dev/kvm ]] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
		VM_ACCEL=kvm
	else
		VM_ACCEL=tcg
		if [[ -e /dev/kvm ]]; then
			accel_note="KVM not usable: /dev/kvm exists but the CPU offers no vmx/svm"
		else
			accel_note="KVM not available: no /dev/kvm"
		fi
	fi
fi
export VM_ACCEL
# TCG: the guest's TSC is consistent, and reading it is far cheaper than
# the HPET it picks by itself (every timestamp would be a system call).
if [[ $VM_ACCEL == tcg ]]; then
	export VM_APPEND="${VM_APPEND:+$VM_APPEND }clocksource=tsc tsc=reliable"
fi
export VM_CPUS=${VM_CPUS:-2}
export TEST_TIMEOUT=${TEST_TIMEOUT:-600}
export VM_TIMEOUT=${VM_TIMEOUT:-1800}
export ORDLOCK_BENCH_REPS=${ORDLOCK_BENCH_REPS:-7}

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== benchmarks in the VM ($VM_ACCEL, $VM_CPUS vCPUs; host load $load_start)"
rc=0
# shellcheck disable=SC2086
bash tests/vm/run.sh --bench ${BENCH:+b0_env $BENCH} || rc=$?
results=$(readlink -f tests/build/bench-results/latest)
[[ -d "$results" ]] || die "no results directory"

# The run's settings, as info rows for the report
row() { printf '0,%s,-,host,info,,0,,,,,%s\n' "$1" "${2//,/;}"; }
{
	row date "$(date -u '+%Y-%m-%d %H:%M UTC')"
	row accel "$VM_ACCEL"
	row accel_note "$accel_note"
	row reps "$ORDLOCK_BENCH_REPS"
	row scale "${ORDLOCK_BENCH_SCALE:-1}"
	row host_cpus "$(nproc)"
	row host_load "$load_start at start; $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	row module "$(git describe --always --dirty 2>/dev/null || echo unknown)"
	row qemu "$(qemu-system-x86_64 --version | head -n 1)"
	row icount "${ICOUNT:-0}"
} >"$results/host.csv"

echo "== report"
python3 tests/bench/report.py "$results" || die "no report (see $results)"
if ((rc != 0)); then
	echo "bench: the VM run was not complete (see above): the table is partial" >&2
	exit 1
fi
