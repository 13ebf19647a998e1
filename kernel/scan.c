// SPDX-License-Identifier: GPL-2.0
/*
 * Scans of the processes that run: at load, for the SFrame of everything
 * they map (the hooks only see mappings made later), and when a sidecar
 * is registered, for the mappings of its file that exist already.  Each
 * process's mm is scanned by sfu_scan_mm() with a user reference held,
 * outside RCU; mapping.c registers each executable mapping found.
 *
 * A scan waits for no process: any user can hold their own mm's mmap lock
 * for as long as they like (a fault on a FUSE file whose server does not
 * answer, with a writer queued behind it).  So a scan only try-locks an
 * mm, comes back once to those it found taken, and leaves any still taken
 * to their next mapping (counted as scan_contended).  A sidecar's scan
 * still looks at every process: the file's i_mmap tree would name the mms
 * that map it, but its iterators are not exported to modules.
 */
#include <linux/delay.h>
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
/* How long a scan lets a taken mmap lock be before it tries once more. */
#define SFU_SCAN_RETRY_MS	20

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
 * Return: 0, -EBUSY if @mm's mmap lock was taken (for the mm or one of
 * its mappings: the scan comes back), or a negative error code.
 */
static int sfu_scan_mm(struct mm_struct *mm, struct task_struct *owner,
		       const struct inode *inode)
{
	unsigned long *starts;
	struct vm_area_struct *vma;
	unsigned int i, n = 0;
	int ret = 0;

	starts = kvmalloc_array(SFU_SCAN_MAX_VMAS, sizeof(*starts),
				GFP_KERNEL | __GFP_NOWARN);
	if (!starts)
		return -ENOMEM;
	if (!mmap_read_trylock(mm)) {
		kvfree(starts);
		return -EBUSY;
	}
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
		if (sfu_mapping_register(mm, owner, starts[i],
					 SFU_MAP_SCAN) == -EBUSY)
			ret = -EBUSY;
	}
	kvfree(starts);
	if (!inode && !ret)
		sfu_stat_inc(SFU_STAT_SCANNED_MMS);
	return ret;
}

/* The processes of a scan, each with a task reference. */
struct sfu_scan_set {
	struct task_struct **tasks;
	unsigned int nr;
};

static int sfu_scan_collect(struct sfu_scan_set *set)
{
	struct task_struct *p;
	unsigned int cap = 0;

	rcu_read_lock();
	for_each_process(p)
		cap++;
	rcu_read_unlock();
	set->nr = 0;
	set->tasks = kvmalloc_array(cap, sizeof(*set->tasks),
				    GFP_KERNEL | __GFP_NOWARN);
	if (!set->tasks)
		return -ENOMEM;
	rcu_read_lock();
	for_each_process(p) {
		if (set->nr == cap)
			break;
		if (p->flags & PF_KTHREAD)
			continue;
		get_task_struct(p);
		set->tasks[set->nr++] = p;
	}
	rcu_read_unlock();
	return 0;
}

/*
 * Scan the mm of each process in @set; drop those done (or gone) from it
 * and keep those whose mmap lock was taken.
 */
static void sfu_scan_pass(struct sfu_scan_set *set, const struct inode *inode)
{
	unsigned int i, kept = 0;

	for (i = 0; i < set->nr; i++) {
		struct task_struct *p = set->tasks[i];
		struct mm_struct *mm = get_task_mm(p);
		int ret = 0;

		if (mm) {
			if (!fatal_signal_pending(current))
				ret = sfu_scan_mm(mm, p, inode);
			mmput(mm);
		}
		if (ret == -EBUSY)
			set->tasks[kept++] = p;
		else
			put_task_struct(p);
	}
	set->nr = kept;
}

/* Scan every process's mappings (of @inode only, if not NULL). */
static void sfu_scan_processes(const struct inode *inode)
{
	struct sfu_scan_set set;
	unsigned int i;

	if (sfu_scan_collect(&set))
		return;
	sfu_scan_pass(&set, inode);
	if (set.nr && !fatal_signal_pending(current)) {
		msleep_interruptible(SFU_SCAN_RETRY_MS);
		sfu_scan_pass(&set, inode);
	}
	for (i = 0; i < set.nr; i++) {
		sfu_stat_inc(SFU_STAT_SCAN_CONTENDED);
		put_task_struct(set.tasks[i]);
	}
	kvfree(set.tasks);
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

