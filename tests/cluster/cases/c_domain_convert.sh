#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_domain_convert: conversions in a cluster domain are DLM conversions,
# on every node at once, through the Python binding (libordlock's ioctls):
# - a downgrade lets a shared request of another node in, and still keeps
#   an exclusive one of a third node out;
# - an upgrade waits for a remote shared holder; when it times out, the key
#   is still held shared (a third node's shared try-lock succeeds) and a
#   later upgrade, once the other holder left, is granted;
# - two nodes upgrading one key at once: the DLM refuses one of them
#   (EDEADLK, reason upgrade); the loser keeps its shared hold, lets go,
#   and the other's upgrade is granted;
# - the tokens of the upgrades rise across nodes.
# (TAP; run on every node at once by tests/cluster/node.sh.)
set -u
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
out=$("$olc" domain cd2 set cluster on 2>&1) || {
	echo "not ok 1 - node$ORDLOCK_NODE: domain cd2 set cluster on ($out)"
	echo "1..1"
	exit 1
}
export PYTHONPATH=$ORDLOCK_REPO/tools/python
python3 - <<'EOF'
import os, sys, time
import ordlock
from ordlock import Key, SHARED, EXCLUSIVE

node = int(os.environ["ORDLOCK_NODE"])
nodes = int(os.environ["ORDLOCK_NODES"])
shared = os.environ["ORDLOCK_SHARED"]
dom = "cd2"
n = 0
failed = 0


def point(cond, what):
    global n, failed
    n += 1
    print("%s %d - node%d: %s" % ("ok" if cond else "not ok", n, node, what), flush=True)
    if not cond:
        failed = 1


def barrier(name):
    open(os.path.join(shared, "%s.%d" % (name, node)), "w").close()
    for _ in range(1500):
        if all(os.path.exists(os.path.join(shared, "%s.%d" % (name, j)))
               for j in range(1, nodes + 1)):
            return
        time.sleep(0.2)
    print("# barrier %s: not every node came" % name)


def put(name, value):
    with open(os.path.join(shared, name), "w") as f:
        f.write(str(value))


def get(name):
    try:
        with open(os.path.join(shared, name)) as f:
            return f.read()
    except OSError:
        return ""


def attempt(fn):
    """"ok", or the exception's class name and the failure's reason"""
    try:
        fn()
        return "ok"
    except ordlock.OrdlockError as e:
        return "%s:%s" % (type(e).__name__, e.reason_name)


o = ordlock.Owner(dom)

# 1. downgrade: node 1 holds 3:2 exclusive, then shared
if node == 1:
    o.acquire(Key(3, 2, EXCLUSIVE), timeout=30)
barrier("ex")
if node == 2:
    r = attempt(lambda: o.try_acquire(Key(3, 2, SHARED), mode=SHARED))
    point(r.startswith("Busy"), "shared try-lock of 3:2 held exclusively on node1: busy (%s)" % r)
barrier("tried")
if node == 1:
    r = attempt(lambda: o.convert(Key(3, 2, SHARED), SHARED, timeout=30))
    point(r == "ok", "downgrade of 3:2 to shared (%s)" % r)
barrier("down")
if node == 2:
    r = attempt(lambda: o.acquire(Key(3, 2, SHARED), mode=SHARED, timeout=30))
    point(r == "ok", "shared 3:2 granted next to node1's downgraded hold (%s)" % r)
if node == 3:
    r = attempt(lambda: o.try_acquire(Key(3, 2, EXCLUSIVE)))
    point(r.startswith("Busy"), "exclusive try-lock of 3:2 still refused (%s)" % r)
barrier("down2")
if node in (1, 2):
    try:
        o.release(Key(3, 2, SHARED), mode=SHARED)
    except ordlock.OrdlockError:
        pass
barrier("released")

# 2. an upgrade that times out keeps the shared hold; later it is granted
if node in (1, 2):
    o.acquire(Key(3, 3, SHARED), mode=SHARED, timeout=30)
barrier("sh3")
if node == 1:
    t0 = time.monotonic()
    r = attempt(lambda: o.convert(Key(3, 3, EXCLUSIVE), EXCLUSIVE, timeout=1.5))
    el = time.monotonic() - t0
    point(r.startswith("Timeout"), "upgrade of 3:3 against node2's shared hold: timeout (%s)" % r)
    point(1.4 <= el < 60, "... after its deadline (%.2f s)" % el)
barrier("up-timedout")
if node == 3:
    ok = False
    for _ in range(50):
        r = attempt(lambda: o.try_acquire(Key(3, 3, SHARED), mode=SHARED))
        if r == "ok":
            ok = True
            o.release(Key(3, 3, SHARED), mode=SHARED)
            break
        time.sleep(0.2)
    point(ok, "shared try-lock of 3:3 granted: node1's timed-out upgrade was undone (%s)" % r)
barrier("checked")
if node == 2:
    o.release(Key(3, 3, SHARED), mode=SHARED)
barrier("n2-left")
if node == 1:
    r = attempt(lambda: put("tok-a", o.convert(Key(3, 3, EXCLUSIVE), EXCLUSIVE, timeout=30)))
    point(r == "ok", "upgrade of 3:3 granted once node2 let go (%s)" % r)
    o.release(Key(3, 3, EXCLUSIVE))
barrier("up-done")

# 3. two nodes upgrade 3:4 at once: one of them is refused, reason upgrade
if node in (1, 2):
    o.acquire(Key(3, 4, SHARED), mode=SHARED, timeout=30)
barrier("sh4")
if node in (1, 2):
    if node == 2:
        time.sleep(0.5)  # node 1 converts first (either order would do)
    r = attempt(lambda: put("tok-%d" % node,
                            o.convert(Key(3, 4, EXCLUSIVE), EXCLUSIVE, timeout=60)))
    put("res4.%d" % node, r)
    if r != "ok":
        # the loser still holds shared: letting go lets the other one in
        o.release(Key(3, 4, SHARED), mode=SHARED)
    else:
        o.release(Key(3, 4, EXCLUSIVE))
barrier("up4")
if node == 3:
    rs = sorted([get("res4.1"), get("res4.2")])
    point(rs == ["UpgradeDeadlock:upgrade", "ok"],
          "of two upgrades at once, one granted and one refused as an upgrade deadlock (%s)" % rs)
    winner = 1 if get("res4.1") == "ok" else 2
    point(get("tok-%d" % winner).isdigit() and
          int(get("tok-%d" % winner)) > int(get("tok-a") or 0),
          "the later upgrade's token is above the earlier one's (%s > %s)"
          % (get("tok-%d" % winner), get("tok-a")))
barrier("end")
o.close()
print("1..%d" % n)
sys.exit(failed)
EOF
rc=$?
# the Python program printed its plan; the companion must go at the end
out=$("$olc" domain cd2 set cluster off 2>&1)
if [[ $? != 0 ]]; then
	echo "# domain cd2 set cluster off failed: $out"
	exit 1
fi
exit $rc
