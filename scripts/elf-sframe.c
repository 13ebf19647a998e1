// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side ELF helpers for the SFrame tools.
 *
 * Reads 64-bit ELF files of either byte order and finds the .sframe
 * section by name, by section type, or (for files without section headers)
 * by the PT_GNU_SFRAME program header.  A file that starts with the SFrame
 * magic is taken as a raw section.  Every offset read from the file is
 * checked against the file size.
 */
#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/sframe/format.h"
#include "../include/sframe/note.h"
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

struct elf_view {
	const struct elf_file *f;
	bool big;		/* the file's byte order */
};

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

#define ELF_FIELD(e, p, type, field) \
	ELF_RD((e)->big, p, type, field)

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

static int elf_find_by_shdr(const struct elf_view *e,
			    struct elf_sframe_loc *loc)
{
	const uint8_t *eh = e->f->data, *sh, *str_sh;
	uint64_t shoff = ELF_FIELD(e, eh, Elf64_Ehdr, e_shoff);
	uint64_t shnum = ELF_FIELD(e, eh, Elf64_Ehdr, e_shnum);
	uint64_t shstrndx = ELF_FIELD(e, eh, Elf64_Ehdr, e_shstrndx);
	uint64_t stroff, strsize, name, i;

	if (!shoff || shstrndx >= shnum ||
	    !elf_in_file(e->f, shoff, shnum * sizeof(Elf64_Shdr)))
		return -1;
	str_sh = eh + shoff + shstrndx * sizeof(Elf64_Shdr);
	stroff = ELF_FIELD(e, str_sh, Elf64_Shdr, sh_offset);
	strsize = ELF_FIELD(e, str_sh, Elf64_Shdr, sh_size);
	if (!elf_in_file(e->f, stroff, strsize))
		return -1;
	for (i = 0; i < shnum; i++) {
		sh = eh + shoff + i * sizeof(Elf64_Shdr);
		name = ELF_FIELD(e, sh, Elf64_Shdr, sh_name);
		if (ELF_FIELD(e, sh, Elf64_Shdr, sh_type) !=
		    SFRAME_SHT_GNU_SFRAME &&
		    (name + sizeof(".sframe") > strsize ||
		     strcmp((const char *)eh + stroff + name, ".sframe")))
			continue;
		loc->size = ELF_FIELD(e, sh, Elf64_Shdr, sh_size);
		loc->vaddr = ELF_FIELD(e, sh, Elf64_Shdr, sh_addr);
		name = ELF_FIELD(e, sh, Elf64_Shdr, sh_offset);
		if (!elf_in_file(e->f, name, loc->size))
			return -1;
		loc->data = eh + name;
		loc->name = ".sframe";
		return 0;
	}
	return -1;
}

/*
 * The next program header of type @type, from index *@i on (which is
 * moved past it), or NULL; NULL too if the table is not inside the file.
 */
static const uint8_t *elf_next_phdr(const struct elf_file *f, bool big,
				    uint32_t type, uint64_t *i)
{
	uint64_t phoff = ELF_RD(big, f->data, Elf64_Ehdr, e_phoff);
	uint64_t phnum = ELF_RD(big, f->data, Elf64_Ehdr, e_phnum);
	const uint8_t *ph;

	if (!phoff || !elf_in_file(f, phoff, phnum * sizeof(Elf64_Phdr)))
		return NULL;
	while (*i < phnum) {
		ph = f->data + phoff + (*i)++ * sizeof(Elf64_Phdr);
		if (ELF_RD(big, ph, Elf64_Phdr, p_type) == type)
			return ph;
	}
	return NULL;
}

static int elf_find_by_phdr(const struct elf_view *e,
			    struct elf_sframe_loc *loc)
{
	const uint8_t *ph;
	uint64_t off, i = 0;

	ph = elf_next_phdr(e->f, e->big, SFRAME_PT_GNU_SFRAME, &i);
	if (!ph)
		return -1;
	off = ELF_FIELD(e, ph, Elf64_Phdr, p_offset);
	loc->size = ELF_FIELD(e, ph, Elf64_Phdr, p_filesz);
	loc->vaddr = ELF_FIELD(e, ph, Elf64_Phdr, p_vaddr);
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
	bool big = f->data[EI_DATA] == ELFDATA2MSB;
	uint64_t start, size, off, i = 0;
	const uint8_t *ph;

	while ((ph = elf_next_phdr(f, big, PT_LOAD, &i))) {
		start = ELF_RD(big, ph, Elf64_Phdr, p_vaddr);
		size = ELF_RD(big, ph, Elf64_Phdr, p_filesz);
		if (vaddr < start || vaddr - start >= size)
			continue;
		off = ELF_RD(big, ph, Elf64_Phdr, p_offset) + vaddr - start;
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
 * sfu_elf_build_id() - the GNU build-id of a loaded ELF file
 * @f: the file
 * @id: where the build-id goes
 * @max: room at @id
 *
 * Reads the PT_NOTE segments with the module's own note parser
 * (lib/sframe/note.c), so both find the same build-id in every file.
 *
 * Return: the build-id's length, or 0 if the file has none that fits.
 */
size_t sfu_elf_build_id(const struct elf_file *f, uint8_t *id, size_t max)
{
	uint64_t off, size, i = 0;
	const uint8_t *ph;
	size_t n;
	bool big;

	if (f->size < sizeof(Elf64_Ehdr) || memcmp(f->data, ELFMAG, SELFMAG) ||
	    f->data[EI_CLASS] != ELFCLASS64)
		return 0;
	big = f->data[EI_DATA] == ELFDATA2MSB;
	while ((ph = elf_next_phdr(f, big, PT_NOTE, &i))) {
		off = ELF_RD(big, ph, Elf64_Phdr, p_offset);
		size = ELF_RD(big, ph, Elf64_Phdr, p_filesz);
		if (!elf_in_file(f, off, size))
			continue;
		n = sfu_note_build_id(f->data + off, size,
				      elf_other_order(big), id,
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
	struct elf_view e = { .f = f };

	memset(loc, 0, sizeof(*loc));
	if (f->size >= sizeof(struct sframe_preamble) &&
	    ((f->data[0] == 0xe2 && f->data[1] == 0xde) ||
	     (f->data[0] == 0xde && f->data[1] == 0xe2))) {
		loc->data = f->data;
		loc->size = f->size;
		loc->name = "raw";
		return 0;
	}
	if (f->size < sizeof(Elf64_Ehdr) || memcmp(f->data, ELFMAG, SELFMAG) ||
	    f->data[EI_CLASS] != ELFCLASS64)
		return -1;
	e.big = f->data[EI_DATA] == ELFDATA2MSB;
	loc->machine = ELF_FIELD(&e, f->data, Elf64_Ehdr, e_machine);
	if (!elf_find_by_shdr(&e, loc) || !elf_find_by_phdr(&e, loc))
		return 0;
	return -1;
}
