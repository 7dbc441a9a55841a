// SPDX-License-Identifier: GPL-2.0
/*
 * b2_multikey: row 2 of the benchmark table, atomic acquire + release of
 * k = 1, 2, 4, 8, 16, 64 keys: one ordlock ACQUIRE of k keys and one
 * RELEASE_ALL, against semop with k operations (the only all-or-nothing
 * peer) and k flock calls on k files taken in sorted order. The floor is
 * one ioctl that copies and validates k keys and stops there: an ACQUIRE
 * whose last key has an invalid mode (EINVAL).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <unistd.h>

#include "benchlib.h"

#define KMAX 64

static const unsigned int ks[] = { 1, 2, 4, 8, 16, 64 };
#define NK (sizeof(ks) / sizeof(ks[0]))

static int ol_fd, semid, files[KMAX];
static struct ordlock_key keys[KMAX], badkeys[KMAX];
static struct sembuf sem_p[KMAX], sem_v[KMAX];

static void op_ordlock(void *arg)
{
	unsigned int k = (uintptr_t)arg;

	if (ol_acquire(ol_fd, keys, k, 0, 0, NULL) || ol_release_all(ol_fd))
		bench_die("ordlock %u keys: %s", k, strerror(errno));
}

static void op_semop(void *arg)
{
	unsigned int k = (uintptr_t)arg;

	if (semop(semid, sem_p, k) || semop(semid, sem_v, k))
		bench_die("semop %u: %s", k, strerror(errno));
}

static void op_flock(void *arg)
{
	unsigned int k = (uintptr_t)arg, i;

	for (i = 0; i < k; i++)
		if (flock(files[i], LOCK_EX))
			bench_die("flock: %s", strerror(errno));
	for (i = k; i-- > 0;)
		if (flock(files[i], LOCK_UN))
			bench_die("flock: %s", strerror(errno));
}

static void op_floor(void *arg)
{
	unsigned int k = (uintptr_t)arg;

	if (ol_acquire(ol_fd, badkeys, k, 0, 0, NULL) != -EINVAL)
		bench_die("the floor ioctl did not fail with EINVAL");
}

struct impl {
	const char *name;
	const char *role;
	const char *note;
	void (*op)(void *arg);
	struct samples s[NK];
};

static struct impl impls[] = {
	{ .name = "ordlock", .role = "ordlock", .note = "1 ACQUIRE of k keys + 1 RELEASE_ALL", .op = op_ordlock },
	{ .name = "semop", .role = "peer", .note = "semop of k ops (P) + semop of k ops (V)", .op = op_semop },
	{ .name = "flock", .role = "peer", .note = "k x LOCK_EX on k files in order + k x LOCK_UN", .op = op_flock },
	{ .name = "1 ioctl + copy k keys", .role = "floor", .note = "ACQUIRE copying and validating k keys; last key invalid", .op = op_floor },
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

int main(void)
{
	unsigned int reps = bench_reps(), r, i, j, ki;
	const char *dir;
	char path[300], param[32];
	unsigned long n[NK], m;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ol_fd = ol_open(NULL);
	semid = semget(IPC_PRIVATE, KMAX, IPC_CREAT | 0600);
	if (semid < 0)
		bench_die("semget: %s", strerror(errno));
	dir = bench_tmpdir();
	for (i = 0; i < KMAX; i++) {
		keys[i] = (struct ordlock_key){ .id = i + 1, .rank = 1,
						.mode = ORDLOCK_MODE_EXCLUSIVE };
		badkeys[i] = keys[i];
		sem_p[i] = (struct sembuf){ .sem_num = i, .sem_op = -1 };
		sem_v[i] = (struct sembuf){ .sem_num = i, .sem_op = 1 };
		if (semctl(semid, i, SETVAL, 1))
			bench_die("semctl: %s", strerror(errno));
		snprintf(path, sizeof(path), "%s/f%02u", dir, i);
		files[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (files[i] < 0)
			bench_die("open %s: %s", path, strerror(errno));
	}
	for (ki = 0; ki < NK; ki++) {
		n[ki] = bench_n(ks[ki] <= 4 ? 2000 : ks[ki] <= 16 ? 1000 : 400, 100);
		for (i = 0; i < NIMPLS; i++)
			samples_init(&impls[i].s[ki], n[ki] * reps);
	}
	bench_log("clock overhead %llu ns; %u reps", (unsigned long long)bench_clock_overhead(), reps);

	for (r = 0; r < reps; r++) {
		unsigned int kk;

		/* each repetition starts at another k: drift spreads over all */
		for (kk = 0; kk < NK; kk++) {
			unsigned int k;

			ki = (kk + r) % NK;
			k = ks[ki];
			struct bench_op ops[NIMPLS];

			/* the last key of the floor's request is invalid */
			for (i = 0; i < k; i++)
				badkeys[i].mode = i + 1 < k ? ORDLOCK_MODE_EXCLUSIVE : 7;
			for (j = 0; j < NIMPLS; j++) {
				ops[j] = (struct bench_op){ .fn = impls[j].op,
							    .arg = (void *)(uintptr_t)k,
							    .s = &impls[j].s[ki] };
				for (m = 0; m < 20; m++) /* warm up */
					impls[j].op(ops[j].arg);
			}
			bench_interleave(ops, NIMPLS, n[ki], k <= 4 ? 100 : 400 / k, r);
		}
		bench_log("rep %u/%u done", r + 1, reps);
	}
	for (ki = 0; ki < NK; ki++) {
		snprintf(param, sizeof(param), "k=%u", ks[ki]);
		for (i = 0; i < NIMPLS; i++)
			bench_emit("2", "atomic acquire+release of k keys", param,
				   impls[i].name, impls[i].role, "ns",
				   &impls[i].s[ki], impls[i].note);
	}
	for (i = 0; i < KMAX; i++) {
		snprintf(path, sizeof(path), "%s/f%02u", dir, i);
		unlink(path);
	}
	rmdir(dir);
	semctl(semid, 0, IPC_RMID);
	return 0;
}
