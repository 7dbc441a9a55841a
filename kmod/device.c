// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/ordlock: each open file description is an owner. The ioctls are
 * dispatched from one table; every argument starts with its size, is copied
 * in once (at its current size with a copy of a size known at build time,
 * else with copy_struct_from_user()), and is copied back up to the
 * caller's size.
 */
#include <linux/fs.h>
#include <linux/major.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "access.h"
#include "device.h"
#include "domain.h"
#include "fastpath.h"
#include "keys.h"
#include "order.h"
#include "lease.h"
#include "owner.h"
#include "params.h"
#include "request.h"
#include "xdetect.h"

/* Requests of at most this many keys need no allocation for the keys */
#define ORDLOCK_STACK_KEYS 4

union ordlock_ioctl_buffer {
	struct ordlock_acquire acquire;
	struct ordlock_release release;
	struct ordlock_set_domain set_domain;
	struct ordlock_owner_info owner_info;
	struct ordlock_last_failure last_failure;
	struct ordlock_convert convert;
	struct ordlock_domain_config domain_config;
	struct ordlock_set_label set_label;
	struct ordlock_order_get order_get;
	struct ordlock_renew renew;
	struct ordlock_token_check token_check;
};

/* The arguments of the compact ioctls, as the caller passed them */
union ordlock_compact {
	struct ordlock_lock lock;
	struct ordlock_unlock unlock;
};

/**
 * struct ordlock_ioctl_op - one entry of the dispatch table
 * @size: size of the kernel's structure
 * @min_size: the first published size of the structure
 * @cmd: the ioctl number
 * @copy_out_on_error: the structure carries a failure record
 * @write_first: @execute acts and cannot be undone: the caller's structure
 *	is written back unchanged before it runs, so that a structure that
 *	cannot be written fails with EFAULT having changed nothing
 * @execute: does the work, with the owner locked
 * @undo: reverts a successful @execute whose result could not be copied out
 * @compact_in: a compact form (no size first, DOC: Compact ioctls): reads
 *	the argument at @uarg into *@c and converts it into the full form's
 *	structure in @buf, for the full form's @execute, which validates it;
 *	converting is all it does
 * @compact_out: writes back to @uarg what the full form's result @ret in
 *	@buf changed, with the owner locked; returns the call's result (@ret,
 *	-EFAULT, or a count)
 */
struct ordlock_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	unsigned int cmd;
	bool copy_out_on_error;
	bool write_first;
	/* runs without owner->lock (it may wait for the cluster) */
	bool unlocked;
	int (*execute)(struct ordlock_owner *owner, union ordlock_ioctl_buffer *buf);
	void (*undo)(struct ordlock_owner *owner, union ordlock_ioctl_buffer *buf);
	int (*compact_in)(union ordlock_ioctl_buffer *buf, union ordlock_compact *c,
			  void __user *uarg);
	long (*compact_out)(void __user *uarg, const union ordlock_ioctl_buffer *buf,
			    const union ordlock_compact *c, int ret);
};

/* Scratch space for the keys of a request: user keys, then kernel keys */
struct ordlock_keybuf {
	struct ordlock_key ukeys[ORDLOCK_STACK_KEYS];
	struct ordlock_rkey keys[ORDLOCK_STACK_KEYS];
	void *heap;
};

static int ordlock_fail_invalid(struct ordlock_owner *owner, int err)
{
	return ordlock_owner_fail(owner, ORDLOCK_REASON_INVALID, err, NULL);
}

/*
 * The timeout of a wait of ioctl @cmd whose argument asks for
 * @arg_timeout_ns: a call that continues a wait of the same thread that a
 * signal interrupted (restarted by the kernel, or issued again with the
 * timeout_ns the kernel wrote back) keeps the first deadline; any other
 * call gets ordlock_timeout_ns().  The owner is locked.
 */
static u64 ordlock_wait_timeout(struct ordlock_owner *owner, u32 cmd,
				u64 arg_timeout_ns)
{
	struct ordlock_restart *r = &owner->restart;
	u64 timeout_ns;

	lockdep_assert_held(&owner->lock);
	if (r->cmd == cmd && r->left_ns == arg_timeout_ns &&
	    r->tid == task_pid_nr(current) && r->tid_start == current->start_time)
		timeout_ns = max_t(s64, ktime_to_ns(ktime_sub(r->deadline,
							      ktime_get())), 1);
	else
		timeout_ns = ordlock_timeout_ns(arg_timeout_ns);
	r->cmd = 0;
	return timeout_ns;
}

/*
 * A wait of ioctl @cmd whose deadline is @deadline was interrupted by a
 * signal: write the time that is left into *@arg_timeout_ns (copied
 * back to the caller, as select(2) does), remember the deadline for the
 * call that continues it (ordlock_wait_timeout()) and ask for a restart.
 * The signal code restarts the call when no handler runs (a stop and
 * continue, ptrace) or the handler has SA_RESTART; otherwise the caller
 * sees EINTR.
 */
