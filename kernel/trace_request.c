// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/sframe_unwind/request_at: ask for the user stack of
 * every task that enters a kernel function.
 *
 * Write a kernel function name to put a kprobe on it (replacing the one
 * before), "none" to remove it; read it back.  Each hit by a user task
 * makes a deferred request, which emits sframe_unwind_request with the
 * cookie at that moment; the walk on the way back to user space emits
 * sframe_unwind_stack with the same cookie and the frames.  With both
 * events enabled next to the event of interest (say sys_enter_openat and
 * request_at do_sys_openat2), a trace consumer attaches a complete user
 * stack to it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "deferred.h"
#include "trace_request.h"

#define SFU_RQ_SYMBOL_MAX	KSYM_NAME_LEN
#define SFU_RQ_NONE		"none"

static struct {
	struct mutex lock;	/* guards the fields below */
	struct kprobe kp;
	char symbol[SFU_RQ_SYMBOL_MAX];
	bool armed;
	struct sfu_deferred consumer;
	bool consumer_ok;
} sfu_rq = {
	.lock = __MUTEX_INITIALIZER(sfu_rq.lock),
};

/* The events carry everything; this consumer only asks. */
static void sfu_rq_done(struct sfu_deferred *d,
			const struct sfu_unwind_trace *trace, u64 cookie)
{
}

static int sfu_rq_hit(struct kprobe *kp, struct pt_regs *regs)
{
	u64 cookie;

	if (current->mm && !(current->flags & PF_KTHREAD))
		sfu_deferred_request(&sfu_rq.consumer, &cookie);
	return 0;
}

/* Caller holds sfu_rq.lock. */
static void sfu_rq_disarm(void)
{
	if (!sfu_rq.armed)
		return;
	unregister_kprobe(&sfu_rq.kp);
	sfu_rq.armed = false;
	strscpy(sfu_rq.symbol, SFU_RQ_NONE, sizeof(sfu_rq.symbol));
}

/* Caller holds sfu_rq.lock. */
static int sfu_rq_arm(const char *symbol)
{
	int ret;

	sfu_rq_disarm();
	if (!strcmp(symbol, SFU_RQ_NONE))
		return 0;
	strscpy(sfu_rq.symbol, symbol, sizeof(sfu_rq.symbol));
	memset(&sfu_rq.kp, 0, sizeof(sfu_rq.kp));
	sfu_rq.kp.symbol_name = sfu_rq.symbol;
	sfu_rq.kp.pre_handler = sfu_rq_hit;
	ret = register_kprobe(&sfu_rq.kp);
	if (ret) {
		strscpy(sfu_rq.symbol, SFU_RQ_NONE, sizeof(sfu_rq.symbol));
		return ret;
	}
	sfu_rq.armed = true;
	return 0;
}

static ssize_t sfu_rq_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char *buf;
	int ret;

	if (!count || count >= SFU_RQ_SYMBOL_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	mutex_lock(&sfu_rq.lock);
	ret = sfu_rq.consumer_ok ? sfu_rq_arm(strim(buf)) : -ENODEV;
	mutex_unlock(&sfu_rq.lock);
	kfree(buf);
	return ret ? ret : count;
}

static ssize_t sfu_rq_read(struct file *file, char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	char buf[SFU_RQ_SYMBOL_MAX + 1];
	int len;

	mutex_lock(&sfu_rq.lock);
	len = scnprintf(buf, sizeof(buf), "%s\n",
			sfu_rq.armed ? sfu_rq.symbol : SFU_RQ_NONE);
	mutex_unlock(&sfu_rq.lock);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations sfu_rq_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sfu_rq_read,
	.write = sfu_rq_write,
	.llseek = default_llseek,
};

void sfu_trace_request_init(struct dentry *dir)
{
	sfu_rq.consumer_ok = !sfu_deferred_init(&sfu_rq.consumer, sfu_rq_done);
	debugfs_create_file("request_at", 0600, dir, NULL, &sfu_rq_fops);
}

/* After the debugfs files are gone. */
void sfu_trace_request_exit(void)
{
	mutex_lock(&sfu_rq.lock);
	sfu_rq_disarm();
	mutex_unlock(&sfu_rq.lock);
	if (sfu_rq.consumer_ok)
		sfu_deferred_cancel(&sfu_rq.consumer);
	sfu_rq.consumer_ok = false;
}
