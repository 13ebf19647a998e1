// SPDX-License-Identifier: GPL-2.0
/*
 * The decoder built into the module agrees with the same decoder built as
 * a user program.
 *
 * For each section (the reference sections of every version for this
 * machine's ABI, sorted and unsorted, and the .sframe of every program in
 * /corpus), load it into the module through debugfs, ask the module for
 * the rule at every address of every function and just outside them, and
 * compare each answer line with the user-space decoder's.
 */
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sframe/decode.h>

#include "kselftest.h"
#include "sframe_test_sections.h"
#include "elf-sframe.h"

#define DBG_DIR		"/sys/kernel/debug/sframe_unwind"
#define CORPUS_DIR	"/corpus"
#define BATCH		512
#define LINE_MAX_LEN	(SFU_RULE_STR_MAX + 64)
#define MAX_SECTIONS	32
#define PATH_LEN	512
#define SMALL_FUNC	4096
#define SAMPLE_STRIDE	97

struct agree {
	struct sfu_section sec;
	const char *name;
	u64 pcs[BATCH];
	unsigned int nr;
	unsigned long checked;
	unsigned long mismatches;
};

static int write_file(const char *name, const void *buf, size_t len)
{
	char path[256];
	ssize_t done;
	int fd;

	snprintf(path, sizeof(path), DBG_DIR "/%s", name);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	done = write(fd, buf, len);
	close(fd);
	return done == (ssize_t)len ? 0 : -1;
}

static int load_section(const u8 *buf, size_t len, u64 vaddr)
{
	char num[32];

	snprintf(num, sizeof(num), "0x%" PRIx64, vaddr);
	if (write_file("vaddr", num, strlen(num)))
		return -1;
	snprintf(num, sizeof(num), "%u", sfu_native_abi());
	if (write_file("abi", num, strlen(num)))
		return -1;
	return write_file("section", buf, len);
}

/* The user-space decoder's answer, in the module's line format. */
static void local_line(struct agree *a, u64 pc, char *out, size_t len)
{
	char rule_str[SFU_RULE_STR_MAX];
	struct sfu_rule rule;
	int ret;

	ret = sfu_find_rule(&a->sec, pc, &rule);
	if (ret) {
		snprintf(out, len, "0x%" PRIx64 ": error: %s", pc,
			 sfu_strerror(ret));
		return;
	}
	sfu_rule_format(&rule, a->sec.elems[0].abi, rule_str,
			sizeof(rule_str));
	snprintf(out, len, "0x%" PRIx64 ": %s", pc, rule_str);
}

