// SPDX-License-Identifier: GPL-2.0
/* A libnl-genl-3 client of the "ordlock" family for the tests: see nltest.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "barrier.h"
#include "libordlock.h"
#include "nltest.h"
#include "tap.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Room for the largest datagram: a dump skb is at most 32 KiB */
#define NLT_BUF_SIZE	(256 * 1024)
/* Room for the largest request we build (1025 keys and change) */
#define NLT_MSG_SIZE	(128 * 1024)

/* A message kept for later: a RESULT or an event */
struct nlt_msg {
	struct nlt_msg *next;
	uint8_t cmd;
	struct nlmsghdr hdr[];
};

static struct nla_policy nlt_top_policy[ORDLOCK_A_MAX + 1] = {
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
};

static struct nla_policy nlt_key_policy[ORDLOCK_K_MAX + 1] = {
	[ORDLOCK_K_RANK] = { .type = NLA_U32 },
	[ORDLOCK_K_ID] = { .type = NLA_U64 },
	[ORDLOCK_K_MODE] = { .type = NLA_U32 },
};

static struct nla_policy nlt_failure_policy[ORDLOCK_F_MAX + 1] = {
	[ORDLOCK_F_REASON] = { .type = NLA_U32 },
	[ORDLOCK_F_ERRNO] = { .type = NLA_U32 },
	[ORDLOCK_F_PID] = { .type = NLA_U32 },
	[ORDLOCK_F_INDEX] = { .type = NLA_U32 },
	[ORDLOCK_F_KEY] = { .type = NLA_NESTED },
	[ORDLOCK_F_HELD] = { .type = NLA_NESTED },
	[ORDLOCK_F_HOLDER_MODE] = { .type = NLA_U32 },
	[ORDLOCK_F_CYCLE_LEN] = { .type = NLA_U32 },
};

static struct nla_policy nlt_entry_policy[ORDLOCK_E_MAX + 1] = {
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
};

static struct nla_policy nlt_stats_policy[ORDLOCK_S_MAX + 1];

static int nlt_nle_errno(int nle)
{
	switch (-nle) {
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
	default:
		return -EIO;
	}
}

/* Set up @fd (a netlink socket, or -1 for a new one) as a socket of the family */
static struct nlt *nlt_setup(int fd, int *err)
{
	struct nlt *s = calloc(1, sizeof(*s));
	int one = 1, ret;

	if (!s) {
		ret = -ENOMEM;
		goto fail;
	}
	s->buflen = NLT_BUF_SIZE;
	s->buf = malloc(s->buflen);
	s->sk = nl_socket_alloc();
	if (!s->buf || !s->sk) {
		ret = -ENOMEM;
		goto fail;
	}
	if (fd < 0)
		ret = genl_connect(s->sk);
	else
		ret = nl_socket_set_fd(s->sk, NETLINK_GENERIC, fd);
	if (ret < 0) {
		diag("connecting a generic netlink socket: %s", nl_geterror(ret));
		ret = nlt_nle_errno(ret);
		goto fail;
	}
	/* libnl waits for the controller's acks itself while resolving */
	ret = genl_ctrl_resolve(s->sk, ORDLOCK_GENL_NAME);
	if (ret < 0) {
		ret = nlt_nle_errno(ret);
		goto fail;
	}
	s->family = ret;
	ret = genl_ctrl_resolve_grp(s->sk, ORDLOCK_GENL_NAME,
				    ORDLOCK_GENL_MCGRP_EVENTS);
	if (ret < 0) {
		diag("resolving group %s: %s", ORDLOCK_GENL_MCGRP_EVENTS,
		     nl_geterror(ret));
		ret = nlt_nle_errno(ret);
		goto fail;
	}
	s->events_grp = ret;
	/* from now on we ask for acks explicitly and receive ourselves */
	nl_socket_disable_auto_ack(s->sk);
	if (setsockopt(nl_socket_get_fd(s->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		       &one, sizeof(one)) ||
	    setsockopt(nl_socket_get_fd(s->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		       &one, sizeof(one))) {
		ret = -errno;
		diag("setsockopt(NETLINK_EXT_ACK): %s", strerror(errno));
		goto fail;
	}
	s->port = nl_socket_get_local_port(s->sk);
	return s;

fail:
	if (s) {
		if (s->sk)
			nl_socket_free(s->sk);
		free(s->buf);
		free(s);
	}
	if (err)
		*err = ret;
	return NULL;
}

struct nlt *nlt_open(int *err)
{
	return nlt_setup(-1, err);
}

struct nlt *nlt_open_fd(int fd, int *err)
{
	return nlt_setup(fd, err);
}

struct nlt *nlt_must_open(void)
{
	int err = 0;
	struct nlt *s = nlt_open(&err);

	if (!s)
		bail_out("cannot open the ordlock generic netlink family: %s",
			 strerror(-err));
	return s;
}

void nlt_close(struct nlt *s)
{
	struct nlt_msg *m, *next;

	if (!s)
		return;
	for (m = s->stash_head; m; m = next) {
		next = m->next;
		free(m);
	}
	free(s->reply);
	nl_socket_free(s->sk);
	free(s->buf);
	free(s);
}

int nlt_fd(const struct nlt *s)
{
	return nl_socket_get_fd(s->sk);
}

unsigned int nlt_pending(const struct nlt *s)
{
	const struct nlt_msg *m;
	unsigned int n = 0;

	for (m = s->stash_head; m; m = m->next)
		n++;
	return n;
}

const char *nlt_extack_str(const struct nlt *s)
{
	static char buf[512];
	int len;

	len = snprintf(buf, sizeof(buf), "%s: \"%s\"",
		       s->ext.error ? strerror(s->ext.error) : "no error",
		       s->ext.msg);
	if (s->ext.have_off && len < (int)sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - len, " (offset %u)",
				s->ext.off);
	if (s->ext.have_miss && len < (int)sizeof(buf))
		snprintf(buf + len, sizeof(buf) - len,
			 " (missing attribute %u)", s->ext.miss_type);
	return buf;
}

/* Messages */

struct nl_msg *nlt_msg_new(struct nlt *s, uint8_t cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc_size(NLT_MSG_SIZE);

	if (!msg)
		bail_out("nlmsg_alloc_size: out of memory");
	if (!(flags & NLM_F_DUMP))
		flags |= NLM_F_ACK;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, s->family, 0, flags,
			 cmd, ORDLOCK_GENL_VERSION))
		bail_out("genlmsg_put failed");
	return msg;
}

