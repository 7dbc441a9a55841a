#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building ordlock and running its test bench needs on Debian 12:
# the toolchain, the images and headers of the three kernels ordlock is
# tested on (the VM boots each, the module is built against each): 6.1
# (linux-image-amd64, Debian 12's default), 6.12 (linux-image-6.12-amd64)
# and 6.12 PREEMPT_RT (linux-image-6.12-rt-amd64), from Debian 12's own
# archive; qemu, busybox-static (the VM's
# initramfs), libnl and libsmartcols (tools), python3 with venv,
# setuptools and wheel (the binding's pip install, t_pyvenv), node with its
# headers and npm (the Node.js binding, t_node), sparse (make C=1), jq (the ordlockctl tests
# read its JSON back), graphviz (the demo's picture), dkms (the DKMS build
# test), spin (the model check of the fast-path word protocol,
# tests/unit/t_model_spin.sh).
#
# Idempotent: it only calls apt-get when something is missing, and then only
# installs the missing packages. Runs non-interactively (CI, no stdin).
#
# --bench also installs what "make bench" needs on top: gnuplot (the plot)
# and python3 (the report).  --debug-kernel installs what building the
# debug kernel of "make check-debug" needs (tests/debug-kernel/build.sh).
# --cluster installs what "make check-cluster" needs (tests/cluster/):
# corosync, dlm_controld and dlm_tool (dlm-controld), libdlm's header,
# libcpg (ordlock-xdetectd, tools/xdetectd/).
# --demo installs only what "make demo" needs, so that a fresh machine's
# first run takes minutes: the toolchain, qemu, Debian 12's default kernel
# (6.1) and its headers, busybox-static, libnl, libsmartcols and graphviz;
# no other kernel, no linux-source, no dkms, no clang.
set -euo pipefail

PACKAGES=(
	build-essential
	qemu-system-x86
	linux-image-amd64
	linux-headers-amd64
	linux-image-6.12-amd64
	linux-headers-6.12-amd64
	linux-image-6.12-rt-amd64
	linux-headers-6.12-rt-amd64
	busybox-static
	libnl-genl-3-dev
	libnl-3-dev
	libsmartcols-dev
	pkg-config
	python3
	python3-venv
	python3-setuptools
	python3-wheel
	cpio
	sparse
	linux-source-6.1
	kmod
	jq
	graphviz
	dkms
	clang
	libclang-rt-14-dev
	spin
)
BENCH_PACKAGES=(
	gnuplot-nox
	python3
)
DEBUG_KERNEL_PACKAGES=(
	bc
	bison
	flex
	libelf-dev
	libssl-dev
)
DEMO_PACKAGES=(
	build-essential
	qemu-system-x86
	linux-image-amd64
	linux-headers-amd64
	busybox-static
	libnl-genl-3-dev
	libnl-3-dev
	libsmartcols-dev
	pkg-config
	python3
	cpio
	kmod
	graphviz
)
CLUSTER_PACKAGES=(
	corosync
	dlm-controld
	libdlm-dev
	libcpg-dev
)
demo=0
for arg in "$@"; do
	case $arg in
	--bench) PACKAGES+=("${BENCH_PACKAGES[@]}") ;;
	--debug-kernel) PACKAGES+=("${DEBUG_KERNEL_PACKAGES[@]}") ;;
	--cluster) PACKAGES+=("${CLUSTER_PACKAGES[@]}") ;;
	--demo) PACKAGES=("${DEMO_PACKAGES[@]}") demo=1 ;;
	*)
		echo "install-deps: unknown option $arg" >&2
		exit 2
		;;
	esac
done

# is_installed PKG: dpkg knows PKG as fully installed.
is_installed() {
	[[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

apt_install() {
	if [[ $(id -u) -ne 0 ]]; then
		echo "install-deps: missing packages: $*; run this script as root" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	echo "install-deps: installing $*"
	if [[ -z "${APT_UPDATED:-}" ]]; then
		apt-get update -qq
		APT_UPDATED=1
	fi
	# -qq keeps the log short; errors still go to stderr.  No recommends:
	# qemu would pull in a whole GUI stack.
	apt-get install -y -qq --no-install-recommends \
		-o Dpkg::Options::=--force-confdef \
		-o Dpkg::Options::=--force-confold "$@" </dev/null >/dev/null
}

missing=()
for p in "${PACKAGES[@]}"; do
	is_installed "$p" || missing+=("$p")
done

# Each flavour's two kernel metapackages move together: installing one while
# the other is installed at an older version would leave headers without an
# image.
if [[ ${#missing[@]} -gt 0 ]]; then
	for pair in "linux-image-amd64 linux-headers-amd64" \
		"linux-image-6.12-amd64 linux-headers-6.12-amd64" \
		"linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64"; do
		read -r a b <<<"$pair"
		[[ " ${missing[*]} " == *" $a "* || " ${missing[*]} " == *" $b "* ]] || continue
		for p in $a $b; do
			[[ " ${missing[*]} " == *" $p "* ]] || missing+=("$p")
		done
	done
	apt_install "${missing[@]}"
fi

# The Node.js binding (tools/node) and its test t_node: node, its headers
# (/usr/include/node/node_api.h) and npm. A node of another origin is kept
# (NodeSource's nodejs package ships all three); otherwise Debian's nodejs,
# libnode-dev and npm, only what is missing.
node_missing=()
command -v node >/dev/null 2>&1 || node_missing+=(nodejs)
[[ -e /usr/include/node/node_api.h ]] || node_missing+=(libnode-dev)
command -v npm >/dev/null 2>&1 || node_missing+=(npm)
# tsc, for t_node_esm's TypeScript .mts import of the packed package
# (Debian's node-typescript; any tsc on PATH is kept)
command -v tsc >/dev/null 2>&1 || node_missing+=(node-typescript)
[[ ${#node_missing[@]} -eq 0 ]] || apt_install "${node_missing[@]}"

# The VM boots the kernel the module is built for: every kernel of the test
# matrix (tests/kver.sh --matrix: the newest headers of each flavour) needs
# its image (and modules) too; the demo's only the default one.
while read -r flavour kver; do
	[[ $demo == 0 || $flavour == 6.1 ]] || continue
	if [[ -z "$kver" ]]; then
		echo "install-deps: no $flavour kernel headers under /lib/modules/" >&2
		exit 1
	fi
	if [[ ! -e "/boot/vmlinuz-$kver" || ! -d "/lib/modules/$kver/kernel" ]]; then
		apt_install "linux-image-$kver"
	fi
done < <(sh "$(dirname "${BASH_SOURCE[0]}")/kver.sh" --matrix)
# dlm_controld's configuration and state directories: the cluster guests
# mount writable copies over them (tests/cluster/node.sh), so they must
# exist in the (read-only shared) root; Debian's package creates neither.
if [[ " $* " == *" --cluster "* ]]; then
	for d in /etc/dlm /var/lib/dlm; do
		[[ -d $d ]] || mkdir -p "$d"
	done
	# The host itself joins no cluster: on a machine run by systemd the
	# packages start their services; stop and disable them (the guests
	# start their own daemons).
	if [[ -d /run/systemd/system ]]; then
		systemctl disable --now corosync.service dlm.service >/dev/null 2>&1 || true
	fi
fi
exit 0
