// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastmixed: the kernel's order rule counts the keys an owner holds by
 * the fast path (issue 28). A request that goes to the kernel while its
 * owner holds keys taken in user space (shared mode, a token, a lease,
 * REORDER, another process on the same owner: a fork child, a nested
 * "ordlockctl exec") is judged against them as against the kernel's own
 * holds:
 *  - enforce: a key below a fast-held one is refused with EDEADLK, reason
 *    ORDER (STRICT for strict ranks), the record naming the fast-held key,
 *    nothing taken; a key above is granted; the fast-held key itself,
 *    asked again in shared mode, is refused (it would wait for itself);
 *  - detect: the key asked again is refused; a key below is granted and
 *    its edge (fast-held -> taken) is learned;
 *  - the other way round: while a fork child on the same owner holds 1:5
 *    in the kernel, the parent's acquire of 1:3, which its library takes
 *    by CAS (it knows of no kernel hold), is given back and refused by
 *    the kernel (the owner page's ORDLOCK_FAST_PAGE_KERNEL sends it
 *    there), held in lockstep by barriers; once the child let go, 1:3 is
 *    the fast path's again;
 *  - a conversion of a key held by the fast path (which the kernel's
 *    CONVERT did not find: ENOENT) works as for a kernel hold: the kernel
 *    takes the key over (a token, held in the kernel, shared probes then
 *    granted), a kernel waiter queued behind the fast hold is granted by
 *    the downgrade, and the key is the fast path's again once let go;
 *  - a fork child on the owner lets go of its parent's keys held by the
 *    fast path as of the kernel's: RELEASE of 1:5 (the key freed, the
 *    parent's own release then ENOENT, as in a domain without the fast
 *    path), RELEASE_ALL of 1:5 and 1:6 (both freed), a RELEASE naming a
 *    key nobody holds changes nothing (ENOENT, 1:5 still held);
 *  - "ordlockctl exec -x 1:2 -- ordlockctl exec -x 1:1" in a fast-path
 *    enforce domain is refused (65), as in a domain without it (exec
 *    asks for a token, so its keys are the kernel's: a regression check).
 * Each of these but the exec was granted before the kernel looked at the
 * words.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE

static int config(const char *dom, uint32_t policy, int strict, int fast)
{
	struct ordlock_domain_config cfg = {
		.flags = ORDLOCK_DOMAIN_SET_POLICY | ORDLOCK_DOMAIN_SET_STRICT |
			 ORDLOCK_DOMAIN_SET_FASTPATH,
		.policy = policy, .strict = strict, .fastpath = fast,
		.fastpath_uid = getuid(),
	};

	return olt_domain_set(dom, &cfg);
}

/* A fresh domain @dom (named from @prefix) with @policy and the fast path, and an owner */
static struct ordlock *fast_domain(char *dom, const char *prefix, uint32_t policy)
{
	snprintf(dom, ORDLOCK_DOMAIN_NAME_MAX, "%s", olt_domain(prefix));
	is_int(config(dom, policy, 0, 1), 0, "%s: policy %u, fast path", dom, policy);
	return olt_open(dom);
}

/* Edges learned in @dom from key (1, @from) to key (1, @to) */
static int nedges(const char *dom, uint64_t from, uint64_t to)
{
	struct ordlock_order_edge e[64];
	struct ordlock_order_get info;
	int i, n = 0, ne = olt_order_get(dom, e, 64, &info);

	if (ne < 0)
		return -1;
	for (i = 0; i < ne; i++)
		if (e[i].from_rank == 1 && e[i].to_rank == 1 &&
		    e[i].held.id == from && e[i].taken.id == to)
			n++;
	return n;
}

/* Hold (1, 5) by the fast path (pinned first, so no kernel hold remains) */
static void hold_fast(struct ordlock *ol, uint64_t id)
{
	struct ordlock_key k = ORDLOCK_EX(1, id);

	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "pin 1:%llu",
	       (unsigned long long)id);
	is_int(ordlock_release(ol, &k, 1), 0, "and let it go");
	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "hold 1:%llu",
	       (unsigned long long)id);
	is_int(olt_nheld(ol), 0, "by the fast path (the kernel holds nothing)");
}

