// SPDX-License-Identifier: GPL-2.0
/*
 * t_hostile_exec: "ordlockctl exec" against what util-linux's flock(1)
 * does and its tests check.
 *  - signals: SIGTERM and SIGHUP sent to ordlockctl reach the command
 *    (its handler runs, its exit status is exec's); SIGINT sent to
 *    ordlockctl alone is ignored (the command goes on, the key stays
 *    held); SIGTERM while the child still waits for the keys ends the
 *    wait (143) and leaves no waiter behind; SIGTERM that comes while
 *    ordlockctl is inside fork() (ptrace stops it at the fork event) is
 *    not lost: it reaches the child or the command;
 *  - flock's "--no-fork and --close are incompatible": -F -o is a usage
 *    error (64), not a -o silently ignored;
 *  - -w longer than an unsigned int of milliseconds (49.7 days) is a
 *    number of seconds like the others, as in flock(1), not a usage error;
 *  - a bad option or argument: usage error 64 naming it, with the hint;
 *  - standard input and output pass through to the command; its exit
 *    status (255 too) is exec's; -E 0; a command that cannot be run (a
 *    directory, a file without x) gives 126 with a message.
 * Another owner's try-lock (olt_probe) is the judge of what is held.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define RUN_TIMEOUT_MS	60000

static char ctl[PATH_MAX];
static char dir[PATH_MAX];
static char out[8192], err[8192];

static void slurp(const char *path, char *buf, size_t len)
{
	if (read_small_file(path, buf, len) < 0)
		buf[0] = '\0';
	unlink(path);
}

/* Start "sh -c CMD" ($C: ordlockctl, $T: a scratch directory); its pid */
static pid_t start(const char *cmd)
{
	const char *env[] = { "C", ctl, "T", dir, NULL };
	char o[PATH_MAX + 16], e[PATH_MAX + 16];

	snprintf(o, sizeof(o), "%s/out", dir);
	snprintf(e, sizeof(e), "%s/err", dir);
	return sh_start(cmd, o, e, SH_DFL_SIGINT, env);
}

/* Reap @pid (at most RUN_TIMEOUT_MS, then SIGKILL); its status, 128+N, -1 */
static int finish(pid_t pid)
{
	char o[PATH_MAX + 16], e[PATH_MAX + 16];
	int ret = sh_reap(pid, RUN_TIMEOUT_MS, "the command");

	snprintf(o, sizeof(o), "%s/out", dir);
	snprintf(e, sizeof(e), "%s/err", dir);
	slurp(o, out, sizeof(out));
	slurp(e, err, sizeof(err));
	if (err[0])
		diag("stderr: %s", err);
	return ret;
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return finish(start(cmd));
}

/* Wait until file $T/@name exists (the command got that far); 0 or -1 */
static int wait_file(const char *name)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return wait_path(path);
}

static void touch(const char *name)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	touch_path(path);
}

static void rm(const char *name)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/*
 * A child of @pid, or 0: /proc/PID/stat's ppid field (a kernel without
 * CONFIG_PROC_CHILDREN, the debug one, has no .../task/PID/children)
 */
static pid_t child_of(pid_t pid)
{
	struct dirent *de;
	pid_t found = 0;
	DIR *proc = opendir("/proc");

	if (!proc)
		return 0;
	while (!found && (de = readdir(proc))) {
		char path[300], buf[512], *p;
		int ppid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if (read_small_file(path, buf, sizeof(buf)) <= 0)
			continue;
		/* pid (comm) state ppid: comm may hold spaces and ')' */
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == pid)
			found = (pid_t)atoi(de->d_name);
	}
	closedir(proc);
	return found;
}

/*
 * exec -x KEY -- sh -c '...': the command traps @sig (exit 42), says it is
 * ready, then waits for $T/go; ordlockctl is the process we signal.
 */
static void test_forward(int sig, const char *name)
{
	char cmd[1024];
	const char *d = olt_domain("hx-fwd");
	pid_t pid;
	int st;

	rm("ready");
	rm("go");
	snprintf(cmd, sizeof(cmd),
		 "exec $C exec -d %s -x 1:1 -- sh -c 'trap \"exit 42\" %s; touch $T/ready; "
		 "while [ ! -e $T/go ]; do sleep 0.05; done; exit 5'", d, name);
	pid = start(cmd);
	is_int(wait_file("ready"), 0, "%s: the command runs (its trap set)", name);
	is_int(olt_probe(d, 1, 1, EX), -EAGAIN, "%s: the key is held while it runs", name);
	is_int(kill(pid, sig), 0, "%s sent to ordlockctl", name);
	st = finish(pid);
	is_int(st, 42, "%s: passed on to the command, whose trap's status is exec's", name);
	is_int(olt_probe(d, 1, 1, EX), 0, "%s: the key is free after", name);
}

