/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sframe_unwind internals shared between the module's files; not an API.
 *
 * Data flow: hooks.c sees executable mappings appear (an ftrace hook on
 * perf_event_mmap()) and processes fork (perf_event_fork()).  A mapping of
 * a file the file cache holds, in a process with a registry, is registered
 * by the hook itself (mapping.c); any other, by a task work (twork.c)
 * that, back in the task on its way to user space, asks mapping.c to
 * build a region for the mapping (elf.c reads the file, sidecar.c holds
 * the sections of files without their own) and registry.c to insert it
 * into the mm's map.  registry.c learns of munmap and exit through hooks
 * (hooks.c) or, where those cannot run, an mmu notifier.  chardev.c adds
 * regions on request (JITs, sidecar files) and introspect.c shows them in
 * debugfs; stats.c counts what happens.
 */
#ifndef _SFU_H
#define _SFU_H

#include <linux/elf.h>
#include <linux/ftrace.h>
#include <linux/kref.h>
#include <linux/mmu_notifier.h>
#include <linux/rcupdate.h>
#include <linux/rcupdate_wait.h>
#include <linux/sched.h>
#include <linux/task_work.h>
#include <linux/types.h>

#include <sframe/decode.h>
#include <uapi/linux/sframe_unwind.h>

/* ---- module parameters (params.c) */
extern unsigned int sfu_max_sections;
extern unsigned long sfu_max_section_bytes;
extern unsigned long sfu_max_mm_bytes;
extern unsigned long sfu_max_total_bytes;
extern bool sfu_validate_fres;

/* ---- counters and refusals (stats.c; the registry's sizes: registry.c) */
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
	SFU_STAT_FAST_FRAMES,		/* perf/ftrace frames of the fast lane */
	SFU_STAT_REGISTERED_NOW,	/* registrations in the mmap hook */
	SFU_STAT_MM_NOTIFIED,		/* registries tied by an mmu notifier */
	SFU_STAT_KERNEL_DEFERRED_WALKS,	/* unwind_user() walks (6.17+) */
	SFU_STAT_REFUSED_USER_JIT,	/* over a user's JIT share */
	SFU_STAT_REFUSED_JIT_RESERVE,	/* JIT into the reserve for files */
	SFU_STAT_SIDECARS_GONE,		/* dropped as their files went */
	SFU_STAT_NR,
};

void sfu_stat_inc(enum sfu_stat stat);
void sfu_stat_add(enum sfu_stat stat, u64 n);
int sfu_stats_init(void);
void sfu_stats_exit(void);
u64 sfu_stat_read(enum sfu_stat stat);
const char *sfu_stat_name(enum sfu_stat stat);
long sfu_stat_mms(void);
long sfu_stat_regions(void);
long sfu_stat_bytes(void);
void sfu_refuse(const char *who, const char *why, u64 off, int err);
void sfu_refuse_file(struct file *file, const char *why, u64 off, int err);

/* ---- task work that module unload can wait for (twork.c) */
struct sfu_twork;
typedef void (*sfu_twork_fn)(struct sfu_twork *tw);

/*
 * A task work item.  @work runs @fn in the task; once @fn has returned,
 * @done is queued behind it with the kernel's wakeme_after_rcu() as its
 * function, so the item's completion is signalled from kernel text after
 * the last instruction of this module has run.  Items are freed by twork.c
 * with @free once that completion is seen.
 */
struct sfu_twork {
	struct callback_head work;
	struct rcu_synchronize done;
	struct rcu_synchronize kick;	/* unload's TWA_SIGNAL nudge */
	struct task_struct *task;	/* valid while the item is live */
	bool kicked;
	struct list_head node;
	sfu_twork_fn fn;
	void (*free)(struct sfu_twork *tw);
};

int sfu_twork_queue(struct task_struct *task, struct sfu_twork *tw,
		    enum task_work_notify_mode mode);
