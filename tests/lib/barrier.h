/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for multi-process tests: shared memory, a process-shared barrier
 * with a timeout, child processes with a hang guard, and a way to wait
 * until a process really sleeps in the kernel.
 *
 * Nothing here waits forever: every wait is bounded, so a kernel bug makes
 * a test fail instead of hanging the suite.
 *
 * Children must not call ok(): the TAP numbering belongs to the parent.
 * A child reports through shared memory and its exit status, and may use
 * diag().
 */
#ifndef ORDLOCK_TEST_BARRIER_H
#define ORDLOCK_TEST_BARRIER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a barrier or a child may take before the test calls it hung. */
#define PBARRIER_TIMEOUT_MS	60000
#define CHILD_TIMEOUT_S		120
#define BLOCKED_TIMEOUT_MS	20000
#define KILL_TIMEOUT_S		20

/*
 * shm_alloc() - zeroed memory shared with the children forked later
 * (MAP_SHARED | MAP_ANONYMOUS). Bails out of the test on failure.
 */
void *shm_alloc(size_t size);
void shm_free(void *p, size_t size);

/*
 * struct pbarrier - a barrier for @count processes, in shared memory.
 *
 * pthread_barrier_wait() cannot time out, and a barrier whose partner died
 * would hang the test; this one is built from a PTHREAD_PROCESS_SHARED
 * mutex and condition variable on CLOCK_MONOTONIC instead. A wait that
 * times out marks the barrier broken, and every later wait fails at once,
 * so the other side does not hang either.
 */
struct pbarrier;

struct pbarrier *pbarrier_new(unsigned int count);
void pbarrier_free(struct pbarrier *b);

/*
 * pbarrier_wait() - wait until @count processes arrived. Returns 0, or
 * -ETIMEDOUT after PBARRIER_TIMEOUT_MS, or -EPIPE if the barrier is broken.
 */
int pbarrier_wait(struct pbarrier *b);

/* pbarrier_break() - make every current and future wait fail (-EPIPE). */
void pbarrier_break(struct pbarrier *b);

/*
 * child_start() - fork a child that runs @fn(@arg) and exits with its
 * return value. The child dies with SIGKILL when the parent dies, so a
 * test killed by its watchdog leaves nothing behind. Bails out on failure.
 */
pid_t child_start(int (*fn)(void *arg), void *arg);

/*
 * child_wait() - reap @pid, waiting at most @timeout_s seconds (0: the
 * default CHILD_TIMEOUT_S). Returns the exit status (0..255); -1 if the
 * child was killed by a signal; -2 if it hung (it is then killed with
 * SIGKILL and reaped). Explains every abnormal end with diag().
 */
int child_wait(pid_t pid, unsigned int timeout_s);

/*
 * child_kill() - send @sig to @pid and reap it, waiting at most
 * KILL_TIMEOUT_S (then SIGKILL, and as long again). Returns the raw wait
 * status, or -1 if the child could not be reaped (it is left behind, and
 * its state and kernel stack are shown with diag()).
 */
int child_kill(pid_t pid, int sig);

/*
 * Shell commands run in the background, their output in files (the CLI
 * tests: t_ordlockctl, t_exec_nested, t_hostile_exec, unit/t_ctl_cli).
 *
 * sh_start() - fork "sh -c @cmd": its stdout to @out_path, its stderr to
 * @err_path (created or truncated), SIGPIPE back to the default, and
 * SH_NULL_STDIN: its stdin from /dev/null; SH_DFL_SIGINT: SIGINT back to
 * the default too. @env: NULL-terminated pairs NAME, VALUE put in its
 * environment (VALUE NULL: NAME removed), or NULL. The child exits 125
 * when it cannot set that up or run sh. Returns its pid; bails out when
 * fork() fails.
 */
#define SH_NULL_STDIN	1
#define SH_DFL_SIGINT	2
pid_t sh_start(const char *cmd, const char *out_path, const char *err_path,
	       unsigned int flags, const char *const *env);

/* sh_status() - a wait status as the shell says it: N, 128 + signal, or -1 */
int sh_status(int status);

/*
 * sh_reap() - wait for @pid at most @timeout_ms: its sh_status(); -1 when it
 * still ran (it is killed with SIGKILL and reaped, after a diag() naming
 * @what).
 */
int sh_reap(pid_t pid, unsigned int timeout_ms, const char *what);

/*
 * read_small_file() - at most @len - 1 bytes of @path into @buf, NUL
 * terminated ("" when it cannot be read): the bytes read, or -errno
 */
int read_small_file(const char *path, char *buf, size_t len);

/*
 * in_ioctl() - 1 if @pid is inside ioctl(fd, @request) now, 0 if not,
 * -errno when /proc does not tell. ACQUIRE and RELEASE stand for their
 * compact forms too (LOCK; UNLOCK, UNLOCK_ALL), which libordlock uses
 */
int in_ioctl(pid_t pid, unsigned long request);

/*
 * wait_blocked_ioctl() - wait until @pid sleeps inside ioctl(fd, @request),
 * as /proc/<pid>/syscall and /proc/<pid>/stat show (the state must read
 * 'S' or 'D' in several polls in a row). Polls for at most @timeout_ms
 * (0: BLOCKED_TIMEOUT_MS). Returns 0 or -ETIMEDOUT; -ESRCH if @pid exited.
 */
int wait_blocked_ioctl(pid_t pid, unsigned long request, unsigned int timeout_ms);

/* diag_proc() - diag() the state, wchan and kernel stack of @pid. */
void diag_proc(pid_t pid);

/* proc_state() - the state letter of /proc/<pid>/stat, or 0. */
char proc_state(pid_t pid);

/*
 * watchdog_start() - kill this test with SIGKILL (and so its children) if
 * it still runs after @seconds, after printing "Bail out!". The guest sets
 * ORDLOCK_WATCHDOG_SCALE (2-10) on the debug kernel, which multiplies
 * @seconds: the same program runs several times slower there.
 */
void watchdog_start(unsigned int seconds);

/*
 * usr1_counter_start() - from now on this process counts the SIGUSR1s it
 * handles (usr1_counted()): @how 1 with SA_RESTART, 2 without; 0 installs
 * nothing (SIGUSR1 keeps its disposition). For a waiter that a test
 * interrupts (t_jobctl, t_hostile_sig).
 */
void usr1_counter_start(int how);
int usr1_counted(void);

/* now_ms() - CLOCK_MONOTONIC in milliseconds. */
uint64_t now_ms(void);

/* sleep_ms() - sleep @ms milliseconds (a signal does not cut it short). */
void sleep_ms(unsigned int ms);

/*
 * wait_path() - wait until @path exists (a marker file another process
 * creates), polling for at most BLOCKED_TIMEOUT_MS. Returns 0, or -1 after
 * a diag() naming the path.
 */
int wait_path(const char *path);

/* touch_path() - create @path if it does not exist (a marker file). */
void touch_path(const char *path);

/* shared_counter_next() - atomically return *@c and increment it. */
static inline unsigned int shared_counter_next(unsigned int *c)
{
	return __atomic_fetch_add(c, 1, __ATOMIC_SEQ_CST);
}

#endif /* ORDLOCK_TEST_BARRIER_H */
