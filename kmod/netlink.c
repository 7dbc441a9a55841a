// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "ordlock": locks for event-driven programs,
 * queries and administration, and the "events" multicast group.
 *
 * This file only declares the family (its commands, their policies, the
 * multicast group) and registers it. The commands live by concern:
 * nl_lock.c (netlink owners and their lock requests), nl_dump.c (the
 * dumps), nl_domain.c (domain administration), nl_event.c (events turned
 * into multicast messages), nl_xdetect.c (ordlock-xdetectd's commands and
 * the "xdetect" group); nl_msg.c has the helpers they share.
 *
 * Each command's policy is built at init from the list of the attributes
 * it takes (struct ordlock_nl_take, in the file of the command): every
 * other attribute of the family is NLA_REJECT there (the nests: see
 * ordlock_nl_nests_not_taken()), refused with EINVAL and "attribute not
 * taken by this command" pointing at the attribute; unknown attributes
 * are refused by strict validation.
 */
#include <linux/bitmap.h>
#include <linux/string.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "compat.h"
#include "netlink.h"

static const struct genl_multicast_group ordlock_nl_mcgrps[] = {
	[ORDLOCK_NL_MCGRP_EVENTS] = {
		.name = ORDLOCK_GENL_MCGRP_EVENTS,
#ifdef GENL_MCAST_CAP_NET_ADMIN
		/* Events name any user's owners and keys: an admin view */
		.flags = GENL_MCAST_CAP_NET_ADMIN,
#endif
	},
	[ORDLOCK_NL_MCGRP_XDETECT] = {
		.name = ORDLOCK_GENL_MCGRP_XDETECT,
#ifdef GENL_MCAST_CAP_NET_ADMIN
		/* every wait of the cluster domains with detect: the daemon's */
		.flags = GENL_MCAST_CAP_NET_ADMIN,
#endif
	},
};

/*
 * Refuse the nests the command does not take. They cannot be NLA_REJECT
 * in its policy: strict validation refuses an attribute flagged
 * NLA_F_NESTED whose policy entry is not a nest ("NLA_F_NESTED not
 * expected") before it looks at NLA_REJECT. Their entry is a bare
 * NLA_NESTED (see ordlock_nl_build_policies()), which no command takes.
 */
static int ordlock_nl_nests_not_taken(const struct ordlock_genl_split_ops *ops,
				      struct genl_info *info)
{
	const struct nla_policy *pt;
	unsigned int i;

	for (i = 1; i <= ops->maxattr; i++) {
		pt = &ops->policy[i];
		if (info->attrs[i] && pt->type == NLA_NESTED && !pt->nested_policy) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[i],
					    ORDLOCK_NL_NOT_TAKEN_MSG);
			return -EINVAL;
		}
	}
	return 0;
}

static int ordlock_nl_pre_doit(const struct ordlock_genl_split_ops *ops,
			       struct sk_buff *skb, struct genl_info *info)
{
	if (!net_eq(genl_info_net(info), &init_net)) {
		NL_SET_ERR_MSG(info->extack,
			       "ordlock serves the initial network namespace only");
		return -EOPNOTSUPP;
	}
	return ordlock_nl_nests_not_taken(ops, info);
}

/* The commands' policies, built by ordlock_nl_build_policies() */
static struct nla_policy ordlock_nl_lock_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_release_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_cancel_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_dump_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_domain_get_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_domain_set_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_renew_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_token_check_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_label_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_xd_hello_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_xd_check_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_xd_fail_policy[ORDLOCK_A_MAX + 1] __ro_after_init;
static struct nla_policy ordlock_nl_xd_walk_policy[ORDLOCK_A_MAX + 1] __ro_after_init;

