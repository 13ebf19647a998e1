// SPDX-License-Identifier: GPL-2.0
/*
 * sidecar_unwind: walks through a library that has no SFrame of its own,
 * with a section generated for it on the host by tools/sframe-gen/sframe-gen from
 * its .eh_frame and registered with SFRAME_UNWIND_IOC_ADD_FILE before the
 * library is mapped.
 *
 * The chain is main -> sc_run -> sc_walks -> sc_outer -> sc_lib_entry ->
 * sc_lib_mid (both in libsfu_sc_plain.so, -O2 -fomit-frame-pointer, no
 * SFrame) -> sc_leaf (a callback into this program), which asks the test
 * hook for a walk with a system call instruction of its own.  Three copies of the library (three
 * files, so three registrations):
 *   libsfu_sc_plain.so       with the generated V3 section
 *   libsfu_sc_plain_v2.so    with the generated V2 section
 *   libsfu_sc_plain_none.so  without a section: the walks must not get
 *                            through it (the test can fail)
 * For each, after dlopen: "sections" lists it as sidecar (with the
 * section's version) or not at all; deferred, "sync fault" and "sync"
 * walks name exactly that chain from sc_leaf to main, every step by SFrame
 * (without a section: start in sc_leaf and do not get through).  The
 * registrations are dropped with DEL_FILE at the end.
 *
 * A fourth copy, libsfu_sc_plain_noid.so, has no build-id: registered
 * without one, it is listed as sidecar when mapped; once its modification
 * time changes (as when it is rewritten in place), a new mapping is not.
 *
 * The sections and the address they were generated for (in a file of
 * its own, "0x..." ) come from tools/testing/qemu/run.sh.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/sframe_unwind.h>

#include "kselftest.h"
#include "raw_syscall.h"
#include "sclib.h"

#define SC_DIR		"/selftests/perf"
#define SC_LIB		SC_DIR "/libsfu_sc_plain"
#define SC_VADDR	SC_LIB ".so.vaddr"
#define SC_NOID		SC_LIB "_noid.so"
#define SC_HOOK		"/sys/kernel/debug/sframe_unwind/unwind"
#define SC_SECTIONS	"/sys/kernel/debug/sframe_unwind/sections"
#define SC_READ_MAX	(64 * 1024)
#define SC_LISTING_MAX	(1024 * 1024)
#define SC_MAX_FRAMES	256
#define SC_STOP_MAX	24
#define SC_NR_CMDS	3
#define SC_NR_CASES	3
/* Checks per case: listing, and per command the write and the walk. */
#define SC_PER_CASE	(1 + 2 * SC_NR_CMDS)
/* The file without a build-id: listed, then not after a new mtime. */
#define SC_NOID_CHECKS	2

struct sc_case {
	const char *lib;
	const char *sframe;	/* NULL: no sidecar */
	int version;
};

static const struct sc_case sc_cases[SC_NR_CASES] = {
	{ SC_LIB ".so", SC_LIB ".so.sframe3", 3 },
	{ SC_LIB "_v2.so", SC_LIB ".so.sframe2", 2 },
	{ SC_LIB "_none.so", NULL, 0 },
};

static const char *const sc_cmds[SC_NR_CMDS] = {
	"deferred", "sync fault", "sync",
};

static const char *const sc_chain[] = {
	"sc_leaf", "sc_lib_mid", "sc_lib_entry", "sc_outer", "sc_walks",
	"sc_run", "main",
};

#define SC_CHAIN_LEN	ARRAY_SIZE(sc_chain)

struct sc_walk {
	unsigned long long cookie;
	int consumer;
	unsigned int nr;
	char stop[SC_STOP_MAX];
	unsigned int sframe;
	unsigned int fallback;
	unsigned int signal;
	unsigned long pcs[SC_MAX_FRAMES];
};

/* What sc_leaf() writes to the hook, and what write() returned. */
static int sc_fd = -1;
static const char *sc_cmd;
long sc_ret;			/* what write() returned */

