// SPDX-License-Identifier: GPL-2.0
/*
 * How the module learns of mappings and processes without kernel support.
 *
 * - Executable mappings: a kprobe on perf_event_mmap(), which every kernel
 *   since 2.6.31 calls for each new mapping (mmap_region(), so also the
 *   ELF loader's) and for mprotect(), with the VMA, the mmap lock held for
 *   writing.  The probe only notes the address and queues a task work;
 *   the work runs when the task returns to user space (from mmap(), or
 *   from execve() with the new program in place), reads the file and
 *   registers the section.  So a library is registered before the mmap()
 *   that mapped it returns.
 * - Fork: the sched_process_fork tracepoint (found by name, it is not
 *   exported) snapshots the parent's regions; a task work in the child
 *   inserts those still mapped before the child first runs in user space.
 * - Unmap: the mmu notifier of each registry (registry.c).
 * - Exit (and exec, which drops the old mm): an ftrace hook on
 *   exit_mmap() drops the mm's registry, and with it the module's mmu
 *   notifier, before the kernel releases the mm's notifiers.  A notifier
 *   still there at that point costs the exiting task an SRCU grace period
 *   (mmu_notifier_release() waits for one), milliseconds per process.  On
 *   a kernel where exit_mmap() cannot be traced the notifier's release
 *   callback does the same work, at that cost.
 * - Processes that were running at load time, and mappings of a file
 *   that gets a sidecar: scanned (scan.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <trace/events/sched.h>

#include "compat.h"
#include "sfu.h"

#define SFU_MMAP_SYMBOL		"perf_event_mmap"
#define SFU_FORK_TRACEPOINT	"sched_process_fork"
#define SFU_EXIT_SYMBOL		"exit_mmap"

struct sfu_map_work {
	struct sfu_twork tw;
	unsigned long addr;
};

struct sfu_fork_work {
	struct sfu_twork tw;
	struct sfu_map *snap;
};

static void sfu_map_work_fn(struct sfu_twork *tw)
{
	struct sfu_map_work *w = container_of(tw, struct sfu_map_work, tw);
	struct mm_struct *mm = current->mm;

	if (!mm || (current->flags & PF_EXITING))
		return;
	sfu_elf_register_vma(mm, current, w->addr);
}

static void sfu_map_work_free(struct sfu_twork *tw)
{
	kfree(container_of(tw, struct sfu_map_work, tw));
}

/* kprobe on perf_event_mmap(vma): atomic context, mmap lock held. */
static int sfu_mmap_probe(struct kprobe *kp, struct pt_regs *regs)
{
	struct vm_area_struct *vma;
	struct sfu_map_work *w;

	vma = (struct vm_area_struct *)sfu_kprobe_arg0(regs);
	if (!vma || !vma->vm_file || !(vma->vm_flags & VM_EXEC) ||
	    vma->vm_mm != current->mm ||
	    (current->flags & (PF_KTHREAD | PF_EXITING)))
		return 0;
	w = kzalloc(sizeof(*w), GFP_ATOMIC | __GFP_NOWARN);
	if (!w) {
		sfu_stat_inc(SFU_STAT_REFUSED);
		sfu_stat_inc(SFU_STAT_REFUSED_NOMEM);
		return 0;
	}
	w->addr = vma->vm_start;
	w->tw.fn = sfu_map_work_fn;
	w->tw.free = sfu_map_work_free;
	if (sfu_twork_queue(current, &w->tw, TWA_RESUME))
		kfree(w);
	return 0;
}

/* The probe reads perf_event_mmap()'s only argument as the VMA. */
static_assert(__same_type(&perf_event_mmap,
			  void (*)(struct vm_area_struct *vma)));

static struct kprobe sfu_mmap_kprobe = {
	.symbol_name = SFU_MMAP_SYMBOL,
	.pre_handler = sfu_mmap_probe,
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

static void sfu_fork_work_fn(struct sfu_twork *tw)
{
	struct sfu_fork_work *w = container_of(tw, struct sfu_fork_work, tw);
	struct mm_struct *mm = current->mm;
	struct sfu_mm *smm;
	unsigned int i;

	if (!mm || (current->flags & PF_EXITING))
		return;
	smm = sfu_mm_get(mm, current);
	if (IS_ERR(smm))
		return;
	mmap_read_lock(mm);
	for (i = 0; i < w->snap->nr; i++) {
		struct sfu_region *r = w->snap->regions[i];

		if (!sfu_region_mapped(mm, r))
			continue;
		kref_get(&r->ref);
		if (sfu_mm_insert(smm, r, SFU_OVERLAP_REFUSE))
			sfu_region_put(r);
	}
	mmap_read_unlock(mm);
}

static void sfu_fork_work_free(struct sfu_twork *tw)
{
	struct sfu_fork_work *w = container_of(tw, struct sfu_fork_work, tw);

	sfu_map_release(w->snap);
	kfree(w);
}

/* sched_process_fork: in the parent, the child not yet running. */
static void sfu_fork_probe(void *data, struct task_struct *parent,
			   struct task_struct *child)
{
	struct sfu_fork_work *w;
	struct sfu_mm *smm;

