// SPDX-License-Identifier: GPL-2.0
/*
 * The host tools' ELF reader, the one place that reads ELF headers.
 *
 * Reads 64-bit ELF files of either byte order: elf_view_init() checks the
 * header and where the program and section header tables and the section
 * name table lie, once; the other functions walk those tables.  Finds the
 * .sframe section by name, by section type, or (for files without section
 * headers) by the PT_GNU_SFRAME program header.  A file that starts with
 * the SFrame magic is taken as a raw section.  Every offset read from the
 * file is checked against the file size.  Nothing here prints.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sframe/format.h>
#include <sframe/note.h>
#include "elf-sframe.h"

int elf_file_load(const char *path, struct elf_file *f)
{
	FILE *fp = fopen(path, "rb");
	long len;

	if (!fp)
		return -1;
	if (fseek(fp, 0, SEEK_END))
		goto close_file;
	len = ftell(fp);
	if (len < 0 || fseek(fp, 0, SEEK_SET))
		goto close_file;
	f->size = (size_t)len;
	f->data = malloc(f->size ? f->size : 1);
	if (!f->data)
		goto close_file;
	if (fread(f->data, 1, f->size, fp) != f->size)
		goto free_data;
	fclose(fp);
	return 0;

free_data:
	free(f->data);
	f->data = NULL;
close_file:
	fclose(fp);
	return -1;
}

void elf_file_free(struct elf_file *f)
{
	free(f->data);
	f->data = NULL;
}

#define ELF_BYTE_BITS	8
#define ELF_BYTE_MASK	0xff

/**
 * elf_rd() - read an ELF field in the file's byte order
 * @big: the file is big-endian
 * @p: the field
 * @n: its size in bytes, at most 8
 *
 * Return: the value, whatever the host's byte order.
 */
uint64_t elf_rd(bool big, const void *p, unsigned int n)
{
	const uint8_t *b = p;
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v = (v << ELF_BYTE_BITS) | b[big ? i : n - 1 - i];
	return v;
}

/**
 * elf_wr() - write an ELF field in the file's byte order
 * @big: the file is big-endian
 * @p: the field
 * @n: its size in bytes, at most 8
 * @v: the value
 */
void elf_wr(bool big, void *p, unsigned int n, uint64_t v)
{
	uint8_t *b = p;
	unsigned int i;

	for (i = 0; i < n; i++, v >>= ELF_BYTE_BITS)
		b[big ? n - 1 - i : i] = v & ELF_BYTE_MASK;
}

/**
 * elf_in_file() - whether a range lies inside a loaded file
 * @f: the file
 * @off: the range's offset
 * @len: its length
 *
 * Return: true if [@off, @off + @len) is inside @f, without overflow.
 */
bool elf_in_file(const struct elf_file *f, uint64_t off, uint64_t len)
{
	return off <= f->size && len <= f->size - off;
}

/* The program header table, if e_phoff is set and the table in the file. */
static void elf_view_phdrs(struct elf_view *e)
{
	const uint8_t *eh = e->f->data;
	uint64_t off = ELF_RD(e, eh, Elf64_Ehdr, e_phoff);
	uint64_t num = ELF_RD(e, eh, Elf64_Ehdr, e_phnum);

	if (!off || !elf_in_file(e->f, off, num * sizeof(Elf64_Phdr)))
		return;
	e->ph = eh + off;
	e->phnum = num;
}

/* The section header table and its name table, if both are in the file. */
static enum elf_sh_state elf_view_shdrs(struct elf_view *e)
{
	const uint8_t *eh = e->f->data, *str;
	uint64_t off = ELF_RD(e, eh, Elf64_Ehdr, e_shoff);
	uint64_t num = ELF_RD(e, eh, Elf64_Ehdr, e_shnum);
	uint64_t strndx = ELF_RD(e, eh, Elf64_Ehdr, e_shstrndx);
	uint64_t str_off, str_size;

	if (!off || !num)
		return ELF_SH_NONE;
	if (strndx >= num ||
	    !elf_in_file(e->f, off, num * sizeof(Elf64_Shdr)))
		return ELF_SH_BAD;
	str = eh + off + strndx * sizeof(Elf64_Shdr);
	str_off = ELF_RD(e, str, Elf64_Shdr, sh_offset);
	str_size = ELF_RD(e, str, Elf64_Shdr, sh_size);
	if (!elf_in_file(e->f, str_off, str_size))
		return ELF_SH_BAD_NAMES;
	e->sh = eh + off;
	e->shnum = num;
	e->names = (const char *)eh + str_off;
	e->names_size = str_size;
	return ELF_SH_OK;
}

