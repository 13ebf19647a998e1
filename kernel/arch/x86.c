// SPDX-License-Identifier: GPL-2.0
/*
 * x86-64 back end: RSP, RBP and RIP from pt_regs, the return address at a
 * fixed CFA-8 (the rule says so), DRAP rules through any register of frame
 * 0, and where the rt_sigreturn trampoline (__restore_rt: "mov $15,
 * %rax; syscall") finds the interrupted registers in its ucontext.  The
 * fallback, frame records at RBP, is arch.h's SFU_ARCH_FP_FRAME.
 */
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/stddef.h>
#include <asm/sigframe.h>
#include <asm/unistd.h>

#include "arch.h"

/* DWARF register numbers of the x86-64 psABI. */
enum {
	SFU_X86_RAX, SFU_X86_RDX, SFU_X86_RCX, SFU_X86_RBX,
	SFU_X86_RSI, SFU_X86_RDI, SFU_X86_RBP = SFU_ARCH_FP_REG,
	SFU_X86_RSP = SFU_ARCH_SP_REG,
	SFU_X86_R8, SFU_X86_R9, SFU_X86_R10, SFU_X86_R11,
	SFU_X86_R12, SFU_X86_R13, SFU_X86_R14, SFU_X86_R15,
	SFU_X86_RIP,
};

/* mov $__NR_rt_sigreturn, %rax; syscall */
static const u8 sfu_x86_sigreturn[] = {
	0x48, 0xc7, 0xc0, __NR_rt_sigreturn, 0x00, 0x00, 0x00, 0x0f, 0x05,
};

/*
 * CPython 3.12 and 3.13's perf trampoline (Python/asm_trampoline.S, run
 * by -X perf from copies in anonymous executable memory): it keeps no
 * frame pointer and has no CFI, but its whole code is these bytes, so a
 * PC in it says exactly where its frame is (endbr64 is there in builds
 * with CET, and required here).
 */
static const u8 sfu_x86_py_tramp[] = {
	0xf3, 0x0f, 0x1e, 0xfa,		/* endbr64 */
	0x48, 0x83, 0xec, 0x08,		/* sub $8, %rsp */
	0xff, 0xd1,			/* call *%rcx */
	0x48, 0x83, 0xc4, 0x08,		/* add $8, %rsp: the return point */
	0xc3,				/* ret */
};

/* Each instruction's offset in it, and there its CFA's offset from SP. */
static const struct {
	u8 at;
	u8 cfa;
} sfu_x86_py_tramp_cfa[] = {
	{ 0, 8 }, { 4, 8 }, { 8, 16 }, { 10, 16 }, { 14, 8 },
};

bool sfu_arch_user_regs_ok(struct pt_regs *regs)
{
	return user_64bit_mode(regs);
}

void sfu_arch_start(struct sfu_ustate *st, struct pt_regs *regs)
{
	st->pc = regs->ip;
	st->sp = regs->sp;
	st->fp = regs->bp;
	st->ra = 0;
	st->exact = true;
	st->regs = regs;
}

static unsigned long sfu_x86_pt_reg(struct pt_regs *regs, u16 reg)
{
	switch (reg) {
	case SFU_X86_RAX: return regs->ax;
	case SFU_X86_RDX: return regs->dx;
	case SFU_X86_RCX: return regs->cx;
	case SFU_X86_RBX: return regs->bx;
	case SFU_X86_RSI: return regs->si;
	case SFU_X86_RDI: return regs->di;
	case SFU_X86_R8: return regs->r8;
	case SFU_X86_R9: return regs->r9;
	case SFU_X86_R10: return regs->r10;
	case SFU_X86_R11: return regs->r11;
	case SFU_X86_R12: return regs->r12;
	case SFU_X86_R13: return regs->r13;
	case SFU_X86_R14: return regs->r14;
	default: return regs->r15;
	}
}

bool sfu_arch_reg(const struct sfu_ustate *st, u16 reg, unsigned long *val)
{
	switch (reg) {
	case SFU_X86_RSP:
		*val = st->sp;
		return true;
	case SFU_X86_RBP:
		*val = st->fp;
		return true;
	case SFU_X86_RIP:
		*val = st->pc;
		return true;
	}
	if (!st->regs || reg > SFU_X86_R15)
		return false;
	*val = sfu_x86_pt_reg(st->regs, reg);
	return true;
}

/*
 * At __restore_rt the handler has returned: RSP points at the ucontext of
 * the struct rt_sigframe the kernel built (its pretcode was popped).
 */
bool sfu_arch_sigframe(const struct sfu_ustate *st, struct sfu_sigregs *sr)
{
	u8 insn[sizeof(sfu_x86_sigreturn)];
	unsigned long sc;

	if (sfu_copy(insn, st->pc, sizeof(insn), st->mode) ||
	    memcmp(insn, sfu_x86_sigreturn, sizeof(insn)))
		return false;
	sc = st->sp + offsetof(struct ucontext, uc_mcontext);
	sr->pc = sc + offsetof(struct sigcontext, ip);
	sr->sp = sc + offsetof(struct sigcontext, sp);
	sr->fp = sc + offsetof(struct sigcontext, bp);
	sr->ra = 0;
	return true;
}

/*
 * A frame of code without CFI that the walker knows by its bytes, into
 * @stub: CPython's perf trampoline, whole around the PC, at any of its
 * instructions (its return point in frames past the first).  The first
 * byte at the PC picks the instructions it may be; the return address is
 * on the stack at every one of them.
 */
bool sfu_arch_stub_frame(const struct sfu_ustate *st, struct sfu_stub *stub)
{
	u8 code[sizeof(sfu_x86_py_tramp)], first;
	unsigned long start;
	unsigned int i, at;

	if (sfu_copy(&first, st->pc, sizeof(first), st->mode))
		return false;
	for (i = 0; i < ARRAY_SIZE(sfu_x86_py_tramp_cfa); i++) {
		at = sfu_x86_py_tramp_cfa[i].at;
		start = st->pc - at;
		if (first != sfu_x86_py_tramp[at] || st->pc < at ||
		    sfu_copy(code, start, sizeof(code), st->mode) ||
		    memcmp(code, sfu_x86_py_tramp, sizeof(code)))
			continue;
		stub->cfa_off = sfu_x86_py_tramp_cfa[i].cfa;
		stub->ra_in_reg = false;
		return true;
	}
	return false;
}
