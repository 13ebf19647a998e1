// SPDX-License-Identifier: GPL-2.0
/*
 * The user stack walker.
 *
 * For each frame: find the PC's region in the mm's registry, ask the
 * decoder for the rule (CFA, RA, FP), read the saved values from the
 * stack, step.  Frames without SFrame fall back to the architecture's
 * frame-pointer (or back-chain) step, and signal trampolines are stepped
 * through with the saved user context.  A walk stops on an outermost
 * frame, a CFA that does not move up the stack or is misaligned, a zero
 * or non-user return address, a failed read, the depth limit, or when its
 * budget of section reads is spent.
 *
 * The same code runs faulting (task context) and non-faulting (any
 * context); only the copy primitive differs.  Non-faulting walks hold the
 * RCU read lock across a frame's lookup and reads; faulting walks take a
 * reference to the region instead, as they may sleep.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>

#include <sframe/unwind_user.h>

#include "arch/arch.h"
#include "sfu.h"

#define SFU_DEF_MAX_DEPTH	127
#define SFU_MAX_DEPTH_LIMIT	1024
/*
 * Section reads (descriptors and rows) a walk may make, per frame of its
 * depth limit.  With the row index a frame needs at most a binary search
 * in one block and SFU_ROW_STRIDE + 1 rows, and usually a handful, so
 * only a hostile section spends it; the walk's cost in NMI stays bounded
 * by max_depth times this, whatever the sections hold.
 */
#define SFU_WALK_READS_PER_FRAME	32

unsigned int sfu_max_depth = SFU_DEF_MAX_DEPTH;

static int sfu_set_max_depth(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, SFU_MAX_DEPTH_LIMIT);
}

static const struct kernel_param_ops sfu_max_depth_ops = {
	.set = sfu_set_max_depth,
	.get = param_get_uint,
};

module_param_cb(max_depth, &sfu_max_depth_ops, &sfu_max_depth, 0644);
MODULE_PARM_DESC(max_depth,
		 "Most user frames one walk returns, 1 to 1024 (default 127)");

static const char *const sfu_stop_names[SFU_STOP_NR] = {
	[SFU_STOP_DEPTH]	= "depth",
	[SFU_STOP_OUTERMOST]	= "outermost",
	[SFU_STOP_RA]		= "return-address",
	[SFU_STOP_CFA]		= "cfa",
	[SFU_STOP_FAULT]	= "fault",
	[SFU_STOP_CORRUPT]	= "corrupt",
	[SFU_STOP_NO_RULE]	= "no-rule",
	[SFU_STOP_REGISTER]	= "register",
	[SFU_STOP_BUDGET]	= "budget",
};

/**
 * sfu_stop_name() - a short name for why a walk stopped
 * @stop: an enum sfu_stop value
 *
 * Return: the name, or "?".
 */
const char *sfu_stop_name(u8 stop)
{
	return stop < SFU_STOP_NR ? sfu_stop_names[stop] : "?";
}

/**
 * sfu_frame_record_step() - step through a frame record
 * @st: the frame
 * @fp: address of the record: the caller's frame pointer, then the
 *	return address
 * @record: the record's size; the caller's SP is just above it
 *
 * The frame-pointer fallback of x86-64 and arm64.
 *
 * Return: 0 stepped, or an enum sfu_stop + 1.
 */
int sfu_frame_record_step(struct sfu_ustate *st, unsigned long fp,
			  unsigned long record)
{
	unsigned long next_fp, ra;

	if (!fp || fp < st->sp || !IS_ALIGNED(fp, sizeof(long)))
		return SFU_STOP_NO_RULE + 1;
	if (sfu_uread(st, fp, &next_fp) ||
	    sfu_uread(st, fp + sizeof(long), &ra))
		return SFU_STOP_FAULT + 1;
	ra = sfu_arch_strip_ra(ra, true);
	if (!ra || ra >= TASK_SIZE)
		return SFU_STOP_RA + 1;
	st->pc = ra;
	st->sp = fp + record;
	st->fp = next_fp;
	st->exact = false;
	st->regs = NULL;
	return 0;
}

/**
 * sfu_ustate_restore() - continue from registers saved in a signal frame
 * @st: the frame
 * @pc: the interrupted PC
 * @sp: the interrupted SP
 * @fp: the interrupted FP
 * @ra: the interrupted return-address register (0 where there is none)
 */
void sfu_ustate_restore(struct sfu_ustate *st, unsigned long pc,
			unsigned long sp, unsigned long fp, unsigned long ra)
{
	st->pc = pc;
	st->sp = sp;
	st->fp = fp;
	st->ra = ra;
	st->exact = true;
	st->regs = NULL;
}

