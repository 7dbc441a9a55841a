// SPDX-License-Identifier: GPL-2.0
/*
 * ordlockctl exec: run a command while holding ordlock keys, like flock(1).
 *
 * The keys are taken in one request (the kernel sorts them: no order
 * violation, no deadlock among exec users), through libordlock. ordlockctl
 * keeps the /dev/ordlock descriptor, runs the command as its child, waits
 * for it, and drops its descriptor when the command ends: the kernel
 * releases an owner's keys with its last descriptor.
 *
 * The command inherits the descriptor (ORDLOCK_FD names it), as flock(1)'s
 * command inherits its locked file: the open file description is the
 * owner, so the keys are held until ordlockctl, the command and whatever
 * the command left running with the descriptor have all closed it. Killing
 * ordlockctl alone (kill -9, the OOM killer, a supervisor that kills only
 * the main pid) never frees the keys while the command runs, and there is
 * no window: the child has the descriptor from fork() on. -o, as flock's,
 * closes it before the command runs: then the keys live as long as
 * ordlockctl.
 *
 * Two more ways of flock(1):
 *  - -F (no fork): ordlockctl becomes the command (exec without fork), which
 *    inherits the descriptor (ORDLOCK_FD names it): the keys are held until
 *    the command and whatever inherited the descriptor from it closed it.
 *  - FD instead of COMMAND: take the keys on descriptor FD, a /dev/ordlock
 *    description the shell opened ("exec 9<>/dev/ordlock"), and exit; the
 *    keys stay held by that description until the shell closes it, or until
 *    "exec -u FD" releases them.
 *
 * An exec inside another one (its COMMAND runs "ordlockctl exec", as flock
 * users nest flock(1)) inherits the outer owner: ORDLOCK_FD names it. When
 * it is of the same domain, the inner exec acquires through it (unless
 * --new-owner), so that the order rule and the wait-for graph see one owner
 * per script, as they would see one program: "-x 1:2 -- exec -x 1:1" is an
 * order violation, and two such scripts crossing are a cycle the kernel
 * detects. The inner exec releases what it took when its COMMAND ends
 * (RELEASE of those keys only), and never closes the owner.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libordlock.h"
#include "ordlockctl.h"

#define OLC_EXEC_MAX_KEYS	4096
/* without -w: forever (olc_exec_acquire() asks again past max_timeout_ms) */
#define OLC_EXEC_FOREVER_MS	(~0U)

enum { OLC_OPT_NEW_OWNER = 0x200 };

static volatile sig_atomic_t olc_exec_child;

static void olc_exec_forward(int sig)
{
	if (olc_exec_child > 0)
		kill((pid_t)olc_exec_child, sig);
}

struct olc_exec_key {
	const char *text;
	unsigned int mode;
};

/*
 * -w SECONDS: a decimal number; returns -1 on error, else milliseconds, at
 * most OLC_EXEC_FOREVER_MS (a wait of 2^32 - 1 ms, 49.7 days, or longer,
 * as flock(1) takes it: forever; an overflow and "inf" as well)
 */
static long long olc_seconds_ms(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* ERANGE: an overflow (HUGE_VAL) is forever, an underflow next to 0 */
	if (end == s || *end || isnan(v) || v < 0 || (errno && errno != ERANGE))
		return -1;
	v = ceil(v * 1000.0);
	return v >= (double)OLC_EXEC_FOREVER_MS ? OLC_EXEC_FOREVER_MS : (long long)v;
}

static int olc_conflict(unsigned int reason)
{
	return reason == ORDLOCK_REASON_BUSY || reason == ORDLOCK_REASON_TIMEOUT ||
	       reason == ORDLOCK_REASON_DEADLOCK || reason == ORDLOCK_REASON_UPGRADE;
}

/* Report the failure of the request, with the cycle of a deadlock */
static void olc_exec_failure(struct ordlock *ol, const char *domain, int ret)
{
	const struct ordlock_failure *f = ordlock_last_failure(ol);
	struct ordlock_cycle_step steps[ORDLOCK_CYCLE_MAX];
	uint32_t nodes[ORDLOCK_CYCLE_MAX];
	char why[512];
	int n, i;

	ordlock_strfailure(f, why, sizeof(why));
	if (f->reason == ORDLOCK_REASON_NONE)
		snprintf(why, sizeof(why), "%s", strerror(-ret));
	olc_err("%s", why);
	if (f->pid && olc_pid_exited(f->pid))
		olc_err("pid %u has exited: the holder is an open file description it took the keys on (as \"exec ... FD\" does), which another process still has open",
			f->pid);
	if (f->reason != ORDLOCK_REASON_DEADLOCK)
		return;
	n = ordlock_last_cycle_nodes(ol, steps, nodes, ORDLOCK_CYCLE_MAX);
	for (i = 0; i < n; i++) {
		const struct ordlock_cycle_step *s = &steps[i], *t = &steps[(i + 1) % n];
		struct olc_who a = { .id = s->owner_id, .pid = s->pid, .node = nodes[i] };
		struct olc_who b = { .id = t->owner_id, .pid = t->pid,
				     .node = nodes[(i + 1) % n] };

		memcpy(a.comm, s->comm, sizeof(a.comm) - 1);
		memcpy(b.comm, t->comm, sizeof(b.comm) - 1);
		fputs("  ", stderr);
		olc_step_line(stderr, s->flags & ORDLOCK_STEP_OTHER_DOMAIN ?
			      "(another domain)" : domain, &a, s->key.mode, s->key.rank, s->key.id,
			      &b, s->blocker_mode, s->edge);
	}
}

