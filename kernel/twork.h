/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Task work that module unload can wait for (twork.c).
 */
#ifndef _SFU_TWORK_H
#define _SFU_TWORK_H

#include <linux/list.h>
#include <linux/rcupdate_wait.h>
#include <linux/sched.h>
#include <linux/task_work.h>

struct sfu_twork;
typedef void (*sfu_twork_fn)(struct sfu_twork *tw);

/*
 * A task work item.  @work runs @fn in the task; once @fn has returned,
 * @done is queued behind it with the kernel's wakeme_after_rcu() as its
 * function, so the item's completion is signalled from kernel text after
 * the last instruction of this module has run.  Items are freed by twork.c
 * with @free once that completion is seen.
 */
struct sfu_twork {
	struct callback_head work;
	struct rcu_synchronize done;
	struct rcu_synchronize kick;	/* unload's TWA_SIGNAL nudge */
	struct task_struct *task;	/* valid while the item is live */
	bool kicked;
	struct list_head node;
	sfu_twork_fn fn;
	void (*free)(struct sfu_twork *tw);
};

int sfu_twork_queue(struct task_struct *task, struct sfu_twork *tw,
		    enum task_work_notify_mode mode);
void sfu_twork_init(void);
unsigned long sfu_twork_pending(void);
void sfu_twork_stop(void);

#endif /* _SFU_TWORK_H */
