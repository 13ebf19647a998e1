/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The step of a user stack walk: from a frame to its caller, by the
 * frame's SFrame rule or by its frame record.  The module's walker
 * (kernel/unwind.c) and the host's replays of it (bench/copy-step.h)
 * compile this one copy, each with its own way of reading the stack.
 *
 * A template, not a library: the includer defines, before including it,
 *
 *   sfu_read_pair(st, a, ra, b, rb, win)
 *	replace *a by the word at address *a if ra, and *b by the word at
 *	*b if rb; true, or false with st->stop set; with win, inside the
 *	walk's user-access window: always inline, no call and no fault
 *	(it stops with SFU_STOP_OUTSIDE instead)
 *   sfu_arch_reg(st, reg, val)
 *	the value of DWARF register reg in the frame (st is const), other
 *	than SP and FP; called only outside the window
 *   sfu_arch_strip_ra(ra, mangled)
 *	a return address as the code it returns to; always inline
 *   SFU_ARCH_SP_REG, SFU_ARCH_FP_REG, SFU_ARCH_RECORD_ANYWHERE,
 *   TASK_SIZE_MAX
 *	the architecture's stack and frame pointers' DWARF numbers, whether
 *	a frame record may sit anywhere in its frame, and the end of user
 *	addresses
 *
 * so that the reads inline into the step: a walk in the kernel's
 * user-access window makes no call.  The rest (IS_ALIGNED(), likely(),
 * __always_inline) comes from <sframe/env.h>.  Every function returns true when it
 * moved @st to the caller's frame (or did its part of that), or false
 * with the reason the walk stops in @st->stop; @st changes only if the
 * step is taken.
 */
#ifndef _SFRAME_STEP_H
#define _SFRAME_STEP_H

#include <sframe/decode.h>
#include <sframe/frame.h>

#if !defined(SFU_ARCH_SP_REG) || !defined(SFU_ARCH_FP_REG) || \
	!defined(SFU_ARCH_RECORD_ANYWHERE) || !defined(TASK_SIZE_MAX)
#error "<sframe/step.h> needs the walker's primitives defined first"
#endif

/* The address whose rule steps the frame: in the call, for a caller. */
static __always_inline unsigned long sfu_frame_pc(const struct sfu_ustate *st)
{
	return st->exact ? st->pc : st->pc - 1;
}

/* Read the word at user address @addr into @val. */
static __always_inline bool sfu_read_word(struct sfu_ustate *st,
					  unsigned long addr,
					  unsigned long *val, bool win)
{
	*val = addr;
	return sfu_read_pair(st, val, true, val, false, win);
}

/*
 * Move @st to its caller at @ra, with @sp and @fp, if @ra can be code.
 * The bound is TASK_SIZE_MAX, a constant, where TASK_SIZE reads the task's
 * flags each frame: the two differ only for a task with a smaller address
 * space (x32), whose return address above its own bound then finds no
 * region.
 */
static __always_inline bool sfu_step_to(struct sfu_ustate *st,
					unsigned long ra, unsigned long sp,
					unsigned long fp)
{
	if (!ra || ra >= TASK_SIZE_MAX)
		return sfu_stop(st, SFU_STOP_RA);
	st->pc = ra;
	st->sp = sp;
	st->fp = fp;
	st->exact = false;
	if (SFU_ARCH_RECORD_ANYWHERE)
		st->sp_bound = false;
	st->regs = NULL;
	return true;
}

/*
 * Step through the frame record at FP, @record bytes: the caller's frame
 * pointer, then the return address; the caller's SP is just above it.
 */
static inline bool sfu_frame_record_step(struct sfu_ustate *st,
					 unsigned long record)
{
	unsigned long fp = st->fp;
	unsigned long next_fp, ra;

	if (!fp || fp < st->sp || !IS_ALIGNED(fp, sizeof(long)))
		return sfu_stop(st, SFU_STOP_NO_RULE);
	next_fp = fp;
	ra = fp + sizeof(long);
	if (!sfu_read_pair(st, &next_fp, true, &ra, true, false) ||
	    !sfu_step_to(st, sfu_arch_strip_ra(ra, true), fp + record,
			 next_fp))
		return false;
	st->sp_bound = SFU_ARCH_RECORD_ANYWHERE;
	return true;
}

/*
 * The value of register @reg in the frame, into @val: the back end is
 * asked (a call) only outside the window.
 */
static __always_inline bool sfu_reg_value(struct sfu_ustate *st, u16 reg,
					  unsigned long *val, bool win)
{
	if (reg == SFU_ARCH_SP_REG)
		*val = st->sp;
	else if (reg == SFU_ARCH_FP_REG)
		*val = st->fp;
	else if (win)
		return sfu_stop(st, SFU_STOP_OUTSIDE);
	else if (!sfu_arch_reg(st, reg, val))
		return sfu_stop(st, SFU_STOP_REGISTER);
	return true;
}

/*
 * What location @l holds, given the frame's CFA: *@val is left as it is
 * for a register the frame kept (SAME, NONE); else it becomes the
 * location's address, and *@read says whether the value is the word
 * there (sfu_read_pair() fetches it) or the address itself.
 */
