#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# t_pyfeat: the Python binding's asyncio owner, lease keep-alive and query
# of a key, against the module.
#
# - asyncio: while one coroutine awaits a key another process holds, a
#   second coroutine keeps running (its ticks counted while the request
#   is queued in the kernel: ordlock.query() sees the waiter); the
#   holder's release grants it, with a token.
# - task.cancel() of a queued acquire withdraws the request in the kernel
#   before the CancelledError propagates: query() sees no waiter at once,
#   the AsyncOwner holds nothing, and when the holder lets go another owner
#   takes the key without waiting.
# - A timeout raises the usual Timeout (a TimeoutError) naming the holder;
#   an order violation the usual OrderViolation; acquire_async() closes its
#   owner when the block ends.
# - Keep-alive: a 0.6 s lease kept for 2 s (three periods) while another
#   owner waits (it times out naming the holder), the token still live,
#   nothing lost; a lease left to expire (renewals every 60 s) is reported
#   at once (.lost set, .error a Revoked with its record, on_lost called,
#   no renewal made), the end of the block raises Revoked: never silently.
#   The same with AsyncOwner.keepalive(): renewed by a task while the body
#   awaits; the revocation (the kernel's REVOKED message) interrupts the
#   body at once, which ends raising Revoked with the revoked keys.
# - query()/is_locked()/Owner.query(): free, exclusive by this pid with
#   its token, a waiter counted, shared by two owners.
# - The module docstring's example runs as printed and says what it says;
#   so does libordlock(3)'s keep-alive example in C (tests/Makefile builds
#   it as printed).
# TAP on stdout. Standard library only.
import asyncio
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(
    os.environ.get("ORDLOCK_REPO") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."),
    "tests", "lib"))
from oltap import REPO, finish, holder_child, import_ordlock, ok  # noqa: E402

ordlock = import_ordlock()
TAG = "pyfeat-%d" % os.getpid()
HANG = 60.0     # the hang guard of every wait that must end


def domain(n):
    return "%s-%d" % (TAG, n)


async def until(cond, what):
    """Poll cond() on the loop (a hang guard, no timing assertion)."""
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > HANG:
            raise AssertionError("never: " + what)
        await asyncio.sleep(0.005)


def release_holder(pid, pipe):
    os.close(pipe)
    os.waitpid(pid, 0)


async def t_ticks():
    d = domain(1)
    pid, pipe = holder_child(d, (1, 1))
    ticks = [0]
    stop = asyncio.Event()

    async def ticker():
        while not stop.is_set():
            ticks[0] += 1
            await asyncio.sleep(0.001)

    tick_task = asyncio.create_task(ticker())
    owner = ordlock.AsyncOwner(d)
    acq = asyncio.create_task(_await(owner.acquire((1, 1), timeout=HANG)))
    await until(lambda: ordlock.query((1, 1), d).waiters == 1, "the waiter queued")
    at_queue = ticks[0]
    await until(lambda: ticks[0] >= at_queue + 20, "20 ticks")
    ok(not acq.done(), "asyncio: 20 ticks of another coroutine while the acquire waits in the kernel")
    st = ordlock.query((1, 1), d)
    ok(st.state == "exclusive" and st.holders == (pid,) and st.waiters == 1,
       "asyncio: query() sees the holder and one waiter", st)
    release_holder(pid, pipe)
    held = await asyncio.wait_for(acq, HANG)
    ok(held.token > 0 and held.keys[0].id == 1, "asyncio: granted when the holder let go, token %d" % held.token)
    ok(ordlock.query((1, 1), d).holders == (os.getpid(),), "asyncio: held by this process")
    before = ticks[0]
    await held.release()
    ok(not ordlock.is_locked((1, 1), d), "asyncio: released")
    await until(lambda: ticks[0] > before, "a tick after")
    stop.set()
    await tick_task
    owner.close()


async def _await(aw):
    return await aw


async def t_cancel():
    d = domain(2)
    pid, pipe = holder_child(d, (1, 1))
    owner = ordlock.AsyncOwner(d)
    task = asyncio.create_task(_await(owner.acquire((1, 1), timeout=HANG)))
    await until(lambda: ordlock.query((1, 1), d).waiters == 1, "the waiter queued")
    task.cancel()
    try:
        await task
        ok(False, "cancel: the acquire raised CancelledError")
    except asyncio.CancelledError:
        ok(True, "cancel: the acquire raised CancelledError")
    st = ordlock.query((1, 1), d)
    ok(st.waiters == 0 and st.holders == (pid,),
       "cancel: withdrawn in the kernel: no waiter left, the holder still holds", st)
    release_holder(pid, pipe)
    other = ordlock.Owner(d)
    try:
        other.try_acquire((1, 1)).release()
        ok(True, "cancel: another owner takes the key at once")
    except ordlock.OrdlockError as e:
        ok(False, "cancel: another owner takes the key at once", e)
    other.close()
    ok(not ordlock.is_locked((1, 1), d), "cancel: the AsyncOwner got nothing")
    # the same owner serves the next request
    held = await owner.acquire((1, 1), timeout=HANG)
    ok(held.token > 0, "cancel: the owner's next acquire is granted")
    await owner.release()
    owner.close()


