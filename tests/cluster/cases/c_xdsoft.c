// SPDX-License-Identifier: GPL-2.0
/*
 * c_xdsoft: a deadlock across nodes that needs a soft edge across nodes
 * (issue 41; docs/cluster.md, "Deadlocks across nodes", *Edges*): a
 * request queued in the DLM behind another node's incompatible request
 * waits for it (the DLM grants its queues in order), which only the key's
 * master sees (its debugfs queue).
 *
 * In the cluster domain c_xs (policy detect, probe delay 100 ms), with
 * ordlock-xdetectd on every node:
 * - node 2's owner C holds 61 shared; node 3's owner B asks 61 exclusive
 *   (waits in the DLM behind C's hold: hard edge B -> C); 1 s later node
 *   1's owner A, which holds 62, asks 61 shared: compatible with C's hold
 *   but queued behind B's request (soft edge A -> B); 1 s later C asks 62
 *   (hard edge C -> A) and closes the cycle A -soft-> B -hard-> C -hard->
 *   A. Exactly one EDEADLK, whose cycle names the three owners (two of
 *   them on another node than the victim's), the others granted. Without
 *   the soft edge nothing finds it: every request ends by its 20 s
 *   timeout (ETIMEDOUT, the points fail), as before this case's change.
 *   Which owner is the victim depends on the guests' clocks (the
 *   youngest wait): not asserted.
 *   Measured (not asserted): the time from the closing wait to its end.
 *
 * cluster-timeout: 180
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clcase.h"
#include "libordlock.h"
#include "tap.h"
#include "xdcase.h"

#define SOFT_WANT_MS	20000	/* a cycle not found ends here: a failure */

static const char *dom = "c_xs";

/* C, B, A; node, hold, want, stagger, hold shared, want shared, timeout */
static const struct xd_owner soft[] = {
	{ 2, 61, 62, 2000, true, false, SOFT_WANT_MS },
	{ 3, 0, 61, 0, false, false, SOFT_WANT_MS },
	{ 1, 62, 61, 1000, false, true, SOFT_WANT_MS },
};
static const char *const names[] = { "C", "B", "A" };

int main(void)
{
	int i, k, err, steps, other, victims = 0, granted = 0;
	char name[64], text[2048];
	struct ordlock *cfg;
	pid_t pid = 0;
	long long ms;

	cfg = xd_setup(dom, 100);
	for (i = 0; i < 3; i++) {
		if (soft[i].node != cl_node)
			continue;
		pid = fork();
		if (pid == 0)
			xd_owner_run(dom, "soft", i, &soft[i]);
		snprintf(name, sizeof(name), "held.soft.%d", i);
		for (k = 0; k < 600 && !cl_exists(cl_path(name)); k++)
			usleep(100000);
	}
	cl_barrier("held");
	if (cl_node == 1)
		cl_touch(cl_path("go.soft"));
	if (pid > 0)
		waitpid(pid, NULL, 0);
	cl_barrier("done");
	for (i = 0; i < 3; i++) {
		xd_result("soft", i, &err, &ms, &steps, &other, text, sizeof(text));
		if (soft[i].node == cl_node)
			ok(err == 0 || err == EDEADLK, "node%d: owner %s %s after %lld ms",
			   cl_node, names[i],
			   err == 0 ? "granted" : err > 0 ? strerror(err) : "no result", ms);
		granted += err == 0;
		if (err != EDEADLK)
			continue;
		victims++;
		if (cl_node != 1)
			continue;
		diag("victim %s (node %d): %s", names[i], soft[i].node, text);
		is_int(steps, 3, "the victim's cycle has its 3 owners");
		is_int(other, 2, "... 2 of them on other nodes, with their node ids");
	}
	if (cl_node == 1) {
		is_int(victims, 1, "a cycle through a soft edge across nodes: exactly one EDEADLK");
		is_int(granted, 2, "the others granted");
		xd_result("soft", 0, &err, &ms, &steps, &other, text, sizeof(text));
		diag("figure: soft: from the closing wait to its %s: %lld ms",
		     err == EDEADLK ? "EDEADLK (it was the victim)" :
		     "grant (after the victim's rollback)", ms);
	}
	cl_barrier("checked");
	xd_stop();
	if (cl_node <= 3)
		xd_log_tail("at the end");
	cl_barrier("end");
	return cl_end(NULL, cfg, dom);
}
