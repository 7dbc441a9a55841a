/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordlockctl: the generic netlink family "ordlock" (libnl-genl-3).
 *
 * libnl builds and parses the messages; sending and receiving is done here
 * with a deadline, so that nothing waits forever, and the extended ack of
 * a refused request is kept for "kernel reports: ...".
 */
#ifndef ORDLOCKCTL_NL_H
#define ORDLOCKCTL_NL_H

#include <stdint.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <linux/ordlock.h>

#include "parse.h"

/* How long a reply may take */
#define OLC_NL_REPLY_MS	10000

struct olc_nl {
	struct nl_sock *sk;
	int family;
	int events_grp;
	unsigned char *buf;
	size_t buflen;
	int ext_error;		/* errno of the last refused request */
	char ext_msg[256];	/* its extack message, "" when none */
	unsigned long lost;	/* events lost to receive buffer overruns */
};

/*
 * olc_nl_open() - a socket of the family. -ENOENT when the family is not
 * registered (the module is not loaded), or another -errno.
 */
int olc_nl_open(struct olc_nl **out);
void olc_nl_close(struct olc_nl *nl);

/* A request of the family, or NULL (out of memory) */
struct nl_msg *olc_nl_msg(struct olc_nl *nl, uint8_t cmd, int flags);

/* Called with the top-level attributes of each reply (or dump entry) */
typedef int (*olc_nl_fn)(struct nlattr **tb, void *arg);

/*
 * olc_nl_transact() - send @msg (consumed), call @fn for each reply until
 * the ack or the end of the dump. 0, the request's -errno (then
 * olc_nl_extack() explains it), -ETIMEDOUT, or the first error of @fn.
 */
int olc_nl_transact(struct olc_nl *nl, struct nl_msg *msg, olc_nl_fn fn,
		    void *arg);
/* A dump of @cmd without attributes */
int olc_nl_dump(struct olc_nl *nl, uint8_t cmd, olc_nl_fn fn, void *arg);

/* The extack message of the last refused request, or "" */
const char *olc_nl_extack(const struct olc_nl *nl);

/* Join the "events" group. 0 or -errno */
int olc_nl_join_events(struct olc_nl *nl);
/*
 * olc_nl_wait_event() - wait at most @timeout_ms (-1: forever) for events;
 * call @fn for each. Returns the number of events, 0 on timeout, -EINTR
 * when a signal came, or -errno.
 */
int olc_nl_wait_event(struct olc_nl *nl, int timeout_ms, olc_nl_fn fn,
		      void *arg);

/* Attribute helpers: 0 or -EPROTO */
int olc_nl_parse_nest(struct nlattr **tb, int max, const struct nlattr *nest);
int olc_nl_who(struct nlattr **etb, struct olc_who *w);
int olc_nl_key(const struct nlattr *nest, uint32_t *rank, uint64_t *id,
	       unsigned int *mode);
int olc_nl_failure(const struct nlattr *nest, struct ordlock_failure *f);
/* A nest of cycle steps (ORDLOCK_A_CYCLE): at most @max into @steps */
int olc_nl_cycle(const struct nlattr *nest, struct ordlock_cycle_step *steps,
		 unsigned int max);
void olc_nl_copy_str(char *dst, size_t len, const struct nlattr *a);

/* The dumps, into the common model */
int olc_nl_get_graph(struct olc_nl *nl, struct olc_edges *out);
int olc_nl_get_locks(struct olc_nl *nl, struct olc_locks *out);
int olc_nl_get_owners(struct olc_nl *nl, struct olc_owners *out);
/* GET_STATS of one domain (-ENOENT: no such domain) */
int olc_nl_get_stats(struct olc_nl *nl, const char *domain,
		     struct olc_domain_stats *out);

/* A domain's settings */
struct olc_domain_info {
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int policy;
	unsigned int detect_delay_ms;
	int have_names;
	struct olc_rank_names names;
};

int olc_nl_domain_get(struct olc_nl *nl, const char *domain,
		      struct olc_domain_info *out);

/* What DOMAIN_SET changes */
struct olc_domain_set {
	int set_policy;
	unsigned int policy;
	int set_delay;
	unsigned int detect_delay_ms;
	int set_names;
	struct olc_rank_names names;
};

int olc_nl_domain_set(struct olc_nl *nl, const char *domain,
		      const struct olc_domain_set *set,
		      struct olc_domain_info *out);

#endif /* ORDLOCKCTL_NL_H */
