// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side tests of the ordlockctl command on saved debugfs files
 * ($ORDLOCK_DEBUGFS points it at a directory of crafted files, so no module
 * is needed): the text and JSON of cycles, cycles --history, graph (and
 * --dot), locks, owners and stats; exit statuses; malformed files refused
 * with their line; usage errors; every node's owners from a stand-in for
 * ordlock-xdetectd's socket (test_xdview). The in-VM test t_ordlockctl
 * covers the live kernel, the cluster case c_xdview the real daemons.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "tap.h"

static char ctl[PATH_MAX];
static char dir[PATH_MAX];
static char sys_dir[PATH_MAX + 8], dlm_dir[PATH_MAX + 8], cfg_dir[PATH_MAX + 8];
/* ordlock-xdetectd's socket: none until test_xdview starts its stand-in */
static char xd_sock[PATH_MAX + 8];
static int have_jq;

static struct {
	int status;
	char out[65536];
	char err[8192];
} R;

/* sh -c CMD with $C the CLI and $DBG the files; returns the exit status */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run(const char *fmt, ...)
{
	const char *env[] = {
		"C", ctl, "ORDLOCK_DEBUGFS", dir,
		/* the DLM's directories of a cluster host (test_cluster) */
		"DLMSYS", sys_dir, "ORDLOCK_DLM_SYSFS", sys_dir, "ORDLOCK_DLM_DEBUGFS", dlm_dir,
		"ORDLOCK_DLM_CONFIGFS", cfg_dir, "NO_COLOR", "1",
		"ORDLOCK_XDETECTD_SOCKET", xd_sock, NULL,
	};
	char cmd[4096], out[PATH_MAX + 8], err[PATH_MAX + 8];
	va_list ap;
	pid_t pid;
	int status;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	pid = sh_start(cmd, out, err, 0, env);
	if (waitpid(pid, &status, 0) != pid)
		bail_out("waitpid: %s", strerror(errno));
	R.status = sh_status(status);
	read_small_file(out, R.out, sizeof(R.out));
	read_small_file(err, R.err, sizeof(R.err));
	return R.status;
}

static int check(int cond, const char *name)
{
	ok(cond, "%s", name);
	if (!cond) {
		diag("  exit %d", R.status);
		diag("  stdout: %.600s", R.out);
		diag("  stderr: %.600s", R.err);
	}
	return cond;
}

static void put(const char *name, const char *text)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		bail_out("writing %s: %s", path, strerror(errno));
}

static void jq(const char *name, const char *cmd, const char *filter)
{
	if (!have_jq) {
		ok(1, "%s # SKIP no jq", name);
		return;
	}
	run("%s > \"$ORDLOCK_DEBUGFS/j\"; jq -e '%s' < \"$ORDLOCK_DEBUGFS/j\" > /dev/null || { cat \"$ORDLOCK_DEBUGFS/j\"; exit 1; }",
	    cmd, filter);
	check(R.status == 0, name);
}

static const char graph[] =
	"# ordlock graph v1\n"
	"# waiter_id waiter_pid waiter_comm domain rank:id mode blocker_id blocker_pid blocker_comm blocker_mode edge waited_us\n"
	"5 101 transfer wh 1:2 exclusive 6 102 transfer exclusive hard 1500000\n"
	"6 102 transfer wh 1:1 exclusive 5 101 transfer exclusive hard 1400000\n"
	"7 103 report wh 1:1 shared 5 101 transfer exclusive hard 300\n"
	"7 103 report wh 1:1 shared 6 102 transfer exclusive soft 300\n"
	"9 201 a shop 2:1 exclusive 10 202 b shared hard 5\n"
	"10 202 b shop 2:2 exclusive 11 203 c exclusive hard 5\n";

static void test_cycles(void)
{
	put("graph", graph);
	check(run("$C cycles") == 1 &&
	      strstr(R.out, "pid 101 (transfer) waits for exclusive 1:2; blocked by pid 102 (transfer), which holds it exclusive\n") &&
	      strstr(R.out, "pid 102 (transfer) waits for exclusive 1:1; blocked by pid 101 (transfer), which holds it exclusive\n") &&
	      strstr(R.out, "  1:1 => 1:2 => 1:1\n") && strstr(R.out, "cycle 1 of 1 in domain \"wh\""),
	      "cycles: the PostgreSQL-style steps and the chain; exit 1");
	check(run("$C cycles -d shop") == 0 && strstr(R.out, "no cycles"),
	      "cycles -d of a domain without a cycle: exit 0");
	check(run("$C cycles -q") == 1 && !R.out[0], "cycles -q: silent");
	jq("cycles -j: the fields of the cycle", "$C cycles -j",
	   ".source == \"debugfs\" and .count == 1 and .complete and .edges == 6 and"
	   " .owners == 6 and .cycles[0].length == 2 and .cycles[0].domain == \"wh\" and"
	   " .cycles[0].steps[0].owner_id == 5 and .cycles[0].steps[0].waited_us == 1500000 and"
	   " .cycles[0].steps[0].blocker == {\"owner_id\": 6, \"pid\": 102, \"comm\": \"transfer\","
	   " \"mode\": \"exclusive\"} and .cycles[0].chain == [\"1:1\", \"1:2\", \"1:1\"]");
	jq("cycles -j --pretty: the same document, indented", "$C cycles -j --pretty", ".count == 1");
	check(run("$C cycles -f \"$ORDLOCK_DEBUGFS/graph\" -S netlink") == 1,
	      "cycles -f FILE reads the file, whatever the source");
	check(run("$C cycles -f - < \"$ORDLOCK_DEBUGFS/graph\"") == 1, "cycles -f - reads stdin");
	put("bad", "# ordlock graph v1\n5 101 transfer wh 1:2 exclusive 6 102 transfer exclusive hard 1\n"
	    "6 102 transfer wh 1:1 exclusive 5 101\n");
	check(run("$C cycles -f \"$ORDLOCK_DEBUGFS/bad\"") == 65 && strstr(R.err, "line 3:"),
	      "a malformed graph file: exit 65 (EX_DATAERR), naming line 3");
	check(run("$C cycles -f \"$ORDLOCK_DEBUGFS/none\"") == 66 && strstr(R.err, "none"),
	      "a graph file that is not there: exit 66 (EX_NOINPUT)");
	put("graph", "# ordlock graph v9\n");
	check(run("$C cycles") == 70 && strstr(R.err, "line 1:") && strstr(R.err, "v9"),
	      "an unknown format version in debugfs: exit 70 (EX_SOFTWARE)");
	put("graph", graph);
}

