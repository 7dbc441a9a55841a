# SPDX-License-Identifier: LGPL-2.1-or-later
"""ordlock: ordered multi-resource locks from Python, over /dev/ordlock.

A thin ctypes binding of libordlock (no compiled extension)::

    import ordlock

    ordlock.ranks.update(orders=1, inventories=2)
    with ordlock.acquire(("orders", 10), ("inventories", 20), timeout=5) as held:
        ...                         # both rows are ours; held.token fences

Keys are ``(rank, id)`` or ``(rank, id, mode)`` tuples, ``Key`` objects
(``ordlock.shared(rank, id)``, ``ordlock.exclusive(rank, id)``) or strings
``"rank:id"``; a rank is an int or a name looked up in the ``ranks=`` dict
given to the call, then in the module-level registry ``ordlock.ranks``.
Tuples take the call's ``mode=`` (default exclusive). The keys go to the
kernel in the order given: the kernel sorts, merges and grants them all or
nothing.

Failures raise a subclass of ``OrdlockError`` (an ``OSError`` with
``errno``) carrying the kernel's failure record: ``OrderViolation``
(``StrictRanks`` in a domain with strict ranks), ``Timeout``, ``Busy``,
``Deadlock`` (with ``.cycle``, the steps of the cycle, victim first),
``Interrupted``, ``LimitReached``, ``NotHeld``, ``Revoked`` (the lease
expired: ``.revoked`` lists the keys and tokens).

Retrying the whole transaction on what retrying can fix (a deadlock
victim, a timeout, a busy key, a revoked lease), with exponential backoff
and full jitter, bounded in attempts and in time::

    owner = ordlock.Owner()
    for attempt in owner.attempts(("orders", 10), attempts=5, total=2.0):
        with attempt:               # the keys are held in the block
            ...                     # a retryable error here: next attempt

or the decorator, which passes the ``Held`` first::

    @ordlock.retrying(("orders", 10), attempts=5)
    def pay(held, amount):          # held.token: this attempt's token
        ...

    pay(10)

Only what ordlock raised is retried: an exception of the body's own (a
socket's ``TimeoutError`` too) propagates at once. A lease revoked
during an attempt is acknowledged and the attempt retried; a block that succeeded before its release found the revocation is done:
``Attempts.revoked`` and a ``RevokedWarning`` say that its token was stale
from the lease's deadline on.

Leases: ``acquire(..., lease=2.0)`` (seconds) bounds the hold; the owner
``renew()``s it or the kernel revokes the keys and grants them to the
waiters; ``token_check(key, token)`` is the storage side's fencing check::

    with ordlock.acquire(("orders", 10), lease=2.0) as held:
        while work():
            held.renew()
    if not ordlock.token_check(("orders", 10), token):
        refuse_the_write()

asyncio: ``AsyncOwner`` (a netlink socket: a request that must wait does
not block the event loop, and cancelling the task withdraws it in the
kernel) and ``acquire_async()``, with the exceptions above. Lease
keep-alive: ``held.keepalive()`` renews on a thread of libordlock's while
the block runs and reports a lost hold at once (``.lost``, ``.check()``,
``Revoked`` at the end of the block: never silently); for asyncio,
``async with owner.keepalive():`` of an AsyncOwner, whose revocation
interrupts the block at once, as asyncio.timeout() does. Is it held?
``query(key, domain)`` (state, holders' pids, waiters) and ``is_locked()``,
without taking the key. An example (tests/cases/t_pyfeat.py runs it)::

    import asyncio
    import ordlock

    ordlock.ranks["warehouse"] = 1

    async def restock():
        async with ordlock.AsyncOwner("shop") as owner:
            async with owner.acquire(("warehouse", 1), timeout=5) as held:
                st = ordlock.query(("warehouse", 1), domain="shop")
                print("warehouse 1:", st.state, "by", st.holders[0],
                      "token", held.token == st.token)

    asyncio.run(restock())
    with ordlock.acquire(("warehouse", 2), domain="shop", lease=0.5) as held:
        with held.keepalive() as ka:        # renewed every 1/6 s
            for step in range(4):           # 1.2 s: longer than the lease
                ka.check()                  # Revoked here if it was lost
                asyncio.run(asyncio.sleep(0.3))
        print("warehouse 2 kept:", held.owner.token_check(("warehouse", 2),
                                                          held.token))
    print("warehouse 1 held:", ordlock.is_locked(("warehouse", 1), "shop"))

The library is found through ``$ORDLOCK_LIB`` (a path), then next to this
file in the source tree (``tools/lib/libordlock.so.1``), then where
``make install`` put it, then by ``ctypes.util.find_library("ordlock")``
(the ldconfig cache), then in /usr/local/lib and /usr/lib (``make install``'s
defaults, for a copy installed by pip into a virtual environment).

Install it with ``make install``, or into a virtual environment with
``pip install tools/python`` (pyproject.toml: its own build backend, no
setuptools, no wheel, no network; the package carries the PEP 561 marker
py.typed; the library itself comes from ``make install`` or
``$ORDLOCK_LIB``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno as _errno
import functools
import os
import random
import time
import warnings
from collections import namedtuple
from typing import (Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence,
                    Tuple, Union)

__all__ = [
    "SHARED", "EXCLUSIVE", "ENFORCE", "DETECT", "TIMEOUT",
    "Key", "CycleStep", "Owner", "Held", "ranks",
    "shared", "exclusive", "key", "acquire", "try_acquire", "set_policy",
    "domain_config", "set_strict", "retryable", "retrying", "Attempt",
    "Attempts", "ACQUIRE_TRY", "ACQUIRE_REORDER", "RESULT_RELEASED",
    "set_max_hold", "token_check",
    "OrdlockError", "OrderViolation", "StrictRanks", "Timeout", "Busy", "Deadlock",
    "Revoked", "RevokedWarning",
    "UpgradeDeadlock", "Interrupted", "LimitReached", "NotHeld",
    "PermissionDenied", "DeviceMissing", "RANK_MAX", "ID_MAX",
]

__version__ = "0.1.0"

SHARED = 1
EXCLUSIVE = 2
ENFORCE = 0
DETECT = 1
TIMEOUT = 2

_POLICIES = {"enforce": ENFORCE, "detect": DETECT, "timeout": TIMEOUT}
_MODES = {"shared": SHARED, "sh": SHARED, "s": SHARED,
          "exclusive": EXCLUSIVE, "ex": EXCLUSIVE, "x": EXCLUSIVE}

# enum ordlock_reason
R_NONE, R_INVALID, R_ORDER, R_TIMEOUT, R_BUSY, R_SIGNAL, R_DEADLOCK, \
    R_UPGRADE, R_OWNER_LIMIT, R_RESOURCE_LIMIT, R_NOT_HELD, R_NOMEM, \
    R_CANCELLED, R_USER_LIMIT, R_STRICT, R_REVOKED = range(16)

ACQUIRE_TRY = 1
#: a late key that sorts below held ones: see Owner.acquire(reorder=True)
ACQUIRE_REORDER = 2
#: result flag: held keys were let go in between (read again what they guard)
RESULT_RELEASED = 1
#: the largest rank (32 bits) and id (64 bits) of a key
RANK_MAX = 2**32 - 1
ID_MAX = 2**64 - 1
DOMAIN_NAME_MAX = 32
COMM_LEN = 16
CYCLE_MAX = 64
LABEL_MAX = 32
#: ORDLOCK_DOMAIN_RESET_ORDER
_RESET_ORDER = 1 << 4
#: kinds of learned edges and of potential deadlocks
ORDER_KINDS = {1: "ranks", 2: "ascending", 3: "descending"}
POTENTIAL_KINDS = {1: "cycle", 2: "ids"}

#: the module-level registry of rank names: ``ranks["orders"] = 1``
ranks: Dict[str, int] = {}

#: a rank: its number, or a name of ``ranks=`` or ``ordlock.ranks``
Rank = Union[int, str]
#: a mode: SHARED, EXCLUSIVE or a name ("shared", "x", ...)
Mode = Union[int, str]
#: what the calls take as a key
KeySpec = Union["Key", Tuple[Rank, int], Tuple[Rank, int, Mode], str]


# --- the C structures (include/uapi/linux/ordlock.h) -----------------------
class _Key(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64), ("rank", ctypes.c_uint32),
                ("mode", ctypes.c_uint16), ("reserved", ctypes.c_uint16)]


class _Failure(ctypes.Structure):
    _fields_ = [("reason", ctypes.c_uint32), ("error", ctypes.c_uint32),
                ("pid", ctypes.c_uint32), ("index", ctypes.c_uint32),
                ("key", _Key), ("held", _Key),
                ("holder_mode", ctypes.c_uint32),
                ("cycle_len", ctypes.c_uint32)]


class _CycleStep(ctypes.Structure):
    _fields_ = [("owner_id", ctypes.c_uint64), ("pid", ctypes.c_uint32),
                ("edge", ctypes.c_uint32), ("key", _Key),
                ("blocker_mode", ctypes.c_uint32),
                ("flags", ctypes.c_uint32),  # ORDLOCK_STEP_OTHER_DOMAIN
                ("comm", ctypes.c_char * COMM_LEN)]


class _OwnerInfo(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("owner_id", ctypes.c_uint64), ("nheld", ctypes.c_uint32),
                ("policy", ctypes.c_uint32),
                ("domain", ctypes.c_char * DOMAIN_NAME_MAX),
                ("last_token", ctypes.c_uint64)]


class _DomainConfig(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("name", ctypes.c_char * DOMAIN_NAME_MAX),
                ("policy", ctypes.c_uint32),
                ("detect_delay_ms", ctypes.c_uint32),
                ("nowners", ctypes.c_uint32),
                ("max_hold_ms", ctypes.c_uint32),
                ("strict", ctypes.c_uint32), ("cluster", ctypes.c_uint32)]


class _OrderEdge(ctypes.Structure):
    _fields_ = [("from_rank", ctypes.c_uint32), ("to_rank", ctypes.c_uint32),
                ("kind", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("count", ctypes.c_uint64), ("held", _Key), ("taken", _Key),
                ("owner_id", ctypes.c_uint64), ("time_ns", ctypes.c_uint64),
                ("pid", ctypes.c_uint32), ("uid", ctypes.c_uint32),
                ("comm", ctypes.c_char * COMM_LEN),
                ("label", ctypes.c_char * LABEL_MAX)]


class _OrderGet(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("domain", ctypes.c_char * DOMAIN_NAME_MAX),
                ("edge_size", ctypes.c_uint32), ("nedges", ctypes.c_uint32),
                ("edges", ctypes.c_uint64),
                ("npotential_words", ctypes.c_uint32),
                ("reserved", ctypes.c_uint32),
                ("potentials", ctypes.c_uint64),
                ("npotential", ctypes.c_uint64), ("dropped", ctypes.c_uint64),
                ("nranks", ctypes.c_uint32), ("max_edges", ctypes.c_uint32),
                ("learning", ctypes.c_uint32), ("reserved2", ctypes.c_uint32)]


class _RevokedKey(ctypes.Structure):
    _fields_ = [("key", _Key), ("token", ctypes.c_uint64)]


DOMAIN_SET_MAX_HOLD = 1 << 2


# --- the library -------------------------------------------------------------
#: where ``make install`` put libordlock (set by the install; None in the tree)
_INSTALLED_LIBDIR: Optional[str] = None


def _candidates() -> Iterator[str]:
    env = os.environ.get("ORDLOCK_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("libordlock.so.1", "libordlock.so"):
        path = os.path.join(here, "..", "lib", name)
        if os.path.exists(path):
            yield os.path.normpath(path)
    if _INSTALLED_LIBDIR:
        path = os.path.join(_INSTALLED_LIBDIR, "libordlock.so.1")
        if os.path.exists(path):
            yield path
    found = ctypes.util.find_library("ordlock")
    if found:
        yield found
    for libdir in ("/usr/local/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu"):
        path = os.path.join(libdir, "libordlock.so.1")
        if os.path.exists(path):
            yield path
    yield "libordlock.so.1"


def _load() -> ctypes.CDLL:
    errors = []
    for cand in _candidates():
        try:
            return ctypes.CDLL(cand, use_errno=True)
        except OSError as e:
            # dlopen's message starts with the name already
            text = str(e)
            errors.append(text if text.startswith(cand + ":") else "%s: %s" % (cand, text))
    raise ImportError("ordlock: cannot load libordlock (set ORDLOCK_LIB): "
                      + "; ".join(errors))


_P = ctypes.c_void_p
_u = ctypes.c_uint
_sigs = {
    "ordlock_open": (_P, [ctypes.c_char_p]),
    "ordlock_open_fd": (_P, [ctypes.c_int]),
    "ordlock_close": (None, [_P]),
    "ordlock_detach": (None, [_P]),
    "ordlock_fd": (ctypes.c_int, [_P]),
    "ordlock_set_domain": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "ordlock_acquire": (ctypes.c_int, [_P, ctypes.POINTER(_Key), _u, _u, _u,
                                       ctypes.POINTER(ctypes.c_uint64)]),
    "ordlock_acquire_lease": (ctypes.c_int, [_P, ctypes.POINTER(_Key), _u, _u,
                                             _u, _u,
                                             ctypes.POINTER(ctypes.c_uint64)]),
    "ordlock_renew": (ctypes.c_int, [_P, _u, ctypes.POINTER(ctypes.c_uint64)]),
    "ordlock_set_revoke_signal": (ctypes.c_int, [_P, ctypes.c_int]),
    "ordlock_revoked_keys": (ctypes.c_int, [_P, ctypes.POINTER(_RevokedKey),
                                            _u]),
    "ordlock_token_check": (ctypes.c_int, [_P, ctypes.c_char_p,
                                           ctypes.c_uint32, ctypes.c_uint64,
                                           ctypes.c_uint64]),
    "ordlock_set_max_hold": (ctypes.c_int, [_P, ctypes.c_char_p, _u]),
    "ordlock_release": (ctypes.c_int, [_P, ctypes.POINTER(_Key), _u]),
    "ordlock_release_all": (ctypes.c_int, [_P]),
    "ordlock_owner_info": (ctypes.c_int, [_P, ctypes.POINTER(_OwnerInfo)]),
    "ordlock_last_failure": (ctypes.POINTER(_Failure), [_P]),
    "ordlock_reason_name": (ctypes.c_char_p, [_u]),
    "ordlock_mode_name": (ctypes.c_char_p, [_u]),
    "ordlock_strfailure": (ctypes.c_char_p, [ctypes.POINTER(_Failure),
                                             ctypes.c_char_p, ctypes.c_size_t]),
    "ordlock_convert": (ctypes.c_int, [_P, _Key, _u, _u,
                                       ctypes.POINTER(ctypes.c_uint64)]),
    "ordlock_domain_config": (ctypes.c_int, [_P, ctypes.c_char_p,
                                             ctypes.POINTER(_DomainConfig)]),
    "ordlock_set_policy": (ctypes.c_int, [_P, ctypes.c_char_p, _u, _u]),
    "ordlock_set_strict": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_int]),
    "ordlock_result_flags": (_u, [_P]),
    "ordlock_last_cycle": (ctypes.c_int, [_P, ctypes.POINTER(_CycleStep), _u]),
    "ordlock_policy_name": (ctypes.c_char_p, [_u]),
    "ordlock_strcycle": (ctypes.c_char_p, [ctypes.POINTER(_CycleStep), _u,
                                           ctypes.c_char_p, ctypes.c_size_t]),
    "ordlock_set_label": (ctypes.c_int, [_P, ctypes.c_char_p]),
    "ordlock_get_order": (ctypes.c_int, [_P, ctypes.c_char_p,
                                         ctypes.POINTER(_OrderEdge), _u,
                                         ctypes.POINTER(ctypes.c_uint32), _u,
                                         ctypes.POINTER(_OrderGet)]),
}


class _Lib:
    """libordlock, loaded on first use: ``import ordlock`` works without
    it (packaging, type checkers, --help), and the first call that needs it
    raises ImportError saying where it looked."""

    def __init__(self) -> None:
        self._cdll: Optional[ctypes.CDLL] = None

    def __getattr__(self, name: str) -> Any:
        if self._cdll is None:
            cdll = _load()
            for fname, (res, args) in _sigs.items():
                f = getattr(cdll, fname)
                f.restype = res
                f.argtypes = args
            self._cdll = cdll
        return getattr(self._cdll, name)


_lib: Any = _Lib()


def _s(b: Optional[bytes]) -> Optional[str]:
    return b.decode("utf-8", "replace") if b is not None else None


def reason_name(reason: int) -> Optional[str]:
    """"order", "timeout", ... for a reason number."""
    return _s(_lib.ordlock_reason_name(reason))


def mode_name(mode: int) -> Optional[str]:
    """"shared", "exclusive" or "none"."""
    return _s(_lib.ordlock_mode_name(mode))


def policy_name(policy: int) -> Optional[str]:
    """"enforce", "detect", "timeout" or "unknown"."""
    return _s(_lib.ordlock_policy_name(policy))


# --- keys --------------------------------------------------------------------
def _rank_of(rank: Rank, names: Optional[Mapping[str, int]] = None) -> int:
    if isinstance(rank, bool):
        raise TypeError("ordlock: a rank is an int or a name, not a bool")
    if isinstance(rank, int):
        return rank
    if isinstance(rank, str):
        if rank.isdigit():
            return int(rank)
        if names and rank in names:
            return int(names[rank])
        if rank in ranks:
            return int(ranks[rank])
        raise KeyError("ordlock: unknown rank name %r (pass ranks= or set "
                       "ordlock.ranks[%r])" % (rank, rank))
    raise TypeError("ordlock: a rank is an int or a name, not %r" % (rank,))


def _mode_of(mode: Mode) -> int:
    if isinstance(mode, str):
        try:
            return _MODES[mode.lower()]
        except KeyError:
            raise ValueError("ordlock: unknown mode %r" % mode) from None
    if mode not in (SHARED, EXCLUSIVE):
        raise ValueError("ordlock: unknown mode %r" % (mode,))
    return int(mode)


def _name_of_rank(rank: int,
                  names: Optional[Mapping[str, int]] = None) -> Optional[str]:
    for table in (names or {}, ranks):
        for name, value in table.items():
            if int(value) == rank:
                return name
    return None


def _named(k: "Key", names: Optional[Mapping[str, int]] = None) -> str:
    n = _name_of_rank(k.rank, names)
    return "%s:%d" % (n if n is not None else k.rank, k.id)


class Key(namedtuple("Key", "rank id mode")):
    """A key: rank (int, 0 to RANK_MAX), id (int, 0 to ID_MAX), mode
    (SHARED or EXCLUSIVE). A rank or id out of range raises ValueError (the
    kernel's fields are 32 and 64 bits: nothing is wrapped), one that is
    not an int TypeError."""
    __slots__ = ()
    rank: int
    id: int
    mode: int

    def __new__(cls, rank: Rank, id: Union[int, str], mode: Mode = EXCLUSIVE,
                ranks: Optional[Mapping[str, int]] = None) -> "Key":
        rank = _rank_of(rank, ranks)
        if isinstance(id, str) and id.isdigit():
            id = int(id)
        if isinstance(id, bool) or not isinstance(id, int):
            raise TypeError("ordlock: an id is an int, not %r" % (id,))
        if not 0 <= rank <= RANK_MAX:
            raise ValueError("ordlock: rank %d is out of range (0 to %d)"
                             % (rank, RANK_MAX))
        if not 0 <= id <= ID_MAX:
            raise ValueError("ordlock: id %d is out of range (0 to %d)"
                             % (id, ID_MAX))
        return super().__new__(cls, rank, id, _mode_of(mode))

    @property
    def name(self) -> str:
        """"orders:10" when the rank has a name, else "1:10"."""
        return _named(self)

    def __str__(self) -> str:
        return "%s %s" % (mode_name(self.mode), self.name)

    def _c(self) -> _Key:
        return _Key(id=self.id, rank=self.rank, mode=self.mode)


def shared(rank: Rank, id: int, ranks: Optional[Mapping[str, int]] = None) -> Key:
    """A shared key."""
    return Key(rank, id, SHARED, ranks)


def exclusive(rank: Rank, id: int,
              ranks: Optional[Mapping[str, int]] = None) -> Key:
    """An exclusive key."""
    return Key(rank, id, EXCLUSIVE, ranks)


def key(spec: KeySpec, mode: Mode = EXCLUSIVE,
        ranks: Optional[Mapping[str, int]] = None) -> Key:
    """Make a Key of a Key, a (rank, id[, mode]) tuple or "rank:id"."""
    if isinstance(spec, Key):
        return spec
    if isinstance(spec, str):
        rank, sep, ident = spec.rpartition(":")
        if not sep:
            raise ValueError("ordlock: a key string is RANK:ID, not %r" % spec)
        return Key(rank, int(ident), mode, ranks)
    spec = tuple(spec)
    if len(spec) == 2:
        return Key(spec[0], spec[1], mode, ranks)
    if len(spec) == 3:
        return Key(spec[0], spec[1], spec[2], ranks)
    raise ValueError("ordlock: a key is (rank, id) or (rank, id, mode), "
                     "not %r" % (spec,))


def _from_c(k: _Key) -> Key:
    return Key(k.rank, k.id, k.mode if k.mode in (SHARED, EXCLUSIVE)
               else EXCLUSIVE)


# --- errors ------------------------------------------------------------------
class CycleStep(namedtuple("CycleStep",
                           "owner_id pid comm edge key blocker_mode")):
    """One step of a deadlock cycle: owner pid (comm) waits for key, held
    by the next step's owner in blocker_mode (edge "hard" or "soft")."""
    __slots__ = ()
    owner_id: int
    pid: int
    comm: str
    edge: str
    key: Key
    blocker_mode: int

    def __str__(self) -> str:
        return "pid %d (%s) waits for %s" % (self.pid, self.comm, self.key)


class OrdlockError(OSError):
    """A failed ordlock call. Attributes: errno, reason (number),
    reason_name, key and held (Key or None), pid (the other owner, or 0),
    index (of the request's key), holder_mode, cycle_len, cycle (list of
    CycleStep, empty unless a deadlock), let_go (an acquire with
    reorder=True let held keys go before it failed: they are no longer
    held, from .held up)."""

    def __init__(self, err: int, message: str, failure: Optional[_Failure] = None,
                 cycle: Optional[Sequence[CycleStep]] = None) -> None:
        super().__init__(err, message)
        self.let_go = False
        f = failure
        self.reason = f.reason if f else R_NONE
        self.reason_name = reason_name(self.reason)
        self.key = _from_c(f.key) if f and f.key.rank | f.key.id else None
        self.held = _from_c(f.held) if f and f.held.rank | f.held.id else None
        self.pid = f.pid if f else 0
        self.index = f.index if f else 0
        self.holder_mode = f.holder_mode if f else 0
        self.cycle_len = f.cycle_len if f else 0
        self.cycle: List[CycleStep] = list(cycle or [])

    def __str__(self) -> str:
        return self.strerror


class OrderViolation(OrdlockError):
    """EDEADLK, reason "order": .key sorts at or below the held .held."""


class StrictRanks(OrderViolation):
    """EDEADLK, reason "strict": in a domain with strict ranks, .key is not
    of a rank above the held .held (although it may sort above it)."""


class Timeout(OrdlockError, TimeoutError):
    """ETIMEDOUT: waited too long for .key, held by .pid (or, with
    .holder_mode 0, queued behind the request of .pid)."""


class Busy(OrdlockError, BlockingIOError):
    """EAGAIN: a try-acquire found .key taken by .pid."""


class Deadlock(OrdlockError):
    """EDEADLK, reason "deadlock": this wait would have closed .cycle.

    A thread that waits for itself gets it at once too: one Owner of the
    thread holds 1:1 and a second Owner used from the same thread asks for
    it (the kernel follows a thread from the owner it holds through to the
    owner it waits through). Its .cycle has one step, the caller's own wait
    (.cycle_len 1, .cycle[0].pid this process): a bug of the program, never
    retryable (retryable(), Owner.attempts() and @retrying give up at the
    first). Use one Owner per thread for the keys one task needs together,
    or wait for such a key in another thread."""


class UpgradeDeadlock(Deadlock):
    """EDEADLK, reason "upgrade": .pid already waits to upgrade .key."""


class Interrupted(OrdlockError, InterruptedError):
    """EINTR: a signal interrupted the wait; nothing was taken."""


class LimitReached(OrdlockError):
    """ENOSPC: an owner or the system would hold too many keys; EDQUOT
    (reason "user-limit"): a per-user limit of keys or waiting requests,
    or of domains (set_domain() to a new domain)."""


class NotHeld(OrdlockError):
    """ENOENT: release or convert of a key the owner does not hold."""


class Revoked(OrdlockError):
    """EKEYEXPIRED: the owner's lease expired and the kernel revoked its
    keys (granted since to others, with higher tokens). .revoked lists
    (Key, token) pairs. Stop using what they protected; release() (all)
    acknowledges, then acquire again and re-read."""

    def __init__(self, err, message, failure=None, cycle=None):
        super().__init__(err, message, failure, cycle)
        self.revoked = []


class RevokedWarning(UserWarning):
    """The lease of an attempt's keys expired after its block succeeded,
    before the release: the work is done (not run again), but the token
    was stale from the deadline on (Attempts.revoked has the Revoked)."""


class PermissionDenied(OrdlockError, PermissionError):
    """EACCES or EPERM: this user may not lock (the device's mode and
    group decide), or may not change a domain's policy."""


class DeviceMissing(OrdlockError, FileNotFoundError):
    """ENOENT or ENODEV opening /dev/ordlock: the module is not loaded."""


# the OSError subclass a failure without a record raises, by errno
_ERRNO_CLASSES = {
    _errno.EACCES: PermissionDenied, _errno.EPERM: PermissionDenied,
    _errno.ETIMEDOUT: Timeout, _errno.EAGAIN: Busy,
    _errno.EINTR: Interrupted, _errno.EKEYEXPIRED: Revoked,
}


_CLASSES = {
    R_ORDER: OrderViolation, R_STRICT: StrictRanks, R_TIMEOUT: Timeout,
    R_BUSY: Busy,
    R_DEADLOCK: Deadlock, R_UPGRADE: UpgradeDeadlock, R_SIGNAL: Interrupted,
    R_OWNER_LIMIT: LimitReached, R_RESOURCE_LIMIT: LimitReached,
    R_USER_LIMIT: LimitReached,
    R_NOT_HELD: NotHeld, R_REVOKED: Revoked,
}


#: what ordlockctl says when the module is missing
_MODULE_MISSING = "the ordlock module is not loaded (insmod ordlock.ko, or modprobe ordlock)"


def _plain_error(err: int, what: str, opening: bool = False) -> OrdlockError:
    cls = _ERRNO_CLASSES.get(err, OrdlockError)
    text = os.strerror(err)
    if opening and err in (_errno.ENOENT, _errno.ENODEV, _errno.ENXIO):
        cls = DeviceMissing
        if not os.path.exists("/sys/module/ordlock"):
            text = "/dev/ordlock: " + _MODULE_MISSING
    return cls(err, "%s: %s" % (what, text))


# --- owners ------------------------------------------------------------------
_U32_MAX = 0xFFFFFFFF


def _u32(v: int, what: str) -> int:
    """v as an unsigned 32-bit argument: ctypes would wrap -1 or 2**32 + 5
    silently (to 4294967295 and 5); ValueError instead."""
    v = int(v)
    if not 0 <= v <= _U32_MAX:
        raise ValueError("ordlock: %s %d is out of range (0 to %d)"
                         % (what, v, _U32_MAX))
    return v


def _token(token: int) -> int:
    """A fencing token: an unsigned 64-bit number (ValueError otherwise)."""
    token = int(token)
    if not 0 <= token < 1 << 64:
        raise ValueError("ordlock: token %d is not a 64-bit token" % token)
    return token


def _lease_ms(lease: Optional[float]) -> int:
    """None: no lease of its own (0); seconds otherwise (at most
    4294967.295: the lease is a 32-bit number of milliseconds)."""
    if lease is None:
        return 0
    if not lease > 0:
        raise ValueError("ordlock: a lease is a positive number of seconds")
    if lease * 1000 > _U32_MAX:
        raise ValueError("ordlock: a lease of %r s is above the longest, "
                         "%.3f s" % (lease, _U32_MAX / 1000.0))
    return max(1, int(round(lease * 1000)))


def _timeout_ms(timeout: Optional[float]) -> Tuple[int, int]:
    """None: the domain default; seconds otherwise (0: do not wait). A
    timeout past the 32-bit milliseconds of a request (float("inf")
    included) waits the longest a request may: the kernel caps every wait
    at its max_timeout_ms anyway. (It wrapped: 4294967.296 s became 0 ms,
    the domain default.) -1, filelock's "wait forever", is that longest
    wait too: no wait is endless here, it lasts up to max_timeout_ms."""
    if timeout is None:
        return 0, 0
    if timeout == -1:
        return _U32_MAX, 0
    if timeout != timeout or timeout < 0:
        raise ValueError("ordlock: a timeout is a number of seconds, not %r"
                         % (timeout,))
    if timeout == 0:
        return 0, ACQUIRE_TRY
    if timeout * 1000 >= _U32_MAX:
        return _U32_MAX, 0
    return max(1, int(round(timeout * 1000))), 0


class Owner:
    """One owner: an open /dev/ordlock. Its keys are released by close(),
    at the end of a ``with`` block, or when the process dies. One request at
    a time: threads that lock independently use one Owner each.

    A child forked while the owner is open shares it (one open file
    description, as a flock(2) lock): in the child, close(), the end of a
    ``with`` block (of the Owner or of a Held) and the garbage collector
    only close the child's descriptor, and the parent keeps its keys; an
    explicit release() in the child releases them (flock's LOCK_UN)."""

    def __init__(self, domain: Optional[str] = None,
                 ranks: Optional[Mapping[str, int]] = None) -> None:
        self.ranks: Dict[str, int] = dict(ranks or {})
        self.domain = domain
        self._pid = os.getpid()
        self._ol = _lib.ordlock_open(domain.encode() if domain else None)
        if not self._ol:
            raise _plain_error(ctypes.get_errno(), "ordlock_open(%s)"
                               % (domain or "default"), opening=True)

    @classmethod
    def from_fd(cls, fd: int, ranks: Optional[Mapping[str, int]] = None) -> "Owner":
        """An Owner for descriptor fd of /dev/ordlock, opened elsewhere: the
        ORDLOCK_FD of ``ordlockctl exec -F``, or one a shell opened. Every
        descriptor of the open file description shares its keys; close()
        releases them and closes fd."""
        self = cls.__new__(cls)
        self.ranks = dict(ranks or {})
        self.domain = None
        self._pid = os.getpid()
        self._ol = _lib.ordlock_open_fd(int(fd))
        if not self._ol:
            raise _plain_error(ctypes.get_errno(), "ordlock_open_fd(%d)" % fd,
                               opening=True)
        self.domain = self.info()["domain"]
        return self

    def _handle(self) -> int:
        if not self._ol:
            raise ValueError("ordlock: the owner is closed")
        return self._ol

    def _keys(self, keys: Sequence[KeySpec], mode: Mode) -> List[Key]:
        return [key(k, _mode_of(mode), self.ranks) for k in keys]

    def _error(self, ret: int, what: str) -> OrdlockError:
        err = -ret
        f = _lib.ordlock_last_failure(self._handle()).contents
        f = _Failure.from_buffer_copy(f)
        if f.reason == R_NONE or f.error not in (0, err):
            return _plain_error(err, what)
        buf = ctypes.create_string_buffer(512)
        text = _s(_lib.ordlock_strfailure(ctypes.byref(f), buf, len(buf)))
        cycle = []
        if f.reason == R_DEADLOCK:
            steps = (_CycleStep * CYCLE_MAX)()
            n = _lib.ordlock_last_cycle(self._ol, steps, CYCLE_MAX)
            for s in steps[:max(n, 0)]:
                cycle.append(CycleStep(
                    s.owner_id, s.pid, _s(s.comm),
                    {1: "hard", 2: "soft"}.get(s.edge, "?"),
                    _from_c(s.key), s.blocker_mode))
            if n > 0:
                cbuf = ctypes.create_string_buffer(4096)
                text += ": " + _s(_lib.ordlock_strcycle(steps, n, cbuf,
                                                        len(cbuf)))
        cls = _CLASSES.get(f.reason, OrdlockError)
        exc = cls(err, text, f, cycle)
        if f.reason == R_REVOKED:
            exc.revoked = self.revoked_keys()
        # name the keys with their rank names when there are any
        named = [_named(k, self.ranks) for k in (exc.key, exc.held)
                 if k is not None]
        if named and any(not n.split(":")[0].isdigit() for n in named):
            exc.strerror = "%s [%s]" % (text, " vs ".join(named))
        return exc

    def acquire(self, *keys: KeySpec, timeout: Optional[float] = None,
                mode: Mode = EXCLUSIVE, nowait: bool = False,
                reorder: bool = False,
                lease: Optional[float] = None,
                token: bool = True) -> "Held":
        """Take the keys all or nothing; returns a Held (a context manager
        that releases them). timeout: seconds (None: the domain default;
        0 or nowait=True: do not wait; -1, as filelock's: the longest wait
        the kernel allows, max_timeout_ms). lease: seconds the hold may last
        without renew() (None: the domain's max_hold_ms, if any). The
        kernel sorts the keys.

        reorder=True (ORDLOCK_ACQUIRE_REORDER): keys that sort below held
        ones are not an OrderViolation. They are tried at once; if one
        would have to wait, the kernel lets go of the held keys above and
        takes them all again in order. Held.reacquired then says so: read
        again what those keys guard. If such a request fails, the
        exception's .let_go says the keys from .held up are gone.

        token=False: no fencing token is asked for (Held.token is None), so
        that in a domain with the fast path (docs/fastpath.md) an
        uncontended request of exclusive keys is taken in user space,
        without a system call; with a token (the default) it is the
        kernel's, as a fast-path grant has none."""
        ks, ms, flags, lease_ms = _acquire_args(keys, timeout, mode, nowait,
                                                reorder, lease, self.ranks)
        arr = (_Key * len(ks))(*[k._c() for k in ks])
        tok = ctypes.c_uint64(0)
        ret = _lib.ordlock_acquire_lease(self._handle(), arr, len(ks), ms,
                                         flags, lease_ms,
                                         ctypes.byref(tok) if token else None)
        rflags = _lib.ordlock_result_flags(self._handle())
        if ret < 0:
            exc = self._error(ret, "acquire")
            exc.let_go = bool(rflags & RESULT_RELEASED)
            raise exc
        held = Held(self, ks, tok.value if token else None)
        held.reacquired = bool(rflags & RESULT_RELEASED)
        return held

    def attempts(self, *keys: KeySpec, attempts: int = 8,
                 total: Optional[float] = None, base: float = 0.01,
                 cap: float = 1.0, timeout: Optional[float] = None,
                 mode: Mode = EXCLUSIVE, nowait: bool = False,
                 reorder: bool = False) -> "Attempts":
        """An iterator of attempts (Attempts): each one holds the keys;
        ``with attempt:`` runs the transaction and releases them. A
        retryable failure (of the acquire, or raised in the block) leads to
        the next attempt after a backoff drawn uniformly from 0 to
        min(cap, base * 2**(n - 1)) seconds (full jitter); anything else
        propagates. After `attempts` attempts, or when the next backoff
        would end past `total` seconds, the last failure is raised.
        `timeout` is each acquire's (cut to what is left of `total`).

        A lease that expires during an attempt (the domain's max_hold_ms,
        or a renew() in the block): when the owner held nothing when the
        loop began, everything revoked was the loop's, and it acknowledges
        (release()) so that the next attempt starts from an ordinary owner.
        A block that raised is retried as its error says. A block that
        succeeded is done and not run again: the loop ends, .revoked (of the
        Attempts and of the Attempt) is the Revoked that the release raised,
        and a RevokedWarning says that the token was stale from the deadline
        on (storage that checks tokens refused what the block wrote late).
        A revocation that also took keys held before the loop, or one from
        before it, is the caller's: it is not acknowledged and not retried
        (Revoked propagates; the owner's next call raises it too)."""
        return Attempts(self, keys, attempts=attempts, total=total,
                        base=base, cap=cap, timeout=timeout, mode=mode,
                        nowait=nowait, reorder=reorder)

    def renew(self, lease: Optional[float] = None) -> Optional[float]:
        """Extend the lease of what the owner holds to now + the period
        (lease seconds, or None for the one it has). Returns the seconds
        left, or None when the holds have no lease. Revoked when too late,
        NotHeld when holding nothing."""
        left = ctypes.c_uint64(0)
        ret = _lib.ordlock_renew(self._handle(), _lease_ms(lease),
                                 ctypes.byref(left))
        if ret < 0:
            raise self._error(ret, "renew")
        return left.value / 1000.0 if left.value else None

    def set_revoke_signal(self, sig: int) -> None:
        """Send signal sig (0: none) to this process when the lease is
        revoked; poll() on fileno() reports POLLPRI then in any case."""
        ret = _lib.ordlock_set_revoke_signal(self._handle(), int(sig))
        if ret < 0:
            raise self._error(ret, "set_revoke_signal")

    def revoked_keys(self) -> List[Tuple[Key, int]]:
        """After Revoked: the (Key, token) pairs the kernel revoked."""
        arr = (_RevokedKey * 256)()
        n = _lib.ordlock_revoked_keys(self._handle(), arr, 256)
        return [(_from_c(r.key), r.token) for r in arr[:max(n, 0)]]

    def token_check(self, k: KeySpec, token: int,
                    domain: Optional[str] = None) -> bool:
        """True when token is the live grant of key k (in domain, default
        this owner's), False when it is stale. Holds nothing."""
        k = key(k, EXCLUSIVE, self.ranks)
        token = _token(token)
        ret = _lib.ordlock_token_check(self._handle(),
                                       domain.encode() if domain else None,
                                       k.rank, k.id, token)
        if ret == -_errno.ESTALE:
            return False
        if ret < 0:
            raise _plain_error(-ret, "token_check")
        return True

    def try_acquire(self, *keys: KeySpec, mode: Mode = EXCLUSIVE) -> "Held":
        """acquire() that never waits (Busy)."""
        return self.acquire(*keys, mode=mode, nowait=True)

    def release(self, *keys: KeySpec, mode: Mode = EXCLUSIVE) -> None:
        """Release the given held keys (all or none: NotHeld), or all."""
        if not keys:
            ret = _lib.ordlock_release_all(self._handle())
        else:
            ks = self._keys(keys, mode)
            arr = (_Key * len(ks))(*[k._c() for k in ks])
            ret = _lib.ordlock_release(self._handle(), arr, len(ks))
        if ret < 0:
            raise self._error(ret, "release")

    def convert(self, k: KeySpec, mode: Mode, timeout: Optional[float] = None,
                nowait: bool = False) -> int:
        """Upgrade (mode exclusive, may wait) or downgrade (shared) a held
        key; returns the new fencing token."""
        k = key(k, EXCLUSIVE, self.ranks)
        k = Key(k.rank, k.id, mode)
        ms, flags = _timeout_ms(timeout)
        if nowait:
            flags |= ACQUIRE_TRY
        token = ctypes.c_uint64(0)
        ret = _lib.ordlock_convert(self._handle(), k._c(), ms, flags,
                                   ctypes.byref(token))
        if ret < 0:
            raise self._error(ret, "convert")
        return token.value

    def info(self) -> Dict[str, Any]:
        """A dict: owner_id, nheld, policy, domain, last_token."""
        inf = _OwnerInfo()
        ret = _lib.ordlock_owner_info(self._handle(), ctypes.byref(inf))
        if ret < 0:
            raise self._error(ret, "owner_info")
        return {"owner_id": inf.owner_id, "nheld": inf.nheld,
                "policy": policy_name(inf.policy), "domain": _s(inf.domain),
                "last_token": inf.last_token}

    def set_domain(self, domain: str) -> None:
        """Move to another domain; the owner must hold nothing."""
        ret = _lib.ordlock_set_domain(self._handle(), domain.encode())
        if ret == -_errno.EDQUOT:
            raise self._error(ret, "set_domain(%s)" % domain)
        if ret < 0:
            raise _plain_error(-ret, "set_domain(%s)" % domain)
        self.domain = domain

    def set_label(self, label: Optional[str]) -> None:
        """Name the owner's code path ("api", "batch"; up to 31 of
        [A-Za-z0-9._-]; "" or None removes it): shown in every view, event
        and report of the owner, and in the learned lock order."""
        ret = _lib.ordlock_set_label(self._handle(),
                                     label.encode() if label else None)
        if ret < 0:
            raise _plain_error(-ret, "set_label(%r)" % (label,))
        self.label = label or None

    def fileno(self) -> int:
        """The descriptor of /dev/ordlock (for select(), or to pass on)."""
        return _lib.ordlock_fd(self._handle())

    def _forked(self) -> bool:
        """Whether this process is a child forked after the owner opened."""
        return os.getpid() != self._pid

    def close(self) -> None:
        """Release everything and close (in a forked child: close the
        child's descriptor only, the parent keeps the keys)."""
        ol, self._ol = self._ol, None
        if not ol:
            return
        if not self._forked():
            _lib.ordlock_close(ol)
            return
        fd = _lib.ordlock_fd(ol)
        _lib.ordlock_detach(ol)
        os.close(fd)

    def __enter__(self) -> "Owner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def query(self, k: KeySpec) -> "KeyState":
        """query() of key k in this owner's domain, with its rank names."""
        return query(k, self.domain or self.info()["domain"], self.ranks)

    def keepalive(self, lease: Optional[float] = None,
                  interval: Optional[float] = None,
                  on_lost: Optional[Callable[["OrdlockError"], None]] = None
                  ) -> "KeepAlive":
        """A KeepAlive of this owner's lease: renewed every interval seconds
        (None: a third of the lease period), with lease seconds as the
        period (None: the one the holds have). The first renewal is made
        now (Revoked, NotHeld). Stop it (leave its block) before releasing
        the keys."""
        return KeepAlive(self, lease, interval, on_lost)


class Held:
    """Keys held after a successful acquire; ``with`` releases them (and
    closes the owner when acquire() opened it)."""

    def __init__(self, owner: Owner, keys: Sequence[Key], token: Optional[int],
                 own_owner: bool = False) -> None:
        self.owner = owner
        self.keys: List[Key] = list(keys)
        self.token = token
        self._own = own_owner
        self.released = False
        #: held keys were let go and taken again (reorder=True)
        self.reacquired = False

    def renew(self, lease: Optional[float] = None) -> Optional[float]:
        """Owner.renew(): extend the lease; returns the seconds left."""
        return self.owner.renew(lease)

    def convert(self, k: KeySpec, mode: Mode, timeout: Optional[float] = None,
                nowait: bool = False) -> int:
        """Change the mode of one of the held keys; updates .token."""
        self.token = self.owner.convert(k, mode, timeout, nowait)
        return self.token

    def release(self) -> None:
        """Release the keys (closing the owner acquire() opened); twice is
        once. In a child forked while they are held it releases them for
        the parent too (the owner is shared)."""
        if self.released:
            return
        self.released = True
        if self._own and not self.owner._forked():
            self.owner.close()
            return
        self.owner.release(*self.keys)
        if self._own:
            self.owner.close()

    def __enter__(self) -> "Held":
        if self.released:
            raise ValueError("ordlock: these keys were released: acquire "
                             "them again")
        return self

    def __exit__(self, *exc: Any) -> None:
        self._end()

    def _end(self) -> None:
        """The end of a block that holds the keys: release them, but in a
        child forked inside the block (leaving through it, e.g. by
        sys.exit()) only drop the child's descriptor: they are the
        parent's."""
        if self.owner._ol and self.owner._forked():
            if self._own:
                self.owner.close()
            return
        self.release()

    def __repr__(self) -> str:
        return "<ordlock.Held %s token %d>" % (
            ", ".join(str(k) for k in self.keys), self.token)

    def keepalive(self, lease: Optional[float] = None,
                  interval: Optional[float] = None,
                  on_lost: Optional[Callable[["OrdlockError"], None]] = None
                  ) -> "KeepAlive":
        """Owner.keepalive() of the owner that holds these keys."""
        return KeepAlive(self.owner, lease, interval, on_lost)


def acquire(*keys: KeySpec, domain: Optional[str] = None,
            timeout: Optional[float] = None, mode: Mode = EXCLUSIVE,
            ranks: Optional[Mapping[str, int]] = None,
            nowait: bool = False, lease: Optional[float] = None,
            token: bool = True) -> Held:
    """Open an owner in domain and take the keys all or nothing; returns a
    Held whose release (or the end of the ``with`` block) closes the owner.
    token=False: see Owner.acquire() (the fast path, no Held.token). The
    arguments are checked first: a bad key, timeout or lease raises
    ValueError before the device is opened.

        with ordlock.acquire(("orders", 10), ("inventories", 20), timeout=5):
            ...
    """
    # the arguments first: a bad one is a ValueError with or without the
    # module (and the library)
    if not [key(k, _mode_of(mode), dict(ranks or {})) for k in keys]:
        raise ValueError("ordlock: no keys")
    _timeout_ms(timeout)
    _lease_ms(lease)
    owner = Owner(domain, ranks)
    try:
        held = owner.acquire(*keys, timeout=timeout, mode=mode, nowait=nowait,
                             lease=lease, token=token)
    except BaseException:
        owner.close()
        raise
    held._own = True
    return held


def try_acquire(*keys: KeySpec, **kw: Any) -> Held:
    """acquire() that never waits (Busy)."""
    kw["nowait"] = True
    return acquire(*keys, **kw)


def domain_config(domain: str) -> Dict[str, Any]:
    """The settings of a domain: a dict policy, detect_delay_ms, nowners,
    strict, max_hold_ms."""
    with Owner() as o:
        cfg = _DomainConfig(size=ctypes.sizeof(_DomainConfig))
        ret = _lib.ordlock_domain_config(o._handle(), domain.encode(),
                                         ctypes.byref(cfg))
        if ret < 0:
            raise _plain_error(-ret, "domain_config(%s)" % domain)
        return {"policy": policy_name(cfg.policy),
                "detect_delay_ms": cfg.detect_delay_ms,
                "nowners": cfg.nowners, "strict": bool(cfg.strict),
                "max_hold_ms": cfg.max_hold_ms, "cluster": bool(cfg.cluster)}


def set_max_hold(domain: str, max_hold_ms: int) -> None:
    """Set a domain's max_hold_ms (0: no limit): the longest lease of a
    grant, and the lease of one that asks for none; needs CAP_SYS_ADMIN."""
    max_hold_ms = _u32(max_hold_ms, "max_hold_ms")
    with Owner() as o:
        ret = _lib.ordlock_set_max_hold(o._handle(), domain.encode(),
                                        max_hold_ms)
        if ret < 0:
            raise _plain_error(-ret, "set_max_hold(%s)" % domain)


def token_check(k: KeySpec, token: int, domain: Optional[str] = None,
                ranks: Optional[Mapping[str, int]] = None) -> bool:
    """For storage that fences writes: True when token is the live grant
    of key k in domain (default "default"), False when it is stale."""
    token = _token(token)
    with Owner(ranks=ranks) as o:
        return o.token_check(k, token, domain or "default")


def set_strict(domain: str, strict: bool = True) -> None:
    """Strict ranks in a domain (seed 000's lock levels): a key whose rank
    is not above every held rank is refused (StrictRanks). Needs
    CAP_SYS_ADMIN."""
    with Owner() as o:
        ret = _lib.ordlock_set_strict(o._handle(), domain.encode(),
                                      1 if strict else 0)
        if ret < 0:
            raise _plain_error(-ret, "set_strict(%s)" % domain)


def set_policy(domain: str, policy: Union[int, str],
               detect_delay_ms: int = 0) -> None:
    """Set a domain's policy ("enforce", "detect", "timeout" or the
    number) and detection delay; needs CAP_SYS_ADMIN."""
    if isinstance(policy, str):
        if policy not in _POLICIES:
            raise ValueError("ordlock: policy %r is not one of %s"
                             % (policy, ", ".join(sorted(_POLICIES))))
        policy = _POLICIES[policy]
    policy = _u32(policy, "policy")
    detect_delay_ms = _u32(detect_delay_ms, "detect_delay_ms")
    with Owner() as o:
        ret = _lib.ordlock_set_policy(o._handle(), domain.encode(), policy,
                                      detect_delay_ms)
        if ret < 0:
            raise _plain_error(-ret, "set_policy(%s)" % domain)


def _edge_dict(e, names=None):
    def rn(rank):
        return _name_of_rank(rank, names) or str(rank)

    def k(key):
        return {"rank": key.rank, "id": key.id, "mode": mode_name(key.mode),
                "key": "%s:%d" % (rn(key.rank), key.id)}
    return {"from": rn(e.from_rank), "to": rn(e.to_rank),
            "from_rank": e.from_rank, "to_rank": e.to_rank,
            "kind": ORDER_KINDS.get(e.kind, e.kind), "count": e.count,
            "inverted": bool(e.flags & 1), "reported": bool(e.flags & 2),
            "first": {"owner_id": e.owner_id, "pid": e.pid, "uid": e.uid,
                      "comm": _s(e.comm), "label": _s(e.label),
                      "held": k(e.held), "taken": k(e.taken),
                      "time_ns": e.time_ns}}


def learned_order(domain: str, ranks: Optional[Mapping[str, int]] = None) -> Dict[str, Any]:
    """The lock order a detect or timeout domain learned: a dict with
    learning, nranks, max_edges, npotential, dropped, edges (each with its
    count and first observation: owner, pid, comm, label, keys, time) and
    potential (each {"kind": "cycle"|"ids", "edges": [indexes], "labels"}).
    ENOENT (FileNotFoundError) when the domain does not exist."""
    with Owner() as o:
        room, words = 0, 0
        for _ in range(5):
            edges = (_OrderEdge * max(room, 1))()
            pots = (ctypes.c_uint32 * max(words, 1))()
            info = _OrderGet()
            ret = _lib.ordlock_get_order(o._handle(), domain.encode(), edges,
                                         room, pots, words, ctypes.byref(info))
            if ret == -_errno.ENOENT:
                raise FileNotFoundError(_errno.ENOENT, "learned_order(%s): no such domain"
                                        % domain)
            if ret < 0:
                raise _plain_error(-ret, "learned_order(%s)" % domain)
            if info.nedges <= room and info.npotential_words <= words:
                break
            room, words = info.nedges + 16, info.npotential_words + 64
        es = [_edge_dict(edges[i], ranks) for i in range(min(info.nedges, room))]
        potential, at = [], 0
        while at + 2 <= min(info.npotential_words, words):
            n = pots[at + 1]
            idx = [pots[at + 2 + i] for i in range(n)]
            potential.append({"kind": POTENTIAL_KINDS.get(pots[at], pots[at]),
                              "edges": idx,
                              "labels": [es[i]["first"]["label"]
                                         for i in idx if i < len(es)]})
            at += 2 + n
        return {"learning": bool(info.learning), "nranks": info.nranks,
                "max_edges": info.max_edges, "npotential": info.npotential,
                "dropped": info.dropped, "edges": es, "potential": potential}


def reset_order(domain: str) -> None:
    """Forget the lock order a domain learned; needs CAP_SYS_ADMIN."""
    with Owner() as o:
        cfg = _DomainConfig(size=ctypes.sizeof(_DomainConfig),
                            flags=_RESET_ORDER)
        ret = _lib.ordlock_domain_config(o._handle(), domain.encode(),
                                         ctypes.byref(cfg))
        if ret < 0:
            raise _plain_error(-ret, "reset_order(%s)" % domain)
# --- retries -----------------------------------------------------------------
_RETRY_ERRNOS = (_errno.ETIMEDOUT, _errno.EAGAIN, _errno.EKEYEXPIRED)
_rng = random.Random()


def retryable(exc: BaseException) -> bool:
    """Whether retrying can fix exc: a deadlock victim (Deadlock, and
    UpgradeDeadlock), a Timeout, a Busy key, a revoked lease (EKEYEXPIRED).
    Never an OrderViolation (StrictRanks included), bad input, a limit, nor
    a thread that waits for itself (a Deadlock whose cycle has one step,
    cycle_len 1: see Deadlock), whose wait would never end; only what
    ordlock raised (an OrdlockError): a socket's ETIMEDOUT in a
    transaction's body is the body's own failure."""
    if not isinstance(exc, OrdlockError):
        return False
    if exc.errno in _RETRY_ERRNOS:
        return True
    if exc.errno != _errno.EDEADLK:
        return False
    if exc.reason == R_DEADLOCK:
        return exc.cycle_len != 1
    return exc.reason == R_UPGRADE


class Attempt:
    """One attempt of Attempts: .number (from 1), .held (the Held) and
    .token. ``with attempt:`` releases the keys at the end of the block
    and swallows a retryable failure (kept in .error) so that the loop
    goes on; any other exception propagates."""

    def __init__(self, number, held, loop=None):
        self.number = number
        self.held = held
        self.token = held.token
        self.error = None
        #: the Revoked of the release: the lease expired before it
        self.revoked = None
        self._loop = loop

    def __enter__(self):
        return self

    def __exit__(self, cls, exc, tb):
        try:
            self.held._end()
        except Revoked as rev:
            self.revoked = rev
            usable = self._loop is not None and self._loop._acknowledge()
            if exc is None:
                # the work is done: not a failure, but not silent either
                if self._loop is not None:
                    self._loop.revoked = rev
                warnings.warn(RevokedWarning(
                    "ordlock: the lease of %s expired before the release: "
                    "attempt %d's work is done, but token %d was stale from "
                    "the deadline on" % (", ".join(str(k) for k in self.held.keys),
                                         self.number, self.token)),
                    stacklevel=2)
                return False
            if retryable(exc) and not usable:
                raise rev from exc
        except OrdlockError:
            if exc is None:
                raise
        if exc is not None and retryable(exc):
            self.error = exc
            return True
        return False


class Attempts:
    """The iterator of Owner.attempts(); .attempts is the number made."""

    def __init__(self, owner, keys, attempts=8, total=None, base=0.01,
                 cap=1.0, timeout=None, mode=EXCLUSIVE, nowait=False,
                 reorder=False):
        if attempts < 1 or base < 0 or cap < 0:
            raise ValueError("ordlock: attempts >= 1, base and cap >= 0")
        self.owner = owner
        self.keys = keys
        self.max = attempts
        self.total = total
        self.base = base
        self.cap = cap
        self.timeout = timeout
        self.mode = mode
        self.nowait = nowait
        self.reorder = reorder
        self.attempts = 0
        #: the Revoked of a release after a block that succeeded, or None
        self.revoked = None
        self._held_before = True

    def _acknowledge(self):
        """After a revocation of the loop's keys: acknowledge it when the
        owner held nothing of its own before the loop. Whether it did."""
        if self._held_before:
            return False
        try:
            self.owner.release()
        except OrdlockError:
            return False
        return True

    def backoff(self, number):
        """The sleep after failed attempt `number`: full jitter."""
        return _rng.uniform(0, min(self.cap, self.base * 2 ** (number - 1)))

    def __iter__(self):
        deadline = time.monotonic() + self.total if self.total else None
        self.revoked = None
        # a revocation takes what the owner held before too: not ours then
        self._held_before = self.owner.info()["nheld"] != 0
        for number in range(1, self.max + 1):
            self.attempts = number
            timeout = self.timeout
            if deadline is not None and not self.nowait:
                left = max(deadline - time.monotonic(), 0.001)
                timeout = left if timeout is None else min(timeout, left)
            try:
                held = self.owner.acquire(*self.keys, timeout=timeout,
                                          mode=self.mode, nowait=self.nowait,
                                          reorder=self.reorder)
            except Revoked:
                # revoked before the loop, or keys held before it: the
                # caller's to acknowledge, and no attempt can succeed
                raise
            except OrdlockError as e:
                if not retryable(e):
                    raise
                last = e
            else:
                attempt = Attempt(number, held, self)
                try:
                    yield attempt
                finally:
                    held._end()
                if attempt.error is None:
                    return
                last = attempt.error
            if number == self.max:
                raise last
            pause = self.backoff(number)
            if deadline is not None and time.monotonic() + pause >= deadline:
                raise last
            time.sleep(pause)


def retrying(*keys: KeySpec, owner: Optional["Owner"] = None,
             domain: Optional[str] = None, **kw: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator: run the function under the keys, retrying as
    Owner.attempts(*keys, **kw) does. The function gets the Held as its
    first argument. Without owner=, each call opens an Owner in domain."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            o = owner if owner is not None else Owner(domain)
            try:
                for attempt in o.attempts(*keys, **kw):
                    with attempt:
                        result = fn(attempt.held, *args, **kwargs)
                return result
            finally:
                if owner is None:
                    o.close()
        return wrapper
    return deco


# --- is it held? ---------------------------------------------------------------
STATE_PIDS = 8


class _KeyState(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_uint), ("nholders", ctypes.c_uint),
                ("nwaiters", ctypes.c_uint), ("npids", ctypes.c_uint),
                ("pids", ctypes.c_uint32 * STATE_PIDS),
                ("token", ctypes.c_uint64), ("waiter_pid", ctypes.c_uint32)]


_KeepaliveFn = ctypes.CFUNCTYPE(None, _P, ctypes.c_int,
                                ctypes.POINTER(_Failure), _P)

# the calls of this section and the next, registered on first use (a
# libordlock older than them fails those calls only, with ImportError)
_sigs_more = {
    "ordlock_query": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_uint32,
                                     ctypes.c_uint64,
                                     ctypes.POINTER(_KeyState)]),
    "ordlock_keepalive_start": (_P, [_P, _u, _u, _KeepaliveFn, _P]),
    "ordlock_keepalive_stop": (ctypes.c_int, [_P]),
    "ordlock_keepalive_error": (ctypes.c_int, [_P]),
    "ordlock_keepalive_renewals": (ctypes.c_ulong, [_P]),
}


