// SPDX-License-Identifier: GPL-2.0
/*
 * Netlink message helpers: the nested policies of a key and of a rank
 * name, and the attributes every part of the family writes (keys, owners,
 * failure records, cycles).
 */
#include <net/genetlink.h>

#include "keys.h"
#include "netlink.h"
#include "owner.h"
#include "xdetect.h"

/* The attributes of an ORDLOCK_A_KEY */
const struct nla_policy ordlock_nl_key_policy[ORDLOCK_K_MAX + 1] = {
	[ORDLOCK_K_RANK] = { .type = NLA_U32 },
	[ORDLOCK_K_ID] = { .type = NLA_U64 },
	[ORDLOCK_K_MODE] = NLA_POLICY_RANGE(NLA_U32, 0, ORDLOCK_MODE_EXCLUSIVE),
	[ORDLOCK_K_TOKEN] = { .type = NLA_U64 },
};

/* The attributes of an ORDLOCK_A_ENTRY of ORDLOCK_A_RANK_NAMES */
const struct nla_policy ordlock_nl_entry_policy[ORDLOCK_E_MAX + 1] = {
	[ORDLOCK_E_RANK] = { .type = NLA_U32 },
	[ORDLOCK_E_NAME] = { .type = NLA_NUL_STRING, .len = ORDLOCK_RANK_NAME_MAX - 1 },
};

int ordlock_nl_put_key(struct sk_buff *skb, int type, u32 rank, u64 id,
		       u32 mode)
{
	struct nlattr *nest = nla_nest_start(skb, type);

	if (!nest ||
	    nla_put_u32(skb, ORDLOCK_K_RANK, rank) ||
	    nla_put_u64_64bit(skb, ORDLOCK_K_ID, id, ORDLOCK_K_PAD) ||
	    (mode && nla_put_u32(skb, ORDLOCK_K_MODE, mode)))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

int ordlock_nl_put_failure(struct sk_buff *skb,
			   const struct ordlock_failure *f)
{
	struct nlattr *nest = nla_nest_start(skb, ORDLOCK_A_FAILURE);

	if (!nest ||
	    nla_put_u32(skb, ORDLOCK_F_REASON, f->reason) ||
	    nla_put_u32(skb, ORDLOCK_F_ERRNO, f->error) ||
	    nla_put_u32(skb, ORDLOCK_F_PID, f->pid) ||
	    nla_put_u32(skb, ORDLOCK_F_INDEX, f->index) ||
	    ordlock_nl_put_key(skb, ORDLOCK_F_KEY, f->key.rank, f->key.id, f->key.mode) ||
	    (f->held.mode &&
	     ordlock_nl_put_key(skb, ORDLOCK_F_HELD, f->held.rank, f->held.id,
				f->held.mode)) ||
	    nla_put_u32(skb, ORDLOCK_F_HOLDER_MODE, f->holder_mode) ||
	    nla_put_u32(skb, ORDLOCK_F_CYCLE_LEN, f->cycle_len))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

int ordlock_nl_put_owner(struct sk_buff *skb, u64 id, pid_t pid,
			 const char *comm)
{
	char clean[ORDLOCK_COMM_LEN];

	ordlock_comm_sanitize(clean, comm);
	if (nla_put_u64_64bit(skb, ORDLOCK_E_OWNER_ID, id, ORDLOCK_E_PAD) ||
	    nla_put_u32(skb, ORDLOCK_E_PID, pid) ||
	    nla_put_string(skb, ORDLOCK_E_COMM, clean))
		return -EMSGSIZE;
	return 0;
}

int ordlock_nl_put_cycle(struct sk_buff *skb, struct ordlock_owner *owner)
{
	struct nlattr *cycle, *step;
	unsigned int i;

	if (owner->failure.reason != ORDLOCK_REASON_DEADLOCK || !owner->cycle)
		return 0;
	cycle = nla_nest_start(skb, ORDLOCK_A_CYCLE);
	if (!cycle)
		return -EMSGSIZE;
	for (i = 0; i < owner->ncycle; i++) {
		const struct ordlock_cycle_step *s = &owner->cycle[i];

		step = nla_nest_start(skb, ORDLOCK_A_ENTRY);
		if (!step ||
		    ordlock_nl_put_owner(skb, s->owner_id, s->pid, s->comm) ||
		    nla_put_string(skb, ORDLOCK_E_DOMAIN,
				   ordlock_owner_cycle_domain(owner, i)) ||
		    ordlock_nl_put_key(skb, ORDLOCK_E_KEY, s->key.rank, s->key.id,
				       s->key.mode) ||
		    nla_put_u32(skb, ORDLOCK_E_EDGE, s->edge) ||
		    nla_put_u32(skb, ORDLOCK_E_MODE, s->blocker_mode) ||
		    ((s->flags & ORDLOCK_STEP_OTHER_NODE) &&
		     nla_put_u32(skb, ORDLOCK_E_XD_NODE,
				 ordlock_xd_step_node(owner, i))))
			return -EMSGSIZE;
		nla_nest_end(skb, step);
	}
	nla_nest_end(skb, cycle);
	return 0;
}

/* ORDLOCK_E_LABEL, when @label is not empty (read racily: copied first) */
int ordlock_nl_put_label(struct sk_buff *skb, const char *label)
{
	char copy[ORDLOCK_LABEL_MAX];

	memcpy(copy, label, sizeof(copy));
	copy[sizeof(copy) - 1] = '\0';
	if (!copy[0])
		return 0;
	return nla_put_string(skb, ORDLOCK_E_LABEL, copy);
}
