// SPDX-License-Identifier: GPL-2.0
/*
 * Post-link injection of an SFrame section.
 *
 * A linked file has no room for another program header, so the copy gets
 * a new read-only PT_LOAD segment after everything else, holding a grown
 * copy of the program header table followed by the section:
 *
 *   [ original file ][ zeros ][ phdrs + new PT_LOAD + PT_GNU_SFRAME ]
 *   [ .sframe ][ .shstrtab + ".sframe" ][ section headers + .sframe ]
 *
 * The segment's file offset and address differ by the same amount as the
 * first PT_LOAD's, so that both ways kernels derive AT_PHDR (from the
 * PT_LOAD holding e_phoff since 5.18, from the first PT_LOAD before) find
 * the new table; PT_PHDR moves with it.  The new PT_LOAD comes after the
 * last one (loaders want them sorted) and starts on a fresh page past the
 * end of the old image, bss included.  Nothing else moves: every offset
 * and address in the original part of the file stays valid.
 *
 * An existing PT_GNU_SFRAME is pointed at the new section and the old
 * .sframe section header renamed, so tools find the new one.
 *
 * Every sum of the file's fields is checked for overflow, and a file whose
 * segments wrap around or run past the file is refused: a wrapped end
 * would put the new segment inside the copy, or the copy past its buffer.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf-embed.h"

#define EMB_PAGE_MIN		4096
#define EMB_ALIGN		8
#define EMB_NEW_NAME		".sframe"
#define EMB_OLD_NAME		".sframe.old"
/*
 * The most zeros the copy puts between the file and the new segment: room
 * for the 2 GiB of static data of x86-64's small code model, and more.
 */
#define EMB_PAD_MAX		(4ULL << 30)

/* @v rounded up to @a, a power of two: false if that wraps. */
static bool emb_align_up(u64 v, u64 a, u64 *res)
{
	if (__builtin_add_overflow(v, a - 1, res))
		return false;
	*res &= ~(a - 1);
	return true;
}

static int emb_fail(struct elf_embed *e, int err, const char *what)
{
	snprintf(e->err, sizeof(e->err), "%s", what);
	return err;
}

static int emb_check_ehdr(const struct elf_file *f, struct elf_embed *e)
{
	const struct elf_view *v = &e->elf;
	u64 type;

	if (elf_view_init(&e->elf, f))
		return emb_fail(e, -ENOEXEC, "not a 64-bit ELF file");
	type = ELF_RD(v, f->data, Elf64_Ehdr, e_type);
	if (type != ET_EXEC && type != ET_DYN)
		return emb_fail(e, -ENOEXEC,
				"not an executable or shared object");
	if (ELF_RD(v, f->data, Elf64_Ehdr, e_phentsize) !=
	    sizeof(Elf64_Phdr) || !v->phnum || v->phnum + 2 >= PN_XNUM)
		return emb_fail(e, -ENOEXEC, "bad program header table");
	return 0;
}

/*
 * A PT_LOAD's end address, in @end, must not wrap, and its bytes in the
 * file, if it has any, must be in the file.
 */
static int emb_check_load(const struct elf_file *f, struct elf_embed *e,
			  const u8 *ph, u64 *end)
{
	const struct elf_view *v = &e->elf;
	u64 filesz = ELF_RD(v, ph, Elf64_Phdr, p_filesz);

	if (__builtin_add_overflow(ELF_RD(v, ph, Elf64_Phdr, p_vaddr),
				   ELF_RD(v, ph, Elf64_Phdr, p_memsz), end))
		return emb_fail(e, -ENOEXEC,
				"PT_LOAD wraps around the address space");
	if (filesz && !elf_in_file(f, ELF_RD(v, ph, Elf64_Phdr, p_offset),
				   filesz))
		return emb_fail(e, -ENOEXEC, "PT_LOAD past the end of the file");
	return 0;
}

/*
 * The new segment's place: past the file and past the image, at the file
 * offset the image's end has by the first PT_LOAD's, rounded up.
 */
