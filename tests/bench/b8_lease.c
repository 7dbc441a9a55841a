// SPDX-License-Identifier: GPL-2.0
/*
 * b8_lease: row 8 of the benchmark table, leases.
 *
 * - "renew vs failed try-lock": ORDLOCK_IOC_RENEW of an owner that holds
 *   one key under a lease, next to a try-lock that fails (EAGAIN: another
 *   process holds the key) and a null ioctl as the floor. The issue asks
 *   that renewing cost no more than a failed try-lock.
 * - "revocation lateness": how long after its deadline (the start of the
 *   grant + the lease) the holder's poll() sees POLLPRI, next to the timer
 *   slack of the process (the hrtimer is armed with it) and to the
 *   lateness of clock_nanosleep() to an absolute deadline (the same
 *   hrtimer with the same slack, without ordlock's work item).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"

#define LEASE_MS 20

static int renew_fd, try_fd;
static struct ordlock_key key1 = { .id = 1, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };
static struct ordlock_key key2 = { .id = 2, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };

static void op_renew(void *arg)
{
	struct ordlock_renew r = { .size = sizeof(r) };

	(void)arg;
	if (ioctl(renew_fd, ORDLOCK_IOC_RENEW, &r))
		bench_die("RENEW: %s", strerror(errno));
}

static void op_try_fail(void *arg)
{
	(void)arg;
	if (ol_acquire(try_fd, &key2, 1, 0, ORDLOCK_ACQUIRE_TRY, NULL) != -EAGAIN)
		bench_die("the try-lock did not fail with EAGAIN");
}

static void op_bad_ioctl(void *arg)
{
	(void)arg;
	ol_bad_ioctl(try_fd);
}

static int lease_acquire(int fd, const struct ordlock_key *k, unsigned int lease_ms)
{
	struct ordlock_acquire a = {
		.size = sizeof(a), .nkeys = 1, .lease_ms = lease_ms,
		.keys = (uintptr_t)k,
	};

	return ioctl(fd, ORDLOCK_IOC_ACQUIRE, &a) ? -errno : 0;
}

/* One revocation: the time from the deadline to POLLPRI, in ns */
static uint64_t one_revocation(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLPRI };
	uint64_t t0, t1;

	t0 = now_ns();
	if (lease_acquire(fd, &key1, LEASE_MS))
		bench_die("acquire with a lease: %s", strerror(errno));
	if (poll(&p, 1, 10000) != 1 || !(p.revents & POLLPRI))
		bench_die("no revocation within 10 s");
	t1 = now_ns();
	if (ol_release_all(fd))
		bench_die("RELEASE_ALL: %s", strerror(errno));
	t0 += LEASE_MS * 1000000ULL;
	return t1 > t0 ? t1 - t0 : 0;
}

static uint64_t one_sleep(void)
{
	struct timespec ts;
	uint64_t t0 = now_ns() + LEASE_MS * 1000000ULL, t1;

	ts.tv_sec = (time_t)(t0 / 1000000000ULL);
	ts.tv_nsec = (long)(t0 % 1000000000ULL);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	t1 = now_ns();
	return t1 > t0 ? t1 - t0 : 0;
}

#define M8R "renew vs failed try-lock"
#define M8L "revocation lateness"

int main(void)
{
	unsigned int reps = bench_reps(), r, i;
	unsigned long n = bench_n(3000, 200), k, nlate = bench_n(100, 20);
	struct samples s_renew, s_try, s_null, s_late, s_sleep;
	struct bench_op ops[3];
	struct ol_holder h;
	char note[160];
	int lease_fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	bench_log("clock overhead %llu ns; %u reps x %lu ops",
		  (unsigned long long)bench_clock_overhead(), reps, n);
	renew_fd = ol_open("bench-lease");
	try_fd = ol_open("bench-lease");
	lease_fd = ol_open("bench-lease");
	ol_holder_start(&h, "bench-lease", &key2, 1);
	/* a lease long enough never to expire during the run */
	if (lease_acquire(renew_fd, &key1, 3600 * 1000))
		bench_die("acquire with a lease: %s", strerror(errno));

	samples_init(&s_renew, n * reps);
	samples_init(&s_try, n * reps);
	samples_init(&s_null, n * reps);
	ops[0] = (struct bench_op){ .fn = op_renew, .s = &s_renew };
	ops[1] = (struct bench_op){ .fn = op_try_fail, .s = &s_try };
	ops[2] = (struct bench_op){ .fn = op_bad_ioctl, .s = &s_null };
	for (i = 0; i < 3; i++)
		for (k = 0; k < 200; k++) /* warm up */
			ops[i].fn(NULL);
	for (r = 0; r < reps; r++) {
		bench_interleave(ops, 3, n, 100, r);
		bench_log("rep %u/%u done", r + 1, reps);
	}
	bench_emit("8", M8R, "-", "ordlock-renew", "ordlock", "ns", &s_renew,
		   "ioctl RENEW of an owner holding 1 key under a lease");
	bench_emit("8", M8R, "-", "ordlock-try-fail", "peer", "ns", &s_try,
		   "ioctl ACQUIRE TRY of a key another process holds (EAGAIN)");
	bench_emit("8", M8R, "-", "bad ioctl", "floor", "ns", &s_null,
		   "an unknown ioctl on /dev/ordlock (ENOTTY)");
	ol_holder_stop(&h);
	ol_release_all(renew_fd);

	/* the lease of a free key: the holder is this process, polling */
	if (ol_release_all(lease_fd))
		bench_die("RELEASE_ALL: %s", strerror(errno));
	samples_init(&s_late, nlate);
	samples_init(&s_sleep, nlate);
	for (k = 0; k < nlate; k++) {
		samples_add(&s_late, one_revocation(lease_fd));
		samples_add(&s_sleep, one_sleep());
	}
	snprintf(note, sizeof(note),
		 "poll() POLLPRI after the deadline of a %d ms lease (start of the grant + lease)",
		 LEASE_MS);
	bench_emit("8", M8L, "-", "ordlock-revoke", "ordlock", "ns", &s_late, note);
	bench_emit("8", M8L, "-", "clock_nanosleep", "peer", "ns", &s_sleep,
		   "lateness of an absolute clock_nanosleep() of the same length");
	bench_emit_value("8", M8L, "-", "timer slack", "ref", "ns",
			 (double)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0),
			 "PR_GET_TIMERSLACK of the process: the hrtimer's range");
	return 0;
}
