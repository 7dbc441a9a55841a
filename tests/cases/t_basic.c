// SPDX-License-Identifier: GPL-2.0
/*
 * t_basic: owners, one key, shared and exclusive, try-acquire failures,
 * fencing tokens, owner info, releasing a subset, all, or a key not held.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

static void test_open_close(void)
{
	struct ordlock_owner_info info;
	struct ordlock *ol;

	ol = ordlock_open(NULL);
	if (!ok(ol != NULL, "ordlock_open(NULL) opens an owner"))
		bail_out("cannot open %s: %s", ORDLOCK_DEVICE, strerror(errno));
	ok(ordlock_fd(ol) >= 0, "the owner has a file descriptor");
	is_int(ordlock_owner_info(ol, &info), 0, "OWNER_INFO works");
	ok(!strcmp(info.domain, ORDLOCK_DEFAULT_DOMAIN),
	   "a new owner is in domain \"default\" (got \"%.32s\")", info.domain);
	is_int(info.policy, ORDLOCK_POLICY_ENFORCE,
	       "the default domain enforces the order rule");
	is_int(info.nheld, 0, "a new owner holds nothing");
	is_int(info.last_token, 0, "a new owner has no token yet");
	is_int(ordlock_last_failure(ol)->reason, ORDLOCK_REASON_NONE,
	       "a new handle has no failure recorded");
	ordlock_close(ol);
	ok(1, "ordlock_close() returns");
}

static void test_one_key(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct ordlock_owner_info info;
	struct ordlock *a = olt_open(NULL);
	uint64_t token = 0;

	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, &token), 0,
	       "acquire exclusive 1:1");
	ok(token > 0, "a grant returns a non-zero fencing token (%llu)",
	   (unsigned long long)token);
	is_int(olt_nheld(a), 1, "the owner holds one key");
	ordlock_owner_info(a, &info);
	is_int(info.last_token, token, "OWNER_INFO reports the last token");
	is_errno(olt_probe(NULL, 1, 1, SH), EAGAIN,
		 "another owner cannot take 1:1 shared");
	is_errno(olt_probe(NULL, 1, 1, EX), EAGAIN,
		 "another owner cannot take 1:1 exclusive");
	is_int(olt_probe(NULL, 1, 2, EX), 0, "1:2 is a different resource");
	is_int(olt_probe(NULL, 2, 1, EX), 0,
	       "2:1 is a different resource (same id, other rank)");
	is_int(ordlock_release(a, &k, 1), 0, "release 1:1");
	is_int(olt_nheld(a), 0, "the owner holds nothing");
	is_int(olt_probe(NULL, 1, 1, EX), 0, "1:1 is free again");
	ordlock_close(a);
}

static void test_shared(void)
{
	struct ordlock_key k = ORDLOCK_SH(1, 2);
	struct ordlock *a = olt_open(NULL), *b = olt_open(NULL);
	struct ordlock *c = olt_open(NULL);
	const struct ordlock_failure *f;
	struct ordlock_key x = ORDLOCK_EX(1, 2);
	char buf[200], want[200];

	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "owner A takes 1:2 shared");
	is_int(ordlock_try_acquire(b, &k, 1, NULL), 0,
	       "owner B try-takes 1:2 shared too: shared + shared compatible");
	is_int(olt_nheld(b), 1, "B holds it");
	is_errno(ordlock_try_acquire(c, &x, 1, NULL), EAGAIN,
		 "owner C cannot try-take 1:2 exclusive while shared");
	f = ordlock_last_failure(c);
	is_int(f->reason, ORDLOCK_REASON_BUSY, "reason BUSY");
	is_int(f->error, EAGAIN, "failure.error EAGAIN");
	ok(olt_key_eq(&f->key, 1, 2, EX), "failure.key is exclusive 1:2");
	is_int(f->holder_mode, SH, "failure.holder_mode is shared");
	is_int(f->pid, getpid(), "failure.pid is the holder's pid");
	is_int(f->index, 0, "failure.index 0");
	snprintf(want, sizeof(want),
		 "try-lock: exclusive 1:2 is held (shared) by pid %d",
		 (int)getpid());
	ordlock_strfailure(f, buf, sizeof(buf));
	ok(!strcmp(buf, want), "strfailure: \"%s\"", buf);
	is_int(olt_nheld(c), 0, "C holds nothing after the failure");
	is_int(ordlock_release_all(a), 0, "A releases");
	is_errno(ordlock_try_acquire(c, &x, 1, NULL), EAGAIN,
		 "still busy while B holds it shared");
	is_int(ordlock_release_all(b), 0, "B releases");
	is_int(ordlock_try_acquire(c, &x, 1, NULL), 0,
	       "now C takes 1:2 exclusive");
	ordlock_close(a);
	ordlock_close(b);
	ordlock_close(c);
}

/* A holder in another process: the failure names its pid and mode. */
static void test_conflicts(void)
{
	struct ordlock_key hk[2] = { ORDLOCK_EX(2, 20), ORDLOCK_SH(2, 30) };
	struct olt_holder *h = olt_holder_start(NULL, hk, 2);
	struct ordlock *a = olt_open(NULL);
	struct ordlock_failure kf;
	const struct ordlock_failure *f;
	struct ordlock_key k;
	char buf[200], want[200];

	is_int(h->result, 0, "a child holds exclusive 2:20 and shared 2:30");

	k = ORDLOCK_SH(2, 20);
	is_errno(ordlock_try_acquire(a, &k, 1, NULL), EAGAIN,
		 "shared 2:20 vs exclusive holder: EAGAIN");
	f = ordlock_last_failure(a);
	is_int(f->reason, ORDLOCK_REASON_BUSY, "reason BUSY");
	ok(olt_key_eq(&f->key, 2, 20, SH), "failure.key is shared 2:20");
	is_int(f->pid, h->pid, "failure.pid is the holder child");
	is_int(f->holder_mode, EX, "the holder holds it exclusive");
	snprintf(want, sizeof(want),
		 "try-lock: shared 2:20 is held (exclusive) by pid %d",
		 (int)h->pid);
	ordlock_strfailure(f, buf, sizeof(buf));
	ok(!strcmp(buf, want), "strfailure: \"%s\"", buf);
	is_int(ordlock_kernel_last_failure(a, &kf), 0, "LAST_FAILURE works");
	ok(!memcmp(&kf, f, sizeof(kf)),
	   "the kernel's LAST_FAILURE matches the library's copy");

	k = ORDLOCK_EX(2, 20);
	is_errno(ordlock_acquire(a, &k, 1, 0, ORDLOCK_ACQUIRE_TRY, NULL),
		 EAGAIN, "exclusive vs exclusive: EAGAIN (flag TRY)");

	k = ORDLOCK_EX(2, 30);
	is_errno(ordlock_try_acquire(a, &k, 1, NULL), EAGAIN,
		 "exclusive vs shared holder: EAGAIN");
	f = ordlock_last_failure(a);
	is_int(f->holder_mode, SH, "the holder holds 2:30 shared");
	k = ORDLOCK_SH(2, 30);
	is_int(ordlock_try_acquire(a, &k, 1, NULL), 0,
	       "shared vs shared holder in another process: granted");
	ordlock_release_all(a);

	/* all or nothing, and the index is the caller's, before sorting */
	{
		struct ordlock_key req[3] = {
			ORDLOCK_EX(2, 40), ORDLOCK_EX(2, 20), ORDLOCK_EX(2, 10),
		};

		is_errno(ordlock_try_acquire(a, req, 3, NULL), EAGAIN,
			 "{2:40, 2:20, 2:10} with 2:20 held: EAGAIN");
		f = ordlock_last_failure(a);
		ok(olt_key_eq(&f->key, 2, 20, EX), "failure.key 2:20");
		is_int(f->index, 1, "failure.index is 1, the caller's position");
		is_int(olt_nheld(a), 0, "nothing is held after the failure");
		is_int(olt_probe(NULL, 2, 10, EX), 0,
		       "2:10, taken before 2:20, was released again");
		is_int(olt_probe(NULL, 2, 40, EX), 0, "2:40 is free");
	}

	is_int(olt_holder_stop(h), 0, "the holder child exits cleanly");
	k = ORDLOCK_EX(2, 20);
	is_int(ordlock_try_acquire(a, &k, 1, NULL), 0,
	       "2:20 is free once the holder exited");
	ordlock_close(a);
}

