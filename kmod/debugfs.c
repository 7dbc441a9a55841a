// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: /sys/kernel/debug/ordlock/{locks,graph,owners,deadlocks,stats,
 * users,order,labels}.
 *
 * Every file starts with a version line "# ordlock FILE v1" and a comment
 * line naming the fields; then one record per line, fields separated by one
 * space. The formats are documented in README.md and stay stable.
 *
 * locks and graph walk the resource table one bucket at a time through
 * seq_file, under that bucket's lock only: each line is exact when it is
 * written, lockers are held up for one bucket at most, and nothing is
 * copied to user space with a lock held (seq_file copies after ->stop).
 */
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>

#include "debugfs.h"
#include "domain.h"
#include "events.h"
#include "graph.h"
#include "keys.h"
#include "order.h"
#include "owner.h"
#include "request.h"
#include "resource.h"
#include "table.h"
#include "user.h"

static struct dentry *ordlock_debugfs_dir;

/*
 * Iterate the buckets that are not empty: position 0 is the header,
 * position i + 1 bucket i
 */
static void *ordlock_table_seq_start(struct seq_file *m, loff_t *pos)
{
	unsigned int i;

	if (!*pos)
		return SEQ_START_TOKEN;
	if (*pos > ordlock_table_size())
		return NULL;
	i = ordlock_table_next_used(*pos - 1);
	*pos = i + 1;
	if (i >= ordlock_table_size())
		return NULL;
	return ordlock_table_bucket_at(i);
}

static void *ordlock_table_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return ordlock_table_seq_start(m, pos);
}

static void ordlock_table_seq_stop(struct seq_file *m, void *v)
{
}

static u64 ordlock_us_since(ktime_t since)
{
	return div_u64(ktime_to_ns(ktime_sub(ktime_get(), since)), NSEC_PER_USEC);
}

static void ordlock_seq_owner(struct seq_file *m, struct ordlock_owner *owner)
{
	char comm[ORDLOCK_COMM_LEN];

	ordlock_comm_sanitize(comm, owner->comm);
	seq_printf(m, "%llu %d %s", owner->id, READ_ONCE(owner->pid), comm);
}

/**
 * struct ordlock_edge_print - what ordlock_graph_print_edge() and
 *	ordlock_locks_fast() print
 * @m: the seq_file
 * @res: the resource waited for
 * @w: the waiter
 */
struct ordlock_edge_print {
	struct seq_file *m;
	struct ordlock_resource *res;
	struct ordlock_waiter *w;
};

/*
 * The member that holds a fast key by the fast path, as its word names it:
 * a holder line with "fast:INDEX" for its token (no token, no lease); an
 * index that names no owner shows as owner 0, pid 0, comm "?"
 */
static bool ordlock_locks_fast(void *arg, const struct ordlock_word_holder *h)
{
	struct ordlock_edge_print *p = arg;

	seq_printf(p->m, "%s %u:%llu holder 0 ", h->domain->name, p->res->rank,
		   p->res->id);
	if (h->owner)
		ordlock_seq_owner(p->m, h->owner);
	else
		seq_puts(p->m, "0 0 ?");
	seq_printf(p->m, " %s fast:%u -\n",
		   ordlock_mode_str(ORDLOCK_MODE_EXCLUSIVE), h->index);
	return false;
}

