// SPDX-License-Identifier: GPL-2.0
/*
 * t_retry: ordlock_retry(), "retry the whole transaction, a bounded number
 * of times, with random backoff" (seeds 000, 003 and 004).
 *
 *  - seed 003's two warehouses with try-locks (a "timeout" domain): each
 *    transfer holds its source and try-locks the other warehouse. A barrier
 *    puts both sides in lockstep on the first attempt of every round, so
 *    both try-locks fail every round (the rhythm of a livelock); with full
 *    jitter the retries drift apart and every transfer completes, the stock
 *    exact;
 *  - the same two transfers waiting (a "detect" domain): the barrier makes
 *    a cycle every round, the victim's EDEADLK (reason deadlock) is retried
 *    and both complete;
 *  - what retrying cannot fix is not retried: an order violation, bad
 *    input, a callback's own error;
 *  - the caps: attempts, and total time (the wait of an attempt is cut to
 *    fit);
 *  - ordlock_retryable()'s table;
 *  - a lease that expires during an attempt (issue 27, defect 2): the body
 *    shortens the lease with ordlock_renew() and waits for the revocation
 *    (POLLPRI, a condition, not a sleep). When the body fails with it, the
 *    next attempt starts from an acknowledged owner and holds the keys; when
 *    the body succeeded, its value is returned, with the revocation in
 *    ordlock_last_failure() and the owner usable; a revocation of keys the
 *    owner held before the call, or one from before the call, is not
 *    acknowledged behind the caller's back and not retried in vain.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define LONG_MS 30000

#define R_STORE	1
#define SOFIA	1
#define PLOVDIV	2
#define ROUNDS	20

struct side {
	int error;		/* first failure: the negative errno */
	unsigned int round_fail; /* the round it failed in */
	struct ordlock_failure f;
	unsigned int attempts[ROUNDS];
	unsigned int victims;
};

struct shared {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	int wait;		/* the second key is waited for, not tried */
	long stock[3];
	struct pbarrier *meet;		/* first attempt of a round: both hold their source */
	struct pbarrier *done;		/* both finished the round */
	struct side s[2];
};

static struct shared *sh;

struct ctx {
	int i;
	struct ordlock_retry *r;
	struct ordlock_key dst;
	long qty;
};

/* *p += d, slowly: a lost update shows when two writers overlap */
static void slow_add(long *p, long d)
{
	long v = __atomic_load_n(p, __ATOMIC_RELAXED);

	sched_yield();
	__atomic_store_n(p, v + d, __ATOMIC_RELAXED);
}

/* The transaction, under the source key */
static int transfer(struct ordlock *ol, uint64_t token, void *arg)
{
	struct ctx *c = arg;
	int ret;

	(void)token;
	/* lockstep: on the first attempt both hold their source here */
	if (c->r->attempts == 1 && pbarrier_wait(sh->meet))
		return -EPIPE;
	if (sh->wait)
		ret = ordlock_acquire(ol, &c->dst, 1, LONG_MS, 0, NULL);
	else
		ret = ordlock_try_acquire(ol, &c->dst, 1, NULL);
	if (ret) {
		if (ret == -EDEADLK)
			sh->s[c->i].victims++;
		return ret;
	}
	slow_add(&sh->stock[c->i ? PLOVDIV : SOFIA], -c->qty);
	slow_add(&sh->stock[c->i ? SOFIA : PLOVDIV], c->qty);
	usleep(1000);
	ret = ordlock_release(ol, &c->dst, 1);
	return ret;
}

static int side_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct side *me = &sh->s[i];
	struct ordlock_key src = ORDLOCK_EX(R_STORE, i ? PLOVDIV : SOFIA);
	struct ordlock_retry r = {
		.max_attempts = 40,
		.base_ms = 5,
		.max_backoff_ms = 200,
		.timeout_ms = LONG_MS,
	};
	struct ctx c = {
		.i = i,
		.r = &r,
		.dst = ORDLOCK_EX(R_STORE, i ? SOFIA : PLOVDIV),
		.qty = i ? 3 : 5,
	};
	struct ordlock *ol;
	unsigned int round;
	int ret;

	prctl(PR_SET_NAME, "transfer", 0, 0, 0);
	ol = ordlock_open(sh->domain);
	if (!ol) {
		me->error = -errno;
		pbarrier_break(sh->meet);
		pbarrier_break(sh->done);
		return 10;
	}
	for (round = 0; round < ROUNDS; round++) {
		ret = ordlock_retry(ol, &src, 1, &r, transfer, &c);
		me->attempts[round] = r.attempts;
		if (ret) {
			me->error = ret;
			me->round_fail = round;
			me->f = *ordlock_last_failure(ol);
			pbarrier_break(sh->meet);
			pbarrier_break(sh->done);
			return 11;
		}
		if (pbarrier_wait(sh->done))
			return 12;
	}
	ordlock_close(ol);
	return 0;
}

