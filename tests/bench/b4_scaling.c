// SPDX-License-Identifier: GPL-2.0
/*
 * b4_scaling: row 4 of the benchmark table, 1..N processes acquiring and
 * releasing disjoint keys (each its own key, file or semaphore set) as fast
 * as they can for a fixed time. Each process times batches of 32
 * operations; the samples are the per-operation time of each batch. The
 * total rate is the median over the runs (10 runs of 250 ms per
 * implementation and N by default, interleaved); the note gives the
 * speedup over one process.
 *
 * The floor of N processes is N times the one-process rate, but no more
 * than the CPUs can run: min(N, CPUs) x the one-process rate.
 *
 * "ordlock, one domain each" puts every process in its own domain: the
 * difference to "ordlock" is what the processes share through their
 * domain (its token counter and gauges).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchlib.h"

#define BATCH 32
#define MAXP 8

static const unsigned int nprocs[] = { 1, 2, 4 };
#define NN (sizeof(nprocs) / sizeof(nprocs[0]))

struct shared {
	volatile uint64_t ready;
	volatile uint64_t start;
	volatile uint64_t stop;
	uint64_t ops;
};

static struct shared *sh;
static struct shsamples *ss;
static const char *dir;

enum kind { K_ORDLOCK, K_ORDLOCK_DOM, K_FLOCK, K_SEMOP };

struct impl {
	const char *name;
	const char *role;
	const char *note;
	enum kind kind;
	struct samples s[NN];
	struct samples rates[NN];	/* ops/s of each run */
};

static struct impl impls[] = {
	{ .name = "ordlock", .role = "ordlock", .kind = K_ORDLOCK,
	  .note = "one domain; key (1; i) per process" },
	{ .name = "ordlock-own-domain", .role = "ordlock", .kind = K_ORDLOCK_DOM,
	  .note = "one domain per process" },
	{ .name = "flock", .role = "peer", .kind = K_FLOCK,
	  .note = "one file per process" },
	{ .name = "semop", .role = "peer", .kind = K_SEMOP,
	  .note = "one semaphore set per process" },
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

static void worker(struct impl *im, unsigned int i)
{
	struct ordlock_key key = { .id = i + 1, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };
	struct sembuf p = { .sem_op = -1 }, v = { .sem_op = 1 };
	char path[300], domain[32];
	uint64_t ops = 0, t0, t1;
	int fd = -1, semid = -1, b;

	switch (im->kind) {
	case K_ORDLOCK:
		fd = ol_open(NULL);
		break;
	case K_ORDLOCK_DOM:
		snprintf(domain, sizeof(domain), "bench-scale-%u", i);
		fd = ol_open(domain);
		break;
	case K_FLOCK:
		snprintf(path, sizeof(path), "%s/f%u", dir, i);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			bench_die("open %s: %s", path, strerror(errno));
		break;
	case K_SEMOP:
		semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
		if (semid < 0 || semctl(semid, 0, SETVAL, 1))
			bench_die("semget: %s", strerror(errno));
		break;
	}
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_SEQ_CST);
	spin_until(&sh->start, 1);
	while (!sh->stop) {
		t0 = now_ns();
		for (b = 0; b < BATCH; b++) {
			int err = 0;

			switch (im->kind) {
			case K_ORDLOCK:
			case K_ORDLOCK_DOM:
				err = ol_acquire(fd, &key, 1, 0, 0, NULL) || ol_release_all(fd);
				break;
			case K_FLOCK:
				err = flock(fd, LOCK_EX) || flock(fd, LOCK_UN);
				break;
			case K_SEMOP:
				err = semop(semid, &p, 1) || semop(semid, &v, 1);
				break;
			}
			if (err)
				bench_die("%s: %s", im->name, strerror(errno));
		}
		t1 = now_ns();
		shsamples_add(ss, (t1 - t0) / BATCH);
		ops += BATCH;
	}
	__atomic_fetch_add(&sh->ops, ops, __ATOMIC_SEQ_CST);
	if (semid >= 0)
		semctl(semid, 0, IPC_RMID);
	_exit(0);
}

static void run(struct impl *im, unsigned int ni, uint64_t dur_ns)
{
	unsigned int n = nprocs[ni], i;
	pid_t pid[MAXP];
	uint64_t t0, t1;
	int st;

	memset((void *)sh, 0, sizeof(*sh));
	shsamples_reset(ss);
	for (i = 0; i < n; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			bench_die("fork: %s", strerror(errno));
		if (!pid[i])
			worker(im, i);
	}
	spin_until(&sh->ready, n);
	t0 = now_ns();
	sh->start = 1;
	usleep(dur_ns / 1000);
	sh->stop = 1;
	for (i = 0; i < n; i++)
		if (waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bench_die("%s: a worker failed", im->name);
	t1 = now_ns();
	samples_add(&im->rates[ni], (uint64_t)(sh->ops * 1e9 / (t1 - t0)));
	shsamples_copy(&im->s[ni], ss);
}

int main(void)
{
	unsigned int reps = 2 * bench_reps(), r, i, j, ni, cpus = bench_ncpus();
	uint64_t dur = bench_n(250, 50) * 1000000ULL;
	char param[32], note[400];

	setvbuf(stdout, NULL, _IOLBF, 0);
	sh = shm_alloc(sizeof(*sh));
	ss = shsamples_new(1 << 20);
	dir = bench_tmpdir();
	for (i = 0; i < NIMPLS; i++)
		for (ni = 0; ni < NN; ni++) {
			samples_init(&impls[i].s[ni], 4096);
			samples_init(&impls[i].rates[ni], 16);
		}
	bench_log("%u CPUs; %u reps x %llu ms per implementation and N", cpus, reps,
		  (unsigned long long)(dur / 1000000));
	for (r = 0; r < reps; r++) {
		for (ni = 0; ni < NN; ni++)
			for (j = 0; j < NIMPLS; j++)
				run(&impls[(j + r) % NIMPLS], ni, dur);
		bench_log("rep %u/%u done", r + 1, reps);
	}
	for (ni = 0; ni < NN; ni++) {
		unsigned int n = nprocs[ni], par = n < cpus ? n : cpus;

		snprintf(param, sizeof(param), "N=%u", n);
		for (i = 0; i < NIMPLS; i++) {
			struct impl *im = &impls[i];
			double rate = samples_pct(&im->rates[ni], 50);
			double rate1 = samples_pct(&im->rates[0], 50);

			snprintf(note, sizeof(note),
				 "%s; %.0f ops/s in total; speedup %.2f over 1 process (ideal %u)",
				 im->note, rate, rate / rate1, par);
			bench_emit("4", "disjoint keys: time per op per process", param,
				   im->name, im->role, "ns", &im->s[ni], note);
			bench_emit_value("4", "disjoint keys: total rate", param, im->name,
					 im->role, "ops/s", rate, im->note);
		}
		/* the floor: perfect scaling of ordlock's one-process rate */
		snprintf(note, sizeof(note), "min(N; %u CPUs) x ordlock's 1-process rate", cpus);
		bench_emit_value("4", "disjoint keys: total rate", param, "ideal",
				 "floor", "ops/s", samples_pct(&impls[0].rates[0], 50) * par, note);
	}
	return 0;
}
