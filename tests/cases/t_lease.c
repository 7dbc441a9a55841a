// SPDX-License-Identifier: GPL-2.0
/*
 * t_lease: leases with fencing, through the ioctls.
 *
 * - A holder whose lease expires while it is stopped (SIGSTOP) is revoked
 *   without calling: the waiter is granted with a higher token; when the
 *   holder resumes, every write it attempts with its old token is refused
 *   by a small "storage" that checks tokens with TOKEN_CHECK, its next
 *   call fails with EKEYEXPIRED and a failure record (reason "revoked")
 *   naming the key and its token, and RELEASE_ALL acknowledges.
 * - RENEW keeps a holder alive past several lease periods while a waiter
 *   waits, and costs the waiter nothing but waiting.
 * - A domain's max_hold_ms caps a request that asks for more, and is the
 *   lease of a request that asks for none.
 * - The revocation is seen through poll() (POLLPRI) and the signal set
 *   with ORDLOCK_RENEW_SET_SIGNAL, counted in the domain's stats.
 * - Bad input fails with the documented errnos and changes nothing.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define SH ORDLOCK_MODE_SHARED

/*
 * The storage: accepts a write only with a token that TOKEN_CHECK says is
 * the live grant of the key, and never one below the highest it accepted
 * (the check alone holds nothing). Shared by the processes of a test.
 */
struct storage {
	uint64_t highest;
	unsigned int accepted;
	unsigned int refused;
	int value;
};

static int storage_write(struct storage *s, const char *domain, uint32_t rank,
			 uint64_t id, uint64_t token, int value)
{
	struct ordlock *ol = ordlock_open(NULL);
	int ret;

	if (!ol)
		return -errno;
	ret = ordlock_token_check(ol, domain, rank, id, token);
	if (!ret && token < s->highest)
		ret = -ESTALE;
	ordlock_close(ol);
	if (ret) {
		s->refused++;
		return ret;
	}
	s->highest = token;
	s->accepted++;
	s->value = value;
	return 0;
}

struct stopped {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct pbarrier *held;
	struct storage storage;
	uint64_t token;
	/* after SIGCONT */
	int write_ret[3];
	int check_ret;
	int acquire_ret;
	unsigned int reason;
	unsigned int revoked_n;
	struct ordlock_key revoked_key;
	uint64_t revoked_token;
	unsigned int cycle_len;
	int release_err;
	int renew_err;
	int info_ret;
	long nheld;
	int ack_ret;
	int reacquire_ret;
	uint64_t reacquire_token;
	short revents;
};

static int stopped_main(void *arg)
{
	struct stopped *st = arg;
	struct ordlock *ol = olt_child_open(st->domain);
	struct ordlock_key k = ORDLOCK_EX(1, 1), k2 = ORDLOCK_EX(2, 2);
	struct ordlock_revoked_key rk[4];
	struct ordlock_owner_info info;
	struct pollfd pfd;
	int i, n;

	if (ordlock_acquire_lease(ol, &k, 1, 0, 0, 400, &st->token))
		return 2;
	if (storage_write(&st->storage, st->domain, 1, 1, st->token, 1))
		return 3;
	if (pbarrier_wait(st->held))
		return 4;
	raise(SIGSTOP);
	/* Resumed: the lease expired meanwhile. What did it keep? */
	pfd.fd = ordlock_fd(ol);
	pfd.events = POLLPRI;
	pfd.revents = 0;
	poll(&pfd, 1, 0);
	st->revents = pfd.revents;
	for (i = 0; i < 3; i++)
		st->write_ret[i] = storage_write(&st->storage, st->domain, 1, 1,
						 st->token, 100 + i);
	st->check_ret = ordlock_token_check(ol, NULL, 1, 1, st->token);
	st->acquire_ret = ordlock_acquire(ol, &k2, 1, 0, 0, NULL);
	st->reason = ordlock_last_failure(ol)->reason;
	st->cycle_len = ordlock_last_failure(ol)->cycle_len;
	n = ordlock_revoked_keys(ol, rk, 4);
	st->revoked_n = n < 0 ? 0 : (unsigned int)n;
	if (n > 0) {
		st->revoked_key = rk[0].key;
		st->revoked_token = rk[0].token;
	}
	st->release_err = ordlock_release(ol, &k, 1);
	st->renew_err = ordlock_renew(ol, 0, NULL);
	st->info_ret = ordlock_owner_info(ol, &info);
	st->nheld = info.nheld;
	st->ack_ret = ordlock_release_all(ol);
	st->reacquire_ret = ordlock_acquire(ol, &k2, 1, OLT_LONG_MS, 0,
					    &st->reacquire_token);
	ordlock_close(ol);
	return 0;
}

