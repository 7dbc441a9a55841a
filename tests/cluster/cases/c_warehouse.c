// SPDX-License-Identifier: GPL-2.0
/*
 * c_warehouse: the two warehouses of source 003 (Sofia, id 1, and Plovdiv,
 * id 2, rank 1) on two hosts, in one cluster domain, with the stock in one
 * file of the shared directory (9p without caching: every read and write
 * goes to the host's file).
 *
 * - The lesson's deadlock, refused locally: node 2 holds Sofia; node 1
 *   holds Plovdiv and then asks for Sofia (source then target): the order
 *   rule refuses it at once with EDEADLK, reason "order", naming the held
 *   key, although the key is held on another host (a request that reached
 *   the DLM would wait and time out instead).
 * - The fix: 1000 transfers Sofia -> Plovdiv on node 1 and 1000 Plovdiv ->
 *   Sofia on node 2, each with one request for both warehouses in its own
 *   natural order (source first), each a slow read-modify-write of the file
 *   (read both, pause, write both): a lock that let both hosts in would
 *   lose updates. Node 3 audits meanwhile: both shared, the total must
 *   always be 800. At the end: Sofia 500, Plovdiv 300 exactly.
 *
 * Hang guards (12-31 s is the usual run; a stuck node must not cost more
 * than one guard): a wait not granted in 120 s ends that node's transfers
 * or audits at once, naming the key and the holder, with ordlock's views
 * of the node (debugfs) and the DLM's locks of the domain (the holder's
 * node); the audits end when both transfer loops ended,
 * or a transferring node missed a barrier, or after 300 s; a node that
 * missed a barrier is not waited for again (cl_barrier()). The node still
 * stuck is stopped by the bound below, and tests/cluster/node.sh dumps
 * its blocked tasks, the DLM's locks and ordlock's views.
 *
 * cluster-timeout: 480
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
#include "tap.h"

#define R_STORE	1
#define SOFIA	1
#define PLOVDIV	2
#define N	1000
#define WAIT_MS	120000	/* every wait that must be granted: a hang guard */
#define AUDIT_MS	300000	/* the audits' hang guard: the transfers end before */

static const char *dom = "c_wh";

/* the stock file: two fixed-width decimal fields, Sofia then Plovdiv */
static int stock_read(int fd, long *s, long *p)
{
	char buf[33] = "";

	if (pread(fd, buf, 32, 0) != 32)
		return -1;
	return sscanf(buf, "%15ld %15ld", s, p) == 2 ? 0 : -1;
}

static int stock_write(int fd, long s, long p)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%15ld %15ld\n", s, p);
	return pwrite(fd, buf, 32, 0) == 32 ? 0 : -1;
}

/* a request that had to be granted failed: say which key, who holds it */
static void stuck(struct ordlock *ol, const char *what, int i, long long ms)
{
	const struct ordlock_failure *f = ordlock_last_failure(ol);
	int err = errno;

	diag("node%d: %s %d failed after %lld ms: %s, reason %u, key %u:%llu mode %u, holder pid %d mode %u",
	     cl_node, what, i, ms, strerror(err), f->reason, f->key.rank,
	     (unsigned long long)f->key.id, f->key.mode, (int)f->pid, f->holder_mode);
	cl_views("a wait that had to be granted failed");
	cl_dlm_view(dom);
	errno = err;
}

static void lesson(struct ordlock *ol)
{
	struct ordlock_key sofia = ORDLOCK_EX(R_STORE, SOFIA);
	struct ordlock_key plovdiv = ORDLOCK_EX(R_STORE, PLOVDIV);
	const struct ordlock_failure *f;
	int ret;

	if (cl_node == 2)
		ok(ordlock_acquire(ol, &sofia, 1, WAIT_MS, 0, NULL) == 0,
		   "node2: holds Sofia");
	cl_barrier("sofia");
	if (cl_node == 1) {
		ok(ordlock_acquire(ol, &plovdiv, 1, WAIT_MS, 0, NULL) == 0,
		   "node1: holds Plovdiv (the transfer's source)");
		ret = ordlock_acquire(ol, &sofia, 1, 20000, 0, NULL);
		is_errno(ret, EDEADLK,
			 "node1: then Sofia (held on node2): EDEADLK at once, not a wait");
		f = ordlock_last_failure(ol);
		is_int(f->reason, ORDLOCK_REASON_ORDER, "node1: ... reason order");
		ok(f->held.rank == R_STORE && f->held.id == PLOVDIV,
		   "node1: ... naming the held Plovdiv (held %u:%llu)",
		   f->held.rank, (unsigned long long)f->held.id);
		ok(ordlock_release_all(ol) == 0, "node1: releases Plovdiv");
	}
	cl_barrier("refused");
	if (cl_node == 2)
		ok(ordlock_release_all(ol) == 0, "node2: releases Sofia");
	cl_barrier("lesson");
}

