// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 back end: SP, X29 and PC from pt_regs; the link register X30 holds
 * the return address only in frame 0 (or a frame restored from a signal
 * context), deeper frames have theirs on the stack.  Return addresses
 * marked mangled are stripped of their pointer-authentication code with
 * the task's address size.  Frame records (X29 chain, arch.h's
 * SFU_ARCH_FP_FRAME) are the fallback; at the vDSO's __kernel_rt_sigreturn
 * the interrupted registers are found in its ucontext, and CPython's perf
 * trampoline is known by its code where its frame record is not its own.
 */
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/stddef.h>
#include <asm/ucontext.h>
#include <asm/unistd.h>

#include "arch.h"

/* mov x8, #__NR_rt_sigreturn; svc #0 */
#define SFU_ARM64_MOV_X8	(0xd2800008U | (__NR_rt_sigreturn << 5))
#define SFU_ARM64_SVC0		0xd4000001U
/*
 * CPython's perf trampoline (Python/asm_trampoline.S), copied into
 * anonymous memory per code object, without CFI.
 */
static const u32 sfu_arm64_py_tramp[] = {
	0xa9bf7bfdU,	/* stp x29, x30, [sp, #-16]! */
	0x910003fdU,	/* mov x29, sp */
	0xd63f0060U,	/* blr x3 */
	0xa8c17bfdU,	/* ldp x29, x30, [sp], #16 */
	0xd65f03c0U,	/* ret */
};

/*
 * The instructions (by index) where its frame is not its X29 record: the
 * CFA's offset from SP there, and whether the RA is still in X30.
 */
static const struct {
	u8 at;
	u8 cfa;
	bool ra_in_reg;
} sfu_arm64_py_tramp_at[] = {
	{ 0, 0, true }, { 1, 16, false }, { 4, 0, true },
};

/*
 * The edges of a frame record in code without CFI (a JIT's, V8's say),
 * where X29 is not yet, or no longer, the frame's record: the stp that
 * pushes it (the return address still in X30, SP the caller's), the mov
 * into X29 right after it (the record at SP, X29 still the caller's) and
 * the ret (the record popped).  The same as the trampoline's first,
 * second and last instructions.
 */
#define SFU_ARM64_STP_RECORD	0xa9bf7bfdU	/* stp x29, x30, [sp, #-16]! */
#define SFU_ARM64_MOV_X29_SP	0x910003fdU	/* mov x29, sp */
#define SFU_ARM64_RET		0xd65f03c0U	/* ret */
#define SFU_ARM64_RECORD	16

/* Are the words @code CPython's perf trampoline? */
static bool sfu_arm64_is_py_tramp(const __le32 *code)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sfu_arm64_py_tramp); i++)
		if (le32_to_cpu(code[i]) != sfu_arm64_py_tramp[i])
			return false;
	return true;
}

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

/* CPython's perf trampoline around the PC, into @stub. */
static bool sfu_arm64_py_tramp_frame(const struct sfu_ustate *st, u32 insn,
				     struct sfu_stub *stub)
{
	__le32 code[ARRAY_SIZE(sfu_arm64_py_tramp)];
	unsigned int i, at;

	for (i = 0; i < ARRAY_SIZE(sfu_arm64_py_tramp_at); i++) {
		at = sfu_arm64_py_tramp_at[i].at;
		if (insn != sfu_arm64_py_tramp[at] ||
		    st->pc < at * sizeof(insn) ||
		    sfu_copy(code, st->pc - at * sizeof(insn), sizeof(code),
			     st->mode) ||
		    !sfu_arm64_is_py_tramp(code))
			continue;
		stub->cfa_off = sfu_arm64_py_tramp_at[i].cfa;
		stub->ra_in_reg = sfu_arm64_py_tramp_at[i].ra_in_reg;
		return true;
	}
	return false;
}

/*
 * Frame 0 at an edge of its frame record, into @stub.  Only where the
 * PC is where the frame stopped: a return address is past a call, inside
 * the record's life.
 */
static bool sfu_arm64_record_edge(const struct sfu_ustate *st, u32 insn,
				  struct sfu_stub *stub)
{
	__le32 prev;

	if (!st->exact)
		return false;
	if (insn == SFU_ARM64_STP_RECORD || insn == SFU_ARM64_RET) {
		stub->cfa_off = 0;
		stub->ra_in_reg = true;
		return true;
	}
	if (insn != SFU_ARM64_MOV_X29_SP || st->pc < sizeof(prev) ||
	    sfu_copy(&prev, st->pc - sizeof(prev), sizeof(prev), st->mode) ||
	    le32_to_cpu(prev) != SFU_ARM64_STP_RECORD)
		return false;
	stub->cfa_off = SFU_ARM64_RECORD;
	stub->ra_in_reg = false;
	return true;
}

/*
 * A frame of code without CFI that the walker knows by its bytes, into
 * @stub: CPython's perf trampoline where its frame record is not the
 * frame's.  Before its stp and at its ret, the return address is in X30
 * and SP is the caller's; between its stp and its mov, the record is
 * pushed but X29 is still the caller's.  Everywhere else X29 is its own
 * record, which the fallback steps (the caller's SP just above it): the
 * frame-record fallback at the first or the last instruction would take
 * the caller's record for the trampoline's, skip the caller and give the
 * next frame an SP 16 bytes above the caller's frame record, not above
 * the caller's frame.  The same edges of any frame record in frame 0
 * (sfu_arm64_record_edge()).  The instruction at the PC picks which it
 * may be.
 */
bool sfu_arch_stub_frame(const struct sfu_ustate *st, struct sfu_stub *stub)
{
	__le32 insn;

	if (sfu_copy(&insn, st->pc, sizeof(insn), st->mode))
		return false;
	return sfu_arm64_py_tramp_frame(st, le32_to_cpu(insn), stub) ||
	       sfu_arm64_record_edge(st, le32_to_cpu(insn), stub);
}
