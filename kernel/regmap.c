// SPDX-License-Identifier: GPL-2.0
/*
 * The region maps of the per-mm registries (struct sfu_map).
 *
 * An sfu_mm holds a sorted array of regions that writers change under
 * sfu_mm.lock and readers use under RCU, so a lookup is a binary search,
 * O(log n), without locks.
 *
 * Readers see the slots [0, nr) of a map: each region of the registry is
 * in one slot or in several adjacent ones, in address order.  Writers
 * change a map in place where every region stays visible to a reader at
 * every instant: a removed region's slots take its right neighbour (or
 * drop off the end), a new region takes the first slot of a region that
 * has several, or the next unused one; and build a new map otherwise
 * (RCU).  While a region lives, the last slot of its run keeps it, slots
 * before hold it or regions before it, slots after hold regions after it.  So a dlclose() and
 * the next dlopen() of the same library, or of one that fits where it
 * was, need no allocation and no grace period.
 */#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/file.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "registry.h"
#include "stats.h"

/* The bounds of one process's registry, far above real programs. */
#define SFU_DEF_MAX_SECTIONS		1024
#define SFU_DEF_MAX_MM_BYTES		(64UL << 20)

unsigned int sfu_max_sections = SFU_DEF_MAX_SECTIONS;
module_param_named(max_sections, sfu_max_sections, uint, 0644);
MODULE_PARM_DESC(max_sections,
		 "Most SFrame sections registered per process (default 1024)");

unsigned long sfu_max_mm_bytes = SFU_DEF_MAX_MM_BYTES;
module_param_named(max_mm_bytes, sfu_max_mm_bytes, ulong, 0644);
MODULE_PARM_DESC(max_mm_bytes,
		 "Most kernel memory for one process's registry, in bytes (default 64 MiB)");

static atomic_long_t sfu_nr_regions;

long sfu_stat_regions(void)
{
	return atomic_long_read(&sfu_nr_regions);
}

/* Unused slots a new map gets, for regions added in place later. */
#define SFU_MAP_SLACK		4

static struct sfu_map *sfu_map_alloc(unsigned int cap, gfp_t gfp)
{
	struct sfu_map *map = kmalloc(struct_size(map, regions, cap), gfp);

	if (map) {
		map->nr = 0;
		map->cap = cap;
	}
	return map;
}

static struct sfu_map *sfu_mm_map(struct sfu_mm *smm)
{
	return rcu_dereference_protected(smm->map, lockdep_is_held(&smm->lock));
}

/* The slots readers see. */
static unsigned int sfu_map_nr(const struct sfu_map *map)
{
	/* Pairs with sfu_map_place(): a slot counted is a slot written. */
	return smp_load_acquire(&map->nr);
}

/* Does slot @i repeat the region of slot @i - 1? */
static bool sfu_map_dup(const struct sfu_map *map, unsigned int i)
{
	return i && READ_ONCE(map->regions[i]) == READ_ONCE(map->regions[i - 1]);
}

