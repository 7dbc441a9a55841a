// SPDX-License-Identifier: GPL-2.0
/*
 * t_users: permissions, per-owner isolation and per-user limits, with
 * unprivileged users.
 *
 * Agents are child processes that become uid 60001 (A), 60002 (B), 60003
 * (C) or 60004 (D) (setgroups, setresgid, setresuid: no /etc/passwd entry
 * needed) and then run the operations the test sends them through shared
 * memory.
 *
 *  - permissions: /dev/ordlock has mode dev_mode (0660, root); a user
 *    outside its group gets EACCES, a user of the group it was given
 *    (chgrp, as the udev rule does) opens it; mode 0600 keeps the group
 *    out too; policy changes are EPERM for users (ioctl and netlink); the
 *    debugfs files are 0400 root and unreadable to users; joining the
 *    "events" group is EPERM for users.
 *  - isolation: A cannot release or convert B's keys (ENOENT, not-held,
 *    nothing changes), nor cancel B's queued netlink request (ENOENT, B's
 *    request goes on), nor release it through netlink; A's netlink dumps
 *    show only A's owners, holds and waits, root's show everybody.
 *  - limits (max_keys_per_user, max_waiters_per_user, max_owners_per_user):
 *    A hits each one: EDQUOT, reason user-limit, a LIMIT event, the counts
 *    of debugfs "users" unchanged; B and root go on in the same and other
 *    domains; keys of failed, timed out and cancelled requests are given
 *    back; a root process without CAP_SYS_RESOURCE is limited, one with it
 *    is not; when A dies (holding keys, waiting through netlink) and when
 *    the others quit, their lines leave the "users" file.
 *  - domains (max_domains_per_user): D creates domains up to the limit;
 *    the next new domain is refused with EDQUOT, reason user-limit (ioctl:
 *    libordlock's and the kernel's failure records; netlink: the extack
 *    names the limit), a LIMIT event naming it, the owner stays where it
 *    was and the domain does not exist; D still joins domains root and B
 *    created, B still creates them; closing the owners frees the domains
 *    and D's count goes back to 0; a domain stays its creator's while
 *    another user is in it; root is not refused, a root process without
 *    CAP_SYS_RESOURCE is.
 */
#define _GNU_SOURCE		/* setresuid(), setresgid() */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "graphtest.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

#define SH ORDLOCK_MODE_SHARED
#define EX ORDLOCK_MODE_EXCLUSIVE

#define UID_A		60001
#define UID_B		60002
#define UID_C		60003
#define UID_D		60004
#define GID_LOCKERS	60100	/* the group /dev/ordlock is given */

#define NS_PER_MS	1000000ULL
#define LONG_MS		60000
#define WAIT_MS		20000
#define MAX_SLOTS	4
#define MAX_KEYS	8

#define USERS_FILE	GT_DEBUGFS "users"

/* --- agents: processes of another user, driven through shared memory ----- */

enum op {
	OP_QUIT,
	OP_OPEN,		/* slot, domain ("": default) */
	OP_CLOSE,		/* slot */
	OP_SET_DOMAIN,		/* slot, domain */
	OP_ACQUIRE,		/* slot, keys, n, timeout_ms, flags */
	OP_RELEASE,		/* slot, keys, n (0: all) */
	OP_CONVERT,		/* slot, keys[0], timeout_ms, flags */
	OP_NHELD,		/* slot -> value */
	OP_SET_POLICY,		/* slot, domain -> ret; value: read ret */
	OP_OPEN_PATH,		/* path */
	OP_NL_OPEN,		/* slot */
	OP_NL_ACQUIRE,		/* slot, domain, keys, n, timeout_ms, flags, cookie */
	OP_NL_CANCEL,		/* slot, cookie */
	OP_NL_RELEASE,		/* slot, keys, n (0: all) */
	OP_NL_RESULT,		/* slot, timeout_ms */
	OP_NL_DOMAIN_SET,	/* slot, domain */
	OP_NL_SUBSCRIBE,	/* slot */
	OP_NL_DUMP,		/* slot, cmd, domain, keys[0..1] to look for */
	OP_WHERE,		/* slot -> where: the owner's domain */
};

struct agent {
	uid_t uid;
	gid_t gid;
	char comm[16];
	pid_t pid;
	int started;		/* 0 when it became its user, else -errno */
	struct pbarrier *go, *done;
	/* the operation */
	enum op op;
	unsigned int slot;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	char path[128];
	struct ordlock_key keys[MAX_KEYS];
	unsigned int n;
	unsigned int timeout_ms;
	unsigned int flags;
	uint64_t cookie;
	uint8_t cmd;
	/* its outcome */
	int ret;
	struct ordlock_failure failure;
	struct ordlock_failure kfailure;	/* OP_SET_DOMAIN: LAST_FAILURE */
	char extack[256];			/* OP_NL_*: a netlink error's */
	char where[ORDLOCK_DOMAIN_NAME_MAX];
	uint64_t elapsed_ms;
	long value;
	uint32_t status, error;
	int nentries, nforeign, found[2];
};

static int agent_become(struct agent *a)
{
	pid_t parent = getppid();

	if (setgroups(0, NULL) || setresgid(a->gid, a->gid, a->gid) ||
	    setresuid(a->uid, a->uid, a->uid))
		return -errno;
	/* a change of credentials clears both */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_DUMPABLE, 1);
	if (getppid() != parent)
		return -ESRCH;
	prctl(PR_SET_NAME, a->comm, 0, 0, 0);
	return 0;
}

static struct ordlock *ols[MAX_SLOTS];
static struct nlt *nls[MAX_SLOTS];

static void agent_nl_outcome(struct agent *a, int ret, const struct olc_nl_outcome *o,
			     const struct nlt *s)
{
	a->ret = ret;
	if (ret < 0 && s)
		snprintf(a->extack, sizeof(a->extack), "%s", s->nl->ext.msg);
	if (!ret) {
		a->status = o->status;
		a->error = o->error;
		a->failure = o->failure;
	}
}

static void agent_dump(struct agent *a, struct nlt *s)
{
	struct olc_nl_entry *e = NULL;
	int i, j, n;

	n = nlt_dump(s, a->cmd, a->domain[0] ? a->domain : NULL, &e);
	a->ret = n < 0 ? n : 0;
	a->nentries = n;
	for (i = 0; i < n; i++) {
		if (a->cmd == ORDLOCK_CMD_GET_OWNERS &&
		    (!OLC_NL_HAS(&e[i], ORDLOCK_E_UID) || e[i].uid != a->uid))
			a->nforeign++;
		for (j = 0; j < 2; j++)
			if (a->cmd != ORDLOCK_CMD_GET_OWNERS &&
			    olt_key_eq(&e[i].key, a->keys[j].rank, a->keys[j].id, 0))
				a->found[j]++;
	}
	free(e);
}

