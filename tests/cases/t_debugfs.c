// SPDX-License-Identifier: GPL-2.0
/*
 * t_debugfs: /sys/kernel/debug/ordlock/{graph,locks,owners,deadlocks,stats,
 * users} (t_users checks the lines of users).
 *
 *  - every file is root's, read-only, and starts with its version line and
 *    the comment naming its fields;
 *  - while five owners hold, wait and convert, graph, locks and owners show
 *    exactly the expected lines (owner ids from OWNER_INFO, pids, command
 *    names, keys, modes, roles, positions, tokens, edge types), and no line
 *    of the domain once they exited;
 *  - deadlocks lists a detected deadlock with every step of its cycle;
 *  - stats counts exactly what a scripted scenario did;
 *  - reading the files while owners lock and unlock in a loop neither
 *    blocks them for long nor fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE
#define ACQ ORDLOCK_IOC_ACQUIRE
#define CONV ORDLOCK_IOC_CONVERT

#define LONG_MS		30000

static const struct {
	const char *name;
	const char *fields[2];
} files[] = {
	{ "graph", { "# waiter_id waiter_pid waiter_comm domain rank:id mode blocker_id blocker_pid blocker_comm blocker_mode edge waited_us" } },
	{ "locks", { "# domain rank:id role position owner_id pid comm mode token|waited_us|cluster:waited_us|fast:index lease_left_ms|-" } },
	{ "owners", { "# id pid comm domain kind held waiting_mode waiting_key waited_us" } },
	{ "deadlocks", { "# deadlock seq time_ns domain length",
			 "# step seq index owner_id pid comm mode rank:id edge blocker_mode domain" } },
	{ "stats", { NULL } },
	{ "users", { "# uid owners keys waiters refused domains edges edges_dropped" } },
};

static void test_files(void)
{
	char path[128], head[64];
	unsigned int i, j;
	int fd;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct stat st;
		char *buf, *line, *save;

		snprintf(path, sizeof(path), GT_DEBUGFS "%s", files[i].name);
		ok(!stat(path, &st) && S_ISREG(st.st_mode) &&
		   (st.st_mode & 07777) == 0400 && st.st_uid == 0,
		   "%s: a regular file, mode 0400, owned by root", files[i].name);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		ok(fd < 0 || write(fd, "x\n", 2) < 0,
		   "%s: cannot be written", files[i].name);
		if (fd >= 0)
			close(fd);
		buf = gt_read_file(path);
		ok(buf != NULL, "%s: readable by root", files[i].name);
		if (!buf)
			continue;
		snprintf(head, sizeof(head), "# ordlock %s v1", files[i].name);
		line = strtok_r(buf, "\n", &save);
		ok(line && !strcmp(line, head), "%s: first line \"%s\"",
		   files[i].name, head);
		for (j = 0; j < 2; j++) {
			line = strtok_r(NULL, "\n", &save);
			if (!files[i].fields[j]) {
				if (!j)
					ok(line && !strncmp(line, "# ", 2),
					   "%s: then a comment naming the fields",
					   files[i].name);
				break;
			}
			ok(line && !strcmp(line, files[i].fields[j]),
			   "%s: field line %u as documented", files[i].name,
			   j + 1);
			if (line && strcmp(line, files[i].fields[j]))
				diag("  got \"%s\"", line);
		}
		free(buf);
	}
}

/* The scenario of the exact-lines test */
struct scene {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *h, *w1, *w2, *s1, *s2;
	uint64_t th, ts1, ts2;
	uint64_t t0;
};

struct exp_edge {
	struct gt_actor *waiter, *blocker;
	uint64_t id;
	unsigned int mode, bmode, edge;
};

