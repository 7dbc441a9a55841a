#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run-unit.sh PROGRAM...  -- runs the host-side unit tests (TAP producers),
# each with a time limit (UNIT_TIMEOUT seconds, default 60; t_dkms, which
# builds both modules through DKMS for every kernel of the matrix, five
# times that: about 20 s a kernel on a quiet machine, and its first run may
# create DKMS's signing key), prints one line
# per program and "N passed, N failed"; exits non-zero when anything failed.
# Output is kept in tests/build/results/unit/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=tap.sh
. "$here/tap.sh"

# a hang guard, not a time limit: builds (t_install_module, t_pyvenv) took
# over 60 s inside make check on a loaded host
unit_timeout=${UNIT_TIMEOUT:-180}
out=$here/../build/results/unit
rm -rf "$out"
mkdir -p "$out"
for prog in "$@"; do
	name=$(basename "$prog")
	rc=0
	TAP_TIMEOUT=$unit_timeout
	# the other builds (a module install, a venv) likewise: t_install_module
	# went past 180 s on a loaded host
	case $name in t_dkms | t_install_module | t_pyvenv) TAP_TIMEOUT=$((unit_timeout * 3)) ;; esac
	# the model check: about 35 s of CPU, a loaded 2-core host triples it
	[[ $name == t_model_spin ]] && TAP_TIMEOUT=$((unit_timeout * 2))
	timeout -k 5 "$TAP_TIMEOUT" "$prog" >"$out/$name.tap" 2>"$out/$name.err" </dev/null || rc=$?
	tap_eval "unit/$name" "$out/$name.tap" "$rc" "$out/$name.err" || true
done
[[ $# -gt 0 ]] || echo "unit: no unit tests"
tap_record_summary
tap_print_total unit
((TAP_FAILED == 0))
