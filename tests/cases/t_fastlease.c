// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastlease: leases and the fast path (issue 28, docs/fastpath.md,
 * "Leases").
 * - A fast-path domain takes no max-hold, and a domain with a max-hold
 *   does not take the fast path (a hold taken in user space has no lease):
 *   EOPNOTSUPP through the ioctl and through netlink (ordlockctl, with the
 *   reason), in either order and in one call, changing nothing.
 * - An owner's lease is one lease for everything it holds: when it
 *   expires, the keys the owner holds by the fast path are revoked with
 *   the ones the kernel granted. A waiter queued behind the fast-path hold
 *   gets the key (with a token) although the holder never let it go; with
 *   no waiter the word is freed (another owner takes the key at once); the
 *   holder's release says EKEYEXPIRED; the revoked keys list the fast one
 *   (token 0) among the others in key order; RELEASE_ALL acknowledges and
 *   the fast path works again for that owner.
 * The deadline is set by a renewal once the waiter sleeps in the kernel,
 * so the revocation comes after the waiter queued on every run.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE

static char dom[ORDLOCK_DOMAIN_NAME_MAX];

struct shared {
	int ret;
	long nheld;
	uint64_t token;
	struct pbarrier *go;
};

static struct shared *sh;

static int config(const char *name, uint32_t flags, uint32_t fast,
		  uint32_t max_hold, struct ordlock_domain_config *out)
{
	struct ordlock *adm = olt_open(NULL);
	struct ordlock_domain_config cfg;
	int ret;

	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = flags;
	cfg.fastpath = fast;
	cfg.fastpath_uid = getuid();
	cfg.max_hold_ms = max_hold;
	ret = ordlock_domain_config(adm, name, &cfg);
	if (ret)
		ret = -errno;
	if (out)
		*out = cfg;
	ordlock_close(adm);
	return ret;
}

