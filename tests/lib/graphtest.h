/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the wait-for graph tests: scripted "actor" processes that
 * perform one ordlock request at a time on command, parsers of the debugfs
 * files of /sys/kernel/debug/ordlock/, and the kernel log.
 *
 * Like barrier.h, nothing here waits without a bound.
 */
#ifndef ORDLOCK_TEST_GRAPHTEST_H
#define ORDLOCK_TEST_GRAPHTEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/ordlock.h>
#include "libordlock.h"

#define GT_DEBUGFS	"/sys/kernel/debug/ordlock/"

/* Returned by gt_call() when the actor did not answer in time (hung) */
#define GT_HUNG		(-10000)

/* Extra time an actor gets to answer beyond the timeout of its request */
#define GT_MARGIN_MS	20000

#define GT_MAX_FDS	4
#define GT_MAX_KEYS	16

/*
 * The operations of an actor. Each runs on the actor's owner number @fd
 * (0 to nfds - 1), from the actor's only thread.
 */
enum gt_op {
	GT_OP_NONE,
	GT_OP_ACQUIRE,		/* ordlock_acquire(keys, nkeys, timeout, flags) */
	GT_OP_CONVERT,		/* ordlock_convert(keys[0], timeout, flags) */
	GT_OP_RELEASE,		/* ordlock_release(keys, nkeys) */
	GT_OP_RELEASE_ALL,	/* ordlock_release_all() */
	GT_OP_CLOSE,		/* ordlock_close() */
	GT_OP_EXIT,		/* exit without closing anything */
};

/**
 * struct gt_result - what an actor's last operation returned
 * @ret: 0 or the negative errno of the call
 * @failure: the library's failure record after a failed call
 * @token: the fencing token of a successful acquire or convert
 * @elapsed_ms: how long the call took
 * @end_ms: now_ms() when the call returned (CLOCK_MONOTONIC, shared by all
 *	processes of the test)
 * @ncycle: after EDEADLK: ordlock_last_cycle()'s result
 * @cycle: the steps it copied
 * @nheld: keys the owner holds after the call (OWNER_INFO), or -errno
 * @result_flags: after an acquire, ordlock_result_flags()
 */
struct gt_result {
	int ret;
	struct ordlock_failure failure;
	uint64_t token;
	uint64_t elapsed_ms;
	uint64_t end_ms;
	int ncycle;
	struct ordlock_cycle_step cycle[ORDLOCK_CYCLE_MAX];
	long nheld;
	unsigned int result_flags;
};

struct gt_actor_shm;

/**
 * struct gt_actor - a child process that owns @nfds owners of @domain
 * @pid: its pid (also the pid the kernel records for its owners)
 * @nfds: number of owners it opened
 * @owner_id: the kernel's id of each owner (OWNER_INFO)
 * @busy: an operation was submitted and its result not yet collected
 * @res: the result of the last collected operation (shared memory)
 */
struct gt_actor {
	pid_t pid;
	unsigned int nfds;
	uint64_t owner_id[GT_MAX_FDS];
	char comm[16];
	int busy;
	int cmd_wr;
	int res_rd;
	struct gt_actor_shm *shm;
	struct gt_result *res;
};

/*
 * gt_actor_start() - fork an actor named @comm (its command name, set
 * before it opens anything) that opens @nfds owners and moves each to
 * @domain (NULL: stay in "default"). Returns once they are open; bails out
 * of the test when it cannot start.
 */
struct gt_actor *gt_actor_start(const char *comm, const char *domain,
				unsigned int nfds);

/*
 * gt_actor_start_in() - the same, the owner number i in @domains[i] (NULL:
 * "default"): an actor whose thread holds and waits in several domains
 */
struct gt_actor *gt_actor_start_in(const char *comm, const char *const *domains,
				   unsigned int nfds);

/*
 * gt_submit() - start an operation without waiting for it. The keys are
 * copied. Returns 0, or -EBUSY if the previous one was not collected.
 */
int gt_submit(struct gt_actor *a, enum gt_op op, unsigned int fd,
	      const struct ordlock_key *keys, unsigned int nkeys,
	      unsigned int timeout_ms, unsigned int flags);

/*
 * gt_collect() - wait at most @wait_ms for the submitted operation; 0 when
 * it ended (its result is in a->res), -ETIMEDOUT when it still runs, -EPIPE
 * if the actor died.
 */
int gt_collect(struct gt_actor *a, unsigned int wait_ms);

