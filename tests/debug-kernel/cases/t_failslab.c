// SPDX-License-Identifier: GPL-2.0
/*
 * t_failslab: an allocation failure anywhere in an ordlock call makes the
 * call fail with ENOMEM (or succeed, when the allocation was optional) and
 * leaves nothing half-built: the owner still holds what it held before,
 * the keys of a failed request are free, no waiter is left queued, and
 * once the owners are gone debugfs shows no owner and no resource.
 *
 * Needs the debug kernel of "make check-debug" (CONFIG_FAILSLAB,
 * CONFIG_FAULT_INJECTION_DEBUG_FS); it is built into tests/build/vm-debug/
 * and only run there (tests/vm/run.sh --debug). Without failslab it bails
 * out: it never counts as a pass on a kernel that cannot inject.
 *
 * Each sweep repeats one call with /proc/thread-self/fail-nth = 1, 2, 3...:
 * the Nth allocation of the calling thread in the kernel fails (failslab,
 * with ignore-gfp-wait=N so that GFP_KERNEL allocations can fail too),
 * until a run makes fewer than N allocations. So every allocation the call
 * makes, in the module and in the kernel paths it goes through, fails once.
 * After each run, with injection off, the state is checked and the owner
 * must work normally.
 *
 * Allocations made outside the calling thread are reached two more ways:
 * failslab's cache filter with times=1 fails the next allocation from the
 * module's resource cache (whoever makes it: the netlink work item that
 * takes the next key of a queued request; run.sh --debug boots with
 * slub_debug=A,ordlock_resource, which marks that cache), and a random
 * phase runs a mix of calls in a child with task-filter=Y,
 * /proc/self/make-it-fail and probability 10%.
 *
 * fail-nth rather than failslab's interval/space: it counts the calling
 * thread's allocations only, so the sweep is exact and ends by itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "nltest.h"
#include "oltest.h"
#include "parse.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE
#define NS_PER_MS 1000000ULL

#define FAILSLAB	"/sys/kernel/debug/failslab/"
#define DEBUGFS		"/sys/kernel/debug/ordlock/"
#define RES_CACHE_FAILSLAB "/sys/kernel/slab/ordlock_resource/failslab"

/* More fault points than any call here makes: reaching it is a failure */
#define MAX_POINTS	4000
/* Diagnostics per sweep and kind of problem */
#define MAX_DIAG	5

static char dom_prefix[16];

/* --- fault injection ------------------------------------------------------- */

static const char *const knobs[] = {
	"probability", "interval", "times", "space", "verbose", "task-filter",
	"ignore-gfp-wait", "cache-filter",
};
static char saved_knobs[ARRAY_SIZE(knobs)][64];
static int knobs_saved;
static int nth_fd = -1;

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void knob(const char *name, const char *val)
{
	char path[128];
	int ret;

	snprintf(path, sizeof(path), FAILSLAB "%s", name);
	ret = write_str(path, val);
	if (ret)
		bail_out("write %s to %s: %s", val, path, strerror(-ret));
}

static void knobs_restore(void)
{
	unsigned int i;
	char path[128];

	if (nth_fd >= 0)
		(void)!pwrite(nth_fd, "0", 1, 0);
	if (!knobs_saved)
		return;
	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		snprintf(path, sizeof(path), FAILSLAB "%s", knobs[i]);
		write_str(path, saved_knobs[i]);
	}
}

/*
 * Every fault attribute stays quiet: a failure it forces must not print a
 * stack trace (the harness fails on any in the kernel log).
 */
static void quiet_all(void)
{
	static const char *const attrs[] = {
		"failslab", "fail_page_alloc", "fail_futex", "fail_usercopy",
		"fail_make_request", "fail_io_timeout", "fail_function",
	};
	char path[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/%s/verbose", attrs[i]);
		write_str(path, "0");
	}
}

static void failslab_setup(void)
{
	unsigned int i;
	char path[128];
	int ret;

	if (access(FAILSLAB "probability", W_OK))
		bail_out("no writable " FAILSLAB " (%s): not the debug kernel of make check-debug",
			 strerror(errno));
	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		snprintf(path, sizeof(path), FAILSLAB "%s", knobs[i]);
		ret = read_str(path, saved_knobs[i], sizeof(saved_knobs[i]));
		if (ret)
			bail_out("read %s: %s", path, strerror(-ret));
	}
	knobs_saved = 1;
	atexit(knobs_restore);
	quiet_all();
	/* nothing fails but what fail-nth asks for */
	knob("probability", "0");
	knob("interval", "1");
	knob("times", "-1");
	knob("space", "0");
	knob("task-filter", "N");
	knob("cache-filter", "N");
	knob("ignore-gfp-wait", "N");
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0)
		bail_out("open /proc/thread-self/fail-nth: %s", strerror(errno));
}

/* arm() - the @n-th allocation of this thread from now on fails */
static void arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(nth_fd, buf, len, 0) != len)
		bail_out("write fail-nth: %s", strerror(errno));
}

/* disarm() - 1 if the armed failure was injected; disarmed either way */
static int disarm(void)
{
	char buf[16];
	ssize_t n;
	int save = errno;

	n = pread(nth_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		bail_out("read fail-nth: %s", strerror(errno));
	buf[n] = '\0';
	if (atoi(buf) && pwrite(nth_fd, "0", 1, 0) != 1)
		bail_out("reset fail-nth: %s", strerror(errno));
	errno = save;
	return atoi(buf) == 0;
}

/* --- the sweeps' bookkeeping ------------------------------------------------ */

/**
 * struct sweep - one call swept over every allocation it makes
 * @name: what is swept
 * @points: runs in which an allocation failed
 * @failed: of those, runs in which the call failed
 * @complete: a run made no injection: every allocation was failed once
 * @bad_err: the call failed with an errno it may not return
 * @bad_state: something was left half-built (held, queued, not held)
 * @bad_after: the owner did not work normally afterwards
 */
struct sweep {
	const char *name;
	unsigned int points, failed;
	int complete;
	unsigned int bad_err, bad_state, bad_after;
};

#define BAD(s, kind, ...) do {						\
		if ((s)->kind++ < MAX_DIAG)				\
			diag("%s: " __VA_ARGS__);			\
	} while (0)

/* End an armed run of @s: 1 if an allocation was failed in it (a point) */
static int sweep_disarm(struct sweep *s)
{
	int inj = disarm();

	if (inj)
		s->points++;
	return inj;
}

/* A run without an injection failed nothing: every point was reached */
static int sweep_done(struct sweep *s, int inj)
{
	if (!inj)
		s->complete = 1;
	return !inj;
}

static void sweep_report(struct sweep *s)
{
	if (s->complete && !s->points) {
		/* nothing to fail: one honest point instead of four empty ones */
		ok(!s->failed && !s->bad_err && !s->bad_state && !s->bad_after,
		   "%s: allocates nothing; with the first allocation set to fail it ends as it should",
		   s->name);
		return;
	}
	ok(s->complete, "%s: every allocation failed once (%u points, the call failed in %u)",
	   s->name, s->points, s->failed);
	ok(!s->bad_err, "%s: each call succeeded or failed with an errno of the UAPI for it (%u bad)",
	   s->name, s->bad_err);
	ok(!s->bad_state, "%s: nothing half-built after a failure (%u bad)",
	   s->name, s->bad_state);
	ok(!s->bad_after, "%s: the owner works normally after each failure (%u bad)",
	   s->name, s->bad_after);
}

