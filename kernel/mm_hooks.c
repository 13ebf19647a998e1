// SPDX-License-Identifier: GPL-2.0
/*
 * How the module learns of mappings and processes without kernel support.
 *
 * - Executable mappings: an ftrace hook on perf_event_mmap(), which every
 *   kernel since 2.6.31 calls for each new mapping (mmap_region(), so also
 *   the ELF loader's) and for mprotect(), with the VMA, the mmap lock held
 *   for writing.  If the file cache holds the file's index and the
 *   process has a registry, the hook registers the mapping itself, without
 *   sleeping (sfu_mapping_register_now(): dlopen() of a known library).  Else
 *   it notes the address and queues a task work, which runs when the task
 *   returns to user space (from mmap(), or from execve() with the new
 *   program in place), reads the file and registers the section.  Either
 *   way a library is registered before the mmap() that mapped it returns.
 * - Fork: an ftrace hook on perf_event_fork(), which copy_process() calls
 *   in the parent once the child's mm is copied, snapshots the parent's
 *   regions; a task work in the child inserts those still mapped before
 *   the child first runs in user space.
 * - Unmap: an ftrace hook on unmap_vmas(), which munmap(), MAP_FIXED,
 *   mremap() and brk() call with the range they take away (the range an
 *   mmu notifier would be told of, from the same place), drops the
 *   regions there.
 * - Exit (and exec, which drops the old mm): an ftrace hook on
 *   exit_mmap() drops the mm's registry.
 * - Where these two cannot serve (PREEMPT_RT, where a hook may be unable
 *   to run; a kernel whose unmap_vmas() compat.h does not know;
 *   a function ftrace cannot hook), each registry carries an mmu notifier
 *   for both (registry.c).  The exit hook then still drops the registry,
 *   and the notifier with it, before the kernel releases the mm's
 *   notifiers: a notifier still there at that point costs the exiting
 *   task an SRCU grace period, milliseconds per process.
 * - Processes that were running at load time, and mappings of a file
 *   that gets a sidecar: scanned (scan.c).
 *
 * The hooks are ftrace callbacks without ftrace's recursion guard (none of
 * them can recurse), so they run as preemptible as the hooked function:
 * a kprobe or a tracepoint would run them with preemption off, where a
 * PREEMPT_RT kernel forbids their allocations and spinlocks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "compat.h"
#include "forked.h"
#include "mapping.h"
#include "mm_hooks.h"
#include "registry.h"
#include "stats.h"
#include "twork.h"

#define SFU_MMAP_SYMBOL		"perf_event_mmap"
#define SFU_FORK_SYMBOL		"perf_event_fork"
#define SFU_EXIT_SYMBOL		"exit_mmap"
#define SFU_UNMAP_SYMBOL	"unmap_vmas"
/* How often unload looks whether the hooks under way have left. */
#define SFU_HOOKS_DRAIN_MS	1

struct sfu_map_work {
	struct sfu_twork tw;
	unsigned long addr;
};

struct sfu_fork_work {
	struct sfu_twork tw;
	struct sfu_forked *forked;	/* the parent's regions, for lookups */
};

/* A function the module hooks with ftrace, reading its first argument. */
struct sfu_fhook {
	const char *name;
	struct ftrace_ops ops;
	bool on;		/* registered: init and exit only */
};

/* Hook calls under way; unload waits for them (see sfu_mm_hooks_exit()). */
static atomic_t sfu_mm_hooks_busy = ATOMIC_INIT(0);

/*
 * The hooks allocate (GFP_ATOMIC) and take spinlocks.  ftrace calls them
 * as the hooked function runs, preemptible there; but when another ftrace
 * user watches the same function they run behind ftrace's list function
 * with preemption off.  A PREEMPT_RT kernel allows neither there (its
 * spinlocks sleep, its allocator may not be called): then they do
 * nothing and count it.  Return: whether the hook may run; if so, it
 * calls sfu_hook_leave() when done.
 */
static bool sfu_hook_enter(void)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT) && !preemptible()) {
		sfu_stat_inc(SFU_STAT_HOOK_SKIPPED);
		return false;
	}
	atomic_inc(&sfu_mm_hooks_busy);
	return true;
}