static int ordlock_locks_show(struct seq_file *m, void *v)
{
	struct ordlock_edge_print p = { .m = m };
	struct ordlock_bucket *bucket = v;
	struct ordlock_resource *res;
	struct ordlock_waiter *w;
	struct ordlock_hold *hold;
	unsigned int i;
	bool cluster, lease;
	ktime_t since;
	u64 left;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "# ordlock locks v1\n"
			 "# domain rank:id role position owner_id pid comm mode token|waited_us|cluster:waited_us|fast:index lease_left_ms|-\n");
		return 0;
	}
	spin_lock(&bucket->lock);
	for (res = bucket->chain; res; res = res->next) {
		i = 0;
		list_for_each_entry(hold, &res->holders, res_node) {
			seq_printf(m, "%s %u:%llu holder %u ",
				   hold->owner->domain->name,
				   res->rank, res->id, i++);
			ordlock_seq_owner(m, hold->owner);
			left = ordlock_lease_left_ms(hold->owner, &lease);
			cluster = READ_ONCE(hold->cluster_wait);
			/* the time of this wait: written before the flag */
			smp_rmb();
			since = ns_to_ktime(READ_ONCE(hold->owner->pending_since));
			if (cluster)
				/* granted here, waiting in the cluster: no token yet */
				seq_printf(m, " %s cluster:%llu", ordlock_mode_str(hold->mode),
					   ordlock_us_since(since));
			else
				seq_printf(m, " %s %llu", ordlock_mode_str(hold->mode),
					   hold->token);
			if (lease)
				seq_printf(m, " %llu\n", left);
			else
				seq_puts(m, " -\n");
		}
		/* A member that holds it by the fast path (no kernel holder then) */
		p.res = res;
		if (unlikely(res->fast))
			ordlock_res_word_holder(res, ordlock_locks_fast, &p);
		i = 0;
		list_for_each_entry(w, &res->waiters, node) {
			seq_printf(m, "%s %u:%llu %s %u ",
				   w->hold->owner->domain->name,
				   res->rank, res->id,
				   w->convert ? "converter" : "waiter", i++);
			ordlock_seq_owner(m, w->hold->owner);
			seq_printf(m, " %s %llu -\n", ordlock_mode_str(w->mode),
				   ordlock_us_since(w->since));
		}
	}
	spin_unlock(&bucket->lock);
	return 0;
}

static bool ordlock_graph_print_edge(void *arg, struct ordlock_owner *to,
				     u32 edge, u32 mode, u32 fast)
{
	struct ordlock_edge_print *p = arg;

	ordlock_seq_owner(p->m, p->w->hold->owner);
	seq_printf(p->m, " %s %u:%llu %s ", p->w->hold->owner->domain->name, p->res->rank,
		   p->res->id, ordlock_mode_str(p->w->mode));
	ordlock_seq_owner(p->m, to);
	/* "fast": a hard edge to the member the key's word names */
	seq_printf(p->m, " %s %s %llu\n", ordlock_mode_str(mode),
		   edge == ORDLOCK_EDGE_SOFT ? "soft" :
		   edge & ORDLOCK_EDGE_FAST_HOLDER ? "fast" : "hard",
		   ordlock_us_since(p->w->since));
	return false;
}

/* A thread edge: @holder cannot release before @to's wait ends */
static bool ordlock_graph_print_thread(void *arg, struct ordlock_owner *holder,
				       struct ordlock_owner *to)
{
	struct seq_file *m = arg;
	struct ordlock_waiter *w = to->waiting;

	ordlock_seq_owner(m, holder);
	seq_printf(m, " %s %u:%llu %s ", to->domain->name, w->hold->res->rank,
		   w->hold->res->id, ordlock_mode_str(w->mode));
	ordlock_seq_owner(m, to);
	seq_printf(m, " %s thread %llu\n", ordlock_mode_str(w->mode),
		   ordlock_us_since(w->since));
	return false;
}

static int ordlock_graph_show(struct seq_file *m, void *v)
{
	struct ordlock_edge_print p = { .m = m };
	struct ordlock_bucket *bucket = v;
	struct ordlock_resource *res;
	struct ordlock_waiter *w;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "# ordlock graph v1\n"
			 "# waiter_id waiter_pid waiter_comm domain rank:id mode blocker_id blocker_pid blocker_comm blocker_mode edge waited_us\n");
		/* first the thread edges, then the waiters' (bucket by bucket) */
		ordlock_graph_thread_edges(ordlock_graph_print_thread, m);
		return 0;
	}
	spin_lock(&bucket->lock);
	for (res = bucket->chain; res; res = res->next) {
		p.res = res;
		list_for_each_entry(w, &res->waiters, node) {
			p.w = w;
			ordlock_graph_edges(res, w, ordlock_graph_print_edge, &p);
		}
	}
	spin_unlock(&bucket->lock);
	return 0;
}

