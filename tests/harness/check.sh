#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh -- "make check": installs what is missing, builds everything, runs
# the host-side unit tests and the in-VM suite (T="name ..." limits the
# latter), then the in-VM suite again on the debug kernel (make check-debug;
# CHECK_DEBUG=0 skips it, and it is skipped with T= unless CHECK_DEBUG=1),
# prints a summary per part and, as the very last line,
# "N passed, N failed" over every TAP point and harness check.  Exits
# non-zero when anything failed.  Called by the top-level Makefile ($MAKE
# and MAKEFLAGS come from it; KDIR=/KVER=/C=1 pass through to the builds).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
MAKE=${MAKE:-make}
mk() { $MAKE --no-print-directory "$@"; }

# shellcheck source-path=SCRIPTDIR source=summary.sh
. tests/harness/summary.sh
summary_init check tests/build/results/

echo "== dependencies"
if ! bash tests/install-deps.sh; then
	echo "FAIL dependencies (tests/install-deps.sh)"
	add_summary 0 1
	finish
fi

echo "== build"
if ! mk -j"$(nproc)" all; then
	echo "FAIL build"
	add_summary 0 1
	finish
fi
add_summary 1 0
echo "PASS build"

echo "== kernel style (sparse, checkpatch --strict)"
(
	# shellcheck source-path=SCRIPTDIR source=tap.sh
	. tests/harness/tap.sh
	mkdir -p tests/build/results/lint
	rc=0
	MAKE=$MAKE bash tests/harness/lint.sh >tests/build/results/lint/lint.tap 2>&1 || rc=$?
	tap_eval "lint" tests/build/results/lint/lint.tap "$rc" /dev/null || true
	tap_record_summary
) || true

echo "== host unit tests"
mk -C tests unit-run || true

echo "== in-VM suite"
# what the VM boots, as the (re-read) Makefile sees it
eval "$(mk -s vm-env)"
export KVER VMLINUZ
# shellcheck disable=SC2086
bash tests/vm/run.sh ${T:-} || true

# The same suite on the debug kernel (KASAN, lockdep, kmemleak, UBSAN,
# failslab): on by default, so that CI runs it on every change; CHECK_DEBUG=0
# skips it, and a subset (T=...) runs only on Debian's kernel unless
# CHECK_DEBUG=1 asks for both.
if [[ ${CHECK_DEBUG:-} == 1 || (${CHECK_DEBUG:-} != 0 && -z ${T:-}) ]]; then
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

finish
