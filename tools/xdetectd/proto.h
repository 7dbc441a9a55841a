/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The protocol of ordlock-xdetectd (docs/cluster.md, "Deadlocks across
 * nodes"; the model is tests/model/xdetect.pml): edge chasing with probes
 * and a confirming round over corosync's CPG, whose agreed order and
 * virtual synchrony the proof uses.
 *
 * This file is the pure part: the state of one node's daemon (its waits,
 * the rounds, the membership), what it does when a message of the group
 * is delivered in the agreed order, when a membership change is
 * delivered, when the kernel reports a wait, and on the clock; and the
 * messages' fixed layout on the wire. The kernel and CPG are behind
 * struct xd_ops, so tests/unit/t_xd_proto.c drives it without either.
 *
 * The rules, as the model has them:
 * - a wait that lasted its probe delay is probed once per generation (and
 *   again after every membership change): its local paths (the kernel's
 *   walk) are multicast as PROBEs;
 * - a delivered PROBE is extended on every node through the holders there
 *   of the key its last vertex waits for (the kernel's walk from the
 *   key): closed at its first vertex (still waiting with its generation:
 *   a CONFIRM, unless a round of the same cycle delivered here is pending
 *   or decided), dropped when a holder is elsewhere in the path, sent on
 *   when the path ends at a wait in the DLM;
 * - soft edges across nodes: on the key's master (the DLM's queue is
 *   known there only) the PROBE is also extended through each request
 *   queued ahead of its last vertex's in a conflicting mode: a "queued
 *   ahead" step (XD_V_QUEUED: node and DLM lock id, and the queue
 *   entries' times on the master), which the node of that request turns
 *   into its owner's wait (the one with that lock id), as it extends a
 *   path through a holder;
 * - a delivered CONFIRM opens a round; every node with vertices in it
 *   ACKs after one kernel check (live: each vertex still waits with its
 *   generation and holds the key of its incoming edge with that hold's),
 *   and so does the master of each soft edge across nodes (live: the two
 *   requests are still queued, the same entries, one ahead of the other);
 * - the round is decided at the ACK that completes it (every node of the
 *   path ACKed live, none dead, none left before): the victim is the
 *   vertex with the greatest (wait start time, node id, owner id), and
 *   only its node asks its kernel to fail it;
 * - a membership change aborts the pending rounds with a vertex of a node
 *   that left, and every current wait is probed again.
 */
#ifndef ORDLOCK_XDETECTD_PROTO_H
#define ORDLOCK_XDETECTD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest path: ORDLOCK_CYCLE_MAX */
#define XD_PATH_MAX		64
/* Paths of one kernel walk: ORDLOCK_XD_PATHS_MAX */
#define XD_PATHS_MAX		64
/* Decided (or aborted) rounds kept for the history */
#define XD_ROUNDS_KEPT		256
/* Rounds pending at once; beyond, the oldest pending one is aborted */
#define XD_ROUNDS_PENDING	256
/* Waits of this node followed at once; beyond, new ones are not probed */
#define XD_WAITS_MAX		4096
/* Members of the group */
#define XD_MEMBERS_MAX		64
/* Ends of waits the daemon did not know, kept to refuse their late WAIT */
#define XD_ENDED_KEPT		64
#define XD_NAME_LEN		32	/* ORDLOCK_DOMAIN_NAME_MAX */
#define XD_COMM_LEN		16	/* ORDLOCK_COMM_LEN */
/* The shortest probe delay (the domain's detect_delay_ms, at least this) */
#define XD_PROBE_DELAY_MIN_MS	50

/* xd_vertex.flags */
#define XD_V_CLUSTER_WAIT	(1U << 0)	/* the wait is in the DLM */
#define XD_V_SOFT		(1U << 1)	/* the incoming edge is soft */
/* a VIEW's entries (a lock of a node, not a wait): holds it, converts it */
#define XD_V_HOLDER		(1U << 2)
#define XD_V_CONVERTER		(1U << 3)
/* a "queued ahead" step: a request of @node (@lkid) queued ahead of the
 * previous vertex's in the DLM, not turned into its owner's wait yet */
#define XD_V_QUEUED		(1U << 4)

/**
 * struct xd_vertex - one wait of a path
 * @boot: the boot id of the module of @node
 * @owner: the owner's id on @node
 * @gen: the wait's generation
 * @hold_gen: the generation of the hold through which the previous vertex
 *	waits for this owner (hard incoming edge; 0: soft or unknown yet)
 * @start_ns: the wait's start, CLOCK_REALTIME of @node
 * @key_id, @key_rank, @mode: the key waited for and the mode asked
 * @node: the corosync node id
 * @pid, @comm: the owner's process
 * @lkid: the DLM lock id of a wait in the DLM (on @node; 0 not known)
 * @flags: XD_V_*
 * @q_master: a soft incoming edge across nodes (this wait's request queued
 *	ahead of the previous vertex's in the DLM): the node that masters
 *	the key and confirms the edge; 0 for any other edge
 * @q_ts, @q_prev_ts: the times this request and the previous vertex's
 *	entered their queues on @q_master (the DLM's own, its monotonic
 *	clock): the same entries when confirmed
 */
struct xd_vertex {
	uint64_t boot;
	uint64_t owner;
	uint64_t gen;
	uint64_t hold_gen;
	uint64_t start_ns;
	uint64_t key_id;
	uint32_t key_rank;
	uint32_t mode;
	uint32_t node;
	uint32_t pid;
	uint32_t lkid;
	uint32_t flags;
	uint32_t q_master;
	uint64_t q_ts, q_prev_ts;
	char comm[XD_COMM_LEN];
};

/**
 * struct xd_qent - a request queued in the DLM for a key this node masters
 * @node: its node (this node's id for its own)
 * @lkid: its lock id on @node
 * @mode: the ordlock mode it asks (ORDLOCK_MODE_SHARED or _EXCLUSIVE)
 * @ts: when it entered its queue, the DLM's time on this node
 */
struct xd_qent {
	uint32_t node;
	uint32_t lkid;
	uint32_t mode;
	uint64_t ts;
};

/* ORDLOCK_MODE_EXCLUSIVE: conflicts with every mode */
#define XD_MODE_EXCLUSIVE	2

/* Entries of one key's DLM queue looked at, at most */
#define XD_QUEUE_MAX		64

/* A path: vertex i waits for vertex i + 1 */
struct xd_path {
	unsigned int len;
	struct xd_vertex v[XD_PATH_MAX];
};

/* The paths of one kernel walk */
struct xd_paths {
	unsigned int n;
	struct xd_path p[XD_PATHS_MAX];
};

/**
 * struct xd_check - a vertex of this node for the kernel's check
 * @owner, @gen: the owner's current wait must have this generation
 * @key_id, @key_rank: the key of the incoming edge (the previous vertex
 *	waits for it), held by @owner with generation @hold_gen (hard edge;
 *	@soft: queued ahead instead)
 */
struct xd_check {
	uint64_t owner;
	uint64_t gen;
	uint64_t hold_gen;
	uint64_t key_id;
	uint32_t key_rank;
	bool soft;
};

/* Message kinds */
enum xd_kind {
	XD_MSG_PROBE = 1,
	XD_MSG_CONFIRM = 2,
	XD_MSG_ACK = 3,
	/* the cluster's view (not the protocol: xdetectd.c answers them) */
	XD_MSG_VIEW_REQ = 4,	/* round: the request; no entries */
	XD_MSG_VIEW = 5,	/* round: the request; live: the last part;
				 * entries: locks of the sender's node, with
				 * @gen their queue position, and when waiting
				 * @hold_gen the microseconds waited, @start_ns the
				 * wait's start (else both 0) */
	__XD_MSG_MAX
};

/* Round states */
enum xd_round_state {
	XD_ROUND_PENDING = 0,
	XD_ROUND_DECIDED = 1,	/* every node ACKed live: a victim */
	XD_ROUND_ABORTED = 2,	/* a dead ACK or a node of it left */
};

/* Why a round was aborted */
enum xd_abort {
	XD_ABORT_NONE = 0,
	XD_ABORT_DEAD,		/* a node ACKed dead */
	XD_ABORT_LEFT,		/* a node of the path left the group */
	XD_ABORT_EVICTED,	/* too many rounds pending */
};

/**
 * struct xd_round - a confirming round (a CONFIRM delivered)
 * @id_node, @id_seq: the round: its initiator's node and sequence number
 * @domain: the cluster domain
 * @path: the cycle, as confirmed
 * @nodes: the distinct nodes of the path, @nnodes of them
 * @acked: bit i: @nodes[i] ACKed live
 * @state: enum xd_round_state; @why: enum xd_abort
 * @victim: index in @path of the victim (decided rounds)
 * @failed: this node asked its kernel to fail the victim; @fail_ret: the
 *	kernel's answer (0 failed, -ESTALE the wait had ended)
 * @opened_ns, @closed_ns: CLOCK_REALTIME of the CONFIRM's and the
 *	deciding message's delivery here
 * @order: delivery order here (history)
 */
struct xd_round {
	uint32_t id_node;
	uint64_t id_seq;
	char domain[XD_NAME_LEN];
	struct xd_path path;
	uint32_t nodes[XD_PATH_MAX];
	unsigned int nnodes;
	uint64_t acked;
	int state;
	int why;
	int victim;
	bool failed;
	int fail_ret;
	uint64_t opened_ns, closed_ns;
	uint64_t order;
};

/**
 * struct xd_wait - a wait of this node (from the kernel's XD_EVENTs)
 * @v: the vertex (node, boot filled in)
 * @domain: its domain
 * @since_ms: CLOCK_MONOTONIC ms when it started (its start time, as the
 *	kernel says, at most when the daemon learned of it)
 * @delay_ms: its probe delay
 * @probed: a probe was started for this generation (since the last
 *	membership change)
 */
struct xd_wait {
	struct xd_vertex v;
	char domain[XD_NAME_LEN];
	uint64_t since_ms;
	uint32_t delay_ms;
	bool probed;
};

/*
 * What the protocol needs from the kernel and CPG. Each returns 0 (or
 * what is said) or a negative errno.
 */
struct xd_ops {
	/* the local paths from @owner's wait of generation @gen (-ESTALE: it
	 * has another one) */
	int (*walk_owner)(void *ctx, const char *domain, uint64_t owner,
			  uint64_t gen, struct xd_paths *out);
	/* the local paths from the owners here that hold the key @waiter
	 * waits for, in a mode that conflicts with @waiter's */
	int (*walk_key)(void *ctx, const char *domain,
			const struct xd_vertex *waiter, struct xd_paths *out);
	/* the requests queued in the DLM for key (@rank, @id) of @domain,
	 * convert queue then wait queue (the DLM grants in that order):
	 * their count (at most @max in @out), -ENOENT when this node does
	 * not master it; NULL: no soft edges across nodes */
	int (*dlm_queue)(void *ctx, const char *domain, uint32_t rank, uint64_t id,
			 struct xd_qent *out, unsigned int max);
	/* 1 when every one of @n vertices stands, 0 when one does not */
	int (*check)(void *ctx, const char *domain, const struct xd_check *c,
		     unsigned int n);
	/* fail the victim @cycle[0]'s wait with EDEADLK and the cycle
	 * (-ESTALE: that wait had ended) */
	int (*fail)(void *ctx, const char *domain, const struct xd_vertex *cycle,
		    unsigned int n);
	/* multicast a message to the group (agreed order) */
	int (*send)(void *ctx, const void *buf, size_t len);
	/* a line for the log (may be NULL) */
	void (*log)(void *ctx, int level, const char *line);
};

/* Counters */
struct xd_stats {
	uint64_t probes_started, probes_sent, probes_dropped;
	uint64_t rounds, decided, aborted, victims, stale, acks_dead;
	uint64_t send_errors, walk_errors;
	uint64_t soft_steps, soft_dropped;
};

/**
 * struct xd_state - one node's daemon
 * @node: this node's id; @boot: its module's boot id
 * @members: the group's members (sorted), @nmembers
 * @in_group: this node is in the group (a confchg with it was delivered)
 * @waits: this node's waits, @nwaits of them
 * @ended: the (owner, generation) of waits that ended before the daemon
 *	heard of them (a WAIT of the registration's replay after their
 *	WAIT_END), the last XD_ENDED_KEPT of them; @nended counts them all
 * @rounds: pending and kept rounds, @nrounds of them (unordered)
 * @seq: this node's next round sequence number
 * @order: the next round's delivery order
 * @scratch: the kernel walks' buffer
 */
struct xd_state {
	uint32_t node;
	uint64_t boot;
	uint32_t members[XD_MEMBERS_MAX];
	unsigned int nmembers;
	bool in_group;
	struct xd_wait *waits;
	unsigned int nwaits;
	struct {
		uint64_t owner, gen;
	} ended[XD_ENDED_KEPT];
	unsigned int nended;
	struct xd_round *rounds;
	unsigned int nrounds;
	uint64_t seq;
	uint64_t order;
	struct xd_paths *scratch;
	struct xd_stats stats;
	const struct xd_ops *ops;
	void *ctx;
	/* CLOCK_REALTIME ns, for the rounds' times (tests set it) */
	uint64_t (*now_ns)(void);
};

int xd_init(struct xd_state *s, uint32_t node, uint64_t boot,
	    const struct xd_ops *ops, void *ctx);
void xd_free(struct xd_state *s);

/*
 * The kernel reported a wait's start (an XD_EVENT WAIT, or one of the
 * registration's replay: @now_ms is the monotonic clock, the wait's start
 * v->start_ns is CLOCK_REALTIME), or its end. The generation decides: a
 * WAIT of a generation that ended, or not newer than the owner's known
 * wait, changes nothing.
 */
int xd_wait_start(struct xd_state *s, const char *domain,
		  const struct xd_vertex *v, uint32_t delay_ms, uint64_t now_ms);
void xd_wait_end(struct xd_state *s, uint64_t owner, uint64_t gen);
/* Probe the waits that lasted their delay; returns ms until the next due
 * (UINT32_MAX: none) */
uint32_t xd_tick(struct xd_state *s, uint64_t now_ms);

/*
 * A message of the group was delivered (agreed order) from node @from;
 * -EPROTO when it does not parse (it is then ignored).
 */
int xd_deliver(struct xd_state *s, uint32_t from, const void *buf, size_t len);
/*
 * A membership change was delivered: the members now, and those that
 * left; the rounds with a vertex of a node that left are aborted, and
 * every wait will be probed again.
 */
void xd_confchg(struct xd_state *s, const uint32_t *members, unsigned int n,
		const uint32_t *left, unsigned int nleft);

/* The victim of a path: the greatest (start time, node, owner) */
unsigned int xd_victim(const struct xd_path *p);
/* Two paths are the same cycle: the same vertices and generations */
bool xd_same_cycle(const struct xd_path *a, const struct xd_path *b);
/* Rounds in delivery order (history): fills @out with at most @max */
unsigned int xd_history(const struct xd_state *s, const struct xd_round **out,
			unsigned int max);

/* --- the wire ---------------------------------------------------------------
 *
 * Every message: a header of 64 bytes, then @nverts vertices of 128 bytes,
 * all little-endian, fixed layout. A receiver drops a message whose magic
 * or version it does not know.
 */
#define XD_MAGIC		0x44584c4fU	/* "OLXD" */
#define XD_VERSION		2	/* 2: soft edges across nodes */
#define XD_HDR_SIZE		64
#define XD_VERTEX_SIZE		128
#define XD_MSG_MAX		(XD_HDR_SIZE + XD_PATH_MAX * XD_VERTEX_SIZE)

/**
 * struct xd_msg - a message, decoded
 * @kind: enum xd_kind
 * @sender: the sending node
 * @round_node, @round_seq: CONFIRM, ACK: the round
 * @live: ACK: live; VIEW: the sender's last part
 * @domain: PROBE, CONFIRM: the domain; VIEW: the entries'
 * @path: PROBE, CONFIRM: the path
 */
struct xd_msg {
	uint32_t kind;
	uint32_t sender;
	uint32_t round_node;
	uint64_t round_seq;
	uint32_t live;
	char domain[XD_NAME_LEN];
	struct xd_path path;
};

/* @m's header: every field 0 but these, no path */
void xd_msg_init(struct xd_msg *m, uint32_t kind, uint32_t sender,
		 uint32_t round_node, uint64_t round_seq);
/* Encode @m into @buf (XD_MSG_MAX bytes): its length */
size_t xd_encode(const struct xd_msg *m, void *buf);
/* Decode: 0, or -EPROTO (bad magic, version, kind, length or path) */
int xd_decode(struct xd_msg *m, const void *buf, size_t len);

#endif /* ORDLOCK_XDETECTD_PROTO_H */
