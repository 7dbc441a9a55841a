// SPDX-License-Identifier: GPL-2.0
/*
 * t_lib_null: libordlock called with a NULL owner (what ordlock_open()
 * returns when /dev/ordlock cannot be opened) fails with EINVAL instead of
 * crashing, and ordlock_last_failure(NULL) is a record that says so.
 * Host-side: no module needed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../tools/lib/libordlock.h"
#include "tap.h"

#define NULL_FAILS(call, what) \
	do { \
		errno = 0; \
		long r_ = (long)(call); \
		ok(r_ == -EINVAL && errno == EINVAL, "%s with a NULL owner: -EINVAL (%ld, %s)", \
		   what, r_, strerror(errno)); \
	} while (0)

int main(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct ordlock_owner_info info;
	struct ordlock_domain_config cfg;
	struct ordlock_cycle_step steps[2];
	struct ordlock_failure f;
	const struct ordlock_failure *lf;
	uint64_t token;
	char buf[256];

	NULL_FAILS(ordlock_acquire(NULL, &k, 1, 100, 0, &token), "ordlock_acquire");
	NULL_FAILS(ordlock_try_acquire(NULL, &k, 1, &token), "ordlock_try_acquire");
	NULL_FAILS(ordlock_release(NULL, &k, 1), "ordlock_release");
	NULL_FAILS(ordlock_release_all(NULL), "ordlock_release_all");
	NULL_FAILS(ordlock_convert(NULL, k, 100, 0, &token), "ordlock_convert");
	NULL_FAILS(ordlock_set_domain(NULL, "x"), "ordlock_set_domain");
	NULL_FAILS(ordlock_owner_info(NULL, &info), "ordlock_owner_info");
	NULL_FAILS(ordlock_kernel_last_failure(NULL, &f), "ordlock_kernel_last_failure");
	NULL_FAILS(ordlock_domain_config(NULL, "x", &cfg), "ordlock_domain_config");
	NULL_FAILS(ordlock_set_policy(NULL, "x", 0, 0), "ordlock_set_policy");
	NULL_FAILS(ordlock_last_cycle(NULL, steps, 2), "ordlock_last_cycle");
	NULL_FAILS(ordlock_fd(NULL), "ordlock_fd");
	lf = ordlock_last_failure(NULL);
	ok(lf && lf->reason == ORDLOCK_REASON_INVALID && lf->error == EINVAL,
	   "ordlock_last_failure(NULL): a record of reason invalid, EINVAL");
	ok(ordlock_strfailure(lf, buf, sizeof(buf)) != NULL, "and it prints: %s", buf);
	ordlock_close(NULL);
	ok(1, "ordlock_close(NULL) returns");
	return tap_done();
}
