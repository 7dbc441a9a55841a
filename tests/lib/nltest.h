/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tests' use of the generic netlink client shared with ordlockctl
 * (tools/common/nl.h): lock requests, their replies and netlink errors
 * (with the extended ack), the asynchronous ORDLOCK_CMD_RESULT messages,
 * dumps, and the "events" multicast group, with diag()s saying what went
 * wrong. Messages that arrive while a reply is awaited (a RESULT, an
 * event) are kept in order and handed out by nlt_wait_result() and
 * nlt_wait_event().
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure: the errno of a netlink error (then nlt_extack() explains it),
 * -ETIMEDOUT when nothing came in time, -EPROTO when the kernel's message
 * does not parse (with a diag()).
 */
#ifndef ORDLOCK_TEST_NLTEST_H
#define ORDLOCK_TEST_NLTEST_H

#include <stdint.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <linux/ordlock.h>

#include "nl.h"		/* tools/common: the client, its structures and parsers */

/* How long a reply to a request may take before the test calls it lost */
#define NLT_REPLY_MS	20000

/**
 * struct nlt - one generic netlink socket of the family
 * @nl: the shared client's socket: @nl->ext explains the last request
 *	that failed, @nl->port is the owner of lock requests, @nl->use_write
 *	sends requests with write() (netlink then checks the capabilities
 *	of the socket's opener too)
 */
struct nlt {
	struct olc_nl *nl;
};

/*
 * nlt_open() - a connected socket with the family resolved; NULL on
 * failure with *err (if not NULL) set to the negative errno (-ENOENT: the
 * family is not registered, as libnl reports it).
 */
struct nlt *nlt_open(int *err);
/*
 * nlt_open_fd() - nlt_open() on an existing netlink socket @fd (of protocol
 * NETLINK_GENERIC, bound), e.g. one another process opened; nlt_close()
 * closes it.
 */
struct nlt *nlt_open_fd(int fd, int *err);
/* nlt_must_open() - nlt_open() or bail out of the test */
struct nlt *nlt_must_open(void);
/* nlt_close() - close the socket (the kernel releases its owner) */
void nlt_close(struct nlt *s);
/* nlt_fd() - the socket's file descriptor */
int nlt_fd(const struct nlt *s);

/* nlt_extack_str() - "errno: message (offset N, missing attribute T)" */
const char *nlt_extack_str(const struct nlt *s);

/*
 * Lock requests. Each sends the request and waits for its reply: 0 with
 * @out (may be NULL) filled in, or the negative errno of a netlink error.
 * @domain may be NULL (the owner's current domain); @timeout_ns 0 is the
 * domain default.
 */
int nlt_acquire(struct nlt *s, const char *domain,
		const struct ordlock_key *keys, unsigned int n,
		uint64_t timeout_ns, uint32_t flags, uint64_t cookie,
		struct olc_nl_outcome *out);
/* nlt_acquire_lease() - an ACQUIRE of @key with ORDLOCK_A_LEASE_MS @lease_ms */
int nlt_acquire_lease(struct nlt *s, const char *domain, struct ordlock_key key,
		      uint64_t timeout_ns, uint32_t lease_ms, uint64_t cookie,
		      struct olc_nl_outcome *out);
int nlt_convert(struct nlt *s, struct ordlock_key key, uint64_t timeout_ns,
		uint32_t flags, uint64_t cookie, struct olc_nl_outcome *out);
/* nlt_release() - release @keys, or everything with @n 0 (RELEASE_ALL) */
int nlt_release(struct nlt *s, const struct ordlock_key *keys, unsigned int n,
		struct olc_nl_outcome *out);
int nlt_cancel(struct nlt *s, uint64_t cookie, struct olc_nl_outcome *out);
/* The messages nlt_acquire(), nlt_convert() and nlt_release() send (NULL: too big) */
struct nl_msg *nlt_acquire_msg(struct nlt *s, const char *domain,
			       const struct ordlock_key *keys, unsigned int n,
			       uint64_t timeout_ns, uint32_t flags, uint64_t cookie);
struct nl_msg *nlt_convert_msg(struct nlt *s, struct ordlock_key key,
			       uint64_t timeout_ns, uint32_t flags, uint64_t cookie);
struct nl_msg *nlt_release_msg(struct nlt *s, const struct ordlock_key *keys,
			       unsigned int n);

/*
 * nlt_wait_result() - the next ORDLOCK_CMD_RESULT message, waiting at most
 * @timeout_ms (0: none, only what already arrived). 0, or -ETIMEDOUT.
 */
int nlt_wait_result(struct nlt *s, unsigned int timeout_ms,
		    struct olc_nl_outcome *out);

