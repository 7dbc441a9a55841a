/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordlockctl: the inspector and lock runner of ordlock.
 *
 * main.c dispatches to one subcommand per file, registered in a table
 * (struct olc_cmd: its options, help and run function); adding one is its
 * file and an entry in olc_cmds[]. Shared pieces: cmd.c (the option loop
 * and the end of a listing), ../common/ (keys, the debugfs parsers and the
 * netlink client, shared with the tests), cyclefind.c (the cycle finder),
 * print.c (tables, JSON, colour), nl.c (netlink into the model) and
 * source.c (where the data comes from: debugfs when it is readable, else
 * netlink).
 */
#ifndef ORDLOCKCTL_H
#define ORDLOCKCTL_H

#include <getopt.h>
#include <stdio.h>

#include "cyclefind.h"
#include "file.h"
#include "nl.h"
#include "parse.h"
#include "print.h"

/*
 * Exit statuses. A subcommand's own outcome uses the small numbers
 * (cycles: 1 cycles found, 3 the view is filtered); exec passes on its
 * command's status, as flock(1) does, and ordlockctl's own failures use
 * the sysexits(3) codes flock(1) uses, so that a script tells "the command
 * said 1 or 2" from "ordlockctl could not do it":
 */
#define OLC_EXIT_OK		0
#define OLC_EXIT_FOUND		1	/* cycles: there are cycles */
#define OLC_EXIT_USAGE		64	/* EX_USAGE: bad options or arguments */
#define OLC_EXIT_DATAERR	65	/* EX_DATAERR: a graph file that does not parse,
					 * a request the kernel refuses as wrong
					 * (EINVAL, an order violation, a key to
					 * release that is not held) */
#define OLC_EXIT_NOINPUT	66	/* EX_NOINPUT: a file (-f) cannot be opened */
#define OLC_EXIT_UNAVAILABLE	69	/* EX_UNAVAILABLE: module not loaded, no device,
					 * no netlink family, no such domain */
#define OLC_EXIT_SOFTWARE	70	/* EX_SOFTWARE: the kernel answered what we
					 * cannot read (a version mismatch) */
#define OLC_EXIT_OSERR		71	/* EX_OSERR: a system call failed (fork, memory,
					 * an ioctl or netlink error not listed here) */
#define OLC_EXIT_TEMPFAIL	75	/* EX_TEMPFAIL: the kernel is out of room for
					 * now (limits: EAGAIN, ENOSPC, EDQUOT,
					 * EMFILE), or busy (EBUSY) */
#define OLC_EXIT_NOPERM		77	/* EX_NOPERM: permission denied */
/* Failures that are not yet classified */
#define OLC_EXIT_ERROR		OLC_EXIT_OSERR

/*
 * The exit status for a failure with errno @err (positive or negative).
 * EOPNOTSUPP there is netlink not served (another network namespace): 69.
 */
int olc_exit_errno(int err);
/*
 * The same for a change the kernel refused (domain set, order --reset):
 * EOPNOTSUPP is a setting the domain does not take (policy detect in a
 * cluster domain, the fast path with a cluster): 65, as the kernel's
 * refusal of a wrong request
 */
int olc_exit_refused(int err);
/* The exit status for a failure @err of reading a file the user gave */
int olc_exit_file(int err);

/**
 * struct olc_option - one option of a subcommand: THE table that getopt,
 *	--help, "help --options" (the bash completion) and the man page test
 *	(tests/unit/t_ctl_opts.sh) all read
 * @val: what getopt returns: the short letter, or an OLC_OPT_* above 0xff
 *	(long only)
 * @name: the long name
 * @arg: the name of its argument in --help (NULL: it takes none)
 * @help: its --help text, '\n' between lines (NULL: an alias of the entry
 *	before it, accepted and completed but not listed)
 */
struct olc_option {
	int val;
	const char *name;
	const char *arg;
	const char *help;
};

/* The entries -d and -f of the subcommands that take them */
#define OLC_OPTION_DOMAIN(help)	{ 'd', "domain", "DOMAIN", help }
#define OLC_OPTION_FILE		\
	{ 'f', "file", "FILE", "read a saved graph file (debugfs format; - for stdin)" }