static void sfu_hook_leave(void)
{
	atomic_dec(&sfu_mm_hooks_busy);
}

static void sfu_map_work_fn(struct sfu_twork *tw)
{
	struct sfu_map_work *w = container_of(tw, struct sfu_map_work, tw);
	struct mm_struct *mm = current->mm;

	if (!mm || (current->flags & PF_EXITING))
		return;
	sfu_mapping_register(mm, current, w->addr, SFU_MAP_TASK);
}

static void sfu_map_work_free(struct sfu_twork *tw)
{
	kfree(container_of(tw, struct sfu_map_work, tw));
}

/* A new mapping: the mmap lock held for writing. */
static void sfu_mmap_seen(struct vm_area_struct *vma)
{
	struct sfu_map_work *w;

	if (!vma || !vma->vm_file || !(vma->vm_flags & VM_EXEC) ||
	    vma->vm_mm != current->mm ||
	    (current->flags & (PF_KTHREAD | PF_EXITING)))
		return;
	if (sfu_mapping_register_now(vma))
		return;
	w = kzalloc(sizeof(*w), GFP_ATOMIC | __GFP_NOWARN);
	if (!w) {
		sfu_stat_inc(SFU_STAT_REFUSED);
		sfu_stat_inc(SFU_STAT_REFUSED_NOMEM);
		return;
	}
	w->addr = vma->vm_start;
	w->tw.fn = sfu_map_work_fn;
	w->tw.free = sfu_map_work_free;
	if (sfu_twork_queue(current, &w->tw, TWA_RESUME))
		kfree(w);
}

/* perf_event_mmap(vma) */
static void notrace sfu_mmap_hook(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *ops,
				  struct ftrace_regs *fregs)
{
	if (!sfu_hook_enter())
		return;
	sfu_mmap_seen((struct vm_area_struct *)sfu_ftrace_arg(fregs, 0));
	sfu_hook_leave();
}

/* The hook reads perf_event_mmap()'s only argument as the VMA. */
static_assert(__same_type(&perf_event_mmap,
			  void (*)(struct vm_area_struct *vma)));

static struct sfu_fhook sfu_mmap_fhook = {
	.name = SFU_MMAP_SYMBOL,
	.ops = {
		.func = sfu_mmap_hook,
		.flags = SFU_FTRACE_ARG_FLAGS,
	},
};

/* Is @r's text still mapped, from the same file, in @mm?  mmap lock. */
static bool sfu_region_mapped(struct mm_struct *mm, const struct sfu_region *r)
{
	struct vm_area_struct *vma = vma_lookup(mm, r->start);

	if (!vma)
		return false;
	if (!r->file)
		return true;
	return vma->vm_file && file_inode(vma->vm_file) == file_inode(r->file);
}

static void sfu_fork_insert(struct mm_struct *mm, const struct sfu_map *snap)
{
	struct sfu_mm *smm;
	unsigned int i;

	smm = sfu_mm_get(mm, current);
	if (IS_ERR(smm))
		return;
	mmap_read_lock(mm);
	for (i = 0; i < snap->nr; i++) {
		struct sfu_region *r = snap->regions[i];

		if (!sfu_region_mapped(mm, r))
			continue;
		kref_get(&r->ref);
		if (sfu_mm_insert(smm, r, SFU_OVERLAP_REFUSE,
				  GFP_KERNEL_ACCOUNT))
			sfu_region_put(r);
	}
	mmap_read_unlock(mm);
}

/*
 * Lookups use the parent's snapshot until every region is in the child's
 * registry.  The snapshot's references go here, not when the item is
 * freed: retired items are freed lazily, and the regions would outlive
 * every mapping.
 */
static void sfu_fork_work_fn(struct sfu_twork *tw)
{
	struct sfu_fork_work *w = container_of(tw, struct sfu_fork_work, tw);
	struct mm_struct *mm = current->mm;

	if (mm && !(current->flags & PF_EXITING))
		sfu_fork_insert(mm, sfu_forked_snapshot(w->forked));
	sfu_forked_del(w->forked);
	w->forked = NULL;
}

