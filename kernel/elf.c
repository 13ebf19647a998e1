// SPDX-License-Identifier: GPL-2.0
/*
 * From a mapped ELF file to a registered region.
 *
 * Everything is read from the file (kernel_read()), not from the process:
 * the program headers, the build-id note and the .sframe bytes that the
 * decoder validates and indexes.  So a region can be built for any mm, in
 * any task that may sleep (the mapping task on its way back to user space,
 * or insmod scanning processes that were running before the module), and
 * what is validated cannot change while it is being validated.  Unwinding
 * later reads the section where the process has it mapped.
 *
 * Files without PT_GNU_SFRAME may have a sidecar: a section registered for
 * the file (device, inode, build-id) through the character device, kept
 * here in kernel memory and shared by every process mapping the file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "sfu.h"
#include "trace.h"

/* Program headers read per file; binaries have about a dozen. */
#define SFU_ELF_MAX_PHDRS	128
/* Note bytes searched for the build-id. */
#define SFU_ELF_MAX_NOTES	4096
#define SFU_GNU_NOTE_NAME	"GNU"
#define SFU_SIDECAR_HASH_BITS	6
/* Executable mappings a scan of one mm looks at. */
#define SFU_SCAN_MAX_VMAS	4096

struct sfu_elf {
	Elf64_Ehdr eh;
	const Elf64_Phdr *ph;
	unsigned int phnum;
	struct sfu_fcache *cached;	/* @ph is its copy, eh not read */
};

/* The mapping a region is built for, as seen under the mmap lock. */
struct sfu_vma_ref {
	struct file *file;
	unsigned long start;
	unsigned long end;
	unsigned long pgoff;
	pid_t tgid;		/* of the process it is mapped in */
};

static DEFINE_HASHTABLE(sfu_sidecars, SFU_SIDECAR_HASH_BITS);
static DEFINE_MUTEX(sfu_sidecar_lock);	/* guards sfu_sidecars */

/**
 * sfu_refuse() - say once (rate limited) why a section was refused
 * @who: the file's path, or what else the section belongs to
 * @why: the failed check
 * @off: section offset the check concerns
 * @err: the error code
 */
void sfu_refuse(const char *who, const char *why, u64 off, int err)
{
	enum sfu_stat stat;

	switch (err) {
	case -ENOMEM:
		stat = SFU_STAT_REFUSED_NOMEM;
		break;
	case -EFAULT:
	case -EIO:
		stat = SFU_STAT_REFUSED_FAULT;
		break;
	case -EFBIG:
	case -ENOSPC:
		stat = SFU_STAT_REFUSED_LIMIT;
		break;
	case -EDQUOT:
		/* sfu_mem_charge() counted refused_global_limit. */
		stat = SFU_STAT_NR;
		break;
	case -ENOEXEC:
		stat = SFU_STAT_REFUSED_ELF;
		break;
	default:
		stat = SFU_STAT_REFUSED_CORRUPT;
		break;
	}
	sfu_stat_inc(SFU_STAT_REFUSED);
	if (stat != SFU_STAT_NR)
		sfu_stat_inc(stat);
	pr_warn_ratelimited("%s: refused: %s at 0x%llx (%s, %pe)\n", who, why,
			    off, sfu_strerror(err), ERR_PTR(err));
}

/* Refuse a file's section, naming the file by path. */
static void sfu_refuse_file(struct file *file, const char *why, u64 off,
			    int err)
{
	char *buf = kmalloc(PATH_MAX, GFP_KERNEL);
	char *path = buf ? file_path(file, buf, PATH_MAX) : NULL;

	sfu_refuse(IS_ERR_OR_NULL(path) ? "(unnamed)" : path, why, off, err);
	kfree(buf);
}

static int sfu_read_exact(struct file *file, void *buf, size_t len, u64 off)
{
	loff_t pos = off;
	ssize_t n = kernel_read(file, buf, len, &pos);

	if (n < 0)
		return n;
	return n == len ? 0 : -EIO;
}

