// SPDX-License-Identifier: LGPL-2.1-or-later
// Type declarations of the ordlock package (index.js). Times are in
// milliseconds; ids and tokens are numbers when exact (below 2^53), else
// BigInts.

export declare const SHARED: 1;
export declare const EXCLUSIVE: 2;
export declare const ENFORCE: 0;
export declare const DETECT: 1;
export declare const TIMEOUT: 2;
export declare const ACQUIRE_TRY: 1;
export declare const ACQUIRE_REORDER: 2;
export declare const RESULT_RELEASED: 1;
export declare const RANK_MAX: number;
export declare const ID_MAX: bigint;
export declare const REASONS: Readonly<Record<string, number>>;
/** The signal that interrupts a waiting thread to withdraw its request. */
export declare const cancelSignal: number;
export declare const version: string;

export type Id = number | bigint;
export type Rank = number | string;
export type Mode = 1 | 2 | 'shared' | 'sh' | 's' | 'exclusive' | 'ex' | 'x';
/** [rank, id], [rank, id, mode], {rank, id, mode?}, "rank:id" or a Key */
export type KeySpec = Key | [Rank, Id | string] | [Rank, Id | string, Mode] |
  { rank: Rank; id: Id | string; mode?: Mode } | string;
export type Policy = 'enforce' | 'detect' | 'timeout' | 0 | 1 | 2;

/** The registry of rank names: ordlock.ranks.orders = 1 */
export declare const ranks: Record<string, number>;

export declare class Key {
  constructor(rank: Rank, id: Id | string, mode?: Mode, names?: Record<string, number>);
  readonly rank: number;
  readonly id: Id;
  readonly mode: 1 | 2;
  /** "orders:10" when the rank has a name, else "1:10" */
  readonly name: string;
  toString(): string;
  toJSON(): { rank: number; id: number | string; mode: string };
}
export declare function key(spec: KeySpec, mode?: Mode, names?: Record<string, number>): Key;
export declare function shared(rank: Rank, id: Id | string, names?: Record<string, number>): Key;
export declare function exclusive(rank: Rank, id: Id | string, names?: Record<string, number>): Key;

export interface AcquireOptions {
  /** ms; undefined: the domain default; 0: do not wait; -1: the longest a request may wait */
  timeout?: number;
  /** the mode of keys given without one (default exclusive) */
  mode?: Mode;
  /** never wait: BusyError */
  nowait?: boolean;
  /** a late key that sorts below held ones: ORDLOCK_ACQUIRE_REORDER */
  reorder?: boolean;
  /** ms the hold may last without renew() */
  lease?: number;
  /** withdraws the waiting request in the kernel; rejects with AbortError */
  signal?: AbortSignal;
  /**
   * false: ask for no fencing token (Held.token is null), so that in a
   * domain with the fast path an uncontended request of exclusive keys is
   * taken without a system call (default true: a token, the kernel's grant)
   */
  token?: boolean;
}

export interface OwnerOptions {
  domain?: string;
  ranks?: Record<string, number>;
  label?: string;
  /** a descriptor of /dev/ordlock opened elsewhere */
  fd?: number;
}

export interface OwnerInfo {
  ownerId: Id;
  nheld: number;
  policy: string;
  domain: string;
  lastToken: Id;
}

export interface RevokedKey { key: Key; token: Id }

