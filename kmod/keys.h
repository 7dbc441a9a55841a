/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keys of a request: validation, order, sorting and merging.
 *
 * This file has no locks and no state: it is pure logic, built into the
 * module and into the host-side unit tests (tests/unit/).
 */
#ifndef _ORDLOCK_KEYS_H
#define _ORDLOCK_KEYS_H

#include <linux/types.h>
#include <linux/ordlock.h>

/**
 * struct ordlock_rkey - a key of a request, as the kernel works on it
 * @id: resource id
 * @rank: resource rank
 * @mode: ORDLOCK_MODE_SHARED or ORDLOCK_MODE_EXCLUSIVE
 * @index: position of the key in the caller's array (the first one, when
 *	duplicates were merged)
 */
struct ordlock_rkey {
	u64 id;
	u32 rank;
	u32 mode;
	u32 index;
};

/* ordlock_key_cmp() - order of two keys: by rank, then id; mode is ignored */
static inline int ordlock_key_cmp(u32 rank_a, u64 id_a, u32 rank_b, u64 id_b)
{
	if (rank_a != rank_b)
		return rank_a < rank_b ? -1 : 1;
	if (id_a != id_b)
		return id_a < id_b ? -1 : 1;
	return 0;
}

static inline int ordlock_rkey_cmp(const struct ordlock_rkey *a,
				   const struct ordlock_rkey *b)
{
	return ordlock_key_cmp(a->rank, a->id, b->rank, b->id);
}

static inline bool ordlock_mode_valid(u32 mode)
{
	return mode == ORDLOCK_MODE_SHARED || mode == ORDLOCK_MODE_EXCLUSIVE;
}

/* ordlock_modes_conflict() - true unless both modes are shared */
static inline bool ordlock_modes_conflict(u32 a, u32 b)
{
	return a == ORDLOCK_MODE_EXCLUSIVE || b == ORDLOCK_MODE_EXCLUSIVE;
}

int ordlock_keys_import(struct ordlock_rkey *out, const struct ordlock_key *in,
			unsigned int n, bool mode_required, unsigned int *bad);
unsigned int ordlock_keys_sort_merge(struct ordlock_rkey *keys, unsigned int n);
int ordlock_domain_name_valid(const char *name);
void ordlock_comm_sanitize(char *dst, const char *src);
int ordlock_domain_name_check(const char *name);
int ordlock_rank_name_check(const char *name);
const char *ordlock_mode_str(u32 mode);

#endif /* _ORDLOCK_KEYS_H */