/*
 * Take @keys within @timeout_ms (OLC_EXEC_FOREVER_MS: no limit), as long as
 * the user asked: the kernel caps one request's wait at max_timeout_ms, so
 * a request that timed out before the user's deadline is made again, for
 * what is left. Each request is all or nothing and the kernel sorts its
 * keys, so asking again keeps both; between two requests nothing is held.
 * Returns 0 or -errno, with ordlock_last_failure() telling why.
 */
static int olc_exec_acquire(struct ordlock *ol, const struct ordlock_key *keys,
			    unsigned int nkeys, unsigned int timeout_ms,
			    unsigned int flags, uint64_t *token)
{
	int forever = timeout_ms == OLC_EXEC_FOREVER_MS && !(flags & ORDLOCK_ACQUIRE_TRY);
	struct timespec start, now;
	long long left = timeout_ms, spent;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		unsigned int ask = forever || left >= OLC_EXEC_FOREVER_MS - 1 ?
				   OLC_EXEC_FOREVER_MS - 1 : (unsigned int)left;

		ret = ordlock_acquire(ol, keys, nkeys, ask, flags, token);
		if (ret != -ETIMEDOUT || (flags & ORDLOCK_ACQUIRE_TRY) ||
		    ordlock_last_failure(ol)->reason != ORDLOCK_REASON_TIMEOUT)
			return ret;
		clock_gettime(CLOCK_MONOTONIC, &now);
		spent = (long long)(now.tv_sec - start.tv_sec) * 1000 +
			(now.tv_nsec - start.tv_nsec) / 1000000;
		if (!forever) {
			left = (long long)timeout_ms - spent;
			if (left <= 0)
				return ret;
		}
		if (olc_opt.verbose)
			olc_err("still waiting after %lld s (the kernel's longest wait, max_timeout_ms, ran out): asking again",
				spent / 1000);
	}
}

/*
 * Name this process after COMMAND before it takes the keys: the kernel
 * notes the pid and name of the task that makes a request, so the views
 * show the command (pid and name) as the holder, not "ordlockctl"
 */
static void olc_exec_name(const char *shell_cmd, char **cmd)
{
	const char *name = shell_cmd ? "sh" : cmd[0], *slash = strrchr(name, '/');

	prctl(PR_SET_NAME, (unsigned long)(slash ? slash + 1 : name), 0, 0, 0);
}

/* COMMAND's environment: ORDLOCK_TOKEN and ORDLOCK_DOMAIN; 0 or -1 */
static int olc_exec_setenv(uint64_t token, const char *domain)
{
	char tokstr[32];

	snprintf(tokstr, sizeof(tokstr), "%llu", (unsigned long long)token);
	return setenv("ORDLOCK_TOKEN", tokstr, 1) || setenv("ORDLOCK_DOMAIN", domain, 1) ?
	       -1 : 0;
}

/*
 * Run @shell_cmd with sh -c, or else the command line @cmd, in place of
 * this process. Returns only when it cannot: the exit status for that.
 */
static int olc_exec_command(const char *shell_cmd, char **cmd)
{
	int err;

	if (shell_cmd)
		execl("/bin/sh", "sh", "-c", shell_cmd, (char *)NULL);
	else
		execvp(cmd[0], cmd);
	err = errno;
	olc_err("cannot run %s: %s", shell_cmd ? "/bin/sh" : cmd[0], strerror(err));
	return err == ENOENT ? 127 : 126;
}

/* FD mode: the only argument is a descriptor number, as in flock(1) */
static int olc_exec_fd_arg(int argc, char **argv, const char *shell_cmd)
{
	const char *p = argv[optind];
	long fd;
	char *end;

	if (shell_cmd || optind != argc - 1 || !*p || strspn(p, "0123456789") != strlen(p))
		return -1;
	errno = 0;
	fd = strtol(p, &end, 10);
	return errno || fd > 1000000 ? -1 : (int)fd;
}

/*
 * Open the handle of FD mode: the owner of descriptor @fd, in @domain if
 * given (else in its own domain, copied to @own_domain).
 */
static struct ordlock *olc_exec_open_fd(int fd, const char **domain, int domain_given,
					char *own_domain, size_t len, int *status)
{
	struct ordlock_owner_info info;
	struct ordlock *ol = ordlock_open_fd(fd);
	int ret;

	if (!ol) {
		ret = errno;
		olc_err("descriptor %d is not open on %s: %s", fd, ORDLOCK_DEVICE,
			ret == ENOTTY ? "it is another file" : strerror(ret));
		*status = ret == ENOTTY || ret == EBADF ? OLC_EXIT_NOINPUT : olc_exit_errno(ret);
		return NULL;
	}
	if (domain_given) {
		ret = ordlock_set_domain(ol, *domain);
		if (ret) {
			olc_err("cannot move descriptor %d's owner to domain %s: %s%s", fd,
				*domain, strerror(-ret),
				ret == -EBUSY ? " (it holds keys in another domain)" : "");
			ordlock_detach(ol);
			*status = olc_exit_errno(ret);
			return NULL;
		}
		return ol;
	}
	if (ordlock_owner_info(ol, &info)) {
		ret = errno;
		olc_err("descriptor %d: OWNER_INFO: %s", fd, strerror(ret));
		ordlock_detach(ol);
		*status = olc_exit_errno(ret);
		return NULL;
	}
	snprintf(own_domain, len, "%.*s", (int)sizeof(info.domain), info.domain);
	*domain = own_domain;
	return ol;
}

