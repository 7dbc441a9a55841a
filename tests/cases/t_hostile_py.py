#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# t_hostile_py: the Python binding misused, as a hostile test suite would.
#  - fork() after acquire: the child shares the parent's owner (one open
#    file description). Its context managers and finalizers in the child
#    (a SystemExit through the parent's "with" block, the last reference
#    dropped) must only drop the child's descriptor: the parent still
#    holds its keys, as a flock(2) lock survives a child's close(). An
#    explicit release() in the child does release them (flock's LOCK_UN).
#  - a Held used again after its "with" block: entering it again raises
#    instead of running a critical section without the keys.
#  - timeouts that do not fit the C library's unsigned int of milliseconds
#    (2^32 ms, float("inf")) are the longest wait, not a wrapped value
#    (2^32 ms wrapped to 0, the domain default); NaN and negative ones,
#    wrong types, keys out of range raise before any call.
#  - two threads on one Owner: the second request fails at once (EBUSY).
# Another owner's try-lock is the judge of what is held. TAP on stdout.
import errno
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(
    os.environ.get("ORDLOCK_REPO") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."),
    "tests", "lib"))
from oltap import expect_raises, finish, holder_child, import_ordlock, ok  # noqa: E402

ordlock = import_ordlock()
D = "py-hostile-%d" % os.getpid()
PARAMS = "/sys/module/ordlock/parameters/"


def free(*keys):
    """Whether another owner could take the keys now (it lets them go)."""
    try:
        with ordlock.try_acquire(*keys, domain=D):
            return True
    except ordlock.Busy:
        return False


def child_status(pid):
    _, st = os.waitpid(pid, 0)
    return os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)


# --- fork after acquire ------------------------------------------------------
anchor = ordlock.Owner(D)

# a SystemExit in the child unwinds the parent's "with ordlock.acquire()"
with ordlock.acquire((1, 1), domain=D, timeout=5) as held:
    pid = os.fork()
    if pid == 0:
        sys.stdout.flush()
        sys.exit(0)         # unwinds the with block in the child
    ok(child_status(pid) == 0, "fork in a with block: the child exited")
    ok(not free((1, 1)),
       "the child's exit through the with block left the parent's key held")
    ok(not held.released, "the parent's Held is not released")
ok(free((1, 1)), "the parent's with block released the key")

# the same with an Owner's with block, and a Held of that owner
with ordlock.Owner(D) as o:
    h = o.acquire((1, 2), (1, 3), timeout=5)
    pid = os.fork()
    if pid == 0:
        try:
            with h:
                raise SystemExit(0)
        finally:
            pass
    ok(child_status(pid) == 0, "fork in an Owner's with block: the child exited")
    ok(not free((1, 2)) and not free((1, 3)),
       "the child's exit through Held and Owner with blocks left both keys held")
    ok(o.info()["nheld"] == 2, "the parent's owner still holds 2 keys")
ok(free((1, 2), (1, 3)), "the parent's with block released them")

# a child forked inside "with attempt:" of Owner.attempts()
with ordlock.Owner(D) as o:
    for attempt in o.attempts((1, 5), attempts=2, timeout=5):
        with attempt:
            pid = os.fork()
            if pid == 0:
                sys.stdout.flush()
                sys.exit(0)     # unwinds the attempt and its generator
            ok(child_status(pid) == 0, "fork in an attempt: the child exited")
            ok(not free((1, 5)),
               "the child's exit through the attempt left the parent's key held")
    ok(free((1, 5)), "the parent's attempt released it")

# the last reference dropped in the child: Owner.__del__
o = ordlock.Owner(D)
o.acquire((1, 4), timeout=5)
pid = os.fork()
if pid == 0:
    o = None                # __del__ runs here, in the child
    sys.stdout.flush()
    os._exit(0 if not free((1, 4)) else 3)
ok(child_status(pid) == 0,
   "the child dropping its last reference to the Owner left the key held (seen from the child)")
ok(not free((1, 4)), "... and from the parent")
# close() in the child closes the child's descriptor only
pid = os.fork()
if pid == 0:
    o.close()
    os._exit(0 if not free((1, 4)) else 3)
