// SPDX-License-Identifier: GPL-2.0
/*
 * c_xdview: one view of the whole cluster from any node (issue 41), with
 * ordlock-xdetectd on every node, in the cluster domain c_xv (policy
 * detect, probe delay 100 ms).
 *
 * - Node 2's process H holds 1:61; node 2's W2 waits for it behind H (a
 *   local wait), node 1's W1 waits for it in the DLM. From node 1:
 *   "ordlockctl locks" has H's row as node 2 + pid + comm; "blockers W1"
 *   (pretty and -j) names H as node 2 + pid, edge "cluster"; "blockers
 *   2:W2" (another node's owner, pretty and -j) names H, a hard edge on
 *   node 2. Today's code (DLM rows without pid, no NODE:PID) fails them.
 * - A 2-node cycle (node 1 holds 71 and wants 72, node 2 the reverse):
 *   one EDEADLK; then node 3, in no part of it, prints it with "cycles
 *   --history": "deadlock across nodes", the victim and both owners as
 *   node + pid + comm, and exits 1.
 *
 * The checks on views retry up to 30 s (a hang guard: the waits are seen
 * by the daemons of their nodes after their start).
 *
 * cluster-timeout: 300
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clcase.h"
#include "libordlock.h"
#include "tap.h"
#include "xdcase.h"

static const char *dom = "c_xv";

static const struct xd_owner cy[] = {
	{ .node = 1, .hold = 71, .want = 72, .stagger_ms = 0 },
	{ .node = 2, .hold = 72, .want = 71, .stagger_ms = 1000 },
};

/* "ordlockctl ARGS" exits @rc and a line of its output matches @re (ERE),
 * within 30 s (a hang guard); else its output in diagnostics */
static int xv_grep(const char *args, int rc, const char *re)
{
	char cmd[1536], name[32];
	int st = -1, k;

	/* the regex goes in single quotes */
	if (strchr(re, '\''))
		bail_out("xv_grep: a quote in /%s/", re);
	snprintf(name, sizeof(name), "out.%d.txt", cl_node);
	for (k = 0; k < 60; k++) {
		snprintf(cmd, sizeof(cmd),
			 "ORDLOCK_XDETECTD_SOCKET=/tmp/ordlock-xdetectd.sock %s/tools/ordlockctl/ordlockctl %s >%s 2>&1; test $? = %d && grep -Eq '%s' %s",
			 getenv("ORDLOCK_REPO"), args, cl_path(name), rc, re, cl_path(name));
		st = system(cmd);
		if (st == 0)
			return 1;
		usleep(500000);
	}
	diag("node%d: ordlockctl %s: not /%s/ (exit %d wanted):", cl_node, args, re, rc);
	snprintf(cmd, sizeof(cmd), "head -c 2000 %s | sed 's/^/# /'", cl_path(name));
	fflush(stdout);
	if (system(cmd) < 0)
		diag("no output");
	return 0;
}

/* xd_jq_ok() within 30 s */
static int xv_jq(const char *args, const char *filter)
{
	int k;

	for (k = 0; k < 59; k++) {
		if (xd_jq_ok(args, filter))
			return 1;
		usleep(500000);
	}
	return xd_jq_ok(args, filter);
}

static void pid_write(const char *name, pid_t pid)
{
	FILE *f = fopen(cl_path(name), "w");

	if (f) {
		fprintf(f, "%d\n", (int)pid);
		fclose(f);
	}
}

static int pid_read(const char *name)
{
	int pid = 0, k;
	FILE *f;

	for (k = 0; k < 600 && !cl_exists(cl_path(name)); k++)
		usleep(100000);
	f = fopen(cl_path(name), "r");
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return pid;
}