/*
 * The owner an enclosing exec passed on (ORDLOCK_FD), when it is of
 * @domain: 0 and *@olp (a handle that must only be detached: the
 * descriptor and the keys of the owner are the outer exec's). -1 when
 * there is none, or it is of another domain (the keys then get an owner
 * of their own, as they always did). Else the exit status: ORDLOCK_FD that
 * is not a number, not open, or not open on /dev/ordlock is refused, as a
 * new owner there would escape the order rule and the cycle detection.
 */
static int olc_exec_inherited(const char *domain, struct ordlock **olp)
{
	static const char hint[] = "give --new-owner for an owner of its own, or unset ORDLOCK_FD";
	struct ordlock_owner_info info;
	const char *s = getenv("ORDLOCK_FD");
	struct ordlock *ol;
	char *end;
	long fd;
	int ret;

	*olp = NULL;
	if (!s || !*s)
		return -1;
	errno = 0;
	fd = strtol(s, &end, 10);
	if (strspn(s, "0123456789") != strlen(s) || *end || errno || fd > INT_MAX) {
		olc_err("ORDLOCK_FD=\"%s\" is not a descriptor number (the owner of an enclosing \"ordlockctl exec\" was expected); %s",
			s, hint);
		return OLC_EXIT_NOINPUT;
	}
	ol = ordlock_open_fd((int)fd);
	if (!ol) {
		ret = errno;
		olc_err("ORDLOCK_FD=%ld: descriptor %ld is not open on %s (%s; the owner of an enclosing \"ordlockctl exec\" was expected); %s",
			fd, fd, ORDLOCK_DEVICE,
			ret == ENOTTY ? "it is another file" :
			ret == EBADF ? "it is not open" : strerror(ret), hint);
		return ret == ENOTTY || ret == EBADF ? OLC_EXIT_NOINPUT : olc_exit_errno(ret);
	}
	if (ordlock_owner_info(ol, &info)) {
		ret = errno;
		olc_err("ORDLOCK_FD=%ld: OWNER_INFO: %s", fd, strerror(ret));
		ordlock_detach(ol);
		return olc_exit_errno(ret);
	}
	if (strncmp(info.domain, domain, sizeof(info.domain))) {
		ordlock_detach(ol);
		return -1;
	}
	*olp = ol;
	return 0;
}

/*
 * Release @keys, taken through an inherited owner, and only them (the
 * outer exec's stay held); those COMMAND released itself are skipped.
 * Any mode: COMMAND may have converted one.
 */
static void olc_exec_give_back(struct ordlock *ol, const struct ordlock_key *keys,
			       unsigned int nkeys)
{
	struct ordlock_key *any = calloc(nkeys, sizeof(*any));
	const struct ordlock_failure *f;
	unsigned int i;
	char why[512];
	int ret = -ENOMEM;

	if (any) {
		for (i = 0; i < nkeys; i++) {
			any[i] = keys[i];
			any[i].mode = 0;
		}
		ret = ordlock_release(ol, any, nkeys);
		/* all or none: one that COMMAND released makes it none */
		for (i = 0; ret == -ENOENT && i < nkeys; i++)
			if (ordlock_release(ol, &any[i], 1) == -EKEYEXPIRED)
				ret = -EKEYEXPIRED;
		if (ret == -ENOENT)
			ret = 0;
		free(any);
	}
	if (!ret)
		return;
	f = ordlock_last_failure(ol);
	ordlock_strfailure(f, why, sizeof(why));
	olc_err("releasing the keys taken through the inherited owner: %s",
		f->reason != ORDLOCK_REASON_NONE && ret != -ENOMEM ? why : strerror(-ret));
}

/*
 * FD mode: take @keys on the owner of descriptor @fd, or release them (all
 * of them without @keys) with @unlock, and leave: the keys stay with the
 * open file description, which the caller's descriptor keeps open.
 */
static int olc_exec_on_fd(struct ordlock *ol, int fd, const char *domain,
			  const struct ordlock_key *keys, unsigned int nkeys,
			  int unlock, unsigned int timeout_ms, unsigned int flags,
			  int quiet, int conflict_code, const char *label)
{
	uint64_t token = 0;
	char why[512];
	int ret, conflict;

	/* the descriptor's owner carries the label from now on, as without FD */
	if (label) {
		ret = ordlock_set_label(ol, label);
		if (ret) {
			olc_err("descriptor %d: cannot set the label \"%s\": %s", fd,
				label, strerror(-ret));
			ordlock_detach(ol);
			return olc_exit_errno(-ret);
		}
	}

	if (unlock) {
		ret = nkeys ? ordlock_release(ol, keys, nkeys) : ordlock_release_all(ol);
		if (ret) {
			const struct ordlock_failure *f = ordlock_last_failure(ol);

			ordlock_strfailure(f, why, sizeof(why));
			olc_err("descriptor %d: %s", fd,
				f->reason != ORDLOCK_REASON_NONE ? why : strerror(-ret));
		} else if (olc_opt.verbose) {
			olc_err("released %s of descriptor %d", nkeys ? "the keys" : "every key", fd);
		}
		ordlock_detach(ol);
		/* releasing what is not held: the request is wrong */
		return !ret ? 0 : ret == -ENOENT ? OLC_EXIT_DATAERR : olc_exit_errno(ret);
	}
	ret = olc_exec_acquire(ol, keys, nkeys, timeout_ms, flags, &token);
	if (ret) {
		conflict = olc_conflict(ordlock_last_failure(ol)->reason);
		if (!quiet || !conflict)
			olc_exec_failure(ol, domain, ret);
		ordlock_detach(ol);
		return conflict ? conflict_code : olc_exit_errno(ret);
	}
	if (olc_opt.verbose)
		olc_err("descriptor %d holds %u more key%s in domain %s (token %llu)", fd,
			nkeys, nkeys == 1 ? "" : "s", domain, (unsigned long long)token);
	ordlock_detach(ol);
	return 0;
}