static int ordlock_wait_interrupted(struct ordlock_owner *owner, u32 cmd,
				    __u64 *arg_timeout_ns, ktime_t deadline)
{
	struct ordlock_restart *r = &owner->restart;

	lockdep_assert_held(&owner->lock);
	/* 0 would mean the default timeout: 1 ns times out at once */
	r->left_ns = max_t(s64, ktime_to_ns(ktime_sub(deadline, ktime_get())), 1);
	r->deadline = deadline;
	r->tid = task_pid_nr(current);
	r->tid_start = current->start_time;
	r->cmd = cmd;
	*arg_timeout_ns = r->left_ns;
	return -ERESTARTSYS;
}

/*
 * Copy @count keys from @src into @dst: the few keys that fit on the stack
 * with a copy of a size known at build time (no hardened-usercopy walk of
 * the object, see ordlock_arg_in()). Return: the bytes not copied.
 */
static unsigned long ordlock_copy_ukeys(struct ordlock_key *dst,
					const void __user *src, unsigned int count)
{
	BUILD_BUG_ON(ORDLOCK_STACK_KEYS != 4);
	switch (count) {
	case 1:
		return copy_from_user(dst, src, sizeof(*dst));
	case 2:
		return copy_from_user(dst, src, 2 * sizeof(*dst));
	case 3:
		return copy_from_user(dst, src, 3 * sizeof(*dst));
	case 4:
		return copy_from_user(dst, src, 4 * sizeof(*dst));
	}
	return copy_from_user(dst, src, array_size(count, sizeof(*dst)));
}

/*
 * Copy @n keys from @uptr once, validate, sort and merge them. On success
 * *@keys points at the merged keys and *@n is their number.
 */
static int ordlock_copy_keys(struct ordlock_owner *owner, struct ordlock_keybuf *kb,
			     u64 uptr, unsigned int *n, bool mode_required,
			     struct ordlock_rkey **keys)
{
	struct ordlock_key *ukeys = kb->ukeys;
	struct ordlock_rkey *rkeys = kb->keys;
	unsigned int bad, count = *n;
	size_t bytes;
	int ret;

	kb->heap = NULL;
	if (!count)
		return ordlock_fail_invalid(owner, -EINVAL);
	if (count > (mode_required ? ordlock_max_keys_per_request() :
		     ordlock_max_keys_per_release()))
		return ordlock_fail_invalid(owner, -E2BIG);
	if (count > ORDLOCK_STACK_KEYS) {
		bytes = size_add(array_size(count, sizeof(*ukeys)),
				 array_size(count, sizeof(*rkeys)));
		kb->heap = kvmalloc(bytes, GFP_KERNEL_ACCOUNT);
		if (!kb->heap)
			return ordlock_owner_fail(owner, ORDLOCK_REASON_NOMEM,
						  -ENOMEM, NULL);
		rkeys = kb->heap;
		ukeys = (struct ordlock_key *)(rkeys + count);
	}
	if (ordlock_copy_ukeys(ukeys, u64_to_user_ptr(uptr), count)) {
		ret = ordlock_fail_invalid(owner, -EFAULT);
		goto err;
	}
	ret = ordlock_keys_import(rkeys, ukeys, count, mode_required, &bad);
	if (ret) {
		ordlock_fail_invalid(owner, ret);
		owner->failure.index = bad;
		owner->failure.key = ukeys[bad];
		goto err;
	}
	*n = ordlock_keys_sort_merge(rkeys, count);
	*keys = rkeys;
	return 0;
err:
	kvfree(kb->heap);
	kb->heap = NULL;
	return ret;
}

static int ordlock_ioctl_acquire(struct ordlock_owner *owner,
				 union ordlock_ioctl_buffer *buf)
{
	struct ordlock_acquire *arg = &buf->acquire;
	struct ordlock_rkey *keys;
	struct ordlock_keybuf kb __uninitialized;
	unsigned int n = arg->nkeys;
	ktime_t deadline;
	u64 timeout_ns;
	int ret;

