# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# unit.sh -- what the shell TAP tests share (tests/unit/t_*.sh,
# tests/harness/lint.sh): where the tree is, one way to print a point, the
# plan and the exit status. A test sources it before anything else:
#
#	. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
#
# From tests/unit/ and tests/harness/ that is this file; make copies the
# tests to tests/build/unit/ and this file to tests/build/lib/, beside them.
#
#   $repo        the top of the source tree: git's, else found from here
#   point STATUS DESCRIPTION [DIAG]
#                one TAP point, ok when STATUS is 0 (pass $?); when it is not,
#                DIAG is printed as "# " lines: the last 20 lines of DIAG if
#                it is a file (the first 20 with UNIT_DIAG=head), else DIAG
#   is GOT WANT DESCRIPTION
#                a point that GOT is WANT (strings); prints both when not
#   skip REASON...
#                the whole test is skipped: "1..0 # SKIP REASON", exit 0
#   unit_work    sets $work, a new temporary directory removed at exit
#   unit_done    prints the plan "1..N"; its status (make it the test's
#                last command) is 0 when every point passed
#
# The counters are $n (points so far) and $failed (points not ok).

unit_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$unit_lib" && git rev-parse --show-toplevel 2>/dev/null) ||
	repo=$(cd "$unit_lib/../.." && pwd)
[[ -f $repo/tests/lib/unit.sh ]] || repo=$(cd "$unit_lib/../../.." && pwd)
n=0
failed=0

point() {
	n=$((n + 1))
	if [[ $1 == 0 ]]; then
		echo "ok $n - $2"
		return 0
	fi
	echo "not ok $n - $2"
	failed=$((failed + 1))
	if [[ -n ${3:-} && -f ${3:-} ]]; then
		if [[ ${UNIT_DIAG:-tail} == head ]]; then head -n 20 "$3"; else tail -n 20 "$3"; fi |
			sed 's/^/# /'
	elif [[ -n ${3:-} ]]; then
		printf '%s\n' "$3" | sed 's/^/#   /'
	fi
	return 0
}

is() {
	if [[ $1 == "$2" ]]; then
		point 0 "$3"
	else
		point 1 "$3" "$(printf "got:  '%s'\nwant: '%s'" "$1" "$2")"
	fi
}

skip() {
	echo "1..0 # SKIP $*"
	exit 0
}

unit_work() {
	work=$(mktemp -d)
	# shellcheck disable=SC2064 # $work is fixed now
	trap "rm -rf '$work'" EXIT
}

unit_done() {
	echo "1..$n"
	((failed == 0))
}
