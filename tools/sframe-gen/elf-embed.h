/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Post-link injection of an SFrame section into a 64-bit ELF file of either
 * byte order: the copy gets an allocated, read-only .sframe in a new
 * PT_LOAD segment, covered by PT_GNU_SFRAME.
 */
#ifndef _SCRIPTS_ELF_EMBED_H
#define _SCRIPTS_ELF_EMBED_H

#include <sframe/format.h>
#include "elf-sframe.h"

#define EMBED_ERR_MAX	160

/* Where the new segment goes; filled in by elf_embed_plan(). */
struct elf_embed {
	struct elf_view elf;	/* the file */
	u64 seg_off;		/* file offset of the new segment */
	u64 seg_vaddr;
	u64 seg_align;
	u64 phdr_size;		/* the program header table, first */
	u32 phnum;		/* its entries */
	u64 sframe_off;		/* then the section */
	u64 sframe_vaddr;
	u64 sframe_size;
	int old_sframe_ph;	/* an existing PT_GNU_SFRAME, or -1 */
	char err[EMBED_ERR_MAX];
};

int elf_embed_plan(const struct elf_file *f, struct elf_embed *e);
int elf_embed_write(struct elf_embed *e, const u8 *sec, u64 len,
		    struct elf_file *out);

#endif /* _SCRIPTS_ELF_EMBED_H */
