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
 * Identical sections of two copies of a file are kept once.  Mappings
 * look sidecars up without a lock (RCU).
 */
#include <linux/fs.h>
#include <linux/hashtable.h>
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

/*
 * Mappings look sidecars up under RCU; changes take the mutex.  A sidecar
 * is freed a grace period after its last reference goes.
 */
static DEFINE_HASHTABLE(sfu_sidecars, SFU_SIDECAR_HASH_BITS);
static DEFINE_MUTEX(sfu_sidecar_lock);	/* serialises changes */

static unsigned long sfu_sidecar_key(dev_t dev, unsigned long ino)
{
	return ino ^ ((unsigned long)dev << 20);
}

/* Caller holds sfu_sidecar_lock or the RCU read lock. */
static struct sfu_blob *sfu_sidecar_find(dev_t dev, unsigned long ino)
{
	struct sfu_blob *blob;

	hash_for_each_possible_rcu(sfu_sidecars, blob, node,
				   sfu_sidecar_key(dev, ino),
				   lockdep_is_held(&sfu_sidecar_lock))
		if (blob->dev == dev && blob->ino == ino)
			return blob;
	return NULL;
}

/*
 * Take @blob out of the table and end its watch; the caller holds
 * sfu_sidecar_lock and then drops the table's reference.
 */
static void sfu_sidecar_unhash(struct sfu_blob *blob)
{
	hash_del_rcu(&blob->node);
	sfu_watch_stop(blob->watch);
	blob->watch = NULL;
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

	return !sfu_file_stamp(file, &st) && sfu_stamp_equal(&st, &blob->stamp);
}

/**
 * sfu_blob_index() - validate a sidecar's bytes and build its rule table
 * @blob: the sidecar, with @blob->data of its own
 *
 * At the link-time address; mappings borrow the table.  Its memory is
 * charged once, to the sidecar.  Walks read nothing else, so the bytes
 * go (sfu_section_check() keeps only the table).
 *
 * Return: 0 or a negative error code of the decoder (@blob->sec.diag
 * says what failed), -ENOMEM, -EDQUOT.
 */
