// SPDX-License-Identifier: GPL-2.0
/*
 * The tests' use of the shared generic netlink client (tools/common/nl.c):
 * see nltest.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/family.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "barrier.h"
#include "libordlock.h"
#include "nltest.h"
#include "tap.h"

/* Events come in storms: the kernel must drop them, if anyone */
#define NLT_RCVBUF	(8 << 20)

/* Say what did not parse (after -EPROTO); returns @ret */
static int nlt_diag(int ret, const char *what)
{
	if (ret == -EPROTO)
		diag("nlt: %s: %s", what, olc_nl_why());
	else if (ret && ret != -ETIMEDOUT)
		diag("nlt: %s: %s", what, strerror(-ret));
	return ret;
}

struct nlt *nlt_open_fd(int fd, int *err)
{
	struct nlt *s = calloc(1, sizeof(*s));
	int ret = s ? olc_nl_open(&s->nl, fd, 1) : -ENOMEM;

	if (ret) {
		if (ret != -ENOENT)
			diag("opening a socket of the ordlock family: %s",
			     strerror(-ret));
		free(s);
		if (err)
			*err = ret;
		return NULL;
	}
	s->nl->reply_ms = NLT_REPLY_MS;
	/* RESULTs and events that come during a request wait for the test */
	s->nl->keep = 1;
	return s;
}

struct nlt *nlt_open(int *err)
{
	return nlt_open_fd(-1, err);
}

struct nlt *nlt_must_open(void)
{
	int err = 0;
	struct nlt *s = nlt_open(&err);

	if (!s)
		bail_out("cannot open the ordlock generic netlink family: %s",
			 strerror(-err));
	return s;
}

void nlt_close(struct nlt *s)
{
	if (!s)
		return;
	olc_nl_close(s->nl);
	free(s);
}

int nlt_fd(const struct nlt *s)
{
	return olc_nl_fd(s->nl);
}

unsigned int nlt_pending(const struct nlt *s)
{
	return olc_nl_pending(s->nl);
}

const char *nlt_extack_str(const struct nlt *s)
{
	const struct olc_nl_extack *e = &s->nl->ext;
	static char buf[512];
	int len;

	len = snprintf(buf, sizeof(buf), "%s: \"%s\"",
		       e->error ? strerror(e->error) : "no error", e->msg);
	if (e->have_off && len < (int)sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - len, " (offset %u)", e->off);
	if (e->have_miss && len < (int)sizeof(buf))
		snprintf(buf + len, sizeof(buf) - len,
			 " (missing attribute %u)", e->miss_type);
	return buf;
}

/* Requests */

struct nl_msg *nlt_msg_new(struct nlt *s, uint8_t cmd, int flags)
{
	struct nl_msg *msg = olc_nl_msg(s->nl, cmd, flags, 0);

	if (!msg)
		bail_out("nlt_msg_new: out of memory");
	return msg;
}

int nlt_send_only(struct nlt *s, struct nl_msg *msg, uint32_t *seq)
{
	return nlt_diag(olc_nl_send(s->nl, msg, seq), "sending a request");
}

int nlt_request(struct nlt *s, struct nl_msg *msg,
		struct nlattr *tb[ORDLOCK_A_MAX + 1])
{
	int ret = olc_nl_request(s->nl, msg, tb);

	/* the kernel's refusals are what the tests look at: no diag */
	return ret == -EPROTO || ret == -ETIMEDOUT ? nlt_diag(ret, "request") : ret;
}

/* Lock requests */

static int nlt_lock_request(struct nlt *s, struct nl_msg *msg,
			    struct olc_nl_outcome *out)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct olc_nl_outcome tmp;
	uint8_t cmd = ((struct genlmsghdr *)nlmsg_data(nlmsg_hdr(msg)))->cmd;
	int ret;

	ret = nlt_request(s, msg, tb);
	if (ret)
		return ret;
	return nlt_diag(olc_nl_parse_outcome(tb, cmd, out ? out : &tmp), "lock reply");
}

