// SPDX-License-Identifier: GPL-2.0
/*
 * t_nl_bad: what the "ordlock" family refuses, and that refusing changes
 * nothing.
 *
 *  - malformed requests: missing attributes (keys, rank, id, mode, cookie,
 *    domain), wrong types (u8 where u64, u64 where u32, u32 where a
 *    string), out-of-range values, oversized and invalid names, unknown
 *    attributes (top level, inside a key, inside KEYS), attributes the
 *    command does not take, unknown flags, too many keys, trailing bytes,
 *    a non-zero genetlink reserved field, unknown commands. Each fails
 *    with the right errno and an extack message (or, for a missing
 *    attribute, its type), pointing at the offending attribute; afterwards
 *    the sending socket owns nothing, the domain it named does not exist,
 *    a configured domain is unchanged;
 *  - DOMAIN_SET needs CAP_NET_ADMIN: refused (EPERM) to a process without
 *    it (capability dropped, or setuid to nobody after opening the
 *    socket), and to a root process write()ing on a socket an unprivileged
 *    process opened; the unprivileged may still read, and lock when they
 *    may open /dev/ordlock (root without CAP_NET_ADMIN may, nobody may not:
 *    EACCES);
 *  - another network namespace: the family resolves, every request fails
 *    with EOPNOTSUPP and an extack saying why, dumps show nothing of the
 *    initial namespace, and its listeners get none of its events.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "barrier.h"
#include "libordlock.h"
#include "nlcheck.h"	/* SH, EX, LONG_MS, LONG_NS, WAIT_MS */
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

/* The socket that sends the malformed requests; it never owns anything */
static struct nlt *S;
/* Queries: nlcheck's L (my_nl_owners() asks through it), opened by main() */
/* The domain the malformed requests name; it must never come to exist */
static char dom[ORDLOCK_DOMAIN_NAME_MAX];
/* A configured domain that malformed DOMAIN_SETs must leave alone */
static char cfgdom[ORDLOCK_DOMAIN_NAME_MAX];
static struct olc_nl_domain cfg0;

/* No extack message required: the refusal comes from the netlink core */
static const char NOMSG[] = "";

/* Expectations of a refusal */
struct want {
	int error;		/* positive errno */
	const char *msg;	/* part of the extack message; NULL: any; NOMSG */
	long off;		/* offset of the attribute named, or -1 */
	long miss;		/* type of the missing attribute, or -1 */
};

static int same_domain(const struct olc_nl_domain *a, const struct olc_nl_domain *b)
{
	unsigned int i;

	if (a->policy != b->policy || a->detect_delay_ms != b->detect_delay_ms ||
	    a->names.n != b->names.n)
		return 0;
	for (i = 0; i < a->names.n; i++)
		if (a->names.v[i].rank != b->names.v[i].rank ||
		    strcmp(a->names.v[i].name, b->names.v[i].name))
			return 0;
	return 1;
}

/* Nothing changed: no owner, no domain @dom, @cfgdom as configured */
static int unchanged(void)
{
	struct olc_nl_domain d;
	int owners, ret, cond = 1;
	long held;

	owners = my_nl_owners(NULL, &held);
	if (owners) {
		diag("  %d netlink owners of this process exist", owners);
		cond = 0;
	}
	ret = nlt_domain_get(L, dom, &d);
	if (ret != -ENOENT) {
		diag("  domain %s: %s", dom, ret ? strerror(-ret) : "exists");
		cond = 0;
	}
	ret = nlt_domain_get(L, cfgdom, &d);
	if (ret || !same_domain(&d, &cfg0)) {
		diag("  domain %s changed (%s)", cfgdom,
		     ret ? strerror(-ret) : "settings differ");
		cond = 0;
	}
	if (olt_probe(dom, 1, 1, EX) || olt_probe(NULL, 1, 1, EX)) {
		diag("  key 1:1 is held");
		cond = 0;
	}
	return cond;
}

/* Send @msg on S; it must be refused as @w says, and change nothing */
static void refused(struct nl_msg *msg, struct want w, const char *what)
{
	int ret = nlt_request(S, msg, NULL);
	struct olc_nl_extack e = S->nl->ext;

	if (!ok(ret == -w.error, "%s: %s", what, strerror(w.error))) {
		diag("  got %s", ret ? strerror(-ret) : "success");
		if (!ret) {
			ok(unchanged(), "%s: nothing changed", what);
			/* start afresh for the cases that follow */
			nlt_close(S);
			S = nlt_must_open();
			snprintf(dom, sizeof(dom), "%s", olt_domain("nlbad"));
			return;
		}
	}
	if (w.miss >= 0) {
		ok(e.have_miss && e.miss_type == (uint32_t)w.miss,
		   "%s: extack names the missing attribute %ld", what, w.miss);
		ok(e.msg[0] || e.have_miss,
		   "%s: extack explains (\"%s\", missing type %u)", what,
		   e.msg, e.miss_type);
		if (!e.msg[0])
			diag("  note: no extack message text, only the missing type");
	} else if (w.msg == NOMSG) {
		diag("  extack: \"%s\"", e.msg);
	} else {
		ok(e.msg[0] && (!w.msg || strstr(e.msg, w.msg)),
		   "%s: extack \"%s\"", what, e.msg);
		if (w.msg && !strstr(e.msg, w.msg))
			diag("  want a message with \"%s\"", w.msg);
	}
	if (w.off >= 0) {
		ok(e.have_off && e.off == (uint32_t)w.off,
		   "%s: extack points at the attribute (offset %ld)", what, w.off);
		if (!e.have_off || e.off != (uint32_t)w.off)
			diag("  got %s offset %u", e.have_off ? "" : "no", e.off);
	}
	ok(unchanged(), "%s: nothing changed", what);
}

