/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Owners: whoever holds locks. An open file description of /dev/ordlock is
 * one owner, a netlink socket another kind.
 *
 * The lock order of the module, owner->lock's place in it included, is
 * stated once, in main.c.
 */
#ifndef _ORDLOCK_OWNER_H
#define _ORDLOCK_OWNER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seqlock.h>
#include <linux/types.h>
#include <linux/ordlock.h>

#include "keys.h"
#include "order.h"
#include "lease.h"
#include "resource.h"

struct ordlock_backend_lock;
struct ordlock_fast_owner;
struct ordlock_domain;
struct ordlock_request;
struct ordlock_user;
struct ordlock_xd_cycle;

/**
 * struct ordlock_owner - a holder of locks
 * @lock: serialises the requests of the owner, and protects every field
 *	below except @pid and @id. A request holds it except while it sleeps
 *	(then @busy is set). See the lock order in main.c.
 * @domain: the owner's domain; one reference held
 * @held: the holds granted to the owner (struct ordlock_hold.owner_node),
 *	in ascending key order
 * @nheld: number of entries in @held
 * @spare: holds kept for reuse, so that a request on a known resource
 *	allocates nothing
 * @nspare: number of entries in @spare
 * @last_token: fencing token of the last grant
 * @failure: the last failure record
 * @busy: a request is in progress: it may wait with @lock dropped, and
 *	other requests fail with EBUSY meanwhile
 * @converting: the hold (one of @held) that the conversion in progress
 *	converts, NULL when none: a revocation meanwhile leaves it to the
 *	request's end (lease.c); set and cleared with @busy
 * @cluster: @domain is a cluster domain (its backend is set): the holds
 *	are struct ordlock_cluster_hold, @spare included; constant while the
 *	owner is in @domain (domain.h: the backend changes only while nobody
 *	is in it)
 * @cycle: the steps of the last deadlock this owner was the victim of
 *	(ORDLOCK_CYCLE_MAX of them), allocated on first need, followed in
 *	the same allocation by @cycle_domain
 * @cycle_domain: ORDLOCK_CYCLE_MAX + 1 domain names: entry i is the domain
 *	of step i when that step is flagged ORDLOCK_STEP_OTHER_DOMAIN (else
 *	it is not written), the last one the victim's domain when the cycle
 *	was found; read them with ordlock_owner_cycle_domain()
 * @ncycle: number of steps in @cycle
 * @restart: the interrupted wait a restarted ioctl continues; under @lock
 * @waiting: the waiter of the owner's current wait, while it is part of
 *	the wait-for graph; under ordlock_graph_lock (graph.c)
 * @tid_node: entry in graph.c's hash of the owners whose wait blocks a
 *	task (by thread id, over all domains) while in the graph
 * @walk_gen: graph walk generation that last visited the owner; under
 *	ordlock_graph_lock, like the other walk_ fields
 * @walk_parent: the owner that waits for this one, on the walk's path
 * @walk_next: the next owner in the walk's work queue
 * @walk_edge: the enum ordlock_edge from @walk_parent to this owner
 * @walk_mode: the mode in which this owner blocks @walk_parent
 * @node: entry in the list of all owners, under ordlock_owners_lock
 * @user: the user of the owner's creator (see user.h); one reference
 *	held; constant
 * @user_exempt: the creator had CAP_SYS_RESOURCE: the per-user limits do
 *	not apply to this owner (it is counted all the same); constant
 * @kind: an enum ordlock_owner_kind, constant
 * @id: unique id, constant
 * @pid: thread group id of the last task that made a request (or opened
 *	the owner); written under @lock, read by anyone with READ_ONCE()
 * @tid: thread id of the last task that made a request; like @pid
 * @tid_start: that task's start time (task->start_time): with @tid, the
 *	thread's identity, which a thread that reuses the id does not share;
 *	like @pid
 * @comm: command name of that task; written under @lock, read racily by
 *	debugfs and the graph walk (a torn name is harmless)
 * @comm_safe: @comm as the views show it (ordlock_comm_sanitize()), made
 *	when @comm is written, so that a cycle's record copies it; like @comm
 * @pending: what the owner waits for, for debugfs: written under @lock
 *	with WRITE_ONCE(), read racily; @pending.mode is 0 when not waiting
 * @pending_since: when that wait started (ktime_get() ns)
 * @domain_name: copy of the domain's name, for debugfs and the dumps;
 *	written under @lock inside @domain_seq, read with
 *	ordlock_owner_domain_name() (a torn name would be a string without
 *	its NUL, which netlink clients reject)
 * @domain_seq: orders the writes of @domain_name (their lock is @lock);
 *	see the lock order in main.c for its readers on PREEMPT_RT
 * @label: the owner's label (ORDLOCK_IOC_SET_LABEL), NUL-terminated, empty
 *	for none; written under @lock, read racily like @comm
 * @order_cache: the learned-order edges this owner knows (order.h); under
 *	@lock
 * @lease: the lease of what the owner holds, and its revocation (lease.h);
 *	under @lock except where lease.h says
 * @fast: the owner's fast-path state (fast_dev.c), NULL until its first
 *	pin; set once under @lock, read by mmap() with smp_load_acquire()
 * @xd_gen: the generation of the owner's current wait in a cluster domain,
 *	0 when none (xdetect.c says under which locks)
 * @xd_since: when that wait started, CLOCK_REALTIME ns; under @lock
 * @xd_told: the generation of the wait last announced to ordlock-xdetectd
 *	by its own XD_EVENT WAIT (0: none), whose end is told too; under @lock
 * @xd_victim: the generation of the wait XD_FAIL chose as a victim; under
 *	ordlock_graph_lock and the bucket lock of the key it waits for (a
 *	wait on this node), or xdetect.c's ordlock_xd_dlm_lock (in the DLM)
 * @xd: the cycle across nodes of its last XD_FAIL (xdetect.h), NULL until
 *	the first; set once under ordlock_graph_lock
 * @xd_req: the request whose wait in the DLM XD_FAIL may end (a domain
 *	with policy detect, cluster.c), NULL when none; under @lock and
 *	xdetect.c's ordlock_xd_dlm_lock
 * @xd_task: the task that waits for it, NULL for an asynchronous request
 *	(woken through its notify hook); like @xd_req
 * @xd_blk: the cluster lock of @xd_req's wait may be read (its lock id,
 *	ordlock_xd_lkid()): cleared before cluster.c lets it go; like @xd_req
 */
