// SPDX-License-Identifier: GPL-2.0
/*
 * t_netlink: locks over the generic netlink family "ordlock".
 *
 *  - a request granted at once (token, cookie), refused by the order rule,
 *    by a busy key (TRY), a release of a key not held, a domain change
 *    while holding; conversions both ways;
 *  - an asynchronous acquire that is QUEUED and granted later, when an
 *    ioctl holder goes away, with one RESULT and a larger token;
 *  - a TIMEOUT result that names the key and the holder's pid, all or
 *    nothing: what the request took meanwhile is given back;
 *  - a socket closed while waiting leaves the queue, the others proceed;
 *    one closed (or whose process is killed) while holding releases its
 *    keys, and an OWNER_DIED event is multicast when a process is killed
 *    holding keys (not when it closes them).
 *
 * Deadlocks and FIFO order over netlink: t_nl_deadlock; counters, domain
 * settings and events: t_nl_admin.
 *
 * Every wait that must end is bounded; interleavings are forced by the
 * replies (QUEUED means queued) or by waiting until an ioctl caller sleeps.
 * The checks are tests/lib/nlcheck.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "nlcheck.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

static void test_grant_and_refusals(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX], other[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k[2] = { ORDLOCK_EX(1, 1), ORDLOCK_SH(1, 2) };
	struct ordlock_key k0 = ORDLOCK_EX(1, 0), busy = ORDLOCK_EX(2, 1);
	struct ordlock_key k12 = ORDLOCK_SH(1, 2), k31 = ORDLOCK_SH(3, 1);
	struct olc_nl_outcome o;
	struct olt_holder *h;
	struct olc_nl_entry *v;
	struct nlt *s;
	uint64_t t1, t;
	int i, n, ret, found;

	diag("granted at once, and refused at once");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlg"));
	snprintf(other, sizeof(other), "%s", olt_domain("nlo"));
	h = olt_holder_start(dom, &busy, 1);
	is_int(h->result, 0, "an ioctl owner (child) holds x2:1");
	s = nlt_must_open();

	ret = nlt_acquire(s, dom, k, 2, 0, 0, 7, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED,
	      "ACQUIRE {x1:1, s1:2} in a new domain is granted at once");
	is_int(o.cmd, ORDLOCK_CMD_ACQUIRE, "the reply has command ACQUIRE");
	is_int(o.cookie, 7, "it echoes the cookie");
	ok(o.have_token && o.token > 0, "with a fencing token (%llu)",
	   (unsigned long long)o.token);
	ok(!o.have_failure && !o.error, "and no failure");
	t1 = o.token;

	n = nlt_dump(L, ORDLOCK_CMD_GET_OWNERS, dom, &v);
	found = 0;
	for (i = 0; i < n; i++) {
		if (v[i].kind != ORDLOCK_KIND_NETLINK)
			continue;
		found++;
		is_int(v[i].pid, getpid(), "GET_OWNERS: the netlink owner has our pid");
		is_int(v[i].held, 2, "GET_OWNERS: it holds 2 keys");
		ok(!strcmp(v[i].comm, "t_netlink"), "GET_OWNERS: comm %s",
		   v[i].comm);
		ok(!OLC_NL_HAS(&v[i], ORDLOCK_E_KEY), "GET_OWNERS: it waits for nothing");
	}
	is_int(found, 1, "GET_OWNERS: one netlink owner in the domain");
	free(v);

	is_errno(olt_probe(dom, 1, 1, EX), EAGAIN, "an ioctl owner cannot take x1:1");
	is_int(olt_probe(dom, 1, 2, SH), 0, "it can share s1:2");
	is_errno(olt_probe(dom, 1, 2, EX), EAGAIN, "but not take it exclusively");

	ret = nlt_acquire(s, NULL, &k0, 1, 0, 0, 8, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED, "x1:0 below held keys is refused");
	is_int(o.cookie, 8, "the refusal echoes the cookie");
	is_int(o.error, EDEADLK, "ORDLOCK_A_ERRNO EDEADLK");
	ok(o.have_failure, "with ORDLOCK_A_FAILURE");
	fail_ok(&o.failure, ORDLOCK_REASON_ORDER, EDEADLK, "order violation");
	key_ok(&o.failure.key, 1, 0, EX, "failure key");
	key_ok(&o.failure.held, 1, 1, EX, "failure held key");
	ok(!o.have_token, "no token");

	ret = nlt_acquire(s, NULL, &busy, 1, 0, ORDLOCK_ACQUIRE_TRY, 9, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED, "TRY on a busy x2:1 is refused");
	is_int(o.error, EAGAIN, "ORDLOCK_A_ERRNO EAGAIN");
	fail_ok(&o.failure, ORDLOCK_REASON_BUSY, EAGAIN, "busy");
	key_ok(&o.failure.key, 2, 1, EX, "failure key");
	is_int(o.failure.pid, h->pid, "failure pid is the holder's");
	is_int(o.failure.holder_mode, EX, "failure holder_mode exclusive");

	ret = nlt_release(s, &k12, 1, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "RELEASE {1:2}");
	is_int(o.cmd, ORDLOCK_CMD_RELEASE, "the reply has command RELEASE");
	is_int(olt_probe(dom, 1, 2, EX), 0, "x1:2 is free");
	ret = nlt_release(s, &k12, 1, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED, "RELEASE {1:2} again is refused");
	is_int(o.error, ENOENT, "ORDLOCK_A_ERRNO ENOENT");
	fail_ok(&o.failure, ORDLOCK_REASON_NOT_HELD, ENOENT, "not held");
	key_ok(&o.failure.key, 1, 2, 0, "failure key");

	k[0] = ORDLOCK_EX(3, 1);
	ret = nlt_acquire(s, other, k, 1, 0, 0, 10, &o);
	is_errno(ret, EBUSY, "ACQUIRE with another ORDLOCK_A_DOMAIN while holding: EBUSY");
	ok(strstr(s->nl->ext.msg, "domain") != NULL, "extack: %s", nlt_extack_str(s));
	is_int(olt_probe(dom, 3, 1, EX), 0, "and x3:1 was not taken");

	ret = nlt_release(s, NULL, 0, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "RELEASE with ORDLOCK_RELEASE_ALL");
	is_int(olt_probe(dom, 1, 1, EX), 0, "x1:1 is free");

	/* the domain moves once nothing is held */
	ret = nlt_acquire(s, other, &k31, 1, 0, 0, 11, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "then ACQUIRE s3:1 in another domain");
	is_errno(olt_probe(other, 3, 1, EX), EAGAIN, "it is held there");
	is_int(olt_probe(dom, 3, 1, EX), 0, "not in the first domain");
	t = o.token;

	ret = nlt_convert(s, ORDLOCK_EX(3, 1), LONG_NS, 0, 12, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "CONVERT s3:1 to exclusive");
	is_int(o.cmd, ORDLOCK_CMD_CONVERT, "the reply has command CONVERT");
	ok(o.have_token && o.token > t, "with a new token (%llu > %llu)",
	   (unsigned long long)o.token, (unsigned long long)t);
	is_errno(olt_probe(other, 3, 1, SH), EAGAIN, "nobody can share it now");
	ret = nlt_convert(s, ORDLOCK_SH(3, 1), 0, 0, 13, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "CONVERT back to shared");
	is_int(olt_probe(other, 3, 1, SH), 0, "it can be shared again");
	ret = nlt_convert(s, ORDLOCK_EX(3, 2), 0, 0, 14, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED, "CONVERT of a key not held is refused");
	is_int(o.error, ENOENT, "ORDLOCK_A_ERRNO ENOENT");

	nlt_release(s, NULL, 0, NULL);
	ret = nlt_acquire(s, dom, &k0, 1, 0, 0, 15, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "back in the first domain");
	ok(o.token > t1, "tokens grow in the domain (%llu > %llu)",
	   (unsigned long long)o.token, (unsigned long long)t1);
	nlt_close(s);
	is_int(olt_probe(dom, 1, 0, EX), 0, "closing the socket released x1:0");
	is_int(olt_holder_stop(h), 0, "holder exits");
}

