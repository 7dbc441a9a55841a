# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# summary.sh -- what make check and make check-debug share, sourced from the
# top of the tree: $MAKE (default make) and mk (it, without the directory
# messages), and the closing tally.
# summary_init NAME RESULTS starts it: every part appends "PASSED FAILED"
# to $ORDLOCK_SUMMARY (add_summary here, tap.sh and run.sh there); finish
# prints the time, where RESULTS are, and the closing "N passed, N failed",
# then exits non-zero when anything failed.

MAKE=${MAKE:-make}
mk() { $MAKE --no-print-directory "$@"; }

summary_init() { # NAME RESULTS
	summary_name=$1
	summary_results=$2
	summary=$(mktemp)
	trap 'rm -f "$summary"' EXIT
	export ORDLOCK_SUMMARY=$summary
	summary_t0=$(date +%s)
}

# add_summary PASSED FAILED
add_summary() { echo "$1 $2" >>"$summary"; }

finish() {
	local p=0 f=0 a b
	while read -r a b; do
		p=$((p + a))
		f=$((f + b))
	done <"$summary"
	echo
	echo "$summary_name: $(($(date +%s) - summary_t0))s; results in $summary_results"
	echo "$p passed, $f failed"
	((f == 0))
	exit
}
