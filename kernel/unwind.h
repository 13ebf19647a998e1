/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stack unwinding with SFrame: the walker (unwind.c).
 *
 * sfu_unwind_user() walks the current task's user stack from the user
 * registers it entered the kernel with.  It reads .sframe sections (through
 * the registry) and the stack only with bounds-checked user copies, in one
 * of two modes that share all code: SFU_MEM_USER may fault and sleep (task
 * context, the deferred path), SFU_MEM_USER_NOFAULT never does (any context,
 * NMI included).
 */
#ifndef _SFU_UNWIND_H
#define _SFU_UNWIND_H

#include <linux/types.h>

#include <sframe/env.h>
#include <sframe/frame.h>

struct pt_regs;

/**
 * struct sfu_unwind_result - what a walk found besides the frames
 * @nr: frames stored
 * @stop: why the walk stopped (enum sfu_stop)
 * @sframe: frames stepped with an SFrame rule
 * @table: of those, frames whose rule came from a rule table (a file's or
 *	a sidecar's section; the others are read where they live: JIT)
 * @fallback: frames stepped with frame pointers (or the s390x back chain)
 * @signal: signal frames stepped through
 */
struct sfu_unwind_result {
	unsigned int nr;
	u8 stop;
	unsigned int sframe;
	unsigned int table;
	unsigned int fallback;
	unsigned int signal;
};

extern unsigned int sfu_max_depth;

/* Takes one frame's PC; returns false if it cannot (it is full). */
typedef bool (*sfu_consume_fn)(void *arg, unsigned long pc);

int sfu_unwind_user(struct pt_regs *regs, enum sfu_mem mode,
		    unsigned long *pcs, unsigned int max,
		    struct sfu_unwind_result *res);
const char *sfu_stop_name(u8 stop);

#endif /* _SFU_UNWIND_H */
