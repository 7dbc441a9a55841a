/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The client of the generic netlink family "ordlock" (libnl-genl-3) that
 * ordlockctl and the tests share.
 *
 * libnl resolves the family and builds the messages; receiving is done
 * here, with poll() and a deadline, so that nothing waits without a bound,
 * and the extended ack of a refused request is kept. Messages of the
 * family that arrive while a reply is awaited (a RESULT, an event) are
 * kept in order when asked (@keep) and handed out by olc_nl_take().
 *
 * The parsers of the family's replies and nests (olc_nl_parse_*()) are
 * the only ones: ordlockctl maps their results into its model, the tests
 * check them. The lean path of the benchmarks (no libnl on the way) is
 * nlraw.h.
 *
 * Functions return 0 (or a count) or a negative errno: that of a netlink
 * error (then @ext explains it), -ETIMEDOUT when nothing came in time,
 * -EPROTO when a message of the kernel does not parse (olc_nl_why() says
 * why).
 */
#ifndef ORDLOCK_COMMON_NL_H
#define ORDLOCK_COMMON_NL_H

#include <stdint.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <linux/ordlock.h>

#include "parse.h"

/* How long a reply may take by default (@reply_ms) */
#define OLC_NL_REPLY_MS	10000

/**
 * struct olc_nl_extack - what the kernel said about the last failed request
 * @error: its errno (positive), 0 when the last request did not fail
 * @msg: NLMSGERR_ATTR_MSG, "" when absent
 * @have_off: NLMSGERR_ATTR_OFFS was present
 * @off: offset of the offending attribute from the start of the request
 * @have_miss: NLMSGERR_ATTR_MISS_TYPE was present
 * @miss_type: the type of the missing attribute
 */
struct olc_nl_extack {
	int error;
	char msg[256];
	int have_off;
	uint32_t off;
	int have_miss;
	uint32_t miss_type;
};

/* A message kept for later (a RESULT or an event) */
struct olc_nl_kept;

/**
 * struct olc_nl - one generic netlink socket of the family
 * @sk: the libnl socket
 * @family: the family's id
 * @events_grp: the id of the "events" group, -1 when there is none
 * @port: the socket's port id (the owner, for lock requests)
 * @ext: explains the last request that failed
 * @reply_ms: how long a reply may take (OLC_NL_REPLY_MS)
 * @use_write: send requests with write(), without a destination address
 *	(netlink then checks the capabilities of the socket's opener too)
 * @intr: a signal ends a wait with -EINTR (else the wait goes on)
 * @skip_overruns: a receive buffer overrun is counted in @lost and the
 *	wait goes on (else it ends with -ENOBUFS, counted too)
 * @keep: keep RESULT and EVENT messages that come while a reply is
 *	awaited, for olc_nl_take() (else they are dropped)
 * @lost: receive buffer overruns seen
 */
struct olc_nl {
	struct nl_sock *sk;
	int family;
	int events_grp;
	uint32_t port;
	struct olc_nl_extack ext;
	unsigned int reply_ms;
	int use_write;
	int intr;
	int skip_overruns;
	int keep;
	unsigned long lost;
	/* private */
	struct olc_nl_kept *kept_head, *kept_tail;
	struct nlmsghdr *reply;
	unsigned char *buf;
	size_t buflen;
};

/*
 * olc_nl_open() - a connected socket with the family resolved (@fd -1),
 * or the existing bound NETLINK_GENERIC socket @fd (olc_nl_close() closes
 * it). -ENOENT when the family is not registered (the module is not
 * loaded), or another -errno. A family without the "events" group leaves
 * @events_grp -1 unless @need_events (then it is an error).
 */
int olc_nl_open(struct olc_nl **out, int fd, int need_events);
void olc_nl_close(struct olc_nl *nl);
int olc_nl_fd(const struct olc_nl *nl);

/* Why the last -EPROTO: "what did not parse" (static buffer) */
const char *olc_nl_why(void);

/* --- requests ---------------------------------------------------------- */

/*
 * olc_nl_msg() - a request of @cmd: NLM_F_REQUEST | @flags, plus NLM_F_ACK
 * unless NLM_F_DUMP is among @flags, with room for @size bytes (0: the
 * default). NULL when out of memory.
 */
struct nl_msg *olc_nl_msg(struct olc_nl *nl, uint8_t cmd, int flags, size_t size);
/* A nest started by hand (kept even when empty); end it with nla_nest_end() */
struct nlattr *olc_nl_nest_start(struct nl_msg *msg, int type);
/* The offset the next attribute of @msg will have (what extack offsets name) */
uint32_t olc_nl_offset(struct nl_msg *msg);
/* An ORDLOCK_A_KEY-like nest of @type (mode 0: no ORDLOCK_K_MODE) */
int olc_nl_put_key(struct nl_msg *msg, int type, const struct ordlock_key *k);
/* ORDLOCK_A_KEYS with @n keys (may be 0) */
int olc_nl_put_keys(struct nl_msg *msg, const struct ordlock_key *keys,
		    unsigned int n);

