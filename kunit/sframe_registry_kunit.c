// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the per-mm registry (kernel/registry.c), on real mm
 * structs: mm_alloc() gives an address space with no mappings, the
 * registry attaches its mmu notifier to it (the hooks are not there), and
 * mmput() runs exit_mmap() and so the notifier's release, as a process
 * exit would; one case ties a registry the hooks' way instead.
 *
 * Regions here have no section unless a test needs one; the registry
 * itself only looks at their text ranges and sources.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/maple_tree.h>
#include <linux/sched/mm.h>
#include <linux/stdarg.h>

#include <sframe/table.h>
#include <uapi/linux/sframe_unwind.h>

#include "forked.h"
#include "mem.h"
#include "registry.h"
#include "stats.h"
#include "sframe_test_sections.h"

#define REG_BASE		0x400000UL
#define REG_STEP		0x10000UL
#define REG_SIZE		0x8000UL
#define REG_NR			5
#define RACE_ROUNDS		2000
#define RACE_LOOKUPS		20000
#define RACE_CHURNED		3	/* even regions change, odd ones stay */
/* The slot array against a maple tree: sizes compared, probes per size. */
#define CMP_SIZES		{ 16, 128, 1024 }
#define CMP_PROBES		50000

struct reg_ctx {
	struct mm_struct *mm;
	struct sfu_mm *smm;
	long regions0;
	long bytes0;
	long mms0;
};

static struct sfu_region *reg_new(struct kunit *test, unsigned long start,
				  unsigned long size, u8 source)
{
	struct sfu_region *r = sfu_region_alloc(GFP_KERNEL_ACCOUNT);

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->start = start;
	r->end = start + size;
	r->source = source;
	return r;
}

static unsigned long reg_start(unsigned int i)
{
	return REG_BASE + i * REG_STEP;
}

static int reg_init(struct kunit *test)
{
	struct reg_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	rcu_barrier();
	ctx->regions0 = sfu_stat_regions();
	ctx->bytes0 = sfu_mem_bytes();
	ctx->mms0 = sfu_stat_mms();
	ctx->mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, ctx->mm);
	ctx->smm = sfu_mm_get(ctx->mm, current);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->smm));
	KUNIT_EXPECT_EQ(test, sfu_stat_mms(), ctx->mms0 + 1);
	test->priv = ctx;
	return 0;
}

/* Exit the mm; the registry, its regions and their memory must go. */
static void reg_exit(struct kunit *test)
{
	struct reg_ctx *ctx = test->priv;
	struct mm_struct *mm = ctx->mm;

	mmput(mm);
	/* Maps, then regions, are freed from RCU callbacks: two barriers. */
	rcu_barrier();
	rcu_barrier();
	rcu_read_lock();
	KUNIT_EXPECT_NULL(test, sfu_mm_find(mm));
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, sfu_stat_mms(), ctx->mms0);
	KUNIT_EXPECT_EQ(test, sfu_stat_regions(), ctx->regions0);
	KUNIT_EXPECT_EQ(test, sfu_mem_bytes(), ctx->bytes0);
}

static struct sfu_region *reg_find(struct reg_ctx *ctx, unsigned long pc)
{
	struct sfu_region *r;

	rcu_read_lock();
	r = sfu_region_find(ctx->mm, pc);
	rcu_read_unlock();
	return r;	/* only compared, never dereferenced */
}

static void reg_insert(struct kunit *test, struct sfu_region *r,
		       enum sfu_overlap overlap, int expect)
{
	struct reg_ctx *ctx = test->priv;
	int ret = sfu_mm_insert(ctx->smm, r, overlap, GFP_KERNEL_ACCOUNT);

	KUNIT_EXPECT_EQ(test, ret, expect);
	if (ret)
		sfu_region_put(r);
}

/* Out-of-order inserts give a sorted map; lookups hit and miss exactly. */
static void reg_test_sorted_lookup(struct kunit *test)
{
	static const unsigned int order[REG_NR] = { 3, 0, 4, 1, 2 };
	struct reg_ctx *ctx = test->priv;
	struct sfu_region *r[REG_NR];
	unsigned int i;

	for (i = 0; i < REG_NR; i++) {
		unsigned int k = order[i];

		r[k] = reg_new(test, reg_start(k), REG_SIZE,
			       SFRAME_UNWIND_SRC_ELF);
		reg_insert(test, r[k], SFU_OVERLAP_REFUSE, 0);
	}
	KUNIT_EXPECT_EQ(test, sfu_stat_regions(), ctx->regions0 + REG_NR);
	for (i = 0; i < REG_NR; i++) {
		unsigned long s = reg_start(i);

		KUNIT_EXPECT_PTR_EQ(test, reg_find(ctx, s), r[i]);
		KUNIT_EXPECT_PTR_EQ(test, reg_find(ctx, s + REG_SIZE - 1),
				    r[i]);
		KUNIT_EXPECT_NULL(test, reg_find(ctx, s + REG_SIZE));
		KUNIT_EXPECT_NULL(test, reg_find(ctx, s - 1));
	}
	KUNIT_EXPECT_NULL(test, reg_find(ctx, 0));
	KUNIT_EXPECT_NULL(test, reg_find(ctx, ULONG_MAX));
}