static void test_stopped_holder(void)
{
	struct stopped *st = shm_alloc(sizeof(*st));
	struct ordlock *w;
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	uint64_t token = 0, t0;
	pid_t pid;
	int i;

	snprintf(st->domain, sizeof(st->domain), "%s", olt_domain("lease"));
	st->held = pbarrier_new(2);
	pid = child_start(stopped_main, st);
	if (pbarrier_wait(st->held))
		bail_out("the holder did not take its key");
	for (i = 0; i < 2000 && proc_state(pid) != 'T'; i++)
		usleep(1000);
	is_int(proc_state(pid), 'T', "stopped holder: the holder is stopped");
	w = olt_open(st->domain);
	t0 = now_ms();
	/* Without leases this waits the whole OLT_LONG_MS and times out */
	is_int(ordlock_acquire(w, &k, 1, OLT_LONG_MS, 0, &token), 0,
	       "stopped holder: the waiter is granted while the holder is stopped");
	diag("granted after %llu ms (lease 400 ms)",
	     (unsigned long long)(now_ms() - t0));
	ok(token > st->token, "stopped holder: with a higher token (%llu > %llu)",
	   (unsigned long long)token, (unsigned long long)st->token);
	is_int(ordlock_token_check(w, st->domain, 1, 1, token), 0,
	       "stopped holder: the waiter's token is live");
	is_errno(ordlock_token_check(w, st->domain, 1, 1, st->token), ESTALE,
		 "stopped holder: the holder's token is stale");
	is_int(storage_write(&st->storage, st->domain, 1, 1, token, 2), 0,
	       "stopped holder: the waiter writes with its token");
	kill(pid, SIGCONT);
	is_int(child_wait(pid, CHILD_TIMEOUT_S), 0, "stopped holder: the holder ran to its end");
	ok(st->revents & POLLPRI, "stopped holder: poll() reported POLLPRI on resuming");
	for (i = 0; i < 3; i++)
		is_errno(st->write_ret[i], ESTALE,
			 "stopped holder: its write #%d with the old token is refused", i);
	is_int(st->storage.value, 2, "stopped holder: the storage kept the waiter's write");
	is_int(st->storage.accepted, 2, "stopped holder: 2 writes accepted (holder before, waiter)");
	is_int(st->storage.refused, 3, "stopped holder: 3 refused");
	is_errno(st->check_ret, ESTALE, "stopped holder: its own token check fails");
	is_errno(st->acquire_ret, EKEYEXPIRED, "stopped holder: its next call fails with EKEYEXPIRED");
	is_int(st->reason, ORDLOCK_REASON_REVOKED, "stopped holder: reason revoked");
	is_int(st->cycle_len, 1, "stopped holder: the record counts 1 revoked key");
	is_int(st->revoked_n, 1, "stopped holder: LAST_FAILURE lists 1 revoked key");
	ok(olt_key_eq(&st->revoked_key, 1, 1, EX), "stopped holder: the revoked key is exclusive 1:1");
	is_int(st->revoked_token, st->token, "stopped holder: with the token it was held under");
	is_errno(st->release_err, EKEYEXPIRED, "stopped holder: RELEASE of a key: EKEYEXPIRED");
	is_errno(st->renew_err, EKEYEXPIRED, "stopped holder: RENEW: EKEYEXPIRED");
	is_int(st->info_ret, 0, "stopped holder: OWNER_INFO answers");
	is_int(st->nheld, 0, "stopped holder: it holds nothing");
	is_int(st->ack_ret, 0, "stopped holder: RELEASE_ALL acknowledges");
	is_int(st->reacquire_ret, 0, "stopped holder: then it may lock again");
	ok(st->reacquire_token > token, "stopped holder: with a token above the waiter's");
	ordlock_close(w);
	pbarrier_free(st->held);
	shm_free(st, sizeof(*st));
}

struct renewer {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct pbarrier *held;
	struct pbarrier *go;
	int renews;
	int failures;
	uint64_t max_left;
	int check_ret;
	short revents;
};

