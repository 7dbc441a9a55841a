// SPDX-License-Identifier: GPL-2.0
/*
 * t_fuzz: hostile input for ORDLOCK_FUZZ_SECONDS (default 12; "make
 * fuzz-vm" runs it long).  With ORDLOCK_FUZZ_CALLS=N it runs until N calls
 * (ioctls and netlink requests together) were made, the seconds being then
 * only the limit: a run that misses its target fails.  The totals and, every
 * ORDLOCK_FUZZ_PROGRESS seconds (default 60), the progress are TAP
 * diagnostics.  Two threads call every ioctl with random and
 * mutated arguments: @size from 0 to a page and beyond, structures that end
 * at an unmapped page, key arrays in unmapped memory or in memory a third
 * thread maps and unmaps all the time, huge counts, reserved bits, unknown
 * flags, huge timeouts, keys at the extremes; sometimes both threads use one
 * descriptor, and descriptors are closed and reopened.  Random generic
 * netlink messages (commands, flags, attributes of random types, lengths and
 * nesting) go to the family.  Every call must succeed or fail with an errno
 * the UAPI header documents for it; the harness fails the run on any kernel
 * report.  tests/fuzz/ordlock.syz.txt describes the interface fuzzed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <netlink/genl/genl.h>

#include "barrier.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"
#include "uapi_errnos.h"

#define PAGE		4096UL
#define NTHREAD		2
#define MAXBAD		20

static volatile int stop;
static unsigned long ncalls[32], nok, nnl, nnl_ok;
static unsigned int nbad;
static pthread_mutex_t bad_lock = PTHREAD_MUTEX_INITIALIZER;
static char *region;			/* mapped and unmapped by the racer */
static int shared_fd = -1;

struct ioc {
	const char *name;
	unsigned long nr;
	size_t size;			/* the kernel's structure */
	int errs[16];			/* documented errnos, 0-terminated */
};

/*
 * Per ioctl, the errnos DOC: Errors of include/uapi/linux/ordlock.h gives
 * it; documented() also checks that the header's table has each
 */
