// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl locks: every holder and queued waiter of every resource.
 */
#include <stdlib.h>
#include <string.h>

#include "ordlockctl.h"

static int olc_lock_cmp(const void *a, const void *b)
{
	const struct olc_lock *x = a, *y = b;
	int c = strcmp(x->domain, y->domain);

	if (c)
		return c;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	/* holders first, then the queue */
	if ((x->role == ORDLOCK_ROLE_HOLDER) != (y->role == ORDLOCK_ROLE_HOLDER))
		return x->role == ORDLOCK_ROLE_HOLDER ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static const struct olc_option olc_locks_options[] = {
	OLC_OPTION_DOMAIN("only this domain"),
	OLC_OPTIONS_TABLE("only the rows of the owners of process PID"),
	{ 0 },
};

static const char *const olc_locks_headers[] = {
	"DOMAIN", "KEY", "ROLE", "POS", "OWNER", "PID", "COMM", "MODE",
	"TOKEN", "WAITED", "LEASE", NULL,
};

static int olc_locks_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	const char *const *headers = olc_locks_headers;
	struct olc_locks locks = { 0 };
	struct olc_args a = { 0 };
	const char *domain, *source = NULL;
	struct olc_table *t;
	struct olc_json j;
	char buf[32];
	size_t i;
	int ret;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	domain = a.domain;
	ret = olc_load_locks(&locks, &source);
	if (ret)
		return olc_exit_errno(ret);
	qsort(locks.v, locks.n, sizeof(*locks.v), olc_lock_cmp);

	if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_json_obj(&j, NULL);
		olc_json_str(&j, "source", source);
		olc_json_arr(&j, "locks");
		for (i = 0; i < locks.n; i++) {
			const struct olc_lock *l = &locks.v[i];
			int holder = l->role == ORDLOCK_ROLE_HOLDER;

			if (domain && strcmp(l->domain, domain))
				continue;
			if (a.have_pid && l->owner.pid != a.pid)
				continue;
			olc_json_obj(&j, NULL);
			olc_json_str(&j, "domain", l->domain);
			olc_json_key(&j, l->domain, l->rank, l->id);
			olc_json_str(&j, "role", olc_role_str(l->role));
			olc_json_u64(&j, "position", l->pos);
			olc_json_u64(&j, "owner_id", l->owner.id);
			olc_json_u64(&j, "pid", l->owner.pid);
			olc_json_str(&j, "comm", l->owner.comm);
			olc_json_str(&j, "mode", olc_mode_str(l->mode));
			if (holder)
				olc_json_u64(&j, "token", l->value);
			else
				olc_json_null(&j, "token");
			if (holder)
				olc_json_null(&j, "waited_us");
			else
				olc_json_u64(&j, "waited_us", l->value);
			if (l->has_lease)
				olc_json_u64(&j, "lease_left_ms", l->lease_left_ms);
			else
				olc_json_null(&j, "lease_left_ms");
			olc_json_obj_end(&j);
		}
		olc_list_end(&j, NULL, NULL, NULL);
		olc_locks_free(&locks);
		return OLC_EXIT_OK;
	}

	t = olc_table_new(11, headers, "llllrrllrrr");
	for (i = 0; i < locks.n; i++) {
		const struct olc_lock *l = &locks.v[i];
		int holder = l->role == ORDLOCK_ROLE_HOLDER;

		if (domain && strcmp(l->domain, domain))
			continue;
		if (a.have_pid && l->owner.pid != a.pid)
			continue;
		olc_table_cell(t, OLC_RESET, "%s", l->domain);
		olc_table_cell(t, OLC_BOLD, "%s", olc_key(l->domain, l->rank, l->id));
		olc_table_cell(t, holder ? OLC_GREEN : OLC_YELLOW, "%s",
			       olc_role_str(l->role));
		olc_table_cell(t, OLC_RESET, "%u", l->pos);
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)l->owner.id);
		olc_table_cell(t, OLC_RESET, "%u", l->owner.pid);
		olc_table_cell(t, OLC_RESET, "%s", l->owner.comm);
		olc_table_cell(t, OLC_RESET, "%s", olc_mode_str(l->mode));
		if (holder) {
			olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)l->value);
			olc_table_cell(t, OLC_RESET, "-");
		} else {
			olc_table_cell(t, OLC_RESET, "-");
			olc_table_cell(t, OLC_RESET, "%s",
				       olc_us_str(buf, sizeof(buf), l->value));
		}
		if (l->has_lease)
			olc_table_cell(t, OLC_RESET, "%llums",
				       (unsigned long long)l->lease_left_ms);
		else
			olc_table_cell(t, OLC_RESET, "-");
	}
	olc_list_end(NULL, t, a.have_pid ? "locks held or waited for by that pid" :
			 "locks held or waited for", domain);
	olc_locks_free(&locks);
	return OLC_EXIT_OK;
}

const struct olc_cmd olc_cmd_locks = {
	.name = "locks",
	.run = olc_locks_run,
	.flags = OLC_CMD_DOMAIN | OLC_CMD_TABLE,
	.columns = olc_locks_headers,
	.summary = "list the holders and queued waiters of every key",
	.usage = "locks [-d DOMAIN] [-p PID] [-o LIST] [-n] [-r] [-j]",
	.options = olc_locks_options,
	.about =
	"One row per holder and per queued waiter (FIFO position POS) of every key;\n"
	"TOKEN is a holder's fencing token, WAITED how long a waiter has waited,\n"
	"LEASE what is left of a holder's lease before the kernel revokes it.\n",
	.help =
	"JSON: {\"source\", \"locks\": [{\"domain\", \"key\", \"rank\", \"id\", \"role\"\n"
	"(holder|waiter|converter), \"position\", \"owner_id\", \"pid\", \"comm\", \"mode\",\n"
	"\"token\" (null for waiters), \"waited_us\" (null for holders),\n"
	"\"lease_left_ms\" (null without a lease)}]}.\n",
};