/**
 * struct ordlock_restart - an ioctl wait that a signal interrupted, which
 *	the call that continues it finishes by the same deadline (device.c)
 * @cmd: the ioctl, 0 when none
 * @left_ns: the time that was left, as written back to the caller
 * @deadline: the first deadline (ktime_get())
 * @tid: the thread that waited
 * @tid_start: its start time (the thread's identity, with @tid)
 */
struct ordlock_restart {
	u32 cmd;
	u64 left_ns;
	ktime_t deadline;
	pid_t tid;
	u64 tid_start;
};

struct ordlock_owner {
	/* the owner's requests and state: see above */
	struct mutex lock;
	struct ordlock_domain *domain;
	struct list_head held;
	unsigned int nheld;
	struct list_head spare;
	unsigned int nspare;
	u64 last_token;
	struct ordlock_failure failure;
	bool busy;
	bool cluster;
	struct ordlock_hold *converting;
	struct ordlock_cycle_step *cycle;
	char (*cycle_domain)[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int ncycle;
	struct ordlock_restart restart;

	struct ordlock_waiter *waiting;
	struct hlist_node tid_node;
	u64 walk_gen;
	struct ordlock_owner *walk_parent;
	struct ordlock_owner *walk_next;
	u32 walk_edge;
	u32 walk_mode;

	struct list_head node;
	struct ordlock_user *user;
	bool user_exempt;
	u32 kind;
	u64 id;
	pid_t pid;
	pid_t tid;
	u64 tid_start;
	char comm[TASK_COMM_LEN];
	char comm_safe[ORDLOCK_COMM_LEN];
	struct ordlock_key pending;
	u64 pending_since;
	char domain_name[ORDLOCK_DOMAIN_NAME_MAX];
	seqcount_mutex_t domain_seq;
	char label[ORDLOCK_LABEL_MAX];
	struct ordlock_order_cache order_cache;
	struct ordlock_lease lease;
	struct ordlock_fast_owner *fast;
	u64 xd_gen;
	u64 xd_since;
	u64 xd_told;
	u64 xd_victim;
	struct ordlock_xd_cycle *xd;
	struct ordlock_request *xd_req;
	struct task_struct *xd_task;
	bool xd_blk;
};

/*
 * ordlock_owner_cycle_domain() - the domain of step @i of @owner's last
 * cycle (owner->cycle set, @i < owner->ncycle): a step in the victim's
 * domain has no name of its own
 */
static inline const char *ordlock_owner_cycle_domain(const struct ordlock_owner *owner,
						     unsigned int i)
{
	return owner->cycle[i].flags & ORDLOCK_STEP_OTHER_DOMAIN ?
	       owner->cycle_domain[i] : owner->cycle_domain[ORDLOCK_CYCLE_MAX];
}

/**
 * struct ordlock_hold - one key granted to one owner
 * @owner_node: entry in owner->held; under owner->lock
 * @res_node: entry in res->holders; under the resource's bucket lock
 * @res: the resource; it lives at least as long as the hold
 * @owner: the owner
 * @token: the fencing token of the grant
 * @mode: the mode it is held in
 * @cluster_wait: granted on this node, it waits for the key's lock in the
 *	cluster (the owner's @pending says in which mode and since when);
 *	written under owner->lock with WRITE_ONCE(), read with READ_ONCE()
 *	under the resource's bucket lock by the views (debugfs "locks", the
 *	GET_LOCKS dump); false from allocation on
 *
 * 64 bytes (ordlock_owner_init() checks it): with its resource, a held
 * key costs 128 bytes. A hold of an
 * owner in a cluster domain is the first member of a larger struct
 * ordlock_cluster_hold (owner->cluster).
 */
struct ordlock_hold {
	struct list_head owner_node;
	struct list_head res_node;
	struct ordlock_resource *res;
	struct ordlock_owner *owner;
	u64 token;
	u32 mode;
	bool cluster_wait;
};

/* ordlock_hold_cmp() - the order of the key of @hold and @key */
static inline int ordlock_hold_cmp(const struct ordlock_hold *hold,
				   const struct ordlock_rkey *key)
{
	return ordlock_key_cmp(hold->res->rank, hold->res->id, key->rank, key->id);
}

extern atomic_t ordlock_nowners;

int ordlock_owner_init(void);
void ordlock_owner_exit(void);
struct ordlock_owner *ordlock_owner_create(u32 kind);
void ordlock_owner_destroy(struct ordlock_owner *owner);
int ordlock_owner_set_domain(struct ordlock_owner *owner, const char *name);
void ordlock_owner_domain_name(struct ordlock_owner *owner, char *buf);
int ordlock_owner_get_holds(struct ordlock_owner *owner, unsigned int n,
			    struct list_head *list);
void ordlock_owner_put_holds(struct ordlock_owner *owner, struct list_head *list);
void ordlock_owner_put_nholds(struct ordlock_owner *owner, struct list_head *list,
			      unsigned int n);
void ordlock_owner_insert_hold(struct ordlock_owner *owner,
			       struct ordlock_hold *hold);
struct ordlock_hold *ordlock_owner_find_hold(struct ordlock_owner *owner,
					     const struct ordlock_rkey *key);
void ordlock_owner_drop_hold(struct ordlock_owner *owner,
			     struct ordlock_hold *hold, struct list_head *done);

struct list_head *ordlock_owner_lock_list(void);
void ordlock_owner_unlock_list(void);
void ordlock_owner_touch(struct ordlock_owner *owner);

bool ordlock_owner_cycle_alloc(struct ordlock_owner *owner);
int ordlock_owner_fail(struct ordlock_owner *owner, u32 reason, int err,
		       const struct ordlock_rkey *key);

/**
 * ordlock_owner_running() - the task that made @owner's last request, when
 *	it runs on a CPU now
 * @owner: any owner; its task is read racily (a torn read names no task)
 *
 * The caller holds rcu_read_lock(), which keeps the task returned valid
 * until rcu_read_unlock(); owner_on_cpu() says when it stops running.
 * Inline: the resources ask it (resource.c) of the holders they list.
 *
 * Return: that task, or NULL when it is gone or not on a CPU.
 */
static inline struct task_struct *ordlock_owner_running(struct ordlock_owner *owner)
{
	struct task_struct *t;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "owner task outside RCU");
	t = pid_task(find_pid_ns(READ_ONCE(owner->tid), &init_pid_ns), PIDTYPE_PID);
	if (!t || t->start_time != READ_ONCE(owner->tid_start) || !owner_on_cpu(t))
		return NULL;
	return t;
}

#endif /* _ORDLOCK_OWNER_H */
