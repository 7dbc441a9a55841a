// SPDX-License-Identifier: GPL-2.0
/*
 * t_lib_compact: libordlock uses the compact ioctls (ORDLOCK_IOC_LOCK,
 * UNLOCK, UNLOCK_ALL) where they fit, keeps the failure record the kernel
 * writes where @failure points, and falls back to the full forms, for
 * good, when the module answers ENOTTY (a module that predates them).
 * Host-side: ioctl() is this program's own (it links libordlock.a), a
 * fake module that logs each request and answers as told.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "../../tools/lib/libordlock.h"
#include "tap.h"

#define FAKE_FD 1000

static int compact_known;	/* the fake module has the compact ioctls */
static int fail_err;		/* the next lock request fails with this */
static unsigned long log_[16];
static unsigned int nlog;

static void log_reset(void)
{
	nlog = 0;
	memset(log_, 0, sizeof(log_));
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != FAKE_FD) {
		errno = EBADF;
		return -1;
	}
	if (nlog < 16)
		log_[nlog++] = req;
	switch (req) {
	case ORDLOCK_IOC_OWNER_INFO:
		return 0;
	case ORDLOCK_IOC_LOCK: {
		struct ordlock_lock *l = arg;

		if (!compact_known)
			break;
		if (fail_err) {
			struct ordlock_failure f = {
				.reason = ORDLOCK_REASON_BUSY, .error = (uint32_t)fail_err,
				.pid = 4242, .index = 0,
			};

			l->result_flags = 0;
			if (l->failure)
				memcpy((void *)(uintptr_t)l->failure, &f, sizeof(f));
			errno = fail_err;
			return -1;
		}
		l->token = 77;
		l->result_flags = 0;
		return 0;
	}
	case ORDLOCK_IOC_UNLOCK:
		if (!compact_known)
			break;
		return 0;
	case ORDLOCK_IOC_UNLOCK_ALL:
		if (!compact_known)
			break;
		return arg ? (errno = EINVAL, -1) : 3;
	case ORDLOCK_IOC_ACQUIRE: {
		struct ordlock_acquire *a = arg;

		if (a->size != sizeof(*a)) {
			errno = EINVAL;
			return -1;
		}
		a->token = 66;
		return 0;
	}
	case ORDLOCK_IOC_RELEASE:
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

static int logged(unsigned long a, unsigned long b)
{
	return nlog == (b ? 2U : 1U) && log_[0] == a && (!b || log_[1] == b);
}

int main(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct ordlock_failure f;
	struct ordlock *ol;
	uint64_t token = 0;

	/* a module with the compact ioctls */
	compact_known = 1;
	ol = ordlock_open_fd(FAKE_FD);
	ok(ol != NULL, "a handle on the fake module");
	if (!ol)
		return tap_done();
	log_reset();
	is_int(ordlock_acquire(ol, &k, 1, 100, 0, &token), 0, "acquire");
	ok(logged(ORDLOCK_IOC_LOCK, 0) && token == 77,
	   "acquire is one LOCK; the token is LOCK's (%llu)", (unsigned long long)token);
	log_reset();
	is_int(ordlock_try_acquire(ol, &k, 1, &token), 0, "try-acquire");
	ok(logged(ORDLOCK_IOC_LOCK, 0), "try-acquire is one LOCK");
	log_reset();
	is_int(ordlock_acquire_lease(ol, &k, 1, 100, 0, 500, &token), 0, "acquire with a lease");
	ok(logged(ORDLOCK_IOC_ACQUIRE, 0) && token == 66,
	   "acquire with a lease is the full form (no lease in LOCK)");
	log_reset();
	is_int(ordlock_release(ol, &k, 1), 0, "release of a key");
	ok(logged(ORDLOCK_IOC_UNLOCK, 0), "release of a key is one UNLOCK");
	log_reset();
	is_int(ordlock_release_all(ol), 0, "release-all returns 0 (UNLOCK_ALL's count is not an error)");
	ok(logged(ORDLOCK_IOC_UNLOCK_ALL, 0), "release-all is one UNLOCK_ALL");

	fail_err = EAGAIN;
	log_reset();
	is_errno(ordlock_try_acquire(ol, &k, 1, &token), EAGAIN, "a failed LOCK: EAGAIN");
	f = *ordlock_last_failure(ol);
	ok(f.reason == ORDLOCK_REASON_BUSY && f.pid == 4242 && f.error == EAGAIN,
	   "the record the kernel wrote where @failure points is the handle's");
	ok(logged(ORDLOCK_IOC_LOCK, 0), "one LOCK, no other call");
	fail_err = 0;
	ordlock_detach(ol);

	/* a module that predates them: ENOTTY, then the full forms for good */
	compact_known = 0;
	ol = ordlock_open_fd(FAKE_FD);
	log_reset();
	is_int(ordlock_acquire(ol, &k, 1, 100, 0, &token), 0, "acquire on an older module");
	ok(logged(ORDLOCK_IOC_LOCK, ORDLOCK_IOC_ACQUIRE) && token == 66,
	   "LOCK answered ENOTTY: ACQUIRE; its token");
	f = *ordlock_last_failure(ol);
	is_int(f.reason, ORDLOCK_REASON_NONE, "the ENOTTY left no failure record");
	log_reset();
	is_int(ordlock_acquire(ol, &k, 1, 100, 0, &token), 0, "acquire again");
	ok(logged(ORDLOCK_IOC_ACQUIRE, 0), "the handle asks ACQUIRE only from then on");
	log_reset();
	is_int(ordlock_release_all(ol), 0, "release-all");
	ok(logged(ORDLOCK_IOC_RELEASE, 0), "release-all is RELEASE");
	log_reset();
	is_int(ordlock_release(ol, &k, 1), 0, "release");
	ok(logged(ORDLOCK_IOC_RELEASE, 0), "release is RELEASE");
	ordlock_detach(ol);

	/* the fallback is per handle, and starts at UNLOCK_ALL too */
	ol = ordlock_open_fd(FAKE_FD);
	log_reset();
	is_int(ordlock_release_all(ol), 0, "release-all on a fresh handle, older module");
	ok(logged(ORDLOCK_IOC_UNLOCK_ALL, ORDLOCK_IOC_RELEASE), "UNLOCK_ALL: ENOTTY, then RELEASE");
	ordlock_detach(ol);
	return tap_done();
}
