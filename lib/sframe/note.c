// SPDX-License-Identifier: GPL-2.0
/*
 * The GNU build-id in a PT_NOTE segment's bytes.
 *
 * Kernel code that the host tools compile unchanged (include/sframe/env.h):
 * kernel/elf.c reads a file's notes and asks here, and so does the host's
 * tools/lib/elf-sframe.c, so the two agree on every file.
 */
#include <sframe/note.h>

/* Note names and descriptors are padded to this in ELF64 files too. */
#define SFU_NOTE_ALIGN		4
/* The owner name of GNU notes, with its NUL. */
static const char sfu_gnu_name[] = "GNU";

struct sfu_nhdr {
	u32 namesz;
	u32 descsz;
	u32 type;
};

static u32 sfu_note_word(const u8 *p, bool swap)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return swap ? swab32(v) : v;
}

static u64 sfu_note_pad(u64 n)
{
	return (n + SFU_NOTE_ALIGN - 1) & ~(u64)(SFU_NOTE_ALIGN - 1);
}

static bool sfu_note_is_build_id(const struct sfu_nhdr *nh, const u8 *name)
{
	return nh->type == SFU_NT_GNU_BUILD_ID &&
	       nh->namesz == sizeof(sfu_gnu_name) &&
	       !memcmp(name, sfu_gnu_name, sizeof(sfu_gnu_name));
}

/**
 * sfu_note_build_id() - the GNU build-id among a PT_NOTE segment's notes
 * @notes: the segment's bytes
 * @len: how many; only the first SFU_NOTES_MAX count
 * @swap: the notes are of the other byte order than this machine's
 * @id: where the build-id goes
 * @max: room at @id
 *
 * Notes are read in order up to the first one that does not fit in
 * @len; a build-id longer than @max, or empty, is not one.
 *
 * Return: the build-id's length, or 0 if the notes hold none.
 */
u32 sfu_note_build_id(const u8 *notes, size_t len, bool swap, u8 *id,
		      u32 max)
{
	const u64 end = len < SFU_NOTES_MAX ? len : SFU_NOTES_MAX;
	u64 at = 0, name_at, desc_at;
	struct sfu_nhdr nh;

	while (end - at >= sizeof(nh)) {
		nh.namesz = sfu_note_word(notes + at, swap);
		nh.descsz = sfu_note_word(notes + at + sizeof(u32), swap);
		nh.type = sfu_note_word(notes + at + 2 * sizeof(u32), swap);
		name_at = at + sizeof(nh);
		desc_at = name_at + sfu_note_pad(nh.namesz);
		if (desc_at > end || sfu_note_pad(nh.descsz) > end - desc_at)
			return 0;
		if (sfu_note_is_build_id(&nh, notes + name_at) &&
		    nh.descsz && nh.descsz <= max) {
			memcpy(id, notes + desc_at, nh.descsz);
			return nh.descsz;
		}
		at = desc_at + sfu_note_pad(nh.descsz);
	}
	return 0;
}