/* nlt_status_name() - "granted", "queued", ... */
const char *nlt_status_name(uint32_t status);
/* nlt_outcome_str() - one line describing @o (static buffer) */
const char *nlt_outcome_str(const struct olc_nl_outcome *o);

/*
 * nlt_dump() - run the dump @cmd (ORDLOCK_CMD_GET_LOCKS, _OWNERS, _GRAPH)
 * and return its entries: a malloc()ed array in *@out (may be NULL: only
 * count), keeping only those of @domain when it is not NULL. Returns the
 * number kept, or a negative errno.
 */
int nlt_dump(struct nlt *s, uint8_t cmd, const char *domain,
	     struct olc_nl_entry **out);

/*
 * nlt_find_lock() - the GET_LOCKS entry of key (@rank, @id) of @domain in
 * @role at @position: 0 with *@e filled in, -ENOENT when there is none.
 */
int nlt_find_lock(struct nlt *s, const char *domain, uint32_t rank,
		  uint64_t id, uint32_t role, uint32_t position,
		  struct olc_nl_entry *e);
/* nlt_lock_owner() - the owner id of that entry, 0 when there is none */
uint64_t nlt_lock_owner(struct nlt *s, const char *domain, uint32_t rank,
			uint64_t id, uint32_t role, uint32_t position);

struct nlt_rank_name {
	uint32_t rank;
	const char *name;
};

int nlt_domain_get(struct nlt *s, const char *domain, struct olc_nl_domain *d);
/*
 * nlt_domain_set() - set what is given: @policy and @delay_ms unless
 * negative, the rank names unless @nnames is negative. @d may be NULL.
 */
int nlt_domain_set(struct nlt *s, const char *domain, int policy,
		   long delay_ms, const struct nlt_rank_name *names,
		   int nnames, struct olc_nl_domain *d);
/* A u32 attribute of a request: its type (ORDLOCK_A_*) and value */
struct nlt_u32 {
	uint16_t type;
	uint32_t value;
};
/*
 * nlt_domain_set_u32() - a DOMAIN_SET of @domain carrying the @n u32
 * attributes @a (and nothing else), for the settings nlt_domain_set() does
 * not take (strict, cluster, fastpath, flags...): 0 and the reply in @d
 * (may be NULL), the negative errno of a netlink error, -EMSGSIZE when the
 * message cannot hold them
 */
int nlt_domain_set_u32(struct nlt *s, const char *domain,
		       const struct nlt_u32 *a, unsigned int n,
		       struct olc_nl_domain *d);
/* nlt_get_stats() - the counters of @domain, indexed by ORDLOCK_S_* */
int nlt_get_stats(struct nlt *s, const char *domain,
		  uint64_t stats[ORDLOCK_S_MAX + 1]);

/* nlt_subscribe() - join the "events" group (and enlarge the buffer) */
int nlt_subscribe(struct nlt *s);
/*
 * nlt_wait_event() - the next event of type @event (0: any) about @domain
 * (NULL: any), waiting at most @timeout_ms; others are dropped. 0 or
 * -ETIMEDOUT (-ENOBUFS if the socket overflowed: events were lost).
 */
int nlt_wait_event(struct nlt *s, uint32_t event, const char *domain,
		   unsigned int timeout_ms, struct olc_nl_event *ev);
const char *nlt_event_name(uint32_t event);

/*
 * Raw requests, for malformed messages: nlt_msg_new() starts a request of
 * @cmd (NLM_F_REQUEST | NLM_F_ACK, plus @flags); add attributes with
 * libnl (nla_put_*(), olc_nl_nest_start() for nests, olc_nl_put_key());
 * olc_nl_offset() is the offset the next attribute will have (what the
 * extack's offset names).
 * nlt_request() sends it, frees it and waits for the reply and the ack:
 * 0 with the reply's attributes parsed into @tb (if not NULL; valid until
 * the next call on @s), or the negative errno.
 */
struct nl_msg *nlt_msg_new(struct nlt *s, uint8_t cmd, int flags);
int nlt_request(struct nlt *s, struct nl_msg *msg,
		struct nlattr *tb[ORDLOCK_A_MAX + 1]);
/*
 * nlt_send_only() - send @msg (and free it) without reading anything:
 * 0 with its sequence number in @seq, or the negative errno
 */
int nlt_send_only(struct nlt *s, struct nl_msg *msg, uint32_t *seq);

/*
 * nlt_family_info() - what the generic netlink controller says of the
 * family: its version, highest attribute, and whether it has the "events"
 * group (asked on a socket of its own). 0 or a negative errno.
 */
int nlt_family_info(uint32_t *version, uint32_t *maxattr, int *has_events);

/* nlt_pending() - messages kept for nlt_wait_result()/nlt_wait_event() */
unsigned int nlt_pending(const struct nlt *s);

#endif /* ORDLOCK_TEST_NLTEST_H */