	arg->token = 0;
	arg->result_flags = 0;
	memset(&arg->failure, 0, sizeof(arg->failure));
	if (arg->flags & ~ORDLOCK_ACQUIRE_FLAGS || arg->__reserved2) {
		ret = ordlock_fail_invalid(owner, -EINVAL);
		goto out;
	}
	/*
	 * A revoked owner acknowledges first (busy: the request says EBUSY).
	 * Without a lease (ordlock_lease_none()) there is nothing to check.
	 */
	if (!owner->busy && !ordlock_lease_none(&owner->lease)) {
		ret = ordlock_lease_check(owner);
		if (ret)
			goto out;
	}
	ret = ordlock_copy_keys(owner, &kb, arg->keys, &n, true, &keys);
	if (ret)
		goto out;
	timeout_ns = ordlock_wait_timeout(owner, ORDLOCK_IOC_ACQUIRE, arg->timeout_ns);
	/* the clock is read only by a wait: its deadline is the restart's */
	ret = ordlock_req_acquire(owner, keys, n, timeout_ns, arg->flags,
				  &arg->token, &arg->result_flags, &deadline);
	/* (kvfree(NULL) is two calls: the keys are on the stack mostly) */
	if (kb.heap)
		kvfree(kb.heap);
	/* No lease asked for and no max_hold_ms: ordlock_lease_granted() is a no-op */
	if (!ret && (arg->lease_ms || READ_ONCE(owner->domain->max_hold_ms)))
		ordlock_lease_granted(owner, arg->lease_ms);
	/* A lease that expired while the request waited: revoked now */
	if (ret != -EBUSY && !ordlock_lease_none(&owner->lease) &&
	    ordlock_lease_check(owner)) {
		arg->token = 0;
		ret = -EKEYEXPIRED;
	}
	/* A wait that let held keys go is not restarted: the caller must know */
	if (ret == -EINTR && !(arg->result_flags & ORDLOCK_RESULT_RELEASED))
		ret = ordlock_wait_interrupted(owner, ORDLOCK_IOC_ACQUIRE,
					       &arg->timeout_ns, deadline);
out:
	/* EBUSY: another request of the owner is waiting, and owns the record */
	if (ret && ret != -EBUSY)
		arg->failure = owner->failure;
	return ret;
}

static void ordlock_ioctl_acquire_undo(struct ordlock_owner *owner,
				       union ordlock_ioctl_buffer *buf)
{
	ordlock_req_release_token(owner, buf->acquire.token);
}

static int ordlock_ioctl_release(struct ordlock_owner *owner,
				 union ordlock_ioctl_buffer *buf)
{
	struct ordlock_release *arg = &buf->release;
	struct ordlock_rkey *keys;
	struct ordlock_keybuf kb __uninitialized;
	unsigned int n = arg->nkeys;
	int ret;

	arg->released = 0;
	memset(&arg->failure, 0, sizeof(arg->failure));
	if (arg->flags & ~ORDLOCK_RELEASE_FLAGS || arg->__reserved ||
	    arg->__reserved2) {
		ret = ordlock_fail_invalid(owner, -EINVAL);
		goto out;
	}
	if (arg->flags & ORDLOCK_RELEASE_ALL) {
		if (arg->nkeys || arg->keys) {
			ret = ordlock_fail_invalid(owner, -EINVAL);
			goto out;
		}
		if (owner->busy)
			return -EBUSY;
		arg->released = ordlock_req_release_all(owner);
		/* And acknowledges a revocation */
		if (!ordlock_lease_none(&owner->lease))
			ordlock_lease_acknowledge(owner);
		arg->released += ordlock_fast_release_all(owner);
		return 0;
	}
	if (!owner->busy && !ordlock_lease_none(&owner->lease)) {
		ret = ordlock_lease_check(owner);
		if (ret)
			goto out;
	}
	ret = ordlock_copy_keys(owner, &kb, arg->keys, &n, false, &keys);
	if (ret)
		goto out;
	ret = ordlock_req_release_keys(owner, keys, n);
	if (!ret)
		arg->released = n;
	ordlock_fast_kernel_sync(owner, false);
	if (kb.heap)
		kvfree(kb.heap);
out:
	/* EBUSY: another request of the owner is waiting, and owns the record */
	if (ret && ret != -EBUSY)
		arg->failure = owner->failure;
	return ret;
}

static int ordlock_ioctl_set_domain(struct ordlock_owner *owner,
				    union ordlock_ioctl_buffer *buf)
{
	struct ordlock_set_domain *arg = &buf->set_domain;

	if (arg->flags)
		return -EINVAL;
	if (!owner->busy && ordlock_lease_check(owner))
		return -EKEYEXPIRED;
	return ordlock_owner_set_domain(owner, arg->name);
}

static int ordlock_ioctl_owner_info(struct ordlock_owner *owner,
				    union ordlock_ioctl_buffer *buf)
{
	struct ordlock_owner_info *arg = &buf->owner_info;

	if (arg->flags)
		return -EINVAL;
	arg->owner_id = owner->id;
	arg->nheld = owner->nheld;
	arg->policy = READ_ONCE(owner->domain->policy);
	memcpy(arg->domain, owner->domain->name, sizeof(arg->domain));
	arg->last_token = owner->last_token;
	return 0;
}

static int ordlock_ioctl_last_failure(struct ordlock_owner *owner,
				      union ordlock_ioctl_buffer *buf)
{
	struct ordlock_last_failure *arg = &buf->last_failure;
	unsigned int n = 0;

	struct ordlock_lease *l = &owner->lease;
	unsigned int r = 0;

