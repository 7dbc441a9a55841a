// SPDX-License-Identifier: GPL-2.0
/*
 * b7_scale: row 7 of the benchmark table.
 *
 * Latency at scale: background owners hold 1e3, then 1e5, then 1e6 keys
 * in total (the limits max_keys_per_owner and max_keys_per_request are
 * raised for the run); at each level (and with none) another owner
 * acquires and releases a fresh key, and fails a try-lock of a held key
 * (a lookup that finds its resource). Two getppid calls measured at each
 * level tell how much of a change is the machine drifting.
 *
 * Kernel memory: the slab caches' growth (/proc/slabinfo) and the drop of
 * MemAvailable while the 1e6 keys are held, per held key; the object
 * sizes of the caches ordlock_resource and ordlock_hold
 * (/sys/kernel/slab/NAME/slab_size); and per owner: the slab growth of
 * 2000 fresh owners, then after each made one wait (the first wait
 * allocates the owner's cycle buffer), then after each took and released
 * 64 keys (released holds are kept for reuse, up to 32 per owner).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "benchlib.h"

#define PER_OWNER 62500U
#define NOWNERS_MEM 2000U

static const unsigned long levels[] = { 0, 1000, 100000, 1000000 };
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* --- memory readings ---------------------------------------------------- */

struct slabtotal {
	double obj_bytes;	/* sum of active_objs x objsize */
	double page_bytes;	/* sum of num_slabs x pagesperslab x page size */
};

static int slabinfo_read(struct slabtotal *t)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512], name[128];
	unsigned long active, num, objsize, perslab, pages, aslabs, nslabs;
	long psz = sysconf(_SC_PAGESIZE);

	t->obj_bytes = t->page_bytes = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strncmp(line, "slabinfo", 8))
			continue;
		if (sscanf(line, "%127s %lu %lu %lu %lu %lu : tunables %*u %*u %*u : slabdata %lu %lu",
			   name, &active, &num, &objsize, &perslab, &pages, &aslabs,
			   &nslabs) != 8)
			continue;
		t->obj_bytes += (double)active * objsize;
		t->page_bytes += (double)nslabs * pages * psz;
	}
	fclose(f);
	return 0;
}

