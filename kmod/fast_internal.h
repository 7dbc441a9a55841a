/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fast path's own header: what its three files share, and nothing the
 * engine may see (the engine has the hooks of fastpath.h). As futex's
 * futex.h is for core.c, pi.c and waitwake.c only.
 *
 * The three files share one state, a domain's struct ordlock_fast_domain
 * (its words, its slots and the hash that finds them, its owner table),
 * and one encoding of a word: the word protocol (fastpath.c) reads and
 * changes words under a key's bucket lock; an owner's fast holds
 * (fast_owner.c) are the words that name its index, read as requests and
 * leases need them; the device side (fast_dev.c) makes the state, pins
 * keys into it, maps it, and frees it. Only these helpers cross between
 * them: the slot of a key (ordlock_fast_lookup(), fastpath.c), letting go
 * of a word an owner holds (ordlock_fast_let_go(), fast_owner.c), the
 * settle of a word after that (__ordlock_fast_settle(), fastpath.h), and
 * the state's xarray (ordlock_fast_domains).
 *
 * A word is {generation: 32, owner: 24, WAITERS: 1, incarnation: 7}
 * (include/uapi/linux/ordlock.h; the protocol: fastpath.c).
 */
#ifndef _ORDLOCK_FAST_INTERNAL_H
#define _ORDLOCK_FAST_INTERNAL_H

#include <linux/hash.h>
#include <linux/idr.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/xarray.h>
#include <linux/ordlock.h>

#include "fastpath.h"

#define ORDLOCK_FAST_WPP	(PAGE_SIZE / sizeof(u64))
#define ORDLOCK_FAST_NPAGES	DIV_ROUND_UP(ORDLOCK_FAST_SLOTS, ORDLOCK_FAST_WPP)
#define ORDLOCK_FAST_HASH_BITS	11
#define ORDLOCK_FAST_HASH	BIT(ORDLOCK_FAST_HASH_BITS)
/* Compare-and-swap attempts before a word is taken for busy or corrupt */
#define ORDLOCK_FAST_TRIES	64
#define ORDLOCK_FAST_K		ORDLOCK_FAST_OWNER_KERNEL
/* The pages of struct ordlock_fast_edges */
#define ORDLOCK_FAST_EPAGES	DIV_ROUND_UP(ORDLOCK_FAST_EDGES_SIZE, PAGE_SIZE)

/**
 * struct ordlock_fast_slot - a pinned key
 * @rank: key rank
 * @id: key id
 * @res: its resource, marked fast, never idle while it has a slot (nor
 *	while it is retiring: until a grace period after it lost its slot)
 * @node: on the domain's retiring list, after it lost its slot
 * @cookie: the grace period that ends its retirement
 *
 * Made by a pin and never changed: a slot that is recycled gets a new one
 * (ordlock_fast_domain @slots, under RCU), the old one retires.
 */
struct ordlock_fast_slot {
	u32 rank;
	u64 id;
	struct ordlock_resource *res;
	struct list_head node;
	unsigned long cookie;
};

/* A hash entry of a key that lost its slot: skipped by lookups */
#define ORDLOCK_FAST_TOMB	U16_MAX
/* Tombstones that make a pin rebuild the hash */
#define ORDLOCK_FAST_TOMB_MAX	(ORDLOCK_FAST_HASH / 4)
#define ORDLOCK_FAST_BITMAP	BITS_TO_LONGS(ORDLOCK_FAST_SLOTS)

/**
 * struct ordlock_fast_domain - the fast state of a domain
 * @domain_id: the domain's id
 * @nslots: slots ever used (a slot below is used, or free for a pin);
 *	written under ordlock_fast_lock with smp_store_release(), read with
 *	smp_load_acquire()
 * @domain: the domain (the fast state is freed before it)
 * @indices: the owner indices in use (1 to ORDLOCK_FAST_OWNER_KERNEL - 1)
 * @owners: the owner of each index in use (the owner table the words
 *	name); stored before the index is handed out, erased before it is
 *	freed. Its xa_lock nests inside the bucket locks: a lookup under it
 *	may use the owner until it is dropped (__ordlock_fast_holder())
 * @pages: the words, zeroed at creation
 * @hash: one of @hashes: slot + 1 of a key by its hash (linear probing),
 *	0 when empty, ORDLOCK_FAST_TOMB for a key that lost its slot;
 *	written under ordlock_fast_lock (smp_store_release()), read without,
 *	under RCU. A rebuild fills the other array and publishes it
 * @hashes: the two arrays of @hash
 * @hash_cookie: the grace period after which the array not in use may be
 *	rebuilt (readers of it are gone)
 * @ntomb: tombstones in @hash
 * @slots: the pinned key of each slot, NULL for a free one; written under
 *	ordlock_fast_lock (rcu_assign_pointer(): a recycled slot swaps it
 *	under the old key's bucket lock), read under RCU
 * @inc: each slot's incarnation (the word's ORDLOCK_FAST_INC bits, the
 *	kernel's copy), moved on when the slot is recycled; ordlock_fast_lock
 * @pins: live owners that pinned each slot's key (struct
 *	ordlock_fast_owner @pinned); ordlock_fast_lock
 * @stale: live owners whose pin of the slot was taken by a recycling (they
 *	may cache an incarnation from @stale_base to @inc); ordlock_fast_lock
 * @stale_base: the oldest incarnation those may cache
 * @free: slots recycled and not used yet (a pin that failed after), @nfree
 * @nfree: entries of @free
 * @cursor: where the next search for a slot to recycle starts
 * @retiring: struct ordlock_fast_slot of keys that lost their slot, until
 *	their grace period ends (ordlock_fast_lock)
 * @epages: struct ordlock_fast_edges (a header page, then the bits),
 *	zeroed at creation, written under ordlock_fast_lock only
 *
 * ordlock_fast_lock is fast_dev.c's: the device side is what creates the
 * state, pins keys and recycles slots, and learns pairs.
 */