static void test_tokens(void)
{
	struct ordlock *a = olt_open(NULL), *b = olt_open(NULL);
	struct ordlock_owner_info ia, ib;
	uint64_t prev = 0, t = 0;
	int i, increasing = 1;

	for (i = 0; i < 200; i++) {
		struct ordlock *o = (i & 1) ? b : a;
		struct ordlock_key k = ORDLOCK_EX(3, (uint64_t)(i % 7));

		if (ordlock_acquire(o, &k, 1, OLT_LONG_MS, 0, &t)) {
			increasing = 0;
			diag("grant %d failed: %s", i, strerror(errno));
			break;
		}
		if (t <= prev) {
			increasing = 0;
			diag("grant %d: token %llu after %llu", i,
			     (unsigned long long)t, (unsigned long long)prev);
		}
		prev = t;
		ordlock_release_all(o);
	}
	ok(increasing, "tokens strictly increase over 200 grants of two owners");

	{
		struct ordlock_key k = ORDLOCK_SH(3, 100);
		uint64_t ta = 0, tb = 0;

		ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, &ta);
		ordlock_acquire(b, &k, 1, OLT_LONG_MS, 0, &tb);
		ok(tb > ta && ta > prev,
		   "two shared grants of one key get increasing tokens (%llu < %llu)",
		   (unsigned long long)ta, (unsigned long long)tb);
		ordlock_owner_info(a, &ia);
		ordlock_owner_info(b, &ib);
		is_int(ia.last_token, ta, "A's last_token");
		is_int(ib.last_token, tb, "B's last_token");
		ok(ia.owner_id != ib.owner_id, "owners have distinct ids (%llu, %llu)",
		   (unsigned long long)ia.owner_id,
		   (unsigned long long)ib.owner_id);
		is_int(ia.nheld, 1, "A holds 1");
		is_int(ib.nheld, 1, "B holds 1");
	}
	ordlock_close(a);
	ordlock_close(b);
}

