// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 back end: SP, X29 and PC from pt_regs; the link register X30 holds
 * the return address only in frame 0 (or a frame restored from a signal
 * context), deeper frames have theirs on the stack.  Return addresses
 * marked mangled are stripped of their pointer-authentication code with
 * the task's address size.  Frame records (X29 chain, arch.h's
 * SFU_ARCH_FP_FRAME) are the fallback; at the vDSO's __kernel_rt_sigreturn
 * the interrupted registers are found in its ucontext.
 */
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/stddef.h>
#include <asm/ucontext.h>
#include <asm/unistd.h>

#include "arch.h"

/* mov x8, #__NR_rt_sigreturn; svc #0 */
#define SFU_ARM64_MOV_X8	(0xd2800008U | (__NR_rt_sigreturn << 5))
#define SFU_ARM64_SVC0		0xd4000001U
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
	st->fp = regs->regs[SFU_ARCH_FP_REG];
	st->ra = regs->regs[SFU_ARCH_RA_REG];
	st->exact = true;
	st->regs = regs;
}

bool sfu_arch_reg(const struct sfu_ustate *st, u16 reg, unsigned long *val)
{
	switch (reg) {
	case SFU_ARCH_SP_REG:
		*val = st->sp;
		return true;
	case SFU_ARCH_FP_REG:
		*val = st->fp;
		return true;
	case SFU_ARCH_RA_REG:
		*val = st->ra;
		return st->exact;
	}
	if (!st->regs || reg > SFU_ARCH_RA_REG)
		return false;
	*val = st->regs->regs[reg];
	return true;
}

bool sfu_arch_sigframe(const struct sfu_ustate *st, struct sfu_sigregs *sr)
{
	unsigned long sc = st->sp + SFU_ARM64_SIGCONTEXT;
	u32 insn[2];

	if (sfu_copy(insn, st->pc, sizeof(insn), st->mode) ||
	    le32_to_cpu(insn[0]) != SFU_ARM64_MOV_X8 ||
	    le32_to_cpu(insn[1]) != SFU_ARM64_SVC0)
		return false;
	sr->pc = sc + offsetof(struct sigcontext, pc);
	sr->sp = sc + offsetof(struct sigcontext, sp);
	sr->fp = sc + offsetof(struct sigcontext, regs[SFU_ARCH_FP_REG]);
	sr->ra = sc + offsetof(struct sigcontext, regs[SFU_ARCH_RA_REG]);
	return true;
}

/* No code without CFI here that the walker knows by its bytes. */
unsigned int sfu_arch_stub_frame(const struct sfu_ustate *st)
{
	return 0;
}
