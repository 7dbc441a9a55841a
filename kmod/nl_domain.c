// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink domain administration: DOMAIN_GET and GET_STATS read a domain's
 * settings or counters (anyone); DOMAIN_SET changes its settings (with
 * CAP_NET_ADMIN), creating it if needed, and with ORDLOCK_A_FLAGS
 * ORDLOCK_DOMAIN_RESET_ORDER forgets its learned lock order (order.h);
 * ORDLOCK_A_FASTPATH gives it the fast path or takes it away (fastpath.h).
 */
#include <linux/cred.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "domain.h"
#include "keys.h"
#include "netlink.h"
#include "user.h"

/* DOMAIN_GET and GET_STATS */
const struct ordlock_nl_take ordlock_nl_domain_get_takes[] = {
	{ ORDLOCK_A_DOMAIN, ORDLOCK_NL_TAKES_DOMAIN },
	{ }
};

const struct ordlock_nl_take ordlock_nl_domain_set_takes[] = {
	{ ORDLOCK_A_DOMAIN, ORDLOCK_NL_TAKES_DOMAIN },
	/* ORDLOCK_DOMAIN_RESET_ORDER only: checked by the command (extack) */
	{ ORDLOCK_A_FLAGS, ORDLOCK_NL_TAKES_FLAGS },
	{ ORDLOCK_A_POLICY, ORDLOCK_NL_TAKES_POLICY },
	{ ORDLOCK_A_DETECT_DELAY_MS, ORDLOCK_NL_TAKES_DETECT_DELAY_MS },
	{ ORDLOCK_A_RANK_NAMES, ORDLOCK_NL_TAKES_RANK_NAMES },
	{ ORDLOCK_A_STRICT, ORDLOCK_NL_TAKES_STRICT },
	{ ORDLOCK_A_MAX_HOLD_MS, ORDLOCK_NL_TAKES_MAX_HOLD_MS },
	{ ORDLOCK_A_CLUSTER, ORDLOCK_NL_TAKES_CLUSTER },
	{ ORDLOCK_A_FASTPATH, ORDLOCK_NL_TAKES_FASTPATH },
	{ ORDLOCK_A_FASTPATH_UID, ORDLOCK_NL_TAKES_FASTPATH_UID },
	{ }
};

static int ordlock_nl_put_rank_names(struct sk_buff *skb,
				     struct ordlock_domain *domain)
{
	struct ordlock_rank_name *names;
	struct nlattr *nest, *entry;
	unsigned int i, n;
	int ret = -EMSGSIZE;

	names = kcalloc(ORDLOCK_RANK_NAMES_MAX, sizeof(*names), GFP_KERNEL);
	if (!names)
		return -ENOMEM;
	n = ordlock_domain_rank_names(domain, names, ORDLOCK_RANK_NAMES_MAX);
	nest = nla_nest_start(skb, ORDLOCK_A_RANK_NAMES);
	if (!nest)
		goto out;
	for (i = 0; i < n; i++) {
		entry = nla_nest_start(skb, ORDLOCK_A_ENTRY);
		if (!entry ||
		    nla_put_u32(skb, ORDLOCK_E_RANK, names[i].rank) ||
		    nla_put_string(skb, ORDLOCK_E_NAME, names[i].name))
			goto out;
		nla_nest_end(skb, entry);
	}
	nla_nest_end(skb, nest);
	ret = 0;
out:
	kfree(names);
	return ret;
}

/* The fast-path setting: whether the domain has it, and then its user */
static int ordlock_nl_put_fastpath(struct sk_buff *skb,
				   struct ordlock_domain *domain)
{
	bool fast = READ_ONCE(domain->fastpath);

	if (nla_put_u32(skb, ORDLOCK_A_FASTPATH, fast))
		return -EMSGSIZE;
	if (fast && nla_put_u32(skb, ORDLOCK_A_FASTPATH_UID,
				from_kuid_munged(current_user_ns(), domain->fast_uid)))
		return -EMSGSIZE;
	return 0;
}

/*
 * DOMAIN_SET's ORDLOCK_A_FASTPATH and ORDLOCK_A_FASTPATH_UID into @set:
 * the uid is needed with 1, taken only with the setting and ignored with 0.
 * Return: 0 or -EINVAL with the extack.
 */
