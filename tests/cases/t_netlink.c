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
 *  - DEADLOCK between two netlink owners in a "detect" domain set up with
 *    DOMAIN_SET: refused at once (no delay) or as a RESULT after the
 *    detection delay, with the whole cycle; and cycles that span an ioctl
 *    owner and a netlink owner, whichever of the two is the victim;
 *  - owners of one thread: a socket waiting for a key another owner of its
 *    thread holds is no deadlock (netlink requests do not block);
 *  - ioctl and netlink owners queued on one key are granted in FIFO order;
 *  - a socket closed while waiting leaves the queue, the others proceed;
 *    one closed (or whose process is killed) while holding releases its
 *    keys, and an OWNER_DIED event is multicast when a process is killed
 *    holding keys (not when it closes them);
 *  - GET_STATS counters move as they should and match debugfs;
 *  - DOMAIN_SET / DOMAIN_GET: policy, delay and rank names round-trip;
 *  - events: order violation, timeout, limit, each with its contents, and
 *    the rate limit of a storm.
 *
 * Every wait that must end is bounded; interleavings are forced by the
 * replies (QUEUED means queued) or by waiting until an ioctl caller sleeps.
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
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE
#define ACQ ORDLOCK_IOC_ACQUIRE

#define NS_PER_MS	1000000ULL
/* the timeout of every wait that must end otherwise */
#define LONG_MS		60000
#define LONG_NS		(LONG_MS * NS_PER_MS)
/* how long a RESULT or an event that must come may take */
#define WAIT_MS		20000
/* how much earlier than asked a timeout may fire (ms) */
#define EARLY_MS	20

/* The listener of the "events" group, also used for queries */
static struct nlt *L;

