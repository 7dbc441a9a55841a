// SPDX-License-Identifier: GPL-2.0
/*
 * t_xdetect_nl: the commands of ordlock-xdetectd (detection across nodes,
 * docs/cluster.md) that need no cluster:
 *
 *  - XD_HELLO registers the sending socket and answers the boot id; a
 *    second socket gets EBUSY while it is registered, its close
 *    unregisters it (the second then registers);
 *  - XD_HELLO, XD_WALK, XD_CHECK and XD_FAIL need CAP_NET_ADMIN (EPERM);
 *  - XD_FAIL from a socket that is not the registered daemon: EPERM;
 *  - malformed requests (missing attributes, out of range values,
 *    attributes a command does not take, a cycle of one node, a victim
 *    that is not the first step) are refused with an extack, and so are
 *    XD_CHECK and XD_FAIL of a local domain (EOPNOTSUPP) or of none
 *    (ENOENT);
 *  - DOMAIN_GET of a local domain has no detection state.
 *
 * The cluster half (a cycle across nodes failed, events, CHECK live) is
 * tests/cluster/cases/c_xdetect.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>

#include "barrier.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

static char dom[ORDLOCK_DOMAIN_NAME_MAX];

/* XD_HELLO with node @node, state @state, members @members (< 0: absent) */
static int hello(struct nlt *s, long node, long state, long members,
		 uint64_t *boot)
{
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct nl_msg *m = nlt_msg_new(s, ORDLOCK_CMD_XD_HELLO, 0);
	int ret;

	if ((node >= 0 && nla_put_u32(m, ORDLOCK_A_XD_NODE, node)) ||
	    (state >= 0 && nla_put_u32(m, ORDLOCK_A_XD_STATE, state)) ||
	    (members >= 0 && nla_put_u32(m, ORDLOCK_A_XD_MEMBERS, members))) {
		nlmsg_free(m);
		return -EMSGSIZE;
	}
	ret = nlt_request(s, m, tb);
	if (!ret && boot)
		*boot = tb[ORDLOCK_A_XD_BOOT] ? nla_get_u64(tb[ORDLOCK_A_XD_BOOT]) : 0;
	return ret;
}

/* One step of a cycle: owner @owner of node @node waits for @key */
static int put_step(struct nl_msg *m, uint64_t owner, uint32_t node,
		    struct ordlock_key key)
{
	struct nlattr *e = olc_nl_nest_start(m, ORDLOCK_A_ENTRY);

	if (!e || nla_put_u64(m, ORDLOCK_E_OWNER_ID, owner) ||
	    nla_put_u32(m, ORDLOCK_E_PID, 812) ||
	    nla_put_string(m, ORDLOCK_E_COMM, "transfer") ||
	    olc_nl_put_key(m, ORDLOCK_E_KEY, &key) ||
	    nla_put_u32(m, ORDLOCK_E_XD_NODE, node))
		return -EMSGSIZE;
	nla_nest_end(m, e);
	return 0;
}

/*
 * XD_FAIL of owner @owner's wait @gen in @domain, with a cycle of @nsteps
 * steps: the victim (@owner, node @node0) then owners of node 2
 */
static int fail(struct nlt *s, const char *domain, uint64_t owner,
		uint64_t gen, uint32_t node0, int nsteps)
{
	struct nl_msg *m = nlt_msg_new(s, ORDLOCK_CMD_XD_FAIL, 0);
	struct nlattr *c;
	int i;

	if (nla_put_string(m, ORDLOCK_A_DOMAIN, domain) ||
	    nla_put_u64(m, ORDLOCK_A_XD_OWNER, owner) ||
	    nla_put_u64(m, ORDLOCK_A_XD_GEN, gen))
		goto big;
	c = olc_nl_nest_start(m, ORDLOCK_A_CYCLE);
	if (!c)
		goto big;
	for (i = 0; i < nsteps; i++)
		if (put_step(m, i ? 100 + (uint64_t)i : owner, i ? 2 : node0,
			     (struct ordlock_key)ORDLOCK_EX(1, i)))
			goto big;
	nla_nest_end(m, c);
	return nlt_request(s, m, NULL);
big:
	nlmsg_free(m);
	return -EMSGSIZE;
}