/* --- ioctl helpers ----------------------------------------------------------- */

static int acquire(int fd, const struct ordlock_key *keys, unsigned int n,
		   uint32_t flags, uint64_t timeout_ns, struct ordlock_acquire *out)
{
	return olt_fd_acquire(fd, keys, n, flags, timeout_ns, out) < 0 ? -errno : 0;
}

static int release_all(int fd)
{
	return olt_fd_release_all(fd);
}

static int convert(int fd, struct ordlock_key k, uint32_t flags, uint64_t timeout_ns,
		   struct ordlock_convert *out)
{
	struct ordlock_convert c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = flags;
	c.key = k;
	c.timeout_ns = timeout_ns;
	ret = ioctl(fd, ORDLOCK_IOC_CONVERT, &c) < 0 ? -errno : 0;
	if (out)
		*out = c;
	return ret;
}

static int set_domain(int fd, const char *name)
{
	return olt_fd_set_domain(fd, name) < 0 ? -errno : 0;
}

static int owner_info(int fd, struct ordlock_owner_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(fd, ORDLOCK_IOC_OWNER_INFO, info) < 0 ? -errno : 0;
}

static int domain_policy(const char *name, uint32_t policy)
{
	struct ordlock_domain_config c;
	int fd = olt_raw_fd(), ret;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = ORDLOCK_DOMAIN_SET_POLICY;
	snprintf(c.name, sizeof(c.name), "%s", name);
	c.policy = policy;
	ret = ioctl(fd, ORDLOCK_IOC_DOMAIN_CONFIG, &c) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/* an owner (raw descriptor) in @domain */
static int owner_in(const char *domain)
{
	int fd = olt_raw_fd(), ret;

	ret = set_domain(fd, domain);
	if (ret)
		bail_out("SET_DOMAIN %s: %s", domain, strerror(-ret));
	return fd;
}

static const char *dom(const char *tag)
{
	static char buf[4][ORDLOCK_DOMAIN_NAME_MAX];
	static unsigned int i;
	char *b = buf[i++ % 4];

	snprintf(b, ORDLOCK_DOMAIN_NAME_MAX, "%s-%s", dom_prefix, tag);
	return b;
}

/* nheld of @fd, -1 on error */
static long nheld(int fd)
{
	struct ordlock_owner_info info;

	return owner_info(fd, &info) ? -1 : (long)info.nheld;
}

/*
 * keys_free() - another owner of @domain takes all @n keys at once,
 * exclusive, without waiting, and lets them go: 0, or the -errno.
 */
static int keys_free(const char *domain, const struct ordlock_key *keys, unsigned int n)
{
	struct ordlock_key ex[64];
	unsigned int i;
	int fd = owner_in(domain), ret;

	for (i = 0; i < n && i < ARRAY_SIZE(ex); i++) {
		ex[i] = keys[i];
		ex[i].mode = EX;
	}
	ret = acquire(fd, ex, i, ORDLOCK_ACQUIRE_TRY, 0, NULL);
	close(fd);
	return ret;
}

/* --- debugfs ------------------------------------------------------------------- */

/* debugfs file @file parsed by @parse (tools/common/parse.c) into @out */
static void debugfs_read(const char *file, gt_parser parse, void *out)
{
	if (gt_debugfs_parse(file, parse, out))
		bail_out("cannot read debugfs %s", file);
}

/*
 * count_locks() - lines of debugfs locks of the domains whose names start
 * with @prefix, in @role (0: any)
 */
static int count_locks(const char *prefix, unsigned int role)
{
	struct olc_locks l = { 0 };
	size_t i;
	int n = 0;

	debugfs_read("locks", (gt_parser)olc_parse_locks, &l);
	for (i = 0; i < l.n; i++)
		if (!strncmp(l.v[i].domain, prefix, strlen(prefix)) &&
		    (!role || l.v[i].role == role))
			n++;
	olc_locks_free(&l);
	return n;
}

/* queued waiters and converters of the domains @prefix... */
static int count_queued(const char *prefix)
{
	return count_locks(prefix, ORDLOCK_ROLE_WAITER) +
	       count_locks(prefix, ORDLOCK_ROLE_CONVERTER);
}

/* domains of debugfs stats named @name (@prefix: or starting with it) */
static int count_domains(const char *name, int prefix)
{
	struct olc_stats st = { 0 };
	size_t i;
	int n = 0;

	debugfs_read("stats", (gt_parser)olc_parse_stats, &st);
	for (i = 0; i < st.n; i++)
		if (prefix ? !strncmp(st.v[i].name, name, strlen(name)) :
			     !strcmp(st.v[i].name, name))
			n++;
	olc_stats_free(&st);
	return n;
}

/* a "domain NAME ..." line in debugfs stats */
static int domain_exists(const char *name)
{
	return count_domains(name, 0);
}

/* the "global owners N resources N" line of debugfs stats */
static int global_counts(long *owners, long *resources)
{
	struct olc_stats st = { 0 };
	int ret = -EPROTO;

	debugfs_read("stats", (gt_parser)olc_parse_stats, &st);
	if (st.have_global) {
		*owners = (long)st.owners;
		*resources = (long)st.resources;
		ret = 0;
	}
	olc_stats_free(&st);
	return ret;
}

/* waits up to 10 s (netlink owners go away after their socket) */
static int wait_global(long owners, long resources, long *o, long *r)
{
	uint64_t deadline = now_ms() + 10000;

	do {
		if (global_counts(o, r))
			return -EPROTO;
		if (*o == owners && *r == resources)
			return 0;
		usleep(20000);
	} while (now_ms() < deadline);
	return -ETIMEDOUT;
}

static long base_owners, base_resources;

/* nothing of domains @prefix is left; every owner and resource is gone */
static void check_clean(const char *what, const char *prefix)
{
	long o = -1, r = -1;
	int locks = count_locks(prefix, 0), ret;

	ok(!locks, "%s: debugfs locks shows nothing of the test (%d lines)", what, locks);
	ret = wait_global(base_owners, base_resources, &o, &r);
	ok(!ret, "%s: stats: %ld owners, %ld resources, as before the test", what, o, r);
}

/* --- sweeps over ioctl calls ------------------------------------------------- */

/* open(/dev/ordlock): an owner is created, or ENOMEM and none */
static void sweep_open(void)
{
	struct sweep s = { .name = "open /dev/ordlock" };
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	const char *d = dom("open");
	unsigned int n;
	int fd, err, inj;

	for (n = 1; n <= MAX_POINTS; n++) {
		arm(n);
		fd = open(ORDLOCK_DEVICE, O_RDWR | O_CLOEXEC);
		err = errno;
		inj = sweep_disarm(&s);
		if (fd < 0) {
			s.failed++;
			if (err != ENOMEM)
				BAD(&s, bad_err, "point %u: open: %s", s.name, n, strerror(err));
		} else {
			if (set_domain(fd, d) || acquire(fd, &k, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL) ||
			    release_all(fd) != 1)
				BAD(&s, bad_after, "point %u: the new owner does not work", s.name, n);
			close(fd);
		}
		if (sweep_done(&s, inj))
			break;
	}
	sweep_report(&s);
}

/* SET_DOMAIN to a domain that does not exist yet */
static void sweep_set_domain(void)
{
	struct sweep s = { .name = "SET_DOMAIN (new domain)" };
	struct ordlock_owner_info info;
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	unsigned int n;
	int fd, ret, inj;

	for (n = 1; n <= MAX_POINTS; n++) {
		fd = olt_raw_fd();
		snprintf(name, sizeof(name), "%s", dom("sd"));
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "%u", n);
		arm(n);
		ret = set_domain(fd, name);
		inj = sweep_disarm(&s);
		if (owner_info(fd, &info))
			BAD(&s, bad_state, "point %u: OWNER_INFO fails", s.name, n);
		if (ret) {
			s.failed++;
			if (ret != -ENOMEM)
				BAD(&s, bad_err, "point %u: %s", s.name, n, strerror(-ret));
			if (strcmp(info.domain, ORDLOCK_DEFAULT_DOMAIN))
				BAD(&s, bad_state, "point %u: failed, but the owner is in \"%s\"",
				    s.name, n, info.domain);
			if (domain_exists(name))
				BAD(&s, bad_state, "point %u: failed, but domain %s exists",
				    s.name, n, name);
			ret = set_domain(fd, name);
			if (ret)
				BAD(&s, bad_after, "point %u: SET_DOMAIN again: %s", s.name, n,
				    strerror(-ret));
		} else if (strcmp(info.domain, name)) {
			BAD(&s, bad_state, "point %u: succeeded, but the owner is in \"%s\"",
			    s.name, n, info.domain);
		}
		if (acquire(fd, &k, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL) || release_all(fd) != 1)
			BAD(&s, bad_after, "point %u: acquire/release after it fails", s.name, n);
		close(fd);
		if (sweep_done(&s, inj))
			break;
	}
	sweep_report(&s);
	ok(!count_domains(dom("sd"), 1),
	   "SET_DOMAIN: the domains are gone with their owners");
}