static int renewer_main(void *arg)
{
	struct renewer *r = arg;
	struct ordlock *ol = olt_child_open(r->domain);
	struct ordlock_key k = ORDLOCK_EX(3, 3);
	struct pollfd pfd;
	uint64_t token, left, t0;

	if (ordlock_acquire_lease(ol, &k, 1, 0, 0, 1000, &token))
		return 2;
	if (pbarrier_wait(r->held) || pbarrier_wait(r->go))
		return 3;
	/* 4 s: four lease periods, renewed every 100 ms */
	t0 = now_ms();
	while (now_ms() - t0 < 4000) {
		if (ordlock_renew(ol, 0, &left))
			r->failures++;
		else
			r->renews++;
		if (left > r->max_left)
			r->max_left = left;
		usleep(100000);
	}
	r->check_ret = ordlock_token_check(ol, NULL, 3, 3, token);
	pfd.fd = ordlock_fd(ol);
	pfd.events = POLLPRI;
	pfd.revents = 0;
	poll(&pfd, 1, 0);
	r->revents = pfd.revents;
	ordlock_close(ol);
	return 0;
}

struct waiter {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	int ret;
	uint64_t ms;
};

static int waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ordlock *ol = olt_child_open(w->domain);
	struct ordlock_key k = ORDLOCK_EX(3, 3);
	uint64_t t0;

	t0 = now_ms();
	w->ret = ordlock_acquire(ol, &k, 1, OLT_LONG_MS, 0, NULL);
	w->ms = now_ms() - t0;
	ordlock_close(ol);
	return 0;
}

