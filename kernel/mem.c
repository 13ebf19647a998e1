// SPDX-License-Identifier: GPL-2.0
/*
 * The module's memory pool.
 *
 * Everything the module keeps is counted against max_total_bytes: the
 * regions of processes and their indexes, the sidecars, the transient
 * copies of sections being checked (memory_bytes in the counters), and
 * the file cache's entries (counted apart, so that the cache can be told
 * from the processes, but within the same bound).  Two shares of the pool
 * are for JIT sections: all of them together may not take the part kept
 * for files (file_reserve_percent), and each user's are bounded by
 * quota.c (jit_user_percent of the pool).
 *
 * Every charge is checked and refused as a whole: a caller that gets
 * -EDQUOT has nothing counted and nothing to give back.
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include <sframe/env.h>

#include "mem.h"
#include "stats.h"

#define SFU_PERCENT			100
#define SFU_DEF_MAX_TOTAL_BYTES		(256UL << 20)
#define SFU_DEF_FILE_RESERVE_PERCENT	25

static unsigned long sfu_max_total_bytes = SFU_DEF_MAX_TOTAL_BYTES;
module_param_named(max_total_bytes, sfu_max_total_bytes, ulong, 0644);
MODULE_PARM_DESC(max_total_bytes,
		 "Most kernel memory for all registries, sidecars and section copies, in bytes (default 256 MiB)");

static unsigned int sfu_file_reserve_percent = SFU_DEF_FILE_RESERVE_PERCENT;

static int sfu_percent_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, SFU_PERCENT);
}

/* A module parameter in percent of the pool, 0 to 100. */
const struct kernel_param_ops sfu_mem_percent_ops = {
	.set = sfu_percent_set,
	.get = param_get_uint,
};

module_param_cb(file_reserve_percent, &sfu_mem_percent_ops,
		&sfu_file_reserve_percent, 0644);
MODULE_PARM_DESC(file_reserve_percent,
		 "Part of max_total_bytes JIT sections may not take, kept for ELF regions and sidecars, in percent (default 25)");

static atomic_long_t sfu_bytes;		/* processes, sidecars, copies */
static atomic_long_t sfu_cache_bytes;	/* the file cache */

/* max_total_bytes, now: the bound of every charge. */
static long sfu_mem_limit(void)
{
	return (long)READ_ONCE(sfu_max_total_bytes);
}

/**
 * sfu_mem_share() - a part of max_total_bytes
 * @percent: how much, 0 to 100 (more counts as 100)
 *
 * Return: @percent of the pool, in bytes.
 */
long sfu_mem_share(unsigned int percent)
{
	return mult_frac(sfu_mem_limit(),
			 (long)min_t(unsigned int, percent, SFU_PERCENT),
			 SFU_PERCENT);
}

/**
 * sfu_mem_share_rest() - max_total_bytes less a part of it
 * @percent: the part kept, 0 to 100 (more counts as 100)
 *
 * Return: the rest, in bytes.
 */
long sfu_mem_share_rest(unsigned int percent)
{
	return sfu_mem_limit() - sfu_mem_share(percent);
}

/* Max_total_bytes less the reserve for files: the bound of JIT charges. */
static long sfu_jit_pool_limit(void)
{
	return sfu_mem_share_rest(READ_ONCE(sfu_file_reserve_percent));
}

/**
 * sfu_mem_bytes() - what the processes, sidecars and copies hold
 *
 * Return: bytes (memory_bytes in the counters).
 */
long sfu_mem_bytes(void)
{
	return atomic_long_read(&sfu_bytes);
}

/**
 * sfu_mem_cache_bytes() - what the file cache holds
 *
 * Return: bytes, including entries dropped from the cache that mappings
 * still borrow from.
 */
long sfu_mem_cache_bytes(void)
{
	return atomic_long_read(&sfu_cache_bytes);
}

/* Take back @bytes just counted in @counter, refused for the reason @why. */
static int sfu_mem_refuse(atomic_long_t *counter, size_t bytes,
			  enum sfu_stat why)
{
	atomic_long_sub(bytes, counter);
	sfu_stat_inc(why);
	return -EDQUOT;
}

/* Count @bytes in @counter: the pool's total with them. */
static long sfu_mem_add(atomic_long_t *counter, size_t bytes)
{
	atomic_long_add(bytes, counter);
	return sfu_mem_bytes() + sfu_mem_cache_bytes();
}

