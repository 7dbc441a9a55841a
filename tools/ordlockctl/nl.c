// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: the generic netlink client (see nl.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

static int olc_nl_errno(int nle)
{
	switch (-nle < 0 ? nle : -nle) {
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_PERM:
		return -EPERM;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_AGAIN:
		return -EAGAIN;
	case NLE_INTR:
		return -EINTR;
	case NLE_BAD_SOCK:
		return -EBADF;
	default:
		return -EIO;
	}
}

static uint64_t olc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int olc_nl_open(struct olc_nl **out)
{
	struct olc_nl *nl = calloc(1, sizeof(*nl));
	int one = 1, ret;

	*out = NULL;
	if (!nl)
		return -ENOMEM;
	nl->buflen = 65536;
	nl->buf = malloc(nl->buflen);
	nl->sk = nl_socket_alloc();
	if (!nl->buf || !nl->sk) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = genl_connect(nl->sk);
	if (ret < 0) {
		ret = olc_nl_errno(ret);
		goto fail;
	}
	ret = genl_ctrl_resolve(nl->sk, ORDLOCK_GENL_NAME);
	if (ret < 0) {
		ret = olc_nl_errno(ret);
		goto fail;
	}
	nl->family = ret;
	ret = genl_ctrl_resolve_grp(nl->sk, ORDLOCK_GENL_NAME,
				    ORDLOCK_GENL_MCGRP_EVENTS);
	nl->events_grp = ret < 0 ? -1 : ret;
	/* from here on, acks are asked for and read here */
	nl_socket_disable_auto_ack(nl->sk);
	/* extended acks; older kernels lack them, which only loses messages */
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));
	*out = nl;
	return 0;
fail:
	olc_nl_close(nl);
	return ret;
}

void olc_nl_close(struct olc_nl *nl)
{
	if (!nl)
		return;
	if (nl->sk)
		nl_socket_free(nl->sk);
	free(nl->buf);
	free(nl);
}

const char *olc_nl_extack(const struct olc_nl *nl)
{
	return nl ? nl->ext_msg : "";
}

struct nl_msg *olc_nl_msg(struct olc_nl *nl, uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 flags | NLM_F_REQUEST | NLM_F_ACK, cmd,
			 ORDLOCK_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/*
 * Receive one datagram into nl->buf before @deadline (ms, 0: none).
 * Returns its length, -ETIMEDOUT, -EINTR or -errno.
 */
static int olc_nl_recv(struct olc_nl *nl, uint64_t deadline)
{
	int fd = nl_socket_get_fd(nl->sk);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	for (;;) {
		int wait = -1;

		if (deadline) {
			uint64_t now = olc_now_ms();

			if (now >= deadline)
				return -ETIMEDOUT;
			wait = (int)(deadline - now);
		}
		n = poll(&pfd, 1, wait);
		if (n < 0)
			return -errno;
		if (!n)
			continue;
		/* the size of the datagram, to make room for it */
		n = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN)
				continue;
			if (errno == ENOBUFS) {
				nl->lost++;
				continue;
			}
			return -errno;
		}
		if ((size_t)n > nl->buflen) {
			unsigned char *p = realloc(nl->buf, (size_t)n);

			if (!p)
				return -ENOMEM;
			nl->buf = p;
			nl->buflen = (size_t)n;
		}
		n = recv(fd, nl->buf, nl->buflen, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN)
				continue;
			if (errno == ENOBUFS) {
				nl->lost++;
				continue;
			}
			return -errno;
		}
		return (int)n;
	}
}

static void olc_nl_parse_extack(struct olc_nl *nl, struct nlmsghdr *nlh)
{
	struct nlmsgerr *e = nlmsg_data(nlh);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = sizeof(*e);
	int len;

	nl->ext_error = -e->error;
	nl->ext_msg[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	len = nlmsg_datalen(nlh) - (int)off;
	if (len <= 0)
		return;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)e + NLMSG_ALIGN(off)), len, NULL))
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		nla_strlcpy(nl->ext_msg, tb[NLMSGERR_ATTR_MSG], sizeof(nl->ext_msg));
}

/* Call @fn for a message of the family */
static int olc_nl_deliver(struct olc_nl *nl, struct nlmsghdr *nlh, olc_nl_fn fn,
			  void *arg)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1];

	if (nlh->nlmsg_type != nl->family)
		return 0;
	if (genlmsg_parse(nlh, 0, tb, ORDLOCK_A_MAX, NULL) < 0)
		return -EPROTO;
	return fn ? fn(tb, arg) : 0;
}