static struct want W(int error, const char *msg, long off, long miss)
{
	struct want w = { error, msg, off, miss };

	return w;
}

/* ACQUIRE of domain @dom with the given attributes so far */
/* A nest @type with one u32 in it (libnl drops an empty nest) */
static void put_nest(struct nl_msg *msg, int type)
{
	struct nlattr *nest = nla_nest_start(msg, type | NLA_F_NESTED);

	nla_put_u32(msg, 1, 0);
	nla_nest_end(msg, nest);
}

static struct nl_msg *acq(void)
{
	struct nl_msg *msg = nlt_msg_new(S, ORDLOCK_CMD_ACQUIRE, 0);

	nla_put_string(msg, ORDLOCK_A_DOMAIN, dom);
	nla_put_u64(msg, ORDLOCK_A_COOKIE, 1);
	return msg;
}

static void put_keys(struct nl_msg *msg, const struct ordlock_key *k,
		     unsigned int n)
{
	struct nlattr *nest = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	unsigned int i;

	for (i = 0; i < n; i++)
		olc_nl_put_key(msg, ORDLOCK_A_KEY, &k[i]);
	nla_nest_end_keep_empty(msg, nest);
}

static void test_acquire_malformed(void)
{
	struct ordlock_key k11 = ORDLOCK_EX(1, 1), k12 = ORDLOCK_EX(1, 2);
	struct nlattr *keys, *key;
	struct ordlock_key *many;
	char trail[2] = { 1, 1 };
	struct nl_msg *msg;
	char name[64];
	long off, n;
	unsigned int i;

	diag("malformed ACQUIRE requests");
	msg = acq();
	refused(msg, W(EINVAL, "missing keys", -1, ORDLOCK_A_KEYS),
		"ACQUIRE without keys");

	msg = acq();
	off = olc_nl_offset(msg);
	nla_put(msg, ORDLOCK_A_KEYS | NLA_F_NESTED, 0, NULL);
	refused(msg, W(EINVAL, "no keys", off, -1), "ACQUIRE with an empty ORDLOCK_A_KEYS");

	msg = acq();
	keys = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	olc_nl_put_key(msg, ORDLOCK_A_KEY, &k11);
	off = olc_nl_offset(msg);
	key = olc_nl_nest_start(msg, ORDLOCK_A_KEY);
	nla_put_u64(msg, ORDLOCK_K_ID, 2);
	nla_put_u32(msg, ORDLOCK_K_MODE, EX);
	nla_nest_end(msg, key);
	nla_nest_end(msg, keys);
	refused(msg, W(EINVAL, "rank", off, -1), "a key without rank (after a valid one)");

	msg = acq();
	keys = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	off = olc_nl_offset(msg);
	key = olc_nl_nest_start(msg, ORDLOCK_A_KEY);
	nla_put_u32(msg, ORDLOCK_K_RANK, 1);
	nla_put_u32(msg, ORDLOCK_K_MODE, EX);
	nla_nest_end(msg, key);
	nla_nest_end(msg, keys);
	refused(msg, W(EINVAL, "id", off, -1), "a key without id");

	msg = acq();
	keys = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	olc_nl_put_key(msg, ORDLOCK_A_KEY, &k11);
	off = olc_nl_offset(msg);
	k12.mode = 0;
	olc_nl_put_key(msg, ORDLOCK_A_KEY, &k12);
	k12.mode = EX;
	nla_nest_end(msg, keys);
	refused(msg, W(EINVAL, "mode", off, -1), "a key without mode");

	msg = acq();
	keys = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	key = olc_nl_nest_start(msg, ORDLOCK_A_KEY);
	nla_put_u32(msg, ORDLOCK_K_RANK, 1);
	off = olc_nl_offset(msg);
	nla_put_u8(msg, ORDLOCK_K_ID, 1);
	nla_put_u32(msg, ORDLOCK_K_MODE, EX);
	nla_nest_end(msg, key);
	nla_nest_end(msg, keys);
	refused(msg, W(EINVAL, NULL, off, -1), "ORDLOCK_K_ID as u8 (u64 expected)");

	msg = acq();
	keys = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	key = olc_nl_nest_start(msg, ORDLOCK_A_KEY);
	off = olc_nl_offset(msg);
	nla_put_u64(msg, ORDLOCK_K_RANK, 1);
	nla_put_u64(msg, ORDLOCK_K_ID, 1);
	nla_put_u32(msg, ORDLOCK_K_MODE, EX);
	nla_nest_end(msg, key);
	nla_nest_end(msg, keys);
	refused(msg, W(EINVAL, NULL, off, -1), "ORDLOCK_K_RANK as u64 (u32 expected)");

	msg = acq();
	keys = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	key = olc_nl_nest_start(msg, ORDLOCK_A_KEY);
	nla_put_u32(msg, ORDLOCK_K_RANK, 1);
	nla_put_u64(msg, ORDLOCK_K_ID, 1);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_K_MODE, 3);
	nla_nest_end(msg, key);
	nla_nest_end(msg, keys);
	refused(msg, W(ERANGE, NULL, off, -1), "mode 3 (out of range)");

	msg = acq();
	keys = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	key = olc_nl_nest_start(msg, ORDLOCK_A_KEY);
	nla_put_u32(msg, ORDLOCK_K_RANK, 1);
	nla_put_u64(msg, ORDLOCK_K_ID, 1);
	nla_put_u32(msg, ORDLOCK_K_MODE, EX);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_K_MAX + 1, 0);
	nla_nest_end(msg, key);
	nla_nest_end(msg, keys);
	refused(msg, W(EINVAL, NULL, off, -1), "an unknown attribute inside a key");

	msg = acq();
	off = olc_nl_offset(msg);
	keys = nla_nest_start(msg, ORDLOCK_A_KEYS);
	/* libnl may set NLA_F_NESTED itself: clear it */
	keys->nla_type &= ~NLA_F_NESTED;
	olc_nl_put_key(msg, ORDLOCK_A_KEY, &k11);
	nla_nest_end(msg, keys);
	refused(msg, W(EINVAL, "NLA_F_NESTED", off, -1),
		"ORDLOCK_A_KEYS without NLA_F_NESTED");

	msg = nlt_msg_new(S, ORDLOCK_CMD_ACQUIRE, 0);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, dom);
	put_keys(msg, &k11, 1);
	off = olc_nl_offset(msg);
	nla_put_u8(msg, ORDLOCK_A_COOKIE, 1);
	refused(msg, W(EINVAL, NULL, off, -1), "ORDLOCK_A_COOKIE as u8 (u64 expected)");

	msg = acq();
	put_keys(msg, &k11, 1);
	off = olc_nl_offset(msg);
	nla_put_u64(msg, ORDLOCK_A_FLAGS, 0);
	refused(msg, W(EINVAL, NULL, off, -1), "ORDLOCK_A_FLAGS as u64 (u32 expected)");

	msg = nlt_msg_new(S, ORDLOCK_CMD_ACQUIRE, 0);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_DOMAIN, 0x41414141);
	put_keys(msg, &k11, 1);
	refused(msg, W(EINVAL, NULL, off, -1),
		"ORDLOCK_A_DOMAIN as u32 (a string expected)");

	for (n = 32; n <= 40; n += 8) {
		memset(name, 'a', n);
		name[n] = 0;
		msg = nlt_msg_new(S, ORDLOCK_CMD_ACQUIRE, 0);
		off = olc_nl_offset(msg);
		nla_put_string(msg, ORDLOCK_A_DOMAIN, name);
		put_keys(msg, &k11, 1);
		snprintf(name, sizeof(name), "a domain name of %ld characters", n);
		refused(msg, W(EINVAL, NULL, off, -1), name);
	}

	msg = nlt_msg_new(S, ORDLOCK_CMD_ACQUIRE, 0);
	off = olc_nl_offset(msg);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, "bad/name");
	put_keys(msg, &k11, 1);
	refused(msg, W(EINVAL, "domain name", off, -1), "a domain name with a '/'");

	msg = nlt_msg_new(S, ORDLOCK_CMD_ACQUIRE, 0);
	off = olc_nl_offset(msg);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, "");
	put_keys(msg, &k11, 1);
	refused(msg, W(EINVAL, "domain name", off, -1), "an empty domain name");

	msg = acq();
	put_keys(msg, &k11, 1);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_MAX + 1, 0);
	refused(msg, W(EINVAL, NULL, off, -1), "an unknown attribute number");

	msg = acq();
	put_keys(msg, &k11, 1);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_STATUS, ORDLOCK_STATUS_GRANTED);
	refused(msg, W(EINVAL, NULL, off, -1),
		"ORDLOCK_A_STATUS (a reply attribute) in a request");

	msg = acq();
	put_keys(msg, &k11, 1);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_FLAGS, 0x80);
	refused(msg, W(EINVAL, "flags", off, -1), "unknown flags");

	msg = acq();
	put_keys(msg, &k11, 1);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_POLICY, ORDLOCK_POLICY_DETECT);
	refused(msg, W(EINVAL, "not taken", off, -1),
		"ORDLOCK_A_POLICY, not taken by ACQUIRE");

	n = olt_param_get("max_keys_per_request");
	many = calloc(n + 1, sizeof(*many));
	for (i = 0; i <= n; i++)
		many[i] = ORDLOCK_EX(1, i + 1);
	msg = acq();
	off = olc_nl_offset(msg);
	put_keys(msg, many, n + 1);
	snprintf(name, sizeof(name), "%ld keys, one more than max_keys_per_request",
		 n + 1);
	refused(msg, W(E2BIG, "max_keys_per_request", off, -1), name);
	free(many);

	msg = acq();
	put_keys(msg, &k11, 1);
	/* two bytes after the last attribute */
	nlmsg_append(msg, trail, sizeof(trail), 0);
	refused(msg, W(EINVAL, "leftover", -1, -1), "trailing bytes");

	msg = acq();
	put_keys(msg, &k11, 1);
	((struct genlmsghdr *)nlmsg_data(nlmsg_hdr(msg)))->reserved = 1;
	refused(msg, W(EINVAL, "reserved", -1, -1), "a non-zero genlmsghdr.reserved");

	msg = nlt_msg_new(S, ORDLOCK_CMD_ACQUIRE, NLM_F_ROOT);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, dom);
	put_keys(msg, &k11, 1);
	refused(msg, W(EINVAL, "nlmsg_flags", -1, -1), "NLM_F_ROOT on a do request");
}

