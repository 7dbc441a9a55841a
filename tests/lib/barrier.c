// SPDX-License-Identifier: GPL-2.0
/* Helpers for multi-process tests: see barrier.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/ordlock.h>

#include "barrier.h"
#include "tap.h"

void *shm_alloc(size_t size)
{
	void *p;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		bail_out("mmap(%zu, MAP_SHARED): %s", size, strerror(errno));
	return p;
}

void shm_free(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * The barrier: @arrived counts the processes of the current round, and
 * @generation advances when the last one arrives. All fields are protected
 * by @lock.
 */
struct pbarrier {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int count;
	unsigned int arrived;
	unsigned int generation;
	int broken;
};

struct pbarrier *pbarrier_new(unsigned int count)
{
	struct pbarrier *b = shm_alloc(sizeof(*b));
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	/* a process dying with the lock held must not hang the others */
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&b->lock, &ma);
	pthread_mutexattr_destroy(&ma);

	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&b->cond, &ca);
	pthread_condattr_destroy(&ca);

	b->count = count;
	return b;
}

void pbarrier_free(struct pbarrier *b)
{
	/*
	 * No pthread_cond_destroy(): glibc's waits for every waiter to leave,
	 * and a waiter killed with SIGKILL never does. Unmapping is enough.
	 */
	shm_free(b, sizeof(*b));
}

static void pbarrier_lock(struct pbarrier *b)
{
	if (pthread_mutex_lock(&b->lock) == EOWNERDEAD) {
		/* the previous owner died: its round can never complete */
		b->broken = 1;
		pthread_mutex_consistent(&b->lock);
	}
}

void pbarrier_break(struct pbarrier *b)
{
	pbarrier_lock(b);
	b->broken = 1;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

int pbarrier_wait(struct pbarrier *b)
{
	struct timespec deadline;
	unsigned int gen;
	int ret = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += PBARRIER_TIMEOUT_MS / 1000;

	pbarrier_lock(b);
	if (b->broken) {
		ret = -EPIPE;
		goto out;
	}
	gen = b->generation;
	if (++b->arrived == b->count) {
		b->arrived = 0;
		b->generation++;
		pthread_cond_broadcast(&b->cond);
		goto out;
	}
	while (b->generation == gen && !b->broken) {
		int err = pthread_cond_timedwait(&b->cond, &b->lock, &deadline);

		if (err == EOWNERDEAD) {
			b->broken = 1;
			pthread_mutex_consistent(&b->lock);
		} else if (err == ETIMEDOUT && b->generation == gen) {
			b->broken = 1;
			pthread_cond_broadcast(&b->cond);
			ret = -ETIMEDOUT;
			diag("barrier: pid %d waited %d ms, giving up",
			     (int)getpid(), PBARRIER_TIMEOUT_MS);
			goto out;
		}
	}
	if (b->generation == gen)
		ret = -EPIPE;
out:
	pthread_mutex_unlock(&b->lock);
	return ret;
}

void diag_proc(pid_t pid)
{
	char path[64], buf[2048], *line, *save;

	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) < 0)
		strcpy(buf, "?");
	diag("  pid %d: state %c, wchan %s", (int)pid, proc_state(pid), buf);
	snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) > 0)
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			diag("    %s", line);
}

pid_t child_start(int (*fn)(void *arg), void *arg)
{
	pid_t parent = getpid();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(254);
		fflush(NULL);
		_exit(fn(arg) & 0xff);
	}
	return pid;
}

static volatile sig_atomic_t usr1_count;

static void usr1_counter(int sig)
{
	(void)sig;
	usr1_count++;
}

void usr1_counter_start(int how)
{
	struct sigaction sa;

	if (!how)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr1_counter;
	sa.sa_flags = how == 1 ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);
}

int usr1_counted(void)
{
	return usr1_count;
}

pid_t sh_start(const char *cmd, const char *out_path, const char *err_path,
	       unsigned int flags, const char *const *env)
{
	pid_t pid;
	int o, e, in;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (pid)
		return pid;
	o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	in = flags & SH_NULL_STDIN ? open("/dev/null", O_RDONLY) : 0;
	if (o < 0 || e < 0 || in < 0)
		_exit(125);
	dup2(in, 0);
	dup2(o, 1);
	dup2(e, 2);
	signal(SIGPIPE, SIG_DFL);
	if (flags & SH_DFL_SIGINT)
		signal(SIGINT, SIG_DFL);
	for (; env && env[0]; env += 2)
		if (env[1])
			setenv(env[0], env[1], 1);
		else
			unsetenv(env[0]);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(125);
}

int sh_status(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

int sh_reap(pid_t pid, unsigned int timeout_ms, const char *what)
{
	uint64_t deadline = now_ms() + timeout_ms;
	int status;

	for (;;) {
		pid_t p = waitpid(pid, &status, WNOHANG);

		if (p == pid)
			return sh_status(status);
		if (now_ms() > deadline) {
			diag("%s (pid %d) still runs after %u ms: killing it", what,
			     (int)pid, timeout_ms);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return -1;
		}
		usleep(2000);
	}
}

int child_wait(pid_t pid, unsigned int timeout_s)
{
	uint64_t deadline;
	unsigned int nap = 1;
	int status;

	if (!timeout_s)
		timeout_s = CHILD_TIMEOUT_S;
	deadline = now_ms() + (uint64_t)timeout_s * 1000;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			diag("waitpid(%d): %s", (int)pid, strerror(errno));
			return -1;
		}
		if (now_ms() >= deadline) {
			diag("child %d still runs after %u s: killing it",
			     (int)pid, timeout_s);
			diag_proc(pid);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return -2;
		}
		sleep_ms(nap);
		if (nap < 20)
			nap *= 2;
	}
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status))
			diag("child %d exited with status %d", (int)pid,
			     WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	if (WIFSIGNALED(status))
		diag("child %d killed by signal %d (%s)", (int)pid,
		     WTERMSIG(status), strsignal(WTERMSIG(status)));
	return -1;
}

