// SPDX-License-Identifier: GPL-2.0
/*
 * t_exec_sigrace: "ordlockctl exec" passes SIGTERM and SIGHUP on to its
 * command, even one that reaches ordlockctl between fork() and the moment
 * it knows its child's pid. Before, the handler found no child there and
 * the signal was lost: ordlockctl then waited for a command that went on
 * running (a service manager's stop would hang until its own SIGKILL).
 *
 * The bad interleaving happens every run: an LD_PRELOAD wrapper of fork()
 * (compiled here, with the host's cc the guest shares) sends the signal
 * to ordlockctl as soon as fork() returns in the parent. The command is
 * "sleep 20": killed by the passed-on signal, ordlockctl exits 128 + N at
 * once; lost, the sleep would end by itself and ordlockctl exit 0. First,
 * without the wrapper's signal, the command runs under the wrapper with
 * its status passed on.
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
static char so[128];

static const char wrapper[] =
	"#define _GNU_SOURCE\n"
	"#include <dlfcn.h>\n"
	"#include <signal.h>\n"
	"#include <stdlib.h>\n"
	"#include <unistd.h>\n"
	"pid_t fork(void)\n"
	"{\n"
	"	pid_t (*real)(void) = (pid_t (*)(void))dlsym(RTLD_NEXT, \"fork\");\n"
	"	const char *sig = getenv(\"T_SIGRACE_SIG\");\n"
	"	pid_t pid = real();\n"
	"\n"
	"	if (pid > 0 && sig)\n"
	"		kill(getpid(), atoi(sig));\n"
	"	return pid;\n"
	"}\n";

/* Build the fork() wrapper; 0, or -1 when there is no compiler */
static int build_wrapper(void)
{
	char src[128], cmd[512];
	FILE *f;

	snprintf(src, sizeof(src), "/tmp/t_exec_sigrace-%d.c", (int)getpid());
	snprintf(so, sizeof(so), "/tmp/t_exec_sigrace-%d.so", (int)getpid());
	f = fopen(src, "w");
	if (!f || fputs(wrapper, f) < 0 || fclose(f))
		bail_out("writing %s: %s", src, strerror(errno));
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -o %s %s -ldl", so, src);
	if (system(cmd)) {
		unlink(src);
		return -1;
	}
	unlink(src);
	return 0;
}

/* ordlockctl exec -x 1:1 in domain @d, the wrapper sending @sig (0: none) */
static int run_exec(const char *d, int sig, const char *command)
{
	char cmd[1024];
	int status;

	if (sig)
		snprintf(cmd, sizeof(cmd), "T_SIGRACE_SIG=%d LD_PRELOAD=%s %s exec -d %s -x 1:1 -- %s",
			 sig, so, ctl, d, command);
	else
		snprintf(cmd, sizeof(cmd), "LD_PRELOAD=%s %s exec -d %s -x 1:1 -- %s",
			 so, ctl, d, command);
	fflush(NULL);
	status = system(cmd);
	if (status == -1 || !WIFEXITED(status))
		return -1;
	/* sh -c passes ordlockctl's status on: 128 + N for a command killed */
	return WEXITSTATUS(status);
}

static void test_signal(const char *name, int sig)
{
	const char *d = olt_domain("exec-sigrace");
	struct ordlock *ol;
	int st;

	st = run_exec(d, sig, "sleep 20");
	ok(st == 128 + sig, "a %s that reaches ordlockctl right after fork() is passed on: "
	   "the command ends, exit %d (got %d)", name, 128 + sig, st);
	ol = ordlock_open(d);
	if (!ol)
		bail_out("ordlock_open: %s", strerror(errno));
	ok(ordlock_try_acquire(ol, (struct ordlock_key[]){ ordlock_key(1, 1, ORDLOCK_MODE_EXCLUSIVE) },
			       1, NULL) == 0,
	   "after it, the key is free");
	ordlock_close(ol);
}

int main(void)
{
	int st;

	watchdog_start(120);
	snprintf(ctl, sizeof(ctl), "%s", olt_ctl_path());
	if (build_wrapper())
		bail_out("cannot build the fork() wrapper (no cc in the guest?)");
	st = run_exec(olt_domain("exec-sigrace"), 0, "sh -c 'exit 7'");
	ok(st == 7, "without the signal, under the wrapper: the command's status, 7 (got %d)", st);
	test_signal("SIGTERM", SIGTERM);
	test_signal("SIGHUP", SIGHUP);
	unlink(so);
	return tap_done();
}
