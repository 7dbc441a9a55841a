// SPDX-License-Identifier: GPL-2.0
/*
 * t_fastpath: the kernel's side of the fast path (issue 28,
 * docs/fastpath.md), driven by the raw protocol: the domain setting, PIN,
 * mmap() of the words and of the owner page, a user CAS that the kernel's
 * requests respect, the handoff of a contended key through
 * ORDLOCK_IOC_FAST_RELEASE (FIFO), a waiter's timeout, death (close,
 * exit, SIGKILL at every step of the acquire), and hostile words.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "oltest.h"
#include "tap.h"

#define EX ORDLOCK_MODE_EXCLUSIVE
#define K ORDLOCK_FAST_OWNER_KERNEL

static char dom[ORDLOCK_DOMAIN_NAME_MAX];


static int fast_config(const char *name, uint32_t on, uint32_t uid)
{
	struct ordlock_domain_config cfg = {
		.flags = ORDLOCK_DOMAIN_SET_FASTPATH, .fastpath = on, .fastpath_uid = uid,
	};

	return olt_domain_set(name, &cfg);
}

static int fast_release(int fd, uint32_t slot, uint32_t gen)
{
	struct ordlock_fast_release r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.slot = slot;
	r.gen = gen;
	return ioctl(fd, ORDLOCK_IOC_FAST_RELEASE, &r);
}

static int cas(volatile uint64_t *w, uint64_t old, uint64_t new)
{
	return __atomic_compare_exchange_n(w, &old, new, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

/*
 * The library's acquire, step by step: @stop_at (1..4) stops the process
 * with SIGSTOP before that step. Returns the generation, or 0 (busy).
 */
static uint32_t fast_acquire(struct olt_fast *f, uint32_t slot, int stop_at)
{
	uint64_t w;
	uint32_t g;

	if (stop_at == 1)
		raise(SIGSTOP);
	f->page->pending = slot + 1;
	if (stop_at == 2)
		raise(SIGSTOP);
	w = f->words[slot];
	if (ORDLOCK_FAST_OWNER(w) || (w & ORDLOCK_FAST_WAITERS)) {
		f->page->pending = 0;
		return 0;
	}
	g = ORDLOCK_FAST_GEN(w) + 1;
	if (!cas(&f->words[slot], w, ORDLOCK_FAST_WORD(g, f->index))) {
		f->page->pending = 0;
		return 0;
	}
	if (stop_at == 3)
		raise(SIGSTOP);
	f->page->held[f->page->nheld].slot = slot;
	f->page->held[f->page->nheld].gen = g;
	f->page->nheld++;
	f->page->pending = 0;
	if (stop_at == 4)
		raise(SIGSTOP);
	return g;
}

/* The library's release: CAS, else the kernel; then pop */
static int fast_unlock(struct olt_fast *f, uint32_t slot, uint32_t g)
{
	int ret = 0;

	if (!cas(&f->words[slot], ORDLOCK_FAST_WORD(g, f->index),
		 ORDLOCK_FAST_WORD(g, 0)))
		ret = fast_release(f->fd, slot, g);
	if (f->page->nheld)
		f->page->nheld--;
	return ret;
}

/* A kernel try-acquire of 1:@id by a fresh owner of dom: 0 or -errno */
static int probe(uint64_t id)
{
	return olt_ktry(dom, ordlock_key(1, id, EX), NULL);
}

static void test_setting(void)
{
	struct ordlock *ol = olt_open(NULL);
	struct ordlock_domain_config cfg;
	uint32_t slot;
	int fd;
	void *p;

	snprintf(dom, sizeof(dom), "%s", olt_domain("fast"));
	fd = olt_raw_fd();
	is_int(olt_fd_set_domain(fd, dom), 0, "an owner in %s", dom);
	is_errno(olt_fast_pin(fd, 1, 1, &slot, NULL), EOPNOTSUPP,
		 "PIN without the fast path: EOPNOTSUPP (off by default)");
	is_errno(fast_config(dom, 1, getuid()), EBUSY,
		 "turning it on while the domain has an owner: EBUSY");
	close(fd);
	is_errno(fast_config(dom, 2, getuid()), EINVAL, "fastpath 2: EINVAL");
	is_errno(fast_config("default", 1, getuid()), EINVAL,
		 "the default domain cannot have it");
	is_int(fast_config(dom, 1, getuid() + 1), 0, "on, for another uid");
	fd = olt_raw_fd();
	is_int(olt_fd_set_domain(fd, dom), 0, "a member of another uid may join");
	is_errno(olt_fast_pin(fd, 1, 1, &slot, NULL), EACCES,
		 "but not use the fast path: EACCES");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ok(p == MAP_FAILED && errno == EINVAL, "nor map the words (EINVAL)");
	close(fd);
	is_int(fast_config(dom, 1, getuid()), 0, "on, for our uid");
	memset(&cfg, 0, sizeof(cfg));
	is_int(ordlock_domain_config(ol, dom, &cfg), 0, "read the settings");
	is_int(cfg.fastpath, 1, "fastpath 1");
	is_int(cfg.fastpath_uid, getuid(), "fastpath_uid ours");
	ordlock_close(ol);
}

