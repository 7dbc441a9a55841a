// SPDX-License-Identifier: GPL-2.0
/*
 * c_xdcycles: deadlocks across nodes (issue 41; docs/cluster.md, "Deadlocks
 * across nodes"), with ordlock-xdetectd started on every node, in the
 * cluster domain c_xd (policy detect, probe delay 100 ms).
 *
 * - Three cycles, each owner a process of its node that holds one key and
 *   then asks for the next one; the last to ask closes the cycle:
 *   "two": a 2-node cycle (node 1 holds 11 and wants 12, node 2 the
 *   reverse); "ring": a 3-node ring (21 -> 22 -> 23 -> 21); "mixed": two
 *   owners on node 1 (A holds 31 and wants 32, held by B: a local edge; B
 *   wants 33 in the DLM) and one on node 2 (C holds 33, wants 31), closed
 *   by A's local wait. Each ends with exactly one EDEADLK, whose cycle
 *   names every owner (steps of other nodes flagged and named by node),
 *   the others granted: no request times out (60 s: a hang guard). The
 *   victim's rule depends on the guests' clocks (the youngest wait), so
 *   which owner it is is not asserted.
 *   Measured (a figure for docs/performance.md, not asserted): the time
 *   from the closing wait to its end: its EDEADLK when it is the victim,
 *   else its grant after the victim's rollback.
 * - 300 transfers per node between four accounts (keys 41-44) taken one
 *   request at a time in ascending order: waits across nodes, no cycle:
 *   zero EDEADLK, and the accounts (a file of the shared directory) hold
 *   exactly what the transfers moved.
 * - The cost on waits that close no cycle: nodes 1 and 2 take and release
 *   key 51 in turn 200 times each, in c_xdt (policy timeout), then in c_xd
 *   (detect, the daemons on), twice in that order; the times side by side
 *   (not asserted: TCG's noise is larger than the difference).
 * - ordlockctl domain says "across nodes" while the daemon runs, and
 *   "this node only" after it stopped; then the turns on key 51 again in
 *   c_xd without the daemon (the kernel emits no events), alternating with
 *   c_xdt's again as above: the kernel's part of the cost apart from the
 *   daemon's, against timeout turns of the same minutes.
 *
 * cluster-timeout: 600
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clcase.h"
#include "libordlock.h"
#include "tap.h"
#include "xdcase.h"

#define XFERS	300
#define PINGS	200
#define ACCTS	4

static const char *dom = "c_xd", *tdom = "c_xdt";

static const struct xd_owner two[] = {
	{ .node = 1, .hold = 11, .want = 12, .stagger_ms = 0 },
	{ .node = 2, .hold = 12, .want = 11, .stagger_ms = 2000 },
};
static const struct xd_owner ring[] = {
	{ .node = 1, .hold = 21, .want = 22, .stagger_ms = 0 },
	{ .node = 2, .hold = 22, .want = 23, .stagger_ms = 1000 },
	{ .node = 3, .hold = 23, .want = 21, .stagger_ms = 2000 },
};
static const struct xd_owner mixed[] = {
	{ .node = 1, .hold = 31, .want = 32, .stagger_ms = 2000 },
	{ .node = 1, .hold = 32, .want = 33, .stagger_ms = 0 },
	{ .node = 2, .hold = 33, .want = 31, .stagger_ms = 1000 },
};

static void scenario(const char *s, const struct xd_owner *o, int n)
{
	char name[64], text[2048];
	int i, k, err, steps, other, victims = 0, granted = 0, mine = 0, closing = 0;
	long long ms;
	pid_t pids[8];

	for (i = 0; i < n; i++) {
		if (o[i].node != cl_node)
			continue;
		pids[mine] = fork();
		if (pids[mine] == 0)
			xd_owner_run(dom, s, i, &o[i]);
		mine++;
	}
	/* every owner holds its key before any asks */
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "held.%s.%d", s, i);
		for (k = 0; k < 600 && o[i].node == cl_node && !cl_exists(cl_path(name)); k++)
			usleep(100000);
	}
	snprintf(name, sizeof(name), "held.%s", s);
	cl_barrier(name);
	/* every node's holders, gathered by the daemons over CPG */
	if (cl_node == 1 && !strcmp(s, "ring"))
		ok(xd_jq_ok("locks -j", "[.all_nodes.locks[] | select(.role == \"holder\") | .owner.node] | unique | length == 3"),
		   "node1: %s: ordlockctl locks -j names the holders of all three nodes", s);
	if (cl_node == 1) {
		snprintf(name, sizeof(name), "go.%s", s);
		cl_touch(cl_path(name));
	}
	for (i = 0; i < mine; i++)
		waitpid(pids[i], NULL, 0);
	snprintf(name, sizeof(name), "done.%s", s);
	cl_barrier(name);

	for (i = 0; i < n; i++) {
		if (o[i].stagger_ms > o[closing].stagger_ms)
			closing = i;
		xd_result(s, i, &err, &ms, &steps, &other, text, sizeof(text));
		if (o[i].node == cl_node)
			ok(err == 0 || err == EDEADLK,
			   "node%d: %s: owner %d (holds %llu, wants %llu) %s after %lld ms",
			   cl_node, s, i, (unsigned long long)o[i].hold,
			   (unsigned long long)o[i].want,
			   err == 0 ? "granted" : err > 0 ? strerror(err) : "no result", ms);
		if (err == 0)
			granted++;
		if (err != EDEADLK)
			continue;
		victims++;
		if (cl_node != 1)
			continue;
		diag("%s: victim owner %d (node %d): %s", s, i, o[i].node, text);
		is_int(steps, n, "%s: the victim's cycle has its %d owners", s, n);
		ok(other >= 1 && other < n, "%s: ... %d of them on another node than the victim's, with its node id",
		   s, other);
		ok(strstr(text, "node ") != NULL, "%s: ... printed with their nodes", s);
	}
	if (cl_node != 1)
		return;
	is_int(victims, 1, "%s: exactly one EDEADLK", s);
	is_int(granted, n - 1, "%s: the others granted", s);
	xd_result(s, closing, &err, &ms, &steps, &other, text, sizeof(text));
	diag("figure: %s: from the closing wait to its %s: %lld ms", s,
	     err == EDEADLK ? "EDEADLK (it was the victim)" : "grant (after the victim's rollback)",
	     ms);
}

