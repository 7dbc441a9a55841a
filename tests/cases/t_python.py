#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# t_python: the Python binding (tools/python/ordlock.py, ctypes over
# libordlock.so) against the module, with the seed's orders/inventories
# scenario: orders rank 1, inventories rank 2; the API, batch and webhook
# paths touch the same rows, each in its own natural order (the binding
# passes the keys as given, the kernel sorts them); the counters are exact.
# A late order lock after holding an inventory raises OrderViolation naming
# both keys; a deadlock in a "detect" domain raises Deadlock with the cycle.
# TAP on stdout. Standard library only.
import errno
import json
import mmap
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.join(
    os.environ.get("ORDLOCK_REPO") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."),
    "tests", "lib"))
from oltap import REPO as repo, expect_raises, finish, import_ordlock, ok  # noqa: E402
from oltap import holder_child as oltap_holder  # noqa: E402


ordlock = import_ordlock()

RANKS = {"orders": 1, "inventories": 2}
ordlock.ranks.update(RANKS)
SHOP = "py-shop-%d" % os.getpid()
ROUNDS = int(os.environ.get("T_PYTHON_ROUNDS", "150"))


# --- basics ------------------------------------------------------------------
# an idle owner keeps the domain, and so its token counter, alive
anchor = ordlock.Owner(SHOP)
with ordlock.acquire(("orders", 10), ("inventories", 20), domain=SHOP,
                     timeout=5) as held:
    ok(held.token > 0, "acquire by rank names: token %d" % held.token)
    ok([(k.rank, k.id, k.mode) for k in held.keys] == [(1, 10, 2), (2, 20, 2)],
       "keys resolved from the registry, exclusive by default, in the given order")
    e = expect_raises(ordlock.Busy, lambda: ordlock.try_acquire(
        ("inventories", 20), domain=SHOP), "a held key: try_acquire raises Busy")
    if e:
        ok(e.errno == errno.EAGAIN and e.reason_name == "busy"
           and e.pid == os.getpid() and e.key == ordlock.exclusive(2, 20),
           "Busy carries errno EAGAIN, reason, the key and the holder's pid",
           "%r errno %s reason %s pid %s key %s" % (e, e.errno, e.reason_name,
                                                   e.pid, e.key))
        ok(isinstance(e, BlockingIOError), "Busy is a BlockingIOError")
with ordlock.acquire(("orders", 10), domain=SHOP, nowait=True) as h2:
    ok(h2.token > held.token, "released by the with block; tokens grow")
ok(held.released, "Held.released after the block")


def holder_child(*keys):
    """A child process holds keys of SHOP until the returned pipe is closed."""
    return oltap_holder(SHOP, *keys)


# a wait on a key this process holds would be a cycle of its own (the
# kernel sees it): the holder is another process
hpid, stop = holder_child(("orders", 10))
t0 = time.monotonic()
e = expect_raises(ordlock.Timeout, lambda: ordlock.acquire(
    ("orders", 10), domain=SHOP, timeout=0.2),
    "a key held elsewhere: acquire(timeout=0.2) raises Timeout")
if e:
    ok(e.errno == errno.ETIMEDOUT and isinstance(e, TimeoutError)
       and e.pid == hpid and e.key == ordlock.exclusive("orders", 10)
       and time.monotonic() - t0 >= 0.15,
       "Timeout: ETIMEDOUT, a TimeoutError, names the key and the holder, waited",
       "%r pid %s key %s" % (e, e.pid, e.key))
os.close(stop)
os.waitpid(hpid, 0)
with ordlock.acquire(("orders", 10), domain=SHOP, timeout=5) as h3:
    ok(h3.token > h2.token, "the holder's exit released the key")

# timeout=-1, filelock's "wait forever": the longest wait the kernel allows
# (max_timeout_ms); it waits for the holder, which lets go once asked to
hpid, stop = holder_child(("orders", 13))
waiter = threading.Thread(target=lambda: (time.sleep(0.3), os.close(stop)))
waiter.start()
try:
    with ordlock.acquire(("orders", 13), domain=SHOP, timeout=-1) as h4:
        ok(h4.token > h3.token, "timeout=-1 waits for the holder and is granted")
except Exception as e:  # noqa: BLE001 (before: ValueError)
    ok(False, "timeout=-1 waits for the holder and is granted", repr(e))
