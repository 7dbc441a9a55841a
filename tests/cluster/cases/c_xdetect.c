// SPDX-License-Identifier: GPL-2.0
/*
 * c_xdetect: the kernel's side of detection across nodes (issue 41,
 * docs/cluster.md "Deadlocks across nodes"), with this program as a fake
 * ordlock-xdetectd on nodes 1 and 2 (node 3 only keeps the barriers):
 *
 * - a cluster domain takes policy detect; XD_HELLO registers the program's
 *   socket, DOMAIN_GET (and ordlockctl domain) then says "across nodes";
 * - a cycle across nodes: owner A of node 1 holds 5:1 and waits for 5:2
 *   in the DLM, owner B of node 2 holds 5:2 and waits for 5:1 in the DLM
 *   (each in a child, an ioctl acquire); each node's daemon socket gets
 *   the XD_EVENT WAIT of its owner's wait (CLUSTER_WAIT, a generation);
 * - XD_CHECK of each node's vertex: live; of a generation that is not the
 *   wait's: not live; XD_WALK from the holders of the node's key: the path
 *   of its owner waiting in the DLM (with the hold's generation), and from
 *   the owner's wait the same; from a stale generation: ESTALE;
 * - node 1's XD_FAIL of A with a stale generation: ESTALE, and nothing
 *   changes (A still waits: XD_CHECK live);
 * - node 1's XD_FAIL of A with its generation and the cycle: A's acquire
 *   fails with EDEADLK, reason deadlock, a cycle of 2 steps whose second
 *   is node 2's B (ORDLOCK_STEP_OTHER_NODE, node id 2, its pid and comm),
 *   "node 2 pid" in ordlock_strcycle_nodes(); the WAIT_END of A's wait
 *   says DEADLOCK; B is granted 5:1 (node 2: WAIT_END GRANTED); the same
 *   XD_FAIL again: ESTALE; the counters: one victim, the stale ones.
 * - before that, on node 1 (the domain's probe delay 1000 ms): a wait on
 *   the node (a child queued behind this program's hold of 6:1, released
 *   as soon as GET_STATS shows it waiting) granted before the delay sends
 *   no XD_EVENT at all (its acquire's own time tells it was shorter; on a
 *   host so slow that it was not, the check is the next one's); a wait
 *   for 6:2 that lasts (held until its WAIT came) is announced no sooner
 *   than the delay after its start (the event's own start time, the same
 *   clock), then its WAIT_END says granted, the same generation; and a
 *   netlink request's wait in the DLM (node 1's for 6:3, held by node 2
 *   until its WAIT came): the same, announced by the request's poll.
 *
 * cluster-timeout: 300
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include "barrier.h"
#include "clcase.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

static const char *dom = "c_xdk";	/* its own: the counters are per domain */

/* The domain's probe delay: short waits end well before it */
#define DELAY_MS	1000

/* One XD_EVENT */
struct xd_ev {
	uint32_t kind, end;
	uint64_t owner, gen, since_ns;
	uint32_t pid, rank, mode;
	uint64_t id;
	int cluster_wait;
	char comm[ORDLOCK_COMM_LEN];
};

/* What the child that waits reports (shared memory) */
struct waiter {
	int ret;
	long long ms;
	uint32_t reason;
	int nsteps;
	struct ordlock_cycle_step steps[4];
	uint32_t nodes[4];
	char text[512];
};

/* XD_HELLO: this node's daemon, in its group with @members members */
static int hello(struct nlt *s, uint32_t members)
{
	struct nl_msg *m = nlt_msg_new(s, ORDLOCK_CMD_XD_HELLO, 0);

	nla_put_u32(m, ORDLOCK_A_XD_NODE, (uint32_t)cl_node);
	nla_put_u32(m, ORDLOCK_A_XD_STATE, ORDLOCK_XD_ON);
	nla_put_u32(m, ORDLOCK_A_XD_MEMBERS, members);
	return nlt_request(s, m, NULL);
}

