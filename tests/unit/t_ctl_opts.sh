#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ordlockctl's options come from one table per subcommand (struct
# olc_option): getopt, --help, "help --options" and the bash completion are
# made from it, and the man page is checked against it here. For every
# subcommand:
#  - each option of the table is accepted by getopt (no "invalid option")
#    and each one listed in --help is in the table, and the reverse;
#  - the completion offers exactly the table (exec: no -j, -p, -S, -N);
#  - the man page's SYNOPSIS names only options of the table, and its
#    description names every one (or, for the common ones, OPTIONS does);
#  - no short letter has two meanings within a subcommand.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
C=$repo/tools/ordlockctl/ordlockctl
MAN=$repo/tools/ordlockctl.8
COMP=$repo/tools/completion/ordlockctl.bash
[[ -x $C ]] || skip "no $C (make tools)"
cmds=$("$C" help --commands | grep -v '^help$')

# the man page's SYNOPSIS options and description text, per subcommand
manparse() {
	python3 - "$MAN" "$1" "$cmds" <<'EOF'
import re, sys
man, cmd = open(sys.argv[1]).read(), sys.argv[2]
syn = man.split('.SH SYNOPSIS', 1)[1].split('.SH DESCRIPTION', 1)[0]
chunks = [c for c in syn.split('\n.br\n')
          if re.search(r'^\.B (ordlockctl )?%s( |$)' % re.escape(cmd), c, re.M)]
body = man.split('.SH COMMANDS', 1)[1].split('.SH OPTIONS', 1)[0]
# the .TP entries of COMMANDS whose tag starts with the subcommand's name
parts = re.split(r'\n\.TP\n\.B (\S+)', '\n' + body)
names = sys.argv[3].split()
desc, cur = '', None
for i in range(1, len(parts) - 1, 2):
    tag = parts[i].replace('\\-', '-')
    if tag in names:
        cur = tag
    if cur == cmd:
        desc += '\n.B ' + parts[i] + parts[i + 1]
opts = man.split('.SH OPTIONS', 1)[1].split('.SH EXIT STATUS', 1)[0]
def tokens(t):
    return sorted(set(re.findall(r'(?<![\w\\])\\-(?:\\-[a-z][a-z\\-]*|[A-Za-z])', t)))
print('SYN', ' '.join(t.replace('\\', '') for t in tokens('\n'.join(chunks))))
print('ALL', ' '.join(t.replace('\\', '') for t in tokens('\n'.join(chunks) + desc)))
print('OPT', ' '.join(t.replace('\\', '') for t in tokens(opts)))
EOF
}