	if (arg->flags || arg->__reserved || arg->__reserved2)
		return -EINVAL;
	if ((arg->nsteps && !arg->steps) || (arg->nrevoked && !arg->revoked))
		return -EINVAL;
	arg->failure = owner->failure;
	if (owner->failure.reason == ORDLOCK_REASON_DEADLOCK && owner->cycle)
		n = min(arg->nsteps, owner->ncycle);
	if (n && copy_to_user(u64_to_user_ptr(arg->steps), owner->cycle,
			      array_size(n, sizeof(*owner->cycle))))
		return -EFAULT;
	arg->nsteps = n;
	if (n && arg->nodes && ordlock_xd_copy_nodes(owner, arg->nodes, n))
		return -EFAULT;
	if (owner->failure.reason == ORDLOCK_REASON_REVOKED && l->revoked &&
	    l->keys)
		r = min(arg->nrevoked, l->nkeys);
	if (r && copy_to_user(u64_to_user_ptr(arg->revoked), l->keys,
			      array_size(r, sizeof(*l->keys))))
		return -EFAULT;
	arg->nrevoked = r;
	return 0;
}

static int ordlock_ioctl_convert(struct ordlock_owner *owner,
				 union ordlock_ioctl_buffer *buf)
{
	struct ordlock_convert *arg = &buf->convert;
	struct ordlock_rkey key;
	unsigned int bad;
	u64 timeout_ns;
	ktime_t start;
	int ret;

	arg->token = 0;
	memset(&arg->failure, 0, sizeof(arg->failure));
	if (arg->flags & ~ORDLOCK_ACQUIRE_TRY) {
		ret = ordlock_fail_invalid(owner, -EINVAL);
		goto out;
	}
	ret = owner->busy ? 0 : ordlock_lease_check(owner);
	if (ret)
		goto out;
	ret = ordlock_keys_import(&key, &arg->key, 1, true, &bad);
	if (ret) {
		ordlock_fail_invalid(owner, ret);
		owner->failure.key = arg->key;
		goto out;
	}
	timeout_ns = ordlock_wait_timeout(owner, ORDLOCK_IOC_CONVERT, arg->timeout_ns);
	start = ktime_get();
	ret = ordlock_req_convert(owner, &key, timeout_ns,
				  arg->flags & ORDLOCK_ACQUIRE_TRY, &arg->token);
	if (ret != -EBUSY && ordlock_lease_check(owner)) {
		arg->token = 0;
		ret = -EKEYEXPIRED;
	}
	if (ret == -EINTR)
		ret = ordlock_wait_interrupted(owner, ORDLOCK_IOC_CONVERT,
					       &arg->timeout_ns,
					       ktime_add_ns(start, timeout_ns));
out:
	/* EBUSY: another request of the owner is waiting, and owns the record */
	if (ret && ret != -EBUSY)
		arg->failure = owner->failure;
	return ret;
}

static int ordlock_ioctl_domain_config(struct ordlock_owner *owner,
				       union ordlock_ioctl_buffer *buf)
{
	struct ordlock_domain_config *arg = &buf->domain_config;
	struct ordlock_domain_settings set = {
		.flags = arg->flags,
		.policy = arg->policy,
		.detect_delay_ms = arg->detect_delay_ms,
		.max_hold_ms = arg->max_hold_ms,
		.cluster = arg->cluster,
		.fastpath = arg->fastpath,
	};
	struct ordlock_domain *domain;
	int ret;

	if (arg->flags & ~ORDLOCK_DOMAIN_FLAGS ||
	    ordlock_domain_name_valid(arg->name))
		return -EINVAL;
	if ((arg->flags & ORDLOCK_DOMAIN_SET_STRICT) && arg->strict > 1)
		return -EINVAL;
	if ((arg->flags & ORDLOCK_DOMAIN_SET_CLUSTER) && arg->cluster > 1)
		return -EINVAL;
	if (arg->flags & ORDLOCK_DOMAIN_SET_FASTPATH) {
		if (arg->fastpath > 1)
			return -EINVAL;
		set.fast_uid = make_kuid(current_user_ns(), arg->fastpath_uid);
		if (arg->fastpath && !uid_valid(set.fast_uid))
			return -EINVAL;
	}
	if ((set.flags & ORDLOCK_DOMAIN_SET_STRICT) && arg->strict)
		set.flags |= ORDLOCK_DOMAIN_STRICT_ON;
	/*
	 * A domain created here is the owner's user's, like one it moves to.
	 * Called without the owner's lock (the cluster join may take long).
	 */
	ret = ordlock_domain_configure_admin(arg->name, &set, owner->user,
					     owner->user_exempt, &domain);
	if (ret) {
		if (set.why)
			pr_info_ratelimited("ordlock: domain %s: %s\n", arg->name,
					    set.why);
		return ret;
	}
	arg->policy = READ_ONCE(domain->policy);
	arg->detect_delay_ms = READ_ONCE(domain->detect_delay_ms);
	arg->strict = READ_ONCE(domain->strict);
	arg->max_hold_ms = READ_ONCE(domain->max_hold_ms);
	arg->cluster = !!READ_ONCE(domain->backend);
	arg->fastpath = READ_ONCE(domain->fastpath);
	arg->fastpath_uid = arg->fastpath ?
			    from_kuid_munged(current_user_ns(), domain->fast_uid) : 0;
	arg->nowners = atomic_read(&domain->owners.cur);
	ordlock_domain_put(domain);
	return 0;
}