/* Join the "xdetect" group on @s */
static int join(struct nlt *s)
{
	int grp = genl_ctrl_resolve_grp(s->nl->sk, ORDLOCK_GENL_NAME,
					ORDLOCK_GENL_MCGRP_XDETECT);

	if (grp < 0)
		return grp;
	return nl_socket_add_membership(s->nl->sk, grp);
}

/* Parse one XD_EVENT message */
static int parse_ev(struct nlmsghdr *nlh, struct xd_ev *ev)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1], *eb[ORDLOCK_E_MAX + 1];
	struct nlattr *kb[ORDLOCK_K_MAX + 1];

	memset(ev, 0, sizeof(*ev));
	if (genlmsg_parse(nlh, 0, tb, ORDLOCK_A_MAX, NULL) ||
	    !tb[ORDLOCK_A_XD_KIND] || !tb[ORDLOCK_A_ENTRY] || !tb[ORDLOCK_A_XD_BOOT] ||
	    !tb[ORDLOCK_A_DOMAIN] || strcmp(nla_get_string(tb[ORDLOCK_A_DOMAIN]), dom))
		return -1;
	ev->kind = nla_get_u32(tb[ORDLOCK_A_XD_KIND]);
	if (tb[ORDLOCK_A_XD_END])
		ev->end = nla_get_u32(tb[ORDLOCK_A_XD_END]);
	if (nla_parse_nested(eb, ORDLOCK_E_MAX, tb[ORDLOCK_A_ENTRY], NULL) ||
	    !eb[ORDLOCK_E_OWNER_ID] || !eb[ORDLOCK_E_XD_GEN] || !eb[ORDLOCK_E_KEY] ||
	    nla_parse_nested(kb, ORDLOCK_K_MAX, eb[ORDLOCK_E_KEY], NULL) ||
	    !kb[ORDLOCK_K_RANK] || !kb[ORDLOCK_K_ID])
		return -1;
	ev->owner = nla_get_u64(eb[ORDLOCK_E_OWNER_ID]);
	ev->gen = nla_get_u64(eb[ORDLOCK_E_XD_GEN]);
	ev->since_ns = eb[ORDLOCK_E_TIME_NS] ? nla_get_u64(eb[ORDLOCK_E_TIME_NS]) : 0;
	ev->pid = eb[ORDLOCK_E_PID] ? nla_get_u32(eb[ORDLOCK_E_PID]) : 0;
	if (eb[ORDLOCK_E_COMM])
		snprintf(ev->comm, sizeof(ev->comm), "%s", nla_get_string(eb[ORDLOCK_E_COMM]));
	ev->cluster_wait = eb[ORDLOCK_E_CLUSTER_WAIT] != NULL;
	ev->rank = nla_get_u32(kb[ORDLOCK_K_RANK]);
	ev->id = nla_get_u64(kb[ORDLOCK_K_ID]);
	ev->mode = kb[ORDLOCK_K_MODE] ? nla_get_u32(kb[ORDLOCK_K_MODE]) : 0;
	return 0;
}

/*
 * The next XD_EVENT of @kind about key @rank:@id on socket @fd within @ms
 * (0: only among those already queued): 0 with *@ev, or -ETIMEDOUT;
 * @kind 0: of any kind
 */
static int wait_ev_key(int fd, uint32_t kind, uint32_t rank, uint64_t id, int ms,
		       struct xd_ev *ev)
{
	static char buf[65536];
	long long end = cl_ms() + ms;
	int got = 0;

	do {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct nlmsghdr *nlh;
		ssize_t n;
		int len;

		if (poll(&p, 1, ms ? 200 : 0) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0)
			continue;
		got = 1;
		len = (int)n;
		for (nlh = (struct nlmsghdr *)buf; nlmsg_ok(nlh, len);
		     nlh = nlmsg_next(nlh, &len)) {
			struct genlmsghdr *g = nlmsg_data(nlh);

			if (nlh->nlmsg_type < NLMSG_MIN_TYPE || g->cmd != ORDLOCK_CMD_XD_EVENT)
				continue;
			if (!parse_ev(nlh, ev) && (!kind || ev->kind == kind) &&
			    ev->rank == rank && ev->id == id)
				return 0;
		}
		/* with @ms 0: again while the last poll found a message */
	} while (cl_ms() < end || (!ms && got--));
	return -ETIMEDOUT;
}

