#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# c_views: ordlockctl's views of a cluster domain show other nodes' holders
# and waiters as the DLM's debugfs tells (issue 19, docs/cluster.md
# "Views"), on every node at once:
# - node 1 uses key 1:1 first, so it masters the resource (its NL anchor
#   keeps it there); node 2 then holds 1:1 exclusively and node 3 waits for
#   it; node 1's "ordlockctl locks" shows node 2 as the holder (EX) and node
#   3 as a waiter, in the table (NODE column) and in the JSON (node, mode,
#   dlm_granted), and says the view is a snapshot of the DLM's file;
# - node 2, which does not master 1:1, shows its own holder row and says
#   that 1:1 is mastered by node 1 (JSON: master "elsewhere", master_node 1);
# - after the release (node 3 granted, then done) node 1 shows no other
#   node's lock any more;
# - without the DLM's debugfs (another directory; debugfs unmounted in a
#   mount namespace of its own; a user that may not read it) node 1 says
#   why it cannot show other nodes' locks, instead of printing nothing.
# The DLM's file is copied into the case's shared directory (nodeN.*.all)
# as samples of the format on this kernel.  (TAP, all nodes at once.)
#
# cluster-timeout: 300
# shellcheck source-path=SCRIPTDIR source=../lib/case.sh
. "$ORDLOCK_REPO/tests/cluster/lib/case.sh"
olc=$ORDLOCK_REPO/tools/ordlockctl/ordlockctl
dom=c_vw
ls_all=/sys/kernel/debug/dlm/ordlock.${dom}_all
save() { cp "$ls_all" "$shared/node$node.$1.all" 2>/dev/null || true; }
dump() { diag "$(cat "$ls_all" 2>&1)"; }
export NO_COLOR=1

# node 1 masters 1:1, node 2 holds it exclusively until told
remote_holder $dom

# node 3 waits for it
if ((node == 3)); then
	"$olc" exec -d $dom -w 280 -x 1:1 -- true &
	waiter=$!
fi
if ((node == 1)); then
	# until node 3's request reached the master (hang guard 100 tries)
	for _ in $(seq 100); do
		j=$("$olc" -j locks -d $dom 2>/dev/null)
		jqok "$j" '[.locks[] | select(.node == 3)] | length == 1' && break
		sleep 0.2
	done
	save held
	jqok "$j" '[.locks[] | select(.node == 2 and .role == "holder" and .mode == "exclusive"
		and .dlm_granted == "EX" and .pid == null and .key == "1:1")] | length == 1'
	point $? "node1: locks -j: node 2 holds 1:1 exclusive (EX)" || { diag "$j"; dump; }
	jqok "$j" '[.locks[] | select(.node == 3 and .role == "waiter" and .mode == "exclusive"
		and .dlm_requested == "EX" and .position == 1)] | length == 1'
	point $? "node1: locks -j: node 3 waits for 1:1 exclusive, first in the DLM's queue" ||
		diag "$j"
	jqok "$j" '[.locks[] | select(.node == null)] | length == 0'
	point $? "node1: locks -j: no local row (node 1 holds nothing)" || diag "$j"
	jqok "$j" '.cluster | length == 1 and (.[0] | .domain == "c_vw" and .snapshot and .readable
		and .this_node == 1 and .error == null
		and ([.keys[] | select(.key == "1:1" and .master == "here" and .master_node == 1
			and .all_nodes_known)] | length == 1))'
	point $? "node1: locks -j: the cluster view is a snapshot, 1:1 mastered here" || diag "$j"
	t=$("$olc" locks -d $dom 2>&1)
	grep -Eq '^c_vw +1:1 +holder +- +- +- +- +exclusive +- +- +- +2 *$' <<<"$t"
	point $? "node1: locks table: a holder row of node 2 (NODE 2, exclusive)" || diag "$t"
	grep -Eq '^c_vw +1:1 +waiter +1 +- +- +- +exclusive +- +- +- +3 *$' <<<"$t"
	point $? "node1: locks table: a waiter row of node 3 (NODE 3, POS 1)" || diag "$t"
	grep -q "a snapshot of $ls_all at " <<<"$t"
	point $? "node1: locks table: labelled a snapshot of the DLM's file" || diag "$t"
	t=$("$olc" locks -d $dom -r -n -o NODE,ROLE 2>/dev/null)
	[[ $t == $'2 holder\n3 waiter' ]]
	point $? "node1: locks -r -n -o NODE,ROLE: the rows alone on stdout ($t)"
	touch "$shared/seen"
