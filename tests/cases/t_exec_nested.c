// SPDX-License-Identifier: GPL-2.0
/*
 * t_exec_nested: "ordlockctl exec" inside "ordlockctl exec", the way
 * flock(1) users write scripts (issue 27, defect 5). An exec whose command
 * runs another exec of the same domain passes its owner on (ORDLOCK_FD):
 * the inner exec acquires through it, so the order rule and the wait-for
 * graph see one owner per script.
 *  - enforce: "exec -x 1:2 -- exec -x 1:1" is refused with the order
 *    error; the right order works, one owner holds both keys, and the inner
 *    exec releases only its own keys when its command ends (the outer's
 *    stay held), everything goes with the outer;
 *  - two nested scripts crossing (A: 1:1 then 1:2, B: 1:2 then 1:1), put in
 *    lockstep by marker files: in a "detect" domain one inner exec is the
 *    deadlock victim (with the cycle) and the other script completes; in a
 *    "timeout" domain "ordlockctl cycles" sees the cycle while they wait,
 *    the owners view one owner per script, and the waits end by -w;
 *  - --new-owner opts out (an owner of its own, as before); another domain
 *    gets an owner of its own;
 *  - an ORDLOCK_FD that is not open, not /dev/ordlock, or not a number is
 *    refused with a message naming it (66), unless --new-owner.
 * Another owner's try-lock (olt_probe) and the debugfs views judge.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define RUN_TIMEOUT_MS	90000

static char ctl[PATH_MAX];
static char dir[PATH_MAX];
static char out[8192], err[8192];

/* sh's preamble of every script: w NAME waits (bounded) for $T/NAME */
#define W_FN "w() { i=0; while [ ! -e \"$T/$1\" ]; do sleep 0.01; i=$((i+1)); " \
	     "[ $i -gt 6000 ] && exit 99; done; return 0; }\n"