static void test_pin_mmap(void)
{
	uint32_t s1, s2, s3, idx;
	int fd = olt_raw_fd();
	void *p;

	is_int(olt_fd_set_domain(fd, dom), 0, "join %s", dom);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ok(p == MAP_FAILED && errno == EINVAL, "mmap before a PIN: EINVAL");
	is_int(olt_fast_pin(fd, 1, 100, &s1, &idx), 0, "PIN 1:100");
	ok(idx > 0 && idx < K, "an owner index (%u)", idx);
	is_int(olt_fast_pin(fd, 1, 100, &s2, NULL), 0, "PIN 1:100 again");
	is_int(s2, s1, "the same slot");
	is_int(olt_fast_pin(fd, 1, 101, &s3, NULL), 0, "PIN 1:101");
	ok(s3 != s1 && s3 < ORDLOCK_FAST_SLOTS, "another slot");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ok(p == MAP_FAILED && errno == EINVAL, "a private mapping: EINVAL");
	p = mmap(NULL, ORDLOCK_FAST_WORDS_SIZE + 4096, PROT_READ, MAP_SHARED, fd, 0);
	ok(p == MAP_FAILED && errno == EINVAL, "more than the words: EINVAL");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096 * 7);
	ok(p == MAP_FAILED && errno == EINVAL, "a wrong offset: EINVAL");
	p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, ORDLOCK_FAST_OWNER_OFFSET);
	ok(p == MAP_FAILED && errno == EINVAL, "two pages of owner page: EINVAL");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, ORDLOCK_FAST_OWNER_OFFSET);
	ok(p != MAP_FAILED, "the owner page maps");
	if (p != MAP_FAILED) {
		is_int(((struct ordlock_fast_page *)p)->index, idx,
		       "it shows the owner's index");
		munmap(p, 4096);
	}
	close(fd);
}

/* A user CAS hold is respected by the kernel, and the kernel's by users */
static void test_exclusion(void)
{
	struct olt_fast f;
	uint32_t slot, g;
	uint64_t w;

	olt_fast_open(&f, dom, 200, &slot, 1);
	w = f.words[slot];
	is_int(ORDLOCK_FAST_OWNER(w), 0, "a new key's word is free");
	g = fast_acquire(&f, slot, 0);
	ok(g == ORDLOCK_FAST_GEN(w) + 1, "the CAS takes it, generation + 1");
	is_int(f.page->nheld, 1, "pushed on the held stack");
	is_errno(probe(200), EAGAIN, "a kernel try-acquire of the key: EAGAIN");
	is_int(f.words[slot], ORDLOCK_FAST_WORD(g, f.index),
	       "the failed kernel try left the word alone");
	is_int(fast_unlock(&f, slot, g), 0, "the release CAS");
	is_int(probe(200), 0, "the kernel grants it now");
	w = f.words[slot];
	is_int(ORDLOCK_FAST_OWNER(w), 0, "free after the kernel's release");
	ok(ORDLOCK_FAST_GEN(w) == g + 1, "the kernel's grant bumped the generation");
	olt_fast_close(&f);
}

struct waiter_ctl {
	int ret[3];
	unsigned int order[3];
	unsigned int seq;
	uint64_t id;
	unsigned int timeout_ms;
};

static struct waiter_ctl *wc;

static int waiter_main(void *arg)
{
	int i = (int)(intptr_t)arg;
	struct ordlock_key k = ordlock_key(1, wc->id, EX);
	struct ordlock *ol = olt_child_open(dom);

	wc->ret[i] = ordlock_acquire(ol, &k, 1, wc->timeout_ms, 0, NULL) ? -errno : 0;
	if (!wc->ret[i])
		wc->order[i] = shared_counter_next(&wc->seq);
	ordlock_close(ol);
	return 0;
}