/* Each overlap policy does what sfu_mm_insert() promises. */
static void reg_test_overlap(struct kunit *test)
{
	struct reg_ctx *ctx = test->priv;
	unsigned long s = reg_start(1);
	struct sfu_region *elf, *jit, *grown;

	elf = reg_new(test, s, REG_SIZE, SFRAME_UNWIND_SRC_ELF);
	reg_insert(test, elf, SFU_OVERLAP_REFUSE, 0);
	reg_insert(test, reg_new(test, s + 1, 1, SFRAME_UNWIND_SRC_JIT),
		   SFU_OVERLAP_REFUSE, -EEXIST);
	/* Only a JIT region at the same start may be replaced. */
	reg_insert(test, reg_new(test, s, REG_SIZE, SFRAME_UNWIND_SRC_JIT),
		   SFU_OVERLAP_JIT_SAME_START, -EEXIST);
	reg_insert(test, reg_new(test, reg_start(3), 1, SFRAME_UNWIND_SRC_JIT),
		   SFU_OVERLAP_JIT_SAME_START, -ENOENT);
	KUNIT_EXPECT_PTR_EQ(test, reg_find(ctx, s), elf);

	/* A new mapping replaces what was there (stale regions). */
	jit = reg_new(test, s, REG_SIZE / 2, SFRAME_UNWIND_SRC_JIT);
	reg_insert(test, jit, SFU_OVERLAP_REPLACE, 0);
	KUNIT_EXPECT_PTR_EQ(test, reg_find(ctx, s), jit);
	KUNIT_EXPECT_NULL(test, reg_find(ctx, s + REG_SIZE / 2));

	/* A JIT section grows in place. */
	grown = reg_new(test, s, REG_SIZE * 2, SFRAME_UNWIND_SRC_JIT);
	reg_insert(test, grown, SFU_OVERLAP_JIT_SAME_START, 0);
	KUNIT_EXPECT_PTR_EQ(test, reg_find(ctx, s + REG_SIZE), grown);
	KUNIT_EXPECT_EQ(test, sfu_stat_regions(), ctx->regions0 + 1);
}

/* max_sections and max_mm_bytes bound a registry. */
static void reg_test_limits(struct kunit *test)
{
	unsigned int max_sections = sfu_max_sections;
	unsigned long max_bytes = sfu_max_mm_bytes;
	unsigned int i;

	sfu_max_sections = 2;
	for (i = 0; i < 2; i++)
		reg_insert(test, reg_new(test, reg_start(i), REG_SIZE,
					 SFRAME_UNWIND_SRC_ELF),
			   SFU_OVERLAP_REFUSE, 0);
	reg_insert(test, reg_new(test, reg_start(2), REG_SIZE,
				 SFRAME_UNWIND_SRC_ELF),
		   SFU_OVERLAP_REFUSE, -ENOSPC);
	sfu_max_sections = max_sections;

	sfu_max_mm_bytes = 3 * sizeof(struct sfu_region) - 1;
	reg_insert(test, reg_new(test, reg_start(3), REG_SIZE,
				 SFRAME_UNWIND_SRC_ELF),
		   SFU_OVERLAP_REFUSE, -ENOSPC);
	sfu_max_mm_bytes = max_bytes;
	reg_insert(test, reg_new(test, reg_start(3), REG_SIZE,
				 SFRAME_UNWIND_SRC_ELF),
		   SFU_OVERLAP_REFUSE, 0);
}