static void slurp(const char *path, char *buf, size_t len)
{
	if (read_small_file(path, buf, len) < 0)
		buf[0] = '\0';
	unlink(path);
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* Start "sh -c CMD" ($C ordlockctl, $T scratch, $D $E domains); out to $T/JOB.{out,err} */
static pid_t start(const char *job, const char *d, const char *e, const char *cmd)
{
	const char *env[] = {
		"ORDLOCK_FD", NULL, "C", ctl, "T", dir, "D", d ? d : "", "E", e ? e : "", NULL,
	};
	char o[PATH_MAX + 64], x[PATH_MAX + 64], name[64];

	snprintf(name, sizeof(name), "%s.out", job);
	path_of(o, sizeof(o), name);
	snprintf(name, sizeof(name), "%s.err", job);
	path_of(x, sizeof(x), name);
	return sh_start(cmd, o, x, SH_NULL_STDIN, env);
}

/* Reap @pid (hang guard RUN_TIMEOUT_MS, then SIGKILL): status, 128+N, -1; output in out/err */
static int finish(const char *job, pid_t pid)
{
	char o[PATH_MAX + 64], x[PATH_MAX + 64], name[64];
	int ret = sh_reap(pid, RUN_TIMEOUT_MS, job);

	snprintf(name, sizeof(name), "%s.out", job);
	path_of(o, sizeof(o), name);
	snprintf(name, sizeof(name), "%s.err", job);
	path_of(x, sizeof(x), name);
	slurp(o, out, sizeof(out));
	slurp(x, err, sizeof(err));
	if (err[0])
		diag("%s: stderr: %s", job, err);
	return ret;
}

static int run(const char *d, const char *e, const char *cmd)
{
	return finish("run", start("run", d, e, cmd));
}

/* Write script $T/@name: W_FN then @body */
static void script(const char *name, const char *body)
{
	char p[PATH_MAX + 64];
	FILE *f;

	path_of(p, sizeof(p), name);
	f = fopen(p, "w");
	if (!f)
		bail_out("%s: %s", p, strerror(errno));
	fputs(W_FN, f);
	fputs(body, f);
	fclose(f);
}

static int wait_file(const char *name)
{
	char p[PATH_MAX + 64];

	path_of(p, sizeof(p), name);
	return wait_path(p);
}

static void touch(const char *name)
{
	char p[PATH_MAX + 64];

	path_of(p, sizeof(p), name);
	touch_path(p);
}

static void rm(const char *name)
{
	char p[PATH_MAX + 64];

	path_of(p, sizeof(p), name);
	unlink(p);
}

/* The owners of @domain, and the keys they hold in all (-1: unreadable) */
static int owners(const char *domain, int *held)
{
	struct gt_owner o[16];
	int n = gt_owners_read(domain, o, 16), i;

	*held = 0;
	for (i = 0; i < n && i < 16; i++)
		*held += (int)o[i].held;
	return n;
}

static void test_enforce(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	int st, held, n;
	pid_t pid;

	snprintf(d, sizeof(d), "%s", olt_domain("nest"));
	st = run(d, NULL, "$C exec -d \"$D\" -x 1:2 -- $C exec -d \"$D\" -x 1:1 -- true");
	is_int(st, 65, "enforce: 1:1 inside an exec holding 1:2 is refused (65)");
	ok(strstr(err, "order violation") && strstr(err, "1:1") && strstr(err, "1:2"),
	   "enforce: with the order error naming both keys");

	/* the right order: one owner holds both; the inner's key goes with the inner */
	script("inner.sh", "touch \"$T/in\"; w go\n");
	script("outer.sh", "$C exec -d \"$D\" -x 1:2 -- sh \"$T/inner.sh\" || exit $?\n"
			   "touch \"$T/inner-done\"; w go2\n");
	pid = start("order", d, NULL, "$C exec -d \"$D\" -x 1:1 -- sh \"$T/outer.sh\"");
	if (!wait_file("in")) {
		n = owners(d, &held);
		is_int(n, 1, "nested: one owner in the domain");
		is_int(held, 2, "nested: it holds both keys");
		is_int(olt_probe(d, 1, 2, EX), -EAGAIN, "nested: 1:2 is held");
	} else {
		ok(0, "nested: the inner command ran");
	}
	touch("go");
	if (!wait_file("inner-done")) {
		is_int(olt_probe(d, 1, 2, EX), 0, "nested: the inner exec released 1:2 when it ended");
		is_int(olt_probe(d, 1, 1, EX), -EAGAIN, "nested: the outer's 1:1 stays held");
		n = owners(d, &held);
		ok(n == 1 && held == 1, "nested: one owner, holding one key (%d, %d)", n, held);
	} else {
		ok(0, "nested: the inner exec ended");
	}
	touch("go2");
	is_int(finish("order", pid), 0, "nested: the script exits 0");
	is_int(olt_probe(d, 1, 1, EX), 0, "nested: 1:1 is free after the outer exec");
	rm("in");
	rm("go");
	rm("go2");
	rm("inner-done");

	/* --new-owner: as before, an owner of its own (no order across execs) */
	script("own.sh", "touch \"$T/in\"; w go\n");
	pid = start("own", d, NULL,
		    "$C exec -d \"$D\" -x 1:2 -- $C exec --new-owner -d \"$D\" -x 1:1 -- sh \"$T/own.sh\"");
	if (!wait_file("in")) {
		n = owners(d, &held);
		ok(n == 2 && held == 2, "--new-owner: two owners, one key each (%d, %d)", n, held);
	} else {
		ok(0, "--new-owner: the inner command ran");
	}
	touch("go");
	is_int(finish("own", pid), 0, "--new-owner: 1:1 after 1:2 is not refused");
	rm("in");
	rm("go");
}

static void test_other_domain(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], e[ORDLOCK_DOMAIN_NAME_MAX];

	snprintf(d, sizeof(d), "%s", olt_domain("nest"));
	snprintf(e, sizeof(e), "%s", olt_domain("nest"));
	is_int(run(d, e, "$C exec -d \"$D\" -x 1:2 -- $C exec -d \"$E\" -x 1:1 -- "
		   "sh -c '[ \"$ORDLOCK_DOMAIN\" = \"$E\" ]'"), 0,
	       "another domain: an owner of its own, in that domain");
}

