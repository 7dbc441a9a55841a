// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit tests of the incremental topological order (kmod/topo.c):
 * every insertion is checked against a brute-force reachability answer,
 * the order is checked against every edge, cycles are returned as real
 * paths, a failed allocation changes nothing, and an edge at 1000 ranks
 * and 10000 edges costs microseconds.
 */
#include "kshim.h"
#include "../../kmod/topo.c"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tap.h"

unsigned long shim_alloc_fail_after;

/* Brute force: is @to reachable from @from over the edges of @t? */
static bool reach(const struct ordlock_topo *t, u32 from, u32 to)
{
	u32 *stack = calloc(t->nv + 1, sizeof(u32));
	char *seen = calloc(t->nv, 1);
	u32 sp = 0, i, w;
	bool found = false;

	stack[sp++] = from;
	seen[from] = 1;
	while (sp && !found) {
		w = stack[--sp];
		if (w == to) {
			found = true;
			break;
		}
		for (i = 0; i < t->out[w].n; i++)
			if (!seen[t->out[w].v[i]]) {
				seen[t->out[w].v[i]] = 1;
				stack[sp++] = t->out[w].v[i];
			}
	}
	free(stack);
	free(seen);
	return found;
}

static bool order_holds(const struct ordlock_topo *t)
{
	char *used = calloc(t->nv, 1);
	u32 v, i;
	bool good = true;

	for (v = 0; v < t->nv; v++) {
		if (t->ord[v] >= t->nv || used[t->ord[v]])
			good = false;
		else
			used[t->ord[v]] = 1;
		for (i = 0; i < t->out[v].n; i++)
			if (t->ord[v] >= t->ord[t->out[v].v[i]])
				good = false;
	}
	free(used);
	return good;
}

static void test_small(void)
{
	struct ordlock_topo t;
	u32 first, path[8], len = 0;

	ordlock_topo_init(&t);
	is_int(ordlock_topo_add_vertices(&t, 3, &first), 0, "three vertices");
	is_int(first, 0, "numbered from 0");
	/* Against the initial order: 2 -> 1 -> 0 */
	is_int(ordlock_topo_insert(&t, 2, 1, path, 8, &len), 0, "2 -> 1 inserted (reorders)");
	is_int(ordlock_topo_insert(&t, 1, 0, path, 8, &len), 0, "1 -> 0 inserted (reorders)");
	ok(order_holds(&t), "the order agrees with both edges");
	is_int(ordlock_topo_insert(&t, 0, 2, path, 8, &len), 1, "0 -> 2 closes a cycle");
	is_int(len, 3, "the cycle's path has three vertices");
	ok(path[0] == 2 && path[1] == 1 && path[2] == 0, "the path runs 2 -> 1 -> 0");
	ok(!ordlock_topo_has_edge(&t, 0, 2), "the refused edge is not in");
	is_int(ordlock_topo_insert(&t, 2, 1, path, 8, &len), 0, "an edge already there is fine");
	is_int(t.nedges, 2, "and is not counted twice");
	is_int(ordlock_topo_insert(&t, 1, 1, path, 8, &len), 1, "a self-loop is a cycle");
	is_int(len, 1, "of length 1");
	ordlock_topo_destroy(&t);
}

static void test_random(void)
{
	struct ordlock_topo t;
	u32 first, path[64], len, i, x, y, bad = 0, badpath = 0, n = 60;
	int ret;

	srand(17);
	ordlock_topo_init(&t);
	ordlock_topo_add_vertices(&t, n, &first);
	for (i = 0; i < 3000; i++) {
		x = rand() % n;
		y = rand() % n;
		bool cyc = x == y || reach(&t, y, x);

		ret = ordlock_topo_insert(&t, x, y, path, 64, &len);
		if (ret != (cyc ? 1 : 0))
			bad++;
		if (ret == 1 && len <= 64) {
			u32 k;

			if (path[0] != y || path[len - 1] != x)
				badpath++;
			for (k = 0; k + 1 < len; k++)
				if (!ordlock_topo_has_edge(&t, path[k], path[k + 1]))
					badpath++;
		}
		if (i % 100 == 0 && !order_holds(&t))
			bad++;
	}
	is_int(bad, 0, "3000 random insertions: cycles found exactly when brute force finds them");
	is_int(badpath, 0, "every cycle returned is a real path y .. x");
	ok(order_holds(&t), "the final order agrees with every edge");
	ordlock_topo_destroy(&t);
}

static void test_nomem(void)
{
	struct ordlock_topo t;
	u32 first, path[4], len, o0, o1;

	ordlock_topo_init(&t);
	ordlock_topo_add_vertices(&t, 2, &first);
	o0 = t.ord[0];
	o1 = t.ord[1];
	shim_alloc_fail_after = 1;
	is_int(ordlock_topo_insert(&t, 1, 0, path, 4, &len), -ENOMEM, "a failed allocation says ENOMEM");
	ok(t.ord[0] == o0 && t.ord[1] == o1 && !t.nedges && !t.out[1].n,
	   "and changed nothing (order, edges)");
	shim_alloc_fail_after = 1;
	is_int(ordlock_topo_add_vertices(&t, 1000, &first), -ENOMEM, "growing fails cleanly");
	is_int(t.nv, 2, "no vertex added");
	shim_alloc_fail_after = 0;
	is_int(ordlock_topo_insert(&t, 1, 0, path, 4, &len), 0, "then it works");
	ordlock_topo_destroy(&t);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* 1000 ranks (4 vertices each, as order.c splits them), 10000 edges */
static void test_scale(void)
{
	struct ordlock_topo t;
	u32 first, path[64], len, i, x, y, edges = 0;
	double t0, worst = 0, sum = 0, d;
	unsigned int probes = 0;

	srand(4);
	ordlock_topo_init(&t);
	ordlock_topo_add_vertices(&t, 4000, &first);
	/* A random DAG consistent with a hidden order: ranks shuffled */
	u32 *perm = calloc(4000, sizeof(u32));

	for (i = 0; i < 4000; i++)
		perm[i] = i;
	for (i = 3999; i > 0; i--) {
		u32 j = rand() % (i + 1), tmp = perm[i];

		perm[i] = perm[j];
		perm[j] = tmp;
	}
	while (edges < 10000) {
		x = rand() % 4000;
		y = rand() % 4000;
		if (x == y)
			continue;
		if (perm[x] > perm[y]) {
			u32 tmp = x;

			x = y;
			y = tmp;
		}
		t0 = now_us();
		if (ordlock_topo_insert(&t, perm[x] < perm[y] ? x : y, perm[x] < perm[y] ? y : x,
					path, 64, &len) == 0)
			edges++;
		d = now_us() - t0;
		if (edges > 9000) {
			sum += d;
			probes++;
			if (d > worst)
				worst = d;
		}
	}
	ok(order_holds(&t), "10000 edges on 4000 vertices: the order agrees with every edge");
	diag("new edge at ~10000 edges: mean %.2f us, worst %.2f us over %u", sum / probes,
	     worst, probes);
	ok(sum / probes < 200, "a new edge at 1000 ranks / 10000 edges costs microseconds (mean %.2f us)",
	   sum / probes);
	free(perm);
	ordlock_topo_destroy(&t);
}

int main(void)
{
	test_small();
	test_random();
	test_nomem();
	test_scale();
	return tap_done();
}
