// SPDX-License-Identifier: GPL-2.0
/*
 * t_hostile_admin: an administrator changes a domain's settings while its
 * owners hold keys and wait. Every wait must still end (granted, timed out
 * or refused with the reason of the policy in force when it was refused),
 * no deadlock may be reported that is not one, and the domain's gauges
 * are back to zero when everyone closed.
 *
 *  - enforce -> detect (ioctl) under a waiter in order: the holder of the
 *    key it waits for now asks out of order and closes the cycle: it is
 *    the victim at once, the first waiter is granted when it lets go;
 *  - detect -> enforce (netlink DOMAIN_SET) under a waiter out of order:
 *    the other holder's wait, in order, closes the cycle: still detected
 *    (enforce detects what its rule cannot see); afterwards the order rule
 *    refuses a key below the held ones;
 *  - timeout -> detect under a standing cycle: the cycle is not broken by
 *    the change (it is left to its timeouts), and a third owner that waits
 *    behind it after the change is no victim: the cycle does not pass
 *    through it; it is granted once the two timed out and let go;
 *  - detect with a detection delay -> timeout while a cycle waits out the
 *    delay: the policy in force when the delay ends is "timeout", whose
 *    cycles are left to their timeouts: no victim, both time out;
 *  - strict turned on while a request waits for a higher id of a held
 *    rank: the request (started before) is granted; the next one of that
 *    rank is refused, reason "strict";
 *  - max_hold_ms set while a request waits: its grant (after the change)
 *    carries the lease and is revoked, the next waiter is granted with a
 *    higher token, while the holder granted before the change keeps its
 *    other key; max_hold_ms set and cleared again before a grant: no lease;
 *  - the learned order under changes: workers take rank 1 then rank 2
 *    while the admin resets the order, switches the policy through
 *    detect, timeout, enforce and turns order_learn off and on; every
 *    request succeeds; afterwards an owner whose cache predates the last
 *    reset still teaches the edge again.
 *
 * Every interleaving is forced by waiting until an actor sleeps in the
 * kernel; every wait expected to end has a long timeout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE
#define ACQ ORDLOCK_IOC_ACQUIRE
#define LONG_MS 60000

static struct ordlock *admin;

static void test_enforce_to_detect(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	int ret;

	gt_new_domain(d, "ha-e2d", ORDLOCK_POLICY_ENFORCE, 0);
	a = gt_actor_start("e2d-a", d, 1);
	b = gt_actor_start("e2d-b", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0),
	   "enforce->detect: A holds 1:1, B holds 1:2");
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(a, ACQ), 0, "enforce->detect: A waits for 1:2 (in order)");
	is_int(ordlock_set_policy(admin, d, ORDLOCK_POLICY_DETECT, 0), 0,
	       "enforce->detect: the admin switches the policy while A waits");
	ret = gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	ok(ret == -EDEADLK && b->res->failure.reason == ORDLOCK_REASON_DEADLOCK &&
	   b->res->ncycle == 2,
	   "enforce->detect: B asks 1:1 out of order (allowed now) and closes the cycle: victim, a cycle of 2 (%d, %s, %d steps)",
	   ret, ordlock_reason_name(b->res->failure.reason), b->res->ncycle);
	is_int(b->res->nheld, 1, "enforce->detect: B still holds 1:2 only");
	ok(gt_collect(a, 200) == -ETIMEDOUT, "enforce->detect: A still waits");
	is_int(gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "enforce->detect: B lets go");
	ok(!gt_collect(a, LONG_MS) && !a->res->ret && a->res->nheld == 2,
	   "enforce->detect: A is granted 1:2 and holds both");
	is_int(gt_stat_of(d, "deadlocks"), 1, "enforce->detect: one deadlock counted");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_gauges_zero(d, "enforce->detect");
}

static void test_detect_to_enforce(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct olc_nl_domain nd;
	struct gt_actor *a, *b;
	struct nlt *s;
	int ret;

	gt_new_domain(d, "ha-d2e", ORDLOCK_POLICY_DETECT, 0);
	a = gt_actor_start("d2e-a", d, 1);
	b = gt_actor_start("d2e-b", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0),
	   "detect->enforce: A holds 1:2, B holds 1:1");
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(a, ACQ), 0, "detect->enforce: A waits for 1:1 (out of order)");
	s = nlt_must_open();
	memset(&nd, 0, sizeof(nd));
	ret = nlt_domain_set(s, d, ORDLOCK_POLICY_ENFORCE, -1, NULL, -1, &nd);
	ok(!ret && nd.policy == ORDLOCK_POLICY_ENFORCE,
	   "detect->enforce: netlink DOMAIN_SET switches the policy while A waits (%d)", ret);
	nlt_close(s);
	ret = gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	ok(ret == -EDEADLK && b->res->failure.reason == ORDLOCK_REASON_DEADLOCK &&
	   b->res->ncycle == 2,
	   "detect->enforce: B asks 1:2 in order and closes the cycle A left: detected (%d, %s, %d steps)",
	   ret, ordlock_reason_name(b->res->failure.reason), b->res->ncycle);
	ok(gt_collect(a, 200) == -ETIMEDOUT, "detect->enforce: A still waits");
	is_int(gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "detect->enforce: B lets go");
	ok(!gt_collect(a, LONG_MS) && !a->res->ret && a->res->nheld == 2,
	   "detect->enforce: A is granted 1:1 and holds both");
	ret = gt_call1(a, GT_OP_ACQUIRE, 0, 1, 0, EX, LONG_MS, 0);
	ok(ret == -EDEADLK && a->res->failure.reason == ORDLOCK_REASON_ORDER &&
	   a->res->nheld == 2,
	   "detect->enforce: now A's 1:0 is an order violation and changes nothing (%d, %s)",
	   ret, ordlock_reason_name(a->res->failure.reason));
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_gauges_zero(d, "detect->enforce");
}

static void test_timeout_to_detect(void)
{
	/* long enough that C queues well before the two time out */
	const unsigned int cycle_ms = 20000;
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b, *c;
	int stuck;

	gt_new_domain(d, "ha-t2d", ORDLOCK_POLICY_TIMEOUT, 0);
	a = gt_actor_start("t2d-a", d, 1);
	b = gt_actor_start("t2d-b", d, 1);
	c = gt_actor_start("t2d-c", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0),
	   "timeout->detect: A holds 1:1, B holds 1:2");
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, cycle_ms, 0);
	is_int(gt_blocked(a, ACQ), 0, "timeout->detect: A waits for 1:2");
	gt_submit1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, cycle_ms, 0);
	is_int(gt_blocked(b, ACQ), 0, "timeout->detect: B waits for 1:1: a cycle, left standing");
	is_int(ordlock_set_policy(admin, d, ORDLOCK_POLICY_DETECT, 0), 0,
	       "timeout->detect: the admin switches to detect under the cycle");
	gt_submit1(c, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(c, ACQ), 0,
	       "timeout->detect: C waits for 1:1 behind the cycle, not a victim");
	stuck = gt_collect(a, 0) == -ETIMEDOUT && gt_collect(b, 0) == -ETIMEDOUT;
	ok(stuck, "timeout->detect: A and B still wait (the change broke nothing)");
	ok(!gt_collect(a, cycle_ms + GT_MARGIN_MS) && a->res->ret == -ETIMEDOUT,
	   "timeout->detect: A's wait ends by its timeout (%d)", a->res->ret);
	ok(!gt_collect(b, cycle_ms + GT_MARGIN_MS) && b->res->ret == -ETIMEDOUT,
	   "timeout->detect: B's wait ends by its timeout (%d)", b->res->ret);
	ok(gt_collect(c, 200) == -ETIMEDOUT, "timeout->detect: C still waits (A holds 1:1)");
	is_int(gt_call(a, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0, "timeout->detect: A lets go");
	ok(!gt_collect(c, LONG_MS) && !c->res->ret,
	   "timeout->detect: C is granted 1:1 (%d)", c->res->ret);
	is_int(gt_stat_of(d, "deadlocks"), 0, "timeout->detect: no deadlock reported");
	is_int(gt_stat_of(d, "timeouts"), 2, "timeout->detect: two timeouts");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_actor_stop(c);
	gt_gauges_zero(d, "timeout->detect");
}

