// SPDX-License-Identifier: GPL-2.0
/*
 * t_compact: the compact ioctls (issue 28; DOC: Compact ioctls of the UAPI
 * header): ORDLOCK_IOC_LOCK, ORDLOCK_IOC_UNLOCK and ORDLOCK_IOC_UNLOCK_ALL.
 *
 * Every bad input gets its errno and changes nothing (bad and unwritable
 * argument pointers, nonzero reserved fields, unknown flags, bad modes,
 * zero and huge counts, bad key and failure-record pointers, an argument
 * UNLOCK_ALL does not take); a grant whose token cannot be written is
 * undone; the failure record goes where the caller points, and only on
 * failure; a wait a signal interrupts writes back the time that was left.
 * Equivalence: the same requests through the full forms (ACQUIRE, RELEASE)
 * and the compact ones give the same result, errno and failure record.
 *
 * The owner under test holds exclusive 5:100 throughout, as in t_badinput;
 * after every rejected call the test checks that it still holds exactly
 * that key and that the keys of the rejected request were not taken.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

static struct ordlock *ol;	/* the owner under test */
static int fd;
static long page;
static char *ro_page;		/* a read-only page */
static char *rw_page;		/* a writable page, followed by ... */
static char *none_page;		/* ... a PROT_NONE page */

static struct ordlock_key good_keys[2];
static struct ordlock_failure rec;	/* where LOCK and UNLOCK write the record */

/* The owner holds only 5:100 (plus @extra keys) and 20:* are free. */
static void unchanged(long extra, const char *what)
{
	long n = olt_nheld(ol);
	int base = olt_probe(NULL, 5, 100, SH);
	int k1 = extra ? 0 : olt_probe(NULL, 20, 1, EX);
	int k2 = olt_probe(NULL, 20, 2, EX);
	int cond = n == 1 + extra && base == -EAGAIN && k1 == 0 && k2 == 0;

	ok(cond, "%s: nothing changed", what);
	if (!cond)
		diag("  nheld %ld (want %ld), 5:100 probe %d, 20:1 probe %d, 20:2 probe %d",
		     n, 1 + extra, base, k1, k2);
}

static void lock_init(struct ordlock_lock *l)
{
	good_keys[0] = ORDLOCK_EX(20, 1);
	good_keys[1] = ORDLOCK_SH(20, 2);
	memset(l, 0, sizeof(*l));
	l->keys = (uintptr_t)good_keys;
	l->nkeys = 2;
	l->flags = ORDLOCK_ACQUIRE_TRY;
	l->failure = (uintptr_t)&rec;
	memset(&rec, 0, sizeof(rec));
}

/* A LOCK that must fail with @err, record it (if @check_rec) and leave no trace */
static void lock_fails(struct ordlock_lock *l, int err, int check_rec, const char *what)
{
	int ret = olt_ioctl(fd, ORDLOCK_IOC_LOCK, l);

	is_errno(ret, err, "LOCK %s: %s", what, strerror(err));
	if (!ret)
		ordlock_release(ol, good_keys, 2);
	if (check_rec)
		ok(rec.reason == ORDLOCK_REASON_INVALID && rec.error == (unsigned int)err,
		   "LOCK %s: failure record INVALID/%d written (got %s/%u)", what, err,
		   ordlock_reason_name(rec.reason), rec.error);
	unchanged(0, what);
}

