// SPDX-License-Identifier: GPL-2.0
/*
 * t_reslimit: max_resources at its boundary, with requests of many keys.
 *
 * A request of several keys counts the resources it may take into use all
 * at once, ahead (one add, one limit test: table.c, ordlock_table_reserve()),
 * and gives back what it did not use. The outcome must be what counting
 * each resource as it is taken gives: a request whose keys need no new
 * resource (they are in use already) succeeds at the limit, one that
 * reaches the limit exactly succeeds, one past it fails with ENOSPC and
 * changes nothing, no count is left behind, and a request that waits for a
 * key counts only the resources it took, so that others may take the rest
 * up to the limit meanwhile. The count is read from debugfs "stats".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define LIMIT	10

static const char *domain;

/* The "waiters N" gauge of the test's domain in debugfs stats, or -1 */
static long domain_waiters(void)
{
	return olt_stats_domain(domain, "waiters");
}

/* keys[i] = (1, base + i) in @mode, for i < n */
static void fill(struct ordlock_key *keys, unsigned int n, uint64_t base,
		 unsigned int mode)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		keys[i] = ordlock_key(1, base + i, mode);
}

/*
 * 8 keys in use (held shared by A): B's request of the same 8 needs no new
 * resource and must not fail, though 8 counted ahead would pass the limit;
 * 8 + 2 new reach it exactly; 8 + 3 new go past it and change nothing
 */
static void test_in_use(void)
{
	struct ordlock *a = olt_open(domain), *b = olt_open(domain);
	struct ordlock_key keys[16];

	fill(keys, 8, 0, ORDLOCK_MODE_SHARED);
	is_int(ordlock_acquire(a, keys, 8, OLT_LONG_MS, 0, NULL), 0,
	       "A takes 8 keys shared");
	is_int(olt_stats_resources(), 8, "8 resources in use");
	is_int(ordlock_acquire(b, keys, 8, OLT_LONG_MS, 0, NULL), 0,
	       "B takes the same 8 with max_resources=%d: no new resource, no failure",
	       LIMIT);
	is_int(olt_stats_resources(), 8, "still 8 resources in use");
	is_int(ordlock_release_all(b), 0, "B lets them go");

	fill(keys + 8, 2, 8, ORDLOCK_MODE_EXCLUSIVE);
	is_int(ordlock_acquire(b, keys, 10, OLT_LONG_MS, 0, NULL), 0,
	       "B takes the 8 and 2 new ones: exactly at the limit");
	is_int(olt_stats_resources(), LIMIT, "%d resources in use", LIMIT);
	is_int(ordlock_release_all(b), 0, "B lets the 10 go");
	is_int(olt_stats_resources(), 8, "8 in use again");

	fill(keys + 8, 3, 8, ORDLOCK_MODE_EXCLUSIVE);
	is_errno(ordlock_acquire(b, keys, 11, OLT_LONG_MS, 0, NULL), ENOSPC,
		 "the 8 and 3 new ones: one past the limit, ENOSPC");
	is_int(ordlock_last_failure(b)->reason, ORDLOCK_REASON_RESOURCE_LIMIT,
	       "reason resource-limit");
	is_int(olt_nheld(b), 0, "B holds nothing");
	is_int(olt_stats_resources(), 8, "the failed request left no count behind");

	is_int(ordlock_acquire(b, keys + 8, 2, OLT_LONG_MS, 0, NULL), 0,
	       "2 new keys alone fit");
	is_errno(ordlock_acquire(b, keys + 10, 1, OLT_LONG_MS, 0, NULL), ENOSPC,
		 "an 11th resource does not");
	is_int(ordlock_release_all(b), 0, "B lets its 2 go");
	is_int(ordlock_release_all(a), 0, "A lets its 8 go");
	is_int(olt_stats_resources(), 0, "no resource in use");
	ordlock_close(b);
	ordlock_close(a);
}