/* olc_nl_send() - send @msg (and free it): 0 with its sequence number in @seq */
int olc_nl_send(struct olc_nl *nl, struct nl_msg *msg, uint32_t *seq);

/* Called for each message of the family that belongs to the request */
typedef int (*olc_nl_msg_fn)(struct olc_nl *nl, struct nlmsghdr *nlh, void *arg);

/*
 * olc_nl_wait_end() - wait until request @seq ends (its ack, its error, or
 * the end of its dump), calling @fn (may be NULL) for its messages. 0, the
 * request's -errno, -ETIMEDOUT after @reply_ms, or the first error of @fn.
 */
int olc_nl_wait_end(struct olc_nl *nl, uint32_t seq, olc_nl_msg_fn fn, void *arg);

/* Called with the top-level attributes of each reply (or dump entry) */
typedef int (*olc_nl_fn)(struct nlattr **tb, void *arg);

/* olc_nl_transact() - send @msg (consumed), call @fn for each reply */
int olc_nl_transact(struct olc_nl *nl, struct nl_msg *msg, olc_nl_fn fn,
		    void *arg);
/* A dump of @cmd without attributes */
int olc_nl_dump(struct olc_nl *nl, uint8_t cmd, olc_nl_fn fn, void *arg);
/*
 * olc_nl_request() - send @msg, wait for its one reply and the ack: 0 with
 * the reply's attributes in @tb (if not NULL; valid until the next call on
 * @nl), or the negative errno (-EPROTO: acked without a reply)
 */
int olc_nl_request(struct olc_nl *nl, struct nl_msg *msg,
		   struct nlattr *tb[ORDLOCK_A_MAX + 1]);

/* --- what arrives on its own: RESULTs, events --------------------------- */

/*
 * olc_nl_pump() - wait until @deadline (CLOCK_MONOTONIC ms; 0: forever)
 * for one datagram and keep its RESULT and EVENT messages. 0 or -errno.
 */
int olc_nl_pump(struct olc_nl *nl, uint64_t deadline);
/* olc_nl_take() - the first kept message of @cmd (free() it), or NULL */
struct nlmsghdr *olc_nl_take(struct olc_nl *nl, uint8_t cmd);
/* olc_nl_pending() - messages kept */
unsigned int olc_nl_pending(const struct olc_nl *nl);

/* Join the "events" group, with a receive buffer of @rcvbuf bytes */
int olc_nl_join_events(struct olc_nl *nl, int rcvbuf);

/* CLOCK_MONOTONIC in milliseconds */
uint64_t olc_nl_now_ms(void);

/* --- parsers ------------------------------------------------------------- */

/* The top-level attributes of a message of the family, and its command */
int olc_nl_parse_genl(struct nlmsghdr *nlh, struct nlattr **tb, uint8_t *cmd);

/**
 * struct olc_nl_entry - an ORDLOCK_A_ENTRY nest: a dump entry, a rank name,
 * the owner of an event, a step of a cycle
 * @present: bit (1 << ORDLOCK_E_x) for each attribute present
 * @blocker: the ORDLOCK_E_BLOCKER nest (owner fields and mode)
 */
struct olc_nl_entry {
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
	char label[ORDLOCK_LABEL_MAX];
	struct ordlock_key taken;
	uint64_t time_ns;
	uint32_t order_kind;
	uint64_t count;
	uint64_t lease_left_ms;
	uint32_t fast;			/* ORDLOCK_E_FAST: the owner index */
	struct {
		uint32_t present;
		uint64_t owner_id;
		uint32_t pid;
		char comm[ORDLOCK_COMM_LEN];
		uint32_t mode;
		uint32_t fast;
	} blocker;
};

#define OLC_NL_HAS(e, attr)	(((e)->present >> (attr)) & 1)

int olc_nl_parse_entry(struct nlattr *nest, struct olc_nl_entry *e);
/* A key nest: rank and id needed, mode 0 when absent */
int olc_nl_parse_key(struct nlattr *nest, struct ordlock_key *k);
/* ORDLOCK_A_FAILURE; @f->index is ~0 when F_INDEX is absent */
int olc_nl_parse_failure(struct nlattr *nest, struct ordlock_failure *f);
/* ORDLOCK_A_CYCLE: at most ORDLOCK_CYCLE_MAX steps, their number in @n */
int olc_nl_parse_cycle(struct nlattr *nest, struct ordlock_cycle_step *steps,
		       int *n);

/*
 * struct olc_nl_outcome - a lock reply (ACQUIRE, CONVERT, RELEASE, CANCEL)
 * or a RESULT message
 * @cmd: the message's command
 * @cookie: ORDLOCK_A_COOKIE
 * @status: ORDLOCK_A_STATUS, an enum ordlock_status
 * @have_token: ORDLOCK_A_TOKEN was present
 * @token: the fencing token
 * @error: ORDLOCK_A_ERRNO, 0 when absent
 * @have_failure: ORDLOCK_A_FAILURE was present
 * @failure: its fields; @failure.held is all zero when F_HELD was absent
 * @ncycle: number of ORDLOCK_A_CYCLE steps (0 when absent)
 * @cycle: the steps, victim first
 * @have_result_flags: ORDLOCK_A_RESULT_FLAGS was present
 * @result_flags: its value, ORDLOCK_RESULT_* flags
 */
