/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Regions (region.c): one registered section and the text range of one
 * process it describes, and what they borrow their sections from.
 */
#ifndef _SFU_REGION_H
#define _SFU_REGION_H

#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

#include <sframe/decode.h>
#include <sframe/table.h>
#include <uapi/linux/sframe_unwind.h>

struct file;
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
 * for the build-id frame_id.c reads once, when a trace first needs it.
 * Most regions borrow a rule table made once for their file (a file cache
 * entry's, a sidecar's) and point at it: the region itself is small.
 */
struct sfu_region {
	struct kref ref;
	atomic_t build_id_state;	/* SFU_BUILD_ID_*, frame_id.c */
	struct rcu_head rcu;
	unsigned long start;		/* text range */
	unsigned long end;
	/*
	 * The section: the region's own (@sec_own) or @owner's rule table,
	 * made at the file's link-time addresses: a PC is looked up in it
	 * at pc - @sec_delta (sfu_region_table_find()).  An own section is
	 * at the region's addresses (@sec_delta 0).  NULL until set.
	 */
	struct sfu_section *sec;
	unsigned long sec_delta;
	unsigned long bias;		/* load bias: pc - bias, the file's own */
	/*
	 * A reference to what @sec or the section's bytes are borrowed
	 * from, or NULL: they are the region's own.
	 */
	struct sfu_owner *owner;
	struct sfu_user *user;		/* a JIT region's payer, or NULL */
	/*
	 * The owner of a file region's file, who pays for an index of the
	 * region's own too (@file_bytes of it); NULL: root's, or none.
	 */
	struct sfu_user *file_user;
	size_t file_bytes;
	size_t bytes;			/* memory this region holds */
	/* The mapped file, or NULL (JIT); only for holders of @ref. */
	struct file *file;
	unsigned long ino;
	dev_t dev;
	u8 source;			/* SFRAME_UNWIND_SRC_* */
	u8 version;
	bool sec_own;			/* @sec is the region's, to free */
	/* The file's build-id, once frame_id.c read it (@build_id_state). */
	u8 build_id_len;
	u8 build_id[SFRAME_UNWIND_BUILD_ID_MAX];
};

/**
 * sfu_region_table_find() - the rule at a PC, from a region's rule table
 * @r: the region; its section has a table (@r->sec->table)
 * @pc: the address, in the region's process
 *
 * Return: as sfu_table_find().
 */
static __always_inline const struct sfu_rule *
sfu_region_table_find(const struct sfu_region *r, unsigned long pc)
{
	return sfu_table_find(r->sec, pc - r->sec_delta);
}

/**
 * sfu_region_table_find_return() - the rule at a return address, from a
 *	region's rule table, through the table's memo
 * @r: the region; its section has a table (@r->sec->table)
 * @pc: the address, in the region's process: a caller's PC less one
 * @salt: as sfu_table_find_return()'s
 *
 * Return: as sfu_table_find_return().
 */
static __always_inline const struct sfu_rule *
sfu_region_table_find_return(const struct sfu_region *r, unsigned long pc,
			     u32 salt)
{
	return sfu_table_find_return(r->sec, pc - r->sec_delta, salt);
}

/* Where @r's section is, in its process (if it is read there). */
static inline unsigned long sfu_region_sframe(const struct sfu_region *r)
{
	return r->sec->vaddr + r->sec_delta;
}

/*
 * Allocations in the mmap hook: the mmap lock is held for writing and
 * preemption may be off; a failure leaves the work to the task work.
 */
#define SFU_GFP_HOOK	(GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT)

struct sfu_region *sfu_region_alloc(gfp_t gfp);
struct sfu_region *sfu_region_alloc_jit(struct sfu_user *u);
void sfu_region_put(struct sfu_region *r);
void sfu_region_borrow_section(struct sfu_region *r, struct sfu_owner *owner,
			       struct sfu_section *sec,
			       unsigned long delta);
/* How a section is set up (sfu_section_check(), sfu_region_init_section()) */
#define SFU_SEC_USER	0x1	/* read where the process has it mapped */
#define SFU_SEC_TABLE	0x2	/* will not change: decode into a table */

int sfu_section_check(struct sfu_section *sec, const void *bytes, size_t len,
		      unsigned long vaddr, unsigned int flags);
int sfu_region_init_section(struct sfu_region *r, const void *bytes,
			    size_t len, unsigned long vaddr, unsigned int flags);
bool sfu_section_too_big(u64 len);

#endif /* _SFU_REGION_H */
