// SPDX-License-Identifier: GPL-2.0
/*
 * t_stress: many processes hammer a few keys in three domains (enforce,
 * detect, timeout) for ORDLOCK_STRESS_SECONDS (default 20; "make stress"
 * runs it long) and the invariants are checked on every grant, not only at
 * the end:
 *
 *  - never two exclusive holders, and no shared holder beside an exclusive
 *    one: every holder counts itself "inside" the key in shared memory and
 *    checks the counts it sees; counters incremented non-atomically under
 *    exclusive keys stay exact;
 *  - no order violation granted in an enforce domain (each worker knows
 *    what it holds), and no ORDER refusal of a request that obeys the order;
 *  - no lost wake-up: every wait ends (grant, timeout, EDEADLK) within its
 *    timeout plus a generous slack;
 *  - every call fails only with an errno the stress can cause.
 *
 * Checked workers use /dev/ordlock or the netlink family.  Around them,
 * "kamikaze" processes take random keys (one thread waiting while another
 * closes the descriptor, or holding and closing) and are killed with
 * SIGKILL at random moments; a reader reads every debugfs file and the
 * netlink dumps in a loop; a tuner changes the module parameters.  At the
 * end debugfs shows no owner, lock, edge or waiter.
 *
 * For the long runs: ORDLOCK_STRESS_KAMIKAZES (default 1, at most
 * MAXKAMI) kamikazes live at once, and ORDLOCK_STRESS_KILLS=N runs until N
 * of them were killed, the seconds being then only the limit (a run that
 * misses its target fails).  Each kill is counted by what the victim was
 * doing (holding keys, waiting, neither); the totals and, every
 * ORDLOCK_STRESS_PROGRESS seconds (default 60), the progress are TAP
 * diagnostics.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

#define NDOM		3	/* enforce, detect, timeout */
#define NRANK		3
#define NID		4
#define NKEY		(NRANK * NID)		/* keys per domain */
#define NSLOT		(NDOM * NKEY)
#define NDEV		6	/* checked /dev/ordlock workers */
#define NNL		2	/* checked netlink workers */
#define NWORK		(NDEV + NNL)
#define MAXREQ		6	/* keys in one request */
#define SLACK_MS	15000	/* a wait may overrun its timeout by this */
#define MAX_DEFAULT_MS	2000	/* the largest default_timeout_ms we set */
#define NERR		16
#define MAXKAMI		8

/* what a kamikaze is doing, in shared memory: counted when it is killed */
enum { K_OTHER, K_WAITING, K_HOLDING };

static const char *domains[NDOM];
static const unsigned int policies[NDOM] = {
	ORDLOCK_POLICY_ENFORCE, ORDLOCK_POLICY_DETECT, ORDLOCK_POLICY_TIMEOUT,
};

struct shared {
	int stop;
	int ex_inside[NSLOT];
	int sh_inside[NSLOT];
	unsigned long counter[NSLOT];
	unsigned long tally[NWORK][NSLOT];
	/* statistics */
	unsigned long grants, timeouts, busy, order, deadlocks, upgrades;
	unsigned long converts, releases, closes, limits, nlqueued;
	unsigned long kills, reads, tunes, max_overrun_ms;
	unsigned long calls, kills_holding, kills_waiting;
	int kami_state[MAXKAMI];
	/* violations */
	unsigned int nerr;
	char err[NERR][200];
};

static struct shared *sh;

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	unsigned int i = __atomic_fetch_add(&sh->nerr, 1, __ATOMIC_SEQ_CST);
	va_list ap;
	char buf[200];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (i < NERR)
		snprintf(sh->err[i], sizeof(sh->err[i]), "%s", buf);
	diag("pid %d: %s", getpid(), buf);
}

#define STAT(f) __atomic_fetch_add(&sh->f, 1, __ATOMIC_RELAXED)

static unsigned int rnd(unsigned int *seed, unsigned int n)
{
	return n ? (unsigned int)rand_r(seed) % n : 0;
}

static int key_slot(int dom, const struct ordlock_key *k)
{
	return dom * NKEY + (int)(k->rank - 1) * NID + (int)k->id;
}