struct olc_nl_outcome {
	int have_result_flags;
	uint32_t result_flags;
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

int olc_nl_parse_outcome(struct nlattr **tb, uint8_t cmd,
			 struct olc_nl_outcome *o);

/**
 * struct olc_nl_event - a message of the "events" group
 * @event: an enum ordlock_event
 * @owner: the ORDLOCK_A_ENTRY nest (the owner concerned)
 */
/* Edges of a potential deadlock an event carries at most */
#define OLC_NL_POTENTIAL_MAX 16

struct olc_nl_event {
	uint32_t event;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct olc_nl_entry owner;
	int have_failure;
	struct ordlock_failure failure;
	int ncycle;
	struct ordlock_cycle_step cycle[ORDLOCK_CYCLE_MAX];
	uint32_t potential_kind;
	uint64_t order_dropped;
	int npotential;
	struct ordlock_order_edge potential[OLC_NL_POTENTIAL_MAX];
};

int olc_nl_parse_event(struct nlattr **tb, struct olc_nl_event *ev);
/*
 * "deadlock", "timeout", "order", "limit", "owner-died",
 * "potential-deadlock"; NULL when unknown
 */
const char *olc_nl_event_name(uint32_t event);

/* --- domains and counters ------------------------------------------------ */

/* The reply of DOMAIN_GET and DOMAIN_SET */
struct olc_nl_domain {
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	uint32_t policy;
	uint32_t detect_delay_ms;
	uint32_t max_hold_ms;
	int have_names;
	struct olc_rank_names names;
	int have_strict;
	uint32_t strict;
	uint32_t cluster;
	uint32_t fastpath;
	uint32_t fastpath_uid;	/* when @fastpath */
	int have_xd;		/* a cluster domain: the detection across nodes */
	uint32_t xd_state;	/* enum ordlock_xd_state */
	uint32_t xd_members;
	uint32_t xd_pid;	/* the registered ordlock-xdetectd, 0: none */
};

int olc_nl_parse_domain(struct nlattr **tb, struct olc_nl_domain *d);
int olc_nl_domain_get(struct olc_nl *nl, const char *domain,
		      struct olc_nl_domain *out);
/*
 * olc_nl_domain_set() - set what is given: @policy, @delay_ms and
 * @max_hold_ms unless negative, the rank names unless @names is NULL (an
 * empty list removes them). @out may be NULL.
 */
int olc_nl_domain_set(struct olc_nl *nl, const char *domain, long policy,
		      long delay_ms, long max_hold_ms, const struct olc_rank_names *names,
		      struct olc_nl_domain *out);
/*
 * olc_nl_domain_set_all() - olc_nl_domain_set() and strict ranks and the
 * cluster setting (unless negative)
 */
int olc_nl_domain_set_all(struct olc_nl *nl, const char *domain, long policy,
			  long delay_ms, long strict, long max_hold_ms,
			  long cluster, const struct olc_rank_names *names,
			  struct olc_nl_domain *out);
/*
 * olc_nl_domain_set_fast() - olc_nl_domain_set_all() and the fast path
 * (unless @fastpath is negative; @fast_uid is sent unless negative)
 */
int olc_nl_domain_set_fast(struct olc_nl *nl, const char *domain, long policy,
			   long delay_ms, long strict, long max_hold_ms,
			   long cluster, long fastpath, long fast_uid,
			   const struct olc_rank_names *names,
			   struct olc_nl_domain *out);

/**
 * struct olc_nl_stats - the reply of GET_STATS
 * @present: bit (1 << ORDLOCK_S_x) for each counter present
 * @v: the counters, indexed by ORDLOCK_S_x
 */
struct olc_nl_stats {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	int have_policy;
	uint32_t policy;
	int have_delay;
	uint32_t detect_delay_ms;
	uint32_t present;
	uint64_t v[ORDLOCK_S_MAX + 1];
};

int olc_nl_parse_stats(struct nlattr **tb, struct olc_nl_stats *st);
/* GET_STATS of one domain (-ENOENT: no such domain) */
int olc_nl_get_stats(struct olc_nl *nl, const char *domain,
		     struct olc_nl_stats *out);

/* The counters of GET_STATS in the order of the debugfs stats file */
#define OLC_NL_NSTATS	(ORDLOCK_S_MAX - ORDLOCK_S_ACQUIRES + 1)
extern const int olc_nl_stat_order[OLC_NL_NSTATS];
/* The name of counter @attr in the debugfs stats file ("acquires"), or NULL */
const char *olc_nl_stat_name(int attr);

#endif /* ORDLOCK_COMMON_NL_H */
