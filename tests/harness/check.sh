#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh -- "make check": installs what is missing, builds everything, runs
# the host-side unit tests, then the in-VM suite on each kernel of the test
# matrix (tests/kver.sh --matrix: Debian 12's 6.1, 6.12 and 6.12 PREEMPT_RT;
# only $CHECK_KVER when make check was given KVER= or KDIR=), each with
# the module built for it with -Werror and sparse, then the in-VM suite
# again on the debug kernel (make check-debug; CHECK_DEBUG=0 skips it, and
# it is skipped with T= or KVER= unless CHECK_DEBUG=1), and with
# CHECK_CLUSTER=1 the cluster suite (make check-cluster) on each kernel of
# the matrix, or only on the flavours CHECK_CLUSTER_FLAVOURS names ("6.1":
# CI's, to stay inside its budget; docs/testing.md).  T="name ..."
# limits the in-VM programs.  Prints a summary per part (each line of a
# kernel's part starts "[6.12-rt] ", say) and, as the very last line,
# "N passed, N failed" over every TAP point and harness check.  Exits
# non-zero when anything failed.  Called by the top-level Makefile ($MAKE
# and MAKEFLAGS come from it).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
# $MAKE, mk, summary_init, add_summary, finish
# shellcheck source-path=SCRIPTDIR source=summary.sh
. tests/harness/summary.sh
summary_init check tests/build/results/

echo "== dependencies"
if ! bash tests/install-deps.sh; then
	echo "FAIL dependencies (tests/install-deps.sh)"
	add_summary 0 1
	finish
fi

# Each kernel's in-VM suite, the debug kernel's too, runs in two guests at
# once (tests/vm/run.sh's lanes): about half the time of one guest on this
# two-core machine.  VM_LANES=1 runs one guest.
export VM_LANES=${VM_LANES:-2}

# The kernels: "FLAVOUR KVER" lines
if [[ -n ${CHECK_KVER:-} ]]; then
	kernels="$CHECK_KVER $CHECK_KVER"
else
	kernels=$(sh tests/kver.sh --matrix)
fi
kvers=$(while read -r _ k; do echo "$k"; done <<<"$kernels")
echo "kernels: $(while read -r f k; do printf '%s (%s)  ' "$f" "${k:-missing}"; done <<<"$kernels")"

# The debug kernel (its part comes after the three kernels' suites) is
# built from here on in the background, at the lowest priority: built once
# it is cached (tests/debug-kernel/build.sh), and its 10-15 CPU-minutes go
# into the time the build, the unit tests and the guests leave idle.  The
# debug part's own call of build.sh waits for this one, then finds it done.
run_debug=0
if [[ ${CHECK_DEBUG:-} == 1 || (${CHECK_DEBUG:-} != 0 && -z ${T:-} && -z ${CHECK_KVER:-}) ]]; then
	run_debug=1
	mkdir -p tests/build/results
	echo "debug kernel: building in the background (tests/build/results/debug-kernel-build.log)"
	setsid nice -n 19 bash tests/debug-kernel/build.sh \
		>tests/build/results/debug-kernel-build.log 2>&1 </dev/null &
	debug_build=$!
	# a check that stops early (finish) stops the build too
	trap 'rm -f "$summary"; kill -- -"$debug_build" 2>/dev/null || true' EXIT
fi

echo "== build"
if ! mk -j"$(nproc)" all ORDLOCK_WERROR=1; then
	echo "FAIL build"
	add_summary 0 1
	finish
fi
add_summary 1 0
echo "PASS build"

echo "== kernel style (each kernel: -Werror and sparse; checkpatch --strict)"
(
	# shellcheck source-path=SCRIPTDIR source=tap.sh
	. tests/harness/tap.sh
	mkdir -p tests/build/results/lint
	rc=0
	LINT_KVERS=$kvers MAKE=$MAKE bash tests/harness/lint.sh >tests/build/results/lint/lint.tap 2>&1 || rc=$?
	tap_eval "lint" tests/build/results/lint/lint.tap "$rc" /dev/null || true
	tap_record_summary
) || true

echo "== host unit tests"
# t_dkms builds through DKMS for each kernel
ORDLOCK_KVERS=$kvers mk -C tests unit-run || true

# The in-VM suite on each kernel, with the module lint.sh built for it
while read -r flavour kver; do
	echo "== in-VM suite on $flavour (${kver:-not installed})"
	if [[ -z $kver ]]; then
		echo "FAIL [$flavour] no $flavour kernel with headers (tests/install-deps.sh)"
		add_summary 0 1
		continue
	fi
	vmlinuz=/boot/vmlinuz-$kver
	[[ -n ${CHECK_VMLINUZ:-} ]] && vmlinuz=$CHECK_VMLINUZ
	# T is a list of names: split on purpose
	# shellcheck disable=SC2086
	ORDLOCK_PART=$flavour KVER=$kver VMLINUZ=$vmlinuz \
		ORDLOCK_KO=$repo/tests/build/kernels/$kver/kmod/ordlock.ko \
		bash tests/vm/run.sh ${T:-} || true
