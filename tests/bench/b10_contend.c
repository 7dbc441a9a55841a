// SPDX-License-Identifier: GPL-2.0
/*
 * b10_contend: row 10 of the benchmark table, locks under contention
 * (issue 40). Wall clock, not instructions.
 *
 * Two workloads, each a row per parameter:
 *  - one key: P = 2 and 4 processes take one exclusive lock, add one to a
 *    shared counter and release, as fast as they can;
 *  - transfers: P processes each move one unit between two random
 *    distinct accounts of N (N = 8, P = 2 and 4; N = 64, P = 4), holding
 *    the locks of both accounts.
 * The implementations: ordlock's kernel path (a domain without the fast
 * path), ordlock's fast path (a domain with it on; libordlock uses it by
 * itself), both by ordlock_acquire() of the key(s), in one request, and
 * ordlock_release_all(); flock(LOCK_EX) of one file (transfers: of the
 * two accounts' files in sorted order); semop() P and V on a set of one
 * semaphore (transfers: a set of N, both semaphores in one call; no
 * SEM_UNDO); robust pthread mutexes (PTHREAD_PROCESS_SHARED +
 * PTHREAD_MUTEX_ROBUST) in a shared mapping (transfers: in sorted order).
 *
 * Each cell: P fresh worker processes, worker i pinned to CPU i mod the
 * CPUs; a barrier (all have opened their locks); a 1 s warm-up that is
 * discarded; 2 s measured. Measured per cell: pairs (acquire + release)
 * per second of all workers; context switches per pair (voluntary +
 * involuntary from each worker's /proc status, read by the parent at the
 * start and the end of the measured 2 s); slowest/fastest worker's pairs;
 * the longest single acquire of any worker. The counter (one key) must
 * equal the pairs made and the accounts' total (transfers) must be what
 * it was: a lost update fails the cell, as does a worker's error or a
 * worker that has not finished 10 s after the end (the hang guard kills
 * the cell's workers). 3 repetitions (fewer when ORDLOCK_BENCH_REPS says
 * so), interleaving the implementations; the figures are medians of the
 * repetitions, the longest acquire the longest of all. Ratios are to
 * flock in the same run. ORDLOCK_BENCH_SCALE scales the two durations.
 * Knobs for experiments: ORDLOCK_BENCH_CONTEND_ROWS="1 2" (only these
 * rows, 1-based), ORDLOCK_BENCH_MODPARAMS="handoff_us=5000 spin_us=200"
 * (written to the module's parameters first; the figures then say so).
 *
 * Prints the CSV rows of report.py (the other figures in the note) and a
 * table per row on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "libordlock.h"

#define MAXP 4
#define MAXN 64
#define MAXREPS 3
#define BALANCE 1000L
#define ACQ_TIMEOUT_MS 30000
#define GUARD_NS (10ULL * 1000000000ULL)
#define KEY_ONE 1000	/* the one key's id; the accounts are 0..N-1 */

#define DOM_KERNEL "bench-contend-kernel"
#define DOM_FAST "bench-contend-fast"

enum kind { K_FAST, K_KERNEL, K_FLOCK, K_SEMOP, K_ROBUST, NKINDS };

static const char *const kind_name[NKINDS] = {
	"ordlock-fast", "ordlock-kernel", "flock", "semop", "robust mutex",
};

/* what a worker publishes; each on a cache line of its own */
struct wstat {
	uint64_t pairs;		/* pairs made, warm-up included */
	uint64_t maxwait;	/* longest acquire in the measured phase, ns */
	uint64_t since;		/* in an acquire since (ns), 0: not */
	int err;		/* errno of a failed call, 0: none */
	char what[64];		/* that call */
} __attribute__((aligned(64)));

/* phases of a cell */
enum { PH_SETUP, PH_WARMUP, PH_MEASURE, PH_STOP };

struct shared {
	uint32_t phase;
	uint32_t ready;
	struct wstat w[MAXP];
	long counter __attribute__((aligned(64)));
	volatile long acct[MAXN];
	pthread_mutex_t mtx[MAXN];
};

static struct shared *sh;
static const char *dir;
static int semid = -1;
static int have_fast;
static char no_fast[96];	/* why not */

