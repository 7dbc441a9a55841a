// SPDX-License-Identifier: GPL-2.0
/*
 * t_learn_users: the learned lock order is charged to the users that
 * teach it (issue 27, defect 6: one unprivileged user could fill a
 * domain's order_max_edges, and every later real edge was only counted as
 * dropped).
 *
 *  - with order_max_edges 100 and order_max_edges_per_user 40, uid 65534
 *    (no privilege) floods a detect domain with 200 distinct edges: 40 are
 *    kept, 160 dropped, counted in the domain's dropped and in its own
 *    edges_dropped (debugfs users);
 *  - then uid 60011, another unprivileged user, takes two ranks in both
 *    orders: both edges are learned, charged to it, and the potential
 *    deadlock is reported (GET_ORDER, the netlink event);
 *  - an owner with CAP_SYS_RESOURCE (root) is counted but not limited;
 *  - the charges go back when the edges go: a reset brings both users'
 *    counts to 0, so does the freeing of a domain with its last owner;
 *    lowering the limit below a user's count keeps its edges and refuses
 *    its new ones.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define UID_FLOOD	65534
#define UID_REAL	60011
#define USERS_FILE	"/sys/kernel/debug/ordlock/users"
#define POLICY_PARAM	"/sys/module/ordlock/parameters/default_policy"

static struct ordlock *admin;
static struct stat dev_saved;

static void dev_restore(void)
{
	if (chmod(ORDLOCK_DEVICE, dev_saved.st_mode & 07777))
		diag("cannot restore the mode of " ORDLOCK_DEVICE);
}

static void policy_write(const char *p)
{
	int fd = open(POLICY_PARAM, O_WRONLY);

	if (fd < 0 || write(fd, p, strlen(p)) != (ssize_t)strlen(p))
		bail_out("cannot write %s: %s", POLICY_PARAM, strerror(errno));
	close(fd);
}

static char policy_saved[32] = "enforce";

static void policy_restore(void)
{
	policy_write(policy_saved);
}

/* A user's edges and edges_dropped in debugfs users (0 0 when no line) */
struct ucount {
	long edges, dropped;
	int found, v2;
};

static struct ucount user_edges(unsigned int uid)
{
	struct ucount c = { 0, 0, 0, 0 };
	char *buf = gt_read_file(USERS_FILE), *line, *save;
	long o, k, w, r, d;
	unsigned int u;

	if (!buf) {
		diag("cannot read %s", USERS_FILE);
		return c;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, "# uid owners keys waiters refused domains edges edges_dropped"))
			c.v2 = 1;
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%u %ld %ld %ld %ld %ld %ld %ld", &u, &o, &k, &w, &r, &d,
			   &c.edges, &c.dropped) == 8 && u == uid) {
			c.found = 1;
			break;
		}
		c.edges = c.dropped = 0;
	}
	free(buf);
	return c;
}

/* Wait (at most 10 s) until @uid has @edges edges; the last count */
static long wait_edges(unsigned int uid, long edges)
{
	struct ucount c;
	int i;

	for (i = 0; i < 1000; i++) {
		c = user_edges(uid);
		if (c.edges == edges)
			break;
		usleep(10000);
	}
	return c.edges;
}

static int become(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -1;
	return 0;
}

/*
 * What one child does: as @uid, in @domain, hold (@hold_rank, 1) and take
 * and release ranks @from .. @to - 1 one at a time (one new edge each);
 * then, when @wait, tell the parent and wait for it.
 */
struct teach {
	uid_t uid;
	const char *domain;
	uint32_t hold_rank, from, to;
	struct pbarrier *taught, *go;
};

static int teach_child(void *arg)
{
	struct teach *t = arg;
	struct ordlock_key h = ORDLOCK_EX(t->hold_rank, 1), k;
	struct ordlock *ol;
	uint32_t r;

	if (t->uid && become(t->uid))
		return 97;
	ol = ordlock_open(t->domain);
	if (!ol)
		return 99;
	if (ordlock_acquire(ol, &h, 1, 5000, 0, NULL))
		return 98;
	for (r = t->from; r < t->to; r++) {
		k = ORDLOCK_EX(r, 1);
		if (ordlock_acquire(ol, &k, 1, 5000, 0, NULL) ||
		    ordlock_release(ol, &k, 1))
			return 96;
	}
	if (t->taught) {
		pbarrier_wait(t->taught);
		pbarrier_wait(t->go);
	}
	ordlock_close(ol);
	return 0;
}

