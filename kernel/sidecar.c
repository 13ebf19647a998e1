// SPDX-License-Identifier: GPL-2.0
/*
 * Sidecars: SFrame registered for a file that has none of its own
 * (sframectl, through the character device), kept in kernel memory by
 * device, inode and build-id, and shared by every process that maps the
 * file.  A sidecar stays the file's while the file keeps its version (size,
 * times and inode generation, as the file cache checks them): a file
 * written since, or a new file that reuses the inode number, does not get
 * it, and the sidecar is dropped when it is found stale, and as soon as
 * the file's last name goes or its file system is unmounted (watch.c).
 * Identical sections of two copies of a file are kept once.  They are
 * kept in a store of per-file rule tables (filetab.c), as the file cache's
 * entries are: mappings look sidecars up without a lock (RCU).
 */
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <sframe/table.h>

#include "elf.h"
#include "mem.h"
#include "quota.h"
#include "registry.h"
#include "sidecar.h"
#include "stats.h"
#include "watch.h"

/* A daemon registers every file without SFrame that runs: room for them. */
#define SFU_SIDECAR_HASH_BITS	10

static inline struct sfu_blob *sfu_blob_of(struct sfu_filetab_entry *e)
{
	return e ? container_of(e, struct sfu_blob, e) : NULL;
}

/* The store took @e out: its watch ends.  Under the store's lock. */
static void sfu_sidecar_unhashed(struct sfu_filetab_entry *e)
{
	struct sfu_blob *blob = sfu_blob_of(e);

	sfu_watch_stop(blob->watch);
	blob->watch = NULL;
}

/*
 * A sidecar is freed a grace period after its last reference goes.
 */
DEFINE_SFU_FILETAB(sfu_sidecars, SFU_SIDECAR_HASH_BITS, sfu_sidecar_unhashed);

/* The sidecar of @inode, any version; the store's lock or RCU held. */
static struct sfu_blob *sfu_sidecar_find(const struct inode *inode)
{
	return sfu_blob_of(sfu_filetab_find(&sfu_sidecars, inode));
}

/*
 * Take @blob out of the table (and end its watch); the caller holds the
 * store's lock and then drops the table's reference.
 */
static void sfu_sidecar_unhash(struct sfu_blob *blob)
{
	sfu_filetab_unhash(&sfu_sidecars, &blob->e);
}

/*
 * Whether @file is still the file @blob was registered for: the same
 * version (sfu_stamp_equal()).  Not the build-id, which is bytes of the
 * file that its owner chose.
 */
static bool sfu_sidecar_matches(const struct sfu_blob *blob,
				struct file *file)
{
	struct sfu_stamp st;

	return !sfu_file_stamp(file, &st) && sfu_filetab_current(&blob->e, &st);
}

/**
 * sfu_blob_index() - validate a sidecar's bytes and build its rule table
 * @blob: the sidecar, with @blob->data of its own
 *
 * At the link-time address; mappings borrow the table.  Its memory is
 * charged once, to the sidecar.  Walks read nothing else, so the bytes
 * go (sfu_section_check() keeps only the table).
 *
 * Return: 0 or a negative error code of the decoder (@blob->e.sec.diag
 * says what failed), -ENOMEM, -EDQUOT.
 */
static int sfu_blob_index(struct sfu_blob *blob)
{
	int ret;

	ret = sfu_section_check(&blob->e.sec, blob->data, blob->len,
				blob->link_vaddr, SFU_SEC_TABLE);
	if (!ret) {
		blob->sec_bytes = sfu_section_bytes(&blob->e.sec);
		ret = sfu_file_charge(blob->user, blob->sec_bytes);
	}
	if (ret) {
		sfu_section_destroy(&blob->e.sec);
		return ret;
	}
	blob->indexed = true;
	sfu_mem_free(blob->data, blob->len);
	blob->data = NULL;
	return 0;
}

/* Drop a sidecar's table (it is going, or uses another's). */
static void sfu_blob_unindex(struct sfu_blob *blob)
{
	if (!blob->indexed)
		return;
	sfu_section_destroy(&blob->e.sec);
	sfu_file_uncharge(blob->user, blob->sec_bytes);
	blob->indexed = false;
}

/*
 * Count @blob itself and its watch: in the pool and to @inode's owner,
 * so that a user's sidecars take that user's share, however many.
 */
static int sfu_blob_charge(struct sfu_blob *blob, const struct inode *inode)
{
	size_t bytes = sizeof(*blob) + sfu_watch_bytes();
	struct sfu_user *u = sfu_file_user(inode);
	int ret;

	if (IS_ERR(u))
		return PTR_ERR(u);
	ret = sfu_file_charge(u, bytes);
	if (ret) {
		sfu_user_put(u);
		return ret;
	}
	blob->user = u;
	blob->own_bytes = bytes;
	return 0;
}

static void sfu_blob_uncharge(struct sfu_blob *blob)
{
	sfu_file_uncharge(blob->user, blob->own_bytes);
	sfu_user_put(blob->user);
}