static void run_warehouses(int wait)
{
	const char *what = wait ? "wait" : "try";
	unsigned int i, round, collided = 0, most = 0;
	pid_t pid[2];
	int st[2];

	memset(sh, 0, sizeof(*sh));
	gt_new_domain(sh->domain, wait ? "retryw" : "retryt",
		      wait ? ORDLOCK_POLICY_DETECT : ORDLOCK_POLICY_TIMEOUT, 0);
	sh->wait = wait;
	sh->stock[SOFIA] = 4000;
	sh->stock[PLOVDIV] = 4000;
	sh->meet = pbarrier_new(2);
	sh->done = pbarrier_new(2);
	for (i = 0; i < 2; i++)
		pid[i] = child_start(side_main, (void *)(intptr_t)i);
	for (i = 0; i < 2; i++)
		st[i] = child_wait(pid[i], CHILD_TIMEOUT_S);
	for (i = 0; i < 2; i++) {
		is_int(st[i], 0, "%s: side %u completed its %d transfers", what, i, ROUNDS);
		if (sh->s[i].error)
			diag("side %u: round %u: %s (%s)", i, sh->s[i].round_fail,
			     strerror(-sh->s[i].error), olt_fail_str(&sh->s[i].f));
	}
	is_int(sh->stock[SOFIA], 4000 - ROUNDS * 5 + ROUNDS * 3,
	       "%s: Sofia's stock is exact", what);
	is_int(sh->stock[SOFIA] + sh->stock[PLOVDIV], 8000, "%s: the total stays 8000", what);
	for (round = 0; round < ROUNDS; round++) {
		/* the barrier made the first attempts collide: someone retried */
		if (sh->s[0].attempts[round] > 1 || sh->s[1].attempts[round] > 1)
			collided++;
		for (i = 0; i < 2; i++)
			if (sh->s[i].attempts[round] > most)
				most = sh->s[i].attempts[round];
	}
	is_int(collided, ROUNDS, "%s: every round collided and was retried", what);
	diag("%s: at most %u attempts in a round", what, most);
	if (wait)
		is_int(sh->s[0].victims + sh->s[1].victims, ROUNDS,
		       "wait: one deadlock victim a round");
	pbarrier_free(sh->meet);
	pbarrier_free(sh->done);
}

static int count_calls(struct ordlock *ol, uint64_t token, void *arg)
{
	(void)ol;
	(void)token;
	return ++*(int *)arg > 100 ? 0 : -EIO;
}

static int ret_value(struct ordlock *ol, uint64_t token, void *arg)
{
	(void)ol;
	*(uint64_t *)arg = token;
	return 42;
}

static void test_not_retried(void)
{
	struct ordlock_key held = ORDLOCK_EX(2, 5), low = ORDLOCK_EX(1, 1);
	struct ordlock_key bad = { .rank = 1, .id = 1, .mode = 0 };
	struct ordlock_retry r = { .max_attempts = 10, .base_ms = 1 };
	struct ordlock *ol = olt_open(NULL);
	uint64_t token = 0;
	int calls = 0;

	is_int(ordlock_acquire(ol, &held, 1, LONG_MS, 0, NULL), 0, "hold 2:5");
	is_errno(ordlock_retry(ol, &low, 1, &r, count_calls, &calls), EDEADLK,
		 "order violation: EDEADLK");
	is_int(r.attempts, 1, "order violation: one attempt, not retried");
	is_int(ordlock_last_failure(ol)->reason, ORDLOCK_REASON_ORDER,
	       "order violation: the record says order");
	is_int(calls, 0, "order violation: the callback never ran");
	is_errno(ordlock_retry(ol, &bad, 1, &r, count_calls, &calls), EINVAL,
		 "bad key: EINVAL");
	is_int(r.attempts, 1, "bad key: not retried");
	is_int(ordlock_release_all(ol), 0, "release");

	is_errno(ordlock_retry(ol, &low, 1, &r, count_calls, &calls), EIO,
		 "the callback's -EIO is returned");
	is_int(r.attempts, 1, "the callback's own error is not retried");
	is_int(calls, 1, "the callback ran once");
	is_int(olt_nheld(ol), 0, "its keys were released");
	is_int(ordlock_retry(ol, &low, 1, NULL, ret_value, &token), 42,
	       "a positive value of the callback is returned (NULL policy)");
	ok(token != 0, "the callback had the token");
	is_int(olt_nheld(ol), 0, "released after success");

	r.flags = 1U << 7;
	is_errno(ordlock_retry(ol, &low, 1, &r, ret_value, &token), EINVAL,
		 "an unknown retry flag: EINVAL");
	ordlock_close(ol);
}

