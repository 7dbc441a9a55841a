# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Bash library (source it) that judges the TAP output of one test program and
# keeps the running totals for the summary line.
#
#   tap_eval LABEL TAPFILE RC [ERRFILE]
#	Counts the "ok" / "not ok" points in TAPFILE, checks the plan and the
#	exit status RC, prints one line "PASS|FAIL LABEL: ..." and adds to
#	TAP_PASSED / TAP_FAILED.  A program that crashed, timed out, bailed
#	out, printed no plan (or a plan that does not match its points), or
#	exited non-zero without a failing point, gets one extra failed point.
#	On failure it also shows the failing points, the diagnostics and the
#	tail of ERRFILE.  Returns 0 on pass, 1 on failure.
#   tap_point OK LABEL [REASON]
#	Records one harness check (OK = 0 for pass) the same way.
#   tap_record_summary
#	Appends "PASSED FAILED" to $ORDLOCK_SUMMARY when make check set it.
#   tap_print_total PART
#	Prints the totals: "N passed, N failed" when run alone, "PART: N
#	passed, N failed" under make check (whose own total comes last).
#
# TAP rules used: "ok"/"not ok" at the start of a line are points (indented
# lines are subtests and ignored); "not ok ... # TODO" does not fail (counted
# as passed); a plan "1..N" may come first or last; "1..0 # SKIP" is a skip.

TAP_PASSED=${TAP_PASSED:-0}
TAP_FAILED=${TAP_FAILED:-0}
# Set TAP_VERBOSE=1 to print every program's full output; TAP_TIMEOUT (the
# per-program limit, seconds) only makes the "timed out" message precise.
TAP_VERBOSE=${TAP_VERBOSE:-0}
# ORDLOCK_PART (make check: the kernel a part runs on, e.g. "6.12-rt")
# prefixes every PASS/FAIL line and the part's total, "[6.12-rt] ...".
TAP_PREFIX=${ORDLOCK_PART:+[$ORDLOCK_PART] }

# rc_reason RC TIMEOUT: words for an exit status from timeout(1)/the shell.
tap_rc_reason() {
	local rc=$1
	case $rc in
	0) echo "exit 0" ;;
	124) echo "timed out${TAP_TIMEOUT:+ after ${TAP_TIMEOUT}s}" ;;
	125 | 126 | 127) echo "could not run (exit $rc)" ;;
	137) echo "killed (SIGKILL, hung?)" ;;
	200) echo "stuck in the kernel: still running after SIGKILL" ;;
	*)
		if ((rc > 128)); then
			echo "crashed: $(kill -l $((rc - 128)) 2>/dev/null || echo signal $((rc - 128)))"
		else
			echo "exit $rc"
		fi
		;;
	esac
}

tap_eval() {
	local label=$1 tap=$2 rc=$3 err=${4:-}
	local counts pass fail todo plan bail skip extra=""

	if [[ ! -f "$tap" ]]; then
		TAP_FAILED=$((TAP_FAILED + 1))
		printf 'FAIL %s%s: did not run (no output file)\n' "$TAP_PREFIX" "$label"
		return 1
	fi
	# pass fail todo plan(-1 none) bailout skipall
	counts=$(awk '
		BEGIN { pass = 0; fail = 0; todo = 0; plan = -1; bail = 0; skip = 0 }
		/^ok( |$)/ { pass++; next }
		/^not ok( |$)/ {
			if (tolower($0) ~ /#[ \t]*todo/) todo++; else fail++
			next
		}
		/^1\.\.[0-9]+/ {
			plan = substr($0, 4) + 0
			if (plan == 0 && tolower($0) ~ /#[ \t]*skip/) skip = 1
			next
		}
		/^Bail out!/ { bail = 1 }
		END { print pass, fail, todo, plan, bail, skip }
	' "$tap")
	read -r pass fail todo plan bail skip <<<"$counts"
	pass=$((pass + todo))

	if ((bail)); then
		extra="bailed out: $(grep -m1 '^Bail out!' "$tap" | cut -c11-)"
	elif ((rc != 0)) && ! ((rc == 1 && fail > 0)); then
		# tap_done() exits 1 when a point failed; any other status
		# is a crash, a timeout or a harness error.
		extra=$(tap_rc_reason "$rc")
	elif ((plan < 0)); then
		extra="no plan"
	elif ((plan != pass + fail)); then
		extra="planned $plan, ran $((pass + fail))"
	fi
	[[ -n "$extra" ]] && fail=$((fail + 1))

	TAP_PASSED=$((TAP_PASSED + pass))
	TAP_FAILED=$((TAP_FAILED + fail))

	local note=""
	((todo)) && note+=", $todo todo"
	((skip)) && note+=", skipped"
	[[ -n "$extra" ]] && note+=" ($extra)"
	if ((fail == 0)); then
		printf 'PASS %s%s: %d passed, 0 failed%s\n' "$TAP_PREFIX" "$label" "$pass" "$note"
		if [[ "$TAP_VERBOSE" == 1 ]]; then
			sed 's/^/    | /' "$tap"
		fi
		return 0
	fi
	printf 'FAIL %s%s: %d passed, %d failed%s\n' "$TAP_PREFIX" "$label" "$pass" "$fail" "$note"
	# The failing points with their diagnostics, then stderr.
	if [[ "$TAP_VERBOSE" == 1 ]]; then
		sed 's/^/    | /' "$tap"
	else
		awk '
			/^not ok/ && tolower($0) !~ /#[ \t]*todo/ { show = 1; print; next }
			/^#/ && show { print; next }
			/^Bail out!/ { print; next }
			{ show = 0 }
		' "$tap" | head -n 60 | sed 's/^/    | /'
		if [[ -n "$extra" ]] && ! grep -q '^not ok' "$tap"; then
			echo "    | (last lines of output:)"
			tail -n 10 "$tap" | sed 's/^/    | /'
		fi
	fi
	if [[ -n "$err" && -s "$err" ]]; then
		echo "    | (stderr:)"
		tail -n 20 "$err" | sed 's/^/    | /'
	fi
	return 1
}

tap_point() {
	local status=$1 label=$2 reason=${3:-}
	if [[ "$status" == 0 ]]; then
		TAP_PASSED=$((TAP_PASSED + 1))
		printf 'PASS %s%s\n' "$TAP_PREFIX" "$label"
		return 0
	fi
	TAP_FAILED=$((TAP_FAILED + 1))
	printf 'FAIL %s%s%s\n' "$TAP_PREFIX" "$label" "${reason:+ ($reason)}"
	return 1
}

tap_record_summary() {
	if [[ -n "${ORDLOCK_SUMMARY:-}" ]]; then
		echo "$TAP_PASSED $TAP_FAILED" >>"$ORDLOCK_SUMMARY"
	fi
}

tap_print_total() {
	if [[ -n "${ORDLOCK_SUMMARY:-}" ]]; then
		echo "$TAP_PREFIX$1: $TAP_PASSED passed, $TAP_FAILED failed"
	else
		echo "$TAP_PASSED passed, $TAP_FAILED failed"
	fi
}
