#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_man_names -- whatis(1) and apropos(1) find every function of
# libordlock: the NAME section of libordlock(3), as lexgrog(1) reads it
# for mandb (sed without lexgrog), lists exactly the ordlock_* symbols
# the built shared library exports (nm -D --defined-only), and "make
# install" makes a page (a .so link) for each of them (issue 30: 13
# functions, ordlock_retry, ordlock_renew, ordlock_token_check..., were
# missing from NAME).  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
unset MAKEFLAGS MFLAGS MAKELEVEL
so=$repo/tools/lib/libordlock.so.1
man=$repo/tools/libordlock.3
[[ -f $so ]] && command -v nm >/dev/null || skip "no $so or no nm (make tools; binutils)"

syms=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TtWi]$/ && $3 ~ /^ordlock_/ { print $3 }' | sort -u)
[[ $(wc -l <<<"$syms") -ge 30 ]]
point $? "the library exports its functions ($(wc -l <<<"$syms") ordlock_*)"

# the names of NAME: what lexgrog gives mandb ("NAME - description" each)
if command -v lexgrog >/dev/null; then
	names=$(lexgrog "$man" | sed -n 's/^[^:]*: "\([^ ]*\) - .*"$/\1/p' | sort -u)
	how=lexgrog
else
	names=$(sed -n '/^\.SH NAME/,/^\.SH/p' "$man" | sed '1d;$d' | tr '\n' ' ' |
		sed 's/\\-.*//' | tr ', ' '\n\n' | grep . | sort -u)
	how=sed
fi
missing=$(comm -23 <(echo "$syms") <(echo "$names") | tr '\n' ' ')
[[ -z $missing ]]
point $? "NAME of libordlock(3) ($how) names every exported function" "missing: $missing"
extra=$(comm -13 <(echo "$syms") <(grep -v '^libordlock$' <<<"$names") | tr '\n' ' ')
[[ -z $extra ]]
point $? "and no function the library does not export" "not exported: $extra"

# make install: a page for each (man ordlock_renew)
unit_work
make -s --no-print-directory -C "$repo/tools" install-extra PREFIX="$work/p" \
	UDEVRULESDIR="$work/udev" PYTHONDIR="$work/py" >"$work/log" 2>&1
point $? "make install-extra into a scratch prefix" "$(tail -n 5 "$work/log")"
nolink=""
for s in $syms; do
	[[ -f $work/p/share/man/man3/$s.3 ]] || nolink+=" $s"
done
[[ -z $nolink ]]
point $? "every exported function has its man3 page (.so libordlock.3)" "no page:$nolink"
unit_done
