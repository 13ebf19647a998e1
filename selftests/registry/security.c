// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_security: the device side of selftests/security_kernel.sh, one check
 * per command; each exits 0 (as wanted), 1 (not) or 4 (cannot be checked
 * here), saying what it saw on stdout as "# ..." lines.
 *
 *   query-userns UID   as UID, in a user namespace of its own: QUERY of a
 *                      dumpable child must succeed, of one that dropped
 *                      PR_SET_DUMPABLE must fail with EACCES (ptrace's
 *                      read check refuses it; the namespace's capabilities
 *                      do not reach a non-dumpable process)
 *   jit-fill UID       as UID, register JIT sections of 64 functions until
 *                      one is refused, then smaller ones until even one
 *                      of a single function is; print "filled ...", then "ready PID",
 *                      and hold them until SIGTERM; exits 0 if the
 *                      refusals were EDQUOT
 *   jit-one UID        as UID, register one small JIT section: 0 if it is
 *                      accepted
 *   sidecar-stale LIB SFRAME VADDR COPY
 *                      copy LIB to COPY, register SFRAME (generated for
 *                      LIB at VADDR) as its sidecar; a child that dlopens
 *                      COPY has it as a sidecar region; once COPY is
 *                      written in place (same bytes, same build-id) a
 *                      child does not, and the sidecar is gone from
 *                      LIST_FILES; ADD_FILE of the file as it is now then
 *                      succeeds without SFRAME_UNWIND_REPLACE
 *   sidecar-gone LIB SFRAME VADDR COPY
 *                      register SFRAME as the sidecar of COPY, a copy of
 *                      LIB, then unlink COPY: the sidecar must leave
 *                      LIST_FILES within GONE_WAIT_MS; again with a
 *                      new copy renamed over COPY
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sframe_unwind.h>
#include <sframe/decode.h>

#include "enc.h"
#include "registry.h"

#define EXIT_SKIP		4
#define CHILD_FAILED		2
/*
 * JIT fill: most functions per section (what enc_test_build() takes),
 * their size, room for a section, the most sections (the script raises
 * max_sections above it).
 */
#define FILL_FUNCS		64
#define FILL_FUNC_SIZE		16
#define FILL_SEC_CAP		4096
#define FILL_MAX		16384
#define FILL_STRIDE		(FILL_SEC_CAP + FILL_FUNCS * FILL_FUNC_SIZE)
#define SMALL_SEC_CAP		4096
#define LIST_ROOM		4096
/* Change times of tmpfs and ramfs tick with the jiffy. */
#define CTIME_TICK_US		50000
/* How long a sidecar may stay listed after its file went, and how often
 * to look (the drop is queued work, which TCG may run late).
 */
#define GONE_WAIT_MS		5000
#define GONE_POLL_MS		10

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static int ioc(int dev, unsigned long cmd, void *arg)
{
	return ioctl(dev, cmd, arg) ? errno : 0;
}

/* Become @uid (and group @uid) with no supplementary groups. */
static int become(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid)) {
		say("becoming uid %u: %s\n", uid, strerror(errno));
		return -1;
	}
	return 0;
}

static int open_dev(void)
{
	int dev = open(SFRAME_UNWIND_DEVICE, O_RDWR);

	if (dev < 0)
		say("open %s: %s\n", SFRAME_UNWIND_DEVICE, strerror(errno));
	return dev;
}

