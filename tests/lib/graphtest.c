// SPDX-License-Identifier: GPL-2.0
/* Helpers of the wait-for graph tests: see graphtest.h. */
#define _GNU_SOURCE		/* pipe2() */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "file.h"
#include "graphtest.h"
#include "oltest.h"
#include "parse.h"
#include "tap.h"

/* Actors */

/*
 * The state an actor shares with the parent: its identity, then one
 * command and its result. The parent writes the command, then one byte to
 * the command pipe; the actor runs it, writes the result, then one byte to
 * the result pipe. The pipes order the accesses.
 */
struct gt_actor_shm {
	char comm[16];
	char domain[GT_MAX_FDS][ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int nfds;
	uint64_t owner_id[GT_MAX_FDS];
	int start_ret;

	int op;
	unsigned int fd;
	unsigned int nkeys;
	struct ordlock_key keys[GT_MAX_KEYS];
	unsigned int timeout_ms;
	unsigned int flags;

	struct gt_result res;
};

struct gt_boot {
	struct gt_actor_shm *shm;
	int cmd_rd, cmd_wr, res_rd, res_wr;
};

/* Close the owners inherited from the parent: they are not the actor's */
static void gt_close_inherited(const int *keep, int nkeep)
{
	char path[64], target[64];
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int i, fd;

	if (!d)
		return;
	while ((de = readdir(d))) {
		ssize_t n;

		fd = atoi(de->d_name);
		if (fd < 3 || fd == dirfd(d))
			continue;
		for (i = 0; i < nkeep; i++)
			if (keep[i] == fd)
				break;
		if (i < nkeep)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, ORDLOCK_DEVICE))
			close(fd);
	}
	closedir(d);
}

static void gt_reply(int fd)
{
	char c = 'r';

	while (write(fd, &c, 1) < 0 && errno == EINTR)
		;
}

static void gt_run(struct gt_actor_shm *s, struct ordlock **ols)
{
	struct ordlock *ol = s->fd < s->nfds ? ols[s->fd] : NULL;
	struct gt_result *r = &s->res;
	uint64_t t0 = now_ms();

	memset(r, 0, sizeof(*r));
	if (!ol) {
		r->ret = -EBADF;
		return;
	}
	switch (s->op) {
	case GT_OP_ACQUIRE:
		r->ret = ordlock_acquire(ol, s->keys, s->nkeys, s->timeout_ms,
					 s->flags, &r->token);
		r->result_flags = ordlock_result_flags(ol);
		break;
	case GT_OP_CONVERT:
		r->ret = ordlock_convert(ol, s->keys[0], s->timeout_ms,
					 s->flags, &r->token);
		break;
	case GT_OP_RELEASE:
		r->ret = ordlock_release(ol, s->keys, s->nkeys);
		break;
	case GT_OP_RELEASE_ALL:
		r->ret = ordlock_release_all(ol);
		break;
	case GT_OP_CLOSE:
		ordlock_close(ol);
		ols[s->fd] = NULL;
		r->end_ms = now_ms();
		r->elapsed_ms = r->end_ms - t0;
		return;
	default:
		r->ret = -EINVAL;
		return;
	}
	r->end_ms = now_ms();
	r->elapsed_ms = r->end_ms - t0;
	if (r->ret) {
		r->failure = *ordlock_last_failure(ol);
		if (r->ret == -EDEADLK)
			r->ncycle = ordlock_last_cycle(ol, r->cycle,
						       ORDLOCK_CYCLE_MAX);
	}
	r->nheld = olt_nheld(ol);
}

