#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh -- kernel style checks of the module, as TAP: sparse (make C=2:
# every file, no warning allowed) and checkpatch.pl --strict from Debian's
# linux-source tarball (extracted once into tests/build/).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
MAKE=${MAKE:-make}
n=0
failed=0

point() { # point OK DESCRIPTION
	n=$((n + 1))
	if [[ $1 == 1 ]]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

log=tests/build/lint-sparse.log
mkdir -p tests/build
if $MAKE --no-print-directory modules C=2 >"$log" 2>&1; then
	if grep -E 'warning:|error:' "$log" | grep -v 'Skipping BTF' >"$log.warn"; then
		sed 's/^/# /' "$log.warn"
		point 0 "sparse: no warnings in kmod/"
	else
		point 1 "sparse: no warnings in kmod/"
	fi
else
	sed 's/^/# /' "$log" | tail -20
	point 0 "sparse: the module builds with C=2"
fi

tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -1 || true)
cp=tests/build/checkpatch/scripts/checkpatch.pl
if [[ ! -x $cp && -n $tarball ]]; then
	mkdir -p tests/build/checkpatch
	top=$(basename "$tarball" .tar.xz)
	tar -xJf "$tarball" -C tests/build/checkpatch --strip-components=1 \
		"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch" 2>/dev/null || true
fi
if [[ -x $cp ]]; then
	files=(kmod/*.c kmod/*.h include/uapi/linux/ordlock.h)
	bad=0
	for f in "${files[@]}"; do
		[[ $f == *.mod.c ]] && continue
		out=$("$cp" --strict --no-tree -q -f "$f" 2>&1 || true)
		if [[ -n $out ]]; then
			echo "$out" | sed 's/^/# /'
			bad=1
		fi
	done
	point $((1 - bad)) "checkpatch --strict: kmod/ and the UAPI header are clean"
else
	point 0 "checkpatch --strict: linux-source is not installed (make deps)"
fi
echo "1..$n"
((failed == 0))