common=$("$C" help --options | awk '{ print $1; print $2 }' | grep -v '^-$' | sort -u)
for cmd in $cmds; do
	table=$("$C" help --options "$cmd")
	words=$(awk '{ if ($1 != "-") print $1; print $2 }' <<<"$table" | sort -u)

	# getopt takes each (with a dummy argument when it needs one); no
	# "invalid"/"unrecognized option"
	bad=""
	while read -r s l arg _; do
		for o in $s $l; do
			[[ $o == - || $o == --help || $o == -h ]] && continue
			a=()
			[[ $arg != - ]] && a=(x)
			out=$("$C" "$cmd" "$o" "${a[@]}" 2>&1 </dev/null)
			grep -q "invalid option\|unrecognized option" <<<"$out" && bad+=" $o"
		done
	done <<<"$table"
	point "$([[ -z $bad ]]; echo $?)" "$cmd: getopt accepts every option of its table" "refused:$bad"

	# --help lists the table's options (aliases aside), and only those
	helpopts=$("$C" "$cmd" --help | grep -oE '^ {2,6}(-[A-Za-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+' | sort -u)
	tabopts=$(awk '$4 != "alias" { print $2 }' <<<"$table" | sort -u)
	d=$(diff <(echo "$helpopts") <(echo "$tabopts") | grep '^[<>]' | tr '\n' ' ')
	point "$([[ -z $d ]]; echo $?)" "$cmd --help lists exactly its table" "$d"

	# the completion offers the table
	comp=$(PATH=$(dirname "$C"):$PATH bash -c 'source "$1"; COMP_WORDS=(ordlockctl "$2" -); COMP_CWORD=2; _ordlockctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$cmd" | sort -u)
	d=$(diff <(echo "$comp") <(echo "$words") | grep '^[<>]' | tr '\n' ' ')
	point "$([[ -z $d ]]; echo $?)" "$cmd: the completion offers exactly its table" "$d"

	# one meaning per letter
	dup=$(awk '$1 != "-" && $4 != "alias" { print $1 }' <<<"$table" | sort | uniq -d | tr '\n' ' ')
	point "$([[ -z $dup ]]; echo $?)" "$cmd: no letter with two meanings" "$dup"

	# the man page
	m=$(manparse "$cmd")
	syn=$(sed -n 's/^SYN //p' <<<"$m")
	all=$(sed -n 's/^ALL //p' <<<"$m")
	optsec=$(sed -n 's/^OPT //p' <<<"$m")
	extra=""
	for o in $syn; do
		grep -qx -- "$o" <<<"$words" || extra+=" $o"
	done
	point "$([[ -z $extra ]]; echo $?)" "$cmd: its SYNOPSIS in ordlockctl(8) names only options it takes" "not taken:$extra"
	missing=""
	while read -r s l _ alias; do
		[[ $alias == alias ]] && continue
		found=0
		for o in $s $l; do
			[[ $o == - ]] && continue
			grep -qx -- "$o" <<<"$(tr ' ' '\n' <<<"$all")" && found=1
			grep -qx -- "$o" <<<"$common" && grep -qx -- "$o" <<<"$(tr ' ' '\n' <<<"$optsec")" && found=1
		done
		[[ $found == 1 ]] || missing+=" $l"
	done <<<"$table"
	point "$([[ -z $missing ]]; echo $?)" "$cmd: ordlockctl(8) describes every option of its table" "not described:$missing"

	# options after the operands, as before them (issue 42: "domain shop
	# -j" exited 64): the same exit status and output (no module here: the
	# same refusal), never a usage error. exec alone stops at COMMAND
	# (flock's "+"); its FD is one operand, after which nothing may come.
	case $cmd in
	domain) operands=(shop) ;;
	blockers) operands=(1) ;;
	check-token) operands=(1:1 5) ;;
	exec) operands=() ;;
	*) operands=() ;;
	esac
	if [[ $cmd != exec ]]; then
		# a usage line that names an operand must have one here
		named=$("$C" "$cmd" --help | sed -n 's/^Usage: ordlockctl [a-z-]* //p' | sed 's/\[[^]]*\]//g' |
			grep -oE '(^| )[A-Z][A-Z]+' | head -n 1)
		[[ -z $named || ${#operands[@]} -gt 0 ]]
		point $? "$cmd: its operand ($named) is in this test's table" "add it to the case above"
	fi
	if [[ $cmd != exec && ${#operands[@]} -gt 0 ]]; then
		opt=-j
		"$C" "$cmd" --help | grep -q -- '--json' || opt=-v
		before=$(ORDLOCK_DEBUGFS=/nonexistent "$C" "$cmd" "$opt" "${operands[@]}" 2>&1 </dev/null)
		b=$?
		after=$(ORDLOCK_DEBUGFS=/nonexistent "$C" "$cmd" "${operands[@]}" "$opt" 2>&1 </dev/null)
		a=$?
		[[ $a == "$b" && $a != 64 && $after == "$before" ]]
		point $? "$cmd ${operands[*]} $opt: as $cmd $opt ${operands[*]} (exit $a, before it $b)" "$after"
	fi
done

# exec: the options the issue found listed though refused
comp=$(PATH=$(dirname "$C"):$PATH bash -c 'source "$1"; COMP_WORDS=(ordlockctl exec -); COMP_CWORD=2; _ordlockctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP")
bad=$(grep -xE -- '-j|--json|-p|--pretty|-S|--source|-N|--numeric' <<<"$comp" | tr '\n' ' ')
point "$([[ -z $bad ]]; echo $?)" "exec: the completion offers no -j, -p, -S or -N" "$bad"
point "$("$C" exec --help | grep -qE -- '--json|--pretty|--source|--numeric'; [[ $? == 1 ]]; echo $?)" \
	"exec --help lists no -j, -p, -S or -N"
# the columns of every table: each with a one-line description (as lslocks
# --help has), in "help --columns" and in the command's --help alike, and
# the completion of -o offers their names
for cmd in $cmds; do
	cols=$("$C" help --columns "$cmd") || { point 1 "$cmd: help --columns"; continue; }
	[[ -z $cols ]] && continue
	bare=$(awk 'NF < 2 { print $1 }' <<<"$cols" | tr '\n' ' ')
	point "$([[ -z $bare ]]; echo $?)" "$cmd: help --columns describes every column" "no description:$bare"
	helpcols=$("$C" "$cmd" --help | sed -n '/^Columns/,/^$/p' | sed -n 's/^  \([^ ]\+\)  *\(.\+\)/\1 \2/p')
	point "$([[ $(awk '{ print $1 }' <<<"$cols") == $(awk '{ print $1 }' <<<"$helpcols") &&
		$(awk 'NF < 2' <<<"$helpcols") == "" ]]; echo $?)" \
		"$cmd: --help lists the same columns, each described" "$helpcols"
	comp=$(PATH=$(dirname "$C"):$PATH bash -c 'source "$1"; COMP_WORDS=(ordlockctl "$2" -o ""); COMP_CWORD=3; _ordlockctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$COMP" "$cmd" | sort)
	point "$([[ $comp == $(awk '{ print $1 }' <<<"$cols" | sort) ]]; echo $?)" \
		"$cmd: the completion of -o offers the column names" "$comp"
done
unit_done