/* Index of the first of @nr slots whose region ends after @addr (writers). */
static unsigned int sfu_map_search(const struct sfu_map *map,
				   unsigned int nr, unsigned long addr)
{
	unsigned int lo = 0, hi = nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (READ_ONCE(map->regions[mid])->end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The first region of @map that ends after @addr, or NULL: the search of
 * a reader, under RCU, while writers may change slots (see above).  The
 * answer is the region read at the slot the search ends on, not a second
 * read of that slot: a slot of a region's run may change under the
 * search (a new region taking the first slot of a run), the run's last
 * slot does not while the region lives, and the search ends at or before
 * it.
 */
static struct sfu_region *sfu_map_first_after(const struct sfu_map *map,
					      unsigned long addr)
{
	unsigned int lo = 0, hi = sfu_map_nr(map);
	struct sfu_region *found = NULL;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		struct sfu_region *r = READ_ONCE(map->regions[mid]);

		if (r->end <= addr) {
			lo = mid + 1;
		} else {
			hi = mid;
			found = r;
		}
	}
	return found;
}

/**
 * sfu_map_region_at() - the region of a map containing an address
 * @map: the map (a registry's, or a snapshot)
 * @addr: the address
 *
 * Under RCU.
 *
 * Return: the region, or NULL.
 */
struct sfu_region *sfu_map_region_at(const struct sfu_map *map,
				     unsigned long addr)
{
	struct sfu_region *r = sfu_map_first_after(map, addr);

	return r && addr >= r->start ? r : NULL;
}

/**
 * sfu_mm_region_at() - the region of a registry containing an address
 * @smm: the registry
 * @addr: the address
 *
 * Under RCU.
 *
 * Return: the region, or NULL.
 */
struct sfu_region *sfu_mm_region_at(struct sfu_mm *smm, unsigned long addr)
{
	struct sfu_map *map = rcu_dereference(smm->map);

	return map ? sfu_map_region_at(map, addr) : NULL;
}

/* Publish @map for @smm and retire the old one.  Caller holds smm->lock. */
static void sfu_mm_publish(struct sfu_mm *smm, struct sfu_map *map)
{
	struct sfu_map *old = sfu_mm_map(smm);

	rcu_assign_pointer(smm->map, map);
	if (old)
		kfree_rcu(old, rcu);
}

/*
 * Take up to @room regions overlapping [start, end) out of @smm's map, in
 * place, onto @gone.  Their slots take the region after them, or leave
 * the end of the map; a reader may still hold them (they are freed after
 * RCU).  Caller holds smm->lock.  Return: how many.
 */
static unsigned int sfu_map_take(struct sfu_mm *smm, unsigned long start,
				 unsigned long end, struct sfu_region **gone,
				 unsigned int room)
{
	struct sfu_map *map = sfu_mm_map(smm);
	unsigned int lo, hi, i, n = 0;

	if (!map)
		return 0;
	lo = sfu_map_search(map, map->nr, start);
	for (hi = lo; hi < map->nr && map->regions[hi]->start < end; hi++) {
		if (sfu_map_dup(map, hi))
			continue;
		if (n == room)
			break;
		gone[n] = map->regions[hi];
		smm->bytes -= gone[n]->bytes;
		n++;
	}
	if (!n)
		return 0;
	if (hi < map->nr) {
		for (i = lo; i < hi; i++)
			WRITE_ONCE(map->regions[i], map->regions[hi]);
	} else {
		WRITE_ONCE(map->nr, lo);
	}
	smm->nr_regions -= n;
	return n;
}

/*
 * Does a region of @smm overlap [start, end)?  Lockless.  Exact for the
 * callers of sfu_mm_remove_range(): an unmap holds the mmap lock, which
 * orders it after every insertion of a region of that range (those are
 * made under the mmap lock, the mapping checked); a JIT removal follows
 * its own look-up of the region.
 */
static bool sfu_mm_overlaps(struct sfu_mm *smm, unsigned long start,
			    unsigned long end)
{
	struct sfu_region *r = NULL;
	struct sfu_map *map;
	bool hit;

	rcu_read_lock();
	map = rcu_dereference(smm->map);
	if (map)
		r = sfu_map_first_after(map, start);
	hit = r && r->start < end;
	rcu_read_unlock();
	return hit;
}

static void sfu_put_regions(struct sfu_region **gone, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		atomic_long_dec(&sfu_nr_regions);
		sfu_stat_inc(SFU_STAT_UNREGISTERED);
		sfu_region_put(gone[i]);
	}
}

/* Regions dropped per pass of sfu_mm_remove_range(). */
#define SFU_CUT_BATCH		8

/**
 * sfu_mm_remove_range() - drop every region overlapping [start, end)
 * @smm: the registry
 * @start: first address
 * @end: one past the last
 *
 * Never sleeps and never allocates (the unmap hook and the mmu notifier
 * call it).
 */
void sfu_mm_remove_range(struct sfu_mm *smm, unsigned long start,
			 unsigned long end)
{
	struct sfu_region *gone[SFU_CUT_BATCH];
	unsigned int n;

	if (!sfu_mm_overlaps(smm, start, end))
		return;
	do {
		spin_lock(&smm->lock);
		n = sfu_map_take(smm, start, end, gone, SFU_CUT_BATCH);
		spin_unlock(&smm->lock);
		sfu_put_regions(gone, n);
	} while (n == SFU_CUT_BATCH);
}

/*
 * Put @r, which overlaps no region, into a spare slot of @smm's map: the
 * first slot of the next region if that region has more than one, or the
 * slot after the last.  Never the last slot of a region: a run of slots
 * shrinking from the right while another grows to the left (a removal)
 * could move a region past a concurrent search.  Caller holds smm->lock.
 * Return: whether it found a slot.
 */
static bool sfu_map_place(struct sfu_mm *smm, struct sfu_region *r)
{
	struct sfu_map *map = sfu_mm_map(smm);
	unsigned int at, nr;

	if (!map)
		return false;
	nr = map->nr;
	at = sfu_map_search(map, nr, r->start);
	if (at + 1 < nr && map->regions[at] == map->regions[at + 1]) {
		WRITE_ONCE(map->regions[at], r);
	} else if (at == nr && nr < map->cap) {
		WRITE_ONCE(map->regions[nr], r);
		/* Readers see the slot only once nr says so. */
		smp_store_release(&map->nr, nr + 1);
	} else {
		return false;
	}
	return true;
}

