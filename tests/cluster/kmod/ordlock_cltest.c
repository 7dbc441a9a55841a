// SPDX-License-Identifier: GPL-2.0
/*
 * ordlock_cltest: a test module of make check-cluster that drives ordlock's
 * backend seam (kmod/backend.h) directly, the way a cluster domain will:
 * ordlock_backend_get() (which loads ordlock_dlm on demand and pins it),
 * join, lock, unlock, leave, ordlock_backend_put().
 *
 * /sys/kernel/debug/ordlock_cltest: each open file is one holder; one
 * command per write(), whose failure is the operation's errno:
 *	join DOMAIN		take backend "dlm" and join DOMAIN's space
 *	lock RANK ID ex|sh TIMEOUT_MS [try]	TIMEOUT_MS -1: no deadline
 *	unlock RANK ID
 *	leave			release everything, leave, put the backend (its
 *				errno: the leave's, ETIMEDOUT or EINTR when the
 *				backend left by force)
 * read() lists the held keys, "RANK ID ex|sh" a line. Closing the file
 * leaves.
 *
 * For make bench-cluster, the same holder also times acquire + release in
 * the kernel, through the backend and through the DLM's own calls (the
 * reference the backend is measured against), on one key:
 *	bench RANK ID N		N x (backend lock ex, unlock) of the joined space
 *	rawjoin LOCKSPACE [cb]	dlm_new_lockspace(LOCKSPACE) (no "ordlock."
 *				prefix added: "ordlock.D" is domain D's space),
 *				flags 0, or with "cb" the flags ORDLOCK_DLM_LSFL_CB
 *				that ordlock_dlm's lockspaces have (compat.h: the
 *				ASTs called at once, no hand-off to the DLM's
 *				callback worker; -EOPNOTSUPP where the DLM has no
 *				such flag, 6.1)
 *	rawhold RANK ID		hold an NL lock on the key in LOCKSPACE: this
 *				node masters its resource, for the others'
 *				remote-mastered runs
 *	rawbench RANK ID N	N x (dlm_lock EX, wait for the AST, dlm_unlock,
 *				wait for the AST) in LOCKSPACE
 * A bench's result is read() back: "bench N NS_TOTAL" (the last one run;
 * each command rewinds the file, so a read() after it starts at the top).
 * The first round of each bench is not timed (it creates the resource).
 */
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/dlm.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <linux/ordlock.h>

#include "backend.h"
#include "compat.h"

struct clt_held {
	struct list_head node;
	u32 rank;
	u64 id;
	bool exclusive;
	struct ordlock_backend_lock *lock;
};

/* one raw DLM lock of a bench: its status block and its AST */
struct clt_raw {
	struct dlm_lksb lksb;
	struct completion ast;
	char name[32];
	int namelen;
};

struct clt_file {
	struct mutex lock;	/* the fields below; held across a command */
	struct ordlock_backend *backend;
	struct ordlock_backend_space *space;
	struct list_head held;
	dlm_lockspace_t *raw_ls;	/* rawjoin's lockspace */
	struct clt_raw *raw_hold;	/* rawhold's NL lock, granted */
	u64 bench_n, bench_ns;		/* the last bench */
};

static struct dentry *clt_dentry;

static void clt_raw_ast(void *arg)
{
	struct clt_raw *r = arg;

	complete(&r->ast);
}

static void clt_raw_name(struct clt_raw *r, u32 rank, u64 id)
{
	/* ordlock_dlm's name of a key, so that a hold can master its keys */
	r->namelen = snprintf(r->name, sizeof(r->name), "%08x:%016llx",
			      rank, id);
}

/* dlm_lock() and its AST; the AST's status */
static int clt_raw_lock(dlm_lockspace_t *ls, struct clt_raw *r, int mode)
{
	int ret;

	reinit_completion(&r->ast);
	ret = dlm_lock(ls, mode, &r->lksb, 0, r->name, r->namelen, 0,
		       clt_raw_ast, r, NULL);
	if (ret)
		return ret;
	wait_for_completion(&r->ast);
	return r->lksb.sb_status;
}

/* dlm_unlock() and its AST (status -DLM_EUNLOCK on success) */
static int clt_raw_unlock(dlm_lockspace_t *ls, struct clt_raw *r)
{
	int ret;

	reinit_completion(&r->ast);
	ret = dlm_unlock(ls, r->lksb.sb_lkid, 0, &r->lksb, r);
	if (ret)
		return ret;
	wait_for_completion(&r->ast);
	return r->lksb.sb_status == -DLM_EUNLOCK ? 0 : r->lksb.sb_status;
}

