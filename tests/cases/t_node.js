#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0
//
// t_node: the Node.js binding (tools/node: the addon ordlock.node and
// index.js) against the module. Source 000's transfer, acquireWithTimeout
// and acquireMultipleLocks ported; source 003's two warehouses as Worker
// threads and as processes, 1000 + 1000 opposite transfers with exact
// totals, and the audit that locks in the wrong order refused; a deadlock
// of a detect domain rejected with its cycle; a SIGKILLed holder's keys
// granted to the waiter; the event loop runs while a lock is awaited; an
// AbortSignal withdraws the wait in the kernel (ordlockctl no longer lists
// the waiter); errors, sync calls, leases, tokens, labels, the learned
// order, the retry helpers; token: false in a fast-path domain; npm pack,
// npm install into a fresh directory,
// and the README's example run there as printed. TAP on stdout.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const cp = require('child_process');
const { Worker, isMainThread, workerData, parentPort } = require('worker_threads');

const REPO = process.env.ORDLOCK_REPO || path.resolve(__dirname, '..', '..', '..');
const PKG = path.join(REPO, 'tools', 'node');
const CTL = path.join(REPO, 'tools', 'ordlockctl', 'ordlockctl');
const ordlock = require(PKG);

const TAG = `node-${process.pid}`;
const WH = 1; // the rank of warehouses
const SOFIA = 1;
const PLOVDIV = 2;

// ---- the roles of the child processes and workers ----------------------------
async function transfers(domain, job, n, stock, sync) {
  // source 003: "transfer(source, target, qty)", 1000 times, both keys in
  // one request, in the direction's order (the kernel sorts them); the
  // stock is read, then written (async: a turn of the event loop in
  // between), so that only the lock keeps the totals exact
  const [source, target, qty] = job;
  const owner = new ordlock.Owner(domain);
  for (let i = 0; i < n; i++) {
    const keys = [[WH, source], [WH, target]];
    const held = sync ? owner.acquireSync(keys, { timeout: 60000 }) : await owner.acquire(keys, { timeout: 60000 });
    try {
      const s = stock.get(source);
      const t = stock.get(target);
      if (!sync && i % 8 === 0) await new Promise(setImmediate);
      stock.set(source, s - qty);
      stock.set(target, t + qty);
    } finally {
      held.release();
    }
  }
  owner.close();
}

function fileStock(file) {
  const fd = fs.openSync(file, 'r+');
  const b = Buffer.alloc(4);
  return {
    get(w) { fs.readSync(fd, b, 0, 4, 4 * (w - 1)); return b.readInt32LE(0); },
    set(w, v) { b.writeInt32LE(v, 0); fs.writeSync(fd, b, 0, 4, 4 * (w - 1)); },
  };
}

if (!isMainThread) {
  const d = workerData;
  (async () => {
    if (d.role === 'warehouse') {
      const cells = d.cells;
      await transfers(d.domain, d.job, d.n, {
        get: (w) => cells[w - 1], set: (w, v) => { cells[w - 1] = v; },
      }, d.sync);
      parentPort.postMessage({ done: true });
    } else if (d.role === 'wait') {
      // wait for a key the main thread holds, until terminated
      const owner = new ordlock.Owner(d.domain);
      await owner.acquire([[WH, d.id]], { timeout: 120000 });
      parentPort.postMessage({ granted: true });
    } else if (d.role === 'audit') {
      // the nightly audit of source 003, locking Plovdiv first
      const owner = new ordlock.Owner(d.domain);
      const held = owner.acquireSync([[WH, PLOVDIV]]);
      try {
        owner.acquireSync([[WH, SOFIA]]);
        parentPort.postMessage({ refused: false });
      } catch (e) {
        parentPort.postMessage({ refused: e instanceof ordlock.OrderViolationError, code: e.code,
          key: e.key && e.key.name, held: e.held && e.held.name, message: e.message });
      }
      held.release();
      owner.close();
    }
  })().catch((e) => { parentPort.postMessage({ error: String(e && e.stack) }); });
  return;
}

if (process.argv[2] === 'warehouse-proc') {
  const [, , , domain, file, s, t, q, n] = process.argv;
  transfers(domain, [+s, +t, +q], +n, fileStock(file), true).then(() => process.exit(0),
    (e) => { console.error(e); process.exit(1); });
  return;
}