int olc_nl_transact(struct olc_nl *nl, struct nl_msg *msg, olc_nl_fn fn,
		    void *arg)
{
	uint64_t deadline;
	uint32_t seq;
	int ret, fn_err = 0, done = 0;

	nl->ext_error = 0;
	nl->ext_msg[0] = '\0';
	ret = nl_send_auto(nl->sk, msg);
	seq = nlmsg_hdr(msg)->nlmsg_seq;
	nlmsg_free(msg);
	if (ret < 0)
		return olc_nl_errno(ret);
	deadline = olc_now_ms() + OLC_NL_REPLY_MS;
	ret = 0;
	while (!done) {
		struct nlmsghdr *nlh;
		int len = olc_nl_recv(nl, deadline);

		if (len < 0)
			return len;
		nlh = (struct nlmsghdr *)nl->buf;
		for (; nlmsg_ok(nlh, len); nlh = nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = nlmsg_data(nlh);

				if (e->error)
					olc_nl_parse_extack(nl, nlh);
				ret = e->error;
				done = 1;
				continue;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				if (nlmsg_datalen(nlh) >= (int)sizeof(int) &&
				    *(int *)nlmsg_data(nlh) < 0) {
					ret = *(int *)nlmsg_data(nlh);
					nl->ext_error = -ret;
				}
				done = 1;
				continue;
			}
			if (!fn_err)
				fn_err = olc_nl_deliver(nl, nlh, fn, arg);
		}
	}
	return ret ? ret : fn_err;
}

int olc_nl_dump(struct olc_nl *nl, uint8_t cmd, olc_nl_fn fn, void *arg)
{
	struct nl_msg *msg = olc_nl_msg(nl, cmd, NLM_F_DUMP);

	if (!msg)
		return -ENOMEM;
	return olc_nl_transact(nl, msg, fn, arg);
}

int olc_nl_join_events(struct olc_nl *nl)
{
	int size = 1 << 20, ret;

	if (nl->events_grp < 0)
		return -ENOENT;
	/* bursts of events: a large buffer, and an overrun is counted */
	if (setsockopt(nl_socket_get_fd(nl->sk), SOL_SOCKET, SO_RCVBUFFORCE,
		       &size, sizeof(size)))
		setsockopt(nl_socket_get_fd(nl->sk), SOL_SOCKET, SO_RCVBUF,
			   &size, sizeof(size));
	ret = nl_socket_add_membership(nl->sk, nl->events_grp);
	return ret < 0 ? olc_nl_errno(ret) : 0;
}

int olc_nl_wait_event(struct olc_nl *nl, int timeout_ms, olc_nl_fn fn, void *arg)
{
	uint64_t deadline = timeout_ms < 0 ? 0 : olc_now_ms() + (uint64_t)timeout_ms;
	struct nlmsghdr *nlh;
	int len, n = 0, ret;

	if (!timeout_ms)
		deadline = olc_now_ms();
	len = olc_nl_recv(nl, deadline ? deadline : 0);
	if (len == -ETIMEDOUT)
		return 0;
	if (len < 0)
		return len;
	nlh = (struct nlmsghdr *)nl->buf;
	for (; nlmsg_ok(nlh, len); nlh = nlmsg_next(nlh, &len)) {
		struct genlmsghdr *g;

		if (nlh->nlmsg_type != nl->family ||
		    nlmsg_datalen(nlh) < (int)GENL_HDRLEN)
			continue;
		g = nlmsg_data(nlh);
		if (g->cmd != ORDLOCK_CMD_EVENT)
			continue;
		ret = olc_nl_deliver(nl, nlh, fn, arg);
		if (ret)
			return ret;
		n++;
	}
	return n;
}

/* Attributes */

int olc_nl_parse_nest(struct nlattr **tb, int max, const struct nlattr *nest)
{
	if (!nest)
		return -EPROTO;
	return nla_parse_nested(tb, max, (struct nlattr *)nest, NULL) ? -EPROTO : 0;
}

void olc_nl_copy_str(char *dst, size_t len, const struct nlattr *a)
{
	size_t i;

	dst[0] = '\0';
	if (!a)
		return;
	nla_strlcpy(dst, a, len);
	/* what the kernel sent is printed: keep it printable */
	for (i = 0; dst[i]; i++)
		if (dst[i] <= ' ' || dst[i] > '~')
			dst[i] = '?';
}