/* one cell: a workload (n == 0: one key, else n accounts) and P workers */
struct cell {
	enum kind kind;
	unsigned int p;
	unsigned int n;
};

/* the result of one repetition of a cell */
struct rep {
	double rate;		/* pairs/s */
	double cs;		/* context switches per pair */
	double fair;		/* slowest / fastest worker's pairs */
	uint64_t maxwait;	/* ns */
};

/* --- a worker's locks ----------------------------------------------------- */

struct locks {
	struct ordlock *ol;
	int fd[MAXN];
	unsigned int n;		/* 0: one key */
};

static void fail(struct wstat *w, int err, const char *what)
{
	w->err = err ? err : EIO;
	snprintf(w->what, sizeof(w->what), "%s", what);
}

static int locks_open(struct locks *l, const struct cell *c, struct wstat *w)
{
	char path[300];
	unsigned int i, nf = c->n ? c->n : 1;

	memset(l, 0, sizeof(*l));
	l->n = c->n;
	switch (c->kind) {
	case K_FAST:
	case K_KERNEL:
		l->ol = ordlock_open(c->kind == K_FAST ? DOM_FAST : DOM_KERNEL);
		if (!l->ol) {
			fail(w, errno, "ordlock_open");
			return -1;
		}
		break;
	case K_FLOCK:
		for (i = 0; i < nf; i++) {
			snprintf(path, sizeof(path), "%s/%u.lock", dir, i);
			l->fd[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
			if (l->fd[i] < 0) {
				fail(w, errno, "open");
				return -1;
			}
		}
		break;
	default:
		break;
	}
	return 0;
}

/* take the lock of account @a and, when @b >= 0, of @b (a < b); 0 or -errno */
static int locks_take(struct locks *l, enum kind kind, int a, int b)
{
	struct ordlock_key k[2];
	struct sembuf sb[2] = { { .sem_num = a, .sem_op = -1 },
				{ .sem_num = b, .sem_op = -1 } };
	int r;

	switch (kind) {
	case K_FAST:
	case K_KERNEL:
		k[0] = ordlock_key(1, b < 0 ? KEY_ONE : a, ORDLOCK_MODE_EXCLUSIVE);
		k[1] = ordlock_key(1, b, ORDLOCK_MODE_EXCLUSIVE);
		return ordlock_acquire(l->ol, k, b < 0 ? 1 : 2, ACQ_TIMEOUT_MS, 0, NULL);
	case K_FLOCK:
		if (flock(l->fd[a], LOCK_EX))
			return -errno;
		if (b >= 0 && flock(l->fd[b], LOCK_EX)) {
			r = -errno;
			flock(l->fd[a], LOCK_UN);
			return r;
		}
		return 0;
	case K_SEMOP:
		return semop(semid, sb, b < 0 ? 1 : 2) ? -errno : 0;
	case K_ROBUST:
		r = pthread_mutex_lock(&sh->mtx[a]);
		if (r)
			return -r;
		if (b >= 0) {
			r = pthread_mutex_lock(&sh->mtx[b]);
			if (r) {
				pthread_mutex_unlock(&sh->mtx[a]);
				return -r;
			}
		}
		return 0;
	default:
		return -EINVAL;
	}
}

static int locks_drop(struct locks *l, enum kind kind, int a, int b)
{
	struct sembuf sb[2] = { { .sem_num = a, .sem_op = 1 },
				{ .sem_num = b, .sem_op = 1 } };
	int r = 0;

	switch (kind) {
	case K_FAST:
	case K_KERNEL:
		return ordlock_release_all(l->ol);
	case K_FLOCK:
		if (b >= 0 && flock(l->fd[b], LOCK_UN))
			r = -errno;
		if (flock(l->fd[a], LOCK_UN))
			r = -errno;
		return r;
	case K_SEMOP:
		return semop(semid, sb, b < 0 ? 1 : 2) ? -errno : 0;
	case K_ROBUST:
		if (b >= 0)
			r = -pthread_mutex_unlock(&sh->mtx[b]);
		return r ? r : -pthread_mutex_unlock(&sh->mtx[a]);
	default:
		return -EINVAL;
	}
}

/* --- a worker ---------------------------------------------------------------- */

static uint32_t phase(void)
{
	return __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
}

static int worker(unsigned int i, const struct cell *c)
{
	struct wstat *w = &sh->w[i];
	struct locks l;
	uint64_t rnd = 0x9e3779b97f4a7c15ULL * (i + 1) ^ (uint64_t)getpid();
	uint64_t pairs = 0, t0, t1;
	int a = 0, b = -1, r;

	bench_pin(i);
	if (locks_open(&l, c, w))
		return 1;
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_ACQ_REL);
	while (phase() == PH_SETUP)
		sched_yield();
	while (phase() != PH_STOP) {
		if (c->n) {
			/* two distinct accounts, the smaller first */
			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			a = (int)(rnd % c->n);
			b = (int)((rnd >> 32) % (c->n - 1));
			if (b >= a)
				b++;
			if (b < a) {
				r = a;
				a = b;
				b = r;
			}
		}
		t0 = now_ns();
		__atomic_store_n(&w->since, t0, __ATOMIC_RELAXED);
		r = locks_take(&l, c->kind, a, b);
		t1 = now_ns();
		__atomic_store_n(&w->since, 0, __ATOMIC_RELAXED);
		if (r) {
			fail(w, -r, "acquire");
			return 1;
		}
		if (t1 - t0 > w->maxwait && phase() == PH_MEASURE)
			w->maxwait = t1 - t0;
		if (c->n) {
			/* two read-modify-writes a lost update shows in the total */
			sh->acct[a] = sh->acct[a] - 1;
			sh->acct[b] = sh->acct[b] + 1;
		} else {
			sh->counter = sh->counter + 1;
		}
		r = locks_drop(&l, c->kind, a, b);
		if (r) {
			fail(w, -r, "release");
			return 1;
		}
		__atomic_store_n(&w->pairs, ++pairs, __ATOMIC_RELAXED);
	}
	return 0;
}