static void test_sigint_ignored(void)
{
	char cmd[1024];
	const char *d = olt_domain("hx-int");
	pid_t pid;

	rm("ready");
	rm("go");
	snprintf(cmd, sizeof(cmd),
		 "exec $C exec -d %s -x 1:1 -- sh -c 'touch $T/ready; "
		 "while [ ! -e $T/go ]; do sleep 0.05; done; exit 5'", d);
	pid = start(cmd);
	is_int(wait_file("ready"), 0, "SIGINT: the command runs");
	/* an ignored signal is discarded when sent: no race after kill() */
	is_int(kill(pid, SIGINT), 0, "SIGINT sent to ordlockctl alone");
	is_int(kill(pid, SIGQUIT), 0, "SIGQUIT sent to ordlockctl alone");
	ok(proc_state(pid) && proc_state(pid) != 'Z', "ordlockctl is still there");
	is_int(olt_probe(d, 1, 1, EX), -EAGAIN, "SIGINT, SIGQUIT: the key is still held");
	touch("go");
	is_int(finish(pid), 5, "the command ran to its end: its status 5");
	is_int(olt_probe(d, 1, 1, EX), 0, "the key is free after");
}

static void test_sigterm_waiting(void)
{
	struct ordlock_key hk = ORDLOCK_EX(1, 1);
	char cmd[1024], d[ORDLOCK_DOMAIN_NAME_MAX];
	struct olt_holder *h;
	pid_t pid, child = 0;
	uint64_t deadline;

	snprintf(d, sizeof(d), "%s", olt_domain("hx-wait"));
	h = olt_holder_start(d, &hk, 1);
	is_int(h->result, 0, "another owner holds 1:1");
	snprintf(cmd, sizeof(cmd), "exec $C exec -d %s -x 1:1 -- echo ran", d);
	pid = start(cmd);
	deadline = now_ms() + BLOCKED_TIMEOUT_MS;
	while (!child && now_ms() < deadline) {
		child = child_of(pid);
		usleep(2000);
	}
	ok(child > 0, "ordlockctl forked the child that takes the key (%d)", (int)child);
	is_int(child > 0 ? wait_blocked_ioctl(child, ORDLOCK_IOC_ACQUIRE, 0) : -1, 0,
	       "the child waits for 1:1");
	is_int(kill(pid, SIGTERM), 0, "SIGTERM sent to ordlockctl");
	is_int(finish(pid), 128 + SIGTERM, "exec ends with 143 (the waiting child got it)");
	ok(!strstr(out, "ran"), "the command never ran");
	ok(child > 0 && kill(child, 0) < 0 && errno == ESRCH, "the child is gone");
	is_int(olt_probe(d, 1, 1, EX), -EAGAIN, "1:1 is still the holder's alone");
	olt_holder_stop(h);
	is_int(olt_probe(d, 1, 1, EX), 0, "and free after it, no waiter left to take it");
}

/*
 * SIGTERM that reaches ordlockctl right after its fork(), before it knows
 * the child's pid: ptrace stops it at the fork event (the child exists,
 * fork() has not returned in ordlockctl), the signal is sent there, and
 * both are let go. It must still reach the command (or the child that
 * takes the keys): exec ends at once, not when the command ends.
 */
static void test_sigterm_at_fork(void)
{
	const char *d = olt_domain("hx-fork");
	char keyarg[] = "1:1";
	pid_t pid, child = 0;
	int st, ret, signalled = 0;
	uint64_t deadline;

	rm("ready");
	rm("go");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (!pid) {
		setenv("T", dir, 1);
		signal(SIGINT, SIG_DFL);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(125);
		raise(SIGSTOP);
		execl(ctl, "ordlockctl", "exec", "-d", d, "-x", keyarg, "--", "sh", "-c",
		      "trap 'exit 42' TERM; touch $T/ready; while [ ! -e $T/go ]; do sleep 0.05; done; exit 5",
		      (char *)NULL);
		_exit(126);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		ok(0, "at fork: the traced ordlockctl stops before it runs");
		return;
	}
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACEFORK | PTRACE_O_TRACEEXEC));
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	for (;;) {
		if (waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st))
			break;
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_FORK << 8))) {
			unsigned long msg = 0;

			ptrace(PTRACE_GETEVENTMSG, pid, NULL, &msg);
			child = (pid_t)msg;
			/* fork() happened; ordlockctl has not seen its result */
			signalled = !kill(pid, SIGTERM);
			ptrace(PTRACE_DETACH, pid, NULL, NULL);
			break;
		}
		/* the exec event, or a signal to pass on */
		ptrace(PTRACE_CONT, pid, NULL,
		       (void *)(long)(st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)) ? 0 : WSTOPSIG(st)));
	}
	ok(child > 0 && signalled, "at fork: SIGTERM sent to ordlockctl stopped in fork() (child %d)",
	   (int)child);
	if (child > 0) {
		/* the child starts traced (PTRACE_O_TRACEFORK), stopped: let it go */
		if (waitpid(child, &st, __WALL) == child && WIFSTOPPED(st))
			ptrace(PTRACE_DETACH, child, NULL,
			       (void *)(long)(WSTOPSIG(st) == SIGSTOP ? 0 : WSTOPSIG(st)));
	}
	/* a hang guard: the command waits for $T/go, which only comes late */
	deadline = now_ms() + 20000;
	while (waitpid(pid, &st, WNOHANG) == 0 && now_ms() < deadline)
		usleep(5000);
	ret = waitpid(pid, NULL, WNOHANG) < 0 && errno == ECHILD ? 1 : 0;
	if (!ret) {
		touch("go");
		waitpid(pid, &st, 0);
	}
	st = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
	ok(ret && (st == 128 + SIGTERM || st == 42),
	   "at fork: the SIGTERM was not lost: exec ended at once with %d (143, or 42 from the command's trap)",
	   st);
	is_int(olt_probe(d, 1, 1, EX), 0, "at fork: the key is free after");
}

