/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Requests: acquiring a sorted set of keys all or nothing, waiting in FIFO
 * order (wait.h), converting, and releasing. One code path for every front
 * end.
 */
#ifndef _ORDLOCK_REQUEST_H
#define _ORDLOCK_REQUEST_H

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/types.h>

#include "keys.h"
#include "resource.h"

struct ordlock_hold;
struct ordlock_owner;

/* ordlock_take(): a key of a REORDER request that breaks the order is busy */
#define ORDLOCK_TAKE_WOULD_WAIT 2

/**
 * struct ordlock_request - an acquire or a conversion in progress
 * @owner: the owner; its lock is held by whoever moves the request on
 * @keys: the keys (one for a conversion), validated, sorted and merged
 * @n: number of keys
 * @try: never wait
 * @reorder: ORDLOCK_ACQUIRE_REORDER: keys that break the order are tried,
 *	and would one wait, the held keys above are let go (request.c)
 * @notify: NULL to wait in the calling task; else the request is
 *	asynchronous and @w calls it when granted
 * @next: index of the key being taken
 * @convert: a conversion of @hold
 * @active: started and not over
 * @waited: had to wait for at least one key
 * @old_mode: the mode @hold had before a conversion
 * @hold: the hold a conversion converts
 * @timeout_ns: the longest the request may wait
 * @deadline: when the whole request times out; set when it first waits
 *	(0 before)
 * @check_at: when to look for a cycle (0: not, or done)
 * @xd_at: when to announce the current wait to ordlock-xdetectd (0: not,
 *	or done: xdetect.c, ordlock_xd_announce_at())
 * @cycle_len: length of the cycle found, for the failure record
 * @holds: one hold per key, in key order, linked by owner_node: those
 *	before @cur are granted, @cur and those after it are blank
 * @cur: the hold of key @next
 * @w: the waiter of the current wait
 * @token: the fencing token, once granted
 * @strict: the domain had strict ranks when the request started
 * @try_upto: keys before this index break the order (REORDER): they are
 *	only tried, never waited for
 * @result_flags: ORDLOCK_RESULT_* of the request
 * @released: the lowest held key the request let go (ORDLOCK_RESULT_RELEASED)
 * @cluster_wait: an asynchronous request waits for the cluster's lock of
 *	key @next (ordlock_hold_blkp() of @cur, from the backend's
 *	lock_async), granted locally
 * @cluster_deadline: when that wait gives up
 * @own_keys: the union of the keys let go and the requested ones, which
 *	@keys points at after a REORDER let keys go; freed when the request
 *	ends (and @keys with it)
 * @credit: resources in use counted ahead for the keys left
 *	(ordlock_table_reserve()) and not drawn on yet; given back before the
 *	request waits or ends, so that a reservation never outlives a run of
 *	ordlock_request_step()
 */
struct ordlock_request {
	struct ordlock_owner *owner;
	const struct ordlock_rkey *keys;
	unsigned int n;
	bool try;
	bool reorder;
	void (*notify)(struct ordlock_waiter *w);

	unsigned int next;
	bool convert;
	bool active;
	bool waited;
	u32 old_mode;
	struct ordlock_hold *hold;
	u64 timeout_ns;
	ktime_t deadline;
	ktime_t check_at;
	ktime_t xd_at;
	unsigned int cycle_len;
	struct list_head holds;
	struct ordlock_hold *cur;
	struct ordlock_waiter w;
	u64 token;
	bool strict;
	unsigned int try_upto;
	u32 result_flags;
	struct ordlock_key released;
	bool cluster_wait;
	ktime_t cluster_deadline;
	struct ordlock_rkey *own_keys;
	unsigned int credit;
};

/* The caller's index of the key being taken, for the failure record */
static inline u32 ordlock_request_index(const struct ordlock_request *req)
{
	return req->next < req->n ? req->keys[req->next].index : ~0U;
}

/*
 * When a request waiting on this node must look again before its deadline:
 * for a cycle (@check_at) or to announce its wait (@xd_at); 0: never
 */
static inline ktime_t ordlock_request_check_at(const struct ordlock_request *req)
{
	if (!req->xd_at || (req->check_at && ktime_before(req->check_at, req->xd_at)))
		return req->check_at;
	return req->xd_at;
}

int ordlock_request_start(struct ordlock_request *req, u64 timeout_ns);
int ordlock_request_convert(struct ordlock_request *req, u64 timeout_ns);
int ordlock_request_poll(struct ordlock_request *req);
int ordlock_request_cancel(struct ordlock_request *req);
ktime_t ordlock_request_next_event(const struct ordlock_request *req);

int ordlock_req_acquire(struct ordlock_owner *owner, const struct ordlock_rkey *keys,
			unsigned int n, u64 timeout_ns, u32 flags, u64 *token,
			u32 *result_flags, ktime_t *deadline);
int ordlock_req_convert(struct ordlock_owner *owner, const struct ordlock_rkey *key,
			u64 timeout_ns, bool try, u64 *token);
int ordlock_req_release_keys(struct ordlock_owner *owner,
			     const struct ordlock_rkey *keys, unsigned int n);
unsigned int ordlock_req_release_token(struct ordlock_owner *owner, u64 token);
unsigned int ordlock_req_release_all(struct ordlock_owner *owner);
void ordlock_req_owner_gone(struct ordlock_owner *owner);

/* The request's machinery, for the conversions (convert.c) */
int ordlock_request_init(struct ordlock_request *req, bool convert);
int ordlock_request_fail(struct ordlock_request *req, int ret);
int ordlock_request_converted(struct ordlock_request *req);
int ordlock_request_took(struct ordlock_request *req, int ret);
struct ordlock_hold *ordlock_adopt(struct ordlock_owner *owner,
				   const struct ordlock_rkey *key);

/* The order rule and REORDER (rule.c), for request.c */
int ordlock_check_order(struct ordlock_owner *owner,
			const struct ordlock_rkey *first, bool strict);
int ordlock_check_held(struct ordlock_owner *owner,
		       const struct ordlock_rkey *keys, unsigned int n);
unsigned int ordlock_reorder_split(struct ordlock_request *req);
int ordlock_reorder(struct ordlock_request *req);
u32 ordlock_req_held(struct ordlock_owner *owner);

#endif /* _ORDLOCK_REQUEST_H */