static int wait_ev(int fd, uint32_t kind, uint64_t id, int ms, struct xd_ev *ev)
{
	return wait_ev_key(fd, kind, 5, id, ms, ev);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* This program holds 6:@id; a child waits for it (20 s) and reports into @w */
static pid_t queue_child(struct waiter *w, uint64_t id)
{
	struct ordlock_key k = ORDLOCK_EX(6, id);
	struct ordlock *ol;
	long long t0;
	pid_t pid;

	pid = fork();
	if (pid)
		return pid;
	ol = ordlock_open(dom);
	if (!ol)
		_exit(2);
	t0 = cl_ms();
	w->ret = ordlock_acquire(ol, &k, 1, 20000, 0, NULL);
	w->ms = cl_ms() - t0;
	ordlock_close(ol);
	_exit(0);
}

/* GET_STATS shows @n waiters in the domain (20 s: a hang guard) */
static int waiters(struct nlt *s, uint64_t n)
{
	uint64_t st[ORDLOCK_S_MAX + 1];
	long long end = cl_ms() + 20000;

	while (cl_ms() < end) {
		if (!nlt_get_stats(s, dom, st) && st[ORDLOCK_S_WAITERS] == n)
			return 0;
		usleep(2000);
	}
	return -ETIMEDOUT;
}

/*
 * Node 1: a wait of the detect cluster domain granted before the probe
 * delay sends no XD_EVENT; one that lasts is announced after the delay,
 * then its end
 */
static void short_and_long(struct nlt *s, struct nlt *ev, struct waiter *w)
{
	struct ordlock_key k1 = ORDLOCK_EX(6, 1), k2 = ORDLOCK_EX(6, 2);
	struct ordlock *ol = ordlock_open(dom);
	struct xd_ev e, wait, end;
	long long age;
	int status, ret, n = 0;
	pid_t pid;

	if (!ol || ordlock_acquire(ol, &k1, 1, 20000, 0, NULL))
		bail_out("node1: hold 6:1: %s", strerror(errno));
	memset(w, 0, sizeof(*w));
	pid = queue_child(w, 1);
	ret = waiters(s, 1);
	is_int(ret, 0, "node1: a child waits for 6:1 behind this program");
	ordlock_release_all(ol);
	ret = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status);
	ok(ret && !w->ret, "node1: ... granted when it let go, after %lld ms", w->ms);
	/* the events of a wait are sent before its acquire returns: queued now */
	while (!wait_ev_key(nlt_fd(ev), 0, 6, 1, 0, &e)) {
		diag("node1: XD_EVENT kind %u gen %" PRIu64 " of 6:1", e.kind, e.gen);
		n++;
	}
	if (w->ms < DELAY_MS)
		is_int(n, 0, "node1: a wait of %lld ms (< its probe delay, %d ms) sends no XD_EVENT",
		       w->ms, DELAY_MS);
	else
		ok(n >= 2, "node1: a wait of %lld ms (the host was slow: not < %d ms) sent its WAIT and WAIT_END",
		   w->ms, DELAY_MS);

	if (ordlock_acquire(ol, &k2, 1, 20000, 0, NULL))
		bail_out("node1: hold 6:2: %s", strerror(errno));
	memset(w, 0, sizeof(*w));
	pid = queue_child(w, 2);
	ret = wait_ev_key(nlt_fd(ev), ORDLOCK_XD_WAIT, 6, 2, 20000, &wait);
	age = (long long)realtime_ns() - (long long)wait.since_ns;
	ok(!ret && !wait.cluster_wait && wait.gen,
	   "node1: a wait for 6:2 that lasts: XD_EVENT WAIT (on the node, gen %" PRIu64 ")",
	   wait.gen);
	ok(!ret && wait.since_ns && age >= DELAY_MS * 1000000LL,
	   "node1: ... sent once it had lasted its probe delay: %lld ms after its start",
	   age / 1000000);
	ordlock_release_all(ol);
	ret = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status);
	ok(ret && !w->ret, "node1: ... granted when it let go, after %lld ms", w->ms);
	ret = wait_ev_key(nlt_fd(ev), ORDLOCK_XD_WAIT_END, 6, 2, 0, &end);
	ok(!ret && end.gen == wait.gen && end.end == ORDLOCK_XD_END_GRANTED,
	   "node1: ... then its WAIT_END: granted, the same generation");
	ordlock_close(ol);
}

