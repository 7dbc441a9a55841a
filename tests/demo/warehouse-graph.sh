#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# warehouse-graph: the end of "make demo" (after warehouse-demo): the same
# mistake in domains where the order rule cannot be enforced, with three
# warehouses and three transfers, each holding its source while it asks for
# the next warehouse (Sofia -> Plovdiv -> Varna -> Sofia), written in Python
# (tools/python/ordlock.py).
#
#   4. policy "timeout": the cycle stays; "ordlockctl cycles" prints it,
#      "ordlockctl graph --dot | dot -Tpng" draws it; killing one transfer
#      releases its key and the other two complete.
#   5. policy "detect": the kernel refuses the wait that closes the cycle:
#      that transfer gets ordlock.Deadlock with the cycle; the others
#      complete; "ordlockctl cycles --history" shows the deadlock broken.
#
# The picture lands in ORDLOCK_RESULTS (the run's results directory, set by
# tests/vm/guest.sh; on the host tests/build/results/demo/), else in the
# current directory. Exits 0 when everything went as told.
set -uo pipefail

repo=${ORDLOCK_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
ctl=$repo/tools/ordlockctl/ordlockctl
out=${ORDLOCK_RESULTS:-$PWD}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PYTHONPATH=$repo/tools/python
export ORDLOCK_LIB=$repo/tools/lib/libordlock.so.1
export XDG_CACHE_HOME=$work
problems=0
expect() { # expect COND-STATUS WHAT
	[[ $1 == 0 ]] || {
		problems=$((problems + 1))
		echo "  !! unexpected: $2"
	}
}
show() { # show CMD...: print the command, then run it, indented
	echo "  \$ ordlockctl ${*:2}"
	"$@" 2>&1 | sed 's/^/    /'
	return "${PIPESTATUS[0]}"
}

# transfers.py DOMAIN TIMEOUT: three transfers in a cycle; each child
# writes its pid to WORK/pid.N and says what happened
cat >"$work/transfers.py" <<'PY'
import ctypes, os, sys, time
import ordlock

dom, timeout, work = sys.argv[1], float(sys.argv[2]), sys.argv[3]
names = {1: "Sofia", 2: "Plovdiv", 3: "Varna"}
ordlock.ranks["wh"] = 1
ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()

def transfer(i):
    src, dst = i, i % 3 + 1
    me = "transfer-%d" % i
    ctypes.CDLL(None).prctl(15, me.encode(), 0, 0, 0)  # PR_SET_NAME
    with open("%s/pid.%d" % (work, i), "w") as f:
        f.write(str(os.getpid()))
    with ordlock.Owner(dom) as o:
        o.acquire(("wh", src), timeout=timeout)
        os.write(ready_w, b"r")
        os.read(go_r, 1)
        print("   %s (pid %d) holds %s, asks for %s"
              % (me, os.getpid(), names[src], names[dst]), flush=True)
        time.sleep(0.2 * i)
        try:
            with o.acquire(("wh", dst), timeout=timeout) as h:
                print("   %s: got %s (token %d), moved the goods"
                      % (me, names[dst], h.token), flush=True)
            return 0
        except ordlock.Deadlock as e:
            print("   %s: ordlock.Deadlock (errno %d): %s"
                  % (me, e.errno, e), flush=True)
            for s in e.cycle:
                print("      step: pid %d (%s) waits for %s (%s edge)"
                      % (s.pid, s.comm, s.key, s.edge), flush=True)
            print("   %s: released %s, will retry later" % (me, names[src]),
                  flush=True)
            return 3
        except ordlock.OrdlockError as e:
            print("   %s: %s: %s" % (me, type(e).__name__, e), flush=True)
            return 4

pids = []
for i in (1, 2, 3):
    pid = os.fork()
    if pid == 0:
        rc = 1
        try:
            rc = transfer(i)
        finally:
            os._exit(rc)
    pids.append(pid)
for _ in pids:
    os.read(ready_r, 1)
os.write(go_w, b"ggg")
codes = []
for pid in pids:
    _, st = os.waitpid(pid, 0)
    codes.append(os.waitstatus_to_exitcode(st))
print(" ".join(str(c) for c in codes), file=open(work + "/codes", "w"))
PY

echo
echo "4. Where the order cannot be enforced: policy \"timeout\""
echo "   Three warehouses, rank names wh:1 Sofia, wh:2 Plovdiv, wh:3 Varna. Three"
echo "   transfers each hold their source and ask for the next warehouse:"
echo "   Sofia -> Plovdiv -> Varna -> Sofia. Nobody refuses anything; the"
echo "   cycle stays until a timeout breaks it, and ordlockctl sees it."
dom=wh-timeout-$$
"$ctl" domain "$dom" set policy timeout rank wh=1 >/dev/null
expect $? "ordlockctl domain $dom set policy timeout"
python3 "$work/transfers.py" "$dom" 120 "$work" &
py=$!
found=1
for _ in $(seq 100); do
	"$ctl" cycles -q -d "$dom" >/dev/null 2>&1
	found=$?
	[[ $found == 1 ]] && break
	sleep 0.2
done
sleep 0.5
show "$ctl" cycles -d "$dom"
expect $(($? != 1)) "ordlockctl cycles found no cycle"
show "$ctl" graph -d "$dom"
"$ctl" graph -d "$dom" --dot >"$work/waits.dot" 2>&1
expect $? "ordlockctl graph --dot"
if dot -Tpng -o "$out/waits.png" "$work/waits.dot" 2>"$work/dot.err"; then
	cp "$work/waits.dot" "$out/waits.dot"
	echo "  \$ ordlockctl graph -d $dom --dot | dot -Tpng > waits.png"
	echo "    the picture: ${out#"${REPO:-$repo}/"}/waits.png"
	echo "    (on the host: tests/build/results/demo/waits.png)"
else
	expect 1 "dot -Tpng: $(cat "$work/dot.err")"
fi
echo "   Without a timeout or a referee they would wait forever. We kill"
echo "   transfer-1 (kill -9): the kernel releases what it held, Sofia,"
echo "   and the other two complete."
kill -9 "$(cat "$work/pid.1")"
wait "$py"
read -r c1 c2 c3 <"$work/codes"
echo "   exit codes: transfer-1 $c1 (killed), transfer-2 $c2, transfer-3 $c3"
expect $((c1 != -9 || c2 != 0 || c3 != 0)) "transfers 2 and 3 should have completed"

echo
echo "5. The same three transfers in a \"detect\" domain"
echo "   The kernel keeps the wait-for graph and refuses the wait that would"
echo "   close the cycle: that transfer gets EDEADLK, with the whole cycle."
dom=wh-detect-$$
"$ctl" domain "$dom" set policy detect rank wh=1 >/dev/null
expect $? "ordlockctl domain $dom set policy detect"
rm -f "$work"/pid.* "$work/codes"
python3 "$work/transfers.py" "$dom" 60 "$work"
read -r c1 c2 c3 <"$work/codes"
victims=0
for c in $c1 $c2 $c3; do
	[[ $c == 3 ]] && victims=$((victims + 1))
done
expect $((victims != 1)) "exactly one transfer should have been the deadlock victim (exit codes $c1 $c2 $c3)"
show "$ctl" cycles -d "$dom"
expect $(($? != 0)) "no live cycle should be left"
show "$ctl" cycles --history -d "$dom"
expect $(($? != 1)) "ordlockctl cycles --history shows no deadlock"

echo
if ((problems)); then
	echo "graph demo FAILED: $problems unexpected result(s)"
	exit 1
fi
echo "graph demo OK: the timeout domain kept its cycle for ordlockctl to show"
echo "and draw; the detect domain broke it at once and remembers it."
