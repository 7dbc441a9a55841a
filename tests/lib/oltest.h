/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordlock-specific helpers of the in-VM tests: opening owners (in the test
 * and in its children), probing whether a key is held, raw ioctls and raw
 * fast-path members, domain settings and the learned order, module
 * parameters, running a command (ordlockctl) for its output, capabilities.
 * A test that wants one of these and finds a copy in another test should
 * find it here instead (and one missing belongs here, not in a second copy).
 */
#ifndef ORDLOCK_TEST_OLTEST_H
#define ORDLOCK_TEST_OLTEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/ordlock.h>
#include "libordlock.h"
#include "barrier.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* The timeout (ms) of every wait a test expects to be granted. */
#define OLT_LONG_MS	60000

/* olt_open() - ordlock_open() or bail out of the test. */
struct ordlock *olt_open(const char *domain);

/*
 * olt_child_open() - in a child of child_start(): ordlock_open(@domain), or
 * the child ends with status 1 (a child may not bail out: its parent owns
 * the TAP output)
 */
struct ordlock *olt_child_open(const char *domain);

/* olt_raw_fd() - open /dev/ordlock directly, or bail out. */
int olt_raw_fd(void);

/*
 * olt_ctl_path() - the tree's ordlockctl: $ORDLOCK_REPO/tools/..., else
 * found from the test's own path (tests/build/vm/t_NAME); bails out when
 * it is not there (make tools). Static buffer.
 */
const char *olt_ctl_path(void);

/*
 * olt_run() - run the shell command line made of @fmt... (popen(3)); what
 * it writes to stdout (add "2>&1" for stderr too) lands in @out,
 * NUL-terminated, as much as fits in @len. Returns its exit status, or -1
 * when it could not be started or did not exit (a signal). The one place
 * the tests capture a command's output.
 */
