// SPDX-License-Identifier: GPL-2.0
/*
 * t_policy: the policies of a domain and who may set them.
 *
 *  - ORDLOCK_IOC_DOMAIN_CONFIG: reading needs nothing; changing needs
 *    CAP_SYS_ADMIN (EPERM without it, whether root without the capability
 *    or nobody); unknown policies, flags, reserved bits and bad names are
 *    EINVAL and change nothing; the module parameter default_policy gives
 *    new domains their policy.
 *  - "timeout": the warehouse cycle is not broken; both transfers wait,
 *    the graph shows the cycle while they do, then both time out; and the
 *    seed's 200 ms example, with the stock left untouched.
 *  - "detect" with a detection delay: the cycle is visible during the
 *    delay, then exactly one victim.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE
#define ACQ ORDLOCK_IOC_ACQUIRE

#define LONG_MS		30000

#define PARAM_POLICY	"/sys/module/ordlock/parameters/default_policy"

static int config_raw(struct ordlock *ol, struct ordlock_domain_config *cfg,
		      const char *name, unsigned int flags,
		      unsigned int policy, unsigned int delay)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->flags = flags;
	snprintf(cfg->name, sizeof(cfg->name), "%s", name);
	cfg->policy = policy;
	cfg->detect_delay_ms = delay;
	return ioctl(ordlock_fd(ol), ORDLOCK_IOC_DOMAIN_CONFIG, cfg);
}

/* The policy and delay of @name, read without changing anything */
static int read_config(struct ordlock *ol, const char *name,
		       unsigned int *policy, unsigned int *delay)
{
	struct ordlock_domain_config cfg;
	int ret = config_raw(ol, &cfg, name, 0, 0, 0);

	if (ret)
		return -errno;
	*policy = cfg.policy;
	*delay = cfg.detect_delay_ms;
	return 0;
}

