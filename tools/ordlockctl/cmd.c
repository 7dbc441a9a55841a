// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl: what every subcommand shares, so that its file holds only
 * what is its own: the option loop (its own options and the common ones),
 * and the end of a listing (JSON, a table, or "no ...").
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
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

const struct olc_option olc_common_options[] = {
	{ 'j', "json", NULL, "one JSON document (monitor: one per line); -J too,\nas lslocks(8)" },
	/* lslocks(8)'s letter for it */
	{ 'J', "json", NULL, NULL },
	{ OLC_OPT_PRETTY, "pretty", NULL, "indent the JSON" },
	{ 'N', "numeric", NULL, "write keys RANK:ID, not NAME:ID" },
	{ 'S', "source", "SRC", "debugfs, netlink or auto (default: debugfs when\nreadable)" },
	{ OLC_OPT_COLOR, "color", "WHEN", "auto (default: on a terminal), always, never" },
	{ OLC_OPT_COLOR, "colour", "WHEN", NULL },
	{ 'v', "verbose", NULL, "say where the data came from" },
	{ 'h', "help", NULL, "this help" },
	{ 0 },
};

int olc_exit_errno(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case EACCES:
	case EPERM:
		return OLC_EXIT_NOPERM;
	case ENOENT:
	case ENODEV:
	case ENXIO:
	case EPROTONOSUPPORT:
	case EAFNOSUPPORT:
	case EOPNOTSUPP:
		return OLC_EXIT_UNAVAILABLE;
	case EINVAL:
	case EEXIST:
	case EDEADLK:
	case ERANGE:
	case EOVERFLOW:
		return OLC_EXIT_DATAERR;
	case EAGAIN:
	case EBUSY:
	case EDQUOT:
	case ENOSPC:
	case EMFILE:
	case ENFILE:
	case ENOBUFS:
		return OLC_EXIT_TEMPFAIL;
	case EPROTO:
	case EBADMSG:
		return OLC_EXIT_SOFTWARE;
	default:
		return OLC_EXIT_OSERR;
	}
}

int olc_exit_refused(int err)
{
	return err == EOPNOTSUPP || err == -EOPNOTSUPP ? OLC_EXIT_DATAERR : olc_exit_errno(err);
}

int olc_exit_file(int err)
{
	if (err == -EPROTO)
		return OLC_EXIT_DATAERR;
	if (err == -ENOMEM)
		return OLC_EXIT_OSERR;
	return OLC_EXIT_NOINPUT;
}

int olc_common_opt(const struct olc_cmd *cmd, int c, const char *arg)
{
	switch (c) {
	case 'j':
	case 'J':
		olc_opt.json = 1;
		return -1;
	case OLC_OPT_PRETTY:
		olc_opt.pretty = 1;
		return -1;
	case 'N':
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
	if (!(cmd->flags & OLC_CMD_TABLE))
		return -2;
	switch (c) {
	case 'o': {
		char bad[64];

		if (olc_columns_check(arg, cmd->columns, bad, sizeof(bad)))
			return olc_usage(cmd, "-o: no column \"%s\" (ordlockctl help --columns %s)",
					 bad, cmd->name);
		olc_tab.columns = arg;
		return -1;
	}
	case 'n':
		olc_tab.noheadings = 1;
		return -1;
	case 'r':
		olc_tab.raw = 1;
		return -1;
	case 'p':
		if (olc_parse_u32(arg, &a->pid) || !a->pid)
			return olc_usage(cmd, "-p: \"%s\" is not a process id", arg);
		a->have_pid = 1;
		return -1;
	}
	return -2;
}

static int olc_own_opt(const struct olc_cmd *cmd, int c)
{
	const struct olc_option *o;

	for (o = cmd->options; o && o->name; o++)
		if (o->val == c)
			return 1;
	return 0;
}

static int olc_has_short(int val)
{
	return val > ' ' && val < 0x7f;
}

/* Add the entries of @opts to getopt's @shortopts and @longopts */
static void olc_add_options(const struct olc_option *opts, char *shortopts,
			    size_t slen, struct option *longopts, size_t *n)
{
	const struct olc_option *o;
	size_t k;

	for (o = opts; o && o->name; o++) {
		if (*n < OLC_LONGOPTS_MAX - 1) {
			longopts[*n].name = o->name;
			longopts[*n].has_arg = o->arg ? required_argument : no_argument;
			longopts[*n].flag = NULL;
			longopts[*n].val = o->val;
			(*n)++;
		}
		if (!olc_has_short(o->val) || strchr(shortopts, o->val))
			continue;
		k = strlen(shortopts);
		if (k + 3 >= slen)
			continue;
		shortopts[k++] = (char)o->val;
		if (o->arg)
			shortopts[k++] = ':';
		shortopts[k] = '\0';
	}
}

int olc_getopt(const struct olc_cmd *cmd, int argc, char **argv, void *args)
{
	struct option longopts[OLC_LONGOPTS_MAX];
	char shortopts[128] = "";
	size_t n = 0;
	int own = cmd->flags & OLC_CMD_OWN, c, ret;

	if (cmd->flags & OLC_CMD_COMMAND)
		strcpy(shortopts, "+");
	olc_add_options(cmd->options, shortopts, sizeof(shortopts), longopts, &n);
	if (!own)
		olc_add_options(olc_common_options, shortopts, sizeof(shortopts),
				longopts, &n);
	memset(&longopts[n], 0, sizeof(longopts[n]));
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		ret = olc_shared_opt(cmd, c, optarg, args);
		if (ret == -2)
			ret = olc_own_opt(cmd, c) ? cmd->opt(cmd, c, optarg, args) :
						    olc_common_opt(cmd, c, optarg);
		if (ret >= 0)
			return ret;
	}
	olc_color_init(olc_opt.color);
	if (!(cmd->flags & (OLC_CMD_ARGS | OLC_CMD_ONEARG)) && optind < argc)
		return olc_usage(cmd, "unexpected argument \"%s\"", argv[optind]);
	return -1;
}

