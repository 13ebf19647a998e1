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
 * A frame's rule comes from its section's rule table where it has one
 * (files and sidecars: kernel memory only), else from the section itself
 * (JIT code, read where the process keeps it).  One function applies a
 * rule, whatever its kind (<sframe/step.h>, the step this file shares
 * with the host's replay of the walk): it works out which stack words the
 * caller's registers are in and reads them together.
 *
 * The same code runs faulting (task context) and non-faulting (any
 * context); only the copy primitive differs.  Non-faulting walks disable
 * page faults once and hold the RCU read lock for the whole walk, so that
 * consecutive frames in one object reuse its region; faulting walks take a
 * reference to each frame's region instead, as they may sleep.  Every
 * helper returns true when it did its part, or false with the reason the
 * walk stops in sfu_ustate.stop.
 *
 * A non-faulting walk into an array (perf, ftrace, BPF) also opens one
 * user-access window for all its frames, where a window per read or per
 * frame costs a STAC/CLAC pair each on x86.  In it a step makes no call:
 * it takes the frames of the region it is in, by its rule table, with bare
 * loads (sfu_step(..., true)).  A frame that
 * needs more (another region, the decoder, a signal frame, a fault) stops
 * that step with SFU_STOP_OUTSIDE, and the walk takes it again outside the
 * window, by the same step with calls allowed (sfu_step_outside()).
 * objtool checks on x86 that no call is made with the window open.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/nospec.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>

#include <sframe/table.h>
#include <uapi/linux/sframe_unwind.h>

#include "arch/arch.h"
#include "registry.h"
#include "stats.h"
#include "unwind.h"

#define SFU_DEF_MAX_DEPTH	127
#define SFU_MAX_DEPTH_LIMIT	1024
/*
 * Units of decoder work (sfu_find_rule_budget(): descriptors read, rows
 * decoded) a walk may spend on sections without a rule table, per frame
 * of its depth limit.  With the lookup entries and the row index a frame
 * needs at most the rows read ahead, its descriptor and SFU_ROW_STRIDE +
 * 1 rows, and usually a handful, so only a hostile section spends it; the
 * walk's cost in NMI stays bounded by max_depth times this, whatever the
 * sections hold.  A table lookup is bounded by the table's block size.
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

/*
 * Read the word at @addr of the current task through its page, found in
 * the task's page tables without a lock and without faulting it in
 * (GUP-fast): for SFU_ARCH_READ_BY_PAGE, where a present page may fault a
 * read that a non-faulting walk cannot let through.  Not in NMI, and not
 * where PREEMPT_RT could not drop the page's last reference (a sleeping
 * lock): the walk ends there as before.
 */
static noinline bool sfu_read_by_page(const unsigned long __user *addr,
				      unsigned long *val)
{
	unsigned long uaddr = (unsigned long)addr;
	struct page *page;
	void *kaddr;

	if (in_nmi() || (IS_ENABLED(CONFIG_PREEMPT_RT) && !preemptible()))
		return false;
	if (offset_in_page(uaddr) > PAGE_SIZE - sizeof(*val))
		return false;
	if (!get_user_page_fast_only(uaddr, 0, &page))
		return false;
	kaddr = kmap_local_page(page);
	*val = *(unsigned long *)(kaddr + offset_in_page(uaddr));
	kunmap_local(kaddr);
	put_page(page);
	sfu_stat_inc(SFU_STAT_PAGE_READS);
	return true;
}

/* sfu_read_pair_nofault()'s words through their pages, after a fault. */
static bool sfu_read_pair_by_page(unsigned long *a,
				  const unsigned long __user *pa,
				  unsigned long *b,
				  const unsigned long __user *pb)
{
	if (!SFU_ARCH_READ_BY_PAGE)
		return false;
	if (pa && !sfu_read_by_page(pa, a))
		return false;
	return !pb || sfu_read_by_page(pb, b);
}

/*
 * Replace *@a by the word at user address *@a if @ra, and *@b by the word
 * at *@b if @rb (a frame's saved RA and FP), inside a user-access window
 * already open: inline loads, where __get_user() and a copy are calls (a
 * return thunk each on kernels built against return-stack attacks), each
 * address checked here.  A fault stops the step with SFU_STOP_OUTSIDE:
 * outside the walk's window, sfu_read_pair_nofault() reads the words
 * through their pages.
 */
static __always_inline bool sfu_read_pair_window(struct sfu_ustate *st,
						 unsigned long *a, bool ra,
						 unsigned long *b, bool rb)
{
	unsigned long __user *pa = (unsigned long __user *)*a;
	unsigned long __user *pb = (unsigned long __user *)*b;

	if ((ra && !access_ok(pa, sizeof(*pa))) ||
	    (rb && !access_ok(pb, sizeof(*pb))))
		return sfu_stop(st, SFU_STOP_FAULT);
	/* No load of either before both checks are done, speculated or not. */
	barrier_nospec();
	if (ra)
		unsafe_get_user(*a, pa, fault_outside);
	if (rb)
		unsafe_get_user(*b, pb, fault_outside);
	return true;
fault_outside:
	return sfu_stop(st, SFU_STOP_OUTSIDE);
}

/*
 * The same in a window of its own, and after a fault through the words'
 * pages.  Only inside a non-faulting walk's page-fault-free scope
 * (sfu_walk_begin()).
 */
static __always_inline bool sfu_read_pair_nofault(struct sfu_ustate *st,
						  unsigned long *a, bool ra,
						  unsigned long *b, bool rb)
{
	unsigned long __user *pa = (unsigned long __user *)*a;
	unsigned long __user *pb = (unsigned long __user *)*b;
	bool ok;

	if (!ra && !rb)
		return true;
	if (!user_read_access_begin(ra ? pa : pb, sizeof(*pa)))
		return sfu_stop(st, SFU_STOP_FAULT);
	ok = sfu_read_pair_window(st, a, ra, b, rb);
	user_read_access_end();
	if (ok || st->stop != SFU_STOP_OUTSIDE)
		return ok;
	if (!sfu_read_pair_by_page(a, ra ? pa : NULL, b, rb ? pb : NULL))
		return sfu_stop(st, SFU_STOP_FAULT);
	return true;
}

/*
 * The same in @st's mode, or in the window if @win: a faulting walk may
 * sleep on each read.
 */
static __always_inline bool sfu_read_pair(struct sfu_ustate *st,
					  unsigned long *a, bool ra,
					  unsigned long *b, bool rb, bool win)
{
	unsigned long __user *pa = (unsigned long __user *)*a;
	unsigned long __user *pb = (unsigned long __user *)*b;

	if (win)
		return sfu_read_pair_window(st, a, ra, b, rb);
	if (st->mode == SFU_MEM_USER_NOFAULT)
		return sfu_read_pair_nofault(st, a, ra, b, rb);
	if ((ra && get_user(*a, pa)) || (rb && get_user(*b, pb)))
		return sfu_stop(st, SFU_STOP_FAULT);
	return true;
}

/* The step, with the reads above inlined into it. */
#include <sframe/step.h>

/*
 * Step through the back chain (s390x): word 0 of the frame at SP is the
 * caller's SP, and the caller's register save area holds the return
 * address at @ra_slot; FP stays.
 */
static bool sfu_back_chain_step(struct sfu_ustate *st, unsigned long ra_slot)
{
	unsigned long back, ra;

	if (!sfu_read_word(st, st->sp, &back, false))
		return false;
	if (!back || back <= st->sp || !IS_ALIGNED(back, sizeof(long)))
		return sfu_stop(st, SFU_STOP_NO_RULE);
	if (!sfu_read_word(st, back + ra_slot, &ra, false))
		return false;
	return sfu_step_to(st, ra, back, st->fp);
}

/*
 * Step through a frame of known code without CFI as @stub says
 * (sfu_arch_stub_frame()): its CFA @stub->cfa_off above SP, its return
 * address just below it or, in an exact frame, in its register.
 */
static bool sfu_stub_step(struct sfu_ustate *st, const struct sfu_stub *stub)
{
	unsigned long cfa = st->sp + stub->cfa_off, ra = st->ra;

	if (stub->ra_in_reg) {
		if (!st->exact)
			return sfu_stop(st, SFU_STOP_REGISTER);
	} else if (!sfu_read_word(st, cfa - sizeof(long), &ra, false)) {
		return false;
	}
	return sfu_step_to(st, sfu_arch_strip_ra(ra, false), cfa, st->fp);
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
	unsigned long pc, sp, fp, ra;

	pc = sr->pc;
	sp = sr->sp;
	fp = sr->fp;
	ra = sr->ra;
	if (!sfu_read_pair(st, &pc, true, &sp, true, false) ||
	    !sfu_read_pair(st, &fp, true, &ra, ra, false))
		return false;
	st->pc = pc;
	st->sp = sp;
	st->fp = fp;
	st->ra = ra;
	st->exact = true;
	st->sp_bound = false;
	st->regs = NULL;
	return true;
}

/* Note a corrupt section: drop it if this context may, else leave it. */
static void sfu_region_corrupt(struct sfu_region *r, enum sfu_mem mode)
{
	char why[SFU_REFUSE_WHY_LEN];

	if (mode != SFU_MEM_USER)
		return;
	snprintf(why, sizeof(why), "%s during a walk",
		 r->sec->diag.what ?: "corrupt section");
	sfu_refuse(r->source == SFRAME_UNWIND_SRC_JIT ? "jit section" :
		   "mapped section", why, r->sec->diag.off, -EBADMSG);
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

/* Whether region @r (or none) holds @pc. */
static __always_inline bool sfu_region_has(const struct sfu_region *r,
					   unsigned long pc)
{
	return r && pc >= r->start && pc < r->end;
}

/* The region describing @pc, or NULL; see struct sfu_walk. */
static __always_inline struct sfu_region *
sfu_walk_region(struct sfu_walk *w, unsigned long pc)
{
	struct sfu_region *r = w->region;

	if (w->st.mode == SFU_MEM_USER_NOFAULT) {
		if (sfu_region_has(r, pc))
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
 * The rule of @w's frame at @pc from @r's rule table: a caller's through
 * the table's memo of return addresses (sfu_table_find_return()), whose
 * full sets the jiffies and the frame's depth pick the lookups to renew.
 */
static __always_inline const struct sfu_rule *
sfu_table_rule(const struct sfu_walk *w, const struct sfu_region *r,
	       unsigned long pc)
{
	if (w->st.exact)
		return sfu_region_table_find(r, pc);
	return sfu_region_table_find_return(r, pc,
					    (u32)jiffies + w->res->nr);
}

/*
 * The rule for the frame's PC, into @rule: from its section's rule table
 * where it has one, else decoded into @w->scratch within the walk's
 * budget.  Return: 0 or the decoder's error.
 */
static __always_inline int sfu_frame_rule(struct sfu_walk *w,
					  const struct sfu_rule **rule)
{
	struct sfu_ustate *st = &w->st;
	unsigned long pc = sfu_frame_pc(st);
	struct sfu_region *r = sfu_walk_region(w, pc);
	int ret;

	if (!r)
		return -ENOENT;
	if (r->sec->table) {
		*rule = sfu_table_rule(w, r, pc);
		return *rule ? 0 : -ENOENT;
	}
	ret = sfu_find_rule_budget(r->sec, pc, &w->scratch,
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

/*
 * A frame SFrame does not step: through a signal frame, a stub the
 * architecture knows by its code, or by the fallback.  Out of line, so
 * that the common path sets up no state for it (kernels built with
 * INIT_STACK_ALL_ZERO clear every local it declares).
 */
static noinline bool sfu_step_other(struct sfu_walk *w)
{
	struct sfu_ustate *st = &w->st;
	struct sfu_sigregs sr;
	struct sfu_stub stub;

	if (sfu_arch_sigframe(st, &sr)) {
		if (!sfu_sigreturn(st, &sr))
			return false;
		w->res->signal++;
		return true;
	}
	if (sfu_arch_stub_frame(st, &stub) ? !sfu_stub_step(st, &stub) :
					     !sfu_fallback(st))
		return false;
	w->res->fallback++;
	return true;
}

/*
 * The rule for the frame's PC as the window finds it, without a call: in
 * the region of the last frame, from its rule table.  NULL sends the
 * frame outside the window, where sfu_frame_rule() finds what there is
 * (another region, the decoder's rule, or none).
 */
static __always_inline const struct sfu_rule *
sfu_window_rule(const struct sfu_walk *w)
{
	unsigned long pc = sfu_frame_pc(&w->st);
	const struct sfu_region *r = w->region;

	if (!sfu_region_has(r, pc) || !r->sec->table)
		return NULL;
	return sfu_table_rule(w, r, pc);
}

/*
 * One step: by SFrame, through a signal frame, or by the fallback; in the
 * window if @win, by SFrame alone.
 */
static __always_inline bool sfu_step(struct sfu_walk *w, bool win)
{
	struct sfu_ustate *st = &w->st;
	const struct sfu_rule *rule;
	int ret;

	if (win) {
		rule = sfu_window_rule(w);
		if (!rule || (rule->flags & SFU_RULE_SIGNAL))
			return sfu_stop(st, SFU_STOP_OUTSIDE);
	} else {
		ret = sfu_frame_rule(w, &rule);
		if (ret && ret != -ENOENT)
			return sfu_stop(st, sfu_errno_stop(ret));
		if (ret || (rule->flags & SFU_RULE_SIGNAL))
			return sfu_step_other(w);
	}
	if (!sfu_apply_rule(st, rule, win))
		return false;
	/* A frame in the window reused the last frame's region. */
	w->region_reused += win;
	w->res->sframe++;
	w->res->table += rule != &w->scratch;
	return true;
}

/* The step with calls allowed, out of line: one copy for every loop. */
static noinline bool sfu_step_outside(struct sfu_walk *w)
{
	return sfu_step(w, false);
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
 * Frames from the current one until the walk ends, each stepped in the
 * open window if @win (@consume makes no call then), else outside any;
 * if the stack cannot be read (!@readable), the first alone.  Return:
 * true if a step needs to be taken outside the window (SFU_STOP_OUTSIDE),
 * false when the walk ended.
 */
static __always_inline bool sfu_walk_frames(struct sfu_walk *w,
					    sfu_consume_fn consume, void *arg,
					    unsigned int max, bool readable,
					    bool win)
{
	struct sfu_unwind_result *res = w->res;

	while (res->nr < max && consume(arg, w->st.pc)) {
		if (++res->nr == max)
			break;
		if (!readable) {
			res->stop = SFU_STOP_FAULT;
			break;
		}
		if (win ? sfu_step(w, true) : sfu_step_outside(w))
			continue;
		if (win && w->st.stop == SFU_STOP_OUTSIDE)
			return true;
		res->stop = w->st.stop;
		break;
	}
	return false;
}

/*
 * A non-faulting walk's frames in user-access windows: one for all the
 * frames the window can step, closed for each frame it cannot, which is
 * stepped outside.  The window opens on the stack the walk reads; where
 * that is not user memory, the walk goes on without one.
 */
static __always_inline void sfu_walk_windows(struct sfu_walk *w,
					     sfu_consume_fn consume, void *arg,
					     unsigned int max)
{
	const void __user *sp;
	bool outside;

	for (;;) {
		sp = (const void __user *)w->st.sp;
		if (!user_read_access_begin(sp, sizeof(long))) {
			sfu_walk_frames(w, consume, arg, max, true, false);
			return;
		}
		outside = sfu_walk_frames(w, consume, arg, max, true, true);
		user_read_access_end();
		if (!outside)
			return;
		if (!sfu_step_outside(w)) {
			w->res->stop = w->st.stop;
			return;
		}
	}
}

/*
 * The walk, inlined into each entry point below so that the store of
 * sfu_unwind_user() is a direct, inlined call rather than a call through
 * a pointer per frame; in windows if @win (a constant: only a
 * non-faulting walk whose @consume makes no call).
 */
static __always_inline int sfu_walk(struct pt_regs *regs, enum sfu_mem mode,
				    sfu_consume_fn consume, void *arg,
				    struct sfu_unwind_result *res, bool win)
{
	struct sfu_walk w = { .st.mode = mode, .res = res };
	unsigned int max = READ_ONCE(sfu_max_depth);

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
	if (!sfu_walk_begin(&w)) {
		sfu_walk_frames(&w, consume, arg, max, false, false);
		return 0;
	}
	if (win)
		sfu_walk_windows(&w, consume, arg, max);
	else
		sfu_walk_frames(&w, consume, arg, max, true, false);
	sfu_walk_end(&w);
	return 0;
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
 * @regs: registers the walk starts from; kernel-mode registers (a sample
 *	taken in the kernel) mean the task's user registers at entry
 * @mode: SFU_MEM_USER (task context, may fault and sleep) or
 *	SFU_MEM_USER_NOFAULT (any context)
 * @pcs: where the frames' PCs go, innermost first
 * @max: room in @pcs
 * @res: frame count, why the walk stopped and how frames were stepped
 *
 * At most max_depth frames.  A non-faulting walk runs with page faults
 * disabled and under the RCU read lock.
 *
 * Return: 0 (also for a walk that stopped early: see @res), or -EINVAL
 * for a task without an mm, a kernel thread given no user registers (one
 * that borrows an mm may pass some), or a compat task.
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
	if (mode == SFU_MEM_USER_NOFAULT)
		return sfu_walk(regs, mode, sfu_store_pc, &b, res, true);
	return sfu_walk(regs, mode, sfu_store_pc, &b, res, false);
}
