/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Detection across nodes (docs/cluster.md, "Deadlocks across nodes"): the
 * generations of the waits and holds of cluster domains, the module's
 * boot id, and the wait events ordlock-xdetectd hears (through
 * nl_xdetect.c, which subscribes). The core calls the hooks below; it
 * knows nothing of the daemon.
 */
#ifndef _ORDLOCK_XDETECT_H
#define _ORDLOCK_XDETECT_H

#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/notifier.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/ordlock.h>

#include "owner.h"

struct ordlock_request;
struct task_struct;

/**
 * struct ordlock_xd_cycle - a cycle across nodes for its victim
 * @gen: the generation of the wait XD_FAIL failed (staged), under
 *	ordlock_graph_lock
 * @n: steps staged in @steps and @nodes, under ordlock_graph_lock
 * @steps: the cycle XD_FAIL gave, victim first
 * @nodes: each staged step's node id, 0 for this node
 * @rec_n: steps of the owner's failure record that have node ids in
 *	@rec_nodes (0: the last cycle was this node's own); under owner->lock
 * @rec_nodes: the node ids of the failure record's steps
 *
 * Allocated by the first XD_FAIL of an owner, freed with it. XD_FAIL
 * stages the cycle; the victim copies it into its failure record
 * (owner->cycle) when its wait ends (ordlock_xd_take_victim()).
 */
struct ordlock_xd_cycle {
	u64 gen;
	u32 n;
	struct ordlock_cycle_step steps[ORDLOCK_CYCLE_MAX];
	u32 nodes[ORDLOCK_CYCLE_MAX];
	u32 rec_n;
	u32 rec_nodes[ORDLOCK_CYCLE_MAX];
};

/**
 * struct ordlock_xd_event - a wait of a cluster domain with policy detect
 *	started or ended, for the subscribers (the notifier's action is
 *	@kind)
 * @kind: an enum ordlock_xd_kind
 * @end: an enum ordlock_xd_end (ORDLOCK_XD_WAIT_END)
 * @owner: the owner, locked
 * @rank: the key waited for
 * @id: its id
 * @mode: the mode asked for
 * @gen: the wait's generation
 * @since_ns: when it started, CLOCK_REALTIME
 * @cluster_wait: the wait is in the DLM
 */
struct ordlock_xd_event {
	u32 kind;
	u32 end;
	struct ordlock_owner *owner;
	u32 rank;
	u64 id;
	u32 mode;
	u64 gen;
	u64 since_ns;
	bool cluster_wait;
};

/*
 * The shortest probe delay (ordlock-xdetectd's, proto.h): a wait is
 * announced once it has lasted the domain's detect_delay_ms, at least this
 */
#define ORDLOCK_XD_ANNOUNCE_MIN_MS	50

extern u64 ordlock_xd_boot;
extern atomic64_t ordlock_xd_gens;
extern bool ordlock_xd_listening;

/* ordlock_xd_next_gen() - the next generation of this load of the module */
static inline u64 ordlock_xd_next_gen(void)
{
	return atomic64_inc_return(&ordlock_xd_gens);
}

void ordlock_xd_init(void);
int ordlock_xd_subscribe(struct notifier_block *nb);
void ordlock_xd_unsubscribe(struct notifier_block *nb);
void ordlock_xd_set_listening(bool on);

void ordlock_xd_wait_start(struct ordlock_owner *owner);
ktime_t ordlock_xd_announce_at(struct ordlock_owner *owner, ktime_t since);
void ordlock_xd_wait_announce(struct ordlock_owner *owner, bool cluster_wait);
u64 ordlock_xd_wait_clear(struct ordlock_owner *owner);
void ordlock_xd_wait_end(struct ordlock_owner *owner, u64 gen, int ret,
			 bool cluster_wait);
bool ordlock_xd_victim(struct ordlock_owner *owner);
unsigned int ordlock_xd_take_victim(struct ordlock_owner *owner);
void ordlock_xd_arm(struct ordlock_owner *owner, struct ordlock_request *req,
		    struct task_struct *task);
void ordlock_xd_blk(struct ordlock_owner *owner, bool readable);
u32 ordlock_xd_lkid(struct ordlock_owner *owner,
		    u32 (*read)(struct ordlock_request *req));
void ordlock_xd_stage(struct ordlock_owner *owner, u64 gen,
		      struct ordlock_xd_cycle **stage);
int ordlock_xd_fail_dlm(struct ordlock_owner *owner, u64 gen,
			struct ordlock_xd_cycle **stage);
unsigned int ordlock_xd_take_victim_dlm(struct ordlock_owner *owner);
int ordlock_xd_copy_nodes(struct ordlock_owner *owner, u64 uptr, unsigned int n);

/*
 * ordlock_xd_wake() - wake a victim's wait: its @task, or for an
 * asynchronous request the notify hook of its waiter @w
 */
static inline void ordlock_xd_wake(struct task_struct *task,
				   struct ordlock_waiter *w)
{
	if (task)
		wake_up_process(task);
	else
		w->notify(w);
}

/*
 * ordlock_xd_step_node() - the node id of step @i of @owner's failure
 * record (0: this node); owner locked
 */
static inline u32 ordlock_xd_step_node(const struct ordlock_owner *owner,
				       unsigned int i)
{
	const struct ordlock_xd_cycle *xd = owner->xd;

	return xd && i < xd->rec_n ? xd->rec_nodes[i] : 0;
}

#endif /* _ORDLOCK_XDETECT_H */