static int key_cmp(const struct ordlock_key *a, const struct ordlock_key *b)
{
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

/* --- what a checked worker holds -------------------------------------------- */

struct held {
	int dom;
	unsigned int n;
	struct ordlock_key k[NKEY];	/* mode: the mode held */
};

static int held_find(const struct held *h, const struct ordlock_key *k)
{
	unsigned int i;

	for (i = 0; i < h->n; i++)
		if (!key_cmp(&h->k[i], k))
			return (int)i;
	return -1;
}

static void enter(int slot, unsigned int mode, const char *what)
{
	int ex, shc;

	if (mode == EX) {
		ex = __atomic_fetch_add(&sh->ex_inside[slot], 1, __ATOMIC_SEQ_CST);
		shc = __atomic_load_n(&sh->sh_inside[slot], __ATOMIC_SEQ_CST);
		if (ex || shc)
			violation("%s: exclusive grant of slot %d beside %d exclusive, %d shared holders",
				  what, slot, ex, shc);
	} else {
		__atomic_fetch_add(&sh->sh_inside[slot], 1, __ATOMIC_SEQ_CST);
		ex = __atomic_load_n(&sh->ex_inside[slot], __ATOMIC_SEQ_CST);
		if (ex)
			violation("%s: shared grant of slot %d beside %d exclusive holders",
				  what, slot, ex);
	}
}

static void leave(int slot, unsigned int mode)
{
	if (mode == EX)
		__atomic_fetch_sub(&sh->ex_inside[slot], 1, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_sub(&sh->sh_inside[slot], 1, __ATOMIC_SEQ_CST);
}

/* --- owners: a descriptor or a netlink socket ------------------------------- */

struct owner {
	int nl;
	struct ordlock *ol;
	struct nlt *s;
	uint64_t cookie;
};

static int owner_open(struct owner *o, int nl, int dom)
{
	int err = 0;

	memset(o, 0, sizeof(*o));
	o->nl = nl;
	if (nl) {
		o->s = nlt_open(&err);
		return o->s ? 0 : err;
	}
	o->ol = ordlock_open(domains[dom]);
	return o->ol ? 0 : -errno;
}

static void owner_close(struct owner *o)
{
	if (o->nl)
		nlt_close(o->s);
	else
		ordlock_close(o->ol);
}

/* Netlink: the final outcome of a request, waiting for its RESULT. */
static int nl_finish(struct owner *o, int ret, struct olc_nl_outcome *out,
		     unsigned int bound_ms, const char *what)
{
	if (ret < 0)
		return ret;
	if (out->status == ORDLOCK_STATUS_QUEUED) {
		STAT(nlqueued);
		ret = nlt_wait_result(o->s, bound_ms, out);
		if (ret == -ETIMEDOUT) {
			violation("%s: no RESULT within %u ms (lost wake-up?)", what, bound_ms);
			return -EPIPE;
		}
		if (ret < 0)
			return ret;
	}
	switch (out->status) {
	case ORDLOCK_STATUS_GRANTED:
		return 0;
	case ORDLOCK_STATUS_REFUSED:
		return -(int)out->error;
	case ORDLOCK_STATUS_TIMEOUT:
		return -ETIMEDOUT;
	case ORDLOCK_STATUS_DEADLOCK:
		return -EDEADLK;
	default:
		violation("%s: unexpected status %u", what, out->status);
		return -EPROTO;
	}
}

/* acquire: 0 or -errno; *reason: the failure reason */
static int owner_acquire(struct owner *o, int dom, unsigned int nheld,
			 const struct ordlock_key *k, unsigned int n, unsigned int timeout_ms, unsigned int flags,
			 unsigned int bound_ms, unsigned int *reason)
{
	struct olc_nl_outcome out;
	int ret;

	*reason = 0;
	STAT(calls);
	if (!o->nl) {
		ret = ordlock_acquire(o->ol, k, n, timeout_ms, flags, NULL);
		if (ret)
			*reason = ordlock_last_failure(o->ol)->reason;
		return ret;
	}
	memset(&out, 0, sizeof(out));
	/* the domain moves the owner: only while it holds nothing */
	ret = nlt_acquire(o->s, nheld ? NULL : domains[dom], k, n,
			  (uint64_t)timeout_ms * 1000000, flags, ++o->cookie, &out);
	ret = nl_finish(o, ret, &out, bound_ms, "netlink acquire");
	if (ret && out.have_failure)
		*reason = out.failure.reason;
	return ret;
}

static int owner_convert(struct owner *o, struct ordlock_key k,
			 unsigned int timeout_ms, unsigned int flags,
			 unsigned int bound_ms, unsigned int *reason)
{
	struct olc_nl_outcome out;
	int ret;

	*reason = 0;
	STAT(calls);
	if (!o->nl) {
		ret = ordlock_convert(o->ol, k, timeout_ms, flags, NULL);
		if (ret)
			*reason = ordlock_last_failure(o->ol)->reason;
		return ret;
	}
	memset(&out, 0, sizeof(out));
	ret = nlt_convert(o->s, k, (uint64_t)timeout_ms * 1000000, flags,
			  ++o->cookie, &out);
	ret = nl_finish(o, ret, &out, bound_ms, "netlink convert");
	if (ret && out.have_failure)
		*reason = out.failure.reason;
	return ret;
}

static int owner_release(struct owner *o, const struct ordlock_key *k, unsigned int n)
{
	struct olc_nl_outcome out;
	int ret;

	STAT(calls);
	if (!o->nl)
		return n ? ordlock_release(o->ol, k, n) : ordlock_release_all(o->ol);
	memset(&out, 0, sizeof(out));
	ret = nlt_release(o->s, k, n, &out);
	if (ret < 0)
		return ret;
	return out.status == ORDLOCK_STATUS_GRANTED ? 0 : -(int)out.error;
}

/* --- a checked worker --------------------------------------------------------- */

struct worker_arg {
	int idx;
	int nl;
};

static unsigned int pick_timeout(unsigned int *seed, unsigned int *bound)
{
	unsigned int t;

	switch (rnd(seed, 6)) {
	case 0:
		t = 0;	/* the domain default */
		*bound = MAX_DEFAULT_MS;
		break;
	case 1:
		t = 1 + rnd(seed, 5);
		*bound = t;
		break;
	case 2:
		t = 500 + rnd(seed, 1000);
		*bound = t;
		break;
	default:
		t = 10 + rnd(seed, 200);
		*bound = t;
	}
	*bound += SLACK_MS;
	return t;
}

static void critical_section(struct held *h, int widx, unsigned int *seed)
{
	unsigned int i;
	int slot;

	for (i = 0; i < h->n; i++) {
		if (h->k[i].mode != EX)
			continue;
		slot = key_slot(h->dom, &h->k[i]);
		{
			unsigned long v = __atomic_load_n(&sh->counter[slot], __ATOMIC_RELAXED);

			if (!rnd(seed, 8))
				sched_yield();
			__atomic_store_n(&sh->counter[slot], v + 1, __ATOMIC_RELAXED);
		}
		sh->tally[widx][slot]++;
	}
	if (!rnd(seed, 4))
		usleep(rnd(seed, 2000));
}

static void do_acquire(struct owner *o, struct held *h, int widx, unsigned int *seed)
{
	struct ordlock_key req[MAXREQ], maxheld = { 0 };
	unsigned int n = 1 + rnd(seed, MAXREQ), i, j, timeout, bound, flags = 0;
	unsigned int reason, want[NKEY] = { 0 };
	int ret, violates = 0, dup = 0, enforce = policies[h->dom] == ORDLOCK_POLICY_ENFORCE;
	uint64_t t0, el;

	for (i = 0; i < h->n; i++)
		if (!i || key_cmp(&h->k[i], &maxheld) > 0)
			maxheld = h->k[i];
	for (i = 0; i < n; i++) {
		/* in an enforce domain, mostly keys above the held ones */
		do {
			req[i] = ordlock_key(1 + rnd(seed, NRANK), rnd(seed, NID),
					     rnd(seed, 3) ? SH : EX);
		} while (enforce && h->n && rnd(seed, 6) &&
			 key_cmp(&req[i], &maxheld) <= 0 && rnd(seed, 20));
		if (h->n && key_cmp(&req[i], &maxheld) <= 0)
			violates = 1;
		if (held_find(h, &req[i]) >= 0)
			dup = 1;
	}
	if (!enforce && dup)
		return;		/* re-acquiring a held key: not what we test here */
	if (rnd(seed, 2)) {	/* sorted, or as generated */
		for (i = 1; i < n; i++)
			for (j = i; j > 0 && key_cmp(&req[j - 1], &req[j]) > 0; j--) {
				struct ordlock_key t = req[j];

				req[j] = req[j - 1];
				req[j - 1] = t;
			}
	}
	if (!rnd(seed, 5))
		flags = ORDLOCK_ACQUIRE_TRY;
	timeout = pick_timeout(seed, &bound);
	t0 = now_ms();
	ret = owner_acquire(o, h->dom, h->n, req, n, timeout, flags, bound, &reason);
	el = now_ms() - t0;
	if (el > bound)
		violation("acquire of %u keys (timeout %u ms) took %llu ms", n,
			  timeout, (unsigned long long)el);
	if (el > bound - SLACK_MS &&
	    el - (bound - SLACK_MS) > __atomic_load_n(&sh->max_overrun_ms, __ATOMIC_RELAXED))
		__atomic_store_n(&sh->max_overrun_ms, el - (bound - SLACK_MS), __ATOMIC_RELAXED);
	if (ret == 0) {
		STAT(grants);
		if (enforce && violates)
			violation("order violation granted in %s: a key at or below a held one",
				  domains[h->dom]);
		/* merge: the stronger mode wins */
		for (i = 0; i < n; i++) {
			int s = key_slot(h->dom, &req[i]) - h->dom * NKEY;

			if (req[i].mode > want[s])
				want[s] = req[i].mode;
		}
		for (i = 0; i < NKEY; i++) {
			struct ordlock_key k;

			if (!want[i])
				continue;
			k = ordlock_key(1 + i / NID, i % NID, want[i]);
			if (held_find(h, &k) >= 0) {
				violation("a held key was granted again");
				continue;
			}
			enter(key_slot(h->dom, &k), k.mode, o->nl ? "netlink" : "ioctl");
			h->k[h->n++] = k;
		}
		critical_section(h, widx, seed);
		return;
	}
	switch (-ret) {
	case ETIMEDOUT:
		STAT(timeouts);
		if (flags)
			violation("a try-acquire timed out");
		break;
	case EAGAIN:
		STAT(busy);
		if (!flags)
			violation("EAGAIN without TRY");
		break;
	case EDEADLK:
		if (reason == ORDLOCK_REASON_ORDER) {
			STAT(order);
			if (!enforce || !violates)
				violation("ORDER refusal of a request that obeys the order (%s)",
					  domains[h->dom]);
		} else {
			STAT(deadlocks);
			/* enforce: upgrades make cycles possible, the graph breaks them */
			if (policies[h->dom] == ORDLOCK_POLICY_TIMEOUT)
				violation("EDEADLK (reason %u) in %s", reason, domains[h->dom]);
		}
		break;
	case E2BIG:
	case ENOSPC:
	case EDQUOT:
		STAT(limits);
		break;
	default:
		violation("acquire failed: %s (reason %u)", strerror(-ret), reason);
	}
}

static void do_convert(struct owner *o, struct held *h, int widx, unsigned int *seed)
{
	unsigned int i = rnd(seed, h->n), timeout, bound, reason;
	struct ordlock_key k = h->k[i];
	int slot = key_slot(h->dom, &k), ret;
	uint64_t t0, el;

	(void)widx;
	k.mode = k.mode == EX ? SH : EX;
	timeout = pick_timeout(seed, &bound);
	if (k.mode == SH) {	/* downgrade: count as shared before */
		leave(slot, EX);
		enter(slot, SH, "downgrade");
	}
	t0 = now_ms();
	ret = owner_convert(o, k, timeout, rnd(seed, 4) ? 0 : ORDLOCK_ACQUIRE_TRY,
			    bound, &reason);
	el = now_ms() - t0;
	if (el > bound)
		violation("convert (timeout %u ms) took %llu ms", timeout,
			  (unsigned long long)el);
	if (k.mode == SH) {
		if (ret)
			violation("downgrade failed: %s", strerror(-ret));
		h->k[i].mode = SH;
		STAT(converts);
		return;
	}
	if (!ret) {
		leave(slot, SH);
		enter(slot, EX, "upgrade");
		h->k[i].mode = EX;
		STAT(converts);
		critical_section(h, widx, seed);
		return;
	}
	switch (-ret) {
	case ETIMEDOUT:
		STAT(timeouts);
		break;
	case EAGAIN:
		STAT(busy);
		break;
	case EDEADLK:
		STAT(upgrades);
		break;
	default:
		violation("upgrade failed: %s (reason %u)", strerror(-ret), reason);
	}
}

static void do_release(struct owner *o, struct held *h, unsigned int *seed)
{
	struct ordlock_key rel[NKEY];
	unsigned int n = 0, i, j;
	int ret, all = !rnd(seed, 4);

	for (i = 0, j = 0; i < h->n; i++) {
		if (all || rnd(seed, 2)) {
			rel[n] = h->k[i];
			if (rnd(seed, 2))
				rel[n].mode = 0;	/* "any" */
			n++;
			leave(key_slot(h->dom, &h->k[i]), h->k[i].mode);
		} else {
			h->k[j++] = h->k[i];
		}
	}
	if (!n)
		return;
	h->n = j;
	ret = owner_release(o, rel, all ? 0 : n);
	if (ret == -E2BIG) {
		/* max_keys_per_request limits releases too: one at a time */
		STAT(limits);
		for (i = 0, ret = 0; i < n && !ret; i++)
			ret = owner_release(o, &rel[i], 1);
	}
	if (ret)
		violation("release of %u keys failed: %s", n, strerror(-ret));
	STAT(releases);
}

static int worker_main(void *arg)
{
	struct worker_arg *wa = arg;
	unsigned int seed = (unsigned int)getpid() * 2654435761U, ops, i;
	struct owner o;
	struct held h;
	int ret;

	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		memset(&h, 0, sizeof(h));
		h.dom = (int)rnd(&seed, NDOM);
		ret = owner_open(&o, wa->nl, h.dom);
		if (ret) {
			violation("cannot open an owner: %s", strerror(-ret));
			return 1;
		}
		ops = 1 + rnd(&seed, 12);
		for (i = 0; i < ops && !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED); i++) {
			unsigned int r = rnd(&seed, 10);

			if (r < 5 || !h.n)
				do_acquire(&o, &h, wa->idx, &seed);
			else if (r < 7)
				do_convert(&o, &h, wa->idx, &seed);
			else
				do_release(&o, &h, &seed);
		}
		/* close holding keys (others may wait on them), or release first */
		if (rnd(&seed, 2) && h.n)
			do_release(&o, &h, &seed);
		for (i = 0; i < h.n; i++)
			leave(key_slot(h.dom, &h.k[i]), h.k[i].mode);
		owner_close(&o);
		STAT(closes);
	}
	return 0;
}