static void test_options(void)
{
	const char *d = olt_domain("hx-opt");
	char path[PATH_MAX + 16];
	int fd;

	is_int(run("$C exec -F -o -d %s -x 1:1 -- true", d), 64,
	       "exec -F -o: usage error (64), as flock's --no-fork --close");
	ok(strstr(err, "-F") && strstr(err, "-o") != NULL, "the message names -F and -o");
	is_int(run("$C exec --no-fork --close -d %s -x 1:1 -- true", d), 64,
	       "exec --no-fork --close: the same");
	{
		static const struct {
			const char *args, *says;
		} bad[] = {
			{ "--bogus -x 1:1 -- true", "--bogus" },
			{ "-w nan -x 1:1 -- true", "nan" },
			{ "-w -1 -x 1:1 -- true", "-1" },
			{ "-w 1s -x 1:1 -- true", "1s" },
			{ "-E 256 -x 1:1 -- true", "256" },
			{ "-E x -x 1:1 -- true", "\"x\"" },
			{ "-x 1:1 -c true extra", "exclude" },
			{ "-x", "requires an argument" },
			{ "-x 1:99999999999999999999 -- true", "64 bits" },
			{ "-x 4294967296:1 -- true", "32 bits" },
		};
		unsigned int i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			int st = run("$C exec -d %s %s", d, bad[i].args);

			ok(st == 64 && strstr(err, bad[i].says) && strstr(err, "Try 'ordlockctl exec --help'"),
			   "exec %s: usage error 64 saying \"%s\" (%d)", bad[i].args, bad[i].says, st);
		}
	}
	is_int(run("$C exec -w 5000000 -d %s -x 1:1 -- true", d), 0,
	       "exec -w 5000000 (58 days, past 2^32 ms) on a free key: runs, as flock -w");
	is_int(run("$C exec -w 1e9 -d %s -x 1:1 -- true", d), 0, "exec -w 1e9: runs");
	is_int(run("printf 'abc\\n' | $C exec -d %s -x 1:1 -- cat", d), 0,
	       "stdin and stdout pass through: exit 0");
	ok(!strcmp(out, "abc\n"), "... the command read and wrote \"abc\" (\"%s\")", out);
	is_int(run("printf 'x\\n' | $C exec -d %s -x 1:1 -c 'read a; echo got$a'", d), 0,
	       "exec -c: stdin passes through");
	ok(!strcmp(out, "gotx\n"), "... \"gotx\" (\"%s\")", out);
	is_int(run("$C exec -d %s -x 1:1 -- sh -c 'exit 255'", d), 255,
	       "the command's status 255 is exec's");
	is_int(run("$C exec -d %s -x 1:1 -- /", d), 126, "a directory as the command: 126");
	ok(strstr(err, "cannot run /") != NULL, "... saying it cannot run it");
	snprintf(path, sizeof(path), "%s/noexec", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	is_int(run("$C exec -d %s -x 1:1 -- $T/noexec", d), 126,
	       "a file without execute permission: 126");
	{
		struct ordlock_key k = ORDLOCK_EX(1, 1);
		struct olt_holder *h = olt_holder_start(d, &k, 1);

		is_int(run("$C exec -n -E 0 -d %s -x 1:1 -- echo ran", d), 0,
		       "exec -n -E 0 beside a holder: 0");
		ok(!strstr(out, "ran"), "... and the command did not run");
		is_int(run("$C exec -n -E 3 -d %s -s 1:1 -- echo ran", d), 3,
		       "exec -n -E 3 -s beside an exclusive holder: 3");
		olt_holder_stop(h);
	}
}

int main(void)
{
	watchdog_start(300);
	snprintf(ctl, sizeof(ctl), "%s", olt_ctl_path());
	olt_scratch_dir(dir, sizeof(dir), "t_hostile_exec");
	signal(SIGPIPE, SIG_IGN);
	test_forward(SIGTERM, "TERM");
	test_forward(SIGHUP, "HUP");
	test_sigint_ignored();
	test_sigterm_waiting();
	test_sigterm_at_fork();
	test_options();
	rm("ready");
	rm("go");
	rm("noexec");
	rmdir(dir);
	return tap_done();
}
