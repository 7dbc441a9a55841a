// SPDX-License-Identifier: GPL-2.0
/*
 * t_timeout: every wait is bounded: the caller's timeout, the default
 * (default_timeout_ms) when none is given, capped by max_timeout_ms; the
 * timeout covers the whole request; a failed request gives back every key
 * it took; a signal interrupts a wait with EINTR.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

/* How much earlier than asked a timeout may fire (timer slack, ms). */
#define EARLY_MS 20

static uint64_t timed_acquire(struct ordlock *ol, const struct ordlock_key *k,
			      unsigned int n, unsigned int timeout_ms, int *ret)
{
	uint64_t t0 = now_ms();

	*ret = ordlock_acquire(ol, k, n, timeout_ms, 0, NULL);
	return now_ms() - t0;
}

static void test_timeout(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 2);
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct ordlock *a = olt_open(NULL);
	const struct ordlock_failure *f;
	char buf[200], want[200];
	uint64_t dt;
	int ret;

	is_int(h->result, 0, "a child holds exclusive 1:2");
	dt = timed_acquire(a, &k, 1, 300, &ret);
	is_errno(ret, ETIMEDOUT, "waiting 300 ms for 1:2: ETIMEDOUT");
	ok(dt >= 300 - EARLY_MS && dt < 10000,
	   "it waited about 300 ms (%llu ms)", (unsigned long long)dt);
	f = ordlock_last_failure(a);
	is_int(f->reason, ORDLOCK_REASON_TIMEOUT, "reason TIMEOUT");
	is_int(f->error, ETIMEDOUT, "failure.error ETIMEDOUT");
	ok(olt_key_eq(&f->key, 1, 2, EX), "failure.key is exclusive 1:2");
	is_int(f->pid, h->pid, "failure.pid is the holder");
	is_int(f->holder_mode, EX, "failure.holder_mode exclusive");
	is_int(f->index, 0, "failure.index 0");
	snprintf(want, sizeof(want),
		 "timed out waiting for exclusive 1:2 held (exclusive) by pid %d",
		 (int)h->pid);
	ordlock_strfailure(f, buf, sizeof(buf));
	ok(!strcmp(buf, want), "strfailure: \"%s\"", buf);
	is_int(olt_nheld(a), 0, "nothing held after the timeout");

	k = ORDLOCK_SH(1, 2);
	dt = timed_acquire(a, &k, 1, 100, &ret);
	is_errno(ret, ETIMEDOUT, "shared wait for an exclusive holder times out too");
	is_int(olt_holder_stop(h), 0, "holder exits");
	k = ORDLOCK_EX(1, 2);
	is_int(ordlock_acquire(a, &k, 1, 300, 0, NULL), 0,
	       "after the holder left, the same request is granted");
	ordlock_close(a);
}

