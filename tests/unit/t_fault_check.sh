#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_fault_check -- the checker of make check-faults
# (tests/cluster/lib/fault_check.awk) on synthetic histories: a clean one
# passes (with a lease revocation, a fenced stale write and a killed
# holder, all legitimate), and each planted bug is caught, with its own
# message: a token going backwards, two live holders overlapping, the
# storage accepting a lower token, a lost update (a write accepted after
# another op's write since it read), a wait past its timeout, a key held
# after its holder's lease ended, a key held after its node was killed, a
# grant never released, a grant logged for an op that was never granted,
# a deadlock victim (EDEADLK: false, the ops take their keys in ascending
# order; the detect policy's runs, issue 41).
# (issue 27: the checker must be able to fail.)  A stale end is believed
# only when plausible (issue 41): a backwards token of an op that ends
# stale=1 after 3.2 s of its 10 s lease is caught; after its lease, or in
# a fault of its node, it is a revocation.  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
checker=$repo/tests/cluster/lib/fault_check.awk
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # check DIR [LEASE_MS]: the checker over the files of DIR, output in DIR.out
	awk -v lease_ms="${2:-3000}" -v wait_bound_ms=5000 -v gone_bound_ms=10000 -v kill_bound_ms=30000 -v clock_skew_ms=500 \
		-f "$checker" "$1"/h.* "$1"/grants.* "$1"/store "$1"/host >"$1.out" 2>&1
}

# The clean history: node 1 and node 2 take 1:1 and 1:2 in turn; op 1.2
# is stopped past its lease, revoked (stale), its write fenced; op 2.2 got
# the keys while 1.2's marker was still there (legitimate: 1.2 was
# revoked), read them through the storage, and the storage fenced 1.2's
# late write; node 3 holds 1:3 when the host kills it, and op 2.3, waiting
# for 1:3, gets it 8 s later.
clean=$tmp/clean
mkdir -p "$clean"
cat >"$clean/h.1" <<'EOF'
1000 1 1.1 invoke keys=1:1,1:2 timeout=10000
1100 1 1.1 ok token=100
1200 1 1.1 write result=accepted
1210 1 1.1 end stale=0
1250 1 1.1 exit rc=0
2000 1 1.2 invoke keys=1:1,1:2 timeout=10000
2100 1 1.2 ok token=300
9000 1 1.2 write result=fenced
9010 1 1.2 end stale=1
9050 1 1.2 exit rc=0
EOF
cat >"$clean/h.2" <<'EOF'
1050 2 2.1 invoke keys=1:1,1:2 timeout=10000
1300 2 2.1 ok token=200
1400 2 2.1 write result=accepted
1410 2 2.1 end stale=0
1450 2 2.1 exit rc=0
2500 2 2.2 invoke keys=1:2,1:1 timeout=10000
5300 2 2.2 ok token=400
5400 2 2.2 write result=accepted
5410 2 2.2 end stale=0
5450 2 2.2 exit rc=0
20000 2 2.3 invoke keys=1:3,1:1 timeout=60000
29000 2 2.3 ok token=600
29100 2 2.3 write result=accepted
29110 2 2.3 end stale=0
29150 2 2.3 exit rc=0
30000 2 2.4 invoke keys=1:1 timeout=2000
32100 2 2.4 exit rc=75 reason=timeout
EOF
cat >"$clean/h.3" <<'EOF'
10000 3 3.1 invoke keys=1:3 timeout=10000
10100 3 3.1 ok token=500
EOF
cat >"$clean/grants.1" <<'EOF'
1100 1 1.1 grant key=1:1 token=100 prev=-
1300 2 2.1 grant key=1:1 token=200 prev=-
2100 1 1.2 grant key=1:1 token=300 prev=-
5300 2 2.2 grant key=1:1 token=400 prev=1.2
29000 2 2.3 grant key=1:1 token=600 prev=-
EOF
cat >"$clean/grants.2" <<'EOF'
1100 1 1.1 grant key=1:2 token=100 prev=-
1300 2 2.1 grant key=1:2 token=200 prev=-
2100 1 1.2 grant key=1:2 token=300 prev=-
5300 2 2.2 grant key=1:2 token=400 prev=1.2
EOF
cat >"$clean/grants.3" <<'EOF'
10100 3 3.1 grant key=1:3 token=500 prev=-
29000 2 2.3 grant key=1:3 token=600 prev=3.1
EOF
cat >"$clean/store" <<'EOF'
1110 1 1.1 store result=registered token=100 keys=1:1,1:2
1200 1 1.1 store result=accepted token=100 keys=1:1,1:2
1310 2 2.1 store result=registered token=200 keys=1:1,1:2
1400 2 2.1 store result=accepted token=200 keys=1:1,1:2
2110 1 1.2 store result=registered token=300 keys=1:1,1:2
5310 2 2.2 store result=registered token=400 keys=1:2,1:1
5400 2 2.2 store result=accepted token=400 keys=1:2,1:1
9000 1 1.2 store result=fenced token=300 keys=1:1,1:2
29010 2 2.3 store result=registered token=600 keys=1:3,1:1
29100 2 2.3 store result=accepted token=600 keys=1:3,1:1
EOF
cat >"$clean/host" <<'EOF'
3000 0 - gstop node=3 ms=2000
21000 0 - kill node=3
EOF
check "$clean"
point $? "a clean history passes ($(tail -n 1 "$clean.out"))"
grep -q '^checked: 7 ops, 6 granted, 1 timed out or refused, 11 key grants, 3 overlaps of revoked or dead holders, 1 stale ends (0 unknown; 1 after the lease, 0 in a fault, 0 not plausible: taken as held)' "$clean.out"
point $? "its figures are counted (ops, grants, timeouts, overlaps of revoked or dead holders, stale ends and why)"
grep -q 'not granted by reason: timeout 1 deadlock 0 other 0' "$clean.out"
point $? "the requests not granted are counted by reason (1 timeout, no deadlock victim)"

