// SPDX-License-Identifier: GPL-2.0
/*
 * t_nl_dump: the dumps GET_LOCKS, GET_OWNERS and GET_GRAPH with thousands
 * of entries, which take many messages and several rounds of the dump:
 *
 *  - one netlink owner holds 3000 keys: GET_LOCKS has exactly one entry
 *    per key (no key missing, none twice), GET_OWNERS says 3000 held;
 *  - 80 netlink sockets wait in a row for a key an ioctl owner holds:
 *    GET_GRAPH has exactly 80 hard edges (to the holder) and 80 * 79 / 2
 *    soft ones (to each waiter ahead), GET_LOCKS the 80 queue positions,
 *    GET_OWNERS 80 waiting owners; closing the sockets empties it all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "nlcheck.h"	/* SH, EX, LONG_MS, LONG_NS, WAIT_MS */
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define NKEYS		3000
#define CHUNK		1000
#define NWAIT		80

static void test_many_keys(struct nlt *q)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key *keys;
	unsigned char *seen;
	struct olc_nl_outcome o;
	struct olc_nl_entry *v;
	unsigned int i, c, dup = 0, wrong = 0, missing = 0;
	long per_owner, per_req;
	struct nlt *s;
	int n, n2, ret, all;

	diag("one owner holds %d keys", NKEYS);
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlbig"));
	per_owner = olt_param_get("max_keys_per_owner");
	per_req = olt_param_get("max_keys_per_request");
	if (per_owner < NKEYS)
		is_int(olt_param_set("max_keys_per_owner", NKEYS), 0,
		       "max_keys_per_owner raised to %d", NKEYS);
	if (per_req < CHUNK)
		is_int(olt_param_set("max_keys_per_request", CHUNK), 0,
		       "max_keys_per_request raised to %d", CHUNK);

	keys = calloc(NKEYS, sizeof(*keys));
	seen = calloc(NKEYS, 1);
	for (i = 0; i < NKEYS; i++)
		keys[i] = ORDLOCK_EX(7, i);
	s = nlt_must_open();
	all = 1;
	for (c = 0; c < NKEYS; c += CHUNK) {
		/* naming the domain again while holding would be EBUSY */
		ret = nlt_acquire(s, c ? NULL : dom, keys + c, CHUNK, 0, 0, c, &o);
		if (ret || o.status != ORDLOCK_STATUS_GRANTED) {
			diag("keys %u..%u: %s", c, c + CHUNK - 1,
			     ret ? nlt_extack_str(s) : nlt_outcome_str(&o));
			all = 0;
		}
	}
	ok(all, "%d keys taken in %d requests", NKEYS, NKEYS / CHUNK);

	n = nlt_dump(q, ORDLOCK_CMD_GET_LOCKS, dom, &v);
	is_int(n, NKEYS, "GET_LOCKS: exactly %d entries in the domain", NKEYS);
	for (i = 0; i < (unsigned int)(n > 0 ? n : 0); i++) {
		if (v[i].key.rank != 7 || v[i].key.id >= NKEYS ||
		    v[i].role != ORDLOCK_ROLE_HOLDER || v[i].position ||
		    v[i].mode != EX || (pid_t)v[i].pid != getpid() ||
		    !OLC_NL_HAS(&v[i], ORDLOCK_E_TOKEN)) {
			if (wrong++ < 5)
				diag("  entry %u: %u:%llu role %u pos %u mode %u pid %u",
				     i, v[i].key.rank,
				     (unsigned long long)v[i].key.id, v[i].role,
				     v[i].position, v[i].mode, v[i].pid);
			continue;
		}
		if (seen[v[i].key.id]++)
			dup++;
	}
	for (i = 0; i < NKEYS; i++)
		missing += !seen[i];
	is_int(wrong, 0, "every entry: rank 7, a holder at position 0, exclusive, our pid, a token");
	is_int(dup, 0, "no key twice");
	is_int(missing, 0, "no key missing");
	free(v);
	n2 = nlt_dump(q, ORDLOCK_CMD_GET_LOCKS, NULL, NULL);
	ok(n2 >= NKEYS, "GET_LOCKS of every domain: %d entries", n2);

	n = nlt_dump(q, ORDLOCK_CMD_GET_OWNERS, dom, &v);
	ok(n == 1 && v[0].held == NKEYS && v[0].kind == ORDLOCK_KIND_NETLINK,
	   "GET_OWNERS: one netlink owner holding %d keys (%d, %u)", NKEYS, n,
	   n > 0 ? v[0].held : 0);
	free(v);

	ret = nlt_release(s, NULL, 0, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_GRANTED, "RELEASE all");
	is_int(nlt_dump(q, ORDLOCK_CMD_GET_LOCKS, dom, NULL), 0,
	       "GET_LOCKS: nothing left in the domain");
	nlt_close(s);
	free(keys);
	free(seen);
	olt_param_restore();
}