static void test_default_and_max(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 3);
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct ordlock *a = olt_open(NULL);
	long def = olt_param_get("default_timeout_ms");
	long max = olt_param_get("max_timeout_ms");
	uint64_t dt;
	int ret;

	ok(def > 0, "default_timeout_ms is readable and positive (%ld)", def);
	ok(max >= def, "max_timeout_ms (%ld) >= default_timeout_ms", max);

	is_int(olt_param_set("default_timeout_ms", 400), 0,
	       "set default_timeout_ms to 400");
	dt = timed_acquire(a, &k, 1, ORDLOCK_TIMEOUT_DEFAULT, &ret);
	is_errno(ret, ETIMEDOUT, "timeout 0 uses the default: ETIMEDOUT");
	ok(dt >= 400 - EARLY_MS && dt < 15000,
	   "after about 400 ms (%llu ms)", (unsigned long long)dt);
	is_int(ordlock_last_failure(a)->reason, ORDLOCK_REASON_TIMEOUT,
	       "reason TIMEOUT");

	is_int(olt_param_set("default_timeout_ms", 200), 0,
	       "the parameter applies at once: default 200");
	dt = timed_acquire(a, &k, 1, ORDLOCK_TIMEOUT_DEFAULT, &ret);
	is_errno(ret, ETIMEDOUT, "ETIMEDOUT");
	ok(dt >= 200 - EARLY_MS && dt < 15000, "after about 200 ms (%llu ms)",
	   (unsigned long long)dt);
	olt_param_set("default_timeout_ms", def);

	is_int(olt_param_set("max_timeout_ms", 300), 0,
	       "set max_timeout_ms to 300");
	dt = timed_acquire(a, &k, 1, OLT_LONG_MS, &ret);
	is_errno(ret, ETIMEDOUT, "a 60 s timeout is capped: ETIMEDOUT");
	ok(dt >= 300 - EARLY_MS && dt < 15000,
	   "after about 300 ms, not 60 s (%llu ms)", (unsigned long long)dt);
	dt = timed_acquire(a, &k, 1, ORDLOCK_TIMEOUT_DEFAULT, &ret);
	is_errno(ret, ETIMEDOUT, "the default is capped too");
	ok(dt >= 300 - EARLY_MS && dt < 15000,
	   "after about 300 ms (%llu ms)", (unsigned long long)dt);
	{
		/* a timeout in ns that overflows ms arithmetic is still capped */
		struct ordlock_acquire r;

		memset(&r, 0, sizeof(r));
		r.size = sizeof(r);
		r.nkeys = 1;
		r.keys = (uintptr_t)&k;
		r.timeout_ns = ~0ULL;
		dt = now_ms();
		ret = olt_ioctl(ordlock_fd(a), ORDLOCK_IOC_ACQUIRE, &r);
		dt = now_ms() - dt;
		is_errno(ret, ETIMEDOUT, "timeout_ns = 2^64-1 is capped");
		ok(dt < 15000, "after %llu ms", (unsigned long long)dt);
	}
	olt_param_restore();
	is_int(olt_param_get("max_timeout_ms"), max, "max_timeout_ms restored");
	is_int(olt_param_get("default_timeout_ms"), def,
	       "default_timeout_ms restored");
	olt_holder_stop(h);
	ordlock_close(a);
}

/* a waiter in a child: takes @keys, reports, waits for the go */
struct waiter {
	struct pbarrier *done, *go;
	struct ordlock_key keys[4];
	unsigned int nkeys;
	unsigned int timeout_ms;
	int use_sigalrm;
	int ret;
	int err;
	long nheld_after;
	uint64_t elapsed;
	struct ordlock_failure failure;
	int got_signal;
};

static struct waiter *the_waiter;

static void on_alarm(int sig)
{
	(void)sig;
	if (the_waiter)
		the_waiter->got_signal = 1;
}

static int waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ordlock *ol = olt_child_open(NULL);
	uint64_t t0;

	if (w->use_sigalrm) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;	/* no SA_RESTART */
		sigemptyset(&sa.sa_mask);
		the_waiter = w;
		sigaction(SIGALRM, &sa, NULL);
	}
	t0 = now_ms();
	w->ret = ordlock_acquire(ol, w->keys, w->nkeys, w->timeout_ms, 0, NULL);
	w->err = errno;
	w->elapsed = now_ms() - t0;
	w->failure = *ordlock_last_failure(ol);
	w->nheld_after = olt_nheld(ol);
	if (pbarrier_wait(w->done) || pbarrier_wait(w->go))
		return 2;
	ordlock_close(ol);
	return 0;
}

static struct waiter *waiter_new(void)
{
	struct waiter *w = shm_alloc(sizeof(*w));

	w->done = pbarrier_new(2);
	w->go = pbarrier_new(2);
	return w;
}

static void waiter_free(struct waiter *w)
{
	pbarrier_free(w->done);
	pbarrier_free(w->go);
	shm_free(w, sizeof(*w));
}

static void test_all_or_nothing(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 2);
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct waiter *w = waiter_new();
	pid_t pid;

	w->keys[0] = ORDLOCK_EX(1, 1);
	w->keys[1] = ORDLOCK_EX(1, 2);
	w->nkeys = 2;
	w->timeout_ms = 1500;
	pid = child_start(waiter_main, w);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "the waiter for {1:1, 1:2} blocks");
	is_errno(olt_probe(NULL, 1, 1, EX), EAGAIN,
		 "while it waits for 1:2 it holds 1:1 (taken in order)");
	is_int(pbarrier_wait(w->done), 0, "the waiter's request ended");
	is_errno(w->ret, ETIMEDOUT, "with ETIMEDOUT");
	ok(olt_key_eq(&w->failure.key, 1, 2, EX), "failure.key is 1:2");
	is_int(w->failure.index, 1, "failure.index 1");
	is_int(w->failure.pid, h->pid, "failure.pid is the holder of 1:2");
	is_int(w->nheld_after, 0, "the waiter holds nothing after the timeout");
	is_int(olt_probe(NULL, 1, 1, EX), 0,
	       "1:1 is free again while the waiter is still alive");
	pbarrier_wait(w->go);
	is_int(child_wait(pid, 0), 0, "waiter exits");
	olt_holder_stop(h);
	waiter_free(w);
}