/*
 * ACQUIRE of @nkeys keys nobody has used yet (each run new ids), the first
 * @nshared of them also held shared by another owner (the resource exists
 * then); by a fresh owner each run when @cold (every hold is allocated),
 * else by one owner throughout (its spare holds are reused).
 */
static void sweep_acquire(unsigned int nkeys, unsigned int nshared, int cold)
{
	static uint64_t next_id = 1000;
	struct ordlock_key keys[64], probe[64];
	struct ordlock_acquire a;
	char name[96];
	const char *d = dom("acq");
	struct sweep s = { .name = name };
	unsigned int n, i;
	int fd = -1, other, ret, inj;

	snprintf(name, sizeof(name), "ACQUIRE of %u keys (%u existing, %s owner)",
		 nkeys, nshared, cold ? "new" : "one");
	other = owner_in(d);
	if (!cold)
		fd = owner_in(d);
	for (n = 1; n <= MAX_POINTS; n++) {
		for (i = 0; i < nkeys; i++)
			keys[i] = ordlock_key(1, next_id + i, i % 3 ? EX : SH);
		for (i = 0; i < nshared; i++)
			keys[i].mode = SH;
		next_id += nkeys;
		if (nshared && acquire(other, keys, nshared, ORDLOCK_ACQUIRE_TRY, 0, NULL))
			bail_out("%s: the other owner cannot take its keys", name);
		if (cold)
			fd = owner_in(d);
		arm(n);
		ret = acquire(fd, keys, nkeys, 0, 0, &a);
		inj = sweep_disarm(&s);
		if (ret) {
			s.failed++;
			if (ret != -ENOMEM)
				BAD(&s, bad_err, "point %u: %s", name, n, strerror(-ret));
			else if (a.failure.reason != ORDLOCK_REASON_NOMEM ||
				 a.failure.error != ENOMEM)
				BAD(&s, bad_err, "point %u: ENOMEM with reason %u, error %u",
				    name, n, a.failure.reason, a.failure.error);
			if (nheld(fd) != 0)
				BAD(&s, bad_state, "point %u: failed, but the owner holds %ld keys",
				    name, n, nheld(fd));
			/* what it requested is free (but for the other's shared keys) */
			memcpy(probe, keys + nshared, (nkeys - nshared) * sizeof(*keys));
			if (nkeys > nshared && (ret = keys_free(d, probe, nkeys - nshared)))
				BAD(&s, bad_state, "point %u: failed, but its keys are not free: %s",
				    name, n, strerror(-ret));
			/* and the same request now succeeds */
			ret = acquire(fd, keys, nkeys, ORDLOCK_ACQUIRE_TRY, 0, NULL);
			if (ret)
				BAD(&s, bad_after, "point %u: the request again: %s", name, n,
				    strerror(-ret));
		} else if (nheld(fd) != nkeys) {
			BAD(&s, bad_state, "point %u: granted, but the owner holds %ld keys",
			    name, n, nheld(fd));
		}
		ret = release_all(fd);
		if (ret != (int)nkeys)
			BAD(&s, bad_after, "point %u: RELEASE_ALL released %d", name, n, ret);
		if (nshared && release_all(other) != (int)nshared)
			bail_out("%s: the other owner cannot release", name);
		if (cold)
			close(fd);
		if (sweep_done(&s, inj))
			break;
	}
	if (!cold)
		close(fd);
	close(other);
	sweep_report(&s);
}

/* CONVERT of a held key: upgrade and downgrade, nobody else holding it */
static void sweep_convert(uint16_t from, uint16_t to)
{
	struct ordlock_key k = ordlock_key(1, 7, from), want = ordlock_key(1, 7, to);
	struct ordlock_convert c;
	char name[64];
	const char *d = dom("cv");
	struct sweep s = { .name = name };
	unsigned int n;
	int fd, ret, inj, probe;

	snprintf(name, sizeof(name), "CONVERT %s to %s",
		 from == SH ? "shared" : "exclusive", to == SH ? "shared" : "exclusive");
	fd = owner_in(d);
	for (n = 1; n <= MAX_POINTS; n++) {
		if (acquire(fd, &k, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL))
			bail_out("%s: cannot take the key", name);
		arm(n);
		ret = convert(fd, want, 0, 0, &c);
		inj = sweep_disarm(&s);
		/* a shared probe gets in only while the key is held shared */
		probe = olt_probe(d, 1, 7, SH);
		if (ret) {
			s.failed++;
			if (ret != -ENOMEM)
				BAD(&s, bad_err, "point %u: %s", name, n, strerror(-ret));
			if (nheld(fd) != 1 || (probe == 0) != (from == SH))
				BAD(&s, bad_state, "point %u: failed, but the key is not held as before (probe %d)",
				    name, n, probe);
		} else if ((probe == 0) != (to == SH)) {
			BAD(&s, bad_state, "point %u: converted, but a shared probe gives %d",
			    name, n, probe);
		}
		if (release_all(fd) != 1)
			BAD(&s, bad_after, "point %u: RELEASE_ALL", name, n);
		if (sweep_done(&s, inj))
			break;
	}
	close(fd);
	sweep_report(&s);
}

/*
 * A request that waits and times out (@what "ACQUIRE") or an upgrade that
 * waits and times out ("CONVERT"), in a domain of policy @policy (detect:
 * the graph is searched before the wait). A child holds key 1:50.
 */
