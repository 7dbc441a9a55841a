// SPDX-License-Identifier: GPL-2.0
/*
 * t_hostile_lease: leases that expire while their holder is in the middle
 * of something.
 *
 *  - an upgrade waits (another shared holder) when the lease expires:
 *    the busy owner is revoked all the same, its upgrade fails with
 *    EKEYEXPIRED without the other holder letting go, the revoked key is
 *    listed, every token of the revoked owner is stale, and the plain
 *    waiter queued behind the conversion is granted with a higher token
 *    when the other holder lets go;
 *  - an acquire waits for a second key when the lease of the first
 *    expires: it fails with EKEYEXPIRED at the deadline (not at its
 *    timeout, and not ETIMEDOUT), the key held before goes to its waiter,
 *    and the waiter behind it for the second key is granted when that
 *    key's holder lets go (the request kept nothing) -- whether that
 *    holder lets go soon after, or the request's timeout is long;
 *  - a shared hold granted without a lease, upgraded after the domain got
 *    a max_hold_ms, the upgrade waiting for another shared holder: the
 *    upgrade asks for no lease and starts none, through the ioctl and
 *    through netlink (whose queued upgrade was granted a max_hold_ms lease
 *    and revoked, unlike one granted at once);
 *  - a release, a downgrade and a renew racing the deadline, round after
 *    round at lease 1-3 ms: each call (the acquire too: the lease may
 *    pass before it returns) either works or fails with EKEYEXPIRED,
 *    RELEASE_ALL always acknowledges, nothing stays held, the revocations
 *    counted are at least the rounds that saw EKEYEXPIRED and at most the
 *    rounds, the owner's stale tokens are refused.
 *
 * That a lease's deadline passed is learnt without the clock: another
 * owner granted a shorter-or-equal lease later is revoked later, and its
 * revocation is seen through poll() (POLLPRI).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
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
#define LONG_MS 60000
/* long enough for the steps before the deadline on a loaded machine (300 ms was not) */
#define LEASE_MS 1500

enum op_kind { OP_ACQUIRE, OP_CONVERT };

/* One call made by a thread, so that the test can watch it wait */
struct op {
	struct ordlock *ol;
	enum op_kind kind;
	struct ordlock_key key;
	unsigned int timeout_ms;
	pthread_t th;
	pid_t tid;
	int ret;
	uint64_t token;
};

