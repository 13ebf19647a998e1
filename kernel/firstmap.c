// SPDX-License-Identifier: GPL-2.0
/*
 * The wait at a file's first mapping: a task that maps an executable file
 * with neither SFrame nor a sidecar, while a daemon (sframectl daemon)
 * answers the trace event sframe_unwind_nosframe, is held on its way back
 * to user space, in the mapping's task work, until the daemon has
 * registered the file's sidecar, has said that it cannot make one, or
 * first_map_wait_ms have passed.  The program's first instruction in the
 * file then runs with the file covered, so even its first run is
 * profiled with complete stacks.  Like fanotify's permission events, but
 * bounded: the bound is the module's, whatever the daemon does.
 *
 * A daemon listens by taking a lease (SFRAME_UNWIND_IOC_LISTEN), which it
 * renews while it runs; a daemon that dies stops holding anyone once its
 * lease ends.  No task waits while no lease runs or the event is off, for a
 * file the daemon failed on, or for one whose wait ran out before (both
 * remembered, the last SFU_FM_FAILED_MAX of them, until a sidecar comes
 * for it); a task with a fatal signal stops waiting at once, and unload
 * wakes every waiter.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "firstmap.h"
#include "sidecar.h"
#include "stats.h"
#include "trace.h"

/* The default bound: see user-guide.rst for the measurements. */
#define SFU_FM_DEF_WAIT_MS	1000
/* The most first_map_wait_ms takes: 10 s. */
#define SFU_FM_MAX_WAIT_MS	10000
/* The longest lease a daemon may take at once. */
#define SFU_FM_MAX_LEASE_MS	60000
/* Files the daemon failed on, or whose wait ran out, remembered. */
#define SFU_FM_FAILED_MAX	256

static unsigned int sfu_fm_wait_ms = SFU_FM_DEF_WAIT_MS;

static int sfu_fm_wait_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, SFU_FM_MAX_WAIT_MS);
}

static const struct kernel_param_ops sfu_fm_wait_ops = {
	.set = sfu_fm_wait_set,
	.get = param_get_uint,
};
module_param_cb(first_map_wait_ms, &sfu_fm_wait_ops, &sfu_fm_wait_ms, 0644);
MODULE_PARM_DESC(first_map_wait_ms,
		 "How long a task mapping a file without SFrame waits for the daemon's sidecar (ms, 0: never; at most 10000)");

/* A file, as the event names it. */
struct sfu_fm_file {
	dev_t dev;
	unsigned long ino;
};

static struct {
	spinlock_t lock;	/* guards @failed and @next */
	struct sfu_fm_file failed[SFU_FM_FAILED_MAX];
	unsigned int next;	/* the slot the next failure takes */
	bool leased;		/* a daemon took a lease ... */
	unsigned long lease_end;	/* ... that ends then (jiffies) */
	unsigned long gen;	/* bumped by every answer */
	bool stopping;
	wait_queue_head_t answered;
} sfu_fm = {
	.lock = __SPIN_LOCK_UNLOCKED(sfu_fm.lock),
	.answered = __WAIT_QUEUE_HEAD_INITIALIZER(sfu_fm.answered),
};

static bool sfu_fm_same(const struct sfu_fm_file *a, struct sfu_fm_file b)
{
	return a->ino == b.ino && a->dev == b.dev;
}

static struct sfu_fm_file sfu_fm_file_of(struct file *file)
{
	struct inode *inode = file_inode(file);

	return (struct sfu_fm_file){ inode->i_sb->s_dev, inode->i_ino };
}

/* Wake the waiters: an answer came (or unload). */
static void sfu_fm_wake(void)
{
	WRITE_ONCE(sfu_fm.gen, READ_ONCE(sfu_fm.gen) + 1);
	wake_up_all(&sfu_fm.answered);
}

/**
 * sfu_first_map_listen() - a daemon answers nosframe events for a while
 * @lease_ms: for how long from now, at most SFU_FM_MAX_LEASE_MS; 0 ends
 *	the lease
 *
 * Return: 0, or -EINVAL for a lease too long.
 */
int sfu_first_map_listen(u32 lease_ms)
{
	if (lease_ms > SFU_FM_MAX_LEASE_MS)
		return -EINVAL;
	WRITE_ONCE(sfu_fm.lease_end, jiffies + msecs_to_jiffies(lease_ms));
	WRITE_ONCE(sfu_fm.leased, lease_ms != 0);
	if (!lease_ms)
		sfu_fm_wake();
	return 0;
}

