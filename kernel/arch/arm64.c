// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 back end: SP, X29 and PC from pt_regs; the link register X30 holds
 * the return address only in frame 0 (or a frame restored from a signal
 * context), deeper frames have theirs on the stack.  Return addresses
 * marked mangled are stripped of their pointer-authentication code with
 * the task's address size.  Frame records (X29 chain) are the fallback and
 * the vDSO's __kernel_rt_sigreturn is stepped through its ucontext.
 */
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/stddef.h>
#include <asm/ucontext.h>
#include <asm/unistd.h>

#include "arch.h"

#define SFU_ARM64_FP		SFU_ARCH_FP_REG
#define SFU_ARM64_LR		30
#define SFU_ARM64_SP		SFU_ARCH_SP_REG
/* mov x8, #__NR_rt_sigreturn; svc #0 */
#define SFU_ARM64_MOV_X8	(0xd2800008U | (__NR_rt_sigreturn << 5))
#define SFU_ARM64_SVC0		0xd4000001U
#define SFU_ARM64_FRAME_RECORD	(2 * sizeof(unsigned long))
/* The frame the kernel builds: struct rt_sigframe { siginfo; ucontext; }. */
#define SFU_ARM64_SIGCONTEXT	(sizeof(struct siginfo) + \
				 offsetof(struct ucontext, uc_mcontext))

bool sfu_arch_user_regs_ok(struct pt_regs *regs)
{
	return !compat_user_mode(regs);
}

void sfu_arch_start(struct sfu_ustate *st, struct pt_regs *regs)
{
	st->pc = regs->pc;
	st->sp = regs->sp;
	st->fp = regs->regs[SFU_ARM64_FP];
	st->ra = regs->regs[SFU_ARM64_LR];
	st->exact = true;
	st->regs = regs;
}

bool sfu_arch_reg(const struct sfu_ustate *st, u16 reg, unsigned long *val)
{
	switch (reg) {
	case SFU_ARM64_SP:
		*val = st->sp;
		return true;
	case SFU_ARM64_FP:
		*val = st->fp;
		return true;
	case SFU_ARM64_LR:
		*val = st->ra;
		return st->exact;
	}
	if (!st->regs || reg > SFU_ARM64_LR)
		return false;
	*val = st->regs->regs[reg];
	return true;
}

bool sfu_arch_sigframe(const struct sfu_ustate *st, unsigned long *ctx)
{
	u32 insn[2];

	if (sfu_copy(insn, st->pc, sizeof(insn), st->mode) ||
	    le32_to_cpu(insn[0]) != SFU_ARM64_MOV_X8 ||
	    le32_to_cpu(insn[1]) != SFU_ARM64_SVC0)
		return false;
	*ctx = st->sp + SFU_ARM64_SIGCONTEXT;
	return true;
}

bool sfu_arch_sigreturn(struct sfu_ustate *st, unsigned long sc)
{
	unsigned long pc, sp, fp, lr;

	if (sfu_uread(st, sc + offsetof(struct sigcontext, pc), &pc) ||
	    sfu_uread(st, sc + offsetof(struct sigcontext, sp), &sp) ||
	    sfu_uread(st, sc + offsetof(struct sigcontext,
					regs[SFU_ARM64_FP]), &fp) ||
	    sfu_uread(st, sc + offsetof(struct sigcontext,
					regs[SFU_ARM64_LR]), &lr))
		return sfu_stop(st, SFU_STOP_FAULT);
	sfu_ustate_restore(st, pc, sp, fp, lr);
	return true;
}

/* Frame records: [X29] is the caller's X29, [X29 + 8] the saved LR. */
bool sfu_arch_fallback(struct sfu_ustate *st)
{
	return sfu_frame_record_step(st, st->fp, SFU_ARM64_FRAME_RECORD);
}
