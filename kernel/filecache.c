// SPDX-License-Identifier: GPL-2.0
/*
 * The index of each file that carries its own SFrame, built once.
 *
 * A file with PT_GNU_SFRAME is read and indexed when a process maps it.
 * Programs are started, and libraries dlopen()ed, over and over: this
 * cache keeps the checked, indexed section of the file at its link-time
 * address, with the file's program headers, keyed by device and inode and
 * tied to the file's version (size, change and modification times, inode
 * generation).  A mapping of a cached file reads nothing from it: its
 * region looks PCs up in the entry's rule table at their address less
 * the load bias, as mappings of a sidecar'd file do in the sidecar's
 * (region.h), and holds a reference to the entry.  Entries outlive their
 * mappings; beyond file_cache entries those not used since the trim last
 * passed them go (a second chance, as the page cache's clock does).
 * Only sections with a rule table are kept.
 *
 * The entries are in a store of per-file rule tables (filetab.c), as the
 * sidecars are: look-ups take no lock (RCU), so that the mmap hook can map
 * a cached file without sleeping (sfu_fcache_get_now()); entries are freed
 * after a grace period.
 *
 * The cache's memory is counted apart from memory_bytes (which follows
 * the processes and sidecars) but within max_total_bytes (mem.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/magic.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "compat.h"
#include "elf.h"
#include "filecache.h"
#include "filetab.h"
#include "mem.h"
#include "quota.h"
#include "registry.h"

#define SFU_FCACHE_HASH_BITS	6
#define SFU_FCACHE_DEF_MAX	64
#define SFU_FCACHE_MAX_LIMIT	4096

/* One file version's section, indexed at its link-time address. */
struct sfu_fcache {
	struct sfu_filetab_entry e;	/* references: cache, regions, hook */
	struct list_head lru;		/* newest or spared first; store lock */
	bool used;			/* since the trim last passed it */
	Elf64_Phdr *ph;			/* the file's program headers */
	unsigned int phnum;
	size_t bytes;			/* sfu_mem_charge_cache()d */
	struct sfu_user *user;		/* the file's owner, who pays too */
};

static LIST_HEAD(sfu_fcache_lru);
static void sfu_fcache_unhashed(struct sfu_filetab_entry *e);
DEFINE_SFU_FILETAB(sfu_fcaches, SFU_FCACHE_HASH_BITS, sfu_fcache_unhashed);
static unsigned int sfu_fcache_max = SFU_FCACHE_DEF_MAX;

static void sfu_fcache_trim(unsigned int keep);

static int sfu_fcache_set_max(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_uint_minmax(val, kp, 0, SFU_FCACHE_MAX_LIMIT);

	if (!ret)
		sfu_fcache_trim(READ_ONCE(sfu_fcache_max));
	return ret;
}

static const struct kernel_param_ops sfu_fcache_max_ops = {
	.set = sfu_fcache_set_max,
	.get = param_get_uint,
};

module_param_cb(file_cache, &sfu_fcache_max_ops, &sfu_fcache_max, 0644);
MODULE_PARM_DESC(file_cache,
		 "Files with their own SFrame whose index is kept after their last mapping, 0 to 4096 (default 64; 0: none)");

/**
 * sfu_fcache_enabled() - whether file indexes are kept at all
 *
 * Return: true unless the file_cache parameter is 0.
 */
bool sfu_fcache_enabled(void)
{
	return READ_ONCE(sfu_fcache_max);
}

/* Give back what sfu_fcache_charge() counted. */
static void sfu_fcache_uncharge(struct sfu_fcache *fc)
{
	sfu_user_uncharge_file(fc->user, fc->bytes);
	sfu_mem_uncharge_cache(fc->bytes);
}

/* Free @fc's own and drop its owner's account. */
static void sfu_fcache_free(struct sfu_fcache *fc)
{
	sfu_user_put(fc->user);
	kfree(fc->ph);
	kfree(fc);
}

