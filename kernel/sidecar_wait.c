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
 * renews while its answers flow; a task waits no longer than the lease
 * runs, so a daemon that dies or stalls stops holding anyone when its
 * lease ends.  No task waits while no lease runs or the event is off, or
 * for a file the daemon failed on or whose wait ran out before: such
 * files are remembered by device and inode, SFU_FM_FAILED_MAX of them in
 * sets of SFU_FM_WAYS picked by a keyed hash, until a sidecar comes for
 * one (a file pushed out by others is answered again by the daemon).  A
 * process (one exec) waits out at most one bound in all, in waits that
 * got no sidecar; a task with a fatal signal stops waiting at once, and
 * unload wakes every waiter.  An answer wakes only the waiters of files
 * in its wait queue's share, not every waiter.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/siphash.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "sidecar.h"
#include "sidecar_wait.h"
#include "stats.h"
#include "trace.h"

/* The default bound: see user-guide.rst for the measurements. */
#define SFU_FM_DEF_WAIT_MS	1000
/* The most first_map_wait_ms takes: 10 s. */
#define SFU_FM_MAX_WAIT_MS	10000
/* The longest lease a daemon may take at once. */
#define SFU_FM_MAX_LEASE_MS	60000
/* Files the daemon failed on, or whose wait ran out, remembered: 64 KiB. */
#define SFU_FM_FAILED_BITS	12
#define SFU_FM_FAILED_MAX	BIT(SFU_FM_FAILED_BITS)
/* ... in sets of this many, one of which a newcomer replaces. */
#define SFU_FM_WAYS		4
#define SFU_FM_SETS		(SFU_FM_FAILED_MAX / SFU_FM_WAYS)
/* Wait queues, each for the files whose hash falls in its share. */
#define SFU_FM_QUEUE_BITS	6
#define SFU_FM_QUEUES		BIT(SFU_FM_QUEUE_BITS)

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

/* A file, as the event names it; all zero in an empty slot. */
struct sfu_fm_file {
	dev_t dev;
	unsigned long ino;
};

/* Waiters of one share of the files, and the answers they have seen. */
struct sfu_fm_queue {
	wait_queue_head_t answered;
	unsigned long gen;	/* bumped by every answer for the share */
};

