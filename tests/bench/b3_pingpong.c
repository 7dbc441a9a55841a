// SPDX-License-Identifier: GPL-2.0
/*
 * b3_pingpong: row 3 of the benchmark table, two processes handing one key
 * back and forth. The same protocol for every lock: the holder waits until
 * the other process sleeps in its lock call (its state in /proc), writes
 * the time into shared memory and unlocks; the other's lock call returns
 * and the time since the unlock is one sample of the handoff latency; the
 * former holder waits until the other has the key, then asks for it again
 * and sleeps in turn. So every handoff is a contended one, and a lock that
 * lets the releaser take it again (flock) cannot skip handoffs.
 *
 * Both processes are pinned to one CPU ("1 CPU": a handoff includes a
 * context switch). With ORDLOCK_BENCH_CROSS=1 the run is repeated with
 * each on its own CPU ("2 CPUs": a wake-up on the other CPU, which under
 * TCG mostly measures how fast a busy host runs an idle vCPU again).
 *
 * The floor is a pipe ping-pong between the same two processes: the time
 * from write() to the blocked reader's return, i.e. one wake-up.
 *
 * The same ping-pong between two generic netlink sockets has a group of
 * its own, with row 3's lines as its peers: there the waiter sleeps in
 * recv() until the RESULT of its queued ACQUIRE, which a work item sends
 * after the release granted it.
 *
 * The same ordlock ping-pong in a detect and a timeout domain gives row 5's
 * "extra cost per blocking acquire in a detect domain": every handoff
 * there is a blocking acquire, which looks for a cycle before it sleeps
 * (enforce domains do the same; timeout domains do not look).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchlib.h"

#define MAX_SAMPLES 200000
#define LONG_NS (60ULL * 1000000000ULL)

struct shared {
	volatile uint64_t start;	/* both processes run while start == 1 */
	volatile uint64_t stop;
	volatile uint64_t ready;
	volatile uint64_t t_release;	/* written by the holder before unlocking */
	volatile uint64_t owner;	/* who took the key last: 1 or 2 */
	volatile uint64_t req[2];	/* process i is about to ask for the key */
	volatile pid_t pid[2];
	uint64_t acquisitions;
	uint64_t handoffs;
};

static struct shared *sh;
static struct shsamples *ss;
static const char *lockpath;
static int semid;

/* --- the lock implementations: one per process (each opens its own) --- */

struct lock {
	int fd;
	struct olnl nl;
	int (*lock)(struct lock *l);
	int (*unlock)(struct lock *l);
};

static struct ordlock_key key1 = { .id = 1, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };

static int ol_lock(struct lock *l)
{
	return ol_acquire(l->fd, &key1, 1, LONG_NS, 0, NULL);
}

static int ol_unlock(struct lock *l)
{
	return ol_release_all(l->fd);
}

/* the waiter sleeps in recv() until the RESULT of its queued ACQUIRE */
static int nl_lock(struct lock *l)
{
	return olnl_acquire(&l->nl);
}

static int nl_unlock(struct lock *l)
{
	return olnl_release_all(&l->nl);
}

static int fl_lock(struct lock *l)
{
	return flock(l->fd, LOCK_EX) ? -errno : 0;
}

static int fl_unlock(struct lock *l)
{
	return flock(l->fd, LOCK_UN) ? -errno : 0;
}

static int sem_lock(struct lock *l)
{
	struct sembuf p = { .sem_num = 0, .sem_op = -1 };

	(void)l;
	return semop(semid, &p, 1) ? -errno : 0;
}

static int sem_unlock(struct lock *l)
{
	struct sembuf v = { .sem_num = 0, .sem_op = 1 };

	(void)l;
	return semop(semid, &v, 1) ? -errno : 0;
}

enum kind { K_ORDLOCK, K_FLOCK, K_SEMOP, K_NETLINK };

static void lock_open(struct lock *l, enum kind kind, const char *domain)
{
	switch (kind) {
	case K_ORDLOCK:
		l->fd = ol_open(domain);
		l->lock = ol_lock;
		l->unlock = ol_unlock;
		break;
	case K_FLOCK:
		l->fd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (l->fd < 0)
			bench_die("open %s: %s", lockpath, strerror(errno));
		l->lock = fl_lock;
		l->unlock = fl_unlock;
		break;
	case K_SEMOP:
		l->fd = -1;
		l->lock = sem_lock;
		l->unlock = sem_unlock;
		break;
	case K_NETLINK:
		olnl_open(&l->nl, domain, 1, 1);
		l->fd = l->nl.fd;
		l->lock = nl_lock;
		l->unlock = nl_unlock;
		break;
	}
}