uint32_t nlt_offset(struct nl_msg *msg)
{
	return NLMSG_ALIGN(nlmsg_hdr(msg)->nlmsg_len);
}

struct nlattr *nlt_nest_start(struct nl_msg *msg, int type)
{
	struct nlattr *start = (struct nlattr *)((char *)nlmsg_hdr(msg) +
						 nlt_offset(msg));

	/* an empty attribute, its length fixed by nla_nest_end() */
	if (nla_put(msg, type | NLA_F_NESTED, 0, NULL) < 0)
		return NULL;
	return start;
}

int nlt_put_key(struct nl_msg *msg, int type, const struct ordlock_key *k)
{
	struct nlattr *nest = nlt_nest_start(msg, type);

	if (!nest ||
	    nla_put_u32(msg, ORDLOCK_K_RANK, k->rank) ||
	    nla_put_u64(msg, ORDLOCK_K_ID, k->id) ||
	    (k->mode && nla_put_u32(msg, ORDLOCK_K_MODE, k->mode)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int nlt_put_keys(struct nl_msg *msg, const struct ordlock_key *keys,
			unsigned int n)
{
	struct nlattr *nest = nlt_nest_start(msg, ORDLOCK_A_KEYS);
	unsigned int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++)
		if (nlt_put_key(msg, ORDLOCK_A_KEY, &keys[i]))
			return -EMSGSIZE;
	nla_nest_end_keep_empty(msg, nest);
	return 0;
}

/* Receiving */

static void nlt_stash(struct nlt *s, struct nlmsghdr *nlh, uint8_t cmd)
{
	struct nlt_msg *m = malloc(sizeof(*m) + nlh->nlmsg_len);

	if (!m)
		bail_out("nlt_stash: out of memory");
	m->next = NULL;
	m->cmd = cmd;
	memcpy(m->hdr, nlh, nlh->nlmsg_len);
	if (s->stash_tail)
		s->stash_tail->next = m;
	else
		s->stash_head = m;
	s->stash_tail = m;
}

/* Take the first kept message of @cmd out of the list (NULL: none) */
static struct nlt_msg *nlt_unstash(struct nlt *s, uint8_t cmd)
{
	struct nlt_msg *m, *prev = NULL;

	for (m = s->stash_head; m; prev = m, m = m->next) {
		if (m->cmd != cmd)
			continue;
		if (prev)
			prev->next = m->next;
		else
			s->stash_head = m->next;
		if (s->stash_tail == m)
			s->stash_tail = prev;
		m->next = NULL;
		return m;
	}
	return NULL;
}

/* One datagram into s->buf before @deadline (ms): its length or -errno */
static int nlt_recv(struct nlt *s, uint64_t deadline)
{
	int fd = nlt_fd(s);
	ssize_t n;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ms();
		int ret;

		ret = poll(&p, 1, now >= deadline ? 0 : (int)(deadline - now));
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!ret)
			return -ETIMEDOUT;
		n = recv(fd, s->buf, s->buflen, MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if ((size_t)n > s->buflen) {
			diag("nlt: a datagram of %zd bytes was truncated", n);
			return -EMSGSIZE;
		}
		return (int)n;
	}
}

static void nlt_parse_extack(struct nlt *s, struct nlmsghdr *nlh)
{
	struct nlmsgerr *e = nlmsg_data(nlh);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = sizeof(*e);
	int len;

	memset(&s->ext, 0, sizeof(s->ext));
	s->ext.error = -e->error;
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
		nla_strlcpy(s->ext.msg, tb[NLMSGERR_ATTR_MSG], sizeof(s->ext.msg));
	if (tb[NLMSGERR_ATTR_OFFS]) {
		s->ext.have_off = 1;
		s->ext.off = nla_get_u32(tb[NLMSGERR_ATTR_OFFS]);
	}
	if (tb[NLMSGERR_ATTR_MISS_TYPE]) {
		s->ext.have_miss = 1;
		s->ext.miss_type = nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);
	}
}

