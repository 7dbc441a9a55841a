#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_doc_refs -- README.md and docs/*.md (and tools/node/README.md where it
# exists) point at nothing that is not there:
#  - every relative Markdown link [text](path) names a file of the tree, and
#    a "#anchor" after it (or alone: the same page) a heading of that page
#    (GitHub's rule: lower case, spaces to '-', punctuation dropped);
#  - every path in backquotes under the tree's top folders (kmod/, tools/,
#    tests/, docs/, include/, .ci/) exists, unless it is a pattern or a
#    build product: it holds a capital placeholder (NAME, KVER, FLAVOUR...),
#    a glob or brace, or lies under tests/build/ or ends in .ko or .o;
#  - every man page named "NAME(N)" of the project's own (ordlockctl(8),
#    libordlock(3), ordlock(4)) is in tools/.
# One point per file.  TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
cd "$repo" || exit 1

# anchors FILE: the GitHub anchor of each heading of the Markdown FILE
anchors() {
	awk '/^```/ { code = !code; next } !code && /^#+ / { sub(/^#+ /, ""); print }' "$1" |
		tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}

# check FILE: prints one line per dangling reference
check() {
	local f=$1 dir target path anchor
	dir=$(dirname "$f")
	# Markdown links, outside code blocks
	awk '/^```/ { code = !code; next } !code' "$f" |
		grep -oE '\]\([^) ]+\)' | sed -e 's/^](//' -e 's/)$//' |
		while read -r target; do
			case $target in
			http://* | https://* | mailto:*) continue ;;
			esac
			path=${target%%#*}
			anchor=
			[[ $target == *#* ]] && anchor=${target#*#}
			if [[ -n $path ]]; then
				[[ -e $dir/$path ]] || { echo "$f: link to $path: no such file"; continue; }
			else
				path=$(basename "$f")
			fi
			if [[ -n $anchor && $path == *.md ]]; then
				anchors "$dir/$path" | grep -qxF -- "$anchor" ||
					echo "$f: link to $path#$anchor: no such heading"
			fi
		done
	# paths in backquotes
	grep -oE '`(\./)?(kmod|tools|tests|docs|include|\.ci)/[^` ]*`' "$f" | tr -d '`' |
		sed 's|^\./||' | sort -u |
		while read -r path; do
			case $path in
			*[A-Z][A-Z]* | *'*'* | *'{'* | *'['* | *'<'* | tests/build/* | *.ko | *.o) continue ;;
			esac
			path=${path%%:*}
			[[ -e $path ]] || echo "$f: \`$path\`: no such file or folder"
		done
	# the project's man pages
	grep -oE '\b(ordlockctl|libordlock|ordlock)\([0-9]\)' "$f" | sort -u |
		while read -r page; do
			local name=${page%%(*} sec=${page#*(}
			sec=${sec%)}
			[[ -e tools/$name.$sec ]] || echo "$f: $page: no tools/$name.$sec"
		done
}

files=(README.md docs/*.md)
[[ -f tools/node/README.md ]] && files+=(tools/node/README.md)
echo "1..${#files[@]}"
for f in "${files[@]}"; do
	n=$((n + 1))
	out=$(check "$f")
	if [[ -z $out ]]; then
		echo "ok $n - $f: every link, path and man page it names exists"
	else
		echo "not ok $n - $f: dangling references"
		sed 's/^/# /' <<<"$out"
		failed=$((failed + 1))
	fi
done
((failed == 0))