static void test_renew(void)
{
	struct renewer *r = shm_alloc(sizeof(*r));
	struct waiter *w = shm_alloc(sizeof(*w));
	pid_t rp, wp;

	snprintf(r->domain, sizeof(r->domain), "%s", olt_domain("renew"));
	memcpy(w->domain, r->domain, sizeof(w->domain));
	r->held = pbarrier_new(2);
	r->go = pbarrier_new(2);
	rp = child_start(renewer_main, r);
	if (pbarrier_wait(r->held))
		bail_out("the renewer did not take its key");
	wp = child_start(waiter_main, w);
	is_int(wait_blocked_ioctl(wp, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "renew: a waiter queues behind the renewing holder");
	pbarrier_wait(r->go);
	is_int(child_wait(rp, CHILD_TIMEOUT_S), 0, "renew: the renewer ran to its end");
	is_int(r->failures, 0, "renew: no RENEW failed in 4 lease periods");
	ok(r->renews >= 10, "renew: %d renewals", r->renews);
	ok(r->max_left > 0 && r->max_left <= 1000,
	   "renew: time left after a renewal within the period (%llu ms)",
	   (unsigned long long)r->max_left);
	is_int(r->check_ret, 0, "renew: the holder's token is still live after 4 periods");
	is_int(r->revents & POLLPRI, 0, "renew: no revocation reported");
	is_int(child_wait(wp, CHILD_TIMEOUT_S), 0, "renew: the waiter ran to its end");
	is_int(w->ret, 0, "renew: the waiter is granted once the holder closes");
	ok(w->ms >= 3500, "renew: not before (it waited %llu ms)", (unsigned long long)w->ms);
	pbarrier_free(r->held);
	pbarrier_free(r->go);
	shm_free(r, sizeof(*r));
	shm_free(w, sizeof(*w));
}

#define MAX_HOLD_MS 2000
#define LONG_HOLD_MS 60000

static int set_max_hold(struct ordlock *ol, const char *domain, unsigned int ms,
			struct ordlock_domain_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->flags = ORDLOCK_DOMAIN_SET_MAX_HOLD;
	cfg->max_hold_ms = ms;
	return ordlock_domain_config(ol, domain, cfg);
}

/* The domain's count of revocations, from debugfs "stats" */
static long revocations(const char *domain)
{
	return olt_stats_domain(domain, "revocations");
}

static volatile sig_atomic_t got_signal;

static void on_usr1(int sig)
{
	(void)sig;
	got_signal++;
}

static void test_max_hold_poll_signal(void)
{
	const char *d = olt_domain("maxhold");
	struct ordlock_domain_config cfg;
	struct ordlock_key k = ORDLOCK_EX(5, 5), k2 = ORDLOCK_SH(6, 6);
	struct ordlock *ol, *other;
	struct sigaction sa;
	struct pollfd pfd;
	uint64_t left = 0, token, t0;
	int i;

	ol = olt_open(d);
	/*
	 * MAX_HOLD_MS must outlast the steps between a grant and its renewal
	 * on a loaded machine (300 ms did not: a renewal came too late)
	 */
	is_int(set_max_hold(ol, d, MAX_HOLD_MS, &cfg), 0, "max_hold: set to %d ms", MAX_HOLD_MS);
	is_int(cfg.max_hold_ms, MAX_HOLD_MS, "max_hold: read back %d", MAX_HOLD_MS);
	memset(&cfg, 0, sizeof(cfg));
	is_int(ordlock_domain_config(ol, d, &cfg), 0, "max_hold: read");
	is_int(cfg.max_hold_ms, MAX_HOLD_MS, "max_hold: reads %d", MAX_HOLD_MS);

	/* A request that asks for a minute is capped */
	is_int(ordlock_acquire_lease(ol, &k, 1, 0, 0, 60000, &token), 0,
	       "max_hold: acquire with a 60 s lease");
	is_int(ordlock_renew(ol, 0, &left), 0, "max_hold: renew");
	ok(left > 0 && left <= MAX_HOLD_MS, "max_hold: the lease is capped to %d ms (%llu left)",
	   MAX_HOLD_MS, (unsigned long long)left);
	is_int(ordlock_renew(ol, 60000, &left), 0, "max_hold: renew asking for 60 s");
	ok(left > 0 && left <= MAX_HOLD_MS, "max_hold: capped again (%llu left)",
	   (unsigned long long)left);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	got_signal = 0;
	is_int(ordlock_set_revoke_signal(ol, SIGUSR1), 0, "signal: SIGUSR1 on revocation");
	pfd.fd = ordlock_fd(ol);
	pfd.events = POLLPRI;
	pfd.revents = 0;
	is_int(poll(&pfd, 1, 0), 0, "poll: nothing to report before the deadline");
	/* Without the kernel revoking, this poll times out after 20 s */
	t0 = now_ms();
	is_int(poll(&pfd, 1, BLOCKED_TIMEOUT_MS), 1, "poll: reports the revocation");
	ok(pfd.revents & POLLPRI, "poll: POLLPRI (%#x)", pfd.revents);
	diag("revoked %llu ms after the renewal", (unsigned long long)(now_ms() - t0));
	for (i = 0; i < 2000 && !got_signal; i++)
		usleep(1000);
	is_int(got_signal, 1, "signal: SIGUSR1 delivered once");
	is_errno(olt_probe(d, 5, 5, EX), 0, "max_hold: the key is free");
	is_int(olt_nheld(ol), 0, "max_hold: the owner holds nothing");
	ok(revocations(d) == 1, "stats: 1 revocation counted (%ld)", revocations(d));
	is_int(ordlock_release_all(ol), 0, "acknowledge");
	pfd.revents = 0;
	is_int(poll(&pfd, 1, 0), 0, "poll: nothing after the acknowledgement");

	/* A request that asks for no lease gets max_hold_ms (a long one now) */
	is_int(set_max_hold(ol, d, LONG_HOLD_MS, &cfg), 0, "max_hold: set to %d ms", LONG_HOLD_MS);
	is_int(ordlock_acquire(ol, &k2, 1, 0, 0, &token), 0, "max_hold: acquire without a lease");
	other = olt_open(d);
	is_int(ordlock_acquire(other, &k, 1, 0, 0, NULL), 0,
	       "max_hold: another owner takes another key");
	is_int(ordlock_renew(ol, 0, &left), 0, "max_hold: renew the lease it did not ask for");
	ok(left > 0 && left <= LONG_HOLD_MS, "max_hold: it has one of max_hold_ms (%llu left)",
	   (unsigned long long)left);
	is_int(set_max_hold(ol, d, 0, &cfg), 0, "max_hold: back to 0");
	is_int(ordlock_set_revoke_signal(ol, 0), 0, "signal: none");
	ordlock_close(other);
	ordlock_close(ol);
	signal(SIGUSR1, SIG_DFL);
}

static void test_bad_input(void)
{
	const char *d = olt_domain("leasebad");
	struct ordlock *ol = olt_open(d);
	struct ordlock_key k = ORDLOCK_EX(7, 7);
	struct ordlock_token_check tc;
	struct ordlock_renew r;
	uint64_t token, left = 1;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flags = 1U << 1;
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_RENEW, &r), EINVAL, "renew: unknown flag: EINVAL");
	is_int(r.failure.reason, ORDLOCK_REASON_INVALID, "renew: reason invalid");
	r.flags = 0;
	r.signal = SIGUSR1;
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_RENEW, &r), EINVAL,
		 "renew: a signal without ORDLOCK_RENEW_SET_SIGNAL: EINVAL");
	r.flags = ORDLOCK_RENEW_SET_SIGNAL;
	r.signal = 65;
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_RENEW, &r), EINVAL, "renew: signal 65: EINVAL");
	r.size = 8;
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_RENEW, &r), EINVAL, "renew: size too small: EINVAL");
	is_errno(ordlock_renew(ol, 0, &left), ENOENT, "renew holding nothing: ENOENT");
	is_int(ordlock_last_failure(ol)->reason, ORDLOCK_REASON_NOT_HELD, "renew: reason not-held");

	/* lease_ms in a domain without max_hold_ms: a lease all the same */
	is_int(ordlock_acquire_lease(ol, &k, 1, 0, 0, 30000, &token), 0,
	       "lease_ms without max_hold_ms: granted");
	is_int(ordlock_renew(ol, 0, &left), 0, "renew");
	ok(left > 29000 && left <= 30000, "it has its 30 s lease (%llu left)",
	   (unsigned long long)left);
	is_int(ordlock_release_all(ol), 0, "release");
	is_int(ordlock_acquire(ol, &k, 1, 0, 0, &token), 0, "a request without a lease");
	is_int(ordlock_renew(ol, 0, &left), 0, "renew without a lease: 0");
	is_int(left, 0, "... and no time left: there is no lease");

	memset(&tc, 0, sizeof(tc));
	tc.size = sizeof(tc);
	tc.key = k;
	tc.token = token;
	is_int(ioctl(ordlock_fd(ol), ORDLOCK_IOC_TOKEN_CHECK, &tc), 0, "token check: live");
	tc.flags = 1;
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_TOKEN_CHECK, &tc), EINVAL,
		 "token check: unknown flag: EINVAL");
	tc.flags = 0;
	tc.key.mode = 3;
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_TOKEN_CHECK, &tc), EINVAL,
		 "token check: mode 3: EINVAL");
	tc.key.mode = 0;
	tc.key.__reserved = 1;
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_TOKEN_CHECK, &tc), EINVAL,
		 "token check: key __reserved: EINVAL");
	tc.key.__reserved = 0;
	snprintf(tc.domain, sizeof(tc.domain), "a b");
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_TOKEN_CHECK, &tc), EINVAL,
		 "token check: bad domain name: EINVAL");
	snprintf(tc.domain, sizeof(tc.domain), "no-such-domain-%d", getpid());
	is_errno(ioctl(ordlock_fd(ol), ORDLOCK_IOC_TOKEN_CHECK, &tc), ESTALE,
		 "token check: a domain that does not exist: ESTALE");
	is_errno(ordlock_token_check(ol, NULL, 7, 8, token), ESTALE,
		 "token check: a key not held: ESTALE");
	is_errno(ordlock_token_check(ol, NULL, 7, 7, token + 1), ESTALE,
		 "token check: another token: ESTALE");
	is_errno(ordlock_token_check(ol, NULL, 7, 7, 0), ESTALE, "token check: token 0: ESTALE");
	is_int(ordlock_token_check(ol, d, 7, 7, token), 0, "token check: by domain name: live");
	is_errno(ordlock_token_check(ol, "default", 7, 7, token), ESTALE,
		 "token check: the same key in another domain: ESTALE");
	is_int(ordlock_release_all(ol), 0, "release");
	is_errno(ordlock_token_check(ol, NULL, 7, 7, token), ESTALE,
		 "token check: after the release: ESTALE");
	ordlock_close(ol);
}

