/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libordlock: ordered multi-resource locks from C, over /dev/ordlock.
 *
 * Every function that can fail returns 0 on success or a negative errno
 * (and also sets errno), so callers may test either. After a failure,
 * ordlock_last_failure() describes the reason and the culprit, and
 * ordlock_strfailure() turns it into a sentence.
 *
 * One struct ordlock is one owner: locks belong to it and are released by
 * ordlock_close() or when the process dies. A handle serves one request at
 * a time; threads that lock independently open one handle each.
 */
#ifndef LIBORDLOCK_H
#define LIBORDLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <linux/ordlock.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ordlock;

/** ordlock_open() - open an owner in @domain (NULL: "default"). NULL + errno on failure. */
struct ordlock *ordlock_open(const char *domain);

/**
 * ordlock_open_fd() - a handle for @fd, a descriptor of /dev/ordlock opened
 * elsewhere (inherited, passed over a socket). The owner is the open file
 * description: every descriptor of it shares the keys. NULL + errno
 * (ENOTTY: not /dev/ordlock, EBADF) on failure. ordlock_close() closes @fd.
 */
struct ordlock *ordlock_open_fd(int fd);

/**
 * ordlock_detach() - free the handle but leave its descriptor open and the
 * owner's keys held (for a descriptor that lives on elsewhere).
 */
void ordlock_detach(struct ordlock *ol);

/** ordlock_close() - release everything the owner holds and free the handle. */
void ordlock_close(struct ordlock *ol);

/** ordlock_fd() - the owner's file descriptor on /dev/ordlock. */
int ordlock_fd(const struct ordlock *ol);

/** ordlock_set_domain() - move the owner to @domain; it must hold nothing. */
int ordlock_set_domain(struct ordlock *ol, const char *domain);

/** ordlock_key() - build a key. */
static inline struct ordlock_key ordlock_key(uint32_t rank, uint64_t id,
					     unsigned int mode)
{
	struct ordlock_key k = { .id = id, .rank = rank, .mode = (uint16_t)mode };

	return k;
}

#define ORDLOCK_SH(rank, id) ordlock_key((rank), (id), ORDLOCK_MODE_SHARED)
#define ORDLOCK_EX(rank, id) ordlock_key((rank), (id), ORDLOCK_MODE_EXCLUSIVE)

/** ORDLOCK_TIMEOUT_DEFAULT - use the domain's default timeout */
#define ORDLOCK_TIMEOUT_DEFAULT 0

/**
 * ordlock_acquire() - take @n keys all or nothing, waiting at most
 * @timeout_ms milliseconds (ORDLOCK_TIMEOUT_DEFAULT: the domain default).
 * @flags: ORDLOCK_ACQUIRE_TRY or 0. @token (may be NULL) receives the
 * fencing token.
 */
int ordlock_acquire(struct ordlock *ol, const struct ordlock_key *keys,
		    unsigned int n, unsigned int timeout_ms, unsigned int flags,
		    uint64_t *token);

/**
 * ordlock_result_flags() - the ORDLOCK_RESULT_* flags of the owner's last
 * ordlock_acquire(), successful or not: ORDLOCK_RESULT_RELEASED when an
 * ORDLOCK_ACQUIRE_REORDER request let held keys go in between (on success
 * they are held again, with the new token: read again what they protect;
 * on failure they are no longer held, from ordlock_last_failure()->held up).
 */
unsigned int ordlock_result_flags(const struct ordlock *ol);

/**
 * ordlock_acquire_lease() - ordlock_acquire() with a lease of @lease_ms
 * (0: the domain's max_hold_ms). When the lease expires without a
 * ordlock_renew(), the kernel revokes every key the owner holds: the next
 * call fails with EKEYEXPIRED (reason "revoked") until
 * ordlock_release_all() acknowledges. See ordlock(4), "Leases".
 */
int ordlock_acquire_lease(struct ordlock *ol, const struct ordlock_key *keys,
			  unsigned int n, unsigned int timeout_ms,
			  unsigned int flags, unsigned int lease_ms,
			  uint64_t *token);

/**
 * ordlock_renew() - move the deadline of the owner's lease to now + the
 * period (@lease_ms, or 0 for the one it has). @left_ms (may be NULL)
 * receives the time left, 0 when the holds have no lease. ENOENT: nothing
 * held; EKEYEXPIRED: too late, revoked.
 */