void sfu_twork_init(void);
unsigned long sfu_twork_pending(void);
void sfu_twork_drain(void);

/* ---- each user's share of the memory for JIT sections (quota.c) */
struct sfu_user;

struct sfu_user *sfu_user_get(void);
struct sfu_user *sfu_user_hold(struct sfu_user *u);
void sfu_user_put(struct sfu_user *u);
int sfu_user_charge(struct sfu_user *u, size_t bytes);
void sfu_user_uncharge(struct sfu_user *u, size_t bytes);
long sfu_jit_pool_limit(void);

/* ---- regions and per-mm registries (registry.c) */

/*
 * A file's version: what stat() gives of it, and the inode's generation,
 * which tells a new file from an old one whose inode number it reuses.
 */
struct sfu_stamp {
	loff_t size;
	struct timespec64 mtime;
	struct timespec64 ctime;
	u32 generation;
};

/* A sidecar section: kernel copy of generated SFrame for one file. */
struct sfu_blob {
	struct kref ref;
	struct rcu_head rcu;
	struct hlist_node node;		/* sfu_sidecars: RCU, its mutex */
	dev_t dev;
	unsigned long ino;
	u8 build_id[SFRAME_UNWIND_BUILD_ID_MAX];
	u32 build_id_len;
	struct sfu_stamp stamp;		/* the file's version then */
	u64 link_vaddr;			/* section address at link time */
	size_t len;
	u8 *data;
	/*
	 * The sidecar whose bytes @data are, when another file (a copy, the
	 * same file in another layer) registered the same section first; a
	 * reference to it.  NULL: @data is this sidecar's own.
	 */
	struct sfu_blob *same;
	/*
	 * @data validated and indexed once, at the link-time address, when
	 * @indexed (only for a sidecar with bytes of its own).  Mappings of
	 * the file borrow the index, shifted by their load bias
	 * (sfu_region_borrow_section()), instead of building one each.
	 */
	struct sfu_section sec;
	size_t sec_bytes;
	bool indexed;
	/* The watch on its file (watch.c) while in the table, or NULL. */
	struct sfu_watch *watch;
};

/* One registered section and the text range it describes. Immutable. */
struct sfu_region {
	struct kref ref;
	struct rcu_head rcu;
	unsigned long start;		/* text range */
	unsigned long end;
	struct sfu_section sec;
	struct sfu_blob *blob;		/* sidecar bytes, or NULL */
	struct sfu_fcache *fcache;	/* lends @sec's index, or NULL */
	struct sfu_user *user;		/* a JIT region's payer, or NULL */
	/* The mapped file, or NULL (JIT); only for holders of @ref. */
	struct file *file;
	dev_t dev;
	unsigned long ino;
	u8 source;			/* SFRAME_UNWIND_SRC_* */
	u8 version;
	bool sec_borrowed;		/* @sec's arrays are the blob's */
	size_t bytes;			/* memory this region holds */
};

/*
 * Sorted, non-overlapping regions of one mm: a region may fill several
 * adjacent slots (registry.c, maps).  Changed in place or replaced as a
 * whole (RCU).  A snapshot (sfu_mm_snapshot()) has each region once.
 */
struct sfu_map {
	struct rcu_head rcu;
	unsigned int nr;		/* slots readers see */
	unsigned int cap;		/* slots allocated */
	struct sfu_region *regions[];
};

/* Per-mm registry, found by mm through a hash; lives until the mm exits. */
struct sfu_mm {
	struct mmu_notifier mn;		/* if @notified; its rcu head always */
	struct hlist_node node;		/* sfu_mms, under sfu_mms_lock */
	struct mm_struct *mm;		/* the key; mmgrab()bed if !@notified */
	spinlock_t lock;		/* serialises changes of @map */
	struct sfu_map __rcu *map;
	size_t bytes;			/* under @lock */
	unsigned int nr_regions;	/* under @lock */
	pid_t tgid;
	char comm[TASK_COMM_LEN];
	bool hashed;			/* under sfu_mms_lock */
	bool notified;			/* tied to @mm by @mn, not the hooks */
};