/* --- kamikazes: killed at random moments -------------------------------------- */

struct kami_thread {
	int *state;
	int fd;
	struct ordlock_key k[4];
	unsigned int n;
};

static void *kami_waiter(void *arg)
{
	struct kami_thread *t = arg;
	struct ordlock_acquire a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.nkeys = t->n;
	a.keys = (uintptr_t)t->k;
	a.timeout_ns = 3000000000ULL;
	__atomic_store_n(t->state, K_WAITING, __ATOMIC_SEQ_CST);
	STAT(calls);
	if (ioctl(t->fd, ORDLOCK_IOC_ACQUIRE, &a) == 0)
		__atomic_store_n(t->state, K_HOLDING, __ATOMIC_SEQ_CST);
	else
		__atomic_store_n(t->state, K_OTHER, __ATOMIC_SEQ_CST);
	return NULL;
}

/* @arg: (slot << 16) | a random number */
static int kamikaze_main(void *arg)
{
	unsigned int seed = (unsigned int)getpid() * 40503U + (unsigned int)(uintptr_t)arg;
	int *state = &sh->kami_state[((uintptr_t)arg >> 16) % MAXKAMI];
	int dom = (int)rnd(&seed, NDOM);
	struct kami_thread t;
	struct olc_nl_outcome out;
	struct ordlock *ol;
	struct nlt *s;
	pthread_t th;
	unsigned int i;

	t.state = state;
	t.n = 1 + rnd(&seed, 4);
	for (i = 0; i < t.n; i++)
		t.k[i] = ordlock_key(1 + rnd(&seed, NRANK), rnd(&seed, NID),
				     rnd(&seed, 2) ? SH : EX);
	for (;;) {
		switch (rnd(&seed, 3)) {
		case 0:	/* a thread waits while another closes the descriptor */
			ol = ordlock_open(domains[dom]);
			if (!ol)
				return 1;
			t.fd = dup(ordlock_fd(ol));
			if (pthread_create(&th, NULL, kami_waiter, &t) == 0) {
				/* close both descriptors while the ioctl waits */
				usleep(rnd(&seed, 20000));
				close(t.fd);
				ordlock_close(ol);
				pthread_join(th, NULL);
			} else {
				close(t.fd);
				ordlock_close(ol);
			}
			break;
		case 1:	/* hold, then close with keys held */
			ol = ordlock_open(domains[dom]);
			if (!ol)
				return 1;
			__atomic_store_n(state, K_WAITING, __ATOMIC_SEQ_CST);
			STAT(calls);
			if (ordlock_acquire(ol, t.k, t.n, 2000, 0, NULL) == 0)
				__atomic_store_n(state, K_HOLDING, __ATOMIC_SEQ_CST);
			else
				__atomic_store_n(state, K_OTHER, __ATOMIC_SEQ_CST);
			usleep(rnd(&seed, 30000));
			ordlock_close(ol);
			__atomic_store_n(state, K_OTHER, __ATOMIC_SEQ_CST);
			break;
		default: /* netlink: queue, then vanish */
			s = nlt_open(NULL);
			if (!s)
				return 1;
			STAT(calls);
			memset(&out, 0, sizeof(out));
			if (nlt_acquire(s, domains[dom], t.k, t.n, 2000000000ULL, 0, 1, &out) >= 0)
				__atomic_store_n(state, out.status == ORDLOCK_STATUS_GRANTED ? K_HOLDING :
						 out.status == ORDLOCK_STATUS_QUEUED ? K_WAITING : K_OTHER,
						 __ATOMIC_SEQ_CST);
			usleep(rnd(&seed, 30000));
			nlt_close(s);
			__atomic_store_n(state, K_OTHER, __ATOMIC_SEQ_CST);
		}
	}
	return 0;
}