static const struct ioc iocs[] = {
	{ "ACQUIRE", ORDLOCK_IOC_ACQUIRE, sizeof(struct ordlock_acquire),
	  { EINVAL, E2BIG, EFAULT, EDEADLK, ETIMEDOUT, EAGAIN, EINTR, ENOSPC,
	    EDQUOT, EBUSY, ENOMEM, EKEYEXPIRED } },
	{ "RELEASE", ORDLOCK_IOC_RELEASE, sizeof(struct ordlock_release),
	  { EINVAL, E2BIG, EFAULT, ENOENT, EBUSY, ENOMEM, EKEYEXPIRED } },
	{ "SET_DOMAIN", ORDLOCK_IOC_SET_DOMAIN, sizeof(struct ordlock_set_domain),
	  { EINVAL, E2BIG, EFAULT, EBUSY, ENOSPC, EDQUOT, ENOMEM, EKEYEXPIRED } },
	{ "OWNER_INFO", ORDLOCK_IOC_OWNER_INFO, sizeof(struct ordlock_owner_info),
	  { EINVAL, E2BIG, EFAULT } },
	{ "LAST_FAILURE", ORDLOCK_IOC_LAST_FAILURE, sizeof(struct ordlock_last_failure),
	  { EINVAL, E2BIG, EFAULT } },
	{ "CONVERT", ORDLOCK_IOC_CONVERT, sizeof(struct ordlock_convert),
	  { EINVAL, E2BIG, EFAULT, ENOENT, EDEADLK, ETIMEDOUT, EAGAIN, EINTR,
	    EDQUOT, EBUSY, ENOMEM, EKEYEXPIRED } },
	{ "DOMAIN_CONFIG", ORDLOCK_IOC_DOMAIN_CONFIG, sizeof(struct ordlock_domain_config),
	  { EINVAL, E2BIG, EFAULT, EPERM, ENOSPC, EDQUOT, ENOMEM } },
	{ "RENEW", ORDLOCK_IOC_RENEW, sizeof(struct ordlock_renew),
	  { EINVAL, E2BIG, EFAULT, ENOENT, EBUSY, EKEYEXPIRED } },
	{ "TOKEN_CHECK", ORDLOCK_IOC_TOKEN_CHECK, sizeof(struct ordlock_token_check),
	  { EINVAL, E2BIG, EFAULT, ESTALE } },
	{ "SET_LABEL", ORDLOCK_IOC_SET_LABEL, sizeof(struct ordlock_set_label),
	  { EINVAL, E2BIG, EFAULT } },
	{ "GET_ORDER", ORDLOCK_IOC_GET_ORDER, sizeof(struct ordlock_order_get),
	  { EINVAL, E2BIG, EFAULT, ENOENT, ENOMEM } },
	{ "LOCK", ORDLOCK_IOC_LOCK, sizeof(struct ordlock_lock),
	  { EINVAL, E2BIG, EFAULT, EDEADLK, ETIMEDOUT, EAGAIN, EINTR, ENOSPC,
	    EDQUOT, EBUSY, ENOMEM, EKEYEXPIRED } },
	{ "UNLOCK", ORDLOCK_IOC_UNLOCK, sizeof(struct ordlock_unlock),
	  { EINVAL, E2BIG, EFAULT, ENOENT, EBUSY, ENOMEM, EKEYEXPIRED } },
	/* no structure: its argument must be 0; returns how many it released */
	{ "UNLOCK_ALL", ORDLOCK_IOC_UNLOCK_ALL, 0, { EINVAL, EBUSY } },
	{ "FAST_PIN", ORDLOCK_IOC_FAST_PIN, sizeof(struct ordlock_fast_pin),
	  { EINVAL, E2BIG, EFAULT, EOPNOTSUPP, EACCES, ENOSPC, ENOMEM, EXDEV } },
	{ "FAST_RELEASE", ORDLOCK_IOC_FAST_RELEASE, sizeof(struct ordlock_fast_release),
	  { EINVAL, E2BIG, EFAULT, EOPNOTSUPP, ENOENT, EIO } },
	{ "FAST_LEARN", ORDLOCK_IOC_FAST_LEARN, sizeof(struct ordlock_fast_learn),
	  { EINVAL, E2BIG, EFAULT, EOPNOTSUPP, ENOENT, EKEYEXPIRED, EINTR } },
	{ "unknown", 0, 64, { ENOTTY } },
};
#define NIOC (sizeof(iocs) / sizeof(iocs[0]))
_Static_assert(NIOC <= sizeof(ncalls) / sizeof(ncalls[0]), "ncalls[] holds a count per ioctl");

/* The compact ioctls take no size first (DOC: Compact ioctls) */
static int compact(unsigned long nr)
{
	return nr == ORDLOCK_IOC_LOCK || nr == ORDLOCK_IOC_UNLOCK ||
	       nr == ORDLOCK_IOC_UNLOCK_ALL;
}

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&bad_lock);
	if (nbad++ < MAXBAD)
		diag("%s", buf);
	pthread_mutex_unlock(&bad_lock);
}

static uint64_t r64(unsigned int *seed)
{
	return ((uint64_t)rand_r(seed) << 33) ^ ((uint64_t)rand_r(seed) << 11) ^
	       (uint64_t)rand_r(seed);
}

static unsigned int rn(unsigned int *seed, unsigned int n)
{
	return (unsigned int)rand_r(seed) % n;
}

static uint64_t pick_u64(unsigned int *seed)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 0x7f, 0xff, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
		0x100000000ULL, 0x7fffffffffffffffULL, 0x8000000000000000ULL,
		~0ULL, ~0ULL - 1, 1000000, 1000000000ULL,
	};

	if (rn(seed, 3))
		return v[rn(seed, sizeof(v) / sizeof(v[0]))];
	return r64(seed);
}

