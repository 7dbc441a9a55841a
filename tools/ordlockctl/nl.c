// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: netlink into its model (see nl.h); the client is
 * ../common/nl.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nl.h"

int olc_nl_open_ctl(struct olc_nl **out)
{
	int ret = olc_nl_open(out, -1, 0);

	if (!ret) {
		(*out)->intr = 1;
		(*out)->skip_overruns = 1;
	}
	return ret;
}

const char *olc_nl_extack(const struct olc_nl *nl)
{
	return nl ? nl->ext.msg : "";
}

int olc_nl_join(struct olc_nl *nl)
{
	/* bursts of events: a large buffer, and an overrun is counted */
	return olc_nl_join_events(nl, 1 << 20);
}

int olc_nl_wait_event(struct olc_nl *nl, int timeout_ms, olc_nl_fn fn, void *arg)
{
	uint64_t deadline = timeout_ms < 0 ? 0 : olc_nl_now_ms() + (uint64_t)timeout_ms;
	struct nlattr *tb[ORDLOCK_A_MAX + 1];
	struct nlmsghdr *nlh;
	uint8_t cmd;
	int n = 0, ret;

	ret = olc_nl_pump(nl, deadline);
	if (ret == -ETIMEDOUT)
		return 0;
	if (ret < 0)
		return ret;
	/* no lock requests on this socket: no RESULT is awaited */
	while ((nlh = olc_nl_take(nl, ORDLOCK_CMD_RESULT)))
		free(nlh);
	while ((nlh = olc_nl_take(nl, ORDLOCK_CMD_EVENT))) {
		ret = olc_nl_parse_genl(nlh, tb, &cmd);
		if (!ret && fn)
			ret = fn(tb, arg);
		free(nlh);
		if (ret)
			return ret;
		n++;
	}
	return n;
}

/* What the kernel sent is printed: keep it printable */
static void olc_nl_printable(char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			*s = '?';
}

void olc_nl_copy_str(char *dst, size_t len, const struct nlattr *a)
{
	dst[0] = '\0';
	if (!a)
		return;
	nla_strlcpy(dst, a, len);
	olc_nl_printable(dst);
}

/* A command for people: printable, "?" when there is none */
static void olc_nl_comm(char *dst, const char *src)
{
	memcpy(dst, src, ORDLOCK_COMM_LEN);
	dst[ORDLOCK_COMM_LEN - 1] = '\0';
	olc_nl_printable(dst);
	if (!dst[0])
		strcpy(dst, "?");
}

int olc_nl_who(const struct olc_nl_entry *e, struct olc_who *w)
{
	memset(w, 0, sizeof(*w));
	if (!OLC_NL_HAS(e, ORDLOCK_E_OWNER_ID) || !OLC_NL_HAS(e, ORDLOCK_E_PID))
		return -EPROTO;
	w->id = e->owner_id;
	w->pid = e->pid;
	olc_nl_comm(w->comm, e->comm);
	return 0;
}

int olc_nl_cycle(struct nlattr *nest, struct ordlock_cycle_step *steps)
{
	int i, n;

	if (!nest)
		return 0;
	if (olc_nl_parse_cycle(nest, steps, &n))
		return -EPROTO;
	for (i = 0; i < n; i++)
		olc_nl_comm(steps[i].comm, steps[i].comm);
	return n;
}

/* Dumps */

/* The ORDLOCK_A_ENTRY of a dump message, with its owner */
static int olc_nl_entry(struct nlattr **tb, struct olc_nl_entry *e,
			struct olc_who *w)
{
	if (!tb[ORDLOCK_A_ENTRY] || olc_nl_parse_entry(tb[ORDLOCK_A_ENTRY], e))
		return -EPROTO;
	e->domain[sizeof(e->domain) - 1] = '\0';
	olc_nl_printable(e->domain);
	return olc_nl_who(e, w);
}

static int olc_nl_graph_fn(struct nlattr **tb, void *arg)
{
	struct olc_edges *out = arg;
	struct olc_nl_entry e;
	struct olc_edge d, *p;

	memset(&d, 0, sizeof(d));
	if (olc_nl_entry(tb, &e, &d.waiter) || !OLC_NL_HAS(&e, ORDLOCK_E_KEY) ||
	    !OLC_NL_HAS(&e, ORDLOCK_E_BLOCKER) ||
	    !((e.blocker.present >> ORDLOCK_E_OWNER_ID) & 1) ||
	    !((e.blocker.present >> ORDLOCK_E_PID) & 1))
		return -EPROTO;
	memcpy(d.domain, e.domain, sizeof(d.domain));
	d.rank = e.key.rank;
	d.id = e.key.id;
	d.mode = e.key.mode;
	d.blocker.id = e.blocker.owner_id;
	d.blocker.pid = e.blocker.pid;
	olc_nl_comm(d.blocker.comm, e.blocker.comm);
	d.blocker_mode = e.blocker.mode;
	d.type = OLC_NL_HAS(&e, ORDLOCK_E_EDGE) ? e.edge : ORDLOCK_EDGE_HARD;
	d.waited_us = e.waited_us;
	/* the blocker holds the key by the fast path */
	d.fast = (e.blocker.present >> ORDLOCK_E_FAST) & 1;
	d.fast_index = e.blocker.fast;
	p = olc_edges_add(out);
	if (!p)
		return -ENOMEM;
	*p = d;
	return 0;
}

