/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nlraw.h - read an ordlock reply from a raw generic netlink socket, for
 * the programs that send prebuilt requests with send() and must not pay
 * for a library on the way back (the benchmarks, the port id race test).
 */
#ifndef ORDLOCK_TEST_NLRAW_H
#define ORDLOCK_TEST_NLRAW_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/ordlock.h>

/*
 * nlraw_recv() - receive one message on @fd into @buf (@size bytes): 0
 * with its command in @cmd and its ORDLOCK_A_STATUS and ORDLOCK_A_ERRNO
 * (0 when absent) in @status and @err, or the error of an NLMSG_ERROR, or
 * -errno of recv(), or -EPROTO.
 */
static inline int nlraw_recv(int fd, void *buf, size_t size, uint8_t *cmd,
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

#endif /* ORDLOCK_TEST_NLRAW_H */
