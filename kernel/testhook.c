// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/sframe_unwind/unwind: a process asks for its own user
 * stack and reads the frames back (selftests, benchmarks).
 *
 * Write one command:
 *   sync [fault]   walk now, in the write() itself: non-faulting (as perf
 *                  and ftrace must), or faulting with "fault"
 *   deferred [N]   N consumers (1 or 2) request a deferred walk; it runs
 *                  on the way back from this write(), before it returns
 *   task TID       request a deferred walk of thread TID of the caller's
 *                  process; it is interrupted wherever it runs
 *   get [TID]      select the results of TID (default: the caller)
 * and read the results of the selected thread (the writer's own, after
 * sync and deferred); reading takes them away:
 *   cookie=<c> consumer=<k> nr=<n> stop=<why> sframe=<n> fallback=<n>
 *   signal=<n> table=<n>
 *   0x<pc>            one line per frame, innermost first
 * Walks that complete while nobody reads are kept, the oldest dropped
 * first beyond SFU_TH_MAX_RESULTS.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "deferred.h"
#include "testhook.h"

#define SFU_TH_MAX_RESULTS	256
#define SFU_TH_CONSUMERS	2
#define SFU_TH_CMD_MAX		64
#define SFU_TH_HEAD_MAX		160
#define SFU_TH_PC_MAX		20

struct sfu_th_result {
	struct list_head node;
	pid_t tid;
	u64 cookie;
	int consumer;
	struct sfu_unwind_result res;
	unsigned long pcs[];
};

static struct {
	struct mutex lock;		/* guards the list */
	struct list_head results;
	unsigned int nr;
	struct sfu_deferred consumers[SFU_TH_CONSUMERS];
	int nr_consumers;
} sfu_th = {
	.lock = __MUTEX_INITIALIZER(sfu_th.lock),
	.results = LIST_HEAD_INIT(sfu_th.results),
};

struct sfu_th_file {
	struct mutex lock;	/* guards the fields below */
	pid_t tid;		/* whose results reads return */
	char *out;
	size_t len;
};

static void sfu_th_store(pid_t tid, u64 cookie, int consumer,
			 const struct sfu_unwind_result *res,
			 const unsigned long *pcs)
{
	struct sfu_th_result *r, *old = NULL;

	r = kmalloc(struct_size(r, pcs, res->nr), GFP_KERNEL);
	if (!r)
		return;
	r->tid = tid;
	r->cookie = cookie;
	r->consumer = consumer;
	r->res = *res;
	memcpy(r->pcs, pcs, res->nr * sizeof(*pcs));
	mutex_lock(&sfu_th.lock);
	list_add_tail(&r->node, &sfu_th.results);
	if (++sfu_th.nr > SFU_TH_MAX_RESULTS) {
		old = list_first_entry(&sfu_th.results, struct sfu_th_result,
				       node);
		list_del(&old->node);
		sfu_th.nr--;
	}
	mutex_unlock(&sfu_th.lock);
	kfree(old);
}

static void sfu_th_deferred(struct sfu_deferred *d,
			    const struct sfu_unwind_trace *trace, u64 cookie)
{
	int consumer = d - sfu_th.consumers;

	sfu_th_store(task_pid_vnr(current), cookie, consumer, &trace->res,
		     trace->entries);
}

static int sfu_th_sync(bool fault)
{
	struct sfu_unwind_result res;
	unsigned long *pcs;
	int ret;

	unsigned int max = READ_ONCE(sfu_max_depth);

	pcs = kmalloc_array(max, sizeof(*pcs), GFP_KERNEL);
	if (!pcs)
		return -ENOMEM;
	ret = sfu_unwind_user(NULL, fault ? SFU_MEM_USER :
			      SFU_MEM_USER_NOFAULT, pcs, max, &res);
	if (!ret)
		sfu_th_store(task_pid_vnr(current), 0, -1, &res, pcs);
	kfree(pcs);
	return ret;
}