/* the accounts: ACCTS fixed-width fields; account i is read and written
 * alone (under its key only) */
static int acct_read(int fd, int i, long *v)
{
	char buf[17] = "";

	if (pread(fd, buf, 16, 16 * i) != 16)
		return -1;
	return sscanf(buf, "%15ld", v) == 1 ? 0 : -1;
}

static int acct_write(int fd, int i, long v)
{
	char buf[18];

	snprintf(buf, sizeof(buf), "%15ld ", v);
	return pwrite(fd, buf, 16, 16 * i) == 16 ? 0 : -1;
}

static int accts_read(int fd, long *v)
{
	int i;

	for (i = 0; i < ACCTS; i++)
		if (acct_read(fd, i, &v[i]))
			return -1;
	return 0;
}

static int accts_write(int fd, const long *v)
{
	int i;

	for (i = 0; i < ACCTS; i++)
		if (acct_write(fd, i, v[i]))
			return -1;
	return 0;
}

static void transfers(struct ordlock *ol)
{
	long v[ACCTS], delta[ACCTS] = { 0 }, sum[ACCTS] = { 0 };
	int i, j, fd, deadlocks = 0, errors = 0, ioerr = 0, first = 0;
	unsigned int seed = 7919u * (unsigned int)cl_node;
	long long t0;
	char name[32];
	FILE *f;

	if (cl_node == 1) {
		for (i = 0; i < ACCTS; i++)
			v[i] = 1000;
		fd = open(cl_path("accounts"), O_RDWR | O_CREAT | O_TRUNC, 0666);
		ok(fd >= 0 && accts_write(fd, v) == 0, "node1: four accounts of 1000");
		close(fd);
	}
	cl_barrier("accounts");
	fd = open(cl_path("accounts"), O_RDWR);
	if (fd < 0)
		bail_out("open %s: %s", cl_path("accounts"), strerror(errno));
	t0 = cl_ms();
	for (i = 0; i < XFERS; i++) {
		int a, b, lo, hi;
		struct ordlock_key k;

		seed = seed * 1103515245u + 12345u;
		a = (int)((seed >> 16) % ACCTS);
		b = (a + 1 + (int)((seed >> 8) % (ACCTS - 1))) % ACCTS;
		lo = a < b ? a : b;
		hi = a < b ? b : a;
		/* one key at a time, in ascending order */
		k = ORDLOCK_EX(1, 41 + lo);
		if (ordlock_acquire(ol, &k, 1, XD_WANT_MS, 0, NULL) == 0) {
			k = ORDLOCK_EX(1, 41 + hi);
			if (ordlock_acquire(ol, &k, 1, XD_WANT_MS, 0, NULL) == 0) {
				/* only the two accounts whose keys are held */
				if (acct_read(fd, a, &v[a]) || acct_read(fd, b, &v[b])) {
					ioerr++;
				} else {
					delta[a]--;
					delta[b]++;
					ioerr += !!acct_write(fd, a, v[a] - 1);
					usleep(100);
					ioerr += !!acct_write(fd, b, v[b] + 1);
				}
				ordlock_release_all(ol);
				continue;
			}
		}
		if (!first)
			first = errno;
		if (errno == EDEADLK)
			deadlocks++;
		else
			errors++;
		ordlock_release_all(ol);
	}
	is_int(deadlocks, 0, "node%d: %d transfers in ascending order: no EDEADLK", cl_node, XFERS);
	is_int(errors, 0, "node%d: ... every request granted (first error: %s)", cl_node,
	       strerror(first));
	is_int(ioerr, 0, "node%d: ... the file read and written every time", cl_node);
	diag("node%d: %d transfers in %lld ms", cl_node, XFERS, cl_ms() - t0);
	snprintf(name, sizeof(name), "delta.%d", cl_node);
	f = fopen(cl_path(name), "w");
	for (j = 0; f && j < ACCTS; j++)
		fprintf(f, "%ld\n", delta[j]);
	if (f)
		fclose(f);
	cl_barrier("transferred");
	if (cl_node == 1) {
		long total = 0, exact = 1;

		for (i = 1; i <= cl_nodes; i++) {
			snprintf(name, sizeof(name), "delta.%d", i);
			f = fopen(cl_path(name), "r");
			for (j = 0; f && j < ACCTS; j++) {
				long d = 0;

				if (fscanf(f, "%ld", &d) == 1)
					sum[j] += d;
			}
			if (f)
				fclose(f);
		}
		ok(accts_read(fd, v) == 0, "node1: the accounts read");
		for (j = 0; j < ACCTS; j++) {
			total += v[j];
			exact = exact && v[j] == 1000 + sum[j];
			diag("account %d: %ld (1000 %+ld)", j, v[j], sum[j]);
		}
		ok(exact, "node1: every account holds exactly what the transfers moved");
		is_int(total, 1000 * ACCTS, "node1: the total is unchanged");
	}
	close(fd);
}

