/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordlockctl: the DLM's view of this host's cluster domains (dlmview.c).
 */
#ifndef ORDLOCKCTL_DLMVIEW_H
#define ORDLOCKCTL_DLMVIEW_H

#include <stdint.h>
#include <linux/ordlock.h>

#include "dlmdebug.h"

/**
 * struct olc_dlm_space - one cluster domain's lockspace on this node
 * @domain: the domain
 * @lockspace: the DLM lockspace (ORDLOCK_DLM_LS_PREFIX "DOMAIN")
 * @path: the DLM's debugfs file read
 * @read_ns: when it was read (wall clock): the view is a snapshot
 * @err: 0 read and parsed, else why not (errno; EPROTO a format not known)
 * @why: then a sentence saying why
 * @view: what it says
 */
struct olc_dlm_space {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	char lockspace[ORDLOCK_DOMAIN_NAME_MAX + 16];
	char path[4096];
	uint64_t read_ns;
	int err;
	char why[192];
	struct olc_dlm_view view;
};

/* The cluster domains found (sorted by name); @our_node: -1 unknown */
struct olc_dlm_spaces {
	struct olc_dlm_space *v;
	size_t n, cap;
	int our_node;
};

/*
 * olc_load_dlm() - every lockspace of a cluster domain (only @domain's when
 * not NULL) with what the DLM's debugfs says of it; a file that cannot be
 * read is an entry with @err set. 0 or -ENOMEM.
 */
int olc_load_dlm(struct olc_dlm_spaces *out, const char *domain);
void olc_dlm_spaces_free(struct olc_dlm_spaces *s);

/* The lockspace of @domain in @sp, or NULL (no cluster domain of that name) */
const struct olc_dlm_space *olc_dlm_space_of(const struct olc_dlm_spaces *sp,
					     const char *domain);
/* What the DLM of this node knows of key @rank:@id in @s, or NULL (nothing) */
const struct olc_dlm_res *olc_dlm_res_of(const struct olc_dlm_space *s,
					 uint32_t rank, uint64_t id);
/*
 * olc_dlm_lock_blocks() - the mode other node's lock @l holds that is in
 * the way of a request for @mode (ORDLOCK_MODE_*), or 0 when it holds
 * nothing in the way (a waiter; a shared hold against a shared request)
 */
unsigned int olc_dlm_lock_blocks(const struct olc_dlm_lock *l, unsigned int mode);

#endif /* ORDLOCKCTL_DLMVIEW_H */