def _more(name: str) -> Any:
    try:
        f = getattr(_lib, name)
    except AttributeError:
        raise ImportError("ordlock: the libordlock loaded has no %s: install "
                          "the one of this binding (make install)" % name) from None
    if f.argtypes is None:
        f.restype, f.argtypes = _sigs_more[name]
    return f


class KeyState(namedtuple("KeyState",
                          "key state holders nholders waiters waiter_pid token")):
    """What query() saw of one key: state ("free", "shared" or
    "exclusive"), holders (the holders' pids, the first 8), nholders,
    waiters (requests queued for it), waiter_pid (the first one's, 0 when
    none), token (the first holder's fencing token; 0 when free or held
    by the fast path). ``bool(st)`` is st.locked."""

    @property
    def locked(self) -> bool:
        """Whether someone holds the key."""
        return bool(self.state != "free")

    def __bool__(self) -> bool:
        return self.locked


def query(k: KeySpec, domain: Optional[str] = None,
          ranks: Optional[Mapping[str, int]] = None) -> KeyState:
    """The state of key k in domain (None: "default") without taking it,
    as proper-lockfile's check() or filelock's is_locked: whether it is
    held, shared or exclusive, by which pids, and how many wait (the
    netlink dump GET_LOCKS; no owner is opened). The answer holds nothing:
    it may change right after. Without CAP_NET_ADMIN the dump shows only
    the owners of one's own user: a key that another user holds looks free.

        st = ordlock.query(("warehouse", 1), domain="shop")
        if st.state == "exclusive":
            print("held by pid", st.holders[0], "and", st.waiters, "wait")
    """
    kk = key(k, EXCLUSIVE, ranks)
    st = _KeyState()
    ret = _more("ordlock_query")(domain.encode() if domain else None,
                                 kk.rank, kk.id, ctypes.byref(st))
    if ret < 0:
        raise _plain_error(-ret, "query(%s)" % _named(kk, ranks),
                           opening=True)
    state = {SHARED: "shared", EXCLUSIVE: "exclusive"}.get(st.mode, "free")
    return KeyState(Key(kk.rank, kk.id, st.mode or EXCLUSIVE), state,
                    tuple(st.pids[:st.npids]), st.nholders, st.nwaiters,
                    st.waiter_pid, st.token)


