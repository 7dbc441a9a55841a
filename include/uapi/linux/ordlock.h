/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ordlock: ordered multi-resource locks for processes.
 *
 * DOC: Overview
 *
 * A process opens /dev/ordlock. Each open file description is one *owner*:
 * every lock it takes belongs to it and is released when the last reference
 * to the file description is dropped (close, exit, kill -9).
 *
 * Every owner lives in one *domain*, a named lock namespace ("default" unless
 * the owner picks another with %ORDLOCK_IOC_SET_DOMAIN while it holds
 * nothing). Keys of different domains never contend.
 *
 * A *key* is a pair (rank, id): a 32-bit rank (the kind of resource, or a
 * level of a lock hierarchy) and a 64-bit id. Keys are totally ordered by
 * rank first, then id.
 *
 * %ORDLOCK_IOC_ACQUIRE takes an array of keys, each in shared or exclusive
 * mode. The kernel copies it once, validates it, sorts it and merges
 * duplicates (the stronger mode wins). It then takes the keys in ascending
 * order, waiting on each in turn, and grants the whole set or nothing: when
 * the request fails for any reason, every key it took is released before
 * the ioctl returns. A successful acquire returns a *fencing token*, a
 * number that grows with every grant in the domain.
 *
 * The order rule: in a domain with policy %ORDLOCK_POLICY_ENFORCE (the
 * default), an owner that holds keys may only acquire keys that sort above
 * every key it holds. Any other request fails at once with %EDEADLK and
 * reason %ORDLOCK_REASON_ORDER; the failure record names the held key and
 * the requested key in conflict. This rule makes a cycle of waits
 * impossible among the owners that obey it.
 *
 * Every wait is bounded: by the caller's timeout, or by the domain default
 * when the caller gives none, and never by more than the maximum (module
 * parameters default_timeout_ms and max_timeout_ms). The timeout covers the
 * whole request. %ORDLOCK_ACQUIRE_TRY never waits.
 *
 * Each resource grants in FIFO order: a request is granted at once only if
 * it is compatible with the current holders and nobody is queued ahead of
 * it; a release grants the head of the queue, and every following waiter
 * compatible with it. A queued exclusive request is therefore never
 * starved by a stream of shared ones.
 *
 * DOC: ioctl structures
 *
 * Every ioctl argument starts with a __u32 @size: the caller sets it to
 * sizeof() the structure it was compiled with. The kernel accepts any size
 * from the first published size of that structure up to a page; bytes past
 * the end of the kernel's own structure must be zero (%E2BIG otherwise).
 * Output fields are written back only up to the caller's @size. Fields named
 * __reserved must be zero, and unknown flag bits are rejected with %EINVAL,
 * so every structure can grow.
 *
 * The ioctl numbers do not encode the size (as in iommufd): _IO(type, nr).
 *
 * DOC: Errors
 *
 * Every ioctl returns 0 or -1 with errno set. On failure of
 * %ORDLOCK_IOC_ACQUIRE, %ORDLOCK_IOC_CONVERT and %ORDLOCK_IOC_RELEASE the
 * @failure field of the argument is filled in (when the caller's @size
 * covers it), and the same record can be read later with
 * %ORDLOCK_IOC_LAST_FAILURE.
 *
 * =========  =================================================================
 * errno      meaning
 * =========  =================================================================
 * EINVAL     unknown flag, non-zero reserved field, invalid mode, zero keys,
 *            bad domain name, @size too small
 * E2BIG      more keys than max_keys_per_request; or @size larger than the
 *            kernel's structure with non-zero trailing bytes
 * EFAULT     a user pointer (the argument, or the keys array) is not readable
 *            or writable
 * ENOTTY     unknown ioctl
 * EDEADLK    order violation (%ORDLOCK_REASON_ORDER): a requested key sorts at
 *            or below a held key; or a deadlock was detected and this request
 *            was chosen as the victim (%ORDLOCK_REASON_DEADLOCK,
 *            %ORDLOCK_REASON_UPGRADE)
 * ETIMEDOUT  the wait timed out (%ORDLOCK_REASON_TIMEOUT); @failure names the
 *            key waited for and the pid of one holder
 * EAGAIN     %ORDLOCK_ACQUIRE_TRY and a key is not free
 *            (%ORDLOCK_REASON_BUSY); same details as ETIMEDOUT
 * EINTR      a signal interrupted the wait (%ORDLOCK_REASON_SIGNAL)
 * ENOSPC     the owner would hold more than max_keys_per_owner keys
 *            (%ORDLOCK_REASON_OWNER_LIMIT), or the system would track more
 *            than max_resources resources (%ORDLOCK_REASON_RESOURCE_LIMIT)
 * ENOENT     release or convert of a key the owner does not hold
 *            (%ORDLOCK_REASON_NOT_HELD)
 * EBUSY      %ORDLOCK_IOC_SET_DOMAIN while the owner holds or waits for keys
 * EPERM      %ORDLOCK_IOC_DOMAIN_CONFIG changes without CAP_SYS_ADMIN
 * ENOMEM     the kernel ran out of memory; nothing was taken
 * =========  =================================================================
 */
