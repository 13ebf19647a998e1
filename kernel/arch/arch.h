/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between the walker (kernel/unwind.c) and the back end of
 * each architecture (kernel/arch/<arch>.c).  The back end supplies data,
 * the walker applies it, as the kernel's own user unwinder has it: where
 * a frame's registers are, how a return address is stripped, where a
 * signal frame keeps the interrupted registers, and how frames are linked
 * without SFrame.  A back end reads no stack and steps no frame.
 */
#ifndef _SFU_ARCH_H
#define _SFU_ARCH_H

#include <linux/types.h>
#ifdef CONFIG_ARM64
#include <asm/pointer_auth.h>
#endif

#include <sframe/env.h>
#include <sframe/format.h>
#include <sframe/frame.h>

#include "unwind.h"

struct pt_regs;

/*
 * DWARF numbers of the stack and frame pointers, which nearly every rule
 * names: the walker reads them from the frame without a call into the
 * back end (sfu_arch_reg() answers the same).  The numbers are the ABI's,
 * as the format header has them for the decoder's default rules.
 */
#if defined(CONFIG_X86_64)
#define SFU_ARCH_SP_REG		SFRAME_AMD64_DWARF_SP
#define SFU_ARCH_FP_REG		SFRAME_AMD64_DWARF_FP
#elif defined(CONFIG_ARM64)
#define SFU_ARCH_SP_REG		SFRAME_AARCH64_DWARF_SP
#define SFU_ARCH_FP_REG		SFRAME_AARCH64_DWARF_FP
#define SFU_ARCH_RA_REG		SFRAME_AARCH64_DWARF_LR
#elif defined(CONFIG_S390)
#define SFU_ARCH_SP_REG		SFRAME_S390X_DWARF_SP
#define SFU_ARCH_FP_REG		SFRAME_S390X_DWARF_FP
#define SFU_ARCH_RA_REG		SFRAME_S390X_DWARF_RA
#endif

/*
 * How frames are linked without SFrame, the walker's fallback.  x86-64
 * and arm64: a frame record at FP, the caller's FP then the return
 * address, the caller's SP just above it.  s390x (-mbackchain): word 0
 * of a frame is the caller's SP, whose register save area holds r14,
 * the return address, at @ra_slot; FP is left as it is.
 */
struct sfu_fp_frame {
	bool back_chain;
	u8 record;		/* frame record bytes */
	u8 ra_slot;		/* back chain: where r14 is saved */
};

#if defined(CONFIG_S390)
#define SFU_ARCH_FP_FRAME	{ .back_chain = true, \
				  .ra_slot = SFU_ARCH_RA_REG * sizeof(unsigned long) }
#else
#define SFU_ARCH_FP_FRAME	{ .record = 2 * sizeof(unsigned long) }
#endif

/*
 * Whether a frame record may sit anywhere in its frame (arm64: GCC puts
 * it at the bottom of a frame with locals), so that the SP a record gives
 * the caller is only a bound (struct sfu_ustate.sp_bound); on x86-64 the
 * record is pushed first and the SP it gives is the caller's.  A
 * constant, so that no other architecture's walk keeps the flag.
 */
#ifdef CONFIG_ARM64
#define SFU_ARCH_RECORD_ANYWHERE	true
#else
#define SFU_ARCH_RECORD_ANYWHERE	false
#endif

/*
 * Whether a page the task has mapped can still fault a read.  fork()
 * makes every page table entry of the child old; s390 keeps a page's
 * referenced bit in software and makes an old entry invalid to the
 * hardware, and arm64 CPUs without hardware access-flag updates take a
 * fault to set it.  A child's reads of its own stack then fault until it
 * has touched each page (on s390 none works either between switch_mm()
 * and the load of the user address space at the end of a context
 * switch).  A walk that may not take the fault reads the word through
 * its page instead (sfu_read_by_page()).  On x86-64 a read that faults
 * finds no page.
 */
#if defined(CONFIG_S390) || defined(CONFIG_ARM64)
#define SFU_ARCH_READ_BY_PAGE	true
#else
#define SFU_ARCH_READ_BY_PAGE	false
#endif

/*
 * Where a signal frame keeps the registers it interrupted: their slots'
 * user addresses; @ra is 0 where no return-address register is saved
 * (x86-64).
 */
struct sfu_sigregs {
	unsigned long pc;
	unsigned long sp;
	unsigned long fp;
	unsigned long ra;
};

bool sfu_arch_user_regs_ok(struct pt_regs *regs);
void sfu_arch_start(struct sfu_ustate *st, struct pt_regs *regs);
bool sfu_arch_reg(const struct sfu_ustate *st, u16 dwarf_reg,
		  unsigned long *val);
/*
 * A return address as the code it returns to: arm64 strips a pointer
 * authentication code whenever the bits could hold one (unsigned return
 * addresses have none there); elsewhere they are stored as they are.
 */
static __always_inline unsigned long sfu_arch_strip_ra(unsigned long ra,
						       bool mangled)
{
#ifdef CONFIG_ARM64
	return ra & ~ptrauth_user_pac_mask();
#else
	return ra;
#endif
}

bool sfu_arch_sigframe(const struct sfu_ustate *st, struct sfu_sigregs *sr);

/*
 * A frame of code without CFI that the back end knows by its bytes
 * (sfu_arch_stub_frame()): its CFA is @cfa_off above SP, FP is kept, and
 * the return address is just below the CFA, or, if @ra_in_reg, still in
 * its register (frame 0 only: before the code saved it, or after it
 * restored it).
 */
struct sfu_stub {
	unsigned int cfa_off;
	bool ra_in_reg;
};

bool sfu_arch_stub_frame(const struct sfu_ustate *st, struct sfu_stub *stub);

#endif /* _SFU_ARCH_H */
