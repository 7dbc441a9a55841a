// SPDX-License-Identifier: GPL-2.0
/*
 * The order rule of a request, and REORDER's way around it: whether an
 * owner may ask for its keys after those it holds (every key above every
 * held one in an enforce domain, strict ranks above held ranks; anywhere,
 * no key it holds already), and, for a REORDER request whose key below a
 * held one is busy, letting go of the held keys above it and starting
 * again on the union, in order.
 *
 * A file of its own: the rule reads the owner's kernel holds only and
 * moves no request on (request.c checks the keys held by the fast path
 * beside it, through the hooks of fastpath.h, and calls these from its
 * start and its steps); what it records on failure is the owner's failure
 * record. Everything here runs under owner->lock.
 */
#include <linux/mm.h>

#include "domain.h"
#include "keys.h"
#include "order.h"
#include "owner.h"
#include "request.h"
#include "resource.h"

/*
 * Whether @key may be taken while @hold is held: it sorts above it, and
 * with strict ranks its rank is above too
 */
static bool ordlock_may_follow(const struct ordlock_hold *hold,
			       const struct ordlock_rkey *key, bool strict)
{
	if (strict && hold->res->rank >= key->rank)
		return false;
	return ordlock_hold_cmp(hold, key) < 0;
}

/*
 * The order rule: every key of the request must sort above every held key
 * (strict ranks: have a rank above every held rank). Keys are sorted, so
 * the first one and the last held one decide.
 */
int ordlock_check_order(struct ordlock_owner *owner,
			const struct ordlock_rkey *first, bool strict)
{
	struct ordlock_failure *f = &owner->failure;
	struct ordlock_hold *hold, *last;
	u32 reason = ORDLOCK_REASON_ORDER;
	int ret;

	lockdep_assert_held(&owner->lock);
	if (!owner->nheld)
		return 0;
	last = list_last_entry(&owner->held, struct ordlock_hold, owner_node);
	if (ordlock_may_follow(last, first, strict))
		return 0;
	/* Only the strict rule is broken: say so */
	if (ordlock_may_follow(last, first, false))
		reason = ORDLOCK_REASON_STRICT;
	/* Name the lowest held key that the first requested one may not follow */
	list_for_each_entry(hold, &owner->held, owner_node)
		if (!ordlock_may_follow(hold, first, reason == ORDLOCK_REASON_STRICT))
			break;
	ret = ordlock_owner_fail(owner, reason, -EDEADLK, first);
	f->held.rank = hold->res->rank;
	f->held.id = hold->res->id;
	f->held.mode = hold->mode;
	return ret;
}

/*
 * Where any order is allowed, a request may still not ask again for a key
 * its owner holds: it would wait for itself. Both lists are sorted.
 */
int ordlock_check_held(struct ordlock_owner *owner,
		       const struct ordlock_rkey *keys, unsigned int n)
{
	struct ordlock_hold *hold;
	unsigned int i = 0;
	int c = 1, ret;

	lockdep_assert_held(&owner->lock);
	list_for_each_entry(hold, &owner->held, owner_node) {
		while (i < n && (c = ordlock_hold_cmp(hold, &keys[i])) > 0)
			i++;
		if (i == n)
			return 0;
		if (!c) {
			ret = ordlock_owner_fail(owner, ORDLOCK_REASON_ORDER,
						 -EDEADLK, &keys[i]);
			owner->failure.held.rank = hold->res->rank;
			owner->failure.held.id = hold->res->id;
			owner->failure.held.mode = hold->mode;
			return ret;
		}
	}
	return 0;
}

/*
 * The number of keys of a REORDER request that break the order: they sort
 * first, so they are the first ones, those the last held key forbids
 */
unsigned int ordlock_reorder_split(struct ordlock_request *req)
{
	struct ordlock_owner *owner = req->owner;
	struct ordlock_hold *last;
	unsigned int i;

	lockdep_assert_held(&owner->lock);
	if (!owner->nheld)
		return 0;
	last = list_last_entry(&owner->held, struct ordlock_hold, owner_node);
	for (i = 0; i < req->n; i++)
		if (ordlock_may_follow(last, &req->keys[i], req->strict))
			break;
	return i;
}

/*
 * Merge the held keys from @first on (sorted) and the keys of @req (sorted,
 * none of them held) into @out. The held ones are nobody's in the caller's
 * array: their index is ~0U.
 */
static void ordlock_reorder_merge(struct ordlock_request *req,
				  struct ordlock_hold *first,
				  struct ordlock_rkey *out)
{
	struct ordlock_owner *owner = req->owner;
	struct ordlock_hold *hold = first;
	unsigned int i = 0;

	while (i < req->n || !list_entry_is_head(hold, &owner->held, owner_node)) {
		if (!list_entry_is_head(hold, &owner->held, owner_node) &&
		    (i == req->n || ordlock_hold_cmp(hold, &req->keys[i]) < 0)) {
			out->rank = hold->res->rank;
			out->id = hold->res->id;
			out->mode = hold->mode;
			out->index = ~0U;
			hold = list_next_entry(hold, owner_node);
		} else {
			*out = req->keys[i++];
		}
		out++;
	}
}

/*
 * REORDER: key req->next breaks the order and is not free. Waiting for it
 * while holding keys above it could close a cycle: give back what the
 * request took, let go of the held keys that its lowest key may not follow,
 * and start again on the union of those and the requested keys, in order,
 * now above every key still held. What can fail (the allocation) is done
 * before anything is let go; the keys let go keep their charge and their
 * holds, which the request takes over.
 *
 * Return: 0, or -ENOMEM (recorded; nothing was let go).
 */
int ordlock_reorder(struct ordlock_request *req)
{
	struct ordlock_owner *owner = req->owner;
	struct ordlock_hold *hold, *first = NULL, *tmp;
	struct ordlock_rkey *keys;
	unsigned int nrel = 0;

	lockdep_assert_held(&owner->lock);
	list_for_each_entry(hold, &owner->held, owner_node) {
		if (!first && !ordlock_may_follow(hold, &req->keys[0], req->strict))
			first = hold;
		if (first)
			nrel++;
	}
	keys = kvmalloc_array(req->n + nrel, sizeof(*keys), GFP_KERNEL_ACCOUNT);
	if (!keys)
		return ordlock_owner_fail(owner, ORDLOCK_REASON_NOMEM, -ENOMEM, NULL);

	/* Give back the keys the try took, those before req->cur */
	hold = req->cur;
	list_for_each_entry_continue_reverse(hold, &req->holds, owner_node)
		ordlock_res_drop_hold(hold);
	ordlock_reorder_merge(req, first, keys);
	req->released.rank = first->res->rank;
	req->released.id = first->res->id;
	req->released.mode = first->mode;
	hold = first;
	list_for_each_entry_safe_from(hold, tmp, &owner->held, owner_node) {
		ordlock_res_drop_hold(hold);
		list_move_tail(&hold->owner_node, &req->holds);
	}
	owner->nheld -= nrel;
	ordlock_order_held_changed(&owner->order_cache);
	ordlock_stat_add(owner->domain, ORDLOCK_STAT_RELEASES, nrel);

	req->own_keys = keys;
	req->keys = keys;
	req->n += nrel;
	req->next = 0;
	req->try_upto = 0;
	req->cur = list_first_entry(&req->holds, struct ordlock_hold, owner_node);
	req->result_flags |= ORDLOCK_RESULT_RELEASED;
	return 0;
}
