// SPDX-License-Identifier: GPL-2.0
/*
 * The registration ioctls of /dev/sframe_unwind, for code that is not in
 * an ELF file (JITs) and for files without a section of their own.
 *
 * An executable anonymous region gets SFrame sections built in memory with
 * the project's encoder.  A registration must show up in QUERY and in the
 * debugfs sections listing exactly as made, the lookup file must answer
 * for its addresses as the user-space decoder does, a child must inherit
 * it, and REPLACE must grow (with unsorted FDEs), shrink and DEL drop it.
 * Then every refusal the interface documents, each with its errno.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sframe_unwind.h>
#include <sframe/decode.h>

#include "kselftest.h"
#include "registry/enc.h"
#include "registry/registry.h"

#define NR_PAGES	4
#define SECTION_CAP	4096
#define MAX_ENTRIES	64
#define NOBODY		65534
#define BAD_FLAG	(1U << 31)
#define HUGE_COUNT	0x7fffffffu
#define SMALL_SECTION	64
#define EXTRA_SECTIONS	2
#define FILL_MAX	256
#define SLOT_CAP	128
/* sec_a, sec_b, sec_c, scratch and FILL_MAX + 1 slots, with room to spare */
#define SEC_PAGES	16
#define PARAM_LEN	32
#define BAD_BUILD_ID	0x5a
#define KERNEL_START	0xfffffffffffff000ull
#define KERNEL_END	0xffffffffffffff00ull
#define CHILD_ERR	99

struct jit_func {
	u64 off;		/* from the start of the text region */
	u32 size;
};

/* Registration A: two functions on the first page. */
static const struct jit_func funcs_a[] = {
	{ 0x000, 0x40 },
	{ 0x040, 0x80 },
};

/* Grown: four functions over three pages, in no particular order. */
static const struct {
	unsigned int page;
	u64 off;
	u32 size;
} funcs_b[] = {
	{ 2, 0x000, 0x200 },
	{ 0, 0x000, 0x40 },
	{ 1, 0x100, 0x100 },
	{ 0, 0x040, 0x80 },
};

static int dev = -1;
static long page;
static u8 abi;

/*
 * The text region and, right after it, the sections: V2 stores function
 * starts as 32-bit offsets from the section, so the two must be close.
 */
static u8 *text;
static u8 *sec_a, *sec_b, *sec_c, *scratch, *slots;

static int ioc(unsigned long cmd, void *arg)
{
	return ioctl(dev, cmd, arg) ? errno : 0;
}

static void region(struct sframe_unwind_region *r, u64 start, u64 end,
		   const u8 *buf, s64 len)
{
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->text_start = start;
	r->text_end = end;
	r->sframe_start = (unsigned long)buf;
	r->sframe_len = len;
}

/* DEL of the JIT registration at @start, with only the fields DEL uses. */
static int del(u64 start, s32 pid)
{
	struct sframe_unwind_region r = {
		.size = sizeof(r),
		.pid = pid,
		.text_start = start,
	};

	return ioc(SFRAME_UNWIND_IOC_DEL, &r);
}

static u64 text_at(unsigned int pg, u64 off)
{
	return (unsigned long)text + pg * page + off;
}

/* Section for the functions of registration A, stored at @buf. */
static s64 build_a(u8 *buf)
{
	struct sfu_test_func f[ARRAY_SIZE(funcs_a)];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(funcs_a); i++) {
		f[i].start = text_at(0, funcs_a[i].off);
		f[i].size = funcs_a[i].size;
	}
	return enc_test_build(SFRAME_VERSION_2, abi, true, f, i,
			      (unsigned long)buf, buf, SECTION_CAP);
}

/* One function at @start, of @size bytes, in the native or another ABI. */
static s64 build_one(u8 *buf, size_t cap, u64 start, u32 size, u8 with_abi)
{
	struct sfu_test_func f = { start, size };

	return enc_test_build(SFRAME_VERSION_2, with_abi, true, &f, 1,
			      (unsigned long)buf, buf, cap);
}

static int query(pid_t pid, struct sframe_unwind_entry *e, u32 room,
		 u32 *count)
{
	struct sframe_unwind_query q = {
		.size = sizeof(q),
		.pid = pid,
		.count = room,
		.entries = (unsigned long)e,
	};
	int ret = ioc(SFRAME_UNWIND_IOC_QUERY, &q);

	*count = q.count;
	return ret;
}

