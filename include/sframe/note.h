/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GNU build-id note, as the module and the host tools both read it.
 *
 * sframectl names a file by its build-id when it registers a section for
 * it, and the module compares that with the build-id it reads from the
 * file itself (ADD_FILE fails with -ESTALE if they differ), so both must
 * find the same note in the same bytes: one parser, built for both.
 */
#ifndef _SFRAME_NOTE_H
#define _SFRAME_NOTE_H

#include "env.h"

/* ELF note type of the GNU build-id (binutils' elf/common.h). */
#define SFU_NT_GNU_BUILD_ID	3
/* Bytes of a PT_NOTE segment searched for the build-id, from its start. */
#define SFU_NOTES_MAX		4096

u32 sfu_note_build_id(const u8 *notes, size_t len, bool swap, u8 *id,
		      u32 max);

#endif /* _SFRAME_NOTE_H */