static int edge_is(const struct gt_edge *e, const struct exp_edge *x,
		   const char *domain)
{
	return e->waiter_id == x->waiter->owner_id[0] &&
	       e->waiter_pid == x->waiter->pid &&
	       !strcmp(e->waiter_comm, x->waiter->comm) &&
	       !strcmp(e->domain, domain) && e->rank == 1 && e->id == x->id &&
	       e->mode == x->mode && e->blocker_id == x->blocker->owner_id[0] &&
	       e->blocker_pid == x->blocker->pid &&
	       !strcmp(e->blocker_comm, x->blocker->comm) &&
	       e->blocker_mode == x->bmode && e->edge == x->edge;
}

static void check_graph(struct scene *sc)
{
	const struct exp_edge want[] = {
		{ sc->w1, sc->h, 1, EX, EX, ORDLOCK_EDGE_HARD },
		{ sc->w2, sc->h, 1, SH, EX, ORDLOCK_EDGE_HARD },
		{ sc->w2, sc->w1, 1, SH, EX, ORDLOCK_EDGE_SOFT },
		{ sc->s1, sc->s2, 2, EX, SH, ORDLOCK_EDGE_HARD },
	};
	const char *names[] = {
		"W1 -> H, exclusive 1:1, hard",
		"W2 -> H, shared 1:1, hard",
		"W2 -> W1, shared 1:1 behind exclusive, soft",
		"S1 (upgrading) -> S2, exclusive 1:2 vs shared, hard",
	};
	uint64_t age_us = (now_ms() - sc->t0 + 1000) * 1000;
	struct gt_edge e[8];
	int n, i, j, sane = 1;

	n = gt_graph_read(sc->domain, e, 8);
	is_int(n, 4, "graph: exactly 4 edges in the domain");
	for (j = 0; j < 4; j++) {
		int found = 0;

		for (i = 0; i < n && i < 8; i++)
			found += edge_is(&e[i], &want[j], sc->domain);
		is_int(found, 1, "graph: %s", names[j]);
	}
	for (i = 0; i < n && i < 8; i++)
		if (!e[i].waited_us || e[i].waited_us > age_us)
			sane = 0;
	ok(sane, "graph: every waited_us is above 0 and below the scene's age");
	if (!sane || n != 4)
		for (i = 0; i < n && i < 8; i++)
			diag("  edge %llu (%d %s) -> %llu (%d %s) %u:%llu %s/%s %s %llu us",
			     (unsigned long long)e[i].waiter_id, e[i].waiter_pid,
			     e[i].waiter_comm, (unsigned long long)e[i].blocker_id,
			     e[i].blocker_pid, e[i].blocker_comm, e[i].rank,
			     (unsigned long long)e[i].id,
			     ordlock_mode_name(e[i].mode),
			     ordlock_mode_name(e[i].blocker_mode),
			     e[i].edge == ORDLOCK_EDGE_SOFT ? "soft" : "hard",
			     (unsigned long long)e[i].waited_us);
}

struct exp_lock {
	uint64_t id;
	int role;
	unsigned int pos;
	struct gt_actor *a;
	unsigned int mode;
	uint64_t token;		/* holders */
};

