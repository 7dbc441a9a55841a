// SPDX-License-Identifier: GPL-2.0
/*
 * b_domain: acquire + release of one exclusive key in a cluster domain
 * (ordlock_acquire() + ordlock_release(): the ioctls, timed from user
 * space), next to the DLM's own calls in the same run (ordlock_cltest's
 * rawbench: dlm_lock(EX) + AST + dlm_unlock() + AST, timed in the kernel),
 * locally and remotely mastered (make bench-cluster; reports, does not
 * fail).
 *
 * Node 2 masters the remote key 2:1: it holds an NL lock on its resource in
 * both lockspaces (the DLM's own, and ordlock.b_dom, the domain's) before
 * node 1 touches it. The local key 1:1 is touched by node 1 only. ROUNDS (LROUNDS for
 * the local key) rounds alternate the DLM and ordlock; the medians are reported with
 * their ratio (targets: local <= 1.2x the DLM, remote <= the DLM + 10%).
 * Each round also times the same acquire + release in a domain that is
 * not a cluster domain (b_loc): the system calls and ordlock's local part
 * alone, to tell where a cluster domain's figure goes (its fast path, and
 * with ORDLOCK_ACQUIRE_REORDER the general path, which a cluster domain's
 * key takes); and the cluster
 * domain's local key with ordlock_dlm's direct_release off (every release
 * through its clean-up work item): the direct releases' gain in the same run;
 * and the same with the domain's policy detect (no ordlock-xdetectd: the
 * kernel's path of a detect domain's key in the DLM, issue 41).
 * Each local round also times ordlock_dlm through the seam alone
 * (ordlock_cltest's bench in the space of domain b_seam, timed in the
 * kernel: no system call per iteration), and, where the DLM has the flag
 * (ORDLOCK_DLM_LSFL_CB, compat.h: 6.12), the DLM's own calls in a
 * lockspace with that flag too (b_dom_rawcb), as ordlock_dlm's lockspaces
 * have it: the fair reference there; both references are reported.
 * Every local run counts the context switches it cost, per acquire +
 * release: the bench task's own (voluntary, involuntary:
 * /proc/self/status) and the whole guest's (/proc/stat ctxt, the DLM's
 * callback worker and ordlock_dlm's work items included).
 * And each local round times the DLM called from user space, as an
 * application without ordlock would call it: libdlm's dlm_ls_lock_wait()
 * + dlm_ls_unlock_wait() (libdlm_lt: no thread; each call a write() to
 * the lockspace's device and a read() of its AST), in a lockspace of node
 * 1 alone (b_dom_user), where every resource is mastered locally.
 * Under CLUSTER_ICOUNT=1 (make bench-cluster ICOUNT=1) the guests' clocks
 * count instructions, and every figure is instructions, the same run after
 * run.
 *
 * cluster-timeout: 900
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if __has_include(<libdlm.h>)
#include <libdlm.h>
#define HAVE_LIBDLM 1
#else
#define HAVE_LIBDLM 0
#endif

#include "clcase.h"
#include "libordlock.h"
#include "tap.h"

#define CLT	"/sys/kernel/debug/ordlock_cltest"
#define ROUNDS	5
/* the local key's rounds (short, and the noisier under a loaded host) */
#define LROUNDS	15

static const char *dom = "b_dom";
/* a domain that is no cluster domain: the same calls without the DLM */
static const char *loc_dom = "b_loc";

/* context switches: the task's voluntary, involuntary, the guest's */
struct sw {
	long long vol, nonvol, ctxt;
};

static long long read_field(const char *path, const char *name)
{
	size_t len = strlen(name);
	long long v = -1;
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len)) {
			v = atoll(line + len);
			break;
		}
	fclose(f);
	return v;
}

static void sw_read(struct sw *s)
{
	s->vol = read_field("/proc/self/status", "voluntary_ctxt_switches:");
	s->nonvol = read_field("/proc/self/status", "nonvoluntary_ctxt_switches:");
	s->ctxt = read_field("/proc/stat", "ctxt ");
}


