// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the user stack walker (kernel/unwind.c and the back end
 * of the architecture it runs on), in both access modes.
 *
 * The test thread borrows a fresh address space (mm_alloc() and
 * kthread_use_mm()), maps two anonymous pages in it with vm_mmap(),
 * writes a synthetic stack and an SFrame section there, registers the
 * section for a made-up text range and walks from hand-made user
 * registers.  Text is never read, so it need not be mapped.
 */
#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>

#include "unwind.h"
#include <uapi/linux/sframe_unwind.h>

#include "registry.h"
#include "stats.h"
#include "sframe_test_sections.h"

#define UW_TEXT			0x10000000UL
#define UW_FUNCS		4
#define UW_CALL_OFF		0x11	/* return addresses: just after a call */
#define UW_PC_OFF		0x20	/* frame 0: somewhere in function 0 */
#define UW_MAP_SIZE		(4 * PAGE_SIZE)
#define UW_STACK_OFF		PAGE_SIZE	/* stack at map + this */
#define UW_SECTION_CAP		PAGE_SIZE
#define UW_MAX_FRAMES		16

struct uw_ctx {
	struct mm_struct *mm;
	unsigned long map;		/* user address of the mapping */
	unsigned long stack;		/* SP of frame 0 */
	unsigned long section;		/* user address of the section */
	s64 len;
	u8 *bytes;			/* kernel copy of the section */
	struct sfu_region *r;
	u8 abi;
	bool used;			/* kthread_use_mm() in effect */
};

static unsigned long uw_func(unsigned int i)
{
	return UW_TEXT + i * SFU_TEST_FUNC_SIZE;
}

/* User registers at PC @pc, SP @sp, FP @fp. */
static void uw_regs(struct pt_regs *regs, unsigned long pc, unsigned long sp,
		    unsigned long fp)
{
	memset(regs, 0, sizeof(*regs));
#if defined(CONFIG_X86_64)
	regs->ip = pc;
	regs->sp = sp;
	regs->bp = fp;
	regs->cs = __USER_CS;
	regs->ss = __USER_DS;
#elif defined(CONFIG_ARM64)
	regs->pc = pc;
	regs->sp = sp;
	regs->regs[29] = fp;
	regs->pstate = PSR_MODE_EL0t;
#elif defined(CONFIG_S390)
	regs->psw.addr = pc;
	regs->psw.mask = PSW_MASK_PSTATE | PSW_MASK_EA | PSW_MASK_BA;
	regs->gprs[15] = sp;
	regs->gprs[11] = fp;
#endif
}

static void uw_put(struct kunit *test, unsigned long addr, unsigned long v)
{
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)addr, &v, sizeof(v)),
			0);
}

/*
 * Write frames 0 .. UW_FUNCS - 2: each returns into the next function;
 * the realigned one keeps its caller's SP less SFU_TEST_SP_ADD.
 */
static void uw_write_stack(struct kunit *test, struct uw_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i + 1 < UW_FUNCS; i++) {
		unsigned long sp = ctx->stack + i * SFU_TEST_FRAME;

		uw_put(test, sp + sfu_test_ra_slot(ctx->abi),
		       uw_func(i + 1) + UW_CALL_OFF);
		uw_put(test, sp + sfu_test_fp_slot(ctx->abi), 0);
		if (i == SFU_TEST_REALIGNED)
			uw_put(test, sp + SFU_TEST_SP_SLOT,
			       sp + SFU_TEST_FRAME - SFU_TEST_SP_ADD);
	}
}

