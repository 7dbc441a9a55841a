// SPDX-License-Identifier: GPL-2.0
/*
 * t_model: a seeded model-based test (issue 27). Random acquires (try,
 * timed, REORDER, leases), conversions, releases (some of keys not held),
 * renewals, token checks, kills (an owner's descriptor closed; a child
 * process holding keys killed with SIGKILL) and lease expiries, from six
 * owners of one thread and a child process, in an enforce domain, a
 * detect domain and an enforce domain with strict ranks, on nine keys; each answer is compared with a small
 * reference model of the documented semantics (include/uapi/linux/ordlock.h):
 *
 *  - keys sorted, duplicates merged (the stronger mode wins), all or
 *    nothing; shared with shared, exclusive with nothing;
 *  - the order rule in enforce (EDEADLK, reason order; reason strict
 *    where only the strict rule is broken; a held key asked again is
 *    EDEADLK in every policy); REORDER granted in place when the
 *    keys are free, and otherwise letting go of the held keys above the
 *    lowest requested key (RESULT_RELEASED);
 *  - a try of a taken key: EAGAIN, reason busy, the first taken key in
 *    key order (its index in the caller's array), a holder's pid and mode;
 *    a timed wait for a key the child holds: ETIMEDOUT naming the child;
 *  - tokens: every grant's above every earlier grant's of the domain (so
 *    per key above every earlier one), one token for all the keys of a
 *    grant, held keys keep theirs; an upgrade gets a new one, a downgrade
 *    keeps it; OWNER_INFO's nheld and last_token; TOKEN_CHECK answers 0
 *    exactly for the live (key, token) pairs;
 *  - release: all named keys or none (ENOENT, reason not-held); released
 *    counts them; RELEASE_ALL;
 *  - leases: RENEW (ENOENT with nothing held, left_ms 0 without a lease);
 *    after the deadline the owner's keys are free for the others, every
 *    call of the owner but RELEASE_ALL fails with EKEYEXPIRED (reason
 *    revoked) and LAST_FAILURE lists the revoked keys with their tokens,
 *    until RELEASE_ALL acknowledges.
 *
 * The operations never wait on a key an owner of this thread holds (a try
 * does, or the owner that waits: the wait would be a cycle through the
 * thread, see DOC: Errors): timed waits are made only where the child is
 * the only holder in the way, or nobody is. Each run prints its seed;
 * ORDLOCK_MODEL_SEED=N replays it, ORDLOCK_MODEL_STEPS=N changes the
 * length. A mismatch prints the seed, the step and the last steps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

#define NDOM	3		/* 0: enforce, 1: detect, 2: enforce, strict ranks */
#define NOWN	3		/* owners of this thread per domain */
#define NRANK	3
#define NID	3
#define NKEY	(NRANK * NID)
#define MAXREQ	4
#define LONG_LEASE	600000	/* ms: never expires within a run */
#define SHORT_LEASE	10	/* ms: the lease an expiry step renews to */
#define WAIT_MS	20		/* the timeout of a wait the model says fails */
#define HIST	40

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static unsigned int pick(unsigned int n)
{
	return (unsigned int)(rnd() % n);
}

/* The model */
struct mhold {
	int mode;		/* 0: not held */
	uint64_t token;
};

struct mowner {
	int fd;
	int dom;
	struct mhold h[NKEY];
	int revoked;
	struct mhold rev[NKEY];	/* what was revoked */
	uint64_t last_token;
};

struct mchild {
	pid_t pid;
	struct mhold h[NKEY];
};

/* What the child process does: shared with it */
struct cshared {
	struct pbarrier *done;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int n;
	struct ordlock_key keys[MAXREQ];
	int ret;
	uint64_t token;
};

static struct mowner own[NDOM * NOWN];
static struct mchild child[NDOM];
static char dname[NDOM][ORDLOCK_DOMAIN_NAME_MAX];
static uint64_t maxtok[NDOM];
/* Every token a key was granted under, for TOKEN_CHECK of old ones */
static uint64_t past[NDOM][NKEY][8];
static unsigned int npast[NDOM][NKEY];
static pid_t me;

static unsigned long long seed;
static unsigned long step, nsteps;
static char hist[HIST][200];
static int mismatches;
static unsigned long counts[16];

enum { C_ACQ, C_GRANT, C_ORDER, C_BUSY, C_TIMEOUT, C_REORDER, C_CONVERT,
       C_RELEASE, C_RENEW, C_CHECK, C_KILL, C_CHILD, C_EXPIRE, C_REVOKED,
       C_WAITKILL, C_NR };
static const char * const cname[C_NR] = {
	"acquires", "grants", "order refusals", "busy tries", "timeouts",
	"reorders", "conversions", "releases", "renewals", "token checks",
	"kills", "child holders", "lease expiries", "revoked answers",
	"waits ended by a kill",
};

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(hist[step % HIST], sizeof(hist[0]), fmt, ap);
	va_end(ap);
}

