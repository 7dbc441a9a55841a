/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the benchmarks (tests/bench/b*.c, run in the VM by "make
 * bench"): clocks, samples and their statistics, the CSV rows every
 * benchmark prints, raw ordlock ioctls, processes and shared memory.
 *
 * Every benchmark prints CSV rows on stdout, one per implementation and
 * parameter (see bench_emit()), and its progress on stderr. The host's
 * tests/bench/report.py joins the rows of all benchmarks, computes the
 * ratios and draws the plot.
 */
#ifndef ORDLOCK_BENCHLIB_H
#define ORDLOCK_BENCHLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/ordlock.h>

/* --- settings --------------------------------------------------------- */

/*
 * bench_reps() - repetitions of every measurement: ORDLOCK_BENCH_REPS
 * (default 7). Repetitions interleave the implementations, so that drift
 * of the machine hits them all alike.
 */
unsigned int bench_reps(void);

/*
 * bench_n() - @n scaled by ORDLOCK_BENCH_SCALE (default 1.0; a smaller
 * value makes a quick run), at least @min.
 */
unsigned long bench_n(unsigned long n, unsigned long min);

/* bench_log() - a progress line on stderr */
void bench_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* bench_die() - print the reason on stderr and exit 1 (cannot run) */
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* --- clocks ----------------------------------------------------------- */

/* now_ns() - CLOCK_MONOTONIC in nanoseconds */
uint64_t now_ns(void);

/*
 * bench_clock_overhead() - median cost of an empty timed section (two
 * now_ns() calls), measured once; bench_timed() subtracts it from every
 * sample so that fast operations are not inflated by the clock.
 */
uint64_t bench_clock_overhead(void);

/* --- samples ---------------------------------------------------------- */

struct samples {
	uint64_t *v;
	size_t n;
	size_t cap;
};

void samples_init(struct samples *s, size_t cap);
void samples_free(struct samples *s);
void samples_add(struct samples *s, uint64_t v);
/* samples_add_timed() - add @t1 - @t0 less the clock overhead (>= 0) */
void samples_add_timed(struct samples *s, uint64_t t0, uint64_t t1);
/* percentile (0..100) of the samples, nearest rank; sorts them */
uint64_t samples_pct(struct samples *s, double pct);

/*
 * Samples shared between processes: a fixed array in shared memory that
 * children append to (atomically); bench_shsamples_copy() moves them into
 * a struct samples.
 */
struct shsamples {
	uint64_t n;
	uint64_t cap;
	uint64_t v[];
};

struct shsamples *shsamples_new(size_t cap);
void shsamples_add(struct shsamples *s, uint64_t v);
void shsamples_reset(struct shsamples *s);
void shsamples_copy(struct samples *dst, const struct shsamples *src);
void shsamples_free(struct shsamples *s);

/*
 * struct bench_op - one timed operation of bench_interleave()
 * @fn: does one operation (on @arg)
 * @arg: its argument
 * @s: receives one sample per call (less the clock overhead)
 */
struct bench_op {
	void (*fn)(void *arg);
	void *arg;
	struct samples *s;
};

/*
 * bench_interleave() - time @n calls of each of @nops operations, in blocks
 * of @block calls, rotating through the operations block by block (and
 * starting the rotation at @rep), so that any drift of the machine during
 * the run hits all of them alike.
 */
void bench_interleave(struct bench_op *ops, unsigned int nops, unsigned long n,
		      unsigned int block, unsigned int rep);

/* --- CSV rows ----------------------------------------------------------- */

/*
 * bench_emit() - print the row of one measurement:
 *   row,measure,param,impl,role,unit,samples,median,p99,min,max,note
 * @row: the row of the table ("1".."7")
 * @measure: a short name of the measurement (no commas)
 * @param: its parameter ("k=4", "n=100", "-")
 * @impl: "ordlock", "flock", ...
 * @role: "ordlock", "peer", "floor", "ref" (a reference figure) or "info"
 * @unit: "ns", "B", "ops/s", "x"
 * @note: free text (commas become ';'), or NULL
 * Median and p99 of @s; an empty @s prints an empty row (not measured).
 */
void bench_emit(const char *row, const char *measure, const char *param,
		const char *impl, const char *role, const char *unit,
		struct samples *s, const char *note);

/* bench_emit_value() - a row with one value (median = p99 = @value) */
void bench_emit_value(const char *row, const char *measure, const char *param,
		      const char *impl, const char *role, const char *unit,
		      double value, const char *note);

/* bench_emit_missing() - a row for a measurement that could not be made */
void bench_emit_missing(const char *row, const char *measure, const char *param,
			const char *impl, const char *role, const char *unit,
			const char *note);

/* --- ordlock ------------------------------------------------------------ */

/* ol_open() - a raw owner (fd) in @domain (NULL: default); dies on error */
int ol_open(const char *domain);

/*
 * ol_acquire() - ORDLOCK_IOC_ACQUIRE of @n keys; @f (may be NULL) gets the
 * failure record. Returns 0 or -errno.
 */
int ol_acquire(int fd, const struct ordlock_key *keys, unsigned int n,
	       uint64_t timeout_ns, unsigned int flags,
	       struct ordlock_failure *f);

/* ol_release_all() - release everything; returns 0 or -errno */
int ol_release_all(int fd);

/*
 * The compact ioctls (issue 28): ol_c_lock() - ORDLOCK_IOC_LOCK, @f (may be
 * NULL) gets the failure record; ol_c_unlock_all() - ORDLOCK_IOC_UNLOCK_ALL;
 * ol_c_unlock() - ORDLOCK_IOC_UNLOCK of @n keys. 0 or -errno.
 */
int ol_c_lock(int fd, const struct ordlock_key *keys, unsigned int n,
	    uint64_t timeout_ns, unsigned int flags, struct ordlock_failure *f);
int ol_c_unlock_all(int fd);
int ol_c_unlock(int fd, const struct ordlock_key *keys, unsigned int n);

/* ol_set_policy() - configure @domain (needs root); dies on error */
void ol_set_policy(const char *domain, unsigned int policy,
		   unsigned int detect_delay_ms);

/* ol_bad_ioctl() - an unknown ioctl on @fd (ENOTTY): a null system call */
int ol_bad_ioctl(int fd);

/*
 * struct ol_holder - a child process that holds keys until stopped. A key
 * that the waiting thread itself held through another descriptor would be
 * a deadlock (the kernel sees it), so holders live in processes of their
 * own.
 */
struct ol_holder {
	pid_t pid;
	int go;
};

/* ol_holder_start() - returns once the child holds @keys; dies on error */
void ol_holder_start(struct ol_holder *h, const char *domain,
		     const struct ordlock_key *keys, unsigned int n);
/* ol_holder_stop() - let the child go (which releases the keys) and reap it */
void ol_holder_stop(struct ol_holder *h);

/* Module parameters; ol_param_set() dies on error, restored at exit */
long ol_param_get(const char *name);
void ol_param_set(const char *name, long value);

/* --- ordlock over generic netlink ----------------------------------------- */

/*
 * struct olnl - a raw generic netlink socket (its own ordlock owner) with
 * its requests built once: an ACQUIRE of one exclusive key and a RELEASE
 * with ORDLOCK_RELEASE_ALL, sent again and again as they are. libnl only
 * resolves the family; sending and receiving are plain send()/recv(), as
 * lean as a client can be.
 */
struct olnl {
	int fd;
	unsigned int family;
	size_t acq_len, rel_len, null_len;
	char acq[256], rel[64], null[64];
	char buf[8192];
};

/* olnl_open() - a socket that takes key (@rank, @id) in @domain (NULL: default) */
void olnl_open(struct olnl *nl, const char *domain, uint32_t rank, uint64_t id);
void olnl_close(struct olnl *nl);

/*
 * olnl_acquire() - send the ACQUIRE and wait for its reply, and when it was
 * queued for its RESULT too: 0 once granted, or -errno
 */
int olnl_acquire(struct olnl *nl);
/* olnl_release_all() - RELEASE with ORDLOCK_RELEASE_ALL: 0 or -errno */
int olnl_release_all(struct olnl *nl);
/* olnl_null() - a request of an unknown command (EOPNOTSUPP): a null round trip */
int olnl_null(struct olnl *nl);

/* --- processes --------------------------------------------------------- */

/* shm_alloc() - @size bytes of zeroed memory shared with children */
void *shm_alloc(size_t size);
void shm_free(void *p, size_t size);

/*
 * task_wait_state() - wait until task @tid (a thread id or a process id)
 * sleeps (state S or D in /proc), at most @timeout_ms; 0 or -ETIMEDOUT.
 */
int task_wait_state(pid_t tid, unsigned int timeout_ms);

/* spin_until() - spin (relaxing, yielding now and then) until *@p == @v */
void spin_until(volatile uint64_t *p, uint64_t v);

/* bench_ncpus() - online CPUs */
int bench_ncpus(void);

/* bench_tmpdir() - a fresh directory under $TMPDIR for lock files */
const char *bench_tmpdir(void);

/* bench_pin() - pin the calling task to CPU @cpu % ncpus (best effort) */
void bench_pin(int cpu);

#endif /* ORDLOCK_BENCHLIB_H */
