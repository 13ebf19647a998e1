/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Regions and per-mm registries (registry.c): which text range of
 * which process each registered section describes, and the memory they
 * hold.
 */
#ifndef _SFU_REGISTRY_H
#define _SFU_REGISTRY_H

#include <linux/kref.h>
#include <linux/mmu_notifier.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <sframe/decode.h>
#include <uapi/linux/sframe_unwind.h>

struct file;
struct mm_struct;
struct task_struct;
struct sfu_user;

/*
 * What regions borrow a section from: a sidecar (sidecar.h) or a file
 * cache entry (filecache.c), which embeds it.  Counted references; the
 * last one calls @release, the embedder's.
 */
struct sfu_owner {
	struct kref ref;
	void (*release)(struct kref *ref);
};

static inline void sfu_owner_init(struct sfu_owner *o,
				  void (*release)(struct kref *ref))
{
	kref_init(&o->ref);
	o->release = release;
}

static inline struct sfu_owner *sfu_owner_get(struct sfu_owner *o)
{
	kref_get(&o->ref);
	return o;
}

static inline bool sfu_owner_tryget(struct sfu_owner *o)
{
	return kref_get_unless_zero(&o->ref);
}

static inline void sfu_owner_put(struct sfu_owner *o)
{
	kref_put(&o->ref, o->release);
}

/*
 * One registered section and the text range it describes.  Immutable, but
 * for the build-id frames.c reads once, when a trace first needs it.
 */
struct sfu_region {
	struct kref ref;
	struct rcu_head rcu;
	unsigned long start;		/* text range */
	unsigned long end;
	struct sfu_section sec;
	/*
	 * A reference to what @sec's arrays (@sec_borrowed) or bytes are
	 * borrowed from, or NULL: they are the region's own.
	 */
	struct sfu_owner *owner;
	struct sfu_user *user;		/* a JIT region's payer, or NULL */
	/*
	 * The owner of a file region's file, who pays for an index of the
	 * region's own too (@file_bytes of it); NULL: root's, or none.
	 */
	struct sfu_user *file_user;
	size_t file_bytes;
	/* The mapped file, or NULL (JIT); only for holders of @ref. */
	struct file *file;
	dev_t dev;
	unsigned long ino;
	unsigned long bias;		/* load bias: pc - bias, the file's own */
	/* The file's build-id, once frames.c read it (@build_id_state). */
	u8 build_id[SFRAME_UNWIND_BUILD_ID_MAX];
	u8 build_id_len;
	atomic_t build_id_state;	/* SFU_BUILD_ID_*, frames.c */
	u8 source;			/* SFRAME_UNWIND_SRC_* */
	u8 version;
	bool sec_borrowed;		/* @sec's arrays are @owner's */
	size_t bytes;			/* memory this region holds */
};

/*
 * Sorted, non-overlapping regions of one mm: a region may fill several
 * adjacent slots (registry.c, maps).  Changed in place or replaced as a
 * whole (RCU).  A snapshot (sfu_mm_snapshot()) has each region once.
 */
struct sfu_map {
	struct rcu_head rcu;
	unsigned int nr;		/* slots readers see */
	unsigned int cap;		/* slots allocated */
	struct sfu_region *regions[];
};

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
	/* Jiffies its tasks waited at first mappings in vain (firstmap.c) */
	atomic_long_t first_map_spent;
};

/* How sfu_mm_insert() treats regions that overlap the new one. */
enum sfu_overlap {
	SFU_OVERLAP_REPLACE,		/* drop them: they are stale */
	SFU_OVERLAP_REFUSE,		/* -EEXIST */
	SFU_OVERLAP_JIT_SAME_START,	/* replace the JIT region at start */
};

/*
 * Allocations in the mmap hook: the mmap lock is held for writing and
 * preemption may be off; a failure leaves the work to the task work.
 */
#define SFU_GFP_HOOK	(GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT)

struct sfu_region *sfu_region_alloc(gfp_t gfp);
struct sfu_region *sfu_region_alloc_jit(struct sfu_user *u);
void sfu_region_put(struct sfu_region *r);
void sfu_region_borrow_section(struct sfu_region *r, struct sfu_owner *owner,
			       const struct sfu_section *sec,
			       unsigned long delta);
/* How a section is set up (sfu_section_check(), sfu_region_init_section()) */
#define SFU_SEC_USER	0x1	/* read where the process has it mapped */
#define SFU_SEC_TABLE	0x2	/* will not change: decode into a table */

int sfu_section_check(struct sfu_section *sec, const void *bytes, size_t len,
		      unsigned long vaddr, unsigned int flags);
int sfu_region_init_section(struct sfu_region *r, const void *bytes,
			    size_t len, unsigned long vaddr, unsigned int flags);
struct sfu_mm *sfu_mm_find(struct mm_struct *mm);
struct sfu_mm *sfu_mm_get(struct mm_struct *mm, struct task_struct *owner);
struct sfu_mm *sfu_mm_make(struct mm_struct *mm, struct task_struct *owner);
void sfu_mm_exit(struct mm_struct *mm);
void sfu_registry_use_hooks(bool on);
void sfu_mm_unmapped(struct mm_struct *mm, unsigned long start,
		     unsigned long end);
int sfu_mm_insert(struct sfu_mm *smm, struct sfu_region *r,
		  enum sfu_overlap overlap, gfp_t gfp);
int sfu_mm_remove_jit(struct sfu_mm *smm, unsigned long start);
void sfu_mm_remove_range(struct sfu_mm *smm, unsigned long start,
			 unsigned long end);
bool sfu_mm_covers(struct sfu_mm *smm, unsigned long addr,
		   const struct file *file);
struct sfu_region *sfu_region_find(struct mm_struct *mm, unsigned long pc);
bool sfu_mm_known(struct mm_struct *mm);
struct sfu_forked;
struct sfu_forked *sfu_forked_add(struct mm_struct *mm, struct sfu_map *snap);
const struct sfu_map *sfu_forked_snapshot(const struct sfu_forked *f);
void sfu_forked_del(struct sfu_forked *f);
struct sfu_map *sfu_mm_snapshot(struct sfu_mm *smm);
void sfu_map_release(struct sfu_map *map);
void sfu_registry_for_each(void (*fn)(struct sfu_mm *smm, void *arg),
			   void *arg);
int sfu_registry_init(void);
void sfu_registry_exit(void);

/* Module parameters; the KUnit suite changes these two. */
extern unsigned int sfu_max_sections;
extern unsigned long sfu_max_mm_bytes;
bool sfu_section_too_big(u64 len);

/* The registry's sizes, for the counters (stats.c). */
long sfu_stat_mms(void);
long sfu_stat_regions(void);

#endif /* _SFU_REGISTRY_H */
