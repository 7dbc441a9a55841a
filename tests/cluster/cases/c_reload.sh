#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_reload: the companion module ordlock_dlm.ko unloaded and loaded again
# under cluster domains, on every node: unloaded first (when an earlier
# case left it loaded), the first "set cluster on" loads it on demand;
# rmmod is refused while a cluster domain uses it; exclusion across nodes
# (try-locks of a key held on node 1 fail elsewhere); "set cluster off"
# lets it unload; "set cluster on" again loads it again and exclusion holds
# again (node 2's key is refused to nodes 1 and 3).  (TAP, all nodes at once.)
#
# cluster-timeout: 300
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
dom=c_rl
loaded() { grep -q '^ordlock_dlm ' /proc/modules; }
unload() { # rmmod, retried while the last releases and leaves finish
	local i
	for ((i = 0; i < 150; i++)); do
		loaded || return 0
		rmmod ordlock_dlm 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}
# hold KEY on this node until shared/release.NODE; shared/held.NODE once held
hold() {
	"$olc" exec -d $dom -w 60 -x "$1" -- sh -c \
		"touch $shared/held.$node; while [ ! -e $shared/release.$node ]; do sleep 0.1; done" &
	holder=$!
	for _ in $(seq 300); do [[ -e $shared/held.$node ]] && break; sleep 0.1; done
	[[ -e $shared/held.$node ]]
}

unload
point $? "node$node: ordlock_dlm not loaded at the start"
barrier unloaded

for round in 1 2; do
	out=$("$olc" domain $dom set cluster on 2>&1)
	point $? "node$node: round $round: $dom set cluster on"
	loaded
	point $? "node$node: round $round: ordlock_dlm loaded on demand"
	! rmmod ordlock_dlm 2>/dev/null && loaded
	point $? "node$node: round $round: rmmod ordlock_dlm refused while $dom uses it"
	barrier "on$round"
	h=$round # the holder: node 1, then node 2
	if ((node == h)); then
		hold 1:1
		point $? "node$node: round $round: holds 1:1"
	fi
	barrier "held$round"
	if ((node != h)); then
		out=$("$olc" exec -q -d $dom -n -x 1:1 -- true 2>&1)
		point $(($? != 1)) "node$node: round $round: try-lock of 1:1 held on node$h refused (exit 1)"
	fi
	barrier "tried$round"
	if ((node == h)); then
		touch "$shared/release.$node"
		wait "$holder"
		point $? "node$node: round $round: released 1:1"
		rm -f "$shared/release.$node" "$shared/held.$node"
	fi
	barrier "released$round"
	out=$("$olc" domain $dom set cluster off 2>&1)
	point $? "node$node: round $round: $dom set cluster off ($out)"
	unload
	point $? "node$node: round $round: ordlock_dlm unloads once no domain uses it"
	barrier "off$round"
done
finish