#ifndef _UAPI_LINUX_ORDLOCK_H
#define _UAPI_LINUX_ORDLOCK_H

#include <linux/types.h>
#include <linux/ioctl.h>

/** ORDLOCK_DEVICE - path of the character device */
#define ORDLOCK_DEVICE "/dev/ordlock"

/** ORDLOCK_DOMAIN_NAME_MAX - size of a domain name, NUL included */
#define ORDLOCK_DOMAIN_NAME_MAX 32

/** ORDLOCK_DEFAULT_DOMAIN - the domain of a new owner */
#define ORDLOCK_DEFAULT_DOMAIN "default"

/**
 * enum ordlock_mode - lock modes
 * @ORDLOCK_MODE_SHARED: compatible with other shared holders
 * @ORDLOCK_MODE_EXCLUSIVE: compatible with nothing
 *
 * Zero is not a mode: a key with mode 0 is rejected where a mode is
 * required, and means "any" where it is not (release).
 */
enum ordlock_mode {
	ORDLOCK_MODE_SHARED = 1,
	ORDLOCK_MODE_EXCLUSIVE = 2,
};

/**
 * struct ordlock_key - one key of a request
 * @id: the resource id within its rank
 * @rank: the kind of resource, or the level of a hierarchy; sorts first
 * @mode: an &enum ordlock_mode
 * @__reserved: must be zero
 *
 * Keys are ordered by (@rank, @id); @mode plays no part in the order.
 */
struct ordlock_key {
	__u64 id;
	__u32 rank;
	__u16 mode;
	__u16 __reserved;
};

/**
 * enum ordlock_reason - why a request failed
 * @ORDLOCK_REASON_NONE: no failure recorded
 * @ORDLOCK_REASON_INVALID: bad input (EINVAL, E2BIG, EFAULT)
 * @ORDLOCK_REASON_ORDER: order violation: @key sorts at or below the held
 *	key @held (EDEADLK)
 * @ORDLOCK_REASON_TIMEOUT: timed out waiting for @key held by @pid
 *	(ETIMEDOUT)
 * @ORDLOCK_REASON_BUSY: try-acquire found @key held by @pid (EAGAIN)
 * @ORDLOCK_REASON_SIGNAL: a signal interrupted the wait for @key (EINTR)
 * @ORDLOCK_REASON_DEADLOCK: waiting for @key would close a cycle of waits;
 *	this request was chosen as the victim (EDEADLK)
 * @ORDLOCK_REASON_UPGRADE: two shared holders of @key both asked to
 *	upgrade it; @pid is the other one (EDEADLK)
 * @ORDLOCK_REASON_OWNER_LIMIT: the owner would hold too many keys (ENOSPC)
 * @ORDLOCK_REASON_RESOURCE_LIMIT: too many resources in use (ENOSPC)
 * @ORDLOCK_REASON_NOT_HELD: @key is not held by the owner (ENOENT)
 * @ORDLOCK_REASON_NOMEM: out of kernel memory (ENOMEM)
 */
enum ordlock_reason {
	ORDLOCK_REASON_NONE = 0,
	ORDLOCK_REASON_INVALID,
	ORDLOCK_REASON_ORDER,
	ORDLOCK_REASON_TIMEOUT,
	ORDLOCK_REASON_BUSY,
	ORDLOCK_REASON_SIGNAL,
	ORDLOCK_REASON_DEADLOCK,
	ORDLOCK_REASON_UPGRADE,
	ORDLOCK_REASON_OWNER_LIMIT,
	ORDLOCK_REASON_RESOURCE_LIMIT,
	ORDLOCK_REASON_NOT_HELD,
	ORDLOCK_REASON_NOMEM,
};

