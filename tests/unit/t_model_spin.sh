#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_model_spin -- the model checks of the fast-path word protocol
# (tests/model/fastpath.pml, docs/fastpath.md) and of slot recycling
# (tests/model/fastslots.pml) by spin: each configuration
# is generated (spin -a), compiled (cc) and searched exhaustively (./pan:
# assertions, the monitor's invariants, invalid end states such as a waiter
# left asleep for ever); any error fails its point.  Then every planted bug
# of the model is searched in a configuration that exposes it, and each
# must be found (the checker can fail).  TAP; skips without spin
# (tests/install-deps.sh installs it).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
# shellcheck source-path=SCRIPTDIR source=../harness/spin.sh
. "$repo/tests/harness/spin.sh"
# pan.c is compiled without optimisation: the kernel's paths are inlines
# inlined in one another (pan.c ~400 KB), which cc -O1 takes 80 s of CPU
# to compile, -O0 2.5 s, for searches of well under a second either way
spin_opt=-O0
spin_setup fastpath.pml "-DSAFETY -DCOLLAPSE -DVECTORSZ=512" 20000

# The protocol: every configuration searched completely, no error
cfgs=(
	"-DNU=2 -DKILLS=0 -DNOSTALE|2 owners, lease revocation at any step, timeouts"
	"-DNU=2 -DREVOKES=0 -DNOSTALE|2 owners killed at any step outside the kernel (between CAS and push, asleep), timeouts"
	"-DNU=2 -DNOSTALE|2 owners, one killed and one revoked at any steps, timeouts"
	"-DNU=2 -DKILLS=0 -DREVOKES=0 -DNOTIMEOUT -DROUNDS=2|2 owners taking the key twice, a stale copy of owner 1 releasing an old hold"
	"-DNU=3 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DNOTIMEOUT|3 owners: two waiters queued FIFO behind a holder"
	"-DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DNOTIMEOUT -DROUNDS=2|a holder looping acquire/release by CAS, the other owner waiting in the kernel: never left asleep (issue 40)"
	"-DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DROUNDS=2|the same with timeouts: a waiter times out only while the key is held"
	"-DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DNOTIMEOUT -DROUNDS=3|a holder looping past a woken waiter: passed at most MAXPASS times, then handed the key (issue 40)"
	"-DNOPASS -DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DROUNDS=2|passing off (handoff_us=0): every contended release hands over"
)
spin_points 0 "${cfgs[@]}"

# Planted bugs: each must be found
bugs=(
	"-DBUG_STORE_W -DNU=2 -DREVOKES=0 -DNOSTALE|the kernel sets WAITERS with a store, not a CAS (a lost wake-up)"
	"-DBUG_NO_PENDING -DNU=2 -DREVOKES=0 -DNOSTALE|the death clean-up ignores the pending slot (death between CAS and push)"
	"-DBUG_OWNER_ONLY -DNU=2 -DKILLS=0 -DREVOKES=0 -DNOTIMEOUT -DROUNDS=2|a release compares the owner, not the generation (a stale copy frees a newer hold)"
	"-DBUG_RELEASE_IGNORES_W -DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE|the user's release CAS ignores WAITERS"
	"-DBUG_WAKE_RETRY -DNU=3 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DNOTIMEOUT|a release wakes the head to retry instead of handing over (barging)"
	"-DBUG_WALK_BEFORE_FLAG -DNU=2 -DKILLS=0 -DNOSTALE|the revocation walks the words before it raises the flag (an acquire between the two keeps the key)"
	"-DBUG_FLAG_BEFORE_CAS -DNU=2 -DKILLS=0 -DNOSTALE|the library reads the revoked flag before its CAS, not after (the same acquire, seen by neither side)"
	"-DBUG_QUEUED_GIVES_UP -DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DNOTIMEOUT -DROUNDS=2 -DNOMONITOR|today's bounded ordlock_fast_queued() (issue 40): a waiter left asleep for ever, the key free, once the looping holder stops"
	"-DBUG_QUEUED_GIVES_UP -DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DROUNDS=2 -DNOMONITOR|today's ordlock_fast_queued() with timeouts: a waiter times out on a free key"
	"-DBUG_BARGER_CLEARS_W -DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DNOTIMEOUT -DROUNDS=2 -DNOMONITOR|a member's CAS on a word freed for a woken waiter drops WAITERS: the waiter, passed, asleep for ever"
	"-DBUG_PASS_CLEARS_W -DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DNOTIMEOUT -DROUNDS=2 -DNOMONITOR|a release that passes the head frees the word without WAITERS: the same"
	"-DBUG_PASS_UNBOUNDED -DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DNOTIMEOUT -DROUNDS=3|the head passed whatever its count: past the bound"
)
spin_points 1 "${bugs[@]}"

# Slot recycling (tests/model/fastslots.pml, issue 40 item 2): a stale
# cached slot never takes another key (the word's incarnation), a slot
# whose key is held is never recycled, the incarnation never wraps onto one
# a stale member caches
rm -rf "$spin_work"
spin_setup fastslots.pml "-DSAFETY" 100000
cfgs=(
	"-DNM=2 -DNKEYS=2|slots: 2 members, 2 keys, one slot recycled back and forth, stale caches"
	"-DNM=3 -DNKEYS=2|slots: 3 members, 2 keys: a key held by CAS keeps its slot, the kernel grants a key without one"
	"-DNM=3 -DNKEYS=3 -DINCN=2|slots: 3 keys, a 1-bit incarnation: no recycling onto one a stale member caches"
)
spin_points 0 "${cfgs[@]}"
bugs=(
	"-DBUG_NO_INC|slots: a recycled slot keeps its incarnation: a stale cache takes the new key"
	"-DBUG_RECYCLE_HELD -DNM=3 -DNKEYS=2 -DROUNDS=1|slots: a slot recycled while a member holds its word: its key granted twice"
	"-DBUG_NO_GUARD -DNM=3 -DNKEYS=3 -DINCN=2|slots: the incarnation wraps onto one a stale member caches"
)
spin_points 1 "${bugs[@]}"
unit_done
