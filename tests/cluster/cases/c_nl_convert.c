// SPDX-License-Identifier: GPL-2.0
/*
 * c_nl_convert: netlink CONVERT in a cluster domain (asynchronous: an
 * upgrade is granted locally, then waits for the DLM's conversion without
 * blocking the socket, and its RESULT says how it ended; a downgrade never
 * waits). Every node makes c_nlc a cluster domain; all requests go through
 * netlink sockets:
 * - node 2 takes 8:1 exclusively and releases it (its token, T2);
 * - nodes 1 and 2 hold 8:1 shared; node 1's upgrade with a 2 s timeout
 *   times out (ETIMEDOUT, reason timeout, key 8:1) no sooner than 1.9 s,
 *   and leaves the key shared in both places: node 1's GET_LOCKS shows it
 *   shared, node 3's exclusive try-lock fails, its shared one is granted;
 * - node 1's try-upgrade: EAGAIN, reason busy; a queued upgrade cancelled:
 *   CANCELLED, and node 3's shared try-lock is granted again;
 * - node 1 upgrades for 60 s (QUEUED); node 2 marks "release2" and lets
 *   go: node 1's RESULT is granted after the mark, with a new token (above
 *   T2 and its own shared grant's);
 *   node 3's shared try-lock fails; node 1's downgrade is GRANTED in its
 *   reply (it never waits) with the same token, and node 3's shared
 *   try-lock is granted then, its exclusive one still refused;
 * - nodes 1 and 2 hold 8:2 shared and upgrade at once: exactly one gets
 *   EDEADLK, reason upgrade, still holds the key shared and lets go; the
 *   other's upgrade is granted; node 3's shared try-lock then fails;
 * - node 2 holds 8:3 shared; a child of node 1 holds it shared too and
 *   upgrades (QUEUED), and is killed while it waits: node 1 shows no
 *   holder of 8:3 afterwards, and once node 2 let go, node 3's exclusive
 *   try-lock is granted (the dead owner's upgrade left nothing in the DLM).
 *
 * cluster-timeout: 300
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clcase.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

static const char *dom = "c_nlc";

#define S(o, ret) ((ret) ? strerror(-(ret)) : nlt_outcome_str(o))

/* The outcome of a request: its reply, or the RESULT of a queued one */
static int finish(struct nlt *s, int ret, struct olc_nl_outcome *out)
{
	if (ret || out->status != ORDLOCK_STATUS_QUEUED)
		return ret;
	return nlt_wait_result(s, 60000, out);
}

static int acquire(struct nlt *s, struct ordlock_key key, uint64_t timeout_ms,
		   uint32_t flags, uint64_t cookie, struct olc_nl_outcome *out)
{
	return finish(s, nlt_acquire(s, dom, &key, 1, timeout_ms * 1000000ULL,
				     flags, cookie, out), out);
}

static int convert(struct nlt *s, struct ordlock_key key, uint64_t timeout_ms,
		   uint32_t flags, uint64_t cookie, struct olc_nl_outcome *out)
{
	return finish(s, nlt_convert(s, key, timeout_ms * 1000000ULL, flags,
				     cookie, out), out);
}

static void put_str(const char *name, const char *v)
{
	FILE *fp = fopen(cl_path(name), "w");

	if (fp) {
		fprintf(fp, "%s\n", v);
		fclose(fp);
	}
}

static void get_str(const char *name, char *buf, size_t len)
{
	FILE *fp = fopen(cl_path(name), "r");

	buf[0] = 0;
	if (fp) {
		if (!fgets(buf, (int)len, fp))
			buf[0] = 0;
		fclose(fp);
	}
	buf[strcspn(buf, "\n")] = 0;
}

static void put_token(const char *name, uint64_t token)
{
	char v[32];

	snprintf(v, sizeof(v), "%" PRIu64, token);
	put_str(name, v);
}

static uint64_t get_token(const char *name)
{
	char v[32];

	get_str(name, v, sizeof(v));
	return strtoull(v, NULL, 10);
}

/*
 * A try-lock of @key, retried up to @ms while refused (the DLM finishes a
 * revert or a downgrade on its own): 0 granted (and released again), or
 * the last errno
 */
