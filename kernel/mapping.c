// SPDX-License-Identifier: GPL-2.0
/*
 * From a mapped ELF file to a registered region.
 *
 * A region's section comes from the file (elf.c reads it; the file cache,
 * filecache.c, keeps its index for the next mapping) or, for a file
 * without PT_GNU_SFRAME, from its sidecar (sidecar.c).  It is built in a
 * task that may sleep (the mapping task on its way back to user space,
 * or a scan of processes that were running before), without the mmap
 * lock, and inserted into the mm's registry (registry.c) if the mapping is
 * still there.  Unwinding later reads the section where the process has
 * it mapped, or its rule table in kernel memory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "compat.h"
#include "elf.h"
#include "filecache.h"
#include "mapping.h"
#include "mem.h"
#include "quota.h"
#include "registry.h"
#include "sidecar.h"
#include "sidecar_wait.h"
#include "stats.h"
#include "trace.h"

/* The mapping a region is built for, as seen under the mmap lock. */
struct sfu_vma_ref {
	struct file *file;
	unsigned long start;
	unsigned long end;
	unsigned long pgoff;
	pid_t tgid;		/* of the process it is mapped in */
	/* The mapping task, which may wait for a sidecar; NULL: no wait */
	struct task_struct *waiter;
	struct mm_struct *mm;
};

/*
 * The program headers of a mapped file: the file cache's copy when it
 * holds the file as it is now (nothing is read; @cached lends its
 * index), else read from the file.
 */
struct sfu_file_headers {
	struct sfu_elf_headers elf;
	struct sfu_fcache *cached;
};

static int sfu_headers_get(struct file *file, struct sfu_file_headers *h)
{
	h->cached = sfu_fcache_get(file);
	if (!h->cached)
		return sfu_elf_read(file, &h->elf);
	h->elf.ph = sfu_fcache_phdrs(h->cached, &h->elf.phnum);
	return 0;
}

/* The same without sleeping: the file cache's copy or nothing. */
static bool sfu_headers_get_now(struct file *file, struct sfu_file_headers *h)
{
	h->cached = sfu_fcache_get_now(file);
	if (!h->cached)
		return false;
	h->elf.ph = sfu_fcache_phdrs(h->cached, &h->elf.phnum);
	return true;
}

static void sfu_headers_put(struct sfu_file_headers *h)
{
	if (h->cached)
		sfu_fcache_put(h->cached);
	else
		sfu_elf_free(&h->elf);
}

/*
 * Index the file's section @bytes once for the file cache and lend it to
 * @r.  Return: true if @r has its section, false if the cache could not
 * take it (the caller indexes it for @r alone, and reports any error).
 */
static bool sfu_region_from_new_cache(struct sfu_region *r, struct file *file,
				      const struct sfu_elf_headers *elf,
				      const Elf64_Phdr *s, const void *bytes,
				      unsigned long bias)
{
	struct sfu_section sec;
	struct sfu_fcache *fc;

	if (!sfu_fcache_enabled() ||
	    sfu_section_check(&sec, bytes, s->p_filesz, s->p_vaddr,
			      SFU_SEC_TABLE))
		return false;
	fc = sfu_fcache_add(file, elf->ph, elf->phnum, &sec);
	sfu_section_destroy(&sec);
	if (!fc)
		return false;
	sfu_fcache_lend(r, fc, bias);
	sfu_fcache_put(fc);
	return true;
}

