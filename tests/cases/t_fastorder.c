// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastorder: the learned order and fast acquires (issue 28,
 * docs/fastpath.md "The learned order"). In a detect domain with the fast
 * path, the first fast acquire of B while holding A teaches the kernel the
 * edge A -> B (ORDLOCK_IOC_FAST_LEARN, the learned order shows it); the
 * second time the pair is known and no ioctl is made (a seccomp filter
 * refuses every ioctl; a pair not known then stays unlearned); in an
 * enforce domain a fast acquire against the order is refused as the
 * kernel's path refuses it; the mapping of the pairs is read-only. An
 * edge learned through FAST_LEARN that closes a cycle of ranks (2 -> 1
 * learned before, then a member takes 1 then 2 by the fast path) is
 * reported as a potential deadlock before the acquire returns, naming the
 * member's pid; a revoked owner's FAST_LEARN says EKEYEXPIRED and learns
 * nothing, even with both words naming it, until RELEASE_ALL acknowledges.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE

static char dom[ORDLOCK_DOMAIN_NAME_MAX], d2[ORDLOCK_DOMAIN_NAME_MAX], d3[ORDLOCK_DOMAIN_NAME_MAX];
static char d4[ORDLOCK_DOMAIN_NAME_MAX], d5[ORDLOCK_DOMAIN_NAME_MAX];
static int *res;

static int config(const char *name, uint32_t policy)
{
	struct ordlock_domain_config cfg = {
		.flags = ORDLOCK_DOMAIN_SET_FASTPATH | ORDLOCK_DOMAIN_SET_POLICY,
		.fastpath = 1, .fastpath_uid = geteuid(), .policy = policy,
	};

	return olt_domain_set(name, &cfg);
}

/* The fast path of @name off: its keys unpinned (no resource left in use) */
static int fast_off(const char *name)
{
	struct ordlock_domain_config cfg = { .flags = ORDLOCK_DOMAIN_SET_FASTPATH };

	return olt_domain_set(name, &cfg);
}

/* The policy of @name alone (its members stay) */
static int policy(const char *name, uint32_t pol)
{
	struct ordlock_domain_config cfg = { .flags = ORDLOCK_DOMAIN_SET_POLICY, .policy = pol };

	return olt_domain_set(name, &cfg);
}

/* Edges of the learned order of @name from rank @from to rank @to (-1: any) */
static int nedges(const char *name, long from, long to)
{
	struct ordlock_order_edge e[64];
	struct ordlock_order_get info;
	int i, n = 0, ne = olt_order_get(name, e, 64, &info);

	if (ne < 0)
		return ne;
	for (i = 0; i < ne; i++)
		if ((from < 0 || e[i].from_rank == from) && (to < 0 || e[i].to_rank == to))
			n++;
	return n;
}

/* In a child: A, B again (known), then A, C (not known) with no ioctl */
static int nosys_main(void *arg)
{
	struct ordlock_key a = ORDLOCK_EX(1, 1), b = ORDLOCK_EX(2, 1), c = ORDLOCK_EX(3, 1);
	struct ordlock *ol = olt_child_open(dom);

	(void)arg;
	/* pin the three keys (alone: no pair) */
	res[0] = ordlock_acquire(ol, &a, 1, 1000, 0, NULL) || ordlock_release(ol, &a, 1) ||
		 ordlock_acquire(ol, &b, 1, 1000, 0, NULL) || ordlock_release(ol, &b, 1) ||
		 ordlock_acquire(ol, &c, 1, 1000, 0, NULL) || ordlock_release(ol, &c, 1);
	if (olt_no_ioctl()) {
		res[15] = errno;
		return 2;
	}
	res[1] = ordlock_acquire(ol, &a, 1, 1000, 0, NULL);
	res[2] = ordlock_acquire(ol, &b, 1, 1000, 0, NULL);
	res[3] = ordlock_release_all(ol);
	res[4] = ordlock_acquire(ol, &a, 1, 1000, 0, NULL);
	res[5] = ordlock_acquire(ol, &c, 1, 1000, 0, NULL);
	res[6] = ordlock_release_all(ol);
	return 0;
}