/* A child that pauses, dumpable or not; its pid once it is set up. */
static pid_t paused_child(bool dumpable)
{
	int pipefd[2];
	pid_t pid;
	char c;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		if (!dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(pipefd[0]);
	return pid;
}

static int query_of(int dev, pid_t pid)
{
	struct sframe_unwind_query q = { .size = sizeof(q), .pid = pid };

	return ioc(dev, SFRAME_UNWIND_IOC_QUERY, &q);
}

static void reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static int query_userns(uid_t uid)
{
	pid_t open_child, closed_child;
	int dev, open_ret, closed_ret;

	/* Dumpable again, as after an exec of its own: setresuid() cleared it. */
	if (become(uid) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 1;
	dev = open_dev();
	if (dev < 0)
		return 1;
	if (unshare(CLONE_NEWUSER)) {
		say("unshare(CLONE_NEWUSER) as uid %u: %s\n", uid,
		    strerror(errno));
		return EXIT_SKIP;
	}
	open_child = paused_child(true);
	closed_child = paused_child(false);
	if (open_child < 0 || closed_child < 0) {
		say("fork: %s\n", strerror(errno));
		reap(open_child);
		reap(closed_child);
		return 1;
	}
	open_ret = query_of(dev, open_child);
	closed_ret = query_of(dev, closed_child);
	reap(open_child);
	reap(closed_child);
	say("as uid %u owning a user namespace: QUERY of a dumpable child %s, of a non-dumpable one %s\n",
	    uid, reg_err_name(open_ret), reg_err_name(closed_ret));
	return !open_ret && closed_ret == EACCES ? 0 : 1;
}

/* A JIT registration of @len bytes at @sec for text at @text. */
static int jit_add(int dev, const u8 *sec, s64 len, u64 text, u64 text_len)
{
	struct sframe_unwind_region r = {
		.size = sizeof(r),
		.text_start = text,
		.text_end = text + text_len,
		.sframe_start = (unsigned long)sec,
		.sframe_len = len,
	};

	return ioc(dev, SFRAME_UNWIND_IOC_ADD, &r);
}

/* Sections of this many functions, the largest first. */
static const unsigned int fill_funcs[] = { FILL_FUNCS, 8, 1 };

/*
 * A section of @nr functions for the text right after it, at @buf: its
 * length, or -1.  Copied to another place it describes the text after
 * that place (function starts are relative to the section).
 */
static s64 fill_section(u8 *buf, unsigned int nr)
{
	static struct sfu_test_func f[FILL_FUNCS];
	unsigned int i;

	for (i = 0; i < nr; i++) {
		f[i].start = (unsigned long)buf + FILL_SEC_CAP +
			     i * FILL_FUNC_SIZE;
		f[i].size = FILL_FUNC_SIZE;
	}
	return enc_test_build(SFRAME_VERSION_2, sfu_native_abi(), true, f,
			      nr, (unsigned long)buf, buf, FILL_SEC_CAP);
}

/*
 * Register sections of @nr functions in the slots of @area from *@slot
 * on until one is refused; *@slot is then the first slot left.  Return:
 * the refusal's negative errno (-ENOSPC: out of slots).
 */
static int fill_with(int dev, u8 *area, unsigned int *slot, unsigned int nr)
{
	u8 *tmpl = area + (size_t)*slot * FILL_STRIDE;
	s64 len = *slot < FILL_MAX ? fill_section(tmpl, nr) : -1;
	int ret = 0;

	if (len < 0)
		return -ENOSPC;
	while (*slot < FILL_MAX) {
		u8 *sec = area + (size_t)*slot * FILL_STRIDE;

		if (sec != tmpl)
			memcpy(sec, tmpl, len);
		ret = jit_add(dev, sec, len, (unsigned long)sec + FILL_SEC_CAP,
			      nr * FILL_FUNC_SIZE);
		if (ret)
			return -ret;
		(*slot)++;
	}
	return -ENOSPC;
}

static void on_term(int sig)
{
	(void)sig;
}

static int jit_fill(uid_t uid)
{
	unsigned int i, slot = 0;
	int dev, ret = 0;
	bool quota = true;
	u8 *area;

	if (become(uid))
		return 1;
	dev = open_dev();
	if (dev < 0)
		return 1;
	area = mmap(NULL, (size_t)FILL_STRIDE * FILL_MAX,
		    PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	for (i = 0; i < ARRAY_SIZE(fill_funcs); i++) {
		unsigned int from = slot;

		ret = fill_with(dev, area, &slot, fill_funcs[i]);
		printf("# %u sections of %u functions as uid %u, then %s\n",
		       slot - from, fill_funcs[i], uid, reg_err_name(-ret));
		quota &= ret == -EDQUOT;
	}
	signal(SIGTERM, on_term);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	pause();
	return quota ? 0 : 1;
}

static int jit_one(uid_t uid)
{
	struct sfu_test_func f;
	int dev, ret;
	u8 *area;
	s64 len;

	if (become(uid))
		return 1;
	dev = open_dev();
	if (dev < 0)
		return 1;
	area = mmap(NULL, 2 * SMALL_SEC_CAP, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return 1;
	f.start = (unsigned long)area + SMALL_SEC_CAP;
	f.size = FILL_FUNC_SIZE;
	len = enc_test_build(SFRAME_VERSION_2, sfu_native_abi(), true, &f, 1,
			     (unsigned long)area, area, SMALL_SEC_CAP);
	ret = len < 0 ? EINVAL :
	      jit_add(dev, area, len, f.start, FILL_FUNC_SIZE);
	say("one JIT section as uid %u: %s\n", uid, reg_err_name(ret));
	return !!ret;
}

/* ADD_FILE of @path with @sec (generated for address @vaddr). */
static int add_file(int dev, const char *path, const char *sec, size_t len,
		    unsigned long long vaddr)
{
	struct sframe_unwind_file f = { .size = sizeof(f) };
	int fd = open(path, O_RDONLY), ret;

	if (fd < 0)
		return errno;
	f.fd = fd;
	f.sframe_vaddr = vaddr;
	f.sframe_ptr = (unsigned long)sec;
	f.sframe_len = len;
	ret = ioc(dev, SFRAME_UNWIND_IOC_ADD_FILE, &f);
	close(fd);
	return ret;
}

static void del_file(int dev, const char *path)
{
	struct sframe_unwind_file f = { .size = sizeof(f) };

	f.fd = open(path, O_RDONLY);
	if (f.fd >= 0) {
		ioc(dev, SFRAME_UNWIND_IOC_DEL_FILE, &f);
		close(f.fd);
	}
}

/* Does a child that dlopens @path get a region for it? */
static bool child_maps_with_region(const char *path)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		void *h = dlopen(path, RTLD_NOW);

		if (!h)
			_exit(CHILD_FAILED);
		_exit(reg_listed(getpid(), path) == 1 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return false;
	if (WEXITSTATUS(status) == CHILD_FAILED)
		say("dlopen %s failed in the child\n", path);
	return WEXITSTATUS(status) == 0;
}

/* Is a sidecar of the inode @ino listed? */
static bool sidecar_listed(int dev, ino_t ino)
{
	static struct sframe_unwind_sidecar e[LIST_ROOM];
	struct sframe_unwind_query q = {
		.size = sizeof(q),
		.count = LIST_ROOM,
		.entries = (unsigned long)e,
	};
	unsigned int i;

	if (ioc(dev, SFRAME_UNWIND_IOC_LIST_FILES, &q))
		return true;
	for (i = 0; i < q.count && i < LIST_ROOM; i++)
		if (e[i].ino == ino)
			return true;
	return false;
}

/* Copy @from to @to, mode 0755. */
static int copy_file(const char *from, const char *to)
{
	size_t len;
	char *buf = reg_read_file(from, &len);
	int fd, ret = -1;

	if (!buf)
		return -1;
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd >= 0 && write(fd, buf, len) == (ssize_t)len)
		ret = 0;
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

/* Write the first byte of @path over itself: a new version, same bytes. */
static int rewrite_in_place(const char *path)
{
	int fd = open(path, O_RDWR), ret = -1;
	char c;

	usleep(CTIME_TICK_US);
	if (fd >= 0 && pread(fd, &c, 1, 0) == 1 && pwrite(fd, &c, 1, 0) == 1)
		ret = 0;
	if (fd >= 0)
		close(fd);
	return ret;
}

static int sidecar_stale(const char *lib, const char *sec_path,
			 const char *vaddr_path, const char *copy)
{
	char *sec, *vaddr_text;
	unsigned long long vaddr;
	bool before, after, listed, again;
	int dev, add, readd, fails = 0;
	struct stat st;
	size_t len;

	sec = reg_read_file(sec_path, &len);
	vaddr_text = reg_read_file(vaddr_path, NULL);
	dev = open_dev();
	if (!sec || !vaddr_text || dev < 0 || copy_file(lib, copy) ||
	    stat(copy, &st)) {
		say("setting up %s: %s\n", copy, strerror(errno));
		return 1;
	}
	vaddr = strtoull(vaddr_text, NULL, 0);
	add = add_file(dev, copy, sec, len, vaddr);
	before = !add && child_maps_with_region(copy);
	if (rewrite_in_place(copy)) {
		say("rewriting %s: %s\n", copy, strerror(errno));
		return 1;
	}
	after = child_maps_with_region(copy);
	listed = sidecar_listed(dev, st.st_ino);
	readd = add_file(dev, copy, sec, len, vaddr);
	again = !readd && child_maps_with_region(copy);
	del_file(dev, copy);
	unlink(copy);
	say("ADD_FILE %s, mapped with a region: %s; written in place: %s, still listed: %s; ADD_FILE again %s, mapped with a region: %s\n",
	    reg_err_name(add), before ? "yes" : "no", after ? "yes" : "no",
	    listed ? "yes" : "no", reg_err_name(readd), again ? "yes" : "no");
	fails += !before;
	fails += after;
	fails += listed;
	fails += !again;
	return !!fails;
}

/* Is the sidecar of inode @ino gone from LIST_FILES within GONE_WAIT_MS? */
static bool sidecar_leaves(int dev, ino_t ino, const char *what)
{
	unsigned int ms;

	for (ms = 0; ms < GONE_WAIT_MS; ms += GONE_POLL_MS) {
		if (!sidecar_listed(dev, ino)) {
			say("%s: the sidecar left LIST_FILES after %u ms\n",
			    what, ms);
			return true;
		}
		usleep(GONE_POLL_MS * 1000);
	}
	say("%s: the sidecar is still listed after %u ms\n", what, ms);
	return false;
}

/* Register @sec as the sidecar of @copy, a new copy of @lib; its inode. */
static ino_t add_copy(int dev, const char *lib, const char *copy,
		      const char *sec, size_t len, unsigned long long vaddr)
{
	struct stat st;
	int ret;

	if (copy_file(lib, copy) || stat(copy, &st)) {
		say("copying %s to %s: %s\n", lib, copy, strerror(errno));
		return 0;
	}
	ret = add_file(dev, copy, sec, len, vaddr);
	if (ret || !sidecar_listed(dev, st.st_ino)) {
		say("ADD_FILE %s: %s\n", copy, reg_err_name(ret));
		return 0;
	}
	return st.st_ino;
}

static int sidecar_gone(const char *lib, const char *sec_path,
			const char *vaddr_path, const char *copy)
{
	char next[PATH_MAX], *sec, *vaddr_text;
	unsigned long long vaddr;
	int dev = open_dev(), fails = 0;
	size_t len;
	ino_t ino;

	sec = reg_read_file(sec_path, &len);
	vaddr_text = reg_read_file(vaddr_path, NULL);
	if (!sec || !vaddr_text || dev < 0)
		return 1;
	vaddr = strtoull(vaddr_text, NULL, 0);
	snprintf(next, sizeof(next), "%s.next", copy);
	ino = add_copy(dev, lib, copy, sec, len, vaddr);
	if (!ino || unlink(copy))
		return 1;
	fails += !sidecar_leaves(dev, ino, "unlinked");
	ino = add_copy(dev, lib, copy, sec, len, vaddr);
	if (!ino || copy_file(lib, next) || rename(next, copy))
		return 1;
	fails += !sidecar_leaves(dev, ino, "renamed over");
	del_file(dev, copy);
	unlink(copy);
	return !!fails;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "query-userns") && argc == 3)
		return query_userns(strtoul(argv[2], NULL, 0));
	if (!strcmp(cmd, "jit-fill") && argc == 3)
		return jit_fill(strtoul(argv[2], NULL, 0));
	if (!strcmp(cmd, "jit-one") && argc == 3)
		return jit_one(strtoul(argv[2], NULL, 0));
	if (!strcmp(cmd, "sidecar-stale") && argc == 6)
		return sidecar_stale(argv[2], argv[3], argv[4], argv[5]);
	if (!strcmp(cmd, "sidecar-gone") && argc == 6)
		return sidecar_gone(argv[2], argv[3], argv[4], argv[5]);
	fprintf(stderr, "usage: %s query-userns UID | jit-fill UID | jit-one UID | sidecar-stale|sidecar-gone LIB SFRAME VADDR-FILE COPY\n",
		argv[0]);
	return 1;
}
