// SPDX-License-Identifier: GPL-2.0
/*
 * c_nl_waitview: the netlink dumps of an owner granted a key on its node
 * that waits for the key's DLM lock or conversion (issue 19, "Views"), on
 * the three paths c_waitview's ordlockctl exec (a synchronous acquire)
 * does not take: an asynchronous netlink ACQUIRE, an asynchronous netlink
 * upgrade (CONVERT) and a synchronous ioctl upgrade (libordlock). Node 2
 * holds 9:1 exclusive and 9:2, 9:3 shared:
 * - node 1's netlink ACQUIRE of 9:1 (QUEUED): GET_LOCKS has node 1's
 *   holder of 9:1 with ORDLOCK_E_CLUSTER_WAIT and WAITED_US, no TOKEN;
 *   GET_OWNERS has the owner waiting for exclusive 9:1 (KEY, WAITED_US);
 *   cancelled: no holder of 9:1 on node 1, the owner waits for nothing;
 * - node 1's netlink upgrade of 9:2 (held shared): the holder exclusive,
 *   CLUSTER_WAIT, no TOKEN, the owner waiting for exclusive 9:2;
 * - a child's ioctl upgrade of 9:3 (held shared): the same for 9:3;
 * - node 2 lets go: both upgrades granted; the holders have tokens and no
 *   CLUSTER_WAIT, their owners wait for nothing.
 *
 * cluster-timeout: 300
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clcase.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

static const char *dom = "c_nwv";

#define S(o, ret) ((ret) ? strerror(-(ret)) : nlt_outcome_str(o))

/* The GET_OWNERS entry of owner @id: 0, or -ENOENT */
static int owner_entry(struct nlt *s, uint64_t id, struct olc_nl_entry *e)
{
	struct olc_nl_entry *v;
	int i, n, ret = -ENOENT;

	n = nlt_dump(s, ORDLOCK_CMD_GET_OWNERS, dom, &v);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (v[i].owner_id == id) {
			*e = v[i];
			ret = 0;
			break;
		}
	free(v);
	return ret;
}

/*
 * Wait (10 s at most) until this node's holder of 9:@id waits for the
 * cluster; its GET_LOCKS entry in *@e. 0, or -ETIMEDOUT
 */
static int cluster_waiting(struct nlt *s, uint64_t id, struct olc_nl_entry *e)
{
	long long end = cl_ms() + 10000;

	do {
		if (!nlt_find_lock(s, dom, 9, id, ORDLOCK_ROLE_HOLDER, 0, e) &&
		    OLC_NL_HAS(e, ORDLOCK_E_CLUSTER_WAIT))
			return 0;
		usleep(100000);
	} while (cl_ms() < end);
	return -ETIMEDOUT;
}

/* The views of a wait for the cluster of exclusive 9:@id */
static void check_waiting(struct nlt *s, uint64_t id, const char *what)
{
	struct olc_nl_entry e, o;
	int ret;

	ret = cluster_waiting(s, id, &e);
	ok(!ret, "node1: %s: GET_LOCKS: the holder of 9:%" PRIu64 " has CLUSTER_WAIT",
	   what, id);
	ok(!ret && !OLC_NL_HAS(&e, ORDLOCK_E_TOKEN) && OLC_NL_HAS(&e, ORDLOCK_E_WAITED_US) &&
	   e.mode == ORDLOCK_MODE_EXCLUSIVE,
	   "node1: %s: ... exclusive, WAITED_US %" PRIu64 ", no TOKEN", what, e.waited_us);
	ret = ret ? ret : owner_entry(s, e.owner_id, &o);
	ok(!ret && OLC_NL_HAS(&o, ORDLOCK_E_KEY) && o.key.rank == 9 && o.key.id == id &&
	   o.key.mode == ORDLOCK_MODE_EXCLUSIVE && OLC_NL_HAS(&o, ORDLOCK_E_WAITED_US),
	   "node1: %s: GET_OWNERS: owner %" PRIu64 " waits for exclusive 9:%" PRIu64,
	   what, e.owner_id, id);
}

/* The views of a holder of 9:@id granted everywhere */
static void check_granted(struct nlt *s, uint64_t id, const char *what)
{
	struct olc_nl_entry e, o;
	int ret;

	ret = nlt_find_lock(s, dom, 9, id, ORDLOCK_ROLE_HOLDER, 0, &e);
	ok(!ret && !OLC_NL_HAS(&e, ORDLOCK_E_CLUSTER_WAIT) && OLC_NL_HAS(&e, ORDLOCK_E_TOKEN) &&
	   e.token && !OLC_NL_HAS(&e, ORDLOCK_E_WAITED_US),
	   "node1: %s: GET_LOCKS: the holder of 9:%" PRIu64 " has its token %" PRIu64
	   ", no CLUSTER_WAIT", what, id, ret ? 0 : e.token);
	ret = ret ? ret : owner_entry(s, e.owner_id, &o);
	ok(!ret && !OLC_NL_HAS(&o, ORDLOCK_E_KEY) && !OLC_NL_HAS(&o, ORDLOCK_E_WAITED_US),
	   "node1: %s: GET_OWNERS: its owner waits for nothing", what);
}

/*
 * The child: holds 9:3 shared, says "r" on @ready, upgrades it through the
 * ioctl, says "g" (granted) or "f", and holds it until @go is closed
 */
