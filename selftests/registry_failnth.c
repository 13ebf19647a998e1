// SPDX-License-Identifier: GPL-2.0
/*
 * Every failure path of the registry, by fault injection.
 *
 * The kernel's fail-nth file (CONFIG_FAULT_INJECTION) makes the N-th
 * fault point of the calling thread fail: a slab allocation (failslab,
 * with GFP_KERNEL ones included) or a user copy (fail_usercopy).  With
 * the stack trace filter (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER) only
 * points reached from code in the module area count, so the faults are
 * the module's own.  For each operation below and for N = 1, 2, ... the
 * operation runs in a new process with its N-th fault point failing,
 * until an N that the operation no longer reaches.  Each time the operation must either work
 * or fail with ENOMEM or EFAULT, and the registry must then be what that
 * outcome says (QUERY and LIST_FILES, without injection), and undoing it
 * must leave nothing.  At the end the module's memory and section counts
 * are back where they started, and kmemleak, where the kernel has it,
 * finds nothing of the module's.
 *
 * Operations: ADD of a JIT section into a new registry and into an
 * existing one, DEL, QUERY, ADD_FILE of a sidecar, an executable mapping
 * of a file with a sidecar and of a file with its own PT_GNU_SFRAME (the
 * module's work at the return of mmap() included), fork of a process with
 * a registry, and loading the module itself.
 *
 * Usage: registry_failnth [LIB_WITH_SFRAME [LIB_WITHOUT [KO]]]
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sframe_unwind.h>
#include <sframe/decode.h>

#include "kselftest.h"
#include "registry/enc.h"
#include "registry/registry.h"

/* No operation reaches this many fault points. */
#define MAX_NTH		2000
#define SEC_CAP		4096
#define MAX_ENTRIES	64
#define FUNC_SIZE	0x40
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"
#define FILE_CACHE	"/sys/module/" MOD_NAME "/parameters/file_cache"
#define MOD_NAME	"sframe_unwind"
#define MOD_PARAMS	"test_hooks=1"
/* How a child reports an iteration. */
#define IT_INJECTED	0
#define IT_DONE		1
#define IT_BROKEN	2
/*
 * x86-64's module area (arch/x86/include/asm/pgtable_64_types.h): it
 * starts after the kernel image, 1 GiB with KASLR, 512 MiB without.
 */
#define MODULES_KASLR	0xffffffffc0000000ul
#define MODULES_FIXED	0xffffffffa0000000ul
#define MODULES_TOP	0xfffffffffe000000ul
#define FI_DEPTH	"32"
/* The allocator of executable memory, 6.10 and later. */
#define EXEC_ALLOC	"execmem_alloc"
#define MOD_TEXT	"/sys/module/" MOD_NAME "/sections/.text"
/* kmemleak reports objects older than this. */
#define KMEMLEAK_AGE_S	6
#define SETTLE_TRIES	50
#define SETTLE_US	100000

static int dev = -1;
static int nth_fd = -1;
static long page;
static const char *lib_sframe, *lib_plain, *ko_path;

struct op {
	const char *name;
	/* Runs in a new process; returns the operation's result, errno set. */
	int (*prepare)(void);
	int (*run)(void);
	/* ret and err of run(); returns false if the state is wrong. */
	bool (*check)(int ret, int err);
};

/* ---- fail-nth */

static int nth_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return write(nth_fd, buf, len) == len ? 0 : -1;
}

/* Disarm; return whether the armed fault was injected. */
static bool nth_disarm(void)
{
	char buf[16] = "";
	ssize_t got = pread(nth_fd, buf, sizeof(buf) - 1, 0);
	bool injected = got > 0 && atoi(buf) == 0;

	/* If this write is the N-th point, it is disarmed all the same. */
	if (write(nth_fd, "0", 1) < 0 && got <= 0)
		return false;
	return injected;
}

static bool allowed(int ret, int err)
{
	return !ret || err == ENOMEM || err == EFAULT;
}

/* ---- registry state */

static int query(pid_t pid, struct sframe_unwind_entry *e, u32 *count)
{
	struct sframe_unwind_query q = {
		.size = sizeof(q),
		.pid = pid,
		.count = MAX_ENTRIES,
		.entries = (unsigned long)e,
	};
	int ret = ioctl(dev, SFRAME_UNWIND_IOC_QUERY, &q);

	*count = q.count;
	return ret;
}

