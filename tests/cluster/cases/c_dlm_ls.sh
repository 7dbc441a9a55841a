#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_dlm_ls: the cluster under the tests works. Every node pings the others
# over the bridge, joins one DLM lockspace with dlm_tool (libdlm) and sees
# every node as a member of it; then leaves. (TAP; run on every node at
# once by tests/cluster/node.sh.)
set -u
n=0
failed=0
point() { # point STATUS NAME
	n=$((n + 1))
	if [[ $1 == 0 ]]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
node=$ORDLOCK_NODE
nodes=$ORDLOCK_NODES
shared=$ORDLOCK_SHARED
barrier() { # barrier NAME: every node reached NAME (300 s hang guard)
	local i j c
	touch "$shared/$1.$node"
	for ((i = 0; i < 1500; i++)); do
		c=0
		for ((j = 1; j <= nodes; j++)); do
			[[ -e $shared/$1.$j ]] && c=$((c + 1))
		done
		((c == nodes)) && return 0
		sleep 0.2
	done
	echo "# barrier $1: only $c of $nodes nodes came"
	return 1
}

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
echo "1..$n"
exit $failed