static void test_graph(void)
{
	check(run("$C graph") == 0 && strstr(R.out, "DOMAIN") && strstr(R.out, "queued exclusive") &&
	      strstr(R.out, "1.50 s"), "graph: a table with waits and reasons");
	run("$C graph --dot");
	check(R.status == 0 && strstr(R.out, "digraph ordlock {") &&
	      strstr(R.out, "subgraph \"cluster_wh\"") && strstr(R.out, "subgraph \"cluster_shop\"") &&
	      strstr(R.out, "o5 -> o6") && strstr(R.out, "style=dashed") &&
	      strstr(R.out, "o9 -> o10 [label=\"exclusive 2:1\\nheld shared\", style=solid];"),
	      "graph --dot: clusters per domain, dashed soft edges, plain acyclic edges");
	check(strstr(R.out, "o5 -> o6 [label=\"exclusive 1:2\\nheld exclusive\", style=solid, color=red") &&
	      strstr(R.out, "o7 -> o5 [label=\"shared 1:1\\nheld exclusive\", style=solid];"),
	      "graph --dot: the cycle's edges red, the others not");
	/* issue 30: the legend says which way an arrow points; a 2-cycle's labels */
	check(strstr(R.out, "an arrow from A to B means A waits for B") &&
	      strstr(R.out, "Solid: B holds the key; dashed: B is queued ahead of A for it"),
	      "graph --dot: the legend says which way an arrow points and what its label is");
	if (!system("command -v dot >/dev/null 2>&1")) {
		check(run("$C graph --dot | dot -Tsvg | grep -q '<svg'") == 0,
		      "graph --dot: dot accepts it");
		/*
		 * where dot puts the labels of a 2-cycle's arcs alone in a
		 * domain (inches): apart by more than one label (two lines of
		 * 10 pt, 0.3 in; they were 0.31 apart, touching)
		 */
		put("graph", "# ordlock graph v1\n# c\n"
		    "5 101 transfer two 1:2 exclusive 6 102 transfer exclusive hard 1500000\n"
		    "6 102 transfer two 1:1 exclusive 5 101 transfer exclusive hard 1400000\n");
		check(run("$C graph --dot | dot -Tplain | python3 -c '"
			  "import shlex, sys\n"
			  "at = {}\n"
			  "for line in sys.stdin:\n"
			  "    t = shlex.split(line)\n"
			  "    if t and t[0] == \"edge\":\n"
			  "        r = t[4 + 2 * int(t[3]):]\n"
			  "        at[t[1], t[2]] = (float(r[1]), float(r[2]))\n"
			  "a, b = at[\"o5\", \"o6\"], at[\"o6\", \"o5\"]\n"
			  "print(a, b)\n"
			  "sys.exit(0 if abs(a[1] - b[1]) > 0.4 or abs(a[0] - b[0]) > 1.5 else 1)'") == 0,
		      "graph --dot | dot: the labels of a 2-cycle's arcs do not overlap");
		put("graph", graph);
	} else {
		ok(1, "graph --dot: dot accepts it # SKIP graphviz is not installed");
		ok(1, "graph --dot: a 2-cycle's labels # SKIP graphviz is not installed");
	}
	jq("graph -j: every edge", "$C graph -j -d wh",
	   ".edges | length == 4 and .[3].edge == \"soft\" and .[3].waiter.comm == \"report\"");
}

static void test_other(void)
{
	put("locks", "# ordlock locks v1\n# c\n"
	    "wh 1:2 waiter 0 6 102 transfer shared 1234\n"
	    "wh 1:2 holder 0 5 101 transfer exclusive 17\n"
	    "aa 3:1 holder 0 9 7 x shared 4\n");
	check(run("$C locks") == 0 && strstr(R.out, "TOKEN") && strstr(R.out, "1.23 ms") == NULL &&
	      strstr(R.out, "holder"), "locks: a table");
	check(run("$C locks -r -o +node") == 0 &&
	      strstr(R.out, "DOMAIN KEY ROLE POS OWNER PID COMM MODE TOKEN WAITED LEASE NODE\n") &&
	      strstr(R.out, "aa 3:1 holder 0 9 7 x shared 4 - - local\n"),
	      "locks -o +NODE: the default columns, then NODE (lslocks' -o +LIST)");
	check(run("$C locks -o +") == 64 && run("$C locks -o +KEY,,ROLE") == 64,
	      "locks -o + and -o +KEY,,ROLE: exit 64");
	jq("locks -j: sorted by domain, key, holders first", "$C locks -j",
	   "[.locks[] | [.domain, .role]] == [[\"aa\", \"holder\"], [\"wh\", \"holder\"], [\"wh\", \"waiter\"]]"
	   " and .locks[1].token == 17 and .locks[2].waited_us == 1234");
	put("owners", "# ordlock owners v1\n# c\n"
	    "6 102 transfer wh netlink 0 exclusive 1:2 99\n"
	    "5 101 transfer wh device 2 - - 0\n");
	jq("owners -j: sorted by id, waiting or null", "$C owners -j",
	   ".owners[0].owner_id == 5 and .owners[0].waiting == null and"
	   " .owners[1].waiting == {\"mode\": \"exclusive\", \"key\": \"1:2\", \"rank\": 1, \"id\": 2,"
	   " \"waited_us\": 99} and .owners[1].kind == \"netlink\"");
	put("stats", "# ordlock stats v1\nglobal owners 3 resources 2\n"
	    "domain wh policy timeout detect_delay_ms 0 owners 2 peak_owners 3 resources 1"
	    " peak_resources 1 waiters 1 peak_waiters 1 acquires 10 contended 1 timeouts 0"
	    " try_failures 0 order_violations 2 deadlocks 1 upgrade_deadlocks 0 conversions 0"
	    " signals 0 limits 0 releases 9\n"
	    "wait_us wh lt_1 0 lt_2 5 lt_4 0 more 1\n");
	check(run("$C stats") == 0 && strstr(R.out, "3 owners, 2 resources") &&
	      strstr(R.out, "timeout"), "stats: a row per domain");
	check(run("$C stats -d wh") == 0 && strstr(R.out, "order_violations") &&
	      strstr(R.out, "< 2 us"), "stats -d: every counter and the histogram");
	check(run("$C stats -d nope") == 69, "stats -d of an unknown domain: exit 69 (EX_UNAVAILABLE)");
	jq("stats -j: global, counters and histogram", "$C stats -j",
	   ".global == {\"owners\": 3, \"resources\": 2} and .domains[0].counters.acquires == 10 and"
	   " .domains[0].wait_us.lt_2 == 5 and .domains[0].wait_us.more == 1");
	put("deadlocks", "# ordlock deadlocks v1\n"
	    "deadlock 3 1700000000000000000 wh 2\n"
	    "step 3 0 5 101 a exclusive 1:2 hard exclusive\n"
	    "step 3 1 6 102 b exclusive 1:1 soft shared\n");
	check(run("$C cycles --history") == 1 && strstr(R.out, "victim pid 101 (a)") &&
	      strstr(R.out, "which is queued ahead of it for shared") &&
	      strstr(R.out, "1:1 => 1:2 => 1:1"), "cycles --history: the victim, the steps, the chain");
	jq("cycles --history -j", "$C cycles --history -j",
	   ".deadlocks[0].seq == 3 and .deadlocks[0].complete and .deadlocks[0].steps[1].edge == \"soft\"");
	/* --since and --after: the records carry seq and the wall-clock time */
	check(run("$C cycles --history --since 10m") == 0 && strstr(R.out, "no deadlocks"),
	      "cycles --history --since 10m: a deadlock of 2023 is not recent: exit 0");
	check(run("$C cycles --history --since 1d -q") == 0 && !R.out[0],
	      "cycles --history --since 1d -q: silent, exit 0");
	check(run("$C cycles --history --since @1699999999") == 1 && strstr(R.out, "deadlock 3"),
	      "--since @EPOCH just before it: exit 1, shown");
	check(run("$C cycles --history --since @1700000001") == 0,
	      "--since @EPOCH just after it: exit 0");
	check(run("TZ=UTC $C cycles --history --since 2023-11-14T22:13") == 1 &&
	      run("TZ=UTC $C cycles --history --since '2023-11-14 22:14:00'") == 0,
	      "--since a local date and time (22:13:20 UTC): before it 1, after it 0");
	check(run("$C cycles --history --after 2") == 1 && run("$C cycles --history --after 3") == 0,
	      "--after SEQ: only the deadlocks numbered above SEQ");
	jq("--history --since -j: only those shown", "$C cycles --history -j --since @1800000000",
	   ".deadlocks == []");
	check(run("$C cycles --history --since soon") == 64 && strstr(R.err, "--since"),
	      "--since soon: exit 64");
	check(run("$C cycles --since 10m") == 64 && strstr(R.err, "--history"),
	      "--since without --history: exit 64");
	put("deadlocks", "# ordlock deadlocks v1\n");
	check(run("$C cycles --history") == 0 && strstr(R.out, "no deadlocks"),
	      "cycles --history with none: exit 0");
}

