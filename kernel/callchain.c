// SPDX-License-Identifier: GPL-2.0
/*
 * perf and ftrace user stacks from SFrame, on kernels that know nothing
 * of it.
 *
 * perf takes a sample's user call chain with perf_callchain_user(), in
 * the overflow handler (NMI or hard IRQ); ftrace's userstacktrace option
 * with stack_trace_save_user().  Both walk frame pointers.  An ftrace ops
 * with IPMODIFY on each of them sends tasks whose mm has SFrame registered
 * to a replacement here that runs the non-faulting walker instead (the
 * technique livepatch uses); every other task runs the kernel's own code,
 * untouched.  Unregistering the ops restores the kernel's behaviour for
 * all; ftrace waits for CPUs still in a replacement before it returns.
 *
 * When the walk stops because a page of .sframe or stack is not resident,
 * the sample keeps the frames found so far and a deferred request (which
 * faults) brings the pages in for the next samples.
 *
 * Kernels with the deferred unwinding core (CONFIG_UNWIND_USER, 6.17 and
 * later) walk user stacks a third way: unwind_user_faultable(), in task
 * work on the way back to user space, for perf's deferred call chains
 * (--call-graph fp,defer, 6.19) and any other user of unwind_deferred_*.
 * It walks frame pointers with unwind_user(), which is redirected the
 * same way to the faulting walker: there .sframe and stack pages that are
 * not resident are read in, not a reason to stop.
 *
 * Such a walk may sleep in a page fault for as long as the pager takes (a
 * FUSE server, userfaultfd), and RCU tasks counts a task asleep there as
 * quiescent, so unregistering the ops does not wait for it: unload counts
 * the faulting walks under way and waits for none to be left before the
 * module's text and the regions they hold go (sfu_callchain_exit()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/ftrace.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/stacktrace.h>
#include <linux/uaccess.h>
#ifdef CONFIG_UNWIND_USER
#include <linux/unwind_user.h>
#endif

#include "arch/arch.h"
#include "callchain.h"
#include "compat.h"
#include "deferred.h"
#include "mm_hooks.h"
#include "registry.h"
#include "stats.h"

struct sfu_redirect {
	const char *symbol;
	void *func;			/* the replacement */
	struct ftrace_ops ops;
	bool active;
};

static struct sfu_deferred sfu_fault_in;	/* walks to fault pages in */
static bool sfu_fault_in_ok;

/* How often unload looks whether the faulting walks have left. */
#define SFU_REDIRECT_DRAIN_MS		10
/* How often, in those looks, it says what it waits for. */
#define SFU_REDIRECT_REPORT_LOOKS	1000

/* Walks under way that may sleep in a page fault (sfu_callchain_exit()). */
static atomic_t sfu_callchain_busy = ATOMIC_INIT(0);

/* The deferred walk itself faulted the pages in; nothing to keep. */
static void sfu_fault_in_done(struct sfu_deferred *d,
			      const struct sfu_unwind_trace *trace, u64 cookie)
{
}

static void sfu_walk_done(const struct sfu_unwind_result *res)
{
	u64 cookie;

	if (res->table)
		sfu_stat_add(SFU_STAT_TABLE_FRAMES, res->table);
	if (res->stop != SFU_STOP_FAULT)
		return;
	sfu_stat_inc(SFU_STAT_SAMPLE_FAULTS);
	sfu_deferred_request(&sfu_fault_in, &cookie);
}

/*
 * Room for user frames in perf's call chain: what perf_callchain_store()
 * would still take.
 */
static u32 sfu_perf_room(const struct perf_callchain_entry_ctx *entry)
{
	if (entry->contexts_maxed || entry->nr >= entry->max_stack)
		return 0;
	return entry->max_stack - entry->nr;
}

/*
 * Replaces perf_callchain_user() for tasks with SFrame.  The frames go
 * straight into perf's array, as perf_callchain_store() would put them
 * one by one (both counts advance), so that the walk makes no call per
 * frame to store them.
 */
