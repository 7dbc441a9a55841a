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
``errno``) carrying the kernel's failure record: ``OrderViolation``,
``Timeout``, ``Busy``, ``Deadlock`` (with ``.cycle``, the steps of the
cycle, victim first), ``Interrupted``, ``LimitReached``, ``NotHeld``,
``Revoked`` (the lease expired: ``.revoked`` lists the keys and tokens).

Leases: ``acquire(..., lease=2.0)`` (seconds) bounds the hold; the owner
``renew()``s it or the kernel revokes the keys and grants them to the
waiters; ``token_check(key, token)`` is the storage side's fencing check::

    with ordlock.acquire(("orders", 10), lease=2.0) as held:
        while work():
            held.renew()
    if not ordlock.token_check(("orders", 10), token):
        refuse_the_write()

The library is found through ``$ORDLOCK_LIB`` (a path), then next to this
file in the source tree (``tools/lib/libordlock.so.1``), then where
``make install`` put it, then by ``ctypes.util.find_library("ordlock")``.
"""

import ctypes
import ctypes.util
import errno as _errno
import os
from collections import namedtuple

__all__ = [
    "SHARED", "EXCLUSIVE", "ENFORCE", "DETECT", "TIMEOUT",
    "Key", "CycleStep", "Owner", "Held", "ranks",
    "shared", "exclusive", "key", "acquire", "try_acquire", "set_policy",
    "domain_config", "set_max_hold", "token_check", "Revoked",
    "OrdlockError", "OrderViolation", "Timeout", "Busy", "Deadlock",
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
    R_CANCELLED, R_USER_LIMIT, R_REVOKED = range(15)

ACQUIRE_TRY = 1
#: the largest rank (32 bits) and id (64 bits) of a key
RANK_MAX = 2**32 - 1
ID_MAX = 2**64 - 1
DOMAIN_NAME_MAX = 32
COMM_LEN = 16
CYCLE_MAX = 64

#: the module-level registry of rank names: ``ranks["orders"] = 1``
ranks = {}


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
                ("reserved", ctypes.c_uint32),
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
                ("max_hold_ms", ctypes.c_uint32)]


class _RevokedKey(ctypes.Structure):
    _fields_ = [("key", _Key), ("token", ctypes.c_uint64)]


DOMAIN_SET_MAX_HOLD = 1 << 2


# --- the library -------------------------------------------------------------
#: where ``make install`` put libordlock (set by the install; None in the tree)
_INSTALLED_LIBDIR = None


def _candidates():
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
    yield "libordlock.so.1"


def _load():
    errors = []
    for cand in _candidates():
        try:
            return ctypes.CDLL(cand, use_errno=True)
        except OSError as e:
            errors.append("%s: %s" % (cand, e))
    raise ImportError("ordlock: cannot load libordlock (set ORDLOCK_LIB): "
                      + "; ".join(errors))


_lib = _load()
_P = ctypes.c_void_p
_u = ctypes.c_uint
_sigs = {
    "ordlock_open": (_P, [ctypes.c_char_p]),
    "ordlock_open_fd": (_P, [ctypes.c_int]),
    "ordlock_close": (None, [_P]),
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
    "ordlock_last_cycle": (ctypes.c_int, [_P, ctypes.POINTER(_CycleStep), _u]),
    "ordlock_policy_name": (ctypes.c_char_p, [_u]),
    "ordlock_strcycle": (ctypes.c_char_p, [ctypes.POINTER(_CycleStep), _u,
                                           ctypes.c_char_p, ctypes.c_size_t]),
}
for _name, (_res, _args) in _sigs.items():
    _f = getattr(_lib, _name)
    _f.restype = _res
    _f.argtypes = _args


def _s(b):
    return b.decode("utf-8", "replace") if b is not None else None


def reason_name(reason):
    """"order", "timeout", ... for a reason number."""
    return _s(_lib.ordlock_reason_name(reason))


def mode_name(mode):
    """"shared", "exclusive" or "none"."""
    return _s(_lib.ordlock_mode_name(mode))


def policy_name(policy):
    """"enforce", "detect", "timeout" or "unknown"."""
    return _s(_lib.ordlock_policy_name(policy))


# --- keys --------------------------------------------------------------------
def _rank_of(rank, names=None):
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


def _mode_of(mode):
    if isinstance(mode, str):
        try:
            return _MODES[mode.lower()]
        except KeyError:
            raise ValueError("ordlock: unknown mode %r" % mode) from None
    if mode not in (SHARED, EXCLUSIVE):
        raise ValueError("ordlock: unknown mode %r" % (mode,))
    return int(mode)


def _name_of_rank(rank, names=None):
    for table in (names or {}, ranks):
        for name, value in table.items():
            if int(value) == rank:
                return name
    return None


def _named(k, names=None):
    n = _name_of_rank(k.rank, names)
    return "%s:%d" % (n if n is not None else k.rank, k.id)


class Key(namedtuple("Key", "rank id mode")):
    """A key: rank (int), id (int), mode (SHARED or EXCLUSIVE)."""
    __slots__ = ()

    def __new__(cls, rank, id, mode=EXCLUSIVE, ranks=None):
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
    def name(self):
        """"orders:10" when the rank has a name, else "1:10"."""
        return _named(self)

    def __str__(self):
        return "%s %s" % (mode_name(self.mode), self.name)

    def _c(self):
        return _Key(id=self.id, rank=self.rank, mode=self.mode)


def shared(rank, id, ranks=None):
    """A shared key."""
    return Key(rank, id, SHARED, ranks)


def exclusive(rank, id, ranks=None):
    """An exclusive key."""
    return Key(rank, id, EXCLUSIVE, ranks)


def key(spec, mode=EXCLUSIVE, ranks=None):
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


def _from_c(k):
    return Key(k.rank, k.id, k.mode if k.mode in (SHARED, EXCLUSIVE)
               else EXCLUSIVE)


# --- errors ------------------------------------------------------------------
class CycleStep(namedtuple("CycleStep",
                           "owner_id pid comm edge key blocker_mode")):
    """One step of a deadlock cycle: owner pid (comm) waits for key, held
    by the next step's owner in blocker_mode (edge "hard" or "soft")."""
    __slots__ = ()

    def __str__(self):
        return "pid %d (%s) waits for %s" % (self.pid, self.comm, self.key)