/* The value a location describes, given the frame's CFA. */
static int sfu_loc_value(const struct sfu_ustate *st,
			 const struct sfu_loc *l, unsigned long cfa,
			 unsigned long same, unsigned long *val)
{
	unsigned long addr;

	switch (l->kind) {
	case SFU_LOC_SAME:
	case SFU_LOC_NONE:
		*val = same;
		return 0;
	case SFU_LOC_CFA:
		addr = cfa + l->off;
		break;
	case SFU_LOC_REG:
		if (!sfu_arch_reg(st, l->reg, &addr))
			return SFU_STOP_REGISTER;
		addr += l->off;
		break;
	default:
		return SFU_STOP_NO_RULE;
	}
	if (!l->deref) {
		*val = addr;
		return 0;
	}
	return sfu_uread(st, addr, val) ? SFU_STOP_FAULT : 0;
}

/* Apply @rule to @st.  Return: 0 stepped, or an enum sfu_stop + 1. */
static int sfu_apply_rule(struct sfu_ustate *st, const struct sfu_rule *rule)
{
	unsigned long cfa, ra, fp, sp;
	int stop;

	if (rule->flags & SFU_RULE_OUTERMOST)
		return SFU_STOP_OUTERMOST + 1;
	if ((rule->flags & SFU_RULE_TOPMOST_ONLY) && !st->exact)
		return SFU_STOP_REGISTER + 1;
	if (rule->cfa.kind != SFU_LOC_REG)
		return SFU_STOP_NO_RULE + 1;
	stop = sfu_loc_value(st, &rule->cfa, 0, 0, &cfa);
	if (stop)
		return stop + 1;
	if (!IS_ALIGNED(cfa, sizeof(long)))
		return SFU_STOP_CFA + 1;
	stop = sfu_loc_value(st, &rule->ra, cfa, st->ra, &ra);
	if (!stop && rule->ra.kind == SFU_LOC_SAME && !st->exact)
		stop = SFU_STOP_REGISTER;
	if (!stop)
		stop = sfu_loc_value(st, &rule->fp, cfa, st->fp, &fp);
	if (stop)
		return stop + 1;
	/*
	 * The stack must move up.  Only a frame whose RA is still in its
	 * register (a leaf, or before its prologue, on arm64 and s390x)
	 * may leave the SP where it is; after that step the frame is no
	 * longer exact, so this cannot repeat.
	 */
	sp = cfa + rule->sp_off;
	if (sp < st->sp || (sp == st->sp &&
			    !(st->exact && rule->ra.kind != SFU_LOC_CFA)))
		return SFU_STOP_CFA + 1;
	ra = sfu_arch_strip_ra(ra, rule->flags & SFU_RULE_RA_MANGLED);
	if (!ra || ra >= TASK_SIZE)
		return SFU_STOP_RA + 1;
	st->pc = ra;
	st->sp = sp;
	st->fp = fp;
	st->exact = false;
	st->regs = NULL;
	return 0;
}

/* Note a corrupt section: drop it if this context may, else leave it. */
static void sfu_region_corrupt(struct sfu_region *r, enum sfu_mem mode)
{
	char why[SFU_DBG_LINE];

	if (mode != SFU_MEM_USER)
		return;
	snprintf(why, sizeof(why), "%s during a walk",
		 r->sec.diag.what ?: "corrupt section");
	sfu_refuse(r->file ? "mapped section" : "jit section", why,
		   r->sec.diag.off, -EBADMSG);
	if (current->mm) {
		struct sfu_mm *smm;

		rcu_read_lock();
		smm = sfu_mm_find(current->mm);
		rcu_read_unlock();
		if (smm)
			sfu_mm_remove_range(smm, r->start, r->end);
	}
}

/*
 * The rule for @st's PC.  Return: 0 with @rule set, -ENOENT if there is no
 * SFrame for it, or an enum sfu_stop + 1.
 */
