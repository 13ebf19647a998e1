// SPDX-License-Identifier: GPL-2.0
/*
 * Each user's share of the memory pool.
 *
 * max_total_bytes bounds everything the module keeps (mem.c).  Any user
 * can make the module keep memory: JIT sections registered through the
 * device, and the indexes of files they map (their own SFrame, or a
 * sidecar the daemon registers for them).  So that one user cannot take
 * the whole pool and leave none for everyone else, both are charged to a
 * user's account besides the pool:
 *
 * - a JIT registration to the user registering it (the real uid of the
 *   caller), refused beyond jit_user_percent of the pool, and beyond what
 *   leaves file_reserve_percent of it to files;
 * - a file's index (file cache entry, a region's own copy) or sidecar to
 *   the file's owner, refused beyond file_user_percent of the pool, and
 *   beyond what leaves root_reserve_percent of it to root's files: the
 *   system's programs and libraries, which have no share to run out of.
 *   A file on FUSE, an overlay or a file system of a user namespace that
 *   says root owns it is charged to the overflow uid: that proves nothing.
 *
 * A user's account lives while something it pays for (or a registration
 * in progress) holds a reference; what is paid for drops its reference
 * when it is freed, after an RCU grace period, in softirq context.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/magic.h>
#include <linux/moduleparam.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "mem.h"
#include "quota.h"
#include "stats.h"

#define SFU_USERS_HASH_BITS		6
#define SFU_DEF_JIT_USER_PERCENT	10
#define SFU_DEF_FILE_USER_PERCENT	25
#define SFU_DEF_ROOT_RESERVE_PERCENT	25

/* A user's memory: JIT sections, and indexes of the files it owns. */
struct sfu_user {
	struct hlist_node node;		/* sfu_users, under sfu_users_lock */
	kuid_t uid;
	refcount_t ref;
	atomic_long_t bytes;		/* JIT */
	atomic_long_t file_bytes;
};

static DEFINE_HASHTABLE(sfu_users, SFU_USERS_HASH_BITS);
/* Guards sfu_users; taken with interrupts off (RCU callbacks put). */
static DEFINE_SPINLOCK(sfu_users_lock);
/* What the files of all users but root hold. */
static atomic_long_t sfu_users_file_bytes;

static unsigned int sfu_jit_user_percent = SFU_DEF_JIT_USER_PERCENT;
static unsigned int sfu_file_user_percent = SFU_DEF_FILE_USER_PERCENT;
static unsigned int sfu_root_reserve_percent = SFU_DEF_ROOT_RESERVE_PERCENT;

module_param_cb(jit_user_percent, &sfu_mem_percent_ops,
		&sfu_jit_user_percent, 0644);
MODULE_PARM_DESC(jit_user_percent,
		 "Most of max_total_bytes the JIT sections of one user may hold, in percent (default 10)");
module_param_cb(file_user_percent, &sfu_mem_percent_ops,
		&sfu_file_user_percent, 0644);
MODULE_PARM_DESC(file_user_percent,
		 "Most of max_total_bytes the indexes and sidecars of one user's files may hold, root's aside, in percent (default 25)");
module_param_cb(root_reserve_percent, &sfu_mem_percent_ops,
		&sfu_root_reserve_percent, 0644);
MODULE_PARM_DESC(root_reserve_percent,
		 "Part of max_total_bytes the files of users other than root may not take together, in percent (default 25)");

/* The account of @uid, with a reference; NULL without memory. */
static struct sfu_user *sfu_user_of(kuid_t uid)
{
	struct sfu_user *u, *new = NULL;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&sfu_users_lock, flags);
		hash_for_each_possible(sfu_users, u, node, __kuid_val(uid))
			if (uid_eq(u->uid, uid) && refcount_inc_not_zero(&u->ref))
				goto unlock;
		u = new;
		if (u)
			hash_add(sfu_users, &u->node, __kuid_val(uid));
unlock:
		spin_unlock_irqrestore(&sfu_users_lock, flags);
		if (u)
			break;
		new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
		if (!new)
			return NULL;
		new->uid = uid;
		refcount_set(&new->ref, 1);
	}
	if (u != new)
		kfree(new);
	return u;
}

/**
 * sfu_user_get() - the account of the calling task's user
 *
 * Return: a reference (sfu_user_put() drops it), or NULL without memory.
 */
struct sfu_user *sfu_user_get(void)
{
	return sfu_user_of(current_uid());
}

/*
 * May @sb's word that root owns a file be taken?  Not FUSE's, whose server
 * says what it likes, nor an overlay's, whose layers may be FUSE, nor that
 * of a file system mounted in a user namespace.
 */
static bool sfu_root_claim_ok(const struct super_block *sb)
{
	return sb->s_magic != FUSE_SUPER_MAGIC &&
	       sb->s_magic != OVERLAYFS_SUPER_MAGIC &&
	       sb->s_user_ns == &init_user_ns;
}

/**
 * sfu_file_user() - the account that pays for a file's index or sidecar
 * @inode: the file
 *
 * A file that says root owns it where that proves nothing
 * (sfu_root_claim_ok()) is charged to the overflow uid.
 *
 * Return: NULL for a file of root's (no share: only max_total_bytes
 * bounds it), a reference to its owner's account (sfu_user_put() drops
 * it), or ERR_PTR(-ENOMEM).
 */