/* 64-bit ids and tokens: numbers while a double holds them, else strings */
static void test_json64(void)
{
	put("graph", "# ordlock graph v1\n# c\n"
	    "18446744073709551615 101 a wh 4294967295:18446744073709551615 exclusive"
	    " 9007199254740991 102 b exclusive hard 1\n"
	    "9007199254740991 102 b wh 1:9007199254740992 exclusive"
	    " 18446744073709551615 101 a exclusive hard 1\n");
	jq("ids of 2^64-1 are exact strings in the JSON, 2^53-1 an exact number",
	   "$C cycles -j",
	   ".cycles[0].steps | map(select(.pid == 101))[0] |"
	   " .id == \"18446744073709551615\" and .owner_id == \"18446744073709551615\" and"
	   " .rank == 4294967295 and .key == \"4294967295:18446744073709551615\" and"
	   " .blocker.owner_id == 9007199254740991");
	jq("2^53 is a string too; tostring gives the exact digits of both kinds",
	   "$C graph -j",
	   "[.edges[] | .id | tostring] | sort == [\"18446744073709551615\", \"9007199254740992\"]");
	if (!system("command -v node >/dev/null 2>&1")) {
		run("$C cycles -j | node -e 'let s=\"\";process.stdin.on(\"data\",d=>s+=d).on(\"end\",()=>{"
		    "const j=JSON.parse(s);const ids=j.cycles[0].steps.map(x=>String(x.id)).sort();"
		    "process.exit(ids.join()===\"18446744073709551615,9007199254740992\"?0:1)})'");
		check(R.status == 0, "and JavaScript's JSON.parse reads the same digits");
	} else {
		ok(1, "JavaScript # SKIP no node");
	}
	put("locks", "# ordlock locks v1\n# c\n"
	    "wh 1:18446744073709551615 holder 0 5 101 a exclusive 18446744073709551615\n");
	jq("locks -j: a token of 2^64-1 survives jq", "$C locks -j",
	   ".locks[0].token == \"18446744073709551615\" and .locks[0].id == \"18446744073709551615\"");
	put("graph", graph);
}

/* lslocks' conventions: -o, -n, -r, -p PID; blockers PID (pg_blocking_pids) */
static void test_lslocks(void)
{
	put("locks", "# ordlock locks v1\n# c\n"
	    "wh 1:2 waiter 0 6 102 transfer shared 1234\n"
	    "wh 1:2 holder 0 5 101 transfer exclusive 17\n"
	    "aa 3:1 holder 0 9 7 x shared 4\n");
	check(run("$C locks -o pid,comm,key -n") == 0 &&
	      !strcmp(R.out, "  7  x         3:1\n101  transfer  1:2\n102  transfer  1:2\n"),
	      "locks -o PID,COMM,KEY -n: those columns in that order, no header");
	check(run("$C locks -r -p 101") == 0 &&
	      !strcmp(R.out, "DOMAIN KEY ROLE POS OWNER PID COMM MODE TOKEN WAITED LEASE\n"
		      "wh 1:2 holder 0 5 101 transfer exclusive 17 - -\n"),
	      "locks -r -p 101: raw, only pid 101's rows");
	check(run("$C locks -p 4242") == 0 && strstr(R.out, "no locks"),
	      "locks -p of a pid without locks: says so");
	jq("locks -j -p 102: the filter holds in the JSON", "$C locks -j -p 102",
	   ".locks | length == 1 and .[0].pid == 102");
	check(run("$C locks -o PID,nope") == 64 && strstr(R.err, "nope"),
	      "locks -o with an unknown column: exit 64, naming it");
	check(run("$C owners -o owner,waits_for -n -p 102") == 0 &&
	      strstr(R.out, "exclusive 1:2") && !strstr(R.out, "OWNER"),
	      "owners -o OWNER,WAITS_FOR -n -p 102");
	check(run("$C help --columns locks") == 0 && strstr(R.out, "\nTOKEN   a holder's fencing token") &&
	      strstr(R.out, "\nWAITED  how long a waiter has waited\n"),
	      "help --columns locks: the names -o takes, each with what it shows");
	check(run("$C blockers 103") == 1 && strstr(R.out, "holds exclusive") &&
	      strstr(R.out, "queued exclusive") && strstr(R.out, "101") && strstr(R.out, "102"),
	      "blockers 103: the holder and the one queued ahead; exit 1 (blocked)");
	jq("blockers -j: blocking_pids as pg_blocking_pids()", "$C blockers -j 103",
	   ".pid == 103 and .blocking_pids == [101, 102] and (.blockers | length) == 2 and"
	   " .blockers[0].edge == \"hard\"");
	check(run("$C blockers -o pid -n 101") == 1 && !strcmp(R.out, "102\n"),
	      "blockers -o PID -n 101: one pid a line (options after PID or before)");
	check(run("$C blockers 4242") == 0 && strstr(R.out, "waits for no key"),
	      "blockers of a pid that waits for nothing: exit 0");
	check(run("$C blockers") == 64 && run("$C blockers 0") == 64, "blockers without a PID: exit 64");
}

/*
 * -r prints raw values, not escapes (issue 30: "3.17\x20s"): WAITED in bare
 * microseconds, LEASE in bare milliseconds, two words of one cell joined
 * by "-"; -J is -j, as lslocks(8) spells it
 */