static void clt_raw_leave(struct clt_file *f)
{
	if (f->raw_hold)
		clt_raw_unlock(f->raw_ls, f->raw_hold);
	kfree(f->raw_hold);
	f->raw_hold = NULL;
	if (f->raw_ls)
		dlm_release_lockspace(f->raw_ls, 1);
	f->raw_ls = NULL;
}

static int clt_rawjoin(struct clt_file *f, const char *name, bool cb)
{
	int ret;

	if (f->raw_ls)
		return -EBUSY;
	if (cb && !ORDLOCK_DLM_LSFL_CB)
		return -EOPNOTSUPP;
	/* the value block's length of ordlock_dlm's lockspaces */
	ret = dlm_new_lockspace(name, NULL, cb ? ORDLOCK_DLM_LSFL_CB : 0, 32,
				NULL, NULL, NULL, &f->raw_ls);
	if (ret)
		f->raw_ls = NULL;
	return ret;
}

static int clt_rawhold(struct clt_file *f, u32 rank, u64 id)
{
	struct clt_raw *r;
	int ret;

	if (!f->raw_ls)
		return -ENOTCONN;
	if (f->raw_hold)
		return -EBUSY;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	init_completion(&r->ast);
	clt_raw_name(r, rank, id);
	ret = clt_raw_lock(f->raw_ls, r, DLM_LOCK_NL);
	if (ret) {
		kfree(r);
		return ret;
	}
	f->raw_hold = r;
	return 0;
}

static int clt_rawbench(struct clt_file *f, u32 rank, u64 id, u64 n)
{
	struct clt_raw *r;
	u64 i, t0 = 0;
	int ret = 0;

	if (!f->raw_ls)
		return -ENOTCONN;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	init_completion(&r->ast);
	clt_raw_name(r, rank, id);
	for (i = 0; i <= n && !ret; i++) {
		if (i == 1)
			t0 = ktime_get_ns();
		ret = clt_raw_lock(f->raw_ls, r, DLM_LOCK_EX);
		if (!ret)
			ret = clt_raw_unlock(f->raw_ls, r);
	}
	if (!ret) {
		f->bench_n = n;
		f->bench_ns = ktime_get_ns() - t0;
	}
	kfree(r);
	return ret;
}

static int clt_bench(struct clt_file *f, u32 rank, u64 id, u64 n)
{
	struct ordlock_backend_lock *l;
	u64 i, t0 = 0;
	int ret = 0;

	if (!f->space)
		return -ENOTCONN;
	for (i = 0; i <= n && !ret; i++) {
		if (i == 1)
			t0 = ktime_get_ns();
		ret = f->backend->ops->lock(f->space, rank, id, true, 0,
					    KTIME_MAX, &l);
		if (!ret)
			f->backend->ops->unlock(l);
	}
	if (!ret) {
		f->bench_n = n;
		f->bench_ns = ktime_get_ns() - t0;
	}
	return ret;
}

static int clt_leave(struct clt_file *f)
{
	struct clt_held *h, *tmp;
	int ret = 0;

	list_for_each_entry_safe(h, tmp, &f->held, node) {
		f->backend->ops->unlock(h->lock);
		list_del(&h->node);
		kfree(h);
	}
	if (f->space)
		ret = f->backend->ops->leave(f->space);
	f->space = NULL;
	if (f->backend)
		ordlock_backend_put(f->backend);
	f->backend = NULL;
	return ret;
}

static int clt_join(struct clt_file *f, const char *domain)
{
	struct ordlock_backend_space *space;
	struct ordlock_backend *b;

	if (f->backend)
		return -EBUSY;
	b = ordlock_backend_get("dlm");
	if (IS_ERR(b))
		return PTR_ERR(b);
	space = b->ops->join(domain);
	if (IS_ERR(space)) {
		ordlock_backend_put(b);
		return PTR_ERR(space);
	}
	f->backend = b;
	f->space = space;
	return 0;
}

static int clt_lock(struct clt_file *f, u32 rank, u64 id, bool exclusive,
		    long timeout_ms, bool try)
{
	ktime_t deadline = KTIME_MAX;
	struct clt_held *h;
	int ret;

	if (!f->space)
		return -ENOTCONN;
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	if (timeout_ms >= 0)
		deadline = ktime_add_ms(ktime_get(), timeout_ms);
	ret = f->backend->ops->lock(f->space, rank, id, exclusive,
				    try ? ORDLOCK_BACKEND_TRY : 0, deadline,
				    &h->lock);
	if (ret) {
		kfree(h);
		return ret;
	}
	h->rank = rank;
	h->id = id;
	h->exclusive = exclusive;
	list_add_tail(&h->node, &f->held);
	return 0;
}

