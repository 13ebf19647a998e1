/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host-side ELF helpers for the SFrame tools: load a file and find its
 * .sframe section.
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

/* Where a file's SFrame section is, as elf_find_sframe() found it. */
struct elf_sframe_loc {
	const uint8_t *data;	/* section bytes inside the loaded file */
	uint64_t size;
	uint64_t vaddr;		/* sh_addr (or p_vaddr) of the section */
	uint16_t machine;	/* e_machine, 0 for a raw section */
	const char *name;
};

/* A field of an ELF structure at @p, in the file's byte order. */
#define ELF_RD(big, p, type, field) \
	elf_rd(big, (const uint8_t *)(p) + offsetof(type, field), \
		   sizeof(((type *)0)->field))
#define ELF_WR(big, p, type, field, v) \
	elf_wr(big, (uint8_t *)(p) + offsetof(type, field), \
		   sizeof(((type *)0)->field), v)

uint64_t elf_rd(bool big, const void *p, unsigned int n);
void elf_wr(bool big, void *p, unsigned int n, uint64_t v);

int elf_file_load(const char *path, struct elf_file *f);
void elf_file_free(struct elf_file *f);
int elf_find_sframe(const struct elf_file *f, struct elf_sframe_loc *loc);
bool elf_in_file(const struct elf_file *f, uint64_t off, uint64_t len);
const uint8_t *elf_at_vaddr(const struct elf_file *f, uint64_t vaddr,
			    uint64_t *left);
size_t sfu_elf_build_id(const struct elf_file *f, uint8_t *id, size_t max);

#endif /* _SCRIPTS_ELF_SFRAME_H */