static void test_raw(void)
{
	put("locks", "# ordlock locks v1\n# c\n"
	    "wh 1:2 waiter 0 6 102 transfer shared 3170000\n"
	    "wh 1:2 holder 0 5 101 transfer exclusive 17 1500\n");
	put("owners", "# ordlock owners v1\n# c\n"
	    "6 102 transfer wh netlink 0 shared 1:2 3170000\n"
	    "5 101 transfer wh device 1 - - 0\n");
	put("graph", "# ordlock graph v1\n# c\n"
	    "6 102 transfer wh 1:2 shared 5 101 transfer exclusive hard 3170000\n");
	check(run("$C locks -r -n -o ROLE,WAITED,LEASE") == 0 &&
	      !strcmp(R.out, "holder - 1500\nwaiter 3170000 -\n"),
	      "locks -r: WAITED 3170000 (microseconds), LEASE 1500 (milliseconds), no \\x20");
	check(run("$C locks -n -o WAITED,LEASE") == 0 && strstr(R.out, "3.17 s") &&
	      strstr(R.out, "1500ms"), "locks without -r: 3.17 s and 1500ms for people");
	check(run("$C owners -r -n -p 102 -o PID,WAITS_FOR,WAITED") == 0 &&
	      !strcmp(R.out, "102 shared-1:2 3170000\n"),
	      "owners -r: WAITS FOR shared-1:2, WAITED 3170000");
	check(run("$C blockers -r -n -o PID,BECAUSE,WAITED 102") == 1 &&
	      !strcmp(R.out, "101 holds-exclusive 3170000\n"),
	      "blockers -r: BECAUSE holds-exclusive, WAITED 3170000");
	check(run("$C locks -r; $C owners -r; $C blockers -r 102") == 1 && !strchr(R.out, '\\') &&
	      strstr(R.out, " WAITS_FOR "),
	      "locks, owners and blockers -r: no backslash anywhere (header WAITS_FOR, as -o names it)");
	check(run("cd \"$ORDLOCK_DEBUGFS\" && $C locks -J > J1 && $C locks -j > J2 && cmp J1 J2 && $C -J owners > J1 &&"
		  " $C owners --json > J2 && cmp J1 J2 && grep -q '\"owners\"' J1") == 0,
	      "-J is -j, after the command and before it (lslocks' letter)");
	put("graph", graph);
}

/* The options exec takes, and only those, in its --help */
static void test_exec_help(void)
{
	check(run("$C exec --help") == 0 && strstr(R.out, "--nonblock") &&
	      !strstr(R.out, "--json") && !strstr(R.out, "--pretty") &&
	      !strstr(R.out, "--source") && !strstr(R.out, "--numeric") &&
	      !strstr(R.out, "Common options"),
	      "exec --help: -n is --nonblock; no -j, -p, -S or --numeric, which exec refuses");
	check(run("$C exec -p -x 1:1 -- true") == 64 && run("$C exec -S debugfs -x 1:1 -- true") == 64,
	      "exec -p and exec -S: refused");
	check(run("$C exec --help") == 0 && strstr(R.out, "forever") &&
	      strstr(R.out, "max_timeout_ms"),
	      "exec --help: without -w exec waits forever, asking again past max_timeout_ms");
	check(run("$C help") == 0 && strstr(R.out, "64 usage error") && strstr(R.out, "77 permission denied"),
	      "ordlockctl help: the exit statuses of ordlockctl's own failures");
}

static void test_usage(void)
{
	check(run("$C cycles --limit") == 64, "a missing option argument: exit 64 (EX_USAGE)");
	check(run("$C cycles -S nowhere") == 64 && strstr(R.err, "--source"), "-S nowhere: exit 64");
	check(run("$C --color=sometimes locks") == 64, "--color=sometimes: exit 64");
	check(run("$C nosuchcommand") == 64, "an unknown command: exit 64");
	check(run("$C -V") == 0 && strstr(R.out, "ordlockctl"), "-V: the version");
	check(run("$C --help") == 0 && strstr(R.out, "cycles") && strstr(R.out, "exec"),
	      "--help lists the commands");
	check(run("$C exec -E 300 -x 1:1 -- true") == 64, "exec -E 300: exit 64");
	check(run("$C help --columns locks > /dev/full") == 71 && strstr(R.err, "error writing"),
	      "help --columns > /dev/full: exit 71, not 0 (a script reads that list)");
	check(run("$C --version > /dev/full") == 71, "--version > /dev/full: exit 71");
	check(run("$C exec -w 4294968 -x 1:1 -- true") != 64 && !strstr(R.err, "-w:") &&
	      run("$C exec -w 1e400 -x 1:1 -- true") != 64 && !strstr(R.err, "-w:") &&
	      run("$C exec -w inf -x 1:1 -- true") != 64 && !strstr(R.err, "-w:") &&
	      run("$C exec -w nan -x 1:1 -- true") == 64 && strstr(R.err, "not a number"),
	      "exec -w past 2^32-1 ms, 1e400, inf: forever as in flock(1), no usage error; nan is not a number");
	/* before the module (absent here) or the domain's rank names are asked */
	check(run("$C exec -x bogus -- true") == 64 && strstr(R.err, "key \"bogus\": write RANK:ID"),
	      "exec -x bogus: a usage error (64) naming the key, whether or not the module is loaded");
	check(run("$C exec -s 'w h:1' -- true") == 64 && strstr(R.err, "\"w h:1\""),
	      "exec -s 'w h:1': a rank that is neither a number nor a name: exit 64");
	check(run("$C exec -x wh:1x 3") == 64 && strstr(R.err, "the id is not a number"),
	      "exec -x wh:1x FD: a bad id: exit 64");
	check(run("$C check-token wh:x 5") == 64 && strstr(R.err, "\"wh:x\""),
	      "check-token wh:x: a usage error (64) naming the key");
	check(run("$C exec -x 1:1 -c true -- false") == 64, "exec -c with a command too: exit 64");
	check(run("$C exec -j -x 1:1 -- true") == 64 && strstr(R.err, "invalid option"),
	      "exec -j: refused (exec takes no JSON), exit 64");
	check(run("$C domain x set") == 64, "domain set of nothing: exit 64");
	check(run("$C domain x set delay") == 64, "domain set delay without a number: exit 64");
	check(run("$C exec -x 1:1 3 3>/dev/null") == 66 && strstr(R.err, "descriptor 3"),
	      "exec on a descriptor that is not /dev/ordlock: exit 66 (EX_NOINPUT)");
	check(run("$C --color=always graph -d wh") == 0 && strstr(R.out, "\033["),
	      "--color=always: escapes even on a file");
	check(run("$C graph -d wh") == 0 && !strstr(R.out, "\033["), "no colour on a file");
	if (access("/sys/module/ordlock", F_OK)) {
		check(run("$C locks -S netlink") == 69 && strstr(R.err, "not loaded"),
		      "without the module: \"not loaded\", exit 69 (EX_UNAVAILABLE)");
		check(run("$C exec -x 1:1 -- true") == 69 && strstr(R.err, "not loaded"),
		      "exec without the module: \"not loaded\", exit 69, not the command's status");
	} else {
		ok(1, "without the module # SKIP the module is loaded here");
		ok(1, "without the module # SKIP the module is loaded here");
	}
}

/*
 * A cluster domain (docs/cluster.md, "Views"): other nodes' locks from a
 * crafted DLM debugfs file ($ORDLOCK_DLM_SYSFS lists the lockspaces,
 * $ORDLOCK_DLM_DEBUGFS has their files, $ORDLOCK_DLM_CONFIGFS says which
 * node this is); the real thing is the cluster case c_views
 */
