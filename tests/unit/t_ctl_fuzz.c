// SPDX-License-Identifier: GPL-2.0
/*
 * A deterministic fuzz run of ordlockctl's parsers and cycle finder, part
 * of make check: random bytes, random lines of random fields, and mutations
 * of valid files of every kind (bytes flipped, inserted, deleted, lines
 * repeated and cut). Nothing may crash; every refusal must name a line of
 * its input. tests/fuzz/fuzz_ctl.c has the checks; make fuzz-parsers runs the same
 * target under libFuzzer with sanitizers, for longer.
 *
 * CTL_FUZZ_ROUNDS in the environment changes the number of inputs per kind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fuzz/fuzz_ctl.c"
#include "tap.h"

static const char *const seeds[] = {
	"# ordlock graph v1\n# waiter_id ...\n"
	"5 101 transfer wh 1:2 exclusive 6 102 transfer exclusive hard 1500\n"
	"6 102 transfer wh 1:1 exclusive 5 101 transfer exclusive hard 1400\n"
	"7 103 report wh 1:1 shared 6 102 transfer exclusive soft 3\n",
	"# ordlock locks v1\n# domain ...\n"
	"wh 1:2 holder 0 5 101 transfer exclusive 17\n"
	"wh 1:2 waiter 0 6 102 transfer shared 1234\n"
	"wh 1:2 converter 1 7 103 x exclusive 5\n",
	"# ordlock owners v1\n# id ...\n"
	"5 101 transfer wh device 2 - - 0\n"
	"6 102 transfer wh netlink 0 exclusive 1:2 99\n",
	"# ordlock deadlocks v1\n"
	"deadlock 3 1700000000000000000 wh 2\n"
	"step 3 0 5 101 a exclusive 1:2 hard exclusive\n"
	"step 3 1 6 102 b exclusive 1:1 soft shared\n",
	"# ordlock stats v1\nglobal owners 3 resources 2\n"
	"domain wh policy timeout detect_delay_ms 0 owners 2 peak_owners 3 acquires 10\n"
	"wait_us wh lt_1 0 lt_2 5 more 1\n",
	"version rsb 1.1 lvb 1.1 lkb 1.1\n"
	"rsb 00000000a1b2c3d4 0 1 0 0 0 0 25 str 00000001:0000000000000001\n"
	"lvb 3 4 05 00 00 00\n"
	"lkb 1 0 0 0 0 0 0 2 0 -1 0 0 0 0 1 0\n"
	"lkb 2 2 10003 0 0 0 10000 2 5 -1 0 0 0 0 1 0\n"
	"lkb 4 3 10004 0 0 0 10000 3 0 5 0 0 0 0 1 0\n"
	"rsb 00000000a1b2c3d6 0 1 0 0 0 0 3 hex 61 00 62\n",
};

static const char *const words[] = {
	"# ordlock graph v1", "# ordlock locks v1", "# ordlock owners v1",
	"# ordlock deadlocks v1", "# ordlock stats v1", "0", "1", "5", "101",
	"18446744073709551615", "18446744073709551616", "4294967296", "-1",
	"transfer", "wh", "1:2", "1:", ":2", "x:y", "shared", "exclusive", "hard",
	"soft", "holder", "waiter", "converter", "device", "netlink", "-",
	"deadlock", "step", "global", "domain", "wait_us", "policy", "timeout",
	"detect_delay_ms", "lt_1", "more", "#", "", " ", "\t", "\r",
	"version rsb 1.1 lvb 1.1 lkb 1.1", "rsb", "lvb", "lkb", "str", "hex", "25",
	"00000001:0000000000000001", "00",
};

static unsigned int next_rand(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 8) & 0xffffff;
}

static size_t random_bytes(unsigned int *s, uint8_t *buf, size_t max)
{
	size_t n = next_rand(s) % max, i;

	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)next_rand(s);
	return n;
}

static size_t random_lines(unsigned int *s, uint8_t *buf, size_t max)
{
	size_t len = 0;
	unsigned int lines = 1 + next_rand(s) % 8, l, f;

	for (l = 0; l < lines; l++) {
		unsigned int fields = next_rand(s) % 14;

		for (f = 0; f < fields; f++) {
			const char *w = words[next_rand(s) % (sizeof(words) / sizeof(words[0]))];
			size_t wl = strlen(w);

			if (len + wl + 2 >= max)
				return len;
			if (f)
				buf[len++] = ' ';
			memcpy(buf + len, w, wl);
			len += wl;
		}
		if (len + 1 >= max)
			return len;
		buf[len++] = '\n';
	}
	return len;
}

static size_t mutate(unsigned int *s, uint8_t *buf, size_t max)
{
	const char *seed = seeds[next_rand(s) % (sizeof(seeds) / sizeof(seeds[0]))];
	size_t len = strlen(seed), i;
	unsigned int edits = 1 + next_rand(s) % 4, e;

	memcpy(buf, seed, len);
	for (e = 0; e < edits; e++) {
		size_t at = len ? next_rand(s) % len : 0;

		switch (next_rand(s) % 6) {
		case 0:	/* flip a byte */
			if (len)
				buf[at] = (uint8_t)next_rand(s);
			break;
		case 1:	/* delete a byte */
			if (len) {
				memmove(buf + at, buf + at + 1, len - at - 1);
				len--;
			}
			break;
		case 2:	/* insert a byte */
			if (len + 1 < max) {
				memmove(buf + at + 1, buf + at, len - at);
				buf[at] = (uint8_t)"0 :\n#9a\0"[next_rand(s) % 8];
				len++;
			}
			break;
		case 3:	/* cut the end */
			len = at;
			break;
		case 4:	/* repeat a tail */
			i = len - at;
			if (len + i < max) {
				memcpy(buf + len, buf + at, i);
				len += i;
			}
			break;
		default: /* a digit run becomes huge */
			if (len + 20 < max) {
				memmove(buf + at + 20, buf + at, len - at);
				memset(buf + at, '9', 20);
				len += 20;
			}
			break;
		}
	}
	return len;
}