static void sfu_fcache_free_rcu(struct rcu_head *rcu)
{
	struct sfu_fcache *fc = container_of(rcu, struct sfu_fcache, e.rcu);

	sfu_section_destroy(&fc->e.sec);
	sfu_fcache_free(fc);
}

/*
 * After a grace period: look-ups may still be reading the entry, and the
 * last reference may go where nothing can be freed (the mmap hook).
 */
static void sfu_fcache_release(struct kref *ref)
{
	struct sfu_fcache *fc = container_of(ref, struct sfu_fcache,
					     e.owner.ref);

	/* Counted out at once: a charge that trimmed may use it now. */
	sfu_fcache_uncharge(fc);
	call_rcu(&fc->e.rcu, sfu_fcache_free_rcu);
}

/**
 * sfu_fcache_put() - drop a reference to a cache entry
 * @fc: the entry, or NULL
 */
void sfu_fcache_put(struct sfu_fcache *fc)
{
	if (fc)
		sfu_owner_put(&fc->e.owner);
}

/* The store took @e out: so does the LRU list.  Under the store's lock. */
static void sfu_fcache_unhashed(struct sfu_filetab_entry *e)
{
	list_del(&container_of(e, struct sfu_fcache, e)->lru);
}

/* Take @fc out of the cache; its borrowers keep it.  Caller holds lock. */
static void sfu_fcache_unhash(struct sfu_fcache *fc)
{
	sfu_filetab_unhash(&sfu_fcaches, &fc->e);
	sfu_fcache_put(fc);
}

/*
 * Keep at most @keep entries.  The oldest goes unless it was used since
 * the trim last passed it; then it is spared once, as the newest.
 */
static void sfu_fcache_trim(unsigned int keep)
{
	unsigned int spared = 0;

	mutex_lock(&sfu_fcaches.lock);
	while (sfu_fcaches.nr > keep) {
		struct sfu_fcache *fc = list_last_entry(&sfu_fcache_lru,
							struct sfu_fcache, lru);

		if (spared < sfu_fcaches.nr && READ_ONCE(fc->used)) {
			WRITE_ONCE(fc->used, false);
			list_move(&fc->lru, &sfu_fcache_lru);
			spared++;
			continue;
		}
		sfu_fcache_unhash(fc);
	}
	mutex_unlock(&sfu_fcaches.lock);
}

/* The entry of @inode under the store's lock or RCU, or NULL. */
static struct sfu_fcache *sfu_fcache_find(const struct inode *inode)
{
	struct sfu_filetab_entry *e = sfu_filetab_find(&sfu_fcaches, inode);

	return e ? container_of(e, struct sfu_fcache, e) : NULL;
}

/* A reference to the entry of @inode if it is of version @st.  Any context. */
static struct sfu_fcache *sfu_fcache_lookup(const struct inode *inode,
					    const struct sfu_stamp *st)
{
	struct sfu_filetab_entry *e = sfu_filetab_get(&sfu_fcaches, inode, st);
	struct sfu_fcache *fc;

	if (!e)
		return NULL;
	fc = container_of(e, struct sfu_fcache, e);
	WRITE_ONCE(fc->used, true);
	return fc;
}

/* Drop the entry of @inode unless it is of version @st. */
static void sfu_fcache_drop_stale(const struct inode *inode,
				  const struct sfu_stamp *st)
{
	struct sfu_fcache *fc;

	mutex_lock(&sfu_fcaches.lock);
	fc = sfu_fcache_find(inode);
	if (fc && !sfu_filetab_current(&fc->e, st))
		sfu_fcache_unhash(fc);
	mutex_unlock(&sfu_fcaches.lock);
}

/**
 * sfu_fcache_get() - the cache entry of a file with its own section
 * @file: the mapped file
 *
 * Its version is what stat() says.  An entry of another version of the
 * file is dropped.  May sleep.
 *
 * Return: a reference to the entry, or NULL if there is none for the file
 * as it is now.
 */
