/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small client of the generic netlink family "ordlock" for the tests,
 * built on libnl-genl-3: requests, their replies and netlink errors (with
 * the extended ack), the asynchronous ORDLOCK_CMD_RESULT messages, dumps,
 * and the "events" multicast group.
 *
 * libnl builds and parses the messages; receiving is done here, with
 * poll() and a deadline, so that nothing waits without a bound. Messages
 * that arrive while a reply is awaited (a RESULT, an event) are kept in
 * order and handed out by nlt_wait_result() and nlt_wait_event().
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

/* How long a reply to a request may take before the test calls it lost */
#define NLT_REPLY_MS	20000

struct nlt_msg;

/**
 * struct nlt_extack - what the kernel said about the last failed request
 * @error: its errno (positive), 0 when the last request did not fail
 * @msg: NLMSGERR_ATTR_MSG, "" when absent
 * @have_off: NLMSGERR_ATTR_OFFS was present
 * @off: offset of the offending attribute from the start of the request
 * @have_miss: NLMSGERR_ATTR_MISS_TYPE was present
 * @miss_type: the type of the missing attribute
 */
struct nlt_extack {
	int error;
	char msg[256];
	int have_off;
	uint32_t off;
	int have_miss;
	uint32_t miss_type;
};

/**
 * struct nlt - one generic netlink socket of the family
 * @sk: the libnl socket
 * @family: the family's id
 * @events_grp: the id of the "events" group
 * @port: the socket's port id (the owner, for lock requests)
 * @ext: explains the last request that failed
 * @use_write: send requests with write(), without a destination address
 *	(netlink then checks the capabilities of the socket's opener too)
 */
struct nlt {
	struct nl_sock *sk;
	int family;
	int events_grp;
	uint32_t port;
	struct nlt_extack ext;
	int use_write;
	/* private */
	struct nlt_msg *stash_head, *stash_tail;
	struct nlmsghdr *reply;
	unsigned char *buf;
	size_t buflen;
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
 * struct nlt_outcome - a lock reply (ACQUIRE, CONVERT, RELEASE, CANCEL) or
 * a RESULT message
 * @cmd: the message's command
 * @cookie: ORDLOCK_A_COOKIE
 * @status: ORDLOCK_A_STATUS, an enum ordlock_status
 * @have_token: ORDLOCK_A_TOKEN was present
 * @token: the fencing token
 * @error: ORDLOCK_A_ERRNO, 0 when absent
 * @have_failure: ORDLOCK_A_FAILURE was present
 * @failure: its fields; @failure.held is all zero when F_HELD was absent
 * @ncycle: number of ORDLOCK_A_CYCLE steps (0 when absent)
 * @cycle: the steps, victim first; @pid, @owner_id, @comm, @key, @edge
 *	and @blocker_mode are filled in
 */
struct nlt_outcome {
	uint8_t cmd;
	uint64_t cookie;
	uint32_t status;
	int have_token;
	uint64_t token;
	uint32_t error;
	int have_failure;
	struct ordlock_failure failure;
	int ncycle;
	struct ordlock_cycle_step cycle[ORDLOCK_CYCLE_MAX];
};

/*
 * Lock requests. Each sends the request and waits for its reply: 0 with
 * @out (may be NULL) filled in, or the negative errno of a netlink error.
 * @domain may be NULL (the owner's current domain); @timeout_ns 0 is the
 * domain default.
 */
int nlt_acquire(struct nlt *s, const char *domain,
		const struct ordlock_key *keys, unsigned int n,
		uint64_t timeout_ns, uint32_t flags, uint64_t cookie,
		struct nlt_outcome *out);
int nlt_convert(struct nlt *s, struct ordlock_key key, uint64_t timeout_ns,
		uint32_t flags, uint64_t cookie, struct nlt_outcome *out);
/* nlt_release() - release @keys, or everything with @n 0 (RELEASE_ALL) */
int nlt_release(struct nlt *s, const struct ordlock_key *keys, unsigned int n,
		struct nlt_outcome *out);
int nlt_cancel(struct nlt *s, uint64_t cookie, struct nlt_outcome *out);
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
		    struct nlt_outcome *out);

/* nlt_status_name() - "granted", "queued", ... */
const char *nlt_status_name(uint32_t status);
/* nlt_outcome_str() - one line describing @o (static buffer) */
const char *nlt_outcome_str(const struct nlt_outcome *o);

/**
 * struct nlt_entry - an ORDLOCK_A_ENTRY nest: a dump entry, a rank name,
 * the owner of an event
 * @present: bit (1 << ORDLOCK_E_x) for each attribute present
 * @blocker: the ORDLOCK_E_BLOCKER nest (owner fields and mode)
 */
struct nlt_entry {
	uint32_t present;
	uint64_t owner_id;
	uint32_t pid;
	char comm[ORDLOCK_COMM_LEN];
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	uint32_t kind;
	uint32_t held;
	struct ordlock_key key;
	uint32_t role;
	uint32_t position;
	uint32_t mode;
	uint64_t token;
	uint64_t waited_us;
	uint32_t edge;
	uint32_t rank;
	char name[ORDLOCK_RANK_NAME_MAX];
	uint32_t uid;
	struct {
		uint32_t present;
		uint64_t owner_id;
		uint32_t pid;
		char comm[ORDLOCK_COMM_LEN];
		uint32_t mode;
	} blocker;
};

#define NLT_HAS(e, attr)	(((e)->present >> (attr)) & 1)