static int try_until(struct nlt *s, struct ordlock_key key, int ms)
{
	struct olc_nl_outcome o;
	long long end = cl_ms() + ms;
	int ret;

	do {
		ret = acquire(s, key, 5000, ORDLOCK_ACQUIRE_TRY, 9, &o);
		if (!ret && o.status == ORDLOCK_STATUS_GRANTED) {
			nlt_release(s, NULL, 0, NULL);
			return 0;
		}
		usleep(200000);
	} while (cl_ms() < end);
	diag("node%d: last try of %u:%llu %s: %s", cl_node, key.rank,
	     (unsigned long long)key.id, key.mode == ORDLOCK_MODE_SHARED ? "sh" : "ex",
	     S(&o, ret));
	return ret ? ret : -(int)o.error;
}

/* A try-lock of @key that must fail with EAGAIN, reason busy */
static void refused(struct nlt *s, struct ordlock_key key, const char *what)
{
	struct olc_nl_outcome o;
	int ret = acquire(s, key, 5000, ORDLOCK_ACQUIRE_TRY, 9, &o);

	ok(!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == EAGAIN &&
	   o.have_failure && o.failure.reason == ORDLOCK_REASON_BUSY,
	   "node%d: %s try-lock of %u:%llu: EAGAIN, reason busy, %s (%s)", cl_node,
	   key.mode == ORDLOCK_MODE_SHARED ? "shared" : "exclusive", key.rank,
	   (unsigned long long)key.id, what, S(&o, ret));
	if (!ret && o.status == ORDLOCK_STATUS_GRANTED)
		nlt_release(s, NULL, 0, NULL);
}

/* The mode this node's (only) local holder of @rank:@id has, 0 for none */
static uint32_t local_mode(struct nlt *s, uint32_t rank, uint64_t id)
{
	struct olc_nl_entry e;

	if (nlt_find_lock(s, dom, rank, id, ORDLOCK_ROLE_HOLDER, 0, &e))
		return 0;
	return e.mode;
}

/* node 1's child: holds 8:3 shared, upgrades, says so, waits to be killed */
static void child(void)
{
	struct ordlock_key sh = ORDLOCK_SH(8, 3), ex = ORDLOCK_EX(8, 3);
	struct olc_nl_outcome o;
	struct nlt *s = nlt_must_open();
	int ret;

	ret = acquire(s, sh, 20000, 0, 1, &o);
	if (ret || o.status != ORDLOCK_STATUS_GRANTED) {
		put_str("child", "not granted");
		_exit(1);
	}
	ret = nlt_convert(s, ex, 120000000000ULL, 0, 2, &o);
	put_str("child", !ret && o.status == ORDLOCK_STATUS_QUEUED ? "queued" :
		S(&o, ret));
	pause();
	_exit(0);
}