static void test_lock_fields(void)
{
	static const unsigned int modes[] = { 0, 3, 0xffff };
	struct ordlock_failure pattern;
	struct ordlock_owner_info info;
	struct ordlock_lock l;
	unsigned int i;
	char what[64];

	lock_init(&l);
	l.token = ~0ULL;
	l.result_flags = 7;
	memset(&rec, 0xa5, sizeof(rec));
	pattern = rec;
	is_int(olt_ioctl(fd, ORDLOCK_IOC_LOCK, &l), 0, "LOCK of 2 keys works");
	is_int(olt_nheld(ol), 3, "it took 20:1 and 20:2");
	ordlock_owner_info(ol, &info);
	ok(l.token == info.last_token && l.token != ~0ULL,
	   "the token is written (%llu, OWNER_INFO's last %llu)",
	   (unsigned long long)l.token, (unsigned long long)info.last_token);
	is_int(l.result_flags, 0, "result_flags is written (0)");
	is_int(l.timeout_ns, 0, "timeout_ns is left alone without a signal");
	ok(!memcmp(&rec, &pattern, sizeof(rec)), "no failure record is written on success");
	ordlock_release(ol, good_keys, 2);
	unchanged(0, "released again");

	lock_init(&l);
	l.__reserved = 1;
	lock_fails(&l, EINVAL, 1, "__reserved 1");
	lock_init(&l);
	l.__reserved = 0x80000000U;
	lock_fails(&l, EINVAL, 1, "__reserved 0x80000000");
	lock_init(&l);
	l.flags = 1U << 2;
	lock_fails(&l, EINVAL, 1, "unknown flag bit 2");
	lock_init(&l);
	l.flags = 1U << 31 | ORDLOCK_ACQUIRE_TRY;
	lock_fails(&l, EINVAL, 1, "unknown flag bit 31");
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		lock_init(&l);
		good_keys[1].mode = (uint16_t)modes[i];
		snprintf(what, sizeof(what), "key #1 mode %u", modes[i]);
		lock_fails(&l, EINVAL, 1, what);
		is_int(rec.index, 1, "%s: failure.index 1", what);
	}
	lock_init(&l);
	good_keys[0].__reserved = 1;
	lock_fails(&l, EINVAL, 1, "key #0 non-zero __reserved");
	is_int(rec.index, 0, "key __reserved: failure.index 0");
	lock_init(&l);
	l.nkeys = 0;
	lock_fails(&l, EINVAL, 1, "nkeys 0");
}

static void test_lock_counts(void)
{
	static const uint32_t huge[] = { 0xffffffffU, 0x80000000U, 0x10000000U };
	long max = olt_param_get("max_keys_per_request");
	struct ordlock_key *keys;
	struct ordlock_lock l;
	unsigned int i;
	char what[64];

	ok(max > 0, "max_keys_per_request is readable (%ld)", max);
	if (max <= 0)
		return;
	keys = calloc((size_t)max + 1, sizeof(*keys));
	for (i = 0; i <= max; i++)
		keys[i] = ORDLOCK_EX(30, (uint64_t)i);
	lock_init(&l);
	l.keys = (uintptr_t)keys;
	l.nkeys = (uint32_t)max + 1;
	lock_fails(&l, E2BIG, 1, "nkeys = max_keys_per_request + 1");
	for (i = 0; i < ARRAY_SIZE(huge); i++) {
		lock_init(&l);
		l.keys = (uintptr_t)keys;
		l.nkeys = huge[i];
		snprintf(what, sizeof(what), "nkeys %#x", huge[i]);
		lock_fails(&l, E2BIG, 1, what);
	}
	free(keys);
}

static void test_lock_pointers(void)
{
	struct ordlock_lock *in_ro = (struct ordlock_lock *)ro_page;
	struct ordlock_lock *at_end = (struct ordlock_lock *)(none_page - sizeof(*at_end) / 2);
	struct ordlock_lock l;

	is_errno(olt_ioctl(fd, ORDLOCK_IOC_LOCK, NULL), EFAULT, "LOCK with a NULL argument");
	unchanged(0, "LOCK NULL");
	is_errno(olt_ioctl(fd, ORDLOCK_IOC_LOCK, none_page), EFAULT,
		 "LOCK with an argument in a PROT_NONE page");
	unchanged(0, "LOCK PROT_NONE");
	lock_init(&l);
	memcpy(at_end, &l, sizeof(l) / 2);
	is_errno(olt_ioctl(fd, ORDLOCK_IOC_LOCK, at_end), EFAULT,
		 "LOCK with an argument that runs into a PROT_NONE page");
	unchanged(0, "LOCK straddling");

	lock_init(&l);
	l.keys = 0;
	lock_fails(&l, EFAULT, 1, "keys NULL");
	lock_init(&l);
	l.keys = (uintptr_t)none_page;
	lock_fails(&l, EFAULT, 1, "keys in a PROT_NONE page");
	lock_init(&l);
	l.keys = (uintptr_t)(none_page - sizeof(struct ordlock_key));
	memcpy(none_page - sizeof(struct ordlock_key), &good_keys[0], sizeof(good_keys[0]));
	lock_fails(&l, EFAULT, 1, "keys that run into a PROT_NONE page");
	lock_init(&l);
	l.keys = 0xffff888000000000ULL;
	lock_fails(&l, EFAULT, 1, "keys at a kernel address");

	/* a failure whose record cannot be written: EFAULT, nothing taken */
	lock_init(&l);
	l.flags = 1U << 5;
	l.failure = (uintptr_t)none_page;
	lock_fails(&l, EFAULT, 0, "bad flags, failure record in a PROT_NONE page");
	lock_init(&l);
	l.flags = 1U << 5;
	l.failure = 0xffff888000000000ULL;
	lock_fails(&l, EFAULT, 0, "bad flags, failure record at a kernel address");

	/* a grant whose token cannot be written is undone */
	lock_init(&l);
	l.failure = 0;
	mprotect(ro_page, (size_t)page, PROT_READ | PROT_WRITE);
	memcpy(in_ro, &l, sizeof(l));
	mprotect(ro_page, (size_t)page, PROT_READ);
	is_errno(olt_ioctl(fd, ORDLOCK_IOC_LOCK, in_ro), EFAULT,
		 "LOCK with its argument in a read-only page");
	unchanged(0, "LOCK read-only (the grant undone)");
}