static const char cd1_all[] = "version rsb 1.1 lvb 1.1 lkb 1.1\n"
	"rsb 00000000a1b2c3d4 0 1 0 0 0 0 25 str 00000001:0000000000000001\n"
	"lvb 3 32 05 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n"
	"lkb 1 0 0 0 0 0 0 2 0 -1 0 0 0 0 1 0\n"
	"lkb 2 2 10003 0 0 0 10000 2 5 -1 0 0 0 0 1 0\n"
	"lkb 3 0 0 0 0 0 0 3 0 5 0 0 0 0 1 0\n"
	"lkb 4 3 10004 0 0 0 10000 3 0 5 0 0 0 0 1 0\n"
	"rsb 00000000a1b2c3d5 2 1 0 0 0 0 25 str 00000001:0000000000000002\n"
	"lkb 5 2 0 0 0 0 0 2 0 -1 0 0 0 0 1 0\n"
	"rsb 00000000a1b2c3d6 0 1 0 0 0 0 4 str abcd\n"
	"lkb 6 2 0 0 0 0 0 2 5 -1 0 0 0 0 1 0\n";

static void test_cluster(void)
{
	put("locks", "# ordlock locks v1\n# c\n"
	    "cd1 1:1 waiter 0 9 77 w exclusive 1234\n"
	    "wh 1:2 holder 0 5 101 transfer exclusive 17\n");
	run("mkdir -p \"$DLMSYS/ordlock.cd1\" \"$DLMSYS/ordlock_harness\" \"$DLMSYS/gfs2\""
	    " \"$ORDLOCK_DLM_DEBUGFS\" \"$ORDLOCK_DLM_CONFIGFS/1\" \"$ORDLOCK_DLM_CONFIGFS/2\" &&"
	    " echo 1 >\"$ORDLOCK_DLM_CONFIGFS/1/local\" && echo 0 >\"$ORDLOCK_DLM_CONFIGFS/2/local\"");
	/* 1:1 mastered here: this node's anchor and waiter (node 0), node 2's
	 * EX holder, node 3 converting from its anchor to EX; 1:2 mastered by
	 * node 2; a resource that is not a key */
	put("ddbg/ordlock.cd1_all", cd1_all);
	check(run("$C locks -d cd1 -r") == 0 && strstr(R.out, " LEASE NODE\n") &&
	      strstr(R.out, "cd1 1:1 holder - - - - exclusive - - - 2\n") &&
	      strstr(R.out, "cd1 1:1 waiter 2 - - - exclusive - - - 3\n") &&
	      strstr(R.out, "cd1 1:1 waiter 0 9 77 w exclusive - 1234 - local\n"),
	      "locks -r: node 2 holds 1:1, node 3 waits second in the DLM's queue (NODE),"
	      " next to the local waiter");
	check(strstr(R.err, "the rows of other nodes (NODE) are what the DLM on node 1 (this node)") &&
	      strstr(R.err, "a snapshot of ") && strstr(R.err, "ddbg/ordlock.cd1_all at ") &&
	      strstr(R.err, "1:2: mastered by node 2: other nodes' locks on it are known there only") &&
	      !strstr(R.err, "abcd"),
	      "locks -r: the notes (snapshot, 1:2 mastered elsewhere) on stderr");
	check(run("$C locks -d cd1 -n -r -o NODE,ROLE,MODE") == 0 &&
	      !strcmp(R.out, "2 holder exclusive\nlocal waiter exclusive\n3 waiter exclusive\n"),
	      "locks -n -r -o NODE,ROLE,MODE: holders first, then the queue, this host's first");
	check(run("$C locks -d cd1") == 0 && strstr(R.out, "NODE") && strstr(R.out, "snapshot"),
	      "locks (a person's table): the notes after it on stdout");
	check(run("$C locks -d wh") == 0 && !strstr(R.out, "NODE") && !strstr(R.out, "cluster"),
	      "locks -d of a local domain: no NODE column, no note");
	check(run("$C locks -p 77 -r -n") == 0 && !strcmp(R.out,
	      "cd1 1:1 waiter 0 9 77 w exclusive - 1234 - local\n"),
	      "locks -p 77: that process's row, no other node's");
	jq("locks -j: the other nodes' rows and the cluster view", "$C locks -j -d cd1",
	   "[.locks[] | .node] == [2, null, 3] and .locks[0].pid == null and"
	   " .locks[0].dlm_granted == \"EX\" and .locks[0].dlm_requested == null and"
	   " .locks[2].dlm_granted == \"NL\" and .locks[2].dlm_requested == \"EX\" and"
	   " .locks[2].position == 2 and .locks[1].node == null and"
	   " (.cluster | length == 1) and (.cluster[0] | .domain == \"cd1\" and"
	   " .lockspace == \"ordlock.cd1\" and .snapshot and .readable and .this_node == 1 and"
	   " .ignored_resources == 1 and (.keys | map([.key, .master, .master_node,"
	   " .all_nodes_known]) == [[\"1:1\", \"here\", 1, true], [\"1:2\", \"elsewhere\", 2, false]]))");
	jq("locks -j of a local domain: an empty cluster view", "$C locks -j -d wh",
	   ".cluster == [] and (.locks | length == 1) and .locks[0].node == null");
	jq("locks -j: every row has the same keys, a holder's position is 0 on every node",
	   "$C locks -j -d cd1",
	   "([.locks[] | keys] | unique | length == 1) and .locks[0].node == 2 and"
	   " .locks[0].position == 0 and .locks[1].dlm_granted == null and"
	   " .locks[1].dlm_requested == null");
	/* a path of quote, backslash, tab, UTF-8 (e acute) and a byte 0xff */
	jq("locks -j: the file's path as JSON, UTF-8 kept, a stray byte U+FFFD",
	   "D=\"$ORDLOCK_DEBUGFS/$(printf 'd\"q\\\\b\\t\\303\\251\\377')\"; mkdir -p \"$D\" &&"
	   " cp \"$ORDLOCK_DLM_DEBUGFS/ordlock.cd1_all\" \"$D/\" &&"
	   " ORDLOCK_DLM_DEBUGFS=\"$D\" $C locks -j -d cd1",
	   ".cluster[0].readable and (.cluster[0].file |"
	   " endswith(\"/d\\\"q\\\\b\\t\xc3\xa9\\ufffd/ordlock.cd1_all\"))");
	check(run("ORDLOCK_DLM_DEBUGFS=/nonexistent $C locks -d cd1") == 0 &&
	      strstr(R.out, "cluster domain cd1: other nodes' locks unknown: cannot read"
		     " /nonexistent/ordlock.cd1_all: no such file") &&
	      strstr(R.out, "local") && !strstr(R.out, "holder"),
	      "the DLM's file missing: says it cannot read it, shows the local rows only");
	jq("... and the JSON says readable false and why",
	   "ORDLOCK_DLM_DEBUGFS=/nonexistent $C locks -j -d cd1",
	   ".cluster[0].readable == false and (.cluster[0].error | test(\"no such file\")) and"
	   " (.cluster[0] | has(\"keys\") and .keys == null and has(\"ignored_resources\")) and"
	   " ([.locks[] | select(.node != null)] | length == 0)");
	put("ddbg/ordlock.cd1_all", "version 4 rsb 2\n"
	    "rsb 00000000a1b2c3d4 0 0 1 1 0 0 25 str 00000001:0000000000000001\n");
	check(run("$C locks -d cd1") == 0 &&
	      strstr(R.out, "cannot read") && strstr(R.out, "line 1: not the DLM's format") &&
	      !strstr(R.out, "holder"),
	      "a DLM file of another format: refused, naming the line; no other node's row");
	check(run("ORDLOCK_DLM_SYSFS=/nonexistent $C locks -d cd1") == 0 &&
	      !strstr(R.out, "NODE") && !strstr(R.out, "cluster"),
	      "no DLM on the host: the local table alone");
}