/* A process that takes 1:61 (60 s: a hang guard), then holds it until @until exists */
static pid_t taker(const char *until)
{
	pid_t p;

	fflush(stdout);
	p = fork();
	if (p == 0) {
		struct ordlock_key k = ORDLOCK_EX(1, 61);
		struct ordlock *ol = ordlock_open(dom);
		int i;

		if (!ol || ordlock_acquire(ol, &k, 1, XD_WANT_MS, 0, NULL))
			_exit(1);
		if (until)
			for (i = 0; i < 1200 && !cl_exists(cl_path(until)); i++)
				usleep(100000);
		ordlock_release_all(ol);
		ordlock_close(ol);
		_exit(0);
	}
	return p;
}

static void views(void)
{
	char args[128], re[256];
	pid_t h = 0, w = 0;
	int hp, w1, w2, st;

	if (cl_node == 2) {
		h = taker("release");
		pid_write("pid.h", h);
		/* H holds before W2 asks: its wait is behind H */
		xv_grep("locks -d c_xv -r -n -o PID,ROLE", 0, "holder");
		w = taker(NULL);
		pid_write("pid.w2", w);
	}
	if (cl_node == 1) {
		pid_read("pid.w2");
		w = taker(NULL);
		pid_write("pid.w1", w);
	}
	hp = pid_read("pid.h");
	w1 = pid_read("pid.w1");
	w2 = pid_read("pid.w2");
	cl_barrier("waiting");
	if (cl_node == 1) {
		snprintf(re, sizeof(re), "^c_xv +1:61 +holder +[0-9]+ +[0-9]+ +%d +c_xdview +exclusive .* 2 *$", hp);
		ok(xv_grep("locks -d c_xv", 0, re),
		   "node1: locks: node 2's holder of 1:61 as node 2 + pid %d + comm", hp);
		snprintf(re, sizeof(re), "^c_xv +1:61 +waiter +[0-9]+ +[0-9]+ +%d +c_xdview +exclusive .* 2 *$", w2);
		ok(xv_grep("locks -d c_xv", 0, re),
		   "node1: locks: node 2's waiter of 1:61 as node 2 + pid %d", w2);
		ok(xv_grep("locks -d c_xv", 0, "^other nodes.{1,2}owners \\(NODE\\): as their ordlock-xdetectd answered over CPG \\(nodes 1 \\(this node\\), 2, 3\\)"),
		   "node1: locks: says where the other nodes' rows come from");
		snprintf(re, sizeof(re),
			 "^1:61: pid %d \\(owner [0-9]+\\) holds it on this node and waits for its lock in the cluster: held by node 2 pid %d \\(c_xdview\\)$",
			 w1, hp);
		ok(xv_grep("locks -d c_xv", 0, re),
		   "node1: locks: the note on pid %d waiting in the cluster names node 2's pid %d", w1, hp);
		snprintf(args, sizeof(args), "blockers -d c_xv %d", w1);
		snprintf(re, sizeof(re), "^ *%d +c_xdview +[0-9]+ +holds exclusive +1:61 +cluster .* 2 *$", hp);
		ok(xv_grep(args, 1, re), "node1: blockers %d: node 2's pid %d holds 1:61 (cluster)", w1, hp);
		snprintf(args, sizeof(args), "-j blockers -d c_xv %d", w1);
		snprintf(re, sizeof(re),
			 "([.blockers[] | select(.pid == %d and .node == 2 and .edge == \"cluster\" and .comm == \"c_xdview\")] | length == 1) and .blocking_nodes == [2] and .node == 1",
			 hp);
		ok(xv_jq(args, re), "node1: blockers -j %d: node 2's pid %d, edge cluster", w1, hp);
		snprintf(args, sizeof(args), "blockers -d c_xv 2:%d", w2);
		snprintf(re, sizeof(re), "^ *%d +c_xdview +[0-9]+ +holds exclusive +1:61 +hard .* 2 *$", hp);
		ok(xv_grep(args, 1, re), "node1: blockers 2:%d: node 2's pid %d holds 1:61 (hard)", w2, hp);
		snprintf(args, sizeof(args), "-j blockers -d c_xv 2:%d", w2);
		snprintf(re, sizeof(re),
			 ".node == 2 and .blocking_pids == [%d] and ([.blockers[] | select(.pid == %d and .node == 2 and .edge == \"hard\")] | length == 1)",
			 hp, hp);
		ok(xv_jq(args, re), "node1: blockers -j 2:%d: node 2's pid %d, hard", w2, hp);
		ok(xv_grep("blockers 2:999999", 0, "^pid 999999 of node 2 waits for no key"),
		   "node1: blockers 2:999999: no such wait, exit 0");
	}
	cl_barrier("viewed");
	if (cl_node == 2)
		cl_touch(cl_path("release"));
	if (h > 0) {
		waitpid(h, &st, 0);
		ok(WIFEXITED(st) && !WEXITSTATUS(st), "node%d: H held and released 1:61", cl_node);
	}
	if (w > 0) {
		waitpid(w, &st, 0);
		ok(WIFEXITED(st) && !WEXITSTATUS(st), "node%d: the waiter granted 1:61", cl_node);
	}
	cl_barrier("released");
}

