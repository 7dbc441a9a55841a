// SPDX-License-Identifier: GPL-2.0
/*
 * t_badinput: every bad input gets its errno and changes nothing.
 *
 * The owner under test holds exclusive 5:100 throughout; after every
 * rejected call the test checks that it still holds exactly that key and
 * that the keys of the rejected request were not taken.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

static struct ordlock *ol;	/* the owner under test */
static int fd;
static int fresh_fd;		/* an owner that holds nothing (SET_DOMAIN) */
static long page;
static char *rw_page;		/* a readable page, followed by ... */
static char *none_page;		/* ... a PROT_NONE page */
static void *unmapped;		/* an address with nothing mapped */

/* The owner holds only 5:100 (plus @extra keys) and 20:* are free. */
static void unchanged(long extra, const char *fmt, const char *what)
{
	long n = olt_nheld(ol);
	int base = olt_probe(NULL, 5, 100, SH);
	int k1 = extra ? 0 : olt_probe(NULL, 20, 1, EX);
	int k2 = olt_probe(NULL, 20, 2, EX);
	int cond = n == 1 + extra && base == -EAGAIN && k1 == 0 && k2 == 0;

	ok(cond, fmt, what);
	if (!cond)
		diag("  nheld %ld (want %ld), 5:100 probe %d, 20:1 probe %d, 20:2 probe %d",
		     n, 1 + extra, base, k1, k2);
}

static struct ordlock_key good_keys[2];

static void acquire_init(struct ordlock_acquire *a)
{
	good_keys[0] = ORDLOCK_EX(20, 1);
	good_keys[1] = ORDLOCK_SH(20, 2);
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->flags = ORDLOCK_ACQUIRE_TRY;
	a->nkeys = 2;
	a->keys = (uintptr_t)good_keys;
}

static int do_acquire(struct ordlock_acquire *a)
{
	return olt_ioctl(fd, ORDLOCK_IOC_ACQUIRE, a);
}

/* An acquire that must fail with @err and leave no trace. */
static void acquire_fails(struct ordlock_acquire *a, int err, int check_rec,
			  const char *what)
{
	int ret = do_acquire(a);

	is_errno(ret, err, "ACQUIRE %s: %s", what, strerror(err));
	if (!ret)
		ordlock_release(ol, good_keys, 2);
	if (check_rec) {
		ok(a->failure.reason == ORDLOCK_REASON_INVALID &&
		   a->failure.error == (unsigned int)err,
		   "ACQUIRE %s: failure record INVALID/%d (got %s/%u)", what,
		   err, ordlock_reason_name(a->failure.reason),
		   a->failure.error);
	}
	unchanged(0, "ACQUIRE %s: nothing changed", what);
}

static void test_acquire_fields(void)
{
	struct ordlock_acquire a;
	unsigned int modes[] = { 0, 3, 0x8000, 0xffff };
	unsigned int i;

	acquire_init(&a);
	is_int(do_acquire(&a), 0, "the reference ACQUIRE works");
	is_int(olt_nheld(ol), 3, "it took 20:1 and 20:2");
	ordlock_release(ol, good_keys, 2);
	unchanged(0, "%s", "released again");

	acquire_init(&a);
	a.token = ~0ULL;
	memset(&a.failure, 0xa5, sizeof(a.failure));
	is_int(do_acquire(&a), 0,
	       "garbage in the output fields (token, failure) is ignored");
	ordlock_release(ol, good_keys, 2);
	ok(a.token != ~0ULL, "token was written");

	acquire_init(&a);
	a.flags = 1U << 2;
	acquire_fails(&a, EINVAL, 1, "unknown flag bit 2");
	acquire_init(&a);
	a.flags = 1U << 31 | ORDLOCK_ACQUIRE_TRY;
	acquire_fails(&a, EINVAL, 1, "unknown flag bit 31");

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		char what[64];

		acquire_init(&a);
		good_keys[1].mode = (uint16_t)modes[i];
		snprintf(what, sizeof(what), "key #1 mode %u", modes[i]);
		acquire_fails(&a, EINVAL, 1, what);
		is_int(a.failure.index, 1, "%s: failure.index 1", what);
	}
	acquire_init(&a);
	good_keys[0].__reserved = 1;
	acquire_fails(&a, EINVAL, 1, "key #0 non-zero __reserved");
	is_int(a.failure.index, 0, "key __reserved: failure.index 0");
	acquire_init(&a);
	good_keys[1].__reserved = 0x8000;
	acquire_fails(&a, EINVAL, 1, "key #1 __reserved 0x8000");

	acquire_init(&a);
	a.nkeys = 0;
	acquire_fails(&a, EINVAL, 1, "nkeys 0");
	acquire_init(&a);
	a.nkeys = 0;
	a.keys = 0;
	acquire_fails(&a, EINVAL, 0, "nkeys 0, keys NULL");
}

