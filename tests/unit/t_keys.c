// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side unit tests of the pure logic of the module (kmod/keys.c):
 * key order, validation of user keys, sort and merge, domain names.
 */
#include "kshim.h"
#include "../../kmod/keys.c"

#include <stdio.h>
#include <stdlib.h>

#include "tap.h"

static void test_order(void)
{
	ok(ordlock_key_cmp(1, 99, 2, 0) < 0, "rank sorts before id");
	ok(ordlock_key_cmp(2, 0, 1, 99) > 0, "higher rank sorts after any id of a lower rank");
	ok(ordlock_key_cmp(1, 1, 1, 2) < 0, "same rank: lower id first");
	ok(ordlock_key_cmp(3, 7, 3, 7) == 0, "equal keys compare equal");
	ok(ordlock_key_cmp(0, UINT64_MAX, 1, 0) < 0, "id is compared unsigned across the full 64 bits");
	ok(ordlock_key_cmp(UINT32_MAX, 0, 0, UINT64_MAX) > 0, "rank is compared unsigned");
	ok(ordlock_key_cmp(1, 1ULL << 63, 1, 1) > 0, "ids above 2^63 sort high");
	ok(ordlock_modes_conflict(ORDLOCK_MODE_SHARED, ORDLOCK_MODE_EXCLUSIVE) &&
	   ordlock_modes_conflict(ORDLOCK_MODE_EXCLUSIVE, ORDLOCK_MODE_EXCLUSIVE) &&
	   !ordlock_modes_conflict(ORDLOCK_MODE_SHARED, ORDLOCK_MODE_SHARED),
	   "only shared and shared are compatible");
}

static void test_import(void)
{
	struct ordlock_key in[3] = {
		{ .rank = 1, .id = 5, .mode = ORDLOCK_MODE_SHARED },
		{ .rank = 2, .id = 6, .mode = ORDLOCK_MODE_EXCLUSIVE },
		{ .rank = 3, .id = 7, .mode = ORDLOCK_MODE_SHARED },
	};
	struct ordlock_rkey out[3];
	unsigned int bad = 99;

	is_int(ordlock_keys_import(out, in, 3, true, &bad), 0, "valid keys import");
	ok(out[1].rank == 2 && out[1].id == 6 && out[1].mode == ORDLOCK_MODE_EXCLUSIVE &&
	   out[1].index == 1, "imported key keeps rank, id, mode and index");

	in[2].__reserved = 1;
	is_int(ordlock_keys_import(out, in, 3, true, &bad), -EINVAL, "reserved field set: EINVAL");
	is_int(bad, 2, "culprit index of the reserved field");
	in[2].__reserved = 0;

	in[1].mode = 0;
	is_int(ordlock_keys_import(out, in, 3, true, &bad), -EINVAL, "mode 0 where required: EINVAL");
	is_int(bad, 1, "culprit index of mode 0");
	is_int(ordlock_keys_import(out, in, 3, false, &bad), 0, "mode 0 accepted where a mode is optional");
	in[1].mode = 3;
	is_int(ordlock_keys_import(out, in, 3, false, &bad), -EINVAL, "mode 3 rejected even where optional");
	in[1].mode = 0xffff;
	is_int(ordlock_keys_import(out, in, 3, true, &bad), -EINVAL, "mode 0xffff rejected");
}

static int ref_find(const struct ordlock_rkey *k, unsigned int n, u32 rank, u64 id)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (k[i].rank == rank && k[i].id == id)
			return (int)i;
	return -1;
}

/* Random arrays with many duplicates, checked against a brute-force model */
static void test_sort_merge_random(void)
{
	enum { N = 64, ROUNDS = 2000 };
	struct ordlock_rkey keys[N], orig[N];
	unsigned int round, bad_rounds = 0;

	srand(12345);
	for (round = 0; round < ROUNDS; round++) {
		unsigned int n = 1 + rand() % N, m, i, j;
		int fail = 0;

		for (i = 0; i < n; i++) {
			keys[i].rank = rand() % 3;
			keys[i].id = (rand() % 2) ? (u64)(rand() % 5) : UINT64_MAX - rand() % 2;
			keys[i].mode = 1 + rand() % 2;
			keys[i].index = i;
		}
		memcpy(orig, keys, sizeof(keys));
		m = ordlock_keys_sort_merge(keys, n);
		for (i = 1; i < m; i++)
			if (ordlock_rkey_cmp(&keys[i - 1], &keys[i]) >= 0)
				fail = 1;
		for (i = 0; i < n; i++) {
			int at = ref_find(keys, m, orig[i].rank, orig[i].id);

			if (at < 0)
				fail = 1;
		}
		for (i = 0; i < m; i++) {
			u32 mode = 0, index = N;

			for (j = 0; j < n; j++) {
				if (orig[j].rank != keys[i].rank || orig[j].id != keys[i].id)
					continue;
				if (orig[j].mode > mode)
					mode = orig[j].mode;
				if (orig[j].index < index)
					index = orig[j].index;
			}
			if (keys[i].mode != mode || keys[i].index != index)
				fail = 1;
		}
		bad_rounds += fail;
	}
	is_int(bad_rounds, 0, "sort/merge: %d random arrays sorted strictly, every key kept once, stronger mode and first index win",
	       ROUNDS);
}

