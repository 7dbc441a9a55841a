// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the benchmarks: see benchlib.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <sys/socket.h>

#include "benchlib.h"
#include "nl.h"
#include "nlraw.h"

/* --- settings --------------------------------------------------------- */

unsigned int bench_reps(void)
{
	const char *s = getenv("ORDLOCK_BENCH_REPS");
	long v = s ? strtol(s, NULL, 10) : 7;

	return v < 1 ? 1 : v > 100 ? 100 : (unsigned int)v;
}

unsigned long bench_n(unsigned long n, unsigned long min)
{
	const char *s = getenv("ORDLOCK_BENCH_SCALE");
	double f = s ? strtod(s, NULL) : 1.0;
	unsigned long v;

	if (!(f > 0))
		f = 1.0;
	v = (unsigned long)(n * f);
	return v < min ? min : v;
}

void bench_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

void bench_die(const char *fmt, ...)
{
	va_list ap;

	fputs("FATAL: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stdout);
	exit(1);
}

/* --- clocks ----------------------------------------------------------- */

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t clock_overhead = UINT64_MAX;

uint64_t bench_clock_overhead(void)
{
	struct samples s;
	int i;

	if (clock_overhead != UINT64_MAX)
		return clock_overhead;
	samples_init(&s, 2000);
	for (i = 0; i < 2000; i++) {
		uint64_t t0 = now_ns();
		uint64_t t1 = now_ns();

		samples_add(&s, t1 - t0);
	}
	clock_overhead = samples_pct(&s, 50);
	samples_free(&s);
	return clock_overhead;
}

/* --- samples ---------------------------------------------------------- */

void samples_init(struct samples *s, size_t cap)
{
	s->n = 0;
	s->cap = cap ? cap : 16;
	s->v = malloc(s->cap * sizeof(*s->v));
	if (!s->v)
		bench_die("out of memory");
}

void samples_free(struct samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

void samples_add(struct samples *s, uint64_t v)
{
	if (s->n == s->cap) {
		s->cap *= 2;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			bench_die("out of memory");
	}
	s->v[s->n++] = v;
}

void samples_add_timed(struct samples *s, uint64_t t0, uint64_t t1)
{
	uint64_t d = t1 - t0, o = bench_clock_overhead();

	samples_add(s, d > o ? d - o : 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t samples_pct(struct samples *s, double pct)
{
	size_t i;

	if (!s->n)
		return 0;
	qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
	/* nearest rank */
	i = (size_t)(pct / 100.0 * s->n + 0.999999);
	if (i < 1)
		i = 1;
	if (i > s->n)
		i = s->n;
	return s->v[i - 1];
}

struct shsamples *shsamples_new(size_t cap)
{
	struct shsamples *s = shm_alloc(sizeof(*s) + cap * sizeof(s->v[0]));

	s->cap = cap;
	return s;
}

void shsamples_add(struct shsamples *s, uint64_t v)
{
	uint64_t i = __atomic_fetch_add(&s->n, 1, __ATOMIC_RELAXED);

	if (i < s->cap)
		s->v[i] = v;
}

void shsamples_reset(struct shsamples *s)
{
	__atomic_store_n(&s->n, 0, __ATOMIC_RELAXED);
}

void shsamples_copy(struct samples *dst, const struct shsamples *src)
{
	uint64_t i, n = src->n < src->cap ? src->n : src->cap;

	for (i = 0; i < n; i++)
		samples_add(dst, src->v[i]);
}

void shsamples_free(struct shsamples *s)
{
	shm_free(s, sizeof(*s) + s->cap * sizeof(s->v[0]));
}

void bench_interleave(struct bench_op *ops, unsigned int nops, unsigned long n,
		      unsigned int block, unsigned int rep)
{
	unsigned long done, k, b;
	unsigned int j, round = rep;

	for (done = 0; done < n; done += b, round++) {
		b = n - done < block ? n - done : block;
		for (j = 0; j < nops; j++) {
			struct bench_op *op = &ops[(j + round) % nops];

			for (k = 0; k < b; k++) {
				uint64_t t0 = now_ns();

				op->fn(op->arg);
				samples_add_timed(op->s, t0, now_ns());
			}
		}
	}
}

/* --- CSV rows ----------------------------------------------------------- */

static void csv_field(const char *s)
{
	for (; s && *s; s++)
		putchar(*s == ',' || *s == '\n' ? ';' : *s);
}

static void csv_head(const char *row, const char *measure, const char *param,
		     const char *impl, const char *role, const char *unit)
{
	const char *f[] = { row, measure, param, impl, role, unit };
	unsigned int i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		csv_field(f[i]);
		putchar(',');
	}
}

void bench_emit(const char *row, const char *measure, const char *param,
		const char *impl, const char *role, const char *unit,
		struct samples *s, const char *note)
{
	csv_head(row, measure, param, impl, role, unit);
	if (s->n) {
		uint64_t med = samples_pct(s, 50), p99 = samples_pct(s, 99);

		printf("%zu,%llu,%llu,%llu,%llu,", s->n, (unsigned long long)med,
		       (unsigned long long)p99, (unsigned long long)s->v[0],
		       (unsigned long long)s->v[s->n - 1]);
	} else {
		printf("0,,,,,");
	}
	csv_field(note);
	putchar('\n');
	fflush(stdout);
}

void bench_emit_value(const char *row, const char *measure, const char *param,
		      const char *impl, const char *role, const char *unit,
		      double value, const char *note)
{
	csv_head(row, measure, param, impl, role, unit);
	printf("1,%.6g,%.6g,%.6g,%.6g,", value, value, value, value);
	csv_field(note);
	putchar('\n');
	fflush(stdout);
}

void bench_emit_missing(const char *row, const char *measure, const char *param,
			const char *impl, const char *role, const char *unit,
			const char *note)
{
	csv_head(row, measure, param, impl, role, unit);
	printf("0,,,,,");
	csv_field(note);
	putchar('\n');
	fflush(stdout);
}

/* --- ordlock ------------------------------------------------------------ */

int ol_open(const char *domain)
{
	int fd = open(ORDLOCK_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		bench_die("open %s: %s", ORDLOCK_DEVICE, strerror(errno));
	if (domain) {
		struct ordlock_set_domain sd = { .size = sizeof(sd) };

		strncpy(sd.name, domain, sizeof(sd.name) - 1);
		if (ioctl(fd, ORDLOCK_IOC_SET_DOMAIN, &sd) < 0)
			bench_die("SET_DOMAIN %s: %s", domain, strerror(errno));
	}
	return fd;
}

int ol_acquire(int fd, const struct ordlock_key *keys, unsigned int n,
	       uint64_t timeout_ns, unsigned int flags,
	       struct ordlock_failure *f)
{
	struct ordlock_acquire a = {
		.size = sizeof(a),
		.flags = flags,
		.nkeys = n,
		.keys = (uintptr_t)keys,
		.timeout_ns = timeout_ns,
	};

	if (ioctl(fd, ORDLOCK_IOC_ACQUIRE, &a) < 0) {
		if (f)
			*f = a.failure;
		return -errno;
	}
	return 0;
}

int ol_release_all(int fd)
{
	struct ordlock_release r = {
		.size = sizeof(r),
		.flags = ORDLOCK_RELEASE_ALL,
	};

	return ioctl(fd, ORDLOCK_IOC_RELEASE, &r) < 0 ? -errno : 0;
}

int ol_c_lock(int fd, const struct ordlock_key *keys, unsigned int n,
	    uint64_t timeout_ns, unsigned int flags, struct ordlock_failure *f)
{
	struct ordlock_lock l = {
		.keys = (uintptr_t)keys,
		.nkeys = n,
		.flags = flags,
		.timeout_ns = timeout_ns,
		.failure = (uintptr_t)f,
	};

	return ioctl(fd, ORDLOCK_IOC_LOCK, &l) < 0 ? -errno : 0;
}

int ol_c_unlock_all(int fd)
{
	return ioctl(fd, ORDLOCK_IOC_UNLOCK_ALL, 0) < 0 ? -errno : 0;
}

int ol_c_unlock(int fd, const struct ordlock_key *keys, unsigned int n)
{
	struct ordlock_unlock u = { .keys = (uintptr_t)keys, .nkeys = n };

	return ioctl(fd, ORDLOCK_IOC_UNLOCK, &u) < 0 ? -errno : 0;
}

void ol_set_policy(const char *domain, unsigned int policy,
		   unsigned int detect_delay_ms)
{
	struct ordlock_domain_config c = {
		.size = sizeof(c),
		.flags = ORDLOCK_DOMAIN_SET_POLICY | ORDLOCK_DOMAIN_SET_DETECT_DELAY,
		.policy = policy,
		.detect_delay_ms = detect_delay_ms,
	};
	int fd = ol_open(NULL);

	strncpy(c.name, domain, sizeof(c.name) - 1);
	if (ioctl(fd, ORDLOCK_IOC_DOMAIN_CONFIG, &c) < 0)
		bench_die("DOMAIN_CONFIG %s: %s", domain, strerror(errno));
	close(fd);
}

int ol_bad_ioctl(int fd)
{
	return ioctl(fd, _IO(ORDLOCK_IOC_TYPE, 0x7f), 0);
}

void ol_holder_start(struct ol_holder *h, const char *domain,
		     const struct ordlock_key *keys, unsigned int n)
{
	int ready[2], go[2], err = 0;
	char c;

	if (pipe(ready) || pipe(go))
		bench_die("pipe: %s", strerror(errno));
	h->pid = fork();
	if (h->pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (!h->pid) {
		int fd, lo = go[0] < ready[1] ? go[0] : ready[1];
		int hi = go[0] < ready[1] ? ready[1] : go[0];

		/*
		 * Keep nothing else open: a copy of another holder's go pipe
		 * would keep that one from ever seeing its end.
		 */
		close_range(3, lo - 1, 0);
		close_range(lo + 1, hi - 1, 0);
		close_range(hi + 1, ~0U, 0);
		fd = ol_open(domain);
		err = ol_acquire(fd, keys, n, 0, ORDLOCK_ACQUIRE_TRY, NULL);
		if (write(ready[1], &err, sizeof(err)) != sizeof(err))
			_exit(1);
		/* until the parent closes its end (or dies) */
		while (read(go[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &err, sizeof(err)) != sizeof(err) || err)
		bench_die("holder: cannot take its keys: %s", strerror(-err));
	close(ready[0]);
	h->go = go[1];
}

void ol_holder_stop(struct ol_holder *h)
{
	int st;

	close(h->go);
	waitpid(h->pid, &st, 0);
}

#define PARAM_DIR "/sys/module/ordlock/parameters/"
#define MAX_SAVED 8

static struct {
	char name[64];
	long value;
} saved[MAX_SAVED];
static unsigned int nsaved;

long ol_param_get(const char *name)
{
	char path[256], buf[64];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = 0;
	return strtol(buf, NULL, 10);
}

static void param_write(const char *name, long value)
{
	char path[256], buf[64];
	int fd, len;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		bench_die("open %s: %s", path, strerror(errno));
	len = snprintf(buf, sizeof(buf), "%ld\n", value);
	if (write(fd, buf, len) != len)
		bench_die("write %s: %s", path, strerror(errno));
	close(fd);
}

static void param_restore(void)
{
	while (nsaved--)
		param_write(saved[nsaved].name, saved[nsaved].value);
}

void ol_param_set(const char *name, long value)
{
	unsigned int i;

	for (i = 0; i < nsaved; i++)
		if (!strcmp(saved[i].name, name))
			break;
	if (i == nsaved) {
		if (nsaved == MAX_SAVED)
			bench_die("too many parameters changed");
		snprintf(saved[i].name, sizeof(saved[i].name), "%s", name);
		saved[i].value = ol_param_get(name);
		if (saved[i].value < 0)
			bench_die("cannot read parameter %s", name);
		if (!nsaved++)
			atexit(param_restore);
	}
	param_write(name, value);
}

/* --- processes --------------------------------------------------------- */

void *shm_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bench_die("mmap %zu: %s", size, strerror(errno));
	return p;
}

void shm_free(void *p, size_t size)
{
	munmap(p, size);
}

int task_wait_state(pid_t tid, unsigned int timeout_ms)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000;
	char path[64], buf[512], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	for (;;) {
		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			len = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (len > 0) {
				buf[len] = 0;
				/* "pid (comm) S ...": the state follows the last ')' */
				p = strrchr(buf, ')');
				if (p && (p[2] == 'S' || p[2] == 'D'))
					return 0;
			}
		}
		if (now_ns() > end)
			return -ETIMEDOUT;
		usleep(200);
	}
}

void spin_until(volatile uint64_t *p, uint64_t v)
{
	unsigned int i = 0;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v) {
		__builtin_ia32_pause();
		if (!(++i % 256)) /* the one we wait for may need this CPU */
			sched_yield();
	}
}

int bench_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (int)n;
}

const char *bench_tmpdir(void)
{
	static char dir[256];
	const char *t = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/ordlock-bench.XXXXXX", t ? t : "/tmp");
	if (!mkdtemp(dir))
		bench_die("mkdtemp %s: %s", dir, strerror(errno));
	return dir;
}

void bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % bench_ncpus(), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* --- ordlock over generic netlink ----------------------------------------- */

void olnl_open(struct olnl *nl, const char *domain, uint32_t rank, uint64_t id)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct olc_nl *c;
	size_t off, keys, key;
	int ret;

	memset(nl, 0, sizeof(*nl));
	/* the shared client resolves the family, then is done */
	ret = olc_nl_open(&c, -1, 0);
	if (ret)
		bench_die("generic netlink family %s: %s", ORDLOCK_GENL_NAME,
			  strerror(-ret));
	nl->family = (unsigned int)c->family;
	olc_nl_close(c);
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0 || bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)))
		bench_die("netlink socket: %s", strerror(errno));

	off = olc_raw_header(nl->acq, nl->family, ORDLOCK_CMD_ACQUIRE);
	if (domain)
		off = olc_raw_put(nl->acq, off, ORDLOCK_A_DOMAIN, domain, strlen(domain) + 1);
	off = olc_raw_nest_start(nl->acq, off, ORDLOCK_A_KEYS, &keys);
	off = olc_raw_nest_start(nl->acq, off, ORDLOCK_A_KEY, &key);
	off = olc_raw_put_u32(nl->acq, off, ORDLOCK_K_RANK, rank);
	off = olc_raw_put_u64(nl->acq, off, ORDLOCK_K_ID, id);
	off = olc_raw_put_u32(nl->acq, off, ORDLOCK_K_MODE, ORDLOCK_MODE_EXCLUSIVE);
	olc_raw_nest_end(nl->acq, key, off);
	olc_raw_nest_end(nl->acq, keys, off);
	off = olc_raw_put_u64(nl->acq, off, ORDLOCK_A_TIMEOUT_NS, 60ULL * 1000000000ULL);
	off = olc_raw_put_u64(nl->acq, off, ORDLOCK_A_COOKIE, 1);
	nl->acq_len = olc_raw_finish(nl->acq, off);

	off = olc_raw_header(nl->rel, nl->family, ORDLOCK_CMD_RELEASE);
	off = olc_raw_put_u32(nl->rel, off, ORDLOCK_A_FLAGS, ORDLOCK_RELEASE_ALL);
	nl->rel_len = olc_raw_finish(nl->rel, off);

	off = olc_raw_header(nl->null, nl->family, 0xfe);
	nl->null_len = olc_raw_finish(nl->null, off);
}

