#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# gen-errnos.sh UAPI-HEADER -- prints a C header with the errnos the UAPI
# header documents: the rows of the table of its "DOC: Errors" section
# (the ioctls) and of its "DOC: Netlink errors" section, as two
# 0-terminated arrays, ordlock_doc_ioctl_errnos[] and
# ordlock_doc_netlink_errnos[].  t_fuzz accepts no errno outside them, so
# an errno the kernel returns and the header does not document fails the
# suite.  A row is a comment line whose first word is an errno name
# (E[A-Z0-9]+) followed by two spaces, inside the section's table.
set -eu
hdr=$1
awk '
function flush() { if (sect != "") { print "\t0,\n};"; } }
/^ \* DOC: / {
	flush()
	sect = ""
	name = substr($0, 9)
	if (name == "Errors") sect = "ioctl"
	else if (name == "Netlink errors") sect = "netlink"
	if (sect != "")
		printf "static const int ordlock_doc_%s_errnos[] = {\n", sect
	next
}
/^ \*\// { flush(); sect = ""; next }
sect != "" && /^ \* E[A-Z0-9]+  / { printf "\t%s,\n", $2 }
BEGIN {
	print "/* Generated from the UAPI header by tests/lib/gen-errnos.sh: do not edit */"
	print "#include <errno.h>"
}
' "$hdr"
