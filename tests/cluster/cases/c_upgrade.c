// SPDX-License-Identifier: GPL-2.0
/*
 * c_upgrade: the upgrade deadlock across hosts. Nodes 1 and 2 hold key
 * 5:1 of a cluster domain shared, meet at a barrier, and both convert it to
 * exclusive at once (20 s bound). Two shared holders that both wait to
 * upgrade wait for each other: the DLM refuses one conversion (EDEADLK),
 * which ordlock reports as EDEADLK with reason "upgrade" naming the key.
 * Asserted: exactly one node gets EDEADLK reason upgrade, and it still
 * holds the key shared (a failed call changes nothing); it then releases,
 * and the other's conversion is granted (exclusive); node 3's shared
 * try-lock of the key then fails with EAGAIN; after the release it is
 * granted.
 *
 * cluster-timeout: 300
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clcase.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define WAIT_MS	20000

static const char *dom = "c_upg";

int main(void)
{
	struct ordlock_key sh = ORDLOCK_SH(5, 1), ex = ORDLOCK_EX(5, 1);
	const struct ordlock_failure *f;
	struct ordlock *cfg, *ol;
	int ret, err = 0, j, edeadlk = 0, granted = 0;
	char nm[32];
	FILE *fp;

	ol = cl_start(dom, 3, &cfg);
	if (cl_node <= 2)
		ok(ordlock_acquire(ol, &sh, 1, WAIT_MS, 0, NULL) == 0,
		   "node%d: holds 5:1 shared", cl_node);
	cl_barrier("shared");
	if (cl_node <= 2) {
		ret = ordlock_convert(ol, ex, WAIT_MS, 0, NULL);
		err = ret ? errno : 0;
		snprintf(nm, sizeof(nm), "conv.%d", cl_node);
		if (err == EDEADLK) {
			f = ordlock_last_failure(ol);
			ok(f->reason == ORDLOCK_REASON_UPGRADE && f->key.rank == 5 && f->key.id == 1,
			   "node%d: EDEADLK, reason upgrade, key 5:1 (reason %s, key %u:%llu)",
			   cl_node, ordlock_reason_name(f->reason), f->key.rank,
			   (unsigned long long)f->key.id);
			is_int(olt_nheld(ol), 1, "node%d: ... still holds the key (shared)", cl_node);
			fp = fopen(cl_path(nm), "w");
			if (fp) {
				fprintf(fp, "edeadlk\n");
				fclose(fp);
			}
			/* the application's answer: let go, so the other goes on */
			ok(ordlock_release_all(ol) == 0, "node%d: releases it", cl_node);
		} else {
			fp = fopen(cl_path(nm), "w");
			if (fp) {
				fprintf(fp, "%s\n", err ? strerror(err) : "granted");
				fclose(fp);
			}
		}
	}
	cl_barrier("converted");
	for (j = 1; j <= 2; j++) {
		char buf[64] = "";

		snprintf(nm, sizeof(nm), "conv.%d", j);
		fp = fopen(cl_path(nm), "r");
		if (fp) {
			if (!fgets(buf, sizeof(buf), fp))
				buf[0] = 0;
			fclose(fp);
		}
		buf[strcspn(buf, "\n")] = 0;
		diag("node%d's conversion: %s", j, buf);
		edeadlk += !strcmp(buf, "edeadlk");
		granted += !strcmp(buf, "granted");
	}
	ok(edeadlk == 1 && granted == 1,
	   "node%d: one conversion refused with EDEADLK, the other granted (%d, %d)",
	   cl_node, edeadlk, granted);
	if (cl_node == 3) {
		ret = ordlock_try_acquire(ol, &sh, 1, NULL);
		is_errno(ret, EAGAIN, "node3: shared try-lock of 5:1 held exclusive: EAGAIN");
	}
	cl_barrier("tried");
	ordlock_release_all(ol);
	cl_barrier("released");
	if (cl_node == 3) {
		ok(ordlock_acquire(ol, &ex, 1, WAIT_MS, 0, NULL) == 0,
		   "node3: 5:1 granted exclusive after the release");
		ordlock_release_all(ol);
	}
	cl_barrier("end");
	return cl_end(ol, cfg, dom);
}