int olc_nl_who(struct nlattr **etb, struct olc_who *w)
{
	memset(w, 0, sizeof(*w));
	if (!etb[ORDLOCK_E_OWNER_ID] || !etb[ORDLOCK_E_PID])
		return -EPROTO;
	w->id = nla_get_u64(etb[ORDLOCK_E_OWNER_ID]);
	w->pid = nla_get_u32(etb[ORDLOCK_E_PID]);
	olc_nl_copy_str(w->comm, sizeof(w->comm), etb[ORDLOCK_E_COMM]);
	if (!w->comm[0])
		strcpy(w->comm, "?");
	return 0;
}

int olc_nl_key(const struct nlattr *nest, uint32_t *rank, uint64_t *id,
	       unsigned int *mode)
{
	struct nlattr *tb[ORDLOCK_K_MAX + 1];

	if (olc_nl_parse_nest(tb, ORDLOCK_K_MAX, nest))
		return -EPROTO;
	if (!tb[ORDLOCK_K_RANK] || !tb[ORDLOCK_K_ID])
		return -EPROTO;
	*rank = nla_get_u32(tb[ORDLOCK_K_RANK]);
	*id = nla_get_u64(tb[ORDLOCK_K_ID]);
	if (mode)
		*mode = tb[ORDLOCK_K_MODE] ? nla_get_u32(tb[ORDLOCK_K_MODE]) : 0;
	return 0;
}

static void olc_nl_fkey(const struct nlattr *nest, struct ordlock_key *k)
{
	unsigned int mode = 0;
	uint32_t rank = 0;
	uint64_t id = 0;

	memset(k, 0, sizeof(*k));
	if (nest && !olc_nl_key(nest, &rank, &id, &mode)) {
		k->rank = rank;
		k->id = id;
		k->mode = (uint16_t)mode;
	}
}

int olc_nl_failure(const struct nlattr *nest, struct ordlock_failure *f)
{
	struct nlattr *tb[ORDLOCK_F_MAX + 1];

	memset(f, 0, sizeof(*f));
	f->index = ~0U;
	if (olc_nl_parse_nest(tb, ORDLOCK_F_MAX, nest))
		return -EPROTO;
	if (tb[ORDLOCK_F_REASON])
		f->reason = nla_get_u32(tb[ORDLOCK_F_REASON]);
	if (tb[ORDLOCK_F_ERRNO])
		f->error = nla_get_u32(tb[ORDLOCK_F_ERRNO]);
	if (tb[ORDLOCK_F_PID])
		f->pid = nla_get_u32(tb[ORDLOCK_F_PID]);
	if (tb[ORDLOCK_F_INDEX])
		f->index = nla_get_u32(tb[ORDLOCK_F_INDEX]);
	olc_nl_fkey(tb[ORDLOCK_F_KEY], &f->key);
	olc_nl_fkey(tb[ORDLOCK_F_HELD], &f->held);
	if (tb[ORDLOCK_F_HOLDER_MODE])
		f->holder_mode = nla_get_u32(tb[ORDLOCK_F_HOLDER_MODE]);
	if (tb[ORDLOCK_F_CYCLE_LEN])
		f->cycle_len = nla_get_u32(tb[ORDLOCK_F_CYCLE_LEN]);
	return 0;
}

int olc_nl_cycle(const struct nlattr *nest, struct ordlock_cycle_step *steps,
		 unsigned int max)
{
	struct nlattr *tb[ORDLOCK_E_MAX + 1];
	struct nlattr *a;
	unsigned int n = 0;
	int rem;

	if (!nest)
		return 0;
	nla_for_each_nested(a, (struct nlattr *)nest, rem) {
		struct ordlock_cycle_step *s = &steps[n];
		struct olc_who w;
		unsigned int mode = 0;
		uint32_t rank;
		uint64_t id;

		if (n == max)
			break;
		if (olc_nl_parse_nest(tb, ORDLOCK_E_MAX, a) || olc_nl_who(tb, &w) ||
		    olc_nl_key(tb[ORDLOCK_E_KEY], &rank, &id, &mode))
			return -EPROTO;
		memset(s, 0, sizeof(*s));
		s->owner_id = w.id;
		s->pid = w.pid;
		memcpy(s->comm, w.comm, sizeof(s->comm));
		s->key.rank = rank;
		s->key.id = id;
		s->key.mode = (uint16_t)mode;
		s->edge = tb[ORDLOCK_E_EDGE] ? nla_get_u32(tb[ORDLOCK_E_EDGE]) :
			  ORDLOCK_EDGE_HARD;
		s->blocker_mode = tb[ORDLOCK_E_MODE] ? nla_get_u32(tb[ORDLOCK_E_MODE]) : 0;
		n++;
	}
	return (int)n;
}

