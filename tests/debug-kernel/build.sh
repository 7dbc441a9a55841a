#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh [--variant cluster] [--config-only] -- builds (once) the debug
# kernel of "make check-debug" from Debian's linux-source-6.1 and prints
# where it is:
#
#   DEBUG_KDIR=...     the built tree (make -C DEBUG_KDIR M=... modules)
#   DEBUG_VMLINUZ=...  its bzImage
#   DEBUG_KVER=...     its release (6.1.N-ordlock-debug)
#
# The tree lives outside the repository, in $ORDLOCK_DEBUG_CACHE (default
# /var/cache/ordlock/debug-kernel) under a key that hashes everything that
# goes into it: the linux-source package version, debug.config, the recipe
# version below and the compiler.  Change any of them and the next run
# builds a new tree; the two most recently used trees are kept, older ones
# removed.
#
# Configuration: "make tinyconfig", then debug.config merged over it, then
# "make olddefconfig"; every value debug.config asks for is then checked in
# the final .config and the build stops if one did not survive.
# --config-only stops after that check (and prints nothing on stdout).
#
# --variant cluster: the kernel of "make check-cluster-debug", the same
# debug kernel plus cluster.config (the DLM, configfs, a network card;
# merged after debug.config, its values win), in a tree of its own: its
# key hashes cluster.config and the variant's name too, so the default
# kernel's key (and CI's cached tree) stays as it is.  Each variant keeps
# its own two most recently used trees.
#
# Progress goes to stderr, the build's output to BUILD_DIR/build.log; the
# build runs under nice with -j$(nproc).  Concurrent runs wait for each
# other (flock on the key).
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin

# Bump when a change to this script changes the kernel it builds.
recipe=1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fragment=$here/debug.config
cache=${ORDLOCK_DEBUG_CACHE:-/var/cache/ordlock/debug-kernel}
tarball=${ORDLOCK_DEBUG_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
config_only=0
variant=default

say() { echo "debug-kernel: $*" >&2; }
die() { say "$*"; exit 1; }

while (($#)); do
	case $1 in
	--config-only) config_only=1 ;;
	--variant)
		variant=${2:-}
		shift
		;;
	--variant=*) variant=${1#--variant=} ;;
	*) die "usage: build.sh [--variant cluster] [--config-only]" ;;
	esac
	shift
done
case $variant in
default) extra=() ;;
cluster) extra=("$here/cluster.config") ;;
*) die "unknown variant '$variant' (known: cluster)" ;;
esac

[[ -r $tarball ]] || die "$tarball missing (apt-get install linux-source-6.1)"
pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || stat -c '%s %Y' "$tarball")
for tool in gcc make bc flex bison; do
	command -v "$tool" >/dev/null || die "$tool missing (tests/install-deps.sh --debug-kernel)"
done
[[ -e /usr/include/libelf.h ]] || die "libelf-dev missing (tests/install-deps.sh --debug-kernel)"

key=$({
	echo "source $pkgver"
	sha256sum <"$fragment"
	echo "recipe $recipe"
	gcc --version | sed -n 1p
	# (nothing more for the default variant: its key is what it was)
	if [[ $variant != default ]]; then
		echo "variant $variant"
		sha256sum <"${extra[0]}"
	fi
} | sha256sum | cut -c1-16)

mkdir -p "$cache"
dir=$cache/$key
src=$dir/linux
exec {lock}>"$cache/$key.lock"
if ! flock -n "$lock"; then
	say "waiting for another build of $dir"
	flock "$lock"
fi
mkdir -p "$dir"
touch "$dir/used"
# a variant's tree says so; the default's gets no file (its tree, which CI
# caches, stays as build.sh always made it)
if [[ $variant != default ]]; then
	echo "$variant" >"$dir/variant"
fi

