/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The walks built in user space where the kernel does not serve XD_WALK
 * (walk.c): from this node's waits (@s's, from the XD_EVENTs), GET_GRAPH
 * and GET_LOCKS. The same contract as struct xd_ops' walk_owner and
 * walk_key; no hold generations (0).
 */
#ifndef ORDLOCK_XDETECTD_WALK_H
#define ORDLOCK_XDETECTD_WALK_H

#include "nl.h"
#include "proto.h"

int xw_walk_owner(struct olc_nl *nl, const struct xd_state *s, const char *domain,
		  uint64_t owner, uint64_t gen, struct xd_paths *out);
int xw_walk_key(struct olc_nl *nl, const struct xd_state *s, const char *domain,
		const struct xd_vertex *waiter, struct xd_paths *out);

#endif /* ORDLOCK_XDETECTD_WALK_H */
