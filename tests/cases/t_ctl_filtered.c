// SPDX-License-Identifier: GPL-2.0
/*
 * t_ctl_filtered: views that say what they do not show.  A user who is
 * not root (no debugfs) and lacks CAP_NET_ADMIN gets the netlink dumps,
 * which show only its own owners: ordlockctl locks, owners and graph say
 * so on stderr and in their JSON ("filtered": true, "filtered_uid"), and
 * cycles exits 3 ("no cycle seen, but not everything could be seen")
 * instead of 0.  Root's views are whole and say nothing of the kind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

static char ctl[512];
static char out[65536], err[65536];

/* Run "[AS] ordlockctl ARGS": its exit status, stdout in out, stderr in err */
static int run(const char *as, const char *args)
{
	char cmd[2048];
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s %s >/tmp/t_ctl_filtered.out 2>/tmp/t_ctl_filtered.err",
		 as, ctl, args);
	fflush(NULL);
	st = system(cmd);
	if (read_small_file("/tmp/t_ctl_filtered.out", out, sizeof(out)) < 0)
		out[0] = '\0';
	if (read_small_file("/tmp/t_ctl_filtered.err", err, sizeof(err)) < 0)
		err[0] = '\0';
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

#define NOBODY "setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"

int main(void)
{
	const char *d;
	struct ordlock *ol;
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	char args[256];
	int rc;

	watchdog_start(120);
	snprintf(ctl, sizeof(ctl), "%s", olt_ctl_path());
	d = olt_domain("filtered");
	ol = olt_open(d);
	is_int(ordlock_acquire(ol, &k, 1, OLT_LONG_MS, 0, NULL), 0, "root holds 1:1 in %s", d);

	snprintf(args, sizeof(args), "locks -d %s", d);
	rc = run("", args);
	ok(rc == 0 && strstr(out, "1:1") && !strstr(err, "only the owners"),
	   "root: locks shows root's key, and no note");
	rc = run(NOBODY, args);
	ok(rc == 0 && !strstr(out, "1:1"), "nobody: locks does not show root's key");
	ok(strstr(err, "showing only the owners of uid 65534") != NULL,
	   "and says on stderr that it shows only uid 65534's owners");
	if (!strstr(err, "uid 65534"))
		diag("stderr: %s", err);

	snprintf(args, sizeof(args), "locks -j -d %s", d);
	rc = run(NOBODY, args);
	ok(rc == 0 && strstr(out, "\"filtered\":true") && strstr(out, "\"filtered_uid\":65534"),
	   "nobody: locks -j has \"filtered\": true and \"filtered_uid\": 65534");
	if (!strstr(out, "filtered"))
		diag("stdout: %.300s", out);
	rc = run("", args);
	ok(rc == 0 && !strstr(out, "\"filtered\""), "root: locks -j has no \"filtered\"");

	snprintf(args, sizeof(args), "owners -j -d %s", d);
	rc = run(NOBODY, args);
	ok(rc == 0 && strstr(out, "\"filtered\":true"), "nobody: owners -j is marked filtered");
	snprintf(args, sizeof(args), "graph -d %s", d);
	rc = run(NOBODY, args);
	ok(rc == 0 && strstr(err, "showing only the owners"), "nobody: graph says it is filtered");

	snprintf(args, sizeof(args), "cycles -d %s", d);
	rc = run("", args);
	is_int(rc, 0, "root: cycles finds none: exit 0");
	rc = run(NOBODY, args);
	is_int(rc, 3, "nobody: cycles cannot see everything: exit 3, not 0");
	ok(strstr(err, "showing only the owners") != NULL, "and says why on stderr");
	rc = run(NOBODY, "cycles -q");
	is_int(rc, 3, "nobody: cycles -q exits 3 too");

	/* a domain named by mistake: an error with the name, not "no locks" */
	rc = run("", "locks -d no_such_domain_x");
	ok(rc == 69 && strstr(err, "no domain \"no_such_domain_x\""),
	   "root: locks -d NOSUCH: exit 69, \"no domain\" on stderr");
	if (rc != 69)
		diag("exit %d, stderr: %s", rc, err);
	rc = run(NOBODY, "locks -j -d no_such_domain_x");
	ok(rc == 69 && strstr(err, "no domain \"no_such_domain_x\"") && !out[0],
	   "nobody (netlink): locks -j -d NOSUCH: exit 69, nothing on stdout");
	if (rc != 69)
		diag("exit %d, stderr: %s", rc, err);
	rc = run("", "owners -d no_such_domain_x");
	ok(rc == 69 && strstr(err, "no domain"), "root: owners -d NOSUCH: exit 69");
	rc = run(NOBODY, "owners -d no_such_domain_x");
	ok(rc == 69 && strstr(err, "no domain"), "nobody: owners -d NOSUCH: exit 69");
	/* a domain that exists but has nothing to show: an empty view, exit 0 */
	rc = run("", "locks -d default");
	ok(rc == 0 && !strstr(err, "no domain"), "root: locks -d default (no locks there): exit 0");
	rc = run(NOBODY, "owners -d default");
	ok(rc == 0 && !strstr(err, "no domain"), "nobody: owners -d default: exit 0");

	ordlock_close(ol);
	unlink("/tmp/t_ctl_filtered.out");
	unlink("/tmp/t_ctl_filtered.err");
	return tap_done();
}