static void sweep_wait_timeout(const char *what, uint32_t policy)
{
	struct ordlock_key held = ORDLOCK_SH(1, 50), mine = ORDLOCK_SH(1, 50);
	struct ordlock_key keys[2];
	struct olt_holder *h;
	char name[96], tag[16];
	struct sweep s = { .name = name };
	int is_convert = !strcmp(what, "CONVERT");
	unsigned int n;
	uint64_t id = 100;
	const char *d;
	int fd, ret, inj, waiters;

	snprintf(tag, sizeof(tag), "wt%u%c", policy, what[0]);
	d = dom(tag);
	snprintf(name, sizeof(name), "%s that times out (policy %s)", what,
		 policy == ORDLOCK_POLICY_DETECT ? "detect" : "enforce");
	ret = domain_policy(d, policy);
	if (ret)
		bail_out("DOMAIN_CONFIG %s: %s", d, strerror(-ret));
	if (!is_convert)
		held.mode = EX;
	h = olt_holder_start(d, &held, 1);
	if (h->result)
		bail_out("%s: the holder failed", name);
	fd = owner_in(d);
	for (n = 1; n <= MAX_POINTS; n++) {
		if (is_convert) {
			if (acquire(fd, &mine, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL))
				bail_out("%s: cannot share the key", name);
			arm(n);
			ret = convert(fd, ORDLOCK_EX(1, 50), 0, 2 * NS_PER_MS, NULL);
		} else {
			/* a new key below the held one, then the held one */
			keys[0] = ORDLOCK_EX(0, id++);
			keys[1] = ORDLOCK_EX(1, 50);
			arm(n);
			ret = acquire(fd, keys, 2, 0, 2 * NS_PER_MS, NULL);
		}
		inj = sweep_disarm(&s);
		if (ret != -ETIMEDOUT) {
			if (ret)
				s.failed++;
			if (ret != -ENOMEM)
				BAD(&s, bad_err, "point %u: %s", name, n,
				    ret ? strerror(-ret) : "granted");
		}
		waiters = count_queued(d);
		if (waiters)
			BAD(&s, bad_state, "point %u: %d waiters left queued", name, n, waiters);
		if (nheld(fd) != is_convert)
			BAD(&s, bad_state, "point %u: the owner holds %ld keys", name, n, nheld(fd));
		if (!is_convert && (ret = keys_free(d, keys, 1)))
			BAD(&s, bad_state, "point %u: the new key is not free: %s", name, n,
			    strerror(-ret));
		release_all(fd);
		if (sweep_done(&s, inj))
			break;
	}
	close(fd);
	is_int(olt_holder_stop(h), 0, "%s: the holder exits", name);
	sweep_report(&s);
}

/*
 * Waits, is granted, and takes the next key after the wait: a child holds
 * 1:60 and lets it go once this thread sleeps in ACQUIRE [1:60, 1:N].
 */
struct releaser {
	const char *domain;
	struct pbarrier *held;
	int pipe_rd;
	pid_t parent;
};

static int blocked_in_acquire(pid_t pid)
{
	return in_ioctl(pid, ORDLOCK_IOC_ACQUIRE) == 1 && proc_state(pid) == 'S';
}

static int releaser_main(void *arg)
{
	struct releaser *r = arg;
	struct ordlock_key held = ORDLOCK_EX(1, 60);
	uint64_t deadline = now_ms() + 30000;
	int fd = owner_in(r->domain);
	char c;

	/* its own owner, its own request: not one of the parent thread's */
	if (acquire(fd, &held, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL))
		return 1;
	if (pbarrier_wait(r->held))
		return 2;
	/* until the parent sleeps in the acquire, or it is done already */
	while (now_ms() < deadline) {
		if (blocked_in_acquire(r->parent))
			break;
		if (read(r->pipe_rd, &c, 1) >= 0 || errno != EAGAIN)
			break;
		usleep(2000);
	}
	return 0;	/* exit: the key is released */
}

static void sweep_grant_then_take(void)
{
	const char *d = dom("gt");
	struct sweep s = { .name = "ACQUIRE that waits, is granted, takes the next key" };
	struct ordlock_key keys[2];
	struct releaser *r = shm_alloc(sizeof(*r));
	unsigned int n;
	int fd, pfd[2], ret, inj, st;
	pid_t pid;

	r->domain = d;
	r->parent = getpid();
	fd = owner_in(d);
	for (n = 1; n <= MAX_POINTS; n++) {
		keys[0] = ORDLOCK_EX(1, 60);
		keys[1] = ORDLOCK_EX(1, 1000 + n);
		if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK))
			bail_out("pipe: %s", strerror(errno));
		r->pipe_rd = pfd[0];
		r->held = pbarrier_new(2);
		pid = child_start(releaser_main, r);
		if (pbarrier_wait(r->held))
			bail_out("%s: the child does not hold 1:60", s.name);
		arm(n);
		ret = acquire(fd, keys, 2, 0, 60000 * NS_PER_MS, NULL);
		inj = sweep_disarm(&s);
		(void)!write(pfd[1], "x", 1);
		st = child_wait(pid, 60);
		close(pfd[0]);
		close(pfd[1]);
		pbarrier_free(r->held);
		if (st)
			bail_out("%s: the releasing child failed (%d)", s.name, st);
		if (ret) {
			s.failed++;
			if (ret != -ENOMEM)
				BAD(&s, bad_err, "point %u: %s", s.name, n, strerror(-ret));
			if (nheld(fd) != 0)
				BAD(&s, bad_state, "point %u: failed, but holds %ld", s.name, n,
				    nheld(fd));
			if ((ret = keys_free(d, keys, 2)))
				BAD(&s, bad_state, "point %u: keys not free: %s", s.name, n,
				    strerror(-ret));
		} else if (nheld(fd) != 2) {
			BAD(&s, bad_state, "point %u: granted, holds %ld", s.name, n, nheld(fd));
		}
		release_all(fd);
		if (sweep_done(&s, inj))
			break;
	}
	close(fd);
	shm_free(r, sizeof(*r));
	sweep_report(&s);
}

/*
 * The victim of a deadlock (policy detect): a child holds 1:1 and waits
 * for 1:2, which this thread holds; this thread then asks for 1:1.
 */
struct dl_child {
	const char *domain;
	struct pbarrier *got;
};

static int dl_child_main(void *arg)
{
	struct dl_child *c = arg;
	struct ordlock_key a = ORDLOCK_EX(1, 1), b = ORDLOCK_EX(1, 2);
	int fd = owner_in(c->domain);

	if (acquire(fd, &a, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL))
		return 10;
	if (pbarrier_wait(c->got))
		return 11;
	if (acquire(fd, &b, 1, 0, 60000 * NS_PER_MS, NULL))
		return 12;
	return 0;
}