/* Map a stack and a section and register it with @sec_flags. */
static int uw_setup(struct kunit *test, unsigned int sec_flags)
{
	struct uw_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	struct sfu_mm *smm;

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->abi = sfu_native_abi();
	ctx->mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, ctx->mm);
	kthread_use_mm(ctx->mm);
	ctx->used = true;
	ctx->map = vm_mmap(NULL, 0, UW_MAP_SIZE, PROT_READ | PROT_WRITE,
			   MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(ctx->map));
	ctx->stack = ctx->map + UW_STACK_OFF;
	ctx->section = ctx->map;
	ctx->bytes = kunit_kzalloc(test, UW_SECTION_CAP, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->bytes);
	ctx->len = sfu_test_frames_section(ctx->abi, UW_TEXT, UW_FUNCS,
					   ctx->bytes, UW_SECTION_CAP,
					   ctx->section);
	KUNIT_ASSERT_GT(test, ctx->len, 0);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)ctx->section,
					   ctx->bytes, ctx->len), 0);

	ctx->r = sfu_region_alloc(GFP_KERNEL_ACCOUNT);
	KUNIT_ASSERT_NOT_NULL(test, ctx->r);
	ctx->r->start = UW_TEXT;
	ctx->r->end = uw_func(UW_FUNCS);
	ctx->r->source = SFRAME_UNWIND_SRC_JIT;
	KUNIT_ASSERT_EQ(test, sfu_region_init_section(ctx->r, ctx->bytes,
						      ctx->len, ctx->section,
						      sec_flags), 0);
	KUNIT_ASSERT_EQ(test, !!ctx->r->sec->table,
			!!(sec_flags & SFU_SEC_TABLE));
	smm = sfu_mm_get(ctx->mm, current);
	KUNIT_ASSERT_FALSE(test, IS_ERR(smm));
	KUNIT_ASSERT_EQ(test, sfu_mm_insert(smm, ctx->r, SFU_OVERLAP_REFUSE,
					    GFP_KERNEL_ACCOUNT),
			0);
	uw_write_stack(test, ctx);
	return 0;
}

/*
 * Each case runs twice: walks read the section where it is mapped
 * (SFU_SEC_USER, as a JIT's), then through its rule table (SFU_SEC_TABLE,
 * as a file's).
 */
static const unsigned int uw_sec_flags[] = {
	SFU_SEC_USER,
	SFU_SEC_USER | SFU_SEC_TABLE,
};

static void uw_flags_desc(const unsigned int *flags, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s",
		 *flags & SFU_SEC_TABLE ? "table" : "section");
}

KUNIT_ARRAY_PARAM(uw_flags, uw_sec_flags, uw_flags_desc);

static int uw_init(struct kunit *test)
{
	const unsigned int *flags = test->param_value;

	return uw_setup(test, flags ? *flags : SFU_SEC_USER);
}

/* Frames of @res a rule table stepped: all SFrame steps, with a table. */
static unsigned int uw_table_frames(struct kunit *test,
				    const struct sfu_unwind_result *res)
{
	struct uw_ctx *ctx = test->priv;

	return ctx->r->sec->table ? res->sframe : 0;
}

/*
 * Give the address space back.  KUnit runs init and the case in one
 * thread but exit in another, so every case ends with this.
 */
static void uw_done(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;

	kthread_unuse_mm(ctx->mm);
	ctx->used = false;
}

static void uw_exit(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;

	if (!ctx || !ctx->mm || ctx->used)
		return;		/* a failed case still has it in use */
	mmput(ctx->mm);
	rcu_barrier();
	rcu_barrier();
}

static void uw_walk(struct kunit *test, enum sfu_mem mode, unsigned long pc,
		    unsigned long sp, unsigned long fp, unsigned long *pcs,
		    struct sfu_unwind_result *res)
{
	struct pt_regs regs;

	uw_regs(&regs, pc, sp, fp);
	KUNIT_ASSERT_EQ(test, sfu_unwind_user(&regs, mode, pcs,
					      UW_MAX_FRAMES, res), 0);
}

/* The whole synthetic chain, in one mode. */
static void uw_check_chain(struct kunit *test, enum sfu_mem mode)
{
	struct uw_ctx *ctx = test->priv;
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;
	unsigned int i;

	uw_walk(test, mode, uw_func(0) + UW_PC_OFF, ctx->stack, 0, pcs, &res);
	KUNIT_ASSERT_EQ(test, res.nr, UW_FUNCS);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_OUTERMOST);
	KUNIT_EXPECT_EQ(test, res.sframe, UW_FUNCS - 1);
	KUNIT_EXPECT_EQ(test, res.table, uw_table_frames(test, &res));
	KUNIT_EXPECT_EQ(test, res.fallback, 0);
	KUNIT_EXPECT_EQ(test, pcs[0], uw_func(0) + UW_PC_OFF);
	for (i = 1; i < UW_FUNCS; i++)
		KUNIT_EXPECT_EQ(test, pcs[i], uw_func(i) + UW_CALL_OFF);
}

