// SPDX-License-Identifier: GPL-2.0
/*
 * The module's walk over real programs' stacks, on the host's CPU: make
 * bench-native's second table (tools/testing/checks/bench-native.sh).
 *
 *   replay-native [-n SAMPLES] [-r REPS] -- PROGRAM [ARG...]
 *
 * Runs PROGRAM and samples it as perf record --call-graph dwarf does:
 * perf_event_open() of cpu-clock every quarter millisecond of its user
 * time, each sample with the user registers and a copy of the user stack
 * (up to REPLAY_STACK bytes), SAMPLES of them at most (default 2000); the
 * program's executable mappings come from the kernel's mmap records.
 * Each mapped file gets the rule table the module holds for it: from its
 * own .sframe, or from the section sframectl generates from its .eh_frame
 * (gen_section()), opened as the module opens a file's
 * (sfu_section_open(): validated, table only).  Then every sample is
 * walked REPS times (default 100) two ways, over its stack copy:
 *
 *   sframe  the module's walk: the step of <sframe/step.h>, each frame's
 *           rule from its file's table (a caller's through the table's
 *           memo), the region kept from frame to frame and searched for
 *           when the PC leaves it
 *   fp      the frame-record step, as the kernel walks without the module
 *
 * each cut at 8, 32 and 127 frames.  Each cut prints
 *
 *   cut=C samples=S sframe_frames=F sframe_ns_frame=N sframe_ns_sample=M
 *   fp_frames=F fp_ns_frame=N fp_ns_sample=M
 *
 * the frames each walk found in all and the median over REPLAY_BATCHES
 * batches of the CPU time per frame and per sample; then how the sframe
 * walks ended.  A program built without frame pointers gives the fp walk
 * a frame or two a sample: make bench-native replays one program built
 * both ways.  x86-64 only.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sframe/table.h>
#include "gen.h"

#include "copy-step.h"

#define REPLAY_SAMPLES		2000
#define REPLAY_REPS		100
#define REPLAY_BATCHES		5
#define REPLAY_PERIOD_NS	250000
#define REPLAY_STACK		32768
/* The ring: 2^REPLAY_RING_ORDER pages of data and the header page. */
#define REPLAY_RING_ORDER	11
#define REPLAY_POLL_MS		10
#define REPLAY_MAX_REGIONS	512
#define REPLAY_MAX_FRAMES	4096
#define NSEC_PER_SEC		1000000000ULL

/* perf's x86 user registers, in the order of their bits. */
enum {
	PR_AX, PR_BX, PR_CX, PR_DX, PR_SI, PR_DI, PR_BP, PR_SP, PR_IP,
	PR_R8 = 16, PR_R15 = 23,
};
#define REPLAY_REG_MASK	(((1ULL << (PR_IP + 1)) - 1) | \
			 (((1ULL << (PR_R15 - PR_R8 + 1)) - 1) << PR_R8))
#define REPLAY_NR_REGS	(PR_IP + 1 + PR_R15 - PR_R8 + 1)
/* DWARF's rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp: perf's numbers. */
static const unsigned char dwarf_of_perf[] = {
	[0] = PR_AX, [1] = PR_DX, [2] = PR_CX, [3] = PR_BX,
	[4] = PR_SI, [5] = PR_DI, [6] = PR_BP, [7] = PR_SP,
};

/* A sample: frame 0's registers by DWARF number, the stack's copy. */
struct replay_sample {
	unsigned long regs[COPY_DWARF_REGS];
	unsigned long sp;
	unsigned char *stack;
	unsigned long len;
};

/* An executable mapping of a file, with the file's rule table. */
struct replay_region {
	unsigned long lo, hi;
	unsigned long bias;		/* runtime address - link-time one */
	u64 pgoff;
	char *path;
	struct sfu_section *sec;	/* NULL: no table */
};

static struct replay_sample *samples;
static unsigned int nr_samples, max_samples = REPLAY_SAMPLES;
static struct replay_region regions[REPLAY_MAX_REGIONS];
static unsigned int nr_regions;
static unsigned long lost;

/* ---- sampling */

static int replay_open(pid_t pid)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = REPLAY_PERIOD_NS,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = REPLAY_REG_MASK,
		.sample_stack_user = REPLAY_STACK,
		.disabled = 1,
		.enable_on_exec = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.mmap = 1,
		.mmap2 = 1,
	};

	return syscall(SYS_perf_event_open, &a, pid, -1, -1, 0);
}