def is_locked(k: KeySpec, domain: Optional[str] = None,
              ranks: Optional[Mapping[str, int]] = None) -> bool:
    """Whether key k of domain is held by anyone (query(k).locked)."""
    return query(k, domain, ranks).locked


# --- lease keep-alive -------------------------------------------------------------
class KeepAlive:
    """Renews the lease of what an Owner holds, on a thread of
    libordlock's (ordlock_keepalive_start()), until stop() or the end of
    the ``with`` block: as etcd's KeepAlive or redlock's extension. The
    thread also watches for the revocation, so that a hold that is lost
    (revoked: the lease expired while the process was stopped, or while
    the owner waited in another request; or the owner released everything)
    is reported at once: .lost (a threading.Event) is set, .error is the
    Revoked (or other OrdlockError) with the kernel's record, on_lost(error)
    runs (on the keep-alive's thread: note it, do not call the Owner), and
    check() raises it. The token is stale from then on. Never silently:
    the end of the block raises .error when the hold was lost (unless the
    block raised already); stop() returns it.

        with owner.acquire(("orders", 10), lease=2.0) as held, \\
                held.keepalive() as ka:
            for row in rows:
                ka.check()          # Revoked: stop writing, held.token is stale
                write(row, held.token)
    """

    def __init__(self, owner: Owner, lease: Optional[float] = None,
                 interval: Optional[float] = None,
                 on_lost: Optional[Callable[[OrdlockError], None]] = None) -> None:
        import threading
        self.owner = owner
        self.lost = threading.Event()
        self.on_lost = on_lost
        self._err = 0
        self._failure: Optional[_Failure] = None
        self._error: Optional[OrdlockError] = None
        self._renewals = 0
        ms = 0 if interval is None else _u32(max(1, round(interval * 1000)),
                                              "interval")
        # kept alive as long as the thread may call it
        self._cb = _KeepaliveFn(self._lost)
        self._ka = _more("ordlock_keepalive_start")(
            owner._handle(), _lease_ms(lease), ms, self._cb, None)
        if not self._ka:
            err = ctypes.get_errno()
            if err == _errno.EINVAL:
                raise OrdlockError(err, "keepalive: the holds have no lease "
                                   "(acquire(lease=...), or the domain's "
                                   "max_hold_ms)")
            raise owner._error(-err, "keepalive")

    def _lost(self, ka: Any, err: int, f: Any, arg: Any) -> None:
        self._err = -err
        self._failure = _Failure.from_buffer_copy(f.contents)
        self.lost.set()
        if self.on_lost is not None:
            self.on_lost(self._make_error(with_keys=False))

    def _make_error(self, with_keys: bool = True) -> OrdlockError:
        f = self._failure
        assert f is not None
        buf = ctypes.create_string_buffer(512)
        text = "keepalive: " + (_s(_lib.ordlock_strfailure(
            ctypes.byref(f), buf, len(buf))) or os.strerror(self._err))
        cls: Any = _CLASSES.get(f.reason,
                                _ERRNO_CLASSES.get(self._err, OrdlockError))
        exc: OrdlockError = cls(self._err, text, f)
        if isinstance(exc, Revoked) and with_keys and self.owner._ol:
            exc.revoked = self.owner.revoked_keys()
        return exc

    @property
    def error(self) -> Optional[OrdlockError]:
        """None while the hold is kept; the error that lost it after."""
        if not self.lost.is_set():
            return None
        if self._error is None:
            self._error = self._make_error()
        return self._error

    @property
    def renewals(self) -> int:
        """How many renewals succeeded."""
        if self._ka:
            self._renewals = _more("ordlock_keepalive_renewals")(self._ka)
        return self._renewals

    def check(self) -> None:
        """Raise .error if the hold was lost (call it before each write)."""
        e = self.error
        if e is not None:
            raise e

    def stop(self) -> Optional[OrdlockError]:
        """End the renewals (twice is once); returns .error."""
        if self._ka:
            self._renewals = _more("ordlock_keepalive_renewals")(self._ka)
            ka, self._ka = self._ka, None
            _more("ordlock_keepalive_stop")(ka)
        return self.error

    def __enter__(self) -> "KeepAlive":
        return self

    def __exit__(self, cls: Any, exc: Any, tb: Any) -> None:
        e = self.stop()
        if e is not None and exc is None:
            raise e

    def __del__(self) -> None:
        try:
            self.stop()
        except Exception:  # interpreter shutdown
            pass


