// SPDX-License-Identifier: GPL-2.0
/* A small TAP producer: see tap.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

static int tap_count;
static int tap_failed;

static void tap_vpoint(int cond, const char *fmt, va_list ap)
{
	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vpoint(cond, fmt, ap);
	va_end(ap);
	return cond;
}

void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void bail_out(const char *fmt, ...)
{
	va_list ap;

	fputs("Bail out! ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(255);
}

int tap_done(void)
{
	printf("1..%d\n", tap_count);
	if (tap_failed)
		printf("# failed %d of %d\n", tap_failed, tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

int tap_is_int(long long got, long long want, const char *expr,
	       const char *fmt, ...)
{
	va_list ap;
	int cond = got == want;

	va_start(ap, fmt);
	tap_vpoint(cond, fmt, ap);
	va_end(ap);
	if (!cond)
		diag("  %s: got %lld, want %lld", expr, got, want);
	return cond;
}

int tap_is_errno(long ret, int err, const char *fmt, ...)
{
	int saved = errno;
	int got = ret < -1 ? (int)-ret : (ret == -1 ? saved : 0);
	va_list ap;
	int cond = got == err;

	va_start(ap, fmt);
	tap_vpoint(cond, fmt, ap);
	va_end(ap);
	if (!cond)
		diag("  want %s (%d), got %s (%d)", strerror(err), err,
		     got ? strerror(got) : "success", got);
	return cond;
}