int ordlock_renew(struct ordlock *ol, unsigned int lease_ms, uint64_t *left_ms);

/**
 * ordlock_set_revoke_signal() - send signal @sig (0: none) to this process
 * when the owner's lease is revoked. poll() on ordlock_fd() reports POLLPRI
 * then, with or without a signal.
 */
int ordlock_set_revoke_signal(struct ordlock *ol, int sig);

/**
 * ordlock_revoked_keys() - after EKEYEXPIRED: copy the revoked keys with
 * the tokens they were held under into @keys, at most @max.
 * Returns the number copied, or -errno.
 */
int ordlock_revoked_keys(struct ordlock *ol, struct ordlock_revoked_key *keys,
			 unsigned int max);

/**
 * ordlock_token_check() - for storage that fences writes: 0 when @token is
 * the live grant of key (@rank, @id) in @domain (NULL: the owner's),
 * -ESTALE when it is not. The answer holds nothing.
 */
int ordlock_token_check(struct ordlock *ol, const char *domain,
			uint32_t rank, uint64_t id, uint64_t token);

/** ordlock_set_max_hold() - set the max_hold_ms of @domain (CAP_SYS_ADMIN). */
int ordlock_set_max_hold(struct ordlock *ol, const char *domain,
			 unsigned int max_hold_ms);

/** ordlock_try_acquire() - ordlock_acquire() that never waits (EAGAIN). */
int ordlock_try_acquire(struct ordlock *ol, const struct ordlock_key *keys,
			unsigned int n, uint64_t *token);

/** ordlock_release() - release @n held keys; all of them or none (ENOENT). */
int ordlock_release(struct ordlock *ol, const struct ordlock_key *keys,
		    unsigned int n);

/** ordlock_release_all() - release every key the owner holds. */
int ordlock_release_all(struct ordlock *ol);

/** ordlock_owner_info() - fill @info about the owner. */
int ordlock_owner_info(struct ordlock *ol, struct ordlock_owner_info *info);

/**
 * ordlock_last_failure() - the owner's last failure, as recorded by the
 * library after a failed call (reason ORDLOCK_REASON_NONE if none).
 */
const struct ordlock_failure *ordlock_last_failure(const struct ordlock *ol);

/**
 * ordlock_kernel_last_failure() - read the kernel's copy of the owner's
 * last failure record (ORDLOCK_IOC_LAST_FAILURE) into @f.
 */
int ordlock_kernel_last_failure(struct ordlock *ol, struct ordlock_failure *f);

/** ordlock_reason_name() - "order", "timeout", ... for an enum ordlock_reason. */
const char *ordlock_reason_name(unsigned int reason);

/** ordlock_mode_name() - "shared", "exclusive" or "none". */
const char *ordlock_mode_name(unsigned int mode);

/**
 * ordlock_strfailure() - describe @f in @buf, e.g.
 * "timed out waiting for exclusive 1:2 held (exclusive) by pid 102".
 * Returns @buf.
 */
char *ordlock_strfailure(const struct ordlock_failure *f, char *buf, size_t len);

/**
 * ordlock_convert() - change the mode of a held key: @key.mode exclusive
 * upgrades (may wait up to @timeout_ms; EDEADLK with reason "upgrade" when
 * another holder already waits to upgrade it), shared downgrades.
 * @flags: ORDLOCK_ACQUIRE_TRY or 0.
 */
int ordlock_convert(struct ordlock *ol, struct ordlock_key key,
		    unsigned int timeout_ms, unsigned int flags, uint64_t *token);

/**
 * ordlock_domain_config() - read (@cfg->flags 0) or change (flags
 * ORDLOCK_DOMAIN_SET_*, needs CAP_SYS_ADMIN) the settings of @domain.
 * Fills @cfg with the settings in force: the whole structure when
 * @cfg->size is 0 (set it to 0, e.g. by memset()), or the first
 * @cfg->size bytes of it when the caller's structure is an older,
 * smaller one (the fast path's fields came last).
 */
int ordlock_domain_config(struct ordlock *ol, const char *domain,
			  struct ordlock_domain_config *cfg);

/** ordlock_set_policy() - set the policy and detection delay of @domain. */
int ordlock_set_policy(struct ordlock *ol, const char *domain,
		       unsigned int policy, unsigned int detect_delay_ms);