/* An ACQUIRE or CONVERT request (@cmd): the attributes they share */
static struct nl_msg *nlt_lock_msg(struct nlt *s, int cmd, const char *domain,
				   const struct ordlock_key *keys, unsigned int n,
				   uint64_t timeout_ns, uint32_t flags, uint64_t cookie)
{
	struct nl_msg *msg = nlt_msg_new(s, cmd, 0);

	if ((domain && nla_put_string(msg, ORDLOCK_A_DOMAIN, domain)) ||
	    olc_nl_put_keys(msg, keys, n) ||
	    (timeout_ns && nla_put_u64(msg, ORDLOCK_A_TIMEOUT_NS, timeout_ns)) ||
	    (flags && nla_put_u32(msg, ORDLOCK_A_FLAGS, flags)) ||
	    nla_put_u64(msg, ORDLOCK_A_COOKIE, cookie)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

struct nl_msg *nlt_acquire_msg(struct nlt *s, const char *domain,
			       const struct ordlock_key *keys, unsigned int n,
			       uint64_t timeout_ns, uint32_t flags, uint64_t cookie)
{
	return nlt_lock_msg(s, ORDLOCK_CMD_ACQUIRE, domain, keys, n, timeout_ns,
			    flags, cookie);
}

int nlt_acquire(struct nlt *s, const char *domain,
		const struct ordlock_key *keys, unsigned int n,
		uint64_t timeout_ns, uint32_t flags, uint64_t cookie,
		struct olc_nl_outcome *out)
{
	struct nl_msg *msg = nlt_acquire_msg(s, domain, keys, n, timeout_ns,
					     flags, cookie);

	return msg ? nlt_lock_request(s, msg, out) : -EMSGSIZE;
}

int nlt_acquire_lease(struct nlt *s, const char *domain, struct ordlock_key key,
		      uint64_t timeout_ns, uint32_t lease_ms, uint64_t cookie,
		      struct olc_nl_outcome *out)
{
	struct nl_msg *msg = nlt_acquire_msg(s, domain, &key, 1, timeout_ns, 0,
					     cookie);

	if (!msg || nla_put_u32(msg, ORDLOCK_A_LEASE_MS, lease_ms)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlt_lock_request(s, msg, out);
}

struct nl_msg *nlt_convert_msg(struct nlt *s, struct ordlock_key key,
			       uint64_t timeout_ns, uint32_t flags, uint64_t cookie)
{
	return nlt_lock_msg(s, ORDLOCK_CMD_CONVERT, NULL, &key, 1, timeout_ns,
			    flags, cookie);
}

int nlt_convert(struct nlt *s, struct ordlock_key key, uint64_t timeout_ns,
		uint32_t flags, uint64_t cookie, struct olc_nl_outcome *out)
{
	struct nl_msg *msg = nlt_convert_msg(s, key, timeout_ns, flags, cookie);

	return msg ? nlt_lock_request(s, msg, out) : -EMSGSIZE;
}

struct nl_msg *nlt_release_msg(struct nlt *s, const struct ordlock_key *keys,
			       unsigned int n)
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_RELEASE, 0);

	if (n ? olc_nl_put_keys(msg, keys, n) :
		nla_put_u32(msg, ORDLOCK_A_FLAGS, ORDLOCK_RELEASE_ALL)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int nlt_release(struct nlt *s, const struct ordlock_key *keys, unsigned int n,
		struct olc_nl_outcome *out)
{
	struct nl_msg *msg = nlt_release_msg(s, keys, n);

	return msg ? nlt_lock_request(s, msg, out) : -EMSGSIZE;
}

int nlt_cancel(struct nlt *s, uint64_t cookie, struct olc_nl_outcome *out)
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_CANCEL, 0);

	if (nla_put_u64(msg, ORDLOCK_A_COOKIE, cookie)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nlt_lock_request(s, msg, out);
}

/*
 * The first kept message of @cmd, waiting until @deadline for more;
 * NULL with *@err set when none came
 */
static struct nlmsghdr *nlt_next(struct nlt *s, uint8_t cmd, uint64_t deadline,
				 int *err)
{
	struct nlmsghdr *nlh;

	while (!(nlh = olc_nl_take(s->nl, cmd))) {
		*err = olc_nl_pump(s->nl, deadline);
		if (*err)
			return NULL;
	}
	return nlh;
}

int nlt_wait_result(struct nlt *s, unsigned int timeout_ms,
		    struct olc_nl_outcome *out)
{
	struct nlmsghdr *nlh;
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	uint8_t cmd;
	int ret;

	nlh = nlt_next(s, ORDLOCK_CMD_RESULT, olc_nl_now_ms() + timeout_ms, &ret);
	if (!nlh)
		return ret;
	ret = olc_nl_parse_genl(nlh, tb, &cmd);
	if (!ret)
		ret = olc_nl_parse_outcome(tb, cmd, out);
	free(nlh);
	return nlt_diag(ret, "a RESULT");
}

const char *nlt_status_name(uint32_t status)
{
	static const char * const names[] = {
		[ORDLOCK_STATUS_GRANTED] = "granted",
		[ORDLOCK_STATUS_QUEUED] = "queued",
		[ORDLOCK_STATUS_REFUSED] = "refused",
		[ORDLOCK_STATUS_TIMEOUT] = "timeout",
		[ORDLOCK_STATUS_DEADLOCK] = "deadlock",
		[ORDLOCK_STATUS_CANCELLED] = "cancelled",
	};

	if (status < sizeof(names) / sizeof(names[0]) && names[status])
		return names[status];
	return "?";
}

const char *nlt_outcome_str(const struct olc_nl_outcome *o)
{
	static char buf[512];
	int len;

	len = snprintf(buf, sizeof(buf), "cmd %u cookie %llu status %s",
		       o->cmd, (unsigned long long)o->cookie,
		       nlt_status_name(o->status));
	if (o->have_token)
		len += snprintf(buf + len, sizeof(buf) - len, " token %llu",
				(unsigned long long)o->token);
	if (o->error)
		len += snprintf(buf + len, sizeof(buf) - len, " errno %s",
				strerror(o->error));
	if (o->have_failure) {
		char f[256];

		ordlock_strfailure(&o->failure, f, sizeof(f));
		len += snprintf(buf + len, sizeof(buf) - len, " [%s]", f);
	}
	if (o->ncycle)
		snprintf(buf + len, sizeof(buf) - len, " cycle of %d",
			 o->ncycle);
	return buf;
}

/* Dumps */

struct nlt_dump_ctx {
	const char *domain;
	struct olc_nl_entry *v;
	int n, max;
	int keep;
};

static int nlt_dump_one(struct nlattr **tb, void *arg)
{
	struct nlt_dump_ctx *d = arg;
	struct olc_nl_entry e;

	if (!tb[ORDLOCK_A_ENTRY]) {
		diag("nlt: a dump message without ORDLOCK_A_ENTRY");
		return -EPROTO;
	}
	if (olc_nl_parse_entry(tb[ORDLOCK_A_ENTRY], &e))
		return -EPROTO;
	if (d->domain && strcmp(d->domain, e.domain))
		return 0;
	if (d->keep) {
		if (d->n == d->max) {
			struct olc_nl_entry *v;

			d->max = d->max ? 2 * d->max : 256;
			v = realloc(d->v, d->max * sizeof(*v));
			if (!v)
				return -ENOMEM;
			d->v = v;
		}
		d->v[d->n] = e;
	}
	d->n++;
	return 0;
}

int nlt_dump(struct nlt *s, uint8_t cmd, const char *domain,
	     struct olc_nl_entry **out)
{
	struct nlt_dump_ctx d = { .domain = domain, .keep = !!out };
	int ret = olc_nl_dump(s->nl, cmd, nlt_dump_one, &d);

	if (ret) {
		free(d.v);
		return ret == -EPROTO || ret == -ETIMEDOUT ? nlt_diag(ret, "dump") : ret;
	}
	if (out)
		*out = d.v;
	return d.n;
}

int nlt_find_lock(struct nlt *s, const char *domain, uint32_t rank,
		  uint64_t id, uint32_t role, uint32_t position,
		  struct olc_nl_entry *e)
{
	struct olc_nl_entry *v;
	int i, n, ret = -ENOENT;

	n = nlt_dump(s, ORDLOCK_CMD_GET_LOCKS, domain, &v);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (v[i].key.rank == rank && v[i].key.id == id &&
		    v[i].role == role && v[i].position == position) {
			*e = v[i];
			ret = 0;
			break;
		}
	}
	free(v);
	return ret;
}

uint64_t nlt_lock_owner(struct nlt *s, const char *domain, uint32_t rank,
			uint64_t id, uint32_t role, uint32_t position)
{
	struct olc_nl_entry e;

	if (nlt_find_lock(s, domain, rank, id, role, position, &e))
		return 0;
	return e.owner_id;
}

/* Domains and counters */

int nlt_domain_get(struct nlt *s, const char *domain, struct olc_nl_domain *d)
{
	int ret = olc_nl_domain_get(s->nl, domain, d);

	return ret == -EPROTO ? nlt_diag(ret, "DOMAIN_GET") : ret;
}

int nlt_domain_set(struct nlt *s, const char *domain, int policy,
		   long delay_ms, const struct nlt_rank_name *names,
		   int nnames, struct olc_nl_domain *d)
{
	struct olc_rank_names rn;
	int i, ret;

	memset(&rn, 0, sizeof(rn));
	for (i = 0; i < nnames; i++) {
		if (i == ORDLOCK_RANK_NAMES_MAX ||
		    strlen(names[i].name) >= sizeof(rn.v[i].name))
			return -EMSGSIZE;
		rn.v[i].rank = names[i].rank;
		strcpy(rn.v[i].name, names[i].name);
		rn.n++;
	}
	ret = olc_nl_domain_set(s->nl, domain, policy, delay_ms, -1,
				nnames >= 0 ? &rn : NULL, d);
	return ret == -EPROTO ? nlt_diag(ret, "DOMAIN_SET") : ret;
}

int nlt_domain_set_u32(struct nlt *s, const char *domain,
		       const struct nlt_u32 *a, unsigned int n,
		       struct olc_nl_domain *d)
{
	struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_DOMAIN_SET, 0);
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	unsigned int i;
	int ret;

	ret = nla_put_string(msg, ORDLOCK_A_DOMAIN, domain);
	for (i = 0; !ret && i < n; i++)
		ret = nla_put_u32(msg, a[i].type, a[i].value);
	if (ret) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	ret = nlt_request(s, msg, tb);
	if (!ret && d)
		ret = olc_nl_parse_domain(tb, d);
	return ret;
}