static int nothing(struct ordlock *ol, uint64_t token, void *arg)
{
	(void)ol;
	(void)token;
	(void)arg;
	return 0;
}

static void test_caps(void)
{
	struct ordlock_key k = ORDLOCK_EX(7, 7);
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct ordlock_retry r = {
		.max_attempts = 3, .base_ms = 1, .acquire_flags = ORDLOCK_ACQUIRE_TRY,
	};
	struct ordlock *ol = olt_open(NULL);
	uint64_t t0, dt;

	is_int(h->result, 0, "caps: another process holds 7:7");
	is_errno(ordlock_retry(ol, &k, 1, &r, nothing, NULL), EAGAIN,
		 "caps: busy every time: EAGAIN");
	is_int(r.attempts, 3, "caps: after max_attempts (3) attempts");
	is_int(ordlock_last_failure(ol)->reason, ORDLOCK_REASON_BUSY, "caps: reason busy");

	memset(&r, 0, sizeof(r));
	r.max_attempts = 1000;
	r.max_total_ms = 400;
	r.timeout_ms = 50;
	r.base_ms = 10;
	t0 = now_ms();
	is_errno(ordlock_retry(ol, &k, 1, &r, nothing, NULL), ETIMEDOUT,
		 "caps: held throughout: ETIMEDOUT");
	dt = now_ms() - t0;
	ok(r.attempts > 1 && r.attempts < 1000,
	   "caps: the total time, not the attempts, ended it (%u attempts)", r.attempts);
	ok(dt < 10000, "caps: it ended (hang guard; %llu ms)", (unsigned long long)dt);

	memset(&r, 0, sizeof(r));
	r.max_total_ms = 300;
	t0 = now_ms();
	is_errno(ordlock_retry(ol, &k, 1, &r, nothing, NULL), ETIMEDOUT,
		 "caps: the domain default timeout is cut to the total time");
	dt = now_ms() - t0;
	ok(dt < 10000, "caps: well before the default timeout (%llu ms)",
	   (unsigned long long)dt);
	is_int(olt_holder_stop(h), 0, "caps: the holder exits");
	is_int(ordlock_retry(ol, &k, 1, &r, nothing, NULL), 0, "caps: free: done at once");
	is_int(r.attempts, 1, "caps: one attempt");
	ordlock_close(ol);
}

static void test_retryable(void)
{
	struct ordlock_failure f = { 0 };

	f.reason = ORDLOCK_REASON_DEADLOCK;
	ok(ordlock_retryable(-EDEADLK, &f), "retryable: EDEADLK, deadlock victim");
	f.cycle_len = 2;
	ok(ordlock_retryable(-EDEADLK, &f), "retryable: EDEADLK, deadlock victim of a cycle of 2");
	f.cycle_len = 1;
	ok(!ordlock_retryable(-EDEADLK, &f),
	   "not retryable: EDEADLK, a cycle of one step (the thread waits for itself)");
	f.cycle_len = 0;
	f.reason = ORDLOCK_REASON_UPGRADE;
	ok(ordlock_retryable(EDEADLK, &f), "retryable: EDEADLK, upgrade deadlock");
	f.reason = ORDLOCK_REASON_ORDER;
	ok(!ordlock_retryable(-EDEADLK, &f), "not retryable: order violation");
	f.reason = ORDLOCK_REASON_STRICT;
	ok(!ordlock_retryable(-EDEADLK, &f), "not retryable: strict ranks");
	ok(!ordlock_retryable(-EDEADLK, NULL), "not retryable: EDEADLK without a record");
	ok(ordlock_retryable(-ETIMEDOUT, NULL), "retryable: ETIMEDOUT");
	ok(ordlock_retryable(-EAGAIN, NULL), "retryable: EAGAIN");
	ok(ordlock_retryable(-EKEYEXPIRED, NULL), "retryable: EKEYEXPIRED (revoked lease)");
	ok(!ordlock_retryable(-EINVAL, NULL), "not retryable: EINVAL");
	ok(!ordlock_retryable(-EINTR, NULL), "not retryable: EINTR");
	ok(!ordlock_retryable(-ENOSPC, NULL), "not retryable: ENOSPC");
	ok(!ordlock_retryable(-EDQUOT, NULL), "not retryable: EDQUOT");
}

