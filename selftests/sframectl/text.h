/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text segment of an ELF file, for the programs of sframectl's trust
 * tests that map a file executable the way ld.so would (lease.c, fuse.c).
 */
#ifndef _SELFTESTS_SFRAMECTL_TEXT_H
#define _SELFTESTS_SFRAMECTL_TEXT_H

#include <elf.h>
#include <unistd.h>

/* The first executable PT_LOAD of the ELF file @fd; 0 or -1. */
static inline int text_segment(int fd, Elf64_Phdr *text)
{
	Elf64_Ehdr eh;
	int i;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    eh.e_phentsize != sizeof(*text))
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, text, sizeof(*text),
			  eh.e_phoff + i * sizeof(*text)) != sizeof(*text))
			return -1;
		if (text->p_type == PT_LOAD && (text->p_flags & PF_X))
			return 0;
	}
	return -1;
}

#endif /* _SELFTESTS_SFRAMECTL_TEXT_H */
