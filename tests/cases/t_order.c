// SPDX-License-Identifier: GPL-2.0
/*
 * t_order: the order rule (a new key must sort above every held key, or
 * EDEADLK at once) and the sort/merge of a request.
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

static void test_lower_refused(void)
{
	struct ordlock_key k1 = ORDLOCK_EX(1, 1), k2 = ORDLOCK_EX(1, 2);
	struct olt_holder *h = olt_holder_start(NULL, &k1, 1);
	struct ordlock *a = olt_open(NULL);
	const struct ordlock_failure *f;
	struct ordlock_failure kf;
	uint64_t t0, dt;
	char buf[200];

	is_int(h->result, 0, "another process holds 1:1");
	is_int(ordlock_acquire(a, &k2, 1, OLT_LONG_MS, 0, NULL), 0,
	       "A takes 1:2");
	t0 = now_ms();
	is_errno(ordlock_acquire(a, &k1, 1, OLT_LONG_MS, 0, NULL), EDEADLK,
		 "A holding 1:2 asks 1:1: EDEADLK");
	dt = now_ms() - t0;
	ok(dt < 5000, "refused at once, without waiting for the holder of 1:1 (%llu ms)",
	   (unsigned long long)dt);
	f = ordlock_last_failure(a);
	is_int(f->reason, ORDLOCK_REASON_ORDER, "reason ORDER");
	is_int(f->error, EDEADLK, "failure.error EDEADLK");
	ok(olt_key_eq(&f->key, 1, 1, EX), "failure.key is exclusive 1:1");
	ok(olt_key_eq(&f->held, 1, 2, EX), "failure.held is exclusive 1:2");
	is_int(f->index, 0, "failure.index 0");
	ordlock_strfailure(f, buf, sizeof(buf));
	ok(!strcmp(buf, "order violation: requested exclusive 1:1 sorts at or below held exclusive 1:2"),
	   "strfailure: \"%s\"", buf);
	is_int(ordlock_kernel_last_failure(a, &kf), 0, "LAST_FAILURE");
	is_int(kf.reason, ORDLOCK_REASON_ORDER, "the kernel keeps the ORDER record");
	is_int(olt_nheld(a), 1, "A still holds exactly 1:2");
	is_errno(olt_probe(NULL, 1, 2, SH), EAGAIN, "1:2 is still held");

	is_errno(ordlock_try_acquire(a, &k1, 1, NULL), EDEADLK,
		 "try-acquire of 1:1 also gets EDEADLK (the order comes first)");
	is_int(ordlock_last_failure(a)->reason, ORDLOCK_REASON_ORDER,
	       "reason ORDER");
	is_int(olt_holder_stop(h), 0, "holder of 1:1 exits");

	/* the order violation is reported even when 1:1 is free */
	is_errno(ordlock_acquire(a, &k1, 1, OLT_LONG_MS, 0, NULL), EDEADLK,
		 "1:1 free: still EDEADLK while holding 1:2");
	is_int(olt_nheld(a), 1, "still 1 key held");
	is_int(olt_probe(NULL, 1, 1, EX), 0, "1:1 was not taken");

	/* a request mixing a good key and a bad one takes nothing */
	{
		struct ordlock_key req[3] = {
			ORDLOCK_EX(1, 3), ORDLOCK_SH(1, 1), ORDLOCK_EX(1, 4),
		};

		is_errno(ordlock_acquire(a, req, 3, OLT_LONG_MS, 0, NULL),
			 EDEADLK, "{1:3, 1:1, 1:4} holding 1:2: EDEADLK");
		f = ordlock_last_failure(a);
		ok(olt_key_eq(&f->key, 1, 1, SH), "failure.key is shared 1:1");
		is_int(f->index, 1, "failure.index 1 (the caller's position)");
		ok(olt_key_eq(&f->held, 1, 2, EX), "failure.held 1:2");
		is_int(olt_nheld(a), 1, "nothing taken");
		is_int(olt_probe(NULL, 1, 3, EX), 0, "1:3 free");
		is_int(olt_probe(NULL, 1, 4, EX), 0, "1:4 free");
	}
	ordlock_close(a);
}

