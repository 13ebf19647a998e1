/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host tools' ELF reader: load a file, check its header once, walk
 * its program and section headers, and find its .sframe section.
 */
#ifndef _SCRIPTS_ELF_SFRAME_H
#define _SCRIPTS_ELF_SFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file {
	uint8_t *data;
	size_t size;
};

/*
 * Whether a file's section headers can be read (elf_view.sh_state): none
 * when e_shoff or e_shnum is 0; a bad table when e_shstrndx is past it or
 * it is past the end of the file; bad names when the section name table
 * is past the end of the file.
 */
enum elf_sh_state {
	ELF_SH_OK,
	ELF_SH_NONE,
	ELF_SH_BAD,
	ELF_SH_BAD_NAMES,
};

/*
 * A 64-bit ELF file of either byte order, its header checked by
 * elf_view_init(), and its header tables where they lie inside the file.
 */
struct elf_view {
	const struct elf_file *f;
	bool big;		/* the file's byte order */
	const uint8_t *ph;	/* program headers, phnum of them */
	uint32_t phnum;		/* 0 if e_phoff is 0 or the table is cut */
	const uint8_t *sh;	/* section headers, shnum of them */
	uint32_t shnum;		/* 0 unless ELF_SH_OK */
	const char *names;	/* section names, names_size bytes */
	uint64_t names_size;
	enum elf_sh_state sh_state;
};

/* Where a file's SFrame section is, as elf_find_sframe() found it. */
struct elf_sframe_loc {
	const uint8_t *data;	/* section bytes inside the loaded file */
	uint64_t size;
	uint64_t vaddr;		/* sh_addr (or p_vaddr) of the section */
	uint16_t machine;	/* e_machine, 0 for a raw section */
	const char *name;
};

/* A field of an ELF structure at @p, in the byte order of view @e. */
#define ELF_RD(e, p, type, field) \
	elf_rd((e)->big, (const uint8_t *)(p) + offsetof(type, field), \
	       sizeof(((type *)0)->field))
#define ELF_WR(e, p, type, field, v) \
	elf_wr((e)->big, (uint8_t *)(p) + offsetof(type, field), \
	       sizeof(((type *)0)->field), v)

uint64_t elf_rd(bool big, const void *p, unsigned int n);
void elf_wr(bool big, void *p, unsigned int n, uint64_t v);

int elf_file_load(const char *path, struct elf_file *f);
void elf_file_free(struct elf_file *f);
bool elf_in_file(const struct elf_file *f, uint64_t off, uint64_t len);

int elf_view_init(struct elf_view *e, const struct elf_file *f);
const uint8_t *elf_phdr(const struct elf_view *e, uint32_t i);
const uint8_t *elf_next_phdr(const struct elf_view *e, uint32_t type,
			     uint32_t *i);
const uint8_t *elf_shdr(const struct elf_view *e, uint32_t i);
const char *elf_sh_name(const struct elf_view *e, const uint8_t *sh);
bool elf_is_sframe_shdr(const struct elf_view *e, const uint8_t *sh);

int elf_find_sframe(const struct elf_file *f, struct elf_sframe_loc *loc);
const uint8_t *elf_at_vaddr(const struct elf_file *f, uint64_t vaddr,
			    uint64_t *left);
size_t elf_build_id(const struct elf_file *f, uint8_t *id, size_t max);

#endif /* _SCRIPTS_ELF_SFRAME_H */
