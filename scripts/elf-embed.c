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
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf-embed.h"

#define EMB_PAGE_MIN		4096
#define EMB_ALIGN		8
#define EMB_NEW_NAME		".sframe"
#define EMB_OLD_NAME		".sframe.old"

#define EMB_RD(e, p, type, field)	ELF_RD((e)->big, p, type, field)
#define EMB_WR(e, p, type, field, v)	ELF_WR((e)->big, p, type, field, v)

static u64 emb_align_up(u64 v, u64 a)
{
	return (v + a - 1) & ~(a - 1);
}

static int emb_fail(struct elf_embed *e, int err, const char *what)
{
	snprintf(e->err, sizeof(e->err), "%s", what);
	return err;
}

static const u8 *emb_phdr(const struct elf_file *f, const struct elf_embed *e,
			  u32 i)
{
	return f->data + EMB_RD(e, f->data, Elf64_Ehdr, e_phoff) +
	       (u64)i * sizeof(Elf64_Phdr);
}

static int emb_check_ehdr(const struct elf_file *f, struct elf_embed *e)
{
	const u8 *eh = f->data;
	u64 phoff, phnum, type;

	if (f->size < sizeof(Elf64_Ehdr) || memcmp(eh, ELFMAG, SELFMAG) ||
	    eh[EI_CLASS] != ELFCLASS64)
		return emb_fail(e, -ENOEXEC, "not a 64-bit ELF file");
	e->big = eh[EI_DATA] == ELFDATA2MSB;
	type = EMB_RD(e, eh, Elf64_Ehdr, e_type);
	if (type != ET_EXEC && type != ET_DYN)
		return emb_fail(e, -ENOEXEC,
				"not an executable or shared object");
	phoff = EMB_RD(e, eh, Elf64_Ehdr, e_phoff);
	phnum = EMB_RD(e, eh, Elf64_Ehdr, e_phnum);
	if (EMB_RD(e, eh, Elf64_Ehdr, e_phentsize) != sizeof(Elf64_Phdr) ||
	    !phnum || phnum + 2 >= PN_XNUM ||
	    !elf_in_file(f, phoff, phnum * sizeof(Elf64_Phdr)))
		return emb_fail(e, -ENOEXEC, "bad program header table");
	return 0;
}

/* The new segment's place: past the file and past the image. */
static int emb_place(const struct elf_file *f, struct elf_embed *e)
{
	u64 phnum = EMB_RD(e, f->data, Elf64_Ehdr, e_phnum);
	u64 delta = 0, end = 0, va, align, last_va = 0, i;
	bool first = true;
	const u8 *ph;

	e->seg_align = EMB_PAGE_MIN;
	e->old_sframe_ph = -1;
	for (i = 0; i < phnum; i++) {
		ph = emb_phdr(f, e, i);
		if (EMB_RD(e, ph, Elf64_Phdr, p_type) == SFRAME_PT_GNU_SFRAME)
			e->old_sframe_ph = (int)i;
		if (EMB_RD(e, ph, Elf64_Phdr, p_type) != PT_LOAD)
			continue;
		va = EMB_RD(e, ph, Elf64_Phdr, p_vaddr);
		align = EMB_RD(e, ph, Elf64_Phdr, p_align);
		if (align & (align - 1) || (!first && va < last_va))
			return emb_fail(e, -ENOEXEC, "PT_LOAD not sorted or badly aligned");
		if (first)
			delta = va - EMB_RD(e, ph, Elf64_Phdr, p_offset);
		first = false;
		last_va = va;
		if (align > e->seg_align)
			e->seg_align = align;
		va += EMB_RD(e, ph, Elf64_Phdr, p_memsz);
		if (va > end)
			end = va;
	}
	if (first)
		return emb_fail(e, -ENOEXEC, "no PT_LOAD segment");
	e->seg_off = f->size;
	if (end - delta > e->seg_off)
		e->seg_off = end - delta;
	e->seg_off = emb_align_up(e->seg_off, e->seg_align);
	e->seg_vaddr = e->seg_off + delta;
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
	int ret;

	memset(e, 0, sizeof(*e));
	ret = emb_check_ehdr(f, e);
	if (!ret)
		ret = emb_place(f, e);
	if (ret)
		return ret;
	e->phnum = EMB_RD(e, f->data, Elf64_Ehdr, e_phnum) + 1;
	if (e->old_sframe_ph < 0)
		e->phnum++;
	e->phdr_size = (u64)e->phnum * sizeof(Elf64_Phdr);
	e->sframe_off = e->seg_off + emb_align_up(e->phdr_size, EMB_ALIGN);
	e->sframe_vaddr = e->seg_vaddr + (e->sframe_off - e->seg_off);
	return 0;
}