/* What the options of exec ask for, and what they come to */
struct olc_exec_args {
	struct olc_args base;
	struct olc_exec_key *texts;
	unsigned int nkeys;
	int need_names;
	unsigned int timeout_ms;
	unsigned int flags;
	int conflict_code;
	const char *shell_cmd;
	int no_fork;
	int close_fd;
	int unlock;
	int quiet;
	const char *label;
	int new_owner;
	/* what olc_exec_check() and olc_exec_keys() made of them */
	int fd;			/* FD mode: the descriptor, else -1 */
	int domain_given;
	const char *domain;
	char own_domain[ORDLOCK_DOMAIN_NAME_MAX + 1];
	struct ordlock *ol;	/* FD mode: the descriptor's owner */
	struct ordlock_key *keys;
};

/* flock's options, and of the common ones -v, --color and -h alone */
static const struct olc_option olc_exec_options[] = {
	{ 's', "shared", "KEY", "take KEY shared (RANK:ID or NAME:ID)" },
	{ 'x', "exclusive", "KEY", "take KEY exclusive" },
	{ 'w', "timeout", "SECS", "wait at most SECS seconds (decimals allowed; 0 is -n).\n"
	  "Without -w: forever, as flock(1): exec asks again\n"
	  "each time the kernel's longest wait (max_timeout_ms)\n"
	  "runs out, and -w longer than that is kept the same way;\n"
	  "49.7 days (2^32 ms) or more is forever" },
	{ 'w', "wait", "SECS", NULL },
	{ 'n', "nonblock", NULL, "do not wait: fail at once if a key is not free" },
	{ 'n', "nb", NULL, NULL },
	{ 'E', "conflict-exit-code", "N", "exit status when the keys were not obtained: busy\n"
	  "(-n), timed out (-w), or deadlock victim (default 1)" },
	{ 'o', "close", NULL, "COMMAND does not inherit the descriptor: the keys are\n"
	  "held by ordlockctl alone, and freed if it is killed" },
	OLC_OPTION_DOMAIN("the domain of the keys (default \"default\")"),
	{ 'c', "command", "CMD", "run CMD with /bin/sh -c" },
	{ 'F', "no-fork", NULL, "do not fork: become COMMAND, which inherits the\n"
	  "descriptor (ORDLOCK_FD) and with it the keys (not with -o)" },
	{ 'u', "unlock", NULL, "with FD: release the keys (all without -s/-x)" },
	{ 'q', "quiet", NULL, "no message when the keys were not obtained" },
	{ 'L', "label", "LABEL", "name the code path (up to 31 of [A-Za-z0-9._-]): shown\n"
	  "by owners, locks, events and the learned order" },
	{ OLC_OPT_NEW_OWNER, "new-owner", NULL, "take the keys with an owner of its own, even inside\n"
	  "an exec of the same domain (ORDLOCK_FD): outside the\n"
	  "order rule and the cycle detection of that exec's owner" },
	{ 'v', "verbose", NULL, "say when the keys were obtained, and the token" },
	{ OLC_OPT_COLOR, "color", "WHEN", "auto (default: on a terminal), always, never" },
	{ OLC_OPT_COLOR, "colour", "WHEN", NULL },
	{ 'h', "help", NULL, "this help" },
	{ 0 },
};

static int olc_exec_opt(const struct olc_cmd *cmd, int c, const char *arg,
			void *args)
{
	struct olc_exec_args *a = args;
	char why[160];

	switch (c) {
	case 's':
	case 'x':
		if (a->nkeys == OLC_EXEC_MAX_KEYS)
			return olc_usage(cmd, "more than %d keys", OLC_EXEC_MAX_KEYS);
		/* a usage error before the module or the domain is asked */
		if (olc_key_syntax(arg, why, sizeof(why)))
			return olc_usage(cmd, "%s", why);
		a->texts[a->nkeys].text = arg;
		a->texts[a->nkeys].mode = c == 's' ? ORDLOCK_MODE_SHARED :
					  ORDLOCK_MODE_EXCLUSIVE;
		a->need_names |= olc_key_uses_name(arg);
		a->nkeys++;
		return -1;
	case 'w': {
		long long ms = olc_seconds_ms(arg);

		if (ms < 0)
			return olc_usage(cmd, "-w: \"%s\" is not a number of seconds", arg);
		/* flock: -w 0 does not wait */
		if (!ms)
			a->flags |= ORDLOCK_ACQUIRE_TRY;
		a->timeout_ms = (unsigned int)ms;
		return -1;
	}
	case 'n':
		a->flags |= ORDLOCK_ACQUIRE_TRY;
		return -1;
	case 'E': {
		uint32_t code;

		if (olc_parse_u32(arg, &code) || code > 255)
			return olc_usage(cmd, "-E: \"%s\" is not an exit status (0-255)", arg);
		a->conflict_code = (int)code;
		return -1;
	}
	case 'o':
		a->close_fd = 1;
		return -1;
	case 'c':
		a->shell_cmd = arg;
		return -1;
	case 'F':
		a->no_fork = 1;
		return -1;
	case 'u':
		a->unlock = 1;
		return -1;
	case 'q':
		a->quiet = 1;
		return -1;
	case 'L':
		if (strlen(arg) >= ORDLOCK_LABEL_MAX ||
		    strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
		    strlen(arg))
			return olc_usage(cmd, "--label \"%s\": up to %d characters of [A-Za-z0-9._-]",
					 arg, ORDLOCK_LABEL_MAX - 1);
		a->label = arg;
		return -1;
	case OLC_OPT_NEW_OWNER:
		a->new_owner = 1;
		return -1;
	default:
		/* -v, --color, -h */
		return olc_common_opt(cmd, c, arg);
	}
}

