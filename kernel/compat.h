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

/* The program header binutils 2.40 and later emit for .sframe. */
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

/* The GNU build-id note type (binutils' elf/common.h). */
#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID		3
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

#include <linux/ftrace.h>
#include <linux/ptrace.h>

/*
 * The first argument of a probed function.  s390's
 * regs_get_kernel_argument() calls regs_get_register(), which 6.1 does
 * not export; the argument is in r2.
 */
static inline unsigned long sfu_kprobe_arg0(struct pt_regs *regs)
{
#ifdef CONFIG_S390
	return regs->gprs[2];
#else
	return regs_get_kernel_argument(regs, 0);
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
 * The first argument of a function an ftrace ops watches (without
 * changing where it goes): from the saved pt_regs with WITH_REGS, through
 * the ftrace_regs accessor with only WITH_ARGS.  These ops cannot recurse
 * (hooks.c): without FTRACE_OPS_FL_RECURSION ftrace calls them directly,
 * preemptible where the watched function is.
 */
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_REGS
#define SFU_FTRACE_ARG_FLAGS	FTRACE_OPS_FL_SAVE_REGS

static __always_inline unsigned long sfu_ftrace_arg0(struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);

	return regs ? sfu_kprobe_arg0(regs) : 0;
}
#else
#define SFU_FTRACE_ARG_FLAGS	0

static __always_inline unsigned long sfu_ftrace_arg0(struct ftrace_regs *fregs)
{
	return ftrace_regs_get_argument(fregs, 0);
}
#endif

#endif /* _SFU_COMPAT_H */