/* The timeout covers the whole request, not each key. */
static void test_whole_request(void)
{
	struct ordlock_key k1 = ORDLOCK_EX(1, 1), k2 = ORDLOCK_EX(1, 2);
	struct olt_holder *h1 = olt_holder_start(NULL, &k1, 1);
	struct olt_holder *h2 = olt_holder_start(NULL, &k2, 1);
	struct waiter *w = waiter_new();
	pid_t pid;

	w->keys[0] = k1;
	w->keys[1] = k2;
	w->nkeys = 2;
	w->timeout_ms = 4000;
	pid = child_start(waiter_main, w);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "a waiter for {1:1, 1:2}, both held, blocks (timeout 4 s)");
	/*
	 * let more than half its time pass waiting for 1:1 (timing, not
	 * sync): a timeout restarted per key would end after 2.5 + 4 s
	 */
	usleep(2500 * 1000);
	olt_holder_stop(h1);
	is_int(pbarrier_wait(w->done), 0, "the waiter's request ended");
	is_errno(w->ret, ETIMEDOUT, "ETIMEDOUT on 1:2");
	ok(olt_key_eq(&w->failure.key, 1, 2, 0), "failure.key is 1:2");
	ok(w->elapsed >= 4000 - EARLY_MS && w->elapsed < 6400,
	   "after about 4 s in all, not 2.5 + 4 s (%llu ms)",
	   (unsigned long long)w->elapsed);
	is_int(w->nheld_after, 0, "1:1, granted during the wait, was given back");
	pbarrier_wait(w->go);
	child_wait(pid, 0);
	olt_holder_stop(h2);
	waiter_free(w);
}

static void test_eintr(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 2);
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct waiter *w = waiter_new();
	pid_t pid;

	w->keys[0] = ORDLOCK_EX(1, 2);
	w->keys[1] = ORDLOCK_EX(1, 1);
	w->nkeys = 2;
	w->timeout_ms = OLT_LONG_MS;
	w->use_sigalrm = 1;
	pid = child_start(waiter_main, w);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "a waiter for {1:2, 1:1} (SIGALRM handler, no SA_RESTART) blocks");
	is_errno(olt_probe(NULL, 1, 1, EX), EAGAIN, "it holds 1:1 while waiting");
	kill(pid, SIGALRM);
	is_int(pbarrier_wait(w->done), 0, "the signal ended the wait");
	is_errno(w->ret, EINTR, "with EINTR");
	ok(w->got_signal, "the handler ran");
	is_int(w->failure.reason, ORDLOCK_REASON_SIGNAL, "reason SIGNAL");
	ok(olt_key_eq(&w->failure.key, 1, 2, EX),
	   "failure.key is the key waited for, 1:2");
	is_int(w->failure.index, 0, "failure.index 0");
	ok(w->elapsed < 30000, "well before the 60 s timeout (%llu ms)",
	   (unsigned long long)w->elapsed);
	is_int(w->nheld_after, 0, "the waiter holds nothing after EINTR");
	is_int(olt_probe(NULL, 1, 1, EX), 0, "1:1 was released");
	is_errno(olt_probe(NULL, 1, 2, EX), EAGAIN, "1:2 still belongs to the holder");
	pbarrier_wait(w->go);
	is_int(child_wait(pid, 0), 0, "waiter exits");
	olt_holder_stop(h);
	is_int(olt_probe(NULL, 1, 2, EX), 0,
	       "1:2 is free: the interrupted waiter left no trace in the queue");
	waiter_free(w);
}

int main(void)
{
	watchdog_start(600);
	test_timeout();
	test_default_and_max();
	test_all_or_nothing();
	test_whole_request();
	test_eintr();
	return tap_done();
}