/* The JIT entry of the caller that starts at @start, copied to @out. */
static int find_jit(u64 start, struct sframe_unwind_entry *out)
{
	struct sframe_unwind_entry e[MAX_ENTRIES];
	u32 n, i;

	if (query(0, e, MAX_ENTRIES, &n))
		return -1;
	for (i = 0; i < n && i < MAX_ENTRIES; i++) {
		if (e[i].source == SFRAME_UNWIND_SRC_JIT &&
		    e[i].text_start == start) {
			*out = e[i];
			return 0;
		}
	}
	return -1;
}

static u32 nr_registered(void)
{
	u32 n = 0;

	return query(0, NULL, 0, &n) ? UINT_MAX : n;
}

/* QUERY reports exactly what registration @r made. */
static bool entry_matches(const struct sframe_unwind_region *r, u32 nr_fdes,
			  u8 version)
{
	struct sframe_unwind_entry e;

	if (find_jit(r->text_start, &e))
		return false;
	if (e.text_end != r->text_end || e.sframe_start != r->sframe_start ||
	    e.sframe_len != r->sframe_len || e.nr_fdes != nr_fdes ||
	    e.version != version || e.abi != abi || e.dev || e.ino) {
		ksft_print_msg("QUERY: 0x%llx-0x%llx sframe 0x%llx+0x%llx fdes %u v%u abi %u dev %llu ino %llu\n",
			       (unsigned long long)e.text_start,
			       (unsigned long long)e.text_end,
			       (unsigned long long)e.sframe_start,
			       (unsigned long long)e.sframe_len, e.nr_fdes,
			       e.version, e.abi, (unsigned long long)e.dev,
			       (unsigned long long)e.ino);
		return false;
	}
	return true;
}

/* The sections listing has the very line registration @r should give. */
static bool listing_matches(const struct sframe_unwind_region *r,
			    u32 nr_fdes, u8 version)
{
	char *buf = malloc(SFU_LISTING_MAX), want[SFU_LINE_MAX], head[64];
	u32 n = nr_registered();
	size_t head_len;
	char *eol;
	bool ok;

	if (!buf)
		return false;
	snprintf(want, sizeof(want),
		 "  0x%llx-0x%llx jit v%u %s fdes=%u sframe=0x%llx+0x%llx [jit]\n",
		 (unsigned long long)r->text_start,
		 (unsigned long long)r->text_end, version,
		 sfu_abi_info(abi)->name, nr_fdes,
		 (unsigned long long)r->sframe_start,
		 (unsigned long long)r->sframe_len);
	head_len = snprintf(head, sizeof(head), " sections=%u", n);
	ok = reg_listing(getpid(), buf, SFU_LISTING_MAX) == (int)n &&
	     strstr(buf, want);
	/* The header is the first line and ends with the count. */
	eol = strchr(buf, '\n');
	ok = ok && eol && eol - buf >= (long)head_len &&
	     !strncmp(eol - head_len, head, head_len);
	if (!ok)
		ksft_print_msg("want the line \"%.*s\" and a header ending \"%s\"; listing:\n%s",
			       (int)strlen(want) - 1, want, head, buf);
	free(buf);
	return ok;
}

static bool jit_listed(void)
{
	return reg_listed(getpid(), "[jit]") > 0;
}

/* The kernel's answers for @pcs equal the user-space decoder's. */
static bool lookups_agree(const u8 *sec, s64 len, const u64 *pcs,
			  unsigned int nr, bool want_rule)
{
	char got[SFU_LINE_MAX], want[SFU_LINE_MAX];
	bool ok = true;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (reg_lookup_one(pcs[i], got, sizeof(got))) {
			ksft_print_msg("lookup 0x%" PRIx64 ": %s\n", pcs[i],
				       strerror(errno));
			return false;
		}
		enc_test_line(sec, len, (unsigned long)sec, pcs[i], want,
			      sizeof(want));
		if (want_rule ? !strcmp(got, want) && strstr(got, ": cfa=") :
				!!strstr(got, ": error: "))
			continue;
		ksft_print_msg("kernel \"%s\", user \"%s\"\n", got, want);
		ok = false;
	}
	return ok;
}

