// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit tests of ordlockctl's reader of ordlock-xdetectd's
 * answers (tools/ordlockctl/xdparse.c, linked in by tests/Makefile), with
 * which "locks", "blockers" and "cycles --history" show every node's
 * owners:
 * - a "locks" answer as the daemon writes it (xdetectd.c, view_finish()
 *   and view_part()): every field read, ids up to 2^64 - 1 exact, escapes
 *   in a comm; a daemon's answer without "position" and "waited_us" (older)
 *   still read; {"error": ...} told apart; every proper prefix refused
 *   without a crash; a member missing or of the wrong type refused, named;
 * - a "state" answer: the rounds, their cycles and victims (an index out
 *   of the cycle: none);
 * - blockers' argument: PID or NODE:PID, and what is not;
 * - who blocks whom in a view: a holder and the waiters queued ahead on
 *   the waiter's node (conflicting modes only), and for a wait in the DLM
 *   the holders granted on other nodes and the waits in the DLM since
 *   before.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ordlock.h>

#include "xdparse.h"
#include "tap.h"

/* an owner as the daemon's json_vertex() writes it */
#define VTX(node, owner, pid, comm, key, mode, start, dlm)				\
	"{\"node\": " #node ", \"owner_id\": " #owner ", \"pid\": " #pid ", \"comm\": \"" comm \
	"\", \"key\": \"" key "\", \"mode\": " #mode ", \"gen\": 0, \"start_ns\": " #start \
	", \"in_dlm\": " #dlm "}"
#define LOCK(dom, role, pos, waited, owner)						\
	"{\"domain\": \"" dom "\", \"role\": \"" role "\", \"position\": " #pos		\
	", \"waited_us\": " #waited ", \"owner\": " owner "}"

static const char view_text[] =
	"{\"node\": 1, \"nodes\": [1, 2, 3], \"missing\": [], \"complete\": true, \"locks\": [\n  "
	LOCK("c_xv", "holder", 0, null, VTX(2, 18446744073709551615, 201, "hold\\\"er", "1:61", 2, 0, false)) ",\n  "
	LOCK("c_xv", "waiter", 1, 1500, VTX(2, 7, 202, "w2", "1:61", 2, 1000, false)) ",\n  "
	LOCK("c_xv", "waiter", 2, 900, VTX(2, 8, 203, "w3\\u0001", "1:61", 1, 1100, false)) ",\n  "
	LOCK("c_xv", "holder", 0, 800, VTX(1, 5, 101, "w1", "1:61", 2, 100, true)) ",\n  "
	LOCK("c_xv", "holder", 0, 2500, VTX(3, 9, 301, "w4", "1:61", 2, 50, true)) ",\n  "
	LOCK("c_xv", "holder", 0, null, VTX(3, 10, 302, "sh", "4294967295:62", 1, 0, false)) ",\n  "
	LOCK("c_xv", "waiter", 1, 10, VTX(3, 11, 303, "sh2", "4294967295:62", 1, 5, false))
	"]}";

static int same(uint32_t want, uint32_t pid)
{
	return want == pid;
}

static void test_view(void)
{
	struct olc_xd_view v;
	char err[160] = "";
	int ret;

	ret = olc_xd_parse_view(view_text, &v, err, sizeof(err));
	is_int(ret, 0, "a \"locks\" answer reads (%s)", err);
	if (ret)
		return;
	ok(v.node == 1 && v.nnodes == 3 && v.nodes[2] == 3 && !v.nmissing && v.complete,
	   "node 1 asked; nodes 1, 2, 3 answered; complete");
	is_int(v.n, 7, "seven locks");
	ok(v.v[0].o.owner_id == 18446744073709551615ULL, "an owner id of 2^64 - 1, exact");
	ok(!strcmp(v.v[0].o.comm, "hold\"er") && !strcmp(v.v[2].o.comm, "w3\001"),
	   "escapes in a comm read back");
	ok(v.v[0].role == ORDLOCK_ROLE_HOLDER && !v.v[0].has_waited && v.v[0].o.node == 2 &&
	   v.v[0].o.pid == 201 && v.v[0].o.rank == 1 && v.v[0].o.id == 61 &&
	   v.v[0].o.mode == ORDLOCK_MODE_EXCLUSIVE && !v.v[0].o.in_dlm && !strcmp(v.v[0].domain, "c_xv"),
	   "node 2's holder: pid 201, 1:61 exclusive, no wait");
	ok(v.v[1].role == ORDLOCK_ROLE_WAITER && v.v[1].pos == 1 && v.v[1].has_waited &&
	   v.v[1].waited_us == 1500 && v.v[1].start_ns == 1000,
	   "node 2's waiter: position 1, waited 1500 us, since 1000 ns");
	ok(v.v[3].o.in_dlm && v.v[3].has_waited, "node 1's holder waits in the DLM");
	ok(v.v[5].o.rank == 4294967295u && v.v[5].o.id == 62, "a key of rank 2^32 - 1");
	olc_xd_view_free(&v);

	/* a daemon before "position" and "waited_us" */
	ret = olc_xd_parse_view("{\"node\": 2, \"nodes\": [2], \"missing\": [3], \"complete\": false, \"locks\": ["
				"{\"domain\": \"d\", \"role\": \"converter\", \"owner\": "
				VTX(2, 1, 2, "c", "1:1", 2, 0, false) "}]}", &v, err, sizeof(err));
	ok(!ret && v.n == 1 && v.v[0].role == ORDLOCK_ROLE_CONVERTER && !v.v[0].pos &&
	   !v.v[0].has_waited && !v.complete && v.nmissing == 1 && v.missing[0] == 3,
	   "an older daemon's answer: no position, no wait; node 3 missing (%s)", err);
	olc_xd_view_free(&v);

	ret = olc_xd_parse_view("{\"error\": \"not in the CPG group\"}\n", &v, err, sizeof(err));
	ok(ret == -EAGAIN && !strcmp(err, "not in the CPG group"),
	   "the daemon's error: -EAGAIN and its text (%s)", err);
}