static long meminfo_kb(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	size_t len = strlen(key);
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static long slab_attr(const char *cache, const char *attr)
{
	char path[256], buf[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return strtol(buf, NULL, 10);
}

struct memsnap {
	struct slabtotal slab;
	long avail_kb;
	long slab_kb;
};

static void memsnap(struct memsnap *m)
{
	sync();
	usleep(100000);
	if (slabinfo_read(&m->slab))
		m->slab.obj_bytes = m->slab.page_bytes = -1;
	m->avail_kb = meminfo_kb("MemAvailable");
	m->slab_kb = meminfo_kb("Slab");
}

/* --- background keys ------------------------------------------------------ */

static int *owners;
static unsigned int nowners, owner_fill;
static unsigned long held, next_id = 1;
static struct ordlock_key *batch;

static void fill_to(unsigned long target)
{
	while (held < target) {
		unsigned long n = target - held, i;
		int ret;

		if (!nowners || owner_fill == PER_OWNER) {
			owners[nowners++] = ol_open("bench-scale");
			owner_fill = 0;
		}
		if (n > PER_OWNER - owner_fill)
			n = PER_OWNER - owner_fill;
		for (i = 0; i < n; i++)
			batch[i] = (struct ordlock_key){ .id = next_id++, .rank = 1,
							 .mode = ORDLOCK_MODE_EXCLUSIVE };
		ret = ol_acquire(owners[nowners - 1], batch, n, 0, ORDLOCK_ACQUIRE_TRY, NULL);
		if (ret)
			bench_die("holding %lu keys: %s", held + n, strerror(-ret));
		owner_fill += n;
		held += n;
	}
}

static int fd;
static struct ordlock_key fresh = { .id = 1, .rank = 2, .mode = ORDLOCK_MODE_EXCLUSIVE };
static struct ordlock_key heldkey = { .id = 1, .rank = 1, .mode = ORDLOCK_MODE_EXCLUSIVE };

static void op_fresh(void *arg)
{
	(void)arg;
	if (ol_acquire(fd, &fresh, 1, 0, 0, NULL) || ol_release_all(fd))
		bench_die("acquire: %s", strerror(errno));
}

static void op_try(void *arg)
{
	(void)arg;
	if (ol_acquire(fd, &heldkey, 1, 0, ORDLOCK_ACQUIRE_TRY, NULL) != -EAGAIN)
		bench_die("try-lock of a held key did not fail");
}

static void op_floor(void *arg)
{
	(void)arg;
	getppid();
	getppid();
}

int main(void)
{
	unsigned int reps = bench_reps(), r, li, i;
	unsigned long n = bench_n(3000, 200);
	struct samples lat[NLEVELS], tryl[NLEVELS], flo[NLEVELS];
	struct rlimit rl = { 65536, 65536 };
	struct memsnap m0, m1;
	char param[32], note[300];
	uint64_t t0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		bench_die("setrlimit: %s", strerror(errno));
	ol_param_set("max_keys_per_request", 65536);
	ol_param_set("max_keys_per_owner", 65536);
	if (ol_param_get("max_resources") < (long)levels[NLEVELS - 1] + 1000)
		ol_param_set("max_resources", levels[NLEVELS - 1] + 1000);
	owners = calloc(levels[NLEVELS - 1] / PER_OWNER + 2, sizeof(*owners));
	batch = calloc(PER_OWNER, sizeof(*batch));
	if (!owners || !batch)
		bench_die("out of memory");
	fd = ol_open("bench-scale");

	memsnap(&m0);
	for (li = 0; li < NLEVELS; li++) {
		uint64_t f0 = now_ns();

		fill_to(levels[li]);
		bench_log("%lu keys held by %u owners (%.1f s to take them)", held, nowners,
			  (now_ns() - f0) / 1e9);
		samples_init(&lat[li], n * reps);
		samples_init(&tryl[li], n * reps);
		samples_init(&flo[li], n * reps);
		{
			struct bench_op ops[3] = {
				{ .fn = op_fresh, .s = &lat[li] },
				{ .fn = op_floor, .s = &flo[li] },
				{ .fn = op_try, .s = &tryl[li] },
			};

			for (r = 0; r < reps; r++)
				bench_interleave(ops, li ? 3 : 2, n, 100, r);
		}
	}
	memsnap(&m1);

	for (li = 0; li < NLEVELS; li++) {
		snprintf(param, sizeof(param), "held=%lu", levels[li]);
		snprintf(note, sizeof(note), "acquire + release of a fresh key; %lu keys held; %lu per hash bucket on average",
			 levels[li], levels[li] / (1UL << ol_param_get("hash_bits")));
		bench_emit("7", "acquire+release with many keys held", param, "ordlock",
			   "ordlock", "ns", &lat[li], note);
		if (li)
			bench_emit("7", "acquire+release with many keys held", param,
				   "ordlock failed try", "ordlock", "ns", &tryl[li],
				   "ACQUIRE_TRY of a held key (lookup finds the resource)");
		bench_emit("7", "acquire+release with many keys held", param, "2x getppid",
			   "floor", "ns", &flo[li], "drift check: should stay flat");
	}

	/* memory per held key (all levels reached: `held` keys) */
	snprintf(param, sizeof(param), "held=%lu", held);
	bench_emit_value("7", "kernel memory per held key", param, "slab growth", "ordlock", "B",
			 (m1.slab.page_bytes - m0.slab.page_bytes) / held,
			 "slab pages (/proc/slabinfo num_slabs x pagesperslab) per held key");
	bench_emit_value("7", "kernel memory per held key", param, "slab objects", "ordlock", "B",
			 (m1.slab.obj_bytes - m0.slab.obj_bytes) / held,
			 "active objects x object size (/proc/slabinfo) per held key");
	bench_emit_value("7", "kernel memory per held key", param, "MemAvailable drop", "ordlock",
			 "B", (m0.avail_kb - m1.avail_kb) * 1024.0 / held, "/proc/meminfo");
	{
		long rs = slab_attr("ordlock_resource", "slab_size");
		long hs = slab_attr("ordlock_hold", "slab_size");

		snprintf(note, sizeof(note), "object_size %ld + %ld (resource + hold)",
			 slab_attr("ordlock_resource", "object_size"),
			 slab_attr("ordlock_hold", "object_size"));
		if (rs > 0 && hs > 0)
			bench_emit_value("7", "kernel memory per held key", param,
					 "resource + hold objects", "ordlock", "B", rs + hs, note);
		else
			bench_emit_missing("7", "kernel memory per held key", param,
					   "resource + hold objects", "ordlock", "B",
					   "/sys/kernel/slab not available");
	}
	bench_emit_value("7", "kernel memory per held key", param, "target", "floor", "B", 128,
			 "at most 128 bytes per held resource");

	/* release everything (timed: it is part of the story) */
	t0 = now_ns();
	for (i = 0; i < nowners; i++)
		close(owners[i]);
	bench_log("released %lu keys in %.1f s", held, (now_ns() - t0) / 1e9);
	/* Let the reaper free the idle resources before measuring owners */
	sleep(3);

	/* memory per owner */
	{
		int *fds = calloc(NOWNERS_MEM, sizeof(*fds));
		struct ordlock_key k64[64];
		struct ol_holder h;
		struct memsnap a, b, c, d;

		if (!fds)
			bench_die("out of memory");
		for (i = 0; i < 64; i++)
			k64[i] = (struct ordlock_key){ .id = 1000 + i, .rank = 3,
						       .mode = ORDLOCK_MODE_EXCLUSIVE };
		ol_holder_start(&h, "bench-owners", &heldkey, 1);
		memsnap(&a);
		for (i = 0; i < NOWNERS_MEM; i++)
			fds[i] = ol_open("bench-owners");
		memsnap(&b);
		for (i = 0; i < NOWNERS_MEM; i++)
			if (ol_acquire(fds[i], &heldkey, 1, 1, 0, NULL) != -ETIMEDOUT)
				bench_die("owners: the wait did not time out");
		memsnap(&c);
		for (i = 0; i < NOWNERS_MEM; i++)
			if (ol_acquire(fds[i], k64, 64, 0, 0, NULL) || ol_release_all(fds[i]))
				bench_die("owners: 64 keys: %s", strerror(errno));
		memsnap(&d);
		for (i = 0; i < NOWNERS_MEM; i++)
			close(fds[i]);
		ol_holder_stop(&h);
		snprintf(param, sizeof(param), "owners=%u", NOWNERS_MEM);
		bench_emit_value("7", "kernel memory per owner", param, "fresh owner", "ordlock", "B",
				 (b.slab.obj_bytes - a.slab.obj_bytes) / NOWNERS_MEM,
				 "open(/dev/ordlock): file + owner; slab objects per owner");
		bench_emit_value("7", "kernel memory per owner", param, "after one wait", "ordlock",
				 "B", (c.slab.obj_bytes - a.slab.obj_bytes) / NOWNERS_MEM,
				 "after a wait that timed out (a cycle buffer is only allocated for a deadlock victim)");
		bench_emit_value("7", "kernel memory per owner", param, "after a 64-key request",
				 "ordlock", "B", (d.slab.obj_bytes - a.slab.obj_bytes) / NOWNERS_MEM,
				 "released holds stay cached (up to 64 per owner)");
		free(fds);
	}
	close(fd);
	return 0;
}