static void test_acquire_counts(void)
{
	long max = olt_param_get("max_keys_per_request");
	long max_owner = olt_param_get("max_keys_per_owner");
	struct ordlock_key *keys;
	struct ordlock_acquire a;
	long n, i;

	ok(max > 0, "max_keys_per_request is readable (%ld)", max);
	if (max <= 0)
		return;
	n = max + 1;
	keys = calloc((size_t)n, sizeof(*keys));
	for (i = 0; i < n; i++)
		keys[i] = ORDLOCK_EX(30, (uint64_t)i);

	acquire_init(&a);
	a.keys = (uintptr_t)keys;
	a.nkeys = (uint32_t)n;
	acquire_fails(&a, E2BIG, 1, "nkeys = max_keys_per_request + 1");
	acquire_init(&a);
	a.keys = (uintptr_t)keys;
	a.nkeys = 0xffffffffU;
	acquire_fails(&a, E2BIG, 0, "nkeys 0xffffffff");
	acquire_init(&a);
	a.nkeys = 0x80000000U;
	acquire_fails(&a, E2BIG, 0, "nkeys 0x80000000");
	acquire_init(&a);
	a.nkeys = 0x10000000U;	/* 16 bytes each: overflows 32 bits */
	acquire_fails(&a, E2BIG, 0, "nkeys 0x10000000 (size overflows 32 bits)");

	if (max < max_owner) {
		acquire_init(&a);
		a.keys = (uintptr_t)keys;
		a.nkeys = (uint32_t)max;
		is_int(do_acquire(&a), 0, "nkeys = max_keys_per_request works");
		is_int(olt_nheld(ol), max + 1, "holds them all");
		ordlock_release(ol, keys, (unsigned int)max);
		unchanged(0, "%s", "released them");
	} else {
		diag("max_keys_per_request %ld >= max_keys_per_owner %ld: skip the full request",
		     max, max_owner);
	}

	/* a lower max applies at once */
	if (!olt_param_set("max_keys_per_request", 2)) {
		acquire_init(&a);
		a.keys = (uintptr_t)keys;
		a.nkeys = 3;
		acquire_fails(&a, E2BIG, 1, "3 keys with max_keys_per_request 2");
		acquire_init(&a);
		is_int(do_acquire(&a), 0, "2 keys with max_keys_per_request 2 work");
		ordlock_release(ol, good_keys, 2);
		olt_param_restore();
	}
	free(keys);
}

static void test_acquire_pointers(void)
{
	struct ordlock_acquire a;
	struct ordlock_key *edge;

	acquire_init(&a);
	a.keys = 0;
	acquire_fails(&a, EFAULT, 1, "keys NULL");
	acquire_init(&a);
	a.keys = (uintptr_t)unmapped;
	acquire_fails(&a, EFAULT, 1, "keys unmapped");
	acquire_init(&a);
	a.keys = (uintptr_t)none_page;
	acquire_fails(&a, EFAULT, 1, "keys in a PROT_NONE page");
	acquire_init(&a);
	a.keys = 0xffff888000000000ULL;
	acquire_fails(&a, EFAULT, 1, "keys a kernel address");
	acquire_init(&a);
	a.keys = ~0ULL - 8;
	acquire_fails(&a, EFAULT, 0, "keys near the top of the address space");

	/* first key readable (end of a page), second in the PROT_NONE page */
	edge = (struct ordlock_key *)(none_page - sizeof(*edge));
	*edge = ORDLOCK_EX(20, 1);
	acquire_init(&a);
	a.keys = (uintptr_t)edge;
	acquire_fails(&a, EFAULT, 1, "keys straddling into a PROT_NONE page");
	a.nkeys = 1;
	a.failure.reason = 0;
	is_int(do_acquire(&a), 0, "the same first key alone is fine");
	ordlock_release(ol, edge, 1);
}

/* struct sizes and bad argument pointers, for every ioctl */
#ifndef offsetofend
#define offsetofend(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))
#endif

