/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between the walker (kernel/unwind.c) and the back end of
 * each architecture (kernel/arch/<arch>.c): how to find registers, strip
 * return addresses, step through signal frames and fall back to frame
 * pointers.
 */
#ifndef _SFU_ARCH_H
#define _SFU_ARCH_H

#include <linux/types.h>

#include <sframe/env.h>
#include <sframe/unwind_user.h>

struct pt_regs;

/**
 * struct sfu_ustate - the registers of the frame being unwound
 * @pc: its program counter
 * @sp: its stack pointer
 * @fp: its frame pointer
 * @ra: the return-address register (arm64 LR, s390x r14), if @exact
 * @exact: @pc is where the frame stopped, not a return address: frame 0,
 *	or a frame restored from a signal context; @ra is valid
 * @regs: the task's user registers while unwinding frame 0, else NULL
 * @mode: how to read user memory
 * @budget: section reads the walk may still make (sfu_find_rule_budget())
 */
struct sfu_ustate {
	unsigned long pc;
	unsigned long sp;
	unsigned long fp;
	unsigned long ra;
	bool exact;
	struct pt_regs *regs;
	enum sfu_mem mode;
	u32 budget;
};

/* Read one word of user memory in @st's mode. */
static inline int sfu_uread(const struct sfu_ustate *st, unsigned long addr,
			    unsigned long *val)
{
	return sfu_copy(val, addr, sizeof(*val), st->mode);
}

int sfu_frame_record_step(struct sfu_ustate *st, unsigned long fp,
			  unsigned long record);
void sfu_ustate_restore(struct sfu_ustate *st, unsigned long pc,
			unsigned long sp, unsigned long fp, unsigned long ra);

bool sfu_arch_user_regs_ok(struct pt_regs *regs);
void sfu_arch_start(struct sfu_ustate *st, struct pt_regs *regs);
bool sfu_arch_reg(const struct sfu_ustate *st, u16 dwarf_reg,
		  unsigned long *val);
unsigned long sfu_arch_strip_ra(unsigned long ra, bool mangled);
int sfu_arch_sigframe(struct sfu_ustate *st);
int sfu_arch_fallback(struct sfu_ustate *st);

#endif /* _SFU_ARCH_H */
