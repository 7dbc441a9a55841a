/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the cluster cases of detection across nodes (c_xdcycles,
 * c_xdetect_kill, c_xdreplay; header only, after clcase.h):
 *
 * xd_domain(cfg, name, delay_ms) makes NAME a cluster domain with policy
 * detect and that probe delay (a point); xd_start() starts this node's
 * ordlock-xdetectd (tools/xdetectd, its log in the shared directory:
 * xd.N.log) and xd_wait_on() waits (60 s hang guard) until it logs
 * "detection across nodes on" (every node of the DLM in its group);
 * xd_stop() stops it (SIGTERM; a point: it exits 0); xd_log_tail() puts
 * its log's last lines in TAP diagnostics; xd_jq_ok(args, filter): jq's
 * filter holds of "ordlockctl ARGS"'s JSON (the daemon's socket in /tmp).
 *
 * The owners of a scenario (struct xd_owner): each a process of its node
 * with its own descriptor (an owner), which holds one key, waits until the
 * scenario's start (the file go.S in the shared directory), sleeps its
 * stagger, then asks for the key it wants (60 s: a hang guard) and writes
 * how it ended (res.S.I: errno, ms, the cycle's steps, those of another
 * node with their node id, and the cycle as libordlock prints it). The one with the largest
 * stagger closes the cycle.
 */
#ifndef ORDLOCK_XDCASE_H
#define ORDLOCK_XDCASE_H

#include <signal.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "clcase.h"

#define XD_WANT_MS	60000	/* a hang guard: a cycle ends well before */

struct xd_owner {
	int node;
	uint64_t hold, want;	/* key ids of rank 1; hold 0: holds nothing */
	int stagger_ms;
	/* optional: shared instead of exclusive; the want's timeout (0:
	 * XD_WANT_MS) */
	bool hold_shared, want_shared;
	int want_ms;
};

static pid_t xd_pid;

static inline int xd_domain(struct ordlock *cfg, const char *name, unsigned int delay_ms)
{
	struct ordlock_domain_config c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.flags = ORDLOCK_DOMAIN_SET_POLICY | ORDLOCK_DOMAIN_SET_DETECT_DELAY;
	c.policy = ORDLOCK_POLICY_DETECT;
	c.detect_delay_ms = delay_ms;
	ret = ordlock_domain_config(cfg, name, &c);
	if (!ret)
		ret = cl_cluster_domain(cfg, name);
	return ok(ret == 0, "node%d: %s is a cluster domain with policy detect (%u ms)%s%s",
		  cl_node, name, delay_ms, ret ? ": " : "", ret ? strerror(errno) : "");
}

static inline void xd_log_tail(const char *why)
{
	char cmd[640], line[512];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "tail -n 30 %s/xd.%d.log", cl_shared, cl_node);
	f = popen(cmd, "r");
	if (!f)
		return;
	diag("node%d: %s: ordlock-xdetectd's log:", cl_node, why);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		diag("node%d: xd: %s", cl_node, line);
	}
	pclose(f);
}