# --- prune: keep the two trees of this variant used last (and never one in
# use; a tree without a "variant" file is the default's) ----------------------
# shellcheck disable=SC2012 # our own names: hex digits
ls -1dt "$cache"/*/used 2>/dev/null | while read -r old; do
	old=${old%/used}
	if [[ $(cat "$old/variant" 2>/dev/null || echo default) == "$variant" ]]; then
		echo "$old"
	fi
done | tail -n +3 | while read -r old; do
	[[ $old != "$dir" ]] || continue
	(flock -n 9 && rm -rf "$old") 9>>"$old.lock" 2>/dev/null || true
done

emit() {
	[[ $config_only == 1 ]] && return 0
	echo "DEBUG_KDIR=$src"
	echo "DEBUG_VMLINUZ=$src/arch/x86/boot/bzImage"
	echo "DEBUG_KVER=$(cat "$dir/kernelrelease")"
}

if [[ -f $dir/ready && $config_only == 0 ]]; then
	emit
	exit 0
fi

# --- source -------------------------------------------------------------------
if [[ ! -f $dir/extracted ]]; then
	say "extracting $(basename "$tarball") ($pkgver) into $src"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	touch "$dir/extracted"
fi

log=$dir/build.log
kmake() { make -C "$src" -s "$@" >>"$log" 2>&1; }

# --- configuration ------------------------------------------------------------
# the fragments' lines, in order (a variant's after debug.config: a symbol
# set twice keeps its last value)
fragments() {
	grep -h -E '^(CONFIG_|# CONFIG_)' "$fragment" ${extra[@]+"${extra[@]}"} |
		awk '{ s = $1 == "#" ? $2 : $1; sub(/=.*/, "", s); v[s] = $0; if (!(s in o)) { o[s] = n++; k[o[s]] = s } }
			END { for (i = 0; i < n; i++) print v[k[i]] }'
}
# the symbols the fragments set, with their values ("n" for "is not set")
wanted() {
	fragments | sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=\(.*\)$/\1 \2/p' \
		-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1 n/p'
}
configure() {
	local cfg=$src/.config sym val have bad=0
	: >"$log"
	kmake tinyconfig || die "make tinyconfig failed (see $log)"
	# merge: drop every line of a symbol the fragments set, append theirs
	wanted | cut -d' ' -f1 >"$dir/symbols"
	grep -v -F -w -f "$dir/symbols" "$cfg" >"$cfg.merged" || true
	fragments >>"$cfg.merged"
	mv "$cfg.merged" "$cfg"
	kmake olddefconfig || die "make olddefconfig failed (see $log)"
	while read -r sym val; do
		have=$(sed -n -e "s/^$sym=\\(.*\\)\$/\\1/p" -e "s/^# $sym is not set\$/n/p" "$cfg")
		[[ -n $have ]] || have=n # not in .config: its dependencies are off
		if [[ $have != "$val" ]]; then
			say "$sym: wanted $val, .config has $have (a dependency is missing?)"
			bad=1
		fi
	done < <(wanted)
	((bad == 0)) || die "the configuration lost options; fix tests/debug-kernel/debug.config${extra[0]:+ or ${extra[0]#"$here"/}}"
	say "configuration checked: $(wanted | wc -l) values of debug.config${extra[0]:+ and ${extra[0]#"$here"/}} hold"
}
configure
if [[ $config_only == 1 ]]; then
	exit 0
fi

# --- build --------------------------------------------------------------------
jobs=$(nproc)
say "building bzImage with -j$jobs (log: $log); this takes a while"
t0=$(date +%s)
if ! nice make -C "$src" -j"$jobs" bzImage modules >>"$log" 2>&1; then
	tail -n 30 "$log" >&2
	die "kernel build failed (see $log)"
fi
t1=$(date +%s)
make -C "$src" -s kernelrelease >"$dir/kernelrelease"
echo "$((t1 - t0))" >"$dir/build-seconds"
say "built $(cat "$dir/kernelrelease") in $((t1 - t0))s"
touch "$dir/ready"
emit