static void agent_do(struct agent *a)
{
	struct ordlock *ol = a->slot < MAX_SLOTS ? ols[a->slot] : NULL;
	struct nlt *s = a->slot < MAX_SLOTS ? nls[a->slot] : NULL;
	const char *dom = a->domain[0] ? a->domain : NULL;
	struct ordlock_domain_config cfg;
	struct ordlock_owner_info info;
	struct olc_nl_outcome o;
	uint64_t t0;
	int fd, err = 0;

	a->ret = 0;
	a->value = 0;
	a->status = a->error = 0;
	a->nentries = a->nforeign = a->found[0] = a->found[1] = 0;
	memset(&a->failure, 0, sizeof(a->failure));
	memset(&a->kfailure, 0, sizeof(a->kfailure));
	a->extack[0] = a->where[0] = '\0';
	memset(&o, 0, sizeof(o));
	switch (a->op) {
	case OP_OPEN:
		ols[a->slot] = ordlock_open(dom);
		a->ret = ols[a->slot] ? 0 : -errno;
		break;
	case OP_CLOSE:
		ordlock_close(ol);
		ols[a->slot] = NULL;
		break;
	case OP_SET_DOMAIN:
		a->ret = ordlock_set_domain(ol, a->domain);
		a->failure = *ordlock_last_failure(ol);
		if (a->ret && ordlock_kernel_last_failure(ol, &a->kfailure))
			a->kfailure.reason = ~0U;
		break;
	case OP_WHERE:
		a->ret = ordlock_owner_info(ol, &info);
		if (!a->ret)
			snprintf(a->where, sizeof(a->where), "%s", info.domain);
		break;
	case OP_ACQUIRE:
		t0 = now_ms();
		a->ret = ordlock_acquire(ol, a->keys, a->n, a->timeout_ms, a->flags, NULL);
		a->elapsed_ms = now_ms() - t0;
		a->failure = *ordlock_last_failure(ol);
		break;
	case OP_RELEASE:
		a->ret = a->n ? ordlock_release(ol, a->keys, a->n) : ordlock_release_all(ol);
		a->failure = *ordlock_last_failure(ol);
		break;
	case OP_CONVERT:
		t0 = now_ms();
		a->ret = ordlock_convert(ol, a->keys[0], a->timeout_ms, a->flags, NULL);
		a->elapsed_ms = now_ms() - t0;
		a->failure = *ordlock_last_failure(ol);
		break;
	case OP_NHELD:
		a->value = olt_nheld(ol);
		break;
	case OP_SET_POLICY:
		a->ret = ordlock_set_policy(ol, a->domain, ORDLOCK_POLICY_TIMEOUT, 0);
		memset(&cfg, 0, sizeof(cfg));
		a->value = ordlock_domain_config(ol, a->domain, &cfg);
		break;
	case OP_OPEN_PATH:
		fd = open(a->path, O_RDONLY | O_CLOEXEC);
		a->ret = fd < 0 ? -errno : 0;
		if (fd >= 0)
			close(fd);
		break;
	case OP_NL_OPEN:
		nls[a->slot] = nlt_open(&err);
		a->ret = nls[a->slot] ? 0 : err;
		break;
	case OP_NL_ACQUIRE:
		agent_nl_outcome(a, nlt_acquire(s, dom, a->keys, a->n,
						(uint64_t)a->timeout_ms * NS_PER_MS,
						a->flags, a->cookie, &o), &o, s);
		break;
	case OP_NL_CANCEL:
		agent_nl_outcome(a, nlt_cancel(s, a->cookie, &o), &o, s);
		break;
	case OP_NL_RELEASE:
		agent_nl_outcome(a, nlt_release(s, a->keys, a->n, &o), &o, s);
		break;
	case OP_NL_RESULT:
		agent_nl_outcome(a, nlt_wait_result(s, a->timeout_ms, &o), &o, s);
		break;
	case OP_NL_DOMAIN_SET:
		a->ret = nlt_domain_set(s, a->domain, ORDLOCK_POLICY_TIMEOUT, 9,
					NULL, -1, NULL);
		break;
	case OP_NL_SUBSCRIBE:
		a->ret = nlt_subscribe(s);
		break;
	case OP_NL_DUMP:
		agent_dump(a, s);
		break;
	case OP_QUIT:
		break;
	}
}

static int agent_main(void *arg)
{
	struct agent *a = arg;

	a->started = agent_become(a);
	if (pbarrier_wait(a->done) || a->started)
		return 1;
	for (;;) {
		if (pbarrier_wait(a->go))
			return 2;
		if (a->op == OP_QUIT)
			return 0;
		agent_do(a);
		if (pbarrier_wait(a->done))
			return 3;
	}
}

static struct agent *agent_start(const char *comm, uid_t uid, gid_t gid)
{
	struct agent *a = shm_alloc(sizeof(*a));

	snprintf(a->comm, sizeof(a->comm), "%s", comm);
	a->uid = uid;
	a->gid = gid;
	a->go = pbarrier_new(2);
	a->done = pbarrier_new(2);
	a->pid = child_start(agent_main, a);
	if (pbarrier_wait(a->done) || a->started)
		bail_out("agent %s cannot become uid %u gid %u: %s", comm,
			 (unsigned int)uid, (unsigned int)gid,
			 strerror(-a->started));
	return a;
}

/* Start an operation; the fields of @a were set by the caller */
static void agent_submit(struct agent *a, enum op op, unsigned int slot)
{
	a->op = op;
	a->slot = slot;
	if (pbarrier_wait(a->go))
		bail_out("agent %s does not answer", a->comm);
}

static int agent_collect(struct agent *a)
{
	if (pbarrier_wait(a->done))
		bail_out("agent %s does not answer", a->comm);
	return a->ret;
}

static int agent_call(struct agent *a, enum op op, unsigned int slot)
{
	agent_submit(a, op, slot);
	return agent_collect(a);
}

static void agent_keys(struct agent *a, const struct ordlock_key *keys,
		       unsigned int n)
{
	if (n)
		memcpy(a->keys, keys, n * sizeof(*keys));
	a->n = n;
}

static void agent_domain(struct agent *a, const char *domain)
{
	snprintf(a->domain, sizeof(a->domain), "%s", domain ? domain : "");
}

static int ag_open(struct agent *a, unsigned int slot, const char *domain)
{
	agent_domain(a, domain);
	return agent_call(a, OP_OPEN, slot);
}

static int ag_acquire(struct agent *a, unsigned int slot,
		      const struct ordlock_key *keys, unsigned int n,
		      unsigned int timeout_ms, unsigned int flags)
{
	agent_keys(a, keys, n);
	a->timeout_ms = timeout_ms;
	a->flags = flags;
	return agent_call(a, OP_ACQUIRE, slot);
}

static int ag_release(struct agent *a, unsigned int slot,
		      const struct ordlock_key *keys, unsigned int n)
{
	agent_keys(a, keys, n);
	return agent_call(a, OP_RELEASE, slot);
}

static long ag_nheld(struct agent *a, unsigned int slot)
{
	agent_call(a, OP_NHELD, slot);
	return a->value;
}