ok(child_status(pid) == 0, "Owner.close() in the child: the parent's key stays held")
# an explicit release() in the child releases the shared owner's keys
pid = os.fork()
if pid == 0:
    try:
        o.release((1, 4))
    except ordlock.OrdlockError:
        os._exit(4)
    os._exit(0)
ok(child_status(pid) == 0 and free((1, 4)),
   "an explicit release() in the child releases the shared key (flock's LOCK_UN)")
ok(o.info()["nheld"] == 0, "the parent's owner holds nothing after it")
o.close()

# --- a Held is entered once --------------------------------------------------
with ordlock.Owner(D) as o:
    h = o.acquire((2, 1), timeout=5)
    with h as inner:
        ok(inner is h and not free((2, 1)), "with Held: the key is held inside")
        with h:             # nested: the inner exit releases
            pass
        ok(free((2, 1)) and h.released, "the nested with block released it")
    ok(h.released, "the outer exit after it: released once, no error")
    expect_raises(ValueError, lambda: h.__enter__(),
                  "entering a released Held again raises ValueError "
                  "(no critical section without the keys)")
    h.release()
    ok(True, "Held.release() twice is once")
    o.close()
    expect_raises(ValueError, lambda: o.acquire((2, 2)),
                  "acquire on a closed Owner raises ValueError")
    expect_raises(ValueError, lambda: o.fileno(),
                  "fileno() on a closed Owner raises ValueError")
    o.close()
    ok(True, "Owner.close() twice is once")

# --- arguments ---------------------------------------------------------------
with ordlock.Owner(D) as o:
    for bad, cls, what in (
            (lambda: o.acquire(), ValueError, "no keys"),
            (lambda: o.acquire((1, "x")), TypeError, "an id that is a word"),
            (lambda: o.acquire((1, 1.5)), TypeError, "a float id"),
            (lambda: o.acquire((True, 1)), TypeError, "a bool rank"),
            (lambda: o.acquire((-1, 1)), ValueError, "rank -1"),
            (lambda: o.acquire((2**32, 1)), ValueError, "rank 2^32"),
            (lambda: o.acquire((1, -1)), ValueError, "id -1"),
            (lambda: o.acquire((1, 2**64)), ValueError, "id 2^64"),
            (lambda: o.acquire((1, 2, 3, 4)), ValueError, "a 4-tuple"),
            (lambda: o.acquire((1, 2, "upgrade")), ValueError, "an unknown mode"),
            (lambda: o.acquire("12"), ValueError, "a key string without ':'"),
            (lambda: o.acquire(7), TypeError, "an int as a key"),
            (lambda: o.acquire((1, 1), timeout=-2), ValueError, "a negative timeout (-1: the longest wait)"),
            (lambda: o.acquire((1, 1), timeout=float("nan")), ValueError, "a NaN timeout"),
            (lambda: o.acquire((1, 1), timeout="5"), TypeError, "a string timeout"),
            (lambda: o.acquire((1, 1), lease=0), ValueError, "a lease of 0"),
            (lambda: o.acquire((1, 1), lease=float("nan")), ValueError, "a NaN lease")):
        expect_raises(cls, bad, "acquire with %s raises %s" % (what, cls.__name__))
    ok(o.info()["nheld"] == 0 and free((1, 1)), "none of them took anything")
    # the extremes of the key space are keys like the others
    with o.acquire((0, 0), (ordlock.RANK_MAX, ordlock.ID_MAX), timeout=5) as h:
        ok(not free((0, 0)) and not free((ordlock.RANK_MAX, ordlock.ID_MAX)),
           "keys 0:0 and RANK_MAX:ID_MAX are held")
        e = expect_raises(ordlock.OrderViolation, lambda: o.acquire((1, 1)),
                          "a key below RANK_MAX:ID_MAX held: OrderViolation")
        if e:
            ok(e.errno == errno.EDEADLK and e.held is not None and
               (e.held.rank, e.held.id) == (ordlock.RANK_MAX, ordlock.ID_MAX),
               "EDEADLK naming the held key RANK_MAX:ID_MAX", repr(e.held))
    # duplicate keys with conflicting modes: merged, the stronger wins; the
    # Held releases the one key
    with o.acquire((3, 1, "shared"), (3, 1, "exclusive"), (3, 1, "shared"),
                   timeout=5) as h:
        ok(o.info()["nheld"] == 1, "a key given 3 times in 2 modes is held once")
        ok(not free((3, 1, "shared")), "... exclusive (the stronger mode)")
    ok(o.info()["nheld"] == 0 and free((3, 1)), "the Held released it")
    e = expect_raises(ordlock.NotHeld, lambda: o.release((3, 1)),
                      "releasing it again raises NotHeld")
    if e:
        ok(e.errno == errno.ENOENT and (e.key.rank, e.key.id) == (3, 1),
           "ENOENT naming 3:1", repr(e.key))
    e = expect_raises(ordlock.NotHeld, lambda: o.convert((3, 1), "shared"),
                      "converting a key not held raises NotHeld")
    if e:
        ok(e.errno == errno.ENOENT, "ENOENT")