static int emb_place(const struct elf_file *f, struct elf_embed *e)
{
	const struct elf_view *v = &e->elf;
	u64 va0 = 0, off0 = 0, end = 0, va, va_end, align, last_va = 0;
	bool first = true;
	const u8 *ph;
	int ret;
	u32 i;

	e->seg_align = EMB_PAGE_MIN;
	e->old_sframe_ph = -1;
	for (i = 0; (ph = elf_phdr(v, i)); i++) {
		if (ELF_RD(v, ph, Elf64_Phdr, p_type) == SFRAME_PT_GNU_SFRAME)
			e->old_sframe_ph = (int)i;
		if (ELF_RD(v, ph, Elf64_Phdr, p_type) != PT_LOAD)
			continue;
		va = ELF_RD(v, ph, Elf64_Phdr, p_vaddr);
		align = ELF_RD(v, ph, Elf64_Phdr, p_align);
		if (align & (align - 1) || (!first && va < last_va))
			return emb_fail(e, -ENOEXEC, "PT_LOAD not sorted or badly aligned");
		ret = emb_check_load(f, e, ph, &va_end);
		if (ret)
			return ret;
		if (first) {
			va0 = va;
			off0 = ELF_RD(v, ph, Elf64_Phdr, p_offset);
		}
		first = false;
		last_va = va;
		if (align > e->seg_align)
			e->seg_align = align;
		if (va_end > end)
			end = va_end;
	}
	if (first)
		return emb_fail(e, -ENOEXEC, "no PT_LOAD segment");
	/* end >= va0: the first PT_LOAD is the lowest and does not wrap. */
	if (__builtin_add_overflow(end - va0, off0, &e->seg_off))
		return emb_fail(e, -ENOEXEC,
				"PT_LOAD ends past the largest file offset");
	if (e->seg_off < f->size)
		e->seg_off = f->size;
	/* seg_off >= off0: at or past the image's end. */
	if (!emb_align_up(e->seg_off, e->seg_align, &e->seg_off) ||
	    __builtin_add_overflow(e->seg_off - off0, va0, &e->seg_vaddr))
		return emb_fail(e, -ENOEXEC,
				"no room for a segment past the image");
	return 0;
}

/**
 * elf_embed_plan() - decide where a section will go in a copy of a file
 * @f: the ELF file
 * @e: the plan; e->sframe_vaddr is the address to encode the section for
 *
 * Return: 0, or a negative errno with the reason in e->err.
 */
int elf_embed_plan(const struct elf_file *f, struct elf_embed *e)
{
	u64 phdrs;
	int ret;

	memset(e, 0, sizeof(*e));
	ret = emb_check_ehdr(f, e);
	if (!ret)
		ret = emb_place(f, e);
	if (ret)
		return ret;
	e->phnum = e->elf.phnum + 1;
	if (e->old_sframe_ph < 0)
		e->phnum++;
	e->phdr_size = (u64)e->phnum * sizeof(Elf64_Phdr);
	if (!emb_align_up(e->phdr_size, EMB_ALIGN, &phdrs) ||
	    __builtin_add_overflow(e->seg_off, phdrs, &e->sframe_off) ||
	    __builtin_add_overflow(e->seg_vaddr, phdrs, &e->sframe_vaddr))
		return emb_fail(e, -ENOEXEC,
				"no room for a segment past the image");
	return 0;
}

static void emb_set_phdr(const struct elf_embed *e, u8 *ph, u32 type,
			 u32 flags, u64 off, u64 va, u64 size, u64 align)
{
	const struct elf_view *v = &e->elf;

	ELF_WR(v, ph, Elf64_Phdr, p_type, type);
	ELF_WR(v, ph, Elf64_Phdr, p_flags, flags);
	ELF_WR(v, ph, Elf64_Phdr, p_offset, off);
	ELF_WR(v, ph, Elf64_Phdr, p_vaddr, va);
	ELF_WR(v, ph, Elf64_Phdr, p_paddr, va);
	ELF_WR(v, ph, Elf64_Phdr, p_filesz, size);
	ELF_WR(v, ph, Elf64_Phdr, p_memsz, size);
	ELF_WR(v, ph, Elf64_Phdr, p_align, align);
}

