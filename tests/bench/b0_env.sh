#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b0_env: what the benchmarks ran on, as "info" rows of row 0 (the host's
# report.py prints them above the table): kernel, CPUs, clock source,
# timer slack, memory.
set -u
row() { # KEY VALUE
	printf '0,%s,-,guest,info,,0,,,,,%s\n' "$1" "${2//,/;}"
}
row kernel "$(uname -r)"
row cpus "$(nproc)"
row cpu_model "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
row clocksource "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
row mem_total_kb "$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
row hash_bits "$(cat /sys/module/ordlock/parameters/hash_bits 2>/dev/null)"
row slab "$(if [[ -r /proc/slabinfo ]]; then echo slabinfo; else echo none; fi)"
