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
#include <linux/uaccess.h>
#ifdef CONFIG_ARM64
#include <asm/pointer_auth.h>
#endif

#include <sframe/env.h>
#include <sframe/unwind_user.h>

struct pt_regs;

/*
 * DWARF numbers of the stack and frame pointers, which nearly every rule
 * names: the walker reads them from the frame without a call into the
 * back end (sfu_arch_reg() answers the same).
 */
#if defined(CONFIG_X86_64)
#define SFU_ARCH_SP_REG		7
#define SFU_ARCH_FP_REG		6
#elif defined(CONFIG_ARM64)
#define SFU_ARCH_SP_REG		31
#define SFU_ARCH_FP_REG		29
#elif defined(CONFIG_S390)
#define SFU_ARCH_SP_REG		15
#define SFU_ARCH_FP_REG		11
#endif

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
	struct pt_regs *regs;
	enum sfu_mem mode;
	u32 budget;
	u8 stop;
};

/* End the walk at @st for @why; returns false, as a failed step does. */
static inline bool sfu_stop(struct sfu_ustate *st, enum sfu_stop why)
{
	st->stop = why;
	return false;
}

/*
 * Read the word at @a into @va and, if @both, the word at @b into @vb, in
 * one user-access window (a frame's saved RA and FP): inline loads, where
 * __get_user() and a copy are calls (a return thunk each on kernels built
 * against return-stack attacks).  Only inside a non-faulting walk's
 * page-fault-free scope (env.h, sfu_nofault_ok()).  Return: true if the
 * reads worked.
 */
static __always_inline bool sfu_uread_pair_nofault(unsigned long a,
						   unsigned long *va,
						   bool both, unsigned long b,
						   unsigned long *vb)
{
	unsigned long __user *pa = (unsigned long __user *)a;
	unsigned long __user *pb = (unsigned long __user *)b;

	if (both && !access_ok(pb, sizeof(*pb)))
		return false;
	if (!user_access_begin(pa, sizeof(*pa)))
		return false;
	unsafe_get_user(*va, pa, fault_end_access);
	if (both)
		unsafe_get_user(*vb, pb, fault_end_access);
	user_access_end();
	return true;
fault_end_access:
	user_access_end();
	return false;
}

/*
 * Read one word of user memory in @st's mode; without faults only inside
 * the walk's page-fault-free scope.
 */
static __always_inline int sfu_uread(const struct sfu_ustate *st,
				     unsigned long addr, unsigned long *val)
{
	if (st->mode == SFU_MEM_USER)
		return get_user(*val, (unsigned long __user *)addr);
	if (unlikely(!pagefault_disabled()) ||
	    !sfu_uread_pair_nofault(addr, val, false, 0, NULL))
		return -EFAULT;
	return 0;
}

bool sfu_frame_record_step(struct sfu_ustate *st, unsigned long fp,
			   unsigned long record);
void sfu_ustate_restore(struct sfu_ustate *st, unsigned long pc,
			unsigned long sp, unsigned long fp, unsigned long ra);

bool sfu_arch_user_regs_ok(struct pt_regs *regs);
void sfu_arch_start(struct sfu_ustate *st, struct pt_regs *regs);
bool sfu_arch_reg(const struct sfu_ustate *st, u16 dwarf_reg,
		  unsigned long *val);
/*
 * A return address as the code it returns to: arm64 strips a pointer
 * authentication code whenever the bits could hold one (unsigned return
 * addresses have none there); elsewhere they are stored as they are.
 */
static inline unsigned long sfu_arch_strip_ra(unsigned long ra, bool mangled)
{
#ifdef CONFIG_ARM64
	return ra & ~ptrauth_user_pac_mask();
#else
	return ra;
#endif
}

bool sfu_arch_sigframe(const struct sfu_ustate *st, unsigned long *ctx);
bool sfu_arch_sigreturn(struct sfu_ustate *st, unsigned long ctx);
bool sfu_arch_fallback(struct sfu_ustate *st);

#endif /* _SFU_ARCH_H */