# --- asyncio ------------------------------------------------------------------------
# The generic netlink family "ordlock" (include/uapi/linux/ordlock.h): an
# ACQUIRE that must wait is answered QUEUED at once and ends with one RESULT
# message later, and CANCEL withdraws it in the kernel; so an event loop
# waits on the socket, and no thread waits in the kernel.
_NLM_F_REQUEST = 1
_NLMSG_ERROR = 2
_NLA_F_NESTED = 1 << 15
_GENL_ID_CTRL = 0x10
_CTRL_CMD_GETFAMILY = 3
_CTRL_ATTR_FAMILY_ID = 1
_CTRL_ATTR_FAMILY_NAME = 2
_GENL_VERSION = 1
(_CMD_ACQUIRE, _CMD_RELEASE, _CMD_CONVERT, _CMD_CANCEL, _CMD_RESULT) = range(1, 6)
_CMD_RENEW, _CMD_REVOKED = 14, 16
(_A_DOMAIN, _A_KEYS, _A_KEY, _A_FLAGS, _A_TIMEOUT_NS, _A_COOKIE, _A_STATUS,
 _A_TOKEN, _A_ERRNO, _A_FAILURE) = range(2, 12)
_A_RESULT_FLAGS, _A_LEASE_MS, _A_LEFT_MS = 22, 24, 26
_K_RANK, _K_ID, _K_MODE, _K_TOKEN = 2, 3, 4, 5
(_F_REASON, _F_ERRNO, _F_PID, _F_INDEX, _F_KEY, _F_HELD, _F_HOLDER_MODE,
 _F_CYCLE_LEN) = range(1, 9)