waiter.join()
os.waitpid(hpid, 0)

# plain ints, "rank:id" strings, and a ranks dict given to the call
with ordlock.acquire((1, 11), "2:21", ("items", 5), domain=SHOP,
                     ranks={"items": 3}, timeout=5) as h:
    ok([tuple(k[:2]) for k in h.keys] == [(1, 11), (2, 21), (3, 5)],
       "ints, RANK:ID strings and a per-call ranks dict")

# shared and exclusive
with ordlock.acquire(ordlock.shared("inventories", 20), domain=SHOP) as s1, \
        ordlock.acquire(("inventories", 20), mode="shared", domain=SHOP) as s2:
    ok(s1.token and s2.token, "two shared holders of inventories:20")
    expect_raises(ordlock.Busy, lambda: ordlock.try_acquire(
        ordlock.exclusive("inventories", 20), domain=SHOP),
        "exclusive try while shared holders: Busy")

# convert
with ordlock.Owner(SHOP) as o:
    h = o.acquire(ordlock.shared("orders", 12), timeout=5)
    t_sh = h.token
    t_ex = h.convert(("orders", 12), ordlock.EXCLUSIVE, timeout=5)
    ok(t_ex > t_sh and h.token == t_ex, "convert shared -> exclusive: new token")
    expect_raises(ordlock.Busy, lambda: ordlock.try_acquire(
        ordlock.shared("orders", 12), domain=SHOP),
        "after the upgrade a shared try is Busy")
    h.convert(("orders", 12), "shared")
    with ordlock.try_acquire(ordlock.shared("orders", 12), domain=SHOP):
        ok(True, "after the downgrade a shared try succeeds")
    ok(o.info()["nheld"] == 1 and o.info()["domain"] == SHOP,
       "Owner.info(): one key held, in the shop domain")
    expect_raises(ordlock.NotHeld, lambda: o.release(("orders", 99)),
                  "release of a key not held: NotHeld")

# --- the late order lock -------------------------------------------------------
with ordlock.Owner(SHOP) as o:
    o.acquire(("inventories", 20), timeout=5)
    e = expect_raises(ordlock.OrderViolation,
                      lambda: o.acquire(("orders", 10), timeout=5),
                      "orders:10 after holding inventories:20: OrderViolation")
    if e:
        msg = str(e)
        ok(e.errno == errno.EDEADLK and e.reason_name == "order",
           "OrderViolation: EDEADLK, reason order")
        ok(e.key == ordlock.exclusive("orders", 10)
           and e.held == ordlock.exclusive("inventories", 20),
           "it carries the requested key and the held key",
           "key %r held %r" % (e.key, e.held))
        ok("orders:10" in msg and "inventories:20" in msg,
           "the message names both keys: %s" % msg, msg)
    ok(o.info()["nheld"] == 1, "the refused request took nothing")

# --- the three paths -----------------------------------------------------------
# shared counters: orders 10, 11 (times touched) and inventories 20, 21 (stock)
SLOTS = {("orders", 10): 0, ("orders", 11): 1,
         ("inventories", 20): 2, ("inventories", 21): 3}
mem = mmap.mmap(-1, 8 * len(SLOTS))


def get(k):
    return struct.unpack_from("q", mem, 8 * SLOTS[k])[0]


def put(k, v):
    struct.pack_into("q", mem, 8 * SLOTS[k], v)


for k in SLOTS:
    put(k, 1000 if k[0] == "inventories" else 0)

# each path: its keys in its own natural order, and what it adds to each row
PATHS = {
    "api": ([("orders", 10), ("inventories", 20)],
            {("orders", 10): 1, ("inventories", 20): -1}),
    "batch": ([("inventories", 20), ("inventories", 21), ("orders", 11),
               ("orders", 10)],
              {("inventories", 20): 2, ("inventories", 21): 2,
               ("orders", 10): 1, ("orders", 11): 1}),
    "webhook": ([("inventories", 21), ("orders", 11)],
                {("inventories", 21): -1, ("orders", 11): 1}),
}


def worker(name):
    keys, delta = PATHS[name]
    with ordlock.Owner(SHOP) as o:
        for _ in range(ROUNDS):
            with o.acquire(*keys, timeout=30):
                # read, yield, write: an unlocked race would lose updates
                vals = {k: get(k) for k in delta}
                os.sched_yield()
                for k, d in delta.items():
                    put(k, vals[k] + d)
    return 0


