// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastlease: leases and the fast path (issue 28, docs/fastpath.md,
 * "Leases").
 * - A fast-path domain takes a max-hold, and a domain with a max-hold
 *   takes the fast path, through the ioctl and through netlink
 *   (ordlockctl), in either order and in one call.
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
 * - In a domain with the fast path and max-hold LEASE_MS: a fast hold gets
 *   a lease when a waiter first queues behind it in the kernel; it expires
 *   and the hold is revoked as above (the waiter granted with a token, the
 *   release EKEYEXPIRED, the record, RELEASE_ALL). A fast hold nobody
 *   waits for is not revoked (held 3 x max-hold). RENEW keeps a contended
 *   fast hold alive past its first deadline. A holder killed while its
 *   lease runs hands the key to the waiter, and nothing stays held. A
 *   max-hold set while a fast hold is contended applies from the next
 *   waiter on (the holder revoked, the waiters granted in turn).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE

static char dom[ORDLOCK_DOMAIN_NAME_MAX];

struct shared {
	int ret;
	int ret2;
	long nheld;
	uint64_t token;
	uint64_t id;
	struct pbarrier *go;
};

static struct shared *sh;

static int config(const char *name, uint32_t flags, uint32_t fast,
		  uint32_t max_hold, struct ordlock_domain_config *out)
{
	struct ordlock_domain_config cfg = {
		.flags = flags, .fastpath = fast, .fastpath_uid = getuid(),
		.max_hold_ms = max_hold,
	};
	int ret = olt_domain_set(name, &cfg) ? -errno : 0;

	if (out)
		*out = cfg;
	return ret;
}

static void test_settings(void)
{
	struct ordlock_domain_config c;
	char other[ORDLOCK_DOMAIN_NAME_MAX], both[ORDLOCK_DOMAIN_NAME_MAX];
	char err[1024], args[256];

	is_int(config(dom, ORDLOCK_DOMAIN_SET_MAX_HOLD, 0, 1000, NULL), 0,
	       "a fast-path domain takes a max-hold (the lease of a contended fast hold)");
	config(dom, 0, 0, 0, &c);
	ok(c.fastpath == 1 && c.max_hold_ms == 1000,
	   "both set (fastpath %u, max_hold_ms %u)", c.fastpath, c.max_hold_ms);
	snprintf(args, sizeof(args), "domain %s set max-hold 500", dom);
	is_int(olt_ctl(err, sizeof(err), "%s", args), 0, "ordlockctl set max-hold 500 too: %s", err);
	config(dom, 0, 0, 0, &c);
	is_int(c.max_hold_ms, 500, "max-hold 500");
	is_int(config(dom, ORDLOCK_DOMAIN_SET_MAX_HOLD, 0, 0, NULL), 0,
	       "max-hold 0 again");

	snprintf(other, sizeof(other), "%s", olt_domain("fastlease-mh"));
	is_int(config(other, ORDLOCK_DOMAIN_SET_MAX_HOLD, 0, 500, NULL), 0,
	       "a domain with max-hold 500");
	snprintf(args, sizeof(args), "domain %s set fastpath on uid %u", other,
		 (unsigned int)getuid());
	is_int(olt_ctl(err, sizeof(err), "%s", args), 0,
	       "ordlockctl set fastpath on it: taken: %s", err);
	config(other, 0, 0, 0, &c);
	ok(c.fastpath == 1 && c.max_hold_ms == 500,
	   "both set (fastpath %u, max_hold_ms %u)", c.fastpath, c.max_hold_ms);
	is_int(config(other, ORDLOCK_DOMAIN_SET_FASTPATH, 0, 0, NULL), 0,
	       "and the fast path off");

	snprintf(both, sizeof(both), "%s", olt_domain("fastlease-both"));
	is_int(config(both, ORDLOCK_DOMAIN_SET_MAX_HOLD | ORDLOCK_DOMAIN_SET_FASTPATH,
		      1, 500, NULL), 0,
	       "both in one call: taken");
	config(both, 0, 0, 0, &c);
	ok(c.fastpath == 1 && c.max_hold_ms == 500,
	   "both set (fastpath %u, max_hold_ms %u)", c.fastpath, c.max_hold_ms);
	is_int(config(both, ORDLOCK_DOMAIN_SET_FASTPATH, 0, 0, NULL), 0,
	       "and turned off");
}

