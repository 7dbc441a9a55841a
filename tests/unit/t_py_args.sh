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

PYTHONPATH=$repo/tools/python ORDLOCK_LIB=/nonexistent/libordlock.so exec "$py" - <<'PY'
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
print("1..%d" % n)
raise SystemExit(1 if failed else 0)
PY