static int sfu_region_from_file(struct sfu_region *r, struct file *file,
				const struct sfu_file_headers *h,
				const Elf64_Phdr *s, unsigned long bias)
{
	const struct sfu_elf_headers *elf = &h->elf;
	void *bytes;
	int ret;

	if (h->cached) {
		sfu_fcache_lend(r, h->cached, bias);
		sfu_stat_inc(SFU_STAT_FCACHE_HITS);
		return 0;
	}
	if (!s->p_filesz || sfu_section_too_big(s->p_filesz)) {
		sfu_refuse_file(file, "section size", s->p_filesz, -EFBIG);
		return -EFBIG;
	}
	if (!sfu_elf_loaded(elf, s)) {
		sfu_refuse_file(file, "section outside the loaded segments",
				s->p_offset, -EBADMSG);
		return -EBADMSG;
	}
	bytes = sfu_mem_alloc(s->p_filesz);
	if (IS_ERR(bytes)) {
		ret = PTR_ERR(bytes);
		if (ret == -EDQUOT)
			sfu_refuse_file(file, "max_total_bytes", s->p_filesz,
					ret);
		return ret;
	}
	ret = sfu_elf_read_exact(file, bytes, s->p_filesz, s->p_offset);
	if (ret) {
		sfu_refuse_file(file, "short read", s->p_offset, ret);
		goto free_bytes;
	}
	if (sfu_region_from_new_cache(r, file, elf, s, bytes, bias))
		goto free_bytes;
	/* An index of the region's own: its file's owner pays for it. */
	r->file_user = sfu_file_user(file_inode(file));
	if (IS_ERR(r->file_user)) {
		ret = PTR_ERR(r->file_user);
		r->file_user = NULL;
		goto free_bytes;
	}
	ret = sfu_region_init_section(r, bytes, s->p_filesz,
				      bias + s->p_vaddr,
				      SFU_SEC_USER | SFU_SEC_TABLE);
	if (ret == -EDQUOT)
		sfu_refuse_file(file, "max_total_bytes or its owner's share",
				s->p_filesz, ret);
	else if (ret && r->sec)
		sfu_refuse_file(file, r->sec->diag.what ?: "section header",
				r->sec->diag.off, ret);
free_bytes:
	sfu_mem_free(bytes, s->p_filesz);
	return ret;
}

/*
 * The section of sidecar @blob for load bias @bias, from the sidecar whose
 * table it uses (a copy of a file may share another's): that table, moved
 * (a rule table is relative to the text).  The region holds that sidecar.
 */
static int sfu_region_from_blob(struct sfu_region *r, struct sfu_blob *blob,
				unsigned long bias)
{
	struct sfu_blob *owner = blob->same ? blob->same : blob;

	if (WARN_ON_ONCE(!owner->indexed))
		return -EINVAL;
	sfu_region_borrow_section(r, &owner->e.owner, &owner->e.sec, bias);
	return 0;
}

/*
 * A region for the mapping @v, whose text segment @text is at load bias
 * @bias, without its section yet.  Return: the region or an ERR_PTR.
 */
static struct sfu_region *sfu_region_new(const struct sfu_vma_ref *v,
					 const Elf64_Phdr *text,
					 unsigned long bias, u8 source,
					 gfp_t gfp)
{
	struct inode *inode = file_inode(v->file);
	struct sfu_region *r = sfu_region_alloc(gfp);

	if (!r)
		return ERR_PTR(-ENOMEM);
	r->start = bias + text->p_vaddr;
	r->end = r->start + text->p_memsz;
	r->bias = bias;
	r->source = source;
	r->dev = inode->i_sb->s_dev;
	r->ino = inode->i_ino;
	r->file = get_file(v->file);
	if (r->end <= r->start || r->end > TASK_SIZE) {
		sfu_region_put(r);
		return ERR_PTR(-EINVAL);
	}
	return r;
}

/*
 * Wait for the sidecar of @v's file (sidecar_wait.c), within what its process
 * may still wait, which its registry keeps.
 */
static struct sfu_blob *sfu_sidecar_wait(const struct sfu_vma_ref *v)
{
	struct sfu_mm *smm = sfu_mm_get(v->mm, v->waiter);

	if (IS_ERR(smm))
		return NULL;
	return sfu_first_map_wait(v->file, &smm->first_map_spent);
}

/*
 * Build the region for the mapping @v: NULL if the file carries no SFrame
 * (and has no sidecar), an ERR_PTR if it does but it was refused.  If
 * @v has a waiter, a file without either may wait for its sidecar.
 */
static struct sfu_region *sfu_region_for(const struct sfu_vma_ref *v)
{
	struct inode *inode = file_inode(v->file);
	const Elf64_Phdr *text, *sf;
	struct sfu_blob *blob = NULL;
	struct sfu_region *r = NULL;
	struct sfu_file_headers h;
	unsigned long bias;
	int ret;

