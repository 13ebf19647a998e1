// SPDX-License-Identifier: GPL-2.0
/*
 * The section object: what a caller holds for one .sframe section.
 *
 * sfu_section_open() makes one in a call: the element headers checked
 * (decode.c), the FDE index (index.c) and the row index (rows.c) built,
 * and on request every row checked (validate.c) and the rows decoded
 * into a rule table (table.c), after which only the table is kept.  The
 * bytes are read where the caller says: a kernel copy, or the target's
 * own mapping in user memory (sfu_section_read_mapped()).  A rule table
 * is relative to the text: made once at a file's link-time addresses, it
 * serves every mapping of the file (kernel/region.h).
 */
#include "internal.h"

/**
 * sfu_section_init() - check an SFrame section and index it for lookups
 * @sec: the section object to fill
 * @base: address of the section's first byte where it can be read
 * @size: section size in bytes
 * @vaddr: address of the section's first byte in the target's address space
 * @mem: SFU_MEM_KERNEL or SFU_MEM_USER
 * @abi: the ABI id required, or SFU_ABI_ANY
 *
 * Validates the header of every element (magic, version, flags, ABI, byte
 * order, sub-section bounds and counts), reads every FDE start once, checks
 * that sections flagged sorted are, and builds the block index and the
 * row index (which decodes the rows of functions with many).  May sleep
 * and fault for user sections.  On error @sec->diag names the check.
 *
 * Return: 0 or a negative error code (see include/sframe/decode.h).
 */
int sfu_section_init(struct sfu_section *sec, unsigned long base, u64 size,
		     u64 vaddr, enum sfu_mem mem, u8 abi)
{
	int ret;

	memset(sec, 0, sizeof(*sec));
	sec->base = base;
	sec->size = size;
	sec->vaddr = vaddr;
	sec->mem = mem;
	sec->abi = abi;
	ret = sfu_parse_elems(sec);
	if (!ret)
		ret = sfu_index_build(sec);
	if (!ret)
		ret = sfu_rows_build(sec);
	if (ret)
		sfu_section_destroy(sec);
	return ret;
}

/**
 * sfu_section_open() - set up a section in one call, as its user wants it
 * @sec: the section object to fill
 * @base: address of the section's first byte in kernel memory
 * @size: section size in bytes
 * @vaddr: address of the section's first byte in the target's address space
 * @abi: the SFrame ABI the section must have, or SFU_ABI_ANY
 * @flags: SFU_OPEN_VALIDATE: check every row (sfu_section_validate());
 *	SFU_OPEN_TABLE: decode the rows into a rule table, which lookups
 *	then read instead of the section, and keep nothing else
 *	(sfu_section_strip()): the bytes may be freed
 *
 * sfu_section_init() on kernel memory, then what @flags ask.  A section
 * the table cannot describe (a row the decoder refuses, too many rules)
 * is refused, as a corrupt header is.
 *
 * Return: 0 or a negative error code (see include/sframe/decode.h);
 * @sec->diag says what failed, and nothing is left to free.
 */
int sfu_section_open(struct sfu_section *sec, const void *base, u64 size,
		     u64 vaddr, u8 abi, unsigned int flags)
{
	int ret;

	ret = sfu_section_init(sec, (unsigned long)base, size, vaddr,
			       SFU_MEM_KERNEL, abi);
	if (!ret && (flags & SFU_OPEN_VALIDATE))
		ret = sfu_section_validate(sec);
	if (!ret && (flags & SFU_OPEN_TABLE))
		ret = sfu_table_build(sec);
	if (ret) {
		sfu_section_destroy(sec);
		return ret;
	}
	if (flags & SFU_OPEN_TABLE)
		sfu_section_strip(sec);
	return 0;
}

/**
 * sfu_section_read_mapped() - read the section where the target maps it
 * @sec: a section set up on a kernel copy of its bytes
 *
 * From now on lookups read the bytes at the section's address in the
 * target's user memory, faulting or not as the reader's mode says; the
 * kernel copy may be freed.
 */
void sfu_section_read_mapped(struct sfu_section *sec)
{
	sec->base = sec->vaddr;
	sec->mem = SFU_MEM_USER;
}

/**
 * sfu_section_destroy() - free what sfu_section_init() allocated
 * @sec: the section
 */
void sfu_section_destroy(struct sfu_section *sec)
{
	sfu_table_destroy(sec);
	sfu_index_free(sec);
	sfu_free(sec->elems);
	sec->elems = NULL;
	sec->nr_fdes = 0;
	sec->nr_elems = 0;
}

/**
 * sfu_section_strip() - keep only what a walk through the rule table reads
 * @sec: a section with a rule table
 *
 * Frees the decoder's index (FDE keys and entries, blocks, row runs and
 * marks) and forgets where the bytes are: once a table answers for every
 * PC, the module needs neither, and the caller may free the bytes.  The
 * elements (a few dozen bytes each: version, ABI) and the text's bounds
 * stay.  Lookups through the decoder fail with -EFAULT from then on.
 */
void sfu_section_strip(struct sfu_section *sec)
{
	if (!sec->table)
		return;
	sfu_index_free(sec);
	sec->base = 0;
}

/**
 * sfu_section_bytes() - memory the decoder's indexes of a section hold
 * @sec: the section
 *
 * Every array sfu_section_init() and sfu_table_build() allocated.
 *
 * Return: bytes.
 */
size_t sfu_section_bytes(const struct sfu_section *sec)
{
	size_t n = (size_t)sec->nr_elems * sizeof(*sec->elems) +
		   (size_t)sec->nr_blocks * sizeof(*sec->blocks) +
		   (size_t)sec->nr_runs * sizeof(*sec->runs) +
		   (size_t)sec->nr_marks * sizeof(*sec->marks);

	if (sec->ents)
		n += (size_t)sec->nr_fdes * sizeof(*sec->ents);
	if (sec->keys)
		n += (size_t)sec->nr_fdes * sizeof(*sec->keys);
	return n + sfu_table_bytes(sec);
}
