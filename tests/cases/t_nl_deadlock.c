// SPDX-License-Identifier: GPL-2.0
/*
 * t_nl_deadlock: deadlocks and queue order over the generic netlink family.
 *
 *  - DEADLOCK between two netlink owners in a "detect" domain set up with
 *    DOMAIN_SET: refused at once (no delay) or as a RESULT after the
 *    detection delay, with the whole cycle; and cycles that span an ioctl
 *    owner and a netlink owner, whichever of the two is the victim;
 *  - owners of one thread: a socket waiting for a key another owner of its
 *    thread holds is no deadlock (netlink requests do not block);
 *  - ioctl and netlink owners queued on one key are granted in FIFO order.
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


int main(void)
{
	watchdog_start(200);
	L = nlt_must_open();
	if (nlt_subscribe(L))
		bail_out("cannot join the events group");
	test_deadlock_at_once();
	test_deadlock_delayed();
	test_mixed_cycle();
	test_same_thread();
	test_fifo_mixed();
	nlt_close(L);
	return tap_done();
}