static void test_config(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_domain_config cfg;
	struct ordlock_owner_info info;
	struct ordlock *ol = olt_open(NULL), *in;
	unsigned int policy = 99, delay = 99;

	snprintf(domain, sizeof(domain), "%s", olt_domain("cfg"));
	is_int(config_raw(ol, &cfg, domain, 0, 0, 0), 0,
	       "config: reading a new domain's settings");
	is_int(cfg.policy, ORDLOCK_POLICY_ENFORCE, "config: it starts enforce");
	is_int(cfg.detect_delay_ms, 0, "config: with no detection delay");
	is_int(cfg.nowners, 0, "config: and no owners");

	is_int(ordlock_set_policy(ol, domain, ORDLOCK_POLICY_DETECT, 250), 0,
	       "config: set detect, delay 250 ms");
	is_int(read_config(ol, domain, &policy, &delay), 0, "config: read back");
	is_int(policy, ORDLOCK_POLICY_DETECT, "config: policy detect");
	is_int(delay, 250, "config: delay 250");

	in = olt_open(domain);
	is_int(ordlock_owner_info(in, &info), 0, "config: an owner in it");
	is_int(info.policy, ORDLOCK_POLICY_DETECT,
	       "config: OWNER_INFO reports the domain's policy");
	is_int(config_raw(ol, &cfg, domain, 0, 0, 0), 0, "config: read again");
	is_int(cfg.nowners, 1, "config: nowners 1");
	ordlock_close(in);

	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = ORDLOCK_DOMAIN_SET_POLICY;
	cfg.policy = ORDLOCK_POLICY_TIMEOUT;
	is_int(ordlock_domain_config(ol, domain, &cfg), 0,
	       "config: SET_POLICY alone: timeout");
	is_int(read_config(ol, domain, &policy, &delay), 0, "config: read back");
	ok(policy == ORDLOCK_POLICY_TIMEOUT && delay == 250,
	   "config: the policy changed, the delay did not (%u, %u)", policy,
	   delay);
	cfg.flags = ORDLOCK_DOMAIN_SET_DETECT_DELAY;
	cfg.detect_delay_ms = 0;
	is_int(ordlock_domain_config(ol, domain, &cfg), 0,
	       "config: SET_DETECT_DELAY alone: 0");
	read_config(ol, domain, &policy, &delay);
	ok(policy == ORDLOCK_POLICY_TIMEOUT && delay == 0,
	   "config: the delay changed, the policy did not (%u, %u)", policy,
	   delay);

	/* bad input: EINVAL, nothing changes */
	is_errno(config_raw(ol, &cfg, domain, ORDLOCK_DOMAIN_SET_POLICY, 3, 0),
		 EINVAL, "config: policy 3: EINVAL");
	is_errno(config_raw(ol, &cfg, domain, ORDLOCK_DOMAIN_SET_POLICY,
			    0xffffffffU, 0),
		 EINVAL, "config: policy 0xffffffff: EINVAL");
	is_errno(ordlock_set_policy(ol, domain, 7, 0), EINVAL,
		 "config: ordlock_set_policy(7): EINVAL");
	is_errno(config_raw(ol, &cfg, domain, 1U << 7, 0, 0), EINVAL,
		 "config: unknown flag 1 << 7: EINVAL");
	is_errno(config_raw(ol, &cfg, domain, 1U << 31, 0, 0), EINVAL,
		 "config: unknown flag 1 << 31: EINVAL");
	is_errno(config_raw(ol, &cfg, domain, ORDLOCK_DOMAIN_SET_POLICY | 1U << 7,
			    ORDLOCK_POLICY_DETECT, 0),
		 EINVAL, "config: a known flag with an unknown one: EINVAL");
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	snprintf(cfg.name, sizeof(cfg.name), "%s", domain);
	cfg.max_hold_ms = 1;
	is_int(ioctl(ordlock_fd(ol), ORDLOCK_IOC_DOMAIN_CONFIG, &cfg), 0,
	       "config: max_hold_ms without its flag: read only");
	is_int(cfg.max_hold_ms, 0, "config: ... and max_hold_ms stays 0");
	is_errno(config_raw(ol, &cfg, "", 0, 0, 0), EINVAL,
		 "config: empty name: EINVAL");
	is_errno(config_raw(ol, &cfg, "a b", 0, 0, 0), EINVAL,
		 "config: name with a space: EINVAL");
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	memset(cfg.name, 'a', sizeof(cfg.name));
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_DOMAIN_CONFIG, &cfg), EINVAL,
		 "config: name without its NUL: EINVAL");
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = 12;
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_DOMAIN_CONFIG, &cfg), EINVAL,
		 "config: size too small: EINVAL");
	read_config(ol, domain, &policy, &delay);
	ok(policy == ORDLOCK_POLICY_TIMEOUT && delay == 0,
	   "config: none of that changed the domain (%u, %u)", policy, delay);
	ordlock_close(ol);
}

struct unpriv {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	int as_nobody;
	int drop_ret;
	int set_ret;
	int set_delay_ret;
	int bad_policy_ret;
	int read_ret;
	unsigned int read_policy;
	int acquire_ret;
	int debugfs_errno;
};

static struct unpriv *up;