static int sfu_blob_index(struct sfu_blob *blob)
{
	int ret;

	ret = sfu_section_check(&blob->sec, blob->data, blob->len,
				blob->link_vaddr, SFU_SEC_TABLE);
	if (!ret) {
		blob->sec_bytes = sfu_section_bytes(&blob->sec);
		ret = sfu_file_charge(blob->user, blob->sec_bytes);
	}
	if (ret) {
		sfu_section_destroy(&blob->sec);
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
	sfu_section_destroy(&blob->sec);
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
	struct sfu_blob *blob = container_of(ref, struct sfu_blob, owner.ref);

	sfu_blob_unindex(blob);
	if (blob->same)
		sfu_blob_put(blob->same);
	else if (blob->data)
		sfu_mem_free(blob->data, blob->len);
	sfu_blob_uncharge(blob);
	kfree_rcu(blob, rcu);	/* sfu_sidecar_get() looks under RCU */
}

/*
 * Take @blob, found stale or gone, out of the table if it is still there.
 * Return: whether it was.
 */
static bool sfu_sidecar_drop(struct sfu_blob *blob)
{
	bool hashed;

	mutex_lock(&sfu_sidecar_lock);
	hashed = sfu_sidecar_find(blob->dev, blob->ino) == blob;
	if (hashed)
		sfu_sidecar_unhash(blob);
	mutex_unlock(&sfu_sidecar_lock);
	if (hashed)
		sfu_blob_put(blob);	/* the table's reference */
	return hashed;
}

/*
 * The file of a sidecar has lost its last name, or its file system was
 * unmounted (the watch's callback, watch.c).  Mappings that use the
 * sidecar keep it until they go.
 */
static void sfu_sidecar_gone(struct sfu_owner *owner)
{
	struct sfu_blob *blob = container_of(owner, struct sfu_blob, owner);

	if (sfu_sidecar_drop(blob))
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
	struct inode *inode = file_inode(file);
	struct sfu_blob *blob;

	rcu_read_lock();
	blob = sfu_sidecar_find(inode->i_sb->s_dev, inode->i_ino);
	if (blob && !sfu_owner_tryget(&blob->owner))
		blob = NULL;
	rcu_read_unlock();
	if (!blob || sfu_sidecar_matches(blob, file))
		return blob;
	sfu_sidecar_drop(blob);
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
	       sfu_table_same(&a->sec, &owner->sec);
}

/*
 * If a sidecar in the table has the same section (another copy of the
 * file), let @blob use its table and free its own: identical sections are
 * kept once.  Caller holds sfu_sidecar_lock; @blob is not in the table.
 */
static void sfu_sidecar_share(struct sfu_blob *blob)
{
	struct sfu_blob *other, *owner;
	unsigned int bkt;

	hash_for_each(sfu_sidecars, bkt, other, node) {
		if (!sfu_sidecar_same(blob, other))
			continue;
		owner = other->same ? other->same : other;
		sfu_owner_get(&owner->owner);
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
	sfu_owner_init(&blob->owner, sfu_blob_release);
	ret = sfu_blob_charge(blob, inode);
	if (ret)
		goto put_blob;
	blob->dev = inode->i_sb->s_dev;
	blob->ino = inode->i_ino;
	blob->link_vaddr = arg->sframe_vaddr;
	blob->len = arg->sframe_len;
	blob->build_id_len = sfu_elf_build_id(file, &elf, blob->build_id);
	ret = sfu_file_stamp(file, &blob->stamp);
	if (ret)
		goto put_blob;
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

	mutex_lock(&sfu_sidecar_lock);
	old = sfu_sidecar_find(blob->dev, blob->ino);
	/* One of another version of the file (or another file) is stale. */
	if (old && !(arg->flags & SFRAME_UNWIND_REPLACE) &&
	    sfu_stamp_equal(&old->stamp, &blob->stamp)) {
		ret = -EEXIST;
	} else {
		sfu_sidecar_share(blob);
		if (old)
			sfu_sidecar_unhash(old);
		hash_add_rcu(sfu_sidecars, &blob->node,
			     sfu_sidecar_key(blob->dev, blob->ino));
		blob->watch = sfu_watch_start(inode, &blob->owner,
					      sfu_sidecar_gone);
		blob = old;	/* the table's reference to drop */
	}
	mutex_unlock(&sfu_sidecar_lock);
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
	struct sfu_blob *blob;
	unsigned int bkt;

	*nr = 0;
	*bytes = 0;
	*sharing = 0;
	mutex_lock(&sfu_sidecar_lock);
	hash_for_each(sfu_sidecars, bkt, blob, node) {
		(*nr)++;
		if (blob->same)
			(*sharing)++;
		else
			*bytes += blob->len;
	}
	mutex_unlock(&sfu_sidecar_lock);
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
	struct inode *inode = file_inode(file);
	struct sfu_blob *blob;

	mutex_lock(&sfu_sidecar_lock);
	blob = sfu_sidecar_find(inode->i_sb->s_dev, inode->i_ino);
	if (blob)
		sfu_sidecar_unhash(blob);
	mutex_unlock(&sfu_sidecar_lock);
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
	struct hlist_node *tmp;
	struct sfu_blob *blob;
	int bkt, ret = -ENOENT;

	mutex_lock(&sfu_sidecar_lock);
	hash_for_each_safe(sfu_sidecars, bkt, tmp, blob, node) {
		if (blob->build_id_len != len || memcmp(blob->build_id, id, len))
			continue;
		sfu_sidecar_unhash(blob);
		sfu_blob_put(blob);
		ret = 0;
	}
	mutex_unlock(&sfu_sidecar_lock);
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
	struct sfu_blob *blob;
	u32 n = 0;
	int bkt;

	mutex_lock(&sfu_sidecar_lock);
	hash_for_each(sfu_sidecars, bkt, blob, node) {
		if (n < room) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].dev = new_encode_dev(blob->dev);
			out[n].ino = blob->ino;
			out[n].sframe_len = blob->len;
			out[n].build_id_len = blob->build_id_len;
			memcpy(out[n].build_id, blob->build_id,
			       blob->build_id_len);
		}
		n++;
	}
	mutex_unlock(&sfu_sidecar_lock);
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
	struct hlist_node *tmp;
	struct sfu_blob *blob;
	int bkt;

	mutex_lock(&sfu_sidecar_lock);
	hash_for_each_safe(sfu_sidecars, bkt, tmp, blob, node) {
		sfu_sidecar_unhash(blob);
		sfu_blob_put(blob);
	}
	mutex_unlock(&sfu_sidecar_lock);
	sfu_watch_exit();
}