/* Two kernel waiters behind a fast holder: WAITERS, handoff in FIFO order */
static void test_handoff(void)
{
	pid_t pid[2];
	struct olt_fast f;
	uint32_t slot, g;
	uint64_t w;
	int i;

	wc = shm_alloc(sizeof(*wc));
	wc->id = 300;
	wc->timeout_ms = OLT_LONG_MS;
	olt_fast_open(&f, dom, 300, &slot, 1);
	g = fast_acquire(&f, slot, 0);
	ok(g, "the fast path holds 1:300");
	for (i = 0; i < 2; i++) {
		pid[i] = child_start(waiter_main, (void *)(intptr_t)i);
		is_int(wait_blocked_ioctl(pid[i], ORDLOCK_IOC_ACQUIRE, 0), 0,
		       "kernel waiter %d queues", i);
	}
	w = f.words[slot];
	ok(w & ORDLOCK_FAST_WAITERS, "the word has WAITERS");
	is_int(ORDLOCK_FAST_OWNER(w), f.index, "and still names the holder");
	ok(!cas(&f.words[slot], ORDLOCK_FAST_WORD(g, f.index), ORDLOCK_FAST_WORD(g, 0)),
	   "the release CAS fails");
	is_errno(fast_release(f.fd, slot, g + 5), ENOENT,
		 "FAST_RELEASE at a wrong generation: ENOENT");
	is_int(fast_release(f.fd, slot, g), 0, "FAST_RELEASE hands it over");
	for (i = 0; i < 2; i++)
		is_int(child_wait(pid[i], 60), 0, "waiter %d ends", i);
	is_int(wc->ret[0], 0, "waiter 0 granted");
	is_int(wc->ret[1], 0, "waiter 1 granted");
	ok(wc->order[0] < wc->order[1], "in FIFO order");
	w = f.words[slot];
	is_int(ORDLOCK_FAST_OWNER(w), 0, "free at the end");
	ok(!(w & ORDLOCK_FAST_WAITERS), "without WAITERS");
	ok(ORDLOCK_FAST_GEN(w) != g, "at a newer generation");
	is_errno(fast_release(f.fd, slot, g), ENOENT, "a second release: ENOENT");
	olt_fast_close(&f);
	shm_free(wc, sizeof(*wc));
}

static void test_timeout(void)
{
	struct olt_fast f;
	uint32_t slot, g;
	pid_t pid;
	uint64_t w;

	wc = shm_alloc(sizeof(*wc));
	wc->id = 400;
	wc->timeout_ms = 300;
	olt_fast_open(&f, dom, 400, &slot, 1);
	g = fast_acquire(&f, slot, 0);
	pid = child_start(waiter_main, (void *)(intptr_t)0);
	is_int(child_wait(pid, 60), 0, "the waiter ends");
	is_int(wc->ret[0], -ETIMEDOUT, "timed out behind the fast holder");
	w = f.words[slot];
	is_int(w, ORDLOCK_FAST_WORD(g, f.index), "WAITERS cleared when it left");
	is_int(fast_unlock(&f, slot, g), 0, "the release CAS works again");
	olt_fast_close(&f);
	shm_free(wc, sizeof(*wc));
}

struct death_ctl {
	uint32_t slot;
	struct pbarrier *held;
	struct pbarrier *go;
	int stop_at;
	int how;
};

static struct death_ctl *dc;

static int holder_main(void *arg)
{
	struct olt_fast f;
	uint32_t slot;

	(void)arg;
	olt_fast_open(&f, dom, 500, &slot, 1);
	dc->slot = slot;
	if (!fast_acquire(&f, slot, dc->stop_at))
		return 3;
	pbarrier_wait(dc->held);
	pbarrier_wait(dc->go);
	if (dc->how == 1)
		close(f.fd);	/* the mappings keep the file: released at exit */
	if (dc->how == 2)
		pause();
	return 0;
}

/* A holder dies (exit, close + exit, SIGKILL): the key is released */
static void test_death(void)
{
	static const char *const how[] = { "exit", "close and exit", "SIGKILL" };
	pid_t pid;
	int i;

	dc = shm_alloc(sizeof(*dc));
	for (i = 0; i < 3; i++) {
		dc->held = pbarrier_new(2);
		dc->go = pbarrier_new(2);
		dc->how = i;
		dc->stop_at = 0;
		pid = child_start(holder_main, NULL);
		pbarrier_wait(dc->held);
		is_errno(probe(500), EAGAIN, "%s: held by the child", how[i]);
		pbarrier_wait(dc->go);
		if (i == 2)
			child_kill(pid, SIGKILL);
		child_wait(pid, 60);
		is_int(probe(500), 0, "%s: free after its death", how[i]);
		pbarrier_free(dc->held);
		pbarrier_free(dc->go);
	}
	shm_free(dc, sizeof(*dc));
}

