// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libordlock: a thin C layer over the /dev/ordlock ioctls.
 *
 * The library keeps no state besides the file descriptor and a copy of
 * the last failure record, so a handle costs nothing while it is idle and
 * every call is the one ioctl it wraps; except in a domain that has the
 * fast path (docs/fastpath.md), where it also keeps the mappings of the
 * domain's words and of the owner page, the slots of the keys it pinned,
 * and the keys it holds by the fast path. Two calls need more: the lease
 * keep-alive (a thread of its own, ordlock_keepalive_start()) and the
 * query of a key (a netlink socket for one dump, ordlock_query()).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

/* Everything the public header declares is exported; the rest is hidden. */
#pragma GCC visibility push(default)
#include "libordlock.h"
#pragma GCC visibility pop

/*
 * A key -> slot entry of the fast path's cache; slot1 0 is empty. @inc is
 * the slot's incarnation the pin returned: every CAS expects it, and one
 * that meets another (the slot was recycled for another key) pins again.
 */
struct fast_slot {
	uint64_t id;
	uint32_t rank;
	uint16_t slot1;
	uint16_t inc;
};

#define FAST_CACHE	2048	/* twice ORDLOCK_FAST_SLOTS */

/*
 * The hot lookup in front of that table: direct-mapped by the low bits of
 * id + rank * a golden-ratio constant, a key compare only. An empty entry holds a key that maps elsewhere (id =
 * its index ^ 1, rank 0), so it can never match; a miss (a key not seen,
 * or one that shares an entry with another) is fast_slot_miss()'s.
 */
struct fast_dm {
	uint64_t id;
	uint32_t rank;
	uint16_t slot;
	uint16_t inc;
};

#define FAST_DM		1024

/* fast_state.gate when the fast path may not be tried inline */
#define FAST_GATE_OFF	(~0U)

/*
 * The fast path's state of a handle: @on is 0 before the first exclusive
 * acquire looked, 1 when the domain has it and the mappings are made, -1
 * when not (or after fork() or a move to another domain).
 */
struct fast_state {
	/* == fast_fork_gen iff on == 1, not forked, and no kernel holds */
	unsigned int gate;
	int on;
	uint32_t index;
	unsigned int fork_gen;
	uint32_t policy;
	uint32_t strict;
	volatile uint64_t *words;
	struct ordlock_fast_page *page;
	/* the pairs of slots the kernel learned (read-only) */
	const struct ordlock_fast_edges *edges;
	struct fast_slot *cache;
	struct fast_dm *dm;
	/* how the inline part of the last request left off (FAST_X_*) */
	unsigned int x_code, x_base, x_i;
	/* the request's timeout and flags, for acquire_resume() */
	unsigned int x_timeout, x_flags;
	/* the keys of page->held[], same order */
	struct ordlock_key held[ORDLOCK_FAST_STACK];
	/* the word each of them wrote: {gen, index, 0, inc}; a release expects it */
	uint64_t hword[ORDLOCK_FAST_STACK];
	/* what a take adds to a free word: a generation and the index */
	uint64_t take;
};

struct ordlock {
	int fd;
	struct ordlock_failure failure;
	/*
	 * @failure is the record of a 1-key try that met a held key (what
	 * try_busy() writes) in every field but @failure.key, so that a
	 * repeated failed try writes only the key. Every other writer of
	 * @failure clears it (failure_rec()).
	 */
	int busy_rec;
	unsigned int result_flags;
	/* the module predates the compact ioctls (ENOTTY): the full forms only */
	int full_only;
	uint64_t rng;
	/* the owner may hold keys granted by the kernel (until RELEASE_ALL) */
	int kernel_held;
	struct fast_state fast;
};

static void fast_off(struct ordlock *ol);
static int fast_holding(const struct ordlock *ol);

/* fork()s seen by this process (fast_child()); never FAST_GATE_OFF */
static unsigned int fast_fork_gen;

/* Recompute the gate after a change of on, fork_gen or kernel_held */
static void fast_gate(struct ordlock *ol)
{
	struct fast_state *f = &ol->fast;

	f->gate = f->on == 1 && !ol->kernel_held ? f->fork_gen : FAST_GATE_OFF;
}

static void set_kernel_held(struct ordlock *ol, int held)
{
	ol->kernel_held = held;
	fast_gate(ol);
}

#define NS_PER_MS 1000000ULL
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Return -@err with errno set to @err: the convention of every call. */
static int fail(int err)
{
	errno = err;
	return -err;
}

/* The reason to record when the kernel could not write one itself. */
static unsigned int reason_of_errno(int err)
{
	switch (err) {
	case ENOMEM:
		return ORDLOCK_REASON_NOMEM;
	case EDQUOT:
		/* only ever a per-user limit (SET_DOMAIN: max_domains_per_user) */
		return ORDLOCK_REASON_USER_LIMIT;
	case EDEADLK:
	case ETIMEDOUT:
	case EAGAIN:
	case EINTR:
	case ENOSPC:
	case ENOENT:
	case EBUSY:
	case EPERM:
	case ESTALE:
		return ORDLOCK_REASON_NONE;
	case EKEYEXPIRED:
		return ORDLOCK_REASON_REVOKED;
	case ENOTCONN:
	case ENOPKG:
	case EOPNOTSUPP:
	case EIO:
		/* a cluster domain's setting or request */
		return ORDLOCK_REASON_CLUSTER;
	default:
		/* EINVAL, E2BIG, EFAULT, ENOTTY, EBADF, ... */
		return ORDLOCK_REASON_INVALID;
	}
}

/* @ol->failure, to be written by anyone but try_busy() */
static struct ordlock_failure *failure_rec(struct ordlock *ol)
{
	ol->busy_rec = 0;
	return &ol->failure;
}

/* Record a failure the kernel did not describe (or could not write). */
static void record_errno(struct ordlock *ol, int err)
{
	memset(failure_rec(ol), 0, sizeof(ol->failure));
	ol->failure.reason = reason_of_errno(err);
	ol->failure.error = (unsigned int)err;
	ol->failure.index = ~0U;
}

/*
 * After a failed acquire or release: keep the kernel's record when it
 * wrote one, else (the argument was not writable, the ioctl is unknown,
 * ...) synthesise one from the errno.
 */
static void record_failure(struct ordlock *ol,
			   const struct ordlock_failure *f, int err)
{
	if (f->reason != ORDLOCK_REASON_NONE) {
		*failure_rec(ol) = *f;
		return;
	}
	record_errno(ol, err);
}

struct ordlock *ordlock_open(const char *domain)
{
	struct ordlock *ol;
	int err;

	ol = calloc(1, sizeof(*ol));
	if (!ol)
		return NULL;
	ol->failure.index = ~0U;
	ol->fast.gate = FAST_GATE_OFF;
	ol->fd = open(ORDLOCK_DEVICE, O_RDWR | O_CLOEXEC);
	if (ol->fd < 0) {
		err = errno;
		free(ol);
		errno = err;
		return NULL;
	}
	if (domain) {
		err = ordlock_set_domain(ol, domain);
		if (err) {
			close(ol->fd);
			free(ol);
			errno = -err;
			return NULL;
		}
	}
	return ol;
}

struct ordlock *ordlock_open_fd(int fd)
{
	struct ordlock_owner_info info = { .size = sizeof(info) };
	struct ordlock *ol;

	/* an owner answers OWNER_INFO; any other file does not (ENOTTY) */
	if (ioctl(fd, ORDLOCK_IOC_OWNER_INFO, &info) < 0)
		return NULL;
	ol = calloc(1, sizeof(*ol));
	if (!ol)
		return NULL;
	ol->failure.index = ~0U;
	ol->fast.gate = FAST_GATE_OFF;
	ol->fd = fd;
	/*
	 * The owner may be another handle's (an inherited descriptor): its
	 * owner page is not this handle's to write, so no fast path here
	 */
	ol->fast.on = -1;
	return ol;
}

void ordlock_detach(struct ordlock *ol)
{
	if (ol)
		fast_off(ol);
	free(ol);
}

void ordlock_close(struct ordlock *ol)
{
	int saved = errno;

	if (!ol)
		return;
	/*
	 * The last close releases everything anyway; releasing first also
	 * covers a descriptor that was dup()ed or inherited by a child.
	 */
	ordlock_release_all(ol);
	fast_off(ol);
	close(ol->fd);
	free(ol);
	errno = saved;
}

int ordlock_fd(const struct ordlock *ol)
{
	if (!ol)
		return fail(EINVAL);
	return ol->fd;
}

int ordlock_set_domain(struct ordlock *ol, const char *domain)
{
	struct ordlock_set_domain sd;
	size_t len;

	if (!ol)
		return fail(EINVAL);
	if (!domain)
		domain = ORDLOCK_DEFAULT_DOMAIN;
	len = strlen(domain);
	if (len >= sizeof(sd.name)) {
		record_errno(ol, EINVAL);
		return fail(EINVAL);
	}
	memset(&sd, 0, sizeof(sd));
	sd.size = sizeof(sd);
	memcpy(sd.name, domain, len);
	/* keys held by the fast path keep their owner in its domain */
	if (fast_holding(ol)) {
		record_errno(ol, EBUSY);
		return fail(EBUSY);
	}
	if (ioctl(ol->fd, ORDLOCK_IOC_SET_DOMAIN, &sd) < 0) {
		int err = errno;

		record_errno(ol, err);
		return fail(err);
	}
	/* the kernel keeps the owner's fast state in its first domain */
	if (ol->fast.on == 1)
		fast_off(ol);
	return 0;
}

/*
 * The compact ioctls (DOC: Compact ioctls of the UAPI header): the same
 * requests with less to copy. A module without them answers ENOTTY: the
 * handle then sets full_only and the caller uses the full form (a file
 * that is no owner at all answers ENOTTY there too).
 */
static int compact_failed(struct ordlock *ol, const struct ordlock_failure *f)
{
	int err = errno;

	if (err == ENOTTY && !ol->full_only) {
		ol->full_only = 1;
		return -ENOTTY;
	}
	record_failure(ol, f, err);
	return fail(err);
}

static int compact_lock(struct ordlock *ol, const struct ordlock_key *keys,
			unsigned int n, unsigned int timeout_ms,
			unsigned int flags, uint64_t *token)
{
	struct ordlock_failure f;
	struct ordlock_lock l = {
		.keys = (uintptr_t)keys,
		.nkeys = n,
		.flags = flags,
		.timeout_ns = (uint64_t)timeout_ms * NS_PER_MS,
		.failure = (uintptr_t)&f,
	};

	/* the kernel writes @f on every failure it reaches; not before */
	f.reason = ORDLOCK_REASON_NONE;
	if (ioctl(ol->fd, ORDLOCK_IOC_LOCK, &l) < 0) {
		ol->result_flags = l.result_flags;
		return compact_failed(ol, &f);
	}
	ol->result_flags = l.result_flags;
	if (token)
		*token = l.token;
	return 0;
}

/*
 * The fast path (docs/fastpath.md): in a domain an admin gave it, an
 * uncontended request of exclusive keys, in ascending order and above the
 * keys held by the fast path, without a lease or a token, is taken by a
 * compare-and-swap per key on the domain's shared words, and released the
 * same way: no system call. Everything else goes to the kernel, which
 * treats the words as the truth: a key seen for the first time (PIN, once
 * per key and handle), contention (what was taken is given back and the
 * whole request goes to the kernel), shared mode, leases, tokens, a
 * conversion, and every request while the owner may hold keys the kernel
 * granted.
 */
static pthread_once_t fast_once = PTHREAD_ONCE_INIT;
static int fast_atfork_ok;

/* The mappings are not inherited: a child goes to the kernel */
static void fast_child(void)
{
	unsigned int g = fast_fork_gen + 1;

	__atomic_store_n(&fast_fork_gen, g == FAST_GATE_OFF ? 0 : g,
			 __ATOMIC_RELAXED);
}

static void fast_register(void)
{
	fast_atfork_ok = !pthread_atfork(NULL, NULL, fast_child);
}

