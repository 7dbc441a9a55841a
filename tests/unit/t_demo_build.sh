#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_demo_build -- "make demo" builds what the demo runs and nothing more
# (issue 42: it built every test program, 116 compiles, 21 cluster and 27
# unit objects among them): a dry run ("make -n demo-run", its sub-makes
# run with -n too) into a scratch build directory (B=) compiles the test
# library and tests/demo's programs, and no in-VM case, cluster program,
# unit test or debug-kernel case. TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
unset MAKEFLAGS MFLAGS MAKELEVEL
unit_work
out=$(make -n --no-print-directory -C "$repo" demo-run B="$work/b" 2>&1)
point $? "make -n demo-run B=scratch"
demos=$(ls "$repo"/tests/demo/*.c | wc -l)
built=$(grep -cE ' demo/[a-z_-]+\.c' <<<"$out")
[[ $built -ge $demos ]]
point $? "it compiles tests/demo's programs ($built of $demos)"
others=$(grep -oE ' (cases|cluster/cases|cluster/bench|unit|debug-kernel/cases|bench|fuzz)/[a-z0-9_-]+\.c' <<<"$out" | sort -u)
[[ -z $others ]]
point $? "and no other test program ($(wc -w <<<"$others") compiled)" "$others"
grep -q 'run.sh --demo' <<<"$out"
point $? "then boots the VM for the demo (tests/vm/run.sh --demo)"
unit_done