/* Unmapping drops exactly the overlapping regions; JIT removal by start. */
static void reg_test_remove(struct kunit *test)
{
	struct reg_ctx *ctx = test->priv;
	struct sfu_region *r[REG_NR];
	unsigned int i;

	for (i = 0; i < REG_NR; i++) {
		r[i] = reg_new(test, reg_start(i), REG_SIZE,
			       i == 4 ? SFRAME_UNWIND_SRC_JIT :
			       SFRAME_UNWIND_SRC_ELF);
		reg_insert(test, r[i], SFU_OVERLAP_REFUSE, 0);
	}
	/* From inside region 1 to inside region 2. */
	sfu_mm_remove_range(ctx->smm, reg_start(1) + 1, reg_start(2) + 1);
	KUNIT_EXPECT_PTR_EQ(test, reg_find(ctx, reg_start(0)), r[0]);
	KUNIT_EXPECT_NULL(test, reg_find(ctx, reg_start(1)));
	KUNIT_EXPECT_NULL(test, reg_find(ctx, reg_start(2)));
	KUNIT_EXPECT_PTR_EQ(test, reg_find(ctx, reg_start(3)), r[3]);
	/* A gap touches nothing. */
	sfu_mm_remove_range(ctx->smm, reg_start(3) + REG_SIZE, reg_start(4));
	KUNIT_EXPECT_PTR_EQ(test, reg_find(ctx, reg_start(3)), r[3]);

	KUNIT_EXPECT_EQ(test, sfu_mm_remove_jit(ctx->smm, reg_start(3)),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, sfu_mm_remove_jit(ctx->smm, reg_start(4) + 1),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, sfu_mm_remove_jit(ctx->smm, reg_start(4)), 0);
	KUNIT_EXPECT_NULL(test, reg_find(ctx, reg_start(4)));
	KUNIT_EXPECT_EQ(test, sfu_stat_regions(), ctx->regions0 + 2);
}

static struct sfu_map *reg_map(struct reg_ctx *ctx)
{
	return rcu_access_pointer(ctx->smm->map);
}

/* The snapshot lists the @n regions that follow, in order, each once. */
static void reg_expect_listed(struct kunit *test, unsigned int n, ...)
{
	struct reg_ctx *ctx = test->priv;
	struct sfu_map *snap = sfu_mm_snapshot(ctx->smm);
	unsigned int i;
	va_list ap;

	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(snap));
	KUNIT_EXPECT_EQ(test, snap->nr, n);
	va_start(ap, n);
	for (i = 0; i < snap->nr && i < n; i++)
		KUNIT_EXPECT_PTR_EQ(test, snap->regions[i],
				    va_arg(ap, struct sfu_region *));
	va_end(ap);
	sfu_map_release(snap);
}

/*
 * Removals and the insertions that fit where a region was, or after the
 * last, change the map in place (no new map); lookups, listings and the
 * counts stay exact throughout.
 */
static void reg_test_in_place(struct kunit *test)
{
	struct reg_ctx *ctx = test->priv;
	struct sfu_region *r[REG_NR], *x[REG_NR];
	struct sfu_map *map;
	unsigned int i;

	for (i = 0; i < REG_NR; i++) {
		r[i] = reg_new(test, reg_start(i), REG_SIZE,
			       SFRAME_UNWIND_SRC_ELF);
		reg_insert(test, r[i], SFU_OVERLAP_REFUSE, 0);
	}
	map = reg_map(ctx);
	/* The middle one goes and comes back; the last one too. */
	sfu_mm_remove_range(ctx->smm, reg_start(2), reg_start(2) + 1);
	KUNIT_EXPECT_NULL(test, reg_find(ctx, reg_start(2)));
	KUNIT_EXPECT_PTR_EQ(test, reg_find(ctx, reg_start(3)), r[3]);
	reg_expect_listed(test, 4, r[0], r[1], r[3], r[4]);
	x[2] = reg_new(test, reg_start(2), REG_SIZE, SFRAME_UNWIND_SRC_ELF);
	reg_insert(test, x[2], SFU_OVERLAP_REFUSE, 0);
	sfu_mm_remove_range(ctx->smm, reg_start(4), reg_start(4) + 1);
	KUNIT_EXPECT_NULL(test, reg_find(ctx, reg_start(4)));
	x[4] = reg_new(test, reg_start(4), REG_SIZE, SFRAME_UNWIND_SRC_ELF);
	reg_insert(test, x[4], SFU_OVERLAP_REFUSE, 0);
	KUNIT_EXPECT_PTR_EQ(test, reg_map(ctx), map);
	reg_expect_listed(test, 5, r[0], r[1], x[2], r[3], x[4]);

	/* Three go at once; two come back into their slots. */
	sfu_mm_remove_range(ctx->smm, reg_start(1), reg_start(4));
	for (i = 1; i < 4; i++)
		KUNIT_EXPECT_NULL(test, reg_find(ctx, reg_start(i)));
	KUNIT_EXPECT_PTR_EQ(test, reg_find(ctx, reg_start(4)), x[4]);
	x[1] = reg_new(test, reg_start(1), REG_SIZE, SFRAME_UNWIND_SRC_ELF);
	reg_insert(test, x[1], SFU_OVERLAP_REFUSE, 0);
	x[3] = reg_new(test, reg_start(3), REG_SIZE, SFRAME_UNWIND_SRC_ELF);
	reg_insert(test, x[3], SFU_OVERLAP_REFUSE, 0);
	KUNIT_EXPECT_PTR_EQ(test, reg_map(ctx), map);
	KUNIT_EXPECT_EQ(test, sfu_stat_regions(), ctx->regions0 + 4);

	/* No spare slot beside it: a new map. */
	x[2] = reg_new(test, reg_start(2), REG_SIZE, SFRAME_UNWIND_SRC_ELF);
	reg_insert(test, x[2], SFU_OVERLAP_REFUSE, 0);
	KUNIT_EXPECT_PTR_NE(test, reg_map(ctx), map);
	reg_expect_listed(test, 5, r[0], x[1], x[2], x[3], x[4]);
	for (i = 0; i < REG_NR; i++)
		KUNIT_EXPECT_NOT_NULL(test, reg_find(ctx, reg_start(i)));
	KUNIT_EXPECT_EQ(test, sfu_stat_regions(), ctx->regions0 + 5);
}