/* Waits for 1:10 in the kernel (behind the fast holder), then holds it */
static int waiter_main(void *arg)
{
	struct ordlock_key k = ORDLOCK_EX(1, 10);
	struct ordlock *ol = olt_child_open(dom);

	(void)arg;
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

/* The domain with the fast path and max-hold LEASE_MS */
#define LEASE_MS 200
/* test_renew()'s lease: long enough for a stalled guest's 20 ms renewals */
#define RENEW_LEASE_MS 1000
static char ld[ORDLOCK_DOMAIN_NAME_MAX];

/* child_start()'s argument for a waiter that lets the key go at once */
static int once;

/*
 * Waits for 2:sh->id in ld in the kernel, then holds it until told; with
 * &once, lets it go at once and ends (its result in sh->ret2)
 */
static int lwaiter_main(void *arg)
{
	struct ordlock_key k = ORDLOCK_EX(2, 0);
	struct ordlock *ol = olt_child_open(ld);
	int ret;

	k.id = sh->id;
	ret = ordlock_acquire(ol, &k, 1, OLT_LONG_MS, 0,
			      arg ? NULL : &sh->token) ? -errno : 0;
	if (arg) {
		sh->ret2 = ret;
	} else {
		sh->ret = ret;
		sh->nheld = olt_nheld(ol);
		pbarrier_wait(sh->go);	/* granted (or failed) */
		pbarrier_wait(sh->go);	/* let it go */
	}
	ordlock_close(ol);
	return 0;
}

/* Fast-path hold A of 2:1, a waiter B in the kernel, A never lets go */
static void test_contended_expiry(void)
{
	struct ordlock_key k = ORDLOCK_EX(2, 1);
	struct ordlock *ol = olt_open(ld);
	struct ordlock_revoked_key rk[4];
	const struct ordlock_failure *f;
	struct pollfd p;
	pid_t pid;
	int n;

	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "A holds 2:1");
	is_int(olt_nheld(ol), 0, "by the fast path");
	p.fd = ordlock_fd(ol);
	p.events = POLLPRI;
	is_int(poll(&p, 1, 0), 0, "no lease revoked yet");
	sh->id = 1;
	pid = child_start(lwaiter_main, NULL);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "B waits for 2:1 in the kernel (with a long timeout)");
	if (!is_int(wait_revoked(ol), 0,
		    "POLLPRI: A's lease, started when B queued, expired and was revoked")) {
		/* No lease: B would wait out its timeout behind A */
		child_kill(pid, SIGKILL);
		ordlock_close(ol);
		return;
	}
	is_int(pbarrier_wait(sh->go), 0, "B is done waiting");
	is_int(sh->ret, 0, "B was granted 2:1 although A never let it go");
	ok(sh->token != 0, "with a token (%llu)", (unsigned long long)sh->token);
	is_int(sh->nheld, 1, "as a kernel hold");
	is_errno(ordlock_release(ol, &k, 1), EKEYEXPIRED,
		 "A's release of 2:1: EKEYEXPIRED");
	f = ordlock_last_failure(ol);
	is_int(f->reason, ORDLOCK_REASON_REVOKED, "reason revoked");
	n = ordlock_revoked_keys(ol, rk, 4);
	is_int(n, 1, "one key revoked");
	ok(n == 1 && olt_key_eq(&rk[0].key, 2, 1, EX) && rk[0].token == 0,
	   "2:1, token 0");
	is_int(ordlock_release_all(ol), 0, "RELEASE_ALL acknowledges");
	is_int(pbarrier_wait(sh->go), 0, "B lets 2:1 go");
	is_int(child_wait(pid, 60), 0, "B ends");
	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "A takes 2:1 again");
	is_int(olt_nheld(ol), 0, "by the fast path");
	is_int(ordlock_release(ol, &k, 1), 0, "and lets it go");
	is_int(olt_probe(ld, 2, 1, EX), 0, "2:1 is free");
	ordlock_close(ol);
}

