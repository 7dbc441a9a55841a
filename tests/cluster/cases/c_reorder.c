// SPDX-License-Identifier: GPL-2.0
/*
 * c_reorder: ORDLOCK_ACQUIRE_REORDER across hosts (seed 004's late key, on
 * two nodes). Node 1 holds 5:1 and node 2 holds 1:1 of an enforce cluster
 * domain; then node 1 asks for 1:1 with REORDER (its key 5:1 is above) and
 * node 2 asks for 5:1 in order. The key below the held one is only tried
 * in the cluster (NOQUEUE): busy on node 2, node 1 lets 5:1 go and waits
 * for 1:1 in order. Asserted: node 2's request is granted (it could not be
 * if node 1 waited in the DLM for 1:1 while holding 5:1: a cycle the DLM
 * does not see, both would time out after 20 s); node 2 lets both go; node
 * 1's request is then granted with ORDLOCK_RESULT_RELEASED, holding both
 * keys; node 3 (when there is one) cannot take either meanwhile.
 *
 * cluster-timeout: 300
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "clcase.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define WAIT_MS	20000

static const char *dom = "c_reo";

int main(void)
{
	struct ordlock_key k1 = ORDLOCK_EX(1, 1), k5 = ORDLOCK_EX(5, 1);
	struct ordlock_key both[2] = { ORDLOCK_EX(1, 1), ORDLOCK_EX(5, 1) };
	struct ordlock *cfg, *ol;
	int ret;

	ol = cl_start(dom, 2, &cfg);
	if (cl_node == 1)
		ok(ordlock_acquire(ol, &k5, 1, WAIT_MS, 0, NULL) == 0, "node1: holds 5:1");
	if (cl_node == 2)
		ok(ordlock_acquire(ol, &k1, 1, WAIT_MS, 0, NULL) == 0, "node2: holds 1:1");
	cl_barrier("held");
	if (cl_node == 1) {
		ret = ordlock_acquire(ol, &k1, 1, WAIT_MS, ORDLOCK_ACQUIRE_REORDER, NULL);
		ok(ret == 0, "node1: 1:1 with REORDER granted%s%s", ret ? ": " : "",
		   ret ? strerror(errno) : "");
		ok(ordlock_result_flags(ol) & ORDLOCK_RESULT_RELEASED,
		   "node1: ... having let 5:1 go in between (RESULT_RELEASED)");
		is_int(olt_nheld(ol), 2, "node1: ... and holds both keys again");
	}
	if (cl_node == 2) {
		ret = ordlock_acquire(ol, &k5, 1, WAIT_MS, 0, NULL);
		ok(ret == 0, "node2: 5:1 granted in order while node1 reorders%s%s",
		   ret ? ": " : "", ret ? strerror(errno) : "");
		ok(ordlock_release_all(ol) == 0, "node2: lets both go");
	}
	cl_barrier("reordered");
	if (cl_node == 3) {
		ret = ordlock_try_acquire(ol, both, 2, NULL);
		is_errno(ret, EAGAIN, "node3: 1:1 and 5:1 held by node1: EAGAIN");
	}
	cl_barrier("tried");
	ordlock_release_all(ol);
	cl_barrier("end");
	return cl_end(ol, cfg, dom);
}