static void check_locks(struct scene *sc)
{
	const struct exp_lock want[] = {
		{ 1, GT_HOLDER, 0, sc->h, EX, sc->th },
		{ 1, GT_WAITER, 0, sc->w1, EX, 0 },
		{ 1, GT_WAITER, 1, sc->w2, SH, 0 },
		{ 2, GT_HOLDER, 0, sc->s1, SH, sc->ts1 },
		{ 2, GT_HOLDER, 1, sc->s2, SH, sc->ts2 },
		{ 2, GT_CONVERTER, 0, sc->s1, EX, 0 },
	};
	const char *role[] = { "?", "holder", "waiter", "converter" };
	struct gt_lock l[12];
	int n, i, j, in_order = 1;

	n = gt_locks_read(sc->domain, l, 12);
	is_int(n, 6, "locks: exactly 6 lines in the domain");
	for (j = 0; j < 6; j++) {
		const struct exp_lock *x = &want[j];
		int found = 0;

		for (i = 0; i < n && i < 12; i++)
			if (l[i].rank == 1 && l[i].id == x->id &&
			    l[i].role == x->role && l[i].pos == x->pos &&
			    l[i].owner_id == x->a->owner_id[0] &&
			    l[i].pid == x->a->pid && !strcmp(l[i].comm, x->a->comm) &&
			    l[i].mode == x->mode &&
			    (x->role == GT_HOLDER ? l[i].value == x->token :
						    l[i].value > 0))
				found++;
		is_int(found, 1, "locks: 1:%llu %s %u %s %s",
		       (unsigned long long)x->id, role[x->role], x->pos,
		       x->a->comm, ordlock_mode_name(x->mode));
	}
	/* each resource: its holders, then its queue, positions from 0 */
	for (i = 0; i < n && i < 12; i++) {
		unsigned int want_pos;

		if (!i || l[i].id != l[i - 1].id)
			want_pos = 0;
		else if (l[i].role == GT_HOLDER)
			want_pos = l[i - 1].role == GT_HOLDER ?
				   l[i - 1].pos + 1 : ~0U;
		else
			want_pos = l[i - 1].role == GT_HOLDER ?
				   0 : l[i - 1].pos + 1;
		if (l[i].pos != want_pos)
			in_order = 0;
	}
	ok(in_order, "locks: per resource, holders then the queue, positions in order");
	if (n != 6 || !in_order)
		for (i = 0; i < n && i < 12; i++)
			diag("  1:%llu %s %u %llu %d %s %s %llu",
			     (unsigned long long)l[i].id, role[l[i].role],
			     l[i].pos, (unsigned long long)l[i].owner_id,
			     l[i].pid, l[i].comm, ordlock_mode_name(l[i].mode),
			     (unsigned long long)l[i].value);
}

static void check_owners(struct scene *sc)
{
	const struct {
		struct gt_actor *a;
		unsigned int held, wmode;
		uint64_t wid;
	} want[] = {
		{ sc->h, 1, 0, 0 },
		{ sc->w1, 0, EX, 1 },
		{ sc->w2, 0, SH, 1 },
		{ sc->s1, 1, EX, 2 },
		{ sc->s2, 1, 0, 0 },
	};
	struct gt_owner o[8];
	int n, i, j;

	n = gt_owners_read(sc->domain, o, 8);
	is_int(n, 5, "owners: exactly 5 owners in the domain");
	for (j = 0; j < 5; j++) {
		int found = 0;

		for (i = 0; i < n && i < 8; i++)
			if (o[i].id == want[j].a->owner_id[0] &&
			    o[i].pid == want[j].a->pid &&
			    !strcmp(o[i].comm, want[j].a->comm) &&
			    !strcmp(o[i].kind, "device") &&
			    o[i].held == want[j].held &&
			    o[i].wmode == want[j].wmode &&
			    (!want[j].wmode ? !o[i].waited_us :
			     o[i].wrank == 1 && o[i].wid == want[j].wid &&
			     o[i].waited_us > 0))
				found++;
		if (want[j].wmode)
			is_int(found, 1, "owners: %s holds %u, waits for %s 1:%llu",
			       want[j].a->comm, want[j].held,
			       ordlock_mode_name(want[j].wmode),
			       (unsigned long long)want[j].wid);
		else
			is_int(found, 1, "owners: %s holds %u, waits for nothing",
			       want[j].a->comm, want[j].held);
	}
}

/*
 * H holds 1:1 exclusive; W1 waits for it exclusive, W2 shared (behind
 * W1); S1 and S2 hold 1:2 shared and S1 waits to upgrade.
 */