static void test_register(void)
{
	struct sframe_unwind_region r;
	u64 pcs[] = {
		text_at(0, funcs_a[0].off),
		text_at(0, funcs_a[0].off + SFU_TEST_ROW2),
		text_at(0, funcs_a[1].off),
		text_at(0, funcs_a[1].off + SFU_TEST_ROW2 + 1),
	};
	u64 gap = text_at(0, funcs_a[1].off + funcs_a[1].size);
	u32 before = nr_registered();
	s64 len = build_a(sec_a);
	int ret, status;
	pid_t child;

	region(&r, text_at(0, 0), text_at(1, 0), sec_a, len);
	ret = ioc(SFRAME_UNWIND_IOC_ADD, &r);
	ksft_test_result(!ret, "ADD a sorted V2 section of 2 functions: %s\n",
			 reg_err_name(ret));
	ksft_test_result(nr_registered() == before + 1 &&
			 entry_matches(&r, ARRAY_SIZE(funcs_a),
				       SFRAME_VERSION_2),
			 "QUERY reports it as registered\n");
	ksft_test_result(listing_matches(&r, ARRAY_SIZE(funcs_a),
					 SFRAME_VERSION_2),
			 "the sections listing shows it as jit\n");
	ksft_test_result(lookups_agree(sec_a, len, pcs, ARRAY_SIZE(pcs), true),
			 "lookups in its functions agree with the user-space decoder\n");
	ksft_test_result(lookups_agree(sec_a, len, &gap, 1, false),
			 "lookup between its functions: error\n");

	fflush(stdout);
	child = fork();
	if (child == 0)
		_exit(entry_matches(&r, ARRAY_SIZE(funcs_a),
				    SFRAME_VERSION_2) ? 0 : 1);
	ksft_test_result(child > 0 && waitpid(child, &status, 0) == child &&
			 WIFEXITED(status) && !WEXITSTATUS(status),
			 "a forked child inherits the registration\n");
}

static void test_replace(void)
{
	struct sfu_test_func f[ARRAY_SIZE(funcs_b)];
	struct sframe_unwind_entry e;
	struct sframe_unwind_region r;
	u64 pcs[ARRAY_SIZE(funcs_b)], dropped;
	s64 len;
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(funcs_b); i++) {
		f[i].start = text_at(funcs_b[i].page, funcs_b[i].off);
		f[i].size = funcs_b[i].size;
		pcs[i] = f[i].start + SFU_TEST_ROW2;
	}
	len = enc_test_build(SFRAME_VERSION_3, abi, false, f, i,
			     (unsigned long)sec_b, sec_b, SECTION_CAP);
	region(&r, text_at(0, 0), text_at(3, 0), sec_b, len);
	r.flags = SFRAME_UNWIND_REPLACE;
	ret = ioc(SFRAME_UNWIND_IOC_ADD, &r);
	ksft_test_result(!ret, "REPLACE grows it: 4 unsorted V3 functions over 3 pages: %s\n",
			 reg_err_name(ret));
	ksft_test_result(entry_matches(&r, ARRAY_SIZE(funcs_b),
				       SFRAME_VERSION_3) &&
			 listing_matches(&r, ARRAY_SIZE(funcs_b),
					 SFRAME_VERSION_3),
			 "QUERY and the listing show the grown section\n");
	ksft_test_result(lookups_agree(sec_b, len, pcs, ARRAY_SIZE(pcs), true),
			 "lookups in all 4 functions agree with the user-space decoder\n");

	f[0].start = text_at(0, funcs_a[0].off);
	f[0].size = funcs_a[0].size;
	len = enc_test_build(SFRAME_VERSION_2, abi, true, f, 1,
			     (unsigned long)sec_c, sec_c, SECTION_CAP);
	region(&r, text_at(0, 0), text_at(1, 0), sec_c, len);
	r.flags = SFRAME_UNWIND_REPLACE;
	ret = ioc(SFRAME_UNWIND_IOC_ADD, &r);
	ksft_test_result(!ret && entry_matches(&r, 1, SFRAME_VERSION_2) &&
			 listing_matches(&r, 1, SFRAME_VERSION_2),
			 "REPLACE shrinks it to 1 function: %s\n",
			 reg_err_name(ret));
	dropped = text_at(1, 0x100);
	ksft_test_result(lookups_agree(sec_c, len, pcs + 1, 1, true) &&
			 lookups_agree(sec_c, len, &dropped, 1, false),
			 "lookups: the kept function answers, a dropped one gives an error\n");

	ret = del(r.text_start, 0);
	ksft_test_result(!ret, "DEL: %s\n", reg_err_name(ret));
	ksft_test_result(find_jit(r.text_start, &e) &&
			 !jit_listed() &&
			 lookups_agree(sec_c, len, pcs + 1, 1, false),
			 "after DEL: not in QUERY, not listed, lookups give an error\n");
}

