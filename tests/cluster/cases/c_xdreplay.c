// SPDX-License-Identifier: GPL-2.0
/*
 * c_xdreplay: a daemon that starts, or restarts, after waits began learns
 * them (issue 41; docs/cluster.md, "Deadlocks across nodes": XD_HELLO's
 * registration replays the current waits as XD_EVENT WAIT, each with its
 * generation and start; the probe delay runs from that start).
 *
 * In the cluster domain c_xdr (policy detect, probe delay 100 ms):
 * - "cold": no ordlock-xdetectd runs. Node 1's owner holds 81 and wants
 *   82, node 2's holds 82 and wants 81 (the last to ask, 500 ms later):
 *   a 2-node cycle that nothing can see. Both still wait 3 s later; then
 *   the daemons start on every node. Exactly one EDEADLK (a 2-step cycle,
 *   one step of the other node), the other owner granted: before the
 *   replay both timed out (60 s hang guard).
 * - "restart": the daemons run. Node 1's daemon is killed (SIGKILL); node
 *   1's owner, which holds 83, waits for 84 (held by node 2's owner) while
 *   no daemon runs there; the daemon is started again: it follows that
 *   wait (its state, "ordlockctl cycles -j", names the owner's pid, the
 *   wait probed), which before the replay it never knew. Then node 2's
 *   owner asks for 83 and closes the cycle: exactly one EDEADLK, the other
 *   granted.
 *
 * Cost: 11-13 s on 6.1 under TCG (docs/testing.md), of which 3 s of waiting
 * with no daemon and two daemon starts.
 *
 * cluster-timeout: 300
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clcase.h"
#include "libordlock.h"
#include "tap.h"
#include "xdcase.h"

static const char *dom = "c_xdr";

static const struct xd_owner cold[] = {
	{ .node = 1, .hold = 81, .want = 82, .stagger_ms = 0 },
	{ .node = 2, .hold = 82, .want = 81, .stagger_ms = 500 },
};
static const struct xd_owner ra = { .node = 1, .hold = 83, .want = 84, .stagger_ms = 0 };
static const struct xd_owner rb = { .node = 2, .hold = 84, .want = 83, .stagger_ms = 0 };

/* fork node @cl_node's owner of scenario @s (index 0 of its own files) */
static pid_t owner_start(const char *s, int i, const struct xd_owner *o)
{
	char name[64];
	pid_t pid;
	int k;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		xd_owner_run(dom, s, i, o);
	snprintf(name, sizeof(name), "held.%s.%d", s, i);
	for (k = 0; k < 600 && !cl_exists(cl_path(name)); k++)
		usleep(100000);
	ok(pid > 0 && cl_exists(cl_path(name)), "node%d: %s owner %d holds its key", cl_node, s,
	   i);
	return pid;
}

/*
 * Node 1: of the outcomes res.@s0.@i0 and res.@s1.@i1, exactly one
 * EDEADLK with a cycle across the 2 nodes, the other granted
 */
static void one_victim(const char *what, const char *s0, int i0, const char *s1, int i1)
{
	int err[2], steps[2], other[2], v;
	char text[2][2048];
	long long ms[2];

	xd_result(s0, i0, &err[0], &ms[0], &steps[0], &other[0], text[0], sizeof(text[0]));
	xd_result(s1, i1, &err[1], &ms[1], &steps[1], &other[1], text[1], sizeof(text[1]));
	diag("%s: %d after %lld ms, %d after %lld ms", what, err[0], ms[0], err[1], ms[1]);
	ok((err[0] == EDEADLK) + (err[1] == EDEADLK) == 1 &&
	   (err[0] == 0 || err[1] == 0),
	   "%s: exactly one EDEADLK, the other owner granted (%s, %s)", what,
	   err[0] > 0 ? strerror(err[0]) : err[0] ? "no result" : "granted",
	   err[1] > 0 ? strerror(err[1]) : err[1] ? "no result" : "granted");
	v = err[0] == EDEADLK ? 0 : 1;
	if (err[v] == EDEADLK) {
		diag("%s: %s", what, text[v]);
		ok(steps[v] == 2 && other[v] == 1,
		   "%s: the victim's cycle has 2 steps, one of the other node (%d, %d)", what,
		   steps[v], other[v]);
	} else {
		ok(0, "%s: the victim's cycle (no victim)", what);
	}
}

