# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# kcheck.sh -- what the debug kernel's checkers write in a kernel log, and
# the verdict on a kmemleak scan; one definition for the two suites that
# run on a debug kernel: make check-debug (tests/vm/run.sh --debug, one
# guest) and make check-cluster-debug (tests/cluster/run.sh with
# CLUSTER_DEBUG=1, every node).  Source it after tests/harness/tap.sh.
#
#   kcheck_names[i], kcheck_res[i]   each checker: its name in the points
#                    ("no NAME report") and an extended regex of its
#                    reports' lines
#   kcheck_kmemleak LABEL FILE [LOADED]
#                    one point "LABEL: kmemleak: no leak after the module
#                    was unloaded": FILE is the scan after the unload,
#                    LOADED (optional) the one just before it (it names the
#                    module's functions); FILE missing fails

# lockdep's reports, and the atomic-sleep checks lockdep's kernel has on
kcheck_lockdep='possible (circular|recursive) locking|inconsistent lock state|'
kcheck_lockdep+='suspicious RCU usage|lock inversion|-safe -> [A-Z]+-[a-z]*unsafe|'
kcheck_lockdep+='bad unlock balance|held lock freed|lock held when returning|'
kcheck_lockdep+='Nested lock was not taken|Invalid wait context|'
kcheck_lockdep+='sleeping function called from invalid context|scheduling while atomic|'
kcheck_lockdep+='BUG: MAX_|has not been registered|non-static key|DEBUG_LOCKS_WARN_ON|'
kcheck_lockdep+='locking correctness validator'
# shellcheck disable=SC2034 # used by the scripts that source this one
kcheck_names=(KASAN "lockdep (or atomic sleep)" UBSAN DEBUG_OBJECTS)
# shellcheck disable=SC2034
kcheck_res=('KASAN:' "$kcheck_lockdep" 'UBSAN:' 'ODEBUG:')

# kcheck_dlm_known LOG: whether LOG's lockdep report is one 6.1's DLM
# makes of itself: a circular dependency whose every lock is one of the
# DLM's own (kcheck_dlm_classes; ordlock's own locks have other names, so
# a report that involves one of them is never this). Two were seen: when a
# node leaves (dlm_controld's rmdir in configfs: close_connection() flushes
# the connection's send work while it holds the connection's sock_mutex,
# which that work takes), and in recovery (dlm_recover_waiters_pre() holds
# ls_waiters_mutex and takes a res_mutex, which dlm_lock() -- called by
# ordlock_dlm's request worker, holding none of ordlock's locks -- takes
# before ls_waiters_mutex). lockdep reports once and turns itself off, so
# that report is the log's only one. The cluster judge does not count it
# and says when it came: ordlock's locks were checked up to it (make
# check-cluster-debug, docs/testing.md)
kcheck_dlm_classes='&r->res_mutex|&ls->ls_waiters_mutex|&con->sock_mutex|(work_completion)(&con->swork)'
kcheck_dlm_known() {
	local report classes c
	report=$(sed -n '/possible circular locking dependency detected/,/Possible unsafe locking scenario/p' "$1")
	[[ -n $report ]] || return 1
	# the two locks of the report's head and every lock of its chain
	classes=$(sed -En -e 's/.*\] [0-9a-f]{16} \((.*)\)\{.*/\1/p' \
		-e 's/.*-> #[0-9]+ \((.*)\)\{.*/\1/p' <<<"$report")
	[[ -n $classes ]] || return 1
	while read -r c; do
		[[ "|$kcheck_dlm_classes|" == *"|$c|"* ]] || return 1
	done <<<"$classes"
}
# the report's first line, which the judges then leave out
# shellcheck disable=SC2034 # used by the scripts that source this one
kcheck_dlm_line='WARNING: possible circular locking dependency detected'

kcheck_kmemleak() {
	local label=$1 leaks=$2 loaded=${3:-} name
	name="$label: kmemleak: no leak after the module was unloaded"
	if [[ ! -f $leaks ]]; then
		tap_point 1 "$name" "no kmemleak report saved" || true
	elif ! grep -q '^unreferenced object' "$leaks"; then
		tap_point 0 "$name" || true
	else
		tap_point 1 "$name" \
			"$(grep -c '^unreferenced object' "$leaks") objects; see ${leaks#"${repo:-}"/}" || true
		head -n 40 "$leaks" | sed 's/^/    | /'
		if [[ -n $loaded ]] && grep -q '^unreferenced object' "$loaded" 2>/dev/null; then
			echo "    | (the same scan with the module loaded names its functions:" \
				"${loaded#"${repo:-}"/})"
		fi
	fi
}