static bool reg_found(struct mm_struct *mm, unsigned long pc)
{
	bool found;

	rcu_read_lock();
	found = sfu_region_find(mm, pc);
	rcu_read_unlock();
	return found;
}

/*
 * A registry tied by the hooks (unmap_vmas(), exit_mmap()) holds its mm
 * and no notifier; sfu_mm_unmapped() drops the regions of a range, and
 * sfu_mm_exit() takes the registry down and lets the mm go.
 */
static void reg_test_hook_tie(struct kunit *test)
{
	u64 notified0 = sfu_stat_read(SFU_STAT_MM_NOTIFIED);
	long mms0 = sfu_stat_mms();
	struct mm_struct *mm;
	struct sfu_region *r;
	struct sfu_mm *smm;
	int count0;

	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	count0 = atomic_read(&mm->mm_count);
	sfu_registry_use_hooks(true);
	smm = sfu_mm_get(mm, current);
	sfu_registry_use_hooks(false);
	KUNIT_ASSERT_FALSE(test, IS_ERR(smm));
	KUNIT_EXPECT_EQ(test, atomic_read(&mm->mm_count), count0 + 1);
	KUNIT_EXPECT_NULL(test, mm->notifier_subscriptions);
	KUNIT_EXPECT_EQ(test, sfu_stat_read(SFU_STAT_MM_NOTIFIED), notified0);
	KUNIT_EXPECT_PTR_EQ(test, sfu_mm_get(mm, current), smm);

	r = reg_new(test, REG_BASE, REG_SIZE, SFRAME_UNWIND_SRC_ELF);
	KUNIT_ASSERT_EQ(test, sfu_mm_insert(smm, r, SFU_OVERLAP_REFUSE,
					    GFP_KERNEL_ACCOUNT), 0);
	/* Beside it: stays; through it: goes. */
	sfu_mm_unmapped(mm, REG_BASE + REG_SIZE, REG_BASE + REG_STEP);
	KUNIT_EXPECT_TRUE(test, reg_found(mm, REG_BASE));
	sfu_mm_unmapped(mm, REG_BASE + 1, REG_BASE + 2);
	KUNIT_EXPECT_FALSE(test, reg_found(mm, REG_BASE));

	r = reg_new(test, REG_BASE, REG_SIZE, SFRAME_UNWIND_SRC_ELF);
	KUNIT_ASSERT_EQ(test, sfu_mm_insert(smm, r, SFU_OVERLAP_REFUSE,
					    GFP_KERNEL_ACCOUNT), 0);
	sfu_mm_exit(mm);
	rcu_read_lock();
	KUNIT_EXPECT_NULL(test, sfu_mm_find(mm));
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, sfu_stat_mms(), mms0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mm->mm_count), count0);
	mmput(mm);
}

/*
 * Two tasks that each found no registry for an mm (the scan at load and
 * the process's own mmap) both make one: the second gets the first's and
 * keeps nothing of what it made, neither a reference to the mm (the
 * hooks' tie) nor one to the notifier it shares, which would leave the
 * notifier on the mm after the registry, and the module, are gone.
 */
