#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b9_profile: where the instructions go ("make bench ICOUNT=1
# BENCH=b9_profile ORDLOCK_BENCH_PROFILE=1"). Under icount the guest's
# clock counts instructions, so perf's cpu-clock event sampling every
# ORDLOCK_BENCH_PROFILE_PERIOD ns (default 20011) samples one in that many
# instructions. For each loop of b8_insn named in
# ORDLOCK_BENCH_PROFILE_LOOPS (default: ordlock1 ordlock64 try ring
# semop1 flock) it records the whole machine while the loop runs and
# writes perf-LOOP.txt (per symbol, kernel and user) into the results
# directory. Prints no CSV rows. Without ORDLOCK_BENCH_PROFILE=1 it does
# nothing.
set -u
[[ ${ORDLOCK_BENCH_PROFILE:-0} == 1 ]] || exit 0
out=${ORDLOCK_RESULTS:?}
here=$(dirname "$0")
command -v perf >/dev/null || { echo "no perf in the guest" >&2; exit 1; }
echo -1 >/proc/sys/kernel/perf_event_paranoid
echo 0 >/proc/sys/kernel/kptr_restrict
period=${ORDLOCK_BENCH_PROFILE_PERIOD:-20011}
for loop in ${ORDLOCK_BENCH_PROFILE_LOOPS:-ordlock1 ordlock64 try ring semop1 flock}; do
	data=/tmp/perf-$loop.data
	ORDLOCK_BENCH_INSN_PROFILE=$loop ORDLOCK_BENCH_ICOUNT=1 ORDLOCK_BENCH_INSN_N=${ORDLOCK_BENCH_INSN_N:-100000} \
		perf record -q -e cpu-clock -c "$period" -a -o "$data" \
		-- "$here/b8_insn" >/dev/null 2>>"$out/perf-$loop.err" ||
		{ echo "perf record $loop failed" >&2; cat "$out/perf-$loop.err" >&2; exit 1; }
	perf report -i "$data" --stdio --no-children --comm b8_insn \
		--sort sym --percent-limit 0.2 >"$out/perf-$loop.txt" 2>>"$out/perf-$loop.err"
	echo "profile $loop: $(grep -c '%' "$out/perf-$loop.txt") symbols" >&2
done
