// SPDX-License-Identifier: GPL-2.0
/*
 * b8_insn: row 8 of the benchmark table, the deterministic yardstick
 * ("make bench ICOUNT=1"). Under qemu's -icount shift=0,sleep=off the
 * guest's clock advances one nanosecond per instruction executed, so a
 * CPU-bound call timed with CLOCK_MONOTONIC counts instructions, and the
 * count repeats run after run. Each operation runs in a plain loop of
 * ORDLOCK_BENCH_INSN_N (default 20 000) calls, each timed on its own; the
 * figure is the median less an empty timed section (see insn()), three
 * times; the row's value is the smallest of the three, and its note says
 * when they differed.
 *
 * Measured, all in the same run: two null system calls (getppid), semop
 * P+V, flock LOCK_EX+LOCK_UN, OFD lock+unlock, ordlock's acquire+release
 * of 1 key in an enforce, a detect and a timeout domain, k keys (k = 1,
 * 2, 4, 8, 16, 64) for ordlock and semop and the cost per added key,
 * failed try-locks (ordlock, flock LOCK_NB, semop IPC_NOWAIT), unknown
 * ioctls on /dev/ordlock (the system call alone, a floor), the
 * closing request of a cycle of 1 000 owners (per owner), and the cost of
 * learning the lock order (issue 17): an ACQUIRE of 1 key in a detect
 * domain holding 1 key (edge known) and holding nothing, with the module
 * parameter order_learn on and off; the 10th and the 1000th waiter of one
 * key joining its queue in each policy (issue 40, group "queue").
 *
 * The peers users pick when speed matters (group "peers", issue 28): a
 * process-shared pthread mutex robust, robust + PTHREAD_PRIO_INHERIT, and
 * not robust, all in MAP_SHARED memory; a raw futex mutex (CAS 0 -> 1,
 * release by exchange with a FUTEX_WAKE only when it saw waiters: none
 * here); FUTEX_LOCK_PI + FUTEX_UNLOCK_PI as system calls on a private and
 * on a shared word; a raw CAS pair on a word; each for k = 1 .. 64 objects
 * taken in order and let go in reverse, and as a failed try-lock of an
 * object another process holds. Next to them the entry floors: one
 * getppid, lseek on /dev/null, an unknown ioctl on /dev/null and on
 * /dev/ordlock, FUTEX_WAKE of a word nobody waits on (private, shared).
 *
 * Without ORDLOCK_BENCH_ICOUNT=1 (the wall-clock "make bench") the figures
 * would be nanoseconds on a noisy machine, not instructions: it reports
 * nothing then.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchlib.h"
#include "libordlock.h"

#define KMAX 64
#define RING 1000
#define LONG_NS (600ULL * 1000000000ULL)

static int ol_fd, ol_detect_fd, ol_timeout_fd, ol_try_fd, semid, semid0;
static int lock_fd, lock_fd2, files[KMAX];
static struct ordlock_key keys[KMAX];
static struct sembuf sem_p[KMAX], sem_v[KMAX];
static const unsigned int ks[] = { 1, 2, 4, 8, 16, 64 };
#define NK (sizeof(ks) / sizeof(ks[0]))

/* --- the operations ------------------------------------------------------ */

static void op_getppid(unsigned long k)
{
	(void)k;
	getppid();
	getppid();
}

static void op_badioctl(unsigned long k)
{
	unsigned long i;

	for (i = 0; i < k; i++)
		ol_bad_ioctl(ol_fd);
}

static void op_semop(unsigned long k)
{
	if (semop(semid, sem_p, k) || semop(semid, sem_v, k))
		bench_die("semop %lu: %s", k, strerror(errno));
}

static void op_flock(unsigned long k)
{
	(void)k;
	if (flock(lock_fd, LOCK_EX) || flock(lock_fd, LOCK_UN))
		bench_die("flock: %s", strerror(errno));
}

static void op_ofd(unsigned long k)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1 };

	(void)k;
	if (fcntl(lock_fd, F_OFD_SETLK, &fl))
		bench_die("F_OFD_SETLK: %s", strerror(errno));
	fl.l_type = F_UNLCK;
	if (fcntl(lock_fd, F_OFD_SETLK, &fl))
		bench_die("F_OFD_SETLK unlock: %s", strerror(errno));
}

static void ordlock_op(int fd, unsigned long k)
{
	if (ol_acquire(fd, keys, k, 0, 0, NULL) || ol_release_all(fd))
		bench_die("ordlock %lu keys: %s", k, strerror(errno));
}

static void op_ordlock(unsigned long k)
{
	ordlock_op(ol_fd, k);
}

/* The compact ioctls (issue 28): ORDLOCK_IOC_LOCK + ORDLOCK_IOC_UNLOCK_ALL */
static void op_compact(unsigned long k)
{
	if (ol_c_lock(ol_fd, keys, k, 0, 0, NULL) || ol_c_unlock_all(ol_fd))
		bench_die("ordlock compact %lu keys: %s", k, strerror(errno));
}

static void op_ordlock_detect(unsigned long k)
{
	ordlock_op(ol_detect_fd, k);
}

static void op_ordlock_timeout(unsigned long k)
{
	ordlock_op(ol_timeout_fd, k);
}

/* --- the fast path (issue 28): libordlock in a domain that has it ------- */

static struct ordlock *fast_ol, *fast_holder;
static struct ordlock_key fast_busy = { .id = 1, .rank = 9,
					.mode = ORDLOCK_MODE_EXCLUSIVE };

/* Give domain @name the fast path for our uid: 0, or -1 (no fast path) */
static int fast_domain(const char *name)
{
	struct ordlock_domain_config cfg;
	struct ordlock *adm = ordlock_open(NULL);
	int ret;

	if (!adm)
		return -1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.flags = ORDLOCK_DOMAIN_SET_FASTPATH;
	cfg.fastpath = 1;
	cfg.fastpath_uid = getuid();
	ret = ordlock_domain_config(adm, name, &cfg) ? -1 : 0;
	ordlock_close(adm);
	return ret;
}

/*
 * A domain with the fast path for our uid; its keys pinned by a first
 * acquire; a second owner holds fast_busy (by the fast path) for the
 * failed try-lock. Returns 0, or -1 when the module has no fast path.
 */
static int fast_setup(void)
{
	if (fast_domain("bench-insn-fast"))
		return -1;
	fast_ol = ordlock_open("bench-insn-fast");
	fast_holder = ordlock_open("bench-insn-fast");
	if (!fast_ol || !fast_holder ||
	    ordlock_acquire(fast_ol, keys, KMAX, 0, 0, NULL) ||
	    ordlock_release(fast_ol, keys, KMAX) ||
	    ordlock_acquire(fast_holder, &fast_busy, 1, 0, 0, NULL) ||
	    ordlock_try_acquire(fast_ol, &fast_busy, 1, NULL) != -EAGAIN)
		bench_die("fast path setup: %s", strerror(errno));
	return 0;
}