static void uw_test_chain_faulting(struct kunit *test)
{
	uw_check_chain(test, SFU_MEM_USER);
	uw_done(test);
}

static void uw_test_chain_nofault(struct kunit *test)
{
	uw_check_chain(test, SFU_MEM_USER_NOFAULT);
	uw_done(test);
}

/* A walk of the chain in @mode with max_depth at @depth. */
static void uw_walk_depth(struct kunit *test, enum sfu_mem mode,
			  unsigned int depth, unsigned long *pcs,
			  struct sfu_unwind_result *res)
{
	struct uw_ctx *ctx = test->priv;
	unsigned int was = sfu_max_depth;
	struct pt_regs regs;
	int ret;

	uw_regs(&regs, uw_func(0) + UW_PC_OFF, ctx->stack, 0);
	sfu_max_depth = depth;
	ret = sfu_unwind_user(&regs, mode, pcs, UW_MAX_FRAMES, res);
	sfu_max_depth = was;
	KUNIT_ASSERT_EQ(test, ret, 0);
}

/* max_depth cuts the walk. */
static void uw_test_depth(struct kunit *test)
{
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;

	uw_walk_depth(test, SFU_MEM_USER, 2, pcs, &res);
	KUNIT_EXPECT_EQ(test, res.nr, 2);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_DEPTH);
	uw_done(test);
}

/*
 * The depth limit and a full buffer end a non-faulting walk, also in the
 * middle of frames stepped by a table.
 */
static void uw_test_nofault_depth(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;
	struct pt_regs regs;

	uw_walk_depth(test, SFU_MEM_USER_NOFAULT, 3, pcs, &res);
	KUNIT_EXPECT_EQ(test, res.nr, 3);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_DEPTH);
	KUNIT_EXPECT_EQ(test, res.sframe, 2);
	KUNIT_EXPECT_EQ(test, res.table, uw_table_frames(test, &res));
	KUNIT_EXPECT_EQ(test, pcs[2], uw_func(2) + UW_CALL_OFF);

	uw_regs(&regs, uw_func(0) + UW_PC_OFF, ctx->stack, 0);
	KUNIT_ASSERT_EQ(test, sfu_unwind_user(&regs, SFU_MEM_USER_NOFAULT, pcs,
					      UW_FUNCS - 1, &res), 0);
	KUNIT_EXPECT_EQ(test, res.nr, UW_FUNCS - 1);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_DEPTH);
	/* The step to the frame the full buffer then refuses counts. */
	KUNIT_EXPECT_EQ(test, res.sframe, UW_FUNCS - 1);
	KUNIT_EXPECT_EQ(test, res.table, uw_table_frames(test, &res));
	KUNIT_EXPECT_EQ(test, pcs[UW_FUNCS - 2],
			uw_func(UW_FUNCS - 2) + UW_CALL_OFF);
	uw_done(test);
}

/* A zero return address ends the walk. */
static void uw_test_zero_ra(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;

	uw_put(test, ctx->stack + SFU_TEST_FRAME + sfu_test_ra_slot(ctx->abi),
	       0);
	uw_walk(test, SFU_MEM_USER_NOFAULT, uw_func(0) + UW_PC_OFF,
		ctx->stack, 0, pcs, &res);
	KUNIT_EXPECT_EQ(test, res.nr, 2);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_RA);
	KUNIT_EXPECT_EQ(test, res.sframe, 1);
	KUNIT_EXPECT_EQ(test, res.table, uw_table_frames(test, &res));
	uw_done(test);
}

/*
 * A realigned frame whose saved stack pointer points below its own SP
 * (a corrupt frame, or one caught before it saved the word) stops the
 * walk there: the stack must move up.
 */