/* Entries of the caller that overlap [start, end). */
static int entries_in(unsigned long start, unsigned long end)
{
	struct sframe_unwind_entry e[MAX_ENTRIES];
	u32 n, i;
	int hits = 0;

	if (query(0, e, &n) || n > MAX_ENTRIES)
		return -1;
	for (i = 0; i < n; i++)
		if (e[i].text_start < end && start < e[i].text_end)
			hits++;
	return hits;
}

static int sidecars(void)
{
	struct sframe_unwind_sidecar s[MAX_ENTRIES];
	struct sframe_unwind_query q = {
		.size = sizeof(q),
		.count = MAX_ENTRIES,
		.entries = (unsigned long)s,
	};

	if (ioctl(dev, SFRAME_UNWIND_IOC_LIST_FILES, &q))
		return -1;
	return q.count;
}

/* ---- JIT sections */

static u8 *text, *sec;
static struct sframe_unwind_region jit_a, jit_b;

static int jit_setup(void)
{
	struct sfu_test_func f;
	s64 len;

	text = mmap(NULL, 2 * page, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sec = mmap(NULL, 2 * SEC_CAP, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (text == MAP_FAILED || sec == MAP_FAILED)
		return -1;
	f.start = (unsigned long)text;
	f.size = FUNC_SIZE;
	len = enc_test_build(SFRAME_VERSION_2, sfu_native_abi(), true, &f, 1,
			     (unsigned long)sec, sec, SEC_CAP);
	if (len < 0)
		return -1;
	jit_a = (struct sframe_unwind_region) {
		.size = sizeof(jit_a),
		.text_start = f.start,
		.text_end = f.start + page,
		.sframe_start = (unsigned long)sec,
		.sframe_len = len,
	};
	f.start += page;
	len = enc_test_build(SFRAME_VERSION_2, sfu_native_abi(), true, &f, 1,
			     (unsigned long)sec + SEC_CAP, sec + SEC_CAP,
			     SEC_CAP);
	if (len < 0)
		return -1;
	jit_b = jit_a;
	jit_b.text_start = f.start;
	jit_b.text_end = f.start + page;
	jit_b.sframe_start = (unsigned long)sec + SEC_CAP;
	jit_b.sframe_len = len;
	return 0;
}

static int del(const struct sframe_unwind_region *r)
{
	struct sframe_unwind_region d = {
		.size = sizeof(d),
		.text_start = r->text_start,
	};

	return ioctl(dev, SFRAME_UNWIND_IOC_DEL, &d);
}

static int jit_listed(const struct sframe_unwind_region *r)
{
	return entries_in(r->text_start, r->text_end);
}

/* Registered iff @ret says so, and DEL (or a second try) cleans up. */
static bool jit_check(const struct sframe_unwind_region *r, int ret)
{
	if (jit_listed(r) != !ret)
		return false;
	if (ret && ioctl(dev, SFRAME_UNWIND_IOC_ADD, r))
		return false;
	return !del(r) && jit_listed(r) == 0;
}

static int add_first_run(void)
{
	return ioctl(dev, SFRAME_UNWIND_IOC_ADD, &jit_a);
}

static bool add_first_check(int ret, int err)
{
	return jit_check(&jit_a, ret);
}

static int add_more_prepare(void)
{
	if (jit_setup())
		return -1;
	return ioctl(dev, SFRAME_UNWIND_IOC_ADD, &jit_a);
}

static int add_more_run(void)
{
	return ioctl(dev, SFRAME_UNWIND_IOC_ADD, &jit_b);
}

static bool add_more_check(int ret, int err)
{
	return jit_listed(&jit_a) == 1 && jit_check(&jit_b, ret);
}

static int del_run(void)
{
	return del(&jit_a);
}

static bool del_check(int ret, int err)
{
	if (jit_listed(&jit_a) != !!ret)
		return false;
	return !ret || !del(&jit_a);
}

static int query_run(void)
{
	struct sframe_unwind_entry e[MAX_ENTRIES];
	u32 n;
	int ret = query(0, e, &n);

	if (!ret && (n != 1 || e[0].text_start != jit_a.text_start)) {
		errno = EPROTO;
		return -1;
	}
	return ret;
}

static bool query_check(int ret, int err)
{
	return jit_listed(&jit_a) == 1 && !del(&jit_a);
}

/* ---- sidecars */

static struct sframe_unwind_file side;
static u8 side_sec[SEC_CAP];
static int side_fd = -1;
static void *mapped = MAP_FAILED;
static size_t mapped_len;

static int side_setup(void)
{
	struct sfu_test_func f;
	Elf64_Phdr text;
	uint64_t end;
	s64 len;

	side_fd = open(lib_plain, O_RDONLY | O_CLOEXEC);
	if (side_fd < 0 || reg_elf_text(side_fd, &text, &end))
		return -1;
	f.start = text.p_vaddr;
	f.size = FUNC_SIZE;
	end = (end + page - 1) & ~(u64)(page - 1);
	len = enc_test_build(SFRAME_VERSION_2, sfu_native_abi(), true, &f, 1,
			     end, side_sec, sizeof(side_sec));
	if (len < 0)
		return -1;
	side = (struct sframe_unwind_file) {
		.size = sizeof(side),
		.fd = side_fd,
		.sframe_vaddr = end,
		.sframe_ptr = (unsigned long)side_sec,
		.sframe_len = len,
	};
	return 0;
}

static int add_file_prepare(void)
{
	return side_setup();
}

static int add_file_run(void)
{
	return ioctl(dev, SFRAME_UNWIND_IOC_ADD_FILE, &side);
}

static bool add_file_check(int ret, int err)
{
	if (sidecars() != !ret)
		return false;
	if (ret && ioctl(dev, SFRAME_UNWIND_IOC_ADD_FILE, &side))
		return false;
	return !ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE, &side) &&
	       sidecars() == 0;
}

static int map_open(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st))
		return -1;
	mapped_len = st.st_size;
	return fd;
}