/**
 * struct ordlock_failure - why the last request failed, and the culprit
 * @reason: an &enum ordlock_reason
 * @error: the positive errno the request returned
 * @pid: a holder of @key (TIMEOUT, BUSY), the other upgrader (UPGRADE),
 *	the owner whose wait closed the cycle (DEADLOCK); 0 when unknown
 * @index: position of @key in the caller's array, before sorting; ~0U when
 *	the failure concerns no single key of the array
 * @key: the requested key concerned; its @mode is the mode requested
 * @held: the held key in conflict (ORDER), with the mode it is held in
 * @holder_mode: the mode in which @pid holds @key (TIMEOUT, BUSY)
 * @cycle_len: number of steps of the detected cycle (DEADLOCK); read them
 *	with %ORDLOCK_IOC_LAST_FAILURE
 */
struct ordlock_failure {
	__u32 reason;
	__u32 error;
	__u32 pid;
	__u32 index;
	struct ordlock_key key;
	struct ordlock_key held;
	__u32 holder_mode;
	__u32 cycle_len;
};

/* Flags of struct ordlock_acquire */
/** ORDLOCK_ACQUIRE_TRY - never wait: fail with EAGAIN if a key is not free */
#define ORDLOCK_ACQUIRE_TRY		(1U << 0)
#define ORDLOCK_ACQUIRE_FLAGS		ORDLOCK_ACQUIRE_TRY

/**
 * struct ordlock_acquire - argument of %ORDLOCK_IOC_ACQUIRE
 * @size: sizeof(struct ordlock_acquire)
 * @flags: %ORDLOCK_ACQUIRE_TRY, or 0
 * @nkeys: number of keys in @keys; 1 to max_keys_per_request
 * @__reserved: must be zero
 * @keys: user pointer to an array of @nkeys &struct ordlock_key
 * @timeout_ns: the longest the whole request may wait, in nanoseconds;
 *	0 means the domain default; values above the maximum are capped
 * @token: out: the fencing token of the grant
 * @failure: out: the reason and culprit when the ioctl fails
 */
struct ordlock_acquire {
	__u32 size;
	__u32 flags;
	__u32 nkeys;
	__u32 __reserved;
	__aligned_u64 keys;
	__aligned_u64 timeout_ns;
	__aligned_u64 token;
	struct ordlock_failure failure;
};

/* Flags of struct ordlock_release */
/** ORDLOCK_RELEASE_ALL - release every key the owner holds; @nkeys must be 0 */
#define ORDLOCK_RELEASE_ALL		(1U << 0)
#define ORDLOCK_RELEASE_FLAGS		ORDLOCK_RELEASE_ALL

/**
 * struct ordlock_release - argument of %ORDLOCK_IOC_RELEASE
 * @size: sizeof(struct ordlock_release)
 * @flags: %ORDLOCK_RELEASE_ALL, or 0 to release the keys in @keys
 * @nkeys: number of keys in @keys (0 with %ORDLOCK_RELEASE_ALL)
 * @__reserved: must be zero
 * @keys: user pointer to an array of &struct ordlock_key; @mode is ignored
 *	but must be 0 or a valid mode. Either every key is held and all are
 *	released, or nothing is (ENOENT names the first key not held)
 * @released: out: how many keys were released
 * @__reserved2: must be zero
 * @failure: out: the reason and culprit when the ioctl fails
 */
struct ordlock_release {
	__u32 size;
	__u32 flags;
	__u32 nkeys;
	__u32 __reserved;
	__aligned_u64 keys;
	__u32 released;
	__u32 __reserved2;
	struct ordlock_failure failure;
};

/**
 * struct ordlock_set_domain - argument of %ORDLOCK_IOC_SET_DOMAIN
 * @size: sizeof(struct ordlock_set_domain)
 * @flags: must be 0
 * @name: NUL-terminated domain name of 1 to %ORDLOCK_DOMAIN_NAME_MAX - 1
 *	characters from [A-Za-z0-9._-]; the bytes after the NUL must be zero
 *
 * Moves the owner to the named domain, creating it when needed. Fails with
 * EBUSY while the owner holds or waits for keys.
 */
struct ordlock_set_domain {
	__u32 size;
	__u32 flags;
	char name[ORDLOCK_DOMAIN_NAME_MAX];
};