static void reg_test_made_twice(struct kunit *test)
{
	struct reg_ctx *ctx = test->priv;
	int count0 = atomic_read(&ctx->mm->mm_count);
	struct sfu_mm *smm;

	KUNIT_ASSERT_TRUE(test, ctx->smm->notified);
	KUNIT_EXPECT_EQ(test, ctx->smm->mn.users, 1U);
	smm = sfu_mm_make(ctx->mm, current);
	KUNIT_EXPECT_PTR_EQ(test, smm, ctx->smm);
	KUNIT_EXPECT_EQ(test, ctx->smm->mn.users, 1U);

	sfu_registry_use_hooks(true);
	smm = sfu_mm_make(ctx->mm, current);
	sfu_registry_use_hooks(false);
	KUNIT_EXPECT_PTR_EQ(test, smm, ctx->smm);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->mm->mm_count), count0);
	KUNIT_EXPECT_EQ(test, sfu_stat_mms(), ctx->mms0 + 1);
}

/* A snapshot (fork, query) keeps its regions after they are removed. */
static void reg_test_snapshot(struct kunit *test)
{
	struct reg_ctx *ctx = test->priv;
	struct sfu_map *snap;
	unsigned int i;

	for (i = 0; i < REG_NR; i++)
		reg_insert(test, reg_new(test, reg_start(i), REG_SIZE,
					 SFRAME_UNWIND_SRC_ELF),
			   SFU_OVERLAP_REFUSE, 0);
	snap = sfu_mm_snapshot(ctx->smm);
	KUNIT_ASSERT_NOT_NULL(test, snap);
	KUNIT_EXPECT_EQ(test, snap->nr, REG_NR);
	sfu_mm_remove_range(ctx->smm, 0, TASK_SIZE);
	KUNIT_EXPECT_NULL(test, reg_find(ctx, reg_start(0)));
	rcu_barrier();
	for (i = 0; i < snap->nr; i++) {
		KUNIT_EXPECT_EQ(test, snap->regions[i]->start, reg_start(i));
		KUNIT_EXPECT_EQ(test, kref_read(&snap->regions[i]->ref), 1);
	}
	sfu_map_release(snap);
}

/*
 * A new child (fork) whose registry is still empty finds its parent's
 * regions through the snapshot until sfu_forked_del(); the child's own
 * registry serves after, and the entry's hold on the mm goes.
 */
static void reg_test_forked(struct kunit *test)
{
	struct reg_ctx *ctx = test->priv;
	struct mm_struct *child = mm_alloc();
	struct sfu_forked *f;
	struct sfu_region *r;
	struct sfu_map *snap;
	int count0;
	bool known;

	KUNIT_ASSERT_NOT_NULL(test, child);
	count0 = atomic_read(&child->mm_count);
	reg_insert(test, reg_new(test, reg_start(0), REG_SIZE,
				 SFRAME_UNWIND_SRC_ELF), SFU_OVERLAP_REFUSE, 0);
	reg_insert(test, reg_new(test, reg_start(2), REG_SIZE,
				 SFRAME_UNWIND_SRC_ELF), SFU_OVERLAP_REFUSE, 0);
	snap = sfu_mm_snapshot(ctx->smm);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(snap));
	rcu_read_lock();
	known = sfu_mm_known(child);
	rcu_read_unlock();
	KUNIT_EXPECT_FALSE(test, known);
	f = sfu_forked_add(child, snap);
	KUNIT_ASSERT_NOT_NULL(test, f);
	KUNIT_EXPECT_EQ(test, atomic_read(&child->mm_count), count0 + 1);
	rcu_read_lock();
	known = sfu_mm_known(child);
	r = sfu_region_find(child, reg_start(2) + 1);
	KUNIT_EXPECT_PTR_EQ(test, r, reg_find(ctx, reg_start(2)));
	KUNIT_EXPECT_NULL(test, sfu_region_find(child, reg_start(1)));
	rcu_read_unlock();
	KUNIT_EXPECT_TRUE(test, known);
	KUNIT_EXPECT_PTR_EQ(test, sfu_forked_snapshot(f),
			    (const struct sfu_map *)snap);
	sfu_forked_del(f);
	rcu_read_lock();
	known = sfu_mm_known(child);
	r = sfu_region_find(child, reg_start(2) + 1);
	rcu_read_unlock();
	KUNIT_EXPECT_FALSE(test, known);
	KUNIT_EXPECT_NULL(test, r);
	KUNIT_EXPECT_EQ(test, atomic_read(&child->mm_count), count0);
	/* The parent's regions keep only the parent's references. */
	rcu_barrier();
	r = reg_find(ctx, reg_start(0));
	KUNIT_ASSERT_NOT_NULL(test, r);
	KUNIT_EXPECT_EQ(test, kref_read(&r->ref), 1);
	mmput(child);
}

