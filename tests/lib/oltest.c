// SPDX-License-Identifier: GPL-2.0
/* ordlock-specific test helpers: see oltest.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

struct ordlock *olt_child_open(const char *domain)
{
	struct ordlock *ol = ordlock_open(domain);

	if (!ol)
		_exit(1);
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

static int olt_vrun(char *out, size_t len, const char *prefix,
		    const char *suffix, const char *fmt, va_list ap)
{
	char cmd[8192];
	size_t at = 0, n;
	FILE *f;
	int st, k;

	k = snprintf(cmd, sizeof(cmd), "%s", prefix);
	k += vsnprintf(cmd + k, sizeof(cmd) - k, fmt, ap);
	if (k + strlen(suffix) >= sizeof(cmd)) {
		diag("olt_run: command line too long: %.80s...", cmd);
		out[0] = '\0';
		return -1;
	}
	strcat(cmd, suffix);
	if (len)
		out[0] = '\0';
	f = popen(cmd, "r");
	if (!f) {
		diag("popen %s: %s", cmd, strerror(errno));
		return -1;
	}
	while (at + 1 < len && (n = fread(out + at, 1, len - at - 1, f)) > 0)
		at += n;
	if (len)
		out[at] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int olt_run(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = olt_vrun(out, len, "", "", fmt, ap);
	va_end(ap);
	return ret;
}

int olt_ctl(char *out, size_t len, const char *fmt, ...)
{
	char prefix[PATH_MAX + 1];
	va_list ap;
	int ret;

	snprintf(prefix, sizeof(prefix), "%s ", olt_ctl_path());
	va_start(ap, fmt);
	ret = olt_vrun(out, len, prefix, " 2>&1", fmt, ap);
	va_end(ap);
	return ret;
}

int olt_domain_set(const char *domain, struct ordlock_domain_config *cfg)
{
	struct ordlock *adm = olt_open(NULL);
	int ret, err;

	ret = ordlock_domain_config(adm, domain, cfg);
	err = errno;
	ordlock_close(adm);
	errno = err;
	return ret;
}

int olt_fast_domain_set(const char *domain, int on)
{
	struct ordlock_domain_config cfg = {
		.flags = ORDLOCK_DOMAIN_SET_FASTPATH,
		.fastpath = !!on,
		.fastpath_uid = getuid(),
	};

	return olt_domain_set(domain, &cfg);
}

int olt_order_read(struct ordlock *ol, const char *domain,
		   struct ordlock_order_edge *e, unsigned int emax,
		   uint32_t *w, unsigned int wmax, struct ordlock_order_get *info)
{
	int ret = ordlock_get_order(ol, domain, e, emax, w, wmax, info);

	if (ret)
		diag("get_order(%s): %s", domain, strerror(-ret));
	return ret;
}

int olt_order_get(const char *domain, struct ordlock_order_edge *e,
		  unsigned int max, struct ordlock_order_get *info)
{
	struct ordlock *adm = olt_open(NULL);
	int ret;

	memset(info, 0, sizeof(*info));
	ret = ordlock_get_order(adm, domain, e, max, NULL, 0, info);
	ordlock_close(adm);
	if (ret)
		return ret;
	return info->nedges < max ? (int)info->nedges : (int)max;
}

void olt_scratch_dir(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "/tmp/%s.%d", name, (int)getpid());
	if (mkdir(dir, 0755) && errno != EEXIST)
		bail_out("mkdir %s: %s", dir, strerror(errno));
}

int olt_drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[CAP_TO_INDEX(cap)].effective &= ~CAP_TO_MASK(cap);
	data[CAP_TO_INDEX(cap)].permitted &= ~CAP_TO_MASK(cap);
	data[CAP_TO_INDEX(cap)].inheritable &= ~CAP_TO_MASK(cap);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

int olt_ioctl(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg);
}

int olt_fd_set_domain(int fd, const char *name)
{
	struct ordlock_set_domain sd;

	memset(&sd, 0, sizeof(sd));
	sd.size = sizeof(sd);
	snprintf(sd.name, sizeof(sd.name), "%s", name);
	return ioctl(fd, ORDLOCK_IOC_SET_DOMAIN, &sd);
}

int olt_fd_acquire(int fd, const struct ordlock_key *keys, unsigned int n,
		   uint32_t flags, uint64_t timeout_ns, struct ordlock_acquire *out)
{
	struct ordlock_acquire a;
	int ret, err;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags;
	a.nkeys = n;
	a.keys = (uintptr_t)keys;
	a.timeout_ns = timeout_ns;
	ret = ioctl(fd, ORDLOCK_IOC_ACQUIRE, &a);
	err = errno;
	if (out)
		*out = a;
	errno = err;
	return ret;
}

int olt_fd_release_all(int fd)
{
	struct ordlock_release r = { .size = sizeof(r), .flags = ORDLOCK_RELEASE_ALL };

	return ioctl(fd, ORDLOCK_IOC_RELEASE, &r) < 0 ? -errno : (int)r.released;
}

int olt_ktry(const char *domain, struct ordlock_key k, struct ordlock_failure *f)
{
	struct ordlock_acquire a;
	int fd = olt_raw_fd(), ret = 0;

	memset(&a, 0, sizeof(a));
	if (olt_fd_set_domain(fd, domain) ||
	    olt_fd_acquire(fd, &k, 1, ORDLOCK_ACQUIRE_TRY, 0, &a))
		ret = -errno;
	if (f)
		*f = a.failure;
	close(fd);
	return ret;
}

void olt_fast_open(struct olt_fast *f, const char *domain, uint64_t id,
		   uint32_t *slot, int page)
{
	void *p;

	memset(f, 0, sizeof(*f));
	f->fd = olt_raw_fd();
	if (olt_fd_set_domain(f->fd, domain))
		bail_out("SET_DOMAIN %s: %s", domain, strerror(errno));
	if (olt_fast_pin(f->fd, 1, id, slot, &f->index))
		bail_out("PIN: %s", strerror(errno));
	p = mmap(NULL, ORDLOCK_FAST_WORDS_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED, f->fd, 0);
	if (p == MAP_FAILED)
		bail_out("mmap words: %s", strerror(errno));
	f->words = p;
	if (!page)
		return;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd,
		 ORDLOCK_FAST_OWNER_OFFSET);
	if (p == MAP_FAILED)
		bail_out("mmap owner page: %s", strerror(errno));
	f->page = p;
}

void olt_fast_close(struct olt_fast *f)
{
	munmap((void *)f->words, ORDLOCK_FAST_WORDS_SIZE);
	if (f->page)
		munmap(f->page, 4096);
	close(f->fd);
}

int olt_fast_pin(int fd, uint32_t rank, uint64_t id, uint32_t *slot,
		 uint32_t *index)
{
	struct ordlock_fast_pin p = { .size = sizeof(p), .rank = rank, .id = id };
	int ret = ioctl(fd, ORDLOCK_IOC_FAST_PIN, &p);

	if (!ret) {
		*slot = p.slot;
		if (index)
			*index = p.index;
	}
	return ret;
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

long olt_stats_domain(const char *domain, const char *field)
{
	FILE *f = fopen("/sys/kernel/debug/ordlock/stats", "r");
	static char line[1 << 16];
	char head[ORDLOCK_DOMAIN_NAME_MAX + 16], pat[64];
	long n = -1;
	char *p;

	if (!f)
		return -1;
	snprintf(head, sizeof(head), "domain %s ", domain);
	snprintf(pat, sizeof(pat), " %s ", field);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, head, strlen(head)))
			continue;
		p = strstr(line, pat);
		if (p)
			n = strtol(p + strlen(pat), NULL, 10);
		break;
	}
	fclose(f);
	return n;
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