/**
 * struct ordlock_owner_info - argument of %ORDLOCK_IOC_OWNER_INFO
 * @size: sizeof(struct ordlock_owner_info)
 * @flags: must be 0
 * @owner_id: out: the owner's id, unique while the module is loaded
 * @nheld: out: number of keys held
 * @policy: out: the domain's &enum ordlock_policy
 * @domain: out: the domain's name
 * @last_token: out: the fencing token of the owner's last grant (0: none)
 */
struct ordlock_owner_info {
	__u32 size;
	__u32 flags;
	__aligned_u64 owner_id;
	__u32 nheld;
	__u32 policy;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	__aligned_u64 last_token;
};

/**
 * enum ordlock_policy - how a domain deals with cycles
 * @ORDLOCK_POLICY_ENFORCE: the order rule is enforced (default)
 * @ORDLOCK_POLICY_DETECT: any order; a wait that closes a cycle fails
 * @ORDLOCK_POLICY_TIMEOUT: any order; cycles are broken by timeouts only
 */
enum ordlock_policy {
	ORDLOCK_POLICY_ENFORCE = 0,
	ORDLOCK_POLICY_DETECT = 1,
	ORDLOCK_POLICY_TIMEOUT = 2,
};

/**
 * enum ordlock_edge - why a waiter waits for another owner
 * @ORDLOCK_EDGE_HARD: the other owner holds the key in a conflicting mode
 * @ORDLOCK_EDGE_SOFT: the other owner is queued ahead on the key with a
 *	conflicting request
 */
enum ordlock_edge {
	ORDLOCK_EDGE_HARD = 1,
	ORDLOCK_EDGE_SOFT = 2,
};

/** ORDLOCK_COMM_LEN - size of a command name, NUL included */
#define ORDLOCK_COMM_LEN 16

/**
 * struct ordlock_cycle_step - one step of a cycle of waits
 * @owner_id: the waiting owner
 * @pid: its process id (of the last task that made a request)
 * @edge: an &enum ordlock_edge: how the next step's owner blocks this one
 * @key: the key this owner waits for; @key.mode is the mode it asked for
 * @blocker_mode: the mode in which the next step's owner holds (HARD) or
 *	asks for (SOFT) @key
 * @__reserved: zero
 * @comm: the command name of @pid
 *
 * Step i waits for the owner of step i + 1; the last step waits for the
 * owner of step 0.
 */
struct ordlock_cycle_step {
	__aligned_u64 owner_id;
	__u32 pid;
	__u32 edge;
	struct ordlock_key key;
	__u32 blocker_mode;
	__u32 __reserved;
	char comm[ORDLOCK_COMM_LEN];
};

/** ORDLOCK_CYCLE_MAX - most steps of a cycle the kernel records */
#define ORDLOCK_CYCLE_MAX 64

/**
 * struct ordlock_last_failure - argument of %ORDLOCK_IOC_LAST_FAILURE
 * @size: sizeof(struct ordlock_last_failure)
 * @flags: must be 0
 * @failure: out: the owner's last failure record (reason NONE if none)
 * @nsteps: in: room in @steps, in steps; out: steps written, at most
 *	@failure.cycle_len and at most %ORDLOCK_CYCLE_MAX
 * @__reserved: must be zero
 * @steps: user pointer to an array of &struct ordlock_cycle_step, or 0
 *	with @nsteps 0: the cycle of a DEADLOCK failure, victim first
 */
struct ordlock_last_failure {
	__u32 size;
	__u32 flags;
	struct ordlock_failure failure;
	__u32 nsteps;
	__u32 __reserved;
	__aligned_u64 steps;
};

/**
 * struct ordlock_convert - argument of %ORDLOCK_IOC_CONVERT
 * @size: sizeof(struct ordlock_convert)
 * @flags: %ORDLOCK_ACQUIRE_TRY, or 0
 * @key: a held key and the mode it should be held in: exclusive upgrades
 *	a shared hold (and may wait), shared downgrades an exclusive one (and
 *	never waits); the mode it is already held in changes nothing
 * @timeout_ns: as for &struct ordlock_acquire
 * @token: out: the fencing token of the hold (a new one after an upgrade)
 * @failure: out: the reason and culprit when the ioctl fails
 *
 * An upgrade is granted when no other owner holds the key; it is queued
 * ahead of waiters that are not converting, behind earlier conversions.
 * When another shared holder already waits to upgrade the same key, the
 * two can never both succeed: the second fails at once with EDEADLK,
 * reason %ORDLOCK_REASON_UPGRADE, naming the first in @failure.pid.
 * A failed conversion leaves the key held in its old mode.
 */
