// SPDX-License-Identifier: GPL-2.0
/*
 * t_ordlockctl: the ordlockctl command against real waiting processes.
 *
 *  - every subcommand has --help; usage errors exit 64 (EX_USAGE), the
 *    other failures of ordlockctl their sysexits codes;
 *  - cycles: none when there are none (exit 0); a ring of three owners in a
 *    "timeout" domain found exactly (exit 1), step by step and as a chain,
 *    through debugfs and through netlink, with rank names; two cycles that
 *    share an owner plus a third through a soft edge: all three, no more;
 *  - cycles --history: a deadlock the kernel broke, victim first;
 *  - locks, owners, graph, stats: their JSON read back with jq and checked
 *    against what the test set up; graph --dot marks the ring red (and dot
 *    accepts it when graphviz is installed);
 *  - monitor: order violation and deadlock events as JSON lines;
 *  - domain: set and read back the policy, delay and rank names; the
 *    kernel's refusal shown as "kernel reports: ..."; the ioctl fallback in
 *    another network namespace;
 *  - exec behaves as flock(1) in the cases its manual describes: the
 *    command runs holding the keys, which are released when it ends;
 *    commands are serialised; -n fails at once with 1 (or -E); -w times
 *    out; the command's exit status is passed through; -F hands the
 *    descriptor to the command; a descriptor number takes the keys on the
 *    shell's description ("exec 9<>/dev/ordlock"), -u releases them.
 *
 * The CLI is tools/ordlockctl/ordlockctl of the repository ($ORDLOCK_REPO,
 * else found from this program's path); the JSON is checked with jq.
 */
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
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

/* waits that only a kill ends */
#define LONG_MS		120000
#define RUN_TIMEOUT_MS	60000

static char ctl[PATH_MAX];
static int have_jq;
static unsigned int nfile;

/* The output of one command line */
struct run {
	int status;		/* exit status, 128+N for signal N, -1 hung */
	char out[65536];
	char err[16384];
	uint64_t ms;
};

static struct run R;

/* The output a command left in @path, which goes */
static void read_file(const char *path, char *buf, size_t len)
{
	read_small_file(path, buf, len);
	unlink(path);
}

struct bg {
	pid_t pid;
	char out[64];
	char err[64];
	uint64_t start;
};

/* Start "sh -c CMD" with $C the CLI; its output goes to files */
static void bg_start(struct bg *b, const char *cmd)
{
	const char *env[] = { "C", ctl, "NO_COLOR", "1", NULL };

	snprintf(b->out, sizeof(b->out), "ctl.%d.%u.out", (int)getpid(), nfile);
	snprintf(b->err, sizeof(b->err), "ctl.%d.%u.err", (int)getpid(), nfile++);
	b->start = now_ms();
	/* main() ignores SIGPIPE; sh_start() gives the commands the default */
	b->pid = sh_start(cmd, b->out, b->err, SH_NULL_STDIN, env);
}

/* 1 when it ended (status in @r), 0 while it runs */
static int bg_poll(struct bg *b, struct run *r)
{
	int status;
	pid_t p = waitpid(b->pid, &status, WNOHANG);

	if (p != b->pid)
		return 0;
	r->ms = now_ms() - b->start;
	r->status = sh_status(status);
	read_file(b->out, r->out, sizeof(r->out));
	read_file(b->err, r->err, sizeof(r->err));
	return 1;
}

static int bg_finish(struct bg *b, struct run *r, unsigned int timeout_ms)
{
	uint64_t deadline = now_ms() + timeout_ms;

	while (!bg_poll(b, r)) {
		if (now_ms() > deadline) {
			diag("command still runs after %u ms: killing it", timeout_ms);
			kill(b->pid, SIGKILL);
			waitpid(b->pid, NULL, 0);
			r->status = -1;
			read_file(b->out, r->out, sizeof(r->out));
			read_file(b->err, r->err, sizeof(r->err));
			return -1;
		}
		usleep(5000);
	}
	return r->status;
}

/* Run a shell command line ($C is the CLI) to its end; its exit status */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run(const char *fmt, ...)
{
	char cmd[4096];
	struct bg b;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	bg_start(&b, cmd);
	return bg_finish(&b, &R, RUN_TIMEOUT_MS);
}

/* Show what the last command printed, after a failed point */
static void show(void)
{
	char *line, *save = NULL;
	int n = 0;

	diag("  exit %d after %llu ms", R.status, (unsigned long long)R.ms);
	for (line = strtok_r(R.out, "\n", &save); line && n < 30; line = strtok_r(NULL, "\n", &save), n++)
		diag("  out: %s", line);
	save = NULL;
	for (line = strtok_r(R.err, "\n", &save); line && n < 40; line = strtok_r(NULL, "\n", &save), n++)
		diag("  err: %s", line);
}