__attribute__((noipa)) void sc_nop(void)
{
}

/* Called back from the library: frame 0 is its system call. */
__attribute__((noipa)) long sc_leaf(long x)
{
	sc_ret = raw_syscall3(SYS_write, sc_fd, (long)sc_cmd, strlen(sc_cmd));
	sc_nop();
	return x * 5;
}

__attribute__((noipa)) long sc_outer(sc_entry_fn entry, long x)
{
	long v = entry(sc_leaf, x);

	sc_nop();
	return v + 1;
}

/* The whole of a file; NULL on error. */
static char *sc_read_file(const char *path, size_t max, size_t *len)
{
	char *buf = malloc(max + 1);
	size_t used = 0;
	ssize_t got;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while (used < max) {
		got = read(fd, buf + used, max - used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		used += got;
	}
	close(fd);
	buf[used] = '\0';
	if (len)
		*len = used;
	return buf;
}

/* The function @pc is in; return addresses are looked up one byte back. */
static const char *sc_name(unsigned long pc, bool ret_addr)
{
	Dl_info info;

	if (!dladdr((void *)(pc - ret_addr), &info) || !info.dli_sname)
		return "?";
	return info.dli_sname;
}

static void sc_print_walk(const struct sc_walk *w)
{
	unsigned int i;

	ksft_print_msg("cookie=%llu consumer=%d nr=%u stop=%s sframe=%u fallback=%u signal=%u\n",
		       w->cookie, w->consumer, w->nr, w->stop, w->sframe,
		       w->fallback, w->signal);
	for (i = 0; i < w->nr; i++)
		ksft_print_msg("  #%-2u 0x%lx %s\n", i, w->pcs[i],
			       sc_name(w->pcs[i], i > 0));
}

/* Read the caller's walks back; the first one in @w.  0 or -1. */
static int sc_read_walk(struct sc_walk *w)
{
	char *buf = malloc(SC_READ_MAX + 1), *line, *save = NULL;
	unsigned long pc;
	ssize_t got;
	int walks = 0;

	if (!buf)
		return -1;
	memset(w, 0, sizeof(*w));
	got = pread(sc_fd, buf, SC_READ_MAX, 0);
	if (got < 0) {
		free(buf);
		return -1;
	}
	buf[got] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "cookie=", 7)) {
			if (walks++)
				break;
			if (sscanf(line, "cookie=%llu consumer=%d nr=%*u stop=%23s sframe=%u fallback=%u signal=%u",
				   &w->cookie, &w->consumer, w->stop,
				   &w->sframe, &w->fallback, &w->signal) != 6)
				break;
			continue;
		}
		if (walks && sscanf(line, "0x%lx", &pc) == 1 &&
		    w->nr < SC_MAX_FRAMES)
			w->pcs[w->nr++] = pc;
	}
	free(buf);
	return walks ? 0 : -1;
}

/* The walk names exactly the chain from sc_leaf up to main. */
static bool sc_full_chain(const struct sc_walk *w)
{
	unsigned int i;

	if (w->nr < SC_CHAIN_LEN)
		return false;
	for (i = 0; i < SC_CHAIN_LEN; i++)
		if (strcmp(sc_name(w->pcs[i], i > 0), sc_chain[i]))
			return false;
	return true;
}

/* The line of "sections" for @lib in this process, into @out. */
static bool sc_listed(const char *lib, char *out, size_t len)
{
	char *buf = sc_read_file(SC_SECTIONS, SC_LISTING_MAX, NULL);
	char head[32], *line, *save = NULL, *last;
	bool mine = false, found = false;

	if (!buf)
		return false;
	snprintf(head, sizeof(head), "pid=%d ", (int)getpid());
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] != ' ') {
			mine = !strncmp(line, head, strlen(head));
			continue;
		}
		last = strrchr(line, ' ');
		if (mine && last && !strcmp(last + 1, lib)) {
			snprintf(out, len, "%s", line);
			found = true;
		}
	}
	free(buf);
	return found;
}

