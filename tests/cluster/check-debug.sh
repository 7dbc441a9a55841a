#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check-debug.sh [NAME...] -- make check-cluster-debug: the cluster suite
# (tests/cluster/run.sh) on the debug kernel, KASAN, lockdep, kmemleak,
# UBSAN, DEBUG_OBJECTS on every node.  Not part of make check (nor CI):
# three debug guests take the machine for long.  Steps:
#
#   1. what building the kernel and the cluster need
#      (tests/install-deps.sh --debug-kernel, --cluster)
#   2. the kernel: tests/debug-kernel/build.sh --variant cluster, make
#      check-debug's kernel plus tests/debug-kernel/cluster.config (the
#      DLM, configfs, a virtio network card), built once and cached apart
#      from make check-debug's (a key of its own)
#   3. ordlock.ko and ordlock_dlm.ko built against it from a copy of kmod/
#      in tests/build/debug-cluster/mod/ (tests/harness/build-module.sh),
#      the test module ordlock_cltest.ko in tests/build/debug-cluster/cltest/
#      against that copy, the tools and the test programs
#   4. tests/cluster/run.sh with CLUSTER_DEBUG=1: every node judged as
#      make check-cluster judges it, plus each checker's reports and a
#      kmemleak scan after the modules were unloaded
#
# NAMEs (T= of make check-cluster-debug): only those cluster programs;
# without, all of make check-cluster's.  The environment of run.sh works
# here too (its debug defaults: TEST_TIMEOUT 900, CLUSTER_TIMEOUT 5400...).
# Ends with run.sh's "N passed, N failed"; exits non-zero when anything
# failed.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
MAKE=${MAKE:-make}
die() { echo "check-cluster-debug: $*" >&2; exit 2; }

echo "== dependencies"
bash tests/install-deps.sh --debug-kernel || die "tests/install-deps.sh --debug-kernel failed"
bash tests/install-deps.sh --cluster || die "tests/install-deps.sh --cluster failed"

echo "== debug kernel (variant cluster)"
t_kernel=$(date +%s)
env_out=$(bash tests/debug-kernel/build.sh --variant cluster) ||
	die "debug kernel build failed (tests/debug-kernel/build.sh --variant cluster)"
eval "$env_out"
echo "debug kernel $DEBUG_KVER ($(($(date +%s) - t_kernel))s): $DEBUG_VMLINUZ"

echo "== build"
out=tests/build/debug-cluster
MAKE=$MAKE bash tests/harness/build-module.sh "$DEBUG_KDIR" "$out/mod" ORDLOCK_WERROR=1 ||
	die "the module against the debug kernel did not build"
mkdir -p "$out/cltest"
cp -p tests/cluster/kmod/Kbuild tests/cluster/kmod/ordlock_cltest.c "$out/cltest/"
$MAKE --no-print-directory -C "$DEBUG_KDIR" M="$repo/$out/cltest" ORDLOCK_SRC="$repo/$out/mod" \
	KBUILD_EXTRA_SYMBOLS="$repo/$out/mod/Module.symvers" modules ||
	die "ordlock_cltest.ko against the debug kernel did not build"
$MAKE --no-print-directory -j"$(nproc)" tools tests || die "tools and tests did not build"

echo "== the cluster suite on the debug kernel"
KVER=$DEBUG_KVER VMLINUZ=$DEBUG_VMLINUZ CLUSTER_DEBUG=1 \
	ORDLOCK_KO=$repo/$out/mod/kmod/ordlock.ko \
	ORDLOCK_CLTEST_KO=$repo/$out/cltest/ordlock_cltest.ko \
	exec bash tests/cluster/run.sh "$@"