typedef int (*nlt_msg_fn)(struct nlt *s, struct nlmsghdr *nlh, void *arg);

/*
 * Wait until the request @seq ends: its ack, its error, or the end of its
 * dump; call @fn for each of its messages of the family. Messages not of
 * @seq (RESULTs, events) are kept. Return 0, the negative errno of the
 * request, -ETIMEDOUT, or the first error of @fn.
 */
static int nlt_transact(struct nlt *s, uint32_t seq, nlt_msg_fn fn, void *arg)
{
	uint64_t deadline = now_ms() + NLT_REPLY_MS;
	int fn_err = 0, ret = 1;

	while (ret == 1) {
		struct nlmsghdr *nlh;
		int len = nlt_recv(s, deadline);

		if (len < 0) {
			diag("nlt: no end of request %u: %s", seq,
			     strerror(-len));
			return len;
		}
		nlh = (struct nlmsghdr *)s->buf;
		for (; nlmsg_ok(nlh, len); nlh = nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = nlmsg_data(nlh);

				if (nlh->nlmsg_seq != seq)
					continue;
				nlt_parse_extack(s, nlh);
				ret = e->error;
				continue;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				if (nlh->nlmsg_seq != seq)
					continue;
				ret = 0;
				if (nlmsg_datalen(nlh) >= (int)sizeof(int) &&
				    *(int *)nlmsg_data(nlh) < 0) {
					ret = *(int *)nlmsg_data(nlh);
					memset(&s->ext, 0, sizeof(s->ext));
					s->ext.error = -ret;
				}
				continue;
			}
			if (nlh->nlmsg_type != s->family ||
			    nlmsg_datalen(nlh) < (int)GENL_HDRLEN)
				continue;
			{
				struct genlmsghdr *g = nlmsg_data(nlh);

				if (g->cmd == ORDLOCK_CMD_RESULT ||
				    g->cmd == ORDLOCK_CMD_EVENT) {
					nlt_stash(s, nlh, g->cmd);
					continue;
				}
			}
			if (nlh->nlmsg_seq != seq || ret != 1)
				continue;
			if (fn && !fn_err)
				fn_err = fn(s, nlh, arg);
		}
	}
	return ret ? ret : fn_err;
}

static int nlt_keep_reply(struct nlt *s, struct nlmsghdr *nlh, void *arg)
{
	struct nlmsghdr **out = arg;

	(void)s;
	if (*out)
		return 0;
	*out = malloc(nlh->nlmsg_len);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, nlh, nlh->nlmsg_len);
	return 0;
}

static int nlt_send(struct nlt *s, struct nl_msg *msg, uint32_t *seq)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int ret;

	memset(&s->ext, 0, sizeof(s->ext));
	if (s->use_write) {
		nl_complete_msg(s->sk, msg);
		ret = write(nlt_fd(s), nlh, nlh->nlmsg_len);
		if (ret < 0) {
			ret = -errno;
			diag("write to a netlink socket: %s", strerror(errno));
			nlmsg_free(msg);
			return ret;
		}
	} else {
		ret = nl_send_auto(s->sk, msg);
		if (ret < 0) {
			diag("nl_send_auto: %s", nl_geterror(ret));
			nlmsg_free(msg);
			return nlt_nle_errno(ret);
		}
	}
	*seq = nlh->nlmsg_seq;
	nlmsg_free(msg);
	return 0;
}

int nlt_send_only(struct nlt *s, struct nl_msg *msg, uint32_t *seq)
{
	return nlt_send(s, msg, seq);
}

int nlt_request(struct nlt *s, struct nl_msg *msg,
		struct nlattr *tb[ORDLOCK_A_MAX + 1])
{
	struct nlmsghdr *reply = NULL;
	uint32_t seq;
	int ret;

