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
 * context); only the copy primitive differs.  Non-faulting walks disable
 * page faults once and hold the RCU read lock for the whole walk, so that
 * each read is a bare user copy and consecutive frames in one object reuse
 * its region; faulting walks take a reference to each frame's region
 * instead, as they may sleep.  Helpers return true when they stepped, or
 * false with the reason in sfu_ustate.stop.
 *
 * The per-frame path (region, rule, its application, the stack reads) is
 * inlined into the walk loop: a frame whose rule comes from a table's hot
 * entry makes no call, as a frame-pointer step makes none.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>

#include <sframe/table.h>
#include <sframe/unwind_user.h>
#include <uapi/linux/sframe_unwind.h>

#include "arch/arch.h"
#include "introspect.h"
#include "registry.h"
#include "stats.h"

#define SFU_DEF_MAX_DEPTH	127
#define SFU_MAX_DEPTH_LIMIT	1024
/*
 * Units of decoder work (sfu_find_rule_budget(): descriptors read, rows
 * decoded) a walk may spend, per frame of its depth limit.  With the
 * lookup entries and the row index a frame needs at most the rows read
 * ahead, its descriptor and SFU_ROW_STRIDE + 1 rows, and usually a
 * handful, so only a hostile section spends it; the walk's cost in NMI
 * stays bounded by max_depth times this, whatever the sections hold.
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

module_param_named(rule_cache, sfu_table_hot_enabled, bool, 0644);
MODULE_PARM_DESC(rule_cache,
		 "Answer rule-table lookups of recent PCs from their hot entries (default Y)");

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

/* The state of one walk. */
struct sfu_walk {
	struct sfu_ustate st;
	/*
	 * The region of the last frame looked up.  Non-faulting walks keep
	 * it while frames stay in its range (under the RCU read lock they
	 * hold throughout); faulting walks hold a reference for one frame.
	 */
	struct sfu_region *region;
	unsigned int region_reused;	/* frames that reused it: counted */
	struct sfu_unwind_result *res;
	struct sfu_rule scratch;	/* a rule decoded from a section */
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

/* Move @st to its caller at @ra, with @sp and @fp, if @ra can be code. */
static __always_inline bool sfu_step_to(struct sfu_ustate *st,
					unsigned long ra, unsigned long sp,
					unsigned long fp)
{
	if (!ra || ra >= TASK_SIZE)
		return sfu_stop(st, SFU_STOP_RA);
	st->pc = ra;
	st->sp = sp;
	st->fp = fp;
	st->exact = false;
	st->regs = NULL;
	return true;
}

/*
 * Step through the frame record at FP, @record bytes: the caller's frame
 * pointer, then the return address; the caller's SP is just above it.
 */
static bool sfu_frame_record_step(struct sfu_ustate *st, unsigned long record)
{
	unsigned long fp = st->fp;

	unsigned long next_fp, ra;

	if (!fp || fp < st->sp || !IS_ALIGNED(fp, sizeof(long)))
		return sfu_stop(st, SFU_STOP_NO_RULE);
	if (sfu_uread(st, fp, &next_fp) ||
	    sfu_uread(st, fp + sizeof(long), &ra))
		return sfu_stop(st, SFU_STOP_FAULT);
	return sfu_step_to(st, sfu_arch_strip_ra(ra, true), fp + record,
			   next_fp);
}

/*
 * Step through the back chain (s390x): word 0 of the frame at SP is the
 * caller's SP, and the caller's register save area holds the return
 * address at @ra_slot; FP stays.
 */
static bool sfu_back_chain_step(struct sfu_ustate *st, unsigned long ra_slot)
{
	unsigned long back, ra;

	if (sfu_uread(st, st->sp, &back))
		return sfu_stop(st, SFU_STOP_FAULT);
	if (!back || back <= st->sp || !IS_ALIGNED(back, sizeof(long)))
		return sfu_stop(st, SFU_STOP_NO_RULE);
	if (sfu_uread(st, back + ra_slot, &ra))
		return sfu_stop(st, SFU_STOP_FAULT);
	return sfu_step_to(st, ra, back, st->fp);
}

/* The caller by the architecture's frame links, where SFrame has none. */
static bool sfu_fallback(struct sfu_ustate *st)
{
	static const struct sfu_fp_frame link = SFU_ARCH_FP_FRAME;

	if (link.back_chain)
		return sfu_back_chain_step(st, link.ra_slot);
	return sfu_frame_record_step(st, link.record);
}

/*
 * Continue from the registers a signal frame saved (@sr says where): the
 * interrupted frame is exact again, its return-address register valid.
 */
static bool sfu_sigreturn(struct sfu_ustate *st, const struct sfu_sigregs *sr)
{
	unsigned long pc, sp, fp, ra = 0;

	if (sfu_uread(st, sr->pc, &pc) || sfu_uread(st, sr->sp, &sp) ||
	    sfu_uread(st, sr->fp, &fp) ||
	    (sr->ra && sfu_uread(st, sr->ra, &ra)))
		return sfu_stop(st, SFU_STOP_FAULT);
	st->pc = pc;
	st->sp = sp;
	st->fp = fp;
	st->ra = ra;
	st->exact = true;
	st->regs = NULL;
	return true;
}

/* The value a location describes, given the frame's CFA, into @val. */
static __always_inline bool sfu_loc_value(struct sfu_ustate *st,
					  const struct sfu_loc *l,
					  unsigned long cfa, unsigned long same,
					  unsigned long *val)
{
	unsigned long addr;

	switch (l->kind) {
	case SFU_LOC_SAME:
	case SFU_LOC_NONE:
		*val = same;
		return true;
	case SFU_LOC_CFA:
		addr = cfa + l->off;
		break;
	case SFU_LOC_REG:
		if (l->reg == SFU_ARCH_SP_REG)
			addr = st->sp;
		else if (l->reg == SFU_ARCH_FP_REG)
			addr = st->fp;
		else if (!sfu_arch_reg(st, l->reg, &addr))
			return sfu_stop(st, SFU_STOP_REGISTER);
		addr += l->off;
		break;
	default:
		return sfu_stop(st, SFU_STOP_NO_RULE);
	}
	if (!l->deref) {
		*val = addr;
		return true;
	}
	if (sfu_uread(st, addr, val))
		return sfu_stop(st, SFU_STOP_FAULT);
	return true;
}

/* Step @st to its caller by @rule. */
static __always_inline bool sfu_apply_rule(struct sfu_ustate *st,
					    const struct sfu_rule *rule)
{
	unsigned long cfa, ra, fp, sp;

	if (rule->flags & SFU_RULE_OUTERMOST)
		return sfu_stop(st, SFU_STOP_OUTERMOST);
	if ((rule->flags & SFU_RULE_TOPMOST_ONLY) && !st->exact)
		return sfu_stop(st, SFU_STOP_REGISTER);
	if (rule->cfa.kind != SFU_LOC_REG)
		return sfu_stop(st, SFU_STOP_NO_RULE);
	if (!sfu_loc_value(st, &rule->cfa, 0, 0, &cfa))
		return false;
	if (!IS_ALIGNED(cfa, sizeof(long)))
		return sfu_stop(st, SFU_STOP_CFA);
	if (!sfu_loc_value(st, &rule->ra, cfa, st->ra, &ra))
		return false;
	if (rule->ra.kind == SFU_LOC_SAME && !st->exact)
		return sfu_stop(st, SFU_STOP_REGISTER);
	if (!sfu_loc_value(st, &rule->fp, cfa, st->fp, &fp))
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

/* Note a corrupt section: drop it if this context may, else leave it. */
static void sfu_region_corrupt(struct sfu_region *r, enum sfu_mem mode)
{
	char why[SFU_DBG_LINE];

	if (mode != SFU_MEM_USER)
		return;
	snprintf(why, sizeof(why), "%s during a walk",
		 r->sec.diag.what ?: "corrupt section");
	sfu_refuse(r->source == SFRAME_UNWIND_SRC_JIT ? "jit section" :
		   "mapped section", why, r->sec.diag.off, -EBADMSG);
	if (current->mm) {
		struct sfu_mm *smm;

		rcu_read_lock();
		smm = sfu_mm_find(current->mm);
		rcu_read_unlock();
		if (smm)
			sfu_mm_remove_range(smm, r->start, r->end);
	}
}

/* Let go of the region of the last frame. */
static void sfu_walk_drop_region(struct sfu_walk *w)
{
	if (w->st.mode == SFU_MEM_USER)
		sfu_region_put(w->region);
	w->region = NULL;
}

/* The region describing @pc, or NULL; see struct sfu_walk. */
static __always_inline struct sfu_region *
sfu_walk_region(struct sfu_walk *w, unsigned long pc)
{
	struct sfu_region *r = w->region;

	if (w->st.mode == SFU_MEM_USER_NOFAULT) {
		if (r && pc >= r->start && pc < r->end)
			w->region_reused++;
		else
			r = sfu_region_find(current->mm, pc);
		w->region = r;
		return r;
	}
	sfu_walk_drop_region(w);
	rcu_read_lock();
	r = sfu_region_find(current->mm, pc);
	if (r && !kref_get_unless_zero(&r->ref))
		r = NULL;
	rcu_read_unlock();
	w->region = r;
	return r;
}

/*
 * The rule for the frame's PC, into @rule: from its section's rule table
 * where it has one (one unit of the budget, as the decoder counts it),
 * else decoded into @w->scratch.  Return: 0 or the decoder's error.
 */
static __always_inline int sfu_frame_rule(struct sfu_walk *w,
					  const struct sfu_rule **rule)
{
	struct sfu_ustate *st = &w->st;
	unsigned long pc = st->exact ? st->pc : st->pc - 1;
	struct sfu_region *r = sfu_walk_region(w, pc);
	int ret;

	if (!r)
		return -ENOENT;
	if (r->sec.table) {
		if (!st->budget)
			return -ERANGE;
		st->budget--;
		*rule = sfu_table_find_hot(&r->sec, pc);
		return *rule ? 0 : -ENOENT;
	}
	ret = sfu_find_rule_budget(&r->sec, pc, &w->scratch, st->mode,
				   &st->budget);
	if (ret == -EBADMSG) {
		sfu_region_corrupt(r, st->mode);
		sfu_walk_drop_region(w);
	}
	*rule = &w->scratch;
	return ret;
}

/* Why a walk stops when the decoder failed with @err. */
static enum sfu_stop sfu_errno_stop(int err)
{
	switch (err) {
	case -EBADMSG:
		return SFU_STOP_CORRUPT;
	case -ERANGE:
		return SFU_STOP_BUDGET;
	default:
		return SFU_STOP_FAULT;
	}
}

/* One step: by SFrame, through a signal frame, or by the fallback. */
static __always_inline bool sfu_step(struct sfu_walk *w)
{
	struct sfu_ustate *st = &w->st;
	const struct sfu_rule *rule;
	struct sfu_sigregs sr;
	int ret;

	ret = sfu_frame_rule(w, &rule);
	if (ret && ret != -ENOENT)
		return sfu_stop(st, sfu_errno_stop(ret));
	if (!ret && !(rule->flags & SFU_RULE_SIGNAL)) {
		if (!sfu_apply_rule(st, rule))
			return false;
		w->res->sframe++;
		return true;
	}
	if (sfu_arch_sigframe(st, &sr)) {
		if (!sfu_sigreturn(st, &sr))
			return false;
		w->res->signal++;
		return true;
	}
	if (!sfu_fallback(st))
		return false;
	w->res->fallback++;
	return true;
}

/*
 * The fast lane of a non-faulting walk: the frames that are not exact
 * (frame 0 and a frame restored from a signal context are) whose rules
 * come from the current region's table and are simple (SFU_RULE_SIMPLE),
 * stepped with the registers in locals and both saved words read in one
 * user-access window.  Each such step is what sfu_apply_rule() does for
 * that rule.  A frame it cannot step (outside the region, no simple rule,
 * a check or a read that fails) it leaves to sfu_step(), which does it
 * again in full and stops the walk where it must: the lane never ends a
 * walk but when @consume is full or at @max frames, and gives the same
 * frames and the same stop as sfu_step() alone.
 *
 * Return: true if the walk is over (@consume full or @max frames).
 */
static __always_inline bool sfu_walk_fast(struct sfu_walk *w,
					  sfu_consume_fn consume, void *arg,
					  unsigned int max)
{
	struct sfu_ustate *st = &w->st;
	const struct sfu_region *r = w->region;
	unsigned long pc = st->pc, sp = st->sp, fp = st->fp;
	unsigned long cfa, ra, caller_sp, caller_fp, top = TASK_SIZE;
	unsigned int nr = w->res->nr, steps = 0, budget = st->budget;
	unsigned long start, end;
	const struct sfu_rule *rule;
	struct sfu_hot_view hot;
	bool over = false;
	u32 flags;

	if (st->exact || !r || !r->sec.table ||
	    unlikely(!pagefault_disabled()))
		return false;
	start = r->start;
	end = r->end;
	sfu_hot_view_init(&hot, &r->sec);
	while (budget > steps && pc - 1 >= start && pc - 1 < end) {
		rule = sfu_hot_view_find(&hot, pc - 1);
		if (!rule || !(rule->flags & SFU_RULE_SIMPLE))
			break;
		flags = rule->flags;
		cfa = (flags & SFU_RULE_CFA_FP ? fp : sp) + rule->cfa.off;
		caller_sp = cfa + rule->sp_off;
		caller_fp = fp;
		if (!IS_ALIGNED(cfa, sizeof(long)) || caller_sp <= sp ||
		    !sfu_uread_pair_nofault(cfa + rule->ra.off, &ra,
					    flags & SFU_RULE_FP_AT_CFA,
					    cfa + rule->fp.off, &caller_fp))
			break;
		ra = sfu_arch_strip_ra(ra, flags & SFU_RULE_RA_MANGLED);
		if (!ra || ra >= top)
			break;
		steps++;
		pc = ra;
		sp = caller_sp;
		fp = caller_fp;
		if (!consume(arg, pc) || ++nr == max) {
			over = true;
			break;
		}
	}
	st->pc = pc;
	st->sp = sp;
	st->fp = fp;
	st->budget = budget - steps;
	w->region_reused += steps;
	w->res->nr = nr;
	w->res->sframe += steps;
	w->res->fast += steps;
	return over;
}

/*
 * A non-faulting walk disables page faults once for all its reads and
 * holds the RCU read lock for its regions.  A copy of no bytes (from any
 * user address: none is touched) first checks that this context may read
 * user memory at all, which the kernel does not export otherwise (x86:
 * not in an NMI that came while the CPU switched address spaces).
 */
static bool sfu_walk_begin(struct sfu_walk *w)
{
	char none;

	if (w->st.mode != SFU_MEM_USER_NOFAULT)
		return true;
	if (copy_from_user_nofault(&none, NULL, 0))
		return false;
	pagefault_disable();
	rcu_read_lock();
	return true;
}

static void sfu_walk_end(struct sfu_walk *w)
{
	/* Reused regions count as lookups that hit, once per walk. */
	if (w->region_reused) {
		sfu_stat_add(SFU_STAT_LOOKUPS, w->region_reused);
		sfu_stat_add(SFU_STAT_LOOKUP_HITS, w->region_reused);
	}
	sfu_walk_drop_region(w);
	if (w->st.mode != SFU_MEM_USER_NOFAULT)
		return;
	rcu_read_unlock();
	pagefault_enable();
}

/*
 * The walk, inlined into each entry point below so that the store of
 * sfu_unwind_user() is a direct, inlined call rather than a call through
 * a pointer per frame.
 */
static __always_inline int sfu_walk(struct pt_regs *regs, enum sfu_mem mode,
				    sfu_consume_fn consume, void *arg,
				    struct sfu_unwind_result *res)
{
	struct sfu_walk w = { .st.mode = mode, .res = res };
	unsigned int max = READ_ONCE(sfu_max_depth);
	bool readable;

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
	sfu_arch_start(&w.st, regs);
	w.st.budget = max * SFU_WALK_READS_PER_FRAME;
	res->stop = SFU_STOP_DEPTH;
	readable = sfu_walk_begin(&w);
	while (res->nr < max && consume(arg, w.st.pc)) {
		if (++res->nr == max)
			break;
		if (!readable) {
			res->stop = SFU_STOP_FAULT;
			break;
		}
		if (mode == SFU_MEM_USER_NOFAULT &&
		    sfu_walk_fast(&w, consume, arg, max))
			break;
		if (!sfu_step(&w)) {
			res->stop = w.st.stop;
			break;
		}
	}
	if (readable)
		sfu_walk_end(&w);
	return 0;
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
 * At most max_depth frames.  A non-faulting walk runs with page faults
 * disabled and under the RCU read lock; @consume must not sleep then.
 *
 * Return: 0 (also for a walk that stopped early: see @res), or -EINVAL
 * for a task without an mm, a kernel thread given no user registers (one
 * that borrows an mm may pass some), or a compat task.
 */
int sfu_unwind_user_walk(struct pt_regs *regs, enum sfu_mem mode,
			 sfu_consume_fn consume, void *arg,
			 struct sfu_unwind_result *res)
{
	return sfu_walk(regs, mode, consume, arg, res);
}

struct sfu_pcs {
	unsigned long *pcs;
	unsigned int nr;
	unsigned int max;
};

static inline bool sfu_store_pc(void *arg, unsigned long pc)
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
	return sfu_walk(regs, mode, sfu_store_pc, &b, res);
}