done <<<"$kernels"

# The same suite on the debug kernel (KASAN, lockdep, kmemleak, UBSAN,
# failslab): on by default, so that CI runs it on every change; CHECK_DEBUG=0
# skips it, and a subset (T=...) or one kernel (KVER=...) runs only on
# Debian's kernels unless CHECK_DEBUG=1 asks for the debug kernel too.
if ((run_debug)); then
	echo "== debug kernel (make check-debug; CHECK_DEBUG=0 skips it)"
	mkdir -p tests/build/results
	dlog=tests/build/results/check-debug.log
	# its own closing line is renamed: only the last line of make check
	# may read "N passed, N failed"
	(bash tests/debug-kernel/check.sh 2>&1 || true) |
		sed -u -E 's/^([0-9]+ passed, [0-9]+ failed)$/check-debug: \1/' |
		tee "$dlog" || true
	last=$(grep -E '^check-debug: [0-9]+ passed, [0-9]+ failed$' "$dlog" | tail -n 1)
	if [[ $last =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
		add_summary "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
	else
		echo "FAIL debug kernel suite: no verdict (see $dlog)"
		add_summary 0 1
	fi
fi

# The cluster suite (make check-cluster: three guests, corosync and the
# DLM in a network namespace of its own) on each kernel of the matrix,
# with the modules built for it apart (tests/cluster/build-kernel.sh):
# when CHECK_CLUSTER=1 (.ci/run sets it), and not with T= or KVER=.
if [[ ${CHECK_CLUSTER:-} == 1 && -z ${T:-} && -z ${CHECK_KVER:-} ]]; then
	echo "== cluster suite (make check-cluster, ${CHECK_CLUSTER_FLAVOURS:-each kernel})"
	mkdir -p tests/build/results
	if ! bash tests/install-deps.sh --cluster; then
		echo "FAIL cluster suite: its packages (tests/install-deps.sh --cluster)"
		add_summary 0 1
		finish
	fi
	while read -r flavour kver; do
		[[ -n $kver ]] || continue # the in-VM part failed it already
		if [[ -n ${CHECK_CLUSTER_FLAVOURS:-} && " $CHECK_CLUSTER_FLAVOURS " != *" $flavour "* ]]; then
			echo "== cluster suite on $flavour: not in CHECK_CLUSTER_FLAVOURS ($CHECK_CLUSTER_FLAVOURS)"
			continue
		fi
		clog=tests/build/results/check-cluster-$flavour.log
		echo "== cluster suite on $flavour ($kver)"
		if ! bash tests/cluster/build-kernel.sh "$kver" >"$clog" 2>&1; then
			tail -n 20 "$clog"
			echo "FAIL [$flavour] cluster suite: the modules do not build (see $clog)"
			add_summary 0 1
			continue
		fi
		# Without ORDLOCK_SUMMARY the cluster run closes with the plain
		# "N passed, N failed", which becomes "check-cluster [6.1]: ..."
		# so that only this script's total is plain.
		out=tests/build/kernels/$kver
		# c_faults' short schedule (run.sh: CLUSTER_SHORT_FAULTS) on the
		# flavours CHECK_FAULTS_FLAVOURS names (default "6.1": about 2.5
		# minutes a kernel; docs/testing.md), "all" for each
		short=${CLUSTER_SHORT_FAULTS-7 5}
		case " ${CHECK_FAULTS_FLAVOURS:-6.1} " in
		*" all "* | *" $flavour "*) ;;
		*) short= ;;
		esac
		(env -u ORDLOCK_SUMMARY KVER="$kver" VMLINUZ="/boot/vmlinuz-$kver" \
			CLUSTER_SHORT_FAULTS="$short" \
			ORDLOCK_KO="$repo/$out/kmod/ordlock.ko" \
			ORDLOCK_CLTEST_KO="$repo/$out/cltest/ordlock_cltest.ko" \
			bash tests/cluster/run.sh 2>&1; echo "cluster-exit: $?") |
			sed -u -E "s/^([0-9]+ passed, [0-9]+ failed)\$/check-cluster [$flavour]: \1/" |
			tee -a "$clog" || true
		# one closing line per cluster booted (a case that kills a node
		# beyond the first gets a cluster of its own): all of them count;
		# a run that failed with no failed point in them (a cluster that
		# never gave its verdict) is one failure more
		verdicts=$(grep -E "^check-cluster \[$flavour\]: [0-9]+ passed, [0-9]+ failed\$" "$clog" || true)
		if [[ -n $verdicts ]]; then
			nfail=0
			while read -r line; do
				[[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]] &&
					add_summary "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" &&
					nfail=$((nfail + BASH_REMATCH[2]))
			done <<<"$verdicts"
			if ! grep -qx 'cluster-exit: 0' "$clog" && ((nfail == 0)); then
				echo "FAIL [$flavour] cluster suite: a run failed without a failed point (see $clog)"
				add_summary 0 1
			fi
		else
			echo "FAIL [$flavour] cluster suite: no verdict (see $clog)"
			add_summary 0 1
		fi
	done <<<"$kernels"
fi

finish