	ret = nlt_send(s, msg, &seq);
	if (ret)
		return ret;
	ret = nlt_transact(s, seq, nlt_keep_reply, &reply);
	/* @tb points into the reply: keep it until the next request */
	free(s->reply);
	s->reply = reply;
	if (ret || !tb)
		return ret;
	if (!reply) {
		diag("nlt: request %u was acked without a reply", seq);
		return -EPROTO;
	}
	ret = genlmsg_parse(reply, 0, tb, ORDLOCK_A_MAX, nlt_top_policy);
	if (ret < 0) {
		diag("nlt: reply does not parse: %s", nl_geterror(ret));
		return -EPROTO;
	}
	return 0;
}

/* Parsers */

static int nlt_parse_key(struct nlattr *nest, struct ordlock_key *k)
{
	struct nlattr *tb[ORDLOCK_K_MAX + 1];

	memset(k, 0, sizeof(*k));
	if (nla_parse_nested(tb, ORDLOCK_K_MAX, nest, nlt_key_policy) ||
	    !tb[ORDLOCK_K_RANK] || !tb[ORDLOCK_K_ID]) {
		diag("nlt: a key nest without rank or id");
		return -EPROTO;
	}
	k->rank = nla_get_u32(tb[ORDLOCK_K_RANK]);
	k->id = nla_get_u64(tb[ORDLOCK_K_ID]);
	if (tb[ORDLOCK_K_MODE])
		k->mode = (uint16_t)nla_get_u32(tb[ORDLOCK_K_MODE]);
	return 0;
}

static int nlt_parse_failure(struct nlattr *nest, struct ordlock_failure *f)
{
	struct nlattr *tb[ORDLOCK_F_MAX + 1];

	memset(f, 0, sizeof(*f));
	if (nla_parse_nested(tb, ORDLOCK_F_MAX, nest, nlt_failure_policy)) {
		diag("nlt: the failure nest does not parse");
		return -EPROTO;
	}
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
	if (tb[ORDLOCK_F_KEY] && nlt_parse_key(tb[ORDLOCK_F_KEY], &f->key))
		return -EPROTO;
	if (tb[ORDLOCK_F_HELD] && nlt_parse_key(tb[ORDLOCK_F_HELD], &f->held))
		return -EPROTO;
	return 0;
}

int nlt_parse_entry(struct nlattr *nest, struct nlt_entry *e)
{
	struct nlattr *tb[ORDLOCK_E_MAX + 1];
	int i;

	memset(e, 0, sizeof(*e));
	if (nla_parse_nested(tb, ORDLOCK_E_MAX, nest, nlt_entry_policy)) {
		diag("nlt: an entry nest does not parse");
		return -EPROTO;
	}
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
	if (tb[ORDLOCK_E_KEY] && nlt_parse_key(tb[ORDLOCK_E_KEY], &e->key))
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
	if (tb[ORDLOCK_E_EDGE])
		e->edge = nla_get_u32(tb[ORDLOCK_E_EDGE]);
	if (tb[ORDLOCK_E_RANK])
		e->rank = nla_get_u32(tb[ORDLOCK_E_RANK]);
	if (tb[ORDLOCK_E_NAME])
		nla_strlcpy(e->name, tb[ORDLOCK_E_NAME], sizeof(e->name));
	if (tb[ORDLOCK_E_UID])
		e->uid = nla_get_u32(tb[ORDLOCK_E_UID]);
	if (tb[ORDLOCK_E_BLOCKER]) {
		struct nlt_entry b;

		if (nlt_parse_entry(tb[ORDLOCK_E_BLOCKER], &b))
			return -EPROTO;
		e->blocker.present = b.present;
		e->blocker.owner_id = b.owner_id;
		e->blocker.pid = b.pid;
		memcpy(e->blocker.comm, b.comm, sizeof(b.comm));
		e->blocker.mode = b.mode;
	}
	return 0;
}

static int nlt_parse_cycle(struct nlattr *nest, struct ordlock_cycle_step *steps,
			   int *n)
{
	struct nlattr *pos;
	int rem;

	*n = 0;
	nla_for_each_nested(pos, nest, rem) {
		struct ordlock_cycle_step *st;
		struct nlt_entry e;

		if (nla_type(pos) != ORDLOCK_A_ENTRY) {
			diag("nlt: attribute %d in a cycle", nla_type(pos));
			return -EPROTO;
		}
		if (nlt_parse_entry(pos, &e))
			return -EPROTO;
		if (*n == ORDLOCK_CYCLE_MAX) {
			diag("nlt: a cycle of more than %d steps",
			     ORDLOCK_CYCLE_MAX);
			return -EPROTO;
		}
		st = &steps[(*n)++];
		memset(st, 0, sizeof(*st));
		st->owner_id = e.owner_id;
		st->pid = e.pid;
		st->edge = e.edge;
		st->key = e.key;
		st->blocker_mode = e.mode;
		memcpy(st->comm, e.comm, sizeof(st->comm));
	}
	return 0;
}

