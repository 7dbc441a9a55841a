/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordlockctl: ordlock-xdetectd's answers read back (xdparse.c, no libnl:
 * the unit tests link it). The daemon answers "locks" with every node's
 * holders and waiters (gathered over CPG) and "state" with its rounds
 * across nodes, both one JSON object (ordlock-xdetectd(8)); this reads the
 * parts the pretty outputs print, and decides who blocks an owner of any
 * node from the view.
 */
#ifndef ORDLOCKCTL_XDPARSE_H
#define ORDLOCKCTL_XDPARSE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/ordlock.h>

#define OLC_XD_NODES_MAX	64

/**
 * struct olc_xd_owner - an owner of some node, as the daemon names it
 * @node: its corosync node id
 * @owner_id: the owner's id on @node
 * @pid, @comm: its process
 * @rank, @id, @mode: the key (ORDLOCK_MODE_*)
 * @in_dlm: it waits for the key's lock in the DLM
 */
struct olc_xd_owner {
	uint32_t node;
	uint64_t owner_id;
	uint32_t pid;
	char comm[ORDLOCK_COMM_LEN];
	uint32_t rank;
	uint64_t id;
	uint32_t mode;
	int in_dlm;
};

/**
 * struct olc_xd_lock - a holder or waiter of a node ("locks")
 * @domain: its domain
 * @role: ORDLOCK_ROLE_*
 * @pos: its place in the node's queue (a daemon that does not say: 0)
 * @has_waited, @waited_us: how long it has waited, as its node answered
 *	(a waiter, or a holder that waits in the DLM)
 * @start_ns: when that wait started (CLOCK_REALTIME of its node; 0 none)
 * @o: the owner and the key
 */
struct olc_xd_lock {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int role;
	uint32_t pos;
	int has_waited;
	uint64_t waited_us;
	uint64_t start_ns;
	struct olc_xd_owner o;
};

/**
 * struct olc_xd_view - the answer to "locks"
 * @node: the node that asked (this one)
 * @nodes: the nodes that answered, @nnodes
 * @missing: the members that did not answer in time, @nmissing
 * @complete: every member answered
 * @v: the locks, @n of them
 */
struct olc_xd_view {
	uint32_t node;
	uint32_t nodes[OLC_XD_NODES_MAX];
	size_t nnodes;
	uint32_t missing[OLC_XD_NODES_MAX];
	size_t nmissing;
	int complete;
	struct olc_xd_lock *v;
	size_t n;
};

/**
 * struct olc_xd_round - a round decided (or aborted) across nodes
 * @round: its name, "NODE:SEQ" of its initiator
 * @domain: the cluster domain
 * @state: "decided", "aborted" or "pending"
 * @opened_ns, @closed_ns: CLOCK_REALTIME of the answering node
 * @victim: index in @cycle of the victim (-1: none)
 * @failed_here: the answering node failed the victim's wait
 * @cycle: the cycle, vertex i waiting for vertex i + 1, @n of them
 */
struct olc_xd_round {
	char round[32];
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	char state[16];
	uint64_t opened_ns, closed_ns;
	int victim;
	int failed_here;
	struct olc_xd_owner *cycle;
	size_t n;
};

/* The answer to "state": the node, its group's members, the rounds */
struct olc_xd_state {
	uint32_t node;
	char state[16];
	uint32_t members[OLC_XD_NODES_MAX];
	size_t nmembers;
	struct olc_xd_round *r;
	size_t n;
};

/*
 * olc_xd_parse_view(), olc_xd_parse_state() - read the daemon's answer
 * @text: 0, or -EPROTO with what is wrong in @err (@errlen bytes), or
 * -ENOMEM. A daemon's {"error": "..."} is -EAGAIN with its text in @err.
 */
int olc_xd_parse_view(const char *text, struct olc_xd_view *out, char *err,
		      size_t errlen);
void olc_xd_view_free(struct olc_xd_view *v);
int olc_xd_parse_state(const char *text, struct olc_xd_state *out, char *err,
		       size_t errlen);
void olc_xd_state_free(struct olc_xd_state *s);

/*
 * olc_xd_parse_who() - "PID" or "NODE:PID" (blockers' argument): *@node 0
 * when not given. 0, or -1 when @s is neither.
 */
int olc_xd_parse_who(const char *s, uint32_t *node, uint32_t *pid);

/* How a lock of the view stands in the way of another (olc_xd_blockers) */
enum olc_xd_edge {
	OLC_XD_HOLDS = 1,	/* holds the key on the waiter's node */
	OLC_XD_QUEUED,		/* queued ahead of it on its node */
	OLC_XD_DLM_HOLDS,	/* holds it on another node (the DLM) */
	OLC_XD_DLM_QUEUED,	/* waits in the DLM since before it */
};

/* A blocker found: @blocker stands in the way of @waiter (indices in v) */
struct olc_xd_block {
	size_t waiter, blocker;
	enum olc_xd_edge edge;
};

/*
 * olc_xd_blockers() - who blocks the locks of @view that wait, of process
 * @pid on node @node (the rows @want returns true for): on the waiter's
 * node the holders in a conflicting mode and the waiters queued ahead
 * with one; for a holder that waits in the DLM, the holders of the key on
 * the other nodes (not waiting in the DLM) in a conflicting mode, and
 * those that wait in the DLM for it with a conflicting mode since before
 * (by the wait's start time: the nodes' clocks). Into @out (at most @max);
 * returns how many there are (more than @max: not all kept).
 */
size_t olc_xd_blockers(const struct olc_xd_view *view, uint32_t node, uint32_t pid,
		       int (*want)(uint32_t want_pid, uint32_t pid),
		       struct olc_xd_block *out, size_t max);

#endif /* ORDLOCKCTL_XDPARSE_H */
