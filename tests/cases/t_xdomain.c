// SPDX-License-Identifier: GPL-2.0
/*
 * t_xdomain: cycles of waits across domains. Keys of two domains never
 * contend, but a thread that holds a key in one domain and waits in
 * another is blocked in both: two such threads close a cycle that no
 * timeout-free wait can leave. The kernel follows the thread from the
 * owner it holds through to the owner it waits through, whatever their
 * domains, and the request whose wait closes the cycle fails with EDEADLK
 * (when its own domain detects), its record naming every step and its
 * domain. Every shape is forced with the actors of graphtest.h: each one
 * waits (gt_blocked()) before the next request is made.
 *
 *  - two processes, two "detect" domains: P holds X 1:1 and waits for Y
 *    1:1, held by Q, which then asks for X 1:1 through its other
 *    descriptor: Q is the victim, P is granted once Q lets go;
 *  - the same in two "enforce" domains, each request obeying the order of
 *    its own domain: the cycle is still real, and detected;
 *  - three processes, three domains (X -> Y -> Z -> X);
 *  - no false deadlock: P's first thread holds X 1:1 and stays awake
 *    while its second thread waits in Y; Q's request for X 1:1 waits
 *    (P's first thread can release), and everybody is granted in the end;
 *  - the closing wait in a "timeout" domain: no detection, the timeout
 *    ends it (the documented limit);
 *  - while such a cycle stands, the views show it: debugfs "graph" and
 *    the GET_GRAPH dump have the two waits and the two "thread" edges (an
 *    owner that holds, to the owner its thread waits through), and
 *    "ordlockctl cycles" finds the one cycle across the domains through
 *    either source.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define ACQ ORDLOCK_IOC_ACQUIRE
#define LONG_MS		30000

/* The last deadlock debugfs recorded in @domain; 0 when found */
static int last_deadlock(const char *domain, struct gt_deadlock *d)
{
	static struct gt_deadlock all[32];
	int n = gt_deadlocks_read(domain, all, 32);

	if (n <= 0)
		return -1;
	*d = all[(n > 32 ? 32 : n) - 1];
	return 0;
}

static int step_is(const struct ordlock_cycle_step *s, uint64_t owner_id,
		   pid_t pid, uint32_t rank, uint64_t id, int other)
{
	return s->owner_id == owner_id && s->pid == (uint32_t)pid &&
	       olt_key_eq(&s->key, rank, id, EX) && s->edge == ORDLOCK_EDGE_HARD &&
	       s->blocker_mode == EX &&
	       !!(s->flags & ORDLOCK_STEP_OTHER_DOMAIN) == other;
}

/*
 * The crossing of most tests here: fresh domains X and Y ("@tag" x, y, of
 * @px and @py) and actors P (fd 0 in X, fd 1 in Y) and Q (fd 0 in Y, fd 1
 * in X), "@tag-p" and "@tag-q"
 */
static void cross(char *x, char *y, const char *tag, unsigned int px,
		  unsigned int py, struct gt_actor **p, struct gt_actor **q)
{
	const char *pd[2] = { x, y }, *qd[2] = { y, x };
	char name[16];

	snprintf(name, sizeof(name), "%sx", tag);
	gt_new_domain(x, name, px, 0);
	snprintf(name, sizeof(name), "%sy", tag);
	gt_new_domain(y, name, py, 0);
	snprintf(name, sizeof(name), "%s-p", tag);
	*p = gt_actor_start_in(name, pd, 2);
	snprintf(name, sizeof(name), "%s-q", tag);
	*q = gt_actor_start_in(name, qd, 2);
}

/*
 * Two processes, each with a descriptor in X and one in Y (P: fd 0 in X,
 * fd 1 in Y; Q: fd 0 in Y, fd 1 in X). @policy: of both domains.
 */