static void uw_test_realigned_below(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;
	unsigned long pcs[UW_MAX_FRAMES];
	unsigned long sp = ctx->stack + SFU_TEST_REALIGNED * SFU_TEST_FRAME;
	struct sfu_unwind_result res;

	uw_put(test, sp + SFU_TEST_SP_SLOT, sp - SFU_TEST_FRAME);
	uw_walk(test, SFU_MEM_USER, uw_func(0) + UW_PC_OFF, ctx->stack, 0,
		pcs, &res);
	KUNIT_EXPECT_EQ(test, res.nr, SFU_TEST_REALIGNED + 1);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_CFA);
	uw_done(test);
}

/* A stack that is not mapped stops the walk in both modes. */
static void uw_test_fault(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;
	unsigned long sp = ctx->map + UW_MAP_SIZE;	/* past the mapping */

	uw_walk(test, SFU_MEM_USER, uw_func(0) + UW_PC_OFF, sp, 0, pcs, &res);
	KUNIT_EXPECT_EQ(test, res.nr, 1);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_FAULT);
	uw_walk(test, SFU_MEM_USER_NOFAULT, uw_func(0) + UW_PC_OFF, sp, 0,
		pcs, &res);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_FAULT);
	uw_done(test);
}

/* A stack page that goes away under frame 2 stops the walk there. */
static void uw_test_fault_mid(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;
	unsigned long page = ctx->map + UW_STACK_OFF + PAGE_SIZE;

	/* Frames 0 and 1 at the end of the stack page, 2 on the next one. */
	ctx->stack = page - 2 * SFU_TEST_FRAME;
	uw_write_stack(test, ctx);
	KUNIT_ASSERT_EQ(test, vm_munmap(page, PAGE_SIZE), 0);
	uw_walk(test, SFU_MEM_USER_NOFAULT, uw_func(0) + UW_PC_OFF,
		ctx->stack, 0, pcs, &res);
	KUNIT_EXPECT_EQ(test, res.nr, 3);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_FAULT);
	KUNIT_EXPECT_EQ(test, res.sframe, 2);
	KUNIT_EXPECT_EQ(test, res.table, uw_table_frames(test, &res));
	KUNIT_EXPECT_EQ(test, pcs[2], uw_func(2) + UW_CALL_OFF);
	uw_walk(test, SFU_MEM_USER, uw_func(0) + UW_PC_OFF, ctx->stack, 0,
		pcs, &res);
	KUNIT_EXPECT_EQ(test, res.nr, 3);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_FAULT);
	KUNIT_EXPECT_EQ(test, res.sframe, 2);
	KUNIT_EXPECT_EQ(test, res.table, uw_table_frames(test, &res));
	uw_done(test);
}

/* A misaligned SP gives a misaligned CFA: stop, never read through it. */
static void uw_test_misaligned(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;

	uw_walk(test, SFU_MEM_USER, uw_func(0) + UW_PC_OFF, ctx->stack + 1, 0,
		pcs, &res);
	KUNIT_EXPECT_EQ(test, res.nr, 1);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_CFA);
	uw_done(test);
}

/*
 * Without SFrame for the PC the architecture's fallback steps: a frame
 * record at the FP (x86-64, arm64) or the back chain at the SP (s390x).
 */
static void uw_test_fallback(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;
	unsigned long nowhere = UW_TEXT - SFU_TEST_FUNC_SIZE;
	unsigned long sp = ctx->stack, link = sp + SFU_TEST_FRAME;
	unsigned long ret = uw_func(1) + UW_CALL_OFF;

#ifdef CONFIG_S390
	uw_put(test, sp, link);
	uw_put(test, link + 14 * sizeof(long), ret);
	uw_walk(test, SFU_MEM_USER, nowhere, sp, 0, pcs, &res);
#else
	uw_put(test, sp, link);		/* the caller's FP ... */
	uw_put(test, sp + sizeof(long), ret);	/* ... and the return */
	uw_walk(test, SFU_MEM_USER, nowhere, sp, sp, pcs, &res);
#endif
	KUNIT_ASSERT_GE(test, res.nr, 2);
	KUNIT_EXPECT_EQ(test, pcs[1], ret);
	KUNIT_EXPECT_EQ(test, res.fallback, 1);
	uw_done(test);
}