int nlt_parse_outcome(struct nlattr **tb, uint8_t cmd, struct nlt_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	if (!tb[ORDLOCK_A_STATUS]) {
		diag("nlt: a lock reply (command %u) without a status", cmd);
		return -EPROTO;
	}
	o->status = nla_get_u32(tb[ORDLOCK_A_STATUS]);
	if (tb[ORDLOCK_A_COOKIE])
		o->cookie = nla_get_u64(tb[ORDLOCK_A_COOKIE]);
	if (tb[ORDLOCK_A_TOKEN]) {
		o->have_token = 1;
		o->token = nla_get_u64(tb[ORDLOCK_A_TOKEN]);
	}
	if (tb[ORDLOCK_A_ERRNO])
		o->error = nla_get_u32(tb[ORDLOCK_A_ERRNO]);
	if (tb[ORDLOCK_A_FAILURE]) {
		o->have_failure = 1;
		if (nlt_parse_failure(tb[ORDLOCK_A_FAILURE], &o->failure))
			return -EPROTO;
	}
	if (tb[ORDLOCK_A_CYCLE] &&
	    nlt_parse_cycle(tb[ORDLOCK_A_CYCLE], o->cycle, &o->ncycle))
		return -EPROTO;
	return 0;
}

static int nlt_parse_genl(struct nlmsghdr *nlh, struct nlattr **tb,
			  uint8_t *cmd)
{
	int ret = genlmsg_parse(nlh, 0, tb, ORDLOCK_A_MAX, nlt_top_policy);

	if (ret < 0) {
		diag("nlt: message does not parse: %s", nl_geterror(ret));
		return -EPROTO;
	}
	*cmd = ((struct genlmsghdr *)nlmsg_data(nlh))->cmd;
	return 0;
}

/* Lock requests */

static int nlt_lock_request(struct nlt *s, struct nl_msg *msg,
			    struct nlt_outcome *out)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct nlt_outcome tmp;
	uint8_t cmd = ((struct genlmsghdr *)nlmsg_data(nlmsg_hdr(msg)))->cmd;
	int ret;

	ret = nlt_request(s, msg, tb);
	if (ret)
		return ret;
	return nlt_parse_outcome(tb, cmd, out ? out : &tmp);
}

struct nl_msg *nlt_acquire_msg(struct nlt *s, const char *domain,
			       const struct ordlock_key *keys, unsigned int n,
			       uint64_t timeout_ns, uint32_t flags, uint64_t cookie)
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_ACQUIRE, 0);

	if ((domain && nla_put_string(msg, ORDLOCK_A_DOMAIN, domain)) ||
	    nlt_put_keys(msg, keys, n) ||
	    (timeout_ns && nla_put_u64(msg, ORDLOCK_A_TIMEOUT_NS, timeout_ns)) ||
	    (flags && nla_put_u32(msg, ORDLOCK_A_FLAGS, flags)) ||
	    nla_put_u64(msg, ORDLOCK_A_COOKIE, cookie)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int nlt_acquire(struct nlt *s, const char *domain,
		const struct ordlock_key *keys, unsigned int n,
		uint64_t timeout_ns, uint32_t flags, uint64_t cookie,
		struct nlt_outcome *out)
{
	struct nl_msg *msg = nlt_acquire_msg(s, domain, keys, n, timeout_ns,
					     flags, cookie);

	return msg ? nlt_lock_request(s, msg, out) : -EMSGSIZE;
}

struct nl_msg *nlt_convert_msg(struct nlt *s, struct ordlock_key key,
			       uint64_t timeout_ns, uint32_t flags, uint64_t cookie)
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_CONVERT, 0);

	if (nlt_put_keys(msg, &key, 1) ||
	    (timeout_ns && nla_put_u64(msg, ORDLOCK_A_TIMEOUT_NS, timeout_ns)) ||
	    (flags && nla_put_u32(msg, ORDLOCK_A_FLAGS, flags)) ||
	    nla_put_u64(msg, ORDLOCK_A_COOKIE, cookie)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int nlt_convert(struct nlt *s, struct ordlock_key key, uint64_t timeout_ns,
		uint32_t flags, uint64_t cookie, struct nlt_outcome *out)
{
	struct nl_msg *msg = nlt_convert_msg(s, key, timeout_ns, flags, cookie);

	return msg ? nlt_lock_request(s, msg, out) : -EMSGSIZE;
}

struct nl_msg *nlt_release_msg(struct nlt *s, const struct ordlock_key *keys,
			       unsigned int n)
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_RELEASE, 0);

	if (n ? nlt_put_keys(msg, keys, n) :
		nla_put_u32(msg, ORDLOCK_A_FLAGS, ORDLOCK_RELEASE_ALL)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int nlt_release(struct nlt *s, const struct ordlock_key *keys, unsigned int n,
		struct nlt_outcome *out)
{
	struct nl_msg *msg = nlt_release_msg(s, keys, n);

	return msg ? nlt_lock_request(s, msg, out) : -EMSGSIZE;
}

int nlt_cancel(struct nlt *s, uint64_t cookie, struct nlt_outcome *out)
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_CANCEL, 0);

	if (nla_put_u64(msg, ORDLOCK_A_COOKIE, cookie)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlt_lock_request(s, msg, out);
}

