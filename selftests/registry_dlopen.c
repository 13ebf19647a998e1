// SPDX-License-Identifier: GPL-2.0
/*
 * Libraries loaded and unloaded at run time: dlopen registers a library's
 * PT_GNU_SFRAME before it returns, dlclose drops it; 100 threads racing
 * dlopen and dlclose of three libraries leave no stale entry and give
 * back every byte; and a sidecar section registered with ADD_FILE for a
 * library without SFrame applies to its later mappings.
 *
 * Usage: registry_dlopen [ITERATIONS]  (per thread; default 200)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/sframe_unwind.h>
#include <sframe/decode.h>
#include <sframe/note.h>

#include "kselftest.h"
#include "registry/enc.h"
#include "registry/registry.h"

#define NR_THREADS	100
#define NR_ITERS	200
#define LOOKUP_EVERY	10	/* every tenth thread also looks up */
#define THREAD_STACK	(256 << 10)
#define SETTLE_TRIES	50
#define SETTLE_US	100000
#define STEADY_READS	5
#define CALL_ARG	1
#define CALL_RESULT	5	/* sfu_lib_call(1) */
#define SECTION_CAP	1024
#define GNU_NOTE_NAME	"GNU"
#define MAX_ENTRIES	32

static const char *const race_libs[] = {
	SFU_LIB("b"), SFU_LIB("c"), SFU_LIB("d"),
};

#define PLAIN_LIB	SFU_LIB("plain")

struct worker {
	pthread_t thread;
	unsigned int id;
	unsigned int iters;
	unsigned long errors;
	unsigned long bad_lookups;
};

static atomic_int stop_reader;

static int listed(const char *path)
{
	return reg_listed(getpid(), path);
}

/* The line listing @path names @source ("elf", "sidecar" or "jit"). */
static bool listed_as(const char *path, const char *source)
{
	char *buf = malloc(SFU_LISTING_MAX), *line, *save = NULL, *last;
	char word[16];
	bool ok = false;

	if (!buf)
		return false;
	snprintf(word, sizeof(word), " %s v", source);
	if (reg_listing(getpid(), buf, SFU_LISTING_MAX) > 0) {
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			last = strrchr(line, ' ');
			if (last && !strcmp(last + 1, path) &&
			    strstr(line, word))
				ok = true;
		}
	}
	free(buf);
	return ok;
}

static int lookup_has_rule(unsigned long pc)
{
	char line[SFU_LINE_MAX];

	return !reg_lookup_one(pc, line, sizeof(line)) &&
	       strstr(line, ": cfa=");
}

static int lookup_is_error(unsigned long pc)
{
	char line[SFU_LINE_MAX];

	return !reg_lookup_one(pc, line, sizeof(line)) &&
	       strstr(line, ": error:");
}

static void *open_lib(const char *path, unsigned long *pc)
{
	unsigned long (*pc_fn)(void);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return NULL;
	pc_fn = (unsigned long (*)(void))dlsym(h, SFU_LIB_PC_SYM);
	*pc = pc_fn ? pc_fn() : 0;
	return h;
}

static void test_one(void)
{
	unsigned long pc = 0;
	void *h = open_lib(race_libs[0], &pc);

	ksft_test_result(h && listed(race_libs[0]) == 1 &&
			 listed_as(race_libs[0], "elf"),
			 "dlopen: %s listed once, as elf\n", race_libs[0]);
	ksft_test_result(h && lookup_has_rule(pc),
			 "dlopen: lookup in the library gives a rule\n");
	if (h)
		dlclose(h);
	ksft_test_result(listed(race_libs[0]) == 0,
			 "dlclose: %s no longer listed\n", race_libs[0]);
	ksft_test_result(pc && lookup_is_error(pc),
			 "dlclose: lookup at its old address gives an error\n");
}

static void *race(void *arg)
{
	long (*call)(long x);
	struct worker *w = arg;
	const char *path;
	unsigned long pc;
	unsigned int i;
	void *h;

	for (i = 0; i < w->iters; i++) {
		path = race_libs[(w->id + i) % ARRAY_SIZE(race_libs)];
		h = open_lib(path, &pc);
		if (!h) {
			w->errors++;
			continue;
		}
		call = (long (*)(long x))dlsym(h, SFU_LIB_CALL_SYM);
		if (!call || call(CALL_ARG) != CALL_RESULT)
			w->errors++;
		/* Mapped while we hold it: it must be registered. */
		if (w->id % LOOKUP_EVERY == 0 && !lookup_has_rule(pc))
			w->bad_lookups++;
		dlclose(h);
	}
	return NULL;
}