/* SIGKILL at every step of the acquire (stopped there with SIGSTOP) */
static void test_kill_steps(void)
{
	int step, st;
	pid_t pid;

	dc = shm_alloc(sizeof(*dc));
	for (step = 1; step <= 4; step++) {
		dc->held = pbarrier_new(2);
		dc->go = pbarrier_new(2);
		dc->how = 2;
		dc->stop_at = step;
		pid = child_start(holder_main, NULL);
		if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st))
			bail_out("the child did not stop at step %d", step);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		ok(WIFSIGNALED(st), "step %d: killed", step);
		is_int(probe(500), 0, "step %d: the key is free after", step);
		pbarrier_free(dc->held);
		pbarrier_free(dc->go);
	}
	shm_free(dc, sizeof(*dc));
}

static void segv_exit(int sig)
{
	(void)sig;
	_exit(77);
}

/* Handled, so that the kernel logs no segfault */
static int segv_main(void *arg)
{
	volatile uint64_t *w = arg;

	signal(SIGSEGV, segv_exit);
	return (int)(*w & 1) + 10;
}

/* Garbage in the words breaks that key only, never the kernel */
static void test_hostile(void)
{
	struct olt_fast f, o;
	uint32_t slot, oslot, g;
	pid_t pid;
	int st;

	olt_fast_open(&f, dom, 600, &slot, 1);
	olt_fast_open(&o, dom, 600, &oslot, 1);
	is_int(oslot, slot, "two members, one slot");
	ok(o.index != f.index, "different indices");
	f.words[slot] = ORDLOCK_FAST_WAITERS | (7ULL << 32);
	/* free with WAITERS: left for a woken waiter, or stale; free all the same */
	is_int(probe(600), 0, "WAITERS without owner or queue: free, no crash");
	is_int(ORDLOCK_FAST_OWNER(f.words[slot]), 0, "and the word freed after");
	f.words[slot] = ORDLOCK_FAST_WAITERS | (7ULL << 32);
	is_errno(fast_release(f.fd, slot, 7), ENOENT, "not ours: ENOENT");
	f.words[slot] = ORDLOCK_FAST_WORD(9, o.index);
	is_errno(fast_release(f.fd, slot, 9), ENOENT,
		 "a word naming another member: ENOENT to us");
	is_int(fast_release(o.fd, slot, 9), 0, "its owner may let it go");
	f.words[slot] = ORDLOCK_FAST_WORD(3, K);
	is_int(probe(600), 0, "a forged kernel owner with no kernel holder: granted");
	is_int(ORDLOCK_FAST_OWNER(f.words[slot]), 0, "and the word freed after");
	f.words[slot] = ORDLOCK_FAST_WORD(3, 0xfffff0);
	is_errno(probe(600), EAGAIN, "an index nobody has: busy");
	is_errno(fast_release(f.fd, ORDLOCK_FAST_SLOTS, 0), EINVAL,
		 "FAST_RELEASE of a slot out of range: EINVAL");
	is_errno(fast_release(f.fd, 999, 0), EINVAL, "of a slot not pinned: EINVAL");
	f.words[slot] = ORDLOCK_FAST_WORD(3, f.index);
	/* the mapping is not inherited: a child faults */
	pid = child_start(segv_main, (void *)&f.words[slot]);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 77,
	   "fork: the child has no mapping of the words (SIGSEGV)");
	/* unmapped words: the kernel still releases at close */
	munmap((void *)f.words, ORDLOCK_FAST_WORDS_SIZE);
	munmap(f.page, 4096);
	close(f.fd);
	is_int(ORDLOCK_FAST_OWNER(o.words[slot]), 0,
	       "unmapped and closed: the holder's word is released");
	g = fast_acquire(&o, slot, 0);
	ok(g, "the other member takes it by the fast path");
	is_int(fast_unlock(&o, slot, g), 0, "and lets it go");
	olt_fast_close(&o);
}

int main(void)
{
	long resources;

	watchdog_start(300);
	if (geteuid())
		bail_out("needs root (DOMAIN_CONFIG)");
	test_setting();
	test_pin_mmap();
	test_exclusion();
	test_handoff();
	test_timeout();
	test_death();
	test_kill_steps();
	test_hostile();
	resources = olt_stats_resources();
	is_int(fast_config(dom, 0, 0), 0, "turned off, nobody in the domain");
	ok(resources < 0 || olt_stats_resources() <= resources - 7,
	   "its 7 pinned keys are let go (%ld before)", resources);
	return tap_done();
}