static int gt_actor_main(void *arg)
{
	struct gt_boot *b = arg;
	struct gt_actor_shm *s = b->shm;
	struct ordlock *ols[GT_MAX_FDS] = { NULL };
	int keep[2] = { b->cmd_rd, b->res_wr };
	unsigned int i;

	close(b->cmd_wr);
	close(b->res_rd);
	prctl(PR_SET_NAME, s->comm, 0, 0, 0);
	gt_close_inherited(keep, 2);
	for (i = 0; i < s->nfds; i++) {
		ols[i] = ordlock_open(s->domain[i][0] ? s->domain[i] : NULL);
		if (!ols[i]) {
			s->start_ret = -errno;
			gt_reply(b->res_wr);
			return 1;
		}
		s->owner_id[i] = gt_owner_id(ols[i]);
	}
	gt_reply(b->res_wr);

	for (;;) {
		char c;
		ssize_t n = read(b->cmd_rd, &c, 1);

		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return 3;
		}
		if (s->op == GT_OP_EXIT)
			return 0;	/* the kernel releases at exit */
		gt_run(s, ols);
		gt_reply(b->res_wr);
	}
}

struct gt_actor *gt_actor_start(const char *comm, const char *domain,
				unsigned int nfds)
{
	const char *domains[GT_MAX_FDS];
	unsigned int i;

	for (i = 0; i < GT_MAX_FDS; i++)
		domains[i] = domain;
	return gt_actor_start_in(comm, domains, nfds);
}

struct gt_actor *gt_actor_start_in(const char *comm, const char *const *domains,
				   unsigned int nfds)
{
	struct gt_actor *a = calloc(1, sizeof(*a));
	struct gt_boot b;
	int cmd[2], res[2];
	unsigned int i;

	if (!a)
		bail_out("gt_actor_start: out of memory");
	if (!nfds || nfds > GT_MAX_FDS)
		bail_out("gt_actor_start: bad nfds %u", nfds);
	if (pipe2(cmd, O_CLOEXEC) || pipe2(res, O_CLOEXEC))
		bail_out("pipe: %s", strerror(errno));
	a->shm = shm_alloc(sizeof(*a->shm));
	a->res = &a->shm->res;
	snprintf(a->shm->comm, sizeof(a->shm->comm), "%s", comm);
	snprintf(a->comm, sizeof(a->comm), "%s", comm);
	for (i = 0; i < nfds; i++)
		if (domains[i])
			snprintf(a->shm->domain[i], sizeof(a->shm->domain[i]), "%s", domains[i]);
	a->shm->nfds = nfds;
	a->nfds = nfds;

	b.shm = a->shm;
	b.cmd_rd = cmd[0];
	b.cmd_wr = cmd[1];
	b.res_rd = res[0];
	b.res_wr = res[1];
	a->pid = child_start(gt_actor_main, &b);
	close(cmd[0]);
	close(res[1]);
	a->cmd_wr = cmd[1];
	a->res_rd = res[0];

	a->busy = 1;
	if (gt_collect(a, 10000))
		bail_out("actor %s (pid %d) did not start", comm, (int)a->pid);
	if (a->shm->start_ret)
		bail_out("actor %s: opening its owners: %s", comm,
			 strerror(-a->shm->start_ret));
	for (i = 0; i < nfds; i++)
		a->owner_id[i] = a->shm->owner_id[i];
	return a;
}

int gt_submit(struct gt_actor *a, enum gt_op op, unsigned int fd,
	      const struct ordlock_key *keys, unsigned int nkeys,
	      unsigned int timeout_ms, unsigned int flags)
{
	struct gt_actor_shm *s = a->shm;
	char c = 'c';

	if (a->busy)
		return -EBUSY;
	if (nkeys > GT_MAX_KEYS)
		bail_out("gt_submit: too many keys (%u)", nkeys);
	s->op = op;
	s->fd = fd;
	s->nkeys = nkeys;
	if (nkeys)
		memcpy(s->keys, keys, nkeys * sizeof(*keys));
	s->timeout_ms = timeout_ms;
	s->flags = flags;
	if (write(a->cmd_wr, &c, 1) != 1)
		return -EPIPE;
	a->busy = 1;
	return 0;
}

