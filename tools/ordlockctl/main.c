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
	&olc_cmd_blockers,
	&olc_cmd_order,
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
	fprintf(f, "%s\n\n", cmd->summary);
	if (cmd->about)
		fprintf(f, "%s\n", cmd->about);
	if (cmd->options && cmd->options->name) {
		fputs(cmd->flags & OLC_CMD_OWN ? "Options:\n" : "Options of this command:\n", f);
		olc_print_options(cmd->options, f);
	}
	if (cmd->columns) {
		fputs("\nColumns (-o; names as in the header, _ for a space):\n", f);
		olc_print_columns(cmd, f, "  ");
	}
	if (cmd->help)
		fprintf(f, "\n%s", cmd->help);
	if (!(cmd->flags & OLC_CMD_OWN)) {
		fputs("\nCommon options (also before COMMAND):\n", f);
		olc_print_options(olc_common_options, f);
	}
}

static const char olc_exit_help[] =
	"Exit status: 0 success; cycles: 1 cycles found, 3 none seen but the view is\n"
	"filtered; exec: the command's status (126 cannot run it, 127 not found), 1\n"
	"(or -E) when the keys were not obtained. ordlockctl's own failures:\n"
	"  64 usage error                  69 module, device or domain not there\n"
	"  65 bad data: a malformed file,  70 the kernel's answer cannot be read\n"
	"     a request the kernel refuses 71 a system call failed\n"
	"  66 a file cannot be opened      75 a kernel limit, or busy: try later\n"
	"                                  77 permission denied\n";

void olc_main_help(FILE *f)
{
	unsigned int i;

	fputs("Usage: ordlockctl [OPTIONS] COMMAND [ARGS]...\n"
	      "Inspect ordlock's locks and wait-for graph; run commands under ordlock keys.\n"
	      "\nCommands:\n", f);
	for (i = 0; i < OLC_NCMDS; i++)
		fprintf(f, "  %-8s %s\n", olc_cmds[i]->name, olc_cmds[i]->summary);
	fprintf(f, "  %-8s %s\n", "help", "this help, or a command's: help COMMAND");
	fputs("\nCommon options (also before COMMAND; exec takes only -v, --color, -h):\n", f);
	olc_print_options(olc_common_options, f);
	fputs("  -V, --version        print the version\n"
	      "\nKeys are written RANK:ID or NAME:ID (a rank name of the domain).\n", f);
	fputs(olc_exit_help, f);
	fputs("See ordlockctl(8).\n", f);
}

static const struct olc_cmd *olc_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < OLC_NCMDS; i++)
		if (!strcmp(olc_cmds[i]->name, name))
			return olc_cmds[i];
	return NULL;
}

/* "help [--options|--commands] [COMMAND]" */
static int olc_help_cmd(int argc, char **argv)
{
	const struct olc_cmd *cmd;
	unsigned int i;
	int list = 0;

	if (argc > 1 && !strcmp(argv[1], "--commands")) {
		for (i = 0; i < OLC_NCMDS; i++)
			printf("%s\n", olc_cmds[i]->name);
		printf("help\n");
		return OLC_EXIT_OK;
	}
	if (argc > 2 && !strcmp(argv[1], "--columns")) {
		cmd = olc_find(argv[2]);
		if (!cmd)
			return olc_usage(NULL, "no command \"%s\"", argv[2]);
		olc_print_columns(cmd, stdout, "");
		return OLC_EXIT_OK;
	}
	if (argc > 1 && !strcmp(argv[1], "--options")) {
		list = 1;
		argc--;
		argv++;
	}
	if (argc < 2) {
		if (!list) {
			olc_main_help(stdout);
			return OLC_EXIT_OK;
		}
		/* the options of ordlockctl itself */
		for (i = 0; olc_common_options[i].name; i++) {
			const struct olc_option *o = &olc_common_options[i];

			printf("%s%c --%s %s %s\n", o->val < 0x80 ? "-" : "",
			       o->val < 0x80 ? o->val : '-', o->name, o->arg ? o->arg : "-",
			       o->help ? "-" : "alias");
		}
		printf("-V --version - -\n");
		return OLC_EXIT_OK;
	}
	cmd = olc_find(argv[1]);
	if (!cmd)
		return olc_usage(NULL, "no command \"%s\"", argv[1]);
	if (list)
		olc_list_options(cmd, stdout);
	else
		olc_help(cmd, stdout);
	return OLC_EXIT_OK;
}

static int olc_main_opts(int argc, char **argv)
{
	struct option longopts[24];
	char shortopts[40] = "+";
	size_t n = 0, k;
	int c, ret;

	for (k = 0; olc_common_options[k].name && n < ARRAY_SIZE(longopts) - 2; k++) {
		const struct olc_option *o = &olc_common_options[k];

		longopts[n].name = o->name;
		longopts[n].has_arg = o->arg ? required_argument : no_argument;
		longopts[n].flag = NULL;
		longopts[n].val = o->val;
		n++;
		if (o->val < 0x80 && !strchr(shortopts, o->val)) {
			size_t l = strlen(shortopts);

			shortopts[l++] = (char)o->val;
			if (o->arg)
				shortopts[l++] = ':';
			shortopts[l] = '\0';
		}
	}
	longopts[n++] = (struct option){ "version", no_argument, NULL, 'V' };
	memset(&longopts[n], 0, sizeof(longopts[n]));
	strcat(shortopts, "V");
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'V') {
			printf("ordlockctl %s\n", OLC_VERSION);
			return OLC_EXIT_OK;
		}
		ret = olc_common_opt(NULL, c, optarg);
		if (ret >= 0)
			return ret;
	}
	return -1;
}

static int olc_main(int argc, char **argv)
{
	const struct olc_cmd *cmd;
	static char prog[64];
	int ret;

	olc_opt.color = "auto";
	ret = olc_main_opts(argc, argv);
	if (ret >= 0)
		return ret;
	olc_color_init(olc_opt.color);
	if (optind >= argc) {
		olc_main_help(stderr);
		return OLC_EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "help"))
		return olc_help_cmd(argc - optind, argv + optind);
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
	return cmd->run(cmd, argc, argv);
}

int main(int argc, char **argv)
{
	int ret = olc_main(argc, argv);

	/* every output a script reads (help --columns, --version too): a write
	 * that failed (a full disk, a closed pipe) is not a success */
	if (fflush(stdout) || ferror(stdout)) {
		olc_err("error writing the output");
		return OLC_EXIT_OSERR;
	}
	return ret;
}
