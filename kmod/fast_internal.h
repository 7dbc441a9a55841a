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
 * A word is {generation: 32, owner: 24, WAITERS: 1, spare: 7}
 * (include/uapi/linux/ordlock.h; the protocol: fastpath.c).
 */
#ifndef _ORDLOCK_FAST_INTERNAL_H
#define _ORDLOCK_FAST_INTERNAL_H

#include <linux/hash.h>
#include <linux/idr.h>
#include <linux/mm.h>
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
 * @res: its resource, marked fast, never idle while the domain lives
 */
struct ordlock_fast_slot {
	u32 rank;
	u64 id;
	struct ordlock_resource *res;
};

/**
 * struct ordlock_fast_domain - the fast state of a domain
 * @domain_id: the domain's id
 * @nslots: slots in use; written under ordlock_fast_lock with
 *	smp_store_release(), read with smp_load_acquire()
 * @domain: the domain (the fast state is freed before it)
 * @indices: the owner indices in use (1 to ORDLOCK_FAST_OWNER_KERNEL - 1)
 * @owners: the owner of each index in use (the owner table the words
 *	name); stored before the index is handed out, erased before it is
 *	freed. Its xa_lock nests inside the bucket locks: a lookup under it
 *	may use the owner until it is dropped (__ordlock_fast_holder())
 * @pages: the words, zeroed at creation
 * @hash: slot + 1 of a key by its hash (linear probing), 0 when empty;
 *	written under ordlock_fast_lock (smp_store_release()), read without
 * @slots: the pinned keys; entry i is written before @hash and @nslots
 *	publish it, and never changes after
 * @epages: struct ordlock_fast_edges (a header page, then the bits),
 *	zeroed at creation, written under ordlock_fast_lock only
 *
 * ordlock_fast_lock is fast_dev.c's: the device side is what creates the
 * state, pins keys and learns pairs.
 */
struct ordlock_fast_domain {
	u32 domain_id;
	u32 nslots;
	struct ordlock_domain *domain;
	struct ida indices;
	struct xarray owners;
	struct page *pages[ORDLOCK_FAST_NPAGES];
	u16 hash[ORDLOCK_FAST_HASH];
	struct ordlock_fast_slot slots[ORDLOCK_FAST_SLOTS];
	struct page *epages[ORDLOCK_FAST_EPAGES];
};

/**
 * struct ordlock_fast_owner - the fast state of an owner
 * @fd: its domain's fast state
 * @domain: that domain; one reference held
 * @page: the owner page (struct ordlock_fast_page)
 * @index: the owner's index in the words
 */
struct ordlock_fast_owner {
	struct ordlock_fast_domain *fd;
	struct ordlock_domain *domain;
	struct page *page;
	u32 index;
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

static inline u64 ordlock_fast_make(u32 gen, u32 owner)
{
	return ORDLOCK_FAST_WORD(gen, owner);
}

/*
 * The word @old freed at its generation: with WAITERS when @waiters (left
 * free for a woken first waiter that may be passed: fastpath.c)
 */
static inline u64 ordlock_fast_freed(u64 old, bool waiters)
{
	return ordlock_fast_make(ORDLOCK_FAST_GEN(old), 0) |
	       (waiters ? ORDLOCK_FAST_WAITERS : 0);
}

int ordlock_fast_lookup(struct ordlock_fast_domain *fd, u32 rank, u64 id);
int ordlock_fast_let_go(struct ordlock_fast_domain *fd, u32 slot, u32 index,
			u32 gen, bool any_gen);

#endif /* _ORDLOCK_FAST_INTERNAL_H */
