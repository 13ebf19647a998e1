/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-mm registries (registry.c): which regions of which process the
 * unwinder looks PCs up in, tied to the life of each mm.  With the
 * regions themselves (region.h) and their maps (regmap.h).
 */
#ifndef _SFU_REGISTRY_H
#define _SFU_REGISTRY_H

#include <linux/mmu_notifier.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "region.h"
#include "regmap.h"

struct mm_struct;
struct task_struct;

/* Per-mm registry, found by mm through a hash; lives until the mm exits. */
struct sfu_mm {
	struct mmu_notifier mn;		/* if @notified; its rcu head always */
	struct hlist_node node;		/* sfu_mms, under sfu_mms_lock */
	struct mm_struct *mm;		/* the key; mmgrab()bed if !@notified */
	spinlock_t lock;		/* serialises changes of @map */
	struct sfu_map __rcu *map;
	size_t bytes;			/* under @lock */
	unsigned int nr_regions;	/* under @lock */
	pid_t tgid;
	char comm[TASK_COMM_LEN];
	bool hashed;			/* under sfu_mms_lock */
	bool notified;			/* tied to @mm by @mn, not the hooks */
	/* Jiffies its tasks waited at first mappings in vain (sidecar_wait.c) */
	atomic_long_t first_map_spent;
};

struct sfu_mm *sfu_mm_find(struct mm_struct *mm);
struct sfu_mm *sfu_mm_get(struct mm_struct *mm, struct task_struct *owner);
struct sfu_mm *sfu_mm_make(struct mm_struct *mm, struct task_struct *owner);
void sfu_mm_exit(struct mm_struct *mm);
void sfu_registry_use_hooks(bool on);
void sfu_mm_unmapped(struct mm_struct *mm, unsigned long start,
		     unsigned long end);
struct sfu_region *sfu_region_find(struct mm_struct *mm, unsigned long pc);
bool sfu_mm_known(struct mm_struct *mm);
void sfu_registry_for_each(void (*fn)(struct sfu_mm *smm, void *arg),
			   void *arg);
int sfu_registry_init(void);
void sfu_registry_exit(void);

/* Registries, for the counters (stats.c). */
long sfu_stat_mms(void);

#endif /* _SFU_REGISTRY_H */
