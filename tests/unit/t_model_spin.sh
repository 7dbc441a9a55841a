#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_model_spin -- the model check of the fast-path word protocol
# (tests/model/fastpath.pml, docs/fastpath.md) by spin: each configuration
# is generated (spin -a), compiled (cc) and searched exhaustively (./pan:
# assertions, the monitor's invariants, invalid end states such as a waiter
# left asleep for ever); any error fails its point.  Then every planted bug
# of the model is searched in a configuration that exposes it, and each
# must be found (the checker can fail).  TAP; skips without spin
# (tests/install-deps.sh installs it).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here" && git rev-parse --show-toplevel 2>/dev/null) || repo=$(cd "$here/../.." && pwd)
[[ -f $repo/tests/model/fastpath.pml ]] || repo=$(cd "$here/../../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=../harness/spin.sh
. "$repo/tests/harness/spin.sh"
spin_setup fastpath.pml "-DSAFETY -DVECTORSZ=512" 20000

# The protocol: every configuration searched completely, no error
cfgs=(
	"-DNU=2 -DKILLS=0 -DNOSTALE|2 owners, lease revocation at any step, timeouts"
	"-DNU=2 -DREVOKES=0 -DNOSTALE|2 owners killed at any step outside the kernel (between CAS and push, asleep), timeouts"
	"-DNU=2 -DNOSTALE|2 owners, one killed and one revoked at any steps, timeouts"
	"-DNU=2 -DKILLS=0 -DREVOKES=0 -DNOTIMEOUT -DROUNDS=2|2 owners taking the key twice, a stale copy of owner 1 releasing an old hold"
	"-DNU=3 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DNOTIMEOUT|3 owners: two waiters queued FIFO behind a holder"
)
for c in "${cfgs[@]}"; do
	# shellcheck disable=SC2086
	spin_search ${c%%|*}
	point $? "no error: ${c#*|} (${c%%|*})"
done

# Planted bugs: each must be found
bugs=(
	"-DBUG_STORE_W -DNU=2 -DREVOKES=0 -DNOSTALE|the kernel sets WAITERS with a store, not a CAS (a lost wake-up)"
	"-DBUG_NO_PENDING -DNU=2 -DREVOKES=0 -DNOSTALE|the death clean-up ignores the pending slot (death between CAS and push)"
	"-DBUG_OWNER_ONLY -DNU=2 -DKILLS=0 -DREVOKES=0 -DNOTIMEOUT -DROUNDS=2|a release compares the owner, not the generation (a stale copy frees a newer hold)"
	"-DBUG_RELEASE_IGNORES_W -DNU=2 -DKILLS=0 -DREVOKES=0 -DNOSTALE|the user's release CAS ignores WAITERS"
	"-DBUG_WAKE_RETRY -DNU=3 -DKILLS=0 -DREVOKES=0 -DNOSTALE -DNOTIMEOUT|a release wakes the head to retry instead of handing over (barging)"
	"-DBUG_WALK_BEFORE_FLAG -DNU=2 -DKILLS=0 -DNOSTALE|the revocation walks the words before it raises the flag (an acquire between the two keeps the key)"
	"-DBUG_FLAG_BEFORE_CAS -DNU=2 -DKILLS=0 -DNOSTALE|the library reads the revoked flag before its CAS, not after (the same acquire, seen by neither side)"
)
for c in "${bugs[@]}"; do
	# shellcheck disable=SC2086
	spin_search ${c%%|*}
	[[ $? == 1 ]]
	point $? "planted bug found: ${c#*|}"
done
echo "1..$n"
((failed == 0))
