// SPDX-License-Identifier: GPL-2.0
/*
 * t_nl_lease: leases through the generic netlink family.
 *
 *  - ACQUIRE with ORDLOCK_A_LEASE_MS; RENEW answers the time left;
 *  - the lease of a socket that stops renewing expires: a queued waiter's
 *    RESULT grants it with a higher token, the socket receives a REVOKED
 *    message naming the key and its token, its next lock requests are
 *    REFUSED with EKEYEXPIRED (reason revoked) until RELEASE_ALL; the
 *    "events" group hears a REVOKED event and GET_STATS counts it;
 *  - TOKEN_CHECK answers 0 for the live grant and ESTALE for the old one;
 *  - DOMAIN_SET's ORDLOCK_A_MAX_HOLD_MS caps a request that asks for more,
 *    and GET_LOCKS shows the holder's ORDLOCK_E_LEASE_LEFT_MS;
 *  - bad input fails with EINVAL and an extack message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE

/* RENEW: 0 with the outcome and *@left (-1 without ORDLOCK_A_LEFT_MS), or -errno */
static int renew(struct nlt *s, long lease_ms, struct olc_nl_outcome *o, long long *left)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_RENEW, 0);
	int ret;

	if (lease_ms >= 0 && nla_put_u32(msg, ORDLOCK_A_LEASE_MS, (uint32_t)lease_ms))
		bail_out("renew: message too big");
	ret = nlt_request(s, msg, tb);
	if (ret)
		return ret;
	*left = tb[ORDLOCK_A_LEFT_MS] ? (long long)nla_get_u64(tb[ORDLOCK_A_LEFT_MS]) : -1;
	return olc_nl_parse_outcome(tb, ORDLOCK_CMD_RENEW, o);
}

/* TOKEN_CHECK: 0 or the netlink error (negative) */
static int token_check(struct nlt *s, const char *domain, uint32_t rank, uint64_t id,
		       uint64_t token, int with_token)
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_TOKEN_CHECK, 0);
	struct nlattr *key;
	uint32_t seq;
	int ret;

	if (domain && nla_put_string(msg, ORDLOCK_A_DOMAIN, domain))
		bail_out("token_check: message too big");
	key = olc_nl_nest_start(msg, ORDLOCK_A_KEY);
	if (!key || nla_put_u32(msg, ORDLOCK_K_RANK, rank) ||
	    nla_put_u64(msg, ORDLOCK_K_ID, id) ||
	    (with_token && nla_put_u64(msg, ORDLOCK_K_TOKEN, token)))
		bail_out("token_check: message too big");
	nla_nest_end(msg, key);
	ret = olc_nl_send(s->nl, msg, &seq);
	if (ret)
		return ret;
	return olc_nl_wait_end(s->nl, seq, NULL, NULL);
}

struct revoked {
	struct ordlock_failure f;
	int nkeys;
	struct ordlock_key key;
	uint64_t token;
};

/* Wait for the socket's REVOKED message */
static int wait_revoked(struct nlt *s, unsigned int timeout_ms, struct revoked *r)
{
	uint64_t deadline = olc_nl_now_ms() + timeout_ms;
	struct nlattr *tb[ORDLOCK_A_MAX + 1], *k, *kt[ORDLOCK_K_MAX + 1];
	struct nlmsghdr *nlh;
	uint8_t cmd;
	int ret, rem;

	memset(r, 0, sizeof(*r));
	while (!(nlh = olc_nl_take(s->nl, ORDLOCK_CMD_REVOKED))) {
		ret = olc_nl_pump(s->nl, deadline);
		if (ret)
			return ret;
	}
	ret = olc_nl_parse_genl(nlh, tb, &cmd);
	if (!ret && (!tb[ORDLOCK_A_FAILURE] || !tb[ORDLOCK_A_KEYS]))
		ret = -EPROTO;
	if (!ret)
		ret = olc_nl_parse_failure(tb[ORDLOCK_A_FAILURE], &r->f);
	if (!ret) {
		nla_for_each_nested(k, tb[ORDLOCK_A_KEYS], rem) {
			if (nla_parse_nested(kt, ORDLOCK_K_MAX, k, NULL) ||
			    !kt[ORDLOCK_K_RANK] || !kt[ORDLOCK_K_ID] || !kt[ORDLOCK_K_TOKEN]) {
				ret = -EPROTO;
				break;
			}
			if (!r->nkeys++) {
				r->key.rank = nla_get_u32(kt[ORDLOCK_K_RANK]);
				r->key.id = nla_get_u64(kt[ORDLOCK_K_ID]);
				r->key.mode = kt[ORDLOCK_K_MODE] ?
					      (uint16_t)nla_get_u32(kt[ORDLOCK_K_MODE]) : 0;
				r->token = nla_get_u64(kt[ORDLOCK_K_TOKEN]);
			}
		}
	}
	free(nlh);
	return ret;
}