static void test_other_malformed(void)
{
	struct ordlock_key k11 = ORDLOCK_EX(1, 1), k12 = ORDLOCK_EX(1, 2);
	struct ordlock_key two[2] = { ORDLOCK_EX(1, 1), ORDLOCK_EX(1, 2) };
	struct nl_msg *msg;
	long off;

	diag("malformed RELEASE, CONVERT, CANCEL, DOMAIN_GET, GET_STATS, commands");
	msg = nlt_msg_new(S, ORDLOCK_CMD_RELEASE, 0);
	refused(msg, W(EINVAL, "RELEASE_ALL", -1, -1), "RELEASE without keys or flags");
	msg = nlt_msg_new(S, ORDLOCK_CMD_RELEASE, 0);
	put_keys(msg, &k11, 1);
	nla_put_u32(msg, ORDLOCK_A_FLAGS, ORDLOCK_RELEASE_ALL);
	refused(msg, W(EINVAL, "RELEASE_ALL", -1, -1), "RELEASE with keys and RELEASE_ALL");
	msg = nlt_msg_new(S, ORDLOCK_CMD_RELEASE, 0);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_FLAGS, 2);
	refused(msg, W(EINVAL, "flags", off, -1), "RELEASE with unknown flags");
	msg = nlt_msg_new(S, ORDLOCK_CMD_RELEASE, 0);
	nla_put_u32(msg, ORDLOCK_A_FLAGS, ORDLOCK_RELEASE_ALL);
	off = olc_nl_offset(msg);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, dom);
	refused(msg, W(EINVAL, "not taken", off, -1), "RELEASE with ORDLOCK_A_DOMAIN");
	msg = nlt_msg_new(S, ORDLOCK_CMD_RELEASE, 0);
	off = olc_nl_offset(msg);
	put_keys(msg, &k11, 0);
	refused(msg, W(EINVAL, "no keys", off, -1), "RELEASE with an empty ORDLOCK_A_KEYS");

	msg = nlt_msg_new(S, ORDLOCK_CMD_CONVERT, 0);
	off = olc_nl_offset(msg);
	put_keys(msg, two, 2);
	refused(msg, W(EINVAL, "one key", off, -1), "CONVERT of two keys");
	msg = nlt_msg_new(S, ORDLOCK_CMD_CONVERT, 0);
	put_keys(msg, &k12, 1);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_FLAGS, 4);
	refused(msg, W(EINVAL, "flags", off, -1), "CONVERT with unknown flags");
	msg = nlt_msg_new(S, ORDLOCK_CMD_CONVERT, 0);
	refused(msg, W(EINVAL, "missing keys", -1, ORDLOCK_A_KEYS), "CONVERT without keys");

	msg = nlt_msg_new(S, ORDLOCK_CMD_CANCEL, 0);
	refused(msg, W(EINVAL, NULL, -1, ORDLOCK_A_COOKIE), "CANCEL without a cookie");
	msg = nlt_msg_new(S, ORDLOCK_CMD_CANCEL, 0);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_COOKIE, 1);
	refused(msg, W(EINVAL, NULL, off, -1), "CANCEL with a u32 cookie");
	msg = nlt_msg_new(S, ORDLOCK_CMD_CANCEL, 0);
	nla_put_u64(msg, ORDLOCK_A_COOKIE, 1);
	off = olc_nl_offset(msg);
	put_keys(msg, &k11, 1);
	refused(msg, W(EINVAL, "not taken", off, -1), "CANCEL with keys");

	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_GET, 0);
	refused(msg, W(EINVAL, NULL, -1, ORDLOCK_A_DOMAIN), "DOMAIN_GET without a domain");
	msg = nlt_msg_new(S, ORDLOCK_CMD_GET_STATS, 0);
	refused(msg, W(EINVAL, NULL, -1, ORDLOCK_A_DOMAIN), "GET_STATS without a domain");
	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_GET, 0);
	off = olc_nl_offset(msg);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, "no spaces");
	refused(msg, W(EINVAL, "domain name", off, -1), "DOMAIN_GET of a bad name");
	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_GET, 0);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, cfgdom);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_POLICY, 0);
	refused(msg, W(EINVAL, "not taken", off, -1), "DOMAIN_GET with ORDLOCK_A_POLICY");
	/* every command refuses what it does not take, with the same message */
	msg = nlt_msg_new(S, ORDLOCK_CMD_RENEW, 0);
	off = olc_nl_offset(msg);
	nla_put_string(msg, ORDLOCK_A_LABEL, "job");
	refused(msg, W(EINVAL, "not taken", off, -1), "RENEW with ORDLOCK_A_LABEL");
	msg = nlt_msg_new(S, ORDLOCK_CMD_TOKEN_CHECK, 0);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_STATUS, 0);
	refused(msg, W(EINVAL, "not taken", off, -1),
		"TOKEN_CHECK with ORDLOCK_A_STATUS (a reply attribute)");
	msg = acq();
	put_keys(msg, &k11, 1);
	off = olc_nl_offset(msg);
	put_nest(msg, ORDLOCK_A_STATS);
	refused(msg, W(EINVAL, "not taken", off, -1),
		"ACQUIRE with an ORDLOCK_A_STATS nest (a reply attribute)");
	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_GET, 0);
	off = olc_nl_offset(msg);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, dom);
	refused(msg, W(ENOENT, "no such domain", off, -1), "DOMAIN_GET of a domain that does not exist");

	/* commands that do not exist, or not in that form */
	msg = nlt_msg_new(S, 200, 0);
	refused(msg, W(EOPNOTSUPP, NOMSG, -1, -1), "command 200");
	msg = nlt_msg_new(S, ORDLOCK_CMD_RESULT, 0);
	refused(msg, W(EOPNOTSUPP, NOMSG, -1, -1), "RESULT as a request");
	msg = nlt_msg_new(S, ORDLOCK_CMD_EVENT, 0);
	refused(msg, W(EOPNOTSUPP, NOMSG, -1, -1), "EVENT as a request");
	msg = nlt_msg_new(S, ORDLOCK_CMD_GET_LOCKS, 0);
	refused(msg, W(EOPNOTSUPP, NOMSG, -1, -1), "GET_LOCKS without NLM_F_DUMP");
	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_GET, NLM_F_DUMP);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, cfgdom);
	refused(msg, W(EOPNOTSUPP, NOMSG, -1, -1), "DOMAIN_GET as a dump");
	msg = nlt_msg_new(S, ORDLOCK_CMD_GET_LOCKS, NLM_F_DUMP);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_MAX + 1, 0);
	refused(msg, W(EINVAL, NULL, off, -1), "GET_LOCKS dump with an unknown attribute");
	/* a dump has no pre_doit: its policy itself refuses reply nests */
	msg = nlt_msg_new(S, ORDLOCK_CMD_GET_LOCKS, NLM_F_DUMP);
	off = olc_nl_offset(msg);
	put_nest(msg, ORDLOCK_A_STATS);
	refused(msg, W(EINVAL, NULL, off, -1), "GET_LOCKS dump with an ORDLOCK_A_STATS nest");
	msg = nlt_msg_new(S, ORDLOCK_CMD_GET_GRAPH, NLM_F_DUMP);
	off = olc_nl_offset(msg);
	put_nest(msg, ORDLOCK_A_FAILURE);
	refused(msg, W(EINVAL, NULL, off, -1), "GET_GRAPH dump with an ORDLOCK_A_FAILURE nest");
}

