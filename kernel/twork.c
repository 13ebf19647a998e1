// SPDX-License-Identifier: GPL-2.0
/*
 * Task work that module unload can wait for.
 *
 * task_work_add() runs a function of ours when a task returns to user
 * space.  A module cannot cancel such work (task_work_cancel() is not
 * exported) and cannot tell, from inside the function, when its last
 * instruction has run: anything the function does to say "done" is
 * followed by its own return, in module text that unload may already
 * have freed.
 *
 * So the function says nothing.  When it has finished its job it queues a
 * second work behind itself, on the same task, whose function is the
 * kernel's wakeme_after_rcu(): task_work_run() calls it after ours has
 * returned, and it completes a completion that unload (or a later queue
 * call) waits for before freeing the item.  A work added while
 * task_work_run() is running is run by it before the task leaves, also on
 * the exit path, so the second work always runs.
 *
 * Items move from sfu_tw.live (queued) to sfu_tw.retired (function done,
 * completion pending) and are freed from there.
 *
 * Work queued with TWA_RESUME waits for its task to return to user space,
 * which a task asleep in epoll_wait() or pause() may never do.  Unload
 * therefore nudges every task with a live item: a TWA_SIGNAL work, whose
 * function is again wakeme_after_rcu(), interrupts an interruptible sleep
 * the way a signal would (a restartable system call restarts, others may
 * return EINTR), and the task runs its works on the way out.  An item is
 * live only until its function, run by its task, has taken the lock to
 * retire it, so under the lock the task is still there to be nudged.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/sched/signal.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "twork.h"

/* Items reaped per queue call, so a queue never runs long. */
#define SFU_TW_REAP_BATCH	16
/* How often unload reports tasks that have not returned to user space. */
#define SFU_TW_DRAIN_REPORT	(10 * HZ)
/* Tasks named per report. */
#define SFU_TW_REPORT_TASKS	8

static struct {
	spinlock_t lock;	/* guards the lists and @stopping */
	struct list_head live;
	struct list_head retired;
	unsigned long nr_live;
	bool stopping;
	wait_queue_head_t idle;	/* woken when @live empties */
} sfu_tw = {
	.lock = __SPIN_LOCK_UNLOCKED(sfu_tw.lock),
	.live = LIST_HEAD_INIT(sfu_tw.live),
	.retired = LIST_HEAD_INIT(sfu_tw.retired),
	.idle = __WAIT_QUEUE_HEAD_INITIALIZER(sfu_tw.idle),
};

/* Free retired items whose completion has fired.  Caller holds the lock. */
static void sfu_twork_reap_locked(unsigned int budget)
{
	struct sfu_twork *tw, *next;

	list_for_each_entry_safe(tw, next, &sfu_tw.retired, node) {
		if (!budget--)
			break;
		if (!completion_done(&tw->done.completion))
			continue;
		list_del(&tw->node);
		tw->free(tw);
	}
}

static void sfu_twork_run(struct callback_head *head)
{
	struct sfu_twork *tw = container_of(head, struct sfu_twork, work);
	unsigned long flags;
	bool idle;
	int ret;

	tw->fn(tw);

	init_completion(&tw->done.completion);
	init_rcu_head(&tw->done.head);
	tw->done.head.func = wakeme_after_rcu;
	spin_lock_irqsave(&sfu_tw.lock, flags);
	list_move_tail(&tw->node, &sfu_tw.retired);
	idle = !--sfu_tw.nr_live;
	spin_unlock_irqrestore(&sfu_tw.lock, flags);
	/* Not under the lock: nothing but list work happens there. */
	if (idle)
		wake_up(&sfu_tw.idle);

	ret = task_work_add(current, &tw->done.head, TWA_NONE);
	/* Cannot fail while task_work_run() runs us; complete it anyway. */
	if (WARN_ON_ONCE(ret))
		complete(&tw->done.completion);
}

/**
 * sfu_twork_queue() - run tw->fn in @task on its way to user space
 * @task: the task (current, or a new child not yet running)
 * @tw: the item; fn and free set, the rest is initialised here
 * @mode: TWA_RESUME or TWA_SIGNAL
 *
 * Not from NMI.  On success the item belongs to this file until it is
 * freed with tw->free; on failure the caller still owns it.
 *
 * Return: 0, -ESRCH if @task is exiting, -ESHUTDOWN during unload.
 */
