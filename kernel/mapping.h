/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From a mapped file to a registered region (mapping.c).
 */
#ifndef _SFU_MAPPING_H
#define _SFU_MAPPING_H

#include <linux/types.h>

struct mm_struct;
struct task_struct;
struct vm_area_struct;

/* Who registers a mapping: how it takes the mmap lock, whether it waits. */
enum sfu_map_from {
	SFU_MAP_TASK,	/* the mapping task, on its way back to user space */
	SFU_MAP_SCAN,	/* a scan of another process (scan.c) */
};

bool sfu_mapping_register_now(struct vm_area_struct *vma);
int sfu_mapping_register(struct mm_struct *mm, struct task_struct *owner,
			 unsigned long addr, enum sfu_map_from from);

#endif /* _SFU_MAPPING_H */
