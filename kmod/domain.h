/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Domains: named lock namespaces. Keys of different domains never contend.
 */
#ifndef _ORDLOCK_DOMAIN_H
#define _ORDLOCK_DOMAIN_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/types.h>
#include <linux/ordlock.h>

/**
 * struct ordlock_domain - a lock namespace
 * @node: entry in the list of domains, under ordlock_domains_lock
 * @ref: one reference per owner in the domain, plus one for the default
 *	domain, which lives as long as the module
 * @id: unique number, part of every resource's hash key
 * @next_token: the last fencing token handed out; atomic, no lock
 * @policy: an enum ordlock_policy; read with READ_ONCE()
 * @name: NUL-terminated name
 */
struct ordlock_domain {
	struct list_head node;
	struct kref ref;
	u32 id;
	atomic64_t next_token;
	u32 policy;
	char name[ORDLOCK_DOMAIN_NAME_MAX];
};

int ordlock_domain_init(void);
void ordlock_domain_exit(void);
struct ordlock_domain *ordlock_domain_get(const char *name);
struct ordlock_domain *ordlock_domain_get_default(void);
void ordlock_domain_put(struct ordlock_domain *domain);

/* ordlock_domain_next_token() - a fresh fencing token of @domain */
static inline u64 ordlock_domain_next_token(struct ordlock_domain *domain)
{
	return atomic64_inc_return(&domain->next_token);
}

#endif /* _ORDLOCK_DOMAIN_H */