int gt_collect(struct gt_actor *a, unsigned int wait_ms)
{
	uint64_t deadline = now_ms() + wait_ms;
	struct pollfd p = { .fd = a->res_rd, .events = POLLIN };
	char c;

	if (!a->busy)
		return 0;
	for (;;) {
		uint64_t now = now_ms();
		int left = now >= deadline ? 0 : (int)(deadline - now);
		int n = poll(&p, 1, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		break;
	}
	for (;;) {
		ssize_t n = read(a->res_rd, &c, 1);

		if (n == 1)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		return -EPIPE;
	}
	a->busy = 0;
	return 0;
}

int gt_call(struct gt_actor *a, enum gt_op op, unsigned int fd,
	    const struct ordlock_key *keys, unsigned int nkeys,
	    unsigned int timeout_ms, unsigned int flags)
{
	int ret = gt_submit(a, op, fd, keys, nkeys, timeout_ms, flags);

	if (ret)
		return ret;
	ret = gt_collect(a, timeout_ms + GT_MARGIN_MS);
	if (ret) {
		diag("actor %s (pid %d): no answer to op %d: %s", a->comm,
		     (int)a->pid, op, strerror(-ret));
		return GT_HUNG;
	}
	return a->res->ret;
}

int gt_submit1(struct gt_actor *a, enum gt_op op, unsigned int fd,
	       uint32_t rank, uint64_t id, unsigned int mode,
	       unsigned int timeout_ms, unsigned int flags)
{
	struct ordlock_key k = ordlock_key(rank, id, mode);

	return gt_submit(a, op, fd, &k, 1, timeout_ms, flags);
}

int gt_call1(struct gt_actor *a, enum gt_op op, unsigned int fd,
	     uint32_t rank, uint64_t id, unsigned int mode,
	     unsigned int timeout_ms, unsigned int flags)
{
	struct ordlock_key k = ordlock_key(rank, id, mode);

	return gt_call(a, op, fd, &k, 1, timeout_ms, flags);
}

int gt_blocked(struct gt_actor *a, unsigned long request)
{
	return wait_blocked_ioctl(a->pid, request, 0);
}

int gt_actor_stop(struct gt_actor *a)
{
	int status;

	if (a->busy && gt_collect(a, 5000)) {
		diag("actor %s (pid %d) still busy: killing it", a->comm,
		     (int)a->pid);
		child_kill(a->pid, SIGKILL);
		status = -1;
	} else {
		a->busy = 0;
		a->shm->op = GT_OP_EXIT;
		if (write(a->cmd_wr, "x", 1) != 1)
			diag("actor %s: cannot write its command pipe", a->comm);
		status = child_wait(a->pid, 30);
	}
	close(a->cmd_wr);
	close(a->res_rd);
	shm_free(a->shm, sizeof(*a->shm));
	free(a);
	return status;
}

/* A process of two threads (struct gt_twothr); its acquires wait 30 s at most */
#define GT_TWOTHR_MS	30000

struct gt_twothr_thread {
	struct gt_twothr *t;
	struct ordlock *ol2;
};

static void *gt_twothr_thread2(void *arg)
{
	struct gt_twothr_thread *th = arg;

	th->t->tid2 = (pid_t)syscall(SYS_gettid);
	th->t->ret2 = ordlock_acquire(th->ol2, &th->t->k2, 1, GT_TWOTHR_MS, 0, NULL);
	return NULL;
}

static int gt_twothr_main(void *arg)
{
	struct gt_twothr *t = arg;
	struct gt_twothr_thread th = { .t = t };
	struct ordlock *ol1;
	uint64_t deadline;
	pthread_t thread;

	prctl(PR_SET_NAME, t->comm, 0, 0, 0);
	ol1 = ordlock_open(t->d1);
	th.ol2 = ordlock_open(t->d2);
	if (!ol1 || !th.ol2) {
		t->error = -errno;
		pbarrier_break(t->held);
		return 1;
	}
	t->ret1 = ordlock_acquire(ol1, &t->k1, 1, GT_TWOTHR_MS, 0, NULL);
	if (pbarrier_wait(t->held) || t->ret1)
		return 2;
	if (pbarrier_wait(t->go))
		return 3;
	if (pthread_create(&thread, NULL, gt_twothr_thread2, &th)) {
		t->error = -EAGAIN;
		pbarrier_break(t->blocked);
		return 4;
	}
	deadline = now_ms() + 10000;
	while (!__atomic_load_n(&t->tid2, __ATOMIC_SEQ_CST) && now_ms() < deadline)
		sched_yield();
	t->blocked_ret = wait_blocked_ioctl(t->tid2, ORDLOCK_IOC_ACQUIRE, 0);
	if (pbarrier_wait(t->blocked) || pbarrier_wait(t->release)) {
		ordlock_release_all(ol1);
		pthread_join(thread, NULL);
		return 5;
	}
	/* thread 1 is awake: it lets go, and the waits unwind */
	ordlock_release_all(ol1);
	pthread_join(thread, NULL);
	ordlock_close(th.ol2);
	ordlock_close(ol1);
	return 0;
}

struct gt_twothr *gt_twothr_start(const char *comm, const char *d1,
				  struct ordlock_key k1, const char *d2,
				  struct ordlock_key k2)
{
	struct gt_twothr *t = shm_alloc(sizeof(*t));

	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	snprintf(t->d1, sizeof(t->d1), "%s", d1);
	snprintf(t->d2, sizeof(t->d2), "%s", d2);
	t->k1 = k1;
	t->k2 = k2;
	t->held = pbarrier_new(2);
	t->go = pbarrier_new(2);
	t->blocked = pbarrier_new(2);
	t->release = pbarrier_new(2);
	t->ret2 = 1;
	t->pid = child_start(gt_twothr_main, t);
	return t;
}

void gt_twothr_free(struct gt_twothr *t)
{
	pbarrier_free(t->held);
	pbarrier_free(t->go);
	pbarrier_free(t->blocked);
	pbarrier_free(t->release);
	shm_free(t, sizeof(*t));
}

const char *gt_step_str(const struct ordlock_cycle_step *s)
{
	static char buf[256];

	snprintf(buf, sizeof(buf),
		 "owner %llu pid %u (%.16s) waits for %s %u:%llu, %s edge, blocker %s",
		 (unsigned long long)s->owner_id, s->pid, s->comm,
		 ordlock_mode_name(s->key.mode), s->key.rank,
		 (unsigned long long)s->key.id,
		 s->edge == ORDLOCK_EDGE_SOFT ? "soft" :
		 s->edge == ORDLOCK_EDGE_HARD ? "hard" : "?",
		 ordlock_mode_name(s->blocker_mode));
	return buf;
}

char *gt_new_domain(char *name, const char *prefix, unsigned int policy,
		    unsigned int delay_ms)
{
	struct ordlock *ol = olt_open(NULL);
	int ret;

	snprintf(name, ORDLOCK_DOMAIN_NAME_MAX, "%s", olt_domain(prefix));
	ret = ordlock_set_policy(ol, name, policy, delay_ms);
	if (ret)
		bail_out("ordlock_set_policy(%s, %s, %u): %s", name,
			 ordlock_policy_name(policy), delay_ms, strerror(-ret));
	ordlock_close(ol);
	return name;
}

uint64_t gt_owner_id(struct ordlock *ol)
{
	struct ordlock_owner_info info;

	if (ordlock_owner_info(ol, &info))
		return 0;
	return info.owner_id;
}

/*
 * debugfs: the files are parsed by the parsers ordlockctl uses
 * (tools/common/parse.c); the records are then copied into the tests'
 * structures, keeping those of one domain.
 */

char *gt_read_file(const char *path)
{
	size_t len;
	char *buf;
	int ret = olc_read_file(path, &buf, &len);

	if (ret) {
		errno = -ret;
		return NULL;
	}
	return buf;
}

int gt_mode_parse(const char *s)
{
	return strcmp(s, "none") ? olc_mode_parse(s) : 0;
}

int gt_debugfs_parse(const char *name, gt_parser parse, void *out)
{
	char path[128], *buf;
	struct olc_perr perr;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), GT_DEBUGFS "%s", name);
	ret = olc_read_file(path, &buf, &len);
	if (ret) {
		diag("cannot read %s: %s", path, strerror(-ret));
		return ret;
	}
	ret = parse(buf, len, out, &perr);
	if (ret == -EPROTO)
		diag("%s: line %u: %s", path, perr.line, perr.msg);
	else if (ret)
		diag("%s: %s", path, strerror(-ret));
	free(buf);
	return ret;
}

