/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place that knows how the kernels this module supports differ.
 *
 * Supported: Linux 6.1 up to the newest release tested (6.12 is the other
 * reference kernel).  Everything the module uses is exported or inline on
 * all of them; what differs is gathered here.
 */
#ifndef _SFU_COMPAT_H
#define _SFU_COMPAT_H

#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/version.h>

/* Linux 6.1 brought the maple tree and its VMA iterator. */
#ifndef for_each_vma
#error "sframe_unwind needs Linux 6.1 or later (for_each_vma())"
#endif

#ifndef CONFIG_MMU_NOTIFIER
#error "sframe_unwind needs CONFIG_MMU_NOTIFIER (unmap and exit tracking)"
#endif

#ifndef CONFIG_KPROBES
#error "sframe_unwind needs CONFIG_KPROBES (mmap tracking)"
#endif

#ifndef CONFIG_TRACEPOINTS
#error "sframe_unwind needs CONFIG_TRACEPOINTS (fork tracking)"
#endif

/*
 * An inode's modification and change times: fields until 6.6 (change
 * time) and 6.7 (modification time) made them private to accessors.
 */
static inline struct timespec64 sfu_inode_mtime(const struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	return inode_get_mtime(inode);
#else
	return inode->i_mtime;
#endif
}

static inline struct timespec64 sfu_inode_ctime(const struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	return inode_get_ctime(inode);
#else
	return inode->i_ctime;
#endif
}

/*
 * Whether the owner of @task (whose address space is @mm) may read it, as
 * ptrace's access check decides: prctl(PR_SET_DUMPABLE, 0) and the exec of
 * a set-id or unreadable file take that away.  @ns is then the user
 * namespace in which CAP_SYS_PTRACE still reads it.  Kept in the mm
 * until 7.2, in the task's exec state since (neither accessor exported).
 * Caller holds the RCU read lock.
 */
#if __has_include("linux/sched/exec_state.h")
#include <linux/sched/exec_state.h>

static inline bool sfu_task_dumpable(struct task_struct *task,
				     struct mm_struct *mm,
				     struct user_namespace **ns)
{
	struct task_exec_state *es = rcu_dereference(task->exec_state);

	*ns = es ? es->user_ns : &init_user_ns;
	return es && es->dumpable == TASK_DUMPABLE_OWNER;
}
#else
#include <linux/sched/coredump.h>

static inline bool sfu_task_dumpable(struct task_struct *task,
				     struct mm_struct *mm,
				     struct user_namespace **ns)
{
	*ns = mm->user_ns;
	return get_dumpable(mm) == SUID_DUMP_USER;
}
#endif

#include <linux/ftrace.h>
#include <linux/ptrace.h>

/* s390 passes the first five arguments in r2 to r6. */
#define SFU_S390_ARG_REG0	2

/*
 * Argument @n (from 0; at most the fifth) of a probed function.  s390's
 * regs_get_kernel_argument() calls regs_get_register(), which 6.1 does
 * not export.
 */
static inline unsigned long sfu_kprobe_arg(struct pt_regs *regs,
					   unsigned int n)
{
#ifdef CONFIG_S390
	return regs->gprs[SFU_S390_ARG_REG0 + n];
#else
	return regs_get_kernel_argument(regs, n);
#endif
}

/*
 * Send a function traced by an ftrace ops to @ip instead.  With
 * DYNAMIC_FTRACE_WITH_REGS (x86-64, s390x) the saved pt_regs carry the
 * return point; arm64 has only WITH_ARGS, where 6.12 sets it through the
 * ftrace_regs accessor.
 */
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_REGS
#define SFU_FTRACE_OPS_FLAGS	(FTRACE_OPS_FL_IPMODIFY | \
				 FTRACE_OPS_FL_RECURSION | \
				 FTRACE_OPS_FL_SAVE_REGS)

static __always_inline void sfu_ftrace_redirect(struct ftrace_regs *fregs,
						unsigned long ip)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);

	if (regs)
		instruction_pointer_set(regs, ip);
}
#elif defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS)
#define SFU_FTRACE_OPS_FLAGS	(FTRACE_OPS_FL_IPMODIFY | \
				 FTRACE_OPS_FL_RECURSION)

static __always_inline void sfu_ftrace_redirect(struct ftrace_regs *fregs,
						unsigned long ip)
{
	ftrace_regs_set_instruction_pointer(fregs, ip);
}
#else
#error "sframe_unwind needs DYNAMIC_FTRACE_WITH_REGS or _WITH_ARGS"
#endif

/*
 * Argument @n (at most the fifth) of a function an ftrace ops watches (without
 * changing where it goes): from the saved pt_regs with WITH_REGS, through
 * the ftrace_regs accessor with only WITH_ARGS.  These ops cannot recurse
 * (mm_hooks.c): without FTRACE_OPS_FL_RECURSION ftrace calls them directly,
 * preemptible where the watched function is.
 */
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_REGS
#define SFU_FTRACE_ARG_FLAGS	FTRACE_OPS_FL_SAVE_REGS

