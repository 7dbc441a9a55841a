// SPDX-License-Identifier: GPL-2.0
/*
 * ordlock-xdetectd: finds deadlocks across the nodes of a cluster domain
 * (docs/cluster.md, "Deadlocks across nodes"; ordlock-xdetectd(8)).
 *
 * One process per node, single-threaded: a poll loop over
 * - the generic netlink socket of the family "ordlock" that registered
 *   this daemon (XD_HELLO; its close unregisters it) and asks the kernel
 *   (XD_WALK, XD_CHECK, XD_FAIL, DOMAIN_GET),
 * - a second one in the "xdetect" group (XD_EVENT: waits that start and
 *   end in cluster domains with policy detect),
 * - the CPG fd of the group "ordlock-xdetect" (cpg_dispatch(): messages
 *   in the agreed order, membership changes),
 * and the protocol's clock (proto.c: the probe delays). CPG is joined
 * after the registration; when corosync goes away the daemon says so to
 * the kernel (state off: cycles across nodes end by their timeouts) and
 * connects again every second.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <corosync/cpg.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "dlmdebug.h"
#include "file.h"
#include "nl.h"
#include "proto.h"
#include "walk.h"

#define XD_GROUP		"ordlock-xdetect"
#define XD_DLM_COMMS		"/sys/kernel/config/dlm/cluster/comms"
/* The DLM's view of a lockspace: the queues of the keys mastered here */
#define XD_DLM_DEBUGFS		"/sys/kernel/debug/dlm"
#define XD_RETRY_MS		1000
#define XD_EV_RCVBUF		(4 << 20)
#define XD_DELAY_CACHE		32
#define XD_DELAY_TTL_MS		10000
/* The daemon's state as JSON, to whoever connects (ordlock-xdetectd(8)) */
#define XD_SOCKET		"/run/ordlock-xdetectd.sock"

static int verbose;
static volatile sig_atomic_t stopping;

struct delay_ent {
	char domain[XD_NAME_LEN];
	uint32_t ms;
	uint64_t at;
};

struct daemon {
	struct olc_nl *nl;		/* commands; the registered socket */
	struct olc_nl *ev;		/* the "xdetect" group */
	cpg_handle_t cpg;
	bool cpg_up;
	int cpg_fd;
	uint64_t cpg_retry_at;
	uint32_t node;
	uint64_t boot;
	uint32_t state_sent, members_sent;
	bool hello_done;
	struct xd_state xs;
	struct delay_ent delays[XD_DELAY_CACHE];
	uint32_t default_delay_ms;
	unsigned long ev_lost;
	const char *sock_path;
	int sock_fd;
	uint64_t view_seq;
	/* the kernel does not serve XD_WALK: walk.c builds the paths */
	bool user_walk;
};

/* A client's "locks": the answers of every member gathered over CPG */
#define XD_VIEWS_MAX		8
#define XD_VIEW_MS		3000

struct view_req {
	int fd;			/* the client; -1: free */
	uint64_t id;
	uint64_t deadline;
	uint32_t answered[XD_MEMBERS_MAX];
	unsigned int nanswered;
	unsigned int nlocks;
	char *buf;		/* the locks as JSON, so far */
	size_t len;
	FILE *f;
};

static struct view_req views[XD_VIEWS_MAX];

static void view_answer(struct daemon *dm, const struct xd_msg *req);
static void view_part(struct daemon *dm, const struct xd_msg *m);

static struct daemon d;