(_ST_GRANTED, _ST_QUEUED, _ST_REFUSED, _ST_TIMEOUT, _ST_DEADLOCK,
 _ST_CANCELLED) = range(1, 7)
_RELEASE_ALL = 1

_Attrs = Dict[int, bytes]


def _nla(atype: int, data: bytes) -> bytes:
    import struct
    n = 4 + len(data)
    return struct.pack("=HH", n, atype) + data + b"\0" * (-n % 4)


def _nla_u32(atype: int, v: int) -> bytes:
    import struct
    return _nla(atype, struct.pack("=I", v))


def _nla_u64(atype: int, v: int) -> bytes:
    import struct
    return _nla(atype, struct.pack("=Q", v))


def _nla_keys(ks: Sequence[Key]) -> bytes:
    return _nla(_A_KEYS | _NLA_F_NESTED, b"".join(
        _nla(_A_KEY | _NLA_F_NESTED, _nla_u32(_K_RANK, k.rank) +
             _nla_u64(_K_ID, k.id) + _nla_u32(_K_MODE, k.mode))
        for k in ks))


def _nla_items(buf: bytes) -> List[Tuple[int, bytes]]:
    """The attributes in buf, in order (a nest repeats a type)."""
    import struct
    out: List[Tuple[int, bytes]] = []
    off = 0
    while off + 4 <= len(buf):
        n, atype = struct.unpack_from("=HH", buf, off)
        if n < 4:
            break
        out.append((atype & 0x3FFF, buf[off + 4:off + n]))
        off += (n + 3) & ~3
    return out


