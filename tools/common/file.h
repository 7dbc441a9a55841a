/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The whole of a file in memory, for the parsers of parse.h (ordlockctl and
 * the tests read the debugfs files with it).
 */
#ifndef ORDLOCK_COMMON_FILE_H
#define ORDLOCK_COMMON_FILE_H

#include <stddef.h>

/*
 * olc_read_file() - read all of @path ("-": standard input) into a
 * malloc()ed buffer with a NUL appended: 0 with *@buf and *@len set, or
 * -errno (-EFBIG past 1 GiB).
 */
int olc_read_file(const char *path, char **buf, size_t *len);

#endif /* ORDLOCK_COMMON_FILE_H */
