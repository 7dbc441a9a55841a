#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_token_rule -- the fencing token rule of cluster domains is stated once,
# in the same words, in the UAPI header (include/uapi/linux/ordlock.h, "DOC:
# Cluster domains") and in docs/cluster.md ("Fencing tokens"): the paragraph
# that begins "Token rule (cluster domains):", its comment stars and
# markdown indentation removed and its white space folded, is the same in
# both, each file has it exactly once, and it names what is promised and
# what is assumed (issue 27).  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
cd "$repo" || exit 1
hdr=include/uapi/linux/ordlock.h
doc=docs/cluster.md
start='Token rule (cluster domains):'


# rule FILE PREFIX-RE: the paragraph from $start to the first empty line,
# PREFIX-RE removed from each line, folded into one line
rule() {
	sed -E "s/$2//" "$1" |
		awk -v s="$start" 'index($0, s) == 1 { on = 1 } on && /^[[:space:]]*$/ { exit } on { print }' |
		tr -s ' \n' '  ' | sed 's/ *$//'
}

c=$(grep -cF "$start" "$hdr")
[[ $c == 1 ]]
point $? "$hdr states the token rule once (found $c)"
c=$(grep -cF "$start" "$doc")
[[ $c == 1 ]]
point $? "$doc states the token rule once (found $c)"

u=$(rule "$hdr" '^ \* ?')
d=$(rule "$doc" '^  ')
[[ -n $u && $u == "$d" ]]
point $? "the rule reads the same in both ($(wc -w <<<"$u") words)"
if [[ $u != "$d" ]]; then
	diff <(tr ' ' '\n' <<<"$u") <(tr ' ' '\n' <<<"$d") | head -n 20 | sed 's/^/# /'
fi

for phrase in 'Promised: per key, cluster-wide, every grant' \
	'at least the wall clock in microseconds' \
	'when it reads zero' 'its master node died' 'every node forgot it or left the domain' \
	'agree to within half the time' 'fewer than one grant a microsecond' 'Not promised:'; do
	[[ $u == *"$phrase"* ]]
	point $? "the rule says \"$phrase\""
done

unit_done