static void test_revoke(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k = ORDLOCK_EX(1, 1), k2 = ORDLOCK_EX(2, 2);
	struct nlt *a = nlt_must_open(), *b = nlt_must_open(), *ev = nlt_must_open();
	uint64_t st[ORDLOCK_S_MAX + 1];
	struct olc_nl_outcome o, r;
	struct olc_nl_event e;
	struct revoked rv;
	long long left = 0;
	uint64_t t1;
	int ret;

	snprintf(dom, sizeof(dom), "%s", olt_domain("nllease"));
	is_int(nlt_subscribe(ev), 0, "events: subscribed");
	is_int(nlt_acquire_lease(a, dom, k, 0, 500, 1, &o), 0, "acquire with a 500 ms lease");
	is_int(o.status, ORDLOCK_STATUS_GRANTED, "granted");
	t1 = o.token;
	is_int(renew(a, -1, &o, &left), 0, "RENEW");
	is_int(o.status, ORDLOCK_STATUS_GRANTED, "RENEW: status granted");
	ok(left > 0 && left <= 500, "RENEW: ORDLOCK_A_LEFT_MS within the lease (%lld)", left);
	is_int(token_check(b, dom, 1, 1, t1, 1), 0, "TOKEN_CHECK: the holder's token is live");

	/* Without the lease, b's RESULT would be a TIMEOUT after 60 s */
	is_int(nlt_acquire(b, dom, &k, 1, OLT_LONG_MS * 1000000ULL, 0, 2, &o), 0,
	       "a second socket queues for the key");
	is_int(o.status, ORDLOCK_STATUS_QUEUED, "queued");
	is_int(nlt_wait_result(b, NLT_REPLY_MS, &r), 0, "its RESULT comes");
	is_int(r.status, ORDLOCK_STATUS_GRANTED, "granted when the lease expired");
	ok(r.token > t1, "with a higher token (%llu > %llu)", (unsigned long long)r.token,
	   (unsigned long long)t1);

	is_int(wait_revoked(a, NLT_REPLY_MS, &rv), 0, "the holder's socket gets REVOKED");
	is_int(rv.f.reason, ORDLOCK_REASON_REVOKED, "REVOKED: reason revoked");
	is_int(rv.f.error, EKEYEXPIRED, "REVOKED: errno EKEYEXPIRED");
	is_int(rv.nkeys, 1, "REVOKED: one key");
	ok(olt_key_eq(&rv.key, 1, 1, EX), "REVOKED: exclusive 1:1");
	is_int(rv.token, t1, "REVOKED: with its token");

	is_int(token_check(b, dom, 1, 1, t1, 1), -ESTALE, "TOKEN_CHECK: the old token is stale");
	ok(strstr(nlt_extack_str(b), "stale") != NULL, "TOKEN_CHECK: extack says so (%s)",
	   nlt_extack_str(b));
	is_int(token_check(a, dom, 1, 1, r.token, 1), 0, "TOKEN_CHECK: the new token is live");

	ret = nlt_acquire(a, dom, &k2, 1, 0, ORDLOCK_ACQUIRE_TRY, 3, &o);
	is_int(ret, 0, "the revoked socket's next ACQUIRE is answered");
	is_int(o.status, ORDLOCK_STATUS_REFUSED, "REFUSED");
	is_int(o.error, EKEYEXPIRED, "errno EKEYEXPIRED");
	is_int(o.failure.reason, ORDLOCK_REASON_REVOKED, "reason revoked");
	is_int(o.failure.cycle_len, 1, "one key revoked");
	is_int(renew(a, -1, &o, &left), 0, "RENEW of the revoked socket is answered");
	is_int(o.error, EKEYEXPIRED, "RENEW: EKEYEXPIRED");
	is_int(nlt_release(a, &k, 1, &o), 0, "RELEASE of the key is answered");
	is_int(o.error, EKEYEXPIRED, "RELEASE of a key: EKEYEXPIRED");
	is_int(nlt_release(a, NULL, 0, &o), 0, "RELEASE_ALL");
	is_int(o.status, ORDLOCK_STATUS_GRANTED, "RELEASE_ALL acknowledges");
	is_int(nlt_acquire(a, dom, &k2, 1, 0, ORDLOCK_ACQUIRE_TRY, 4, &o), 0, "ACQUIRE again");
	is_int(o.status, ORDLOCK_STATUS_GRANTED, "granted again");

	ret = nlt_wait_event(ev, ORDLOCK_EVENT_REVOKED, dom, NLT_REPLY_MS, &e);
	is_int(ret, 0, "events: a REVOKED event");
	is_int(e.failure.reason, ORDLOCK_REASON_REVOKED, "events: with the failure record");
	is_int(nlt_get_stats(ev, dom, st), 0, "GET_STATS");
	is_int(st[ORDLOCK_S_REVOCATIONS], 1, "GET_STATS: one revocation");
	nlt_close(a);
	nlt_close(b);
	nlt_close(ev);
}

