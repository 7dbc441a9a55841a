// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink events: the family's subscriber to events.c. Each event the lock
 * core announces becomes one ORDLOCK_CMD_EVENT message to the "events"
 * multicast group, when anyone listens, rate-limited.
 */
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "domain.h"
#include "events.h"
#include "netlink.h"
#include "owner.h"
#include "user.h"

static DEFINE_RATELIMIT_STATE(ordlock_nl_event_ratelimit, HZ, 100);

/*
 * A new event message with ORDLOCK_A_EVENT and ORDLOCK_A_DOMAIN, in *@hdr;
 * NULL when nobody listens, the rate limit was reached or memory is short.
 */
static struct sk_buff *ordlock_nl_event_new(u32 event, const char *domain,
					    void **hdr)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&ordlock_genl_family, &init_net,
				ORDLOCK_NL_MCGRP_EVENTS))
		return NULL;
	if (!__ratelimit(&ordlock_nl_event_ratelimit))
		return NULL;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put(msg, 0, 0, &ordlock_genl_family, 0, ORDLOCK_CMD_EVENT);
	if (!*hdr ||
	    nla_put_u32(msg, ORDLOCK_A_EVENT, event) ||
	    nla_put_string(msg, ORDLOCK_A_DOMAIN, domain)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void ordlock_nl_event_send(struct sk_buff *msg, void *hdr)
{
	genlmsg_end(msg, hdr);
	genlmsg_multicast_netns(&ordlock_genl_family, &init_net, msg, 0,
				ORDLOCK_NL_MCGRP_EVENTS, GFP_KERNEL);
}

/* The owner fields of an event's ORDLOCK_A_ENTRY */
static int ordlock_nl_event_entry(struct sk_buff *msg, u64 id, pid_t pid,
				  const char *comm, u32 kind, u32 held,
				  const struct ordlock_user *user,
				  const char *label)
{
	struct nlattr *entry = nla_nest_start(msg, ORDLOCK_A_ENTRY);

	if (!entry ||
	    ordlock_nl_put_owner(msg, id, pid, comm) ||
	    (label && ordlock_nl_put_label(msg, label)) ||
	    nla_put_u32(msg, ORDLOCK_E_KIND, kind) ||
	    nla_put_u32(msg, ORDLOCK_E_HELD, held) ||
	    nla_put_u32(msg, ORDLOCK_E_UID, ordlock_user_uid(user)))
		return -EMSGSIZE;
	nla_nest_end(msg, entry);
	return 0;
}

/* The potential deadlock of @info: its kind, dropped count and edges */
static int ordlock_nl_event_potential(struct sk_buff *msg,
				      const struct ordlock_event_info *info)
{
	struct nlattr *cycle, *step;
	u32 i;

	if (nla_put_u32(msg, ORDLOCK_A_POTENTIAL_KIND, info->potential_kind) ||
	    nla_put_u64_64bit(msg, ORDLOCK_A_ORDER_DROPPED, info->dropped,
			      ORDLOCK_A_PAD))
		return -EMSGSIZE;
	cycle = nla_nest_start(msg, ORDLOCK_A_CYCLE);
	if (!cycle)
		return -EMSGSIZE;
	for (i = 0; i < info->npotential; i++) {
		const struct ordlock_order_edge *o = &info->potential[i];

		step = nla_nest_start(msg, ORDLOCK_A_ENTRY);
		if (!step ||
		    ordlock_nl_put_owner(msg, o->owner_id, o->pid, o->comm) ||
		    nla_put_u32(msg, ORDLOCK_E_UID, o->uid) ||
		    ordlock_nl_put_label(msg, o->label) ||
		    nla_put_u32(msg, ORDLOCK_E_ORDER_KIND, o->kind) ||
		    ordlock_nl_put_key(msg, ORDLOCK_E_KEY, o->held.rank,
				       o->held.id, o->held.mode) ||
		    ordlock_nl_put_key(msg, ORDLOCK_E_TAKEN, o->taken.rank,
				       o->taken.id, o->taken.mode) ||
		    nla_put_u64_64bit(msg, ORDLOCK_E_TIME_NS, o->time_ns,
				      ORDLOCK_E_PAD) ||
		    nla_put_u64_64bit(msg, ORDLOCK_E_COUNT, o->count,
				      ORDLOCK_E_PAD))
			return -EMSGSIZE;
		nla_nest_end(msg, step);
	}
	nla_nest_end(msg, cycle);
	return 0;
}

/* An event about @owner in @domain */
static void ordlock_nl_event_owner(struct ordlock_owner *owner, u32 event,
				   const char *domain,
				   const struct ordlock_event_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = ordlock_nl_event_new(event, domain, &hdr);
	if (!msg)
		return;
	if (ordlock_nl_event_entry(msg, owner->id, READ_ONCE(owner->pid),
				   owner->comm, owner->kind, owner->nheld,
				   owner->user, owner->label))
		goto err;
	if (event == ORDLOCK_EVENT_POTENTIAL_DEADLOCK) {
		if (ordlock_nl_event_potential(msg, info))
			goto err;
	} else if (event != ORDLOCK_EVENT_OWNER_DIED &&
		   (ordlock_nl_put_failure(msg, &owner->failure) ||
		    ordlock_nl_put_cycle(msg, owner))) {
		goto err;
	}
	ordlock_nl_event_send(msg, hdr);
	return;
err:
	nlmsg_free(msg);
}

/*
 * The calling task was refused an owner of @kind for @user: there is no
 * owner, the entry has owner id 0 and the calling task
 */
static void ordlock_nl_event_refused(u32 event, const char *domain, u32 kind,
				     const struct ordlock_user *user)
{
	struct ordlock_failure f = {
		.reason = ORDLOCK_REASON_USER_LIMIT,
		.error = EDQUOT,
		.index = ~0U,
	};
	char comm[TASK_COMM_LEN];
	struct sk_buff *msg;
	void *hdr;

	msg = ordlock_nl_event_new(event, domain, &hdr);
	if (!msg)
		return;
	get_task_comm(comm, current);
	if (ordlock_nl_event_entry(msg, 0, task_tgid_nr(current), comm, kind, 0,
				   user, NULL) ||
	    ordlock_nl_put_failure(msg, &f)) {
		nlmsg_free(msg);
		return;
	}
	ordlock_nl_event_send(msg, hdr);
}

/* The events.c subscriber: multicast each event, rate-limited */
static int ordlock_nl_event(struct notifier_block *nb, unsigned long event,
			    void *data)
{
	const struct ordlock_event_info *info = data;

	if (info->owner)
		ordlock_nl_event_owner(info->owner, info->event, info->domain,
				       info);
	else
		ordlock_nl_event_refused(info->event, info->domain, info->kind,
					 info->user);
	return NOTIFY_DONE;
}

static struct notifier_block ordlock_nl_event_nb = {
	.notifier_call = ordlock_nl_event,
};

/* ordlock_nl_event_init() - subscribe to the events, once the family is up */
int ordlock_nl_event_init(void)
{
	return ordlock_events_subscribe(&ordlock_nl_event_nb);
}

/* ordlock_nl_event_exit() - unsubscribe, before the family goes */
void ordlock_nl_event_exit(void)
{
	ordlock_events_unsubscribe(&ordlock_nl_event_nb);
}