/* The failure record where it points, and the same as LAST_FAILURE's */
static void test_lock_record(void)
{
	struct ordlock_key k = ORDLOCK_EX(40, 1);
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct ordlock_failure last;
	struct ordlock_lock l;

	ok(h && !h->result, "a holder takes 40:1");
	if (!h || h->result)
		return;
	lock_init(&l);
	l.keys = (uintptr_t)&k;
	l.nkeys = 1;
	is_errno(olt_ioctl(fd, ORDLOCK_IOC_LOCK, &l), EAGAIN, "LOCK TRY of a held key: EAGAIN");
	ok(rec.reason == ORDLOCK_REASON_BUSY && rec.error == EAGAIN &&
	   rec.pid == (uint32_t)h->pid && olt_key_eq(&rec.key, 40, 1, EX),
	   "the record says BUSY, the holder's pid, the key (%s)", olt_fail_str(&rec));
	ordlock_kernel_last_failure(ol, &last);
	ok(!memcmp(&last, &rec, sizeof(rec)), "LAST_FAILURE reads the same record");
	is_int(l.token, 0, "no token written");

	/* no pointer: the record is still the owner's */
	lock_init(&l);
	l.keys = (uintptr_t)&k;
	l.nkeys = 1;
	l.failure = 0;
	l.timeout_ns = 1;
	l.flags = 0;
	is_errno(olt_ioctl(fd, ORDLOCK_IOC_LOCK, &l), ETIMEDOUT,
		 "LOCK of a held key with a 1 ns timeout and no record pointer: ETIMEDOUT");
	ordlock_kernel_last_failure(ol, &last);
	ok(last.reason == ORDLOCK_REASON_TIMEOUT && last.error == ETIMEDOUT,
	   "LAST_FAILURE reads it (%s)", olt_fail_str(&last));
	unchanged(0, "after the failed LOCKs");
	olt_holder_stop(h);
}

/* A wait a signal interrupts: EINTR, the time left written back */
static volatile int lock_returned;

static void on_alarm(int sig)
{
	(void)sig;
}

static void *signaller(void *arg)
{
	pthread_t t = *(pthread_t *)arg;

	/* until the LOCK returns: a signal before it waits interrupts nothing */
	while (!__atomic_load_n(&lock_returned, __ATOMIC_SEQ_CST)) {
		pthread_kill(t, SIGUSR1);
		usleep(20000);
	}
	return NULL;
}

