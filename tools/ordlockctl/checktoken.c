// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl check-token: is a fencing token still the live grant of a
 * key? For scripts that guard a write (storage that fences): exit 0 when
 * it is, 1 when it is stale (ESTALE), else ordlockctl's own sysexits
 * status (olc_exit_errno()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libordlock.h"
#include "ordlockctl.h"

static int olc_check_token_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	const struct olc_rank_names *names = NULL;
	struct olc_nl_domain info;
	struct olc_args a = { 0 };
	const char *domain;
	struct ordlock *ol;
	struct olc_json j;
	char why[128];
	uint64_t id, token;
	uint32_t rank;
	int ret;

	ret = olc_getopt(cmd, argc, argv, &a);
	if (ret >= 0)
		return ret;
	if (argc - optind != 2)
		return olc_usage(cmd, "expected KEY TOKEN");
	domain = a.domain ? a.domain : ORDLOCK_DEFAULT_DOMAIN;
	if (olc_parse_u64(argv[optind + 1], &token))
		return olc_usage(cmd, "\"%s\" is not a token (a number)", argv[optind + 1]);
	/* a usage error before the module or the domain is asked */
	if (olc_key_syntax(argv[optind], why, sizeof(why)))
		return olc_usage(cmd, "%s", why);
	if (olc_key_uses_name(argv[optind])) {
		struct olc_nl *nl = olc_netlink(0);

		ret = nl ? olc_nl_domain_get(nl, domain, &info) : -ENOENT;
		if (ret) {
			olc_err("cannot read the rank names of domain %s", domain);
			if (!nl && olc_module_missing())
				return OLC_EXIT_UNAVAILABLE;
			return olc_exit_errno(ret);
		}
		names = &info.names;
	}
	if (olc_key_parse(argv[optind], names, &rank, &id, why, sizeof(why)))
		return olc_usage(cmd, "%s", why);
	ol = ordlock_open(NULL);
	if (!ol) {
		ret = -errno;
		if (ret == -ENOENT && olc_module_missing())
			olc_err("%s", olc_module_missing());
		else
			olc_err("cannot open %s: %s", ORDLOCK_DEVICE, strerror(-ret));
		return olc_exit_errno(ret);
	}
	ret = ordlock_token_check(ol, domain, rank, id, token);
	ordlock_close(ol);
	if (ret && ret != -ESTALE) {
		olc_err("check-token: %s", strerror(-ret));
		return olc_exit_errno(ret);
	}
	if (olc_opt.json) {
		olc_json_init(&j, stdout, olc_opt.pretty);
		olc_json_obj(&j, NULL);
		olc_json_str(&j, "domain", domain);
		olc_json_key(&j, domain, rank, id);
		olc_json_u64(&j, "token", token);
		olc_json_str(&j, "state", ret ? "stale" : "live");
		olc_json_obj_end(&j);
		olc_json_end(&j);
	} else {
		printf("%s %u:%llu token %llu: %s\n", domain, rank,
		       (unsigned long long)id, (unsigned long long)token,
		       ret ? "stale" : "live");
	}
	return ret ? OLC_EXIT_FOUND : OLC_EXIT_OK;
}

static const struct olc_option olc_check_token_options[] = {
	OLC_OPTION_DOMAIN("the key's domain (default \"default\")"),
	{ 0 },
};

const struct olc_cmd olc_cmd_check_token = {
	.name = "check-token",
	.run = olc_check_token_run,
	.flags = OLC_CMD_ARGS | OLC_CMD_DOMAIN,
	.summary = "tell whether a fencing token is the live grant of a key",
	.usage = "check-token [-d DOMAIN] [-j] KEY TOKEN",
	.options = olc_check_token_options,
	.about =
	"KEY is RANK:ID (or NAME:ID with the domain's rank names). Answers \"live\"\n"
	"when an owner holds KEY under TOKEN now, \"stale\" when not (the key was\n"
	"released, revoked with its lease, or granted again under a higher token).\n"
	"The answer holds nothing: storage that fences writes also keeps the\n"
	"highest token it accepted.\n",
	.help =
	"Exit status: 0 live, 1 stale; ordlockctl's own failures as in\n"
	"\"ordlockctl help\" (64 usage, 69 no module or device, 77 permission\n"
	"denied, ...).\n"
	"\n"
	"JSON: {\"domain\", \"key\", \"rank\", \"id\", \"token\", \"state\": \"live\"|\"stale\"}.\n",
};