static __always_inline bool sfu_loc_eval(struct sfu_ustate *st,
					 const struct sfu_loc *l,
					 unsigned long cfa, unsigned long *val,
					 bool *read, bool win)
{
	unsigned long base;

	/* Saved at the CFA plus an offset: most rules, tested first. */
	*read = l->deref;
	if (likely(l->kind == SFU_LOC_CFA)) {
		*val = cfa + l->off;
		return true;
	}
	*read = false;
	switch (l->kind) {
	case SFU_LOC_SAME:
	case SFU_LOC_NONE:
		return true;
	case SFU_LOC_REG:
		if (!sfu_reg_value(st, l->reg, &base, win))
			return false;
		break;
	default:
		return sfu_stop(st, SFU_STOP_NO_RULE);
	}
	*val = base + l->off;
	*read = l->deref;
	return true;
}

/*
 * The CFA of a frame reached by a frame record that may sit anywhere in
 * its frame (@st->sp_bound: the SP is only a bound), into @cfa.  If its
 * rule bases the CFA on the SP and saves FP and RA as a record (FP at
 * the CFA plus an offset, RA just above), the frame's own record is at
 * its FP, as AAPCS64 asks of every frame past its prologue (a return
 * address is): the CFA is the FP less that offset.  False if that does
 * not hold; the SP's rule applies then.
 */
static __always_inline bool sfu_cfa_by_record(const struct sfu_ustate *st,
					      const struct sfu_rule *rule,
					      unsigned long *cfa)
{
	if (!SFU_ARCH_RECORD_ANYWHERE || likely(!st->sp_bound) ||
	    rule->cfa.reg != SFU_ARCH_SP_REG || rule->cfa.deref ||
	    rule->fp.kind != SFU_LOC_CFA || !rule->fp.deref ||
	    rule->ra.kind != SFU_LOC_CFA || !rule->ra.deref ||
	    rule->ra.off != rule->fp.off + (s32)sizeof(long) ||
	    rule->fp.off >= 0 || st->fp < st->sp ||
	    !IS_ALIGNED(st->fp, sizeof(long)))
		return false;
	*cfa = st->fp - rule->fp.off;
	return true;
}

/* The frame's CFA by @rule, into @cfa: a register plus an offset, or the word there. */
static __always_inline bool sfu_rule_cfa(struct sfu_ustate *st,
					 const struct sfu_rule *rule,
					 unsigned long *cfa, bool win)
{
	if (unlikely(rule->cfa.kind != SFU_LOC_REG))
		return sfu_stop(st, SFU_STOP_NO_RULE);
	if (!sfu_reg_value(st, rule->cfa.reg, cfa, win))
		return false;
	*cfa += rule->cfa.off;
	if (unlikely(rule->cfa.deref) && !sfu_read_word(st, *cfa, cfa, win))
		return false;
	if (!IS_ALIGNED(*cfa, sizeof(long)))
		return sfu_stop(st, SFU_STOP_CFA);
	return true;
}

/*
 * Step @st to its caller by @rule: the CFA, then the caller's RA and FP,
 * both saved words read in one go, then the checks that the caller is
 * plausible.  In the window if @win.  @st changes only if the step is
 * taken.
 */
static __always_inline bool sfu_apply_rule(struct sfu_ustate *st,
					   const struct sfu_rule *rule,
					   bool win)
{
	unsigned long cfa, ra = st->ra, fp = st->fp, sp;
	bool read_ra, read_fp;

	if (unlikely(rule->flags & (SFU_RULE_OUTERMOST |
				    SFU_RULE_TOPMOST_ONLY))) {
		if (rule->flags & SFU_RULE_OUTERMOST)
			return sfu_stop(st, SFU_STOP_OUTERMOST);
		if (!st->exact)
			return sfu_stop(st, SFU_STOP_REGISTER);
	}
	if ((!sfu_cfa_by_record(st, rule, &cfa) &&
	     !sfu_rule_cfa(st, rule, &cfa, win)) ||
	    !sfu_loc_eval(st, &rule->ra, cfa, &ra, &read_ra, win) ||
	    !sfu_loc_eval(st, &rule->fp, cfa, &fp, &read_fp, win))
		return false;
	if (rule->ra.kind == SFU_LOC_SAME && !st->exact)
		return sfu_stop(st, SFU_STOP_REGISTER);
	if (!sfu_read_pair(st, &ra, read_ra, &fp, read_fp, win))
		return false;
	/*
	 * The stack must move up.  Only a frame whose RA is still in its
	 * register (a leaf, or before its prologue, on arm64 and s390x)
	 * may leave the SP where it is; after that step the frame is no
	 * longer exact, so this cannot repeat.
	 */
	sp = cfa + rule->sp_off;
	if (sp < st->sp || (sp == st->sp &&
			    !(st->exact && rule->ra.kind != SFU_LOC_CFA)))
		return sfu_stop(st, SFU_STOP_CFA);
	ra = sfu_arch_strip_ra(ra, rule->flags & SFU_RULE_RA_MANGLED);
	return sfu_step_to(st, ra, sp, fp);
}

#endif /* _SFRAME_STEP_H */