/* What adding a region to a map takes, worked out under smm->lock. */
struct sfu_insert_plan {
	struct sfu_map *old;
	unsigned int nr;		/* @old's slots */
	unsigned int at;		/* first slot that ends after the start */
	unsigned int next;		/* first slot after the regions to go */
	unsigned int need;		/* regions once @r is in */
	unsigned int nr_gone;
	size_t gone_bytes;
	struct sfu_region *gone[SFU_CUT_BATCH];
};

/*
 * Find the regions of @smm that @r overlaps and decide by @overlap and the
 * limits.  Caller holds smm->lock.  Return: 0 or a negative error code.
 */
static int sfu_insert_plan(struct sfu_mm *smm, const struct sfu_region *r,
			   enum sfu_overlap overlap, struct sfu_insert_plan *p)
{
	struct sfu_map *old = sfu_mm_map(smm);
	unsigned int i;

	p->old = old;
	p->nr = old ? old->nr : 0;
	p->at = old ? sfu_map_search(old, p->nr, r->start) : 0;
	p->nr_gone = 0;
	p->gone_bytes = 0;
	for (i = p->at; i < p->nr && old->regions[i]->start < r->end; i++) {
		struct sfu_region *o = old->regions[i];
		bool same_jit = o->source == SFRAME_UNWIND_SRC_JIT &&
				o->start == r->start;

		if (sfu_map_dup(old, i))
			continue;
		if (overlap == SFU_OVERLAP_REFUSE ||
		    (overlap == SFU_OVERLAP_JIT_SAME_START && !same_jit) ||
		    p->nr_gone == SFU_CUT_BATCH)
			return -EEXIST;
		p->gone[p->nr_gone++] = o;
		p->gone_bytes += o->bytes;
	}
	p->next = i;
	if (overlap == SFU_OVERLAP_JIT_SAME_START && !p->nr_gone)
		return -ENOENT;
	p->need = smm->nr_regions - p->nr_gone + 1;
	if (p->need > sfu_max_sections ||
	    smm->bytes - p->gone_bytes + r->bytes > sfu_max_mm_bytes)
		return -ENOSPC;
	return 0;
}

/* Copy the regions of @old's slots [from, to) to @new, once each. */
static void sfu_map_copy(struct sfu_map *new, const struct sfu_map *old,
			 unsigned int from, unsigned int to)
{
	unsigned int i;

	for (i = from; i < to; i++)
		if (!sfu_map_dup(old, i))
			new->regions[new->nr++] = old->regions[i];
}

/* Publish @new: @p->old with @r instead of the regions @p found. */
static void sfu_insert_rebuild(struct sfu_mm *smm, struct sfu_region *r,
			       const struct sfu_insert_plan *p,
			       struct sfu_map *new)
{
	if (p->old)
		sfu_map_copy(new, p->old, 0, p->at);
	new->regions[new->nr++] = r;
	if (p->old)
		sfu_map_copy(new, p->old, p->next, p->nr);
	sfu_mm_publish(smm, new);
}

/**
 * sfu_mm_insert() - add a region to an mm's registry
 * @smm: the registry
 * @r: the region; on success the registry owns the caller's reference
 * @overlap: what to do with regions that overlap @r
 * @gfp: for a new map: GFP_KERNEL_ACCOUNT, or SFU_GFP_HOOK in the hook
 *
 * Sleeps only if @gfp allows it.  Callers adding regions for file
 * mappings hold the mm's mmap lock and have checked that the mapping is
 * still there, so that an unmap cannot slip in between.
 *
 * Return: 0; -EEXIST for a refused overlap, -ENOENT if no JIT region starts
 * where SFU_OVERLAP_JIT_SAME_START wants one, -ENOSPC over the per-mm
 * limits, -ENOMEM.
 */
int sfu_mm_insert(struct sfu_mm *smm, struct sfu_region *r,
		  enum sfu_overlap overlap, gfp_t gfp)
{
	struct sfu_insert_plan p;
	struct sfu_map *new = NULL;
	int ret;

	for (;;) {
		spin_lock(&smm->lock);
		ret = sfu_insert_plan(smm, r, overlap, &p);
		if (ret)
			goto unlock;
		if (!p.nr_gone && sfu_map_place(smm, r))
			break;
		if (new && new->cap >= p.need) {
			sfu_insert_rebuild(smm, r, &p, new);
			new = NULL;
			break;
		}
		/* Allocate without the lock, then look again. */
		spin_unlock(&smm->lock);
		kfree(new);
		new = sfu_map_alloc(p.need + SFU_MAP_SLACK, gfp);
		if (!new)
			return -ENOMEM;
	}
	smm->bytes += r->bytes - p.gone_bytes;
	smm->nr_regions += 1 - p.nr_gone;
	spin_unlock(&smm->lock);
	kfree(new);
	atomic_long_inc(&sfu_nr_regions);
	sfu_stat_inc(SFU_STAT_REGISTERED);
	sfu_put_regions(p.gone, p.nr_gone);
	return 0;

unlock:
	spin_unlock(&smm->lock);
	kfree(new);
	return ret;
}

