/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sections registered for files without their own (sidecar.c), kept
 * by device, inode and build-id.
 */
#ifndef _SFU_SIDECAR_H
#define _SFU_SIDECAR_H

#include <linux/types.h>

#include <sframe/decode.h>
#include <uapi/linux/sframe_unwind.h>

#include "filetab.h"

struct file;
struct sfu_watch;

/* A sidecar section: kernel copy of generated SFrame for one file. */
struct sfu_blob {
	/*
	 * In the store of per-file tables (filetab.c); references: the
	 * store, regions, the watch.  Its section is validated and made a
	 * rule table once, at the link-time address, when @indexed (only
	 * for a sidecar with a table of its own); the bytes are freed then.
	 * Mappings of the file borrow the table, shifted by their load bias
	 * (sfu_region_borrow_section()), instead of building one each.
	 */
	struct sfu_filetab_entry e;
	u8 build_id[SFRAME_UNWIND_BUILD_ID_MAX];
	u32 build_id_len;
	u64 link_vaddr;			/* section address at link time */
	size_t len;
	/* The section's bytes, until its rule table is built. */
	u8 *data;
	/*
	 * The sidecar whose rule table this one uses, when another file (a
	 * copy, the same file in another layer) registered the same section
	 * first; a reference to it.  NULL: its table is its own.
	 */
	struct sfu_blob *same;
	size_t sec_bytes;		/* what @e.sec holds */
	bool indexed;
	/* The watch on its file (watch.c) while in the table, or NULL. */
	struct sfu_watch *watch;
	/*
	 * The file's owner, who pays for the sidecar (NULL: root's), and
	 * what the sidecar and its watch take besides the table.
	 */
	struct sfu_user *user;
	size_t own_bytes;
};

static inline void sfu_blob_put(struct sfu_blob *blob)
{
	sfu_owner_put(&blob->e.owner);
}

struct sfu_blob *sfu_sidecar_get(struct file *file);
int sfu_sidecar_add(struct file *file, const struct sframe_unwind_file *arg,
		    const void __user *bytes);
int sfu_sidecar_del(struct file *file);
int sfu_sidecar_del_build_id(const u8 *id, u32 len);
u32 sfu_sidecar_list(struct sframe_unwind_sidecar *out, u32 room);
void sfu_sidecar_stats(u64 *nr, u64 *bytes, u64 *sharing);
int sfu_sidecar_init(void);
void sfu_sidecar_exit(void);

#endif /* _SFU_SIDECAR_H */