static void xlog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 0 errors, 1 notices (always), 2 the protocol's steps (-v) */
static void xlog(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > 1 + verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "ordlock-xdetectd: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* --- the kernel ------------------------------------------------------------ */

static struct nla_policy entry_policy[ORDLOCK_E_MAX + 1] = {
	[ORDLOCK_E_OWNER_ID] = { .type = NLA_U64 },
	[ORDLOCK_E_PID] = { .type = NLA_U32 },
	[ORDLOCK_E_COMM] = { .type = NLA_STRING },
	[ORDLOCK_E_DOMAIN] = { .type = NLA_STRING },
	[ORDLOCK_E_KEY] = { .type = NLA_NESTED },
	[ORDLOCK_E_MODE] = { .type = NLA_U32 },
	[ORDLOCK_E_EDGE] = { .type = NLA_U32 },
	[ORDLOCK_E_TIME_NS] = { .type = NLA_U64 },
	[ORDLOCK_E_CLUSTER_WAIT] = { .type = NLA_FLAG },
	[ORDLOCK_E_XD_GEN] = { .type = NLA_U64 },
	[ORDLOCK_E_XD_HOLD_GEN] = { .type = NLA_U64 },
	[ORDLOCK_E_XD_NODE] = { .type = NLA_U32 },
	[ORDLOCK_E_XD_BOOT] = { .type = NLA_U64 },
	[ORDLOCK_E_XD_LKID] = { .type = NLA_U32 },
};

/* A vertex entry of the kernel; @edge: how the next vertex blocks it */
static int parse_vertex(struct nlattr *nest, struct xd_vertex *v, uint32_t *edge)
{
	struct nlattr *tb[ORDLOCK_E_MAX + 1];
	struct ordlock_key k;

	memset(v, 0, sizeof(*v));
	*edge = 0;
	if (nla_parse_nested(tb, ORDLOCK_E_MAX, nest, entry_policy) ||
	    !tb[ORDLOCK_E_OWNER_ID] || !tb[ORDLOCK_E_XD_GEN] || !tb[ORDLOCK_E_KEY] ||
	    olc_nl_parse_key(tb[ORDLOCK_E_KEY], &k))
		return -EPROTO;
	v->owner = nla_get_u64(tb[ORDLOCK_E_OWNER_ID]);
	v->gen = nla_get_u64(tb[ORDLOCK_E_XD_GEN]);
	v->key_id = k.id;
	v->key_rank = k.rank;
	v->mode = k.mode;
	if (tb[ORDLOCK_E_XD_HOLD_GEN])
		v->hold_gen = nla_get_u64(tb[ORDLOCK_E_XD_HOLD_GEN]);
	if (tb[ORDLOCK_E_TIME_NS])
		v->start_ns = nla_get_u64(tb[ORDLOCK_E_TIME_NS]);
	if (tb[ORDLOCK_E_PID])
		v->pid = nla_get_u32(tb[ORDLOCK_E_PID]);
	if (tb[ORDLOCK_E_COMM])
		nla_strlcpy(v->comm, tb[ORDLOCK_E_COMM], sizeof(v->comm));
	if (tb[ORDLOCK_E_CLUSTER_WAIT])
		v->flags |= XD_V_CLUSTER_WAIT;
	if (tb[ORDLOCK_E_XD_LKID])
		v->lkid = nla_get_u32(tb[ORDLOCK_E_XD_LKID]);
	if (tb[ORDLOCK_E_XD_NODE])
		v->node = nla_get_u32(tb[ORDLOCK_E_XD_NODE]);
	if (tb[ORDLOCK_E_XD_BOOT])
		v->boot = nla_get_u64(tb[ORDLOCK_E_XD_BOOT]);
	if (tb[ORDLOCK_E_EDGE])
		*edge = nla_get_u32(tb[ORDLOCK_E_EDGE]);
	return 0;
}

/* One XD_WALK reply: a path */
static int walk_reply(struct nlattr **tb, void *arg)
{
	struct xd_paths *out = arg;
	struct xd_path *p;
	struct nlattr *a;
	uint32_t prev_edge = 0;
	int rem;

	if (!tb[ORDLOCK_A_XD_PATH])
		return 0;
	if (out->n >= XD_PATHS_MAX)
		return 0;
	p = &out->p[out->n];
	p->len = 0;
	nla_for_each_nested(a, tb[ORDLOCK_A_XD_PATH], rem) {
		uint32_t edge;

		if (p->len >= XD_PATH_MAX)
			return -EPROTO;
		if (parse_vertex(a, &p->v[p->len], &edge))
			return -EPROTO;
		/* the incoming edge of a vertex is the previous one's */
		if (p->len && prev_edge == ORDLOCK_EDGE_SOFT)
			p->v[p->len].flags |= XD_V_SOFT;
		prev_edge = edge;
		p->len++;
	}
	if (p->len)
		out->n++;
	return 0;
}

/* An XD_WALK; a kernel without it (EOPNOTSUPP) makes every walk walk.c's */
static int k_walk_send(struct daemon *dm, struct nl_msg *msg, struct xd_paths *out)
{
	int ret;

	out->n = 0;
	ret = olc_nl_transact(dm->nl, msg, walk_reply, out);
	if (ret == -EOPNOTSUPP && !dm->user_walk) {
		xlog(1, "the kernel does not serve XD_WALK: the walks are built here (GET_GRAPH, GET_LOCKS)");
		dm->user_walk = true;
	}
	return ret;
}

static int k_walk_owner(void *ctx, const char *domain, uint64_t owner,
			uint64_t gen, struct xd_paths *out)
{
	struct daemon *dm = ctx;
	struct nl_msg *msg;
	int ret;

	if (dm->user_walk)
		return xw_walk_owner(dm->nl, &dm->xs, domain, owner, gen, out);
	msg = olc_nl_msg(dm->nl, ORDLOCK_CMD_XD_WALK, NLM_F_DUMP, 0);
	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain) ||
	    nla_put_u64(msg, ORDLOCK_A_XD_OWNER, owner) ||
	    nla_put_u64(msg, ORDLOCK_A_XD_GEN, gen)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	ret = k_walk_send(dm, msg, out);
	if (dm->user_walk)
		return xw_walk_owner(dm->nl, &dm->xs, domain, owner, gen, out);
	return ret;
}

static int k_walk_key(void *ctx, const char *domain, const struct xd_vertex *w,
		      struct xd_paths *out)
{
	struct daemon *dm = ctx;
	struct nl_msg *msg = olc_nl_msg(dm->nl, ORDLOCK_CMD_XD_WALK, NLM_F_DUMP, 0);
	struct ordlock_key k = {
		.id = w->key_id, .rank = w->key_rank, .mode = (uint16_t)w->mode,
	};
	unsigned int i;
	int ret;

	if (dm->user_walk) {
		if (msg)
			nlmsg_free(msg);
		return xw_walk_key(dm->nl, &dm->xs, domain, w, out);
	}
	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain) ||
	    olc_nl_put_key(msg, ORDLOCK_A_KEY, &k)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	ret = k_walk_send(dm, msg, out);
	if (dm->user_walk)
		return xw_walk_key(dm->nl, &dm->xs, domain, w, out);
	/* a holder found here blocks the remote waiter in the DLM: hard */
	for (i = 0; i < out->n; i++)
		out->p[i].v[0].flags &= ~XD_V_SOFT;
	/* a domain this node does not have: no holder here */
	return ret == -ENOENT ? 0 : ret;
}

/*
 * The requests queued in the DLM for a key this node masters (the soft
 * edges across nodes): the DLM's debugfs file of the domain's lockspace
 * (tools/common/dlmdebug.c reads it), this node's own named by its id
 */