static uint32_t pick_count(unsigned int *seed)
{
	static const uint32_t v[] = {
		0, 1, 2, 3, 4, 8, 64, 255, 256, 1023, 1024, 1025, 4096, 65536, 65537,
		0x7fffffff, 0x80000000, 0xffffffff, 0x10000000, 0x08000000,
	};

	return rn(seed, 4) ? v[rn(seed, sizeof(v) / sizeof(v[0]))] : (uint32_t)r64(seed);
}

/* a keys array: valid memory, or hostile pointers */
static uint64_t pick_keys(unsigned int *seed, struct ordlock_key *keys, unsigned int room)
{
	unsigned int i;

	for (i = 0; i < room; i++) {
		switch (rn(seed, 4)) {
		case 0:
			keys[i].rank = (uint32_t)pick_u64(seed);
			keys[i].id = pick_u64(seed);
			break;
		default:
			keys[i].rank = rn(seed, 3);
			keys[i].id = rn(seed, 4);
		}
		keys[i].mode = rn(seed, 8) ? 1 + rn(seed, 2) : (uint16_t)rn(seed, 65536);
		keys[i].__reserved = rn(seed, 10) ? 0 : (uint16_t)rand_r(seed);
	}
	switch (rn(seed, 8)) {
	case 0:
		return 0;
	case 1:
		return (uintptr_t)region + rn(seed, 2 * PAGE);	/* being unmapped */
	case 2:
		return 0xffff888000000000ULL + rn(seed, PAGE);	/* kernel */
	case 3:
		return (uintptr_t)keys + 1;			/* misaligned */
	case 4:
		return pick_u64(seed);
	default:
		return (uintptr_t)keys;
	}
}

