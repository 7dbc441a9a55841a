// SPDX-License-Identifier: GPL-2.0
/*
 * t_convert: ORDLOCK_IOC_CONVERT. Upgrades (shared -> exclusive) wait like
 * acquires, with timeouts and FIFO rules, ahead of plain waiters;
 * downgrades never wait and let queued shared waiters in; two shared
 * holders that both upgrade get the conversion deadlock (EDEADLK, reason
 * UPGRADE, at once); a cycle an upgrade closes is a deadlock even where the
 * order rule is enforced; bad input changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE
#define ACQ ORDLOCK_IOC_ACQUIRE
#define CONV ORDLOCK_IOC_CONVERT

#define LONG_MS		30000

/* Raw CONVERT with @flags and @key; the failure record lands in @c */
static int raw_convert(struct ordlock *ol, struct ordlock_convert *c,
		       struct ordlock_key key, unsigned int flags)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->flags = flags;
	c->key = key;
	c->timeout_ns = 1000000000ULL;
	return ioctl(ordlock_fd(ol), ORDLOCK_IOC_CONVERT, c);
}

/* Does another owner of @domain see 1:@id free for @mode? (0 or -EAGAIN) */
static int probe(const char *domain, uint64_t id, unsigned int mode)
{
	return olt_probe(domain, 1, id, mode);
}

static void test_sole_holder(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k = ORDLOCK_SH(1, 1);
	struct ordlock *ol;
	struct gt_stats st;
	uint64_t t1 = 0, t2 = 0, t3 = 0, t4 = 0;
	uint64_t t0;

	gt_new_domain(domain, "cv-sole", ORDLOCK_POLICY_ENFORCE, 0);
	ol = olt_open(domain);
	is_int(ordlock_acquire(ol, &k, 1, LONG_MS, 0, &t1), 0,
	       "sole: hold 1:1 shared");
	t0 = now_ms();
	is_int(ordlock_convert(ol, ORDLOCK_EX(1, 1), LONG_MS, 0, &t2), 0,
	       "sole: the only holder upgrades to exclusive");
	ok(now_ms() - t0 < LONG_MS / 2, "sole: at once");
	ok(t2 > t1, "sole: the upgrade gets a new fencing token (%llu > %llu)",
	   (unsigned long long)t2, (unsigned long long)t1);
	is_int(probe(domain, 1, SH), -EAGAIN,
	       "sole: now nobody else can take it shared");
	is_int(olt_nheld(ol), 1, "sole: still one key held");

	is_int(ordlock_convert(ol, ORDLOCK_EX(1, 1), LONG_MS, 0, &t3), 0,
	       "sole: converting to the mode it is held in changes nothing");
	is_int(t3, t2, "sole: and returns the token of the hold");

	t0 = now_ms();
	is_int(ordlock_convert(ol, ORDLOCK_SH(1, 1), LONG_MS, 0, &t4), 0,
	       "sole: downgrade to shared");
	ok(now_ms() - t0 < LONG_MS / 2, "sole: a downgrade does not wait");
	is_int(t4, t2, "sole: a downgrade keeps the token of the hold");
	is_int(probe(domain, 1, SH), 0, "sole: others can take it shared again");
	is_int(probe(domain, 1, EX), -EAGAIN, "sole: but not exclusive");

	is_int(gt_stats_read(domain, &st), 0, "sole: stats has the domain");
	is_int(gt_stat(&st, "conversions"), 2,
	       "sole: stats counts 2 conversions (the no-op is none)");
	ordlock_close(ol);
}