/* DOMAIN_SET of @cfgdom with one rank name entry built by @fn */
static struct nl_msg *set_names(long *off, int bad)
{
	struct nl_msg *msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_SET, 0);
	struct nlattr *names, *e;
	char name[64];
	int i;

	nla_put_string(msg, ORDLOCK_A_DOMAIN, cfgdom);
	names = olc_nl_nest_start(msg, ORDLOCK_A_RANK_NAMES);
	for (i = 0; i < (bad == 6 ? ORDLOCK_RANK_NAMES_MAX + 1 : 2); i++) {
		if (i == 1 || bad == 6)
			*off = olc_nl_offset(msg);
		e = olc_nl_nest_start(msg, ORDLOCK_A_ENTRY);
		snprintf(name, sizeof(name), "name%d", i);
		switch (i == 1 ? bad : 0) {
		case 1:		/* starts with a digit */
			nla_put_u32(msg, ORDLOCK_E_RANK, 2);
			nla_put_string(msg, ORDLOCK_E_NAME, "9lives");
			break;
		case 2:		/* too long */
			nla_put_u32(msg, ORDLOCK_E_RANK, 2);
			*off = olc_nl_offset(msg);
			memset(name, 'n', 40);
			name[40] = 0;
			nla_put_string(msg, ORDLOCK_E_NAME, name);
			break;
		case 3:		/* no name */
			nla_put_u32(msg, ORDLOCK_E_RANK, 2);
			break;
		case 4:		/* the rank of entry 0 again */
			nla_put_u32(msg, ORDLOCK_E_RANK, 0);
			nla_put_string(msg, ORDLOCK_E_NAME, name);
			break;
		case 5:		/* an attribute rank names do not have */
			nla_put_u32(msg, ORDLOCK_E_RANK, 2);
			nla_put_string(msg, ORDLOCK_E_NAME, name);
			*off = olc_nl_offset(msg);
			nla_put_u32(msg, ORDLOCK_E_PID, 1);
			break;
		default:
			nla_put_u32(msg, ORDLOCK_E_RANK, i);
			nla_put_string(msg, ORDLOCK_E_NAME, name);
			break;
		}
		nla_nest_end(msg, e);
	}
	nla_nest_end(msg, names);
	return msg;
}

