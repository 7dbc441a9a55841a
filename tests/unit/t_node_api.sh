#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# t_node_api -- the Node.js binding (tools/node) without the module: the
# names index.d.ts declares are the ones index.js exports (and the
# methods of Owner and Held), the error classes derive as declared, and
# the arguments a C argument cannot hold are refused with RangeError or
# TypeError before any descriptor is opened (the in-VM t_node covers the
# calls that reach the kernel). Skips when node or the addon is missing.
# TAP.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here" && git rev-parse --show-toplevel 2>/dev/null) || repo=$(cd "$here/../.." && pwd)
[[ -f $repo/tools/node/index.js ]] || repo=$(cd "$here/../../.." && pwd)
if ! command -v node >/dev/null 2>&1 || [[ ! -e $repo/tools/node/ordlock.node ]]; then
	echo "1..0 # SKIP no node, or tools/node/ordlock.node not built"
	exit 0
fi

ORDLOCK_PKG=$repo/tools/node ORDLOCK_TAPJS=$repo/tests/lib/oltap.js exec node - <<'JS'
'use strict';
const fs = require('fs');
const path = require('path');
const pkg = process.env.ORDLOCK_PKG;
const ordlock = require(pkg);
const { ok, done } = require(process.env.ORDLOCK_TAPJS);
function throws(cls, fn, what) {
  try {
    fn();
    ok(false, what, 'no exception');
  } catch (e) {
    ok(e instanceof cls, `${what} (${e.message})`, e.stack);
  }
}

const dts = fs.readFileSync(path.join(pkg, 'index.d.ts'), 'utf8');
const declared = new Set([...dts.matchAll(/^export declare (?:const|function|class) (\w+)/gm)].map((m) => m[1]));
const exported = new Set(Object.keys(ordlock));
const missing = [...exported].filter((x) => !declared.has(x));
const extra = [...declared].filter((x) => !exported.has(x));
ok(missing.length === 0, 'every export of index.js is declared in index.d.ts', missing.join(' '));
ok(extra.length === 0, 'everything index.d.ts declares is exported', extra.join(' '));

function members(cls) {
  const m = dts.match(new RegExp(`export declare class ${cls}\\b[^{]*\\{([\\s\\S]*?)\\n\\}`));
  const body = m ? m[1] : '';
  return new Set([...body.matchAll(/^ {2}(?:static )?(?:readonly )?(\w+)[?(:<]/gm)].map((x) => x[1]));
}
for (const cls of ['Owner', 'Held', 'Attempt', 'Attempts', 'KeepAlive']) {
  const proto = Object.getOwnPropertyNames(ordlock[cls].prototype).filter((x) => x !== 'constructor' && !x.startsWith('_'));
  const decl = members(cls);
  const undeclared = proto.filter((x) => !decl.has(x));
  ok(undeclared.length === 0, `the methods of ${cls} are declared`, undeclared.join(' '));
}

const parents = [...dts.matchAll(/^export declare class (\w+Error) extends (\w+)/gm)];
ok(parents.length >= 13, `${parents.length} error classes declared`);
for (const [, cls, parent] of parents) {
  const C = ordlock[cls];
  const P = parent === 'Error' ? Error : ordlock[parent];
  ok(C && P && Object.getPrototypeOf(C.prototype) === P.prototype && new C('x') instanceof Error,
    `${cls} extends ${parent}`);
}

// keys and arguments, refused before anything is opened
const k = ordlock.key('1:10');
ok(k.rank === 1 && k.id === 10 && k.mode === ordlock.EXCLUSIVE, 'key("1:10")');
ok(ordlock.key([2, 2n ** 64n - 1n, 'shared']).id === 2n ** 64n - 1n, 'a 64-bit id stays a BigInt');
ordlock.ranks.orders = 1;
ok(ordlock.key({ rank: 'orders', id: '7' }).name === 'orders:7', 'rank names and decimal ids');
throws(RangeError, () => ordlock.key([2 ** 32, 1]), 'a rank past 32 bits');
throws(RangeError, () => ordlock.key([1, -1]), 'a negative id');
throws(RangeError, () => ordlock.key([1, 2n ** 64n]), 'an id past 64 bits');
throws(RangeError, () => ordlock.key([1, 2 ** 53]), 'an id Number that is not exact');
throws(RangeError, () => ordlock.key(['nosuchrank', 1]), 'an unknown rank name');
throws(RangeError, () => ordlock.key([1, 1, 'upgrade']), 'an unknown mode');
throws(TypeError, () => ordlock.key(null), 'not a key');
throws(RangeError, () => ordlock.setPolicy('x', 'paranoid'), 'an unknown policy name');
ok(ordlock.reasonName(3) === 'timeout' && ordlock.modeName(1) === 'shared' && ordlock.policyName(1) === 'detect',
  "the library's names");
const e = new ordlock.TimeoutError('t', { errno: 110, reason: 3 });
ok(e.code === 'ETIMEDOUT' && e.reason === 'timeout' && ordlock.retryable(e), 'a TimeoutError: code, reason, retryable');
const r = new ordlock.RevokedError('r', { errno: 127, reason: 15 });
ok(r.code === 'EKEYEXPIRED' && r.reason === 'revoked', `a RevokedError's code is EKEYEXPIRED (${r.code}), which os.constants.errno lacks`);
const sock = Object.assign(new Error('socket'), { code: 'ETIMEDOUT', errno: 110 });
ok(!ordlock.retryable(sock), "an ETIMEDOUT ordlock did not raise is not retryable");
ok(!ordlock.retryable(new ordlock.OrderViolationError('o', { errno: 35, reason: 2 })), 'an order violation is not retryable');
ok(ordlock.retryable(new ordlock.DeadlockError('d', { errno: 35, reason: 6, cycleLen: 2 })),
  'a deadlock victim of a cycle of 2 is retryable');
ok(!ordlock.retryable(new ordlock.DeadlockError('d', { errno: 35, reason: 6, cycleLen: 1 })),
  'a thread that waits for itself (a cycle of one step) is not retryable (issue 42)');
// issue 42, defect 6: no module: what ordlockctl says (not a bare ENOENT)
if (!fs.existsSync('/sys/module/ordlock')) {
  try {
    new ordlock.Owner('shop');
    ok(false, 'no module: new Owner() throws');
  } catch (e) {
    ok(e instanceof ordlock.DeviceMissingError &&
      e.message.includes('the ordlock module is not loaded (insmod ordlock.ko, or modprobe ordlock)'),
    `no module: DeviceMissingError says what ordlockctl says (${e.message})`);
  }
} else {
  ok(true, 'no module # SKIP the module is loaded here');
}
ok(typeof ordlock.cancelSignal === 'number' && ordlock.cancelSignal > 31, `the cancel signal is a realtime one (${ordlock.cancelSignal})`);
done();
JS
