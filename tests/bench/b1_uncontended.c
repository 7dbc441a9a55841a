// SPDX-License-Identifier: GPL-2.0
/*
 * b1_uncontended: row 1 of the benchmark table, uncontended acquire +
 * release of one key, against flock, OFD locks and SysV semaphores, with
 * two null system calls as the floor. Also row 5's "no cost on acquires
 * that do not wait": the same operation in enforce, detect and timeout
 * domains.
 *
 * The same acquire + release over generic netlink (two request/reply round
 * trips on a raw socket) gets a measurement of its own, with the ioctl and
 * the peers of row 1 as its peers (the same samples) and two round trips of
 * an unknown command as its floor.
 *
 * Every operation (acquire + release) is timed on its own; the
 * implementations take turns in blocks of 100 operations.
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

static int ol_fd, ol_detect_fd, ol_timeout_fd, lock_fd, semid;
static struct olnl nl;
static struct ordlock_key key1 = { .id = 1, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };

static void op_getppid(void *arg)
{
	(void)arg;
	getppid();
	getppid();
}

static void op_badioctl(void *arg)
{
	(void)arg;
	ol_bad_ioctl(ol_fd);
	ol_bad_ioctl(ol_fd);
}

static void ordlock_op(int fd)
{
	if (ol_acquire(fd, &key1, 1, 0, 0, NULL) || ol_release_all(fd))
		bench_die("ordlock acquire/release: %s", strerror(errno));
}

static void op_ordlock(void *arg)
{
	(void)arg;
	ordlock_op(ol_fd);
}

static void op_ordlock_detect(void *arg)
{
	(void)arg;
	ordlock_op(ol_detect_fd);
}

static void op_ordlock_timeout(void *arg)
{
	(void)arg;
	ordlock_op(ol_timeout_fd);
}

static void op_netlink(void *arg)
{
	int ret;

	(void)arg;
	ret = olnl_acquire(&nl);
	if (!ret)
		ret = olnl_release_all(&nl);
	if (ret)
		bench_die("netlink acquire/release: %s", strerror(-ret));
}

static void op_nlnull(void *arg)
{
	int ret;

	(void)arg;
	ret = olnl_null(&nl);
	if (!ret)
		ret = olnl_null(&nl);
	if (ret)
		bench_die("netlink null request: %s", strerror(-ret));
}

static void op_flock(void *arg)
{
	(void)arg;
	if (flock(lock_fd, LOCK_EX) || flock(lock_fd, LOCK_UN))
		bench_die("flock: %s", strerror(errno));
}

static void op_ofd(void *arg)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1 };

	(void)arg;
	if (fcntl(lock_fd, F_OFD_SETLK, &fl))
		bench_die("F_OFD_SETLK: %s", strerror(errno));
	fl.l_type = F_UNLCK;
	if (fcntl(lock_fd, F_OFD_SETLK, &fl))
		bench_die("F_OFD_SETLK unlock: %s", strerror(errno));
}

static void sem_pv(short flg)
{
	struct sembuf p = { .sem_num = 0, .sem_op = -1, .sem_flg = flg };
	struct sembuf v = { .sem_num = 0, .sem_op = 1, .sem_flg = flg };

	if (semop(semid, &p, 1) || semop(semid, &v, 1))
		bench_die("semop: %s", strerror(errno));
}

static void op_semop(void *arg)
{
	(void)arg;
	sem_pv(0);
}

static void op_semop_undo(void *arg)
{
	(void)arg;
	sem_pv(SEM_UNDO);
}

struct impl {
	const char *row;
	const char *measure;
	const char *name;
	const char *role;
	const char *note;
	void (*op)(void *arg);
	struct samples s;
};

#define IMPL(r, m, n, ro, no, fn) \
	{ .row = r, .measure = m, .name = n, .role = ro, .note = no, .op = fn }
#define M1 "uncontended acquire+release 1 key"
#define M5 "no-wait acquire+release by policy"
#define MN "netlink acquire+release 1 key"

static struct impl impls[] = {
	IMPL("1", M1, "ordlock", "ordlock", "ioctl ACQUIRE + RELEASE_ALL", op_ordlock),
	IMPL("1", M1, "flock", "peer", "LOCK_EX + LOCK_UN", op_flock),
	IMPL("1", M1, "ofd", "peer", "F_OFD_SETLK wrlck + unlck", op_ofd),
	IMPL("1", M1, "semop", "peer", "P + V; no SEM_UNDO", op_semop),
	IMPL("1", M1, "semop-undo", "peer", "P + V with SEM_UNDO (released at exit like ordlock)", op_semop_undo),
	IMPL("1", M1, "2x getppid", "floor", "two null system calls", op_getppid),
	IMPL("1", M1, "2x bad ioctl", "floor", "two unknown ioctls on /dev/ordlock (ENOTTY)", op_badioctl),
	IMPL("5", M5, "ordlock", "ordlock", "enforce domain (the default)", op_ordlock),
	IMPL("5", M5, "ordlock-detect", "ordlock", "detect domain", op_ordlock_detect),
	IMPL("5", M5, "ordlock-timeout", "ordlock", "timeout domain", op_ordlock_timeout),
	IMPL("1", MN, "ordlock-netlink", "ordlock",
	     "ACQUIRE + RELEASE (ALL) on a raw generic netlink socket: 2 round trips", op_netlink),
	IMPL("1", MN, "2x netlink null", "floor",
	     "2 round trips of an unknown command (EOPNOTSUPP)", op_nlnull),
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

int main(void)
{
	unsigned int reps = bench_reps(), r, i;
	unsigned long n = bench_n(3000, 200), k;
	struct bench_op ops[NIMPLS];
	char path[300];

	setvbuf(stdout, NULL, _IOLBF, 0);
	bench_log("clock overhead %llu ns; %u reps x %lu ops",
		  (unsigned long long)bench_clock_overhead(), reps, n);

	ol_fd = ol_open(NULL);
	ol_set_policy("bench-detect", ORDLOCK_POLICY_DETECT, 0);
	ol_set_policy("bench-timeout", ORDLOCK_POLICY_TIMEOUT, 0);
	olnl_open(&nl, NULL, 1, 2);
	ol_detect_fd = ol_open("bench-detect");
	ol_timeout_fd = ol_open("bench-timeout");
	snprintf(path, sizeof(path), "%s/lock", bench_tmpdir());
	lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0)
		bench_die("open %s: %s", path, strerror(errno));
	semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	if (semid < 0)
		bench_die("semget: %s", strerror(errno));
	if (semctl(semid, 0, SETVAL, 1))
		bench_die("semctl SETVAL: %s", strerror(errno));

	for (i = 0; i < NIMPLS; i++) {
		samples_init(&impls[i].s, n * reps);
		ops[i] = (struct bench_op){ .fn = impls[i].op, .s = &impls[i].s };
		for (k = 0; k < 200; k++) /* warm up */
			impls[i].op(NULL);
	}
	for (r = 0; r < reps; r++) {
		bench_interleave(ops, NIMPLS, n, 100, r);
		bench_log("rep %u/%u done", r + 1, reps);
	}
	for (i = 0; i < NIMPLS; i++) {
		bench_emit(impls[i].row, impls[i].measure, "-", impls[i].name,
			   impls[i].role, "ns", &impls[i].s, impls[i].note);
		/* row 1's peers (and the ioctl) are the netlink group's peers */
		if (!strcmp(impls[i].measure, M1) && strcmp(impls[i].role, "floor"))
			bench_emit("1", MN, "-",
				   strcmp(impls[i].name, "ordlock") ? impls[i].name :
				   "ordlock-ioctl", "peer", "ns", &impls[i].s,
				   impls[i].note);
	}
	semctl(semid, 0, IPC_RMID);
	unlink(path);
	return 0;
}
