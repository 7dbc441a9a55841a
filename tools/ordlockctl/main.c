// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: command-line tool of ordlock.
 *
 *   ordlockctl [OPTIONS] COMMAND [ARGS]...
 *
 * The subcommands are registered in olc_cmds[]; each lives in its own file.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ordlockctl.h"

#define OLC_VERSION "0.1.0"

struct olc_opts olc_opt;

static const struct olc_cmd *const olc_cmds[] = {
	&olc_cmd_cycles,
	&olc_cmd_locks,
	&olc_cmd_owners,
	&olc_cmd_graph,
	&olc_cmd_stats,
	&olc_cmd_monitor,
	&olc_cmd_exec,
	&olc_cmd_domain,
	&olc_cmd_check_token,
};

#define OLC_NCMDS ARRAY_SIZE(olc_cmds)

void olc_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("ordlockctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int olc_usage(const struct olc_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "ordlockctl%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ordlockctl %s%s--help'.\n", cmd ? cmd->name : "",
		cmd ? " " : "");
	return OLC_EXIT_USAGE;
}

static const char olc_common_help[] =
	"Common options (also before COMMAND):\n"
	"  -j, --json           one JSON document (monitor: one per line)\n"
	"  -p, --pretty         indent the JSON\n"
	"  -n, --numeric        write keys RANK:ID, not NAME:ID\n"
	"  -S, --source=SRC     debugfs or netlink (default: debugfs when readable)\n"
	"      --color=WHEN     auto (default: on a terminal), always, never\n"
	"  -v, --verbose        say where the data came from\n"
	"  -h, --help           this help\n";

void olc_help(const struct olc_cmd *cmd, FILE *f)
{
	const char *p = cmd->usage, *nl;
	int first = 1;

	/* one "Usage:" line per synopsis line */
	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		fprintf(f, "%s ordlockctl %.*s\n", first ? "Usage:" : "      ",
			(int)(nl - p), p);
		first = 0;
		p = *nl ? nl + 1 : nl;
	}
	fprintf(f, "%s\n\n%s\n%s", cmd->summary, cmd->help, olc_common_help);
}

void olc_main_help(FILE *f)
{
	unsigned int i;

	fputs("Usage: ordlockctl [OPTIONS] COMMAND [ARGS]...\n"
	      "Inspect ordlock's locks and wait-for graph; run commands under ordlock keys.\n"
	      "\nCommands:\n", f);
	for (i = 0; i < OLC_NCMDS; i++)
		fprintf(f, "  %-8s %s\n", olc_cmds[i]->name, olc_cmds[i]->summary);
	fprintf(f, "  %-8s %s\n", "help", "this help, or a command's: help COMMAND");
	fputs("\n", f);
	fputs(olc_common_help, f);
	fputs("  -V, --version        print the version\n"
	      "\nKeys are written RANK:ID or NAME:ID (a rank name of the domain).\n"
	      "Exit status: 0 success, 2 usage error or failure; cycles: 1 when there are\n"
	      "cycles; exec: the command's status, 1 (or -E) when the keys are not free.\n"
	      "See ordlockctl(8).\n", f);
}

static const struct olc_cmd *olc_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < OLC_NCMDS; i++)
		if (!strcmp(olc_cmds[i]->name, name))
			return olc_cmds[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		OLC_COMMON_LONG,
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct olc_cmd *cmd;
	static char prog[64];
	int c, ret;

	olc_opt.color = "auto";
	while ((c = getopt_long(argc, argv, "+" OLC_COMMON_SHORT "V", longopts,
				NULL)) != -1) {
		if (c == 'V') {
			printf("ordlockctl %s\n", OLC_VERSION);
			return OLC_EXIT_OK;
		}
		ret = olc_common_opt(NULL, c, optarg);
		if (ret >= 0)
			return ret;
	}
	olc_color_init(olc_opt.color);
	if (optind >= argc) {
		olc_main_help(stderr);
		return OLC_EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "help")) {
		if (optind + 1 >= argc) {
			olc_main_help(stdout);
			return OLC_EXIT_OK;
		}
		cmd = olc_find(argv[optind + 1]);
		if (!cmd)
			return olc_usage(NULL, "no command \"%s\"", argv[optind + 1]);
		olc_help(cmd, stdout);
		return OLC_EXIT_OK;
	}
	cmd = olc_find(argv[optind]);
	if (!cmd)
		return olc_usage(NULL, "no command \"%s\"", argv[optind]);
	argc -= optind;
	argv += optind;
	/* getopt's messages start with argv[0]: "ordlockctl cycles: ..." */
	snprintf(prog, sizeof(prog), "ordlockctl %s", cmd->name);
	argv[0] = prog;
	/* the subcommand parses its options from argv[1] on */
	optind = 0;
	ret = cmd->run(cmd, argc, argv);
	if (fflush(stdout) || ferror(stdout)) {
		olc_err("error writing the output");
		return OLC_EXIT_ERROR;
	}
	return ret;
}
