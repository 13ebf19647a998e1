// SPDX-License-Identifier: GPL-2.0
/*
 * Scans of the processes that run: at load, for the SFrame of everything
 * they map (the hooks only see mappings made later), and when a sidecar
 * is registered, for the mappings of its file that exist already.  Each
 * process's mm is scanned by sfu_scan_mm() with a user reference held,
 * outside RCU; mapping.c registers each executable mapping found.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "mapping.h"
#include "scan.h"
#include "stats.h"

/* Executable mappings a scan of one mm looks at. */
#define SFU_SCAN_MAX_VMAS	4096

/* Is @vma an executable mapping of @inode (of any file if NULL)? */
static bool sfu_scan_wants(const struct vm_area_struct *vma,
			   const struct inode *inode)
{
	if (!vma->vm_file || !(vma->vm_flags & VM_EXEC))
		return false;
	return !inode || file_inode(vma->vm_file) == inode;
}

/**
 * sfu_scan_mm() - register the SFrame of the executable mappings of @mm
 * @mm: the address space; the caller holds a user reference
 * @owner: a task of @mm, named in listings
 * @inode: only the mappings of this file, or NULL for all
 *
 * For processes that were running before the module was loaded (all
 * mappings), and for those that mapped a file before a sidecar for it
 * was registered (that file's mappings).
 *
 * Return: 0 or a negative error code.
 */
static int sfu_scan_mm(struct mm_struct *mm, struct task_struct *owner,
		       const struct inode *inode)
{
	unsigned long *starts;
	struct vm_area_struct *vma;
	unsigned int i, n = 0;

	starts = kvmalloc_array(SFU_SCAN_MAX_VMAS, sizeof(*starts),
				GFP_KERNEL | __GFP_NOWARN);
	if (!starts)
		return -ENOMEM;
	mmap_read_lock(mm);
	{
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma) {
			if (n == SFU_SCAN_MAX_VMAS)
				break;
			if (sfu_scan_wants(vma, inode))
				starts[n++] = vma->vm_start;
		}
	}
	mmap_read_unlock(mm);
	for (i = 0; i < n; i++) {
		if (fatal_signal_pending(current))
			break;
		sfu_mapping_register(mm, owner, starts[i], false);
	}
	kvfree(starts);
	if (!inode)
		sfu_stat_inc(SFU_STAT_SCANNED_MMS);
	return 0;
}

/* Scan every process's mappings (of @inode only, if not NULL). */
static void sfu_scan_processes(const struct inode *inode)
{
	struct task_struct **tasks, *p;
	unsigned int i, n = 0, cap = 0;

	rcu_read_lock();
	for_each_process(p)
		cap++;
	rcu_read_unlock();
	tasks = kvmalloc_array(cap, sizeof(*tasks), GFP_KERNEL | __GFP_NOWARN);
	if (!tasks)
		return;
	rcu_read_lock();
	for_each_process(p) {
		if (n == cap)
			break;
		if (p->flags & PF_KTHREAD)
			continue;
		get_task_struct(p);
		tasks[n++] = p;
	}
	rcu_read_unlock();
	for (i = 0; i < n; i++) {
		struct mm_struct *mm = get_task_mm(tasks[i]);

		if (mm) {
			if (!fatal_signal_pending(current))
				sfu_scan_mm(mm, tasks[i], inode);
			mmput(mm);
		}
		put_task_struct(tasks[i]);
	}
	kvfree(tasks);
}

/**
 * sfu_scan_all() - register the SFrame of every process already running
 *
 * Called once at load, from insmod, after the hooks are in place (so a
 * mapping made during the scan is seen by one or the other).
 */
void sfu_scan_all(void)
{
	sfu_scan_processes(NULL);
}

/**
 * sfu_scan_file() - register a new sidecar for the mappings it now covers
 * @inode: the file the sidecar was registered for
 *
 * Called after the sidecar is in the table, so that later mappings get it
 * from the mmap hook and earlier ones from this scan.
 */
void sfu_scan_file(const struct inode *inode)
{
	sfu_scan_processes(inode);
}