def run_child(fn, *args):
    pid = os.fork()
    if pid == 0:
        rc = 1
        try:
            rc = fn(*args)
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
        os._exit(rc)
    return pid


def wait_child(pid):
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


t0 = time.monotonic()
pids = [run_child(worker, name) for name in PATHS]
rcs = [wait_child(p) for p in pids]
ok(rcs == [0, 0, 0], "api, batch and webhook: %d rounds each in %.1fs"
   % (ROUNDS, time.monotonic() - t0), "exit codes %r" % rcs)
want = {k: (1000 if k[0] == "inventories" else 0) for k in SLOTS}
for _, (_, delta) in PATHS.items():
    for k, d in delta.items():
        want[k] += d * ROUNDS
got = {k: get(k) for k in SLOTS}
ok(got == want, "counters exact: %s" % ", ".join(
    "%s:%d=%d" % (k[0], k[1], v) for k, v in sorted(got.items())),
   "want %r" % want)

# --- a deadlock in a detect domain -----------------------------------------------
DET = "py-detect-%d" % os.getpid()
try:
    ordlock.set_policy(DET, "detect")
    ok(ordlock.domain_config(DET)["policy"] == "detect",
       "set_policy: domain %s is detect" % DET)
except ordlock.OrdlockError as e:
    ok(False, "set_policy(detect)", repr(e))

ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
res_r, res_w = os.pipe()


def transfer(first, second):
    out = {"pid": os.getpid()}
    with ordlock.Owner(DET) as o:
        o.acquire(("inventories", first), timeout=30)
        os.write(ready_w, b"r")
        os.read(go_r, 1)
        try:
            o.acquire(("inventories", second), timeout=30)
            out["result"] = "granted"
        except ordlock.Deadlock as e:
            out.update(result="deadlock", errno=e.errno, msg=str(e),
                       cycle_len=e.cycle_len,
                       cycle=[[s.pid, s.comm, s.key.rank, s.key.id, s.edge]
                              for s in e.cycle])
        except ordlock.OrdlockError as e:
            out.update(result="error", msg=repr(e))
    os.write(res_w, (json.dumps(out) + "\n").encode())
    return 0


pa = run_child(transfer, 30, 31)
pb = run_child(transfer, 31, 30)
os.read(ready_r, 1)
os.read(ready_r, 1)
os.write(go_w, b"gg")
rcs = [wait_child(pa), wait_child(pb)]
os.close(res_w)
data = b""
while True:
    chunk = os.read(res_r, 65536)
    if not chunk:
        break
    data += chunk
outs = [json.loads(line) for line in data.decode().splitlines() if line]
results = sorted(o["result"] for o in outs)
ok(rcs == [0, 0] and results == ["deadlock", "granted"],
   "two transfers in opposite orders: one Deadlock, the other granted",
   "rcs %r, outs %r" % (rcs, outs))
victim = [o for o in outs if o["result"] == "deadlock"]
if victim:
    v = victim[0]
    cyc = v["cycle"]
    ok(v["errno"] == errno.EDEADLK and v["cycle_len"] == 2 and len(cyc) == 2,
       "Deadlock: EDEADLK with a cycle of 2 steps", repr(v))
    ok(cyc and cyc[0][0] == v["pid"] and {c[0] for c in cyc} == {pa, pb}
       and {(c[2], c[3]) for c in cyc} == {(2, 30), (2, 31)},
       "the cycle: the victim first, both transfers, both keys", repr(cyc))
    ok("waits for" in v["msg"] and "inventories:3" in v["msg"],
       "the message describes the cycle: %s" % v["msg"], v["msg"])

# Owner.from_fd(): the descriptor ordlockctl exec -F hands to its command
CTL = os.path.join(os.environ.get("ORDLOCK_REPO", "."), "tools/ordlockctl/ordlockctl")
probe = ("import os, ordlock; o = ordlock.Owner.from_fd(os.environ['ORDLOCK_FD']); "
         "i = o.info(); print(i['nheld'], i['domain']); o.close(); "
         "print(ordlock.Owner('%s').acquire((9, 1), nowait=True).token > 0)" % SHOP)