/* @dump: the policy of dumps, which ordlock_nl_pre_doit() does not see */
static const struct {
	struct nla_policy *policy;
	const struct ordlock_nl_take *takes;
	bool dump;
} ordlock_nl_policies[] = {
	{ ordlock_nl_lock_policy, ordlock_nl_lock_takes },
	{ ordlock_nl_release_policy, ordlock_nl_release_takes },
	{ ordlock_nl_cancel_policy, ordlock_nl_cancel_takes },
	{ ordlock_nl_dump_policy, ordlock_nl_dump_takes, true },
	{ ordlock_nl_domain_get_policy, ordlock_nl_domain_get_takes },
	{ ordlock_nl_domain_set_policy, ordlock_nl_domain_set_takes },
	{ ordlock_nl_renew_policy, ordlock_nl_renew_takes },
	{ ordlock_nl_token_check_policy, ordlock_nl_token_check_takes },
	{ ordlock_nl_label_policy, ordlock_nl_label_takes },
	{ ordlock_nl_xd_hello_policy, ordlock_nl_xd_hello_takes },
	{ ordlock_nl_xd_check_policy, ordlock_nl_xd_check_takes },
	{ ordlock_nl_xd_fail_policy, ordlock_nl_xd_fail_takes },
	{ ordlock_nl_xd_walk_policy, ordlock_nl_xd_walk_takes, true },
};

/* Whether the family's attribute @attr is a nest (in requests or replies) */
static bool ordlock_nl_attr_is_nest(unsigned int attr)
{
	switch (attr) {
	case ORDLOCK_A_KEYS:
	case ORDLOCK_A_KEY:
	case ORDLOCK_A_FAILURE:
	case ORDLOCK_A_CYCLE:
	case ORDLOCK_A_ENTRY:
	case ORDLOCK_A_RANK_NAMES:
	case ORDLOCK_A_STATS:
	case ORDLOCK_A_XD_PATH:
		return true;
	default:
		return false;
	}
}

/*
 * Fill each command's policy: what it takes as its list says, every other
 * attribute but ORDLOCK_A_PAD refused (a nest as a bare NLA_NESTED, which
 * ordlock_nl_nests_not_taken() refuses; in the dumps' policy, which that
 * does not see, a nest has no entry: strict validation refuses it as
 * unsupported). A list naming an attribute twice, or one the family does
 * not have, is a bug: -EINVAL.
 */
static int ordlock_nl_build_policies(void)
{
	static const struct nla_policy not_taken = {
		.type = NLA_REJECT,
		.reject_message = ORDLOCK_NL_NOT_TAKEN_MSG,
	};
	static const struct nla_policy not_taken_nest = { .type = NLA_NESTED };
	const struct ordlock_nl_take *t;
	DECLARE_BITMAP(seen, ORDLOCK_A_MAX + 1);
	struct nla_policy *p;
	unsigned int i, a;

	for (i = 0; i < ARRAY_SIZE(ordlock_nl_policies); i++) {
		p = ordlock_nl_policies[i].policy;
		bitmap_zero(seen, ORDLOCK_A_MAX + 1);
		/* memcpy(): struct nla_policy has const members */
		for (a = ORDLOCK_A_PAD + 1; a <= ORDLOCK_A_MAX; a++) {
			if (!ordlock_nl_attr_is_nest(a))
				memcpy(&p[a], &not_taken, sizeof(p[a]));
			else if (!ordlock_nl_policies[i].dump)
				memcpy(&p[a], &not_taken_nest, sizeof(p[a]));
		}
		for (t = ordlock_nl_policies[i].takes; t->attr; t++) {
			if (WARN_ON(t->attr <= ORDLOCK_A_PAD ||
				    t->attr > ORDLOCK_A_MAX ||
				    __test_and_set_bit(t->attr, seen)))
				return -EINVAL;
			memcpy(&p[t->attr], &t->policy, sizeof(p[t->attr]));
		}
	}
	return 0;
}

/*
 * The commands: each one's handler and list of attributes live in the file
 * of its concern (see netlink.h); a new command is one more entry here and
 * in ordlock_nl_policies.
 */
