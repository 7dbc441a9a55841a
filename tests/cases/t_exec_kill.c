// SPDX-License-Identifier: GPL-2.0
/*
 * t_exec_kill: mutual exclusion from the shell survives the wrapper's
 * death, as flock(1)'s does.  "ordlockctl exec -x KEY -- COMMAND" whose
 * ordlockctl is killed with SIGKILL keeps KEY held while COMMAND runs; a
 * daemon the command leaves behind keeps it until the daemon exits; with
 * -o (flock's "close before exec") the keys live as long as ordlockctl
 * alone.  The window between fork and exec: the child takes the keys
 * there (named after the command), so a SIGKILL of ordlockctl while the
 * child still waits for them, kept there by a holder, leaves one waiter
 * that becomes the one holder: the command.  Another owner's try-lock is
 * the judge.
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

static char ctl[512];

/* Start "ordlockctl exec ARGS" in the background; its pid */
static pid_t start_exec(const char *args)
{
	char cmd[1024];
	pid_t pid;

	snprintf(cmd, sizeof(cmd), "exec %s exec %s", ctl, args);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The pid of the first process whose parent is @ppid and comm is @comm */
static pid_t child_of(pid_t ppid, const char *comm, unsigned int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	char line[256], name[32];

	while (now_ms() < end) {
		FILE *f = popen("ps -e -o pid=,ppid=,comm= 2>/dev/null", "r");
		long p, pp;

		if (f) {
			while (fgets(line, sizeof(line), f))
				if (sscanf(line, "%ld %ld %31s", &p, &pp, name) == 3 &&
				    pp == ppid && !strcmp(name, comm)) {
					pclose(f);
					return (pid_t)p;
				}
			pclose(f);
		}
		usleep(20000);
	}
	return -1;
}

/* A try-lock of @key in @domain by a new owner: 0 granted, -EAGAIN busy */
static int probe(const char *domain, uint32_t rank, uint64_t id)
{
	return olt_probe(domain, rank, id, ORDLOCK_MODE_EXCLUSIVE);
}

/* the key is taken (by the exec) within a few seconds */
static int wait_taken(const char *domain, uint32_t rank, uint64_t id)
{
	int i;

	for (i = 0; i < 250; i++) {
		if (probe(domain, rank, id) == -EAGAIN)
			return 1;
		usleep(20000);
	}
	return 0;
}

/*
 * "ordlockctl exec @opts -d @d -x 1:@id -- sleep 30": a point (@what) that
 * the key is taken; the pid of the sleep in *@cmd; ordlockctl's pid
 */
static pid_t exec_sleep(const char *opts, const char *d, unsigned int id,
			const char *what, pid_t *cmd)
{
	char args[256];
	pid_t ctlpid;

	snprintf(args, sizeof(args), "%s-d %s -x 1:%u -- sleep 30", opts, d, id);
	ctlpid = start_exec(args);
	ok(wait_taken(d, 1, id), "%s", what);
	*cmd = child_of(ctlpid, "sleep", 5000);
	return ctlpid;
}

static void test_kill_wrapper(void)
{
	const char *d = olt_domain("exec-kill");
	pid_t cmd, ctlpid = exec_sleep("", d, 6,
				       "ordlockctl exec -x 1:6 -- sleep 30: the key is taken", &cmd);

	ok(cmd > 0, "the command runs (pid %d)", (int)cmd);
	kill(ctlpid, SIGKILL);
	waitpid(ctlpid, NULL, 0);
	ok(kill(cmd, 0) == 0, "ordlockctl is killed with SIGKILL; the command still runs");
	is_errno(probe(d, 1, 6), EAGAIN,
		 "and another process still cannot take 1:6: one holder, not two");
	kill(cmd, SIGKILL);
	usleep(200000);
	is_int(probe(d, 1, 6), 0, "once the command is gone, 1:6 is free");
}

static void test_daemon(void)
{
	const char *d = olt_domain("exec-daemon");
	char args[256];
	pid_t ctlpid;
	int st, i, freed = 0;

	/* the command starts a "daemon" and exits at once */
	snprintf(args, sizeof(args),
		 "-d %s -x 1:7 -- sh -c 'sleep 3 </dev/null >/dev/null 2>&1 & exit 0'", d);
	ctlpid = start_exec(args);
	waitpid(ctlpid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec of a command that leaves a daemon: exit 0");
	is_errno(probe(d, 1, 7), EAGAIN,
		 "the daemon it left inherited the keys: 1:7 is still held");
	for (i = 0; i < 300 && !freed; i++) {
		freed = probe(d, 1, 7) == 0;
		if (!freed)
			usleep(50000);
	}
	ok(freed, "and free once the daemon exited");
}

static void test_close_opt(void)
{
	const char *d = olt_domain("exec-o");
	pid_t cmd, ctlpid = exec_sleep("-o ", d, 8, "exec -o -x 1:8: the key is taken", &cmd);

	kill(ctlpid, SIGKILL);
	waitpid(ctlpid, NULL, 0);
	usleep(200000);
	is_int(probe(d, 1, 8), 0,
	       "with -o the keys are ordlockctl's alone: free once it is killed");
	if (cmd > 0)
		kill(cmd, SIGKILL);
}

/*
 * SIGKILL to ordlockctl between fork and exec: a holder keeps the child
 * waiting for the key (it takes the keys before it becomes the command),
 * ordlockctl is killed then, the holder lets go: the child gets the key
 * and runs the command holding it, and only then is the key free again
 */
static void test_kill_before_exec(void)
{
	const char *d = olt_domain("exec-window");
	struct ordlock_key k = ORDLOCK_EX(1, 9);
	struct olt_holder *h;
	char args[256];
	pid_t ctlpid, child;
	int i, marked = 0;

	unlink("window.mark");
	h = olt_holder_start(d, &k, 1);
	ok(h && !h->result, "a holder takes 1:9");
	snprintf(args, sizeof(args),
		 "-d %s -x 1:9 -- sh -c 'touch window.mark; exec sleep 30'", d);
	ctlpid = start_exec(args);
	/* the child, named after the command before its request, waits */
	child = child_of(ctlpid, "sh", 5000);
	ok(child > 0, "the child waits for 1:9 before it becomes the command (pid %d)",
	   (int)child);
	usleep(200000);
	ok(access("window.mark", F_OK) != 0, "the command has not run: the key is not free");
	kill(ctlpid, SIGKILL);
	waitpid(ctlpid, NULL, 0);
	ok(child > 0 && kill(child, 0) == 0,
	   "ordlockctl killed with SIGKILL between fork and exec: the child lives on");
	if (h)
		olt_holder_stop(h);
	for (i = 0; i < 250 && !marked; i++) {
		marked = access("window.mark", F_OK) == 0;
		if (!marked)
			usleep(20000);
	}
	ok(marked, "the holder gone, the child takes 1:9 and runs the command");
	is_errno(probe(d, 1, 9), EAGAIN, "which holds 1:9: one holder, not none");
	if (child > 0)
		kill(child, SIGKILL);
	usleep(200000);
	is_int(probe(d, 1, 9), 0, "once the command is gone, 1:9 is free");
	unlink("window.mark");
}

int main(void)
{

	watchdog_start(120);
	snprintf(ctl, sizeof(ctl), "%s", olt_ctl_path());
	test_kill_wrapper();
	test_daemon();
	test_close_opt();
	test_kill_before_exec();
	return tap_done();
}