/* XD_CHECK of one vertex: 1 live, 0 not, or a negative errno */
static int check(struct nlt *s, uint64_t owner, uint64_t gen, uint64_t other,
		 uint64_t other_gen)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1], *p, *e;
	struct nl_msg *m = nlt_msg_new(s, ORDLOCK_CMD_XD_CHECK, 0);
	int ret;

	nla_put_string(m, ORDLOCK_A_DOMAIN, dom);
	p = olc_nl_nest_start(m, ORDLOCK_A_XD_PATH);
	e = olc_nl_nest_start(m, ORDLOCK_A_ENTRY);
	nla_put_u64(m, ORDLOCK_E_OWNER_ID, owner);
	nla_put_u64(m, ORDLOCK_E_XD_GEN, gen);
	nla_nest_end(m, e);
	/* the other node's vertex: skipped by this node */
	e = olc_nl_nest_start(m, ORDLOCK_A_ENTRY);
	nla_put_u64(m, ORDLOCK_E_OWNER_ID, other);
	nla_put_u64(m, ORDLOCK_E_XD_GEN, other_gen);
	nla_put_u32(m, ORDLOCK_E_XD_NODE, cl_node == 1 ? 2 : 1);
	nla_nest_end(m, e);
	nla_nest_end(m, p);
	ret = nlt_request(s, m, tb);
	if (ret)
		return ret;
	return tb[ORDLOCK_A_XD_LIVE] ? (int)nla_get_u32(tb[ORDLOCK_A_XD_LIVE]) : -EPROTO;
}

/* What XD_WALK answered: its paths, the first one's first vertex */
struct walk_res {
	int n, len, cluster_wait;
	uint64_t owner, gen, hold_gen;
};

static int walk_fn(struct nlattr **tb, void *arg)
{
	struct nlattr *eb[ORDLOCK_E_MAX + 1], *pos;
	struct walk_res *r = arg;
	int rem, len = 0;

	if (!tb[ORDLOCK_A_XD_PATH])
		return 0;
	if (r->n++)
		return 0;
	nla_for_each_nested(pos, tb[ORDLOCK_A_XD_PATH], rem) {
		if (len++ || nla_parse_nested(eb, ORDLOCK_E_MAX, pos, NULL))
			continue;
		r->owner = eb[ORDLOCK_E_OWNER_ID] ? nla_get_u64(eb[ORDLOCK_E_OWNER_ID]) : 0;
		r->gen = eb[ORDLOCK_E_XD_GEN] ? nla_get_u64(eb[ORDLOCK_E_XD_GEN]) : 0;
		r->hold_gen = eb[ORDLOCK_E_XD_HOLD_GEN] ?
			      nla_get_u64(eb[ORDLOCK_E_XD_HOLD_GEN]) : 0;
		r->cluster_wait = eb[ORDLOCK_E_CLUSTER_WAIT] != NULL;
	}
	r->len = len;
	return 0;
}