struct sfu_user *sfu_file_user(const struct inode *inode)
{
	kuid_t uid = inode->i_uid;
	struct sfu_user *u;

	if (uid_eq(uid, GLOBAL_ROOT_UID)) {
		if (sfu_root_claim_ok(inode->i_sb))
			return NULL;
		uid = make_kuid(&init_user_ns, overflowuid);
	}
	u = sfu_user_of(uid);
	return u ?: ERR_PTR(-ENOMEM);
}

/**
 * sfu_user_hold() - another reference to @u
 * @u: an account the caller holds a reference to
 *
 * Return: @u.
 */
struct sfu_user *sfu_user_hold(struct sfu_user *u)
{
	refcount_inc(&u->ref);
	return u;
}

/**
 * sfu_user_put() - drop a reference sfu_user_get() gave; any context
 * @u: the account, or NULL
 */
void sfu_user_put(struct sfu_user *u)
{
	unsigned long flags;

	if (!u || !refcount_dec_and_lock_irqsave(&u->ref, &sfu_users_lock,
						 &flags))
		return;
	hash_del(&u->node);
	spin_unlock_irqrestore(&sfu_users_lock, flags);
	WARN_ON_ONCE(atomic_long_read(&u->bytes) ||
		     atomic_long_read(&u->file_bytes));
	kfree(u);
}

/**
 * sfu_user_uncharge() - give back what sfu_user_charge() counted
 * @u: the same account
 * @bytes: the same number
 */
void sfu_user_uncharge(struct sfu_user *u, size_t bytes)
{
	atomic_long_sub(bytes, &u->bytes);
	sfu_mem_uncharge(bytes);
}

/**
 * sfu_user_charge() - count JIT memory against its user and the pool
 * @u: the user's account
 * @bytes: what the caller is about to allocate (or keep)
 *
 * Return: 0, or -EDQUOT (nothing counted) over max_total_bytes
 * (refused_global_limit), where it would eat into the reserve for files
 * (refused_jit_reserve) or over the user's share (refused_user_jit).
 */
int sfu_user_charge(struct sfu_user *u, size_t bytes)
{
	int ret = sfu_mem_charge_jit(bytes);

	if (ret)
		return ret;
	if (atomic_long_add_return(bytes, &u->bytes) >
	    sfu_mem_share(READ_ONCE(sfu_jit_user_percent))) {
		sfu_user_uncharge(u, bytes);
		sfu_stat_inc(SFU_STAT_REFUSED_USER_JIT);
		return -EDQUOT;
	}
	return 0;
}

/**
 * sfu_user_uncharge_file() - give back what sfu_user_charge_file() counted
 * @u: the same account (NULL: root's)
 * @bytes: the same number
 */
void sfu_user_uncharge_file(struct sfu_user *u, size_t bytes)
{
	if (!u)
		return;
	atomic_long_sub(bytes, &u->file_bytes);
	atomic_long_sub(bytes, &sfu_users_file_bytes);
}

/**
 * sfu_user_charge_file() - count a file's index or sidecar against its owner
 * @u: the owner's account, from sfu_file_user() (NULL: root's)
 * @bytes: what it holds, charged to the pool by the caller as well
 *
 * Return: 0, or -EDQUOT (nothing counted, refused_user_files) over the
 * owner's share or where the files of users other than root would eat
 * into the reserve for root's.
 */
int sfu_user_charge_file(struct sfu_user *u, size_t bytes)
{
	long all, limit;

	if (!u)
		return 0;
	limit = sfu_mem_share_rest(READ_ONCE(sfu_root_reserve_percent));
	all = atomic_long_add_return(bytes, &sfu_users_file_bytes);
	if (atomic_long_add_return(bytes, &u->file_bytes) >
	    sfu_mem_share(READ_ONCE(sfu_file_user_percent)) || all > limit) {
		sfu_user_uncharge_file(u, bytes);
		sfu_stat_inc(SFU_STAT_REFUSED_USER_FILES);
		return -EDQUOT;
	}
	return 0;
}

/**
 * sfu_file_charge() - count a file's index or sidecar in the pool and to its owner
 * @u: the owner's account, from sfu_file_user() (NULL: root's)
 * @bytes: what it holds
 *
 * Return: 0, or -EDQUOT with nothing counted (sfu_mem_charge(),
 * sfu_user_charge_file()).
 */
int sfu_file_charge(struct sfu_user *u, size_t bytes)
{
	int ret = sfu_mem_charge(bytes);

	if (ret)
		return ret;
	ret = sfu_user_charge_file(u, bytes);
	if (ret)
		sfu_mem_uncharge(bytes);
	return ret;
}

/**
 * sfu_file_uncharge() - give back what sfu_file_charge() counted
 * @u: the same account (NULL: root's)
 * @bytes: the same number
 */
void sfu_file_uncharge(struct sfu_user *u, size_t bytes)
{
	sfu_user_uncharge_file(u, bytes);
	sfu_mem_uncharge(bytes);
}