class OrdlockError(OSError):
    """A failed ordlock call. Attributes: errno, reason (number),
    reason_name, key and held (Key or None), pid (the other owner, or 0),
    index (of the request's key), holder_mode, cycle_len, cycle (list of
    CycleStep, empty unless a deadlock)."""

    def __init__(self, err, message, failure=None, cycle=None):
        super().__init__(err, message)
        f = failure
        self.reason = f.reason if f else R_NONE
        self.reason_name = reason_name(self.reason)
        self.key = _from_c(f.key) if f and f.key.rank | f.key.id else None
        self.held = _from_c(f.held) if f and f.held.rank | f.held.id else None
        self.pid = f.pid if f else 0
        self.index = f.index if f else 0
        self.holder_mode = f.holder_mode if f else 0
        self.cycle_len = f.cycle_len if f else 0
        self.cycle = list(cycle or [])

    def __str__(self):
        return self.strerror


class OrderViolation(OrdlockError):
    """EDEADLK, reason "order": .key sorts at or below the held .held."""


class Timeout(OrdlockError, TimeoutError):
    """ETIMEDOUT: waited too long for .key, held by .pid."""


class Busy(OrdlockError, BlockingIOError):
    """EAGAIN: a try-acquire found .key taken by .pid."""


class Deadlock(OrdlockError):
    """EDEADLK, reason "deadlock": this wait would have closed .cycle."""


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
    R_ORDER: OrderViolation, R_TIMEOUT: Timeout, R_BUSY: Busy,
    R_DEADLOCK: Deadlock, R_UPGRADE: UpgradeDeadlock, R_SIGNAL: Interrupted,
    R_OWNER_LIMIT: LimitReached, R_RESOURCE_LIMIT: LimitReached,
    R_USER_LIMIT: LimitReached,
    R_NOT_HELD: NotHeld, R_REVOKED: Revoked,
}


def _plain_error(err, what, opening=False):
    cls = _ERRNO_CLASSES.get(err, OrdlockError)
    if opening and err in (_errno.ENOENT, _errno.ENODEV, _errno.ENXIO):
        cls = DeviceMissing
    return cls(err, "%s: %s" % (what, os.strerror(err)))


# --- owners ------------------------------------------------------------------
def _lease_ms(lease):
    """None: no lease of its own (0); seconds otherwise."""
    if lease is None:
        return 0
    if lease <= 0:
        raise ValueError("ordlock: a lease is a positive number of seconds")
    return max(1, int(round(lease * 1000)))


def _timeout_ms(timeout):
    """None: the domain default; seconds otherwise (0: do not wait)."""
    if timeout is None:
        return 0, 0
    if timeout < 0:
        raise ValueError("ordlock: negative timeout")
    if timeout == 0:
        return 0, ACQUIRE_TRY
    return max(1, int(round(timeout * 1000))), 0