/* Keep a record of @rdomain when @domain is NULL or names it */
static int gt_keep(const char *domain, const char *rdomain)
{
	return !domain || !strcmp(domain, rdomain);
}

static void gt_who(const struct olc_who *w, uint64_t *id, int *pid, char *comm)
{
	*id = w->id;
	*pid = (int)w->pid;
	memcpy(comm, w->comm, ORDLOCK_COMM_LEN);
}

int gt_graph_read(const char *domain, struct gt_edge *e, int max)
{
	struct olc_edges all = { 0 };
	size_t i;
	int n = 0, ret;

	ret = gt_debugfs_parse("graph", (gt_parser)olc_parse_graph, &all);
	for (i = 0; !ret && i < all.n; i++) {
		const struct olc_edge *s = &all.v[i];
		struct gt_edge *d = &e[n];

		if (!gt_keep(domain, s->domain))
			continue;
		if (n++ >= max)
			continue;
		memset(d, 0, sizeof(*d));
		gt_who(&s->waiter, &d->waiter_id, &d->waiter_pid, d->waiter_comm);
		gt_who(&s->blocker, &d->blocker_id, &d->blocker_pid, d->blocker_comm);
		memcpy(d->domain, s->domain, sizeof(d->domain));
		d->rank = s->rank;
		d->id = s->id;
		d->mode = s->mode;
		d->blocker_mode = s->blocker_mode;
		d->edge = s->type;
		d->waited_us = s->waited_us;
	}
	olc_edges_free(&all);
	return ret ? ret : n;
}