static void test_bad_fd(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	int st;

	snprintf(d, sizeof(d), "%s", olt_domain("nest"));
	st = run(d, NULL, "ORDLOCK_FD=250 $C exec -d \"$D\" -x 1:1 -- true");
	is_int(st, 66, "ORDLOCK_FD not open: refused (66)");
	ok(strstr(err, "ORDLOCK_FD") && strstr(err, "--new-owner"),
	   "ORDLOCK_FD not open: the message names it and the way out");
	st = run(d, NULL, "ORDLOCK_FD=0 $C exec -d \"$D\" -x 1:1 -- true");
	is_int(st, 66, "ORDLOCK_FD another file: refused (66)");
	ok(strstr(err, "ORDLOCK_FD") && strstr(err, "not open on /dev/ordlock"),
	   "ORDLOCK_FD another file: the message says so");
	st = run(d, NULL, "ORDLOCK_FD=x9 $C exec -d \"$D\" -x 1:1 -- true");
	is_int(st, 66, "ORDLOCK_FD not a number: refused (66)");
	ok(strstr(err, "ORDLOCK_FD") != NULL, "ORDLOCK_FD not a number: named");
	is_int(run(d, NULL, "ORDLOCK_FD=250 $C exec --new-owner -d \"$D\" -x 1:1 -- true"), 0,
	       "--new-owner ignores ORDLOCK_FD");
	is_int(olt_probe(d, 1, 1, EX), 0, "nothing left held");
}

/*
 * Two scripts crossing: A holds 1:1 and asks for 1:2 in a nested exec, B
 * holds 1:2 and asks for 1:1; each asks once both hold their first key.
 */
static void test_cross(unsigned int policy)
{
	const char *what = policy == ORDLOCK_POLICY_DETECT ? "detect" : "timeout";
	char d[ORDLOCK_DOMAIN_NAME_MAX], ea[8192], eb[8192];
	int sa, sb, held, n;
	pid_t a, b;

	gt_new_domain(d, "nestx", policy, 0);
	script("a.sh", "touch \"$T/a1\"; w b1\n"
		       "exec $C exec -w 15 -d \"$D\" -x 1:2 -- true\n");
	script("b.sh", "touch \"$T/b1\"; w a1\n"
		       "exec $C exec -w 15 -d \"$D\" -x 1:1 -- true\n");
	a = start("a", d, NULL, "$C exec -d \"$D\" -x 1:1 -- sh \"$T/a.sh\"");
	b = start("b", d, NULL, "$C exec -d \"$D\" -x 1:2 -- sh \"$T/b.sh\"");
	if (policy == ORDLOCK_POLICY_TIMEOUT) {
		/* both inner requests wait: the graph has their two edges */
		if (!gt_wait_edges(d, 2, BLOCKED_TIMEOUT_MS)) {
			n = owners(d, &held);
			ok(n == 2 && held == 2,
			   "timeout: one owner per script (%d owners, %d keys)", n, held);
			is_int(run(d, NULL, "$C cycles -d \"$D\""), 1,
			       "timeout: ordlockctl cycles sees the cycle");
			ok(strstr(out, "1:1") && strstr(out, "1:2"),
			   "timeout: the cycle goes through 1:1 and 1:2");
		} else {
			ok(0, "timeout: both inner requests wait");
		}
	}
	sa = finish("a", a);
	snprintf(ea, sizeof(ea), "%s", err);
	sb = finish("b", b);
	snprintf(eb, sizeof(eb), "%s", err);
	ok(sa >= 0 && sb >= 0, "%s: both scripts ended (%d, %d)", what, sa, sb);
	if (policy == ORDLOCK_POLICY_DETECT) {
		ok((sa == 1 && sb == 0) || (sa == 0 && sb == 1),
		   "detect: one inner exec is the deadlock victim, the other script completes (%d, %d)",
		   sa, sb);
		ok(strstr(sa ? ea : eb, "deadlock") && strstr(sa ? ea : eb, "waits for"),
		   "detect: the victim reports the deadlock with its cycle");
	} else {
		ok(sa == 1 || sb == 1, "timeout: an inner exec timed out (%d, %d)", sa, sb);
		ok(strstr(sa == 1 ? ea : eb, "timed out") != NULL, "timeout: it says so");
	}
	is_int(olt_probe(d, 1, 1, EX), 0, "%s: 1:1 free at the end", what);
	is_int(olt_probe(d, 1, 2, EX), 0, "%s: 1:2 free at the end", what);
	rm("a1");
	rm("b1");
}

int main(void)
{
	watchdog_start(400);
	snprintf(ctl, sizeof(ctl), "%s", olt_ctl_path());
	olt_scratch_dir(dir, sizeof(dir), "t_exec_nested");
	signal(SIGPIPE, SIG_IGN);
	test_enforce();
	test_other_domain();
	test_bad_fd();
	test_cross(ORDLOCK_POLICY_DETECT);
	test_cross(ORDLOCK_POLICY_TIMEOUT);
	rm("inner.sh");
	rm("outer.sh");
	rm("own.sh");
	rm("a.sh");
	rm("b.sh");
	rmdir(dir);
	return tap_done();
}