/* The table options of lslocks(8), of the subcommands with OLC_CMD_TABLE */
#define OLC_OPTIONS_TABLE(pidhelp)						\
	{ 'o', "output", "LIST", "the columns to print, comma-separated, in that order\n(see Columns below); +LIST: the default ones, then LIST" }, \
	{ 'n', "noheadings", NULL, "print no header line" },			\
	{ 'r', "raw", NULL, "raw output: one space between columns, no alignment" }, \
	{ 'p', "pid", "PID", pidhelp }

/**
 * struct olc_cmd - a subcommand (one file each, one entry in main.c's table)
 * @name: its name
 * @run: runs it with argv[0] the name; returns the exit status. It starts
 *	with olc_getopt(), which hands each of its own options to @opt.
 * @options: its own options, ending with { 0 } (NULL: none); unless
 *	OLC_CMD_OWN the common ones (olc_common_options) come on top
 * @opt: takes one of its own options @c (with @arg) into @args (the run's
 *	state); returns -1 when taken, else the exit status to end with
 * @flags: OLC_CMD_*
 * @summary: one line for the list of subcommands
 * @usage: the synopsis lines of --help
 * @about: what --help says before the options
 * @help: what --help says after them (output, exit status, JSON)
 * @columns: the names of its table's columns, NULL-terminated (for -o)
 */
struct olc_cmd {
	const char *name;
	int (*run)(const struct olc_cmd *cmd, int argc, char **argv);
	const struct olc_option *options;
	int (*opt)(const struct olc_cmd *cmd, int c, const char *arg, void *args);
	unsigned int flags;
	const char *summary;
	const char *usage;
	const char *about;
	const char *help;
	const char *const *columns;
};

/* olc_column_help() - the one-line description of @column of @cmd, or NULL */
const char *olc_column_help(const struct olc_cmd *cmd, const char *column);
/*
 * olc_print_columns() - one line per column of @cmd, after @indent: its
 * name (_ for a space) and its description, aligned
 */
void olc_print_columns(const struct olc_cmd *cmd, FILE *f, const char *indent);

/* The options every subcommand takes unless OLC_CMD_OWN */
extern const struct olc_option olc_common_options[];

/*
 * olc_list_options() - "help --options COMMAND": one line per option
 * @cmd accepts (common ones included), "SHORT LONG ARG ALIAS" with "-"
 * for none ("alias": not in --help); the bash completion reads it
 */
void olc_list_options(const struct olc_cmd *cmd, FILE *f);
/* The --help lines of the options of @opts (aliases left out) */
void olc_print_options(const struct olc_option *opts, FILE *f);

/*
 * OLC_CMD_ARGS: takes arguments, with options before, between or after
 * them ("domain shop -j" as "domain -j shop"; "--" ends the options);
 * else an argument is a usage error. OLC_CMD_COMMAND: its arguments are a
 * command line, which ends its options (getopt's "+", as flock(1)). OLC_CMD_OWN: only the options it
 * lists (not the common ones; those it lists, @opt passes on to
 * olc_common_opt()). OLC_CMD_DOMAIN: takes -d/--domain DOMAIN, and
 * OLC_CMD_FILE -f/--file FILE, into the struct olc_args its @args start
 * with.
 */
#define OLC_CMD_ARGS	0x1
#define OLC_CMD_OWN	0x2
#define OLC_CMD_DOMAIN	0x4
#define OLC_CMD_FILE	0x8
/* OLC_CMD_TABLE: takes -o, -n, -r and -p PID (OLC_OPTIONS_TABLE) */
#define OLC_CMD_TABLE	0x10
/* OLC_CMD_ONEARG: one argument, anywhere among the options */
#define OLC_CMD_ONEARG	0x20
#define OLC_CMD_COMMAND	0x40

/* The options several subcommands take: the start of their @args */
struct olc_args {
	const char *domain;	/* -d: only this domain (checked) */
	const char *file;	/* -f: a saved graph file */
	int have_pid;		/* -p PID given */
	unsigned int pid;	/* -p: only the rows of this process */
};

extern const struct olc_cmd olc_cmd_cycles;
extern const struct olc_cmd olc_cmd_locks;
extern const struct olc_cmd olc_cmd_owners;
extern const struct olc_cmd olc_cmd_graph;
extern const struct olc_cmd olc_cmd_stats;
extern const struct olc_cmd olc_cmd_monitor;
extern const struct olc_cmd olc_cmd_exec;
extern const struct olc_cmd olc_cmd_domain;
extern const struct olc_cmd olc_cmd_blockers;
extern const struct olc_cmd olc_cmd_order;
extern const struct olc_cmd olc_cmd_check_token;