static void sfu_blob_release(struct kref *ref)
{
	struct sfu_blob *blob = container_of(ref, struct sfu_blob,
					    e.owner.ref);

	sfu_blob_unindex(blob);
	if (blob->same)
		sfu_blob_put(blob->same);
	else if (blob->data)
		sfu_mem_free(blob->data, blob->len);
	sfu_blob_uncharge(blob);
	kfree_rcu(blob, e.rcu);	/* sfu_sidecar_get() looks under RCU */
}

/*
 * The file of a sidecar has lost its last name, or its file system was
 * unmounted (the watch's callback, watch.c).  Mappings that use the
 * sidecar keep it until they go.
 */
static void sfu_sidecar_gone(struct sfu_owner *owner)
{
	struct sfu_blob *blob = container_of(owner, struct sfu_blob, e.owner);

	if (sfu_filetab_remove(&sfu_sidecars, &blob->e))
		sfu_stat_inc(SFU_STAT_SIDECARS_GONE);
}

/**
 * sfu_sidecar_get() - the sidecar of @file, if it is still the file's
 * @file: a mapped file without SFrame of its own
 *
 * A sidecar of the inode number that is not (any more) the file's is
 * dropped.
 *
 * Return: a reference to the sidecar (sfu_blob_put() drops it), or NULL.
 */
struct sfu_blob *sfu_sidecar_get(struct file *file)
{
	struct sfu_blob *blob;

	blob = sfu_blob_of(sfu_filetab_get(&sfu_sidecars, file_inode(file),
					   NULL));
	if (!blob || sfu_sidecar_matches(blob, file))
		return blob;
	sfu_filetab_remove(&sfu_sidecars, &blob->e);
	sfu_blob_put(blob);
	return NULL;
}

/*
 * Whether @a and the sidecar whose table @b uses describe files of one
 * build-id alike: the same section length and address, the same rule
 * table (what walks read).
 */
static bool sfu_sidecar_same(const struct sfu_blob *a,
			     const struct sfu_blob *b)
{
	const struct sfu_blob *owner = b->same ? b->same : b;

	return a->build_id_len && a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len) &&
	       a->link_vaddr == b->link_vaddr && a->len == b->len &&
	       sfu_table_same(&a->e.sec, &owner->e.sec);
}

/*
 * If a sidecar in the table has the same section (another copy of the
 * file), let @blob use its table and free its own: identical sections are
 * kept once.  Caller holds the store's lock; @blob is not in the table.
 */
static void sfu_sidecar_share(struct sfu_blob *blob)
{
	struct sfu_filetab_entry *e;
	struct sfu_blob *owner;
	unsigned int bkt;

	sfu_filetab_for_each(&sfu_sidecars, bkt, e) {
		if (!sfu_sidecar_same(blob, sfu_blob_of(e)))
			continue;
		owner = sfu_blob_of(e)->same ?: sfu_blob_of(e);
		sfu_owner_get(&owner->e.owner);
		sfu_blob_unindex(blob);
		blob->same = owner;
		return;
	}
}

/**
 * sfu_sidecar_add() - keep generated SFrame for the ELF file @file
 * @file: the file the section describes
 * @arg: the checked ioctl argument
 * @bytes: the section in the caller's memory
 *
 * Only the store: mappings of @file that exist already are the caller's
 * to look for once this returned (scan.c's sfu_scan_file()), so that a
 * mapping made meanwhile is found by one or the other.
 *
 * Return: 0; -ENOEXEC not a native ELF file, -ESTALE build-id mismatch,
 * -EEXIST already registered for this version of the file (without
 * SFRAME_UNWIND_REPLACE), -EFBIG too large, a decoder error for a section
 * that does not validate, -ENOMEM, -EFAULT.
 */
int sfu_sidecar_add(struct file *file, const struct sframe_unwind_file *arg,
		    const void __user *bytes)
{
	struct inode *inode = file_inode(file);
	struct sfu_blob *blob, *old;
	struct sfu_elf_headers elf;
	void *data;
	int ret;

	if (sfu_section_too_big(arg->sframe_len))
		return -EFBIG;
	ret = sfu_elf_read(file, &elf);
	if (ret)
		return ret;
	blob = kzalloc(sizeof(*blob), GFP_KERNEL_ACCOUNT);
	if (!blob) {
		ret = -ENOMEM;
		goto free_phdrs;
	}
	ret = sfu_filetab_entry_init(&blob->e, file, sfu_blob_release);
	if (!ret)
		ret = sfu_blob_charge(blob, inode);
	if (ret)
		goto put_blob;
	blob->link_vaddr = arg->sframe_vaddr;
	blob->len = arg->sframe_len;
	blob->build_id_len = sfu_elf_build_id(file, &elf, blob->build_id);
	if (arg->build_id_len &&
	    (arg->build_id_len != blob->build_id_len ||
	     memcmp(arg->build_id, blob->build_id, arg->build_id_len))) {
		ret = -ESTALE;
		goto put_blob;
	}
	data = sfu_mem_alloc(blob->len);
	if (IS_ERR(data)) {
		ret = PTR_ERR(data);
		goto put_blob;
	}
	blob->data = data;
	if (copy_from_user(blob->data, bytes, blob->len)) {
		ret = -EFAULT;
		goto put_blob;
	}
	/* Validate and index once, at the link-time address. */
	ret = sfu_blob_index(blob);
	if (ret)
		goto put_blob;

	mutex_lock(&sfu_sidecars.lock);
	old = sfu_sidecar_find(inode);
	/* One of another version of the file (or another file) is stale. */
	if (old && !(arg->flags & SFRAME_UNWIND_REPLACE) &&
	    sfu_filetab_current(&old->e, &blob->e.stamp)) {
		ret = -EEXIST;
	} else {
		sfu_sidecar_share(blob);
		if (old)
			sfu_sidecar_unhash(old);
		sfu_filetab_insert(&sfu_sidecars, &blob->e);
		blob->watch = sfu_watch_start(inode, &blob->e.owner,
					      sfu_sidecar_gone);
		blob = old;	/* the table's reference to drop */
	}
	mutex_unlock(&sfu_sidecars.lock);
put_blob:
	if (blob)
		sfu_blob_put(blob);
free_phdrs:
	sfu_elf_free(&elf);
	return ret;
}

