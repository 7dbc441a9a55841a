// SPDX-License-Identifier: GPL-2.0
/* Helpers of the wait-for graph tests: see graphtest.h. */
#define _GNU_SOURCE		/* pipe2() */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "oltest.h"
#include "tap.h"

static void gt_sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Actors */

/*
 * The state an actor shares with the parent: its identity, then one
 * command and its result. The parent writes the command, then one byte to
 * the command pipe; the actor runs it, writes the result, then one byte to
 * the result pipe. The pipes order the accesses.
 */
struct gt_actor_shm {
	char comm[16];
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
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
		ols[i] = ordlock_open(s->domain[0] ? s->domain : NULL);
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
	if (domain)
		snprintf(a->shm->domain, sizeof(a->shm->domain), "%s", domain);
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

/* debugfs */

char *gt_read_file(const char *path)
{
	size_t size = 65536, len = 0;
	char *buf = malloc(size);
	int fd, err;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	for (;;) {
		ssize_t n;

		if (size - len < 4096) {
			char *nbuf = realloc(buf, size * 2);

			if (!nbuf) {
				errno = ENOMEM;
				goto fail_close;
			}
			buf = nbuf;
			size *= 2;
		}
		n = read(fd, buf + len, size - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail_close;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;

fail_close:
	err = errno;
	close(fd);
	errno = err;
fail:
	err = errno;
	free(buf);
	errno = err;
	return NULL;
}

int gt_mode_parse(const char *s)
{
	if (!strcmp(s, "shared"))
		return ORDLOCK_MODE_SHARED;
	if (!strcmp(s, "exclusive"))
		return ORDLOCK_MODE_EXCLUSIVE;
	if (!strcmp(s, "none"))
		return 0;
	return -1;
}

#define GT_MAX_FIELDS 64

/* Split @line (modified) at single spaces; returns the number of fields */
static int gt_split(char *line, char **f, int max)
{
	int n = 0;
	char *save, *tok;

	for (tok = strtok_r(line, " ", &save); tok && n < max;
	     tok = strtok_r(NULL, " ", &save))
		f[n++] = tok;
	return tok ? max + 1 : n;
}

static int gt_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return *end || errno ? -1 : 0;
}

static int gt_parse_int(const char *s, int *v)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(s, &end, 10);
	if (!*s || *end || errno)
		return -1;
	*v = (int)x;
	return 0;
}

static int gt_parse_key(const char *s, uint32_t *rank, uint64_t *id)
{
	unsigned int r;
	unsigned long long i;
	char tail;

	if (sscanf(s, "%u:%llu%c", &r, &i, &tail) != 2)
		return -1;
	*rank = r;
	*id = i;
	return 0;
}

static int gt_copy(char *dst, size_t len, const char *src)
{
	if (strlen(src) >= len)
		return -1;
	strcpy(dst, src);
	return 0;
}

/*
 * Read debugfs file @name, check its version line, and call @parse for
 * each data line with its fields. @parse returns 1 to keep the record, 0
 * to skip it, -1 when the line does not parse.
 */
static int gt_read_records(const char *name,
			   int (*parse)(char **f, int n, void *rec,
					const char *domain),
			   void *recs, size_t recsize, int max,
			   const char *domain)
{
	char path[128], head[64], *buf, *line, *save, *copy;
	char *f[GT_MAX_FIELDS];
	int count = 0, first = 1, ret = 0;
	uint64_t scratch[64];	/* a record past @max */

	snprintf(path, sizeof(path), GT_DEBUGFS "%s", name);
	snprintf(head, sizeof(head), "# ordlock %s v1", name);
	buf = gt_read_file(path);
	if (!buf) {
		ret = -errno;
		diag("cannot read %s: %s", path, strerror(errno));
		return ret;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		void *rec = (char *)recs + (size_t)(count < max ? count : 0) *
			    recsize;
		int n, keep;

		if (first) {
			first = 0;
			if (strcmp(line, head)) {
				diag("%s: first line is \"%s\", want \"%s\"",
				     path, line, head);
				ret = -EPROTO;
				break;
			}
			continue;
		}
		if (line[0] == '#')
			continue;
		copy = strdup(line);
		n = gt_split(line, f, GT_MAX_FIELDS);
		keep = n <= GT_MAX_FIELDS ?
		       parse(f, n, count < max ? rec : scratch, domain) : -1;
		if (keep < 0) {
			diag("%s: bad line \"%s\"", path, copy ? copy : "?");
			free(copy);
			ret = -EPROTO;
			break;
		}
		free(copy);
		if (keep)
			count++;
	}
	if (first && !ret) {
		diag("%s is empty: no version line", path);
		ret = -EPROTO;
	}
	free(buf);
	return ret ? ret : count;
}

/* waiter_id waiter_pid waiter_comm domain rank:id mode blocker_id
 * blocker_pid blocker_comm blocker_mode edge waited_us */
static int gt_parse_edge(char **f, int n, void *rec, const char *domain)
{
	struct gt_edge *e = rec;
	int m, bm;

	if (n != 12)
		return -1;
	memset(e, 0, sizeof(*e));
	m = gt_mode_parse(f[5]);
	bm = gt_mode_parse(f[9]);
	if (gt_parse_u64(f[0], &e->waiter_id) ||
	    gt_parse_int(f[1], &e->waiter_pid) ||
	    gt_copy(e->waiter_comm, sizeof(e->waiter_comm), f[2]) ||
	    gt_copy(e->domain, sizeof(e->domain), f[3]) ||
	    gt_parse_key(f[4], &e->rank, &e->id) || m <= 0 ||
	    gt_parse_u64(f[6], &e->blocker_id) ||
	    gt_parse_int(f[7], &e->blocker_pid) ||
	    gt_copy(e->blocker_comm, sizeof(e->blocker_comm), f[8]) ||
	    bm <= 0 || gt_parse_u64(f[11], &e->waited_us))
		return -1;
	e->mode = m;
	e->blocker_mode = bm;
	if (!strcmp(f[10], "hard"))
		e->edge = ORDLOCK_EDGE_HARD;
	else if (!strcmp(f[10], "soft"))
		e->edge = ORDLOCK_EDGE_SOFT;
	else
		return -1;
	return !domain || !strcmp(domain, e->domain);
}

int gt_graph_read(const char *domain, struct gt_edge *e, int max)
{
	return gt_read_records("graph", gt_parse_edge, e, sizeof(*e), max,
			       domain);
}

/* domain rank:id role position owner_id pid comm mode token|waited_us */
static int gt_parse_lock(char **f, int n, void *rec, const char *domain)
{
	struct gt_lock *l = rec;
	uint64_t pos;
	int m;

	if (n != 9)
		return -1;
	memset(l, 0, sizeof(*l));
	m = gt_mode_parse(f[7]);
	if (gt_copy(l->domain, sizeof(l->domain), f[0]) ||
	    gt_parse_key(f[1], &l->rank, &l->id) ||
	    gt_parse_u64(f[3], &pos) || gt_parse_u64(f[4], &l->owner_id) ||
	    gt_parse_int(f[5], &l->pid) ||
	    gt_copy(l->comm, sizeof(l->comm), f[6]) || m <= 0 ||
	    gt_parse_u64(f[8], &l->value))
		return -1;
	l->pos = (unsigned int)pos;
	l->mode = m;
	if (!strcmp(f[2], "holder"))
		l->role = GT_HOLDER;
	else if (!strcmp(f[2], "waiter"))
		l->role = GT_WAITER;
	else if (!strcmp(f[2], "converter"))
		l->role = GT_CONVERTER;
	else
		return -1;
	return !domain || !strcmp(domain, l->domain);
}

int gt_locks_read(const char *domain, struct gt_lock *l, int max)
{
	return gt_read_records("locks", gt_parse_lock, l, sizeof(*l), max,
			       domain);
}

/* id pid comm domain kind held waiting_mode waiting_key waited_us */
static int gt_parse_owner(char **f, int n, void *rec, const char *domain)
{
	struct gt_owner *o = rec;
	uint64_t held;

	if (n != 9)
		return -1;
	memset(o, 0, sizeof(*o));
	if (gt_parse_u64(f[0], &o->id) || gt_parse_int(f[1], &o->pid) ||
	    gt_copy(o->comm, sizeof(o->comm), f[2]) ||
	    gt_copy(o->domain, sizeof(o->domain), f[3]) ||
	    gt_copy(o->kind, sizeof(o->kind), f[4]) ||
	    gt_parse_u64(f[5], &held) || gt_parse_u64(f[8], &o->waited_us))
		return -1;
	o->held = (unsigned int)held;
	if (!strcmp(f[6], "-")) {
		if (strcmp(f[7], "-") || o->waited_us)
			return -1;
	} else {
		int m = gt_mode_parse(f[6]);

		if (m <= 0 || gt_parse_key(f[7], &o->wrank, &o->wid))
			return -1;
		o->wmode = m;
	}
	return !domain || !strcmp(domain, o->domain);
}

int gt_owners_read(const char *domain, struct gt_owner *o, int max)
{
	return gt_read_records("owners", gt_parse_owner, o, sizeof(*o), max,
			       domain);
}

/*
 * deadlocks: "deadlock seq time_ns domain length", then its steps
 * "step seq index owner_id pid comm mode rank:id edge blocker_mode".
 * Steps attach to the record before them, kept or not.
 */
struct gt_dl_state {
	struct gt_deadlock *d;
	int max;
	int count;
	int cur;		/* index of the current record in d, -1: skipped */
	uint64_t cur_seq;
	int have_cur;
};

static struct gt_dl_state gt_dl;

static int gt_parse_deadlock(char **f, int n, void *rec, const char *domain)
{
	struct gt_deadlock tmp, *d;
	struct gt_dstep *s;
	uint64_t seq, idx;
	int m, bm;

	(void)rec;
	if (n == 5 && !strcmp(f[0], "deadlock")) {
		uint64_t len;

		memset(&tmp, 0, sizeof(tmp));
		if (gt_parse_u64(f[1], &tmp.seq) ||
		    gt_parse_u64(f[2], &tmp.time_ns) ||
		    gt_copy(tmp.domain, sizeof(tmp.domain), f[3]) ||
		    gt_parse_u64(f[4], &len))
			return -1;
		tmp.len = (unsigned int)len;
		gt_dl.have_cur = 1;
		gt_dl.cur_seq = tmp.seq;
		gt_dl.cur = -1;
		if (domain && strcmp(domain, tmp.domain))
			return 0;
		if (gt_dl.count < gt_dl.max) {
			gt_dl.cur = gt_dl.count;
			gt_dl.d[gt_dl.count] = tmp;
		}
		gt_dl.count++;
		return 0;
	}
	if (n != 10 || strcmp(f[0], "step") || !gt_dl.have_cur)
		return -1;
	if (gt_parse_u64(f[1], &seq) || seq != gt_dl.cur_seq ||
	    gt_parse_u64(f[2], &idx))
		return -1;
	if (gt_dl.cur < 0)
		return 0;
	d = &gt_dl.d[gt_dl.cur];
	if (idx != d->nsteps || idx >= GT_DL_STEPS)
		return -1;
	s = &d->steps[idx];
	m = gt_mode_parse(f[6]);
	bm = gt_mode_parse(f[9]);
	if (gt_parse_u64(f[3], &s->owner_id) || gt_parse_int(f[4], &s->pid) ||
	    gt_copy(s->comm, sizeof(s->comm), f[5]) || m < 0 ||
	    gt_parse_key(f[7], &s->rank, &s->id) || bm < 0)
		return -1;
	s->mode = m;
	s->blocker_mode = bm;
	if (!strcmp(f[8], "hard"))
		s->edge = ORDLOCK_EDGE_HARD;
	else if (!strcmp(f[8], "soft"))
		s->edge = ORDLOCK_EDGE_SOFT;
	else
		return -1;
	d->nsteps++;
	return 0;
}

int gt_deadlocks_read(const char *domain, struct gt_deadlock *d, int max)
{
	uint64_t scratch[1];
	int ret;

	memset(&gt_dl, 0, sizeof(gt_dl));
	gt_dl.d = d;
	gt_dl.max = max;
	gt_dl.cur = -1;
	ret = gt_read_records("deadlocks", gt_parse_deadlock, scratch, 0, 1,
			      domain);
	return ret < 0 ? ret : gt_dl.count;
}

static const char *gt_stats_domain;
static struct gt_stats *gt_stats_out;
static int gt_stats_found;

/*
 * "global owners N resources N", "domain NAME policy P detect_delay_ms N
 * (NAME N)...", "wait_us NAME lt_1 N ... more N"
 */
static int gt_parse_stats(char **f, int n, void *rec, const char *domain)
{
	struct gt_stats *s = gt_stats_out;
	int i;

	(void)rec;
	(void)domain;
	if (n >= 1 && !strcmp(f[0], "global"))
		return 0;
	if (n >= 2 && !strcmp(f[0], "wait_us")) {
		if (n % 2)
			return -1;
		if (strcmp(f[1], gt_stats_domain))
			return 0;
		s->wait_total = 0;
		s->wait_buckets = 0;
		for (i = 2; i + 1 < n; i += 2) {
			s->wait_total += strtoll(f[i + 1], NULL, 10);
			s->wait_buckets++;
		}
		s->have_wait = 1;
		return 0;
	}
	if (n < 4 || strcmp(f[0], "domain") || n % 2)
		return -1;
	if (strcmp(f[1], gt_stats_domain))
		return 0;
	memset(s, 0, sizeof(*s));
	for (i = 2; i + 1 < n; i += 2) {
		if (!strcmp(f[i], "policy")) {
			if (gt_copy(s->policy, sizeof(s->policy), f[i + 1]))
				return -1;
			continue;
		}
		if (s->n == GT_MAX_STATS ||
		    gt_copy(s->v[s->n].name, sizeof(s->v[s->n].name), f[i]))
			return -1;
		s->v[s->n].value = strtoll(f[i + 1], NULL, 10);
		s->n++;
	}
	gt_stats_found = 1;
	return 0;
}

int gt_stats_read(const char *domain, struct gt_stats *s)
{
	uint64_t scratch[1];
	int ret;

	gt_stats_domain = domain;
	gt_stats_out = s;
	gt_stats_found = 0;
	ret = gt_read_records("stats", gt_parse_stats, scratch, 0, 1, NULL);
	if (ret < 0)
		return ret;
	return gt_stats_found ? 0 : -ENOENT;
}

long long gt_stat(const struct gt_stats *s, const char *name)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return s->v[i].value;
	return -1;
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
		gt_sleep_ms(5);
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
			gt_sleep_ms(10);
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
		gt_sleep_ms(GT_LOG_INTERVAL_MS + 1000);
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
		gt_sleep_ms(GT_LOG_INTERVAL_MS + 1000);
		return;
	}
	for (i = 0; i < nrecent && i < 64; i++)
		if (recent[i] + (GT_LOG_INTERVAL_MS + 1000) * 1000ULL > mark_ts)
			count++;
	if (count >= GT_LOG_BURST - 1) {
		diag("%u deadlock reports in the last %d ms: waiting out the rate limit",
		     count, GT_LOG_INTERVAL_MS + 1000);
		gt_sleep_ms(GT_LOG_INTERVAL_MS + 1000);
	}
}