static void test_bad_input(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	const struct ordlock_failure *f;
	struct ordlock_convert c;
	struct ordlock_key k;
	struct ordlock *ol;
	int ret;

	gt_new_domain(domain, "cv-bad", ORDLOCK_POLICY_ENFORCE, 0);
	ol = olt_open(domain);
	k = ORDLOCK_SH(1, 1);
	is_int(ordlock_acquire(ol, &k, 1, LONG_MS, 0, NULL), 0,
	       "bad: hold 1:1 shared");

	ret = ordlock_convert(ol, ORDLOCK_EX(1, 2), LONG_MS, 0, NULL);
	is_errno(ret, ENOENT, "bad: converting a key not held: ENOENT");
	f = ordlock_last_failure(ol);
	is_int(f->reason, ORDLOCK_REASON_NOT_HELD, "bad: reason NOT_HELD");
	ok(olt_key_eq(&f->key, 1, 2, 0), "bad: failure.key names 1:2");
	is_errno(ordlock_convert(ol, ORDLOCK_EX(2, 1), LONG_MS, 0, NULL),
		 ENOENT, "bad: another rank, same id: ENOENT");

	is_errno(ordlock_convert(ol, ordlock_key(1, 1, 0), LONG_MS, 0, NULL),
		 EINVAL, "bad: mode 0: EINVAL");
	is_int(ordlock_last_failure(ol)->reason, ORDLOCK_REASON_INVALID,
	       "bad: reason INVALID");
	is_errno(ordlock_convert(ol, ordlock_key(1, 1, 3), LONG_MS, 0, NULL),
		 EINVAL, "bad: mode 3: EINVAL");
	is_errno(ordlock_convert(ol, ordlock_key(1, 1, 0xffff), LONG_MS, 0,
				 NULL),
		 EINVAL, "bad: mode 0xffff: EINVAL");

	is_errno(raw_convert(ol, &c, ORDLOCK_EX(1, 1), 1U << 1), EINVAL,
		 "bad: unknown flag 1 << 1: EINVAL");
	is_errno(raw_convert(ol, &c, ORDLOCK_EX(1, 1), 1U << 31), EINVAL,
		 "bad: unknown flag 1 << 31: EINVAL");
	is_int(c.failure.reason, ORDLOCK_REASON_INVALID,
	       "bad: the failure record says INVALID");
	k = ORDLOCK_EX(1, 1);
	k.__reserved = 1;
	is_errno(raw_convert(ol, &c, k, 0), EINVAL,
		 "bad: non-zero key.__reserved: EINVAL");
	memset(&c, 0, sizeof(c));
	c.size = 8;
	c.key = ORDLOCK_EX(1, 1);
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_CONVERT, &c), EINVAL,
		 "bad: size smaller than the first published one: EINVAL");
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_CONVERT, (void *)16),
		 EFAULT, "bad: unreadable argument: EFAULT");

	is_int(olt_nheld(ol), 1, "bad: after all that, 1:1 is still held");
	is_int(probe(domain, 1, SH), 0, "bad: and still shared");
	is_int(probe(domain, 1, EX), -EAGAIN, "bad: not exclusive");
	ordlock_close(ol);
}

/* Two shared holders A and B of 1:1 in @domain */
static void two_sharers(const char *domain, struct gt_actor **a,
			struct gt_actor **b, const char *what)
{
	*a = gt_actor_start("conv-a", domain, 1);
	*b = gt_actor_start("conv-b", domain, 1);
	ok(!gt_call1(*a, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0) &&
	   !gt_call1(*b, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0),
	   "%s: A and B hold 1:1 shared", what);
}

