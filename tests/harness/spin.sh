# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# spin.sh -- sourced by the spin model checks (tests/unit/t_model_spin.sh,
# tests/unit/t_model_xdetect.sh): TAP points, and a search of a model's
# configuration.  The caller sets repo (the tree), then spin_setup MODEL
# CFLAGS DEPTH: the model tests/model/MODEL copied into a scratch folder,
# pan's compile flags and its -m; the test is skipped without spin.
# spin_opt (default -O1) is cc's optimisation of pan.c.

# spin_setup MODEL CFLAGS DEPTH
spin_setup() {
	local model=${repo:?}/tests/model/$1
	command -v spin >/dev/null || { echo "1..0 # SKIP spin is not installed (make deps)"; exit 0; }
	[[ -f $model ]] || { echo "not ok 1 - $model is missing"; echo "1..1"; exit 1; }
	spin_work=$(mktemp -d)
	# shellcheck disable=SC2064 # the folder now
	trap "rm -rf '$spin_work'" EXIT
	cp "$model" "$spin_work/$1"
	spin_model=$1 spin_cflags=$2 spin_depth=$3
}

n=0
failed=0
point() { # point STATUS DESCRIPTION
	n=$((n + 1))
	if [[ $1 == 0 ]]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

# spin_search DEFINES...: the model generated with DEFINES (spin -a),
# compiled (cc) and searched (./pan); pan's output in $spin_work/pan.txt,
# its verdict lines printed.  Status 0 when the search completed without
# an error, 1 when it found one, 2 when it could not run or did not
# complete (the depth bound, memory): no verdict
spin_search() {
	rm -f "$spin_work"/pan "$spin_work"/pan.[bchmt] "$spin_work"/*.trail
	(cd "$spin_work" && spin -a "$@" "$spin_model" >spin.out 2>&1) || { cat "$spin_work/spin.out"; return 2; }
	# shellcheck disable=SC2086 # the flags are words
	(cd "$spin_work" && cc "${spin_opt:--O1}" -w $spin_cflags -o pan pan.c 2>cc.out) || { cat "$spin_work/cc.out"; return 2; }
	(cd "$spin_work" && ./pan -m"$spin_depth" >pan.txt 2>&1)
	grep -E '^pan:|errors:|states, stored|Search not completed' "$spin_work/pan.txt" | sed 's/^/# /'
	grep -q 'errors: [1-9]' "$spin_work/pan.txt" && return 1
	grep -q 'Search not completed' "$spin_work/pan.txt" && return 2
	grep -q 'errors: 0' "$spin_work/pan.txt" && return 0
	return 2
}

# spin_points WANT CONFIG...: each CONFIG "DEFINES|DESCRIPTION" searched,
# a point each: WANT 0, the search completes without an error; WANT 1, it
# finds one (a planted bug the checker must catch)
spin_points() {
	local want=$1 c st
	shift
	for c in "$@"; do
		# shellcheck disable=SC2086 # the defines are words
		spin_search ${c%%|*}
		st=$?
		[[ $st == "$want" ]]
		st=$?
		if [[ $want == 0 ]]; then
			point $st "no error: ${c#*|} (${c%%|*})"
		else
			point $st "planted bug found: ${c#*|}"
		fi
	done
}