static int sfu_frame_rule(struct sfu_ustate *st, struct sfu_rule *rule)
{
	unsigned long pc = st->exact ? st->pc : st->pc - 1;
	struct sfu_region *r;
	int ret;

	rcu_read_lock();
	r = sfu_region_find(current->mm, pc);
	if (r && st->mode == SFU_MEM_USER && !kref_get_unless_zero(&r->ref))
		r = NULL;
	if (st->mode == SFU_MEM_USER)
		rcu_read_unlock();
	ret = r ? sfu_find_rule_budget(&r->sec, pc, rule, st->mode,
				       &st->budget) : -ENOENT;
	if (ret == -EBADMSG)
		sfu_region_corrupt(r, st->mode);
	if (st->mode == SFU_MEM_USER)
		sfu_region_put(r);
	else
		rcu_read_unlock();
	switch (ret) {
	case 0:
	case -ENOENT:
		return ret;
	case -EBADMSG:
		return SFU_STOP_CORRUPT + 1;
	case -ERANGE:
		return SFU_STOP_BUDGET + 1;
	default:
		return SFU_STOP_FAULT + 1;
	}
}

/* One step.  Return: 0 stepped, or an enum sfu_stop + 1. */
static int sfu_step(struct sfu_ustate *st, struct sfu_unwind_result *res)
{
	struct sfu_rule rule;
	int ret;

	ret = sfu_frame_rule(st, &rule);
	if (ret > 0)
		return ret;
	if (!ret && !(rule.flags & SFU_RULE_SIGNAL)) {
		ret = sfu_apply_rule(st, &rule);
		if (!ret)
			res->sframe++;
		return ret;
	}
	ret = sfu_arch_sigframe(st);
	if (ret > 0) {
		res->signal++;
		return 0;
	}
	if (ret < 0)
		return SFU_STOP_FAULT + 1;
	ret = sfu_arch_fallback(st);
	if (!ret)
		res->fallback++;
	return ret;
}

/**
 * sfu_unwind_user_walk() - walk the current task's user stack, frame by frame
 * @regs: registers the walk starts from; kernel-mode registers (a sample
 *	taken in the kernel) mean the task's user registers at entry
 * @mode: SFU_MEM_USER (task context, may fault and sleep) or
 *	SFU_MEM_USER_NOFAULT (any context)
 * @consume: called with each frame's PC, innermost first; returns false
 *	if it could not take it (its buffer is full), which ends the walk
 * @arg: passed to @consume
 * @res: frame count, why the walk stopped and how frames were stepped
 *
 * At most max_depth frames.
 *
 * Return: 0 (also for a walk that stopped early: see @res), or -EINVAL
 * for a task without an mm, a kernel thread given no user registers (one
 * that borrows an mm may pass some), or a compat task.
 */
int sfu_unwind_user_walk(struct pt_regs *regs, enum sfu_mem mode,
			 sfu_consume_fn consume, void *arg,
			 struct sfu_unwind_result *res)
{
	struct sfu_ustate st = { .mode = mode };
	unsigned int max = READ_ONCE(sfu_max_depth);
	int stop;

	memset(res, 0, sizeof(*res));
	if (!current->mm)
		return -EINVAL;
	if (!regs || !user_mode(regs)) {
		/* A kernel thread has no user registers of its own. */
		if (current->flags & PF_KTHREAD)
			return -EINVAL;
		regs = task_pt_regs(current);
	}
	if (!sfu_arch_user_regs_ok(regs))
		return -EINVAL;
	sfu_arch_start(&st, regs);
	st.budget = max * SFU_WALK_READS_PER_FRAME;
	res->stop = SFU_STOP_DEPTH;
	while (res->nr < max && consume(arg, st.pc)) {
		if (++res->nr == max)
			break;
		stop = sfu_step(&st, res);
		if (stop) {
			res->stop = stop - 1;
			break;
		}
	}
	return 0;
}

struct sfu_pcs {
	unsigned long *pcs;
	unsigned int nr;
	unsigned int max;
};

static bool sfu_store_pc(void *arg, unsigned long pc)
{
	struct sfu_pcs *b = arg;

	if (b->nr == b->max)
		return false;
	b->pcs[b->nr++] = pc;
	return true;
}

/**
 * sfu_unwind_user() - walk the current task's user stack into an array
 * @regs: as for sfu_unwind_user_walk()
 * @mode: as for sfu_unwind_user_walk()
 * @pcs: where the frames' PCs go, innermost first
 * @max: room in @pcs
 * @res: as for sfu_unwind_user_walk()
 *
 * Return: as sfu_unwind_user_walk().
 */
int sfu_unwind_user(struct pt_regs *regs, enum sfu_mem mode,
		    unsigned long *pcs, unsigned int max,
		    struct sfu_unwind_result *res)
{
	struct sfu_pcs b = { .pcs = pcs, .max = max };

	if (!max) {
		memset(res, 0, sizeof(*res));
		return 0;
	}
	return sfu_unwind_user_walk(regs, mode, sfu_store_pc, &b, res);
}
