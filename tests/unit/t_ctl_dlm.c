// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit tests of the parser of the DLM's debugfs file LS_all
 * (tools/common/dlmdebug.c, linked in by tests/Makefile), with which
 * ordlockctl shows other nodes' locks on a cluster domain's keys:
 * - the resource names of keys (ORDLOCK_DLM_RES_FMT) read back, anything
 *   else refused;
 * - crafted files: another node's holder, waiter and converter on a key
 *   mastered here (NL anchors and this node's own locks left out, queue
 *   positions), a key mastered elsewhere (nothing of the others), one whose
 *   master is being looked up, resources that are not ordlock's ignored
 *   (text and hex names), a lock of no node (-1) not named;
 * - malformed files refused with their line, every prefix of a file parsed
 *   without a crash;
 * - files captured on Debian's 6.1 and 6.12 by the cluster case c_views
 *   (node 1 masters 1:1, node 2 holds it EX, node 3 waits), read as what
 *   they are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/ordlock.h>

#include "dlmdebug.h"
#include "tap.h"

#define V "version rsb 1.1 lvb 1.1 lkb 1.1\n"
/* an rsb line: master node M, the 25-byte name of (R, I) */
#define RSB(m, name) "rsb 00000000a1b2c3d4 " #m " 1 0 0 0 0 25 str " name "\n"
/* an lkb line: node N, status S, granted G, requested Q, lookup L */
#define LKB(n, s, g, q, l) "lkb 1 " #n " 0 0 0 0 0 " #s " " #g " " #q " 0 " #l " 0 0 1 0\n"

static int parse(const char *text, struct olc_dlm_view *v, unsigned int *line,
		 char *msg)
{
	return olc_dlm_parse(text, strlen(text), v, line, msg, 160);
}

static void test_names(void)
{
	char name[64];
	int ret;
	uint32_t r = 0;
	uint64_t id = 0;

	snprintf(name, sizeof(name), ORDLOCK_DLM_RES_FMT, 42u, 1000ULL);
	is_int(strlen(name), ORDLOCK_DLM_RES_LEN, "the format makes %d bytes", ORDLOCK_DLM_RES_LEN);
	ok(!strcmp(name, "0000002a:00000000000003e8"), "(42, 1000) is %s", name);
	ret = olc_dlm_res_name(name, strlen(name), &r, &id);
	ok(!ret && r == 42 && id == 1000, "read back: (%u, %llu)", r, (unsigned long long)id);
	snprintf(name, sizeof(name), ORDLOCK_DLM_RES_FMT, 0xffffffffu, ~0ULL);
	ok(!olc_dlm_res_name(name, strlen(name), &r, &id) && r == 0xffffffffu && id == ~0ULL,
	   "the largest key read back");
	ok(olc_dlm_res_name("0000002A:00000000000003e8", 25, &r, &id),
	   "uppercase refused (ordlock_dlm writes lowercase)");
	ok(olc_dlm_res_name("0000002a-00000000000003e8", 25, &r, &id), "no colon: refused");
	ok(olc_dlm_res_name("0000002a:00000000000003e", 24, &r, &id), "24 bytes: refused");
	ok(olc_dlm_res_name("0000002a:00000000000003e80", 26, &r, &id), "26 bytes: refused");
	ok(olc_dlm_res_name("0000002a:0000000000000 3e", 25, &r, &id), "a space: refused");
	ok(olc_dlm_res_name("gfs2lock:00000000000003e8", 25, &r, &id), "not hex: refused");
	is_int(strcmp(olc_dlm_mode_str(OLC_DLM_EX), "EX") | strcmp(olc_dlm_mode_str(OLC_DLM_PR), "PR") |
	       strcmp(olc_dlm_mode_str(OLC_DLM_NL), "NL") | strcmp(olc_dlm_mode_str(OLC_DLM_IV), "IV") |
	       strcmp(olc_dlm_mode_str(9), "?"), 0, "the DLM's mode names");
}

