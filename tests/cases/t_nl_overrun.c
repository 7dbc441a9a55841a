// SPDX-License-Identifier: GPL-2.0
/*
 * t_nl_overrun: a grant that cannot be told to its socket is undone.
 *
 * A netlink owner learns of a grant only from a message: the reply to its
 * ACQUIRE or CONVERT, or a later RESULT. When the socket's receive buffer
 * is full, the message cannot be queued; the grant is then undone, since
 * the owner would hold what it does not know of:
 *
 *  - RESULT of a queued acquire: the keys are released;
 *  - RESULT of a queued upgrade: the key goes back to shared, still held;
 *  - reply to an acquire granted at once: the keys are released;
 *  - reply to an upgrade granted at once: the key goes back to shared.
 *
 * The buffer is filled on purpose: SO_RCVBUF at its minimum, then GET_STATS
 * requests that nobody reads. Each case then checks the lock table in
 * debugfs, that the socket saw ENOBUFS and no message about the grant, and
 * that it still works once read: what the undo left is what RELEASE finds.
 */
#include <errno.h>
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
#include "nlcheck.h"	/* SH, EX, LONG_MS, LONG_NS, WAIT_MS */
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define FILL_REQUESTS	200

/* What reading a flooded socket found */
struct drained {
	int enobufs;		/* recv() reported the overrun */
	int replies;		/* messages with the sequence number looked for */
	int results;		/* ORDLOCK_CMD_RESULT messages */
	int messages;		/* all messages */
};

/* Shrink @s's receive buffer and fill it with replies nobody reads */
static int flood(struct nlt *s, const char *domain)
{
	int fd = nlt_fd(s), one = 1, i;
	uint32_t seq;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)))
		return -errno;
	for (i = 0; i < FILL_REQUESTS; i++) {
		struct nl_msg *msg = nlt_msg_new(s, ORDLOCK_CMD_GET_STATS, 0);

		if (nla_put_string(msg, ORDLOCK_A_DOMAIN, domain)) {
			nlmsg_free(msg);
			return -EMSGSIZE;
		}
		if (nlt_send_only(s, msg, &seq))
			return -EIO;
	}
	return 0;
}

/* Read everything queued on @s, counting the messages with sequence @seq */
static void drain(struct nlt *s, uint32_t seq, struct drained *d)
{
	static char buf[65536];
	int fd = nlt_fd(s), rcvbuf = 1 << 20;
	ssize_t n;

	memset(d, 0, sizeof(*d));
	for (;;) {
		struct nlmsghdr *nlh;
		int len;

		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			d->enobufs++;
			continue;
		}
		if (n <= 0)
			break;
		len = (int)n;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len);
		     nlh = NLMSG_NEXT(nlh, len)) {
			d->messages++;
			if (seq && nlh->nlmsg_seq == seq)
				d->replies++;
			if (nlh->nlmsg_type >= NLMSG_MIN_TYPE &&
			    ((struct genlmsghdr *)NLMSG_DATA(nlh))->cmd == ORDLOCK_CMD_RESULT)
				d->results++;
		}
	}
	/* from now on the socket may read at its ease again */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
}

/* The lines of debugfs locks for (@rank, @id) in @domain, by role */
static void key_lines(const char *domain, uint32_t rank, uint64_t id,
		      int *holders, unsigned int *mode, int *others)
{
	struct gt_lock l[16];
	int n = gt_locks_read(domain, l, 16), i;

	*holders = 0;
	*others = 0;
	*mode = 0;
	for (i = 0; i < n; i++) {
		if (l[i].rank != rank || l[i].id != id)
			continue;
		if (l[i].role == GT_HOLDER) {
			(*holders)++;
			*mode = l[i].mode;
		} else {
			(*others)++;
		}
	}
}

/*
 * Wait until (@rank, @id) has no waiter or converter, and @holders holders
 * (the last one in @mode, if @holders). The waiter leaves the queue when
 * the key is granted, but the RESULT is sent, or the grant undone, by a
 * work item later: so wait for the state after the undo, not for the
 * queue to empty. 0, or -ETIMEDOUT (the state was never reached).
 */
static int wait_state(const char *domain, uint32_t rank, uint64_t id,
		      int want_holders, unsigned int want_mode)
{
	uint64_t deadline = now_ms() + WAIT_MS;
	unsigned int mode;
	int holders, others;

	do {
		key_lines(domain, rank, id, &holders, &mode, &others);
		if (!others && holders == want_holders &&
		    (!holders || mode == want_mode))
			return 0;
		usleep(10000);
	} while (now_ms() < deadline);
	diag("  1:1 has %d holder(s) (mode %u) and %d waiter(s)", holders, mode,
	     others);
	return -ETIMEDOUT;
}

static void check_drained(const struct drained *d, const char *what)
{
	ok(d->enobufs > 0, "%s: the socket reports the overrun (ENOBUFS)", what);
	is_int(d->replies, 0, "%s: no reply to the request was queued", what);
	is_int(d->results, 0, "%s: no RESULT was queued", what);
	ok(d->messages < FILL_REQUESTS,
	   "%s: the flood did not fit (%d of %d replies kept)", what,
	   d->messages, FILL_REQUESTS);
}

/* @s holds @key in @mode: RELEASE finds it, and it is then free */
static void check_holds(struct nlt *s, const char *domain,
			struct ordlock_key key, const char *what)
{
	struct olc_nl_outcome o;
	int ret = nlt_release(s, &key, 1, &o);

	ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
	   "%s: the socket works again, and RELEASE finds %u:%llu held", what,
	   key.rank, (unsigned long long)key.id);
	if (ret)
		diag("  %s", nlt_extack_str(s));
	else if (o.status != ORDLOCK_STATUS_GRANTED)
		diag("  %s", nlt_outcome_str(&o));
	is_int(olt_probe(domain, key.rank, key.id, EX), 0,
	       "%s: then %u:%llu is free", what, key.rank,
	       (unsigned long long)key.id);
}