/* nodes 1 and 2 take key 51 in turn: waits across nodes that close nothing */
static long long pingpong(const char *d)
{
	struct ordlock_key k = ORDLOCK_EX(1, 51);
	struct ordlock *ol = ordlock_open(d);
	int i, errors = 0;
	long long t0;

	if (!ol)
		bail_out("ordlock_open(%s): %s", d, strerror(errno));
	t0 = cl_ms();
	for (i = 0; i < PINGS; i++) {
		if (ordlock_acquire(ol, &k, 1, XD_WANT_MS, 0, NULL)) {
			errors++;
			continue;
		}
		usleep(2000);
		ordlock_release_all(ol);
	}
	t0 = cl_ms() - t0;
	is_int(errors, 0, "node%d: %s: %d turns on key 51, every one granted", cl_node, d, PINGS);
	ordlock_close(ol);
	return t0;
}

static long long t_timeout, t_detect;

/*
 * The turns in c_xdt (into *@t_t) and in c_xd (into *@t_d), twice each,
 * alternating: the machine's drift falls on both; barriers named @tag-...
 */
static void alternate(const char *tag, long long *t_t, long long *t_d)
{
	char name[64];
	int r;

	for (r = 0; r < 2; r++) {
		snprintf(name, sizeof(name), "%s-timeout-%d", tag, r);
		cl_barrier(name);
		if (cl_node <= 2)
			*t_t += pingpong(tdom);
		snprintf(name, sizeof(name), "%s-detect-%d", tag, r);
		cl_barrier(name);
		if (cl_node <= 2)
			*t_d += pingpong(dom);
	}
	snprintf(name, sizeof(name), "%s-done", tag);
	cl_barrier(name);
}