static int sfu_th_deferred_cmd(unsigned int n)
{
	unsigned int i;
	u64 cookie;
	int ret;

	if (!n || n > SFU_TH_CONSUMERS)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ret = sfu_deferred_request(&sfu_th.consumers[i], &cookie);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int sfu_th_task_cmd(pid_t tid)
{
	struct task_struct *task;
	struct pid *pid;
	u64 cookie;
	int ret;

	pid = find_get_pid(tid);
	task = get_pid_task(pid, PIDTYPE_PID);
	put_pid(pid);
	if (!task)
		return -ESRCH;
	if (!same_thread_group(task, current) || task == current)
		ret = -EPERM;
	else
		ret = sfu_deferred_request_task(&sfu_th.consumers[0], task,
						&cookie);
	put_task_struct(task);
	return ret;
}

/* Format and take away the results of @tid. */
static int sfu_th_collect(struct sfu_th_file *f)
{
	struct sfu_th_result *r, *next;
	size_t size = 0, len = 0;
	LIST_HEAD(mine);
	unsigned int i;
	char *out;

	mutex_lock(&sfu_th.lock);
	list_for_each_entry_safe(r, next, &sfu_th.results, node) {
		if (r->tid != f->tid)
			continue;
		list_move_tail(&r->node, &mine);
		sfu_th.nr--;
		size += SFU_TH_HEAD_MAX + r->res.nr * SFU_TH_PC_MAX;
	}
	mutex_unlock(&sfu_th.lock);
	out = kvmalloc(size + 1, GFP_KERNEL | __GFP_NOWARN);
	list_for_each_entry_safe(r, next, &mine, node) {
		if (out) {
			len += scnprintf(out + len, size + 1 - len,
					 "cookie=%llu consumer=%d nr=%u stop=%s sframe=%u fallback=%u signal=%u table=%u\n",
					 r->cookie, r->consumer, r->res.nr,
					 sfu_stop_name(r->res.stop),
					 r->res.sframe, r->res.fallback,
					 r->res.signal, r->res.table);
			for (i = 0; i < r->res.nr; i++)
				len += scnprintf(out + len, size + 1 - len,
						 "0x%lx\n", r->pcs[i]);
		}
		kfree(r);
	}
	if (!out)
		return -ENOMEM;
	kvfree(f->out);
	f->out = out;
	f->len = len;
	return 0;
}

static int sfu_th_command(struct sfu_th_file *f, char *cmd)
{
	char *verb = strsep(&cmd, " \t\n");
	char *arg = cmd ? strim(cmd) : NULL;
	unsigned int n = 1;
	int tid;

	if (!strcmp(verb, "sync"))
		return sfu_th_sync(arg && !strcmp(arg, "fault"));
	if (!strcmp(verb, "deferred")) {
		if (arg && *arg && kstrtouint(arg, 0, &n))
			return -EINVAL;
		return sfu_th_deferred_cmd(n);
	}
	if (!strcmp(verb, "task")) {
		if (!arg || kstrtoint(arg, 0, &tid))
			return -EINVAL;
		return sfu_th_task_cmd(tid);
	}
	if (!strcmp(verb, "get")) {
		tid = task_pid_vnr(current);
		if (arg && *arg && kstrtoint(arg, 0, &tid))
			return -EINVAL;
		mutex_lock(&f->lock);
		f->tid = tid;
		mutex_unlock(&f->lock);
		return 0;
	}
	return -EINVAL;
}

static ssize_t sfu_th_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	struct sfu_th_file *f = file->private_data;
	char *cmd;
	int ret;

	if (!count || count > SFU_TH_CMD_MAX)
		return -EINVAL;
	cmd = memdup_user_nul(ubuf, count);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	mutex_lock(&f->lock);
	f->tid = task_pid_vnr(current);
	mutex_unlock(&f->lock);
	ret = sfu_th_command(f, cmd);
	kfree(cmd);
	if (ret)
		return ret;
	*ppos = 0;
	return count;
}

static ssize_t sfu_th_read(struct file *file, char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	struct sfu_th_file *f = file->private_data;
	ssize_t ret = 0;

	mutex_lock(&f->lock);
	if (!*ppos)
		ret = sfu_th_collect(f);
	if (!ret)
		ret = simple_read_from_buffer(ubuf, count, ppos, f->out,
					      f->len);
	mutex_unlock(&f->lock);
	return ret;
}

static int sfu_th_open(struct inode *inode, struct file *file)
{
	struct sfu_th_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	f->tid = task_pid_vnr(current);
	file->private_data = f;
	return 0;
}

static int sfu_th_release(struct inode *inode, struct file *file)
{
	struct sfu_th_file *f = file->private_data;

	kvfree(f->out);
	kfree(f);
	return 0;
}

static const struct file_operations sfu_th_fops = {
	.owner = THIS_MODULE,
	.open = sfu_th_open,
	.release = sfu_th_release,
	.read = sfu_th_read,
	.write = sfu_th_write,
	.llseek = default_llseek,
};

int sfu_testhook_init(struct dentry *dir)
{
	int i, ret;

	for (i = 0; i < SFU_TH_CONSUMERS; i++) {
		ret = sfu_deferred_init(&sfu_th.consumers[i], sfu_th_deferred);
		if (ret)
			goto cancel;
	}
	sfu_th.nr_consumers = SFU_TH_CONSUMERS;
	debugfs_create_file("unwind", 0600, dir, NULL, &sfu_th_fops);
	return 0;

cancel:
	while (i--)
		sfu_deferred_cancel(&sfu_th.consumers[i]);
	return ret;
}

void sfu_testhook_exit(void)
{
	struct sfu_th_result *r, *next;
	int i;

	for (i = 0; i < sfu_th.nr_consumers; i++)
		sfu_deferred_cancel(&sfu_th.consumers[i]);
	sfu_th.nr_consumers = 0;
	mutex_lock(&sfu_th.lock);
	list_for_each_entry_safe(r, next, &sfu_th.results, node) {
		list_del(&r->node);
		kfree(r);
	}
	sfu_th.nr = 0;
	mutex_unlock(&sfu_th.lock);
}