static int map_side_prepare(void)
{
	if (side_setup() || ioctl(dev, SFRAME_UNWIND_IOC_ADD_FILE, &side))
		return -1;
	return map_open(lib_plain) < 0 ? -1 : 0;
}

static int map_run_fd(int fd)
{
	mapped = mmap(NULL, mapped_len, PROT_READ | PROT_EXEC, MAP_PRIVATE,
		      fd, 0);
	return mapped == MAP_FAILED ? -1 : 0;
}

static int map_side_run(void)
{
	return map_run_fd(side_fd);
}

/* Registered or not, both are fine; after munmap nothing is left. */
static bool unmap_check(void)
{
	unsigned long start = (unsigned long)mapped;

	if (mapped == MAP_FAILED)
		return true;
	if (entries_in(start, start + mapped_len) < 0 ||
	    munmap(mapped, mapped_len))
		return false;
	return entries_in(start, start + mapped_len) == 0;
}

static bool map_side_check(int ret, int err)
{
	return unmap_check() &&
	       !ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE, &side) &&
	       sidecars() == 0;
}

static int elf_fd = -1;

static int map_elf_prepare(void)
{
	elf_fd = map_open(lib_sframe);
	return elf_fd < 0 ? -1 : 0;
}

static int map_elf_run(void)
{
	return map_run_fd(elf_fd);
}

static bool map_elf_check(int ret, int err)
{
	return unmap_check();
}

/* ---- fork */

static struct sframe_unwind_entry before[MAX_ENTRIES];
static u32 nr_before;

static int fork_prepare(void)
{
	if (jit_setup() || ioctl(dev, SFRAME_UNWIND_IOC_ADD, &jit_a) ||
	    map_elf_prepare() || map_run_fd(elf_fd))
		return -1;
	return query(0, before, &nr_before);
}

/* The child's registry: some of the parent's entries, nothing else. */
static int fork_child(void)
{
	struct sframe_unwind_entry e[MAX_ENTRIES];
	u32 n, i, j;

	if (query(0, e, &n) || n > nr_before)
		return 1;
	for (i = 0; i < n; i++) {
		for (j = 0; j < nr_before; j++)
			if (!memcmp(&e[i], &before[j], sizeof(e[i])))
				break;
		if (j == nr_before)
			return 1;
	}
	return 0;
}