/* The column where an option's help starts */
#define OLC_HELP_COL	23

void olc_print_options(const struct olc_option *opts, FILE *f)
{
	const struct olc_option *o;
	const char *p, *nl;
	char left[64];
	int w;

	for (o = opts; o && o->name; o++) {
		if (!o->help)
			continue;
		if (olc_has_short(o->val))
			w = snprintf(left, sizeof(left), "  -%c, --%s%s%s", o->val, o->name,
				     o->arg ? "=" : "", o->arg ? o->arg : "");
		else
			w = snprintf(left, sizeof(left), "      --%s%s%s", o->name,
				     o->arg ? "=" : "", o->arg ? o->arg : "");
		fputs(left, f);
		if (w > OLC_HELP_COL - 2)
			fprintf(f, "\n%*s", OLC_HELP_COL, "");
		else
			fprintf(f, "%*s", OLC_HELP_COL - w, "");
		for (p = o->help; *p; p = *nl ? nl + 1 : nl) {
			nl = strchr(p, '\n');
			if (!nl)
				nl = p + strlen(p);
			if (p != o->help)
				fprintf(f, "%*s", OLC_HELP_COL, "");
			fprintf(f, "%.*s\n", (int)(nl - p), p);
		}
	}
}

static void olc_list_one(const struct olc_option *opts, FILE *f)
{
	const struct olc_option *o;

	for (o = opts; o && o->name; o++) {
		if (olc_has_short(o->val))
			fprintf(f, "-%c", o->val);
		else
			fputc('-', f);
		fprintf(f, " --%s %s %s\n", o->name, o->arg ? o->arg : "-",
			o->help ? "-" : "alias");
	}
}

void olc_list_options(const struct olc_cmd *cmd, FILE *f)
{
	olc_list_one(cmd->options, f);
	if (!(cmd->flags & OLC_CMD_OWN))
		olc_list_one(olc_common_options, f);
}

const char *olc_in_domain(const char *domain)
{
	static char buf[ORDLOCK_DOMAIN_NAME_MAX + 16];

	if (!domain)
		return "";
	snprintf(buf, sizeof(buf), " in domain \"%s\"", domain);
	return buf;
}

int olc_saved_view;

int olc_pid_exited(uint32_t pid)
{
	const char *dir = getenv("ORDLOCK_DEBUGFS");

	/* saved files (ORDLOCK_DEBUGFS, -f FILE): their pids are not this system's */
	if (olc_saved_view || (dir && *dir))
		return 0;
	/* EPERM: it exists, owned by another user */
	return pid && pid <= INT32_MAX && kill((pid_t)pid, 0) && errno == ESRCH;
}

/* /proc/@pid/@file into @buf (NUL-terminated): its length, or -1 */
static ssize_t olc_proc_read(uint32_t pid, const char *file, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/%s", pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* The parent of process @pid (/proc/PID/stat), 0 when unknown */
static uint32_t olc_ppid(uint32_t pid)
{
	char buf[512], *p;
	unsigned int ppid;

	if (olc_proc_read(pid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	/* "PID (COMM) STATE PPID ...": COMM may hold ") " itself */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %u", &ppid) != 1)
		return 0;
	return ppid;
}

/* Whether process @pid of this system is named ordlockctl */
static int olc_is_ordlockctl(uint32_t pid)
{
	char comm[32];

	return olc_proc_read(pid, "comm", comm, sizeof(comm)) > 0 &&
	       !strcmp(comm, "ordlockctl\n");
}

int olc_pid_match(uint32_t want, uint32_t pid)
{
	static uint32_t cached;
	static int is_exec;
	const char *dir = getenv("ORDLOCK_DEBUGFS");

	if (pid == want)
		return 1;
	/* saved files: their pids are not this system's */
	if (!pid || olc_saved_view || (dir && *dir))
		return 0;
	if (cached != want) {
		cached = want;
		is_exec = olc_is_ordlockctl(want);
	}
	return is_exec && olc_ppid(pid) == want;
}

const char *olc_comm_shown(uint32_t pid, const char *comm)
{
	static char buf[64];

	if (!olc_pid_exited(pid))
		return comm;
	snprintf(buf, sizeof(buf), "%s(exited)", comm);
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
