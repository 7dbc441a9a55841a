// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * ordlock: ordered multi-resource locks for Node.js, over /dev/ordlock.
 *
 *   const ordlock = require('ordlock');
 *   const owner = new ordlock.Owner();
 *   const held = await owner.acquire([[1, 10], [2, 20]], { timeout: 5000 });
 *   try { ... } finally { held.release(); }
 *
 * The native half (ordlock.node, a Node-API addon over libordlock) does the
 * calls; this file turns keys into the kernel's structures and failures
 * into Error subclasses. See README.md.
 */
'use strict';

const fs = require('fs');
const os = require('os');
const { EventEmitter } = require('events');
const path = require('path');

function loadAddon() {
  const tried = [];
  const cands = [];
  if (process.env.ORDLOCK_NODE_ADDON) cands.push(process.env.ORDLOCK_NODE_ADDON);
  cands.push(path.join(__dirname, 'ordlock.node'));
  cands.push(path.join(__dirname, 'build', 'Release', 'ordlock.node'));
  for (const c of cands) {
    try {
      return require(c);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND' || cands.length === 1) tried.push(`${c}: ${e.message}`);
      else tried.push(`${c}: not found`);
    }
  }
  throw new Error(`ordlock: cannot load the addon ordlock.node (build it with "make -C tools node"): ${tried.join('; ')}`);
}

const native = loadAddon();

const SHARED = 1;
const EXCLUSIVE = 2;
const ENFORCE = 0;
const DETECT = 1;
const TIMEOUT = 2;
const ACQUIRE_TRY = 1;
const ACQUIRE_REORDER = 2;
// the addon's, never the kernel's: ask libordlock for no token (src/addon.c)
const NO_TOKEN = 0x80000000;
const RESULT_RELEASED = 1;
const RANK_MAX = 0xffffffff;
const ID_MAX = (1n << 64n) - 1n;
const U32_MAX = 0xffffffff;

// enum ordlock_reason
const R = {
  NONE: 0, INVALID: 1, ORDER: 2, TIMEOUT: 3, BUSY: 4, SIGNAL: 5, DEADLOCK: 6,
  UPGRADE: 7, OWNER_LIMIT: 8, RESOURCE_LIMIT: 9, NOT_HELD: 10, NOMEM: 11,
  CANCELLED: 12, USER_LIMIT: 13, STRICT: 14, REVOKED: 15, CLUSTER: 16,
};

const DOMAIN_SET = { POLICY: 1, DETECT_DELAY: 2, MAX_HOLD: 4, STRICT: 8, RESET_ORDER: 16 };
const POLICIES = { enforce: ENFORCE, detect: DETECT, timeout: TIMEOUT };
const MODES = { shared: SHARED, sh: SHARED, s: SHARED, exclusive: EXCLUSIVE, ex: EXCLUSIVE, x: EXCLUSIVE };
const ORDER_KINDS = { 1: 'ranks', 2: 'ascending', 3: 'descending' };
const POTENTIAL_KINDS = { 1: 'cycle', 2: 'ids' };

// errno number -> 'ETIMEDOUT'; Linux's numbers of those the kernel
// returns that os.constants.errno lacks (EKEYEXPIRED: a revoked lease)
const E = Object.assign({ EKEYEXPIRED: 127, ENOPKG: 65 }, os.constants.errno);
const ERRNO_NAMES = {};
for (const [name, num] of Object.entries(E)) {
  if (!(num in ERRNO_NAMES)) ERRNO_NAMES[num] = name;
}

/** The registry of rank names: ordlock.ranks.orders = 1 */
const ranks = {};

function reasonName(r) { return native.names(0, r); }
function modeName(m) { return native.names(1, m); }
function policyName(p) { return native.names(2, p); }

// ---- keys -----------------------------------------------------------------

function rankOf(rank, names) {
  if (typeof rank === 'number') {
    if (!Number.isInteger(rank) || rank < 0 || rank > RANK_MAX) {
      throw new RangeError(`ordlock: rank ${rank} is out of range (0 to ${RANK_MAX})`);
    }
    return rank;
  }
  if (typeof rank === 'string') {
    if (/^[0-9]+$/.test(rank)) return rankOf(Number(rank), names);
    if (names && Object.prototype.hasOwnProperty.call(names, rank)) return rankOf(names[rank]);
    if (Object.prototype.hasOwnProperty.call(ranks, rank)) return rankOf(ranks[rank]);
    throw new RangeError(`ordlock: unknown rank name '${rank}' (pass ranks or set ordlock.ranks['${rank}'])`);
  }
  throw new TypeError(`ordlock: a rank is a number or a name, not ${typeof rank}`);
}

function idOf(id) {
  let v;
  if (typeof id === 'bigint') v = id;
  else if (typeof id === 'number') {
    if (!Number.isSafeInteger(id)) throw new RangeError(`ordlock: id ${id} is not a safe integer (use a BigInt)`);
    v = BigInt(id);
  } else if (typeof id === 'string' && /^[0-9]+$/.test(id)) v = BigInt(id);
  else throw new TypeError(`ordlock: an id is a number, a BigInt or a decimal string, not ${typeof id}`);
  if (v < 0n || v > ID_MAX) throw new RangeError(`ordlock: id ${v} is out of range (0 to ${ID_MAX})`);
  return v;
}

