// SPDX-License-Identifier: GPL-2.0
/*
 * Per-mm SFrame registries.
 *
 * Every mm with registered sections has a struct sfu_mm, found by mm
 * pointer in a hash (lockless under RCU, so the unwinder can look it up in
 * any context) and tied to the mm's life: the hooks on unmap_vmas() and
 * exit_mmap() (or, where they cannot serve, an mmu notifier) tell it
 * which text went away and when the mm goes.
 *
 * An sfu_mm holds a sorted array of regions (struct sfu_map, regmap.c)
 * that writers change under sfu_mm.lock and readers use under RCU, so a
 * lookup is one hash probe and a binary search, O(log n), without locks.
 * Regions (region.c) are immutable and reference counted.  A new child
 * looks up in its parent's regions until its own registry has them
 * (forked.c).
 *
 * The unmap callbacks may run in reclaim (the notifier's) or with the
 * mmap lock held (the hook's), so nothing they call allocates with
 * reclaim or takes a lock that is held around such an allocation:
 * writers allocate first and take the spinlock after.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/file.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include <sframe/table.h>
#include <uapi/linux/sframe_unwind.h>

#include "forked.h"
#include "mem.h"
#include "registry.h"
#include "stats.h"

#define SFU_MMS_HASH_BITS	8

static DEFINE_HASHTABLE(sfu_mms, SFU_MMS_HASH_BITS);
static DEFINE_SPINLOCK(sfu_mms_lock);	/* guards sfu_mms and ->hashed */
static bool sfu_registry_closed;	/* under sfu_mms_lock */
static bool sfu_hooks_serve;		/* sfu_registry_use_hooks() */

static atomic_long_t sfu_nr_mms;

long sfu_stat_mms(void)
{
	return atomic_long_read(&sfu_nr_mms);
}

/* ---- lookup */

/**
 * sfu_mm_known() - does the unwinder have regions for @mm?
 * @mm: the address space
 *
 * Under RCU; any context.
 *
 * Return: whether @mm has a registry, or is a new child's whose parent's
 * regions lookups use until its own registry has them.
 */
bool sfu_mm_known(struct mm_struct *mm)
{
	return sfu_mm_find(mm) || sfu_forked_find(mm);
}

/* The registry of @mm, or NULL.  Under RCU; any context. */
struct sfu_mm *sfu_mm_find(struct mm_struct *mm)
{
	struct sfu_mm *smm;

	hash_for_each_possible_rcu(sfu_mms, smm, node, (unsigned long)mm)
		if (smm->mm == mm)
			return smm;
	return NULL;
}

/**
 * sfu_region_find() - the region describing @pc in @mm
 * @mm: the address space
 * @pc: a user text address
 *
 * Any context, under rcu_read_lock(); the region stays valid until
 * rcu_read_unlock() (take a reference to keep it longer).
 *
 * Return: the region or NULL.
 */
struct sfu_region *sfu_region_find(struct mm_struct *mm, unsigned long pc)
{
	const struct sfu_map *forked;
	struct sfu_mm *smm;
	struct sfu_region *r;

	sfu_stat_inc(SFU_STAT_LOOKUPS);
	smm = sfu_mm_find(mm);
	r = smm ? sfu_mm_region_at(smm, pc) : NULL;
	/* A new child whose registry does not have this region yet. */
	if (!r) {
		forked = sfu_forked_find(mm);
		r = forked ? sfu_map_region_at(forked, pc) : NULL;
	}
	if (r)
		sfu_stat_inc(SFU_STAT_LOOKUP_HITS);
	return r;
}

/*
 * ---- per-mm life
 *
 * A registry is tied to its mm in one of two ways.  Where the hooks see
 * every unmap and every exit_mmap() (sfu_registry_use_hooks()), it holds
 * an mm_count reference (mmgrab()), so that no other mm can take its
 * address while it is in the hash, and the exit hook takes it down.
 * Elsewhere (PREEMPT_RT, where a hook may find itself unable to run, and
 * kernels whose unmap_vmas() the hook was not built for) an mmu notifier
 * reports unmaps and the release of the mm.  A notifier costs every
 * invalidation of the mm an SRCU read section and an indirect call, and
 * its registration takes mm_take_all_locks(): the hooks cost less.
 */

/* A registry for @mm, not yet in the hash, tied by a notifier or not. */
static struct sfu_mm *sfu_mm_alloc(struct mm_struct *mm, bool notified)
{
	struct sfu_mm *smm = kzalloc(sizeof(*smm), GFP_KERNEL_ACCOUNT);

	if (!smm)
		return NULL;
	spin_lock_init(&smm->lock);
	smm->mm = mm;
	smm->notified = notified;
	return smm;
}

static struct mmu_notifier *sfu_mn_alloc(struct mm_struct *mm)
{
	struct sfu_mm *smm = sfu_mm_alloc(mm, true);

	return smm ? &smm->mn : ERR_PTR(-ENOMEM);
}

/* Both ties free the registry after RCU, through the notifier's head. */
static void sfu_mm_free_rcu(struct rcu_head *rcu)
{
	struct sfu_mm *smm = container_of(rcu, struct sfu_mm, mn.rcu);

	kfree(smm);
}

