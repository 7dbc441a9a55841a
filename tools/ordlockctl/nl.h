/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordlockctl: netlink into its model. The client itself is shared with the
 * tests (../common/nl.h); here its replies become the records of parse.h,
 * with what the kernel sent made printable.
 */
#ifndef ORDLOCKCTL_NL_H
#define ORDLOCKCTL_NL_H

#include <stdint.h>
#include <linux/ordlock.h>

#include "../common/nl.h"
#include "parse.h"

/*
 * olc_nl_open_ctl() - a socket of the family for ordlockctl: a signal
 * ends a wait (-EINTR), overruns are counted (nl->lost) and the waits go
 * on. -ENOENT when the family is not registered, or another -errno.
 */
int olc_nl_open_ctl(struct olc_nl **out);

/* The extack message of the last refused request, or "" */
const char *olc_nl_extack(const struct olc_nl *nl);

/* Join the "events" group (a 1 MiB receive buffer). 0 or -errno */
int olc_nl_join(struct olc_nl *nl);
/*
 * olc_nl_wait_event() - wait at most @timeout_ms (-1: forever) for events;
 * call @fn for each. Returns the number of events, 0 on timeout, -EINTR
 * when a signal came, or -errno.
 */
int olc_nl_wait_event(struct olc_nl *nl, int timeout_ms, olc_nl_fn fn,
		      void *arg);

/* The owner fields of @e, printable ("?" for no command); 0 or -EPROTO */
int olc_nl_who(const struct olc_nl_entry *e, struct olc_who *w);
/* A nest of cycle steps (ORDLOCK_A_CYCLE) into @steps: their number or -EPROTO */
int olc_nl_cycle(struct nlattr *nest, struct ordlock_cycle_step *steps);
/* Copy string attribute @a (may be NULL: "") printable into @dst */
void olc_nl_copy_str(char *dst, size_t len, const struct nlattr *a);

/* The dumps, into the common model */
int olc_nl_get_graph(struct olc_nl *nl, struct olc_edges *out);
int olc_nl_get_locks(struct olc_nl *nl, struct olc_locks *out);
int olc_nl_get_owners(struct olc_nl *nl, struct olc_owners *out);
/* GET_STATS of one domain (-ENOENT: no such domain) */
int olc_nl_domain_stats(struct olc_nl *nl, const char *domain,
			struct olc_domain_stats *out);

#endif /* ORDLOCKCTL_NL_H */