static void test_release(void)
{
	struct ordlock_key three[3] = {
		ORDLOCK_EX(4, 3), ORDLOCK_EX(4, 1), ORDLOCK_EX(4, 2),
	};
	struct ordlock *a = olt_open(NULL);
	const struct ordlock_failure *f;
	struct ordlock_release r;
	struct ordlock_key k, two[2];
	char buf[200];
	int n;

	is_int(ordlock_acquire(a, three, 3, OLT_LONG_MS, 0, NULL), 0,
	       "acquire 4:1, 4:2, 4:3");
	is_int(olt_nheld(a), 3, "holds 3");

	k = ORDLOCK_EX(4, 2);
	is_int(ordlock_release(a, &k, 1), 0, "release the subset {4:2}");
	is_int(olt_nheld(a), 2, "holds 2");
	is_int(olt_probe(NULL, 4, 2, EX), 0, "4:2 is free");
	is_errno(olt_probe(NULL, 4, 1, EX), EAGAIN, "4:1 still held");
	is_errno(olt_probe(NULL, 4, 3, EX), EAGAIN, "4:3 still held");

	two[0] = ORDLOCK_EX(4, 1);
	two[1] = ordlock_key(4, 5, 0);
	is_errno(ordlock_release(a, two, 2), ENOENT,
		 "release {4:1, 4:5} with 4:5 not held: ENOENT");
	f = ordlock_last_failure(a);
	is_int(f->reason, ORDLOCK_REASON_NOT_HELD, "reason NOT_HELD");
	ok(olt_key_eq(&f->key, 4, 5, 0), "failure.key is 4:5");
	is_int(f->index, 1, "failure.index 1");
	ordlock_strfailure(f, buf, sizeof(buf));
	ok(!strcmp(buf, "key 4:5 is not held"), "strfailure: \"%s\"", buf);
	is_int(olt_nheld(a), 2, "nothing was released: still holds 2");
	is_errno(olt_probe(NULL, 4, 1, EX), EAGAIN, "4:1 still held");

	k = ORDLOCK_EX(4, 2);
	is_errno(ordlock_release(a, &k, 1), ENOENT,
		 "releasing the already released 4:2: ENOENT");

	/* the mode of a release key is ignored: shared names 4:3 too */
	k = ORDLOCK_SH(4, 3);
	is_int(ordlock_release(a, &k, 1), 0,
	       "release shared 4:3 of a key held exclusive (mode ignored)");
	is_int(olt_nheld(a), 1, "holds 1");

	/* release all, through the raw ioctl to see @released */
	k = ORDLOCK_EX(4, 9);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "acquire 4:9 above 4:1");
	n = olt_fd_release_all(ordlock_fd(a));
	is_int(n < 0 ? n : 0, 0, "RELEASE_ALL");
	is_int(n, 2, "released counts 2 keys");
	is_int(olt_nheld(a), 0, "holds nothing");
	is_int(olt_probe(NULL, 4, 1, EX), 0, "4:1 free");
	is_int(olt_probe(NULL, 4, 9, EX), 0, "4:9 free");

	n = olt_fd_release_all(ordlock_fd(a));
	is_int(n < 0 ? n : 0, 0, "RELEASE_ALL holding nothing succeeds");
	is_int(n, 0, "and releases 0");

	/* a subset release through the raw ioctl also counts */
	ordlock_acquire(a, three, 3, OLT_LONG_MS, 0, NULL);
	two[0] = ordlock_key(4, 3, 0);
	two[1] = ordlock_key(4, 1, 0);
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.nkeys = 2;
	r.keys = (uintptr_t)two;
	is_int(olt_ioctl(ordlock_fd(a), ORDLOCK_IOC_RELEASE, &r), 0,
	       "release {4:3, 4:1} (unsorted, mode 0)");
	is_int(r.released, 2, "released counts 2");
	is_int(olt_nheld(a), 1, "4:2 remains");
	ordlock_close(a);
	is_int(olt_probe(NULL, 4, 2, EX), 0, "ordlock_close() released 4:2");
}