/* A point on the last command: shows its output when it fails */
static int check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int check(int cond, const char *fmt, ...)
{
	char name[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	ok(cond, "%s", name);
	if (!cond)
		show();
	return cond;
}

/*
 * jq(CMD, FILTER): run "CMD | jq -e FILTER"; a point passes when jq says
 * true. Without jq the point is a skip.
 */
static void jq(const char *what, const char *filter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void jq(const char *what, const char *filter, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n;

	if (!have_jq) {
		ok(1, "%s # SKIP no jq", what);
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(cmd + n, sizeof(cmd) - (size_t)n,
		 " > j.out; s=$?; jq -e '%s' < j.out >/dev/null || { echo \"exit $s\"; cat j.out; exit 1; }",
		 filter);
	run("%s", cmd);
	check(R.status == 0, "%s", what);
}

static int count_lines(const char *s, const char *needle)
{
	int n = 0;

	for (; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

static void find_ctl(void)
{
	snprintf(ctl, sizeof(ctl), "%s", olt_ctl_path());
	have_jq = !system("command -v jq >/dev/null 2>&1");
	if (!have_jq)
		diag("jq is not installed: the JSON points are skipped");
}

/* Kill busy actors first (their waits end with them), then reap all */
static void stop_actors(struct gt_actor **a, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (a[i] && a[i]->busy)
			kill(a[i]->pid, SIGKILL);
	for (i = 0; i < n; i++)
		if (a[i])
			gt_actor_stop(a[i]);
}

static void test_help(void)
{
	static const char *const cmds[] = {
		"cycles", "locks", "owners", "graph", "stats", "monitor", "exec", "domain",
		"blockers",
	};
	unsigned int i, good = 0, usage = 0;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char want[64];

		snprintf(want, sizeof(want), "Usage: ordlockctl %s", cmds[i]);
		if (run("$C %s --help", cmds[i]) == 0 && strstr(R.out, want))
			good++;
		else
			show();
		if (run("$C %s --no-such-option", cmds[i]) == 64 && strstr(R.err, "--help"))
			usage++;
		else
			show();
	}
	ok(good == 9, "--help of every subcommand: exit 0 and its usage");
	ok(usage == 9, "an unknown option of every subcommand: exit 64, pointing to --help");
	check(run("$C") == 64 && strstr(R.err, "Usage: ordlockctl"),
	      "no subcommand: the list of commands, exit 64");
	check(run("$C frobnicate") == 64 && strstr(R.err, "no command"),
	      "an unknown subcommand: exit 64");
	check(run("$C help cycles") == 0 && strstr(R.out, "--history"),
	      "help COMMAND prints the command's help");
	check(run("$C locks surplus") == 64, "a surplus argument: exit 64");
	check(run("$C cycles -d 'bad name'") == 64, "a bad domain name: exit 64");
	check(run("$C cycles --limit x") == 64, "a bad number: exit 64");
	check(run("$C graph --dot -j") == 64, "--dot with --json: exit 64");
}

/* One holder, one waiter: an edge but no cycle */
static void test_no_cycle(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a[2];

	gt_new_domain(d, "ctl-none", ORDLOCK_POLICY_TIMEOUT, 0);
	a[0] = gt_actor_start("holder", d, 1);
	a[1] = gt_actor_start("waiter", d, 1);
	ok(gt_call1(a[0], GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) == 0,
	   "no cycle: the holder holds 1:1");
	gt_submit1(a[1], GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	ok(!gt_wait_edges(d, 1, 20000), "no cycle: the waiter waits (one edge)");

	check(run("$C cycles -d %s", d) == 0 && strstr(R.out, "no cycles"),
	      "cycles: \"no cycles\", exit 0");
	check(run("$C cycles -q -d %s", d) == 0 && !R.out[0], "cycles -q: silent, exit 0");
	jq("cycles -j: count 0, complete, 1 edge (debugfs)",
	   ".count == 0 and .complete and .edges == 1 and .source == \"debugfs\" and .cycles == []",
	   "$C cycles -j -S debugfs -d %s", d);
	jq("cycles -j -S netlink: the same through netlink",
	   ".count == 0 and .edges == 1 and .source == \"netlink\"",
	   "$C cycles -j -S netlink -d %s", d);

	/* the other views of the same state */
	{
		char f[512];

		snprintf(f, sizeof(f),
			 ".edges | length == 1 and .[0].waiter.pid == %d and .[0].blocker.pid == %d"
			 " and .[0].edge == \"hard\" and .[0].mode == \"shared\" and"
			 " .[0].blocker.mode == \"exclusive\" and .[0].key == \"1:1\" and"
			 " .[0].waiter.comm == \"waiter\" and .[0].waiter.owner_id == %llu",
			 (int)a[1]->pid, (int)a[0]->pid,
			 (unsigned long long)a[1]->owner_id[0]);
		jq("graph -j: the edge, its owners, key, modes and type", f,
		   "$C graph -j -d %s", d);
		jq("graph -j -S netlink: the same edge", f, "$C graph -j -S netlink -d %s", d);

		snprintf(f, sizeof(f),
			 ".locks | length == 2 and .[0].role == \"holder\" and .[0].pid == %d and"
			 " .[0].token > 0 and .[0].waited_us == null and .[1].role == \"waiter\" and"
			 " .[1].pid == %d and .[1].position == 0 and .[1].mode == \"shared\" and"
			 " .[1].token == null",
			 (int)a[0]->pid, (int)a[1]->pid);
		jq("locks -j: the holder (token) and the waiter (position)", f,
		   "$C locks -j -d %s", d);
		jq("locks -j -S netlink: the same", f, "$C locks -j -S netlink -d %s", d);

		snprintf(f, sizeof(f),
			 ".owners | length == 2 and (map(select(.pid == %d))[0] | .held == 1 and"
			 " .waiting == null and .kind == \"device\") and (map(select(.pid == %d))[0] |"
			 " .held == 0 and .waiting.key == \"1:1\" and .waiting.mode == \"shared\")",
			 (int)a[0]->pid, (int)a[1]->pid);
		jq("owners -j: the holder holds one key, the waiter waits for 1:1", f,
		   "$C owners -j -d %s", d);
		jq("owners -j -w: only the waiter",
		   ".owners | length == 1 and .[0].comm == \"waiter\"", "$C owners -j -w -d %s", d);
	}
	check(run("$C locks -d %s", d) == 0 && strstr(R.out, "DOMAIN") &&
	      strstr(R.out, "holder") && strstr(R.out, "waiter"),
	      "locks: a table with a header, the holder and the waiter");
	check(run("$C owners -d %s", d) == 0 && strstr(R.out, "WAITS FOR") &&
	      strstr(R.out, "shared 1:1"), "owners: a table, the waiter waits for shared 1:1");
	check(run("$C graph -d %s", d) == 0 && strstr(R.out, "holds exclusive") &&
	      strstr(R.out, "hard"), "graph: a table row per edge");
	check(run("$C graph --dot -d %s", d) == 0 && strstr(R.out, "digraph ordlock") &&
	      strstr(R.out, "style=solid") && !strstr(R.out, "color=red"),
	      "graph --dot: a solid edge, nothing red");
	/* debugfs missing: netlink serves */
	jq("locks without debugfs: read through netlink",
	   ".source == \"netlink\" and (.locks | length == 2)",
	   "ORDLOCK_DEBUGFS=/nonexistent $C locks -j -d %s", d);
	check(run("ORDLOCK_DEBUGFS=/nonexistent $C locks -S debugfs") == 69 &&
	      strstr(R.err, "/nonexistent/locks"),
	      "locks -S debugfs without debugfs: exit 69 (EX_UNAVAILABLE), naming the file");
	stop_actors(a, 2);
	check(run("$C locks -d %s", d) == 0 && strstr(R.out, "no locks"),
	      "locks of an idle domain: \"no locks\"");
}

/* A ring of three owners in a timeout domain: the kernel lets it stand */
static void test_ring(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], name[16], f[1024], want[256];
	struct gt_actor *a[3];
	unsigned int i;
	int good = 1;

	gt_new_domain(d, "ctl-ring", ORDLOCK_POLICY_TIMEOUT, 0);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "ring%u", i);
		a[i] = gt_actor_start(name, d, 1);
	}
	for (i = 0; i < 3; i++)
		good &= gt_call1(a[i], GT_OP_ACQUIRE, 0, 1, i + 1, EX, LONG_MS, 0) == 0;
	ok(good, "ring: owner i holds 1:i+1");
	for (i = 0; i < 3; i++)
		gt_submit1(a[i], GT_OP_ACQUIRE, 0, 1, (i + 1) % 3 + 1, EX, LONG_MS, 0);
	ok(!gt_wait_edges(d, 3, 20000), "ring: each waits for the next (three edges)");

	run("$C cycles -N -d %s", d);
	snprintf(want, sizeof(want),
		 "pid %d (ring0) waits for exclusive 1:2; blocked by pid %d (ring1), which holds it exclusive",
		 (int)a[0]->pid, (int)a[1]->pid);
	check(R.status == 1 && count_lines(R.out, " waits for ") == 3 &&
	      strstr(R.out, want) && strstr(R.out, "1:1 => 1:2 => 1:3 => 1:1") &&
	      strstr(R.out, "cycle 1 of 1"),
	      "cycles: exit 1, one cycle of three steps and its chain");
	check(run("$C cycles -q -d %s", d) == 1 && !R.out[0], "cycles -q: silent, exit 1");

	snprintf(f, sizeof(f),
		 ".count == 1 and .complete and .shown == 1 and .owners == 3 and"
		 " (.cycles[0] | .length == 3 and .domain == \"%s\" and"
		 " [.steps[].pid] == [%d, %d, %d] and [.steps[].key] == [\"1:2\", \"1:3\", \"1:1\"] and"
		 " [.steps[].blocker.pid] == [%d, %d, %d] and all(.steps[]; .edge == \"hard\") and"
		 " .chain == [\"1:1\", \"1:2\", \"1:3\", \"1:1\"])",
		 d, (int)a[0]->pid, (int)a[1]->pid, (int)a[2]->pid,
		 (int)a[1]->pid, (int)a[2]->pid, (int)a[0]->pid);
	jq("cycles -j (debugfs): exactly the ring, oldest owner first", f,
	   "$C cycles -j -N -S debugfs -d %s", d);
	jq("cycles -j (netlink): exactly the ring", f, "$C cycles -j -N -S netlink -d %s", d);
	jq("cycles -j of all domains counts the ring too",
	   "[.cycles[] | select(.domain == env.D)] | length == 1",
	   "export D=%s; $C cycles -j -N", d);

	/* with rank names the keys read as names */
	check(run("$C domain %s set rank wh=1", d) == 0 && strstr(R.out, "wh=1"),
	      "domain set rank wh=1");
	check(run("$C cycles -d %s", d) == 1 &&
	      strstr(R.out, "wh:1 => wh:2 => wh:3 => wh:1") &&
	      strstr(R.out, "waits for exclusive wh:2"),
	      "cycles with rank names: wh:1 => wh:2 => wh:3 => wh:1");
	jq("cycles -j with names: keys by name, ranks by number",
	   ".cycles[0].chain == [\"wh:1\", \"wh:2\", \"wh:3\", \"wh:1\"] and .cycles[0].steps[0].rank == 1",
	   "$C cycles -j -d %s", d);

	/* DOT: the ring in red */
	run("$C graph --dot -d %s", d);
	check(R.status == 0 && count_lines(R.out, "style=solid, color=red") == 3 &&
	      count_lines(R.out, " -> ") == 3 && strstr(R.out, "cluster_"),
	      "graph --dot: three solid red edges in the domain's cluster");
	if (!system("command -v dot >/dev/null 2>&1")) {
		check(run("$C graph --dot -d %s | dot -Tsvg > g.svg && grep -q '<svg' g.svg", d) == 0,
		      "dot accepts the graph");
	} else {
		ok(1, "dot accepts the graph # SKIP graphviz is not installed");
	}
	/* stats of the domain */
	jq("stats -j: the domain, its policy, its counters",
	   ".domains | length == 1 and .[0].policy == \"timeout\" and"
	   " .[0].counters.acquires >= 3 and .[0].counters.waiters == 3 and .[0].wait_us != null",
	   "$C stats -j -d %s", d);
	jq("stats -j -S netlink: the same counters, no histogram",
	   ".domains[0].counters.waiters == 3 and .domains[0].wait_us == null and .global == null",
	   "$C stats -j -S netlink -d %s", d);
	check(run("$C stats -d %s", d) == 0 && strstr(R.out, "COUNTER") &&
	      strstr(R.out, "acquires"), "stats -d: every counter");
	check(run("$C stats") == 0 && strstr(R.out, "POLICY") && strstr(R.out, d),
	      "stats: a row per domain");
	stop_actors(a, 3);
	check(run("$C cycles -d %s", d) == 0, "the ring gone: no cycles");
}

/*
 * Owners A, B, C: A and C hold 1:4 shared, B holds 1:2; A then C wait for
 * 1:2 exclusive (C also behind A: a soft edge); B waits for 1:4 exclusive.
 * Cycles: A-B, A-B-C (through the soft edge C -> A), B-C.
 */
static void test_overlap(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], f[1024];
	struct gt_actor *a[3];
	int pa, pb, pc;

	gt_new_domain(d, "ctl-three", ORDLOCK_POLICY_TIMEOUT, 0);
	a[0] = gt_actor_start("ownerA", d, 1);
	a[1] = gt_actor_start("ownerB", d, 1);
	a[2] = gt_actor_start("ownerC", d, 1);
	pa = (int)a[0]->pid;
	pb = (int)a[1]->pid;
	pc = (int)a[2]->pid;
	ok(gt_call1(a[0], GT_OP_ACQUIRE, 0, 1, 4, SH, LONG_MS, 0) == 0 &&
	   gt_call1(a[2], GT_OP_ACQUIRE, 0, 1, 4, SH, LONG_MS, 0) == 0 &&
	   gt_call1(a[1], GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0) == 0,
	   "three: A and C hold 1:4 shared, B holds 1:2");
	gt_submit1(a[0], GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	ok(!gt_wait_edges(d, 1, 20000), "three: A waits for 1:2");
	gt_submit1(a[2], GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	ok(!gt_wait_edges(d, 3, 20000), "three: C waits for 1:2, behind A");
	gt_submit1(a[1], GT_OP_ACQUIRE, 0, 1, 4, EX, LONG_MS, 0);
	ok(!gt_wait_edges(d, 5, 20000), "three: B waits for 1:4 (five edges)");

	check(run("$C cycles -d %s", d) == 1 && strstr(R.out, "cycle 3 of 3") &&
	      !strstr(R.out, "cycle 4") && strstr(R.out, "which is queued ahead of it for exclusive"),
	      "cycles: three cycles, one through a soft edge");
	snprintf(f, sizeof(f),
		 ".count == 3 and .complete and ([.cycles[] | [.steps[].pid] | sort] | sort) =="
		 " ([[%d, %d], [%d, %d, %d], [%d, %d]] | map(sort) | sort) and"
		 " ([.cycles[].steps[] | select(.edge == \"soft\")] | length) == 1",
		 pa, pb, pa, pb, pc, pb, pc);
	jq("cycles -j: exactly A-B, A-B-C and B-C", f, "$C cycles -j -d %s", d);
	jq("cycles -j -l 1: one shown, three counted",
	   ".count == 3 and .shown == 1 and (.cycles | length) == 1",
	   "$C cycles -j -l 1 -d %s", d);
	check(run("$C cycles -l 1 -d %s", d) == 1 && strstr(R.out, "2 more cycles not shown"),
	      "cycles -l 1: the rest are counted in a note");
	run("$C graph --dot -d %s", d);
	check(R.status == 0 && count_lines(R.out, "style=dashed") == 1 &&
	      count_lines(R.out, "color=red") >= 5 + 3,
	      "graph --dot: the soft edge dashed, every edge and owner red");
	stop_actors(a, 3);
}

/* A deadlock the kernel broke, in history and as a monitor event */
static void test_history_monitor(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], f[1024], cmd[512];
	struct gt_actor *a[2];
	struct bg mon;
	uint64_t deadline;
	int ret, victims = 0, done = 0;

	gt_new_domain(d, "ctl-hist", ORDLOCK_POLICY_DETECT, 0);
	a[0] = gt_actor_start("first", d, 1);
	a[1] = gt_actor_start("second", d, 1);
	snprintf(cmd, sizeof(cmd), "$C monitor -j -c 1 -t 60 -d %s", d);
	bg_start(&mon, cmd);
	/* deadlock until the monitor has seen one (it may subscribe late) */
	deadline = now_ms() + 40000;
	while (!done && now_ms() < deadline) {
		if (gt_call1(a[0], GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) ||
		    gt_call1(a[1], GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0))
			break;
		gt_submit1(a[0], GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
		if (gt_wait_edges(d, 1, 20000))
			break;
		ret = gt_call1(a[1], GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
		victims += ret == -EDEADLK;
		gt_call(a[1], GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
		gt_collect(a[0], 20000);
		gt_call(a[0], GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
		done = bg_poll(&mon, &R);
		if (!done)
			usleep(200000);
	}
	ok(victims > 0, "history: the second owner closing the ring is the victim");
	if (!done)
		bg_finish(&mon, &R, 5000);
	snprintf(f, sizeof(f),
		 ".event == \"deadlock\" and .domain == \"%s\" and .owner.pid == %d and"
		 " .failure.reason == \"deadlock\" and (.cycle | length) == 2 and"
		 " .cycle[0].pid == %d and .time_ns > 0",
		 d, (int)a[1]->pid, (int)a[1]->pid);
	if (have_jq) {
		char path[64];
		FILE *out;

		snprintf(path, sizeof(path), "mon.%d.json", (int)getpid());
		out = fopen(path, "w");
		if (out) {
			fputs(R.out, out);
			fclose(out);
		}
		ret = R.status;
		run("jq -e '%s' < %s > /dev/null", f, path);
		check(ret == 0 && R.status == 0,
		      "monitor -j: a deadlock event with the victim and its cycle (exit %d)", ret);
		unlink(path);
	} else {
		ok(1, "monitor -j # SKIP no jq");
	}

	run("$C cycles --history -d %s", d);
	check(R.status == 1 && strstr(R.out, "victim pid") && strstr(R.out, " => "),
	      "cycles --history: the deadlock, its victim and its chain; exit 1");
	snprintf(f, sizeof(f),
		 ".deadlocks | length >= 1 and (.[-1] | .domain == \"%s\" and .length == 2 and"
		 " .complete and .steps[0].pid == %d and .steps[1].pid == %d and"
		 " .steps[0].key == \"1:1\" and .chain == [\"1:2\", \"1:1\", \"1:2\"])",
		 d, (int)a[1]->pid, (int)a[0]->pid);
	jq("cycles --history -j: victim first, both steps and the chain", f,
	   "$C cycles --history -j -N -d %s", d);
	check(run("$C cycles --history -d no-such-domain-x") == 0 &&
	      strstr(R.out, "no deadlocks"), "cycles --history of a quiet domain: exit 0");
	check(run("$C cycles --history -q --since 10m -d %s", d) == 1 && !R.out[0],
	      "cycles --history --since 10m: the deadlock just broken counts (exit 1)");
	run("$C cycles --history -j -d %s | jq '.deadlocks[-1].seq'", d);
	{
		char seq[32];

		snprintf(seq, sizeof(seq), "%.20s", R.out);
		seq[strcspn(seq, "\n")] = '\0';
		check(have_jq && run("$C cycles --history -q --after %s -d %s", seq, d) == 0,
		      "cycles --history --after SEQ (the newest): nothing newer, exit 0");
	}
	check(run("$C cycles --history -q --since @%llu -d %s",
		  (unsigned long long)time(NULL) + 60, d) == 0,
	      "cycles --history --since a time after it: exit 0");
	stop_actors(a, 2);
}

/* Order violations: the monitor prints them as they happen */
static void test_monitor_order(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], cmd[512], f[512];
	struct ordlock_key hi = ORDLOCK_EX(1, 5), lo = ORDLOCK_EX(1, 1);
	struct ordlock *ol;
	struct bg mon;
	uint64_t deadline;
	int done = 0, text;

	for (text = 0; text < 2; text++) {
		gt_new_domain(d, "ctl-mon", ORDLOCK_POLICY_ENFORCE, 0);
		snprintf(cmd, sizeof(cmd), "$C monitor %s -c 1 -t 60 -d %s",
			 text ? "" : "-j", d);
		bg_start(&mon, cmd);
		ol = olt_open(d);
		done = 0;
		deadline = now_ms() + 30000;
		while (!done && now_ms() < deadline) {
			ordlock_acquire(ol, &hi, 1, 1000, 0, NULL);
			ordlock_acquire(ol, &lo, 1, 1000, 0, NULL);
			ordlock_release_all(ol);
			done = bg_poll(&mon, &R);
			if (!done)
				usleep(100000);
		}
		if (!done)
			bg_finish(&mon, &R, 5000);
		ordlock_close(ol);
		if (text) {
			char want[64];

			snprintf(want, sizeof(want), "pid %d (t_ordlockctl)", (int)getpid());
			check(R.status == 0 && strstr(R.out, " order domain ") &&
			      strstr(R.out, want) && strstr(R.out, "order violation"),
			      "monitor: a line with the time, the event, the owner and the reason");
			continue;
		}
		snprintf(f, sizeof(f),
			 ".event == \"order\" and .domain == \"%s\" and .owner.pid == %d and"
			 " .failure.reason == \"order\" and .failure.key.key == \"1:1\" and"
			 " .failure.held.key == \"1:5\" and .cycle == null",
			 d, (int)getpid());
		if (have_jq) {
			FILE *out = fopen("mon.json", "w");
			int ret = R.status;

			if (out) {
				fputs(R.out, out);
				fclose(out);
			}
			run("jq -e '%s' < mon.json > /dev/null", f);
			check(ret == 0 && R.status == 0,
			      "monitor -j -c 1: an order event, then exit 0");
			unlink("mon.json");
		} else {
			ok(1, "monitor -j # SKIP no jq");
		}
	}
}

static void test_domain(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];

	snprintf(d, sizeof(d), "%s", olt_domain("ctl-dom"));
	check(run("$C domain %s set policy detect delay 250 rank orders=1 rank items=2", d) == 0 &&
	      strstr(R.out, "policy detect") && strstr(R.out, "orders=1"),
	      "domain set: policy, delay and rank names");
	jq("domain -j: read back",
	   ".policy == \"detect\" and .detect_delay_ms == 250 and"
	   " (.rank_names | map(\"\\(.name)=\\(.rank)\") | sort) == [\"items=2\", \"orders=1\"]",
	   "$C domain -j %s", d);
	check(run("$C domain %s set timeout 75", d) == 0 && strstr(R.out, "detect_delay_ms 75"),
	      "domain set timeout MS: the detection delay (deadlock_timeout)");
	check(run("$C domain %s set rank a=1 rank a=2", d) == 65 &&
	      strstr(R.err, "kernel reports: ") && strstr(R.err, "twice"),
	      "a change the kernel refuses (a name twice): exit 65, \"kernel reports:\" and the reason");
	check(run("$C domain %s set policy sometimes", d) == 64, "a bad policy: usage error");
	check(run("$C domain %s set rank 1x=3", d) == 64, "a bad rank name: usage error");
	check(run("$C domain %s frob", d) == 64, "a word other than set: usage error");
	check(run("$C domain no-such-domain-y") == 69 && strstr(R.err, "kernel reports: "),
	      "an unknown domain: exit 69 (EX_UNAVAILABLE) and the kernel's reason");
	check(run("$C domain") == 0 && strstr(R.out, d), "domain: the list has it");
	jq("domain -j (list)", "[.domains[].domain] | index(env.D) != null",
	   "export D=%s; $C domain -j", d);
	check(run("$C domain %s set norank", d) == 0 && strstr(R.out, "rank names: none"),
	      "domain set norank: no names left");

	/* in another network namespace netlink refuses; the ioctl serves */
	if (!system("command -v unshare >/dev/null 2>&1")) {
		check(run("unshare -n $C domain %s set policy timeout", d) == 0 &&
		      strstr(R.out, "policy timeout"),
		      "another netns: the policy is set through the ioctl");
		jq("and netlink reads it back", ".policy == \"timeout\" and .detect_delay_ms == 75",
		   "$C domain -j %s", d);
		check(run("unshare -n $C stats -S netlink -d %s", d) == 69 &&
		      strstr(R.err, "kernel reports: ordlock serves the initial network namespace only"),
		      "another netns: stats through netlink shows the kernel's reason");
		check(run("unshare -n $C locks -S netlink") == 69 &&
		      strstr(R.err, "initial network namespace"),
		      "another netns: a netlink dump is refused, and the message says why");
	} else {
		ok(1, "ioctl fallback # SKIP no unshare");
		ok(1, "ioctl fallback # SKIP no unshare");
		ok(1, "ioctl fallback # SKIP no unshare");
		ok(1, "ioctl fallback # SKIP no unshare");
	}
}

static void test_exec(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], nd[ORDLOCK_DOMAIN_NAME_MAX], want[128];
	struct olt_holder *h;
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct bg b[4];
	uint64_t deadline;
	unsigned int i;
	int held = 0;

	snprintf(d, sizeof(d), "%s", olt_domain("ctl-exec"));
	setenv("D", d, 1);
	check(run("$C exec -d %s -x 1:1 -- sh -c 'exit 7'", d) == 7,
	      "exec: the command's exit status is passed through");
	check(run("$C exec -d %s -x 1:1 -c 'exit 3'", d) == 3, "exec -c: through sh -c");
	check(run("$C exec -d %s -x 1:1 -- sh -c 'kill -TERM $$'", d) == 128 + SIGTERM,
	      "exec: a command killed by a signal gives 128+N");
	check(run("$C exec -d %s -x 1:1 -s 2:7 -- sh -c 'test -n \"$ORDLOCK_TOKEN\" && test \"$ORDLOCK_DOMAIN\" = %s'",
		  d, d) == 0, "exec: ORDLOCK_TOKEN and ORDLOCK_DOMAIN in the environment");
	check(run("$C exec -d %s -x 1:1 -- /no/such/program", d) == 127,
	      "exec: a command that does not exist gives 127");
	check(run("$C exec -d %s -- true", d) == 64 && strstr(R.err, "no keys"),
	      "exec without keys: usage error");
	check(run("$C exec -d %s -x 1:1", d) == 64 && strstr(R.err, "no command"),
	      "exec without a command: usage error");
	check(run("$C exec -d %s -x banana -- true", d) == 64, "exec with a bad key: usage error");
	check(run("$C exec -d %s -w soon -x 1:1 -- true", d) == 64, "exec -w soon: usage error");

	/* the command runs holding the key, which is free once it ended */
	snprintf(want, sizeof(want), "$C exec -d %s -x 1:1 -- sleep 3", d);
	bg_start(&b[0], want);
	deadline = now_ms() + 10000;
	while (now_ms() < deadline && !held) {
		held = olt_probe(d, 1, 1, SH) == -EAGAIN;
		usleep(20000);
	}
	ok(held, "exec: the key is held while the command runs");
	bg_finish(&b[0], &R, 20000);
	check(R.status == 0 && olt_probe(d, 1, 1, EX) == 0,
	      "exec: the key is free once the command ended");

	/* flock(1): serialised commands */
	unlink("serial.log");
	for (i = 0; i < 4; i++)
		bg_start(&b[i], "$C exec -d \"$D\" -x 1:9 -- sh -c 'echo begin >> serial.log; sleep 0.3; echo end >> serial.log'");
	for (i = 0; i < 4; i++)
		bg_finish(&b[i], &R, 30000);
	{
		char log[256];
		int fd = open("serial.log", O_RDONLY);
		ssize_t n = fd < 0 ? 0 : read(fd, log, sizeof(log) - 1);

		if (fd >= 0)
			close(fd);
		log[n > 0 ? n : 0] = '\0';
		ok(!strcmp(log, "begin\nend\nbegin\nend\nbegin\nend\nbegin\nend\n"),
		   "exec: four commands under one key never overlap");
		if (strcmp(log, "begin\nend\nbegin\nend\nbegin\nend\nbegin\nend\n"))
			diag("  serial.log: %s", log);
	}

	/* a holder: -n, -E, -w, -q */
	h = olt_holder_start(d, &k, 1);
	ok(h && !h->result, "a holder takes 1:1");
	snprintf(want, sizeof(want), "held (exclusive) by pid %d", (int)h->pid);
	check(run("$C exec -n -d %s -x 1:1 -- echo ran", d) == 1 && !strstr(R.out, "ran") &&
	      strstr(R.err, want), "exec -n: exit 1 at once, naming the holder");
	check(run("$C exec -n -E 42 -d %s -x 1:1 -- true", d) == 42,
	      "exec -n -E 42: the conflict exit code");
	check(run("$C exec -n -q -d %s -x 1:1 -- true", d) == 1 && !R.err[0],
	      "exec -n -q: no message");
	check(run("$C exec -w 0.5 -d %s -x 1:1 -- true", d) == 1 && R.ms >= 400 &&
	      strstr(R.err, "timed out waiting for exclusive 1:1") && strstr(R.err, want),
	      "exec -w 0.5: times out after half a second, naming the holder");
	check(run("$C exec -w 0 -d %s -x 1:1 -- true", d) == 1 && R.ms < 5000,
	      "exec -w 0: does not wait");
	check(run("$C exec -n -d %s -x 1:2 -s 1:3 -- true", d) == 0,
	      "exec -n on other keys: runs");
	olt_holder_stop(h);

	/* shared holders share */
	k = ORDLOCK_SH(1, 1);
	h = olt_holder_start(d, &k, 1);
	check(run("$C exec -n -d %s -s 1:1 -- true", d) == 0,
	      "exec -n -s beside a shared holder: runs");
	check(run("$C exec -n -d %s -x 1:1 -- true", d) == 1,
	      "exec -n -x beside a shared holder: conflict");
	olt_holder_stop(h);

	/* rank names */
	snprintf(nd, sizeof(nd), "%s", olt_domain("ctl-names"));
	run("$C domain %s set rank orders=1", nd);
	check(run("$C exec -v -d %s -x orders:5 -- true", nd) == 0 &&
	      strstr(R.err, "token"), "exec with a rank name (orders:5); -v tells the token");
	check(run("$C exec -d %s -x nope:5 -- true", nd) == 64 && strstr(R.err, "nope"),
	      "exec with an unknown rank name: exit 64");
	check(run("$C exec -d %s -x 1:1 -- sh -c 'ls -l /proc/$$/fd/$ORDLOCK_FD; exit 0'", d) == 0 &&
	      strstr(R.out, "/dev/ordlock"),
	      "exec: the command inherits /dev/ordlock (ORDLOCK_FD), as flock's inherits its file");
	check(run("$C exec -o -d %s -x 1:1 -- sh -c 'ls -l /proc/$$/fd | grep ordlock; "
		  "test -z \"$ORDLOCK_FD\"; exit $?'", d) == 0 &&
	      !strstr(R.out, "/dev/ordlock"),
	      "exec -o: the command does not inherit /dev/ordlock");
}

/*
 * flock(1)'s other two ways: -F (the command inherits the descriptor) and a
 * descriptor number instead of a command (the keys stay with the shell's
 * open file description), with -u to release them.
 */
static void test_exec_fd(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], want[64];
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct olt_holder *h;

	snprintf(d, sizeof(d), "%s", olt_domain("ctl-fd"));

	/* -F: no fork; the command holds the keys through ORDLOCK_FD */
	check(run("$C exec -F -d %s -x 1:1 -- sh -c '"
		  "echo fd=$ORDLOCK_FD; ls -l /proc/$$/fd/$ORDLOCK_FD; "
		  "$C exec --new-owner -n -q -d %s -x 1:1 -- true; echo inner=$?'", d, d) == 0 &&
	      strstr(R.out, "/dev/ordlock") && strstr(R.out, "inner=1"),
	      "exec -F: the command inherits /dev/ordlock (ORDLOCK_FD) and holds the key");
	if (R.status || !strstr(R.out, "inner=1"))
		show();
	check(run("$C exec -n -d %s -x 1:1 -- true", d) == 0,
	      "exec -F: the key is free once the command ended");
	check(run("$C exec -F -d %s -x 1:1 -- sh -c 'exit 9'", d) == 9,
	      "exec -F: the command's exit status");
	check(run("$C exec -F -d %s -x 1:1 -- /no/such/program", d) == 127,
	      "exec -F: a command that does not exist gives 127");
	h = olt_holder_start(d, &k, 1);
	ok(h && !h->result, "a holder takes 1:1");
	snprintf(want, sizeof(want), "held (exclusive) by pid %d", h ? (int)h->pid : 0);
	/* util-linux's flock test: --no-fork --nonblock --conflict-exit-code */
	check(run("$C exec --no-fork --nonblock --conflict-exit-code 123 -d %s -x 1:1 -- echo never", d) == 123 &&
	      !strstr(R.out, "never") && strstr(R.err, want),
	      "exec -F -n -E 123 beside the holder: 123, the command does not run");

	/* FD: the keys stay with the shell's description */
	check(run("exec 9<>/dev/ordlock; $C exec -n -d %s -x 1:1 9; echo first=$?", d) == 0 &&
	      strstr(R.out, "first=1") && strstr(R.err, want),
	      "exec FD -n beside the holder: 1, naming the holder");
	olt_holder_stop(h);
	check(run("exec 9<>/dev/ordlock; $C exec -d %s -x 1:1 -s 1:2 9 || exit 50; "
		  "$C exec -n -q -d %s -x 1:1 -- true; echo held=$?; "
		  "$C exec -n -q -d %s -s 1:2 -- true; echo shared=$?; "
		  "$C exec -u -d %s -x 1:1 9 || exit 51; "
		  "$C exec -n -q -d %s -x 1:1 -- true; echo released=$?; "
		  "$C exec -n -q -d %s -x 1:2 -- true; echo still=$?; "
		  "$C exec -u 9 || exit 52; "
		  "$C exec -n -q -d %s -x 1:2 -- true; echo all=$?",
		  d, d, d, d, d, d, d) == 0 &&
	      strstr(R.out, "held=1") && strstr(R.out, "shared=0") &&
	      strstr(R.out, "released=0") && strstr(R.out, "still=1") &&
	      strstr(R.out, "all=0"),
	      "exec FD: the keys outlive ordlockctl; -u KEY releases one, -u all of them");
	if (!strstr(R.out, "all=0"))
		show();
	check(run("( $C exec -n -d %s -x 1:1 9 || exit 1; $C exec -n -q -d %s -x 1:1 -- true; "
		  "echo inside=$? ) 9<>/dev/ordlock; $C exec -n -q -d %s -x 1:1 -- true; echo after=$?",
		  d, d, d) == 0 && strstr(R.out, "inside=1") && strstr(R.out, "after=0"),
	      "exec FD: flock's subshell idiom; the key is free when the subshell closes 9");
	check(run("exec 9<>/dev/ordlock; $C exec -d %s -x 1:5 9 && $C exec -d %s -x 1:1 9", d, d) == 65 &&
	      strstr(R.err, "order"),
	      "exec FD: a key below one the description holds is an order violation (exit 65)");
	check(run("exec 9<>/dev/ordlock; $C exec -d %s -x 1:5 9 && $C exec -d %s-other -x 1:6 9",
		  d, d) == 75 && strstr(R.err, "holds keys"),
	      "exec FD -d: cannot move a description that holds keys (EBUSY: exit 75)");
	check(run("exec 9<>/dev/ordlock; $C exec -x 1:7 9 && $C exec -n -q -x 1:7 -- true; echo default=$?") == 0 &&
	      strstr(R.out, "default=1"),
	      "exec FD without -d: the description's own domain (default)");
	check(run("$C exec -x 1:1 0 < /dev/null") == 66 && strstr(R.err, "not open on /dev/ordlock"),
	      "exec FD of another file: exit 66 (EX_NOINPUT), saying so");
	check(run("$C exec -x 1:1 57") == 66 && strstr(R.err, "descriptor 57"),
	      "exec FD that is not open: exit 66");
	check(run("exec 9<>/dev/ordlock; $C exec -u -d %s -x 1:3 9", d) == 65 &&
	      strstr(R.err, "not held"),
	      "exec -u of a key the description does not hold: exit 65, not held");
	check(run("$C exec -u -x 1:1 -- true") == 64, "exec -u with a command: usage error");
	check(run("$C exec -F -x 1:1 9") == 64, "exec -F with FD: usage error");
}

/* pid of the first row of "locks -j -d D" whose role is @role, or 0 */
static int lock_row_pid(const char *d, const char *role, char *comm, size_t len)
{
	char *p, *e;
	int pid;

	if (!have_jq)
		return 0;
	run("$C locks -j -d %s | jq -r '[.locks[] | select(.role == \"%s\")][0] | \"\\(.pid) \\(.comm)\"'",
	    d, role);
	pid = atoi(R.out);
	p = strchr(R.out, ' ');
	if (comm && p) {
		p++;
		e = strchr(p, '\n');
		snprintf(comm, len, "%.*s", e ? (int)(e - p) : (int)strlen(p), p);
	}
	return pid;
}

/*
 * exec's keys are held in the name and pid of the command (the child takes
 * them after naming itself), not "ordlockctl"; blockers PID names who is in
 * the way of a waiting exec
 */
static void test_exec_holder(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], cmd[256], comm[64] = "", want[64];
	struct bg b, w;
	uint64_t deadline;
	int pid = 0, wpid = 0, held = 0;

	snprintf(d, sizeof(d), "%s", olt_domain("ctl-holder"));
	snprintf(cmd, sizeof(cmd), "$C exec -d %s -x 1:1 -- sleep 30", d);
	bg_start(&b, cmd);
	deadline = now_ms() + 10000;
	while (now_ms() < deadline && !held) {
		held = olt_probe(d, 1, 1, SH) == -EAGAIN;
		usleep(20000);
	}
	ok(held, "exec -- sleep 30 holds 1:1");
	if (have_jq) {
		pid = lock_row_pid(d, "holder", comm, sizeof(comm));
		ok(!strcmp(comm, "sleep"), "locks: the holder's COMM is the command's (\"%s\"), not ordlockctl",
		   comm);
		snprintf(want, sizeof(want), "/proc/%d/comm", pid);
		run("cat %s", want);
		check(pid > 0 && pid != b.pid && !strcmp(R.out, "sleep\n"),
		      "and its PID is the command's (pid %d runs sleep)", pid);
	} else {
		ok(1, "exec holder # SKIP no jq");
		ok(1, "exec holder # SKIP no jq");
	}
	/* a waiting exec: blockers of its pid name the sleep */
	snprintf(cmd, sizeof(cmd), "$C exec -d %s -x 1:1 -c 'true'", d);
	bg_start(&w, cmd);
	if (gt_wait_edges(d, 1, 20000))
		diag("no waiter seen");
	wpid = lock_row_pid(d, "waiter", comm, sizeof(comm));
	ok(!have_jq || !strcmp(comm, "sh"), "a waiting exec -c is named sh (\"%s\")", comm);
	if (have_jq) {
		snprintf(want, sizeof(want), "%d\n", pid);
		check(run("$C blockers -o pid -n %d", wpid) == 1 && !strcmp(R.out, want),
		      "blockers %d (the waiting exec): the pid of the sleep that holds 1:1, exit 1",
		      wpid);
		snprintf(want, sizeof(want), "\"blocking_pids\":[%d]", pid);
		check(run("$C blockers -j %d", wpid) == 1 && strstr(R.out, want),
		      "blockers -j: blocking_pids [%d], as pg_blocking_pids()", pid);
		check(run("$C blockers %d", pid) == 0 && strstr(R.out, "waits for no key"),
		      "blockers of the holder: it waits for nothing, exit 0");
		check(run("$C locks -d %s -p %d -o role,comm -n", d, pid) == 0 &&
		      strstr(R.out, "holder") && strstr(R.out, "sleep") && !strstr(R.out, "waiter"),
		      "locks -p PID -o ROLE,COMM -n: that process's row alone");
	} else {
		ok(1, "blockers # SKIP no jq");
		ok(1, "blockers # SKIP no jq");
		ok(1, "blockers # SKIP no jq");
		ok(1, "blockers # SKIP no jq");
	}
	if (pid > 0)
		kill(pid, SIGTERM);
	bg_finish(&b, &R, 20000);
	bg_finish(&w, &R, 20000);
	check(R.status == 0, "once the sleep ended, the waiting exec ran");
}

/*
 * Issue 42, defect 3, its lines as written: the pid the shell knows ($!
 * of "ordlockctl exec ... &") is one the views answer for, as flock(1)
 * users expect of "lslocks -p $!". exec's child takes the keys (named
 * after the command), and the views follow it: "blockers $W" of a waiting
 * exec names the holder's sleep (exit 1; it said "waits for no key", exit
 * 0), "locks -p $H" the holding exec's row (it said "no locks held").
 */
static void test_exec_background(void)
{
	static char out[sizeof(R.out)];
	char d[ORDLOCK_DOMAIN_NAME_MAX], want[64];
	long sleeper = 0;
	int st;
	char *p;

	snprintf(d, sizeof(d), "%s", olt_domain("shop"));
	st = run("D=%s; "
		 "$C exec -d $D -x 2:1 -- sleep 300 & H=$!; "
		 /* hang guards: 10 s for each to be seen */
		 "i=0; while $C exec -n -q -d $D -x 2:1 -- true && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; "
		 "$C exec -d $D -w 300 -x 2:1 -- true & W=$!; "
		 "i=0; until $C locks -d $D -n -o role | grep -q waiter || [ $i -ge 100 ]; do sleep 0.1; i=$((i+1)); done; "
		 "echo H=$H W=$W; "
		 "$C blockers $W; echo blockers=$?; "
		 "$C blockers -r -n -o pid $W; "
		 "$C locks -p $H -r -n -o key,role,comm; echo locks=$?; "
		 "$C owners -p $W -r -n -o comm,waits_for; "
		 "S=$(ps -o pid= --ppid $H); echo sleep=$S; "
		 "kill $S; wait $H; echo holder=$?; wait $W; echo waiter=$?",
		 d);
	/* show() of a failed point takes R.out apart */
	memcpy(out, R.out, sizeof(out));
	p = strstr(out, "sleep=");
	if (p)
		sleeper = strtol(p + 6, NULL, 10);
	snprintf(want, sizeof(want), "\n%ld\n", sleeper);
	check(st == 0 && strstr(out, "blockers=1\n") && strstr(out, "holder=143\n") &&
	      strstr(out, "waiter=0\n"),
	      "exec -x 2:1 -- sleep 300 & H=$!; exec -w 300 -x 2:1 -- true & W=$!: "
	      "blockers $W exits 1; the waiter runs once the sleep is killed");
	ok(sleeper > 0 && strstr(out, want),
	   "blockers -r -n -o pid $W: the pid of the sleep that holds 2:1 (%ld)", sleeper);
	ok(strstr(out, "\n2:1 holder sleep\nlocks=0\n") != NULL,
	   "locks -p $H -r -n -o key,role,comm: 2:1, holder, sleep (the row of exec's command)");
	ok(strstr(out, "\ntrue exclusive-2:1\n") != NULL,
	   "owners -p $W -r -n -o comm,waits_for: the waiting command (true) waits for exclusive 2:1");
}

/*
 * Without -w exec waits forever, as flock(1): a request that reaches the
 * kernel's max_timeout_ms is made again; -w longer than it is kept too
 */
static void test_exec_forever(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX], cmd[256];
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	long old = olt_param_get("max_timeout_ms");
	struct olt_holder *h;
	struct bg b;
	int i, waiting = 0;

	snprintf(d, sizeof(d), "%s", olt_domain("ctl-forever"));
	if (old <= 0 || olt_param_set("max_timeout_ms", 200)) {
		ok(0, "max_timeout_ms 200");
		return;
	}
	h = olt_holder_start(d, &k, 1);
	ok(h && !h->result, "a holder takes 1:1; max_timeout_ms is 200");
	check(run("$C exec -v -w 1 -d %s -x 1:1 -- true", d) == 1 &&
	      strstr(R.err, "asking again") && strstr(R.err, "timed out waiting"),
	      "exec -w 1 beyond max_timeout_ms 200: asks again, then times out (exit 1)");
	snprintf(cmd, sizeof(cmd), "$C exec -v -d %s -x 1:1 -- echo ran", d);
	bg_start(&b, cmd);
	/* it outlives several of the kernel's longest waits */
	for (i = 0; i < 20; i++) {
		usleep(100000);
		waiting += !bg_poll(&b, &R);
		if (waiting <= i)
			break;
	}
	ok(waiting == 20, "exec without -w: still waiting after 10 of the kernel's longest waits");
	olt_holder_stop(h);
	bg_finish(&b, &R, 20000);
	check(R.status == 0 && strstr(R.out, "ran") && strstr(R.err, "asking again"),
	      "and runs the command once the holder is gone (exit 0)");
	olt_param_set("max_timeout_ms", old);
}