async def t_errors():
    d = domain(3)
    pid, pipe = holder_child(d, (1, 1))
    owner = ordlock.AsyncOwner(d)
    try:
        await owner.acquire((1, 1), timeout=0.3)
        ok(False, "timeout: Timeout")
    except ordlock.Timeout as e:
        ok(isinstance(e, TimeoutError) and e.pid == pid and e.reason_name == "timeout",
           "timeout: the usual Timeout (a TimeoutError) naming the holder", e)
    try:
        await owner.acquire((1, 1), nowait=True)
        ok(False, "busy: Busy")
    except ordlock.Busy as e:
        ok(e.pid == pid, "busy: nowait=True raises Busy naming the holder", e)
    release_holder(pid, pipe)
    async with owner.acquire((2, 5)) as held:
        try:
            await owner.acquire((1, 1))
            ok(False, "order: OrderViolation")
        except ordlock.OrderViolation as e:
            ok(e.held is not None and e.held.rank == 2,
               "order: a key below a held one is the usual OrderViolation", e)
        ok(held.token > 0, "order: the held key stays held")
    ok(not ordlock.is_locked((2, 5), d), "async with: released at the end")
    owner.close()
    async with ordlock.acquire_async((3, 3), domain=d, timeout=HANG) as held:
        ok(ordlock.query((3, 3), d).token == held.token,
           "acquire_async: held under its token")
        own = held.owner
    ok(own._sock is None and not ordlock.is_locked((3, 3), d),
       "acquire_async: the owner is closed at the end")


# one process waits, on two threads, 1.2 s for key (5, 1) and for (5, 5)
WAITER = """import ordlock, threading
out = {}
def wait(i):
    try:
        ordlock.acquire((5, i), domain=%r, timeout=1.2)
    except ordlock.Timeout as e:
        out[i] = e.pid
ts = [threading.Thread(target=wait, args=(i,)) for i in (1, 5)]
[t.start() for t in ts]
[t.join() for t in ts]
print(out.get(1), out.get(5))
"""


async def t_keepalives():
    """Owner.keepalive() (libordlock's thread) and AsyncOwner.keepalive()
    (a task) keep their 0.6 s leases for the same 2 s"""
    d = domain(4)
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tools", "python"))
    owner = ordlock.Owner(d)
    held = owner.acquire((5, 1), lease=0.6)
    aowner = ordlock.AsyncOwner(d)
    aheld = await aowner.acquire((5, 5), lease=0.6)
    lost = []
    with held.keepalive(interval=0.1, on_lost=lost.append) as ka:
        async with aowner.keepalive(interval=0.1) as aka:
            waiter = await asyncio.create_subprocess_exec(
                sys.executable, "-c", WAITER % d, stdout=subprocess.PIPE, env=env)
            t0 = time.monotonic()
            while time.monotonic() - t0 < 2.0:
                ka.check()
                await asyncio.sleep(0.05)
            out = (await asyncio.wait_for(waiter.communicate(), HANG))[0].decode().split()
    ok(out == [str(os.getpid())] * 2,
       "keepalive: both waiters timed out on the holds, naming their holder", out)
    ok(not ka.lost.is_set() and ka.error is None and ka.renewals >= 3 and not lost,
       "keepalive: nothing lost in 2 s, renewed (%d times)" % ka.renewals)
    ok(owner.token_check((5, 1), held.token),
       "keepalive: the token is live after three lease periods")
    ok(aka.error is None and not aka.lost.is_set() and aka.renewals >= 3,
       "async keepalive: nothing lost in 2 s, renewed (%d times)" % aka.renewals)
    ok(ordlock.token_check((5, 5), aheld.token, domain=d),
       "async keepalive: the token is live after three lease periods")
    held.release()
    owner.close()
    await aheld.release()
    aowner.close()


async def t_async_revoked():
    d = domain(6)
    owner = ordlock.AsyncOwner(d)
    held = await owner.acquire((5, 6), lease=0.3)
    caught = None
    try:
        async with owner.keepalive(interval=60) as ka:
            await asyncio.sleep(HANG)       # interrupted at the revocation
    except ordlock.Revoked as e:
        caught = e
    ok(caught is not None and caught.key is not None and caught.key[:2] == (5, 6) and
       ka.lost.is_set() and ka.renewals == 0,
       "async keepalive: the block is interrupted at once, raising Revoked", caught)
    ok(caught is not None and (5, 6, held.token) in
       [(k.rank, k.id, t) for k, t in caught.revoked],
       "async keepalive: Revoked lists the revoked key with its token",
       caught and caught.revoked)
    ok(not ordlock.token_check((5, 6), held.token, domain=d),
       "async keepalive: the token is stale")
    await owner.release()
    ok(owner.revoked is None, "async keepalive: release() acknowledges")
    owner.close()