static int sc_file_ioctl(int dev, unsigned long cmd, const char *lib,
			 unsigned long long vaddr, const char *sec, size_t len)
{
	struct sframe_unwind_file f = {
		.size = sizeof(f),
		.sframe_vaddr = vaddr,
		.sframe_ptr = (unsigned long)sec,
		.sframe_len = len,
	};
	int ret;

	f.fd = open(lib, O_RDONLY);
	if (f.fd < 0)
		return errno;
	ret = ioctl(dev, cmd, &f) ? errno : 0;
	close(f.fd);
	return ret;
}

/* Register the sidecar of @c, if it has one.  0 or an errno. */
static int sc_register(int dev, const struct sc_case *c,
		       unsigned long long vaddr)
{
	size_t len;
	char *sec;
	int ret;

	/* A registration left by an earlier run would make ADD fail. */
	sc_file_ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE, c->lib, 0, NULL, 0);
	if (!c->sframe)
		return 0;
	sec = sc_read_file(c->sframe, SC_LISTING_MAX, &len);
	if (!sec)
		return errno;
	ret = sc_file_ioctl(dev, SFRAME_UNWIND_IOC_ADD_FILE, c->lib, vaddr,
			    sec, len);
	free(sec);
	return ret;
}

__attribute__((noipa)) void sc_walks(const struct sc_case *c,
				     sc_entry_fn entry)
{
	const char *what = strrchr(c->lib, '/') + 1;
	struct sc_walk w;
	unsigned int i;
	bool full, ok;

	for (i = 0; i < SC_NR_CMDS; i++) {
		sc_cmd = sc_cmds[i];
		sc_ret = 0;
		sc_outer(entry, i);
		ksft_test_result(sc_ret == (long)strlen(sc_cmd),
				 "%s: write \"%s\" from the callback: %ld\n",
				 what, sc_cmd, sc_ret);
		if (sc_read_walk(&w)) {
			ksft_test_result_fail("%s: %s: no walk to read\n",
					      what, sc_cmd);
			continue;
		}
		sc_print_walk(&w);
		full = sc_full_chain(&w);
		if (c->sframe) {
			/* Every step up to main's caller by SFrame. */
			ok = full && w.sframe >= SC_CHAIN_LEN;
			ksft_test_result(ok, "%s: %s walk: sc_leaf, sc_lib_mid, sc_lib_entry, sc_outer, sc_walks, sc_run, main, by SFrame\n",
					 what, sc_cmd);
		} else {
			ok = !full && w.nr &&
			     !strcmp(sc_name(w.pcs[0], false), sc_chain[0]);
			ksft_test_result(ok, "%s: %s walk without a sidecar starts in sc_leaf, does not get through the library\n",
					 what, sc_cmd);
		}
	}
}

__attribute__((noipa)) void sc_run(int dev, const struct sc_case *c,
				   unsigned long long vaddr)
{
	const char *what = strrchr(c->lib, '/') + 1;
	char line[256] = "", want[32];
	sc_entry_fn entry;
	bool listed;
	void *h;
	int i, ret;

	ret = sc_register(dev, c, vaddr);
	h = ret ? NULL : dlopen(c->lib, RTLD_NOW | RTLD_LOCAL);
	entry = h ? (sc_entry_fn)dlsym(h, SC_ENTRY_SYM) : NULL;
	if (!entry) {
		ksft_test_result_fail("%s: ADD_FILE (%s), dlopen, dlsym: %s\n",
				      what, strerror(ret),
				      ret ? "-" : dlerror());
		for (i = 1; i < SC_PER_CASE; i++)
			ksft_test_result_skip("%s: walks\n", what);
		return;
	}
	listed = sc_listed(c->lib, line, sizeof(line));
	if (listed)
		ksft_print_msg("%s\n", line);
	snprintf(want, sizeof(want), " sidecar v%d ", c->version);
	if (c->sframe)
		ksft_test_result(listed && strstr(line, want),
				 "%s: listed as sidecar, v%d\n", what,
				 c->version);
	else
		ksft_test_result(!listed, "%s: not listed\n", what);
	sc_walks(c, entry);
	dlclose(h);
}

