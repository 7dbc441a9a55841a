// SPDX-License-Identifier: GPL-2.0
/*
 * c_nl_acquire: netlink ACQUIRE in a cluster domain (asynchronous: the
 * request waits for the DLM's grant of each key after its local grant, and
 * its RESULT comes after the cluster's grant). Every node makes c_nla a
 * cluster domain; then, all through netlink sockets:
 * - node 1 takes 7:1 exclusively (granted, with a token);
 * - node 2's try-lock of 7:1 fails with EAGAIN, reason busy (held on
 *   another node);
 * - node 2 asks for 7:0 (free) and 7:1 with a 2 s timeout: it times out
 *   (ETIMEDOUT, reason timeout, key 7:1) no sooner than 1.9 s, and node 3's
 *   try-lock of 7:0 is then granted (the rollback released it locally and
 *   in the DLM);
 * - node 2 queues for 7:1 and cancels (CANCELLED), and queues for it on a
 *   second socket that it closes: neither leaves anything held;
 * - node 2 queues for 7:1 (60 s); node 1 marks the shared file "release1"
 *   and releases: node 2's RESULT is granted, after the mark, with a token
 *   above node 1's; once node 2 released, node 3's try-lock of 7:1 is
 *   granted within 10 s (the cancelled and closed requests held nothing).
 *
 * cluster-timeout: 300
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clcase.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

static const char *dom = "c_nla";

/* an ACQUIRE, and its RESULT if it was queued (60 s hang guard) */
static int acquire(struct nlt *s, const struct ordlock_key *keys, unsigned int n,
		   uint64_t timeout_ms, uint32_t flags, uint64_t cookie,
		   struct olc_nl_outcome *out)
{
	int ret;

	ret = nlt_acquire(s, dom, keys, n, timeout_ms * 1000000ULL, flags,
			  cookie, out);
	if (ret || out->status != ORDLOCK_STATUS_QUEUED)
		return ret;
	return nlt_wait_result(s, 60000, out);
}

static void put_token(const char *name, uint64_t token)
{
	FILE *fp = fopen(cl_path(name), "w");

	if (fp) {
		fprintf(fp, "%" PRIu64 "\n", token);
		fclose(fp);
	}
}

static uint64_t get_token(const char *name)
{
	unsigned long long v = 0;
	FILE *fp = fopen(cl_path(name), "r");

	if (fp) {
		if (fscanf(fp, "%llu", &v) != 1)
			v = 0;
		fclose(fp);
	}
	return v;
}

/* node 3: a try-lock of @key, retried up to @ms; 0 granted (released again) */
static int try_until(struct nlt *s, struct ordlock_key key, int ms)
{
	struct olc_nl_outcome o;
	long long end = cl_ms() + ms;
	int ret;

	do {
		ret = acquire(s, &key, 1, 5000, ORDLOCK_ACQUIRE_TRY, 9, &o);
		if (!ret && o.status == ORDLOCK_STATUS_GRANTED) {
			nlt_release(s, NULL, 0, NULL);
			return 0;
		}
		usleep(200000);
	} while (cl_ms() < end);
	diag("node3: last try of %u:%llu: %s", key.rank,
	     (unsigned long long)key.id, ret ? strerror(-ret) : nlt_outcome_str(&o));
	return -1;
}