static int unpriv_main(void *arg)
{
	struct ordlock_domain_config cfg;
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct ordlock *ol;
	int fd;

	(void)arg;
	/* open first, as root: the device is 0660 root */
	ol = ordlock_open(NULL);
	if (!ol)
		return 1;
	if (up->as_nobody)
		up->drop_ret = setgid(65534) || setuid(65534) ? -errno : 0;
	else
		up->drop_ret = olt_drop_cap(CAP_SYS_ADMIN);
	if (up->drop_ret)
		return 2;
	up->set_ret = ordlock_set_policy(ol, up->domain, ORDLOCK_POLICY_DETECT, 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = ORDLOCK_DOMAIN_SET_DETECT_DELAY;
	cfg.detect_delay_ms = 1000;
	up->set_delay_ret = ordlock_domain_config(ol, up->domain, &cfg);
	up->bad_policy_ret = ordlock_set_policy(ol, up->domain, 9, 0);
	memset(&cfg, 0, sizeof(cfg));
	up->read_ret = ordlock_domain_config(ol, up->domain, &cfg);
	up->read_policy = cfg.policy;
	up->acquire_ret = ordlock_acquire(ol, &k, 1, LONG_MS, 0, NULL);
	fd = open(GT_DEBUGFS "graph", O_RDONLY);
	up->debugfs_errno = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	ordlock_close(ol);
	return 0;
}

static void test_unprivileged(int as_nobody)
{
	const char *who = as_nobody ? "nobody" : "root without CAP_SYS_ADMIN";
	struct ordlock *ol = olt_open(NULL);
	unsigned int policy = 99, delay = 99;

	up = shm_alloc(sizeof(*up));
	up->as_nobody = as_nobody;
	gt_new_domain(up->domain, "perm", ORDLOCK_POLICY_TIMEOUT, 500);
	is_int(child_wait(child_start(unpriv_main, NULL), 0), 0,
	       "%s: the child ran", who);
	is_int(up->drop_ret, 0, "%s: privileges dropped after opening", who);
	/* -EPERM is -1: compare the values, errno is the child's */
	is_int(up->set_ret, -EPERM, "%s: setting the policy: EPERM", who);
	is_int(up->set_delay_ret, -EPERM, "%s: setting the delay: EPERM", who);
	ok(up->bad_policy_ret == -EINVAL || up->bad_policy_ret == -EPERM,
	   "%s: an unknown policy: EINVAL or EPERM (%s)", who,
	   strerror(-up->bad_policy_ret));
	is_int(up->read_ret, 0, "%s: reading the settings is allowed", who);
	is_int(up->read_policy, ORDLOCK_POLICY_TIMEOUT, "%s: and shows timeout",
	       who);
	is_int(up->acquire_ret, 0, "%s: locking works as usual", who);
	if (as_nobody)
		is_int(up->debugfs_errno, EACCES,
		       "%s: the debugfs files are root's", who);
	is_int(read_config(ol, up->domain, &policy, &delay), 0,
	       "%s: the domain, read by root", who);
	ok(policy == ORDLOCK_POLICY_TIMEOUT && delay == 500,
	   "%s: is unchanged (%u, %u)", who, policy, delay);
	shm_free(up, sizeof(*up));
	ordlock_close(ol);
}

/* default_policy: the policy of new domains, by name */
static char saved_policy[32];

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

static void restore_policy(void)
{
	if (saved_policy[0])
		write_str(PARAM_POLICY, saved_policy);
}

static void test_default_policy(void)
{
	struct ordlock *ol = olt_open(NULL);
	char *cur = gt_read_file(PARAM_POLICY), domain[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int policy = 99, delay = 99;

	ok(cur != NULL, "default_policy: the parameter exists");
	if (!cur) {
		ordlock_close(ol);
		return;
	}
	cur[strcspn(cur, "\n")] = '\0';
	snprintf(saved_policy, sizeof(saved_policy), "%s", cur);
	atexit(restore_policy);
	is_int(strcmp(cur, "enforce"), 0, "default_policy: enforce (\"%s\")",
	       cur);
	free(cur);

	is_int(write_str(PARAM_POLICY, "detect"), 0,
	       "default_policy: set to detect");
	snprintf(domain, sizeof(domain), "%s", olt_domain("defpol"));
	is_int(read_config(ol, domain, &policy, &delay), 0,
	       "default_policy: a new domain");
	is_int(policy, ORDLOCK_POLICY_DETECT, "default_policy: starts detect");
	is_errno(write_str(PARAM_POLICY, "sometimes"), EINVAL,
		 "default_policy: an unknown name: EINVAL");
	cur = gt_read_file(PARAM_POLICY);
	ok(cur && !strncmp(cur, "detect", 6),
	   "default_policy: and it stays detect");
	free(cur);
	is_int(write_str(PARAM_POLICY, "timeout"), 0,
	       "default_policy: set to timeout");
	snprintf(domain, sizeof(domain), "%s", olt_domain("defpol"));
	read_config(ol, domain, &policy, &delay);
	is_int(policy, ORDLOCK_POLICY_TIMEOUT, "default_policy: a new domain starts timeout");
	restore_policy();
	cur = gt_read_file(PARAM_POLICY);
	ok(cur && !strncmp(cur, saved_policy, strlen(saved_policy)),
	   "default_policy: restored");
	free(cur);
	ordlock_close(ol);
}

/*
 * The warehouse cycle in a "timeout" domain: A holds 1:1 and asks for
 * 1:2, B holds 1:2 and asks for 1:1; nothing is broken, the graph shows
 * both hard edges while they wait, then both time out.
 */
static void test_timeout_policy(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	struct gt_edge e[4];
	struct gt_owner o[4];
	struct gt_stats st;
	int n, i, ab = 0, ba = 0, wa = 0, wb = 0;

	gt_new_domain(domain, "tmo", ORDLOCK_POLICY_TIMEOUT, 0);
	a = gt_actor_start("tmo-a", domain, 1);
	b = gt_actor_start("tmo-b", domain, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0),
	   "timeout: A holds 1:1, B holds 1:2");
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, 5000, 0);
	is_int(gt_blocked(a, ACQ), 0, "timeout: A waits for 1:2");
	gt_submit1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, 5000, 0);
	is_int(gt_blocked(b, ACQ), 0,
	       "timeout: B waits for 1:1: the cycle is closed, and not broken");

	n = gt_graph_read(domain, e, 4);
	for (i = 0; i < n && i < 4; i++) {
		if (e[i].waiter_id == a->owner_id[0] &&
		    e[i].waiter_pid == a->pid && !strcmp(e[i].waiter_comm, "tmo-a") &&
		    e[i].blocker_id == b->owner_id[0] &&
		    e[i].blocker_pid == b->pid &&
		    e[i].rank == 1 && e[i].id == 2 && e[i].mode == EX &&
		    e[i].blocker_mode == EX && e[i].edge == ORDLOCK_EDGE_HARD)
			ab = 1;
		if (e[i].waiter_id == b->owner_id[0] &&
		    e[i].waiter_pid == b->pid &&
		    e[i].blocker_id == a->owner_id[0] &&
		    e[i].blocker_pid == a->pid && !strcmp(e[i].blocker_comm, "tmo-a") &&
		    e[i].rank == 1 && e[i].id == 1 && e[i].mode == EX &&
		    e[i].blocker_mode == EX && e[i].edge == ORDLOCK_EDGE_HARD)
			ba = 1;
	}
	is_int(n, 2, "timeout: the graph has two edges in the domain");
	ok(ab, "timeout: A -> B, exclusive 1:2, hard");
	ok(ba, "timeout: B -> A, exclusive 1:1, hard: together a cycle");
	n = gt_owners_read(domain, o, 4);
	for (i = 0; i < n && i < 4; i++) {
		if (o[i].id == a->owner_id[0] && o[i].wmode == EX &&
		    o[i].wrank == 1 && o[i].wid == 2 && o[i].held == 1)
			wa = 1;
		if (o[i].id == b->owner_id[0] && o[i].wmode == EX &&
		    o[i].wrank == 1 && o[i].wid == 1 && o[i].held == 1)
			wb = 1;
	}
	ok(n == 2 && wa && wb, "timeout: owners shows both waiting, each holding one key");

	ok(!gt_collect(a, LONG_MS), "timeout: A's request ends");
	is_errno(a->res->ret, ETIMEDOUT, "timeout: A: ETIMEDOUT");
	ok(a->res->elapsed_ms >= 5000, "timeout: after %llu ms (>= 5000)",
	   (unsigned long long)a->res->elapsed_ms);
	is_int(a->res->failure.reason, ORDLOCK_REASON_TIMEOUT,
	       "timeout: A: reason TIMEOUT");
	is_int(a->res->failure.pid, b->pid, "timeout: A: failure.pid is B");
	ok(olt_key_eq(&a->res->failure.key, 1, 2, EX), "timeout: A: failure.key 1:2");
	ok(!gt_collect(b, LONG_MS), "timeout: B's request ends");
	is_errno(b->res->ret, ETIMEDOUT, "timeout: B: ETIMEDOUT too");
	is_int(b->res->failure.pid, a->pid, "timeout: B: failure.pid is A");
	is_int(gt_graph_read(domain, e, 4), 0, "timeout: the graph is empty again");
	is_int(gt_stats_read(domain, &st), 0, "timeout: stats has the domain");
	is_int(gt_stat(&st, "timeouts"), 2, "timeout: stats: timeouts 2");
	is_int(gt_stat(&st, "deadlocks"), 0, "timeout: stats: deadlocks 0");
	is_int(st.policy[0] ? strcmp(st.policy, "timeout") : -1, 0,
	       "timeout: stats: policy timeout");
	gt_actor_stop(a);
	gt_actor_stop(b);
}