/* How sfu_mm_insert() treats regions that overlap the new one. */
enum sfu_overlap {
	SFU_OVERLAP_REPLACE,		/* drop them: they are stale */
	SFU_OVERLAP_REFUSE,		/* -EEXIST */
	SFU_OVERLAP_JIT_SAME_START,	/* replace the JIT region at start */
};

/*
 * Allocations in the mmap hook: the mmap lock is held for writing and
 * preemption may be off; a failure leaves the work to the task work.
 */
#define SFU_GFP_HOOK	(GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT)

struct sfu_region *sfu_region_alloc(gfp_t gfp);
struct sfu_region *sfu_region_alloc_jit(struct sfu_user *u);
void sfu_region_put(struct sfu_region *r);
int sfu_blob_index(struct sfu_blob *blob);
void sfu_blob_unindex(struct sfu_blob *blob);
void sfu_region_borrow_section(struct sfu_region *r,
			       const struct sfu_section *sec,
			       unsigned long delta);
/* How a section is set up (sfu_section_check(), sfu_region_init_section()) */
#define SFU_SEC_USER	0x1	/* read where the process has it mapped */
#define SFU_SEC_TABLE	0x2	/* will not change: decode into a table */

int sfu_section_check(struct sfu_section *sec, const void *bytes, size_t len,
		      unsigned long vaddr, unsigned int flags);
int sfu_region_init_section(struct sfu_region *r, const void *bytes,
			    size_t len, unsigned long vaddr, unsigned int flags);
struct sfu_mm *sfu_mm_find(struct mm_struct *mm);
struct sfu_mm *sfu_mm_get(struct mm_struct *mm, struct task_struct *owner);
void sfu_mm_exit(struct mm_struct *mm);
void sfu_registry_use_hooks(bool on);
void sfu_mm_unmapped(struct mm_struct *mm, unsigned long start,
		     unsigned long end);
int sfu_mem_charge(size_t bytes);
int sfu_mem_charge_jit(size_t bytes);
void sfu_mem_uncharge(size_t bytes);
int sfu_mm_insert(struct sfu_mm *smm, struct sfu_region *r,
		  enum sfu_overlap overlap, gfp_t gfp);
int sfu_mm_remove_jit(struct sfu_mm *smm, unsigned long start);
void sfu_mm_remove_range(struct sfu_mm *smm, unsigned long start,
			 unsigned long end);
bool sfu_mm_covers(struct sfu_mm *smm, unsigned long addr,
		   const struct file *file);
void sfu_blob_put(struct sfu_blob *blob);
struct sfu_region *sfu_region_find(struct mm_struct *mm, unsigned long pc);
struct sfu_map *sfu_mm_snapshot(struct sfu_mm *smm);
void sfu_map_release(struct sfu_map *map);
void sfu_registry_for_each(void (*fn)(struct sfu_mm *smm, void *arg),
			   void *arg);
int sfu_registry_init(void);
void sfu_registry_exit(void);

/* ---- ELF files (elf.c) */

/* The headers of a native ELF file, read from it or from the file cache. */
struct sfu_elf_headers {
	Elf64_Ehdr eh;
	const Elf64_Phdr *ph;
	unsigned int phnum;
	struct sfu_fcache *cached;	/* @ph is its copy, eh not read */
};

int sfu_elf_read_exact(struct file *file, void *buf, size_t len, u64 off);
int sfu_elf_read(struct file *file, struct sfu_elf_headers *elf);
int sfu_elf_get(struct file *file, struct sfu_elf_headers *elf);
void sfu_elf_put(struct sfu_elf_headers *elf);
const Elf64_Phdr *sfu_elf_find(const struct sfu_elf_headers *elf, u32 type);
const Elf64_Phdr *sfu_elf_text(const struct sfu_elf_headers *elf,
			       unsigned long pgoff);