static void test_lock_signal(void)
{
	struct ordlock_key k = ORDLOCK_EX(41, 1);
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	const uint64_t t0 = 60ULL * 1000000000ULL;
	pthread_t self = pthread_self(), sig;
	struct ordlock_lock l;
	int ret;

	ok(h && !h->result, "a holder takes 41:1");
	if (!h || h->result)
		return;
	sigaction(SIGUSR1, &sa, NULL);
	lock_init(&l);
	l.keys = (uintptr_t)&k;
	l.nkeys = 1;
	l.flags = 0;
	l.timeout_ns = t0;
	lock_returned = 0;
	pthread_create(&sig, NULL, signaller, &self);
	/* a signal that comes before the call waits makes it fail early: again */
	do {
		memset(&rec, 0, sizeof(rec));
		ret = olt_ioctl(fd, ORDLOCK_IOC_LOCK, &l);
	} while (ret && errno == EINTR && rec.reason != ORDLOCK_REASON_SIGNAL);
	__atomic_store_n(&lock_returned, 1, __ATOMIC_SEQ_CST);
	pthread_join(sig, NULL);
	is_errno(ret, EINTR, "LOCK interrupted by a signal without SA_RESTART: EINTR");
	ok(l.timeout_ns > 0 && l.timeout_ns < t0,
	   "timeout_ns holds the time that was left (%llu < %llu)",
	   (unsigned long long)l.timeout_ns, (unsigned long long)t0);
	ok(rec.reason == ORDLOCK_REASON_SIGNAL && rec.error == EINTR,
	   "the record says SIGNAL (%s)", olt_fail_str(&rec));
	unchanged(0, "after the interrupted LOCK");
	olt_holder_stop(h);
	signal(SIGUSR1, SIG_DFL);
}

static void unlock_init(struct ordlock_unlock *u)
{
	good_keys[0] = ORDLOCK_EX(20, 1);
	good_keys[1] = ORDLOCK_SH(20, 2);
	memset(u, 0, sizeof(*u));
	u->keys = (uintptr_t)good_keys;
	u->nkeys = 2;
	u->failure = (uintptr_t)&rec;
	memset(&rec, 0, sizeof(rec));
}

/* Take 20:1 and 20:2, then an UNLOCK that must fail and release nothing */
static void unlock_fails(struct ordlock_unlock *u, int err, int check_rec, const char *what)
{
	struct ordlock_key mine[2] = { ORDLOCK_EX(20, 1), ORDLOCK_SH(20, 2) };
	int ret;

	if (ordlock_acquire(ol, mine, 2, 0, ORDLOCK_ACQUIRE_TRY, NULL)) {
		ok(0, "UNLOCK %s: taking 20:1 and 20:2 first: %s", what, strerror(errno));
		return;
	}
	ret = olt_ioctl(fd, ORDLOCK_IOC_UNLOCK, u);
	is_errno(ret, err, "UNLOCK %s: %s", what, strerror(err));
	if (check_rec)
		ok(rec.error == (unsigned int)err,
		   "UNLOCK %s: failure record written (got %s/%u)", what,
		   ordlock_reason_name(rec.reason), rec.error);
	ok(olt_nheld(ol) == (ret ? 3 : 1), "UNLOCK %s: nothing released", what);
	ordlock_release(ol, mine, 2);
	unchanged(0, what);
}