static int clt_cmd(int fd, const char *cmd)
{
	return write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd) ? 0 : -1;
}

/*
 * ordlock_cltest's @what ("rawbench": the DLM's calls; "bench": the seam)
 * of @key N times; ns per acquire + release, or -1
 */
static long long clt_bench(int fd, const char *what, const char *key, int n)
{
	unsigned long long cnt, ns;
	char cmd[64], buf[256];
	ssize_t len;
	char *p;

	snprintf(cmd, sizeof(cmd), "%s %s %d", what, key, n);
	if (clt_cmd(fd, cmd))
		return -1;
	len = pread(fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	p = strstr(buf, "bench ");
	if (!p || sscanf(p, "bench %llu %llu", &cnt, &ns) != 2 || !cnt)
		return -1;
	return (long long)(ns / cnt);
}

static long long dom_bench_flags(struct ordlock *ol, uint32_t rank,
				 uint64_t id, int n, unsigned int flags)
{
	struct ordlock_key k = ORDLOCK_EX(rank, id);
	struct timespec a, b;
	int i;

	/* the first round creates the resource: not timed */
	for (i = -1; i < n; i++) {
		if (i == 0)
			clock_gettime(CLOCK_MONOTONIC, &a);
		if (ordlock_acquire(ol, &k, 1, 60000, flags, NULL) ||
		    ordlock_release(ol, &k, 1))
			return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec)) / n;
}

#if HAVE_LIBDLM
/*
 * The DLM from user space (libdlm_lt): EX + unlock of @name in @ls @n
 * times; ns per lock + unlock, or -1
 */
static long long user_bench(dlm_lshandle_t ls, const char *name, int n)
{
	struct dlm_lksb lksb;
	struct timespec a, b;
	int i;

	for (i = -1; i < n; i++) {
		if (i == 0)
			clock_gettime(CLOCK_MONOTONIC, &a);
		memset(&lksb, 0, sizeof(lksb));
		if (dlm_ls_lock_wait(ls, LKM_EXMODE, &lksb, 0, name, strlen(name),
				     0, NULL, NULL, NULL) || lksb.sb_status)
			return -1;
		if (dlm_ls_unlock_wait(ls, lksb.sb_lkid, 0, &lksb) ||
		    lksb.sb_status != EUNLOCK)
			return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec)) / n;
}
#endif

static long long raw_bench(int fd, const char *key, int n)
{
	return clt_bench(fd, "rawbench", key, n);
}

static long long dom_bench(struct ordlock *ol, uint32_t rank, uint64_t id, int n)
{
	return dom_bench_flags(ol, rank, id, n, 0);
}

/*
 * ORDLOCK_BENCH_PROFILE=1 (make bench-cluster): node 1 profiles each local
 * loop with the guest's perf (Debian's linux-perf matches the 6.1 guest),
 * system-wide, so that the DLM's callback worker and ordlock_dlm's work
 * items are in it: perf-LOOP.txt, per symbol, in the case's shared
 * directory. @loop names it; @run runs it (a loop of @n).
 */
static void profile(const char *loop, long long (*run)(void *, int), void *arg,
		    int n)
{
	const char *dir = getenv("ORDLOCK_SHARED");
	char data[128], cmd[512];
	int status;
	pid_t pid;

	snprintf(data, sizeof(data), "/tmp/perf-%s.data", loop);
	/* every 250 us of cpu-clock, never throttled: counts per iteration */
	if (system("echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent"))
		diag("profile: perf's throttling stays on");
	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		/*
		 * Real-time and a large buffer: a loop inside one system call
		 * (the seam's, the DLM's) leaves a normal task little CPU on
		 * the guest's one vCPU, and its samples would be lost
		 */
		execlp("chrt", "chrt", "-f", "10", "perf", "record", "-q",
		       "-e", "cpu-clock", "-c", "250000", "-a", "-m", "1024",
		       "-o", data,
		       (char *)NULL);
		_exit(127);
	}
	sleep(1);
	diag("profile %s: %d iterations, %lld ns per acquire + release", loop, n,
	     run(arg, n));
	kill(pid, SIGINT);
	waitpid(pid, &status, 0);
	/* sample counts (-n): per iteration, the loops compare */
	snprintf(cmd, sizeof(cmd),
		 "for s in comm dso sym; do perf report -i %s --stdio -n --no-children --sort $s --percent-limit 0.2; done >%s/perf-%s.txt 2>&1",
		 data, dir ? dir : "/tmp", loop);
	if (system(cmd))
		diag("profile %s: perf report failed", loop);
}