/*
 * The opening of a test of a queued request: @what as a diagnostic; @dom a
 * fresh domain (named from @prefix) where a child holds @key (a point,
 * @held); a socket to ask with
 */
static struct nlt *held_by_child(const char *what, char *dom, const char *prefix,
				 struct ordlock_key key, struct olt_holder **h,
				 const char *held)
{
	diag("%s", what);
	snprintf(dom, ORDLOCK_DOMAIN_NAME_MAX, "%s", olt_domain(prefix));
	*h = olt_holder_start(dom, &key, 1);
	is_int((*h)->result, 0, "%s", held);
	return nlt_must_open();
}

static void test_async_grant(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key key = ORDLOCK_EX(1, 5);
	struct ordlock_key two[2] = { ORDLOCK_EX(1, 5), ORDLOCK_EX(1, 4) };
	struct ordlock_key k9 = ORDLOCK_EX(1, 9);
	struct olc_nl_outcome o;
	struct olt_holder *h;
	struct olc_nl_entry e;
	struct nlt *s;
	uint64_t th;
	int ret;

	s = held_by_child("an asynchronous acquire, granted when the ioctl holder leaves",
			  dom, "nla", key, &h, "an ioctl owner (child) holds x1:5");

	ret = nlt_acquire(s, dom, &key, 1, LONG_NS, 0, 42, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_QUEUED, "ACQUIRE x1:5 is QUEUED");
	is_int(o.cookie, 42, "the reply echoes the cookie");
	ok(!o.have_token && !o.have_failure, "without token or failure");
	is_errno(nlt_wait_result(s, 300, &o), ETIMEDOUT,
		 "no RESULT while the holder holds");

	ret = nlt_acquire(s, NULL, &k9, 1, 0, 0, 43, &o);
	is_errno(ret, EBUSY, "a second request while one is queued: EBUSY");
	ok(strstr(s->nl->ext.msg, "in progress") != NULL, "extack: %s",
	   nlt_extack_str(s));
	is_errno(nlt_cancel(s, 43, &o), ENOENT,
		 "the refused request left nothing to cancel");

	ret = nlt_find_lock(L, dom, 1, 5, ORDLOCK_ROLE_WAITER, 0, &e);
	is_int(ret, 0, "GET_LOCKS: a waiter on 1:5");
	if (!ret) {
		is_int(e.pid, getpid(), "GET_LOCKS: the waiter has our pid");
		is_int(e.mode, EX, "GET_LOCKS: it wants 1:5 exclusive");
		ok(OLC_NL_HAS(&e, ORDLOCK_E_WAITED_US) && !OLC_NL_HAS(&e, ORDLOCK_E_TOKEN),
		   "GET_LOCKS: the waiter has waited_us, no token");
	}
	ret = nlt_find_lock(L, dom, 1, 5, ORDLOCK_ROLE_HOLDER, 0, &e);
	ok(!ret && (pid_t)e.pid == h->pid && e.token == h->token,
	   "GET_LOCKS: the holder is the child, with its token");

	th = h->token;
	is_int(olt_holder_stop(h), 0, "the holder exits");
	if (result_ok(s, &o, ORDLOCK_STATUS_GRANTED, 42, "after the holder left"))
		ok(o.have_token && o.token > th,
		   "the token (%llu) is greater than the holder's (%llu)",
		   (unsigned long long)o.token, (unsigned long long)th);
	is_errno(nlt_wait_result(s, 200, &o), ETIMEDOUT, "exactly one RESULT");
	is_errno(olt_probe(dom, 1, 5, EX), EAGAIN, "the socket holds x1:5");
	ret = nlt_release(s, &key, 1, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "RELEASE {1:5}");
	is_int(olt_probe(dom, 1, 5, EX), 0, "x1:5 is free");

	/* two keys: the first is taken while the second is waited for */
	h = olt_holder_start(dom, &key, 1);
	ret = nlt_acquire(s, NULL, two, 2, LONG_NS, 0, 44, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_QUEUED, "ACQUIRE {x1:5, x1:4} is QUEUED");
	is_errno(olt_probe(dom, 1, 4, EX), EAGAIN, "x1:4 is taken while it waits for x1:5");
	is_int(olt_holder_stop(h), 0, "the holder exits");
	result_ok(s, &o, ORDLOCK_STATUS_GRANTED, 44, "both keys");
	nlt_release(s, NULL, 0, NULL);
	ok(!olt_probe(dom, 1, 5, EX) && !olt_probe(dom, 1, 4, EX),
	   "both released");

	/* an upgrade that waits for another shared holder */
	key = ORDLOCK_SH(1, 8);
	h = olt_holder_start(dom, &key, 1);
	ret = nlt_acquire(s, NULL, &key, 1, 0, 0, 45, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "the socket shares s1:8 with a child");
	th = o.token;
	ret = nlt_convert(s, ORDLOCK_EX(1, 8), LONG_NS, 0, 46, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_QUEUED, "CONVERT to exclusive is QUEUED");
	is_int(olt_holder_stop(h), 0, "the other holder exits");
	if (result_ok(s, &o, ORDLOCK_STATUS_GRANTED, 46, "the upgrade"))
		ok(o.have_token && o.token > th, "with a new token (%llu > %llu)",
		   (unsigned long long)o.token, (unsigned long long)th);
	is_errno(olt_probe(dom, 1, 8, SH), EAGAIN, "held exclusive now");
	nlt_close(s);
}