/**
 * ordlock_set_label() - name the code path of the owner (@label up to 31
 * characters of [A-Za-z0-9._-]; "" or NULL removes it). Shown in every
 * view, event and report of the owner.
 */
int ordlock_set_label(struct ordlock *ol, const char *label);

/**
 * ordlock_get_order() - read the lock order learned in @domain: up to
 * @max edges into @edges, up to @maxwords words of potential deadlocks
 * into @words (each [kind, n, n edge indexes]); @info receives the counts
 * (nedges, npotential_words, npotential, dropped, nranks, max_edges,
 * learning). Returns 0 or -errno (ENOENT: no such domain).
 */
int ordlock_get_order(struct ordlock *ol, const char *domain,
		      struct ordlock_order_edge *edges, unsigned int max,
		      uint32_t *words, unsigned int maxwords,
		      struct ordlock_order_get *info);

/**
 * ordlock_reset_order() - forget the lock order learned in @domain (needs
 * CAP_SYS_ADMIN).
 */
int ordlock_reset_order(struct ordlock *ol, const char *domain);

/**
 * ordlock_last_cycle() - copy the cycle of the owner's last deadlock
 * (victim first) into @steps, at most @max steps.
 * Returns the number of steps copied, or -errno.
 */
int ordlock_last_cycle(struct ordlock *ol, struct ordlock_cycle_step *steps,
		       unsigned int max);

/**
 * ordlock_last_cycle_nodes() - as ordlock_last_cycle(), and each step's
 * node id in @nodes (@max entries, or NULL): 0 for this node, the corosync
 * node id of a step of another node (a cycle across nodes of a cluster
 * domain; the step has %ORDLOCK_STEP_OTHER_NODE).
 */
int ordlock_last_cycle_nodes(struct ordlock *ol, struct ordlock_cycle_step *steps,
			     uint32_t *nodes, unsigned int max);

/**
 * ordlock_set_strict() - strict ranks in @domain (1) or not (0): a key
 * whose rank is not above every held rank is refused (EDEADLK, reason
 * "strict"). Needs CAP_SYS_ADMIN.
 */
int ordlock_set_strict(struct ordlock *ol, const char *domain, int strict);

/** ordlock_policy_name() - "enforce", "detect", "timeout" or "unknown". */
const char *ordlock_policy_name(unsigned int policy);

/**
 * ordlock_strcycle() - describe a cycle in @buf, e.g. "pid 101 (transfer)
 * waits for exclusive 1:2 held by pid 102 (transfer); pid 102 ...".
 */
char *ordlock_strcycle(const struct ordlock_cycle_step *steps, unsigned int n,
		       char *buf, size_t len);

/**
 * ordlock_strcycle_nodes() - as ordlock_strcycle(), a step of another node
 * named as "node 2 pid 812 (transfer)" (@nodes: ordlock_last_cycle_nodes()'s,
 * or NULL: "another node pid 812 ...")
 */
char *ordlock_strcycle_nodes(const struct ordlock_cycle_step *steps,
			     const uint32_t *nodes, unsigned int n, char *buf,
			     size_t len);

/* --- retries ------------------------------------------------------------- */

/** ORDLOCK_RETRY_ATTEMPTS - attempts of ordlock_retry() when not given */
#define ORDLOCK_RETRY_ATTEMPTS	8
/** ORDLOCK_RETRY_BASE_MS - the first backoff ceiling when not given */
#define ORDLOCK_RETRY_BASE_MS	10
/** ORDLOCK_RETRY_CAP_MS - the largest backoff ceiling when not given */
#define ORDLOCK_RETRY_CAP_MS	1000
/** ORDLOCK_RETRY_NO_JITTER - sleep the whole ceiling (for tests only) */
#define ORDLOCK_RETRY_NO_JITTER	(1U << 0)
/** ORDLOCK_RETRY_FLAGS - every flag of &struct ordlock_retry */
#define ORDLOCK_RETRY_FLAGS	ORDLOCK_RETRY_NO_JITTER