/* Read what has arrived, or wait until @deadline for one datagram; keep it */
static int nlt_pump(struct nlt *s, uint64_t deadline)
{
	struct nlmsghdr *nlh;
	int len = nlt_recv(s, deadline);

	if (len < 0)
		return len;
	nlh = (struct nlmsghdr *)s->buf;
	for (; nlmsg_ok(nlh, len); nlh = nlmsg_next(nlh, &len)) {
		struct genlmsghdr *g = nlmsg_data(nlh);

		if (nlh->nlmsg_type != s->family ||
		    nlmsg_datalen(nlh) < (int)GENL_HDRLEN)
			continue;
		if (g->cmd == ORDLOCK_CMD_RESULT || g->cmd == ORDLOCK_CMD_EVENT)
			nlt_stash(s, nlh, g->cmd);
		else
			diag("nlt: unexpected message, command %u, seq %u",
			     g->cmd, nlh->nlmsg_seq);
	}
	return 0;
}

int nlt_wait_result(struct nlt *s, unsigned int timeout_ms,
		    struct nlt_outcome *out)
{
	uint64_t deadline = now_ms() + timeout_ms;
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct nlt_msg *m;
	uint8_t cmd;
	int ret;

	while (!(m = nlt_unstash(s, ORDLOCK_CMD_RESULT))) {
		ret = nlt_pump(s, deadline);
		if (ret)
			return ret;
	}
	ret = nlt_parse_genl(m->hdr, tb, &cmd);
	if (!ret)
		ret = nlt_parse_outcome(tb, cmd, out);
	free(m);
	return ret;
}

const char *nlt_status_name(uint32_t status)
{
	static const char * const names[] = {
		[ORDLOCK_STATUS_GRANTED] = "granted",
		[ORDLOCK_STATUS_QUEUED] = "queued",
		[ORDLOCK_STATUS_REFUSED] = "refused",
		[ORDLOCK_STATUS_TIMEOUT] = "timeout",
		[ORDLOCK_STATUS_DEADLOCK] = "deadlock",
		[ORDLOCK_STATUS_CANCELLED] = "cancelled",
	};

	if (status < sizeof(names) / sizeof(names[0]) && names[status])
		return names[status];
	return "?";
}

const char *nlt_outcome_str(const struct nlt_outcome *o)
{
	static char buf[512];
	int len;

	len = snprintf(buf, sizeof(buf), "cmd %u cookie %llu status %s",
		       o->cmd, (unsigned long long)o->cookie,
		       nlt_status_name(o->status));
	if (o->have_token)
		len += snprintf(buf + len, sizeof(buf) - len, " token %llu",
				(unsigned long long)o->token);
	if (o->error)
		len += snprintf(buf + len, sizeof(buf) - len, " errno %s",
				strerror(o->error));
	if (o->have_failure) {
		char f[256];

		ordlock_strfailure(&o->failure, f, sizeof(f));
		len += snprintf(buf + len, sizeof(buf) - len, " [%s]", f);
	}
	if (o->ncycle)
		snprintf(buf + len, sizeof(buf) - len, " cycle of %d",
			 o->ncycle);
	return buf;
}

/* Dumps */

struct nlt_dump_ctx {
	const char *domain;
	struct nlt_entry *v;
	int n, max;
	int keep;
};

static int nlt_dump_one(struct nlt *s, struct nlmsghdr *nlh, void *arg)
{
	struct nlt_dump_ctx *d = arg;
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct nlt_entry e;
	uint8_t cmd;

	(void)s;
	if (nlt_parse_genl(nlh, tb, &cmd))
		return -EPROTO;
	if (!tb[ORDLOCK_A_ENTRY]) {
		diag("nlt: a dump message without ORDLOCK_A_ENTRY");
		return -EPROTO;
	}
	if (nlt_parse_entry(tb[ORDLOCK_A_ENTRY], &e))
		return -EPROTO;
	if (d->domain && strcmp(d->domain, e.domain))
		return 0;
	if (d->keep) {
		if (d->n == d->max) {
			struct nlt_entry *v;

			d->max = d->max ? 2 * d->max : 256;
			v = realloc(d->v, d->max * sizeof(*v));
			if (!v)
				return -ENOMEM;
			d->v = v;
		}
		d->v[d->n] = e;
	}
	d->n++;
	return 0;
}

int nlt_dump(struct nlt *s, uint8_t cmd, const char *domain,
	     struct nlt_entry **out)
{
	struct nlt_dump_ctx d = { .domain = domain, .keep = !!out };
	struct nl_msg *msg = nlt_msg_new(s, cmd, NLM_F_DUMP);
	uint32_t seq;
	int ret;

