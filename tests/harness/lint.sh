#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh -- kernel style checks of the module, as TAP: for each kernel of
# LINT_KVERS, a -Werror build with sparse (C=2: every file, no warning
# allowed), then checkpatch.pl --strict from Debian's linux-source tarball
# (extracted once into tests/build/).
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"	# $repo, point STATUS (0: ok)
cd "$repo"
MAKE=${MAKE:-make}

# For every kernel of $LINT_KVERS (default: tests/kver.sh's default): the
# module built with -Werror from a copy in tests/build/kernels/KVER/ (what
# make check then loads on that kernel), with sparse on every file (C=2)
mkdir -p tests/build
for kver in ${LINT_KVERS:-$(sh tests/kver.sh)}; do
	log=tests/build/kernels/$kver.log
	mkdir -p tests/build/kernels
	if ! MAKE=$MAKE bash tests/harness/build-module.sh "/lib/modules/$kver/build" \
		"tests/build/kernels/$kver" C=2 ORDLOCK_WERROR=1 >"$log" 2>&1; then
		sed 's/^/# /' "$log" | grep -E 'error|warning' | head -20
		point 1 "$kver: the module builds with -Werror"
		point 1 "$kver: sparse: no warnings in kmod/"
		continue
	fi
	point 0 "$kver: the module builds with -Werror"
	# the cluster companion (kmod/ordlock_dlm.c) is built wherever the
	# kernel has the DLM
	if grep -q '^CONFIG_DLM=[my]' "/lib/modules/$kver/build/include/config/auto.conf" 2>/dev/null; then
		[[ -f tests/build/kernels/$kver/kmod/ordlock_dlm.ko ]]
		point $? "$kver: the cluster companion ordlock_dlm.ko builds"
	fi
	if grep -E 'warning:|error:' "$log" | grep -v 'Skipping BTF' >"$log.warn"; then
		sed 's/^/# /' "$log.warn"
		point 1 "$kver: sparse: no warnings in kmod/"
	else
		point 0 "$kver: sparse: no warnings in kmod/"
	fi
done

# the kernel API differences live in kmod/compat.h alone
if grep -nE 'LINUX_VERSION_CODE|KERNEL_VERSION\(|RHEL_RELEASE' kmod/*.[ch] | grep -v '^kmod/compat.h:' |
	grep -v '\.mod\.c:' | sed 's/^/# /' | grep .; then
	point 1 "kernel version tests only in kmod/compat.h"
else
	point 0 "kernel version tests only in kmod/compat.h"
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
	files=(kmod/*.c kmod/*.h include/uapi/linux/ordlock.h tests/cluster/kmod/*.c)
	bad=0
	for f in "${files[@]}"; do
		[[ $f == *.mod.c ]] && continue
		# kmod/compat.h is the one file that keys on the kernel
		# release, as an out-of-tree module must: checkpatch's
		# LINUX_VERSION_CODE warning (and its reading of
		# "LINUX_VERSION_CODE >= KERNEL_VERSION()" as a constant on
		# the left) are for in-tree code; everything else holds there
		ignore=()
		[[ $f == kmod/compat.h ]] && ignore=(--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON)
		out=$("$cp" --strict --no-tree -q ${ignore[@]+"${ignore[@]}"} -f "$f" 2>&1 || true)
		if [[ -n $out ]]; then
			echo "$out" | sed 's/^/# /'
			bad=1
		fi
	done
	point $bad "checkpatch --strict: kmod/, the UAPI header and the cluster test module are clean"
else
	point 1 "checkpatch --strict: linux-source is not installed (make deps)"
fi
unit_done