static void refused(struct ordlock *ol, const char *dom, int ret, uint32_t reason,
		    uint64_t held, uint64_t probe, const char *what)
{
	const struct ordlock_failure *f = ordlock_last_failure(ol);

	is_errno(ret, EDEADLK, "%s: EDEADLK", what);
	is_int(f->reason, reason, "%s: reason %u", what, reason);
	ok(olt_key_eq(&f->held, 1, held, EX), "%s: naming the fast-held 1:%llu",
	   what, (unsigned long long)held);
	is_int(olt_nheld(ol), 0, "%s: nothing taken by the kernel", what);
	if (probe)
		is_int(olt_probe(dom, 1, probe, EX), 0, "%s: 1:%llu free", what,
		       (unsigned long long)probe);
}

/* A fork child on the same owner (it goes to the kernel) */
static int child_main(void *arg)
{
	struct ordlock *ol = arg;
	struct ordlock_key k3 = ORDLOCK_EX(1, 3), k6 = ORDLOCK_EX(1, 6);

	if (ordlock_acquire(ol, &k3, 1, 1000, 0, NULL) != -EDEADLK)
		return 1;
	if (!olt_key_eq(&ordlock_last_failure(ol)->held, 1, 5, EX))
		return 2;
	if (ordlock_acquire(ol, &k6, 1, 1000, 0, NULL))
		return 3;
	return ordlock_release(ol, &k6, 1) ? 4 : 0;
}

static void test_enforce(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key s3 = ORDLOCK_SH(1, 3), s5 = ORDLOCK_SH(1, 5);
	struct ordlock_key s6 = ORDLOCK_SH(1, 6), k3 = ORDLOCK_EX(1, 3);
	struct ordlock_key two[2] = { ORDLOCK_SH(1, 3), ORDLOCK_SH(1, 6) };
	struct ordlock *ol;
	uint64_t token = 0;
	pid_t pid;

	ol = fast_domain(dom, "fmix", ORDLOCK_POLICY_ENFORCE);
	hold_fast(ol, 5);
	refused(ol, dom, ordlock_acquire(ol, &s3, 1, 1000, 0, NULL), ORDLOCK_REASON_ORDER,
		5, 3, "1:3 shared below it");
	refused(ol, dom, ordlock_acquire(ol, &k3, 1, 1000, 0, &token), ORDLOCK_REASON_ORDER,
		5, 3, "1:3 with a token");
	refused(ol, dom, ordlock_acquire_lease(ol, &k3, 1, 1000, 0, 60000, NULL),
		ORDLOCK_REASON_ORDER, 5, 3, "1:3 with a lease");
	refused(ol, dom, ordlock_acquire(ol, two, 2, 1000, 0, NULL), ORDLOCK_REASON_ORDER,
		5, 6, "1:3 + 1:6 shared");
	refused(ol, dom, ordlock_acquire(ol, &k3, 1, 1000, ORDLOCK_ACQUIRE_REORDER, NULL),
		ORDLOCK_REASON_ORDER, 5, 3, "1:3 with REORDER");
	refused(ol, dom, ordlock_acquire(ol, &s5, 1, 1000, 0, NULL), ORDLOCK_REASON_ORDER,
		5, 0, "1:5 again, shared");
	pid = child_start(child_main, ol);
	is_int(child_wait(pid, 60), 0,
	       "a fork child on the owner: 1:3 refused naming 1:5, 1:6 granted");
	is_int(ordlock_acquire(ol, &s6, 1, 1000, 0, NULL), 0, "1:6 shared above it: granted");
	is_int(olt_nheld(ol), 1, "by the kernel");
	is_int(ordlock_release_all(ol), 0, "release all");
	is_int(olt_probe(dom, 1, 5, EX), 0, "1:5 free");
	is_int(olt_probe(dom, 1, 6, EX), 0, "1:6 free");
	ordlock_close(ol);

	/* strict ranks: a key of the same rank above it is refused, reason STRICT */
	is_int(config(dom, ORDLOCK_POLICY_ENFORCE, 1, 1), 0, "%s: strict ranks", dom);
	ol = olt_open(dom);
	hold_fast(ol, 5);
	refused(ol, dom, ordlock_acquire(ol, &s6, 1, 1000, 0, NULL), ORDLOCK_REASON_STRICT,
		5, 6, "strict: 1:6 shared");
	is_int(ordlock_release_all(ol), 0, "release all");
	ordlock_close(ol);
	is_int(config(dom, ORDLOCK_POLICY_ENFORCE, 0, 0), 0, "fast path off at the end");
}