static int st_ok(struct nlt *s, int ret, const struct olc_nl_outcome *o,
		 uint32_t status, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* The request got a reply (no netlink error) with @status */
static int st_ok(struct nlt *s, int ret, const struct olc_nl_outcome *o,
		 uint32_t status, const char *fmt, ...)
{
	char name[256];
	va_list ap;
	int cond;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	cond = !ret && o->status == status;
	ok(cond, "%s", name);
	if (ret)
		diag("  netlink error %s", nlt_extack_str(s));
	else if (!cond)
		diag("  want %s, got %s", nlt_status_name(status),
		     nlt_outcome_str(o));
	return cond;
}

/* The next RESULT of @s has @status and @cookie */
static int result_ok(struct nlt *s, struct olc_nl_outcome *o, uint32_t status,
		     uint64_t cookie, const char *what)
{
	int ret = nlt_wait_result(s, WAIT_MS, o);
	int cond = !ret && o->status == status && o->cookie == cookie &&
		   o->cmd == ORDLOCK_CMD_RESULT;

	ok(cond, "%s: RESULT %s, cookie %llu", what, nlt_status_name(status),
	   (unsigned long long)cookie);
	if (ret)
		diag("  no RESULT: %s", strerror(-ret));
	else if (!cond)
		diag("  got %s", nlt_outcome_str(o));
	return cond;
}

static int event_ok(uint32_t type, const char *domain, struct olc_nl_event *ev,
		    const char *what)
{
	int ret = nlt_wait_event(L, type, domain, WAIT_MS, ev);

	ok(!ret, "%s: a %s event about %s", what, nlt_event_name(type), domain);
	if (ret)
		diag("  %s", strerror(-ret));
	return !ret;
}

static int fail_ok(const struct ordlock_failure *f, uint32_t reason,
		   uint32_t error, const char *what)
{
	int cond = f->reason == reason && f->error == error;

	ok(cond, "%s: failure reason %s, error %s", what,
	   ordlock_reason_name(reason), strerror(error));
	if (!cond)
		diag("  got %s", olt_fail_str(f));
	return cond;
}

static int key_ok(const struct ordlock_key *k, uint32_t rank, uint64_t id,
		  unsigned int mode, const char *what)
{
	int cond = olt_key_eq(k, rank, id, mode);

	ok(cond, "%s is %s %u:%llu", what, ordlock_mode_name(mode), rank,
	   (unsigned long long)id);
	if (!cond)
		diag("  got %s %u:%llu", ordlock_mode_name(k->mode), k->rank,
		     (unsigned long long)k->id);
	return cond;
}

static void diag_cycle(const struct ordlock_cycle_step *c, int n)
{
	int i;

	for (i = 0; i < n; i++)
		diag("  step %d: %s", i, gt_step_str(&c[i]));
}

/*
 * A request sent from a thread of its own. The kernel remembers the thread
 * of an owner's last request; owners of one thread are told apart from
 * those of another (see test_same_thread()), so the tests that are not
 * about that give each owner its own thread.
 */
struct nl_call {
	struct nlt *s;
	const char *domain;
	struct ordlock_key key;
	uint64_t timeout_ns;
	uint64_t cookie;
	int ret;
	struct olc_nl_outcome o;
};

static void *nl_call_main(void *arg)
{
	struct nl_call *c = arg;

	c->ret = nlt_acquire(c->s, c->domain, &c->key, 1, c->timeout_ns, 0,
			     c->cookie, &c->o);
	return NULL;
}

/* nlt_acquire() of one key from a new thread (bounded by NLT_REPLY_MS) */
static int acquire_elsewhere(struct nlt *s, const char *domain,
			     struct ordlock_key key, uint64_t timeout_ns,
			     uint64_t cookie, struct olc_nl_outcome *o)
{
	struct nl_call c = {
		.s = s, .domain = domain, .key = key,
		.timeout_ns = timeout_ns, .cookie = cookie,
	};
	pthread_t t;

	if (pthread_create(&t, NULL, nl_call_main, &c))
		bail_out("pthread_create failed");
	pthread_join(t, NULL);
	*o = c.o;
	return c.ret;
}

/* Entries of a dump of @domain that match key (@rank, @id) and @role */
static int count_locks(const char *domain, uint32_t rank, uint64_t id,
		       uint32_t role)
{
	struct olc_nl_entry *v;
	int i, n, c = 0;

	n = nlt_dump(L, ORDLOCK_CMD_GET_LOCKS, domain, &v);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (v[i].key.rank == rank && v[i].key.id == id &&
		    v[i].role == role)
			c++;
	free(v);
	return c;
}

/* The netlink owners of @domain in this process, and what they hold */
static int my_nl_owners(const char *domain, long *held)
{
	struct olc_nl_entry *v;
	int i, n, c = 0;

	*held = 0;
	n = nlt_dump(L, ORDLOCK_CMD_GET_OWNERS, domain, &v);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (v[i].kind != ORDLOCK_KIND_NETLINK || (pid_t)v[i].pid != getpid())
			continue;
		c++;
		*held += v[i].held;
	}
	free(v);
	return c;
}

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

	diag("an asynchronous acquire, granted when the ioctl holder leaves");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nla"));
	h = olt_holder_start(dom, &key, 1);
	is_int(h->result, 0, "an ioctl owner (child) holds x1:5");
	s = nlt_must_open();

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

	diag("a queued request that times out");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlt"));
	h = olt_holder_start(dom, &key, 1);
	is_int(h->result, 0, "an ioctl owner (child) holds x1:6");
	s = nlt_must_open();

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
static void test_deadlock_at_once(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k1 = ORDLOCK_EX(1, 1), k2 = ORDLOCK_EX(1, 2);
	uint64_t stats[ORDLOCK_S_MAX + 1];
	struct olc_nl_outcome o;
	struct olc_nl_domain d;
	struct olc_nl_event ev;
	struct nlt *a, *b;
	uint64_t ida, idb;
	int ret;

	diag("a deadlock of two netlink owners, found at once");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nld"));
	ret = nlt_domain_set(L, dom, ORDLOCK_POLICY_DETECT, 0, NULL, -1, &d);
	ok(!ret && d.policy == ORDLOCK_POLICY_DETECT && !d.detect_delay_ms,
	   "DOMAIN_SET: policy detect, no delay");
	if (ret)
		diag("  %s", nlt_extack_str(L));
	a = nlt_must_open();
	b = nlt_must_open();
	ret = nlt_acquire(a, dom, &k1, 1, 0, 0, 1, &o);
	st_ok(a, ret, &o, ORDLOCK_STATUS_GRANTED, "A takes x1:1");
	ret = acquire_elsewhere(b, dom, k2, 0, 2, &o);
	st_ok(b, ret, &o, ORDLOCK_STATUS_GRANTED, "B (another thread) takes x1:2");
	ida = nlt_lock_owner(L, dom, 1, 1, ORDLOCK_ROLE_HOLDER, 0);
	idb = nlt_lock_owner(L, dom, 1, 2, ORDLOCK_ROLE_HOLDER, 0);
	ok(ida && idb && ida != idb, "two owners (%llu, %llu)",
	   (unsigned long long)ida, (unsigned long long)idb);

	ret = nlt_acquire(a, NULL, &k2, 1, LONG_NS, 0, 3, &o);
	st_ok(a, ret, &o, ORDLOCK_STATUS_QUEUED, "A asks for x1:2: QUEUED");
	ret = acquire_elsewhere(b, NULL, k1, LONG_NS, 4, &o);
	st_ok(b, ret, &o, ORDLOCK_STATUS_REFUSED, "B asks for x1:1: refused at once");
	is_int(o.error, EDEADLK, "ORDLOCK_A_ERRNO EDEADLK");
	fail_ok(&o.failure, ORDLOCK_REASON_DEADLOCK, EDEADLK, "deadlock");
	key_ok(&o.failure.key, 1, 1, EX, "failure key");
	is_int(o.failure.cycle_len, 2, "failure cycle_len 2");
	if (is_int(o.ncycle, 2, "ORDLOCK_A_CYCLE has 2 steps")) {
		ok(o.cycle[0].owner_id == idb && o.cycle[1].owner_id == ida,
		   "victim B first, then A");
		key_ok(&o.cycle[0].key, 1, 1, EX, "step 0 key");
		key_ok(&o.cycle[1].key, 1, 2, EX, "step 1 key");
		ok(o.cycle[0].edge == ORDLOCK_EDGE_HARD &&
		   o.cycle[1].edge == ORDLOCK_EDGE_HARD, "both edges hard");
		ok(o.cycle[0].blocker_mode == EX && o.cycle[1].blocker_mode == EX,
		   "blocker modes exclusive");
		ok((pid_t)o.cycle[0].pid == getpid() &&
		   (pid_t)o.cycle[1].pid == getpid(), "steps with our pid");
	}
	diag_cycle(o.cycle, o.ncycle);
	if (event_ok(ORDLOCK_EVENT_DEADLOCK, dom, &ev, "the deadlock")) {
		is_int(ev.owner.owner_id, idb, "event: the victim");
		fail_ok(&ev.failure, ORDLOCK_REASON_DEADLOCK, EDEADLK, "event");
		ok(ev.ncycle == 2 && ev.cycle[0].owner_id == idb &&
		   ev.cycle[1].owner_id == ida, "event: the cycle, victim first");
	}
	ret = nlt_release(b, NULL, 0, &o);
	st_ok(b, ret, &o, ORDLOCK_STATUS_GRANTED, "B releases x1:2");
	result_ok(a, &o, ORDLOCK_STATUS_GRANTED, 3, "A gets x1:2");
	nlt_release(a, NULL, 0, NULL);
	ret = nlt_get_stats(L, dom, stats);
	ok(!ret && stats[ORDLOCK_S_DEADLOCKS] == 1, "GET_STATS: deadlocks 1");
	nlt_close(a);
	nlt_close(b);
}