static void test_timeout(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key key = ORDLOCK_EX(1, 6);
	struct ordlock_key two[2] = { ORDLOCK_EX(1, 2), ORDLOCK_EX(1, 6) };
	struct olc_nl_outcome o;
	struct olt_holder *h;
	struct olc_nl_event ev;
	struct nlt *s;
	uint64_t t0, dt;
	int ret;

	s = held_by_child("a queued request that times out", dom, "nlt", key, &h,
			  "an ioctl owner (child) holds x1:6");

	t0 = now_ms();
	ret = nlt_acquire(s, dom, &key, 1, 300 * NS_PER_MS, 0, 9, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_QUEUED, "ACQUIRE x1:6 for 300 ms is QUEUED");
	if (result_ok(s, &o, ORDLOCK_STATUS_TIMEOUT, 9, "300 ms later")) {
		dt = now_ms() - t0;
		ok(dt >= 300 - EARLY_MS, "after about 300 ms (%llu ms)",
		   (unsigned long long)dt);
		is_int(o.error, ETIMEDOUT, "ORDLOCK_A_ERRNO ETIMEDOUT");
		ok(o.have_failure && !o.have_token, "with a failure, no token");
		fail_ok(&o.failure, ORDLOCK_REASON_TIMEOUT, ETIMEDOUT, "timeout");
		key_ok(&o.failure.key, 1, 6, EX, "failure key");
		is_int(o.failure.pid, h->pid, "failure pid is the holder's");
		is_int(o.failure.holder_mode, EX, "failure holder_mode exclusive");
		is_int(o.failure.index, 0, "failure index 0");
	}
	ret = nlt_release(s, &key, 1, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == ENOENT,
	   "the socket holds nothing after the timeout");
	if (event_ok(ORDLOCK_EVENT_TIMEOUT, dom, &ev, "the timeout")) {
		is_int(ev.owner.pid, getpid(), "event: the waiter's pid");
		is_int(ev.owner.kind, ORDLOCK_KIND_NETLINK, "event: a netlink owner");
		is_int(ev.owner.held, 0, "event: it holds nothing");
		ok(ev.have_failure, "event: with a failure");
		fail_ok(&ev.failure, ORDLOCK_REASON_TIMEOUT, ETIMEDOUT, "event");
		key_ok(&ev.failure.key, 1, 6, EX, "event: failure key");
		is_int(ev.failure.pid, h->pid, "event: failure pid is the holder's");
	}

	/* all or nothing */
	/* long enough to look at it meanwhile, even in a slow VM */
	ret = nlt_acquire(s, NULL, two, 2, 1500 * NS_PER_MS, 0, 10, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_QUEUED, "ACQUIRE {x1:2, x1:6} is QUEUED");
	is_errno(olt_probe(dom, 1, 2, EX), EAGAIN, "x1:2 is taken while it waits");
	if (result_ok(s, &o, ORDLOCK_STATUS_TIMEOUT, 10, "it times out")) {
		key_ok(&o.failure.key, 1, 6, EX, "failure key");
		is_int(o.failure.index, 1, "failure index 1 (the caller's order)");
	}
	is_int(olt_probe(dom, 1, 2, EX), 0, "x1:2 was given back");
	is_errno(nlt_wait_result(s, 200, &o), ETIMEDOUT, "exactly one RESULT");
	is_int(olt_holder_stop(h), 0, "holder exits");
	nlt_close(s);
}

