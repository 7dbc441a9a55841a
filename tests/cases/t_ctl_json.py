#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# t_ctl_json: every -j output of every ordlockctl subcommand is read by a
# JSON parser (Python's json module): one document (monitor: one a line),
# with the exit status of the text form it stands for (issue 30: "order -j"
# wrote no outer object and exited 0 where "order" exits 1).  The states
# behind them are live: a ring of two waiting owners in a "timeout" domain
# (cycles, graph, locks, owners, blockers, stats exit as their text forms),
# a learned potential deadlock in a "detect" domain (order: 1, --suggest:
# 0), a deadlock the kernel broke (cycles --history: 1), a live and a stale
# token (check-token: 0 and 1), the domain listing and setting, monitor's
# event lines, and the failures (an unknown domain: 69 and no output).
# Every subcommand whose options hold -j must be among those run.  Also:
#  - -J is -j (lslocks' letter), --pretty is the same document;
#  - tokens are JSON numbers (below 2^53-1: they start from the clock in
#    microseconds), and a token above 2^53-1 is written as a string of its
#    digits (check-token echoes the one it is given);
#  - the FD form of exec leaves the ordlockctl that exited as the owner's
#    pid: locks/owners say pid_exited true and COMM "ordlockctl(exited)",
#    and exec -n beside it says the holder's pid has exited;
#  - locks/owners/blockers -r hold no escape (WAITED in microseconds).
# TAP on stdout; standard library only.
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(
    os.environ.get("ORDLOCK_REPO") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."),
    "tests", "lib"))
from oltap import REPO, finish, ok  # noqa: E402

C = os.path.join(REPO, "tools", "ordlockctl", "ordlockctl")
PID = os.getpid()
WORK = tempfile.mkdtemp(prefix="ctl-json.")
ENV = dict(os.environ, C=C, NO_COLOR="1", W=WORK)
BG = []
TESTED = set()


def dom(tag):
    return "cj%s-%d" % (tag, PID)


