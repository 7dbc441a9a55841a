/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nlcheck: the checks and helpers of the netlink lock tests (nlcheck.c).
 */
#ifndef ORDLOCK_TEST_NLCHECK_H
#define ORDLOCK_TEST_NLCHECK_H

#include <stdint.h>

#include <linux/ordlock.h>
#include "nltest.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE
#define ACQ ORDLOCK_IOC_ACQUIRE

#define NS_PER_MS	1000000ULL
/* the timeout of every wait that must end otherwise */
#define LONG_MS		60000
#define LONG_NS		(LONG_MS * NS_PER_MS)
/* how long a RESULT or an event that must come may take */
#define WAIT_MS		20000
/* how much earlier than asked a timeout may fire (ms) */
#define EARLY_MS	20

/* The listener of the "events" group, also used for queries (main() opens it) */
extern struct nlt *L;

/* The request got a reply (no netlink error) with @status */
int st_ok(struct nlt *s, int ret, const struct olc_nl_outcome *o,
	  uint32_t status, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* The next RESULT of @s has @status and @cookie */
int result_ok(struct nlt *s, struct olc_nl_outcome *o, uint32_t status,
	      uint64_t cookie, const char *what);
/* The next event of @type about @domain arrives on L */
int event_ok(uint32_t type, const char *domain, struct olc_nl_event *ev,
	     const char *what);
int fail_ok(const struct ordlock_failure *f, uint32_t reason,
	    uint32_t error, const char *what);
int key_ok(const struct ordlock_key *k, uint32_t rank, uint64_t id,
	   unsigned int mode, const char *what);
void diag_cycle(const struct ordlock_cycle_step *c, int n);
/* nlt_acquire() of one key from a new thread (bounded by NLT_REPLY_MS) */
int acquire_elsewhere(struct nlt *s, const char *domain,
		      struct ordlock_key key, uint64_t timeout_ns,
		      uint64_t cookie, struct olc_nl_outcome *o);
/* Entries of a dump of @domain that match key (@rank, @id) and @role */
int count_locks(const char *domain, uint32_t rank, uint64_t id, uint32_t role);
/* The netlink owners of @domain in this process, and what they hold */
int my_nl_owners(const char *domain, long *held);

#endif /* ORDLOCK_TEST_NLCHECK_H */