struct sfu_fcache *sfu_fcache_get(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct sfu_fcache *fc;
	struct sfu_stamp st;

	if (!sfu_fcache_enabled() || sfu_file_stamp(file, &st))
		return NULL;
	fc = sfu_fcache_lookup(inode, &st);
	if (!fc)
		sfu_fcache_drop_stale(inode, &st);
	return fc;
}

/*
 * Does an inode of @sb hold what stat() gives?  Yes on local file systems:
 * those on a block device (but FUSE's, whose attributes are cached for a
 * time) and those in memory.  Not on network ones (NFS, 9p, CIFS), whose
 * getattr may ask the server for newer attributes.
 */
static bool sfu_fcache_local(const struct super_block *sb)
{
	if (sb->s_magic == FUSE_SUPER_MAGIC)
		return false;
	return (sb->s_type->fs_flags & FS_REQUIRES_DEV) ||
	       sb->s_magic == TMPFS_MAGIC || sb->s_magic == RAMFS_MAGIC;
}

/**
 * sfu_fcache_get_now() - the cache entry of a file, without sleeping
 * @file: the mapped file
 *
 * For the mmap hook.  The version is read from the inode, which is what
 * stat() gives on a local file system; elsewhere this gives nothing, and
 * sfu_fcache_get() decides.
 *
 * Return: a reference to the entry, or NULL.
 */
struct sfu_fcache *sfu_fcache_get_now(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct sfu_stamp st;

	if (!sfu_fcache_enabled() || !sfu_fcache_local(inode->i_sb))
		return NULL;
	st.size = i_size_read(inode);
	st.mtime = sfu_inode_mtime(inode);
	st.ctime = sfu_inode_ctime(inode);
	st.generation = inode->i_generation;
	return sfu_fcache_lookup(inode, &st);
}

/**
 * sfu_fcache_phdrs() - the program headers of a cached file
 * @fc: the entry
 * @phnum: their number
 *
 * Return: the headers, valid while the caller holds its reference.
 */
const Elf64_Phdr *sfu_fcache_phdrs(const struct sfu_fcache *fc,
				   unsigned int *phnum)
{
	*phnum = fc->phnum;
	return fc->ph;
}

/*
 * Drop from the cache the entries of @u's files that no mapping borrows:
 * kept only for a next mapping, they must not hold the user's share
 * against the mapping that needs it now.
 */
static void sfu_fcache_trim_user(const struct sfu_user *u)
{
	struct sfu_fcache *fc, *next;

	mutex_lock(&sfu_fcaches.lock);
	list_for_each_entry_safe(fc, next, &sfu_fcache_lru, lru)
		if (fc->user == u && kref_read(&fc->e.owner.ref) == 1)
			sfu_fcache_unhash(fc);
	mutex_unlock(&sfu_fcaches.lock);
}

/* Count @bytes for @fc: in the pool, and to @inode's owner. */
static int sfu_fcache_charge(struct sfu_fcache *fc, const struct inode *inode,
			     size_t bytes)
{
	struct sfu_user *u = sfu_file_user(inode);

	if (IS_ERR(u))
		return PTR_ERR(u);
	if (sfu_mem_charge_cache(bytes))
		goto put_user;
	if (sfu_user_charge_file(u, bytes)) {
		sfu_fcache_trim_user(u);
		if (sfu_user_charge_file(u, bytes))
			goto uncharge_cache;
	}
	fc->user = u;
	return 0;

uncharge_cache:
	sfu_mem_uncharge_cache(bytes);
put_user:
	sfu_user_put(u);
	return -EDQUOT;
}