static void test_exact_lines(void)
{
	struct scene sc;
	struct gt_edge e1[8], e2[8];
	struct gt_owner o[8];
	int n1, n2, i, grew = 1, n;
	pid_t pids[5];

	gt_new_domain(sc.domain, "dbg", ORDLOCK_POLICY_ENFORCE, 0);
	sc.h = gt_actor_start("dbg-h", sc.domain, 1);
	sc.w1 = gt_actor_start("dbg-w1", sc.domain, 1);
	sc.w2 = gt_actor_start("dbg-w2", sc.domain, 1);
	sc.s1 = gt_actor_start("dbg-s1", sc.domain, 1);
	sc.s2 = gt_actor_start("dbg-s2", sc.domain, 1);
	pids[0] = sc.h->pid;
	pids[1] = sc.w1->pid;
	pids[2] = sc.w2->pid;
	pids[3] = sc.s1->pid;
	pids[4] = sc.s2->pid;
	sc.t0 = now_ms();

	is_int(gt_call1(sc.h, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), 0,
	       "scene: H holds 1:1 exclusive");
	sc.th = sc.h->res->token;
	gt_submit1(sc.w1, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	is_int(gt_blocked(sc.w1, ACQ), 0, "scene: W1 waits for 1:1 exclusive");
	gt_submit1(sc.w2, GT_OP_ACQUIRE, 0, 1, 1, SH, LONG_MS, 0);
	is_int(gt_blocked(sc.w2, ACQ), 0, "scene: W2 waits for 1:1 shared");
	is_int(gt_call1(sc.s1, GT_OP_ACQUIRE, 0, 1, 2, SH, LONG_MS, 0), 0,
	       "scene: S1 holds 1:2 shared");
	sc.ts1 = sc.s1->res->token;
	is_int(gt_call1(sc.s2, GT_OP_ACQUIRE, 0, 1, 2, SH, LONG_MS, 0), 0,
	       "scene: S2 holds 1:2 shared");
	sc.ts2 = sc.s2->res->token;
	gt_submit1(sc.s1, GT_OP_CONVERT, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(sc.s1, CONV), 0, "scene: S1 waits to upgrade 1:2");

	check_graph(&sc);
	check_locks(&sc);
	check_owners(&sc);

	/* waited_us grows */
	n1 = gt_graph_read(sc.domain, e1, 8);
	usleep(200000);
	n2 = gt_graph_read(sc.domain, e2, 8);
	if (n1 != n2 || n1 < 1)
		grew = 0;
	for (i = 0; grew && i < n1 && i < 8; i++)
		if (e2[i].waited_us < e1[i].waited_us + 150000)
			grew = 0;
	ok(grew, "graph: 200 ms later, every waited_us grew by at least 150 ms");

	/* unwind */
	gt_call(sc.h, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ok(!gt_collect(sc.w1, LONG_MS) && !sc.w1->res->ret, "unwind: W1 granted");
	is_int(gt_wait_edges(sc.domain, 2, 5000), 0,
	       "unwind: 2 edges left (W2 -> W1 hard, S1 -> S2)");
	gt_call(sc.w1, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ok(!gt_collect(sc.w2, LONG_MS) && !sc.w2->res->ret, "unwind: W2 granted");
	gt_call(sc.s2, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ok(!gt_collect(sc.s1, LONG_MS) && !sc.s1->res->ret,
	   "unwind: S1's upgrade granted");
	is_int(gt_graph_read(sc.domain, e1, 8), 0,
	       "unwind: no edge while nobody waits");
	n = gt_owners_read(sc.domain, o, 8);
	ok(n == 5, "unwind: the 5 owners are still listed (%d)", n);

	gt_actor_stop(sc.h);
	gt_actor_stop(sc.w1);
	gt_actor_stop(sc.w2);
	gt_actor_stop(sc.s1);
	gt_actor_stop(sc.s2);

	is_int(gt_graph_read(NULL, e1, 8), 0,
	       "after exit: graph has no data line at all");
	is_int(gt_locks_read(NULL, NULL, 0), 0,
	       "after exit: locks has no data line at all");
	is_int(gt_owners_read(sc.domain, o, 8), 0,
	       "after exit: owners has no line of the domain");
	n = gt_owners_read(NULL, o, 8);
	for (i = 0; n > 0 && i < n && i < 8; i++) {
		int j;

		for (j = 0; j < 5; j++)
			if (o[i].pid == pids[j])
				n = -1000;
	}
	ok(n >= 0, "after exit: nor any line of the exited pids");
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void test_deadlocks(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_deadlock *d = calloc(128, sizeof(*d));
	struct gt_actor *a, *b;
	const struct gt_result *r;
	uint64_t before, after, maxseq = 0;
	long hist;
	int n, i, good;

	if (!d)
		bail_out("out of memory");
	n = gt_deadlocks_read(NULL, d, 128);
	ok(n >= 0, "deadlocks: parses (%d records)", n);
	for (i = 0; i < n && i < 128; i++)
		if (d[i].seq > maxseq)
			maxseq = d[i].seq;
	hist = olt_param_get("deadlock_history");
	ok(hist > 0 && n <= hist,
	   "deadlocks: at most deadlock_history (%ld) records", hist);

	gt_new_domain(domain, "dl", ORDLOCK_POLICY_DETECT, 0);
	a = gt_actor_start("dl-a", domain, 1);
	b = gt_actor_start("dl-b", domain, 1);
	gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(a, ACQ), 0, "deadlocks: A waits for B");
	before = realtime_ns();
	is_errno(gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), EDEADLK,
		 "deadlocks: B closes the cycle: EDEADLK");
	after = realtime_ns();
	r = b->res;

	n = gt_deadlocks_read(domain, d, 128);
	is_int(n, 1, "deadlocks: one record of the domain");
	if (n == 1) {
		ok(d[0].seq > maxseq, "deadlocks: a new sequence number (%llu)",
		   (unsigned long long)d[0].seq);
		ok(d[0].time_ns >= before && d[0].time_ns <= after,
		   "deadlocks: its time is when it happened");
		is_int(d[0].len, 2, "deadlocks: length 2");
		is_int(d[0].nsteps, 2, "deadlocks: 2 step lines");
		good = r->ncycle == 2 && d[0].nsteps == 2;
		for (i = 0; good && i < 2; i++) {
			const struct ordlock_cycle_step *s = &r->cycle[i];
			const struct gt_dstep *t = &d[0].steps[i];

			if (t->owner_id != s->owner_id || t->pid != (int)s->pid ||
			    strcmp(t->comm, s->comm) || t->mode != s->key.mode ||
			    t->rank != s->key.rank || t->id != s->key.id ||
			    t->edge != s->edge || t->blocker_mode != s->blocker_mode)
				good = 0;
		}
		ok(good, "deadlocks: the steps are the victim's cycle");
		ok(d[0].nsteps == 2 && d[0].steps[0].owner_id == b->owner_id[0] &&
		   d[0].steps[0].pid == b->pid && d[0].steps[0].id == 1 &&
		   d[0].steps[1].owner_id == a->owner_id[0] &&
		   d[0].steps[1].pid == a->pid && d[0].steps[1].id == 2,
		   "deadlocks: victim B first (waits for 1:1), then A (waits for 1:2)");
	}
	gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	ok(!gt_collect(a, LONG_MS) && !a->res->ret, "deadlocks: A is granted");
	gt_actor_stop(a);
	gt_actor_stop(b);
	is_int(gt_deadlocks_read(domain, d, 128), 1,
	       "deadlocks: the record stays after the owners left");
	free(d);
}

/*
 * Counters of a scripted scenario in a fresh "detect" domain:
 * acquires 4, deadlocks 1, conversions 1, try_failures 1, timeouts 1,
 * order_violations 1, releases 4, three waits in the histogram.
 */
static void test_stats(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	struct gt_stats st;
	int ret;

	gt_new_domain(domain, "stats", ORDLOCK_POLICY_DETECT, 0);
	is_int(gt_stats_read(domain, &st), 0, "stats: a line for the new domain");
	ok(!strcmp(st.policy, "detect") && gt_stat(&st, "detect_delay_ms") == 0,
	   "stats: policy detect, detect_delay_ms 0");
	ok(gt_stat(&st, "acquires") == 0 && gt_stat(&st, "owners") == 0,
	   "stats: all zero");
	ok(st.have_wait && st.wait_total == 0 && st.wait_buckets > 1,
	   "stats: a wait_us histogram line, empty (%u buckets)",
	   st.wait_buckets);

	a = gt_actor_start("st-a", domain, 1);
	b = gt_actor_start("st-b", domain, 1);
	gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	gt_blocked(a, ACQ);
	gt_stats_read(domain, &st);
	ok(gt_stat(&st, "owners") == 2 && gt_stat(&st, "resources") == 2 &&
	   gt_stat(&st, "waiters") == 1,
	   "stats: while A waits: owners 2, resources 2, waiters 1 (%lld %lld %lld)",
	   gt_stat(&st, "owners"), gt_stat(&st, "resources"),
	   gt_stat(&st, "waiters"));
	is_errno(gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0), EDEADLK,
		 "stats: B is a deadlock victim");
	gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	gt_collect(a, LONG_MS);
	is_int(a->res->ret, 0, "stats: A is granted");
	is_int(gt_call1(a, GT_OP_CONVERT, 0, 1, 1, SH, LONG_MS, 0), 0,
	       "stats: A downgrades 1:1");
	is_errno(gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, 0, ORDLOCK_ACQUIRE_TRY),
		 EAGAIN, "stats: B's try fails");
	is_errno(gt_call1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, 100, 0), ETIMEDOUT,
		 "stats: B's wait times out");
	is_int(gt_call1(b, GT_OP_ACQUIRE, 0, 1, 5, EX, LONG_MS, 0), 0,
	       "stats: B takes 1:5");
	ret = gt_call1(b, GT_OP_ACQUIRE, 0, 1, 5, EX, LONG_MS, 0);
	is_errno(ret, EDEADLK, "stats: asking again for a held key: EDEADLK");
	is_int(b->res->failure.reason, ORDLOCK_REASON_ORDER, "stats: reason ORDER");
	gt_call(a, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);
	gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0);

	is_int(gt_stats_read(domain, &st), 0, "stats: read");
	is_int(gt_stat(&st, "acquires"), 4, "stats: acquires 4");
	ok(gt_stat(&st, "contended") >= 1, "stats: contended %lld >= 1",
	   gt_stat(&st, "contended"));
	is_int(gt_stat(&st, "deadlocks"), 1, "stats: deadlocks 1");
	is_int(gt_stat(&st, "upgrade_deadlocks"), 0, "stats: upgrade_deadlocks 0");
	is_int(gt_stat(&st, "conversions"), 1, "stats: conversions 1");
	is_int(gt_stat(&st, "try_failures"), 1, "stats: try_failures 1");
	is_int(gt_stat(&st, "timeouts"), 1, "stats: timeouts 1");
	is_int(gt_stat(&st, "order_violations"), 1, "stats: order_violations 1");
	is_int(gt_stat(&st, "releases"), 4, "stats: releases 4");
	is_int(gt_stat(&st, "waiters"), 0, "stats: waiters 0");
	is_int(gt_stat(&st, "peak_waiters"), 2, "stats: peak_waiters 2");
	is_int(gt_stat(&st, "resources"), 0, "stats: resources 0");
	ok(gt_stat(&st, "peak_resources") >= 2, "stats: peak_resources %lld >= 2",
	   gt_stat(&st, "peak_resources"));
	is_int(gt_stat(&st, "owners"), 2, "stats: owners 2");
	is_int(st.wait_total, 3, "stats: the histogram counts the 3 waits");
	gt_actor_stop(a);
	gt_actor_stop(b);
	gt_stats_read(domain, &st);
	ok(gt_stat(&st, "owners") == 0 && gt_stat(&st, "peak_owners") == 2,
	   "stats: after exit, owners 0, peak_owners 2");
}