/* Idle resources taken back by one request: the limit counts them exactly */
static void test_idle(void)
{
	struct ordlock *a = olt_open(domain);
	struct ordlock_key keys[16], one = ORDLOCK_EX(1, 100);

	/* most of keys 0..10 are idle now (test_in_use() used them) */
	fill(keys, 11, 0, ORDLOCK_MODE_EXCLUSIVE);
	is_errno(ordlock_acquire(a, keys, 11, OLT_LONG_MS, 0, NULL), ENOSPC,
		 "11 idle keys at once: ENOSPC");
	is_int(olt_stats_resources(), 0, "nothing counted after the failure");
	is_int(ordlock_acquire(a, keys, 10, OLT_LONG_MS, 0, NULL), 0,
	       "10 idle keys at once: exactly at the limit");
	is_int(olt_stats_resources(), LIMIT, "%d in use", LIMIT);
	is_errno(ordlock_acquire(a, &one, 1, OLT_LONG_MS, 0, NULL), ENOSPC,
		 "one more: ENOSPC");
	is_int(ordlock_release_all(a), 0, "let the 10 go");
	is_int(olt_stats_resources(), 0, "none in use");
	ordlock_close(a);
}

/* B: {0, 100, 101, 102, 103}, waiting for 100; exits 0 when granted */
static int waiter(void *arg)
{
	struct ordlock *b = olt_open(domain);
	struct ordlock_key keys[5] = {
		ORDLOCK_EX(1, 0), ORDLOCK_EX(1, 100), ORDLOCK_EX(1, 101),
		ORDLOCK_EX(1, 102), ORDLOCK_EX(1, 103),
	};

	(void)arg;
	if (ordlock_acquire(b, keys, 5, OLT_LONG_MS, 0, NULL))
		return 1;
	return olt_nheld(b) == 5 ? 0 : 2;
}

/*
 * A request that waits for a key counts what it took, not what it has
 * left to take: while B waits for key 100 (held by a holder), having taken
 * key 0, 2 resources are in use and A may take 8 more
 */
static void test_wait(void)
{
	struct ordlock_key k100 = ORDLOCK_EX(1, 100), keys[16], one = ORDLOCK_EX(1, 300);
	struct ordlock *a = olt_open(domain);
	struct olt_holder *h = olt_holder_start(domain, &k100, 1);
	double t0;
	pid_t pid;

	if (!ok(h && !h->result, "a holder takes key 100"))
		return;
	pid = child_start(waiter, NULL);
	t0 = now_ms() / 1e3;
	while (domain_waiters() < 1 && now_ms() / 1e3 - t0 < 30)
		usleep(10000);
	is_int(domain_waiters(), 1, "B waits for key 100");
	is_int(olt_stats_resources(), 2,
	       "while B waits, 2 resources count (key 0 and key 100), not the 3 left");
	fill(keys, 8, 200, ORDLOCK_MODE_EXCLUSIVE);
	is_int(ordlock_acquire(a, keys, 8, OLT_LONG_MS, 0, NULL), 0,
	       "A takes 8 new keys meanwhile: the limit reached");
	is_errno(ordlock_acquire(a, &one, 1, OLT_LONG_MS, 0, NULL), ENOSPC,
		 "a ninth: ENOSPC");
	is_int(ordlock_release_all(a), 0, "A lets them go");
	is_int(olt_holder_stop(h), 0, "the holder lets key 100 go");
	is_int(child_wait(pid, 30), 0, "B is granted its 5 keys");
	is_int(olt_stats_resources(), 0, "none in use after B exits");
	ordlock_close(a);
}

int main(void)
{
	watchdog_start(120);
	domain = strdup(olt_domain("reslimit"));
	if (!ok(olt_stats_resources() >= 0, "debugfs stats readable"))
		return tap_done();
	if (!ok(olt_stats_resources() == 0, "no resource in use at the start (%ld)",
		olt_stats_resources()))
		return tap_done();
	if (!ok(olt_param_set("max_resources", LIMIT) == 0,
		"set max_resources=%d", LIMIT))
		return tap_done();
	test_in_use();
	test_idle();
	test_wait();
	olt_param_restore();
	return tap_done();
}