/* Both queue; the detection delay passes; one gets a DEADLOCK RESULT */
static void test_deadlock_delayed(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k[2] = { ORDLOCK_EX(1, 1), ORDLOCK_EX(1, 2) };
	struct olc_nl_outcome o, ov;
	struct nlt *s[2];
	struct olc_nl_domain d;
	uint64_t id[2], deadline, t0;
	int ret, i, victim = -1;

	diag("a deadlock found after the detection delay: a DEADLOCK RESULT");
	/* owner 0 asks from this thread, owner 1 from threads of its own */
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlq"));
	ret = nlt_domain_set(L, dom, ORDLOCK_POLICY_DETECT, 300, NULL, -1, &d);
	ok(!ret && d.policy == ORDLOCK_POLICY_DETECT && d.detect_delay_ms == 300,
	   "DOMAIN_SET: policy detect, delay 300 ms");
	for (i = 0; i < 2; i++) {
		s[i] = nlt_must_open();
		if (i)
			ret = acquire_elsewhere(s[i], dom, k[i], 0, 1, &o);
		else
			ret = nlt_acquire(s[i], dom, &k[i], 1, 0, 0, 1, &o);
		st_ok(s[i], ret, &o, ORDLOCK_STATUS_GRANTED, "owner %d takes x1:%d",
		      i, i + 1);
		id[i] = nlt_lock_owner(L, dom, 1, i + 1, ORDLOCK_ROLE_HOLDER, 0);
	}
	t0 = now_ms();
	for (i = 0; i < 2; i++) {
		if (i)
			ret = acquire_elsewhere(s[i], NULL, k[!i], LONG_NS, 10 + i, &o);
		else
			ret = nlt_acquire(s[i], NULL, &k[!i], 1, LONG_NS, 0, 10 + i,
					  &o);
		st_ok(s[i], ret, &o, ORDLOCK_STATUS_QUEUED,
		      "owner %d asks for the other key: QUEUED", i);
	}
	deadline = now_ms() + WAIT_MS;
	while (victim < 0 && now_ms() < deadline) {
		for (i = 0; i < 2 && victim < 0; i++)
			if (!nlt_wait_result(s[i], 20, &ov))
				victim = i;
	}
	if (!ok(victim >= 0, "one of them gets a RESULT")) {
		nlt_close(s[0]);
		nlt_close(s[1]);
		return;
	}
	ok(now_ms() - t0 >= 300 - EARLY_MS, "after the detection delay (%llu ms)",
	   (unsigned long long)(now_ms() - t0));
	ok(ov.status == ORDLOCK_STATUS_DEADLOCK && ov.cookie == 10 + (unsigned int)victim,
	   "owner %d: RESULT DEADLOCK with its cookie", victim);
	is_int(ov.error, EDEADLK, "ORDLOCK_A_ERRNO EDEADLK");
	fail_ok(&ov.failure, ORDLOCK_REASON_DEADLOCK, EDEADLK, "deadlock");
	key_ok(&ov.failure.key, 1, !victim + 1, EX, "failure key");
	ok(ov.ncycle == 2 && ov.cycle[0].owner_id == id[victim] &&
	   ov.cycle[1].owner_id == id[!victim], "the cycle of 2, victim first");
	diag_cycle(ov.cycle, ov.ncycle);
	is_errno(nlt_wait_result(s[!victim], 200, &o), ETIMEDOUT,
		 "the other still waits");
	nlt_release(s[victim], NULL, 0, NULL);
	result_ok(s[!victim], &o, ORDLOCK_STATUS_GRANTED, 10 + !victim,
		  "the other is granted once the victim released");
	for (i = 0; i < 2; i++)
		nlt_close(s[i]);
}

