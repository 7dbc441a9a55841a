// SPDX-License-Identifier: GPL-2.0
/*
 * b6_timeout: row 6 of the benchmark table.
 *
 * Timeout accuracy: how much later than asked a 10 ms timeout returns.
 * ordlock: an ACQUIRE of a key another owner holds, timeout 10 ms
 * (ETIMEDOUT); semtimedop on a semaphore at 0 (EAGAIN); clock_nanosleep
 * of 10 ms as what the timers of this machine do at best. The floor is the
 * task's timer slack (prctl PR_GET_TIMERSLACK): the kernel may delay any
 * timer by that much on purpose.
 *
 * Failed try-lock: ACQUIRE with ORDLOCK_ACQUIRE_TRY of a held key
 * (EAGAIN) against flock(LOCK_EX | LOCK_NB) of a file locked through
 * another open file description (EWOULDBLOCK) and semop with IPC_NOWAIT
 * (EAGAIN); the floor is one null system call (getppid).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"

#define TIMEOUT_NS 10000000ULL

static struct ol_holder holder;
static int ol_fd, semid, lock_fd, lock_fd2;
static struct ordlock_key key1 = { .id = 1, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };

/* --- overshoot ---------------------------------------------------------- */

static uint64_t ordlock_timed(void)
{
	uint64_t t0 = now_ns();

	if (ol_acquire(ol_fd, &key1, 1, TIMEOUT_NS, 0, NULL) != -ETIMEDOUT)
		bench_die("ordlock: the ACQUIRE did not time out");
	return now_ns() - t0;
}

static uint64_t semtimedop_timed(void)
{
	struct sembuf p = { .sem_num = 0, .sem_op = -1 };
	struct timespec ts = { 0, TIMEOUT_NS };
	uint64_t t0 = now_ns();

	if (semtimedop(semid, &p, 1, &ts) == 0 || errno != EAGAIN)
		bench_die("semtimedop did not time out");
	return now_ns() - t0;
}

static uint64_t nanosleep_timed(void)
{
	struct timespec ts = { 0, TIMEOUT_NS };
	uint64_t t0 = now_ns();

	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	return now_ns() - t0;
}

/* --- failed try-locks ---------------------------------------------------- */

static void try_ordlock(void *arg)
{
	(void)arg;
	if (ol_acquire(ol_fd, &key1, 1, 0, ORDLOCK_ACQUIRE_TRY, NULL) != -EAGAIN)
		bench_die("ordlock: the try-lock did not fail");
}

static void try_flock(void *arg)
{
	(void)arg;
	if (flock(lock_fd2, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
		bench_die("flock LOCK_NB did not fail");
}

static void try_semop(void *arg)
{
	struct sembuf p = { .sem_num = 0, .sem_op = -1, .sem_flg = IPC_NOWAIT };

	(void)arg;
	if (semop(semid, &p, 1) == 0 || errno != EAGAIN)
		bench_die("semop IPC_NOWAIT did not fail");
}

static void op_getppid(void *arg)
{
	(void)arg;
	getppid();
}

struct timed {
	const char *name, *role, *note;
	uint64_t (*op)(void);
	struct samples s;
};

struct op {
	const char *name, *role, *note;
	void (*op)(void *arg);
	struct samples s;
};

static struct timed timeds[] = {
	{ .name = "ordlock", .role = "ordlock", .note = "ACQUIRE of a held key; ETIMEDOUT", .op = ordlock_timed },
	{ .name = "semtimedop", .role = "peer", .note = "semaphore at 0; EAGAIN", .op = semtimedop_timed },
	{ .name = "clock_nanosleep", .role = "peer", .note = "what this machine's timers do at best", .op = nanosleep_timed },
};
#define NTIMED (sizeof(timeds) / sizeof(timeds[0]))

static struct op ops[] = {
	{ .name = "ordlock", .role = "ordlock", .note = "ACQUIRE_TRY of a held key; EAGAIN", .op = try_ordlock },
	{ .name = "flock LOCK_NB", .role = "peer", .note = "file locked by another open file description; EWOULDBLOCK", .op = try_flock },
	{ .name = "semop IPC_NOWAIT", .role = "peer", .note = "semaphore at 0; EAGAIN", .op = try_semop },
	{ .name = "getppid", .role = "floor", .note = "one null system call", .op = op_getppid },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

int main(void)
{
	unsigned int reps = bench_reps(), r, i, j;
	unsigned long nt = bench_n(20, 3), n = bench_n(3000, 200), k;
	struct bench_op bops[NOPS];
	char path[300], note[200];
	int slack;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ol_fd = ol_open(NULL);
	ol_holder_start(&holder, NULL, &key1, 1);
	semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	if (semid < 0) /* a new semaphore is 0 */
		bench_die("semget: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/lock", bench_tmpdir());
	lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	lock_fd2 = open(path, O_RDWR | O_CLOEXEC);
	if (lock_fd < 0 || lock_fd2 < 0 || flock(lock_fd, LOCK_EX))
		bench_die("%s: %s", path, strerror(errno));
	slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);

	for (i = 0; i < NTIMED; i++)
		samples_init(&timeds[i].s, nt * reps);
	for (i = 0; i < NOPS; i++) {
		samples_init(&ops[i].s, n * reps);
		bops[i] = (struct bench_op){ .fn = ops[i].op, .s = &ops[i].s };
		for (k = 0; k < 100; k++)
			ops[i].op(NULL);
	}
	bench_log("%u reps: %lu timeouts and %lu try-locks each; timer slack %d ns",
		  reps, nt, n, slack);
	for (r = 0; r < reps; r++) {
		for (k = 0; k < nt; k++)
			for (j = 0; j < NTIMED; j++) {
				struct timed *t = &timeds[(j + r + k) % NTIMED];
				uint64_t d = t->op();

				samples_add(&t->s, d > TIMEOUT_NS ? d - TIMEOUT_NS : 0);
			}
		bench_interleave(bops, NOPS, n, 100, r);
		bench_log("rep %u/%u done", r + 1, reps);
	}
	for (i = 0; i < NTIMED; i++)
		bench_emit("6", "overshoot of a 10 ms timeout", "-", timeds[i].name,
			   timeds[i].role, "ns", &timeds[i].s, timeds[i].note);
	snprintf(note, sizeof(note), "prctl(PR_GET_TIMERSLACK) of the task");
	bench_emit_value("6", "overshoot of a 10 ms timeout", "-", "timer slack", "floor",
			 "ns", slack, note);
	for (i = 0; i < NOPS; i++)
		bench_emit("6", "failed try-lock", "-", ops[i].name, ops[i].role, "ns",
			   &ops[i].s, ops[i].note);
	ol_holder_stop(&holder);
	unlink(path);
	semctl(semid, 0, IPC_RMID);
	return 0;
}
