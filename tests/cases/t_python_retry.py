#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# t_python_retry: issue 16 from Python: strict ranks (StrictRanks), the
# late key that sorts earlier (acquire(reorder=True): in place, let go and
# taken again, timed out after letting go), and retries (Owner.attempts(),
# @ordlock.retrying): full jitter, what is not retried, the caps, and seed
# 003's two warehouses with try-locks put in lockstep by a barrier; a
# lease that expires during an attempt (issue 27, defect 2): the next
# attempt starts from an acknowledged owner and holds the keys, a body
# that succeeded is not reported as failed (Attempts.revoked and a
# RevokedWarning say the lease expired before the release).
# TAP on stdout. Standard library only.
import errno
import multiprocessing
import os
import select
import sys
import threading
import time
import warnings

sys.path.insert(0, os.path.join(
    os.environ.get("ORDLOCK_REPO") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."),
    "tests", "lib"))
from oltap import expect_raises, finish, holder_child, import_ordlock, ok  # noqa: E402


ordlock = import_ordlock()

ordlock.ranks.update(orders=1, inventories=2)
PID = os.getpid()


def stop_child(child):
    pid, stop = child
    os.close(stop)
    os.waitpid(pid, 0)


def wait_free(domain, k, what):
    """Poll until another owner can take k (a condition, not a sleep)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            ordlock.try_acquire(k, domain=domain).release()
            return ok(True, what)
        except ordlock.Busy:
            time.sleep(0.005)
    return ok(False, what, "still busy after 20 s")


# --- strict ranks --------------------------------------------------------------
STRICT = "py-strict-%d" % PID
ordlock.set_strict(STRICT)
ok(ordlock.domain_config(STRICT)["strict"] is True, "set_strict: domain_config says strict")
with ordlock.Owner(STRICT) as o:
    o.acquire(("inventories", 30))
    e = expect_raises(ordlock.StrictRanks, lambda: o.acquire(("inventories", 40)),
                      "strict: a higher id of a held rank raises StrictRanks")
    if e:
        ok(isinstance(e, ordlock.OrderViolation) and e.errno == errno.EDEADLK
           and e.reason_name == "strict" and e.held == ordlock.exclusive(2, 30)
           and e.key == ordlock.exclusive(2, 40),
           "StrictRanks: an OrderViolation, EDEADLK, reason strict, names both keys",
           "%r %s %s %s" % (e, e.reason_name, e.key, e.held))
        ok(not ordlock.retryable(e), "StrictRanks is not retryable")
    ok(o.info()["nheld"] == 1, "strict: nothing taken")
ordlock.set_strict(STRICT, False)
ok(ordlock.domain_config(STRICT)["strict"] is False, "set_strict(False)")

# --- reorder -------------------------------------------------------------------
SHOP = "py-reorder-%d" % PID
anchor = ordlock.Owner(SHOP)
with ordlock.Owner(SHOP) as w:
    inv = w.acquire(("inventories", 30))
    expect_raises(ordlock.OrderViolation, lambda: w.acquire(("orders", 10)),
                  "reorder: without it, order 10 after inventory 30 is refused")
    h = w.acquire(("orders", 10), reorder=True)
    ok(not h.reacquired and h.token > inv.token and w.info()["nheld"] == 2,
       "reorder: order 10 free: granted in place, nothing let go")
    h.release()

    child = holder_child(SHOP, ("orders", 10))
    box = {}

    def webhook():
        try:
            box["held"] = w.acquire(("orders", 10), reorder=True, timeout=30)
        except Exception as ex:  # noqa: BLE001
            box["error"] = ex
    t = threading.Thread(target=webhook)
    t.start()
    # it let inventory 30 go (and waits for order 10): another owner can take it
    wait_free(SHOP, ("inventories", 30), "reorder: inventory 30 is let go while it waits")
    stop_child(child)
    t.join(40)
    h = box.get("held")
    ok(h is not None and h.reacquired and h.token > inv.token
       and w.info()["nheld"] == 2,
       "reorder: granted after the wait, reacquired, new token, both held",
       repr(box))
    w.release()

    child = holder_child(SHOP, ("orders", 10))
    w.acquire(("inventories", 30))
    e = expect_raises(ordlock.Timeout,
                      lambda: w.acquire(("orders", 10), reorder=True, timeout=0.2),
                      "reorder: the wait times out")
    if e:
        ok(e.let_go and e.held == ordlock.exclusive(2, 30)
           and w.info()["nheld"] == 0,
           "reorder: the Timeout says inventory 30 was let go, and it is gone",
           "let_go %s held %s" % (e.let_go, e.held))
    stop_child(child)

# --- retries -------------------------------------------------------------------
RETRY = "py-retry-%d" % PID
ordlock.set_policy(RETRY, "enforce")
anchor2 = ordlock.Owner(RETRY)
with ordlock.Owner(RETRY) as o:
    it = o.attempts("1:1", attempts=10, base=0.01, cap=0.04)
    samples = [it.backoff(3) for _ in range(200)]
    ok(all(0 <= s <= 0.04 for s in samples) and len(set(samples)) > 100,
       "backoff: full jitter, uniform in [0, min(cap, base * 4)]")
    ok(all(it.backoff(9) <= 0.04 for _ in range(50)), "backoff: capped")

    o.acquire("2:5")
    ran = []

    def violate():
        it = o.attempts("1:1", attempts=10, base=0.001)
        try:
            for attempt in it:
                with attempt:
                    ran.append(attempt.number)
        finally:
            box["violate"] = it.attempts
    expect_raises(ordlock.OrderViolation, violate,
                  "attempts: an order violation propagates")
    ok(box.get("violate") == 1 and not ran, "attempts: it was not retried")
    o.release()

    def body_error():
        for attempt in o.attempts("1:1", attempts=10, base=0.001):
            with attempt:
                raise ValueError("the caller's own bug")
    expect_raises(ValueError, body_error, "attempts: a ValueError in the block propagates")
    ok(o.info()["nheld"] == 0, "attempts: the keys were released")

    numbers = []
    it = o.attempts("1:1", attempts=5, base=0.001)
    for attempt in it:
        with attempt:
            numbers.append(attempt.number)
            if attempt.number < 3:
                raise ordlock.Busy(errno.EAGAIN, "synthetic busy")
    ok(numbers == [1, 2, 3] and it.attempts == 3,
       "attempts: a retryable error in the block leads to the next attempt", numbers)
    ok(o.info()["nheld"] == 0, "attempts: nothing held after the loop")

    child = holder_child(RETRY, "3:3")
    it = o.attempts("3:3", attempts=5, nowait=True, base=0.001)
    real_backoff = it.backoff

    def release_then_backoff(number):
        if number == 1:
            stop_child(child)
        return real_backoff(number)
    it.backoff = release_then_backoff
    got = []
    for attempt in it:
        with attempt:
            got.append(attempt.token)
    ok(it.attempts == 2 and len(got) == 1 and got[0] > 0,
       "attempts: Busy on the first try, granted on the second", it.attempts)

    child = holder_child(RETRY, "3:4")
    it = o.attempts("3:4", attempts=1000, total=0.3, timeout=0.05, base=0.01)
    t0 = time.monotonic()
    e = expect_raises(ordlock.Timeout, lambda: [None for a in it],
                      "attempts: held throughout: the last Timeout is raised")
    ok(1 < it.attempts < 1000 and time.monotonic() - t0 < 10,
       "attempts: the total time ended it (%d attempts)" % it.attempts)
    stop_child(child)

    @ordlock.retrying("3:5", owner=o, attempts=3)
    def work(held, x):
        return x + (1 if held.token > 0 else 0)
    ok(work(41) == 42 and o.info()["nheld"] == 0,
       "@retrying: the function runs under the keys, its value returned")

    e = ordlock.Deadlock(errno.EDEADLK, "x")
    e.reason = ordlock.R_DEADLOCK
    ok(ordlock.retryable(e), "retryable: a deadlock victim")
    ok(ordlock.retryable(ordlock.Revoked(errno.EKEYEXPIRED, "revoked")),
       "retryable: a revoked lease (EKEYEXPIRED)")
    ok(not ordlock.retryable(OSError(errno.EINVAL, "bad")), "not retryable: EINVAL")

    # only what ordlock raised: the body's own errno-carrying failure (a
    # socket's ETIMEDOUT) is not a Timeout of ordlock's (issue 30)
    ok(not ordlock.retryable(OSError(errno.ETIMEDOUT, "socket"))
       and not ordlock.retryable(TimeoutError(errno.ETIMEDOUT, "socket"))
       and not ordlock.retryable(BlockingIOError(errno.EAGAIN, "socket")),
       "not retryable: OSError, TimeoutError and BlockingIOError not raised by ordlock")
    calls = []

    @ordlock.retrying("3:6", owner=o, attempts=5, base=0.001)
    def fetch(held, url):
        calls.append(held.token)
        raise TimeoutError(errno.ETIMEDOUT, "connect to %s timed out" % url)
    e = expect_raises(TimeoutError, lambda: fetch("db"),
                      "@retrying: a socket's ETIMEDOUT in the body propagates")
    ok(len(calls) == 1 and not isinstance(e, ordlock.OrdlockError)
       and o.info()["nheld"] == 0,
       "@retrying: ... after one attempt (not retried), the keys released", calls)
    numbers = []

    def loop():
        for attempt in o.attempts("3:6", attempts=5, base=0.001):
            with attempt:
                numbers.append(attempt.number)
                raise OSError(errno.ETIMEDOUT, "recv timed out")
    expect_raises(OSError, loop, "attempts: an OSError(ETIMEDOUT) of the block propagates")
    ok(numbers == [1], "attempts: ... from the first attempt", numbers)

# --- a thread that waits for itself (issue 42, defect 5) -------------------------
# One owner of this thread holds 4:1, a second one asks for it: Deadlock at
# once, a cycle of one step (this process); never retryable: no attempt of
# Owner.attempts() or @retrying follows the first.
SELF = "py-self-%d" % PID
with ordlock.Owner(SELF) as a, ordlock.Owner(SELF) as b:
    a.acquire("4:1")
    t0 = time.monotonic()
    e = expect_raises(ordlock.Deadlock, lambda: b.acquire("4:1", timeout=30),
                      "self-wait: a second owner of the thread asks for 4:1: Deadlock")
    ok(time.monotonic() - t0 < 30, "self-wait: at once, not after the timeout (hang guard)")
    ok(e is not None and e.reason == ordlock.R_DEADLOCK and e.cycle_len == 1
       and len(e.cycle) == 1 and e.cycle[0].pid == PID,
       "self-wait: reason deadlock, a cycle of one step, in this process",
       e and (e.reason_name, e.cycle_len, [str(s) for s in e.cycle]))
    ok(e is not None and not ordlock.retryable(e), "self-wait: not retryable")
    it = b.attempts("4:1", attempts=5, base=0.001, timeout=30)
    bodies = []

    def self_loop():
        for attempt in it:
            with attempt:
                bodies.append(attempt.number)
    expect_raises(ordlock.Deadlock, self_loop, "self-wait: attempts() raises the Deadlock")
    ok(it.attempts == 1 and not bodies, "self-wait: ... after one attempt, not five",
       (it.attempts, bodies))
    calls = []

    @ordlock.retrying("4:1", owner=b, attempts=5, base=0.001, timeout=30)
    def self_work(held):
        calls.append(held.token)
    expect_raises(ordlock.Deadlock, self_work, "self-wait: @retrying raises it too, the body never run")
    ok(not calls, "self-wait: ... the body never ran", calls)

# --- a lease revoked during an attempt ------------------------------------------
LEASE = "py-retry-lease-%d" % PID


def revoke_now(o, held):
    """Give what o holds a 50 ms lease, and wait (bounded) for POLLPRI."""
    p = select.poll()
    p.register(o.fileno(), select.POLLPRI)
    held.renew(0.05)
    return bool(p.poll(20000))


def probe(k):
    try:
        ordlock.try_acquire(k, domain=LEASE).release()
        return "free"
    except ordlock.Busy:
        return "busy"


o = ordlock.Owner(LEASE)
seen = {}


def record_raised(body):
    """Run body(); what it raised (None: nothing) goes to seen["raised"]."""
    try:
        body()
        seen["raised"] = None
    except Exception as ex:  # noqa: BLE001
        seen["raised"] = ex


def revoked_body():
    it = o.attempts("5:1", attempts=3, base=0.001)
    for attempt in it:
        with attempt:
            seen.setdefault("tokens", []).append(attempt.token)
            if attempt.number == 1:
                seen["pollpri"] = revoke_now(o, attempt.held)
                o.renew()           # raises Revoked: the attempt failed
            else:
                seen["nheld"] = o.info()["nheld"]
                seen["probe"] = probe("5:1")
    seen["attempts"] = it.attempts


record_raised(revoked_body)
ok(seen.get("pollpri"), "attempts: the lease expired during attempt 1", seen)
ok(seen.get("raised") is None and seen.get("attempts") == 2,
   "attempts: a revoked attempt is retried, and the second one succeeds", seen)
tk = seen.get("tokens", [])
ok(seen.get("nheld") == 1 and seen.get("probe") == "busy"
   and len(tk) == 2 and tk[1] > tk[0],
   "attempts: attempt 2 holds the key, with a token above the revoked one", seen)
ok(o.info()["nheld"] == 0, "attempts: nothing held after the loop")

# the block succeeded, the lease expired before the release (a fresh owner)
o.close()
o = ordlock.Owner(LEASE)
seen = {}


def work_done():
    it = o.attempts("5:2", attempts=3, base=0.001)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for attempt in it:
            with attempt:
                seen.setdefault("numbers", []).append(attempt.number)
                seen["pollpri"] = revoke_now(o, attempt.held)
        seen["warnings"] = [x.category.__name__ for x in w]
    seen["attempts"] = it.attempts
    seen["revoked"] = it.revoked
    seen["attempt_revoked"] = attempt.revoked


record_raised(work_done)
ok(seen.get("pollpri") and seen.get("raised") is None
   and seen.get("numbers") == [1] and seen.get("attempts") == 1,
   "attempts: a block that succeeded is not reported as failed, nor run again",
   seen)
rv = seen.get("revoked")
ok(isinstance(rv, ordlock.Revoked) and rv is seen.get("attempt_revoked")
   and [k for k, _ in rv.revoked] == [ordlock.exclusive(5, 2)],
   "attempts: .revoked is the Revoked of the release, naming 5:2", seen)
ok(seen.get("warnings") == ["RevokedWarning"],
   "attempts: a RevokedWarning says the lease expired before the release", seen)
try:
    o.acquire("5:3").release()
    usable = True
except ordlock.OrdlockError as ex:
    usable = ex
ok(usable is True and o.info()["nheld"] == 0,
   "attempts: the revocation was acknowledged: the owner acquires again", usable)

o.close()
o = ordlock.Owner(LEASE)
calls = []


@ordlock.retrying("5:4", owner=o, attempts=3, base=0.001)
def job(held):
    calls.append(held.token)
    if len(calls) == 1:
        revoke_now(o, held)
        held.renew()
    return "done"


try:
    res = job()
except Exception as ex:  # noqa: BLE001
    res = ex
ok(res == "done" and len(calls) == 2 and calls[1] > calls[0],
   "@retrying: a revoked attempt is retried and the value returned", (res, calls))

# keys held before the loop were revoked too: not acknowledged for us
o.close()
o = ordlock.Owner(LEASE)
o.acquire("4:1")
seen = {}


def held_before():
    it = o.attempts("5:5", attempts=3, base=0.001)
    try:
        for attempt in it:
            with attempt:
                revoke_now(o, attempt.held)
                o.renew()
    finally:
        seen["attempts"] = it.attempts


e = expect_raises(ordlock.Revoked, held_before,
                  "held before: the loop raises Revoked")
ok(seen.get("attempts") == 1, "held before: not retried in vain", seen)
e = expect_raises(ordlock.Revoked, lambda: o.acquire("6:1"),
                  "held before: the owner stays revoked for its caller")
if e:
    ok(sorted(k for k, _ in e.revoked) == [ordlock.exclusive(4, 1),
                                           ordlock.exclusive(5, 5)],
       "held before: 4:1 and 5:5 were revoked", e.revoked)
o.release()
o.close()

# --- seed 003: two warehouses with try-locks, in lockstep ------------------------
WH = "py-wh-%d" % PID
ordlock.set_policy(WH, "timeout")
anchor3 = ordlock.Owner(WH)
ROUNDS = 10
ctx = multiprocessing.get_context("fork")
stock = ctx.Array("l", [0, 4000, 4000])
tries = ctx.Array("i", [0] * (2 * ROUNDS))
meet = ctx.Barrier(2, timeout=60)
done = ctx.Barrier(2, timeout=60)


def side(i):
    src, dst, qty = (("1:1", "1:2", 5) if i == 0 else ("1:2", "1:1", 3))
    sid, did = (1, 2) if i == 0 else (2, 1)
    with ordlock.Owner(WH) as ow:
        for r in range(ROUNDS):
            it = ow.attempts(src, attempts=40, base=0.005, cap=0.2, timeout=30)
            for attempt in it:
                with attempt:
                    if attempt.number == 1:
                        meet.wait()     # both hold their source here
                    ow.acquire(dst, nowait=True)
                    stock[sid] -= qty
                    stock[did] += qty
                    time.sleep(0.001)
                    ow.release(dst)
            tries[i * ROUNDS + r] = it.attempts
            done.wait()


procs = [ctx.Process(target=side, args=(i,)) for i in range(2)]
for p in procs:
    p.start()
for p in procs:
    p.join(120)
ok(all(p.exitcode == 0 for p in procs), "warehouses: both sides completed",
   [p.exitcode for p in procs])
ok(stock[1] == 4000 - ROUNDS * 5 + ROUNDS * 3 and stock[1] + stock[2] == 8000,
   "warehouses: the stock is exact (%d, %d)" % (stock[1], stock[2]))
collided = sum(1 for r in range(ROUNDS) if tries[r] > 1 or tries[ROUNDS + r] > 1)
ok(collided == ROUNDS, "warehouses: every round collided and was retried",
   list(tries))

finish()