/**
 * sfu_mem_charge() - count memory against max_total_bytes
 * @bytes: what the caller is about to allocate (or keep)
 *
 * The per-process limits bound one registry; this bounds them all, with
 * the sidecars, the file cache and the transient copies of sections being
 * checked.
 *
 * Return: 0, or -EDQUOT if it would go over the limit (nothing counted).
 */
int sfu_mem_charge(size_t bytes)
{
	if (sfu_mem_add(&sfu_bytes, bytes) > sfu_mem_limit())
		return sfu_mem_refuse(&sfu_bytes, bytes,
				      SFU_STAT_REFUSED_GLOBAL);
	return 0;
}

/**
 * sfu_mem_charge_jit() - sfu_mem_charge() for a JIT section
 * @bytes: what the caller is about to allocate (or keep)
 *
 * Also refused where it would take from the part of max_total_bytes kept
 * for ELF regions and sidecars.  sfu_user_charge() calls it before it
 * charges the user.
 *
 * Return: 0, or -EDQUOT (nothing counted).
 */
int sfu_mem_charge_jit(size_t bytes)
{
	long total = sfu_mem_add(&sfu_bytes, bytes);

	if (total > sfu_mem_limit())
		return sfu_mem_refuse(&sfu_bytes, bytes,
				      SFU_STAT_REFUSED_GLOBAL);
	if (total > sfu_jit_pool_limit())
		return sfu_mem_refuse(&sfu_bytes, bytes,
				      SFU_STAT_REFUSED_JIT_RESERVE);
	return 0;
}

/**
 * sfu_mem_count() - count memory that may not be refused
 * @bytes: what the caller allocated
 *
 * For what is already there and must be seen in the total (a region's
 * own structure, allocated where nothing may fail after it).
 */
void sfu_mem_count(size_t bytes)
{
	atomic_long_add(bytes, &sfu_bytes);
}

/**
 * sfu_mem_uncharge() - give back what sfu_mem_charge() or sfu_mem_count() counted
 * @bytes: the same number
 */
void sfu_mem_uncharge(size_t bytes)
{
	atomic_long_sub(bytes, &sfu_bytes);
}

/**
 * sfu_mem_charge_cache() - sfu_mem_charge() for the file cache
 * @bytes: what an entry holds
 *
 * Counted apart from memory_bytes, within the same max_total_bytes.  No
 * refusal is counted: a file the cache cannot keep is still registered.
 *
 * Return: 0, or -EDQUOT (nothing counted).
 */
int sfu_mem_charge_cache(size_t bytes)
{
	if (sfu_mem_add(&sfu_cache_bytes, bytes) <= sfu_mem_limit())
		return 0;
	atomic_long_sub(bytes, &sfu_cache_bytes);
	return -EDQUOT;
}

/**
 * sfu_mem_uncharge_cache() - give back what sfu_mem_charge_cache() counted
 * @bytes: the same number
 */
void sfu_mem_uncharge_cache(size_t bytes)
{
	atomic_long_sub(bytes, &sfu_cache_bytes);
}

/**
 * sfu_mem_alloc() - memory for a copy of a section, counted in max_total_bytes
 * @bytes: its size
 *
 * The one way the module allocates the bytes of a section it copies (a
 * file's, checked and indexed; a sidecar's, kept), so that every copy is
 * charged to the limit and to the caller's memory cgroup alike, and
 * allocated as the decoder's arrays are (sfu_alloc_array()).
 *
 * Return: the memory, or ERR_PTR(-EDQUOT) if it would go over
 * max_total_bytes, ERR_PTR(-ENOMEM).
 */
void *sfu_mem_alloc(size_t bytes)
{
	void *p;
	int ret;

	ret = sfu_mem_charge(bytes);
	if (ret)
		return ERR_PTR(ret);
	p = sfu_alloc_array(bytes, 1);
	if (!p) {
		sfu_mem_uncharge(bytes);
		return ERR_PTR(-ENOMEM);
	}
	return p;
}

/**
 * sfu_mem_free() - free what sfu_mem_alloc() gave, and uncount it
 * @p: the memory
 * @bytes: the size it was asked for
 */
void sfu_mem_free(void *p, size_t bytes)
{
	kvfree(p);
	sfu_mem_uncharge(bytes);
}