/* The learned pairs of a module that has none: @learning 0, never changed */
static const struct ordlock_fast_edges fast_no_edges;

static void fast_off(struct ordlock *ol)
{
	struct fast_state *f = &ol->fast;

	if (f->on == 1 && f->fork_gen == fast_fork_gen) {
		munmap((void *)f->words, ORDLOCK_FAST_WORDS_SIZE);
		munmap(f->page, sizeof(*f->page) > 4096 ? sizeof(*f->page) : 4096);
		if (f->edges != &fast_no_edges)
			munmap((void *)f->edges, ORDLOCK_FAST_EDGES_SIZE);
	}
	free(f->cache);
	f->cache = NULL;
	free(f->dm);
	f->dm = NULL;
	f->on = -1;
	f->gate = FAST_GATE_OFF;
}

static unsigned int fast_hash(uint32_t rank, uint64_t id)
{
	uint64_t h = (id ^ ((uint64_t)rank << 40)) * 0x9e3779b97f4a7c15ULL;

	return (unsigned int)(h >> 53) & (FAST_CACHE - 1);
}

static int fast_pin(struct ordlock *ol, uint32_t rank, uint64_t id,
		    uint32_t *slot, uint32_t *inc)
{
	struct ordlock_fast_pin p;

	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.rank = rank;
	p.id = id;
	if (ioctl(ol->fd, ORDLOCK_IOC_FAST_PIN, &p) < 0)
		return -errno;
	*slot = p.slot;
	*inc = p.inc & ORDLOCK_FAST_INC_MASK;
	ol->fast.index = p.index;
	ol->fast.take = ORDLOCK_FAST_WORD(1, p.index);
	return 0;
}

static inline unsigned int fast_dm_index(uint32_t rank, uint64_t id)
{
	return ((unsigned int)id + rank * 0x9e3779b1U) & (FAST_DM - 1);
}

/*
 * The hot lookup's miss: probe the table from the key's hash, pin the key
 * if it is not there (once per key and handle), or again with @repin (its
 * slot was recycled: the cached incarnation is stale), and put it in the
 * direct-mapped entry. Return its slot (its incarnation in *@inc), or -1.
 */
static __attribute__((noinline, cold)) int64_t
fast_slot_miss(struct ordlock *ol, uint32_t rank, uint64_t id, int repin,
	       uint32_t *inc)
{
	struct fast_slot *c = ol->fast.cache;
	struct fast_dm *d = &ol->fast.dm[fast_dm_index(rank, id)];
	unsigned int i, h = fast_hash(rank, id);
	uint32_t slot = 0, ninc = 0;

	for (i = 0; i < FAST_CACHE; i++, h = (h + 1) & (FAST_CACHE - 1)) {
		if (!c[h].slot1)
			break;
		if (c[h].id == id && c[h].rank == rank) {
			if (repin)
				break;
			slot = c[h].slot1 - 1;
			ninc = c[h].inc;
			goto found;
		}
	}
	if (i == FAST_CACHE || fast_pin(ol, rank, id, &slot, &ninc)) {
		/* a stale entry must not be used again */
		if (repin && d->id == id && d->rank == rank)
			d->id = fast_dm_index(rank, id) ^ 1;
		return -1;
	}
	c[h].id = id;
	c[h].rank = rank;
	c[h].slot1 = (uint16_t)(slot + 1);
	c[h].inc = (uint16_t)ninc;
found:
	d->id = id;
	d->rank = rank;
	d->slot = (uint16_t)slot;
	d->inc = (uint16_t)ninc;
	*inc = ninc;
	return slot;
}

/* The slot of a key: from the cache, else pinned (once); -1 on failure */
static inline int64_t fast_slot(struct ordlock *ol, uint32_t rank, uint64_t id,
				uint32_t *inc)
{
	const struct fast_dm *d = &ol->fast.dm[fast_dm_index(rank, id)];

	if (__builtin_expect(d->id == id && d->rank == rank, 1)) {
		*inc = d->inc;
		return d->slot;
	}
	return fast_slot_miss(ol, rank, id, 0, inc);
}

/* The word @w of a cached slot has another incarnation than @inc */
static inline int fast_stale(uint64_t w, uint32_t inc)
{
	return ORDLOCK_FAST_INC(w) != inc;
}

/* Does the domain have the fast path for this handle? Maps it if so. */
static void fast_enable(struct ordlock *ol, const struct ordlock_key *key)
{
	struct ordlock_owner_info info = { .size = sizeof(info) };
	struct ordlock_domain_config cfg;
	struct fast_state *f = &ol->fast;
	unsigned int i;
	uint32_t inc;
	void *p;

	f->on = -1;
	pthread_once(&fast_once, fast_register);
	if (!fast_atfork_ok)
		return;
	if (ioctl(ol->fd, ORDLOCK_IOC_OWNER_INFO, &info) < 0)
		return;
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	memcpy(cfg.name, info.domain, sizeof(cfg.name));
	if (ioctl(ol->fd, ORDLOCK_IOC_DOMAIN_CONFIG, &cfg) < 0 || cfg.fastpath != 1)
		return;
	f->cache = calloc(FAST_CACHE, sizeof(*f->cache));
	f->dm = malloc(FAST_DM * sizeof(*f->dm));
	if (!f->cache || !f->dm)
		goto fail;
	for (i = 0; i < FAST_DM; i++) {
		/* a key that maps to another entry: matches nothing */
		f->dm[i].id = i ^ 1;
		f->dm[i].rank = 0;
		f->dm[i].slot = 0;
		f->dm[i].inc = 0;
	}
	f->policy = info.policy;
	f->strict = cfg.strict;
	if (fast_slot(ol, key->rank, key->id, &inc) < 0) {
		/*
		 * Every slot's key held or waited for: not for good (slots are
		 * recycled), a later request looks again
		 */
		if (errno == ENOSPC)
			f->on = 0;
		goto fail;
	}
	p = mmap(NULL, ORDLOCK_FAST_WORDS_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED, ol->fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	f->words = p;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ol->fd,
		 ORDLOCK_FAST_OWNER_OFFSET);
	if (p == MAP_FAILED) {
		munmap((void *)f->words, ORDLOCK_FAST_WORDS_SIZE);
		goto fail;
	}
	f->page = p;
	p = mmap(NULL, ORDLOCK_FAST_EDGES_SIZE, PROT_READ, MAP_SHARED, ol->fd,
		 ORDLOCK_FAST_EDGES_OFFSET);
	if (p == MAP_FAILED && errno == EINVAL) {
		/* a module without the learned order: nothing to learn */
		p = (void *)&fast_no_edges;
	} else if (p == MAP_FAILED) {
		munmap((void *)f->words, ORDLOCK_FAST_WORDS_SIZE);
		munmap(f->page, 4096);
		goto fail;
	}
	f->edges = p;
	f->page->nheld = 0;
	f->page->pending = 0;
	f->fork_gen = fast_fork_gen;
	f->on = 1;
	fast_gate(ol);
	return;
fail:
	free(f->cache);
	f->cache = NULL;
	free(f->dm);
	f->dm = NULL;
}

