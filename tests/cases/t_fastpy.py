#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# t_fastpy: the fast path from Python (issue 28, docs/fastpath.md). In a
# domain given the fast path (through ordlockctl), acquire(token=False)
# asks for no fencing token, so libordlock takes an uncontended exclusive
# key by CAS: Held.token is None, "ordlockctl locks -j" shows the holder
# with its fast_index (the word names it) and this pid, another owner's
# try_acquire raises Busy naming this pid; Held.convert() to shared works
# (the kernel adopts the key: a token, the holder row a kernel one); the
# default (a token) stays the kernel's: a token, no fast_index; a fork
# child's Held.release() lets the parent's fast hold go (the owner is
# shared, as the binding documents); a child killed holding a key by the
# fast path leaves it free.
# TAP on stdout. Standard library only.
import json
import os
import signal
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.join(
    os.environ.get("ORDLOCK_REPO") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."),
    "tests", "lib"))
from oltap import REPO as repo, expect_raises, finish, import_ordlock, ok  # noqa: E402

ordlock = import_ordlock()
CTL = os.path.join(repo, "tools", "ordlockctl", "ordlockctl")


def ctl(*args):
    r = subprocess.run([CTL] + list(args), capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def rows(dom, key):
    """the rows of "ordlockctl locks -j -d DOM" for key "R:I" """
    st, out, err = ctl("locks", "-j", "-d", dom)
    if st != 0:
        return None
    return [r for r in json.loads(out).get("locks", []) if r.get("key") == key]


try:
    dom = "pyfast-%d" % os.getpid()
    st, out, err = ctl("domain", dom, "set", "fastpath", "on", "uid",
                       str(os.getuid()))
    ok(st == 0, "ordlockctl: %s set fastpath on" % dom, out + err)

    with ordlock.Owner(dom) as o:
        # the first grant pins the key (a system call); the next is a CAS
        with o.acquire((1, 5), token=False, timeout=5):
            pass
        h = o.acquire((1, 5), token=False, timeout=5)
        ok(h.token is None, "token=False: Held.token is None (%r)" % (h.token,))
        ok(o.info()["nheld"] == 0, "the kernel holds nothing: the fast path does",
           str(o.info()))
        r = rows(dom, "1:5")
        ok(r is not None and len(r) == 1 and r[0]["role"] == "holder"
           and r[0]["fast_index"] is not None and r[0]["pid"] == os.getpid()
           and r[0]["token"] is None,
           "ordlockctl locks -j: the holder by its fast_index and pid", repr(r))
        e = expect_raises(ordlock.Busy, lambda: ordlock.try_acquire((1, 5), domain=dom),
                          "another owner's try_acquire raises Busy")
        if e:
            ok(e.pid == os.getpid(), "naming this pid (%s)" % e.pid)
        t = h.convert((1, 5), ordlock.SHARED)
        ok(isinstance(t, int) and t > 0 and h.token == t,
           "Held.convert() to shared: the kernel adopts it, with a token (%r)" % (t,))
        r = rows(dom, "1:5")
        ok(r is not None and len(r) == 1 and r[0]["fast_index"] is None
           and r[0]["mode"] == "shared" and r[0]["token"] == t,
           "ordlockctl locks -j: a kernel holder now, shared, that token", repr(r))
        with ordlock.acquire((1, 5), domain=dom, mode=ordlock.SHARED, nowait=True) as s:
            ok(s.token > 0, "another owner shares it")
        h.release()
        with o.acquire((1, 6), timeout=5) as k:
            ok(isinstance(k.token, int) and k.token > 0,
               "the default asks for a token: %r" % (k.token,))
            r = rows(dom, "1:6")
            ok(r is not None and len(r) == 1 and r[0]["fast_index"] is None
               and r[0]["token"] == k.token,
               "its holder row is the kernel's, with that token", repr(r))

    # a child forked while the parent holds a key by the fast path: its
    # Held.release() lets it go for the parent too (the owner is shared)
    with ordlock.Owner(dom) as o:
        h = o.acquire((1, 8), token=False, timeout=5)
        h.release()
        h = o.acquire((1, 8), token=False, timeout=5)
        ok(o.info()["nheld"] == 0, "1:8 held by the fast path")
        pid = os.fork()
        if pid == 0:
            try:
                h.release()
                os._exit(0)
            except BaseException:
                os._exit(1)
        _, st = os.waitpid(pid, 0)
        ok(os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0,
           "a fork child's Held.release() of the parent's 1:8")
        with ordlock.try_acquire((1, 8), domain=dom) as t:
            ok(t.token > 0, "1:8 is free for another owner")

    # a child killed while it holds a key by the fast path
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        try:
            c = ordlock.Owner(dom)
            c.acquire((1, 7), token=False, timeout=5)
            c.release()
            c.acquire((1, 7), token=False, timeout=5)
            os.write(wr, b"1" if c.info()["nheld"] == 0 else b"0")
        except BaseException:
            os.write(wr, b"e")
        time.sleep(600)
        os._exit(0)
    os.close(wr)
    got = os.read(rd, 1)
    os.close(rd)
    ok(got == b"1", "a child holds 1:7 by the fast path (%r)" % got)
    r = rows(dom, "1:7")
    ok(r is not None and len(r) == 1 and r[0]["pid"] == pid and r[0]["fast_index"] is not None,
       "shown as the child's", repr(r))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    with ordlock.try_acquire((1, 7), domain=dom) as h:
        ok(h.token > 0, "after kill -9 the key is free")
    st, out, err = ctl("domain", dom, "set", "fastpath", "off")
    ok(st == 0, "fast path off at the end", out + err)
except Exception:
    ok(False, "unexpected exception", traceback.format_exc())
finish()
