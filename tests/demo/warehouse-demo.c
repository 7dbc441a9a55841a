// SPDX-License-Identifier: GPL-2.0
/*
 * warehouse-demo: the warehouse lesson of the source documents (003), run
 * through /dev/ordlock by real processes. `make demo` runs it in the VM.
 *
 *   1. The nightly audit that locks Plovdiv, then Sofia: refused by the
 *      order rule, with the kernel's explanation.
 *   2. The night at 3:12: two transfers each lock their source warehouse,
 *      meet, then lock the target. Without ordlock they would wait for each
 *      other forever; here the one that breaks the order is refused at
 *      once, releases, retries in order, and both complete.
 *   3. 1000 + 1000 transfers, each one request for both warehouses, while
 *      an audit sums the stock under one shared request: exact totals.
 *
 * Exits 0 when every step ended as the lesson says it should.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"

#define RANK		1	/* warehouses */
#define SOFIA		1
#define PLOVDIV		2
#define WAIT_MS		30000
#define ROUNDS		1000

static const char *const names[] = { "", "Sofia", "Plovdiv" };

struct state {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	struct pbarrier *meet;
	long stock[3];
	int stop;
	/* step 2 */
	int refused[2];
	char why[2][200];
	/* step 3 */
	int done[2];
	int failed[2];
	long audits;
	long bad_audits;
};

static struct state *st;
static int problems;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void expect(int cond, const char *what)
{
	if (!cond) {
		problems++;
		say("  !! unexpected: %s", what);
	}
}

/* read, yield, write: two writers at once would lose an update */
static void move(int from, int to, long qty)
{
	long a = st->stock[from], b;

	sched_yield();
	st->stock[from] = a - qty;
	b = st->stock[to];
	sched_yield();
	st->stock[to] = b + qty;
}

static void step_audit(void)
{
	struct ordlock_key plovdiv = ORDLOCK_SH(RANK, PLOVDIV);
	struct ordlock_key sofia = ORDLOCK_SH(RANK, SOFIA);
	struct ordlock *ol = ordlock_open(st->domain);
	char why[200];
	int ret;

	putchar('\n');
	say("1. The nightly audit, written with the bug of the lesson");
	say("   It locks Plovdiv (key 1:2) to count it, then Sofia (key 1:1).");
	if (!ol) {
		say("   cannot open %s: %s", ORDLOCK_DEVICE, strerror(errno));
		exit(2);
	}
	ret = ordlock_acquire(ol, &plovdiv, 1, WAIT_MS, 0, NULL);
	expect(ret == 0, "locking Plovdiv failed");
	say("   locked Plovdiv (shared): %ld units", st->stock[PLOVDIV]);
	ret = ordlock_acquire(ol, &sofia, 1, WAIT_MS, 0, NULL);
	if (ret) {
		ordlock_strfailure(ordlock_last_failure(ol), why, sizeof(why));
		say("   locking Sofia: refused, %s", strerror(-ret));
		say("   the kernel says: %s", why);
		say("   A transfer holding Sofia and waiting for Plovdiv would have");
		say("   closed a cycle with this audit. The fix: ask for both at once.");
	} else {
		say("   locking Sofia: granted (the order rule did not apply!)");
	}
	expect(ret == -EDEADLK, "the wrong-order audit was not refused");
	ordlock_close(ol);
}

static int night_transfer(void *arg)
{
	int me = (int)(intptr_t)arg;
	int from = me ? PLOVDIV : SOFIA, to = me ? SOFIA : PLOVDIV;
	long qty = me ? 3 : 5;
	struct ordlock_key src = ORDLOCK_EX(RANK, from);
	struct ordlock_key dst = ORDLOCK_EX(RANK, to);
	struct ordlock *ol = ordlock_open(st->domain);

	if (!ol || ordlock_acquire(ol, &src, 1, WAIT_MS, 0, NULL))
		return 1;
	/* both hold their first key when they ask for the second */
	if (pbarrier_wait(st->meet))
		return 2;
	if (ordlock_acquire(ol, &dst, 1, WAIT_MS, 0, NULL)) {
		struct ordlock_key both[2] = { src, dst };

		st->refused[me] = errno;
		ordlock_strfailure(ordlock_last_failure(ol), st->why[me],
				   sizeof(st->why[me]));
		ordlock_release_all(ol);
		if (ordlock_acquire(ol, both, 2, WAIT_MS, 0, NULL))
			return 3;
	}
	move(from, to, qty);
	ordlock_close(ol);
	return 0;
}

static void step_night(void)
{
	pid_t t1, t2;
	int s1, s2, i;

	putchar('\n');
	say("2. 3:12 at night: 5 units Sofia -> Plovdiv and 3 Plovdiv -> Sofia");
	say("   Each transfer locks its source first; a barrier lets them go on");
	say("   only when both hold their first key, then each locks its target.");
	st->stock[SOFIA] = 500;
	st->stock[PLOVDIV] = 300;
	st->meet = pbarrier_new(2);
	t1 = child_start(night_transfer, (void *)(intptr_t)0);
	t2 = child_start(night_transfer, (void *)(intptr_t)1);
	s1 = child_wait(t1, 0);
	s2 = child_wait(t2, 0);
	pbarrier_free(st->meet);
	for (i = 0; i < 2; i++) {
		const char *from = names[i ? PLOVDIV : SOFIA];
		const char *to = names[i ? SOFIA : PLOVDIV];

		if (st->refused[i]) {
			say("   %s -> %s: refused at once (%s):", from, to,
			    strerror(st->refused[i]));
			say("     %s", st->why[i]);
			say("     it released %s, took both in one request, and moved.",
			    from);
		} else {
			say("   %s -> %s: got %s, moved.", from, to, to);
		}
	}
	say("   Sofia: %ld, Plovdiv: %ld (nobody hung, no timeout was needed).",
	    st->stock[SOFIA], st->stock[PLOVDIV]);
	expect(s1 == 0 && s2 == 0, "a transfer did not complete");
	expect(!st->refused[0] && st->refused[1] == EDEADLK,
	       "Plovdiv -> Sofia should have been the one refused");
	expect(st->stock[SOFIA] == 498 && st->stock[PLOVDIV] == 302,
	       "stock should be 498 / 302");
}