static void mismatch(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mismatch(const char *fmt, ...)
{
	char msg[300];
	unsigned long i;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mismatches++;
	if (mismatches > 1)
		return;
	diag("MISMATCH at step %lu (seed %llu; replay: ORDLOCK_MODEL_SEED=%llu): %s",
	     step, seed, seed, msg);
	diag("the last steps:");
	for (i = step >= HIST - 1 ? step - (HIST - 1) : 0; i <= step; i++)
		diag("  %5lu %s", i, hist[i % HIST]);
}

#define CHECK(cond, ...) do { if (!(cond)) mismatch(__VA_ARGS__); } while (0)

static int kidx(uint32_t rank, uint64_t id)
{
	return (int)((rank - 1) * NID + (id - 1));
}

static struct ordlock_key kof(int k, int mode)
{
	struct ordlock_key key = { .rank = k / NID + 1, .id = k % NID + 1, .mode = mode };

	return key;
}

static const char *mname(int m)
{
	return m == EX ? "x" : m == SH ? "s" : "-";
}

static int enforcing(int d)
{
	return d != 1;
}

/* Whether key @k may be taken while @h is held in domain @d */
static int may_follow(int d, int h, int k)
{
	if (d == 2 && h / NID >= k / NID)
		return 0;
	return k > h;
}

static int conflicts(int a, int b)
{
	return a && b && (a == EX || b == EX);
}

/*
 * Who holds key @k of domain @d in a mode conflicting with @mode, other
 * than owner @self: bit 0 an owner of this thread, bit 1 the child
 */
static int blockers(int d, int self, int k, int mode)
{
	int o, who = 0;

	for (o = 0; o < NDOM * NOWN; o++)
		if (o != self && own[o].dom == d && conflicts(own[o].h[k].mode, mode))
			who |= 1;
	if (child[d].pid && conflicts(child[d].h[k].mode, mode))
		who |= 2;
	return who;
}

static int nheld(const struct mowner *o)
{
	int k, n = 0;

	for (k = 0; k < NKEY; k++)
		n += !!o->h[k].mode;
	return n;
}

static void remember(int d, int k, uint64_t token)
{
	past[d][k][npast[d][k]++ % 8] = token;
}

/* A new grant's token: above every earlier one of the domain */
static void check_token(int d, uint64_t token, const char *what)
{
	CHECK(token > maxtok[d], "%s: token %" PRIu64 " not above the domain's last %" PRIu64,
	      what, token, maxtok[d]);
	if (token > maxtok[d])
		maxtok[d] = token;
}

static void check_info(int o)
{
	struct ordlock_owner_info info = { .size = sizeof(info) };
	int ret = ioctl(own[o].fd, ORDLOCK_IOC_OWNER_INFO, &info);

	CHECK(!ret, "OWNER_INFO of owner %d: %s", o, strerror(errno));
	if (ret)
		return;
	CHECK((int)info.nheld == nheld(&own[o]), "owner %d: nheld %u, model %d", o,
	      info.nheld, nheld(&own[o]));
	CHECK(info.last_token == own[o].last_token,
	      "owner %d: last_token %llu, model %" PRIu64, o,
	      (unsigned long long)info.last_token, own[o].last_token);
}

static int token_check(int fd, int d, int k, uint64_t token)
{
	struct ordlock_token_check tc = { .size = sizeof(tc), .key = kof(k, 0), .token = token };

	strcpy(tc.domain, dname[d]);
	return ioctl(fd, ORDLOCK_IOC_TOKEN_CHECK, &tc) ? errno : 0;
}

static int live(int d, int k, uint64_t token)
{
	int o;

	for (o = 0; o < NDOM * NOWN; o++)
		if (own[o].dom == d && own[o].h[k].mode && own[o].h[k].token == token)
			return 1;
	return child[d].pid && child[d].h[k].mode && child[d].h[k].token == token;
}

/* A revoked owner's answer: EKEYEXPIRED, reason revoked */
static void check_revoked(int o, int ret, int err, const struct ordlock_failure *f,
			  const char *what)
{
	counts[C_REVOKED]++;
	CHECK(ret && err == EKEYEXPIRED, "%s of revoked owner %d: %s, want EKEYEXPIRED",
	      what, o, ret ? strerror(err) : "success");
	if (f)
		CHECK(f->reason == ORDLOCK_REASON_REVOKED, "%s of revoked owner %d: reason %u",
		      what, o, f->reason);
}

/* --- acquire ------------------------------------------------------------ */

static void op_acquire(int o, int kind)
{
	struct mowner *w = &own[o];
	int d = w->dom, enforce = enforcing(d), strictfail;
	struct ordlock_key keys[MAXREQ];
	struct ordlock_acquire a = { .size = sizeof(a) };
	int want[NKEY] = { 0 }, first_idx[NKEY];
	unsigned int n = 1 + pick(MAXREQ), i;
	int k, ret, err, dup = 0, lo = -1, hi_held = -1, who = 0, first_busy = -1;
	int reorder = 0, lease = 0, brk_busy = 0;
	char desc[120];
	size_t at = 0;

	for (i = 0; i < n; i++) {
		k = pick(NKEY);
		keys[i] = kof(k, pick(2) ? EX : SH);
		if (want[k])
			dup = 1;
		else
			first_idx[k] = i;
		if (keys[i].mode == EX || !want[k])
			want[k] = keys[i].mode;
		at += snprintf(desc + at, sizeof(desc) - at, " %u:%llu%s", keys[i].rank,
			       (unsigned long long)keys[i].id, mname(keys[i].mode));
	}
	/* kind: 0 try, 1 timed wait, 2 REORDER (enforce), 3 with a lease */
	if (kind == 2 && enforce)
		reorder = 1;
	if (kind == 3)
		lease = 1;
	/* In detect the flag changes nothing */
	a.flags = (kind == 0 ? ORDLOCK_ACQUIRE_TRY : 0) | (kind == 2 ? ORDLOCK_ACQUIRE_REORDER : 0);
	a.nkeys = n;
	a.keys = (uintptr_t)keys;
	a.lease_ms = lease ? LONG_LEASE : 0;
	a.timeout_ns = (uint64_t)WAIT_MS * 1000000;

	for (k = 0; k < NKEY; k++) {
		if (w->h[k].mode)
			hi_held = k;
		if (want[k] && lo < 0)
			lo = k;
	}
	/* The model's blockers, in key order */
	for (k = 0; k < NKEY; k++) {
		int b;

		if (!want[k])
			continue;
		b = blockers(d, o, k, want[k]);
		who |= b;
		if (b && first_busy < 0)
			first_busy = k;
		if (b && hi_held >= 0 && !may_follow(d, hi_held, k))
			brk_busy = 1;
	}
	/* A wait for a key an owner of this thread holds: only tries */
	if (kind != 0 && (who & 1) && !w->revoked) {
		int held_asked = 0, order = 0;

		for (k = 0; k < NKEY; k++)
			held_asked |= want[k] && w->h[k].mode;
		order = enforce && !reorder && hi_held >= 0 && !may_follow(d, hi_held, lo);
		if (!held_asked && !order) {
			a.flags |= ORDLOCK_ACQUIRE_TRY;
			kind = 0;
		}
	}
	note("owner %d (%s) acquire%s%s%s%s:%s", o, dname[d],
	     a.flags & ORDLOCK_ACQUIRE_TRY ? " try" : " wait",
	     reorder ? " reorder" : "", lease ? " lease" : "", dup ? " dup" : "", desc);
	counts[C_ACQ]++;

	ret = ioctl(w->fd, ORDLOCK_IOC_ACQUIRE, &a);
	err = ret ? errno : 0;

	if (w->revoked) {
		check_revoked(o, ret, err, &a.failure, "acquire");
		return;
	}
	/* A key asked that is held already: EDEADLK, reason order (any policy) */
	for (k = 0; k < NKEY; k++)
		if (want[k] && w->h[k].mode) {
			counts[C_ORDER]++;
			CHECK(ret && err == EDEADLK && a.failure.reason == ORDLOCK_REASON_ORDER,
			      "a held key asked again: %s reason %u, want EDEADLK order",
			      ret ? strerror(err) : "granted", a.failure.reason);
			return;
		}
	/* The order rule */
	if (enforce && !reorder && hi_held >= 0 && !may_follow(d, hi_held, lo)) {
		/* Only the strict rule broken: reason strict */
		strictfail = lo > hi_held;
		counts[C_ORDER]++;
		CHECK(ret && err == EDEADLK &&
		      a.failure.reason == (strictfail ? ORDLOCK_REASON_STRICT : ORDLOCK_REASON_ORDER),
		      "order rule: %s reason %u, want EDEADLK %s",
		      ret ? strerror(err) : "granted", a.failure.reason,
		      strictfail ? "strict" : "order");
		if (ret && err == EDEADLK) {
			int fk = kidx(a.failure.key.rank, a.failure.key.id);
			int hk = kidx(a.failure.held.rank, a.failure.held.id);

			CHECK(fk >= 0 && fk < NKEY && want[fk] && hk >= 0 && hk < NKEY &&
			      w->h[hk].mode && !may_follow(d, hk, fk) &&
			      a.failure.held.mode == w->h[hk].mode,
			      "order rule: failure names key %u:%llu and held %u:%llu",
			      a.failure.key.rank, (unsigned long long)a.failure.key.id,
			      a.failure.held.rank, (unsigned long long)a.failure.held.id);
		}
		return;
	}
	/* REORDER with TRY: the order allowed, the whole request a try */
	if (reorder && !(a.flags & ORDLOCK_ACQUIRE_TRY) && hi_held >= 0 &&
	    !may_follow(d, hi_held, lo)) {
		counts[C_REORDER]++;
		if (!who) {
			/* In place: held keys keep their tokens */
			CHECK(!ret && a.result_flags == 0,
			      "reorder of free keys: %s flags %u, want granted in place",
			      ret ? strerror(err) : "granted", a.result_flags);
		} else if (brk_busy) {
			/*
			 * The child holds a key that breaks the order: the held
			 * keys above the lowest requested one are let go, the
			 * union waited for: it times out (the child holds on)
			 */
			CHECK(ret && err == ETIMEDOUT &&
			      a.result_flags == ORDLOCK_RESULT_RELEASED,
			      "reorder, child in the way: %s flags %u, want ETIMEDOUT released",
			      ret ? strerror(err) : "granted", a.result_flags);
			if (ret && err == ETIMEDOUT) {
				int lowgo = -1;

				/* Let go: what the lowest requested key may not follow */
				for (k = 0; k < NKEY; k++)
					if (w->h[k].mode && !may_follow(d, k, lo) && lowgo < 0)
						lowgo = k;
				CHECK(lowgo >= 0 &&
				      kidx(a.failure.held.rank, a.failure.held.id) == lowgo,
				      "reorder: failure.held %u:%llu, want the lowest let go",
				      a.failure.held.rank, (unsigned long long)a.failure.held.id);
				for (k = 0; k < NKEY; k++)
					if (!may_follow(d, k, lo))
						w->h[k].mode = 0;
				counts[C_TIMEOUT]++;
			}
			check_info(o);
			return;
		} else {
			/* Only keys above the held ones wait: as any request */
			CHECK(ret && err == ETIMEDOUT && a.result_flags == 0,
			      "reorder, child in the way above: %s flags %u",
			      ret ? strerror(err) : "granted", a.result_flags);
			counts[C_TIMEOUT]++;
			return;
		}
	} else if (who) {
		int fk = first_busy;

		if (a.flags & ORDLOCK_ACQUIRE_TRY) {
			counts[C_BUSY]++;
			CHECK(ret && err == EAGAIN && a.failure.reason == ORDLOCK_REASON_BUSY,
			      "try of a taken key: %s reason %u, want EAGAIN busy",
			      ret ? strerror(err) : "granted", a.failure.reason);
		} else {
			counts[C_TIMEOUT]++;
			CHECK(ret && err == ETIMEDOUT && a.failure.reason == ORDLOCK_REASON_TIMEOUT,
			      "wait for the child's key: %s reason %u, want ETIMEDOUT",
			      ret ? strerror(err) : "granted", a.failure.reason);
		}
		if (ret) {
			int got = kidx(a.failure.key.rank, a.failure.key.id);
			int bm = 0, ok_pid;

			CHECK(got == fk && a.failure.key.mode == want[fk],
			      "failure.key %u:%llu mode %u, want the first taken key %u:%llu mode %d",
			      a.failure.key.rank, (unsigned long long)a.failure.key.id,
			      a.failure.key.mode, kof(fk, 0).rank,
			      (unsigned long long)kof(fk, 0).id, want[fk]);
			if (!dup)
				CHECK(a.failure.index == (uint32_t)first_idx[fk],
				      "failure.index %u, want %d", a.failure.index, first_idx[fk]);
			ok_pid = (a.failure.pid == (uint32_t)me && (blockers(d, o, fk, want[fk]) & 1)) ||
				 (child[d].pid && a.failure.pid == (uint32_t)child[d].pid &&
				  (blockers(d, o, fk, want[fk]) & 2));
			CHECK(ok_pid, "failure.pid %u is not a holder in the way", a.failure.pid);
			if (a.failure.pid == (uint32_t)me) {
				int x;

				for (x = 0; x < NDOM * NOWN; x++)
					if (x != o && own[x].dom == d &&
					    conflicts(own[x].h[fk].mode, want[fk]))
						bm |= 1 << own[x].h[fk].mode;
			} else if (child[d].pid) {
				bm = 1 << child[d].h[fk].mode;
			}
			CHECK(bm & (1 << a.failure.holder_mode),
			      "failure.holder_mode %u is not the holder's", a.failure.holder_mode);
		}
		check_info(o);
		return;
	}
	/* Granted */
	counts[C_GRANT]++;
	CHECK(!ret, "acquire of free keys: %s (reason %u key %u:%llu), want granted",
	      strerror(err), a.failure.reason, a.failure.key.rank,
	      (unsigned long long)a.failure.key.id);
	if (ret)
		return;
	check_token(d, a.token, "acquire");
	for (k = 0; k < NKEY; k++)
		if (want[k]) {
			w->h[k].mode = want[k];
			w->h[k].token = a.token;
			remember(d, k, a.token);
		}
	w->last_token = a.token;
	check_info(o);
	/* The grant is live, under one token for all its keys */
	for (k = 0; k < NKEY; k++)
		if (want[k])
			CHECK(!token_check(own[(o + 1) % (NDOM * NOWN)].fd, d, k, a.token),
			      "TOKEN_CHECK of the grant's key %d: not live", k);
}

/* --- convert ------------------------------------------------------------ */

static void op_convert(int o)
{
	struct mowner *w = &own[o];
	int d = w->dom, k = pick(NKEY), mode = pick(2) ? EX : SH, ret, err, b;
	struct ordlock_convert c = { .size = sizeof(c) };
	int held[NKEY], nh = 0, try;

	for (b = 0; b < NKEY; b++)
		if (w->h[b].mode)
			held[nh++] = b;
	if (nh && pick(4))
		k = held[pick(nh)];
	b = blockers(d, o, k, mode);
	try = pick(2) || (b & 1);
	c.flags = try ? ORDLOCK_ACQUIRE_TRY : 0;
	c.key = kof(k, mode);
	c.timeout_ns = (uint64_t)WAIT_MS * 1000000;
	note("owner %d convert%s %u:%llu to %s (held %s)", o, try ? " try" : "",
	     c.key.rank, (unsigned long long)c.key.id, mname(mode), mname(w->h[k].mode));
	counts[C_CONVERT]++;
	ret = ioctl(w->fd, ORDLOCK_IOC_CONVERT, &c);
	err = ret ? errno : 0;
	if (w->revoked) {
		check_revoked(o, ret, err, &c.failure, "convert");
		return;
	}
	if (!w->h[k].mode) {
		CHECK(ret && err == ENOENT && c.failure.reason == ORDLOCK_REASON_NOT_HELD,
		      "convert of a key not held: %s, want ENOENT not-held",
		      ret ? strerror(err) : "success");
		return;
	}
	if (w->h[k].mode == mode || mode == SH) {
		/* The same mode, or a downgrade: never waits, keeps the token */
		CHECK(!ret && c.token == w->h[k].token,
		      "convert to %s of a key held %s: %s token %llu, want %" PRIu64,
		      mname(mode), mname(w->h[k].mode), ret ? strerror(err) : "ok",
		      (unsigned long long)c.token, w->h[k].token);
		w->h[k].mode = mode;
		check_info(o);
		return;
	}
	if (b) {
		if (try)
			CHECK(ret && err == EAGAIN && c.failure.reason == ORDLOCK_REASON_BUSY,
			      "try upgrade of a shared key others hold: %s, want EAGAIN",
			      ret ? strerror(err) : "success");
		else
			CHECK(ret && err == ETIMEDOUT,
			      "upgrade, the child holds it: %s, want ETIMEDOUT",
			      ret ? strerror(err) : "success");
		/* Still held shared, same token */
		CHECK(!token_check(w->fd, d, k, w->h[k].token),
		      "a failed upgrade lost the shared hold");
		check_info(o);
		return;
	}
	CHECK(!ret, "upgrade of a key nobody else holds: %s", strerror(err));
	if (ret)
		return;
	check_token(d, c.token, "upgrade");
	CHECK(!token_check(w->fd, d, k, c.token), "the upgrade's token is not live");
	CHECK(token_check(w->fd, d, k, w->h[k].token) == ESTALE,
	      "the shared hold's token is still live after the upgrade");
	w->h[k].mode = EX;
	w->h[k].token = c.token;
	w->last_token = c.token;
	remember(d, k, c.token);
	check_info(o);
}

/* --- release ------------------------------------------------------------ */

static void op_release(int o)
{
	struct mowner *w = &own[o];
	struct ordlock_key keys[MAXREQ];
	struct ordlock_release r = { .size = sizeof(r) };
	int held[NKEY], nh = 0, k, all = !pick(4), ret, err, missing = 0, used[NKEY] = { 0 };
	unsigned int n = 0, i, want = 1 + pick(3);

	for (k = 0; k < NKEY; k++)
		if (w->h[k].mode)
			held[nh++] = k;
	if (all) {
		r.flags = ORDLOCK_RELEASE_ALL;
	} else {
		for (i = 0; i < want; i++) {
			k = nh && pick(5) ? held[pick(nh)] : (int)pick(NKEY);
			if (used[k])
				continue;
			used[k] = 1;
			missing |= !w->h[k].mode;
			keys[n++] = kof(k, pick(3) ? 0 : (w->h[k].mode ? w->h[k].mode : SH));
		}
		r.nkeys = n;
		r.keys = (uintptr_t)keys;
	}
	note("owner %d release%s of %u keys (%d held)%s", o, all ? " all" : "", n, nh,
	     missing ? ", one not held" : "");
	counts[C_RELEASE]++;
	ret = ioctl(w->fd, ORDLOCK_IOC_RELEASE, &r);
	err = ret ? errno : 0;
	if (w->revoked && !all) {
		check_revoked(o, ret, err, &r.failure, "release");
		return;
	}
	if (w->revoked) {
		/* The acknowledgement */
		CHECK(!ret, "RELEASE_ALL of a revoked owner: %s", strerror(err));
		w->revoked = 0;
		memset(w->rev, 0, sizeof(w->rev));
		check_info(o);
		return;
	}
	if (all) {
		CHECK(!ret && (int)r.released == nh, "RELEASE_ALL: %s released %u, want %d",
		      ret ? strerror(err) : "ok", r.released, nh);
		memset(w->h, 0, sizeof(w->h));
		check_info(o);
		return;
	}
	if (missing) {
		CHECK(ret && err == ENOENT && r.failure.reason == ORDLOCK_REASON_NOT_HELD,
		      "release naming a key not held: %s, want ENOENT", ret ? strerror(err) : "ok");
		check_info(o);
		return;
	}
	CHECK(!ret && r.released == n, "release of %u held keys: %s released %u", n,
	      ret ? strerror(err) : "ok", r.released);
	for (i = 0; i < n; i++)
		w->h[kidx(keys[i].rank, keys[i].id)].mode = 0;
	check_info(o);
}

/* --- renew, token checks --------------------------------------------------- */

static void op_renew(int o)
{
	struct mowner *w = &own[o];
	struct ordlock_renew r = { .size = sizeof(r) };
	int ret, err;

	note("owner %d renew (%d held)", o, nheld(w));
	counts[C_RENEW]++;
	ret = ioctl(w->fd, ORDLOCK_IOC_RENEW, &r);
	err = ret ? errno : 0;
	if (w->revoked) {
		check_revoked(o, ret, err, &r.failure, "renew");
		return;
	}
	if (!nheld(w)) {
		CHECK(ret && err == ENOENT, "renew with nothing held: %s, want ENOENT",
		      ret ? strerror(err) : "ok");
		return;
	}
	CHECK(!ret, "renew: %s", strerror(err));
}

static void op_check(int o)
{
	int d = own[o].dom, k = pick(NKEY), want, ret;
	uint64_t t;

	if (npast[d][k] && pick(4)) {
		unsigned int m = npast[d][k] < 8 ? npast[d][k] : 8;

		t = past[d][k][pick(m)];
	} else {
		t = maxtok[d] + pick(3);
	}
	want = live(d, k, t) ? 0 : ESTALE;
	note("owner %d token check %u:%llu token %" PRIu64 " (model %s)", o, kof(k, 0).rank,
	     (unsigned long long)kof(k, 0).id, t, want ? "stale" : "live");
	counts[C_CHECK]++;
	ret = token_check(own[o].fd, d, k, t);
	CHECK(ret == want, "TOKEN_CHECK %u:%llu %" PRIu64 ": %s, model %s", kof(k, 0).rank,
	      (unsigned long long)kof(k, 0).id, t, ret ? strerror(ret) : "live",
	      want ? "stale" : "live");
}

/* --- kills ---------------------------------------------------------------- */

static int open_owner(int d)
{
	int fd = open(ORDLOCK_DEVICE, O_RDWR | O_CLOEXEC);
	struct ordlock_set_domain sd = { .size = sizeof(sd) };

	if (fd < 0)
		bail_out("open: %s", strerror(errno));
	strcpy(sd.name, dname[d]);
	if (ioctl(fd, ORDLOCK_IOC_SET_DOMAIN, &sd))
		bail_out("SET_DOMAIN %s: %s", dname[d], strerror(errno));
	return fd;
}

static void op_kill(int o)
{
	note("owner %d closed (%d held%s), a new one in its place", o, nheld(&own[o]),
	     own[o].revoked ? ", revoked" : "");
	counts[C_KILL]++;
	close(own[o].fd);
	memset(&own[o], 0, sizeof(own[o]));
	own[o].dom = o / NOWN;
	own[o].fd = open_owner(own[o].dom);
	check_info(o);
}

static int child_main(void *arg)
{
	struct cshared *c = arg;
	struct ordlock_acquire a = { .size = sizeof(a) };
	int fd = open(ORDLOCK_DEVICE, O_RDWR);
	struct ordlock_set_domain sd = { .size = sizeof(sd) };
	int o;

	/* The parent's owners must end when the parent closes them */
	for (o = 0; o < NDOM * NOWN; o++)
		close(own[o].fd);
	if (fd < 0)
		return 99;
	strcpy(sd.name, c->domain);
	if (ioctl(fd, ORDLOCK_IOC_SET_DOMAIN, &sd))
		return 98;
	a.flags = ORDLOCK_ACQUIRE_TRY;
	a.nkeys = c->n;
	a.keys = (uintptr_t)c->keys;
	c->ret = ioctl(fd, ORDLOCK_IOC_ACQUIRE, &a) ? errno : 0;
	c->token = a.token;
	pbarrier_wait(c->done);
	for (;;)
		pause();
	return 0;
}

static struct cshared *cs;

static void op_child(int d)
{
	int want[NKEY] = { 0 }, k, who = 0;
	unsigned int i;

	if (child[d].pid) {
		note("child of %s killed (SIGKILL)", dname[d]);
		counts[C_KILL]++;
		kill(child[d].pid, SIGKILL);
		waitpid(child[d].pid, NULL, 0);
		memset(&child[d], 0, sizeof(child[d]));
		return;
	}
	memset(cs, 0, sizeof(*cs));
	cs->done = pbarrier_new(2);
	strcpy(cs->domain, dname[d]);
	cs->n = 1 + pick(MAXREQ);
	for (i = 0; i < cs->n; i++) {
		k = pick(NKEY);
		cs->keys[i] = kof(k, pick(3) ? EX : SH);
		if (cs->keys[i].mode == EX || !want[k])
			want[k] = cs->keys[i].mode;
	}
	for (k = 0; k < NKEY; k++)
		if (want[k])
			who |= blockers(d, -1, k, want[k]);
	note("child of %s tries %u keys (model: %s)", dname[d], cs->n, who ? "busy" : "granted");
	counts[C_CHILD]++;
	child[d].pid = child_start(child_main, cs);
	if (pbarrier_wait(cs->done))
		bail_out("the child does not answer");
	pbarrier_free(cs->done);
	if (who) {
		CHECK(cs->ret == EAGAIN, "the child's try: %s, want EAGAIN",
		      cs->ret ? strerror(cs->ret) : "granted");
		return;
	}
	CHECK(!cs->ret, "the child's try of free keys: %s", strerror(cs->ret));
	if (cs->ret)
		return;
	check_token(d, cs->token, "the child's grant");
	for (k = 0; k < NKEY; k++)
		if (want[k]) {
			child[d].h[k].mode = want[k];
			child[d].h[k].token = cs->token;
			remember(d, k, cs->token);
		}
}

/*
 * A wait that a kill ends: owner @o waits (10 s at most) for keys the
 * child holds while the child is killed: granted once the child is gone
 */
static void op_wait_kill(int o)
{
	struct mowner *w = &own[o];
	int d = w->dom, want[NKEY] = { 0 }, k, hi_held = -1, lo = -1, ret;
	struct ordlock_acquire a = { .size = sizeof(a) };
	struct ordlock_key keys[NKEY];
	unsigned int n = 0;

	if (!child[d].pid || w->revoked)
		return;
	for (k = 0; k < NKEY; k++) {
		if (w->h[k].mode)
			hi_held = k;
		if (child[d].h[k].mode && !w->h[k].mode && pick(2)) {
			want[k] = pick(2) ? EX : SH;
			if (blockers(d, o, k, want[k]) & 1)
				want[k] = 0;
		}
		if (want[k]) {
			keys[n++] = kof(k, want[k]);
			if (lo < 0)
				lo = k;
		}
	}
	if (!n || (enforcing(d) && hi_held >= 0 && !may_follow(d, hi_held, lo)))
		return;
	note("owner %d waits for %u of the child's keys while the child is killed", o, n);
	counts[C_WAITKILL]++;
	a.nkeys = n;
	a.keys = (uintptr_t)keys;
	a.timeout_ns = 10000000000ULL;
	kill(child[d].pid, SIGKILL);
	ret = ioctl(w->fd, ORDLOCK_IOC_ACQUIRE, &a);
	CHECK(!ret, "a wait for a killed holder's keys: %s, want granted",
	      ret ? strerror(errno) : "ok");
	waitpid(child[d].pid, NULL, 0);
	memset(&child[d], 0, sizeof(child[d]));
	if (ret)
		return;
	check_token(d, a.token, "the grant after the kill");
	for (k = 0; k < NKEY; k++)
		if (want[k]) {
			w->h[k].mode = want[k];
			w->h[k].token = a.token;
			remember(d, k, a.token);
		}
	w->last_token = a.token;
	check_info(o);
}

/* --- lease expiry ------------------------------------------------------------ */

static void op_expire(int o)
{
	struct mowner *w = &own[o];
	struct ordlock_renew r = { .size = sizeof(r), .lease_ms = SHORT_LEASE };
	struct ordlock_revoked_key rk[NKEY];
	struct ordlock_last_failure lf = { .size = sizeof(lf) };
	struct timespec ts = { 0, 3 * SHORT_LEASE * 1000000L };
	int ret, err, k, n = 0, unasked = pick(2), spin, stale;
	unsigned int i;

	if (w->revoked || !nheld(w))
		return;
	note("owner %d: lease renewed to %d ms, then left to expire (%d held)%s", o,
	     SHORT_LEASE, nheld(w), unasked ? ", the others look first" : "");
	counts[C_EXPIRE]++;
	ret = ioctl(w->fd, ORDLOCK_IOC_RENEW, &r);
	CHECK(!ret && r.left_ms <= SHORT_LEASE,
	      "renew to %d ms: %s left %llu", SHORT_LEASE, ret ? strerror(errno) : "ok",
	      (unsigned long long)r.left_ms);
	nanosleep(&ts, NULL);
	/* The revocation frees the keys, whoever looks first */
	for (k = 0; k < NKEY; k++)
		if (w->h[k].mode)
			n++;
	/*
	 * Without a call of the holder: the kernel revokes by itself. Every
	 * token of the owner goes stale (waited for: the timer's work item
	 * may run late on a busy host, 10 s at most)
	 */
	for (spin = 0, stale = 0; unasked && spin < 2000 && stale < n; spin++) {
		stale = 0;
		for (k = 0; k < NKEY; k++)
			if (w->h[k].mode)
				stale += token_check(own[(o + 1) % (NDOM * NOWN)].fd, w->dom, k,
						     w->h[k].token) == ESTALE;
		if (stale < n)
			usleep(5000);
	}
	if (unasked)
		CHECK(stale == n, "the kernel did not revoke by itself: %d of %d tokens stale "
		      "after 10 s", stale, n);
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	ret = ioctl(w->fd, ORDLOCK_IOC_RENEW, &r);
	err = ret ? errno : 0;
	CHECK(ret && err == EKEYEXPIRED && r.failure.reason == ORDLOCK_REASON_REVOKED,
	      "renew after the deadline: %s reason %u, want EKEYEXPIRED revoked",
	      ret ? strerror(err) : "ok", r.failure.reason);
	lf.revoked = (uintptr_t)rk;
	lf.nrevoked = NKEY;
	ret = ioctl(w->fd, ORDLOCK_IOC_LAST_FAILURE, &lf);
	CHECK(!ret && lf.failure.reason == ORDLOCK_REASON_REVOKED && (int)lf.nrevoked == n &&
	      (int)lf.failure.cycle_len == n,
	      "LAST_FAILURE after revocation: %s reason %u, %u keys (cycle_len %u), want %d",
	      ret ? strerror(errno) : "ok", lf.failure.reason, lf.nrevoked,
	      lf.failure.cycle_len, n);
	for (i = 0; !ret && i < lf.nrevoked && i < NKEY; i++) {
		k = kidx(rk[i].key.rank, rk[i].key.id);
		CHECK(k >= 0 && k < NKEY && w->h[k].mode == rk[i].key.mode &&
		      w->h[k].token == rk[i].token,
		      "revoked key %u:%llu %s token %llu: not the model's hold",
		      rk[i].key.rank, (unsigned long long)rk[i].key.id,
		      mname(rk[i].key.mode), (unsigned long long)rk[i].token);
		if (i)
			CHECK(kidx(rk[i - 1].key.rank, rk[i - 1].key.id) < k,
			      "revoked keys not in key order");
	}
	memcpy(w->rev, w->h, sizeof(w->h));
	memset(w->h, 0, sizeof(w->h));
	w->revoked = 1;
	check_info(o);
}

/* --- the run ---------------------------------------------------------------- */

static void one_step(void)
{
	int o = pick(NDOM * NOWN);
	unsigned int r = pick(1000);

	if (r < 330)
		op_acquire(o, r < 200 ? 0 : r < 260 ? 1 : r < 300 ? 2 : 3);
	else if (r < 450)
		op_convert(o);
	else if (r < 650)
		op_release(o);
	else if (r < 720)
		op_renew(o);
	else if (r < 900)
		op_check(o);
	else if (r < 930)
		op_kill(o);
	else if (r < 965)
		op_child(o / NOWN);
	else if (r < 985)
		op_wait_kill(o);
	else
		op_expire(o);
}

/* Every live hold of the model is live in the kernel, every owner's count */
static void audit(void)
{
	int o, k;

	for (o = 0; o < NDOM * NOWN; o++) {
		check_info(o);
		for (k = 0; k < NKEY; k++)
			if (own[o].h[k].mode)
				CHECK(!token_check(own[o].fd, own[o].dom, k, own[o].h[k].token),
				      "audit: owner %d's key %d token %" PRIu64 " not live", o, k,
				      own[o].h[k].token);
	}
}

int main(void)
{
	const char *env = getenv("ORDLOCK_MODEL_SEED"), *envn = getenv("ORDLOCK_MODEL_STEPS");
	struct ordlock *admin = olt_open(NULL);
	struct timespec t0, t1;
	unsigned int i;
	int d, o;

	seed = env ? strtoull(env, NULL, 0) : (unsigned long long)time(NULL) ^ getpid();
	nsteps = envn ? strtoul(envn, NULL, 0) : 12000;
	rng = seed * 0x9E3779B97F4A7C15ULL + 1;
	diag("seed %llu, %lu steps (replay: ORDLOCK_MODEL_SEED=%llu)", seed, nsteps, seed);
	me = getpid();
	cs = shm_alloc(sizeof(*cs));
	for (d = 0; d < NDOM; d++) {
		snprintf(dname[d], sizeof(dname[d]), "%s",
			 olt_domain(d == 0 ? "menf" : d == 1 ? "mdet" : "mstr"));
		if (ordlock_set_policy(admin, dname[d],
				       enforcing(d) ? ORDLOCK_POLICY_ENFORCE : ORDLOCK_POLICY_DETECT, 0) ||
		    (d == 2 && ordlock_set_strict(admin, dname[d], 1)))
			bail_out("cannot configure %s", dname[d]);
	}
	for (o = 0; o < NDOM * NOWN; o++) {
		own[o].dom = o / NOWN;
		own[o].fd = open_owner(own[o].dom);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (step = 0; step < nsteps && mismatches == 0; step++) {
		one_step();
		if (step % 64 == 63)
			audit();
	}
	if (!mismatches)
		audit();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ok(!mismatches, "seed %llu: %lu steps, every answer and token as the model says "
	   "(%d mismatches)", seed, step, mismatches);
	for (i = 0; i < C_NR; i++)
		diag("  %-16s %lu", cname[i], counts[i]);
	diag("  %.1f s", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	ok(counts[C_GRANT] > 100 && counts[C_BUSY] > 10 && counts[C_ORDER] > 10 &&
	   counts[C_EXPIRE] > 3 && counts[C_CHILD] > 3 && counts[C_CONVERT] > 50 &&
	   counts[C_CHECK] > 50 && counts[C_REVOKED] > 0 && counts[C_TIMEOUT] > 0 &&
	   counts[C_WAITKILL] > 0,
	   "the run covered every kind of step");
	for (d = 0; d < NDOM; d++)
		if (child[d].pid) {
			kill(child[d].pid, SIGKILL);
			waitpid(child[d].pid, NULL, 0);
		}
	for (o = 0; o < NDOM * NOWN; o++)
		close(own[o].fd);
	ordlock_close(admin);
	return tap_done();
}