static void test_detect_delay_to_timeout(void)
{
	/* the cycle is set up well inside the delay; both outlast it */
	const unsigned int delay_ms = 8000, wait_ms = 16000;
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	int ret;

	gt_new_domain(d, "ha-dd2t", ORDLOCK_POLICY_DETECT, delay_ms);
	a = gt_actor_start("dd2t-a", d, 1);
	b = gt_actor_start("dd2t-b", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0),
	   "detect delay->timeout: A holds 1:1, B holds 1:2");
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, wait_ms, 0);
	is_int(gt_blocked(a, ACQ), 0, "detect delay->timeout: A waits for 1:2");
	gt_submit1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, wait_ms, 0);
	is_int(gt_blocked(b, ACQ), 0,
	       "detect delay->timeout: B waits for 1:1: a cycle, inside the %u ms detection delay",
	       delay_ms);
	is_int(ordlock_set_policy(admin, d, ORDLOCK_POLICY_TIMEOUT, 0), 0,
	       "detect delay->timeout: the admin switches to timeout during the delay");
	ok(gt_collect(a, 0) == -ETIMEDOUT && gt_collect(b, 0) == -ETIMEDOUT,
	   "detect delay->timeout: both still wait after the switch");
	ret = gt_collect(a, wait_ms + GT_MARGIN_MS);
	ok(!ret && a->res->ret == -ETIMEDOUT,
	   "detect delay->timeout: A's wait ends by its timeout, no deadlock check after the delay (%d, %s)",
	   ret ? ret : a->res->ret, ordlock_reason_name(a->res->failure.reason));
	ret = gt_collect(b, wait_ms + GT_MARGIN_MS);
	ok(!ret && b->res->ret == -ETIMEDOUT,
	   "detect delay->timeout: so does B's (%d, %s)",
	   ret ? ret : b->res->ret, ordlock_reason_name(b->res->failure.reason));
	is_int(gt_stat_of(d, "deadlocks"), 0, "detect delay->timeout: no deadlock reported");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_gauges_zero(d, "detect delay->timeout");
}