#ifdef CONFIG_X86_64
/* Code without CFI: a frame record's set-up, a body, a return. */
static const u8 uw_edge_code[] = {
	0x55,				/* push %rbp */
	0x48, 0x89, 0xe5,		/* mov %rsp, %rbp */
	0x90,				/* nop: the body */
	0x5d,				/* pop %rbp */
	0xc3,				/* ret */
};

#define UW_EDGE_PUSH		0
#define UW_EDGE_MOV		1
#define UW_EDGE_RET		6
#define UW_CODE_OFF		(2 * PAGE_SIZE)

/*
 * Frame 0 at the edges of a frame record in code without CFI: at the
 * push of RBP and at a return the return address is at SP, at the move
 * just after the push one word above; RBP (here 0: no record) is never
 * read.  The body steps by the record as before.
 */
static void uw_test_record_edge(struct kunit *test)
{
	static const unsigned int at[] = { UW_EDGE_PUSH, UW_EDGE_MOV,
					   UW_EDGE_RET };
	struct uw_ctx *ctx = test->priv;
	unsigned long code = ctx->map + UW_CODE_OFF, sp = ctx->stack;
	unsigned long ret = uw_func(1) + UW_CALL_OFF;
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)code, uw_edge_code,
					   sizeof(uw_edge_code)), 0);
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		uw_put(test, sp, at[i] == UW_EDGE_MOV ? 0 : ret);
		uw_put(test, sp + sizeof(long), at[i] == UW_EDGE_MOV ? ret : 0);
		uw_walk(test, SFU_MEM_USER, code + at[i], sp, 0, pcs, &res);
		KUNIT_ASSERT_GE(test, res.nr, 2);
		KUNIT_EXPECT_EQ(test, pcs[1], ret);
		KUNIT_EXPECT_GE(test, res.fallback, 1);
	}
	/* In the body, no edge: RBP 0 links nothing. */
	uw_walk(test, SFU_MEM_USER, code + UW_EDGE_MOV + 3, sp, 0, pcs, &res);
	KUNIT_EXPECT_EQ(test, res.nr, 1);
	uw_done(test);
}
#endif

#ifdef CONFIG_ARM64
#define UW_LOW_RECORD		64	/* frame 0's record, above its SP */
#define UW_FRAME0		160	/* frame 0's size */
/* Frame 0's caller: a plain frame (not SFU_TEST_REALIGNED's). */
#define UW_LOW_CALLER		2

/*
 * A frame without SFrame whose record sits low in it, as GCC lays out
 * arm64 frames with locals, returning into a function with SFrame: the
 * record's SP (its address + 16) is below the caller's frame, whose
 * record-shaped rule (FP and RA saved as a record) is found from the FP
 * the record restored instead.
 */
static void uw_test_record_low(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;
	unsigned long sp = ctx->stack, rec = sp + UW_LOW_RECORD;
	unsigned long caller_sp = sp + UW_FRAME0;
	unsigned long caller_rec = caller_sp + sfu_test_fp_slot(ctx->abi);
	unsigned long nowhere = UW_TEXT - SFU_TEST_FUNC_SIZE;
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;
	unsigned long off;

	for (off = 0; off < UW_FRAME0 + SFU_TEST_FRAME; off += sizeof(long))
		uw_put(test, sp + off, 0);
	uw_put(test, rec, caller_rec);
	uw_put(test, rec + sizeof(long), uw_func(UW_LOW_CALLER) + UW_CALL_OFF);
	uw_put(test, caller_rec, 0);
	uw_put(test, caller_sp + sfu_test_ra_slot(ctx->abi),
	       uw_func(UW_LOW_CALLER + 1) + UW_CALL_OFF);
	uw_walk(test, SFU_MEM_USER, nowhere, sp, rec, pcs, &res);
	KUNIT_ASSERT_GE(test, res.nr, 3);
	KUNIT_EXPECT_EQ(test, pcs[1], uw_func(UW_LOW_CALLER) + UW_CALL_OFF);
	KUNIT_EXPECT_EQ(test, pcs[2], uw_func(UW_LOW_CALLER + 1) + UW_CALL_OFF);
	uw_done(test);
}
#endif