static int flush(struct agree *a)
{
	static char req[BATCH * 24], resp[BATCH * LINE_MAX_LEN];
	char want[LINE_MAX_LEN], *line, *save;
	size_t off = 0;
	ssize_t got;
	unsigned int i;
	int fd;

	if (!a->nr)
		return 0;
	for (i = 0; i < a->nr; i++)
		off += snprintf(req + off, sizeof(req) - off, "0x%" PRIx64 " ",
				a->pcs[i]);
	fd = open(DBG_DIR "/decode", O_RDWR);
	if (fd < 0 || write(fd, req, off) != (ssize_t)off) {
		ksft_print_msg("%s: decode request failed\n", a->name);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	got = pread(fd, resp, sizeof(resp) - 1, 0);
	close(fd);
	if (got < 0)
		return -1;
	resp[got] = '\0';
	line = strtok_r(resp, "\n", &save);
	for (i = 0; i < a->nr; i++, line = strtok_r(NULL, "\n", &save)) {
		local_line(a, a->pcs[i], want, sizeof(want));
		a->checked++;
		if (line && !strcmp(line, want))
			continue;
		if (a->mismatches++ < 5)
			ksft_print_msg("%s: kernel \"%s\" user \"%s\"\n",
				       a->name, line ? line : "(none)", want);
	}
	a->nr = 0;
	return 0;
}

static int query(struct agree *a, u64 pc)
{
	a->pcs[a->nr++] = pc;
	return a->nr == BATCH ? flush(a) : 0;
}

/* Around every row boundary of a function: the row and its neighbours. */
static int query_rows(struct agree *a, const struct sfu_fde *fde)
{
	struct sfu_fre_iter it;
	struct sfu_fre fre;

	sfu_fre_iter_init(fde, &it);
	while (!sfu_fre_next(&a->sec, fde, &it, &fre)) {
		if (query(a, fde->start + fre.start - 1) ||
		    query(a, fde->start + fre.start) ||
		    query(a, fde->start + fre.start + 1))
			return -1;
	}
	return 0;
}

/*
 * Every address of every function, and the address after each; functions
 * larger than SMALL_FUNC are sampled with a stride plus every row boundary,
 * which keeps the test quick under emulation.
 */
static int query_all(struct agree *a)
{
	struct sfu_fde fde;
	u64 pc, step;
	u32 e, i;

	for (e = 0; e < a->sec.nr_elems; e++) {
		for (i = 0; i < a->sec.elems[e].num_fdes; i++) {
			if (sfu_read_fde(&a->sec, &a->sec.elems[e], i, &fde))
				return -1;
			step = fde.size > SMALL_FUNC ? SAMPLE_STRIDE : 1;
			for (pc = fde.start; pc < fde.start + fde.size;
			     pc += step)
				if (query(a, pc))
					return -1;
			if (query(a, fde.start + fde.size) ||
			    (step > 1 && query_rows(a, &fde)))
				return -1;
		}
	}
	if (query(a, a->sec.text_lo - 1))
		return -1;
	return flush(a);
}

static void check_section(const char *name, const u8 *buf, size_t len,
			  u64 vaddr)
{
	struct agree *a = calloc(1, sizeof(*a));

	if (!a)
		ksft_exit_fail_msg("out of memory\n");
	a->name = name;
	if (sfu_section_init(&a->sec, (unsigned long)buf, len, vaddr,
			     SFU_MEM_KERNEL, sfu_native_abi())) {
		ksft_test_result_fail("%s: user decoder refuses it\n", name);
		free(a);
		return;
	}
	if (load_section(buf, len, vaddr) || query_all(a))
		ksft_test_result_fail("%s: debugfs I/O failed\n", name);
	else
		ksft_test_result(!a->mismatches && a->checked,
				 "%s: %lu addresses, %lu mismatches\n", name,
				 a->checked, a->mismatches);
	sfu_section_destroy(&a->sec);
	free(a);
}

static void check_reference(void)
{
	static u8 buf[SFU_TEST_BUF_SIZE];
	char name[64];
	unsigned int v, sorted;
	s64 len;

	for (v = SFRAME_VERSION_1; v <= SFRAME_VERSION_3; v++) {
		for (sorted = 0; sorted < 2; sorted++) {
			len = sfu_test_std_section(v, sfu_native_abi(), sorted,
						   buf, sizeof(buf),
						   SFU_TEST_VADDR);
			snprintf(name, sizeof(name), "reference v%u %s", v,
				 sorted ? "sorted" : "unsorted");
			check_section(name, buf, len, SFU_TEST_VADDR);
		}
	}
}

static unsigned int list_corpus(char names[][PATH_LEN])
{
	struct dirent *de;
	unsigned int n = 0;
	DIR *d = opendir(CORPUS_DIR);

	while (d && (de = readdir(d)) && n < MAX_SECTIONS)
		if (de->d_name[0] != '.')
			snprintf(names[n++], PATH_LEN, CORPUS_DIR "/%.256s",
				 de->d_name);
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	static char names[MAX_SECTIONS][PATH_LEN];
	unsigned int nr = list_corpus(names), i;
	struct elf_sframe_loc loc;
	struct elf_file f;

	ksft_print_header();
	if (access(DBG_DIR "/decode", W_OK))
		ksft_exit_skip("module not loaded or debugfs missing\n");
	ksft_set_plan(6 + nr);
	check_reference();
	for (i = 0; i < nr; i++) {
		if (elf_file_load(names[i], &f) || elf_find_sframe(&f, &loc)) {
			ksft_test_result_fail("%s: no SFrame section\n",
					      names[i]);
			continue;
		}
		check_section(names[i], loc.data, loc.size, loc.vaddr);
		elf_file_free(&f);
	}
	ksft_finished();
}