	ret = sfu_headers_get(v->file, &h);
	if (ret)
		return ret == -ENOMEM ? ERR_PTR(ret) : NULL;
	text = sfu_elf_text(&h.elf, v->pgoff);
	sf = sfu_elf_find(&h.elf, SFRAME_PT_GNU_SFRAME);
	if (!text)
		goto free_phdrs;
	if (!sf) {
		blob = sfu_sidecar_get(v->file);
		if (!blob) {
			trace_sframe_unwind_nosframe(v->tgid, v->start, v->end,
						     inode);
			if (v->waiter)
				blob = sfu_sidecar_wait(v);
		}
		if (!blob)
			goto free_phdrs;
	}
	bias = sfu_elf_bias(text, v->start, v->pgoff);
	r = sfu_region_new(v, text, bias, sf ? SFRAME_UNWIND_SRC_ELF :
			   SFRAME_UNWIND_SRC_SIDECAR, GFP_KERNEL_ACCOUNT);
	if (IS_ERR(r))
		goto put_blob;
	if (sf)
		ret = sfu_region_from_file(r, v->file, &h, sf, bias);
	else
		ret = sfu_region_from_blob(r, blob, bias);
	if (ret) {
		sfu_region_put(r);
		r = ERR_PTR(ret);
	}
put_blob:
	if (blob)
		sfu_blob_put(blob);
free_phdrs:
	sfu_headers_put(&h);
	return r;
}

/**
 * sfu_mapping_register_now() - register a new mapping of a cached file at once
 * @vma: the mapping, in the mmap hook: its mm's mmap lock held for writing
 *
 * Neither sleeps nor reads the file: only for a file whose index the file
 * cache holds as the file is now, mapped by a process that has a registry
 * already (dlopen(), mprotect() of a running program).  Anything else, and
 * any failure, is left to the task work (sfu_mapping_register()), which
 * does it all and reports refusals.
 *
 * Return: true if the mapping needs nothing more: registered, covered
 * already, or not a text segment of the file.
 */
bool sfu_mapping_register_now(struct vm_area_struct *vma)
{
	struct sfu_vma_ref v = {
		.file = vma->vm_file,
		.start = vma->vm_start,
		.end = vma->vm_end,
		.pgoff = vma->vm_pgoff,
		.tgid = task_tgid_nr(current),
	};
	const Elf64_Phdr *text;
	struct sfu_file_headers h;
	struct sfu_region *r;
	struct sfu_mm *smm;
	unsigned long bias;
	bool done = false;

	if (!S_ISREG(file_inode(v.file)->i_mode))
		return false;
	/*
	 * The registry stays: the mm cannot exit while its mmap lock is
	 * held, and unload waits for the hooks to leave.
	 */
	rcu_read_lock();
	smm = sfu_mm_find(vma->vm_mm);
	if (smm && sfu_mm_covers(smm, v.start, v.file))
		done = true;
	rcu_read_unlock();
	if (!smm || done)
		return done;
	if (!sfu_headers_get_now(v.file, &h))
		return false;
	text = sfu_elf_text(&h.elf, v.pgoff);
	if (!text) {
		done = true;
		goto put_elf;
	}
	bias = sfu_elf_bias(text, v.start, v.pgoff);
	r = sfu_region_new(&v, text, bias, SFRAME_UNWIND_SRC_ELF, SFU_GFP_HOOK);
	if (IS_ERR(r))
		goto put_elf;
	sfu_fcache_lend(r, h.cached, bias);
	if (!sfu_mm_insert(smm, r, SFU_OVERLAP_REPLACE, SFU_GFP_HOOK)) {
		sfu_stat_inc(SFU_STAT_FCACHE_HITS);
		sfu_stat_inc(SFU_STAT_REGISTERED_NOW);
		r = NULL;	/* the registry's now */
		done = true;
	}
	sfu_region_put(r);
put_elf:
	sfu_headers_put(&h);
	return done;
}

/*
 * Take @mm's mmap lock for reading.  The mapping task takes its own,
 * killably.  A scan takes another process's only when it is free: a user
 * can hold their own mm's lock for as long as they like (a fault on a FUSE
 * file whose server does not answer, with a writer queued behind it), and
 * no scan may wait for them; the scan leaves that mm to its next mapping.
 */