static void test_many_waiters(struct nlt *q)
{
	char dom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key key = ORDLOCK_EX(1, 1);
	static struct nlt *w[NWAIT];
	unsigned char pos[NWAIT];
	struct olc_nl_outcome o;
	struct olt_holder *hol;
	struct olc_nl_entry *v;
	uint64_t hid;
	unsigned int i, hard = 0, soft = 0, hard_ok = 0, wrong = 0;
	unsigned int waiting = 0, holders = 0, queued = 0;
	int n, ret;

	diag("%d sockets wait for one key: %d edges", NWAIT,
	     NWAIT + NWAIT * (NWAIT - 1) / 2);
	snprintf(dom, sizeof(dom), "%s", olt_domain("nlgraph"));
	/* another process: see t_netlink's test_same_thread() */
	hol = olt_holder_start(dom, &key, 1);
	is_int(hol->result, 0, "an ioctl owner (child) holds x1:1");
	hid = nlt_lock_owner(q, dom, 1, 1, ORDLOCK_ROLE_HOLDER, 0);
	for (i = 0; i < NWAIT; i++) {
		w[i] = nlt_must_open();
		ret = nlt_acquire(w[i], dom, &key, 1, LONG_NS, 0, i, &o);
		if (!ret && o.status == ORDLOCK_STATUS_QUEUED)
			queued++;
	}
	is_int(queued, NWAIT, "%d sockets are QUEUED", NWAIT);

	n = nlt_dump(q, ORDLOCK_CMD_GET_GRAPH, dom, &v);
	is_int(n, NWAIT + NWAIT * (NWAIT - 1) / 2, "GET_GRAPH: every edge");
	for (i = 0; i < (unsigned int)(n > 0 ? n : 0); i++) {
		if (!olt_key_eq(&v[i].key, 1, 1, EX) ||
		    !OLC_NL_HAS(&v[i], ORDLOCK_E_BLOCKER) ||
		    v[i].blocker.mode != EX) {
			wrong++;
			continue;
		}
		if (v[i].edge == ORDLOCK_EDGE_HARD) {
			hard++;
			hard_ok += v[i].blocker.owner_id == hid;
		} else if (v[i].edge == ORDLOCK_EDGE_SOFT) {
			soft++;
		} else {
			wrong++;
		}
	}
	is_int(wrong, 0, "every edge: key x1:1, a blocker holding or asking exclusive");
	is_int(hard, NWAIT, "%d hard edges", NWAIT);
	is_int(hard_ok, NWAIT, "all to the ioctl holder");
	is_int(soft, NWAIT * (NWAIT - 1) / 2, "%d soft edges", NWAIT * (NWAIT - 1) / 2);
	free(v);

	memset(pos, 0, sizeof(pos));
	n = nlt_dump(q, ORDLOCK_CMD_GET_LOCKS, dom, &v);
	for (i = 0; i < (unsigned int)(n > 0 ? n : 0); i++) {
		if (v[i].role == ORDLOCK_ROLE_HOLDER)
			holders++;
		else if (v[i].role == ORDLOCK_ROLE_WAITER &&
			 v[i].position < NWAIT && !pos[v[i].position]++)
			waiting++;
	}
	ok(n == NWAIT + 1 && holders == 1 && waiting == NWAIT,
	   "GET_LOCKS: 1 holder, %d waiters at positions 0..%d (%d entries)",
	   NWAIT, NWAIT - 1, n);
	free(v);

	n = nlt_dump(q, ORDLOCK_CMD_GET_OWNERS, dom, &v);
	waiting = 0;
	for (i = 0; i < (unsigned int)(n > 0 ? n : 0); i++)
		if (v[i].kind == ORDLOCK_KIND_NETLINK &&
		    OLC_NL_HAS(&v[i], ORDLOCK_E_KEY) &&
		    OLC_NL_HAS(&v[i], ORDLOCK_E_WAITED_US) &&
		    olt_key_eq(&v[i].key, 1, 1, EX))
			waiting++;
	ok(n == NWAIT + 1 && waiting == NWAIT,
	   "GET_OWNERS: %d netlink owners waiting for x1:1 (%d owners)", NWAIT, n);
	free(v);

	is_int(olt_holder_stop(hol), 0, "the holder exits");
	ret = nlt_wait_result(w[0], WAIT_MS, &o);
	ok(!ret && o.status == ORDLOCK_STATUS_GRANTED && o.cookie == 0,
	   "the first socket is granted when the holder releases");
	for (i = 0; i < NWAIT; i++)
		nlt_close(w[i]);
	is_int(nlt_dump(q, ORDLOCK_CMD_GET_LOCKS, dom, NULL), 0,
	       "closing the sockets emptied the queue");
	is_int(nlt_dump(q, ORDLOCK_CMD_GET_GRAPH, dom, NULL), 0, "and the graph");
	is_int(nlt_dump(q, ORDLOCK_CMD_GET_OWNERS, dom, NULL), 0,
	       "GET_OWNERS: nobody left in the domain");
}