/* ADD @r and expect @want; undo an unexpected success. */
static void expect_add(const char *what, struct sframe_unwind_region *r,
		       int want)
{
	int ret = ioc(SFRAME_UNWIND_IOC_ADD, r);

	if (!ret && want)
		del(r->text_start, 0);
	ksft_test_result(ret == want, "ADD %s: %s (want %s)\n", what,
			 reg_err_name(ret), reg_err_name(want));
}

static void test_bad_args(void)
{
	struct {
		struct sframe_unwind_region r;
		u64 extra;
	} big;
	struct sframe_unwind_region r, ok;
	s64 len = build_a(sec_a);
	int ret;

	region(&ok, text_at(0, 0), text_at(1, 0), sec_a, len);

	r = ok;
	r.pid = 1;
	expect_add("for another process (pid 1)", &r, EPERM);
	r = ok;
	r.flags = BAD_FLAG;
	expect_add("with an unknown flag", &r, EINVAL);
	r = ok;
	r.reserved = 1;
	expect_add("with reserved != 0", &r, EINVAL);
	r = ok;
	r.text_end = r.text_start;
	expect_add("with an empty text range", &r, EINVAL);
	r = ok;
	r.text_start = ok.text_end;
	r.text_end = ok.text_start;
	expect_add("with text_start > text_end", &r, EINVAL);
	r = ok;
	r.sframe_len = 0;
	expect_add("with sframe_len 0", &r, EINVAL);
	r = ok;
	r.text_start = KERNEL_START;
	r.text_end = KERNEL_END;
	expect_add("for a text range outside user space", &r, EINVAL);
	r = ok;
	r.sframe_start = KERNEL_START;
	expect_add("with the section outside user space", &r, EINVAL);
	r = ok;
	r.size = 0;
	expect_add("with size 0", &r, EINVAL);
	r = ok;
	r.size = offsetof(struct sframe_unwind_region, sframe_len);
	expect_add("with a size that leaves out sframe_len", &r, EINVAL);

	big.r = ok;
	big.r.size = sizeof(big);
	big.extra = 1;
	expect_add("with a larger size and a nonzero unknown field", &big.r,
		   E2BIG);
	big.extra = 0;
	ret = ioc(SFRAME_UNWIND_IOC_ADD, &big.r);
	ksft_test_result(!ret && !del(ok.text_start, 0),
			 "ADD with a larger size and zero unknown fields: %s\n",
			 reg_err_name(ret));

	r = ok;
	r.flags = SFRAME_UNWIND_REPLACE;
	expect_add("REPLACE with no registration at text_start", &r, ENOENT);
	ret = del(ok.text_start, 0);
	ksft_test_result(ret == ENOENT, "DEL with no registration: %s (want ENOENT)\n",
			 reg_err_name(ret));
}