static void sfu_perf_callchain_user(struct perf_callchain_entry_ctx *entry,
				    struct pt_regs *regs)
{
	struct perf_callchain_entry *chain = entry->entry;
	struct sfu_unwind_result res;

	/* A sample of a guest on a vCPU thread: no user stack of ours. */
	if (current->flags & PF_VCPU)
		return;
	static_assert(sizeof(chain->ip[0]) == sizeof(unsigned long));
	if (sfu_unwind_user(regs, SFU_MEM_USER_NOFAULT,
			    (unsigned long *)&chain->ip[chain->nr],
			    sfu_perf_room(entry), &res))
		return;
	chain->nr += res.nr;
	entry->nr += res.nr;
	sfu_stat_inc(SFU_STAT_PERF_WALKS);
	sfu_walk_done(&res);
}

/* Replaces stack_trace_save_user() for tasks with SFrame. */
static unsigned int sfu_stack_trace_save_user(unsigned long *store,
					      unsigned int size)
{
	struct sfu_unwind_result res;

	if (sfu_unwind_user(NULL, SFU_MEM_USER_NOFAULT, store, size, &res))
		return 0;
	sfu_stat_inc(SFU_STAT_FTRACE_WALKS);
	sfu_walk_done(&res);
	return res.nr;
}

#ifdef CONFIG_UNWIND_USER
/*
 * May current fault here?  Not in interrupt context, with page faults or
 * preemption off, nor inside an RCU read-side section, which a preemptible
 * RCU (and PREEMPT_RT's sleeping spinlocks, which take one) leaves
 * preemptible.
 */
static bool sfu_may_fault(void)
{
	return in_task() && !pagefault_disabled() && preemptible() &&
	       !rcu_preempt_depth();
}

/*
 * Replaces unwind_user() for tasks with SFrame.  The kernel calls it from
 * unwind_user_faultable(), in task context where it may fault; should
 * another caller walk where it may not, the walk does not fault either.
 * The walk is counted from before it may first sleep until after it last
 * touches module data, for unload.
 */
static int sfu_unwind_user_kernel(struct unwind_stacktrace *trace,
				  unsigned int max_entries)
{
	struct sfu_unwind_result res;
	enum sfu_mem mode = SFU_MEM_USER;
	int ret;

	trace->nr = 0;
	if (!max_entries)
		return -EINVAL;
	if (!sfu_may_fault())
		mode = SFU_MEM_USER_NOFAULT;
	atomic_inc(&sfu_callchain_busy);
	ret = sfu_unwind_user(NULL, mode, trace->entries, max_entries, &res);
	if (!ret) {
		trace->nr = res.nr;
		sfu_stat_inc(SFU_STAT_KERNEL_DEFERRED_WALKS);
		if (res.table)
			sfu_stat_add(SFU_STAT_TABLE_FRAMES, res.table);
	}
	atomic_dec(&sfu_callchain_busy);
	return 0;
}

static_assert(__same_type(&sfu_unwind_user_kernel, &unwind_user));
#endif

/*
 * Does current's user stack have SFrame to walk?  Any context.  A task the
 * walker does not serve (a 32-bit compat task, which can have a registry
 * through the compat ioctl) keeps the kernel's own walk.
 */
static bool sfu_current_has_sframe(void)
{
	struct mm_struct *mm = current->mm;
	bool has;

	if (!mm || (current->flags & PF_KTHREAD) ||
	    !sfu_arch_user_regs_ok(task_pt_regs(current)))
		return false;
	rcu_read_lock();
	has = sfu_mm_known(mm);
	rcu_read_unlock();
	return has;
}

static void notrace sfu_callchain_thunk(unsigned long ip,
				       unsigned long parent_ip,
				       struct ftrace_ops *ops,
				       struct ftrace_regs *fregs)
{
	struct sfu_redirect *r = container_of(ops, struct sfu_redirect, ops);

	if (sfu_current_has_sframe())
		sfu_ftrace_redirect(fregs, (unsigned long)r->func);
}