/*
 * Slots (issue 40, items 1-3). A raw owner of @domain that pins @n keys
 * (rank 7, ids from @base); its descriptor
 */
static int slots_pin(const char *domain, unsigned int n, uint64_t base)
{
	struct ordlock_set_domain sd = { .size = sizeof(sd) };
	struct ordlock_fast_pin p;
	int fd = open("/dev/ordlock", O_RDWR | O_CLOEXEC);
	unsigned int i;

	snprintf(sd.name, sizeof(sd.name), "%s", domain);
	if (fd < 0 || ioctl(fd, ORDLOCK_IOC_SET_DOMAIN, &sd))
		bench_die("slots: %s: %s", domain, strerror(errno));
	for (i = 0; i < n; i++) {
		memset(&p, 0, sizeof(p));
		p.size = sizeof(p);
		p.rank = 7;
		p.id = base + i;
		if (ioctl(fd, ORDLOCK_IOC_FAST_PIN, &p))
			bench_die("slots: pin %u of %u: %s", i, n, strerror(errno));
	}
	return fd;
}

static struct ordlock *slots_ol;
static struct ordlock_key slots_key = { .id = 1, .rank = 3,
					.mode = ORDLOCK_MODE_EXCLUSIVE };
static struct ordlock_key slots_sh = { .id = 2, .rank = 3,
				       .mode = ORDLOCK_MODE_SHARED };

/* acquire + ordlock_release() of slots_key by slots_ol */
static void op_slots(unsigned long k)
{
	(void)k;
	if (ordlock_acquire(slots_ol, &slots_key, 1, 0, 0, NULL) ||
	    ordlock_release(slots_ol, &slots_key, 1))
		bench_die("slots: %s", strerror(errno));
}

/* a kernel request of a fast owner: slots_sh (shared) + ordlock_release() */
static void op_slots_kernel(unsigned long k)
{
	(void)k;
	if (ordlock_acquire(slots_ol, &slots_sh, 1, 0, 0, NULL) ||
	    ordlock_release(slots_ol, &slots_sh, 1))
		bench_die("slots: shared: %s", strerror(errno));
}

/*
 * One contended acquire of slots_key by slots_ol: a child holds it by the
 * fast path, the acquire waits in the kernel and is handed the key when
 * the child lets go; then ordlock_release()
 */
static void slots_contend(const char *domain)
{
	int go[2];
	char c;
	pid_t pid;

	if (pipe(go))
		bench_die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (!pid) {
		struct ordlock *ol = ordlock_open(domain);

		if (!ol || ordlock_acquire(ol, &slots_key, 1, 0, 0, NULL))
			_exit(1);
		if (write(go[1], "x", 1) != 1)
			_exit(1);
		usleep(200000);
		_exit(ordlock_release(ol, &slots_key, 1) ? 1 : 0);
	}
	if (read(go[0], &c, 1) != 1)
		bench_die("slots: the holder did not start");
	if (ordlock_acquire(slots_ol, &slots_key, 1, 10000, 0, NULL) ||
	    ordlock_release(slots_ol, &slots_key, 1))
		bench_die("slots: contended acquire: %s", strerror(errno));
	waitpid(pid, NULL, 0);
	close(go[0]);
	close(go[1]);
}

static void op_fast(unsigned long k)
{
	if (ordlock_acquire(fast_ol, keys, k, 0, 0, NULL) ||
	    ordlock_release(fast_ol, keys, k))
		bench_die("fast path %lu keys: %s", k, strerror(errno));
}

static void try_fast(unsigned long k)
{
	(void)k;
	if (ordlock_try_acquire(fast_ol, &fast_busy, 1, NULL) != -EAGAIN)
		bench_die("fast path try-lock of a held key did not fail");
}

static void op_flock_k(unsigned long k)
{
	unsigned long i;

	for (i = 0; i < k; i++)
		if (flock(files[i], LOCK_EX))
			bench_die("flock: %s", strerror(errno));
	for (i = k; i-- > 0;)
		if (flock(files[i], LOCK_UN))
			bench_die("flock: %s", strerror(errno));
}

static void try_ordlock(unsigned long k)
{
	(void)k;
	if (ol_acquire(ol_try_fd, keys, 1, 0, ORDLOCK_ACQUIRE_TRY, NULL) != -EAGAIN)
		bench_die("ordlock: the try-lock did not fail");
}

/* The compact try-lock; it asks for the failure record, as libordlock does */
static void try_compact(unsigned long k)
{
	struct ordlock_failure f;

	(void)k;
	if (ol_c_lock(ol_try_fd, keys, 1, 0, ORDLOCK_ACQUIRE_TRY, &f) != -EAGAIN)
		bench_die("ordlock compact: the try-lock did not fail");
}

