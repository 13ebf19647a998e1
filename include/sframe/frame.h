/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frame a user stack walk is at, and why a walk stops: the state the
 * step (<sframe/step.h>) moves from a frame to its caller, in the module's
 * walker and in the host's replays of it (bench/copy-step.h).
 */
#ifndef _SFRAME_FRAME_H
#define _SFRAME_FRAME_H

#include <sframe/env.h>

struct pt_regs;

/* Why a walk stopped (struct sfu_ustate.stop, sfu_unwind_result.stop). */
enum sfu_stop {
	SFU_STOP_DEPTH,		/* the depth limit */
	SFU_STOP_OUTERMOST,	/* an outermost-frame rule */
	SFU_STOP_RA,		/* zero or non-user return address */
	SFU_STOP_CFA,		/* CFA not above the SP, or misaligned */
	SFU_STOP_FAULT,		/* a read failed (or would have faulted) */
	SFU_STOP_CORRUPT,	/* the section is corrupt; it was dropped */
	SFU_STOP_NO_RULE,	/* no SFrame and no plausible fallback */
	SFU_STOP_REGISTER,	/* a rule needs a register no longer known */
	SFU_STOP_BUDGET,	/* the walk's budget of section reads ran out */
	SFU_STOP_NR,
};

/*
 * Not a reason a walk ends: the step needs what the walk's user-access
 * window does not allow (a call, a fault), and the walk takes the frame
 * again outside it.  Never in a result.
 */
#define SFU_STOP_OUTSIDE	SFU_STOP_NR

/**
 * struct sfu_ustate - the registers of the frame being unwound
 * @pc: its program counter
 * @sp: its stack pointer
 * @fp: its frame pointer
 * @ra: the return-address register (arm64 LR, s390x r14), if @exact
 * @exact: @pc is where the frame stopped, not a return address: frame 0,
 *	or a frame restored from a signal context; @ra is valid
 * @sp_bound: @sp came from a frame record that may sit anywhere in its
 *	frame (SFU_ARCH_RECORD_ANYWHERE): the frame is above it
 * @regs: the task's user registers while unwinding frame 0, else NULL
 * @mode: how to read user memory
 * @budget: section reads the walk may still make (sfu_find_rule_budget())
 * @stop: why the walk ended (enum sfu_stop), once a step returned false
 *
 * Every step function returns true when it moved @st to the caller's
 * frame, or false with @stop set.
 */
struct sfu_ustate {
	unsigned long pc;
	unsigned long sp;
	unsigned long fp;
	unsigned long ra;
	bool exact;
	bool sp_bound;
	struct pt_regs *regs;
	enum sfu_mem mode;
	u32 budget;
	u8 stop;
};

/* End the walk at @st for @why; returns false, as a failed step does. */
static __always_inline bool sfu_stop(struct sfu_ustate *st,
				     enum sfu_stop why)
{
	st->stop = why;
	return false;
}

#endif /* _SFRAME_FRAME_H */