/*
 * exec's options and the combinations they refuse; in FD mode the owner
 * of the descriptor is opened here (@a->ol). -1 to go on, else the exit
 * status.
 */
static int olc_exec_check(const struct olc_cmd *cmd, int argc, char **argv,
			  struct olc_exec_args *a)
{
	int ret, status;

	/* the options end at COMMAND */
	ret = olc_getopt(cmd, argc, argv, a);
	if (ret >= 0)
		return ret;
	a->domain_given = a->base.domain != NULL;
	a->domain = a->domain_given ? a->base.domain : ORDLOCK_DEFAULT_DOMAIN;
	if (optind < argc)
		a->fd = olc_exec_fd_arg(argc, argv, a->shell_cmd);
	if (a->unlock && a->fd < 0)
		return olc_usage(cmd, "-u releases the keys of a descriptor: give FD, not a command");
	if (a->no_fork && a->fd >= 0)
		return olc_usage(cmd, "-F runs a command: it does not go with FD");
	/* flock(1): "the --no-fork and --close options are incompatible" */
	if (a->no_fork && a->close_fd)
		return olc_usage(cmd, "-F and -o exclude each other: without a fork, the command is the holder of the descriptor");
	if (a->unlock && a->label)
		return olc_usage(cmd, "-L names the code path of an acquire: it does not go with -u");
	if (!a->nkeys && !a->unlock)
		return olc_usage(cmd, "no keys: give at least one -s KEY or -x KEY");
	if (a->fd >= 0) {
		a->ol = olc_exec_open_fd(a->fd, &a->domain, a->domain_given, a->own_domain,
					 sizeof(a->own_domain), &status);
		if (!a->ol)
			return status;
	} else if (a->shell_cmd && optind < argc) {
		return olc_usage(cmd, "-c COMMAND and COMMAND ARGS exclude each other");
	}
	if (!a->shell_cmd && optind >= argc)
		return olc_usage(cmd, "no command to run");
	return -1;
}

/*
 * The keys of -s and -x into @a->keys, with the domain's rank names when
 * a key uses one. -1 to go on, else the exit status.
 */
static int olc_exec_keys(const struct olc_cmd *cmd, struct olc_exec_args *a)
{
	const struct olc_rank_names *names = NULL;
	struct olc_nl_domain info;
	char why[160];
	unsigned int i;
	int ret;

	if (a->need_names) {
		struct olc_nl *nl = olc_netlink(1);

		if (!nl) {
			if (olc_module_missing())
				olc_err("%s", olc_module_missing());
			else
				olc_nl_report(NULL, -ENOENT, "reading rank names");
			return OLC_EXIT_UNAVAILABLE;
		}
		ret = olc_nl_domain_get(nl, a->domain, &info);
		if (ret == -ENOENT && olc_nl_extack(nl)[0]) {
			olc_err("domain %s has no rank names (it does not exist yet)", a->domain);
			/* a key names a rank the domain does not have */
			return OLC_EXIT_USAGE;
		}
		if (ret) {
			olc_nl_report(nl, ret, "reading rank names");
			return olc_exit_errno(ret);
		}
		names = &info.names;
	}
	a->keys = calloc(a->nkeys, sizeof(*a->keys));
	if (!a->keys) {
		olc_err("out of memory");
		return OLC_EXIT_OSERR;
	}
	for (i = 0; i < a->nkeys; i++) {
		uint32_t rank;
		uint64_t id;

		if (olc_key_parse(a->texts[i].text, names, &rank, &id, why, sizeof(why)))
			return olc_usage(cmd, "%s", why);
		a->keys[i] = ordlock_key(rank, id, a->texts[i].mode);
	}
	return -1;
}

/* One run's request */
struct olc_exec_take {
	struct ordlock *ol;
	const char *domain;
	const struct ordlock_key *keys;
	unsigned int nkeys;
	unsigned int timeout_ms;
	unsigned int flags;
	int quiet;
	int conflict_code;
	int inherited;
};

/* Drop the handle: an inherited owner is the outer exec's, and keeps its keys */
static void olc_exec_drop(struct ordlock *ol, int inherited)
{
	if (inherited)
		ordlock_detach(ol);
	else
		ordlock_close(ol);
}

/*
 * The owner that takes the keys into @t: the one an enclosing exec of the
 * domain passed on (unless --new-owner), else a new one; labelled with
 * -L. -1 to go on, else the exit status.
 */