/* The seed's 200 ms example, in a "timeout" domain */
struct seed {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	long stock[3];
	struct pbarrier *meet1, *meet2;
	int ret[2];
	uint64_t elapsed[2];
	int error[2];
};

static struct seed *sd;

static int seed_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct ordlock_key src = ORDLOCK_EX(1, i ? 2 : 1);
	struct ordlock_key dst = ORDLOCK_EX(1, i ? 1 : 2);
	long qty = i ? 3 : 5;
	struct ordlock *ol;
	uint64_t t0;
	int ret;

	prctl(PR_SET_NAME, "transfer", 0, 0, 0);
	ol = ordlock_open(NULL);
	if (!ol || ordlock_set_domain(ol, sd->domain)) {
		pbarrier_break(sd->meet1);
		return 1;
	}
	sd->error[i] = ordlock_acquire(ol, &src, 1, LONG_MS, 0, NULL);
	if (pbarrier_wait(sd->meet1) || sd->error[i])
		return 2;
	t0 = now_ms();
	ret = ordlock_acquire(ol, &dst, 1, 200, 0, NULL);
	sd->elapsed[i] = now_ms() - t0;
	sd->ret[i] = ret;
	if (pbarrier_wait(sd->meet2))
		return 3;
	if (!ret) {
		sd->stock[src.id] -= qty;
		sd->stock[dst.id] += qty;
	}
	ordlock_close(ol);
	return 0;
}

