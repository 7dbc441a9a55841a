// SPDX-License-Identifier: GPL-2.0
/*
 * c_keys: exclusion and all-or-nothing over many keys of one cluster
 * domain, from three nodes at once.
 *
 * - Concurrent: every node makes ROUNDS requests, each for KPER of the
 *   NKEYS keys (a different set each round, in no particular order: the
 *   kernel sorts them), exclusive. A file of the shared directory has a
 *   record per key: its holder and a counter. Holding its keys, a node
 *   checks that each record's holder is 0 (nobody), writes its own number,
 *   pauses, increments the counter and writes holder 0 again. Asserted: no
 *   node ever found a key's record taken (two holders at once), and every
 *   counter equals the sum of the increments the nodes made of it.
 * - All-or-nothing: node 1 holds the last key; node 2 asks for all NKEYS
 *   keys with a 3 s timeout: ETIMEDOUT naming the last key, node 2 holds
 *   nothing after it; node 3 then takes the NKEYS - 1 others with a
 *   try-lock (none was left behind in the cluster), and while it holds them
 *   a try-lock of one of them from node 2 fails with EAGAIN.
 *
 * cluster-timeout: 600
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clcase.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define NKEYS	16
#define KPER	6
#define ROUNDS	40
#define RANK	3
#define WAIT_MS	120000
#define REC	32

static const char *dom = "c_keys";

static int rec_read(int fd, int k, long *holder, long *count)
{
	char buf[REC + 1] = "";

	if (pread(fd, buf, REC, (off_t)k * REC) != REC)
		return -1;
	return sscanf(buf, "%15ld %15ld", holder, count) == 2 ? 0 : -1;
}

static int rec_write(int fd, int k, long holder, long count)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%15ld %15ld\n", holder, count);
	return pwrite(fd, buf, REC, (off_t)k * REC) == REC ? 0 : -1;
}

static void concurrent(struct ordlock *ol, int fd)
{
	long mine[NKEYS] = { 0 }, holder, count, total;
	struct ordlock_key k[KPER];
	int r, i, errors = 0, overlaps = 0, ioerr = 0, first = 0;
	unsigned int seed = 7919u * (unsigned int)cl_node;
	char nm[32];
	FILE *f;

	for (r = 0; r < ROUNDS; r++) {
		int used[NKEYS] = { 0 }, n = 0;

		/* KPER distinct keys, in the order drawn */
		while (n < KPER) {
			int id = (int)(rand_r(&seed) % NKEYS);

			if (used[id])
				continue;
			used[id] = 1;
			k[n++] = ORDLOCK_EX(RANK, (uint64_t)id + 1);
		}
		if (ordlock_acquire(ol, k, KPER, WAIT_MS, 0, NULL)) {
			if (!errors++)
				first = errno;
			continue;
		}
		for (i = 0; i < KPER; i++) {
			int id = (int)k[i].id - 1;

			if (rec_read(fd, id, &holder, &count)) {
				ioerr++;
				continue;
			}
			if (holder) {
				if (!overlaps++)
					diag("round %d: key %d held by node%ld too", r, id + 1, holder);
			}
			ioerr += !!rec_write(fd, id, cl_node, count);
			sched_yield();
			ioerr += !!rec_write(fd, id, 0, count + 1);
			mine[id]++;
		}
		if (ordlock_release(ol, k, KPER))
			errors++;
	}
	is_int(errors, 0, "node%d: %d requests of %d keys granted (first error %s)",
	       cl_node, ROUNDS, KPER, strerror(first));
	is_int(overlaps, 0, "node%d: no key ever had another holder meanwhile", cl_node);
	is_int(ioerr, 0, "node%d: the records read and written every time", cl_node);
	snprintf(nm, sizeof(nm), "count.%d", cl_node);
	f = fopen(cl_path(nm), "w");
	for (i = 0; f && i < NKEYS; i++)
		fprintf(f, "%ld\n", mine[i]);
	if (f)
		fclose(f);
	cl_barrier("counted");

	/* every counter is the sum of the nodes' increments */
	{
		int bad = 0, j;

		for (i = 0; i < NKEYS; i++) {
			total = 0;
			for (j = 1; j <= cl_nodes; j++) {
				long v = 0;

				snprintf(nm, sizeof(nm), "count.%d", j);
				f = fopen(cl_path(nm), "r");
				for (r = 0; f && r <= i; r++)
					if (fscanf(f, "%ld", &v) != 1)
						v = -1000000;
				if (f)
					fclose(f);
				total += v;
			}
			if (rec_read(fd, i, &holder, &count) || count != total || holder) {
				if (!bad++)
					diag("key %d: counter %ld holder %ld, increments %ld",
					     i + 1, count, holder, total);
			}
		}
		is_int(bad, 0, "node%d: all %d counters equal the increments made of them",
		       cl_node, NKEYS);
	}
}

static void all_or_nothing(struct ordlock *ol)
{
	struct ordlock_key all[NKEYS];
	const struct ordlock_failure *f;
	int i, ret;

	for (i = 0; i < NKEYS; i++)
		all[i] = ORDLOCK_EX(RANK, (uint64_t)i + 1);
	if (cl_node == 1)
		ok(ordlock_acquire(ol, &all[NKEYS - 1], 1, WAIT_MS, 0, NULL) == 0,
		   "node1: holds key %d", NKEYS);
	cl_barrier("last");
	if (cl_node == 2) {
		ret = ordlock_acquire(ol, all, NKEYS, 3000, 0, NULL);
		is_errno(ret, ETIMEDOUT, "node2: all %d keys, 3 s: ETIMEDOUT (key %d is on node1)",
			 NKEYS, NKEYS);
		f = ordlock_last_failure(ol);
		ok(f->key.rank == RANK && f->key.id == NKEYS,
		   "node2: ... the failure names key %d (%u:%llu)", NKEYS, f->key.rank,
		   (unsigned long long)f->key.id);
		is_int(olt_nheld(ol), 0, "node2: ... and node2 holds nothing");
	}
	cl_barrier("failed");
	if (cl_node == 3) {
		ret = ordlock_try_acquire(ol, all, NKEYS - 1, NULL);
		ok(ret == 0, "node3: try-lock of the %d other keys granted: none left behind (%s)",
		   NKEYS - 1, ret ? strerror(errno) : "ok");
	}
	cl_barrier("taken");
	if (cl_node == 2) {
		ret = ordlock_try_acquire(ol, &all[4], 1, NULL);
		is_errno(ret, EAGAIN, "node2: try-lock of key 5 held on node3: EAGAIN");
	}
	cl_barrier("tried");
	ordlock_release_all(ol);
	cl_barrier("aon");
}

int main(void)
{
	struct ordlock *cfg, *ol;
	int fd, i;

	ol = cl_start(dom, 3, &cfg);
	if (cl_node == 1) {
		int bad = 0;

		fd = open(cl_path("records"), O_RDWR | O_CREAT | O_TRUNC, 0666);
		for (i = 0; i < NKEYS; i++)
			bad |= fd < 0 || rec_write(fd, i, 0, 0);
		ok(!bad, "node1: %d records, free, counters 0", NKEYS);
		close(fd);
	}
	cl_barrier("file");
	fd = open(cl_path("records"), O_RDWR);
	if (fd < 0)
		bail_out("open %s: %s", cl_path("records"), strerror(errno));
	concurrent(ol, fd);
	close(fd);
	all_or_nothing(ol);
	return cl_end(ol, cfg, dom);
}
