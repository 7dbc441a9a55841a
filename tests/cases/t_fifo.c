// SPDX-License-Identifier: GPL-2.0
/*
 * t_fifo: each resource grants in FIFO order; a queued exclusive request
 * is not starved by shared ones arriving later.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

#define NWAITERS 5

struct fifo {
	unsigned int seq;		/* next grant number */
	struct {
		unsigned int mode;
		int ret;
		unsigned int grant;	/* seq value at grant */
		unsigned int done;	/* seq value at release */
		uint64_t token;
	} w[NWAITERS];
};

static struct fifo *fifo;

/* Waiter @idx: wait for 9:1 in its mode, note the grant order, release. */
static int waiter_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct ordlock_key k = ordlock_key(9, 1, fifo->w[i].mode);
	struct ordlock *ol = olt_child_open(NULL);

	fifo->w[i].ret = ordlock_acquire(ol, &k, 1, OLT_LONG_MS, 0,
					 &fifo->w[i].token);
	if (fifo->w[i].ret)
		return 2;
	fifo->w[i].grant = shared_counter_next(&fifo->seq);
	fifo->w[i].done = shared_counter_next(&fifo->seq);
	ordlock_close(ol);
	return 0;
}

static void test_no_starvation(void)
{
	struct ordlock_key k = ORDLOCK_SH(9, 1);
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct ordlock *c = olt_open(NULL);
	const struct ordlock_failure *f;
	pid_t pid;
	uint64_t t0;
	int ret;

	fifo = shm_alloc(sizeof(*fifo));
	is_int(h->result, 0, "a child holds 9:1 shared");
	is_int(olt_probe(NULL, 9, 1, SH), 0,
	       "with nobody queued, another shared request is granted");

	fifo->w[0].mode = EX;
	pid = child_start(waiter_main, (void *)(intptr_t)0);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "an exclusive waiter queues behind the shared holder");

	k = ORDLOCK_SH(9, 1);
	is_errno(ordlock_try_acquire(c, &k, 1, NULL), EAGAIN,
		 "a later shared try-acquire fails: an exclusive waits ahead");
	f = ordlock_last_failure(c);
	is_int(f->reason, ORDLOCK_REASON_BUSY, "reason BUSY");
	ok(olt_key_eq(&f->key, 9, 1, SH), "failure.key shared 9:1");
	t0 = now_ms();
	ret = ordlock_acquire(c, &k, 1, 300, 0, NULL);
	is_errno(ret, ETIMEDOUT,
		 "a later shared request waits (and times out) behind it");
	ok(now_ms() - t0 >= 280, "it really waited");
	is_int(olt_nheld(c), 0, "it holds nothing");

	olt_holder_stop(h);
	is_int(child_wait(pid, 0), 0,
	       "the exclusive waiter is granted once the shared holder left");
	is_int(fifo->w[0].ret, 0, "its acquire succeeded");
	is_int(ordlock_try_acquire(c, &k, 1, NULL), 0,
	       "then shared requests are granted again");
	ordlock_close(c);
	shm_free(fifo, sizeof(*fifo));
}

/*
 * The parent holds 9:1 exclusive; NWAITERS waiters in @modes queue one
 * after the other (each blocked before the next starts); then the parent
 * releases and every waiter records when it was granted and released.
 */
static void run_order(const unsigned int *modes, const char *what)
{
	struct ordlock_key k = ORDLOCK_EX(9, 1);
	struct ordlock *hold = olt_open(NULL);
	pid_t pid[NWAITERS];
	int i, blocked = 1;

	fifo = shm_alloc(sizeof(*fifo));
	is_int(ordlock_acquire(hold, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "%s: the parent holds 9:1 exclusive", what);
	for (i = 0; i < NWAITERS; i++) {
		fifo->w[i].mode = modes[i];
		pid[i] = child_start(waiter_main, (void *)(intptr_t)i);
		if (wait_blocked_ioctl(pid[i], ORDLOCK_IOC_ACQUIRE, 0))
			blocked = 0;
	}
	ok(blocked, "%s: %d waiters queued, each blocked before the next came",
	   what, NWAITERS);
	is_int(ordlock_release_all(hold), 0, "%s: the parent releases", what);
	for (i = 0; i < NWAITERS; i++)
		is_int(child_wait(pid[i], 0), 0, "%s: waiter %d (%s) granted",
		       what, i, ordlock_mode_name(modes[i]));
	/*
	 * Tokens follow the grants; shared waiters granted together by one
	 * release may get theirs in any order among themselves.
	 */
	for (i = 1; i < NWAITERS; i++) {
		if (modes[i] == SH && modes[i - 1] == SH)
			continue;
		ok(fifo->w[i].token > fifo->w[i - 1].token,
		   "%s: waiter %d got a later token than waiter %d", what, i,
		   i - 1);
	}
	ordlock_close(hold);
}

static void test_fifo_exclusive(void)
{
	static const unsigned int modes[NWAITERS] = { EX, EX, EX, EX, EX };
	int i, in_order = 1;

	run_order(modes, "exclusive waiters");
	for (i = 0; i < NWAITERS; i++) {
		if (fifo->w[i].grant != 2U * i)
			in_order = 0;
		diag("waiter %d: granted %u, released %u", i, fifo->w[i].grant,
		     fifo->w[i].done);
	}
	ok(in_order, "exclusive waiters were granted in the order they queued");
	shm_free(fifo, sizeof(*fifo));
}

/*
 * Mixed: EX, SH, SH, EX, SH. The second and third are granted together
 * after the first; the fourth after both; the fifth, a shared request that
 * came after the exclusive fourth, only after the fourth.
 */
static void test_fifo_mixed(void)
{
	static const unsigned int modes[NWAITERS] = { EX, SH, SH, EX, SH };
	int ok_order;

	run_order(modes, "mixed waiters");
	ok_order = fifo->w[0].done < fifo->w[1].grant &&
		   fifo->w[0].done < fifo->w[2].grant &&
		   fifo->w[3].grant > fifo->w[1].done &&
		   fifo->w[3].grant > fifo->w[2].done &&
		   fifo->w[4].grant > fifo->w[3].done;
	ok(ok_order, "grant order EX < {SH, SH} < EX < SH (FIFO, no overtaking)");
	if (!ok_order) {
		int i;

		for (i = 0; i < NWAITERS; i++)
			diag("waiter %d (%s): granted %u, released %u", i,
			     ordlock_mode_name(fifo->w[i].mode),
			     fifo->w[i].grant, fifo->w[i].done);
	}
	shm_free(fifo, sizeof(*fifo));
}

int main(void)
{
	watchdog_start(600);
	test_no_starvation();
	test_fifo_exclusive();
	test_fifo_mixed();
	return tap_done();
}
