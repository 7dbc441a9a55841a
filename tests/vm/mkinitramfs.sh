#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh [--builtin] KVER OUTPUT
#
# Builds the test VM's initramfs: a static busybox, tests/vm/init.sh as /init
# and the kernel KVER's modules needed to mount the host's root over
# virtio-9p (the virtio PCI transport, 9pnet_virtio, 9p and what they depend
# on, resolved with modinfo and listed in load order in /modules.order).
# --builtin: KVER has all of that built in (the debug kernel of make
# check-debug, which has no /lib/modules): no modules, an empty list.
#
# The result is cached: OUTPUT is rebuilt only when one of its inputs (this
# script, init.sh, busybox, the modules) changes; OUTPUT.key records them.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin

builtin=0
if [[ ${1:-} == --builtin ]]; then
	builtin=1
	shift
fi
kver=$1
out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
busybox=${BUSYBOX:-/bin/busybox}
# The modules the VM needs; their dependencies are added automatically.
wanted=(virtio_pci 9pnet_virtio 9p)

die() { echo "mkinitramfs: $*" >&2; exit 1; }

[[ -x "$busybox" ]] || die "$busybox missing (apt-get install busybox-static)"
file_is_static() { ! LC_ALL=C ldd "$1" >/dev/null 2>&1; }
file_is_static "$busybox" || die "$busybox is not static (install busybox-static)"
((builtin)) || [[ -d "/lib/modules/$kver" ]] || die "/lib/modules/$kver missing"

# Resolve the load order: every module after its dependencies.
declare -A seen=()
order=()
resolve() {
	local m=$1 deps d file
	[[ -n "${seen[$m]:-}" ]] && return 0
	seen[$m]=1
	file=$(modinfo -k "$kver" -n "$m" 2>/dev/null) || die "module $m not found for $kver"
	[[ "$file" == "(builtin)" || "$file" == builtin* ]] && return 0
	deps=$(modinfo -k "$kver" -F depends "$m")
	for d in ${deps//,/ }; do
		resolve "$d"
	done
	order+=("$file")
}
((builtin)) || for m in "${wanted[@]}"; do
	resolve "$m"
done

# Cache key: everything that goes into the image.
key=$({
	echo "kver=$kver builtin=$builtin"
	sha256sum "${BASH_SOURCE[0]}" "$here/init.sh" "$busybox"
	for f in ${order[@]+"${order[@]}"}; do
		stat -c '%n %s %Y' "$f"
	done
} | sha256sum | cut -d' ' -f1)
if [[ -f "$out" && -f "$out.key" && "$(cat "$out.key")" == "$key" ]]; then
	exit 0
fi

echo "mkinitramfs: building $out for $kver"
mkdir -p "$(dirname "$out")"
stage=$(mktemp -d "${out}.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,newroot,results,lib/modules}
cp "$busybox" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
install -m 0755 "$here/init.sh" "$stage/init"
: >"$stage/modules.order"
for f in ${order[@]+"${order[@]}"}; do
	name=$(basename "$f")
	case $name in
	*.ko) cp "$f" "$stage/lib/modules/$name" ;;
	*.ko.xz) xz -dc "$f" >"$stage/lib/modules/${name%.xz}" ;;
	*.ko.zst) zstd -qdc "$f" >"$stage/lib/modules/${name%.zst}" ;;
	*.ko.gz) gzip -dc "$f" >"$stage/lib/modules/${name%.gz}" ;;
	*) die "unknown module file type: $f" ;;
	esac
	name=${name%.xz}
	name=${name%.zst}
	echo "${name%.gz}" >>"$stage/modules.order"
done

# newc cpio, owned by root, gzip'ed; written atomically so that concurrent
# runs never see half an image.
tmp=$(mktemp "${out}.XXXXXX")
(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc -R 0:0 --quiet) | gzip -1 >"$tmp"
mv -f "$tmp" "$out"
echo "$key" >"$out.key"
