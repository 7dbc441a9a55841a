/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordlockctl: the data model and its parsers.
 *
 * The records of the debugfs files (README.md, "debugfs") and of the
 * netlink dumps land in the same structures, so that every subcommand works
 * the same whichever source it read. The text parsers are pure functions of
 * a buffer: they never crash on malformed input and name the line of the
 * first error (they are unit-tested and fuzzed on the host).
 *
 * Keys are written "RANK:ID" or "NAME:ID", NAME a rank name of the domain
 * (ORDLOCK_CMD_DOMAIN_GET); rank names start with a letter, so the two
 * forms never overlap.
 */
#ifndef ORDLOCKCTL_PARSE_H
#define ORDLOCKCTL_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/ordlock.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* An owner as the kernel shows it: id, pid of its last user, command */
struct olc_who {
	uint64_t id;
	uint32_t pid;
	char comm[ORDLOCK_COMM_LEN];
	uint32_t node;		/* another node's id (a cycle across nodes), 0: this one */
};

/* One edge of the wait-for graph: @waiter waits for @blocker on the key */
struct olc_edge {
	struct olc_who waiter;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	uint32_t rank;
	uint64_t id;
	unsigned int mode;		/* the mode the waiter asks for */
	struct olc_who blocker;
	unsigned int blocker_mode;	/* held (hard) or asked (soft) in */
	unsigned int type;		/* ORDLOCK_EDGE_HARD or _SOFT */
	uint64_t waited_us;
	unsigned int line;		/* line of the graph file; 0: netlink */
	int fast;			/* hard: the blocker holds the key by
					 * the fast path (debugfs "fast") */
	uint32_t fast_index;		/* then, from netlink: its owner index */
};

struct olc_edges {
	struct olc_edge *v;
	size_t n, cap;
};

/* One holder or queued waiter of a resource */
struct olc_lock {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	uint32_t rank;
	uint64_t id;
	unsigned int role;		/* enum ordlock_role */
	unsigned int pos;
	struct olc_who owner;
	unsigned int mode;
	uint64_t value;			/* holder: token; else waited_us */
	int cluster_wait;		/* a holder granted here that waits for
					 * the cluster: @value is waited_us */
	int has_lease;			/* a holder with a lease */
	int fast;			/* a holder by the fast path (TOKEN
					 * "fast:INDEX"): @value is the owner
					 * index its key's word names */
	uint64_t lease_left_ms;		/* then: its milliseconds left */
};

struct olc_locks {
	struct olc_lock *v;
	size_t n, cap;
};

struct olc_owner {
	struct olc_who who;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int kind;		/* enum ordlock_owner_kind */
	unsigned int held;
	unsigned int wmode;		/* 0: not waiting */
	uint32_t wrank;
	uint64_t wid;
	uint64_t waited_us;
	char label[ORDLOCK_LABEL_MAX];	/* "" for none */
};

struct olc_owners {
	struct olc_owner *v;
	size_t n, cap;
};

/* One recorded step of a deadlock the kernel detected */
struct olc_dstep {
	unsigned int index;
	struct olc_who who;
	unsigned int mode;
	uint32_t rank;
	uint64_t id;
	unsigned int edge;
	unsigned int blocker_mode;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];	/* the step's (a thread may cross) */
};

struct olc_deadlock {
	uint64_t seq;
	uint64_t time_ns;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int len;		/* steps of the cycle */
	unsigned int nsteps;		/* steps recorded (at most len) */
	struct olc_dstep *steps;
};

struct olc_deadlocks {
	struct olc_deadlock *v;
	size_t n, cap;
};

#define OLC_NAME_LEN	32
#define OLC_STATS_MAX	48

struct olc_stat {
	char name[OLC_NAME_LEN];
	uint64_t value;
};

/* The counters of one domain, in the order the source gave them */
struct olc_domain_stats {
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	char policy[16];
	int have_delay;
	unsigned int detect_delay_ms;
	unsigned int n;
	struct olc_stat v[OLC_STATS_MAX];
	int have_hist;
	unsigned int nhist;
	struct olc_stat hist[OLC_STATS_MAX];
};

struct olc_stats {
	int have_global;
	uint64_t owners;
	uint64_t resources;
	struct olc_domain_stats *v;
	size_t n, cap;
};

