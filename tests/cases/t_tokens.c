// SPDX-License-Identifier: GPL-2.0
/*
 * t_tokens: fencing tokens never go backwards.  Within a domain every
 * grant gets a larger token; a named domain that is freed with its last
 * owner and created again hands out tokens above every token it gave
 * before; so does a domain after the module was unloaded and loaded
 * again; and the tokens stay below 2^53, so that JSON readers keep them
 * exact.
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

#define EX ORDLOCK_MODE_EXCLUSIVE

static int sh(const char *cmd)
{
	int st;

	fflush(NULL);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/* One grant of 5:5 in @domain by a fresh owner, closed after: its token */
static uint64_t one_token(const char *domain)
{
	struct ordlock *ol = olt_open(domain);
	struct ordlock_key k = ORDLOCK_EX(5, 5);
	uint64_t token = 0;

	if (ordlock_acquire(ol, &k, 1, OLT_LONG_MS, 0, &token))
		token = 0;
	ordlock_close(ol);
	return token;
}

static void test_recreated(void)
{
	char name[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	uint64_t t[4] = { 0 }, again;
	struct ordlock *ol;
	unsigned int i;
	int up = 1;

	snprintf(name, sizeof(name), "%s", olt_domain("tok"));
	ol = olt_open(name);
	for (i = 0; i < 4; i++) {
		if (ordlock_acquire(ol, &k, 1, OLT_LONG_MS, 0, &t[i]))
			t[i] = 0;
		ordlock_release_all(ol);
		if (i && t[i] <= t[i - 1])
			up = 0;
	}
	ok(t[0] > 0 && up, "four grants in %s: tokens %llu < %llu < %llu < %llu", name,
	   (unsigned long long)t[0], (unsigned long long)t[1],
	   (unsigned long long)t[2], (unsigned long long)t[3]);
	ordlock_close(ol);	/* the last owner: the domain is freed */

	again = one_token(name);
	ok(again > t[3], "%s created again: its first token %llu is above the last one %llu",
	   name, (unsigned long long)again, (unsigned long long)t[3]);
	ok(again < (1ULL << 53), "the token is below 2^53 (exact in JSON)");

	/* many times over: never at or below the highest token seen */
	for (i = 0, up = 1; i < 50; i++) {
		uint64_t next = one_token(name);

		if (next <= again) {
			diag("round %u: token %llu after %llu", i,
			     (unsigned long long)next, (unsigned long long)again);
			up = 0;
		}
		again = next;
	}
	ok(up, "50 more re-creations of %s: every first token above the last", name);
}

static void test_reload(void)
{
	const char *repo = getenv("ORDLOCK_REPO"), *ko = getenv("ORDLOCK_KO");
	char cmd[700], module[512];
	uint64_t before, after, dflt_before, dflt_after;
	int i, rc;

	if (ko && *ko)
		snprintf(module, sizeof(module), "%s", ko);
	else
		snprintf(module, sizeof(module), "%s/kmod/ordlock.ko", repo ? repo : ".");
	before = one_token("tok-reload");
	dflt_before = one_token(NULL);
	rc = sh("rmmod ordlock");
	if (!is_int(rc, 0, "rmmod ordlock"))
		return;
	snprintf(cmd, sizeof(cmd), "insmod %s", module);
	rc = sh(cmd);
	if (!is_int(rc, 0, "insmod %s", module))
		bail_out("the module could not be loaded again");
	for (i = 0; i < 100 && access("/dev/ordlock", F_OK); i++)
		usleep(50000);
	after = one_token("tok-reload");
	dflt_after = one_token(NULL);
	ok(after > before, "after a reload, a named domain's token %llu is above %llu",
	   (unsigned long long)after, (unsigned long long)before);
	ok(dflt_after > dflt_before, "and the default domain's %llu above %llu",
	   (unsigned long long)dflt_after, (unsigned long long)dflt_before);
}

int main(void)
{
	watchdog_start(120);
	test_recreated();
	test_reload();
	return tap_done();
}
