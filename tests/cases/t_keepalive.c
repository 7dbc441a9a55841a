// SPDX-License-Identifier: GPL-2.0
/*
 * t_keepalive: libordlock's lease keep-alive and the query of a key.
 *
 * - ordlock_keepalive_start() keeps a 600 ms lease alive for 2 s (more
 *   than three periods) while another process waits for the key: the
 *   waiter times out naming the holder, the token is still live, nothing
 *   is reported, and ordlock_keepalive_stop() returns 0.
 * - A lease that expires while the keep-alive is not due to renew (its
 *   interval set far past the lease) is reported at once, by the
 *   revocation (POLLPRI) and not by a renewal: the callback runs once with
 *   -EKEYEXPIRED and reason "revoked", the eventfd becomes readable,
 *   ordlock_keepalive_error() says so, the token is stale, and
 *   ordlock_keepalive_stop() returns -EKEYEXPIRED: never silently.
 * - A hold without a lease has nothing to keep (EINVAL); an owner that
 *   holds nothing cannot start one (ENOENT).
 * - ordlock_query(): a free key; a key held exclusively (the holder's pid
 *   and token); shared by two owners; a waiter queued behind (its pid,
 *   counted); the same key of another domain is free; free again after
 *   the release. The query takes nothing (a try-lock of the free key by
 *   another owner succeeds right after).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define RANK 907	/* no other test uses it, in "default" either */

/* what the callback saw (it runs on the keep-alive's thread) */
struct seen {
	int calls;
	int err;
	unsigned int reason;
};

static void on_lost(struct ordlock_keepalive *ka, int err,
		    const struct ordlock_failure *f, void *arg)
{
	struct seen *s = arg;

	(void)ka;
	__atomic_add_fetch(&s->calls, 1, __ATOMIC_SEQ_CST);
	s->err = err;
	s->reason = f->reason;
}

struct waiter {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	uint64_t id;
	unsigned int timeout_ms;
	int ret;
	uint32_t pid;
};

/* waits for key (RANK, id) as long as it is told */
static int waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ordlock *ol = ordlock_open(w->domain);
	struct ordlock_key k = ORDLOCK_EX(RANK, w->id);

	if (!ol)
		return 1;
	w->ret = ordlock_acquire(ol, &k, 1, w->timeout_ms, 0, NULL);
	w->pid = ordlock_last_failure(ol)->pid;
	ordlock_close(ol);
	return 0;
}

/*
 * @k acquired by @ol with a lease of @lease_ms (its token in *@token), and
 * kept alive every @every_ms, reporting to @seen; bails out without it
 */
static struct ordlock_keepalive *leased(struct ordlock *ol, const struct ordlock_key *k,
					unsigned int lease_ms, unsigned int every_ms,
					struct seen *seen, uint64_t *token,
					const char *what)
{
	struct ordlock_keepalive *ka;

	is_int(ordlock_acquire_lease(ol, k, 1, 0, 0, lease_ms, token), 0,
	       "%s: acquired with a lease of %u ms", what, lease_ms);
	ka = ordlock_keepalive_start(ol, 0, every_ms, on_lost, seen);
	ok(ka != NULL, "%s: ordlock_keepalive_start() every %u ms", what, every_ms);
	if (!ka)
		bail_out("no keep-alive: %s", strerror(errno));
	return ka;
}