/* XD_WALK from the holders of @key (not NULL) or from @owner's wait @gen */
static int walk(struct nlt *s, const struct ordlock_key *key, uint64_t owner,
		uint64_t gen, struct walk_res *r)
{
	struct nl_msg *m = nlt_msg_new(s, ORDLOCK_CMD_XD_WALK, NLM_F_DUMP);

	memset(r, 0, sizeof(*r));
	nla_put_string(m, ORDLOCK_A_DOMAIN, dom);
	if (key) {
		olc_nl_put_key(m, ORDLOCK_A_KEY, key);
	} else {
		nla_put_u64(m, ORDLOCK_A_XD_OWNER, owner);
		nla_put_u64(m, ORDLOCK_A_XD_GEN, gen);
	}
	return olc_nl_transact(s->nl, m, walk_fn, r);
}

/* One step of the cycle */
static void put_step(struct nl_msg *m, uint64_t owner, uint32_t pid,
		     const char *comm, uint32_t node, struct ordlock_key key)
{
	struct nlattr *e = olc_nl_nest_start(m, ORDLOCK_A_ENTRY);

	nla_put_u64(m, ORDLOCK_E_OWNER_ID, owner);
	nla_put_u32(m, ORDLOCK_E_PID, pid);
	nla_put_string(m, ORDLOCK_E_COMM, comm);
	olc_nl_put_key(m, ORDLOCK_E_KEY, &key);
	nla_put_u32(m, ORDLOCK_E_EDGE, ORDLOCK_EDGE_HARD);
	nla_put_u32(m, ORDLOCK_E_MODE, ORDLOCK_MODE_EXCLUSIVE);
	nla_put_u32(m, ORDLOCK_E_XD_NODE, node);
	nla_nest_end(m, e);
}

/* XD_FAIL of A's wait @gen, the cycle A (this node) -> B (node 2) */
static int fail(struct nlt *s, const struct xd_ev *a, uint64_t gen,
		const struct xd_ev *b)
{
	struct nl_msg *m = nlt_msg_new(s, ORDLOCK_CMD_XD_FAIL, 0);
	struct nlattr *c;

	nla_put_string(m, ORDLOCK_A_DOMAIN, dom);
	nla_put_u64(m, ORDLOCK_A_XD_OWNER, a->owner);
	nla_put_u64(m, ORDLOCK_A_XD_GEN, gen);
	c = olc_nl_nest_start(m, ORDLOCK_A_CYCLE);
	put_step(m, a->owner, a->pid, a->comm, 1, (struct ordlock_key)ORDLOCK_EX(5, 2));
	put_step(m, b->owner, b->pid, b->comm, 2, (struct ordlock_key)ORDLOCK_EX(5, 1));
	nla_nest_end(m, c);
	return nlt_request(s, m, NULL);
}

/*
 * The child of node @cl_node: holds 5:@mine, says "r", and once told
 * (a byte on @go: both nodes' children hold their key) waits for
 * 5:@theirs (60 s), reports into @w, holds until @go closes
 */
static int child(struct waiter *w, uint64_t mine, uint64_t theirs, int ready, int go)
{
	struct ordlock_key k1 = ORDLOCK_EX(5, mine), k2 = ORDLOCK_EX(5, theirs);
	struct ordlock *ol = ordlock_open(dom);
	char c;

	if (!ol || ordlock_acquire(ol, &k1, 1, 20000, 0, NULL))
		return 2;
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 2;
	w->ret = ordlock_acquire(ol, &k2, 1, 60000, 0, NULL);
	w->reason = ordlock_last_failure(ol)->reason;
	if (w->ret == -EDEADLK) {
		w->nsteps = ordlock_last_cycle_nodes(ol, w->steps, w->nodes, 4);
		if (w->nsteps > 0)
			ordlock_strcycle_nodes(w->steps, w->nodes, (unsigned int)w->nsteps,
					       w->text, sizeof(w->text));
		/* a victim lets go, as a program that retries would */
		ordlock_release_all(ol);
	}
	if (write(ready, "d", 1) != 1)
		return 2;
	while (read(go, &c, 1) > 0)
		;
	ordlock_close(ol);
	return 0;
}