# --- timeouts past what an unsigned int of milliseconds holds -------------------
def param(name, value=None):
    with open(PARAMS + name, "r+" if value is not None else "r") as f:
        old = int(f.read())
        if value is not None:
            f.seek(0)
            f.write("%d\n" % value)
    return old


def holder(*keys):
    """A child that holds the keys of D until its pipe is closed."""
    return holder_child(D, *keys)


old_default = param("default_timeout_ms")
old_max = param("max_timeout_ms")
MAX_MS = 3000
try:
    param("default_timeout_ms", 100)
    param("max_timeout_ms", MAX_MS)
    hpid, stop = holder((4, 1))
    with ordlock.Owner(D) as o:
        for t, what in ((2**32 / 1000.0, "2^32 ms"), (1e12, "10^12 s"),
                        (float("inf"), "inf")):
            t0 = time.monotonic()
            try:
                o.acquire((4, 1), timeout=t)
                res = "granted"
            except ordlock.Timeout:
                res = "timeout"
            except Exception as ex:  # noqa: BLE001
                res = repr(ex)
            ms = (time.monotonic() - t0) * 1000
            # the kernel never ends a wait early: the wrapped value (0, the
            # domain default of 100 ms) ends it long before max_timeout_ms
            ok(res == "timeout" and ms >= MAX_MS * 0.9,
               "timeout=%s: the longest wait (max_timeout_ms %d), not a wrapped one"
               % (what, MAX_MS), "%s after %.0f ms" % (res, ms))
    os.close(stop)
    child_status(hpid)
finally:
    param("max_timeout_ms", old_max)
    param("default_timeout_ms", old_default)

# --- two threads, one Owner --------------------------------------------------
hpid, stop = holder((5, 1))
with ordlock.Owner(D) as o:
    res = {}

    def waiter():
        try:
            res["a"] = o.acquire((5, 1), timeout=60)
        except Exception as ex:  # noqa: BLE001
            res["a"] = ex

    th = threading.Thread(target=waiter)
    th.start()
    # a release of a key not held fails with ENOENT, or EBUSY once the
    # other thread's request waits in the kernel; it changes nothing
    busy = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            o.release((9, 9))
        except ordlock.OrdlockError as ex:
            if ex.errno == errno.EBUSY:
                busy = ex
                break
        time.sleep(0.01)
    ok(busy is not None, "a release while another thread's request waits: EBUSY")
    e = expect_raises(ordlock.OrdlockError, lambda: o.acquire((6, 1), timeout=5),
                      "an acquire while another thread's request waits raises")
    ok(e is not None and e.errno == errno.EBUSY, "... with EBUSY, at once",
       repr(e))
    os.close(stop)
    child_status(hpid)
    th.join(60)
    ok(isinstance(res.get("a"), ordlock.Held) and o.info()["nheld"] == 1,
       "the waiting thread got its key; the refused acquire took nothing",
       repr(res.get("a")))
anchor.close()
finish()