/* Read the ELF header and program headers of a native ELF file. */
static int sfu_elf_read(struct file *file, struct sfu_elf *elf)
{
	Elf64_Ehdr *eh = &elf->eh;
	size_t len;
	int ret;

	Elf64_Phdr *ph;

	elf->ph = NULL;
	elf->cached = NULL;
	ret = sfu_read_exact(file, eh, sizeof(*eh), 0);
	if (ret)
		return -ENOEXEC;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELF_CLASS ||
	    eh->e_ident[EI_DATA] != ELF_DATA || !elf_check_arch(eh) ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || !eh->e_phnum ||
	    eh->e_phnum > SFU_ELF_MAX_PHDRS)
		return -ENOEXEC;
	elf->phnum = eh->e_phnum;
	len = elf->phnum * sizeof(Elf64_Phdr);
	ph = kmalloc(len, GFP_KERNEL);
	if (!ph)
		return -ENOMEM;
	ret = sfu_read_exact(file, ph, len, eh->e_phoff);
	if (ret) {
		kfree(ph);
		return -ENOEXEC;
	}
	elf->ph = ph;
	return 0;
}

/*
 * The program headers of @file: those of its file cache entry if it has
 * one for the file as it is now (nothing is read), else read.
 */
static int sfu_elf_get(struct file *file, struct sfu_elf *elf)
{
	elf->cached = sfu_fcache_get(file);
	if (!elf->cached)
		return sfu_elf_read(file, elf);
	elf->ph = sfu_fcache_phdrs(elf->cached, &elf->phnum);
	return 0;
}

static void sfu_elf_put(struct sfu_elf *elf)
{
	if (elf->cached)
		sfu_fcache_put(elf->cached);
	else
		kfree(elf->ph);
}

static const Elf64_Phdr *sfu_elf_find(const struct sfu_elf *elf, u32 type)
{
	unsigned int i;

	for (i = 0; i < elf->phnum; i++)
		if (elf->ph[i].p_type == type)
			return &elf->ph[i];
	return NULL;
}

/* The executable PT_LOAD whose file bytes the mapping at @v starts in. */
static const Elf64_Phdr *sfu_elf_text(const struct sfu_elf *elf,
				      const struct sfu_vma_ref *v)
{
	u64 off = (u64)v->pgoff << PAGE_SHIFT;
	unsigned int i;

	for (i = 0; i < elf->phnum; i++) {
		const Elf64_Phdr *p = &elf->ph[i];
		u64 first = p->p_offset & PAGE_MASK;
		u64 end = p->p_offset + p->p_filesz;

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) &&
		    end > p->p_offset && off >= first && off < end)
			return p;
	}
	return NULL;
}

/* Is [off, off + len) file-backed inside a PT_LOAD, at matching vaddr? */
static bool sfu_elf_loaded(const struct sfu_elf *elf, const Elf64_Phdr *s)
{
	unsigned int i;

	for (i = 0; i < elf->phnum; i++) {
		const Elf64_Phdr *p = &elf->ph[i];

		if (p->p_type != PT_LOAD || s->p_offset < p->p_offset ||
		    s->p_filesz > p->p_filesz ||
		    s->p_offset - p->p_offset > p->p_filesz - s->p_filesz)
			continue;
		if (s->p_vaddr - p->p_vaddr == s->p_offset - p->p_offset)
			return true;
	}
	return false;
}