/* --- the parent ---------------------------------------------------------------- */

/* voluntary + involuntary context switches of process @pid so far */
static uint64_t ctxt_of(pid_t pid)
{
	char path[64], buf[256];
	unsigned long v;
	uint64_t sum = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "voluntary_ctxt_switches: %lu", &v) == 1 ||
		    sscanf(buf, "nonvoluntary_ctxt_switches: %lu", &v) == 1)
			sum += v;
	fclose(f);
	return sum;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL,
			       .tv_nsec = ns % 1000000000ULL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* fresh locks and accounts for a cell */
static void cell_init(const struct cell *c)
{
	pthread_mutexattr_t ma;
	unsigned short one[MAXN];
	unsigned int i, nl = c->n ? c->n : 1;

	memset(sh, 0, sizeof(*sh));
	for (i = 0; i < MAXN; i++)
		sh->acct[i] = BALANCE;
	if (c->kind == K_ROBUST) {
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
		pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
		for (i = 0; i < nl; i++)
			if (pthread_mutex_init(&sh->mtx[i], &ma))
				bench_die("pthread_mutex_init failed");
		pthread_mutexattr_destroy(&ma);
	}
	if (c->kind == K_SEMOP) {
		semid = semget(IPC_PRIVATE, (int)nl, IPC_CREAT | 0600);
		if (semid < 0)
			bench_die("semget: %s", strerror(errno));
		for (i = 0; i < nl; i++)
			one[i] = 1;
		if (semctl(semid, 0, SETALL, one))
			bench_die("semctl SETALL: %s", strerror(errno));
	}
}

static void cell_fini(const struct cell *c)
{
	if (c->kind == K_SEMOP && semid >= 0) {
		semctl(semid, 0, IPC_RMID);
		semid = -1;
	}
}

static void kill_all(const pid_t *pid, int *alive, unsigned int p)
{
	unsigned int i;

	for (i = 0; i < p; i++)
		if (alive[i]) {
			kill(pid[i], SIGKILL);
			waitpid(pid[i], NULL, 0);
			alive[i] = 0;
		}
}

