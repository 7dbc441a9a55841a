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

/* A point (@what): ioctl @req of @ol with a read-only copy of @arg fails, EFAULT */
static void is_efault(struct ordlock *ol, unsigned long req, const void *arg,
		      size_t len, const char *what)
{
	void *ro = ro_copy(arg, len);

	is_errno(olt_ioctl(ordlock_fd(ol), req, ro), EFAULT, "%s", what);
	munmap(ro, pagesz);
}

/* Owners A and B of a fresh domain, A holding @k (a point, @what) */
static void a_holds(struct ordlock **a, struct ordlock **b, struct ordlock_key k,
		    const char *what)
{
	const char *dom = olt_domain("efault");

	*a = olt_open(dom);
	*b = olt_open(dom);
	is_int(ordlock_acquire(*a, &k, 1, OLT_LONG_MS, 0, NULL), 0, "%s", what);
}

static void test_convert(void)
{
	struct ordlock_key k = ORDLOCK_EX(3, 3);
	struct ordlock_convert cv = {
		.size = sizeof(cv), .key = ORDLOCK_SH(3, 3), .timeout_ns = 1000000000ULL,
	};
	struct ordlock *a, *b;

	a_holds(&a, &b, k, "A holds 3:3 exclusive");
	is_efault(a, ORDLOCK_IOC_CONVERT, &cv, sizeof(cv),
		  "CONVERT to shared with a read-only argument: EFAULT");
	k.mode = SH;
	is_errno(ordlock_try_acquire(b, &k, 1, NULL), EAGAIN,
		 "the key is still exclusive: B's shared try-lock is refused");

	/* and an upgrade back from shared */
	is_int(ordlock_convert(a, ORDLOCK_SH(3, 3), OLT_LONG_MS, 0, NULL), 0,
	       "A downgrades 3:3 to shared (writable argument)");
	cv.key = (struct ordlock_key)ORDLOCK_EX(3, 3);
	is_efault(a, ORDLOCK_IOC_CONVERT, &cv, sizeof(cv),
		  "CONVERT to exclusive with a read-only argument: EFAULT");
	is_int(ordlock_try_acquire(b, &k, 1, NULL), 0,
	       "the key is still shared: B's shared try-lock is granted");
	ordlock_close(a);
	ordlock_close(b);
}

static void test_release(void)
{
	struct ordlock_key k = ORDLOCK_EX(4, 4);
	struct ordlock_release rel = { .size = sizeof(rel), .keys = (uintptr_t)&k, .nkeys = 1 };
	struct ordlock *a, *b;

	a_holds(&a, &b, k, "A holds 4:4");
	is_efault(a, ORDLOCK_IOC_RELEASE, &rel, sizeof(rel),
		  "RELEASE of 4:4 with a read-only argument: EFAULT");
	is_int(olt_nheld(a), 1, "A still holds its key");
	is_errno(ordlock_try_acquire(b, &k, 1, NULL), EAGAIN, "and B cannot take it");

	memset(&rel, 0, sizeof(rel));
	rel.size = sizeof(rel);
	rel.flags = ORDLOCK_RELEASE_ALL;
	is_efault(a, ORDLOCK_IOC_RELEASE, &rel, sizeof(rel),
		  "RELEASE_ALL with a read-only argument: EFAULT");
	is_int(olt_nheld(a), 1, "A still holds its key");
	ordlock_close(a);
	ordlock_close(b);
}

static void test_domain_config(void)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock *a;
	struct ordlock_domain_config dc, now;

	snprintf(dom, sizeof(dom), "%s", olt_domain("efault"));
	a = olt_open(dom);
	memset(&dc, 0, sizeof(dc));
	dc.size = sizeof(dc);
	dc.flags = ORDLOCK_DOMAIN_SET_POLICY;
	dc.policy = ORDLOCK_POLICY_DETECT;
	memcpy(dc.name, dom, sizeof(dc.name));
	is_efault(a, ORDLOCK_IOC_DOMAIN_CONFIG, &dc, sizeof(dc),
		  "DOMAIN_CONFIG setting policy detect with a read-only argument: EFAULT");
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

	memset(&sd, 0, sizeof(sd));
	sd.size = sizeof(sd);
	snprintf(sd.name, sizeof(sd.name), "%s", olt_domain("efault-move"));
	is_efault(a, ORDLOCK_IOC_SET_DOMAIN, &sd, sizeof(sd),
		  "SET_DOMAIN with a read-only argument: EFAULT");
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
