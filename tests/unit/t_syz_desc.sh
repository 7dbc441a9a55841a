#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_syz_desc -- tests/fuzz/ordlock.syz.txt, the syzkaller description of
# the interface, keeps up with the UAPI header: every ORDLOCK_ name it uses
# is defined there, every ioctl and every command a user sends is
# described, and every field of the ioctl structures it describes is there
# under the header's name, in the header's order.  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
syz=$repo/tests/fuzz/ordlock.syz.txt
uapi=$repo/include/uapi/linux/ordlock.h

# the names the header defines: macros and enumerators
defined=$(grep -oE '^#define ORDLOCK_[A-Z0-9_]+|^[[:space:]]+ORDLOCK_[A-Z0-9_]+' "$uapi" |
	grep -oE 'ORDLOCK_[A-Z0-9_]+' | sort -u)
missing=$(grep -v '^#' "$syz" | grep -oE '\bORDLOCK_[A-Z0-9_]+' | sort -u | comm -23 - <(echo "$defined"))
missing=${missing//$'\n'/ }
[[ -z $missing ]]
point $? "every ORDLOCK_ name of the description is in the header${missing:+ (not: $missing)}"

# every ioctl, and every command but the notifications
for c in $(grep -oE '^#define ORDLOCK_IOC_[A-Z_]+[[:space:]]+_IO' "$uapi" | awk '{print $2}'); do
	grep -q "^ioctl\$$c(" "$syz"
	point $? "$c is described"
done
for c in $(sed -n '/^enum ordlock_cmd {/,/^};/p' "$uapi" | grep -oE '^[[:space:]]+ORDLOCK_CMD_[A-Z_]+' | awk '{print $1}'); do
	case $c in ORDLOCK_CMD_UNSPEC | ORDLOCK_CMD_RESULT | ORDLOCK_CMD_EVENT | ORDLOCK_CMD_REVOKED | ORDLOCK_CMD_XD_EVENT) continue ;; esac
	grep -q "^sendmsg\$$c(" "$syz"
	point $? "$c is described"
done

# the fields of each ioctl structure the description has, in order
fields_h() { # the header's fields of struct ordlock_NAME
	sed -n "/^struct ordlock_$1 {/,/^};/p" "$uapi" | sed -n '2,$p' | grep -v '^};' |
		sed -E 's/\[.*\]//; s/;.*//' | awk '{print $NF}' | tr '\n' ' '
}
fields_s() { # the description's fields of ordlock_NAME
	sed -n "/^ordlock_$1 {/,/^}/p" "$syz" | sed -n '2,$p' | grep -v '^}' | awk '{print $1}' | tr '\n' ' '
}
for s in $(grep -oE '^ordlock_[a-z_]+ \{' "$syz" | awk '{print $1}' | sed 's/^ordlock_//'); do
	h=$(fields_h "$s")
	[[ -n $h ]] || continue # a description-only helper (ordlock_domain_name)
	d=$(fields_s "$s")
	[[ $h == "$d" ]]
	point $? "ordlock_$s has the header's fields$([[ $h == "$d" ]] || echo " (header: $h; description: $d)")"
done

# the test itself can fail: a field renamed in a copy is caught
unit_work
sed 's/^\tlease_ms\tint32\[0:2000\]$/\tlease\tint32/' "$syz" >"$work/syz"
a=$(sed -n '/^ordlock_acquire {/,/^}/p' "$work/syz" | sed -n '2,$p' | grep -v '^}' | awk '{print $1}' | tr '\n' ' ')
[[ $a != "$(fields_h acquire)" ]]
point $? "a field renamed in the description is caught"

unit_done
