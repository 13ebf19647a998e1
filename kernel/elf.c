// SPDX-License-Identifier: GPL-2.0
/*
 * Reading ELF files: the ELF header, the program headers, the build-id
 * note, and what stat() says of a file's version.
 *
 * Everything is read from the file (kernel_read()), not from a process
 * that maps it, so it can be done for any mm in any task that may sleep,
 * and what is checked cannot change while it is checked.  Callers:
 * mapping.c, which builds regions for mappings, and sidecar.c, which
 * keeps sections registered for files.
 */
#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/stat.h>

#include <sframe/note.h>
#include <uapi/linux/sframe_unwind.h>

#include "compat.h"
#include "elf.h"

/* Program headers read per file; binaries have about a dozen. */
#define SFU_ELF_MAX_PHDRS	128

/**
 * sfu_elf_read_exact() - read @len bytes of @file at @off
 * @file: the file
 * @buf: where they go
 * @len: how many
 * @off: from where
 *
 * Return: 0, kernel_read()'s error, or -EIO for a short read.
 */
int sfu_elf_read_exact(struct file *file, void *buf, size_t len, u64 off)
{
	loff_t pos = off;
	ssize_t n = kernel_read(file, buf, len, &pos);

	if (n < 0)
		return n;
	return n == len ? 0 : -EIO;
}

/**
 * sfu_elf_read() - read the ELF header and program headers of @file
 * @file: the file
 * @elf: filled in; its program headers are freed by sfu_elf_free()
 *
 * Return: 0, -ENOEXEC for a file that is not a native ELF file, or
 * -ENOMEM.
 */
int sfu_elf_read(struct file *file, struct sfu_elf_headers *elf)
{
	Elf64_Ehdr *eh = &elf->eh;
	Elf64_Phdr *ph;
	size_t len;
	int ret;

	elf->ph = NULL;
	ret = sfu_elf_read_exact(file, eh, sizeof(*eh), 0);
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
	ret = sfu_elf_read_exact(file, ph, len, eh->e_phoff);
	if (ret) {
		kfree(ph);
		return -ENOEXEC;
	}
	elf->ph = ph;
	return 0;
}

/* Let go of the program headers sfu_elf_read() read. */
void sfu_elf_free(struct sfu_elf_headers *elf)
{
	kfree(elf->ph);
	elf->ph = NULL;
}

const Elf64_Phdr *sfu_elf_find(const struct sfu_elf_headers *elf, u32 type)
{
	unsigned int i;

	for (i = 0; i < elf->phnum; i++)
		if (elf->ph[i].p_type == type)
			return &elf->ph[i];
	return NULL;
}

/* The executable PT_LOAD whose file bytes a mapping at page @pgoff starts in. */
const Elf64_Phdr *sfu_elf_text(const struct sfu_elf_headers *elf,
			       unsigned long pgoff)
{
	u64 off = (u64)pgoff << PAGE_SHIFT;
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

/**
 * sfu_elf_bias() - the load bias of a mapping of a file's text segment
 * @text: the segment (sfu_elf_text())
 * @start: where the mapping starts
 * @pgoff: the page of the file it starts at
 *
 * Return: what the segment's link-time addresses are moved by.
 */
unsigned long sfu_elf_bias(const Elf64_Phdr *text, unsigned long start,
			   unsigned long pgoff)
{
	/* Address of file offset p_offset, minus p_vaddr. */
	return start + (text->p_offset - ((u64)pgoff << PAGE_SHIFT)) -
	       text->p_vaddr;
}

/* Is [off, off + len) file-backed inside a PT_LOAD, at matching vaddr? */
bool sfu_elf_loaded(const struct sfu_elf_headers *elf, const Elf64_Phdr *s)
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

/* The GNU build-id of the file (include/sframe/note.h), or 0 bytes. */
u32 sfu_elf_build_id(struct file *file, const struct sfu_elf_headers *elf,
		     u8 *id)
{
	unsigned int i;
	u8 *buf;
	u32 ret = 0;

	buf = kmalloc(SFU_NOTES_MAX, GFP_KERNEL);
	if (!buf)
		return 0;
	for (i = 0; i < elf->phnum && !ret; i++) {
		const Elf64_Phdr *p = &elf->ph[i];
		size_t len = min_t(u64, p->p_filesz, SFU_NOTES_MAX);

		if (p->p_type == PT_NOTE &&
		    !sfu_elf_read_exact(file, buf, len, p->p_offset))
			ret = sfu_note_build_id(buf, len, false, id,
						SFRAME_UNWIND_BUILD_ID_MAX);
	}
	kfree(buf);
	return ret;
}

/**
 * sfu_elf_file_build_id() - the GNU build-id of a file, from its headers up
 * @file: the file
 * @id: SFRAME_UNWIND_BUILD_ID_MAX bytes, filled in
 *
 * Return: the build-id's length, 0 for a file without one or that is not
 * a native ELF file.
 */
u32 sfu_elf_file_build_id(struct file *file, u8 *id)
{
	struct sfu_elf_headers elf;
	u32 len;

	if (sfu_elf_read(file, &elf))
		return 0;
	len = sfu_elf_build_id(file, &elf, id);
	sfu_elf_free(&elf);
	return len;
}

/**
 * sfu_file_stamp() - a file's version
 * @file: the file
 * @st: its size, modification and change times (as stat() gives them) and
 *	its inode's generation
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
	st->generation = file_inode(file)->i_generation;
	return 0;
}

/**
 * sfu_stamp_equal() - are two versions of a file the same?
 * @a: one, from sfu_file_stamp()
 * @b: the other
 *
 * A write changes the change time, and a new file that reuses an inode
 * number has another generation (where the file system keeps one) and a
 * later change time.
 *
 * Return: whether every part is equal.
 */
bool sfu_stamp_equal(const struct sfu_stamp *a, const struct sfu_stamp *b)
{
	return a->size == b->size && a->generation == b->generation &&
	       timespec64_equal(&a->mtime, &b->mtime) &&
	       timespec64_equal(&a->ctime, &b->ctime);
}