static int key_cmp(const struct ordlock_key *a, const struct ordlock_key *b)
{
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

/* Let go of the word of the fast hold at @i of the stack: CAS, else the kernel */
static int fast_unlock_word(struct ordlock *ol, unsigned int i)
{
	struct fast_state *f = &ol->fast;
	struct ordlock_fast_page *pg = f->page;
	uint32_t slot = pg->held[i].slot, gen = pg->held[i].gen;
	uint64_t w = f->hword[i];

	if (!__atomic_compare_exchange_n(&f->words[slot], &w,
					 f->hword[i] & ~ORDLOCK_FAST_WORD(0, ~0U), 0,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
		struct ordlock_fast_release r = {
			.size = sizeof(r), .slot = slot, .gen = gen,
		};

		if (ioctl(ol->fd, ORDLOCK_IOC_FAST_RELEASE, &r) < 0)
			return -errno;
	}
	return 0;
}

/* Let go of the fast hold at @i of the stack, and pop it */
static int fast_unlock_at(struct ordlock *ol, unsigned int i)
{
	struct fast_state *f = &ol->fast;
	struct ordlock_fast_page *pg = f->page;
	unsigned int n = pg->nheld;
	int ret = fast_unlock_word(ol, i);

	/* after the word: a death in between finds a word no longer ours */
	if (i + 1 < n) {
		memmove(&pg->held[i], &pg->held[i + 1], (n - i - 1) * sizeof(pg->held[0]));
		memmove(&f->held[i], &f->held[i + 1], (n - i - 1) * sizeof(f->held[0]));
		memmove(&f->hword[i], &f->hword[i + 1], (n - i - 1) * sizeof(f->hword[0]));
	}
	pg->nheld = n - 1;
	return ret;
}

#define FAST_SLOW 1

/* A local failure record, as the kernel would write it */
static int fast_fail(struct ordlock *ol, unsigned int reason, int err,
		     unsigned int index, const struct ordlock_key *key,
		     const struct ordlock_key *held)
{
	memset(failure_rec(ol), 0, sizeof(ol->failure));
	ol->failure.reason = reason;
	ol->failure.error = (unsigned int)err;
	ol->failure.index = index;
	ol->failure.key = *key;
	if (held)
		ol->failure.held = *held;
	return fail(err);
}

/* Tell the kernel the pair held slot @from -> taken slot @to (both held) */
static __attribute__((noinline)) void fast_learn(struct ordlock *ol, uint32_t from,
						 uint32_t to)
{
	struct ordlock_fast_learn l = {
		.size = sizeof(l), .from = from, .to = to,
	};

	/* best effort: the keys are held either way */
	(void)ioctl(ol->fd, ORDLOCK_IOC_FAST_LEARN, &l);
}

/*
 * The learned order (docs/fastpath.md): in a domain that learns, after the
 * CAS of a request's keys, each pair (the top of the held stack -> the
 * first new key, and each new key -> the next) must be known to the
 * kernel (a bit of the read-only edges mapping); one that is not is told
 * (FAST_LEARN), which learns and reports its edge. A known pair costs the
 * loads of the bit; a domain that does not learn, one load.
 */
static inline void fast_learn_check(struct ordlock *ol, unsigned int nheld,
				    unsigned int n)
{
	const struct ordlock_fast_edges *e = ol->fast.edges;
	const struct ordlock_fast_held *h = ol->fast.page->held;
	unsigned int i;

	if (!__atomic_load_n(&e->learning, __ATOMIC_RELAXED))
		return;
	for (i = nheld ? nheld : 1; i < nheld + n; i++)
		if (!ordlock_fast_edge_known(e, h[i - 1].slot, h[i].slot))
			fast_learn(ol, h[i - 1].slot, h[i].slot);
}

/*
 * How many times a contended fast acquire reads a word held by another
 * member before it asks the kernel (glibc's adaptive mutexes spin about as
 * long): a key held for a few instructions by a process on another CPU is
 * free again well before a system call and a sleep would have ended.
 */
#define FAST_SPIN 200

static inline void fast_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * The word at @wp is held by another member: wait a little for it to come
 * free. Return: the word as last read, free when it came free in time (the
 * caller tries its CAS again once; a free word with WAITERS is one the
 * kernel left for a woken waiter that may be passed), else as it was (the
 * kernel decides). A held word with WAITERS has a queue in the kernel: no
 * spinning past it, which keeps the queue's order.
 */
static __attribute__((noinline)) uint64_t fast_spin(volatile uint64_t *wp)
{
	uint64_t w = 0;
	unsigned int k;

	for (k = 0; k < FAST_SPIN; k++) {
		w = __atomic_load_n(wp, __ATOMIC_RELAXED);
		if (w & ORDLOCK_FAST_WAITERS)
			break;
		if (!ORDLOCK_FAST_OWNER(w))
			break;
		fast_cpu_relax();
	}
	return w;
}

/*
 * Try the request by the fast path. Return: 0 (granted), -errno (failed
 * here), or FAST_SLOW: the kernel decides (nothing is held of it).
 */
static int fast_acquire(struct ordlock *ol, const struct ordlock_key *keys,
			unsigned int n, unsigned int flags)
{
	struct fast_state *f = &ol->fast;
	struct ordlock_fast_page *pg;
	unsigned int i, j, nheld, taken = 0;
	int64_t slot;

	if (f->on == 0)
		fast_enable(ol, &keys[0]);
	if (f->on != 1 || f->fork_gen != fast_fork_gen)
		return FAST_SLOW;
	pg = f->page;
	nheld = pg->nheld;
	/* a key held already by the fast path: it would wait for itself */
	for (i = 0; nheld && i < n; i++)
		for (j = 0; j < nheld; j++)
			if (!key_cmp(&keys[i], &f->held[j]))
				return fast_fail(ol, ORDLOCK_REASON_ORDER, EDEADLK,
						 i, &keys[i], &f->held[j]);
	if (ol->kernel_held || n > ORDLOCK_FAST_STACK - nheld)
		return FAST_SLOW;
	for (i = 0; i < n; i++) {
		if (keys[i].mode != ORDLOCK_MODE_EXCLUSIVE || keys[i].__reserved)
			return FAST_SLOW;
		if (i && key_cmp(&keys[i - 1], &keys[i]) >= 0)
			return FAST_SLOW;
	}
	/* the order rule against the top of the held stack */
	if (nheld && (key_cmp(&f->held[nheld - 1], &keys[0]) > 0 ||
		      (f->strict && f->held[nheld - 1].rank >= keys[0].rank))) {
		if (f->policy != ORDLOCK_POLICY_ENFORCE)
			return FAST_SLOW;
		return fast_fail(ol, f->strict ? ORDLOCK_REASON_STRICT :
				 ORDLOCK_REASON_ORDER, EDEADLK, 0, &keys[0],
				 &f->held[nheld - 1]);
	}
	for (i = 0; i < n; i++) {
		volatile uint64_t *wp;
		unsigned int repins = 0;
		uint32_t g, inc;
		uint64_t w;

		slot = fast_slot(ol, keys[i].rank, keys[i].id, &inc);
again:
		if (slot < 0)
			goto contended;
		wp = &f->words[slot];
		w = __atomic_load_n(wp, __ATOMIC_RELAXED);
		/* the slot was recycled for another key: pin this one again */
		if (fast_stale(w, inc)) {
			if (repins++)
				goto contended;
			slot = fast_slot_miss(ol, keys[i].rank, keys[i].id, 1, &inc);
			goto again;
		}
		pg->pending = (uint32_t)slot + 1;
		/* held by another member, no queue: a short wait, once */
		if (ORDLOCK_FAST_OWNER(w) && !(w & ORDLOCK_FAST_WAITERS) &&
		    ORDLOCK_FAST_OWNER(w) != f->index &&
		    !(flags & ORDLOCK_ACQUIRE_TRY))
			w = fast_spin(wp);
		g = ORDLOCK_FAST_GEN(w) + 1;
		/*
		 * free is {g, 0, 0, inc}, or {g, 0, WAITERS, inc} left free for
		 * a woken waiter that may be passed: taken, WAITERS kept
		 * (docs/fastpath.md), the release then goes to the kernel
		 */
		if (((uint32_t)w & ~(uint32_t)ORDLOCK_FAST_WAITERS) != inc || !g ||
		    !__atomic_compare_exchange_n(wp, &w, ORDLOCK_FAST_WORD(g, f->index) | inc |
						 (w & ORDLOCK_FAST_WAITERS),
						 0, __ATOMIC_SEQ_CST,
						 __ATOMIC_RELAXED)) {
			pg->pending = 0;
			goto contended;
		}
		pg->held[nheld + i].slot = (uint32_t)slot;
		pg->held[nheld + i].gen = g;
		f->held[nheld + i] = keys[i];
		f->hword[nheld + i] = ORDLOCK_FAST_WORD(g, f->index) | inc;
		pg->nheld = nheld + i + 1;
		pg->pending = 0;
		taken++;
	}
	/* a revocation the kernel's walk did not see (never set yet) */
	if (__atomic_load_n(&pg->revoked, __ATOMIC_SEQ_CST)) {
		while (taken--)
			fast_unlock_at(ol, nheld + taken);
		return FAST_SLOW;
	}
	fast_learn_check(ol, nheld, n);
	return 0;

contended:
	/* give back what this request took, newest first */
	while (taken--)
		fast_unlock_at(ol, nheld + taken);
	if (flags & ORDLOCK_ACQUIRE_TRY)
		return fast_fail(ol, ORDLOCK_REASON_BUSY, EAGAIN, i, &keys[i], NULL);
	return FAST_SLOW;
}

/*
 * Release @keys held by the fast path; the others are left in @rest
 * (@nrest of them) for the kernel. Return: 0 or the first -errno.
 */
static int fast_release(struct ordlock *ol, const struct ordlock_key *keys,
			unsigned int n, struct ordlock_key *rest,
			unsigned int *nrest)
{
	struct fast_state *f = &ol->fast;
	struct ordlock_fast_page *pg = f->page;
	unsigned int i, j, nheld = pg->nheld, base;
	int ret = 0, r;

	*nrest = 0;
	/*
	 * The common case, in O(n): the keys are the top n of the stack, in
	 * the order taken. Each word is let go first, the stack cut after.
	 */
	if (n <= nheld) {
		base = nheld - n;
		for (i = 0; i < n; i++)
			if (key_cmp(&keys[i], &f->held[base + i]))
				break;
		if (i == n) {
			for (i = n; i-- > 0;) {
				r = fast_unlock_word(ol, base + i);
				if (r && !ret)
					ret = r;
			}
			pg->nheld = base;
			return ret;
		}
	}
	for (i = 0; i < n; i++) {
		for (j = f->page->nheld; j-- > 0;)
			if (!key_cmp(&keys[i], &f->held[j]))
				break;
		if (j == (unsigned int)-1) {
			rest[(*nrest)++] = keys[i];
			continue;
		}
		r = fast_unlock_at(ol, j);
		if (r && !ret)
			ret = r;
	}
	return ret;
}

static int fast_holding(const struct ordlock *ol)
{
	return ol->fast.on == 1 && ol->fast.fork_gen == fast_fork_gen &&
	       ol->fast.page->nheld;
}

/*
 * The fast path's inline part (docs/fastpath.md, "User space"): the common
 * case only, checked in one pass, then one CAS per key, with no function
 * call (so it needs no stack frame). The held stack is in ascending order
 * (every push is above its top), so a first key above the top is above
 * every held key: no key of the request is held already. It returns 0
 * (granted) or 1: then @x_code says how it left off (FAST_X_*; the keys
 * taken so far are still on the stack, from @x_base, @x_i of them) and
 * acquire_resume() finishes the request.
 */
enum {
	FAST_X_GENERIC = 1,	/* not the common case: nothing taken */
	FAST_X_MISS,		/* key x_i is not in the direct-mapped cache */
	FAST_X_BUSY,		/* key x_i is held (or its generation would wrap) */
	FAST_X_REVOKED,		/* the owner page's revoked flag is set */
	FAST_X_LEARN,		/* granted, but a pair is not known to the kernel */
	FAST_X_STALE,		/* key x_i's slot was recycled: pin it again */
};

/*
 * fast_acquire_hot() for 1 key: the same steps, in a straight line. It
 * returns 0 or how it left off (FAST_X_*; the handle is not written: the
 * caller notes it for acquire_resume(), a held key was not taken, a
 * revoked one is the top of the stack).
 */
static inline __attribute__((always_inline)) unsigned int
fast_acquire_one(struct ordlock *ol, const struct ordlock_key *k)
{
	struct fast_state *f = &ol->fast;
	struct ordlock_fast_page *pg;
	const struct fast_dm *d;
	volatile uint64_t *wp;
	unsigned int nheld;
	uint32_t slot, inc;
	uint64_t w, nw;

	if (__builtin_expect(f->gate != fast_fork_gen, 0))
		return FAST_X_GENERIC;
	pg = f->page;
	nheld = pg->nheld;
	if (__builtin_expect(k->mode != ORDLOCK_MODE_EXCLUSIVE || k->__reserved, 0))
		return FAST_X_GENERIC;
	/* the order rule against the top of the held stack (and room above it) */
	if (nheld) {
		const struct ordlock_key *top = &f->held[nheld - 1];

		if (__builtin_expect(nheld >= ORDLOCK_FAST_STACK, 0))
			return FAST_X_GENERIC;
		if (top->rank > k->rank ||
		    (top->rank == k->rank && (f->strict || top->id >= k->id)))
			return FAST_X_GENERIC;
	}
	d = &f->dm[fast_dm_index(k->rank, k->id)];
	if (__builtin_expect(d->id != k->id || d->rank != k->rank, 0))
		return FAST_X_MISS;
	slot = d->slot;
	inc = d->inc;
	wp = &f->words[slot];
	w = __atomic_load_n(wp, __ATOMIC_RELAXED);
	/*
	 * Free is {g, 0, 0, inc}: held, waited for or recycled (another
	 * incarnation) in one test, a failed try needs nothing else. A free
	 * word with WAITERS, {g, 0, WAITERS, inc}, was left free by the kernel
	 * for a woken waiter that may be passed: fast_acquire() takes it, with
	 * WAITERS kept (the release then goes to the kernel)
	 */
	if (__builtin_expect((uint32_t)w != inc, 0)) {
		/* the low byte as cached: held by another, no queue (a try's case) */
		if ((uint8_t)w == (uint8_t)inc)
			return FAST_X_BUSY;
		/*
		 * another incarnation, or free with WAITERS (the generic path,
		 * fast_acquire(), takes it with WAITERS kept), or held with a
		 * queue
		 */
		return fast_stale(w, inc) || !ORDLOCK_FAST_OWNER(w) ? FAST_X_STALE :
								      FAST_X_BUSY;
	}
	/* {g + 1, me, 0, inc}; a generation that would wrap to 0: busy */
	nw = w + f->take;
	if (__builtin_expect(nw < w, 0))
		return FAST_X_BUSY;
	/* pending before the CAS: a death in between is covered */
	__atomic_store_n(&pg->pending, slot + 1, __ATOMIC_RELAXED);
	if (__builtin_expect(!__atomic_compare_exchange_n(wp, &w, nw, 0,
			     __ATOMIC_SEQ_CST, __ATOMIC_RELAXED), 0)) {
		__atomic_store_n(&pg->pending, 0, __ATOMIC_RELAXED);
		return FAST_X_BUSY;
	}
	/* push, then clear pending */
	pg->held[nheld].slot = slot;
	pg->held[nheld].gen = ORDLOCK_FAST_GEN(nw);
	f->held[nheld] = *k;
	f->hword[nheld] = nw;
	__atomic_store_n(&pg->nheld, nheld + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&pg->pending, 0, __ATOMIC_RELAXED);
	/*
	 * The checks of the owner page after the CAS: the revoked word. Both
	 * seq_cst (the kernel: flag, full barrier, words): this load may not
	 * pass the CAS's store (an acquire load might, on arm64's LDAPR)
	 */
	if (__builtin_expect(__atomic_load_n(&pg->revoked, __ATOMIC_SEQ_CST) != 0, 0))
		return FAST_X_REVOKED;
	/* the learned order: a pair (top -> this key) the kernel must know */
	if (nheld) {
		const struct ordlock_fast_edges *e = f->edges;

		if (__builtin_expect(__atomic_load_n(&e->learning, __ATOMIC_RELAXED) &&
				     !ordlock_fast_edge_known(e, pg->held[nheld - 1].slot, slot), 0))
			return FAST_X_LEARN;
	}
	ol->result_flags = 0;
	return 0;
}

static inline __attribute__((always_inline)) int
fast_acquire_hot(struct ordlock *ol, const struct ordlock_key *keys,
		 unsigned int n)
{
	struct fast_state *f = &ol->fast;
	const struct ordlock_key *k;
	struct ordlock_fast_page *pg;
	struct ordlock_fast_held *ph;
	struct ordlock_key *fh;
	uint64_t *hw;
	unsigned int i, nheld;

	if (__builtin_expect(f->gate != fast_fork_gen || n - 1 >= ORDLOCK_FAST_STACK, 0))
		goto generic;
	pg = f->page;
	nheld = pg->nheld;
	if (__builtin_expect(nheld > ORDLOCK_FAST_STACK - n, 0))
		goto generic;
	/* the order rule against the top of the held stack */
	if (nheld) {
		const struct ordlock_key *top = &f->held[nheld - 1];

		if (top->rank > keys[0].rank ||
		    (top->rank == keys[0].rank && (f->strict || top->id >= keys[0].id)))
			goto generic;
	}
	/* exclusive, nothing reserved, strictly ascending */
	for (i = 0; i < n; i++) {
		if (keys[i].mode != ORDLOCK_MODE_EXCLUSIVE || keys[i].__reserved)
			goto generic;
		if (i && (keys[i - 1].rank > keys[i].rank ||
			  (keys[i - 1].rank == keys[i].rank && keys[i - 1].id >= keys[i].id)))
			goto generic;
	}
	k = keys;
	ph = &pg->held[nheld];
	fh = &f->held[nheld];
	hw = &f->hword[nheld];
	do {
		const struct fast_dm *d = &f->dm[fast_dm_index(k->rank, k->id)];
		volatile uint64_t *wp;
		uint32_t slot, inc;
		uint64_t w, nw;

		if (__builtin_expect(d->id != k->id || d->rank != k->rank, 0)) {
			f->x_code = FAST_X_MISS;
			goto taken;
		}
		slot = d->slot;
		inc = d->inc;
		wp = &f->words[slot];
		w = __atomic_load_n(wp, __ATOMIC_RELAXED);
		/* free is {g, 0, 0, inc} (fast_acquire_one()) */
		if (__builtin_expect((uint32_t)w != inc, 0)) {
			/* free with WAITERS: fast_acquire() takes it (fast_acquire_one()) */
			f->x_code = fast_stale(w, inc) || !ORDLOCK_FAST_OWNER(w) ?
				    FAST_X_STALE : FAST_X_BUSY;
			goto taken;
		}
		nw = w + f->take;
		if (__builtin_expect(nw < w, 0)) {
			f->x_code = FAST_X_BUSY;
			goto taken;
		}
		/* pending before the CAS: a death in between is covered */
		__atomic_store_n(&pg->pending, slot + 1, __ATOMIC_RELAXED);
		if (__builtin_expect(!__atomic_compare_exchange_n(wp, &w, nw, 0,
				     __ATOMIC_SEQ_CST, __ATOMIC_RELAXED), 0)) {
			__atomic_store_n(&pg->pending, 0, __ATOMIC_RELAXED);
			f->x_code = FAST_X_BUSY;
			goto taken;
		}
		/* push, then clear pending */
		ph->slot = slot;
		ph->gen = ORDLOCK_FAST_GEN(nw);
		ph++;
		*fh++ = *k;
		*hw++ = nw;
		__atomic_store_n(&pg->nheld, (unsigned int)(ph - pg->held), __ATOMIC_RELAXED);
		__atomic_store_n(&pg->pending, 0, __ATOMIC_RELAXED);
	} while (++k != keys + n);
	/* the checks of the owner page after the CASes: the revoked flag */
	if (__builtin_expect(__atomic_load_n(&pg->revoked, __ATOMIC_SEQ_CST) != 0, 0)) {
		f->x_code = FAST_X_REVOKED;
		goto taken;
	}
	/* the learned order: each new pair (from the old top) the kernel must know */
	if (__builtin_expect(__atomic_load_n(&f->edges->learning, __ATOMIC_RELAXED), 0)) {
		const struct ordlock_fast_held *h = &pg->held[nheld ? nheld - 1 : nheld];

		for (; h + 1 != ph; h++)
			if (!ordlock_fast_edge_known(f->edges, h[0].slot, h[1].slot)) {
				f->x_code = FAST_X_LEARN;
				f->x_base = nheld;
				return 1;
			}
	}
	ol->result_flags = 0;
	return 0;
taken:
	f->x_base = nheld;
	f->x_i = (unsigned int)(k - keys);
	return 1;
generic:
	f->x_code = FAST_X_GENERIC;
	return 1;
}

/* The request in the kernel: the compact ioctl, else the full form */
static __attribute__((noinline)) int
acquire_kernel(struct ordlock *ol, const struct ordlock_key *keys,
	       unsigned int n, unsigned int timeout_ms, unsigned int flags,
	       unsigned int lease_ms, uint64_t *token)
{
	struct ordlock_acquire a;
	int ret;

	if (!lease_ms && !ol->full_only) {
		ret = compact_lock(ol, keys, n, timeout_ms, flags, token);
		if (!ret)
			set_kernel_held(ol, 1);
		if (ret != -ENOTTY || !ol->full_only)
			return ret;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags;
	a.nkeys = n;
	a.lease_ms = lease_ms;
	a.keys = (uintptr_t)keys;
	a.timeout_ns = (uint64_t)timeout_ms * NS_PER_MS;
	if (ioctl(ol->fd, ORDLOCK_IOC_ACQUIRE, &a) < 0) {
		int err = errno;

		ol->result_flags = a.result_flags;
		record_failure(ol, &a.failure, err);
		return fail(err);
	}
	ol->result_flags = a.result_flags;
	set_kernel_held(ol, 1);
	if (token)
		*token = a.token;
	return 0;
}

/* Everything the inline part does not cover: fast_acquire(), else the kernel */
static __attribute__((noinline)) int
acquire_generic(struct ordlock *ol, const struct ordlock_key *keys,
		unsigned int n, unsigned int timeout_ms, unsigned int flags,
		unsigned int lease_ms, uint64_t *token)
{
	int ret;

	if (!ol)
		return fail(EINVAL);
	if (ol->fast.on >= 0 && !lease_ms && !token && n &&
	    !(flags & ~ORDLOCK_ACQUIRE_TRY)) {
		ret = fast_acquire(ol, keys, n, flags);
		if (ret != FAST_SLOW) {
			ol->result_flags = 0;
			return ret;
		}
	}
	return acquire_kernel(ol, keys, n, timeout_ms, flags, lease_ms, token);
}

/* Finish a request where fast_acquire_hot() left off */
static __attribute__((noinline)) int
acquire_resume(struct ordlock *ol, const struct ordlock_key *keys, unsigned int n)
{
	struct fast_state *f = &ol->fast;
	unsigned int code = f->x_code, timeout_ms = f->x_timeout, flags = f->x_flags;
	unsigned int taken;

	f->x_code = 0;
	if (code == FAST_X_GENERIC)
		return acquire_generic(ol, keys, n, timeout_ms, flags, 0, NULL);
	if (code == FAST_X_LEARN) {
		/* granted: tell the kernel the pairs it does not know */
		fast_learn_check(ol, f->x_base, n);
		ol->result_flags = 0;
		return 0;
	}
	/* give back what this request took, newest first */
	taken = f->x_i;
	while (taken--)
		fast_unlock_at(ol, f->x_base + taken);
	switch (code) {
	case FAST_X_STALE:
	case FAST_X_MISS:
		/* fast_acquire() pins the key (again, if stale) and fills the cache */
		return acquire_generic(ol, keys, n, timeout_ms, flags, 0, NULL);
	case FAST_X_BUSY:
		if (flags & ORDLOCK_ACQUIRE_TRY) {
			ol->result_flags = 0;
			return fast_fail(ol, ORDLOCK_REASON_BUSY, EAGAIN, f->x_i,
					 &keys[f->x_i], NULL);
		}
		break;
	default:
		/* FAST_X_REVOKED: the kernel answers, as for a lease */
		break;
	}
	return acquire_kernel(ol, keys, n, timeout_ms, flags, 0, NULL);
}

/*
 * try_busy()'s record in every field but the key (which try_busy() writes
 * next), when @ol->failure is another
 */
static __attribute__((noinline, cold)) void busy_record(struct ordlock *ol)
{
	struct ordlock_failure *r = &ol->failure;

	r->reason = ORDLOCK_REASON_BUSY;
	r->error = EAGAIN;
	r->pid = 0;
	r->index = 0;
	memset(&r->held, 0, sizeof(r->held));
	r->holder_mode = 0;
	r->cycle_len = 0;
	ol->busy_rec = 1;
}

/*
 * A try whose first key is held (nothing taken): the failure record
 * fast_fail() would write (BUSY, EAGAIN, index 0, the key, nothing else),
 * without the rest of acquire_resume(). When the record is such a record
 * already (@busy_rec: a failed try before it, and no other failure
 * since), only the key changes.
 */
static __attribute__((noinline)) int
try_busy(struct ordlock *ol, const struct ordlock_key *keys)
{
	ol->result_flags = 0;
	if (__builtin_expect(!ol->busy_rec, 0))
		busy_record(ol);
	ol->failure.key = keys[0];
	errno = EAGAIN;
	return -EAGAIN;
}

/* Not for the inline part: a lease, a token, other flags, no handle */
static __attribute__((noinline)) int
acquire_other(struct ordlock *ol, const struct ordlock_key *keys,
	      unsigned int n, unsigned int timeout_ms, unsigned int flags,
	      uint64_t *token)
{
	return acquire_generic(ol, keys, n, timeout_ms, flags, 0, token);
}

/* Where the inline part left off: a try's first key held, else the rest */
static __attribute__((noinline)) int
acquire_exit(struct ordlock *ol, const struct ordlock_key *keys, unsigned int n)
{
	if ((ol->fast.x_flags & ORDLOCK_ACQUIRE_TRY) &&
	    ol->fast.x_code == FAST_X_BUSY && !ol->fast.x_i)
		return try_busy(ol, keys);
	return acquire_resume(ol, keys, n);
}

/* A request of n != 1 keys (its own function: 1 key needs no frame) */
static __attribute__((noinline)) int
acquire_multi(struct ordlock *ol, const struct ordlock_key *keys, unsigned int n,
	      unsigned int timeout_ms, unsigned int flags)
{
	ol->fast.x_timeout = timeout_ms;
	ol->fast.x_flags = flags;
	if (__builtin_expect(!fast_acquire_hot(ol, keys, n), 1))
		return 0;
	return acquire_exit(ol, keys, n);
}

/* Where fast_acquire_one() left off (@code) */
static __attribute__((noinline)) int
acquire_one_exit(struct ordlock *ol, const struct ordlock_key *keys,
		 unsigned int code, unsigned int timeout_ms, unsigned int flags)
{
	struct fast_state *f = &ol->fast;

	f->x_timeout = timeout_ms;
	f->x_flags = flags;
	f->x_code = code;
	f->x_i = 0;
	f->x_base = 0;
	if (code == FAST_X_REVOKED || code == FAST_X_LEARN) {
		/* taken: the top of the stack */
		f->x_i = 1;
		f->x_base = f->page->nheld - 1;
	}
	return acquire_exit(ol, keys, 1);
}

static inline __attribute__((always_inline)) int
acquire_fast(struct ordlock *ol, const struct ordlock_key *keys, unsigned int n,
	     unsigned int timeout_ms, unsigned int flags)
{
	unsigned int code;

	if (n != 1)
		return acquire_multi(ol, keys, n, timeout_ms, flags);
	code = fast_acquire_one(ol, keys);
	if (__builtin_expect(!code, 1))
		return 0;
	if (code == FAST_X_BUSY && (flags & ORDLOCK_ACQUIRE_TRY))
		return try_busy(ol, keys);
	return acquire_one_exit(ol, keys, code, timeout_ms, flags);
}

int ordlock_acquire(struct ordlock *ol, const struct ordlock_key *keys,
		    unsigned int n, unsigned int timeout_ms, unsigned int flags,
		    uint64_t *token)
{
	if (__builtin_expect(!ol || token || (flags & ~ORDLOCK_ACQUIRE_TRY), 0))
		return acquire_other(ol, keys, n, timeout_ms, flags, token);
	return acquire_fast(ol, keys, n, timeout_ms, flags);
}

int ordlock_acquire_lease(struct ordlock *ol, const struct ordlock_key *keys,
			  unsigned int n, unsigned int timeout_ms,
			  unsigned int flags, unsigned int lease_ms,
			  uint64_t *token)
{
	if (lease_ms)
		return acquire_generic(ol, keys, n, timeout_ms, flags, lease_ms, token);
	return ordlock_acquire(ol, keys, n, timeout_ms, flags, token);
}

unsigned int ordlock_result_flags(const struct ordlock *ol)
{
	return ol ? ol->result_flags : 0;
}

int ordlock_try_acquire(struct ordlock *ol, const struct ordlock_key *keys,
			unsigned int n, uint64_t *token)
{
	if (__builtin_expect(!ol || token, 0))
		return acquire_other(ol, keys, n, 0, ORDLOCK_ACQUIRE_TRY, token);
	return acquire_fast(ol, keys, n, 0, ORDLOCK_ACQUIRE_TRY);
}

static int do_release_kernel(struct ordlock *ol, const struct ordlock_key *keys,
			     unsigned int n, unsigned int flags);

/*
 * A release of some keys in the kernel succeeded: when the kernel holds
 * nothing for the owner any more, the fast path is open again (issue 40:
 * after one contended acquire, a program that pairs acquire with release
 * stayed on the kernel's path until ordlock_release_all()). The owner page
 * says it without a system call: the kernel keeps ORDLOCK_FAST_PAGE_KERNEL
 * in @revoked while it holds keys for the owner (and clears it at the
 * release that leaves none), and a revocation keeps the kernel's path
 * until RELEASE_ALL acknowledges it.
 */
static inline void fast_kernel_drained(struct ordlock *ol)
{
	/* the pages are mapped in the process that enabled the fast path only */
	if (ol->kernel_held && ol->fast.on == 1 && ol->fast.page &&
	    ol->fast.fork_gen == fast_fork_gen &&
	    !__atomic_load_n(&ol->fast.page->revoked, __ATOMIC_SEQ_CST))
		set_kernel_held(ol, 0);
}

static int do_release(struct ordlock *ol, const struct ordlock_key *keys,
		      unsigned int n, unsigned int flags)
{
	struct ordlock_key stack_rest[8], *rest = NULL;
	unsigned int nrest;
	int ret = 0, kret;

	if (!ol)
		return fail(EINVAL);
	if (fast_holding(ol)) {
		if (flags & ORDLOCK_RELEASE_ALL) {
			unsigned int i = ol->fast.page->nheld;
			int revoked = 0;

			while (i-- > 0) {
				int e = fast_unlock_word(ol, i);

				/* revoked: the kernel's RELEASE_ALL acknowledges */
				if (e == -EKEYEXPIRED)
					revoked = 1;
				/*
				 * Not held any more (another process of the
				 * owner let it go): nothing to release
				 */
				else if (e && e != -ENOENT && !ret)
					ret = e;
			}
			ol->fast.page->nheld = 0;
			if (!ol->kernel_held && !revoked)
				return ret ? fail(-ret) : 0;
		} else if (keys && n) {
			rest = n <= 8 ? stack_rest : malloc(n * sizeof(*rest));
			if (!rest)
				return fail(ENOMEM);
			ret = fast_release(ol, keys, n, rest, &nrest);
			if (!nrest) {
				if (rest != stack_rest)
					free(rest);
				if (ret)
					record_errno(ol, -ret);
				return ret ? fail(-ret) : 0;
			}
			/* the others are the kernel's, whatever became of these */
			keys = rest;
			n = nrest;
		}
	}
	kret = do_release_kernel(ol, keys, n, flags);
	if (!kret && !(flags & ORDLOCK_RELEASE_ALL))
		fast_kernel_drained(ol);
	if (rest && rest != stack_rest)
		free(rest);
	if (ret && !kret) {
		record_errno(ol, -ret);
		return fail(-ret);
	}
	return kret;
}

static int do_release_kernel(struct ordlock *ol, const struct ordlock_key *keys,
			     unsigned int n, unsigned int flags)
{
	struct ordlock_release r;

	if (!ol->full_only) {
		struct ordlock_failure f;
		struct ordlock_unlock u = {
			.keys = (uintptr_t)keys,
			.nkeys = n,
			.failure = (uintptr_t)&f,
		};
		int cret;

		f.reason = ORDLOCK_REASON_NONE;
		if (flags & ORDLOCK_RELEASE_ALL)
			cret = ioctl(ol->fd, ORDLOCK_IOC_UNLOCK_ALL, 0);
		else
			cret = ioctl(ol->fd, ORDLOCK_IOC_UNLOCK, &u);
		if (cret >= 0) {
			if (flags & ORDLOCK_RELEASE_ALL)
				set_kernel_held(ol, 0);
			return 0;
		}
		cret = compact_failed(ol, &f);
		if (cret != -ENOTTY || !ol->full_only)
			return cret;
	}
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flags = flags;
	r.nkeys = n;
	r.keys = (uintptr_t)keys;
	if (ioctl(ol->fd, ORDLOCK_IOC_RELEASE, &r) < 0) {
		int err = errno;

		record_failure(ol, &r.failure, err);
		return fail(err);
	}
	if (flags & ORDLOCK_RELEASE_ALL)
		set_kernel_held(ol, 0);
	return 0;
}

/* A release CAS that failed (WAITERS, or not ours): the kernel decides */
static __attribute__((noinline, cold)) int
fast_release_kernel(struct ordlock *ol, uint32_t slot, uint32_t gen)
{
	struct ordlock_fast_release r = {
		.size = sizeof(r), .slot = slot, .gen = gen,
	};

	if (ioctl(ol->fd, ORDLOCK_IOC_FAST_RELEASE, &r) < 0)
		return -errno;
	return 0;
}

/*
 * ordlock_release()'s inline part met a release CAS that failed, at stack
 * entry x_base + x_i: the kernel decides for that word (WAITERS, or the
 * word is no longer this hold's); the entries below it are let go as the
 * inline part would have, then the stack is cut at x_base.
 */
static __attribute__((noinline, cold)) int release_resume(struct ordlock *ol)
{
	struct fast_state *f = &ol->fast;
	struct ordlock_fast_page *pg = f->page;
	unsigned int i = f->x_i, base = f->x_base;
	int ret, r;

	ret = fast_release_kernel(ol, pg->held[base + i].slot, pg->held[base + i].gen);
	while (i-- > 0) {
		r = fast_unlock_word(ol, base + i);
		if (r && !ret)
			ret = r;
	}
	pg->nheld = base;
	if (ret) {
		record_errno(ol, -ret);
		return fail(-ret);
	}
	return 0;
}

/*
 * The release's inline part: @keys are the top n of the held stack, in
 * the order taken (the common case); each word is let go by a CAS, newest
 * first, and the stack is cut after. Anything else: do_release().
 */
int ordlock_release(struct ordlock *ol, const struct ordlock_key *keys,
		    unsigned int n)
{
	const struct ordlock_key *held;
	struct fast_state *f;
	struct ordlock_fast_page *pg;
	unsigned int i, nheld, base;

	if (__builtin_expect(!ol || ol->fast.gate != fast_fork_gen, 0))
		goto generic;
	f = &ol->fast;
	pg = f->page;
	nheld = pg->nheld;
	if (__builtin_expect(n - 1 >= nheld || nheld > ORDLOCK_FAST_STACK, 0))
		goto generic;
	base = nheld - n;
	held = &f->held[base];
	for (i = 0; i < n; i++)
		if (keys[i].id != held[i].id || keys[i].rank != held[i].rank)
			goto generic;
	for (i = n; i-- > 0;) {
		uint32_t slot = pg->held[base + i].slot;
		uint64_t w = f->hword[base + i];

		/* {g, me, 0, inc} to {g, 0, 0, inc} */
		if (__builtin_expect(!__atomic_compare_exchange_n(&f->words[slot], &w,
					w & ~ORDLOCK_FAST_WORD(0, ~0U), 0,
					__ATOMIC_SEQ_CST, __ATOMIC_RELAXED), 0)) {
			f->x_base = base;
			f->x_i = i;
			return release_resume(ol);
		}
	}
	/* after the words: a death in between finds words no longer ours */
	__atomic_store_n(&pg->nheld, base, __ATOMIC_RELAXED);
	return 0;
generic:
	return do_release(ol, keys, n, 0);
}

int ordlock_release_all(struct ordlock *ol)
{
	return do_release(ol, NULL, 0, ORDLOCK_RELEASE_ALL);
}

int ordlock_owner_info(struct ordlock *ol, struct ordlock_owner_info *info)
{
	if (!ol || !info)
		return fail(EINVAL);
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(ol->fd, ORDLOCK_IOC_OWNER_INFO, info) < 0) {
		int err = errno;

		record_errno(ol, err);
		return fail(err);
	}
	return 0;
}

int ordlock_kernel_last_failure(struct ordlock *ol, struct ordlock_failure *f)
{
	struct ordlock_last_failure lf;

	if (!ol)
		return fail(EINVAL);
	memset(&lf, 0, sizeof(lf));
	lf.size = sizeof(lf);
	if (ioctl(ol->fd, ORDLOCK_IOC_LAST_FAILURE, &lf) < 0) {
		int err = errno;

		record_errno(ol, err);
		return fail(err);
	}
	*f = lf.failure;
	return 0;
}

const struct ordlock_failure *ordlock_last_failure(const struct ordlock *ol)
{
	/* no owner (ordlock_open() failed): a record that says so */
	static const struct ordlock_failure no_owner = {
		.reason = ORDLOCK_REASON_INVALID,
		.error = EINVAL,
		.index = ~0U,
	};

	return ol ? &ol->failure : &no_owner;
}

static const char *const reason_names[] = {
	[ORDLOCK_REASON_NONE]		= "none",
	[ORDLOCK_REASON_INVALID]	= "invalid",
	[ORDLOCK_REASON_ORDER]		= "order",
	[ORDLOCK_REASON_TIMEOUT]	= "timeout",
	[ORDLOCK_REASON_BUSY]		= "busy",
	[ORDLOCK_REASON_SIGNAL]		= "signal",
	[ORDLOCK_REASON_DEADLOCK]	= "deadlock",
	[ORDLOCK_REASON_UPGRADE]	= "upgrade",
	[ORDLOCK_REASON_OWNER_LIMIT]	= "owner-limit",
	[ORDLOCK_REASON_RESOURCE_LIMIT]	= "resource-limit",
	[ORDLOCK_REASON_NOT_HELD]	= "not-held",
	[ORDLOCK_REASON_NOMEM]		= "nomem",
	[ORDLOCK_REASON_CANCELLED]	= "cancelled",
	[ORDLOCK_REASON_USER_LIMIT]	= "user-limit",
	[ORDLOCK_REASON_STRICT]		= "strict",
	[ORDLOCK_REASON_REVOKED]	= "revoked",
	[ORDLOCK_REASON_CLUSTER]	= "cluster",
};

const char *ordlock_reason_name(unsigned int reason)
{
	if (reason >= ARRAY_SIZE(reason_names) ||
	    !reason_names[reason])
		return "unknown";
	return reason_names[reason];
}

const char *ordlock_mode_name(unsigned int mode)
{
	switch (mode) {
	case ORDLOCK_MODE_SHARED:
		return "shared";
	case ORDLOCK_MODE_EXCLUSIVE:
		return "exclusive";
	default:
		return "none";
	}
}

/* "exclusive 1:2", or "key 1:2" when the key carries no mode. */
static void fmt_key(char *buf, size_t len, const struct ordlock_key *k)
{
	const char *mode = "key";

	if (k->mode == ORDLOCK_MODE_SHARED || k->mode == ORDLOCK_MODE_EXCLUSIVE)
		mode = ordlock_mode_name(k->mode);
	snprintf(buf, len, "%s %u:%llu", mode, k->rank,
		 (unsigned long long)k->id);
}

/* " held (exclusive) by pid 7", " held by pid 7" or " held by another owner" */
static void fmt_holder(char *buf, size_t len, const struct ordlock_failure *f)
{
	char mode[32] = "";

	if (f->holder_mode == ORDLOCK_MODE_SHARED ||
	    f->holder_mode == ORDLOCK_MODE_EXCLUSIVE)
		snprintf(mode, sizeof(mode), " (%s)",
			 ordlock_mode_name(f->holder_mode));
	if (f->pid)
		snprintf(buf, len, "%s by pid %u", mode, f->pid);
	else
		snprintf(buf, len, "%s by another owner", mode);
}

char *ordlock_strfailure(const struct ordlock_failure *f, char *buf, size_t len)
{
	char key[64], held[64], holder[64];
	const char *err;

	if (!buf || !len)
		return buf;
	if (!f) {
		snprintf(buf, len, "no failure recorded");
		return buf;
	}
	fmt_key(key, sizeof(key), &f->key);
	fmt_key(held, sizeof(held), &f->held);
	fmt_holder(holder, sizeof(holder), f);
	err = f->error ? strerror((int)f->error) : "no error";

	switch (f->reason) {
	case ORDLOCK_REASON_NONE:
		if (f->error)
			snprintf(buf, len, "%s", err);
		else
			snprintf(buf, len, "no failure recorded");
		break;
	case ORDLOCK_REASON_INVALID:
		if (f->index != ~0U)
			snprintf(buf, len,
				 "invalid request: %s (key #%u of the request)",
				 err, f->index);
		else
			snprintf(buf, len, "invalid request: %s", err);
		break;
	case ORDLOCK_REASON_ORDER:
		snprintf(buf, len,
			 "order violation: requested %s sorts at or below held %s",
			 key, held);
		break;
	case ORDLOCK_REASON_STRICT:
		snprintf(buf, len,
			 "strict ranks: requested %s is not of a rank above held %s",
			 key, held);
		break;
	case ORDLOCK_REASON_TIMEOUT:
		if (f->pid && !f->holder_mode)
			snprintf(buf, len,
				 "timed out waiting for %s behind the request of pid %u queued ahead",
				 key, f->pid);
		else
			snprintf(buf, len, "timed out waiting for %s held%s",
				 key, holder);
		break;
	case ORDLOCK_REASON_BUSY:
		if (f->pid && !f->holder_mode)
			snprintf(buf, len,
				 "try-lock: %s is not free: pid %u is queued for it ahead",
				 key, f->pid);
		else
			snprintf(buf, len, "try-lock: %s is held%s", key, holder);
		break;
	case ORDLOCK_REASON_SIGNAL:
		snprintf(buf, len,
			 "interrupted by a signal while waiting for %s", key);
		break;
	case ORDLOCK_REASON_DEADLOCK:
		if (f->pid)
			snprintf(buf, len,
				 "deadlock: waiting for %s would close a cycle of %u waits through pid %u; this request was chosen as the victim",
				 key, f->cycle_len, f->pid);
		else
			snprintf(buf, len,
				 "deadlock: waiting for %s would close a cycle of %u waits; this request was chosen as the victim",
				 key, f->cycle_len);
		break;
	case ORDLOCK_REASON_UPGRADE:
		snprintf(buf, len,
			 "upgrade deadlock: %s is also held shared and being upgraded by pid %u",
			 key, f->pid);
		break;
	case ORDLOCK_REASON_OWNER_LIMIT:
		snprintf(buf, len,
			 "owner limit: taking %s would exceed max_keys_per_owner",
			 key);
		break;
	case ORDLOCK_REASON_RESOURCE_LIMIT:
		snprintf(buf, len,
			 "resource limit: tracking %s would exceed max_resources",
			 key);
		break;
	case ORDLOCK_REASON_USER_LIMIT:
		if (f->index != ~0U)
			snprintf(buf, len,
				 "user limit: %s would exceed max_keys_per_user or max_waiters_per_user of this user",
				 key);
		else
			snprintf(buf, len,
				 "user limit: this user has max_owners_per_user owners or max_domains_per_user domains already");
		break;
	case ORDLOCK_REASON_NOT_HELD:
		snprintf(buf, len, "key %u:%llu is not held", f->key.rank,
			 (unsigned long long)f->key.id);
		break;
	case ORDLOCK_REASON_NOMEM:
		snprintf(buf, len, "out of kernel memory; nothing was taken");
		break;
	case ORDLOCK_REASON_CANCELLED:
		snprintf(buf, len,
			 "cancelled (netlink CANCEL, or the socket closed): nothing of the request is held");
		break;
	case ORDLOCK_REASON_REVOKED:
		if (f->cycle_len > 1)
			snprintf(buf, len,
				 "lease expired: the kernel revoked %u keys, %s to %s; release all to acknowledge",
				 f->cycle_len, key, held);
		else
			snprintf(buf, len,
				 "lease expired: the kernel revoked %s; release all to acknowledge",
				 key);
		break;
	case ORDLOCK_REASON_CLUSTER:
		if (f->index != ~0U)
			snprintf(buf, len,
				 "cluster: the DLM failed the lock of %s (%s); what the request took was released",
				 key, err);
		else
			snprintf(buf, len, "cluster: %s", err);
		break;
	default:
		snprintf(buf, len, "unknown failure reason %u: %s",
			 f->reason, err);
		break;
	}
	return buf;
}

/*
 * After a CONVERT of a key this handle holds by the fast path: the kernel
 * took it over (its word names the kernel's holders now), so it leaves the
 * stack, and the handle's next requests go to the kernel
 */
static void fast_adopted(struct ordlock *ol, const struct ordlock_key *key)
{
	struct fast_state *f = &ol->fast;
	struct ordlock_fast_page *pg = f->page;
	unsigned int i, n = pg->nheld;

	for (i = 0; i < n; i++)
		if (!key_cmp(&f->held[i], key))
			break;
	if (i == n || ORDLOCK_FAST_OWNER(f->words[pg->held[i].slot]) == f->index)
		return;
	for (; i + 1 < n; i++) {
		pg->held[i] = pg->held[i + 1];
		f->held[i] = f->held[i + 1];
		f->hword[i] = f->hword[i + 1];
	}
	__atomic_store_n(&pg->nheld, n - 1, __ATOMIC_RELAXED);
	set_kernel_held(ol, 1);
}

int ordlock_convert(struct ordlock *ol, struct ordlock_key key,
		    unsigned int timeout_ms, unsigned int flags, uint64_t *token)
{
	struct ordlock_convert c;
	int fast, ret = 0;

	if (!ol)
		return fail(EINVAL);
	/* a key held by the fast path: the kernel takes it over (adopts it) */
	fast = fast_holding(ol);
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = flags;
	c.key = key;
	c.timeout_ns = (uint64_t)timeout_ms * NS_PER_MS;
	if (ioctl(ol->fd, ORDLOCK_IOC_CONVERT, &c) < 0) {
		int err = errno;

		record_failure(ol, &c.failure, err);
		ret = fail(err);
	} else if (token) {
		*token = c.token;
	}
	if (fast)
		fast_adopted(ol, &key);
	return ret;
}

int ordlock_domain_config(struct ordlock *ol, const char *domain,
			  struct ordlock_domain_config *cfg)
{
	size_t len = domain ? strlen(domain) : 0;

	if (!ol || !cfg)
		return fail(EINVAL);
	if (!len || len >= sizeof(cfg->name))
		return fail(EINVAL);
	/*
	 * A caller that set @size to a smaller (older) structure gets that
	 * much written (the Python binding's ctypes copy, a program built
	 * before the fast path's fields); 0 is this header's size
	 */
	if (!cfg->size || cfg->size > sizeof(*cfg))
		cfg->size = sizeof(*cfg);
	memset(cfg->name, 0, sizeof(cfg->name));
	memcpy(cfg->name, domain, len);
	if (ioctl(ol->fd, ORDLOCK_IOC_DOMAIN_CONFIG, cfg) < 0) {
		int err = errno;

		record_errno(ol, err);
		return fail(err);
	}
	return 0;
}

int ordlock_set_policy(struct ordlock *ol, const char *domain,
		       unsigned int policy, unsigned int detect_delay_ms)
{
	struct ordlock_domain_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = ORDLOCK_DOMAIN_SET_POLICY | ORDLOCK_DOMAIN_SET_DETECT_DELAY;
	cfg.policy = policy;
	cfg.detect_delay_ms = detect_delay_ms;
	return ordlock_domain_config(ol, domain, &cfg);
}

int ordlock_set_strict(struct ordlock *ol, const char *domain, int strict)
{
	struct ordlock_domain_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = ORDLOCK_DOMAIN_SET_STRICT;
	cfg.strict = strict ? 1 : 0;
	return ordlock_domain_config(ol, domain, &cfg);
}

int ordlock_last_cycle(struct ordlock *ol, struct ordlock_cycle_step *steps,
		       unsigned int max)
{
	return ordlock_last_cycle_nodes(ol, steps, NULL, max);
}

int ordlock_last_cycle_nodes(struct ordlock *ol, struct ordlock_cycle_step *steps,
			     uint32_t *nodes, unsigned int max)
{
	struct ordlock_last_failure lf;

	if (!ol || (nodes && !steps))
		return fail(EINVAL);
	memset(&lf, 0, sizeof(lf));
	lf.size = sizeof(lf);
	lf.nsteps = steps ? max : 0;
	lf.steps = (uintptr_t)steps;
	lf.nodes = (uintptr_t)nodes;
	/* a kernel before the nodes leaves them: this node's */
	if (nodes)
		memset(nodes, 0, max * sizeof(*nodes));
	if (ioctl(ol->fd, ORDLOCK_IOC_LAST_FAILURE, &lf) < 0) {
		int err = errno;

		record_errno(ol, err);
		return fail(err);
	}
	return (int)lf.nsteps;
}

int ordlock_set_label(struct ordlock *ol, const char *label)
{
	struct ordlock_set_label sl;
	size_t len = label ? strlen(label) : 0;

	if (!ol)
		return fail(EINVAL);
	if (len >= sizeof(sl.label))
		return fail(EINVAL);
	memset(&sl, 0, sizeof(sl));
	sl.size = sizeof(sl);
	if (len)
		memcpy(sl.label, label, len);
	if (ioctl(ol->fd, ORDLOCK_IOC_SET_LABEL, &sl) < 0) {
		int err = errno;

		record_errno(ol, err);
		return fail(err);
	}
	return 0;
}

int ordlock_get_order(struct ordlock *ol, const char *domain,
		      struct ordlock_order_edge *edges, unsigned int max,
		      uint32_t *words, unsigned int maxwords,
		      struct ordlock_order_get *info)
{
	struct ordlock_order_get g;
	size_t len = domain ? strlen(domain) : 0;

	if (!ol || !len || len >= sizeof(g.domain))
		return fail(EINVAL);
	memset(&g, 0, sizeof(g));
	g.size = sizeof(g);
	memcpy(g.domain, domain, len);
	g.edge_size = sizeof(*edges);
	g.nedges = edges ? max : 0;
	g.edges = (uintptr_t)edges;
	g.npotential_words = words ? maxwords : 0;
	g.potentials = (uintptr_t)words;
	if (ioctl(ol->fd, ORDLOCK_IOC_GET_ORDER, &g) < 0) {
		int err = errno;

		record_errno(ol, err);
		return fail(err);
	}
	if (info)
		*info = g;
	return 0;
}

int ordlock_reset_order(struct ordlock *ol, const char *domain)
{
	struct ordlock_domain_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = ORDLOCK_DOMAIN_RESET_ORDER;
	return ordlock_domain_config(ol, domain, &cfg);
}

const char *ordlock_policy_name(unsigned int policy)
{
	switch (policy) {
	case ORDLOCK_POLICY_ENFORCE:
		return "enforce";
	case ORDLOCK_POLICY_DETECT:
		return "detect";
	case ORDLOCK_POLICY_TIMEOUT:
		return "timeout";
	}
	return "unknown";
}

char *ordlock_strcycle(const struct ordlock_cycle_step *steps, unsigned int n,
		       char *buf, size_t len)
{
	return ordlock_strcycle_nodes(steps, NULL, n, buf, len);
}

/* "node N " for a step of another node (its id in @nodes), else "" */
static const char *step_node(const struct ordlock_cycle_step *s,
			     const uint32_t *node, char *buf, size_t len)
{
	buf[0] = '\0';
	if ((s->flags & ORDLOCK_STEP_OTHER_NODE) && node && *node)
		snprintf(buf, len, "node %u ", *node);
	else if (s->flags & ORDLOCK_STEP_OTHER_NODE)
		snprintf(buf, len, "another node ");
	return buf;
}

char *ordlock_strcycle_nodes(const struct ordlock_cycle_step *steps,
			     const uint32_t *nodes, unsigned int n, char *buf,
			     size_t len)
{
	size_t at = 0;
	unsigned int i;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < n && at < len; i++) {
		const struct ordlock_cycle_step *s = &steps[i];
		const struct ordlock_cycle_step *t = &steps[(i + 1) % n];
		char sn[24], tn[24];
		int w = snprintf(buf + at, len - at,
				 "%s%spid %u (%s) waits for %s %u:%llu %s by %spid %u (%s)",
				 i ? "; " : "",
				 step_node(s, nodes ? &nodes[i] : NULL, sn, sizeof(sn)),
				 s->pid, s->comm,
				 ordlock_mode_name(s->key.mode), s->key.rank,
				 (unsigned long long)s->key.id,
				 s->edge == ORDLOCK_EDGE_SOFT ? "queued ahead" : "held",
				 step_node(t, nodes ? &nodes[(i + 1) % n] : NULL, tn,
					   sizeof(tn)),
				 t->pid, t->comm);

		if (w < 0)
			break;
		at += (size_t)w;
	}
	return buf;
}

/* --- retries ------------------------------------------------------------- */

int ordlock_retryable(int err, const struct ordlock_failure *f)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ETIMEDOUT:
	case EAGAIN:
	case EKEYEXPIRED:
		return 1;
	case EDEADLK:
		/*
		 * a victim, never an order violation: that fails every time;
		 * nor a cycle of one step, the victim's own: the keys it
		 * waits for are held by its own thread through other owners,
		 * and that wait never ends (issue 42)
		 */
		if (f && f->reason == ORDLOCK_REASON_DEADLOCK)
			return f->cycle_len != 1;
		return f && f->reason == ORDLOCK_REASON_UPGRADE;
	default:
		return 0;
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* xorshift64*, seeded once per handle from getrandom() (else the clock) */
static uint64_t next_random(struct ordlock *ol)
{
	uint64_t x = ol->rng;

	if (!x) {
		if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != sizeof(x))
			x = now_ms() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)ol;
		x |= 1;
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ol->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Sleep @ms milliseconds, whole (signals that interrupt it resume it) */
static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * The backoff before attempt @attempt + 1 (@attempt >= 1): full jitter, a
 * uniform draw from [0, min(cap, base * 2^(attempt - 1))].
 */
static unsigned int backoff_ms(struct ordlock *ol, const struct ordlock_retry *r,
			       unsigned int attempt)
{
	uint64_t base = r->base_ms ? r->base_ms : ORDLOCK_RETRY_BASE_MS;
	uint64_t cap = r->max_backoff_ms ? r->max_backoff_ms : ORDLOCK_RETRY_CAP_MS;
	uint64_t ceil = base;

	while (--attempt && ceil < cap)
		ceil *= 2;
	if (ceil > cap)
		ceil = cap;
	if (r->flags & ORDLOCK_RETRY_NO_JITTER)
		return (unsigned int)ceil;
	return (unsigned int)(next_random(ol) % (ceil + 1));
}

/* No failure: the record of a call that succeeded */
static void clear_failure(struct ordlock *ol)
{
	memset(failure_rec(ol), 0, sizeof(ol->failure));
	ol->failure.index = ~0U;
}

/*
 * After an attempt whose keys the kernel revoked (the release said
 * EKEYEXPIRED): acknowledge with RELEASE_ALL when everything revoked was
 * taken by this call (the owner held nothing when it began), so that the
 * next attempt, or the caller's next call, starts from an ordinary owner.
 * @rec is the revocation's record, kept for the caller. Returns whether
 * the owner is usable again.
 */
static int retry_acknowledge(struct ordlock *ol, int held_before,
			     const struct ordlock_failure *rec)
{
	int ret = held_before ? -EKEYEXPIRED : ordlock_release_all(ol);

	*failure_rec(ol) = *rec;
	return !ret;
}

int ordlock_retry(struct ordlock *ol, const struct ordlock_key *keys,
		  unsigned int n, struct ordlock_retry *r,
		  ordlock_retry_fn fn, void *arg)
{
	static const struct ordlock_retry defaults;
	unsigned int max = ORDLOCK_RETRY_ATTEMPTS, timeout, wait, attempt;
	uint64_t deadline = 0, token = 0, t;
	struct ordlock_failure saved, revoked;
	struct ordlock_owner_info info;
	int ret, rel, usable;

	if (!ol || !keys || !n || !fn)
		return fail(EINVAL);
	if (!r)
		r = (struct ordlock_retry *)&defaults;
	else
		r->attempts = 0;
	if (r->flags & ~ORDLOCK_RETRY_FLAGS ||
	    r->acquire_flags & ~(ORDLOCK_ACQUIRE_TRY | ORDLOCK_ACQUIRE_REORDER))
		return fail(EINVAL);
	/* what the owner holds of its own: a revocation takes that too */
	ret = ordlock_owner_info(ol, &info);
	if (ret)
		return ret;
	clear_failure(ol);
	if (r->max_attempts)
		max = r->max_attempts;
	if (r->max_total_ms)
		deadline = now_ms() + r->max_total_ms;
	for (attempt = 1;; attempt++) {
		if (r != &defaults)
			r->attempts = attempt;
		timeout = r->timeout_ms;
		if (deadline) {
			t = now_ms();
			/* every attempt waits at most until the deadline */
			if (t >= deadline)
				t = deadline - 1;
			if (!timeout || timeout > deadline - t)
				timeout = (unsigned int)(deadline - t);
		}
		ret = ordlock_acquire(ol, keys, n, timeout, r->acquire_flags, &token);
		/*
		 * Revoked before this call, or the keys the caller held were:
		 * not this call's to acknowledge, and no attempt can succeed
		 */
		if (ret == -EKEYEXPIRED)
			return ret;
		if (!ret) {
			ret = fn(ol, token, arg);
			/* keep the callback's failure record over the release's */
			saved = ol->failure;
			rel = ordlock_release(ol, keys, n);
			if (rel == -EKEYEXPIRED) {
				/* the lease expired before the release */
				revoked = ol->failure;
				usable = retry_acknowledge(ol, info.nheld != 0, &revoked);
				/* the work is done: its value, the record says revoked */
				if (ret >= 0)
					return ret;
				if (!usable && ordlock_retryable(ret, &saved))
					return fail(EKEYEXPIRED);
				rel = 0;
			}
			*failure_rec(ol) = saved;
			if (!ret && rel)
				return rel;
			if (ret > 0) {
				clear_failure(ol);
				return ret;
			}
			if (!ret) {
				clear_failure(ol);
				return 0;
			}
		}
		if (!ordlock_retryable(ret, &ol->failure) || attempt >= max)
			return fail(-ret);
		wait = backoff_ms(ol, r, attempt);
		if (deadline) {
			t = now_ms();
			if (t + wait >= deadline)
				return fail(-ret);
		}
		sleep_ms(wait);
	}
}

int ordlock_renew(struct ordlock *ol, unsigned int lease_ms, uint64_t *left_ms)
{
	struct ordlock_renew r;

	if (!ol)
		return fail(EINVAL);
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.lease_ms = lease_ms;
	if (ioctl(ol->fd, ORDLOCK_IOC_RENEW, &r) < 0) {
		int err = errno;

		record_failure(ol, &r.failure, err);
		return fail(err);
	}
	if (left_ms)
		*left_ms = r.left_ms;
	return 0;
}

int ordlock_set_revoke_signal(struct ordlock *ol, int sig)
{
	struct ordlock_renew r;

	if (!ol || sig < 0)
		return fail(EINVAL);
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.flags = ORDLOCK_RENEW_SET_SIGNAL;
	r.signal = (unsigned int)sig;
	if (ioctl(ol->fd, ORDLOCK_IOC_RENEW, &r) < 0) {
		int err = errno;

		record_failure(ol, &r.failure, err);
		return fail(err);
	}
	return 0;
}

int ordlock_revoked_keys(struct ordlock *ol, struct ordlock_revoked_key *keys,
			 unsigned int max)
{
	struct ordlock_last_failure lf;

	if (!ol || (max && !keys))
		return fail(EINVAL);
	memset(&lf, 0, sizeof(lf));
	lf.size = sizeof(lf);
	lf.nrevoked = max;
	lf.revoked = (uintptr_t)keys;
	if (ioctl(ol->fd, ORDLOCK_IOC_LAST_FAILURE, &lf) < 0) {
		int err = errno;

		record_errno(ol, err);
		return fail(err);
	}
	return (int)lf.nrevoked;
}

int ordlock_token_check(struct ordlock *ol, const char *domain,
			uint32_t rank, uint64_t id, uint64_t token)
{
	struct ordlock_token_check tc;
	size_t len = domain ? strlen(domain) : 0;

	if (!ol || len >= sizeof(tc.domain))
		return fail(EINVAL);
	memset(&tc, 0, sizeof(tc));
	tc.size = sizeof(tc);
	tc.key.rank = rank;
	tc.key.id = id;
	tc.token = token;
	memcpy(tc.domain, domain ? domain : "", len);
	if (ioctl(ol->fd, ORDLOCK_IOC_TOKEN_CHECK, &tc) < 0)
		return fail(errno);
	return 0;
}

int ordlock_set_max_hold(struct ordlock *ol, const char *domain,
			 unsigned int max_hold_ms)
{
	struct ordlock_domain_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = ORDLOCK_DOMAIN_SET_MAX_HOLD;
	cfg.max_hold_ms = max_hold_ms;
	return ordlock_domain_config(ol, domain, &cfg);
}

/* --- lease keep-alive ------------------------------------------------------ */

/* the shortest wait between two renewals that found the owner busy */
#define KEEPALIVE_BUSY_MS	20

struct ordlock_keepalive {
	int fd;			/* the owner's descriptor (the handle's) */
	unsigned int lease_ms;
	unsigned int interval_ms;
	ordlock_keepalive_fn fn;
	void *arg;
	int stopfd;		/* eventfd: ordlock_keepalive_stop() */
	int lostfd;		/* eventfd: readable once the hold is lost */
	pthread_t thr;
	int err;		/* 0, or -errno once lost (__atomic) */
	unsigned long renewals;	/* (__atomic) */
	struct ordlock_failure failure;	/* written before err */
};

/* One RENEW on the owner's descriptor: 0 (and the time left) or -errno */
static int keepalive_renew(struct ordlock_keepalive *ka, uint64_t *left_ms,
			   struct ordlock_failure *f)
{
	struct ordlock_renew r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.lease_ms = ka->lease_ms;
	if (ioctl(ka->fd, ORDLOCK_IOC_RENEW, &r) < 0) {
		int err = errno;

		*f = r.failure;
		if (f->reason == ORDLOCK_REASON_NONE) {
			memset(f, 0, sizeof(*f));
			f->reason = reason_of_errno(err);
			f->error = (unsigned int)err;
			f->index = ~0U;
		}
		return -err;
	}
	if (left_ms)
		*left_ms = r.left_ms;
	return 0;
}

/* Make eventfd @fd readable (one write cannot overflow its counter) */
static void keepalive_signal(int fd)
{
	uint64_t one = 1;
	ssize_t n;

	do
		n = write(fd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
}

/* The hold is lost: record it, make lostfd readable, call the callback */
static void keepalive_lost(struct ordlock_keepalive *ka, int err,
			   const struct ordlock_failure *f)
{

	ka->failure = *f;
	__atomic_store_n(&ka->err, err, __ATOMIC_RELEASE);
	keepalive_signal(ka->lostfd);
	if (ka->fn)
		ka->fn(ka, err, &ka->failure, ka->arg);
}

static void *keepalive_thread(void *arg)
{
	struct ordlock_keepalive *ka = arg;
	unsigned int wait = ka->interval_ms;
	struct ordlock_failure f;
	struct pollfd pfd[2];
	int ret;

	for (;;) {
		pfd[0].fd = ka->fd;
		pfd[0].events = POLLPRI;
		pfd[1].fd = ka->stopfd;
		pfd[1].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		ret = poll(pfd, 2, (int)wait);
		if (ret < 0 && errno == EINTR)
			continue;
		if (pfd[1].revents)
			break;
		ret = keepalive_renew(ka, NULL, &f);
		if (!ret) {
			__atomic_add_fetch(&ka->renewals, 1, __ATOMIC_RELAXED);
			wait = ka->interval_ms;
			continue;
		}
		if (pfd[0].revents & POLLPRI) {
			/* revoked, whatever the renewal said (EBUSY: a request waits) */
			if (ret != -EKEYEXPIRED) {
				memset(&f, 0, sizeof(f));
				f.reason = ORDLOCK_REASON_REVOKED;
				f.error = EKEYEXPIRED;
				f.index = ~0U;
			}
			keepalive_lost(ka, -EKEYEXPIRED, &f);
			break;
		}
		if (ret == -EBUSY || ret == -EINTR) {
			/* a request of the owner waits: try again soon */
			wait = ka->interval_ms < KEEPALIVE_BUSY_MS ?
			       ka->interval_ms : KEEPALIVE_BUSY_MS;
			continue;
		}
		keepalive_lost(ka, ret, &f);
		break;
	}
	return NULL;
}

static void keepalive_free(struct ordlock_keepalive *ka)
{
	if (ka->stopfd >= 0)
		close(ka->stopfd);
	if (ka->lostfd >= 0)
		close(ka->lostfd);
	free(ka);
}

struct ordlock_keepalive *ordlock_keepalive_start(struct ordlock *ol,
						  unsigned int lease_ms,
						  unsigned int interval_ms,
						  ordlock_keepalive_fn fn,
						  void *arg)
{
	struct ordlock_keepalive *ka;
	sigset_t all, old;
	uint64_t left = 0;
	int ret;

	if (!ol) {
		fail(EINVAL);
		return NULL;
	}
	ka = calloc(1, sizeof(*ka));
	if (!ka) {
		fail(ENOMEM);
		return NULL;
	}
	ka->fd = ol->fd;
	ka->lease_ms = lease_ms;
	ka->fn = fn;
	ka->arg = arg;
	ka->stopfd = eventfd(0, EFD_CLOEXEC);
	ka->lostfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ka->stopfd < 0 || ka->lostfd < 0) {
		ret = -errno;
		goto fail;
	}
	/* the first renewal: the caller learns at once that it is too late */
	ret = keepalive_renew(ka, &left, failure_rec(ol));
	if (ret)
		goto fail;
	if (!left) {
		/* no lease (none asked for, no max_hold_ms): nothing to keep */
		record_errno(ol, EINVAL);
		ret = -EINVAL;
		goto fail;
	}
	ka->interval_ms = interval_ms ? interval_ms : (unsigned int)(left / 3);
	if (!ka->interval_ms)
		ka->interval_ms = 1;
	/* the thread takes no signal of the process's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&ka->thr, NULL, keepalive_thread, ka);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto fail;
	return ka;
fail:
	keepalive_free(ka);
	fail(-ret);
	return NULL;
}

int ordlock_keepalive_error(const struct ordlock_keepalive *ka)
{
	return ka ? __atomic_load_n(&ka->err, __ATOMIC_ACQUIRE) : -EINVAL;
}

const struct ordlock_failure *
ordlock_keepalive_failure(const struct ordlock_keepalive *ka)
{
	static const struct ordlock_failure none;

	if (!ka || !__atomic_load_n(&ka->err, __ATOMIC_ACQUIRE))
		return &none;
	return &ka->failure;
}

int ordlock_keepalive_fd(const struct ordlock_keepalive *ka)
{
	return ka ? ka->lostfd : fail(EINVAL);
}

unsigned long ordlock_keepalive_renewals(const struct ordlock_keepalive *ka)
{
	return ka ? __atomic_load_n(&ka->renewals, __ATOMIC_RELAXED) : 0;
}

int ordlock_keepalive_stop(struct ordlock_keepalive *ka)
{
	int err;

	if (!ka)
		return fail(EINVAL);
	keepalive_signal(ka->stopfd);
	pthread_join(ka->thr, NULL);
	err = ka->err;
	keepalive_free(ka);
	return err ? fail(-err) : 0;
}

/* --- is it held? ----------------------------------------------------------- */

/* a dump message fits in this (the kernel sends at most 32 KiB at a time) */
#define QUERY_BUF	65536

/* Attribute @type of the @len bytes of attributes at @a, or NULL */
static const struct nlattr *nl_find(const void *a, size_t len, uint16_t type)
{
	const struct nlattr *at = a;

	while (len >= NLA_HDRLEN && at->nla_len >= NLA_HDRLEN &&
	       at->nla_len <= len) {
		size_t step = NLA_ALIGN((size_t)at->nla_len);

		if ((at->nla_type & NLA_TYPE_MASK) == type)
			return at;
		if (step >= len)
			break;
		len -= step;
		at = (const void *)((const char *)at + step);
	}
	return NULL;
}

#define NL_DATA(a)	((const char *)(a) + NLA_HDRLEN)
#define NL_LEN(a)	((size_t)(a)->nla_len - NLA_HDRLEN)

static uint64_t nl_uint(const void *attrs, size_t len, uint16_t type)
{
	const struct nlattr *a = nl_find(attrs, len, type);
	uint64_t v = 0;
	uint32_t v32;
	uint16_t v16;

	if (a && NL_LEN(a) == sizeof(v)) {
		memcpy(&v, NL_DATA(a), sizeof(v));
	} else if (a && NL_LEN(a) == sizeof(v32)) {
		memcpy(&v32, NL_DATA(a), sizeof(v32));
		v = v32;
	} else if (a && NL_LEN(a) == sizeof(v16)) {	/* a family id */
		memcpy(&v16, NL_DATA(a), sizeof(v16));
		v = v16;
	}
	return v;
}

/* Send one request of @len bytes at @buf (header included) */
static int nl_send(int fd, char *buf, size_t len, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	nlh->nlmsg_len = (uint32_t)len;
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = 1;
	if (sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

/* The id of the generic netlink family "ordlock", or -errno */
static int nl_family(int fd, char *buf)
{
	struct genlmsghdr *g = (struct genlmsghdr *)(buf + NLMSG_HDRLEN);
	struct nlattr *a = (struct nlattr *)(buf + NLMSG_HDRLEN + GENL_HDRLEN);
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
	size_t len = NLMSG_HDRLEN + GENL_HDRLEN;
	ssize_t n;
	int ret;

	memset(buf, 0, 64);
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof(ORDLOCK_GENL_NAME);
	memcpy((char *)a + NLA_HDRLEN, ORDLOCK_GENL_NAME, sizeof(ORDLOCK_GENL_NAME));
	len += NLA_ALIGN(a->nla_len);
	ret = nl_send(fd, buf, len, GENL_ID_CTRL, 0);
	if (ret)
		return ret;
	n = recv(fd, buf, QUERY_BUF, 0);
	if (n < 0)
		return -errno;
	if ((size_t)n < NLMSG_HDRLEN || !NLMSG_OK(nlh, (size_t)n))
		return -EPROTO;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nlh);

		return e->error ? e->error : -EPROTO;
	}
	if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return -EPROTO;
	ret = (int)nl_uint(buf + NLMSG_HDRLEN + GENL_HDRLEN,
			   nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN,
			   CTRL_ATTR_FAMILY_ID);
	return ret ? ret : -EPROTO;
}

/* One GET_LOCKS entry: count it into @st when it is the key asked for */
static void query_entry(const struct nlattr *entry, const char *domain,
			uint32_t rank, uint64_t id, struct ordlock_key_state *st)
{
	const char *e = NL_DATA(entry);
	size_t len = NL_LEN(entry);
	const struct nlattr *d = nl_find(e, len, ORDLOCK_E_DOMAIN);
	const struct nlattr *k = nl_find(e, len, ORDLOCK_E_KEY);
	uint32_t role, pid;

	if (!d || !k || strnlen(NL_DATA(d), NL_LEN(d)) != strlen(domain) ||
	    strncmp(NL_DATA(d), domain, NL_LEN(d)) ||
	    nl_uint(NL_DATA(k), NL_LEN(k), ORDLOCK_K_RANK) != rank ||
	    nl_uint(NL_DATA(k), NL_LEN(k), ORDLOCK_K_ID) != id)
		return;
	role = (uint32_t)nl_uint(e, len, ORDLOCK_E_ROLE);
	pid = (uint32_t)nl_uint(e, len, ORDLOCK_E_PID);
	if (role != ORDLOCK_ROLE_HOLDER) {
		if (!st->nwaiters++)
			st->waiter_pid = pid;
		return;
	}
	if (!st->nholders++)
		st->token = nl_uint(e, len, ORDLOCK_E_TOKEN);
	if (st->npids < ORDLOCK_STATE_PIDS)
		st->pids[st->npids++] = pid;
	if (nl_uint(e, len, ORDLOCK_E_MODE) == ORDLOCK_MODE_EXCLUSIVE ||
	    !st->mode)
		st->mode = (unsigned int)nl_uint(e, len, ORDLOCK_E_MODE);
}

/* Read the dump's messages until NLMSG_DONE: 0 or -errno */
static int query_dump(int fd, char *buf, const char *domain, uint32_t rank,
		      uint64_t id, struct ordlock_key_state *st)
{
	for (;;) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		ssize_t n = recv(fd, buf, QUERY_BUF, 0);
		size_t left;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (left = (size_t)n; NLMSG_OK(nlh, left); nlh = NLMSG_NEXT(nlh, left)) {
			const char *attrs = (const char *)NLMSG_DATA(nlh) + GENL_HDRLEN;
			const struct nlattr *entry;

			if (nlh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nlh);

				return e->error ? e->error : -EPROTO;
			}
			if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
				continue;
			entry = nl_find(attrs, nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN,
					ORDLOCK_A_ENTRY);
			if (entry)
				query_entry(entry, domain, rank, id, st);
		}
	}
}

int ordlock_query(const char *domain, uint32_t rank, uint64_t id,
		  struct ordlock_key_state *st)
{
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	struct genlmsghdr *g;
	char *buf;
	int fd, family, ret;

	if (!st || (domain && strlen(domain) >= ORDLOCK_DOMAIN_NAME_MAX))
		return fail(EINVAL);
	memset(st, 0, sizeof(*st));
	buf = malloc(QUERY_BUF);
	if (!buf)
		return fail(ENOMEM);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
		ret = -errno;
		goto out;
	}
	family = nl_family(fd, buf);
	if (family < 0) {
		ret = family;
		goto out;
	}
	memset(buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	g = (struct genlmsghdr *)(buf + NLMSG_HDRLEN);
	g->cmd = ORDLOCK_CMD_GET_LOCKS;
	g->version = ORDLOCK_GENL_VERSION;
	ret = nl_send(fd, buf, NLMSG_HDRLEN + GENL_HDRLEN, (uint16_t)family,
		      NLM_F_DUMP);
	if (!ret)
		ret = query_dump(fd, buf, domain ? domain : ORDLOCK_DEFAULT_DOMAIN,
				 rank, id, st);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret ? fail(-ret) : 0;
}