int main(void)
{
	struct ordlock_key k0 = ORDLOCK_EX(7, 0), k1 = ORDLOCK_EX(7, 1);
	struct ordlock_key both[2] = { ORDLOCK_EX(7, 0), ORDLOCK_EX(7, 1) };
	struct olc_nl_outcome o, o2;
	struct ordlock *cfg;
	struct nlt *s, *s2;
	long long t0;
	int ret;

	cfg = cl_setup(dom, 3);
	s = nlt_must_open();
	cl_barrier("on");

	if (cl_node == 1) {
		ret = acquire(s, &k1, 1, 20000, 0, 1, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED && o.have_token && o.token,
		   "node1: netlink acquire of 7:1 granted with a token (%s)",
		   ret ? strerror(-ret) : nlt_outcome_str(&o));
		put_token("token1", o.token);
	}
	cl_barrier("held");

	if (cl_node == 2) {
		ret = acquire(s, &k1, 1, 5000, ORDLOCK_ACQUIRE_TRY, 2, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == EAGAIN &&
		   o.have_failure && o.failure.reason == ORDLOCK_REASON_BUSY,
		   "node2: try-lock of 7:1 held on node 1: EAGAIN, reason busy (%s)",
		   ret ? strerror(-ret) : nlt_outcome_str(&o));
		t0 = cl_ms();
		ret = acquire(s, both, 2, 2000, 0, 3, &o);
		t0 = cl_ms() - t0;
		ok(!ret && o.status == ORDLOCK_STATUS_TIMEOUT && o.error == ETIMEDOUT &&
		   o.have_failure && o.failure.reason == ORDLOCK_REASON_TIMEOUT &&
		   o.failure.key.rank == 7 && o.failure.key.id == 1,
		   "node2: 7:0 + 7:1 with a 2 s timeout: ETIMEDOUT, reason timeout, key 7:1 (%s)",
		   ret ? strerror(-ret) : nlt_outcome_str(&o));
		ok(t0 >= 1900, "node2: ... after its deadline (%lld ms)", t0);
		ok(t0 < 30000, "node2: ... and not long after (%lld ms, hang guard)", t0);
	}
	cl_barrier("timedout");

	if (cl_node == 3)
		ok(try_until(s, k0, 10000) == 0,
		   "node3: try-lock of 7:0 granted: node 2's rollback released it");
	if (cl_node == 2) {
		ret = nlt_acquire(s, dom, &k1, 1, 60000000000ULL, 0, 4, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_QUEUED, "node2: 7:1 queued (%s)",
		   ret ? strerror(-ret) : nlt_outcome_str(&o));
		usleep(300000);
		ret = nlt_cancel(s, 4, &o2);
		if (!ret && o2.status != ORDLOCK_STATUS_CANCELLED)
			ret = nlt_wait_result(s, 10000, &o2);
		ok(!ret && o2.status == ORDLOCK_STATUS_CANCELLED,
		   "node2: ... cancelled (%s)", ret ? strerror(-ret) : nlt_outcome_str(&o2));
		s2 = nlt_must_open();
		ret = nlt_acquire(s2, dom, &k1, 1, 60000000000ULL, 0, 5, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_QUEUED,
		   "node2: 7:1 queued on a second socket (%s)",
		   ret ? strerror(-ret) : nlt_outcome_str(&o));
		usleep(300000);
		nlt_close(s2);
	}
	cl_barrier("cancelled");

	if (cl_node == 2) {
		ret = nlt_acquire(s, dom, &k1, 1, 60000000000ULL, 0, 6, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_QUEUED, "node2: 7:1 queued for 60 s (%s)",
		   ret ? strerror(-ret) : nlt_outcome_str(&o));
	}
	cl_barrier("waiting");
	if (cl_node == 1) {
		sleep(1);
		cl_touch(cl_path("release1"));
		ok(nlt_release(s, NULL, 0, NULL) == 0, "node1: releases 7:1");
	}
	if (cl_node == 2) {
		ret = nlt_wait_result(s, 60000, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED && o.have_token,
		   "node2: 7:1 granted (%s)", ret ? strerror(-ret) : nlt_outcome_str(&o));
		ok(cl_exists(cl_path("release1")), "node2: ... after node 1 released it");
		ok(o.token > get_token("token1"),
		   "node2: its token %" PRIu64 " is above node 1's %" PRIu64,
		   o.token, get_token("token1"));
		ok(nlt_release(s, NULL, 0, NULL) == 0, "node2: releases 7:1");
	}
	cl_barrier("granted");
	if (cl_node == 3)
		ok(try_until(s, k1, 10000) == 0,
		   "node3: try-lock of 7:1 granted: the cancelled and closed requests hold nothing");
	cl_barrier("end");
	nlt_close(s);
	return cl_end(NULL, cfg, dom);
}