class Owner:
    """One owner: an open /dev/ordlock. Its keys are released by close(),
    at the end of a ``with`` block, or when the process dies. One request at
    a time: threads that lock independently use one Owner each."""

    def __init__(self, domain=None, ranks=None):
        self.ranks = dict(ranks or {})
        self.domain = domain
        self._ol = _lib.ordlock_open(domain.encode() if domain else None)
        if not self._ol:
            raise _plain_error(ctypes.get_errno(), "ordlock_open(%s)"
                               % (domain or "default"), opening=True)

    @classmethod
    def from_fd(cls, fd, ranks=None):
        """An Owner for descriptor fd of /dev/ordlock, opened elsewhere: the
        ORDLOCK_FD of ``ordlockctl exec -F``, or one a shell opened. Every
        descriptor of the open file description shares its keys; close()
        releases them and closes fd."""
        self = cls.__new__(cls)
        self.ranks = dict(ranks or {})
        self.domain = None
        self._ol = _lib.ordlock_open_fd(int(fd))
        if not self._ol:
            raise _plain_error(ctypes.get_errno(), "ordlock_open_fd(%d)" % fd,
                               opening=True)
        self.domain = self.info()["domain"]
        return self

    def _handle(self):
        if not self._ol:
            raise ValueError("ordlock: the owner is closed")
        return self._ol

    def _keys(self, keys, mode):
        return [key(k, _mode_of(mode), self.ranks) for k in keys]

    def _error(self, ret, what):
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

    def acquire(self, *keys, timeout=None, mode=EXCLUSIVE, nowait=False,
                lease=None):
        """Take the keys all or nothing; returns a Held (a context manager
        that releases them). timeout: seconds (None: the domain default;
        0 or nowait=True: do not wait). lease: seconds the hold may last
        without renew() (None: the domain's max_hold_ms, if any). The
        kernel sorts the keys."""
        ks = self._keys(keys, mode)
        if not ks:
            raise ValueError("ordlock: no keys")
        ms, flags = _timeout_ms(timeout)
        if nowait:
            flags |= ACQUIRE_TRY
        arr = (_Key * len(ks))(*[k._c() for k in ks])
        token = ctypes.c_uint64(0)
        ret = _lib.ordlock_acquire_lease(self._handle(), arr, len(ks), ms,
                                         flags, _lease_ms(lease),
                                         ctypes.byref(token))
        if ret < 0:
            raise self._error(ret, "acquire")
        return Held(self, ks, token.value)

    def renew(self, lease=None):
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

    def set_revoke_signal(self, sig):
        """Send signal sig (0: none) to this process when the lease is
        revoked; poll() on fileno() reports POLLPRI then in any case."""
        ret = _lib.ordlock_set_revoke_signal(self._handle(), int(sig))
        if ret < 0:
            raise self._error(ret, "set_revoke_signal")

    def revoked_keys(self):
        """After Revoked: the (Key, token) pairs the kernel revoked."""
        arr = (_RevokedKey * 256)()
        n = _lib.ordlock_revoked_keys(self._handle(), arr, 256)
        return [(_from_c(r.key), r.token) for r in arr[:max(n, 0)]]

    def token_check(self, k, token, domain=None):
        """True when token is the live grant of key k (in domain, default
        this owner's), False when it is stale. Holds nothing."""
        k = key(k, EXCLUSIVE, self.ranks)
        ret = _lib.ordlock_token_check(self._handle(),
                                       domain.encode() if domain else None,
                                       k.rank, k.id, int(token))
        if ret == -_errno.ESTALE:
            return False
        if ret < 0:
            raise _plain_error(-ret, "token_check")
        return True

    def try_acquire(self, *keys, mode=EXCLUSIVE):
        """acquire() that never waits (Busy)."""
        return self.acquire(*keys, mode=mode, nowait=True)

    def release(self, *keys, mode=EXCLUSIVE):
        """Release the given held keys (all or none: NotHeld), or all."""
        if not keys:
            ret = _lib.ordlock_release_all(self._handle())
        else:
            ks = self._keys(keys, mode)
            arr = (_Key * len(ks))(*[k._c() for k in ks])
            ret = _lib.ordlock_release(self._handle(), arr, len(ks))
        if ret < 0:
            raise self._error(ret, "release")

    def convert(self, k, mode, timeout=None, nowait=False):
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

    def info(self):
        """A dict: owner_id, nheld, policy, domain, last_token."""
        inf = _OwnerInfo()
        ret = _lib.ordlock_owner_info(self._handle(), ctypes.byref(inf))
        if ret < 0:
            raise self._error(ret, "owner_info")
        return {"owner_id": inf.owner_id, "nheld": inf.nheld,
                "policy": policy_name(inf.policy), "domain": _s(inf.domain),
                "last_token": inf.last_token}

    def set_domain(self, domain):
        """Move to another domain; the owner must hold nothing."""
        ret = _lib.ordlock_set_domain(self._handle(), domain.encode())
        if ret == -_errno.EDQUOT:
            raise self._error(ret, "set_domain(%s)" % domain)
        if ret < 0:
            raise _plain_error(-ret, "set_domain(%s)" % domain)
        self.domain = domain

    def fileno(self):
        return _lib.ordlock_fd(self._handle())

    def close(self):
        """Release everything and close."""
        if self._ol:
            _lib.ordlock_close(self._ol)
            self._ol = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