struct prof_arg {
	int fd;
	struct ordlock *ol;
	const char *what;
	unsigned int flags;
};

/* in chunks of 500: back to user space (and perf) between them */
static long long prof_clt(void *p, int n)
{
	struct prof_arg *a = p;
	long long sum = 0, v;
	int i;

	for (i = 0; i < n / 500; i++) {
		v = clt_bench(a->fd, a->what, "1 1", 500);
		if (v < 0)
			return -1;
		sum += v;
	}
	return i ? sum / i : -1;
}

static long long prof_dom(void *p, int n)
{
	struct prof_arg *a = p;

	return dom_bench_flags(a->ol, 1, 1, n, a->flags);
}

/* the switches of each kind of local run, per round (hundredths) */
enum { SW_RAW, SW_RAWCB, SW_SEAM, SW_DOM, SW_N };
static long long swv[SW_N][3][LROUNDS];
static const char *const sw_name[SW_N] = {
	"dlm (flags 0)", "dlm (ordlock_dlm's flags)", "seam", "cluster domain",
};

/*
 * The switches since *@s per iteration of @n (hundredths) as round @r of
 * @kind when @keep (a local run); *@s is then read again, for the next run
 */
static void sw_note(int kind, int r, int n, int keep, struct sw *s)
{
	struct sw b;

	sw_read(&b);
	if (keep) {
		swv[kind][0][r] = (b.vol - s->vol) * 100 / n;
		swv[kind][1][r] = (b.nonvol - s->nonvol) * 100 / n;
		swv[kind][2][r] = (b.ctxt - s->ctxt) * 100 / n;
	}
	*s = b;
}

/*
 * ordlock_dlm's debug messages @on or off: the harness loads it with them
 * on (diagnostics); off while timing, as the DLM's own calls print nothing
 */
static int dyndbg(int on)
{
	const char *cmd = on ? "module ordlock_dlm +p" : "module ordlock_dlm -p";
	int fd = open("/sys/kernel/debug/dynamic_debug/control", O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd) ? 0 : -1;
	close(fd);
	return ret;
}

/* Domain @d's policy @policy */
static int set_policy(struct ordlock *cfg, const char *d, uint32_t policy)
{
	struct ordlock_domain_config c = {
		.flags = ORDLOCK_DOMAIN_SET_POLICY,
		.policy = policy,
	};

	return ordlock_domain_config(cfg, d, &c);
}

