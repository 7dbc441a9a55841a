#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_layers -- the layer check of kmod/ (tests/lib/layers.py, the layers and
# the allowlist in kmod/layers.txt): from nm on the built objects, no file
# calls a layer above its own but for the allowlisted calls; no kmod/*.c is
# over 1000 lines without a comment line saying why; only cluster.c,
# backend.c and ordlock_dlm.c include backend.h; every object of Kbuild has
# a layer and a row in docs/design.md's layout table.  Then it plants each
# kind of fault (an upward call in the nm listing, a long file, an include,
# a missing row, an object without a layer) into a copy and sees the check
# fail on it.  The module is built first when its objects are missing or
# older than its sources.  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
check=$repo/tests/lib/layers.py
kmod=$repo/kmod
design=$repo/docs/design.md
unit_work

# the objects of ordlock.ko and ordlock_dlm.ko, built and newer than the sources
objs=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$kmod/Kbuild" |
	sed -n 's/^ *\(ordlock-y\|obj-m\) *[:+]\?= *//p' | tr -s ' \t' '\n' |
	grep '\.o$' | grep -vx ordlock.o)
stale=0
for o in $objs; do
	[[ -f $kmod/$o && ! $kmod/${o%.o}.c -nt $kmod/$o ]] || stale=1
	for h in "$kmod"/*.h; do [[ $h -nt $kmod/$o ]] && stale=1; done
done
if ((stale)); then
	echo "# building the module (make modules): objects missing or older than the sources"
	make -C "$repo" --no-print-directory modules >"$work/build.log" 2>&1 ||
		sed 's/^/# /' "$work/build.log"
fi

out=$(python3 "$check" "$kmod" "$design" 2>&1)
rc=$?
[[ -n $out ]] && echo "# ${out//$'\n'/$'\n'# }"
point $rc "kmod/ keeps its layers, sizes and seam, and design.md has a row per object"

# the real listing, as the planted cases read it
for o in $objs; do
	nm "$kmod/$o" | sed "s/^/${o%.o}: /"
done >"$work/nm"
out=$(python3 "$check" --nm "$work/nm" "$kmod" 2>&1)
point $? "the nm listing read back passes"

# an upward call planted: keys.c (base) calling the request engine
{ cat "$work/nm"; echo "keys:                  U ordlock_req_acquire"; } >"$work/nm-up"
out=$(python3 "$check" --nm "$work/nm-up" "$kmod" 2>&1)
rc=$?
echo "# ${out//$'\n'/$'\n'# }"
[[ $rc == 1 && $out == *"upward call: keys.c (base) calls ordlock_req_acquire() of request.c (engine)"* ]]
point $? "a planted upward call (keys.c -> ordlock_req_acquire) fails the check"

# a data structure calling the cluster: upward unless allowlisted
{ cat "$work/nm"; echo "table:                  U ordlock_cluster_unlock"; } >"$work/nm-up2"
out=$(python3 "$check" --nm "$work/nm-up2" "$kmod" 2>&1)
[[ $? == 1 && $out == *"upward call: table.c (data) calls ordlock_cluster_unlock()"* ]]
point $? "the allowlist is per caller: table.c -> ordlock_cluster_unlock fails"

# the same call with its allowlist line gone
cp -r "$kmod" "$work/k1"
sed -i '/^allow resource ordlock_cluster_unlock$/d' "$work/k1/layers.txt"
out=$(python3 "$check" --nm "$work/nm" "$work/k1" 2>&1)
[[ $? == 1 && $out == *"resource.c (data) calls ordlock_cluster_unlock()"* ]]
point $? "an allowlisted call fails once its allow line is removed"

# a file over 1000 lines without a reason; then with one
cp -r "$kmod" "$work/k2"
for i in $(seq 1 1001); do echo "/* line $i */"; done >>"$work/k2/keys.c"
out=$(python3 "$check" --nm "$work/nm" "$work/k2" 2>&1)
[[ $? == 1 && $out == *"size: keys.c has"* ]]
point $? "keys.c grown over 1000 lines fails the check"
sed -i '1a /* Over 1000 lines: a test */' "$work/k2/keys.c"
out=$(python3 "$check" --nm "$work/nm" "$work/k2" 2>&1)
point $? "... and passes with a comment line that says why"

# backend.h included outside the seam
cp -r "$kmod" "$work/k3"
sed -i '0,/^#include "/s//#include "backend.h"\n#include "/' "$work/k3/request.c"
out=$(python3 "$check" --nm "$work/nm" "$work/k3" 2>&1)
[[ $? == 1 && $out == *"seam: request.c includes backend.h"* ]]
point $? "an #include \"backend.h\" in request.c fails the check"

# an object of Kbuild without a layer
cp -r "$kmod" "$work/k4"
sed -i 's/ lease.o / lease.o newfile.o /' "$work/k4/Kbuild"
out=$(python3 "$check" --nm "$work/nm" "$work/k4" 2>&1)
[[ $? == 1 && $out == *"layer: newfile.o (Kbuild) has no layer"* ]]
point $? "an object added to Kbuild without a layer fails the check"

# design.md's layout table without the row of cluster.c
grep -v '^| .kmod/cluster\.c. |' "$design" >"$work/design.md"
out=$(python3 "$check" --nm "$work/nm" "$kmod" "$work/design.md" 2>&1)
[[ $? == 1 && $out == *"design.md: no row for cluster.c"* ]]
point $? "design.md's layout table without cluster.c's row fails the check"

unit_done