static int sfu_map_lock(struct mm_struct *mm, enum sfu_map_from from)
{
	if (from == SFU_MAP_SCAN)
		return mmap_read_trylock(mm) ? 0 : -EBUSY;
	return mmap_read_lock_killable(mm);
}

/* Is the mapping described by @v still the one at v->start?  mmap lock. */
static bool sfu_vma_same(struct mm_struct *mm, const struct sfu_vma_ref *v)
{
	struct vm_area_struct *vma = vma_lookup(mm, v->start);

	return vma && vma->vm_file == v->file && vma->vm_pgoff == v->pgoff &&
	       (vma->vm_flags & VM_EXEC);
}

/**
 * sfu_mapping_register() - register the SFrame of the mapping at @addr
 * @mm: the address space; the caller holds a user reference
 * @owner: a task of @mm, named in listings
 * @addr: an address in an executable file mapping of @mm
 * @from: the mapping task on its way back to user space (a file without
 *	SFrame may wait for its sidecar, sidecar_wait.c), or a scan
 *
 * May sleep.  Takes the mmap lock itself (sfu_map_lock()): reads the
 * mapping under it, builds the region without it, then inserts the region
 * under it again if the mapping is still there.  A file without SFrame is
 * not an error.
 *
 * Return: 0 or a negative error code: -EBUSY if a scan found the lock
 * taken, -EINTR if the task was killed while it waited for it.
 */
int sfu_mapping_register(struct mm_struct *mm, struct task_struct *owner,
			 unsigned long addr, enum sfu_map_from from)
{
	struct vm_area_struct *vma;
	struct sfu_region *r;
	struct sfu_vma_ref v;
	struct sfu_mm *smm;
	bool covered;
	int ret;

	ret = sfu_map_lock(mm, from);
	if (ret)
		return ret;
	vma = vma_lookup(mm, addr);
	if (!vma || !vma->vm_file || !(vma->vm_flags & VM_EXEC)) {
		mmap_read_unlock(mm);
		return 0;
	}
	/*
	 * Only regular files are read: a device's read() may have side
	 * effects, or block for good.
	 */
	if (!S_ISREG(file_inode(vma->vm_file)->i_mode)) {
		mmap_read_unlock(mm);
		sfu_stat_inc(SFU_STAT_NOT_REGULAR);
		return 0;
	}
	v.file = get_file(vma->vm_file);
	v.start = vma->vm_start;
	v.end = vma->vm_end;
	v.pgoff = vma->vm_pgoff;
	v.tgid = task_tgid_nr(owner);
	rcu_read_lock();
	smm = sfu_mm_find(mm);
	if (smm && sfu_mm_covers(smm, v.start, v.file))
		smm = ERR_PTR(-EEXIST);
	rcu_read_unlock();
	mmap_read_unlock(mm);
	if (IS_ERR(smm))
		goto put_file;

	v.waiter = from == SFU_MAP_TASK ? owner : NULL;
	v.mm = mm;
	r = sfu_region_for(&v);
	if (IS_ERR_OR_NULL(r)) {
		ret = PTR_ERR_OR_ZERO(r);
		goto put_file;
	}
	smm = sfu_mm_get(mm, owner);
	if (IS_ERR(smm)) {
		ret = PTR_ERR(smm);
		goto put_region;
	}
	ret = sfu_map_lock(mm, from);
	if (ret)
		goto put_region;
	rcu_read_lock();
	covered = sfu_mm_covers(smm, v.start, v.file);
	rcu_read_unlock();
	if (sfu_vma_same(mm, &v) && !covered) {
		ret = sfu_mm_insert(smm, r, SFU_OVERLAP_REPLACE,
				    GFP_KERNEL_ACCOUNT);
		if (ret)
			sfu_refuse_file(v.file, "registry", 0, ret);
		else
			r = NULL;	/* the registry's now */
	}
	mmap_read_unlock(mm);
put_region:
	sfu_region_put(r);
put_file:
	fput(v.file);
	return ret;
}
