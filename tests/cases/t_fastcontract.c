// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastcontract: two promises of the UAPI that the fast path broke (issue
 * 40, defects 5 and 6). An owner that pinned a key of its domain's fast
 * path cannot change domain (SET_DOMAIN: EBUSY), holding a key by CAS or
 * not: its index and its mapping of the words are that domain's. And
 * FAST_PIN checks the caller's uid at every pin, not only at the owner's
 * first: a descriptor passed to a task of another uid pins nothing. And
 * libordlock is back on the fast path as soon as the kernel holds nothing
 * for the owner, not only after ordlock_release_all() (issue 40, item 1).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define OTHER_UID 65534

/* A fresh domain with the fast path for the caller's uid */
static const char *fast_domain(char *dom, const char *prefix)
{
	snprintf(dom, ORDLOCK_DOMAIN_NAME_MAX, "%s", olt_domain(prefix));
	if (olt_fast_domain_set(dom, 1))
		bail_out("fast path on %s: %s", dom, strerror(errno));
	return dom;
}

static void test_no_move(void)
{
	char a[ORDLOCK_DOMAIN_NAME_MAX], b[ORDLOCK_DOMAIN_NAME_MAX];
	struct olt_fast f;
	uint32_t slot;
	uint64_t w;

	fast_domain(a, "fca");
	fast_domain(b, "fcb");
	olt_fast_open(&f, a, 5, &slot, 0);
	is_errno(olt_fd_set_domain(f.fd, b), EBUSY,
		 "an owner that pinned a key (holding none) cannot change domain");
	is_int(olt_fd_nheld(f.fd), 0, "it holds nothing in the kernel");

	/* hold 1:5 by CAS, as libordlock does */
	w = f.words[slot];
	ok(ORDLOCK_FAST_OWNER(w) == 0, "1:5's word is free");
	ok(__atomic_compare_exchange_n(&f.words[slot], &w,
				       ORDLOCK_FAST_WORD(ORDLOCK_FAST_GEN(w) + 1,
							 f.index),
				       0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED),
	   "the owner takes 1:5 by CAS");
	is_errno(olt_fd_set_domain(f.fd, b), EBUSY,
		 "holding 1:5 by CAS, it cannot change domain");
	is_int(olt_probe(b, 1, 5, ORDLOCK_MODE_EXCLUSIVE), 0,
	       "%s's own 1:5 is free (nothing of %s's leaks into it)", b, a);
	is_int(olt_fd_set_domain(f.fd, a), 0, "staying in %s is no move", a);
	w = f.words[slot];
	ok(__atomic_compare_exchange_n(&f.words[slot], &w,
				       ORDLOCK_FAST_WORD(ORDLOCK_FAST_GEN(w), 0),
				       0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED),
	   "it lets 1:5 go by CAS");
	olt_fast_close(&f);
	is_int(olt_fast_domain_set(a, 0) || olt_fast_domain_set(b, 0), 0,
	       "the fast path off in both (their keys unpinned)");
}

/* The child: drops to another uid, then pins with the inherited owner */
static int other_uid_main(void *arg)
{
	int fd = (int)(intptr_t)arg;
	uint32_t slot;

	if (setgid(OTHER_UID) || setuid(OTHER_UID))
		return 10;
	if (olt_fast_pin(fd, 1, 8, &slot, NULL) == 0)
		return 0;
	return errno == EACCES ? 1 : 2;
}

static void test_pin_uid(void)
{
	char a[ORDLOCK_DOMAIN_NAME_MAX];
	struct olt_fast f;
	uint32_t slot;
	pid_t pid;

	fast_domain(a, "fcu");
	olt_fast_open(&f, a, 7, &slot, 0);
	pid = child_start(other_uid_main, (void *)(intptr_t)f.fd);
	is_int(child_wait(pid, 0), 1,
	       "the owner's descriptor in a task of uid %d: FAST_PIN fails "
	       "with EACCES after the owner's first pin (exit 1; 0: pinned)",
	       OTHER_UID);
	is_int(olt_fast_pin(f.fd, 1, 8, &slot, NULL), 0,
	       "the domain's uid still pins with it");
	olt_fast_close(&f);
	is_int(olt_fast_domain_set(a, 0), 0, "the fast path off (keys unpinned)");
}

/*
 * A shared key (the kernel's path) released with ordlock_release(): the
 * next exclusive key is taken by CAS again, which its word shows (the
 * owner's index, not the kernel's holders)
 */
static void test_back_on_cas(void)
{
	char a[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key sh = ORDLOCK_SH(1, 21), ex = ORDLOCK_EX(1, 20);
	struct ordlock *ol;
	struct olt_fast r;
	uint32_t slot, owner;

	fast_domain(a, "fcc");
	olt_fast_open(&r, a, 20, &slot, 0);
	ol = olt_open(a);
	is_int(ordlock_acquire(ol, &ex, 1, 1000, 0, NULL), 0,
	       "the owner takes 1:20 (pinned: by CAS)");
	owner = ORDLOCK_FAST_OWNER(r.words[slot]);
	ok(owner && owner != ORDLOCK_FAST_OWNER_KERNEL,
	   "1:20's word names a member (%#x)", owner);
	is_int(ordlock_release(ol, &ex, 1), 0, "it lets 1:20 go");
	is_int(ordlock_acquire(ol, &sh, 1, 1000, 0, NULL), 0,
	       "it takes 1:21 shared (the kernel's path)");
	is_int(ordlock_release(ol, &sh, 1), 0,
	       "it lets 1:21 go with ordlock_release()");
	is_int(ordlock_acquire(ol, &ex, 1, 1000, 0, NULL), 0,
	       "it takes 1:20 again");
	owner = ORDLOCK_FAST_OWNER(r.words[slot]);
	ok(owner && owner != ORDLOCK_FAST_OWNER_KERNEL,
	   "by CAS: 1:20's word names the member again (%#x), not the "
	   "kernel's holders", owner);
	is_int(ordlock_release(ol, &ex, 1), 0, "it lets 1:20 go");
	ordlock_close(ol);
	olt_fast_close(&r);
	is_int(olt_fast_domain_set(a, 0), 0, "the fast path off (keys unpinned)");
}

int main(void)
{
	watchdog_start(60);
	test_no_move();
	test_pin_uid();
	test_back_on_cas();
	return tap_done();
}