static void test_overlap(void)
{
	struct sframe_unwind_entry e[MAX_ENTRIES];
	struct sfu_test_func f;
	struct sframe_unwind_region r, a;
	unsigned long self = (unsigned long)ioc;
	s64 len = build_a(sec_a);
	u32 n, i;
	int ret;

	region(&a, text_at(0, 0), text_at(1, 0), sec_a, len);
	ret = ioc(SFRAME_UNWIND_IOC_ADD, &a);
	ksft_test_result(!ret, "ADD registration A again: %s\n", reg_err_name(ret));

	r = a;
	expect_add("of the same range again", &r, EEXIST);
	/* Each with a valid section for a function inside its range. */
	len = build_one(scratch, SECTION_CAP, text_at(1, 0), 0x10, abi);
	region(&r, text_at(0, funcs_a[1].off), text_at(1, funcs_a[1].off),
	       scratch, len);
	expect_add("of a range overlapping A's end", &r, EEXIST);
	len = build_one(scratch, SECTION_CAP, text_at(0, funcs_a[1].off),
			funcs_a[1].size, abi);
	region(&r, text_at(0, funcs_a[1].off),
	       text_at(0, funcs_a[1].off + funcs_a[1].size), scratch, len);
	expect_add("of a range inside A", &r, EEXIST);

	ret = del(a.text_start, 1);
	ksft_test_result(ret == EPERM, "DEL for another process (pid 1): %s (want EPERM)\n",
			 reg_err_name(ret));
	ret = del(a.text_start, 0);
	ksft_test_result(!ret, "DEL A: %s\n", reg_err_name(ret));

	/* The program's own text, registered from its PT_GNU_SFRAME. */
	if (query(0, e, MAX_ENTRIES, &n))
		n = 0;
	for (i = 0; i < n && i < MAX_ENTRIES; i++)
		if (e[i].source == SFRAME_UNWIND_SRC_ELF &&
		    e[i].text_start <= self && self < e[i].text_end)
			break;
	if (i == n || i == MAX_ENTRIES) {
		ksft_test_result_skip("ADD over the program's own ELF text: no ELF registration covers this program\n");
		return;
	}
	/* V3: the section is too far from the program for V2's offsets. */
	f.start = self;
	f.size = 0x10;
	len = enc_test_build(SFRAME_VERSION_3, abi, true, &f, 1,
			     (unsigned long)scratch, scratch, SECTION_CAP);
	region(&r, self, self + f.size, scratch, len);
	expect_add("over the program's own ELF text", &r, EEXIST);
}

/* This static program's own PT_GNU_SFRAME, if it has one, is registered. */
static void test_own_elf(void)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	unsigned long nr = getauxval(AT_PHNUM), i;
	struct sframe_unwind_entry e[MAX_ENTRIES];
	unsigned long self = (unsigned long)ioc;
	u32 n;

	for (i = 0; ph && i < nr; i++)
		if (ph[i].p_type == SFRAME_PT_GNU_SFRAME)
			break;
	if (!ph || i == nr) {
		ksft_test_result_skip("own PT_GNU_SFRAME registered: the program has none\n");
		return;
	}
	if (query(0, e, MAX_ENTRIES, &n))
		n = 0;
	for (i = 0; i < n && i < MAX_ENTRIES; i++)
		if (e[i].source == SFRAME_UNWIND_SRC_ELF &&
		    e[i].text_start <= self && self < e[i].text_end &&
		    e[i].abi == abi)
			break;
	ksft_test_result(i < n && i < MAX_ENTRIES,
			 "the static program's own PT_GNU_SFRAME is registered (source elf)\n");
}

static void test_bad_sections(void)
{
	struct sframe_unwind_region r;
	u8 foreign = abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE ?
		     SFRAME_ABI_AARCH64_ENDIAN_LITTLE :
		     SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	u64 start = text_at(0, 0);
	bool big = sfu_abi_info(abi)->big_endian;
	s64 len;
	void *gone;

	len = build_one(scratch, SECTION_CAP, start, 0x10, abi);
	scratch[0] ^= 0xff;
	region(&r, start, text_at(1, 0), scratch, len);
	expect_add("of a section with a bad magic", &r, ENOEXEC);

	len = build_one(scratch, SECTION_CAP, start, 0x10, abi);
	/* sfh_num_fdes in the section's byte order */
	scratch[offsetof(struct sframe_header, sfh_num_fdes) + (big ? 0 : 3)] =
		HUGE_COUNT >> 24;
	region(&r, start, text_at(1, 0), scratch, len);
	expect_add("of a section with a huge FDE count", &r, EBADMSG);

	len = build_one(scratch, SECTION_CAP, start, 0x10, abi);
	region(&r, start, text_at(1, 0), scratch, len - 1);
	expect_add("of a truncated section", &r, EBADMSG);

	len = build_one(scratch, SECTION_CAP, start, 0x10, foreign);
	region(&r, start, text_at(1, 0), scratch, len);
	expect_add("of a section for another ABI", &r, EOPNOTSUPP);

	gone = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone == MAP_FAILED || munmap(gone, page))
		ksft_exit_fail_perror("mmap");
	len = build_one(scratch, SECTION_CAP, start, 0x10, abi);
	region(&r, start, text_at(1, 0), gone, len);
	expect_add("of a section in unmapped memory", &r, EFAULT);
}

static int param_read(const char *name, char *val)
{
	char path[128];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), SFU_PARAM_DIR "/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	got = read(fd, val, PARAM_LEN - 1);
	close(fd);
	if (got <= 0)
		return -1;
	val[got] = '\0';
	val[strcspn(val, "\n")] = '\0';
	return 0;
}

