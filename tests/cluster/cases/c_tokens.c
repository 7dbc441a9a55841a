// SPDX-License-Identifier: GPL-2.0
/*
 * c_tokens: fencing tokens strictly increasing across nodes, under
 * contention. Every node makes ROUNDS exclusive grants in one cluster
 * domain, at the same time as the others: of key A = 4:1, of key B = 4:2,
 * or of both in one request, in turn. Holding the keys, it appends the
 * grant's token to the log of each key it holds (a file of the shared
 * directory per key: a count and fixed slots, read and written under the
 * key, so the log's order is the order in which the key was granted).
 * Asserted: every grant has a non-zero token; in each key's log, every
 * token is strictly above the one before, whichever node wrote it; the
 * logs hold nodes * ROUNDS grants in all (none lost).
 *
 * cluster-timeout: 600
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clcase.h"
#include "libordlock.h"
#include "tap.h"

#define RANK	4
#define ROUNDS	30
#define SLOTS	1024
#define SLOT	40
#define WAIT_MS	120000

static const char *dom = "c_tok";

/* slot 0: the count; slot i: "TOKEN NODE" of the i-th grant */
static int log_read(int fd, int i, uint64_t *a, long *b)
{
	char buf[SLOT + 1] = "";

	if (pread(fd, buf, SLOT, (off_t)i * SLOT) != SLOT)
		return -1;
	return sscanf(buf, "%" SCNu64 " %ld", a, b) == 2 ? 0 : -1;
}

static int log_write(int fd, int i, uint64_t a, long b)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%24" PRIu64 " %13ld\n", a, b);
	return pwrite(fd, buf, SLOT, (off_t)i * SLOT) == SLOT ? 0 : -1;
}

static int log_append(int fd, uint64_t token)
{
	uint64_t count;
	long unused;

	if (log_read(fd, 0, &count, &unused) || count + 1 >= SLOTS)
		return -1;
	if (log_write(fd, (int)count + 1, token, cl_node))
		return -1;
	return log_write(fd, 0, count + 1, 0);
}

/* the log of key @id: strictly increasing tokens; returns its count */
static long log_check(int fd, const char *name)
{
	uint64_t count, prev = 0, tok;
	long who, pwho = 0;
	int i, bad = 0;

	if (log_read(fd, 0, &count, &who)) {
		ok(0, "node%d: the log of %s reads", cl_node, name);
		return -1;
	}
	for (i = 1; i <= (int)count; i++) {
		if (log_read(fd, i, &tok, &who) || tok <= prev) {
			if (!bad++)
				diag("%s grant %d: token %" PRIu64 " (node%ld) after %" PRIu64
				     " (node%ld)", name, i, tok, who, prev, pwho);
		}
		prev = tok;
		pwho = who;
	}
	is_int(bad, 0, "node%d: %s: %" PRIu64 " grants, every token above the one before",
	       cl_node, name, count);
	return (long)count;
}

int main(void)
{
	struct ordlock_key ka = ORDLOCK_EX(RANK, 1), kb = ORDLOCK_EX(RANK, 2);
	struct ordlock_key both[2] = { ORDLOCK_EX(RANK, 2), ORDLOCK_EX(RANK, 1) };
	int r, errors = 0, zero = 0, ioerr = 0, first = 0, fda, fdb;
	long na, nb, grants_a = 0, grants_b = 0;
	struct ordlock *cfg, *ol;
	uint64_t token;

	ol = cl_start(dom, 2, &cfg);
	if (cl_node == 1) {
		fda = open(cl_path("log.a"), O_RDWR | O_CREAT | O_TRUNC, 0666);
		fdb = open(cl_path("log.b"), O_RDWR | O_CREAT | O_TRUNC, 0666);
		ok(fda >= 0 && fdb >= 0 && !log_write(fda, 0, 0, 0) && !log_write(fdb, 0, 0, 0),
		   "node1: the two empty logs");
		close(fda);
		close(fdb);
	}
	cl_barrier("logs");
	fda = open(cl_path("log.a"), O_RDWR);
	fdb = open(cl_path("log.b"), O_RDWR);
	if (fda < 0 || fdb < 0)
		bail_out("open the logs: %s", strerror(errno));

	for (r = 0; r < ROUNDS; r++) {
		/* A, B, both; shifted by the node, so that all three kinds meet */
		int kind = (r + cl_node) % 3;
		const struct ordlock_key *k = kind == 0 ? &ka : kind == 1 ? &kb : both;
		unsigned int n = kind == 2 ? 2 : 1;

		token = 0;
		if (ordlock_acquire(ol, k, n, WAIT_MS, 0, &token)) {
			if (!errors++)
				first = errno;
			continue;
		}
		zero += !token;
		if (kind != 1) {
			ioerr += !!log_append(fda, token);
			grants_a++;
		}
		if (kind != 0) {
			ioerr += !!log_append(fdb, token);
			grants_b++;
		}
		if (ordlock_release(ol, k, n))
			errors++;
	}
	is_int(errors, 0, "node%d: %d grants of A, B or both (first error %s)", cl_node,
	       ROUNDS, strerror(first));
	is_int(zero, 0, "node%d: every grant had a token", cl_node);
	is_int(ioerr, 0, "node%d: the logs written every time", cl_node);
	{
		char nm[32];
		FILE *f;

		snprintf(nm, sizeof(nm), "grants.%d", cl_node);
		f = fopen(cl_path(nm), "w");
		if (f) {
			fprintf(f, "%ld %ld\n", grants_a, grants_b);
			fclose(f);
		}
	}
	cl_barrier("granted");
	na = log_check(fda, "key A 4:1");
	nb = log_check(fdb, "key B 4:2");
	{
		long sa = 0, sb = 0, a, b;
		int j;

		for (j = 1; j <= cl_nodes; j++) {
			char nm[32];
			FILE *f;

			snprintf(nm, sizeof(nm), "grants.%d", j);
			f = fopen(cl_path(nm), "r");
			if (f && fscanf(f, "%ld %ld", &a, &b) == 2) {
				sa += a;
				sb += b;
			}
			if (f)
				fclose(f);
		}
		ok(na == sa && nb == sb, "node%d: the logs hold every grant (A %ld of %ld, B %ld of %ld)",
		   cl_node, na, sa, nb, sb);
	}
	cl_barrier("checked");
	close(fda);
	close(fdb);
	return cl_end(ol, cfg, dom);
}
