#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_readme -- the programs printed in the documentation build as printed:
# every ```c block of README.md and the EXAMPLE of libordlock(3)
# (tools/libordlock.3, roff escapes undone) compiles against tools/lib with
# -Wall -Wextra -Werror -std=c11 -pedantic and links with libordlock.a; the
# README's own "in the tree" cc line builds it too; every ```python block
# passes "python3 -m py_compile".  Without /dev/ordlock (the host), the
# programs take their error path: the C one exits 2 saying why
# ordlock_open() failed, the Python one exits 1 with "transfer: ...".
# The README's links to docs/ and the man pages it names exist; the
# modprobe.d options it and ordlock(4) quote are the shipped file's.  The
# in-VM test t_readme runs the same programs against the module.  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
cd "$repo" || exit 1
unset MAKEFLAGS MFLAGS MAKELEVEL

unit_work

# blocks FILE LANG PREFIX: writes each ```LANG block of the Markdown FILE to
# PREFIX.1, PREFIX.2, ... and prints how many there were
blocks() {
	awk -v lang="$2" -v out="$3" '
		!inb && $0 == "```" lang { inb = 1; k++; f = out "." k; printf "" > f; next }
		inb && /^```/ { inb = 0; close(f); next }
		inb { print > f }
		END { print k + 0 }' "$1"
}

# man_example PAGE OUT: the first .EX/.EE block of the EXAMPLE section of
# a man page (the program; the build commands follow), with the roff
# escapes a C program needs undone
man_example() {
	awk '
		/^\.SH / { ex = ($0 ~ /^\.SH EXAMPLES?$/); next }
		ex && !done && /^\.EX/ { inb = 1; next }
		ex && inb && /^\.EE/ { inb = 0; done = 1; next }
		ex && inb { print }' "$1" |
		sed -e 's/\\-/-/g' -e 's/\\(aq/'"'"'/g' -e 's/\\(dq/"/g' \
			-e 's/\\&//g' -e 's/\\e/\\/g' >"$2"
	[[ -s $2 ]]
}

# the library the programs link with: tools/ decides whether to rebuild it
make -s --no-print-directory -C tools lib >"$work/lib.log" 2>&1
point $? "libordlock builds (tools/lib)" "$work/lib.log"

CFLAGS=(-Wall -Wextra -Werror -std=c11 -pedantic -Iinclude/uapi -Itools/lib)
LIBS=(tools/lib/libordlock.a)

# cbuild SRC BIN WHAT: compile and link one program
cbuild() {
	cc "${CFLAGS[@]}" -o "$2" "$1" "${LIBS[@]}" >"$work/cc.log" 2>&1
	point $? "$3 compiles with -Wall -Wextra -Werror -std=c11 -pedantic and links" "$work/cc.log"
}

# crun BIN WHAT: without /dev/ordlock, the error path: exit 2 and why
crun() {
	local rc=0
	if [[ -e /dev/ordlock ]]; then
		point 0 "$2: /dev/ordlock exists here, error path not checked # SKIP"
		return
	fi
	"$1" >"$work/run.out" 2>"$work/run.err" </dev/null || rc=$?
	[[ $rc == 2 ]] && grep -q '^ordlock_open: No such file or directory$' "$work/run.err"
	point $? "$2: without /dev/ordlock it exits 2 with \"ordlock_open: ...\" (rc $rc)" "$work/run.err"
}

nc=$(blocks README.md c "$work/readme-c")
[[ $nc -ge 1 ]]
point $? "README.md has a C example ($nc \`\`\`c blocks)"
for ((i = 1; i <= nc; i++)); do
	cp "$work/readme-c.$i" "$work/readme$i.c"
	cbuild "$work/readme$i.c" "$work/readme$i" "README.md C block $i"
	crun "$work/readme$i" "README.md C block $i"
done

# The README's "in the tree" command, run as printed, in a directory that
# looks like the top of the tree (include/ and tools/ linked in) and holds
# the first C block as transfer.c
line=$(grep -E '^cc .*# in the tree$' README.md | head -n 1)
line=${line%%#*}
line=${line%"${line##*[![:space:]]}"}
if [[ -n $line && $nc -ge 1 ]]; then
	mkdir -p "$work/tree"
	cp "$work/readme-c.1" "$work/tree/transfer.c"
	ln -s "$repo/include" "$repo/tools" "$work/tree/"
	(cd "$work/tree" && eval "$line") >"$work/cc.log" 2>&1 && [[ -x $work/tree/transfer ]]
	point $? "README.md's in-tree build command works: $line" "$work/cc.log"
else
	point 1 "README.md prints an in-tree cc command (\"cc ... # in the tree\")"
fi

if man_example tools/libordlock.3 "$work/man.c"; then
	point 0 "libordlock(3) has an EXAMPLE program"
	cbuild "$work/man.c" "$work/man" "libordlock(3) EXAMPLE"
	crun "$work/man" "libordlock(3) EXAMPLE"
	cmp -s "$work/man.c" "$work/readme-c.1"
	point $? "libordlock(3)'s EXAMPLE is the README's C example"
else
	point 1 "libordlock(3) has an EXAMPLE program (.SH EXAMPLE, .EX ... .EE)"
fi

np=$(blocks README.md python "$work/readme-py")
[[ $np -ge 1 ]]
point $? "README.md has a Python example ($np \`\`\`python blocks)"
for ((i = 1; i <= np; i++)); do
	cp "$work/readme-py.$i" "$work/readme$i.py"
	python3 -m py_compile "$work/readme$i.py" >"$work/py.log" 2>&1
	point $? "README.md Python block $i: python3 -m py_compile" "$work/py.log"
	if [[ -e /dev/ordlock ]]; then
		point 0 "README.md Python block $i: /dev/ordlock exists here # SKIP"
		continue
	fi
	rc=0
	PYTHONPATH=tools/python python3 "$work/readme$i.py" >"$work/py.out" 2>"$work/py.log" || rc=$?
	[[ $rc == 1 ]] && grep -qE '^transfer: .*(the ordlock module is not loaded|No such file or directory)' "$work/py.log"
	point $? "README.md Python block $i: imports tools/python/ordlock.py, without /dev/ordlock exits 1 with \"transfer: ...\" (rc $rc)" "$work/py.log"
done

# the ordlockctl command lines of the README's shell blocks parse as
# printed: each runs without a usage error (64) or an option getopt refuses
# (without the module it then fails with 69, which is fine here)
C=$repo/tools/ordlockctl/ordlockctl
if [[ -x $C ]]; then
	bad=()
	ncl=0
	while IFS= read -r cl; do
		cl=${cl%%#*}
		cl=${cl%"${cl##*[![:space:]]}"}
		# a synopsis (alternatives, optional parts) is not a command line
		[[ $cl == *"|"* || $cl == *"["* ]] && continue
		ncl=$((ncl + 1))
		eval "set -- ${cl#ordlockctl }"
		(cd "$work" && ORDLOCK_DEBUGFS=$work/no-debugfs timeout 10 "$C" "$@" </dev/null) >/dev/null 2>"$work/cl.err"
		rc=$?
		if [[ $rc == 64 ]] || grep -q "invalid option\|unrecognized option" "$work/cl.err"; then
			bad+=("$cl")
		fi
	done < <(awk '/^```sh$/ { on = 1; next } /^```$/ { on = 0 } on && /^ordlockctl / { print }' README.md)
	[[ $ncl -ge 5 && ${#bad[@]} == 0 ]]
	point $? "README.md: its $ncl ordlockctl command lines parse as printed${bad[*]:+ (refused: ${bad[*]})}"
else
	point 1 "README.md's ordlockctl lines # no $C (make tools)"
fi

# links and pages the README sends the reader to
missing=()
while read -r target; do
	[[ -e $target ]] || missing+=("$target")
done < <(grep -oE '\]\([^)#:]+\)' README.md | sed -E 's/^\]\((.*)\)$/\1/' | sort -u)
for page in $(grep -oE '`tools/[a-z]+\.[348]`' README.md | tr -d '`' | sort -u); do
	[[ -e $page ]] || missing+=("$page")
done
[[ ${#missing[@]} == 0 ]]
point $? "README.md: the files it links to exist${missing[*]:+ (missing: ${missing[*]})}"

# the boot-time options the README and ordlock(4) quote are the shipped file's
opts=$(grep '^options ordlock ' tools/examples/modprobe.d/ordlock.conf)
readme_flat=$(tr '\n' ' ' <README.md | tr -s ' ')
[[ -n $opts && $readme_flat == *"\`$opts\`"* ]] && grep -qxF "$opts" tools/ordlock.4
point $? "README.md and ordlock(4) quote tools/examples/modprobe.d/ordlock.conf: $opts"

unit_done