/* Reads the listing while the workers change it. */
static void *reader(void *arg)
{
	unsigned long *reads = arg;
	char *buf;

	while (!stop_reader) {
		buf = reg_read_file(SFU_DBG_SECTIONS, NULL);
		if (buf)
			(*reads)++;
		free(buf);
	}
	return NULL;
}

/* Wait for the global stats to return to @sections and @bytes. */
static int settle(unsigned long long sections, unsigned long long bytes,
		  unsigned long long *now_sec, unsigned long long *now_bytes)
{
	int i;

	for (i = 0; i < SETTLE_TRIES; i++) {
		if (reg_stat("sections", now_sec) ||
		    reg_stat("memory_bytes", now_bytes))
			return -1;
		if (*now_sec == sections && *now_bytes == bytes)
			return 0;
		usleep(SETTLE_US);
	}
	return -1;
}

/*
 * The global stats once they have been steady for a while: regions and
 * maps are freed after an RCU grace period, so a reading taken right after
 * a change may still count memory about to be freed.
 */
static void steady_stats(unsigned long long *sections,
			 unsigned long long *bytes)
{
	unsigned long long s, b;
	int i, same = 0;

	if (reg_stat("sections", sections) || reg_stat("memory_bytes", bytes))
		ksft_exit_fail_msg("no sections or memory_bytes in %s\n",
				   SFU_DBG_STATS);
	for (i = 0; i < SETTLE_TRIES && same < STEADY_READS; i++) {
		usleep(SETTLE_US);
		if (reg_stat("sections", &s) || reg_stat("memory_bytes", &b))
			break;
		same = s == *sections && b == *bytes ? same + 1 : 0;
		*sections = s;
		*bytes = b;
	}
}

static void test_race(unsigned int iters, unsigned long long sec0,
		      unsigned long long mem0)
{
	static struct worker w[NR_THREADS];
	unsigned long long sec1 = 0, mem1 = 0, reg0 = 0, reg1 = 0;
	unsigned long errors = 0, bad = 0, reads = 0;
	unsigned int i, started = 0, stale = 0;
	pthread_t rd;
	pthread_attr_t attr;
	int rd_ok;

	reg_stat("registered", &reg0);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	stop_reader = 0;
	rd_ok = !pthread_create(&rd, &attr, reader, &reads);
	for (i = 0; i < NR_THREADS; i++) {
		w[i].id = i;
		w[i].iters = iters;
		if (pthread_create(&w[i].thread, &attr, race, &w[i]))
			break;
		started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(w[i].thread, NULL);
		errors += w[i].errors;
		bad += w[i].bad_lookups;
	}
	stop_reader = 1;
	if (rd_ok)
		pthread_join(rd, NULL);
	pthread_attr_destroy(&attr);
	reg_stat("registered", &reg1);
	ksft_print_msg("%u threads x %u dlopen/dlclose: %llu registrations, %lu listing reads\n",
		       started, iters, reg1 - reg0, reads);
	ksft_test_result(started == NR_THREADS && !errors,
			 "race: %u threads ran, %lu dlopen or call errors\n",
			 started, errors);
	ksft_test_result(!bad,
			 "race: %lu lookups in a loaded library gave no rule\n",
			 bad);
	for (i = 0; i < ARRAY_SIZE(race_libs); i++)
		if (listed(race_libs[i]))
			stale++;
	ksft_test_result(!stale, "race: no stale entry for the libraries\n");
	ksft_test_result(!settle(sec0, mem0, &sec1, &mem1),
			 "race: stats back to their values before any dlopen, sections=%llu memory_bytes=%llu (now %llu, %llu)\n",
			 sec0, mem0, sec1, mem1);
}

/* What one load of the plain library tells about it. */
struct plain_info {
	void *handle;
	unsigned long fn;	/* address of sfu_lib_call() */
	unsigned long fn_size;
	unsigned long base;	/* load bias */
	unsigned long end;	/* highest link-time PT_LOAD end */
	unsigned char build_id[SFRAME_UNWIND_BUILD_ID_MAX];
	unsigned int build_id_len;
};