static void sfu_fork_work_free(struct sfu_twork *tw)
{
	struct sfu_fork_work *w = container_of(tw, struct sfu_fork_work, tw);

	sfu_forked_del(w->forked);
	kfree(w);
}

/* In the parent, the child's mm copied, the child not yet running. */
static void sfu_fork_seen(struct task_struct *parent,
			  struct task_struct *child)
{
	struct sfu_map *snap = NULL;
	struct sfu_fork_work *w;
	struct sfu_mm *smm;

	if (!child || !child->mm || child->mm == parent->mm ||
	    (child->flags & PF_KTHREAD))
		return;
	w = kzalloc(sizeof(*w), GFP_ATOMIC | __GFP_NOWARN);
	if (!w)
		return;
	rcu_read_lock();
	smm = sfu_mm_find(parent->mm);
	if (smm)
		snap = sfu_mm_snapshot(smm);
	rcu_read_unlock();
	if (IS_ERR_OR_NULL(snap))
		goto free_work;
	w->forked = sfu_forked_add(child->mm, snap);
	if (!w->forked)
		goto free_work;
	w->tw.fn = sfu_fork_work_fn;
	w->tw.free = sfu_fork_work_free;
	if (!sfu_twork_queue(child, &w->tw, TWA_RESUME)) {
		sfu_stat_inc(SFU_STAT_FORKS);
		return;
	}
	sfu_forked_del(w->forked);
free_work:
	kfree(w);
}

/* perf_event_fork(child) */
static void notrace sfu_fork_hook(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *ops,
				  struct ftrace_regs *fregs)
{
	if (!sfu_hook_enter())
		return;
	sfu_fork_seen(current, (struct task_struct *)sfu_ftrace_arg(fregs, 0));
	sfu_hook_leave();
}

/* The hook reads perf_event_fork()'s only argument as the child. */
static_assert(__same_type(&perf_event_fork,
			  void (*)(struct task_struct *task)));

static struct sfu_fhook sfu_fork_fhook = {
	.name = SFU_FORK_SYMBOL,
	.ops = {
		.func = sfu_fork_hook,
		.flags = SFU_FTRACE_ARG_FLAGS,
	},
};

/* exit_mmap(mm): the last user of @mm is gone; the notifiers are next. */
static void notrace sfu_exit_mmap_hook(unsigned long ip,
				       unsigned long parent_ip,
				       struct ftrace_ops *ops,
				       struct ftrace_regs *fregs)
{
	struct mm_struct *mm = (struct mm_struct *)sfu_ftrace_arg(fregs, 0);

	if (!mm || !sfu_hook_enter())
		return;
	sfu_mm_exit(mm);
	sfu_hook_leave();
}

/* The hook reads exit_mmap()'s only argument as the mm. */
static_assert(__same_type(&exit_mmap, void (*)(struct mm_struct *mm)));

static struct sfu_fhook sfu_exit_fhook = {
	.name = SFU_EXIT_SYMBOL,
	.ops = {
		.func = sfu_exit_mmap_hook,
		.flags = SFU_FTRACE_ARG_FLAGS,
	},
};

/* unmap_vmas(): in the mm's unmapping task (compat.h reads the range). */
static void notrace sfu_unmap_hook(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *ops,
				   struct ftrace_regs *fregs)
{
	struct vm_area_struct *vma;
	unsigned long start, end;

	if (!sfu_unmap_range(fregs, &vma, &start, &end) || !sfu_hook_enter())
		return;
	sfu_mm_unmapped(vma->vm_mm, start, end);
	sfu_hook_leave();
}

static struct sfu_fhook sfu_unmap_fhook = {
	.name = SFU_UNMAP_SYMBOL,
	.ops = {
		.func = sfu_unmap_hook,
		.flags = SFU_FTRACE_ARG_FLAGS,
	},
};

/* Is the hook on unmap_vmas() there to keep registries exact? */
static bool sfu_unmap_hook_wanted(void)
{
	return SFU_HAVE_UNMAP_HOOK && !IS_ENABLED(CONFIG_PREEMPT_RT);
}

