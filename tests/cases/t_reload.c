// SPDX-License-Identifier: GPL-2.0
/*
 * t_reload: the module unloads only when nothing uses it, and load → use →
 * unload repeated ORDLOCK_RELOAD_COUNT times (default 20) leaves nothing
 * behind: no /sys/module/ordlock, no debugfs directory, no slab cache
 * (/sys/kernel/slab/ordlock_*, /proc/slabinfo), no growth of the kernel's
 * slab memory.  The kernel log (leak reports of kmem_cache_destroy, the
 * module's own "leaked" checks) is judged by the harness.
 *
 * With slab merging (the default), ordlock's caches may be aliases of
 * others and kmem_cache_destroy() cannot see their leaked objects: boot
 * with VM_APPEND=slab_nomerge for the exact check.
 *
 * It reloads the module with insmod $ORDLOCK_KO (the module guest.sh loaded;
 * default $ORDLOCK_REPO/kmod/ordlock.ko), and leaves it loaded (guest.sh
 * unloads it at the end).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "barrier.h"
#include "libordlock.h"
#include "nltest.h"
#include "oltest.h"
#include "tap.h"

static char module[512];
static int merged;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fflush(NULL);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* names under /sys/kernel/slab/ and lines of /proc/slabinfo with "ordlock" */
static int slab_entries(char *first, size_t len)
{
	char line[512];
	struct dirent *d;
	DIR *dir = opendir("/sys/kernel/slab");
	FILE *f;
	int n = 0;

	if (dir) {
		while ((d = readdir(dir))) {
			if (!strstr(d->d_name, "ordlock"))
				continue;
			/*
			 * A merged cache is an alias: SLUB keeps its sysfs
			 * link until the cache it points to goes away.
			 */
			if (d->d_type == DT_LNK) {
				if (!merged++)
					diag("%s is an alias of a merged cache (boot with slab_nomerge for the exact check)",
					     d->d_name);
				continue;
			}
			if (!n++)
				snprintf(first, len, "/sys/kernel/slab/%s", d->d_name);
		}
		closedir(dir);
	}
	f = fopen("/proc/slabinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strstr(line, "ordlock") && !n++)
				snprintf(first, len, "slabinfo: %.200s", line);
		fclose(f);
	}
	return n;
}

static long meminfo_kb(const char *key)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");
	long v = -1;
	size_t kl = strlen(key);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = atol(line + kl + 1);
	fclose(f);
	return v;
}

static int wait_dev(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (access("/dev/ordlock", F_OK) == 0)
			return 0;
		usleep(50000);
	}
	return -ETIMEDOUT;
}

static int load(void)
{
	if (sh("insmod %s >/dev/null 2>&1", module))
		return -1;
	return wait_dev();
}

/* hold 7:7 a moment, telling @arg (a barrier) once it is held */
static int holder_main(void *arg)
{
	struct ordlock *ol = ordlock_open(NULL);
	struct ordlock_key k = ORDLOCK_EX(7, 7);
	struct pbarrier *held = arg;

	if (!ol || ordlock_acquire(ol, &k, 1, 10000, 0, NULL)) {
		pbarrier_break(held);
		return 1;
	}
	pbarrier_wait(held);
	usleep(100000);
	ordlock_close(ol);
	return 0;
}

/* use everything a little: owners of both kinds, a wait, a cycle check */
static int use_module(void)
{
	struct ordlock_key k[3] = { ORDLOCK_EX(7, 7), ORDLOCK_SH(8, 1), ORDLOCK_EX(9, 2) };
	struct ordlock *a = ordlock_open(NULL), *b = ordlock_open("reload-dom");
	struct olc_nl_outcome o;
	struct nlt *s = nlt_open(NULL);
	struct pbarrier *held = pbarrier_new(2);
	pid_t pid;
	int bad = 0;

	if (!a || !b || !s)
		bad++;
	/* the holder takes 7:7 first, so that a waits for it */
	pid = child_start(holder_main, held);
	if (pbarrier_wait(held))
		bad++;
	if (a && ordlock_acquire(a, k, 3, 10000, 0, NULL))
		bad++;
	if (b && ordlock_acquire(b, k, 3, 10000, 0, NULL))
		bad++;
	if (s && nlt_acquire(s, "reload-dom", &k[1], 1, 0, 0, 1, &o))
		bad++;
	if (a && ordlock_convert(a, ORDLOCK_SH(9, 2), 1000, 0, NULL))
		bad++;
	if (child_wait(pid, 30))
		bad++;
	if (a)
		ordlock_close(a);	/* closed holding keys */
	if (b)
		ordlock_release_all(b), ordlock_close(b);
	if (s)
		nlt_close(s);
	pbarrier_free(held);
	return bad;
}

/*
 * A second netlink socket queues a request for 1:1, which @s holds: the
 * unload is refused meanwhile, and the queued request gets its RESULT when
 * @s releases
 */