static void fill(unsigned int *seed, unsigned int which, unsigned char *p,
		 size_t len, struct ordlock_key *keys, unsigned int room)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		p[i] = rn(seed, 4) ? 0 : (unsigned char)rand_r(seed);
	if (len < iocs[which].size)
		return;	/* the structure runs into the hole: random bytes only */
	switch (iocs[which].nr) {
	case ORDLOCK_IOC_ACQUIRE: {
		struct ordlock_acquire *a = (void *)p;

		a->flags = rn(seed, 4) ? ORDLOCK_ACQUIRE_TRY * rn(seed, 2) : (uint32_t)r64(seed);
		a->nkeys = rn(seed, 2) ? 1 + rn(seed, room) : pick_count(seed);
		/* mostly no lease; now and then a short one, or any */
		a->lease_ms = rn(seed, 8) ? 0 : rn(seed, 2) ? 1 + rn(seed, 20) : (uint32_t)r64(seed);
		a->keys = pick_keys(seed, keys, room);
		a->timeout_ns = rn(seed, 2) ? rn(seed, 3000000) : pick_u64(seed);
		break;
	}
	case ORDLOCK_IOC_RELEASE: {
		struct ordlock_release *r = (void *)p;

		r->flags = rn(seed, 3) ? ORDLOCK_RELEASE_ALL * rn(seed, 2) : (uint32_t)r64(seed);
		r->nkeys = rn(seed, 2) ? rn(seed, room) : pick_count(seed);
		r->__reserved = rn(seed, 8) ? 0 : (uint32_t)r64(seed);
		r->keys = pick_keys(seed, keys, room);
		break;
	}
	case ORDLOCK_IOC_LOCK: {
		/* the kernel writes the failure record there: the test's room */
		static __thread struct ordlock_failure f;
		struct ordlock_lock *l = (void *)p;

		l->keys = pick_keys(seed, keys, room);
		l->nkeys = rn(seed, 2) ? 1 + rn(seed, room) : pick_count(seed);
		l->flags = rn(seed, 4) ? ORDLOCK_ACQUIRE_TRY * rn(seed, 2) : (uint32_t)r64(seed);
		l->timeout_ns = rn(seed, 2) ? rn(seed, 3000000) : pick_u64(seed);
		l->failure = rn(seed, 3) ? (uintptr_t)&f : rn(seed, 2) ? 0 : pick_keys(seed, keys, 0);
		break;
	}
	case ORDLOCK_IOC_UNLOCK: {
		static __thread struct ordlock_failure f;
		struct ordlock_unlock *u = (void *)p;

		u->keys = pick_keys(seed, keys, room);
		u->nkeys = rn(seed, 2) ? rn(seed, room) : pick_count(seed);
		u->__reserved = rn(seed, 8) ? 0 : (uint32_t)r64(seed);
		u->failure = rn(seed, 3) ? (uintptr_t)&f : rn(seed, 2) ? 0 : pick_keys(seed, keys, 0);
		break;
	}
	case ORDLOCK_IOC_SET_DOMAIN:
	case ORDLOCK_IOC_DOMAIN_CONFIG: {
		struct ordlock_set_domain *d = (void *)p;
		static const char *names[] = { "default", "fz-a", "fz-b", "", "a/b", "x y" };

		d->flags = rn(seed, 3) ? 0 : (uint32_t)r64(seed);
		/* DOMAIN_CONFIG never configures "default": later tests use it */
		if (rn(seed, 4)) {
			const char *nm = names[rn(seed, 6)];

			if (iocs[which].nr == ORDLOCK_IOC_DOMAIN_CONFIG && !strcmp(nm, "default"))
				nm = "fz-default";
			snprintf(d->name, sizeof(d->name), "%s", nm);
		}
		if (iocs[which].nr == ORDLOCK_IOC_DOMAIN_CONFIG) {
			struct ordlock_domain_config *c = (void *)p;

			c->flags = rn(seed, 2) ? rn(seed, 4) : (uint32_t)r64(seed);
			c->policy = rn(seed, 2) ? rn(seed, 3) : (uint32_t)r64(seed);
			c->detect_delay_ms = rn(seed, 2) ? rn(seed, 100) : (uint32_t)r64(seed);
			c->max_hold_ms = rn(seed, 2) ? rn(seed, 50) : (uint32_t)r64(seed);
		}
		break;
	}
	case ORDLOCK_IOC_LAST_FAILURE: {
		struct ordlock_last_failure *l = (void *)p;

		l->flags = rn(seed, 4) ? 0 : (uint32_t)r64(seed);
		l->nsteps = rn(seed, 2) ? rn(seed, 64) : pick_count(seed);
		l->__reserved = rn(seed, 8) ? 0 : (uint32_t)r64(seed);
		l->steps = pick_keys(seed, keys, room);
		break;
	}
	case ORDLOCK_IOC_RENEW: {
		struct ordlock_renew *r = (void *)p;

		r->flags = rn(seed, 3) ? ORDLOCK_RENEW_SET_SIGNAL * rn(seed, 2) : (uint32_t)r64(seed);
		/* a signal that interrupts nothing here: SIGWINCH, or none */
		r->signal = rn(seed, 4) ? 0 : rn(seed, 2) ? SIGWINCH : (uint32_t)r64(seed);
		r->lease_ms = rn(seed, 2) ? rn(seed, 50) : (uint32_t)r64(seed);
		break;
	}
	case ORDLOCK_IOC_TOKEN_CHECK: {
		struct ordlock_token_check *t = (void *)p;

		t->flags = rn(seed, 4) ? 0 : (uint32_t)r64(seed);
		pick_keys(seed, &t->key, 1);
		t->token = pick_u64(seed);
		break;
	}
	case ORDLOCK_IOC_SET_LABEL: {
		struct ordlock_set_label *l = (void *)p;

		l->flags = rn(seed, 4) ? 0 : (uint32_t)r64(seed);
		/* mostly valid labels, sometimes a bad character or no NUL */
		for (i = 0; i < sizeof(l->label); i++)
			l->label[i] = "abc-._9Z"[rn(seed, 8)];
		l->label[rn(seed, 5) ? rn(seed, sizeof(l->label)) : sizeof(l->label) - 1] =
			rn(seed, 6) ? 0 : (char)rand_r(seed);
		break;
	}
	case ORDLOCK_IOC_GET_ORDER: {
		/* the kernel writes there: room the test owns, never more */
		static struct ordlock_order_edge edges[8];
		static uint32_t words[64];
		struct ordlock_order_get *g = (void *)p;

		g->flags = rn(seed, 4) ? 0 : (uint32_t)r64(seed);
		memset(g->domain, 0, sizeof(g->domain));
		strcpy(g->domain, rn(seed, 3) ? "default" : rn(seed, 2) ? "fz-order" : "");
		g->edge_size = rn(seed, 3) ? sizeof(edges[0]) : rn(seed, sizeof(edges[0]) + 1);
		g->nedges = rn(seed, 9);
		g->edges = rn(seed, 6) ? (uintptr_t)edges : 0;
		g->npotential_words = rn(seed, 65);
		g->potentials = rn(seed, 6) ? (uintptr_t)words : 0;
		break;
	}
	case ORDLOCK_IOC_CONVERT: {
		struct ordlock_convert *c = (void *)p;

		c->flags = rn(seed, 3) ? ORDLOCK_ACQUIRE_TRY * rn(seed, 2) : (uint32_t)r64(seed);
		pick_keys(seed, &c->key, 1);
		c->timeout_ns = rn(seed, 2) ? rn(seed, 3000000) : pick_u64(seed);
		break;
	}
	default:
		break;
	}
}