/*
 * Issue 42, defect 5: a thread that waits for itself. Owner a holds 3:1,
 * owner b of the same thread asks for it: EDEADLK at once (reason
 * deadlock), a cycle of one step, b's, whose pid is this process; the
 * wait would never end, so ordlock_retryable() says no and ordlock_retry()
 * makes one attempt, not five.
 */
static void test_self_wait(void)
{
	struct ordlock_key k = ORDLOCK_EX(3, 1);
	struct ordlock_retry r = { .max_attempts = 5, .base_ms = 1, .timeout_ms = LONG_MS };
	struct ordlock_cycle_step steps[ORDLOCK_CYCLE_MAX];
	struct ordlock *a = olt_open(NULL), *b = olt_open(NULL);
	const struct ordlock_failure *f;
	uint64_t t0 = now_ms();
	int calls = 0, n;

	is_int(ordlock_acquire(a, &k, 1, LONG_MS, 0, NULL), 0, "self-wait: owner a holds 3:1");
	is_errno(ordlock_acquire(b, &k, 1, LONG_MS, 0, NULL), EDEADLK,
		 "self-wait: owner b of the same thread asks for 3:1: EDEADLK");
	ok(now_ms() - t0 < LONG_MS, "self-wait: at once, not after the timeout (hang guard)");
	f = ordlock_last_failure(b);
	is_int(f->reason, ORDLOCK_REASON_DEADLOCK, "self-wait: reason deadlock");
	is_int(f->cycle_len, 1, "self-wait: a cycle of one step");
	n = ordlock_last_cycle(b, steps, ORDLOCK_CYCLE_MAX);
	ok(n == 1 && steps[0].pid == (uint32_t)getpid() && steps[0].key.rank == 3 &&
	   steps[0].key.id == 1, "self-wait: the step is b's wait for 3:1, in this process (%d steps)", n);
	ok(!ordlock_retryable(-EDEADLK, f), "self-wait: ordlock_retryable() says no");
	is_errno(ordlock_retry(b, &k, 1, &r, count_calls, &calls), EDEADLK,
		 "self-wait: ordlock_retry(): EDEADLK");
	is_int(r.attempts, 1, "self-wait: one attempt, not max_attempts (5)");
	is_int(calls, 0, "self-wait: the callback never ran");
	ordlock_close(a);
	ordlock_close(b);
}

/* What the lease bodies saw, per attempt */
struct lease_ctx {
	int fail_body;		/* attempt 1 fails with the revocation */
	int done_value;		/* else it returns this */
	unsigned int calls;
	uint64_t token[4];
	long nheld[4];		/* what the owner held in the body */
	int probe[4];		/* another owner's try-lock of the key */
	int revoked_seen;	/* attempt 1 saw POLLPRI */
	struct ordlock_key key;
};

/* Wait (bounded) until the kernel revoked @ol's lease: POLLPRI */
static int wait_revoked(struct ordlock *ol)
{
	struct pollfd pfd = { .fd = ordlock_fd(ol), .events = POLLPRI };

	return poll(&pfd, 1, BLOCKED_TIMEOUT_MS) == 1 && (pfd.revents & POLLPRI);
}

/*
 * Attempt 1: a lease of 50 ms on what the owner holds, then wait for its
 * revocation; fail with it (the renew that says EKEYEXPIRED), or return
 * done_value as if the work was done just before the deadline. Later attempts: note
 * what is held and return 0.
 */
static int lease_body(struct ordlock *ol, uint64_t token, void *arg)
{
	struct lease_ctx *c = arg;
	unsigned int i = c->calls++;

	if (i < ARRAY_SIZE(c->token)) {
		c->token[i] = token;
		c->nheld[i] = olt_nheld(ol);
		c->probe[i] = olt_probe(NULL, c->key.rank, c->key.id, EX);
	}
	if (i)
		return 0;
	if (ordlock_renew(ol, 50, NULL))
		return -EPROTO;
	c->revoked_seen = wait_revoked(ol);
	if (!c->fail_body)
		return c->done_value;
	return ordlock_renew(ol, 0, NULL);
}