#define NOBODY "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"

/* ordlockctl's own failures have their own codes, not the command's */
static void test_exit_codes(void)
{
	char d[ORDLOCK_DOMAIN_NAME_MAX];

	snprintf(d, sizeof(d), "%s", olt_domain("ctl-codes"));
	if (system("command -v setpriv >/dev/null 2>&1")) {
		ok(1, "exit 77 # SKIP no setpriv");
		ok(1, "exit 77 # SKIP no setpriv");
		return;
	}
	check(run(NOBODY " $C exec -d %s -x 1:1 -- true", d) == 77 &&
	      strstr(R.err, "Permission denied"),
	      "exec as a user who may not open /dev/ordlock: exit 77 (EX_NOPERM), not 2");
	check(run(NOBODY " $C domain %s set policy detect", d) == 77 &&
	      strstr(R.err, "CAP_NET_ADMIN"),
	      "domain set without CAP_NET_ADMIN: exit 77");
	check(run("$C exec -d %s -x 1:1 -- sh -c 'exit 2'", d) == 2,
	      "and a command's own 2 is passed on as it is");
}

int main(void)
{
	/*
	 * stop_actors() kills waiting actors; one may have answered just
	 * before, and gt_actor_stop() then writes to a dead actor's pipe
	 */
	signal(SIGPIPE, SIG_IGN);
	watchdog_start(280);
	find_ctl();
	diag("ordlockctl: %s", ctl);
	test_help();
	test_no_cycle();
	test_ring();
	test_overlap();
	test_history_monitor();
	test_monitor_order();
	test_domain();
	test_exec();
	test_exec_fd();
	test_exec_holder();
	test_exec_background();
	test_exec_forever();
	test_exit_codes();
	return tap_done();
}