	ret = nlt_send(s, msg, &seq);
	if (ret)
		return ret;
	ret = nlt_transact(s, seq, nlt_dump_one, &d);
	if (ret) {
		free(d.v);
		return ret;
	}
	if (out)
		*out = d.v;
	return d.n;
}

int nlt_find_lock(struct nlt *s, const char *domain, uint32_t rank,
		  uint64_t id, uint32_t role, uint32_t position,
		  struct nlt_entry *e)
{
	struct nlt_entry *v;
	int i, n, ret = -ENOENT;

	n = nlt_dump(s, ORDLOCK_CMD_GET_LOCKS, domain, &v);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (v[i].key.rank == rank && v[i].key.id == id &&
		    v[i].role == role && v[i].position == position) {
			*e = v[i];
			ret = 0;
			break;
		}
	}
	free(v);
	return ret;
}

uint64_t nlt_lock_owner(struct nlt *s, const char *domain, uint32_t rank,
			uint64_t id, uint32_t role, uint32_t position)
{
	struct nlt_entry e;

	if (nlt_find_lock(s, domain, rank, id, role, position, &e))
		return 0;
	return e.owner_id;
}

/* Domains */

static int nlt_parse_domain(struct nlattr **tb, struct nlt_domain *d)
{
	struct nlattr *pos;
	int rem;

	memset(d, 0, sizeof(*d));
	if (!tb[ORDLOCK_A_DOMAIN] || !tb[ORDLOCK_A_POLICY] ||
	    !tb[ORDLOCK_A_DETECT_DELAY_MS]) {
		diag("nlt: a domain reply without domain, policy or delay");
		return -EPROTO;
	}
	nla_strlcpy(d->name, tb[ORDLOCK_A_DOMAIN], sizeof(d->name));
	d->policy = nla_get_u32(tb[ORDLOCK_A_POLICY]);
	d->detect_delay_ms = nla_get_u32(tb[ORDLOCK_A_DETECT_DELAY_MS]);
	if (!tb[ORDLOCK_A_RANK_NAMES])
		return 0;
	d->have_names = 1;
	nla_for_each_nested(pos, tb[ORDLOCK_A_RANK_NAMES], rem) {
		struct nlt_entry e;

		if (nlt_parse_entry(pos, &e))
			return -EPROTO;
		if (!NLT_HAS(&e, ORDLOCK_E_RANK) || !NLT_HAS(&e, ORDLOCK_E_NAME) ||
		    d->nnames == ORDLOCK_RANK_NAMES_MAX) {
			diag("nlt: a bad rank name entry");
			return -EPROTO;
		}
		d->names[d->nnames].rank = e.rank;
		memcpy(d->names[d->nnames].name, e.name, sizeof(e.name));
		d->nnames++;
	}
	return 0;
}

int nlt_domain_get(struct nlt *s, const char *domain, struct nlt_domain *d)
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_DOMAIN_GET, 0);
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct nlt_domain tmp;
	int ret;

	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	ret = nlt_request(s, msg, tb);
	if (ret)
		return ret;
	return nlt_parse_domain(tb, d ? d : &tmp);
}

int nlt_domain_set(struct nlt *s, const char *domain, int policy,
		   long delay_ms, const struct nlt_rank_name *names,
		   int nnames, struct nlt_domain *d)
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_DOMAIN_SET, 0);
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct nlt_domain tmp;
	struct nlattr *nest, *entry;
	int i, ret;

	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain) ||
	    (policy >= 0 && nla_put_u32(msg, ORDLOCK_A_POLICY, policy)) ||
	    (delay_ms >= 0 &&
	     nla_put_u32(msg, ORDLOCK_A_DETECT_DELAY_MS, (uint32_t)delay_ms)))
		goto full;
	if (nnames >= 0) {
		nest = nlt_nest_start(msg, ORDLOCK_A_RANK_NAMES);
		if (!nest)
			goto full;
		for (i = 0; i < nnames; i++) {
			entry = nlt_nest_start(msg, ORDLOCK_A_ENTRY);
			if (!entry ||
			    nla_put_u32(msg, ORDLOCK_E_RANK, names[i].rank) ||
			    nla_put_string(msg, ORDLOCK_E_NAME, names[i].name))
				goto full;
			nla_nest_end(msg, entry);
		}
		nla_nest_end_keep_empty(msg, nest);
	}
	ret = nlt_request(s, msg, tb);
	if (ret)
		return ret;
	return nlt_parse_domain(tb, d ? d : &tmp);
full:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