int olt_run(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* olt_ctl() - olt_run() of "ORDLOCKCTL ARGS 2>&1", @fmt... making ARGS */
int olt_ctl(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * olt_stats_resources() - "resources N" of the "global" line of debugfs
 * stats: the resources in use; -1 when it cannot be read
 */
long olt_stats_resources(void);

/*
 * olt_stats_domain() - the number after " @field " on @domain's line of
 * debugfs stats (a gauge such as "waiters" or "peak_waiters", or a counter
 * such as "revocations"), or -1 when the domain or the field is missing
 */
long olt_stats_domain(const char *domain, const char *field);

/*
 * olt_probe() - whether another owner of @domain (NULL: default) could take
 * key (@rank, @id) in @mode right now, without waiting: 0 if it could
 * (it released it again), -EAGAIN if the key is held in a conflicting mode
 * or has waiters, another -errno on error.
 */
int olt_probe(const char *domain, uint32_t rank, uint64_t id,
	      unsigned int mode);

/*
 * olt_no_ioctl() - from now on every ioctl() of the calling thread (and its
 * children) fails with EPERM, and nothing else (a seccomp filter): proves a
 * path makes no system call into the module. 0, or -1 with errno.
 */
int olt_no_ioctl(void);

/*
 * olt_domain_set() - ordlock_domain_config() of @domain through an owner
 * opened (and closed) for the call: what @cfg->flags name is set, and @cfg
 * comes back with the domain's settings. Returns the call's result (0, or
 * -1 with errno set).
 */
int olt_domain_set(const char *domain, struct ordlock_domain_config *cfg);

/*
 * olt_fast_domain_set() - the fast path of @domain turned on (@on 1, for
 * the caller's uid) or off (its keys unpinned), through olt_domain_set()
 */
int olt_fast_domain_set(const char *domain, int on);

/*
 * olt_order_read() - GET_ORDER of @domain through @ol into @e (@emax
 * edges), @w (@wmax label words) and *@info: ordlock_get_order()'s result,
 * with a diag() naming @domain when it failed
 */
int olt_order_read(struct ordlock *ol, const char *domain,
		   struct ordlock_order_edge *e, unsigned int emax,
		   uint32_t *w, unsigned int wmax, struct ordlock_order_get *info);

/*
 * olt_order_get() - the learned order of @domain (GET_ORDER through an
 * owner opened for the call): at most @max edges into @e (NULL, 0: none)
 * and the counts in *@info. Returns how many edges @e holds, or -errno.
 */
int olt_order_get(const char *domain, struct ordlock_order_edge *e,
		  unsigned int max, struct ordlock_order_get *info);

/*
 * olt_scratch_dir() - make the directory /tmp/@name.PID (it may exist) and
 * write its path to @dir; bails out when it cannot.
 */
void olt_scratch_dir(char *dir, size_t len, const char *name);

/*
 * olt_drop_cap() - drop capability @cap (CAP_SYS_ADMIN...) from the
 * effective, permitted and inheritable sets of the calling thread, which
 * stays root otherwise: 0 or -errno
 */
int olt_drop_cap(int cap);

/* olt_nheld() - keys held by @ol (OWNER_INFO), or -errno. */
long olt_nheld(struct ordlock *ol);
long olt_fd_nheld(int fd);

/* olt_domain() - a fresh domain name: "<prefix>-<pid>-<n>". Static buffer. */
const char *olt_domain(const char *prefix);

/* Module parameters under /sys/module/ordlock/parameters/ */
long olt_param_get(const char *name);
/*
 * olt_param_set() - set a parameter; the first change of each parameter
 * remembers the original value, which olt_param_restore() (also run at
 * exit) writes back. Returns 0 or -errno.
 */
int olt_param_set(const char *name, long value);
void olt_param_restore(void);

/* olt_key_eq() - same rank and id (and mode, if @mode is not 0). */
int olt_key_eq(const struct ordlock_key *k, uint32_t rank, uint64_t id,
	       unsigned int mode);

/* olt_fail_str() - ordlock_strfailure() into a static buffer. */
const char *olt_fail_str(const struct ordlock_failure *f);

/*
 * struct olt_holder - a child process that holds keys until told to go.
 * olt_holder_start() returns once the child holds @keys (or failed to:
 * then @result is the -errno); olt_holder_stop() lets it exit (which
 * releases its keys) and returns its exit status as child_wait() does.
 */
struct olt_holder {
	struct pbarrier *held;
	struct pbarrier *go;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int nkeys;
	struct ordlock_key keys[16];
	int result;
	uint64_t token;
	pid_t pid;
};

struct olt_holder *olt_holder_start(const char *domain,
				    const struct ordlock_key *keys,
				    unsigned int n);
int olt_holder_stop(struct olt_holder *h);
/* olt_holder_kill() - send @sig, reap; returns the raw wait status. */
int olt_holder_kill(struct olt_holder *h, int sig);

/* Raw ioctls: return the ioctl's result, errno set on failure. */
int olt_ioctl(int fd, unsigned long request, void *arg);

/*
 * struct olt_fast - a raw member of a fast-path domain, seen as libordlock's
 * fast path sees itself: its descriptor, its owner index, the mapped words
 * (ORDLOCK_FAST_WORDS_SIZE) and, when asked for, its owner page.
 */
struct olt_fast {
	int fd;
	uint32_t index;
	volatile uint64_t *words;
	struct ordlock_fast_page *page;		/* NULL: not mapped */
};

/*
 * olt_fast_open() - a raw owner of @domain that pins (1, @id) (its slot in
 * *@slot) and maps the words, and its owner page if @page; bails out
 */
void olt_fast_open(struct olt_fast *f, const char *domain, uint64_t id,
		   uint32_t *slot, int page);
/* olt_fast_close() - unmap what olt_fast_open() mapped, close the owner */
void olt_fast_close(struct olt_fast *f);

/* olt_fd_set_domain() - SET_DOMAIN of the raw descriptor @fd to @name */
int olt_fd_set_domain(int fd, const char *name);

/*
 * olt_fd_acquire() - a raw ACQUIRE on @fd of @keys (@n) with @flags and
 * @timeout_ns (0: the domain's default): the ioctl's result (-1 with errno
 * on failure); the structure as the kernel left it (the failure record,
 * the time left) in *@out unless NULL
 */
int olt_fd_acquire(int fd, const struct ordlock_key *keys, unsigned int n,
		   uint32_t flags, uint64_t timeout_ns, struct ordlock_acquire *out);

/* olt_fd_release_all() - a raw RELEASE_ALL on @fd: how many keys it released, or -errno */
int olt_fd_release_all(int fd);

/*
 * olt_ktry() - a kernel try-acquire of @k by a fresh raw owner of @domain
 * (raw: libordlock would try the fast path's word first): 0 (the owner is
 * closed again: released) or -errno; the failure record in *@f unless NULL
 */
int olt_ktry(const char *domain, struct ordlock_key k, struct ordlock_failure *f);

/*
 * olt_fast_pin() - FAST_PIN of (@rank, @id) on @fd: the ioctl's result; on
 * success the key's slot in *@slot and the owner's index in *@index (unless
 * NULL)
 */
int olt_fast_pin(int fd, uint32_t rank, uint64_t id, uint32_t *slot,
		 uint32_t *index);

#endif /* ORDLOCK_TEST_OLTEST_H */
