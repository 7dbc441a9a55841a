// SPDX-License-Identifier: GPL-2.0
/*
 * t_efault: a call that reports failure has changed nothing.  Every ioctl
 * that acts is given a valid argument in a page the caller can read but
 * not write, so that the kernel can read the request and cannot write the
 * result: each must fail with EFAULT and leave everything as it was (the
 * keys held in their old modes, the policy unchanged, the owner in its
 * domain), as another owner sees it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

static long pagesz;

/* A read-only copy of @len bytes of @src; munmap(…, pagesz) after */
static void *ro_copy(const void *src, size_t len)
{
	void *p = mmap(NULL, pagesz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		bail_out("mmap: %s", strerror(errno));
	memcpy(p, src, len);
	if (mprotect(p, pagesz, PROT_READ))
		bail_out("mprotect: %s", strerror(errno));
	return p;
}

static void test_convert(void)
{
	const char *dom = olt_domain("efault");
	struct ordlock *a = olt_open(dom), *b = olt_open(dom);
	struct ordlock_key k = ORDLOCK_EX(3, 3);
	struct ordlock_convert cv;
	void *ro;

	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0, "A holds 3:3 exclusive");
	memset(&cv, 0, sizeof(cv));
	cv.size = sizeof(cv);
	cv.key = (struct ordlock_key)ORDLOCK_SH(3, 3);
	cv.timeout_ns = 1000000000ULL;
	ro = ro_copy(&cv, sizeof(cv));
	is_errno(olt_ioctl(ordlock_fd(a), ORDLOCK_IOC_CONVERT, ro), EFAULT,
		 "CONVERT to shared with a read-only argument: EFAULT");
	k.mode = SH;
	is_errno(ordlock_try_acquire(b, &k, 1, NULL), EAGAIN,
		 "the key is still exclusive: B's shared try-lock is refused");
	munmap(ro, pagesz);

	/* and an upgrade back from shared */
	is_int(ordlock_convert(a, ORDLOCK_SH(3, 3), OLT_LONG_MS, 0, NULL), 0,
	       "A downgrades 3:3 to shared (writable argument)");
	cv.key = (struct ordlock_key)ORDLOCK_EX(3, 3);
	ro = ro_copy(&cv, sizeof(cv));
	is_errno(olt_ioctl(ordlock_fd(a), ORDLOCK_IOC_CONVERT, ro), EFAULT,
		 "CONVERT to exclusive with a read-only argument: EFAULT");
	is_int(ordlock_try_acquire(b, &k, 1, NULL), 0,
	       "the key is still shared: B's shared try-lock is granted");
	munmap(ro, pagesz);
	ordlock_close(a);
	ordlock_close(b);
}

static void test_release(void)
{
	const char *dom = olt_domain("efault");
	struct ordlock *a = olt_open(dom), *b = olt_open(dom);
	struct ordlock_key k = ORDLOCK_EX(4, 4);
	struct ordlock_release rel;
	void *ro;

	is_int(ordlock_acquire(a, &k, 1, OLT_LONG_MS, 0, NULL), 0, "A holds 4:4");
	memset(&rel, 0, sizeof(rel));
	rel.size = sizeof(rel);
	rel.keys = (uintptr_t)&k;
	rel.nkeys = 1;
	ro = ro_copy(&rel, sizeof(rel));
	is_errno(olt_ioctl(ordlock_fd(a), ORDLOCK_IOC_RELEASE, ro), EFAULT,
		 "RELEASE of 4:4 with a read-only argument: EFAULT");
	is_int(olt_nheld(a), 1, "A still holds its key");
	is_errno(ordlock_try_acquire(b, &k, 1, NULL), EAGAIN, "and B cannot take it");
	munmap(ro, pagesz);

	memset(&rel, 0, sizeof(rel));
	rel.size = sizeof(rel);
	rel.flags = ORDLOCK_RELEASE_ALL;
	ro = ro_copy(&rel, sizeof(rel));
	is_errno(olt_ioctl(ordlock_fd(a), ORDLOCK_IOC_RELEASE, ro), EFAULT,
		 "RELEASE_ALL with a read-only argument: EFAULT");
	is_int(olt_nheld(a), 1, "A still holds its key");
	munmap(ro, pagesz);
	ordlock_close(a);
	ordlock_close(b);
}

static void test_domain_config(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock *a;
	struct ordlock_domain_config dc, now;
	void *ro;

	snprintf(dom, sizeof(dom), "%s", olt_domain("efault"));
	a = olt_open(dom);
	memset(&dc, 0, sizeof(dc));
	dc.size = sizeof(dc);
	dc.flags = ORDLOCK_DOMAIN_SET_POLICY;
	dc.policy = ORDLOCK_POLICY_DETECT;
	memcpy(dc.name, dom, sizeof(dc.name));
	ro = ro_copy(&dc, sizeof(dc));
	is_errno(olt_ioctl(ordlock_fd(a), ORDLOCK_IOC_DOMAIN_CONFIG, ro), EFAULT,
		 "DOMAIN_CONFIG setting policy detect with a read-only argument: EFAULT");
	munmap(ro, pagesz);
	memset(&now, 0, sizeof(now));
	now.size = sizeof(now);
	memcpy(now.name, dom, sizeof(now.name));
	is_int(olt_ioctl(ordlock_fd(a), ORDLOCK_IOC_DOMAIN_CONFIG, &now), 0,
	       "DOMAIN_CONFIG reads the domain");
	is_int(now.policy, ORDLOCK_POLICY_ENFORCE, "the policy is still enforce");
	ordlock_close(a);
}

static void test_set_domain(void)
{
	struct ordlock *a = olt_open(NULL);
	struct ordlock_set_domain sd;
	struct ordlock_owner_info info;
	void *ro;

	memset(&sd, 0, sizeof(sd));
	sd.size = sizeof(sd);
	snprintf(sd.name, sizeof(sd.name), "%s", olt_domain("efault-move"));
	ro = ro_copy(&sd, sizeof(sd));
	is_errno(olt_ioctl(ordlock_fd(a), ORDLOCK_IOC_SET_DOMAIN, ro), EFAULT,
		 "SET_DOMAIN with a read-only argument: EFAULT");
	munmap(ro, pagesz);
	if (is_int(ordlock_owner_info(a, &info), 0, "OWNER_INFO"))
		ok(!strcmp(info.domain, "default"), "the owner is still in \"default\" (%.32s)",
		   info.domain);
	ordlock_close(a);
}

int main(void)
{
	pagesz = sysconf(_SC_PAGESIZE);
	watchdog_start(60);
	test_convert();
	test_release();
	test_domain_config();
	test_set_domain();
	return tap_done();
}
