/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hooks on the kernel's mmap, fork, munmap and exit paths
 * (mm_hooks.c).
 */
#ifndef _SFU_MM_HOOKS_H
#define _SFU_MM_HOOKS_H

struct ftrace_ops;

int sfu_mm_hooks_init(void);
void sfu_mm_hooks_exit(void);
int sfu_ftrace_filter(struct ftrace_ops *ops, const char *symbol);

#endif /* _SFU_MM_HOOKS_H */