/* is task @pid asleep (in its lock call)? */
static int asleep(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = 0;
	p = strrchr(buf, ')');
	return p && p[1] && (p[2] == 'S' || p[2] == 'D');
}

static void lock_loop(struct lock *l, int me)
{
	uint64_t acq = 0, hand = 0, t;
	int other = !me, holding = 0;
	pid_t opid;

	sh->pid[me] = getpid();
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_SEQ_CST);
	spin_until(&sh->start, 1);
	opid = sh->pid[other];
	if (me == 0) {
		if (l->lock(l))
			bench_die("lock: %s", strerror(errno));
		sh->owner = 1;
		holding = 1;
	} else {
		/* the first request must find the key held, or it would race */
		while (!sh->stop && sh->owner != 1)
			sched_yield();
	}
	while (!sh->stop) {
		if (holding) {
			/* hand over only to a process that sleeps on the key */
			while (!sh->stop && !(sh->req[other] && asleep(opid)))
				sched_yield();
			sh->t_release = now_ns();
			if (l->unlock(l))
				bench_die("unlock: %s", strerror(errno));
			holding = 0;
			/* and do not take it back before it had it */
			while (!sh->stop && sh->owner != (uint64_t)other + 1)
				sched_yield();
			if (sh->stop)
				break;
		}
		sh->req[me] = 1;
		if (l->lock(l))
			bench_die("lock: %s", strerror(errno));
		t = now_ns();
		sh->req[me] = 0;
		if (sh->owner == (uint64_t)other + 1) {
			hand++;
			shsamples_add(ss, t - sh->t_release);
		}
		sh->owner = me + 1;
		holding = 1;
		acq++;
	}
	if (holding && l->unlock(l))
		bench_die("unlock: %s", strerror(errno));
	__atomic_fetch_add(&sh->acquisitions, acq, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&sh->handoffs, hand, __ATOMIC_SEQ_CST);
}

/* --- the pipe floor ------------------------------------------------------ */

static int pipes[2][2];

static void pipe_loop(int me)
{
	int in = pipes[me][0], out = pipes[!me][1];
	uint64_t t, hand = 0;

	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_SEQ_CST);
	spin_until(&sh->start, 1);
	if (me == 0) {
		t = now_ns();
		if (write(out, &t, sizeof(t)) != sizeof(t))
			bench_die("pipe write: %s", strerror(errno));
	}
	for (;;) {
		if (read(in, &t, sizeof(t)) != sizeof(t))
			bench_die("pipe read: %s", strerror(errno));
		if (t == 0) /* the other side stopped */
			break;
		shsamples_add(ss, now_ns() - t);
		hand++;
		t = sh->stop ? 0 : now_ns();
		if (write(out, &t, sizeof(t)) != sizeof(t))
			bench_die("pipe write: %s", strerror(errno));
		if (!t)
			break;
	}
	__atomic_fetch_add(&sh->handoffs, hand, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&sh->acquisitions, hand, __ATOMIC_SEQ_CST);
}

/* --- one run -------------------------------------------------------------- */

struct impl {
	const char *row;
	const char *measure;
	const char *name;
	const char *role;
	const char *note;
	int kind;		/* enum kind, or -1 for the pipe */
	const char *domain;
	struct samples s[2];
	uint64_t acquisitions[2], handoffs[2], ns[2];
};

#define M3 "two processes hand one key back and forth"
#define M5 "blocking handoff by policy"
#define MN "netlink: two sockets hand one key back and forth"