static void test_try_and_timeout(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	const struct gt_result *r;
	struct gt_lock l[4];
	int ret, n;

	gt_new_domain(domain, "cv-try", ORDLOCK_POLICY_ENFORCE, 0);
	two_sharers(domain, &a, &b, "try");
	r = a->res;

	ret = gt_call1(a, GT_OP_CONVERT, 0, 1, 1, EX, 0, ORDLOCK_ACQUIRE_TRY);
	is_errno(ret, EAGAIN, "try: a try-upgrade while B holds shared: EAGAIN");
	is_int(r->failure.reason, ORDLOCK_REASON_BUSY, "try: reason BUSY");
	is_int(r->failure.pid, b->pid, "try: failure.pid is B's");
	is_int(r->failure.holder_mode, SH, "try: B holds it shared");
	ok(olt_key_eq(&r->failure.key, 1, 1, EX), "try: failure.key exclusive 1:1");
	ok(r->elapsed_ms < LONG_MS / 2, "try: it did not wait");
	is_int(r->nheld, 1, "try: A still holds 1:1");

	ret = gt_call1(a, GT_OP_CONVERT, 0, 1, 1, EX, 300, 0);
	is_errno(ret, ETIMEDOUT, "timeout: an upgrade waits at most its timeout");
	ok(r->elapsed_ms >= 300, "timeout: after %llu ms (>= 300)",
	   (unsigned long long)r->elapsed_ms);
	is_int(r->failure.reason, ORDLOCK_REASON_TIMEOUT, "timeout: reason TIMEOUT");
	is_int(r->failure.pid, b->pid, "timeout: failure.pid is B's");
	is_int(r->nheld, 1, "timeout: A still holds 1:1");
	n = gt_locks_read(domain, l, 4);
	ok(n == 2 && l[0].role == GT_HOLDER && l[0].mode == SH &&
	   l[1].role == GT_HOLDER && l[1].mode == SH,
	   "timeout: locks shows two shared holders and no converter left (%d lines)",
	   n);
	is_int(probe(domain, 1, SH), 0,
	   "timeout: a new shared request is granted: nothing is queued");

	is_int(gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "B releases");
	is_int(gt_call1(a, GT_OP_CONVERT, 0, 1, 1, EX, 0, ORDLOCK_ACQUIRE_TRY),
	       0, "try: alone, a try-upgrade succeeds");
	gt_actor_stop(a);
	gt_actor_stop(b);
}

/*
 * The conversion deadlock of the source documents: A and B hold 1:1
 * shared; A asks to upgrade and waits for B; B asks to upgrade too: both
 * can never succeed, so B fails at once, naming A.
 */
static void test_upgrade_deadlock(unsigned int policy)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX], what[32];
	const struct gt_result *r;
	struct gt_actor *a, *b;
	struct gt_stats st;
	struct gt_lock l[4];
	uint64_t ta;
	int ret, n;

	snprintf(what, sizeof(what), "upgrade (%s)", ordlock_policy_name(policy));
	gt_new_domain(domain, "cv-upg", policy, 0);
	two_sharers(domain, &a, &b, what);
	ta = a->res->token;

	gt_submit1(a, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(a, CONV), 0, "%s: A's upgrade waits for B", what);
	n = gt_locks_read(domain, l, 4);
	ok(n == 3 && l[2].role == GT_CONVERTER && l[2].owner_id == a->owner_id[0] &&
	   l[2].mode == EX, "%s: locks shows A as a converter", what);

	ret = gt_call1(b, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
	r = b->res;
	is_errno(ret, EDEADLK, "%s: B's upgrade: EDEADLK", what);
	ok(r->elapsed_ms < LONG_MS / 2, "%s: at once (%llu ms)", what,
	   (unsigned long long)r->elapsed_ms);
	is_int(r->failure.reason, ORDLOCK_REASON_UPGRADE, "%s: reason UPGRADE",
	       what);
	is_int(r->failure.pid, a->pid, "%s: failure.pid names A (%d)", what,
	       (int)a->pid);
	ok(olt_key_eq(&r->failure.key, 1, 1, EX), "%s: failure.key exclusive 1:1",
	   what);
	diag("%s: %s", what, olt_fail_str(&r->failure));
	is_int(r->nheld, 1, "%s: B still holds 1:1 (shared)", what);
	ok(gt_collect(a, 200) == -ETIMEDOUT, "%s: A still waits", what);

	is_int(gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "%s: B releases", what);
	ok(!gt_collect(a, LONG_MS) && !a->res->ret,
	   "%s: then A's upgrade is granted", what);
	ok(a->res->token > ta, "%s: with a new token", what);
	is_int(probe(domain, 1, SH), -EAGAIN, "%s: A holds 1:1 exclusive", what);

	is_int(gt_stats_read(domain, &st), 0, "%s: stats has the domain", what);
	is_int(gt_stat(&st, "upgrade_deadlocks"), 1,
	       "%s: stats: upgrade_deadlocks 1", what);
	is_int(gt_stat(&st, "deadlocks"), 0, "%s: stats: deadlocks 0", what);
	gt_actor_stop(a);
	gt_actor_stop(b);
}

/*
 * An upgrade queues ahead of plain waiters: A and B hold 1:1 shared, C
 * waits for it exclusive, then A asks to upgrade. When B leaves, A is
 * granted before C.
 */