static int ag_nl_acquire(struct agent *a, unsigned int slot, const char *domain,
			 const struct ordlock_key *keys, unsigned int n,
			 unsigned int timeout_ms, uint64_t cookie)
{
	agent_domain(a, domain);
	agent_keys(a, keys, n);
	a->timeout_ms = timeout_ms;
	a->flags = 0;
	a->cookie = cookie;
	return agent_call(a, OP_NL_ACQUIRE, slot);
}

static int ag_nl_cancel(struct agent *a, unsigned int slot, uint64_t cookie)
{
	a->cookie = cookie;
	return agent_call(a, OP_NL_CANCEL, slot);
}

static int ag_nl_release(struct agent *a, unsigned int slot,
			 const struct ordlock_key *keys, unsigned int n)
{
	agent_keys(a, keys, n);
	return agent_call(a, OP_NL_RELEASE, slot);
}

static int ag_nl_result(struct agent *a, unsigned int slot, unsigned int wait_ms)
{
	a->timeout_ms = wait_ms;
	return agent_call(a, OP_NL_RESULT, slot);
}

static int ag_nl_dump(struct agent *a, unsigned int slot, uint8_t cmd,
		      const char *domain, struct ordlock_key k0,
		      struct ordlock_key k1)
{
	agent_domain(a, domain);
	a->cmd = cmd;
	a->keys[0] = k0;
	a->keys[1] = k1;
	return agent_call(a, OP_NL_DUMP, slot);
}

static int agent_stop(struct agent *a)
{
	int ret;

	a->op = OP_QUIT;
	if (pbarrier_wait(a->go))
		diag("agent %s does not answer: killing it", a->comm);
	ret = child_wait(a->pid, 20);
	pbarrier_free(a->go);
	pbarrier_free(a->done);
	shm_free(a, sizeof(*a));
	return ret;
}

/* --- the "users" debugfs file -------------------------------------------- */

struct counts {
	long owners, keys, waiters, refused, domains;
};

/*
 * The line of @uid in the users file: 1 (and *@c), 0 when there is none,
 * -errno when the file cannot be read or is malformed.
 */
static int user_counts(unsigned int uid, struct counts *c)
{
	char *buf = gt_read_file(USERS_FILE), *line, *save;
	unsigned int u;
	int found = 0, first = 1, n;

	memset(c, 0, sizeof(*c));
	if (!buf)
		return -errno ? -errno : -EIO;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (first) {
			first = 0;
			if (strcmp(line, "# ordlock users v1")) {
				diag("users: first line \"%s\"", line);
				found = -EPROTO;
				break;
			}
			continue;
		}
		if (!strncmp(line, "# uid ", 6) &&
		    strcmp(line, "# uid owners keys waiters refused domains edges edges_dropped")) {
			diag("users: fields \"%s\"", line);
			found = -EPROTO;
			break;
		}
		if (line[0] == '#')
			continue;
		n = sscanf(line, "%u %ld %ld %ld %ld %ld", &u, &c[0].owners,
			   &c[0].keys, &c[0].waiters, &c[0].refused, &c[0].domains);
		if (n != 6) {
			diag("users: bad line \"%s\"", line);
			found = -EPROTO;
			break;
		}
		if (u == uid) {
			found = 1;
			break;
		}
	}
	if (found != 1)
		memset(c, 0, sizeof(*c));
	free(buf);
	return found;
}

/* Ok when @uid has exactly these counts */
static int counts_are(unsigned int uid, long owners, long keys, long waiters,
		      long refused, const char *what)
{
	struct counts c;
	int r = user_counts(uid, &c);
	int cond = r == 1 && c.owners == owners && c.keys == keys &&
		   c.waiters == waiters && c.refused == refused;

	ok(cond, "%s: users: uid %u owners %ld keys %ld waiters %ld refused %ld",
	   what, uid, owners, keys, waiters, refused);
	if (!cond)
		diag("  found %d: owners %ld keys %ld waiters %ld refused %ld",
		     r, c.owners, c.keys, c.waiters, c.refused);
	return cond;
}

/* Ok when @uid has exactly these counts, waiting for nothing */
static int dcounts_are(unsigned int uid, long owners, long keys, long refused,
		       long domains, const char *what)
{
	struct counts c;
	int r = user_counts(uid, &c);
	int cond = r == 1 && c.owners == owners && c.keys == keys &&
		   !c.waiters && c.refused == refused && c.domains == domains;

	ok(cond, "%s: users: uid %u owners %ld keys %ld refused %ld domains %ld",
	   what, uid, owners, keys, refused, domains);
	if (!cond)
		diag("  found %d: owners %ld keys %ld waiters %ld refused %ld domains %ld",
		     r, c.owners, c.keys, c.waiters, c.refused, c.domains);
	return cond;
}

/* The domains of @uid in the users file, -1 without a line */
static long domains_of(unsigned int uid)
{
	struct counts c;

	return user_counts(uid, &c) == 1 ? c.domains : -1;
}

/* Wait up to 5 s for @uid to leave the users file */
static int user_gone(unsigned int uid)
{
	struct counts c;
	uint64_t t0 = now_ms();
	int r;

	while ((r = user_counts(uid, &c)) == 1 && now_ms() - t0 < 5000)
		usleep(10000);
	if (r)
		diag("  uid %u: found %d: owners %ld keys %ld waiters %ld", uid,
		     r, c.owners, c.keys, c.waiters);
	return r == 0;
}

/* --- the device's mode and group ----------------------------------------- */

static struct stat dev_saved;
static int dev_changed;

static void dev_restore(void)
{
	if (!dev_changed)
		return;
	if (chown(ORDLOCK_DEVICE, dev_saved.st_uid, dev_saved.st_gid) ||
	    chmod(ORDLOCK_DEVICE, dev_saved.st_mode & 07777))
		diag("cannot restore %s: %s", ORDLOCK_DEVICE, strerror(errno));
}

static int dev_set(gid_t gid, mode_t mode)
{
	dev_changed = 1;
	if (chown(ORDLOCK_DEVICE, 0, gid) || chmod(ORDLOCK_DEVICE, mode))
		return -errno;
	return 0;
}

/* --- shared state of the test -------------------------------------------- */

static struct agent *A, *B, *C;
static struct nlt *L;		/* root, subscribed to the events */
static char dom[ORDLOCK_DOMAIN_NAME_MAX];	/* isolation */
static char lim1[ORDLOCK_DOMAIN_NAME_MAX], lim2[ORDLOCK_DOMAIN_NAME_MAX];

/* slots of A and B */
enum { DEV1, DEV2, DEV3 };
enum { NL1, NL2 };

static int failure_is(const struct agent *a, int ret, int err, uint32_t reason,
		      const char *what)
{
	int cond = ret == -err && a->failure.reason == reason &&
		   a->failure.error == (uint32_t)err;

	ok(cond, "%s: %s, reason %s", what, strerror(err), ordlock_reason_name(reason));
	if (!cond)
		diag("  ret %d (%s), failure %s/%u: %s", ret, strerror(-ret),
		     ordlock_reason_name(a->failure.reason), a->failure.error,
		     olt_fail_str(&a->failure));
	return cond;
}