static int plain_phdrs(struct dl_phdr_info *info, size_t size, void *data)
{
	struct plain_info *pi = data;
	const Elf64_Phdr *ph;
	const u8 *notes;
	unsigned long end;
	int i;

	if (!info->dlpi_name || strcmp(info->dlpi_name, PLAIN_LIB))
		return 0;
	pi->base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD) {
			end = ph->p_vaddr + ph->p_memsz;
			if (end > pi->end)
				pi->end = end;
		} else if (ph->p_type == PT_NOTE && !pi->build_id_len) {
			/* As the module reads it (lib/sframe/note.c). */
			notes = (const u8 *)(info->dlpi_addr + ph->p_vaddr);
			pi->build_id_len = sfu_note_build_id(notes, ph->p_memsz,
							     false, pi->build_id,
							     sizeof(pi->build_id));
		}
	}
	return 1;
}

/* dlopen the plain library and find out where it and its function are. */
static int load_plain(struct plain_info *pi)
{
	Elf64_Sym *sym = NULL;
	Dl_info dli;

	memset(pi, 0, sizeof(*pi));
	pi->handle = dlopen(PLAIN_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!pi->handle) {
		ksft_print_msg("dlopen %s: %s\n", PLAIN_LIB, dlerror());
		return -1;
	}
	pi->fn = (unsigned long)dlsym(pi->handle, SFU_LIB_CALL_SYM);
	if (!pi->fn ||
	    !dladdr1((void *)pi->fn, &dli, (void **)&sym, RTLD_DL_SYMENT) ||
	    !sym || dl_iterate_phdr(plain_phdrs, pi) != 1) {
		ksft_print_msg("%s: cannot find %s\n", PLAIN_LIB,
			       SFU_LIB_CALL_SYM);
		dlclose(pi->handle);
		pi->handle = NULL;
		return -1;
	}
	pi->fn_size = sym->st_size;
	return 0;
}

static void unload_plain(struct plain_info *pi)
{
	if (pi->handle)
		dlclose(pi->handle);
	pi->handle = NULL;
}

/* QUERY has the sidecar entry for the plain library as loaded now. */
static bool sidecar_queried(int dev, const struct plain_info *pi,
			    u64 sframe_vaddr)
{
	struct sframe_unwind_entry e[MAX_ENTRIES];
	struct sframe_unwind_query q = {
		.size = sizeof(q),
		.count = MAX_ENTRIES,
		.entries = (unsigned long)e,
	};
	struct stat st;
	u32 i;

	if (ioctl(dev, SFRAME_UNWIND_IOC_QUERY, &q) || stat(PLAIN_LIB, &st))
		return false;
	for (i = 0; i < q.count && i < MAX_ENTRIES; i++)
		if (e[i].source == SFRAME_UNWIND_SRC_SIDECAR &&
		    e[i].ino == st.st_ino && e[i].dev == st.st_dev &&
		    e[i].nr_fdes == 1 && e[i].text_start <= pi->fn &&
		    pi->fn < e[i].text_end &&
		    e[i].sframe_start == sframe_vaddr + pi->base)
			return true;
	return false;
}

static int file_ioctl(int dev, unsigned long cmd, struct sframe_unwind_file *f)
{
	return ioctl(dev, cmd, f) ? errno : 0;
}