static void test_library_errors(void)
{
	struct ordlock *a = olt_open(NULL);
	const struct ordlock_failure *f;
	struct ordlock_failure kf;
	struct ordlock_key k = ORDLOCK_EX(5, 1);
	int ret;

	ret = ordlock_acquire(a, NULL, 1, 0, 0, NULL);
	is_int(ret, -EFAULT, "library: NULL keys returns -EFAULT");
	is_int(errno, EFAULT, "and sets errno EFAULT");
	f = ordlock_last_failure(a);
	is_int(f->reason, ORDLOCK_REASON_INVALID, "recorded reason INVALID");
	is_int(f->error, EFAULT, "recorded error EFAULT");

	is_int(ordlock_acquire(a, &k, 1, 0, 0, NULL), 0,
	       "a later success");
	is_int(ordlock_last_failure(a)->reason, ORDLOCK_REASON_INVALID,
	       "keeps the last failure record in the library");
	is_int(ordlock_kernel_last_failure(a, &kf), 0, "LAST_FAILURE");
	is_int(kf.reason, ORDLOCK_REASON_INVALID,
	       "and in the kernel (kept until the next failure)");
	is_int(kf.error, EFAULT, "kernel record error EFAULT");
	ordlock_close(a);

	ok(!strcmp(ordlock_reason_name(ORDLOCK_REASON_ORDER), "order") &&
	   !strcmp(ordlock_reason_name(ORDLOCK_REASON_TIMEOUT), "timeout") &&
	   !strcmp(ordlock_reason_name(999), "unknown"),
	   "ordlock_reason_name()");
	ok(!strcmp(ordlock_mode_name(SH), "shared") &&
	   !strcmp(ordlock_mode_name(EX), "exclusive") &&
	   !strcmp(ordlock_mode_name(0), "none"), "ordlock_mode_name()");
}

int main(void)
{
	watchdog_start(600);
	test_open_close();
	test_one_key();
	test_shared();
	test_conflicts();
	test_tokens();
	test_release();
	test_library_errors();
	return tap_done();
}
