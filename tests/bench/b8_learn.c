// SPDX-License-Identifier: GPL-2.0
/*
 * b8_learn: the cost of learning the lock order (kmod/order.c), row 8.
 *
 *  - an acquire whose edge is already known (the owner holds one key of
 *    rank 1 and takes one of rank 2) with learning on and off (module
 *    parameter order_learn), in the same run, alternating block by block:
 *    the issue allows at most 3% more;
 *  - an acquire that holds nothing, on and off: it should pay nothing;
 *  - a new edge in a domain that learned 1000 ranks and 10000 edges (a
 *    random order, so that the incremental topological order reorders),
 *    against a known edge in the same domain: microseconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define M8 "acquire with a known edge (holds 1 key)"
#define M8F "acquire holding nothing"
#define M8N "new edge at 1000 ranks / 10000 edges"

static struct ordlock_key key(uint32_t rank, uint64_t id)
{
	return (struct ordlock_key){ .rank = rank, .id = id, .mode = EX };
}

static void must(int ret, const char *what)
{
	if (ret)
		bench_die("%s: %s", what, strerror(-ret));
}

/* Time the acquire of @b while holding @a (if @a.rank) */
static void timed(int fd, struct ordlock_key a, struct ordlock_key b, struct samples *s)
{
	uint64_t t0, t1;

	if (a.rank)
		must(ol_acquire(fd, &a, 1, 0, 0, NULL), "acquire held key");
	t0 = now_ns();
	must(ol_acquire(fd, &b, 1, 0, 0, NULL), "acquire");
	t1 = now_ns();
	samples_add_timed(s, t0, t1);
	must(ol_release_all(fd), "release");
}

int main(void)
{
	unsigned int reps = bench_reps(), r, blk;
	unsigned long n = bench_n(3000, 200), k;
	struct samples on, off, fon, foff, newe, known;
	struct ordlock_key none = { 0 };
	uint32_t *perm;
	unsigned char *used;
	unsigned int i, a, b, edges = 0;
	int fd, big;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ol_set_policy("bench-learn", ORDLOCK_POLICY_DETECT, 0);
	fd = ol_open("bench-learn");
	samples_init(&on, n * reps);
	samples_init(&off, n * reps);
	samples_init(&fon, n * reps);
	samples_init(&foff, n * reps);
	for (k = 0; k < 500; k++)	/* warm up, and learn the edge */
		timed(fd, key(1, 1), key(2, 1), &on);
	on.n = 0;
	for (r = 0; r < reps; r++) {
		for (blk = 0; blk < n / 100; blk++) {
			int first = (blk + r) % 2;

			for (i = 0; i < 2; i++) {
				int learn = i ? !first : first;

				ol_param_set("order_learn", learn);
				for (k = 0; k < 100; k++) {
					timed(fd, key(1, 1), key(2, 1), learn ? &on : &off);
					timed(fd, none, key(1, 1), learn ? &fon : &foff);
				}
			}
		}
		bench_log("rep %u/%u done", r + 1, reps);
	}
	ol_param_set("order_learn", 1);
	bench_emit("8", M8, "-", "ordlock-learning", "ordlock", "ns", &on,
		   "order_learn=1: the edge 1 -> 2 is in the owner's cache");
	bench_emit("8", M8, "-", "ordlock-no-learning", "ref", "ns", &off,
		   "order_learn=0: the same acquire; the issue allows +3%");
	bench_emit("8", M8F, "-", "ordlock-learning", "ordlock", "ns", &fon,
		   "order_learn=1: nothing held, nothing to learn");
	bench_emit("8", M8F, "-", "ordlock-no-learning", "ref", "ns", &foff,
		   "order_learn=0");

	/* 1000 ranks, 10000 edges consistent with a hidden random order */
	ol_set_policy("bench-learn-big", ORDLOCK_POLICY_DETECT, 0);
	big = ol_open("bench-learn-big");
	perm = calloc(1001, sizeof(*perm));
	used = calloc(1001 * 1001, 1);
	if (!perm || !used)
		bench_die("out of memory");
	for (i = 1; i <= 1000; i++)
		perm[i] = i;
	srand(8);
	for (i = 1000; i > 1; i--) {
		uint32_t j = 1 + rand() % i, t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	samples_init(&newe, 2000);
	samples_init(&known, 2000);
	while (edges < 11000) {
		a = 1 + rand() % 1000;
		b = 1 + rand() % 1000;
		if (a == b || used[perm[a] * 1001 + perm[b]])
			continue;
		if (a > b) {
			unsigned int t = a;

			a = b;
			b = t;
		}
		/* perm[a] before perm[b] in the hidden order */
		used[perm[a] * 1001 + perm[b]] = 1;
		timed(big, key(perm[a], 1), key(perm[b], 1), edges < 10000 ? &known : &newe);
		edges++;
		if (edges == 10000)
			known.n = 0;
		if (edges > 10000) {
			/* the same pair again: a known edge */
			timed(big, key(perm[a], 1), key(perm[b], 1), &known);
		}
	}
	bench_emit("8", M8N, "ranks=1000 edges=10000", "ordlock-new-edge", "ordlock", "ns",
		   &newe, "an acquire that adds an edge (incremental topological order)");
	bench_emit("8", M8N, "ranks=1000 edges=10000", "ordlock-known-edge", "ref", "ns",
		   &known, "the same acquire once the edge is known");
	return 0;
}