static void test_detect(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key s3 = ORDLOCK_SH(1, 3), s5 = ORDLOCK_SH(1, 5);
	struct ordlock *ol;

	ol = fast_domain(dom, "fmixd", ORDLOCK_POLICY_DETECT);
	hold_fast(ol, 5);
	refused(ol, dom, ordlock_acquire(ol, &s5, 1, 1000, 0, NULL), ORDLOCK_REASON_ORDER,
		5, 0, "detect: 1:5 again, shared");
	is_int(nedges(dom, 5, 3), 0, "detect: 1:5 -> 1:3 not learned yet");
	is_int(ordlock_acquire(ol, &s3, 1, 1000, 0, NULL), 0, "detect: 1:3 shared below it: granted");
	is_int(nedges(dom, 5, 3), 1, "detect: 1:5 (fast) -> 1:3 learned");
	is_int(ordlock_release_all(ol), 0, "release all");
	is_int(olt_probe(dom, 1, 5, EX), 0, "1:5 free");
	ordlock_close(ol);
	is_int(config(dom, ORDLOCK_POLICY_DETECT, 0, 0), 0, "fast path off at the end");
}

struct sib {
	struct pbarrier *held;
	struct pbarrier *go;
	int ret;
};

static struct sib *sib;

/* A fork child on the parent's owner takes 1:5 in the kernel, holds it */
static int sibling_main(void *arg)
{
	struct ordlock *ol = arg;
	struct ordlock_key k5 = ORDLOCK_EX(1, 5);

	sib->ret = ordlock_acquire(ol, &k5, 1, 1000, 0, NULL);
	if (pbarrier_wait(sib->held) || pbarrier_wait(sib->go))
		return 1;
	return sib->ret || ordlock_release(ol, &k5, 1) ? 2 : 0;
}

static void test_sibling(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k3 = ORDLOCK_EX(1, 3);
	struct ordlock *ol;
	pid_t pid;

	ol = fast_domain(dom, "fmixs", ORDLOCK_POLICY_ENFORCE);
	hold_fast(ol, 3);
	is_int(ordlock_release(ol, &k3, 1), 0, "let 1:3 go (pinned, cached)");
	sib = shm_alloc(sizeof(*sib));
	sib->held = pbarrier_new(2);
	sib->go = pbarrier_new(2);
	pid = child_start(sibling_main, ol);
	pbarrier_wait(sib->held);
	is_int(sib->ret, 0, "sibling: a fork child holds 1:5 in the kernel");
	is_errno(ordlock_acquire(ol, &k3, 1, 1000, 0, NULL), EDEADLK,
		 "sibling: the parent's 1:3 below it: EDEADLK");
	is_int(ordlock_last_failure(ol)->reason, ORDLOCK_REASON_ORDER, "sibling: reason ORDER");
	ok(olt_key_eq(&ordlock_last_failure(ol)->held, 1, 5, EX),
	   "sibling: naming the child's 1:5");
	is_int(olt_probe(dom, 1, 3, EX), 0, "sibling: 1:3 was given back");
	pbarrier_wait(sib->go);
	is_int(child_wait(pid, 60), 0, "sibling: the child let 1:5 go");
	is_int(ordlock_acquire(ol, &k3, 1, 1000, 0, NULL), 0, "sibling: then 1:3 is granted");
	is_int(olt_nheld(ol), 0, "sibling: by the fast path again");
	is_errno(olt_probe(dom, 1, 3, EX), EAGAIN, "sibling: held");
	is_int(ordlock_release(ol, &k3, 1), 0, "sibling: and let go");
	is_int(olt_probe(dom, 1, 5, EX), 0, "sibling: 1:5 free");
	ordlock_close(ol);
	pbarrier_free(sib->held);
	pbarrier_free(sib->go);
	is_int(config(dom, ORDLOCK_POLICY_ENFORCE, 0, 0), 0, "fast path off at the end");
}