/* @err is in the 0-terminated @list */
static int in_list(const int *list, int err)
{
	for (; *list; list++)
		if (*list == err)
			return 1;
	return 0;
}

/*
 * @err is one the UAPI header documents for the ioctls (its table, through
 * the generated uapi_errnos.h) and one that @c may return
 */
static int documented(const struct ioc *c, int err)
{
	unsigned int i;

	if (!in_list(ordlock_doc_ioctl_errnos, err))
		return 0;
	for (i = 0; i < 16 && c->errs[i]; i++)
		if (c->errs[i] == err)
			return 1;
	return 0;
}

/* @nr is one of ordlock's ioctls (the "unknown" ones may pick one) */
static int known_nr(unsigned long nr)
{
	unsigned int i;

	for (i = 0; i < NIOC - 1; i++)
		if (iocs[i].nr == nr)
			return 1;
	return 0;
}

static void *ioctl_fuzzer(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 7919U + (unsigned int)getpid();
	/* two pages, the second unmapped: a structure may end at the hole */
	unsigned char *buf = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static __thread struct ordlock_key keys[64];
	int fd = olt_raw_fd();

	if (buf == MAP_FAILED)
		return NULL;
	munmap(buf + 2 * PAGE, PAGE);
	if (arg == NULL)
		__atomic_store_n(&shared_fd, fd, __ATOMIC_SEQ_CST);
	while (!stop) {
		unsigned int which = rn(&seed, NIOC), room = 1 + rn(&seed, 64);
		const struct ioc *c = &iocs[which];
		size_t size;
		unsigned char *p;
		unsigned long nr = c->nr;
		int ret, err, use = fd;

		switch (rn(&seed, 6)) {
		case 0:
			size = rn(&seed, PAGE + 65);
			break;
		case 1:
			size = c->size + rn(&seed, 64);
			break;
		default:
			size = c->size;
		}
		/* where the structure lies: well inside, or up to the hole */
		if (size <= 2 * PAGE && rn(&seed, 4) == 0)
			p = buf + 2 * PAGE - (rn(&seed, 2) ? size : size / 2);
		else
			p = buf;
		fill(&seed, which, p, size < 2 * PAGE - (size_t)(p - buf) ? size : 2 * PAGE - (size_t)(p - buf), keys, room);
		if (size >= 4 && p + 4 <= buf + 2 * PAGE && !compact(nr))
			*(uint32_t *)p = rn(&seed, 6) ? (uint32_t)size : (uint32_t)pick_count(&seed);
		if (!nr) {	/* unknown: other numbers of our type, or others' */
			/* never another type's: VFS handles FIOCLEX & co. */
			nr = rn(&seed, 2) ? _IO(ORDLOCK_IOC_TYPE, 12 + rn(&seed, 244))
					  : (((unsigned long)r64(&seed) & 0xffff00ffUL) |
					     (ORDLOCK_IOC_TYPE << 8));
			/* the fast path's numbers are known */
			if (nr == ORDLOCK_IOC_FAST_PIN || nr == ORDLOCK_IOC_FAST_RELEASE ||
			    nr == ORDLOCK_IOC_FAST_LEARN)
				nr += 2;
		}
		if (arg && rn(&seed, 4) == 0) {
			int s = __atomic_load_n(&shared_fd, __ATOMIC_SEQ_CST);

			if (s >= 0)
				use = s;
		}
		if (rn(&seed, 50) == 0)
			p = rn(&seed, 2) ? NULL : (unsigned char *)region;
		/* UNLOCK_ALL: mostly the 0 it needs, else a pointer (EINVAL) */
		if (nr == ORDLOCK_IOC_UNLOCK_ALL && rn(&seed, 4))
			p = NULL;
		ret = ioctl(use, nr, p);
		err = errno;
		__atomic_fetch_add(&ncalls[which], 1, __ATOMIC_RELAXED);
		/* UNLOCK_ALL (picked, or as an unknown number): how many it released */
		if (ret > 0 && nr == ORDLOCK_IOC_UNLOCK_ALL)
			ret = 0;
		if (ret == 0) {
			__atomic_fetch_add(&nok, 1, __ATOMIC_RELAXED);
		} else if (ret != -1 || !documented(c, err)) {
			/* a known ioctl number picked at random is fine too */
			if (!(which == NIOC - 1 && known_nr(nr)) &&
			    !(which == NIOC - 1 && err == ENOTTY) &&
			    /*
			     * another thread's descriptor may be closed meanwhile,
			     * and its number reused by another file (a socket)
			     */
			    !(use != fd && (err == EBADF || err == ENOTTY)))
				bad("%s (nr %#lx) size %zu: ret %d errno %d (%s) is not documented",
				    c->name, nr, size, ret, err, strerror(err));
		}
		/* now and then a new owner (the old one goes with what it holds) */
		if (!arg && rn(&seed, 200) == 0) {
			int nfd = olt_raw_fd();

			__atomic_store_n(&shared_fd, nfd, __ATOMIC_SEQ_CST);
			close(fd);
			fd = nfd;
		} else if (arg && rn(&seed, 200) == 0) {
			close(fd);
			fd = olt_raw_fd();
		}
	}
	if (!arg)
		__atomic_store_n(&shared_fd, -1, __ATOMIC_SEQ_CST);
	usleep(50000);	/* the other thread may still use it */
	close(fd);
	munmap(buf, 2 * PAGE);
	return NULL;
}