static int limit_event(const char *domain, unsigned int uid, pid_t pid,
		       int any_owner, const char *what)
{
	struct olc_nl_event ev;
	int ret = nlt_wait_event(L, ORDLOCK_EVENT_LIMIT, domain, WAIT_MS, &ev);
	int cond = !ret && ev.have_failure &&
		   ev.failure.reason == ORDLOCK_REASON_USER_LIMIT &&
		   ev.failure.error == EDQUOT &&
		   OLC_NL_HAS(&ev.owner, ORDLOCK_E_UID) && ev.owner.uid == uid &&
		   ev.owner.pid == (uint32_t)pid &&
		   (any_owner || ev.owner.owner_id == 0);

	ok(cond, "%s: a LIMIT event in %s: user-limit, EDQUOT, uid %u, pid %d",
	   what, domain, uid, (int)pid);
	if (ret)
		diag("  %s", strerror(-ret));
	else if (!cond)
		diag("  reason %u errno %u uid %u pid %u owner %llu", ev.failure.reason,
		     ev.failure.error, ev.owner.uid, ev.owner.pid,
		     (unsigned long long)ev.owner.owner_id);
	return cond;
}

/* --- permissions --------------------------------------------------------- */

static void test_permissions(void)
{
	static const char * const files[] = {
		"locks", "graph", "owners", "deadlocks", "stats", "users",
	};
	long dev_mode = olt_param_get("dev_mode");
	struct ordlock_key k = ORDLOCK_SH(9, 9);
	struct stat st;
	unsigned int i, bad = 0;
	int ret;

	diag("permissions");
	ret = stat(ORDLOCK_DEVICE, &st);
	ok(!ret && st.st_uid == 0 &&
	   (long)(st.st_mode & 07777) == dev_mode && dev_mode == 0660,
	   "/dev/ordlock: root, mode dev_mode (%lo; param %lo)",
	   (unsigned long)(st.st_mode & 07777), dev_mode);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		char path[128];

		snprintf(path, sizeof(path), GT_DEBUGFS "%s", files[i]);
		if (stat(path, &st) || st.st_uid || (st.st_mode & 0777) != 0400) {
			diag("  %s: %s, mode %o, uid %u", path,
			     strerror(errno), st.st_mode & 0777, st.st_uid);
			bad++;
		}
	}
	is_int(bad, 0, "debugfs: every file is root's, mode 0400");

	is_int(dev_set(GID_LOCKERS, 0660), 0, "chgrp %d, chmod 0660 /dev/ordlock",
	       GID_LOCKERS);
	is_int(ag_open(C, DEV1, NULL), -EACCES,
	       "uid %d outside the group: open: EACCES", UID_C);
	is_int(agent_call(C, OP_NL_OPEN, NL1), 0, "C opens a netlink socket");
	is_int(ag_nl_acquire(C, NL1, dom, &k, 1, 1000, 1), -EACCES,
	       "C's netlink ACQUIRE: EACCES, as the device");
	is_int(ag_nl_release(C, NL1, NULL, 0), -EACCES,
	       "C's netlink RELEASE too (it would make an owner)");
	is_int(ag_open(A, DEV1, NULL), 0, "uid %d in the group: open works", UID_A);
	is_int(dev_set(GID_LOCKERS, 0600), 0, "chmod 0600");
	is_int(ag_open(B, DEV1, NULL), -EACCES,
	       "mode 0600: uid %d of the group: open: EACCES", UID_B);
	is_int(agent_call(B, OP_NL_OPEN, NL1), 0, "B opens a netlink socket");
	is_int(ag_nl_acquire(B, NL1, dom, &k, 1, 1000, 1), -EACCES,
	       "mode 0600: B's netlink ACQUIRE: EACCES");
	is_int(dev_set(GID_LOCKERS, 0660), 0, "chmod 0660 again");
	is_int(ag_open(B, DEV1, NULL), 0, "then uid %d opens", UID_B);
	ok(!ag_nl_acquire(B, NL1, dom, &k, 1, 1000, 1) &&
	   B->status == ORDLOCK_STATUS_GRANTED, "and locks through netlink");
	ok(!ag_nl_release(B, NL1, NULL, 0) && B->status == ORDLOCK_STATUS_GRANTED,
	   "and releases");

	agent_domain(A, dom);
	is_int(agent_call(A, OP_SET_POLICY, DEV1), -EPERM,
	       "ioctl DOMAIN_CONFIG: changing a policy as uid %d: EPERM", UID_A);
	is_int(A->value, 0, "reading it is allowed");
	is_int(agent_call(A, OP_NL_OPEN, NL1), 0, "A opens a netlink socket");
	agent_domain(A, dom);
	is_int(agent_call(A, OP_NL_DOMAIN_SET, NL1), -EPERM,
	       "netlink DOMAIN_SET as uid %d: EPERM", UID_A);
	snprintf(A->path, sizeof(A->path), "%s", USERS_FILE);
	is_int(agent_call(A, OP_OPEN_PATH, 0), -EACCES, "debugfs users: EACCES for A");
	snprintf(A->path, sizeof(A->path), GT_DEBUGFS "locks");
	is_int(agent_call(A, OP_OPEN_PATH, 0), -EACCES, "debugfs locks: EACCES for A");
	is_int(agent_call(A, OP_NL_SUBSCRIBE, NL1), -EPERM,
	       "joining the events group as uid %d: EPERM", UID_A);
}

/* --- isolation ------------------------------------------------------------ */

