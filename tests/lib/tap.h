/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small TAP producer for the ordlock tests (TAP version 13).
 *
 * ok(cond, fmt, ...) records one test point; is_int()/is_errno() compare and
 * print what they saw on failure; diag() writes a "# " comment; tap_done()
 * prints the plan and returns the exit status (0 when every point passed).
 * Output is line-buffered and flushed before fork() callers need it to be.
 */
#ifndef ORDLOCK_TAP_H
#define ORDLOCK_TAP_H

#include <stdarg.h>
#include <stdio.h>

int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bail_out(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
int tap_done(void);

/* is_int(got, want, name...): integers equal */
#define is_int(got, want, ...) \
	tap_is_int((long long)(got), (long long)(want), #got, __VA_ARGS__)
int tap_is_int(long long got, long long want, const char *expr,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * is_errno(ret, err, name...): a call that returns -1/errno or -errno
 * failed with errno @err (pass the call's return value; errno is read too).
 */
#define is_errno(ret, err, ...) tap_is_errno((long)(ret), (err), __VA_ARGS__)
int tap_is_errno(long ret, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* ORDLOCK_TAP_H */