def _nla_parse(buf: bytes) -> _Attrs:
    return dict(_nla_items(buf))


def _nla_int(a: _Attrs, atype: int) -> int:
    v = a.get(atype, b"")
    return int.from_bytes(v, "little") if len(v) in (1, 2, 4, 8) else 0


def _nl_key(b: bytes) -> _Key:
    a = _nla_parse(b)
    return _Key(id=_nla_int(a, _K_ID), rank=_nla_int(a, _K_RANK),
                mode=_nla_int(a, _K_MODE))


def _nl_failure(b: bytes) -> _Failure:
    a = _nla_parse(b)
    return _Failure(reason=_nla_int(a, _F_REASON), error=_nla_int(a, _F_ERRNO),
                    pid=_nla_int(a, _F_PID), index=_nla_int(a, _F_INDEX),
                    key=_nl_key(a.get(_F_KEY, b"")),
                    held=_nl_key(a.get(_F_HELD, b"")),
                    holder_mode=_nla_int(a, _F_HOLDER_MODE),
                    cycle_len=_nla_int(a, _F_CYCLE_LEN))


def _nl_error(err: int, f: Optional[_Failure], what: str,
              names: Optional[Mapping[str, int]] = None) -> OrdlockError:
    """The exception of a refusal: the class and sentence of the sync API."""
    if f is None or f.reason == R_NONE:
        return _plain_error(err, what)
    buf = ctypes.create_string_buffer(512)
    try:
        text = _s(_lib.ordlock_strfailure(ctypes.byref(f), buf, len(buf)))
    except ImportError:
        text = None
    cls: Any = _CLASSES.get(f.reason, OrdlockError)
    exc: OrdlockError = cls(err, text or "%s: %s" % (what, os.strerror(err)), f)
    named = [_named(k, names) for k in (exc.key, exc.held) if k is not None]
    if named and any(not n.split(":")[0].isdigit() for n in named):
        exc.strerror = "%s [%s]" % (exc.strerror, " vs ".join(named))
    return exc