/* Write (@write_it) or read the vertex of this node's waiter for the other node */
static int share(const char *name, struct xd_ev *ev, int write_it)
{
	FILE *f;
	int ok_ = 0;
	long long end = cl_ms() + 30000;

	if (write_it) {
		f = fopen(cl_path(name), "w");
		if (!f)
			return -1;
		fprintf(f, "%" PRIu64 " %" PRIu64 " %u %s\n", ev->owner, ev->gen, ev->pid,
			ev->comm);
		return fclose(f);
	}
	while (!ok_ && cl_ms() < end) {
		f = fopen(cl_path(name), "r");
		if (f) {
			ok_ = fscanf(f, "%" SCNu64 " %" SCNu64 " %u %15s", &ev->owner,
				     &ev->gen, &ev->pid, ev->comm) == 4;
			fclose(f);
		}
		if (!ok_)
			usleep(100000);
	}
	return ok_ ? 0 : -1;
}

/*
 * A netlink request of node 1 waits in the DLM for 6:3, which node 2 holds
 * until the wait was announced: WAIT (in the DLM) after the delay, then
 * WAIT_END granted
 */
static void nl_long(struct nlt *ev)
{
	struct ordlock_key k = ORDLOCK_EX(6, 3);
	struct olc_nl_outcome o;
	struct xd_ev wait = { 0 }, end;
	struct ordlock *ol = NULL;
	struct nlt *r = NULL;
	long long age;
	int ret;

	if (cl_node == 2 && (!(ol = ordlock_open(dom)) ||
			     ordlock_acquire(ol, &k, 1, 20000, 0, NULL)))
		bail_out("node2: hold 6:3: %s", strerror(errno));
	cl_barrier("nl-held");
	if (cl_node == 1) {
		r = nlt_must_open();
		ret = nlt_acquire(r, dom, &k, 1, 20000000000ULL, 0, 1, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_QUEUED,
		   "node1: a netlink request for 6:3 (node 2 holds it) waits (%s)",
		   ret ? nlt_extack_str(r) : nlt_status_name(o.status));
		ret = wait_ev_key(nlt_fd(ev), ORDLOCK_XD_WAIT, 6, 3, 20000, &wait);
		age = (long long)realtime_ns() - (long long)wait.since_ns;
		ok(!ret && wait.cluster_wait && wait.since_ns && age >= DELAY_MS * 1000000LL,
		   "node1: ... XD_EVENT WAIT in the DLM, once it had lasted its probe delay: %lld ms after its start",
		   age / 1000000);
	}
	cl_barrier("nl-announced");
	if (cl_node == 2)
		ordlock_close(ol);
	if (cl_node == 1) {
		ret = nlt_wait_result(r, 20000, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
		   "node1: ... granted once node 2 let go");
		ret = wait_ev_key(nlt_fd(ev), ORDLOCK_XD_WAIT_END, 6, 3, 5000, &end);
		ok(!ret && end.gen == wait.gen && end.end == ORDLOCK_XD_END_GRANTED,
		   "node1: ... then its WAIT_END: granted, the same generation");
		nlt_close(r);
	}
}

