#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_uapi_doc -- include/uapi/linux/ordlock.h is real kernel-doc: every
# "DOC:" title is in a /** comment of its own; every struct and enum has a
# kernel-doc comment; scripts/kernel-doc (each one the kernel headers and
# kbuild packages installed, -Wall where it has it) reports nothing with
# -none and renders it with -rst, every DOC section and every struct and
# enum included; each DOC section, rendered, is reStructuredText docutils
# reads without a warning (when some python3 has docutils; the roles of
# Sphinx's C domain, which kernel-doc's cross-references use, are taken as
# literals).  TAP; skips
# without any kernel-doc script.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
UNIT_DIAG=head	# kernel-doc's first complaints
cd "$repo" || exit 1
hdr=include/uapi/linux/ordlock.h

unit_work

# one kernel-doc per distinct script (the packages ship copies)
declare -A seen=()
scripts=()
for k in /usr/lib/linux-kbuild-*/scripts/kernel-doc /usr/src/linux-headers-*/scripts/kernel-doc; do
	[[ -f $k ]] || continue
	sum=$(sha256sum <"$k" | cut -c1-16)
	[[ -n ${seen[$sum]:-} ]] && continue
	seen[$sum]=1
	scripts+=("$k")
done
[[ ${#scripts[@]} != 0 ]] || skip "no scripts/kernel-doc (linux-headers-* or linux-kbuild-*)"

# DOC: titles, in the header and in /** comments
awk '
	/^\/\*\*/ { kd = 1; com = 1 }
	/^\/\*([^*]|$)/ { kd = 0; com = 1 }
	com && /^ \* DOC: / { sub(/^ \* DOC: /, ""); print (kd ? "ok " : "bad ") $0 }
	/\*\// { com = 0 }' "$hdr" >"$work/docs"
mapfile -t titles < <(sed -n 's/^ok //p' "$work/docs")
[[ ${#titles[@]} -ge 1 ]] && ! grep -q '^bad ' "$work/docs"
point $? "every DOC: section is in a /** comment (${#titles[@]}: ${titles[*]})" "$work/docs"

# every struct and enum: a kernel-doc comment "struct NAME - ..."
missing=()
while read -r kind name; do
	grep -qE "^ \* $kind $name - " "$hdr" || missing+=("$kind $name")
done < <(sed -nE 's/^(struct|enum) ([a-z_]+) \{$/\1 \2/p' "$hdr")
[[ ${#missing[@]} == 0 ]]
point $? "every struct and enum has a kernel-doc comment${missing[*]:+ (missing: ${missing[*]})}"

py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import docutils' 2>/dev/null; then
		py=$p
		break
	fi
done

for k in "${scripts[@]}"; do
	flags=(-none)
	grep -q '"Wall"' "$k" && flags+=(-Wall)
	perl "$k" "${flags[@]}" "$hdr" >"$work/none" 2>&1
	rc=$?
	[[ $rc == 0 && ! -s $work/none ]]
	point $? "$k ${flags[*]}: no warnings" "$work/none"

	perl "$k" -rst "$hdr" >"$work/rst" 2>"$work/rst.err"
	rc=$?
	missing=()
	for t in "${titles[@]}"; do
		grep -qxF "**$t**" "$work/rst" || missing+=("DOC $t")
	done
	while read -r kind name; do
		grep -qE "^\.\. c:(type|$kind):: ($kind )?$name\$" "$work/rst" || missing+=("$kind $name")
	done < <(sed -nE 's/^(struct|enum) ([a-z_]+) \{$/\1 \2/p' "$hdr")
	[[ $rc == 0 && ${#missing[@]} == 0 ]] && ! grep -v 'Sphinx version' "$work/rst.err" | grep -q .
	point $? "$k -rst renders every DOC section, struct and enum${missing[*]:+ (missing: ${missing[*]})}" "$work/rst.err"

	if [[ -z $py ]]; then
		point 0 "DOC sections as reStructuredText # SKIP no python3 with docutils"
		continue
	fi
	for t in "${titles[@]}"; do
		perl "$k" -rst -function "$t" "$hdr" 2>/dev/null >"$work/doc.rst"
		"$py" - "$work/doc.rst" >"$work/doc.err" 2>&1 <<-'PY'
			import io, sys
			import docutils.core
			from docutils import nodes
			from docutils.parsers.rst import roles
			# the roles Sphinx's C domain gives kernel-doc's cross-references
			for r in ("c:type", "c:func", "c:macro", "c:member", "ref"):
			    roles.register_local_role(r, roles.GenericRole(r, nodes.literal))
			err = io.StringIO()
			docutils.core.publish_string(
			    open(sys.argv[1]).read(), writer_name="null",
			    settings_overrides={"report_level": 2, "halt_level": 5,
			                        "warning_stream": err})
			sys.stdout.write(err.getvalue())
		PY
		[[ -s $work/doc.rst && ! -s $work/doc.err ]]
		point $? "$k: DOC: $t is clean reStructuredText" "$work/doc.err"
	done
done

unit_done