/* A region over a real section answers rule lookups; memory is counted. */
static void reg_test_section(struct kunit *test)
{
	struct reg_ctx *ctx = test->priv;
	u8 *buf = kunit_kzalloc(test, SFU_TEST_BUF_SIZE, GFP_KERNEL);
	const struct sfu_rule *found_rule;
	struct sfu_region *r, *found;
	struct sfu_rule rule;
	s64 len;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	len = sfu_test_std_section(SFRAME_VERSION_3, sfu_native_abi(), true,
				   buf, SFU_TEST_BUF_SIZE, SFU_TEST_VADDR);
	KUNIT_ASSERT_GT(test, len, 0);
	r = reg_new(test, SFU_TEST_F_ROWS, SFU_TEST_F_BIG - SFU_TEST_F_ROWS,
		    SFRAME_UNWIND_SRC_SIDECAR);
	KUNIT_ASSERT_EQ(test, sfu_region_init_section(r, buf, len,
						      SFU_TEST_VADDR,
						      SFU_SEC_TABLE), 0);
	KUNIT_EXPECT_GT(test, r->bytes, sizeof(*r));
	/* A sidecar's section does not change: its rows are a table. */
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, r->sec->table);
	KUNIT_EXPECT_EQ(test, r->version, SFRAME_VERSION_3);
	reg_insert(test, r, SFU_OVERLAP_REFUSE, 0);
	rcu_read_lock();
	found = sfu_region_find(ctx->mm, SFU_TEST_F_ROWS);
	KUNIT_ASSERT_PTR_EQ(test, found, r);
	found_rule = sfu_table_find(found->sec, SFU_TEST_F_ROWS);
	KUNIT_ASSERT_NOT_NULL(test, found_rule);
	KUNIT_EXPECT_EQ(test, found_rule->cfa.kind, SFU_LOC_REG);
	/* The table is all it keeps: the decoder has no bytes to read. */
	KUNIT_EXPECT_EQ(test, sfu_find_rule(found->sec, SFU_TEST_F_ROWS,
					    &rule), -EFAULT);
	KUNIT_EXPECT_TRUE(test, !found->sec->ents && !found->sec->runs);
	rcu_read_unlock();

	/* A corrupt copy is refused and leaves nothing behind. */
	buf[0] ^= 0xff;
	r = reg_new(test, 0, 1, SFRAME_UNWIND_SRC_JIT);
	KUNIT_EXPECT_EQ(test, sfu_region_init_section(r, buf, len,
						      SFU_TEST_VADDR,
						      SFU_SEC_TABLE), -ENOEXEC);
	sfu_region_put(r);
}

/* How far the borrowing test's mapping is from its link-time address. */
#define REG_BIAS	0x10000000UL

struct reg_owner {
	struct sfu_owner owner;
	bool released;
};

static void reg_owner_release(struct kref *ref)
{
	container_of(ref, struct reg_owner, owner.ref)->released = true;
}

/*
 * A region borrowing a rule table made at the file's link-time addresses
 * (a file cache entry's, a sidecar's) finds the rule of each of its PCs
 * less its load bias, the owner's own rule, and holds nothing else.
 */
static void reg_test_borrowed(struct kunit *test)
{
	u8 *buf = kunit_kzalloc(test, SFU_TEST_BUF_SIZE, GFP_KERNEL);
	struct reg_owner *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	struct sfu_section sec;
	struct sfu_region *r;
	s64 len;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, o);
	len = sfu_test_std_section(SFRAME_VERSION_3, sfu_native_abi(), true,
				   buf, SFU_TEST_BUF_SIZE, SFU_TEST_VADDR);
	KUNIT_ASSERT_GT(test, len, 0);
	KUNIT_ASSERT_EQ(test, sfu_section_check(&sec, buf, len, SFU_TEST_VADDR,
						SFU_SEC_TABLE), 0);
	sfu_owner_init(&o->owner, reg_owner_release);
	r = reg_new(test, REG_BIAS + sec.text_lo, sec.text_hi - sec.text_lo,
		    SFRAME_UNWIND_SRC_ELF);
	sfu_region_borrow_section(r, &o->owner, &sec, REG_BIAS);
	KUNIT_EXPECT_PTR_EQ(test, r->sec, &sec);
	KUNIT_EXPECT_EQ(test, r->bytes, sizeof(*r));
	KUNIT_EXPECT_EQ(test, r->version, SFRAME_VERSION_3);
	KUNIT_EXPECT_PTR_EQ(test,
			    sfu_region_table_find(r, REG_BIAS + SFU_TEST_F_ROWS),
			    sfu_table_find(&sec, SFU_TEST_F_ROWS));
	KUNIT_EXPECT_NOT_NULL(test, sfu_region_table_find(r, r->start));
	KUNIT_EXPECT_NULL(test, sfu_region_table_find(r, r->start - 1));
	KUNIT_EXPECT_NULL(test, sfu_region_table_find(r, SFU_TEST_F_ROWS));
	KUNIT_EXPECT_EQ(test, sfu_region_sframe(r), REG_BIAS + SFU_TEST_VADDR);
	/* The last reference to the owner is the region's, not the table. */
	sfu_owner_put(&o->owner);
	KUNIT_EXPECT_FALSE(test, o->released);
	sfu_region_put(r);
	rcu_barrier();
	KUNIT_EXPECT_TRUE(test, o->released);
	KUNIT_EXPECT_NOT_NULL(test, sfu_table_find(&sec, SFU_TEST_F_ROWS));
	sfu_section_destroy(&sec);
}