static int k_dlm_queue(void *ctx, const char *domain, uint32_t rank, uint64_t id,
		       struct xd_qent *out, unsigned int max)
{
	static struct olc_dlm_qent q[XD_QUEUE_MAX];
	struct daemon *dm = ctx;
	char path[128], *buf = NULL;
	unsigned int i, n = 0;
	size_t len = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/" ORDLOCK_DLM_LS_PREFIX "%s_all",
		 XD_DLM_DEBUGFS, domain);
	if (olc_read_file(path, &buf, &len))
		return -ENOENT;
	ret = olc_dlm_queue(buf, len, rank, id, q, XD_QUEUE_MAX);
	free(buf);
	if (ret < 0)
		return ret;
	for (i = 0; i < (unsigned int)ret && n < max; i++) {
		/* ordlock_dlm asks PR or EX; the NL anchors are granted */
		if (q[i].rqmode != OLC_DLM_PR && q[i].rqmode != OLC_DLM_EX)
			continue;
		out[n].node = q[i].node ? (uint32_t)q[i].node : dm->node;
		out[n].lkid = q[i].lkid;
		out[n].mode = q[i].rqmode == OLC_DLM_EX ? ORDLOCK_MODE_EXCLUSIVE :
			      ORDLOCK_MODE_SHARED;
		out[n].ts = q[i].ts_ns;
		n++;
	}
	return (int)n;
}

static int live_reply(struct nlattr **tb, void *arg)
{
	int *live = arg;

	if (tb[ORDLOCK_A_XD_LIVE])
		*live = nla_get_u32(tb[ORDLOCK_A_XD_LIVE]) == 1;
	return 0;
}

static int k_check(void *ctx, const char *domain, const struct xd_check *c,
		   unsigned int n)
{
	struct daemon *dm = ctx;
	struct nl_msg *msg = olc_nl_msg(dm->nl, ORDLOCK_CMD_XD_CHECK, 0, 0);
	struct nlattr *path;
	unsigned int i;
	int live = 0, ret;

	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain))
		goto too_big;
	path = olc_nl_nest_start(msg, ORDLOCK_A_XD_PATH);
	if (!path)
		goto too_big;
	for (i = 0; i < n; i++) {
		struct nlattr *e = olc_nl_nest_start(msg, ORDLOCK_A_ENTRY);
		struct ordlock_key k = { .id = c[i].key_id, .rank = c[i].key_rank };

		if (!e || nla_put_u64(msg, ORDLOCK_E_OWNER_ID, c[i].owner) ||
		    nla_put_u64(msg, ORDLOCK_E_XD_GEN, c[i].gen))
			goto too_big;
		/* a hard edge whose hold generation is known (the kernel's walk) */
		if (!c[i].soft && c[i].hold_gen &&
		    (olc_nl_put_key(msg, ORDLOCK_E_KEY, &k) ||
		     nla_put_u64(msg, ORDLOCK_E_XD_HOLD_GEN, c[i].hold_gen)))
			goto too_big;
		nla_nest_end(msg, e);
	}
	nla_nest_end(msg, path);
	ret = olc_nl_transact(dm->nl, msg, live_reply, &live);
	return ret < 0 ? ret : live;
too_big:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int k_fail(void *ctx, const char *domain, const struct xd_vertex *cycle,
		  unsigned int n)
{
	struct daemon *dm = ctx;
	struct nl_msg *msg = olc_nl_msg(dm->nl, ORDLOCK_CMD_XD_FAIL, 0, 0);
	struct nlattr *cy;
	unsigned int i;

	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain) ||
	    nla_put_u64(msg, ORDLOCK_A_XD_OWNER, cycle[0].owner) ||
	    nla_put_u64(msg, ORDLOCK_A_XD_GEN, cycle[0].gen))
		goto too_big;
	cy = olc_nl_nest_start(msg, ORDLOCK_A_CYCLE);
	if (!cy)
		goto too_big;
	for (i = 0; i < n; i++) {
		const struct xd_vertex *v = &cycle[i];
		/* how the next one blocks it: queued ahead (soft), or holds */
		const struct xd_vertex *next = &cycle[(i + 1) % n];
		struct nlattr *e = olc_nl_nest_start(msg, ORDLOCK_A_ENTRY);
		struct ordlock_key k = {
			.id = v->key_id, .rank = v->key_rank, .mode = (uint16_t)v->mode,
		};

		if (!e || nla_put_u64(msg, ORDLOCK_E_OWNER_ID, v->owner) ||
		    nla_put_u32(msg, ORDLOCK_E_PID, v->pid) ||
		    nla_put_string(msg, ORDLOCK_E_COMM, v->comm) ||
		    nla_put_string(msg, ORDLOCK_E_DOMAIN, domain) ||
		    olc_nl_put_key(msg, ORDLOCK_E_KEY, &k) ||
		    nla_put_u64(msg, ORDLOCK_E_XD_GEN, v->gen) ||
		    nla_put_u64(msg, ORDLOCK_E_TIME_NS, v->start_ns) ||
		    nla_put_u32(msg, ORDLOCK_E_XD_NODE, v->node) ||
		    nla_put_u64(msg, ORDLOCK_E_XD_BOOT, v->boot) ||
		    ((next->flags & XD_V_SOFT) &&
		     (nla_put_u32(msg, ORDLOCK_E_EDGE, ORDLOCK_EDGE_SOFT) ||
		      nla_put_u32(msg, ORDLOCK_E_MODE, next->mode))))
			goto too_big;
		nla_nest_end(msg, e);
	}
	nla_nest_end(msg, cy);
	return olc_nl_transact(dm->nl, msg, NULL, NULL);
too_big:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* The domain's probe delay (DOMAIN_GET's detect_delay_ms), cached */
static int delay_reply(struct nlattr **tb, void *arg)
{
	uint32_t *ms = arg;

	if (tb[ORDLOCK_A_DETECT_DELAY_MS])
		*ms = nla_get_u32(tb[ORDLOCK_A_DETECT_DELAY_MS]);
	return 0;
}