/* Keep an executable mapping of a file (a later one replaces overlaps). */
static void replay_mmap(const struct perf_event_header *h)
{
	const struct {
		u32 pid, tid;
		u64 addr, len, pgoff;
		u32 maj, min;
		u64 ino, ino_gen;
		u32 prot, flags;
		char name[];
	} *m = (const void *)(h + 1);
	struct replay_region *r;
	unsigned int i;

	if (!(m->prot & PROT_EXEC) || m->name[0] != '/' ||
	    nr_regions == REPLAY_MAX_REGIONS)
		return;
	for (i = 0; i < nr_regions; i++)
		if (regions[i].lo < m->addr + m->len && m->addr < regions[i].hi)
			regions[i].hi = regions[i].lo;	/* gone */
	r = &regions[nr_regions++];
	r->lo = m->addr;
	r->hi = m->addr + m->len;
	r->pgoff = m->pgoff;
	r->path = strdup(m->name);
}

static void replay_sample(const struct perf_event_header *h)
{
	const u64 *p = (const u64 *)(h + 1) + 2;	/* past ip, pid/tid */
	struct replay_sample *s;
	u64 regs[REPLAY_NR_REGS], size;
	unsigned int i;

	if (nr_samples == max_samples || !*p++)		/* abi: none */
		return;
	memcpy(regs, p, sizeof(regs));
	p += REPLAY_NR_REGS;
	size = *p++;
	if (!size || p[size / sizeof(u64)] == 0)	/* dyn_size */
		return;
	s = &samples[nr_samples];
	for (i = 0; i < ARRAY_SIZE(dwarf_of_perf); i++)
		s->regs[i] = regs[dwarf_of_perf[i]];
	for (i = 0; i < PR_R15 - PR_R8 + 1; i++)
		s->regs[8 + i] = regs[PR_IP + 1 + i];
	s->regs[16] = regs[PR_IP];
	s->sp = regs[PR_SP];
	s->len = p[size / sizeof(u64)];
	s->stack = malloc(s->len);
	if (!s->stack)
		return;
	memcpy(s->stack, p, s->len);
	nr_samples++;
}

