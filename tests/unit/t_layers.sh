#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_layers -- the layer check of kmod/ (tests/lib/layers.py, the layers,
# the allowlist, the loops and the size caps in kmod/layers.txt): from nm
# on the built objects, no file calls a layer above its own but for the
# allowlisted calls, and no files of one layer call each other in a loop
# but those listed; no kmod/*.c is longer than its cap; only cluster.c,
# backend.c and ordlock_dlm.c include backend.h; every object of Kbuild has
# a layer and a row in docs/design.md's layout table.  Then it plants each
# kind of fault (an upward call and a loop in the nm listing, a listed loop
# or cap removed, a stale line, a long file, an include, a missing row, an
# object without a layer) into a copy and sees the check fail on it, naming
# the files.  The module is built first when its objects are missing or
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
point $rc "kmod/ keeps its layers, loops, sizes and seam, and design.md has a row per object"

# the real listing, as the planted cases read it
for o in $objs; do
	nm "$kmod/$o" | sed "s/^/${o%.o}: /"
done >"$work/nm"
out=$(python3 "$check" --nm "$work/nm" "$kmod" 2>&1)
point $? "the nm listing read back passes"

# plant LINE: the check on the real nm listing with LINE added; sets out, rc
plant() {
	{ cat "$work/nm"; echo "$1"; } >"$work/nm-plant"
	out=$(python3 "$check" --nm "$work/nm-plant" "$kmod" 2>&1)
	rc=$?
	echo "# ${out//$'\n'/$'\n'# }"
}
# in_copy NAME SED-SCRIPT [FILE]: a copy of kmod/ at $work/NAME with
# FILE (layers.txt) edited, checked with the real nm listing; sets out, rc
in_copy() {
	cp -r "$kmod" "$work/$1"
	sed -i "$2" "$work/$1/${3:-layers.txt}"
	out=$(python3 "$check" --nm "$work/nm" "$work/$1" 2>&1)
	rc=$?
}

# an upward call planted: keys.c (base) calling the request engine
plant "keys:                  U ordlock_req_acquire"
[[ $rc == 1 && $out == *"upward call: keys.c (base) calls ordlock_req_acquire() of request.c (engine)"* ]]
point $? "a planted upward call (keys.c -> ordlock_req_acquire) fails the check"

# a data structure calling the cluster: upward unless allowlisted
plant "table:                  U ordlock_cluster_unlock"
[[ $rc == 1 && $out == *"upward call: table.c (data) calls ordlock_cluster_unlock()"* ]]
point $? "the allowlist is per caller: table.c -> ordlock_cluster_unlock fails"

# the same call with its allowlist line gone
in_copy k1 '/^allow resource ordlock_cluster_unlock$/d'
[[ $rc == 1 && $out == *"resource.c (data) calls ordlock_cluster_unlock()"* ]]
point $? "an allowlisted call fails once its allow line is removed"

# a loop planted in one layer: topo.c (pure logic) calling back the
# learned order that calls it; a loop of three: graph.c calling the
# request engine that waits on it
plant "topo:                  U ordlock_order_reset"
[[ $rc == 1 && $out == "loop within a layer: order.c -> topo.c -> order.c (engine): order.c calls "*" of topo.c, whose calls lead back to it;"* ]]
point $? "a planted loop in one layer (topo.c -> ordlock_order_reset) fails the check, naming both files"
plant "graph:                  U ordlock_req_acquire"
[[ $rc == 1 && $out == "loop within a layer: graph.c -> request.c -> wait.c -> graph.c (engine): graph.c calls ordlock_req_acquire() of request.c"* ]]
point $? "a planted loop of three files (graph -> request -> wait -> graph) fails the check"

# a listed loop with its line gone; a loop line of files that do not call
# each other (on the real objects); a loop line without its reason
in_copy k5 '/^loop netlink nl_lock /d'
[[ $rc == 1 && $out == *"loop within a layer: netlink.c -> nl_lock.c -> netlink.c (front)"* ]]
point $? "a listed loop fails once its loop line is removed"
in_copy k6 '$a loop keys params -- a test'
out=$(python3 "$check" "$work/k6" 2>&1)
[[ $? == 1 && $out == *"loop keys params: no such loop any more (no call keys.c -> params.c, params.c -> keys.c): drop the line"* ]]
point $? "a loop line of files that do not call each other fails on the real objects"
in_copy k8 '$a loop keys params'
[[ $rc != 0 && $out == *"a loop or size line needs"*"loop keys params"* ]]
point $? "a loop line without its reason is refused"

# a file over its cap: the default; a comment does not raise it, a size
# line with its reason does; a cap of a file within the default is stale;
# ordlock_dlm.c without its cap
in_copy k2 '$r /dev/stdin' keys.c < <(for i in $(seq 1 1001); do echo "/* line $i */"; done)
[[ $rc == 1 && $out == *"size: keys.c has "*" lines, over its cap of 1000 (size * 1000)"* ]]
point $? "keys.c grown over 1000 lines fails the check"
sed -i '1a /* Over 1000 lines: to be split */' "$work/k2/keys.c"
out=$(python3 "$check" --nm "$work/nm" "$work/k2" 2>&1)
[[ $? == 1 && $out == *"size: keys.c has "* ]]
point $? "... and a comment that promises a split does not raise the cap"
echo "size keys 1200 -- a test" >>"$work/k2/layers.txt"
out=$(python3 "$check" --nm "$work/nm" "$work/k2" 2>&1)
point $? "... a size line with its reason does"
in_copy k7 '$a size keys 1200 -- a test'
[[ $rc == 1 && $out == *"size keys 1200: keys.c has "*" lines, within the default 1000: drop the line"* ]]
point $? "a size line of a file within the default cap fails the check"
in_copy k9 '/^size ordlock_dlm /d'
[[ $rc == 1 && $out == *"size: ordlock_dlm.c has "*" lines, over its cap of 1000"* ]]
point $? "ordlock_dlm.c fails without its size line"

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
