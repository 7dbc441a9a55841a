#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_model_slots -- the model check of slot recycling in the fast path
# (tests/model/fastslots.pml, issue 40 item 2) by spin: a stale cached slot
# never takes another key (the word's incarnation), a slot whose key is held
# is never recycled, the incarnation never wraps onto one a stale member
# caches.  Each configuration searched completely without an error, then
# each planted bug must be found.  TAP; skips without spin.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
# shellcheck source-path=SCRIPTDIR source=../harness/spin.sh
. "$repo/tests/harness/spin.sh"
spin_opt=-O0
spin_setup fastslots.pml "-DSAFETY" 100000

cfgs=(
	"-DNM=2 -DNKEYS=2|2 members, 2 keys, one slot recycled back and forth, stale caches"
	"-DNM=3 -DNKEYS=2|3 members, 2 keys: a key held by CAS keeps its slot, the kernel grants a key without one"
	"-DNM=3 -DNKEYS=3 -DINCN=2|3 keys, a 1-bit incarnation: no recycling onto one a stale member caches"
)
spin_points 0 "${cfgs[@]}"

bugs=(
	"-DBUG_NO_INC|a recycled slot keeps its incarnation: a stale cache takes the new key"
	"-DBUG_RECYCLE_HELD -DNM=3 -DNKEYS=2 -DROUNDS=1|a slot recycled while a member holds its word: its key granted twice"
	"-DBUG_NO_GUARD -DNM=3 -DNKEYS=3 -DINCN=2|the incarnation wraps onto one a stale member caches"
)
spin_points 1 "${bugs[@]}"
unit_done
