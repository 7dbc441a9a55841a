#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# man-example.sh PAGE N OUT: the N-th .EX/.EE block of the EXAMPLE section
# of the man page PAGE into OUT, with the roff escapes a C program needs
# undone (as tests/unit/t_readme.sh reads the first one). Fails when the
# page has no such block.
set -euo pipefail
awk -v want="$2" '
	/^\.SH / { ex = ($0 ~ /^\.SH EXAMPLES?$/); next }
	ex && /^\.EX/ { k++; inb = (k == want); next }
	inb && /^\.EE/ { inb = 0; next }
	inb { print }' "$1" |
	sed -e 's/\\-/-/g' -e 's/\\(aq/'"'"'/g' -e 's/\\(dq/"/g' \
		-e 's/\\&//g' -e 's/\\e/\\/g' >"$3"
[[ -s $3 ]]