static void emb_sframe_phdr(const struct elf_embed *e, u8 *ph)
{
	emb_set_phdr(e, ph, SFRAME_PT_GNU_SFRAME, PF_R, e->sframe_off,
		     e->sframe_vaddr, e->sframe_size, EMB_ALIGN);
}

/* The grown program header table, at the start of the new segment. */
static void emb_write_phdrs(const struct elf_embed *e, u8 *out)
{
	const struct elf_view *v = &e->elf;
	u8 *ph = out + e->seg_off;
	u64 seg_size = e->sframe_off + e->sframe_size - e->seg_off;
	const u8 *old;
	u32 i, last = 0, type;

	for (i = 0; (old = elf_phdr(v, i)); i++)
		if (ELF_RD(v, old, Elf64_Phdr, p_type) == PT_LOAD)
			last = i;
	for (i = 0; (old = elf_phdr(v, i)); i++, ph += sizeof(Elf64_Phdr)) {
		memcpy(ph, old, sizeof(Elf64_Phdr));
		type = ELF_RD(v, ph, Elf64_Phdr, p_type);
		if (type == PT_PHDR)
			emb_set_phdr(e, ph, PT_PHDR, PF_R, e->seg_off,
				     e->seg_vaddr, e->phdr_size, EMB_ALIGN);
		else if (type == SFRAME_PT_GNU_SFRAME)
			emb_sframe_phdr(e, ph);
		if (i != last)
			continue;
		ph += sizeof(Elf64_Phdr);
		emb_set_phdr(e, ph, PT_LOAD, PF_R, e->seg_off, e->seg_vaddr,
			     seg_size, e->seg_align);
	}
	if (e->old_sframe_ph < 0)
		emb_sframe_phdr(e, ph);
	ELF_WR(v, out, Elf64_Ehdr, e_phoff, e->seg_off);
	ELF_WR(v, out, Elf64_Ehdr, e_phnum, e->phnum);
}

/*
 * The section headers, if the file has them: @old is set to the index of
 * an existing .sframe section, or -1.
 */
static int emb_read_shdrs(struct elf_embed *e, int *old)
{
	const struct elf_view *v = &e->elf;
	const u8 *eh = v->f->data, *sh;
	u32 i;

	*old = -1;
	if (v->sh_state == ELF_SH_NONE)
		return 0;
	if (ELF_RD(v, eh, Elf64_Ehdr, e_shentsize) != sizeof(Elf64_Shdr) ||
	    ELF_RD(v, eh, Elf64_Ehdr, e_shnum) + 1 >= SHN_LORESERVE ||
	    v->sh_state == ELF_SH_BAD)
		return emb_fail(e, -ENOEXEC, "bad section header table");
	if (v->sh_state != ELF_SH_OK)
		return emb_fail(e, -ENOEXEC, "bad section name table");
	for (i = 0; (sh = elf_shdr(v, i)); i++)
		if (elf_is_sframe_shdr(v, sh))
			*old = (int)i;
	return 0;
}

/*
 * After the section at @at: the names with ".sframe" added, then the
 * headers at @shoff, from emb_out_size().
 */