static void history(void)
{
	char name[64], re[256];
	int i, k, err, steps, other, victims = 0;
	long long ms;
	char text[2048];
	pid_t pids[2];
	int mine = 0;

	for (i = 0; i < 2; i++) {
		if (cy[i].node != cl_node)
			continue;
		fflush(stdout);
		pids[mine] = fork();
		if (pids[mine] == 0)
			xd_owner_run(dom, "cy", i, &cy[i]);
		snprintf(name, sizeof(name), "pid.cy.%d", i);
		pid_write(name, pids[mine]);
		mine++;
	}
	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "held.cy.%d", i);
		for (k = 0; k < 600 && cy[i].node == cl_node && !cl_exists(cl_path(name)); k++)
			usleep(100000);
	}
	cl_barrier("held.cy");
	if (cl_node == 1)
		cl_touch(cl_path("go.cy"));
	for (i = 0; i < mine; i++)
		waitpid(pids[i], NULL, 0);
	cl_barrier("done.cy");
	for (i = 0; i < 2; i++) {
		xd_result("cy", i, &err, &ms, &steps, &other, text, sizeof(text));
		victims += err == EDEADLK;
	}
	is_int(victims, 1, "node%d: the 2-node cycle: exactly one EDEADLK", cl_node);
	if (cl_node == 3) {
		int p0 = pid_read("pid.cy.0"), p1 = pid_read("pid.cy.1");

		ok(xv_grep("cycles --history -d c_xv", 1,
			   "^deadlock across nodes \\(round [0-9]+:[0-9]+\\) at .* in domain \"c_xv\" \\(2 owners\\), victim node [12] pid [0-9]+ \\(c_xdview\\)"),
		   "node3 (not in the cycle): cycles --history: the deadlock across nodes, its victim");
		snprintf(re, sizeof(re),
			 "^  node 1 pid %d \\(c_xdview\\) waits for exclusive 1:72.*; blocked by node 2 pid %d \\(c_xdview\\)$",
			 p0, p1);
		ok(xv_grep("cycles --history -d c_xv", 1, re),
		   "node3: cycles --history: node 1's pid %d waits, blocked by node 2's pid %d", p0, p1);
		snprintf(re, sizeof(re),
			 "^  node 2 pid %d \\(c_xdview\\) waits for exclusive 1:71.*; blocked by node 1 pid %d \\(c_xdview\\)$",
			 p1, p0);
		ok(xv_grep("cycles --history -d c_xv", 1, re),
		   "node3: cycles --history: node 2's pid %d waits, blocked by node 1's pid %d", p1, p0);
	}
	cl_barrier("history");
}

int main(void)
{
	struct ordlock *cfg = xd_setup(dom, 100);

	views();
	history();
	cl_barrier("stop");
	xd_stop();
	cl_barrier("stopped");
	if (cl_node == 1)
		ok(xv_grep("locks -d c_xv", 0, "^this view is this node.s only \\(other nodes.{1,2}owners unknown\\): no ordlock-xdetectd runs on this node"),
		   "node1: locks without the daemon: this node's view only, and why");
	cl_barrier("end");
	return cl_end(NULL, cfg, dom);
}