static void test_revoked(void)
{
	struct ordlock_retry r = { .max_attempts = 3, .base_ms = 1 };
	struct ordlock_key k = ORDLOCK_EX(31, 1), mine = ORDLOCK_EX(30, 1);
	struct ordlock_key next = ORDLOCK_EX(32, 1);
	struct ordlock *ol = olt_open(NULL);
	struct lease_ctx c;
	int ret;

	/* the body fails with the revocation: the next attempt gets the keys */
	memset(&c, 0, sizeof(c));
	c.fail_body = 1;
	c.key = k;
	ret = ordlock_retry(ol, &k, 1, &r, lease_body, &c);
	ok(c.revoked_seen, "revoked body: the lease expired during attempt 1 (POLLPRI)");
	is_int(ret, 0, "revoked body: ordlock_retry() succeeds");
	is_int(r.attempts, 2, "revoked body: on the second attempt");
	is_int(c.calls, 2, "revoked body: the body ran twice");
	is_int(c.nheld[1], 1, "revoked body: attempt 2 holds the key");
	is_int(c.probe[1], -EAGAIN, "revoked body: another owner cannot take it in attempt 2");
	ok(c.token[1] > c.token[0], "revoked body: attempt 2's token is above the revoked one");
	is_int(olt_nheld(ol), 0, "revoked body: released after the call");
	is_int(ordlock_acquire(ol, &next, 1, 0, 0, NULL), 0,
	       "revoked body: the owner is an ordinary one afterwards");
	ordlock_release_all(ol);

	/* the body succeeded (0, then 7); only the release finds the revocation */
	for (int v = 0; v <= 7; v += 7) {
		memset(&c, 0, sizeof(c));
		c.key = k;
		c.done_value = v;
		ret = ordlock_retry(ol, &k, 1, &r, lease_body, &c);
		ok(c.revoked_seen, "work done (%d): the lease expired after the work, before the release", v);
		is_int(ret, v, "work done (%d): the body's value is returned, not an error", v);
		is_int(r.attempts, 1, "work done (%d): not retried", v);
		is_int(c.calls, 1, "work done (%d): the body ran once", v);
		is_int(ordlock_last_failure(ol)->reason, ORDLOCK_REASON_REVOKED,
		       "work done (%d): ordlock_last_failure() says revoked", v);
		is_int(ordlock_last_failure(ol)->error, EKEYEXPIRED,
		       "work done (%d): with EKEYEXPIRED", v);
		ok(olt_key_eq(&ordlock_last_failure(ol)->key, 31, 1, 0),
		   "work done (%d): naming the revoked key 31:1", v);
		is_int(olt_nheld(ol), 0, "work done (%d): nothing held", v);
		is_int(ordlock_acquire(ol, &next, 1, 0, 0, NULL), 0,
		       "work done (%d): the revocation is acknowledged: the owner acquires again", v);
		ordlock_release_all(ol);
	}
	is_int(ordlock_retry(ol, &k, 1, &r, ret_value, &c.token[3]), 42,
	       "clean success: the value");
	is_int(ordlock_last_failure(ol)->reason, ORDLOCK_REASON_NONE,
	       "clean success: ordlock_last_failure() says none");

	/* keys held before the call are revoked too: not acknowledged for the caller */
	is_int(ordlock_acquire(ol, &mine, 1, 0, 0, NULL), 0, "held before: the caller holds 30:1");
	memset(&c, 0, sizeof(c));
	c.fail_body = 1;
	c.key = k;
	is_errno(ordlock_retry(ol, &k, 1, &r, lease_body, &c), EKEYEXPIRED,
		 "held before: EKEYEXPIRED");
	is_int(r.attempts, 1, "held before: not retried (no attempt can succeed)");
	is_errno(ordlock_acquire(ol, &next, 1, 0, 0, NULL), EKEYEXPIRED,
		 "held before: the owner is still revoked: the caller learns it lost 30:1");
	{
		struct ordlock_revoked_key rk[4];
		int n = ordlock_revoked_keys(ol, rk, 4);

		is_int(n, 2, "held before: both 30:1 and 31:1 were revoked");
	}
	/* revoked before the call: returned at once, still not acknowledged */
	memset(&c, 0, sizeof(c));
	c.key = k;
	is_errno(ordlock_retry(ol, &k, 1, &r, lease_body, &c), EKEYEXPIRED,
		 "revoked before: EKEYEXPIRED");
	is_int(r.attempts, 1, "revoked before: one attempt");
	is_int(c.calls, 0, "revoked before: the body never ran");
	is_int(ordlock_release_all(ol), 0, "revoked before: the caller acknowledges");
	is_int(ordlock_retry(ol, &k, 1, &r, ret_value, &c.token[3]), 42,
	       "then ordlock_retry() works");
	ordlock_close(ol);
}

int main(void)
{
	watchdog_start(600);
	sh = shm_alloc(sizeof(*sh));
	test_retryable();
	test_self_wait();
	test_not_retried();
	test_caps();
	test_revoked();
	run_warehouses(0);
	run_warehouses(1);
	shm_free(sh, sizeof(*sh));
	return tap_done();
}