/* Cycles through an ioctl owner and a netlink owner */
static void test_mixed_cycle(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k;
	struct olc_nl_outcome o;
	struct gt_actor *a;
	struct nlt *s;
	uint64_t sid;
	int ret;

	diag("a cycle of an ioctl owner and a netlink owner");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlm"));
	ret = nlt_domain_set(L, dom, ORDLOCK_POLICY_DETECT, 0, NULL, -1, NULL);
	is_int(ret, 0, "DOMAIN_SET: policy detect");
	a = gt_actor_start("olmix", dom, 1);
	s = nlt_must_open();

	/* the netlink owner closes the cycle */
	is_int(gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "ioctl owner takes x1:1");
	k = ORDLOCK_EX(1, 2);
	ret = nlt_acquire(s, dom, &k, 1, 0, 0, 1, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "netlink owner takes x1:2");
	sid = nlt_lock_owner(L, dom, 1, 2, ORDLOCK_ROLE_HOLDER, 0);
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(a, ACQ), 0, "ioctl owner waits for x1:2");
	k = ORDLOCK_EX(1, 1);
	ret = nlt_acquire(s, NULL, &k, 1, LONG_NS, 0, 2, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED,
	      "netlink owner asks for x1:1: refused, it closes the cycle");
	fail_ok(&o.failure, ORDLOCK_REASON_DEADLOCK, EDEADLK, "deadlock");
	if (is_int(o.ncycle, 2, "a cycle of 2")) {
		ok(o.cycle[0].owner_id == sid && (pid_t)o.cycle[0].pid == getpid(),
		   "step 0: the netlink owner");
		ok(o.cycle[1].owner_id == a->owner_id[0] &&
		   (pid_t)o.cycle[1].pid == a->pid &&
		   !strcmp(o.cycle[1].comm, "olmix"),
		   "step 1: the ioctl owner, its pid and comm");
		key_ok(&o.cycle[1].key, 1, 2, EX, "step 1 key");
	}
	diag_cycle(o.cycle, o.ncycle);
	nlt_release(s, NULL, 0, NULL);
	ok(!gt_collect(a, WAIT_MS) && a->res->ret == 0,
	   "the ioctl owner gets x1:2 once the netlink owner released");
	is_int(gt_call(a, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "ioctl owner releases all");

	/* the ioctl owner closes the cycle */
	k = ORDLOCK_EX(1, 3);
	ret = nlt_acquire(s, NULL, &k, 1, 0, 0, 3, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "netlink owner takes x1:3");
	is_int(gt_call1(a, GT_OP_ACQUIRE, 0, 1, 4, EX, LONG_MS, 0), 0,
	       "ioctl owner takes x1:4");
	k = ORDLOCK_EX(1, 4);
	ret = nlt_acquire(s, NULL, &k, 1, LONG_NS, 0, 4, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_QUEUED, "netlink owner asks for x1:4: QUEUED");
	ret = gt_call1(a, GT_OP_ACQUIRE, 0, 1, 3, EX, LONG_MS, 0);
	is_int(ret, -EDEADLK, "ioctl owner asks for x1:3: EDEADLK at once");
	fail_ok(&a->res->failure, ORDLOCK_REASON_DEADLOCK, EDEADLK, "ioctl side");
	if (is_int(a->res->ncycle, 2, "a cycle of 2")) {
		ok(a->res->cycle[0].owner_id == a->owner_id[0],
		   "step 0: the ioctl owner");
		ok(a->res->cycle[1].owner_id == sid &&
		   (pid_t)a->res->cycle[1].pid == getpid(),
		   "step 1: the netlink owner");
		key_ok(&a->res->cycle[1].key, 1, 4, EX, "step 1 key");
	}
	diag_cycle(a->res->cycle, a->res->ncycle > 0 ? a->res->ncycle : 0);
	is_int(gt_call(a, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "ioctl owner releases x1:4");
	result_ok(s, &o, ORDLOCK_STATUS_GRANTED, 4, "the netlink owner gets x1:4");
	nlt_release(s, NULL, 0, NULL);
	is_int(gt_actor_stop(a), 0, "actor exits");
	nlt_close(s);
}

/*
 * Owners of one thread. A netlink request never blocks its thread, so a
 * socket that waits for a key held by another owner of the same thread
 * (another socket, or a descriptor of /dev/ordlock) is no deadlock: the
 * thread is free to release it. Nor does a thread whose socket waits
 * block anything it holds elsewhere. Such waits must be QUEUED and end
 * GRANTED, in an "enforce" and in a "detect" domain.
 */
static void test_same_thread(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k11 = ORDLOCK_EX(1, 1), k12 = ORDLOCK_EX(1, 2);
	struct ordlock_key k13 = ORDLOCK_EX(1, 3), k15 = ORDLOCK_EX(1, 5);
	struct olc_nl_outcome o;
	struct gt_actor *p;
	struct ordlock *ol;
	struct nlt *a, *b;
	int pass, ret;

	for (pass = 0; pass < 2; pass++) {
		diag("owners of one thread, %s domain", pass ? "a detect" : "an enforce");
		snprintf(dom, sizeof(dom), "%s", olt_domain("nlst"));
		if (pass)
			nlt_domain_set(L, dom, ORDLOCK_POLICY_DETECT, 0, NULL, -1, NULL);
		p = gt_actor_start("olother", dom, 1);
		a = nlt_must_open();
		b = nlt_must_open();
		ret = nlt_acquire(a, dom, &k11, 1, 0, 0, 1, &o);
		st_ok(a, ret, &o, ORDLOCK_STATUS_GRANTED, "socket A takes x1:1");
		ret = nlt_acquire(b, dom, &k11, 1, LONG_NS, 0, 2, &o);
		if (!st_ok(b, ret, &o, ORDLOCK_STATUS_QUEUED,
			   "socket B of the same thread asks for x1:1: QUEUED, no deadlock"))
			diag_cycle(o.cycle, o.ncycle);
		nlt_release(a, NULL, 0, NULL);
		if (o.status == ORDLOCK_STATUS_QUEUED)
			result_ok(b, &o, ORDLOCK_STATUS_GRANTED, 2,
				  "B gets x1:1 when A releases");
		nlt_close(a);
		nlt_close(b);

		ol = olt_open(dom);
		b = nlt_must_open();
		is_int(ordlock_acquire(ol, &k12, 1, LONG_MS, 0, NULL), 0,
		       "an ioctl owner of this thread takes x1:2");
		ret = nlt_acquire(b, dom, &k12, 1, LONG_NS, 0, 3, &o);
		if (!st_ok(b, ret, &o, ORDLOCK_STATUS_QUEUED,
			   "a socket of the same thread asks for x1:2: QUEUED, no deadlock"))
			diag_cycle(o.cycle, o.ncycle);
		ordlock_release(ol, &k12, 1);
		if (o.status == ORDLOCK_STATUS_QUEUED)
			result_ok(b, &o, ORDLOCK_STATUS_GRANTED, 3,
				  "it gets x1:2 when the ioctl owner releases");
		nlt_release(b, NULL, 0, NULL);

		/*
		 * This thread holds x1:5 (ioctl) and its socket waits for
		 * x1:3, which another process holds; that process then asks
		 * for x1:5. The thread is not blocked: no cycle.
		 */
		is_int(gt_call1(p, GT_OP_ACQUIRE, 0, 1, 3, EX, LONG_MS, 0), 0,
		       "another process takes x1:3");
		is_int(ordlock_acquire(ol, &k15, 1, LONG_MS, 0, NULL), 0,
		       "this thread's ioctl owner takes x1:5");
		ret = nlt_acquire(b, dom, &k13, 1, LONG_NS, 0, 4, &o);
		st_ok(b, ret, &o, ORDLOCK_STATUS_QUEUED,
		      "this thread's socket asks for x1:3: QUEUED");
		gt_submit1(p, GT_OP_ACQUIRE, 0, 1, 5, EX, LONG_MS, 0);
		ret = gt_collect(p, 1000);
		is_errno(ret, ETIMEDOUT,
			 "the other process waits for x1:5 (no deadlock: this thread is free)");
		if (!ret) {
			diag("  it got %s", strerror(-p->res->ret));
			diag_cycle(p->res->cycle, p->res->ncycle > 0 ? p->res->ncycle : 0);
		}
		ordlock_release(ol, &k15, 1);
		if (ret)
			ok(!gt_collect(p, WAIT_MS) && !p->res->ret,
			   "it gets x1:5 when this thread releases it");
		gt_call(p, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
		if (o.status == ORDLOCK_STATUS_QUEUED)
			result_ok(b, &o, ORDLOCK_STATUS_GRANTED, 4,
				  "then the socket gets x1:3");
		nlt_close(b);
		ordlock_close(ol);
		gt_actor_stop(p);
	}
}

/* ioctl and netlink owners queued on one key, granted in order */
static void test_fifo_mixed(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key key = ORDLOCK_EX(1, 1);
	struct gt_actor *a0, *a1, *a2;
	struct nlt *n1, *n2;
	struct olc_nl_outcome o;
	struct olc_nl_entry *v;
	uint64_t th, t1, t2, t3;
	int i, n, ret, hard = 0, soft = 0;
	pid_t want[4];
	int seen = 0;

	diag("FIFO across front ends");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlf"));
	a0 = gt_actor_start("olfifo0", dom, 1);
	a1 = gt_actor_start("olfifo1", dom, 1);
	a2 = gt_actor_start("olfifo2", dom, 1);
	is_int(gt_call1(a0, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "an ioctl owner holds x1:1");
	th = a0->res->token;
	n1 = nlt_must_open();
	n2 = nlt_must_open();

	ret = nlt_acquire(n1, dom, &key, 1, LONG_NS, 0, 1, &o);
	st_ok(n1, ret, &o, ORDLOCK_STATUS_QUEUED, "netlink 1 queues");
	gt_submit1(a1, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(a1, ACQ), 0, "ioctl 1 queues");
	ret = nlt_acquire(n2, dom, &key, 1, LONG_NS, 0, 2, &o);
	st_ok(n2, ret, &o, ORDLOCK_STATUS_QUEUED, "netlink 2 queues");
	gt_submit1(a2, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(a2, ACQ), 0, "ioctl 2 queues");

	want[0] = getpid();
	want[1] = a1->pid;
	want[2] = getpid();
	want[3] = a2->pid;
	n = nlt_dump(L, ORDLOCK_CMD_GET_LOCKS, dom, &v);
	for (i = 0; i < n; i++)
		if (v[i].role == ORDLOCK_ROLE_WAITER && v[i].position < 4 &&
		    (pid_t)v[i].pid == want[v[i].position])
			seen |= 1 << v[i].position;
	is_int(seen, 0xf, "GET_LOCKS: queue is netlink 1, ioctl 1, netlink 2, ioctl 2");
	free(v);
	n = nlt_dump(L, ORDLOCK_CMD_GET_GRAPH, dom, &v);
	for (i = 0; i < n; i++) {
		hard += v[i].edge == ORDLOCK_EDGE_HARD;
		soft += v[i].edge == ORDLOCK_EDGE_SOFT;
	}
	ok(n == 10 && hard == 4 && soft == 6,
	   "GET_GRAPH: 4 hard and 6 soft edges (%d: %d, %d)", n, hard, soft);
	free(v);

	gt_call(a0, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	if (result_ok(n1, &o, ORDLOCK_STATUS_GRANTED, 1, "netlink 1 first"))
		ok(o.token > th, "token %llu > %llu", (unsigned long long)o.token,
		   (unsigned long long)th);
	t1 = o.token;
	is_errno(gt_collect(a1, 300), ETIMEDOUT, "ioctl 1 still waits");
	nlt_release(n1, NULL, 0, NULL);
	ok(!gt_collect(a1, WAIT_MS) && !a1->res->ret, "then ioctl 1");
	t2 = a1->res->token;
	ok(t2 > t1, "token %llu > %llu", (unsigned long long)t2,
	   (unsigned long long)t1);
	is_errno(nlt_wait_result(n2, 200, &o), ETIMEDOUT, "netlink 2 still waits");
	gt_call(a1, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	if (result_ok(n2, &o, ORDLOCK_STATUS_GRANTED, 2, "then netlink 2"))
		ok(o.token > t2, "token %llu > %llu", (unsigned long long)o.token,
		   (unsigned long long)t2);
	t3 = o.token;
	is_errno(gt_collect(a2, 200), ETIMEDOUT, "ioctl 2 still waits");
	nlt_release(n2, NULL, 0, NULL);
	ok(!gt_collect(a2, WAIT_MS) && !a2->res->ret && a2->res->token > t3,
	   "then ioctl 2, token %llu > %llu", (unsigned long long)a2->res->token,
	   (unsigned long long)t3);
	gt_call(a2, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	gt_actor_stop(a0);
	gt_actor_stop(a1);
	gt_actor_stop(a2);
	nlt_close(n1);
	nlt_close(n2);
}

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

static void test_stats(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	uint64_t st0[ORDLOCK_S_MAX + 1], st1[ORDLOCK_S_MAX + 1];
	struct ordlock_key k11 = ORDLOCK_EX(1, 1), k10 = ORDLOCK_EX(1, 0);
	struct ordlock_key k21 = ORDLOCK_EX(2, 1);
	struct olt_holder *h = NULL;
	struct olc_nl_outcome o;
	struct ordlock *hol;
	struct gt_stats gs;
	struct nlt *s;
	int i, ret, same;

	diag("GET_STATS");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nls"));
	ret = nlt_get_stats(L, dom, st0);
	is_errno(ret, ENOENT, "GET_STATS of a domain that does not exist: ENOENT");
	ok(strstr(L->nl->ext.msg, "no such domain") != NULL, "extack: %s",
	   nlt_extack_str(L));

	hol = olt_open(dom);
	s = nlt_must_open();
	ret = nlt_get_stats(L, dom, st0);
	is_int(ret, 0, "GET_STATS once an owner created it");
	ret = nlt_acquire(s, dom, &k11, 1, 0, 0, 1, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "netlink acquire x1:1");
	is_errno(ordlock_try_acquire(hol, &k11, 1, NULL), EAGAIN, "ioctl try fails");
	ret = nlt_acquire(s, NULL, &k10, 1, 0, 0, 2, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED, "order violation");
	h = olt_holder_start(dom, &k21, 1);
	is_int(h->result, 0, "ioctl acquire x2:1 (a child)");
	ret = nlt_acquire(s, NULL, &k21, 1, 1500 * NS_PER_MS, 0, 3, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_QUEUED, "netlink waits for x2:1");
	ret = nlt_get_stats(L, dom, st1);
	ok(!ret && st1[ORDLOCK_S_WAITERS] == 1, "GET_STATS: 1 waiter meanwhile");
	result_ok(s, &o, ORDLOCK_STATUS_TIMEOUT, 3, "it times out");
	nlt_release(s, NULL, 0, NULL);

	ret = nlt_get_stats(L, dom, st1);
	is_int(ret, 0, "GET_STATS again");
	is_int(st1[ORDLOCK_S_ACQUIRES] - st0[ORDLOCK_S_ACQUIRES], 2, "acquires +2");
	is_int(st1[ORDLOCK_S_CONTENDED] - st0[ORDLOCK_S_CONTENDED], 0, "contended +0");
	is_int(st1[ORDLOCK_S_TRY_FAILURES] - st0[ORDLOCK_S_TRY_FAILURES], 1,
	       "try_failures +1");
	is_int(st1[ORDLOCK_S_ORDER_VIOLATIONS] - st0[ORDLOCK_S_ORDER_VIOLATIONS], 1,
	       "order_violations +1");
	is_int(st1[ORDLOCK_S_TIMEOUTS] - st0[ORDLOCK_S_TIMEOUTS], 1, "timeouts +1");
	is_int(st1[ORDLOCK_S_RELEASES] - st0[ORDLOCK_S_RELEASES], 1, "releases +1");
	is_int(st1[ORDLOCK_S_OWNERS], 3, "owners 3");
	is_int(st1[ORDLOCK_S_RESOURCES], 1, "resources 1");
	is_int(st1[ORDLOCK_S_WAITERS], 0, "waiters 0");
	ok(st1[ORDLOCK_S_PEAK_WAITERS] >= 1 && st1[ORDLOCK_S_PEAK_RESOURCES] >= 2,
	   "peaks: waiters %llu, resources %llu",
	   (unsigned long long)st1[ORDLOCK_S_PEAK_WAITERS],
	   (unsigned long long)st1[ORDLOCK_S_PEAK_RESOURCES]);

	ret = gt_stats_read(dom, &gs);
	if (ret) {
		ok(1, "# SKIP debugfs stats not readable (%s)", strerror(-ret));
	} else {
		same = 1;
		for (i = ORDLOCK_S_ACQUIRES; i <= ORDLOCK_S_MAX; i++) {
			if (gt_stat(&gs, olc_nl_stat_name(i)) != (long long)st1[i]) {
				diag("  %s: netlink %llu, debugfs %lld", olc_nl_stat_name(i),
				     (unsigned long long)st1[i],
				     gt_stat(&gs, olc_nl_stat_name(i)));
				same = 0;
			}
		}
		ok(same, "every counter equals the debugfs stats");
	}
	nlt_close(s);
	ordlock_close(hol);
	olt_holder_stop(h);
}

static int name_of(const struct olc_nl_domain *d, uint32_t rank, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->names.n; i++)
		if (d->names.v[i].rank == rank)
			return !strcmp(d->names.v[i].name, name);
	return 0;
}

static void test_domain_config(void)
{
	static const struct nlt_rank_name two[] = {
		{ 1, "orders" }, { 2, "inventories" },
	};
	static const struct nlt_rank_name one[] = { { 3, "shipments" } };
	struct nlt_rank_name many[ORDLOCK_RANK_NAMES_MAX];
	char names[ORDLOCK_RANK_NAMES_MAX][16];
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_domain_config cfg;
	struct olc_nl_domain d;
	struct ordlock *ol;
	unsigned int i;
	int ret, all;

	diag("DOMAIN_SET and DOMAIN_GET");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlcfg"));
	is_errno(nlt_domain_get(L, dom, &d), ENOENT,
		 "DOMAIN_GET of a domain that does not exist: ENOENT");
	ok(strstr(L->nl->ext.msg, "no such domain") != NULL, "extack: %s",
	   nlt_extack_str(L));

	ret = nlt_domain_set(L, dom, ORDLOCK_POLICY_DETECT, 250, two, 2, &d);
	is_int(ret, 0, "DOMAIN_SET policy detect, delay 250, two rank names");
	ok(!strcmp(d.name, dom) && d.policy == ORDLOCK_POLICY_DETECT &&
	   d.detect_delay_ms == 250 && d.names.n == 2,
	   "the reply shows the new settings");
	ret = nlt_domain_get(L, dom, &d);
	is_int(ret, 0, "DOMAIN_GET");
	ok(d.policy == ORDLOCK_POLICY_DETECT && d.detect_delay_ms == 250,
	   "policy and delay round-trip");
	ok(d.have_names && d.names.n == 2 && name_of(&d, 1, "orders") &&
	   name_of(&d, 2, "inventories"),
	   "rank names round-trip: 1 orders, 2 inventories");

	ol = olt_open(NULL);
	memset(&cfg, 0, sizeof(cfg));
	ret = ordlock_domain_config(ol, dom, &cfg);
	ok(!ret && cfg.policy == ORDLOCK_POLICY_DETECT && cfg.detect_delay_ms == 250,
	   "the ioctl DOMAIN_CONFIG sees the same settings");
	ordlock_close(ol);

	ret = nlt_domain_set(L, dom, -1, -1, one, 1, &d);
	is_int(ret, 0, "DOMAIN_SET of the names only");
	nlt_domain_get(L, dom, &d);
	ok(d.names.n == 1 && name_of(&d, 3, "shipments"),
	   "the names were replaced: 3 shipments");
	ok(d.policy == ORDLOCK_POLICY_DETECT && d.detect_delay_ms == 250,
	   "policy and delay unchanged");

	ret = nlt_domain_set(L, dom, ORDLOCK_POLICY_TIMEOUT, -1, NULL, -1, &d);
	is_int(ret, 0, "DOMAIN_SET of the policy only");
	nlt_domain_get(L, dom, &d);
	ok(d.policy == ORDLOCK_POLICY_TIMEOUT && d.detect_delay_ms == 250 &&
	   d.names.n == 1, "policy timeout; delay and names unchanged");

	ret = nlt_domain_set(L, dom, -1, -1, NULL, 0, &d);
	is_int(ret, 0, "DOMAIN_SET with an empty list of names");
	nlt_domain_get(L, dom, &d);
	is_int(d.names.n, 0, "no names any more");

	for (i = 0; i < ORDLOCK_RANK_NAMES_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "rank%u", i);
		many[i].rank = 100 + i;
		many[i].name = names[i];
	}
	ret = nlt_domain_set(L, dom, -1, -1, many, ORDLOCK_RANK_NAMES_MAX, &d);
	is_int(ret, 0, "DOMAIN_SET of %d names (the most)", ORDLOCK_RANK_NAMES_MAX);
	nlt_domain_get(L, dom, &d);
	all = d.names.n == ORDLOCK_RANK_NAMES_MAX;
	for (i = 0; all && i < ORDLOCK_RANK_NAMES_MAX; i++)
		all = name_of(&d, 100 + i, names[i]);
	ok(all, "all %u come back (%u)", ORDLOCK_RANK_NAMES_MAX, d.names.n);

	ret = nlt_domain_get(L, ORDLOCK_DEFAULT_DOMAIN, &d);
	ok(!ret && !strcmp(d.name, ORDLOCK_DEFAULT_DOMAIN),
	   "DOMAIN_GET of the default domain");
}

static void test_events(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k15 = ORDLOCK_EX(1, 5), k13 = ORDLOCK_EX(1, 3);
	struct ordlock_key k25 = ORDLOCK_EX(2, 5), k23 = ORDLOCK_EX(2, 3);
	struct ordlock_key k31 = ORDLOCK_EX(3, 1);
	struct olt_holder *h;
	struct ordlock_key three[3] = {
		ORDLOCK_EX(5, 1), ORDLOCK_EX(5, 2), ORDLOCK_EX(5, 3),
	};
	struct olc_nl_outcome o;
	struct olc_nl_event ev;
	struct ordlock *ol;
	struct nlt *s;
	uint64_t oid;
	long max;
	int ret;

	diag("events: order, timeout, limit");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nle"));
	h = olt_holder_start(dom, &k31, 1);
	ol = olt_open(dom);
	s = nlt_must_open();
	oid = gt_owner_id(ol);

	is_int(ordlock_acquire(ol, &k15, 1, LONG_MS, 0, NULL), 0, "ioctl takes x1:5");
	is_errno(ordlock_acquire(ol, &k13, 1, LONG_MS, 0, NULL), EDEADLK,
		 "then x1:3: order violation");
	if (event_ok(ORDLOCK_EVENT_ORDER, dom, &ev, "ioctl order violation")) {
		ok(ev.owner.owner_id == oid && ev.owner.kind == ORDLOCK_KIND_DEVICE &&
		   (pid_t)ev.owner.pid == getpid() && ev.owner.held == 1,
		   "event: the ioctl owner (id, kind, pid, 1 held)");
		ok(!strcmp(ev.owner.comm, "t_netlink"), "event: comm %s",
		   ev.owner.comm);
		fail_ok(&ev.failure, ORDLOCK_REASON_ORDER, EDEADLK, "event");
		key_ok(&ev.failure.key, 1, 3, EX, "event: requested key");
		key_ok(&ev.failure.held, 1, 5, EX, "event: held key");
	}

	ret = nlt_acquire(s, dom, &k25, 1, 0, 0, 1, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_GRANTED, "netlink takes x2:5");
	ret = nlt_acquire(s, NULL, &k23, 1, 0, 0, 2, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED, "then x2:3: order violation");
	if (event_ok(ORDLOCK_EVENT_ORDER, dom, &ev, "netlink order violation")) {
		ok(ev.owner.kind == ORDLOCK_KIND_NETLINK &&
		   (pid_t)ev.owner.pid == getpid() && ev.owner.held == 1,
		   "event: the netlink owner");
		key_ok(&ev.failure.key, 2, 3, EX, "event: requested key");
		key_ok(&ev.failure.held, 2, 5, EX, "event: held key");
	}

	nlt_release(s, NULL, 0, NULL);
	is_errno(ordlock_acquire(ol, &k31, 1, 100, 0, NULL), ETIMEDOUT,
		 "ioctl waits 100 ms for x3:1 (a child holds it): ETIMEDOUT");
	if (event_ok(ORDLOCK_EVENT_TIMEOUT, dom, &ev, "ioctl timeout")) {
		ok(ev.owner.owner_id == oid && ev.owner.kind == ORDLOCK_KIND_DEVICE,
		   "event: the ioctl owner");
		fail_ok(&ev.failure, ORDLOCK_REASON_TIMEOUT, ETIMEDOUT, "event");
		key_ok(&ev.failure.key, 3, 1, EX, "event: key");
		is_int(ev.failure.pid, h->pid, "event: pid of the holder");
	}
	olt_holder_stop(h);

	max = olt_param_get("max_keys_per_owner");
	is_int(olt_param_set("max_keys_per_owner", 2), 0, "max_keys_per_owner 2");
	ret = nlt_acquire(s, NULL, three, 3, 0, 0, 3, &o);
	st_ok(s, ret, &o, ORDLOCK_STATUS_REFUSED, "3 keys: refused");
	is_int(o.error, ENOSPC, "ORDLOCK_A_ERRNO ENOSPC");
	fail_ok(&o.failure, ORDLOCK_REASON_OWNER_LIMIT, ENOSPC, "limit");
	olt_param_set("max_keys_per_owner", max);
	if (event_ok(ORDLOCK_EVENT_LIMIT, dom, &ev, "the limit")) {
		ok(ev.owner.kind == ORDLOCK_KIND_NETLINK && ev.owner.held == 0,
		   "event: the netlink owner, holding nothing");
		fail_ok(&ev.failure, ORDLOCK_REASON_OWNER_LIMIT, ENOSPC, "event");
	}
	nlt_close(s);
	ordlock_close(ol);
}

/* A storm of order violations: the events are rate-limited */
static void test_event_storm(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k15 = ORDLOCK_EX(1, 5), k13 = ORDLOCK_EX(1, 3);
	struct olc_nl_event ev;
	struct ordlock *ol;
	unsigned int i, bad = 0, got = 0, tries, most;
	uint64_t t0, dt;
	int ret;

	diag("a storm of events");
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlstorm"));
	ol = olt_open(dom);
	ordlock_acquire(ol, &k15, 1, LONG_MS, 0, NULL);
	t0 = now_ms();
	for (i = 0; i < 1000; i++)
		if (ordlock_acquire(ol, &k13, 1, LONG_MS, 0, NULL) != -EDEADLK)
			bad++;
	dt = now_ms() - t0;
	is_int(bad, 0, "1000 order violations in %llu ms", (unsigned long long)dt);
	while (!(ret = nlt_wait_event(L, ORDLOCK_EVENT_ORDER, dom, 500, &ev)))
		got++;
	ok(ret == -ETIMEDOUT, "no overflow of the listener (%s)", strerror(-ret));
	/* 100 a second, and a window may have begun before the storm */
	most = 100 * (dt / 1000 + 2);
	ok(got >= 1 && got <= most && got < 1000,
	   "the listener got %u of 1000 events (at most %u)", got, most);
	for (tries = 0; tries < 100; tries++) {
		ordlock_acquire(ol, &k13, 1, LONG_MS, 0, NULL);
		if (!nlt_wait_event(L, ORDLOCK_EVENT_ORDER, dom, 100, &ev))
			break;
	}
	ok(tries < 100, "events flow again after the storm (%u tries)", tries);
	ordlock_close(ol);
}

int main(void)
{
	watchdog_start(280);
	L = nlt_must_open();
	if (nlt_subscribe(L))
		bail_out("cannot join the events group");
	test_grant_and_refusals();
	test_async_grant();
	test_timeout();
	test_deadlock_at_once();
	test_deadlock_delayed();
	test_mixed_cycle();
	test_same_thread();
	test_fifo_mixed();
	test_close_waiting();
	test_close_holding();
	test_stats();
	test_domain_config();
	test_events();
	test_event_storm();
	nlt_close(L);
	return tap_done();
}
