// SPDX-License-Identifier: GPL-2.0
/*
 * b5_deadlock: row 5 of the benchmark table.
 *
 * Cycle detection: n owners in a detect domain, owner i holding key i;
 * owners 0..n-2 (one thread each) wait for key i + 1; then the main
 * thread asks, through owner n-1, for key 0: that wait closes the cycle
 * and fails with EDEADLK. The sample is the time of that ACQUIRE, from
 * the call to the EDEADLK. The graph does not change when the victim
 * fails, so the closing request is repeated for more samples.
 *
 * The peer is fcntl F_SETLKW, whose EDEADLK check follows at most 10
 * steps of waiters (MAX_DEADLK_ITERATIONS): the same ring of n processes
 * with POSIX record locks on bytes of one file; a closing request that
 * is not refused within 300 ms counts as a miss. PostgreSQL's default
 * deadlock_timeout (1 s) is the reference figure; one wake-up (a pipe
 * write to a blocked reader) is the floor.
 *
 * The cost of the check on a wait: an ACQUIRE of a held key with a 1 ns
 * timeout (queue, look for a cycle or not, time out at once) in enforce,
 * detect and timeout domains. (b3 measures whole blocking handoffs by
 * policy, b1 acquires that do not wait.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchlib.h"

#define LONG_NS (120ULL * 1000000000ULL)

/* the cycle sizes; ORDLOCK_BENCH_RINGS="2,10,..." chooses others */
#define NNS_MAX 8
static unsigned int ns_[NNS_MAX] = { 2, 10, 100, 1000 };
static unsigned int NNS = 4;

static void parse_rings(void)
{
	const char *e = getenv("ORDLOCK_BENCH_RINGS");
	char *end;

	if (!e || !*e)
		return;
	for (NNS = 0; *e && NNS < NNS_MAX; e = *end ? end + 1 : end) {
		unsigned long v = strtoul(e, &end, 10);

		if (end == e || v < 2)
			bench_die("bad ORDLOCK_BENCH_RINGS");
		ns_[NNS++] = v;
	}
}

/* --- ordlock ring ------------------------------------------------------- */

struct waiter {
	pthread_t thread;
	pid_t tid;
	int fd;
	unsigned int next;	/* the key it waits for */
	int result;
};

static struct ordlock_key ex_key(uint64_t id)
{
	return (struct ordlock_key){ .id = id, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ordlock_key k = ex_key(w->next);

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	w->result = ol_acquire(w->fd, &k, 1, LONG_NS, 0, NULL);
	ol_release_all(w->fd);
	return NULL;
}

/*
 * A ring of @n owners; the first @skip closing requests go to @first (if
 * not NULL), the next @nsamples to @s. The kernel logs the first 10
 * deadlocks of every 5 s and no more, so skipping 10 leaves the log out.
 */
static void ordlock_ring(unsigned int n, unsigned int skip, struct samples *first,
			 unsigned int nsamples, struct samples *s)
{
	struct waiter *w = calloc(n, sizeof(*w));
	struct ordlock_failure f;
	struct ordlock_key k;
	pthread_attr_t attr;
	unsigned int i, bad = 0, len = 0;
	uint64_t t0, t1;
	int ret;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < n; i++) {
		w[i].fd = ol_open("bench-ring");
		w[i].next = (i + 1) % n;
		k = ex_key(i);
		if (ol_acquire(w[i].fd, &k, 1, 0, ORDLOCK_ACQUIRE_TRY, NULL))
			bench_die("ring: taking key %u: %s", i, strerror(errno));
	}
	for (i = 0; i + 1 < n; i++)
		if (pthread_create(&w[i].thread, &attr, waiter_main, &w[i]))
			bench_die("pthread_create: %s", strerror(errno));
	for (i = 0; i + 1 < n; i++) {
		while (!__atomic_load_n(&w[i].tid, __ATOMIC_SEQ_CST))
			usleep(100);
		if (task_wait_state(w[i].tid, 30000))
			bench_die("ring of %u: waiter %u does not wait", n, i);
	}
	usleep(20000); /* let the last one get from "sleeping" to "in the graph" */