static void try_flock(unsigned long k)
{
	(void)k;
	if (flock(lock_fd2, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
		bench_die("flock LOCK_NB did not fail");
}

static void try_semop(unsigned long k)
{
	struct sembuf p = { .sem_num = 0, .sem_op = -1, .sem_flg = IPC_NOWAIT };

	(void)k;
	if (semop(semid0, &p, 1) == 0 || errno != EAGAIN)
		bench_die("semop IPC_NOWAIT did not fail");
}

/*
 * The learned order (issue 17): the owner of ol_learn_fd (a detect
 * domain) holds rank 1 id 1 for the whole loop; each call takes rank 2
 * (k = 2: the edge 1 -> 2, known after the warm-up) and lets it go with
 * a RELEASE of that key alone, so that the held key stays. k = 0: the
 * owner holds nothing and takes rank 1 id 2, released likewise. The
 * owner of ol_learn2_fd holds ranks 1 and 2 and takes rank 3 (two known
 * edges).
 */
static int ol_learn_fd, ol_learn0_fd, ol_learn2_fd;
static const struct ordlock_key learn_held = { .id = 1, .rank = 1,
					       .mode = ORDLOCK_MODE_EXCLUSIVE };

/*
 * The acquire alone is timed (the yardstick): learn_acquire()
 * times it into learn_last; the release of that key alone is not timed.
 */
static uint64_t learn_last;
/* set: median_call() takes learn_last, the part its operation timed */
static int timed_inside;

static void learn_op(int fd, const struct ordlock_key *k)
{
	struct ordlock_release rel = {
		.size = sizeof(rel), .nkeys = 1,
		.keys = (uint64_t)(uintptr_t)k,
	};
	uint64_t t0 = now_ns();
	int ret = ol_acquire(fd, k, 1, 0, 0, NULL);

	learn_last = now_ns() - t0;
	if (ret || ioctl(fd, ORDLOCK_IOC_RELEASE, &rel))
		bench_die("learn: acquire+release of %u:%llu: %s", k->rank,
			  (unsigned long long)k->id, strerror(ret ? -ret : errno));
}

static void op_learn(unsigned long k)
{
	static const struct ordlock_key key = { .id = 1, .rank = 2,
						.mode = ORDLOCK_MODE_EXCLUSIVE };

	(void)k;
	learn_op(ol_learn_fd, &key);
}

static void op_learn2(unsigned long k)
{
	static const struct ordlock_key key = { .id = 1, .rank = 3,
						.mode = ORDLOCK_MODE_EXCLUSIVE };

	(void)k;
	learn_op(ol_learn2_fd, &key);
}

static void op_learn0(unsigned long k)
{
	static const struct ordlock_key key = { .id = 2, .rank = 1,
						.mode = ORDLOCK_MODE_EXCLUSIVE };

	(void)k;
	learn_op(ol_learn0_fd, &key);
}

/* --- the peers users pick when speed matters (issue 28) -------------------- */

/*
 * Everything a peer locks lives in one MAP_SHARED mapping (process-shared,
 * as a lock between processes must be), but for the private FUTEX_LOCK_PI
 * words. The try_* objects are held by another process (peer_holder) for
 * the failed try-locks.
 */
struct peer_shm {
	pthread_mutex_t robust[KMAX], robust_pi[KMAX], pshared[KMAX];
	uint32_t futex[KMAX];	/* 0 free, 1 locked, 2 locked with waiters */
	uint32_t pi[KMAX];	/* FUTEX_LOCK_PI words, shared */
	uint32_t cas[KMAX];	/* 0 free, else the owner's tid */
	uint32_t wake;		/* FUTEX_WAKE with nobody waiting, shared */
	pthread_mutex_t try_robust, try_robust_pi, try_pshared;
	uint32_t try_futex, try_pi, try_cas;
};

static struct peer_shm *shm;
static uint32_t pi_private[KMAX], wake_private;
static uint32_t my_tid;
static int devnull_fd;

static long futex_op(uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, w, op, val, NULL, NULL, 0);
}

static void mutex_lock(pthread_mutex_t *m)
{
	int e = pthread_mutex_lock(m);

	if (e)
		bench_die("pthread_mutex_lock: %s", strerror(e));
}

static void mutex_unlock(pthread_mutex_t *m)
{
	int e = pthread_mutex_unlock(m);

	if (e)
		bench_die("pthread_mutex_unlock: %s", strerror(e));
}

static void mutexes_k(pthread_mutex_t *m, unsigned long k)
{
	unsigned long i;

	for (i = 0; i < k; i++)
		mutex_lock(&m[i]);
	for (i = k; i-- > 0;)
		mutex_unlock(&m[i]);
}

static void op_robust(unsigned long k)
{
	mutexes_k(shm->robust, k);
}

static void op_robust_pi(unsigned long k)
{
	mutexes_k(shm->robust_pi, k);
}

static void op_pshared(unsigned long k)
{
	mutexes_k(shm->pshared, k);
}

/* a futex mutex: 0 free, 1 locked, 2 locked and someone may wait */
static void futex_lock(uint32_t *w)
{
	uint32_t c = 0;

	if (__atomic_compare_exchange_n(w, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
	while (c) {
		futex_op(w, FUTEX_WAIT, 2);
		c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
	}
}

static void futex_unlock(uint32_t *w)
{
	if (__atomic_exchange_n(w, 0, __ATOMIC_RELEASE) == 2)
		futex_op(w, FUTEX_WAKE, 1);
}

static void op_futex(unsigned long k)
{
	unsigned long i;

	for (i = 0; i < k; i++)
		futex_lock(&shm->futex[i]);
	for (i = k; i-- > 0;)
		futex_unlock(&shm->futex[i]);
}

static void pi_k(uint32_t *w, unsigned long k, int private)
{
	int lk = FUTEX_LOCK_PI | private, ul = FUTEX_UNLOCK_PI | private;
	unsigned long i;

	for (i = 0; i < k; i++)
		if (futex_op(&w[i], lk, 0))
			bench_die("FUTEX_LOCK_PI: %s", strerror(errno));
	for (i = k; i-- > 0;)
		if (futex_op(&w[i], ul, 0))
			bench_die("FUTEX_UNLOCK_PI: %s", strerror(errno));
}

static void op_pi_private(unsigned long k)
{
	pi_k(pi_private, k, FUTEX_PRIVATE_FLAG);
}

static void op_pi_shared(unsigned long k)
{
	pi_k(shm->pi, k, 0);
}

static void op_cas(unsigned long k)
{
	unsigned long i;
	uint32_t c;

	for (i = 0; i < k; i++) {
		c = 0;
		if (!__atomic_compare_exchange_n(&shm->cas[i], &c, my_tid, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			bench_die("CAS: word %lu taken", i);
	}
	for (i = k; i-- > 0;) {
		c = my_tid;
		if (!__atomic_compare_exchange_n(&shm->cas[i], &c, 0, 0,
						 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			bench_die("CAS: word %lu not ours", i);
	}
}

static void try_mutex(pthread_mutex_t *m)
{
	int e = pthread_mutex_trylock(m);

	if (e != EBUSY)
		bench_die("pthread_mutex_trylock of a held mutex: %s", strerror(e));
}

static void try_robust(unsigned long k)
{
	(void)k;
	try_mutex(&shm->try_robust);
}

static void try_robust_pi(unsigned long k)
{
	(void)k;
	try_mutex(&shm->try_robust_pi);
}

static void try_pshared(unsigned long k)
{
	(void)k;
	try_mutex(&shm->try_pshared);
}

static void try_futex(unsigned long k)
{
	uint32_t c = 0;

	(void)k;
	if (__atomic_compare_exchange_n(&shm->try_futex, &c, 1, 0, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED))
		bench_die("futex try-lock: the word was free");
}

static void try_pi(unsigned long k)
{
	(void)k;
	if (futex_op(&shm->try_pi, FUTEX_TRYLOCK_PI, 0) == 0 || errno != EWOULDBLOCK)
		bench_die("FUTEX_TRYLOCK_PI of a held word did not fail: %s", strerror(errno));
}

static void op_getppid1(unsigned long k)
{
	(void)k;
	getppid();
}

static void op_lseek(unsigned long k)
{
	(void)k;
	if (lseek(devnull_fd, 0, SEEK_SET))
		bench_die("lseek /dev/null: %s", strerror(errno));
}

static void op_null_ioctl(unsigned long k)
{
	(void)k;
	if (ioctl(devnull_fd, _IO(ORDLOCK_IOC_TYPE, 0x7f), 0) == 0 || errno != ENOTTY)
		bench_die("an unknown ioctl on /dev/null did not fail with ENOTTY");
}

static void op_wake_private(unsigned long k)
{
	(void)k;
	if (futex_op(&wake_private, FUTEX_WAKE_PRIVATE, 1))
		bench_die("FUTEX_WAKE woke someone");
}

static void op_wake_shared(unsigned long k)
{
	(void)k;
	if (futex_op(&shm->wake, FUTEX_WAKE, 1))
		bench_die("FUTEX_WAKE woke someone");
}

static void mutex_init(pthread_mutex_t *m, int robust, int pi)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	if (pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) ||
	    (robust && pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST)) ||
	    (pi && pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT)) ||
	    pthread_mutex_init(m, &a))
		bench_die("pthread mutex attributes (robust %d, PI %d)", robust, pi);
	pthread_mutexattr_destroy(&a);
}

static void peers_setup(void)
{
	unsigned int i;

	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		   -1, 0);
	if (shm == MAP_FAILED)
		bench_die("mmap: %s", strerror(errno));
	for (i = 0; i < KMAX; i++) {
		mutex_init(&shm->robust[i], 1, 0);
		mutex_init(&shm->robust_pi[i], 1, 1);
		mutex_init(&shm->pshared[i], 0, 0);
	}
	mutex_init(&shm->try_robust, 1, 0);
	mutex_init(&shm->try_robust_pi, 1, 1);
	mutex_init(&shm->try_pshared, 0, 0);
	my_tid = (uint32_t)syscall(SYS_gettid);
	devnull_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull_fd < 0)
		bench_die("open /dev/null: %s", strerror(errno));
}

/*
 * Another process takes every try_* object and keeps them until the
 * parent closes its end of the pipe; its death then releases the robust
 * ones (and the PI word) as the kernel does.
 */
static pid_t peer_holder_start(int *go_fd)
{
	int ready[2], go[2];
	pid_t pid;
	char c = 0;

	if (pipe(ready) || pipe(go))
		bench_die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (!pid) {
		close(ready[0]);
		close(go[1]);
		mutex_lock(&shm->try_robust);
		mutex_lock(&shm->try_robust_pi);
		mutex_lock(&shm->try_pshared);
		futex_lock(&shm->try_futex);
		if (futex_op(&shm->try_pi, FUTEX_LOCK_PI, 0))
			_exit(1);
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		while (read(go[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1)
		bench_die("the peers' holder could not take its locks");
	close(ready[0]);
	*go_fd = go[1];
	return pid;
}

static void peer_holder_stop(pid_t pid, int go_fd)
{
	int st;

	close(go_fd);
	waitpid(pid, &st, 0);
}

static void op_empty(unsigned long k)
{
	(void)k;
	__asm__ volatile("" ::: "memory");
}

/* --- the loop -------------------------------------------------------------- */

static unsigned long loop_n(void)
{
	const char *s = getenv("ORDLOCK_BENCH_INSN_N");
	long v = s ? strtol(s, NULL, 10) : 20000;

	return v < 100 ? 100 : (unsigned long)v;
}

static uint64_t clock_insn;
/* closing requests of the ring: 10 that the kernel may log, then 9 counted */
static unsigned int ring_requests = 19;

/*
 * ORDLOCK_BENCH_INSN_ONLY="1key,kkeys,policy,try,peers,learn,ring,queue": only these groups
 * (a profile of one of them: tests/bench/b9_profile.sh)
 */
static int want(const char *group)
{
	const char *only = getenv("ORDLOCK_BENCH_INSN_ONLY");
	size_t len = strlen(group);
	const char *p;

	if (!only || !*only)
		return 1;
	for (p = only; (p = strstr(p, group)); p += len)
		if ((p == only || p[-1] == ',') && (!p[len] || p[len] == ','))
			return 1;
	return 0;
}

/* the median of @n calls of @fn(@k), each timed on its own, less the clock */
static uint64_t median_call(void (*fn)(unsigned long), unsigned long k, unsigned long n,
			    struct samples *s)
{
	unsigned long i;
	uint64_t v;

	s->n = 0;
	for (i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		fn(k);
		samples_add(s, timed_inside ? learn_last : now_ns() - t0);
	}
	v = samples_pct(s, 50);
	return v > clock_insn ? v - clock_insn : 0;
}

/*
 * Instructions per call of @fn(@k): every call of a loop of @n (after 200
 * calls to warm up) is timed on its own, and the figure is their median
 * less that of an empty timed section. The timer interrupts that land in
 * a few calls (and the clock's phase against them) stay out of it, so the
 * figure is the instructions of the call itself and repeats exactly. The
 * loop runs three times; *@same: the three medians agreed.
 */
static double insn(void (*fn)(unsigned long), unsigned long k, unsigned long n,
		   int *same)
{
	struct samples s;
	uint64_t v[3];
	unsigned long i;
	int r;

	samples_init(&s, n);
	for (i = 0; i < 200; i++)
		fn(k);
	for (r = 0; r < 3; r++)
		v[r] = median_call(fn, k, n, &s);
	samples_free(&s);
	*same = v[0] == v[1] && v[1] == v[2];
	return (double)(v[0] < v[1] ? (v[0] < v[2] ? v[0] : v[2]) : (v[1] < v[2] ? v[1] : v[2]));
}

static void emit(const char *measure, const char *param, const char *impl,
		 const char *role, double v, int same, const char *note)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%s%s", note,
		 same ? "" : " (the medians of the 3 loops differed: the smallest)");
	bench_emit_value("8", measure, param, impl, role, "insn", v, buf);
	bench_log("%-40s %-8s %-22s %10.1f%s", measure, param, impl, v, same ? "" : " *");
}

/*
 * A row of group "slots": a handle of @domain that took slots_key once
 * (pinning it), after one contended acquire with @contend, then @op
 */
static void slots_row(const char *domain, void (*op)(unsigned long), int contend,
		      unsigned long n, const char *param, const char *impl,
		      const char *note)
{
	double v;
	int same;

	slots_ol = ordlock_open(domain);
	if (!slots_ol)
		bench_die("slots: open %s: %s", domain, strerror(errno));
	op_slots(0);
	if (contend)
		slots_contend(domain);
	v = insn(op, 1, n, &same);
	emit("fast path in real programs", param, impl, "ordlock", v, same, note);
	ordlock_close(slots_ol);
}

/* --- the 1 000-owner cycle ------------------------------------------------ */

struct waiter {
	pthread_t thread;
	pid_t tid;
	int fd;
	unsigned int next;
	int result;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ordlock_key k = { .id = w->next, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	w->result = ol_acquire(w->fd, &k, 1, LONG_NS, 0, NULL);
	ol_release_all(w->fd);
	return NULL;
}

/*
 * A ring of @n owners in a detect domain: owner i holds key i and (but the
 * last) waits for key i + 1; the last one's request for key 0 closes the
 * cycle and fails with EDEADLK. Returns the instructions of that request:
 * the median of 9, after 10 that the kernel may log; *@same: at least 5
 * of the 9 counted the same (no timer interrupt in them).
 */
static double ring(unsigned int n, int *same)
{
	struct waiter *w = calloc(n, sizeof(*w));
	struct ordlock_key k = { .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };
	struct ordlock_failure f;
	pthread_attr_t attr;
	struct samples s;
	uint64_t med;
	unsigned int i, nmed = 0;

	if (!w)
		bench_die("out of memory");
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < n; i++) {
		w[i].fd = ol_open("bench-insn-ring");
		w[i].next = (i + 1) % n;
		k.id = i;
		if (ol_acquire(w[i].fd, &k, 1, 0, ORDLOCK_ACQUIRE_TRY, NULL))
			bench_die("ring: taking key %u: %s", i, strerror(errno));
	}
	for (i = 0; i + 1 < n; i++)
		if (pthread_create(&w[i].thread, &attr, waiter_main, &w[i]))
			bench_die("pthread_create: %s", strerror(errno));
	for (i = 0; i + 1 < n; i++) {
		while (!__atomic_load_n(&w[i].tid, __ATOMIC_SEQ_CST))
			usleep(100);
		if (task_wait_state(w[i].tid, 60000))
			bench_die("ring of %u: waiter %u does not wait", n, i);
	}
	usleep(20000);
	k.id = 0;
	samples_init(&s, 16);
	for (i = 0; i < ring_requests; i++) {
		uint64_t t0 = now_ns();
		int ret = ol_acquire(w[n - 1].fd, &k, 1, LONG_NS, 0, &f);
		uint64_t v = now_ns() - t0;

		if (ret != -EDEADLK || f.cycle_len != n)
			bench_die("ring of %u: the closing request did not fail with EDEADLK and the whole cycle (%d, cycle_len %u)",
				  n, ret, f.cycle_len);
		if (i >= 10)
			samples_add(&s, v > clock_insn ? v - clock_insn : 0);
	}
	med = samples_pct(&s, 50);
	for (i = 0; i < s.n; i++)
		nmed += s.v[i] == med;
	samples_free(&s);
	ol_release_all(w[n - 1].fd);
	for (i = n - 1; i-- > 0;) {
		pthread_join(w[i].thread, NULL);
		if (w[i].result)
			bench_die("ring of %u: waiter %u: %s", n, i, strerror(-w[i].result));
	}
	for (i = 0; i < n; i++)
		close(w[i].fd);
	pthread_attr_destroy(&attr);
	free(w);
	*same = nmed >= 5;
	return (double)med;
}

/* --- the M-th waiter of one key (issue 40) --------------------------------- */

static const struct ordlock_key qkey = { .id = 1, .rank = 1,
					 .mode = ORDLOCK_MODE_EXCLUSIVE };
static int q_fd;

static void *qwaiter_main(void *arg)
{
	struct waiter *w = arg;

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	w->result = ol_acquire(w->fd, &qkey, 1, LONG_NS, 0, NULL);
	ol_release_all(w->fd);
	return NULL;
}

/*
 * One more waiter joins the queue and leaves it: an ACQUIRE of the key
 * with a timeout of 1 ns, which queues at the tail, joins the wait-for
 * graph (with the policy's cycle check), finds its deadline past (under
 * -icount a nanosecond is an instruction) and leaves: ETIMEDOUT.
 */
static void op_queue_join(unsigned long k)
{
	int ret = ol_acquire(q_fd, &qkey, 1, 1, 0, NULL);

	(void)k;
	if (ret != -ETIMEDOUT)
		bench_die("queue: the waiter that joins got %d, not ETIMEDOUT", ret);
}

/*
 * In @domain, another process holds 1:1 and @waiters[0 .. *@nw) wait for
 * it (one thread and owner each): start threads until @m wait, and
 * make sure they all sleep
 */
static void queue_fill(const char *domain, struct waiter *w, unsigned int *nw,
		       unsigned int m, pthread_attr_t *attr)
{
	unsigned int i;

	for (i = *nw; i < m; i++) {
		w[i].fd = ol_open(domain);
		if (pthread_create(&w[i].thread, attr, qwaiter_main, &w[i]))
			bench_die("pthread_create: %s", strerror(errno));
	}
	for (i = *nw; i < m; i++) {
		while (!__atomic_load_n(&w[i].tid, __ATOMIC_SEQ_CST))
			usleep(100);
		if (task_wait_state(w[i].tid, 60000))
			bench_die("queue of %u: waiter %u does not wait", m, i);
	}
	*nw = m;
	usleep(20000);
}

/*
 * The instructions of the 10th and the 1000th waiter of one key joining
 * (and leaving) its queue in @domain, whose policy is @impl's: the cost
 * of adding a waiter, which issue 40 wants O(1) or O(log M) in every
 * policy (the 1000th at most 2x the 10th). The loops are shorter than
 * the others' (@n / 20): a join cost 33 782 at 1000 before.
 */
static void queue_rows(const char *domain, const char *impl, const char *note,
		       unsigned long n)
{
	static const unsigned int at[] = { 10, 1000 };
	struct waiter *w = calloc(1000, sizeof(*w));
	struct ol_holder holder;
	pthread_attr_t attr;
	unsigned int i, nw = 0;
	char param[16], buf[160];
	double v;
	int same;

	if (!w)
		bench_die("out of memory");
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	ol_holder_start(&holder, domain, &qkey, 1);
	q_fd = ol_open(domain);
	for (i = 0; i < 2; i++) {
		queue_fill(domain, w, &nw, at[i] - 1, &attr);
		v = insn(op_queue_join, 0, n / 20 < 100 ? 100 : n / 20, &same);
		snprintf(param, sizeof(param), "M=%u", at[i]);
		snprintf(buf, sizeof(buf), "%s; %u waiters queued ahead, exclusive, behind a holder",
			 note, at[i] - 1);
		emit("M-th waiter joins a key's queue", param, impl, "ordlock", v, same, buf);
	}
	ol_holder_stop(&holder);
	for (i = 0; i < nw; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].result)
			bench_die("queue: waiter %u: %s", i, strerror(-w[i].result));
		close(w[i].fd);
	}
	close(q_fd);
	pthread_attr_destroy(&attr);
	free(w);
}