static void test_max_hold(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k = ORDLOCK_EX(3, 3);
	struct nlt *a = nlt_must_open();
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct olc_nl_domain d;
	struct olc_nl_outcome o;
	struct olc_nl_entry e;
	struct nl_msg *msg;
	long long left = 0;

	snprintf(dom, sizeof(dom), "%s", olt_domain("nlmaxhold"));
	msg = nlt_msg_new(a, ORDLOCK_CMD_DOMAIN_SET, 0);
	if (nla_put_string(msg, ORDLOCK_A_DOMAIN, dom) ||
	    nla_put_u32(msg, ORDLOCK_A_MAX_HOLD_MS, 2000))
		bail_out("DOMAIN_SET: message too big");
	is_int(nlt_request(a, msg, tb), 0, "DOMAIN_SET max_hold_ms 2000");
	is_int(olc_nl_parse_domain(tb, &d), 0, "DOMAIN_SET: the reply parses");
	is_int(d.max_hold_ms, 2000, "DOMAIN_SET: the reply says 2000");
	is_int(nlt_domain_get(a, dom, &d), 0, "DOMAIN_GET");
	is_int(d.max_hold_ms, 2000, "DOMAIN_GET: max_hold_ms 2000");
	is_int(nlt_acquire_lease(a, dom, k, 0, 600000, 1, &o), 0, "acquire asking for 10 minutes");
	is_int(o.status, ORDLOCK_STATUS_GRANTED, "granted");
	is_int(nlt_find_lock(a, dom, 3, 3, ORDLOCK_ROLE_HOLDER, 0, &e), 0, "GET_LOCKS: the holder");
	ok(OLC_NL_HAS(&e, ORDLOCK_E_LEASE_LEFT_MS), "GET_LOCKS: the holder has a lease");
	ok(e.lease_left_ms > 0 && e.lease_left_ms <= 2000,
	   "GET_LOCKS: capped to max_hold_ms (%llu left)", (unsigned long long)e.lease_left_ms);
	is_int(renew(a, 600000, &o, &left), 0, "RENEW asking for 10 minutes");
	ok(left > 0 && left <= 2000, "RENEW: capped (%lld left)", left);
	is_int(nlt_release(a, NULL, 0, &o), 0, "release");
	nlt_close(a);
}