/*
 * nlt_dump() - run the dump @cmd (ORDLOCK_CMD_GET_LOCKS, _OWNERS, _GRAPH)
 * and return its entries: a malloc()ed array in *@out (may be NULL: only
 * count), keeping only those of @domain when it is not NULL. Returns the
 * number kept, or a negative errno.
 */
int nlt_dump(struct nlt *s, uint8_t cmd, const char *domain,
	     struct nlt_entry **out);

/*
 * nlt_find_lock() - the GET_LOCKS entry of key (@rank, @id) of @domain in
 * @role at @position: 0 with *@e filled in, -ENOENT when there is none.
 */
int nlt_find_lock(struct nlt *s, const char *domain, uint32_t rank,
		  uint64_t id, uint32_t role, uint32_t position,
		  struct nlt_entry *e);
/* nlt_lock_owner() - the owner id of that entry, 0 when there is none */
uint64_t nlt_lock_owner(struct nlt *s, const char *domain, uint32_t rank,
			uint64_t id, uint32_t role, uint32_t position);

/**
 * struct nlt_domain - the reply of DOMAIN_GET and DOMAIN_SET
 * @nnames: number of rank names, at most ORDLOCK_RANK_NAMES_MAX
 * @have_names: ORDLOCK_A_RANK_NAMES was present
 */
struct nlt_domain {
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	uint32_t policy;
	uint32_t detect_delay_ms;
	int have_names;
	unsigned int nnames;
	struct {
		uint32_t rank;
		char name[ORDLOCK_RANK_NAME_MAX];
	} names[ORDLOCK_RANK_NAMES_MAX];
};

struct nlt_rank_name {
	uint32_t rank;
	const char *name;
};

int nlt_domain_get(struct nlt *s, const char *domain, struct nlt_domain *d);
/*
 * nlt_domain_set() - set what is given: @policy and @delay_ms unless
 * negative, the rank names unless @nnames is negative. @d may be NULL.
 */
int nlt_domain_set(struct nlt *s, const char *domain, int policy,
		   long delay_ms, const struct nlt_rank_name *names,
		   int nnames, struct nlt_domain *d);
/* nlt_get_stats() - the counters of @domain, indexed by ORDLOCK_S_* */
int nlt_get_stats(struct nlt *s, const char *domain,
		  uint64_t stats[ORDLOCK_S_MAX + 1]);

/**
 * struct nlt_event - a message of the "events" group
 * @event: an enum ordlock_event
 * @owner: the ORDLOCK_A_ENTRY nest (the owner concerned)
 */
struct nlt_event {
	uint32_t event;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct nlt_entry owner;
	int have_failure;
	struct ordlock_failure failure;
	int ncycle;
	struct ordlock_cycle_step cycle[ORDLOCK_CYCLE_MAX];
};

/* nlt_subscribe() - join the "events" group (and enlarge the buffer) */
int nlt_subscribe(struct nlt *s);
/*
 * nlt_wait_event() - the next event of type @event (0: any) about @domain
 * (NULL: any), waiting at most @timeout_ms; others are dropped. 0 or
 * -ETIMEDOUT (-ENOBUFS if the socket overflowed: events were lost).
 */
int nlt_wait_event(struct nlt *s, uint32_t event, const char *domain,
		   unsigned int timeout_ms, struct nlt_event *ev);
const char *nlt_event_name(uint32_t event);

/*
 * Raw requests, for malformed messages: nlt_msg_new() starts a request of
 * @cmd (NLM_F_REQUEST | NLM_F_ACK, plus @flags); add attributes with
 * libnl (nla_put_*(), nlt_nest_start() for nests); nlt_offset() is the
 * offset the next attribute will have (what the extack's offset names).
 * nlt_request() sends it, frees it and waits for the reply and the ack:
 * 0 with the reply's attributes parsed into @tb (if not NULL; valid until
 * the next call on @s), or the negative errno.
 */
struct nl_msg *nlt_msg_new(struct nlt *s, uint8_t cmd, int flags);
struct nlattr *nlt_nest_start(struct nl_msg *msg, int type);
uint32_t nlt_offset(struct nl_msg *msg);
int nlt_request(struct nlt *s, struct nl_msg *msg,
		struct nlattr *tb[ORDLOCK_A_MAX + 1]);
/*
 * nlt_send_only() - send @msg (and free it) without reading anything:
 * 0 with its sequence number in @seq, or the negative errno
 */
int nlt_send_only(struct nlt *s, struct nl_msg *msg, uint32_t *seq);
/* nlt_put_key() - an ORDLOCK_A_KEY nest (mode 0: no ORDLOCK_K_MODE) */
int nlt_put_key(struct nl_msg *msg, int type, const struct ordlock_key *k);

/* Parsers of nests of the family, exposed for tests of raw replies */
int nlt_parse_outcome(struct nlattr **tb, uint8_t cmd, struct nlt_outcome *o);
int nlt_parse_entry(struct nlattr *nest, struct nlt_entry *e);

/*
 * nlt_family_info() - what the generic netlink controller says of the
 * family: its version, highest attribute, and whether it has the "events"
 * group (asked on a socket of its own). 0 or a negative errno.
 */
int nlt_family_info(uint32_t *version, uint32_t *maxattr, int *has_events);

/* nlt_pending() - messages kept for nlt_wait_result()/nlt_wait_event() */
unsigned int nlt_pending(const struct nlt *s);

#endif /* ORDLOCK_TEST_NLTEST_H */
