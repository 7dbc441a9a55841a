// SPDX-License-Identifier: GPL-2.0
/*
 * t_hostile_sig: signals in the middle of a multi-key request that has
 * taken part of its keys ({1:1 free, taken; 1:2 held by another owner,
 * waited for}), as POSIX semaphore and LTP tests do to a single wait:
 *  - a handler without SA_RESTART: EINTR, reason signal, naming 1:2; the
 *    time left written back in @timeout_ns (more than 0, at most what was
 *    asked); nothing held, and 1:1 free again, seen by another owner
 *    before the waiter exits;
 *  - a handler with SA_RESTART: the wait goes on; granted both keys;
 *  - SIGSTOP: while stopped the request holds nothing (1:1 is free to
 *    others, as the UAPI's EINTR row says: the keys the request had taken
 *    are released in between); after SIGCONT it is granted both;
 *  - SIGKILL: 1:1 is free, the holder's 1:2 untouched.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define ASK_NS	(30ULL * 1000000000ULL)

struct res {
	int ret, err;
	unsigned int reason;
	struct ordlock_key key;
	unsigned long long left_ns;
	long nheld;
	int free_after;		/* olt_probe(1:1) right after the failure */
	int handled;
};

struct waiter {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	int handler;		/* 0 none, 1 SA_RESTART, 2 without */
	struct res *res;
};

static int waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ordlock_key k[2] = { ORDLOCK_EX(1, 1), ORDLOCK_EX(1, 2) };
	struct ordlock *ol = olt_child_open(w->domain);
	struct ordlock_acquire a;
	int ret;

	usr1_counter_start(w->handler);
	ret = olt_fd_acquire(ordlock_fd(ol), k, 2, 0, ASK_NS, &a);
	w->res->err = ret ? errno : 0;
	w->res->ret = ret;
	w->res->reason = a.failure.reason;
	w->res->key = a.failure.key;
	w->res->left_ns = a.timeout_ns;
	w->res->nheld = olt_nheld(ol);
	w->res->free_after = olt_probe(w->domain, 1, 1, EX);
	w->res->handled = usr1_counted();
	ordlock_close(ol);
	return 0;
}

struct setup {
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct olt_holder *h;
	struct waiter w;
	pid_t pid;
};

/* The holder of 1:2, and a waiter for {1:1, 1:2} that sleeps holding 1:1 */
static void setup(struct setup *s, const char *what, int handler, struct res *res)
{
	struct ordlock_key hk = ORDLOCK_EX(1, 2);

	snprintf(s->d, sizeof(s->d), "%s", olt_domain("hsig"));
	s->h = olt_holder_start(s->d, &hk, 1);
	memset(res, 0, sizeof(*res));
	memset(&s->w, 0, sizeof(s->w));
	snprintf(s->w.domain, sizeof(s->w.domain), "%s", s->d);
	s->w.handler = handler;
	s->w.res = res;
	s->pid = child_start(waiter_main, &s->w);
	is_int(wait_blocked_ioctl(s->pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "%s: a waiter for {1:1, 1:2} sleeps", what);
	is_int(olt_probe(s->d, 1, 1, EX), -EAGAIN, "%s: it has taken 1:1", what);
}

static void test_eintr(struct res *res)
{
	struct setup s;

	setup(&s, "no SA_RESTART", 2, res);
	kill(s.pid, SIGUSR1);
	is_int(child_wait(s.pid, 30), 0, "no SA_RESTART: the waiter finished");
	is_int(res->handled, 1, "the handler ran once");
	ok(res->ret < 0 && res->err == EINTR, "EINTR (errno %d)", res->err);
	is_int(res->reason, ORDLOCK_REASON_SIGNAL, "reason signal");
	ok(olt_key_eq(&res->key, 1, 2, EX), "naming 1:2, the key waited for");
	ok(res->left_ns > 0 && res->left_ns <= ASK_NS,
	   "the time left is written back (%llu ns of %llu)", res->left_ns, ASK_NS);
	is_int(res->nheld, 0, "nothing held");
	is_int(res->free_after, 0, "1:1 is free again before the waiter exits");
	is_int(olt_probe(s.d, 1, 2, EX), -EAGAIN, "1:2 is still the holder's");
	olt_holder_stop(s.h);
}

static void test_restart(struct res *res)
{
	struct setup s;
	uint64_t deadline = now_ms() + BLOCKED_TIMEOUT_MS;

	setup(&s, "SA_RESTART", 1, res);
	kill(s.pid, SIGUSR1);
	/* the handler ran when the waiter sleeps in the ioctl again */
	while (now_ms() < deadline && !in_ioctl(s.pid, ORDLOCK_IOC_ACQUIRE))
		usleep(1000);
	is_int(wait_blocked_ioctl(s.pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "SA_RESTART: the waiter waits again");
	olt_holder_stop(s.h);
	is_int(child_wait(s.pid, 30), 0, "SA_RESTART: the waiter finished");
	is_int(res->handled, 1, "the handler ran once");
	ok(res->ret == 0, "granted after the handler (errno %d)", res->err);
	is_int(res->nheld, 2, "holding both keys");
}

static void test_stop(struct res *res)
{
	struct setup s;
	uint64_t deadline;

	setup(&s, "SIGSTOP", 0, res);
	kill(s.pid, SIGSTOP);
	deadline = now_ms() + BLOCKED_TIMEOUT_MS;
	while (proc_state(s.pid) != 'T' && now_ms() < deadline)
		usleep(1000);
	ok(proc_state(s.pid) == 'T', "SIGSTOP: the waiter is stopped");
	is_int(olt_probe(s.d, 1, 1, EX), 0,
	       "SIGSTOP: while stopped it holds nothing: 1:1 is free to others");
	kill(s.pid, SIGCONT);
	is_int(wait_blocked_ioctl(s.pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "SIGCONT: it waits again");
	is_int(olt_probe(s.d, 1, 1, EX), -EAGAIN, "SIGCONT: it has taken 1:1 again");
	olt_holder_stop(s.h);
	is_int(child_wait(s.pid, 30), 0, "SIGCONT: the waiter finished");
	ok(res->ret == 0, "granted after the stop (errno %d)", res->err);
	is_int(res->nheld, 2, "holding both keys");
}

static void test_kill(struct res *res)
{
	struct setup s;
	int st;

	setup(&s, "SIGKILL", 0, res);
	st = child_kill(s.pid, SIGKILL);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "SIGKILL: the waiter died");
	is_int(olt_probe(s.d, 1, 1, EX), 0, "SIGKILL: 1:1 is free");
	is_int(olt_probe(s.d, 1, 2, EX), -EAGAIN, "SIGKILL: 1:2 is still the holder's");
	olt_holder_stop(s.h);
	is_int(olt_probe(s.d, 1, 2, EX), 0, "and free after it");
}

int main(void)
{
	struct res *res = shm_alloc(sizeof(*res));

	watchdog_start(300);
	test_eintr(res);
	test_restart(res);
	test_stop(res);
	test_kill(res);
	shm_free(res, sizeof(*res));
	return tap_done();
}