/* The replacements must have the prototypes of what they replace. */
static_assert(__same_type(&sfu_perf_callchain_user, &perf_callchain_user));
#if defined(CONFIG_STACKTRACE) && defined(CONFIG_USER_STACKTRACE_SUPPORT)
static_assert(__same_type(&sfu_stack_trace_save_user,
			  &stack_trace_save_user));
#endif

static struct sfu_redirect sfu_redirects[] = {
	{
		.symbol = "perf_callchain_user",
		.func = sfu_perf_callchain_user,
	},
	{
		.symbol = "stack_trace_save_user",
		.func = sfu_stack_trace_save_user,
	},
#ifdef CONFIG_UNWIND_USER
	{
		.symbol = "unwind_user",
		.func = sfu_unwind_user_kernel,
	},
#endif
};

static int sfu_callchain_on(struct sfu_redirect *r)
{
	int ret;

	r->ops.func = sfu_callchain_thunk;
	r->ops.flags = SFU_FTRACE_OPS_FLAGS;
	ret = sfu_ftrace_filter(&r->ops, r->symbol);
	if (!ret)
		ret = register_ftrace_function(&r->ops);
	if (ret) {
		ftrace_free_filter(&r->ops);
		pr_warn("%s() not redirected (%d): its users keep the kernel's user stacks\n",
			r->symbol, ret);
		return ret;
	}
	r->active = true;
	return 0;
}

/**
 * sfu_callchain_init() - send perf's and ftrace's user stacks through SFrame
 *
 * A function that cannot be redirected on this kernel is reported and left
 * alone; the module works without it.
 */
void sfu_callchain_init(void)
{
	unsigned int i;

	if (sfu_deferred_init(&sfu_fault_in, sfu_fault_in_done)) {
		pr_warn("no deferred consumer left: perf and ftrace keep the kernel's user stacks\n");
		return;
	}
	sfu_fault_in_ok = true;
	for (i = 0; i < ARRAY_SIZE(sfu_redirects); i++)
		sfu_callchain_on(&sfu_redirects[i]);
}

/*
 * Wait for the walks that may sleep in a page fault to leave.  Each was
 * counted before it could first sleep: once unregistering the ops has
 * waited (RCU tasks) for every task preempted between the ops and the
 * count, a walk is either counted or will never start.  A task may still
 * be preempted between the count's drop and its return: one more grace
 * period of RCU tasks waits for it.
 */
static void sfu_callchain_drain(void)
{
	unsigned int looks = 0;
	int busy;

	synchronize_rcu_tasks();
	while ((busy = atomic_read(&sfu_callchain_busy))) {
		if (!(looks++ % SFU_REDIRECT_REPORT_LOOKS))
			pr_info("unload waits for %d deferred walk(s) asleep in a page fault\n",
				busy);
		msleep(SFU_REDIRECT_DRAIN_MS);
	}
	synchronize_rcu_tasks();
}

/*
 * Give the kernel its own user stacks back; waits for running walks,
 * faulting ones included, however long their page faults take.
 */
void sfu_callchain_exit(void)
{
	unsigned int i;
	bool drain = false;

	for (i = 0; i < ARRAY_SIZE(sfu_redirects); i++) {
		struct sfu_redirect *r = &sfu_redirects[i];

		if (!r->active)
			continue;
		unregister_ftrace_function(&r->ops);
		ftrace_free_filter(&r->ops);
		r->active = false;
		drain = true;
	}
	if (drain)
		sfu_callchain_drain();
	if (sfu_fault_in_ok)
		sfu_deferred_cancel(&sfu_fault_in);
	sfu_fault_in_ok = false;
}

/**
 * sfu_callchain_active() - is @symbol's redirection in place?
 * @symbol: "perf_callchain_user", "stack_trace_save_user" or "unwind_user"
 *
 * Return: true if it is.
 */
bool sfu_callchain_active(const char *symbol)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sfu_redirects); i++)
		if (!strcmp(sfu_redirects[i].symbol, symbol))
			return sfu_redirects[i].active;
	return false;
}
