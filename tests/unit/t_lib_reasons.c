// SPDX-License-Identifier: GPL-2.0
/*
 * t_lib_reasons: every failure reason of the UAPI, from
 * ORDLOCK_REASON_NONE to the last, has a name (ordlock_reason_name()) and
 * a description of its own (ordlock_strfailure()), not the fallback for
 * an unknown one; a reason past the last gets the fallback. Host-side: no
 * module needed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../tools/lib/libordlock.h"
#include "tap.h"

int main(void)
{
	struct ordlock_failure f;
	char buf[512];
	unsigned int r;

	for (r = ORDLOCK_REASON_NONE; r <= ORDLOCK_REASON_CLUSTER; r++) {
		const char *name = ordlock_reason_name(r);

		memset(&f, 0, sizeof(f));
		f.reason = r;
		f.error = r ? EINVAL : 0;
		f.index = ~0U;
		ok(name && strcmp(name, "unknown"), "reason %u has a name (%s)", r,
		   name ? name : "NULL");
		ok(ordlock_strfailure(&f, buf, sizeof(buf)) &&
		   !strstr(buf, "unknown failure reason"),
		   "reason %u (%s) has a description: %s", r, name ? name : "NULL", buf);
	}
	memset(&f, 0, sizeof(f));
	f.reason = ORDLOCK_REASON_CLUSTER + 1;
	f.error = EINVAL;
	ok(ordlock_strfailure(&f, buf, sizeof(buf)) &&
	   strstr(buf, "unknown failure reason"), "a reason past the last: %s", buf);
	return tap_done();
}
