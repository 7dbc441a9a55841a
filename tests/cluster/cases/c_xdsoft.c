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
 * - "upgrade": node 1's owner U holds 71 shared and 72; node 2's owner V
 *   holds 71 shared and asks 72 (waits for U); 2 s later U upgrades 71
 *   (waits in the DLM for V's shared hold) and closes the cycle. Exactly
 *   one EDEADLK, the other granted; when U's upgrade is the victim (the
 *   youngest wait, as the guests' clocks say), it fails with a 2-step
 *   cycle and U still holds 71 shared (the conversion cancelled in the
 *   DLM). Before, XD_FAIL could not end an upgrade's wait (EOPNOTSUPP):
 *   such a cycle ended by the 20 s timeouts.
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

/* the upgrade's owners: U on node 1, V on node 2; res.up.N: err ms steps still */
static void upgrade_owner(void)
{
	struct ordlock_key k[2] = { ORDLOCK_SH(1, 71), ORDLOCK_EX(1, 72) };
	struct ordlock_cycle_step steps[ORDLOCK_CYCLE_MAX];
	uint32_t nodes[ORDLOCK_CYCLE_MAX];
	struct ordlock *ol = ordlock_open(dom);
	int ret, err = 0, n = 0, still = 0, j;
	char name[64];
	long long t0;
	FILE *f;

	if (!ol || ordlock_acquire(ol, k, cl_node == 1 ? 2 : 1, SOFT_WANT_MS, 0, NULL))
		_exit(11);
	snprintf(name, sizeof(name), "held.up.%d", cl_node);
	cl_touch(cl_path(name));
	for (j = 0; j < 6000 && !cl_exists(cl_path("go.up")); j++)
		usleep(20000);
	if (cl_node == 1)
		usleep(2000 * 1000);
	t0 = cl_ms();
	ret = cl_node == 1 ? ordlock_convert(ol, ORDLOCK_EX(1, 71), SOFT_WANT_MS, 0, NULL) :
			     ordlock_acquire(ol, &k[1], 1, SOFT_WANT_MS, 0, NULL);
	if (ret)
		err = errno;
	t0 = cl_ms() - t0;
	if (err == EDEADLK)
		n = ordlock_last_cycle_nodes(ol, steps, nodes, ORDLOCK_CYCLE_MAX);
	/* still held shared: a "downgrade" to the mode held succeeds */
	if (cl_node == 1 && err == EDEADLK)
		still = ordlock_convert(ol, ORDLOCK_SH(1, 71), 1000, 0, NULL) == 0;
	snprintf(name, sizeof(name), "res.up.%d", cl_node);
	f = fopen(cl_path(name), "w");
	if (f) {
		fprintf(f, "%d %lld %d %d\n", err, t0, n, still);
		fclose(f);
	}
	ordlock_release_all(ol);
	ordlock_close(ol);
	_exit(0);
}

static void upgrade(void)
{
	int err[3] = { -1, -1, -1 }, steps[3] = { 0 }, still[3] = { 0 }, i, k;
	long long ms[3] = { 0 };
	char name[64];
	pid_t pid = 0;
	FILE *f;

	if (cl_node <= 2) {
		pid = fork();
		if (pid == 0)
			upgrade_owner();
		snprintf(name, sizeof(name), "held.up.%d", cl_node);
		for (k = 0; k < 600 && !cl_exists(cl_path(name)); k++)
			usleep(100000);
	}
	cl_barrier("up.held");
	if (cl_node == 1)
		cl_touch(cl_path("go.up"));
	if (pid > 0)
		waitpid(pid, NULL, 0);
	cl_barrier("up.done");
	if (cl_node != 1)
		return;
	for (i = 1; i <= 2; i++) {
		snprintf(name, sizeof(name), "res.up.%d", i);
		f = fopen(cl_path(name), "r");
		if (f && fscanf(f, "%d %lld %d %d", &err[i], &ms[i], &steps[i], &still[i]) != 4)
			err[i] = -1;
		if (f)
			fclose(f);
		diag("upgrade: %s %s after %lld ms", i == 1 ? "U's upgrade" : "V's request",
		     err[i] == 0 ? "granted" : err[i] > 0 ? strerror(err[i]) : "no result", ms[i]);
	}
	is_int((err[1] == EDEADLK) + (err[2] == EDEADLK), 1,
	       "upgrade: a cycle closed by an upgrade across nodes: exactly one EDEADLK");
	is_int((err[1] == 0) + (err[2] == 0), 1, "upgrade: the other granted");
	if (err[1] == EDEADLK) {
		is_int(steps[1], 2, "upgrade: the upgrade was the victim, its cycle of 2 owners");
		ok(still[1], "upgrade: ... and its owner still holds 71 shared");
	} else {
		diag("upgrade: the victim was V's request (the youngest by the guests' clocks)");
	}
}

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
	upgrade();
	cl_barrier("upgraded");
	xd_stop();
	if (cl_node <= 3)
		xd_log_tail("at the end");
	cl_barrier("end");
	return cl_end(NULL, cfg, dom);
}