static int ordlock_ioctl_set_label(struct ordlock_owner *owner,
				   union ordlock_ioctl_buffer *buf)
{
	struct ordlock_set_label *arg = &buf->set_label;

	if (arg->flags || ordlock_order_label_check(arg->label))
		return -EINVAL;
	strscpy(owner->label, arg->label, sizeof(owner->label));
	return 0;
}

static int ordlock_ioctl_get_order(struct ordlock_owner *owner,
				   union ordlock_ioctl_buffer *buf)
{
	struct ordlock_order_get *arg = &buf->order_get;
	struct ordlock_domain *domain;
	int ret;

	if (arg->flags || arg->__reserved || arg->__reserved2 ||
	    ordlock_domain_name_valid(arg->domain))
		return -EINVAL;
	domain = ordlock_domain_find_get(arg->domain);
	if (!domain)
		return -ENOENT;
	ret = ordlock_order_get(domain, arg, capable(CAP_SYS_ADMIN),
				from_kuid_munged(&init_user_ns, current_euid()));
	ordlock_domain_put(domain);
	return ret;
}

static int ordlock_ioctl_renew(struct ordlock_owner *owner,
			       union ordlock_ioctl_buffer *buf)
{
	struct ordlock_renew *arg = &buf->renew;
	int ret;

	arg->left_ms = 0;
	memset(&arg->failure, 0, sizeof(arg->failure));
	if (arg->flags & ~ORDLOCK_RENEW_FLAGS ||
	    (!(arg->flags & ORDLOCK_RENEW_SET_SIGNAL) && arg->signal) ||
	    arg->signal > _NSIG) {
		ret = ordlock_fail_invalid(owner, -EINVAL);
		goto out;
	}
	if (owner->busy)
		return -EBUSY;
	if (arg->flags & ORDLOCK_RENEW_SET_SIGNAL) {
		ret = ordlock_lease_check(owner);
		if (ret)
			goto out;
		/* Setting the signal alone needs nothing held */
		if (!owner->nheld)
			return ordlock_lease_set_signal(owner, arg->signal);
	}
	ret = ordlock_lease_renew(owner, arg->lease_ms, &arg->left_ms);
	if (!ret && (arg->flags & ORDLOCK_RENEW_SET_SIGNAL))
		ret = ordlock_lease_set_signal(owner, arg->signal);
out:
	if (ret && ret != -EBUSY)
		arg->failure = owner->failure;
	return ret;
}

static int ordlock_ioctl_token_check(struct ordlock_owner *owner,
				     union ordlock_ioctl_buffer *buf)
{
	struct ordlock_token_check *arg = &buf->token_check;
	struct ordlock_domain *domain = owner->domain;
	bool named = false;
	struct ordlock_rkey key;
	unsigned int bad;
	int ret;

	if (arg->flags)
		return -EINVAL;
	/* The mode is ignored, but must be 0 or valid as in a release */
	ret = ordlock_keys_import(&key, &arg->key, 1, false, &bad);
	if (ret)
		return ret;
	if (memchr_inv(arg->domain, 0, sizeof(arg->domain))) {
		if (ordlock_domain_name_valid(arg->domain))
			return -EINVAL;
		domain = ordlock_domain_find_get(arg->domain);
		if (!domain)
			return -ESTALE;
		named = true;
	}
	ret = ordlock_lease_token_check(domain, &key, arg->token);
	if (named)
		ordlock_domain_put(domain);
	return ret;
}

/*
 * The compact ioctls (DOC: Compact ioctls): their arguments converted into
 * the full forms' structures and back; the full forms' code does the rest,
 * validation included (a nonzero __reserved goes where the full form has
 * one, and fails there).
 */
static int ordlock_lock_in(union ordlock_ioctl_buffer *buf,
			   union ordlock_compact *c, void __user *uarg)
{
	struct ordlock_lock *l = &c->lock;

	if (copy_from_user(l, uarg, sizeof(*l)))
		return -EFAULT;
	buf->acquire.size = sizeof(buf->acquire);
	buf->acquire.flags = l->flags;
	buf->acquire.nkeys = l->nkeys;
	buf->acquire.lease_ms = 0;
	buf->acquire.keys = l->keys;
	buf->acquire.timeout_ns = l->timeout_ns;
	buf->acquire.__reserved2 = l->__reserved;
	return 0;
}

/* The failure record, where the caller asked for it */
static int ordlock_compact_failure(u64 uptr, const struct ordlock_failure *f)
{
	if (uptr && copy_to_user(u64_to_user_ptr(uptr), f, sizeof(*f)))
		return -EFAULT;
	return 0;
}

