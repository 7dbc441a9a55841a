#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
layers.py -- the layer check of kmod/ (tests/unit/t_layers.sh runs it).

From the built objects (nm on kmod/*.o: which file defines and which file
calls each global symbol) and the declared layers of kmod/layers.txt, it
fails on
  - a call from a file to a file of a layer above it that the allowlist of
    kmod/layers.txt does not name (caller file and symbol),
  - an object of Kbuild with no layer, or a layer's file not in Kbuild,
  - a kmod/*.c over 1000 lines without a comment line that says why
    ("over 1000 lines" in it),
  - an #include "backend.h" outside cluster.c, backend.c and ordlock_dlm.c,
  - an object of Kbuild without a row in docs/design.md's layout table.

Usage: layers.py [--nm LISTING] KMOD_DIR [DESIGN_MD]
  --nm LISTING: read "FILE: nm line" lines from LISTING instead of running
  nm on KMOD_DIR/*.o (the unit test plants an upward call so).
Prints one line per problem; exits 1 when there is one, 2 on a usage error.
"""
import os
import re
import subprocess
import sys

SIZE_LIMIT = 1000
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
    """Layers top first: [(name, [patterns])], allow {(file, symbol)}"""
    layers, allow = [], set()
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
        raise SystemExit("layers.txt: cannot read: " + raw.rstrip())
    return layers, allow


def layer_of(stem, layers):
    for i, (_, pats) in enumerate(layers):
        for p in pats:
            if re.fullmatch(p.replace("*", ".*"), stem):
                return i
    return None


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
    layers, allow = read_layers(kmod)

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
    used_allow = set()
    for f, sym in uses:
        g = defs.get(sym)
        if g is None or g == f:
            continue
        lf, lg = layer_of(f, layers), layer_of(g, layers)
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

    # sizes, and who includes backend.h
    for name in sorted(os.listdir(kmod)):
        path = os.path.join(kmod, name)
        if not name.endswith((".c", ".h")) or not os.path.isfile(path):
            continue
        text = open(path).read()
        if name.endswith(".c") and text.count("\n") > SIZE_LIMIT and \
                not re.search(r"^\s*(/?\*|//).*over %d lines" % SIZE_LIMIT, text,
                              re.M | re.I):
            bad.append("size: %s has %d lines (over %d) and no comment line saying why"
                       % (name, text.count("\n"), SIZE_LIMIT))
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