static void test_unlock(void)
{
	static const uint32_t huge[] = { 0xffffffffU, 0x80000000U, 0x10000000U };
	struct ordlock_key other[2] = { ORDLOCK_EX(20, 1), ORDLOCK_EX(20, 3) };
	struct ordlock_unlock u;
	unsigned int i;
	char what[64];

	unlock_init(&u);
	if (!ordlock_acquire(ol, good_keys, 2, 0, ORDLOCK_ACQUIRE_TRY, NULL)) {
		is_int(olt_ioctl(fd, ORDLOCK_IOC_UNLOCK, &u), 0, "UNLOCK of the 2 keys held works");
		unchanged(0, "UNLOCK");
	}
	unlock_init(&u);
	u.__reserved = 1;
	unlock_fails(&u, EINVAL, 1, "__reserved 1");
	unlock_init(&u);
	u.nkeys = 0;
	unlock_fails(&u, EINVAL, 1, "nkeys 0");
	for (i = 0; i < ARRAY_SIZE(huge); i++) {
		unlock_init(&u);
		u.nkeys = huge[i];
		snprintf(what, sizeof(what), "nkeys %#x", huge[i]);
		unlock_fails(&u, E2BIG, 1, what);
	}
	unlock_init(&u);
	good_keys[1].mode = 3;
	unlock_fails(&u, EINVAL, 1, "key #1 mode 3");
	unlock_init(&u);
	u.keys = 0;
	unlock_fails(&u, EFAULT, 1, "keys NULL");
	unlock_init(&u);
	u.keys = (uintptr_t)none_page;
	unlock_fails(&u, EFAULT, 1, "keys in a PROT_NONE page");
	unlock_init(&u);
	u.keys = (uintptr_t)other;
	unlock_fails(&u, ENOENT, 1, "20:1 held, 20:3 not");
	ok(rec.reason == ORDLOCK_REASON_NOT_HELD && rec.index == 1 &&
	   olt_key_eq(&rec.key, 20, 3, 0), "the record names 20:3, index 1 (%s)",
	   olt_fail_str(&rec));
	unlock_init(&u);
	u.keys = (uintptr_t)other;
	u.failure = (uintptr_t)none_page;
	unlock_fails(&u, EFAULT, 0, "not held, failure record in a PROT_NONE page");

	is_errno(olt_ioctl(fd, ORDLOCK_IOC_UNLOCK, NULL), EFAULT, "UNLOCK with a NULL argument");
	unchanged(0, "UNLOCK NULL");
	is_errno(olt_ioctl(fd, ORDLOCK_IOC_UNLOCK, none_page - sizeof(u) / 2), EFAULT,
		 "UNLOCK with an argument that runs into a PROT_NONE page");
	unchanged(0, "UNLOCK straddling");
}

static void test_unlock_all(void)
{
	struct ordlock_key three[3] = { ORDLOCK_EX(6, 1), ORDLOCK_EX(6, 2), ORDLOCK_SH(6, 3) };
	struct ordlock *o = olt_open(NULL);
	int ofd = ordlock_fd(o);
	struct ordlock_failure last;

	ok(!ordlock_acquire(o, three, 3, 0, 0, NULL), "another owner takes 6:1, 6:2, 6:3");
	is_errno(ioctl(ofd, ORDLOCK_IOC_UNLOCK_ALL, rw_page), EINVAL,
		 "UNLOCK_ALL with a pointer for argument: EINVAL");
	is_errno(ioctl(ofd, ORDLOCK_IOC_UNLOCK_ALL, 1UL), EINVAL, "UNLOCK_ALL with 1: EINVAL");
	is_int(olt_nheld(o), 3, "nothing was released");
	ordlock_kernel_last_failure(o, &last);
	ok(last.reason == ORDLOCK_REASON_INVALID && last.error == EINVAL,
	   "the record says INVALID/EINVAL (%s)", olt_fail_str(&last));
	is_int(ioctl(ofd, ORDLOCK_IOC_UNLOCK_ALL, 0), 3, "UNLOCK_ALL returns 3, the keys it released");
	is_int(olt_nheld(o), 0, "it holds nothing");
	is_int(ioctl(ofd, ORDLOCK_IOC_UNLOCK_ALL, 0), 0, "UNLOCK_ALL again: 0");
	ordlock_close(o);
}

/*
 * The same request through the full and the compact form: the same
 * result, errno and failure record; both keep the owner as it was
 */
struct form_result {
	int ret;
	int err;
	uint32_t result_flags;
	struct ordlock_failure f;
	long nheld;
};

static void full_lock(const struct ordlock_key *keys, unsigned int n, uint32_t flags,
		      uint64_t timeout_ns, struct form_result *r)
{
	struct ordlock_acquire a = {
		.size = sizeof(a), .flags = flags, .nkeys = n,
		.keys = (uintptr_t)keys, .timeout_ns = timeout_ns,
	};

	r->ret = olt_ioctl(fd, ORDLOCK_IOC_ACQUIRE, &a);
	r->err = r->ret ? errno : 0;
	r->result_flags = a.result_flags;
	r->f = a.failure;
	r->nheld = olt_nheld(ol);
	if (!r->ret)
		ordlock_release(ol, keys, n);
}