def _acquire_args(keys: Sequence[KeySpec], timeout: Optional[float], mode: Mode,
                nowait: bool, reorder: bool, lease: Optional[float],
                names: Optional[Mapping[str, int]]) -> Tuple[List[Key], int, int, int]:
    """An acquire's keys, timeout (ms), flags and lease (ms), checked."""
    ks = [key(k, _mode_of(mode), names) for k in keys]
    if not ks:
        raise ValueError("ordlock: no keys")
    ms, flags = _timeout_ms(timeout)
    if nowait:
        flags |= ACQUIRE_TRY
    if reorder:
        flags |= ACQUIRE_REORDER
    return ks, ms, flags, _lease_ms(lease)


class AsyncOwner:
    """One owner for asyncio: a generic netlink socket of the family
    "ordlock" (its keys are released by close(), at the end of an ``async
    with`` block, or when the process dies), the same rules and exceptions
    as Owner. A request that must wait does not block the event loop: the
    kernel answers at once that it is queued, and the grant (or the
    timeout, or the deadlock) comes later as a message on the socket, which
    the loop watches. Cancelling the task that awaits it (task.cancel(),
    asyncio.timeout(), wait_for()) withdraws the request in the kernel
    (netlink CANCEL) before the CancelledError propagates: nothing of it is
    held, and no waiter is left behind; a grant that won the race is
    released. One request at a time (as Owner): tasks that lock
    independently use one AsyncOwner each.

        async with ordlock.AsyncOwner("shop") as owner:
            async with owner.acquire(("warehouse", 2), ("warehouse", 1),
                                     timeout=5) as held:
                ...                 # held.token fences, as Held.token
    """

    def __init__(self, domain: Optional[str] = None,
                 ranks: Optional[Mapping[str, int]] = None) -> None:
        import socket
        self.ranks: Dict[str, int] = dict(ranks or {})
        self.domain = domain or "default"
        if len(self.domain.encode()) >= DOMAIN_NAME_MAX:
            raise ValueError("ordlock: domain name %r is too long" % domain)
        self._seq = 0
        self._cookie = 0
        self._placed = False
        self._replies: Dict[int, Any] = {}
        self._results: Dict[int, Any] = {}
        self._late: Dict[int, _Attrs] = {}
        self._loop: Any = None
        self._busy = False
        #: the REVOKED notification's failure record, once the lease expired
        self.revoked: Optional[OrdlockError] = None
        self._keepalives: List["AsyncKeepAlive"] = []
        try:
            self._sock: Any = socket.socket(
                socket.AF_NETLINK, socket.SOCK_RAW,
                getattr(socket, "NETLINK_GENERIC", 16))
            self._sock.bind((0, 0))
            self._family = self._resolve()
        except OSError as e:
            if getattr(self, "_sock", None) is not None:
                self._sock.close()
            self._sock = None
            raise _plain_error(e.errno or _errno.EIO, "ordlock: netlink family "
                               "\"ordlock\"", opening=True) from None
        self._sock.setblocking(False)

    def _msg(self, mtype: int, cmd: int, attrs: bytes, version: int) -> Tuple[int, bytes]:
        import struct
        self._seq += 1
        body = struct.pack("=BBH", cmd, version, 0) + attrs
        return self._seq, struct.pack("=IHHII", 16 + len(body), mtype,
                                      _NLM_F_REQUEST, self._seq, 0) + body

    def _resolve(self) -> int:
        """The family's id (blocking: once, at the start)."""
        import struct
        _, msg = self._msg(_GENL_ID_CTRL, _CTRL_CMD_GETFAMILY,
                           _nla(_CTRL_ATTR_FAMILY_NAME, b"ordlock\0"), 1)
        self._sock.send(msg)
        data = self._sock.recv(65536)
        n, mtype = struct.unpack_from("=IH", data, 0)
        if mtype == _NLMSG_ERROR:
            err = -struct.unpack_from("=i", data, 16)[0]
            raise OSError(err or _errno.EPROTO, os.strerror(err or _errno.EPROTO))
        fid = _nla_int(_nla_parse(data[20:n]), _CTRL_ATTR_FAMILY_ID)
        if not fid:
            raise OSError(_errno.EPROTO, "no family id")
        return fid

    # the socket, as the loop reads it
    def _watch(self) -> None:
        import asyncio
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
            loop.add_reader(self._sock.fileno(), self._readable)
        elif self._loop is not loop:
            raise RuntimeError("ordlock: an AsyncOwner serves one event loop")

    def _readable(self) -> None:
        import struct
        while self._sock is not None:
            try:
                data = self._sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                # ENOBUFS: how the requests in flight ended is unknown
                for fut in list(self._replies.values()) + list(self._results.values()):
                    if not fut.done():
                        fut.set_exception(_plain_error(e.errno or _errno.EIO,
                                                       "ordlock: netlink"))
                return
            off = 0
            while off + 16 <= len(data):
                n, mtype, _, seq, _ = struct.unpack_from("=IHHII", data, off)
                if n < 16:
                    break
                self._dispatch(mtype, seq, data[off:off + n])
                off += (n + 3) & ~3

    def _dispatch(self, mtype: int, seq: int, m: bytes) -> None:
        import struct
        if mtype == _NLMSG_ERROR:
            fut = self._replies.pop(seq, None)
            if fut is not None and not fut.done():
                fut.set_result((-struct.unpack_from("=i", m, 16)[0], {}))
            return
        if mtype != self._family or len(m) < 20:
            return
        cmd = m[16]
        attrs = _nla_parse(m[20:])
        if cmd == _CMD_RESULT:
            cookie = _nla_int(attrs, _A_COOKIE)
            fut = self._results.get(cookie)
            if fut is not None and not fut.done():
                fut.set_result(attrs)
            else:
                self._late[cookie] = attrs
        elif cmd == _CMD_REVOKED:
            f = _nl_failure(attrs.get(_A_FAILURE, b""))
            exc = _nl_error(_errno.EKEYEXPIRED, f, "revoked", self.ranks)
            if isinstance(exc, Revoked):
                exc.revoked = [(_from_c(_nl_key(v)), _nla_int(_nla_parse(v), _K_TOKEN))
                               for _, v in _nla_items(attrs.get(_A_KEYS, b""))]
            self.revoked = exc
            for ka in list(self._keepalives):
                ka._lose(exc)
        else:
            fut = self._replies.pop(seq, None)
            if fut is not None and not fut.done():
                fut.set_result((0, attrs))

    def _send(self, cmd: int, attrs: bytes, what: str) -> Any:
        """Send one request: the future of its reply, (errno, attributes)."""
        if self._sock is None:
            raise ValueError("ordlock: the owner is closed")
        self._watch()
        seq, msg = self._msg(self._family, cmd, attrs, _GENL_VERSION)
        fut = self._loop.create_future()
        self._replies[seq] = fut
        try:
            self._sock.send(msg)
        except OSError as e:
            self._replies.pop(seq, None)
            raise _plain_error(e.errno or _errno.EIO, what) from None
        return fut

    async def _request(self, cmd: int, attrs: bytes, what: str) -> _Attrs:
        """One request and its reply (a netlink error raises)."""
        err, reply = await self._send(cmd, attrs, what)
        if err:
            raise _plain_error(err, what)
        return dict(reply)

    def _refusal(self, reply: _Attrs, what: str) -> OrdlockError:
        status = _nla_int(reply, _A_STATUS)
        err = _nla_int(reply, _A_ERRNO) or {
            _ST_TIMEOUT: _errno.ETIMEDOUT, _ST_DEADLOCK: _errno.EDEADLK,
            _ST_CANCELLED: _errno.ECANCELED}.get(status, _errno.EIO)
        f = _nl_failure(reply[_A_FAILURE]) if _A_FAILURE in reply else None
        exc = _nl_error(err, f, what, self.ranks)
        if status == _ST_TIMEOUT and not isinstance(exc, Timeout):
            exc = Timeout(_errno.ETIMEDOUT, exc.strerror, f)
        exc.let_go = bool(_nla_int(reply, _A_RESULT_FLAGS) & RESULT_RELEASED)
        return exc

    def acquire(self, *keys: KeySpec, timeout: Optional[float] = None,
                mode: Mode = EXCLUSIVE, nowait: bool = False,
                reorder: bool = False,
                lease: Optional[float] = None) -> "AsyncAcquire":
        """Take the keys all or nothing, as Owner.acquire() (the same
        timeout, mode, nowait, reorder and lease); ``await`` it for an
        AsyncHeld, or use it as ``async with owner.acquire(...) as held``
        (released at the end). Raises what Owner.acquire() raises (Timeout,
        OrderViolation, Deadlock, ...); cancelling the awaiting task
        withdraws the request in the kernel."""
        return AsyncAcquire(self, *_acquire_args(keys, timeout, mode, nowait,
                                               reorder, lease, self.ranks))

    async def _acquire(self, ks: List[Key], ms: int, flags: int,
                       lease_ms: int) -> "AsyncHeld":
        if self._busy:
            raise _plain_error(_errno.EBUSY, "acquire: a request of this owner "
                               "is in progress")
        self._busy = True
        try:
            return await self._acquire_one(ks, ms, flags, lease_ms)
        finally:
            self._busy = False

    async def _acquire_one(self, ks: List[Key], ms: int, flags: int,
                           lease_ms: int) -> "AsyncHeld":
        import asyncio
        self._cookie += 1
        cookie = self._cookie
        attrs = b""
        if not self._placed:
            attrs += _nla(_A_DOMAIN, self.domain.encode() + b"\0")
        attrs += (_nla_keys(ks) + _nla_u64(_A_TIMEOUT_NS, ms * 1000000) +
                  _nla_u32(_A_FLAGS, flags) + _nla_u64(_A_COOKIE, cookie))
        if lease_ms:
            attrs += _nla_u32(_A_LEASE_MS, lease_ms)
        self._watch()
        result = self._loop.create_future()
        self._results[cookie] = result
        try:
            sent = self._send(_CMD_ACQUIRE, attrs, "acquire")
            try:
                err, reply = await asyncio.shield(sent)
            except asyncio.CancelledError:
                # cancelled before the reply came: it still comes
                await asyncio.shield(self._undo(sent, cookie, ks))
                raise
            if err:
                raise _plain_error(err, "acquire")
            self._placed = True
            if _nla_int(reply, _A_STATUS) == _ST_QUEUED:
                try:
                    reply = await result
                except asyncio.CancelledError:
                    await asyncio.shield(self._withdraw(cookie, ks))
                    raise
        finally:
            self._results.pop(cookie, None)
            self._late.pop(cookie, None)
        if _nla_int(reply, _A_STATUS) != _ST_GRANTED:
            raise self._refusal(reply, "acquire")
        held = AsyncHeld(self, ks, _nla_int(reply, _A_TOKEN))
        held.reacquired = bool(_nla_int(reply, _A_RESULT_FLAGS) & RESULT_RELEASED)
        return held

    async def _undo(self, sent: Any, cookie: int, ks: List[Key]) -> None:
        """An ACQUIRE whose task was cancelled before its reply: undo what
        the reply says happened."""
        err, reply = await sent
        status = _nla_int(reply, _A_STATUS) if not err else 0
        if status == _ST_QUEUED:
            await self._withdraw(cookie, ks)
        elif status == _ST_GRANTED:
            await self._release(ks)

    async def _withdraw(self, cookie: int, ks: List[Key]) -> None:
        """CANCEL the queued request: it is gone from the kernel when this
        returns (a grant that won the race released)."""
        fut = self._loop.create_future()
        self._results[cookie] = fut
        if cookie in self._late:
            fut.set_result(self._late.pop(cookie))
        try:
            reply = await self._request(_CMD_CANCEL, _nla_u64(_A_COOKIE, cookie),
                                        "cancel")
            if _nla_int(reply, _A_STATUS) == _ST_CANCELLED:
                return
        except NotHeld:
            pass
        except OrdlockError as e:
            if e.errno != _errno.ENOENT:
                raise
        # the request ended first: its RESULT was or will be sent
        result = await fut
        if _nla_int(result, _A_STATUS) == _ST_GRANTED:
            await self._release(ks)

    async def _release(self, ks: Optional[Sequence[Key]]) -> None:
        attrs = _nla_keys(ks) if ks else _nla_u32(_A_FLAGS, _RELEASE_ALL)
        reply = await self._request(_CMD_RELEASE, attrs, "release")
        if _nla_int(reply, _A_STATUS) != _ST_GRANTED:
            raise self._refusal(reply, "release")

    async def release(self, *keys: KeySpec, mode: Mode = EXCLUSIVE) -> None:
        """Release the given held keys (all or none: NotHeld), or all (which
        also acknowledges a revocation)."""
        ks = [key(k, _mode_of(mode), self.ranks) for k in keys]
        await self._release(ks or None)
        if not ks:
            self.revoked = None

    async def renew(self, lease: Optional[float] = None) -> Optional[float]:
        """Owner.renew(): extend the lease; the seconds left, or None."""
        attrs = _nla_u32(_A_LEASE_MS, _lease_ms(lease)) if lease else b""
        reply = await self._request(_CMD_RENEW, attrs, "renew")
        if _nla_int(reply, _A_STATUS) != _ST_GRANTED:
            raise self._refusal(reply, "renew")
        left = _nla_int(reply, _A_LEFT_MS)
        return left / 1000.0 if left else None

    def query(self, k: KeySpec) -> KeyState:
        """query() of key k in this owner's domain."""
        return query(k, self.domain, self.ranks)

    def keepalive(self, lease: Optional[float] = None,
                  interval: Optional[float] = None) -> "AsyncKeepAlive":
        """An AsyncKeepAlive of this owner's lease (``async with``)."""
        return AsyncKeepAlive(self, lease, interval)

    def fileno(self) -> int:
        """The netlink socket's descriptor."""
        if self._sock is None:
            raise ValueError("ordlock: the owner is closed")
        return int(self._sock.fileno())

    def close(self) -> None:
        """Close the socket: the kernel releases everything the owner held
        and withdraws what it waited for."""
        sock, self._sock = self._sock, None
        if sock is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(sock.fileno())
        sock.close()
        for fut in list(self._replies.values()) + list(self._results.values()):
            if not fut.done():
                fut.cancel()

    async def __aenter__(self) -> "AsyncOwner":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