/* The NT_GNU_BUILD_ID of the file, or 0 bytes. */
static u32 sfu_elf_build_id(struct file *file, const struct sfu_elf *elf,
			    u8 *id)
{
	const u32 name_len = sizeof(SFU_GNU_NOTE_NAME);
	unsigned int i;
	u8 *buf;
	u32 ret = 0;

	buf = kmalloc(SFU_ELF_MAX_NOTES, GFP_KERNEL);
	if (!buf)
		return 0;
	for (i = 0; i < elf->phnum && !ret; i++) {
		const Elf64_Phdr *p = &elf->ph[i];
		size_t len = min_t(u64, p->p_filesz, SFU_ELF_MAX_NOTES);
		size_t at = 0;

		if (p->p_type != PT_NOTE ||
		    sfu_read_exact(file, buf, len, p->p_offset))
			continue;
		while (len - at >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			size_t desc, next;

			memcpy(&nh, buf + at, sizeof(nh));
			desc = at + sizeof(nh) + ALIGN(nh.n_namesz, 4);
			next = desc + ALIGN(nh.n_descsz, 4);
			if (nh.n_namesz > len || nh.n_descsz > len ||
			    next > len)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID &&
			    nh.n_namesz == name_len &&
			    !memcmp(buf + at + sizeof(nh), SFU_GNU_NOTE_NAME,
				    name_len) &&
			    nh.n_descsz && nh.n_descsz <=
			    SFRAME_UNWIND_BUILD_ID_MAX) {
				memcpy(id, buf + desc, nh.n_descsz);
				ret = nh.n_descsz;
				break;
			}
			at = next;
		}
	}
	kfree(buf);
	return ret;
}

/* ---- sidecars */

static unsigned long sfu_sidecar_key(dev_t dev, unsigned long ino)
{
	return ino ^ ((unsigned long)dev << 20);
}

/* Caller holds sfu_sidecar_lock. */
static struct sfu_blob *sfu_sidecar_find(dev_t dev, unsigned long ino)
{
	struct sfu_blob *blob;

	hash_for_each_possible(sfu_sidecars, blob, node,
			       sfu_sidecar_key(dev, ino))
		if (blob->dev == dev && blob->ino == ino)
			return blob;
	return NULL;
}

/**
 * sfu_file_stamp() - what stat() gives of a file's version
 * @file: the file
 * @st: its size, modification and change times
 *
 * Return: 0 or vfs_getattr()'s error.
 */
int sfu_file_stamp(struct file *file, struct sfu_stamp *st)
{
	struct kstat ks;
	int ret;

	ret = vfs_getattr(&file->f_path, &ks,
			  STATX_SIZE | STATX_MTIME | STATX_CTIME,
			  AT_STATX_SYNC_AS_STAT);
	if (ret)
		return ret;
	st->size = ks.size;
	st->mtime = ks.mtime;
	st->ctime = ks.ctime;
	return 0;
}

/*
 * Whether @file is still the file @blob was registered for: the same
 * build-id (read again only if the inode changed since), or, for a file
 * without one, the same size and modification time (so that a file
 * rewritten in place loses its sidecar either way).
 */
static bool sfu_sidecar_matches(const struct sfu_blob *blob,
				struct file *file, const struct sfu_elf *elf)
{
	u8 id[SFRAME_UNWIND_BUILD_ID_MAX];
	struct sfu_stamp st;
	u32 id_len;

	if (sfu_file_stamp(file, &st))
		return false;
	if (!blob->build_id_len)
		return st.size == blob->size &&
		       timespec64_equal(&st.mtime, &blob->mtime);
	/* Not written since (a write changes ctime): no need to read. */
	if (st.size == blob->size && timespec64_equal(&st.ctime, &blob->ctime))
		return true;
	id_len = sfu_elf_build_id(file, elf, id);
	return id_len == blob->build_id_len &&
	       !memcmp(id, blob->build_id, id_len);
}

/* A reference to @file's sidecar if it is still the file's. */
static struct sfu_blob *sfu_sidecar_get(struct file *file,
					const struct sfu_elf *elf)
{
	struct inode *inode = file_inode(file);
	struct sfu_blob *blob;

	mutex_lock(&sfu_sidecar_lock);
	blob = sfu_sidecar_find(inode->i_sb->s_dev, inode->i_ino);
	if (blob)
		kref_get(&blob->ref);
	mutex_unlock(&sfu_sidecar_lock);
	if (!blob || sfu_sidecar_matches(blob, file, elf))
		return blob;
	sfu_blob_put(blob);
	return NULL;
}