static int fork_run(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fork_child());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

static bool fork_check(int ret, int err)
{
	return jit_listed(&jit_a) == 1 && !del(&jit_a) && unmap_check();
}

/* ---- the driver */

static int jit_prepare(void)
{
	return jit_setup();
}

static int jit_a_prepare(void)
{
	return add_more_prepare();
}

static const struct op ops[] = {
	{ "ADD, new registry", jit_prepare, add_first_run, add_first_check },
	{ "ADD, second section", add_more_prepare, add_more_run,
	  add_more_check },
	{ "DEL", jit_a_prepare, del_run, del_check },
	{ "QUERY", jit_a_prepare, query_run, query_check },
	{ "ADD_FILE", add_file_prepare, add_file_run, add_file_check },
	{ "mmap of a file with a sidecar", map_side_prepare, map_side_run,
	  map_side_check },
	{ "mmap of a file with PT_GNU_SFRAME", map_elf_prepare, map_elf_run,
	  map_elf_check },
	{ "fork with a registry", fork_prepare, fork_run, fork_check },
};

static int open_nth(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	nth_fd = open(path, O_RDWR | O_CLOEXEC);
	return nth_fd < 0 ? -1 : 0;
}

/* One iteration, in its own process: IT_INJECTED, IT_DONE or IT_BROKEN. */
static int iteration(const struct op *op, unsigned int n, int *err_out)
{
	int ret, err;
	bool injected;

	if (open_nth() || op->prepare()) {
		ksft_print_msg("%s: set-up failed: %s\n", op->name,
			       strerror(errno));
		return IT_BROKEN;
	}
	if (nth_arm(n))
		return IT_BROKEN;
	ret = op->run();
	err = ret ? errno : 0;
	injected = nth_disarm();
	*err_out = err;
	if (!allowed(ret, err)) {
		ksft_print_msg("%s, fault %u: %s\n", op->name, n,
			       reg_err_name(err));
		return IT_BROKEN;
	}
	if (!op->check(ret, err)) {
		ksft_print_msg("%s, fault %u (%s): registry inconsistent\n",
			       op->name, n, reg_err_name(err));
		return IT_BROKEN;
	}
	if (!injected && ret) {
		ksft_print_msg("%s: %s without an injected fault\n", op->name,
			       reg_err_name(err));
		return IT_BROKEN;
	}
	return injected ? IT_INJECTED : IT_DONE;
}

/* Child exit codes: the iteration result, plus the errno seen. */
#define ERR_ENOMEM	(1 << 4)
#define ERR_EFAULT	(2 << 4)

static void stat_of(const char *name, unsigned long long *v)
{
	if (reg_stat(name, v))
		*v = ~0ull;
}

/*
 * The module's memory and section counts are @mem and @secs again (the
 * last frees come through RCU callbacks, so give them a moment).
 */
static bool counts_back(unsigned long long mem, unsigned long long secs,
			unsigned long long *now)
{
	unsigned long long s;
	unsigned int i;

	for (i = 0; i < SETTLE_TRIES; i++) {
		stat_of("memory_bytes", now);
		stat_of("sections", &s);
		if (*now == mem && s == secs)
			return true;
		usleep(SETTLE_US);
	}
	return false;
}

static void run_op(const struct op *op, unsigned long long mem,
		   unsigned long long secs)
{
	unsigned int n, nomem = 0, fault = 0, worked = 0;
	int status, code = IT_BROKEN;
	unsigned long long now;

	for (n = 1; n <= MAX_NTH; n++) {
		pid_t pid = fork();
		int err = 0;

		if (!pid) {
			code = iteration(op, n, &err);
			if (err == ENOMEM)
				code |= ERR_ENOMEM;
			else if (err == EFAULT)
				code |= ERR_EFAULT;
			_exit(code);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status)) {
			code = IT_BROKEN;
			break;
		}
		code = WEXITSTATUS(status) & 0xf;
		if (code != IT_INJECTED)
			break;
		if (WEXITSTATUS(status) & ERR_ENOMEM)
			nomem++;
		else if (WEXITSTATUS(status) & ERR_EFAULT)
			fault++;
		else
			worked++;
	}
	if (code == IT_DONE && !counts_back(mem, secs, &now)) {
		ksft_print_msg("%s: memory_bytes %llu, was %llu\n", op->name,
			       now, mem);
		code = IT_BROKEN;
	}
	ksft_test_result(code == IT_DONE,
			 "%s: %u fault points (%u ENOMEM, %u EFAULT, %u worked), memory back\n",
			 op->name, n - 1, nomem, fault, worked);
}