/*
 * @d a fresh domain (named from @prefix) with @policy (@pname) and the fast
 * path, a point; an owner of it that took and released @a once, which
 * pinned it (two points)
 */
static struct ordlock *pinned_owner(char *d, const char *prefix, uint32_t policy,
				    const char *pname, const struct ordlock_key *a)
{
	struct ordlock *ol;

	snprintf(d, ORDLOCK_DOMAIN_NAME_MAX, "%s", olt_domain(prefix));
	is_int(config(d, policy), 0, "%s: %s, fast path on", d, pname);
	ol = olt_open(d);
	is_int(ordlock_acquire(ol, a, 1, 1000, 0, NULL), 0, "acquire A (pins it)");
	is_int(ordlock_release(ol, a, 1), 0, "release A");
	return ol;
}

static void test_learn(void)
{
	struct ordlock_key a = ORDLOCK_EX(1, 1), b = ORDLOCK_EX(2, 1), c = ORDLOCK_EX(3, 1);
	struct ordlock *ol;
	pid_t pid;
	int i, st;

	ol = pinned_owner(dom, "fo", ORDLOCK_POLICY_DETECT, "detect", &a);
	is_int(ordlock_acquire(ol, &b, 1, 1000, 0, NULL), 0, "acquire B (pins it)");
	is_int(ordlock_release(ol, &b, 1), 0, "release B");
	is_int(nedges(dom, -1, -1), 0, "no edge learned yet");
	is_int(ordlock_acquire(ol, &a, 1, 1000, 0, NULL), 0, "acquire A");
	is_int(ordlock_acquire(ol, &b, 1, 1000, 0, NULL), 0, "then B");
	is_int(olt_nheld(ol), 0, "both by the fast path (the kernel holds nothing)");
	is_int(nedges(dom, 1, 2), 1, "the learned order has the edge 1 -> 2");
	is_int(ordlock_release_all(ol), 0, "release both");
	ordlock_close(ol);

	for (i = 0; i < 16; i++)
		res[i] = -9999;
	pid = child_start(nosys_main, NULL);
	st = child_wait(pid, 120);
	is_int(res[0], 0, "child: keys pinned");
	if (st == 2 && res[15] == EINVAL) {
		for (i = 0; i < 6; i++)
			ok(1, "# SKIP no seccomp filter in this kernel");
		return;
	}
	is_int(st, 0, "the child ends");
	is_int(res[1], 0, "no ioctl: acquire A");
	is_int(res[2], 0, "no ioctl: then B (the pair is known)");
	is_int(res[3], 0, "no ioctl: release both");
	ok(res[4] == 0 && res[5] == 0 && res[6] == 0,
	   "no ioctl: A then C taken all the same (%d %d %d)", res[4], res[5], res[6]);
	is_int(nedges(dom, 1, 3), 0, "but 1 -> 3 was not learned: it needs the kernel");
	ol = olt_open(dom);
	is_int(ordlock_acquire(ol, &a, 1, 1000, 0, NULL), 0, "acquire A");
	is_int(ordlock_acquire(ol, &c, 1, 1000, 0, NULL), 0, "then C, with ioctls");
	is_int(nedges(dom, 1, 3), 1, "now 1 -> 3 is learned");
	is_int(ordlock_release_all(ol), 0, "release both");
	ordlock_close(ol);
}

