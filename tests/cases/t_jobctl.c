// SPDX-License-Identifier: GPL-2.0
/*
 * t_jobctl: job control does not fail a wait.  A task waiting in ACQUIRE
 * or CONVERT that is stopped and continued (SIGSTOP/SIGCONT with no
 * handler: Ctrl-Z and fg, strace -p, a debugger) goes on waiting, with
 * the time it had left: the original deadline holds.  A handled signal
 * restarts the wait when its handler has SA_RESTART, and fails it with
 * EINTR (reason "signal", nothing held) when it has not.
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

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

struct result {
	int ret;
	int err;
	unsigned int reason;
	uint64_t ms;
	long nheld;
	int handled;
};

struct waiter {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int timeout_ms;
	int handler;		/* 0 none, 1 SA_RESTART, 2 without */
	int convert;		/* wait in CONVERT (to exclusive) instead */
	struct result *res;
};

static int waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ordlock *ol = olt_child_open(w->domain);
	struct ordlock_key k = ORDLOCK_EX(2, 2);
	uint64_t t0;
	int ret;

	usr1_counter_start(w->handler);
	if (w->convert) {
		k.mode = SH;
		if (ordlock_acquire(ol, &k, 1, OLT_LONG_MS, 0, NULL))
			return 1;
	}
	t0 = now_ms();
	if (w->convert)
		ret = ordlock_convert(ol, ORDLOCK_EX(2, 2), w->timeout_ms, 0, NULL);
	else
		ret = ordlock_acquire(ol, &k, 1, w->timeout_ms, 0, NULL);
	w->res->err = ret ? errno : 0;
	w->res->ms = now_ms() - t0;
	w->res->ret = ret;
	w->res->reason = ret ? ordlock_last_failure(ol)->reason : 0;
	w->res->nheld = olt_nheld(ol);
	w->res->handled = usr1_counted();
	ordlock_close(ol);
	return 0;
}

/* Start a waiter for 2:2, which @holder holds, and wait until it sleeps */
static pid_t start_waiter(struct waiter *w)
{
	pid_t pid = child_start(waiter_main, w);

	if (wait_blocked_ioctl(pid, w->convert ? ORDLOCK_IOC_CONVERT : ORDLOCK_IOC_ACQUIRE,
			       10000))
		diag("the waiter did not block in time");
	return pid;
}

/* SIGSTOP, wait until stopped, hold it @ms, SIGCONT */
static void stop_cont(pid_t pid, unsigned int ms)
{
	int i;

	kill(pid, SIGSTOP);
	for (i = 0; i < 200 && proc_state(pid) != 'T'; i++)
		usleep(10000);
	ok(proc_state(pid) == 'T', "the waiter is stopped");
	usleep(ms * 1000);
	kill(pid, SIGCONT);
}

static struct result *res;

/* Stopped and continued, then granted when the holder releases */
static void test_granted(int convert)
{
	struct waiter w = { .timeout_ms = 30000, .convert = convert, .res = res };
	struct ordlock *holder;
	struct ordlock_key k = ORDLOCK_EX(2, 2);
	pid_t pid;

	snprintf(w.domain, sizeof(w.domain), "%s", olt_domain("jobctl"));
	holder = olt_open(w.domain);
	if (convert)
		k.mode = SH;
	is_int(ordlock_acquire(holder, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "the holder takes 2:2 %s", convert ? "shared" : "exclusive");
	memset(res, 0, sizeof(*res));
	pid = start_waiter(&w);
	stop_cont(pid, 300);
	/* it must go back to sleep in the same call, still waiting */
	ok(wait_blocked_ioctl(pid, convert ? ORDLOCK_IOC_CONVERT : ORDLOCK_IOC_ACQUIRE,
			      10000) == 0, "after SIGCONT the waiter waits again");
	ordlock_release_all(holder);
	is_int(child_wait(pid, 30), 0, "the waiter finished");
	is_int(res->ret, 0, "%s after a stop and continue: granted (errno %d)",
	       convert ? "CONVERT" : "ACQUIRE", res->err);
	is_int(res->nheld, 1, "and held its key");
	ordlock_close(holder);
}

/* A holder of 2:2 exclusive in a fresh domain (@w's), and a waiter asleep: its pid */
static pid_t hold_and_wait(struct waiter *w, struct ordlock **holder)
{
	struct ordlock_key k = ORDLOCK_EX(2, 2);

	snprintf(w->domain, sizeof(w->domain), "%s", olt_domain("jobctl"));
	*holder = olt_open(w->domain);
	ordlock_acquire(*holder, &k, 1, OLT_LONG_MS, 0, NULL);
	memset(res, 0, sizeof(*res));
	return start_waiter(w);
}

/* Stopped and continued, never granted: times out at the first deadline */
static void test_deadline(void)
{
	struct waiter w = { .timeout_ms = 4000, .res = res };
	struct ordlock *holder;
	pid_t pid = hold_and_wait(&w, &holder);

	usleep(300000);
	stop_cont(pid, 2500);
	is_int(child_wait(pid, 60), 0, "the waiter finished");
	errno = res->err;
	is_errno(res->ret ? -1 : 0, ETIMEDOUT, "a stopped waiter that is never granted times out");
	is_int(res->reason, ORDLOCK_REASON_TIMEOUT, "reason timeout");
	/*
	 * The first deadline is 4 s after the start; the time left at the
	 * stop (3.7 s) counted from SIGCONT would end after 6.5 s, a fresh
	 * timeout after 6.8 s
	 */
	ok(res->ms < 5500, "at its first deadline: %llu ms for a 4000 ms timeout, stopped 2.5 s",
	   (unsigned long long)res->ms);
	is_int(res->nheld, 0, "holding nothing");
	ordlock_close(holder);
}

/* A handled signal: SA_RESTART goes on waiting, without it EINTR */
static void test_handled(int restart)
{
	struct waiter w = { .timeout_ms = 30000, .handler = restart ? 1 : 2, .res = res };
	struct ordlock *holder;
	pid_t pid = hold_and_wait(&w, &holder);

	kill(pid, SIGUSR1);
	if (restart) {
		ok(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 10000) == 0,
		   "SA_RESTART handler: the waiter waits again");
		usleep(200000);
		ordlock_release_all(holder);
	}
	is_int(child_wait(pid, 30), 0, "the waiter finished");
	is_int(res->handled, 1, "the handler ran once");
	if (restart) {
		is_int(res->ret, 0, "SA_RESTART: granted after the handler (errno %d)", res->err);
		is_int(res->nheld, 1, "holding its key");
	} else {
		errno = res->err;
		is_errno(res->ret ? -1 : 0, EINTR, "no SA_RESTART: EINTR");
		is_int(res->reason, ORDLOCK_REASON_SIGNAL, "reason signal");
		is_int(res->nheld, 0, "holding nothing");
	}
	ordlock_close(holder);
}

int main(void)
{
	watchdog_start(180);
	res = shm_alloc(sizeof(*res));
	test_granted(0);
	test_granted(1);
	test_deadline();
	test_handled(1);
	test_handled(0);
	return tap_done();
}