/* ordlockctl ARGS..., its exit status; its stderr in @err */
static int ctl(char *err, size_t size, const char *args)
{
	char cmd[512];
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", olt_ctl_path(), args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(err, 1, size - 1, p);
	err[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_settings(void)
{
	struct ordlock_domain_config c;
	char other[ORDLOCK_DOMAIN_NAME_MAX], both[ORDLOCK_DOMAIN_NAME_MAX];
	char err[1024], args[256];

	is_int(config(dom, ORDLOCK_DOMAIN_SET_MAX_HOLD, 0, 1000, NULL), -EOPNOTSUPP,
	       "a fast-path domain refuses a max-hold: EOPNOTSUPP");
	config(dom, 0, 0, 0, &c);
	ok(c.fastpath == 1 && c.max_hold_ms == 0,
	   "nothing changed (fastpath %u, max_hold_ms %u)", c.fastpath, c.max_hold_ms);
	is_int(config(dom, ORDLOCK_DOMAIN_SET_MAX_HOLD, 0, 0, NULL), 0,
	       "max-hold 0 is taken");
	snprintf(args, sizeof(args), "domain %s set max-hold 500", dom);
	ok(ctl(err, sizeof(err), args) != 0 && strstr(err, "max-hold") &&
	   strstr(err, "lease"),
	   "ordlockctl set max-hold fails with the reason: %s", err);

	snprintf(other, sizeof(other), "%s", olt_domain("fastlease-mh"));
	is_int(config(other, ORDLOCK_DOMAIN_SET_MAX_HOLD, 0, 500, NULL), 0,
	       "a domain with max-hold 500");
	is_int(config(other, ORDLOCK_DOMAIN_SET_FASTPATH, 1, 0, NULL), -EOPNOTSUPP,
	       "refuses the fast path: EOPNOTSUPP");
	config(other, 0, 0, 0, &c);
	ok(c.fastpath == 0 && c.max_hold_ms == 500,
	   "nothing changed (fastpath %u, max_hold_ms %u)", c.fastpath, c.max_hold_ms);
	snprintf(args, sizeof(args), "domain %s set fastpath on uid %u", other,
		 (unsigned int)getuid());
	ok(ctl(err, sizeof(err), args) != 0 && strstr(err, "max-hold"),
	   "ordlockctl set fastpath fails with the reason: %s", err);

	snprintf(both, sizeof(both), "%s", olt_domain("fastlease-both"));
	is_int(config(both, ORDLOCK_DOMAIN_SET_MAX_HOLD | ORDLOCK_DOMAIN_SET_FASTPATH,
		      1, 500, NULL), -EOPNOTSUPP,
	       "both in one call: EOPNOTSUPP");
	config(both, 0, 0, 0, &c);
	ok(c.fastpath == 0 && c.max_hold_ms == 0,
	   "neither was set (fastpath %u, max_hold_ms %u)", c.fastpath, c.max_hold_ms);
	is_int(config(both, ORDLOCK_DOMAIN_SET_MAX_HOLD | ORDLOCK_DOMAIN_SET_FASTPATH,
		      1, 0, NULL), 0,
	       "the fast path with max-hold 0 in one call is taken");
	is_int(config(both, ORDLOCK_DOMAIN_SET_FASTPATH, 0, 0, NULL), 0,
	       "and turned off");
}

/* Waits for 1:10 in the kernel (behind the fast holder), then holds it */
static int waiter_main(void *arg)
{
	struct ordlock_key k = ORDLOCK_EX(1, 10);
	struct ordlock *ol = ordlock_open(dom);

	(void)arg;
	if (!ol)
		return 1;
	sh->ret = ordlock_acquire(ol, &k, 1, OLT_LONG_MS, 0, &sh->token) ? -errno : 0;
	sh->nheld = olt_nheld(ol);
	pbarrier_wait(sh->go);	/* granted: the holder tries its release */
	pbarrier_wait(sh->go);	/* and lets it go */
	ordlock_close(ol);
	return 0;
}

static int wait_revoked(struct ordlock *ol)
{
	struct pollfd p = { .fd = ordlock_fd(ol), .events = POLLPRI };
	int n = poll(&p, 1, 60000);

	return n == 1 && (p.revents & POLLPRI) ? 0 : -1;
}

static void test_revoke_waiter(void)
{
	struct ordlock_key fast = ORDLOCK_EX(1, 10), leased = ORDLOCK_EX(1, 20);
	struct ordlock *ol = olt_open(dom);
	struct ordlock_revoked_key rk[4];
	const struct ordlock_failure *f;
	pid_t pid;
	int n;

	is_int(ordlock_acquire(ol, &fast, 1, 1000, 0, NULL), 0, "hold 1:10");
	is_int(olt_nheld(ol), 0, "by the fast path (the kernel holds nothing)");
	is_int(ordlock_acquire_lease(ol, &leased, 1, 1000, 0, 60000, NULL), 0,
	       "then 1:20 with a lease of 60 s (the kernel's)");
	is_int(olt_nheld(ol), 1, "the kernel holds 1:20");
	pid = child_start(waiter_main, NULL);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "a waiter for 1:10 sleeps in the kernel");
	is_int(ordlock_renew(ol, 50, NULL), 0, "the lease renewed to 50 ms");
	is_int(wait_revoked(ol), 0, "POLLPRI: the lease was revoked");
	is_int(pbarrier_wait(sh->go), 0, "the waiter was granted 1:10");
	is_int(sh->ret, 0, "its acquire succeeded");
	ok(sh->token != 0, "with a token (%llu)", (unsigned long long)sh->token);
	is_int(sh->nheld, 1, "as a kernel hold");
	is_errno(ordlock_release(ol, &fast, 1), EKEYEXPIRED,
		 "the revoked holder's release of 1:10: EKEYEXPIRED");
	f = ordlock_last_failure(ol);
	is_int(f->reason, ORDLOCK_REASON_REVOKED, "reason revoked");
	n = ordlock_revoked_keys(ol, rk, 4);
	is_int(n, 2, "two keys revoked");
	ok(n == 2 && olt_key_eq(&rk[0].key, 1, 10, EX) && rk[0].token == 0,
	   "1:10 first, token 0 (a fast-path grant has none)");
	ok(n == 2 && olt_key_eq(&rk[1].key, 1, 20, EX) && rk[1].token != 0,
	   "1:20 second, with its token");
	ok(n == 2 && sh->token > rk[1].token,
	   "the waiter's token is above the revoked one");
	is_errno(ordlock_acquire(ol, &leased, 1, 0, ORDLOCK_ACQUIRE_TRY, NULL),
		 EKEYEXPIRED, "a request before the acknowledgement: EKEYEXPIRED");
	is_int(ordlock_release_all(ol), 0, "RELEASE_ALL acknowledges");
	is_int(pbarrier_wait(sh->go), 0, "the waiter lets 1:10 go");
	is_int(child_wait(pid, 60), 0, "the waiter ends");
	is_int(ordlock_acquire(ol, &fast, 1, 1000, 0, NULL), 0,
	       "the acknowledged owner takes 1:10 again");
	is_int(olt_nheld(ol), 0, "by the fast path");
	is_int(ordlock_release(ol, &fast, 1), 0, "and lets it go");
	is_int(olt_probe(dom, 1, 10, EX), 0, "1:10 is free");
	ordlock_close(ol);
}

static void test_revoke_free(void)
{
	struct ordlock_key fast = ORDLOCK_EX(1, 30), leased = ORDLOCK_EX(1, 40);
	struct ordlock *ol = olt_open(dom);

	is_int(ordlock_acquire(ol, &fast, 1, 1000, 0, NULL), 0,
	       "hold 1:30 by the fast path");
	is_int(ordlock_acquire_lease(ol, &leased, 1, 1000, 0, 50, NULL), 0,
	       "and 1:40 with a lease of 50 ms");
	is_int(wait_revoked(ol), 0, "POLLPRI: revoked");
	is_int(olt_probe(dom, 1, 30, EX), 0,
	       "1:30 is free at once: another owner takes it (no waiter: the word freed)");
	is_int(olt_probe(dom, 1, 40, EX), 0, "1:40 too");
	is_errno(ordlock_release(ol, &fast, 1), EKEYEXPIRED,
		 "the holder's release of 1:30: EKEYEXPIRED");
	is_int(ordlock_release_all(ol), 0, "RELEASE_ALL acknowledges");
	is_int(ordlock_try_acquire(ol, &fast, 1, NULL), 0, "1:30 again");
	is_int(ordlock_release(ol, &fast, 1), 0, "let go");
	ordlock_close(ol);
}

int main(void)
{
	watchdog_start(300);
	if (geteuid())
		bail_out("needs root (DOMAIN_CONFIG)");
	sh = shm_alloc(sizeof(*sh));
	sh->go = pbarrier_new(2);
	snprintf(dom, sizeof(dom), "%s", olt_domain("fastlease"));
	is_int(config(dom, ORDLOCK_DOMAIN_SET_FASTPATH, 1, 0, NULL), 0,
	       "%s: fast path on", dom);
	test_settings();
	test_revoke_waiter();
	test_revoke_free();
	is_int(config(dom, ORDLOCK_DOMAIN_SET_FASTPATH, 0, 0, NULL), 0,
	       "fast path off at the end");
	return tap_done();
}