int gt_locks_read(const char *domain, struct gt_lock *l, int max)
{
	struct olc_locks all = { 0 };
	size_t i;
	int n = 0, ret;

	ret = gt_debugfs_parse("locks", (gt_parser)olc_parse_locks, &all);
	for (i = 0; !ret && i < all.n; i++) {
		const struct olc_lock *s = &all.v[i];
		struct gt_lock *d = &l[n];

		if (!gt_keep(domain, s->domain))
			continue;
		if (n++ >= max)
			continue;
		memset(d, 0, sizeof(*d));
		memcpy(d->domain, s->domain, sizeof(d->domain));
		d->rank = s->rank;
		d->id = s->id;
		/* enum gt_role has the values of enum ordlock_role */
		d->role = (int)s->role;
		d->pos = s->pos;
		gt_who(&s->owner, &d->owner_id, &d->pid, d->comm);
		d->mode = s->mode;
		d->value = s->value;
	}
	olc_locks_free(&all);
	return ret ? ret : n;
}

int gt_owners_read(const char *domain, struct gt_owner *o, int max)
{
	struct olc_owners all = { 0 };
	size_t i;
	int n = 0, ret;

	ret = gt_debugfs_parse("owners", (gt_parser)olc_parse_owners, &all);
	for (i = 0; !ret && i < all.n; i++) {
		const struct olc_owner *s = &all.v[i];
		struct gt_owner *d = &o[n];

		if (!gt_keep(domain, s->domain))
			continue;
		if (n++ >= max)
			continue;
		memset(d, 0, sizeof(*d));
		gt_who(&s->who, &d->id, &d->pid, d->comm);
		memcpy(d->domain, s->domain, sizeof(d->domain));
		snprintf(d->kind, sizeof(d->kind), "%s", olc_kind_str(s->kind));
		d->held = s->held;
		d->wmode = s->wmode;
		d->wrank = s->wrank;
		d->wid = s->wid;
		d->waited_us = s->waited_us;
	}
	olc_owners_free(&all);
	return ret ? ret : n;
}

