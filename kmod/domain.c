// SPDX-License-Identifier: GPL-2.0
/*
 * Domains: created on first use by name, freed with their last owner. The
 * default domain is created at load time and lives until unload.
 */
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "domain.h"
#include "keys.h"
#include "params.h"

/*
 * ordlock_domains_lock protects ordlock_domains, ordlock_ndomains and
 * ordlock_domain_ids. It nests inside owner->lock and takes no other lock.
 */
static DEFINE_MUTEX(ordlock_domains_lock);
static LIST_HEAD(ordlock_domains);
static unsigned int ordlock_ndomains;
static u32 ordlock_domain_ids;
static struct ordlock_domain *ordlock_default_domain;

static struct ordlock_domain *ordlock_domain_find(const char *name)
{
	struct ordlock_domain *domain;

	lockdep_assert_held(&ordlock_domains_lock);
	list_for_each_entry(domain, &ordlock_domains, node)
		if (!strcmp(domain->name, name))
			return domain;
	return NULL;
}

/**
 * ordlock_domain_get() - find or create a domain and take a reference
 * @name: a valid name (see ordlock_domain_name_valid())
 *
 * Return: the domain, ERR_PTR(-ENOSPC) when max_domains exist already, or
 * ERR_PTR(-ENOMEM).
 */
struct ordlock_domain *ordlock_domain_get(const char *name)
{
	struct ordlock_domain *domain;

	mutex_lock(&ordlock_domains_lock);
	domain = ordlock_domain_find(name);
	if (domain) {
		kref_get(&domain->ref);
		goto out;
	}
	if (ordlock_ndomains >= ordlock_max_domains()) {
		domain = ERR_PTR(-ENOSPC);
		goto out;
	}
	domain = kzalloc(sizeof(*domain), GFP_KERNEL_ACCOUNT);
	if (!domain) {
		domain = ERR_PTR(-ENOMEM);
		goto out;
	}
	kref_init(&domain->ref);
	domain->id = ++ordlock_domain_ids;
	atomic64_set(&domain->next_token, 0);
	domain->policy = ORDLOCK_POLICY_ENFORCE;
	strscpy(domain->name, name, sizeof(domain->name));
	list_add_tail(&domain->node, &ordlock_domains);
	ordlock_ndomains++;
out:
	mutex_unlock(&ordlock_domains_lock);
	return domain;
}

/* ordlock_domain_get_default() - a new reference to the default domain */
struct ordlock_domain *ordlock_domain_get_default(void)
{
	kref_get(&ordlock_default_domain->ref);
	return ordlock_default_domain;
}

static void ordlock_domain_free(struct kref *ref)
{
	struct ordlock_domain *domain = container_of(ref, struct ordlock_domain, ref);

	lockdep_assert_held(&ordlock_domains_lock);
	list_del(&domain->node);
	ordlock_ndomains--;
	mutex_unlock(&ordlock_domains_lock);
	kfree(domain);
}

/* ordlock_domain_put() - drop a reference; the last one frees the domain */
void ordlock_domain_put(struct ordlock_domain *domain)
{
	kref_put_mutex(&domain->ref, ordlock_domain_free, &ordlock_domains_lock);
}

int ordlock_domain_init(void)
{
	struct ordlock_domain *domain = ordlock_domain_get(ORDLOCK_DEFAULT_DOMAIN);

	if (IS_ERR(domain))
		return PTR_ERR(domain);
	ordlock_default_domain = domain;
	return 0;
}

void ordlock_domain_exit(void)
{
	ordlock_domain_put(ordlock_default_domain);
	ordlock_default_domain = NULL;
	WARN_ON(!list_empty(&ordlock_domains));
}