static void test_upgrade_ahead(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b, *c;
	struct gt_lock l[8];
	int n, i, conv_pos = -1, wait_pos = -1;

	gt_new_domain(domain, "cv-ahead", ORDLOCK_POLICY_ENFORCE, 0);
	two_sharers(domain, &a, &b, "ahead");
	c = gt_actor_start("conv-c", domain, 1);
	gt_submit1(c, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(c, ACQ), 0, "ahead: C waits for 1:1 exclusive");
	gt_submit1(a, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(a, CONV), 0, "ahead: A's upgrade waits");
	n = gt_locks_read(domain, l, 8);
	for (i = 0; i < n && i < 8; i++) {
		if (l[i].role == GT_CONVERTER && l[i].owner_id == a->owner_id[0])
			conv_pos = (int)l[i].pos;
		if (l[i].role == GT_WAITER && l[i].owner_id == c->owner_id[0])
			wait_pos = (int)l[i].pos;
	}
	ok(conv_pos == 0 && wait_pos == 1,
	   "ahead: the queue is A's upgrade (0), then C (1): got %d, %d",
	   conv_pos, wait_pos);
	is_int(gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "ahead: B releases");
	ok(!gt_collect(a, LONG_MS) && !a->res->ret,
	   "ahead: A's upgrade is granted first");
	ok(gt_collect(c, 200) == -ETIMEDOUT, "ahead: C still waits");
	is_int(gt_call(a, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "ahead: A releases");
	ok(!gt_collect(c, LONG_MS) && !c->res->ret, "ahead: then C is granted");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_actor_stop(c);
}

/*
 * A downgrade never waits and lets the shared waiters at the head of the
 * queue in: A holds 1:1 exclusive; C (shared), E (exclusive), D (shared)
 * queue in that order. A's downgrade grants C only (E is next and does not
 * fit; D is behind E).
 */
static void test_downgrade(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *c, *d, *e;
	const struct gt_result *r;
	int ret;

	gt_new_domain(domain, "cv-down", ORDLOCK_POLICY_ENFORCE, 0);
	a = gt_actor_start("down-a", domain, 1);
	c = gt_actor_start("down-c", domain, 1);
	d = gt_actor_start("down-d", domain, 1);
	e = gt_actor_start("down-e", domain, 1);
	is_int(gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "down: A holds 1:1 exclusive");
	gt_submit1(c, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(c, ACQ), 0, "down: C waits (shared)");
	gt_submit1(e, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(e, ACQ), 0, "down: E waits (exclusive)");
	gt_submit1(d, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(d, ACQ), 0, "down: D waits (shared)");

	ret = gt_call1(a, GT_OP_CONVERT, 0, 1, 1, SH, LONG_MS, 0);
	r = a->res;
	is_int(ret, 0, "down: A downgrades to shared");
	ok(r->elapsed_ms < LONG_MS / 2, "down: without waiting (%llu ms)",
	   (unsigned long long)r->elapsed_ms);
	ok(!gt_collect(c, LONG_MS) && !c->res->ret,
	   "down: C, the shared waiter at the head, is granted");
	ok(gt_collect(e, 200) == -ETIMEDOUT, "down: E (exclusive) still waits");
	ok(gt_collect(d, 0) == -ETIMEDOUT, "down: D, queued behind E, still waits");

	gt_call(a, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ok(gt_collect(e, 200) == -ETIMEDOUT,
	   "down: A leaves; E still waits for C");
	gt_call(c, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ok(!gt_collect(e, LONG_MS) && !e->res->ret, "down: C leaves: E is granted");
	ok(gt_collect(d, 200) == -ETIMEDOUT, "down: D waits for E");
	gt_call(e, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ok(!gt_collect(d, LONG_MS) && !d->res->ret, "down: then D is granted");
	gt_actor_stop(a);
	gt_actor_stop(c);
	gt_actor_stop(d);
	gt_actor_stop(e);
}

/*
 * An upgrade can close a cycle even where the order rule holds: A holds
 * 1:1 shared and 1:2 exclusive, B holds 1:1 shared. If @upgrade_first,
 * A asks to upgrade 1:1 (waits for B), then B asks for 1:2 (in order;
 * waits for A): B closes the cycle. Otherwise B waits first and A's
 * upgrade closes it: the conversion fails and 1:1 stays shared.
 */
static void test_upgrade_cycle(int upgrade_first)
{
	const char *what = upgrade_first ? "cycle (upgrade first)" :
					   "cycle (upgrade last)";
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b, *victim, *other;
	const struct gt_result *r;
	struct ordlock_key ka[2] = { ORDLOCK_SH(1, 1), ORDLOCK_EX(1, 2) };
	int ret;

	gt_new_domain(domain, "cv-cyc", ORDLOCK_POLICY_ENFORCE, 0);
	a = gt_actor_start("cyc-a", domain, 1);
	b = gt_actor_start("cyc-b", domain, 1);
	ok(!gt_call(a, GT_OP_ACQUIRE, 0, ka, 2, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0),
	   "%s: A holds 1:1 shared and 1:2, B holds 1:1 shared", what);
	if (upgrade_first) {
		gt_submit1(a, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
		is_int(gt_blocked(a, CONV), 0, "%s: A's upgrade waits for B",
		       what);
		ret = gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
		victim = b;
		other = a;
	} else {
		gt_submit1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
		is_int(gt_blocked(b, ACQ), 0, "%s: B waits for 1:2", what);
		ret = gt_call1(a, GT_OP_CONVERT, 0, 1, 1, EX, LONG_MS, 0);
		victim = a;
		other = b;
	}
	r = victim->res;
	is_errno(ret, EDEADLK, "%s: the request that closes the cycle: EDEADLK",
		 what);
	is_int(r->failure.reason, ORDLOCK_REASON_DEADLOCK,
	       "%s: reason DEADLOCK, not ORDER", what);
	is_int(r->ncycle, 2, "%s: a cycle of 2 steps", what);
	if (r->ncycle == 2) {
		const struct ordlock_cycle_step *s = r->cycle;
		int good;

		if (upgrade_first)
			good = s[0].owner_id == b->owner_id[0] &&
			       olt_key_eq(&s[0].key, 1, 2, EX) &&
			       s[0].blocker_mode == EX &&
			       s[1].owner_id == a->owner_id[0] &&
			       olt_key_eq(&s[1].key, 1, 1, EX) &&
			       s[1].blocker_mode == SH;
		else
			good = s[0].owner_id == a->owner_id[0] &&
			       olt_key_eq(&s[0].key, 1, 1, EX) &&
			       s[0].blocker_mode == SH &&
			       s[1].owner_id == b->owner_id[0] &&
			       olt_key_eq(&s[1].key, 1, 2, EX) &&
			       s[1].blocker_mode == EX;
		good = good && s[0].edge == ORDLOCK_EDGE_HARD &&
		       s[1].edge == ORDLOCK_EDGE_HARD;
		ok(good, "%s: the steps name both owners, keys and modes", what);
		diag("  step 0: %s", gt_step_str(&s[0]));
		diag("  step 1: %s", gt_step_str(&s[1]));
	}
	is_int(r->nheld, upgrade_first ? 1 : 2,
	       "%s: the victim keeps what it held", what);
	if (!upgrade_first) {
		is_int(probe(domain, 1, SH), 0,
		       "%s: the failed upgrade left 1:1 shared, its queue empty",
		       what);
		is_int(probe(domain, 1, EX), -EAGAIN, "%s: not exclusive", what);
	}

	is_int(gt_call(victim, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "%s: the victim releases", what);
	ok(!gt_collect(other, LONG_MS) && !other->res->ret,
	   "%s: the other is granted", what);
	gt_actor_stop(a);
	gt_actor_stop(b);
}

int main(void)
{
	watchdog_start(250);
	test_sole_holder();
	test_bad_input();
	test_try_and_timeout();
	test_upgrade_deadlock(ORDLOCK_POLICY_ENFORCE);
	test_upgrade_deadlock(ORDLOCK_POLICY_DETECT);
	test_upgrade_ahead();
	test_downgrade();
	test_upgrade_cycle(1);
	test_upgrade_cycle(0);
	return tap_done();
}
