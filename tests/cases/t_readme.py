#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# t_readme: the README's example programs, extracted from README.md as
# printed, built and run against the module; they say what the README says
# they say.  The C example (every ```c block): built with -Wall -Wextra
# -Werror against tools/lib; run alone it locks warehouses 2 and 1 and
# prints the line the README quotes; its keys are gone when it exits; run
# while this test holds warehouse 1 it waits and is granted when the test
# lets go; held for longer than its 5 s it fails with the README's "timed
# out waiting for exclusive 1:1 held (exclusive) by pid N" (N: this test)
# and exits 1; run by a user who may not open /dev/ordlock it exits 2 with
# "ordlock_open: Permission denied".  The Python example (every ```python
# block, with PYTHONPATH=tools/python): the same line, and "transfer: ..."
# with exit status 1 when it times out.  tests/unit/t_readme.sh compiles
# the same blocks on the host.  TAP on stdout.  Standard library only.
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(
    os.environ.get("ORDLOCK_REPO") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."),
    "tests", "lib"))
from oltap import REPO as repo, finish, import_ordlock, ok  # noqa: E402
DEBUGFS = "/sys/kernel/debug/ordlock"
DOMAIN = "shop"           # the examples' domain
SCALE = float(os.environ.get("ORDLOCK_WATCHDOG_SCALE", "1") or 1)


ordlock = import_ordlock()

with open(os.path.join(repo, "README.md")) as f:
    readme = f.read()


def blocks(lang):
    return re.findall(r"^```%s\n(.*?)^```$" % lang, readme, re.M | re.S)


# what the README says the examples print
m = re.search(r"It prints `(warehouses [^`]*)`", readme)
README_LINE = m.group(1) if m else None
m = re.search(r"`transfer: (timed out waiting for[^`]*?) by pid \d+`",
              readme.replace("\n", " "))
README_TIMEOUT = m.group(1) if m else None
ok(README_LINE is not None and README_TIMEOUT is not None,
   "README.md quotes the example's output (%r; %r)"
   % (README_LINE, README_TIMEOUT))

work = tempfile.mkdtemp(prefix="t_readme.")
os.chmod(work, 0o755)       # the unprivileged run must reach the program


def domain_lines(name):
    """debugfs NAME's records of the examples' domain"""
    try:
        with open(os.path.join(DEBUGFS, name)) as f:
            return [ln for ln in f.read().splitlines()
                    if not ln.startswith("#") and (" %s " % DOMAIN) in
                    (" " + ln + " ")]
    except OSError as e:
        return ["(%s)" % e]


def wait_for_waiter(pid, key, limit):
    """True once debugfs owners shows pid waiting for key"""
    end = time.time() + limit
    while time.time() < end:
        for ln in domain_lines("owners"):
            f = ln.split()
            if len(f) >= 9 and f[1] == str(pid) and f[7] == key:
                return True
        time.sleep(0.05)
    return False


def run(argv, env=None, preexec=None, timeout=60 * SCALE):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=env, preexec_fn=preexec,
                       timeout=timeout, cwd=work)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def scenarios(what, argv, env=None, c=False):
    """the example run alone, behind a holder, and timed out"""
    mypid = os.getpid()
    # 1. alone: the line the README quotes (with the token of this grant:
    # tokens start from the clock, above every earlier one), and nothing
    # left behind
    rc, out, err = run(argv, env)
    want = re.sub(r"token\\? \d+$", r"token \\d+", re.escape(README_LINE or "?"))
    ok(rc == 0 and re.fullmatch(want, out),
       "%s: alone, exits 0 and prints the README's %r (its own token)"
       % (what, README_LINE),
       "rc %d, stdout %r, stderr %r" % (rc, out, err))
    left = domain_lines("locks")
    ok(not left, "%s: its keys are released when it exits" % what,
       "\n".join(left))

    # 2. behind a holder: waits for 1:1, granted when the holder lets go
    holder = ordlock.Owner(DOMAIN)
    held = holder.acquire((1, 1), timeout=5)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, env=env, cwd=work)
    waiting = wait_for_waiter(p.pid, "1:1", 10 * SCALE)
    ok(waiting, "%s: while warehouse 1 is held it waits for 1:1 (debugfs owners)"
       % what, "\n".join(domain_lines("owners")))
    holder.close()
    try:
        out, err = p.communicate(timeout=30 * SCALE)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    m = re.match(r"^warehouses 2 and 1 locked, token (\d+)$", out.strip())
    ok(p.returncode == 0 and m and int(m.group(1)) > held.token,
       "%s: granted when the holder closes, with a later token than its %d"
       % (what, held.token),
       "rc %s, stdout %r, stderr %r" % (p.returncode, out, err))

    # 3. held for longer than its 5 s: the README's timeout sentence
    holder = ordlock.Owner(DOMAIN)
    holder.acquire((1, 1), timeout=5)
    t0 = time.time()
    rc, out, err = run(argv, env)
    took = time.time() - t0
    holder.close()
    want = "transfer: %s by pid %d" % (README_TIMEOUT, mypid)
    ok(rc == 1 and (err == want or err.startswith(want + " ")) and took >= 4.5,
       "%s: held throughout, fails after 5 s (%.1f s), exit 1: %r"
       % (what, took, want), "rc %d, stdout %r, stderr %r" % (rc, out, err))
    left = domain_lines("locks")
    ok(not left, "%s: nothing of the domain left" % what, "\n".join(left))


def unprivileged():
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


# --- the C example -----------------------------------------------------------
cblocks = blocks("c")
ok(len(cblocks) >= 1, "README.md has %d C block(s)" % len(cblocks))
for i, src in enumerate(cblocks, 1):
    what = "C block %d" % i
    path = os.path.join(work, "transfer%d.c" % i)
    prog = os.path.join(work, "transfer%d" % i)
    with open(path, "w") as f:
        f.write(src)
    cc = subprocess.run(
        ["cc", "-Wall", "-Wextra", "-Werror", "-std=c11", "-pedantic",
         "-I" + os.path.join(repo, "include", "uapi"),
         "-I" + os.path.join(repo, "tools", "lib"), "-o", prog, path,
         os.path.join(repo, "tools", "lib", "libordlock.a")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        universal_newlines=True)
    if not ok(cc.returncode == 0, "%s builds against tools/lib" % what,
              cc.stdout):
        continue
    scenarios(what, [prog])
    rc, out, err = run([prog], preexec=unprivileged)
    ok(rc == 2 and err == "ordlock_open: Permission denied",
       "%s: a user who may not open /dev/ordlock gets NULL: exit 2, "
       "\"ordlock_open: Permission denied\"" % what,
       "rc %d, stdout %r, stderr %r" % (rc, out, err))

# --- the Python example ------------------------------------------------------
pyblocks = blocks("python")
ok(len(pyblocks) >= 1, "README.md has %d Python block(s)" % len(pyblocks))
env = dict(os.environ, PYTHONPATH=os.path.join(repo, "tools", "python"))
for i, src in enumerate(pyblocks, 1):
    what = "Python block %d" % i
    path = os.path.join(work, "transfer%d.py" % i)
    with open(path, "w") as f:
        f.write(src)
    scenarios(what, [sys.executable, path], env)

finish()
