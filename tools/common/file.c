// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a whole file (see file.h): the debugfs files, a graph file given
 * by the user, standard input.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"

/* No debugfs file comes near this; a larger input is refused */
#define OLC_FILE_MAX		(1U << 30)

int olc_read_file(const char *path, char **bufp, size_t *lenp)
{
	size_t cap = 65536, len = 0;
	char *buf, *p;
	ssize_t n;
	int fd, err;

	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= OLC_FILE_MAX) {
				err = -EFBIG;
				goto fail;
			}
			p = realloc(buf, cap * 2);
			if (!p) {
				err = -ENOMEM;
				goto fail;
			}
			buf = p;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto fail;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
fail:
	close(fd);
	free(buf);
	return err;
}