static int olc_exec_owner(const struct olc_exec_args *a, struct olc_exec_take *t)
{
	struct ordlock *ol = NULL;
	int ret, inherited = 0;

	/* inside an exec of this domain: its owner (unless --new-owner) */
	if (!a->new_owner) {
		ret = olc_exec_inherited(a->domain, &ol);
		if (ret > 0)
			return ret;
		inherited = !ret;
	}
	if (!inherited)
		ol = ordlock_open(a->domain);
	if (!ol) {
		ret = errno;
		if (ret == ENOENT && olc_module_missing())
			olc_err("%s", olc_module_missing());
		else if (ret == EACCES)
			olc_err("cannot open %s: %s (ask for access to it, or run as root)",
				ORDLOCK_DEVICE, strerror(ret));
		else
			olc_err("cannot open %s in domain %s: %s", ORDLOCK_DEVICE, a->domain,
				strerror(ret));
		return olc_exit_errno(ret);
	}
	if (a->label) {
		ret = ordlock_set_label(ol, a->label);
		if (ret) {
			olc_err("cannot set the label \"%s\": %s", a->label, strerror(-ret));
			olc_exec_drop(ol, inherited);
			return olc_exit_errno(-ret);
		}
	}
	t->ol = ol;
	t->domain = a->domain;
	t->keys = a->keys;
	t->nkeys = a->nkeys;
	t->timeout_ms = a->timeout_ms;
	t->flags = a->flags;
	t->quiet = a->quiet;
	t->conflict_code = a->conflict_code;
	t->inherited = inherited;
	return -1;
}

/* Take the keys of @t: -1 when held (*@token set), else the exit status */
static int olc_exec_take(const struct olc_exec_take *t, uint64_t *token)
{
	struct timespec t0, t1;
	int ret, conflict;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = olc_exec_acquire(t->ol, t->keys, t->nkeys, t->timeout_ms, t->flags, token);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (ret == -EBUSY && t->inherited) {
		/* another request of the shared owner is in progress */
		olc_err("the owner inherited through ORDLOCK_FD is busy with another request (an exec running in parallel in the same script?): give --new-owner to execs that run in parallel");
		return olc_exit_errno(ret);
	}
	if (ret) {
		conflict = olc_conflict(ordlock_last_failure(t->ol)->reason);
		if (!t->quiet || !conflict)
			olc_exec_failure(t->ol, t->domain, ret);
		return conflict ? t->conflict_code : olc_exit_errno(ret);
	}
	if (olc_opt.verbose)
		olc_err("holding %u key%s in domain %s (token %llu) after %.3f s%s", t->nkeys,
			t->nkeys == 1 ? "" : "s", t->domain, (unsigned long long)*token,
			(double)(t1.tv_sec - t0.tv_sec) +
			(double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
			t->inherited ? ", through the owner inherited from ORDLOCK_FD" : "");
	return -1;
}

/* Give descriptor @fd to COMMAND: kept across exec, named by ORDLOCK_FD; 0 or -1 */
static int olc_exec_pass_fd(int fd)
{
	char fdstr[16];

	snprintf(fdstr, sizeof(fdstr), "%d", fd);
	return fcntl(fd, F_SETFD, 0) || setenv("ORDLOCK_FD", fdstr, 1) ? -1 : 0;
}

/* -F: take the keys, then become COMMAND, which inherits the owner */
static int olc_exec_no_fork(const struct olc_exec_take *t, const char *shell_cmd,
			    char **command)
{
	uint64_t token = 0;
	int ret;

	olc_exec_name(shell_cmd, command);
	ret = olc_exec_take(t, &token);
	if (ret >= 0) {
		olc_exec_drop(t->ol, t->inherited);
		return ret;
	}
	if (olc_exec_pass_fd(ordlock_fd(t->ol)) || olc_exec_setenv(token, t->domain)) {
		ret = errno;
		olc_err("cannot pass the descriptor on: %s", strerror(ret));
		if (t->inherited)
			olc_exec_give_back(t->ol, t->keys, t->nkeys);
		olc_exec_drop(t->ol, t->inherited);
		return olc_exit_errno(ret);
	}
	fflush(NULL);
	ret = olc_exec_command(shell_cmd, command);
	if (t->inherited)
		olc_exec_give_back(t->ol, t->keys, t->nkeys);
	olc_exec_drop(t->ol, t->inherited);
	return ret;
}

/* The signal dispositions and mask the command gets back */
struct olc_exec_sigs {
	struct sigaction intr, quit, term, hup;
	sigset_t mask;
};

/*
 * Like system(3): the terminal's signals are for the command. SIGTERM and
 * SIGHUP are held back until olc_exec_child names the child: one that
 * came before would find no child to pass it on to and be lost, and
 * ordlockctl would wait for a command that never got it (the child gets
 * the mask back, with nothing pending).
 */
static void olc_exec_sigs_hold(struct olc_exec_sigs *s)
{
	struct sigaction sa;
	sigset_t fwd;

	sigemptyset(&fwd);
	sigaddset(&fwd, SIGTERM);
	sigaddset(&fwd, SIGHUP);
	sigprocmask(SIG_BLOCK, &fwd, &s->mask);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &s->intr);
	sigaction(SIGQUIT, &sa, &s->quit);
	sa.sa_handler = olc_exec_forward;
	sigaction(SIGTERM, &sa, &s->term);
	sigaction(SIGHUP, &sa, &s->hup);
}