try:
    out = subprocess.run([CTL, "exec", "-F", "-d", SHOP, "-x", "9:1", "--",
                          sys.executable, "-c", probe], capture_output=True,
                         text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=os.path.dirname(
                             os.path.abspath(ordlock.__file__))))
    ok(out.returncode == 0 and out.stdout.split() == ["1", SHOP, "True"],
       "Owner.from_fd(ORDLOCK_FD) under ordlockctl exec -F: holds the key; "
       "close() releases it", out.stdout + out.stderr)
except Exception as e:
    ok(False, "Owner.from_fd under ordlockctl exec -F", repr(e))
expect_raises(OSError, lambda: ordlock.Owner.from_fd(0),
              "Owner.from_fd of a descriptor that is not /dev/ordlock")

# a key out of range is refused, never wrapped onto another key
for spec, what in (((2**32 + 7, 5), "rank 2^32 + 7"), ((1, -1), "id -1"),
                   ((1, 2**64), "id 2^64"), ((-1, 1), "rank -1")):
    expect_raises(ValueError, lambda spec=spec: ordlock.acquire(spec, timeout=0),
                  "acquire of %s raises ValueError" % what)
expect_raises(TypeError, lambda: ordlock.key((1, True)), "a bool id raises TypeError")
with ordlock.acquire((2**32 - 1, 2**64 - 1), domain=SHOP, timeout=0) as h:
    ok(h.token > 0, "the largest rank and id are taken as given")

# errors are the OSError subclasses Python users catch
hpid, hstop = holder_child((6, 6))
expect_raises(BlockingIOError, lambda: ordlock.try_acquire((6, 6), domain=SHOP),
              "a busy try-lock raises BlockingIOError")
expect_raises(TimeoutError, lambda: ordlock.acquire((6, 6), domain=SHOP, timeout=0.2),
              "a wait that times out raises TimeoutError")
os.close(hstop)
os.waitpid(hpid, 0)


def as_nobody():
    """In a child: open an owner as uid 65534 (the device is 0660 root)."""
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            ordlock.Owner()
            code = 1
        except PermissionError:
            code = 0
        except BaseException:  # noqa: BLE001
            code = 2
        os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


# --- leases -------------------------------------------------------------------
LEASES = "py-lease-%d" % os.getpid()
lease_anchor = ordlock.Owner(LEASES)


def stopped_holder():
    """A child takes 7:7 with a 0.4 s lease, stops itself; once continued it
    reports what its owner says, as JSON, on the returned pipe."""
    ready_r, ready_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        res = {}
        try:
            o = ordlock.Owner(LEASES)
            h = o.acquire((7, 7), lease=0.4, timeout=0)
            res["token"] = h.token
            os.write(ready_w, b"r")
            os.kill(os.getpid(), signal.SIGSTOP)
            p = select.poll()
            p.register(o.fileno(), select.POLLPRI)
            res["pollpri"] = bool(p.poll(0))
            res["live"] = o.token_check((7, 7), h.token)
            try:
                o.renew()
                res["renew"] = "renewed"
            except ordlock.Revoked as e:
                res["renew"] = "revoked"
                res["errno"] = e.errno
                res["revoked"] = [[k.rank, k.id, k.mode, t] for k, t in e.revoked]
            o.release()
            res["again"] = o.acquire((8, 8), timeout=0).token > 0
        except BaseException as e:  # noqa: BLE001
            res["error"] = repr(e)
        os.write(out_w, json.dumps(res).encode())
        os._exit(0)
    os.close(out_w)
    os.read(ready_r, 1)
    return pid, out_r


lpid, lout = stopped_holder()
for _ in range(2000):
    with open("/proc/%d/stat" % lpid) as f:
        if f.read().rsplit(")", 1)[1].split()[0] == "T":
            break
    time.sleep(0.001)
