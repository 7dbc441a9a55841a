// SPDX-License-Identifier: GPL-2.0
/*
 * c_xdetect_kill: a node killed while part of a cycle across nodes gives
 * no victim from its stale edges (issue 41; docs/cluster.md, "Deadlocks
 * across nodes": a node that died before its ACK aborts the round, and
 * the waits are probed again in the new membership).
 *
 * A 3-node ring in the cluster domain c_xdk (policy detect, probe delay
 * 100 ms, ordlock-xdetectd on every node): node 1's owner holds 61 and
 * wants 62, node 2's holds 62 and wants 63, node 3's holds 63 and wants 61.
 * Node 3's daemon is stopped (SIGSTOP) before the waits start, so the
 * probes of nodes 1 and 2 reach node 3 and go no further: the cycle stands
 * and is not yet found. Node 1 checks that every wait still waits, then
 * has the host kill node 3 (SIGKILL to its qemu). Asserted on nodes 1 and
 * 2: the membership change reached both daemons, the DLM's recovery frees
 * node 3's key, node 2's owner is granted, then node 1's: no EDEADLK
 * anywhere (a round with node 3's vertices, or a probe through them, must
 * not produce a victim), and no daemon decided a round.
 *
 * cluster-kills-a-node (run.sh runs this case last, at most one per run)
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

#define VICTIM	3

static const char *dom = "c_xdk";

static const struct xd_owner ring[] = {
	{ .node = 1, .hold = 61, .want = 62, .stagger_ms = 0 },
	{ .node = 2, .hold = 62, .want = 63, .stagger_ms = 500 },
	{ .node = 3, .hold = 63, .want = 61, .stagger_ms = 1000 },
};

/* ask the host to kill node @n; 1 once it is gone (60 s) */
static int kill_node(int n)
{
	char tmp[512], dst[512];
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s/.kill.%d.tmp", cl_control, n);
	snprintf(dst, sizeof(dst), "%s/.kill.%d", cl_control, n);
	f = fopen(tmp, "w");
	if (!f)
		return 0;
	fprintf(f, "%d c_xdetect_kill\n", cl_node);
	fclose(f);
	if (rename(tmp, dst))
		return 0;
	for (i = 0; i < 300 && cl_alive(n); i++)
		usleep(200000);
	return !cl_alive(n);
}

int main(void)
{
	struct ordlock *cfg;
	char name[64], text[2048];
	int i, k, err, steps, other;
	long long ms;
	pid_t owner = 0;

	cfg = xd_setup(dom, 100);
	if (cl_node == VICTIM)
		ok(kill(xd_pid, SIGSTOP) == 0, "node%d: its ordlock-xdetectd stopped (SIGSTOP)",
		   cl_node);
	cl_barrier("frozen");

	owner = fork();
	if (owner == 0)
		xd_owner_run(dom, "ring", cl_node - 1, &ring[cl_node - 1]);
	snprintf(name, sizeof(name), "held.ring.%d", cl_node - 1);
	for (k = 0; k < 600 && !cl_exists(cl_path(name)); k++)
		usleep(100000);
	cl_barrier("held");
	if (cl_node == 1)
		cl_touch(cl_path("go.ring"));
	/* every wait started (the last 1 s after the start), probes went out */
	sleep(4);
	cl_barrier("waiting");

	if (cl_node == VICTIM) {
		/* the host kills this node now */
		sleep(600);
		return 1;
	}
	if (cl_node == 1) {
		int pending = 1;

		for (i = 0; i < 3; i++) {
			snprintf(name, sizeof(name), "res.ring.%d", i);
			pending = pending && !cl_exists(cl_path(name));
		}
		ok(pending, "node1: the three waits of the ring still wait (the cycle stands, not found)");
		ok(kill_node(VICTIM), "node1: node%d killed by the host", VICTIM);
	}
	for (k = 0; k < 300 && cl_alive(VICTIM); k++)
		usleep(200000);
	ok(xd_logged("membership: 2 nodes", 60000),
	   "node%d: its ordlock-xdetectd saw node%d leave", cl_node, VICTIM);

	waitpid(owner, NULL, 0);
	xd_result("ring", cl_node - 1, &err, &ms, &steps, &other, text, sizeof(text));
	is_int(err, 0, "node%d: its owner granted after node%d's death (%lld ms; %s)", cl_node,
	       VICTIM, ms, err > 0 ? strerror(err) : err ? "no result" : "no EDEADLK");
	if (err == EDEADLK)
		diag("node%d: a false victim: %s", cl_node, text);
	ok(xd_jq_ok("cycles -j", ".across_nodes.stats.decided == 0 and .across_nodes.stats.victims == 0"),
	   "node%d: its daemon decided no round", cl_node);
	cl_barrier("granted");
	xd_stop();
	xd_log_tail("at the end");
	cl_barrier("end");
	return cl_end(NULL, cfg, dom);
}