function modeOf(mode) {
  if (mode === undefined || mode === null) return EXCLUSIVE;
  if (typeof mode === 'string') {
    const m = MODES[mode.toLowerCase()];
    if (m === undefined) throw new RangeError(`ordlock: unknown mode '${mode}'`);
    return m;
  }
  if (mode !== SHARED && mode !== EXCLUSIVE) throw new RangeError(`ordlock: unknown mode ${mode}`);
  return mode;
}

function nameOfRank(rank, names) {
  for (const table of [names || {}, ranks]) {
    for (const [n, v] of Object.entries(table)) if (Number(v) === rank) return n;
  }
  return null;
}

/** A key: rank, id (a Number when exact, else a BigInt), mode. */
class Key {
  constructor(rank, id, mode, names) {
    this.rank = rankOf(rank, names);
    const v = idOf(id);
    this.id = v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    this.mode = modeOf(mode);
    Object.freeze(this);
  }

  /** "orders:10" when the rank has a name, else "1:10" */
  get name() {
    const n = nameOfRank(this.rank);
    return `${n !== null ? n : this.rank}:${this.id}`;
  }

  toString() { return `${modeName(this.mode)} ${this.name}`; }

  toJSON() { return { rank: this.rank, id: typeof this.id === 'bigint' ? this.id.toString() : this.id, mode: modeName(this.mode) }; }
}

function shared(rank, id, names) { return new Key(rank, id, SHARED, names); }
function exclusive(rank, id, names) { return new Key(rank, id, EXCLUSIVE, names); }

/**
 * key(spec, mode, names): a Key of a Key, an array [rank, id] or
 * [rank, id, mode], an object {rank, id, mode}, or a string "rank:id".
 */
function key(spec, mode, names) {
  if (spec instanceof Key) return spec;
  if (typeof spec === 'string') {
    const i = spec.lastIndexOf(':');
    if (i < 0) throw new RangeError(`ordlock: a key string is RANK:ID, not '${spec}'`);
    return new Key(spec.slice(0, i), spec.slice(i + 1), mode, names);
  }
  if (Array.isArray(spec)) {
    if (spec.length === 2) return new Key(spec[0], spec[1], mode, names);
    if (spec.length === 3) return new Key(spec[0], spec[1], spec[2], names);
    throw new RangeError('ordlock: a key is [rank, id] or [rank, id, mode]');
  }
  if (spec && typeof spec === 'object' && 'rank' in spec && 'id' in spec) {
    return new Key(spec.rank, spec.id, spec.mode !== undefined ? spec.mode : mode, names);
  }
  throw new TypeError('ordlock: a key is [rank, id, mode?], {rank, id, mode?}, "rank:id" or a Key');
}

function fromNative(k) {
  if (!k) return null;
  return new Key(k.rank, k.id, k.mode === SHARED ? SHARED : EXCLUSIVE);
}

// struct ordlock_key: u64 id, u32 rank, u16 mode, u16 reserved
function pack(keys) {
  const b = Buffer.alloc(16 * keys.length);
  keys.forEach((k, i) => {
    b.writeBigUInt64LE(BigInt(k.id), 16 * i);
    b.writeUInt32LE(k.rank, 16 * i + 8);
    b.writeUInt16LE(k.mode, 16 * i + 12);
  });
  return b;
}

// ---- errors -----------------------------------------------------------------

/**
 * A failed ordlock call. code ('ETIMEDOUT'), errno (the positive number),
 * reason ('timeout'), reasonCode, key and held (Key or null), pid, index,
 * holderMode, cycleLen, cycle (steps, victim first), letGo, revoked.
 */
class OrdlockError extends Error {
  constructor(message, rec = {}) {
    super(message);
    this.name = this.constructor.name;
    this.errno = rec.errno || 0;
    this.code = ERRNO_NAMES[this.errno] || (rec.code || 'EORDLOCK');
    this.reasonCode = rec.reason || 0;
    this.reason = rec.reasonName || (rec.reason !== undefined ? reasonName(rec.reason) : 'none');
    this.key = fromNative(rec.key);
    this.held = fromNative(rec.held);
    this.pid = rec.pid || 0;
    this.index = rec.index === undefined ? -1 : (rec.index === U32_MAX ? -1 : rec.index);
    this.holderMode = rec.holderMode || 0;
    this.cycleLen = rec.cycleLen || 0;
    this.cycle = (rec.cycle || []).map((s) => Object.freeze({
      ownerId: s.ownerId, pid: s.pid, comm: s.comm, edge: s.edge,
      key: fromNative(s.key), blockerMode: s.blockerMode, otherDomain: !!(s.flags & 1),
    }));
    this.revoked = (rec.revoked || []).map((r) => ({ key: fromNative(r.key), token: r.token }));
    /** a reorder request let held keys go before it failed (from .held up) */
    this.letGo = !!((rec.resultFlags || 0) & RESULT_RELEASED);
  }
}
/** EDEADLK, reason "order": .key sorts at or below the held .held */
class OrderViolationError extends OrdlockError {}
/** EDEADLK, reason "strict": .key's rank is not above the held .held's */
class StrictRanksError extends OrderViolationError {}
/** ETIMEDOUT: waited too long for .key, held by .pid */
class TimeoutError extends OrdlockError {}
/** EAGAIN: a try found .key taken by .pid */
class BusyError extends OrdlockError {}
/** EDEADLK, reason "deadlock": this wait would have closed .cycle */
class DeadlockError extends OrdlockError {}
/** EDEADLK, reason "upgrade": .pid already waits to upgrade .key */
class UpgradeDeadlockError extends DeadlockError {}
/** EINTR: a signal interrupted the wait; nothing was taken */
class InterruptedError extends OrdlockError {}
/** ENOSPC / EDQUOT: an owner, user or the system would hold too much */
class LimitReachedError extends OrdlockError {}
/** ENOENT: release or convert of a key not held */
class NotHeldError extends OrdlockError {}
/** EKEYEXPIRED: the lease expired, the kernel revoked .revoked */
class RevokedError extends OrdlockError {}
/** EACCES / EPERM */
class PermissionDeniedError extends OrdlockError {}
/** ENOENT / ENODEV opening /dev/ordlock: the module is not loaded */
class DeviceMissingError extends OrdlockError {}
/** The AbortSignal fired: the request was withdrawn; code 'ABORT_ERR', cause: the signal's reason */
class AbortError extends OrdlockError {
  constructor(message, rec, cause) {
    super(message, rec);
    this.code = 'ABORT_ERR';
    if (cause !== undefined) this.cause = cause;
  }
}