static void test_equal_and_above(void)
{
	struct ordlock *a = olt_open(NULL);
	const struct ordlock_failure *f;
	struct ordlock_key k, held2[2];
	char buf[200];

	k = ORDLOCK_SH(1, 2);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "A takes 1:2 shared");
	is_errno(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), EDEADLK,
		 "asking 1:2 shared again: EDEADLK (equal key)");
	k = ORDLOCK_EX(1, 2);
	is_errno(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), EDEADLK,
		 "upgrading 1:2 to exclusive by acquire: EDEADLK");
	f = ordlock_last_failure(a);
	ok(olt_key_eq(&f->held, 1, 2, SH), "failure.held is shared 1:2");
	ok(olt_key_eq(&f->key, 1, 2, EX), "failure.key is exclusive 1:2");
	ordlock_strfailure(f, buf, sizeof(buf));
	ok(!strcmp(buf, "order violation: requested exclusive 1:2 sorts at or below held shared 1:2"),
	   "strfailure: \"%s\"", buf);
	is_int(olt_nheld(a), 1, "still holds one key");
	is_int(olt_probe(NULL, 1, 2, SH), 0,
	       "1:2 is still only shared (another owner can share it)");

	k = ORDLOCK_EX(1, 3);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "1:3 sorts above 1:2: granted");
	k = ORDLOCK_EX(2, 0);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "2:0 sorts above 1:3 (rank first): granted");
	k = ORDLOCK_EX(1, 100);
	is_errno(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), EDEADLK,
		 "1:100 sorts below 2:0: EDEADLK");
	f = ordlock_last_failure(a);
	ok(olt_key_eq(&f->held, 2, 0, EX),
	   "failure.held is the highest held key 2:0 (got %u:%llu)",
	   f->held.rank, (unsigned long long)f->held.id);
	is_int(olt_nheld(a), 3, "holds 3");

	/* the conflicting held key is the one the new key sorts below */
	ordlock_release_all(a);
	held2[0] = ORDLOCK_EX(7, 2);
	held2[1] = ORDLOCK_EX(7, 4);
	ordlock_acquire(a, held2, 2, OLT_LONG_MS, 0, NULL);
	k = ORDLOCK_EX(7, 3);
	is_errno(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), EDEADLK,
		 "holding 7:2 and 7:4, asking 7:3: EDEADLK");
	f = ordlock_last_failure(a);
	ok(olt_key_eq(&f->held, 7, 4, 0), "failure.held is 7:4 (got %u:%llu)",
	   f->held.rank, (unsigned long long)f->held.id);

	/* after a release, lower keys are allowed again */
	k = ordlock_key(7, 4, 0);
	is_int(ordlock_release(a, &k, 1), 0, "release 7:4");
	k = ORDLOCK_EX(7, 3);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "7:3 is above every held key now (7:2): granted");
	ordlock_release_all(a);
	k = ORDLOCK_EX(1, 1);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "after releasing all, 1:1 is allowed");
	ordlock_release_all(a);

	/* the order compares unsigned 64-bit ids and 32-bit ranks */
	k = ORDLOCK_EX(1, 0x7fffffffffffffffULL);
	ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL);
	k = ORDLOCK_EX(1, 0x8000000000000000ULL);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "id 2^63 sorts above 2^63-1 (unsigned ids)");
	k = ORDLOCK_EX(1, ~0ULL);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "id 2^64-1 sorts above 2^63");
	k = ORDLOCK_EX(0x7fffffff, 0);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "rank 2^31-1 sorts above rank 1");
	k = ORDLOCK_EX(0x80000000U, 0);
	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0,
	       "rank 2^31 sorts above 2^31-1 (unsigned ranks)");
	k = ORDLOCK_EX(0, ~0ULL);
	is_errno(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), EDEADLK,
		 "rank 0 with the largest id sorts below everything held");
	is_int(olt_nheld(a), 5, "holds 5");
	ordlock_close(a);
}

static void test_sort_merge(void)
{
	struct ordlock_key req[7] = {
		ORDLOCK_EX(6, 3), ORDLOCK_SH(6, 1), ORDLOCK_EX(6, 2),
		ORDLOCK_SH(6, 3), ORDLOCK_SH(6, 1), ORDLOCK_SH(6, 4),
		ORDLOCK_EX(6, 4),
	};
	struct ordlock *a = olt_open(NULL);
	struct ordlock_key k;

	is_int(ordlock_acquire(a, req, 7, OLT_LONG_MS, 0, NULL), 0,
	       "unsorted request with duplicates is granted");
	is_int(olt_nheld(a), 4, "duplicates merged: 4 keys held");
	is_int(olt_probe(NULL, 6, 1, SH), 0,
	       "6:1 (shared twice) is held shared: another owner shares it");
	is_errno(olt_probe(NULL, 6, 1, EX), EAGAIN, "but cannot take it exclusive");
	is_errno(olt_probe(NULL, 6, 2, SH), EAGAIN, "6:2 is held exclusive");
	is_errno(olt_probe(NULL, 6, 3, SH), EAGAIN,
		 "6:3 (exclusive + shared) is held exclusive: the stronger wins");
	is_errno(olt_probe(NULL, 6, 4, SH), EAGAIN,
		 "6:4 (shared + exclusive) is held exclusive: the stronger wins");
	k = ordlock_key(6, 3, 0);
	is_int(ordlock_release(a, &k, 1), 0, "one release of 6:3 frees it");
	is_int(olt_nheld(a), 3, "holds 3");
	is_int(olt_probe(NULL, 6, 3, EX), 0, "6:3 is free");
	ordlock_close(a);

	/* in the same domain the sort makes opposite orders compatible */
	{
		struct ordlock *b = olt_open(NULL), *c = olt_open(NULL);
		struct ordlock_key up[2] = { ORDLOCK_EX(8, 1), ORDLOCK_EX(8, 2) };
		struct ordlock_key down[2] = { ORDLOCK_EX(8, 2), ORDLOCK_EX(8, 1) };

		is_int(ordlock_acquire(b, down, 2, OLT_LONG_MS, 0, NULL), 0,
		       "B takes {8:2, 8:1}");
		is_errno(ordlock_try_acquire(c, up, 2, NULL), EAGAIN,
			 "C's {8:1, 8:2} is busy");
		is_int(ordlock_last_failure(c)->key.id, 1,
		       "C fails on 8:1, the lowest key (taken first)");
		ordlock_release_all(b);
		is_int(ordlock_try_acquire(c, up, 2, NULL), 0, "then granted");
		ordlock_close(b);
		ordlock_close(c);
	}
}

int main(void)
{
	watchdog_start(600);
	test_lower_refused();
	test_equal_and_above();
	test_sort_merge();
	return tap_done();
}
