/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host-side ELF helpers for the SFrame tools: load a file and find its
 * .sframe section.
 */
#ifndef _SCRIPTS_ELF_SFRAME_H
#define _SCRIPTS_ELF_SFRAME_H

#include <stddef.h>
#include <stdint.h>

struct sfu_file {
	uint8_t *data;
	size_t size;
};

struct sfu_blob {
	const uint8_t *data;	/* section bytes inside the loaded file */
	uint64_t size;
	uint64_t vaddr;		/* sh_addr (or p_vaddr) of the section */
	uint16_t machine;	/* e_machine, 0 for a raw section */
	const char *name;
};

int sfu_file_load(const char *path, struct sfu_file *f);
void sfu_file_free(struct sfu_file *f);
int sfu_find_sframe(const struct sfu_file *f, struct sfu_blob *blob);

#endif /* _SCRIPTS_ELF_SFRAME_H */
