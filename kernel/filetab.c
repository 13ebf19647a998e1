// SPDX-License-Identifier: GPL-2.0
/*
 * Per-file rule tables: the one store, by device and inode, behind the
 * file cache (filecache.c: files with their own SFrame) and the sidecars
 * (sidecar.c: SFrame registered for files without).  Each entry is one
 * version of one file (struct sfu_stamp: size, times, inode generation)
 * with its section indexed at the link-time address; mappings of the
 * file borrow the index, moved by their load bias, and hold a reference.
 *
 * Look-ups take no lock (RCU), so that the mmap hook can find an entry
 * without sleeping; changes take the store's mutex.  An entry taken out
 * is freed when its last reference goes, by its store's release, after
 * a grace period.
 */
#include <linux/fs.h>
#include <linux/rculist.h>

#include "filetab.h"

static unsigned long sfu_filetab_key(dev_t dev, unsigned long ino)
{
	return ino ^ ((unsigned long)dev << 20);
}

static struct hlist_head *sfu_filetab_head(struct sfu_filetab *t, dev_t dev,
					   unsigned long ino)
{
	return &t->heads[hash_long(sfu_filetab_key(dev, ino), t->bits)];
}

/* Caller holds @t->lock or the RCU read lock. */
static struct sfu_filetab_entry *sfu_filetab_lookup(struct sfu_filetab *t,
						    dev_t dev,
						    unsigned long ino)
{
	struct sfu_filetab_entry *e;

	hlist_for_each_entry_rcu(e, sfu_filetab_head(t, dev, ino), node,
				 lockdep_is_held(&t->lock))
		if (e->dev == dev && e->ino == ino)
			return e;
	return NULL;
}

/**
 * sfu_filetab_entry_init() - an entry for the file as it is now
 * @e: the entry, zeroed
 * @file: the file
 * @release: frees the store's entry when the last reference goes
 *
 * One reference, the caller's: the store's once it is inserted.
 *
 * Return: 0 or the error of the file's getattr.
 */
int sfu_filetab_entry_init(struct sfu_filetab_entry *e, struct file *file,
			   void (*release)(struct kref *ref))
{
	const struct inode *inode = file_inode(file);

	sfu_owner_init(&e->owner, release);
	e->dev = inode->i_sb->s_dev;
	e->ino = inode->i_ino;
	return sfu_file_stamp(file, &e->stamp);
}

/**
 * sfu_filetab_find() - the entry of an inode, whatever its version
 * @t: the store
 * @inode: the file's inode
 *
 * The caller holds @t->lock or the RCU read lock.
 *
 * Return: the entry, no reference taken, or NULL.
 */
struct sfu_filetab_entry *sfu_filetab_find(struct sfu_filetab *t,
					   const struct inode *inode)
{
	return sfu_filetab_lookup(t, inode->i_sb->s_dev, inode->i_ino);
}

/**
 * sfu_filetab_get() - a reference to the entry of an inode
 * @t: the store
 * @inode: the file's inode
 * @st: the file's version, or NULL for any (the caller checks it:
 *	sfu_filetab_current())
 *
 * Any context.
 *
 * Return: the entry, or NULL if there is none (of version @st).
 */
struct sfu_filetab_entry *sfu_filetab_get(struct sfu_filetab *t,
					  const struct inode *inode,
					  const struct sfu_stamp *st)
{
	struct sfu_filetab_entry *e;

	rcu_read_lock();
	e = sfu_filetab_find(t, inode);
	if (e && ((st && !sfu_filetab_current(e, st)) ||
		  !sfu_owner_tryget(&e->owner)))
		e = NULL;
	rcu_read_unlock();
	return e;
}

/**
 * sfu_filetab_current() - whether an entry is of a version of its file
 * @e: the entry
 * @st: the version, as sfu_file_stamp() gives it
 *
 * Return: true if it is.
 */
bool sfu_filetab_current(const struct sfu_filetab_entry *e,
			 const struct sfu_stamp *st)
{
	return sfu_stamp_equal(&e->stamp, st);
}

/**
 * sfu_filetab_insert() - put an entry in the store
 * @t: the store, whose lock the caller holds
 * @e: the entry, not in it, of a file that has none there
 *
 * The store keeps the caller's reference.
 */
void sfu_filetab_insert(struct sfu_filetab *t, struct sfu_filetab_entry *e)
{
	lockdep_assert_held(&t->lock);
	hlist_add_head_rcu(&e->node, sfu_filetab_head(t, e->dev, e->ino));
	t->nr++;
}

/**
 * sfu_filetab_unhash() - take an entry out of the store
 * @t: the store, whose lock the caller holds
 * @e: an entry in it
 *
 * Look-ups stop finding it; RCU readers may still see it.  The caller
 * drops the store's reference, under the lock or after.
 */
void sfu_filetab_unhash(struct sfu_filetab *t, struct sfu_filetab_entry *e)
{
	lockdep_assert_held(&t->lock);
	hlist_del_init_rcu(&e->node);
	t->nr--;
	if (t->unhash)
		t->unhash(e);
}

/**
 * sfu_filetab_remove() - take an entry out if it is still in the store
 * @t: the store
 * @e: the entry; the caller holds a reference
 *
 * Return: whether it was (then the store's reference is dropped).
 */
bool sfu_filetab_remove(struct sfu_filetab *t, struct sfu_filetab_entry *e)
{
	bool hashed;

	mutex_lock(&t->lock);
	hashed = sfu_filetab_lookup(t, e->dev, e->ino) == e;
	if (hashed)
		sfu_filetab_unhash(t, e);
	mutex_unlock(&t->lock);
	if (hashed)
		sfu_owner_put(&e->owner);
	return hashed;
}

/**
 * sfu_filetab_clear() - take every entry out
 * @t: the store
 *
 * Mappings that borrow an entry keep it until they go.
 */
void sfu_filetab_clear(struct sfu_filetab *t)
{
	struct sfu_filetab_entry *e;
	struct hlist_node *tmp;
	unsigned int bkt;

	mutex_lock(&t->lock);
	sfu_filetab_for_each_safe(t, bkt, tmp, e) {
		sfu_filetab_unhash(t, e);
		sfu_owner_put(&e->owner);
	}
	mutex_unlock(&t->lock);
}