/* Read the records the kernel wrote into the ring's @data. */
static void replay_drain(struct perf_event_mmap_page *pg, unsigned char *data,
			 unsigned long size)
{
	static unsigned char rec[65536];
	u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	u64 tail = pg->data_tail;

	while (tail < head) {
		/* Records are 8-byte aligned: a header never wraps. */
		const struct perf_event_header *h = (const void *)rec;
		unsigned long off = tail % size, n;

		memcpy(rec, data + off, sizeof(*h));	/* h->size first */
		n = size - off < h->size ? size - off : h->size;
		memcpy(rec, data + off, n);
		memcpy(rec + n, data, h->size - n);
		if (h->type == PERF_RECORD_SAMPLE)
			replay_sample(h);
		else if (h->type == PERF_RECORD_MMAP2)
			replay_mmap(h);
		else if (h->type == PERF_RECORD_LOST)
			lost += ((const u64 *)(h + 1))[1];
		tail += h->size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

/* Run @argv under the sampler until it exits or the samples are taken. */
static int replay_record(char **argv)
{
	unsigned long size = (1UL << REPLAY_RING_ORDER) * getpagesize();
	int go[2], fd, status;
	unsigned char *ring;
	pid_t pid;

	samples = calloc(max_samples, sizeof(*samples));
	if (!samples || pipe(go))
		return -1;
	pid = fork();
	if (!pid) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	fd = replay_open(pid);
	ring = fd < 0 ? MAP_FAILED : mmap(NULL, size + getpagesize(),
					  PROT_READ | PROT_WRITE, MAP_SHARED,
					  fd, 0);
	if (ring == MAP_FAILED) {
		perror("replay-native: perf_event_open");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	if (write(go[1], "g", 1) != 1)
		return -1;
	close(go[1]);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		poll(&pfd, 1, REPLAY_POLL_MS);
		replay_drain((void *)ring, ring + getpagesize(), size);
		if (nr_samples == max_samples)
			kill(pid, SIGKILL);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	replay_drain((void *)ring, ring + getpagesize(), size);
	close(fd);
	return 0;
}

/* ---- the files' rule tables */

/* The link-time address of file offset @off: its PT_LOAD's. */
static int replay_vaddr(const struct elf_file *f, u64 off, u64 *vaddr)
{
	struct elf_view e;
	const u8 *ph;
	u32 i = 0;

	if (elf_view_init(&e, f))
		return -1;
	while ((ph = elf_next_phdr(&e, PT_LOAD, &i))) {
		u64 po = ELF_RD(&e, ph, Elf64_Phdr, p_offset);
		u64 fs = ELF_RD(&e, ph, Elf64_Phdr, p_filesz);

		if (off >= (po & ~0xfffULL) && off < po + fs) {
			*vaddr = off - po + ELF_RD(&e, ph, Elf64_Phdr, p_vaddr);
			return 0;
		}
	}
	return -1;
}

/* @r's table, as the module would hold it for the file. */
static void replay_table(struct replay_region *r)
{
	struct gen_opts o = { .version = SFRAME_VERSION_3,
			      .vaddr = GEN_VADDR_PAST_IMAGE, .in = r->path,
			      .share_rows = true, .sp_word = true };
	struct elf_sframe_loc loc;
	struct elf_file f;
	struct gen_err err;
	u8 *buf = NULL;
	u64 len, vaddr, at;
	int ret;

	if (elf_file_load(r->path, &f))
		return;
	if (replay_vaddr(&f, r->pgoff, &at)) {
		fprintf(stderr, "replay-native: %s: offset %#llx is in no PT_LOAD\n",
			r->path, (unsigned long long)r->pgoff);
		goto free_file;
	}
	r->bias = r->lo - at;
	ret = gen_section(&o, &f, &buf, &len, &vaddr, &err);
	if (ret == -EEXIST && !elf_find_sframe(&f, &loc)) {
		buf = malloc(loc.size);
		if (!buf)
			goto free_file;
		memcpy(buf, loc.data, loc.size);
		len = loc.size;
		vaddr = loc.vaddr;
	} else if (ret) {
		fprintf(stderr, "replay-native: %s\n", err.msg);
		goto free_file;
	}
	r->sec = calloc(1, sizeof(*r->sec));
	if (r->sec && sfu_section_open(r->sec, buf, len, vaddr,
				       sfu_native_abi(),
				       SFU_OPEN_VALIDATE | SFU_OPEN_TABLE)) {
		free(r->sec);
		r->sec = NULL;
	}
	/* The table is the section's own: its bytes are no longer read. */
	free(buf);
free_file:
	elf_file_free(&f);
}

static int replay_region_cmp(const void *a, const void *b)
{
	const struct replay_region *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The tables of the files mapped at the end, in address order. */
static void replay_tables(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < nr_regions; i++)
		if (regions[i].hi > regions[i].lo)
			regions[n++] = regions[i];
	nr_regions = n;
	qsort(regions, nr_regions, sizeof(*regions), replay_region_cmp);
	for (i = 0; i < nr_regions; i++)
		replay_table(&regions[i]);
}

static const struct replay_region *replay_find(unsigned long pc)
{
	unsigned int lo = 0, hi = nr_regions;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (pc < regions[mid].lo)
			hi = mid;
		else if (pc >= regions[mid].hi)
			lo = mid + 1;
		else
			return &regions[mid];
	}
	return NULL;
}

/* ---- the walks */

/* Why the sframe walks ended, and how often; "no region" past the end. */
#define REPLAY_NO_REGION	SFU_STOP_NR
#define REPLAY_NO_TABLE		(SFU_STOP_NR + 1)
#define REPLAY_ENDS		(SFU_STOP_NR + 2)
static unsigned long ends[REPLAY_ENDS];

static void replay_start(struct sfu_ustate *st, struct replay_sample *s)
{
	memset(st, 0, sizeof(*st));
	st->pc = s->regs[16];
	st->sp = s->sp;
	st->fp = s->regs[SFU_ARCH_FP_REG];
	st->exact = true;
	st->regs = (struct pt_regs *)s->regs;
	st->mode = SFU_MEM_KERNEL;
	copy_stack.bytes = s->stack;
	copy_stack.lo = s->sp;
	copy_stack.len = s->len;
}

/* The module's step of @st, by @r's table; outside the window if need be. */
static inline __attribute__((always_inline)) bool
replay_step(struct sfu_ustate *st, const struct replay_region *r,
	    unsigned int nr)
{
	u64 pc = sfu_frame_pc(st) - r->bias;
	const struct sfu_rule *rule;

	rule = st->exact ? sfu_table_find(r->sec, pc) :
			   sfu_table_find_return(r->sec, pc, nr);
	if (!rule)
		return sfu_stop(st, SFU_STOP_NO_RULE);
	if (rule->flags & SFU_RULE_SIGNAL)
		return sfu_stop(st, SFU_STOP_OUTERMOST);
	if (sfu_apply_rule(st, rule, true))
		return true;
	return st->stop == SFU_STOP_OUTSIDE && sfu_apply_rule(st, rule, false);
}

/* Walk @s, @cut frames at most; the frames found, the end in *@end. */
static inline __attribute__((always_inline)) unsigned int
replay_walk(struct replay_sample *s, unsigned int cut, bool fp,
	    unsigned int *end)
{
	const struct replay_region *r = NULL;
	struct sfu_ustate st;
	unsigned int nr = 0;

	replay_start(&st, s);
	*end = SFU_STOP_DEPTH;
	while (nr < cut) {
		if (!r || st.pc - r->lo >= r->hi - r->lo) {
			r = replay_find(st.pc);
			if (!r) {
				*end = REPLAY_NO_REGION;
				break;
			}
		}
		nr++;
		if (fp ? !sfu_frame_record_step(&st, COPY_RECORD) :
		    !r->sec ? !sfu_stop(&st, REPLAY_NO_TABLE) :
		    !replay_step(&st, r, nr)) {
			*end = st.stop;
			break;
		}
	}
	return nr;
}

static inline __attribute__((always_inline)) unsigned long
replay_each(unsigned int cut, bool fp)
{
	unsigned long frames = 0;
	unsigned int i, end;

	for (i = 0; i < nr_samples; i++)
		frames += replay_walk(&samples[i], cut, fp, &end);
	return frames;
}

/* Every sample walked once each way: one function each, @fp constant. */
__attribute__((noinline)) static unsigned long replay_all_fp(unsigned int cut)
{
	return replay_each(cut, true);
}

__attribute__((noinline)) static unsigned long
replay_all_sframe(unsigned int cut)
{
	return replay_each(cut, false);
}

static unsigned long replay_all(unsigned int cut, bool fp)
{
	return fp ? replay_all_fp(cut) : replay_all_sframe(cut);
}

static unsigned long long replay_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static int replay_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median over the batches of the CPU time of one pass, in ns. */
static double replay_time(unsigned int cut, bool fp, unsigned long reps)
{
	double ns[REPLAY_BATCHES];
	unsigned long long t0;
	unsigned long i;
	unsigned int b;

	for (b = 0; b < REPLAY_BATCHES; b++) {
		t0 = replay_cpu_ns();
		for (i = 0; i < reps; i++)
			replay_all(cut, fp);
		ns[b] = (double)(replay_cpu_ns() - t0) / reps;
	}
	qsort(ns, REPLAY_BATCHES, sizeof(*ns), replay_cmp);
	return ns[REPLAY_BATCHES / 2];
}

static const char *replay_end_name(unsigned int end)
{
	static const char * const names[REPLAY_ENDS] = {
		[SFU_STOP_DEPTH] = "cut", [SFU_STOP_OUTERMOST] = "outermost",
		[SFU_STOP_RA] = "ra", [SFU_STOP_CFA] = "cfa",
		[SFU_STOP_FAULT] = "past_copy", [SFU_STOP_CORRUPT] = "corrupt",
		[SFU_STOP_NO_RULE] = "no_rule",
		[SFU_STOP_REGISTER] = "register",
		[SFU_STOP_BUDGET] = "budget",
		[REPLAY_NO_REGION] = "no_file", [REPLAY_NO_TABLE] = "no_table",
	};

	return end < REPLAY_ENDS && names[end] ? names[end] : "?";
}

static void replay_report(unsigned long reps)
{
	static const unsigned int cuts[] = { 8, 32, 127 };
	unsigned int c, i, end;

	for (c = 0; c < ARRAY_SIZE(cuts); c++) {
		unsigned long sf = replay_all(cuts[c], false);
		unsigned long fp = replay_all(cuts[c], true);
		double ts = replay_time(cuts[c], false, reps);
		double tf = replay_time(cuts[c], true, reps);

		printf("cut=%u samples=%u sframe_frames=%lu sframe_ns_frame=%.1f sframe_ns_sample=%.1f fp_frames=%lu fp_ns_frame=%.1f fp_ns_sample=%.1f\n",
		       cuts[c], nr_samples, sf, sf ? ts / sf : 0,
		       ts / nr_samples, fp, fp ? tf / fp : 0,
		       tf / nr_samples);
	}
	for (i = 0; i < nr_samples; i++) {
		replay_walk(&samples[i], REPLAY_MAX_FRAMES, false, &end);
		ends[end]++;
	}
	printf("ends");
	for (i = 0; i < REPLAY_ENDS; i++)
		if (ends[i])
			printf(" %s=%lu", replay_end_name(i), ends[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	unsigned long reps = REPLAY_REPS;
	unsigned int i, tables = 0;
	int opt;

	while ((opt = getopt(argc, argv, "+n:r:")) != -1) {
		if (opt == 'n')
			max_samples = strtoul(optarg, NULL, 0);
		else if (opt == 'r')
			reps = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (optind >= argc || !max_samples || !reps) {
		fprintf(stderr, "usage: replay-native [-n SAMPLES] [-r REPS] -- PROGRAM [ARG...]\n");
		return 2;
	}
	if (replay_record(argv + optind))
		return 1;
	replay_tables();
	for (i = 0; i < nr_regions; i++)
		tables += !!regions[i].sec;
	printf("program=%s samples=%u lost=%lu files=%u tables=%u\n",
	       argv[optind], nr_samples, lost, nr_regions, tables);
	if (!nr_samples || !tables) {
		fprintf(stderr, "replay-native: nothing to replay\n");
		return 1;
	}
	replay_report(reps);
	return 0;
}