/* ---- regions for mappings */

/*
 * Index the file's section @bytes once for the file cache and lend it to
 * @r.  Return: true if @r has its section, false if the cache could not
 * take it (the caller indexes it for @r alone, and reports any error).
 */
static bool sfu_region_from_new_cache(struct sfu_region *r, struct file *file,
				      const struct sfu_elf *elf,
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
				struct sfu_elf *elf,
				const Elf64_Phdr *s, unsigned long bias)
{
	void *bytes;
	int ret;

	if (elf->cached) {
		sfu_fcache_lend(r, elf->cached, bias);
		sfu_stat_inc(SFU_STAT_FCACHE_HITS);
		return 0;
	}
	if (!s->p_filesz || s->p_filesz > sfu_max_section_bytes) {
		sfu_refuse_file(file, "section size", s->p_filesz, -EFBIG);
		return -EFBIG;
	}
	if (!sfu_elf_loaded(elf, s)) {
		sfu_refuse_file(file, "section outside the loaded segments",
				s->p_offset, -EBADMSG);
		return -EBADMSG;
	}
	ret = sfu_mem_charge(s->p_filesz);
	if (ret) {
		sfu_refuse_file(file, "max_total_bytes", s->p_filesz, ret);
		return ret;
	}
	bytes = kvmalloc(s->p_filesz, GFP_KERNEL | __GFP_NOWARN);
	if (!bytes) {
		sfu_mem_uncharge(s->p_filesz);
		return -ENOMEM;
	}
	ret = sfu_read_exact(file, bytes, s->p_filesz, s->p_offset);
	if (ret) {
		sfu_refuse_file(file, "short read", s->p_offset, ret);
		goto free_bytes;
	}
	if (sfu_region_from_new_cache(r, file, elf, s, bytes, bias))
		goto free_bytes;
	ret = sfu_region_init_section(r, bytes, s->p_filesz,
				      bias + s->p_vaddr,
				      SFU_SEC_USER | SFU_SEC_TABLE);
	if (ret)
		sfu_refuse_file(file, r->sec.diag.what ?: "section header",
				r->sec.diag.off, ret);
free_bytes:
	kvfree(bytes);
	sfu_mem_uncharge(s->p_filesz);
	return ret;
}

/*
 * The section of the sidecar the region holds (r->blob) for load bias
 * @bias: the sidecar's own index, moved, where it can be; else one built
 * for this region.
 */
static int sfu_region_from_blob(struct sfu_region *r, unsigned long bias)
{
	const struct sfu_blob *owner = r->blob->same ? r->blob->same : r->blob;

	if (owner->indexed && sfu_section_movable(&owner->sec)) {
		sfu_region_borrow_section(r, &owner->sec, bias);
		return 0;
	}
	return sfu_region_init_section(r, r->blob->data, r->blob->len,
				       bias + r->blob->link_vaddr, SFU_SEC_TABLE);
}