/* Nobody waits: a fast hold is never revoked, however long */
static void test_uncontended(void)
{
	struct ordlock_key k = ORDLOCK_EX(2, 2);
	struct ordlock *ol = olt_open(ld);
	struct pollfd p;

	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "A holds 2:2");
	is_int(olt_nheld(ol), 0, "by the fast path");
	/* 3 x max-hold; the check below is what is asserted, not the time */
	usleep(3 * LEASE_MS * 1000);
	p.fd = ordlock_fd(ol);
	p.events = POLLPRI;
	is_int(poll(&p, 1, 0), 0, "not revoked after 3 x max-hold with no waiter");
	is_int(ordlock_release(ol, &k, 1), 0, "the release succeeds");
	ordlock_close(ol);
}

/* RENEW by the fast holder keeps its hold while B waits */
static void test_renew(void)
{
	struct ordlock_key k = ORDLOCK_EX(2, 3);
	struct ordlock *ol = olt_open(ld);
	struct timespec t0, t;
	int i, bad = 0, n = 0;
	struct pollfd p;
	pid_t pid;

	/*
	 * A lease of RENEW_LEASE_MS for this test: a renewal every 20 ms then
	 * survives a guest stalled for most of a second (a loaded host), and
	 * what is asserted is still that renewals keep a hold past max-hold
	 */
	is_int(config(ld, ORDLOCK_DOMAIN_SET_MAX_HOLD, 0, RENEW_LEASE_MS, NULL), 0,
	       "max-hold %d ms for the renewals", RENEW_LEASE_MS);
	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "A holds 2:3");
	is_int(olt_nheld(ol), 0, "by the fast path");
	sh->id = 3;
	pid = child_start(lwaiter_main, NULL);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0, "B waits for 2:3");
	/* Renew every 20 ms for 2 x max-hold */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 1000; i++) {
		if (ordlock_renew(ol, 0, NULL))
			bad = bad ? bad : errno;
		n++;
		usleep(20000);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > 2 * RENEW_LEASE_MS)
			break;
	}
	is_int(bad, 0, "%d renewals of a fast-only hold succeed", n);
	p.fd = ordlock_fd(ol);
	p.events = POLLPRI;
	is_int(poll(&p, 1, 0), 0, "A was not revoked");
	is_int(olt_probe(ld, 2, 3, EX), -EAGAIN, "2:3 still held (B still waits)");
	is_int(ordlock_release(ol, &k, 1), 0, "A's release succeeds (hands 2:3 to B)");
	is_int(pbarrier_wait(sh->go), 0, "B is done waiting");
	is_int(sh->ret, 0, "B was granted 2:3");
	is_int(pbarrier_wait(sh->go), 0, "B lets it go");
	is_int(child_wait(pid, 60), 0, "B ends");
	is_int(olt_probe(ld, 2, 3, EX), 0, "2:3 is free");
	ordlock_close(ol);
	is_int(config(ld, ORDLOCK_DOMAIN_SET_MAX_HOLD, 0, LEASE_MS, NULL), 0,
	       "max-hold back to %d ms", LEASE_MS);
}