static const struct seq_operations ordlock_locks_sops = {
	.start = ordlock_table_seq_start,
	.next = ordlock_table_seq_next,
	.stop = ordlock_table_seq_stop,
	.show = ordlock_locks_show,
};
DEFINE_SEQ_ATTRIBUTE(ordlock_locks);

static const struct seq_operations ordlock_graph_sops = {
	.start = ordlock_table_seq_start,
	.next = ordlock_table_seq_next,
	.stop = ordlock_table_seq_stop,
	.show = ordlock_graph_show,
};
DEFINE_SEQ_ATTRIBUTE(ordlock_graph);

static int ordlock_owners_show(struct seq_file *m, void *v)
{
	struct list_head *owners = ordlock_owner_lock_list();
	char dname[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_owner *owner;
	u32 mode;

	seq_puts(m, "# ordlock owners v1\n"
		 "# id pid comm domain kind held waiting_mode waiting_key waited_us\n");
	list_for_each_entry(owner, owners, node) {
		ordlock_seq_owner(m, owner);
		/* owner->domain may change meanwhile: print the owner's copy */
		ordlock_owner_domain_name(owner, dname);
		/* held: in the kernel, and by the fast path (the words) */
		seq_printf(m, " %s %s %u", dname,
			   owner->kind == ORDLOCK_KIND_NETLINK ? "netlink" : "device",
			   ordlock_req_held(owner));
		mode = READ_ONCE(owner->pending.mode);
		if (mode)
			seq_printf(m, " %s %u:%llu %llu\n", ordlock_mode_str(mode),
				   READ_ONCE(owner->pending.rank),
				   READ_ONCE(owner->pending.id),
				   ordlock_us_since(ns_to_ktime(READ_ONCE(owner->pending_since))));
		else
			seq_puts(m, " - - 0\n");
	}
	ordlock_owner_unlock_list();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ordlock_owners);

/* The owners that have a label (a file of its own: "owners" stays as it was) */
static int ordlock_labels_show(struct seq_file *m, void *v)
{
	struct list_head *owners = ordlock_owner_lock_list();
	char label[ORDLOCK_LABEL_MAX];
	struct ordlock_owner *owner;

	seq_puts(m, "# ordlock labels v1\n"
		 "# owner_id label\n");
	list_for_each_entry(owner, owners, node) {
		/* Written under owner->lock: copied, then terminated */
		memcpy(label, owner->label, sizeof(label));
		label[sizeof(label) - 1] = '\0';
		if (label[0])
			seq_printf(m, "%llu %s\n", owner->id, label);
	}
	ordlock_owner_unlock_list();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ordlock_labels);

static int ordlock_deadlocks_show(struct seq_file *m, void *v)
{
	seq_puts(m, "# ordlock deadlocks v1\n"
		 "# deadlock seq time_ns domain length\n"
		 "# step seq index owner_id pid comm mode rank:id edge blocker_mode domain\n");
	ordlock_events_show_deadlocks(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ordlock_deadlocks);

static const char * const ordlock_stat_names[ORDLOCK_STAT_NR] = {
	[ORDLOCK_STAT_ACQUIRES] = "acquires",
	[ORDLOCK_STAT_CONTENDED] = "contended",
	[ORDLOCK_STAT_TIMEOUTS] = "timeouts",
	[ORDLOCK_STAT_TRY_FAILURES] = "try_failures",
	[ORDLOCK_STAT_ORDER_VIOLATIONS] = "order_violations",
	[ORDLOCK_STAT_DEADLOCKS] = "deadlocks",
	[ORDLOCK_STAT_UPGRADE_DEADLOCKS] = "upgrade_deadlocks",
	[ORDLOCK_STAT_CONVERSIONS] = "conversions",
	[ORDLOCK_STAT_SIGNALS] = "signals",
	[ORDLOCK_STAT_LIMITS] = "limits",
	[ORDLOCK_STAT_RELEASES] = "releases",
	[ORDLOCK_STAT_REVOCATIONS] = "revocations",
	[ORDLOCK_STAT_XD_ROUNDS] = "xd_rounds",
	[ORDLOCK_STAT_XD_VICTIMS] = "xd_victims",
	[ORDLOCK_STAT_XD_STALE] = "xd_stale",
};

static void ordlock_seq_gauge(struct seq_file *m, const char *name,
			      struct ordlock_gauge *g)
{
	seq_printf(m, " %s %d peak_%s %d", name, atomic_read(&g->cur), name,
		   atomic_read(&g->peak));
}

static void ordlock_stats_show_domain(struct seq_file *m,
				      struct ordlock_domain *domain)
{
	struct ordlock_stats sum;
	unsigned int i;

	ordlock_domain_stats(domain, &sum);
	seq_printf(m, "domain %s policy %s detect_delay_ms %u", domain->name,
		   ordlock_domain_policy_name(READ_ONCE(domain->policy)),
		   READ_ONCE(domain->detect_delay_ms));
	ordlock_seq_gauge(m, "owners", &domain->owners);
	ordlock_seq_gauge(m, "resources", &domain->resources);
	ordlock_seq_gauge(m, "waiters", &domain->waiters);
	for (i = 0; i < ORDLOCK_STAT_NR; i++)
		seq_printf(m, " %s %llu", ordlock_stat_names[i], sum.count[i]);
	seq_printf(m, "\nwait_us %s", domain->name);
	for (i = 0; i < ORDLOCK_WAIT_HIST - 1; i++)
		seq_printf(m, " lt_%lu %llu", 1UL << i, sum.wait_hist[i]);
	seq_printf(m, " more %llu\n", sum.wait_hist[ORDLOCK_WAIT_HIST - 1]);
}

static int ordlock_stats_show(struct seq_file *m, void *v)
{
	struct list_head *domains;
	struct ordlock_domain *domain;

	seq_puts(m, "# ordlock stats v1\n"
		 "# global owners N resources N\n"
		 "# domain NAME policy P detect_delay_ms N (COUNTER N)...\n"
		 "# wait_us NAME lt_1 N lt_2 N ... more N\n");
	seq_printf(m, "global owners %d resources %lld\n",
		   atomic_read(&ordlock_nowners), ordlock_table_nresources());
	domains = ordlock_domain_lock_list();
	list_for_each_entry(domain, domains, node)
		ordlock_stats_show_domain(m, domain);
	ordlock_domain_unlock_list();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ordlock_stats);

static int ordlock_order_file_show(struct seq_file *m, void *v)
{
	seq_puts(m, "# ordlock order v1\n"
		 "# domain NAME policy P learning 0|1 ranks N edges N max_edges N potential N kept N dropped N\n"
		 "# edge NAME index from_rank to_rank ranks|ascending|descending held_mode taken_mode count ok|inverted[,reported] owner_id pid comm label held_rank:id taken_rank:id time_ns\n"
		 "# potential NAME seq cycle|ids n edge_index...\n");
	ordlock_order_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ordlock_order_file);

static int ordlock_users_show(struct seq_file *m, void *v)
{
	seq_puts(m, "# ordlock users v1\n"
		 "# uid owners keys waiters refused domains edges edges_dropped\n");
	ordlock_user_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ordlock_users);

/* Without debugfs, ordlock works the same; only the files are missing */
void ordlock_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("ordlock", NULL);

	if (IS_ERR(dir))
		return;
	debugfs_create_file("locks", 0400, dir, NULL, &ordlock_locks_fops);
	debugfs_create_file("graph", 0400, dir, NULL, &ordlock_graph_fops);
	debugfs_create_file("owners", 0400, dir, NULL, &ordlock_owners_fops);
	debugfs_create_file("deadlocks", 0400, dir, NULL, &ordlock_deadlocks_fops);
	debugfs_create_file("stats", 0400, dir, NULL, &ordlock_stats_fops);
	debugfs_create_file("users", 0400, dir, NULL, &ordlock_users_fops);
	debugfs_create_file("order", 0400, dir, NULL, &ordlock_order_file_fops);
	debugfs_create_file("labels", 0400, dir, NULL, &ordlock_labels_fops);
	ordlock_debugfs_dir = dir;
}

void ordlock_debugfs_exit(void)
{
	debugfs_remove_recursive(ordlock_debugfs_dir);
}