/* The generation address written next to a library's sections. */
static int sc_vaddr(const char *lib, unsigned long long *vaddr)
{
	char path[256], *text, *end;

	snprintf(path, sizeof(path), "%s.vaddr", lib);
	text = sc_read_file(path, 64, NULL);
	if (!text)
		return -1;
	*vaddr = strtoull(text, &end, 16);
	free(text);
	return end == text ? -1 : 0;
}

/* dlopen @lib, see whether it is listed as sidecar, dlclose it. */
static bool sc_listed_once(const char *lib)
{
	char line[256] = "";
	bool listed;
	void *h;

	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		ksft_print_msg("dlopen %s: %s\n", lib, dlerror());
		return false;
	}
	listed = sc_listed(lib, line, sizeof(line)) &&
		 strstr(line, " sidecar ");
	if (listed)
		ksft_print_msg("%s\n", line);
	dlclose(h);
	return listed;
}

/* A file without a build-id keeps its sidecar only while unchanged. */
static void sc_noid(int dev)
{
	static const struct sc_case c = { SC_NOID, SC_NOID ".sframe3", 3 };
	struct timespec later[2] = { { .tv_nsec = UTIME_OMIT } };
	unsigned long long vaddr;
	struct stat st;
	int ret;

	if (sc_vaddr(c.lib, &vaddr) || stat(c.lib, &st)) {
		ksft_test_result_fail("noid: %s or its address: %s\n", c.lib,
				      strerror(errno));
		ksft_test_result_skip("noid: after a new mtime\n");
		return;
	}
	ret = sc_register(dev, &c, vaddr);
	ksft_test_result(!ret && sc_listed_once(c.lib),
			 "libsfu_sc_plain_noid.so (no build-id): registered (%s), listed as sidecar\n",
			 strerror(ret));
	later[1].tv_sec = st.st_mtim.tv_sec + 1;
	ret = utimensat(AT_FDCWD, c.lib, later, 0) ? errno : 0;
	ksft_test_result(!ret && !sc_listed_once(c.lib),
			 "libsfu_sc_plain_noid.so: not a sidecar once its mtime changed (%s)\n",
			 strerror(ret));
	sc_file_ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE, c.lib, 0, NULL, 0);
}

int main(void)
{
	unsigned long long vaddr;
	char *text, *end;
	unsigned int i;
	int dev;

	ksft_print_header();
	if (access(SC_HOOK, W_OK))
		ksft_exit_skip("no %s: the module is not loaded\n", SC_HOOK);
	text = sc_read_file(SC_VADDR, 64, NULL);
	vaddr = text ? strtoull(text, &end, 16) : 0;
	if (!text || end == text)
		ksft_exit_fail_msg("cannot read %s\n", SC_VADDR);
	free(text);
	ksft_set_plan(SC_NR_CASES * SC_PER_CASE + SC_NOID_CHECKS);
	dev = open(SFRAME_UNWIND_DEVICE, O_RDWR);
	sc_fd = open(SC_HOOK, O_RDWR);
	if (dev < 0 || sc_fd < 0)
		ksft_exit_fail_msg("open %s, %s: %s\n", SFRAME_UNWIND_DEVICE,
				   SC_HOOK, strerror(errno));
	ksft_print_msg("sections generated for sframe_vaddr 0x%llx\n", vaddr);
	for (i = 0; i < SC_NR_CASES; i++)
		sc_run(dev, &sc_cases[i], vaddr);
	sc_noid(dev);
	for (i = 0; i < SC_NR_CASES; i++)
		if (sc_cases[i].sframe)
			sc_file_ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE,
				      sc_cases[i].lib, 0, NULL, 0);
	close(sc_fd);
	close(dev);
	ksft_finished();
}