/**
 * struct ordlock_retry - how ordlock_retry() retries; zero fields take the
 * defaults (a NULL policy: all of them)
 * @max_attempts: attempts in all, the first included (ORDLOCK_RETRY_ATTEMPTS)
 * @max_total_ms: the whole call, backoffs and waits included, ends by then
 *	(0: no bound but the attempts); each attempt's wait is cut to fit
 * @base_ms: the backoff ceiling after the first failure (ORDLOCK_RETRY_BASE_MS);
 *	it doubles after each failure up to @max_backoff_ms
 * @max_backoff_ms: the largest ceiling (ORDLOCK_RETRY_CAP_MS)
 * @timeout_ms: the timeout of each acquire (0: the domain default)
 * @acquire_flags: ORDLOCK_ACQUIRE_TRY and/or ORDLOCK_ACQUIRE_REORDER
 * @flags: ORDLOCK_RETRY_NO_JITTER, or 0
 * @attempts: out: the attempts made
 */
struct ordlock_retry {
	unsigned int max_attempts;
	unsigned int max_total_ms;
	unsigned int base_ms;
	unsigned int max_backoff_ms;
	unsigned int timeout_ms;
	unsigned int acquire_flags;
	unsigned int flags;
	unsigned int attempts;
};

/**
 * ordlock_retry_fn - the work ordlock_retry() does under the keys, with
 * the fencing token of the grant. Returns 0 (done), a positive value
 * (done: ordlock_retry() returns it), or a negative errno: the attempt
 * failed, and is retried when ordlock_retryable() says so (an ordlock call
 * of the callback that failed left its record in ordlock_last_failure()).
 */
typedef int (*ordlock_retry_fn)(struct ordlock *ol, uint64_t token, void *arg);

/**
 * ordlock_retryable() - whether retrying can fix failure @err (a positive
 * or negative errno) whose record is @f: a deadlock victim (EDEADLK of
 * reason "deadlock" or "upgrade"), a timeout (ETIMEDOUT), a busy key
 * (EAGAIN), a revoked lease (EKEYEXPIRED). Never an order violation or a
 * strict-rank refusal (EDEADLK of reason "order" or "strict"), bad input,
 * a limit, a signal, nor a thread that waits for itself: a deadlock whose
 * cycle has one step (@f->cycle_len 1), the victim's, waiting for keys
 * its own thread holds through other owners, which never ends.
 */
int ordlock_retryable(int err, const struct ordlock_failure *f);

/**
 * ordlock_retry() - run @fn under @n keys, retrying the whole attempt
 * (acquire, @fn, release) on what retrying can fix, with exponential
 * backoff and full jitter between attempts (a uniform draw from 0 to the
 * ceiling, so that two owners that failed together do not come back
 * together: no livelock), within @r's attempts and total time.
 *
 * The keys are released after each attempt, whatever @fn returned. Returns
 * 0 or @fn's positive value on success (ordlock_last_failure() then says
 * ORDLOCK_REASON_NONE, or revoked: see below); else the last failure's
 * negative errno (errno set; ordlock_last_failure() holds its record), at
 * once when it cannot be fixed by retrying, after the last attempt, or when
 * the next backoff would end past @r->max_total_ms.
 *
 * A lease that expires during an attempt (the domain's max_hold_ms, or one
 * @fn set with ordlock_renew()): the kernel revokes the keys. When the
 * owner held nothing when ordlock_retry() was called, everything revoked
 * was the call's, and ordlock_retry() acknowledges (RELEASE_ALL): the next
 * attempt starts from an ordinary owner. When @fn failed, the attempt is
 * retried as its error says. When @fn succeeded and only the release found
 * the revocation, its work is done and not run again: ordlock_retry()
 * returns @fn's value, and ordlock_last_failure() says ORDLOCK_REASON_REVOKED
 * (error EKEYEXPIRED, the revoked keys): the token @fn had was stale from
 * the deadline on, so what @fn wrote late was refused by storage that
 * checks tokens and accepted by storage that does not; the caller decides.
 * A revocation that also took keys the owner held before the call, or one
 * that came before the call, is the caller's: ordlock_retry() does not
 * acknowledge it and does not retry (retrying cannot succeed): it returns
 * -EKEYEXPIRED (or @fn's value, as above), and the owner's next call fails
 * with EKEYEXPIRED until the caller acknowledges (ordlock_release_all()).
 */
int ordlock_retry(struct ordlock *ol, const struct ordlock_key *keys,
		  unsigned int n, struct ordlock_retry *r,
		  ordlock_retry_fn fn, void *arg);

/* --- lease keep-alive ------------------------------------------------------ */

struct ordlock_keepalive;