static void test_enforce_and_map(void)
{
	struct ordlock_key a = ORDLOCK_EX(1, 1), b = ORDLOCK_EX(2, 1);
	struct ordlock_fast_pin pin;
	struct ordlock_set_domain sd;
	struct ordlock *ol;
	void *p;
	int fd, ret;

	ol = pinned_owner(d2, "fe", ORDLOCK_POLICY_ENFORCE, "enforce", &a);
	is_int(ordlock_acquire(ol, &b, 1, 1000, 0, NULL), 0, "acquire B");
	is_int(olt_nheld(ol), 0, "by the fast path");
	ret = ordlock_acquire(ol, &a, 1, 1000, 0, NULL);
	is_errno(ret, EDEADLK, "A after B: EDEADLK as on the kernel's path");
	is_int(ordlock_last_failure(ol)->reason, ORDLOCK_REASON_ORDER, "reason order");
	is_int(ordlock_release_all(ol), 0, "release B");
	ordlock_close(ol);

	fd = olt_raw_fd();
	memset(&sd, 0, sizeof(sd));
	sd.size = sizeof(sd);
	snprintf(sd.name, sizeof(sd.name), "%s", d2);
	memset(&pin, 0, sizeof(pin));
	pin.size = sizeof(pin);
	pin.rank = 1;
	pin.id = 1;
	ok(!ioctl(fd, ORDLOCK_IOC_SET_DOMAIN, &sd) && !ioctl(fd, ORDLOCK_IOC_FAST_PIN, &pin),
	   "a raw member pins A");
	p = mmap(NULL, ORDLOCK_FAST_EDGES_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 ORDLOCK_FAST_EDGES_OFFSET);
	ok(p == MAP_FAILED && errno == EACCES, "the pairs cannot be mapped writable (EACCES)");
	p = mmap(NULL, ORDLOCK_FAST_EDGES_SIZE, PROT_READ, MAP_SHARED, fd,
		 ORDLOCK_FAST_EDGES_OFFSET);
	ok(p != MAP_FAILED, "they map read-only");
	if (p != MAP_FAILED) {
		ok(mprotect(p, 4096, PROT_READ | PROT_WRITE) && errno == EACCES,
		   "and cannot be made writable (mprotect: EACCES)");
		is_int(((struct ordlock_fast_edges *)p)->learning, 0,
		       "an enforce domain does not learn");
		munmap(p, ORDLOCK_FAST_EDGES_SIZE);
	} else {
		ok(0, "mprotect not tried");
		ok(0, "learning not read");
	}
	close(fd);
}

/* A raw member of @d that pins (rank @r, id 1) for r in 1..@n; its fd */
static int raw_member(const char *d, unsigned int n, struct ordlock_fast_pin *pins)
{
	struct ordlock_set_domain sd;
	unsigned int r;
	int fd = olt_raw_fd();

	memset(&sd, 0, sizeof(sd));
	sd.size = sizeof(sd);
	snprintf(sd.name, sizeof(sd.name), "%s", d);
	if (ioctl(fd, ORDLOCK_IOC_SET_DOMAIN, &sd))
		return -1;
	for (r = 0; r < n; r++) {
		memset(&pins[r], 0, sizeof(pins[r]));
		pins[r].size = sizeof(pins[r]);
		pins[r].rank = r + 1;
		pins[r].id = 1;
		if (ioctl(fd, ORDLOCK_IOC_FAST_PIN, &pins[r]))
			return -1;
	}
	return fd;
}

static int learn(int fd, uint32_t size, uint32_t flags, uint32_t from, uint32_t to,
		 uint32_t rsv, uint32_t *known)
{
	struct ordlock_fast_learn l[2];
	int ret;

	memset(l, 0, sizeof(l));
	l[0].size = size;
	l[0].flags = flags;
	l[0].from = from;
	l[0].to = to;
	l[0].known = 7;
	l[0].__reserved = rsv;
	ret = ioctl(fd, ORDLOCK_IOC_FAST_LEARN, l);
	if (known)
		*known = l[0].known;
	return ret;
}

/* Take the word of @slot by a raw CAS as owner @index; 0 or -1 */
static int take(volatile uint64_t *w, uint32_t slot, uint32_t index)
{
	uint64_t old = w[slot];

	if (ORDLOCK_FAST_OWNER(old) || (old & ORDLOCK_FAST_WAITERS))
		return -1;
	return __atomic_compare_exchange_n(&w[slot], &old,
					   ORDLOCK_FAST_WORD(ORDLOCK_FAST_GEN(old) + 1, index),
					   0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED) ? 0 : -1;
}

static void give(volatile uint64_t *w, uint32_t slot)
{
	w[slot] = ORDLOCK_FAST_WORD(ORDLOCK_FAST_GEN(w[slot]), 0);
}