static int ordlock_nl_take_fastpath(struct genl_info *info,
				    struct ordlock_domain_settings *set)
{
	struct nlattr *fast = info->attrs[ORDLOCK_A_FASTPATH];
	struct nlattr *uid = info->attrs[ORDLOCK_A_FASTPATH_UID];

	if (!fast) {
		if (uid) {
			NL_SET_ERR_MSG_ATTR(info->extack, uid,
					    "the fast path's uid is taken only with ORDLOCK_A_FASTPATH");
			return -EINVAL;
		}
		return 0;
	}
	set->flags |= ORDLOCK_DOMAIN_SET_FASTPATH;
	set->fastpath = nla_get_u32(fast);
	if (!set->fastpath)
		return 0;
	if (!uid) {
		NL_SET_ERR_MSG_ATTR(info->extack, fast,
				    "the fast path needs ORDLOCK_A_FASTPATH_UID, its user");
		return -EINVAL;
	}
	set->fast_uid = make_kuid(current_user_ns(), nla_get_u32(uid));
	if (!uid_valid(set->fast_uid)) {
		NL_SET_ERR_MSG_ATTR(info->extack, uid,
				    "the fast path's uid does not map in the sender's user namespace");
		return -EINVAL;
	}
	return 0;
}

/* A gauge as two counters: @type now, and the peak in the next attribute */
static int ordlock_nl_put_gauge(struct sk_buff *skb, int type,
				struct ordlock_gauge *g)
{
	if (nla_put_u64_64bit(skb, type, atomic_read(&g->cur), ORDLOCK_S_PAD) ||
	    nla_put_u64_64bit(skb, type + 1, atomic_read(&g->peak), ORDLOCK_S_PAD))
		return -EMSGSIZE;
	return 0;
}

static int ordlock_nl_domain_reply(struct genl_info *info,
				   struct ordlock_domain *domain, bool stats)
{
	struct ordlock_stats sum;
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;
	int ret = -EMSGSIZE;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ordlock_genl_family, 0,
				info->genlhdr->cmd);
	if (!hdr ||
	    nla_put_string(msg, ORDLOCK_A_DOMAIN, domain->name) ||
	    nla_put_u32(msg, ORDLOCK_A_POLICY, READ_ONCE(domain->policy)) ||
	    nla_put_u32(msg, ORDLOCK_A_DETECT_DELAY_MS, READ_ONCE(domain->detect_delay_ms)) ||
	    nla_put_u32(msg, ORDLOCK_A_STRICT, READ_ONCE(domain->strict)) ||
	    nla_put_u32(msg, ORDLOCK_A_MAX_HOLD_MS, READ_ONCE(domain->max_hold_ms)) ||
	    nla_put_u32(msg, ORDLOCK_A_CLUSTER, !!READ_ONCE(domain->backend)) ||
	    ordlock_nl_put_fastpath(msg, domain) ||
	    (READ_ONCE(domain->backend) && ordlock_nl_xd_put_state(msg)))
		goto err;
	if (stats) {
		static const u8 map[ORDLOCK_STAT_NR] = {
			[ORDLOCK_STAT_ACQUIRES] = ORDLOCK_S_ACQUIRES,
			[ORDLOCK_STAT_CONTENDED] = ORDLOCK_S_CONTENDED,
			[ORDLOCK_STAT_TIMEOUTS] = ORDLOCK_S_TIMEOUTS,
			[ORDLOCK_STAT_TRY_FAILURES] = ORDLOCK_S_TRY_FAILURES,
			[ORDLOCK_STAT_ORDER_VIOLATIONS] = ORDLOCK_S_ORDER_VIOLATIONS,
			[ORDLOCK_STAT_DEADLOCKS] = ORDLOCK_S_DEADLOCKS,
			[ORDLOCK_STAT_UPGRADE_DEADLOCKS] = ORDLOCK_S_UPGRADE_DEADLOCKS,
			[ORDLOCK_STAT_CONVERSIONS] = ORDLOCK_S_CONVERSIONS,
			[ORDLOCK_STAT_SIGNALS] = ORDLOCK_S_SIGNALS,
			[ORDLOCK_STAT_LIMITS] = ORDLOCK_S_LIMITS,
			[ORDLOCK_STAT_RELEASES] = ORDLOCK_S_RELEASES,
			[ORDLOCK_STAT_REVOCATIONS] = ORDLOCK_S_REVOCATIONS,
			[ORDLOCK_STAT_XD_ROUNDS] = ORDLOCK_S_XD_ROUNDS,
			[ORDLOCK_STAT_XD_VICTIMS] = ORDLOCK_S_XD_VICTIMS,
			[ORDLOCK_STAT_XD_STALE] = ORDLOCK_S_XD_STALE,
		};
		unsigned int i;

		ordlock_domain_stats(domain, &sum);
		nest = nla_nest_start(msg, ORDLOCK_A_STATS);
		if (!nest)
			goto err;
		for (i = 0; i < ORDLOCK_STAT_NR; i++)
			if (nla_put_u64_64bit(msg, map[i], sum.count[i], ORDLOCK_S_PAD))
				goto err;
		if (ordlock_nl_put_gauge(msg, ORDLOCK_S_OWNERS, &domain->owners) ||
		    ordlock_nl_put_gauge(msg, ORDLOCK_S_RESOURCES, &domain->resources) ||
		    ordlock_nl_put_gauge(msg, ORDLOCK_S_WAITERS, &domain->waiters))
			goto err;
		nla_nest_end(msg, nest);
	} else {
		/* -ENOMEM if its buffer cannot be allocated, not -EMSGSIZE */
		ret = ordlock_nl_put_rank_names(msg, domain);
		if (ret)
			goto err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
err:
	nlmsg_free(msg);
	return ret;
}

