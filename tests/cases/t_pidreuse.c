// SPDX-License-Identifier: GPL-2.0
/*
 * t_pidreuse: a thread id reused by another process invents no deadlock.
 *
 * An owner whose last request came from a thread that has exited (the
 * owner was handed on: inherited by fork, and its user exited) holds 1:1.
 * A new process that gets the same pid (on purpose, through
 * /proc/sys/kernel/ns_last_pid, and by natural wrap with a lowered
 * pid_max) then waits for 1:1 in the same enforce domain: it must wait,
 * and be granted when the holder releases, never fail with EDEADLK naming
 * a pid that never held the key.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE

struct shared {
	int ret;
	int err;
	unsigned int reason;
	int fail_pid;
	pid_t pid;
};

static struct shared *sh;

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* The new process with the reused pid: wait for 1:1 */
static int reuser_main(void *arg)
{
	const char *domain = arg;
	struct ordlock *ol = ordlock_open(domain);
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	int ret;

	sh->pid = getpid();
	if (!ol)
		return 1;
	ret = ordlock_acquire(ol, &k, 1, 20000, 0, NULL);
	sh->err = ret ? errno : 0;
	sh->ret = ret;
	sh->reason = ret ? ordlock_last_failure(ol)->reason : 0;
	sh->fail_pid = ret ? (int)ordlock_last_failure(ol)->pid : 0;
	ordlock_close(ol);
	return 0;
}

/* The first user of the owner: takes 1:1 through the inherited fd, exits */
static pid_t take_and_exit(struct ordlock *ol)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(ordlock_acquire(ol, &k, 1, 5000, 0, NULL) ? 1 : 0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		bail_out("the first user of the owner failed");
	return pid;
}

/* Check the reuser waits, then release and see it granted */
static void judge(struct ordlock *ol, pid_t reuser, pid_t old, const char *how)
{
	int blocked = wait_blocked_ioctl(reuser, ORDLOCK_IOC_ACQUIRE, 10000) == 0;

	ok(blocked, "%s: pid %d (the holder's last thread was %d) waits for 1:1", how,
	   (int)reuser, (int)old);
	ordlock_release_all(ol);
	is_int(child_wait(reuser, 30), 0, "%s: the reuser finished", how);
	if (!is_int(sh->ret, 0, "%s: granted once the holder released, no false deadlock", how))
		diag("errno %d reason %u failure pid %d", sh->err, sh->reason, sh->fail_pid);
}

static void test_ns_last_pid(void)
{
	const char *dom = olt_domain("pidreuse");
	struct ordlock *ol = olt_open(dom);
	pid_t old, pid = -1;
	int i;

	old = take_and_exit(ol);
	is_int(olt_nheld(ol), 1, "the owner holds 1:1, its last user %d has exited", (int)old);
	/* a kernel without CONFIG_CHECKPOINT_RESTORE (the debug kernel) */
	if (access("/proc/sys/kernel/ns_last_pid", W_OK)) {
		ok(1, "# SKIP no /proc/sys/kernel/ns_last_pid here: the wrap case below reuses a pid");
		ordlock_close(ol);
		return;
	}
	memset(sh, 0, sizeof(*sh));
	for (i = 0; i < 20; i++) {
		if (write_long("/proc/sys/kernel/ns_last_pid", old - 1)) {
			diag("ns_last_pid: %s", strerror(errno));
			break;
		}
		pid = child_start(reuser_main, (void *)dom);
		if (pid == old)
			break;
		/* someone else forked first: try again */
		kill(pid, SIGKILL);
		child_wait(pid, 10);
		ordlock_release_all(ol);
		old = take_and_exit(ol);
		pid = -1;
	}
	if (!ok(pid == old, "a new process got pid %d again (ns_last_pid)", (int)old)) {
		ordlock_close(ol);
		return;
	}
	judge(ol, pid, old, "ns_last_pid");
	ordlock_close(ol);
}

static void test_wrap(void)
{
	const char *dom = olt_domain("pidwrap");
	long pid_max = read_long("/proc/sys/kernel/pid_max");
	struct ordlock *ol = olt_open(dom);
	unsigned int forks = 0;
	pid_t old, pid = -1;

	if (write_long("/proc/sys/kernel/pid_max", 2048)) {
		ok(0, "lower pid_max to 2048: %s", strerror(errno));
		ordlock_close(ol);
		return;
	}
	/*
	 * Wrapping pids restart at 300 (RESERVED_PIDS): the holder's last
	 * thread needs a pid above that to come round again
	 */
	do {
		fflush(NULL);
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	} while (pid > 0 && pid <= 300 && ++forks < 5000);
	old = take_and_exit(ol);
	memset(sh, 0, sizeof(*sh));
	/* fork until the pid comes round again; the misses exit at once */
	while (forks < 20000) {
		fflush(NULL);
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0)
			break;
		forks++;
		waitpid(pid, NULL, 0);
		if (pid == old - 1)
			break;
	}
	pid = child_start(reuser_main, (void *)dom);
	write_long("/proc/sys/kernel/pid_max", pid_max);
	if (!ok(pid == old, "natural wrap: after %u forks a new process got pid %d (%d)", forks,
		(int)old, (int)pid)) {
		kill(pid, SIGKILL);
		child_wait(pid, 10);
		ordlock_close(ol);
		return;
	}
	judge(ol, pid, old, "wrap");
	ordlock_close(ol);
}

int main(void)
{
	watchdog_start(180);
	sh = shm_alloc(sizeof(*sh));
	test_ns_last_pid();
	test_wrap();
	return tap_done();
}
