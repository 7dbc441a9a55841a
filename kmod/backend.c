// SPDX-License-Identifier: GPL-2.0
/*
 * Lock backends: the registry that companion modules join (see backend.h).
 */
#include <linux/errno.h>
#include <linux/kmod.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include "backend.h"

/*
 * ordlock_backends_lock protects ordlock_backends (the registered backends,
 * linked by backend->node). A leaf, taken alone: see the lock order in
 * main.c. A lookup takes the backend's module reference under it, so that
 * a module on its way out (it unregisters under the lock) is never handed
 * out.
 */
static DEFINE_MUTEX(ordlock_backends_lock);
static LIST_HEAD(ordlock_backends);

static bool ordlock_backend_name_ok(const char *name)
{
	size_t i, len = strnlen(name, ORDLOCK_BACKEND_NAME_MAX);

	if (!len || len == ORDLOCK_BACKEND_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return false;
	return true;
}

static struct ordlock_backend *ordlock_backend_find(const char *name)
{
	struct ordlock_backend *b;

	lockdep_assert_held(&ordlock_backends_lock);
	list_for_each_entry(b, &ordlock_backends, node)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

/**
 * ordlock_backend_register() - make a backend available
 * @backend: the backend, with @name, @owner and every operation set; it
 *	stays registered until ordlock_backend_unregister()
 *
 * Return: 0, -EINVAL for a bad name or missing operation, -EEXIST when a
 * backend of that name is registered already.
 */
int ordlock_backend_register(struct ordlock_backend *backend)
{
	const struct ordlock_backend_ops *ops = backend->ops;
	int ret = 0;

	if (!backend->name || !ordlock_backend_name_ok(backend->name) || !ops ||
	    !ops->join || !ops->leave || !ops->lock || !ops->convert || !ops->unlock ||
	    !ops->value || !ops->set_value || !ops->lock_async ||
	    !ops->lock_result || !ops->convert_async || !ops->convert_result)
		return -EINVAL;
	mutex_lock(&ordlock_backends_lock);
	if (ordlock_backend_find(backend->name))
		ret = -EEXIST;
	else
		list_add_tail(&backend->node, &ordlock_backends);
	mutex_unlock(&ordlock_backends_lock);
	if (!ret)
		pr_info("ordlock: backend %s registered\n", backend->name);
	return ret;
}
EXPORT_SYMBOL_GPL(ordlock_backend_register);

/**
 * ordlock_backend_unregister() - withdraw a registered backend
 * @backend: the backend; nobody uses it (its module is going away, so no
 *	ordlock_backend_get() holds it)
 */
void ordlock_backend_unregister(struct ordlock_backend *backend)
{
	mutex_lock(&ordlock_backends_lock);
	list_del_init(&backend->node);
	mutex_unlock(&ordlock_backends_lock);
	pr_info("ordlock: backend %s unregistered\n", backend->name);
}
EXPORT_SYMBOL_GPL(ordlock_backend_unregister);

static struct ordlock_backend *ordlock_backend_try_get(const char *name)
{
	struct ordlock_backend *b;

	mutex_lock(&ordlock_backends_lock);
	b = ordlock_backend_find(name);
	if (b && !try_module_get(b->owner))
		b = NULL; /* unloading */
	mutex_unlock(&ordlock_backends_lock);
	return b;
}

/**
 * ordlock_backend_get() - take a backend, loading its module if needed
 * @name: the backend's name ("dlm": module ordlock_dlm)
 *
 * May sleep (request_module()). Release with ordlock_backend_put().
 *
 * Return: the backend, pinned; ERR_PTR(-EINVAL) for a bad name,
 * ERR_PTR(-ENOPKG) when no such backend registered even after the attempt
 * to load its module.
 */
struct ordlock_backend *ordlock_backend_get(const char *name)
{
	struct ordlock_backend *b;

	if (!ordlock_backend_name_ok(name))
		return ERR_PTR(-EINVAL);
	b = ordlock_backend_try_get(name);
	if (b)
		return b;
	/* its failure shows as the backend still missing */
	request_module("ordlock_%s", name);
	b = ordlock_backend_try_get(name);
	return b ? b : ERR_PTR(-ENOPKG);
}
EXPORT_SYMBOL_GPL(ordlock_backend_get);

/**
 * ordlock_backend_put() - release a backend taken by ordlock_backend_get()
 * @backend: the backend
 */
void ordlock_backend_put(struct ordlock_backend *backend)
{
	module_put(backend->owner);
}
EXPORT_SYMBOL_GPL(ordlock_backend_put);