static int clt_unlock(struct clt_file *f, u32 rank, u64 id)
{
	struct clt_held *h;

	list_for_each_entry(h, &f->held, node) {
		if (h->rank == rank && h->id == id) {
			f->backend->ops->unlock(h->lock);
			list_del(&h->node);
			kfree(h);
			return 0;
		}
	}
	return -ENOENT;
}

static int clt_command(struct clt_file *f, char *cmd)
{
	char domain[ORDLOCK_DOMAIN_NAME_MAX], mode[3], try[4];
	char lsname[DLM_LOCKSPACE_LEN + 1], cb[3];
	long timeout_ms;
	u64 id, count;
	u32 rank;
	int n;

	if (sscanf(cmd, "join %31s", domain) == 1)
		return clt_join(f, domain);
	n = sscanf(cmd, "lock %u %llu %2s %ld %3s", &rank, &id, mode,
		   &timeout_ms, try);
	if (n >= 4) {
		if (strcmp(mode, "ex") && strcmp(mode, "sh"))
			return -EINVAL;
		if (n == 5 && strcmp(try, "try"))
			return -EINVAL;
		return clt_lock(f, rank, id, !strcmp(mode, "ex"), timeout_ms,
				n == 5);
	}
	if (sscanf(cmd, "unlock %u %llu", &rank, &id) == 2)
		return clt_unlock(f, rank, id);
	if (sscanf(cmd, "bench %u %llu %llu", &rank, &id, &count) == 3)
		return count ? clt_bench(f, rank, id, count) : -EINVAL;
	n = sscanf(cmd, "rawjoin %63s %2s", lsname, cb);
	if (n >= 1) {
		if (n == 2 && strcmp(cb, "cb"))
			return -EINVAL;
		return clt_rawjoin(f, lsname, n == 2);
	}
	if (sscanf(cmd, "rawhold %u %llu", &rank, &id) == 2)
		return clt_rawhold(f, rank, id);
	if (sscanf(cmd, "rawbench %u %llu %llu", &rank, &id, &count) == 3)
		return count ? clt_rawbench(f, rank, id, count) : -EINVAL;
	if (!strcmp(cmd, "leave"))
		return clt_leave(f);
	return -EINVAL;
}

static ssize_t clt_write(struct file *file, const char __user *buf,
			 size_t len, loff_t *ppos)
{
	struct clt_file *f = ((struct seq_file *)file->private_data)->private;
	char *cmd;
	int ret;

	if (len > 128)
		return -EINVAL;
	cmd = memdup_user_nul(buf, len);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	strim(cmd);
	mutex_lock(&f->lock);
	ret = clt_command(f, cmd);
	mutex_unlock(&f->lock);
	kfree(cmd);
	/* a command rewinds the holder's read() (its result is read next) */
	*ppos = 0;
	return ret ? ret : len;
}

static int clt_show(struct seq_file *m, void *v)
{
	struct clt_file *f = m->private;
	struct clt_held *h;

	mutex_lock(&f->lock);
	list_for_each_entry(h, &f->held, node)
		seq_printf(m, "%u %llu %s\n", h->rank, h->id,
			   h->exclusive ? "ex" : "sh");
	if (f->bench_n)
		seq_printf(m, "bench %llu %llu\n", f->bench_n, f->bench_ns);
	mutex_unlock(&f->lock);
	return 0;
}

static int clt_open(struct inode *inode, struct file *file)
{
	struct clt_file *f;
	int ret;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	INIT_LIST_HEAD(&f->held);
	ret = single_open(file, clt_show, f);
	if (ret)
		kfree(f);
	return ret;
}

static int clt_release(struct inode *inode, struct file *file)
{
	struct clt_file *f = ((struct seq_file *)file->private_data)->private;

	clt_leave(f);
	clt_raw_leave(f);
	kfree(f);
	return single_release(inode, file);
}

static const struct file_operations clt_fops = {
	.owner = THIS_MODULE,
	.open = clt_open,
	.read = seq_read,
	.write = clt_write,
	.llseek = seq_lseek,
	.release = clt_release,
};

static int __init clt_init(void)
{
	clt_dentry = debugfs_create_file("ordlock_cltest", 0600, NULL, NULL,
					 &clt_fops);
	return 0;
}

static void __exit clt_exit(void)
{
	debugfs_remove(clt_dentry);
}

module_init(clt_init);
module_exit(clt_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Test driver of ordlock's cluster backend seam");
