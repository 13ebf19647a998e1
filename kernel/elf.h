/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading ELF files (elf.c): headers, program headers, the build-id,
 * and what stat() says of a file's version.
 */
#ifndef _SFU_ELF_H
#define _SFU_ELF_H

#include <linux/elf.h>
#include <linux/time64.h>
#include <linux/types.h>

struct file;

/*
 * A file's version: what stat() gives of it, and the inode's generation,
 * which tells a new file from an old one whose inode number it reuses.
 */
struct sfu_stamp {
	loff_t size;
	struct timespec64 mtime;
	struct timespec64 ctime;
	u32 generation;
};

/* The headers of a native ELF file. */
struct sfu_elf_headers {
	Elf64_Ehdr eh;
	const Elf64_Phdr *ph;
	unsigned int phnum;
};

int sfu_elf_read_exact(struct file *file, void *buf, size_t len, u64 off);
int sfu_elf_read(struct file *file, struct sfu_elf_headers *elf);
void sfu_elf_free(struct sfu_elf_headers *elf);
const Elf64_Phdr *sfu_elf_find(const struct sfu_elf_headers *elf, u32 type);
const Elf64_Phdr *sfu_elf_text(const struct sfu_elf_headers *elf,
			       unsigned long pgoff);
unsigned long sfu_elf_bias(const Elf64_Phdr *text, unsigned long start,
			   unsigned long pgoff);
bool sfu_elf_loaded(const struct sfu_elf_headers *elf, const Elf64_Phdr *s);
u32 sfu_elf_build_id(struct file *file, const struct sfu_elf_headers *elf,
		     u8 *id);
u32 sfu_elf_file_build_id(struct file *file, u8 *id);
int sfu_file_stamp(struct file *file, struct sfu_stamp *st);
bool sfu_stamp_equal(const struct sfu_stamp *a, const struct sfu_stamp *b);

#endif /* _SFU_ELF_H */