static void test_renewals(void)
{
	const char *d = olt_domain("ka");
	struct ordlock *ol = olt_open(d);
	struct ordlock_key k = ORDLOCK_EX(RANK, 1);
	struct ordlock_keepalive *ka;
	struct seen seen = { 0 };
	struct waiter *w = shm_alloc(sizeof(*w));
	uint64_t token = 0, t0;
	pid_t pid;

	snprintf(w->domain, sizeof(w->domain), "%s", d);
	w->id = 1;
	w->timeout_ms = 1200;
	ka = leased(ol, &k, 600, 100, &seen, &token, "renewals");
	pid = child_start(waiter_main, w);
	/* the body: 2 s, more than three lease periods */
	t0 = now_ms();
	while (now_ms() - t0 < 2000)
		usleep(50000);
	is_int(child_wait(pid, 60), 0, "renewals: the waiter ran");
	is_errno(w->ret, ETIMEDOUT, "renewals: the waiter timed out: the hold outlived its lease");
	is_int(w->pid, getpid(), "renewals: the waiter's record names the holder");
	is_int(ordlock_keepalive_error(ka), 0, "renewals: nothing lost");
	is_int(ordlock_token_check(ol, NULL, RANK, 1, token), 0,
	       "renewals: the token is still the live grant after 2 s");
	ok(ordlock_keepalive_renewals(ka) >= 3, "renewals: renewed (%lu times)",
	   ordlock_keepalive_renewals(ka));
	is_int(ordlock_keepalive_stop(ka), 0, "renewals: stop says the hold was kept");
	is_int(seen.calls, 0, "renewals: the callback never ran");
	is_int(ordlock_release_all(ol), 0, "renewals: the key is released as usual");
	ordlock_close(ol);
	shm_free(w, sizeof(*w));
}

static void test_revoked(void)
{
	struct ordlock *ol = olt_open(olt_domain("ka"));
	struct ordlock_key k = ORDLOCK_EX(RANK, 2);
	struct ordlock_keepalive *ka;
	struct seen seen = { 0 };
	struct pollfd pfd;
	uint64_t token = 0;

	/* renewals every 60 s: only the revocation can end this */
	ka = leased(ol, &k, 300, 60000, &seen, &token, "revoked");
	pfd.fd = ordlock_keepalive_fd(ka);
	pfd.events = POLLIN;
	pfd.revents = 0;
	/* a hang guard, far below the next renewal */
	is_int(poll(&pfd, 1, 30000), 1, "revoked: the keep-alive's fd became readable");
	is_int(ordlock_keepalive_error(ka), -EKEYEXPIRED,
	       "revoked: ordlock_keepalive_error() says EKEYEXPIRED");
	is_int(ordlock_keepalive_failure(ka)->reason, ORDLOCK_REASON_REVOKED,
	       "revoked: its record's reason is \"revoked\"");
	is_int(ordlock_keepalive_renewals(ka), 0,
	       "revoked: reported by the revocation, before any renewal was due");
	is_int(__atomic_load_n(&seen.calls, __ATOMIC_SEQ_CST), 1, "revoked: the callback ran once");
	is_int(seen.err, -EKEYEXPIRED, "revoked: the callback got -EKEYEXPIRED");
	is_errno(ordlock_token_check(ol, NULL, RANK, 2, token), ESTALE,
		 "revoked: the token is stale");
	is_errno(ordlock_keepalive_stop(ka), EKEYEXPIRED,
		 "revoked: stop returns -EKEYEXPIRED: never silently");
	is_int(ordlock_release_all(ol), 0, "revoked: RELEASE_ALL acknowledges");
	ordlock_close(ol);
}

static void test_refused(void)
{
	struct ordlock *ol = olt_open(olt_domain("ka"));
	struct ordlock_key k = ORDLOCK_EX(RANK, 3);

	ok(!ordlock_keepalive_start(ol, 0, 0, NULL, NULL) && errno == ENOENT,
	   "refused: nothing held: ENOENT (%s)", strerror(errno));
	is_int(ordlock_acquire(ol, &k, 1, 0, 0, NULL), 0, "refused: a hold without a lease");
	ok(!ordlock_keepalive_start(ol, 0, 0, NULL, NULL) && errno == EINVAL,
	   "refused: no lease to keep: EINVAL (%s)", strerror(errno));
	ordlock_close(ol);
}

static int wait_waiters(const char *d, uint64_t id, unsigned int n,
			struct ordlock_key_state *st)
{
	uint64_t t0 = now_ms();