struct reg_race {
	struct sfu_mm *smm;
	atomic_t stop;
};

static int reg_race_writer(void *arg)
{
	struct reg_race *race = arg;
	unsigned int i;

	for (i = 0; i < RACE_ROUNDS && !kthread_should_stop(); i++) {
		unsigned int k = 2 * (i % RACE_CHURNED);	/* 0, 2, 4 */
		struct sfu_region *r = sfu_region_alloc(GFP_KERNEL_ACCOUNT);

		if (!r)
			break;
		r->start = reg_start(k);
		r->end = r->start + REG_SIZE - (i & 0xff);
		r->source = SFRAME_UNWIND_SRC_ELF;
		if (sfu_mm_insert(race->smm, r, SFU_OVERLAP_REPLACE,
				  GFP_KERNEL_ACCOUNT))
			sfu_region_put(r);
		if (i & 1)
			sfu_mm_remove_range(race->smm, reg_start(k),
					    reg_start(k) + 1);
	}
	atomic_set(&race->stop, 1);
	while (!kthread_should_stop())
		usleep_range(100, 200);
	return 0;
}

/*
 * Lock-free lookups during inserts and removals (in place and through new
 * maps) see whole regions only, and always find the regions that stay.
 */
static void reg_test_race(struct kunit *test)
{
	struct reg_ctx *ctx = test->priv;
	struct reg_race race = { .smm = ctx->smm };
	unsigned long bad = 0, hits = 0, missed = 0, n = 0;
	struct task_struct *writer;
	unsigned int k;

	for (k = 1; k < REG_NR; k += 2)
		reg_insert(test, reg_new(test, reg_start(k), REG_SIZE,
					 SFRAME_UNWIND_SRC_ELF),
			   SFU_OVERLAP_REFUSE, 0);
	writer = kthread_run(reg_race_writer, &race, "sfu-reg-race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(writer));
	while (!atomic_read(&race.stop) || n < RACE_LOOKUPS) {
		unsigned long pc = reg_start(n % REG_NR) + (n * 97) % REG_SIZE;
		struct sfu_region *r;

		rcu_read_lock();
		r = sfu_region_find(ctx->mm, pc);
		if (r) {
			hits++;
			if (pc < r->start || pc >= r->end ||
			    kref_read(&r->ref) == 0)
				bad++;
		} else if (n % REG_NR % 2) {
			missed++;
		}
		rcu_read_unlock();
		if (!(++n % 256))
			cond_resched();
	}
	kthread_stop(writer);
	KUNIT_EXPECT_EQ(test, bad, 0);
	KUNIT_EXPECT_EQ(test, missed, 0);
	kunit_info(test, "%lu lookups, %lu hits during %u changes\n", n, hits,
		   RACE_ROUNDS);
}

/* A PC in or between the first @nr regions, from @seed (xorshift). */
static unsigned long cmp_probe(u32 *seed, unsigned int nr)
{
	*seed ^= *seed << 13;
	*seed ^= *seed >> 17;
	*seed ^= *seed << 5;
	return REG_BASE + *seed % (nr * REG_STEP);
}

/*
 * The maple tree's lookup under the caller's RCU read lock, as the
 * registry's is (mtree_load() would take the lock again per lookup).
 */
static void *cmp_maple_find(struct maple_tree *mt, unsigned long pc)
{
	MA_STATE(mas, mt, pc, pc);

	return mas_walk(&mas);
}

/* ns for CMP_PROBES lookups in the registry (@mt NULL) or in @mt. */
static u64 cmp_time(struct reg_ctx *ctx, struct maple_tree *mt,
		    unsigned int nr, unsigned long *hits)
{
	u32 seed = nr;
	u64 t0, t1;
	unsigned int i;
	unsigned long pc;

	*hits = 0;
	rcu_read_lock();
	t0 = ktime_get_ns();
	for (i = 0; i < CMP_PROBES; i++) {
		pc = cmp_probe(&seed, nr);
		*hits += !!(mt ? cmp_maple_find(mt, pc) :
			    sfu_region_find(ctx->mm, pc));
	}
	t1 = ktime_get_ns();
	rcu_read_unlock();
	return t1 - t0;
}

/*
 * The registry's sorted slot array against the kernel's maple tree, which
 * upstream's SFrame series keeps sections in: both hold the same regions
 * and must give the same region for every probe; the time of a lookup
 * and of an insertion in each is printed for registry.rst.
 */
static void reg_test_vs_maple(struct kunit *test)
{
	static const unsigned int sizes[] = CMP_SIZES;
	struct reg_ctx *ctx = test->priv;
	unsigned long hits_a, hits_b, pc;
	u64 ins_a = 0, ins_b = 0, t0, la, lb;
	unsigned int k, i = 0, bad = 0;
	struct maple_tree mt;
	struct sfu_region *r;
	u32 seed = 1;

	mt_init_flags(&mt, MT_FLAGS_USE_RCU);
	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		KUNIT_ASSERT_LE(test, sizes[k], sfu_max_sections);
		for (; i < sizes[k]; i++) {
			r = reg_new(test, reg_start(i), REG_SIZE,
				    SFRAME_UNWIND_SRC_ELF);
			t0 = ktime_get_ns();
			reg_insert(test, r, SFU_OVERLAP_REFUSE, 0);
			ins_a += ktime_get_ns() - t0;
			t0 = ktime_get_ns();
			KUNIT_ASSERT_EQ(test, mtree_store_range(&mt, r->start,
								r->end - 1, r,
								GFP_KERNEL), 0);
			ins_b += ktime_get_ns() - t0;
		}
		for (pc = 0; pc < CMP_PROBES; pc++) {
			unsigned long at = cmp_probe(&seed, sizes[k]);

			rcu_read_lock();
			bad += cmp_maple_find(&mt, at) !=
			       sfu_region_find(ctx->mm, at);
			rcu_read_unlock();
		}
		/* Alternated, the faster of two runs each. */
		la = cmp_time(ctx, NULL, sizes[k], &hits_a);
		lb = cmp_time(ctx, &mt, sizes[k], &hits_b);
		la = min(la, cmp_time(ctx, NULL, sizes[k], &hits_a));
		lb = min(lb, cmp_time(ctx, &mt, sizes[k], &hits_b));
		KUNIT_EXPECT_EQ(test, hits_a, hits_b);
		kunit_info(test, "%u regions: lookup ns slot array %llu, maple tree %llu; insertion ns %llu, %llu\n",
			   sizes[k], la / CMP_PROBES, lb / CMP_PROBES,
			   ins_a / i, ins_b / i);
	}
	KUNIT_EXPECT_EQ(test, bad, 0);
	mtree_destroy(&mt);
}

