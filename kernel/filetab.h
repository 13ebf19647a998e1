/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-file rule tables, by device and inode (filetab.c): the one store
 * behind the file cache (files with their own SFrame, filecache.c) and
 * the sidecars (sidecar.c).
 */
#ifndef _SFU_FILETAB_H
#define _SFU_FILETAB_H

#include <linux/hash.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

#include <sframe/decode.h>

#include "elf.h"
#include "region.h"

struct file;
struct inode;

/*
 * One version of one file's section, indexed at its link-time address;
 * embedded in the store's own entries.  Mappings of the file borrow the
 * index (sfu_region_borrow_section()) and hold a reference to @owner.
 */
struct sfu_filetab_entry {
	struct sfu_owner owner;		/* the store's, the borrowers' */
	struct rcu_head rcu;
	struct hlist_node node;		/* under the store's lock; RCU */
	dev_t dev;
	unsigned long ino;
	struct sfu_stamp stamp;		/* the file's version then */
	struct sfu_section sec;
};

/*
 * A store: look-ups under RCU, changes under @lock.  @unhash, if set, is
 * called under @lock for each entry taken out, for what the user of the
 * store keeps beside it (a list, a watch).
 */
struct sfu_filetab {
	struct mutex lock;		/* serialises changes */
	unsigned int nr;		/* entries, under @lock */
	unsigned int bits;
	struct hlist_head *heads;
	void (*unhash)(struct sfu_filetab_entry *e);
};

/* A store of 2^@bits buckets, as DEFINE_HASHTABLE() makes a table. */
#define DEFINE_SFU_FILETAB(name, nbits, unhash_fn)			\
	static struct hlist_head name##_heads[1 << (nbits)];		\
	static struct sfu_filetab name = {				\
		.lock = __MUTEX_INITIALIZER(name.lock),			\
		.bits = (nbits),					\
		.heads = name##_heads,					\
		.unhash = (unhash_fn),					\
	}

/* Every entry of @t; the caller holds @t->lock. */
#define sfu_filetab_for_each(t, bkt, e)					\
	for ((bkt) = 0; (bkt) < (1U << (t)->bits); (bkt)++)		\
		hlist_for_each_entry(e, &(t)->heads[bkt], node)

/* The same, where the loop may take @e out (@tmp: the next one). */
#define sfu_filetab_for_each_safe(t, bkt, tmp, e)			\
	for ((bkt) = 0; (bkt) < (1U << (t)->bits); (bkt)++)		\
		hlist_for_each_entry_safe(e, tmp, &(t)->heads[bkt], node)

int sfu_filetab_entry_init(struct sfu_filetab_entry *e, struct file *file,
			   void (*release)(struct kref *ref));
struct sfu_filetab_entry *sfu_filetab_find(struct sfu_filetab *t,
					   const struct inode *inode);
struct sfu_filetab_entry *sfu_filetab_get(struct sfu_filetab *t,
					  const struct inode *inode,
					  const struct sfu_stamp *st);
bool sfu_filetab_current(const struct sfu_filetab_entry *e,
			 const struct sfu_stamp *st);
void sfu_filetab_insert(struct sfu_filetab *t, struct sfu_filetab_entry *e);
void sfu_filetab_unhash(struct sfu_filetab *t, struct sfu_filetab_entry *e);
bool sfu_filetab_remove(struct sfu_filetab *t, struct sfu_filetab_entry *e);
void sfu_filetab_clear(struct sfu_filetab *t);

#endif /* _SFU_FILETAB_H */
