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

# kcheck_dlm_known LOG: whether LOG's lockdep report is the one 6.1's DLM
# makes of itself when a node leaves the cluster (dlm_controld's rmdir in
# configfs: drop_comm(), close_connection() flushes the connection's send
# work while it holds the connection's sock_mutex, which that work takes);
# lockdep reports once and turns itself off, so that report is the log's
# only one. Not ordlock's locks: the cluster judge does not count it, and
# says so (make check-cluster-debug, docs/testing.md)
kcheck_dlm_known() {
	grep -q 'possible circular locking dependency detected' "$1" &&
		grep -q '((work_completion)(&con->swork))' "$1" &&
		grep -q '(&con->sock_mutex).*at: close_connection' "$1" &&
		! grep -Eq '\[ordlock(_dlm)?\]' <(sed -n '/possible circular locking dependency detected/,/stack backtrace:/p' "$1")
}
# the report's first line, which the judges then leave out
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