/* XD_CHECK of one vertex (owner @owner, wait @gen) in @domain */
static int check(struct nlt *s, const char *domain, uint64_t owner,
		 uint64_t gen)
{
	struct nl_msg *m = nlt_msg_new(s, ORDLOCK_CMD_XD_CHECK, 0);
	struct nlattr *p, *e;

	if (nla_put_string(m, ORDLOCK_A_DOMAIN, domain))
		goto big;
	p = olc_nl_nest_start(m, ORDLOCK_A_XD_PATH);
	e = p ? olc_nl_nest_start(m, ORDLOCK_A_ENTRY) : NULL;
	if (!e || nla_put_u64(m, ORDLOCK_E_OWNER_ID, owner) ||
	    nla_put_u64(m, ORDLOCK_E_XD_GEN, gen))
		goto big;
	nla_nest_end(m, e);
	nla_nest_end(m, p);
	return nlt_request(s, m, NULL);
big:
	nlmsg_free(m);
	return -EMSGSIZE;
}

static int walk_fn(struct nlattr **tb, void *arg)
{
	(void)tb;
	++*(int *)arg;
	return 0;
}

/* XD_WALK of @domain (NULL: none) from owner 1's wait 1 (@owner) or nothing */
static int walk(struct nlt *s, const char *domain, int owner)
{
	struct nl_msg *m = nlt_msg_new(s, ORDLOCK_CMD_XD_WALK, NLM_F_DUMP);
	int n = 0;

	if ((domain && nla_put_string(m, ORDLOCK_A_DOMAIN, domain)) ||
	    (owner && (nla_put_u64(m, ORDLOCK_A_XD_OWNER, 1) ||
		       nla_put_u64(m, ORDLOCK_A_XD_GEN, 1)))) {
		nlmsg_free(m);
		return -EMSGSIZE;
	}
	return olc_nl_transact(s->nl, m, walk_fn, &n);
}

static int has(const struct nlt *s, const char *what)
{
	return strstr(s->nl->ext.msg, what) != NULL;
}

static void test_hello(void)
{
	struct nlt *a = nlt_must_open(), *b = nlt_must_open(), *c;
	uint64_t boot = 0, boot2 = 0;
	int ret;

	diag("XD_HELLO");
	ret = hello(a, -1, ORDLOCK_XD_ON, 1, NULL);
	is_errno(ret, EINVAL, "XD_HELLO without ORDLOCK_A_XD_NODE: EINVAL");
	ok(has(a, "missing attribute"), "extack: %s", nlt_extack_str(a));
	ret = hello(a, 0, ORDLOCK_XD_ON, 1, NULL);
	is_errno(ret, ERANGE, "XD_HELLO with node 0: ERANGE");
	ret = hello(a, 1, ORDLOCK_XD_ON + 1, 1, NULL);
	is_errno(ret, ERANGE, "XD_HELLO with an unknown state: ERANGE");
	{
		struct nl_msg *m = nlt_msg_new(a, ORDLOCK_CMD_XD_HELLO, 0);

		nla_put_u32(m, ORDLOCK_A_XD_NODE, 1);
		nla_put_u32(m, ORDLOCK_A_XD_STATE, ORDLOCK_XD_ON);
		nla_put_u32(m, ORDLOCK_A_XD_MEMBERS, 1);
		nla_put_u32(m, ORDLOCK_A_POLICY, 1);
		ret = nlt_request(a, m, NULL);
		is_errno(ret, EINVAL, "XD_HELLO with ORDLOCK_A_POLICY: EINVAL");
		ok(has(a, "not taken"), "extack: %s", nlt_extack_str(a));
	}

	ret = hello(a, 1, ORDLOCK_XD_JOINING, 1, &boot);
	is_int(ret, 0, "XD_HELLO registers the first socket");
	ok(boot != 0, "the reply has the boot id %llx", (unsigned long long)boot);
	ret = hello(b, 1, ORDLOCK_XD_ON, 1, NULL);
	is_errno(ret, EBUSY, "XD_HELLO from a second socket: EBUSY");
	ok(has(b, "another socket is registered"), "extack: %s", nlt_extack_str(b));
	ret = hello(a, 1, ORDLOCK_XD_ON, 3, &boot2);
	is_int(ret, 0, "XD_HELLO again from the registered socket updates it");
	is_int(boot2 == boot, 1, "the same boot id");

	ret = fail(b, dom, 1, 1, 1, 2);
	/* (is_int: is_errno() reads -1 as "see errno") */
	is_int(ret, -EPERM, "XD_FAIL from a socket that is not the daemon: EPERM");
	ok(has(b, "registered ordlock-xdetectd"), "extack: %s", nlt_extack_str(b));

	ret = fail(a, dom, 1, 1, 1, 1);
	is_errno(ret, EINVAL, "XD_FAIL with a cycle of one step: EINVAL");
	ok(has(a, "2 steps or more"), "extack: %s", nlt_extack_str(a));
	ret = fail(a, dom, 1, 1, 2, 2);
	is_errno(ret, EINVAL, "XD_FAIL whose first step is another node's: EINVAL");
	ok(has(a, "the first step is the victim"), "extack: %s", nlt_extack_str(a));
	ret = fail(a, dom, 1, 0, 1, 2);
	is_errno(ret, ERANGE, "XD_FAIL of generation 0: ERANGE");
	ret = fail(a, dom, 1, 1, 1, 2);
	is_errno(ret, EOPNOTSUPP, "XD_FAIL in a local domain: EOPNOTSUPP");
	ok(has(a, "not a cluster domain"), "extack: %s", nlt_extack_str(a));
	ret = fail(a, "xdnone", 1, 1, 1, 2);
	is_errno(ret, ENOENT, "XD_FAIL in a domain that does not exist: ENOENT");
	ret = check(a, dom, 1, 1);
	is_errno(ret, EOPNOTSUPP, "XD_CHECK in a local domain: EOPNOTSUPP");
	ret = walk(a, dom, 1);
	is_errno(ret, EOPNOTSUPP, "XD_WALK in a local domain: EOPNOTSUPP");
	ok(has(a, "not a cluster domain"), "extack: %s", nlt_extack_str(a));
	ret = walk(a, NULL, 1);
	is_errno(ret, EINVAL, "XD_WALK without a domain: EINVAL");
	ret = walk(a, dom, 0);
	is_errno(ret, EINVAL, "XD_WALK with neither a key nor an owner: EINVAL");
	ok(has(a, "either a key or an owner"), "extack: %s", nlt_extack_str(a));
	{
		struct nl_msg *m = nlt_msg_new(a, ORDLOCK_CMD_XD_CHECK, 0);

		nla_put_string(m, ORDLOCK_A_DOMAIN, dom);
		ret = nlt_request(a, m, NULL);
		is_errno(ret, EINVAL, "XD_CHECK without a path: EINVAL");
	}

	/* the daemon's close unregisters it */
	nlt_close(a);
	ret = hello(b, 2, ORDLOCK_XD_ON, 1, NULL);
	is_int(ret, 0, "after the daemon's socket closed, another registers");
	c = nlt_must_open();
	ret = hello(c, 2, ORDLOCK_XD_ON, 1, NULL);
	is_errno(ret, EBUSY, "and a third gets EBUSY again");
	nlt_close(c);
	nlt_close(b);
}