	while (!ordlock_query(d, RANK, id, st) && st->nwaiters != n) {
		if (now_ms() - t0 > 30000)
			return -ETIMEDOUT;
		usleep(5000);
	}
	return st->nwaiters == n ? 0 : -EPROTO;
}

static void test_query(void)
{
	const char *d = olt_domain("kq");
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock *a, *b, *c;
	struct ordlock_key ex = ORDLOCK_EX(RANK, 10), sh = ORDLOCK_SH(RANK, 11);
	struct ordlock_key_state st;
	struct waiter *w = shm_alloc(sizeof(*w));
	uint64_t token = 0;
	pid_t pid;

	snprintf(dom, sizeof(dom), "%s", d);
	snprintf(w->domain, sizeof(w->domain), "%s", d);
	w->id = 10;
	w->timeout_ms = OLT_LONG_MS;
	a = olt_open(dom);
	b = olt_open(dom);
	is_int(ordlock_query(dom, RANK, 10, &st), 0, "query: of a free key");
	ok(st.mode == 0 && st.nholders == 0 && st.nwaiters == 0 && st.npids == 0,
	   "query: free: mode 0, no holder, no waiter");
	is_int(ordlock_acquire(a, &ex, 1, 0, 0, &token), 0, "query: held exclusively");
	is_int(ordlock_query(dom, RANK, 10, &st), 0, "query: of the held key");
	ok(st.mode == ORDLOCK_MODE_EXCLUSIVE && st.nholders == 1 && st.npids == 1 &&
	   st.pids[0] == (uint32_t)getpid() && st.token == token && st.nwaiters == 0,
	   "query: exclusive, by this pid, under its token (mode %u, %u holders, pid %u)",
	   st.mode, st.nholders, st.pids[0]);
	pid = child_start(waiter_main, w);
	is_int(wait_waiters(dom, 10, 1, &st), 0, "query: the waiter is counted");
	is_int(st.waiter_pid, pid, "query: the first waiter's pid");
	is_int(st.nholders, 1, "query: still one holder");
	is_int(ordlock_release_all(a), 0, "query: the holder lets go");
	is_int(child_wait(pid, 60), 0, "query: the waiter exits");
	is_int(w->ret, 0, "query: the waiter was granted");
	is_int(ordlock_query(dom, RANK, 10, &st), 0, "query: after the release");
	ok(st.mode == 0 && st.nholders == 0 && st.nwaiters == 0, "query: free again");

	is_int(ordlock_acquire(a, &sh, 1, 0, 0, NULL), 0, "query: shared by one owner");
	is_int(ordlock_acquire(b, &sh, 1, 0, 0, NULL), 0, "query: shared by another");
	is_int(ordlock_query(dom, RANK, 11, &st), 0, "query: of the shared key");
	ok(st.mode == ORDLOCK_MODE_SHARED && st.nholders == 2 && st.npids == 2,
	   "query: shared, two holders (mode %u, %u)", st.mode, st.nholders);
	is_int(ordlock_query(NULL, RANK, 11, &st), 0, "query: the default domain");
	ok(st.mode == 0 && st.nholders == 0, "query: the same key of another domain is free");
	is_int(ordlock_query(dom, RANK, 12, &st), 0, "query: a key never used");
	ok(st.mode == 0 && st.nholders == 0, "query: ... is free");
	c = olt_open(dom);
	is_int(ordlock_try_acquire(c, &ex, 1, NULL), 0,
	       "query: took nothing: another owner takes the free key at once");
	ordlock_close(c);
	is_errno(ordlock_query(dom, RANK, 11, NULL), EINVAL, "query: no result: EINVAL");
	ordlock_close(a);
	ordlock_close(b);
	shm_free(w, sizeof(*w));
}

int main(void)
{
	watchdog_start(120);
	test_renewals();
	test_revoked();
	test_refused();
	test_query();
	return tap_done();
}