/* A child of its own (another owner) waits for 1:6 shared in the kernel */
static int waiter_main(void *arg)
{
	const char *dom = arg;
	struct ordlock_key s6 = ORDLOCK_SH(1, 6);
	struct ordlock *ol = olt_child_open(dom);

	if (ordlock_acquire(ol, &s6, 1, 60000, 0, NULL))
		return 2;
	ordlock_close(ol);
	return 0;
}

static void test_convert(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key s5 = ORDLOCK_SH(1, 5), k5 = ORDLOCK_EX(1, 5);
	struct ordlock_key s6 = ORDLOCK_SH(1, 6), k6 = ORDLOCK_EX(1, 6);
	struct ordlock *ol;
	uint64_t token = 0;
	pid_t pid;

	ol = fast_domain(dom, "fmixc", ORDLOCK_POLICY_ENFORCE);
	hold_fast(ol, 5);
	is_int(ordlock_convert(ol, s5, 1000, 0, &token), 0,
	       "convert: 1:5 held by the fast path, to shared");
	ok(token > 0, "convert: with a token (%llu)", (unsigned long long)token);
	is_int(olt_nheld(ol), 1, "convert: the kernel holds it now");
	is_int(olt_probe(dom, 1, 5, ORDLOCK_MODE_SHARED), 0, "convert: a shared probe is granted");
	is_errno(olt_probe(dom, 1, 5, EX), EAGAIN, "convert: an exclusive one is not");
	is_int(ordlock_convert(ol, k5, 1000, 0, NULL), 0, "convert: back to exclusive");
	is_errno(olt_probe(dom, 1, 5, ORDLOCK_MODE_SHARED), EAGAIN,
		 "convert: a shared probe is refused again");
	is_int(ordlock_release(ol, &k5, 1), 0, "convert: released");
	is_int(olt_probe(dom, 1, 5, EX), 0, "convert: 1:5 free");
	is_int(ordlock_release_all(ol), 0, "convert: release all (nothing)");
	is_int(ordlock_acquire(ol, &k5, 1, 1000, 0, NULL), 0, "convert: 1:5 again");
	is_int(olt_nheld(ol), 0, "convert: by the fast path again");
	is_int(ordlock_convert(ol, k5, 1000, 0, &token), 0,
	       "convert: to the mode it has (exclusive)");
	is_int(olt_nheld(ol), 1, "convert: the kernel holds it then");
	is_int(ordlock_release_all(ol), 0, "convert: release all");

	/* a kernel waiter behind a fast hold: the downgrade grants it */
	hold_fast(ol, 6);
	pid = child_start(waiter_main, (void *)dom);
	is_int(gt_wait_edges(dom, 1, 60000), 0,
	       "convert: a waiter queued for 1:6 shared (its edge to the fast holder)");
	is_int(ordlock_convert(ol, s6, 1000, 0, NULL), 0, "convert: 1:6 to shared");
	is_int(child_wait(pid, 60), 0, "convert: the waiter was granted");
	is_int(ordlock_release_all(ol), 0, "convert: 1:6 released (release all)");
	is_int(olt_probe(dom, 1, 6, EX), 0, "convert: 1:6 free");
	is_int(ordlock_acquire(ol, &k6, 1, 1000, 0, NULL), 0, "convert: 1:6 again");
	is_int(olt_nheld(ol), 0, "convert: by the fast path again");
	is_int(ordlock_release_all(ol), 0, "convert: release all");
	ordlock_close(ol);
	is_int(config(dom, ORDLOCK_POLICY_ENFORCE, 0, 0), 0, "fast path off at the end");
}

/* A fork child lets go of the parent's fast holds: @arg 0 one key, 1 all, 2 a bad pair */
static int releaser_main(void *arg)
{
	struct ordlock *ol = *(struct ordlock **)arg;
	long what = ((long *)arg)[1];
	struct ordlock_key k5 = ORDLOCK_EX(1, 5);
	struct ordlock_key bad[2] = { ORDLOCK_EX(1, 5), ORDLOCK_EX(1, 9) };

	if (what == 0)
		return ordlock_release(ol, &k5, 1) ? 1 : 0;
	if (what == 1)
		return ordlock_release_all(ol) ? 1 : 0;
	return ordlock_release(ol, bad, 2) == -ENOENT ? 0 : 1;
}