static void test_domain_set_malformed(void)
{
	struct nl_msg *msg;
	long off;

	diag("malformed DOMAIN_SET requests");
	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_SET, 0);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, dom);
	refused(msg, W(EINVAL, "nothing to set", -1, -1), "DOMAIN_SET with nothing to set");
	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_SET, 0);
	nla_put_u32(msg, ORDLOCK_A_POLICY, ORDLOCK_POLICY_DETECT);
	refused(msg, W(EINVAL, NULL, -1, ORDLOCK_A_DOMAIN), "DOMAIN_SET without a domain");
	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_SET, 0);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, cfgdom);
	off = olc_nl_offset(msg);
	nla_put_u32(msg, ORDLOCK_A_POLICY, 3);
	refused(msg, W(ERANGE, NULL, off, -1), "DOMAIN_SET of policy 3");
	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_SET, 0);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, cfgdom);
	off = olc_nl_offset(msg);
	nla_put_u8(msg, ORDLOCK_A_DETECT_DELAY_MS, 1);
	refused(msg, W(EINVAL, NULL, off, -1), "DOMAIN_SET of a u8 delay");
	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_SET, 0);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, cfgdom);
	nla_put_u32(msg, ORDLOCK_A_POLICY, ORDLOCK_POLICY_DETECT);
	off = olc_nl_offset(msg);
	nla_put_u64(msg, ORDLOCK_A_COOKIE, 1);
	refused(msg, W(EINVAL, "not taken", off, -1), "DOMAIN_SET with a cookie");
	msg = nlt_msg_new(S, ORDLOCK_CMD_DOMAIN_SET, 0);
	off = olc_nl_offset(msg);
	nla_put_string(msg, ORDLOCK_A_DOMAIN, "x y");
	nla_put_u32(msg, ORDLOCK_A_POLICY, ORDLOCK_POLICY_DETECT);
	refused(msg, W(EINVAL, "domain name", off, -1), "DOMAIN_SET of a bad domain name");

	msg = set_names(&off, 1);
	refused(msg, W(EINVAL, "rank name", off, -1), "a rank name starting with a digit");
	msg = set_names(&off, 2);
	refused(msg, W(EINVAL, NULL, off, -1), "a rank name of 40 characters");
	msg = set_names(&off, 3);
	refused(msg, W(EINVAL, "rank name", off, -1), "a rank name entry without a name");
	msg = set_names(&off, 4);
	refused(msg, W(EEXIST, "twice", -1, -1), "two names for one rank");
	msg = set_names(&off, 5);
	refused(msg, W(EINVAL, NULL, off, -1), "ORDLOCK_E_PID in a rank name entry");
	msg = set_names(&off, 6);
	refused(msg, W(EINVAL, "too many", off, -1), "65 rank names");
}

