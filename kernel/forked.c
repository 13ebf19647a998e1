// SPDX-License-Identifier: GPL-2.0
/*
 * Forked children.
 *
 * A child gets its parent's regions in a task work that runs on its way
 * out of fork(), before its first instruction in user space (mm_hooks.c).
 * Until that work has inserted them all, a sample taken in the child (in
 * the kernel: the rest of fork(), the task work itself) looks them up in
 * the parent's snapshot, kept here by the child's mm: the child's address
 * space is a copy of the parent's, and it cannot change it before it runs
 * in user space.
 */#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "forked.h"
#include "registry.h"

#define SFU_FORKS_HASH_BITS	6

struct sfu_forked {
	struct hlist_node node;		/* sfu_forks: RCU, sfu_forks_lock */
	struct rcu_head rcu;
	struct mm_struct *mm;		/* mmgrab()bed: the key stays its */
	struct sfu_map *snap;
};

static DEFINE_HASHTABLE(sfu_forks, SFU_FORKS_HASH_BITS);
static DEFINE_SPINLOCK(sfu_forks_lock);
static atomic_t sfu_forks_nr = ATOMIC_INIT(0);	/* lookups skip an empty table */

/**
 * sfu_forked_add() - let lookups in a new child use its parent's regions
 * @mm: the child's address space, copied from the parent's
 * @snap: a snapshot of the parent's registry (sfu_mm_snapshot()); taken
 *	over
 *
 * Any context but NMI.  The child's fork task work calls sfu_forked_del()
 * once it has inserted the regions into the child's own registry, or
 * failed to.
 *
 * Return: the entry, or NULL (@snap released) if none could be made.
 */
struct sfu_forked *sfu_forked_add(struct mm_struct *mm, struct sfu_map *snap)
{
	struct sfu_forked *f = kmalloc(sizeof(*f), GFP_ATOMIC | __GFP_NOWARN);
	unsigned long flags;

	if (!f) {
		sfu_map_release(snap);
		return NULL;
	}
	mmgrab(mm);
	f->mm = mm;
	f->snap = snap;
	spin_lock_irqsave(&sfu_forks_lock, flags);
	hash_add_rcu(sfu_forks, &f->node, (unsigned long)mm);
	atomic_inc(&sfu_forks_nr);
	spin_unlock_irqrestore(&sfu_forks_lock, flags);
	return f;
}

/* The snapshot array after the readers that may hold it, and the entry. */
static void sfu_forked_free_rcu(struct rcu_head *rcu)
{
	struct sfu_forked *f = container_of(rcu, struct sfu_forked, rcu);

	kfree(f->snap);
	kfree(f);
}

/**
 * sfu_forked_snapshot() - the snapshot an entry holds
 * @f: the entry
 *
 * Return: the parent's regions, valid until sfu_forked_del().
 */
const struct sfu_map *sfu_forked_snapshot(const struct sfu_forked *f)
{
	return f->snap;
}

/**
 * sfu_forked_del() - lookups in the child go to its own registry again
 * @f: the entry, or NULL
 *
 * Drops the snapshot's references (the regions are freed after the
 * readers, as always) and the entry's hold on the mm.
 */
void sfu_forked_del(struct sfu_forked *f)
{
	unsigned long flags;

	if (!f)
		return;
	spin_lock_irqsave(&sfu_forks_lock, flags);
	hash_del_rcu(&f->node);
	atomic_dec(&sfu_forks_nr);
	spin_unlock_irqrestore(&sfu_forks_lock, flags);
	sfu_map_put_regions(f->snap);
	mmdrop(f->mm);
	call_rcu(&f->rcu, sfu_forked_free_rcu);
}

/**
 * sfu_forked_find() - the parent's snapshot for a new child
 * @mm: the child's address space
 *
 * Under RCU; any context.
 *
 * Return: the snapshot, or NULL.
 */
const struct sfu_map *sfu_forked_find(struct mm_struct *mm)
{
	struct sfu_forked *f;

	if (!atomic_read(&sfu_forks_nr))
		return NULL;
	hash_for_each_possible_rcu(sfu_forks, f, node, (unsigned long)mm)
		if (f->mm == mm)
			return f->snap;
	return NULL;
}