/* Moves one owner between a short and a long domain name, for 2 s */
static void *flip_domains(void *arg)
{
	const char **names = arg;
	struct ordlock *ol = olt_open(NULL);
	uint64_t end = now_ms() + 2000;
	unsigned int i = 0;

	while (now_ms() < end)
		if (ordlock_set_domain(ol, names[i++ & 1]))
			break;
	ordlock_close(ol);
	return NULL;
}

/*
 * An owner's domain name is read by the GET_OWNERS dump while the owner
 * moves: each entry must still parse (a name copied while it changes
 * would lose its NUL) and name one of the two domains.
 */
static void test_domain_moves(struct nlt *q)
{
	char a[ORDLOCK_DOMAIN_NAME_MAX], b[ORDLOCK_DOMAIN_NAME_MAX];
	const char *names[2] = { a, b };
	struct olc_nl_entry *e = NULL;
	unsigned int dumps = 0, bad = 0, seen = 0;
	pthread_t th;
	int n, i;

	snprintf(a, sizeof(a), "m%d", (int)getpid() % 1000);
	snprintf(b, sizeof(b), "%s", olt_domain("longer-domain-name"));
	if (pthread_create(&th, NULL, flip_domains, names))
		bail_out("pthread_create failed");
	do {
		n = nlt_dump(q, ORDLOCK_CMD_GET_OWNERS, NULL, &e);
		dumps++;
		if (n < 0) {
			bad++;
			diag("  dump %u: %s", dumps, strerror(-n));
		}
		for (i = 0; i < n; i++) {
			if (strcmp(e[i].domain, a) && strcmp(e[i].domain, b))
				continue;
			seen++;
		}
		free(e);
		e = NULL;
	} while (pthread_tryjoin_np(th, NULL));
	ok(dumps > 10 && seen > 0, "moves: %u owner dumps during 2 s of domain moves (%u entries of the mover)",
	   dumps, seen);
	is_int((int)bad, 0, "moves: every entry parsed (its domain name kept its NUL)");
}

int main(void)
{
	struct nlt *q;

	watchdog_start(280);
	q = nlt_must_open();
	test_many_keys(q);
	test_many_waiters(q);
	test_domain_moves(q);
	nlt_close(q);
	return tap_done();
}