static void test_seed_200ms(void)
{
	pid_t pid[2];
	int i;

	sd = shm_alloc(sizeof(*sd));
	gt_new_domain(sd->domain, "seed200", ORDLOCK_POLICY_TIMEOUT, 0);
	sd->stock[1] = 500;
	sd->stock[2] = 300;
	sd->meet1 = pbarrier_new(2);
	sd->meet2 = pbarrier_new(2);
	for (i = 0; i < 2; i++)
		pid[i] = child_start(seed_main, (void *)(intptr_t)i);
	for (i = 0; i < 2; i++)
		is_int(child_wait(pid[i], 0), 0, "200 ms: transfer %d ran", i);
	for (i = 0; i < 2; i++) {
		is_errno(sd->ret[i], ETIMEDOUT,
			 "200 ms: transfer %d gives up on its second warehouse",
			 i);
		ok(sd->elapsed[i] >= 200 && sd->elapsed[i] < 10000,
		   "200 ms: after %llu ms", (unsigned long long)sd->elapsed[i]);
	}
	is_int(sd->stock[1], 500, "200 ms: Sofia still 500");
	is_int(sd->stock[2], 300, "200 ms: Plovdiv still 300");
	pbarrier_free(sd->meet1);
	pbarrier_free(sd->meet2);
	shm_free(sd, sizeof(*sd));
}