struct ioc {
	const char *name;
	unsigned long nr;
	size_t size;
	size_t min_size;	/* the first published size (0: @size) */
	void (*fill)(void *arg);
	void (*undo)(void);	/* after a success */
	void (*prep)(void);	/* before each call */
	long extra;		/* keys held besides 5:100 before the call */
	int fresh;		/* call on fresh_fd, not on the owner under test */
};

static int ioc_fd(const struct ioc *c)
{
	return c->fresh ? fresh_fd : fd;
}

static void fill_acquire(void *arg)
{
	acquire_init(arg);
}

static void undo_acquire(void)
{
	ordlock_release(ol, good_keys, 2);
}

static struct ordlock_key rel_key;

static void prep_release(void)
{
	rel_key = ORDLOCK_EX(20, 1);
	if (olt_probe(NULL, 20, 1, EX) == 0)
		ordlock_acquire(ol, &rel_key, 1, OLT_LONG_MS, 0, NULL);
}

static void fill_release(void *arg)
{
	struct ordlock_release *r = arg;

	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->nkeys = 1;
	r->keys = (uintptr_t)&rel_key;
}

static void fill_set_domain(void *arg)
{
	struct ordlock_set_domain *sd = arg;

	memset(sd, 0, sizeof(*sd));
	sd->size = sizeof(*sd);
	strcpy(sd->name, "badinput-sd");
}

static void fill_owner_info(void *arg)
{
	struct ordlock_owner_info *oi = arg;

	memset(oi, 0, sizeof(*oi));
	oi->size = sizeof(*oi);
}

static void fill_last_failure(void *arg)
{
	struct ordlock_last_failure *lf = arg;

	memset(lf, 0, sizeof(*lf));
	lf->size = sizeof(*lf);
}

static const struct ioc iocs[] = {
	{ .name = "ACQUIRE", .nr = ORDLOCK_IOC_ACQUIRE,
	  .size = sizeof(struct ordlock_acquire),
	  .min_size = offsetofend(struct ordlock_acquire, failure),
	  .fill = fill_acquire, .undo = undo_acquire },
	{ .name = "RELEASE", .nr = ORDLOCK_IOC_RELEASE,
	  .size = sizeof(struct ordlock_release),
	  .fill = fill_release, .prep = prep_release, .extra = 1 },
	{ .name = "SET_DOMAIN", .nr = ORDLOCK_IOC_SET_DOMAIN,
	  .size = sizeof(struct ordlock_set_domain),
	  .fill = fill_set_domain, .fresh = 1 },
	{ .name = "OWNER_INFO", .nr = ORDLOCK_IOC_OWNER_INFO,
	  .size = sizeof(struct ordlock_owner_info),
	  .fill = fill_owner_info },
	{ .name = "LAST_FAILURE", .nr = ORDLOCK_IOC_LAST_FAILURE,
	  .size = sizeof(struct ordlock_last_failure),
	  /* @revoked and @nrevoked came with leases */
	  .min_size = offsetof(struct ordlock_last_failure, revoked),
	  .fill = fill_last_failure },
};

/* the second u32 of every argument is @flags */
static void set_flags(void *arg, uint32_t flags)
{
	memcpy((char *)arg + 4, &flags, sizeof(flags));
}

static void set_size(void *arg, uint32_t size)
{
	memcpy(arg, &size, sizeof(size));
}

static void ioc_call(const struct ioc *c, void *arg, int err,
		     const char *what)
{
	int ret = olt_ioctl(ioc_fd(c), c->nr, arg);

	if (err)
		is_errno(ret, err, "%s %s: %s", c->name, what, strerror(err));
	else
		is_int(ret, 0, "%s %s: works", c->name, what);
	if (!ret && c->undo)
		c->undo();
	if (err || !c->prep)
		unchanged(c->extra, "%s: nothing changed", c->name);
}