static void *op_main(void *arg)
{
	struct op *o = arg;

	__atomic_store_n(&o->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	if (o->kind == OP_ACQUIRE)
		o->ret = ordlock_acquire(o->ol, &o->key, 1, o->timeout_ms, 0, &o->token);
	else
		o->ret = ordlock_convert(o->ol, o->key, o->timeout_ms, 0, &o->token);
	return NULL;
}

/* Start @o in a thread; return once it sleeps in its ioctl (0) or -errno */
static int op_start(struct op *o, struct ordlock *ol, enum op_kind kind,
		    struct ordlock_key key, unsigned int timeout_ms)
{
	uint64_t deadline = now_ms() + BLOCKED_TIMEOUT_MS;

	memset(o, 0, sizeof(*o));
	o->ol = ol;
	o->kind = kind;
	o->key = key;
	o->timeout_ms = timeout_ms;
	o->ret = 1;
	if (pthread_create(&o->th, NULL, op_main, o))
		return -EAGAIN;
	while (!__atomic_load_n(&o->tid, __ATOMIC_SEQ_CST) && now_ms() < deadline)
		usleep(1000);
	return wait_blocked_ioctl(o->tid, kind == OP_ACQUIRE ? ORDLOCK_IOC_ACQUIRE :
				  ORDLOCK_IOC_CONVERT, 0);
}

/*
 * Return once a lease of LEASE_MS granted now has expired and been
 * revoked: a witness owner of @d takes key 99:@id with that lease and
 * waits for its revocation (POLLPRI). 0, or -ETIMEDOUT.
 */
static int lease_passed(const char *d, uint64_t id)
{
	struct ordlock_key k = ORDLOCK_EX(99, id);
	struct ordlock *w = olt_open(d);
	struct pollfd pfd = { .fd = ordlock_fd(w), .events = POLLPRI };
	int ret;

	ret = ordlock_acquire_lease(w, &k, 1, LONG_MS, 0, LEASE_MS, NULL);
	if (!ret)
		ret = poll(&pfd, 1, LONG_MS) == 1 && (pfd.revents & POLLPRI) ? 0 : -ETIMEDOUT;
	ordlock_close(w);
	return ret;
}

static void test_upgrade_waits_past_lease(void)
{
	struct ordlock_key sk = ORDLOCK_SH(1, 1);
	struct ordlock_revoked_key rk[4];
	const char *d = olt_domain("hl-conv");
	struct ordlock *a, *b, *c;
	uint64_t ta, tb;
	struct op conv, wait;
	int n;

	a = olt_open(d);
	b = olt_open(d);
	c = olt_open(d);
	ok(!ordlock_acquire_lease(a, &sk, 1, LONG_MS, 0, LEASE_MS, &ta) &&
	   !ordlock_acquire(b, &sk, 1, LONG_MS, 0, &tb),
	   "upgrade: A (lease %d ms) and B (none) hold 1:1 shared", LEASE_MS);
	is_int(op_start(&conv, a, OP_CONVERT, ordlock_key(1, 1, EX), LONG_MS), 0,
	       "upgrade: A's upgrade waits for B");
	is_int(op_start(&wait, c, OP_ACQUIRE, ordlock_key(1, 1, EX), LONG_MS), 0,
	       "upgrade: C queues for 1:1 exclusive behind the conversion");
	is_int(lease_passed(d, 1), 0, "upgrade: A's lease has expired meanwhile");
	pthread_join(conv.th, NULL);
	ok(conv.ret == -EKEYEXPIRED && conv.token == 0,
	   "upgrade: A is busy and revoked all the same: the conversion fails, EKEYEXPIRED, no token (%d)",
	   conv.ret);
	is_int(ordlock_token_check(b, d, 1, 1, ta), -ESTALE,
	       "upgrade: A's token is stale while B still holds the key");
	n = ordlock_revoked_keys(a, rk, 4);
	ok(n == 1 && olt_key_eq(&rk[0].key, 1, 1, 0),
	   "upgrade: the failure record lists 1:1 as revoked (%d)", n);
	ok(__atomic_load_n(&wait.ret, __ATOMIC_SEQ_CST) == 1, "upgrade: C waits for B");
	is_int(ordlock_release_all(b), 0, "upgrade: B lets go");
	pthread_join(wait.th, NULL);
	ok(!wait.ret && wait.token > ta && (n != 1 || wait.token > rk[0].token),
	   "upgrade: C is granted, with a token above A's (%d)", wait.ret);
	ok(ordlock_token_check(b, d, 1, 1, ta) == -ESTALE &&
	   (n != 1 || ordlock_token_check(b, d, 1, 1, rk[0].token) == -ESTALE),
	   "upgrade: A's tokens are stale");
	is_int(ordlock_token_check(b, d, 1, 1, wait.token), 0, "upgrade: C's is live");
	is_errno(ordlock_renew(a, 0, NULL), EKEYEXPIRED, "upgrade: A's RENEW: EKEYEXPIRED");
	is_int(ordlock_release_all(a), 0, "upgrade: A acknowledges");
	is_int(olt_nheld(a), 0, "upgrade: and holds nothing");
	is_int(gt_stat_of(d, "revocations"), 2, "upgrade: revocations: A and the witness");
	ordlock_close(c);
	is_int(olt_probe(d, 1, 1, EX), 0, "upgrade: 1:1 free at the end");
	ordlock_close(a);
	ordlock_close(b);
}

static void test_acquire_waits_past_lease(int time_out)
{
	const char *what = time_out ? "acquire, 8 s timeout" : "acquire, long timeout";
	struct ordlock_key k1 = ORDLOCK_EX(1, 1), k2 = ORDLOCK_EX(1, 2);
	const char *d = olt_domain("hl-acq");
	struct ordlock *a, *b, *c1, *c2;
	struct op acq, w1, w2;
	uint64_t ta;

	a = olt_open(d);
	b = olt_open(d);
	c1 = olt_open(d);
	c2 = olt_open(d);
	ok(!ordlock_acquire_lease(a, &k1, 1, LONG_MS, 0, LEASE_MS, &ta) &&
	   !ordlock_acquire(b, &k2, 1, LONG_MS, 0, NULL),
	   "%s: A holds 1:1 (lease %d ms), B holds 1:2", what, LEASE_MS);
	/* Either wait outlasts the witness's lease by far */
	is_int(op_start(&acq, a, OP_ACQUIRE, k2, time_out ? 8000 : LONG_MS), 0,
	       "%s: A waits for 1:2", what);
	is_int(op_start(&w1, c1, OP_ACQUIRE, k1, LONG_MS), 0, "%s: C1 waits for 1:1", what);
	is_int(op_start(&w2, c2, OP_ACQUIRE, k2, LONG_MS), 0,
	       "%s: C2 waits for 1:2 behind A", what);
	is_int(lease_passed(d, 1), 0, "%s: A's lease has expired meanwhile", what);
	pthread_join(acq.th, NULL);
	ok(acq.ret == -EKEYEXPIRED && acq.token == 0,
	   "%s: A's request ends with EKEYEXPIRED, no token (%d)", what, acq.ret);
	is_int(olt_nheld(a), 0, "%s: A holds nothing", what);
	pthread_join(w1.th, NULL);
	ok(!w1.ret && w1.token > ta, "%s: C1 is granted 1:1 with a higher token (%d)",
	   what, w1.ret);
	ok(__atomic_load_n(&w2.ret, __ATOMIC_SEQ_CST) == 1,
	   "%s: C2 still waits (B holds 1:2)", what);
	is_int(ordlock_release_all(b), 0, "%s: B lets 1:2 go", what);
	pthread_join(w2.th, NULL);
	is_int(w2.ret, 0, "%s: C2 is granted 1:2 (A's grant was not kept)", what);
	is_int(ordlock_release_all(a), 0, "%s: A acknowledges", what);
	ordlock_close(a);
	ordlock_close(b);
	ordlock_close(c1);
	ordlock_close(c2);
	ok(!olt_probe(d, 1, 1, EX) && !olt_probe(d, 1, 2, EX), "%s: all free at the end", what);
}

/*
 * A hold granted without a lease, upgraded after the domain got a
 * max_hold_ms: an upgrade asks for no lease (a netlink CONVERT with one is
 * EINVAL) and starts none, whether it was granted at once or after waiting,
 * through the ioctl or netlink.
 */
static void test_upgrade_after_max_hold(int netlink)
{
	const char *what = netlink ? "netlink upgrade" : "ioctl upgrade";
	struct ordlock_key sk = ORDLOCK_SH(1, 1);
	struct ordlock *adm = olt_open(NULL), *a = NULL, *b;
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct olc_nl_outcome o;
	struct nlt *s = NULL;
	uint64_t token = 0;
	struct op conv;
	int ret;

	snprintf(d, sizeof(d), "%s", olt_domain("hl-cvmh"));
	is_int(ordlock_set_max_hold(adm, d, 0), 0, "%s: a domain without max_hold_ms", what);
	if (netlink) {
		s = nlt_must_open();
		memset(&o, 0, sizeof(o));
		ret = nlt_acquire(s, d, &sk, 1, LONG_MS * 1000000ULL, 0, 1, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
		   "%s: A holds 1:1 shared, no lease (%d)", what, ret);
	} else {
		a = olt_open(d);
		is_int(ordlock_acquire(a, &sk, 1, LONG_MS, 0, NULL), 0,
		       "%s: A holds 1:1 shared, no lease", what);
	}
	b = olt_open(d);
	is_int(ordlock_acquire(b, &sk, 1, LONG_MS, 0, NULL), 0, "%s: so does B", what);
	is_int(ordlock_set_max_hold(adm, d, LEASE_MS), 0, "%s: max_hold_ms set to %d", what,
	       LEASE_MS);
	if (netlink) {
		memset(&o, 0, sizeof(o));
		ret = nlt_convert(s, ordlock_key(1, 1, EX), LONG_MS * 1000000ULL, 0, 2, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_QUEUED, "%s: A's upgrade is queued (%d)",
		   what, ret);
	} else {
		is_int(op_start(&conv, a, OP_CONVERT, ordlock_key(1, 1, EX), LONG_MS), 0,
		       "%s: A's upgrade waits", what);
	}
	is_int(ordlock_release_all(b), 0, "%s: B lets go", what);
	if (netlink) {
		memset(&o, 0, sizeof(o));
		ret = nlt_wait_result(s, LONG_MS, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED, "%s: the upgrade is granted (%d)",
		   what, ret);
		token = o.token;
	} else {
		pthread_join(conv.th, NULL);
		is_int(conv.ret, 0, "%s: the upgrade is granted", what);
		token = conv.token;
	}
	is_int(lease_passed(d, 2), 0, "%s: a lease of %d ms granted after it has passed", what,
	       LEASE_MS);
	is_int(ordlock_token_check(adm, d, 1, 1, token), 0,
	       "%s: A still holds 1:1 under the upgrade's token: the upgrade started no lease",
	       what);
	is_int(olt_probe(d, 1, 1, SH), -EAGAIN, "%s: 1:1 is still held exclusive", what);
	if (netlink)
		nlt_close(s);
	else
		ordlock_close(a);
	ordlock_close(b);
	is_int(olt_probe(d, 1, 1, EX), 0, "%s: free after close", what);
	ordlock_set_max_hold(adm, d, 0);
	ordlock_close(adm);
}

#define RACE_ROUNDS 200

static void test_race_the_deadline(void)
{
	struct ordlock_key k[2] = { ORDLOCK_EX(1, 1), ORDLOCK_EX(1, 2) };
	const char *d = olt_domain("hl-race");
	unsigned int r, expired = 0, bad = 0, ack_bad = 0, free_bad = 0, stale_bad = 0;
	struct ordlock *a = olt_open(d);
	struct ordlock *judge = olt_open(d);
	long long revoked;
	uint64_t t;
	int ret;

	for (r = 0; r < RACE_ROUNDS; r++) {
		unsigned int lease = 1 + r % 3, spin = (r * 7919) % 3000;
		uint64_t t0;
		int saw = 0;

		ret = ordlock_acquire_lease(a, k, 2, LONG_MS, 0, lease, &t);
		if (ret) {
			/* The lease may pass before the grant is returned */
			if (ret == -EKEYEXPIRED)
				expired++;
			else if (bad++ < 5)
				diag("race: round %u: acquire: %s", r, strerror(-ret));
			if (ordlock_release_all(a) || olt_nheld(a) != 0)
				ack_bad++;
			if (olt_probe(d, 1, 1, EX) || olt_probe(d, 1, 2, EX))
				free_bad++;
			continue;
		}
		t0 = now_ms();
		while (spin-- && now_ms() - t0 < lease)
			;
		switch (r % 3) {
		case 0:
			ret = ordlock_release(a, &k[0], 1);
			break;
		case 1:
			ret = ordlock_convert(a, ordlock_key(1, 1, SH), 0, 0, NULL);
			break;
		default:
			ret = ordlock_renew(a, 0, NULL);
			break;
		}
		if (ret == -EKEYEXPIRED)
			saw = 1;
		else if (ret && bad++ < 5)
			diag("race: round %u (lease %u ms), call %u: %s (reason %s)", r, lease,
			     r % 3, strerror(-ret),
			     ordlock_reason_name(ordlock_last_failure(a)->reason));
		/* A second call: no longer exactly at the deadline */
		ret = ordlock_renew(a, 0, NULL);
		if (ret == -EKEYEXPIRED)
			saw = 1;
		else if (ret && bad++ < 5)
			diag("race: round %u (lease %u ms), renew after call %u: %s (reason %s)",
			     r, lease, r % 3, strerror(-ret),
			     ordlock_reason_name(ordlock_last_failure(a)->reason));
		expired += saw;
		if (ordlock_release_all(a) || olt_nheld(a) != 0)
			ack_bad++;
		if (olt_probe(d, 1, 1, EX) || olt_probe(d, 1, 2, EX))
			free_bad++;
		if (ordlock_token_check(judge, d, 1, 1, t) != -ESTALE)
			stale_bad++;
	}
	ok(!bad, "race: every call at the deadline worked or failed with EKEYEXPIRED (%u others)", bad);
	ok(!ack_bad, "race: RELEASE_ALL acknowledged every round, nothing held after (%u bad)", ack_bad);
	ok(!free_bad, "race: both keys free after each round (%u bad)", free_bad);
	ok(!stale_bad, "race: the round's token stale after each round (%u bad)", stale_bad);
	revoked = gt_stat_of(d, "revocations");
	ok(revoked >= expired && revoked <= RACE_ROUNDS,
	   "race: %lld revocations counted, %u rounds saw EKEYEXPIRED, %d rounds",
	   revoked, expired, RACE_ROUNDS);
	diag("race: %u of %d rounds saw EKEYEXPIRED", expired, RACE_ROUNDS);
	is_int(ordlock_try_acquire(a, k, 2, NULL), 0, "race: the owner works after");
	ordlock_close(a);
	ordlock_close(judge);
}

int main(void)
{
	watchdog_start(600);
	test_upgrade_waits_past_lease();
	test_acquire_waits_past_lease(0);
	test_acquire_waits_past_lease(1);
	test_upgrade_after_max_hold(0);
	test_upgrade_after_max_hold(1);
	test_race_the_deadline();
	ok(olt_stats_resources() == 0, "no resource in use at the end (%ld)",
	   olt_stats_resources());
	return tap_done();
}
