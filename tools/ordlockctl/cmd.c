// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: what every subcommand shares, so that its file holds only
 * what is its own: the option loop (its own options and the common ones),
 * and the end of a listing (JSON, a table, or "no ...").
 */
#include <string.h>
#include <unistd.h>

#include "ordlockctl.h"

/* Room for the common long options and any subcommand's own */
#define OLC_LONGOPTS_MAX	48

int olc_domain_opt(const struct olc_cmd *cmd, const char *arg,
		   const char **domain)
{
	if (olc_domain_check(arg))
		return olc_usage(cmd, "\"%s\" is not a domain name", arg);
	*domain = arg;
	return -1;
}

int olc_common_opt(const struct olc_cmd *cmd, int c, const char *arg)
{
	switch (c) {
	case 'j':
		olc_opt.json = 1;
		return -1;
	case 'p':
		olc_opt.pretty = 1;
		return -1;
	case 'n':
		olc_opt.numeric = 1;
		return -1;
	case 'v':
		olc_opt.verbose = 1;
		return -1;
	case 'S':
		if (!strcmp(arg, "debugfs"))
			olc_opt.source = OLC_SRC_DEBUGFS;
		else if (!strcmp(arg, "netlink"))
			olc_opt.source = OLC_SRC_NETLINK;
		else if (!strcmp(arg, "auto"))
			olc_opt.source = OLC_SRC_AUTO;
		else
			return olc_usage(cmd, "--source: \"%s\" is not debugfs, netlink or auto",
					 arg);
		return -1;
	case OLC_OPT_COLOR:
		if (strcmp(arg, "auto") && strcmp(arg, "always") && strcmp(arg, "never"))
			return olc_usage(cmd, "--color: \"%s\" is not auto, always or never",
					 arg);
		olc_opt.color = arg;
		return -1;
	case 'h':
		if (cmd)
			olc_help(cmd, stdout);
		else
			olc_main_help(stdout);
		return OLC_EXIT_OK;
	default:
		/* getopt said why */
		if (cmd)
			fprintf(stderr, "Try 'ordlockctl %s --help'.\n", cmd->name);
		else
			fputs("Try 'ordlockctl --help'.\n", stderr);
		return OLC_EXIT_USAGE;
	}
}

/* -d and -f, when @cmd takes them, into the struct olc_args of @args */
static int olc_shared_opt(const struct olc_cmd *cmd, int c, const char *arg,
			  void *args)
{
	struct olc_args *a = args;

	if (c == 'd' && (cmd->flags & OLC_CMD_DOMAIN))
		return olc_domain_opt(cmd, arg, &a->domain);
	if (c == 'f' && (cmd->flags & OLC_CMD_FILE)) {
		a->file = arg;
		return -1;
	}
	return -2;
}

static int olc_own_opt(const struct olc_cmd *cmd, int c)
{
	const struct option *o;

	if (c > 0 && c < 0x100 && c != ':' && cmd->shortopts &&
	    strchr(cmd->shortopts, c))
		return 1;
	for (o = cmd->longopts; o && o->name; o++)
		if (o->val == c)
			return 1;
	return 0;
}

int olc_getopt(const struct olc_cmd *cmd, int argc, char **argv, void *args)
{
	static const struct option common[] = { OLC_COMMON_LONG };
	static const struct option domain = { "domain", required_argument, NULL, 'd' };
	static const struct option file = { "file", required_argument, NULL, 'f' };
	struct option longopts[OLC_LONGOPTS_MAX];
	const struct option *o;
	char shortopts[64];
	size_t n = 0, i;
	int own = cmd->flags & OLC_CMD_OWN, c, ret;

	for (i = 0; !own && i < ARRAY_SIZE(common); i++)
		longopts[n++] = common[i];
	if (cmd->flags & OLC_CMD_DOMAIN)
		longopts[n++] = domain;
	if (cmd->flags & OLC_CMD_FILE)
		longopts[n++] = file;
	for (o = cmd->longopts; o && o->name && n < OLC_LONGOPTS_MAX - 1; o++)
		longopts[n++] = *o;
	memset(&longopts[n], 0, sizeof(longopts[n]));
	snprintf(shortopts, sizeof(shortopts), "%s%s%s%s%s",
		 cmd->flags & OLC_CMD_ARGS ? "+" : "", own ? "" : OLC_COMMON_SHORT,
		 cmd->flags & OLC_CMD_DOMAIN ? "d:" : "",
		 cmd->flags & OLC_CMD_FILE ? "f:" : "",
		 cmd->shortopts ? cmd->shortopts : "");
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = olc_shared_opt(cmd, c, optarg, args);
		if (ret == -2)
			ret = olc_own_opt(cmd, c) ? cmd->opt(cmd, c, optarg, args) :
						    olc_common_opt(cmd, c, optarg);
		if (ret >= 0)
			return ret;
	}
	olc_color_init(olc_opt.color);
	if (!(cmd->flags & OLC_CMD_ARGS) && optind < argc)
		return olc_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	return -1;
}

const char *olc_in_domain(const char *domain)
{
	static char buf[ORDLOCK_DOMAIN_NAME_MAX + 16];

	if (!domain)
		return "";
	snprintf(buf, sizeof(buf), " in domain \"%s\"", domain);
	return buf;
}

void olc_list_end(struct olc_json *j, struct olc_table *t, const char *what,
		  const char *domain)
{
	if (olc_view_filtered)
		olc_err("showing only the owners of uid %u: the others' need root or CAP_NET_ADMIN",
			(unsigned int)geteuid());
	if (j) {
		olc_json_arr_end(j);
		if (olc_view_filtered) {
			olc_json_bool(j, "filtered", 1);
			olc_json_int(j, "filtered_uid", (long long)geteuid());
		}
		olc_json_obj_end(j);
		olc_json_end(j);
	} else if (!olc_table_rows(t)) {
		printf("no %s%s\n", what, olc_in_domain(domain));
		olc_table_free(t);
	} else {
		olc_table_print(t, stdout);
	}
}