static void test_malformed(void)
{
	size_t len = strlen(view_text), i, refused = 0;
	struct olc_xd_view v;
	char err[160], *buf = malloc(len + 1);

	for (i = 0; buf && i < len; i++) {
		memcpy(buf, view_text, i);
		buf[i] = '\0';
		if (olc_xd_parse_view(buf, &v, err, sizeof(err)) == -EPROTO)
			refused++;
		else
			olc_xd_view_free(&v);
	}
	free(buf);
	is_int(refused, len, "every proper prefix of the answer refused (%zu)", len);
	is_int(olc_xd_parse_view("{\"node\": 1, \"nodes\": [1], \"missing\": [], \"complete\": true}",
				 &v, err, sizeof(err)), -EPROTO, "no \"locks\": refused");
	ok(strstr(err, "\"locks\"") != NULL, "... named (%s)", err);
	is_int(olc_xd_parse_view("{\"node\": -1, \"nodes\": [], \"missing\": [], \"complete\": true, \"locks\": []}",
				 &v, err, sizeof(err)), -EPROTO, "a negative node: refused");
	is_int(olc_xd_parse_view("{\"node\": 1, \"nodes\": [], \"missing\": [], \"complete\": true, \"locks\": ["
				 LOCK("d", "holder", 0, null, VTX(2, 1, 2, "c", "1-1", 2, 0, false)) "]}",
				 &v, err, sizeof(err)), -EPROTO, "a key that is not RANK:ID: refused");
	is_int(olc_xd_parse_view("{\"node\": 1, \"nodes\": [], \"missing\": [], \"complete\": true, \"locks\": []} x",
				 &v, err, sizeof(err)), -EPROTO, "text after the object: refused");
	is_int(olc_xd_parse_view("[1]", &v, err, sizeof(err)), -EPROTO, "not an object: refused");
	is_int(olc_xd_parse_view("{\"a\": \"\\x\"}", &v, err, sizeof(err)), -EPROTO,
	       "a bad escape: refused");
	is_int(olc_xd_parse_view("{\"node\": 1, \"nodes\": [], \"missing\": [], \"complete\": true, \"locks\": [], \"more\": {\"x\": [1.5e3, -2, true, null]}}",
				 &v, err, sizeof(err)), 0, "members not read are skipped (%s)", err);
	olc_xd_view_free(&v);
}