class Held:
    """Keys held after a successful acquire; ``with`` releases them (and
    closes the owner when acquire() opened it)."""

    def __init__(self, owner, keys, token, own_owner=False):
        self.owner = owner
        self.keys = list(keys)
        self.token = token
        self._own = own_owner
        self.released = False

    def renew(self, lease=None):
        """Owner.renew(): extend the lease; returns the seconds left."""
        return self.owner.renew(lease)

    def convert(self, k, mode, timeout=None, nowait=False):
        """Change the mode of one of the held keys; updates .token."""
        self.token = self.owner.convert(k, mode, timeout, nowait)
        return self.token

    def release(self):
        if self.released:
            return
        self.released = True
        if self._own:
            self.owner.close()
        else:
            self.owner.release(*self.keys)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __repr__(self):
        return "<ordlock.Held %s token %d>" % (
            ", ".join(str(k) for k in self.keys), self.token)


def acquire(*keys, domain=None, timeout=None, mode=EXCLUSIVE, ranks=None,
            nowait=False, lease=None):
    """Open an owner in domain and take the keys all or nothing; returns a
    Held whose release (or the end of the ``with`` block) closes the owner.

        with ordlock.acquire(("orders", 10), ("inventories", 20), timeout=5):
            ...
    """
    owner = Owner(domain, ranks)
    try:
        held = owner.acquire(*keys, timeout=timeout, mode=mode, nowait=nowait,
                             lease=lease)
    except BaseException:
        owner.close()
        raise
    held._own = True
    return held


def try_acquire(*keys, **kw):
    """acquire() that never waits (Busy)."""
    kw["nowait"] = True
    return acquire(*keys, **kw)


def domain_config(domain):
    """The settings of a domain: a dict policy, detect_delay_ms, nowners."""
    with Owner() as o:
        cfg = _DomainConfig(size=ctypes.sizeof(_DomainConfig))
        ret = _lib.ordlock_domain_config(o._handle(), domain.encode(),
                                         ctypes.byref(cfg))
        if ret < 0:
            raise _plain_error(-ret, "domain_config(%s)" % domain)
        return {"policy": policy_name(cfg.policy),
                "detect_delay_ms": cfg.detect_delay_ms,
                "nowners": cfg.nowners, "max_hold_ms": cfg.max_hold_ms}


def set_max_hold(domain, max_hold_ms):
    """Set a domain's max_hold_ms (0: no limit): the longest lease of a
    grant, and the lease of one that asks for none; needs CAP_SYS_ADMIN."""
    with Owner() as o:
        ret = _lib.ordlock_set_max_hold(o._handle(), domain.encode(),
                                        int(max_hold_ms))
        if ret < 0:
            raise _plain_error(-ret, "set_max_hold(%s)" % domain)


def token_check(k, token, domain=None, ranks=None):
    """For storage that fences writes: True when token is the live grant
    of key k in domain (default "default"), False when it is stale."""
    with Owner(ranks=ranks) as o:
        return o.token_check(k, token, domain or "default")


def set_policy(domain, policy, detect_delay_ms=0):
    """Set a domain's policy ("enforce", "detect", "timeout" or the
    number) and detection delay; needs CAP_SYS_ADMIN."""
    if isinstance(policy, str):
        policy = _POLICIES[policy]
    with Owner() as o:
        ret = _lib.ordlock_set_policy(o._handle(), domain.encode(), policy,
                                      detect_delay_ms)
        if ret < 0:
            raise _plain_error(-ret, "set_policy(%s)" % domain)
