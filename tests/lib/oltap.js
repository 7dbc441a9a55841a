// SPDX-License-Identifier: GPL-2.0
//
// oltap.js -- TAP for the Node.js tests (tests/cases/*.js, the JS of
// tests/unit/t_node_api.sh), as tap.c is for C and oltap.py for Python:
// ok(cond, what, diag) prints one point ("# " lines of diag when it fails);
// done() prints the plan and ends the process, 0 when every point passed.
'use strict';

let n = 0;
let failed = 0;

function ok(c, what, diag) {
  n++;
  if (!c) failed++;
  console.log(`${c ? '' : 'not '}ok ${n} - ${what}`);
  if (!c && diag !== undefined && diag !== '') console.log(`# ${String(diag).split('\n').join('\n# ')}`);
  return !!c;
}

function done() {
  console.log(`1..${n}`);
  process.exit(failed ? 1 : 0);
}

module.exports = { ok, done };