/* An entry for @file, @ph, @sec, counted but not yet in the cache. */
static struct sfu_fcache *sfu_fcache_new(struct file *file,
					 const Elf64_Phdr *ph,
					 unsigned int phnum,
					 const struct sfu_section *sec)
{
	size_t bytes = sizeof(struct sfu_fcache) + phnum * sizeof(*ph) +
		       sfu_section_bytes(sec);
	struct inode *inode = file_inode(file);
	struct sfu_fcache *fc;

	fc = kzalloc(sizeof(*fc), GFP_KERNEL_ACCOUNT);
	if (!fc)
		return NULL;
	fc->ph = kmemdup(ph, phnum * sizeof(*ph), GFP_KERNEL_ACCOUNT);
	if (!fc->ph ||
	    sfu_filetab_entry_init(&fc->e, file, sfu_fcache_release) ||
	    sfu_fcache_charge(fc, inode, bytes))
		goto free_fc;
	/* New, so not the first to go at the next trim. */
	fc->used = true;
	fc->phnum = phnum;
	fc->bytes = bytes;
	fc->e.sec = *sec;
	return fc;

free_fc:
	kfree(fc->ph);
	kfree(fc);
	return NULL;
}

/**
 * sfu_fcache_add() - keep the index of a file's own section
 * @file: the mapped file
 * @ph: its program headers
 * @phnum: their number
 * @sec: its section, checked and indexed at its link-time address into a
 *	rule table; on success its arrays are the entry's, and @sec is
 *	left empty
 *
 * Nothing is kept if the cache is off, the section has no rule table,
 * the memory limit is reached or another version of the file came first.
 *
 * Return: a reference to the new entry, or NULL (@sec untouched).
 */
struct sfu_fcache *sfu_fcache_add(struct file *file, const Elf64_Phdr *ph,
				  unsigned int phnum, struct sfu_section *sec)
{
	struct inode *inode = file_inode(file);
	struct sfu_fcache *fc, *old;

	if (!sfu_fcache_enabled() || !sec->table)
		return NULL;
	fc = sfu_fcache_new(file, ph, phnum, sec);
	if (!fc)
		return NULL;
	/* The kernel copy @sec was read from goes: never read through it. */
	sfu_section_read_mapped(&fc->e.sec);
	mutex_lock(&sfu_fcaches.lock);
	old = sfu_fcache_find(inode);
	if (old && sfu_filetab_current(&old->e, &fc->e.stamp)) {
		/* Indexed twice at once: keep the first, give @sec back. */
		mutex_unlock(&sfu_fcaches.lock);
		sfu_fcache_uncharge(fc);
		sfu_fcache_free(fc);	/* never published */
		return NULL;
	}
	if (old)
		sfu_fcache_unhash(old);
	sfu_filetab_insert(&sfu_fcaches, &fc->e);
	list_add(&fc->lru, &sfu_fcache_lru);
	sfu_owner_get(&fc->e.owner);
	mutex_unlock(&sfu_fcaches.lock);
	memset(sec, 0, sizeof(*sec));
	sfu_fcache_trim(READ_ONCE(sfu_fcache_max));
	return fc;
}

/**
 * sfu_fcache_lend() - give a region the index of a cache entry
 * @r: the region, with no section yet
 * @fc: the entry; the region takes a reference of its own
 * @bias: the mapping's load bias
 *
 * The region looks PCs up in the entry's rule table, moved by @bias.
 */
void sfu_fcache_lend(struct sfu_region *r, struct sfu_fcache *fc,
		     unsigned long bias)
{
	sfu_region_borrow_section(r, &fc->e.owner, &fc->e.sec, bias);
}

/**
 * sfu_fcache_stats() - entries and bytes of the cache
 * @nr: entries
 * @bytes: memory they hold, including entries dropped from the cache
 *	that mappings still borrow from
 */
void sfu_fcache_stats(u64 *nr, u64 *bytes)
{
	mutex_lock(&sfu_fcaches.lock);
	*nr = sfu_fcaches.nr;
	mutex_unlock(&sfu_fcaches.lock);
	*bytes = sfu_mem_cache_bytes();
}

/* Module unload, once no region is left. */
void sfu_fcache_exit(void)
{
	sfu_fcache_trim(0);
	/* The frees of the entries just dropped run module code. */
	rcu_barrier();
}
