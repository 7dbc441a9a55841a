/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family "ordlock": the one internal header of its
 * files, by file. main.c uses only ordlock_nl_init() and ordlock_nl_exit().
 */
#ifndef _ORDLOCK_NETLINK_H
#define _ORDLOCK_NETLINK_H

#include <linux/types.h>
#include <net/genetlink.h>
#include <linux/ordlock.h>

struct ordlock_failure;
struct ordlock_domain;
struct ordlock_owner;

/* netlink.c */
extern struct genl_family ordlock_genl_family;

enum {
	ORDLOCK_NL_MCGRP_EVENTS,
	ORDLOCK_NL_MCGRP_XDETECT,
};

int ordlock_nl_init(void);
void ordlock_nl_exit(void);

/* nl_msg.c */
extern const struct nla_policy ordlock_nl_key_policy[ORDLOCK_K_MAX + 1];
extern const struct nla_policy ordlock_nl_entry_policy[ORDLOCK_E_MAX + 1];

/*
 * The entries of the per-command policies: how a command takes each
 * request attribute of the family, or that it does not
 */
#define ORDLOCK_NL_TAKES_DOMAIN \
	{ .type = NLA_NUL_STRING, .len = ORDLOCK_DOMAIN_NAME_MAX - 1 }
#define ORDLOCK_NL_TAKES_KEYS		NLA_POLICY_NESTED_ARRAY(ordlock_nl_key_policy)
#define ORDLOCK_NL_TAKES_FLAGS		{ .type = NLA_U32 }
#define ORDLOCK_NL_TAKES_TIMEOUT_NS	{ .type = NLA_U64 }
#define ORDLOCK_NL_TAKES_COOKIE		{ .type = NLA_U64 }
#define ORDLOCK_NL_TAKES_POLICY \
	NLA_POLICY_MAX(NLA_U32, ORDLOCK_POLICY_TIMEOUT)
#define ORDLOCK_NL_TAKES_DETECT_DELAY_MS { .type = NLA_U32 }
#define ORDLOCK_NL_TAKES_STRICT		NLA_POLICY_MAX(NLA_U32, 1)
#define ORDLOCK_NL_TAKES_CLUSTER	NLA_POLICY_MAX(NLA_U32, 1)
#define ORDLOCK_NL_TAKES_FASTPATH	NLA_POLICY_MAX(NLA_U32, 1)
#define ORDLOCK_NL_TAKES_FASTPATH_UID	{ .type = NLA_U32 }
#define ORDLOCK_NL_TAKES_LEASE_MS	{ .type = NLA_U32 }
#define ORDLOCK_NL_TAKES_MAX_HOLD_MS	{ .type = NLA_U32 }
#define ORDLOCK_NL_TAKES_RANK_NAMES \
	NLA_POLICY_NESTED_ARRAY(ordlock_nl_entry_policy)
#define ORDLOCK_NL_TAKES_LABEL \
	{ .type = NLA_NUL_STRING, .len = ORDLOCK_LABEL_MAX - 1 }
#define ORDLOCK_NL_NOT_TAKEN_MSG	"attribute not taken by this command"

/**
 * struct ordlock_nl_take - an attribute a command takes, and how
 * @attr: the attribute (ORDLOCK_A_*); 0 ends a command's list
 * @policy: its entry in the command's policy
 *
 * A command's policy is built at init from the list of what it takes
 * (ordlock_nl_init()): every other attribute of the family but
 * ORDLOCK_A_PAD is refused there, "attribute not taken by this command".
 */
struct ordlock_nl_take {
	u16 attr;
	struct nla_policy policy;
};

/* The extack of a domain its creator's user may not create */
#define ORDLOCK_NL_DOMAIN_LIMIT_MSG \
	"this user has max_domains_per_user domains already"

int ordlock_nl_put_key(struct sk_buff *skb, int type, u32 rank, u64 id,
		       u32 mode);
int ordlock_nl_put_failure(struct sk_buff *skb,
			   const struct ordlock_failure *f);
int ordlock_nl_put_owner(struct sk_buff *skb, u64 id, pid_t pid,
			 const char *comm);
int ordlock_nl_put_cycle(struct sk_buff *skb, struct ordlock_owner *owner);
int ordlock_nl_put_label(struct sk_buff *skb, const char *label);

