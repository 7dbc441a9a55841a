#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the ordlock test VM (busybox sh, built into the initramfs by
# mkinitramfs.sh).  It loads the virtio-9p modules, mounts the host's root
# read-only (tag "hostroot") and the run's results directory read-write (tag
# "results"), chroots into the host root and runs tests/vm/guest.sh from the
# repository there.  Then it powers the VM off.  Whatever goes wrong, the VM
# stops: a failure here is reported on the console and the host side sees no
# results.
/bin/busybox --install -s /bin
export PATH=/bin

mount -t devtmpfs dev /dev
# The initramfs has no /dev/console node: take the console now.
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sys /sys

stop() {
	sync
	poweroff -f
	# not reached; if it is, the kernel panics (panic=-1 reboots and
	# qemu -no-reboot exits)
	exit 1
}

fatal() {
	echo "ordlock-vm: FATAL: $*"
	stop
}

# shellcheck disable=SC2013 # one module file name per line, no spaces
for m in $(cat /modules.order); do
	insmod "/lib/modules/$m" || fatal "insmod $m failed"
done

# 9p over virtio: msize trades memory for fewer round trips (TCG is slow).
opts=trans=virtio,version=9p2000.L,msize=262144
mount9p() { # tag dir opts: retry while the virtio device probes
	i=0
	until mount -t 9p -o "$3" "$1" "$2" 2>/dev/null; do
		i=$((i + 1))
		[ $i -ge 50 ] && fatal "cannot mount 9p tag $1"
		sleep 0.1
	done
}
# The results share is written by the guest (and, under make check-cluster,
# by several guests at once: barriers, shared files): no caching.
mount9p results /results "$opts,cache=none"
[ -f /results/run.env ] || fatal "no run.env in the results share"
# REPO, RESULTS, MODE, TESTS, TEST_TIMEOUT (written by run.sh)
# shellcheck source=/dev/null
. /results/run.env

# The host root is read-only and does not change during the run, so the
# guest may cache it (much faster program start-up over 9p).
mount9p hostroot /newroot "$opts,ro,cache=loose"

mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs -o mode=1777 shm /newroot/dev/shm
mount -t debugfs debugfs /newroot/sys/kernel/debug

# tmpfs on DIR, keeping the repository visible if it lives below DIR
# (a CI clone in /tmp): bind it aside, mount, bind it back.
mount_tmpfs() { # dir mode
	case $REPO/ in
	"$1"/*)
		mkdir -p /keep
		mount --bind "/newroot$REPO" /keep
		mount -t tmpfs -o "mode=$2" tmpfs "/newroot$1"
		mkdir -p "/newroot$REPO"
		mount --move /keep "/newroot$REPO"
		;;
	*) mount -t tmpfs -o "mode=$2" tmpfs "/newroot$1" ;;
	esac
}
mount_tmpfs /tmp 1777
mount_tmpfs /run 0755

[ -d "/newroot$RESULTS" ] || fatal "$RESULTS missing in the host root"
mount --move /results "/newroot$RESULTS"

# GUEST (run.env, optional): another guest script of the repository
# (tests/cluster/node.sh for make check-cluster)
chroot /newroot /bin/bash "$REPO/${GUEST:-tests/vm/guest.sh}" "$RESULTS" ||
	echo "ordlock-vm: ${GUEST:-guest.sh} failed: $?"
stop