static inline void xd_start(void)
{
	const char *repo = getenv("ORDLOCK_REPO");
	char bin[512];

	snprintf(bin, sizeof(bin), "%s/tools/xdetectd/ordlock-xdetectd", repo ? repo : ".");
	fflush(stdout);
	xd_pid = fork();
	if (xd_pid == 0) {
		char log[512];
		FILE *f;

		snprintf(log, sizeof(log), "%s/xd.%d.log", cl_shared, cl_node);
		f = freopen(log, "a", stderr);
		if (!f)
			_exit(126);
		execl(bin, "ordlock-xdetectd", "-s", "/tmp/ordlock-xdetectd.sock", (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	ok(xd_pid > 0, "node%d: ordlock-xdetectd started", cl_node);
}

/* the daemon logged @what (within @ms) */
static inline int xd_logged(const char *what, int ms)
{
	char p[512], line[512];
	long long t0 = cl_ms();

	snprintf(p, sizeof(p), "%s/xd.%d.log", cl_shared, cl_node);
	do {
		FILE *f = fopen(p, "r");
		int found = 0;

		if (f) {
			while (!found && fgets(line, sizeof(line), f))
				found = strstr(line, what) != NULL;
			fclose(f);
		}
		if (found)
			return 1;
		usleep(100000);
	} while (cl_ms() - t0 < ms);
	return 0;
}

static inline int xd_wait_on(void)
{
	int on = xd_logged("detection across nodes on", 60000);

	if (!ok(on, "node%d: ordlock-xdetectd: detection across nodes on", cl_node))
		xd_log_tail("not on");
	return on;
}

static inline void xd_stop(void)
{
	int st = -1;

	if (xd_pid <= 0)
		return;
	kill(xd_pid, SIGTERM);
	waitpid(xd_pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "node%d: ordlock-xdetectd stopped (status %d)",
	   cl_node, st);
	xd_pid = 0;
}

/*
 * The start of a case on every node: three nodes (else a plan of 0, and
 * exit), @dom a cluster domain with policy detect (@delay_ms), the daemon
 * started and on everywhere; the descriptor of "default" returned
 */
static inline struct ordlock *xd_setup(const char *dom, unsigned int delay_ms)
{
	struct ordlock *cfg;

	cl_init();
	if (cl_nodes < 3) {
		printf("1..0 # SKIP needs 3 nodes\n");
		exit(0);
	}
	cfg = ordlock_open("default");
	if (!cfg)
		bail_out("ordlock_open: %s", strerror(errno));
	xd_domain(cfg, dom, delay_ms);
	xd_start();
	cl_barrier("started");
	if (!xd_wait_on())
		cl_views("no detection across nodes");
	cl_barrier("on");
	return cfg;
}

/* "ordlockctl domain NAME" says @what */
static inline int xd_domain_says(const char *name, const char *what)
{
	char cmd[640], out[4096] = "";
	size_t len = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/tools/ordlockctl/ordlockctl domain %s 2>&1",
		 getenv("ORDLOCK_REPO"), name);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (len < sizeof(out) - 1 && fgets(out + len, (int)(sizeof(out) - len), f))
		len = strlen(out);
	pclose(f);
	if (strstr(out, what))
		return 1;
	diag("node%d: ordlockctl domain %s:\n%s", cl_node, name, out);
	return 0;
}

/* jq's FILTER is true of "ordlockctl ARGS"'s JSON (the daemon's socket in /tmp) */
static inline int xd_jq_ok(const char *args, const char *filter)
{
	char cmd[1024], name[32];
	int st;

	/* a file of this node's: the nodes ask at once */
	snprintf(name, sizeof(name), "jq.%d.json", cl_node);
	snprintf(cmd, sizeof(cmd),
		 "ORDLOCK_XDETECTD_SOCKET=/tmp/ordlock-xdetectd.sock %s/tools/ordlockctl/ordlockctl %s >%s 2>&1; jq -e '%s' %s >/dev/null",
		 getenv("ORDLOCK_REPO"), args, cl_path(name), filter, cl_path(name));
	st = system(cmd);
	if (st == 0)
		return 1;
	snprintf(cmd, sizeof(cmd), "head -c 1500 %s | sed 's/^/# /'", cl_path(name));
	fflush(stdout);
	if (system(cmd) < 0)
		diag("no output");
	return 0;
}

/*
 * One owner of scenario @s (index @i): hold, wait for the start, then ask;
 * its outcome in res.S.I: "errno ms steps other_node_steps cycle..."
 */
static inline void xd_owner_run(const char *dom, const char *s, int i,
				const struct xd_owner *o)
{
	struct ordlock_key hold = ORDLOCK_EX(1, o->hold), want = ORDLOCK_EX(1, o->want);
	struct ordlock_cycle_step steps[ORDLOCK_CYCLE_MAX];
	uint32_t nodes[ORDLOCK_CYCLE_MAX];
	char name[64], text[2048] = "";
	int ret, err = 0, n = 0, other = 0, k;
	struct ordlock *ol = ordlock_open(dom);
	long long t0;
	FILE *f;

	if (!ol)
		_exit(10);
	if (o->hold_shared)
		hold.mode = ORDLOCK_MODE_SHARED;
	if (o->want_shared)
		want.mode = ORDLOCK_MODE_SHARED;
	if (o->hold && ordlock_acquire(ol, &hold, 1, XD_WANT_MS, 0, NULL))
		_exit(11);
	snprintf(name, sizeof(name), "held.%s.%d", s, i);
	cl_touch(cl_path(name));
	snprintf(name, sizeof(name), "go.%s", s);
	for (k = 0; k < 6000 && !cl_exists(cl_path(name)); k++)
		usleep(20000);
	usleep(o->stagger_ms * 1000);
	t0 = cl_ms();
	ret = ordlock_acquire(ol, &want, 1, o->want_ms ? o->want_ms : XD_WANT_MS, 0, NULL);
	if (ret)
		err = errno;
	t0 = cl_ms() - t0;
	if (err == EDEADLK) {
		n = ordlock_last_cycle_nodes(ol, steps, nodes, ORDLOCK_CYCLE_MAX);
		for (k = 0; k < n; k++)
			other += (steps[k].flags & ORDLOCK_STEP_OTHER_NODE) && nodes[k];
		if (n > 0)
			ordlock_strcycle_nodes(steps, nodes, (unsigned int)n, text, sizeof(text));
	}
	snprintf(name, sizeof(name), "res.%s.%d", s, i);
	f = fopen(cl_path(name), "w");
	if (f) {
		fprintf(f, "%d %lld %d %d %s\n", err, t0, n, other, text);
		fclose(f);
	}
	ordlock_release_all(ol);
	ordlock_close(ol);
	_exit(0);
}

/* res.S.I, or -1 for each when it is missing */
static inline void xd_result(const char *s, int i, int *err, long long *ms, int *steps,
			     int *other, char *text, size_t len)
{
	char name[64], line[2304];
	FILE *f;

	*err = -1;
	*ms = -1;
	*steps = *other = -1;
	text[0] = '\0';
	snprintf(name, sizeof(name), "res.%s.%d", s, i);
	f = fopen(cl_path(name), "r");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		int off = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%d %lld %d %d %n", err, ms, steps, other, &off) >= 4)
			snprintf(text, len, "%s", line + off);
	}
	fclose(f);
}

#endif /* ORDLOCK_XDCASE_H */
