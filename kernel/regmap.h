/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The region maps of the per-mm registries (regmap.c): each mm's regions
 * in address order, changed under its lock, read under RCU.
 */
#ifndef _SFU_REGMAP_H
#define _SFU_REGMAP_H

#include <linux/rcupdate.h>
#include <linux/types.h>

#include "region.h"

struct file;
struct sfu_mm;

/*
 * Sorted, non-overlapping regions of one mm: a region may fill several
 * adjacent slots (regmap.c).  Changed in place or replaced as a
 * whole (RCU).  A snapshot (sfu_mm_snapshot()) has each region once.
 */
struct sfu_map {
	struct rcu_head rcu;
	unsigned int nr;		/* slots readers see */
	unsigned int cap;		/* slots allocated */
	struct sfu_region *regions[];
};

/* How sfu_mm_insert() treats regions that overlap the new one. */
enum sfu_overlap {
	SFU_OVERLAP_REPLACE,		/* drop them: they are stale */
	SFU_OVERLAP_REFUSE,		/* -EEXIST */
	SFU_OVERLAP_JIT_SAME_START,	/* replace the JIT region at start */
};

int sfu_mm_insert(struct sfu_mm *smm, struct sfu_region *r,
		  enum sfu_overlap overlap, gfp_t gfp);
int sfu_mm_remove_jit(struct sfu_mm *smm, unsigned long start);
void sfu_mm_remove_range(struct sfu_mm *smm, unsigned long start,
			 unsigned long end);
void sfu_mm_clear(struct sfu_mm *smm);
bool sfu_mm_covers(struct sfu_mm *smm, unsigned long addr,
		   const struct file *file);
struct sfu_region *sfu_mm_region_at(struct sfu_mm *smm, unsigned long addr);
struct sfu_region *sfu_map_region_at(const struct sfu_map *map,
				     unsigned long addr);
struct sfu_map *sfu_mm_snapshot(struct sfu_mm *smm);
void sfu_map_put_regions(struct sfu_map *map);
void sfu_map_release(struct sfu_map *map);

/* Module parameters; the KUnit suite changes these two. */
extern unsigned int sfu_max_sections;
extern unsigned long sfu_max_mm_bytes;

/* Regions in all registries, for the counters (stats.c). */
long sfu_stat_regions(void);

#endif /* _SFU_REGMAP_H */