/**
 * ordlock_keepalive_fn - called once, on the keep-alive's own thread, when
 * the hold is lost: @err is the negative errno of the renewal that failed
 * (-EKEYEXPIRED: revoked; -ENOENT: the owner holds nothing any more), @f
 * its failure record. It may note the loss (a flag, a write to a pipe,
 * pthread_kill()); it must not call ordlock_*() on the handle, which is
 * the body's.
 */
typedef void (*ordlock_keepalive_fn)(struct ordlock_keepalive *ka, int err,
				     const struct ordlock_failure *f, void *arg);

/**
 * ordlock_keepalive_start() - renew the lease of what @ol holds, on a
 * thread of its own, until ordlock_keepalive_stop(): now (the first
 * renewal is made before it returns: -EKEYEXPIRED, -ENOENT then), then
 * every @interval_ms (0: a third of the lease period), with @lease_ms as
 * the period (0: the one the holds have). The thread also watches the
 * owner's descriptor for POLLPRI, so that a revocation (the deadline
 * passed while the process was stopped, or while the body waited in
 * another request) is reported at once, not at the next renewal: @fn
 * (may be NULL) is called, ordlock_keepalive_error() answers, and
 * ordlock_keepalive_fd() becomes readable. The token is stale from then
 * on. NULL + errno on failure (EINVAL: the holds have no lease).
 */
struct ordlock_keepalive *ordlock_keepalive_start(struct ordlock *ol,
						  unsigned int lease_ms,
						  unsigned int interval_ms,
						  ordlock_keepalive_fn fn,
						  void *arg);

/** ordlock_keepalive_error() - 0 while the hold is kept, else its -errno. */
int ordlock_keepalive_error(const struct ordlock_keepalive *ka);

/**
 * ordlock_keepalive_failure() - the failure record of the renewal that
 * failed (reason ORDLOCK_REASON_NONE while none did).
 */
const struct ordlock_failure *
ordlock_keepalive_failure(const struct ordlock_keepalive *ka);

/**
 * ordlock_keepalive_fd() - an eventfd that becomes readable (POLLIN) when
 * the hold is lost, for poll() loops; closed by ordlock_keepalive_stop().
 */
int ordlock_keepalive_fd(const struct ordlock_keepalive *ka);

/** ordlock_keepalive_renewals() - how many renewals succeeded so far. */
unsigned long ordlock_keepalive_renewals(const struct ordlock_keepalive *ka);

/**
 * ordlock_keepalive_stop() - end the renewals (before releasing the keys),
 * join the thread and free @ka. Returns 0 when the hold was kept to the
 * end, or the -errno of the loss (errno set): never silently.
 */
int ordlock_keepalive_stop(struct ordlock_keepalive *ka);

/* --- is it held? ----------------------------------------------------------- */

/** ORDLOCK_STATE_PIDS - holder pids that &struct ordlock_key_state carries */
#define ORDLOCK_STATE_PIDS	8

/**
 * struct ordlock_key_state - what ordlock_query() saw of one key
 * @mode: 0 (free), ORDLOCK_MODE_SHARED or ORDLOCK_MODE_EXCLUSIVE
 * @nholders: owners that hold it (a shared key may have many)
 * @nwaiters: requests queued for it (waiters, and holders waiting to
 *	convert it)
 * @npids: entries of @pids filled: the first ORDLOCK_STATE_PIDS holders
 * @pids: the holders' pids, in their order on the key
 * @token: the fencing token of the first holder (0: free, or a hold by
 *	the fast path, which has none)
 * @waiter_pid: the pid of the first request queued, 0 when none
 */
struct ordlock_key_state {
	unsigned int mode;
	unsigned int nholders;
	unsigned int nwaiters;
	unsigned int npids;
	uint32_t pids[ORDLOCK_STATE_PIDS];
	uint64_t token;
	uint32_t waiter_pid;
};

/**
 * ordlock_query() - the state of key (@rank, @id) of @domain (NULL:
 * "default") without taking it (proper-lockfile's check(), filelock's
 * is_locked), from the netlink dump GET_LOCKS: whether it is held, how,
 * by whom and how many wait. Needs no owner. The answer holds nothing: it
 * may change right after. Without CAP_NET_ADMIN the dump shows only the
 * owners of the caller's own user: a key held by another user looks free.
 * Returns 0 or -errno (ENOENT: the module is not loaded).
 */
int ordlock_query(const char *domain, uint32_t rank, uint64_t id,
		  struct ordlock_key_state *st);

#ifdef __cplusplus
}
#endif

#endif /* LIBORDLOCK_H */