static void emb_set_phdr(const struct elf_embed *e, u8 *ph, u32 type,
			 u32 flags, u64 off, u64 va, u64 size, u64 align)
{
	EMB_WR(e, ph, Elf64_Phdr, p_type, type);
	EMB_WR(e, ph, Elf64_Phdr, p_flags, flags);
	EMB_WR(e, ph, Elf64_Phdr, p_offset, off);
	EMB_WR(e, ph, Elf64_Phdr, p_vaddr, va);
	EMB_WR(e, ph, Elf64_Phdr, p_paddr, va);
	EMB_WR(e, ph, Elf64_Phdr, p_filesz, size);
	EMB_WR(e, ph, Elf64_Phdr, p_memsz, size);
	EMB_WR(e, ph, Elf64_Phdr, p_align, align);
}

static void emb_sframe_phdr(const struct elf_embed *e, u8 *ph)
{
	emb_set_phdr(e, ph, SFRAME_PT_GNU_SFRAME, PF_R, e->sframe_off,
		     e->sframe_vaddr, e->sframe_size, EMB_ALIGN);
}

/* The grown program header table, at the start of the new segment. */
static void emb_write_phdrs(const struct elf_file *f,
			    const struct elf_embed *e, u8 *out)
{
	u32 phnum = EMB_RD(e, f->data, Elf64_Ehdr, e_phnum), i, last = 0;
	u8 *ph = out + e->seg_off;
	u64 seg_size = e->sframe_off + e->sframe_size - e->seg_off;
	u32 type;

	for (i = 0; i < phnum; i++)
		if (EMB_RD(e, emb_phdr(f, e, i), Elf64_Phdr, p_type) == PT_LOAD)
			last = i;
	for (i = 0; i < phnum; i++, ph += sizeof(Elf64_Phdr)) {
		memcpy(ph, emb_phdr(f, e, i), sizeof(Elf64_Phdr));
		type = EMB_RD(e, ph, Elf64_Phdr, p_type);
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
	EMB_WR(e, out, Elf64_Ehdr, e_phoff, e->seg_off);
	EMB_WR(e, out, Elf64_Ehdr, e_phnum, e->phnum);
}

/* The section header table and its string table, if the file has them. */
struct emb_shdrs {
	u64 shoff;
	u32 shnum;
	u32 strndx;
	u64 stroff;
	u64 strsize;
	int old;		/* an existing .sframe section, or -1 */
};

static bool emb_is_sframe(const struct elf_file *f, const struct elf_embed *e,
			  const struct emb_shdrs *s, const u8 *sh)
{
	u64 name = EMB_RD(e, sh, Elf64_Shdr, sh_name);

	if (EMB_RD(e, sh, Elf64_Shdr, sh_type) == SFRAME_SHT_GNU_SFRAME)
		return true;
	return name < s->strsize &&
	       s->strsize - name >= sizeof(EMB_NEW_NAME) &&
	       !memcmp(f->data + s->stroff + name, EMB_NEW_NAME,
		       sizeof(EMB_NEW_NAME));
}

static int emb_read_shdrs(const struct elf_file *f, struct elf_embed *e,
			  struct emb_shdrs *s)
{
	const u8 *eh = f->data, *sh;
	u32 i;

	memset(s, 0, sizeof(*s));
	s->old = -1;
	s->shoff = EMB_RD(e, eh, Elf64_Ehdr, e_shoff);
	s->shnum = EMB_RD(e, eh, Elf64_Ehdr, e_shnum);
	s->strndx = EMB_RD(e, eh, Elf64_Ehdr, e_shstrndx);
	if (!s->shoff || !s->shnum) {
		s->shnum = 0;
		return 0;
	}
	if (EMB_RD(e, eh, Elf64_Ehdr, e_shentsize) != sizeof(Elf64_Shdr) ||
	    s->shnum + 1 >= SHN_LORESERVE || s->strndx >= s->shnum ||
	    !elf_in_file(f, s->shoff, (u64)s->shnum * sizeof(Elf64_Shdr)))
		return emb_fail(e, -ENOEXEC, "bad section header table");
	sh = eh + s->shoff + (u64)s->strndx * sizeof(Elf64_Shdr);
	s->stroff = EMB_RD(e, sh, Elf64_Shdr, sh_offset);
	s->strsize = EMB_RD(e, sh, Elf64_Shdr, sh_size);
	if (!elf_in_file(f, s->stroff, s->strsize))
		return emb_fail(e, -ENOEXEC, "bad section name table");
	for (i = 0; i < s->shnum; i++)
		if (emb_is_sframe(f, e, s,
				  eh + s->shoff + (u64)i * sizeof(Elf64_Shdr)))
			s->old = (int)i;
	return 0;
}

/* After the section: the names with ".sframe" added, then the headers. */
static void emb_write_shdrs(const struct elf_file *f,
			    const struct elf_embed *e,
			    const struct emb_shdrs *s, u8 *out, u64 at)
{
	u64 new_name = s->strsize, old_name = new_name + sizeof(EMB_NEW_NAME);
	u64 strsize = old_name + sizeof(EMB_OLD_NAME);
	u64 shoff = emb_align_up(at + strsize, EMB_ALIGN);
	u8 *sh = out + shoff;

	memcpy(out + at, f->data + s->stroff, s->strsize);
	memcpy(out + at + new_name, EMB_NEW_NAME, sizeof(EMB_NEW_NAME));
	memcpy(out + at + old_name, EMB_OLD_NAME, sizeof(EMB_OLD_NAME));
	memcpy(sh, f->data + s->shoff, (u64)s->shnum * sizeof(Elf64_Shdr));
	EMB_WR(e, sh + (u64)s->strndx * sizeof(Elf64_Shdr), Elf64_Shdr,
	       sh_offset, at);
	EMB_WR(e, sh + (u64)s->strndx * sizeof(Elf64_Shdr), Elf64_Shdr,
	       sh_size, strsize);
	if (s->old >= 0) {
		EMB_WR(e, sh + (u64)s->old * sizeof(Elf64_Shdr), Elf64_Shdr,
		       sh_name, old_name);
		EMB_WR(e, sh + (u64)s->old * sizeof(Elf64_Shdr), Elf64_Shdr,
		       sh_type, SHT_PROGBITS);
	}
	sh += (u64)s->shnum * sizeof(Elf64_Shdr);
	EMB_WR(e, sh, Elf64_Shdr, sh_name, new_name);
	EMB_WR(e, sh, Elf64_Shdr, sh_type, SHT_PROGBITS);
	EMB_WR(e, sh, Elf64_Shdr, sh_flags, SHF_ALLOC);
	EMB_WR(e, sh, Elf64_Shdr, sh_addr, e->sframe_vaddr);
	EMB_WR(e, sh, Elf64_Shdr, sh_offset, e->sframe_off);
	EMB_WR(e, sh, Elf64_Shdr, sh_size, e->sframe_size);
	EMB_WR(e, sh, Elf64_Shdr, sh_addralign, EMB_ALIGN);
	EMB_WR(e, out, Elf64_Ehdr, e_shoff, shoff);
	EMB_WR(e, out, Elf64_Ehdr, e_shnum, s->shnum + 1);
}

static u64 emb_shdrs_size(const struct emb_shdrs *s, u64 at)
{
	u64 strsize = s->strsize + sizeof(EMB_NEW_NAME) + sizeof(EMB_OLD_NAME);

	if (!s->shnum)
		return 0;
	return emb_align_up(at + strsize, EMB_ALIGN) - at +
	       ((u64)s->shnum + 1) * sizeof(Elf64_Shdr);
}

/**
 * elf_embed_write() - build a copy of a file with a section embedded
 * @f: the ELF file, as given to elf_embed_plan()
 * @e: the plan
 * @sec: the section, encoded for e->sframe_vaddr
 * @len: its size
 * @out: the new file; free with elf_file_free()
 *
 * Return: 0, or a negative errno with the reason in e->err.
 */
int elf_embed_write(const struct elf_file *f, struct elf_embed *e,
		    const u8 *sec, u64 len, struct elf_file *out)
{
	struct emb_shdrs s;
	u64 end;
	int ret;

	ret = emb_read_shdrs(f, e, &s);
	if (ret)
		return ret;
	e->sframe_size = len;
	end = e->sframe_off + len;
	out->size = end + emb_shdrs_size(&s, end);
	out->data = calloc(1, out->size);
	if (!out->data)
		return emb_fail(e, -ENOMEM, "out of memory");
	memcpy(out->data, f->data, f->size);
	emb_write_phdrs(f, e, out->data);
	memcpy(out->data + e->sframe_off, sec, len);
	if (s.shnum)
		emb_write_shdrs(f, e, &s, out->data, end);
	return 0;
}