/* Revoked owners refuse CONVERT and SET_DOMAIN too, and keep the record */
static void test_revoked_calls(void)
{
	const char *d = olt_domain("leaserev");
	struct ordlock *ol = olt_open(d);
	struct ordlock_key k = ORDLOCK_SH(8, 8), k2 = ORDLOCK_EX(9, 1), k3 = ORDLOCK_EX(9, 2);
	struct ordlock_failure f;
	struct pollfd pfd;
	uint64_t token;

	is_int(ordlock_acquire_lease(ol, &k, 1, 0, 0, 100, &token), 0, "revoked: acquire, lease 100 ms");
	is_int(ordlock_acquire_lease(ol, &k2, 1, 0, 0, 60000, NULL), 0,
	       "revoked: a second grant with a longer lease keeps the earlier deadline");
	pfd.fd = ordlock_fd(ol);
	pfd.events = POLLPRI;
	is_int(poll(&pfd, 1, BLOCKED_TIMEOUT_MS), 1, "revoked: revoked after 100 ms");
	k.mode = EX;
	is_errno(ordlock_convert(ol, k, 0, 0, NULL), EKEYEXPIRED, "revoked: CONVERT: EKEYEXPIRED");
	is_errno(ordlock_set_domain(ol, "default"), EKEYEXPIRED, "revoked: SET_DOMAIN: EKEYEXPIRED");
	is_errno(ordlock_try_acquire(ol, &k3, 1, NULL), EKEYEXPIRED, "revoked: try-acquire: EKEYEXPIRED");
	is_int(ordlock_kernel_last_failure(ol, &f), 0, "revoked: LAST_FAILURE answers");
	is_int(f.reason, ORDLOCK_REASON_REVOKED, "revoked: the record says revoked");
	is_int(f.cycle_len, 2, "revoked: 2 keys revoked");
	ok(olt_key_eq(&f.key, 8, 8, SH), "revoked: first key 8:8 shared");
	ok(olt_key_eq(&f.held, 9, 1, EX), "revoked: last key 9:1 exclusive");
	diag("%s", olt_fail_str(&f));
	is_errno(olt_probe(d, 9, 1, EX), 0, "revoked: 9:1 is free");
	is_int(ordlock_release_all(ol), 0, "revoked: acknowledge");
	is_int(ordlock_try_acquire(ol, &k3, 1, NULL), 0, "revoked: then a try-acquire works");
	ordlock_close(ol);
}