static const struct genl_ops ordlock_nl_ops[] = {
	{
		.cmd = ORDLOCK_CMD_ACQUIRE,
		.doit = ordlock_nl_acquire_doit,
		.policy = ordlock_nl_lock_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_RELEASE,
		.doit = ordlock_nl_release_doit,
		.policy = ordlock_nl_release_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_CONVERT,
		.doit = ordlock_nl_convert_doit,
		.policy = ordlock_nl_lock_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_CANCEL,
		.doit = ordlock_nl_cancel_doit,
		.policy = ordlock_nl_cancel_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_GET_LOCKS,
		.start = ordlock_nl_dump_check,
		.dumpit = ordlock_nl_locks_dumpit,
		.policy = ordlock_nl_dump_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_GET_OWNERS,
		.start = ordlock_nl_dump_check,
		.dumpit = ordlock_nl_owners_dumpit,
		.policy = ordlock_nl_dump_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_GET_GRAPH,
		.start = ordlock_nl_dump_check,
		.dumpit = ordlock_nl_graph_dumpit,
		.policy = ordlock_nl_dump_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_GET_STATS,
		.doit = ordlock_nl_domain_get_doit,
		.policy = ordlock_nl_domain_get_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_DOMAIN_GET,
		.doit = ordlock_nl_domain_get_doit,
		.policy = ordlock_nl_domain_get_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_DOMAIN_SET,
		.doit = ordlock_nl_domain_set_doit,
		.flags = GENL_ADMIN_PERM,
		.policy = ordlock_nl_domain_set_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_RENEW,
		.doit = ordlock_nl_renew_doit,
		.policy = ordlock_nl_renew_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_TOKEN_CHECK,
		.doit = ordlock_nl_token_check_doit,
		.policy = ordlock_nl_token_check_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_SET_LABEL,
		.doit = ordlock_nl_set_label_doit,
		.policy = ordlock_nl_label_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_XD_HELLO,
		.doit = ordlock_nl_xd_hello_doit,
		.flags = GENL_ADMIN_PERM,
		.policy = ordlock_nl_xd_hello_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_XD_WALK,
		.start = ordlock_nl_xd_walk_start,
		.dumpit = ordlock_nl_xd_walk_dumpit,
		.done = ordlock_nl_xd_walk_done,
		.flags = GENL_ADMIN_PERM,
		.policy = ordlock_nl_xd_walk_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_XD_CHECK,
		.doit = ordlock_nl_xd_check_doit,
		.flags = GENL_ADMIN_PERM,
		.policy = ordlock_nl_xd_check_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
	{
		.cmd = ORDLOCK_CMD_XD_FAIL,
		.doit = ordlock_nl_xd_fail_doit,
		.flags = GENL_ADMIN_PERM,
		.policy = ordlock_nl_xd_fail_policy,
		.maxattr = ORDLOCK_A_MAX,
	},
};

struct genl_family ordlock_genl_family __ro_after_init = {
	.name = ORDLOCK_GENL_NAME,
	.version = ORDLOCK_GENL_VERSION,
	/* every command has its own policy; this is what CTRL_CMD_GETFAMILY says */
	.maxattr = ORDLOCK_A_MAX,
	.netnsok = true,
	.parallel_ops = true,
	.pre_doit = ordlock_nl_pre_doit,
	.module = THIS_MODULE,
	.ops = ordlock_nl_ops,
	.n_ops = ARRAY_SIZE(ordlock_nl_ops),
	.resv_start_op = ORDLOCK_CMD_ACQUIRE,
	.mcgrps = ordlock_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ordlock_nl_mcgrps),
};

int ordlock_nl_init(void)
{
	int ret;

	ret = ordlock_nl_build_policies();
	if (ret)
		return ret;
	ret = ordlock_nl_owners_init();
	if (ret)
		return ret;
	ret = genl_register_family(&ordlock_genl_family);
	if (ret)
		goto err_owners;
	ret = ordlock_nl_event_init();
	if (ret)
		goto err_family;
	ret = ordlock_nl_xd_init();
	if (ret)
		goto err_event;
	return 0;

err_event:
	ordlock_nl_event_exit();
err_family:
	genl_unregister_family(&ordlock_genl_family);
err_owners:
	ordlock_nl_owners_exit();
	return ret;
}

void ordlock_nl_exit(void)
{
	ordlock_nl_xd_exit();
	ordlock_nl_event_exit();
	genl_unregister_family(&ordlock_genl_family);
	ordlock_nl_owners_exit();
}