/*
 * A holder of a cluster domain's key granted here that waits for the
 * cluster (debugfs "locks": TOKEN "cluster:WAITED_US"): locks, blockers;
 * the DLM file of test_cluster (1:1 mastered here, node 2 holds it EX,
 * node 3 converts from its anchor; 1:2 mastered by node 2)
 */
static void test_cluster_wait(void)
{
	put("ddbg/ordlock.cd1_all", cd1_all);
	put("locks", "# ordlock locks v1\n# c\n"
	    "cd1 1:1 holder 0 8 78 cw exclusive cluster:2500000 -\n"
	    "cd1 1:1 waiter 0 9 77 w exclusive 1234 -\n"
	    "cd1 1:2 holder 0 10 79 cx shared cluster:5 -\n"
	    "wh 1:2 holder 0 5 101 transfer exclusive 17 -\n");
	check(run("$C locks -d cd1 -r -n") == 0 &&
	      strstr(R.out, "cd1 1:1 holder 0 8 78 cw exclusive - 2500000 - local\n") &&
	      strstr(R.out, "cd1 1:2 holder 0 10 79 cx shared - 5 - local\n"),
	      "locks -r: a holder waiting for the cluster has no TOKEN, a WAITED (bare microseconds)");
	check(strstr(R.err, "1:1: pid 78 (owner 8) holds it on this node and waits for its lock"
		     " in the cluster: held by node 2\n") &&
	      strstr(R.err, "1:2: pid 79 (owner 10) holds it on this node and waits for its lock"
			    " in the cluster (held on another node: its master, node 2, knows which)"),
	      "locks -r: notes name the waits for the cluster and who holds the key");
	jq("locks -j: cluster_wait true, token null, waited_us", "$C locks -j -d cd1",
	   "([.locks[] | select(.pid == 78)][0] | .role == \"holder\" and .cluster_wait and"
	   " .token == null and .waited_us == 2500000) and"
	   " ([.locks[] | select(.pid == 77)][0].cluster_wait == false) and"
	   " ([.locks[] | select(.node == 2)][0].cluster_wait == null) and"
	   " ([.locks[] | keys] | unique | length == 1)");
	jq("locks -j of a plain holder: cluster_wait false, its token", "$C locks -j -d wh",
	   ".locks[0].cluster_wait == false and .locks[0].token == 17");
	check(run("$C blockers -r -n 78") == 1 &&
	      !strcmp(R.out, "- - - holds-exclusive 1:1 cluster 8 exclusive 2500000 2\n"),
	      "blockers 78: exit 1, node 2's holder (NODE 2), not node 3's converter from NL");
	jq("blockers -j 78: blocking_nodes [2], no local pid", "$C blockers -j 78",
	   ".blocking_pids == [] and .blocking_nodes == [2] and (.blockers | length == 1) and"
	   " (.blockers[0] | .pid == null and .node == 2 and .master_node == 1 and"
	   " .edge == \"cluster\" and .mode == \"exclusive\" and .wants == \"exclusive\" and"
	   " .waiter_owner_id == 8 and .waited_us == 2500000)");
	check(run("$C blockers 79") == 1 && strstr(R.out, "held elsewhere") &&
	      strstr(R.out, "1:2 is held on another node: its master, node 2, knows which"),
	      "blockers 79: 1:2 mastered by node 2: held elsewhere, the master named");
	jq("blockers -j 79: node null, master_node 2", "$C blockers -j 79",
	   ".blocking_nodes == [] and (.blockers[0] | .node == null and .master_node == 2 and"
	   " .mode == null)");
	check(run("ORDLOCK_DLM_DEBUGFS=/nonexistent $C blockers 78") == 1 &&
	      strstr(R.out, "1:1 is held on another node: which one is not known here: cannot read"),
	      "blockers without the DLM's file: held elsewhere, says why it cannot tell");
	check(run("$C blockers -d wh 78") == 0 && strstr(R.out, "waits for no key"),
	      "blockers -d of another domain: waits for no key there");
	check(run("$C blockers -r -n -o PID,NODE 103") == 1 &&
	      strstr(R.out, "101 local\n"),
	      "blockers of a local wait on a cluster host: NODE local");
	put("locks", "# ordlock locks v1\n# c\n"
	    "cd1 1:1 holder 0 8 78 cw exclusive cluster:x -\n");
	check(run("$C locks") == 70 && strstr(R.err, "line 3: field 9 (cluster:waited_us)"),
	      "locks: cluster: without a number is refused, naming the field");
	put("locks", "# ordlock locks v1\n# c\n"
	    "cd1 1:1 waiter 0 8 78 cw exclusive cluster:5 -\n");
	check(run("$C locks") == 70 && strstr(R.err, "line 3: field 9"),
	      "locks: cluster: on a waiter's row is refused");
}

/*
 * A stand-in for ordlock-xdetectd's socket: each connection's "locks" is
 * answered with the file xd.locks, anything else with xd.state (read at
 * each request); killed by the caller
 */
static pid_t xd_serve(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	pid_t p;

	if (strlen(xd_sock) >= sizeof(sa.sun_path))
		bail_out("%s: too long for a socket", xd_sock);
	memcpy(sa.sun_path, xd_sock, strlen(xd_sock) + 1);
	unlink(xd_sock);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8))
		bail_out("the stand-in socket %s: %s", xd_sock, strerror(errno));
	fflush(stdout);
	p = fork();
	if (p < 0)
		bail_out("fork: %s", strerror(errno));
	if (p == 0) {
		for (;;) {
			char cmd[32] = "", path[PATH_MAX + 16], buf[16384];
			int c = accept(fd, NULL, NULL), f;
			ssize_t n;

			if (c < 0)
				_exit(0);
			n = recv(c, cmd, sizeof(cmd) - 1, 0);
			snprintf(path, sizeof(path), "%s/%s", dir,
				 n > 0 && !strncmp(cmd, "locks", 5) ? "xd.locks" : "xd.state");
			f = open(path, O_RDONLY);
			while (f >= 0 && (n = read(f, buf, sizeof(buf))) > 0)
				if (write(c, buf, (size_t)n) != n)
					break;
			if (f >= 0)
				close(f);
			close(c);
		}
	}
	close(fd);
	return p;
}