/* ---- loading the module */

static bool module_loaded(void)
{
	return !access("/sys/module/" MOD_NAME, F_OK);
}

static int unload(void)
{
	return syscall(SYS_delete_module, MOD_NAME, O_NONBLOCK);
}

/*
 * Load the module from memory (init_module(): the kernel copies it with
 * __GFP_NOWARN, where finit_module()'s file read warns on a failure), the
 * N-th fault point failing, for every N the load reaches.  A load that
 * fails must leave no module behind; one that works in spite of the fault
 * (a fallback) is unloaded and the next N tried.
 */
static void run_insmod(void)
{
	unsigned int n, failed = 0, worked = 0;
	size_t len;
	char *image = reg_read_file(ko_path, &len);
	bool injected = false, ok = false;
	int ret, err;

	close(dev);
	dev = -1;
	if (!image || unload() || open_nth()) {
		ksft_test_result_fail("%s, rmmod: %s\n", ko_path,
				      strerror(errno));
		free(image);
		return;
	}
	for (n = 1; n <= MAX_NTH; n++) {
		nth_arm(n);
		ret = syscall(SYS_init_module, image, len, MOD_PARAMS);
		err = ret ? errno : 0;
		injected = nth_disarm();
		if (!injected) {
			ok = !ret;
			if (ret)
				ksft_print_msg("load without a fault: %s\n",
					       reg_err_name(err));
			break;
		}
		if (!ret) {
			worked++;
			if (unload())
				break;
			continue;
		}
		if (module_loaded()) {
			ksft_print_msg("fault %u: load failed (%s), module there\n",
				       n, reg_err_name(err));
			break;
		}
		failed++;
	}
	if (!module_loaded())
		syscall(SYS_init_module, image, len, MOD_PARAMS);
	free(image);
	ksft_test_result(ok && module_loaded(),
			 "loading the module: %u fault points (%u clean failures, %u worked)\n",
			 n - 1, failed, worked);
	dev = open(SFRAME_UNWIND_DEVICE, O_RDWR | O_CLOEXEC);
}

/* ---- the end state */

/* The first word of @path into @buf, or "" if it cannot be read. */
static void read_knob(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int knob(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	close(fd);
	return ret;
}

/* No leak reported since the last "clear" (none at all: without kmemleak). */
static bool kmemleak_clean(void)
{
	char *report;
	bool clean;

	if (access(KMEMLEAK, W_OK))
		return true;
	sleep(KMEMLEAK_AGE_S);
	if (knob(KMEMLEAK, "scan"))
		return false;
	report = reg_read_file(KMEMLEAK, NULL);
	if (!report)
		return false;
	clean = !*report;
	if (!clean)
		ksft_print_msg("kmemleak:\n%s\n", report);
	free(report);
	knob(KMEMLEAK, "clear");
	return clean;
}


/*
 * [start, end) of the core kernel function @name, from /proc/kallsyms:
 * up to the next symbol's address.
 */
static bool kernel_function(const char *name, unsigned long *start,
			    unsigned long *end)
{
	char line[256], sym[128], type;
	unsigned long addr;
	FILE *f = fopen("/proc/kallsyms", "r");

	*start = 0;
	*end = ~0ul;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %127s", &addr, &type, sym) != 3 ||
		    strchr(line, '['))
			continue;
		if (!strcmp(sym, name))
			*start = addr;
		else if (*start && addr > *start && addr < *end)
			*end = addr;
	}
	fclose(f);
	return *start && *end != ~0ul;
}

/*
 * Set @attr's stack filter: faults only below the module's code, none
 * below @reject_start..@reject_end.
 */