int main(void)
{
	struct ordlock_key sh1 = ORDLOCK_SH(8, 1), ex1 = ORDLOCK_EX(8, 1);
	struct ordlock_key sh2 = ORDLOCK_SH(8, 2), ex2 = ORDLOCK_EX(8, 2);
	struct ordlock_key sh3 = ORDLOCK_SH(8, 3), ex3 = ORDLOCK_EX(8, 3);
	struct olc_nl_outcome o, o2;
	int ret, j, edeadlk = 0, granted = 0;
	struct ordlock *cfg;
	uint64_t token;
	char buf[128];
	struct nlt *s;
	long long t0;
	pid_t pid;

	cfg = cl_setup(dom, 3);
	s = nlt_must_open();
	cl_barrier("on");

	/* T2: node 2's exclusive grant of 8:1 */
	if (cl_node == 2) {
		ret = acquire(s, ex1, 20000, 0, 1, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED && o.have_token && o.token,
		   "node2: 8:1 exclusive, token %" PRIu64 " (%s)", o.token, S(&o, ret));
		put_token("token2", o.token);
		ok(nlt_release(s, NULL, 0, NULL) == 0, "node2: releases 8:1");
	}
	cl_barrier("t2");
	if (cl_node <= 2) {
		ret = acquire(s, sh1, 20000, 0, 2, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
		   "node%d: holds 8:1 shared (%s)", cl_node, S(&o, ret));
		if (cl_node == 1)
			put_token("token1s", o.token);
	}
	cl_barrier("shared");

	/* An upgrade that times out against node 2's shared hold */
	if (cl_node == 1) {
		t0 = cl_ms();
		ret = nlt_convert(s, ex1, 2000000000ULL, 0, 3, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_QUEUED,
		   "node1: upgrade of 8:1 (2 s) queued (%s)", S(&o, ret));
		ret = finish(s, ret, &o);
		t0 = cl_ms() - t0;
		ok(!ret && o.status == ORDLOCK_STATUS_TIMEOUT && o.error == ETIMEDOUT &&
		   o.have_failure && o.failure.reason == ORDLOCK_REASON_TIMEOUT &&
		   o.failure.key.rank == 8 && o.failure.key.id == 1,
		   "node1: ... ETIMEDOUT, reason timeout, key 8:1 (%s)", S(&o, ret));
		ok(t0 >= 1900, "node1: ... after its deadline (%lld ms)", t0);
		ok(t0 < 30000, "node1: ... and not long after (%lld ms, hang guard)", t0);
		is_int(local_mode(s, 8, 1), ORDLOCK_MODE_SHARED,
		       "node1: ... still holds 8:1 shared here");
	}
	cl_barrier("timedout");
	if (cl_node == 3) {
		refused(s, ex1, "held shared on nodes 1 and 2");
		ok(try_until(s, sh1, 10000) == 0,
		   "node3: shared try-lock of 8:1 granted: node 1 is shared in the DLM");
	}
	cl_barrier("checked1");

	/* A try-upgrade, and a queued upgrade cancelled */
	if (cl_node == 1) {
		ret = convert(s, ex1, 5000, ORDLOCK_ACQUIRE_TRY, 4, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == EAGAIN &&
		   o.have_failure && o.failure.reason == ORDLOCK_REASON_BUSY,
		   "node1: try-upgrade of 8:1: EAGAIN, reason busy (%s)", S(&o, ret));
		ret = nlt_convert(s, ex1, 60000000000ULL, 0, 5, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_QUEUED,
		   "node1: upgrade of 8:1 (60 s) queued (%s)", S(&o, ret));
		usleep(300000);
		ret = nlt_cancel(s, 5, &o2);
		if (!ret && o2.status != ORDLOCK_STATUS_CANCELLED)
			ret = nlt_wait_result(s, 10000, &o2);
		ok(!ret && o2.status == ORDLOCK_STATUS_CANCELLED,
		   "node1: ... cancelled (%s)", S(&o2, ret));
		is_int(local_mode(s, 8, 1), ORDLOCK_MODE_SHARED,
		       "node1: ... still holds 8:1 shared here");
	}
	cl_barrier("cancelled");
	if (cl_node == 3)
		ok(try_until(s, sh1, 10000) == 0,
		   "node3: shared try-lock of 8:1 granted again (the cancel left node 1 shared)");
	cl_barrier("checked2");

	/* An upgrade granted when node 2 lets go */
	if (cl_node == 1) {
		ret = nlt_convert(s, ex1, 60000000000ULL, 0, 6, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_QUEUED,
		   "node1: upgrade of 8:1 (60 s) queued (%s)", S(&o, ret));
	}
	cl_barrier("upgrading");
	if (cl_node == 2) {
		sleep(1);
		cl_touch(cl_path("release2"));
		ok(nlt_release(s, NULL, 0, NULL) == 0, "node2: releases 8:1");
	}
	if (cl_node == 1) {
		ret = nlt_wait_result(s, 60000, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED && o.have_token,
		   "node1: ... granted (%s)", S(&o, ret));
		ok(cl_exists(cl_path("release2")), "node1: ... after node 2 let go");
		token = o.token;
		ok(token > get_token("token2"),
		   "node1: its token %" PRIu64 " is above node 2's exclusive %" PRIu64,
		   token, get_token("token2"));
		ok(token > get_token("token1s"),
		   "node1: ... and a new one, above its shared grant's %" PRIu64,
		   get_token("token1s"));
		is_int(local_mode(s, 8, 1), ORDLOCK_MODE_EXCLUSIVE,
		       "node1: ... holds 8:1 exclusive here");
		put_token("token1", token);
	}
	cl_barrier("upgraded");
	if (cl_node == 3)
		refused(s, sh1, "held exclusive on node 1");
	cl_barrier("checked3");
	if (cl_node == 1) {
		t0 = cl_ms();
		ret = nlt_convert(s, sh1, 60000000000ULL, 0, 7, &o);
		t0 = cl_ms() - t0;
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED && o.have_token &&
		   o.token == get_token("token1"),
		   "node1: downgrade of 8:1 GRANTED in its reply, same token (%s)",
		   S(&o, ret));
		ok(t0 < 5000, "node1: ... at once (%lld ms, hang guard)", t0);
		is_int(local_mode(s, 8, 1), ORDLOCK_MODE_SHARED,
		       "node1: ... holds 8:1 shared here");
	}
	cl_barrier("downgraded");
	if (cl_node == 3) {
		ok(try_until(s, sh1, 10000) == 0,
		   "node3: shared try-lock of 8:1 granted after node 1's downgrade");
		refused(s, ex1, "held shared on node 1");
	}
	cl_barrier("checked4");
	if (cl_node == 1)
		ok(nlt_release(s, NULL, 0, NULL) == 0, "node1: releases 8:1");

	/* Two upgrades at once: the DLM's conversion deadlock */
	if (cl_node <= 2) {
		ret = acquire(s, sh2, 20000, 0, 10, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
		   "node%d: holds 8:2 shared (%s)", cl_node, S(&o, ret));
	}
	cl_barrier("shared2");
	if (cl_node <= 2) {
		ret = convert(s, ex2, 20000, 0, 11, &o);
		snprintf(buf, sizeof(buf), "conv.%d", cl_node);
		if (!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == EDEADLK) {
			ok(o.have_failure && o.failure.reason == ORDLOCK_REASON_UPGRADE &&
			   o.failure.key.rank == 8 && o.failure.key.id == 2,
			   "node%d: upgrade of 8:2: EDEADLK, reason upgrade, key 8:2 (%s)",
			   cl_node, S(&o, ret));
			is_int(local_mode(s, 8, 2), ORDLOCK_MODE_SHARED,
			       "node%d: ... still holds 8:2 shared", cl_node);
			put_str(buf, "edeadlk");
			/* the application's answer: let go, so the other goes on */
			ok(nlt_release(s, NULL, 0, NULL) == 0, "node%d: releases 8:2",
			   cl_node);
		} else {
			put_str(buf, !ret && o.status == ORDLOCK_STATUS_GRANTED ?
				"granted" : S(&o, ret));
		}
	}
	cl_barrier("converted2");
	for (j = 1; j <= 2; j++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "conv.%d", j);
		get_str(nm, buf, sizeof(buf));
		diag("node%d's upgrade of 8:2: %s", j, buf);
		edeadlk += !strcmp(buf, "edeadlk");
		granted += !strcmp(buf, "granted");
	}
	ok(edeadlk == 1 && granted == 1,
	   "node%d: one upgrade refused with EDEADLK, the other granted (%d, %d)",
	   cl_node, edeadlk, granted);
	if (cl_node == 3)
		refused(s, sh2, "held exclusive by the upgrade granted");
	cl_barrier("tried2");
	if (cl_node <= 2)
		nlt_release(s, NULL, 0, NULL);

	/* An owner killed while its upgrade waits */
	if (cl_node == 2) {
		ret = acquire(s, sh3, 20000, 0, 20, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
		   "node2: holds 8:3 shared (%s)", S(&o, ret));
	}
	cl_barrier("shared3");
	if (cl_node == 1) {
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			bail_out("fork: %s", strerror(errno));
		if (!pid)
			child();
		t0 = cl_ms();
		buf[0] = 0;
		while (!buf[0] && cl_ms() - t0 < 60000) {
			usleep(100000);
			get_str("child", buf, sizeof(buf));
		}
		ok(!strcmp(buf, "queued"),
		   "node1: a child holds 8:3 shared and its upgrade is queued (%s)", buf);
		usleep(500000);
		is_int(local_mode(s, 8, 3), ORDLOCK_MODE_EXCLUSIVE,
		       "node1: ... granted here, waiting for the DLM");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ok(local_mode(s, 8, 3) == 0,
		   "node1: the child killed: no holder of 8:3 left here");
	}
	cl_barrier("killed");
	if (cl_node == 2)
		ok(nlt_release(s, NULL, 0, NULL) == 0, "node2: releases 8:3");
	cl_barrier("released3");
	if (cl_node == 3)
		ok(try_until(s, ex3, 10000) == 0,
		   "node3: exclusive try-lock of 8:3 granted: the killed owner left nothing");

	cl_barrier("end");
	nlt_close(s);
	return cl_end(NULL, cfg, dom);
}