/* reap the workers that have ended; returns how many still run */
static unsigned int reap(const pid_t *pid, int *alive, int *status, unsigned int p)
{
	unsigned int i, left = 0;

	for (i = 0; i < p; i++) {
		if (alive[i] && waitpid(pid[i], &status[i], WNOHANG) == pid[i])
			alive[i] = 0;
		left += alive[i];
	}
	return left;
}

/*
 * run_rep() - one repetition of cell @c; 0 and @out, or -1 and the reason
 * in @why
 */
static int run_rep(const struct cell *c, struct rep *out, char *why, size_t len)
{
	uint64_t warm = bench_n(1000, 100) * 1000000ULL;
	uint64_t meas = bench_n(2000, 200) * 1000000ULL;
	uint64_t p0[MAXP], p1[MAXP], cs0[MAXP], cs1[MAXP];
	uint64_t t0, t1, deadline, tot = 0, cs = 0, mn = UINT64_MAX, mx = 0, now;
	pid_t pid[MAXP];
	int alive[MAXP] = { 0 }, status[MAXP] = { 0 };
	unsigned int i;
	long total;

	cell_init(c);
	for (i = 0; i < c->p; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			bench_die("fork: %s", strerror(errno));
		if (pid[i] == 0)
			_exit(worker(i, c));
		alive[i] = 1;
	}
	/* the barrier: every worker has its locks */
	deadline = now_ns() + GUARD_NS;
	while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < c->p) {
		if (reap(pid, alive, status, c->p) < c->p || now_ns() > deadline) {
			kill_all(pid, alive, c->p);
			for (i = 0; i < c->p; i++)
				if (sh->w[i].err)
					break;
			if (i < c->p)
				snprintf(why, len, "worker %u: %s: %s", i,
					 sh->w[i].what, strerror(sh->w[i].err));
			else
				snprintf(why, len, "the workers did not start");
			cell_fini(c);
			return -1;
		}
		sleep_ns(1000000);
	}
	__atomic_store_n(&sh->phase, PH_WARMUP, __ATOMIC_RELEASE);
	sleep_ns(warm);
	for (i = 0; i < c->p; i++)
		cs0[i] = ctxt_of(pid[i]);
	for (i = 0; i < c->p; i++)
		p0[i] = __atomic_load_n(&sh->w[i].pairs, __ATOMIC_RELAXED);
	t0 = now_ns();
	__atomic_store_n(&sh->phase, PH_MEASURE, __ATOMIC_RELEASE);
	sleep_ns(meas);
	__atomic_store_n(&sh->phase, PH_STOP, __ATOMIC_RELEASE);
	t1 = now_ns();
	for (i = 0; i < c->p; i++)
		p1[i] = __atomic_load_n(&sh->w[i].pairs, __ATOMIC_RELAXED);
	for (i = 0; i < c->p; i++)
		cs1[i] = ctxt_of(pid[i]);

	/* the hang guard */
	deadline = t1 + GUARD_NS;
	while (reap(pid, alive, status, c->p)) {
		now = now_ns();
		if (now > deadline) {
			/* name a worker still in an acquire, else any not done */
			for (i = 0; i < c->p && !(alive[i] && sh->w[i].since); i++)
				;
			for (i = i < c->p ? i : 0; i < c->p && !alive[i]; i++)
				;
			snprintf(why, len,
				 "hung: worker %u not done %llu s after the end (%s%.1f s; %llu pairs measured)",
				 i, (unsigned long long)(GUARD_NS / 1000000000ULL),
				 sh->w[i].since ? "in an acquire for " : "not in an acquire; ",
				 sh->w[i].since ? (now - sh->w[i].since) / 1e9 : 0.0,
				 (unsigned long long)(p1[i] - p0[i]));
			kill_all(pid, alive, c->p);
			cell_fini(c);
			return -1;
		}
		sleep_ns(10000000);
	}
	cell_fini(c);
	for (i = 0; i < c->p; i++) {
		if (sh->w[i].err) {
			snprintf(why, len, "worker %u: %s: %s", i, sh->w[i].what,
				 strerror(sh->w[i].err));
			return -1;
		}
		if (!WIFEXITED(status[i]) || WEXITSTATUS(status[i])) {
			snprintf(why, len, "worker %u ended with status 0x%x", i, status[i]);
			return -1;
		}
	}
	for (i = 0; i < c->p; i++) {
		uint64_t d = p1[i] - p0[i];

		tot += d;
		cs += cs1[i] - cs0[i];
		mn = d < mn ? d : mn;
		mx = d > mx ? d : mx;
		if (sh->w[i].maxwait > out->maxwait)
			out->maxwait = sh->w[i].maxwait;
	}
	if (c->n) {
		for (total = 0, i = 0; i < c->n; i++)
			total += sh->acct[i];
		if (total != (long)c->n * BALANCE) {
			snprintf(why, len, "lost update: the accounts' total is %ld, not %ld",
				 total, (long)c->n * BALANCE);
			return -1;
		}
	} else {
		for (i = 0, total = 0; i < c->p; i++)
			total += (long)sh->w[i].pairs;
		if (sh->counter != total) {
			snprintf(why, len, "lost update: the counter is %ld after %ld pairs",
				 sh->counter, total);
			return -1;
		}
	}
	out->rate = tot / ((t1 - t0) / 1e9);
	out->cs = tot ? (double)cs / tot : 0;
	out->fair = mx ? (double)mn / mx : 0;
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_d(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* a row of the table: a workload, P, and every implementation's cell */
struct row {
	const char *measure;
	char param[32];
	unsigned int p, n;
	struct rep r[NKINDS][MAXREPS];
	unsigned int done[NKINDS];	/* repetitions made */
	char why[NKINDS][160];		/* why the cell failed, "" if not */
};

static void run_row(struct row *row, unsigned int reps)
{
	struct cell c = { .p = row->p, .n = row->n };
	unsigned int rep, k;

	for (rep = 0; rep < reps; rep++) {
		for (k = 0; k < NKINDS; k++) {
			/* start each repetition with another implementation */
			c.kind = (enum kind)((k + rep) % NKINDS);
			if (row->why[c.kind][0])
				continue;
			if (c.kind == K_FAST && !have_fast) {
				snprintf(row->why[c.kind], sizeof(row->why[0]), "%s", no_fast);
				continue;
			}
			if (run_rep(&c, &row->r[c.kind][rep], row->why[c.kind],
				    sizeof(row->why[0]))) {
				bench_log("%s %s %s: FAILED: %s", row->measure, row->param,
					  kind_name[c.kind], row->why[c.kind]);
				continue;
			}
			row->done[c.kind]++;
		}
	}
}

static void report_row(struct row *row)
{
	struct samples s;
	double rate[NKINDS] = { 0 }, v[MAXREPS];
	double cs, fair;
	uint64_t maxwait;
	unsigned int k, i, n;
	char note[160];

	for (k = 0; k < NKINDS; k++) {
		n = row->done[k];
		if (row->why[k][0] || !n)
			continue;
		for (i = 0; i < n; i++)
			v[i] = row->r[k][i].rate;
		rate[k] = median_d(v, n);
	}
	bench_log("%s, %s: pairs/s, x flock, context switches per pair, slowest/fastest worker, longest acquire",
		  row->measure, row->param);
	for (k = 0; k < NKINDS; k++) {
		const char *role = k <= K_KERNEL ? "ordlock" : "peer";

		n = row->done[k];
		if (row->why[k][0] || !n) {
			bench_log("  %-15s FAILED: %s", kind_name[k],
				  row->why[k][0] ? row->why[k] : "not run");
			bench_emit_missing("10", row->measure, row->param, kind_name[k],
					   role, "ops/s", row->why[k]);
			continue;
		}
		for (i = 0; i < n; i++)
			v[i] = row->r[k][i].cs;
		cs = median_d(v, n);
		for (i = 0; i < n; i++)
			v[i] = row->r[k][i].fair;
		fair = median_d(v, n);
		for (maxwait = 0, i = 0; i < n; i++)
			if (row->r[k][i].maxwait > maxwait)
				maxwait = row->r[k][i].maxwait;
		bench_log("  %-15s %10.0f  %5.2fx  %5.2f cs/pair  %4.2f  %8.2f ms",
			  kind_name[k], rate[k],
			  rate[K_FLOCK] ? rate[k] / rate[K_FLOCK] : 0.0,
			  cs, fair, maxwait / 1e6);
		snprintf(note, sizeof(note), "cs/pair %.2f; slow/fast %.2f; longest acquire %.2fms",
			 cs, fair, maxwait / 1e6);
		samples_init(&s, n);
		for (i = 0; i < n; i++)
			samples_add(&s, (uint64_t)(row->r[k][i].rate + 0.5));
		bench_emit("10", row->measure, row->param, kind_name[k], role, "ops/s",
			   &s, note);
		samples_free(&s);
	}
}

/* turn the fast path of DOM_FAST on; 0, or -1 when the module cannot */
static int fast_on(void)
{
	struct ordlock_domain_config cfg;
	struct ordlock *adm = ordlock_open(NULL);
	int r;

	if (!adm) {
		snprintf(no_fast, sizeof(no_fast), "no fast path: ordlock_open: %s",
			 strerror(errno));
		return -1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = ORDLOCK_DOMAIN_SET_FASTPATH;
	cfg.fastpath = 1;
	cfg.fastpath_uid = getuid();
	r = ordlock_domain_config(adm, DOM_FAST, &cfg);
	ordlock_close(adm);
	if (r)
		snprintf(no_fast, sizeof(no_fast),
			 "no fast path: DOMAIN_CONFIG of %s: %s", DOM_FAST, strerror(-r));
	return r ? -1 : 0;
}

/* "1 2" -> " 1 2 ", for strstr() of " N " */
static const char *only_sp(const char *only)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), " %s ", only);
	return buf;
}