/* a daemon's owner (json_vertex() of xdetectd.c) */
#define XDV(node, owner, pid, comm, key, start, dlm)						"{\"node\": " #node ", \"owner_id\": " #owner ", \"pid\": " #pid ", \"comm\": \"" comm \
	"\", \"key\": \"" key "\", \"mode\": 2, \"gen\": 0, \"start_ns\": " #start		\
	", \"in_dlm\": " #dlm "}"

/*
 * Every node's owners from ordlock-xdetectd (a stand-in for its socket),
 * on the cluster host of test_cluster_wait (pid 78 holds 1:1 here and
 * waits for it in the cluster; this node's DLM: node 2 holds it EX, node
 * 3 converts): locks, blockers (PID, NODE:PID), cycles --history; and
 * without a daemon, or with one that cannot answer, what they say
 */
static void test_xdview(void)
{
	pid_t srv;
	int st;

	put("ddbg/ordlock.cd1_all", cd1_all);
	put("locks", "# ordlock locks v1\n# c\n"
	    "cd1 1:1 holder 0 8 78 cw exclusive cluster:2500000 -\n");
	put("graph", "# ordlock graph v1\n# c\n");
	put("deadlocks", "# ordlock deadlocks v1\n");
	/* no daemon: this node's view only, and why */
	check(run("$C locks -d cd1") == 0 &&
	      strstr(R.out, "this view is this node's only (other nodes' owners unknown): no"
		     " ordlock-xdetectd runs on this node (no ") && strstr(R.out, "xd.sock)\n"),
	      "locks without a daemon: a line says the view is this node's only, and why");
	check(run("$C locks -d cd1 -r -n") == 0 && !strstr(R.out, "this view") &&
	      strstr(R.err, "this view is this node's only"),
	      "... on stderr under -r -n");
	check(run("$C blockers 2:5") == 69 &&
	      strstr(R.err, "2:5: another node's owner: no ordlock-xdetectd runs on this node"),
	      "blockers NODE:PID without a daemon: 69, and why");
	check(run("$C cycles --history -d cd1") == 0 &&
	      strstr(R.out, "deadlocks across nodes unknown: no ordlock-xdetectd runs on this node") &&
	      strstr(R.out, "no deadlocks recorded"),
	      "cycles --history without a daemon: says the deadlocks across nodes are unknown");

	put("xd.locks", "{\"node\": 1, \"nodes\": [2, 1], \"missing\": [3], \"complete\": false, \"locks\": [\n"
	    "{\"domain\": \"cd1\", \"role\": \"holder\", \"position\": 0, \"waited_us\": 2500000, \"owner\": "
	    XDV(1, 8, 78, "cw", "1:1", 100, true) "},\n"
	    "{\"domain\": \"cd1\", \"role\": \"holder\", \"position\": 0, \"waited_us\": null, \"owner\": "
	    XDV(2, 5, 212, "transfer", "1:1", 0, false) "},\n"
	    "{\"domain\": \"cd1\", \"role\": \"waiter\", \"position\": 1, \"waited_us\": 700, \"owner\": "
	    XDV(2, 6, 213, "report", "1:1", 50, false) "},\n"
	    "{\"domain\": \"other\", \"role\": \"holder\", \"position\": 0, \"waited_us\": null, \"owner\": "
	    XDV(2, 7, 214, "local2", "1:1", 0, false) "}]}\n");
	put("xd.state", "{\"node\": 1, \"boot\": \"0\", \"pid\": 9, \"state\": \"on\", \"members\": [1, 2],"
	    " \"stats\": {}, \"waits\": [], \"rounds\": [\n"
	    "{\"round\": \"1:4\", \"domain\": \"cd1\", \"state\": \"decided\", \"opened_ns\": 1000000000,"
	    " \"closed_ns\": 2000000000, \"victim\": 1, \"failed_here\": false, \"cycle\": ["
	    XDV(1, 8, 78, "cw", "1:2", 1, true) ", " XDV(2, 5, 212, "transfer", "1:1", 2, true) "]},\n"
	    "{\"round\": \"2:1\", \"domain\": \"cd1\", \"state\": \"aborted\", \"opened_ns\": 1,"
	    " \"closed_ns\": 2, \"victim\": -1, \"failed_here\": false, \"cycle\": []}]}\n");
	srv = xd_serve();
	check(run("$C locks -d cd1 -r -n") == 0 &&
	      strstr(R.out, "cd1 1:1 holder 0 5 212 transfer exclusive - - - 2\n") &&
	      strstr(R.out, "cd1 1:1 waiter 1 6 213 report exclusive - 700 - 2\n") &&
	      !strstr(R.out, "holder - - - - exclusive") && strstr(R.out, "cd1 1:1 waiter 2 - - - exclusive - - - 3\n") &&
	      !strstr(R.out, "local2"),
	      "locks: node 2's owners from its daemon (OWNER, PID, COMM, POS, WAITED), node 3's"
	      " (missing) from the DLM, no row of another node's local domain");
	check(strstr(R.err, "other nodes' owners (NODE): as their ordlock-xdetectd answered over CPG"
		     " (nodes 1 (this node), 2); not in time: node 3 (their rows, if any, are the DLM's)\n") &&
	      strstr(R.err, "1:1: pid 78 (owner 8) holds it on this node and waits for its lock in"
		     " the cluster: held by node 2 pid 212 (transfer)\n"),
	      "locks: says where they come from, who is missing; the note names node 2's pid 212");
	jq("locks -j: node 2's rows with pid and comm, view xdetectd; every row the same keys",
	   "$C locks -j -d cd1",
	   "([.locks[] | select(.view == \"xdetectd\") | [.node, .pid, .comm, .owner_id]] =="
	   " [[2, 212, \"transfer\", 5], [2, 213, \"report\", 6]]) and"
	   " ([.locks[] | select(.view == \"dlm\") | .node] == [3]) and"
	   " ([.locks[] | select(.view == \"local\") | .pid] == [78]) and"
	   " ([.locks[] | keys] | unique | length == 1) and .all_nodes.complete == false and"
	   " .all_nodes_error == null");
	check(run("$C blockers -r -n 78") == 1 &&
	      !strcmp(R.out, "212 transfer 5 holds-exclusive 1:1 cluster 8 exclusive 2500000 2\n"),
	      "blockers 78: node 2's holder as pid 212 (transfer), NODE 2");
	jq("blockers -j 78: node 2's pid 212", "$C blockers -j 78",
	   ".node == 1 and .blocking_nodes == [2] and .blocking_pids == [] and"
	   " (.blockers | length == 1) and (.blockers[0] | .pid == 212 and .node == 2 and"
	   " .comm == \"transfer\" and .edge == \"cluster\" and .because == \"holds\")");
	check(run("$C blockers -r -n 1:78") == 1 && strstr(R.out, "212 transfer 5 holds-exclusive"),
	      "blockers 1:78 (this node): as blockers 78");
	check(run("$C blockers -r -n 2:213") == 1 &&
	      !strcmp(R.out, "212 transfer 5 holds-exclusive 1:1 hard 6 exclusive 700 2\n"),
	      "blockers 2:213: another node's waiter, blocked there by pid 212 (hard)");
	jq("blockers -j 2:213", "$C blockers -j 2:213",
	   ".node == 2 and .source == \"xdetectd\" and .blocking_pids == [212] and"
	   " .blocking_nodes == [2] and (.blockers[0] | .pid == 212 and .node == 2 and .edge == \"hard\")");
	check(run("$C blockers 2:999") == 0 && strstr(R.out, "pid 999 of node 2 waits for no key"),
	      "blockers 2:999: waits for no key, exit 0");
	check(run("$C blockers 0:5") == 64 && run("$C blockers 2:") == 64,
	      "blockers 0:5, 2:: usage errors");
	check(run("$C cycles --history -d cd1") == 1 &&
	      strstr(R.out, "deadlock across nodes (round 1:4) at ") &&
	      strstr(R.out, " in domain \"cd1\" (2 owners), victim node 2 pid 212 (transfer):\n") &&
	      strstr(R.out, "  node 1 pid 78 (cw) waits for exclusive 1:2 in the DLM; blocked by node 2"
		     " pid 212 (transfer)\n") &&
	      strstr(R.out, "  node 2 pid 212 (transfer) waits for exclusive 1:1 in the DLM; blocked by"
		     " node 1 pid 78 (cw)\n") &&
	      strstr(R.out, "  1:1 => 1:2 => 1:1\n") && !strstr(R.out, "2:1") &&
	      !strstr(R.out, "no deadlocks"),
	      "cycles --history: the round decided across nodes, its victim, owners as node + pid +"
	      " comm; not the aborted one; exit 1");
	check(run("$C cycles -d cd1") == 0 &&
	      strstr(R.out, "across nodes (ordlock-xdetectd of node 1): 0 rounds being confirmed,"
		     " 1 deadlock broken (cycles --history shows them)\n"),
	      "cycles: a line on the rounds across nodes");
	check(run("$C cycles --history --after 0 -d cd1") == 0 && strstr(R.out, "no deadlocks"),
	      "cycles --history --after: the kernel's numbers only");
	check(run("$C cycles --history --since @3 -d cd1") == 0 && strstr(R.out, "no deadlocks"),
	      "cycles --history --since: a round decided before is left out");
	check(run("$C cycles --history -q") == 1 && !R.out[0],
	      "cycles --history -q: the round counts, nothing printed");
	put("xd.locks", "{\"error\": \"not in the CPG group\"}\n");
	check(run("$C locks -d cd1") == 0 &&
	      strstr(R.out, "this view is this node's only (other nodes' owners unknown):"
		     " ordlock-xdetectd: not in the CPG group\n"),
	      "a daemon that cannot answer: this node's view only, and its reason");
	check(run("$C locks -d cd1 -r -n") == 0 &&
	      strstr(R.out, "cd1 1:1 holder - - - - exclusive - - - 2\n"),
	      "... with the DLM's rows of node 2");
	jq("... locks -j: all_nodes as it said, all_nodes_error its reason", "$C locks -j -d cd1",
	   ".all_nodes.error == \"not in the CPG group\" and"
	   " .all_nodes_error == \"ordlock-xdetectd: not in the CPG group\"");
	kill(srv, SIGTERM);
	waitpid(srv, &st, 0);
	unlink(xd_sock);
}