/* Dumps */

static int olc_nl_entry(struct nlattr **tb, struct nlattr **etb)
{
	return olc_nl_parse_nest(etb, ORDLOCK_E_MAX, tb[ORDLOCK_A_ENTRY]);
}

static int olc_nl_graph_fn(struct nlattr **tb, void *arg)
{
	struct nlattr *etb[ORDLOCK_E_MAX + 1], *btb[ORDLOCK_E_MAX + 1];
	struct olc_edges *out = arg;
	struct olc_edge e, *p;

	memset(&e, 0, sizeof(e));
	if (olc_nl_entry(tb, etb) || olc_nl_who(etb, &e.waiter) ||
	    olc_nl_key(etb[ORDLOCK_E_KEY], &e.rank, &e.id, &e.mode) ||
	    olc_nl_parse_nest(btb, ORDLOCK_E_MAX, etb[ORDLOCK_E_BLOCKER]) ||
	    olc_nl_who(btb, &e.blocker))
		return -EPROTO;
	olc_nl_copy_str(e.domain, sizeof(e.domain), etb[ORDLOCK_E_DOMAIN]);
	e.blocker_mode = btb[ORDLOCK_E_MODE] ? nla_get_u32(btb[ORDLOCK_E_MODE]) : 0;
	e.type = etb[ORDLOCK_E_EDGE] ? nla_get_u32(etb[ORDLOCK_E_EDGE]) :
		 ORDLOCK_EDGE_HARD;
	if (etb[ORDLOCK_E_WAITED_US])
		e.waited_us = nla_get_u64(etb[ORDLOCK_E_WAITED_US]);
	p = olc_edges_add(out);
	if (!p)
		return -ENOMEM;
	*p = e;
	return 0;
}

int olc_nl_get_graph(struct olc_nl *nl, struct olc_edges *out)
{
	return olc_nl_dump(nl, ORDLOCK_CMD_GET_GRAPH, olc_nl_graph_fn, out);
}

static int olc_nl_locks_fn(struct nlattr **tb, void *arg)
{
	struct nlattr *etb[ORDLOCK_E_MAX + 1];
	struct olc_locks *out = arg;
	struct olc_lock l, *p;

	memset(&l, 0, sizeof(l));
	if (olc_nl_entry(tb, etb) || olc_nl_who(etb, &l.owner) ||
	    olc_nl_key(etb[ORDLOCK_E_KEY], &l.rank, &l.id, NULL) ||
	    !etb[ORDLOCK_E_ROLE])
		return -EPROTO;
	olc_nl_copy_str(l.domain, sizeof(l.domain), etb[ORDLOCK_E_DOMAIN]);
	l.role = nla_get_u32(etb[ORDLOCK_E_ROLE]);
	if (etb[ORDLOCK_E_POSITION])
		l.pos = nla_get_u32(etb[ORDLOCK_E_POSITION]);
	if (etb[ORDLOCK_E_MODE])
		l.mode = nla_get_u32(etb[ORDLOCK_E_MODE]);
	if (l.role == ORDLOCK_ROLE_HOLDER && etb[ORDLOCK_E_TOKEN])
		l.value = nla_get_u64(etb[ORDLOCK_E_TOKEN]);
	else if (etb[ORDLOCK_E_WAITED_US])
		l.value = nla_get_u64(etb[ORDLOCK_E_WAITED_US]);
	p = olc_locks_add(out);
	if (!p)
		return -ENOMEM;
	*p = l;
	return 0;
}

int olc_nl_get_locks(struct olc_nl *nl, struct olc_locks *out)
{
	return olc_nl_dump(nl, ORDLOCK_CMD_GET_LOCKS, olc_nl_locks_fn, out);
}

