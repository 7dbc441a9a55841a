/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the C cases of make check-cluster (header only; the shell
 * cases have tests/cluster/lib/case.sh). The environment comes from
 * tests/cluster/node.sh: ORDLOCK_NODE, ORDLOCK_NODES, ORDLOCK_SHARED (the
 * case's directory, shared by every node over 9p without caching),
 * ORDLOCK_CONTROL (shared/.dead.N: a node the host killed).
 *
 * cl_init() reads them; cl_barrier(name) waits (300 s hang guard) until
 * every live node reached NAME; cl_path(name) is a file of the shared
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
			c += cl_exists(p) || !cl_alive(j);
		}
		if (c == cl_nodes)
			return 0;
		usleep(200000);
	}
	diag("barrier %s: only %d of %d nodes came", name, c, cl_nodes);
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

/* The end: close @ol, set @dom's cluster off (a point), close @cfg */
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
