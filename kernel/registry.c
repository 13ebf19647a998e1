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
 * An sfu_mm holds a sorted array of regions (struct sfu_map) that writers
 * replace as a whole under sfu_mm.lock and readers use under RCU, so a
 * lookup is one hash probe and a binary search, O(log n), without locks.
 * Regions are immutable and reference counted: fork shares them with the
 * child, and a reader that must sleep (the faulting unwinder) takes a
 * reference.
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

#include "mem.h"
#include "quota.h"
#include "registry.h"
#include "stats.h"

#define SFU_MMS_HASH_BITS	8

/*
 * The bounds of what the registry takes, far above real programs, far
 * below harm: the registry applies them, the mapping, sidecar and device
 * code ask it (sfu_section_too_big()); mem.c bounds the whole.
 */
#define SFU_DEF_MAX_SECTIONS		1024
#define SFU_DEF_MAX_SECTION_BYTES	(64UL << 20)
#define SFU_DEF_MAX_MM_BYTES		(64UL << 20)

unsigned int sfu_max_sections = SFU_DEF_MAX_SECTIONS;
module_param_named(max_sections, sfu_max_sections, uint, 0644);
MODULE_PARM_DESC(max_sections,
		 "Most SFrame sections registered per process (default 1024)");

static unsigned long sfu_max_section_bytes = SFU_DEF_MAX_SECTION_BYTES;
module_param_named(max_section_bytes, sfu_max_section_bytes, ulong, 0644);
MODULE_PARM_DESC(max_section_bytes,
		 "Largest .sframe section accepted, in bytes (default 64 MiB)");

unsigned long sfu_max_mm_bytes = SFU_DEF_MAX_MM_BYTES;
module_param_named(max_mm_bytes, sfu_max_mm_bytes, ulong, 0644);
MODULE_PARM_DESC(max_mm_bytes,
		 "Most kernel memory for one process's registry, in bytes (default 64 MiB)");

static bool sfu_validate_fres;
module_param_named(validate_fres, sfu_validate_fres, bool, 0644);
MODULE_PARM_DESC(validate_fres,
		 "Check every FRE of a section at registration (default: header and FDE index only)");

/**
 * sfu_section_too_big() - is a section of @len bytes over max_section_bytes?
 * @len: its size
 *
 * Return: true if it is to be refused (-EFBIG).
 */
bool sfu_section_too_big(u64 len)
{
	return len > READ_ONCE(sfu_max_section_bytes);
}

static DEFINE_HASHTABLE(sfu_mms, SFU_MMS_HASH_BITS);
static DEFINE_SPINLOCK(sfu_mms_lock);	/* guards sfu_mms and ->hashed */
static bool sfu_registry_closed;	/* under sfu_mms_lock */
static bool sfu_hooks_serve;		/* sfu_registry_use_hooks() */

static atomic_long_t sfu_nr_mms;
static atomic_long_t sfu_nr_regions;

long sfu_stat_mms(void)
{
	return atomic_long_read(&sfu_nr_mms);
}

long sfu_stat_regions(void)
{
	return atomic_long_read(&sfu_nr_regions);
}

/* ---- regions */

/**
 * sfu_region_alloc() - a new, empty region
 * @gfp: GFP_KERNEL_ACCOUNT where the caller may sleep, SFU_GFP_HOOK in the
 *	mmap hook
 *
 * Return: the region with one reference, or NULL.
 */
struct sfu_region *sfu_region_alloc(gfp_t gfp)
{
	struct sfu_region *r = kzalloc(sizeof(*r), gfp);

	if (!r)
		return NULL;
	kref_init(&r->ref);
	r->bytes = sizeof(*r);
	sfu_mem_count(r->bytes);
	return r;
}

/**
 * sfu_region_alloc_jit() - a new, empty region for a JIT section
 * @u: the account of the user registering it, which pays for all the
 *	region holds (sfu_user_charge()); the region takes a reference
 *
 * Return: the region with one reference, or ERR_PTR(-ENOMEM or -EDQUOT).
 */
struct sfu_region *sfu_region_alloc_jit(struct sfu_user *u)
{
	struct sfu_region *r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);

	if (!r)
		return ERR_PTR(-ENOMEM);
	if (sfu_user_charge(u, sizeof(*r))) {
		kfree(r);
		return ERR_PTR(-EDQUOT);
	}
	kref_init(&r->ref);
	r->bytes = sizeof(*r);
	r->user = sfu_user_hold(u);
	return r;
}

/*
 * Count @bytes more for @r: to its user for a JIT region, to the pool
 * and its file's owner for a file region.
 */
static int sfu_region_charge(struct sfu_region *r, size_t bytes)
{
	int ret;

	if (r->user)
		return sfu_user_charge(r->user, bytes);
	ret = sfu_file_charge(r->file_user, bytes);
	if (!ret && r->file_user)
		r->file_bytes += bytes;
	return ret;
}

static void sfu_region_free_rcu(struct rcu_head *rcu)
{
	struct sfu_region *r = container_of(rcu, struct sfu_region, rcu);

	if (r->user) {
		sfu_user_uncharge(r->user, r->bytes);
		sfu_user_put(r->user);
	} else {
		sfu_mem_uncharge(r->bytes);
		sfu_user_uncharge_file(r->file_user, r->file_bytes);
		sfu_user_put(r->file_user);
	}
	if (!r->sec_borrowed)
		sfu_section_destroy(&r->sec);
	if (r->owner)
		sfu_owner_put(r->owner);
	kfree(r);
}