static long ordlock_lock_out(void __user *uarg, const union ordlock_ioctl_buffer *buf,
			     const union ordlock_compact *c, int ret)
{
	const struct ordlock_acquire *a = &buf->acquire;
	struct ordlock_lock __user *ul = uarg;

	if (!ret) {
		/* @token and @result_flags, and @__reserved that is 0 */
		struct {
			u64 token;
			u32 result_flags;
			u32 zero;
		} out = { a->token, a->result_flags, 0 };

		BUILD_BUG_ON(offsetofend(struct ordlock_lock, __reserved) !=
			     offsetof(struct ordlock_lock, token) + sizeof(out));
		return copy_to_user(&ul->token, &out, sizeof(out)) ? -EFAULT : 0;
	}
	if (put_user(a->result_flags, &ul->result_flags))
		return -EFAULT;
	/* The time left after a signal, for the restart */
	if (a->timeout_ns != c->lock.timeout_ns &&
	    put_user(a->timeout_ns, &ul->timeout_ns))
		return -EFAULT;
	return ordlock_compact_failure(c->lock.failure, &a->failure) ?: ret;
}

static int ordlock_unlock_in(union ordlock_ioctl_buffer *buf,
			     union ordlock_compact *c, void __user *uarg)
{
	struct ordlock_unlock *u = &c->unlock;

	if (copy_from_user(u, uarg, sizeof(*u)))
		return -EFAULT;
	buf->release.size = sizeof(buf->release);
	buf->release.flags = 0;
	buf->release.nkeys = u->nkeys;
	buf->release.__reserved = u->__reserved;
	buf->release.keys = u->keys;
	buf->release.__reserved2 = 0;
	return 0;
}

static long ordlock_unlock_out(void __user *uarg, const union ordlock_ioctl_buffer *buf,
			       const union ordlock_compact *c, int ret)
{
	if (!ret)
		return 0;
	return ordlock_compact_failure(c->unlock.failure, &buf->release.failure) ?: ret;
}

/* UNLOCK_ALL: the argument is no pointer but the value 0 (the full form's @keys) */
static int ordlock_unlock_all_in(union ordlock_ioctl_buffer *buf,
				 union ordlock_compact *c, void __user *uarg)
{
	buf->release.size = sizeof(buf->release);
	buf->release.flags = ORDLOCK_RELEASE_ALL;
	buf->release.nkeys = 0;
	buf->release.__reserved = 0;
	buf->release.keys = (unsigned long)uarg;
	buf->release.__reserved2 = 0;
	return 0;
}

static long ordlock_unlock_all_out(void __user *uarg, const union ordlock_ioctl_buffer *buf,
				   const union ordlock_compact *c, int ret)
{
	return ret ?: buf->release.released;
}

/*
 * The dispatch table, in ioctl number order from ORDLOCK_IOC_ACQUIRE. Each
 * @min_size is the size of the structure as first published: it never
 * changes once released.
 */