static uint32_t domain_delay(struct daemon *dm, const char *domain)
{
	struct delay_ent *e, *old = &dm->delays[0];
	uint64_t now = olc_nl_now_ms();
	struct nl_msg *msg;
	uint32_t ms = dm->default_delay_ms;
	unsigned int i;

	for (i = 0; i < XD_DELAY_CACHE; i++) {
		e = &dm->delays[i];
		if (e->at && !strcmp(e->domain, domain) && now - e->at < XD_DELAY_TTL_MS)
			return e->ms;
		if (e->at < old->at)
			old = e;
	}
	msg = olc_nl_msg(dm->nl, ORDLOCK_CMD_DOMAIN_GET, 0, 0);
	if (msg && !nla_put_string(msg, ORDLOCK_A_DOMAIN, domain))
		olc_nl_transact(dm->nl, msg, delay_reply, &ms);
	else if (msg)
		nlmsg_free(msg);
	snprintf(old->domain, sizeof(old->domain), "%s", domain);
	old->ms = ms;
	old->at = now;
	return ms;
}

/* XD_HELLO: registers the command socket, or updates the state */
static int hello(struct daemon *dm, uint32_t state, uint32_t members)
{
	struct nl_msg *msg = olc_nl_msg(dm->nl, ORDLOCK_CMD_XD_HELLO, 0, 0);
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	int ret;

	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, ORDLOCK_A_XD_NODE, dm->node) ||
	    nla_put_u32(msg, ORDLOCK_A_XD_STATE, state) ||
	    nla_put_u32(msg, ORDLOCK_A_XD_MEMBERS, members)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	ret = olc_nl_request(dm->nl, msg, tb);
	if (ret < 0)
		return ret;
	if (tb[ORDLOCK_A_XD_BOOT])
		dm->boot = nla_get_u64(tb[ORDLOCK_A_XD_BOOT]);
	dm->state_sent = state;
	dm->members_sent = members;
	dm->hello_done = true;
	return 0;
}

/* An XD_EVENT */
static void on_event(struct daemon *dm, struct nlmsghdr *nlh)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	char domain[XD_NAME_LEN];
	struct xd_vertex v;
	uint32_t kind, edge;
	uint8_t cmd;

	if (olc_nl_parse_genl(nlh, tb, &cmd) || cmd != ORDLOCK_CMD_XD_EVENT ||
	    !tb[ORDLOCK_A_XD_KIND] || !tb[ORDLOCK_A_DOMAIN] || !tb[ORDLOCK_A_ENTRY] ||
	    parse_vertex(tb[ORDLOCK_A_ENTRY], &v, &edge))
		return;
	/* events of another load of the module than the one registered */
	if (tb[ORDLOCK_A_XD_BOOT] && nla_get_u64(tb[ORDLOCK_A_XD_BOOT]) != dm->boot)
		return;
	nla_strlcpy(domain, tb[ORDLOCK_A_DOMAIN], sizeof(domain));
	kind = nla_get_u32(tb[ORDLOCK_A_XD_KIND]);
	if (kind == ORDLOCK_XD_WAIT) {
		xlog(2, "wait: %s owner %llu gen %llu pid %u (%s) key %u:%llu%s", domain,
		     (unsigned long long)v.owner, (unsigned long long)v.gen, v.pid,
		     v.comm, v.key_rank, (unsigned long long)v.key_id,
		     v.flags & XD_V_CLUSTER_WAIT ? " in the DLM" : "");
		if (xd_wait_start(&dm->xs, domain, &v, domain_delay(dm, domain),
				  olc_nl_now_ms()))
			xlog(1, "too many waits followed: owner %llu not probed",
			     (unsigned long long)v.owner);
	} else if (kind == ORDLOCK_XD_WAIT_END) {
		xlog(2, "wait end: owner %llu gen %llu", (unsigned long long)v.owner,
		     (unsigned long long)v.gen);
		xd_wait_end(&dm->xs, v.owner, v.gen);
	}
}

static void read_events(struct daemon *dm)
{
	static unsigned char buf[65536];
	int fd = olc_nl_fd(dm->ev);

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		struct nlmsghdr *nlh;
		int len;

		if (n < 0) {
			if (errno == ENOBUFS) {
				dm->ev_lost++;
				xlog(0, "events lost (receive buffer overrun %lu): those waits are not probed",
				     dm->ev_lost);
				continue;
			}
			return;
		}
		len = (int)n;
		for (nlh = (struct nlmsghdr *)buf; nlmsg_ok(nlh, len);
		     nlh = nlmsg_next(nlh, &len))
			on_event(dm, nlh);
	}
}