/**
 * sfu_sidecar_stats() - what the sidecars hold
 * @nr: sidecars registered
 * @bytes: bytes of SFrame they were given, each shared section once
 * @sharing: sidecars that use the rule table of another
 */
void sfu_sidecar_stats(u64 *nr, u64 *bytes, u64 *sharing)
{
	struct sfu_filetab_entry *e;
	unsigned int bkt;

	*bytes = 0;
	*sharing = 0;
	mutex_lock(&sfu_sidecars.lock);
	*nr = sfu_sidecars.nr;
	sfu_filetab_for_each(&sfu_sidecars, bkt, e) {
		if (sfu_blob_of(e)->same)
			(*sharing)++;
		else
			*bytes += sfu_blob_of(e)->len;
	}
	mutex_unlock(&sfu_sidecars.lock);
}

/**
 * sfu_sidecar_del() - forget the sidecar of @file
 * @file: the file
 *
 * Mappings that use it keep it until they go.
 *
 * Return: 0 or -ENOENT.
 */
int sfu_sidecar_del(struct file *file)
{
	struct sfu_blob *blob;

	mutex_lock(&sfu_sidecars.lock);
	blob = sfu_sidecar_find(file_inode(file));
	if (blob)
		sfu_sidecar_unhash(blob);
	mutex_unlock(&sfu_sidecars.lock);
	if (!blob)
		return -ENOENT;
	sfu_blob_put(blob);
	return 0;
}

/**
 * sfu_sidecar_del_build_id() - forget every sidecar of files with a build-id
 * @id: the build-id
 * @len: its length, 1 to SFRAME_UNWIND_BUILD_ID_MAX
 *
 * For files that were deleted or renamed over, which no descriptor names.
 *
 * Return: 0 or -ENOENT.
 */
int sfu_sidecar_del_build_id(const u8 *id, u32 len)
{
	struct sfu_filetab_entry *e;
	struct hlist_node *tmp;
	struct sfu_blob *blob;
	unsigned int bkt;
	int ret = -ENOENT;

	mutex_lock(&sfu_sidecars.lock);
	sfu_filetab_for_each_safe(&sfu_sidecars, bkt, tmp, e) {
		blob = sfu_blob_of(e);
		if (blob->build_id_len != len || memcmp(blob->build_id, id, len))
			continue;
		sfu_sidecar_unhash(blob);
		sfu_blob_put(blob);
		ret = 0;
	}
	mutex_unlock(&sfu_sidecars.lock);
	return ret;
}

/**
 * sfu_sidecar_list() - describe the sidecars
 * @out: room for @room entries (or NULL with @room 0)
 * @room: entries @out holds
 *
 * Return: how many sidecars there are; the first min(that, @room) are in
 * @out.
 */
u32 sfu_sidecar_list(struct sframe_unwind_sidecar *out, u32 room)
{
	struct sfu_filetab_entry *e;
	struct sfu_blob *blob;
	unsigned int bkt;
	u32 n = 0;

	mutex_lock(&sfu_sidecars.lock);
	sfu_filetab_for_each(&sfu_sidecars, bkt, e) {
		blob = sfu_blob_of(e);
		if (n < room) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].dev = new_encode_dev(e->dev);
			out[n].ino = e->ino;
			out[n].sframe_len = blob->len;
			out[n].build_id_len = blob->build_id_len;
			memcpy(out[n].build_id, blob->build_id,
			       blob->build_id_len);
		}
		n++;
	}
	mutex_unlock(&sfu_sidecars.lock);
	return n;
}

/**
 * sfu_sidecar_init() - the sidecars' watches (watch.c)
 *
 * Return: 0 or a negative errno.
 */
int sfu_sidecar_init(void)
{
	return sfu_watch_init();
}

/**
 * sfu_sidecar_exit() - forget every sidecar; end their watches
 */
void sfu_sidecar_exit(void)
{
	sfu_filetab_clear(&sfu_sidecars);
	sfu_watch_exit();
}