static void test_crafted(void)
{
	struct olc_dlm_view v;
	unsigned int line;
	char msg[160];
	int ret;

	/* 1:1 mastered here: this node's anchor (node 0) and EX holder, node
	 * 2's EX holder, node 3 converting NL -> EX (waiter), node 4 PR ->
	 * EX (converter), node 5 waiting for PR, node 6's NL anchor */
	ret = parse(V RSB(0, "00000001:0000000000000001")
		    "lvb 7 32 05 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n"
		    LKB(0, 2, 0, -1, 0) LKB(2, 2, 5, -1, 0) LKB(3, 3, 0, 5, 0)
		    LKB(4, 3, 3, 5, 0) LKB(0, 1, -1, 3, 0) LKB(5, 1, -1, 3, 0)
		    LKB(6, 2, 0, -1, 0),
		    &v, &line, msg);
	is_int(ret, 0, "a key mastered here parses (%s)", msg);
	is_int(v.nres, 1, "one key");
	ok(v.nres == 1 && v.res[0].rank == 1 && v.res[0].id == 1 && v.res[0].master == 0 &&
	   v.res[0].local == 2 && v.res[0].remote == 5,
	   "1:1, master here, 2 local locks, 5 of other nodes");
	is_int(v.nlocks, 4, "4 rows: NL anchors and this node's own left out");
	if (v.nlocks == 4) {
		ok(v.locks[0].node == 2 && v.locks[0].role == ORDLOCK_ROLE_HOLDER &&
		   v.locks[0].mode == ORDLOCK_MODE_EXCLUSIVE && v.locks[0].pos == 0 &&
		   v.locks[0].grmode == OLC_DLM_EX, "node 2 holds it EX");
		ok(v.locks[1].node == 3 && v.locks[1].role == ORDLOCK_ROLE_WAITER &&
		   v.locks[1].mode == ORDLOCK_MODE_EXCLUSIVE && v.locks[1].pos == 1,
		   "node 3, converting up from its anchor, waits for EX, first");
		ok(v.locks[2].node == 4 && v.locks[2].role == ORDLOCK_ROLE_CONVERTER &&
		   v.locks[2].mode == ORDLOCK_MODE_EXCLUSIVE && v.locks[2].grmode == OLC_DLM_PR &&
		   v.locks[2].pos == 2, "node 4 holds PR and converts to EX, second");
		ok(v.locks[3].node == 5 && v.locks[3].role == ORDLOCK_ROLE_WAITER &&
		   v.locks[3].mode == ORDLOCK_MODE_SHARED && v.locks[3].pos == 4,
		   "node 5 waits for PR, fourth (this node's waiter is third)");
	}
	olc_dlm_free(&v);

	/* mastered elsewhere (node 2): every lock is this node's */
	ret = parse(V RSB(2, "00000003:0000000000000009") LKB(2, 2, 5, -1, 0) LKB(2, 3, 0, 5, 0)
		    RSB(-1, "00000003:000000000000000a") LKB(-1, 1, -1, 5, 1),
		    &v, &line, msg);
	is_int(ret, 0, "keys mastered elsewhere parse (%s)", msg);
	ok(v.nres == 2 && v.res[0].master == 2 && v.res[0].local == 2 && v.res[0].remote == 0 &&
	   v.res[0].rank == 3 && v.res[0].id == 9,
	   "3:9 mastered by node 2: two locks, both this node's");
	ok(v.nres == 2 && v.res[1].master == -1 && v.res[1].local == 1,
	   "3:10 while its master is looked up: the lock on the lookup list is this node's");
	is_int(v.nlocks, 0, "no other node's lock shown for them");
	olc_dlm_free(&v);

	/* resources that are not ordlock's: ignored with their locks */
	ret = parse(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 7 str gfs2 ab\n" LKB(2, 2, 5, -1, 0)
		    "rsb 00000000a1b2c3d5 0 1 0 0 0 0 3 hex 01 00 ff\n" LKB(2, 2, 5, -1, 0)
		    "rsb 00000000a1b2c3d6 0 1 0 0 0 0 26 str 00000001:0000000000000001x\n"
		    LKB(2, 2, 5, -1, 0) RSB(0, "00000001:0000000000000002") LKB(2, 2, 3, -1, 0),
		    &v, &line, msg);
	is_int(ret, 0, "foreign resources parse (%s)", msg);
	is_int(v.ignored, 3, "3 resources not ordlock's ignored (a text name with a space, hex, 26 bytes)");
	ok(v.nres == 1 && v.nlocks == 1 && v.locks[0].id == 2 &&
	   v.locks[0].mode == ORDLOCK_MODE_SHARED && v.locks[0].node == 2,
	   "only 1:2's lock is shown: node 2 holds it PR (shared)");
	olc_dlm_free(&v);

	/* a key's name in the hex form (not what the DLM prints for it, read anyway) */
	ret = parse(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 25 hex"
		    " 30 30 30 30 30 30 30 31 3a 30 30 30 30 30 30 30 30 30 30 30 30 30 30 30 35\n"
		    LKB(7, 2, 5, -1, 0), &v, &line, msg);
	ok(!ret && v.nres == 1 && v.res[0].id == 5 && v.nlocks == 1 && v.locks[0].node == 7,
	   "a hex name of key 1:5 read as the key (%s)", msg);
	olc_dlm_free(&v);

	/* on the master, a lock with node -1 (recovery): nobody's to name */
	ret = parse(V RSB(0, "00000001:0000000000000006") LKB(-1, 2, 5, -1, 0), &v, &line, msg);
	ok(!ret && v.nres == 1 && v.nlocks == 0, "a lock of node -1 is not shown as a node's");
	olc_dlm_free(&v);

	ret = parse("", &v, &line, msg);
	ok(!ret && !v.nres && !v.nlocks, "an empty file (no resource): nothing, no error");
	olc_dlm_free(&v);
}