static int teach(uid_t uid, const char *d, uint32_t hold, uint32_t from, uint32_t to)
{
	struct teach *t = shm_alloc(sizeof(*t));

	*t = (struct teach){ uid, d, hold, from, to, NULL, NULL };
	return child_wait(child_start(teach_child, t), 60);
}

static struct ordlock_order_edge E[256];
static uint32_t W[1024];
static struct ordlock_order_get G;

static int get_order(const char *domain)
{
	return olt_order_read(admin, domain, E, ARRAY_SIZE(E), W, ARRAY_SIZE(W), &G);
}

static const char *new_domain(const char *prefix)
{
	const char *d = strdup(olt_domain(prefix));

	if (!d || ordlock_set_policy(admin, d, ORDLOCK_POLICY_DETECT, 0))
		bail_out("cannot set the policy of %s", d);
	return d;
}

int main(void)
{
	const char *d, *d2;
	struct olc_nl_event ev;
	struct ucount c, root0;
	struct teach *t;
	struct nlt *s;
	unsigned int i, nreal = 0;
	long before;
	pid_t pid;
	int ret, have_param;

	admin = olt_open(NULL);
	if (stat(ORDLOCK_DEVICE, &dev_saved) || chmod(ORDLOCK_DEVICE, 0666))
		bail_out("cannot open " ORDLOCK_DEVICE " to everybody");
	atexit(dev_restore);

	have_param = !olt_param_set("order_max_edges_per_user", 40);
	ok(have_param, "order_max_edges_per_user exists: 40");
	if (olt_param_set("order_max_edges", 100))
		bail_out("cannot set order_max_edges");

	/* --- one unprivileged user floods --- */
	d = new_domain("flood");
	is_int(teach(UID_FLOOD, d, 1, 1000, 1200), 0,
	       "uid %d holds one rank and takes 200 others, one at a time", UID_FLOOD);
	get_order(d);
	is_int(G.nedges, 40, "the domain kept 40 of its edges (its user's limit)");
	is_int(G.dropped, 160, "and counted 160 dropped");
	c = user_edges(UID_FLOOD);
	ok(c.v2, "debugfs users has the columns edges and edges_dropped");
	ok(c.found && c.edges == 40 && c.dropped == 160,
	   "debugfs users: uid %d has 40 edges, 160 edges_dropped (%ld, %ld)",
	   UID_FLOOD, c.edges, c.dropped);

	/* --- another user's real potential deadlock is still learned --- */
	s = nlt_must_open();
	ret = nlt_subscribe(s);
	if (ret)
		bail_out("cannot join the events group: %s", strerror(-ret));
	ok(!teach(UID_REAL, d, 5000, 5001, 5002) && !teach(UID_REAL, d, 5001, 5000, 5001),
	   "uid %d takes ranks 5000, 5001 in one order, then in the other", UID_REAL);
	get_order(d);
	for (i = 0; i < G.nedges && i < 256; i++)
		nreal += E[i].uid == UID_REAL;
	is_int(nreal, 2, "both of uid %d's edges are learned, with its uid", UID_REAL);
	is_int(G.npotential, 1, "the potential deadlock is reported (GET_ORDER)");
	ok(G.npotential_words >= 4 && W[0] == ORDLOCK_POTENTIAL_CYCLE && W[1] == 2 &&
	   E[W[2] % 256].uid == UID_REAL && E[W[3] % 256].uid == UID_REAL,
	   "a cycle of two edges, both uid %d's", UID_REAL);
	ret = nlt_wait_event(s, ORDLOCK_EVENT_POTENTIAL_DEADLOCK, d, 5000, &ev);
	ok(!ret && ev.npotential == 2 && ev.potential[1].taken.rank == 5000,
	   "the POTENTIAL_DEADLOCK event is sent");
	nlt_close(s);
	c = user_edges(UID_REAL);
	ok(c.edges == 2 && c.dropped == 0, "uid %d: 2 edges, none dropped (%ld, %ld)",
	   UID_REAL, c.edges, c.dropped);
	c = user_edges(UID_FLOOD);
	ok(c.edges == 40 && c.dropped == 160, "uid %d's counts did not move", UID_FLOOD);
	is_int(teach(UID_FLOOD, d, 1, 1200, 1210), 0, "uid %d tries 10 more", UID_FLOOD);
	c = user_edges(UID_FLOOD);
	ok(c.edges == 40 && c.dropped == 170, "all 10 dropped, against uid %d (%ld, %ld)",
	   UID_FLOOD, c.edges, c.dropped);

	/* --- CAP_SYS_RESOURCE: counted, not limited --- */
	root0 = user_edges(0);
	d2 = new_domain("root");
	is_int(teach(0, d2, 1, 100, 160), 0, "root takes 60 ranks after one");
	get_order(d2);
	is_int(G.nedges, 60, "root (CAP_SYS_RESOURCE): all 60 kept, past the user limit");
	c = user_edges(0);
	is_int(c.edges - root0.edges, 60, "and counted against uid 0");
	is_int(ordlock_reset_order(admin, d2), 0, "reset of the root domain");
	c = user_edges(0);
	is_int(c.edges, root0.edges, "root's count back where it was");

	/* --- the charges go back with the edges: a reset --- */
	is_int(ordlock_reset_order(admin, d), 0, "an admin resets the flooded domain");
	ok(user_edges(UID_FLOOD).edges == 0 && user_edges(UID_REAL).edges == 0,
	   "both users' edge counts are back to 0");
	is_int(teach(UID_FLOOD, d, 1, 2000, 2010), 0, "uid %d teaches 10 again", UID_FLOOD);
	get_order(d);
	ok(G.nedges == 10 && user_edges(UID_FLOOD).edges == 10,
	   "kept and charged again (%u)", G.nedges);

	/* --- a lowered limit keeps what is there, refuses what is new --- */
	olt_param_set("order_max_edges_per_user", 5);
	is_int(teach(UID_FLOOD, d, 1, 2010, 2012), 0, "limit 5: two more");
	c = user_edges(UID_FLOOD);
	/* The reset freed the user (no owner, no edge): its counts began anew */
	ok(c.edges == 10 && c.dropped == 2,
	   "limit lowered to 5: the 10 stay, both new ones dropped (%ld, %ld)",
	   c.edges, c.dropped);
	is_int(ordlock_reset_order(admin, d), 0, "reset again");
	is_int(user_edges(UID_FLOOD).edges, 0, "back to 0");
	olt_param_set("order_max_edges_per_user", 40);

	/* --- and with a domain freed by its last owner --- */
	{
		char *p = gt_read_file(POLICY_PARAM);

		if (p) {
			snprintf(policy_saved, sizeof(policy_saved), "%s", p);
			policy_saved[strcspn(policy_saved, "\n")] = '\0';
			free(p);
		}
	}
	policy_write("detect");
	atexit(policy_restore);
	t = shm_alloc(sizeof(*t));
	*t = (struct teach){ UID_FLOOD, strdup(olt_domain("gone")), 1, 10, 22,
			     pbarrier_new(2), pbarrier_new(2) };
	pid = child_start(teach_child, t);
	ok(!pbarrier_wait(t->taught), "uid %d teaches 12 edges in a new domain", UID_FLOOD);
	before = user_edges(UID_FLOOD).edges;
	is_int(before, 12, "charged: 12 while the domain lives");
	pbarrier_wait(t->go);
	is_int(child_wait(pid, 30), 0, "its only owner closes");
	policy_restore();
	is_int(wait_edges(UID_FLOOD, 0), 0, "the domain is freed: uid %d's count is 0", UID_FLOOD);

	olt_param_restore();
	ordlock_close(admin);
	return tap_done();
}
