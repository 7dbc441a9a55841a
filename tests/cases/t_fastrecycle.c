// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastrecycle: a fast-path domain's slots are recycled (issue 40, item
 * 2). Once ORDLOCK_FAST_SLOTS keys were pinned by an owner that is gone,
 * a new key still gets a slot (it got ENOSPC before, and a handle whose
 * first key could not be pinned never used the fast path), with the next
 * incarnation, and libordlock takes it by CAS. A key pinned by a live
 * owner loses its slot only when no other can, and then that owner's
 * library, which still caches the old slot, fails its CAS on the word's
 * incarnation and pins the key again: the right key is locked (another
 * process sees it held, and the new key of the old slot free). A key held
 * by CAS never loses its slot: with every slot held, a pin gets ENOSPC.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define BASE 1000

/* FAST_PIN of (1, @id) on @fd with the slot's incarnation; the ioctl's result */
static int pin(int fd, uint64_t id, uint32_t *slot, uint32_t *inc)
{
	struct ordlock_fast_pin p = { .size = sizeof(p), .rank = 1, .id = id };
	int ret = ioctl(fd, ORDLOCK_IOC_FAST_PIN, &p);

	if (!ret) {
		*slot = p.slot;
		*inc = p.inc;
	}
	return ret;
}

/* @dom: a fresh domain (named from @prefix) with the fast path */
static void fast_dom(char *dom, const char *prefix)
{
	snprintf(dom, ORDLOCK_DOMAIN_NAME_MAX, "%s", olt_domain(prefix));
	if (olt_fast_domain_set(dom, 1))
		bail_out("fast path on %s: %s", dom, strerror(errno));
}

/* A raw owner of @dom that pinned (1, BASE + i) for every slot; its fd */
static int pin_all(const char *dom)
{
	uint32_t slot, inc, i;
	int fd = olt_raw_fd(), bad = 0;

	if (olt_fd_set_domain(fd, dom))
		bail_out("SET_DOMAIN %s: %s", dom, strerror(errno));
	for (i = 0; i < ORDLOCK_FAST_SLOTS; i++)
		if (pin(fd, BASE + i, &slot, &inc) || slot != i)
			bad++;
	is_int(bad, 0, "an owner pins %d keys: slots 0 to %d, in order",
	       ORDLOCK_FAST_SLOTS, ORDLOCK_FAST_SLOTS - 1);
	return fd;
}

static void test_owners_gone(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k = ORDLOCK_EX(1, 50000);
	uint32_t slot = ~0U, inc = ~0U, s2, i2;
	struct ordlock *ol;
	struct olt_fast f;
	uint64_t w;

	fast_dom(dom, "frg");
	close(pin_all(dom));
	/* a raw member that maps the words, and pins the new key */
	olt_fast_open(&f, dom, 50000, &slot, 0);
	ok(slot < ORDLOCK_FAST_SLOTS,
	   "a new key gets a slot after %d keys were pinned by an owner gone (slot %u)",
	   ORDLOCK_FAST_SLOTS, slot);
	is_int(pin(f.fd, 50000, &s2, &i2), 0, "pinned again: the same slot");
	is_int(s2, slot, "slot %u", slot);
	inc = i2;
	is_int(inc, 1, "the recycled slot's incarnation moved on (1)");
	w = f.words[slot];
	is_int(ORDLOCK_FAST_INC(w), 1, "the word carries it");
	is_int(ORDLOCK_FAST_OWNER(w), 0, "the word is free");

	/* libordlock's first key is the new one: the fast path, by CAS */
	ol = olt_open(dom);
	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "a handle takes 1:50000");
	is_int(olt_nheld(ol), 0, "not in the kernel");
	w = f.words[slot];
	ok(ORDLOCK_FAST_OWNER(w) && ORDLOCK_FAST_OWNER(w) != ORDLOCK_FAST_OWNER_KERNEL,
	   "its word names a member (by CAS): %#llx", (unsigned long long)w);
	is_int(olt_ktry(dom, k, NULL), -EAGAIN, "another process finds 1:50000 held");
	is_int(ordlock_release(ol, &k, 1), 0, "released");
	is_int(ORDLOCK_FAST_OWNER(f.words[slot]), 0, "by CAS: the word is free");
	is_int(ORDLOCK_FAST_INC(f.words[slot]), 1, "with its incarnation");
	ordlock_close(ol);
	olt_fast_close(&f);
	is_int(olt_fast_domain_set(dom, 0), 0, "the fast path off (keys unpinned)");
}