static void sfu_mn_free(struct mmu_notifier *mn)
{
	struct sfu_mm *smm = container_of(mn, struct sfu_mm, mn);

	/* The hash's readers use plain RCU, not the notifier's SRCU. */
	call_rcu(&smm->mn.rcu, sfu_mm_free_rcu);
}

/*
 * Take @smm out of the hash and drop its regions.  Caller holds
 * sfu_mms_lock, so that module unload, which takes the rest down under
 * the same lock and then waits for the notifiers' frees, never misses a
 * notifier put that is still to come; the caller then calls
 * sfu_mm_untie() outside the lock.
 */
static void sfu_mm_takedown_locked(struct sfu_mm *smm)
{
	hash_del_rcu(&smm->node);
	smm->hashed = false;
	atomic_long_dec(&sfu_nr_mms);
	sfu_mm_clear(smm);
	if (smm->notified)
		mmu_notifier_put(&smm->mn);
}

/*
 * Let go of the mm of a registry that sfu_mm_takedown_locked() took down
 * (or that never made it into the hash), and free the registry after
 * RCU.  Process context: the mm_count reference may be the last.
 */
static void sfu_mm_untie(struct sfu_mm *smm)
{
	if (smm->notified)
		return;
	mmdrop(smm->mm);
	call_rcu(&smm->mn.rcu, sfu_mm_free_rcu);
}

/* Take @smm down.  Return: whether this call took it down. */
static bool sfu_mm_kill(struct sfu_mm *smm)
{
	bool killed;

	spin_lock(&sfu_mms_lock);
	killed = smm->hashed;
	if (killed)
		sfu_mm_takedown_locked(smm);
	spin_unlock(&sfu_mms_lock);
	if (killed)
		sfu_mm_untie(smm);
	return killed;
}

static void sfu_mn_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	if (sfu_mm_kill(container_of(mn, struct sfu_mm, mn)))
		sfu_stat_inc(SFU_STAT_MM_RELEASED);
}

/**
 * sfu_mm_exit() - drop the registry of an mm that is being torn down
 * @mm: the mm, in exit_mmap(): no task uses it any more
 *
 * Runs before exit_mmap() releases the mm's notifiers: a registry tied by
 * a notifier is off the mm by then, so that the release finds none of
 * ours and does not wait for an SRCU grace period.  Process context.
 */
void sfu_mm_exit(struct mm_struct *mm)
{
	struct sfu_mm *smm;

	/* Under RCU: a concurrent unload cannot free @smm under us. */
	rcu_read_lock();
	smm = sfu_mm_find(mm);
	/* The mm's own reference keeps sfu_mm_untie()'s mmdrop() not last. */
	if (smm && sfu_mm_kill(smm))
		sfu_stat_inc(SFU_STAT_MM_EXITED);
	rcu_read_unlock();
}

/**
 * sfu_mm_unmapped() - drop the regions of a range that is being unmapped
 * @mm: the mm
 * @start: first address
 * @end: one past the last
 *
 * Called by the unmap hook, with the mmap lock held.  Never sleeps.
 */
void sfu_mm_unmapped(struct mm_struct *mm, unsigned long start,
		     unsigned long end)
{
	struct sfu_mm *smm;

	rcu_read_lock();
	smm = sfu_mm_find(mm);
	if (smm && !smm->notified)
		sfu_mm_remove_range(smm, start, end);
	rcu_read_unlock();
}

static int sfu_mn_invalidate(struct mmu_notifier *mn,
			     const struct mmu_notifier_range *range)
{
	struct sfu_mm *smm = container_of(mn, struct sfu_mm, mn);

	/* munmap(), MAP_FIXED over a mapping, mremap() away from it. */
	if (range->event != MMU_NOTIFY_UNMAP)
		return 0;
	sfu_mm_remove_range(smm, range->start, range->end);
	return 0;
}

static const struct mmu_notifier_ops sfu_mn_ops = {
	.release = sfu_mn_release,
	.invalidate_range_start = sfu_mn_invalidate,
	.alloc_notifier = sfu_mn_alloc,
	.free_notifier = sfu_mn_free,
};

/* A registry tied to @mm by the hooks, not yet in the hash. */
static struct sfu_mm *sfu_mm_new(struct mm_struct *mm)
{
	struct sfu_mm *smm = sfu_mm_alloc(mm, false);

	if (!smm)
		return ERR_PTR(-ENOMEM);
	mmgrab(mm);
	return smm;
}

/* A registry tied to @mm by the notifier: new, or another thread's. */
static struct sfu_mm *sfu_mm_new_notified(struct mm_struct *mm)
{
	struct mmu_notifier *mn = mmu_notifier_get(&sfu_mn_ops, mm);

	return IS_ERR(mn) ? ERR_CAST(mn) : container_of(mn, struct sfu_mm, mn);
}

/*
 * Put @smm, made for @owner's mm, in the hash unless the mm has a
 * registry there already.  Return: the registry in the hash, or
 * ERR_PTR(-ESHUTDOWN) once unload has begun.
 */
