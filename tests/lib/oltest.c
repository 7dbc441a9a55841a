// SPDX-License-Identifier: GPL-2.0
/* ordlock-specific test helpers: see oltest.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oltest.h"
#include "tap.h"

#define PARAM_DIR "/sys/module/ordlock/parameters/"

struct ordlock *olt_open(const char *domain)
{
	struct ordlock *ol = ordlock_open(domain);

	if (!ol)
		bail_out("ordlock_open(%s): %s", domain ? domain : "NULL",
			 strerror(errno));
	return ol;
}

int olt_raw_fd(void)
{
	int fd = open(ORDLOCK_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		bail_out("open(%s): %s", ORDLOCK_DEVICE, strerror(errno));
	return fd;
}

const char *olt_ctl_path(void)
{
	static char path[PATH_MAX];
	const char *repo = getenv("ORDLOCK_REPO");
	char self[PATH_MAX];
	ssize_t n;

	if (repo) {
		snprintf(path, sizeof(path), "%s/tools/ordlockctl/ordlockctl", repo);
	} else {
		/* tests/build/vm/t_NAME -> tools/ordlockctl/ordlockctl */
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			bail_out("readlink /proc/self/exe: %s", strerror(errno));
		self[n] = '\0';
		snprintf(path, sizeof(path), "%.*s/../../../tools/ordlockctl/ordlockctl",
			 (int)(strrchr(self, '/') - self), self);
	}
	if (access(path, X_OK))
		bail_out("no ordlockctl at %s (make tools)", path);
	return path;
}

int olt_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg);
}

int olt_no_ioctl(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int olt_probe(const char *domain, uint32_t rank, uint64_t id,
	      unsigned int mode)
{
	struct ordlock_key k = ordlock_key(rank, id, mode);
	struct ordlock *ol = ordlock_open(domain);
	int ret;

	if (!ol)
		return -errno;
	ret = ordlock_try_acquire(ol, &k, 1, NULL);
	ordlock_close(ol);
	return ret;
}

long olt_fd_nheld(int fd)
{
	struct ordlock_owner_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (ioctl(fd, ORDLOCK_IOC_OWNER_INFO, &info) < 0)
		return -errno;
	return info.nheld;
}

long olt_nheld(struct ordlock *ol)
{
	return olt_fd_nheld(ordlock_fd(ol));
}

const char *olt_domain(const char *prefix)
{
	static char buf[ORDLOCK_DOMAIN_NAME_MAX];
	static unsigned int n;

	snprintf(buf, sizeof(buf), "%.16s-%d-%u", prefix, (int)getpid(), n++);
	return buf;
}

long olt_param_get(const char *name)
{
	char path[256], buf[64];
	FILE *f;
	long v;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	v = strtol(buf, NULL, 0);
	return v;
}

static int param_write(const char *name, long value)
{
	char path[256];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fprintf(f, "%ld\n", value) < 0)
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

#define MAX_SAVED 16

static struct {
	char name[64];
	long value;
} saved[MAX_SAVED];
static int nsaved;
static pid_t saver;

void olt_param_restore(void)
{
	/* only the process that changed them restores, not its children */
	if (getpid() != saver)
		return;
	while (nsaved > 0) {
		nsaved--;
		param_write(saved[nsaved].name, saved[nsaved].value);
	}
}

int olt_param_set(const char *name, long value)
{
	int i;

	for (i = 0; i < nsaved; i++)
		if (!strcmp(saved[i].name, name))
			break;
	if (i == nsaved) {
		long old = olt_param_get(name);

		if (old < 0)
			return (int)old;
		if (nsaved == MAX_SAVED)
			return -ENOSPC;
		if (!nsaved && !saver)
			atexit(olt_param_restore);
		saver = getpid();
		snprintf(saved[i].name, sizeof(saved[i].name), "%s", name);
		saved[i].value = old;
		nsaved++;
	}
	return param_write(name, value);
}

int olt_key_eq(const struct ordlock_key *k, uint32_t rank, uint64_t id,
	       unsigned int mode)
{
	return k->rank == rank && k->id == id && (!mode || k->mode == mode);
}

const char *olt_fail_str(const struct ordlock_failure *f)
{
	static char buf[256];

	return ordlock_strfailure(f, buf, sizeof(buf));
}

static int holder_main(void *arg)
{
	struct olt_holder *h = arg;
	struct ordlock *ol;

	ol = ordlock_open(h->domain[0] ? h->domain : NULL);
	if (!ol) {
		h->result = -errno;
		pbarrier_wait(h->held);
		return 1;
	}
	h->result = ordlock_acquire(ol, h->keys, h->nkeys, OLT_LONG_MS, 0,
				    &h->token);
	if (pbarrier_wait(h->held) || pbarrier_wait(h->go))
		return 2;
	/* exit without closing: the kernel releases at the last reference */
	return h->result ? 3 : 0;
}

struct olt_holder *olt_holder_start(const char *domain,
				    const struct ordlock_key *keys,
				    unsigned int n)
{
	struct olt_holder *h = shm_alloc(sizeof(*h));

	if (n > ARRAY_SIZE(h->keys))
		bail_out("%s: too many keys (%u)", __func__, n);
	h->held = pbarrier_new(2);
	h->go = pbarrier_new(2);
	if (domain)
		snprintf(h->domain, sizeof(h->domain), "%s", domain);
	memcpy(h->keys, keys, n * sizeof(*keys));
	h->nkeys = n;
	h->pid = child_start(holder_main, h);
	if (pbarrier_wait(h->held))
		diag("holder %d never reported", (int)h->pid);
	if (h->result)
		diag("holder %d: acquire failed: %s", (int)h->pid,
		     strerror(-h->result));
	return h;
}

int olt_holder_stop(struct olt_holder *h)
{
	int status;

	pbarrier_wait(h->go);
	status = child_wait(h->pid, 0);
	pbarrier_free(h->held);
	pbarrier_free(h->go);
	shm_free(h, sizeof(*h));
	return status;
}

int olt_holder_kill(struct olt_holder *h, int sig)
{
	int status = child_kill(h->pid, sig);

	pbarrier_free(h->held);
	pbarrier_free(h->go);
	shm_free(h, sizeof(*h));
	return status;
}

long olt_stats_resources(void)
{
	FILE *f = fopen("/sys/kernel/debug/ordlock/stats", "r");
	char line[1024];
	long owners, n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "global owners %ld resources %ld", &owners, &n) == 2)
			break;
	fclose(f);
	return n;
}