static void test_stale_cache(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k1 = ORDLOCK_EX(1, BASE), n = ORDLOCK_EX(1, 60000);
	uint32_t s1, sn, sk, inc;
	struct ordlock *ol, *ol2;
	struct olt_fast f;
	int fd;

	fast_dom(dom, "frs");
	/* a live owner pinned every slot: 1:1000 is slot 0 */
	fd = pin_all(dom);
	ol = olt_open(dom);
	ol2 = olt_open(dom);
	is_int(ordlock_acquire(ol, &k1, 1, 1000, 0, NULL), 0, "a handle takes 1:%d", BASE);
	is_int(olt_nheld(ol), 0, "by CAS (its library caches slot 0)");
	is_int(ordlock_release(ol, &k1, 1), 0, "and lets it go");
	is_int(ordlock_try_acquire(ol2, &k1, 1, NULL), 0, "a second handle tries it: taken");
	is_int(ordlock_release(ol2, &k1, 1), 0, "and lets it go");

	/* a new key: every slot is pinned by a live owner, one is taken */
	olt_fast_open(&f, dom, 60000, &sn, 0);
	is_int(pin(f.fd, 60000, &sn, &inc), 0, "a new key 1:60000 is pinned");
	is_int(sn, 0, "in slot 0, taken from 1:%d (nobody holds or waits for it)", BASE);
	is_int(inc, 1, "incarnation 1");

	/* the handle's cache still says slot 0, incarnation 0 */
	is_int(ordlock_acquire(ol, &k1, 1, 1000, 0, NULL), 0,
	       "the handle takes 1:%d again", BASE);
	is_int(olt_nheld(ol), 0, "by CAS");
	is_int(ORDLOCK_FAST_OWNER(f.words[sn]), 0,
	       "slot 0 (now 1:60000) was not taken by the stale cache");
	is_int(olt_ktry(dom, n, NULL), 0, "another process takes 1:60000: free");
	is_int(olt_ktry(dom, k1, NULL), -EAGAIN, "and finds 1:%d held", BASE);
	is_int(pin(f.fd, BASE, &s1, &inc), 0, "1:%d has a slot again", BASE);
	ok(s1 != sn, "another one (%u)", s1);
	sk = ORDLOCK_FAST_OWNER(f.words[s1]);
	ok(sk && sk != ORDLOCK_FAST_OWNER_KERNEL, "its word names the handle's owner");
	is_int(ordlock_release(ol, &k1, 1), 0, "released");
	is_int(ORDLOCK_FAST_OWNER(f.words[s1]), 0, "by CAS");
	/* the second handle's cache says slot 0 too: a try pins again, not EAGAIN */
	is_int(ordlock_try_acquire(ol2, &k1, 1, NULL), 0,
	       "the second handle's try of 1:%d (stale cache) takes it", BASE);
	sk = ORDLOCK_FAST_OWNER(f.words[s1]);
	ok(sk && sk != ORDLOCK_FAST_OWNER_KERNEL, "in slot %u, by CAS", s1);
	is_int(ORDLOCK_FAST_OWNER(f.words[sn]), 0, "slot 0 untouched");
	is_int(olt_ktry(dom, k1, NULL), -EAGAIN, "another process finds 1:%d held", BASE);
	is_int(ordlock_release(ol2, &k1, 1), 0, "released");
	ordlock_close(ol2);
	ordlock_close(ol);
	olt_fast_close(&f);
	close(fd);
	is_int(olt_fast_domain_set(dom, 0), 0, "the fast path off (keys unpinned)");
}

static void test_all_held(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k = ORDLOCK_EX(1, 70000);
	uint32_t slot, inc, i;
	struct ordlock *ol;
	struct olt_fast f;
	int fd, bad = 0;
	uint64_t w;

	fast_dom(dom, "frh");
	olt_fast_open(&f, dom, BASE, &slot, 0);
	for (i = 1; i < ORDLOCK_FAST_SLOTS; i++)
		if (pin(f.fd, BASE + i, &slot, &inc))
			bad++;
	for (i = 0; i < ORDLOCK_FAST_SLOTS; i++) {
		w = f.words[i];
		if (!__atomic_compare_exchange_n(&f.words[i], &w,
						 ORDLOCK_FAST_WORD(ORDLOCK_FAST_GEN(w) + 1, f.index),
						 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			bad++;
	}
	is_int(bad, 0, "an owner pins every slot and holds each by CAS");
	fd = olt_raw_fd();
	if (olt_fd_set_domain(fd, dom))
		bail_out("SET_DOMAIN: %s", strerror(errno));
	is_errno(pin(fd, 70000, &slot, &inc), ENOSPC,
		 "a new key: no slot (a held key keeps its slot)");
	close(fd);
	ol = olt_open(dom);
	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0,
	       "a handle whose first key gets no slot takes it (the kernel's path)");
	is_int(olt_nheld(ol), 1, "in the kernel");
	is_int(ordlock_release_all(ol), 0, "released");
	olt_fast_close(&f);
	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0,
	       "once the holder is gone, the same handle takes it again");
	is_int(olt_nheld(ol), 0, "by CAS: its fast path was not given up");
	is_int(ordlock_release(ol, &k, 1), 0, "released");
	ordlock_close(ol);
	fd = olt_raw_fd();
	if (olt_fd_set_domain(fd, dom))
		bail_out("SET_DOMAIN: %s", strerror(errno));
	is_int(pin(fd, 70000, &slot, &inc), 0,
	       "a raw owner's pin of it finds its slot");
	close(fd);
	is_int(olt_fast_domain_set(dom, 0), 0, "the fast path off (keys unpinned)");
}

int main(void)
{
	watchdog_start(120);
	test_owners_gone();
	test_stale_cache();
	test_all_held();
	return tap_done();
}