/* The load bias of the mapping @v of a file whose text segment is @text. */
static unsigned long sfu_vma_bias(const struct sfu_vma_ref *v,
				  const Elf64_Phdr *text)
{
	/* Address of file offset p_offset, minus p_vaddr. */
	return v->start + (text->p_offset - ((u64)v->pgoff << PAGE_SHIFT)) -
	       text->p_vaddr;
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
 * Build the region for the mapping @v: NULL if the file carries no SFrame
 * (and has no sidecar), an ERR_PTR if it does but it was refused.
 */
static struct sfu_region *sfu_region_for(const struct sfu_vma_ref *v)
{
	struct inode *inode = file_inode(v->file);
	const Elf64_Phdr *text, *sf;
	struct sfu_blob *blob = NULL;
	struct sfu_region *r = NULL;
	struct sfu_elf elf;
	unsigned long bias;
	int ret;

	ret = sfu_elf_get(v->file, &elf);
	if (ret)
		return ret == -ENOMEM ? ERR_PTR(ret) : NULL;
	text = sfu_elf_text(&elf, v);
	sf = sfu_elf_find(&elf, PT_GNU_SFRAME);
	if (!text)
		goto free_phdrs;
	if (!sf) {
		blob = sfu_sidecar_get(v->file, &elf);
		if (!blob) {
			trace_sframe_unwind_nosframe(v->tgid, v->start, v->end,
						     inode->i_sb->s_dev,
						     inode->i_ino);
			goto free_phdrs;
		}
	}
	bias = sfu_vma_bias(v, text);
	r = sfu_region_new(v, text, bias, sf ? SFRAME_UNWIND_SRC_ELF :
			   SFRAME_UNWIND_SRC_SIDECAR, GFP_KERNEL_ACCOUNT);
	if (IS_ERR(r))
		goto put_blob;
	r->blob = blob;
	blob = NULL;
	if (sf)
		ret = sfu_region_from_file(r, v->file, &elf, sf, bias);
	else
		ret = sfu_region_from_blob(r, bias);
	if (ret) {
		sfu_region_put(r);
		r = ERR_PTR(ret);
	}
put_blob:
	if (blob)
		sfu_blob_put(blob);
free_phdrs:
	sfu_elf_put(&elf);
	return r;
}

/**
 * sfu_elf_register_now() - register a new mapping of a cached file at once
 * @vma: the mapping, in the mmap hook: its mm's mmap lock held for writing
 *
 * Neither sleeps nor reads the file: only for a file whose index the file
 * cache holds as the file is now, mapped by a process that has a registry
 * already (dlopen(), mprotect() of a running program).  Anything else, and
 * any failure, is left to the task work (sfu_elf_register_vma()), which
 * does it all and reports refusals.
 *
 * Return: true if the mapping needs nothing more: registered, covered
 * already, or not a text segment of the file.
 */
bool sfu_elf_register_now(struct vm_area_struct *vma)
{
	struct sfu_vma_ref v = {
		.file = vma->vm_file,
		.start = vma->vm_start,
		.end = vma->vm_end,
		.pgoff = vma->vm_pgoff,
		.tgid = task_tgid_nr(current),
	};
	const Elf64_Phdr *text;
	struct sfu_region *r;
	struct sfu_elf elf;
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
	elf.cached = sfu_fcache_get_now(v.file);
	if (!elf.cached)
		return false;
	elf.ph = sfu_fcache_phdrs(elf.cached, &elf.phnum);
	text = sfu_elf_text(&elf, &v);
	if (!text) {
		done = true;
		goto put_elf;
	}
	bias = sfu_vma_bias(&v, text);
	r = sfu_region_new(&v, text, bias, SFRAME_UNWIND_SRC_ELF, SFU_GFP_HOOK);
	if (IS_ERR(r))
		goto put_elf;
	sfu_fcache_lend(r, elf.cached, bias);
	/* A section read where it is mapped wants its pages faulted in. */
	if (r->sec.table &&
	    !sfu_mm_insert(smm, r, SFU_OVERLAP_REPLACE, SFU_GFP_HOOK)) {
		sfu_stat_inc(SFU_STAT_FCACHE_HITS);
		sfu_stat_inc(SFU_STAT_REGISTERED_NOW);
		r = NULL;	/* the registry's now */
		done = true;
	}
	sfu_region_put(r);
put_elf:
	sfu_elf_put(&elf);
	return done;
}

/* Is the mapping described by @v still the one at v->start?  mmap lock. */
static bool sfu_vma_same(struct mm_struct *mm, const struct sfu_vma_ref *v)
{
	struct vm_area_struct *vma = vma_lookup(mm, v->start);

	return vma && vma->vm_file == v->file && vma->vm_pgoff == v->pgoff &&
	       (vma->vm_flags & VM_EXEC);
}

/**
 * sfu_elf_register_vma() - register the SFrame of the mapping at @addr
 * @mm: the address space; the caller holds a user reference
 * @owner: a task of @mm, named in listings
 * @addr: an address in an executable file mapping of @mm
 *
 * May sleep.  Takes the mmap lock itself: reads the mapping under it,
 * builds the region without it, then inserts the region under it again if
 * the mapping is still there.  A file without SFrame is not an error.
 *
 * Return: 0 or a negative error code.
 */
int sfu_elf_register_vma(struct mm_struct *mm, struct task_struct *owner,
			 unsigned long addr)
{
	struct vm_area_struct *vma;
	struct sfu_region *r;
	struct sfu_vma_ref v;
	unsigned long sframe = 0, sframe_len = 0;
	struct sfu_mm *smm;
	bool covered;
	int ret = 0;

	mmap_read_lock(mm);
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
	mmap_read_lock(mm);
	rcu_read_lock();
	covered = sfu_mm_covers(smm, v.start, v.file);
	rcu_read_unlock();
	if (sfu_vma_same(mm, &v) && !covered) {
		ret = sfu_mm_insert(smm, r, SFU_OVERLAP_REPLACE,
				    GFP_KERNEL_ACCOUNT);
		if (ret) {
			sfu_refuse_file(v.file, "registry", 0, ret);
		} else {
			sframe = r->sec.table ? 0 : r->sec.vaddr;
			sframe_len = r->sec.size;
			r = NULL;	/* the registry's now */
		}
	}
	mmap_read_unlock(mm);
	/*
	 * Map the pages of a section that walks read where it lives (one
	 * without a rule table) now, in the mapping task, so that the first
	 * non-faulting walks (perf samples) find them present.
	 */
	if (sframe && mm == current->mm)
		fault_in_readable((const char __user *)sframe, sframe_len);
put_region:
	sfu_region_put(r);
put_file:
	fput(v.file);
	return ret;
}

/* Is @vma an executable mapping of @inode (of any file if NULL)? */
static bool sfu_scan_wants(const struct vm_area_struct *vma,
			   const struct inode *inode)
{
	if (!vma->vm_file || !(vma->vm_flags & VM_EXEC))
		return false;
	return !inode || file_inode(vma->vm_file) == inode;
}

/**
 * sfu_scan_mm() - register the SFrame of the executable mappings of @mm
 * @mm: the address space; the caller holds a user reference
 * @owner: a task of @mm, named in listings
 * @inode: only the mappings of this file, or NULL for all
 *
 * For processes that were running before the module was loaded (all
 * mappings), and for those that mapped a file before a sidecar for it
 * was registered (that file's mappings).
 *
 * Return: 0 or a negative error code.
 */
int sfu_scan_mm(struct mm_struct *mm, struct task_struct *owner,
		const struct inode *inode)
{
	unsigned long *starts;
	struct vm_area_struct *vma;
	unsigned int i, n = 0;

	starts = kvmalloc_array(SFU_SCAN_MAX_VMAS, sizeof(*starts),
				GFP_KERNEL | __GFP_NOWARN);
	if (!starts)
		return -ENOMEM;
	mmap_read_lock(mm);
	{
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma) {
			if (n == SFU_SCAN_MAX_VMAS)
				break;
			if (sfu_scan_wants(vma, inode))
				starts[n++] = vma->vm_start;
		}
	}
	mmap_read_unlock(mm);
	for (i = 0; i < n; i++) {
		if (fatal_signal_pending(current))
			break;
		sfu_elf_register_vma(mm, owner, starts[i]);
	}
	kvfree(starts);
	if (!inode)
		sfu_stat_inc(SFU_STAT_SCANNED_MMS);
	return 0;
}