static void test_bad_input(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k = ORDLOCK_EX(4, 4);
	struct nlt *a = nlt_must_open();
	struct olc_nl_outcome o;
	struct nl_msg *msg;
	struct nlattr *keys, *key;
	long long left;

	snprintf(dom, sizeof(dom), "%s", olt_domain("nlleasebad"));
	is_int(token_check(a, dom, 4, 4, 1, 0), -EINVAL, "TOKEN_CHECK without a token: EINVAL");
	ok(strstr(nlt_extack_str(a), "token") != NULL, "  extack: %s", nlt_extack_str(a));
	msg = nlt_msg_new(a, ORDLOCK_CMD_TOKEN_CHECK, 0);
	is_int(nlt_request(a, msg, NULL), -EINVAL, "TOKEN_CHECK without a key: EINVAL");
	is_int(token_check(a, "a b", 4, 4, 1, 1), -EINVAL, "TOKEN_CHECK, bad domain: EINVAL");
	is_int(token_check(a, "no-such-domain-x", 4, 4, 1, 1), -ESTALE,
	       "TOKEN_CHECK, a domain that does not exist: ESTALE");
	is_int(token_check(a, dom, 4, 4, 0, 1), -ESTALE, "TOKEN_CHECK, token 0: ESTALE");

	is_int(renew(a, -1, &o, &left), 0, "RENEW holding nothing is answered");
	is_int(o.status, ORDLOCK_STATUS_REFUSED, "RENEW holding nothing: REFUSED");
	is_int(o.error, ENOENT, "RENEW holding nothing: ENOENT");
	is_int(o.failure.reason, ORDLOCK_REASON_NOT_HELD, "RENEW holding nothing: not-held");

	/* A key with a token in an ACQUIRE */
	msg = nlt_msg_new(a, ORDLOCK_CMD_ACQUIRE, 0);
	keys = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	key = olc_nl_nest_start(msg, ORDLOCK_A_KEY);
	if (!keys || !key || nla_put_u32(msg, ORDLOCK_K_RANK, 4) ||
	    nla_put_u64(msg, ORDLOCK_K_ID, 4) || nla_put_u32(msg, ORDLOCK_K_MODE, EX) ||
	    nla_put_u64(msg, ORDLOCK_K_TOKEN, 5))
		bail_out("message too big");
	nla_nest_end(msg, key);
	nla_nest_end(msg, keys);
	is_int(nlt_request(a, msg, NULL), -EINVAL, "ACQUIRE with a key's token: EINVAL");
	ok(strstr(nlt_extack_str(a), "token") != NULL, "  extack: %s", nlt_extack_str(a));

	msg = nlt_convert_msg(a, k, 0, 0, 1);
	if (!msg || nla_put_u32(msg, ORDLOCK_A_LEASE_MS, 10))
		bail_out("message too big");
	is_int(nlt_request(a, msg, NULL), -EINVAL, "CONVERT with a lease: EINVAL");
	msg = nlt_release_msg(a, NULL, 0);
	if (!msg || nla_put_u32(msg, ORDLOCK_A_LEASE_MS, 10))
		bail_out("message too big");
	is_int(nlt_request(a, msg, NULL), -EINVAL, "RELEASE with a lease: EINVAL");
	ok(strstr(nlt_extack_str(a), "not taken") != NULL, "  extack: %s", nlt_extack_str(a));
	msg = nlt_msg_new(a, ORDLOCK_CMD_RENEW, 0);
	if (nla_put_u64(msg, ORDLOCK_A_TIMEOUT_NS, 10))
		bail_out("message too big");
	is_int(nlt_request(a, msg, NULL), -EINVAL, "RENEW with a timeout: EINVAL");
	nlt_close(a);
}

int main(void)
{
	watchdog_start(180);
	test_bad_input();
	test_revoke();
	test_max_hold();
	return tap_done();
}