static int run_releaser(struct ordlock *ol, long what)
{
	void *arg[2] = { ol, (void *)what };

	return child_wait(child_start(releaser_main, arg), 60);
}

static void test_child_release(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k5 = ORDLOCK_EX(1, 5), k6 = ORDLOCK_EX(1, 6);
	struct ordlock *ol;

	ol = fast_domain(dom, "fmixr", ORDLOCK_POLICY_ENFORCE);
	hold_fast(ol, 5);
	is_int(run_releaser(ol, 2), 0, "child: RELEASE of 1:5 and 1:9 (not held): ENOENT");
	is_errno(olt_probe(dom, 1, 5, EX), EAGAIN, "child: 1:5 still held");
	is_int(run_releaser(ol, 0), 0, "child: RELEASE of the parent's 1:5");
	is_int(olt_probe(dom, 1, 5, EX), 0, "child: 1:5 free");
	is_errno(ordlock_release(ol, &k5, 1), ENOENT, "the parent's release then: ENOENT");
	is_int(ordlock_acquire(ol, &k5, 1, 1000, 0, NULL), 0, "1:5 again");
	is_int(ordlock_acquire(ol, &k6, 1, 1000, 0, NULL), 0, "and 1:6");
	is_int(olt_nheld(ol), 0, "both by the fast path");
	is_int(run_releaser(ol, 1), 0, "child: RELEASE_ALL");
	is_int(olt_probe(dom, 1, 5, EX), 0, "child: 1:5 free");
	is_int(olt_probe(dom, 1, 6, EX), 0, "child: 1:6 free");
	ordlock_release_all(ol);
	ordlock_close(ol);
	is_int(config(dom, ORDLOCK_POLICY_ENFORCE, 0, 0), 0, "fast path off at the end");
}

/* "ordlockctl exec -x 1:2 -- ordlockctl exec -x 1:1" in a fast-path domain */
static void test_exec(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX], ctl[PATH_MAX], cmd[4 * PATH_MAX];
	char errf[64], msg[2048];
	int st;

	snprintf(errf, sizeof(errf), "/tmp/t_fastmixed.%d.err", (int)getpid());
	snprintf(dom, sizeof(dom), "%s", olt_domain("fmixe"));
	is_int(config(dom, ORDLOCK_POLICY_ENFORCE, 0, 1), 0, "%s: enforce, fast path", dom);
	snprintf(ctl, sizeof(ctl), "%s", olt_ctl_path());
	snprintf(cmd, sizeof(cmd),
		 "unset ORDLOCK_FD; %s exec -d %s -x 1:2 -- %s exec -d %s -x 1:1 -- true 2>%s",
		 ctl, dom, ctl, dom, errf);
	st = system(cmd);
	is_int(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 65,
	       "exec: 1:1 inside an exec holding 1:2 by the fast path is refused (65)");
	if (read_small_file(errf, msg, sizeof(msg)) < 0)
		msg[0] = '\0';
	unlink(errf);
	ok(strstr(msg, "1:2") && strstr(msg, "1:1"),
	   "exec: with the order error naming both keys (%s)", msg);
	snprintf(cmd, sizeof(cmd),
		 "unset ORDLOCK_FD; %s exec -d %s -x 1:1 -- %s exec -d %s -x 1:2 -- true",
		 ctl, dom, ctl, dom);
	st = system(cmd);
	is_int(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0, "exec: the right order works");
	is_int(olt_probe(dom, 1, 1, EX), 0, "exec: 1:1 free");
	is_int(olt_probe(dom, 1, 2, EX), 0, "exec: 1:2 free");
	is_int(config(dom, ORDLOCK_POLICY_ENFORCE, 0, 0), 0, "fast path off at the end");
}

int main(void)
{
	watchdog_start(300);
	if (geteuid())
		bail_out("needs root (DOMAIN_CONFIG)");
	test_enforce();
	test_detect();
	test_sibling();
	test_convert();
	test_child_release();
	test_exec();
	return tap_done();
}
