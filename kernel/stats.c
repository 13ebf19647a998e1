// SPDX-License-Identifier: GPL-2.0
/*
 * The module's event counters (debugfs stats, debugfs.c), and the
 * refusals of sections: each counted by kind and logged, rate limited.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/fs.h>
#include <linux/limits.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include <sframe/decode.h>

#include "stats.h"

/*
 * Per CPU: the walker counts every walk, from every CPU, also in NMI.
 * Allocated, not static (see deferred.c's struct sfu_nmi_cpu).
 */
struct sfu_stat_set {
	u64 n[SFU_STAT_NR];
};

static struct sfu_stat_set __percpu *sfu_stats;

static const char *const sfu_stat_names[SFU_STAT_NR] = {
	[SFU_STAT_REGISTERED]		= "registered",
	[SFU_STAT_UNREGISTERED]		= "unregistered",
	[SFU_STAT_REFUSED]		= "refused",
	[SFU_STAT_REFUSED_CORRUPT]	= "refused_corrupt",
	[SFU_STAT_REFUSED_ELF]		= "refused_bad_elf",
	[SFU_STAT_REFUSED_LIMIT]	= "refused_limit",
	[SFU_STAT_REFUSED_NOMEM]	= "refused_nomem",
	[SFU_STAT_REFUSED_FAULT]	= "refused_fault",
	[SFU_STAT_LOOKUPS]		= "lookups",
	[SFU_STAT_LOOKUP_HITS]		= "lookup_hits",
	[SFU_STAT_FORKS]		= "forks",
	[SFU_STAT_SCANNED_MMS]		= "scanned_mms",
	[SFU_STAT_SCAN_CONTENDED]	= "scan_contended",
	[SFU_STAT_DEFERRED_REQUESTS]	= "deferred_requests",
	[SFU_STAT_DEFERRED_WALKS]	= "deferred_walks",
	[SFU_STAT_DEFERRED_BUSY]	= "deferred_busy",
	[SFU_STAT_DEFERRED_DROPPED]	= "deferred_dropped",
	[SFU_STAT_PERF_WALKS]		= "perf_walks",
	[SFU_STAT_FTRACE_WALKS]		= "ftrace_walks",
	[SFU_STAT_SAMPLE_FAULTS]	= "sample_faults",
	[SFU_STAT_MM_EXITED]		= "mm_exited",
	[SFU_STAT_MM_RELEASED]		= "mm_released",
	[SFU_STAT_NOT_REGULAR]		= "not_regular",
	[SFU_STAT_REFUSED_GLOBAL]	= "refused_global_limit",
	[SFU_STAT_HOOK_SKIPPED]		= "hooks_skipped",
	[SFU_STAT_FCACHE_HITS]		= "file_cache_hits",
	[SFU_STAT_TABLE_FRAMES]		= "table_frames",
	[SFU_STAT_REGISTERED_NOW]	= "registered_at_mmap",
	[SFU_STAT_MM_NOTIFIED]		= "mms_notified",
	[SFU_STAT_KERNEL_DEFERRED_WALKS] = "kernel_deferred_walks",
	[SFU_STAT_REFUSED_USER_JIT]	= "refused_user_jit",
	[SFU_STAT_REFUSED_JIT_RESERVE]	= "refused_jit_reserve",
	[SFU_STAT_REFUSED_USER_FILES]	= "refused_user_files",
	[SFU_STAT_SIDECARS_GONE]	= "sidecars_gone",
	[SFU_STAT_FIRST_MAP_WAITS]	= "first_map_waits",
	[SFU_STAT_FIRST_MAP_ANSWERED]	= "first_map_answered",
	[SFU_STAT_FIRST_MAP_TIMEOUTS]	= "first_map_timeouts",
	[SFU_STAT_FIRST_MAP_SPENT]	= "first_map_spent",
	[SFU_STAT_PAGE_READS]		= "page_reads",
};

/**
 * sfu_stats_init() - make the counters; before anything counts
 *
 * Return: 0, or -ENOMEM.
 */
int sfu_stats_init(void)
{
	sfu_stats = alloc_percpu(struct sfu_stat_set);
	return sfu_stats ? 0 : -ENOMEM;
}

/* After the last count. */
void sfu_stats_exit(void)
{
	free_percpu(sfu_stats);
	sfu_stats = NULL;
}

/**
 * sfu_stat_inc() - count one event; any context, NMI included
 * @stat: the counter
 */
void sfu_stat_inc(enum sfu_stat stat)
{
	this_cpu_inc(sfu_stats->n[stat]);
}

/**
 * sfu_stat_add() - count @n events; any context, NMI included
 * @stat: the counter
 * @n: how many
 */
void sfu_stat_add(enum sfu_stat stat, u64 n)
{
	this_cpu_add(sfu_stats->n[stat], n);
}

/**
 * sfu_stat_read() - a counter's value, summed over the CPUs
 * @stat: the counter
 *
 * Return: the sum; not a snapshot, counts go on meanwhile.
 */
u64 sfu_stat_read(enum sfu_stat stat)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(sfu_stats, cpu)->n[stat];
	return sum;
}

/**
 * sfu_stat_name() - the name debugfs shows a counter under
 * @stat: the counter
 *
 * Return: the name.
 */
const char *sfu_stat_name(enum sfu_stat stat)
{
	return sfu_stat_names[stat];
}

/**
 * sfu_refuse() - say once (rate limited) why a section was refused
 * @who: the file's path, or what else the section belongs to
 * @why: the failed check
 * @off: section offset the check concerns
 * @err: the error code
 */
void sfu_refuse(const char *who, const char *why, u64 off, int err)
{
	enum sfu_stat stat;

	switch (err) {
	case -ENOMEM:
		stat = SFU_STAT_REFUSED_NOMEM;
		break;
	case -EFAULT:
	case -EIO:
		stat = SFU_STAT_REFUSED_FAULT;
		break;
	case -EFBIG:
	case -ENOSPC:
		stat = SFU_STAT_REFUSED_LIMIT;
		break;
	case -EDQUOT:
		/* Counted by sfu_mem_charge() or sfu_user_charge(). */
		stat = SFU_STAT_NR;
		break;
	case -ENOEXEC:
		stat = SFU_STAT_REFUSED_ELF;
		break;
	default:
		stat = SFU_STAT_REFUSED_CORRUPT;
		break;
	}
	sfu_stat_inc(SFU_STAT_REFUSED);
	if (stat != SFU_STAT_NR)
		sfu_stat_inc(stat);
	pr_warn_ratelimited("%s: refused: %s at 0x%llx (%s, %pe)\n", who, why,
			    off, sfu_strerror(err), ERR_PTR(err));
}

/**
 * sfu_refuse_file() - sfu_refuse() for a file's section, named by path
 * @file: the file
 * @why: as for sfu_refuse()
 * @off: as for sfu_refuse()
 * @err: as for sfu_refuse()
 */
void sfu_refuse_file(struct file *file, const char *why, u64 off, int err)
{
	char *buf = kmalloc(PATH_MAX, GFP_KERNEL);
	char *path = buf ? file_path(file, buf, PATH_MAX) : NULL;

	sfu_refuse(IS_ERR_OR_NULL(path) ? "(unnamed)" : path, why, off, err);
	kfree(buf);
}