static void sweep_deadlock(void)
{
	const char *d = dom("dl");
	struct sweep s = { .name = "ACQUIRE that closes a cycle (detect)" };
	struct ordlock_key a = ORDLOCK_EX(1, 1), b = ORDLOCK_EX(1, 2);
	struct dl_child *c = shm_alloc(sizeof(*c));
	unsigned int n;
	int fd, ret, inj, st;
	pid_t pid;

	ret = domain_policy(d, ORDLOCK_POLICY_DETECT);
	if (ret)
		bail_out("DOMAIN_CONFIG %s: %s", d, strerror(-ret));
	c->domain = d;
	fd = owner_in(d);
	for (n = 1; n <= MAX_POINTS; n++) {
		c->got = pbarrier_new(2);
		if (acquire(fd, &b, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL))
			bail_out("%s: cannot take 1:2", s.name);
		pid = child_start(dl_child_main, c);
		if (pbarrier_wait(c->got) || wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 30000))
			bail_out("%s: the child does not wait", s.name);
		arm(n);
		ret = acquire(fd, &a, 1, 0, 60000 * NS_PER_MS, NULL);
		inj = sweep_disarm(&s);
		if (ret != -EDEADLK) {
			if (ret)
				s.failed++;
			if (ret != -ENOMEM)
				BAD(&s, bad_err, "point %u: %s", s.name, n,
				    ret ? strerror(-ret) : "granted");
		}
		if (nheld(fd) != 1)
			BAD(&s, bad_state, "point %u: holds %ld keys, not 1:2 alone", s.name, n,
			    nheld(fd));
		if (count_locks(d, ORDLOCK_ROLE_WAITER) != 1)
			BAD(&s, bad_state, "point %u: %d waiters, not the child alone", s.name, n,
			    count_locks(d, ORDLOCK_ROLE_WAITER));
		release_all(fd);
		st = child_wait(pid, 60);
		pbarrier_free(c->got);
		if (st)
			bail_out("%s: the child failed (%d)", s.name, st);
		if (sweep_done(&s, inj))
			break;
	}
	close(fd);
	shm_free(c, sizeof(*c));
	sweep_report(&s);
}

/*
 * DOMAIN_CONFIG of a domain that does not exist yet, with a policy and a
 * delay: the domain is created (and kept until unload), or ENOMEM and none
 */
static void sweep_domain_config(void)
{
	struct sweep s = { .name = "DOMAIN_CONFIG (new domain)" };
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct ordlock_domain_config c;
	struct ordlock_owner_info info;
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int n;
	int fd = olt_raw_fd(), ret, inj;

	for (n = 1; n <= MAX_POINTS; n++) {
		snprintf(name, sizeof(name), "%s%u", dom("dc"), n);
		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		c.flags = ORDLOCK_DOMAIN_SET_POLICY | ORDLOCK_DOMAIN_SET_DETECT_DELAY;
		snprintf(c.name, sizeof(c.name), "%s", name);
		c.policy = ORDLOCK_POLICY_DETECT;
		c.detect_delay_ms = 7;
		arm(n);
		ret = ioctl(fd, ORDLOCK_IOC_DOMAIN_CONFIG, &c) < 0 ? -errno : 0;
		inj = sweep_disarm(&s);
		if (ret) {
			s.failed++;
			if (ret != -ENOMEM)
				BAD(&s, bad_err, "point %u: %s", s.name, n, strerror(-ret));
			if (domain_exists(name))
				BAD(&s, bad_state, "point %u: failed, but domain %s exists",
				    s.name, n, name);
			ret = domain_policy(name, ORDLOCK_POLICY_DETECT);
			if (ret)
				BAD(&s, bad_after, "point %u: DOMAIN_CONFIG again: %s", s.name, n,
				    strerror(-ret));
		} else if (c.policy != ORDLOCK_POLICY_DETECT || c.detect_delay_ms != 7 ||
			   !domain_exists(name)) {
			BAD(&s, bad_state, "point %u: succeeded, but policy %u, delay %u, %d lines",
			    s.name, n, c.policy, c.detect_delay_ms, domain_exists(name));
		}
		/* the owner moves to it, finds its policy there, and locks */
		ret = set_domain(fd, name);
		if (ret || owner_info(fd, &info) || info.policy != ORDLOCK_POLICY_DETECT ||
		    acquire(fd, &k, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL) || release_all(fd) != 1)
			BAD(&s, bad_after, "point %u: the owner does not work in %s (%s)", s.name,
			    n, name, ret ? strerror(-ret) : "policy, acquire or release");
		if (set_domain(fd, ORDLOCK_DEFAULT_DOMAIN))
			bail_out("%s: SET_DOMAIN back", s.name);
		if (sweep_done(&s, inj))
			break;
	}
	close(fd);
	sweep_report(&s);
}

static int last_failure(int fd, struct ordlock_last_failure *lf)
{
	memset(lf, 0, sizeof(*lf));
	lf->size = sizeof(*lf);
	return ioctl(fd, ORDLOCK_IOC_LAST_FAILURE, lf) < 0 ? -errno : 0;
}

/*
 * OWNER_INFO and LAST_FAILURE only copy what the owner has: fail-nth = 1
 * is never reached (no allocation to sweep), and they succeed
 */
static void test_no_alloc(void)
{
	const char *d = dom("na");
	struct ordlock_key k = ORDLOCK_EX(1, 3);
	struct ordlock_owner_info info;
	struct ordlock_last_failure lf;
	struct olt_holder *h = olt_holder_start(d, &k, 1);
	int fd = owner_in(d), ret, inj;

	if (h->result)
		bail_out("OWNER_INFO/LAST_FAILURE: the holder failed");
	if (acquire(fd, &k, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL) != -EAGAIN)
		bail_out("OWNER_INFO/LAST_FAILURE: no BUSY failure to record");
	arm(1);
	ret = owner_info(fd, &info);
	inj = disarm();
	ok(!inj && !ret && !strcmp(info.domain, d),
	   "OWNER_INFO allocates nothing (0 points) and succeeds (%s, injected %d)",
	   ret ? strerror(-ret) : "ok", inj);
	arm(1);
	ret = last_failure(fd, &lf);
	inj = disarm();
	ok(!inj && !ret && lf.failure.reason == ORDLOCK_REASON_BUSY,
	   "LAST_FAILURE allocates nothing (0 points) and succeeds (%s, reason %u, injected %d)",
	   ret ? strerror(-ret) : "ok", lf.failure.reason, inj);
	close(fd);
	is_int(olt_holder_stop(h), 0, "OWNER_INFO/LAST_FAILURE: the holder exits");
}

/* --- netlink ------------------------------------------------------------------------- */

/*
 * How a netlink request ended: 0 and @o (GRANTED, QUEUED, or REFUSED with
 * an errno), or a negative errno: of the request (@s->nl->ext.error set, the
 * kernel answered with an error), or of the transport (a send refused, an
 * answer lost: then what happened is unknown to the client, and only
 * closing the socket tells it all goes).
 */
static int nl_errno_ok(int ret)
{
	return ret == -ENOMEM || ret == -ENOBUFS;
}

/*
 * Netlink ACQUIRE of @nkeys new keys on a new socket: the socket's owner,
 * the request and its reply are allocated in the call. With @queue, the
 * last key is held by a child: the request is queued, then granted when
 * the child lets go (the RESULT comes from the work item, not injected).
 */