/*
 * Maps and unmaps the pages of the region the fuzzers point keys at. The
 * address range stays reserved (a PROT_NONE mapping replaces the pages,
 * which the kernel sees vanish exactly as with munmap): unmapping it for
 * real would let another thread's allocation land there, which the next
 * MAP_FIXED mapping would then clobber.
 */
static void *racer(void *arg)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	unsigned int i;

	(void)arg;
	while (!stop) {
		void *p = mmap(region, 2 * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

		if (p != MAP_FAILED)
			for (i = 0; i < 2 * PAGE / sizeof(k); i++)
				((struct ordlock_key *)p)[i] = k;
		sched_yield();
		mmap(region, 2 * PAGE, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		sched_yield();
	}
	return NULL;
}

/* --- netlink --------------------------------------------------------------- */


static void put_random_attrs(struct nl_msg *msg, unsigned int *seed, int depth)
{
	unsigned int n = rn(seed, 6), i, len;
	unsigned char data[80];
	struct nlattr *nest;
	struct ordlock_key k;

	for (i = 0; i < n; i++) {
		int type = rn(seed, 4) ? (int)rn(seed, ORDLOCK_A_MAX + 2) : (int)rn(seed, 0x8000);

		switch (rn(seed, 6)) {
		case 0:
			nla_put_u32(msg, type, (uint32_t)pick_u64(seed));
			break;
		case 1:
			nla_put_u64(msg, type, pick_u64(seed));
			break;
		case 2:
			if (depth < 3) {
				nest = olc_nl_nest_start(msg, type);
				if (nest) {
					put_random_attrs(msg, seed, depth + 1);
					nla_nest_end(msg, nest);
				}
			}
			break;
		case 3:	/* a plausible key array */
			nest = olc_nl_nest_start(msg, ORDLOCK_A_KEYS);
			if (nest) {
				unsigned int j, nk = rn(seed, 5);

				for (j = 0; j < nk; j++) {
					pick_keys(seed, &k, 1);
					olc_nl_put_key(msg, rn(seed, 4) ? ORDLOCK_A_KEY : (int)rn(seed, 20), &k);
				}
				nla_nest_end(msg, nest);
			}
			break;
		case 4:
			nla_put_string(msg, ORDLOCK_A_DOMAIN, rn(seed, 2) ? "fz-nl" : "bad name!");
			break;
		default:
			len = rn(seed, sizeof(data));
			for (unsigned int j = 0; j < len; j++)
				data[j] = (unsigned char)rand_r(seed);
			nla_put(msg, type, (int)len, data);
		}
	}
}

static void *nl_fuzzer(void *arg)
{
	unsigned int seed = (unsigned int)getpid() * 31U + 5;
	struct nlt *s = nlt_open(NULL);

	(void)arg;
	if (!s) {
		bad("cannot open a netlink socket");
		return NULL;
	}
	while (!stop) {
		uint8_t cmd = (uint8_t)(rn(&seed, 8) ? rn(&seed, ORDLOCK_CMD_MAX + 2) : (unsigned int)rand_r(&seed));
		int flags = rn(&seed, 5) ? 0 : NLM_F_DUMP;
		struct nl_msg *msg = nlt_msg_new(s, cmd, flags);
		int ret;

		if (!msg)
			break;
		put_random_attrs(msg, &seed, 0);
		ret = nlt_request(s, msg, NULL);
		nnl++;
		if (ret == 0) {
			nnl_ok++;
		} else {
			/* the UAPI's table of netlink errors, nothing else */
			if (!in_list(ordlock_doc_netlink_errnos, -ret))
				bad("netlink cmd %u flags %#x: error %d (%s) is not documented",
				    cmd, flags, -ret, strerror(-ret));
		}
		/* drop what RESULTs arrived; now and then a new socket */
		{
			struct olc_nl_outcome o;

			while (nlt_pending(s) && nlt_wait_result(s, 0, &o) == 0)
				;
		}
		if (rn(&seed, 100) == 0) {
			nlt_close(s);
			s = nlt_open(NULL);
			if (!s)
				return NULL;
		}
	}
	nlt_close(s);
	return NULL;
}

static unsigned long calls_now(void)
{
	unsigned long t = __atomic_load_n(&nnl, __ATOMIC_RELAXED);
	unsigned int i;

	for (i = 0; i < NIOC; i++)
		t += __atomic_load_n(&ncalls[i], __ATOMIC_RELAXED);
	return t;
}

static unsigned long env_ul(const char *name, unsigned long dflt)
{
	const char *env = getenv(name);

	return env && *env ? strtoul(env, NULL, 10) : dflt;
}

int main(void)
{
	unsigned int seconds = (unsigned int)env_ul("ORDLOCK_FUZZ_SECONDS", 12), i;
	unsigned long target = env_ul("ORDLOCK_FUZZ_CALLS", 0);
	unsigned long progress = env_ul("ORDLOCK_FUZZ_PROGRESS", 60);
	pthread_t th[NTHREAD], rt, nt;
	unsigned long total = 0, calls;
	uint64_t t0, el, next;

	if (!seconds)
		seconds = 12;
	watchdog_start(seconds + 180);
	signal(SIGPIPE, SIG_IGN);
	if (target)
		diag("fuzzing until %lu calls, for at most %u s (ORDLOCK_FUZZ_CALLS, ORDLOCK_FUZZ_SECONDS)",
		     target, seconds);
	else
		diag("fuzzing for %u s (ORDLOCK_FUZZ_SECONDS)", seconds);
	/* no wait may take long: whatever timeout the fuzzer asks for */
	is_int(olt_param_set("max_timeout_ms", 200), 0, "max_timeout_ms 200");
	is_int(olt_param_set("default_timeout_ms", 100), 0, "default_timeout_ms 100");
	region = mmap(NULL, 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		bail_out("mmap");
	t0 = now_ms();
	next = progress * 1000;
	for (i = 0; i < NTHREAD; i++)
		pthread_create(&th[i], NULL, ioctl_fuzzer, (void *)(uintptr_t)i);
	pthread_create(&rt, NULL, racer, NULL);
	pthread_create(&nt, NULL, nl_fuzzer, NULL);
	for (;;) {
		usleep(target ? 200000 : 1000000);
		el = now_ms() - t0;
		calls = calls_now();
		if (progress && el >= next) {
			diag("progress: %llu s, %lu calls (%lu/s), %u undocumented answers",
			     (unsigned long long)el / 1000, calls,
			     calls * 1000 / (el ? el : 1), __atomic_load_n(&nbad, __ATOMIC_RELAXED));
			next += progress * 1000;
		}
		if ((target && calls >= target) || el >= seconds * 1000ULL)
			break;
	}
	stop = 1;
	for (i = 0; i < NTHREAD; i++)
		pthread_join(th[i], NULL);
	pthread_join(rt, NULL);
	pthread_join(nt, NULL);
	el = now_ms() - t0;

	for (i = 0; i < NIOC; i++) {
		diag("%-13s %lu calls", iocs[i].name, ncalls[i]);
		total += ncalls[i];
	}
	diag("%lu ioctls (%lu succeeded), %lu netlink requests (%lu succeeded)",
	     total, nok, nnl, nnl_ok);
	diag("totals: %lu calls in %llu s (%lu/s), %u undocumented answers",
	     total + nnl, (unsigned long long)el / 1000,
	     (total + nnl) * 1000 / (el ? el : 1), nbad);
	if (target)
		ok(total + nnl >= target, "the call target was reached: %lu of %lu calls",
		   total + nnl, target);
	ok(total > 1000, "the fuzzer made %lu ioctl calls", total);
	ok(nnl > 100, "and %lu netlink requests", nnl);
	for (i = 0; i < NIOC - 1; i++)
		ok(ncalls[i] > 0, "%s was called", iocs[i].name);
	is_int(nbad, 0, "every call answered with a documented errno");
	olt_param_restore();
	/* the default domain kept its policy */
	{
		struct ordlock *ol = olt_open(NULL);
		struct ordlock_domain_config cfg;

		memset(&cfg, 0, sizeof(cfg));
		is_int(ordlock_domain_config(ol, "default", &cfg), 0, "read the default domain");
		if (!is_int(cfg.policy, ORDLOCK_POLICY_ENFORCE, "the default domain still enforces the order"))
			ordlock_set_policy(ol, "default", ORDLOCK_POLICY_ENFORCE, 0);
		ordlock_close(ol);
	}
	/* nothing is left held: a fresh owner takes the keys the fuzzer used */
	{
		struct ordlock *ol = olt_open(NULL);
		struct ordlock_key k[3] = { ORDLOCK_EX(0, 0), ORDLOCK_EX(1, 1), ORDLOCK_EX(2, 3) };

		is_int(ordlock_acquire(ol, k, 3, 10000, 0, NULL), 0,
		       "the fuzzed keys are free afterwards");
		ordlock_close(ol);
	}
	return tap_done();
}