/* ---- sidecar registration (character device) */

/* Whether @a and @b hold the same section for files of one build-id. */
static bool sfu_sidecar_same(const struct sfu_blob *a,
			     const struct sfu_blob *b)
{
	return a->build_id_len && a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len) &&
	       a->link_vaddr == b->link_vaddr && a->len == b->len &&
	       !memcmp(a->data, b->data, a->len);
}

/*
 * If a sidecar in the table has the same section (another copy of the
 * file), let @blob use its bytes and free its own: identical sections are
 * kept once.  Caller holds sfu_sidecar_lock; @blob is not in the table.
 */
static void sfu_sidecar_share(struct sfu_blob *blob)
{
	struct sfu_blob *other, *owner;
	unsigned int bkt;

	hash_for_each(sfu_sidecars, bkt, other, node) {
		if (!sfu_sidecar_same(blob, other))
			continue;
		owner = other->same ? other->same : other;
		kref_get(&owner->ref);
		sfu_blob_unindex(blob);
		sfu_mem_uncharge(blob->len);
		kvfree(blob->data);
		blob->data = owner->data;
		blob->same = owner;
		return;
	}
}

/**
 * sfu_sidecar_add() - keep generated SFrame for the ELF file @file
 * @file: the file the section describes
 * @arg: the checked ioctl argument
 * @bytes: the section in the caller's memory
 *
 * Mappings of @file that exist already, in every process, get the section
 * too: the sidecar is in the table before they are looked for, so a
 * mapping made meanwhile is found by one or the other.
 *
 * Return: 0; -ENOEXEC not a native ELF file, -ESTALE build-id mismatch,
 * -EEXIST already registered (without SFRAME_UNWIND_REPLACE), -EFBIG too
 * large, a decoder error for a section that does not validate, -ENOMEM,
 * -EFAULT.
 */
