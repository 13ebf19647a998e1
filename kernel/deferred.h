/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferred user stack unwinding (deferred.c), for kernels that lack
 * unwind_deferred_* (mainline 6.17), with the same contract.
 *
 * A consumer registers once with a callback.  From any context (task,
 * IRQ, NMI) it asks for the current task's user stack and gets a cookie
 * back.  The walk runs once, in the task, on its way back to user space
 * (where .sframe and stack pages may be faulted in), and every consumer
 * that asked during the same kernel entry is called with the same frames
 * and the same cookie.  Cookies are never reused.
 */
#ifndef _SFU_DEFERRED_H
#define _SFU_DEFERRED_H

#include <linux/types.h>

#include "unwind.h"

struct task_struct;

/**
 * struct sfu_unwind_trace - what a deferred walk hands its consumers
 * @nr: number of frames
 * @entries: their PCs, innermost first
 * @res: how the walk went (why it stopped, how frames were stepped)
 */
struct sfu_unwind_trace {
	unsigned int nr;
	const unsigned long *entries;
	struct sfu_unwind_result res;
};

struct sfu_deferred;

/*
 * Called in the task, in process context (it may sleep), once per walk
 * the consumer asked for.
 */
typedef void (*sfu_deferred_fn)(struct sfu_deferred *d,
				const struct sfu_unwind_trace *trace,
				u64 cookie);

/**
 * struct sfu_deferred - one consumer of deferred user stack traces
 * @func: its callback
 * @bit: its bit in the requests' consumer masks; private
 */
struct sfu_deferred {
	sfu_deferred_fn func;
	int bit;
};

int sfu_deferred_init(struct sfu_deferred *d, sfu_deferred_fn func);
void sfu_deferred_cancel(struct sfu_deferred *d);
int sfu_deferred_request(struct sfu_deferred *d, u64 *cookie);
int sfu_deferred_request_task(struct sfu_deferred *d, struct task_struct *task,
			      u64 *cookie);

/* The module's own deferred unwinding: its life. */
int sfu_deferred_module_init(void);
void sfu_deferred_stop(void);
void sfu_deferred_module_exit(void);

#endif /* _SFU_DEFERRED_H */
