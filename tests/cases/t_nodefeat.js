#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0
//
// t_nodefeat: the Node.js binding's lease keep-alive and query of a key,
// against the module.
//
// - held.keepalive() keeps a 600 ms lease for 2 s while the event loop is
//   blocked (Atomics.wait: no timer of JS could renew) and another process
//   waits for the key: the waiter times out naming the holder, the token is
//   still live, nothing is lost, stop() returns null.
// - A lease left to expire (renewals every 60 s) is reported at once, by
//   the revocation and not by a renewal: 'lost' is emitted with a
//   RevokedError naming the key, ka.signal aborts with it as its reason,
//   check() throws it, stop() returns it, the token is stale.
// - A hold without a lease: keepalive() refuses (EINVAL); nothing held:
//   NotHeldError.
// - query()/isLocked()/owner.query(): free; exclusive by this pid with its
//   token; a waiter counted (its pid); shared by two owners; another
//   domain's key free.
// - tools/node/README.md's keep-alive example runs as printed.
// TAP on stdout.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const cp = require('child_process');
const { once } = require('events');

const REPO = process.env.ORDLOCK_REPO || path.resolve(__dirname, '..', '..', '..');
const PKG = path.join(REPO, 'tools', 'node');
const ordlock = require(PKG);
const TAG = `nodefeat-${process.pid}`;
const HANG = 60000; // the hang guard of every wait that must end

const { ok, done } = require(path.join(REPO, 'tests', 'lib', 'oltap.js'));
function sleepSync(ms) { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms); }
function guard(p, what) {
  let t;
  return Promise.race([p, new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`hang: ${what}`)), HANG); })])
    .finally(() => clearTimeout(t));
}
async function until(cond, what) {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > HANG) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function renewals() {
  const d = `${TAG}-1`;
  const owner = new ordlock.Owner(d);
  const held = owner.acquireSync([[5, 1]], { lease: 600 });
  const ka = held.keepalive({ interval: 100 });
  const lost = [];
  ka.on('lost', (e) => lost.push(e));
  const waiter = cp.spawn(process.execPath, ['-e', `
    const o = require(${JSON.stringify(PKG)});
    try { o.acquireSync([[5, 1]], { domain: ${JSON.stringify(d)}, timeout: 1200 }); }
    catch (e) { console.log(e.code, e.pid); }`], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  waiter.stdout.on('data', (b) => { out += b; });
  sleepSync(2000); // the loop is blocked: only the keep-alive's thread renews
  await guard(once(waiter, 'exit'), 'the waiter');
  ok(out.trim() === `ETIMEDOUT ${process.pid}`, 'keepalive: the waiter timed out on the hold, naming its holder', out);
  ok(!ka.lost && ka.error === null && !ka.signal.aborted && lost.length === 0, 'keepalive: nothing lost in 2 s of a blocked loop');
  ok(owner.tokenCheck([5, 1], held.token), 'keepalive: the token is live after three lease periods');
  ok(ka.renewals >= 3, `keepalive: renewed (${ka.renewals} times)`);
  ok(ka.stop() === null && ka.stop() === null, 'keepalive: stop() returns null (twice is once)');
  held.release();
  owner.close();
}

async function revoked() {
  const owner = new ordlock.Owner(`${TAG}-2`);
  const held = owner.acquireSync([[5, 2]], { lease: 300 });
  const ka = held.keepalive({ interval: 60000 });
  const [e] = await guard(once(ka, 'lost'), "'lost'");
  ok(e instanceof ordlock.RevokedError && e.code === 'EKEYEXPIRED' && e.reason === 'revoked' &&
     e.key && e.key.rank === 5 && e.key.id === 2, "revoked: 'lost' with a RevokedError naming the key", e && e.message);
  ok(ka.renewals === 0, 'revoked: reported at once, before any renewal was due');
  ok(ka.signal.aborted && ka.signal.reason === e, 'revoked: ka.signal aborted, the error its reason');
  ok(e.revoked.some((r) => r.key.id === 2 && String(r.token) === String(held.token)), 'revoked: the revoked keys with their tokens');
  let thrown = null;
  try { ka.check(); } catch (x) { thrown = x; }
  ok(thrown === e, 'revoked: check() throws it');
  ok(!owner.tokenCheck([5, 2], held.token), 'revoked: the token is stale');
  ok(ka.stop() === e, 'revoked: stop() returns it: never silently');
  owner.release();
  owner.acquireSync([[5, 3]]);
  let err = null;
  try { owner.keepalive(); } catch (x) { err = x; }
  ok(err instanceof ordlock.OrdlockError && err.code === 'EINVAL', 'keepalive: a hold without a lease: EINVAL', err && err.message);
  owner.release();
  err = null;
  try { owner.keepalive(); } catch (x) { err = x; }
  ok(err instanceof ordlock.NotHeldError, 'keepalive: nothing held: NotHeldError', err && err.message);
  owner.close();
}

async function query() {
  const d = `${TAG}-3`;
  const a = new ordlock.Owner(d);
  const b = new ordlock.Owner(d);
  let st = ordlock.query([6, 1], d);
  ok(st.state === 'free' && !st.locked && st.holders.length === 0 && st.waiters === 0, 'query: a free key', JSON.stringify(st));
  const h = a.acquireSync([[6, 1]]);
  st = a.query([6, 1]);
  ok(st.state === 'exclusive' && st.locked && st.holders[0] === process.pid && st.nholders === 1 &&
     String(st.token) === String(h.token), 'query: exclusive, by this pid, under its token', JSON.stringify(st));
  const p = b.acquire([[6, 1]], { timeout: HANG });
  await until(() => ordlock.query([6, 1], d).waiters === 1, 'the waiter queued');
  st = ordlock.query([6, 1], { domain: d });
  ok(st.waiterPid === process.pid && st.nholders === 1, 'query: the waiter counted, its pid');
  h.release();
  (await guard(p, 'the waiter')).release();
  a.acquireSync([[6, 2, 'shared']]);
  b.acquireSync([[6, 2, 'shared']]);
  st = ordlock.query('6:2', d);
  ok(st.state === 'shared' && st.nholders === 2 && st.holders.length === 2, 'query: shared by two owners', JSON.stringify(st));
  ok(ordlock.isLocked([6, 2], d) && !ordlock.isLocked([6, 2]), 'isLocked: in its domain, not in another');
  a.close();
  b.close();
  ok(!ordlock.isLocked([6, 2], d), 'query: free after the owners closed');
}

async function example() {
  const readme = fs.readFileSync(path.join(PKG, 'README.md'), 'utf8');
  const m = readme.match(/## Lease keep-alive[\s\S]*?```js\n([\s\S]*?)```/);
  ok(m, "README: the keep-alive example");
  if (!m) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 't_nodefeat.'));
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(PKG, path.join(dir, 'node_modules', 'ordlock'));
  fs.writeFileSync(path.join(dir, 'example.js'), m[1]);
  const r = cp.spawnSync(process.execPath, ['example.js'], { cwd: dir, encoding: 'utf8', timeout: HANG });
  fs.rmSync(dir, { recursive: true, force: true });
  ok(r.status === 0 && r.stdout === 'warehouse 3: exclusive by me\nkept: true\nheld: false\n' && r.stderr === '',
    'README: the keep-alive example runs as printed', r.stdout + r.stderr);
}

(async () => {
  try {
    await renewals();
    await revoked();
    await query();
    await example();
  } catch (e) {
    ok(false, 'no exception', e && e.stack);
  }
  done();
})();