	if (!child->mm || child->mm == parent->mm ||
	    (child->flags & PF_KTHREAD))
		return;
	w = kzalloc(sizeof(*w), GFP_ATOMIC | __GFP_NOWARN);
	if (!w)
		return;
	rcu_read_lock();
	smm = sfu_mm_find(parent->mm);
	if (smm)
		w->snap = sfu_mm_snapshot(smm);
	rcu_read_unlock();
	if (IS_ERR_OR_NULL(w->snap))
		goto free_work;
	w->tw.fn = sfu_fork_work_fn;
	w->tw.free = sfu_fork_work_free;
	if (!sfu_twork_queue(child, &w->tw, TWA_RESUME)) {
		sfu_stat_inc(SFU_STAT_FORKS);
		return;
	}
free_work:
	sfu_map_release(w->snap);
	kfree(w);
}

/* exit_mmap(mm): the last user of @mm is gone; the notifiers are next. */
static void notrace sfu_exit_mmap_hook(unsigned long ip,
				       unsigned long parent_ip,
				       struct ftrace_ops *ops,
				       struct ftrace_regs *fregs)
{
	struct mm_struct *mm = (struct mm_struct *)sfu_ftrace_arg0(fregs);

	if (mm)
		sfu_mm_exit(mm);
}

/* The hook reads exit_mmap()'s only argument as the mm. */
static_assert(__same_type(&exit_mmap, void (*)(struct mm_struct *mm)));

static struct ftrace_ops sfu_exit_ops = {
	.func = sfu_exit_mmap_hook,
	.flags = SFU_FTRACE_ARG_FLAGS,
};

static bool sfu_exit_hooked;

static void sfu_exit_hook_on(void)
{
	char name[] = SFU_EXIT_SYMBOL;
	int ret;

	ret = ftrace_set_filter(&sfu_exit_ops, name, strlen(name), 1);
	if (!ret)
		ret = register_ftrace_function(&sfu_exit_ops);
	if (ret) {
		ftrace_free_filter(&sfu_exit_ops);
		pr_info("%s() not traceable (%d): each exit with SFrame waits for an SRCU grace period\n",
			SFU_EXIT_SYMBOL, ret);
		return;
	}
	sfu_exit_hooked = true;
}

static void sfu_exit_hook_off(void)
{
	if (!sfu_exit_hooked)
		return;
	unregister_ftrace_function(&sfu_exit_ops);
	ftrace_free_filter(&sfu_exit_ops);
	sfu_exit_hooked = false;
}

/* The probe has the prototype the tracepoint calls (not exported). */
static_assert(__same_type(&register_trace_sched_process_fork,
			  int (*)(typeof(&sfu_fork_probe), void *)));

static struct tracepoint *sfu_fork_tp;

static void sfu_find_tracepoint(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, SFU_FORK_TRACEPOINT))
		*(struct tracepoint **)priv = tp;
}

/**
 * sfu_hooks_init() - start following mappings and forks
 *
 * Return: 0, or a negative error code with the reason logged; the kernel
 * is then one the module does not support.
 */
int sfu_hooks_init(void)
{
	int ret;

	for_each_kernel_tracepoint(sfu_find_tracepoint, &sfu_fork_tp);
	if (!sfu_fork_tp) {
		pr_err("kernel not supported: no %s tracepoint\n",
		       SFU_FORK_TRACEPOINT);
		return -ENODEV;
	}
	ret = tracepoint_probe_register(sfu_fork_tp, sfu_fork_probe, NULL);
	if (ret) {
		pr_err("kernel not supported: cannot attach to %s (%d)\n",
		       SFU_FORK_TRACEPOINT, ret);
		return ret;
	}
	ret = register_kprobe(&sfu_mmap_kprobe);
	if (ret) {
		pr_err("kernel not supported: cannot probe %s() (%d)\n",
		       SFU_MMAP_SYMBOL, ret);
		goto unregister_tracepoint;
	}
	sfu_exit_hook_on();
	return 0;

unregister_tracepoint:
	tracepoint_probe_unregister(sfu_fork_tp, sfu_fork_probe, NULL);
	tracepoint_synchronize_unregister();
	return ret;
}

/* After this no hook runs or will run; queued task works may. */
void sfu_hooks_exit(void)
{
	sfu_exit_hook_off();
	unregister_kprobe(&sfu_mmap_kprobe);
	tracepoint_probe_unregister(sfu_fork_tp, sfu_fork_probe, NULL);
	tracepoint_synchronize_unregister();
}