static struct sfu_mm *sfu_mm_hash(struct sfu_mm *smm,
				  struct task_struct *owner)
{
	struct sfu_mm *found;
	bool added = false;

	spin_lock(&sfu_mms_lock);
	rcu_read_lock();
	found = sfu_mm_find(smm->mm);
	rcu_read_unlock();
	if (sfu_registry_closed) {
		found = ERR_PTR(-ESHUTDOWN);
	} else if (!found) {
		smm->tgid = task_tgid_nr(owner);
		get_task_comm(smm->comm, owner);
		hash_add_rcu(sfu_mms, &smm->node, (unsigned long)smm->mm);
		smm->hashed = true;
		atomic_long_inc(&sfu_nr_mms);
		found = smm;
		added = true;
	}
	spin_unlock(&sfu_mms_lock);
	if (added) {
		if (smm->notified)
			sfu_stat_inc(SFU_STAT_MM_NOTIFIED);
		return smm;
	}
	/*
	 * Ours is not needed: another task made one first.  With a notifier
	 * it may be the very one found (mmu_notifier_get() gave the other
	 * task's), and the reference that get took for us goes all the same:
	 * kept, it would leave the notifier on the mm after unload.
	 */
	if (smm->notified) {
		mmu_notifier_put(&smm->mn);
	} else {
		mmdrop(smm->mm);
		kfree(smm);
	}
	return found;
}

/**
 * sfu_mm_get() - the registry of @mm, created if need be
 * @mm: an mm the caller holds a user reference to (mmget)
 * @owner: a task using @mm, named in listings
 *
 * May sleep: a registry tied by an mmu notifier takes the mm's mmap lock
 * for writing as it is made, so callers must not hold it.
 *
 * Return: the registry, valid while the mm has users, or an ERR_PTR.
 */
struct sfu_mm *sfu_mm_get(struct mm_struct *mm, struct task_struct *owner)
{
	struct sfu_mm *smm;

	rcu_read_lock();
	smm = sfu_mm_find(mm);
	rcu_read_unlock();
	return smm ?: sfu_mm_make(mm, owner);
}

/**
 * sfu_mm_make() - sfu_mm_get() for a caller that found no registry
 * @mm: as for sfu_mm_get()
 * @owner: as for sfu_mm_get()
 *
 * Another task may have made @mm's registry since the caller looked (the
 * scan at load and the process's own mmap, say): then that one is
 * returned, and what this call made for it is dropped.  May sleep.
 *
 * Return: as sfu_mm_get().
 */
struct sfu_mm *sfu_mm_make(struct mm_struct *mm, struct task_struct *owner)
{
	struct sfu_mm *smm;

	if (READ_ONCE(sfu_hooks_serve))
		smm = sfu_mm_new(mm);
	else
		smm = sfu_mm_new_notified(mm);
	if (IS_ERR(smm))
		return smm;
	return sfu_mm_hash(smm, owner);
}

/**
 * sfu_registry_use_hooks() - say whether the hooks see unmaps and exits
 * @on: true once hooks on unmap_vmas() and exit_mmap() that are never
 *	skipped are on; false before either goes off
 *
 * Registries made while @on is true are tied to their mm by mmgrab()
 * and the hooks, the others by an mmu notifier.
 */
void sfu_registry_use_hooks(bool on)
{
	WRITE_ONCE(sfu_hooks_serve, on);
}

/**
 * sfu_registry_for_each() - call @fn for every registry
 * @fn: called under RCU; must not sleep
 * @arg: passed to @fn
 */
void sfu_registry_for_each(void (*fn)(struct sfu_mm *smm, void *arg),
			   void *arg)
{
	struct sfu_mm *smm;
	int bkt;

	rcu_read_lock();
	hash_for_each_rcu(sfu_mms, bkt, smm, node)
		fn(smm, arg);
	rcu_read_unlock();
}

int sfu_registry_init(void)
{
	sfu_registry_closed = false;
	return 0;
}

/* The first registry in the hash, or NULL.  Caller holds sfu_mms_lock. */
static struct sfu_mm *sfu_mm_first_locked(void)
{
	struct sfu_mm *smm, *first = NULL;
	int bkt;

	rcu_read_lock();
	hash_for_each_rcu(sfu_mms, bkt, smm, node) {
		first = smm;
		break;
	}
	rcu_read_unlock();
	return first;
}

/* Take the registries down: no process keeps a pointer into us. */
void sfu_registry_exit(void)
{
	struct sfu_mm *smm;

	do {
		spin_lock(&sfu_mms_lock);
		sfu_registry_closed = true;
		smm = sfu_mm_first_locked();
		if (smm)
			sfu_mm_takedown_locked(smm);
		spin_unlock(&sfu_mms_lock);
		if (smm)
			sfu_mm_untie(smm);
	} while (smm);
	/* Every free_notifier callback has run: no callback into us left. */
	mmu_notifier_synchronize();
	/*
	 * And everything freed through call_rcu(): maps, then the regions
	 * their callbacks put, then registries; each barrier waits for the
	 * callbacks the previous ones queued.
	 */
	rcu_barrier();
	rcu_barrier();
}
