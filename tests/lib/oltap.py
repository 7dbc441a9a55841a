# SPDX-License-Identifier: GPL-2.0
"""TAP for the Python tests of tests/cases/ (standard library only).

A test puts this directory on sys.path, then:

    from oltap import ok, expect_raises, finish, import_ordlock, REPO
    ordlock = import_ordlock()

holder_child() forks a process that holds keys until told to stop.

Importing it also points the binding at the tree: tools/python on sys.path
and ORDLOCK_LIB at tools/lib/libordlock.so.1, unless the environment says
otherwise.  The counters are per process: a forked child that calls ok()
prints its own lines.
"""
import os
import sys
import traceback

REPO = os.environ.get("ORDLOCK_REPO") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools", "python"))
os.environ.setdefault("ORDLOCK_LIB",
                      os.path.join(REPO, "tools", "lib", "libordlock.so.1"))

_count = {"n": 0, "failed": 0}


def ok(cond, what, diag=None):
    """One TAP point; @diag (any object) is printed as comments on failure."""
    _count["n"] += 1
    if cond:
        print("ok %d - %s" % (_count["n"], what))
    else:
        _count["failed"] += 1
        print("not ok %d - %s" % (_count["n"], what))
        if diag is not None:
            for line in str(diag).splitlines():
                print("# " + line)
    sys.stdout.flush()
    return cond


def expect_raises(cls, fn, what):
    """A point that passes when fn() raises @cls; returns the exception."""
    try:
        fn()
    except cls as e:
        ok(True, what)
        return e
    except Exception as e:  # noqa: BLE001
        ok(False, what, "raised %r" % (e,))
        return None
    ok(False, what, "raised nothing")
    return None


def failures():
    """How many points failed so far."""
    return _count["failed"]


def finish():
    """Print the plan and exit: 1 when a point failed."""
    print("1..%d" % _count["n"])
    sys.stdout.flush()
    sys.exit(1 if _count["failed"] else 0)


def import_ordlock():
    """Import the binding, as a point; a failure ends the test."""
    try:
        import ordlock
    except Exception:  # noqa: BLE001
        ok(False, "import ordlock", traceback.format_exc())
        finish()
    ok(True, "import ordlock (%s)" % ordlock._lib._name)
    return ordlock


def holder_child(domain, *keys):
    """A child process that holds keys of domain (the binding's acquire,
    5 s to get them) until the returned pipe is closed: returns (pid,
    pipe); it is running with the keys when this returns."""
    import ordlock
    ready_r, ready_w = os.pipe()
    stop_r, stop_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(stop_w)
        with ordlock.acquire(*keys, domain=domain, timeout=5):
            os.write(ready_w, b"r")
            os.read(stop_r, 1)
        os._exit(0)
    os.close(stop_r)
    os.read(ready_r, 1)
    return pid, stop_w