static int param_write(const char *name, const char *val)
{
	char path[128];
	ssize_t done;
	int fd;

	snprintf(path, sizeof(path), SFU_PARAM_DIR "/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	done = write(fd, val, strlen(val));
	close(fd);
	return done == (ssize_t)strlen(val) ? 0 : -1;
}

static void test_limits(void)
{
	char saved[PARAM_LEN], val[PARAM_LEN];
	struct sframe_unwind_region r[FILL_MAX + 1];
	u32 have = nr_registered(), room, i;
	u64 slot = page / (FILL_MAX + 1);
	s64 len = build_a(sec_a);
	int ret = 0;
	u8 *b;

	/* max_section_bytes: registration A is larger than SMALL_SECTION. */
	region(&r[0], text_at(0, 0), text_at(1, 0), sec_a, len);
	snprintf(val, sizeof(val), "%u", SMALL_SECTION);
	if (len > SMALL_SECTION && !param_read("max_section_bytes", saved) &&
	    !param_write("max_section_bytes", val)) {
		expect_add("of a section larger than max_section_bytes",
			   &r[0], EFBIG);
		param_write("max_section_bytes", saved);
	} else {
		ksft_test_result_skip("EFBIG: max_section_bytes cannot be lowered\n");
	}

	/* max_sections: fill up to the limit, one more is refused. */
	if (param_read("max_sections", saved)) {
		ksft_test_result_skip("ENOSPC: no max_sections parameter\n");
		return;
	}
	snprintf(val, sizeof(val), "%u", have + EXTRA_SECTIONS);
	room = EXTRA_SECTIONS;
	if (param_write("max_sections", val)) {
		room = strtoul(saved, NULL, 0);
		if (room < have || room - have > FILL_MAX) {
			ksft_test_result_skip("ENOSPC: max_sections (%s) is read-only and too large to fill\n",
					      saved);
			return;
		}
		room -= have;
		saved[0] = '\0';
	}
	/* Small functions side by side on page 2, a section for each. */
	for (i = 0; i <= room; i++) {
		b = slots + i * SLOT_CAP;
		len = build_one(b, SLOT_CAP, text_at(2, i * slot), slot, abi);
		region(&r[i], text_at(2, i * slot), text_at(2, (i + 1) * slot),
		       b, len);
		ret = ioc(SFRAME_UNWIND_IOC_ADD, &r[i]);
		if (ret)
			break;
	}
	ksft_test_result(i == room && ret == ENOSPC,
			 "ADD beyond max_sections: %s after %u more (want ENOSPC after %u)\n",
			 reg_err_name(ret), i, room);
	while (i--)
		del(r[i].text_start, 0);
	if (saved[0])
		param_write("max_sections", saved);
}

/*
 * max_total_bytes bounds every registry together: with a limit of one
 * byte (memory_bytes falls as RCU frees what earlier tests dropped, so
 * a limit near it is no fixed target), an ADD is refused with EDQUOT and
 * counted; with the limit back, it succeeds.
 */
static void test_global_limit(void)
{
	unsigned long long used, refused0, refused1;
	char saved[PARAM_LEN], val[PARAM_LEN];
	struct sframe_unwind_region r;
	s64 len = build_a(sec_a);
	int ret;

	region(&r, text_at(0, 0), text_at(1, 0), sec_a, len);
	if (param_read("max_total_bytes", saved) ||
	    reg_stat("memory_bytes", &used) ||
	    reg_stat("refused_global_limit", &refused0)) {
		ksft_test_result_fail("EDQUOT: no max_total_bytes parameter or counter\n");
		return;
	}
	snprintf(val, sizeof(val), "%d", 1);
	if (param_write("max_total_bytes", val)) {
		ksft_test_result_fail("EDQUOT: max_total_bytes cannot be set\n");
		return;
	}
	ret = ioc(SFRAME_UNWIND_IOC_ADD, &r);
	param_write("max_total_bytes", saved);
	reg_stat("refused_global_limit", &refused1);
	ksft_print_msg("memory_bytes %llu, max_total_bytes set to %s, then %s\n",
		       used, val, saved);
	ksft_test_result(ret == EDQUOT && refused1 > refused0,
			 "ADD over max_total_bytes: %s (want EDQUOT), refused_global_limit %llu -> %llu\n",
			 reg_err_name(ret), refused0, refused1);
	ret = ioc(SFRAME_UNWIND_IOC_ADD, &r);
	ksft_test_result(!ret, "the same ADD with the limit back: %s\n",
			 reg_err_name(ret));
	if (!ret)
		del(r.text_start, 0);
}

static void test_files(void)
{
	struct sframe_unwind_file f = { .size = sizeof(f) };
	struct sframe_unwind_file base;
	int exe = open("/proc/self/exe", O_RDONLY);
	int list = open("/selftests/list", O_RDONLY);
	s64 len = build_one(scratch, SECTION_CAP, 0x1000, 0x10, abi);
	int ret;

	f.fd = exe;
	f.sframe_vaddr = 0x10000;
	f.sframe_ptr = (unsigned long)scratch;
	f.sframe_len = len;
	base = f;

	f.fd = -1;
	ret = ioc(SFRAME_UNWIND_IOC_ADD_FILE, &f);
	ksft_test_result(ret == EBADF, "ADD_FILE with a bad fd: %s (want EBADF)\n",
			 reg_err_name(ret));
	f = base;
	f.fd = list;
	ret = ioc(SFRAME_UNWIND_IOC_ADD_FILE, &f);
	ksft_test_result(ret == ENOEXEC, "ADD_FILE of a text file: %s (want ENOEXEC)\n",
			 reg_err_name(ret));
	f = base;
	f.build_id_len = SFRAME_UNWIND_BUILD_ID_MAX + 1;
	ret = ioc(SFRAME_UNWIND_IOC_ADD_FILE, &f);
	ksft_test_result(ret == EINVAL, "ADD_FILE with build_id_len 21: %s (want EINVAL)\n",
			 reg_err_name(ret));
	f = base;
	f.flags = BAD_FLAG;
	ret = ioc(SFRAME_UNWIND_IOC_ADD_FILE, &f);
	ksft_test_result(ret == EINVAL, "ADD_FILE with flags: %s (want EINVAL)\n",
			 reg_err_name(ret));
	f = base;
	f.reserved = 1;
	ret = ioc(SFRAME_UNWIND_IOC_ADD_FILE, &f);
	ksft_test_result(ret == EINVAL, "ADD_FILE with reserved != 0: %s (want EINVAL)\n",
			 reg_err_name(ret));
	f = base;
	f.build_id_len = SFRAME_UNWIND_BUILD_ID_MAX;
	memset(f.build_id, BAD_BUILD_ID, sizeof(f.build_id));
	ret = ioc(SFRAME_UNWIND_IOC_ADD_FILE, &f);
	ksft_test_result(ret == ESTALE, "ADD_FILE with a build-id not the file's: %s (want ESTALE)\n",
			 reg_err_name(ret));
	f = base;
	ret = ioc(SFRAME_UNWIND_IOC_DEL_FILE, &f);
	ksft_test_result(ret == ENOENT, "DEL_FILE with no registration: %s (want ENOENT)\n",
			 reg_err_name(ret));
	close(exe);
	close(list);
}

/*
 * As nobody: ADD_FILE needs privileges; QUERY of another process needs
 * them too, init's and even one of the same user (a same-user rule would
 * bypass Yama and the LSMs' ptrace checks).
 */
static void test_unprivileged(void)
{
	struct sframe_unwind_file f = { .size = sizeof(f) };
	struct sframe_unwind_query q = { .size = sizeof(q), .pid = 1 };
	int exe = open("/proc/self/exe", O_RDONLY), status = -1;
	s64 len = build_one(scratch, SECTION_CAP, 0x1000, 0x10, abi);
	pid_t child;

	f.fd = exe;
	f.sframe_vaddr = 0x10000;
	f.sframe_ptr = (unsigned long)scratch;
	f.sframe_len = len;
	fflush(stdout);
	child = fork();
	if (child == 0) {
		int add, qry, peer_qry;
		pid_t peer;

		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(CHILD_ERR);
		add = ioc(SFRAME_UNWIND_IOC_ADD_FILE, &f);
		qry = ioc(SFRAME_UNWIND_IOC_QUERY, &q);
		peer = fork();
		if (peer == 0) {
			pause();
			_exit(0);
		}
		q.pid = peer;
		peer_qry = peer > 0 ? ioc(SFRAME_UNWIND_IOC_QUERY, &q) : -1;
		if (peer > 0) {
			kill(peer, SIGKILL);
			waitpid(peer, NULL, 0);
		}
		printf("# as uid %d: ADD_FILE %s, QUERY of pid 1 %s, of its own child %s\n",
		       (int)getuid(), reg_err_name(add), reg_err_name(qry),
		       reg_err_name(peer_qry));
		_exit((add == EPERM ? 0 : 1) | (qry == EACCES ? 0 : 2) |
		      (peer_qry == EACCES ? 0 : 4));
	}
	if (child < 0 || waitpid(child, &status, 0) != child ||
	    !WIFEXITED(status) || WEXITSTATUS(status) == CHILD_ERR) {
		ksft_test_result_fail("ADD_FILE as nobody: the child failed\n");
		ksft_test_result_fail("QUERY of init as nobody: the child failed\n");
		ksft_test_result_fail("QUERY of a same-user process as nobody: the child failed\n");
	} else {
		ksft_test_result(!(WEXITSTATUS(status) & 1),
				 "ADD_FILE as nobody: EPERM\n");
		ksft_test_result(!(WEXITSTATUS(status) & 2),
				 "QUERY of init as nobody: EACCES\n");
		ksft_test_result(!(WEXITSTATUS(status) & 4),
				 "QUERY of a same-user process as nobody: EACCES\n");
	}
	close(exe);
}

static void test_query(void)
{
	struct sframe_unwind_entry canary[2];
	struct sframe_unwind_query q = { .size = sizeof(q) };
	u32 n = 0;
	pid_t gone;
	int ret;

	memset(canary, 0xa5, sizeof(canary));
	ret = query(0, canary, 0, &n);
	ksft_test_result(!ret && n == nr_registered() &&
			 ((u8 *)canary)[0] == 0xa5,
			 "QUERY with no room: the count (%u), nothing copied\n",
			 n);
	q.flags = BAD_FLAG;
	ret = ioc(SFRAME_UNWIND_IOC_QUERY, &q);
	ksft_test_result(ret == EINVAL, "QUERY with flags: %s (want EINVAL)\n",
			 reg_err_name(ret));
	gone = fork();
	if (gone == 0)
		_exit(0);
	if (gone < 0 || waitpid(gone, NULL, 0) != gone)
		ksft_exit_fail_perror("fork");
	ret = query(gone, NULL, 0, &n);
	ksft_test_result(ret == ESRCH, "QUERY of an exited process: %s (want ESRCH)\n",
			 reg_err_name(ret));
	ret = query(INT_MAX, NULL, 0, &n);
	ksft_test_result(ret == ESRCH, "QUERY of pid INT_MAX: %s (want ESRCH)\n",
			 reg_err_name(ret));
}

int main(void)
{
	ksft_print_header();
	page = sysconf(_SC_PAGESIZE);
	abi = sfu_native_abi();
	dev = open(SFRAME_UNWIND_DEVICE, O_RDWR);
	if (dev < 0) {
		if (access("/sys/module/sframe_unwind", F_OK))
			ksft_exit_skip("the sframe_unwind module is not loaded\n");
		ksft_exit_fail_msg("open %s: %s\n", SFRAME_UNWIND_DEVICE,
				   strerror(errno));
	}
	if (access(SFU_DBG_SECTIONS, R_OK))
		ksft_exit_fail_msg("%s: %s\n", SFU_DBG_SECTIONS,
				   strerror(errno));
	text = mmap(NULL, (NR_PAGES + SEC_PAGES) * page,
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (text == MAP_FAILED ||
	    mprotect(text, NR_PAGES * page, PROT_READ | PROT_EXEC))
		ksft_exit_fail_perror("mmap");
	sec_a = text + NR_PAGES * page;
	sec_b = sec_a + SECTION_CAP;
	sec_c = sec_b + SECTION_CAP;
	scratch = sec_c + SECTION_CAP;
	slots = scratch + SECTION_CAP;

	test_own_elf();
	test_register();
	test_replace();
	test_bad_args();
	test_overlap();
	test_bad_sections();
	test_limits();
	test_global_limit();
	test_files();
	test_unprivileged();
	test_query();
	ksft_test_result(!jit_listed() && nr_registered() != UINT_MAX,
			 "no JIT registration is left\n");
	ksft_set_plan(ksft_test_num());
	ksft_finished();
}
