/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A walk's frames as file + address, for the trace event
 * sframe_unwind_frames (frame_id.c).
 */
#ifndef _SFU_FRAME_ID_H
#define _SFU_FRAME_ID_H

#include <linux/types.h>

#include <uapi/linux/sframe_unwind.h>

/* Files one event names; frames in more are left as pcs. */
#define SFU_FRAMES_MAX_FILES	16

/**
 * struct sfu_frames - the frames of one walk, resolved
 * @nr: frames
 * @nr_files: files in the arrays below
 * @addrs: per frame, its address in its file (the pc for a frame in none)
 * @file_of: per frame, a file's index or SFRAME_UNWIND_FRAME_NO_FILE
 * @build_ids: per file, its GNU build-id
 * @build_id_lens: per file, the length of its build-id; 0 for none
 * @majors: per file, the device of its file system, as stat() splits it
 * @minors: and its minor
 * @inos: per file, its inode number
 */
struct sfu_frames {
	unsigned int nr;
	unsigned int nr_files;
	unsigned long *addrs;
	u8 *file_of;
	u8 build_ids[SFU_FRAMES_MAX_FILES][SFRAME_UNWIND_BUILD_ID_MAX];
	u8 build_id_lens[SFU_FRAMES_MAX_FILES];
	unsigned int majors[SFU_FRAMES_MAX_FILES];
	unsigned int minors[SFU_FRAMES_MAX_FILES];
	unsigned long inos[SFU_FRAMES_MAX_FILES];
};

void sfu_frames_trace(u64 cookie, const unsigned long *pcs, unsigned int nr);

#endif /* _SFU_FRAME_ID_H */