# without the lease this times out after 30 s
with ordlock.acquire((7, 7), domain=LEASES, timeout=30) as w:
    ok(True, "lease: a stopped holder's key is granted to the waiter")
    wtoken = w.token
    ok(ordlock.token_check((7, 7), wtoken, domain=LEASES),
       "lease: token_check: the waiter's token is live")
    os.kill(lpid, signal.SIGCONT)
    res = json.loads(os.read(lout, 65536).decode() or "{}")
    os.waitpid(lpid, 0)
    ok("error" not in res, "lease: the holder ran", res.get("error"))
    ok(wtoken > res.get("token", 1 << 62), "lease: the waiter's token is higher")
    ok(not ordlock.token_check((7, 7), res.get("token", 0), domain=LEASES),
       "lease: token_check: the holder's token is stale")
    ok(res.get("pollpri") is True, "lease: the holder's poll() reports POLLPRI")
    ok(res.get("live") is False, "lease: the holder's own token check says stale")
    ok(res.get("renew") == "revoked" and res.get("errno") == errno.EKEYEXPIRED,
       "lease: its renew() raises Revoked (EKEYEXPIRED)", res)
    ok(res.get("revoked") == [[7, 7, ordlock.EXCLUSIVE, res.get("token")]],
       "lease: Revoked.revoked names 7:7 and its token", res.get("revoked"))
    ok(res.get("again") is True, "lease: after release() it locks again")

# renew() keeps a holder alive past several periods
with ordlock.acquire((9, 9), domain=LEASES, lease=0.5, timeout=0) as h:
    lefts = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < 2.0:
        lefts.append(h.renew())
        time.sleep(0.05)
    ok(all(x is not None and 0 < x <= 0.5 for x in lefts),
       "lease: %d renewals over 4 periods, each within the lease" % len(lefts))
    ok(ordlock.token_check((9, 9), h.token, domain=LEASES),
       "lease: still live after 4 periods")

# max_hold_ms caps a lease
ordlock.set_max_hold(LEASES, 300)
ok(ordlock.domain_config(LEASES)["max_hold_ms"] == 300, "max_hold: set to 300 ms")
with ordlock.Owner(LEASES) as o:
    o.acquire((10, 10), lease=60, timeout=0)
    left = o.renew()
    ok(left is not None and 0 < left <= 0.3, "max_hold: a 60 s lease is capped (%r)" % left)
    p = select.poll()
    p.register(o.fileno(), select.POLLPRI)
    ok(bool(p.poll(20000)), "max_hold: revoked, poll() says so")
    e = expect_raises(ordlock.Revoked, lambda: o.acquire((11, 11), timeout=0),
                      "max_hold: the next acquire raises Revoked")
    if e:
        ok(e.reason_name == "revoked" and len(e.revoked) == 1, "Revoked: reason and keys")
    o.release()
ordlock.set_max_hold(LEASES, 0)
expect_raises(ValueError, lambda: ordlock.acquire((1, 1), domain=LEASES, lease=0),
              "lease=0 raises ValueError")
with ordlock.Owner(LEASES) as o:
    expect_raises(ordlock.NotHeld, o.renew, "renew() holding nothing raises NotHeld")
lease_anchor.close()

ok(oct(os.stat("/dev/ordlock").st_mode & 0o777) == "0o660",
   "the device is 0660 (the module's default dev_mode)")
ok(as_nobody() == 0, "a user who may not open the device gets PermissionError")


def venv_install():
    """The binding as pip installs it: tests/Makefile ran "pip install
    --no-build-isolation" of a copy of tools/python into a virtual
    environment of Debian's python3 on the host (pip under TCG took two
    minutes a kernel); here that installed copy, from its own
    site-packages, takes a key."""
    venv = os.path.join(repo, "tests", "build", "pyvenv")
    failed = os.path.join(venv, "failed")
    if os.path.exists(failed):
        with open(failed) as f:
            ok(False, "the host's pip install of tools/python (tests/Makefile)", f.read())
        return
    py = os.path.join(venv, "bin", "python")
    if not ok(os.path.exists(py), "the virtual environment tests/Makefile made (%s)" % venv):
        return
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    prog = ("import ordlock, sys\n"
            "assert ordlock.__file__.startswith(sys.prefix), ordlock.__file__\n"
            "with ordlock.acquire((7, 77), domain=%r, timeout=0) as h:\n"
            "    print(ordlock.__file__, h.token)\n" % SHOP)
    r = subprocess.run([py, "-c", prog], capture_output=True, text=True,
                       env=env, cwd="/")
    pkg = r.stdout.split(" ")[0]
    ok(r.returncode == 0 and "site-packages/ordlock/__init__.py" in r.stdout
       and os.path.exists(os.path.join(os.path.dirname(pkg), "py.typed")),
       "the venv's ordlock (its own site-packages, the package with py.typed) takes a key",
       r.stdout + r.stderr)


venv_install()
finish()