static const struct ordlock_ioctl_op ordlock_ioctl_ops[] = {
	{
		.cmd = ORDLOCK_IOC_ACQUIRE,
		.size = sizeof(struct ordlock_acquire),
		.min_size = offsetofend(struct ordlock_acquire, failure),
		.copy_out_on_error = true,
		.execute = ordlock_ioctl_acquire,
		.undo = ordlock_ioctl_acquire_undo,
	},
	{
		.cmd = ORDLOCK_IOC_RELEASE,
		.size = sizeof(struct ordlock_release),
		.min_size = offsetofend(struct ordlock_release, failure),
		.copy_out_on_error = true,
		.write_first = true,
		.execute = ordlock_ioctl_release,
	},
	{
		.cmd = ORDLOCK_IOC_SET_DOMAIN,
		.size = sizeof(struct ordlock_set_domain),
		.min_size = offsetofend(struct ordlock_set_domain, name),
		.copy_out_on_error = false,
		.write_first = true,
		.execute = ordlock_ioctl_set_domain,
	},
	{
		.cmd = ORDLOCK_IOC_OWNER_INFO,
		.size = sizeof(struct ordlock_owner_info),
		.min_size = offsetofend(struct ordlock_owner_info, last_token),
		.copy_out_on_error = false,
		.execute = ordlock_ioctl_owner_info,
	},
	{
		.cmd = ORDLOCK_IOC_LAST_FAILURE,
		.size = sizeof(struct ordlock_last_failure),
		.min_size = offsetofend(struct ordlock_last_failure, steps),
		/* @revoked, @nrevoked and @nodes came later: older callers lack them */
		.copy_out_on_error = false,
		.execute = ordlock_ioctl_last_failure,
	},
	{
		.cmd = ORDLOCK_IOC_CONVERT,
		.size = sizeof(struct ordlock_convert),
		.min_size = offsetofend(struct ordlock_convert, failure),
		.copy_out_on_error = true,
		.write_first = true,
		.execute = ordlock_ioctl_convert,
	},
	{
		.cmd = ORDLOCK_IOC_DOMAIN_CONFIG,
		.size = sizeof(struct ordlock_domain_config),
		.min_size = offsetofend(struct ordlock_domain_config, max_hold_ms),
		.copy_out_on_error = false,
		.write_first = true,
		.unlocked = true,
		.execute = ordlock_ioctl_domain_config,
	},
	{
		.cmd = ORDLOCK_IOC_RENEW,
		.size = sizeof(struct ordlock_renew),
		.min_size = offsetofend(struct ordlock_renew, failure),
		.copy_out_on_error = true,
		.write_first = true,
		.execute = ordlock_ioctl_renew,
	},
	{
		.cmd = ORDLOCK_IOC_TOKEN_CHECK,
		.size = sizeof(struct ordlock_token_check),
		.min_size = offsetofend(struct ordlock_token_check, domain),
		.copy_out_on_error = false,
		.execute = ordlock_ioctl_token_check,
	},
	{
		.cmd = ORDLOCK_IOC_SET_LABEL,
		.size = sizeof(struct ordlock_set_label),
		.min_size = offsetofend(struct ordlock_set_label, label),
		.copy_out_on_error = false,
		.write_first = true,
		.execute = ordlock_ioctl_set_label,
	},
	{
		.cmd = ORDLOCK_IOC_GET_ORDER,
		.size = sizeof(struct ordlock_order_get),
		.min_size = offsetofend(struct ordlock_order_get, __reserved2),
		.copy_out_on_error = false,
		.execute = ordlock_ioctl_get_order,
	},
	/* The compact forms (DOC: Compact ioctls): the full forms' @execute */
	[_IOC_NR(ORDLOCK_IOC_LOCK) - _IOC_NR(ORDLOCK_IOC_ACQUIRE)] = {
		.cmd = ORDLOCK_IOC_LOCK,
		.execute = ordlock_ioctl_acquire,
		.undo = ordlock_ioctl_acquire_undo,
		.compact_in = ordlock_lock_in,
		.compact_out = ordlock_lock_out,
	},
	[_IOC_NR(ORDLOCK_IOC_UNLOCK) - _IOC_NR(ORDLOCK_IOC_ACQUIRE)] = {
		.cmd = ORDLOCK_IOC_UNLOCK,
		.execute = ordlock_ioctl_release,
		.compact_in = ordlock_unlock_in,
		.compact_out = ordlock_unlock_out,
	},
	[_IOC_NR(ORDLOCK_IOC_UNLOCK_ALL) - _IOC_NR(ORDLOCK_IOC_ACQUIRE)] = {
		.cmd = ORDLOCK_IOC_UNLOCK_ALL,
		.execute = ordlock_ioctl_release,
		.compact_in = ordlock_unlock_all_in,
		.compact_out = ordlock_unlock_all_out,
	},
};

#define ORDLOCK_IOC_FIRST _IOC_NR(ORDLOCK_IOC_ACQUIRE)

/*
 * The argument of @op, @usize bytes at @uarg, into @buf. The two commands
 * of every lock and unlock, at the size of this kernel's structure, are
 * copied with a size known at build time: the compiler checks the bounds,
 * and the copy skips hardened usercopy's walk of the object at run time
 * (a third of the cost of a copy on its own). The result is the same as
 * copy_struct_from_user()'s.
 */
static int ordlock_arg_in(union ordlock_ioctl_buffer *buf,
			  const struct ordlock_ioctl_op *op,
			  void __user *uarg, u32 usize)
{
	switch (op->cmd) {
	case ORDLOCK_IOC_ACQUIRE:
		if (usize != sizeof(buf->acquire))
			break;
		return copy_from_user(&buf->acquire, uarg, sizeof(buf->acquire)) ?
		       -EFAULT : 0;
	case ORDLOCK_IOC_RELEASE:
		if (usize != sizeof(buf->release))
			break;
		return copy_from_user(&buf->release, uarg, sizeof(buf->release)) ?
		       -EFAULT : 0;
	}
	return copy_struct_from_user(buf, op->size, uarg, usize);
}

/* Write @buf back to @uarg, as far as both know: 0 or -EFAULT */
static int ordlock_arg_out(void __user *uarg, const union ordlock_ioctl_buffer *buf,
			   const struct ordlock_ioctl_op *op, u32 usize)
{
	switch (op->cmd) {
	case ORDLOCK_IOC_ACQUIRE:
		if (usize != sizeof(buf->acquire))
			break;
		return copy_to_user(uarg, &buf->acquire, sizeof(buf->acquire)) ?
		       -EFAULT : 0;
	case ORDLOCK_IOC_RELEASE:
		if (usize != sizeof(buf->release))
			break;
		return copy_to_user(uarg, &buf->release, sizeof(buf->release)) ?
		       -EFAULT : 0;
	}
	return copy_to_user(uarg, buf, min_t(size_t, usize, op->size)) ? -EFAULT : 0;
}

