#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_dlm_ls: the cluster under the tests works. Every node pings the others
# over the bridge, joins one DLM lockspace with dlm_tool (libdlm) and sees
# every node as a member of it; then leaves. (TAP; run on every node at
# once by tests/cluster/node.sh.)
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"

for ((j = 1; j <= nodes; j++)); do
	((j == node)) && continue
	busybox ping -c 1 -W 5 "$ORDLOCK_NET_PREFIX.$j" >/dev/null 2>&1
	point $? "node$node reaches node$j ($ORDLOCK_NET_PREFIX.$j)"
done

ls=ordlock_cl_ls
dlm_tool join "$ls" >/dev/null 2>&1
point $? "node$node: dlm_tool join $ls"
barrier joined
members=0
for _ in $(seq 60); do
	# "members 1 2 3" in the lockspace's status
	members=$(dlm_tool ls 2>/dev/null | awk -v ls="$ls" '
		$1 == "name" { cur = $2 }
		cur == ls && $1 == "members" { print NF - 1; exit }')
	[[ ${members:-0} == "$nodes" ]] && break
	sleep 0.5
done
[[ ${members:-0} == "$nodes" ]]
point $? "node$node: lockspace $ls has all $nodes nodes as members (saw ${members:-0})"
barrier seen
dlm_tool leave "$ls" >/dev/null 2>&1
point $? "node$node: dlm_tool leave $ls"
finish
