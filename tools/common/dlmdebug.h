/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DLM's debugfs view of a cluster domain's lockspace, read back into
 * ordlock's keys (ordlockctl locks; docs/cluster.md, "Views").
 *
 * The DLM exports each lockspace LS in /sys/kernel/debug/dlm/: LS_all (one
 * "rsb" line per resource, then an "lkb" line per lock of it, after a
 * first line: "version rsb 1.1 lvb 1.1 lkb 1.1" on 6.1, the names of the
 * rsb fields on 6.12), LS_locks, LS_waiters (and LS_toss on 6.1).
 * olc_dlm_parse() reads LS_all: after the first line, its rsb, lvb and lkb
 * lines have the same fields on 6.1 and 6.12. What a node's file can tell:
 *  - a resource this node masters (the rsb's node field 0) lists every
 *    node's locks: this node's own (node 0) and a master copy of each other
 *    node's (its node id), in the grant, convert and wait queues;
 *  - a resource mastered elsewhere (node field N > 0) lists only this
 *    node's locks (whose node field is then N too): the others' are known
 *    on node N only;
 *  - a resource this node never used is not in the file at all.
 * Only resources named as ordlock_dlm names keys (ORDLOCK_DLM_RES_FMT) are
 * kept; every other one is counted and ignored. Locks in NL (ordlock_dlm's
 * anchors of the fencing value blocks) hold nothing and are left out.
 *
 * Pure functions of a buffer: unit-tested on the host with files captured
 * on 6.1 and 6.12 (tests/unit/t_ctl_dlm.c).
 */
#ifndef ORDLOCK_COMMON_DLMDEBUG_H
#define ORDLOCK_COMMON_DLMDEBUG_H

#include <stddef.h>
#include <stdint.h>

/* The DLM's modes (as in the DLM's own headers) and lock states */
#define OLC_DLM_IV	(-1)
#define OLC_DLM_NL	0
#define OLC_DLM_CR	1
#define OLC_DLM_CW	2
#define OLC_DLM_PR	3
#define OLC_DLM_PW	4
#define OLC_DLM_EX	5
#define OLC_DLM_WAITING	1
#define OLC_DLM_GRANTED	2
#define OLC_DLM_CONVERT	3

/**
 * struct olc_dlm_res - an ordlock key the DLM of this node knows
 * @rank, @id: the key
 * @master: the node that masters it: 0 this node (every node's locks are
 *	known here), N > 0 node N (only this node's are known here), -1 not
 *	known yet (a lookup in flight)
 * @local: locks of this node on it (NL anchors included)
 * @remote: locks of other nodes listed here (NL anchors included)
 */
struct olc_dlm_res {
	uint32_t rank;
	uint64_t id;
	int master;
	unsigned int local;
	unsigned int remote;
};

/**
 * struct olc_dlm_lock - another node's lock on a key mastered here
 * @rank, @id: the key
 * @node: the node id of its owner
 * @role: ORDLOCK_ROLE_HOLDER (granted), _WAITER (waiting, or converting up
 *	from the NL anchor: ordlock_dlm's acquire) or _CONVERTER (granted PR
 *	or EX and converting)
 * @mode: ORDLOCK_MODE_SHARED (PR) or _EXCLUSIVE (EX): granted for a
 *	holder, requested for a waiter or converter
 * @grmode, @rqmode: the DLM's granted and requested modes (OLC_DLM_*)
 * @pos: for a waiter or converter, its place in the master's queues
 *	(convert queue first, then wait queue; 1 = next; every node's locks
 *	counted, this node's included); 0 for a holder
 */
struct olc_dlm_lock {
	uint32_t rank;
	uint64_t id;
	int node;
	unsigned int role;
	unsigned int mode;
	int grmode;
	int rqmode;
	unsigned int pos;
};

/**
 * struct olc_dlm_view - what one lockspace's LS_all says
 * @res: the ordlock keys in it, in the file's order
 * @locks: other nodes' PR and EX locks on the keys mastered here
 * @ignored: resources whose names are not ordlock keys (left out)
 */
struct olc_dlm_view {
	struct olc_dlm_res *res;
	size_t nres, rescap;
	struct olc_dlm_lock *locks;
	size_t nlocks, lockcap;
	unsigned int ignored;
};

/*
 * olc_dlm_res_name() - 0 with the key in *@rank, *@id when the @len bytes
 * of @name are a key's resource name (ORDLOCK_DLM_RES_FMT, exactly), else
 * -1
 */
int olc_dlm_res_name(const char *name, size_t len, uint32_t *rank, uint64_t *id);

/*
 * olc_dlm_parse() - parse the text of a LS_all file into @out (zeroed
 * first; olc_dlm_free() it). 0; -EPROTO for a file that is not that
 * format (with the line number and a message in @line, @msg), -ENOMEM.
 */
int olc_dlm_parse(const char *buf, size_t len, struct olc_dlm_view *out,
		  unsigned int *line, char *msg, size_t msglen);
void olc_dlm_free(struct olc_dlm_view *v);

/**
 * struct olc_dlm_qent - a request queued for a key this node masters
 * @node: its node id, 0 for this node's own
 * @lkid: its lock id on @node (the DLM's remid for another node's, its id
 *	for this node's)
 * @sts: OLC_DLM_CONVERT or OLC_DLM_WAITING
 * @grmode, @rqmode: the DLM's granted (OLC_DLM_IV for a new request) and
 *	requested modes
 * @ts_ns: when it entered its queue (the DLM's lkb timestamp, this node's
 *	monotonic clock): a request that leaves and comes back has another
 */
struct olc_dlm_qent {
	int node;
	uint32_t lkid;
	int sts;
	int grmode;
	int rqmode;
	uint64_t ts_ns;
};

/*
 * olc_dlm_queue() - the queued requests of key (@rank, @id) in the text of
 * a LS_all file, in the order the DLM grants them (its convert queue, then
 * its wait queue, each in order): at most @max into @out. Returns how
 * many, -ENOENT when the key is not there or is mastered by another node
 * (its queue is not known here), -EPROTO for a line it cannot read.
 */
int olc_dlm_queue(const char *buf, size_t len, uint32_t rank, uint64_t id,
		  struct olc_dlm_qent *out, unsigned int max);

/* "NL", "CR", "CW", "PR", "PW", "EX", "IV" ("?" for another number) */
const char *olc_dlm_mode_str(int mode);

#endif /* ORDLOCK_COMMON_DLMDEBUG_H */