/**
 * elf_view_init() - check a loaded file's ELF header
 * @e: the view of it
 * @f: the file
 *
 * A program header table at e_phoff 0 or past the end of the file is
 * taken as none; a section header table that cannot be read is none too,
 * and e->sh_state says why.
 *
 * Return: 0, or -ENOEXEC if @f is not a 64-bit ELF file.
 */
int elf_view_init(struct elf_view *e, const struct elf_file *f)
{
	memset(e, 0, sizeof(*e));
	e->f = f;
	if (f->size < sizeof(Elf64_Ehdr) || memcmp(f->data, ELFMAG, SELFMAG) ||
	    f->data[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	e->big = f->data[EI_DATA] == ELFDATA2MSB;
	elf_view_phdrs(e);
	e->sh_state = elf_view_shdrs(e);
	return 0;
}

/**
 * elf_phdr() - a program header
 * @e: the file
 * @i: its index
 *
 * Return: the header, or NULL if @i is past the table.
 */
const uint8_t *elf_phdr(const struct elf_view *e, uint32_t i)
{
	return i < e->phnum ? e->ph + (uint64_t)i * sizeof(Elf64_Phdr) : NULL;
}

/**
 * elf_next_phdr() - the next program header of a type
 * @e: the file
 * @type: its p_type
 * @i: the index to look from, moved past the header found
 *
 * Return: the header, or NULL if no more has @type.
 */
const uint8_t *elf_next_phdr(const struct elf_view *e, uint32_t type,
			     uint32_t *i)
{
	const uint8_t *ph;

	while ((ph = elf_phdr(e, *i))) {
		++*i;
		if (ELF_RD(e, ph, Elf64_Phdr, p_type) == type)
			return ph;
	}
	return NULL;
}

/**
 * elf_shdr() - a section header
 * @e: the file
 * @i: its index
 *
 * Return: the header, or NULL if @i is past the table.
 */
const uint8_t *elf_shdr(const struct elf_view *e, uint32_t i)
{
	return i < e->shnum ? e->sh + (uint64_t)i * sizeof(Elf64_Shdr) : NULL;
}

/**
 * elf_sh_name() - a section's name
 * @e: the file
 * @sh: the section's header, from elf_shdr()
 *
 * Return: the name, or "" if it does not end inside the name table.
 */
const char *elf_sh_name(const struct elf_view *e, const uint8_t *sh)
{
	uint64_t name = ELF_RD(e, sh, Elf64_Shdr, sh_name);

	if (name >= e->names_size ||
	    !memchr(e->names + name, 0, e->names_size - name))
		return "";
	return e->names + name;
}

/**
 * elf_is_sframe_shdr() - whether a section is the SFrame section
 * @e: the file
 * @sh: the section's header, from elf_shdr()
 *
 * Return: true if its type is SHT_GNU_SFRAME or its name ".sframe".
 */
bool elf_is_sframe_shdr(const struct elf_view *e, const uint8_t *sh)
{
	return ELF_RD(e, sh, Elf64_Shdr, sh_type) == SFRAME_SHT_GNU_SFRAME ||
	       !strcmp(elf_sh_name(e, sh), ".sframe");
}

static int elf_find_by_shdr(const struct elf_view *e,
			    struct elf_sframe_loc *loc)
{
	const uint8_t *sh;
	uint64_t off;
	uint32_t i;

	for (i = 0; (sh = elf_shdr(e, i)); i++) {
		if (!elf_is_sframe_shdr(e, sh))
			continue;
		loc->size = ELF_RD(e, sh, Elf64_Shdr, sh_size);
		loc->vaddr = ELF_RD(e, sh, Elf64_Shdr, sh_addr);
		off = ELF_RD(e, sh, Elf64_Shdr, sh_offset);
		if (!elf_in_file(e->f, off, loc->size))
			return -1;
		loc->data = e->f->data + off;
		loc->name = ".sframe";
		return 0;
	}
	return -1;
}

static int elf_find_by_phdr(const struct elf_view *e,
			    struct elf_sframe_loc *loc)
{
	const uint8_t *ph;
	uint64_t off;
	uint32_t i = 0;

	ph = elf_next_phdr(e, SFRAME_PT_GNU_SFRAME, &i);
	if (!ph)
		return -1;
	off = ELF_RD(e, ph, Elf64_Phdr, p_offset);
	loc->size = ELF_RD(e, ph, Elf64_Phdr, p_filesz);
	loc->vaddr = ELF_RD(e, ph, Elf64_Phdr, p_vaddr);
	if (!elf_in_file(e->f, off, loc->size))
		return -1;
	loc->data = e->f->data + off;
	loc->name = "PT_GNU_SFRAME";
	return 0;
}

/**
 * elf_at_vaddr() - the file's bytes at an address of its image
 * @f: a 64-bit ELF file (either byte order)
 * @vaddr: an address inside the file contents of one of its PT_LOADs
 * @left: set to the bytes from there to the end of those contents
 *
 * Return: the byte at @vaddr, or NULL if no PT_LOAD holds it in the file.
 */
const uint8_t *elf_at_vaddr(const struct elf_file *f, uint64_t vaddr,
			    uint64_t *left)
{
	uint64_t start, size, off;
	const uint8_t *ph;
	struct elf_view e;
	uint32_t i = 0;

	if (elf_view_init(&e, f))
		return NULL;
	while ((ph = elf_next_phdr(&e, PT_LOAD, &i))) {
		start = ELF_RD(&e, ph, Elf64_Phdr, p_vaddr);
		size = ELF_RD(&e, ph, Elf64_Phdr, p_filesz);
		if (vaddr < start || vaddr - start >= size)
			continue;
		off = ELF_RD(&e, ph, Elf64_Phdr, p_offset) + vaddr - start;
		*left = size - (vaddr - start);
		return elf_in_file(f, off, *left) ? f->data + off : NULL;
	}
	return NULL;
}

/* Is a file of byte order @big the other byte order than this machine's? */
static bool elf_other_order(bool big)
{
	return big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
}

/**
 * elf_build_id() - the GNU build-id of a loaded ELF file
 * @f: the file
 * @id: where the build-id goes
 * @max: room at @id
 *
 * Reads the PT_NOTE segments with the module's own note parser
 * (lib/sframe/note.c), so both find the same build-id in every file.
 *
 * Return: the build-id's length, or 0 if the file has none that fits.
 */
size_t elf_build_id(const struct elf_file *f, uint8_t *id, size_t max)
{
	uint64_t off, size;
	const uint8_t *ph;
	struct elf_view e;
	uint32_t i = 0;
	size_t n;

	if (elf_view_init(&e, f))
		return 0;
	while ((ph = elf_next_phdr(&e, PT_NOTE, &i))) {
		off = ELF_RD(&e, ph, Elf64_Phdr, p_offset);
		size = ELF_RD(&e, ph, Elf64_Phdr, p_filesz);
		if (!elf_in_file(f, off, size))
			continue;
		n = sfu_note_build_id(f->data + off, size,
				      elf_other_order(e.big), id,
				      max < U32_MAX ? max : U32_MAX);
		if (n)
			return n;
	}
	return 0;
}

/**
 * elf_find_sframe() - locate the SFrame data of a loaded file
 * @f: the file
 * @loc: where the section is described
 *
 * Return: 0, or -1 if the file is neither a 64-bit ELF with SFrame data
 * nor a raw SFrame section.
 */
int elf_find_sframe(const struct elf_file *f, struct elf_sframe_loc *loc)
{
	struct elf_view e;

	memset(loc, 0, sizeof(*loc));
	if (f->size >= sizeof(struct sframe_preamble) &&
	    ((f->data[0] == 0xe2 && f->data[1] == 0xde) ||
	     (f->data[0] == 0xde && f->data[1] == 0xe2))) {
		loc->data = f->data;
		loc->size = f->size;
		loc->name = "raw";
		return 0;
	}
	if (elf_view_init(&e, f))
		return -1;
	loc->machine = ELF_RD(&e, f->data, Elf64_Ehdr, e_machine);
	if (!elf_find_by_shdr(&e, loc) || !elf_find_by_phdr(&e, loc))
		return 0;
	return -1;
}