int sfu_twork_queue(struct task_struct *task, struct sfu_twork *tw,
		    enum task_work_notify_mode mode)
{
	unsigned long flags;
	bool idle;
	int ret;

	init_task_work(&tw->work, sfu_twork_run);
	tw->task = task;
	tw->kicked = false;
	spin_lock_irqsave(&sfu_tw.lock, flags);
	if (sfu_tw.stopping) {
		spin_unlock_irqrestore(&sfu_tw.lock, flags);
		return -ESHUTDOWN;
	}
	sfu_twork_reap_locked(SFU_TW_REAP_BATCH);
	list_add_tail(&tw->node, &sfu_tw.live);
	sfu_tw.nr_live++;
	spin_unlock_irqrestore(&sfu_tw.lock, flags);

	ret = task_work_add(task, &tw->work, mode);
	if (ret) {
		spin_lock_irqsave(&sfu_tw.lock, flags);
		list_del(&tw->node);
		idle = !--sfu_tw.nr_live;
		spin_unlock_irqrestore(&sfu_tw.lock, flags);
		if (idle)
			wake_up(&sfu_tw.idle);
	}
	return ret;
}

void sfu_twork_init(void)
{
	sfu_tw.stopping = false;
}

/**
 * sfu_twork_pending() - items whose function has not run yet
 *
 * Return: the number of live items, for the stats file.
 */
unsigned long sfu_twork_pending(void)
{
	return READ_ONCE(sfu_tw.nr_live);
}

/* Caller holds the lock, and @tw is live: its task cannot be gone. */
static void sfu_twork_kick(struct sfu_twork *tw)
{
	init_completion(&tw->kick.completion);
	init_rcu_head(&tw->kick.head);
	tw->kick.head.func = wakeme_after_rcu;
	tw->kicked = !task_work_add(tw->task, &tw->kick.head, TWA_SIGNAL);
}

/*
 * Name the tasks unload waits for.  It cannot stop waiting: their items
 * run the module's code, so the module must outlive them; a task in an
 * uninterruptible sleep (a fault on a userfaultfd page, a hung NFS
 * server) runs its item only when that sleep ends.
 */
static void sfu_twork_report(void)
{
	struct sfu_twork *tw;
	unsigned int shown = 0;

	spin_lock_irq(&sfu_tw.lock);
	pr_info("unload waits for %lu task work item(s) to run\n",
		sfu_tw.nr_live);
	list_for_each_entry(tw, &sfu_tw.live, node) {
		if (shown++ == SFU_TW_REPORT_TASKS)
			break;
		pr_info("  pid %d (%s), state %#x, blocks unload until it returns to user space\n",
			task_pid_nr(tw->task), tw->task->comm,
			READ_ONCE(tw->task->__state));
	}
	spin_unlock_irq(&sfu_tw.lock);
}

static bool sfu_twork_idle(void)
{
	bool idle;

	spin_lock_irq(&sfu_tw.lock);
	idle = !sfu_tw.nr_live;
	spin_unlock_irq(&sfu_tw.lock);
	return idle;
}

/**
 * sfu_twork_stop() - refuse new items and wait until every item is freed
 *
 * For module unload, after every path that queues items is gone.  Nudges
 * the tasks that have work pending (TWA_SIGNAL) and waits for them to run
 * it; names them every few seconds while it waits (a task in an
 * uninterruptible sleep runs it only when that sleep ends).
 */
void sfu_twork_stop(void)
{
	struct sfu_twork *tw, *next;
	LIST_HEAD(retired);

	spin_lock_irq(&sfu_tw.lock);
	sfu_tw.stopping = true;
	list_for_each_entry(tw, &sfu_tw.live, node)
		sfu_twork_kick(tw);
	spin_unlock_irq(&sfu_tw.lock);

	while (!wait_event_timeout(sfu_tw.idle, sfu_twork_idle(),
				   SFU_TW_DRAIN_REPORT))
		sfu_twork_report();

	spin_lock_irq(&sfu_tw.lock);
	list_splice_init(&sfu_tw.retired, &retired);
	spin_unlock_irq(&sfu_tw.lock);
	list_for_each_entry_safe(tw, next, &retired, node) {
		wait_for_completion(&tw->done.completion);
		if (tw->kicked)
			wait_for_completion(&tw->kick.completion);
		list_del(&tw->node);
		tw->free(tw);
	}
}