def t_revoked():
    owner = ordlock.Owner(domain(7))
    lost = []
    held = owner.acquire((5, 2), lease=0.3)
    caught = None
    try:
        with held.keepalive(interval=60, on_lost=lost.append) as ka:
            ok(ka.lost.wait(HANG), "revoked: .lost is set when the lease expires")
            ok(isinstance(ka.error, ordlock.Revoked) and ka.error.reason_name == "revoked"
               and ka.error.key is not None and ka.error.key[:2] == (5, 2),
               "revoked: .error is a Revoked naming the key", ka.error)
            ok(ka.renewals == 0, "revoked: reported at once, before any renewal")
            ok(len(lost) == 1 and isinstance(lost[0], ordlock.Revoked),
               "revoked: on_lost got it")
            ok(not owner.token_check((5, 2), held.token), "revoked: the token is stale")
    except ordlock.Revoked as e:
        caught = e
    ok(caught is not None and (ordlock.Key(5, 2), held.token) in
       [(ordlock.Key(k.rank, k.id), t) for k, t in caught.revoked],
       "revoked: the end of the block raises Revoked with the revoked keys", caught)
    owner.release()
    try:
        owner.keepalive()
        ok(False, "keepalive: nothing held: NotHeld")
    except ordlock.NotHeld:
        ok(True, "keepalive: nothing held: NotHeld")
    owner.close()


def t_query():
    d = domain(5)
    a, b = ordlock.Owner(d), ordlock.Owner(d)
    st = ordlock.query((6, 1), d)
    ok(st.state == "free" and not st and st.holders == () and st.waiters == 0,
       "query: a free key", st)
    h = a.acquire((6, 1))
    st = a.query((6, 1))
    ok(st.state == "exclusive" and st and st.holders == (os.getpid(),) and
       st.token == h.token and st.nholders == 1,
       "query: exclusive, by this pid, under its token", st)
    ok(ordlock.is_locked("6:1", d) and not ordlock.is_locked((6, 1)),
       "is_locked: in its domain, not in another")
    h.release()
    a.acquire((6, 2), mode="shared")
    b.acquire((6, 2), mode="shared")
    st = ordlock.query((6, 2), d)
    ok(st.state == "shared" and st.nholders == 2, "query: shared by two owners", st)
    a.close()
    b.close()
    try:
        ordlock.query((2**32 + 7, 1), d)
        ok(False, "query: a bad rank: ValueError")
    except ValueError:
        ok(True, "query: a bad rank: ValueError")


def t_example():
    doc = ordlock.__doc__
    m = re.search(r"tests/cases/t_pyfeat.py runs it\)::\n\n(.*?)\n\n(?=\S)", doc, re.S)
    ok(m is not None, "example: found in the module docstring")
    if not m:
        return
    code = "\n".join(line[4:] for line in m.group(1).splitlines())
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tools", "python"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=env, timeout=HANG)
    want = [r"warehouse 1: exclusive by \d+ token True", "warehouse 2 kept: True",
            "warehouse 1 held: False"]
    lines = r.stdout.splitlines()
    ok(r.returncode == 0 and len(lines) == 3 and
       all(re.fullmatch(w, line) for w, line in zip(want, lines)),
       "example: runs as printed and prints what it should", r.stdout + r.stderr)


def t_man_example():
    """libordlock(3)'s keep-alive example, which tests/Makefile built as
    printed (the third .EX of EXAMPLE: tests/build/examples/keepalive)"""
    exe = os.path.join(REPO, "tests", "build", "examples", "keepalive")
    with open(os.path.join(REPO, "tools", "libordlock.3")) as f:
        ok("ordlock_keepalive_start(ol, 0, 0, NULL, NULL)" in f.read() and
           os.access(exe, os.X_OK),
           "libordlock(3): the keep-alive example, built (make -C tests cases)")
    if not os.access(exe, os.X_OK):
        return
    r = subprocess.Popen([exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = r.communicate(timeout=HANG)
    ok(r.returncode == 0 and out == "warehouse 3: exclusive by pid %d, 0 waiting\n"
       "kept: token live\n" % r.pid and not err,
       "libordlock(3): the example keeps its 1 s lease for 2.4 s and says so",
       out + err)


async def main():
    await t_ticks()
    await t_cancel()
    await t_errors()
    await t_keepalives()
    await t_async_revoked()

asyncio.run(main())
t_revoked()
t_query()
t_example()
t_man_example()
finish()