static void test_strict_under_waiter(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	int ret;

	gt_new_domain(d, "ha-str", ORDLOCK_POLICY_ENFORCE, 0);
	a = gt_actor_start("str-a", d, 1);
	b = gt_actor_start("str-b", d, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 5, EX, LONG_MS, 0),
	   "strict: A holds 1:1, B holds 1:5");
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 5, EX, LONG_MS, 0);
	is_int(gt_blocked(a, ACQ), 0, "strict: A waits for 1:5 (a higher id of a held rank)");
	is_int(ordlock_set_strict(admin, d, 1), 0, "strict: turned on while A waits");
	is_int(gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0, "strict: B lets go");
	ok(!gt_collect(a, LONG_MS) && !a->res->ret && a->res->nheld == 2,
	   "strict: A's request, started before, is granted (%d)", a->res->ret);
	ret = gt_call1(a, GT_OP_ACQUIRE, 0, 1, 9, EX, LONG_MS, 0);
	ok(ret == -EDEADLK && a->res->failure.reason == ORDLOCK_REASON_STRICT &&
	   a->res->nheld == 2,
	   "strict: A's next request of rank 1 is refused, reason strict (%d, %s)",
	   ret, ordlock_reason_name(a->res->failure.reason));
	is_int(gt_call1(a, GT_OP_ACQUIRE, 0, 2, 1, EX, LONG_MS, 0), 0,
	       "strict: a higher rank is granted");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_gauges_zero(d, "strict");
}

