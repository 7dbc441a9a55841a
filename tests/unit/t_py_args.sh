#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_py_args -- the Python binding refuses the numbers a C argument cannot
# hold instead of letting ctypes wrap them: a timeout past 2^32 - 1 ms
# waits the longest (4294967.296 s wrapped to 0 ms, the domain default), a
# lease or max_hold_ms out of range, a negative detect_delay_ms, a token
# past 64 bits or an unknown policy name raise ValueError, before any
# descriptor is opened (so no module is needed: the in-VM t_python covers
# the calls that reach the kernel). TAP.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here" && git rev-parse --show-toplevel 2>/dev/null) || repo=$(cd "$here/../.." && pwd)
[[ -f $repo/tools/python/ordlock.py ]] || repo=$(cd "$here/../../.." && pwd)
py=/usr/bin/python3
[[ -x $py ]] || py=python3

# the points of a second run, with the tree's library (no module here): n
# and failed go on from the first
lib=$repo/tools/lib/libordlock.so.1
[[ -e /sys/module/ordlock || ! -e $lib ]] && lib=
PYTHONPATH=$repo/tools/python ORDLOCK_LIB=/nonexistent/libordlock.so T_PY_LIB=$lib "$py" - <<'PY'
import os
import subprocess
import sys
import ordlock

n = 0
failed = 0


def point(cond, what):
    global n, failed
    n += 1
    print("%sok %d - %s" % ("" if cond else "not ", n, what))
    if not cond:
        failed += 1


def raises(exc, fn, what):
    try:
        fn()
    except exc as e:
        point(True, "%s (%s)" % (what, e))
        return
    except Exception as e:  # noqa: BLE001
        point(False, "%s: raised %r" % (what, e))
        return
    point(False, "%s: nothing raised" % what)


T = ordlock._timeout_ms
point(T(4294967.296) == (0xFFFFFFFF, 0),
      "timeout 4294967.296 s: the longest wait, not 0 ms (the domain default): %r"
      % (T(4294967.296),))
point(T(1e9) == (0xFFFFFFFF, 0) and T(float("inf")) == (0xFFFFFFFF, 0),
      "timeout 1e9 s and inf: the longest wait")
point(T(5) == (5000, 0) and T(0) == (0, ordlock.ACQUIRE_TRY) and T(None) == (0, 0),
      "timeout 5 s, 0 (try) and None (the domain default) as before")
point(T(4294967.294) == (4294967294, 0), "timeout 4294967.294 s: 4294967294 ms")
raises(ValueError, lambda: T(float("nan")), "timeout nan: ValueError")
point(T(-1) == (0xFFFFFFFF, 0),
      "timeout -1 (filelock's convention): the longest wait, up to max_timeout_ms")
raises(ValueError, lambda: T(-2), "timeout -2: ValueError")
raises(ValueError, lambda: T(-0.5), "timeout -0.5: ValueError")
L = ordlock._lease_ms
point(L(None) == 0 and L(2.5) == 2500, "lease None and 2.5 s as before")
raises(ValueError, lambda: L(4294968), "lease 4294968 s (past 2^32 - 1 ms): ValueError")
raises(ValueError, lambda: L(float("nan")), "lease nan: ValueError")
raises(ValueError, lambda: ordlock.set_max_hold("d", -1),
       "set_max_hold(-1): ValueError (ctypes made it 4294967295 ms)")
raises(ValueError, lambda: ordlock.set_max_hold("d", (1 << 32) + 5),
       "set_max_hold(2^32 + 5): ValueError (ctypes made it 5 ms)")
raises(ValueError, lambda: ordlock.set_policy("d", "detect", -1),
       "set_policy(detect_delay_ms=-1): ValueError")
raises(ValueError, lambda: ordlock.set_policy("d", "bogus"),
       "set_policy(\"bogus\"): ValueError naming the policies, not a bare KeyError")
raises(ValueError, lambda: ordlock.token_check((1, 1), 1 << 64),
       "token_check(token 2^64): ValueError")
raises(ValueError, lambda: ordlock.token_check((1, 1), -1),
       "token_check(token -1): ValueError")
# retry only what ordlock raised (issue 30): a socket's ETIMEDOUT is not
# ordlock's Timeout
import errno
point(not ordlock.retryable(OSError(errno.ETIMEDOUT, "socket"))
      and not ordlock.retryable(TimeoutError(errno.ETIMEDOUT, "socket"))
      and not ordlock.retryable(OSError(errno.EKEYEXPIRED, "key")),
      "retryable: no OSError that ordlock did not raise (ETIMEDOUT, EKEYEXPIRED)")

# issue 42, defect 6: the module-level acquire() checks its arguments
# before it loads the library or opens the device
raises(ValueError, lambda: ordlock.acquire((2**32 + 7, 1)),
       "acquire((2**32 + 7, 1)) without the library: ValueError, not ImportError")
raises(ValueError, lambda: ordlock.acquire((1, 1), timeout=-2),
       "acquire(timeout=-2) without the library: ValueError")
raises(ValueError, lambda: ordlock.acquire(), "acquire() of no keys: ValueError")
try:
    ordlock.mode_name(1)
    point(False, "without the library: ImportError")
except ImportError as e:
    text = str(e)
    point(text.count("/nonexistent/libordlock.so") == 1,
          "the ImportError names each place it looked once, not \"PATH: PATH: ...\" (%s)" % text)

# with the tree's library and no module: what ordlockctl says
lib = os.environ.get("T_PY_LIB")
if lib:
    code = r"""
import ordlock
try:
    ordlock.acquire((2**32 + 7, 1))
    print("nothing")
except Exception as e:
    print(type(e).__name__)
try:
    ordlock.Owner("shop")
    print("nothing")
except ordlock.DeviceMissing as e:
    print("DeviceMissing", e)
"""
    env = dict(os.environ, ORDLOCK_LIB=lib)
    out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, universal_newlines=True).stdout
    lines = out.splitlines() + ["", ""]
    point(lines[0] == "ValueError",
          "with the library, no module: acquire((2**32 + 7, 1)) raises ValueError, not DeviceMissing (%s)"
          % lines[0])
    point(lines[1].startswith("DeviceMissing") and
          "the ordlock module is not loaded (insmod ordlock.ko, or modprobe ordlock)" in lines[1],
          "no module: DeviceMissing says what ordlockctl says (%s)" % lines[1])
else:
    point(True, "# SKIP the module is loaded here, or tools/lib/libordlock.so.1 is not built")
print("1..%d" % n)
raise SystemExit(1 if failed else 0)
PY