int olc_nl_get_graph(struct olc_nl *nl, struct olc_edges *out)
{
	return olc_nl_dump(nl, ORDLOCK_CMD_GET_GRAPH, olc_nl_graph_fn, out);
}

static int olc_nl_locks_fn(struct nlattr **tb, void *arg)
{
	struct olc_locks *out = arg;
	struct olc_nl_entry e;
	struct olc_lock l, *p;

	memset(&l, 0, sizeof(l));
	if (olc_nl_entry(tb, &e, &l.owner) || !OLC_NL_HAS(&e, ORDLOCK_E_KEY) ||
	    !OLC_NL_HAS(&e, ORDLOCK_E_ROLE))
		return -EPROTO;
	memcpy(l.domain, e.domain, sizeof(l.domain));
	l.rank = e.key.rank;
	l.id = e.key.id;
	l.role = e.role;
	l.pos = e.position;
	l.mode = e.mode;
	/* a holder waiting for the cluster: no token, the time waited */
	l.cluster_wait = l.role == ORDLOCK_ROLE_HOLDER &&
			 OLC_NL_HAS(&e, ORDLOCK_E_CLUSTER_WAIT);
	/* a holder by the fast path: no token, the owner index instead */
	l.fast = l.role == ORDLOCK_ROLE_HOLDER && OLC_NL_HAS(&e, ORDLOCK_E_FAST);
	if (l.fast)
		l.value = e.fast;
	else if (l.role == ORDLOCK_ROLE_HOLDER && !l.cluster_wait &&
		 OLC_NL_HAS(&e, ORDLOCK_E_TOKEN))
		l.value = e.token;
	else
		l.value = e.waited_us;
	if (OLC_NL_HAS(&e, ORDLOCK_E_LEASE_LEFT_MS)) {
		l.has_lease = 1;
		l.lease_left_ms = e.lease_left_ms;
	}
	p = olc_locks_add(out);
	if (!p)
		return -ENOMEM;
	*p = l;
	return 0;
}

int olc_nl_get_locks(struct olc_nl *nl, struct olc_locks *out)
{
	return olc_nl_dump(nl, ORDLOCK_CMD_GET_LOCKS, olc_nl_locks_fn, out);
}

static int olc_nl_owners_fn(struct nlattr **tb, void *arg)
{
	struct olc_owners *out = arg;
	struct olc_nl_entry e;
	struct olc_owner o, *p;

	memset(&o, 0, sizeof(o));
	if (olc_nl_entry(tb, &e, &o.who))
		return -EPROTO;
	memcpy(o.domain, e.domain, sizeof(o.domain));
	o.kind = e.kind;
	o.held = e.held;
	if (OLC_NL_HAS(&e, ORDLOCK_E_KEY)) {
		o.wrank = e.key.rank;
		o.wid = e.key.id;
		o.wmode = e.key.mode;
	}
	o.waited_us = e.waited_us;
	memcpy(o.label, e.label, sizeof(o.label));
	o.label[sizeof(o.label) - 1] = '\0';
	olc_nl_printable(o.label);
	p = olc_owners_add(out);
	if (!p)
		return -ENOMEM;
	*p = o;
	return 0;
}

int olc_nl_get_owners(struct olc_nl *nl, struct olc_owners *out)
{
	return olc_nl_dump(nl, ORDLOCK_CMD_GET_OWNERS, olc_nl_owners_fn, out);
}

int olc_nl_domain_stats(struct olc_nl *nl, const char *domain,
			struct olc_domain_stats *out)
{
	struct olc_nl_stats st;
	unsigned int i;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = olc_nl_get_stats(nl, domain, &st);
	if (ret)
		return ret;
	st.domain[sizeof(st.domain) - 1] = '\0';
	olc_nl_printable(st.domain);
	memcpy(out->name, st.domain, sizeof(out->name));
	if (st.have_policy)
		snprintf(out->policy, sizeof(out->policy), "%s",
			 olc_policy_str(st.policy));
	out->have_delay = st.have_delay;
	out->detect_delay_ms = st.detect_delay_ms;
	for (i = 0; i < OLC_NL_NSTATS; i++) {
		int a = olc_nl_stat_order[i];

		if (!((st.present >> a) & 1))
			continue;
		snprintf(out->v[out->n].name, sizeof(out->v[out->n].name), "%s",
			 olc_nl_stat_name(a));
		out->v[out->n].value = st.v[a];
		out->n++;
	}
	return 0;
}
