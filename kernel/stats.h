/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counters and refusals (stats.c): what the module did, in the
 * debugfs file stats and the kernel log.
 */
#ifndef _SFU_STATS_H
#define _SFU_STATS_H

#include <linux/types.h>

struct file;

enum sfu_stat {
	SFU_STAT_REGISTERED,
	SFU_STAT_UNREGISTERED,
	SFU_STAT_REFUSED,
	SFU_STAT_REFUSED_CORRUPT,
	SFU_STAT_REFUSED_ELF,
	SFU_STAT_REFUSED_LIMIT,
	SFU_STAT_REFUSED_NOMEM,
	SFU_STAT_REFUSED_FAULT,
	SFU_STAT_LOOKUPS,
	SFU_STAT_LOOKUP_HITS,
	SFU_STAT_FORKS,
	SFU_STAT_SCANNED_MMS,
	SFU_STAT_SCAN_CONTENDED,
	SFU_STAT_DEFERRED_REQUESTS,
	SFU_STAT_DEFERRED_WALKS,
	SFU_STAT_DEFERRED_BUSY,
	SFU_STAT_DEFERRED_DROPPED,
	SFU_STAT_PERF_WALKS,
	SFU_STAT_FTRACE_WALKS,
	SFU_STAT_SAMPLE_FAULTS,
	SFU_STAT_MM_EXITED,	/* registries dropped at exit_mmap() */
	SFU_STAT_MM_RELEASED,	/* ... by the notifier's release instead */
	SFU_STAT_NOT_REGULAR,	/* executable mappings of non-regular files */
	SFU_STAT_REFUSED_GLOBAL,	/* over max_total_bytes */
	SFU_STAT_HOOK_SKIPPED,		/* RT, a hook called non-preemptible */
	SFU_STAT_FCACHE_HITS,		/* mappings given a cached index */
	SFU_STAT_TABLE_FRAMES,		/* perf/ftrace frames by a rule table */
	SFU_STAT_REGISTERED_NOW,	/* registrations in the mmap hook */
	SFU_STAT_MM_NOTIFIED,		/* registries tied by an mmu notifier */
	SFU_STAT_KERNEL_DEFERRED_WALKS,	/* unwind_user() walks (6.17+) */
	SFU_STAT_REFUSED_USER_JIT,	/* over a user's JIT share */
	SFU_STAT_REFUSED_JIT_RESERVE,	/* JIT into the reserve for files */
	SFU_STAT_REFUSED_USER_FILES,	/* over a file owner's share */
	SFU_STAT_SIDECARS_GONE,		/* dropped as their files went */
	SFU_STAT_FIRST_MAP_WAITS,	/* mappings held for the daemon */
	SFU_STAT_FIRST_MAP_ANSWERED,	/* ... that got their sidecar */
	SFU_STAT_FIRST_MAP_TIMEOUTS,	/* ... whose bound ran out */
	SFU_STAT_FIRST_MAP_SPENT,	/* not held: the process waited enough */
	SFU_STAT_PAGE_READS,		/* stack words read by page */
	SFU_STAT_NR,
};

void sfu_stat_inc(enum sfu_stat stat);
void sfu_stat_add(enum sfu_stat stat, u64 n);
int sfu_stats_init(void);
void sfu_stats_exit(void);
u64 sfu_stat_read(enum sfu_stat stat);
const char *sfu_stat_name(enum sfu_stat stat);
/* Room for the reason sfu_refuse() is given, where a caller builds it. */
#define SFU_REFUSE_WHY_LEN	128

void sfu_refuse(const char *who, const char *why, u64 off, int err);
void sfu_refuse_file(struct file *file, const char *why, u64 off, int err);

#endif /* _SFU_STATS_H */
