// SPDX-License-Identifier: GPL-2.0
/*
 * t_nl_reuse: a netlink owner belongs to its socket, not to its port id.
 *
 * When a socket closes, netlink frees its port id at once and tells the
 * families (NETLINK_URELEASE) a moment later. A new socket may bind the
 * same port id in between, and send requests. They must reach an owner of
 * their own: never the closing socket's, whose keys they could release or
 * whose owner could be freed under them.
 *
 * Two threads take turns on one port id for 4 s (and 1000 rounds, up to
 * 30 s on a slow kernel): A binds it,
 * tries to take key 1:1 and closes; B binds it as soon as it is free and
 * asks to RELEASE 1:1. B never took anything, so every RELEASE it sends
 * must be refused with ENOENT; one that succeeds released A's key. At the end
 * nothing is left in the domain (debugfs), and on the debug kernel KASAN
 * watches for a use after free.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "nlraw.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define RUN_MS		4000		/* at least, and */
#define MIN_ROUNDS	1000		/* at least, unless it takes */
#define MAX_MS		30000		/* longer than this (a slow kernel) */

struct reuse {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	uint32_t port;
	/* the requests, built once */
	char acq[512], rel[512];
	size_t acq_len, rel_len;
	uint64_t start_ms;
	/* counts */
	unsigned long a_rounds, a_granted, a_busy;
	unsigned long b_rounds, b_refused, b_released, b_errors;
};

/* A socket bound to @port, or -1 while the port is taken */
static int bind_port(uint32_t port)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_pid = port };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send @len bytes of @msg on @fd and read the reply, as olc_raw_recv() */
static int request(int fd, const char *msg, size_t len, uint32_t *status,
		   uint32_t *err)
{
	char buf[8192];
	uint8_t cmd;

	return olc_raw_request(fd, msg, len, buf, sizeof(buf), &cmd, status, err);
}

static int running(const struct reuse *r)
{
	uint64_t t = now_ms() - r->start_ms;

	return t < RUN_MS ||
	       (t < MAX_MS && __atomic_load_n(&r->a_rounds, __ATOMIC_RELAXED) < MIN_ROUNDS);
}

/*
 * A (!@is_b): bind the port id, try to take 1:1, close; again and again.
 * B: bind it as soon as A let it go, ask to release 1:1 (never taken),
 * close.
 */
static void take_turns(struct reuse *r, int is_b)
{
	uint32_t status, err;
	int fd, ret;

	while (running(r)) {
		fd = bind_port(r->port);
		if (fd < 0)
			continue;
		ret = is_b ? request(fd, r->rel, r->rel_len, &status, &err) :
			     request(fd, r->acq, r->acq_len, &status, &err);
		if (!is_b) {
			__atomic_fetch_add(&r->a_rounds, 1, __ATOMIC_RELAXED);
			/* busy: the last A's owner, closed, was not released yet */
			if (!ret && status == ORDLOCK_STATUS_GRANTED)
				r->a_granted++;
			else
				r->a_busy++;
		} else {
			r->b_rounds++;
			if (!ret && status == ORDLOCK_STATUS_REFUSED && err == ENOENT)
				r->b_refused++;
			else if (!ret && status == ORDLOCK_STATUS_GRANTED)
				r->b_released++;
			else
				r->b_errors++;
		}
		close(fd);
	}
}

static void *thread_a(void *arg)
{
	take_turns(arg, 0);
	return NULL;
}

static void *thread_b(void *arg)
{
	take_turns(arg, 1);
	return NULL;
}

/* Build @msg once, copy its bytes into @buf */
static size_t keep(struct nl_msg *msg, char *buf, size_t size)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	size_t len = nlh->nlmsg_len;

	if (len > size)
		bail_out("a request of %zu bytes", len);
	/* no ack: the reply alone answers */
	nlh->nlmsg_flags = NLM_F_REQUEST;
	memcpy(buf, nlh, len);
	nlmsg_free(msg);
	return len;
}

int main(void)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct nlt *s = nlt_must_open();
	struct reuse *r = calloc(1, sizeof(*r));
	struct gt_lock l[8];
	pthread_t ta, tb;
	int n;

	watchdog_start(120);
	if (!r)
		bail_out("out of memory");
	gt_new_domain(r->domain, "nl-reuse", ORDLOCK_POLICY_ENFORCE, 0);
	r->port = 0x40000000u | (uint32_t)getpid();
	r->acq_len = keep(nlt_acquire_msg(s, r->domain, &k, 1, 0,
					  ORDLOCK_ACQUIRE_TRY, 1), r->acq, sizeof(r->acq));
	r->rel_len = keep(nlt_release_msg(s, &k, 1), r->rel, sizeof(r->rel));
	r->start_ms = now_ms();

	if (pthread_create(&ta, NULL, thread_a, r) || pthread_create(&tb, NULL, thread_b, r))
		bail_out("pthread_create failed");
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	diag("A: %lu rounds, %lu granted, %lu not; B: %lu rounds, %lu refused (ENOENT), %lu released, %lu errors",
	     r->a_rounds, r->a_granted, r->a_busy, r->b_rounds, r->b_refused,
	     r->b_released, r->b_errors);

	ok(r->a_granted >= 50 && r->b_rounds >= 50,
	   "the port id changed hands many times (A took 1:1 %lu times, B asked %lu times)",
	   r->a_granted, r->b_rounds);
	is_int((int)r->b_released, 0,
	       "B, on the port id A had just closed, never released A's key");
	is_int((int)r->b_errors, 0, "every other RELEASE of B was refused with ENOENT");
	n = gt_locks_read(r->domain, l, 8);
	is_int(n, 0, "nothing is held or awaited in the domain at the end");
	is_int(olt_probe(r->domain, 1, 1, EX), 0, "1:1 is free");
	nlt_close(s);
	free(r);
	return tap_done();
}