static void olc_exec_sigs_restore(const struct olc_exec_sigs *s)
{
	sigaction(SIGINT, &s->intr, NULL);
	sigaction(SIGQUIT, &s->quit, NULL);
	sigaction(SIGTERM, &s->term, NULL);
	sigaction(SIGHUP, &s->hup, NULL);
	sigprocmask(SIG_SETMASK, &s->mask, NULL);
}

/*
 * The child: takes the keys named after COMMAND (the kernel notes its pid
 * and name as the holder's), tells the parent on @taken when the owner
 * is inherited, then becomes COMMAND.
 */
static void __attribute__((noreturn))
olc_exec_child_run(const struct olc_exec_take *t, const struct olc_exec_sigs *s,
		   const char *shell_cmd, char **command, int close_fd, int taken)
{
	uint64_t token = 0;
	int ret;

	olc_exec_sigs_restore(s);
	olc_exec_name(shell_cmd, command);
	ret = olc_exec_take(t, &token);
	if (ret >= 0)
		_exit(ret);
	if (t->inherited) {
		if (write(taken, &token, sizeof(token)) != sizeof(token)) {
			ret = errno;
			olc_err("cannot tell ordlockctl the keys are held: %s", strerror(ret));
			olc_exec_give_back(t->ol, t->keys, t->nkeys);
			_exit(olc_exit_errno(ret));
		}
		close(taken);
	}
	olc_exec_setenv(token, t->domain);
	if (close_fd && t->inherited) {
		/* -o: COMMAND does not get the (outer exec's) descriptor */
		close(ordlock_fd(t->ol));
		unsetenv("ORDLOCK_FD");
	} else if (!close_fd && olc_exec_pass_fd(ordlock_fd(t->ol))) {
		/* without -o the command inherits the owner, and the keys */
		ret = errno;
		olc_err("cannot pass the descriptor on: %s", strerror(ret));
		_exit(olc_exit_errno(ret));
	}
	_exit(olc_exec_command(shell_cmd, command));
}

/* Through an inherited owner: 1 once the child said it holds the keys (their token) */
static int olc_exec_child_took(int fd)
{
	uint64_t token;
	size_t got = 0;
	ssize_t n;

	/* EOF when it does not */
	while (got < sizeof(token)) {
		n = read(fd, (char *)&token + got, sizeof(token) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got == sizeof(token);
}

/* Wait for the child @pid: its wait status, or -1 */
static int olc_exec_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			olc_err("waitpid: %s", strerror(errno));
			return -1;
		}
	}
	return status;
}

/* COMMAND ended: let go of the owner (@took: the child took the keys) */
static void olc_exec_let_go(const struct olc_exec_take *t, int close_fd, int took)
{
	int fd;

	if (t->inherited) {
		/* what this exec took goes, the owner stays */
		if (took)
			olc_exec_give_back(t->ol, t->keys, t->nkeys);
		ordlock_detach(t->ol);
	} else if (close_fd) {
		/*
		 * With -o the keys are released here. Otherwise ordlockctl only
		 * drops its descriptor: what the command left running with its
		 * inherited copy keeps the keys, as flock(1)'s daemon keeps its
		 * lock
		 */
		ordlock_close(t->ol);
	} else {
		fd = ordlock_fd(t->ol);
		ordlock_detach(t->ol);
		close(fd);
	}
}

/* exec's exit status for the child's wait status (-1: waitpid failed) */
static int olc_exec_status(int status)
{
	if (status == -1)
		return OLC_EXIT_OSERR;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return OLC_EXIT_OSERR;
}

/*
 * The child takes the keys, then becomes COMMAND: the kernel notes its pid
 * and (olc_exec_name()) the command's name as the holder's; the views
 * follow it from ordlockctl's pid (olc_pid_match()). It has the
 * descriptor from fork() on, so killing ordlockctl at any moment frees
 * nothing the child holds or will hold. ordlockctl waits for it.
 */
static int olc_exec_fork(const struct olc_exec_take *t, const char *shell_cmd,
			 char **command, int close_fd)
{
	struct olc_exec_sigs s;
	int taken[2] = { -1, -1 }, took = 0, ret, status;
	pid_t pid;

	/*
	 * Through an inherited owner the child says on a pipe that it took the
	 * keys (their token), so that only then are they released after
	 * COMMAND: a request that failed took nothing, and releasing its keys
	 * would release the outer exec's.
	 */
	if (t->inherited && pipe2(taken, O_CLOEXEC)) {
		ret = errno;
		olc_err("pipe: %s", strerror(ret));
		olc_exec_drop(t->ol, t->inherited);
		return olc_exit_errno(ret);
	}
	olc_exec_sigs_hold(&s);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = errno;
		olc_exec_sigs_restore(&s);
		olc_err("fork: %s", strerror(ret));
		if (t->inherited) {
			close(taken[0]);
			close(taken[1]);
		}
		olc_exec_drop(t->ol, t->inherited);
		return olc_exit_errno(ret);
	}
	if (!pid)
		olc_exec_child_run(t, &s, shell_cmd, command, close_fd, taken[1]);
	olc_exec_child = pid;
	sigprocmask(SIG_SETMASK, &s.mask, NULL);
	if (t->inherited) {
		close(taken[1]);
		took = olc_exec_child_took(taken[0]);
		close(taken[0]);
	}
	status = olc_exec_wait(pid);
	olc_exec_child = 0;
	olc_exec_let_go(t, close_fd, took);
	return olc_exec_status(status);
}

