#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh -- "make check-debug": the whole in-VM suite on a debug kernel
# (KASAN, lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS, kmemleak, UBSAN, fault
# injection; see debug.config), plus the programs only that kernel can run
# (tests/debug-kernel/cases/: failslab).  Steps:
#
#   1. what building the kernel needs (tests/install-deps.sh --debug-kernel)
#   2. the kernel, built once and cached outside the repository (build.sh)
#   3. the module built against it, from a copy of kmod/ in
#      tests/build/debug/mod/ (kmod/ordlock.ko, built for Debian's kernel,
#      is left alone), the tools and the test programs
#   4. tests/vm/run.sh --debug: the suite, judged as by make check plus
#      the reports of every checker and a kmemleak scan after the module
#      was unloaded
#
# Ends with "N passed, N failed" and exits non-zero when anything failed.
# T="name ..." runs only those programs.  The debug kernel is several times
# slower than Debian's: TEST_TIMEOUT (per program) and VM_TIMEOUT default to
# 900 and 5400 seconds here.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
# $MAKE, mk, summary_init, add_summary, finish
# shellcheck source-path=SCRIPTDIR source=../harness/summary.sh
. tests/harness/summary.sh
summary_init check-debug tests/build/results/debug
fail_step() { # fail_step WHAT
	echo "FAIL $1"
	add_summary 0 1
	finish
}

echo "== dependencies"
bash tests/install-deps.sh --debug-kernel || fail_step "dependencies (tests/install-deps.sh --debug-kernel)"

echo "== debug kernel"
t_kernel=$(date +%s)
env_out=$(bash tests/debug-kernel/build.sh) || fail_step "debug kernel build (tests/debug-kernel/build.sh)"
eval "$env_out"
echo "debug kernel $DEBUG_KVER ($(($(date +%s) - t_kernel))s): $DEBUG_VMLINUZ"

echo "== build"
mod=tests/build/debug/mod
if ! MAKE=$MAKE bash tests/harness/build-module.sh "$DEBUG_KDIR" "$mod" ORDLOCK_WERROR=1; then
	fail_step "build: the module against the debug kernel"
fi
if ! mk -j"$(nproc)" tools tests; then
	fail_step "build: tools and tests"
fi
add_summary 1 0
echo "PASS build"

echo "== in-VM suite on the debug kernel"
# shellcheck disable=SC2086 # T is a list of names
KVER=$DEBUG_KVER VMLINUZ=$DEBUG_VMLINUZ ORDLOCK_KO=$repo/$mod/kmod/ordlock.ko \
	TEST_TIMEOUT=${TEST_TIMEOUT:-900} VM_TIMEOUT=${VM_TIMEOUT:-5400} \
	bash tests/vm/run.sh --debug ${T:-} || true

finish