static void nl_queued(struct nlt *s)
{
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct nlt *w = nlt_must_open();
	struct olc_nl_outcome o, rel;

	is_int(nlt_acquire(w, NULL, &k, 1, 30000000000ULL, 0, 2, &o), 0,
	       "a second netlink socket asks for 1:1");
	is_int(o.status, ORDLOCK_STATUS_QUEUED, "its request is queued");
	ok(sh("rmmod ordlock 2>/dev/null") != 0, "rmmod with a queued netlink request is refused");
	is_int(nlt_release(s, NULL, 0, &rel), 0, "the holder releases");
	is_int(nlt_wait_result(w, 10000, &o), 0, "the queued request gets its RESULT");
	is_int(o.status, ORDLOCK_STATUS_GRANTED, "granted");
	nlt_close(w);
}

int main(void)
{
	const char *repo = getenv("ORDLOCK_REPO"), *env = getenv("ORDLOCK_RELOAD_COUNT");
	const char *ko = getenv("ORDLOCK_KO");
	unsigned int count = env ? (unsigned int)atoi(env) : 20, i, bad_unload = 0,
		     bad_load = 0, bad_use = 0, bad_gone = 0;
	char first[300] = "";
	long slab0 = -1, slab1 = -1;
	struct ordlock *ol;
	struct nlt *s;
	struct ordlock_key k = ORDLOCK_EX(1, 1);
	struct olc_nl_outcome o;

	watchdog_start(600);
	if (!repo)
		repo = ".";
	if (ko && *ko)
		snprintf(module, sizeof(module), "%s", ko);
	else
		snprintf(module, sizeof(module), "%s/kmod/ordlock.ko", repo);
	if (!ok(access(module, R_OK) == 0, "the module is at %s", module))
		return tap_done();
	if (!count)
		count = 20;

	/* an open owner pins the module */
	ol = olt_open(NULL);
	is_int(ordlock_acquire(ol, &k, 1, 1000, 0, NULL), 0, "an owner holds 1:1");
	ok(sh("rmmod ordlock 2>/dev/null") != 0, "rmmod with an open /dev/ordlock is refused");
	ok(exists("/sys/module/ordlock"), "the module is still loaded");
	is_int(olt_nheld(ol), 1, "and the owner still holds its key");
	ordlock_close(ol);

	/*
	 * A netlink owner keeps the module in use, as a descriptor does: the
	 * unload is refused while it holds a key or has a request queued
	 */
	s = nlt_must_open();
	is_int(nlt_acquire(s, NULL, &k, 1, 0, 0, 1, &o), 0, "a netlink owner holds 1:1");
	ok(sh("rmmod ordlock 2>/dev/null") != 0, "rmmod with a netlink owner holding a key is refused");
	ok(exists("/sys/module/ordlock"), "the module is still loaded");
	nl_queued(s);
	nlt_close(s);
	ok(sh("rmmod ordlock 2>/dev/null") == 0, "once the socket is closed, rmmod succeeds");
	is_int(load(), 0, "loaded again");
	/* the module is loaded here */

	for (i = 0; i < count; i++) {
		if (use_module())
			bad_use++;
		if (sh("rmmod ordlock")) {
			bad_unload++;
			diag("cycle %u: rmmod failed", i);
			break;
		}
		if (exists("/sys/module/ordlock") || exists("/sys/kernel/debug/ordlock") ||
		    exists("/dev/ordlock") || slab_entries(first, sizeof(first))) {
			if (!bad_gone++)
				diag("cycle %u: left behind: %s", i,
				     first[0] ? first : "/sys/module/ordlock, debugfs or /dev/ordlock");
		}
		if (i == 1 || i == count - 1) {
			sh("sync; echo 3 >/proc/sys/vm/drop_caches");
			if (i == 1)
				slab0 = meminfo_kb("Slab");
			else
				slab1 = meminfo_kb("Slab");
		}
		if (load()) {
			bad_load++;
			diag("cycle %u: insmod failed", i);
			break;
		}
	}
	is_int(bad_use, 0, "every cycle used the module without error");
	is_int(bad_unload, 0, "%u unloads after use succeeded", count);
	is_int(bad_load, 0, "%u loads succeeded", count);
	is_int(bad_gone, 0, "after each unload: no module, debugfs, device or slab cache left");
	if (slab0 > 0 && slab1 > 0) {
		diag("Slab (caches dropped): %ld kB after unload 2, %ld kB after unload %u",
		     slab0, slab1, count);
		ok(slab1 - slab0 < 4096, "slab memory did not grow by 4 MB or more (%+ld kB)",
		   slab1 - slab0);
	}
	if (!exists("/sys/module/ordlock"))
		load();
	ok(exists("/sys/module/ordlock") && wait_dev() == 0, "the module is loaded at the end");
	return tap_done();
}
