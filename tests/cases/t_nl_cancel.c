// SPDX-License-Identifier: GPL-2.0
/*
 * t_nl_cancel: ORDLOCK_CMD_CANCEL of a queued netlink request.
 *
 *  - a cancel of a queued request wins: CANCELLED, no RESULT, nothing kept
 *    (not even the keys of a multi-key request taken meanwhile, nor the
 *    mode of a conversion);
 *  - a cancel with another cookie, of a finished request, or from a socket
 *    that never asked for anything, fails with ENOENT and an extack;
 *  - cancel racing with the grant, 200 rounds: an ioctl holder releases in
 *    a thread while the socket cancels. Each round has exactly one
 *    outcome: the cancel says CANCELLED and no RESULT ever comes, or it
 *    fails with ENOENT and a RESULT GRANTED comes; either way the key is
 *    free at the end of the round (an ioctl try-acquire takes it).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "nlcheck.h"	/* SH, EX, LONG_MS, LONG_NS, WAIT_MS */
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define ROUNDS		200

static int queued_ok(struct nlt *s, int ret, const struct olc_nl_outcome *o,
		     const char *what)
{
	int cond = !ret && o->status == ORDLOCK_STATUS_QUEUED;

	ok(cond, "%s: QUEUED", what);
	if (ret)
		diag("  %s", nlt_extack_str(s));
	else if (!cond)
		diag("  %s", nlt_outcome_str(o));
	return cond;
}

static int cancelled_ok(struct nlt *s, int ret, const struct olc_nl_outcome *o,
			uint64_t cookie, const char *what)
{
	int cond = !ret && o->status == ORDLOCK_STATUS_CANCELLED &&
		   o->cookie == cookie && o->cmd == ORDLOCK_CMD_CANCEL;

	ok(cond, "%s: the reply to CANCEL says CANCELLED, cookie %llu", what,
	   (unsigned long long)cookie);
	if (ret)
		diag("  %s", nlt_extack_str(s));
	else if (!cond)
		diag("  %s", nlt_outcome_str(o));
	return cond;
}

/* The socket holds nothing: releasing @key is refused with ENOENT */
static int holds_nothing(struct nlt *s, struct ordlock_key key)
{
	struct olc_nl_outcome o;
	int ret = nlt_release(s, &key, 1, &o);

	return !ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == ENOENT;
}

