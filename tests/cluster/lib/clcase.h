/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the C cases of make check-cluster (header only; the shell
 * cases have tests/cluster/lib/case.sh). The environment comes from
 * tests/cluster/node.sh: ORDLOCK_NODE, ORDLOCK_NODES, ORDLOCK_SHARED (the
 * case's directory, shared by every node over 9p without caching),
 * ORDLOCK_CONTROL (shared/.dead.N: a node the host killed).
 *
 * cl_init() reads them; cl_barrier(name) waits (300 s hang guard) until
 * every live node reached NAME; a node that missed a barrier is marked
 * missing (shared .missing.N) and no later barrier of the case, on any
 * node, waits for it again: a stuck node costs one hang guard, not one per
 * barrier; cl_missing(n) tells; cl_views(why) writes ordlock's debugfs
 * views (owners, locks, graph) as TAP diagnostics, for a wait that failed
 * or a node that did not come, cl_dlm_view(dom) the DLM's locks of a
 * cluster domain (the holder's node); cl_path(name) is a file of the shared
 * directory; cl_cluster_domain(ol, name) makes NAME a cluster domain on
 * this node (each node sets its own domain: the setting is per host),
 * cl_domain_on() does it as a test point.
 */
#ifndef ORDLOCK_CLCASE_H
#define ORDLOCK_CLCASE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libordlock.h"
#include "tap.h"

static int cl_node, cl_nodes;
static const char *cl_shared, *cl_control;

static inline char *cl_path(const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", cl_shared, name);
	return buf[i];
}

static inline void cl_init(void)
{
	const char *s;

	s = getenv("ORDLOCK_NODE");
	cl_node = s ? atoi(s) : 0;
	s = getenv("ORDLOCK_NODES");
	cl_nodes = s ? atoi(s) : 0;
	cl_shared = getenv("ORDLOCK_SHARED");
	cl_control = getenv("ORDLOCK_CONTROL");
	if (!cl_control)
		cl_control = cl_shared;
	if (cl_node < 1 || cl_nodes < 1 || !cl_shared)
		bail_out("not run by tests/cluster/node.sh (ORDLOCK_NODE...)");
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline int cl_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static inline int cl_alive(int node)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/.dead.%d", cl_control, node);
	return !cl_exists(p);
}

static inline void cl_touch(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f)
		fclose(f);
}

/* node @node missed a barrier of this case (see cl_barrier()) */
static inline int cl_missing(int node)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/.missing.%d", cl_shared, node);
	return cl_exists(p);
}

/* ordlock's debugfs view @name (at most 40 lines) as TAP diagnostics */
static inline void cl_view(const char *name)
{
	char p[128], line[512];
	FILE *f;
	int n = 0;

	snprintf(p, sizeof(p), "/sys/kernel/debug/ordlock/%s", name);
	f = fopen(p, "r");
	if (!f) {
		diag("node%d: %s: %s", cl_node, p, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (n++ == 40) {
			diag("node%d: %s: ...", cl_node, name);
			break;
		}
		diag("node%d: %s: %s", cl_node, name, line);
	}
	fclose(f);
}

/* why something is stuck, then this node's views of its owners and keys */
static inline void cl_views(const char *why)
{
	diag("node%d: %s: ordlock's views on this node:", cl_node, why);
	cl_view("owners");
	cl_view("locks");
	cl_view("graph");
}

/*
 * The DLM's view of cluster domain @dom's lockspace on this node (dlm_tool
 * lockdebug: each key's master, its granted and waiting locks with their
 * nodes), at most 60 lines, as TAP diagnostics: a holder on another node
 * is named there, not in ordlock's views
 */
static inline void cl_dlm_view(const char *dom)
{
	char cmd[256], line[512];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd),
		 "timeout 20 dlm_tool lockdebug -sv ordlock.%s 2>&1", dom);
	f = popen(cmd, "r");
	if (!f)
		return;
	diag("node%d: the DLM's locks of ordlock.%s on this node:", cl_node, dom);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (n++ == 60) {
			diag("node%d: dlm: ...", cl_node);
			break;
		}
		diag("node%d: dlm: %s", cl_node, line);
	}
	pclose(f);
}

