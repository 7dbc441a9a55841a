// SPDX-License-Identifier: GPL-2.0
/*
 * nlcheck: the checks and helpers of the netlink lock tests (t_netlink,
 * t_nl_deadlock, t_nl_admin): one reply or RESULT or event as a TAP point
 * with its diagnostics, a request from a thread of its own, and counts of
 * a dump's entries.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graphtest.h"
#include "libordlock.h"
#include "nlcheck.h"
#include "oltest.h"
#include "tap.h"

struct nlt *L;


/* The request got a reply (no netlink error) with @status */
int st_ok(struct nlt *s, int ret, const struct olc_nl_outcome *o,
	  uint32_t status, const char *fmt, ...)
{
	char name[256];
	va_list ap;
	int cond;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	cond = !ret && o->status == status;
	ok(cond, "%s", name);
	if (ret)
		diag("  netlink error %s", nlt_extack_str(s));
	else if (!cond)
		diag("  want %s, got %s", nlt_status_name(status),
		     nlt_outcome_str(o));
	return cond;
}

/* The next RESULT of @s has @status and @cookie */
int result_ok(struct nlt *s, struct olc_nl_outcome *o, uint32_t status,
	      uint64_t cookie, const char *what)
{
	int ret = nlt_wait_result(s, WAIT_MS, o);
	int cond = !ret && o->status == status && o->cookie == cookie &&
		   o->cmd == ORDLOCK_CMD_RESULT;

	ok(cond, "%s: RESULT %s, cookie %llu", what, nlt_status_name(status),
	   (unsigned long long)cookie);
	if (ret)
		diag("  no RESULT: %s", strerror(-ret));
	else if (!cond)
		diag("  got %s", nlt_outcome_str(o));
	return cond;
}

int event_ok(uint32_t type, const char *domain, struct olc_nl_event *ev,
	     const char *what)
{
	int ret = nlt_wait_event(L, type, domain, WAIT_MS, ev);

	ok(!ret, "%s: a %s event about %s", what, nlt_event_name(type), domain);
	if (ret)
		diag("  %s", strerror(-ret));
	return !ret;
}

int fail_ok(const struct ordlock_failure *f, uint32_t reason,
	    uint32_t error, const char *what)
{
	int cond = f->reason == reason && f->error == error;

	ok(cond, "%s: failure reason %s, error %s", what,
	   ordlock_reason_name(reason), strerror(error));
	if (!cond)
		diag("  got %s", olt_fail_str(f));
	return cond;
}

int key_ok(const struct ordlock_key *k, uint32_t rank, uint64_t id,
	   unsigned int mode, const char *what)
{
	int cond = olt_key_eq(k, rank, id, mode);

	ok(cond, "%s is %s %u:%llu", what, ordlock_mode_name(mode), rank,
	   (unsigned long long)id);
	if (!cond)
		diag("  got %s %u:%llu", ordlock_mode_name(k->mode), k->rank,
		     (unsigned long long)k->id);
	return cond;
}

void diag_cycle(const struct ordlock_cycle_step *c, int n)
{
	int i;

	for (i = 0; i < n; i++)
		diag("  step %d: %s", i, gt_step_str(&c[i]));
}

/*
 * A request sent from a thread of its own. The kernel remembers the thread
 * of an owner's last request; owners of one thread are told apart from
 * those of another (see test_same_thread()), so the tests that are not
 * about that give each owner its own thread.
 */
struct nl_call {
	struct nlt *s;
	const char *domain;
	struct ordlock_key key;
	uint64_t timeout_ns;
	uint64_t cookie;
	int ret;
	struct olc_nl_outcome o;
};

static void *nl_call_main(void *arg)
{
	struct nl_call *c = arg;

	c->ret = nlt_acquire(c->s, c->domain, &c->key, 1, c->timeout_ns, 0,
			     c->cookie, &c->o);
	return NULL;
}

/* nlt_acquire() of one key from a new thread (bounded by NLT_REPLY_MS) */
int acquire_elsewhere(struct nlt *s, const char *domain,
		      struct ordlock_key key, uint64_t timeout_ns,
		      uint64_t cookie, struct olc_nl_outcome *o)
{
	struct nl_call c = {
		.s = s, .domain = domain, .key = key,
		.timeout_ns = timeout_ns, .cookie = cookie,
	};
	pthread_t t;

	if (pthread_create(&t, NULL, nl_call_main, &c))
		bail_out("pthread_create failed");
	pthread_join(t, NULL);
	*o = c.o;
	return c.ret;
}

/* Entries of a dump of @domain that match key (@rank, @id) and @role */
int count_locks(const char *domain, uint32_t rank, uint64_t id,
		uint32_t role)
{
	struct olc_nl_entry *v;
	int i, n, c = 0;

	n = nlt_dump(L, ORDLOCK_CMD_GET_LOCKS, domain, &v);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (v[i].key.rank == rank && v[i].key.id == id &&
		    v[i].role == role)
			c++;
	free(v);
	return c;
}

/* The netlink owners of @domain in this process, and what they hold */
int my_nl_owners(const char *domain, long *held)
{
	struct olc_nl_entry *v;
	int i, n, c = 0;

	*held = 0;
	n = nlt_dump(L, ORDLOCK_CMD_GET_OWNERS, domain, &v);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (v[i].kind != ORDLOCK_KIND_NETLINK || (pid_t)v[i].pid != getpid())
			continue;
		c++;
		*held += v[i].held;
	}
	free(v);
	return c;
}