/* @s holds nothing of @key: RELEASE refuses with ENOENT */
static void check_holds_nothing(struct nlt *s, struct ordlock_key key,
				const char *what)
{
	struct olc_nl_outcome o;
	int ret = nlt_release(s, &key, 1, &o);

	ok(!ret && o.status == ORDLOCK_STATUS_REFUSED && o.error == ENOENT,
	   "%s: the socket works again, and holds nothing (RELEASE: ENOENT)",
	   what);
	if (ret)
		diag("  %s", nlt_extack_str(s));
	else if (o.status != ORDLOCK_STATUS_REFUSED)
		diag("  %s", nlt_outcome_str(&o));
}

/* A queued request, granted while the socket's buffer is full */
static void test_queued(int convert)
{
	const char *what = convert ? "queued upgrade" : "queued acquire";
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key key = ORDLOCK_SH(1, 1);
	struct nlt *s = nlt_must_open();
	struct olc_nl_outcome o;
	struct ordlock *b;
	struct drained d;
	int ret;

	gt_new_domain(dom, convert ? "nlo-qup" : "nlo-qacq",
		      ORDLOCK_POLICY_ENFORCE, 0);
	b = olt_open(dom);
	/* b holds 1:1 shared; s holds it shared too, or not at all */
	is_int(ordlock_acquire(b, &key, 1, LONG_MS, 0, NULL), 0,
	       "%s: an ioctl owner holds 1:1 shared", what);
	if (convert) {
		ret = nlt_acquire(s, dom, &key, 1, LONG_NS, 0, 1, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
		   "%s: the socket holds 1:1 shared too", what);
		ret = nlt_convert(s, ORDLOCK_EX(1, 1), LONG_NS, 0, 2, &o);
	} else {
		struct ordlock_key ex = ORDLOCK_EX(1, 1);

		ret = nlt_acquire(s, dom, &ex, 1, LONG_NS, 0, 2, &o);
	}
	ok(!ret && o.status == ORDLOCK_STATUS_QUEUED,
	   "%s: the socket's request for 1:1 exclusive is queued", what);

	is_int(flood(s, dom), 0, "%s: the socket's receive buffer is full", what);
	/* the grant: its RESULT cannot be queued */
	is_int(ordlock_release_all(b), 0, "%s: the ioctl owner releases", what);
	if (convert) {
		is_int(wait_state(dom, 1, 1, 1, SH), 0,
		       "%s: the socket holds 1:1 shared again, not exclusive", what);
		is_int(olt_probe(dom, 1, 1, SH), 0,
		       "%s: others can take 1:1 shared", what);
	} else {
		is_int(wait_state(dom, 1, 1, 0, 0), 0,
		       "%s: nobody holds or waits for 1:1", what);
		is_int(olt_probe(dom, 1, 1, EX), 0,
		       "%s: others can take 1:1 exclusive", what);
	}
	drain(s, 0, &d);
	check_drained(&d, what);
	if (convert)
		check_holds(s, dom, key, what);
	else
		check_holds_nothing(s, ORDLOCK_EX(1, 1), what);
	ordlock_close(b);
	nlt_close(s);
}

/* A request granted at once, whose reply cannot be queued */
static void test_at_once(int convert)
{
	const char *what = convert ? "upgrade at once" : "acquire at once";
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key sh = ORDLOCK_SH(1, 1), ex = ORDLOCK_EX(1, 1);
	struct nlt *s = nlt_must_open();
	struct nl_msg *msg;
	struct olc_nl_outcome o;
	struct drained d;
	unsigned int mode;
	int ret, holders, others;
	uint32_t seq = 0;

	gt_new_domain(dom, convert ? "nlo-up" : "nlo-acq",
		      ORDLOCK_POLICY_ENFORCE, 0);
	if (convert) {
		ret = nlt_acquire(s, dom, &sh, 1, LONG_NS, 0, 1, &o);
		ok(!ret && o.status == ORDLOCK_STATUS_GRANTED,
		   "%s: the socket holds 1:1 shared, alone", what);
	}
	is_int(flood(s, dom), 0, "%s: the socket's receive buffer is full", what);
	msg = convert ? nlt_convert_msg(s, ex, LONG_NS, 0, 2) :
			nlt_acquire_msg(s, dom, &ex, 1, LONG_NS, 0, 2);
	is_int(msg ? nlt_send_only(s, msg, &seq) : -EMSGSIZE, 0,
	       "%s: the request for 1:1 exclusive is sent", what);
	/* the request was handled in the send; its reply found no room */
	key_lines(dom, 1, 1, &holders, &mode, &others);
	if (convert) {
		ok(holders == 1 && mode == SH && !others,
		   "%s: the socket holds 1:1 shared again, not exclusive (%d holder(s), mode %u)",
		   what, holders, mode);
		is_int(olt_probe(dom, 1, 1, SH), 0,
		       "%s: others can take 1:1 shared", what);
	} else {
		ok(!holders && !others, "%s: nobody holds or waits for 1:1", what);
		is_int(olt_probe(dom, 1, 1, EX), 0,
		       "%s: others can take 1:1 exclusive", what);
	}
	drain(s, seq, &d);
	check_drained(&d, what);
	if (convert)
		check_holds(s, dom, sh, what);
	else
		check_holds_nothing(s, ex, what);
	nlt_close(s);
}

int main(void)
{
	watchdog_start(300);
	test_queued(0);
	test_queued(1);
	test_at_once(0);
	test_at_once(1);
	return tap_done();
}