/* Readers versus lockers */
#define NLOCKERS	3
#define STRESS_MS	3000

struct stress {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	volatile int stop;
	unsigned long iters[NLOCKERS];
	uint64_t max_op_ms[NLOCKERS];
	int error[NLOCKERS];
};

static struct stress *sx;

static int locker_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct ordlock *ol = ordlock_open(sx->domain);
	unsigned int seed = (unsigned int)getpid();

	if (!ol) {
		sx->error[i] = -errno;
		return 1;
	}
	while (!sx->stop) {
		struct ordlock_key k[3];
		uint64_t t0 = now_ms(), dt;
		int j, ret;

		for (j = 0; j < 3; j++)
			k[j] = ordlock_key(1, (uint64_t)(rand_r(&seed) % 8) * 3 + j,
					   rand_r(&seed) % 2 ? SH : EX);
		ret = ordlock_acquire(ol, k, 3, LONG_MS, 0, NULL);
		if (!ret)
			ret = ordlock_release_all(ol);
		if (ret) {
			sx->error[i] = ret;
			break;
		}
		dt = now_ms() - t0;
		if (dt > sx->max_op_ms[i])
			sx->max_op_ms[i] = dt;
		sx->iters[i]++;
	}
	ordlock_close(ol);
	return 0;
}