int sfu_sidecar_add(struct file *file, const struct sframe_unwind_file *arg,
		    const void __user *bytes)
{
	struct inode *inode = file_inode(file);
	struct sfu_blob *blob, *old;
	struct sfu_stamp st;
	struct sfu_elf elf;
	int ret;

	if (arg->sframe_len > sfu_max_section_bytes)
		return -EFBIG;
	ret = sfu_elf_read(file, &elf);
	if (ret)
		return ret;
	blob = kzalloc(sizeof(*blob), GFP_KERNEL_ACCOUNT);
	if (!blob) {
		ret = -ENOMEM;
		goto free_phdrs;
	}
	kref_init(&blob->ref);
	blob->dev = inode->i_sb->s_dev;
	blob->ino = inode->i_ino;
	blob->link_vaddr = arg->sframe_vaddr;
	blob->len = arg->sframe_len;
	blob->build_id_len = sfu_elf_build_id(file, &elf, blob->build_id);
	ret = sfu_file_stamp(file, &st);
	if (ret)
		goto put_blob;
	blob->size = st.size;
	blob->mtime = st.mtime;
	blob->ctime = st.ctime;
	if (arg->build_id_len &&
	    (arg->build_id_len != blob->build_id_len ||
	     memcmp(arg->build_id, blob->build_id, arg->build_id_len))) {
		ret = -ESTALE;
		goto put_blob;
	}
	ret = sfu_mem_charge(blob->len);
	if (ret)
		goto put_blob;
	blob->data = kvmalloc(blob->len, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!blob->data) {
		sfu_mem_uncharge(blob->len);
		ret = -ENOMEM;
		goto put_blob;
	}
	if (copy_from_user(blob->data, bytes, blob->len)) {
		ret = -EFAULT;
		goto put_blob;
	}
	/* Validate and index once, at the link-time address. */
	ret = sfu_blob_index(blob);
	if (ret)
		goto put_blob;

	mutex_lock(&sfu_sidecar_lock);
	old = sfu_sidecar_find(blob->dev, blob->ino);
	if (old && !(arg->flags & SFRAME_UNWIND_REPLACE)) {
		ret = -EEXIST;
	} else {
		sfu_sidecar_share(blob);
		if (old)
			hash_del(&old->node);
		hash_add(sfu_sidecars, &blob->node,
			 sfu_sidecar_key(blob->dev, blob->ino));
		blob = old;	/* the table's reference to drop */
	}
	mutex_unlock(&sfu_sidecar_lock);
	if (!ret)
		sfu_scan_file(inode);
put_blob:
	if (blob)
		sfu_blob_put(blob);
free_phdrs:
	kfree(elf.ph);
	return ret;
}