int gt_deadlocks_read(const char *domain, struct gt_deadlock *d, int max)
{
	struct olc_deadlocks all = { 0 };
	size_t i;
	unsigned int j;
	int n = 0, ret;

	ret = gt_debugfs_parse("deadlocks", (gt_parser)olc_parse_deadlocks, &all);
	for (i = 0; !ret && i < all.n; i++) {
		const struct olc_deadlock *s = &all.v[i];
		struct gt_deadlock *t = &d[n];

		if (!gt_keep(domain, s->domain))
			continue;
		if (n++ >= max)
			continue;
		if (s->nsteps > GT_DL_STEPS) {
			diag("deadlock %llu: %u steps, more than %d",
			     (unsigned long long)s->seq, s->nsteps, GT_DL_STEPS);
			ret = -EPROTO;
			break;
		}
		memset(t, 0, sizeof(*t));
		t->seq = s->seq;
		t->time_ns = s->time_ns;
		memcpy(t->domain, s->domain, sizeof(t->domain));
		t->len = s->len;
		t->nsteps = s->nsteps;
		for (j = 0; j < s->nsteps; j++) {
			const struct olc_dstep *ss = &s->steps[j];
			struct gt_dstep *ts = &t->steps[j];

			gt_who(&ss->who, &ts->owner_id, &ts->pid, ts->comm);
			ts->mode = ss->mode;
			ts->rank = ss->rank;
			ts->id = ss->id;
			ts->edge = ss->edge;
			ts->blocker_mode = ss->blocker_mode;
			memcpy(ts->domain, ss->domain, sizeof(ts->domain));
		}
	}
	olc_deadlocks_free(&all);
	return ret ? ret : n;
}

/* The domain's counters, detect_delay_ms first, as the file has them */
static void gt_stats_copy(const struct olc_domain_stats *s, struct gt_stats *d)
{
	unsigned int i;

	memset(d, 0, sizeof(*d));
	snprintf(d->policy, sizeof(d->policy), "%s", s->policy);
	if (s->have_delay) {
		strcpy(d->v[d->n].name, "detect_delay_ms");
		d->v[d->n++].value = s->detect_delay_ms;
	}
	for (i = 0; i < s->n && d->n < GT_MAX_STATS; i++) {
		snprintf(d->v[d->n].name, sizeof(d->v[d->n].name), "%s",
			 s->v[i].name);
		d->v[d->n++].value = (long long)s->v[i].value;
	}
	d->have_wait = s->have_hist;
	d->wait_buckets = s->nhist;
	for (i = 0; i < s->nhist; i++)
		d->wait_total += (long long)s->hist[i].value;
}

int gt_stats_read(const char *domain, struct gt_stats *s)
{
	struct olc_stats all = { 0 };
	size_t i;
	int ret;

	ret = gt_debugfs_parse("stats", (gt_parser)olc_parse_stats, &all);
	if (!ret)
		ret = -ENOENT;
	for (i = 0; ret == -ENOENT && i < all.n; i++) {
		if (!strcmp(all.v[i].name, domain)) {
			gt_stats_copy(&all.v[i], s);
			ret = 0;
		}
	}
	olc_stats_free(&all);
	return ret;
}

long long gt_stat(const struct gt_stats *s, const char *name)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return s->v[i].value;
	return -1;
}

long long gt_stat_of(const char *domain, const char *name)
{
	struct gt_stats st;

	if (gt_stats_read(domain, &st))
		return -1;
	return gt_stat(&st, name);
}

void gt_gauges_zero(const char *domain, const char *what)
{
	struct gt_stats st;

	if (gt_stats_read(domain, &st)) {
		ok(0, "%s: the domain's stats line is there", what);
		return;
	}
	ok(gt_stat(&st, "owners") == 0 && gt_stat(&st, "resources") == 0 &&
	   gt_stat(&st, "waiters") == 0,
	   "%s: nothing left: owners %lld resources %lld waiters %lld", what,
	   gt_stat(&st, "owners"), gt_stat(&st, "resources"), gt_stat(&st, "waiters"));
}

int gt_wait_edges(const char *domain, int n, unsigned int timeout_ms)
{
	uint64_t deadline = now_ms() + timeout_ms;
	struct gt_edge e[8];
	int got;

	for (;;) {
		got = gt_graph_read(domain, e, 8);
		if (got == n)
			return 0;
		if (now_ms() >= deadline)
			break;
		sleep_ms(5);
	}
	diag("graph of %s: %d edges after %u ms, want %d", domain, got,
	     timeout_ms, n);
	return -ETIMEDOUT;
}