void olnl_close(struct olnl *nl)
{
	close(nl->fd);
	nl->fd = -1;
}

/* Receive one message, as olc_raw_recv() */
static int olnl_recv(struct olnl *nl, uint8_t *cmd, uint32_t *status, uint32_t *err)
{
	return olc_raw_recv(nl->fd, nl->buf, sizeof(nl->buf), cmd, status, err);
}

static int olnl_status(uint32_t status, uint32_t err)
{
	if (status == ORDLOCK_STATUS_GRANTED)
		return 0;
	return err ? -(int)err : -EPROTO;
}

/* Send @len bytes of @msg and receive the reply, as olnl_recv() */
static int olnl_request(struct olnl *nl, const char *msg, size_t len,
			uint8_t *cmd, uint32_t *status, uint32_t *err)
{
	return olc_raw_request(nl->fd, msg, len, nl->buf, sizeof(nl->buf), cmd,
			       status, err);
}

int olnl_acquire(struct olnl *nl)
{
	uint32_t status, err;
	uint8_t cmd;
	int ret;

	ret = olnl_request(nl, nl->acq, nl->acq_len, &cmd, &status, &err);
	if (ret || status != ORDLOCK_STATUS_QUEUED)
		return ret ? ret : olnl_status(status, err);
	/* queued: sleep in recv() until the RESULT */
	ret = olnl_recv(nl, &cmd, &status, &err);
	if (!ret && cmd != ORDLOCK_CMD_RESULT)
		ret = -EPROTO;
	return ret ? ret : olnl_status(status, err);
}

int olnl_release_all(struct olnl *nl)
{
	uint32_t status, err;
	uint8_t cmd;
	int ret = olnl_request(nl, nl->rel, nl->rel_len, &cmd, &status, &err);

	return ret ? ret : olnl_status(status, err);
}

int olnl_null(struct olnl *nl)
{
	uint32_t status, err;
	uint8_t cmd;
	int ret = olnl_request(nl, nl->null, nl->null_len, &cmd, &status, &err);

	return ret == -EOPNOTSUPP ? 0 : (ret ? ret : -EPROTO);
}