struct ordlock_fast_domain {
	u32 domain_id;
	u32 nslots;
	struct ordlock_domain *domain;
	struct ida indices;
	struct xarray owners;
	struct page *pages[ORDLOCK_FAST_NPAGES];
	u16 __rcu *hash;
	u16 hashes[2][ORDLOCK_FAST_HASH];
	unsigned long hash_cookie;
	u32 ntomb;
	struct ordlock_fast_slot __rcu *slots[ORDLOCK_FAST_SLOTS];
	u8 inc[ORDLOCK_FAST_SLOTS];
	u8 stale_base[ORDLOCK_FAST_SLOTS];
	u32 pins[ORDLOCK_FAST_SLOTS];
	u32 stale[ORDLOCK_FAST_SLOTS];
	u16 free[ORDLOCK_FAST_SLOTS];
	u32 nfree;
	u32 cursor;
	struct list_head retiring;
	struct page *epages[ORDLOCK_FAST_EPAGES];
};

/**
 * struct ordlock_fast_owner - the fast state of an owner
 * @fd: its domain's fast state
 * @domain: that domain; one reference held
 * @page: the owner page (struct ordlock_fast_page)
 * @index: the owner's index in the words
 * @pinned: the slots whose key it pinned (a reference each: such a slot
 *	is recycled only when no slot without references can be);
 *	ordlock_fast_lock
 * @stale: the slots whose pin a recycling took from it (its library may
 *	cache an old incarnation of them); ordlock_fast_lock
 */
struct ordlock_fast_owner {
	struct ordlock_fast_domain *fd;
	struct ordlock_domain *domain;
	struct page *page;
	u32 index;
	unsigned long pinned[ORDLOCK_FAST_BITMAP];
	unsigned long stale[ORDLOCK_FAST_BITMAP];
};

/*
 * The fast state of each domain that has one, by domain id (fastpath.c):
 * stored and erased by fast_dev.c under ordlock_fast_lock, looked up
 * without it (a resource marked fast, under its bucket lock, keeps its
 * domain's state)
 */
extern struct xarray ordlock_fast_domains;

static inline u64 *ordlock_fast_wordp(struct ordlock_fast_domain *fd, u32 slot)
{
	return (u64 *)page_address(fd->pages[slot / ORDLOCK_FAST_WPP]) +
	       slot % ORDLOCK_FAST_WPP;
}

/* Whether the word of @slot names owner @index now (read once) */
static inline bool ordlock_fast_names(struct ordlock_fast_domain *fd, u32 slot,
				      u32 index)
{
	return ORDLOCK_FAST_OWNER(READ_ONCE(*ordlock_fast_wordp(fd, slot))) == index;
}

static inline u32 ordlock_fast_hash(u32 rank, u64 id)
{
	return hash_64(id ^ ((u64)rank << 32 | rank), ORDLOCK_FAST_HASH_BITS);
}

/* The word of generation @gen and owner @owner, with the incarnation of @old */
static inline u64 ordlock_fast_make(u64 old, u32 gen, u32 owner)
{
	return ORDLOCK_FAST_WORD(gen, owner) | (old & ORDLOCK_FAST_INC_MASK);
}

/* The key of @slot, under RCU (or ordlock_fast_lock); NULL when free */
static inline struct ordlock_fast_slot *
ordlock_fast_slot(struct ordlock_fast_domain *fd, u32 slot)
{
	return rcu_dereference_check(fd->slots[slot], 1);
}

/*
 * The word @old freed at its generation: with WAITERS when @waiters (left
 * free for a woken first waiter that may be passed: fastpath.c)
 */
static inline u64 ordlock_fast_freed(u64 old, bool waiters)
{
	return ordlock_fast_make(old, ORDLOCK_FAST_GEN(old), 0) |
	       (waiters ? ORDLOCK_FAST_WAITERS : 0);
}

int ordlock_fast_lookup(struct ordlock_fast_domain *fd, u32 rank, u64 id);
int ordlock_fast_let_go(struct ordlock_fast_domain *fd, u32 slot, u32 index,
			u32 gen, bool any_gen);

#endif /* _ORDLOCK_FAST_INTERNAL_H */