int child_kill(pid_t pid, int sig)
{
	uint64_t deadline = now_ms() + (uint64_t)KILL_TIMEOUT_S * 1000;
	int status, reported = 0;

	kill(pid, sig);
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		if (now_ms() >= deadline) {
			if (sig == SIGKILL || reported) {
				diag("child %d not reaped %d s after signal %d",
				     (int)pid, KILL_TIMEOUT_S, sig);
				diag_proc(pid);
				return -1;
			}
			diag("child %d survives signal %d: SIGKILL", (int)pid,
			     sig);
			diag_proc(pid);
			reported = 1;
			sig = SIGKILL;
			kill(pid, SIGKILL);
			deadline = now_ms() + (uint64_t)KILL_TIMEOUT_S * 1000;
		}
		sleep_ms(1);
	}
}

int read_small_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (int)n;
}

char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* "pid (comm) S ...": comm may contain anything, so use the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	return p[2];
}

/*
 * 1 if @pid is inside ioctl(fd, @request), 0 if not, -errno if the
 * information is not available. /proc/<pid>/syscall reads "running" for a
 * running task and "nr arg1 arg2 ..." (hex) for a blocked one.
 */
/*
 * @got is @want, or its compact form (DOC: Compact ioctls), which
 * libordlock uses for the same request
 */
static int same_request(unsigned long long got, unsigned long want)
{
	if (got == want)
		return 1;
	if (want == ORDLOCK_IOC_ACQUIRE)
		return got == ORDLOCK_IOC_LOCK;
	if (want == ORDLOCK_IOC_RELEASE)
		return got == ORDLOCK_IOC_UNLOCK || got == ORDLOCK_IOC_UNLOCK_ALL;
	return 0;
}

int in_ioctl(pid_t pid, unsigned long request)
{
	char path[64], buf[256];
	unsigned long long arg1, arg2;
	long nr;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	n = read_small_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (sscanf(buf, "%ld %llx %llx", &nr, &arg1, &arg2) != 3)
		return 0;
	return nr == SYS_ioctl && same_request(arg2, request);
}

int wait_blocked_ioctl(pid_t pid, unsigned long request, unsigned int timeout_ms)
{
	static int warned;
	uint64_t deadline;
	int stable = 0;

	if (!timeout_ms)
		timeout_ms = BLOCKED_TIMEOUT_MS;
	deadline = now_ms() + timeout_ms;
	while (now_ms() < deadline) {
		char st = proc_state(pid);
		int in;

		if (!st || st == 'Z' || st == 'X')
			return -ESRCH;
		in = in_ioctl(pid, request);
		if (in < 0) {
			/* no /proc/<pid>/syscall: trust the state alone */
			if (!warned++)
				diag("/proc/%d/syscall: %s; using the state only",
				     (int)pid, strerror(-in));
			in = 1;
		}
		if (in && (st == 'S' || st == 'D'))
			stable++;
		else
			stable = 0;
		if (stable >= 3)
			return 0;
		sleep_ms(1);
	}
	diag("pid %d did not block in ioctl 0x%lx within %u ms",
	     (int)pid, request, timeout_ms);
	diag_proc(pid);
	return -ETIMEDOUT;
}

void watchdog_start(unsigned int seconds)
{
	const char *scale = getenv("ORDLOCK_WATCHDOG_SCALE");
	pid_t parent = getpid();
	uint64_t deadline;
	pid_t pid;

	/* a slower kernel (the debug one) stretches every hang guard */
	if (scale && atoi(scale) > 1 && atoi(scale) <= 10) {
		seconds *= (unsigned int)atoi(scale);
		diag("watchdog: %u s (ORDLOCK_WATCHDOG_SCALE=%s)", seconds, scale);
	}

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		bail_out("fork (watchdog): %s", strerror(errno));
	if (pid > 0)
		return;

	/* the watchdog: dies with the test, or kills it when it hangs */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	deadline = now_ms() + (uint64_t)seconds * 1000;
	while (now_ms() < deadline) {
		sleep_ms(200);
		if (getppid() != parent)
			_exit(0);
	}
	printf("Bail out! watchdog: test pid %d still runs after %u s\n",
	       (int)parent, seconds);
	fflush(stdout);
	kill(parent, SIGKILL);
	_exit(0);
}

int wait_path(const char *path)
{
	uint64_t deadline = now_ms() + BLOCKED_TIMEOUT_MS;

	while (access(path, F_OK)) {
		if (now_ms() > deadline) {
			diag("%s never appeared", path);
			return -1;
		}
		usleep(2000);
	}
	return 0;
}

void touch_path(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	if (fd >= 0)
		close(fd);
}