/* The daemon's state names the wait of owner process @pid, probed (10 s) */
static int follows(pid_t pid)
{
	char filter[256];
	int k;

	snprintf(filter, sizeof(filter),
		 "[.across_nodes.waits[] | select(.vertex.pid == %d and .probed)] | length == 1",
		 (int)pid);
	for (k = 0; k < 20; k++) {
		if (xd_jq_ok("cycles -j", filter))
			return 1;
		usleep(500000);
	}
	return 0;
}

int main(void)
{
	char log[512], old[512];
	struct ordlock *cfg;
	pid_t owner = 0, dead;
	int st = -1;

	cl_init();
	if (cl_nodes < 3) {
		printf("1..0 # SKIP needs 3 nodes (every node's daemon in the group)\n");
		return 0;
	}
	cfg = ordlock_open("default");
	if (!cfg)
		bail_out("ordlock_open: %s", strerror(errno));
	xd_domain(cfg, dom, 100);
	cl_barrier("domain");

	/* cold: the cycle forms while no daemon runs anywhere */
	if (cl_node <= 2)
		owner = owner_start("cold", cl_node - 1, &cold[cl_node - 1]);
	cl_barrier("cold.held");
	if (cl_node == 1)
		cl_touch(cl_path("go.cold"));
	sleep(3);
	if (cl_node == 1)
		ok(!cl_exists(cl_path("res.cold.0")) && !cl_exists(cl_path("res.cold.1")),
		   "cold: both owners still wait, no daemon running");
	cl_barrier("cold.waiting");
	xd_start();
	if (!xd_wait_on())
		cl_views("no detection across nodes");
	cl_barrier("cold.on");
	if (owner > 0)
		waitpid(owner, NULL, 0);
	owner = 0;
	cl_barrier("cold.done");
	if (cl_node == 1)
		one_victim("cold", "cold", 0, "cold", 1);

	/* restart: node 1's daemon killed, its owner's wait begins meanwhile */
	if (cl_node == 1) {
		dead = xd_pid;
		ok(kill(dead, SIGKILL) == 0 && waitpid(dead, &st, 0) == dead &&
		   WIFSIGNALED(st), "node1: its ordlock-xdetectd killed (SIGKILL)");
		xd_pid = 0;
		/* a new log: "detection across nodes on" again is the new one's */
		snprintf(log, sizeof(log), "%s/xd.%d.log", cl_shared, cl_node);
		snprintf(old, sizeof(old), "%s/xd.%d.killed.log", cl_shared, cl_node);
		ok(rename(log, old) == 0, "node1: the killed daemon's log set aside");
		owner = owner_start("ra", 0, &ra);
	} else if (cl_node == 2) {
		owner = owner_start("rb", 0, &rb);
	}
	cl_barrier("restart.held");
	if (cl_node == 1) {
		cl_touch(cl_path("go.ra"));
		sleep(2);
		ok(!cl_exists(cl_path("res.ra.0")), "restart: node1's owner waits for 84");
		xd_start();
		if (!xd_wait_on())
			cl_views("no detection across nodes after the restart");
		ok(follows(owner),
		   "restart: node1's new ordlock-xdetectd follows the wait that began before it (pid %d), probed",
		   (int)owner);
	}
	cl_barrier("restart.on");
	if (cl_node == 2)
		cl_touch(cl_path("go.rb"));
	if (owner > 0)
		waitpid(owner, NULL, 0);
	cl_barrier("restart.done");
	if (cl_node == 1)
		one_victim("restart", "ra", 0, "rb", 0);
	xd_stop();
	if (cl_node == 1)
		xd_log_tail("at the end");
	cl_barrier("end");
	return cl_end(NULL, cfg, dom);
}
