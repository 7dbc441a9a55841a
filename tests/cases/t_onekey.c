// SPDX-License-Identifier: GPL-2.0
/*
 * t_onekey: an acquire of one key takes a shorter path in the kernel
 * (request.c, ordlock_acquire_one()) than a request of several keys; its
 * results must be those of the general path. Each case is run through
 * both: one key alone, and the same key with a second one, and the
 * outcomes compared: the order rule and the check for a key held already,
 * a try-lock of a taken key (the failure record names the holder, and
 * nothing is taken), the place of the new hold in the owner's sorted list
 * when it sorts below held keys (a release of several keys walks that list
 * in order), the fencing tokens across both paths, and a key seen for the
 * first time (the resource is allocated on the general path).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define SH ORDLOCK_MODE_SHARED

static const struct ordlock_failure *fail_of(struct ordlock *ol)
{
	return ordlock_last_failure(ol);
}

/* A detect domain: a key below the held ones goes into the sorted list */
static void test_sorted_insert(void)
{
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k5 = ORDLOCK_EX(1, 5), k3 = ORDLOCK_EX(1, 3);
	struct ordlock_key k4 = ORDLOCK_SH(1, 4), k1 = ORDLOCK_EX(0, 9);
	struct ordlock_key all[4] = { k1, k3, k4, k5 };
	struct ordlock *ol;

	snprintf(name, sizeof(name), "%s", olt_domain("onekey"));
	ol = olt_open(name);
	is_int(ordlock_set_policy(ol, name, ORDLOCK_POLICY_DETECT, 0), 0,
	       "%s: policy detect", name);
	is_int(ordlock_acquire(ol, &k5, 1, OLT_LONG_MS, 0, NULL), 0, "take 1:5");
	is_int(ordlock_acquire(ol, &k3, 1, OLT_LONG_MS, 0, NULL), 0,
	       "take 1:3, below it (any order in detect)");
	is_int(ordlock_acquire(ol, &k4, 1, OLT_LONG_MS, 0, NULL), 0,
	       "take 1:4 shared, between them");
	is_int(ordlock_acquire(ol, &k1, 1, OLT_LONG_MS, 0, NULL), 0,
	       "take 0:9, below all of them");
	is_int(olt_nheld(ol), 4, "4 keys held");
	is_errno(ordlock_try_acquire(ol, &k4, 1, NULL), EDEADLK,
		 "1:4 again: EDEADLK (it would wait for itself)");
	is_int(fail_of(ol)->reason, ORDLOCK_REASON_ORDER, "reason ORDER");
	ok(olt_key_eq(&fail_of(ol)->held, 1, 4, SH), "the held key named is 1:4 shared");
	is_int(olt_nheld(ol), 4, "still 4 held");
	/* the release walks the sorted held list once: every key is found */
	is_int(ordlock_release(ol, &all[1], 2), 0, "release {1:3, 1:4} at once");
	is_int(ordlock_release(ol, all, 1), 0, "release 0:9");
	is_int(olt_probe(name, 1, 4, EX), 0, "1:4 is free");
	is_int(olt_probe(name, 1, 5, EX), -EAGAIN, "1:5 is still held");
	is_int(ordlock_release(ol, &k5, 1), 0, "release 1:5");
	is_int(olt_nheld(ol), 0, "nothing held");
	ordlock_close(ol);
}

/* Enforce: one key below a held one, alone and with another */
static void test_order_rule(void)
{
	struct ordlock_key held = ORDLOCK_EX(20, 2);
	struct ordlock_key two[2] = { ORDLOCK_EX(20, 1), ORDLOCK_EX(30, 1) };
	struct ordlock_failure f1, f2;
	struct ordlock *ol = olt_open(NULL);

	is_int(ordlock_acquire(ol, &held, 1, OLT_LONG_MS, 0, NULL), 0, "take 20:2");
	is_errno(ordlock_acquire(ol, &two[0], 1, OLT_LONG_MS, 0, NULL), EDEADLK,
		 "20:1 after 20:2: EDEADLK");
	f1 = *fail_of(ol);
	is_errno(ordlock_acquire(ol, two, 2, OLT_LONG_MS, 0, NULL), EDEADLK,
		 "{20:1, 30:1} after 20:2: EDEADLK");
	f2 = *fail_of(ol);
	is_int(f1.reason, ORDLOCK_REASON_ORDER, "one key: reason ORDER");
	is_int(f2.reason, f1.reason, "two keys: the same reason");
	ok(olt_key_eq(&f1.key, 20, 1, EX) && olt_key_eq(&f1.held, 20, 2, EX),
	   "one key: names 20:1 and the held 20:2");
	ok(!memcmp(&f1.key, &f2.key, sizeof(f1.key)) &&
	   !memcmp(&f1.held, &f2.held, sizeof(f1.held)) && f1.index == f2.index,
	   "two keys: the same keys and index named (%u, %u)", f1.index, f2.index);
	is_int(olt_nheld(ol), 1, "only 20:2 held");
	is_int(olt_probe(NULL, 20, 1, EX), 0, "20:1 was not taken");
	ordlock_close(ol);
}