static int open_kernel(struct daemon *dm)
{
	int grp, ret, rcvbuf = XD_EV_RCVBUF;

	ret = olc_nl_open(&dm->nl, -1, 0);
	if (ret < 0) {
		xlog(0, "the ordlock netlink family: %s (is ordlock.ko loaded?)",
		     strerror(-ret));
		return ret;
	}
	ret = olc_nl_open(&dm->ev, -1, 0);
	if (ret < 0)
		return ret;
	grp = genl_ctrl_resolve_grp(dm->ev->sk, ORDLOCK_GENL_NAME,
				    ORDLOCK_GENL_MCGRP_XDETECT);
	if (grp < 0) {
		xlog(0, "no \"%s\" group in the ordlock family: ordlock.ko too old",
		     ORDLOCK_GENL_MCGRP_XDETECT);
		return -EOPNOTSUPP;
	}
	setsockopt(olc_nl_fd(dm->ev), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (nl_socket_add_membership(dm->ev->sk, grp) < 0) {
		xlog(0, "joining the \"%s\" group: permission denied?",
		     ORDLOCK_GENL_MCGRP_XDETECT);
		return -EPERM;
	}
	return 0;
}

/* --- CPG -------------------------------------------------------------------- */

static int c_send(void *ctx, const void *buf, size_t len)
{
	struct daemon *dm = ctx;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	cs_error_t err;
	int tries;

	if (!dm->cpg_up)
		return -ENOTCONN;
	for (tries = 0; tries < 100; tries++) {
		err = cpg_mcast_joined(dm->cpg, CPG_TYPE_AGREED, &iov, 1);
		if (err != CS_ERR_TRY_AGAIN)
			break;
		usleep(10000);
	}
	return err == CS_OK ? 0 : -EAGAIN;
}

static void x_log(void *ctx, int level, const char *line)
{
	(void)ctx;
	xlog(level, "%s", line);
}

static const struct xd_ops ops = {
	.walk_owner = k_walk_owner,
	.walk_key = k_walk_key,
	.dlm_queue = k_dlm_queue,
	.check = k_check,
	.fail = k_fail,
	.send = c_send,
	.log = x_log,
};

/* Every node the DLM knows is in the group (configfs comms); else the
 * detection is not complete: state joining */
static bool dlm_covered(const struct daemon *dm, char *why, size_t len)
{
	DIR *dir = opendir(XD_DLM_COMMS);
	struct dirent *de;
	bool all = true;

	if (!dir)
		return true;
	while ((de = readdir(dir))) {
		char *end;
		unsigned long id = strtoul(de->d_name, &end, 10);
		unsigned int i;
		bool in = false;

		if (de->d_name[0] == '.' || *end || !id)
			continue;
		for (i = 0; i < dm->xs.nmembers; i++)
			in = in || dm->xs.members[i] == id;
		if (!in) {
			snprintf(why, len, "node %lu of the DLM has no ordlock-xdetectd", id);
			all = false;
		}
	}
	closedir(dir);
	return all;
}

static void update_state(struct daemon *dm)
{
	uint32_t state = ORDLOCK_XD_OFF;
	char why[96] = "";
	int ret;

	if (dm->cpg_up && dm->xs.in_group)
		state = dlm_covered(dm, why, sizeof(why)) ? ORDLOCK_XD_ON : ORDLOCK_XD_JOINING;
	else if (dm->cpg_up)
		state = ORDLOCK_XD_JOINING;
	if (state == dm->state_sent && dm->xs.nmembers == dm->members_sent)
		return;
	ret = hello(dm, state, dm->xs.nmembers);
	if (ret < 0)
		xlog(0, "XD_HELLO: %s", strerror(-ret));
	else
		xlog(1, "detection across nodes %s (%u members)%s%s",
		     state == ORDLOCK_XD_ON ? "on" : state == ORDLOCK_XD_JOINING ?
		     "joining" : "off", dm->xs.nmembers, *why ? ": " : "", why);
}

static void cpg_deliver(cpg_handle_t h, const struct cpg_name *group, uint32_t nodeid,
			uint32_t pid, void *msg, size_t len)
{
	static struct xd_msg m;

	(void)h;
	(void)group;
	(void)pid;
	if (!xd_decode(&m, msg, len) && m.sender == nodeid &&
	    (m.kind == XD_MSG_VIEW_REQ || m.kind == XD_MSG_VIEW)) {
		if (m.kind == XD_MSG_VIEW_REQ)
			view_answer(&d, &m);
		else
			view_part(&d, &m);
		return;
	}
	if (xd_deliver(&d.xs, nodeid, msg, len))
		xlog(2, "a message of node %u dropped (not of this version)", nodeid);
}

static void cpg_confchg(cpg_handle_t h, const struct cpg_name *group,
			const struct cpg_address *mem, size_t nmem,
			const struct cpg_address *left, size_t nleft,
			const struct cpg_address *joined, size_t njoined)
{
	uint32_t m[XD_MEMBERS_MAX], l[XD_MEMBERS_MAX];
	unsigned int i, n = 0, nl = 0;

	(void)h;
	(void)group;
	(void)joined;
	for (i = 0; i < nmem && n < XD_MEMBERS_MAX; i++) {
		unsigned int j;

		/* a node's members (a daemon that restarts) count once */
		for (j = 0; j < n && m[j] != mem[i].nodeid; j++)
			;
		if (j == n)
			m[n++] = mem[i].nodeid;
	}
	for (i = 0; i < nleft && nl < XD_MEMBERS_MAX; i++)
		l[nl++] = left[i].nodeid;
	xlog(1, "membership: %u nodes (%zu joined, %zu left)", n, njoined, nleft);
	xd_confchg(&d.xs, m, n, l, nl);
	update_state(&d);
}

static int open_cpg(struct daemon *dm)
{
	cpg_callbacks_t cb = { .cpg_deliver_fn = cpg_deliver, .cpg_confchg_fn = cpg_confchg };
	struct cpg_name name;
	unsigned int nodeid;
	cs_error_t err;

	err = cpg_initialize(&dm->cpg, &cb);
	if (err != CS_OK)
		return -ENOTCONN;
	if (cpg_local_get(dm->cpg, &nodeid) != CS_OK) {
		cpg_finalize(dm->cpg);
		return -ENOTCONN;
	}
	if (dm->node && dm->node != nodeid) {
		xlog(0, "corosync's node id is now %u, was %u", nodeid, dm->node);
		cpg_finalize(dm->cpg);
		return -EINVAL;
	}
	dm->node = nodeid;
	memset(&name, 0, sizeof(name));
	name.length = strlen(XD_GROUP);
	memcpy(name.value, XD_GROUP, name.length);
	do {
		err = cpg_join(dm->cpg, &name);
		if (err == CS_ERR_TRY_AGAIN)
			usleep(100000);
	} while (err == CS_ERR_TRY_AGAIN && !stopping);
	if (err != CS_OK || cpg_fd_get(dm->cpg, &dm->cpg_fd) != CS_OK) {
		cpg_finalize(dm->cpg);
		return -ENOTCONN;
	}
	dm->cpg_up = true;
	xlog(1, "joined the CPG group %s as node %u", XD_GROUP, nodeid);
	return 0;
}

static void close_cpg(struct daemon *dm)
{
	if (!dm->cpg_up)
		return;
	cpg_finalize(dm->cpg);
	dm->cpg_up = false;
	dm->cpg_fd = -1;
	/* out of the group: every pending round is aborted */
	xd_confchg(&dm->xs, NULL, 0, NULL, 0);
	update_state(dm);
}

/* --- the cluster's view: every node's locks over CPG ----------------------------- */

struct view_send {
	struct daemon *dm;
	struct xd_msg *m;
	int err;
};

static int view_flush(struct view_send *vs, bool last)
{
	static unsigned char buf[XD_MSG_MAX];
	size_t len;
	int ret;

	vs->m->live = last;
	len = xd_encode(vs->m, buf);
	ret = c_send(vs->dm, buf, len);
	if (ret < 0)
		vs->err = ret;
	vs->m->path.len = 0;
	return ret;
}

/* One GET_LOCKS entry of this node into the VIEW being filled */
static int view_entry(struct nlattr **tb, void *arg)
{
	struct view_send *vs = arg;
	struct olc_nl_entry e;
	struct xd_vertex *v;

	if (!tb[ORDLOCK_A_ENTRY] || olc_nl_parse_entry(tb[ORDLOCK_A_ENTRY], &e))
		return 0;
	/* one domain per message */
	if (vs->m->path.len &&
	    (strcmp(vs->m->domain, e.domain) || vs->m->path.len == XD_PATH_MAX))
		view_flush(vs, false);
	snprintf(vs->m->domain, sizeof(vs->m->domain), "%s", e.domain);
	v = &vs->m->path.v[vs->m->path.len++];
	memset(v, 0, sizeof(*v));
	v->node = vs->dm->node;
	v->boot = vs->dm->boot;
	v->owner = e.owner_id;
	v->pid = e.pid;
	memcpy(v->comm, e.comm, sizeof(v->comm));
	v->comm[sizeof(v->comm) - 1] = 0;
	v->key_rank = e.key.rank;
	v->key_id = e.key.id;
	v->mode = e.mode;
	v->flags = e.role == ORDLOCK_ROLE_HOLDER ? XD_V_HOLDER :
		   e.role == ORDLOCK_ROLE_CONVERTER ? XD_V_CONVERTER : 0;
	if (OLC_NL_HAS(&e, ORDLOCK_E_CLUSTER_WAIT))
		v->flags |= XD_V_CLUSTER_WAIT;
	/* a VIEW's own fields (proto.h): the place in the queue, the wait */
	v->gen = e.position;
	if (OLC_NL_HAS(&e, ORDLOCK_E_WAITED_US)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		v->hold_gen = e.waited_us;
		v->start_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec -
			      e.waited_us * 1000ULL;
	}
	return 0;
}

/* A VIEW_REQ delivered: this node's locks, in parts, the last one flagged */
static void view_answer(struct daemon *dm, const struct xd_msg *req)
{
	static struct xd_msg m;
	struct view_send vs = { .dm = dm, .m = &m };

	xd_msg_init(&m, XD_MSG_VIEW, dm->node, req->round_node, req->round_seq);
	olc_nl_dump(dm->nl, ORDLOCK_CMD_GET_LOCKS, view_entry, &vs);
	view_flush(&vs, true);
}

static void json_str(FILE *f, const char *s);
static void json_vertex(FILE *f, const struct xd_vertex *v);

static void view_finish(struct daemon *dm, struct view_req *r)
{
	unsigned int i, j;
	FILE *out;

	fclose(r->f);
	out = fdopen(r->fd, "w");
	if (out) {
		bool complete = true;

		fprintf(out, "{\"node\": %u, \"nodes\": [", dm->node);
		for (i = 0; i < r->nanswered; i++)
			fprintf(out, "%s%u", i ? ", " : "", r->answered[i]);
		fprintf(out, "], \"missing\": [");
		for (i = 0, j = 0; i < dm->xs.nmembers; i++) {
			unsigned int k;

			for (k = 0; k < r->nanswered && r->answered[k] != dm->xs.members[i]; k++)
				;
			if (k == r->nanswered) {
				fprintf(out, "%s%u", j++ ? ", " : "", dm->xs.members[i]);
				complete = false;
			}
		}
		fprintf(out, "], \"complete\": %s, \"locks\": [%s]}\n",
			complete ? "true" : "false", r->buf ? r->buf : "");
		fclose(out);
	} else {
		close(r->fd);
	}
	free(r->buf);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

static bool view_all_answered(const struct daemon *dm, const struct view_req *r)
{
	unsigned int i, k;

	for (i = 0; i < dm->xs.nmembers; i++) {
		for (k = 0; k < r->nanswered && r->answered[k] != dm->xs.members[i]; k++)
			;
		if (k == r->nanswered)
			return false;
	}
	return true;
}

/* A VIEW delivered: the part of a request of this daemon's */
static void view_part(struct daemon *dm, const struct xd_msg *m)
{
	struct view_req *r = NULL;
	unsigned int i;

	if (m->round_node != dm->node)
		return;
	for (i = 0; i < XD_VIEWS_MAX; i++)
		if (views[i].fd >= 0 && views[i].id == m->round_seq)
			r = &views[i];
	if (!r)
		return;
	for (i = 0; i < m->path.len; i++) {
		struct xd_vertex v = m->path.v[i];

		fputs(r->nlocks++ ? ",\n  " : "\n  ", r->f);
		fprintf(r->f, "{\"domain\": ");
		json_str(r->f, m->domain);
		/* gen and hold_gen of a VIEW's entry: its position and wait */
		fprintf(r->f, ", \"role\": \"%s\", \"position\": %llu, \"waited_us\": ",
			v.flags & XD_V_HOLDER ? "holder" :
			v.flags & XD_V_CONVERTER ? "converter" : "waiter",
			(unsigned long long)v.gen);
		if (v.start_ns)
			fprintf(r->f, "%llu", (unsigned long long)v.hold_gen);
		else
			fputs("null", r->f);
		fputs(", \"owner\": ", r->f);
		v.gen = 0;
		json_vertex(r->f, &v);
		fputc('}', r->f);
	}
	if (m->live && r->nanswered < XD_MEMBERS_MAX)
		r->answered[r->nanswered++] = m->sender;
	fflush(r->f);
	if (view_all_answered(dm, r))
		view_finish(dm, r);
}

/* A client asked for the locks of every node */
static void view_start(struct daemon *dm, int fd)
{
	unsigned char buf[XD_HDR_SIZE];
	struct view_req *r = NULL;
	struct xd_msg m;
	unsigned int i;

	for (i = 0; i < XD_VIEWS_MAX && !r; i++)
		if (views[i].fd < 0)
			r = &views[i];
	if (!r || !dm->cpg_up) {
		dprintf(fd, "{\"error\": \"%s\"}\n",
			r ? "not in the CPG group" : "too many requests");
		close(fd);
		return;
	}
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->id = ++dm->view_seq;
	r->deadline = olc_nl_now_ms() + XD_VIEW_MS;
	r->f = open_memstream(&r->buf, &r->len);
	if (!r->f) {
		close(fd);
		r->fd = -1;
		return;
	}
	xd_msg_init(&m, XD_MSG_VIEW_REQ, dm->node, dm->node, r->id);
	if (c_send(dm, buf, xd_encode(&m, buf)) < 0)
		view_finish(dm, r);
}

/* Requests past their deadline end with the answers so far */
static void view_expire(struct daemon *dm, uint64_t now)
{
	unsigned int i;

	for (i = 0; i < XD_VIEWS_MAX; i++)
		if (views[i].fd >= 0 && now >= views[i].deadline)
			view_finish(dm, &views[i]);
}

/* --- the state socket ------------------------------------------------------------ */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_vertex(FILE *f, const struct xd_vertex *v)
{
	fprintf(f, "{\"node\": %u, \"owner_id\": %llu, \"pid\": %u, \"comm\": ",
		v->node, (unsigned long long)v->owner, v->pid);
	json_str(f, v->comm);
	fprintf(f, ", \"key\": \"%u:%llu\", \"mode\": %u, \"gen\": %llu, \"start_ns\": %llu, \"in_dlm\": %s}",
		v->key_rank, (unsigned long long)v->key_id, v->mode,
		(unsigned long long)v->gen, (unsigned long long)v->start_ns,
		v->flags & XD_V_CLUSTER_WAIT ? "true" : "false");
}

/* The state: node, members, this node's waits, the rounds (history) */
static void write_state(struct daemon *dm, FILE *f)
{
	static const struct xd_round *h[XD_ROUNDS_KEPT + XD_ROUNDS_PENDING + 1];
	const struct xd_stats *st = &dm->xs.stats;
	unsigned int i, j, n;

	fprintf(f, "{\"node\": %u, \"boot\": \"%016llx\", \"pid\": %d, \"state\": \"%s\", \"members\": [",
		dm->node, (unsigned long long)dm->boot, (int)getpid(),
		dm->state_sent == ORDLOCK_XD_ON ? "on" :
		dm->state_sent == ORDLOCK_XD_JOINING ? "joining" : "off");
	for (i = 0; i < dm->xs.nmembers; i++)
		fprintf(f, "%s%u", i ? ", " : "", dm->xs.members[i]);
	fprintf(f, "],\n \"stats\": {\"probes_started\": %llu, \"probes_sent\": %llu, \"probes_dropped\": %llu, \"rounds\": %llu, \"decided\": %llu, \"aborted\": %llu, \"victims\": %llu, \"stale\": %llu, \"soft_steps\": %llu, \"soft_dropped\": %llu, \"events_lost\": %lu},\n \"waits\": [",
		(unsigned long long)st->probes_started, (unsigned long long)st->probes_sent,
		(unsigned long long)st->probes_dropped, (unsigned long long)st->rounds,
		(unsigned long long)st->decided, (unsigned long long)st->aborted,
		(unsigned long long)st->victims, (unsigned long long)st->stale,
		(unsigned long long)st->soft_steps, (unsigned long long)st->soft_dropped,
		dm->ev_lost);
	for (i = 0; i < dm->xs.nwaits; i++) {
		fprintf(f, "%s\n  {\"domain\": ", i ? "," : "");
		json_str(f, dm->xs.waits[i].domain);
		fprintf(f, ", \"probed\": %s, \"vertex\": ",
			dm->xs.waits[i].probed ? "true" : "false");
		json_vertex(f, &dm->xs.waits[i].v);
		fputc('}', f);
	}
	fprintf(f, "],\n \"rounds\": [");
	n = xd_history(&dm->xs, h, sizeof(h) / sizeof(h[0]));
	for (i = 0; i < n; i++) {
		const struct xd_round *r = h[i];

		fprintf(f, "%s\n  {\"round\": \"%u:%llu\", \"domain\": ", i ? "," : "",
			r->id_node, (unsigned long long)r->id_seq);
		json_str(f, r->domain);
		fprintf(f, ", \"state\": \"%s\", \"opened_ns\": %llu, \"closed_ns\": %llu, \"victim\": %d, \"failed_here\": %s, \"cycle\": [",
			r->state == XD_ROUND_DECIDED ? "decided" :
			r->state == XD_ROUND_ABORTED ? "aborted" : "pending",
			(unsigned long long)r->opened_ns, (unsigned long long)r->closed_ns,
			r->victim, r->failed && !r->fail_ret ? "true" : "false");
		for (j = 0; j < r->path.len; j++) {
			fputs(j ? ", " : "", f);
			json_vertex(f, &r->path.v[j]);
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
}

static int open_socket(struct daemon *dm)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(dm->sock_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", dm->sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(dm->sock_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		int err = -errno;

		close(fd);
		return err;
	}
	/* root's: the owners of other users are in it */
	chmod(dm->sock_path, 0600);
	dm->sock_fd = fd;
	return 0;
}

static void serve_socket(struct daemon *dm)
{
	struct timeval tv = { .tv_sec = 1 }, rtv = { .tv_usec = 200000 };
	int c;

	while ((c = accept4(dm->sock_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		char cmd[32] = "";
		ssize_t n;
		FILE *f;

		/* a reader that does not read (or write) holds the loop 1 s at most */
		setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &rtv, sizeof(rtv));
		/* "locks": every node's locks; anything else: the state */
		n = recv(c, cmd, sizeof(cmd) - 1, 0);
		if (n > 0 && !strncmp(cmd, "locks", 5)) {
			view_start(dm, c);
			continue;
		}
		f = fdopen(c, "w");
		if (!f) {
			close(c);
			continue;
		}
		write_state(dm, f);
		fclose(f);
	}
}

/* --- main --------------------------------------------------------------------- */

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ordlock-xdetectd [-v] [-d MS]\n"
		"  finds deadlocks across the nodes of ordlock's cluster domains\n"
		"  (policy detect) over corosync's CPG; runs in the foreground\n"
		"  -d, --delay MS    probe delay when DOMAIN_GET does not say (default 100)\n"
		"  -s, --socket PATH its state as JSON to whoever connects\n"
		"                    (default " XD_SOCKET ")\n"
		"  -v, --verbose     log every wait, probe and round\n"
		"  -h, --help\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "socket", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa;
	int c, ret;

	d.default_delay_ms = 100;
	d.cpg_fd = -1;
	d.sock_fd = -1;
	d.sock_path = XD_SOCKET;
	for (c = 0; c < XD_VIEWS_MAX; c++)
		views[c].fd = -1;
	while ((c = getopt_long(argc, argv, "d:s:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			d.default_delay_ms = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 's':
			d.sock_path = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	setvbuf(stderr, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (open_kernel(&d) < 0)
		return 1;
	/* the node id first (corosync), then the registration, then the group */
	ret = open_cpg(&d);
	if (ret < 0) {
		xlog(0, "corosync is not running (CPG: %s)", strerror(-ret));
		return 1;
	}
	ret = hello(&d, ORDLOCK_XD_JOINING, 0);
	if (ret < 0) {
		xlog(0, "XD_HELLO: %s%s", strerror(-ret),
		     ret == -EBUSY ? " (another ordlock-xdetectd runs on this node)" : "");
		return 1;
	}
	xlog(1, "registered with ordlock.ko (boot id %016llx)", (unsigned long long)d.boot);
	if (xd_init(&d.xs, d.node, d.boot, &ops, &d)) {
		xlog(0, "out of memory");
		return 1;
	}
	d.xs.in_group = false;
	ret = open_socket(&d);
	if (ret < 0)
		xlog(0, "the state socket %s: %s (ordlockctl sees no state)", d.sock_path,
		     strerror(-ret));

	while (!stopping) {
		struct pollfd pfd[3];
		uint64_t now = olc_nl_now_ms();
		uint32_t next = xd_tick(&d.xs, now);
		int n = 0, timeout;

		view_expire(&d, now);

		if (!d.cpg_up && now >= d.cpg_retry_at) {
			if (open_cpg(&d) < 0)
				d.cpg_retry_at = now + XD_RETRY_MS;
		}
		timeout = next == UINT32_MAX ? XD_RETRY_MS : (int)next;
		/* the views' deadlines: checked every 100 ms while one waits */
		for (c = 0; c < XD_VIEWS_MAX; c++)
			if (views[c].fd >= 0 && timeout > 100)
				timeout = 100;
		if (!d.cpg_up && timeout > XD_RETRY_MS)
			timeout = XD_RETRY_MS;
		pfd[n].fd = olc_nl_fd(d.ev);
		pfd[n++].events = POLLIN;
		pfd[n].fd = d.sock_fd;
		pfd[n++].events = POLLIN;
		if (d.cpg_up) {
			pfd[n].fd = d.cpg_fd;
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			xlog(0, "poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents)
			read_events(&d);
		if (pfd[1].revents)
			serve_socket(&d);
		if (d.cpg_up && n > 2 && pfd[2].revents) {
			cs_error_t err = cpg_dispatch(d.cpg, CS_DISPATCH_ALL);

			if (err != CS_OK && err != CS_ERR_TRY_AGAIN) {
				xlog(0, "corosync went away (CPG error %d): cycles across nodes end by their timeouts until it is back",
				     err);
				close_cpg(&d);
				d.cpg_retry_at = olc_nl_now_ms() + XD_RETRY_MS;
			}
		}
	}
	xlog(1, "stopping");
	close_cpg(&d);
	if (d.sock_fd >= 0) {
		close(d.sock_fd);
		unlink(d.sock_path);
	}
	xd_free(&d.xs);
	olc_nl_close(d.ev);
	olc_nl_close(d.nl);
	return 0;
}