static void test_sort_merge_cases(void)
{
	struct ordlock_rkey k[4] = {
		{ .rank = 2, .id = 20, .mode = ORDLOCK_MODE_SHARED, .index = 0 },
		{ .rank = 1, .id = 10, .mode = ORDLOCK_MODE_SHARED, .index = 1 },
		{ .rank = 2, .id = 20, .mode = ORDLOCK_MODE_EXCLUSIVE, .index = 2 },
		{ .rank = 1, .id = 10, .mode = ORDLOCK_MODE_SHARED, .index = 3 },
	};
	unsigned int m = ordlock_keys_sort_merge(k, 4);

	is_int(m, 2, "webhook order (inventory, order, inventory, order) merges to 2 keys");
	ok(k[0].rank == 1 && k[0].id == 10 && k[0].mode == ORDLOCK_MODE_SHARED && k[0].index == 1,
	   "orders:10 first, shared, first seen at index 1");
	ok(k[1].rank == 2 && k[1].id == 20 && k[1].mode == ORDLOCK_MODE_EXCLUSIVE && k[1].index == 0,
	   "inventories:20 second, exclusive wins, index 0");
	is_int(ordlock_keys_sort_merge(k, 1), 1, "one key stays one key");

	{
		struct ordlock_rkey s[3] = {
			{ .rank = 1, .id = 1, .mode = ORDLOCK_MODE_SHARED, .index = 0 },
			{ .rank = 1, .id = 1, .mode = ORDLOCK_MODE_EXCLUSIVE, .index = 1 },
			{ .rank = 1, .id = 2, .mode = ORDLOCK_MODE_SHARED, .index = 2 },
		};

		is_int(ordlock_keys_sort_merge(s, 3), 2,
		       "sorted input with a duplicate is still merged");
		ok(s[0].mode == ORDLOCK_MODE_EXCLUSIVE && s[1].id == 2,
		   "the merged duplicate is exclusive, then 1:2");
		is_int(ordlock_keys_sort_merge(s, 2), 2,
		       "strictly sorted input is kept as it is");
	}
}

static void name_case(const char *name, int want, const char *what)
{
	char buf[ORDLOCK_DOMAIN_NAME_MAX] = { 0 };

	memcpy(buf, name, strnlen(name, sizeof(buf)));
	is_int(ordlock_domain_name_valid(buf), want, "domain name %s", what);
}

static void test_domain_names(void)
{
	char buf[ORDLOCK_DOMAIN_NAME_MAX];

	name_case("default", 0, "\"default\" is valid");
	name_case("shop.orders-2_b", 0, "with . - _ and digits is valid");
	name_case("", -EINVAL, "empty is invalid");
	name_case("a b", -EINVAL, "with a space is invalid");
	name_case("a/b", -EINVAL, "with a slash is invalid");
	name_case("\xc3\xa9", -EINVAL, "with non-ASCII bytes is invalid");
	memset(buf, 'a', sizeof(buf));
	is_int(ordlock_domain_name_valid(buf), -EINVAL, "domain name without NUL is invalid");
	buf[sizeof(buf) - 1] = 0;
	is_int(ordlock_domain_name_valid(buf), 0, "domain name of 31 characters is valid");
	memset(buf, 0, sizeof(buf));
	buf[0] = 'x';
	buf[5] = 'y';
	is_int(ordlock_domain_name_valid(buf), -EINVAL, "domain name with garbage after the NUL is invalid");
}

int main(void)
{
	test_order();
	test_import();
	test_sort_merge_cases();
	test_sort_merge_random();
	test_domain_names();
	return tap_done();
}