/* ordlockctl: domain NAME set max-hold, check-token, the locks' LEASE */
static void test_cli(void)
{
	const char *d = olt_domain("leasecli");
	struct ordlock_key k = ORDLOCK_EX(12, 12);
	char out[8192];
	struct ordlock *ol;
	uint64_t token;

	/*
	 * The lease must outlast the four commands before "-j locks": on the
	 * debug kernel, beside a second guest, each took over a second and a
	 * 5 s cap ran out before the listing.
	 */
	is_int(olt_ctl(out, sizeof(out), "domain %s set max-hold 120000", d), 0,
	       "cli: domain NAME set max-hold 120000");
	ok(strstr(out, "max_hold_ms 120000") != NULL, "cli: it says max_hold_ms 120000 (%s)", out);
	is_int(olt_ctl(out, sizeof(out), "-j domain %s", d), 0, "cli: -j domain NAME");
	ok(strstr(out, "\"max_hold_ms\":120000") != NULL, "cli: JSON max_hold_ms 120000 (%s)", out);
	ol = olt_open(d);
	is_int(ordlock_acquire(ol, &k, 1, 0, 0, &token), 0, "cli: acquire 12:12");
	is_int(olt_ctl(out, sizeof(out), "check-token -d %s 12:12 %llu", d,
		       (unsigned long long)token), 0, "cli: check-token of the live token: exit 0");
	ok(strstr(out, "live") != NULL, "cli: says live (%s)", out);
	is_int(olt_ctl(out, sizeof(out), "check-token -d %s 12:12 %llu", d,
		       (unsigned long long)token + 1), 1, "cli: check-token of another token: exit 1");
	ok(strstr(out, "stale") != NULL, "cli: says stale (%s)", out);
	is_int(olt_ctl(out, sizeof(out), "check-token -d %s 12:12 x", d), 64,
	       "cli: check-token of a bad token: exit 64 (EX_USAGE)");
	is_int(olt_ctl(out, sizeof(out), "-j locks -d %s", d), 0, "cli: -j locks");
	ok(strstr(out, "\"lease_left_ms\":") != NULL && strstr(out, "\"lease_left_ms\":null") == NULL,
	   "cli: the holder's lease_left_ms is a number (max_hold_ms gave it a lease): %s", out);
	is_int(olt_ctl(out, sizeof(out), "domain %s set max-hold 0", d), 0, "cli: max-hold back to 0");
	ordlock_close(ol);
}

int main(void)
{
	watchdog_start(240);
	test_bad_input();
	test_stopped_holder();
	test_renew();
	test_max_hold_poll_signal();
	test_revoked_calls();
	test_cli();
	return tap_done();
}
