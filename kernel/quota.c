// SPDX-License-Identifier: GPL-2.0
/*
 * Each user's share of the memory pool for JIT sections.
 *
 * max_total_bytes bounds everything the module keeps (mem.c).  JIT
 * sections are registered by any process through the device, so one user
 * could take the whole pool and leave none for the ELF regions and
 * sidecars of everyone else.  So a JIT registration is charged to the
 * user (the real uid of the caller) and refused beyond jit_user_percent of
 * the pool, and beyond what leaves file_reserve_percent of it to files.
 *
 * A user's account lives while one of its JIT regions (or a registration
 * in progress) holds a reference; regions drop theirs when they are freed,
 * after an RCU grace period, in softirq context.
 */
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "mem.h"
#include "quota.h"
#include "stats.h"

#define SFU_USERS_HASH_BITS		6
#define SFU_DEF_JIT_USER_PERCENT	10

/* A user's JIT memory. */
struct sfu_user {
	struct hlist_node node;		/* sfu_users, under sfu_users_lock */
	kuid_t uid;
	refcount_t ref;
	atomic_long_t bytes;
};

static DEFINE_HASHTABLE(sfu_users, SFU_USERS_HASH_BITS);
/* Guards sfu_users; taken with interrupts off (RCU callbacks put). */
static DEFINE_SPINLOCK(sfu_users_lock);

static unsigned int sfu_jit_user_percent = SFU_DEF_JIT_USER_PERCENT;

module_param_cb(jit_user_percent, &sfu_mem_percent_ops,
		&sfu_jit_user_percent, 0644);
MODULE_PARM_DESC(jit_user_percent,
		 "Most of max_total_bytes the JIT sections of one user may hold, in percent (default 10)");

/**
 * sfu_user_get() - the JIT account of the calling task's user
 *
 * Return: a reference (sfu_user_put() drops it), or NULL without memory.
 */
struct sfu_user *sfu_user_get(void)
{
	kuid_t uid = current_uid();
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
	WARN_ON_ONCE(atomic_long_read(&u->bytes));
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