/* --- the reader and the tuner --------------------------------------------------- */

static const char *const dbg_files[] = {
	"locks", "graph", "owners", "deadlocks", "stats",
};

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t r;
	size_t got = 0;

	if (fd < 0)
		return -errno;
	while (got + 1 < len && (r = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)r;
	close(fd);
	buf[got] = 0;
	return (int)got;
}

static int reader_main(void *arg)
{
	static char buf[1 << 16];
	char path[128];
	struct nlt *s = nlt_open(NULL);
	unsigned int i;
	int r;

	(void)arg;
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		for (i = 0; i < ARRAY_SIZE(dbg_files); i++) {
			snprintf(path, sizeof(path), "/sys/kernel/debug/ordlock/%s", dbg_files[i]);
			r = read_file(path, buf, sizeof(buf));
			if (r < 0)
				violation("read %s: %s", path, strerror(-r));
		}
		if (s) {
			r = nlt_dump(s, ORDLOCK_CMD_GET_LOCKS, NULL, NULL);
			if (r >= 0)
				r = nlt_dump(s, ORDLOCK_CMD_GET_OWNERS, NULL, NULL);
			if (r >= 0)
				r = nlt_dump(s, ORDLOCK_CMD_GET_GRAPH, NULL, NULL);
			if (r < 0)
				violation("netlink dump: %s", strerror(-r));
		}
		STAT(reads);
		usleep(20000);
	}
	if (s)
		nlt_close(s);
	return 0;
}

