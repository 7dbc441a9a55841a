// SPDX-License-Identifier: GPL-2.0
/* The generic netlink client of the "ordlock" family: see nl.h. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* The first receive buffer; it grows to the largest datagram seen */
#define OLC_NL_BUF_SIZE	65536
/* Room for the largest request built by default (1025 keys and change) */
#define OLC_NL_MSG_SIZE	(128 * 1024)

struct olc_nl_kept {
	struct olc_nl_kept *next;
	uint8_t cmd;
	struct nlmsghdr *nlh;
};

static char olc_nl_why_buf[192];

const char *olc_nl_why(void)
{
	return olc_nl_why_buf;
}

static int olc_nl_proto(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Say why a message does not parse; returns -EPROTO */
static int olc_nl_proto(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(olc_nl_why_buf, sizeof(olc_nl_why_buf), fmt, ap);
	va_end(ap);
	return -EPROTO;
}

static int olc_nl_errno(int nle)
{
	switch (nle < 0 ? -nle : nle) {
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

uint64_t olc_nl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* --- the socket ------------------------------------------------------------ */

int olc_nl_open(struct olc_nl **out, int fd, int need_events)
{
	struct olc_nl *nl = calloc(1, sizeof(*nl));
	int one = 1, ret;

	*out = NULL;
	if (!nl)
		return -ENOMEM;
	nl->events_grp = -1;
	nl->reply_ms = OLC_NL_REPLY_MS;
	nl->buflen = OLC_NL_BUF_SIZE;
	nl->buf = malloc(nl->buflen);
	nl->sk = nl_socket_alloc();
	if (!nl->buf || !nl->sk) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = fd < 0 ? genl_connect(nl->sk) :
		       nl_socket_set_fd(nl->sk, NETLINK_GENERIC, fd);
	if (ret < 0) {
		ret = olc_nl_errno(ret);
		goto fail;
	}
	/* libnl waits for the controller's acks itself while resolving */
	ret = genl_ctrl_resolve(nl->sk, ORDLOCK_GENL_NAME);
	if (ret < 0) {
		ret = olc_nl_errno(ret);
		goto fail;
	}
	nl->family = ret;
	ret = genl_ctrl_resolve_grp(nl->sk, ORDLOCK_GENL_NAME,
				    ORDLOCK_GENL_MCGRP_EVENTS);
	if (ret < 0 && need_events) {
		ret = olc_nl_errno(ret);
		goto fail;
	}
	nl->events_grp = ret < 0 ? -1 : ret;
	/* from here on, acks are asked for and read here */
	nl_socket_disable_auto_ack(nl->sk);
	/* extended acks; older kernels lack them, which only loses messages */
	setsockopt(olc_nl_fd(nl), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(olc_nl_fd(nl), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->port = nl_socket_get_local_port(nl->sk);
	*out = nl;
	return 0;
fail:
	olc_nl_close(nl);
	return ret;
}

void olc_nl_close(struct olc_nl *nl)
{
	struct olc_nl_kept *k, *next;

	if (!nl)
		return;
	for (k = nl->kept_head; k; k = next) {
		next = k->next;
		free(k->nlh);
		free(k);
	}
	free(nl->reply);
	if (nl->sk)
		nl_socket_free(nl->sk);
	free(nl->buf);
	free(nl);
}

int olc_nl_fd(const struct olc_nl *nl)
{
	return nl_socket_get_fd(nl->sk);
}

/* --- building requests ------------------------------------------------------ */

struct nl_msg *olc_nl_msg(struct olc_nl *nl, uint8_t cmd, int flags, size_t size)
{
	struct nl_msg *msg = nlmsg_alloc_size(size ? size : OLC_NL_MSG_SIZE);

	if (!msg)
		return NULL;
	if (!(flags & NLM_F_DUMP))
		flags |= NLM_F_ACK;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 flags | NLM_F_REQUEST, cmd, ORDLOCK_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

uint32_t olc_nl_offset(struct nl_msg *msg)
{
	return NLMSG_ALIGN(nlmsg_hdr(msg)->nlmsg_len);
}

struct nlattr *olc_nl_nest_start(struct nl_msg *msg, int type)
{
	struct nlattr *start = (struct nlattr *)((char *)nlmsg_hdr(msg) +
						 olc_nl_offset(msg));

	/* an empty attribute, its length fixed by nla_nest_end() */
	if (nla_put(msg, type | NLA_F_NESTED, 0, NULL) < 0)
		return NULL;
	return start;
}

int olc_nl_put_key(struct nl_msg *msg, int type, const struct ordlock_key *k)
{
	struct nlattr *nest = olc_nl_nest_start(msg, type);

	if (!nest ||
	    nla_put_u32(msg, ORDLOCK_K_RANK, k->rank) ||
	    nla_put_u64(msg, ORDLOCK_K_ID, k->id) ||
	    (k->mode && nla_put_u32(msg, ORDLOCK_K_MODE, k->mode)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

int olc_nl_put_keys(struct nl_msg *msg, const struct ordlock_key *keys,
		    unsigned int n)
{
	struct nlattr *nest = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	unsigned int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++)
		if (olc_nl_put_key(msg, ORDLOCK_A_KEY, &keys[i]))
			return -EMSGSIZE;
	nla_nest_end_keep_empty(msg, nest);
	return 0;
}

/* --- sending and receiving ----------------------------------------------------- */

int olc_nl_send(struct olc_nl *nl, struct nl_msg *msg, uint32_t *seq)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int ret;

	memset(&nl->ext, 0, sizeof(nl->ext));
	if (nl->use_write) {
		nl_complete_msg(nl->sk, msg);
		ret = write(olc_nl_fd(nl), nlh, nlh->nlmsg_len) < 0 ? -errno : 0;
	} else {
		ret = nl_send_auto(nl->sk, msg);
		ret = ret < 0 ? olc_nl_errno(ret) : 0;
	}
	*seq = nlh->nlmsg_seq;
	nlmsg_free(msg);
	return ret;
}

/*
 * One datagram into nl->buf before @deadline (ms, 0: none): its length,
 * -ETIMEDOUT, -EINTR (with @intr), -ENOBUFS (without @skip_overruns) or
 * -errno
 */
static int olc_nl_recv(struct olc_nl *nl, uint64_t deadline)
{
	int fd = olc_nl_fd(nl);
	ssize_t n;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int wait = -1, peek = 1;

		if (deadline) {
			uint64_t now = olc_nl_now_ms();

			wait = now >= deadline ? 0 : (int)(deadline - now);
		}
		n = poll(&pfd, 1, wait);
		if (n < 0) {
			if (errno == EINTR && !nl->intr)
				continue;
			return -errno;
		}
		if (!n)
			return -ETIMEDOUT;
		/* the size of the datagram first, to make room for it */
		for (;;) {
			n = peek ? recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT) :
				   recv(fd, nl->buf, nl->buflen, MSG_DONTWAIT);
			if (n < 0)
				break;
			if (!peek)
				return (int)n;
			if ((size_t)n > nl->buflen) {
				unsigned char *p = realloc(nl->buf, (size_t)n);

				if (!p)
					return -ENOMEM;
				nl->buf = p;
				nl->buflen = (size_t)n;
			}
			peek = 0;
		}
		if (errno == EAGAIN || errno == EINTR)
			continue;
		if (errno != ENOBUFS)
			return -errno;
		nl->lost++;
		if (!nl->skip_overruns)
			return -ENOBUFS;
	}
}

static void olc_nl_parse_extack(struct olc_nl *nl, struct nlmsghdr *nlh)
{
	struct nlmsgerr *e = nlmsg_data(nlh);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = sizeof(*e);
	int len;

	memset(&nl->ext, 0, sizeof(nl->ext));
	nl->ext.error = -e->error;
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
		nla_strlcpy(nl->ext.msg, tb[NLMSGERR_ATTR_MSG], sizeof(nl->ext.msg));
	if (tb[NLMSGERR_ATTR_OFFS]) {
		nl->ext.have_off = 1;
		nl->ext.off = nla_get_u32(tb[NLMSGERR_ATTR_OFFS]);
	}
	if (tb[NLMSGERR_ATTR_MISS_TYPE]) {
		nl->ext.have_miss = 1;
		nl->ext.miss_type = nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);
	}
}

/* The command of a message of the family, or -1 for any other message */
static int olc_nl_cmd(const struct olc_nl *nl, struct nlmsghdr *nlh)
{
	if (nlh->nlmsg_type != nl->family || nlmsg_datalen(nlh) < (int)GENL_HDRLEN)
		return -1;
	return ((struct genlmsghdr *)nlmsg_data(nlh))->cmd;
}

static void olc_nl_keep(struct olc_nl *nl, struct nlmsghdr *nlh, uint8_t cmd)
{
	struct olc_nl_kept *k = malloc(sizeof(*k));

	if (k)
		k->nlh = malloc(nlh->nlmsg_len);
	if (!k || !k->nlh) {
		/* as if the socket had overflowed */
		free(k);
		nl->lost++;
		return;
	}
	memcpy(k->nlh, nlh, nlh->nlmsg_len);
	k->next = NULL;
	k->cmd = cmd;
	if (nl->kept_tail)
		nl->kept_tail->next = k;
	else
		nl->kept_head = k;
	nl->kept_tail = k;
}

struct nlmsghdr *olc_nl_take(struct olc_nl *nl, uint8_t cmd)
{
	struct olc_nl_kept *k, *prev = NULL;
	struct nlmsghdr *nlh;

	for (k = nl->kept_head; k; prev = k, k = k->next) {
		if (k->cmd != cmd)
			continue;
		if (prev)
			prev->next = k->next;
		else
			nl->kept_head = k->next;
		if (nl->kept_tail == k)
			nl->kept_tail = prev;
		nlh = k->nlh;
		free(k);
		return nlh;
	}
	return NULL;
}

unsigned int olc_nl_pending(const struct olc_nl *nl)
{
	const struct olc_nl_kept *k;
	unsigned int n = 0;

	for (k = nl->kept_head; k; k = k->next)
		n++;
	return n;
}

static int olc_nl_aside(int cmd)
{
	return cmd == ORDLOCK_CMD_RESULT || cmd == ORDLOCK_CMD_EVENT ||
	       cmd == ORDLOCK_CMD_REVOKED;
}

int olc_nl_pump(struct olc_nl *nl, uint64_t deadline)
{
	struct nlmsghdr *nlh;
	int len = olc_nl_recv(nl, deadline);

	if (len < 0)
		return len;
	nlh = (struct nlmsghdr *)nl->buf;
	for (; nlmsg_ok(nlh, len); nlh = nlmsg_next(nlh, &len)) {
		int cmd = olc_nl_cmd(nl, nlh);

		if (olc_nl_aside(cmd))
			olc_nl_keep(nl, nlh, (uint8_t)cmd);
	}
	return 0;
}

int olc_nl_wait_end(struct olc_nl *nl, uint32_t seq, olc_nl_msg_fn fn, void *arg)
{
	uint64_t deadline = olc_nl_now_ms() + nl->reply_ms;
	int fn_err = 0, ret = 1;

	while (ret == 1) {
		struct nlmsghdr *nlh;
		int len = olc_nl_recv(nl, deadline);

		if (len < 0)
			return len;
		nlh = (struct nlmsghdr *)nl->buf;
		for (; nlmsg_ok(nlh, len); nlh = nlmsg_next(nlh, &len)) {
			int cmd = olc_nl_cmd(nl, nlh);

			if (nlh->nlmsg_type == NLMSG_ERROR) {
				if (nlh->nlmsg_seq != seq)
					continue;
				olc_nl_parse_extack(nl, nlh);
				ret = ((struct nlmsgerr *)nlmsg_data(nlh))->error;
				continue;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				if (nlh->nlmsg_seq != seq)
					continue;
				ret = 0;
				if (nlmsg_datalen(nlh) >= (int)sizeof(int) &&
				    *(int *)nlmsg_data(nlh) < 0) {
					ret = *(int *)nlmsg_data(nlh);
					memset(&nl->ext, 0, sizeof(nl->ext));
					nl->ext.error = -ret;
				}
				continue;
			}
			if (cmd < 0)
				continue;
			if (olc_nl_aside(cmd)) {
				if (nl->keep)
					olc_nl_keep(nl, nlh, (uint8_t)cmd);
				continue;
			}
			if (nlh->nlmsg_seq != seq || ret != 1)
				continue;
			if (fn && !fn_err)
				fn_err = fn(nl, nlh, arg);
		}
	}
	return ret ? ret : fn_err;
}

struct olc_nl_call {
	olc_nl_fn fn;
	void *arg;
};

static int olc_nl_deliver(struct olc_nl *nl, struct nlmsghdr *nlh, void *arg)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct olc_nl_call *c = arg;
	uint8_t cmd;

	(void)nl;
	if (olc_nl_parse_genl(nlh, tb, &cmd))
		return -EPROTO;
	return c->fn ? c->fn(tb, c->arg) : 0;
}

int olc_nl_transact(struct olc_nl *nl, struct nl_msg *msg, olc_nl_fn fn,
		    void *arg)
{
	struct olc_nl_call c = { .fn = fn, .arg = arg };
	uint32_t seq;
	int ret = olc_nl_send(nl, msg, &seq);

	return ret ? ret : olc_nl_wait_end(nl, seq, olc_nl_deliver, &c);
}

int olc_nl_dump(struct olc_nl *nl, uint8_t cmd, olc_nl_fn fn, void *arg)
{
	struct nl_msg *msg = olc_nl_msg(nl, cmd, NLM_F_DUMP, 0);

	if (!msg)
		return -ENOMEM;
	return olc_nl_transact(nl, msg, fn, arg);
}

/* Keep a copy of the first reply */
static int olc_nl_keep_reply(struct olc_nl *nl, struct nlmsghdr *nlh, void *arg)
{
	struct nlmsghdr **out = arg;

	(void)nl;
	if (*out)
		return 0;
	*out = malloc(nlh->nlmsg_len);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, nlh, nlh->nlmsg_len);
	return 0;
}

int olc_nl_request(struct olc_nl *nl, struct nl_msg *msg,
		   struct nlattr *tb[ORDLOCK_A_MAX + 1])
{
	struct nlmsghdr *reply = NULL;
	uint8_t cmd;
	uint32_t seq;
	int ret;

	ret = olc_nl_send(nl, msg, &seq);
	if (ret)
		return ret;
	ret = olc_nl_wait_end(nl, seq, olc_nl_keep_reply, &reply);
	/* @tb points into the reply: keep it until the next request */
	free(nl->reply);
	nl->reply = reply;
	if (ret || !tb)
		return ret;
	if (!reply)
		return olc_nl_proto("request %u was acked without a reply", seq);
	return olc_nl_parse_genl(reply, tb, &cmd);
}

int olc_nl_join_events(struct olc_nl *nl, int rcvbuf)
{
	int ret;

	if (nl->events_grp < 0)
		return -ENOENT;
	/* bursts of events must be dropped by the kernel, if at all */
	if (setsockopt(olc_nl_fd(nl), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)))
		setsockopt(olc_nl_fd(nl), SOL_SOCKET, SO_RCVBUF, &rcvbuf,
			   sizeof(rcvbuf));
	ret = nl_socket_add_membership(nl->sk, nl->events_grp);
	return ret < 0 ? olc_nl_errno(ret) : 0;
}

/* --- parsers ------------------------------------------------------------------ */

static struct nla_policy olc_nl_top_policy[ORDLOCK_A_MAX + 1] = {
	[ORDLOCK_A_DOMAIN] = { .type = NLA_STRING },
	[ORDLOCK_A_KEYS] = { .type = NLA_NESTED },
	[ORDLOCK_A_KEY] = { .type = NLA_NESTED },
	[ORDLOCK_A_FLAGS] = { .type = NLA_U32 },
	[ORDLOCK_A_TIMEOUT_NS] = { .type = NLA_U64 },
	[ORDLOCK_A_COOKIE] = { .type = NLA_U64 },
	[ORDLOCK_A_STATUS] = { .type = NLA_U32 },
	[ORDLOCK_A_TOKEN] = { .type = NLA_U64 },
	[ORDLOCK_A_ERRNO] = { .type = NLA_U32 },
	[ORDLOCK_A_FAILURE] = { .type = NLA_NESTED },
	[ORDLOCK_A_CYCLE] = { .type = NLA_NESTED },
	[ORDLOCK_A_ENTRY] = { .type = NLA_NESTED },
	[ORDLOCK_A_EVENT] = { .type = NLA_U32 },
	[ORDLOCK_A_POLICY] = { .type = NLA_U32 },
	[ORDLOCK_A_DETECT_DELAY_MS] = { .type = NLA_U32 },
	[ORDLOCK_A_RANK_NAMES] = { .type = NLA_NESTED },
	[ORDLOCK_A_STATS] = { .type = NLA_NESTED },
	[ORDLOCK_A_LABEL] = { .type = NLA_STRING },
	[ORDLOCK_A_POTENTIAL_KIND] = { .type = NLA_U32 },
	[ORDLOCK_A_ORDER_DROPPED] = { .type = NLA_U64 },
	[ORDLOCK_A_RESULT_FLAGS] = { .type = NLA_U32 },
	[ORDLOCK_A_STRICT] = { .type = NLA_U32 },
	[ORDLOCK_A_LEASE_MS] = { .type = NLA_U32 },
	[ORDLOCK_A_MAX_HOLD_MS] = { .type = NLA_U32 },
	[ORDLOCK_A_LEFT_MS] = { .type = NLA_U64 },
	[ORDLOCK_A_CLUSTER] = { .type = NLA_U32 },
	[ORDLOCK_A_FASTPATH] = { .type = NLA_U32 },
	[ORDLOCK_A_FASTPATH_UID] = { .type = NLA_U32 },
	[ORDLOCK_A_XD_NODE] = { .type = NLA_U32 },
	[ORDLOCK_A_XD_STATE] = { .type = NLA_U32 },
	[ORDLOCK_A_XD_MEMBERS] = { .type = NLA_U32 },
	[ORDLOCK_A_XD_BOOT] = { .type = NLA_U64 },
	[ORDLOCK_A_XD_KIND] = { .type = NLA_U32 },
	[ORDLOCK_A_XD_END] = { .type = NLA_U32 },
	[ORDLOCK_A_XD_OWNER] = { .type = NLA_U64 },
	[ORDLOCK_A_XD_GEN] = { .type = NLA_U64 },
	[ORDLOCK_A_XD_PATH] = { .type = NLA_NESTED },
	[ORDLOCK_A_XD_LIVE] = { .type = NLA_U32 },
	[ORDLOCK_A_XD_PID] = { .type = NLA_U32 },
};

static struct nla_policy olc_nl_key_policy[ORDLOCK_K_MAX + 1] = {
	[ORDLOCK_K_RANK] = { .type = NLA_U32 },
	[ORDLOCK_K_ID] = { .type = NLA_U64 },
	[ORDLOCK_K_MODE] = { .type = NLA_U32 },
	[ORDLOCK_K_TOKEN] = { .type = NLA_U64 },
};

static struct nla_policy olc_nl_failure_policy[ORDLOCK_F_MAX + 1] = {
	[ORDLOCK_F_REASON] = { .type = NLA_U32 },
	[ORDLOCK_F_ERRNO] = { .type = NLA_U32 },
	[ORDLOCK_F_PID] = { .type = NLA_U32 },
	[ORDLOCK_F_INDEX] = { .type = NLA_U32 },
	[ORDLOCK_F_KEY] = { .type = NLA_NESTED },
	[ORDLOCK_F_HELD] = { .type = NLA_NESTED },
	[ORDLOCK_F_HOLDER_MODE] = { .type = NLA_U32 },
	[ORDLOCK_F_CYCLE_LEN] = { .type = NLA_U32 },
};

static struct nla_policy olc_nl_entry_policy[ORDLOCK_E_MAX + 1] = {
	[ORDLOCK_E_OWNER_ID] = { .type = NLA_U64 },
	[ORDLOCK_E_PID] = { .type = NLA_U32 },
	[ORDLOCK_E_COMM] = { .type = NLA_STRING },
	[ORDLOCK_E_DOMAIN] = { .type = NLA_STRING },
	[ORDLOCK_E_KIND] = { .type = NLA_U32 },
	[ORDLOCK_E_HELD] = { .type = NLA_U32 },
	[ORDLOCK_E_KEY] = { .type = NLA_NESTED },
	[ORDLOCK_E_ROLE] = { .type = NLA_U32 },
	[ORDLOCK_E_POSITION] = { .type = NLA_U32 },
	[ORDLOCK_E_MODE] = { .type = NLA_U32 },
	[ORDLOCK_E_TOKEN] = { .type = NLA_U64 },
	[ORDLOCK_E_WAITED_US] = { .type = NLA_U64 },
	[ORDLOCK_E_BLOCKER] = { .type = NLA_NESTED },
	[ORDLOCK_E_EDGE] = { .type = NLA_U32 },
	[ORDLOCK_E_RANK] = { .type = NLA_U32 },
	[ORDLOCK_E_NAME] = { .type = NLA_STRING },
	[ORDLOCK_E_UID] = { .type = NLA_U32 },
	[ORDLOCK_E_LABEL] = { .type = NLA_STRING },
	[ORDLOCK_E_TAKEN] = { .type = NLA_NESTED },
	[ORDLOCK_E_TIME_NS] = { .type = NLA_U64 },
	[ORDLOCK_E_ORDER_KIND] = { .type = NLA_U32 },
	[ORDLOCK_E_COUNT] = { .type = NLA_U64 },
	[ORDLOCK_E_LEASE_LEFT_MS] = { .type = NLA_U64 },
	[ORDLOCK_E_CLUSTER_WAIT] = { .type = NLA_FLAG },
	[ORDLOCK_E_FAST] = { .type = NLA_U32 },
};

static struct nla_policy olc_nl_stats_policy[ORDLOCK_S_MAX + 1] = {
	[ORDLOCK_S_ACQUIRES ... ORDLOCK_S_MAX] = { .type = NLA_U64 },
};

int olc_nl_parse_genl(struct nlmsghdr *nlh, struct nlattr **tb, uint8_t *cmd)
{
	int ret = genlmsg_parse(nlh, 0, tb, ORDLOCK_A_MAX, olc_nl_top_policy);

	if (ret < 0)
		return olc_nl_proto("a message does not parse: %s", nl_geterror(ret));
	*cmd = ((struct genlmsghdr *)nlmsg_data(nlh))->cmd;
	return 0;
}

int olc_nl_parse_key(struct nlattr *nest, struct ordlock_key *k)
{
	struct nlattr *tb[ORDLOCK_K_MAX + 1];

	memset(k, 0, sizeof(*k));
	if (nla_parse_nested(tb, ORDLOCK_K_MAX, nest, olc_nl_key_policy) ||
	    !tb[ORDLOCK_K_RANK] || !tb[ORDLOCK_K_ID])
		return olc_nl_proto("a key nest without rank or id");
	k->rank = nla_get_u32(tb[ORDLOCK_K_RANK]);
	k->id = nla_get_u64(tb[ORDLOCK_K_ID]);
	if (tb[ORDLOCK_K_MODE])
		k->mode = (uint16_t)nla_get_u32(tb[ORDLOCK_K_MODE]);
	return 0;
}

int olc_nl_parse_failure(struct nlattr *nest, struct ordlock_failure *f)
{
	struct nlattr *tb[ORDLOCK_F_MAX + 1];

	memset(f, 0, sizeof(*f));
	f->index = ~0U;
	if (nla_parse_nested(tb, ORDLOCK_F_MAX, nest, olc_nl_failure_policy))
		return olc_nl_proto("the failure nest does not parse");
	if (tb[ORDLOCK_F_REASON])
		f->reason = nla_get_u32(tb[ORDLOCK_F_REASON]);
	if (tb[ORDLOCK_F_ERRNO])
		f->error = nla_get_u32(tb[ORDLOCK_F_ERRNO]);
	if (tb[ORDLOCK_F_PID])
		f->pid = nla_get_u32(tb[ORDLOCK_F_PID]);
	if (tb[ORDLOCK_F_INDEX])
		f->index = nla_get_u32(tb[ORDLOCK_F_INDEX]);
	if (tb[ORDLOCK_F_HOLDER_MODE])
		f->holder_mode = nla_get_u32(tb[ORDLOCK_F_HOLDER_MODE]);
	if (tb[ORDLOCK_F_CYCLE_LEN])
		f->cycle_len = nla_get_u32(tb[ORDLOCK_F_CYCLE_LEN]);
	if (tb[ORDLOCK_F_KEY] && olc_nl_parse_key(tb[ORDLOCK_F_KEY], &f->key))
		return -EPROTO;
	if (tb[ORDLOCK_F_HELD] && olc_nl_parse_key(tb[ORDLOCK_F_HELD], &f->held))
		return -EPROTO;
	return 0;
}

int olc_nl_parse_entry(struct nlattr *nest, struct olc_nl_entry *e)
{
	struct nlattr *tb[ORDLOCK_E_MAX + 1];
	int i;

	memset(e, 0, sizeof(*e));
	if (nla_parse_nested(tb, ORDLOCK_E_MAX, nest, olc_nl_entry_policy))
		return olc_nl_proto("an entry nest does not parse");
	for (i = 1; i <= ORDLOCK_E_MAX; i++)
		if (tb[i])
			e->present |= 1U << i;
	if (tb[ORDLOCK_E_OWNER_ID])
		e->owner_id = nla_get_u64(tb[ORDLOCK_E_OWNER_ID]);
	if (tb[ORDLOCK_E_PID])
		e->pid = nla_get_u32(tb[ORDLOCK_E_PID]);
	if (tb[ORDLOCK_E_COMM])
		nla_strlcpy(e->comm, tb[ORDLOCK_E_COMM], sizeof(e->comm));
	if (tb[ORDLOCK_E_DOMAIN])
		nla_strlcpy(e->domain, tb[ORDLOCK_E_DOMAIN], sizeof(e->domain));
	if (tb[ORDLOCK_E_KIND])
		e->kind = nla_get_u32(tb[ORDLOCK_E_KIND]);
	if (tb[ORDLOCK_E_HELD])
		e->held = nla_get_u32(tb[ORDLOCK_E_HELD]);
	if (tb[ORDLOCK_E_KEY] && olc_nl_parse_key(tb[ORDLOCK_E_KEY], &e->key))
		return -EPROTO;
	if (tb[ORDLOCK_E_ROLE])
		e->role = nla_get_u32(tb[ORDLOCK_E_ROLE]);
	if (tb[ORDLOCK_E_POSITION])
		e->position = nla_get_u32(tb[ORDLOCK_E_POSITION]);
	if (tb[ORDLOCK_E_MODE])
		e->mode = nla_get_u32(tb[ORDLOCK_E_MODE]);
	if (tb[ORDLOCK_E_TOKEN])
		e->token = nla_get_u64(tb[ORDLOCK_E_TOKEN]);
	if (tb[ORDLOCK_E_WAITED_US])
		e->waited_us = nla_get_u64(tb[ORDLOCK_E_WAITED_US]);
	if (tb[ORDLOCK_E_LEASE_LEFT_MS])
		e->lease_left_ms = nla_get_u64(tb[ORDLOCK_E_LEASE_LEFT_MS]);
	if (tb[ORDLOCK_E_EDGE])
		e->edge = nla_get_u32(tb[ORDLOCK_E_EDGE]);
	if (tb[ORDLOCK_E_RANK])
		e->rank = nla_get_u32(tb[ORDLOCK_E_RANK]);
	if (tb[ORDLOCK_E_NAME])
		nla_strlcpy(e->name, tb[ORDLOCK_E_NAME], sizeof(e->name));
	if (tb[ORDLOCK_E_UID])
		e->uid = nla_get_u32(tb[ORDLOCK_E_UID]);
	if (tb[ORDLOCK_E_LABEL])
		nla_strlcpy(e->label, tb[ORDLOCK_E_LABEL], sizeof(e->label));
	if (tb[ORDLOCK_E_TAKEN] && olc_nl_parse_key(tb[ORDLOCK_E_TAKEN], &e->taken))
		return -EPROTO;
	if (tb[ORDLOCK_E_TIME_NS])
		e->time_ns = nla_get_u64(tb[ORDLOCK_E_TIME_NS]);
	if (tb[ORDLOCK_E_ORDER_KIND])
		e->order_kind = nla_get_u32(tb[ORDLOCK_E_ORDER_KIND]);
	if (tb[ORDLOCK_E_COUNT])
		e->count = nla_get_u64(tb[ORDLOCK_E_COUNT]);
	if (tb[ORDLOCK_E_FAST])
		e->fast = nla_get_u32(tb[ORDLOCK_E_FAST]);
	if (tb[ORDLOCK_E_BLOCKER]) {
		struct olc_nl_entry b;

		if (olc_nl_parse_entry(tb[ORDLOCK_E_BLOCKER], &b))
			return -EPROTO;
		e->blocker.present = b.present;
		e->blocker.owner_id = b.owner_id;
		e->blocker.pid = b.pid;
		memcpy(e->blocker.comm, b.comm, sizeof(b.comm));
		e->blocker.mode = b.mode;
		e->blocker.fast = b.fast;
	}
	return 0;
}

int olc_nl_parse_cycle(struct nlattr *nest, struct ordlock_cycle_step *steps,
		       int *n)
{
	char first[ORDLOCK_DOMAIN_NAME_MAX] = "";
	struct nlattr *pos;
	int rem;

	*n = 0;
	nla_for_each_nested(pos, nest, rem) {
		struct ordlock_cycle_step *st;
		struct olc_nl_entry e;

		if (nla_type(pos) != ORDLOCK_A_ENTRY)
			return olc_nl_proto("attribute %d in a cycle", nla_type(pos));
		if (olc_nl_parse_entry(pos, &e))
			return -EPROTO;
		if (*n == ORDLOCK_CYCLE_MAX)
			return olc_nl_proto("a cycle of more than %d steps",
					    ORDLOCK_CYCLE_MAX);
		st = &steps[(*n)++];
		memset(st, 0, sizeof(*st));
		st->owner_id = e.owner_id;
		st->pid = e.pid;
		st->edge = OLC_NL_HAS(&e, ORDLOCK_E_EDGE) ? e.edge : ORDLOCK_EDGE_HARD;
		st->key = e.key;
		st->blocker_mode = e.mode;
		memcpy(st->comm, e.comm, sizeof(st->comm));
		/* the step's domain, when the kernel names it: the victim's? */
		if (OLC_NL_HAS(&e, ORDLOCK_E_DOMAIN)) {
			if (*n == 1)
				snprintf(first, sizeof(first), "%s", e.domain);
			else if (strcmp(first, e.domain))
				st->flags |= ORDLOCK_STEP_OTHER_DOMAIN;
		}
	}
	return 0;
}

int olc_nl_parse_outcome(struct nlattr **tb, uint8_t cmd, struct olc_nl_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	if (!tb[ORDLOCK_A_STATUS])
		return olc_nl_proto("a lock reply (command %u) without a status", cmd);
	o->status = nla_get_u32(tb[ORDLOCK_A_STATUS]);
	if (tb[ORDLOCK_A_COOKIE])
		o->cookie = nla_get_u64(tb[ORDLOCK_A_COOKIE]);
	if (tb[ORDLOCK_A_TOKEN]) {
		o->have_token = 1;
		o->token = nla_get_u64(tb[ORDLOCK_A_TOKEN]);
	}
	if (tb[ORDLOCK_A_ERRNO])
		o->error = nla_get_u32(tb[ORDLOCK_A_ERRNO]);
	if (tb[ORDLOCK_A_RESULT_FLAGS]) {
		o->have_result_flags = 1;
		o->result_flags = nla_get_u32(tb[ORDLOCK_A_RESULT_FLAGS]);
	}
	if (tb[ORDLOCK_A_FAILURE]) {
		o->have_failure = 1;
		if (olc_nl_parse_failure(tb[ORDLOCK_A_FAILURE], &o->failure))
			return -EPROTO;
	}
	if (tb[ORDLOCK_A_CYCLE] &&
	    olc_nl_parse_cycle(tb[ORDLOCK_A_CYCLE], o->cycle, &o->ncycle))
		return -EPROTO;
	return 0;
}

/* The edges of a POTENTIAL_DEADLOCK event */
static int olc_nl_parse_potential(struct nlattr **tb, struct olc_nl_event *ev)
{
	struct nlattr *pos;
	int rem;

	if (tb[ORDLOCK_A_POTENTIAL_KIND])
		ev->potential_kind = nla_get_u32(tb[ORDLOCK_A_POTENTIAL_KIND]);
	if (tb[ORDLOCK_A_ORDER_DROPPED])
		ev->order_dropped = nla_get_u64(tb[ORDLOCK_A_ORDER_DROPPED]);
	if (!tb[ORDLOCK_A_CYCLE])
		return olc_nl_proto("a potential deadlock without its edges");
	nla_for_each_nested(pos, tb[ORDLOCK_A_CYCLE], rem) {
		struct ordlock_order_edge *o;
		struct olc_nl_entry e;

		if (nla_type(pos) != ORDLOCK_A_ENTRY)
			return olc_nl_proto("attribute %d in a potential deadlock",
					    nla_type(pos));
		if (olc_nl_parse_entry(pos, &e))
			return -EPROTO;
		if (ev->npotential == OLC_NL_POTENTIAL_MAX)
			return olc_nl_proto("a potential deadlock of more than %d edges",
					    OLC_NL_POTENTIAL_MAX);
		o = &ev->potential[ev->npotential++];
		memset(o, 0, sizeof(*o));
		o->owner_id = e.owner_id;
		o->pid = e.pid;
		o->uid = e.uid;
		memcpy(o->comm, e.comm, sizeof(o->comm));
		memcpy(o->label, e.label, sizeof(o->label));
		o->kind = e.order_kind;
		o->held = e.key;
		o->taken = e.taken;
		o->from_rank = e.key.rank;
		o->to_rank = e.taken.rank;
		o->time_ns = e.time_ns;
		o->count = e.count;
	}
	return 0;
}

int olc_nl_parse_event(struct nlattr **tb, struct olc_nl_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	if (!tb[ORDLOCK_A_EVENT] || !tb[ORDLOCK_A_DOMAIN] || !tb[ORDLOCK_A_ENTRY])
		return olc_nl_proto("an event without type, domain or owner");
	ev->event = nla_get_u32(tb[ORDLOCK_A_EVENT]);
	nla_strlcpy(ev->domain, tb[ORDLOCK_A_DOMAIN], sizeof(ev->domain));
	if (olc_nl_parse_entry(tb[ORDLOCK_A_ENTRY], &ev->owner))
		return -EPROTO;
	if (tb[ORDLOCK_A_FAILURE]) {
		ev->have_failure = 1;
		if (olc_nl_parse_failure(tb[ORDLOCK_A_FAILURE], &ev->failure))
			return -EPROTO;
	}
	if (ev->event == ORDLOCK_EVENT_POTENTIAL_DEADLOCK)
		return olc_nl_parse_potential(tb, ev);
	if (tb[ORDLOCK_A_CYCLE] &&
	    olc_nl_parse_cycle(tb[ORDLOCK_A_CYCLE], ev->cycle, &ev->ncycle))
		return -EPROTO;
	return 0;
}

const char *olc_nl_event_name(uint32_t event)
{
	switch (event) {
	case ORDLOCK_EVENT_DEADLOCK:
		return "deadlock";
	case ORDLOCK_EVENT_TIMEOUT:
		return "timeout";
	case ORDLOCK_EVENT_ORDER:
		return "order";
	case ORDLOCK_EVENT_LIMIT:
		return "limit";
	case ORDLOCK_EVENT_OWNER_DIED:
		return "owner-died";
	case ORDLOCK_EVENT_POTENTIAL_DEADLOCK:
		return "potential-deadlock";
	case ORDLOCK_EVENT_REVOKED:
		return "revoked";
	default:
		return NULL;
	}
}

/* --- domains and counters ------------------------------------------------------- */

int olc_nl_parse_domain(struct nlattr **tb, struct olc_nl_domain *d)
{
	struct nlattr *pos;
	int rem;

	memset(d, 0, sizeof(*d));
	if (!tb[ORDLOCK_A_DOMAIN] || !tb[ORDLOCK_A_POLICY] ||
	    !tb[ORDLOCK_A_DETECT_DELAY_MS])
		return olc_nl_proto("a domain reply without domain, policy or delay");
	nla_strlcpy(d->name, tb[ORDLOCK_A_DOMAIN], sizeof(d->name));
	d->policy = nla_get_u32(tb[ORDLOCK_A_POLICY]);
	d->detect_delay_ms = nla_get_u32(tb[ORDLOCK_A_DETECT_DELAY_MS]);
	if (tb[ORDLOCK_A_STRICT]) {
		d->have_strict = 1;
		d->strict = nla_get_u32(tb[ORDLOCK_A_STRICT]);
	}
	if (tb[ORDLOCK_A_MAX_HOLD_MS])
		d->max_hold_ms = nla_get_u32(tb[ORDLOCK_A_MAX_HOLD_MS]);
	if (tb[ORDLOCK_A_CLUSTER])
		d->cluster = nla_get_u32(tb[ORDLOCK_A_CLUSTER]);
	if (tb[ORDLOCK_A_FASTPATH])
		d->fastpath = nla_get_u32(tb[ORDLOCK_A_FASTPATH]);
	if (d->fastpath && tb[ORDLOCK_A_FASTPATH_UID])
		d->fastpath_uid = nla_get_u32(tb[ORDLOCK_A_FASTPATH_UID]);
	if (tb[ORDLOCK_A_XD_STATE]) {
		d->have_xd = 1;
		d->xd_state = nla_get_u32(tb[ORDLOCK_A_XD_STATE]);
		if (tb[ORDLOCK_A_XD_MEMBERS])
			d->xd_members = nla_get_u32(tb[ORDLOCK_A_XD_MEMBERS]);
		if (tb[ORDLOCK_A_XD_PID])
			d->xd_pid = nla_get_u32(tb[ORDLOCK_A_XD_PID]);
	}
	if (!tb[ORDLOCK_A_RANK_NAMES])
		return 0;
	d->have_names = 1;
	nla_for_each_nested(pos, tb[ORDLOCK_A_RANK_NAMES], rem) {
		struct olc_rank_name *r;
		struct olc_nl_entry e;

		if (olc_nl_parse_entry(pos, &e))
			return -EPROTO;
		if (!OLC_NL_HAS(&e, ORDLOCK_E_RANK) || !OLC_NL_HAS(&e, ORDLOCK_E_NAME) ||
		    d->names.n == ORDLOCK_RANK_NAMES_MAX)
			return olc_nl_proto("a bad rank name entry");
		r = &d->names.v[d->names.n++];
		r->rank = e.rank;
		memcpy(r->name, e.name, sizeof(r->name));
	}
	return 0;
}

/* A request of @cmd naming @domain */
static struct nl_msg *olc_nl_domain_msg(struct olc_nl *nl, uint8_t cmd,
					const char *domain)
{
	struct nl_msg *msg = olc_nl_msg(nl, cmd, 0, 0);

	if (msg && nla_put_string(msg, ORDLOCK_A_DOMAIN, domain)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int olc_nl_domain_get(struct olc_nl *nl, const char *domain,
		      struct olc_nl_domain *out)
{
	struct nl_msg *msg = olc_nl_domain_msg(nl, ORDLOCK_CMD_DOMAIN_GET, domain);
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct olc_nl_domain tmp;
	int ret;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!msg)
		return -ENOMEM;
	ret = olc_nl_request(nl, msg, tb);
	return ret ? ret : olc_nl_parse_domain(tb, out ? out : &tmp);
}

int olc_nl_domain_set(struct olc_nl *nl, const char *domain, long policy,
		      long delay_ms, long max_hold_ms,
		      const struct olc_rank_names *names,
		      struct olc_nl_domain *out)
{
	return olc_nl_domain_set_all(nl, domain, policy, delay_ms, -1, max_hold_ms,
				     -1, names, out);
}

int olc_nl_domain_set_all(struct olc_nl *nl, const char *domain, long policy,
			  long delay_ms, long strict, long max_hold_ms,
			  long cluster, const struct olc_rank_names *names,
			  struct olc_nl_domain *out)
{
	return olc_nl_domain_set_fast(nl, domain, policy, delay_ms, strict,
				      max_hold_ms, cluster, -1, -1, names, out);
}

int olc_nl_domain_set_fast(struct olc_nl *nl, const char *domain, long policy,
			   long delay_ms, long strict, long max_hold_ms,
			   long cluster, long fastpath, long fast_uid,
			   const struct olc_rank_names *names,
			   struct olc_nl_domain *out)
{
	struct nl_msg *msg = olc_nl_domain_msg(nl, ORDLOCK_CMD_DOMAIN_SET, domain);
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct olc_nl_domain tmp;
	struct nlattr *nest, *entry;
	unsigned int i;
	int ret;

	if (out)
		memset(out, 0, sizeof(*out));
	if (!msg)
		return -ENOMEM;
	if ((policy >= 0 && nla_put_u32(msg, ORDLOCK_A_POLICY, (uint32_t)policy)) ||
	    (delay_ms >= 0 &&
	     nla_put_u32(msg, ORDLOCK_A_DETECT_DELAY_MS, (uint32_t)delay_ms)) ||
	    (strict >= 0 && nla_put_u32(msg, ORDLOCK_A_STRICT, (uint32_t)strict)) ||
	    (max_hold_ms >= 0 &&
	     nla_put_u32(msg, ORDLOCK_A_MAX_HOLD_MS, (uint32_t)max_hold_ms)) ||
	    (cluster >= 0 && nla_put_u32(msg, ORDLOCK_A_CLUSTER, (uint32_t)cluster)) ||
	    (fastpath >= 0 && nla_put_u32(msg, ORDLOCK_A_FASTPATH, (uint32_t)fastpath)) ||
	    (fast_uid >= 0 && nla_put_u32(msg, ORDLOCK_A_FASTPATH_UID, (uint32_t)fast_uid)))
		goto full;
	if (names) {
		nest = olc_nl_nest_start(msg, ORDLOCK_A_RANK_NAMES);
		if (!nest)
			goto full;
		for (i = 0; i < names->n; i++) {
			entry = olc_nl_nest_start(msg, ORDLOCK_A_ENTRY);
			if (!entry ||
			    nla_put_u32(msg, ORDLOCK_E_RANK, names->v[i].rank) ||
			    nla_put_string(msg, ORDLOCK_E_NAME, names->v[i].name))
				goto full;
			nla_nest_end(msg, entry);
		}
		/* no names: an empty nest removes them */
		nla_nest_end_keep_empty(msg, nest);
	}
	ret = olc_nl_request(nl, msg, tb);
	return ret ? ret : olc_nl_parse_domain(tb, out ? out : &tmp);
full:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static const char *const olc_nl_stat_names[ORDLOCK_S_MAX + 1] = {
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
	[ORDLOCK_S_REVOCATIONS] = "revocations",
};

/* the order of the debugfs file: gauges first, then the counters */
const int olc_nl_stat_order[OLC_NL_NSTATS] = {
	ORDLOCK_S_OWNERS, ORDLOCK_S_PEAK_OWNERS, ORDLOCK_S_RESOURCES,
	ORDLOCK_S_PEAK_RESOURCES, ORDLOCK_S_WAITERS, ORDLOCK_S_PEAK_WAITERS,
	ORDLOCK_S_ACQUIRES, ORDLOCK_S_CONTENDED, ORDLOCK_S_TIMEOUTS,
	ORDLOCK_S_TRY_FAILURES, ORDLOCK_S_ORDER_VIOLATIONS, ORDLOCK_S_DEADLOCKS,
	ORDLOCK_S_UPGRADE_DEADLOCKS, ORDLOCK_S_CONVERSIONS, ORDLOCK_S_SIGNALS,
	ORDLOCK_S_LIMITS, ORDLOCK_S_RELEASES, ORDLOCK_S_REVOCATIONS,
};

const char *olc_nl_stat_name(int attr)
{
	return attr >= 0 && attr <= ORDLOCK_S_MAX ? olc_nl_stat_names[attr] : NULL;
}

int olc_nl_parse_stats(struct nlattr **tb, struct olc_nl_stats *st)
{
	struct nlattr *s[ORDLOCK_S_MAX + 1];
	int i;

	memset(st, 0, sizeof(*st));
	if (tb[ORDLOCK_A_DOMAIN])
		nla_strlcpy(st->domain, tb[ORDLOCK_A_DOMAIN], sizeof(st->domain));
	if (tb[ORDLOCK_A_POLICY]) {
		st->have_policy = 1;
		st->policy = nla_get_u32(tb[ORDLOCK_A_POLICY]);
	}
	if (tb[ORDLOCK_A_DETECT_DELAY_MS]) {
		st->have_delay = 1;
		st->detect_delay_ms = nla_get_u32(tb[ORDLOCK_A_DETECT_DELAY_MS]);
	}
	if (!tb[ORDLOCK_A_STATS] ||
	    nla_parse_nested(s, ORDLOCK_S_MAX, tb[ORDLOCK_A_STATS],
			     olc_nl_stats_policy))
		return olc_nl_proto("a GET_STATS reply without a valid ORDLOCK_A_STATS");
	for (i = ORDLOCK_S_ACQUIRES; i <= ORDLOCK_S_MAX; i++) {
		if (!s[i])
			continue;
		st->present |= 1U << i;
		st->v[i] = nla_get_u64(s[i]);
	}
	return 0;
}

int olc_nl_get_stats(struct olc_nl *nl, const char *domain,
		     struct olc_nl_stats *out)
{
	struct nl_msg *msg = olc_nl_domain_msg(nl, ORDLOCK_CMD_GET_STATS, domain);
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	int ret;

	memset(out, 0, sizeof(*out));
	if (!msg)
		return -ENOMEM;
	ret = olc_nl_request(nl, msg, tb);
	return ret ? ret : olc_nl_parse_stats(tb, out);
}