bool sfu_elf_loaded(const struct sfu_elf_headers *elf, const Elf64_Phdr *s);
u32 sfu_elf_build_id(struct file *file, const struct sfu_elf_headers *elf,
		     u8 *id);
int sfu_file_stamp(struct file *file, struct sfu_stamp *st);
bool sfu_stamp_equal(const struct sfu_stamp *a, const struct sfu_stamp *b);

/* ---- sections registered for files without their own (sidecar.c) */
struct sfu_blob *sfu_sidecar_get(struct file *file);
int sfu_sidecar_add(struct file *file, const struct sframe_unwind_file *arg,
		    const void __user *bytes);
int sfu_sidecar_del(struct file *file);
int sfu_sidecar_del_build_id(const u8 *id, u32 len);
u32 sfu_sidecar_list(struct sframe_unwind_sidecar *out, u32 room);
void sfu_sidecar_stats(u64 *nr, u64 *bytes, u64 *sharing);
int sfu_sidecar_init(void);
void sfu_sidecar_exit(void);

/* ---- regions for mapped files (mapping.c) */
bool sfu_mapping_register_now(struct vm_area_struct *vma);
int sfu_mapping_register(struct mm_struct *mm, struct task_struct *owner,
			 unsigned long addr);

/* ---- indexes of files with their own SFrame (filecache.c) */
struct sfu_fcache;

bool sfu_fcache_enabled(void);
struct sfu_fcache *sfu_fcache_get(struct file *file);
struct sfu_fcache *sfu_fcache_get_now(struct file *file);
const Elf64_Phdr *sfu_fcache_phdrs(const struct sfu_fcache *fc,
				   unsigned int *phnum);
struct sfu_fcache *sfu_fcache_add(struct file *file, const Elf64_Phdr *ph,
				  unsigned int phnum, struct sfu_section *sec);
void sfu_fcache_lend(struct sfu_region *r, struct sfu_fcache *fc,
		     unsigned long bias);
void sfu_fcache_put(struct sfu_fcache *fc);
long sfu_fcache_mem(void);
void sfu_fcache_stats(u64 *nr, u64 *bytes);
void sfu_fcache_exit(void);

/* ---- deferred unwinding (deferred.c) */
int sfu_deferred_setup(void);
void sfu_deferred_stop(void);
void sfu_deferred_teardown(void);

/* ---- perf and ftrace (redirect.c) */
void sfu_redirect_init(void);
void sfu_redirect_exit(void);
bool sfu_redirect_active(const char *symbol);

/* ---- hooks (hooks.c) */
int sfu_hooks_init(void);
void sfu_hooks_exit(void);
int sfu_ftrace_filter(struct ftrace_ops *ops, const char *symbol);
void sfu_scan_all(void);
void sfu_scan_file(const struct inode *inode);

/* ---- debugfs (debugfs.c, introspect.c) */
void sfu_debugfs_init(void);
void sfu_debugfs_exit(void);

#define SFU_DBG_MAX_PCS		1024
#define SFU_DBG_MAX_INPUT	(SFU_DBG_MAX_PCS * 20)
#define SFU_DBG_LINE		256

int sfu_pcs_parse(const char __user *ubuf, size_t count, u64 **pcs,
		  unsigned int *nr);
int sfu_rule_line(char *buf, size_t size, u64 pc, int err,
		  const struct sfu_rule *rule, u8 abi);

/* ---- user interfaces */
int sfu_chardev_init(void);
void sfu_chardev_exit(void);
void sfu_introspect_init(struct dentry *dir);
int sfu_testhook_init(struct dentry *dir);
void sfu_testhook_exit(void);
void sfu_trace_request_init(struct dentry *dir);
void sfu_trace_request_exit(void);

#endif /* _SFU_H */
