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
 * to their next mapping (counted as scan_contended); the load scan leaves
 * files on FUSE to their next mapping too.  A sidecar's scan looks only
 * at the processes whose mm maps the file executable: the mms are read
 * from the file's i_mmap tree (walked whole with rb_next(), as the
 * interval tree's iterators are not exported to modules), and tasks are
 * matched to them by pointer, which is never followed.
 */
#include <linux/bsearch.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/mm.h>
#include <linux/rbtree.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "mapping.h"
#include "scan.h"
#include "stats.h"

/* Executable mappings a scan of one mm looks at. */
#define SFU_SCAN_MAX_VMAS	4096
/* How long a scan lets a taken mmap lock be before it tries once more. */
#define SFU_SCAN_RETRY_MS	20

/*
 * Is @vma an executable mapping of @inode, or of any file but one on FUSE
 * if NULL?  Registering a mapping reads its file's headers, and a user's
 * FUSE server may never answer: the load scan, in insmod, leaves such
 * files to their next mapping.  A sidecar's scan reads the file its
 * ADD_FILE just named, in the caller's own time.
 */
static bool sfu_scan_wants(const struct vm_area_struct *vma,
			   const struct inode *inode)
{
	if (!vma->vm_file || !(vma->vm_flags & VM_EXEC))
		return false;
	if (inode)
		return file_inode(vma->vm_file) == inode;
	return file_inode(vma->vm_file)->i_sb->s_magic != FUSE_SUPER_MAGIC;
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
	/*
	 * Only the processes of these mms (sorted; NULL: every process):
	 * names, not references, compared and never followed.
	 */
	const struct mm_struct **mms;
	unsigned int nr_mms;
};

static int sfu_scan_cmp_mm(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const struct mm_struct * const *)a;
	uintptr_t y = (uintptr_t)*(const struct mm_struct * const *)b;

	return x < y ? -1 : x > y;
}

/* Does @set scan the process @p? */
static bool sfu_scan_takes(const struct sfu_scan_set *set,
			   struct task_struct *p)
{
	const struct mm_struct *mm = READ_ONCE(p->mm);

	if (p->flags & PF_KTHREAD)
		return false;
	return !set->mms || bsearch(&mm, set->mms, set->nr_mms,
				    sizeof(*set->mms), sfu_scan_cmp_mm);
}

/* The executable mappings of @mapping, up to @room of them: their mms. */
static unsigned int sfu_scan_read_mms(struct address_space *mapping,
				      const struct mm_struct **mms,
				      unsigned int room)
{
	struct vm_area_struct *vma;
	struct rb_node *node;
	unsigned int n = 0;

	i_mmap_lock_read(mapping);
	for (node = rb_first_cached(&mapping->i_mmap); node;
	     node = rb_next(node)) {
		vma = rb_entry(node, struct vm_area_struct, shared.rb);
		if (!(vma->vm_flags & VM_EXEC))
			continue;
		if (n < room && mms)
			mms[n] = vma->vm_mm;
		n++;
	}
	i_mmap_unlock_read(mapping);
	return n;
}

/*
 * The mms that map @inode executable, into @set: counted first, then read
 * into an array of that size (nothing is allocated under the i_mmap lock,
 * which reclaim takes); mappings made meanwhile have the mmap hook.
 */
static int sfu_scan_file_mms(struct sfu_scan_set *set,
			     const struct inode *inode)
{
	unsigned int room = sfu_scan_read_mms(inode->i_mapping, NULL, 0);

	set->mms = kvmalloc_array(max(room, 1U), sizeof(*set->mms),
				  GFP_KERNEL | __GFP_NOWARN);
	if (!set->mms)
		return -ENOMEM;
	set->nr_mms = min(room, sfu_scan_read_mms(inode->i_mapping, set->mms,
						  room));
	sort(set->mms, set->nr_mms, sizeof(*set->mms), sfu_scan_cmp_mm, NULL);
	return 0;
}

static int sfu_scan_collect(struct sfu_scan_set *set)
{
	struct task_struct *p;
	unsigned int cap = 0;

	rcu_read_lock();
	for_each_process(p)
		cap += sfu_scan_takes(set, p);
	rcu_read_unlock();
	set->nr = 0;
	set->tasks = kvmalloc_array(max(cap, 1U), sizeof(*set->tasks),
				    GFP_KERNEL | __GFP_NOWARN);
	if (!set->tasks)
		return -ENOMEM;
	rcu_read_lock();
	for_each_process(p) {
		if (set->nr == cap)
			break;
		if (!sfu_scan_takes(set, p))
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
	struct sfu_scan_set set = { };
	unsigned int i;

	if (inode && sfu_scan_file_mms(&set, inode))
		return;
	if ((inode && !set.nr_mms) || sfu_scan_collect(&set))
		goto free_mms;
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
free_mms:
	kvfree(set.mms);
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