export declare class Owner {
  constructor(opts?: string | OwnerOptions);
  static fromFd(fd: number, opts?: OwnerOptions): Owner;
  ranks: Record<string, number>;
  domain: string | null;
  label: string | null;
  readonly fd: number;
  readonly closed: boolean;
  acquire(keys: KeySpec | KeySpec[], opts?: AcquireOptions): Promise<Held>;
  acquireSync(keys: KeySpec | KeySpec[], opts?: Omit<AcquireOptions, 'signal'>): Held;
  tryAcquire(keys: KeySpec | KeySpec[], opts?: AcquireOptions): Promise<Held>;
  tryAcquireSync(keys: KeySpec | KeySpec[], opts?: Omit<AcquireOptions, 'signal'>): Held;
  release(keys?: KeySpec | KeySpec[], opts?: { mode?: Mode }): void;
  convert(key: KeySpec, mode: Mode, opts?: { timeout?: number; nowait?: boolean; signal?: AbortSignal }): Promise<Id>;
  convertSync(key: KeySpec, mode: Mode, opts?: { timeout?: number; nowait?: boolean }): Id;
  renew(leaseMs?: number): number | null;
  setRevokeSignal(sig: number | string): void;
  revokedKeys(): RevokedKey[];
  tokenCheck(key: KeySpec, token: Id, domain?: string): boolean;
  info(): OwnerInfo;
  setDomain(domain: string): void;
  setLabel(label: string | null): void;
  attempts(keys: KeySpec | KeySpec[], opts?: AttemptsOptions): Attempts;
  /** a KeepAlive of this owner's lease */
  keepalive(opts?: KeepAliveOptions): KeepAlive;
  /** query() of a key in this owner's domain */
  query(key: KeySpec): KeyState;
  close(): void;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

export declare class Held {
  readonly owner: Owner;
  readonly keys: Key[];
  /** null when acquired with token: false */
  token: Id | null;
  released: boolean;
  /** held keys were let go and taken again (reorder): read again what they guard */
  reacquired: boolean;
  renew(leaseMs?: number): number | null;
  convert(key: KeySpec, mode: Mode, opts?: { timeout?: number; nowait?: boolean }): Promise<Id>;
  /** owner.keepalive() of the owner that holds these keys */
  keepalive(opts?: KeepAliveOptions): KeepAlive;
  release(): void;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface AttemptsOptions extends AcquireOptions {
  /** attempts in all (8) */
  attempts?: number;
  /** ms for the whole, backoffs included */
  total?: number;
  /** the first backoff ceiling, ms (10) */
  base?: number;
  /** the largest backoff ceiling, ms (1000) */
  cap?: number;
  /** the random source of the jitter, in [0, 1) (Math.random) */
  random?: () => number;
}

export declare class Attempt {
  readonly number: number;
  readonly held: Held;
  readonly token: Id;
  error: unknown;
  fail(e: unknown): void;
  retry(): void;
}

export declare class Attempts implements AsyncIterable<Attempt> {
  constructor(owner: Owner, keys: KeySpec | KeySpec[], opts?: AttemptsOptions);
  attempts: number;
  backoff(n: number): number;
  [Symbol.asyncIterator](): AsyncGenerator<Attempt, void, undefined>;
}

export interface RetryingOptions extends AttemptsOptions {
  keys: KeySpec | KeySpec[];
  owner?: Owner;
  domain?: string;
  ranks?: Record<string, number>;
  label?: string;
}

export declare function acquire(keys: KeySpec | KeySpec[], opts?: AcquireOptions & OwnerOptions): Promise<Held>;
export declare function acquireSync(keys: KeySpec | KeySpec[], opts?: Omit<AcquireOptions, 'signal'> & OwnerOptions): Held;
export declare function retrying<T>(fn: (held: Held, attempt: Attempt) => T | Promise<T>, opts: RetryingOptions): Promise<T>;
export declare function retryable(e: unknown): boolean;

export interface DomainConfig {
  policy: string;
  detectDelayMs: number;
  nowners: number;
  maxHoldMs: number;
  strict: boolean;
  cluster: boolean;
}
export declare function domainConfig(domain: string): DomainConfig;
export declare function setPolicy(domain: string, policy: Policy, detectDelayMs?: number): void;
export declare function setStrict(domain: string, strict?: boolean): void;
export declare function setMaxHold(domain: string, maxHoldMs: number): void;
export declare function resetOrder(domain: string): void;
export declare function tokenCheck(key: KeySpec, token: Id, domain?: string, names?: Record<string, number>): boolean;

export interface OrderKey { rank: number; id: Id; mode: string; key: string }
export interface OrderEdge {
  from: string; to: string; fromRank: number; toRank: number;
  kind: 'ranks' | 'ascending' | 'descending' | number;
  count: Id; inverted: boolean; reported: boolean;
  first: { ownerId: Id; pid: number; uid: number; comm: string; label: string; held: OrderKey; taken: OrderKey; timeNs: Id };
}
export interface LearnedOrder {
  learning: boolean; nranks: number; maxEdges: number; npotential: Id; dropped: Id;
  edges: OrderEdge[];
  potential: { kind: 'cycle' | 'ids' | number; edges: number[]; labels: string[] }[];
}
export declare function learnedOrder(domain: string, names?: Record<string, number>): LearnedOrder;

export declare function reasonName(reason: number): string;
export declare function modeName(mode: number): string;
export declare function policyName(policy: number): string;

export interface CycleStep {
  readonly ownerId: Id;
  readonly pid: number;
  readonly comm: string;
  readonly edge: 'hard' | 'soft' | 'thread' | '?';
  readonly key: Key;
  readonly blockerMode: number;
  readonly otherDomain: boolean;
}

export declare class OrdlockError extends Error {
  constructor(message: string, record?: object);
  /** 'ETIMEDOUT', 'EDEADLK', ... ('ABORT_ERR' for AbortError) */
  code: string;
  /** the positive errno */
  errno: number;
  /** 'order', 'timeout', 'deadlock', ... */
  reason: string;
  reasonCode: number;
  key: Key | null;
  held: Key | null;
  pid: number;
  index: number;
  holderMode: number;
  cycleLen: number;
  cycle: CycleStep[];
  revoked: RevokedKey[];
  letGo: boolean;
}
export declare class OrderViolationError extends OrdlockError {}
export declare class StrictRanksError extends OrderViolationError {}
export declare class TimeoutError extends OrdlockError {}
export declare class BusyError extends OrdlockError {}
export declare class DeadlockError extends OrdlockError {}
export declare class UpgradeDeadlockError extends DeadlockError {}
export declare class InterruptedError extends OrdlockError {}
export declare class LimitReachedError extends OrdlockError {}
export declare class NotHeldError extends OrdlockError {}
export declare class RevokedError extends OrdlockError {}
export declare class PermissionDeniedError extends OrdlockError {}
export declare class DeviceMissingError extends OrdlockError {}
export declare class AbortError extends OrdlockError {
  constructor(message: string, record?: object, cause?: unknown);
}

// ---- lease keep-alive and the query of a key --------------------------------

export interface KeepAliveOptions {
  /** the lease period, ms (default: the one the holds have) */
  lease?: number;
  /** ms between renewals (default: a third of the lease period) */
  interval?: number;
}

/** A lease renewed on a thread of libordlock's until stop(); a lost hold is reported at once. */
export declare class KeepAlive {
  readonly owner: Owner;
  /** the error that lost the hold (RevokedError, NotHeldError...), or null */
  readonly error: OrdlockError | null;
  /** aborted, with .error as its reason, when the hold is lost */
  readonly signal: AbortSignal;
  readonly lost: boolean;
  readonly renewals: number;
  /** throws .error if the hold was lost */
  check(): void;
  /** ends the renewals; returns .error (null when the hold was kept to the end) */
  stop(): OrdlockError | null;
  on(event: 'lost', listener: (error: OrdlockError) => void): this;
  once(event: 'lost', listener: (error: OrdlockError) => void): this;
  off(event: 'lost', listener: (error: OrdlockError) => void): this;
  [Symbol.dispose](): void;
}

export interface KeyState {
  readonly key: Key;
  readonly state: 'free' | 'shared' | 'exclusive';
  readonly locked: boolean;
  /** the holders' pids (the first 8) */
  readonly holders: number[];
  readonly nholders: number;
  readonly waiters: number;
  readonly waiterPid: number;
  /** the first holder's token; 0 when free or held by the fast path */
  readonly token: Id;
}

export interface QueryOptions {
  domain?: string;
  ranks?: Record<string, number>;
}

export declare function query(key: KeySpec, opts?: string | QueryOptions): KeyState;
export declare function isLocked(key: KeySpec, opts?: string | QueryOptions): boolean;