/* The kernel log */

int gt_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_END) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

/*
 * One record of /dev/kmsg: "prio,seq,ts_us,flags;message\n" and maybe
 * continuation lines. Returns the message (NUL-terminated in @buf) and its
 * timestamp, or NULL when @buf holds no record.
 */
static char *gt_kmsg_parse(char *buf, unsigned long long *ts)
{
	unsigned int prio;
	unsigned long long seq;
	char *msg = strchr(buf, ';'), *nl;

	if (!msg || sscanf(buf, "%u,%llu,%llu", &prio, &seq, ts) != 3)
		return NULL;
	msg++;
	nl = strchr(msg, '\n');
	if (nl)
		*nl = '\0';
	return msg;
}

int gt_kmsg_find(int fd, const char *needle, char *out, size_t len,
		 unsigned int timeout_ms)
{
	uint64_t deadline = now_ms() + timeout_ms;
	char buf[8192];

	for (;;) {
		unsigned long long ts;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		char *msg;

		if (n < 0) {
			if (errno == EPIPE || errno == EINTR)
				continue;	/* records were overwritten */
			if (errno != EAGAIN)
				return 0;
			if (now_ms() >= deadline)
				return 0;
			sleep_ms(10);
			continue;
		}
		buf[n] = '\0';
		msg = gt_kmsg_parse(buf, &ts);
		if (msg && strstr(msg, needle)) {
			if (out)
				snprintf(out, len, "%s", msg);
			return 1;
		}
	}
}

/* The burst and interval of the deadlock reports' rate limit (graph.c) */
#define GT_LOG_BURST		10
#define GT_LOG_INTERVAL_MS	5000

void gt_kmsg_settle(void)
{
	unsigned long long ts, mark_ts = 0, recent[64];
	unsigned int nrecent = 0, i, count = 0;
	char buf[8192], mark[64];
	int fd, wfd;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	wfd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || wfd < 0) {
		diag("/dev/kmsg: %s; waiting out the rate limit",
		     strerror(errno));
		if (fd >= 0)
			close(fd);
		if (wfd >= 0)
			close(wfd);
		sleep_ms(GT_LOG_INTERVAL_MS + 1000);
		return;
	}
	/*
	 * A record of ours tells the time in the log's clock. It must end
	 * with a newline: readers do not see a record left open for a
	 * continuation.
	 */
	snprintf(mark, sizeof(mark), "ordlock-test: clock mark %d-%llu",
		 (int)getpid(), (unsigned long long)now_ms());
	snprintf(buf, sizeof(buf), "%s\n", mark);
	if (write(wfd, buf, strlen(buf)) < 0)
		diag("writing /dev/kmsg: %s", strerror(errno));
	close(wfd);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		char *msg;

		if (n < 0) {
			if (errno == EPIPE || errno == EINTR)
				continue;
			break;
		}
		buf[n] = '\0';
		msg = gt_kmsg_parse(buf, &ts);
		if (!msg)
			continue;
		if (strstr(msg, mark)) {
			mark_ts = ts;
			break;
		}
		if (strstr(msg, "ordlock: deadlock in domain")) {
			recent[nrecent % 64] = ts;
			nrecent++;
		}
	}
	close(fd);
	if (!mark_ts) {
		diag("clock mark not found in /dev/kmsg; waiting out the rate limit");
		sleep_ms(GT_LOG_INTERVAL_MS + 1000);
		return;
	}
	for (i = 0; i < nrecent && i < 64; i++)
		if (recent[i] + (GT_LOG_INTERVAL_MS + 1000) * 1000ULL > mark_ts)
			count++;
	if (count >= GT_LOG_BURST - 1) {
		diag("%u deadlock reports in the last %d ms: waiting out the rate limit",
		     count, GT_LOG_INTERVAL_MS + 1000);
		sleep_ms(GT_LOG_INTERVAL_MS + 1000);
	}
}