int nlt_get_stats(struct nlt *s, const char *domain,
		  uint64_t stats[ORDLOCK_S_MAX + 1])
{
	struct olc_nl_stats st;
	int i, ret;

	ret = olc_nl_get_stats(s->nl, domain, &st);
	if (ret)
		return ret == -EPROTO ? nlt_diag(ret, "GET_STATS") : ret;
	for (i = ORDLOCK_S_ACQUIRES; i <= ORDLOCK_S_MAX; i++) {
		if (!((st.present >> i) & 1)) {
			diag("nlt: GET_STATS reply without counter %d", i);
			return -EPROTO;
		}
	}
	memcpy(stats, st.v, sizeof(st.v));
	return 0;
}

int nlt_family_info(uint32_t *version, uint32_t *maxattr, int *has_events)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_cache *cache = NULL;
	struct genl_family *f;
	int ret;

	if (!sk)
		return -ENOMEM;
	ret = genl_connect(sk);
	if (!ret)
		ret = genl_ctrl_alloc_cache(sk, &cache);
	if (ret < 0) {
		diag("nlt_family_info: %s", nl_geterror(ret));
		ret = ret == -NLE_OBJ_NOTFOUND ? -ENOENT : -EIO;
		goto out;
	}
	f = genl_ctrl_search_by_name(cache, ORDLOCK_GENL_NAME);
	if (!f) {
		ret = -ENOENT;
		goto out;
	}
	*version = genl_family_get_version(f);
	*maxattr = genl_family_get_maxattr(f);
	genl_family_put(f);
	ret = genl_ctrl_resolve_grp(sk, ORDLOCK_GENL_NAME,
				    ORDLOCK_GENL_MCGRP_EVENTS);
	*has_events = ret >= 0;
	ret = 0;
out:
	nl_cache_free(cache);
	nl_socket_free(sk);
	return ret;
}

/* Events */

int nlt_subscribe(struct nlt *s)
{
	return nlt_diag(olc_nl_join_events(s->nl, NLT_RCVBUF), "joining the events group");
}

int nlt_wait_event(struct nlt *s, uint32_t event, const char *domain,
		   unsigned int timeout_ms, struct olc_nl_event *ev)
{
	uint64_t deadline = olc_nl_now_ms() + timeout_ms;
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct nlmsghdr *nlh;
	uint8_t cmd;
	int ret;

	for (;;) {
		nlh = nlt_next(s, ORDLOCK_CMD_EVENT, deadline, &ret);
		if (!nlh)
			return ret;
		ret = olc_nl_parse_genl(nlh, tb, &cmd);
		if (!ret)
			ret = olc_nl_parse_event(tb, ev);
		free(nlh);
		if (ret)
			return nlt_diag(ret, "an event");
		if ((!event || ev->event == event) &&
		    (!domain || !strcmp(ev->domain, domain)))
			return 0;
	}
}

const char *nlt_event_name(uint32_t event)
{
	const char *name = olc_nl_event_name(event);

	return name ? name : "?";
}