static void test_sizes_and_pointers(const struct ioc *c)
{
	char *buf = rw_page;		/* a whole readable page */
	char *tail;

	if (c->prep)
		c->prep();
	c->fill(buf);
	ioc_call(c, buf, 0, "reference call");

	if (c->prep)
		c->prep();
	c->fill(buf);
	set_size(buf, 0);
	ioc_call(c, buf, EINVAL, "size 0");
	c->fill(buf);
	set_size(buf, 4);
	ioc_call(c, buf, EINVAL, "size 4");
	c->fill(buf);
	set_size(buf, (uint32_t)(c->min_size ? c->min_size : c->size) - 1);
	ioc_call(c, buf, EINVAL, "size one byte short of the first published size");
	if (c->min_size) {
		if (c->prep)
			c->prep();
		c->fill(buf);
		set_size(buf, (uint32_t)c->min_size);
		ioc_call(c, buf, 0, "the first published size");
	}

	memset(buf, 0, (size_t)page);
	c->fill(buf);
	set_size(buf, (uint32_t)c->size + 8);
	ioc_call(c, buf, 0, "size + 8 with a zero tail");
	if (c->prep)
		c->prep();
	c->fill(buf);
	set_size(buf, (uint32_t)c->size + 8);
	buf[c->size + 7] = 1;
	ioc_call(c, buf, E2BIG, "size + 8 with a non-zero tail");
	memset(buf, 0, (size_t)page);
	c->fill(buf);
	set_size(buf, (uint32_t)page);
	ioc_call(c, buf, 0, "size of a page, zero tail");
	if (c->prep)
		c->prep();
	c->fill(buf);
	set_size(buf, (uint32_t)page);
	buf[page - 1] = 1;
	ioc_call(c, buf, E2BIG, "size of a page, last byte non-zero");
	memset(buf, 0, (size_t)page);
	{
		int ret;

		c->fill(buf);
		set_size(buf, (uint32_t)page + 1);
		ret = olt_ioctl(ioc_fd(c), c->nr, buf);
		ok(ret < 0 && (errno == E2BIG || errno == EINVAL),
		   "%s size of a page + 1: rejected (%s)", c->name,
		   ret < 0 ? strerror(errno) : "accepted");
		if (!ret && c->undo)
			c->undo();
		unchanged(c->extra, "%s: nothing changed", c->name);
		c->fill(buf);
		set_size(buf, 0xffffffffU);
		ret = olt_ioctl(ioc_fd(c), c->nr, buf);
		ok(ret < 0 && (errno == E2BIG || errno == EINVAL),
		   "%s size 0xffffffff: rejected (%s)", c->name,
		   ret < 0 ? strerror(errno) : "accepted");
		if (!ret && c->undo)
			c->undo();
		unchanged(c->extra, "%s: nothing changed", c->name);
	}

	/* unknown flags; bit 0 is a real flag of ACQUIRE and RELEASE */
	c->fill(buf);
	set_flags(buf, 1U << 30);
	ioc_call(c, buf, EINVAL, "flags bit 30");

	/* bad argument pointers */
	ioc_call(c, NULL, EFAULT, "argument NULL");
	ioc_call(c, none_page, EFAULT, "argument in a PROT_NONE page");
	ioc_call(c, unmapped, EFAULT, "argument unmapped");
	/* the structure fits, but the size claims bytes in the PROT_NONE page */
	tail = none_page - c->size;
	c->fill(tail);
	set_size(tail, (uint32_t)c->size + 16);
	ioc_call(c, tail, EFAULT, "size reaching into a PROT_NONE page");
	/* the size field itself is readable but the rest is not */
	tail = none_page - 4;
	set_size(tail, (uint32_t)c->size);
	ioc_call(c, tail, EFAULT, "only the size field readable");
	memset(rw_page, 0, (size_t)page);
	if (c->extra)
		ordlock_release(ol, &rel_key, 1);
}