int main(void)
{
	static uint8_t buf[8192];
	const char *env = getenv("CTL_FUZZ_ROUNDS");
	unsigned int rounds = env ? (unsigned int)atoi(env) : 20000;
	unsigned int s = 42, i, bad, parsed;
	size_t k;

	alarm(300);
	bad = 0;
	for (k = 0; k < sizeof(seeds) / sizeof(seeds[0]); k++) {
		parsed = 0;
		if (ctl_fuzz_one((const uint8_t *)seeds[k], strlen(seeds[k]), &parsed) ||
		    parsed != 1)
			bad++;
	}
	ok(!bad, "each seed file parses as exactly its kind");

	bad = 0;
	for (i = 0; i < rounds; i++) {
		size_t n = random_bytes(&s, buf, sizeof(buf));

		if (ctl_fuzz_one(buf, n, NULL) && !bad++)
			diag("random bytes input %u broke a promise", i);
	}
	ok(!bad, "%u inputs of random bytes: no crash, every refusal names a line", rounds);

	bad = 0;
	parsed = 0;
	for (i = 0; i < rounds; i++) {
		size_t n = random_lines(&s, buf, sizeof(buf));

		if (ctl_fuzz_one(buf, n, &parsed) && !bad++)
			diag("random lines input %u broke a promise", i);
	}
	ok(!bad, "%u inputs of random fields: no crash, every refusal names a line (%u parsed)",
	   rounds, parsed);

	bad = 0;
	parsed = 0;
	for (i = 0; i < rounds * 2; i++) {
		size_t n = mutate(&s, buf, sizeof(buf));

		if (ctl_fuzz_one(buf, n, &parsed) && !bad++)
			diag("mutated input %u broke a promise", i);
	}
	ok(!bad, "%u mutated valid files: no crash, every refusal names a line (%u parsed)",
	   rounds * 2, parsed);
	return tap_done();
}