/*
 * "detect" with a 300 ms delay: A waits first and looks for a cycle 300 ms
 * later, finding none. Then B closes the cycle: it stays in the graph
 * until B looks, 300 ms after B started waiting; B is the victim.
 */
#define DELAY_MS 300

static void test_detect_delay(void)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct gt_actor *a, *b;
	const struct gt_result *r;
	struct gt_edge e[4];
	uint64_t t0, read_at, seen_at = 0, seen_read_at = 0;
	int n = -1, done = 0;

	gt_new_domain(domain, "delay", ORDLOCK_POLICY_DETECT, DELAY_MS);
	a = gt_actor_start("delay-a", domain, 1);
	b = gt_actor_start("delay-b", domain, 1);
	ok(!gt_call1(a, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0) &&
	   !gt_call1(b, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0),
	   "delay: A holds 1:1, B holds 1:2");
	gt_submit1(a, GT_OP_ACQUIRE, 0, 1, 2, EX, LONG_MS, 0);
	is_int(gt_blocked(a, ACQ), 0, "delay: A waits for 1:2");
	/* let A's own look (at 300 ms) pass: it finds no cycle */
	usleep((DELAY_MS + 300) * 1000);

	t0 = now_ms();
	gt_submit1(b, GT_OP_ACQUIRE, 0, 1, 1, EX, LONG_MS, 0);
	while (!done && now_ms() - t0 < 10000) {
		read_at = now_ms();
		n = gt_graph_read(domain, e, 4);
		if (n == 2 && e[0].blocker_id == e[1].waiter_id &&
		    e[1].blocker_id == e[0].waiter_id) {
			seen_at = now_ms() - t0;
			seen_read_at = read_at;
			break;
		}
		done = gt_collect(b, 0) == 0;
	}
	ok(seen_at > 0, "delay: the graph shows the closed cycle (both edges) after %llu ms",
	   (unsigned long long)seen_at);
	ok(!gt_collect(b, LONG_MS), "delay: B's request ends");
	r = b->res;
	is_errno(r->ret, EDEADLK, "delay: B, whose wait closed the cycle, gets EDEADLK");
	ok(r->elapsed_ms >= DELAY_MS, "delay: only after the delay (%llu ms >= %d)",
	   (unsigned long long)r->elapsed_ms, DELAY_MS);
	/*
	 * The read that showed the cycle began before B's call returned:
	 * the graph is not a stale picture of a cycle already broken. (The
	 * read may end after B's call: on a slow kernel it takes a while.)
	 */
	ok(seen_read_at > 0 && seen_read_at <= r->end_ms,
	   "delay: the cycle was visible before it was broken (read at +%lld ms, B ended at +%lld ms)",
	   (long long)(seen_read_at - t0), (long long)(r->end_ms - t0));
	is_int(r->failure.reason, ORDLOCK_REASON_DEADLOCK, "delay: reason DEADLOCK");
	is_int(r->ncycle, 2, "delay: a cycle of 2 steps");
	ok(r->ncycle == 2 && r->cycle[0].owner_id == b->owner_id[0] &&
	   r->cycle[1].owner_id == a->owner_id[0],
	   "delay: victim B first, then A");
	ok(gt_collect(a, 0) == -ETIMEDOUT, "delay: A still waits: one victim only");
	is_int(gt_call(b, GT_OP_RELEASE_ALL, 0, NULL, 0, 0, 0), 0,
	       "delay: B releases");
	ok(!gt_collect(a, LONG_MS) && !a->res->ret, "delay: A is granted");
	gt_actor_stop(a);
	gt_actor_stop(b);
}

int main(void)
{
	watchdog_start(250);
	test_config();
	test_unprivileged(0);
	test_unprivileged(1);
	test_default_policy();
	test_timeout_policy();
	test_seed_200ms();
	test_detect_delay();
	return tap_done();
}