int nlt_get_stats(struct nlt *s, const char *domain,
		  uint64_t stats[ORDLOCK_S_MAX + 1])
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_GET_STATS, 0);
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct nlattr *st[ORDLOCK_S_MAX + 1];
	int i, ret;

	for (i = ORDLOCK_S_ACQUIRES; i <= ORDLOCK_S_MAX; i++)
		nlt_stats_policy[i].type = NLA_U64;
	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	ret = nlt_request(s, msg, tb);
	if (ret)
		return ret;
	if (!tb[ORDLOCK_A_STATS] ||
	    nla_parse_nested(st, ORDLOCK_S_MAX, tb[ORDLOCK_A_STATS],
			     nlt_stats_policy)) {
		diag("nlt: GET_STATS reply without a valid ORDLOCK_A_STATS");
		return -EPROTO;
	}
	memset(stats, 0, sizeof(uint64_t) * (ORDLOCK_S_MAX + 1));
	for (i = ORDLOCK_S_ACQUIRES; i <= ORDLOCK_S_MAX; i++) {
		if (!st[i]) {
			diag("nlt: GET_STATS reply without counter %d", i);
			return -EPROTO;
		}
		stats[i] = nla_get_u64(st[i]);
	}
	return 0;
}

int nlt_family_info(uint32_t *version, uint32_t *maxattr, int *has_events)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_cache *cache = NULL;
	struct genl_family *f;
	int ret;

	if (!sk)
		return -ENOMEM;
	ret = genl_connect(sk);
	if (!ret)
		ret = genl_ctrl_alloc_cache(sk, &cache);
	if (ret < 0) {
		diag("nlt_family_info: %s", nl_geterror(ret));
		ret = nlt_nle_errno(ret);
		goto out;
	}
	f = genl_ctrl_search_by_name(cache, ORDLOCK_GENL_NAME);
	if (!f) {
		ret = -ENOENT;
		goto out;
	}
	*version = genl_family_get_version(f);
	*maxattr = genl_family_get_maxattr(f);
	genl_family_put(f);
	ret = genl_ctrl_resolve_grp(sk, ORDLOCK_GENL_NAME,
				    ORDLOCK_GENL_MCGRP_EVENTS);
	*has_events = ret >= 0;
	ret = 0;
out:
	nl_cache_free(cache);
	nl_socket_free(sk);
	return ret;
}

/* Events */

int nlt_subscribe(struct nlt *s)
{
	int size = 8 << 20;
	int ret;

	/* a storm of events must be dropped by the kernel, not by us */
	if (setsockopt(nlt_fd(s), SOL_SOCKET, SO_RCVBUFFORCE, &size,
		       sizeof(size)))
		setsockopt(nlt_fd(s), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	ret = nl_socket_add_membership(s->sk, s->events_grp);
	if (ret < 0) {
		diag("nl_socket_add_membership: %s", nl_geterror(ret));
		return nlt_nle_errno(ret);
	}
	return 0;
}

static int nlt_parse_event(struct nlmsghdr *nlh, struct nlt_event *ev)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	uint8_t cmd;

	memset(ev, 0, sizeof(*ev));
	if (nlt_parse_genl(nlh, tb, &cmd))
		return -EPROTO;
	if (!tb[ORDLOCK_A_EVENT] || !tb[ORDLOCK_A_DOMAIN] ||
	    !tb[ORDLOCK_A_ENTRY]) {
		diag("nlt: an event without type, domain or owner");
		return -EPROTO;
	}
	ev->event = nla_get_u32(tb[ORDLOCK_A_EVENT]);
	nla_strlcpy(ev->domain, tb[ORDLOCK_A_DOMAIN], sizeof(ev->domain));
	if (nlt_parse_entry(tb[ORDLOCK_A_ENTRY], &ev->owner))
		return -EPROTO;
	if (tb[ORDLOCK_A_FAILURE]) {
		ev->have_failure = 1;
		if (nlt_parse_failure(tb[ORDLOCK_A_FAILURE], &ev->failure))
			return -EPROTO;
	}
	if (tb[ORDLOCK_A_CYCLE] &&
	    nlt_parse_cycle(tb[ORDLOCK_A_CYCLE], ev->cycle, &ev->ncycle))
		return -EPROTO;
	return 0;
}

int nlt_wait_event(struct nlt *s, uint32_t event, const char *domain,
		   unsigned int timeout_ms, struct nlt_event *ev)
{
	uint64_t deadline = now_ms() + timeout_ms;
	struct nlt_msg *m;
	int ret;

	for (;;) {
		while ((m = nlt_unstash(s, ORDLOCK_CMD_EVENT))) {
			ret = nlt_parse_event(m->hdr, ev);
			free(m);
			if (ret)
				return ret;
			if ((!event || ev->event == event) &&
			    (!domain || !strcmp(ev->domain, domain)))
				return 0;
		}
		ret = nlt_pump(s, deadline);
		if (ret)
			return ret;
	}
}

const char *nlt_event_name(uint32_t event)
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
	default:
		return "?";
	}
}