static void test_release_fields(void)
{
	struct ordlock_release r;
	struct ordlock_key k[2];
	const struct ioc *c = &iocs[1];

	prep_release();
	fill_release(&r);
	r.flags = ORDLOCK_RELEASE_ALL;
	ioc_call(c, &r, EINVAL, "flag ALL with nkeys 1");
	fill_release(&r);
	r.flags = ORDLOCK_RELEASE_ALL;
	r.nkeys = 0xffffffffU;
	ioc_call(c, &r, EINVAL, "flag ALL with nkeys 0xffffffff");
	fill_release(&r);
	r.nkeys = 0;
	ioc_call(c, &r, EINVAL, "nkeys 0 without flag ALL");
	fill_release(&r);
	r.__reserved = 1;
	ioc_call(c, &r, EINVAL, "non-zero __reserved");
	fill_release(&r);
	r.__reserved2 = 1;
	ioc_call(c, &r, EINVAL, "non-zero __reserved2");
	fill_release(&r);
	r.released = 7;
	ioc_call(c, &r, 0, "a garbage released (an output) is ignored");
	prep_release();

	k[0] = ORDLOCK_EX(20, 1);
	k[1] = ordlock_key(5, 100, 3);
	fill_release(&r);
	r.keys = (uintptr_t)k;
	r.nkeys = 2;
	ioc_call(c, &r, EINVAL, "key mode 3");
	is_int(r.failure.index, 1, "mode 3: failure.index 1");
	k[1] = ordlock_key(5, 100, 0);
	k[1].__reserved = 2;
	ioc_call(c, &r, EINVAL, "key __reserved non-zero");

	fill_release(&r);
	r.nkeys = 0xffffffffU;
	ioc_call(c, &r, E2BIG, "nkeys 0xffffffff");
	fill_release(&r);
	{
		/* a release may name as many keys as an owner may hold */
		long req = olt_param_get("max_keys_per_request");
		long own = olt_param_get("max_keys_per_owner");

		r.nkeys = (uint32_t)(req > own ? req : own) + 1;
	}
	ioc_call(c, &r, E2BIG, "nkeys max(max_keys_per_request, max_keys_per_owner) + 1");
	fill_release(&r);
	r.keys = 0;
	ioc_call(c, &r, EFAULT, "keys NULL");
	fill_release(&r);
	r.keys = (uintptr_t)none_page;
	ioc_call(c, &r, EFAULT, "keys PROT_NONE");
	fill_release(&r);
	r.keys = (uintptr_t)(none_page - sizeof(k[0]));
	memcpy(none_page - sizeof(k[0]), &rel_key, sizeof(k[0]));
	r.nkeys = 2;
	ioc_call(c, &r, EFAULT, "keys straddling into PROT_NONE");
	ordlock_release(ol, &rel_key, 1);
}

static void test_other_flags(void)
{
	struct ordlock_owner_info oi;
	struct ordlock_last_failure lf;

	fill_owner_info(&oi);
	oi.flags = 1;
	is_errno(olt_ioctl(fd, ORDLOCK_IOC_OWNER_INFO, &oi), EINVAL,
		 "OWNER_INFO flags 1: EINVAL");
	fill_last_failure(&lf);
	lf.flags = 1;
	is_errno(olt_ioctl(fd, ORDLOCK_IOC_LAST_FAILURE, &lf), EINVAL,
		 "LAST_FAILURE flags 1: EINVAL");
	unchanged(0, "%s", "nothing changed");
}

static void test_unknown_ioctls(void)
{
	struct ordlock_acquire a;
	struct termios t;
	unsigned long nrs[] = {
		_IO(ORDLOCK_IOC_TYPE, 0x00),
		_IO(ORDLOCK_IOC_TYPE, 0x7f),
		_IO(ORDLOCK_IOC_TYPE, 0xff),
		_IOWR(ORDLOCK_IOC_TYPE, 0x01, struct ordlock_acquire),
		_IO(ORDLOCK_IOC_TYPE + 1, 0x01),
		0,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nrs); i++) {
		acquire_init(&a);
		is_errno(olt_ioctl(fd, nrs[i], &a), ENOTTY,
			 "unknown ioctl 0x%lx: ENOTTY", nrs[i]);
		unchanged(0, "%s", "nothing changed");
	}
	is_errno(tcgetattr(fd, &t), ENOTTY, "TCGETS on /dev/ordlock: ENOTTY");
}

static void test_owner_limit(void)
{
	struct ordlock_key k[4] = {
		ORDLOCK_EX(22, 1), ORDLOCK_EX(22, 2), ORDLOCK_EX(22, 3),
		ORDLOCK_EX(22, 4),
	};
	const struct ordlock_failure *f;
	char buf[200];

	if (olt_param_set("max_keys_per_owner", 4)) {
		ok(0, "cannot set max_keys_per_owner");
		return;
	}
	is_int(ordlock_acquire(ol, k, 3, 0, ORDLOCK_ACQUIRE_TRY, NULL), 0,
	       "max_keys_per_owner 4: 5:100 + 3 keys fit");
	is_errno(ordlock_acquire(ol, &k[3], 1, 0, ORDLOCK_ACQUIRE_TRY, NULL),
		 ENOSPC, "a fifth key: ENOSPC");
	f = ordlock_last_failure(ol);
	is_int(f->reason, ORDLOCK_REASON_OWNER_LIMIT, "reason OWNER_LIMIT");
	is_int(f->error, ENOSPC, "failure.error ENOSPC");
	ordlock_strfailure(f, buf, sizeof(buf));
	diag("strfailure: %s", buf);
	is_int(olt_nheld(ol), 4, "still 4 keys held");
	is_int(olt_probe(NULL, 22, 4, EX), 0, "22:4 was not taken");
	is_int(ordlock_release(ol, &k[2], 1), 0, "release 22:3");
	is_int(ordlock_acquire(ol, &k[3], 1, 0, ORDLOCK_ACQUIRE_TRY, NULL), 0,
	       "now 22:4 fits");
	ordlock_release(ol, &k[3], 1);
	is_errno(ordlock_acquire(ol, &k[2], 2, 0, ORDLOCK_ACQUIRE_TRY, NULL),
		 ENOSPC, "{22:3, 22:4} with 3 held and room for 1: ENOSPC");
	is_int(olt_nheld(ol), 3, "nothing taken: 3 held");
	is_int(olt_probe(NULL, 22, 3, EX), 0, "22:3 free");
	ordlock_release(ol, k, 2);
	olt_param_restore();
	unchanged(0, "%s", "back to 5:100 only");
}

