// SPDX-License-Identifier: GPL-2.0
/*
 * Regions: one registered section and the text range of one process it
 * describes.  Regions are immutable and reference counted: fork shares
 * them with the child, and a reader that must sleep (the faulting
 * unwinder) takes a reference.  A region's section is its own (checked
 * and indexed on a kernel copy of the bytes) or a rule table borrowed
 * from a file cache entry or a sidecar (filetab.c), which the region then
 * holds and looks up at the file's own addresses.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include <sframe/table.h>

#include "mem.h"
#include "quota.h"
#include "region.h"
#include "stats.h"

/*
 * The largest section taken, far above real programs, far below harm:
 * the mapping, sidecar and device code ask (sfu_section_too_big());
 * mem.c bounds the whole.
 */
#define SFU_DEF_MAX_SECTION_BYTES	(64UL << 20)

static unsigned long sfu_max_section_bytes = SFU_DEF_MAX_SECTION_BYTES;
module_param_named(max_section_bytes, sfu_max_section_bytes, ulong, 0644);
MODULE_PARM_DESC(max_section_bytes,
		 "Largest .sframe section accepted, in bytes (default 64 MiB)");

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
	if (r->sec_own) {
		sfu_section_destroy(r->sec);
		kfree(r->sec);
	}
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
 * sfu_region_borrow_section() - give a region a rule table made once
 * @r: the region, with no section yet
 * @owner: what holds @sec (a sidecar, a file cache entry); the region
 *	takes a reference
 * @sec: the section, with a rule table, at the file's link-time addresses
 * @delta: the mapping's load bias
 *
 * The region points at @sec, which stays @owner's: lookups move a PC by
 * @delta first (sfu_region_table_find()).
 */
void sfu_region_borrow_section(struct sfu_region *r, struct sfu_owner *owner,
			       struct sfu_section *sec,
			       unsigned long delta)
{
	/* Only a table is looked up at PC less @delta (unwind.c). */
	WARN_ON_ONCE(!sec->table);
	r->owner = sfu_owner_get(owner);
	r->sec = sec;
	r->sec_delta = delta;
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
 * Return: 0, -ENOMEM or a negative error code of the decoder; @r->sec's
 * diag says what the decoder refused.
 */
int sfu_region_init_section(struct sfu_region *r, const void *bytes,
			    size_t len, unsigned long vaddr, unsigned int flags)
{
	struct sfu_section *sec;
	size_t extra;
	int ret;

	sec = kzalloc(sizeof(*sec), GFP_KERNEL_ACCOUNT);
	if (!sec)
		return -ENOMEM;
	/* The region's own even if refused: its diag says why. */
	r->sec = sec;
	r->sec_own = true;
	ret = sfu_section_check(sec, bytes, len, vaddr, flags);
	if (ret)
		return ret;
	r->version = sec->elems[0].version;
	if (flags & SFU_SEC_USER)
		sfu_section_read_mapped(sec);
	extra = sizeof(*sec) + sfu_section_bytes(sec);
	ret = sfu_region_charge(r, extra);
	if (ret)
		return ret;
	r->bytes += extra;
	return 0;
}