static struct impl impls[] = {
	{ .row = "3", .measure = M3, .name = "ordlock", .role = "ordlock",
	  .note = "release -> waiter's ACQUIRE returns", .kind = K_ORDLOCK },
	{ .row = "3", .measure = M3, .name = "flock", .role = "peer",
	  .note = "LOCK_UN -> waiter's LOCK_EX returns", .kind = K_FLOCK },
	{ .row = "3", .measure = M3, .name = "semop", .role = "peer",
	  .note = "V -> waiter's P returns", .kind = K_SEMOP },
	{ .row = "3", .measure = M3, .name = "pipe ping-pong", .role = "floor",
	  .note = "write -> blocked reader returns (one wake-up)", .kind = -1 },
	{ .row = "5", .measure = M5, .name = "ordlock-timeout", .role = "ordlock",
	  .note = "timeout domain: no cycle check", .kind = K_ORDLOCK,
	  .domain = "bench-timeout" },
	{ .row = "5", .measure = M5, .name = "ordlock-detect", .role = "ordlock",
	  .note = "detect domain: cycle check before every sleep", .kind = K_ORDLOCK,
	  .domain = "bench-detect" },
	{ .row = "5", .measure = M5, .name = "ordlock", .role = "ordlock",
	  .note = "enforce domain (also checks)", .kind = K_ORDLOCK },
	{ .row = "3", .measure = MN, .name = "ordlock-netlink", .role = "ordlock",
	  .note = "RELEASE -> the waiter's RESULT arrives (a work item sends it)",
	  .kind = K_NETLINK },
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

static void child(struct impl *im, int me, int cross)
{
	struct lock l;

	bench_pin(cross ? me : 0);
	if (im->kind < 0) {
		pipe_loop(me);
	} else {
		lock_open(&l, im->kind, im->domain);
		lock_loop(&l, me);
	}
	_exit(0);
}

static void run(struct impl *im, uint64_t dur_ns, int cross)
{
	pid_t pid[2];
	uint64_t t0;
	int i, st;

	memset((void *)sh, 0, sizeof(*sh));
	shsamples_reset(ss);
	if (im->kind < 0)
		for (i = 0; i < 2; i++)
			if (pipe(pipes[i]))
				bench_die("pipe: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			bench_die("fork: %s", strerror(errno));
		if (!pid[i])
			child(im, i, cross);
	}
	spin_until(&sh->ready, 2);
	t0 = now_ns();
	sh->start = 1;
	usleep(dur_ns / 1000);
	sh->stop = 1;
	for (i = 0; i < 2; i++) {
		if (waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bench_die("%s: a child failed", im->name);
	}
	im->ns[cross] += now_ns() - t0;
	if (im->kind < 0)
		for (i = 0; i < 2; i++) {
			close(pipes[i][0]);
			close(pipes[i][1]);
		}
	im->acquisitions[cross] += sh->acquisitions;
	im->handoffs[cross] += sh->handoffs;
	shsamples_copy(&im->s[cross], ss);
}

int main(void)
{
	const char *cross = getenv("ORDLOCK_BENCH_CROSS");
	unsigned int reps = bench_reps(), r, i, j, c;
	unsigned int ncross = cross && atoi(cross) && bench_ncpus() > 1 ? 2 : 1;
	uint64_t dur = bench_n(1000, 100) * 1000000ULL; /* ns per run */
	static const char *const cpus[2] = { "1 CPU", "2 CPUs" };
	char path[300], note[300];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (bench_ncpus() < 2)
		bench_log("note: only one CPU: the two processes share it");
	sh = shm_alloc(sizeof(*sh));
	ss = shsamples_new(MAX_SAMPLES);
	snprintf(path, sizeof(path), "%s/lock", bench_tmpdir());
	lockpath = path;
	semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	if (semid < 0 || semctl(semid, 0, SETVAL, 1))
		bench_die("semget: %s", strerror(errno));
	ol_set_policy("bench-detect", ORDLOCK_POLICY_DETECT, 0);
	ol_set_policy("bench-timeout", ORDLOCK_POLICY_TIMEOUT, 0);
	for (i = 0; i < NIMPLS; i++)
		for (c = 0; c < 2; c++)
			samples_init(&impls[i].s[c], 1024);
	bench_log("%u reps x %llu ms per implementation", reps,
		  (unsigned long long)(dur / 1000000));

	for (r = 0; r < reps; r++) {
		for (c = 0; c < ncross; c++)
			for (j = 0; j < NIMPLS; j++)
				run(&impls[(j + r) % NIMPLS], dur, c);
		bench_log("rep %u/%u done", r + 1, reps);
	}
	for (c = 0; c < ncross; c++)
		for (i = 0; i < NIMPLS; i++) {
			struct impl *im = &impls[i];
			double rate = im->ns[c] ? im->handoffs[c] * 1e9 / im->ns[c] : 0;
			double share = im->acquisitions[c] ?
				       100.0 * im->handoffs[c] / im->acquisitions[c] : 0;

			snprintf(note, sizeof(note),
				 "%s; %.0f handoffs/s; %.1f%% of %llu acquisitions were handoffs",
				 im->note, rate, share, (unsigned long long)im->acquisitions[c]);
			bench_emit(im->row, im->measure, cpus[c], im->name, im->role, "ns",
				   &im->s[c], note);
			/* row 3's lines are the netlink group's peers and floor */
			if (!strcmp(im->measure, M3))
				bench_emit(im->row, MN, cpus[c],
					   strcmp(im->name, "ordlock") ? im->name :
					   "ordlock-ioctl",
					   strcmp(im->role, "floor") ? "peer" : "floor",
					   "ns", &im->s[c], note);
		}
	unlink(path);
	semctl(semid, 0, IPC_RMID);
	return 0;
}