static void test_state(void)
{
	static const char text[] =
		"{\"node\": 3, \"boot\": \"00000000000000ab\", \"pid\": 99, \"state\": \"on\", \"members\": [1, 2, 3],\n"
		" \"stats\": {\"probes_started\": 2, \"events_lost\": 0},\n \"waits\": [],\n \"rounds\": [\n"
		"  {\"round\": \"1:4\", \"domain\": \"c_xv\", \"state\": \"decided\", \"opened_ns\": 10, \"closed_ns\": 20, \"victim\": 1, \"failed_here\": false, \"cycle\": ["
		VTX(1, 5, 101, "a", "1:72", 2, 7, false) ", " VTX(2, 6, 201, "b", "1:71", 2, 9, true) "]},\n"
		"  {\"round\": \"2:1\", \"domain\": \"c_xv\", \"state\": \"aborted\", \"opened_ns\": 30, \"closed_ns\": 40, \"victim\": 5, \"failed_here\": false, \"cycle\": []}]}\n";
	struct olc_xd_state s;
	char err[160] = "";
	int ret;

	ret = olc_xd_parse_state(text, &s, err, sizeof(err));
	is_int(ret, 0, "a \"state\" answer reads (%s)", err);
	if (ret)
		return;
	ok(s.node == 3 && !strcmp(s.state, "on") && s.nmembers == 3, "node 3, on, 3 members");
	is_int(s.n, 2, "two rounds");
	ok(!strcmp(s.r[0].round, "1:4") && !strcmp(s.r[0].state, "decided") && s.r[0].victim == 1 &&
	   s.r[0].closed_ns == 20 && s.r[0].n == 2 && s.r[0].cycle[1].node == 2 &&
	   s.r[0].cycle[1].pid == 201 && s.r[0].cycle[1].in_dlm && s.r[0].cycle[0].id == 72,
	   "round 1:4 decided at 20, victim node 2's pid 201 (in the DLM), node 1's waits for 1:72");
	ok(!strcmp(s.r[1].state, "aborted") && s.r[1].victim == -1 && s.r[1].n == 0,
	   "round 2:1 aborted: a victim index out of its cycle is none");
	olc_xd_state_free(&s);
}

static void test_who(void)
{
	uint32_t node = 9, pid = 0;

	ok(!olc_xd_parse_who("123", &node, &pid) && node == 0 && pid == 123, "123: pid 123, no node");
	ok(!olc_xd_parse_who("2:123", &node, &pid) && node == 2 && pid == 123, "2:123: node 2, pid 123");
	ok(olc_xd_parse_who("0:1", &node, &pid) && olc_xd_parse_who("2:", &node, &pid) &&
	   olc_xd_parse_who(":5", &node, &pid) && olc_xd_parse_who("2:0", &node, &pid) &&
	   olc_xd_parse_who("a:1", &node, &pid) && olc_xd_parse_who("1:2:3", &node, &pid) &&
	   olc_xd_parse_who("0", &node, &pid) && olc_xd_parse_who("1:4294967296", &node, &pid) &&
	   olc_xd_parse_who("-1", &node, &pid),
	   "0:1, 2:, :5, 2:0, a:1, 1:2:3, 0, 1:2^32, -1 refused");
}

/* the blockers of @pid on @node: their pids and edges, "pid/edge ..." */
static void blocked(const struct olc_xd_view *v, uint32_t node, uint32_t pid, char *out, size_t len)
{
	struct olc_xd_block b[16];
	size_t i, n = olc_xd_blockers(v, node, pid, same, b, 16), off = 0;

	out[0] = '\0';
	for (i = 0; i < n && i < 16; i++)
		off += (size_t)snprintf(out + off, len - off, "%s%u/%d", i ? " " : "",
					v->v[b[i].blocker].o.pid, (int)b[i].edge);
}

static void test_blockers(void)
{
	struct olc_xd_view v;
	char err[160], got[256];

	if (olc_xd_parse_view(view_text, &v, err, sizeof(err))) {
		ok(0, "the view reads (%s)", err);
		return;
	}
	blocked(&v, 2, 202, got, sizeof(got));
	ok(!strcmp(got, "201/1"), "node 2's waiter: node 2's holder holds 1:61 (%s)", got);
	blocked(&v, 2, 203, got, sizeof(got));
	ok(!strcmp(got, "201/1 202/2"),
	   "its shared waiter: the holder, and the exclusive waiter ahead (%s)", got);
	blocked(&v, 1, 101, got, sizeof(got));
	ok(!strcmp(got, "201/3 301/4"),
	   "node 1's wait in the DLM: node 2's holder, node 3's wait in the DLM since before (%s)", got);
	blocked(&v, 3, 301, got, sizeof(got));
	ok(!strcmp(got, "201/3"), "node 3's earlier wait in the DLM: node 2's holder only (%s)", got);
	blocked(&v, 3, 303, got, sizeof(got));
	ok(!strcmp(got, ""), "a shared waiter behind a shared holder: nobody (%s)", got);
	blocked(&v, 2, 201, got, sizeof(got));
	ok(!strcmp(got, ""), "a holder granted: nobody (%s)", got);
	blocked(&v, 1, 202, got, sizeof(got));
	ok(!strcmp(got, ""), "pid 202 of node 1: none (the pid is node 2's) (%s)", got);
	is_int(olc_xd_blockers(&v, 2, 203, same, NULL, 0), 2, "counted without room");
	olc_xd_view_free(&v);
}

int main(void)
{
	test_view();
	test_malformed();
	test_state();
	test_who();
	test_blockers();
	return tap_done();
}