/* ordlock_dlm's direct releases @on or off (its parameter direct_release) */
static int direct_release(int on)
{
	int fd = open("/sys/module/ordlock_dlm/parameters/direct_release", O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, on ? "Y" : "N", 1) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* "WHAT: V1 V2 ... ns" */
static void diag_rounds(const char *what, const long long *v, int n)
{
	char buf[512];
	int i, len;

	len = snprintf(buf, sizeof(buf), "%s", what);
	for (i = 0; i < n && len < (int)sizeof(buf); i++)
		len += snprintf(buf + len, sizeof(buf) - len, " %lld", v[i]);
	diag("%s ns", buf);
}

static long long median(long long *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[(n - 1) / 2];
}

/* the median of each kind of switch of @k's runs, "A vol + B invol, C all" */
static void sw_diag(int k)
{
	long long m[3];
	int j;

	for (j = 0; j < 3; j++)
		m[j] = median(swv[k][j], LROUNDS);
	diag("bench switches per local acquire + release, %s: task %lld.%02lld voluntary + %lld.%02lld involuntary, guest %lld.%02lld",
	     sw_name[k], m[0] / 100, m[0] % 100, m[1] / 100, m[1] % 100,
	     m[2] / 100, m[2] % 100);
}

/* CLUSTER_ICOUNT=1: the guest's ns are instructions */
static int icount;

/* @v ns (instructions under icount) as the summary lines print it */
static void diag_one(const char *what, long long v, const char *tail)
{
	if (icount)
		diag("%s %lld instructions%s", what, v, tail);
	else
		diag("%s %lld us%s", what, v / 1000, tail);
}

/* the ratio's line of @what: the medians of @dv (the DLM) and @ov */
static void ratio_diag(const char *what, const char *ref, long long *dv,
		       long long *ov, int n, const char *target)
{
	long long d = median(dv, n), o = median(ov, n);

	if (icount)
		diag("bench %s: dlm%s %lld instructions, ordlock cluster domain %lld instructions, ratio %.2fx (target <= %s)",
		     what, ref, d, o, d ? (double)o / (double)d : 0.0, target);
	else
		diag("bench %s: dlm%s %lld us, ordlock cluster domain %lld us, ratio %.2fx (target <= %s)",
		     what, ref, d / 1000, o / 1000, d ? (double)o / (double)d : 0.0, target);
	ok(1, "node1: %s: dlm%s %lld ns, cluster domain %lld ns (%.2fx)", what, ref,
	   d, o, d ? (double)o / (double)d : 0.0);
}

int main(void)
{
	struct ordlock_domain_config off = { .flags = ORDLOCK_DOMAIN_SET_CLUSTER };
	/* [local/remote][dlm/ordlock/dlm with the flag][round] */
	long long v[2][3][LROUNDS];
	long long loc[LROUNDS];		/* b_loc, every local round */
	long long work[LROUNDS];	/* b_dom local, direct_release off */
	long long det[LROUNDS];		/* b_dom local, policy detect */
	struct ordlock_domain_config pol = { .flags = 0 };
	long long slow[LROUNDS];	/* b_loc, the general path (REORDER) */
	long long seam[LROUNDS];	/* ordlock_dlm's seam alone (b_seam) */
	long long user[LROUNDS];	/* the DLM from user space (libdlm) */
	int have_user = 0;
#if HAVE_LIBDLM
	dlm_lshandle_t uls = NULL;
#endif
	int nr[2] = { LROUNDS, ROUNDS };
	int nloc = getenv("BENCH_N_LOCAL") ? atoi(getenv("BENCH_N_LOCAL")) : 2000;
	int nrem = getenv("BENCH_N_REMOTE") ? atoi(getenv("BENCH_N_REMOTE")) : 100;
	struct ordlock *cfg, *ol = NULL, *lol;
	int fd, fd2 = -1, fdcb = -1, fdseam = -1, r, w, bad = 0, cb = 0;
	struct sw s0;

	cl_init();
	icount = getenv("BENCH_ICOUNT") && atoi(getenv("BENCH_ICOUNT"));
	if (cl_nodes < 2 || access(CLT, F_OK)) {
		printf("1..0 # SKIP needs 2 nodes and ordlock_cltest\n");
		return 0;
	}
	cfg = ordlock_open("default");
	if (!cfg)
		bail_out("ordlock_open: %s", strerror(errno));
	cl_domain_on(cfg, dom);
	fd = open(CLT, O_RDWR);
	fdcb = open(CLT, O_RDWR);
	if (fd < 0 || fdcb < 0)
		bail_out("open %s: %s", CLT, strerror(errno));
	/* the DLM's lockspace with ordlock_dlm's flags, where it has them */
	cb = !clt_cmd(fdcb, "rawjoin b_dom_rawcb cb");
	if (!cb)
		diag("node%d: no lockspace with ordlock_dlm's flags (%s): the DLM has no callback flag here, one reference",
		     cl_node, strerror(errno));
	if (cl_node == 2) {
		fd2 = open(CLT, O_RDWR);
		ok(!clt_cmd(fd, "rawjoin b_dom_raw") && !clt_cmd(fd, "rawhold 2 1"),
		   "node2: masters 2:1 of the DLM's lockspace b_dom_raw (NL held)");
		ok(fd2 >= 0 && !clt_cmd(fd2, "rawjoin ordlock.b_dom") && !clt_cmd(fd2, "rawhold 2 1"),
		   "node2: masters 2:1 of ordlock.b_dom (NL held)");
		if (cb)
			ok(!clt_cmd(fdcb, "rawhold 2 1"),
			   "node2: masters 2:1 of the DLM's lockspace b_dom_rawcb (NL held)");
	}
	cl_barrier("mastered");
	if (cl_node == 1) {
		ok(!clt_cmd(fd, "rawjoin b_dom_raw"), "node1: joined the DLM's lockspace b_dom_raw");
		fdseam = open(CLT, O_RDWR);
		ok(fdseam >= 0 && !clt_cmd(fdseam, "join b_seam"),
		   "node1: joined domain b_seam's space through the seam");
		ol = ordlock_open(dom);
		if (!ol)
			bail_out("ordlock_open(%s): %s", dom, strerror(errno));
		lol = ordlock_open(loc_dom);
		if (!lol)
			bail_out("ordlock_open(%s): %s", loc_dom, strerror(errno));
#if HAVE_LIBDLM
		uls = dlm_create_lockspace("b_dom_user", 0600);
		have_user = uls != NULL;
		ok(have_user, "node1: libdlm made the lockspace b_dom_user (%s)",
		   have_user ? "node 1 alone" : strerror(errno));
#else
		diag("node1: built without libdlm's header (libdlm-dev): no user-space DLM peer");
#endif
		if (ordlock_domain_config(cfg, dom, &pol))
			bail_out("read %s's policy: %s", dom, strerror(errno));
		if (!dyndbg(0))
			diag("ordlock_dlm's debug messages off while timing");
		for (r = 0; r < LROUNDS; r++) {
			for (w = 0; w < 2; w++) {
				const char *key = w ? "2 1" : "1 1";
				int n = w ? nrem : nloc;

				if (r >= nr[w])
					continue;
				sw_read(&s0);
				v[w][0][r] = raw_bench(fd, key, n);
				sw_note(SW_RAW, r, n, !w, &s0);
				v[w][2][r] = cb ? raw_bench(fdcb, key, n) : 0;
				sw_note(SW_RAWCB, r, n, !w && cb, &s0);
				v[w][1][r] = dom_bench(ol, w + 1, 1, n);
				sw_note(SW_DOM, r, n, !w, &s0);
				if (!w)
					seam[r] = clt_bench(fdseam, "bench", key, n);
				sw_note(SW_SEAM, r, n, !w, &s0);
				bad += v[w][0][r] < 0 || v[w][1][r] < 0 || v[w][2][r] < 0 ||
				       (!w && seam[r] < 0);
			}
			loc[r] = dom_bench(lol, 1, 1, nloc);
			bad += loc[r] < 0;
#if HAVE_LIBDLM
			user[r] = have_user ? user_bench(uls, "b_user 1:1", nloc) : 0;
			bad += user[r] < 0;
#endif
			/* REORDER: the general path a cluster domain's key takes */
			slow[r] = dom_bench_flags(lol, 1, 1, nloc, ORDLOCK_ACQUIRE_REORDER);
			bad += slow[r] < 0;
			bad += direct_release(0) < 0;
			work[r] = dom_bench(ol, 1, 1, nloc);
			bad += direct_release(1) < 0 || work[r] < 0;
			bad += set_policy(cfg, dom, ORDLOCK_POLICY_DETECT) < 0;
			det[r] = dom_bench(ol, 1, 1, nloc);
			bad += set_policy(cfg, dom, pol.policy) < 0 || det[r] < 0;
		}
		if (getenv("BENCH_PROFILE") && atoi(getenv("BENCH_PROFILE"))) {
			struct prof_arg raw = { .fd = fd, .what = "rawbench" };
			struct prof_arg seam_a = { .fd = fdseam, .what = "bench" };
			struct prof_arg dom_a = { .ol = ol };
			struct prof_arg loc_a = { .ol = lol };
			struct prof_arg slow_a = { .ol = lol, .flags = ORDLOCK_ACQUIRE_REORDER };

			profile("dlm", prof_clt, &raw, 20 * nloc);
			profile("seam", prof_clt, &seam_a, 20 * nloc);
			profile("domain", prof_dom, &dom_a, 20 * nloc);
			if (!set_policy(cfg, dom, ORDLOCK_POLICY_DETECT)) {
				profile("detect", prof_dom, &dom_a, 20 * nloc);
				set_policy(cfg, dom, pol.policy);
			}
			profile("local", prof_dom, &loc_a, 100 * nloc);
			profile("general", prof_dom, &slow_a, 100 * nloc);
		}
		dyndbg(1);
		is_int(bad, 0, "node1: every run completed");
		if (!bad) {
			diag_rounds("bench no-cluster domain:", loc, LROUNDS);
			diag_one("bench no-cluster domain:", median(loc, LROUNDS),
				 " per acquire + release (the system calls and ordlock's local part)");
			diag_rounds("bench no-cluster domain, general path (REORDER):", slow, LROUNDS);
			diag_one("bench no-cluster domain, general path:", median(slow, LROUNDS),
				 " per acquire + release (a cluster domain's key goes this way)");
			diag_rounds("bench work domain local (direct_release off):", work, LROUNDS);
			diag_one("bench local-mastered, releases by the work item: ordlock cluster domain",
				 median(work, LROUNDS), "");
			diag_rounds("bench detect domain local (no daemon):", det, LROUNDS);
			diag_one("bench local-mastered, policy detect: ordlock cluster domain",
				 median(det, LROUNDS), "");
		}
		ordlock_close(lol);
		for (w = 0; w < 2 && !bad; w++) {
			const char *what = w ? "remote-mastered" : "local-mastered";
			const char *target = w ? "1.10x" : "1.20x";

			diag_rounds(w ? "bench dlm remote:" : "bench dlm local:", v[w][0], nr[w]);
			if (cb)
				diag_rounds(w ? "bench dlm remote, ordlock_dlm's flags:" :
					    "bench dlm local, ordlock_dlm's flags:", v[w][2], nr[w]);
			diag_rounds(w ? "bench domain remote:" : "bench domain local:", v[w][1], nr[w]);
			ratio_diag(what, "", v[w][0], v[w][1], nr[w], target);
			if (cb)
				ratio_diag(what, " (ordlock_dlm's flags)", v[w][2], v[w][1], nr[w],
					   target);
			if (w)
				continue;
			diag_rounds("bench seam local:", seam, LROUNDS);
			ratio_diag("local-mastered, the seam alone", "", v[0][0], seam, LROUNDS, target);
			if (cb)
				ratio_diag("local-mastered, the seam alone", " (ordlock_dlm's flags)",
					   v[0][2], seam, LROUNDS, target);
			if (have_user) {
				diag_rounds("bench dlm local from user space (libdlm):", user, LROUNDS);
				ratio_diag("local-mastered, against the DLM from user space",
					   " (libdlm)", user, v[0][1], LROUNDS, "1.20x");
			}
			for (r = 0; r < SW_N; r++)
				if (r != SW_RAWCB || cb)
					sw_diag(r);
		}
		ordlock_close(ol);
	}
#if HAVE_LIBDLM
	if (uls)
		ok(!dlm_release_lockspace("b_dom_user", uls, 1),
		   "node1: libdlm released the lockspace b_dom_user");
#endif
	cl_barrier("measured");
	close(fd);
	close(fdcb);
	if (fd2 >= 0)
		close(fd2);
	if (fdseam >= 0)
		close(fdseam);
	ok(ordlock_domain_config(cfg, dom, &off) == 0, "node%d: %s set cluster off",
	   cl_node, dom);
	ordlock_close(cfg);
	return tap_done();
}