static struct kunit_case sframe_registry_cases[] = {
	KUNIT_CASE(reg_test_sorted_lookup),
	KUNIT_CASE(reg_test_overlap),
	KUNIT_CASE(reg_test_limits),
	KUNIT_CASE(reg_test_remove),
	KUNIT_CASE(reg_test_snapshot),
	KUNIT_CASE(reg_test_forked),
	KUNIT_CASE(reg_test_hook_tie),
	KUNIT_CASE(reg_test_made_twice),
	KUNIT_CASE(reg_test_in_place),
	KUNIT_CASE(reg_test_section),
	KUNIT_CASE(reg_test_borrowed),
	KUNIT_CASE(reg_test_race),
	KUNIT_CASE(reg_test_vs_maple),
	{}
};

/* The registry counts what it does; the module makes the counters. */
static int reg_suite_init(struct kunit_suite *suite)
{
	return sfu_stats_init();
}

static void reg_suite_exit(struct kunit_suite *suite)
{
	sfu_stats_exit();
}

static struct kunit_suite sframe_registry_suite = {
	.name = "sframe_registry",
	.suite_init = reg_suite_init,
	.suite_exit = reg_suite_exit,
	.init = reg_init,
	.exit = reg_exit,
	.test_cases = sframe_registry_cases,
};

kunit_test_suite(sframe_registry_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for the sframe-unwind registry");