/* Children without the privilege */

struct priv {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	int how;		/* 0: capset; 1: setuid after opening */
	int set_ret, get_ret, acq_ret;
	uint32_t acq_status;
	char set_msg[256];
	int pass_fd;		/* a socketpair end to pass a socket on */
};

static int priv_main(void *arg)
{
	struct ordlock_key key = ORDLOCK_SH(1, 9);
	struct priv *p = arg;
	struct olc_nl_outcome o;
	struct nlt *s = NULL;
	int ret;

	if (p->how == 0) {
		ret = olt_drop_cap(CAP_NET_ADMIN);
		if (ret)
			return 10;
		s = nlt_open(&ret);
	} else {
		s = nlt_open(&ret);
		if (setgid(65534) || setuid(65534))
			return 11;
	}
	if (!s)
		return 12;
	p->set_ret = nlt_domain_set(s, p->domain, ORDLOCK_POLICY_TIMEOUT, 7,
				    NULL, -1, NULL);
	snprintf(p->set_msg, sizeof(p->set_msg), "%s", nlt_extack_str(s));
	p->get_ret = nlt_domain_get(s, p->domain, NULL);
	p->acq_ret = nlt_acquire(s, p->domain, &key, 1, 0, 0, 1, &o);
	p->acq_status = o.status;
	nlt_close(s);
	return 0;
}