fi
if ((node == 2)); then
	for _ in $(seq 600); do [[ -e $shared/seen ]] && break; sleep 0.1; done
	j=$("$olc" -j locks -d $dom 2>/dev/null)
	save held
	jqok "$j" '([.locks[] | select(.node == null and .role == "holder" and .key == "1:1")]
		| length == 1) and ([.locks[] | select(.node != null)] | length == 0)'
	point $? "node2: locks -j: its own holder row, no other node's" || diag "$j"
	jqok "$j" '[.cluster[0].keys[] | select(.key == "1:1" and .master == "elsewhere"
		and .master_node == 1 and (.all_nodes_known | not))] | length == 1'
	point $? "node2: locks -j: 1:1 mastered elsewhere, by node 1" || diag "$j"
	t=$("$olc" locks -d $dom 2>&1)
	grep -q "1:1: mastered by node 1: other nodes' locks on it are known there only" <<<"$t"
	point $? "node2: locks table: says node 1 masters 1:1 and what is known here" || diag "$t"
fi
barrier looked

# release: node 3 is granted and ends, then nobody holds 1:1
((node == 2)) && touch "$shared/release"
if ((node == 2)); then
	wait "$holder"
	point $? "node2: the holder ended"
fi
if ((node == 3)); then
	wait "$waiter"
	point $? "node3: granted 1:1 after node 2's release"
fi
barrier released
if ((node == 1)); then
	j=$("$olc" -j locks -d $dom 2>/dev/null)
	save released
	jqok "$j" '(.locks | length == 0) and .cluster[0].readable'
	point $? "node1: locks -j after the release: no holder, no waiter" || { diag "$j"; dump; }
	t=$("$olc" locks -d $dom 2>&1)
	grep -q '^no locks held or waited for in domain "c_vw"' <<<"$t" && grep -q snapshot <<<"$t"
	point $? "node1: locks table after the release: none (and still the snapshot note)" ||
		diag "$t"

	# without the DLM's debugfs: say so
	t=$(ORDLOCK_DLM_DEBUGFS=/nonexistent "$olc" locks -d $dom 2>&1)
	grep -q "cluster domain c_vw: other nodes' locks unknown: cannot read /nonexistent/ordlock.c_vw_all" <<<"$t"
	point $? "node1: another DLM debugfs directory: says it cannot read it" || diag "$t"
	t=$(unshare -m sh -c "umount -l /sys/kernel/debug && '$olc' locks -d $dom" 2>&1)
	grep -q "cannot read $ls_all: debugfs is not mounted on /sys/kernel/debug" <<<"$t"
	point $? "node1: debugfs unmounted: says debugfs is not mounted" || diag "$t"
	j=$(unshare -m sh -c "umount -l /sys/kernel/debug && '$olc' -j locks -d $dom" 2>/dev/null)
	jqok "$j" '.cluster[0] | (.readable | not) and (.error | test("not mounted"))'
	point $? "node1: debugfs unmounted: the JSON says readable false and why" || diag "$j"
	install -m 0755 "$olc" /tmp/ordlockctl.c_views
	t=$(setpriv --reuid=65534 --regid=65534 --clear-groups /tmp/ordlockctl.c_views locks -d $dom 2>&1)
	grep -q "cannot read $ls_all: permission denied" <<<"$t"
	point $? "node1: a user that may not read debugfs: says permission denied" || diag "$t"
fi
barrier checked

out=$("$olc" domain $dom set cluster off 2>&1)
point $? "node$node: domain $dom set cluster off ($out)"
barrier off
finish
