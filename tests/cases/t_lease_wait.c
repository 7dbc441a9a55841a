// SPDX-License-Identifier: GPL-2.0
/*
 * t_lease_wait: a lease ends while its holder is itself waiting for
 * another key (issue 27, defect 1). The holder A takes 1:1 with a lease,
 * then waits, far longer than the lease, for keys held elsewhere; C waits
 * for 1:1. At A's deadline the kernel revokes whatever A is doing:
 *
 *  - C is granted 1:1 shortly after A's deadline (a bound of the lease
 *    plus 2 s, times the guest's ORDLOCK_WATCHDOG_SCALE), long before A's
 *    own wait would have timed out;
 *  - A's pending request fails with EKEYEXPIRED (reason revoked) at the
 *    deadline, all or nothing: a key it had already been granted for it
 *    (1:2) is free again, and it holds nothing;
 *  - TOKEN_CHECK of A's token is never answered live by a call made after
 *    the deadline (a thread asks over and over), and is stale right after
 *    C's grant;
 *  - A is then a revoked owner as the UAPI says: POLLPRI, LAST_FAILURE
 *    lists 1:1 with its token, ACQUIRE and RENEW fail with EKEYEXPIRED,
 *    RELEASE_ALL acknowledges, and A works again after.
 *
 * Each through the ioctl (an acquire with lease_ms, and one in a domain
 * with max_hold_ms instead), an upgrade waiting for another shared holder
 * (ioctl), and a netlink socket whose queued ACQUIRE, or CONVERT, waits
 * when its lease ends (its RESULT is REFUSED with EKEYEXPIRED).
 *
 * And a TOKEN_CHECK made after A's deadline is stale even while the
 * revocation is late (the lease's timer armed with a timer slack of 2 s).
 *
 * A's wait is set up before its deadline: the lease is long enough for
 * that (a point says so), and the waits are far longer still.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

static unsigned int scale = 1;
/* A's lease, the longest it waits, and how late after the deadline C may be */
static uint64_t lease_ms, wait_ms, bound_ms;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#define MS(ns) ((long long)((ns) / 1000000))

enum op_kind { OP_ACQUIRE, OP_CONVERT };

/* One ioctl made by a thread, so that the test can watch it wait */
struct op {
	struct ordlock *ol;
	enum op_kind kind;
	struct ordlock_key keys[2];
	unsigned int n;
	pthread_t th;
	pid_t tid;
	int ret;
	uint64_t token;
	uint64_t end_ns;
};