/**
 * sfu_sidecar_stats() - what the sidecars hold
 * @nr: sidecars registered
 * @bytes: bytes of SFrame they keep in memory, each shared section once
 * @sharing: sidecars that use the bytes of another
 */
void sfu_sidecar_stats(u64 *nr, u64 *bytes, u64 *sharing)
{
	struct sfu_blob *blob;
	unsigned int bkt;

	*nr = 0;
	*bytes = 0;
	*sharing = 0;
	mutex_lock(&sfu_sidecar_lock);
	hash_for_each(sfu_sidecars, bkt, blob, node) {
		(*nr)++;
		if (blob->same)
			(*sharing)++;
		else
			*bytes += blob->len;
	}
	mutex_unlock(&sfu_sidecar_lock);
}

/**
 * sfu_sidecar_del() - forget the sidecar of @file
 * @file: the file
 *
 * Mappings that use it keep it until they go.
 *
 * Return: 0 or -ENOENT.
 */
int sfu_sidecar_del(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct sfu_blob *blob;

	mutex_lock(&sfu_sidecar_lock);
	blob = sfu_sidecar_find(inode->i_sb->s_dev, inode->i_ino);
	if (blob)
		hash_del(&blob->node);
	mutex_unlock(&sfu_sidecar_lock);
	if (!blob)
		return -ENOENT;
	sfu_blob_put(blob);
	return 0;
}

/**
 * sfu_sidecar_del_build_id() - forget every sidecar of files with a build-id
 * @id: the build-id
 * @len: its length, 1 to SFRAME_UNWIND_BUILD_ID_MAX
 *
 * For files that were deleted or renamed over, which no descriptor names.
 *
 * Return: 0 or -ENOENT.
 */
int sfu_sidecar_del_build_id(const u8 *id, u32 len)
{
	struct hlist_node *tmp;
	struct sfu_blob *blob;
	HLIST_HEAD(gone);
	int bkt;

	mutex_lock(&sfu_sidecar_lock);
	hash_for_each_safe(sfu_sidecars, bkt, tmp, blob, node) {
		if (blob->build_id_len != len || memcmp(blob->build_id, id, len))
			continue;
		hash_del(&blob->node);
		hlist_add_head(&blob->node, &gone);
	}
	mutex_unlock(&sfu_sidecar_lock);
	if (hlist_empty(&gone))
		return -ENOENT;
	hlist_for_each_entry_safe(blob, tmp, &gone, node) {
		hlist_del(&blob->node);
		sfu_blob_put(blob);
	}
	return 0;
}

/**
 * sfu_sidecar_list() - describe the sidecars
 * @out: room for @room entries (or NULL with @room 0)
 * @room: entries @out holds
 *
 * Return: how many sidecars there are; the first min(that, @room) are in
 * @out.
 */
u32 sfu_sidecar_list(struct sframe_unwind_sidecar *out, u32 room)
{
	struct sfu_blob *blob;
	u32 n = 0;
	int bkt;

	mutex_lock(&sfu_sidecar_lock);
	hash_for_each(sfu_sidecars, bkt, blob, node) {
		if (n < room) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].dev = new_encode_dev(blob->dev);
			out[n].ino = blob->ino;
			out[n].sframe_len = blob->len;
			out[n].build_id_len = blob->build_id_len;
			memcpy(out[n].build_id, blob->build_id,
			       blob->build_id_len);
		}
		n++;
	}
	mutex_unlock(&sfu_sidecar_lock);
	return n;
}

void sfu_sidecar_exit(void)
{
	struct hlist_node *tmp;
	struct sfu_blob *blob;
	int bkt;

	mutex_lock(&sfu_sidecar_lock);
	hash_for_each_safe(sfu_sidecars, bkt, tmp, blob, node) {
		hash_del(&blob->node);
		sfu_blob_put(blob);
	}
	mutex_unlock(&sfu_sidecar_lock);
}