/* Remember @f: no task waits for it again. */
static void sfu_fm_remember(struct sfu_fm_file f)
{
	spin_lock(&sfu_fm.lock);
	sfu_fm.failed[sfu_fm.next] = f;
	sfu_fm.next = (sfu_fm.next + 1) % SFU_FM_FAILED_MAX;
	spin_unlock(&sfu_fm.lock);
}

static bool sfu_fm_has_failed(struct sfu_fm_file f)
{
	bool found = false;
	unsigned int i;

	spin_lock(&sfu_fm.lock);
	for (i = 0; i < SFU_FM_FAILED_MAX && !found; i++)
		found = sfu_fm_same(&sfu_fm.failed[i], f);
	spin_unlock(&sfu_fm.lock);
	return found;
}

/**
 * sfu_first_map_failed() - the daemon cannot make a sidecar for @file
 * @file: the file
 *
 * Its waiters go on at once, and no later mapping of it waits.
 */
void sfu_first_map_failed(struct file *file)
{
	sfu_fm_remember(sfu_fm_file_of(file));
	sfu_fm_wake();
}

/**
 * sfu_first_map_added() - a sidecar was registered: waiters look again
 * @file: its file, which mappings wait for again if its wait ran out
 *	before (its first section took the daemon longer than the bound)
 */
void sfu_first_map_added(struct file *file)
{
	struct sfu_fm_file f = sfu_fm_file_of(file);
	unsigned int i;

	spin_lock(&sfu_fm.lock);
	for (i = 0; i < SFU_FM_FAILED_MAX; i++)
		if (sfu_fm_same(&sfu_fm.failed[i], f))
			sfu_fm.failed[i] = (struct sfu_fm_file){ 0 };
	spin_unlock(&sfu_fm.lock);
	sfu_fm_wake();
}

/* Does a daemon listen now, so that waiting can end in an answer? */
static bool sfu_fm_listened(void)
{
	return READ_ONCE(sfu_fm.leased) &&
	       time_before(jiffies, READ_ONCE(sfu_fm.lease_end)) &&
	       trace_sframe_unwind_nosframe_enabled() &&
	       !READ_ONCE(sfu_fm.stopping);
}

/* Whether waiting for @f can no longer end in its sidecar. */
static bool sfu_fm_give_up(struct sfu_fm_file f)
{
	return fatal_signal_pending(current) || !sfu_fm_listened() ||
	       sfu_fm_has_failed(f);
}

/**
 * sfu_first_map_wait() - wait for the sidecar of a file mapped just now
 * @file: the file, which has no SFrame of its own and had no sidecar when
 *	its mapping's event was emitted
 *
 * Called from the mapping's task work, by the task that mapped it, with
 * no lock held; sleeps at most first_map_wait_ms.
 *
 * Return: the file's sidecar (a reference), or NULL.
 */
struct sfu_blob *sfu_first_map_wait(struct file *file)
{
	unsigned long ms = READ_ONCE(sfu_fm_wait_ms), deadline, gen;
	struct sfu_fm_file f = sfu_fm_file_of(file);
	struct sfu_blob *blob = NULL;
	long left;

	if (!ms || sfu_fm_give_up(f))
		return NULL;
	sfu_stat_inc(SFU_STAT_FIRST_MAP_WAITS);
	deadline = jiffies + msecs_to_jiffies(ms);
	for (;;) {
		gen = READ_ONCE(sfu_fm.gen);
		/* Read the generation first: an answer after it wakes us. */
		smp_rmb();
		blob = sfu_sidecar_get(file);
		if (blob) {
			sfu_stat_inc(SFU_STAT_FIRST_MAP_ANSWERED);
			return blob;
		}
		left = (long)(deadline - jiffies);
		if (left <= 0 || sfu_fm_give_up(f))
			break;
		wait_event_killable_timeout(sfu_fm.answered,
					    READ_ONCE(sfu_fm.gen) != gen, left);
	}
	if (left <= 0) {
		sfu_stat_inc(SFU_STAT_FIRST_MAP_TIMEOUTS);
		sfu_fm_remember(f);
	}
	return NULL;
}

/**
 * sfu_first_map_stop() - unload: wake every waiter, let none wait again
 */
void sfu_first_map_stop(void)
{
	WRITE_ONCE(sfu_fm.stopping, true);
	sfu_fm_wake();
}