enum olc_source {
	OLC_SRC_AUTO,
	OLC_SRC_DEBUGFS,
	OLC_SRC_NETLINK,
};

/* Options every subcommand takes (also before the subcommand) */
struct olc_opts {
	int json;
	int pretty;
	int numeric;		/* -N: keys as RANK:ID, never NAME:ID */
	int verbose;
	enum olc_source source;
	const char *color;
};

extern struct olc_opts olc_opt;

/*
 * olc_view_filtered - the data came from the netlink dumps, which show a
 * sender without CAP_NET_ADMIN only the owners of its own user: the view
 * is not all there is (set by the loaders; olc_list_end() says so)
 */
extern int olc_view_filtered;
/* The exit status of "cycles" when the view is filtered and shows no
 * cycle: there may be one it cannot see */
#define OLC_EXIT_PARTIAL	3

/* "ordlockctl: ..." on stderr */
void olc_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * olc_usage() - report a usage error of @cmd (NULL: of ordlockctl), point
 * to --help; returns OLC_EXIT_USAGE.
 */
int olc_usage(const struct olc_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void olc_help(const struct olc_cmd *cmd, FILE *f);
/* The help of ordlockctl itself (no subcommand) */
void olc_main_help(FILE *f);

/* The value of --color, a long option only */
#define OLC_OPT_COLOR	0x100
#define OLC_OPT_PRETTY	0x101

/*
 * olc_getopt() - parse the options of @cmd (its own go to @cmd->opt with
 * @args, the common ones to olc_common_opt()), settle the colour, and
 * refuse arguments unless OLC_CMD_ARGS (then they start at optind).
 * Returns -1 to go on, else the exit status to end with.
 */
int olc_getopt(const struct olc_cmd *cmd, int argc, char **argv, void *args);
/*
 * olc_common_opt() - handle common option @c: returns -1 when handled,
 * else the exit status to end with (0 after --help, 64 on a usage error).
 */
int olc_common_opt(const struct olc_cmd *cmd, int c, const char *arg);
/*
 * olc_domain_opt() - handle -d DOMAIN: sets *@domain and returns -1, or
 * returns the exit status of a usage error for a bad name
 */
int olc_domain_opt(const struct olc_cmd *cmd, const char *arg,
		   const char **domain);
/*
 * olc_list_end() - end a listing: with @j (-j), its array, the object
 * around it and the document; else table @t, or when it has no rows
 * "no @what" and, with @domain, ' in domain "DOMAIN"'.
 */
void olc_list_end(struct olc_json *j, struct olc_table *t, const char *what,
		  const char *domain);
/* ' in domain "DOMAIN"', or "" when @domain is NULL (static buffer) */
const char *olc_in_domain(const char *domain);

/*
 * 1 when the process @pid the kernel noted for an owner no longer exists:
 * the owner lives on in an open file description that other processes
 * hold (the FD form of exec took keys on a shell's descriptor and exited)
 */
int olc_pid_exited(uint32_t pid);
/* set when the view comes from a saved file (-f FILE) */
extern int olc_saved_view;
/* @comm, or "@comm(exited)" when olc_pid_exited(@pid); a static buffer */
const char *olc_comm_shown(uint32_t pid, const char *comm);
/*
 * olc_pid_match() - whether the rows of process @pid answer for the pid
 * @want asked for (-p PID, blockers PID): @pid is @want, or a child of
 * @want when @want is an "ordlockctl exec" (a live process of this system
 * named ordlockctl): its child took the keys and became COMMAND, and the
 * pid the shell knows ($! of "ordlockctl exec ... &") is @want's
 */
int olc_pid_match(uint32_t want, uint32_t pid);

/* Where the data comes from (source.c) */

/* The debugfs directory: $ORDLOCK_DEBUGFS, or /sys/kernel/debug/ordlock */
const char *olc_debugfs_dir(void);

/*
 * The loaders: from debugfs when it is readable (or -S debugfs), else
 * from netlink; @used (may be NULL) receives "debugfs" or "netlink".
 * Errors are reported on stderr; they return 0 or -errno.
 */
int olc_load_graph(struct olc_edges *out, const char **used);
int olc_load_locks(struct olc_locks *out, const char **used);
int olc_load_owners(struct olc_owners *out, const char **used);
/* The stats of @domain (NULL: every domain) */
int olc_load_stats(struct olc_stats *out, const char *domain, const char **used);
/*
 * A view filtered by -d @domain found none of its rows: -ENOENT (said on
 * stderr) when @domain is no domain at all, 0 when it is one (or when the
 * domains cannot be read: the view stands as it is)
 */
int olc_domain_known(const char *domain);
/* Deadlock history: debugfs only */
int olc_load_deadlocks(struct olc_deadlocks *out);

/* A graph file given by the user ("-": standard input) */
int olc_load_graph_file(const char *path, struct olc_edges *out);

/*
 * The shared netlink socket, opened on first use; NULL with the error
 * reported when it cannot be opened (unless @quiet).
 */
struct olc_nl *olc_netlink(int quiet);
/* Explain a netlink failure @err of @what, with the kernel's extack */
void olc_nl_report(struct olc_nl *nl, int err, const char *what);
/* Why the module is not there: a sentence, or NULL when it is loaded */
const char *olc_module_missing(void);

/*
 * The rank names of @domain (DOMAIN_GET, cached), for printing keys; NULL
 * with -n, or when netlink cannot tell.
 */
const struct olc_rank_names *olc_names(const char *domain);
/* "NAME:ID" or "RANK:ID" per the domain's names (static buffers, 8 in turn) */
const char *olc_key(const char *domain, uint32_t rank, uint64_t id);

/* Shared printing of owners and failures */
void olc_json_who(struct olc_json *j, const char *key, const struct olc_who *w);
/* xdview.c: ordlock-xdetectd's answer to @cmd ("locks", "state"), or null */
void olc_json_xdetectd(struct olc_json *j, const char *key, const char *cmd);
struct olc_xd_view;
struct olc_xd_state;
/*
 * xdview.c: the daemon's "locks" (every node's holders and waiters) and
 * "state" (its rounds) read (xdparse.h): 0, or -errno with a sentence in
 * @why (no daemon: -ENOENT or -ECONNREFUSED); @raw (may be NULL): the
 * answer as it came (malloc()ed; NULL when none), for the JSON outputs
 */
int olc_xd_load_view(struct olc_xd_view *v, char *why, size_t len, char **raw);
int olc_xd_load_state(struct olc_xd_state *s, char *why, size_t len, char **raw);
void olc_json_key(struct olc_json *j, const char *domain, uint32_t rank,
		  uint64_t id);

/* The cycles of a wait-for graph (cycles.c), shared with graph --dot */

/**
 * struct olc_cycles - the cycles found, the first @limit kept
 * @edges: the edges searched
 * @w: their graph
 * @limit: how many to keep (0: all)
 * @stop: end the search once @limit cycles are kept (cycles -q)
 * @steps: the kept cycles' steps, as indices of @edges, one after the other
 * @start: for each kept cycle, its first entry of @steps
 * @len: for each kept cycle, its length
 * @nkept: cycles kept
 * @res: what the search did (all cycles counted)
 */
struct olc_cycles {
	const struct olc_edges *edges;
	const struct olc_wfg *w;
	unsigned long limit;
	int stop;
	unsigned int *steps;
	size_t nsteps, cap;
	unsigned int *start;
	unsigned int *len;
	size_t nkept, kcap;
	int nomem;
	struct cf_result res;
};

/* Search the edges of @domain (NULL: all); 0 or -errno */
int olc_find_cycles(const struct olc_edges *edges, const char *domain,
		    unsigned long limit, int stop, uint64_t max_work,
		    struct olc_wfg *w, struct olc_cycles *found);
void olc_cycles_free(struct olc_cycles *found);
/* A flag per edge index: the edge is on a kept cycle; free() it */
unsigned char *olc_cycle_edges(const struct olc_cycles *found, size_t nedges);

/*
 * olc_step_line() - "pid 101 (transfer) waits for exclusive wh:2; blocked by
 * pid 102 (transfer), which holds it exclusive" and a newline
 */
void olc_step_line(FILE *f, const char *domain, const struct olc_who *w,
		   unsigned int mode, uint32_t rank, uint64_t id,
		   const struct olc_who *b, unsigned int bmode, unsigned int edge);

#endif /* ORDLOCKCTL_H */
