/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fast path (docs/fastpath.md): per domain, module-owned pages of
 * 64-bit words, one per pinned key, that the members take and let go of
 * by compare-and-swap in user space; the kernel's requests, releases and
 * waits on a pinned key's resource go through its word too (resource.c
 * calls the hooks below under the resource's bucket lock).
 */
#ifndef _ORDLOCK_FASTPATH_H
#define _ORDLOCK_FASTPATH_H

#include <linux/types.h>

struct ordlock_domain;
struct ordlock_hold;
struct ordlock_owner;
struct ordlock_rkey;
struct ordlock_resource;
struct ordlock_revoked_key;
struct vm_area_struct;

long ordlock_fast_ioctl(struct ordlock_owner *owner, unsigned int cmd,
			void __user *uarg);
int ordlock_fast_mmap(struct ordlock_owner *owner, struct vm_area_struct *vma);
void ordlock_fast_owner_release(struct ordlock_owner *owner);
void ordlock_fast_domain_free(struct ordlock_domain *domain);
s64 ordlock_fast_npinned(void);
void ordlock_fast_edges_reset(struct ordlock_domain *domain);

/**
 * struct ordlock_fast_holder - a member that holds a key by the fast path,
 *	as the key's word names it (ordlock_fast_holder())
 * @domain: the key's domain
 * @owner: the owner of the word's index in the domain's owner table; NULL
 *	when the index names no owner (shown as unknown)
 * @index: the word's owner index
 * @gen: the word's generation
 */
struct ordlock_fast_holder {
	struct ordlock_domain *domain;
	struct ordlock_owner *owner;
	u32 index;
	u32 gen;
};

typedef bool (*ordlock_fast_holder_fn)(void *arg,
				       const struct ordlock_fast_holder *h);
bool ordlock_fast_holder(struct ordlock_resource *res, ordlock_fast_holder_fn fn,
			 void *arg);
u32 ordlock_fast_index(const struct ordlock_owner *owner);
u32 ordlock_fast_held(struct ordlock_owner *owner);
unsigned int ordlock_fast_revoke(struct ordlock_owner *owner,
				 struct ordlock_revoked_key *keys,
				 unsigned int max);
void ordlock_fast_acknowledge(struct ordlock_owner *owner);
int ordlock_fast_check(struct ordlock_owner *owner, const struct ordlock_rkey *keys,
		       unsigned int n, bool order, bool strict);
struct ordlock_hold *ordlock_fast_adopt(struct ordlock_owner *owner,
					const struct ordlock_rkey *key);
int ordlock_fast_holds(struct ordlock_owner *owner, const struct ordlock_rkey *key);
void ordlock_fast_release_key(struct ordlock_owner *owner, const struct ordlock_rkey *key);
unsigned int ordlock_fast_release_all(struct ordlock_owner *owner);
void ordlock_fast_kernel_sync(struct ordlock_owner *owner, bool busy);
void ordlock_fast_granted(struct ordlock_owner *owner, const struct ordlock_rkey *keys,
			  unsigned int n);

/* The hooks of resource.c, each under the bucket lock of a fast resource */
bool ordlock_fast_claim(struct ordlock_resource *res);
void ordlock_fast_settle(struct ordlock_resource *res);
void ordlock_fast_queued(struct ordlock_resource *res);

#endif /* _ORDLOCK_FASTPATH_H */