if (process.argv[2] === 'hold') {
  // hold a key and say so; wait to be killed
  const owner = new ordlock.Owner(process.argv[3]);
  const held = owner.acquireSync([[WH, +process.argv[4]]]);
  process.stdout.write(`held ${held.token}\n`);
  setInterval(() => {}, 1000);
  return;
}

// ---- TAP --------------------------------------------------------------------
let n = 0;
let failed = 0;
function ok(cond, name, diag) {
  n++;
  if (!cond) failed++;
  console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${name}`);
  if (!cond && diag !== undefined) console.log(`# ${String(diag).split('\n').join('\n# ')}`);
  return !!cond;
}
async function rejects(p, cls, name) {
  try {
    const v = await p;
    ok(false, name, `resolved with ${JSON.stringify(v && v.token)}`);
    return null;
  } catch (e) {
    ok(e instanceof cls, name, e && e.stack);
    return e;
  }
}
const T0 = Date.now();
let lastMark = T0;
function mark(what) {
  const now = Date.now();
  console.log(`# ${what}: ${((now - lastMark) / 1000).toFixed(1)} s`);
  lastMark = now;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// until(cond): poll a condition, bounded (a hang guard, not a timing)
async function until(cond, what, limitMs = 60000) {
  const end = Date.now() + limitMs;
  while (Date.now() < end) {
    if (await cond()) return true;
    await sleep(20);
  }
  console.log(`# gave up waiting for ${what}`);
  return false;
}

function locks(domain) {
  const r = cp.spawnSync(CTL, ['locks', '-j', '-d', domain], { encoding: 'utf8' });
  try {
    return JSON.parse(r.stdout).locks || [];
  } catch (e) {
    return [];
  }
}
const waiters = (domain, id) => locks(domain).filter((l) => l.role === 'waiter' && l.pid === process.pid &&
  (id === undefined || (l.rank === WH && l.id === id)));

async function main() {
  const D = `${TAG}-shop`;
  const anchor = new ordlock.Owner(D); // keeps the domain's token counter
  if (process.env.T_NODE_BENCH === '1') {
    const o = new ordlock.Owner(D);
    mark('start');
    for (let i = 0; i < 200; i++) o.acquireSync([[9, 1]]).release();
    mark('200 sync');
    for (let i = 0; i < 200; i++) (await o.acquire([[9, 1]])).release();
    mark('200 async');
    for (let i = 0; i < 200; i++) await new Promise(setImmediate);
    mark('200 setImmediate');
    o.close();
  }

  // ---- basics, errors, sync ------------------------------------------------------
  {
    const owner = new ordlock.Owner(D);
    const held = await owner.acquire([[WH, 2], [WH, 1, 'shared']], { timeout: 5000 });
    ok(held.token > 0 && held.keys.length === 2 && held.keys[1].mode === ordlock.SHARED,
      `acquire resolves with the grant: token ${held.token}, keys, modes`);
    const other = new ordlock.Owner(D);
    let e = null;
    try { other.tryAcquireSync([[WH, 2]]); } catch (x) { e = x; }
    ok(e instanceof ordlock.BusyError && e.code === 'EAGAIN' && e.errno === os.constants.errno.EAGAIN &&
      e.reason === 'busy' && e.pid === process.pid && e.key.rank === WH && e.key.id === 2 &&
      e.holderMode === ordlock.EXCLUSIVE && e instanceof Error,
      'tryAcquireSync: BusyError, code EAGAIN, reason, key, holder pid and mode', e && e.stack);
    ok(e && e.message === `busy: exclusive 1:2 held (exclusive) by pid ${process.pid}` ||
      (e && /1:2.*pid \d+/.test(e.message)), `the message is libordlock's: "${e && e.message}"`);
    const t0 = await rejects(other.acquire([[WH, 1]], { timeout: 150 }), ordlock.TimeoutError,
      'acquire with a timeout rejects with TimeoutError');
    ok(t0 && t0.code === 'ETIMEDOUT' && t0.reason === 'timeout' && t0.pid === process.pid &&
      /timed out waiting for exclusive 1:1 held \(shared\) by pid/.test(t0.message),
    'TimeoutError: code ETIMEDOUT, the holder pid, the message as the C library prints it', t0 && t0.message);
    e = null;
    try { owner.acquireSync([[WH, 0]]); } catch (x) { e = x; }
    ok(e instanceof ordlock.OrderViolationError && e.code === 'EDEADLK' && e.reason === 'order' &&
      e.key.id === 0 && e.held && e.held.rank === WH,
    'a key at or below a held one: OrderViolationError naming both keys', e && e.stack);
    const p = owner.acquire([[WH, 3]]);
    e = null;
    try { owner.release(); } catch (x) { e = x; }
    ok(e && /request in progress/.test(e.message), 'one request at a time per owner: EBUSY while one is pending', e);
    await p;
    owner.release([[WH, 3]]);
    e = null;
    try { owner.release([[WH, 3]]); } catch (x) { e = x; }
    ok(e instanceof ordlock.NotHeldError && e.code === 'ENOENT', 'release of a key not held: NotHeldError', e && e.stack);
    const info = owner.info();
    ok(info.nheld === 2 && info.domain === D && info.policy === 'enforce', 'info(): nheld, domain, policy', JSON.stringify(info));
    ok(owner.tokenCheck([WH, 2], held.token) && !owner.tokenCheck([WH, 2], held.token - 1),
      'tokenCheck: the live token true, an older one false');
    held.release();
    ok(!owner.tokenCheck([WH, 2], held.token), 'tokenCheck after the release: stale');
    // convert: upgrade a shared key, downgrade it
    const h2 = owner.acquireSync([[WH, 5, 'shared']]);
    const t1 = await owner.convert([WH, 5], 'exclusive', { timeout: 1000 });
    const t2 = owner.convertSync([WH, 5], 'shared');
    ok(t1 > h2.token && t2 >= t1, 'convert up (async) and down (sync): tokens', `${h2.token} ${t1} ${t2}`);
    h2.release();
    // using / Symbol.dispose
    if (Symbol.dispose) {
      const h3 = owner.acquireSync([[WH, 6]]);
      h3[Symbol.dispose]();
      ok(h3.released && owner.info().nheld === 0, 'Held[Symbol.dispose]() releases');
    } else {
      ok(true, '# SKIP no Symbol.dispose in this node');
    }
    // reorder: a late key below a held one
    const h4 = owner.acquireSync([[WH, 20]]);
    const h5 = owner.acquireSync([[WH, 10]], { reorder: true });
    ok(h5.token > h4.token && owner.info().nheld === 2, 'acquire({reorder: true}) takes a key below a held one');
    owner.release();
    // labels, leases, renew
    owner.setLabel('transfer');
    ok(owner.label === 'transfer', 'setLabel');
    const h6 = owner.acquireSync([[WH, 7]], { lease: 60000 });
    const left = owner.renew(60000);
    ok(left > 0 && left <= 60000, `renew: ${left} ms left of the lease`);
    h6.release();
    e = null;
    try { owner.setLabel('bad label!'); } catch (x) { e = x; }
    ok(e instanceof ordlock.OrdlockError && e.code === 'EINVAL', 'a bad label: EINVAL', e && e.stack);
    // a lease that runs out: the kernel revokes, renew() says so
    const h8 = owner.acquireSync([[WH, 9]], { lease: 50 });
    await until(() => owner.info().nheld === 0, 'the revocation');
    e = null;
    try { owner.renew(); } catch (x) { e = x; }
    ok(e instanceof ordlock.RevokedError && e.code === 'EKEYEXPIRED' && e.revoked.length === 1 &&
      e.revoked[0].key.id === 9 && e.revoked[0].token === h8.token,
    'an expired lease: renew() throws RevokedError listing the key and its token',
    `${e && e.stack}\nrevoked ${JSON.stringify(e && e.revoked, (k, v) => (typeof v === 'bigint' ? String(v) : v))} token ${h8.token}`);
    owner.release();
    ok(owner.acquireSync([[WH, 9]]).token > h8.token, 'after release() acknowledges, the key is taken again');
    owner.release();
    // keys: names, strings, BigInt ids
    ordlock.ranks.warehouse = WH;
    const h7 = await ordlock.acquire(['warehouse:8', { rank: 'warehouse', id: 2n ** 63n }], { domain: D });
    ok(h7.keys[0].name === 'warehouse:8' && h7.keys[1].id === 2n ** 63n, 'keys by rank name, "rank:id", BigInt ids');
    h7.release();
    ok(h7.owner.closed, 'ordlock.acquire(): release() closes the owner it opened');
    other.close();
    owner.close();
    e = null;
    try { owner.info(); } catch (x) { e = x; }
    ok(e && e.code === 'EBADF', 'a closed owner: EBADF');
  }

  mark('before: source 000');
  // ---- source 000: transfer, acquireWithTimeout, acquireMultipleLocks --------------
  {
    const ACCOUNT = 3;
    const balance = { 1: 1000, 2: 1000, 3: 1000 };
    // 1. consistent ordering: one all-or-nothing request, any order given
    async function transfer(owner, from, to, amount) {
      const held = await owner.acquire([[ACCOUNT, from], [ACCOUNT, to]], { timeout: 30000 });
      try {
        const a = balance[from];
        const b = balance[to];
        await new Promise(setImmediate);
        balance[from] = a - amount;
        balance[to] = b + amount;
      } finally {
        held.release();
      }
    }
    const owners = [1, 2, 3].map(() => new ordlock.Owner(D));
    await Promise.all([
      (async () => { for (let i = 0; i < 50; i++) await transfer(owners[0], 1, 2, 5); })(),
      (async () => { for (let i = 0; i < 50; i++) await transfer(owners[1], 2, 3, 5); })(),
      (async () => { for (let i = 0; i < 50; i++) await transfer(owners[2], 3, 1, 5); })(),
    ]);
    ok(balance[1] === 1000 && balance[2] === 1000 && balance[3] === 1000,
      'source 000 transfer(): three async tasks in a ring, 50 each, balances exact', JSON.stringify(balance));
    // 2. acquireWithTimeout: the kernel's timeout instead of polling
    async function acquireWithTimeout(owner, id, timeoutMs) {
      try {
        return await owner.acquire([[ACCOUNT, id]], { timeout: timeoutMs });
      } catch (e) {
        if (e instanceof ordlock.TimeoutError) return null;
        throw e;
      }
    }
    const holder = owners[0].acquireSync([[ACCOUNT, 1]]);
    ok(await acquireWithTimeout(owners[1], 1, 100) === null, 'acquireWithTimeout: null after the timeout');
    setTimeout(() => holder.release(), 50);
    const got = await acquireWithTimeout(owners[1], 1, 30000);
    ok(got && got.token > holder.token, 'acquireWithTimeout: granted once the holder lets go');
    got.release();
    // 3. acquireMultipleLocks: all or nothing, retried with full jitter
    const blocker = owners[2].acquireSync([[ACCOUNT, 2]]);
    let tries = 0;
    const res = await ordlock.retrying(async (held, attempt) => {
      tries = attempt.number;
      return held.keys.length;
    }, { owner: owners[0], keys: [[ACCOUNT, 3], [ACCOUNT, 1], [ACCOUNT, 2]], nowait: true, attempts: 200, base: 2, cap: 20,
      // the backoff after the first failure lets the blocker go
      random: () => { if (!blocker.released) blocker.release(); return Math.random(); } });
    ok(res === 3 && tries === 2 && owners[0].info().nheld === 0,
      `acquireMultipleLocks: retrying() with nowait, granted on attempt ${tries}, released after`);
    // retry only what ordlock raised
    let calls = 0;
    const sock = Object.assign(new Error('socket timed out'), { code: 'ETIMEDOUT', errno: 110 });
    await rejects(ordlock.retrying(async () => { calls++; throw sock; }, { owner: owners[0], keys: [[ACCOUNT, 1]] }),
      Error, 'retrying: an ETIMEDOUT of unrelated code propagates');
    ok(calls === 1, 'retrying: ... and is not retried');
    // the async iterator of attempts
    let k = 0;
    for await (const attempt of owners[0].attempts([[ACCOUNT, 1]], { base: 1, cap: 2 })) {
      k = attempt.number;
      if (attempt.number < 3) attempt.fail(new ordlock.BusyError('try again', { errno: os.constants.errno.EAGAIN, reason: 4 }));
    }
    ok(k === 3 && owners[0].info().nheld === 0, 'for await (attempt of owner.attempts()): retried twice, released');
    owners.forEach((o) => o.close());
  }

  mark('before: the event loop runs');
  // ---- the event loop runs while a lock is awaited; AbortSignal ------------------
  {
    const holder = new ordlock.Owner(D);
    const waiter = new ordlock.Owner(D);
    const h = holder.acquireSync([[WH, 40]]);
    let ticks = 0;
    const tm = setInterval(() => { ticks++; if (ticks === 5) h.release(); }, 10);
    const g = await waiter.acquire([[WH, 40]], { timeout: 60000 });
    clearInterval(tm);
    ok(ticks >= 5 && g.token > h.token, `a timer fired ${ticks} times while acquire() waited; it released the key`);
    g.release();

    const h2 = holder.acquireSync([[WH, 41]]);
    const ac = new AbortController();
    const p = waiter.acquire([[WH, 41]], { timeout: 60000, signal: ac.signal });
    const listed = await until(() => waiters(D, 41).length === 1, 'the waiter in ordlockctl locks');
    ok(listed, 'ordlockctl locks lists the pending acquire as a waiter');
    ac.abort(new Error('user gave up'));
    const e = await rejects(p, ordlock.AbortError, 'abort(): acquire rejects with AbortError');
    ok(e && e.code === 'ABORT_ERR' && e.cause && e.cause.message === 'user gave up', 'AbortError: code ABORT_ERR, cause');
    ok(waiters(D, 41).length === 0, 'after abort() the kernel lists no waiter any more');
    h2.release();
    const third = new ordlock.Owner(D);
    let e2 = null;
    try { third.tryAcquireSync([[WH, 41]]).release(); } catch (x) { e2 = x; }
    ok(e2 === null, 'the released key is free: the withdrawn request was not granted it', e2);
    ok(waiter.acquireSync([[WH, 41]], { timeout: 1000 }).token > 0, 'the owner works after an abort');
    waiter.release();
    // close() while a request waits: withdrawn, rejects
    const h3 = holder.acquireSync([[WH, 42]]);
    const p3 = waiter.acquire([[WH, 42]], { timeout: 60000 });
    await until(() => waiters(D, 42).length === 1, 'the waiter');
    waiter.close();
    await rejects(p3, ordlock.OrdlockError, 'close() while acquire() waits: it rejects');
    ok(waiters(D, 42).length === 0, '... and the kernel lists no waiter');
    h3.release();
    holder.close();
    third.close();
  }

  mark('before: a deadlock in a detect');
  // ---- a deadlock in a detect domain ------------------------------------------
  {
    const DD = `${TAG}-detect`;
    const keep = new ordlock.Owner(DD);
    ordlock.setPolicy(DD, 'detect');
    ok(ordlock.domainConfig(DD).policy === 'detect', 'setPolicy/domainConfig: detect');
    const a = new ordlock.Owner({ domain: DD, label: 'a-to-b' });
    const b = new ordlock.Owner({ domain: DD, label: 'b-to-a' });
    a.acquireSync([[1, 1]]);
    b.acquireSync([[1, 2]]);
    const pa = a.acquire([[1, 2]], { timeout: 60000 });
    await until(() => waiters(DD).length === 1, 'a waits');
    const pb = b.acquire([[1, 1]], { timeout: 60000 });
    const [ra, rb] = await Promise.allSettled([pa.catch((x) => { a.release(); throw x; }),
      pb.catch((x) => { b.release(); throw x; })]);
    const rej = [ra, rb].filter((r) => r.status === 'rejected');
    const e = rej.length === 1 ? rej[0].reason : null;
    ok(e instanceof ordlock.DeadlockError && e.code === 'EDEADLK' && e.reason === 'deadlock',
      'the request that closes the cycle rejects with DeadlockError', rej.map((r) => r.reason && r.reason.stack).join('\n'));
    ok(e && e.cycle.length === 2 && e.cycle.every((s) => s.pid === process.pid && s.key.rank === 1) &&
      / waits for /.test(e.message), `DeadlockError.cycle: 2 steps; "${e && e.message}"`);
    a.close();
    b.close();
    // the learned order
    const lo = ordlock.learnedOrder(DD);
    ok(lo.edges.length >= 1 && lo.edges.some((x) => x.kind === 'ascending' || x.kind === 'descending'),
      `learnedOrder(): ${lo.edges.length} edges, ${lo.potential.length} potential`, JSON.stringify(lo, (k, v) => (typeof v === 'bigint' ? String(v) : v)).slice(0, 400));
    ordlock.resetOrder(DD);
    ok(ordlock.learnedOrder(DD).edges.length === 0, 'resetOrder() forgets it');
    keep.close();
  }

  mark('before: a killed process');
  // ---- a killed process's keys ------------------------------------------------------
  {
    const child = cp.spawn(process.execPath, [__filename, 'hold', D, '50'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise((resolve) => {
      let buf = '';
      child.stdout.on('data', (d) => { buf += d; if (buf.includes('\n')) resolve(buf); });
      child.on('exit', () => resolve(buf));
    });
    const ctoken = Number((line.match(/held (\d+)/) || [])[1]);
    const owner = new ordlock.Owner(D);
    const p = owner.acquire([[WH, 50]], { timeout: 60000 });
    await until(() => waiters(D, 50).length === 1, 'the waiter');
    child.kill('SIGKILL');
    const g = await p.catch((x) => x);
    ok(ctoken > 0 && g instanceof ordlock.Held && g.token > ctoken,
      `a child process SIGKILLed while holding: its key is granted to the waiter (${ctoken} -> ${g.token})`, g && g.stack);
    owner.close();
  }

  mark('before: source 003');
  // ---- source 003: two warehouses as Workers, and as processes ------------------------
  {
    const WD = `${TAG}-wh`;
    const keep = new ordlock.Owner(WD);
    const cells = new Int32Array(new SharedArrayBuffer(8));
    cells[SOFIA - 1] = 5000;
    cells[PLOVDIV - 1] = 3000;
    const N = 1000;
    const run = (data) => new Promise((resolve) => {
      const w = new Worker(__filename, { workerData: data });
      let msg = null;
      w.on('message', (m) => { msg = m; });
      w.on('error', (err) => { msg = { error: String(err.stack) }; });
      w.on('exit', () => resolve(msg));
    });
    const rs = await Promise.all([
      run({ role: 'warehouse', domain: WD, cells, job: [SOFIA, PLOVDIV, 2], n: N, sync: false }),
      run({ role: 'warehouse', domain: WD, cells, job: [PLOVDIV, SOFIA, 1], n: N, sync: true }),
    ]);
    mark('workers');
    ok(rs.every((m) => m && m.done), 'two Workers ran 1000 transfers each (one awaits acquire(), one calls acquireSync())',
      JSON.stringify(rs));
    ok(cells[0] === 4000 && cells[1] === 4000, `Workers: Sofia ${cells[0]}, Plovdiv ${cells[1]}, total ${cells[0] + cells[1]}`);
    // a Worker terminated while its acquire() waits: the request is withdrawn
    const hw = keep.acquireSync([[WH, 60]]);
    const w = new Worker(__filename, { workerData: { role: 'wait', domain: WD, id: 60 } });
    let wmsg = null;
    w.on('message', (m) => { wmsg = m; });
    ok(await until(() => waiters(WD, 60).length === 1, 'the Worker waiting'), "a Worker's acquire() is listed as a waiter");
    await w.terminate();
    ok(waiters(WD, 60).length === 0 && wmsg === null, 'Worker.terminate() while it waits: the kernel lists no waiter');
    hw.release();
    const audit = await run({ role: 'audit', domain: WD });
    ok(audit && audit.refused && audit.code === 'EDEADLK' && audit.key === '1:1' && audit.held === '1:2',
      'the audit locking Plovdiv, then Sofia: refused (OrderViolationError) in a Worker', JSON.stringify(audit));

    const file = path.join(os.tmpdir(), `${TAG}-stock`);
    const b = Buffer.alloc(8);
    b.writeInt32LE(5000, 0);
    b.writeInt32LE(3000, 4);
    fs.writeFileSync(file, b);
    const codes = await Promise.all([[SOFIA, PLOVDIV, 2], [PLOVDIV, SOFIA, 1]].map((j) => new Promise((resolve) => {
      const c = cp.spawn(process.execPath, [__filename, 'warehouse-proc', WD, file, ...j.map(String), String(N)],
        { stdio: 'inherit' });
      c.on('exit', (code) => resolve(code));
    })));
    const out = fs.readFileSync(file);
    ok(codes.every((c) => c === 0) && out.readInt32LE(0) === 4000 && out.readInt32LE(4) === 4000,
      `processes: Sofia ${out.readInt32LE(0)}, Plovdiv ${out.readInt32LE(4)}, total ${out.readInt32LE(0) + out.readInt32LE(4)}`,
      `exit codes ${codes}`);
    fs.unlinkSync(file);
    keep.close();
  }

  mark('before: the fast path');
  // ---- the fast path (issue 28): token: false takes a key without a system call ----
  {
    const dom = `${TAG}-fast`;
    const set = cp.spawnSync(CTL, ['domain', dom, 'set', 'fastpath', 'on', 'uid', String(process.getuid())],
      { encoding: 'utf8' });
    ok(set.status === 0, `ordlockctl: ${dom} set fastpath on`, set.stderr);
    const o = new ordlock.Owner(dom);
    o.acquireSync([[1, 5]], { token: false }).release(); // the first pins the key
    const h = o.acquireSync([[1, 5]], { token: false });
    ok(h.token === null, `acquireSync token: false: Held.token is null (${h.token})`);
    const row = locks(dom).filter((l) => l.key === '1:5');
    ok(row.length === 1 && row[0].fast_index !== null && row[0].pid === process.pid && row[0].token === null,
      'ordlockctl locks -j: held by the fast path (fast_index), this pid', JSON.stringify(row));
    h.release();
    const a = await o.acquire([[1, 6]], { token: false });
    ok(a.token === null && locks(dom).some((l) => l.key === '1:6' && l.fast_index !== null),
      'acquire (async) token: false: by the fast path too');
    a.release();
    const k = o.acquireSync([[1, 7]]);
    ok(k.token !== null && Number(k.token) > 0 &&
      locks(dom).some((l) => l.key === '1:7' && l.fast_index === null),
    `the default asks for a token (${k.token}): the kernel's grant`);
    k.release();
    o.close();
    const off = cp.spawnSync(CTL, ['domain', dom, 'set', 'fastpath', 'off'], { encoding: 'utf8' });
    ok(off.status === 0, 'fast path off at the end', off.stderr);
  }

  mark('before: npm pack');
  // ---- npm pack, npm install into a fresh directory, the README's example ----------
  {
    // tests/Makefile packed tools/node and installed the tarball into a
    // fresh directory on the host (npm under TCG takes minutes)
    const npmdir = path.join(REPO, 'tests', 'build', 'npm');
    const app = path.join(npmdir, 'app');
    const failed = path.join(npmdir, 'failed');
    const tgz = fs.existsSync(npmdir) ? fs.readdirSync(npmdir).find((f) => /^ordlock-.*\.tgz$/.test(f)) : null;
    const list = tgz ? cp.spawnSync('tar', ['tzf', path.join(npmdir, tgz)], { encoding: 'utf8' }).stdout : '';
    ok(tgz && ['index.js', 'index.d.ts', 'ordlock.node', 'package.json', 'README.md'].every((f) => list.includes(`package/${f}\n`)),
      `npm pack: ${tgz} holds index.js, index.d.ts, ordlock.node, package.json, README.md`, list);
    ok(!fs.existsSync(failed) && fs.existsSync(path.join(app, 'node_modules', 'ordlock', 'ordlock.node')),
      'npm install --offline of the tarball into a fresh directory',
      fs.existsSync(failed) ? fs.readFileSync(failed, 'utf8') : 'not installed');
    const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const m = readme.match(/## From Node\.js[\s\S]*?```js\n([\s\S]*?)```/);
    ok(m, 'the README has a JS example');
    if (m) {
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ordlock-readme-'));
      const ex = path.join(tmp, 'example.mjs');
      fs.writeFileSync(ex, m[1]);
      // an ES module resolves 'ordlock' from its own directory up: run it
      // from the installed app's node_modules through a symlink
      fs.symlinkSync(path.join(app, 'node_modules'), path.join(tmp, 'node_modules'));
      const r = cp.spawnSync(process.execPath, [ex], { cwd: tmp, encoding: 'utf8' });
      ok(r.status === 0 && /^warehouses 2 and 1 locked, token \d+$/m.test(r.stdout),
        `the README's example, run against the installed package: "${r.stdout.trim()}"`, r.stderr);
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  mark('npm');
  anchor.close();
  console.log(`1..${n}`);
  return failed ? 1 : 0;
}

main().then((code) => process.exit(code), (e) => {
  ok(false, 'no exception', e && e.stack);
  console.log(`1..${n}`);
  process.exit(1);
});