static int busy_transfer(void *arg)
{
	int me = (int)(intptr_t)arg;
	int from = me ? PLOVDIV : SOFIA, to = me ? SOFIA : PLOVDIV;
	long qty = me ? 1 : 2;
	/* the natural order of this transfer; the kernel sorts the keys */
	struct ordlock_key both[2] = {
		ORDLOCK_EX(RANK, from), ORDLOCK_EX(RANK, to),
	};
	struct ordlock *ol = ordlock_open(st->domain);
	int i;

	if (!ol)
		return 1;
	for (i = 0; i < ROUNDS; i++) {
		if (pbarrier_wait(st->meet))
			return 2;
		if (ordlock_acquire(ol, both, 2, WAIT_MS, 0, NULL)) {
			st->failed[me]++;
			continue;
		}
		move(from, to, qty);
		st->done[me]++;
		ordlock_release_all(ol);
	}
	ordlock_close(ol);
	return 0;
}

static int auditor(void *arg)
{
	struct ordlock_key all[2] = {
		ORDLOCK_SH(RANK, PLOVDIV), ORDLOCK_SH(RANK, SOFIA),
	};
	struct ordlock *ol = ordlock_open(st->domain);

	(void)arg;
	if (!ol)
		return 1;
	while (!__atomic_load_n(&st->stop, __ATOMIC_SEQ_CST)) {
		if (ordlock_acquire(ol, all, 2, WAIT_MS, 0, NULL))
			return 2;
		if (st->stock[SOFIA] + st->stock[PLOVDIV] != 8000)
			st->bad_audits++;
		st->audits++;
		ordlock_release_all(ol);
		sched_yield();
	}
	ordlock_close(ol);
	return 0;
}

static void step_busy_day(void)
{
	pid_t t1, t2, a;
	uint64_t t0;
	int s1, s2, sa;

	putchar('\n');
	say("3. A busy day: 1000 transfers of 2 units Sofia -> Plovdiv and 1000");
	say("   of 1 unit back, at the same time; each transfer asks for both");
	say("   warehouses in one request (in its own order: the kernel sorts).");
	say("   Meanwhile the fixed audit sums both under one shared request.");
	st->stock[SOFIA] = 5000;
	st->stock[PLOVDIV] = 3000;
	say("   start: Sofia %ld, Plovdiv %ld, total %ld", st->stock[SOFIA],
	    st->stock[PLOVDIV], st->stock[SOFIA] + st->stock[PLOVDIV]);
	st->meet = pbarrier_new(2);
	t0 = now_ms();
	a = child_start(auditor, NULL);
	t1 = child_start(busy_transfer, (void *)(intptr_t)0);
	t2 = child_start(busy_transfer, (void *)(intptr_t)1);
	s1 = child_wait(t1, 0);
	s2 = child_wait(t2, 0);
	__atomic_store_n(&st->stop, 1, __ATOMIC_SEQ_CST);
	sa = child_wait(a, 0);
	pbarrier_free(st->meet);
	say("   transfers done: %d + %d in %llu ms (failed: %d + %d)",
	    st->done[0], st->done[1], (unsigned long long)(now_ms() - t0),
	    st->failed[0], st->failed[1]);
	say("   end:   Sofia %ld, Plovdiv %ld, total %ld", st->stock[SOFIA],
	    st->stock[PLOVDIV], st->stock[SOFIA] + st->stock[PLOVDIV]);
	say("   %ld audits ran during the transfers; %ld saw a total other than 8000",
	    st->audits, st->bad_audits);
	expect(s1 == 0 && s2 == 0 && sa == 0, "a process did not end well");
	expect(st->done[0] == ROUNDS && st->done[1] == ROUNDS,
	       "not every transfer completed");
	expect(st->stock[SOFIA] == 4000 && st->stock[PLOVDIV] == 4000,
	       "stock should be 4000 / 4000");
	expect(st->bad_audits == 0, "an audit saw a wrong total");
}

int main(void)
{
	st = shm_alloc(sizeof(*st));
	snprintf(st->domain, sizeof(st->domain), "warehouses-%d",
		 (int)getpid());

	say("ordlock demo: the two warehouses of the lesson");
	say("Sofia is warehouse 1 and Plovdiv warehouse 2: keys (rank 1, id 1)");
	say("and (1, 2) in domain \"%s\". A process may only ask for keys", st->domain);
	say("above the ones it holds; a request for several keys is taken in");
	say("order, all or nothing.");
	st->stock[SOFIA] = 500;
	st->stock[PLOVDIV] = 300;
	say("Stock: Sofia %ld, Plovdiv %ld.", st->stock[SOFIA],
	    st->stock[PLOVDIV]);

	step_audit();
	step_night();
	step_busy_day();

	putchar('\n');
	if (problems) {
		say("demo FAILED: %d unexpected result(s)", problems);
		return 1;
	}
	say("demo OK: the wrong-order audit was refused, no transfer hung, and");
	say("every unit is accounted for.");
	return 0;
}