static void test_sidecar(void)
{
	static u8 sec[SECTION_CAP];
	struct sframe_unwind_file f = { .size = sizeof(f) };
	char got[SFU_LINE_MAX], want[SFU_LINE_MAX];
	unsigned long long sec0, mem0, sec1 = 0, mem1 = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct sfu_test_func fn;
	struct plain_info pi;
	int dev, ret;
	s64 len;

	dev = open(SFRAME_UNWIND_DEVICE, O_RDWR);
	if (dev < 0) {
		ksft_test_result_fail("sidecar: open %s: %s\n",
				      SFRAME_UNWIND_DEVICE, strerror(errno));
		return;
	}
	steady_stats(&sec0, &mem0);

	/* Where the function is, and the file's build-id, from one load. */
	if (load_plain(&pi)) {
		ksft_test_result_fail("sidecar: cannot load %s\n", PLAIN_LIB);
		close(dev);
		return;
	}
	ksft_test_result(listed(PLAIN_LIB) == 0,
			 "sidecar: %s has no SFrame of its own, not listed\n",
			 PLAIN_LIB);
	unload_plain(&pi);

	/* A section for sfu_lib_call() at its link-time address. */
	fn.start = pi.fn - pi.base;
	fn.size = pi.fn_size > SFU_TEST_ROW2 ? pi.fn_size : SFU_TEST_ROW2 + 1;
	f.sframe_vaddr = (pi.end + page - 1) & ~(page - 1);
	len = enc_test_build(SFRAME_VERSION_2, sfu_native_abi(), true, &fn, 1,
			     f.sframe_vaddr, sec, sizeof(sec));
	f.fd = open(PLAIN_LIB, O_RDONLY);
	f.sframe_ptr = (unsigned long)sec;
	f.sframe_len = len;
	f.build_id_len = pi.build_id_len;
	memcpy(f.build_id, pi.build_id, pi.build_id_len);
	if (pi.build_id_len) {
		f.build_id[0] ^= 1;
		ret = file_ioctl(dev, SFRAME_UNWIND_IOC_ADD_FILE, &f);
		ksft_test_result(ret == ESTALE,
				 "sidecar: ADD_FILE with a wrong build-id: %s (want ESTALE)\n",
				 reg_err_name(ret));
		f.build_id[0] ^= 1;
	} else {
		ksft_test_result_skip("sidecar: %s has no build-id\n",
				      PLAIN_LIB);
	}
	ret = file_ioctl(dev, SFRAME_UNWIND_IOC_ADD_FILE, &f);
	ksft_test_result(!ret, "sidecar: ADD_FILE with the file's build-id: %s\n",
			 reg_err_name(ret));
	ret = file_ioctl(dev, SFRAME_UNWIND_IOC_ADD_FILE, &f);
	ksft_test_result(ret == EEXIST, "sidecar: ADD_FILE again: %s (want EEXIST)\n",
			 reg_err_name(ret));

	ret = load_plain(&pi);
	ksft_test_result(!ret && listed(PLAIN_LIB) == 1 &&
			 listed_as(PLAIN_LIB, "sidecar"),
			 "sidecar: dlopen again: listed once, as sidecar\n");
	ksft_test_result(!ret && sidecar_queried(dev, &pi, f.sframe_vaddr),
			 "sidecar: QUERY shows it with the file's dev and inode, moved by the load bias\n");
	enc_test_line(sec, len, f.sframe_vaddr + pi.base, pi.fn, want,
		      sizeof(want));
	if (!ret)
		ret = reg_lookup_one(pi.fn, got, sizeof(got));
	ksft_test_result(!ret && !strcmp(got, want) && strstr(got, ": cfa="),
			 "sidecar: lookup agrees with the user-space decoder: \"%s\"\n",
			 ret ? "(failed)" : got);
	if (ret || strcmp(got, want))
		ksft_print_msg("user-space decoder: \"%s\"\n", want);
	unload_plain(&pi);
	ksft_test_result(listed(PLAIN_LIB) == 0,
			 "sidecar: dlclose: no longer listed\n");

	ret = file_ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE, &f);
	ksft_test_result(!ret, "sidecar: DEL_FILE: %s\n", reg_err_name(ret));
	ret = file_ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE, &f);
	ksft_test_result(ret == ENOENT, "sidecar: DEL_FILE again: %s (want ENOENT)\n",
			 reg_err_name(ret));
	ret = load_plain(&pi);
	ksft_test_result(!ret && listed(PLAIN_LIB) == 0,
			 "sidecar: dlopen after DEL_FILE: not listed\n");
	unload_plain(&pi);
	ksft_test_result(!settle(sec0, mem0, &sec1, &mem1),
			 "sidecar: stats back to sections=%llu memory_bytes=%llu (now %llu, %llu)\n",
			 sec0, mem0, sec1, mem1);
	close(f.fd);
	close(dev);
}

int main(int argc, char **argv)
{
	unsigned int iters = argc > 1 ? strtoul(argv[1], NULL, 0) : NR_ITERS;
	unsigned long long sec0, mem0;
	char self[PATH_MAX];
	ssize_t n;

	ksft_print_header();
	if (access(SFU_DBG_SECTIONS, R_OK))
		ksft_exit_skip("no %s: the module is not loaded\n",
			       SFU_DBG_SECTIONS);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	ksft_test_result(listed_as(self, "elf"),
			 "the program itself (%s) is listed as elf\n", self);
	steady_stats(&sec0, &mem0);
	test_one();
	test_race(iters, sec0, mem0);
	test_sidecar();
	ksft_set_plan(ksft_test_num());
	ksft_finished();
}