static int olc_exec_run(const struct olc_cmd *cmd, int argc, char **argv)
{
	struct olc_exec_args a = {
		.timeout_ms = OLC_EXEC_FOREVER_MS,
		.conflict_code = 1,
		.fd = -1,
	};
	struct olc_exec_take t = { 0 };
	int ret;

	a.texts = calloc(OLC_EXEC_MAX_KEYS, sizeof(*a.texts));
	if (!a.texts) {
		olc_err("out of memory");
		return OLC_EXIT_OSERR;
	}
	ret = olc_exec_check(cmd, argc, argv, &a);
	if (ret < 0)
		ret = olc_exec_keys(cmd, &a);
	if (ret < 0 && a.fd >= 0) {
		ret = olc_exec_on_fd(a.ol, a.fd, a.domain, a.keys, a.nkeys, a.unlock,
				     a.timeout_ms, a.flags, a.quiet, a.conflict_code, a.label);
	} else if (ret < 0) {
		ret = olc_exec_owner(&a, &t);
		if (ret < 0 && a.no_fork)
			ret = olc_exec_no_fork(&t, a.shell_cmd, &argv[optind]);
		else if (ret < 0)
			ret = olc_exec_fork(&t, a.shell_cmd, &argv[optind], a.close_fd);
	}
	free(a.texts);
	free(a.keys);
	return ret;
}

const struct olc_cmd olc_cmd_exec = {
	.name = "exec",
	.run = olc_exec_run,
	.options = olc_exec_options,
	.opt = olc_exec_opt,
	.flags = OLC_CMD_ARGS | OLC_CMD_COMMAND | OLC_CMD_OWN | OLC_CMD_DOMAIN,
	.summary = "run a command while holding keys (like flock(1))",
	.usage = "exec [-s KEY]... [-x KEY]... [-w SECONDS] [-n] [-E CODE] [-o] [-F] [-q] [-L LABEL] [--new-owner] [-d DOMAIN] -- COMMAND [ARGS]...\n"
		 "exec [-s KEY]... [-x KEY]... [options] -c 'SHELL COMMAND'\n"
		 "exec [-s KEY]... [-x KEY]... [options] FD\n"
		 "exec -u [-s KEY]... [-x KEY]... FD",
	.about =
	"Takes every KEY in one request (all or nothing; the kernel sorts them, so\n"
	"exec never violates the order), runs COMMAND while holding them, lets them\n"
	"go when it ends and exits with its status (128+N when signal N killed\n"
	"it). COMMAND gets ORDLOCK_TOKEN (the fencing token of the grant) and\n"
	"ORDLOCK_DOMAIN in its environment. As with flock(1), COMMAND inherits the\n"
	"descriptor that holds the keys (ORDLOCK_FD): they stay held while COMMAND,\n"
	"or anything it left running with the descriptor, still runs, even if\n"
	"ordlockctl is killed (-o: not inherited).\n",
	.help =
	"Why the keys were not obtained is printed with the culprit, e.g.\n"
	"\"timed out waiting for exclusive 1:2 held (exclusive) by pid 102\"; a\n"
	"deadlock victim also gets the cycle.\n"
	"\n"
	"Exit status, as flock(1): COMMAND's (128+N when signal N killed it; 126\n"
	"it cannot be run, 127 not found); 1, or -E CODE, when the keys were not\n"
	"obtained; ordlockctl's own failures, as sysexits(3) and flock(1): 64 usage,\n"
	"65 the kernel refused the request as wrong (an order violation on FD, a key\n"
	"to release not held), 66 FD is not open on /dev/ordlock, 69 the module is\n"
	"not loaded (or no such domain), 71 a system call failed, 75 a kernel limit\n"
	"or busy, 77 permission denied. Use -E with a code COMMAND never returns\n"
	"(e.g. -E 75) to tell \"busy\" from COMMAND's own 1.\n"
	"\n"
	"The keys are taken by the child that becomes COMMAND, named after it:\n"
	"\"ordlockctl locks\" shows COMMAND's pid and name as the holder; given\n"
	"ordlockctl's pid ($! of \"ordlockctl exec ... &\"), blockers PID and -p PID\n"
	"of locks and owners answer for COMMAND.\n"
	"ordlockctl ignores SIGINT and SIGQUIT while COMMAND runs (they reach it from\n"
	"the terminal) and passes SIGTERM and SIGHUP on to it.\n"
	"\n"
	"With FD (a number) instead of COMMAND, as flock(1) does: take the keys on\n"
	"descriptor FD, open on /dev/ordlock, and exit. The keys stay held by that\n"
	"open file description until it is closed, or \"exec -u FD\" releases them:\n"
	"  ( ordlockctl exec -n -x 1:1 9 || exit 1; critical section ) 9<>/dev/ordlock\n"
	"Without -d the keys are in the descriptor's own domain.\n"
	"\n"
	"Nested: inside an exec of the same domain (its owner is in ORDLOCK_FD),\n"
	"exec acquires through that owner, so the order rule and the cycle\n"
	"detection see one owner per script: \"exec -x 1:2 -- ordlockctl exec -x 1:1\n"
	"-- cmd\" is an order violation in an enforce domain. When COMMAND ends it\n"
	"releases only the keys it took; the outer exec's stay held. --new-owner\n"
	"takes an owner of its own instead; an owner of another domain is left alone.\n"
	"ORDLOCK_FD that is not open on /dev/ordlock is refused (66).\n",
};