/* A try-lock of a taken key: EAGAIN naming the holder, nothing changed */
static void test_try_busy(void)
{
	struct ordlock_key k = ORDLOCK_EX(40, 1), other = ORDLOCK_EX(41, 1);
	struct ordlock_key two[2] = { k, other };
	struct ordlock_failure f1, f2, kf;
	struct olt_holder *h = olt_holder_start(NULL, &k, 1);
	struct ordlock *ol = olt_open(NULL);

	if (h->result)
		bail_out("the holder could not take 40:1: %s", strerror(-h->result));
	is_errno(ordlock_try_acquire(ol, &k, 1, NULL), EAGAIN, "try 40:1: EAGAIN");
	f1 = *fail_of(ol);
	is_int(ordlock_kernel_last_failure(ol, &kf), 0, "LAST_FAILURE");
	is_errno(ordlock_try_acquire(ol, two, 2, NULL), EAGAIN,
		 "try {40:1, 41:1}: EAGAIN");
	f2 = *fail_of(ol);
	is_int(f1.reason, ORDLOCK_REASON_BUSY, "one key: reason BUSY");
	is_int(f1.pid, h->pid, "one key: names the holder's pid");
	is_int(f1.holder_mode, EX, "one key: held exclusive");
	ok(olt_key_eq(&f1.key, 40, 1, EX) && f1.index == 0, "one key: names 40:1, index 0");
	ok(!memcmp(&kf, &f1, sizeof(kf)), "the kernel's record is the one returned");
	ok(f2.reason == f1.reason && f2.pid == f1.pid &&
	   f2.holder_mode == f1.holder_mode && f2.index == f1.index &&
	   !memcmp(&f2.key, &f1.key, sizeof(f1.key)),
	   "two keys: the same record");
	is_int(olt_nheld(ol), 0, "nothing held");
	is_int(olt_probe(NULL, 41, 1, EX), 0, "41:1 was not taken");
	is_int(olt_holder_stop(h), 0, "the holder leaves");
	is_int(ordlock_try_acquire(ol, &k, 1, NULL), 0, "now the try takes 40:1");
	is_int(olt_probe(NULL, 40, 1, SH), -EAGAIN, "and holds it");
	ordlock_close(ol);
}

/* Tokens grow across both paths and a first-time key */
static void test_tokens(void)
{
	char id[32];
	struct ordlock_key two[2] = { ORDLOCK_EX(50, 1), ORDLOCK_EX(50, 2) };
	struct ordlock_key fresh = ORDLOCK_EX(51, (uint64_t)getpid() << 8);
	uint64_t t1 = 0, t2 = 0, t3 = 0, t4 = 0;
	struct ordlock *ol = olt_open(NULL);

	snprintf(id, sizeof(id), "%llu", (unsigned long long)fresh.id);
	is_int(ordlock_acquire(ol, two, 2, OLT_LONG_MS, 0, &t1), 0, "take {50:1, 50:2}");
	ordlock_release_all(ol);
	is_int(ordlock_acquire(ol, &two[0], 1, OLT_LONG_MS, 0, &t2), 0, "take 50:1");
	is_int(ordlock_acquire(ol, &fresh, 1, OLT_LONG_MS, 0, &t3), 0,
	       "take 51:%s, a key never seen", id);
	ordlock_release_all(ol);
	is_int(ordlock_acquire(ol, &fresh, 1, OLT_LONG_MS, 0, &t4), 0,
	       "take 51:%s again", id);
	ok(t1 && t1 < t2 && t2 < t3 && t3 < t4, "tokens grow: %llu < %llu < %llu < %llu",
	   (unsigned long long)t1, (unsigned long long)t2,
	   (unsigned long long)t3, (unsigned long long)t4);
	is_int(olt_nheld(ol), 1, "1 key held");
	ordlock_close(ol);
}

int main(void)
{
	watchdog_start(120);
	test_sorted_insert();
	test_order_rule();
	test_try_busy();
	test_tokens();
	return tap_done();
}