/* ORDLOCK_BENCH_MODPARAMS: "name=value ..." to /sys/module/ordlock/parameters */
static void modparams(const char *spec)
{
	char buf[256], path[300], *tok, *save = NULL, *eq;
	FILE *f;

	if (!spec || !*spec)
		return;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		eq = strchr(tok, '=');
		if (!eq)
			bench_die("ORDLOCK_BENCH_MODPARAMS: %s: not name=value", tok);
		*eq = 0;
		snprintf(path, sizeof(path), "/sys/module/ordlock/parameters/%s", tok);
		f = fopen(path, "w");
		if (!f || fprintf(f, "%s\n", eq + 1) < 0 || fclose(f))
			bench_die("%s: %s", path, strerror(errno));
		bench_log("module parameter %s=%s", tok, eq + 1);
	}
}

int main(void)
{
	static struct row rows[] = {
		{ .measure = "contended 1 key: pairs/s", .p = 2 },
		{ .measure = "contended 1 key: pairs/s", .p = 4 },
		{ .measure = "transfers 2 of N accounts: pairs/s", .p = 2, .n = 8 },
		{ .measure = "transfers 2 of N accounts: pairs/s", .p = 4, .n = 8 },
		{ .measure = "transfers 2 of N accounts: pairs/s", .p = 4, .n = 64 },
	};
	unsigned int reps = bench_reps() < MAXREPS ? bench_reps() : MAXREPS;
	unsigned int i;
	const char *only;
	char path[300];
	int fd;

	sh = shm_alloc(sizeof(*sh));
	dir = bench_tmpdir();
	for (i = 0; i < MAXN; i++) {
		snprintf(path, sizeof(path), "%s/%u.lock", dir, i);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			bench_die("open %s: %s", path, strerror(errno));
		close(fd);
	}
	modparams(getenv("ORDLOCK_BENCH_MODPARAMS"));
	only = getenv("ORDLOCK_BENCH_CONTEND_ROWS");
	have_fast = !fast_on();
	bench_log("%d CPUs, %u repetitions of 1 s warm-up + %lu ms measured per cell%s%s",
		  bench_ncpus(), reps, bench_n(2000, 200),
		  have_fast ? "" : "; ", no_fast);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		snprintf(path, sizeof(path), " %u ", i + 1);
		if (only && *only && !strstr(only_sp(only), path))
			continue;
		if (rows[i].n)
			snprintf(rows[i].param, sizeof(rows[i].param), "N=%u P=%u",
				 rows[i].n, rows[i].p);
		else
			snprintf(rows[i].param, sizeof(rows[i].param), "P=%u", rows[i].p);
		run_row(&rows[i], reps);
		report_row(&rows[i]);
	}
	return 0;
}