static void test_cancel_queued(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key key = ORDLOCK_EX(1, 2);
	struct ordlock_key two[2] = { ORDLOCK_EX(1, 1), ORDLOCK_EX(1, 2) };
	struct olc_nl_outcome o;
	struct gt_actor *hol;
	struct nlt *s;
	int ret;

	diag("cancel of a queued request");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlc"));
	/* the holder is another process: see t_netlink's test_same_thread() */
	hol = gt_actor_start("olhold", dom, 1);
	is_int(gt_call1(hol, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0), 0,
	       "an ioctl owner holds x1:2");
	s = nlt_must_open();

	ret = nlt_acquire(s, dom, &key, 1, LONG_NS, 0, 100, &o);
	queued_ok(s, ret, &o, "ACQUIRE x1:2");
	ret = nlt_cancel(s, 101, &o);
	is_errno(ret, ENOENT, "CANCEL with another cookie: ENOENT");
	ok(strstr(s->nl->ext.msg, "cookie") != NULL, "extack: %s", nlt_extack_str(s));
	ok(s->nl->ext.have_off, "the extack points at ORDLOCK_A_COOKIE");
	ret = nlt_cancel(s, 100, &o);
	cancelled_ok(s, ret, &o, 100, "CANCEL with its cookie");
	ok(!o.have_token, "no token");
	is_errno(nlt_wait_result(s, 300, &o), ETIMEDOUT, "no RESULT follows");
	ok(holds_nothing(s, key), "the socket holds nothing");
	ret = nlt_cancel(s, 100, &o);
	is_errno(ret, ENOENT, "a second CANCEL: ENOENT");

	/* the first key was taken while the second was waited for */
	ret = nlt_acquire(s, NULL, two, 2, LONG_NS, 0, 102, &o);
	queued_ok(s, ret, &o, "ACQUIRE {x1:1, x1:2}");
	is_errno(olt_probe(dom, 1, 1, EX), EAGAIN, "x1:1 is taken meanwhile");
	ret = nlt_cancel(s, 102, &o);
	cancelled_ok(s, ret, &o, 102, "CANCEL");
	is_int(olt_probe(dom, 1, 1, EX), 0, "x1:1 was given back");
	is_errno(nlt_wait_result(s, 300, &o), ETIMEDOUT, "no RESULT follows");

	/* a cancel after the grant */
	ret = nlt_acquire(s, NULL, &key, 1, LONG_NS, 0, 103, &o);
	queued_ok(s, ret, &o, "ACQUIRE x1:2 again");
	gt_call(hol, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ret = nlt_wait_result(s, WAIT_MS, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_GRANTED && o.cookie == 103,
	   "RESULT GRANTED once the holder released");
	ret = nlt_cancel(s, 103, &o);
	is_errno(ret, ENOENT, "CANCEL after the grant: ENOENT");
	is_errno(olt_probe(dom, 1, 2, EX), EAGAIN, "the socket still holds x1:2");
	nlt_release(s, NULL, 0, NULL);

	/* a cancelled upgrade keeps the shared hold */
	key = ORDLOCK_SH(1, 2);
	ret = nlt_acquire(s, NULL, &key, 1, 0, 0, 104, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_GRANTED, "the socket shares s1:2");
	is_int(gt_call1(hol, GT_OP_ACQUIRE, 0, 1, 2, SH, LONG_MS, 0), 0,
	       "and so does the ioctl owner");
	ret = nlt_convert(s, ORDLOCK_EX(1, 2), LONG_NS, 0, 105, &o);
	queued_ok(s, ret, &o, "CONVERT s1:2 to exclusive");
	ret = nlt_cancel(s, 105, &o);
	cancelled_ok(s, ret, &o, 105, "CANCEL of the conversion");
	is_errno(nlt_wait_result(s, 300, &o), ETIMEDOUT, "no RESULT follows");
	gt_call(hol, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	is_int(olt_probe(dom, 1, 2, SH), 0, "the key can still be shared");
	is_errno(olt_probe(dom, 1, 2, EX), EAGAIN,
		 "but not taken: the socket still holds it shared");
	nlt_close(s);

	s = nlt_must_open();
	ret = nlt_cancel(s, 1, &o);
	is_errno(ret, ENOENT, "CANCEL from a socket that never asked: ENOENT");
	ok(s->nl->ext.msg[0], "extack: %s", nlt_extack_str(s));
	nlt_close(s);
	gt_actor_stop(hol);
}

/*
 * The holding side of the race: a thread with its own ioctl owner (the
 * kernel tells threads apart), which takes the key at the start of each
 * round, once the socket's side of the round before is over (the leak
 * check of that round), and releases it in the race.
 */
struct racer {
	struct ordlock *ol;
	struct ordlock_key key;
	struct pbarrier *take, *held, *go, *done;
	unsigned int spin;
	int stop;
	int took;		/* the try-acquire of this round */
	int errors;
};

static void spin(unsigned int n)
{
	volatile unsigned int i;

	for (i = 0; i < n; i++)
		;
}

static void *racer_main(void *arg)
{
	struct racer *r = arg;

	for (;;) {
		if (pbarrier_wait(r->take))
			break;
		r->took = ordlock_try_acquire(r->ol, &r->key, 1, NULL);
		if (r->took && !ordlock_acquire(r->ol, &r->key, 1, WAIT_MS, 0, NULL))
			r->took = 1;	/* free only after a wait */
		if (pbarrier_wait(r->held) || pbarrier_wait(r->go) || r->stop)
			break;
		spin(r->spin);
		if (ordlock_release(r->ol, &r->key, 1))
			r->errors++;
		if (pbarrier_wait(r->done))
			break;
	}
	return NULL;
}

static void test_cancel_race(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key key = ORDLOCK_EX(1, 1);
	unsigned int i, cancelled = 0, granted = 0, bad = 0, leaked = 0;
	unsigned int stray = 0, queued = 0;
	struct olc_nl_outcome o;
	struct racer *r;
	pthread_t thr;
	struct nlt *s;
	uint64_t cookie;
	int ret, ok_queued;

	diag("cancel racing with the grant, %d rounds", ROUNDS);
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlr"));
	srand(getpid());
	r = shm_alloc(sizeof(*r));
	r->ol = olt_open(dom);
	r->key = key;
	r->take = pbarrier_new(2);
	r->held = pbarrier_new(2);
	r->go = pbarrier_new(2);
	r->done = pbarrier_new(2);
	s = nlt_must_open();
	if (pthread_create(&thr, NULL, racer_main, r))
		bail_out("pthread_create failed");

	for (i = 0; i < ROUNDS; i++) {
		cookie = 1000 + i;
		/* the racer takes the key: the leak check of the last round */
		if (pbarrier_wait(r->take) || pbarrier_wait(r->held))
			bail_out("round %u: the racer is gone", i);
		if (r->took) {
			if (leaked++ < 5)
				diag("round %u: the key was not free (%s)", i,
				     r->took > 0 ? "taken after a wait" :
				     strerror(-r->took));
			if (r->took < 0)
				bail_out("round %u: the racer cannot take the key", i);
		}
		ret = nlt_acquire(s, i ? NULL : dom, &key, 1, LONG_NS, 0,
				  cookie, &o);
		ok_queued = !ret && o.status == ORDLOCK_STATUS_QUEUED;
		if (!ok_queued && bad++ < 5)
			diag("round %u: ACQUIRE: %s", i, ret ?
			     nlt_extack_str(s) : nlt_outcome_str(&o));
		queued += ok_queued;
		/* either side may go first, by a little or a lot */
		r->spin = rand() % (i & 1 ? 20000 : 2000);
		if (pbarrier_wait(r->go))
			bail_out("round %u: the racer is gone", i);
		spin(rand() % (i & 1 ? 2000 : 20000));
		if (ok_queued)
			ret = nlt_cancel(s, cookie, &o);
		if (pbarrier_wait(r->done))
			bail_out("round %u: the racer is gone", i);
		if (!ok_queued) {
			nlt_release(s, NULL, 0, NULL);
			continue;
		}
		if (!ret && o.status == ORDLOCK_STATUS_CANCELLED &&
		    o.cookie == cookie) {
			cancelled++;
			if (!holds_nothing(s, key) && bad++ < 5)
				diag("round %u: cancelled, yet the socket holds the key",
				     i);
		} else if (ret == -ENOENT) {
			ret = nlt_wait_result(s, WAIT_MS, &o);
			if (ret || o.status != ORDLOCK_STATUS_GRANTED ||
			    o.cookie != cookie) {
				if (bad++ < 5)
					diag("round %u: CANCEL failed with ENOENT, then %s",
					     i, ret ? strerror(-ret) :
					     nlt_outcome_str(&o));
				nlt_release(s, NULL, 0, NULL);
				continue;
			}
			granted++;
			ret = nlt_release(s, &key, 1, &o);
			if ((ret || o.status != ORDLOCK_STATUS_GRANTED) && bad++ < 5)
				diag("round %u: granted, but RELEASE: %s", i,
				     ret ? nlt_extack_str(s) : nlt_outcome_str(&o));
		} else {
			if (bad++ < 5)
				diag("round %u: CANCEL: %s", i, ret ?
				     nlt_extack_str(s) : nlt_outcome_str(&o));
			nlt_release(s, NULL, 0, NULL);
			continue;
		}
		/* no second outcome: nothing else has arrived */
		if (!nlt_wait_result(s, 0, &o) && stray++ < 5)
			diag("round %u: a stray RESULT: %s", i,
			     nlt_outcome_str(&o));
	}
	/* the racer takes the key once more: the last round's leak check */
	if (pbarrier_wait(r->take) || pbarrier_wait(r->held))
		bail_out("the racer is gone");
	r->stop = 1;
	pbarrier_wait(r->go);
	pthread_join(thr, NULL);
	if (r->took)
		leaked++;

	diag("%u rounds: %u cancelled, %u granted first", ROUNDS, cancelled,
	     granted);
	is_int(queued, ROUNDS, "every round's ACQUIRE was QUEUED");
	is_int(cancelled + granted, ROUNDS, "every round had one of the two outcomes");
	is_int(bad, 0, "no round had a wrong or a double outcome");
	is_int(r->errors, 0, "every release of the ioctl holder succeeded");
	while (!nlt_wait_result(s, 500, &o)) {
		if (stray++ < 5)
			diag("a stray RESULT: %s", nlt_outcome_str(&o));
	}
	is_int(stray, 0, "no RESULT beyond the one of each granted round");
	is_int(leaked, 0, "the key was free at the end of every round");
	if (!cancelled || !granted)
		diag("note: only one outcome happened; the race was not close");
	nlt_close(s);
	ordlock_close(r->ol);
	is_int(olt_probe(dom, 1, 1, EX), 0, "the key is free at the end");
	pbarrier_free(r->take);
	pbarrier_free(r->held);
	pbarrier_free(r->go);
	pbarrier_free(r->done);
	shm_free(r, sizeof(*r));
}

int main(void)
{
	watchdog_start(280);
	test_cancel_queued();
	test_cancel_race();
	return tap_done();
}