static bool filter_attr(const char *attr, unsigned long start,
			unsigned long reject_start, unsigned long reject_end)
{
	static const char *const knobs[] = {
		"require-start", "require-end", "reject-start", "reject-end",
		"stacktrace-depth",
	};
	unsigned long vals[] = { start, MODULES_TOP, reject_start, reject_end };
	char path[96], buf[32];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s", attr,
			 knobs[i]);
		if (i < ARRAY_SIZE(vals))
			snprintf(buf, sizeof(buf), "%#lx", vals[i]);
		else
			snprintf(buf, sizeof(buf), "%s", FI_DEPTH);
		if (knob(path, buf))
			return false;
	}
	return true;
}

/*
 * Faults only where the module's code is on the stack, and not in the
 * allocation of executable memory (ftrace's trampolines for the module's
 * hooks): under KASAN a failure there warns with a stack dump, in code
 * that is not the module's.
 */
static bool module_faults_only(void)
{
	static const char *const attrs[] = { "failslab", "fail_usercopy" };
	unsigned long text = 0, start, rej_start, rej_end;
	unsigned int i;
	FILE *f = fopen(MOD_TEXT, "r");

	if (!f)
		return false;
	if (fscanf(f, "%lx", &text) != 1)
		text = 0;
	fclose(f);
	if (!text || !kernel_function(EXEC_ALLOC, &rej_start, &rej_end))
		return false;
	start = text >= MODULES_KASLR ? MODULES_KASLR : MODULES_FIXED;
	for (i = 0; i < ARRAY_SIZE(attrs); i++)
		if (!filter_attr(attrs[i], start, rej_start, rej_end))
			return false;
	return true;
}


int main(int argc, char **argv)
{
	unsigned long long mem0, secs0;
	char path[64], file_cache[16] = "";
	bool filtered;
	unsigned int i;

	ksft_print_header();
	lib_sframe = argc > 1 ? argv[1] : "/selftests/lib/libsfu_a.so";
	lib_plain = argc > 2 ? argv[2] : "/selftests/lib/libsfu_plain.so";
	ko_path = argc > 3 ? argv[3] : "/lib/test-modules/" MOD_NAME ".ko";
	page = sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth",
		 (long)syscall(SYS_gettid));
	if (access(path, W_OK))
		ksft_exit_skip("no %s: a kernel without CONFIG_FAULT_INJECTION\n",
			       path);
	/* Slab allocations that may sleep too; no stack dump per fault. */
	if (knob("/sys/kernel/debug/failslab/ignore-gfp-wait", "N") ||
	    knob("/sys/kernel/debug/failslab/verbose", "0"))
		ksft_exit_skip("no failslab in debugfs\n");
	knob("/sys/kernel/debug/fail_usercopy/verbose", "0");
	filtered = module_faults_only();
	ksft_print_msg("faults %s\n", filtered ? "only under the module's code" :
		       "anywhere (no stack trace filter)");
	dev = open(SFRAME_UNWIND_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		ksft_exit_skip("%s: %s\n", SFRAME_UNWIND_DEVICE,
			       strerror(errno));
	ksft_set_plan(ARRAY_SIZE(ops) + 3);
	/*
	 * Without the file cache every mapping of the file with its own
	 * SFrame reads, checks and indexes it: each try meets every fault
	 * point of that path, not the cache's few after the first success.
	 */
	read_knob(FILE_CACHE, file_cache, sizeof(file_cache));
	knob(FILE_CACHE, "0");
	knob(KMEMLEAK, "clear");
	stat_of("memory_bytes", &mem0);
	stat_of("sections", &secs0);
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		run_op(&ops[i], mem0, secs0);
	ksft_test_result(kmemleak_clean(), "no leak (kmemleak)\n");
	/* Unfiltered, the loader's own failures warn (KASAN's shadow). */
	if (filtered) {
		run_insmod();
		ksft_test_result(kmemleak_clean(),
				 "no leak after the failed loads (kmemleak)\n");
	} else {
		ksft_test_result_skip("loading the module: needs the stack trace filter\n");
		ksft_test_result_skip("no leak after the failed loads\n");
	}
	knob("/sys/kernel/debug/failslab/ignore-gfp-wait", "Y");
	if (file_cache[0])
		knob(FILE_CACHE, file_cache);
	ksft_finished();
}