/* A compact ioctl: its argument converted, then as the full form */
static long ordlock_compact_ioctl(struct ordlock_owner *owner,
				  const struct ordlock_ioctl_op *op,
				  void __user *uarg)
{
	union ordlock_ioctl_buffer buf __uninitialized;
	union ordlock_compact c __uninitialized;
	long ret;
	int err;

	err = op->compact_in(&buf, &c, uarg);
	if (err)
		return err;
	if (mutex_lock_interruptible(&owner->lock))
		return -ERESTARTSYS;
	err = op->execute(owner, &buf);
	ret = op->compact_out(uarg, &buf, &c, err);
	if (!err && ret < 0 && op->undo)
		op->undo(owner, &buf);
	mutex_unlock(&owner->lock);
	return ret;
}

static long ordlock_fop_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct ordlock_owner *owner = file->private_data;
	void __user *uarg = (void __user *)arg;
	const struct ordlock_ioctl_op *op;
	union ordlock_ioctl_buffer buf __uninitialized;
	unsigned int nr = _IOC_NR(cmd);
	u32 usize;
	int ret;

	/* The fast path's commands (fast_dev.c) */
	if (cmd == ORDLOCK_IOC_FAST_PIN || cmd == ORDLOCK_IOC_FAST_RELEASE ||
	    cmd == ORDLOCK_IOC_FAST_LEARN)
		return ordlock_fast_ioctl(owner, cmd, uarg);
	if (_IOC_TYPE(cmd) != ORDLOCK_IOC_TYPE || nr < ORDLOCK_IOC_FIRST ||
	    nr - ORDLOCK_IOC_FIRST >= ARRAY_SIZE(ordlock_ioctl_ops))
		return -ENOTTY;
	op = &ordlock_ioctl_ops[nr - ORDLOCK_IOC_FIRST];
	/* (a number between the entries has cmd 0) */
	if (op->cmd != cmd)
		return -ENOTTY;
	if (op->compact_in)
		return ordlock_compact_ioctl(owner, op, uarg);

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->min_size)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = ordlock_arg_in(&buf, op, uarg, usize);
	if (ret)
		return ret;

	/*
	 * What cannot be undone must be able to report: the result goes where
	 * the argument came from.  (A structure made unwritable during the
	 * call still fails with EFAULT after acting, as the UAPI says.)
	 */
	if (op->write_first && ordlock_arg_out(uarg, &buf, op, usize))
		return -EFAULT;
	if (op->unlocked) {
		ret = op->execute(owner, &buf);
		if (!ret && ordlock_arg_out(uarg, &buf, op, usize))
			ret = -EFAULT;
		return ret;
	}
	if (mutex_lock_interruptible(&owner->lock))
		return -ERESTARTSYS;
	ret = op->execute(owner, &buf);
	if (!ret || op->copy_out_on_error) {
		if (ordlock_arg_out(uarg, &buf, op, usize)) {
			if (!ret && op->undo)
				op->undo(owner, &buf);
			ret = -EFAULT;
		}
	}
	mutex_unlock(&owner->lock);
	return ret;
}

static int ordlock_fop_open(struct inode *inode, struct file *file)
{
	struct ordlock_owner *owner = ordlock_owner_create(ORDLOCK_KIND_DEVICE);

	if (IS_ERR(owner))
		return PTR_ERR(owner);
	file->private_data = owner;
	return nonseekable_open(inode, file);
}

static int ordlock_fop_release(struct inode *inode, struct file *file)
{
	ordlock_owner_destroy(file->private_data);
	return 0;
}

/* The fast path's words and owner page (fast_dev.c) */
static int ordlock_fop_mmap(struct file *file, struct vm_area_struct *vma)
{
	return ordlock_fast_mmap(file->private_data, vma);
}

/* POLLPRI: the owner's lease was revoked, until it acknowledges */
static __poll_t ordlock_fop_poll(struct file *file, poll_table *wait)
{
	struct ordlock_owner *owner = file->private_data;

	poll_wait(file, &owner->lease.wq, wait);
	return READ_ONCE(owner->lease.revoked) ? EPOLLPRI : 0;
}

static const struct file_operations ordlock_fops = {
	.owner = THIS_MODULE,
	.open = ordlock_fop_open,
	.release = ordlock_fop_release,
	.poll = ordlock_fop_poll,
	.mmap = ordlock_fop_mmap,
	.unlocked_ioctl = ordlock_fop_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice ordlock_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ordlock",
	.fops = &ordlock_fops,
};

int ordlock_device_init(void)
{
	int ret;

	ordlock_misc.mode = ordlock_dev_mode & 0666;
	ret = misc_register(&ordlock_misc);
	if (ret)
		return ret;
	/* From now on its node says who may lock, through any front end */
	ordlock_access_set_node(MKDEV(MISC_MAJOR, ordlock_misc.minor));
	return 0;
}

void ordlock_device_exit(void)
{
	ordlock_access_set_node(0);
	misc_deregister(&ordlock_misc);
}