/* Map a raw member's words (read-write) and learned pairs (read-only) */
static void map_member(int fd, volatile uint64_t **w, const struct ordlock_fast_edges **e)
{
	void *p = mmap(NULL, ORDLOCK_FAST_WORDS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (p == MAP_FAILED)
		bail_out("mmap words: %s", strerror(errno));
	*w = p;
	p = mmap(NULL, ORDLOCK_FAST_EDGES_SIZE, PROT_READ, MAP_SHARED, fd,
		 ORDLOCK_FAST_EDGES_OFFSET);
	if (p == MAP_FAILED)
		bail_out("mmap edges: %s", strerror(errno));
	*e = p;
}

/* FAST_LEARN is validated like every ioctl, and marks the pair */
static void test_ioctl(void)
{
	struct ordlock_fast_pin pins[3];
	const struct ordlock_fast_edges *e;
	volatile uint64_t *w;
	uint32_t a, b, c, me, known;
	int fd, plain;

	snprintf(d3, sizeof(d3), "%s", olt_domain("fl"));
	is_int(config(d3, ORDLOCK_POLICY_DETECT), 0, "%s: detect, fast path on", d3);
	plain = olt_raw_fd();
	is_errno(learn(plain, sizeof(struct ordlock_fast_learn), 0, 0, 1, 0, NULL), EOPNOTSUPP,
		 "FAST_LEARN by a handle that never used the fast path: EOPNOTSUPP");
	close(plain);
	fd = raw_member(d3, 3, pins);
	ok(fd >= 0, "a raw member pins three keys");
	if (fd < 0)
		bail_out("raw member: %s", strerror(errno));
	a = pins[0].slot;
	b = pins[1].slot;
	c = pins[2].slot;
	me = pins[0].index;
	map_member(fd, &w, &e);
	is_int(e->learning, 1, "a detect domain learns");
	ok(!take(w, a, me) && !take(w, b, me), "the member takes A and B by CAS");
	is_errno(learn(fd, 8, 0, a, b, 0, NULL), EINVAL, "size too small: EINVAL");
	is_errno(learn(fd, 8192, 0, a, b, 0, NULL), E2BIG, "size over a page: E2BIG");
	is_errno(learn(fd, sizeof(struct ordlock_fast_learn), 1, a, b, 0, NULL), EINVAL,
		 "a flag: EINVAL");
	is_errno(learn(fd, sizeof(struct ordlock_fast_learn), 0, a, b, 1, NULL), EINVAL,
		 "a reserved field not 0: EINVAL");
	is_errno(learn(fd, sizeof(struct ordlock_fast_learn), 0, a, 1000, 0, NULL), EINVAL,
		 "a slot not pinned: EINVAL");
	is_errno(learn(fd, sizeof(struct ordlock_fast_learn), 0, a, a, 0, NULL), EINVAL,
		 "a slot paired with itself: EINVAL");
	is_errno(learn(fd, sizeof(struct ordlock_fast_learn), 0, a, c, 0, NULL), ENOENT,
		 "a key not held (C): ENOENT");
	ok(!ordlock_fast_edge_known(e, a, b) && !ordlock_fast_edge_known(e, a, c),
	   "the refused calls marked no pair");
	is_int(nedges(d3, -1, -1), 0, "and learned no edge");
	known = 9;
	is_int(learn(fd, sizeof(struct ordlock_fast_learn), 0, a, b, 0, &known), 0,
	       "A -> B, both held: learned");
	is_int(known, 1, "known 1");
	ok(ordlock_fast_edge_known(e, a, b) && !ordlock_fast_edge_known(e, b, a),
	   "the pair A -> B is marked (not B -> A)");
	is_int(nedges(d3, 1, 2), 1, "the learned order has 1 -> 2");
	give(w, b);
	give(w, a);
	is_int(policy(d3, ORDLOCK_POLICY_TIMEOUT), 0, "the policy set again (timeout)");
	ok(!ordlock_fast_edge_known(e, a, b), "every pair is forgotten");
	is_int(e->learning, 1, "a timeout domain learns");
	is_int(policy(d3, ORDLOCK_POLICY_ENFORCE), 0, "policy enforce");
	is_int(e->learning, 0, "an enforce domain does not learn");
	ok(!take(w, a, me) && !take(w, b, me), "the member takes A and B again");
	known = 9;
	is_int(learn(fd, sizeof(struct ordlock_fast_learn), 0, a, b, 0, &known), 0,
	       "FAST_LEARN in an enforce domain: 0");
	is_int(known, 0, "known 0, nothing learned");
	ok(!ordlock_fast_edge_known(e, a, b), "no pair marked");
	give(w, b);
	give(w, a);
	munmap((void *)e, ORDLOCK_FAST_EDGES_SIZE);
	munmap((void *)w, ORDLOCK_FAST_WORDS_SIZE);
	close(fd);
}

/* Potential deadlocks @name reported so far (GET_ORDER), -1 on error */
static long npotential(const char *name)
{
	struct ordlock_order_get info;

	return olt_order_get(name, NULL, 0, &info) < 0 ? -1 : (long)info.npotential;
}

/* The pid of the first observation of rank @from -> rank @to in @name, or -1 */
static long edge_pid(const char *name, uint32_t from, uint32_t to)
{
	struct ordlock_order_edge e[64];
	struct ordlock_order_get info;
	int i, ne = olt_order_get(name, e, 64, &info);
	long pid = -1;

	for (i = 0; i < ne; i++)
		if (e[i].from_rank == from && e[i].to_rank == to)
			pid = e[i].pid;
	return pid;
}

/* In a child: A then B, both by the fast path (B's pair learned by FAST_LEARN) */
static int fast_ab_main(void *arg)
{
	struct ordlock_key a = ORDLOCK_EX(1, 1), b = ORDLOCK_EX(2, 1);
	struct ordlock *ol = olt_child_open(d4);

	(void)arg;
	/* pinned alone first (no pair), then the pair in one go */
	if (ordlock_acquire(ol, &a, 1, 1000, 0, NULL) || ordlock_release(ol, &a, 1) ||
	    ordlock_acquire(ol, &b, 1, 1000, 0, NULL) || ordlock_release(ol, &b, 1))
		return 2;
	if (ordlock_acquire(ol, &a, 1, 1000, 0, NULL) || ordlock_acquire(ol, &b, 1, 1000, 0, NULL))
		return 3;
	/* right after the acquire returned: the report is there already */
	res[0] = (int)npotential(d4);
	res[1] = (int)edge_pid(d4, 1, 2);
	res[2] = (int)olt_nheld(ol);
	return ordlock_release_all(ol) ? 4 : 0;
}

/*
 * An edge learned through FAST_LEARN that closes a cycle of ranks is a
 * potential deadlock, reported as a kernel grant's would be, before the
 * acquire returns, naming the member that took it
 */
static void test_potential(void)
{
	struct ordlock_key a = ORDLOCK_EX(1, 1), b = ORDLOCK_EX(2, 1);
	struct ordlock *ol;
	pid_t pid;

	snprintf(d4, sizeof(d4), "%s", olt_domain("fp"));
	is_int(config(d4, ORDLOCK_POLICY_DETECT), 0, "%s: detect, fast path on", d4);
	ol = olt_open(d4);
	is_int(ordlock_acquire(ol, &b, 1, 1000, 0, NULL), 0, "potential: B (rank 2) first");
	is_int(ordlock_acquire(ol, &a, 1, 1000, 0, NULL), 0,
	       "then A (rank 1): the kernel grants it (detect)");
	is_int(ordlock_release_all(ol), 0, "release both");
	ordlock_close(ol);
	is_int(nedges(d4, 2, 1), 1, "potential: 2 -> 1 learned");
	is_int(npotential(d4), 0, "no potential deadlock yet");
	memset(res, 0, 16 * sizeof(int));
	pid = child_start(fast_ab_main, NULL);
	is_int(child_wait(pid, 60), 0, "a member takes A then B by the fast path");
	is_int(res[2], 0, "both by the fast path (the kernel holds none)");
	is_int(res[0], 1, "the potential deadlock 1 -> 2 -> 1 is reported before the acquire returns");
	is_int(res[1], (int)pid, "the edge 1 -> 2 names the member's pid");
}

/* Wait (bounded) until FAST_LEARN of @fd says EKEYEXPIRED; the last errno */
static int learn_until_revoked(int fd, uint32_t a, uint32_t b, uint32_t *known)
{
	int i, err = 0;

	for (i = 0; i < 3000; i++) {
		if (!learn(fd, sizeof(struct ordlock_fast_learn), 0, a, b, 0, known))
			return 0;
		err = errno;
		if (err == EKEYEXPIRED)
			break;
		usleep(10000);
	}
	return err;
}

/*
 * A revoked owner learns nothing: FAST_LEARN says EKEYEXPIRED even with
 * both words naming it (an acquire that raced the revocation), until
 * RELEASE_ALL acknowledges
 */
static void test_revoked(void)
{
	struct ordlock_fast_pin pins[3];
	struct ordlock_key c = ORDLOCK_EX(3, 1);
	const struct ordlock_fast_edges *e;
	struct ordlock_acquire acq;
	struct ordlock_release rel;
	volatile uint64_t *w;
	uint32_t a, b, me, known = 7;
	int fd, err;

	snprintf(d5, sizeof(d5), "%s", olt_domain("fr"));
	is_int(config(d5, ORDLOCK_POLICY_DETECT), 0, "%s: detect, fast path on", d5);
	fd = raw_member(d5, 2, pins);
	if (fd < 0)
		bail_out("raw member: %s", strerror(errno));
	a = pins[0].slot;
	b = pins[1].slot;
	me = pins[0].index;
	map_member(fd, &w, &e);
	memset(&acq, 0, sizeof(acq));
	acq.size = sizeof(acq);
	acq.nkeys = 1;
	acq.keys = (uintptr_t)&c;
	acq.lease_ms = 50;
	is_int(ioctl(fd, ORDLOCK_IOC_ACQUIRE, &acq), 0, "revoked: C granted with a 50 ms lease");
	err = learn_until_revoked(fd, a, b, &known);
	is_int(err, EKEYEXPIRED, "revoked: once the lease expired, FAST_LEARN says EKEYEXPIRED");
	/* as an acquire that raced the revocation: the words name the member */
	ok(!take(w, a, me) && !take(w, b, me), "revoked: the member takes A and B by CAS");
	known = 7;
	is_errno(learn(fd, sizeof(struct ordlock_fast_learn), 0, a, b, 0, &known), EKEYEXPIRED,
		 "revoked: FAST_LEARN of A -> B, both words its: EKEYEXPIRED");
	is_int(known, 7, "revoked: known not written");
	ok(!ordlock_fast_edge_known(e, a, b), "revoked: no pair marked");
	is_int(nedges(d5, 1, 2), 0, "revoked: no edge learned");
	memset(&rel, 0, sizeof(rel));
	rel.size = sizeof(rel);
	rel.flags = ORDLOCK_RELEASE_ALL;
	is_int(ioctl(fd, ORDLOCK_IOC_RELEASE, &rel), 0, "revoked: RELEASE_ALL acknowledges");
	ok(!ORDLOCK_FAST_OWNER(w[a]) && !ORDLOCK_FAST_OWNER(w[b]),
	   "revoked: the acknowledgment let go of A and B");
	ok(!take(w, a, me) && !take(w, b, me), "acknowledged: the member takes A and B again");
	known = 7;
	is_int(learn(fd, sizeof(struct ordlock_fast_learn), 0, a, b, 0, &known), 0,
	       "acknowledged: FAST_LEARN of A -> B learns");
	is_int(known, 1, "acknowledged: known 1");
	is_int(nedges(d5, 1, 2), 1, "acknowledged: 1 -> 2 learned");
	give(w, b);
	give(w, a);
	munmap((void *)e, ORDLOCK_FAST_EDGES_SIZE);
	munmap((void *)w, ORDLOCK_FAST_WORDS_SIZE);
	close(fd);
}

int main(void)
{
	watchdog_start(300);
	if (geteuid())
		bail_out("needs root (DOMAIN_CONFIG)");
	res = shm_alloc(16 * sizeof(int));
	test_learn();
	test_enforce_and_map();
	test_ioctl();
	test_potential();
	test_revoked();
	/* every domain's fast path off: later programs count resources */
	is_int(fast_off(dom), 0, "%s: fast path off at the end (its keys unpinned)", dom);
	is_int(fast_off(d2), 0, "%s: fast path off at the end", d2);
	is_int(fast_off(d3), 0, "%s: fast path off at the end", d3);
	is_int(fast_off(d4), 0, "%s: fast path off at the end", d4);
	is_int(fast_off(d5), 0, "%s: fast path off at the end", d5);
	return tap_done();
}
