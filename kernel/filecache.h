/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Indexes of files with their own SFrame, kept while any process maps
 * them (filecache.c).
 */
#ifndef _SFU_FILECACHE_H
#define _SFU_FILECACHE_H

#include <linux/elf.h>
#include <linux/types.h>

struct file;
struct sfu_region;
struct sfu_section;

struct sfu_fcache;

bool sfu_fcache_enabled(void);
struct sfu_fcache *sfu_fcache_get(struct file *file);
struct sfu_fcache *sfu_fcache_get_now(struct file *file);
const Elf64_Phdr *sfu_fcache_phdrs(const struct sfu_fcache *fc,
				   unsigned int *phnum);
struct sfu_fcache *sfu_fcache_add(struct file *file, const Elf64_Phdr *ph,
				  unsigned int phnum, struct sfu_section *sec);
void sfu_fcache_lend(struct sfu_region *r, struct sfu_fcache *fc,
		     unsigned long bias);
void sfu_fcache_put(struct sfu_fcache *fc);
void sfu_fcache_stats(u64 *nr, u64 *bytes);
void sfu_fcache_exit(void);

#endif /* _SFU_FILECACHE_H */