static struct {
	spinlock_t lock;	/* guards @failed */
	struct sfu_fm_file failed[SFU_FM_FAILED_MAX];
	siphash_key_t key;	/* so that no user picks a set to flood */
	bool leased;		/* a daemon took a lease ... */
	unsigned long lease_end;	/* ... that ends then (jiffies) */
	bool stopping;
	struct sfu_fm_queue queues[SFU_FM_QUEUES];
} sfu_fm = {
	.lock = __SPIN_LOCK_UNLOCKED(sfu_fm.lock),
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

static u64 sfu_fm_hash(struct sfu_fm_file f)
{
	return siphash_2u64(f.dev, f.ino, &sfu_fm.key);
}

/* The first slot of @f's set in sfu_fm.failed. */
static struct sfu_fm_file *sfu_fm_set(struct sfu_fm_file f)
{
	return &sfu_fm.failed[(sfu_fm_hash(f) % SFU_FM_SETS) * SFU_FM_WAYS];
}

static struct sfu_fm_queue *sfu_fm_queue(struct sfu_fm_file f)
{
	return &sfu_fm.queues[hash_64(sfu_fm_hash(f), SFU_FM_QUEUE_BITS)];
}

/* Wake the waiters of @q: an answer came for one of its files. */
static void sfu_fm_wake(struct sfu_fm_queue *q)
{
	WRITE_ONCE(q->gen, READ_ONCE(q->gen) + 1);
	wake_up_all(&q->answered);
}

static void sfu_fm_wake_all(void)
{
	unsigned int i;

	for (i = 0; i < SFU_FM_QUEUES; i++)
		sfu_fm_wake(&sfu_fm.queues[i]);
}

/**
 * sfu_first_map_init() - before the first mapping is registered
 */
void sfu_first_map_init(void)
{
	unsigned int i;

	get_random_bytes(&sfu_fm.key, sizeof(sfu_fm.key));
	for (i = 0; i < SFU_FM_QUEUES; i++)
		init_waitqueue_head(&sfu_fm.queues[i].answered);
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
		sfu_fm_wake_all();
	return 0;
}

/* Remember @f: no task waits for it again while it is in its set. */
static void sfu_fm_remember(struct sfu_fm_file f)
{
	struct sfu_fm_file *set = sfu_fm_set(f);
	unsigned int i, way = SFU_FM_WAYS;

	spin_lock(&sfu_fm.lock);
	for (i = 0; i < SFU_FM_WAYS; i++) {
		if (sfu_fm_same(&set[i], f))
			goto unlock;
		if (way == SFU_FM_WAYS && !set[i].dev && !set[i].ino)
			way = i;
	}
	if (way == SFU_FM_WAYS)
		way = get_random_u32() % SFU_FM_WAYS;
	set[way] = f;
unlock:
	spin_unlock(&sfu_fm.lock);
}

/* Forget @f: whether it failed or not, a sidecar came for it. */
static void sfu_fm_forget(struct sfu_fm_file f)
{
	struct sfu_fm_file *set = sfu_fm_set(f);
	unsigned int i;

	spin_lock(&sfu_fm.lock);
	for (i = 0; i < SFU_FM_WAYS; i++)
		if (sfu_fm_same(&set[i], f))
			set[i] = (struct sfu_fm_file){ 0 };
	spin_unlock(&sfu_fm.lock);
}

static bool sfu_fm_has_failed(struct sfu_fm_file f)
{
	struct sfu_fm_file *set = sfu_fm_set(f);
	bool found = false;
	unsigned int i;

	spin_lock(&sfu_fm.lock);
	for (i = 0; i < SFU_FM_WAYS && !found; i++)
		found = sfu_fm_same(&set[i], f);
	spin_unlock(&sfu_fm.lock);
	return found;
}

/**
 * sfu_first_map_failed() - the daemon cannot make a sidecar for @file
 * @file: the file
 *
 * Its waiters go on at once, and later mappings of it do not wait.
 */
void sfu_first_map_failed(struct file *file)
{
	struct sfu_fm_file f = sfu_fm_file_of(file);

	sfu_fm_remember(f);
	sfu_fm_wake(sfu_fm_queue(f));
}

/**
 * sfu_first_map_added() - a sidecar was registered: waiters look again
 * @file: its file, which mappings wait for again if its wait ran out
 *	before (its first section took the daemon longer than the bound)
 */
void sfu_first_map_added(struct file *file)
{
	struct sfu_fm_file f = sfu_fm_file_of(file);

	sfu_fm_forget(f);
	sfu_fm_wake(sfu_fm_queue(f));
}

/*
 * How long a daemon's lease still runs, in jiffies: 0 if none runs, or
 * the event is off, or the module goes.
 */
static long sfu_fm_lease_left(void)
{
	long left = (long)(READ_ONCE(sfu_fm.lease_end) - jiffies);

	if (!READ_ONCE(sfu_fm.leased) || READ_ONCE(sfu_fm.stopping) ||
	    !trace_sframe_unwind_nosframe_enabled())
		return 0;
	return max(left, 0L);
}

/* Whether waiting for @f can no longer end in its sidecar. */
static bool sfu_fm_give_up(struct sfu_fm_file f)
{
	return fatal_signal_pending(current) || !sfu_fm_lease_left() ||
	       sfu_fm_has_failed(f);
}

/*
 * Sleep until an answer for @q's share after @gen, @left jiffies or the
 * lease's end, whichever comes first.
 */
static void sfu_fm_sleep(struct sfu_fm_queue *q, unsigned long gen,
			 long left)
{
	left = min(left, sfu_fm_lease_left());
	if (left > 0)
		wait_event_killable_timeout(q->answered,
					    READ_ONCE(q->gen) != gen, left);
}

/*
 * Wait for @file's sidecar at most @bound jiffies; NULL if none came, and
 * then @in_vain unless the daemon said it makes none.  A wait that runs
 * out the whole of first_map_wait_ms (@whole) makes the file's later
 * mappings not wait.
 */
static struct sfu_blob *sfu_fm_wait(struct file *file, struct sfu_fm_file f,
				    long bound, bool whole, bool *in_vain)
{
	unsigned long deadline = jiffies + bound, gen;
	struct sfu_fm_queue *q = sfu_fm_queue(f);
	struct sfu_blob *blob;
	long left;

	sfu_stat_inc(SFU_STAT_FIRST_MAP_WAITS);
	for (;;) {
		gen = READ_ONCE(q->gen);
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
		sfu_fm_sleep(q, gen, left);
	}
	*in_vain = !sfu_fm_has_failed(f);
	if (left <= 0) {
		sfu_stat_inc(SFU_STAT_FIRST_MAP_TIMEOUTS);
		if (whole)
			sfu_fm_remember(f);
	}
	return NULL;
}

/**
 * sfu_first_map_wait() - wait for the sidecar of a file mapped just now
 * @file: the file, which has no SFrame of its own and had no sidecar when
 *	its mapping's event was emitted
 * @spent: the jiffies the mapping process has waited so far in vain (for
 *	no answer: the bound or the lease ran out), its registry's; a wait
 *	in vain adds to it, and once it reaches the bound the process waits
 *	no more
 *
 * Called from the mapping's task work, by the task that mapped it, with
 * no lock held; sleeps at most first_map_wait_ms.
 *
 * Return: the file's sidecar (a reference), or NULL.
 */
struct sfu_blob *sfu_first_map_wait(struct file *file, atomic_long_t *spent)
{
	long bound = msecs_to_jiffies(READ_ONCE(sfu_fm_wait_ms));
	struct sfu_fm_file f = sfu_fm_file_of(file);
	unsigned long start = jiffies;
	struct sfu_blob *blob;
	bool in_vain;
	long left;

	if (!bound || sfu_fm_give_up(f))
		return NULL;
	left = bound - atomic_long_read(spent);
	if (left <= 0) {
		sfu_stat_inc(SFU_STAT_FIRST_MAP_SPENT);
		return NULL;
	}
	blob = sfu_fm_wait(file, f, left, left == bound, &in_vain);
	if (!blob && in_vain)
		atomic_long_add((long)(jiffies - start), spent);
	return blob;
}

/**
 * sfu_first_map_stop() - unload: wake every waiter, let none wait again
 */
void sfu_first_map_stop(void)
{
	WRITE_ONCE(sfu_fm.stopping, true);
	sfu_fm_wake_all();
}