static int olc_nl_owners_fn(struct nlattr **tb, void *arg)
{
	struct nlattr *etb[ORDLOCK_E_MAX + 1];
	struct olc_owners *out = arg;
	struct olc_owner o, *p;

	memset(&o, 0, sizeof(o));
	if (olc_nl_entry(tb, etb) || olc_nl_who(etb, &o.who))
		return -EPROTO;
	olc_nl_copy_str(o.domain, sizeof(o.domain), etb[ORDLOCK_E_DOMAIN]);
	if (etb[ORDLOCK_E_KIND])
		o.kind = nla_get_u32(etb[ORDLOCK_E_KIND]);
	if (etb[ORDLOCK_E_HELD])
		o.held = nla_get_u32(etb[ORDLOCK_E_HELD]);
	if (etb[ORDLOCK_E_KEY] &&
	    olc_nl_key(etb[ORDLOCK_E_KEY], &o.wrank, &o.wid, &o.wmode))
		return -EPROTO;
	if (etb[ORDLOCK_E_WAITED_US])
		o.waited_us = nla_get_u64(etb[ORDLOCK_E_WAITED_US]);
	p = olc_owners_add(out);
	if (!p)
		return -ENOMEM;
	*p = o;
	return 0;
}

int olc_nl_get_owners(struct olc_nl *nl, struct olc_owners *out)
{
	return olc_nl_dump(nl, ORDLOCK_CMD_GET_OWNERS, olc_nl_owners_fn, out);
}

/* The counters of GET_STATS with the names of the debugfs stats file */
static const char *const olc_stat_names[ORDLOCK_S_MAX + 1] = {
	[ORDLOCK_S_OWNERS] = "owners",
	[ORDLOCK_S_PEAK_OWNERS] = "peak_owners",
	[ORDLOCK_S_RESOURCES] = "resources",
	[ORDLOCK_S_PEAK_RESOURCES] = "peak_resources",
	[ORDLOCK_S_WAITERS] = "waiters",
	[ORDLOCK_S_PEAK_WAITERS] = "peak_waiters",
	[ORDLOCK_S_ACQUIRES] = "acquires",
	[ORDLOCK_S_CONTENDED] = "contended",
	[ORDLOCK_S_TIMEOUTS] = "timeouts",
	[ORDLOCK_S_TRY_FAILURES] = "try_failures",
	[ORDLOCK_S_ORDER_VIOLATIONS] = "order_violations",
	[ORDLOCK_S_DEADLOCKS] = "deadlocks",
	[ORDLOCK_S_UPGRADE_DEADLOCKS] = "upgrade_deadlocks",
	[ORDLOCK_S_CONVERSIONS] = "conversions",
	[ORDLOCK_S_SIGNALS] = "signals",
	[ORDLOCK_S_LIMITS] = "limits",
	[ORDLOCK_S_RELEASES] = "releases",
};

/* the order of the debugfs file: gauges first, then the counters */
static const int olc_stat_order[] = {
	ORDLOCK_S_OWNERS, ORDLOCK_S_PEAK_OWNERS, ORDLOCK_S_RESOURCES,
	ORDLOCK_S_PEAK_RESOURCES, ORDLOCK_S_WAITERS, ORDLOCK_S_PEAK_WAITERS,
	ORDLOCK_S_ACQUIRES, ORDLOCK_S_CONTENDED, ORDLOCK_S_TIMEOUTS,
	ORDLOCK_S_TRY_FAILURES, ORDLOCK_S_ORDER_VIOLATIONS, ORDLOCK_S_DEADLOCKS,
	ORDLOCK_S_UPGRADE_DEADLOCKS, ORDLOCK_S_CONVERSIONS, ORDLOCK_S_SIGNALS,
	ORDLOCK_S_LIMITS, ORDLOCK_S_RELEASES,
};

static int olc_nl_stats_fn(struct nlattr **tb, void *arg)
{
	struct nlattr *stb[ORDLOCK_S_MAX + 1];
	struct olc_domain_stats *d = arg;
	unsigned int i;

	olc_nl_copy_str(d->name, sizeof(d->name), tb[ORDLOCK_A_DOMAIN]);
	if (tb[ORDLOCK_A_POLICY])
		snprintf(d->policy, sizeof(d->policy), "%s",
			 olc_policy_str(nla_get_u32(tb[ORDLOCK_A_POLICY])));
	if (tb[ORDLOCK_A_DETECT_DELAY_MS]) {
		d->have_delay = 1;
		d->detect_delay_ms = nla_get_u32(tb[ORDLOCK_A_DETECT_DELAY_MS]);
	}
	if (olc_nl_parse_nest(stb, ORDLOCK_S_MAX, tb[ORDLOCK_A_STATS]))
		return -EPROTO;
	d->n = 0;
	for (i = 0; i < ARRAY_SIZE(olc_stat_order); i++) {
		int a = olc_stat_order[i];

		if (!stb[a])
			continue;
		snprintf(d->v[d->n].name, sizeof(d->v[d->n].name), "%s",
			 olc_stat_names[a]);
		d->v[d->n].value = nla_get_u64(stb[a]);
		d->n++;
	}
	return 0;
}