/* Why a text did not parse: the line (1-based) and what is wrong */
struct olc_perr {
	unsigned int line;
	char msg[160];
};

/*
 * The parsers of the debugfs files. Each takes the whole file in @buf
 * (@len bytes, NUL bytes allowed and rejected), checks the version line
 * "# ordlock FILE v1", appends one record per data line to @out and
 * returns 0; or -EPROTO with @err filled (the line and the reason), or
 * -ENOMEM. On error @out keeps the records before the bad line.
 */
int olc_parse_graph(const char *buf, size_t len, struct olc_edges *out,
		    struct olc_perr *err);
int olc_parse_locks(const char *buf, size_t len, struct olc_locks *out,
		    struct olc_perr *err);
int olc_parse_owners(const char *buf, size_t len, struct olc_owners *out,
		     struct olc_perr *err);
int olc_parse_deadlocks(const char *buf, size_t len, struct olc_deadlocks *out,
			struct olc_perr *err);
int olc_parse_stats(const char *buf, size_t len, struct olc_stats *out,
		    struct olc_perr *err);

void olc_edges_free(struct olc_edges *e);
void olc_locks_free(struct olc_locks *l);
void olc_owners_free(struct olc_owners *o);
void olc_deadlocks_free(struct olc_deadlocks *d);
void olc_stats_free(struct olc_stats *s);

/* Append a zeroed record; NULL when out of memory */
struct olc_edge *olc_edges_add(struct olc_edges *e);
struct olc_lock *olc_locks_add(struct olc_locks *l);
struct olc_owner *olc_owners_add(struct olc_owners *o);
struct olc_domain_stats *olc_stats_add(struct olc_stats *s);

/* Numbers and words, strict: the whole string, no sign, no overflow */
int olc_parse_u64(const char *s, uint64_t *v);
int olc_parse_u32(const char *s, uint32_t *v);
/* "shared" 1, "exclusive" 2; else -1 */
int olc_mode_parse(const char *s);
const char *olc_mode_str(unsigned int mode);
/* "hard", "soft", "thread" */
const char *olc_edge_str(unsigned int type);
/* "fast" for a hard edge whose blocker holds by the fast path, else as above */
const char *olc_edge_shown(const struct olc_edge *e);
/* "enforce" 0, "detect" 1, "timeout" 2; else -1 */
int olc_policy_parse(const char *s);
const char *olc_policy_str(unsigned int policy);
const char *olc_role_str(unsigned int role);
const char *olc_kind_str(unsigned int kind);
/* 0 when @s is a valid domain name (1-31 of [A-Za-z0-9._-]) */
int olc_domain_check(const char *s);
/* 0 when @s is a valid rank name (as a domain name, starting with a letter) */
int olc_rank_name_check(const char *s);

/* Rank names of one domain */
struct olc_rank_name {
	uint32_t rank;
	char name[ORDLOCK_RANK_NAME_MAX];
};

struct olc_rank_names {
	unsigned int n;
	struct olc_rank_name v[ORDLOCK_RANK_NAMES_MAX];
};

/* The name of @rank, or NULL */
const char *olc_rank_name(const struct olc_rank_names *names, uint32_t rank);

/*
 * olc_key_parse() - parse "RANK:ID" or "NAME:ID" (@names may be NULL:
 * then only the numeric form parses). Returns 0; or -EINVAL with a reason
 * in @why (@whylen bytes).
 */
int olc_key_parse(const char *s, const struct olc_rank_names *names,
		  uint32_t *rank, uint64_t *id, char *why, size_t whylen);

/* olc_key_uses_name() - @s is written "NAME:ID" */
int olc_key_uses_name(const char *s);

/*
 * olc_key_syntax() - whether @s is written as a key at all, before the
 * domain's rank names are known: RANK:ID parsed whole, NAME:ID with a
 * well-formed name and id. 0, or -EINVAL with the reason in @why.
 */
int olc_key_syntax(const char *s, char *why, size_t whylen);

/* olc_key_str() - "NAME:ID" when @names knows the rank, else "RANK:ID" */
char *olc_key_str(char *buf, size_t len, const struct olc_rank_names *names,
		  uint32_t rank, uint64_t id);

#endif /* ORDLOCKCTL_PARSE_H */