/* A is killed while its lease runs: B gets the key, nothing stays */
static void test_death(void)
{
	struct ordlock_key k = ORDLOCK_EX(2, 4);
	struct olt_holder *h;
	pid_t pid;

	h = olt_holder_start(ld, &k, 1);
	ok(h && h->result == 0, "a holder process holds 2:4");
	if (!h)
		return;
	sh->id = 4;
	pid = child_start(lwaiter_main, NULL);
	is_int(wait_blocked_ioctl(pid, ORDLOCK_IOC_ACQUIRE, 0), 0, "B waits for 2:4");
	olt_holder_kill(h, SIGKILL);
	is_int(pbarrier_wait(sh->go), 0, "B is done waiting");
	is_int(sh->ret, 0, "B was granted 2:4");
	is_int(pbarrier_wait(sh->go), 0, "B lets it go");
	is_int(child_wait(pid, 60), 0, "B ends");
	is_int(olt_probe(ld, 2, 4, EX), 0, "2:4 is free");
}

/*
 * A max-hold set while a fast hold is contended already: the next waiter
 * that queues starts the holder's lease (the first one found no max-hold)
 */
static void test_late_max_hold(void)
{
	struct ordlock_key k = ORDLOCK_EX(2, 6);
	struct ordlock *ol = olt_open(ld);
	struct pollfd p;
	pid_t b, c;

	is_int(config(ld, ORDLOCK_DOMAIN_SET_MAX_HOLD, 0, 0, NULL), 0,
	       "max-hold off");
	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "A holds 2:6");
	is_int(olt_nheld(ol), 0, "by the fast path");
	sh->id = 6;
	b = child_start(lwaiter_main, NULL);
	is_int(wait_blocked_ioctl(b, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "B waits for 2:6 in the kernel (no max-hold: A gets no lease)");
	p.fd = ordlock_fd(ol);
	p.events = POLLPRI;
	is_int(poll(&p, 1, 0), 0, "A not revoked");
	is_int(config(ld, ORDLOCK_DOMAIN_SET_MAX_HOLD, 0, LEASE_MS, NULL), 0,
	       "max-hold %d ms set while B waits", LEASE_MS);
	c = child_start(lwaiter_main, &once);
	is_int(wait_blocked_ioctl(c, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "C waits for 2:6 too");
	if (!is_int(wait_revoked(ol), 0,
		    "POLLPRI: A's lease, started when C queued, expired and was revoked")) {
		child_kill(b, SIGKILL);
		child_kill(c, SIGKILL);
		ordlock_close(ol);
		return;
	}
	is_int(pbarrier_wait(sh->go), 0, "B is done waiting");
	is_int(sh->ret, 0, "B (the queue's head) was granted 2:6");
	is_errno(ordlock_release(ol, &k, 1), EKEYEXPIRED,
		 "A's release of 2:6: EKEYEXPIRED");
	is_int(ordlock_release_all(ol), 0, "RELEASE_ALL acknowledges");
	is_int(pbarrier_wait(sh->go), 0, "B lets 2:6 go");
	is_int(child_wait(b, 60), 0, "B ends");
	is_int(child_wait(c, 60), 0, "C ends");
	is_int(sh->ret2, 0, "C was granted 2:6 after B");
	is_int(olt_probe(ld, 2, 6, EX), 0, "2:6 is free");
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
	snprintf(ld, sizeof(ld), "%s", olt_domain("fastlease-lease"));
	is_int(config(ld, ORDLOCK_DOMAIN_SET_FASTPATH | ORDLOCK_DOMAIN_SET_MAX_HOLD,
		      1, LEASE_MS, NULL), 0,
	       "%s: fast path on, max-hold %d ms", ld, LEASE_MS);
	test_contended_expiry();
	test_uncontended();
	test_renew();
	test_death();
	test_late_max_hold();
	is_int(config(ld, ORDLOCK_DOMAIN_SET_FASTPATH | ORDLOCK_DOMAIN_SET_MAX_HOLD,
		      0, 0, NULL), 0, "off at the end (nobody is in it)");
	return tap_done();
}