	k = ex_key(0);
	for (i = 0; i < skip + nsamples; i++) {
		t0 = now_ns();
		ret = ol_acquire(w[n - 1].fd, &k, 1, LONG_NS, 0, &f);
		t1 = now_ns();
		if (ret != -EDEADLK || f.reason != ORDLOCK_REASON_DEADLOCK ||
		    f.cycle_len != n) {
			bad++;
			len = f.cycle_len;
			if (!ret) /* granted?! give it back */
				ol_release_all(w[n - 1].fd);
			continue;
		}
		if (i >= skip)
			samples_add_timed(s, t0, t1);
		else if (first)
			samples_add_timed(first, t0, t1);
	}
	/* unwind: owner n-1 lets go of key n-1, then each waiter in turn */
	ol_release_all(w[n - 1].fd);
	for (i = n - 1; i-- > 0;) {
		pthread_join(w[i].thread, NULL);
		if (w[i].result)
			bad++;
	}
	for (i = 0; i < n; i++)
		close(w[i].fd);
	pthread_attr_destroy(&attr);
	free(w);
	if (bad)
		bench_die("ring of %u: %u closing requests did not fail with EDEADLK and the whole cycle (cycle_len %u)",
			  n, bad, len);
}

/* --- fcntl ring ------------------------------------------------------------ */

static volatile sig_atomic_t alarmed;

static void on_alarm(int sig)
{
	(void)sig;
	alarmed = 1;
}

static int setlk(int fd, int cmd, short type, off_t byte)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1 };

	return fcntl(fd, cmd, &fl) ? -errno : 0;
}

/*
 * A ring of n processes with POSIX locks on bytes of @path; adds to @s the
 * time of up to @nsamples closing requests, and sets *@missed (and stops)
 * when one was not refused within 300 ms.
 */
static void fcntl_ring(const char *path, unsigned int n, unsigned int nsamples,
		       struct samples *s, int *missed)
{
	pid_t *pids = calloc(n, sizeof(*pids));
	volatile uint64_t *held = shm_alloc(sizeof(uint64_t));
	struct sigaction sa = { .sa_handler = on_alarm };
	unsigned int i;
	uint64_t t0, t1;
	int fd, ret, st, go[2];
	char c;

	*missed = 0;
	/* the children block in read(go) until the parent closes it */
	if (pipe(go))
		bench_die("pipe: %s", strerror(errno));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		bench_die("open %s: %s", path, strerror(errno));
	if (setlk(fd, F_SETLK, F_WRLCK, n - 1))
		bench_die("fcntl ring: parent lock: %s", strerror(errno));
	for (i = 0; i + 1 < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			bench_die("fork: %s", strerror(errno));
		if (!pids[i]) {
			int cfd = open(path, O_RDWR | O_CLOEXEC);

			close(go[1]);
			if (cfd < 0 || setlk(cfd, F_SETLK, F_WRLCK, i))
				_exit(2);
			__atomic_fetch_add(held, 1, __ATOMIC_SEQ_CST);
			if (read(go[0], &c, 1) != 0) /* everyone holds its byte */
				_exit(4);
			if (setlk(cfd, F_SETLKW, F_WRLCK, i + 1))
				_exit(3);
			_exit(0);
		}
	}
	close(go[0]);
	while (__atomic_load_n(held, __ATOMIC_SEQ_CST) < n - 1)
		usleep(1000);
	close(go[1]);
	for (i = 0; i + 1 < n; i++)
		if (task_wait_state(pids[i], 60000))
			bench_die("fcntl ring of %u: child %u does not wait", n, i);
	usleep(20000);

