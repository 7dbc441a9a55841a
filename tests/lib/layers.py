#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
layers.py -- the layer check of kmod/ (tests/unit/t_layers.sh runs it).

From the built objects (nm on kmod/*.o: which file defines and which file
calls each global symbol) and the declared layers of kmod/layers.txt, it
fails on
  - a call from a file to a file of a layer above it that the allowlist of
    kmod/layers.txt does not name (caller file and symbol),
  - a loop between files of one layer (X calls Y and Y calls X, or a
    longer cycle) that no "loop" line of kmod/layers.txt lists with its
    reason: a call from X to Y of X's layer, where Y's calls in that
    layer lead back to X, must be one that a "loop" line names,
  - a kmod/*.c longer than its cap: the "size" lines of kmod/layers.txt,
    a default for every file and a cap, with its reason, for a few,
  - an #include "backend.h" outside cluster.c, backend.c and ordlock_dlm.c,
  - an object of Kbuild with no layer, or a layer's file not in Kbuild,
  - an object of Kbuild without a row in docs/design.md's layout table,
  - and on the real objects, a stale line: an "allow" or "loop" line whose
    calls are gone, a "size" line of a file within the default cap.

Usage: layers.py [--nm LISTING] KMOD_DIR [DESIGN_MD]
  --nm LISTING: read "FILE: nm line" lines from LISTING instead of running
  nm on KMOD_DIR/*.o (the unit test plants an upward call and a loop so).
Prints one line per problem; exits 1 when there is one, 2 on a usage error.
"""
import os
import re
import subprocess
import sys

SEAM = {"cluster.c", "backend.c", "ordlock_dlm.c"}


def kbuild_objects(kmod):
    """The objects of ordlock-y and obj-m (ordlock_dlm.o), as file stems"""
    text = open(os.path.join(kmod, "Kbuild")).read().replace("\\\n", " ")
    objs = []
    for line in text.splitlines():
        m = re.match(r"\s*(ordlock-y|obj-m)\s*[:+]?=\s*(.*)", line)
        if not m:
            continue
        for o in m.group(2).split():
            stem = o[:-2]
            if m.group(1) == "obj-m" and stem == "ordlock":
                continue
            objs.append(stem)
    return objs


def read_layers(kmod):
    """Layers top first: [(name, [patterns])], allow {(file, symbol)},
    loops [(files, line)], sizes [(pattern, cap, line)]"""
    layers, allow, loops, sizes = [], set(), [], []
    for raw in open(os.path.join(kmod, "layers.txt")):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.match(r"layer\s+(\w+):\s*(.*)", line)
        if m:
            layers.append((m.group(1), m.group(2).split()))
            continue
        m = re.match(r"allow\s+(\S+)\s+(\S+)$", line)
        if m:
            allow.add((m.group(1), m.group(2)))
            continue
        # loop FILE FILE... -- REASON; size STEM-PATTERN LINES -- REASON
        m = re.match(r"loop\s+(\w+(?:\s+\w+)+)\s+--\s+\S", line)
        if m:
            loops.append((m.group(1).split(), line.split(" --")[0]))
            continue
        m = re.match(r"size\s+(\S+)\s+(\d+)\s+--\s+\S", line)
        if m:
            sizes.append((m.group(1), int(m.group(2)), line.split(" --")[0]))
            continue
        raise SystemExit("layers.txt: cannot read (a loop or size line needs "
                         "\"-- reason\"): " + raw.rstrip())
    return layers, allow, loops, sizes


def stem_match(pattern, stem):
    return re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), stem) is not None


def layer_of(stem, layers):
    for i, (_, pats) in enumerate(layers):
        for p in pats:
            if stem_match(p, stem):
                return i
    return None


def path_back(graph, start, goal):
    """The shortest path of calls start .. goal in graph, or None"""
    prev, todo = {start: None}, [start]
    while todo:
        nxt = []
        for f in todo:
            for g in sorted(graph.get(f, ())):
                if g in prev:
                    continue
                prev[g] = f
                if g == goal:
                    path = [g]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return path[::-1]
                nxt.append(g)
        todo = nxt
    return None


def check_loops(calls, layers, loops, stale):
    """The loops between files of one layer that no loop line lists.
    calls: {(caller, callee): {symbols}} of files of one layer."""
    bad, graph, listed = [], {}, set()
    for f, g in calls:
        graph.setdefault(f, set()).add(g)
    for files, line in loops:
        lays = {layer_of(f, layers) for f in files}
        if None in lays or len(lays) != 1:
            bad.append("%s: its files are not objects of one layer" % line)
        steps = list(zip(files, files[1:] + files[:1]))
        listed.update(steps)
        gone = ["%s.c -> %s.c" % s for s in steps if s not in calls]
        if stale and gone:
            bad.append("%s: no such loop any more (no call %s): drop the line"
                       % (line, ", ".join(gone)))
    seen = set()
    for (f, g), syms in sorted(calls.items()):
        if (f, g) in listed:
            continue
        back = path_back(graph, g, f)
        if back is None:
            continue
        cycle = [f] + back
        key = frozenset(cycle)
        if key in seen:
            continue
        seen.add(key)
        bad.append("loop within a layer: %s (%s): %s.c calls %s() of %s.c, whose "
                   "calls lead back to it; break it, or list it in layers.txt "
                   "(loop %s -- reason)"
                   % (" -> ".join(c + ".c" for c in cycle),
                      layers[layer_of(f, layers)][0], f, sorted(syms)[0], g,
                      " ".join(cycle[:-1])))
    return bad


def check_sizes(kmod, sizes):
    """kmod/*.c longer than their caps; caps of files within the default"""
    bad = []
    default = [(p, c, l) for p, c, l in sizes if "*" in p]
    named = {p: (c, l) for p, c, l in sizes if "*" not in p}
    stems = [n[:-2] for n in sorted(os.listdir(kmod))
             if n.endswith(".c") and not n.endswith(".mod.c")]
    for stem in stems:
        n = open(os.path.join(kmod, stem + ".c")).read().count("\n")
        dflt = next(((c, l) for p, c, l in default if stem_match(p, stem)), None)
        cap = named.get(stem, dflt)
        if cap is None:
            bad.append("size: %s.c has no cap in layers.txt (a \"size\" line)" % stem)
        elif n > cap[0]:
            bad.append("size: %s.c has %d lines, over its cap of %d (%s): split it by "
                       "concern, or give it a cap with its reason" % (stem, n, cap[0], cap[1]))
        elif stem in named and dflt and n <= dflt[0]:
            bad.append("%s: %s.c has %d lines, within the default %d: drop the line"
                       % (named[stem][1], stem, n, dflt[0]))
    for stem in sorted(set(named) - set(stems)):
        bad.append("%s: no kmod/%s.c" % (named[stem][1], stem))
    return bad


def nm_listing(kmod, objs):
    lines = []
    for o in objs:
        path = os.path.join(kmod, o + ".o")
        if not os.path.exists(path):
            raise SystemExit("no %s: build the module first (make modules)" % path)
        out = subprocess.run(["nm", path], capture_output=True, text=True,
                             check=True).stdout
        lines += ["%s: %s" % (o, l) for l in out.splitlines()]
    return lines


def main(argv):
    nm_file = None
    if argv[:1] == ["--nm"]:
        nm_file, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    kmod = argv[0]
    design = argv[1] if len(argv) > 1 else None
    bad = []
    objs = kbuild_objects(kmod)
    layers, allow, loops, sizes = read_layers(kmod)

    # every object has a layer; every named file is an object
    for o in objs:
        if layer_of(o, layers) is None:
            bad.append("layer: %s.o (Kbuild) has no layer in layers.txt" % o)
    for _, pats in layers:
        for p in pats:
            if "*" not in p and p not in objs:
                bad.append("layer: %s in layers.txt is not an object of Kbuild" % p)

    # the calls
    lines = open(nm_file).read().splitlines() if nm_file else nm_listing(kmod, objs)
    defs, uses = {}, []
    for line in lines:
        f, _, rest = line.partition(": ")
        parts = rest.split()
        if len(parts) == 2 and parts[0] == "U":
            uses.append((f, parts[1]))
        elif len(parts) == 3 and parts[1] in "TDBRV":
            defs[parts[2]] = f
    used_allow, within = set(), {}
    for f, sym in uses:
        g = defs.get(sym)
        if g is None or g == f:
            continue
        lf, lg = layer_of(f, layers), layer_of(g, layers)
        if lf is not None and lf == lg:
            within.setdefault((f, g), set()).add(sym)
        if lf is None or lg is None or lg >= lf:
            continue
        if (f, sym) in allow:
            used_allow.add((f, sym))
            continue
        bad.append("upward call: %s.c (%s) calls %s() of %s.c (%s)" %
                   (f, layers[lf][0], sym, g, layers[lg][0]))
    if not nm_file:
        for f, sym in sorted(allow - used_allow):
            bad.append("allow %s %s: no such upward call any more: drop the line" % (f, sym))

    # the loops within a layer; the sizes
    bad += check_loops(within, layers, loops, not nm_file)
    bad += check_sizes(kmod, sizes)

    # who includes backend.h
    for name in sorted(os.listdir(kmod)):
        path = os.path.join(kmod, name)
        if not name.endswith((".c", ".h")) or not os.path.isfile(path):
            continue
        text = open(path).read()
        if name not in SEAM and re.search(r'^\s*#\s*include\s+"backend\.h"', text, re.M):
            bad.append("seam: %s includes backend.h (only %s may)" % (name, ", ".join(sorted(SEAM))))

    # docs/design.md's layout table: a row per object
    if design:
        doc = open(design).read()
        for o in objs:
            if not re.search(r"^\|\s*`kmod/%s\.c`" % re.escape(o), doc, re.M):
                bad.append("design.md: no row for %s.c in the layout table" % o)

    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
