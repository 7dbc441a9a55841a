// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl owners: every owner (open /dev/ordlock or netlink socket),
 * what it holds and what it waits for.
 */
#include <stdlib.h>
#include <string.h>

#include "ordlockctl.h"

static int olc_owner_cmp(const void *a, const void *b)
{
	const struct olc_owner *x = a, *y = b;

	return x->who.id < y->who.id ? -1 : x->who.id > y->who.id;
}

struct olc_owners_args {
	struct olc_args base;
	int waiting;
};

static const struct olc_option olc_owners_options[] = {
	OLC_OPTION_DOMAIN("only this domain"),
	{ 'w', "waiting", NULL, "only owners that wait" },
	OLC_OPTIONS_TABLE("only the owners of process PID\n"
			  "(of an ordlockctl exec: of its command too)"),
	{ 0 },
};

/* -w */
static int olc_owners_opt(const struct olc_cmd *cmd, int c, const char *arg,
			  void *args)
{
	(void)cmd;
	(void)c;
	(void)arg;
	((struct olc_owners_args *)args)->waiting = 1;
	return -1;
}

static const char *const olc_owners_headers[] = {
	"OWNER", "PID", "COMM", "DOMAIN", "KIND", "HELD", "WAITS FOR", "WAITED",
	"LABEL", NULL,
};

static int olc_owners_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	const char *const *headers = olc_owners_headers;
	struct olc_owners owners = { 0 };
	struct olc_owners_args a = { 0 };
	const char *source = NULL;
	struct olc_table *t;
	struct olc_json j;
	char buf[32];
	size_t i;
	int ret;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	ret = olc_load_owners(&owners, &source);
	if (ret)
		return olc_exit_errno(ret);
	/* a domain named by mistake is an error, not an empty table */
	for (i = 0; a.base.domain && i < owners.n; i++)
		if (!strcmp(owners.v[i].domain, a.base.domain))
			break;
	if (a.base.domain && i == owners.n) {
		ret = olc_domain_known(a.base.domain);
		if (ret) {
			olc_owners_free(&owners);
			return olc_exit_errno(ret);
		}
	}
	qsort(owners.v, owners.n, sizeof(*owners.v), olc_owner_cmp);

	if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_json_obj(&j, NULL);
		olc_json_str(&j, "source", source);
		olc_json_arr(&j, "owners");
	}
	t = olc_opt.json ? NULL : olc_table_new(9, headers, "rrlllrlrl");
	for (i = 0; i < owners.n; i++) {
		const struct olc_owner *o = &owners.v[i];

		if (a.base.domain && strcmp(o->domain, a.base.domain))
			continue;
		if (a.waiting && !o->wmode)
			continue;
		if (a.base.have_pid && !olc_pid_match(a.base.pid, o->who.pid))
			continue;
		if (olc_opt.json) {
			olc_json_obj(&j, NULL);
			olc_json_u64(&j, "owner_id", o->who.id);
			olc_json_u64(&j, "pid", o->who.pid);
			olc_json_str(&j, "comm", o->who.comm);
			olc_json_bool(&j, "pid_exited", olc_pid_exited(o->who.pid));
			olc_json_str(&j, "domain", o->domain);
			olc_json_str(&j, "kind", olc_kind_str(o->kind));
			olc_json_u64(&j, "held", o->held);
			olc_json_str(&j, "label", o->label);
			if (o->wmode) {
				olc_json_obj(&j, "waiting");
				olc_json_str(&j, "mode", olc_mode_str(o->wmode));
				olc_json_key(&j, o->domain, o->wrank, o->wid);
				olc_json_u64(&j, "waited_us", o->waited_us);
				olc_json_obj_end(&j);
			} else {
				olc_json_null(&j, "waiting");
			}
			olc_json_obj_end(&j);
			continue;
		}
		olc_table_cell(t, OLC_RESET, "%llu", (unsigned long long)o->who.id);
		olc_table_cell(t, OLC_RESET, "%u", o->who.pid);
		olc_table_cell(t, OLC_RESET, "%s", olc_comm_shown(o->who.pid, o->who.comm));
		olc_table_cell(t, OLC_RESET, "%s", o->domain);
		olc_table_cell(t, OLC_RESET, "%s", olc_kind_str(o->kind));
		olc_table_cell(t, OLC_RESET, "%u", o->held);
		if (o->wmode) {
			olc_table_cell(t, OLC_YELLOW, "%s%s%s", olc_mode_str(o->wmode), olc_cell_sep(),
				       olc_key(o->domain, o->wrank, o->wid));
			olc_table_cell(t, OLC_RESET, "%s",
				       olc_us_cell(buf, sizeof(buf), o->waited_us));
		} else {
			olc_table_cell(t, OLC_RESET, "-");
			olc_table_cell(t, OLC_RESET, "-");
		}
		olc_table_cell(t, OLC_RESET, "%s", o->label[0] ? o->label : "-");
	}
	olc_list_end(olc_opt.json ? &j : NULL, t,
		     a.waiting ? "owners waiting" : "owners", a.base.domain);
	olc_owners_free(&owners);
	return OLC_EXIT_OK;
}

const struct olc_cmd olc_cmd_owners = {
	.name = "owners",
	.run = olc_owners_run,
	.flags = OLC_CMD_DOMAIN | OLC_CMD_TABLE,
	.columns = olc_owners_headers,
	.options = olc_owners_options,
	.opt = olc_owners_opt,
	.summary = "list the owners: what each holds and waits for",
	.usage = "owners [-d DOMAIN] [-w] [-p PID] [-o LIST] [-n] [-r] [-j]",
	.about =
	"One row per owner: an open file description of /dev/ordlock (kind device) or\n"
	"a generic netlink socket (kind netlink). PID and COMM are those of the last\n"
	"task that made a request through it. WAITS FOR is the key it waits for, also\n"
	"in a cluster domain a key granted on this node whose lock it waits for in the\n"
	"cluster (ordlockctl locks and blockers tell which node holds it).\n",
	.help =
	"JSON: {\"source\", \"owners\": [{\"owner_id\", \"pid\", \"comm\", \"pid_exited\", \"domain\",\n"
	"\"kind\", \"label\",\n"
	"\"held\", \"waiting\": null or {\"mode\", \"key\", \"rank\", \"id\", \"waited_us\"}}]}.\n",
};