/*
 * A key held by the fast path (debugfs "locks": TOKEN "fast:INDEX"; "graph":
 * edge "fast"): locks, graph, blockers, their JSON; garbage refused
 */
static void test_fast_holder(void)
{
	put("locks", "# ordlock locks v1\n# c\n"
	    "fw 1:1 holder 0 8 78 fa exclusive fast:3 -\n"
	    "fw 1:1 waiter 0 9 77 w exclusive 1234 -\n"
	    "fw 1:2 holder 0 0 0 ? exclusive fast:16777200 -\n");
	put("graph", "# ordlock graph v1\n# c\n"
	    "9 77 w fw 1:1 exclusive 8 78 fa exclusive fast 1234\n");
	check(run("$C locks -d fw -r -n") == 0 &&
	      strstr(R.out, "fw 1:1 holder 0 8 78 fa exclusive fast:3 - -") &&
	      strstr(R.out, "fw 1:2 holder 0 0 0 ? exclusive fast:16777200 - -"),
	      "locks -r: a fast holder's TOKEN is fast:INDEX, no WAITED; unknown owner 0 ?");
	jq("locks -j: fast_index, token null", "$C locks -j -d fw",
	   "([.locks[] | select(.pid == 78)][0] | .role == \"holder\" and .fast_index == 3 and"
	   " .token == null and .waited_us == null) and"
	   " ([.locks[] | select(.pid == 77)][0].fast_index == null) and"
	   " ([.locks[] | keys] | unique | length == 1)");
	check(run("$C graph -d fw") == 0 && strstr(R.out, "fast"),
	      "graph: the edge is shown as fast");
	jq("graph -j: edge fast", "$C graph -j -d fw",
	   ".edges[0].edge == \"fast\" and .edges[0].blocker.pid == 78");
	check(run("$C blockers -r -n 77") == 1 && strstr(R.out, "78 fa 8 holds-exclusive 1:1 fast"),
	      "blockers 77: exit 1, the fast holder, edge fast");
	put("locks", "# ordlock locks v1\n# c\n"
	    "fw 1:1 holder 0 8 78 fa exclusive fast:x -\n");
	check(run("$C locks") == 70 && strstr(R.err, "line 3: field 9 (fast:index)"),
	      "locks: fast: without a number is refused, naming the field");
	put("locks", "# ordlock locks v1\n# c\n"
	    "fw 1:1 waiter 0 8 78 fa exclusive fast:5 -\n");
	check(run("$C locks") == 70 && strstr(R.err, "line 3: field 9"),
	      "locks: fast: on a waiter's row is refused");
}

int main(void)
{
	char self[PATH_MAX - 64], *slash;
	ssize_t n;

	alarm(120);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		bail_out("readlink: %s", strerror(errno));
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	/* tests/build/unit/t_ctl_cli -> tools/ordlockctl/ordlockctl */
	snprintf(ctl, sizeof(ctl), "%s/../../../tools/ordlockctl/ordlockctl", self);
	if (access(ctl, X_OK))
		bail_out("no %s (make tools)", ctl);
	snprintf(dir, sizeof(dir), "%s/ctl-cli.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		bail_out("mkdtemp: %s", strerror(errno));
	have_jq = !system("command -v jq >/dev/null 2>&1");
	/* made by test_cluster only: before it, a host without the DLM */
	snprintf(sys_dir, sizeof(sys_dir), "%s/dsys", dir);
	snprintf(dlm_dir, sizeof(dlm_dir), "%s/ddbg", dir);
	snprintf(cfg_dir, sizeof(cfg_dir), "%s/dcfg", dir);
	snprintf(xd_sock, sizeof(xd_sock), "%s/xd.sock", dir);
	test_cycles();
	test_graph();
	test_other();
	test_json64();
	test_lslocks();
	test_raw();
	test_exec_help();
	test_usage();
	test_cluster();
	test_cluster_wait();
	test_xdview();
	test_fast_holder();
	run("rm -rf \"$ORDLOCK_DEBUGFS\"");
	return tap_done();
}
