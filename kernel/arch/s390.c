// SPDX-License-Identifier: GPL-2.0
/*
 * s390x back end: SP is r15, FP r11 and the return address r14, which
 * holds it only in frame 0 (or a frame restored from a signal context).
 * The decoder already turns the ABI's CFA offset adjustment and the V2
 * register encoding into plain rules; caller SP = CFA - 160.  The back
 * chain (word 0 of a frame, with -mbackchain) is the fallback instead of
 * frame pointers (arch.h's SFU_ARCH_FP_FRAME), and the sigreturn
 * trampolines ("svc 173" for SA_SIGINFO handlers, "svc 119" for the
 * others) say where the signal frame saved the registers.
 */
#include <linux/compat.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/stddef.h>
#include <asm/sigcontext.h>
#include <asm/ucontext.h>
#include <asm/unistd.h>

#include "arch.h"

#define SFU_S390_NR_GPRS	16
/* svc __NR_rt_sigreturn, svc __NR_sigreturn */
#define SFU_S390_SVC_RT		(0x0a00 | __NR_rt_sigreturn)
#define SFU_S390_SVC		(0x0a00 | __NR_sigreturn)
/*
 * The frame the kernel builds: struct rt_sigframe { u8 callee_used_stack
 * [STACK_FRAME_OVERHEAD]; u16 svc_insn; siginfo info; ucontext uc; }.
 */
#define SFU_S390_SIGINFO	ALIGN(STACK_FRAME_OVERHEAD + sizeof(u16), \
				      sizeof(unsigned long))
#define SFU_S390_SIGREGS_RT	(SFU_S390_SIGINFO + sizeof(struct siginfo) + \
				 offsetof(struct ucontext, uc_mcontext))
/*
 * Handlers without SA_SIGINFO get struct sigframe { u8 callee_used_stack
 * [STACK_FRAME_OVERHEAD]; struct sigcontext sc; _sigregs sregs; ... }.
 */
#define SFU_S390_SIGREGS	(STACK_FRAME_OVERHEAD + sizeof(struct sigcontext))

bool sfu_arch_user_regs_ok(struct pt_regs *regs)
{
	return !is_compat_task();
}

void sfu_arch_start(struct sfu_ustate *st, struct pt_regs *regs)
{
	st->pc = regs->psw.addr;
	st->sp = regs->gprs[SFU_ARCH_SP_REG];
	st->fp = regs->gprs[SFU_ARCH_FP_REG];
	st->ra = regs->gprs[SFU_ARCH_RA_REG];
	st->exact = true;
	st->sp_bound = false;
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
	if (!st->regs || reg >= SFU_S390_NR_GPRS)
		return false;
	*val = st->regs->gprs[reg];
	return true;
}

bool sfu_arch_sigframe(const struct sfu_ustate *st, struct sfu_sigregs *sr)
{
	unsigned long regs;
	u16 insn;

	if (sfu_copy(&insn, st->pc, sizeof(insn), st->mode))
		return false;
	if (insn == SFU_S390_SVC_RT)
		regs = st->sp + SFU_S390_SIGREGS_RT;
	else if (insn == SFU_S390_SVC)
		regs = st->sp + SFU_S390_SIGREGS;
	else
		return false;
	sr->pc = regs + offsetof(_sigregs, regs.psw.addr);
	sr->sp = regs + offsetof(_sigregs, regs.gprs[SFU_ARCH_SP_REG]);
	sr->fp = regs + offsetof(_sigregs, regs.gprs[SFU_ARCH_FP_REG]);
	sr->ra = regs + offsetof(_sigregs, regs.gprs[SFU_ARCH_RA_REG]);
	return true;
}

/* No code without CFI here that the walker knows by its bytes. */
bool sfu_arch_stub_frame(const struct sfu_ustate *st, struct sfu_stub *stub)
{
	return false;
}