static void sweep_nl_acquire(unsigned int nkeys, int queue)
{
	static uint64_t next_id = 1000000;
	const char *d = dom(queue ? "nlq" : "nla");
	struct ordlock_key keys[16], held = ORDLOCK_EX(2, 1);
	struct olt_holder *h = NULL;
	struct olc_nl_outcome o;
	struct nlt *sk;
	char name[96];
	struct sweep s = { .name = name };
	unsigned int n, i;
	int ret, inj, kernel_said, keeper;

	snprintf(name, sizeof(name), "netlink ACQUIRE of %u keys%s", nkeys,
		 queue ? ", queued" : "");
	if (queue) {
		h = olt_holder_start(d, &held, 1);
		if (h->result)
			bail_out("%s: the holder failed", name);
	}
	/* the domain exists throughout (an owner keeps it) */
	keeper = owner_in(d);
	for (n = 1; n <= MAX_POINTS; n++) {
		for (i = 0; i < nkeys; i++)
			keys[i] = ordlock_key(1, next_id++, i % 2 ? SH : EX);
		if (queue)
			keys[nkeys - 1] = held;
		sk = nlt_must_open();
		memset(&o, 0, sizeof(o));
		arm(n);
		ret = nlt_acquire(sk, d, keys, nkeys, 60000 * NS_PER_MS, 0, n, &o);
		inj = sweep_disarm(&s);
		kernel_said = sk->nl->ext.error != 0;
		if (ret) {
			s.failed++;
			if (!nl_errno_ok(ret))
				BAD(&s, bad_err, "point %u: %s (%s)", name, n, strerror(-ret),
				    nlt_extack_str(sk));
			/* refused by the kernel: nothing may be held or queued */
			if (kernel_said && count_locks(d, 0) != (queue ? 1 : 0))
				BAD(&s, bad_state, "point %u: refused (%s), but %d lines in locks",
				    name, n, strerror(-ret), count_locks(d, 0));
		} else if (o.status == ORDLOCK_STATUS_REFUSED) {
			s.failed++;
			if (o.error != ENOMEM)
				BAD(&s, bad_err, "point %u: REFUSED, errno %u", name, n, o.error);
			if (count_locks(d, 0) != (queue ? 1 : 0))
				BAD(&s, bad_state, "point %u: REFUSED, but %d lines in locks",
				    name, n, count_locks(d, 0));
		} else if (o.status == ORDLOCK_STATUS_QUEUED && queue) {
			/* the child lets go: the request ends granted */
			olt_holder_stop(h);
			h = NULL;
			memset(&o, 0, sizeof(o));
			ret = nlt_wait_result(sk, 30000, &o);
			if (ret || o.status != ORDLOCK_STATUS_GRANTED)
				BAD(&s, bad_after, "point %u: queued, then %s", name, n,
				    ret ? strerror(-ret) : nlt_outcome_str(&o));
		} else if (o.status != ORDLOCK_STATUS_GRANTED || queue) {
			BAD(&s, bad_err, "point %u: %s", name, n, nlt_outcome_str(&o));
		}
		/* whatever happened, the socket's owner works and its close cleans up */
		if (ret == 0) {
			ret = nlt_release(sk, NULL, 0, &o);
			if (ret || o.status != ORDLOCK_STATUS_GRANTED)
				BAD(&s, bad_after, "point %u: RELEASE_ALL: %s", name, n,
				    ret ? strerror(-ret) : nlt_outcome_str(&o));
		}
		nlt_close(sk);
		if ((ret = keys_free(d, keys, queue ? nkeys - 1 : nkeys)))
			BAD(&s, bad_state, "point %u: after the close, the keys are not free: %s",
			    name, n, strerror(-ret));
		if (queue && !h) {
			h = olt_holder_start(d, &held, 1);
			if (h->result)
				bail_out("%s: the holder failed", name);
		}
		if (sweep_done(&s, inj))
			break;
	}
	if (h)
		olt_holder_stop(h);
	close(keeper);
	sweep_report(&s);
}

/* Netlink CANCEL of a queued request */
static void sweep_nl_cancel(void)
{
	const char *d = dom("nlc");
	struct ordlock_key keys[2], held = ORDLOCK_EX(2, 1);
	struct sweep s = { .name = "netlink CANCEL of a queued request" };
	struct olt_holder *h = olt_holder_start(d, &held, 1);
	struct olc_nl_outcome o;
	struct nlt *sk;
	unsigned int n;
	int ret, inj, lines;

	if (h->result)
		bail_out("%s: the holder failed", s.name);
	for (n = 1; n <= MAX_POINTS; n++) {
		keys[0] = ORDLOCK_EX(1, 5000 + n);
		keys[1] = held;
		sk = nlt_must_open();
		ret = nlt_acquire(sk, d, keys, 2, 60000 * NS_PER_MS, 0, 77, &o);
		if (ret || o.status != ORDLOCK_STATUS_QUEUED)
			bail_out("%s: the request is not queued: %s", s.name,
				 ret ? strerror(-ret) : nlt_outcome_str(&o));
		memset(&o, 0, sizeof(o));
		arm(n);
		ret = nlt_cancel(sk, 77, &o);
		inj = sweep_disarm(&s);
		lines = count_locks(d, 0);
		if (ret) {
			s.failed++;
			if (!nl_errno_ok(ret))
				BAD(&s, bad_err, "point %u: %s (%s)", s.name, n, strerror(-ret),
				    nlt_extack_str(sk));
			/* a cancel that failed in the kernel withdrew the request or not */
			if (sk->nl->ext.error && lines != 1 && lines != 3)
				BAD(&s, bad_state, "point %u: %d lines in locks", s.name, n, lines);
		} else if (o.status != ORDLOCK_STATUS_CANCELLED) {
			BAD(&s, bad_err, "point %u: %s", s.name, n, nlt_outcome_str(&o));
		} else if (lines != 1) {
			BAD(&s, bad_state, "point %u: cancelled, but %d lines in locks", s.name,
			    n, lines);
		}
		nlt_close(sk);
		if (count_locks(d, 0) != 1)
			BAD(&s, bad_state, "point %u: after the close, %d lines in locks", s.name,
			    n, count_locks(d, 0));
		if (sweep_done(&s, inj))
			break;
	}
	is_int(olt_holder_stop(h), 0, "%s: the holder exits", s.name);
	sweep_report(&s);
}

/*
 * Netlink CONVERT of a key the socket holds alone: an upgrade, granted at
 * once, or a downgrade. The socket's owner exists before (its ACQUIRE).
 * Refused by the kernel, the key stays held in its old mode; a transport
 * failure (the reply or the ack lost) may leave either mode, but the key
 * held.
 */