int main(void)
{
	struct ordlock_domain_config dc = {
		.flags = ORDLOCK_DOMAIN_SET_POLICY | ORDLOCK_DOMAIN_SET_DETECT_DELAY,
		.policy = ORDLOCK_POLICY_DETECT,
		.detect_delay_ms = DELAY_MS,
	};
	uint64_t st[ORDLOCK_S_MAX + 1];
	struct xd_ev mine, other, end;
	struct olc_nl_domain d;
	struct ordlock *cfg;
	struct waiter *w;
	struct nlt *s, *ev;
	int ready[2], go[2], status, ret, live;
	char c, out[4096], args[128];
	pid_t pid = -1;

	cfg = cl_setup(dom, 3);
	ok(ordlock_domain_config(cfg, dom, &dc) == 0,
	   "node%d: a cluster domain takes policy detect", cl_node);
	w = shm_alloc(sizeof(*w));
	s = nlt_must_open();
	ev = nlt_must_open();
	if (cl_node <= 2) {
		is_int(hello(s, 3), 0, "node%d: XD_HELLO registers this program", cl_node);
		is_int(join(ev), 0, "node%d: joined the xdetect group", cl_node);
		ret = nlt_domain_get(s, dom, &d);
		ok(!ret && d.have_xd && d.xd_state == ORDLOCK_XD_ON &&
		   d.xd_pid == (uint32_t)getpid() && d.xd_members == 3,
		   "node%d: DOMAIN_GET: detection on, pid %u, %u members", cl_node,
		   d.xd_pid, d.xd_members);
		snprintf(args, sizeof(args), "domain %s", dom);
		ret = olt_ctl(out, sizeof(out), "%s", args);
		ok(!ret && strstr(out, "detect: across nodes (ordlock-xdetectd pid"),
		   "node%d: ordlockctl %s: %s", cl_node, args, out);
	}
	cl_barrier("on");
	if (cl_node == 1)
		short_and_long(s, ev, w);
	cl_barrier("short");
	nl_long(ev);

	if (cl_node <= 2) {
		if (pipe(ready) || pipe(go))
			bail_out("pipe: %s", strerror(errno));
		pid = fork();
		if (!pid) {
			close(ready[0]);
			close(go[1]);
			_exit(child(w, (uint64_t)cl_node, (uint64_t)(3 - cl_node),
				    ready[1], go[0]));
		}
		close(ready[1]);
		close(go[0]);
		ok(read(ready[0], &c, 1) == 1 && c == 'r', "node%d: the child holds 5:%d",
		   cl_node, cl_node);
	}
	cl_barrier("held");

	if (cl_node <= 2) {
		/* both hold their key: the child's wait for the other's, in the DLM */
		ok(write(go[1], "w", 1) == 1, "node%d: the child may wait for 5:%d", cl_node,
		   3 - cl_node);
		ret = wait_ev(nlt_fd(ev), ORDLOCK_XD_WAIT, (uint64_t)(3 - cl_node), 20000, &mine);
		ok(!ret && mine.cluster_wait && mine.gen && mine.mode == ORDLOCK_MODE_EXCLUSIVE,
		   "node%d: XD_EVENT WAIT for 5:%d in the DLM: owner %" PRIu64 " gen %" PRIu64
		   " pid %u (%s)", cl_node, 3 - cl_node, mine.owner, mine.gen, mine.pid,
		   mine.comm);
		if (ret)
			cl_views("no WAIT event");
		share(cl_node == 1 ? "v1" : "v2", &mine, 1);
		ret = share(cl_node == 1 ? "v2" : "v1", &other, 0);
		ok(!ret, "node%d: the other node's vertex: owner %" PRIu64 " gen %" PRIu64,
		   cl_node, other.owner, other.gen);
		live = check(s, mine.owner, mine.gen, other.owner, other.gen);
		is_int(live, 1, "node%d: XD_CHECK: this node's vertex is live", cl_node);
		live = check(s, mine.owner, mine.gen + 1000000, other.owner, other.gen);
		is_int(live, 0, "node%d: XD_CHECK with another generation: not live", cl_node);
		{
			struct ordlock_key held = ORDLOCK_EX(5, (uint64_t)cl_node);
			struct walk_res r;

			ret = walk(s, &held, 0, 0, &r);
			ok(!ret && r.n == 1 && r.len == 1 && r.owner == mine.owner &&
			   r.gen == mine.gen && r.cluster_wait && r.hold_gen,
			   "node%d: XD_WALK from the holders of 5:%d: the path [owner %" PRIu64
			   " gen %" PRIu64 " in the DLM, hold gen %" PRIu64 "] (%d paths, %s)",
			   cl_node, cl_node, r.owner, r.gen, r.hold_gen, r.n,
			   ret ? nlt_extack_str(s) : "ok");
			ret = walk(s, NULL, mine.owner, mine.gen, &r);
			ok(!ret && r.n == 1 && r.len == 1 && r.owner == mine.owner && !r.hold_gen,
			   "node%d: XD_WALK from its wait: the same vertex", cl_node);
			ret = walk(s, NULL, mine.owner, mine.gen + 1000000, &r);
			is_int(ret, -ESTALE, "node%d: XD_WALK from a stale generation: ESTALE",
			       cl_node);
		}
	}
	cl_barrier("checked");

	if (cl_node == 1) {
		ret = fail(s, &mine, mine.gen + 1000000, &other);
		is_int(ret, -ESTALE, "node1: XD_FAIL with a stale generation: ESTALE (%s)",
		       nlt_extack_str(s));
		is_int(check(s, mine.owner, mine.gen, other.owner, other.gen), 1,
		       "node1: ... nothing changed: A still waits with its generation");
		ret = fail(s, &mine, mine.gen, &other);
		is_int(ret, 0, "node1: XD_FAIL of A's wait (%s)", ret ? nlt_extack_str(s) : "ok");
		ok(read(ready[0], &c, 1) == 1 && c == 'd', "node1: A's acquire returned");
		is_int(w->ret, -EDEADLK, "node1: ... with EDEADLK");
		is_int(w->reason, ORDLOCK_REASON_DEADLOCK, "node1: ... reason deadlock");
		ok(w->nsteps == 2 && w->steps[0].owner_id == mine.owner &&
		   !(w->steps[0].flags & ORDLOCK_STEP_OTHER_NODE) && w->nodes[0] == 0 &&
		   (w->steps[1].flags & ORDLOCK_STEP_OTHER_NODE) && w->nodes[1] == 2 &&
		   w->steps[1].owner_id == other.owner && w->steps[1].pid == other.pid,
		   "node1: ... its cycle: A here, then node 2's owner %" PRIu64 " pid %u",
		   other.owner, other.pid);
		ok(strstr(w->text, "held by node 2 pid") != NULL, "node1: ... %s", w->text);
		ret = wait_ev(nlt_fd(ev), ORDLOCK_XD_WAIT_END, 2, 10000, &end);
		ok(!ret && end.gen == mine.gen && end.end == ORDLOCK_XD_END_DEADLOCK,
		   "node1: XD_EVENT WAIT_END of A's wait: deadlock");
		ret = fail(s, &mine, mine.gen, &other);
		is_int(ret, -ESTALE, "node1: the same XD_FAIL again: ESTALE");
		ret = nlt_get_stats(s, dom, st);
		ok(!ret && st[ORDLOCK_S_XD_VICTIMS] == 1 && st[ORDLOCK_S_XD_STALE] >= 3 &&
		   st[ORDLOCK_S_XD_ROUNDS] >= 3,
		   "node1: GET_STATS: xd_victims %" PRIu64 ", xd_stale %" PRIu64
		   ", xd_rounds %" PRIu64, st[ORDLOCK_S_XD_VICTIMS], st[ORDLOCK_S_XD_STALE],
		   st[ORDLOCK_S_XD_ROUNDS]);
	}
	if (cl_node == 2) {
		ok(read(ready[0], &c, 1) == 1 && c == 'd', "node2: B's acquire returned");
		is_int(w->ret, 0, "node2: ... B is granted 5:1");
		ret = wait_ev(nlt_fd(ev), ORDLOCK_XD_WAIT_END, 1, 10000, &end);
		ok(!ret && end.gen == mine.gen && end.end == ORDLOCK_XD_END_GRANTED,
		   "node2: XD_EVENT WAIT_END of B's wait: granted");
	}
	if (cl_node <= 2) {
		close(go[1]);
		ok(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		   !WEXITSTATUS(status), "node%d: the child ended", cl_node);
	}
	cl_barrier("done");
	nlt_close(ev);
	nlt_close(s);
	return cl_end(NULL, cfg, dom);
}