int olc_nl_get_stats(struct olc_nl *nl, const char *domain,
		     struct olc_domain_stats *out)
{
	struct nl_msg *msg = olc_nl_msg(nl, ORDLOCK_CMD_GET_STATS, 0);

	memset(out, 0, sizeof(*out));
	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return olc_nl_transact(nl, msg, olc_nl_stats_fn, out);
}

static int olc_nl_domain_fn(struct nlattr **tb, void *arg)
{
	struct nlattr *etb[ORDLOCK_E_MAX + 1];
	struct olc_domain_info *d = arg;
	struct nlattr *a;
	int rem;

	olc_nl_copy_str(d->name, sizeof(d->name), tb[ORDLOCK_A_DOMAIN]);
	if (tb[ORDLOCK_A_POLICY])
		d->policy = nla_get_u32(tb[ORDLOCK_A_POLICY]);
	if (tb[ORDLOCK_A_DETECT_DELAY_MS])
		d->detect_delay_ms = nla_get_u32(tb[ORDLOCK_A_DETECT_DELAY_MS]);
	d->names.n = 0;
	if (!tb[ORDLOCK_A_RANK_NAMES])
		return 0;
	d->have_names = 1;
	nla_for_each_nested(a, tb[ORDLOCK_A_RANK_NAMES], rem) {
		struct olc_rank_name *r;

		if (d->names.n == ORDLOCK_RANK_NAMES_MAX)
			break;
		if (olc_nl_parse_nest(etb, ORDLOCK_E_MAX, a) ||
		    !etb[ORDLOCK_E_RANK] || !etb[ORDLOCK_E_NAME])
			return -EPROTO;
		r = &d->names.v[d->names.n++];
		r->rank = nla_get_u32(etb[ORDLOCK_E_RANK]);
		olc_nl_copy_str(r->name, sizeof(r->name), etb[ORDLOCK_E_NAME]);
	}
	return 0;
}

int olc_nl_domain_get(struct olc_nl *nl, const char *domain,
		      struct olc_domain_info *out)
{
	struct nl_msg *msg = olc_nl_msg(nl, ORDLOCK_CMD_DOMAIN_GET, 0);

	memset(out, 0, sizeof(*out));
	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return olc_nl_transact(nl, msg, olc_nl_domain_fn, out);
}

int olc_nl_domain_set(struct olc_nl *nl, const char *domain,
		      const struct olc_domain_set *set,
		      struct olc_domain_info *out)
{
	struct nl_msg *msg = olc_nl_msg(nl, ORDLOCK_CMD_DOMAIN_SET, 0);
	struct nlattr *names, *entry;
	unsigned int i;

	memset(out, 0, sizeof(*out));
	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain) ||
	    (set->set_policy && nla_put_u32(msg, ORDLOCK_A_POLICY, set->policy)) ||
	    (set->set_delay &&
	     nla_put_u32(msg, ORDLOCK_A_DETECT_DELAY_MS, set->detect_delay_ms)))
		goto full;
	if (set->set_names) {
		names = nla_nest_start(msg, ORDLOCK_A_RANK_NAMES);
		if (!names)
			goto full;
		for (i = 0; i < set->names.n; i++) {
			entry = nla_nest_start(msg, ORDLOCK_A_ENTRY);
			if (!entry ||
			    nla_put_u32(msg, ORDLOCK_E_RANK, set->names.v[i].rank) ||
			    nla_put_string(msg, ORDLOCK_E_NAME, set->names.v[i].name))
				goto full;
			nla_nest_end(msg, entry);
		}
		/* no names: an empty nest removes them (libnl drops empty nests) */
		nla_nest_end_keep_empty(msg, names);
	}
	return olc_nl_transact(nl, msg, olc_nl_domain_fn, out);
full:
	nlmsg_free(msg);
	return -EMSGSIZE;
}