/* An unprivileged process opens a socket and hands it over */
static int opener_main(void *arg)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct priv *p = arg;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = { 0 };
	struct iovec iov;
	struct cmsghdr *c;
	char byte = 'x';
	int fd;

	if (setgid(65534) || setuid(65534))
		return 11;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return 12;
	iov.iov_base = &byte;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(p->pass_fd, &mh, 0) != 1)
		return 13;
	return 0;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = { 0 };
	struct iovec iov;
	struct cmsghdr *c;
	char byte;
	int fd;

	iov.iov_base = &byte;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	if (recvmsg(sock, &mh, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static void test_unprivileged(void)
{
	static const char * const how[] = {
		"without CAP_NET_ADMIN (capset)",
		"after setuid(nobody) on a socket opened as root",
	};
	struct olc_nl_domain d;
	struct priv *p;
	struct nlt *s;
	int i, sv[2], fd, ret;
	pid_t pid;

	diag("DOMAIN_SET without the privilege");
	p = shm_alloc(sizeof(*p));
	for (i = 0; i < 2; i++) {
		memset(p, 0, sizeof(*p));
		snprintf(p->domain, sizeof(p->domain), "%s", cfgdom);
		p->how = i;
		pid = child_start(priv_main, p);
		if (!is_int(child_wait(pid, 0), 0, "a child %s ran", how[i]))
			continue;
		is_int(p->set_ret, -EPERM, "%s: DOMAIN_SET is refused with EPERM",
		       how[i]);
		diag("  extack: %s", p->set_msg);
		is_int(p->get_ret, 0, "%s: DOMAIN_GET works", how[i]);
		if (i == 0)
			ok(!p->acq_ret && p->acq_status == ORDLOCK_STATUS_GRANTED,
			   "%s: ACQUIRE works", how[i]);
		else
			is_int(p->acq_ret, -EACCES,
			       "%s: ACQUIRE: EACCES (nobody may not open /dev/ordlock)",
			       how[i]);
		ret = nlt_domain_get(L, cfgdom, &d);
		ok(!ret && same_domain(&d, &cfg0), "%s: the domain is unchanged",
		   how[i]);
	}

	/* root sends on a socket an unprivileged process opened */
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		bail_out("socketpair: %s", strerror(errno));
	memset(p, 0, sizeof(*p));
	p->pass_fd = sv[1];
	pid = child_start(opener_main, p);
	is_int(child_wait(pid, 0), 0, "an unprivileged child opened a socket for us");
	fd = recv_fd(sv[0]);
	close(sv[0]);
	close(sv[1]);
	s = fd >= 0 ? nlt_open_fd(fd, &ret) : NULL;
	if (ok(s != NULL, "root uses the socket it handed over")) {
		/*
		 * write(), as a deputy tricked into writing would: netlink
		 * checks the opener's capabilities only for messages sent
		 * without a destination address (no NETLINK_SKB_DST).
		 */
		s->nl->use_write = 1;
		ret = nlt_domain_set(s, cfgdom, ORDLOCK_POLICY_TIMEOUT, 7, NULL, -1,
				     NULL);
		is_int(ret, -EPERM,
		       "DOMAIN_SET written by root on an unprivileged opener's socket: EPERM");
		ret = nlt_domain_get(s, cfgdom, &d);
		is_int(ret, 0, "DOMAIN_GET written on it works");
		ret = nlt_domain_get(L, cfgdom, &d);
		ok(!ret && same_domain(&d, &cfg0), "the domain is unchanged");
		nlt_close(s);
	}
	shm_free(p, sizeof(*p));
}

/* Another network namespace */

#define NS_LOCKS	3	/* the dumps in the namespace */

struct netns {
	struct pbarrier *ready, *fired, *done;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	int unshare_err;
	int open_err;
	int ret[8];
	char msg[8][256];
	int dump_ret[NS_LOCKS];
	int dump_seen[NS_LOCKS];	/* entries of the initial namespace seen */
	int sub_ret;
	int ev_ret;
	uint32_t ev_type;
	char ev_domain[ORDLOCK_DOMAIN_NAME_MAX];
};

static const char * const ns_what[] = {
	"ACQUIRE", "RELEASE", "CANCEL", "CONVERT", "DOMAIN_GET", "DOMAIN_SET",
	"GET_STATS",
};

static int netns_main(void *arg)
{
	static const uint8_t dumps[NS_LOCKS] = {
		ORDLOCK_CMD_GET_LOCKS, ORDLOCK_CMD_GET_OWNERS, ORDLOCK_CMD_GET_GRAPH,
	};
	struct ordlock_key key = ORDLOCK_EX(1, 1);
	struct netns *ns = arg;
	struct olc_nl_outcome o;
	struct olc_nl_event ev;
	uint64_t st[ORDLOCK_S_MAX + 1];
	struct nlt *s;
	int i;

	if (unshare(CLONE_NEWNET)) {
		ns->unshare_err = errno;
		pbarrier_break(ns->ready);
		return 1;
	}
	s = nlt_open(&ns->open_err);
	if (!s) {
		pbarrier_break(ns->ready);
		return 0;
	}
	ns->ret[0] = nlt_acquire(s, ns->domain, &key, 1, 0, 0, 1, &o);
	snprintf(ns->msg[0], sizeof(ns->msg[0]), "%s", s->nl->ext.msg);
	ns->ret[1] = nlt_release(s, NULL, 0, &o);
	snprintf(ns->msg[1], sizeof(ns->msg[1]), "%s", s->nl->ext.msg);
	ns->ret[2] = nlt_cancel(s, 1, &o);
	snprintf(ns->msg[2], sizeof(ns->msg[2]), "%s", s->nl->ext.msg);
	ns->ret[3] = nlt_convert(s, key, 0, 0, 1, &o);
	snprintf(ns->msg[3], sizeof(ns->msg[3]), "%s", s->nl->ext.msg);
	ns->ret[4] = nlt_domain_get(s, ns->domain, NULL);
	snprintf(ns->msg[4], sizeof(ns->msg[4]), "%s", s->nl->ext.msg);
	ns->ret[5] = nlt_domain_set(s, ns->domain, ORDLOCK_POLICY_DETECT, 5,
				    NULL, -1, NULL);
	snprintf(ns->msg[5], sizeof(ns->msg[5]), "%s", s->nl->ext.msg);
	ns->ret[6] = nlt_get_stats(s, ns->domain, st);
	snprintf(ns->msg[6], sizeof(ns->msg[6]), "%s", s->nl->ext.msg);
	for (i = 0; i < NS_LOCKS; i++) {
		struct olc_nl_entry *v;
		int j;

		ns->dump_ret[i] = nlt_dump(s, dumps[i], NULL, &v);
		for (j = 0; j < ns->dump_ret[i]; j++)
			ns->dump_seen[i] += !strcmp(v[j].domain, ns->domain);
		if (ns->dump_ret[i] > 0)
			free(v);
	}
	ns->sub_ret = nlt_subscribe(s);
	if (pbarrier_wait(ns->ready) || pbarrier_wait(ns->fired))
		return 2;
	/* the parent caused an event in the initial namespace */
	ns->ev_ret = nlt_wait_event(s, 0, NULL, 1000, &ev);
	if (!ns->ev_ret) {
		ns->ev_type = ev.event;
		snprintf(ns->ev_domain, sizeof(ns->ev_domain), "%s", ev.domain);
	}
	nlt_close(s);
	pbarrier_wait(ns->done);
	return 0;
}

static void test_netns(void)
{
	struct ordlock_key k15 = ORDLOCK_EX(1, 5), k13 = ORDLOCK_EX(1, 3);
	struct ordlock_key k11 = ORDLOCK_EX(1, 1);
	struct olc_nl_outcome o;
	struct olc_nl_event ev;
	struct netns *ns;
	struct ordlock *ol;
	struct nlt *s, *l;
	int i, ret, st;
	pid_t pid;

	diag("requests from another network namespace");
	ns = shm_alloc(sizeof(*ns));
	ns->ready = pbarrier_new(2);
	ns->fired = pbarrier_new(2);
	ns->done = pbarrier_new(2);
	snprintf(ns->domain, sizeof(ns->domain), "%s", olt_domain("nlns"));

	/* state of the initial namespace the other one must not see */
	ol = olt_open(ns->domain);
	s = nlt_must_open();
	l = nlt_must_open();
	nlt_subscribe(l);
	ret = nlt_acquire(s, ns->domain, &k11, 1, 0, 0, 1, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
	   "a netlink owner holds x1:1 in %s", ns->domain);
	is_int(ordlock_acquire(ol, &k15, 1, LONG_MS, 0, NULL), 0,
	       "an ioctl owner holds x1:5 there");

	pid = child_start(netns_main, ns);
	ret = pbarrier_wait(ns->ready);
	if (ns->unshare_err) {
		ok(1, "# SKIP unshare(CLONE_NEWNET): %s", strerror(ns->unshare_err));
		goto out;
	}
	if (ns->open_err) {
		is_errno(ns->open_err, ENOENT,
			 "the family is not found in another namespace");
		goto out;
	}
	ok(1, "the family resolves in another network namespace");
	for (i = 0; i < 7; i++) {
		is_errno(ns->ret[i], EOPNOTSUPP, "%s from another namespace: EOPNOTSUPP",
			 ns_what[i]);
		ok(strstr(ns->msg[i], "namespace") != NULL, "%s: extack \"%s\"",
		   ns_what[i], ns->msg[i]);
	}
	for (i = 0; i < NS_LOCKS; i++) {
		static const char * const name[] = {
			"GET_LOCKS", "GET_OWNERS", "GET_GRAPH",
		};

		ok(ns->dump_ret[i] == -EOPNOTSUPP,
		   "%s dump from another namespace: EOPNOTSUPP", name[i]);
		if (ns->dump_ret[i] != -EOPNOTSUPP)
			diag("  got %s", ns->dump_ret[i] < 0 ?
			     strerror(-ns->dump_ret[i]) : "entries");
		ok(ns->dump_ret[i] <= 0,
		   "%s: no entry of the initial namespace (%d entries, %d of its domain)",
		   name[i], ns->dump_ret[i] > 0 ? ns->dump_ret[i] : 0,
		   ns->dump_seen[i]);
	}
	is_int(ns->sub_ret, 0, "joining the events group works there");
	if (ret)
		goto out;
	/* an event in the initial namespace */
	is_errno(ordlock_acquire(ol, &k13, 1, LONG_MS, 0, NULL), EDEADLK,
		 "an order violation here");
	ok(!nlt_wait_event(l, ORDLOCK_EVENT_ORDER, ns->domain, WAIT_MS, &ev),
	   "a listener here gets the event");
	pbarrier_wait(ns->fired);
	pbarrier_wait(ns->done);
	is_errno(ns->ev_ret, ETIMEDOUT, "the listener in the other namespace gets nothing");
	if (!ns->ev_ret)
		diag("  it got a %s event about %s", nlt_event_name(ns->ev_type),
		     ns->ev_domain);
out:
	st = child_wait(pid, 0);
	is_int(st, 0, "the child exits");
	ret = nlt_release(s, &k11, 1, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
	   "the state here is intact: x1:1 still held by its owner");
	nlt_close(s);
	nlt_close(l);
	ordlock_close(ol);
	pbarrier_free(ns->ready);
	pbarrier_free(ns->fired);
	pbarrier_free(ns->done);
	shm_free(ns, sizeof(*ns));
}

/* Last: the entries of ORDLOCK_A_KEYS must be ORDLOCK_A_KEY */
static void test_keys_entry_type(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct nlattr *keys;
	struct nl_msg *msg;
	long off;

	diag("an entry of ORDLOCK_A_KEYS that is not ORDLOCK_A_KEY");
	msg = acq();
	keys = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
	off = olc_nl_offset(msg);
	olc_nl_put_key(msg, ORDLOCK_A_COOKIE, &k);
	nla_nest_end(msg, keys);
	refused(msg, W(EINVAL, NULL, off, -1),
		"a key nested as ORDLOCK_A_COOKIE instead of ORDLOCK_A_KEY");
}

int main(void)
{
	static const struct nlt_rank_name names[] = {
		{ 1, "orders" }, { 2, "inventories" },
	};
	int ret;

	watchdog_start(280);
	L = nlt_must_open();
	S = nlt_must_open();
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlbad"));
	snprintf(cfgdom, sizeof(cfgdom), "%s", olt_domain("nlbadcfg"));
	ret = nlt_domain_set(L, cfgdom, ORDLOCK_POLICY_DETECT, 40, names, 2, &cfg0);
	if (ret)
		bail_out("DOMAIN_SET %s: %s", cfgdom, nlt_extack_str(L));
	ok(unchanged(), "to begin with: no netlink owner, no domain %s", dom);
	{
		uint32_t version = 0, maxattr = 0;
		int has_events = 0;

		ret = nlt_family_info(&version, &maxattr, &has_events);
		ok(!ret && version == ORDLOCK_GENL_VERSION &&
		   maxattr == ORDLOCK_A_MAX && has_events,
		   "the controller: family %s version %u, maxattr %u, group %s",
		   ORDLOCK_GENL_NAME, version, maxattr,
		   has_events ? ORDLOCK_GENL_MCGRP_EVENTS : "(none)");
	}
	test_acquire_malformed();
	test_other_malformed();
	test_domain_set_malformed();
	test_unprivileged();
	test_netns();
	test_keys_entry_type();
	nlt_close(S);
	nlt_close(L);
	return tap_done();
}