static __always_inline unsigned long sfu_ftrace_arg(struct ftrace_regs *fregs,
						    unsigned int n)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);

	return regs ? sfu_kprobe_arg(regs, n) : 0;
}
#else
#define SFU_FTRACE_ARG_FLAGS	0

static __always_inline unsigned long sfu_ftrace_arg(struct ftrace_regs *fregs,
						    unsigned int n)
{
	return ftrace_regs_get_argument(fregs, n);
}
#endif

/*
 * unmap_vmas(), which munmap(), MAP_FIXED, mremap(), brk() and exit_mmap()
 * call for the range they take away (the range an mmu notifier is told
 * of, from the same place).  Its prototype changes often:
 *  - up to 6.19 <linux/mm.h> declares it and its third to fifth arguments
 *    are the first VMA, start and end, whatever else it takes (6.1 a maple
 *    tree; 6.4 to 6.18 a maple state, a tree end and whether the mmap
 *    lock is held for writing; 6.19 without the latter).  The hook reads
 *    them where the prototype is one of those, checked at build time;
 *  - from 7.0 it takes a descriptor, struct unmap_desc, which mm/vma.h
 *    declares and no installed header does.  Its layout is copied here
 *    for the releases it was read from (7.2 and 7.3), by name and order:
 *    the first VMA (whose mm it is), then the range as vma_start and
 *    vma_end (0 and ULONG_MAX at exit).
 * On other kernels the module learns of unmaps through an mmu notifier,
 * whose release at exit costs an SRCU grace period per process.
 */
typedef void (*sfu_unmap_vmas_6_1_t)(struct mmu_gather *tlb,
				     struct maple_tree *mt,
				     struct vm_area_struct *start_vma,
				     unsigned long start, unsigned long end);
typedef void (*sfu_unmap_vmas_6_4_t)(struct mmu_gather *tlb,
				     struct ma_state *mas,
				     struct vm_area_struct *start_vma,
				     unsigned long start, unsigned long end,
				     unsigned long tree_end, bool mm_wr_locked);
typedef void (*sfu_unmap_vmas_6_19_t)(struct mmu_gather *tlb,
				      struct ma_state *mas,
				      struct vm_area_struct *start_vma,
				      unsigned long start, unsigned long end,
				      unsigned long tree_end);
#define SFU_UNMAP_ARG_DESC	1
#define SFU_UNMAP_ARG_VMA	2
#define SFU_UNMAP_ARG_START	3
#define SFU_UNMAP_ARG_END	4

struct sfu_unmap_desc {			/* struct unmap_desc of 7.2, 7.3 */
	struct ma_state *mas;
	struct vm_area_struct *first;
	unsigned long pg_start;
	unsigned long pg_end;
	unsigned long vma_start;
	unsigned long vma_end;
};

#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
#define SFU_UNMAP_BY_ARGS	(__same_type(&unmap_vmas, sfu_unmap_vmas_6_1_t) || \
				 __same_type(&unmap_vmas, sfu_unmap_vmas_6_4_t) || \
				 __same_type(&unmap_vmas, sfu_unmap_vmas_6_19_t))
#define SFU_UNMAP_BY_DESC	false
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(7, 2, 0) && \
	LINUX_VERSION_CODE < KERNEL_VERSION(7, 4, 0)
#define SFU_UNMAP_BY_ARGS	false
#define SFU_UNMAP_BY_DESC	true
#else
#define SFU_UNMAP_BY_ARGS	false
#define SFU_UNMAP_BY_DESC	false
#endif
#define SFU_HAVE_UNMAP_HOOK	(SFU_UNMAP_BY_ARGS || SFU_UNMAP_BY_DESC)

/*
 * The first VMA and the range of an unmap_vmas() call the hook sees, by
 * the prototype above.  Return: false if this kernel's is not known.
 */
static __always_inline bool sfu_unmap_range(struct ftrace_regs *fregs,
					    struct vm_area_struct **vma,
					    unsigned long *start,
					    unsigned long *end)
{
	const struct sfu_unmap_desc *desc;

	if (SFU_UNMAP_BY_ARGS) {
		*vma = (void *)sfu_ftrace_arg(fregs, SFU_UNMAP_ARG_VMA);
		*start = sfu_ftrace_arg(fregs, SFU_UNMAP_ARG_START);
		*end = sfu_ftrace_arg(fregs, SFU_UNMAP_ARG_END);
		return *vma;
	}
	if (!SFU_UNMAP_BY_DESC)
		return false;
	desc = (const void *)sfu_ftrace_arg(fregs, SFU_UNMAP_ARG_DESC);
	if (!desc)
		return false;
	*vma = desc->first;
	*start = desc->vma_start;
	*end = desc->vma_end;
	return *vma;
}

#endif /* _SFU_COMPAT_H */