static inline int cl_barrier(const char *name)
{
	char p[512];
	int i, j, c = 0;

	snprintf(p, sizeof(p), "%s/.b.%s.%d", cl_shared, name, cl_node);
	cl_touch(p);
	for (i = 0; i < 1500; i++) {
		c = 0;
		for (j = 1; j <= cl_nodes; j++) {
			snprintf(p, sizeof(p), "%s/.b.%s.%d", cl_shared, name, j);
			c += cl_exists(p) || !cl_alive(j) || cl_missing(j);
		}
		if (c == cl_nodes)
			return 0;
		usleep(200000);
	}
	diag("barrier %s: only %d of %d nodes came in 300 s", name, c, cl_nodes);
	for (j = 1; j <= cl_nodes; j++) {
		snprintf(p, sizeof(p), "%s/.b.%s.%d", cl_shared, name, j);
		if (cl_exists(p) || !cl_alive(j) || cl_missing(j))
			continue;
		diag("barrier %s: node%d missing: no later barrier waits for it", name, j);
		snprintf(p, sizeof(p), "%s/.missing.%d", cl_shared, j);
		cl_touch(p);
	}
	cl_views("a barrier failed");
	return -1;
}

static inline long long cl_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static inline int cl_cluster_domain(struct ordlock *ol, const char *name)
{
	struct ordlock_domain_config cfg = {
		.flags = ORDLOCK_DOMAIN_SET_CLUSTER,
		.cluster = 1,
	};

	return ordlock_domain_config(ol, name, &cfg);
}

/* a point: NAME is a cluster domain on this node (the error if not) */
static inline int cl_domain_on(struct ordlock *ol, const char *name)
{
	int ret = cl_cluster_domain(ol, name);

	return ok(ret == 0, "node%d: %s is a cluster domain%s%s", cl_node, name,
		  ret ? ": " : "", ret ? strerror(errno) : "");
}

/*
 * The start of a program on every node: cl_init(), at least @min_nodes
 * nodes (else a plan of 0 with the reason, and exit), @dom made a cluster
 * domain (a point) through a descriptor of "default", returned (kept for
 * cl_end())
 */
static inline struct ordlock *cl_setup(const char *dom, int min_nodes)
{
	struct ordlock *cfg;

	cl_init();
	if (cl_nodes < min_nodes) {
		printf("1..0 # SKIP needs %d nodes\n", min_nodes);
		exit(0);
	}
	cfg = ordlock_open("default");
	if (!cfg)
		bail_out("ordlock_open: %s", strerror(errno));
	cl_domain_on(cfg, dom);
	return cfg;
}

/* cl_setup() into *@cfg, and an owner in @dom, returned */
static inline struct ordlock *cl_start(const char *dom, int min_nodes,
				       struct ordlock **cfg)
{
	struct ordlock *ol;

	*cfg = cl_setup(dom, min_nodes);
	ol = ordlock_open(dom);
	if (!ol)
		bail_out("ordlock_open(%s): %s", dom, strerror(errno));
	return ol;
}

/* The end: close @ol (NULL: none), set @dom's cluster off (a point), close @cfg */
static inline int cl_end(struct ordlock *ol, struct ordlock *cfg, const char *dom)
{
	struct ordlock_domain_config off = {
		.flags = ORDLOCK_DOMAIN_SET_CLUSTER,
		.cluster = 0,
	};

	ordlock_close(ol);
	ok(ordlock_domain_config(cfg, dom, &off) == 0, "node%d: %s set cluster off",
	   cl_node, dom);
	ordlock_close(cfg);
	return tap_done();
}

#endif /* ORDLOCK_CLCASE_H */
