/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lean path to the "ordlock" family: requests built once into a byte
 * buffer and sent again and again as they are with send(), replies read
 * with recv() for their status and errno alone, no library on the way
 * (the benchmarks measure the kernel, not libnl; t_nl_reuse races port
 * ids). The full client, its parsers included, is nl.h.
 */
#ifndef ORDLOCK_COMMON_NLRAW_H
#define ORDLOCK_COMMON_NLRAW_H

#include <stddef.h>
#include <stdint.h>

#include <linux/ordlock.h>

/*
 * Building: each call writes at offset @off of @buf (the caller makes
 * room) and returns the offset after what it wrote.
 */
/* The netlink and generic netlink headers of a request of @cmd (no ack) */
size_t olc_raw_header(char *buf, unsigned int family, uint8_t cmd);
/* Attribute @type with @len bytes of @data */
size_t olc_raw_put(char *buf, size_t off, uint16_t type, const void *data,
		   size_t len);
size_t olc_raw_put_u32(char *buf, size_t off, uint16_t type, uint32_t v);
size_t olc_raw_put_u64(char *buf, size_t off, uint16_t type, uint64_t v);
/* A nest: its header now (its offset in @start), its length at the end */
size_t olc_raw_nest_start(char *buf, size_t off, uint16_t type, size_t *start);
void olc_raw_nest_end(char *buf, size_t start, size_t off);
/* The message's length into its header; returns it */
size_t olc_raw_finish(char *buf, size_t len);

/*
 * olc_raw_recv() - receive one message on @fd into @buf (@size bytes): 0
 * with its command in @cmd and its ORDLOCK_A_STATUS and ORDLOCK_A_ERRNO
 * (0 when absent) in @status and @err, or the error of an NLMSG_ERROR, or
 * -errno of recv(), or -EPROTO.
 */
int olc_raw_recv(int fd, void *buf, size_t size, uint8_t *cmd,
		 uint32_t *status, uint32_t *err);
/* olc_raw_request() - send @len bytes of @msg on @fd, then olc_raw_recv() */
int olc_raw_request(int fd, const void *msg, size_t len, void *buf,
		    size_t size, uint8_t *cmd, uint32_t *status, uint32_t *err);

#endif /* ORDLOCK_COMMON_NLRAW_H */