/* Two netlink owners close a cycle in a detect domain without delay */

static void test_close_waiting(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key key = ORDLOCK_EX(1, 1);
	struct olc_nl_outcome o;
	struct gt_actor *w, *hol;
	struct nlt *n1, *n3;
	struct olc_nl_entry e;
	uint64_t deadline;
	long held;
	int ret, nw;

	diag("a socket closed while it waits");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlcw"));
	/* children first: they must not inherit the sockets we close */
	w = gt_actor_start("olwait", dom, 1);
	hol = gt_actor_start("olhold", dom, 1);
	is_int(gt_call1(hol, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "an ioctl owner holds x1:1");
	n1 = nlt_must_open();
	n3 = nlt_must_open();
	ret = nlt_acquire(n1, dom, &key, 1, LONG_NS, 0, 1, &o);
	st_ok(n1, ret, &o, ORDLOCK_STATUS_QUEUED, "netlink 1 queues");
	gt_submit1(w, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(w, ACQ), 0, "an ioctl owner queues behind it");
	ret = nlt_acquire(n3, dom, &key, 1, LONG_NS, 0, 3, &o);
	st_ok(n3, ret, &o, ORDLOCK_STATUS_QUEUED, "netlink 3 queues last");
	is_int(count_locks(dom, 1, 1, ORDLOCK_ROLE_WAITER), 3, "3 waiters");

	nlt_close(n1);
	deadline = now_ms() + 5000;
	do {
		nw = count_locks(dom, 1, 1, ORDLOCK_ROLE_WAITER);
	} while (nw != 2 && now_ms() < deadline);
	is_int(nw, 2, "closing netlink 1 took it out of the queue");
	ret = nlt_find_lock(L, dom, 1, 1, ORDLOCK_ROLE_WAITER, 0, &e);
	ok(!ret && (pid_t)e.pid == w->pid, "the ioctl owner is now first");
	is_int(my_nl_owners(dom, &held), 1, "one netlink owner is left");

	gt_call(hol, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ok(!gt_collect(w, WAIT_MS) && !w->res->ret,
	   "the ioctl owner is granted when the holder releases");
	gt_call(w, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	result_ok(n3, &o, ORDLOCK_STATUS_GRANTED, 3, "then netlink 3");
	nlt_close(n3);
	is_int(olt_probe(dom, 1, 1, EX), 0, "x1:1 is free");
	gt_actor_stop(w);
	gt_actor_stop(hol);
}

struct dier {
	struct pbarrier *held;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	int ret;
	uint32_t status;
};

/* A child that takes x1:5 over netlink and waits to be killed */
static int dier_main(void *arg)
{
	struct ordlock_key key = ORDLOCK_EX(1, 5);
	struct dier *d = arg;
	struct olc_nl_outcome o;
	struct nlt *s;

	s = nlt_open(&d->ret);
	if (s) {
		d->ret = nlt_acquire(s, d->domain, &key, 1, 0, 0, 1, &o);
		d->status = o.status;
	}
	pbarrier_wait(d->held);
	sleep(CHILD_TIMEOUT_S);
	return 0;
}

static void test_close_holding(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key keys[3] = {
		ORDLOCK_EX(1, 1), ORDLOCK_EX(1, 2), ORDLOCK_SH(2, 1),
	};
	struct olc_nl_outcome o;
	struct olc_nl_event ev;
	struct gt_actor *w;
	struct dier *d;
	struct nlt *n2;
	uint64_t deadline;
	pid_t pid;
	int ret;

	diag("a socket closed, and a process killed, while holding");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlch"));
	w = gt_actor_start("olnext", dom, 1);
	n2 = nlt_must_open();
	ret = nlt_acquire(n2, dom, keys, 3, 0, 0, 1, &o);
	st_ok(n2, ret, &o, ORDLOCK_STATUS_GRANTED, "netlink owner takes 3 keys");
	gt_submit1(w, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(w, ACQ), 0, "an ioctl owner waits for x1:2");

	/* a close is no death: the next OWNER_DIED event is the killed child's */
	nlt_close(n2);
	ok(!gt_collect(w, WAIT_MS) && !w->res->ret,
	   "the waiter gets x1:2 once the socket closed");
	ok(!olt_probe(dom, 1, 1, EX) && !olt_probe(dom, 2, 1, EX),
	   "x1:1 and s2:1 were released");
	gt_call(w, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	gt_actor_stop(w);

	d = shm_alloc(sizeof(*d));
	d->held = pbarrier_new(2);
	snprintf(d->domain, sizeof(d->domain), "%s", dom);
	pid = child_start(dier_main, d);
	is_int(pbarrier_wait(d->held), 0, "a child process took x1:5 over netlink");
	ok(!d->ret && d->status == ORDLOCK_STATUS_GRANTED, "granted (%d, %s)",
	   d->ret, nlt_status_name(d->status));
	is_errno(olt_probe(dom, 1, 5, EX), EAGAIN, "x1:5 is held");
	child_kill(pid, SIGKILL);
	if (event_ok(ORDLOCK_EVENT_OWNER_DIED, dom, &ev, "killing the process")) {
		is_int(ev.owner.pid, pid,
		       "event: the child's pid (closing the socket before sent none)");
		is_int(ev.owner.held, 1, "event: it held 1 key");
		is_int(ev.owner.kind, ORDLOCK_KIND_NETLINK, "event: a netlink owner");
		ok(!ev.have_failure, "event: no failure record");
	}
	deadline = now_ms() + 5000;
	while (olt_probe(dom, 1, 5, EX) && now_ms() < deadline)
		;
	is_int(olt_probe(dom, 1, 5, EX), 0, "x1:5 was released");
	pbarrier_free(d->held);
	shm_free(d, sizeof(*d));
}


int main(void)
{
	watchdog_start(200);
	L = nlt_must_open();
	if (nlt_subscribe(L))
		bail_out("cannot join the events group");
	test_grant_and_refusals();
	test_async_grant();
	test_timeout();
	test_close_waiting();
	test_close_holding();
	nlt_close(L);
	return tap_done();
}