static void transfers(struct ordlock *ol, int fd)
{
	int src = cl_node == 1 ? SOFIA : PLOVDIV, dst = SOFIA + PLOVDIV - src;
	/* the natural order of the transfer: source first */
	struct ordlock_key k[2] = { ORDLOCK_EX(R_STORE, src), ORDLOCK_EX(R_STORE, dst) };
	int i, errors = 0, ioerr = 0, first = 0;
	long long t0 = cl_ms(), t;
	long v[3];

	for (i = 0; i < N; i++) {
		t = cl_ms();
		if (ordlock_acquire(ol, k, 2, WAIT_MS, 0, NULL)) {
			/* the first failure ends the loop: each would wait again */
			first = errno;
			errors++;
			stuck(ol, "transfer", i, cl_ms() - t);
			break;
		}
		if (stock_read(fd, &v[SOFIA], &v[PLOVDIV])) {
			ioerr++;
		} else {
			v[src] -= 1;
			sched_yield();
			usleep(100);
			v[dst] += 1;
			ioerr += !!stock_write(fd, v[SOFIA], v[PLOVDIV]);
		}
		if (ordlock_release(ol, k, 2))
			errors++;
	}
	is_int(errors, 0, "node%d: %d transfers %s -> %s, every one granted (%d made; error %s)",
	       cl_node, N, src == SOFIA ? "Sofia" : "Plovdiv",
	       dst == SOFIA ? "Sofia" : "Plovdiv", i, strerror(first));
	is_int(ioerr, 0, "node%d: ... the file read and written every time", cl_node);
	diag("node%d: %d transfers in %lld ms", cl_node, i, cl_ms() - t0);
}

static void audit(struct ordlock *ol, int fd)
{
	struct ordlock_key k[2] = { ORDLOCK_SH(R_STORE, SOFIA), ORDLOCK_SH(R_STORE, PLOVDIV) };
	long long t0 = cl_ms(), t;
	long s, p;
	int audits = 0, bad = 0, errors = 0, n;

	/* until both transfer loops ended */
	for (;;) {
		for (n = 1; n <= 2; n++)
			if (!cl_exists(cl_path(n == 1 ? "moved.1" : "moved.2")))
				break;
		if (n > 2)
			break;
		if (cl_missing(n)) {
			/* another node gave up waiting for it at a barrier */
			diag("node%d: node%d missed a barrier, its transfers not done", cl_node, n);
			errors++;
			break;
		}
		if (cl_ms() - t0 > AUDIT_MS) {
			diag("node%d: node%d's transfers not done after %d s", cl_node,
			     n, AUDIT_MS / 1000);
			cl_views("the transfers did not end");
			cl_dlm_view(dom);
			errors++;
			break;
		}
		t = cl_ms();
		if (ordlock_acquire(ol, k, 2, WAIT_MS, 0, NULL)) {
			errors++;
			stuck(ol, "audit", audits, cl_ms() - t);
			break;
		}
		if (stock_read(fd, &s, &p) || s + p != 800) {
			if (!bad++)
				diag("audit %d saw %ld + %ld", audits, s, p);
		}
		audits++;
		ordlock_release(ol, k, 2);
		usleep(20000);
	}
	ok(audits > 0, "node%d: %d audits during the transfers", cl_node, audits);
	is_int(bad, 0, "node%d: every audit saw 800 in total", cl_node);
	is_int(errors, 0, "node%d: every audit granted, the transfers ended within %d s",
	       cl_node, AUDIT_MS / 1000);
}

int main(void)
{
	struct ordlock *cfg, *ol;
	long s = -1, p = -1;
	int fd;

	ol = cl_start(dom, 2, &cfg);
	if (cl_node == 1) {
		fd = open(cl_path("stock"), O_RDWR | O_CREAT | O_TRUNC, 0666);
		ok(fd >= 0 && stock_write(fd, 500, 300) == 0,
		   "node1: the stock file: Sofia 500, Plovdiv 300");
		close(fd);
	}
	cl_barrier("file");
	fd = open(cl_path("stock"), O_RDWR);
	if (fd < 0)
		bail_out("open %s: %s", cl_path("stock"), strerror(errno));

	lesson(ol);

	cl_barrier("go");
	if (cl_node <= 2) {
		transfers(ol, fd);
		cl_touch(cl_path(cl_node == 1 ? "moved.1" : "moved.2"));
	} else if (cl_node == 3) {
		audit(ol, fd);
	}
	cl_barrier("moved");
	ok(stock_read(fd, &s, &p) == 0, "node%d: the stock file reads", cl_node);
	is_int(s, 500, "node%d: Sofia 500 (%d out, %d in)", cl_node, N, N);
	is_int(p, 300, "node%d: Plovdiv 300", cl_node);
	is_int(s + p, 800, "node%d: total 800", cl_node);
	cl_barrier("read");
	close(fd);
	return cl_end(ol, cfg, dom);
}