static void sweep_nl_convert(uint16_t from, uint16_t to)
{
	struct ordlock_key k = ordlock_key(1, 7, from), want = ordlock_key(1, 7, to);
	const char *d = dom(to == EX ? "nlup" : "nldn");
	struct olc_nl_outcome o;
	struct nlt *sk = nlt_must_open();
	char name[64];
	struct sweep s = { .name = name };
	unsigned int n;
	int ret, inj, kernel_said, probe, lines;

	snprintf(name, sizeof(name), "netlink CONVERT %s to %s",
		 from == SH ? "shared" : "exclusive", to == SH ? "shared" : "exclusive");
	for (n = 1; n <= MAX_POINTS; n++) {
		ret = nlt_acquire(sk, d, &k, 1, 0, ORDLOCK_ACQUIRE_TRY, 0, &o);
		if (ret || o.status != ORDLOCK_STATUS_GRANTED)
			bail_out("%s: cannot take the key: %s", name,
				 ret ? strerror(-ret) : nlt_outcome_str(&o));
		memset(&o, 0, sizeof(o));
		arm(n);
		ret = nlt_convert(sk, want, 0, 0, n, &o);
		inj = sweep_disarm(&s);
		kernel_said = sk->nl->ext.error != 0;
		/* a shared probe gets in only while the key is held shared */
		probe = olt_probe(d, 1, 7, SH);
		lines = count_locks(d, 0);
		if (ret) {
			s.failed++;
			if (!nl_errno_ok(ret))
				BAD(&s, bad_err, "point %u: %s (%s)", name, n, strerror(-ret),
				    nlt_extack_str(sk));
			if (kernel_said && (probe == 0) != (from == SH))
				BAD(&s, bad_state, "point %u: refused (%s), but the mode changed (probe %d)",
				    name, n, strerror(-ret), probe);
		} else if (o.status == ORDLOCK_STATUS_REFUSED) {
			s.failed++;
			if (o.error != ENOMEM)
				BAD(&s, bad_err, "point %u: REFUSED, errno %u", name, n, o.error);
			if ((probe == 0) != (from == SH))
				BAD(&s, bad_state, "point %u: REFUSED, but the mode changed (probe %d)",
				    name, n, probe);
		} else if (o.status != ORDLOCK_STATUS_GRANTED) {
			BAD(&s, bad_err, "point %u: %s", name, n, nlt_outcome_str(&o));
		} else if ((probe == 0) != (to == SH)) {
			BAD(&s, bad_state, "point %u: converted, but a shared probe gives %d",
			    name, n, probe);
		}
		/* whatever happened, the key is held once, and nobody waits */
		if (lines != 1)
			BAD(&s, bad_state, "point %u: %d lines in locks, not 1", name, n, lines);
		ret = nlt_release(sk, NULL, 0, &o);
		if (ret || o.status != ORDLOCK_STATUS_GRANTED)
			BAD(&s, bad_after, "point %u: RELEASE_ALL: %s", name, n,
			    ret ? strerror(-ret) : nlt_outcome_str(&o));
		if ((ret = keys_free(d, &k, 1)))
			BAD(&s, bad_after, "point %u: after RELEASE_ALL, the key is not free: %s",
			    name, n, strerror(-ret));
		if (sweep_done(&s, inj))
			break;
	}
	nlt_close(sk);
	sweep_report(&s);
}

static const struct nlt_rank_name ds_names[] = {
	{ 1, "table" }, { 2, "row" }, { 9, "index-page" },
};

/* @got is @name with policy detect, delay 9, and ds_names */
static int ds_configured(const struct olc_nl_domain *got, const char *name)
{
	unsigned int i;

	if (strcmp(got->name, name) || got->policy != ORDLOCK_POLICY_DETECT ||
	    got->detect_delay_ms != 9 || got->names.n != ARRAY_SIZE(ds_names))
		return 0;
	for (i = 0; i < ARRAY_SIZE(ds_names); i++)
		if (got->names.v[i].rank != ds_names[i].rank ||
		    strcmp(got->names.v[i].name, ds_names[i].name))
			return 0;
	return 1;
}

/*
 * Netlink DOMAIN_SET of a domain that does not exist yet, with a policy, a
 * delay and rank names: all of it is set, or nothing (no domain). A call
 * that fails after the change was made (its reply could not be built or
 * sent) leaves all of it set, never a part.
 */
static void sweep_nl_domain_set(void)
{
	struct sweep s = { .name = "netlink DOMAIN_SET (new domain, policy, rank names)" };
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	struct nlt *sk = nlt_must_open();
	struct olc_nl_domain got;
	unsigned int n, applied = 0;
	int ret, inj, fd, kernel_said, have;

	for (n = 1; n <= MAX_POINTS; n++) {
		snprintf(name, sizeof(name), "%s%u", dom("ds"), n);
		memset(&got, 0, sizeof(got));
		arm(n);
		ret = nlt_domain_set(sk, name, ORDLOCK_POLICY_DETECT, 9, ds_names,
				     ARRAY_SIZE(ds_names), &got);
		inj = sweep_disarm(&s);
		kernel_said = sk->nl->ext.error != 0;
		if (ret) {
			s.failed++;
			if (!nl_errno_ok(ret))
				BAD(&s, bad_err, "point %u: %s (%s)", s.name, n, strerror(-ret),
				    nlt_extack_str(sk));
			have = domain_exists(name);
			memset(&got, 0, sizeof(got));
			if (have && (nlt_domain_get(sk, name, &got) || !ds_configured(&got, name)))
				BAD(&s, bad_state, "point %u: failed, and %s is half configured",
				    s.name, n, name);
			if (have && kernel_said)
				applied++;
			ret = nlt_domain_set(sk, name, ORDLOCK_POLICY_DETECT, 9, ds_names,
					     ARRAY_SIZE(ds_names), &got);
			if (ret)
				BAD(&s, bad_after, "point %u: DOMAIN_SET again: %s", s.name, n,
				    strerror(-ret));
		} else if (!ds_configured(&got, name)) {
			BAD(&s, bad_state, "point %u: the reply does not show what was set",
			    s.name, n);
		}
		memset(&got, 0, sizeof(got));
		ret = nlt_domain_get(sk, name, &got);
		if (ret || !ds_configured(&got, name))
			BAD(&s, bad_state, "point %u: DOMAIN_GET: %s", s.name, n,
			    ret ? strerror(-ret) : "not as set");
		/* an owner works in it */
		fd = owner_in(name);
		if (acquire(fd, &k, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL) || release_all(fd) != 1)
			BAD(&s, bad_after, "point %u: an owner cannot lock in %s", s.name, n, name);
		close(fd);
		if (sweep_done(&s, inj))
			break;
	}
	nlt_close(sk);
	diag("%s: %u calls refused by the kernel after the change was made", s.name, applied);
	sweep_report(&s);
}

/*
 * The work item of a queued netlink request takes the keys after the one
 * it waited for: failslab's cache filter with times=1 fails the next
 * allocation from ordlock_resource, whoever makes it (here the work item).
 * The request must end with a RESULT (REFUSED, ENOMEM) and hold nothing.
 */
static void test_nl_work_nomem(void)
{
	const char *d = dom("nlw");
	struct ordlock_key held = ORDLOCK_EX(1, 1), keys[3];
	struct olt_holder *h;
	struct olc_nl_outcome o;
	struct nlt *sk;
	char buf[16];
	int ret;

	/* read-only in 6.1: the boot sets it (slub_debug=A,ordlock_resource) */
	if (read_str(RES_CACHE_FAILSLAB, buf, sizeof(buf)) || strcmp(buf, "1")) {
		ok(0, "netlink work item: %s is not 1 (boot with slub_debug=A,ordlock_resource)",
		   RES_CACHE_FAILSLAB);
		return;
	}
	h = olt_holder_start(d, &held, 1);
	keys[0] = held;
	keys[1] = ORDLOCK_SH(1, 2);
	keys[2] = ORDLOCK_EX(1, 3);
	sk = nlt_must_open();
	ret = nlt_acquire(sk, d, keys, 3, 60000 * NS_PER_MS, 0, 5, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_QUEUED, "netlink work item: request queued");
	/* the next ordlock_resource allocation anywhere fails, once */
	knob("cache-filter", "Y");
	knob("times", "1");
	knob("probability", "100");
	is_int(olt_holder_stop(h), 0, "netlink work item: the holder lets go");
	memset(&o, 0, sizeof(o));
	ret = nlt_wait_result(sk, 30000, &o);
	knob("probability", "0");
	knob("times", "-1");
	knob("cache-filter", "N");
	ok(!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == ENOMEM,
	   "netlink work item: RESULT refused, ENOMEM (%s)",
	   ret ? strerror(-ret) : nlt_outcome_str(&o));
	ok(o.have_failure && o.failure.reason == ORDLOCK_REASON_NOMEM,
	   "netlink work item: failure reason NOMEM");
	is_int(count_locks(d, 0), 0, "netlink work item: nothing held or queued");
	ret = nlt_acquire(sk, d, keys, 3, 0, ORDLOCK_ACQUIRE_TRY, 6, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
	   "netlink work item: the same request is granted afterwards");
	nlt_close(sk);
}