static int child(int ready, int go)
{
	struct ordlock_key sh = ORDLOCK_SH(9, 3), ex = ORDLOCK_EX(9, 3);
	struct ordlock *ol = ordlock_open(dom);
	char c;
	int ret;

	if (!ol || ordlock_acquire(ol, &sh, 1, 20000, 0, NULL))
		return 2;
	if (write(ready, "r", 1) != 1)
		return 2;
	ret = ordlock_convert(ol, ex, 60000, 0, NULL);
	if (write(ready, ret ? "f" : "g", 1) != 1)
		return 2;
	while (read(go, &c, 1) > 0)
		;
	ordlock_close(ol);
	return ret ? 1 : 0;
}

int main(void)
{
	struct ordlock_key ex1 = ORDLOCK_EX(9, 1), sh2 = ORDLOCK_SH(9, 2);
	struct ordlock_key ex2 = ORDLOCK_EX(9, 2);
	struct ordlock_key node2[3] = { ORDLOCK_EX(9, 1), ORDLOCK_SH(9, 2), ORDLOCK_SH(9, 3) };
	struct olc_nl_outcome o, o2;
	struct olc_nl_entry e, ow;
	struct ordlock *cfg;
	int ret, status, pipefd[2], gofd[2];
	uint64_t owner;
	struct nlt *s;
	char c;
	pid_t pid = -1;

	cfg = cl_setup(dom, 3);
	s = nlt_must_open();
	cl_barrier("on");

	if (cl_node == 2) {
		ret = nlt_acquire(s, dom, node2, 3, 20000000000ULL, 0, 1, &o);
		if (!ret && o.status == ORDLOCK_STATUS_QUEUED)
			ret = nlt_wait_result(s, 30000, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
		   "node2: holds 9:1 exclusive, 9:2 and 9:3 shared (%s)", S(&o, ret));
	}
	cl_barrier("held");

	if (cl_node == 1) {
		/* an asynchronous acquire waiting in the DLM, then cancelled */
		ret = nlt_acquire(s, dom, &ex1, 1, 60000000000ULL, 0, 2, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_QUEUED, "node1: ACQUIRE of 9:1 queued (%s)",
		   S(&o, ret));
		check_waiting(s, 1, "ACQUIRE");
		owner = nlt_lock_owner(s, dom, 9, 1, ORDLOCK_ROLE_HOLDER, 0);
		ret = nlt_cancel(s, 2, &o2);
		if (!ret && o2.status != ORDLOCK_STATUS_CANCELLED)
			ret = nlt_wait_result(s, 10000, &o2);
		ok(!ret && o2.status == ORDLOCK_STATUS_CANCELLED, "node1: ... cancelled (%s)",
		   S(&o2, ret));
		ok(nlt_find_lock(s, dom, 9, 1, ORDLOCK_ROLE_HOLDER, 0, &e) == -ENOENT,
		   "node1: ... GET_LOCKS: no holder of 9:1 here any more");
		ret = owner_entry(s, owner, &ow);
		ok(!ret && !OLC_NL_HAS(&ow, ORDLOCK_E_KEY), "node1: ... GET_OWNERS: owner %" PRIu64
		   " waits for nothing (%s)", owner, ret ? strerror(-ret) : "found");

		/* an asynchronous upgrade waiting in the DLM */
		ret = nlt_acquire(s, dom, &sh2, 1, 20000000000ULL, 0, 3, &o);
		if (!ret && o.status == ORDLOCK_STATUS_QUEUED)
			ret = nlt_wait_result(s, 30000, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED, "node1: holds 9:2 shared (%s)",
		   S(&o, ret));
		ret = nlt_convert(s, ex2, 60000000000ULL, 0, 4, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_QUEUED, "node1: upgrade of 9:2 queued (%s)",
		   S(&o, ret));
		check_waiting(s, 2, "CONVERT");

		/* a synchronous upgrade (ioctl) waiting in the DLM */
		if (pipe(pipefd) || pipe(gofd))
			bail_out("pipe: %s", strerror(errno));
		pid = fork();
		if (pid < 0)
			bail_out("fork: %s", strerror(errno));
		if (!pid) {
			close(pipefd[0]);
			close(gofd[1]);
			_exit(child(pipefd[1], gofd[0]));
		}
		close(pipefd[1]);
		close(gofd[0]);
		ok(read(pipefd[0], &c, 1) == 1 && c == 'r', "node1: a child holds 9:3 shared (ioctl)");
		check_waiting(s, 3, "ioctl upgrade");
	}
	cl_barrier("waiting");

	if (cl_node == 2)
		ok(nlt_release(s, NULL, 0, NULL) == 0, "node2: releases 9:1, 9:2 and 9:3");
	if (cl_node == 1) {
		ret = nlt_wait_result(s, 60000, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED && o.have_token,
		   "node1: the upgrade of 9:2 granted (%s)", S(&o, ret));
		check_granted(s, 2, "CONVERT");
		/* the child's upgrade: granted, it holds 9:3 exclusive until told */
		ok(pid > 0 && read(pipefd[0], &c, 1) == 1 && c == 'g',
		   "node1: the child's ioctl upgrade of 9:3 granted");
		check_granted(s, 3, "ioctl upgrade");
		close(gofd[1]);
		close(pipefd[0]);
		if (pid > 0 && waitpid(pid, &status, 0) == pid)
			ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			   "node1: the child ended well (status %d)", status);
		else
			ok(0, "node1: the child ended well (no child)");
		ok(nlt_find_lock(s, dom, 9, 3, ORDLOCK_ROLE_HOLDER, 0, &e) == -ENOENT,
		   "node1: ... the child ended: no holder of 9:3 here");
		ok(nlt_release(s, NULL, 0, NULL) == 0, "node1: releases 9:2");
	}
	cl_barrier("end");
	nlt_close(s);
	return cl_end(NULL, cfg, dom);
}