static void test_read_under_load(void)
{
	static const char *const names[] = { "graph", "locks", "owners",
					      "deadlocks", "stats" };
	char path[128];
	pid_t pid[NLOCKERS];
	unsigned long reads = 0, total = 0;
	uint64_t t0, max_read = 0, max_op = 0;
	int i, bad = 0, errors = 0;

	sx = shm_alloc(sizeof(*sx));
	gt_new_domain(sx->domain, "load", ORDLOCK_POLICY_ENFORCE, 0);
	for (i = 0; i < NLOCKERS; i++)
		pid[i] = child_start(locker_main, (void *)(intptr_t)i);
	t0 = now_ms();
	while (now_ms() - t0 < STRESS_MS) {
		uint64_t r0 = now_ms();
		char *buf;

		snprintf(path, sizeof(path), GT_DEBUGFS "%s", names[reads % 5]);
		buf = gt_read_file(path);
		if (!buf)
			bad++;
		free(buf);
		if (now_ms() - r0 > max_read)
			max_read = now_ms() - r0;
		reads++;
	}
	/* the parsers too: every line of a busy file is whole */
	if (gt_graph_read(NULL, NULL, 0) < 0 || gt_locks_read(NULL, NULL, 0) < 0 ||
	    gt_owners_read(NULL, NULL, 0) < 0)
		bad++;
	sx->stop = 1;
	for (i = 0; i < NLOCKERS; i++) {
		if (child_wait(pid[i], 0))
			errors++;
		if (sx->error[i])
			errors++;
		total += sx->iters[i];
		if (sx->max_op_ms[i] > max_op)
			max_op = sx->max_op_ms[i];
	}
	diag("load: %lu reads (longest %llu ms), %lu lock/unlock rounds (longest %llu ms)",
	     reads, (unsigned long long)max_read, total,
	     (unsigned long long)max_op);
	is_int(bad, 0, "load: every read of every file succeeded and parsed");
	is_int(errors, 0, "load: the lockers saw no error");
	ok(total > 0 && sx->iters[0] && sx->iters[1] && sx->iters[2],
	   "load: every locker made progress while files were read");
	ok(max_op < 5000, "load: no lock round took 5 s or more");
	is_int(gt_locks_read(sx->domain, NULL, 0), 0,
	       "load: nothing of the domain left in locks");
	shm_free(sx, sizeof(*sx));
}

int main(void)
{
	watchdog_start(250);
	test_files();
	test_exact_lines();
	test_deadlocks();
	test_stats();
	test_read_under_load();
	return tap_done();
}