const CLASS_BY_REASON = {
  [R.ORDER]: OrderViolationError, [R.STRICT]: StrictRanksError, [R.TIMEOUT]: TimeoutError,
  [R.BUSY]: BusyError, [R.DEADLOCK]: DeadlockError, [R.UPGRADE]: UpgradeDeadlockError,
  [R.SIGNAL]: InterruptedError, [R.OWNER_LIMIT]: LimitReachedError,
  [R.RESOURCE_LIMIT]: LimitReachedError, [R.USER_LIMIT]: LimitReachedError,
  [R.NOT_HELD]: NotHeldError, [R.REVOKED]: RevokedError,
};
const CLASS_BY_ERRNO = {
  [E.EACCES]: PermissionDeniedError, [E.EPERM]: PermissionDeniedError,
  [E.ETIMEDOUT]: TimeoutError, [E.EAGAIN]: BusyError, [E.EINTR]: InterruptedError,
  [E.EKEYEXPIRED]: RevokedError, [E.ENOSPC]: LimitReachedError, [E.EDQUOT]: LimitReachedError,
};

function errorOf(rec, names) {
  const cls = (rec.reason && CLASS_BY_REASON[rec.reason]) || CLASS_BY_ERRNO[rec.errno] || OrdlockError;
  let msg = rec.message;
  const e = new cls(msg, rec);
  // name the keys with their rank names when there are any
  const named = [e.key, e.held].filter(Boolean).map((k) => {
    const n = nameOfRank(k.rank, names);
    return n !== null ? `${n}:${k.id}` : null;
  });
  if (named.some((n) => n !== null)) {
    msg = `${msg} [${[e.key, e.held].filter(Boolean).map((k) => {
      const n = nameOfRank(k.rank, names);
      return `${n !== null ? n : k.rank}:${k.id}`;
    }).join(' vs ')}]`;
    e.message = msg;
  }
  return e;
}

// a native call that throws an Error with errno_ (open, owner_info, ...)
function plain(fn, opening) {
  try {
    return fn();
  } catch (e) {
    if (e && typeof e.errno_ === 'number') {
      let cls = CLASS_BY_ERRNO[e.errno_] || OrdlockError;
      let msg = e.message;
      if (opening && [E.ENOENT, E.ENODEV, E.ENXIO].includes(e.errno_)) {
        cls = DeviceMissingError;
        // what ordlockctl says, not a bare "No such file or directory"
        if (!fs.existsSync('/sys/module/ordlock')) {
          msg = `${msg.replace(/: [^:]*$/, '')}: /dev/ordlock: the ordlock module is not loaded (insmod ordlock.ko, or modprobe ordlock)`;
        }
      }
      if (e.errno_ === E.EBUSY) cls = OrdlockError;
      throw new cls(msg, { errno: e.errno_ });
    }
    throw e;
  }
}

// ---- arguments ----------------------------------------------------------------

function u32(v, what) {
  if (!Number.isInteger(v) || v < 0 || v > U32_MAX) {
    throw new RangeError(`ordlock: ${what} ${v} is out of range (0 to ${U32_MAX})`);
  }
  return v;
}

/**
 * A timeout in milliseconds: undefined/null: the domain default; 0: do
 * not wait (a try); -1 or Infinity: the longest a request may wait (the
 * kernel caps every wait at max_timeout_ms: no wait is endless).
 */
function timeoutOf(timeout) {
  if (timeout === undefined || timeout === null) return [0, 0];
  if (typeof timeout !== 'number' || Number.isNaN(timeout)) throw new TypeError('ordlock: a timeout is a number of milliseconds');
  if (timeout === -1 || timeout >= U32_MAX) return [U32_MAX, 0];
  if (timeout < 0) throw new RangeError(`ordlock: timeout ${timeout} is negative`);
  if (timeout === 0) return [0, ACQUIRE_TRY];
  return [Math.max(1, Math.round(timeout)), 0];
}

function leaseOf(lease) {
  if (lease === undefined || lease === null) return 0;
  if (typeof lease !== 'number' || !(lease > 0)) throw new RangeError('ordlock: a lease is a positive number of milliseconds');
  if (lease > U32_MAX) throw new RangeError(`ordlock: a lease of ${lease} ms is above the longest, ${U32_MAX} ms`);
  return Math.max(1, Math.round(lease));
}