static void test_two(unsigned int policy, const char *what)
{
	char x[ORDLOCK_DOMAIN_NAME_MAX], y[ORDLOCK_DOMAIN_NAME_MAX], line[512];
	struct gt_actor *p, *q;
	const struct gt_result *res;
	struct gt_deadlock d;
	int ret, i, kmsg;

	cross(x, y, "xd", policy, policy, &p, &q);
	/* the tests before may have spent the log's rate limit */
	gt_kmsg_settle();
	kmsg = gt_kmsg_open();

	is_int(gt_call1(p, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "%s: P holds 1:1 in X", what);
	is_int(gt_call1(q, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "%s: Q holds 1:1 in Y", what);
	gt_submit1(p, GT_OP_ACQUIRE, 1, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(p, ACQ), 0, "%s: P waits for 1:1 in Y (held by Q)", what);
	ret = gt_call1(q, GT_OP_ACQUIRE, 1, 1, 1, EX, LONG_MS, 0);
	res = q->res;
	is_errno(ret, EDEADLK, "%s: Q's request for 1:1 in X closes the cycle: EDEADLK", what);
	if (ret == -ETIMEDOUT)
		diag("  not detected: Q waited %llu ms", (unsigned long long)res->elapsed_ms);
	else
		ok(res->elapsed_ms < LONG_MS / 2, "%s: at once (%llu ms)", what,
		   (unsigned long long)res->elapsed_ms);
	is_int(res->failure.reason, ORDLOCK_REASON_DEADLOCK, "%s: reason DEADLOCK", what);
	is_int(res->failure.cycle_len, 2, "%s: a cycle of 2 owners", what);
	is_int(res->ncycle, 2, "%s: both steps are recorded", what);
	for (i = 0; i < res->ncycle && i < 2; i++)
		diag("  step %d: %s flags %#x", i, gt_step_str(&res->cycle[i]),
		     res->cycle[i].flags);
	if (res->ncycle == 2) {
		ok(step_is(&res->cycle[0], q->owner_id[1], q->pid, 1, 1, 0),
		   "%s: step 0: Q's descriptor in X waits for 1:1, held by P", what);
		ok(step_is(&res->cycle[1], p->owner_id[1], p->pid, 1, 1, 1),
		   "%s: step 1: P's descriptor in Y waits for 1:1 of the other domain, held by Q",
		   what);
	}
	/* debugfs names each step's domain */
	if (ok(!last_deadlock(x, &d), "%s: debugfs deadlocks has it, in X", what)) {
		ok(d.len == 2 && d.nsteps == 2 && !strcmp(d.steps[0].domain, x) &&
		   !strcmp(d.steps[1].domain, y) &&
		   d.steps[0].owner_id == q->owner_id[1] &&
		   d.steps[1].owner_id == p->owner_id[1],
		   "%s: its steps: Q's wait in X, P's wait in Y", what);
	}
	/* the kernel log too */
	snprintf(line, sizeof(line), "of domain \"%s\"", y);
	ok(kmsg >= 0 && gt_kmsg_find(kmsg, line, NULL, 0, 5000) == 1,
	   "%s: the kernel log names Y for P's step", what);
	if (kmsg >= 0)
		close(kmsg);

	/* the victim rolled back: P is granted when Q lets go */
	is_int(gt_call(q, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "%s: Q releases 1:1 in Y", what);
	ok(!gt_collect(p, LONG_MS) && !p->res->ret, "%s: P is granted 1:1 in Y", what);
	is_int(gt_call1(q, GT_OP_ACQUIRE, 1, 1, 2, EX, LONG_MS, ORDLOCK_ACQUIRE_TRY), 0,
	       "%s: Q holds nothing in X (takes 1:2 there at once)", what);
	gt_actor_stop(p);
	gt_actor_stop(q);
}

/* P -> Q -> R -> P through X, Y, Z: actor i holds in domain i, waits in i+1 */
static void test_three(void)
{
	char dn[3][ORDLOCK_DOMAIN_NAME_MAX];
	const char *doms[3][2];
	struct gt_actor *a[3];
	const struct gt_result *res;
	struct gt_deadlock d;
	int i, ret, good;

	for (i = 0; i < 3; i++)
		gt_new_domain(dn[i], "xd3", ORDLOCK_POLICY_DETECT, 0);
	for (i = 0; i < 3; i++) {
		char comm[16];

		doms[i][0] = dn[i];
		doms[i][1] = dn[(i + 1) % 3];
		snprintf(comm, sizeof(comm), "xd3-%d", i);
		a[i] = gt_actor_start_in(comm, doms[i], 2);
	}
	for (i = 0; i < 3; i++)
		is_int(gt_call1(a[i], GT_OP_ACQUIRE, 0, 1, 7, EX, LONG_MS, 0), 0,
		       "three: actor %d holds 1:7 in its domain", i);
	for (i = 0; i < 2; i++) {
		gt_submit1(a[i], GT_OP_ACQUIRE, 1, 1, 7, EX, LONG_MS, 0);
		is_int(gt_blocked(a[i], ACQ), 0,
		       "three: actor %d waits for 1:7 in the next domain", i);
	}
	ret = gt_call1(a[2], GT_OP_ACQUIRE, 1, 1, 7, EX, LONG_MS, 0);
	res = a[2]->res;
	is_errno(ret, EDEADLK, "three: actor 2's wait in the first domain closes the cycle");
	is_int(res->failure.cycle_len, 3, "three: a cycle of 3 owners");
	good = res->ncycle == 3 &&
	       step_is(&res->cycle[0], a[2]->owner_id[1], a[2]->pid, 1, 7, 0) &&
	       step_is(&res->cycle[1], a[0]->owner_id[1], a[0]->pid, 1, 7, 1) &&
	       step_is(&res->cycle[2], a[1]->owner_id[1], a[1]->pid, 1, 7, 1);
	for (i = 0; i < res->ncycle; i++)
		diag("  step %d: %s flags %#x", i, gt_step_str(&res->cycle[i]),
		     res->cycle[i].flags);
	ok(good, "three: steps: actor 2 (victim), actor 0, actor 1, each waiting through its second descriptor");
	ok(!last_deadlock(dn[0], &d) && d.nsteps == 3 && !strcmp(d.steps[0].domain, dn[0]) &&
	   !strcmp(d.steps[1].domain, dn[1]) && !strcmp(d.steps[2].domain, dn[2]),
	   "three: debugfs names the three domains, one per step");
	is_int(gt_call(a[2], GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "three: actor 2 lets go");
	ok(!gt_collect(a[1], LONG_MS) && !a[1]->res->ret, "three: actor 1 is granted");
	is_int(gt_call(a[1], GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "three: actor 1 lets go of its first descriptor's key");
	ok(!gt_collect(a[0], LONG_MS) && !a[0]->res->ret, "three: actor 0 is granted");
	for (i = 0; i < 3; i++)
		gt_actor_stop(a[i]);
}

/*
 * No false deadlock: P's thread 1 takes X 1:1 (descriptor 1) and stays
 * awake; P's thread 2 waits for Y 1:1 (descriptor 2), held by Q; Q asks for
 * X 1:1. Thread 1 can still let go: nothing is deadlocked.
 */
static void test_no_false(void)
{
	char x[ORDLOCK_DOMAIN_NAME_MAX], y[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_twothr *tt;
	struct gt_actor *q;
	const char *qd[2];
	pid_t pid;
	int ret;

	gt_new_domain(x, "xdfx", ORDLOCK_POLICY_DETECT, 0);
	gt_new_domain(y, "xdfy", ORDLOCK_POLICY_DETECT, 0);
	qd[0] = y;
	qd[1] = x;
	q = gt_actor_start_in("xdthr-q", qd, 2);
	tt = gt_twothr_start("xdthr-p", x, ORDLOCK_EX(1, 1), y, ORDLOCK_EX(1, 1));
	pid = tt->pid;
	pbarrier_wait(tt->held);
	is_int(tt->ret1, 0, "no false: P's thread 1 holds 1:1 in X");
	is_int(gt_call1(q, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "no false: Q holds 1:1 in Y");
	pbarrier_wait(tt->go);
	pbarrier_wait(tt->blocked);
	is_int(tt->blocked_ret, 0, "no false: P's thread 2 waits for 1:1 in Y");
	gt_submit1(q, GT_OP_ACQUIRE, 1, 1, 1, EX, LONG_MS, 0);
	ret = gt_blocked(q, ACQ);
	is_int(ret, 0, "no false: Q's request for 1:1 in X waits (no EDEADLK: thread 1 is awake)");
	if (ret && !gt_collect(q, 1000))
		diag("  Q's request returned %d (reason %u)", q->res->ret, q->res->failure.reason);
	is_int(tt->ret2, 1, "no false: thread 2's request has not returned");
	pbarrier_wait(tt->release);
	ok(!gt_collect(q, LONG_MS) && !q->res->ret,
	   "no false: thread 1 lets go, Q is granted 1:1 in X");
	is_int(gt_call(q, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "no false: Q releases 1:1 in Y");
	is_int(child_wait(pid, 0), 0, "no false: P ends");
	is_int(tt->ret2, 0, "no false: thread 2 was granted 1:1 in Y");
	gt_actor_stop(q);
	gt_twothr_free(tt);
}

/* The closing wait is in a "timeout" domain: the timeouts end it */
static void test_timeout_domain(void)
{
	char x[ORDLOCK_DOMAIN_NAME_MAX], y[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *p, *q;
	int ret;

	cross(x, y, "xdt", ORDLOCK_POLICY_TIMEOUT, ORDLOCK_POLICY_DETECT, &p, &q);
	is_int(gt_call1(p, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "timeout domain: P holds 1:1 in X (policy timeout)");
	is_int(gt_call1(q, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "timeout domain: Q holds 1:1 in Y (policy detect)");
	gt_submit1(p, GT_OP_ACQUIRE, 1, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(p, ACQ), 0, "timeout domain: P waits in Y");
	ret = gt_call1(q, GT_OP_ACQUIRE, 1, 1, 1, EX, 300, 0);
	is_errno(ret, ETIMEDOUT,
		 "timeout domain: Q's wait in X closes the cycle, is not checked, and times out");
	is_int(q->res->failure.reason, ORDLOCK_REASON_TIMEOUT, "timeout domain: reason TIMEOUT");
	is_int(gt_call(q, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "timeout domain: Q lets go");
	ok(!gt_collect(p, LONG_MS) && !p->res->ret, "timeout domain: P is granted");
	gt_actor_stop(p);
	gt_actor_stop(q);
}


/* The output of "ordlockctl -S @source cycles"; its exit status */
static int ctl_cycles(const char *source, char *out, size_t len)
{
	return olt_run(out, len, "NO_COLOR=1 %s -S %s cycles 2>&1", olt_ctl_path(), source);
}

static void test_views(void)
{
	char x[ORDLOCK_DOMAIN_NAME_MAX], y[ORDLOCK_DOMAIN_NAME_MAX];
	static char out[16384];
	struct gt_actor *p, *q;
	struct gt_edge e[16];
	int n, i, hard = 0, thread = 0, st, s;
	static const char *const sources[2] = { "debugfs", "netlink" };

	cross(x, y, "xdv", ORDLOCK_POLICY_TIMEOUT, ORDLOCK_POLICY_TIMEOUT, &p, &q);
	is_int(gt_call1(p, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0, "views: P holds 1:1 in X");
	is_int(gt_call1(q, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0, "views: Q holds 1:1 in Y");
	gt_submit1(p, GT_OP_ACQUIRE, 1, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(p, ACQ), 0, "views: P waits in Y");
	gt_submit1(q, GT_OP_ACQUIRE, 1, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(q, ACQ), 0, "views: Q waits in X: the cycle stands (timeout domains)");

	n = gt_graph_read(NULL, e, 16);
	for (i = 0; i < n && i < 16; i++) {
		const struct gt_edge *g = &e[i];

		diag("  edge: %llu (pid %d) -> %llu (pid %d) in %s, %s",
		     (unsigned long long)g->waiter_id, g->waiter_pid,
		     (unsigned long long)g->blocker_id, g->blocker_pid, g->domain,
		     g->edge == ORDLOCK_EDGE_THREAD ? "thread" : "hard/soft");
		if (g->edge == ORDLOCK_EDGE_HARD &&
		    ((g->waiter_id == p->owner_id[1] && g->blocker_id == q->owner_id[0] &&
		      !strcmp(g->domain, y)) ||
		     (g->waiter_id == q->owner_id[1] && g->blocker_id == p->owner_id[0] &&
		      !strcmp(g->domain, x))))
			hard++;
		if (g->edge == ORDLOCK_EDGE_THREAD &&
		    ((g->waiter_id == p->owner_id[0] && g->blocker_id == p->owner_id[1] &&
		      !strcmp(g->domain, y) && g->rank == 1 && g->id == 1) ||
		     (g->waiter_id == q->owner_id[0] && g->blocker_id == q->owner_id[1] &&
		      !strcmp(g->domain, x) && g->rank == 1 && g->id == 1)))
			thread++;
	}
	ok(hard == 2 && thread == 2,
	   "views: debugfs graph: the two waits and the two thread edges (%d, %d of %d edges)",
	   hard, thread, n);
	for (s = 0; s < 2; s++) {
		char want[128];

		st = ctl_cycles(sources[s], out, sizeof(out));
		snprintf(want, sizeof(want), "owner %llu cannot release: its thread waits",
			 (unsigned long long)p->owner_id[0]);
		if (!ok(st == 1 && strstr(out, "cycle 1 of 1 across domains (4 owners)") &&
			strstr(out, want),
			"views: ordlockctl -S %s cycles: one cycle across domains, through P's thread",
			sources[s]))
			diag("  exit %d: %s", st, out);
	}
	/* only a timeout or a kill ends it: Q's thread is blocked */
	gt_actor_stop(q);
	ok(!gt_collect(p, LONG_MS) && !p->res->ret, "views: Q killed, P is granted");
	gt_actor_stop(p);
}

int main(void)
{
	watchdog_start(300);
	test_two(ORDLOCK_POLICY_DETECT, "detect");
	test_two(ORDLOCK_POLICY_ENFORCE, "enforce");
	test_three();
	test_no_false();
	test_timeout_domain();
	test_views();
	return tap_done();
}