/* A child without CAP_NET_ADMIN: each command is refused */
static int unpriv_main(void *arg)
{
	int *rets = arg;
	struct nlt *s;

	if (olt_drop_cap(CAP_NET_ADMIN))
		return 1;
	s = nlt_must_open();
	rets[0] = hello(s, 1, ORDLOCK_XD_ON, 1, NULL);
	rets[1] = check(s, dom, 1, 1);
	rets[2] = fail(s, dom, 1, 1, 1, 2);
	rets[3] = walk(s, dom, 1);
	nlt_close(s);
	return 0;
}

static void test_unprivileged(void)
{
	int *rets = shm_alloc(4 * sizeof(int));
	pid_t pid;

	diag("without CAP_NET_ADMIN");
	pid = child_start(unpriv_main, rets);
	if (!is_int(child_wait(pid, 0), 0, "a child without CAP_NET_ADMIN ran"))
		return;
	is_int(rets[0], -EPERM, "XD_HELLO: EPERM");
	is_int(rets[1], -EPERM, "XD_CHECK: EPERM");
	is_int(rets[2], -EPERM, "XD_FAIL: EPERM");
	is_int(rets[3], -EPERM, "XD_WALK: EPERM");
}

int main(void)
{
	struct olc_nl_domain d;
	struct ordlock *ol;
	struct nlt *s;

	watchdog_start(60);
	snprintf(dom, sizeof(dom), "%s", olt_domain("xdnl"));
	ol = olt_open(dom);
	s = nlt_must_open();
	is_int(nlt_domain_get(s, dom, &d), 0, "DOMAIN_GET of a local domain");
	is_int(d.have_xd, 0, "it has no detection state (not a cluster domain)");
	test_hello();
	test_unprivileged();
	nlt_close(s);
	ordlock_close(ol);
	return tap_done();
}
