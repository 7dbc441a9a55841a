/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ordlock-specific helpers of the in-VM tests: opening owners, probing
 * whether a key is held, raw ioctl structures, module parameters.
 */
#ifndef ORDLOCK_TEST_OLTEST_H
#define ORDLOCK_TEST_OLTEST_H

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

/* olt_raw_fd() - open /dev/ordlock directly, or bail out. */
int olt_raw_fd(void);

/*
 * olt_ctl_path() - the tree's ordlockctl: $ORDLOCK_REPO/tools/..., else
 * found from the test's own path (tests/build/vm/t_NAME); bails out when
 * it is not there (make tools). Static buffer.
 */
const char *olt_ctl_path(void);

/*
 * olt_stats_resources() - "resources N" of the "global" line of debugfs
 * stats: the resources in use; -1 when it cannot be read
 */
long olt_stats_resources(void);

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

#endif /* ORDLOCK_TEST_OLTEST_H */
