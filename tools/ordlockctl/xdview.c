// SPDX-License-Identifier: GPL-2.0
/*
 * The view of every node, from this node's ordlock-xdetectd (its Unix
 * socket, ordlock-xdetectd(8)): "locks" gathers every node's holders and
 * waiters over CPG, "state" is the daemon's own (members, waits, the
 * rounds across nodes with each cycle's owners as node + pid). No daemon,
 * or not root: none (the JSON member is null).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ordlockctl.h"
#include "print.h"
#include "xdparse.h"

#define OLC_XD_SOCKET	"/run/ordlock-xdetectd.sock"
#define OLC_XD_WAIT_MS	5000

/*
 * The daemon's answer to @cmd (malloc()ed, NUL-terminated), or NULL with
 * *@err: ENOENT or ECONNREFUSED no daemon, EACCES not root, ETIMEDOUT no
 * answer in time, EPROTO not an answer
 */
static char *olc_xd_query(const char *cmd, int *err)
{
	const char *path = getenv("ORDLOCK_XDETECTD_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = 0, cap = 0;
	char *buf = NULL;
	struct timespec t0, t;
	int fd;

	*err = ENAMETOOLONG;
	if (!path)
		path = OLC_XD_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path))
		return NULL;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	*err = errno;
	if (fd < 0)
		return NULL;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, cmd, strlen(cmd), MSG_NOSIGNAL) < 0) {
		*err = errno;
		goto fail;
	}
	*err = ETIMEDOUT;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long ms;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= OLC_XD_WAIT_MS || poll(&p, 1, (int)(OLC_XD_WAIT_MS - ms)) <= 0)
			goto fail;
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb)
				goto fail;
			buf = nb;
			cap += 65536;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*err = errno;
			goto fail;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!len || buf[0] != '{') {
		*err = EPROTO;
		free(buf);
		return NULL;
	}
	/* one object and its newline */
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = '\0';
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

/* Why there is no answer, for a note */
static void olc_xd_why(int err, char *why, size_t len)
{
	const char *path = getenv("ORDLOCK_XDETECTD_SOCKET");

	if (!path)
		path = OLC_XD_SOCKET;
	if (err == ENOENT || err == ECONNREFUSED)
		snprintf(why, len, "no ordlock-xdetectd runs on this node (no %s)", path);
	else if (err == EACCES || err == EPERM)
		snprintf(why, len, "%s is root's (ordlock-xdetectd's socket)", path);
	else if (err == ETIMEDOUT)
		snprintf(why, len, "ordlock-xdetectd did not answer in %d ms", OLC_XD_WAIT_MS);
	else if (err == EPROTO)
		snprintf(why, len, "ordlock-xdetectd's answer is not one object");
	else
		snprintf(why, len, "%s: %s", path, strerror(err));
}

void olc_json_xdetectd(struct olc_json *j, const char *key, const char *cmd)
{
	int err;
	char *text = olc_xd_query(cmd, &err);

	if (text)
		olc_json_raw(j, key, text);
	else
		olc_json_null(j, key);
	free(text);
}

/* Ask and read: 0, or -errno with a sentence in @why; the answer in *@raw */
static int olc_xd_load(const char *cmd, void *out, char *why, size_t len, char **raw,
		       int (*parse)(const char *, void *, char *, size_t))
{
	char msg[160];
	int err, ret;
	char *text = olc_xd_query(cmd, &err);

	if (raw)
		*raw = NULL;
	if (!text) {
		olc_xd_why(err, why, len);
		return -err;
	}
	ret = parse(text, out, msg, sizeof(msg));
	if (raw)
		*raw = text;
	else
		free(text);
	if (ret == -EAGAIN)
		snprintf(why, len, "ordlock-xdetectd: %s", msg);
	else if (ret)
		snprintf(why, len, "ordlock-xdetectd's answer: %s", msg);
	return ret;
}

static int olc_xd_view_parse(const char *text, void *out, char *err, size_t len)
{
	return olc_xd_parse_view(text, out, err, len);
}

static int olc_xd_state_parse(const char *text, void *out, char *err, size_t len)
{
	return olc_xd_parse_state(text, out, err, len);
}

int olc_xd_load_view(struct olc_xd_view *v, char *why, size_t len, char **raw)
{
	return olc_xd_load("locks\n", v, why, len, raw, olc_xd_view_parse);
}

int olc_xd_load_state(struct olc_xd_state *s, char *why, size_t len, char **raw)
{
	return olc_xd_load("state\n", s, why, len, raw, olc_xd_state_parse);
}
