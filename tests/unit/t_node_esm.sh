#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_node_esm -- the npm package as its users install it: "npm pack" of
# tools/node, "npm install --offline" of the tarball into a fresh project,
# then the package imported each way Node.js has: CommonJS require(), an
# ES module's default import, an ES module's named imports of every name
# index.d.ts declares (issue 42: "import { Owner } from 'ordlock'" failed,
# "Named export 'Owner' not found", because Node's CommonJS export
# detection (cjs-module-lexer) gave up at the first value in index.js's
# module.exports that was not a name), and "import * as" whose names are
# the same, and a TypeScript .mts compiled by tsc --strict (Debian's
# node-typescript, make deps) and run. Importing opens nothing: no module
# needed. Skips when node, npm or the addon is missing. TAP.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/../lib/unit.sh"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1 ||
	[[ ! -e $repo/tools/node/ordlock.node ]]; then
	echo "1..0 # SKIP no node or npm, or tools/node/ordlock.node not built"
	exit 0
fi

unit_work
export npm_config_cache=$work/cache npm_config_update_notifier=false
mkdir -p "$work/app"
echo '{"name": "app", "version": "1.0.0", "private": true}' >"$work/app/package.json"
out=$(cd "$work" && npm pack -q "$repo/tools/node" 2>&1)
tgz=$(ls "$work"/ordlock-*.tgz 2>/dev/null | head -n 1)
[[ -n $tgz ]]
point $? "npm pack tools/node: $(basename "${tgz:-none}")" "$out"
out=$(cd "$work/app" && npm install --offline --no-audit --no-fund "$tgz" 2>&1)
[[ -e $work/app/node_modules/ordlock/index.js ]]
point $? "npm install --offline of the tarball into a fresh project" "$out"

# the names the types promise
names=$(sed -nE 's/^export declare (const|function|class) (\w+).*/\2/p' "$repo/tools/node/index.d.ts" | sort -u)
count=$(wc -w <<<"$names")
((count > 40))
point $? "index.d.ts declares $count names"
list=$(tr '\n' ',' <<<"$names" | sed 's/,$//; s/,/, /g')

cd "$work/app" || exit 1
out=$(node -e "
const o = require('ordlock');
const { Owner, key, version } = require('ordlock');
const names = process.argv[1].split(', ');
const missing = names.filter((x) => !(x in o));
if (missing.length || typeof Owner !== 'function' || key('1:2').name !== '1:2') {
  console.log('missing: ' + missing.join(' ')); process.exit(1);
}
console.log(version);" "$list" 2>&1)
point $? "CommonJS: require('ordlock') has every declared name ($out)" "$out"

cat >default.mjs <<'EOF'
import ordlock from 'ordlock';
if (typeof ordlock.Owner !== 'function' || ordlock.key('1:2').name !== '1:2') process.exit(1);
console.log(ordlock.version);
EOF
out=$(node default.mjs 2>&1)
point $? "ES module: import ordlock from 'ordlock' ($out)" "$out"

cat >named.mjs <<EOF
import { $list } from 'ordlock';
import ordlock from 'ordlock';
const got = { $list };
const wrong = Object.keys(got).filter((x) => got[x] === undefined || got[x] !== ordlock[x]);
if (wrong.length) { console.log('wrong: ' + wrong.join(' ')); process.exit(1); }
console.log(Object.keys(got).length);
EOF
out=$(node named.mjs 2>&1)
point $? "ES module: import { Owner, key, REASONS, cancelSignal, version, ... } (all $count names): the same values" "$out"
out=$(node --input-type=module -e "import { Owner } from 'ordlock'; console.log(typeof Owner)" 2>&1)
[[ $out == function ]]
point $? "the issue's line: node --input-type=module -e \"import { Owner } from 'ordlock'\"" "$out"

cat >star.mjs <<'EOF'
import * as ns from 'ordlock';
import ordlock from 'ordlock';
const lost = Object.keys(ordlock).filter((x) => !(x in ns));
if (lost.length) { console.log('not in the namespace: ' + lost.join(' ')); process.exit(1); }
console.log(Object.keys(ns).length);
EOF
out=$(node star.mjs 2>&1)
point $? "ES module: import * as ns: every export of module.exports is a named export" "$out"

# TypeScript: an .mts file importing the package by name (named and
# default), compiled by tsc --strict as a TypeScript user's ES module would
# be (nodenext), then run. --skipLibCheck: Debian's tsc (4.8) predates the
# Symbol.dispose of the declarations (TypeScript 5.2)
cat >named.mts <<'EOF'
import ordlock, { Owner, key, query, isLocked, EXCLUSIVE } from 'ordlock';
const owner: typeof Owner = Owner;
const k = key('1:2');
if (typeof owner !== 'function' || k.name !== '1:2' || ordlock.Owner !== Owner ||
    typeof query !== 'function' || typeof isLocked !== 'function' || EXCLUSIVE !== 2) {
  throw new Error('a named import is not the package\'s export');
}
console.log('ok');
EOF
if command -v tsc >/dev/null 2>&1; then
	out=$(tsc --strict --skipLibCheck --module nodenext --moduleResolution nodenext \
		--target es2020 --outDir ts named.mts 2>&1 && node ts/named.mjs 2>&1)
	[[ $out == ok ]]
	point $? "TypeScript .mts: import ordlock, { Owner, key, query, ... } compiled by tsc --strict (nodenext) and run" "$out"
else
	point 1 "TypeScript .mts: no tsc (make deps installs node-typescript)"
fi

unit_done