static int tuner_main(void *arg)
{
	static const long def_to[] = { 100, 500, MAX_DEFAULT_MS };
	static const long per_req[] = { 4, 8, 1024 };
	static const long per_owner[] = { 6, 16, 4096 };
	unsigned int seed = (unsigned int)getpid();

	(void)arg;
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		olt_param_set("default_timeout_ms", def_to[rnd(&seed, 3)]);
		olt_param_set("max_keys_per_request", per_req[rnd(&seed, 3)]);
		olt_param_set("max_keys_per_owner", per_owner[rnd(&seed, 3)]);
		STAT(tunes);
		usleep(100000 + rnd(&seed, 200000));
	}
	return 0;
}

/* --- the end: nothing left ------------------------------------------------------- */

/* data lines (not starting with '#') of a debugfs file, or -errno */
static int data_lines(const char *name, char *first, size_t len)
{
	static char buf[1 << 16];
	char path[128], *line, *save = NULL;
	int n = 0, r;

	snprintf(path, sizeof(path), "/sys/kernel/debug/ordlock/%s", name);
	r = read_file(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		if (!n++)
			snprintf(first, len, "%s", line);
	}
	return n;
}

/* stats: "global owners 0 resources 0" and "waiters 0" in every domain line */
static int stats_clean(char *bad, size_t len)
{
	static char buf[1 << 20];	/* every domain of the run: may pass 64 KiB */
	char *line, *save = NULL, *p;
	int r = read_file("/sys/kernel/debug/ordlock/stats", buf, sizeof(buf));

	if (r < 0)
		return r;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "global ", 7) &&
		    strcmp(line, "global owners 0 resources 0")) {
			snprintf(bad, len, "%s", line);
			return 0;
		}
		if (!strncmp(line, "domain ", 7) &&
		    (!strstr(line, " owners 0 ") || !strstr(line, " resources 0 ") ||
		     !(p = strstr(line, " waiters ")) || strncmp(p, " waiters 0 ", 11))) {
			snprintf(bad, len, "%.150s", line);
			return 0;
		}
	}
	return 1;
}