static void sfu_region_release(struct kref *ref)
{
	struct sfu_region *r = container_of(ref, struct sfu_region, ref);

	/*
	 * The file goes now, in the task that unmapped it if it was not an
	 * exit: a reference dropped from the RCU callback would often be the
	 * file's last, and its release would wait for a kworker.  Lockless
	 * readers never look at @r->file (sfu_mm_covers() compares device
	 * and inode); only holders of a reference do.
	 */
	if (r->file)
		fput(r->file);
	/* Lockless readers may still hold the pointer: free after them. */
	call_rcu(&r->rcu, sfu_region_free_rcu);
}

void sfu_region_put(struct sfu_region *r)
{
	if (r)
		kref_put(&r->ref, sfu_region_release);
}

/**
 * sfu_region_borrow_section() - give a region an index made once
 * @r: the region, with no section yet
 * @owner: what holds @sec (a sidecar, a file cache entry); the region
 *	takes a reference
 * @sec: the section, indexed at its link-time address
 * @delta: the mapping's load bias
 *
 * The region's section is a copy of @sec's description moved by @delta;
 * its arrays stay @owner's (only movable sections qualify,
 * sfu_section_movable()).
 */
void sfu_region_borrow_section(struct sfu_region *r, struct sfu_owner *owner,
			       const struct sfu_section *sec,
			       unsigned long delta)
{
	r->owner = sfu_owner_get(owner);
	sfu_section_move(&r->sec, sec, delta);
	r->sec_borrowed = true;
	r->version = sec->elems[0].version;
}

/**
 * sfu_section_check() - check and index a kernel copy of a section
 * @sec: the section object to fill
 * @bytes: the copy
 * @len: its length
 * @vaddr: the section's address in the process (or at link time)
 * @flags: SFU_SEC_TABLE for a section that will not change (a file's, a
 *	sidecar's): decode its rows into a rule table, which walks then
 *	read instead of the section, and keep nothing else
 *	(sfu_section_strip()): the copy may be freed
 *
 * Headers and the FDE index, and every FRE if the validate_fres parameter
 * is set, on the copy, so that the checks never fault and never see the
 * bytes change under them.  If the section is to be read where a process
 * has it mapped, the caller points @sec there afterwards
 * (sfu_section_read_mapped()).
 *
 * Return: 0 or a negative error code of the decoder or of the table's
 * build (-E2BIG, -ENOMEM); @sec->diag says what failed, and nothing is
 * left to free.
 */
int sfu_section_check(struct sfu_section *sec, const void *bytes, size_t len,
		      unsigned long vaddr, unsigned int flags)
{
	unsigned int how = 0;

	if (sfu_validate_fres)
		how |= SFU_OPEN_VALIDATE;
	/* A section that will not change is walked through its table only. */
	if (flags & SFU_SEC_TABLE)
		how |= SFU_OPEN_TABLE;
	return sfu_section_open(sec, bytes, len, vaddr, sfu_native_abi(), how);
}

/**
 * sfu_region_init_section() - validate a section and index it for a region
 * @r: the region, with no section yet
 * @bytes: a kernel copy of the section's bytes
 * @len: its length
 * @vaddr: the section's address in the process
 * @flags: SFU_SEC_USER if unwinding reads the section at @vaddr in the
 *	process's memory from now on (else it keeps reading @bytes), and
 *	SFU_SEC_TABLE as for sfu_section_check(): then walks read neither
 *
 * Checks the headers and the FDE index (and every FRE if the validate_fres
 * parameter is set) on the kernel copy, so the checks never fault and
 * never see the bytes change under them.
 *
 * Return: 0 or a negative error code of the decoder; @r->sec.diag says
 * what failed.
 */
int sfu_region_init_section(struct sfu_region *r, const void *bytes,
			    size_t len, unsigned long vaddr, unsigned int flags)
{
	size_t extra;
	int ret;

	ret = sfu_section_check(&r->sec, bytes, len, vaddr, flags);
	if (ret)
		return ret;
	r->version = r->sec.elems[0].version;
	if (flags & SFU_SEC_USER)
		sfu_section_read_mapped(&r->sec);
	extra = sfu_section_bytes(&r->sec);
	ret = sfu_region_charge(r, extra);
	if (ret)
		return ret;
	r->bytes += extra;
	return 0;
}

/*
 * ---- maps
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
 */

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

/* The region of @map containing @addr, or NULL.  Under RCU. */
static struct sfu_region *sfu_map_region_at(const struct sfu_map *map,
					    unsigned long addr)
{
	struct sfu_region *r = sfu_map_first_after(map, addr);

	return r && addr >= r->start ? r : NULL;
}

/* The region of @smm containing @addr, or NULL.  Under RCU. */
static struct sfu_region *sfu_mm_region_at(struct sfu_mm *smm,
					   unsigned long addr)
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

/* Drop the references a snapshot holds; its array stays. */
static void sfu_map_put_regions(struct sfu_map *map)
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

/*
 * ---- forked children
 *
 * A child gets its parent's regions in a task work that runs on its way
 * out of fork(), before its first instruction in user space (hooks.c).
 * Until that work has inserted them all, a sample taken in the child (in
 * the kernel: the rest of fork(), the task work itself) looks them up in
 * the parent's snapshot, kept here by the child's mm: the child's address
 * space is a copy of the parent's, and it cannot change it before it runs
 * in user space.
 */
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

/* The parent's snapshot for the new child @mm, or NULL.  Under RCU. */
static const struct sfu_map *sfu_forked_find(struct mm_struct *mm)
{
	struct sfu_forked *f;

	if (!atomic_read(&sfu_forks_nr))
		return NULL;
	hash_for_each_possible_rcu(sfu_forks, f, node, (unsigned long)mm)
		if (f->mm == mm)
			return f->snap;
	return NULL;
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

/* Empty the registry; the mm is going away or the module is. */
static void sfu_mm_clear(struct sfu_mm *smm)
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