static void compact_lock(const struct ordlock_key *keys, unsigned int n, uint32_t flags,
			 uint64_t timeout_ns, struct form_result *r)
{
	struct ordlock_lock l = {
		.keys = (uintptr_t)keys, .nkeys = n, .flags = flags,
		.timeout_ns = timeout_ns, .failure = (uintptr_t)&r->f,
	};

	memset(&r->f, 0, sizeof(r->f));
	r->ret = olt_ioctl(fd, ORDLOCK_IOC_LOCK, &l);
	r->err = r->ret ? errno : 0;
	r->result_flags = l.result_flags;
	r->nheld = olt_nheld(ol);
	if (!r->ret)
		ordlock_release(ol, keys, n);
}

static void same(const char *what, const struct form_result *a, const struct form_result *b)
{
	int cond = a->ret == b->ret && a->err == b->err &&
		   a->result_flags == b->result_flags && a->nheld == b->nheld &&
		   !memcmp(&a->f, &b->f, sizeof(a->f));

	ok(cond, "%s: ACQUIRE and LOCK agree (%d/%s, %s)", what, a->ret,
	   strerror(a->err), olt_fail_str(&a->f));
	if (!cond)
		diag("  LOCK: %d/%s, %s, nheld %ld vs %ld, result_flags %u vs %u",
		     b->ret, strerror(b->err), olt_fail_str(&b->f), b->nheld, a->nheld,
		     b->result_flags, a->result_flags);
}

static void test_equivalence(void)
{
	struct ordlock_key k = ORDLOCK_EX(42, 1);
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct {
		const char *what;
		struct ordlock_key keys[4];
		unsigned int n;
		uint32_t flags;
		uint64_t timeout_ns;
	} cases[] = {
		{ "1 free key", { ORDLOCK_EX(20, 1) }, 1, 0, 0 },
		{ "3 free keys, unsorted, a duplicate", { ORDLOCK_SH(20, 2), ORDLOCK_EX(20, 1), ORDLOCK_EX(20, 2) }, 3, 0, 0 },
		{ "try of a held key", { ORDLOCK_EX(42, 1) }, 1, ORDLOCK_ACQUIRE_TRY, 0 },
		{ "a free key and a held one, try", { ORDLOCK_EX(20, 1), ORDLOCK_EX(42, 1) }, 2, ORDLOCK_ACQUIRE_TRY, 0 },
		{ "a held key, 1 ns", { ORDLOCK_EX(42, 1) }, 1, 0, 1 },
		{ "below the held 5:100 (order)", { ORDLOCK_EX(4, 1) }, 1, 0, 0 },
		{ "the held 5:100 itself", { ORDLOCK_EX(5, 100) }, 1, 0, 0 },
		{ "below the held key, REORDER, free", { ORDLOCK_EX(4, 7) }, 1, ORDLOCK_ACQUIRE_REORDER, 0 },
		{ "bad mode", { ORDLOCK_EX(20, 1), { .id = 2, .rank = 20, .mode = 9 } }, 2, 0, 0 },
		{ "unknown flag", { ORDLOCK_EX(20, 1) }, 1, 1U << 9, 0 },
	};
	struct form_result a, b;
	unsigned int i;

	ok(h && !h->result, "a holder takes 42:1");
	if (!h || h->result)
		return;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		full_lock(cases[i].keys, cases[i].n, cases[i].flags, cases[i].timeout_ns, &a);
		compact_lock(cases[i].keys, cases[i].n, cases[i].flags, cases[i].timeout_ns, &b);
		same(cases[i].what, &a, &b);
	}
	unchanged(0, "after the equivalence cases");
	olt_holder_stop(h);
}

int main(void)
{
	struct ordlock_key base = ORDLOCK_EX(5, 100);

	page = sysconf(_SC_PAGESIZE);
	ro_page = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rw_page = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro_page == MAP_FAILED || rw_page == MAP_FAILED)
		bail_out("mmap: %s", strerror(errno));
	none_page = rw_page + page;
	mprotect(none_page, (size_t)page, PROT_NONE);

	ol = olt_open(NULL);
	fd = ordlock_fd(ol);
	if (ordlock_acquire(ol, &base, 1, 0, 0, NULL))
		bail_out("taking 5:100: %s", strerror(errno));

	test_lock_fields();
	test_lock_counts();
	test_lock_pointers();
	test_lock_record();
	test_lock_signal();
	test_unlock();
	test_unlock_all();
	test_equivalence();

	ordlock_close(ol);
	return tap_done();
}