/*
 * gt_call() - submit and collect, allowing @timeout_ms + GT_MARGIN_MS.
 * Returns a->res->ret, or GT_HUNG when the actor did not answer.
 */
int gt_call(struct gt_actor *a, enum gt_op op, unsigned int fd,
	    const struct ordlock_key *keys, unsigned int nkeys,
	    unsigned int timeout_ms, unsigned int flags);

/* One-key shortcuts of gt_submit() and gt_call() */
int gt_submit1(struct gt_actor *a, enum gt_op op, unsigned int fd,
	       uint32_t rank, uint64_t id, unsigned int mode,
	       unsigned int timeout_ms, unsigned int flags);
int gt_call1(struct gt_actor *a, enum gt_op op, unsigned int fd,
	     uint32_t rank, uint64_t id, unsigned int mode,
	     unsigned int timeout_ms, unsigned int flags);

/*
 * gt_blocked() - wait until the actor sleeps in @request (an ioctl number),
 * as wait_blocked_ioctl() does. 0 or -errno.
 */
int gt_blocked(struct gt_actor *a, unsigned long request);

/*
 * gt_actor_stop() - let the actor exit (its owners are then released) and
 * reap it; an actor still busy is given 5 s, then killed. Frees @a.
 * Returns the exit status as child_wait() does.
 */
int gt_actor_stop(struct gt_actor *a);

/**
 * struct gt_twothr - a process P of two threads on two owners: thread 1
 * takes @k1 on owner 1 (in @d1) and stays awake; thread 2 then asks @k2 on
 * owner 2 (in @d2) and sleeps. P still has a thread that can let go, so a
 * cycle through thread 2 is no deadlock (t_graph: one domain; t_xdomain:
 * two). In shared memory; the parent steps P through the barriers:
 *
 *	t = gt_twothr_start("comm", d1, k1, d2, k2);
 *	pbarrier_wait(t->held);		@ret1: thread 1's acquire of @k1
 *	pbarrier_wait(t->go);		P starts thread 2
 *	pbarrier_wait(t->blocked);	@blocked_ret 0: thread 2 sleeps in it
 *	pbarrier_wait(t->release);	thread 1 releases; thread 2 returns
 *	child_wait(t->pid, 0);		0: P ended cleanly; @ret2 thread 2's
 *	gt_twothr_free(t);
 *
 * @ret2 is 1 until thread 2's acquire returns; @error is -errno when P
 * could not open its owners or start thread 2.
 */
struct gt_twothr {
	char d1[ORDLOCK_DOMAIN_NAME_MAX], d2[ORDLOCK_DOMAIN_NAME_MAX];
	struct ordlock_key k1, k2;
	char comm[16];
	struct pbarrier *held, *go, *blocked, *release;
	pid_t pid, tid2;
	int ret1, ret2, blocked_ret, error;
};

struct gt_twothr *gt_twothr_start(const char *comm, const char *d1,
				  struct ordlock_key k1, const char *d2,
				  struct ordlock_key k2);
void gt_twothr_free(struct gt_twothr *t);

/* gt_step_str() - "pid P (comm) owner O waits for MODE R:I EDGE/BMODE" */
const char *gt_step_str(const struct ordlock_cycle_step *s);

/*
 * gt_new_domain() - write a fresh domain name to @name
 * (ORDLOCK_DOMAIN_NAME_MAX bytes) and give that domain @policy and
 * @delay_ms; bails out of the test on failure. Returns @name.
 */
char *gt_new_domain(char *name, const char *prefix, unsigned int policy,
		    unsigned int delay_ms);

/* gt_owner_id() - the kernel's id of @ol, or 0 */
uint64_t gt_owner_id(struct ordlock *ol);

/* debugfs */

/* A parser of tools/common/parse.h: olc_parse_graph() and the others */
struct olc_perr;
typedef int (*gt_parser)(const char *buf, size_t len, void *out,
			 struct olc_perr *err);

/*
 * gt_debugfs_parse() - read debugfs file @name (of GT_DEBUGFS) and parse
 * it with @parse into @out (a struct olc_edges, olc_locks...). 0, or
 * -errno (-EPROTO: it does not parse) after a diag() saying why.
 */
int gt_debugfs_parse(const char *name, gt_parser parse, void *out);

/*
 * gt_read_file() - the whole content of @path (NUL-terminated, malloc()ed);
 * NULL with errno on failure.
 */
char *gt_read_file(const char *path);

