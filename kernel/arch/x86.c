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

/*
 * The edges of a frame record in code without CFI (a JIT's, V8's say),
 * where the record does not yet, or no longer, link the frame: the push
 * of RBP that opens it, the move of RSP into RBP right after that push,
 * and a return (RBP popped).  Each with its CFA's offset from SP; the
 * return address is just below the CFA and RBP is the caller's.
 */
#define SFU_X86_PUSH_RBP	0x55
#define SFU_X86_RET		0xc3
#define SFU_X86_RET_IMM16	0xc2
static const u8 sfu_x86_mov_rsp_rbp[] = { 0x48, 0x89, 0xe5 };
#define SFU_X86_EDGE_CFA	8	/* at the push, at a return */
#define SFU_X86_EDGE_CFA_PUSHED	16	/* at the move after the push */

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
	st->sp_bound = false;
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

/* CPython's perf trampoline around the PC, into @stub. */
static bool sfu_x86_py_tramp_frame(const struct sfu_ustate *st, u8 first,
				   struct sfu_stub *stub)
{
	u8 code[sizeof(sfu_x86_py_tramp)];
	unsigned long start;
	unsigned int i, at;

	for (i = 0; i < ARRAY_SIZE(sfu_x86_py_tramp_cfa); i++) {
		at = sfu_x86_py_tramp_cfa[i].at;
		start = st->pc - at;
		if (first != sfu_x86_py_tramp[at] || st->pc < at ||
		    sfu_copy(code, start, sizeof(code), st->mode) ||
		    memcmp(code, sfu_x86_py_tramp, sizeof(code)))
			continue;
		stub->cfa_off = sfu_x86_py_tramp_cfa[i].cfa;
		return true;
	}
	return false;
}

/*
 * Frame 0 at an edge of its frame record, into @stub.  Only where the
 * PC is where the frame stopped: a return address is past a call, inside
 * the record's life.
 */
static bool sfu_x86_record_edge(const struct sfu_ustate *st, u8 first,
				struct sfu_stub *stub)
{
	u8 code[1 + sizeof(sfu_x86_mov_rsp_rbp)];

	if (!st->exact)
		return false;
	if (first == SFU_X86_PUSH_RBP || first == SFU_X86_RET ||
	    first == SFU_X86_RET_IMM16) {
		stub->cfa_off = SFU_X86_EDGE_CFA;
		return true;
	}
	if (first != sfu_x86_mov_rsp_rbp[0] ||
	    sfu_copy(code, st->pc - 1, sizeof(code), st->mode) ||
	    code[0] != SFU_X86_PUSH_RBP ||
	    memcmp(code + 1, sfu_x86_mov_rsp_rbp, sizeof(sfu_x86_mov_rsp_rbp)))
		return false;
	stub->cfa_off = SFU_X86_EDGE_CFA_PUSHED;
	return true;
}

/*
 * A frame of code without CFI that the walker knows by its bytes, into
 * @stub: CPython's perf trampoline, whole around the PC, at any of its
 * instructions (its return point in frames past the first); or, in frame
 * 0, a frame record's edges.  The first byte at the PC picks the
 * instructions it may be; the return address is on the stack at every
 * one of them.  Elsewhere such code steps by its frame record
 * (sfu_fallback()).
 */
bool sfu_arch_stub_frame(const struct sfu_ustate *st, struct sfu_stub *stub)
{
	u8 first;

	if (sfu_copy(&first, st->pc, sizeof(first), st->mode))
		return false;
	stub->ra_in_reg = false;
	return sfu_x86_py_tramp_frame(st, first, stub) ||
	       sfu_x86_record_edge(st, first, stub);
}