static void bad(const char *text, unsigned int want_line, const char *what)
{
	struct olc_dlm_view v;
	unsigned int line = 0;
	char msg[160] = "";
	int ret = parse(text, &v, &line, msg);

	ok(ret == -EPROTO && line == want_line && msg[0] && !v.res && !v.locks,
	   "%s: refused at line %u (%s)", what, line, msg);
}

static void test_malformed(void)
{
	struct olc_dlm_view v;
	size_t i, len;
	char buf[2048];
	const char *full = V RSB(0, "00000001:0000000000000001") LKB(2, 2, 5, -1, 0)
			   LKB(3, 3, 0, 5, 0) RSB(2, "00000001:0000000000000002")
			   LKB(2, 2, 3, -1, 0);
	int ret, crashes = 0;

	bad(RSB(0, "00000001:0000000000000001"), 1, "no first line");
	bad("rsb ptr nodeid first_lkid flags\n", 1, "another first line");
	bad("version 4 rsb 2\n", 1, "the _toss format");
	bad("id nodeid remid pid xid exflags flags sts grmode rqmode time_ms r_nodeid r_len r_name\n",
	    1, "the _locks format");
	bad(V "rsb 00000000a1b2c3d4 x 1 0 0 0 0 25 str 00000001:0000000000000001\n", 2,
	    "a master that is not a number");
	bad(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 99 str 00000001:0000000000000001\n", 2,
	    "a name length above 64");
	bad(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 26 str 00000001:0000000000000001\n", 2,
	    "a name shorter than its length");
	bad(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 3 hex 01 02\n", 2, "a hex name too short");
	bad(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 1 hex 01 02\n", 2, "a hex name too long");
	bad(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 3 bin abc\n", 2, "neither str nor hex");
	bad(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 2 hex -1 02\n", 2, "a hex byte with a sign");
	bad(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 2 hex 0x 02\n", 2, "a hex byte 0x");
	bad(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 2 hex  a  b\n", 2, "hex bytes of one digit");
	bad(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 2 hex 0a0 2\n", 2, "a hex byte of three digits");
	/* cut to 15 characters, "0000000000000002" would read as node 0 (here) */
	bad(V "rsb 00000000a1b2c3d4 0000000000000002 1 0 0 0 0 25 str 00000001:0000000000000001\n",
	    2, "a master node of 16 characters");
	bad(V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 0000000000000000025 str 00000001:0000000000000001\n",
	    2, "a name length of 19 characters");
	bad(V LKB(2, 2, 5, -1, 0), 2, "an lkb line before any rsb line");
	bad(V "rsb 0 1\n", 2, "a short rsb line");
	bad(V RSB(0, "00000001:0000000000000001") "lkb 1 2 0 0 0 0 0 2 5\n", 3, "a short lkb line");
	bad(V RSB(0, "00000001:0000000000000001") "lkb 1 two 0 0 0 0 0 2 5 -1 0 0 0\n", 3,
	    "an lkb node that is not a number");
	bad(V RSB(0, "00000001:0000000000000001") "Conversion Queue\n", 3, "another line");
	{
		static const char nul[] = V "rsb 00000000a1b2c3d4 0 1 0 0 0 0 25 str "
					  "00000001:00000000\0000000001\n";
		unsigned int line = 0;
		char msg[160] = "";

		ret = olc_dlm_parse(nul, sizeof(nul) - 1, &v, &line, msg, sizeof(msg));
		ok(ret == -EPROTO && line == 2 && strstr(msg, "NUL"),
		   "a NUL byte: refused at line %u (%s)", line, msg);
	}
	len = strlen(full);
	for (i = 0; i < len && i < sizeof(buf); i++) {
		memcpy(buf, full, i);
		ret = olc_dlm_parse(buf, i, &v, NULL, NULL, 0);
		if (ret && ret != -EPROTO)
			crashes++;
		olc_dlm_free(&v);
	}
	is_int(crashes, 0, "every one of the %zu prefixes of a file: parsed or refused", len);
}

/*
 * Captured by c_views (node1.held.all, node2.held.all) on Debian's 6.1.0-57
 * and 6.12.117, which start the file differently (t_ctl_dlm_samples.h).
 */
#include "t_ctl_dlm_samples.h"

static void test_samples(void)
{
	const struct olc_dlm_sample *s;
	struct olc_dlm_view v;
	unsigned int line;
	char msg[160];
	size_t i;
	int ret;

	for (s = olc_dlm_samples; s->kernel; s++) {
		ret = parse(s->text, &v, &line, msg);
		is_int(ret, 0, "%s, node %d: parses (%s)", s->kernel, s->node, msg);
		for (i = 0; i < v.nres; i++)
			if (v.res[i].rank == 1 && v.res[i].id == 1)
				break;
		if (!ok(i < v.nres, "%s, node %d: key 1:1 is in it", s->kernel, s->node)) {
			olc_dlm_free(&v);
			continue;
		}
		if (s->node == 1) {
			/* the master: node 2's EX holder, node 3's waiter */
			ok(v.res[i].master == 0, "%s, node 1: masters 1:1", s->kernel);
			is_int(v.nlocks, s->holders + s->waiters, "%s, node 1: %u + %u other nodes' locks",
			       s->kernel, s->holders, s->waiters);
			ok(v.nlocks >= 1 && v.locks[0].node == 2 &&
			   v.locks[0].role == ORDLOCK_ROLE_HOLDER &&
			   v.locks[0].mode == ORDLOCK_MODE_EXCLUSIVE,
			   "%s, node 1: node 2 holds 1:1 exclusive", s->kernel);
			if (s->waiters)
				ok(v.nlocks == 2 && v.locks[1].node == 3 &&
				   v.locks[1].role == ORDLOCK_ROLE_WAITER &&
				   v.locks[1].mode == ORDLOCK_MODE_EXCLUSIVE && v.locks[1].pos == 1,
				   "%s, node 1: node 3 waits for it exclusive, first", s->kernel);
		} else {
			/* node 2: its own lock; the master is node 1 */
			ok(v.res[i].master == 1 && v.res[i].remote == 0 && v.res[i].local >= 1,
			   "%s, node 2: 1:1 mastered by node 1, only its own lock", s->kernel);
			is_int(v.nlocks, 0, "%s, node 2: no other node's lock", s->kernel);
		}
		olc_dlm_free(&v);
	}
}

/* olc_dlm_queue(): the queued requests of one key mastered here */
static void test_queue(void)
{
	/* master here; grant: node 2 PR; convert: node 3 PR->EX (remid
	 * 7); wait: node 0 (this one, lkid 9) EX, node 2 PR (remid 4) */
	static const char crafted[] =
		"version rsb 1.1 lvb 1.1 lkb 1.1\n"
		"rsb (____ptrval____) 0 0 0 0 0 0 25 str 00000002:0000000000000005\n"
		"lkb 1 0 0 9 0 0 0 2 0 -1 0 0 0 0 100 0\n"
		"rsb (____ptrval____) 0 0 0 0 0 0 25 str 00000001:0000000000000001\n"
		"lkb 3 2 1 24 0 8 10000 2 3 -1 0 0 0 1 200 0\n"
		"lkb 5 3 7 24 0 8 10000 3 3 5 0 0 0 1 300 0\n"
		"lkb 9 0 0 31 0 8 0 1 -1 5 0 0 0 0 400 0\n"
		"lkb 6 2 4 24 0 8 10000 1 -1 3 0 0 0 0 500 0\n"
		"rsb (____ptrval____) 2 0 0 0 0 0 25 str 00000001:0000000000000002\n"
		"lkb a 2 0 9 0 8 0 1 -1 5 0 0 0 0 600 0\n";
	const struct olc_dlm_sample *s = &olc_dlm_samples[0];
	struct olc_dlm_qent q[4];
	int n;

	n = olc_dlm_queue(crafted, sizeof(crafted) - 1, 1, 1, q, 4);
	is_int(n, 3, "queue: the convert and the wait queue's requests, not the grants");
	ok(n == 3 && q[0].node == 3 && q[0].lkid == 7 && q[0].sts == OLC_DLM_CONVERT &&
	   q[0].grmode == OLC_DLM_PR && q[0].rqmode == OLC_DLM_EX && q[0].ts_ns == 300,
	   "queue: first the conversion, another node's named by its own id (remid)");
	ok(n == 3 && q[1].node == 0 && q[1].lkid == 9 && q[1].sts == OLC_DLM_WAITING &&
	   q[1].ts_ns == 400 && q[2].node == 2 && q[2].lkid == 4 && q[2].rqmode == OLC_DLM_PR,
	   "queue: then the waits in order, this node's by its id");
	is_int(olc_dlm_queue(crafted, sizeof(crafted) - 1, 1, 1, q, 1), 1,
	       "queue: at most max entries");
	is_int(olc_dlm_queue(crafted, sizeof(crafted) - 1, 1, 2, q, 4), -ENOENT,
	       "queue: a key mastered by another node: ENOENT");
	is_int(olc_dlm_queue(crafted, sizeof(crafted) - 1, 1, 3, q, 4), -ENOENT,
	       "queue: a key not in the file: ENOENT");
	n = olc_dlm_queue(s->text, strlen(s->text), 1, 1, q, 4);
	ok(n == 1 && q[0].node == 3 && q[0].lkid == 2 && q[0].rqmode == OLC_DLM_EX &&
	   q[0].ts_ns == 19469662420ULL,
	   "queue: 6.1's capture on the master: node 3's EX request waits");
	s = &olc_dlm_samples[2];
	n = olc_dlm_queue(s->text, strlen(s->text), 1, 1, q, 4);
	ok(n == 1 && q[0].node == 3 && q[0].lkid == 2 && q[0].ts_ns == 28398588268ULL,
	   "queue: 6.12's capture on the master: the same");
	s = &olc_dlm_samples[1];
	is_int(olc_dlm_queue(s->text, strlen(s->text), 1, 1, q, 4), -ENOENT,
	       "queue: the capture of a node that does not master it: ENOENT");
}

int main(void)
{
	test_names();
	test_crafted();
	test_malformed();
	test_samples();
	test_queue();
	return tap_done();
}