/**
 * sfu_ftrace_filter() - make @ops watch the function @symbol, and it alone
 * @ops: an ftrace ops not registered yet
 * @symbol: the function
 *
 * By address, never by name: ftrace_set_filter() reports success with an
 * empty filter, which means every function, when an allocation fails as
 * it matches the name (its match count then holds -ENOMEM; found by the
 * fault injection selftest on 6.12).  A hook or redirect called for every
 * function would crash the kernel.  A disabled kprobe, never armed, finds
 * the address.
 *
 * Return: 0, or a negative error code; on error the caller frees @ops's
 * filter with ftrace_free_filter().
 */
int sfu_ftrace_filter(struct ftrace_ops *ops, const char *symbol)
{
	struct kprobe kp = {
		.symbol_name = symbol,
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long addr;
	int ret;

	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	return ftrace_set_filter_ip(ops, addr, 0, 1);
}

static int sfu_fhook_on(struct sfu_fhook *h)
{
	int ret;

	ret = sfu_ftrace_filter(&h->ops, h->name);
	if (!ret)
		ret = register_ftrace_function(&h->ops);
	if (ret) {
		ftrace_free_filter(&h->ops);
		return ret;
	}
	h->on = true;
	return 0;
}

/* When this returns, no task runs the hook any more. */
static void sfu_fhook_off(struct sfu_fhook *h)
{
	if (!h->on)
		return;
	unregister_ftrace_function(&h->ops);
	ftrace_free_filter(&h->ops);
	h->on = false;
}

/**
 * sfu_mm_hooks_init() - start following mappings and forks
 *
 * Return: 0, or a negative error code with the reason logged; the kernel
 * is then one the module does not support.
 */
int sfu_mm_hooks_init(void)
{
	int ret;

	/* Unmaps and exits first: registries made from here on need them. */
	ret = sfu_fhook_on(&sfu_exit_fhook);
	if (ret)
		pr_info("%s() not traceable (%d): each exit with SFrame waits for an SRCU grace period\n",
			SFU_EXIT_SYMBOL, ret);
	if (!ret && sfu_unmap_hook_wanted()) {
		ret = sfu_fhook_on(&sfu_unmap_fhook);
		if (ret)
			pr_info("%s() not traceable (%d): unmaps tracked by an mmu notifier\n",
				SFU_UNMAP_SYMBOL, ret);
		else
			sfu_registry_use_hooks(true);
	}
	ret = sfu_fhook_on(&sfu_fork_fhook);
	if (ret) {
		pr_err("kernel not supported: cannot hook %s() (%d)\n",
		       SFU_FORK_SYMBOL, ret);
		goto unhook_exit;
	}
	ret = sfu_fhook_on(&sfu_mmap_fhook);
	if (ret) {
		pr_err("kernel not supported: cannot hook %s() (%d)\n",
		       SFU_MMAP_SYMBOL, ret);
		goto unhook_fork;
	}
	return 0;

unhook_fork:
	sfu_fhook_off(&sfu_fork_fhook);
unhook_exit:
	sfu_registry_use_hooks(false);
	sfu_fhook_off(&sfu_unmap_fhook);
	sfu_fhook_off(&sfu_exit_fhook);
	return ret;
}

/*
 * After this no hook runs or will run; queued task works may.  Registries
 * tied by the hooks miss the unmaps from here until sfu_registry_exit()
 * takes them down; nothing unwinds through them by then but deferred
 * walks still under way, which read user memory as for any section and
 * fail where it is gone.
 *
 * Unregistering an ops waits (RCU tasks) for the tasks that were
 * preempted in it, not for those that block there: on PREEMPT_RT a hook
 * may block on a spinlock.  So wait for the hooks under way to leave, and
 * once more for any task preempted on its way out after leaving.
 */
void sfu_mm_hooks_exit(void)
{
	sfu_fhook_off(&sfu_mmap_fhook);
	sfu_fhook_off(&sfu_fork_fhook);
	sfu_registry_use_hooks(false);
	sfu_fhook_off(&sfu_unmap_fhook);
	sfu_fhook_off(&sfu_exit_fhook);
	while (atomic_read(&sfu_mm_hooks_busy))
		msleep(SFU_HOOKS_DRAIN_MS);
	synchronize_rcu_tasks();
}