static void test_resource_limit(void)
{
	struct ordlock *b = olt_open(NULL);
	struct ordlock_key k[3] = {
		ORDLOCK_EX(23, 1), ORDLOCK_EX(23, 2), ORDLOCK_EX(23, 3),
	};
	const struct ordlock_failure *f;
	uint64_t deadline;
	int ret;

	/* in use now: 5:100 only (the tests run one at a time) */
	if (olt_param_set("max_resources", 3)) {
		ok(0, "cannot set max_resources");
		return;
	}
	deadline = now_ms() + 2000;
	do {
		ret = ordlock_acquire(b, k, 2, 0, ORDLOCK_ACQUIRE_TRY, NULL);
	} while (ret == -ENOSPC && now_ms() < deadline && !usleep(1000));
	is_int(ret, 0, "max_resources 3: 5:100 + 2 new resources fit");
	is_errno(ordlock_acquire(b, &k[2], 1, 0, ORDLOCK_ACQUIRE_TRY, NULL),
		 ENOSPC, "a fourth resource: ENOSPC");
	f = ordlock_last_failure(b);
	is_int(f->reason, ORDLOCK_REASON_RESOURCE_LIMIT,
	       "reason RESOURCE_LIMIT");
	is_int(f->error, ENOSPC, "failure.error ENOSPC");
	is_int(olt_nheld(b), 2, "the owner still holds 2");
	is_errno(ordlock_acquire(ol, &k[2], 1, 0, ORDLOCK_ACQUIRE_TRY, NULL),
		 ENOSPC, "for another owner too");
	is_int(olt_nheld(ol), 1, "the owner under test still holds 1 key");
	ordlock_release_all(b);
	/* unused resources are freed (perhaps after an RCU grace period) */
	deadline = now_ms() + 2000;
	do {
		ret = ordlock_acquire(b, &k[2], 1, 0, ORDLOCK_ACQUIRE_TRY, NULL);
	} while (ret == -ENOSPC && now_ms() < deadline && !usleep(1000));
	is_int(ret, 0, "after the release, resources were freed: 23:3 fits");
	ordlock_close(b);
	olt_param_restore();
	unchanged(0, "%s", "the owner under test is unchanged");
}

int main(void)
{
	struct ordlock_key base = ORDLOCK_EX(5, 100);
	char *map;
	unsigned int i;

	watchdog_start(600);
	page = sysconf(_SC_PAGESIZE);
	map = mmap(NULL, (size_t)page * 3, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		bail_out("mmap");
	rw_page = map;
	none_page = map + page;
	mprotect(none_page, (size_t)page, PROT_NONE);
	unmapped = map + 2 * page;
	munmap(unmapped, (size_t)page);

	ol = olt_open(NULL);
	fd = ordlock_fd(ol);
	fresh_fd = olt_raw_fd();
	if (ordlock_acquire(ol, &base, 1, OLT_LONG_MS, 0, NULL))
		bail_out("cannot take 5:100: %s", strerror(errno));
	unchanged(0, "%s", "the owner under test holds 5:100");

	test_acquire_fields();
	test_acquire_counts();
	test_acquire_pointers();
	for (i = 0; i < ARRAY_SIZE(iocs); i++)
		test_sizes_and_pointers(&iocs[i]);
	test_release_fields();
	test_other_flags();
	test_unknown_ioctls();
	test_owner_limit();
	test_resource_limit();
	unchanged(0, "%s", "at the end the owner still holds only 5:100");
	ordlock_close(ol);
	close(fresh_fd);
	return tap_done();
}