class AsyncKeepAlive:
    """The lease of what an AsyncOwner holds, renewed by a task of the loop
    while the ``async with`` block runs (every interval seconds; None: a
    third of the period, from the first renewal, made on entering: Revoked,
    NotHeld). A hold that is lost (the kernel's REVOKED message arrives on
    the socket as soon as it revokes; or a renewal is refused) is reported
    at once, as asyncio.timeout() reports its deadline: the task in the
    block is cancelled at its next await, and the block ends raising the
    Revoked (or the refusal) instead of CancelledError; .lost (an
    asyncio.Event) and .error say so meanwhile.

        async with owner.acquire(("orders", 10), lease=2.0) as held:
            async with owner.keepalive():
                await write_rows(held.token)    # Revoked: stopped at once
    """

    def __init__(self, owner: AsyncOwner, lease: Optional[float] = None,
                 interval: Optional[float] = None) -> None:
        self.owner = owner
        self.error: Optional[OrdlockError] = None
        self.renewals = 0
        self._lease = lease
        self._interval = interval
        self._task: Any = None
        self._renewer: Any = None
        self._cancelled = False
        self.lost: Any = None

    def _lose(self, e: OrdlockError) -> None:
        if self.error is not None:
            return
        self.error = e
        self.lost.set()
        if self._task is not None and not self._task.done():
            self._cancelled = True
            self._task.cancel()

    async def _renew(self, every: float) -> None:
        import asyncio
        wait = every
        while True:
            await asyncio.sleep(wait)
            try:
                await self.owner.renew(self._lease)
                self.renewals += 1
                wait = every
            except OrdlockError as e:
                if e.errno == _errno.EBUSY:     # a request of the owner waits
                    wait = min(every, 0.02)
                    continue
                self._lose(e)
                return

    async def __aenter__(self) -> "AsyncKeepAlive":
        import asyncio
        self.lost = asyncio.Event()
        if self.owner.revoked is not None:
            raise self.owner.revoked
        left = await self.owner.renew(self._lease)
        if left is None:
            raise OrdlockError(_errno.EINVAL, "keepalive: the holds have no "
                               "lease (acquire(lease=...), or the domain's "
                               "max_hold_ms)")
        every = self._interval if self._interval else left / 3.0
        self._task = asyncio.current_task()
        self.owner._keepalives.append(self)
        self._renewer = asyncio.ensure_future(self._renew(every))
        return self

    async def __aexit__(self, cls: Any, exc: Any, tb: Any) -> None:
        import asyncio
        self._renewer.cancel()
        try:
            await self._renewer
        except asyncio.CancelledError:
            pass
        if self in self.owner._keepalives:
            self.owner._keepalives.remove(self)
        if self.error is None:
            return
        if self._cancelled and isinstance(exc, asyncio.CancelledError):
            uncancel = getattr(self._task, "uncancel", None)
            if uncancel is not None:
                uncancel()
            raise self.error from None
        if exc is None:
            raise self.error


class AsyncHeld:
    """Keys an AsyncOwner holds (token, keys, reacquired, as Held)."""

    def __init__(self, owner: AsyncOwner, keys: Sequence[Key], token: int,
                 own_owner: bool = False) -> None:
        self.owner = owner
        self.keys: List[Key] = list(keys)
        self.token = token
        self.released = False
        self.reacquired = False
        self._own = own_owner

    async def renew(self, lease: Optional[float] = None) -> Optional[float]:
        """AsyncOwner.renew()."""
        return await self.owner.renew(lease)

    async def release(self) -> None:
        """Release the keys (closing the owner acquire_async() opened);
        twice is once."""
        if self.released:
            return
        self.released = True
        try:
            if not self._own:
                await self.owner._release(self.keys)
        finally:
            if self._own:
                self.owner.close()

    def __repr__(self) -> str:
        return "<ordlock.AsyncHeld %s token %d>" % (
            ", ".join(str(k) for k in self.keys), self.token)


class AsyncAcquire:
    """What AsyncOwner.acquire() returns: awaitable (an AsyncHeld), and an
    async context manager that releases the keys at its end."""

    def __init__(self, owner: AsyncOwner, keys: List[Key], ms: int, flags: int,
                 lease_ms: int, own_owner: bool = False) -> None:
        self._args = (owner, keys, ms, flags, lease_ms)
        self._own = own_owner
        self._held: Optional[AsyncHeld] = None

    async def _get(self) -> AsyncHeld:
        owner, keys, ms, flags, lease_ms = self._args
        try:
            held = await owner._acquire(keys, ms, flags, lease_ms)
        except BaseException:
            if self._own:
                owner.close()
            raise
        held._own = self._own
        self._held = held
        return held

    def __await__(self) -> Any:
        return self._get().__await__()

    async def __aenter__(self) -> AsyncHeld:
        return await self._get()

    async def __aexit__(self, *exc: Any) -> None:
        if self._held is not None:
            await self._held.release()


def acquire_async(*keys: KeySpec, domain: Optional[str] = None,
                  timeout: Optional[float] = None, mode: Mode = EXCLUSIVE,
                  ranks: Optional[Mapping[str, int]] = None,
                  nowait: bool = False, lease: Optional[float] = None,
                  reorder: bool = False) -> AsyncAcquire:
    """acquire() for asyncio: opens an AsyncOwner in domain, takes the keys
    without blocking the event loop, and closes the owner when they are
    released (the end of the ``async with`` block):

        async with ordlock.acquire_async(("warehouse", 1), domain="shop",
                                         timeout=5) as held:
            ...
    """
    # the arguments are checked before the socket is opened
    args = _acquire_args(keys, timeout, mode, nowait, reorder, lease, ranks)
    return AsyncAcquire(AsyncOwner(domain, ranks), *args, own_owner=True)


__all__ += ["KeyState", "query", "is_locked", "KeepAlive", "AsyncOwner",
            "AsyncHeld", "AsyncAcquire", "AsyncKeepAlive", "acquire_async"]