static int ordlock_nl_domain_name(struct genl_info *info, const char **name)
{
	if (GENL_REQ_ATTR_CHECK(info, ORDLOCK_A_DOMAIN)) {
		NL_SET_ERR_MSG(info->extack, "missing the domain name");
		return -EINVAL;
	}
	*name = nla_data(info->attrs[ORDLOCK_A_DOMAIN]);
	if (ordlock_domain_name_check(*name)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
				    "bad domain name: 1 to 31 of [A-Za-z0-9._-]");
		return -EINVAL;
	}
	return 0;
}

int ordlock_nl_domain_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	bool stats = info->genlhdr->cmd == ORDLOCK_CMD_GET_STATS;
	struct ordlock_domain *domain;
	const char *name;
	int ret;

	ret = ordlock_nl_domain_name(info, &name);
	if (ret)
		return ret;
	domain = ordlock_domain_find_get(name);
	if (!domain) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
				    "no such domain");
		return -ENOENT;
	}
	ret = ordlock_nl_domain_reply(info, domain, stats);
	ordlock_domain_put(domain);
	return ret;
}

int ordlock_nl_domain_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct ordlock_rank_name *names = NULL;
	struct nlattr *tb[ORDLOCK_E_MAX + 1];
	struct ordlock_domain_settings set = { 0 };
	struct ordlock_domain *domain;
	struct ordlock_user *user;
	unsigned int n = 0, flags = 0;
	struct nlattr *entry;
	const char *name;
	u32 policy = 0, delay = 0, max_hold = 0;
	int rem, ret;

	ret = ordlock_nl_domain_name(info, &name);
	if (ret)
		return ret;
	if (info->attrs[ORDLOCK_A_POLICY]) {
		flags |= ORDLOCK_DOMAIN_SET_POLICY;
		policy = nla_get_u32(info->attrs[ORDLOCK_A_POLICY]);
	}
	if (info->attrs[ORDLOCK_A_DETECT_DELAY_MS]) {
		flags |= ORDLOCK_DOMAIN_SET_DETECT_DELAY;
		delay = nla_get_u32(info->attrs[ORDLOCK_A_DETECT_DELAY_MS]);
	}
	if (info->attrs[ORDLOCK_A_STRICT]) {
		flags |= ORDLOCK_DOMAIN_SET_STRICT;
		if (nla_get_u32(info->attrs[ORDLOCK_A_STRICT]))
			flags |= ORDLOCK_DOMAIN_STRICT_ON;
	}
	if (info->attrs[ORDLOCK_A_FLAGS]) {
		u32 f = nla_get_u32(info->attrs[ORDLOCK_A_FLAGS]);

		if (f & ~ORDLOCK_DOMAIN_RESET_ORDER) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_FLAGS],
					    "DOMAIN_SET takes only the flag ORDLOCK_DOMAIN_RESET_ORDER");
			return -EINVAL;
		}
		flags |= f;
	}
	if (info->attrs[ORDLOCK_A_MAX_HOLD_MS]) {
		flags |= ORDLOCK_DOMAIN_SET_MAX_HOLD;
		max_hold = nla_get_u32(info->attrs[ORDLOCK_A_MAX_HOLD_MS]);
	}
	if (info->attrs[ORDLOCK_A_CLUSTER]) {
		flags |= ORDLOCK_DOMAIN_SET_CLUSTER;
		set.cluster = nla_get_u32(info->attrs[ORDLOCK_A_CLUSTER]);
	}
	ret = ordlock_nl_take_fastpath(info, &set);
	if (ret)
		return ret;
	flags |= set.flags;
	if (info->attrs[ORDLOCK_A_RANK_NAMES]) {
		names = kcalloc(ORDLOCK_RANK_NAMES_MAX, sizeof(*names), GFP_KERNEL);
		if (!names)
			return -ENOMEM;
		nla_for_each_nested(entry, info->attrs[ORDLOCK_A_RANK_NAMES], rem) {
			ret = -EINVAL;
			if (nla_type(entry) != ORDLOCK_A_ENTRY) {
				NL_SET_ERR_MSG_ATTR(info->extack, entry,
						    "rank names holds ORDLOCK_A_ENTRY entries only");
				goto out;
			}
			if (n == ORDLOCK_RANK_NAMES_MAX) {
				NL_SET_ERR_MSG_ATTR(info->extack, entry, "too many rank names");
				goto out;
			}
			ret = nla_parse_nested(tb, ORDLOCK_E_MAX, entry,
					       ordlock_nl_entry_policy, info->extack);
			if (ret)
				goto out;
			if (!tb[ORDLOCK_E_RANK] || !tb[ORDLOCK_E_NAME] ||
			    ordlock_rank_name_check(nla_data(tb[ORDLOCK_E_NAME]))) {
				NL_SET_ERR_MSG_ATTR(info->extack, entry,
						    "a rank name needs a rank and a name of [A-Za-z0-9._-] starting with a letter");
				ret = -EINVAL;
				goto out;
			}
			names[n].rank = nla_get_u32(tb[ORDLOCK_E_RANK]);
			nla_strscpy(names[n].name, tb[ORDLOCK_E_NAME], sizeof(names[n].name));
			n++;
		}
		flags |= ORDLOCK_DOMAIN_SET_RANK_NAMES;
	}
	if (!flags) {
		NL_SET_ERR_MSG(info->extack, "nothing to set");
		ret = -EINVAL;
		goto out;
	}
	/* A domain created here is charged to the sender's user */
	user = ordlock_user_get(current_euid());
	if (IS_ERR(user)) {
		ret = PTR_ERR(user);
		goto out;
	}
	set.flags = flags;
	set.policy = policy;
	set.detect_delay_ms = delay;
	set.max_hold_ms = max_hold;
	set.names = names;
	set.nnames = n;
	ret = ordlock_domain_configure(name, &set, user, ordlock_user_exempt(),
				       &domain);
	ordlock_user_put(user);
	if (ret) {
		if (set.why && info->extack) {
			/* A static string of domain.c (the macros take literals) */
			info->extack->_msg = set.why;
			info->extack->bad_attr = strstr(set.why, "fast path") ?
						 info->attrs[ORDLOCK_A_FASTPATH] : NULL;
			if (!info->extack->bad_attr)
				info->extack->bad_attr = info->attrs[ORDLOCK_A_CLUSTER] ?:
							 info->attrs[ORDLOCK_A_FASTPATH] ?:
							 info->attrs[ORDLOCK_A_POLICY];
		} else if (ret == -EEXIST) {
			NL_SET_ERR_MSG(info->extack, "a rank or a name appears twice");
		} else if (ret == -EDQUOT) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[ORDLOCK_A_DOMAIN],
					    ORDLOCK_NL_DOMAIN_LIMIT_MSG);
		} else {
			NL_SET_ERR_MSG(info->extack, "cannot configure the domain");
		}
		goto out;
	}
	ret = ordlock_nl_domain_reply(info, domain, false);
	ordlock_domain_put(domain);
out:
	kfree(names);
	return ret;
}