/* --- main ------------------------------------------------------------------- */

int main(void)
{
	unsigned long n = loop_n();
	struct rlimit rl = { 65536, 65536 };
	const char *icount = getenv("ORDLOCK_BENCH_ICOUNT");
	struct ordlock_key held = { .id = 1, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };
	struct ol_holder holder;
	double o[NK], c[NK], s[NK], f[NK], v;
	char path[300], param[16];
	const char *dir;
	unsigned int i;
	int same;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!icount || strcmp(icount, "1")) {
		bench_log("not under icount (make bench ICOUNT=1): nothing to count");
		return 0;
	}
	setrlimit(RLIMIT_NOFILE, &rl);
	for (i = 0; i < KMAX; i++) {
		keys[i] = (struct ordlock_key){ .id = i + 1, .rank = 1,
						.mode = ORDLOCK_MODE_EXCLUSIVE };
		sem_p[i] = (struct sembuf){ .sem_num = i, .sem_op = -1 };
		sem_v[i] = (struct sembuf){ .sem_num = i, .sem_op = 1 };
	}
	ol_fd = ol_open(NULL);
	ol_set_policy("bench-insn-detect", ORDLOCK_POLICY_DETECT, 0);
	ol_set_policy("bench-insn-timeout", ORDLOCK_POLICY_TIMEOUT, 0);
	ol_set_policy("bench-insn-ring", ORDLOCK_POLICY_DETECT, 0);
	ol_detect_fd = ol_open("bench-insn-detect");
	ol_timeout_fd = ol_open("bench-insn-timeout");
	ol_try_fd = ol_open("bench-insn-try");
	dir = bench_tmpdir();
	snprintf(path, sizeof(path), "%s/lock", dir);
	lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	lock_fd2 = open(path, O_RDWR | O_CLOEXEC);
	if (lock_fd < 0 || lock_fd2 < 0)
		bench_die("open %s: %s", path, strerror(errno));
	for (i = 0; i < KMAX; i++) {
		snprintf(path, sizeof(path), "%s/k%u", dir, i);
		files[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (files[i] < 0)
			bench_die("open %s: %s", path, strerror(errno));
	}
	semid = semget(IPC_PRIVATE, KMAX, IPC_CREAT | 0600);
	semid0 = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	if (semid < 0 || semid0 < 0)
		bench_die("semget: %s", strerror(errno));
	for (i = 0; i < KMAX; i++)
		if (semctl(semid, i, SETVAL, 1))
			bench_die("semctl SETVAL: %s", strerror(errno));
	bench_log("%lu iterations per loop, 3 loops per figure", n);

	/* ORDLOCK_BENCH_INSN_PROFILE=NAME: only a loop of that, to profile */
	icount = getenv("ORDLOCK_BENCH_INSN_PROFILE");
	if (icount && *icount) {
		static const struct {
			const char *name;
			void (*fn)(unsigned long);
			unsigned long k;
		} prof[] = {
			{ "ordlock1", op_ordlock, 1 }, { "ordlock64", op_ordlock, 64 },
			{ "compact1", op_compact, 1 }, { "trycompact", try_compact, 1 },
			{ "semop1", op_semop, 1 }, { "semop64", op_semop, 64 },
			{ "flock", op_flock, 1 }, { "try", try_ordlock, 1 },
			{ "tryflock", try_flock, 1 },
			{ "learn", op_learn, 1 }, { "learnoff", op_learn, 0 },
		};
		unsigned long j;

		if (!strcmp(icount, "ring")) {
			ring_requests = 1000; /* the closing requests outweigh the setup */
			ring(RING, &same);
			return 0;
		}
		for (i = 0; i < sizeof(prof) / sizeof(prof[0]); i++)
			if (!strcmp(prof[i].name, icount))
				break;
		if (i == sizeof(prof) / sizeof(prof[0]))
			bench_die("ORDLOCK_BENCH_INSN_PROFILE=%s: no such loop", icount);
		if (prof[i].fn == try_ordlock || prof[i].fn == try_compact)
			ol_holder_start(&holder, "bench-insn-try", &held, 1);
		if (prof[i].fn == op_learn) {
			ol_set_policy("bench-insn-learn", ORDLOCK_POLICY_DETECT, 0);
			ol_learn_fd = ol_open("bench-insn-learn");
			if (ol_acquire(ol_learn_fd, &learn_held, 1, 0, 0, NULL))
				bench_die("learn: taking the held key: %s", strerror(errno));
			op_learn(0);	/* learns the edge */
			ol_param_set("order_learn", (long)prof[i].k);
		}
		if (prof[i].fn == try_flock && flock(lock_fd, LOCK_EX))
			bench_die("flock: %s", strerror(errno));
		for (j = 0; j < n; j++)
			prof[i].fn(prof[i].k);
		if (prof[i].fn == try_ordlock || prof[i].fn == try_compact)
			ol_holder_stop(&holder);
		return 0;
	}

	{
		struct samples cs;

		samples_init(&cs, n);
		clock_insn = 0;
		clock_insn = median_call(op_empty, 0, n, &cs);
		samples_free(&cs);
	}
	emit("timed section", "-", "2x clock_gettime", "floor", (double)clock_insn, 1,
	     "an empty timed section: subtracted from every figure");

#define M1 "acquire+release 1 key"
	if (want("1key")) {
	v = insn(op_ordlock, 1, n, &same);
	emit(M1, "-", "ordlock", "ordlock", v, same, "ioctl ACQUIRE + RELEASE_ALL; enforce domain");
	v = insn(op_compact, 1, n, &same);
	emit(M1, "-", "ordlock compact", "ordlock", v, same,
	     "the compact ioctls LOCK + UNLOCK_ALL; enforce domain");
	v = insn(op_flock, 1, n, &same);
	emit(M1, "-", "flock", "peer", v, same, "LOCK_EX + LOCK_UN");
	v = insn(op_semop, 1, n, &same);
	emit(M1, "-", "semop", "peer", v, same, "P + V; no SEM_UNDO");
	v = insn(op_ofd, 1, n, &same);
	emit(M1, "-", "ofd", "peer", v, same, "F_OFD_SETLK wrlck + unlck");
	v = insn(op_getppid, 1, n, &same);
	emit(M1, "-", "2x getppid", "floor", v, same, "two null system calls");
	v = insn(op_badioctl, 2, n, &same);
	emit(M1, "-", "2x bad ioctl", "floor", v, same,
	     "two unknown ioctls on /dev/ordlock (ENOTTY): the system calls alone");
	}

#define M5 "no-wait acquire+release by policy"
	if (want("policy")) {
	v = insn(op_ordlock, 1, n, &same);
	emit(M5, "-", "ordlock", "ordlock", v, same, "enforce domain");
	v = insn(op_ordlock_detect, 1, n, &same);
	emit(M5, "-", "ordlock-detect", "ordlock", v, same, "detect domain");
	v = insn(op_ordlock_timeout, 1, n, &same);
	emit(M5, "-", "ordlock-timeout", "ordlock", v, same, "timeout domain");
	}

#define M2 "atomic acquire+release of k keys"
	if (want("kkeys")) {
	for (i = 0; i < NK; i++) {
		snprintf(param, sizeof(param), "k=%u", ks[i]);
		o[i] = insn(op_ordlock, ks[i], n / (ks[i] > 8 ? 4 : 1), &same);
		emit(M2, param, "ordlock", "ordlock", o[i], same, "1 ACQUIRE of k keys + 1 RELEASE_ALL");
		c[i] = insn(op_compact, ks[i], n / (ks[i] > 8 ? 4 : 1), &same);
		emit(M2, param, "ordlock compact", "ordlock", c[i], same,
		     "1 LOCK of k keys + 1 UNLOCK_ALL (the compact ioctls)");
		s[i] = insn(op_semop, ks[i], n / (ks[i] > 8 ? 4 : 1), &same);
		emit(M2, param, "semop", "peer", s[i], same, "semop of k ops (P) + semop of k ops (V)");
		f[i] = insn(op_flock_k, ks[i], n / (ks[i] > 8 ? 4 : 1), &same);
		emit(M2, param, "flock", "peer", f[i], same, "k x LOCK_EX in order + k x LOCK_UN");
	}
#define MK "per added key (k=1 to k=64)"
	emit(MK, "-", "ordlock", "ordlock", (o[NK - 1] - o[0]) / 63, 1,
	     "(ordlock k=64 - k=1) / 63: one more key of the request");
	emit(MK, "-", "ordlock compact", "ordlock", (c[NK - 1] - c[0]) / 63, 1,
	     "(compact k=64 - k=1) / 63");
	emit(MK, "-", "semop", "peer", (s[NK - 1] - s[0]) / 63, 1,
	     "(semop k=64 - k=1) / 63: one more operation in P and in V");
	emit(MK, "-", "flock", "peer", (f[NK - 1] - f[0]) / 63, 1,
	     "(flock k=64 - k=1) / 63: two more system calls");
	}

#define M6 "failed try-lock"
	if (want("try")) {
	ol_holder_start(&holder, "bench-insn-try", &held, 1);
	if (flock(lock_fd, LOCK_EX))
		bench_die("flock: %s", strerror(errno));
	v = insn(try_ordlock, 1, n, &same);
	emit(M6, "-", "ordlock", "ordlock", v, same, "ACQUIRE_TRY of a key another owner holds; EAGAIN");
	v = insn(try_compact, 1, n, &same);
	emit(M6, "-", "ordlock compact", "ordlock", v, same,
	     "LOCK with ORDLOCK_ACQUIRE_TRY, the failure record written; EAGAIN");
	v = insn(try_flock, 1, n, &same);
	emit(M6, "-", "flock LOCK_NB", "peer", v, same, "file locked through another open file description; EWOULDBLOCK");
	v = insn(try_semop, 1, n, &same);
	emit(M6, "-", "semop IPC_NOWAIT", "peer", v, same, "semaphore at 0; EAGAIN");
	v = insn(op_badioctl, 1, n, &same);
	emit(M6, "-", "bad ioctl", "floor", v, same, "one unknown ioctl on /dev/ordlock (ENOTTY)");
	flock(lock_fd, LOCK_UN);
	ol_holder_stop(&holder);
	}

	if (want("fast") && !fast_setup()) {
		double f1 = 0, f64 = 0;

		for (i = 0; i < NK; i++) {
			snprintf(param, sizeof(param), "k=%u", ks[i]);
			v = insn(op_fast, ks[i], n / (ks[i] > 8 ? 4 : 1), &same);
			emit(i ? M2 : M1, i ? param : "-", "ordlock-fast", "ordlock", v, same,
			     "libordlock, fast-path domain: k CAS in order + k CAS release, no system call");
			if (!i)
				f1 = v;
			f64 = v;
		}
		emit(MK, "-", "ordlock-fast", "ordlock", (f64 - f1) / 63, 1,
		     "(ordlock-fast k=64 - k=1) / 63");
		v = insn(try_fast, 1, n, &same);
		emit(M6, "-", "ordlock-fast", "ordlock", v, same,
		     "try-lock of a key another owner holds by the fast path; EAGAIN, no system call");
	}

	if (want("slots") && !fast_domain("bench-insn-recycle") &&
	    !fast_domain("bench-insn-k1") && !fast_domain("bench-insn-k1023") &&
	    !fast_domain("bench-insn-contend")) {
		int pfd;

		/* (a) 1024 keys pinned by an owner now gone, then a new key */
		close(slots_pin("bench-insn-recycle", 1024, 1000));
		slots_row("bench-insn-recycle", op_slots, 0, n, "-", "ordlock-fast recycled",
			  "a new key's acquire + ordlock_release() after 1024 other keys were pinned by an owner now gone (its pin not counted)");
		/* (b) a fast owner's kernel request, 1 and 1023 slots pinned */
		slots_row("bench-insn-k1", op_slots_kernel, 0, n, "slots=1", "ordlock-fast kernel",
			  "a fast owner's shared acquire + ordlock_release() (the kernel's), 1 slot pinned in the domain");
		pfd = slots_pin("bench-insn-k1023", 1022, 1000);
		slots_row("bench-insn-k1023", op_slots_kernel, 0, n, "slots=1023", "ordlock-fast kernel",
			  "the same, 1023 slots pinned in the domain (1022 by another owner)");
		close(pfd);
		/* (c) the next pair after one contended acquire + ordlock_release() */
		slots_row("bench-insn-contend", op_slots, 1, n, "-", "ordlock-fast after contention",
			  "1-key acquire + ordlock_release() after one contended acquire released with ordlock_release()");
	}

#define M0 "entry floor: one system call"
	if (want("peers")) {
		static const struct {
			const char *impl;
			void (*fn)(unsigned long);
			const char *note;
		} kp[] = {
			{ "pthread robust", op_robust, "pshared + robust mutexes in MAP_SHARED memory: k locks in order + k unlocks" },
			{ "pthread robust PI", op_robust_pi, "the same + PTHREAD_PRIO_INHERIT" },
			{ "pthread pshared", op_pshared, "pshared mutexes; not robust" },
			{ "futex mutex", op_futex, "CAS 0 -> 1; release by exchange; FUTEX_WAKE only if it saw waiters (none)" },
			{ "futex PI private", op_pi_private, "FUTEX_LOCK_PI_PRIVATE + FUTEX_UNLOCK_PI_PRIVATE system calls on private words" },
			{ "futex PI shared", op_pi_shared, "FUTEX_LOCK_PI + FUTEX_UNLOCK_PI system calls on MAP_SHARED words" },
			{ "raw CAS", op_cas, "CAS 0 -> tid + CAS tid -> 0 on a word in MAP_SHARED memory" },
		};
		static const struct {
			const char *impl;
			void (*fn)(unsigned long);
			const char *note;
		} tp[] = {
			{ "pthread robust", try_robust, "pthread_mutex_trylock of a robust mutex another process holds; EBUSY" },
			{ "pthread robust PI", try_robust_pi, "the same; robust + PRIO_INHERIT; EBUSY" },
			{ "pthread pshared", try_pshared, "the same; not robust; EBUSY" },
			{ "futex mutex", try_futex, "a failed CAS 0 -> 1" },
			{ "FUTEX_TRYLOCK_PI", try_pi, "the system call on a shared word another process holds; EWOULDBLOCK" },
		};
		static const struct {
			const char *impl;
			void (*fn)(unsigned long);
			unsigned long k;
			const char *note;
		} fp[] = {
			{ "getppid", op_getppid1, 1, "a null system call" },
			{ "lseek /dev/null", op_lseek, 1, "fdget + a trivial file operation" },
			{ "ioctl /dev/null", op_null_ioctl, 1, "an unknown ioctl on a device without ioctls (ENOTTY): fdget + the security hooks + the VFS switch" },
			{ "ioctl /dev/ordlock", op_badioctl, 1, "an unknown ioctl on /dev/ordlock (ENOTTY): the same + ordlock's entry" },
			{ "FUTEX_WAKE private", op_wake_private, 1, "FUTEX_WAKE_PRIVATE of a word nobody waits on" },
			{ "FUTEX_WAKE shared", op_wake_shared, 1, "FUTEX_WAKE of a MAP_SHARED word nobody waits on" },
		};
		double first[sizeof(kp) / sizeof(kp[0])];
		unsigned int j;
		pid_t holder_pid;
		int go_fd;

		peers_setup();
		for (i = 0; i < NK; i++) {
			snprintf(param, sizeof(param), "k=%u", ks[i]);
			for (j = 0; j < sizeof(kp) / sizeof(kp[0]); j++) {
				v = insn(kp[j].fn, ks[i], n / (ks[i] > 8 ? 4 : 1), &same);
				emit(M2, param, kp[j].impl, "peer", v, same, kp[j].note);
				if (!i)
					first[j] = v;
				else if (i == NK - 1)
					emit(MK, "-", kp[j].impl, "peer", (v - first[j]) / 63, 1,
					     "(k=64 - k=1) / 63");
			}
		}
		holder_pid = peer_holder_start(&go_fd);
		for (j = 0; j < sizeof(tp) / sizeof(tp[0]); j++) {
			v = insn(tp[j].fn, 1, n, &same);
			emit(M6, "-", tp[j].impl, "peer", v, same, tp[j].note);
		}
		peer_holder_stop(holder_pid, go_fd);
		for (j = 0; j < sizeof(fp) / sizeof(fp[0]); j++) {
			v = insn(fp[j].fn, fp[j].k, n, &same);
			emit(M0, "-", fp[j].impl, "floor", v, same, fp[j].note);
		}
	}

#define M8L "acquire 1 key holding 1, edge known"
#define M8F "acquire 1 key holding nothing"
#define M8M "acquire 1 key holding 2, edges known"
	if (want("learn")) {
		static const char *const impl[2] = { "ordlock-no-learning", "ordlock-learning" };
		static const char *const role[2] = { "ref", "ordlock" };
		const struct ordlock_key held2[2] = {
			{ .id = 1, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE },
			{ .id = 1, .rank = 2, .mode = ORDLOCK_MODE_EXCLUSIVE },
		};
		double lv[3][2];
		int l;

		ol_set_policy("bench-insn-learn", ORDLOCK_POLICY_DETECT, 0);
		ol_set_policy("bench-insn-learn2", ORDLOCK_POLICY_DETECT, 0);
		ol_learn_fd = ol_open("bench-insn-learn");
		ol_learn0_fd = ol_open("bench-insn-learn");
		ol_learn2_fd = ol_open("bench-insn-learn2");
		if (ol_acquire(ol_learn2_fd, held2, 2, 0, 0, NULL))
			bench_die("learn: taking the held keys: %s", strerror(errno));
		if (ol_acquire(ol_learn_fd, &learn_held, 1, 0, 0, NULL))
			bench_die("learn: taking the held key: %s", strerror(errno));
		timed_inside = 1;
		/* learning on first: the warm-up of insn() learns the edge */
		for (l = 1; l >= 0; l--) {
			ol_param_set("order_learn", l);
			lv[0][l] = insn(op_learn, 2, n, &same);
			emit(M8L, "-", impl[l], role[l], lv[0][l], same, l ?
			     "order_learn=1, detect domain: the edge 1 -> 2 is known; ACQUIRE alone" :
			     "order_learn=0: the same ACQUIRE; the issue allows +3%");
			lv[2][l] = insn(op_learn2, 0, n, &same);
			emit(M8M, "-", impl[l], role[l], lv[2][l], same, l ?
			     "order_learn=1: ranks 1 and 2 held, rank 3 taken; ACQUIRE alone" :
			     "order_learn=0");
			lv[1][l] = insn(op_learn0, 0, n, &same);
			emit(M8F, "-", impl[l], role[l], lv[1][l], same, l ?
			     "order_learn=1: nothing held, nothing to learn; ACQUIRE alone" :
			     "order_learn=0");
		}
		timed_inside = 0;
		ol_param_set("order_learn", 1);
		bench_log("learning costs %+.1f%% holding 1 key, %+.1f%% holding 2, %+.1f%% holding nothing",
			  100.0 * (lv[0][1] / lv[0][0] - 1), 100.0 * (lv[2][1] / lv[2][0] - 1),
			  100.0 * (lv[1][1] / lv[1][0] - 1));
		ol_release_all(ol_learn_fd);
		close(ol_learn_fd);
		close(ol_learn0_fd);
		close(ol_learn2_fd);
	}

#define M7 "cycle closed -> EDEADLK: per owner"
	if (want("ring")) {
		snprintf(param, sizeof(param), "n=%u", RING);
		v = ring(RING, &same);
		emit(M7, param, "ordlock", "ordlock", v / RING, same,
		     "the closing request of a ring of n owners (detect domain) / n");
	}

	if (want("queue")) {
		ol_set_policy("bench-insn-queue-e", ORDLOCK_POLICY_ENFORCE, 0);
		ol_set_policy("bench-insn-queue-d", ORDLOCK_POLICY_DETECT, 0);
		ol_set_policy("bench-insn-queue-t", ORDLOCK_POLICY_TIMEOUT, 0);
		queue_rows("bench-insn-queue-d", "ordlock-detect", "detect domain", n);
		queue_rows("bench-insn-queue-e", "ordlock", "enforce domain", n);
		queue_rows("bench-insn-queue-t", "ordlock-timeout", "timeout domain", n);
	}

	semctl(semid, 0, IPC_RMID);
	semctl(semid0, 0, IPC_RMID);
	return 0;
}