static void emb_write_shdrs(const struct elf_embed *e, int old, u8 *out,
			    u64 at, u64 shoff)
{
	const struct elf_view *v = &e->elf;
	u64 strndx = ELF_RD(v, v->f->data, Elf64_Ehdr, e_shstrndx);
	u64 new_name = v->names_size;
	u64 old_name = new_name + sizeof(EMB_NEW_NAME);
	u64 strsize = old_name + sizeof(EMB_OLD_NAME);
	u8 *sh = out + shoff;

	memcpy(out + at, v->names, v->names_size);
	memcpy(out + at + new_name, EMB_NEW_NAME, sizeof(EMB_NEW_NAME));
	memcpy(out + at + old_name, EMB_OLD_NAME, sizeof(EMB_OLD_NAME));
	memcpy(sh, v->sh, (u64)v->shnum * sizeof(Elf64_Shdr));
	ELF_WR(v, sh + strndx * sizeof(Elf64_Shdr), Elf64_Shdr, sh_offset, at);
	ELF_WR(v, sh + strndx * sizeof(Elf64_Shdr), Elf64_Shdr, sh_size,
	       strsize);
	if (old >= 0) {
		ELF_WR(v, sh + (u64)old * sizeof(Elf64_Shdr), Elf64_Shdr,
		       sh_name, old_name);
		ELF_WR(v, sh + (u64)old * sizeof(Elf64_Shdr), Elf64_Shdr,
		       sh_type, SHT_PROGBITS);
	}
	sh += (u64)v->shnum * sizeof(Elf64_Shdr);
	ELF_WR(v, sh, Elf64_Shdr, sh_name, new_name);
	ELF_WR(v, sh, Elf64_Shdr, sh_type, SHT_PROGBITS);
	ELF_WR(v, sh, Elf64_Shdr, sh_flags, SHF_ALLOC);
	ELF_WR(v, sh, Elf64_Shdr, sh_addr, e->sframe_vaddr);
	ELF_WR(v, sh, Elf64_Shdr, sh_offset, e->sframe_off);
	ELF_WR(v, sh, Elf64_Shdr, sh_size, e->sframe_size);
	ELF_WR(v, sh, Elf64_Shdr, sh_addralign, EMB_ALIGN);
	ELF_WR(v, out, Elf64_Ehdr, e_shoff, shoff);
	ELF_WR(v, out, Elf64_Ehdr, e_shnum, v->shnum + 1);
}

/*
 * The copy's size in @size, with the section ending at @end and the
 * section headers, if any, at @shoff: it holds the whole file, pads it by
 * at most EMB_PAD_MAX, and no sum wraps.
 */
static int emb_out_size(struct elf_embed *e, u64 *end, u64 *shoff,
			u64 *size)
{
	const struct elf_file *f = e->elf.f;
	u64 va_end, names;

	if (e->seg_off < f->size || e->sframe_off < e->seg_off ||
	    e->sframe_off - e->seg_off < e->phdr_size)
		return emb_fail(e, -EINVAL, "no plan for this file");
	if (e->seg_off - f->size > EMB_PAD_MAX)
		return emb_fail(e, -EFBIG,
				"the image ends too far past the end of the file");
	if (__builtin_add_overflow(e->sframe_off, e->sframe_size, end) ||
	    __builtin_add_overflow(e->sframe_vaddr, e->sframe_size, &va_end))
		return emb_fail(e, -EFBIG, "the section does not fit");
	*shoff = *size = *end;
	if (e->elf.shnum &&
	    (__builtin_add_overflow(e->elf.names_size, sizeof(EMB_NEW_NAME) +
				    sizeof(EMB_OLD_NAME), &names) ||
	     __builtin_add_overflow(*end, names, shoff) ||
	     !emb_align_up(*shoff, EMB_ALIGN, shoff) ||
	     __builtin_add_overflow(*shoff, ((u64)e->elf.shnum + 1) *
				    sizeof(Elf64_Shdr), size)))
		return emb_fail(e, -EFBIG, "the section headers do not fit");
	if ((size_t)*size != *size)
		return emb_fail(e, -EFBIG, "the copy is too large");
	return 0;
}

/**
 * elf_embed_write() - build a copy of a file with a section embedded
 * @e: the plan, from elf_embed_plan()
 * @sec: the section, encoded for e->sframe_vaddr
 * @len: its size
 * @out: the new file; free with elf_file_free()
 *
 * Return: 0, or a negative errno with the reason in e->err.
 */
int elf_embed_write(struct elf_embed *e, const u8 *sec, u64 len,
		    struct elf_file *out)
{
	const struct elf_file *f = e->elf.f;
	u64 end, shoff, size;
	int ret, old;

	ret = emb_read_shdrs(e, &old);
	if (ret)
		return ret;
	e->sframe_size = len;
	ret = emb_out_size(e, &end, &shoff, &size);
	if (ret)
		return ret;
	out->size = size;
	out->data = calloc(1, out->size);
	if (!out->data)
		return emb_fail(e, -ENOMEM, "out of memory");
	memcpy(out->data, f->data, f->size);
	emb_write_phdrs(e, out->data);
	memcpy(out->data + e->sframe_off, sec, len);
	if (e->elf.shnum)
		emb_write_shdrs(e, old, out->data, end, shoff);
	return 0;
}