static void test_isolation(void)
{
	struct ordlock_key b_keys[] = { ORDLOCK_EX(7, 1), ORDLOCK_EX(7, 2) };
	struct ordlock_key k71 = ORDLOCK_EX(7, 1), k73 = ORDLOCK_EX(7, 3);
	struct ordlock_key k81 = ORDLOCK_EX(8, 1);
	struct ordlock *root = olt_open(dom);
	struct olc_nl_entry e;
	int ret;

	diag("isolation");
	agent_domain(B, dom);
	ok(!agent_call(B, OP_SET_DOMAIN, DEV1) && !ag_acquire(B, DEV1, b_keys, 2, LONG_MS, 0),
	   "B holds exclusive 7:1 and 7:2");
	agent_domain(A, dom);
	is_int(agent_call(A, OP_SET_DOMAIN, DEV1), 0, "A's owner is in the same domain");

	ret = ag_release(A, DEV1, &k71, 1);
	failure_is(A, ret, ENOENT, ORDLOCK_REASON_NOT_HELD, "A releases B's 7:1");
	ok(olt_key_eq(&A->failure.key, 7, 1, 0), "the failure names 7:1");
	agent_keys(A, &k71, 1);
	A->keys[0].mode = SH;
	A->timeout_ms = 1000;
	A->flags = 0;
	ret = agent_call(A, OP_CONVERT, DEV1);
	failure_is(A, ret, ENOENT, ORDLOCK_REASON_NOT_HELD, "A converts B's 7:1 to shared");
	is_int(ag_release(A, DEV1, NULL, 0), 0, "A's RELEASE_ALL works");
	is_int(ag_nheld(B, DEV1), 2, "B still holds its 2 keys");
	is_errno(olt_probe(dom, 7, 1, SH), EAGAIN, "7:1 is still exclusive");
	is_errno(olt_probe(dom, 7, 2, SH), EAGAIN, "7:2 too");

	/* netlink: B queues behind root, A cannot cancel it */
	is_int(ordlock_acquire(root, &k81, 1, LONG_MS, 0, NULL), 0, "root holds 8:1");
	ok(!ag_nl_acquire(B, NL1, dom, &k81, 1, LONG_MS, 77) &&
	   B->status == ORDLOCK_STATUS_QUEUED, "B's netlink request for 8:1 is queued (cookie 77)");
	ok(!ag_nl_acquire(A, NL1, dom, &k81, 1, LONG_MS, 78) &&
	   A->status == ORDLOCK_STATUS_QUEUED, "A's too, behind it (cookie 78)");
	is_int(ag_nl_cancel(A, NL1, 77), -ENOENT, "A cancels cookie 77 (B's): ENOENT");
	ok(!ag_nl_cancel(A, NL1, 78) && A->status == ORDLOCK_STATUS_CANCELLED,
	   "A cancels its own cookie 78: CANCELLED");
	ok(!nlt_find_lock(L, dom, 8, 1, ORDLOCK_ROLE_WAITER, 0, &e) &&
	   e.pid == (uint32_t)B->pid && nlt_find_lock(L, dom, 8, 1, ORDLOCK_ROLE_WAITER, 1, &e),
	   "B's request is still queued, alone");
	is_int(ordlock_release_all(root), 0, "root releases 8:1");
	ok(!ag_nl_result(B, NL1, WAIT_MS) && B->status == ORDLOCK_STATUS_GRANTED,
	   "B's request is granted");
	ok(!ag_nl_release(A, NL1, &k81, 1) && A->status == ORDLOCK_STATUS_REFUSED &&
	   A->error == ENOENT && A->failure.reason == ORDLOCK_REASON_NOT_HELD,
	   "A's netlink RELEASE of B's 8:1: refused, ENOENT, not-held");
	is_errno(olt_probe(dom, 8, 1, SH), EAGAIN, "B still holds 8:1");

	/* dumps: A sees its own */
	is_int(ag_acquire(A, DEV1, &k73, 1, LONG_MS, 0), 0, "A holds 7:3");
	ok(!ag_nl_acquire(A, NL1, dom, &k71, 1, LONG_MS, 79) &&
	   A->status == ORDLOCK_STATUS_QUEUED, "A's socket waits for B's 7:1");
	agent_keys(B, &k73, 1);
	B->timeout_ms = LONG_MS;
	B->flags = 0;
	agent_submit(B, OP_ACQUIRE, DEV1);
	is_int(wait_blocked_ioctl(B->pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "B's owner waits for A's 7:3");

	ret = ag_nl_dump(A, NL1, ORDLOCK_CMD_GET_OWNERS, NULL, k71, k71);
	ok(!ret && A->nentries == 2 && A->nforeign == 0,
	   "A's GET_OWNERS: its 2 owners, none of another user (%d, %d foreign)",
	   A->nentries, A->nforeign);
	ret = ag_nl_dump(A, NL1, ORDLOCK_CMD_GET_LOCKS, dom, k73, k71);
	ok(!ret && A->found[0] == 1 && A->found[1] == 1 && A->nentries == 2,
	   "A's GET_LOCKS: its hold of 7:3 and its wait for 7:1, not B's holds and wait (%d entries)",
	   A->nentries);
	ret = ag_nl_dump(A, NL1, ORDLOCK_CMD_GET_GRAPH, dom, k71, k73);
	ok(!ret && A->found[0] == 1 && A->found[1] == 0,
	   "A's GET_GRAPH: its edge on 7:1, not B's on 7:3 (%d, %d)", A->found[0],
	   A->found[1]);
	ok(nlt_dump(L, ORDLOCK_CMD_GET_LOCKS, dom, NULL) == 6,
	   "root's GET_LOCKS: all 6 holds and waits");
	{
		/*
		 * Both wait edges; a thread edge (ORDLOCK_EDGE_THREAD, from an
		 * owner that holds to the owner its thread is blocked through)
		 * may come too, and is not counted here (t_xdomain tests them)
		 */
		struct olc_nl_entry *g = NULL;
		int i, n = nlt_dump(L, ORDLOCK_CMD_GET_GRAPH, dom, &g), waits = 0;

		for (i = 0; i < n; i++)
			waits += g[i].edge != ORDLOCK_EDGE_THREAD;
		ok(n >= 2 && waits == 2, "root's GET_GRAPH: both wait edges (%d of %d)",
		   waits, n);
		free(g);
	}
	{
		struct olc_nl_entry *o = NULL;
		int i, n = nlt_dump(L, ORDLOCK_CMD_GET_OWNERS, dom, &o), ua = 0, ub = 0;

		for (i = 0; i < n; i++) {
			ua += o[i].uid == UID_A;
			ub += o[i].uid == UID_B;
		}
		ok(ua == 2 && ub == 2, "root's GET_OWNERS: A's 2 and B's 2 owners (%d, %d)",
		   ua, ub);
		free(o);
	}

	ok(!ag_nl_cancel(A, NL1, 79) && A->status == ORDLOCK_STATUS_CANCELLED,
	   "A withdraws its wait");
	is_int(ag_release(A, DEV1, NULL, 0), 0, "A releases 7:3");
	is_int(agent_collect(B), 0, "B gets 7:3");
	ok(!ag_release(B, DEV1, NULL, 0) && !ag_nl_release(B, NL1, NULL, 0),
	   "B releases everything");
	ordlock_close(root);
}

/* --- limits ---------------------------------------------------------------- */

/* A root process without CAP_SYS_RESOURCE: the limits apply to it */
static int nocap_main(void *arg)
{
	struct ordlock_key keys[] = { ORDLOCK_EX(5, 1), ORDLOCK_EX(5, 2) };
	int *ret = arg;
	struct ordlock *ol;

	if (olt_drop_cap(CAP_SYS_RESOURCE))
		return 2;
	ol = ordlock_open(lim2);
	if (!ol)
		return 3;
	*ret = ordlock_acquire(ol, keys, 2, LONG_MS, 0, NULL);
	if (*ret == -EDQUOT && ordlock_last_failure(ol)->reason != ORDLOCK_REASON_USER_LIMIT)
		*ret = -EPROTO;
	ordlock_close(ol);
	return 0;
}

static void test_limits(void)
{
	struct ordlock_key a3[] = { ORDLOCK_EX(1, 1), ORDLOCK_EX(1, 2), ORDLOCK_EX(1, 3) };
	struct ordlock_key a2[] = { ORDLOCK_EX(1, 4), ORDLOCK_EX(1, 5) };
	struct ordlock_key k21 = ORDLOCK_EX(2, 1), k22 = ORDLOCK_EX(2, 2);
	struct ordlock_key k31 = ORDLOCK_EX(3, 1), k32 = ORDLOCK_EX(3, 2);
	struct ordlock_key k39 = ORDLOCK_EX(3, 9), k310 = ORDLOCK_EX(3, 10);
	struct ordlock_key k311 = ORDLOCK_EX(3, 11), k41 = ORDLOCK_SH(4, 1);
	struct ordlock_key many[6];
	struct ordlock *root1 = olt_open(lim1), *root2 = olt_open(lim2), *r;
	struct ordlock_key rk[] = { k31, k32, k39, k310, k311 };
	struct counts c;
	uint64_t t0;
	int ret, i, status;
	int *nocap;

	diag("limits");
	ok(!olt_param_set("max_keys_per_user", 4) &&
	   !olt_param_set("max_waiters_per_user", 1) &&
	   !olt_param_set("max_owners_per_user", 3),
	   "max_keys_per_user 4, max_waiters_per_user 1, max_owners_per_user 3");
	counts_are(UID_A, 2, 0, 0, 0, "A to begin with");

	/* keys */
	agent_domain(A, lim1);
	ok(!agent_call(A, OP_SET_DOMAIN, DEV1) && !ag_acquire(A, DEV1, a3, 3, LONG_MS, 0),
	   "A takes 3 keys");
	counts_are(UID_A, 2, 3, 0, 0, "after 3 keys");
	ret = ag_acquire(A, DEV1, a2, 2, LONG_MS, 0);
	failure_is(A, ret, EDQUOT, ORDLOCK_REASON_USER_LIMIT, "A asks for 2 more");
	ok(olt_key_eq(&A->failure.key, 1, 4, EX) && A->failure.index == 0,
	   "the failure names the first key of the request, 1:4");
	ok(!strcmp(ordlock_reason_name(A->failure.reason), "user-limit") &&
	   strstr(olt_fail_str(&A->failure), "max_keys_per_user"),
	   "libordlock names it: %s", olt_fail_str(&A->failure));
	limit_event(lim1, UID_A, A->pid, 1, "keys");
	is_int(ag_nheld(A, DEV1), 3, "A still holds 3 keys");
	is_int(olt_probe(lim1, 1, 4, EX), 0, "1:4 was not taken");
	counts_are(UID_A, 2, 3, 0, 1, "after the refusal");

	is_int(ag_open(A, DEV2, lim2), 0, "A opens a third owner, in another domain");
	is_int(ag_acquire(A, DEV2, &k21, 1, LONG_MS, 0), 0, "it takes the 4th key");
	ret = ag_acquire(A, DEV2, &k22, 1, LONG_MS, 0);
	failure_is(A, ret, EDQUOT, ORDLOCK_REASON_USER_LIMIT,
		   "a 5th key, through another owner in another domain");
	limit_event(lim2, UID_A, A->pid, 1, "keys, second owner");

	/* B and root carry on */
	agent_domain(B, lim1);
	ok(!agent_call(B, OP_SET_DOMAIN, DEV1) && !ag_acquire(B, DEV1, a2, 2, LONG_MS, 0),
	   "B takes 1:4 and 1:5 in A's domain");
	/* the fast path of one key looks at the key first: the limit still wins */
	ret = ag_acquire(A, DEV1, &a2[0], 1, 0, ORDLOCK_ACQUIRE_TRY);
	failure_is(A, ret, EDQUOT, ORDLOCK_REASON_USER_LIMIT,
		   "A, at its limit, tries 1:4, which B holds: the limit, not EAGAIN");
	limit_event(lim1, UID_A, A->pid, 1, "keys, a try-lock of a taken key");
	counts_are(UID_A, 3, 4, 0, 3, "after the refused try-lock");
	ok(!ag_nl_acquire(B, NL1, lim2, &k22, 1, LONG_MS, 1) &&
	   B->status == ORDLOCK_STATUS_GRANTED, "and 2:2 in the other one, through netlink");
	for (i = 0; i < 6; i++)
		many[i] = ordlock_key(6, i, EX);
	is_int(ordlock_acquire(root1, many, 6, LONG_MS, 0, NULL), 0,
	       "root (CAP_SYS_RESOURCE) takes 6 keys");
	ordlock_release_all(root1);
	counts_are(UID_A, 3, 4, 0, 3, "A");
	counts_are(UID_B, 2, 3, 0, 0, "B");

	/* owners */
	ret = ag_open(A, DEV3, NULL);
	is_int(ret, -EDQUOT, "A's 4th owner: open: EDQUOT");
	limit_event(ORDLOCK_DEFAULT_DOMAIN, UID_A, A->pid, 0, "owners");
	is_int(agent_call(A, OP_NL_OPEN, NL2), 0, "A opens a second netlink socket");
	ret = ag_nl_acquire(A, NL2, lim1, &k39, 1, LONG_MS, 2);
	is_int(ret, -EDQUOT, "its first request would make a 4th owner: EDQUOT");
	counts_are(UID_A, 3, 4, 0, 5, "A, after the refused owners");
	is_int(ag_open(B, DEV2, lim2), 0, "B opens its third owner");

	/* waiters */
	ok(!olt_param_set("max_keys_per_user", 8), "max_keys_per_user 8");
	is_int(ordlock_acquire(root1, rk, 5, LONG_MS, 0, NULL), 0,
	       "root holds 3:1, 3:2, 3:9, 3:10, 3:11");
	ok(!ag_nl_acquire(A, NL1, lim1, &k31, 1, LONG_MS, 3) &&
	   A->status == ORDLOCK_STATUS_QUEUED, "A's socket waits for 3:1");
	counts_are(UID_A, 3, 5, 1, 5, "A waiting");
	t0 = now_ms();
	ret = ag_acquire(A, DEV1, &k32, 1, 10000, 0);
	failure_is(A, ret, EDQUOT, ORDLOCK_REASON_USER_LIMIT,
		   "A's owner would wait for 3:2 too");
	ok(now_ms() - t0 < 5000 && olt_key_eq(&A->failure.key, 3, 2, EX) &&
	   A->failure.pid == (uint32_t)getpid(),
	   "at once, naming 3:2 and its holder");
	limit_event(lim1, UID_A, A->pid, 1, "waiters");
	is_int(ag_acquire(A, DEV1, &k32, 1, 0, ORDLOCK_ACQUIRE_TRY), -EAGAIN,
	       "a try-lock never waits: EAGAIN, not the limit");
	is_int(ordlock_acquire(root2, &k41, 1, LONG_MS, 0, NULL), 0,
	       "root holds 4:1 shared");
	ok(!ag_release(A, DEV2, NULL, 0) && !ag_acquire(A, DEV2, &k41, 1, LONG_MS, 0),
	   "A's second owner shares 4:1");
	agent_keys(A, &k41, 1);
	A->keys[0].mode = EX;
	A->timeout_ms = 10000;
	A->flags = 0;
	ret = agent_call(A, OP_CONVERT, DEV2);
	failure_is(A, ret, EDQUOT, ORDLOCK_REASON_USER_LIMIT,
		   "its upgrade would wait: refused");
	is_int(olt_probe(lim2, 4, 1, SH), 0, "4:1 is still shared");
	limit_event(lim2, UID_A, A->pid, 1, "upgrade");

	agent_keys(B, &k32, 1);
	B->timeout_ms = LONG_MS;
	B->flags = 0;
	agent_submit(B, OP_ACQUIRE, DEV1);
	is_int(wait_blocked_ioctl(B->pid, ORDLOCK_IOC_ACQUIRE, 0), 0,
	       "B waits for 3:2 meanwhile");
	counts_are(UID_B, 3, 4, 1, 0, "B waiting");
	counts_are(UID_A, 3, 5, 1, 7, "A");
	is_int(ordlock_release(root1, rk, 2), 0, "root releases 3:1 and 3:2");
	ok(!ag_nl_result(A, NL1, WAIT_MS) && A->status == ORDLOCK_STATUS_GRANTED,
	   "A's socket gets 3:1");
	is_int(agent_collect(B), 0, "B gets 3:2");
	counts_are(UID_A, 3, 5, 0, 7, "A, granted");
	counts_are(UID_B, 3, 4, 0, 0, "B, granted");

	/* what failed or was cancelled is given back */
	ret = ag_acquire(A, DEV1, &k39, 1, 300, 0);
	failure_is(A, ret, ETIMEDOUT, ORDLOCK_REASON_TIMEOUT, "A waits 300 ms for 3:9");
	counts_are(UID_A, 3, 5, 0, 7, "after the timeout");
	ok(!ag_nl_acquire(A, NL1, lim1, &k310, 1, LONG_MS, 4) &&
	   A->status == ORDLOCK_STATUS_QUEUED, "A's socket waits for 3:10");
	counts_are(UID_A, 3, 6, 1, 7, "while it waits");
	ok(!ag_nl_cancel(A, NL1, 4) && A->status == ORDLOCK_STATUS_CANCELLED,
	   "A cancels it");
	counts_are(UID_A, 3, 5, 0, 7, "after the cancel");

	/* A dies holding keys and waiting */
	ok(!ag_nl_acquire(A, NL1, lim1, &k311, 1, LONG_MS, 5) &&
	   A->status == ORDLOCK_STATUS_QUEUED, "A's socket waits for 3:11");
	counts_are(UID_A, 3, 6, 1, 7, "A before it dies");
	status = child_kill(A->pid, SIGKILL);
	ok(status != -1 && WIFSIGNALED(status), "A is killed");
	ok(user_gone(UID_A), "uid %d leaves the users file", UID_A);
	{
		struct olc_nl_entry *o = NULL;
		int n = nlt_dump(L, ORDLOCK_CMD_GET_OWNERS, NULL, &o), left = 0;

		for (i = 0; i < n; i++)
			left += o[i].uid == UID_A;
		ok(n > 0 && !left, "GET_OWNERS: no owner of uid %d left", UID_A);
		free(o);
	}
	is_int(olt_probe(lim1, 1, 1, EX), 0, "A's keys are free");
	pbarrier_free(A->go);
	pbarrier_free(A->done);
	shm_free(A, sizeof(*A));
	A = NULL;

	/* CAP_SYS_RESOURCE, not uid 0, exempts */
	ok(!olt_param_set("max_keys_per_user", 1) &&
	   !olt_param_set("max_owners_per_user", 1000),
	   "max_keys_per_user 1, max_owners_per_user 1000");
	nocap = shm_alloc(sizeof(*nocap));
	is_int(child_wait(child_start(nocap_main, nocap), 0), 0,
	       "a root child drops CAP_SYS_RESOURCE");
	is_int(*nocap, -EDQUOT, "its 2 keys: EDQUOT, reason user-limit");
	shm_free(nocap, sizeof(*nocap));
	r = olt_open(lim2);
	is_int(ordlock_acquire(r, many, 2, LONG_MS, 0, NULL), 0,
	       "root with CAP_SYS_RESOURCE takes 2");
	ret = user_counts(0, &c);
	ok(ret == 1 && c.keys >= 2 + 3 + 1, "uid 0 is counted all the same (%ld keys)",
	   c.keys);
	ordlock_close(r);
	ordlock_close(root1);
	ordlock_close(root2);
}

/* --- domains ---------------------------------------------------------------- */

/* The same, moving to a new domain */
static int nocap_domain_main(void *arg)
{
	int *ret = arg;
	struct ordlock *ol;

	if (olt_drop_cap(CAP_SYS_RESOURCE))
		return 2;
	ol = ordlock_open(NULL);
	if (!ol)
		return 3;
	*ret = ordlock_set_domain(ol, olt_domain("dnocap"));
	if (*ret == -EDQUOT && ordlock_last_failure(ol)->reason != ORDLOCK_REASON_USER_LIMIT)
		*ret = -EPROTO;
	ordlock_close(ol);
	return 0;
}

static int ag_set_domain(struct agent *a, unsigned int slot, const char *domain)
{
	agent_domain(a, domain);
	return agent_call(a, OP_SET_DOMAIN, slot);
}

/* Whether DOMAIN_GET finds @domain */
static int domain_exists(const char *domain)
{
	struct olc_nl_domain d;

	return nlt_domain_get(L, domain, &d) != -ENOENT;
}

static void test_domains(void)
{
	struct ordlock_key k1 = ORDLOCK_EX(1, 1);
	char d[6][ORDLOCK_DOMAIN_NAME_MAX], shared[ORDLOCK_DOMAIN_NAME_MAX];
	char bdom[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock *root, *r[4];
	struct agent *D;
	long bbase, rbase;
	int ret, i, made, *nocap;

	diag("domains");
	for (i = 0; i < 6; i++)
		snprintf(d[i], sizeof(d[i]), "%s", olt_domain("dlim"));
	snprintf(shared, sizeof(shared), "%s", olt_domain("dshared"));
	snprintf(bdom, sizeof(bdom), "%s", olt_domain("dbee"));
	olt_param_restore();
	ok(!olt_param_set("max_domains_per_user", 3),
	   "max_domains_per_user 3, the other limits as they were");
	D = agent_start("user-d", UID_D, GID_LOCKERS);
	root = olt_open(shared);

	/* up to the limit, then one more */
	for (i = 0; i < 3; i++)
		ok(!ag_open(D, i, NULL) && !ag_set_domain(D, i, d[i]),
		   "D's owner %d creates domain %s", i + 1, d[i]);
	dcounts_are(UID_D, 3, 0, 0, 3, "D at its limit");
	is_int(ag_open(D, 3, NULL), 0, "D opens a fourth owner");
	ret = ag_set_domain(D, 3, d[3]);
	failure_is(D, ret, EDQUOT, ORDLOCK_REASON_USER_LIMIT,
		   "its move to a fourth new domain: SET_DOMAIN");
	ok(D->kfailure.reason == ORDLOCK_REASON_USER_LIMIT &&
	   D->kfailure.error == EDQUOT && D->kfailure.index == ~0U &&
	   olt_key_eq(&D->kfailure.key, 0, 0, 0),
	   "the kernel's record (LAST_FAILURE): user-limit, EDQUOT, no key");
	if (D->kfailure.reason != ORDLOCK_REASON_USER_LIMIT)
		diag("  reason %u error %u index %u", D->kfailure.reason,
		     D->kfailure.error, D->kfailure.index);
	ok(strstr(olt_fail_str(&D->failure), "max_domains_per_user") != NULL,
	   "libordlock names it: %s", olt_fail_str(&D->failure));
	limit_event(d[3], UID_D, D->pid, 1, "domains");
	ok(!agent_call(D, OP_WHERE, 3) && !strcmp(D->where, ORDLOCK_DEFAULT_DOMAIN),
	   "the owner stays in the default domain (%s)", D->where);
	ok(!domain_exists(d[3]), "%s was not created", d[3]);
	agent_domain(D, d[3]);
	is_int(agent_call(D, OP_SET_POLICY, 3), -EPERM,
	       "DOMAIN_CONFIG changing %s: EPERM first", d[3]);
	is_int(D->value, -EDQUOT, "reading it would create it: EDQUOT");
	dcounts_are(UID_D, 4, 0, 2, 3, "after the refusals");

	/* netlink */
	is_int(agent_call(D, OP_NL_OPEN, NL1), 0, "D opens a netlink socket");
	ret = ag_nl_acquire(D, NL1, d[4], &k1, 1, 1000, 1);
	ok(ret == -EDQUOT && strstr(D->extack, "max_domains_per_user"),
	   "netlink ACQUIRE in a fourth new domain: EDQUOT, extack \"%s\"",
	   D->extack);
	if (ret != -EDQUOT)
		diag("  ret %d status %s", ret, nlt_status_name(D->status));
	limit_event(d[4], UID_D, D->pid, 1, "domains, netlink");
	ok(!domain_exists(d[4]), "%s was not created", d[4]);
	dcounts_are(UID_D, 5, 0, 3, 3, "the socket's owner is D's fifth");

	/* others still create domains, D joins them */
	bbase = domains_of(UID_B);
	is_int(ag_open(B, DEV3, bdom), 0, "B (another user) creates %s meanwhile", bdom);
	is_int(domains_of(UID_B), bbase + 1, "B's count of domains: %ld", bbase + 1);
	ok(!ag_nl_acquire(D, NL1, bdom, &k1, 1, 1000, 2) &&
	   D->status == ORDLOCK_STATUS_GRANTED,
	   "D's socket joins B's domain and locks in it (netlink)");
	is_int(ag_set_domain(D, 3, shared), 0,
	       "D's fourth owner joins root's domain (ioctl)");
	dcounts_are(UID_D, 5, 1, 3, 3, "joining counts nothing");

	/* closing frees them */
	ok(!ag_nl_release(D, NL1, NULL, 0) && D->status == ORDLOCK_STATUS_GRANTED,
	   "D's socket releases 1:1");
	for (i = 0; i < 3; i++)
		agent_call(D, OP_CLOSE, i);
	dcounts_are(UID_D, 2, 0, 3, 0, "D closed the owners of its 3 domains");
	ok(!domain_exists(d[0]) && !domain_exists(d[1]) && !domain_exists(d[2]),
	   "the domains are gone");
	ok(!ag_open(D, 0, NULL) && !ag_set_domain(D, 0, d[5]),
	   "D creates a domain again");
	dcounts_are(UID_D, 3, 0, 3, 1, "one domain");

	/* a domain is its creator's while it lives, whoever is in it */
	is_int(ag_set_domain(B, DEV3, d[5]), 0, "B moves to D's domain");
	is_int(domains_of(UID_B), bbase + 1,
	       "B's domain lives on: D's socket is in it");
	agent_call(D, OP_CLOSE, 0);
	dcounts_are(UID_D, 2, 0, 3, 1, "D closed its owner: B keeps the domain, D is charged");
	is_int(agent_call(B, OP_CLOSE, DEV3), 0, "B closes that owner");
	dcounts_are(UID_D, 2, 0, 3, 0, "D's domain was freed with it");
	ok(!domain_exists(d[5]), "%s is gone", d[5]);

	/* CAP_SYS_RESOURCE */
	rbase = domains_of(0);
	for (i = 0, made = 0; i < 4; i++) {
		r[i] = ordlock_open(olt_domain("droot"));
		made += r[i] != NULL;
	}
	is_int(made, 4, "root (CAP_SYS_RESOURCE) creates 4 new domains past the limit");
	ok(rbase >= 1 && domains_of(0) == rbase + made,
	   "uid 0 is counted all the same (%ld domains, was %ld)", domains_of(0), rbase);
	nocap = shm_alloc(sizeof(*nocap));
	is_int(child_wait(child_start(nocap_domain_main, nocap), 0), 0,
	       "a root child drops CAP_SYS_RESOURCE");
	is_int(*nocap, -EDQUOT, "its move to a new domain: EDQUOT, reason user-limit");
	shm_free(nocap, sizeof(*nocap));
	for (i = 0; i < 4; i++)
		ordlock_close(r[i]);
	is_int(domains_of(0), rbase, "root's 4 domains went with their owners");
	ordlock_close(root);

	is_int(agent_stop(D), 0, "D quits");
	ok(user_gone(UID_D), "uid %d leaves the users file", UID_D);
	is_int(domains_of(UID_B), bbase, "B's domain went with D's socket");
	ok(!domain_exists(bdom), "%s is gone", bdom);
	olt_param_restore();
}

static void test_end(void)
{
	struct counts c;

	diag("the end");
	is_int(agent_stop(B), 0, "B quits");
	is_int(agent_stop(C), 0, "C quits");
	ok(user_gone(UID_B) && user_gone(UID_C), "uids %d and %d leave the users file",
	   UID_B, UID_C);
	is_int(user_counts(UID_A, &c), 0, "uid %d is not back", UID_A);
}

int main(void)
{
	struct stat st;

	watchdog_start(250);
	if (getuid())
		bail_out("t_users runs as root");
	if (stat(ORDLOCK_DEVICE, &dev_saved))
		bail_out("stat %s: %s", ORDLOCK_DEVICE, strerror(errno));
	atexit(dev_restore);
	L = nlt_must_open();
	if (nlt_subscribe(L))
		bail_out("cannot join the events group");
	snprintf(dom, sizeof(dom), "%s", olt_domain("usr"));
	snprintf(lim1, sizeof(lim1), "%s", olt_domain("lim"));
	snprintf(lim2, sizeof(lim2), "%s", olt_domain("lim"));

	A = agent_start("user-a", UID_A, GID_LOCKERS);
	B = agent_start("user-b", UID_B, GID_LOCKERS);
	C = agent_start("user-c", UID_C, UID_C);

	test_permissions();
	test_isolation();
	test_limits();
	test_domains();
	test_end();

	dev_restore();
	ok(!stat(ORDLOCK_DEVICE, &st) && st.st_mode == dev_saved.st_mode &&
	   st.st_gid == dev_saved.st_gid, "/dev/ordlock has its mode and group back");
	nlt_close(L);
	return tap_done();
}
