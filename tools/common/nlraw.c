// SPDX-License-Identifier: GPL-2.0
/* The lean path to the "ordlock" family: see nlraw.h. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "nlraw.h"

size_t olc_raw_header(char *buf, unsigned int family, uint8_t cmd)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(buf + NLMSG_HDRLEN);

	memset(buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	nlh->nlmsg_type = (uint16_t)family;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g->cmd = cmd;
	g->version = ORDLOCK_GENL_VERSION;
	return NLMSG_HDRLEN + GENL_HDRLEN;
}

size_t olc_raw_put(char *buf, size_t off, uint16_t type, const void *data,
		   size_t len)
{
	struct nlattr *a = (struct nlattr *)(buf + off);

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + a->nla_len, 0, NLA_ALIGN(a->nla_len) - a->nla_len);
	return off + NLA_ALIGN(a->nla_len);
}

size_t olc_raw_put_u32(char *buf, size_t off, uint16_t type, uint32_t v)
{
	return olc_raw_put(buf, off, type, &v, sizeof(v));
}

size_t olc_raw_put_u64(char *buf, size_t off, uint16_t type, uint64_t v)
{
	return olc_raw_put(buf, off, type, &v, sizeof(v));
}

size_t olc_raw_nest_start(char *buf, size_t off, uint16_t type, size_t *start)
{
	*start = off;
	return olc_raw_put(buf, off, type | NLA_F_NESTED, NULL, 0);
}

void olc_raw_nest_end(char *buf, size_t start, size_t off)
{
	((struct nlattr *)(buf + start))->nla_len = (uint16_t)(off - start);
}

size_t olc_raw_finish(char *buf, size_t len)
{
	((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)len;
	return len;
}

int olc_raw_recv(int fd, void *buf, size_t size, uint8_t *cmd,
		 uint32_t *status, uint32_t *err)
{
	struct nlmsghdr *nlh = buf;
	struct nlattr *a;
	ssize_t n;
	int left;

	*status = 0;
	*err = 0;
	n = recv(fd, buf, size, 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(nlh, (int)n))
		return -EPROTO;
	if (nlh->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(nlh))->error;
	*cmd = ((struct genlmsghdr *)NLMSG_DATA(nlh))->cmd;
	left = (int)nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	a = (struct nlattr *)((char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
	while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left) {
		if ((a->nla_type & NLA_TYPE_MASK) == ORDLOCK_A_STATUS)
			memcpy(status, (char *)a + NLA_HDRLEN, sizeof(*status));
		else if ((a->nla_type & NLA_TYPE_MASK) == ORDLOCK_A_ERRNO)
			memcpy(err, (char *)a + NLA_HDRLEN, sizeof(*err));
		left -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return 0;
}

int olc_raw_request(int fd, const void *msg, size_t len, void *buf,
		    size_t size, uint8_t *cmd, uint32_t *status, uint32_t *err)
{
	*status = 0;
	*err = 0;
	if (send(fd, msg, len, 0) < 0)
		return -errno;
	return olc_raw_recv(fd, buf, size, cmd, status, err);
}