struct ordlock_convert {
	__u32 size;
	__u32 flags;
	struct ordlock_key key;
	__aligned_u64 timeout_ns;
	__aligned_u64 token;
	struct ordlock_failure failure;
};

/* Flags of struct ordlock_domain_config */
/** ORDLOCK_DOMAIN_SET_POLICY - set @policy */
#define ORDLOCK_DOMAIN_SET_POLICY	(1U << 0)
/** ORDLOCK_DOMAIN_SET_DETECT_DELAY - set @detect_delay_ms */
#define ORDLOCK_DOMAIN_SET_DETECT_DELAY	(1U << 1)
#define ORDLOCK_DOMAIN_FLAGS		(ORDLOCK_DOMAIN_SET_POLICY | \
					 ORDLOCK_DOMAIN_SET_DETECT_DELAY)

/**
 * struct ordlock_domain_config - argument of %ORDLOCK_IOC_DOMAIN_CONFIG
 * @size: sizeof(struct ordlock_domain_config)
 * @flags: which settings to change: ORDLOCK_DOMAIN_SET_*; 0 only reads.
 *	Changing needs CAP_SYS_ADMIN (EPERM otherwise)
 * @name: the domain, as for &struct ordlock_set_domain; created if needed.
 *	A domain that was configured lives until the module is unloaded
 * @policy: in/out: an &enum ordlock_policy
 * @detect_delay_ms: in/out: in a %ORDLOCK_POLICY_DETECT domain, how long a
 *	waiter waits before it looks for a cycle (PostgreSQL's
 *	deadlock_timeout); 0 looks at once
 * @nowners: out: owners in the domain
 * @__reserved: must be zero
 */
struct ordlock_domain_config {
	__u32 size;
	__u32 flags;
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	__u32 policy;
	__u32 detect_delay_ms;
	__u32 nowners;
	__u32 __reserved;
};

#define ORDLOCK_IOC_TYPE	0xB7

/**
 * ORDLOCK_IOC_ACQUIRE - acquire a set of keys, all or nothing
 *
 * Argument: &struct ordlock_acquire. See DOC: Overview for the rules and
 * DOC: Errors for the errors.
 */
#define ORDLOCK_IOC_ACQUIRE		_IO(ORDLOCK_IOC_TYPE, 0x01)

/**
 * ORDLOCK_IOC_RELEASE - release all keys, or the given held keys
 *
 * Argument: &struct ordlock_release. Releasing wakes the waiters that can
 * now be granted, in FIFO order.
 */
#define ORDLOCK_IOC_RELEASE		_IO(ORDLOCK_IOC_TYPE, 0x02)

/**
 * ORDLOCK_IOC_SET_DOMAIN - move the owner to a named domain
 *
 * Argument: &struct ordlock_set_domain.
 */
#define ORDLOCK_IOC_SET_DOMAIN		_IO(ORDLOCK_IOC_TYPE, 0x03)

/**
 * ORDLOCK_IOC_OWNER_INFO - describe the calling owner
 *
 * Argument: &struct ordlock_owner_info.
 */
#define ORDLOCK_IOC_OWNER_INFO		_IO(ORDLOCK_IOC_TYPE, 0x04)

/**
 * ORDLOCK_IOC_LAST_FAILURE - read the owner's last failure record
 *
 * Argument: &struct ordlock_last_failure. The record is kept until the
 * next request of the owner fails.
 */
#define ORDLOCK_IOC_LAST_FAILURE	_IO(ORDLOCK_IOC_TYPE, 0x05)

/**
 * ORDLOCK_IOC_CONVERT - upgrade or downgrade a held key
 *
 * Argument: &struct ordlock_convert.
 */
#define ORDLOCK_IOC_CONVERT		_IO(ORDLOCK_IOC_TYPE, 0x06)

/**
 * ORDLOCK_IOC_DOMAIN_CONFIG - read or change a domain's policy
 *
 * Argument: &struct ordlock_domain_config. Changing needs CAP_SYS_ADMIN.
 */
#define ORDLOCK_IOC_DOMAIN_CONFIG	_IO(ORDLOCK_IOC_TYPE, 0x07)

#endif /* _UAPI_LINUX_ORDLOCK_H */
