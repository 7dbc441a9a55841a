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

#endif /* ORDLOCKCTL_DLMVIEW_H */