function tokenOf(token) {
  const t = typeof token === 'bigint' ? token : BigInt(token);
  if (t < 0n || t > ID_MAX) throw new RangeError(`ordlock: token ${token} is not a 64-bit token`);
  return t;
}

// ---- owners ---------------------------------------------------------------------

const kDispose = Symbol.dispose;
const kAsyncDispose = Symbol.asyncDispose;

/**
 * One owner: an open /dev/ordlock. Its keys are released by close(), by
 * `using`, or when the process dies. One request at a time: concurrent
 * tasks use one Owner each (a call while an acquire is pending throws
 * EBUSY).
 */
class Owner {
  /**
   * new Owner(), new Owner('domain'), new Owner({domain, ranks, label})
   */
  constructor(opts) {
    if (typeof opts === 'string') opts = { domain: opts };
    opts = opts || {};
    this.ranks = Object.assign({}, opts.ranks || {});
    this.domain = opts.domain || null;
    this._h = plain(() => (opts.fd !== undefined ? native.openFd(opts.fd) : native.open(this.domain)), true);
    this._pending = null;
    this.label = null;
    if (opts.fd !== undefined) this.domain = this.info().domain;
    if (opts.label) this.setLabel(opts.label);
  }

  /** An Owner for descriptor fd of /dev/ordlock opened elsewhere (ORDLOCK_FD of ordlockctl exec -F). */
  static fromFd(fd, opts) { return new Owner(Object.assign({}, opts || {}, { fd })); }

  _handle() {
    if (!this._h) throw new OrdlockError('ordlock: the owner is closed', { errno: E.EBADF });
    return this._h;
  }

  _keys(keys, mode) {
    if (!Array.isArray(keys)) keys = [keys];
    // a single [rank, id] array rather than a list of keys
    if (keys.length >= 2 && keys.length <= 3 && !Array.isArray(keys[0]) && typeof keys[0] !== 'object' &&
        !(typeof keys[0] === 'string' && keys[0].includes(':'))) keys = [keys];
    const m = modeOf(mode);
    const ks = keys.map((k) => key(k, m, this.ranks));
    if (!ks.length) throw new RangeError('ordlock: no keys');
    return ks;
  }

  _check(rec, what) {
    if (rec.errno) throw errorOf(rec, this.ranks);
    return rec;
  }

  _request(keys, opts) {
    opts = opts || {};
    const ks = this._keys(keys, opts.mode);
    let [ms, flags] = timeoutOf(opts.timeout);
    if (opts.nowait) flags |= ACQUIRE_TRY;
    if (opts.reorder) flags |= ACQUIRE_REORDER;
    // no token asked for: the fast path may take the keys (the addon's flag)
    if (opts.token === false) flags = (flags | NO_TOKEN) >>> 0;
    return { ks, ms, flags, lease: leaseOf(opts.lease) };
  }

  _held(rec, ks, flags) {
    const held = new Held(this, ks, flags & NO_TOKEN ? null : rec.token);
    held.reacquired = !!(rec.resultFlags & RESULT_RELEASED);
    return held;
  }

  /**
   * Take the keys all or nothing, waiting in the kernel on a thread of its
   * own (the event loop runs on). Resolves with a Held ({token, keys,
   * reacquired, release()}), rejects with an OrdlockError subclass.
   * opts: timeout (ms; undefined: the domain default; 0: do not wait; -1:
   * the longest), mode (of array keys), nowait, reorder, lease (ms),
   * signal (an AbortSignal: withdraws the request in the kernel and
   * rejects with AbortError).
   */
  acquire(keys, opts) {
    return this._async(0, keys, opts || {}, (rec, ks, flags) => this._held(rec, ks, flags));
  }

