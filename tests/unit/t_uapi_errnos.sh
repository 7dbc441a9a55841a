#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_uapi_errnos -- tests/lib/gen-errnos.sh reads the errnos t_fuzz allows
# from the UAPI header's two tables, and only from them: every errno the
# module's ioctls and netlink commands are known to return is in its table,
# and a row removed from the header is gone from the list.  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
gen=$repo/tests/lib/gen-errnos.sh
uapi=$repo/include/uapi/linux/ordlock.h
list() { # list FILE SECTION: the errnos of ordlock_doc_SECTION_errnos[]
	sh "$gen" "$1" | sed -n "/ordlock_doc_$2_errnos/,/^};/p" | grep -oE '\bE[A-Z0-9]+\b' | tr '\n' ' '
}
ioctl=$(list "$uapi" ioctl)
netlink=$(list "$uapi" netlink)
echo "# ioctl: $ioctl"
echo "# netlink: $netlink"
for e in EINVAL E2BIG EFAULT ENOTTY EDEADLK ETIMEDOUT EAGAIN EINTR ENOSPC EDQUOT ENOENT EBUSY EPERM ENOMEM; do
	[[ " $ioctl " == *" $e "* ]]
	point $? "the ioctl table documents $e"
done
for e in EINVAL ERANGE E2BIG EMSGSIZE EOPNOTSUPP ENOENT EBUSY EPERM EACCES ENOSPC EDQUOT EEXIST ENOMEM ENOBUFS ENODEV; do
	[[ " $netlink " == *" $e "* ]]
	point $? "the netlink table documents $e"
done
unit_work
sed '/^ \* EEXIST  /d' "$uapi" >"$work/h"
[[ " $(list "$work/h" netlink) " != *" EEXIST "* ]]
point $? "a row removed from the header is gone from the list"
sh "$gen" "$uapi" >"$work/e.h" && cc -fsyntax-only -Wall -Werror -x c - <<EOC
#include "$work/e.h"
int main(void) { return ordlock_doc_ioctl_errnos[0] + ordlock_doc_netlink_errnos[0] == 0; }
EOC
point $? "the generated header compiles"
unit_done
