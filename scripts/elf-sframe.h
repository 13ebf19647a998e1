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

struct sfu_file {
	uint8_t *data;
	size_t size;
};

/* Where a file's SFrame section is, as sfu_find_sframe() found it. */
struct sfu_sframe_loc {
	const uint8_t *data;	/* section bytes inside the loaded file */
	uint64_t size;
	uint64_t vaddr;		/* sh_addr (or p_vaddr) of the section */
	uint16_t machine;	/* e_machine, 0 for a raw section */
	const char *name;
};

/* A field of an ELF structure at @p, in the file's byte order. */
#define SFU_ELF_RD(big, p, type, field) \
	sfu_elf_rd(big, (const uint8_t *)(p) + offsetof(type, field), \
		   sizeof(((type *)0)->field))
#define SFU_ELF_WR(big, p, type, field, v) \
	sfu_elf_wr(big, (uint8_t *)(p) + offsetof(type, field), \
		   sizeof(((type *)0)->field), v)

uint64_t sfu_elf_rd(bool big, const void *p, unsigned int n);
void sfu_elf_wr(bool big, void *p, unsigned int n, uint64_t v);

int sfu_file_load(const char *path, struct sfu_file *f);
void sfu_file_free(struct sfu_file *f);
int sfu_find_sframe(const struct sfu_file *f, struct sfu_sframe_loc *loc);
bool sfu_in_file(const struct sfu_file *f, uint64_t off, uint64_t len);
const uint8_t *sfu_elf_at_vaddr(const struct sfu_file *f, uint64_t vaddr,
				uint64_t *left);
size_t sfu_elf_build_id(const struct sfu_file *f, uint8_t *id, size_t max);

#endif /* _SCRIPTS_ELF_SFRAME_H */