	sigaction(SIGALRM, &sa, NULL);
	for (i = 0; i < nsamples; i++) {
		struct itimerval it = { .it_value = { .tv_usec = 300000 } };

		alarmed = 0;
		setitimer(ITIMER_REAL, &it, NULL);
		t0 = now_ns();
		ret = setlk(fd, F_SETLKW, F_WRLCK, 0);
		t1 = now_ns();
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		if (ret == -EDEADLK) {
			samples_add_timed(s, t0, t1);
		} else if (ret == -EINTR && alarmed) {
			*missed = 1;
			break;
		} else {
			bench_die("fcntl ring of %u: F_SETLKW returned %d", n, ret);
		}
	}
	signal(SIGALRM, SIG_DFL);
	/* unwind: release byte n-1; each child gets its byte and exits */
	close(fd);
	for (i = n - 1; i-- > 0;)
		if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bench_die("fcntl ring of %u: child %u failed", n, i);
	shm_free((void *)held, sizeof(uint64_t));
	free(pids);
}

/* --- one wake-up: the floor ------------------------------------------------ */

/*
 * A pipe write to a reader asleep in read(), both on CPU 0: the time until
 * the reader runs (a wake-up and a context switch, no cross-CPU kick).
 */
static void wakeup_floor(unsigned int nsamples, struct samples *s)
{
	struct shsamples *ss = shsamples_new(nsamples);
	int a[2], st;
	unsigned int i;
	uint64_t t;
	pid_t pid, reader;

	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (!pid) {
		bench_pin(0);
		if (pipe(a))
			_exit(1);
		reader = fork();
		if (reader < 0)
			_exit(1);
		if (!reader) {
			for (i = 0; i < nsamples; i++) {
				if (read(a[0], &t, sizeof(t)) != sizeof(t))
					_exit(1);
				shsamples_add(ss, now_ns() - t);
			}
			_exit(0);
		}
		for (i = 0; i < nsamples; i++) {
			if (task_wait_state(reader, 10000))
				_exit(1);
			t = now_ns();
			if (write(a[1], &t, sizeof(t)) != sizeof(t))
				_exit(1);
			usleep(1000);
		}
		_exit(waitpid(reader, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st));
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		bench_die("wake-up floor failed");
	shsamples_copy(s, ss);
	shsamples_free(ss);
}

/* --- the cost of the check on a wait --------------------------------------- */

static struct ordlock_key cost_key = { .id = 1, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };

static void op_wait(void *arg)
{
	if (ol_acquire(*(int *)arg, &cost_key, 1, 1, 0, NULL) != -ETIMEDOUT)
		bench_die("wait cost: the ACQUIRE did not time out");
}

/*
 * The three domains side by side, their operations interleaved in blocks
 * of 50; the key is held by a process of its own (a key held through
 * another descriptor by the waiting thread itself would be a deadlock).
 */
static void wait_costs(const char *const dom[3], unsigned int n, struct samples cost[3],
		       unsigned int rep)
{
	struct ol_holder h[3];
	struct bench_op ops[3];
	int fds[3], i, k;

	for (i = 0; i < 3; i++) {
		ol_holder_start(&h[i], dom[i], &cost_key, 1);
		fds[i] = ol_open(dom[i]);
		ops[i] = (struct bench_op){ .fn = op_wait, .arg = &fds[i], .s = &cost[i] };
		for (k = 0; k < 50; k++) /* warm up (the first wait allocates) */
			op_wait(&fds[i]);
	}
	bench_interleave(ops, 3, n, 50, rep);
	for (i = 0; i < 3; i++) {
		close(fds[i]);
		ol_holder_stop(&h[i]);
	}
}

int main(void)
{
	unsigned int reps = bench_reps(), r, i;
	struct samples ring[NNS_MAX], fring[NNS_MAX], wake, cost[3], logged;
	int fmissed[NNS_MAX] = { 0 }, fskipped[NNS_MAX] = { 0 };
	static const char *const cost_dom[3] = { "bench-enforce", "bench-detect", "bench-timeout" };
	static const char *const cost_name[3] = { "ordlock", "ordlock-detect", "ordlock-timeout" };
	static const unsigned int cost_pol[3] = { ORDLOCK_POLICY_ENFORCE, ORDLOCK_POLICY_DETECT,
						  ORDLOCK_POLICY_TIMEOUT };
	struct rlimit rl = { 65536, 65536 };
	char path[300], param[32];
	unsigned int fcntl_max = 100;
	const char *e = getenv("ORDLOCK_BENCH_FCNTL_MAX");

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_rings();
	if (e)
		fcntl_max = strtoul(e, NULL, 10);
	setrlimit(RLIMIT_NOFILE, &rl);
	snprintf(path, sizeof(path), "%s/ring", bench_tmpdir());
	ol_set_policy("bench-ring", ORDLOCK_POLICY_DETECT, 0);
	for (i = 0; i < 3; i++) {
		ol_set_policy(cost_dom[i], cost_pol[i], 0);
		samples_init(&cost[i], 1024);
	}
	for (i = 0; i < NNS; i++) {
		samples_init(&ring[i], 64);
		samples_init(&fring[i], 64);
	}
	samples_init(&wake, 256);
	samples_init(&logged, 16);

	/* first the cost of the kernel log report: after 5 s without one */
	sleep(5);
	usleep(300000);
	ordlock_ring(2, 10, &logged, 0, NULL);

	for (r = 0; r < reps; r++) {
		for (i = 0; i < NNS; i++) {
			unsigned int n = ns_[i];

			ordlock_ring(n, 10, NULL, bench_n(n >= 1000 ? 10 : 30, 3), &ring[i]);
			bench_log("rep %u: ordlock ring of %u done", r + 1, n);
			if (n > fcntl_max) {
				fskipped[i] = 1;
			} else if (!fmissed[i]) {
				fcntl_ring(path, n, bench_n(10, 2), &fring[i], &fmissed[i]);
				bench_log("rep %u: fcntl ring of %u done%s", r + 1, n,
					  fmissed[i] ? " (missed)" : "");
			}
		}
		wakeup_floor(bench_n(40, 5), &wake);
		wait_costs(cost_dom, bench_n(400, 50), cost, r);
		bench_log("rep %u/%u done", r + 1, reps);
	}
	unlink(path);

	for (i = 0; i < NNS; i++) {
		unsigned int n = ns_[i];

		snprintf(param, sizeof(param), "n=%u", n);
		bench_emit("5", "cycle closed -> EDEADLK", param, "ordlock", "ordlock",
			   "ns", &ring[i],
			   "detect domain; closing ACQUIRE -> EDEADLK; kernel log report excluded");
		if (n == 2)
			bench_emit("5", "cycle closed -> EDEADLK", param, "ordlock+log",
				   "ordlock", "ns", &logged,
				   "the same with the rate-limited kernel log report (10 per 5 s)");
		if (fskipped[i])
			bench_emit_missing("5", "cycle closed -> EDEADLK", param, "fcntl F_SETLKW",
					   "peer", "ns", "not run: F_SETLKW misses rings of more than 10 already");
		else if (fmissed[i])
			bench_emit_missing("5", "cycle closed -> EDEADLK", param, "fcntl F_SETLKW",
					   "peer", "ns", "MISSED: no EDEADLK within 300 ms (follows at most 10 waiters)");
		else
			bench_emit("5", "cycle closed -> EDEADLK", param, "fcntl F_SETLKW", "peer",
				   "ns", &fring[i], "POSIX record locks; ring of processes");
		bench_emit_value("5", "cycle closed -> EDEADLK", param, "postgresql", "ref", "ns",
				 1e9, "deadlock_timeout default (1 s) before PostgreSQL looks");
		bench_emit("5", "cycle closed -> EDEADLK", param, "one wake-up", "floor", "ns",
			   &wake, "pipe write -> blocked reader returns; 1 CPU");
	}
	for (i = 0; i < 3; i++)
		bench_emit("5", "blocking acquire that times out at once", "-", cost_name[i],
			   "ordlock", "ns", &cost[i],
			   i == 2 ? "timeout domain: no cycle check" :
			   "queue + cycle check (1 hop) + time out");
	return 0;
}
