#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# t_learn_py: the learned lock order from Python (tools/python/ordlock.py):
# Owner.set_label(), learned_order() and reset_order(). Source 004's API
# takes orders then inventories, its batch inventories then orders, one
# after the other (no deadlock can happen): learned_order() reports the
# potential deadlock naming both labels, with each edge's first
# observation; a shared/shared inversion stays silent; a bad label raises;
# with order_max_edges lowered, what did not fit is in "dropped" and
# "max_edges".
# TAP on stdout. Standard library only.
import os
import sys
import traceback

sys.path.insert(0, os.path.join(
    os.environ.get("ORDLOCK_REPO") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."),
    "tests", "lib"))
from oltap import expect_raises, finish, import_ordlock, ok  # noqa: E402

ordlock = import_ordlock()


def path(domain, label, *steps):
    """One owner, labelled, taking each key in a request of its own."""
    with ordlock.Owner(domain) as o:
        o.set_label(label)
        for rank, id, mode in steps:
            o.acquire((rank, id), mode=mode, timeout=5)


try:
    X, S = ordlock.EXCLUSIVE, ordlock.SHARED
    dom = "pylearn-%d" % os.getpid()
    ordlock.set_policy(dom, "detect")
    path(dom, "api", (1, 10, X), (2, 20, X))
    path(dom, "batch", (2, 20, X), (1, 10, X))
    order = ordlock.learned_order(dom, ranks={"orders": 1, "inventories": 2})
    ok(order["learning"] and order["npotential"] == 1,
       "004 from Python: one potential deadlock", order)
    pot = order["potential"][0] if order["potential"] else {}
    ok(pot.get("kind") == "cycle" and pot.get("labels") == ["api", "batch"],
       "it names the API's path and the batch's, the closing one last", pot)
    e = order["edges"][pot["edges"][0]] if pot else {}
    first = e.get("first", {})
    ok(e.get("from") == "orders" and e.get("to") == "inventories" and
       first.get("label") == "api" and first.get("pid", 0) > 0 and
       first.get("held", {}).get("key") == "orders:10" and
       first.get("taken", {}).get("mode") == "exclusive" and
       first.get("time_ns", 0) > 0,
       "each edge has its first observation (label, pid, keys, modes, time)", e)
    ok(order["dropped"] == 0 and order["nranks"] == 2, "nothing dropped, 2 ranks",
       order)

    dom2 = "pylearn2-%d" % os.getpid()
    ordlock.set_policy(dom2, "timeout")
    path(dom2, "r1", (1, 1, S), (2, 1, S))
    path(dom2, "r2", (2, 1, S), (1, 1, S))
    order = ordlock.learned_order(dom2)
    ok(order["npotential"] == 0 and len(order["edges"]) == 2,
       "shared/shared both ways: learned, not reported", order)

    def bad_label():
        with ordlock.Owner(dom2) as o:
            o.set_label("two words")
    err = expect_raises(OSError, bad_label, "a bad label raises OSError")
    ok(err is not None and err.errno == 22, "EINVAL", err)

    param = "/sys/module/ordlock/parameters/order_max_edges"
    with open(param) as f:
        saved = f.read().strip()
    dom3 = "pylearn3-%d" % os.getpid()
    ordlock.set_policy(dom3, "detect")
    try:
        with open(param, "w") as f:
            f.write("2")
        path(dom3, "many", (1, 1, X), (2, 1, X), (3, 1, X), (4, 1, X))
        order = ordlock.learned_order(dom3)
    finally:
        with open(param, "w") as f:
            f.write(saved)
    ok(len(order["edges"]) == 2 and order["dropped"] == 4 and
       order["max_edges"] == 2,
       "the bound: 2 edges kept of 6, 4 dropped, max_edges 2", order)

    ordlock.reset_order(dom)
    order = ordlock.learned_order(dom)
    ok(order["edges"] == [] and order["npotential"] == 0,
       "reset_order() forgets it", order)
    expect_raises(FileNotFoundError,
                  lambda: ordlock.learned_order("pylearn-none-%d" % os.getpid()),
                  "a domain that does not exist raises FileNotFoundError")
except Exception:
    ok(False, "no exception", traceback.format_exc())

finish()