struct gt_edge {
	uint64_t waiter_id;
	int waiter_pid;
	char waiter_comm[ORDLOCK_COMM_LEN];
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	uint32_t rank;
	uint64_t id;
	unsigned int mode;
	uint64_t blocker_id;
	int blocker_pid;
	char blocker_comm[ORDLOCK_COMM_LEN];
	unsigned int blocker_mode;
	unsigned int edge;		/* ORDLOCK_EDGE_HARD or _SOFT */
	uint64_t waited_us;
};

enum gt_role { GT_HOLDER = 1, GT_WAITER, GT_CONVERTER };

struct gt_lock {
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	uint32_t rank;
	uint64_t id;
	int role;			/* enum gt_role */
	unsigned int pos;
	uint64_t owner_id;
	int pid;
	char comm[ORDLOCK_COMM_LEN];
	unsigned int mode;
	uint64_t value;			/* holder: token; others: waited_us */
};

struct gt_owner {
	uint64_t id;
	int pid;
	char comm[ORDLOCK_COMM_LEN];
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	char kind[16];
	unsigned int held;
	unsigned int wmode;		/* 0: not waiting */
	uint32_t wrank;
	uint64_t wid;
	uint64_t waited_us;
};

#define GT_DL_STEPS 16

struct gt_dstep {
	uint64_t owner_id;
	int pid;
	char comm[ORDLOCK_COMM_LEN];
	unsigned int mode;
	uint32_t rank;
	uint64_t id;
	unsigned int edge;
	unsigned int blocker_mode;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];	/* the step's */
};

struct gt_deadlock {
	uint64_t seq;
	uint64_t time_ns;
	char domain[ORDLOCK_DOMAIN_NAME_MAX];
	unsigned int len;
	unsigned int nsteps;
	struct gt_dstep steps[GT_DL_STEPS];
};

/*
 * Readers of the files. Each checks the version line, parses every data
 * line (a line that does not parse fails the whole read with -EPROTO and
 * a diag()), keeps the records of @domain (NULL: all), stores at most @max
 * of them and returns how many there were, or -errno.
 */
int gt_graph_read(const char *domain, struct gt_edge *e, int max);
int gt_locks_read(const char *domain, struct gt_lock *l, int max);
int gt_owners_read(const char *domain, struct gt_owner *o, int max);
int gt_deadlocks_read(const char *domain, struct gt_deadlock *d, int max);

#define GT_MAX_STATS 64

/*
 * The "domain" line of stats for one domain, as name/value pairs, and
 * the sum of its "wait_us" histogram
 */
struct gt_stats {
	char policy[16];
	int have_wait;
	unsigned int wait_buckets;
	long long wait_total;
	unsigned int n;
	struct {
		char name[32];
		long long value;
	} v[GT_MAX_STATS];
};

/* gt_stats_read() - 0 and @s filled, -ENOENT if @domain has no line, -errno */
int gt_stats_read(const char *domain, struct gt_stats *s);
/* gt_stat() - the value of counter @name, or -1 when absent */
long long gt_stat(const struct gt_stats *s, const char *name);
/* gt_stat_of() - counter @name of @domain's stats line, or -1 */
long long gt_stat_of(const char *domain, const char *name);
/*
 * gt_gauges_zero() - one TAP point (named after @what): @domain's owners,
 * resources and waiters gauges are all 0
 */
void gt_gauges_zero(const char *domain, const char *what);

/* gt_mode_parse() - "shared" 1, "exclusive" 2, "none" 0, else -1 */
int gt_mode_parse(const char *s);

/*
 * gt_wait_edges() - poll the graph file until @domain has exactly @n edges,
 * for at most @timeout_ms. 0 or -ETIMEDOUT (diag() shows the last count).
 */
int gt_wait_edges(const char *domain, int n, unsigned int timeout_ms);

/* The kernel log */

/*
 * gt_kmsg_open() - open /dev/kmsg positioned after the last record, so
 * that gt_kmsg_find() sees only what is logged from now on. -errno on
 * failure.
 */
int gt_kmsg_open(void);

/*
 * gt_kmsg_find() - read new records until one contains @needle, for at
 * most @timeout_ms; 1 and the message copied to @out (if not NULL) when
 * found, 0 if not. Every record read is consumed.
 */
int gt_kmsg_find(int fd, const char *needle, char *out, size_t len,
		 unsigned int timeout_ms);

/*
 * gt_kmsg_settle() - the deadlock reports of the kernel log are
 * rate-limited (10 per 5 s): if the log shows that many recent ones, wait
 * until the limit is lifted, so that the next report is printed.
 */
void gt_kmsg_settle(void);

#endif /* ORDLOCK_TEST_GRAPHTEST_H */