static void no_cycle_cost(void)
{
	alternate("ping", &t_timeout, &t_detect);
	if (cl_node <= 2)
		diag("figure: node%d: 2 x %d turns on one key across nodes: timeout %lld ms, detect %lld ms (x%.2f)",
		     cl_node, PINGS, t_timeout, t_detect,
		     t_timeout ? (double)t_detect / (double)t_timeout : 0.0);
}

int main(void)
{
	struct ordlock *cfg, *ol;
	struct ordlock_domain_config c;

	cfg = xd_setup(dom, 100);
	memset(&c, 0, sizeof(c));
	c.flags = ORDLOCK_DOMAIN_SET_POLICY;
	c.policy = ORDLOCK_POLICY_TIMEOUT;
	ok(ordlock_domain_config(cfg, tdom, &c) == 0 && cl_cluster_domain(cfg, tdom) == 0,
	   "node%d: %s is a cluster domain with policy timeout", cl_node, tdom);
	ok(xd_domain_says(dom, "across nodes"), "node%d: ordlockctl domain %s: detect across nodes",
	   cl_node, dom);

	scenario("two", two, 2);
	scenario("ring", ring, 3);
	scenario("mixed", mixed, 3);

	/* the deadlocks across nodes, named by node + pid on any node */
	ok(xd_jq_ok("cycles --history -j", "[.across_nodes.rounds[] | select(.state == \"decided\") | select([.cycle[].node] | unique | length >= 2)] | length >= 3"),
	   "node%d: ordlockctl cycles --history -j: the three cycles across nodes, each owner's node", cl_node);

	ol = ordlock_open(dom);
	if (!ol)
		bail_out("ordlock_open(%s): %s", dom, strerror(errno));
	cl_barrier("xfer");
	transfers(ol);
	ordlock_close(ol);

	no_cycle_cost();

	cl_barrier("stop");
	xd_stop();
	ok(xd_domain_says(dom, "this node only"),
	   "node%d: ordlockctl domain %s: detect on this node only once the daemon stopped",
	   cl_node, dom);
	/* the same turns in the detect domain without a daemon (no events):
	 * what of the cost is the kernel's path, what the daemon's */
	{
		long long t_alone = 0, t_timeout2 = 0;

		alternate("alone", &t_timeout2, &t_alone);
		if (cl_node <= 2)
			diag("figure: node%d: 2 x %d turns, detect without a daemon: %lld ms, timeout alternating with it %lld ms (x%.2f; with the daemon, before, x%.2f of this)",
			     cl_node, PINGS, t_alone, t_timeout2,
			     t_timeout2 ? (double)t_alone / (double)t_timeout2 : 0.0,
			     t_alone ? (double)t_detect / (double)t_alone : 0.0);
	}
	xd_log_tail("at the end");
	cl_barrier("stopped");
	memset(&c, 0, sizeof(c));
	c.flags = ORDLOCK_DOMAIN_SET_CLUSTER;
	ordlock_domain_config(cfg, tdom, &c);
	return cl_end(NULL, cfg, dom);
}