/* A section found corrupt in a faulting walk is dropped from the registry. */
static void uw_test_corrupt(struct kunit *test)
{
	struct uw_ctx *ctx = test->priv;
	unsigned long pcs[UW_MAX_FRAMES];
	struct sfu_unwind_result res;
	struct sfu_region *r;
	u64 fres = ctx->r->sec->elems[0].fre_off;
	u8 junk[SFU_TEST_FRAME];

	if (ctx->r->sec->table) {
		uw_done(test);
		kunit_skip(test, "walks read a rule table, not the section");
	}

	/* Overwrite the FRE sub-section, V3's FDE attributes included. */
	KUNIT_ASSERT_LT(test, fres, ctx->len);
	KUNIT_ASSERT_LE(test, ctx->len - fres, sizeof(junk));
	memset(junk, 0xff, sizeof(junk));
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)(ctx->section +
							  fres),
					   junk, ctx->len - fres), 0);
	uw_walk(test, SFU_MEM_USER_NOFAULT, uw_func(0) + UW_PC_OFF,
		ctx->stack, 0, pcs, &res);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_CORRUPT);
	uw_walk(test, SFU_MEM_USER, uw_func(0) + UW_PC_OFF, ctx->stack, 0,
		pcs, &res);
	KUNIT_EXPECT_EQ(test, res.stop, SFU_STOP_CORRUPT);
	rcu_read_lock();
	r = sfu_region_find(ctx->mm, uw_func(0));
	rcu_read_unlock();
	KUNIT_EXPECT_NULL(test, r);
	uw_done(test);
}

/* Every case runs on the section alone and through a rule table. */
static struct kunit_case sframe_unwind_cases[] = {
	KUNIT_CASE_PARAM(uw_test_chain_faulting, uw_flags_gen_params),
	KUNIT_CASE_PARAM(uw_test_chain_nofault, uw_flags_gen_params),
	KUNIT_CASE_PARAM(uw_test_depth, uw_flags_gen_params),
	KUNIT_CASE_PARAM(uw_test_zero_ra, uw_flags_gen_params),
	KUNIT_CASE_PARAM(uw_test_realigned_below, uw_flags_gen_params),
	KUNIT_CASE_PARAM(uw_test_fault, uw_flags_gen_params),
	KUNIT_CASE_PARAM(uw_test_fault_mid, uw_flags_gen_params),
	KUNIT_CASE_PARAM(uw_test_misaligned, uw_flags_gen_params),
	KUNIT_CASE_PARAM(uw_test_fallback, uw_flags_gen_params),
#ifdef CONFIG_X86_64
	KUNIT_CASE_PARAM(uw_test_record_edge, uw_flags_gen_params),
#endif
#ifdef CONFIG_ARM64
	KUNIT_CASE_PARAM(uw_test_record_low, uw_flags_gen_params),
#endif
	KUNIT_CASE_PARAM(uw_test_corrupt, uw_flags_gen_params),
	KUNIT_CASE_PARAM(uw_test_nofault_depth, uw_flags_gen_params),
	{}
};

/* The walker counts what it does; the module makes the counters. */
static int uw_suite_init(struct kunit_suite *suite)
{
	return sfu_stats_init();
}

static void uw_suite_exit(struct kunit_suite *suite)
{
	sfu_stats_exit();
}

static struct kunit_suite sframe_unwind_suite = {
	.name = "sframe_unwind",
	.suite_init = uw_suite_init,
	.suite_exit = uw_suite_exit,
	.init = uw_init,
	.exit = uw_exit,
	.test_cases = sframe_unwind_cases,
};

kunit_test_suite(sframe_unwind_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for the sframe-unwind user stack walker");