/* nl_lock.c */
extern const struct ordlock_nl_take ordlock_nl_lock_takes[];
extern const struct ordlock_nl_take ordlock_nl_release_takes[];
extern const struct ordlock_nl_take ordlock_nl_cancel_takes[];
int ordlock_nl_acquire_doit(struct sk_buff *skb, struct genl_info *info);
int ordlock_nl_convert_doit(struct sk_buff *skb, struct genl_info *info);
int ordlock_nl_release_doit(struct sk_buff *skb, struct genl_info *info);
int ordlock_nl_cancel_doit(struct sk_buff *skb, struct genl_info *info);
extern const struct ordlock_nl_take ordlock_nl_label_takes[];
int ordlock_nl_set_label_doit(struct sk_buff *skb, struct genl_info *info);
extern const struct ordlock_nl_take ordlock_nl_renew_takes[];
extern const struct ordlock_nl_take ordlock_nl_token_check_takes[];
int ordlock_nl_renew_doit(struct sk_buff *skb, struct genl_info *info);
int ordlock_nl_token_check_doit(struct sk_buff *skb, struct genl_info *info);
int ordlock_nl_owners_init(void);
void ordlock_nl_owners_exit(void);

/* nl_dump.c */
extern const struct ordlock_nl_take ordlock_nl_dump_takes[];
int ordlock_nl_dump_check(struct netlink_callback *cb);
int ordlock_nl_locks_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int ordlock_nl_owners_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int ordlock_nl_graph_dumpit(struct sk_buff *skb, struct netlink_callback *cb);

/* nl_domain.c */
extern const struct ordlock_nl_take ordlock_nl_domain_get_takes[];
extern const struct ordlock_nl_take ordlock_nl_domain_set_takes[];
int ordlock_nl_domain_get_doit(struct sk_buff *skb, struct genl_info *info);
int ordlock_nl_domain_set_doit(struct sk_buff *skb, struct genl_info *info);

/* nl_event.c */
int ordlock_nl_event_init(void);
void ordlock_nl_event_exit(void);

/* nl_xdetect.c */
extern const struct ordlock_nl_take ordlock_nl_xd_hello_takes[];
extern const struct ordlock_nl_take ordlock_nl_xd_check_takes[];
extern const struct ordlock_nl_take ordlock_nl_xd_fail_takes[];
int ordlock_nl_xd_hello_doit(struct sk_buff *skb, struct genl_info *info);
int ordlock_nl_xd_check_doit(struct sk_buff *skb, struct genl_info *info);
int ordlock_nl_xd_fail_doit(struct sk_buff *skb, struct genl_info *info);
int ordlock_nl_xd_put_state(struct sk_buff *msg);
struct ordlock_owner *ordlock_nl_xd_owner(struct list_head *owners,
					  struct ordlock_domain *domain, u64 id);
int ordlock_nl_xd_key(struct nlattr *attr, struct netlink_ext_ack *extack,
		      bool need_mode, struct ordlock_key *key);

/* nl_xdwalk.c */
/**
 * struct ordlock_nl_xd_vert - a vertex of a path of XD_WALK
 * @owner: the owner id
 * @pid: its pid
 * @comm: its command, as the views show it
 * @rank: the key it waits for
 * @id: its id
 * @mode: the mode it asks for
 * @edge: how the next vertex blocks it (0 for the last)
 * @bmode: the mode in which the next vertex holds or asks for the key
 * @gen: the generation of its wait
 * @hold_gen: the generation of its hold through which the previous vertex
 *	(or the remote waiter the walk started from) waits for it, 0: none
 * @since: when its wait started, CLOCK_REALTIME ns
 * @cluster_wait: it waits in the DLM
 */
struct ordlock_nl_xd_vert {
	u64 owner;
	pid_t pid;
	char comm[ORDLOCK_COMM_LEN];
	u32 rank;
	u64 id;
	u32 mode;
	u32 edge;
	u32 bmode;
	u64 gen;
	u64 hold_gen;
	u64 since;
	u32 lkid;
	bool cluster_wait;
};

extern const struct ordlock_nl_take ordlock_nl_xd_walk_takes[];
int ordlock_nl_xd_walk_start(struct netlink_callback *cb);
int ordlock_nl_xd_walk_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int ordlock_nl_xd_walk_done(struct netlink_callback *cb);
/**
 * struct ordlock_nl_xd_wait - a current wait, for the registration's replay
 * @v: the wait, as a vertex without an incoming edge
 * @domain: its domain's name
 */
struct ordlock_nl_xd_wait {
	struct ordlock_nl_xd_vert v;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
};

void ordlock_nl_xd_vert_of(struct ordlock_nl_xd_vert *v,
			   struct ordlock_owner *owner, u64 hold_gen);
int ordlock_nl_xd_replay_snap(struct ordlock_nl_xd_wait **out);
int ordlock_nl_xd_init(void);
void ordlock_nl_xd_exit(void);

#endif /* _ORDLOCK_NETLINK_H */