/* --- the random phase ------------------------------------------------------------------- */

#define RND_OPS		400
#define RND_PERCENT	"10"

struct rnd_shared {
	unsigned int ops, failures, bad;
	char first_bad[256];
};

static void rnd_bad(struct rnd_shared *r, const char *fmt, long a, long b)
{
	if (!r->bad++)
		snprintf(r->first_bad, sizeof(r->first_bad), fmt, a, b);
}

/*
 * A child that fails 10% of its own allocations (task-filter, make-it-fail)
 * while it runs a mix of ioctl and netlink calls; it prints nothing
 * meanwhile (the output goes to 9p, whose allocations would fail too) and
 * keeps its memory locked (a page fault must not fail).
 */
static int rnd_main(void *arg)
{
	struct rnd_shared *r = arg;
	struct ordlock_key keys[8];
	struct olc_nl_outcome o;
	struct nlt *sk = nlt_must_open();
	char dname[ORDLOCK_DOMAIN_NAME_MAX], nldom[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int i, j, nk, seed = 12345;
	long before, after;
	int fd, mif, ret, null;

	fd = owner_in(dom("rnd"));
	snprintf(nldom, sizeof(nldom), "%s", dom("rndnl"));
	/* warm up: what the calls allocate in user space is there already */
	keys[0] = ORDLOCK_EX(1, 1);
	for (i = 0; i < 20; i++) {
		nlt_acquire(sk, nldom, keys, 1, 0, ORDLOCK_ACQUIRE_TRY, 0, &o);
		nlt_release(sk, NULL, 0, &o);
	}
	/* the TAP output is on 9p, whose allocations fail too: no output */
	fflush(NULL);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		return 19;
	mif = open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);
	if (mif < 0 || mlockall(MCL_CURRENT | MCL_FUTURE))
		return 20;
	if (write(mif, "1", 1) != 1)
		return 21;
	for (i = 0; i < RND_OPS; i++) {
		nk = 1 + rand_r(&seed) % 8;
		for (j = 0; j < nk; j++)
			keys[j] = ordlock_key(1 + j, rand_r(&seed) % 64, j % 2 ? SH : EX);
		before = nheld(fd);
		switch (rand_r(&seed) % 5) {
		case 0:
		case 1:
			ret = acquire(fd, keys, nk, ORDLOCK_ACQUIRE_TRY, 0, NULL);
			after = nheld(fd);
			if (ret && ret != -ENOMEM && ret != -EDEADLK && ret != -EAGAIN)
				rnd_bad(r, "acquire: errno %ld (%ld)", -ret, 0);
			if (ret && after != before)
				rnd_bad(r, "failed acquire: held %ld, then %ld", before, after);
			break;
		case 2:
			ret = release_all(fd);
			if (ret < 0)
				rnd_bad(r, "RELEASE_ALL: errno %ld (%ld)", -ret, 0);
			break;
		case 3:
			snprintf(dname, sizeof(dname), "%s%u", dom("rnd"), rand_r(&seed) % 4);
			ret = set_domain(fd, dname);
			if (ret && ret != -ENOMEM && ret != -EBUSY)
				rnd_bad(r, "SET_DOMAIN: errno %ld (%ld)", -ret, 0);
			break;
		default:
			ret = nlt_acquire(sk, nldom, keys, nk, 0, ORDLOCK_ACQUIRE_TRY, i, &o);
			if (ret && !nl_errno_ok(ret))
				rnd_bad(r, "netlink acquire: errno %ld (%ld)", -ret, 0);
			if (!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error != ENOMEM &&
			    o.error != EDEADLK && o.error != EAGAIN)
				rnd_bad(r, "netlink acquire refused: errno %ld (%ld)", o.error, 0);
			nlt_release(sk, NULL, 0, &o);
			break;
		}
		r->ops++;
		if (ret)
			r->failures++;
	}
	if (write(mif, "0", 1) != 1)
		return 22;
	/* with injection off, the owner works */
	release_all(fd);
	if (set_domain(fd, dom("rnd")) ||
	    acquire(fd, keys, 1, ORDLOCK_ACQUIRE_TRY, 0, NULL) || release_all(fd) != 1)
		rnd_bad(r, "afterwards the owner does not work (%ld, %ld)", 0, 0);
	nlt_close(sk);
	close(fd);
	return 0;
}

static void test_random(void)
{
	struct rnd_shared *r = shm_alloc(sizeof(*r));
	pid_t pid;
	int st;

	knob("task-filter", "Y");
	knob("probability", RND_PERCENT);
	knob("interval", "1");
	knob("times", "-1");
	pid = child_start(rnd_main, r);
	st = child_wait(pid, 600);
	knob("probability", "0");
	knob("task-filter", "N");
	is_int(st, 0, "random %s%% failures: the child ran to the end", RND_PERCENT);
	ok(r->ops == RND_OPS && r->failures > 0,
	   "random %s%% failures: %u calls, %u failed", RND_PERCENT, r->ops, r->failures);
	ok(!r->bad, "random %s%% failures: only documented errnos, nothing half-built%s%s",
	   RND_PERCENT, r->bad ? ": " : "", r->first_bad);
	shm_free(r, sizeof(*r));
}

int main(void)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };

	watchdog_start(3000);
	sigaction(SIGPIPE, &sa, NULL);
	snprintf(dom_prefix, sizeof(dom_prefix), "fs%d", (int)getpid());
	failslab_setup();
	if (global_counts(&base_owners, &base_resources))
		bail_out("no \"global\" line in " DEBUGFS "stats");
	diag("before: %ld owners, %ld resources", base_owners, base_resources);

	sweep_open();
	sweep_set_domain();
	sweep_acquire(1, 0, 1);
	sweep_acquire(4, 0, 1);
	sweep_acquire(5, 2, 1);
	sweep_acquire(64, 16, 1);
	sweep_acquire(64, 0, 0);
	sweep_convert(SH, EX);
	sweep_convert(EX, SH);
	sweep_wait_timeout("ACQUIRE", ORDLOCK_POLICY_ENFORCE);
	sweep_wait_timeout("ACQUIRE", ORDLOCK_POLICY_DETECT);
	sweep_wait_timeout("CONVERT", ORDLOCK_POLICY_DETECT);
	sweep_grant_then_take();
	sweep_deadlock();
	sweep_domain_config();
	test_no_alloc();
	check_clean("ioctl sweeps", dom_prefix);

	sweep_nl_acquire(1, 0);
	sweep_nl_acquire(8, 0);
	sweep_nl_acquire(3, 1);
	sweep_nl_cancel();
	sweep_nl_convert(SH, EX);
	sweep_nl_convert(EX, SH);
	sweep_nl_domain_set();
	test_nl_work_nomem();
	check_clean("netlink sweeps", dom_prefix);

	test_random();
	check_clean("random failures", dom_prefix);
	return tap_done();
}