def run(cmd, timeout=60):
    """sh -c CMD ($C the CLI, $W a scratch directory): (status, out, err)"""
    p = subprocess.run(["sh", "-c", cmd], env=ENV, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")


def bg(cmd):
    """A background sh -c CMD in its own process group"""
    p = subprocess.Popen(["sh", "-c", cmd], env=ENV, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    BG.append(p)
    return p


def stop_bg():
    for p in BG:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    del BG[:]


def wait_for(what, cond, seconds=60):
    """Poll cond() until true (a hang guard only: no speed is assumed)"""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    ok(False, "waited for " + what)
    return False


def nedges(d):
    st, out, _ = run("$C graph -j -d %s" % d)
    try:
        return len(json.loads(out)["edges"]) if st == 0 else -1
    except ValueError:
        return -1


def parse(out):
    """The document, or the exception the parser raised"""
    try:
        return json.loads(out)
    except ValueError as e:
        return e


def jcase(args, want=None, check=None, what=None):
    """
    "ordlockctl ARGS" against "ordlockctl ARGS -j": the same exit status
    (@want when given), and -j's output one JSON document (none on a
    failure of 64 and up is fine); --pretty and -J give the same document.
    @check(doc) adds a condition.  Returns the document.
    """
    sub, _, rest = args.partition(" ")
    TESTED.add(sub)
    what = what or "ordlockctl " + args

    def form(opt):
        # right after the subcommand: domain and check-token take their
        # options before their arguments
        return "$C %s %s %s" % (sub, opt, rest)

    st, out, err = run("$C " + args)
    jst, jout, jerr = run(form("-j"))
    doc = parse(jout)
    good = not isinstance(doc, Exception) or (jst >= 64 and not jout.strip())
    ok(st == jst and (want is None or st == want),
       "%s: -j exits as the text form (%d, %d%s)" %
       (what, st, jst, "" if want is None else ", want %d" % want),
       "text: %s%s\njson: %s%s" % (out[-800:], err[-400:], jout[-800:], jerr[-400:]))
    ok(good, "%s -j: %s" % (what, "one JSON document" if jout.strip() else
                           "exit %d, no output" % jst),
       "%s\n%s" % (doc, jout[-1500:]))
    if not isinstance(doc, Exception):
        pst, pout, _ = run(form("--pretty -j"))
        big_st, big_out, _ = run(form("-J"))
        pdoc, bdoc = parse(pout), parse(big_out)
        ok(pst == jst and big_st == jst and not isinstance(pdoc, Exception)
           and not isinstance(bdoc, Exception) and "\n  " in pout
           and sorted(pdoc) == sorted(doc) and sorted(bdoc) == sorted(doc),
           "%s: --pretty and -J: the same document, the same status" % what,
           pout[-600:])
        if check:
            try:
                res = check(doc)
            except (KeyError, IndexError, TypeError) as e:
                res = False
                jout += "\n%r" % e
            ok(res, "%s -j: %s" % (what, check.__doc__ or "its fields"), jout[-1500:])
    return doc if not isinstance(doc, Exception) else None


# --- the states -----------------------------------------------------------
D1, D2, D3 = dom("r"), dom("o"), dom("h")
for d, pol in ((D1, "timeout"), (D2, "detect"), (D3, "detect")):
    st, out, err = run("$C domain %s set policy %s" % (d, pol))
    ok(st == 0, "domain %s set policy %s" % (d, pol), out + err)

# the FD form: the keys stay with a description the sleep holds open, taken
# by an ordlockctl that exited
bg("exec 9<>/dev/ordlock; $C exec -d %s -x 9:1 9 || exit 1; touch $W/anchor; exec sleep 1000" % D1)
wait_for("the FD form's key 9:1", lambda: os.path.exists(os.path.join(WORK, "anchor")))

# a ring of two in the timeout domain: each holds one key, then waits for
# the other's once both hold (a barrier of files)
for me, other, mine, theirs in (("a", "b", 1, 2), ("b", "a", 2, 1)):
    bg("exec 9<>/dev/ordlock; $C exec -d {d} -x 1:{m} 9 || exit 1; touch $W/{me}; "
       "while [ ! -e $W/{o} ]; do sleep 0.05; done; "
       "exec $C exec -d {d} -x 1:{t} 9".format(d=D1, me=me, o=other, m=mine, t=theirs))
wait_for("the ring of two (two edges)", lambda: nedges(D1) == 2)

# a learned potential deadlock: one description takes 1:1 then 2:1, then
# 2:1 then 1:1
st, out, err = run("exec 9<>/dev/ordlock; $C exec -d {d} -x 1:1 9 && $C exec -d {d} -x 2:1 9 && "
                   "$C exec -u 9 && $C exec -d {d} -x 2:1 9 && $C exec -d {d} -x 1:1 9 && "
                   "$C exec -u 9".format(d=D2))
ok(st == 0, "%s learned 1 -> 2 and 2 -> 1 through exec FD" % D2, out + err)

# a deadlock the kernel breaks in the detect domain
for me, other, mine, theirs in (("c", "d", 1, 2), ("d", "c", 2, 1)):
    bg("exec 9<>/dev/ordlock; $C exec -d {d} -x 1:{m} 9 || exit 1; touch $W/{me}; "
       "while [ ! -e $W/{o} ]; do sleep 0.05; done; "
       "$C exec -d {d} -x 1:{t} 9; touch $W/{me}.done; exec sleep 1000".format(
           d=D3, me=me, o=other, m=mine, t=theirs))
wait_for("the kernel broke the deadlock of %s" % D3,
         lambda: os.path.exists(os.path.join(WORK, "c.done")) or
         os.path.exists(os.path.join(WORK, "d.done")))

# --- every subcommand's -j --------------------------------------------------
locks = jcase("locks -d %s" % D1, 0)
jcase("locks", 0)
jcase("locks -S netlink -d %s" % D1, 0)
jcase("locks -p %d" % PID, 0)
jcase("locks -d no-such-domain-%d" % PID, 69)


def anchor_row(doc):
    rows = [r for r in doc.get("locks", []) if r.get("key") == "9:1"]
    return rows[0] if rows else {}


def tok_number(doc):
    """the FD form's holder: a token that is a JSON number (below 2^53-1), pid_exited"""
    r = anchor_row(doc)
    return (isinstance(r.get("token"), int) and 0 < r["token"] <= 2 ** 53 - 1
            and r.get("pid_exited") is True and r.get("comm") == "ordlockctl")


if locks:
    ok(tok_number(locks), tok_number.__doc__, json.dumps(locks)[-1500:])
    token = anchor_row(locks).get("token") or 0
    waiters = [r["pid"] for r in locks["locks"] if r["role"] == "waiter"]
    ok(len(waiters) == 2 and all(r.get("pid_exited") is False for r in locks["locks"]
                                 if r["role"] == "waiter"),
       "the two waiting ordlockctl are alive (pid_exited false)")
else:
    token, waiters = 0, []
st, out, err = run("$C locks -d %s" % D1)
ok(st == 0 and "ordlockctl(exited)" in out,
   "locks: the FD form's holder reads ordlockctl(exited)", out)
st, out, err = run("$C exec -n -d %s -x 9:1 -- true" % D1)
ok(st == 1 and "has exited" in err and "held (exclusive) by pid" in err,
   "exec -n beside it: 1, naming the holder and saying its pid has exited", err)
for cmd in ("locks -r -d %s" % D1, "owners -r -d %s" % D1,
            "blockers -r %d" % (waiters[0] if waiters else 1)):
    st, out, err = run("$C " + cmd)
    ok(st in (0, 1) and "\\" not in out and out.strip(),
       "%s: raw values, no escapes" % cmd, out)

def fd_owner(doc):
    """the FD form's owner holds one key, pid_exited"""
    return any(o.get("pid_exited") and o["held"] == 1 for o in doc["owners"])


jcase("owners -d %s" % D1, 0, fd_owner)
jcase("owners -w -d %s" % D1, 0)
jcase("owners", 0)
jcase("graph -d %s" % D1, 0, lambda d: len(d["edges"]) == 2)
jcase("graph", 0)
jcase("graph -S netlink -d %s" % D1, 0)


def one_cycle(doc):
    """one cycle of two"""
    return doc["count"] == 1 and doc["cycles"][0]["length"] == 2


jcase("cycles -d %s" % D1, 1, one_cycle)
jcase("cycles -S netlink -d %s" % D1, 1, one_cycle)
jcase("cycles -l 1", 1)
jcase("cycles -d %s" % D2, 0)
jcase("cycles --history -d %s" % D3, 1)
jcase("cycles --history -d %s" % D2, 0)
if waiters:
    jcase("blockers %d" % waiters[0], 1, lambda d: len(d["blocking_pids"]) == 1)
jcase("blockers %d" % PID, 0)
jcase("stats", 0)
jcase("stats -d %s" % D1, 0)
jcase("stats -a", 0)
jcase("domain", 0)
jcase("domain %s" % D1, 0)
jcase("domain %s set delay 0" % D2, 0)
jcase("domain no-such-domain-%d" % PID, 69)


def potential(doc):
    """the potential deadlock, as an object"""
    return doc["domain"] == D2 and len(doc["potential"]) >= 1 and doc["npotential"] >= 1


def suggest(doc):
    """the suggestion, in the same object"""
    return potential(doc) and doc["suggest"]["command"].startswith("ordlockctl domain")


jcase("order -d %s" % D2, 1, potential)
jcase("order --suggest -d %s" % D2, 0, suggest)
jcase("order -d %s" % D1, None)
jcase("order -d no-such-domain-%d" % PID, 69)

# check-token: live 0, stale 1; past 2^53-1 a string of digits
if token:
    jcase("check-token -d %s 9:1 %d" % (D1, token), 0,
          lambda d: d["state"] == "live" and d["token"] == token)
    jcase("check-token -d %s 9:1 %d" % (D1, token - 1), 1)
else:
    ok(False, "check-token: no token read")


def big(doc):
    """2^53+1 is the string "9007199254740993" """
    return doc["token"] == "9007199254740993" and doc["state"] == "stale"


def safe(doc):
    """2^53-1 is the number 9007199254740991"""
    return doc["token"] == 9007199254740991 and isinstance(doc["token"], int)


jcase("check-token -d %s 9:1 9007199254740993" % D1, 1, big)
jcase("check-token -d %s 9:1 9007199254740991" % D1, 1, safe)

# monitor: the lines of one timeout event, text and -j alike; the monitor
# may subscribe after the first events, so they go on until it exits
TESTED.add("monitor")
results = {}
for form in ("", "-j"):
    mon = subprocess.Popen(["sh", "-c", "exec $C monitor %s -c 2 -t 120 -d %s" % (form, D1)],
                           env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 100
    while mon.poll() is None and time.monotonic() < deadline:
        run("$C exec -w 0.01 -q -d %s -x 9:1 -- true" % D1)
    if mon.poll() is None:
        mon.kill()
    out, err = mon.communicate()
    results[form] = (mon.returncode, out.decode("utf-8", "replace"))
(st, out), (jst, jout) = results[""], results["-j"]
lines = [parse(x) for x in jout.splitlines()]
ok(st == 0 and jst == 0, "monitor -c 2: exit 0, text and -j (%d, %d)" % (st, jst), out + jout)
ok(len(lines) == 2 and all(isinstance(x, dict) for x in lines) and
   all(x.get("event") == "timeout" for x in lines),
   "monitor -j: two lines, each one JSON document (timeout events)", jout)

# every subcommand that takes -j was run above
st, out, _ = run("$C help --commands")
takes = []
for sub in out.split():
    if sub == "help":
        continue
    s2, opts, _ = run("$C help --options %s" % sub)
    if any(line.split()[:2] == ["-j", "--json"] for line in opts.splitlines()):
        takes.append(sub)
missing = sorted(set(takes) - TESTED)
ok(len(takes) >= 10 and not missing,
   "every subcommand that takes -j was run through the parser (%d)" % len(takes),
   "not run: %s" % missing)

stop_bg()
run("rm -rf $W")
finish()