static void test_max_hold_under_waiter(void)
{
	struct ordlock_key hk[2] = { ORDLOCK_EX(1, 1), ORDLOCK_EX(1, 5) };
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *h, *w, *c;
	uint64_t wtoken;
	int ret;

	gt_new_domain(d, "ha-mh", ORDLOCK_POLICY_ENFORCE, 0);
	h = gt_actor_start("mh-h", d, 1);
	w = gt_actor_start("mh-w", d, 1);
	c = gt_actor_start("mh-c", d, 1);
	is_int(gt_call(h, GT_OP_ACQUIRE, 0, hk, 2, LONG_MS, 0), 0,
	       "max_hold: H holds 1:1 and 1:5, without a lease");
	gt_submit1(w, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(w, ACQ), 0, "max_hold: W waits for 1:1");
	is_int(ordlock_set_max_hold(admin, d, 300), 0, "max_hold: set to 300 ms while W waits");
	is_int(gt_call(h, GT_OP_RELEASE, 0, hk, 1, 0, 0), 0, "max_hold: H lets 1:1 go");
	ok(!gt_collect(w, LONG_MS) && !w->res->ret, "max_hold: W is granted 1:1 (%d)", w->res->ret);
	wtoken = w->res->token;
	/* Without the lease this waits the whole LONG_MS and times out */
	ret = gt_call1(c, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	ok(!ret && c->res->token > wtoken,
	   "max_hold: C is granted 1:1 once W's lease (granted after the change) is revoked, with a higher token (%d)",
	   ret);
	ret = gt_call1(w, GT_OP_ACQUIRE, 0, 2, 1, EX, LONG_MS, 0);
	ok(ret == -EKEYEXPIRED && w->res->failure.reason == ORDLOCK_REASON_REVOKED &&
	   olt_key_eq(&w->res->failure.key, 1, 1, 0),
	   "max_hold: W's next call fails with EKEYEXPIRED, naming 1:1 (%d, %s)",
	   ret, ordlock_reason_name(w->res->failure.reason));
	is_int(olt_probe(d, 1, 5, EX), -EAGAIN,
	       "max_hold: H's 1:5, granted before the change, is still held");
	is_int(gt_call1(h, GT_OP_ACQUIRE, 0, 2, 2, EX, LONG_MS, 0), 0,
	       "max_hold: and H's next call works (it was not revoked)");
	is_int(gt_stat_of(d, "revocations"), 1, "max_hold: one revocation counted");
	is_int(ordlock_set_max_hold(admin, d, 0), 0, "max_hold: back to 0");
	gt_actor_stop(h);
	gt_actor_stop(w);
	gt_actor_stop(c);
	gt_gauges_zero(d, "max_hold");
}

struct thr_acq {
	struct ordlock *ol;
	struct ordlock_key key;
	pid_t tid;
	int ret;
};

static void *thr_acquire(void *arg)
{
	struct thr_acq *t = arg;

	__atomic_store_n(&t->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	t->ret = ordlock_acquire(t->ol, &t->key, 1, LONG_MS, 0, NULL);
	return NULL;
}

/* Wait until the thread of @t sleeps in ACQUIRE */
static int thr_blocked(struct thr_acq *t)
{
	uint64_t deadline = now_ms() + BLOCKED_TIMEOUT_MS;

	while (!__atomic_load_n(&t->tid, __ATOMIC_SEQ_CST) && now_ms() < deadline)
		usleep(1000);
	return wait_blocked_ioctl(t->tid, ACQ, 0);
}

static void test_max_hold_cleared(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct thr_acq t;
	struct gt_actor *h;
	uint64_t left = 1;
	pthread_t th;
	int ret;

	gt_new_domain(d, "ha-mh0", ORDLOCK_POLICY_ENFORCE, 0);
	h = gt_actor_start("mh0-h", d, 1);
	is_int(gt_call1(h, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "max_hold cleared: H holds 1:1");
	is_int(ordlock_set_max_hold(admin, d, 300), 0, "max_hold cleared: set to 300 ms");
	t.ol = olt_open(d);
	t.key = ordlock_key(1, 1, EX);
	t.ret = 1;
	t.tid = 0;
	pthread_create(&th, NULL, thr_acquire, &t);
	is_int(thr_blocked(&t), 0, "max_hold cleared: W queues for 1:1 under 300 ms");
	is_int(ordlock_set_max_hold(admin, d, 0), 0, "max_hold cleared: back to 0 while W waits");
	is_int(gt_call(h, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0, "max_hold cleared: H lets go");
	pthread_join(th, NULL);
	is_int(t.ret, 0, "max_hold cleared: W is granted");
	ret = ordlock_renew(t.ol, 0, &left);
	ok(!ret && left == 0,
	   "max_hold cleared: W's grant (after the change) has no lease (%d, left %llu ms)",
	   ret, (unsigned long long)left);
	ordlock_close(t.ol);
	gt_actor_stop(h);
	gt_gauges_zero(d, "max_hold cleared");
}

#define LW_WORKERS	3
/* Each worker's rounds at least, and the admin's changes meanwhile */
#define LW_ROUNDS	50
#define LW_CHANGES	300

struct lw_shared {
	unsigned int started;
	unsigned int stop;
	unsigned int done;
	unsigned int rounds;
	unsigned int failures;
	int first_err;
};

struct lw_arg {
	const char *d;
	unsigned int i;
	struct lw_shared *sh;
};

static int learn_worker(void *arg)
{
	struct lw_arg *la = arg;
	struct ordlock *ol = olt_child_open(la->d);
	struct ordlock_key k1 = ORDLOCK_EX(1, la->i), k2 = ORDLOCK_SH(2, 0);
	unsigned int r;
	int ret;

	__atomic_fetch_add(&la->sh->started, 1, __ATOMIC_SEQ_CST);
	for (r = 0; r < LW_ROUNDS || !__atomic_load_n(&la->sh->stop, __ATOMIC_SEQ_CST); r++) {
		ret = ordlock_acquire(ol, &k1, 1, LONG_MS, 0, NULL);
		if (!ret)
			ret = ordlock_acquire(ol, &k2, 1, LONG_MS, 0, NULL);
		if (ret && !__atomic_fetch_add(&la->sh->failures, 1, __ATOMIC_SEQ_CST))
			la->sh->first_err = ret;
		ordlock_release_all(ol);
	}
	ordlock_close(ol);
	__atomic_fetch_add(&la->sh->rounds, r, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&la->sh->done, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static void test_learning_under_changes(void)
{
	static const unsigned int policies[] = {
		ORDLOCK_POLICY_TIMEOUT, ORDLOCK_POLICY_ENFORCE, ORDLOCK_POLICY_DETECT,
	};
	struct lw_shared *sh = shm_alloc(sizeof(*sh));
	struct ordlock_key k1 = ORDLOCK_EX(1, 100), k2 = ORDLOCK_EX(2, 100);
	struct ordlock_key k3 = ORDLOCK_EX(3, 100);
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct lw_arg la[LW_WORKERS];
	struct ordlock_order_edge e[8];
	struct ordlock_order_get info;
	pid_t pid[LW_WORKERS];
	unsigned int i, changes = 0, admin_err = 0, st_bad = 0, late = 0;
	uint64_t t0 = now_ms();
	struct ordlock *stale;
	int ret;

	gt_new_domain(d, "ha-lrn", ORDLOCK_POLICY_DETECT, 0);
	is_int(olt_param_set("order_learn", 1), 0, "learning: order_learn on");
	/* An owner whose cache is filled before the resets */
	stale = olt_open(d);
	ok(!ordlock_acquire(stale, &k1, 1, LONG_MS, 0, NULL) &&
	   !ordlock_acquire(stale, &k2, 1, LONG_MS, 0, NULL) && !ordlock_release_all(stale),
	   "learning: an owner learns 1 -> 2 (its cache knows the edge)");
	for (i = 0; i < LW_WORKERS; i++) {
		la[i] = (struct lw_arg){ d, i, sh };
		pid[i] = child_start(learn_worker, &la[i]);
	}
	while (__atomic_load_n(&sh->started, __ATOMIC_SEQ_CST) < LW_WORKERS &&
	       now_ms() < t0 + BLOCKED_TIMEOUT_MS)
		usleep(1000);
	while (changes < LW_CHANGES) {
		switch (changes++ % 5) {
		case 0:
			ret = ordlock_reset_order(admin, d);
			break;
		case 1:
		case 3:
			ret = ordlock_set_policy(admin, d, policies[changes % 3], 0);
			break;
		case 2:
			ret = olt_param_set("order_learn", 0);
			break;
		default:
			ret = olt_param_set("order_learn", 1);
			break;
		}
		admin_err += ret != 0;
		if (__atomic_load_n(&sh->done, __ATOMIC_SEQ_CST))
			late++;
		usleep(200);
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < LW_WORKERS; i++)
		st_bad += child_wait(pid[i], 0) != 0;
	ok(!st_bad && sh->done == LW_WORKERS, "learning: the workers ran to their end");
	ok(!sh->failures, "learning: every request of theirs was granted (%u failed, first %d)",
	   sh->failures, sh->first_err);
	ok(!admin_err && !late,
	   "learning: %u changes by the admin while they ran, all accepted (%u failed, %u late)",
	   changes, admin_err, late);
	diag("learning: the workers made %u rounds", sh->rounds);
	is_int(olt_param_set("order_learn", 1), 0, "learning: order_learn on again");
	is_int(ordlock_set_policy(admin, d, ORDLOCK_POLICY_DETECT, 0), 0,
	       "learning: policy detect again");
	is_int(ordlock_reset_order(admin, d), 0, "learning: reset");
	memset(&info, 0, sizeof(info));
	ret = ordlock_get_order(admin, d, e, 8, NULL, 0, &info);
	ok(!ret && info.nedges == 0 && info.learning == 1,
	   "learning: nothing learned after the reset, learning on (%d, %u edges)", ret, info.nedges);
	ok(!ordlock_acquire(stale, &k1, 1, LONG_MS, 0, NULL) &&
	   !ordlock_acquire(stale, &k2, 1, LONG_MS, 0, NULL) && !ordlock_release_all(stale),
	   "learning: the owner with the old cache takes 1 -> 2 again");
	memset(&info, 0, sizeof(info));
	ret = ordlock_get_order(admin, d, e, 8, NULL, 0, &info);
	ok(!ret && info.nedges == 1 && e[0].from_rank == 1 && e[0].to_rank == 2 &&
	   e[0].count == 1,
	   "learning: it is learned again, once: its cache was not trusted after the reset (%d, %u edges, count %llu)",
	   ret, info.nedges, info.nedges ? (unsigned long long)e[0].count : 0ULL);
	is_int(ordlock_set_policy(admin, d, ORDLOCK_POLICY_ENFORCE, 0), 0, "learning: enforce");
	ok(!ordlock_acquire(stale, &k1, 1, LONG_MS, 0, NULL) &&
	   !ordlock_acquire(stale, &k3, 1, LONG_MS, 0, NULL) && !ordlock_release_all(stale),
	   "learning: 1 -> 3 in enforce");
	memset(&info, 0, sizeof(info));
	ret = ordlock_get_order(admin, d, e, 8, NULL, 0, &info);
	ok(!ret && info.nedges == 1 && info.learning == 0,
	   "learning: an enforce domain learns nothing (%d, %u edges)", ret, info.nedges);
	is_int(ordlock_set_policy(admin, d, ORDLOCK_POLICY_TIMEOUT, 0), 0, "learning: timeout");
	ok(!ordlock_acquire(stale, &k1, 1, LONG_MS, 0, NULL) &&
	   !ordlock_acquire(stale, &k3, 1, LONG_MS, 0, NULL) && !ordlock_release_all(stale),
	   "learning: 1 -> 3 in timeout");
	memset(&info, 0, sizeof(info));
	ret = ordlock_get_order(admin, d, e, 8, NULL, 0, &info);
	ok(!ret && info.nedges == 2 && info.learning == 1,
	   "learning: and the timeout domain learns it (%d, %u edges)", ret, info.nedges);
	ordlock_close(stale);
	olt_param_restore();
	gt_gauges_zero(d, "learning");
	shm_free(sh, sizeof(*sh));
}

int main(void)
{
	watchdog_start(600);
	admin = olt_open(NULL);
	test_enforce_to_detect();
	test_detect_to_enforce();
	test_timeout_to_detect();
	test_detect_delay_to_timeout();
	test_strict_under_waiter();
	test_max_hold_under_waiter();
	test_max_hold_cleared();
	test_learning_under_changes();
	ordlock_close(admin);
	ok(olt_stats_resources() == 0, "no resource in use at the end (%ld)",
	   olt_stats_resources());
	return tap_done();
}