static void *op_main(void *arg)
{
	struct op *o = arg;
	int ret;

	__atomic_store_n(&o->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	if (o->kind == OP_ACQUIRE)
		ret = ordlock_acquire(o->ol, o->keys, o->n, wait_ms, 0, &o->token);
	else
		ret = ordlock_convert(o->ol, o->keys[0], wait_ms, 0, &o->token);
	o->end_ns = now_ns();
	__atomic_store_n(&o->ret, ret, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Start @o in a thread; return once it sleeps in its ioctl (0) or -errno */
static int op_start(struct op *o, struct ordlock *ol, enum op_kind kind,
		    const struct ordlock_key *keys, unsigned int n)
{
	uint64_t deadline = now_ms() + BLOCKED_TIMEOUT_MS;

	memset(o, 0, sizeof(*o));
	o->ol = ol;
	o->kind = kind;
	memcpy(o->keys, keys, n * sizeof(*keys));
	o->n = n;
	o->ret = 1;
	if (pthread_create(&o->th, NULL, op_main, o))
		bail_out("pthread_create");
	while (!__atomic_load_n(&o->tid, __ATOMIC_SEQ_CST) && now_ms() < deadline)
		usleep(1000);
	return wait_blocked_ioctl(o->tid, kind == OP_ACQUIRE ? ORDLOCK_IOC_ACQUIRE :
				  ORDLOCK_IOC_CONVERT, 0);
}

/*
 * A thread asking TOKEN_CHECK about @token of 1:1 over and over, through
 * its own owner, until it is stale or told to stop: it counts the live
 * answers to calls made at or after @after_ns (the latest the deadline can
 * be).
 */
struct checker {
	struct ordlock *ol;
	const char *domain;
	uint64_t token;
	uint64_t after_ns;
	pthread_t th;
	int stop;
	unsigned int calls;
	unsigned int live_late;
	uint64_t first_late_ns;
	int saw_stale;
};

static void *checker_main(void *arg)
{
	struct checker *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_SEQ_CST)) {
		uint64_t t = now_ns();
		int ret = ordlock_token_check(c->ol, c->domain, 1, 1, c->token);

		c->calls++;
		if (!ret && t >= c->after_ns && !c->live_late++)
			c->first_late_ns = t;
		if (ret == -ESTALE) {
			c->saw_stale = 1;
			break;
		}
		usleep(2000);
	}
	return NULL;
}

static void checker_start(struct checker *c, const char *d, uint64_t token,
			  uint64_t after_ns)
{
	memset(c, 0, sizeof(*c));
	c->ol = olt_open(d);
	c->domain = d;
	c->token = token;
	c->after_ns = after_ns;
	if (pthread_create(&c->th, NULL, checker_main, c))
		bail_out("pthread_create");
}

static void checker_end(struct checker *c, const char *what)
{
	__atomic_store_n(&c->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(c->th, NULL);
	ok(c->saw_stale && !c->live_late,
	   "%s: TOKEN_CHECK never said live after A's deadline (%u calls, %u live after it, the first %lld ms after)",
	   what, c->calls, c->live_late,
	   c->live_late ? MS(c->first_late_ns - c->after_ns) : 0LL);
	ordlock_close(c->ol);
}

/* Join @o, which must end by itself (no hang: the wait is bounded) */
static void op_join(struct op *o)
{
	pthread_join(o->th, NULL);
}

/* The later calls of a revoked ioctl owner @a that held 1:1 under @ta */
static void revoked_owner_state(const char *what, struct ordlock *a, uint64_t ta,
				unsigned int mode)
{
	struct pollfd pfd = { .fd = ordlock_fd(a), .events = POLLPRI };
	struct ordlock_key k4 = ORDLOCK_EX(1, 4);
	struct ordlock_revoked_key rk[4];
	struct ordlock_failure f;
	int n;

	ok(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLPRI), "%s: A's descriptor reports POLLPRI",
	   what);
	is_int(olt_nheld(a), 0, "%s: A holds nothing", what);
	ok(!ordlock_kernel_last_failure(a, &f) && f.reason == ORDLOCK_REASON_REVOKED &&
	   f.error == EKEYEXPIRED, "%s: A's failure record: revoked, EKEYEXPIRED (%s)", what,
	   olt_fail_str(&f));
	n = ordlock_revoked_keys(a, rk, 4);
	ok(n == 1 && olt_key_eq(&rk[0].key, 1, 1, mode) && rk[0].token == ta,
	   "%s: LAST_FAILURE lists 1:1 with A's token as revoked (%d)", what, n);
	is_errno(ordlock_try_acquire(a, &k4, 1, NULL), EKEYEXPIRED,
		 "%s: A's next ACQUIRE: EKEYEXPIRED", what);
	is_errno(ordlock_renew(a, 0, NULL), EKEYEXPIRED, "%s: A's RENEW: EKEYEXPIRED", what);
	is_int(ordlock_release_all(a), 0, "%s: RELEASE_ALL acknowledges", what);
	ok(poll(&pfd, 1, 0) == 0, "%s: no POLLPRI after it", what);
	is_int(ordlock_try_acquire(a, &k4, 1, NULL), 0, "%s: A acquires again after", what);
	is_int(ordlock_release_all(a), 0, "%s: and releases", what);
}

/*
 * A holds 1:1 (lease_ms, or the domain's max_hold_ms), then waits for
 * {1:2, 1:3}: 1:2 is free (granted to the request), 1:3 is B's (no lease).
 * C waits for 1:1.
 */
static void test_acquire_wait(int max_hold)
{
	const char *what = max_hold ? "ioctl acquire, max_hold_ms" : "ioctl acquire, lease_ms";
	struct ordlock_key k1 = ORDLOCK_EX(1, 1), k3 = ORDLOCK_EX(1, 3);
	struct ordlock_key want[2] = { ORDLOCK_EX(1, 2), ORDLOCK_EX(1, 3) };
	struct ordlock *adm = olt_open(NULL), *a, *b, *c;
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	uint64_t t0, t1, dl, ta = 0;
	struct checker chk;
	struct op acq, wc;
	int ret;

	snprintf(d, sizeof(d), "%s", olt_domain(max_hold ? "lw-mh" : "lw-acq"));
	a = olt_open(d);
	b = olt_open(d);
	c = olt_open(d);
	/* B's key is granted before the domain has a max_hold_ms: no lease */
	is_int(ordlock_acquire(b, &k3, 1, wait_ms, 0, NULL), 0, "%s: B holds 1:3, no lease",
	       what);
	if (max_hold)
		is_int(ordlock_set_max_hold(adm, d, lease_ms), 0, "%s: max_hold_ms %llu", what,
		       (unsigned long long)lease_ms);
	t0 = now_ns();
	ret = max_hold ? ordlock_acquire(a, &k1, 1, wait_ms, 0, &ta) :
			 ordlock_acquire_lease(a, &k1, 1, wait_ms, 0, lease_ms, &ta);
	t1 = now_ns();
	is_int(ret, 0, "%s: A holds 1:1 with a %llu ms lease", what,
	       (unsigned long long)lease_ms);
	dl = t1 + lease_ms * 1000000ULL;
	checker_start(&chk, d, ta, dl);
	is_int(op_start(&acq, a, OP_ACQUIRE, want, 2), 0,
	       "%s: A waits for {1:2, 1:3} (1:3 is B's) for up to %llu ms", what,
	       (unsigned long long)wait_ms);
	is_int(op_start(&wc, c, OP_ACQUIRE, &k1, 1), 0, "%s: C waits for 1:1", what);
	ok(now_ns() < t0 + lease_ms * 1000000ULL,
	   "%s: both waits were set up before A's deadline (%lld ms after A's grant)", what,
	   MS(now_ns() - t0));
	op_join(&wc);
	is_int(wc.ret, 0, "%s: C is granted 1:1", what);
	ok(wc.end_ns <= dl + bound_ms * 1000000ULL,
	   "%s: C is granted at most %llu ms after A's deadline (%lld ms after it)", what,
	   (unsigned long long)bound_ms, (long long)(wc.end_ns - dl) / 1000000);
	ok(wc.end_ns < t1 + wait_ms * 1000000ULL / 2,
	   "%s: C is granted long before A's own wait could time out (%lld ms after A's grant)",
	   what, MS(wc.end_ns - t1));
	is_int(ordlock_token_check(adm, d, 1, 1, ta), -ESTALE,
	       "%s: right after C's grant, A's token is stale", what);
	ok(wc.token > ta, "%s: C's token is above A's", what);
	op_join(&acq);
	ok(acq.ret == -EKEYEXPIRED && acq.token == 0,
	   "%s: A's pending request fails with EKEYEXPIRED, no token (%d)", what, acq.ret);
	ok(acq.end_ns <= dl + bound_ms * 1000000ULL,
	   "%s: at the deadline, not at its timeout (%lld ms after the deadline)", what,
	   (long long)(acq.end_ns - dl) / 1000000);
	is_int(olt_probe(d, 1, 2, EX), 0, "%s: 1:2, granted to A's request, is free again", what);
	is_int(olt_probe(d, 1, 3, EX), -EAGAIN, "%s: 1:3 is still B's", what);
	checker_end(&chk, what);
	revoked_owner_state(what, a, ta, EX);
	/* With max_hold_ms C's grant has a lease too, and may be revoked */
	if (max_hold)
		ok(gt_stat_of(d, "revocations") >= 1, "%s: the domain counts the revocation",
		   what);
	else
		is_int(gt_stat_of(d, "revocations"), 1,
		       "%s: the domain counts one revocation (not the request's failure too)",
		       what);
	ordlock_close(c);
	ordlock_close(b);
	ordlock_close(a);
	if (max_hold)
		ordlock_set_max_hold(adm, d, 0);
	ordlock_close(adm);
	ok(!olt_probe(d, 1, 1, EX) && !olt_probe(d, 1, 3, EX), "%s: all free at the end", what);
}

/*
 * A and B hold 1:1 shared, A with a lease; A's upgrade waits for B; C
 * queues for 1:1 exclusive behind it.
 */
static void test_upgrade_wait(void)
{
	const char *what = "ioctl upgrade";
	struct ordlock_key sk = ORDLOCK_SH(1, 1), xk = ORDLOCK_EX(1, 1);
	const char *d = olt_domain("lw-conv");
	struct ordlock *a, *b, *c, *adm;
	uint64_t t0, t1, dl, ta = 0;
	struct checker chk;
	struct op conv, wc;

	a = olt_open(d);
	b = olt_open(d);
	c = olt_open(d);
	adm = olt_open(d);
	is_int(ordlock_acquire(b, &sk, 1, wait_ms, 0, NULL), 0, "%s: B holds 1:1 shared", what);
	t0 = now_ns();
	is_int(ordlock_acquire_lease(a, &sk, 1, wait_ms, 0, lease_ms, &ta), 0,
	       "%s: so does A, with a %llu ms lease", what, (unsigned long long)lease_ms);
	t1 = now_ns();
	dl = t1 + lease_ms * 1000000ULL;
	checker_start(&chk, d, ta, dl);
	is_int(op_start(&conv, a, OP_CONVERT, &xk, 1), 0, "%s: A's upgrade waits for B", what);
	is_int(op_start(&wc, c, OP_ACQUIRE, &xk, 1), 0,
	       "%s: C queues for 1:1 exclusive behind it", what);
	ok(now_ns() < t0 + lease_ms * 1000000ULL,
	   "%s: both waits were set up before A's deadline (%lld ms after A's grant)", what,
	   MS(now_ns() - t0));
	op_join(&conv);
	ok(conv.ret == -EKEYEXPIRED && conv.token == 0,
	   "%s: A's upgrade fails with EKEYEXPIRED, no token (%d)", what, conv.ret);
	ok(conv.end_ns <= dl + bound_ms * 1000000ULL,
	   "%s: at most %llu ms after A's deadline (%lld ms after it)", what,
	   (unsigned long long)bound_ms, (long long)(conv.end_ns - dl) / 1000000);
	is_int(ordlock_token_check(adm, d, 1, 1, ta), -ESTALE, "%s: A's token is stale", what);
	ok(__atomic_load_n(&wc.ret, __ATOMIC_SEQ_CST) == 1, "%s: C still waits (B holds 1:1)",
	   what);
	checker_end(&chk, what);
	revoked_owner_state(what, a, ta, SH);
	is_int(gt_stat_of(d, "revocations"), 1, "%s: the domain counts one revocation", what);
	is_int(ordlock_release_all(b), 0, "%s: B lets go", what);
	op_join(&wc);
	ok(!wc.ret && wc.token > ta, "%s: C is granted, with a token above A's (%d)", what,
	   wc.ret);
	ordlock_close(c);
	ordlock_close(b);
	ordlock_close(a);
	ordlock_close(adm);
	is_int(olt_probe(d, 1, 1, EX), 0, "%s: 1:1 free at the end", what);
}

/*
 * The netlink socket A holds 1:1 with a lease (exclusive; shared for the
 * upgrade, B holding it shared too) and queues an ACQUIRE of {1:2, 1:3}
 * (1:3 is B's), or a CONVERT of 1:1 to exclusive; C waits for 1:1.
 */
static void test_netlink_wait(int convert)
{
	const char *what = convert ? "netlink upgrade" : "netlink acquire";
	struct ordlock_key want[2] = { ORDLOCK_EX(1, 2), ORDLOCK_EX(1, 3) };
	struct ordlock_key k1 = convert ? ORDLOCK_SH(1, 1) : ORDLOCK_EX(1, 1);
	struct ordlock_key k3 = ORDLOCK_EX(1, 3), k4 = ORDLOCK_EX(1, 4);
	struct ordlock_key xk = ORDLOCK_EX(1, 1);
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct nlt *s = nlt_must_open();
	struct ordlock *b, *c, *adm;
	struct olc_nl_outcome o, r;
	uint64_t t0, t1, t2, dl, ta;
	struct checker chk;
	struct op wc;
	int ret;

	snprintf(d, sizeof(d), "%s", olt_domain(convert ? "lw-nlcv" : "lw-nlacq"));
	b = olt_open(d);
	c = olt_open(d);
	adm = olt_open(d);
	is_int(ordlock_acquire(b, convert ? &k1 : &k3, 1, wait_ms, 0, NULL), 0,
	       "%s: B holds %s", what, convert ? "1:1 shared" : "1:3");
	memset(&o, 0, sizeof(o));
	t0 = now_ns();
	ret = nlt_acquire_lease(s, d, k1, 0, lease_ms, 1, &o);
	t1 = now_ns();
	ok(!ret && o.status == ORDLOCK_STATUS_GRANTED, "%s: A holds 1:1 with a %llu ms lease (%d)",
	   what, (unsigned long long)lease_ms, ret);
	ta = o.token;
	dl = t1 + lease_ms * 1000000ULL;
	checker_start(&chk, d, ta, dl);
	memset(&o, 0, sizeof(o));
	if (convert)
		ret = nlt_convert(s, xk, wait_ms * 1000000ULL, 0, 2, &o);
	else
		ret = nlt_acquire(s, d, want, 2, wait_ms * 1000000ULL, 0, 2, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_QUEUED, "%s: A's request is queued for up to %llu ms (%d)",
	   what, (unsigned long long)wait_ms, ret);
	is_int(op_start(&wc, c, OP_ACQUIRE, convert ? &xk : &k1, 1), 0,
	       "%s: C waits for 1:1", what);
	ok(now_ns() < t0 + lease_ms * 1000000ULL,
	   "%s: both waits were set up before A's deadline (%lld ms after A's grant)", what,
	   MS(now_ns() - t0));
	memset(&r, 0, sizeof(r));
	ret = nlt_wait_result(s, wait_ms + NLT_REPLY_MS, &r);
	t2 = now_ns();
	ok(!ret && r.cookie == 2 && r.status == ORDLOCK_STATUS_REFUSED && r.error == EKEYEXPIRED &&
	   r.failure.reason == ORDLOCK_REASON_REVOKED,
	   "%s: A's RESULT: refused, EKEYEXPIRED, reason revoked (%d: %s)", what, ret,
	   nlt_outcome_str(&r));
	ok(t2 <= dl + bound_ms * 1000000ULL,
	   "%s: at most %llu ms after A's deadline (%lld ms after it)", what,
	   (unsigned long long)bound_ms, (long long)(t2 - dl) / 1000000);
	if (convert) {
		is_int(ordlock_token_check(adm, d, 1, 1, ta), -ESTALE, "%s: A's token is stale",
		       what);
		ok(__atomic_load_n(&wc.ret, __ATOMIC_SEQ_CST) == 1,
		   "%s: C still waits (B holds 1:1)", what);
		is_int(ordlock_release_all(b), 0, "%s: B lets go", what);
	}
	op_join(&wc);
	is_int(wc.ret, 0, "%s: C is granted 1:1", what);
	if (!convert)
		ok(wc.end_ns <= dl + bound_ms * 1000000ULL,
		   "%s: C is granted at most %llu ms after A's deadline (%lld ms after it)",
		   what, (unsigned long long)bound_ms, (long long)(wc.end_ns - dl) / 1000000);
	is_int(ordlock_token_check(adm, d, 1, 1, ta), -ESTALE,
	       "%s: after C's grant, A's token is stale", what);
	ok(wc.token > ta, "%s: C's token is above A's", what);
	if (!convert) {
		is_int(olt_probe(d, 1, 2, EX), 0, "%s: 1:2, granted to A's request, is free again",
		       what);
		is_int(olt_probe(d, 1, 3, EX), -EAGAIN, "%s: 1:3 is still B's", what);
	}
	checker_end(&chk, what);
	memset(&o, 0, sizeof(o));
	ret = nlt_acquire(s, d, &k4, 1, 0, ORDLOCK_ACQUIRE_TRY, 3, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == EKEYEXPIRED &&
	   o.failure.reason == ORDLOCK_REASON_REVOKED && o.failure.cycle_len == 1,
	   "%s: A's next ACQUIRE: refused, EKEYEXPIRED, one key revoked (%s)", what,
	   nlt_outcome_str(&o));
	memset(&o, 0, sizeof(o));
	ok(!nlt_release(s, NULL, 0, &o) && o.status == ORDLOCK_STATUS_GRANTED,
	   "%s: RELEASE_ALL acknowledges", what);
	memset(&o, 0, sizeof(o));
	ok(!nlt_acquire(s, d, &k4, 1, 0, ORDLOCK_ACQUIRE_TRY, 4, &o) &&
	   o.status == ORDLOCK_STATUS_GRANTED, "%s: A acquires again after", what);
	nlt_close(s);
	ordlock_close(c);
	ordlock_close(b);
	ordlock_close(adm);
	ok(!olt_probe(d, 1, 1, EX) && !olt_probe(d, 1, 2, EX) && !olt_probe(d, 1, 3, EX) &&
	   !olt_probe(d, 1, 4, EX), "%s: all free at the end", what);
}

#define LATE_LEASE_MS 200
#define LATE_ROUNDS 3

/*
 * The revocation may come after the deadline: the lease's timer is armed
 * with the timer slack of the task that was granted (here 2 s), and the
 * work item may wait for a CPU. TOKEN_CHECK answers from the deadline
 * itself: a call made after it is stale whether or not the revocation has
 * come (poll() tells which it was).
 */
static void test_check_before_revocation(void)
{
	const char *what = "late revocation";
	struct ordlock_key k1 = ORDLOCK_EX(1, 1);
	const char *d = olt_domain("lw-late");
	struct ordlock *a = olt_open(d), *judge = olt_open(d);
	struct pollfd pfd = { .fd = ordlock_fd(a), .events = POLLPRI };
	unsigned int r, early = 0, live = 0, bad = 0;
	int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	struct timespec ts;
	uint64_t t1, dl, ta;

	for (r = 0; r < LATE_ROUNDS; r++) {
		prctl(PR_SET_TIMERSLACK, 2000000000UL, 0, 0, 0);
		if (ordlock_acquire_lease(a, &k1, 1, wait_ms, 0, LATE_LEASE_MS, &ta))
			bad++;
		t1 = now_ns();
		prctl(PR_SET_TIMERSLACK, slack > 0 ? (unsigned long)slack : 50000UL, 0, 0, 0);
		dl = t1 + LATE_LEASE_MS * 1000000ULL + 20000000ULL;
		ts.tv_sec = (time_t)(dl / 1000000000ULL);
		ts.tv_nsec = (long)(dl % 1000000000ULL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (ordlock_token_check(judge, d, 1, 1, ta) != -ESTALE)
			live++;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) == 0)
			early++;
		pfd.revents = 0;
		if (poll(&pfd, 1, BLOCKED_TIMEOUT_MS) != 1 || ordlock_release_all(a))
			bad++;
	}
	is_int(bad, 0, "%s: %d rounds: granted with a %d ms lease, revoked, acknowledged", what,
	       LATE_ROUNDS, LATE_LEASE_MS);
	is_int(live, 0,
	       "%s: TOKEN_CHECK 20 ms after A's deadline is stale, also before the revocation (it had not come yet in %u of %d rounds)",
	       what, early, LATE_ROUNDS);
	ordlock_close(judge);
	ordlock_close(a);
}

int main(void)
{
	const char *sc = getenv("ORDLOCK_WATCHDOG_SCALE");

	if (sc && atoi(sc) > 1 && atoi(sc) <= 10)
		scale = (unsigned int)atoi(sc);
	lease_ms = 1500ULL * scale;
	wait_ms = 20000ULL * scale;
	bound_ms = 2000ULL * scale;
	diag("lease %llu ms, A waits up to %llu ms, C may be %llu ms late",
	     (unsigned long long)lease_ms, (unsigned long long)wait_ms,
	     (unsigned long long)bound_ms);
	watchdog_start(300);
	test_acquire_wait(0);
	test_acquire_wait(1);
	test_upgrade_wait();
	test_netlink_wait(0);
	test_netlink_wait(1);
	test_check_before_revocation();
	ok(olt_stats_resources() == 0, "no resource in use at the end (%ld)",
	   olt_stats_resources());
	return tap_done();
}