/**
 * sfu_mm_remove_jit() - drop the JIT region that starts at @start
 * @smm: the registry
 * @start: text start the region was registered with
 *
 * Return: 0 or -ENOENT.
 */
int sfu_mm_remove_jit(struct sfu_mm *smm, unsigned long start)
{
	struct sfu_region *r;
	unsigned long end = 0;

	rcu_read_lock();
	r = sfu_mm_region_at(smm, start);
	if (r && r->start == start && r->source == SFRAME_UNWIND_SRC_JIT)
		end = r->end;
	rcu_read_unlock();
	if (!end)
		return -ENOENT;
	sfu_mm_remove_range(smm, start, end);
	return 0;
}

/**
 * sfu_mm_covers() - is @addr in a region made from @file already?
 * @smm: the registry
 * @addr: a text address
 * @file: the file mapped at @addr
 *
 * Under RCU.
 *
 * Return: true if a region made from @file's inode contains @addr.
 */
bool sfu_mm_covers(struct sfu_mm *smm, unsigned long addr,
		   const struct file *file)
{
	const struct inode *inode = file_inode(file);
	struct sfu_region *r = sfu_mm_region_at(smm, addr);

	return r && r->source != SFRAME_UNWIND_SRC_JIT &&
	       r->dev == inode->i_sb->s_dev && r->ino == inode->i_ino;
}

/**
 * sfu_mm_snapshot() - take references to all regions of a registry
 * @smm: the registry
 *
 * Return: a private map the caller releases with sfu_map_release(), NULL
 * if there are no regions, or ERR_PTR(-ENOMEM).  Atomic context is fine.
 */
struct sfu_map *sfu_mm_snapshot(struct sfu_mm *smm)
{
	struct sfu_map *map, *copy = NULL;
	struct sfu_region *last = NULL;
	unsigned int i, nr = 0;

	rcu_read_lock();
	map = rcu_dereference(smm->map);
	if (map)
		nr = sfu_map_nr(map);
	if (nr) {
		copy = sfu_map_alloc(nr, GFP_ATOMIC | __GFP_NOWARN);
		if (!copy)
			copy = ERR_PTR(-ENOMEM);
	}
	if (!IS_ERR_OR_NULL(copy)) {
		/* Writers may change slots in place: read each once. */
		for (i = 0; i < nr; i++) {
			struct sfu_region *r = READ_ONCE(map->regions[i]);

			if (r == last || !kref_get_unless_zero(&r->ref))
				continue;
			copy->regions[copy->nr++] = r;
			last = r;
		}
	}
	rcu_read_unlock();
	return copy;
}

/**
 * sfu_map_put_regions() - drop the references a snapshot holds
 * @map: the snapshot; its array stays, for readers under RCU
 */
void sfu_map_put_regions(struct sfu_map *map)
{
	unsigned int i;

	for (i = 0; i < map->nr; i++)
		sfu_region_put(map->regions[i]);
}

void sfu_map_release(struct sfu_map *map)
{
	if (IS_ERR_OR_NULL(map))
		return;
	sfu_map_put_regions(map);
	kfree(map);
}

/* A registry's last map: one reference per region, however many slots. */
static void sfu_map_release_rcu(struct rcu_head *rcu)
{
	struct sfu_map *map = container_of(rcu, struct sfu_map, rcu);
	unsigned int i;

	for (i = 0; i < map->nr; i++)
		if (!sfu_map_dup(map, i))
			sfu_region_put(map->regions[i]);
	kfree(map);
}

/**
 * sfu_mm_clear() - drop every region of a registry
 * @smm: the registry; its mm is going away, or the module is
 */
void sfu_mm_clear(struct sfu_mm *smm)
{
	struct sfu_map *map;
	unsigned int nr;

	spin_lock(&smm->lock);
	map = sfu_mm_map(smm);
	rcu_assign_pointer(smm->map, NULL);
	nr = smm->nr_regions;
	smm->nr_regions = 0;
	smm->bytes = 0;
	spin_unlock(&smm->lock);
	if (!map)
		return;
	atomic_long_sub(nr, &sfu_nr_regions);
	/* Readers may still walk the old map. */
	call_rcu(&map->rcu, sfu_map_release_rcu);
}