  _async(op, keys, opts, done) {
    return new Promise((resolve, reject) => {
      const { signal } = opts;
      let r;
      if (op === 0) r = this._request(keys, opts);
      else r = this._convertArgs(keys, opts.mode, opts);
      if (signal && signal.aborted) {
        reject(new AbortError('acquire: aborted', { errno: E.EINTR }, signal.reason));
        return;
      }
      const h = this._handle();
      let onAbort = null;
      let req;
      const cb = (rec) => {
        this._pending = null;
        if (signal && onAbort) signal.removeEventListener('abort', onAbort);
        if (rec.cancelled && signal && signal.aborted) {
          reject(new AbortError(`${op ? 'convert' : 'acquire'}: aborted; the request was withdrawn`, rec, signal.reason));
        } else if (rec.cancelled && !this._h) {
          reject(new OrdlockError(`${op ? 'convert' : 'acquire'}: the owner was closed`, { errno: E.EBADF }));
        } else if (rec.errno) {
          reject(errorOf(rec, this.ranks));
        } else {
          resolve(done(rec, r.ks, r.flags));
        }
      };
      req = plain(() => native.start(h, op, pack(r.ks), r.ms, r.flags, r.lease || 0, cb));
      this._pending = req;
      if (signal) {
        onAbort = () => native.cancel(h, req);
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  }

  /** acquire() that blocks the thread while it waits (for scripts, Workers). */
  acquireSync(keys, opts) {
    const r = this._request(keys, opts);
    const rec = plain(() => native.acquireSync(this._handle(), pack(r.ks), r.ms, r.flags, r.lease));
    return this._held(this._check(rec, 'acquire'), r.ks, r.flags);
  }

  /** Never waits: rejects/throws BusyError when a key is taken. */
  tryAcquire(keys, opts) { return this.acquire(keys, Object.assign({}, opts, { nowait: true })); }

  tryAcquireSync(keys, opts) { return this.acquireSync(keys, Object.assign({}, opts, { nowait: true })); }

  /** Release the given held keys (all or none: NotHeldError), or everything. */
  release(keys, opts) {
    const b = keys === undefined || keys === null ? null : pack(this._keys(keys, (opts || {}).mode));
    this._check(plain(() => native.release(this._handle(), b)), 'release');
  }

  _convertArgs(k, mode, opts) {
    const kk = key(k, EXCLUSIVE, this.ranks);
    const ks = [new Key(kk.rank, kk.id, mode)];
    let [ms, flags] = timeoutOf((opts || {}).timeout);
    if ((opts || {}).nowait) flags |= ACQUIRE_TRY;
    return { ks, ms, flags, lease: 0 };
  }

  /** Upgrade (mode 'exclusive', may wait) or downgrade a held key; resolves with the new token. */
  convert(k, mode, opts) {
    return this._async(1, k, Object.assign({}, opts || {}, { mode }), (rec) => rec.token);
  }

  convertSync(k, mode, opts) {
    const r = this._convertArgs(k, mode, opts);
    const rec = plain(() => native.convertSync(this._handle(), pack(r.ks), r.ms, r.flags));
    return this._check(rec, 'convert').token;
  }

  /** Extend the lease to now + leaseMs (or the one it has); returns the ms left, or null without a lease. */
  renew(leaseMs) {
    const rec = this._check(plain(() => native.renew(this._handle(), leaseMs === undefined || leaseMs === null ? 0 : leaseOf(leaseMs))), 'renew');
    return rec.leftMs ? rec.leftMs : null;
  }

  /** Send signal sig (a number, 0: none) to this process when the lease is revoked. */
  setRevokeSignal(sig) {
    if (typeof sig === 'string') sig = os.constants.signals[sig];
    this._check(plain(() => native.setRevokeSignal(this._handle(), sig || 0)), 'set_revoke_signal');
  }

  /** After RevokedError: [{key, token}] the kernel revoked. */
  revokedKeys() {
    return plain(() => native.revokedKeys(this._handle())).map((r) => ({ key: fromNative(r.key), token: r.token }));
  }

  /** true when token is the live grant of key k (in domain, default this owner's), false when stale. */
  tokenCheck(k, token, domain) {
    const kk = key(k, EXCLUSIVE, this.ranks);
    const rec = plain(() => native.tokenCheck(this._handle(), domain || null, kk.rank, BigInt(kk.id), tokenOf(token)));
    if (rec.errno === E.ESTALE) return false;
    this._check(rec, 'token_check');
    return true;
  }

  /** {ownerId, nheld, policy, domain, lastToken} */
  info() { return plain(() => native.ownerInfo(this._handle())); }

  /** Move to another domain; the owner must hold nothing. */
  setDomain(domain) {
    this._check(plain(() => native.setDomain(this._handle(), domain)), 'set_domain');
    this.domain = domain;
  }

  /** Name the owner's code path (up to 31 of [A-Za-z0-9._-]; '' or null removes it). */
  setLabel(label) {
    this._check(plain(() => native.setLabel(this._handle(), label || null)), 'set_label');
    this.label = label || null;
  }

  /**
   * An async iterator of attempts: each one holds the keys (attempt.held,
   * attempt.token); a retryable failure (of the acquire, or thrown by the
   * body and passed to attempt.fail(e), or left with attempt.retry()) leads
   * to the next attempt after a backoff of full jitter. See attempts().
   */
  attempts(keys, opts) { return new Attempts(this, keys, opts); }

  /** The descriptor of /dev/ordlock. */
  get fd() { return native.fd(this._handle()); }

  get closed() { return !this._h; }

  /** Release everything and close; a pending acquire is withdrawn (rejects). */
  close() {
    const h = this._h;
    if (!h) return;
    this._h = null;
    native.close(h);
  }
}
if (kDispose) Owner.prototype[kDispose] = function dispose() { this.close(); };
if (kAsyncDispose) Owner.prototype[kAsyncDispose] = async function asyncDispose() { this.close(); };

/** Keys held after a successful acquire: release() (or `using`) lets them go. */
class Held {
  constructor(owner, keys, token) {
    this.owner = owner;
    this.keys = keys;
    this.token = token;
    this.released = false;
    /** held keys were let go and taken again (reorder): read again what they guard */
    this.reacquired = false;
    this._own = false;
  }

  renew(leaseMs) { return this.owner.renew(leaseMs); }

  async convert(k, mode, opts) {
    this.token = await this.owner.convert(k, mode, opts);
    return this.token;
  }

  /** Release the keys (closing the owner acquire() opened); twice is once. */
  release() {
    if (this.released) return;
    this.released = true;
    if (this._own) {
      this.owner.close();
      return;
    }
    if (!this.owner.closed) this.owner.release(this.keys);
  }
}
if (kDispose) Held.prototype[kDispose] = function dispose() { this.release(); };
if (kAsyncDispose) Held.prototype[kAsyncDispose] = async function asyncDispose() { this.release(); };

/**
 * acquire(keys, opts): open an owner (opts.domain, opts.ranks), take the
 * keys; the Held's release() closes the owner.
 */
async function acquire(keys, opts) {
  opts = opts || {};
  const owner = new Owner({ domain: opts.domain, ranks: opts.ranks, label: opts.label });
  try {
    const held = await owner.acquire(keys, opts);
    held._own = true;
    return held;
  } catch (e) {
    owner.close();
    throw e;
  }
}

function acquireSync(keys, opts) {
  opts = opts || {};
  const owner = new Owner({ domain: opts.domain, ranks: opts.ranks, label: opts.label });
  try {
    const held = owner.acquireSync(keys, opts);
    held._own = true;
    return held;
  } catch (e) {
    owner.close();
    throw e;
  }
}

function withOwner(fn) {
  const o = new Owner();
  try {
    return fn(o);
  } finally {
    o.close();
  }
}

function policyOf(p) {
  if (typeof p === 'string') {
    if (!(p in POLICIES)) throw new RangeError(`ordlock: policy '${p}' is not one of ${Object.keys(POLICIES).join(', ')}`);
    return POLICIES[p];
  }
  return u32(p, 'policy');
}

function config(domain, flags, f) {
  return withOwner((o) => {
    const rec = plain(() => native.domainConfig(o._handle(), domain, flags, f.policy || 0, f.detectDelayMs || 0,
      f.maxHoldMs || 0, f.strict ? 1 : 0));
    if (rec.errno) throw errorOf(rec);
    return rec;
  });
}

/** The settings of a domain: {policy, detectDelayMs, nowners, maxHoldMs, strict, cluster} */
function domainConfig(domain) {
  const c = config(domain, 0, {});
  return { policy: c.policy, detectDelayMs: c.detectDelayMs, nowners: c.nowners, maxHoldMs: c.maxHoldMs,
    strict: !!c.strict, cluster: !!c.cluster };
}

/** Set a domain's policy ('enforce', 'detect', 'timeout') and detection delay (CAP_SYS_ADMIN). */
function setPolicy(domain, policy, detectDelayMs) {
  config(domain, DOMAIN_SET.POLICY | DOMAIN_SET.DETECT_DELAY,
    { policy: policyOf(policy), detectDelayMs: u32(detectDelayMs || 0, 'detectDelayMs') });
}

/** Strict ranks in a domain (CAP_SYS_ADMIN). */
function setStrict(domain, strict = true) { config(domain, DOMAIN_SET.STRICT, { strict }); }

/** A domain's max_hold_ms (0: no limit), the longest lease (CAP_SYS_ADMIN). */
function setMaxHold(domain, maxHoldMs) { config(domain, DOMAIN_SET.MAX_HOLD, { maxHoldMs: u32(maxHoldMs, 'maxHoldMs') }); }

/** Forget the lock order a domain learned (CAP_SYS_ADMIN). */
function resetOrder(domain) { config(domain, DOMAIN_SET.RESET_ORDER, {}); }

/** true when token is the live grant of key k in domain (default "default"). */
function tokenCheck(k, token, domain, names) {
  const o = new Owner({ ranks: names });
  try {
    return o.tokenCheck(k, token, domain || 'default');
  } finally {
    o.close();
  }
}

/**
 * The lock order a detect or timeout domain learned: {learning, nranks,
 * maxEdges, npotential, dropped, edges, potential}.
 */
function learnedOrder(domain, names) {
  return withOwner((o) => {
    const g = plain(() => native.getOrder(o._handle(), domain));
    if (g.errno) throw errorOf(g);
    const rn = (r) => nameOfRank(r, names) || String(r);
    const kj = (k) => ({ rank: k.rank, id: k.id, mode: modeName(k.mode), key: `${rn(k.rank)}:${k.id}` });
    const edges = g.edges.map((e) => ({
      from: rn(e.fromRank), to: rn(e.toRank), fromRank: e.fromRank, toRank: e.toRank,
      kind: ORDER_KINDS[e.kind] || e.kind, count: e.count,
      inverted: !!(e.flags & 1), reported: !!(e.flags & 2),
      first: { ownerId: e.ownerId, pid: e.pid, uid: e.uid, comm: e.comm, label: e.label,
        held: kj(e.held), taken: kj(e.taken), timeNs: e.timeNs },
    }));
    const potential = [];
    const w = g.words;
    for (let at = 0; at + 2 <= w.length;) {
      const n = w[at + 1];
      const idx = w.slice(at + 2, at + 2 + n);
      potential.push({ kind: POTENTIAL_KINDS[w[at]] || w[at], edges: idx,
        labels: idx.filter((i) => i < edges.length).map((i) => edges[i].first.label) });
      at += 2 + n;
    }
    return { learning: !!g.learning, nranks: g.nranks, maxEdges: g.maxEdges, npotential: g.npotential,
      dropped: g.dropped, edges, potential };
  });
}

// ---- retries ---------------------------------------------------------------------

/**
 * Whether retrying can fix e: a deadlock victim (DeadlockError,
 * UpgradeDeadlockError), a TimeoutError, a BusyError, a RevokedError, as
 * ordlock_retryable() says. Only errors that ordlock raised: an
 * ETIMEDOUT of a socket in the body is not retried.
 */
function retryable(e) {
  if (!(e instanceof OrdlockError) || e instanceof AbortError) return false;
  // the cycle's length: one step is a thread that waits for itself
  return native.retryable(e.errno, e.reasonCode, e.cycleLen);
}

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) { reject(signal.reason); return; }
    const t = setTimeout(() => { if (signal) signal.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(t); reject(signal.reason); };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** One attempt: number (from 1), held, token; fail(e) / retry() ask for the next. */
class Attempt {
  constructor(number, held) {
    this.number = number;
    this.held = held;
    this.token = held.token;
    this.error = null;
    this._retry = false;
  }

  /** The body failed with e: retried when retryable(e), else rethrown by the iterator. */
  fail(e) { this.error = e; }

  /** Ask for another attempt (after the backoff), e.g. a token check failed. */
  retry() { this._retry = true; }
}

/**
 * The async iterator of owner.attempts(keys, opts): attempts (8), total
 * (ms for the whole, backoffs included; each acquire's timeout is cut to
 * fit), base (10 ms), cap (1000 ms): the sleep after failed attempt n is
 * uniform in [0, min(cap, base * 2^(n-1))] (full jitter); timeout, mode,
 * nowait, reorder, signal as acquire()'s.
 *
 *   for await (const attempt of owner.attempts([[1, 10]])) {
 *     try { await work(attempt.token); } catch (e) { attempt.fail(e); }
 *   }
 * The keys are released after each attempt; the loop ends after the first
 * attempt that did not fail; the last failure is thrown when the attempts
 * or the time run out, any other failure at once.
 */
class Attempts {
  constructor(owner, keys, opts) {
    opts = opts || {};
    this.owner = owner;
    this.keys = keys;
    this.max = opts.attempts === undefined ? 8 : opts.attempts;
    this.total = opts.total;
    this.base = opts.base === undefined ? 10 : opts.base;
    this.cap = opts.cap === undefined ? 1000 : opts.cap;
    if (!(this.max >= 1) || this.base < 0 || this.cap < 0) throw new RangeError('ordlock: attempts >= 1, base and cap >= 0');
    this.opts = opts;
    this.attempts = 0;
    this.random = opts.random || Math.random;
  }

  /** The sleep after failed attempt n: full jitter. */
  backoff(n) { return this.random() * Math.min(this.cap, this.base * 2 ** (n - 1)); }

  async* [Symbol.asyncIterator]() {
    const deadline = this.total ? Date.now() + this.total : null;
    const { signal } = this.opts;
    let last = null;
    for (let n = 1; n <= this.max; n++) {
      this.attempts = n;
      let timeout = this.opts.timeout;
      if (deadline !== null && !this.opts.nowait) {
        const left = Math.max(deadline - Date.now(), 1);
        timeout = timeout === undefined || timeout === null ? left : Math.min(timeout, left);
      }
      let held = null;
      try {
        held = await this.owner.acquire(this.keys, Object.assign({}, this.opts, { timeout }));
      } catch (e) {
        if (!retryable(e)) throw e;
        last = e;
      }
      if (held) {
        const attempt = new Attempt(n, held);
        try {
          yield attempt;
        } finally {
          try {
            held.release();
          } catch (e) {
            if (!attempt.error && !attempt._retry && !retryable(e)) throw e;
            if (!attempt.error) attempt.error = e;
          }
        }
        if (attempt.error && !retryable(attempt.error)) throw attempt.error;
        if (!attempt.error && !attempt._retry) return;
        last = attempt.error || new OrdlockError('attempt asked for a retry', { errno: E.EAGAIN });
      }
      if (n === this.max) throw last;
      const pause = this.backoff(n);
      if (deadline !== null && Date.now() + pause >= deadline) throw last;
      await sleep(pause, signal);
    }
  }
}

/**
 * retrying(fn, opts): run fn(held, attempt) under opts.keys, retrying the
 * whole of it on what retrying can fix (as Attempts does: attempts, total,
 * base, cap, timeout, mode, reorder, signal); resolves with fn's value.
 * opts.owner: the Owner to use (else one is opened in opts.domain and
 * closed at the end). Only errors ordlock raised are retried.
 */
async function retrying(fn, opts) {
  opts = opts || {};
  if (!opts.keys) throw new TypeError('ordlock.retrying: opts.keys is required');
  const owner = opts.owner || new Owner({ domain: opts.domain, ranks: opts.ranks, label: opts.label });
  try {
    for await (const attempt of owner.attempts(opts.keys, opts)) {
      try {
        const value = await fn(attempt.held, attempt);
        if (!attempt.error && !attempt._retry) return value;
      } catch (e) {
        if (!retryable(e)) throw e;
        attempt.fail(e);
      }
    }
  } finally {
    if (!opts.owner) owner.close();
  }
  throw new OrdlockError('ordlock.retrying: no attempt succeeded', { errno: E.EAGAIN });
}

// ---- lease keep-alive and the query of a key ------------------------------------

/**
 * A lease kept alive (etcd's KeepAlive, redlock's extension): libordlock
 * renews the owner's lease on a thread of its own (it goes on while the
 * event loop is busy) until stop() or `using`'s end; the first renewal is
 * made at once (it throws RevokedError, NotHeldError). A hold that is lost
 * (revoked: the lease expired while the process was stopped or the owner
 * waited in another request; or nothing is held any more) is reported at
 * once, never silently: .signal (an AbortSignal) aborts with the error as
 * its reason, 'lost' is emitted with it, .error holds it, check() throws
 * it, and stop() returns it. The token is stale from then on.
 */
class KeepAlive extends EventEmitter {
  constructor(owner, opts) {
    super();
    opts = opts || {};
    this.owner = owner;
    /** the error that lost the hold, or null */
    this.error = null;
    this._ac = new AbortController();
    /** aborted, with .error as its reason, when the hold is lost */
    this.signal = this._ac.signal;
    this._renewals = 0;
    const interval = opts.interval === undefined || opts.interval === null ? 0 : u32(Math.max(1, Math.round(opts.interval)), 'interval');
    const r = native.keepaliveStart(owner._handle(), leaseOf(opts.lease), interval, (rec) => this._lost(rec));
    if (typeof r.errno === 'number') {
      if (r.errno === E.EINVAL) {
        throw new OrdlockError('keepalive: the holds have no lease (acquire with opts.lease, or the domain\'s max_hold_ms)', r);
      }
      throw errorOf(r, owner.ranks);
    }
    this._ka = r;
  }

  _lost(rec) {
    if (this.error) return;
    const e = errorOf(rec, this.owner.ranks);
    if (e instanceof RevokedError && !this.owner.closed && !this.owner._pending) {
      try { e.revoked = this.owner.revokedKeys(); } catch (_) { /* keep the record */ }
    }
    this.error = e;
    this._ac.abort(e);
    this.emit('lost', e);
  }

  /** whether the hold was lost */
  get lost() { return this.error !== null; }

  /** how many renewals succeeded */
  get renewals() { return this._ka ? native.keepalive(this._ka, false) : this._renewals; }

  /** throw .error if the hold was lost (call it before each write) */
  check() { if (this.error) throw this.error; }

  /** end the renewals (before releasing the keys); returns .error; twice is once */
  stop() {
    if (this._ka) {
      this._renewals = native.keepalive(this._ka, false);
      const ret = native.keepalive(this._ka, true);
      this._ka = null;
      // lost, and the report not yet delivered to the loop: not silently
      if (ret < 0 && !this.error) this._lost({ errno: -ret, message: `keepalive: ${ERRNO_NAMES[-ret] || `errno ${-ret}`}` });
    }
    return this.error;
  }
}
// `using ka = held.keepalive()`: its end stops it, and throws what lost the hold
if (kDispose) KeepAlive.prototype[kDispose] = function dispose() { const e = this.stop(); if (e) throw e; };

/** owner.keepalive({lease, interval}): a KeepAlive of this owner's lease (interval: ms, default a third of the period) */
Owner.prototype.keepalive = function keepalive(opts) { return new KeepAlive(this, opts); };
/** held.keepalive(opts): owner.keepalive() of the owner that holds these keys */
Held.prototype.keepalive = function keepalive(opts) { return new KeepAlive(this.owner, opts); };

/**
 * query(key, opts): the state of one key without taking it (as
 * proper-lockfile's check(), filelock's is_locked): {key, state ('free',
 * 'shared', 'exclusive'), locked, holders (pids, the first 8), nholders,
 * waiters, waiterPid, token}, from the netlink dump (no owner is opened).
 * opts: a domain name, or {domain, ranks}. The answer holds nothing.
 * Without CAP_NET_ADMIN the dump shows only one's own user's owners.
 */
function query(k, opts) {
  opts = typeof opts === 'string' ? { domain: opts } : (opts || {});
  const kk = key(k, EXCLUSIVE, opts.ranks);
  const r = plain(() => native.query(opts.domain || null, kk.rank, kk.id), true);
  const state = r.mode === SHARED ? 'shared' : r.mode === EXCLUSIVE ? 'exclusive' : 'free';
  return Object.freeze({
    key: kk, state, locked: state !== 'free', holders: r.holders, nholders: r.nholders,
    waiters: r.waiters, waiterPid: r.waiterPid, token: r.token,
  });
}

/** isLocked(key, opts): whether anyone holds the key (query(key, opts).locked) */
function isLocked(k, opts) { return query(k, opts).locked; }

/** owner.query(key): query() of key in this owner's domain, with its rank names */
Owner.prototype.query = function ownerQuery(k) {
  return query(k, { domain: this.domain || this.info().domain, ranks: this.ranks });
};

// Names only in the object below (each "name" or "name: name"): Node's
// detection of a CommonJS module's exports (cjs-module-lexer) reads it
// without running it, and stops at the first value that is not a name, so
// an ES module's "import { Owner } from 'ordlock'" sees every export only
// so (t_node_esm)
const REASONS = Object.freeze(Object.assign({}, R));
const cancelSignal = native.cancelSignal;
const version = require('./package.json').version;

module.exports = {
  SHARED, EXCLUSIVE, ENFORCE, DETECT, TIMEOUT, ACQUIRE_TRY, ACQUIRE_REORDER, RESULT_RELEASED,
  RANK_MAX, ID_MAX, REASONS,
  ranks, Key, key, shared, exclusive, Owner, Held, Attempt, Attempts,
  acquire, acquireSync, domainConfig, setPolicy, setStrict, setMaxHold, resetOrder,
  tokenCheck, learnedOrder, retryable, retrying, reasonName, modeName, policyName,
  OrdlockError, OrderViolationError, StrictRanksError, TimeoutError, BusyError, DeadlockError,
  UpgradeDeadlockError, InterruptedError, LimitReachedError, NotHeldError, RevokedError,
  PermissionDeniedError, DeviceMissingError, AbortError,
  cancelSignal,
  version,
  KeepAlive, query, isLocked,
};
