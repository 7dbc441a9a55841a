// SPDX-License-Identifier: GPL-2.0
/*
 * Keys of a request: validation, sorting and merging of duplicates.
 */
#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "keys.h"

/**
 * ordlock_keys_import() - validate user keys and convert them
 * @out: array of @n kernel keys
 * @in: array of @n keys as copied from user space
 * @n: number of keys
 * @mode_required: a mode of 0 is invalid (acquire) or means "any" (release)
 * @bad: set to the index of the first invalid key on failure
 *
 * Return: 0, or -EINVAL when a key has a non-zero reserved field or an
 * invalid mode.
 */
int ordlock_keys_import(struct ordlock_rkey *out, const struct ordlock_key *in,
			unsigned int n, bool mode_required, unsigned int *bad)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		u32 mode = in[i].mode;

		if (in[i].__reserved ||
		    (!ordlock_mode_valid(mode) && (mode_required || mode))) {
			*bad = i;
			return -EINVAL;
		}
		out[i].id = in[i].id;
		out[i].rank = in[i].rank;
		out[i].mode = mode;
		out[i].index = i;
	}
	return 0;
}

static int ordlock_rkey_sort_cmp(const void *a, const void *b)
{
	const struct ordlock_rkey *ka = a, *kb = b;
	int c = ordlock_rkey_cmp(ka, kb);

	if (c)
		return c;
	/* Equal keys keep the caller's order, so merging keeps the first index */
	return ka->index < kb->index ? -1 : ka->index > kb->index;
}

/**
 * ordlock_keys_sort_merge() - sort keys in ascending order, merge duplicates
 * @keys: the keys, as imported by ordlock_keys_import()
 * @n: number of keys
 *
 * Duplicates become one key in the stronger of their modes, with the index
 * of the first of them in the caller's array.
 *
 * Return: the number of distinct keys, now at the front of @keys.
 */
unsigned int ordlock_keys_sort_merge(struct ordlock_rkey *keys, unsigned int n)
{
	unsigned int i, out;

	if (n < 2)
		return n;
	/* Callers usually pass their keys in order: check before sorting */
	for (i = 1; i < n; i++)
		if (ordlock_rkey_cmp(&keys[i - 1], &keys[i]) >= 0)
			break;
	if (i == n)
		return n;
	sort(keys, n, sizeof(*keys), ordlock_rkey_sort_cmp, NULL);
	for (out = 0, i = 1; i < n; i++) {
		if (!ordlock_rkey_cmp(&keys[out], &keys[i])) {
			if (keys[i].mode > keys[out].mode)
				keys[out].mode = keys[i].mode;
			continue;
		}
		keys[++out] = keys[i];
	}
	return out + 1;
}

/**
 * ordlock_domain_name_valid() - check a domain name
 * @name: a buffer of ORDLOCK_DOMAIN_NAME_MAX bytes
 *
 * Return: 0 when @name holds 1 to ORDLOCK_DOMAIN_NAME_MAX - 1 characters of
 * [A-Za-z0-9._-] followed by zero bytes only, else -EINVAL.
 */
int ordlock_domain_name_valid(const char *name)
{
	size_t len = strnlen(name, ORDLOCK_DOMAIN_NAME_MAX);
	size_t i;

	if (!len || len == ORDLOCK_DOMAIN_NAME_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!isalnum(c) && c != '.' && c != '_' && c != '-')
			return -EINVAL;
	}
	for (; i < ORDLOCK_DOMAIN_NAME_MAX; i++)
		if (name[i])
			return -EINVAL;
	return 0;
}

/**
 * ordlock_comm_sanitize() - a command name fit for a whitespace-separated
 * text line
 * @dst: ORDLOCK_COMM_LEN bytes
 * @src: a command name, not necessarily NUL-terminated within
 *	ORDLOCK_COMM_LEN bytes
 *
 * Characters other than printable non-space ASCII become '?'; an empty
 * name becomes "?".
 */
void ordlock_comm_sanitize(char *dst, const char *src)
{
	size_t i;

	for (i = 0; i < ORDLOCK_COMM_LEN - 1 && src[i]; i++)
		dst[i] = (src[i] > ' ' && src[i] <= '~') ? src[i] : '?';
	if (!i)
		dst[i++] = '?';
	dst[i] = '\0';
}

static bool ordlock_name_char(char c)
{
	return isalnum(c) || c == '.' || c == '_' || c == '-';
}

/**
 * ordlock_domain_name_check() - check a NUL-terminated domain name
 * @name: the name
 *
 * Return: 0 for 1 to ORDLOCK_DOMAIN_NAME_MAX - 1 characters of
 * [A-Za-z0-9._-], else -EINVAL.
 */
int ordlock_domain_name_check(const char *name)
{
	size_t len = strnlen(name, ORDLOCK_DOMAIN_NAME_MAX), i;

	if (!len || len == ORDLOCK_DOMAIN_NAME_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!ordlock_name_char(name[i]))
			return -EINVAL;
	return 0;
}

/**
 * ordlock_rank_name_check() - check a NUL-terminated rank name
 * @name: the name
 *
 * Return: 0 for 1 to ORDLOCK_RANK_NAME_MAX - 1 characters of
 * [A-Za-z0-9._-] starting with a letter (so that "NAME:ID" never reads
 * as "RANK:ID"), else -EINVAL.
 */
int ordlock_rank_name_check(const char *name)
{
	size_t len = strnlen(name, ORDLOCK_RANK_NAME_MAX), i;

	if (!len || len == ORDLOCK_RANK_NAME_MAX || !isalpha(name[0]))
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!ordlock_name_char(name[i]))
			return -EINVAL;
	return 0;
}

const char *ordlock_mode_str(u32 mode)
{
	return mode == ORDLOCK_MODE_EXCLUSIVE ? "exclusive" :
	       mode == ORDLOCK_MODE_SHARED ? "shared" : "none";
}