static unsigned long env_ul(const char *name, unsigned long dflt)
{
	const char *env = getenv(name);

	return env && *env ? strtoul(env, NULL, 10) : dflt;
}

/* SIGKILL the kamikaze of @slot, counted by what it was doing */
static void kami_kill(pid_t pid, int slot)
{
	int state = __atomic_load_n(&sh->kami_state[slot], __ATOMIC_SEQ_CST);

	child_kill(pid, SIGKILL);
	STAT(kills);
	if (state == K_HOLDING)
		STAT(kills_holding);
	else if (state == K_WAITING)
		STAT(kills_waiting);
}

int main(void)
{
	unsigned int seconds = (unsigned int)env_ul("ORDLOCK_STRESS_SECONDS", 20), seed, i, s;
	unsigned long target = env_ul("ORDLOCK_STRESS_KILLS", 0);
	unsigned long progress = env_ul("ORDLOCK_STRESS_PROGRESS", 60);
	unsigned int nkami = (unsigned int)env_ul("ORDLOCK_STRESS_KAMIKAZES", 1);
	struct worker_arg wa[NWORK];
	pid_t workers[NWORK], reader, tuner, kami[MAXKAMI] = { 0 };
	char first[256], dn[NDOM][ORDLOCK_DOMAIN_NAME_MAX];
	uint64_t t0, end, next, el;
	unsigned int slot = 0;
	struct ordlock *admin;
	int ret, bad, n;

	if (!seconds)
		seconds = 20;
	if (!nkami || nkami > MAXKAMI)
		nkami = nkami ? MAXKAMI : 1;
	watchdog_start(seconds + 240);
	seed = (unsigned int)getpid();
	if (target)
		diag("stress until %lu kills, for at most %u s, %u kamikazes at once "
		     "(ORDLOCK_STRESS_KILLS, _SECONDS, _KAMIKAZES)", target, seconds, nkami);
	else
		diag("stress for %u s, %u kamikazes at once (ORDLOCK_STRESS_SECONDS, _KAMIKAZES)",
		     seconds, nkami);
	sh = shm_alloc(sizeof(*sh));

	snprintf(dn[0], sizeof(dn[0]), "%s", olt_domain("st-enf"));
	snprintf(dn[1], sizeof(dn[1]), "%s", olt_domain("st-det"));
	snprintf(dn[2], sizeof(dn[2]), "%s", olt_domain("st-tmo"));
	admin = olt_open(NULL);
	for (i = 0; i < NDOM; i++) {
		domains[i] = dn[i];
		ret = ordlock_set_policy(admin, dn[i], policies[i], i == 1 ? rnd(&seed, 50) : 0);
		is_int(ret, 0, "domain %s: policy %s", dn[i], ordlock_policy_name(policies[i]));
	}
	ordlock_close(admin);
	/* remember the parameters (restored at exit), start from known values */
	is_int(olt_param_set("default_timeout_ms", 500), 0, "default_timeout_ms 500");
	is_int(olt_param_set("max_keys_per_request", 1024), 0, "max_keys_per_request");
	is_int(olt_param_set("max_keys_per_owner", 4096), 0, "max_keys_per_owner");

	for (i = 0; i < NWORK; i++) {
		wa[i].idx = (int)i;
		wa[i].nl = i >= NDEV;
		workers[i] = child_start(worker_main, &wa[i]);
	}
	reader = child_start(reader_main, NULL);
	tuner = child_start(tuner_main, NULL);

	t0 = now_ms();
	end = t0 + seconds * 1000ULL;
	next = t0 + progress * 1000;
	/* nkami kamikazes at once, each living about as long as one alone */
	for (;;) {
		el = now_ms();
		if (el >= end || __atomic_load_n(&sh->nerr, __ATOMIC_RELAXED) ||
		    (target && sh->kills >= target))
			break;
		if (progress && el >= next) {
			diag("progress: %llu s, %lu kills (%lu holding, %lu waiting), %lu grants, %lu calls",
			     (unsigned long long)(el - t0) / 1000, sh->kills, sh->kills_holding,
			     sh->kills_waiting, sh->grants, sh->calls);
			next += progress * 1000;
		}
		if (kami[slot])
			kami_kill(kami[slot], (int)slot);
		__atomic_store_n(&sh->kami_state[slot], K_OTHER, __ATOMIC_SEQ_CST);
		kami[slot] = child_start(kamikaze_main,
					 (void *)(uintptr_t)((slot << 16) | rnd(&seed, 1000)));
		usleep(rnd(&seed, 300000) / nkami);
		slot = (slot + 1) % nkami;
	}
	for (i = 0; i < nkami; i++)
		if (kami[i] && (!target || sh->kills < target))
			kami_kill(kami[i], (int)i);
		else if (kami[i])
			child_kill(kami[i], SIGKILL);	/* beyond the target: not counted */
	el = now_ms() - t0;
	__atomic_store_n(&sh->stop, 1, __ATOMIC_SEQ_CST);

	bad = 0;
	for (i = 0; i < NWORK; i++)
		if (child_wait(workers[i], 120))
			bad++;
	is_int(bad, 0, "every checked worker ended cleanly");
	is_int(child_wait(reader, 60), 0, "the debugfs and dump reader ended cleanly");
	is_int(child_wait(tuner, 60), 0, "the parameter tuner ended cleanly");
	olt_param_restore();

	diag("%lu grants, %lu timeouts, %lu busy, %lu order refusals, %lu deadlocks, "
	     "%lu upgrade deadlocks, %lu conversions, %lu releases, %lu owners closed, "
	     "%lu limits, %lu netlink queued, %lu kills, %lu reader rounds, %lu tunings; "
	     "largest overrun of a timeout %lu ms",
	     sh->grants, sh->timeouts, sh->busy, sh->order, sh->deadlocks, sh->upgrades,
	     sh->converts, sh->releases, sh->closes, sh->limits, sh->nlqueued, sh->kills,
	     sh->reads, sh->tunes, sh->max_overrun_ms);
	ok(sh->grants > 100, "the stress did something (%lu grants)", sh->grants);
	diag("totals: %lu SIGKILLs (%lu of holders, %lu of waiters), %lu grants, %lu calls "
	     "in %llu s", sh->kills, sh->kills_holding, sh->kills_waiting, sh->grants,
	     sh->calls, (unsigned long long)el / 1000);
	ok(sh->kills > 5, "kamikazes were killed (%lu)", sh->kills);
	if (target)
		ok(sh->kills >= target, "the kill target was reached: %lu of %lu",
		   sh->kills, target);
	for (i = 0; i < NERR && i < sh->nerr; i++)
		diag("violation: %s", sh->err[i]);
	is_int(sh->nerr, 0, "no invariant violated during the run");

	bad = 0;
	for (s = 0; s < NSLOT; s++) {
		unsigned long sum = 0;

		for (i = 0; i < NWORK; i++)
			sum += sh->tally[i][s];
		if (sum != sh->counter[s]) {
			if (!bad++)
				diag("slot %u: counter %lu, increments %lu", s, sh->counter[s], sum);
		}
		if (sh->ex_inside[s] || sh->sh_inside[s])
			bad++;
	}
	is_int(bad, 0, "counters protected by exclusive keys are exact");

	/* owners of killed processes and closed sockets go away (netlink: soon) */
	for (i = 0; i < 100; i++) {
		char sb[200] = "";

		if (!data_lines("owners", first, sizeof(first)) &&
		    !data_lines("locks", first, sizeof(first)) &&
		    !data_lines("graph", first, sizeof(first)) &&
		    stats_clean(sb, sizeof(sb)) == 1)
			break;
		usleep(100000);
	}
	n = data_lines("owners", first, sizeof(first));
	if (!is_int(n, 0, "debugfs owners: no owner left"))
		diag("first: %s", first);
	n = data_lines("locks", first, sizeof(first));
	if (!is_int(n, 0, "debugfs locks: no holder or waiter left"))
		diag("first: %s", first);
	n = data_lines("graph", first, sizeof(first));
	if (!is_int(n, 0, "debugfs graph: no edge left"))
		diag("first: %s", first);
	first[0] = 0;
	if (!ok(stats_clean(first, sizeof(first)) == 1,
		"debugfs stats: 0 owners, resources and waiters"))
		diag("%s", first);
	return tap_done();
}
