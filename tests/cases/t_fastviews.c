// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastviews: a key held by the fast path (issue 28, docs/fastpath.md) is
 * seen with its holder, read from the key's word, everywhere a kernel
 * holder is: debugfs "locks" and "graph" (parsed by ordlockctl's parser),
 * the GET_LOCKS and GET_GRAPH dumps (ORDLOCK_E_FAST), ordlockctl's locks,
 * graph and blockers; the failure record of a kernel request that finds
 * the key busy (a try, a timeout) names its pid; a word whose index names
 * no owner shows as unknown (owner 0, pid 0, "?"). And a cycle through
 * two fast holders, each waiting in the kernel for the other's key, is a
 * deadlock like any other: the second waiter gets EDEADLK naming it
 * (barriers make the cycle happen every run).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "parse.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define BOGUS 0xfffff0u

static char dom[ORDLOCK_DOMAIN_NAME_MAX];


static int cas(volatile uint64_t *w, uint64_t old, uint64_t new)
{
	return __atomic_compare_exchange_n(w, &old, new, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

/* A kernel try-acquire of 1:@id by a fresh owner of dom: -errno, the failure in *@f */
static int ktry(uint64_t id, struct ordlock_failure *f)
{
	return olt_ktry(dom, ordlock_key(1, id, EX), f);
}

/* The debugfs "locks" record of 1:@id in dom held by the fast path */
static int fast_lock_row(uint64_t id, struct olc_lock *out)
{
	struct olc_locks all = { 0 };
	int ret, found = 0;
	size_t i;

	ret = gt_debugfs_parse("locks", (gt_parser)olc_parse_locks, &all);
	if (ret < 0) {
		diag("debugfs locks: %s", strerror(-ret));
		return 0;
	}
	for (i = 0; i < all.n; i++) {
		const struct olc_lock *l = &all.v[i];

		if (!strcmp(l->domain, dom) && l->rank == 1 && l->id == id &&
		    l->role == ORDLOCK_ROLE_HOLDER && l->fast) {
			*out = *l;
			found++;
		}
	}
	olc_locks_free(&all);
	return found;
}

/* The debugfs "graph" edge of dom's waiter @wpid on 1:@id */
static int graph_row(uint64_t id, pid_t wpid, struct olc_edge *out)
{
	struct olc_edges all = { 0 };
	int ret, found = 0;
	size_t i;

	ret = gt_debugfs_parse("graph", (gt_parser)olc_parse_graph, &all);
	if (ret < 0) {
		diag("debugfs graph: %s", strerror(-ret));
		return 0;
	}
	for (i = 0; i < all.n; i++) {
		const struct olc_edge *e = &all.v[i];

		if (!strcmp(e->domain, dom) && e->rank == 1 && e->id == id &&
		    e->waiter.pid == (uint32_t)wpid) {
			*out = *e;
			found++;
		}
	}
	olc_edges_free(&all);
	return found;
}

/* The GET_LOCKS holder entry of 1:@id in dom: 1 and *@out, else 0 */
static int nl_lock(uint64_t id, struct olc_nl_entry *out)
{
	struct nlt *s = nlt_must_open();
	struct olc_nl_entry *v = NULL;
	int n, i, found = 0;

	n = nlt_dump(s, ORDLOCK_CMD_GET_LOCKS, dom, &v);
	for (i = 0; i < n; i++)
		if (v[i].key.rank == 1 && v[i].key.id == id &&
		    v[i].role == ORDLOCK_ROLE_HOLDER) {
			*out = v[i];
			found++;
		}
	free(v);
	nlt_close(s);
	return found;
}

/* The GET_GRAPH edge of waiter @wpid on 1:@id: 1 and *@out, else 0 */
static int nl_edge(uint64_t id, pid_t wpid, struct olc_nl_entry *out)
{
	struct nlt *s = nlt_must_open();
	struct olc_nl_entry *v = NULL;
	int n, i, found = 0;

	n = nlt_dump(s, ORDLOCK_CMD_GET_GRAPH, dom, &v);
	for (i = 0; i < n; i++)
		if (v[i].key.rank == 1 && v[i].key.id == id &&
		    v[i].pid == (uint32_t)wpid) {
			*out = v[i];
			found++;
		}
	free(v);
	nlt_close(s);
	return found;
}

/* Does a line of @out have all of the words of @want, space-separated? */
static int has_line(const char *out, const char *const *want)
{
	const char *line = out, *end;
	char copy[512];
	int i, all;

	for (; *line; line = *end ? end + 1 : end) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		snprintf(copy, sizeof(copy), " %.*s ", (int)(end - line), line);
		for (i = 0; copy[i]; i++)
			if (copy[i] == '\t')
				copy[i] = ' ';
		all = 1;
		for (i = 0; want[i]; i++) {
			char w[128];

			snprintf(w, sizeof(w), " %s ", want[i]);
			if (!strstr(copy, w))
				all = 0;
		}
		if (all)
			return 1;
	}
	return 0;
}

struct shared {
	int ret[4];
	int nheld[4];
	struct ordlock_failure f[4];
	struct ordlock_cycle_step steps[4];
	int nsteps;
	struct pbarrier *b1;
	struct pbarrier *b2;
};

static struct shared *sh;

/* A kernel waiter on 1:@id (libordlock: its CAS fails, the kernel waits) */
static int waiter_main(void *arg)
{
	uint64_t id = (uintptr_t)arg;
	struct ordlock_key k = ordlock_key(1, id, EX);
	unsigned int ms = id == 11 ? 300 : OLT_LONG_MS;
	struct ordlock *ol = olt_child_open(dom);

	sh->ret[0] = ordlock_acquire(ol, &k, 1, ms, 0, NULL) ? -errno : 0;
	sh->f[0] = *ordlock_last_failure(ol);
	ordlock_close(ol);
	return 0;
}

/* Views, failure records and unknown owners, with a raw fast holder */
static void test_views(void)
{
	struct olc_nl_entry e;
	struct ordlock_failure f;
	struct olc_lock l;
	struct olc_edge g;
	uint32_t slot, slot2, gen;
	char out[8192], pid[16], idx[24], wpid[16];
	struct olt_fast fa;
	pid_t w;
	uint64_t old;

	olt_fast_open(&fa, dom, 10, &slot, 0);
	old = fa.words[slot];
	gen = ORDLOCK_FAST_GEN(old) + 1;
	ok(!ORDLOCK_FAST_OWNER(old) &&
	   cas(&fa.words[slot], old, ORDLOCK_FAST_WORD(gen, fa.index)),
	   "1:10 taken by a user CAS (index %u)", fa.index);
	snprintf(pid, sizeof(pid), "%d", getpid());
	snprintf(idx, sizeof(idx), "fast:%u", fa.index);

	/* debugfs locks, through ordlockctl's parser */
	memset(&l, 0, sizeof(l));
	is_int(fast_lock_row(10, &l), 1, "debugfs locks: one fast holder of 1:10");
	is_int(l.owner.pid, getpid(), "with the holder's pid");
	ok(l.value == fa.index && l.pos == 0 && l.mode == EX && !l.has_lease,
	   "fast:%llu, position 0, exclusive, no lease",
	   (unsigned long long)l.value);
	ok(l.owner.id != 0 && !strcmp(l.owner.comm, "t_fastviews"),
	   "owner id %llu, comm %s", (unsigned long long)l.owner.id, l.owner.comm);

	/* GET_LOCKS */
	memset(&e, 0, sizeof(e));
	is_int(nl_lock(10, &e), 1, "GET_LOCKS: one holder of 1:10");
	ok(OLC_NL_HAS(&e, ORDLOCK_E_FAST) && e.fast == fa.index,
	   "with ORDLOCK_E_FAST, the index (%u)", e.fast);
	ok(e.pid == (uint32_t)getpid() && e.owner_id == l.owner.id &&
	   !OLC_NL_HAS(&e, ORDLOCK_E_TOKEN),
	   "the holder's pid and owner id, no token");

	/* the owners' held counts the key */
	{
		struct gt_owner o[16];
		struct olc_nl_entry *v = NULL;
		struct nlt *s = nlt_must_open();
		int n, i, dheld = -1, nheld = -1;

		n = gt_owners_read(dom, o, 16);
		for (i = 0; i < n && i < 16; i++)
			if (o[i].id == l.owner.id)
				dheld = o[i].held;
		is_int(dheld, 1, "debugfs owners: held 1 (the key held by the fast path)");
		n = nlt_dump(s, ORDLOCK_CMD_GET_OWNERS, dom, &v);
		for (i = 0; i < n; i++)
			if (v[i].owner_id == l.owner.id)
				nheld = v[i].held;
		is_int(nheld, 1, "GET_OWNERS: held 1");
		free(v);
		nlt_close(s);
	}

	/* ordlockctl locks */
	is_int(olt_ctl(out, sizeof(out), "locks -d %s -n", dom), 0, "ordlockctl locks");
	ok(has_line(out, (const char *const[]){ "1:10", "holder", pid, idx,
						 "exclusive", NULL }),
	   "a row: 1:10 holder pid %s %s", pid, idx);
	if (!has_line(out, (const char *const[]){ "1:10", idx, NULL }))
		diag("%s", out);
	is_int(olt_ctl(out, sizeof(out), "locks -d %s -j", dom), 0, "ordlockctl locks -j");
	{
		const char *q = strstr(out, "\"fast_index\"");

		q = q ? q + strlen("\"fast_index\"") : NULL;
		while (q && (*q == ':' || *q == ' '))
			q++;
		ok(q && strtoul(q, NULL, 10) == fa.index, "JSON: \"fast_index\" %u",
		   fa.index);
		if (!q)
			diag("%s", out);
	}

	/* the failure records */
	memset(&f, 0, sizeof(f));
	is_int(ktry(10, &f), -EAGAIN, "a kernel try of 1:10: EAGAIN");
	is_int(f.pid, getpid(), "the failure names the fast holder's pid");
	is_int(f.holder_mode, EX, "holding it exclusive");
	w = child_start(waiter_main, (void *)(uintptr_t)10);
	is_int(wait_blocked_ioctl(w, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "a kernel waiter behind the fast holder");

	/* the graph views */
	memset(&g, 0, sizeof(g));
	is_int(graph_row(10, w, &g), 1, "debugfs graph: its edge");
	ok(g.blocker.pid == (uint32_t)getpid() && g.type == ORDLOCK_EDGE_HARD &&
	   g.fast && g.blocker_mode == EX,
	   "to the fast holder, edge \"fast\" (a hard edge), exclusive");
	memset(&e, 0, sizeof(e));
	is_int(nl_edge(10, w, &e), 1, "GET_GRAPH: its edge");
	ok(e.blocker.pid == (uint32_t)getpid() && e.edge == ORDLOCK_EDGE_HARD &&
	   ((e.blocker.present >> ORDLOCK_E_FAST) & 1) && e.blocker.fast == fa.index,
	   "blocker: the holder, hard, ORDLOCK_E_FAST %u", e.blocker.fast);
	snprintf(wpid, sizeof(wpid), "%d", w);
	is_int(olt_ctl(out, sizeof(out), "graph -d %s", dom), 0, "ordlockctl graph");
	ok(has_line(out, (const char *const[]){ wpid, pid, "fast", NULL }),
	   "a row: waiter %s, blocker %s, edge fast", wpid, pid);
	if (!has_line(out, (const char *const[]){ wpid, pid, "fast", NULL }))
		diag("%s", out);
	is_int(olt_ctl(out, sizeof(out), "blockers %d -n", w), 1,
	       "ordlockctl blockers: exit 1, the pid is blocked");
	ok(has_line(out, (const char *const[]){ pid, "1:10", "fast", NULL }),
	   "names pid %s holding 1:10, edge fast", pid);
	if (!has_line(out, (const char *const[]){ pid, "1:10", "fast", NULL }))
		diag("%s", out);
	is_int(ORDLOCK_FAST_OWNER(fa.words[slot]), fa.index, "still ours");
	/* let it go: WAITERS is set, the kernel hands it over */
	ok(!cas(&fa.words[slot], ORDLOCK_FAST_WORD(gen, fa.index),
		ORDLOCK_FAST_WORD(gen, 0)), "the release CAS meets WAITERS");
	{
		struct ordlock_fast_release r;

		memset(&r, 0, sizeof(r));
		r.size = sizeof(r);
		r.slot = slot;
		r.gen = gen;
		is_int(ioctl(fa.fd, ORDLOCK_IOC_FAST_RELEASE, &r), 0,
		       "FAST_RELEASE hands 1:10 to the waiter");
	}
	is_int(child_wait(w, 60), 0, "the waiter ends");
	is_int(sh->ret[0], 0, "granted");

	/* a word whose index names no owner */
	{
		struct olt_fast fb;

		olt_fast_open(&fb, dom, 12, &slot2, 0);
		fb.words[slot2] = ORDLOCK_FAST_WORD(5, BOGUS);
		memset(&l, 0, sizeof(l));
		is_int(fast_lock_row(12, &l), 1, "a forged index: a fast holder row");
		ok(l.owner.id == 0 && l.owner.pid == 0 && !strcmp(l.owner.comm, "?") &&
		   l.value == BOGUS, "unknown: owner 0, pid 0, \"?\", fast:%llu",
		   (unsigned long long)l.value);
		memset(&e, 0, sizeof(e));
		is_int(nl_lock(12, &e), 1, "GET_LOCKS shows it to an admin");
		ok(e.owner_id == 0 && e.pid == 0 && e.fast == BOGUS,
		   "as unknown, ORDLOCK_E_FAST %u", e.fast);
		memset(&f, 0, sizeof(f));
		is_int(ktry(12, &f), -EAGAIN, "a kernel try: EAGAIN");
		ok(f.pid == 0 && f.holder_mode == EX,
		   "the failure: holder exclusive, no pid (%u)", f.pid);
		fb.words[slot2] = ORDLOCK_FAST_WORD(5, 0);
		olt_fast_close(&fb);
	}
	olt_fast_close(&fa);
}

/* A timeout behind a fast holder names it */
static void test_timeout(void)
{
	struct olt_fast fa;
	uint32_t slot, gen;
	uint64_t old;
	pid_t w;

	olt_fast_open(&fa, dom, 11, &slot, 0);
	old = fa.words[slot];
	gen = ORDLOCK_FAST_GEN(old) + 1;
	ok(cas(&fa.words[slot], old, ORDLOCK_FAST_WORD(gen, fa.index)),
	   "1:11 taken by a user CAS");
	memset(&sh->f[0], 0, sizeof(sh->f[0]));
	w = child_start(waiter_main, (void *)(uintptr_t)11);
	is_int(child_wait(w, 60), 0, "a waiter of 300 ms ends");
	is_int(sh->ret[0], -ETIMEDOUT, "timed out");
	is_int(sh->f[0].reason, ORDLOCK_REASON_TIMEOUT, "reason TIMEOUT");
	is_int(sh->f[0].pid, getpid(), "naming the fast holder's pid");
	is_int(sh->f[0].holder_mode, EX, "holding it exclusive");
	ok(cas(&fa.words[slot], ORDLOCK_FAST_WORD(gen, fa.index),
	       ORDLOCK_FAST_WORD(gen, 0)), "released by CAS");
	olt_fast_close(&fa);
}

/* A: 1:1 by the fast path, then 1:2 (held by B): waits */
static int a_main(void *arg)
{
	struct ordlock_key k1 = ORDLOCK_EX(1, 1), k2 = ORDLOCK_EX(1, 2);
	struct ordlock *ol = olt_child_open(dom);

	(void)arg;
	sh->ret[1] = ordlock_acquire(ol, &k1, 1, 1000, 0, NULL) ? -errno : 0;
	sh->nheld[1] = olt_nheld(ol);
	pbarrier_wait(sh->b1);
	sh->ret[2] = ordlock_acquire(ol, &k2, 1, OLT_LONG_MS, 0, NULL) ? -errno : 0;
	ordlock_release_all(ol);
	ordlock_close(ol);
	return 0;
}

/* B: 1:2 by the fast path; once A waits, 1:1 (held by A) closes the cycle */
static int b_main(void *arg)
{
	struct ordlock_key k1 = ORDLOCK_EX(1, 1), k2 = ORDLOCK_EX(1, 2);
	struct ordlock *ol = olt_child_open(dom);
	int n;

	(void)arg;
	sh->ret[0] = ordlock_acquire(ol, &k2, 1, 1000, 0, NULL) ? -errno : 0;
	sh->nheld[0] = olt_nheld(ol);
	pbarrier_wait(sh->b1);
	pbarrier_wait(sh->b2);
	/* before the fix: it waits until this timeout */
	sh->ret[3] = ordlock_acquire(ol, &k1, 1, 5000, 0, NULL) ? -errno : 0;
	sh->f[3] = *ordlock_last_failure(ol);
	n = ordlock_last_cycle(ol, sh->steps, 4);
	sh->nsteps = n;
	ordlock_release_all(ol);
	ordlock_close(ol);
	return 0;
}

static void test_cycle(void)
{
	struct olc_edge g;
	pid_t a, b;
	int i;

	sh->b1 = pbarrier_new(3);
	sh->b2 = pbarrier_new(2);
	a = child_start(a_main, NULL);
	b = child_start(b_main, NULL);
	pbarrier_wait(sh->b1);
	ok(sh->ret[1] == 0 && sh->nheld[1] == 0, "A holds 1:1 by the fast path");
	ok(sh->ret[0] == 0 && sh->nheld[0] == 0, "B holds 1:2 by the fast path");
	is_int(wait_blocked_ioctl(a, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "A waits in the kernel for 1:2");
	memset(&g, 0, sizeof(g));
	ok(graph_row(2, a, &g) == 1 && g.blocker.pid == (uint32_t)b && g.fast,
	   "the graph: A waits for B, a fast holder");
	pbarrier_wait(sh->b2);
	is_int(child_wait(b, 60), 0, "B ends");
	is_int(sh->ret[3], -EDEADLK, "B's 1:1 closes the cycle: EDEADLK");
	is_int(sh->f[3].reason, ORDLOCK_REASON_DEADLOCK, "reason DEADLOCK");
	is_int(sh->f[3].cycle_len, 2, "a cycle of 2");
	is_int(sh->nsteps, 2, "its 2 steps");
	for (i = 0; i < sh->nsteps && i < 2; i++)
		diag("step %d: %s", i, gt_step_str(&sh->steps[i]));
	ok(sh->nsteps == 2 &&
	   sh->steps[0].pid == (uint32_t)b && sh->steps[0].key.id == 1 &&
	   sh->steps[0].edge == ORDLOCK_EDGE_HARD &&
	   sh->steps[0].blocker_mode == EX &&
	   sh->steps[1].pid == (uint32_t)a && sh->steps[1].key.id == 2 &&
	   sh->steps[1].edge == ORDLOCK_EDGE_HARD,
	   "B waits for 1:1 held by A, A for 1:2 held by B (hard edges)");
	is_int(child_wait(a, 60), 0, "A ends");
	is_int(sh->ret[2], 0, "A is granted 1:2 when B lets go");
	pbarrier_free(sh->b1);
	pbarrier_free(sh->b2);
}

int main(void)
{
	struct ordlock_domain_config cfg;
	struct ordlock *adm;

	watchdog_start(300);
	if (geteuid())
		bail_out("needs root (DOMAIN_CONFIG, debugfs)");
	sh = shm_alloc(sizeof(*sh));
	gt_new_domain(dom, "fastviews", ORDLOCK_POLICY_DETECT, 0);
	adm = olt_open(NULL);
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = ORDLOCK_DOMAIN_SET_FASTPATH;
	cfg.fastpath = 1;
	cfg.fastpath_uid = getuid();
	is_int(ordlock_domain_config(adm, dom, &cfg), 0,
	       "%s: detect, fast path on", dom);
	test_views();
	test_timeout();
	test_cycle();
	cfg.fastpath = 0;
	is_int(ordlock_domain_config(adm, dom, &cfg), 0, "fast path off at the end");
	ordlock_close(adm);
	return tap_done();
}