# plant BUG-NAME EXPECTED-MESSAGE-RE SED-ON-FILE...: a copy of the clean
# history with the files changed by the sed scripts; the checker must fail
# with a message matching the RE
# variant NAME SED-ON-FILE...: a copy of the clean history in $tmp/NAME,
# changed by the sed scripts
# (a copy of $base: the clean history unless said otherwise)
base=$clean
variant() {
	local d=$tmp/$1
	shift
	cp -r "$base" "$d"
	while (($#)); do
		sed -i -e "$2" "$d/$1" || return 1
		shift 2
	done
}
plant() {
	local name=$1 re=$2 d=$tmp/$1
	shift 2
	variant "$name" "$@" || return 1
	check "$d"
	local rc=$?
	((rc == 1)) && grep -Eq "$re" "$d.out"
	point $? "planted $name: caught ($(grep -m1 '^violation' "$d.out" || echo "rc $rc, nothing"))"
}
plant "backwards token" '^violation: key 1:1: grant 5 \(op 2.3, token 350\) not above grant of op 2.2' \
	grants.1 's/token=600 prev=-/token=350 prev=-/'
plant "backwards token of a revoked holder" '^violation: key 1:1: grant of op 1.2 \(token 50\) not above grant of op 1.1 \(token 100\), granted before op 1.2 asked' \
	grants.1 's/token=300 prev=-/token=50 prev=-/'
plant "token of a revoked holder not below a later grant's" '^violation: key 1:1: grant 5 \(op 2.3, token 600\) not above grant of op 1.2 \(token 700\), logged before it' \
	grants.1 's/token=300 prev=-/token=700 prev=-/'
plant "overlap of live holders" '^violation: key 1:1: op 2.2 was granted while op 1.2 still held it' \
	h.1 's/1.2 end stale=1/1.2 end stale=0/'
plant "storage accepting a lower token" '^violation: storage: key 1:1 accepted token 300' \
	store 's/result=fenced token=300/result=accepted token=300/'
plant "lost update (a write accepted after another op's since it read)" '^violation: storage: key 1:1: op 2.1.s write accepted, but op 1.1.s was accepted after op 2.1 read it' \
	store '/^1310 2 2.1 store result=registered/d' store '1a 1150 2 2.1 store result=registered token=200 keys=1:1,1:2'
plant "wait past its timeout" '^violation: op 2.4 .* waited 9100 ms, timeout 2000 ms' \
	h.2 's/^32100 2 2.4 exit/39100 2 2.4 exit/'
plant "key held after the lease" '^violation: key 1:1: op 1.2 .* gone at 5100, op 2.2 still waited' \
	h.2 's/^5300 2 2.2 ok/20000 2 2.2 ok/;s/2.2 invoke keys=1:2,1:1 timeout=10000/2.2 invoke keys=1:2,1:1 timeout=30000/' grants.1 's/^5300 2 2.2/20000 2 2.2/' grants.2 's/^5300 2 2.2/20000 2 2.2/'
plant "key held after its node was killed" '^violation: key 1:3: op 3.1 .* gone at 21000, op 2.3 still waited' \
	h.2 's/^29000 2 2.3 ok/59000 2 2.3 ok/;s/^20000 2 2.3 invoke keys=1:3,1:1 timeout=60000/20000 2 2.3 invoke keys=1:3,1:1 timeout=90000/'
# a deadlock victim (the detect policy, issue 41): the ops take their keys
# in ascending order, no cycle can exist, so EDEADLK is a false victim
plant "false victim" '^violation: false victim: op 2.4 \(node 2, keys 1:1\) failed with EDEADLK \(reason deadlock, exit 75\)' \
	h.2 's/^32100 2 2.4 exit rc=75 reason=timeout/32100 2 2.4 exit rc=75 reason=deadlock/'
plant "grant never released" '^violation: op 2.1 .* never ended' \
	h.2 '/^1450 2 2.1 exit/d'
plant "grant logged without ok" '^violation: key 1:1: grant 2 by op 2.1, which has no ok' \
	h.2 '/^1300 2 2.1 ok/d'

# pass NAME SED-ON-FILE...: a copy of the clean history changed by the sed
# scripts, still legitimate: the checker must pass it
pass() {
	local name=$1 d=$tmp/$1
	shift
	variant "$name" "$@" || return 1
	check "$d"
	point $? "legitimate $name: passes ($(grep -m1 '^violation' "$d.out" || tail -n 1 "$d.out"))"
}
# A holder stopped right after its grant, past its lease, writes its key
# log line after the next holder's (seed 5 on 6.12-rt): the marker orders it.
pass "late log line of a revoked holder" \
	grants.1 '/^2100 1 1.2 grant/d;$a 2100 1 1.2 grant key=1:1 token=300 prev=-'
grep -q '3 grants ordered by the marker alone' "$tmp/late log line of a revoked holder.out"
point $? "the late line is counted as ordered by the marker alone"
plant "token not above the one of the marker found" '^violation: key 1:1: grant of op 2.2 \(token 400\) not above grant of op 1.2 \(token 450\), whose marker it found' \
	grants.1 '/^2100 1 1.2 grant/d;$a 2100 1 1.2 grant key=1:1 token=450 prev=-'
# A holder stopped between its two keys, past its lease, finds the marker
# of the next holder of its second key and logs its line after it (seed
# 5's replay): legitimate, its own grant was revoked.
pass "revoked holder finding the next holder's marker" \
	grants.1 '/^2100 1 1.2 grant/d;/^5300 2 2.2 grant/s/prev=1.2/prev=-/;$a 9000 1 1.2 grant key=1:1 token=300 prev=2.2'
plant "two grants of one token" '^violation: key 1:1: grant 5 \(op 2.3\) has the token 400 of op 2.2' \
	grants.1 's/token=600 prev=-/token=400 prev=-/'
# A partition of the node that masters the key stalls the DLM: a key held
# past the lease's bound while it lasted gets the kill bound (seed 2 on 6.1)
pass "a key held past the lease's bound during a partition" \
	h.2 's/^5300 2 2.2 ok/20000 2 2.2 ok/;s/2.2 invoke keys=1:2,1:1 timeout=10000/2.2 invoke keys=1:2,1:1 timeout=30000/' grants.1 's/^5300 2 2.2/20000 2 2.2/' grants.2 's/^5300 2 2.2/20000 2 2.2/' \
	host '1a 9000 0 - part node=1 ms=4000' host '2a 13000 0 - part-end node=1'

# A stale end is ordlock's own answer, believed only when plausible (issue
# 41): node 1's op 1.1 holds 1:1 and 1:2 (lease 10 s); node 2's op 2.1
# asked meanwhile (so no "ok before invoke" orders the two), is granted
# after 1.1's exit with a token below 1.1's (backwards), its read fenced,
# and ends stale=1 3.2 s after its grant: no lease ended, no fault touched
# node 2, so it is taken as held to its end and the token is caught.
st=$tmp/stale
mkdir -p "$st"
# lines FILE LINE...: the history's FILE, one event a line
lines() { local f=$st/$1; shift; printf '%s\n' "$@" >"$f"; }
lines h.1 "1000 1 1.1 invoke keys=1:1,1:2 timeout=10000" "1100 1 1.1 ok token=100" \
	"1200 1 1.1 write result=accepted" "1210 1 1.1 end stale=0" "1250 1 1.1 exit rc=0"
lines h.2 "1050 2 2.1 invoke keys=1:1,1:2 timeout=10000" "1300 2 2.1 ok token=50" \
	"4490 2 2.1 write result=fenced" "4500 2 2.1 end stale=1" "4550 2 2.1 exit rc=0"
for k in 1 2; do
	lines grants.$k "1100 1 1.1 grant key=1:$k token=100 prev=-" "1300 2 2.1 grant key=1:$k token=50 prev=-"
done
lines store "1110 1 1.1 store result=registered token=100 keys=1:1,1:2" \
	"1200 1 1.1 store result=accepted token=100 keys=1:1,1:2" \
	"1310 2 2.1 store result=read-fenced token=50 keys=1:1,1:2"
: >"$st/host"
check "$st" 10000
rc=$?
((rc == 1)) && grep -q '^violation: key 1:1: grant 2 (op 2.1, token 50) not above grant of op 1.1 (token 100)' "$st.out" &&
	grep -q '1 not plausible: taken as held' "$st.out"
point $? "planted backwards token of an op ending stale=1 after 3.2 s of its 10 s lease: caught ($(grep -m1 '^violation' "$st.out" || echo "rc $rc, nothing"))"
# the same history with the old reading of "stale" (a 3 s lease: 3.2 s is
# past it) is not caught: the grant is a revocation, out of the order
check "$st" 3000
point $? "the same ending stale after its lease (3 s): a revocation, not caught ($(grep -m1 '^violation' "$st.out" || tail -n 1 "$st.out" | grep -o '[0-9]* after the lease'))"
# the variants below: copies of that history
base=$st
# legitimate: the token right (150), the end stale 9.7 s after the grant
# (the 10 s lease less the 500 ms skew): believed, the grant left out
variant stale-late grants.1 's/token=50/token=150/' grants.2 's/token=50/token=150/' \
	h.2 's/token=50/token=150/;s/^4490 /10990 /;s/^4500 /11000 /;s/^4550 /11050 /' \
	store 's/read-fenced token=50/registered token=150/'
check "$tmp/stale-late" 10000
point $? "legitimate stale end after the lease less the skew: passes ($(grep -m1 '^violation' "$tmp/stale-late.out" || grep -o '1 after the lease' "$tmp/stale-late.out"))"
# a stale end after 3.2 s while node 2's guest was stopped: a fault
# touched it, believed (the backwards token is then out of the order)
variant stale-fault
printf '%s\n' '2000 0 - gstop node=2 ms=3000' '5000 0 - gstop-end node=2' >"$tmp/stale-fault/host"
check "$tmp/stale-fault" 10000
rc=$?
((rc == 0)) && grep -q '1 in a fault' "$tmp/stale-fault.out"
point $? "a stale end after 3.2 s in a stop of its node's guest: believed ($(grep -m1 '^violation' "$tmp/stale-fault.out" || grep -o '1 in a fault' "$tmp/stale-fault.out"))"
# a fault of another node does not make it plausible
variant stale-other
printf '%s\n' '2000 0 - gstop node=3 ms=3000' '5000 0 - gstop-end node=3' >"$tmp/stale-other/host"
check "$tmp/stale-other" 10000
point $(($? == 1 ? 0 : 1)) "... but not in a stop of another node's guest: caught ($(grep -m1 '^violation' "$tmp/stale-other.out" || echo nothing))"

unit_done
