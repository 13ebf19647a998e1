// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl's core: the module's device, and the registration of one
 * file's sidecar, as add, sync (sframectl-sync.c) and the daemon's
 * workers (sframectl-pool.c) do it.  What it needs, the device, the cache
 * and the child's deadline, comes in a struct ctl_ctx.
 *
 * Registration needs CAP_SYS_ADMIN or CAP_PERFMON, so sframectl runs as
 * root, and it reads files that any user can create and run.  Each file
 * is parsed in a child process, which reads it once into a memfd under
 * the child's deadline (sframectl-child.c); the parent seals the memfd;
 * the child gives up its privileges (user and group nobody, no
 * supplementary groups), takes CPU-time and memory limits, and only then
 * maps the copy; it hands the section back through a pipe.  A hostile or
 * stalled file costs at most that child and its deadline, and the section
 * and the cache's digest (sframectl-cache.c) come from the same bytes,
 * whatever the file's server answers to another read.  The parent
 * registers the section with the descriptor it opened, so it is the file
 * the section came from.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sframe/format.h>
#include "gen.h"
#include "sframectl.h"

#define CTL_NOBODY		65534
/* Exit codes of the child besides 0 (a section follows) and 1 (failed). */
#define CTL_CHILD_HAS_SFRAME	3
/* What the parent tells the child once it knows the build-id. */
#define CTL_CMD_GENERATE	'g'
#define CTL_CMD_QUIT		'q'

/* A file's build-id, as the child found it. */
struct ctl_id {
	u32 len;
	u8 bytes[SFRAME_UNWIND_BUILD_ID_MAX];
};

/* The parent's side of one file's parsing child, and what came of it. */
struct ctl_talk {
	struct ctl_ctx *ctx;
	struct ctl_wait wait;		/* the child's deadline */
	pid_t pid;			/* the child */
	int in, out;			/* the pipes from it and to it */
	struct ctl_id id;
	struct ctl_cache_file cf;
	u8 *buf;			/* the section */
	u64 len, vaddr;
};

/**
 * ctl_ctx_init() - no device, no cache, the default deadline and copy bound
 * @ctx: the context
 */
void ctl_ctx_init(struct ctl_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->dev = -1;
	ctx->cache.dirfd = -1;
	ctx->child_timeout_s = CTL_CHILD_TIMEOUT_S;
	ctx->copy_max = CTL_FILE_MAX;
}

/**
 * ctl_open_dev() - open the module's device, or say what to do
 *
 * Return: the descriptor, or -1.
 */
int ctl_open_dev(void)
{
	int fd = open(SFRAME_UNWIND_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
		fprintf(stderr, "%s: %s: no such device: load the module first (modprobe sframe_unwind, or insmod sframe_unwind.ko)\n",
			ctl_prog, SFRAME_UNWIND_DEVICE);
	else
		fprintf(stderr, "%s: %s: %s\n", ctl_prog, SFRAME_UNWIND_DEVICE,
			strerror(errno));
	return -1;
}

/**
 * ctl_why() - what an ioctl's errno means here
 * @err: the errno
 *
 * Return: the text.
 */
const char *ctl_why(int err)
{
	switch (err) {
	case EPERM:
		return "permission denied: registering needs CAP_SYS_ADMIN or CAP_PERFMON (run as root)";
	case EEXIST:
		return "already registered (use --replace to replace it)";
	case ESTALE:
		return "the file changed while its section was made; try again";
	case EFBIG:
		return "section larger than the module's max_section_bytes";
	case ENOEXEC:
		return "not an ELF file of this machine";
	case EBADMSG:
		return "the module refused the section as corrupt";
	case ENOENT:
		return "not registered";
	default:
		return strerror(err);
	}
}

/*
 * An empty memfd for the copy of a file (@cf->data_fd).  The child fills
 * it (ctl_child_copy(): the only read of the file) and the parent seals
 * it (ctl_seal_copy()); the child parses those bytes and the cache
 * digests the same, however the file's server answers another read.
 */
static int ctl_open_copy(struct ctl_cache_file *cf)
{
	cf->data_fd = memfd_create("sframectl-file",
				   MFD_CLOEXEC | MFD_ALLOW_SEALING);
	return cf->data_fd < 0 ? -1 : 0;
}

/*
 * The child has copied @size bytes: no one writes the copy from now on.
 * Sealed only if it holds exactly what the child said.
 */
static int ctl_seal_copy(struct ctl_cache_file *cf, u64 size)
{
	struct stat st;

	if (fcntl(cf->data_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
		  F_SEAL_WRITE | F_SEAL_SEAL) ||
	    fstat(cf->data_fd, &st) || (u64)st.st_size != size || !size)
		return -1;
	cf->data_size = size;
	return 0;
}

/*
 * Child: keep only its descriptors, copy the file open at @file into the
 * memfd (the only read of it) and tell the parent its size on @out, give
 * up privileges, take limits and the system call filter, and map the copy
 * (sframectl-child.c); then tell the file's build-id on @out; if the
 * parent answers CTL_CMD_GENERATE on @in (its cache has no section for
 * it), parse and generate; the section goes to @out.
 */
static void ctl_child(const struct ctl_talk *t, int file, int out, int in,
		      const char *name)
{
	/*
	 * Shared rows and the SP word: the section lives in the module's
	 * memory only, and only its decoder reads it.
	 */
	struct gen_opts o = { .version = SFRAME_VERSION_3,
			      .vaddr = GEN_VADDR_PAST_IMAGE, .in = name,
			      .share_rows = true, .sp_word = true };
	int copy = t->cf.data_fd;
	struct elf_file f = { 0 };
	struct gen_err err;
	struct ctl_id id;
	u64 len, vaddr;
	char cmd;
	u8 *buf;
	int ret;

	ctl_child_keep(file, copy, out, in);
	f.size = ctl_child_copy(file, copy, t->ctx->copy_max, name);
	if (!f.size || write(out, &f.size, sizeof(f.size)) != sizeof(f.size))
		_exit(1);
	if (!geteuid() && (setgroups(0, NULL) || setgid(CTL_NOBODY) ||
			   setuid(CTL_NOBODY))) {
		perror("sframectl: dropping privileges");
		_exit(1);
	}
	if (ctl_child_confine(copy, &f, name)) {
		perror("sframectl: limits");
		_exit(1);
	}
	memset(&id, 0, sizeof(id));
	id.len = elf_build_id(&f, id.bytes, sizeof(id.bytes));
	if (write(out, &id, sizeof(id)) != sizeof(id) ||
	    read(in, &cmd, 1) != 1)
		_exit(1);
	if (cmd != CTL_CMD_GENERATE)
		_exit(0);
	ret = gen_section(&o, &f, &buf, &len, &vaddr, &err);
	if (ret == -EEXIST)
		_exit(CTL_CHILD_HAS_SFRAME);
	if (ret)
		fprintf(stderr, "%s: %s\n", ctl_prog, err.msg);
	if (ret || write(out, &vaddr, sizeof(vaddr)) != sizeof(vaddr) ||
	    write(out, &len, sizeof(len)) != sizeof(len) ||
	    write(out, buf, len) != (ssize_t)len)
		_exit(1);
	_exit(0);
}

/* @len bytes from the child, before its deadline; 0 or -1. */
static int ctl_read_all(const struct ctl_talk *t, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = ctl_child_read(&t->wait, t->in, (u8 *)buf + done,
				   len - done);
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

/* The section the child generates, into @t; 0 or -1. */
static int ctl_receive(struct ctl_talk *t)
{
	u8 *buf;

	if (ctl_read_all(t, &t->vaddr, sizeof(t->vaddr)) ||
	    ctl_read_all(t, &t->len, sizeof(t->len)) || !t->len ||
	    t->len > CTL_SECTION_MAX)
		return -1;
	buf = malloc(t->len);
	if (!buf)
		return -1;
	if (ctl_read_all(t, buf, t->len)) {
		free(buf);
		return -1;
	}
	t->buf = buf;
	return 0;
}

/*
 * 0 if the child ended well, -EEXIST if it found SFrame, else -1.  A
 * child left behind, in a read its file's server does not answer, is
 * told in the context (its parent must not end before it does).
 */
static int ctl_reap(const struct ctl_talk *t)
{
	int status, ret = ctl_child_wait(&t->wait, t->pid, &status);

	if (ret == -EAGAIN)
		t->ctx->left_pid = t->pid;
	if (ret || !WIFEXITED(status))
		return -1;
	if (WEXITSTATUS(status) == CTL_CHILD_HAS_SFRAME)
		return -EEXIST;
	return WEXITSTATUS(status) ? -1 : 0;
}

/*
 * Talk to the child: the size of its copy of the file (sealed then), its
 * build-id into t->id, then the section from the cache or from the child.
 */
static int ctl_converse(struct ctl_talk *t)
{
	char cmd = CTL_CMD_GENERATE;
	int ret, reaped;
	u64 size;
	bool hit;

	if (ctl_read_all(t, &size, sizeof(size)) ||
	    ctl_seal_copy(&t->cf, size) ||
	    ctl_read_all(t, &t->id, sizeof(t->id)) ||
	    t->id.len > sizeof(t->id.bytes)) {
		cmd = CTL_CMD_QUIT;
		if (write(t->out, &cmd, 1) != 1)
			kill(t->pid, SIGKILL);
		ctl_reap(t);
		return -1;
	}
	hit = !ctl_cache_load(&t->ctx->cache, &t->cf, t->id.bytes, t->id.len,
			      &t->buf, &t->len, &t->vaddr);
	if (hit)
		cmd = CTL_CMD_QUIT;
	ret = write(t->out, &cmd, 1) == 1 ? 0 : -1;
	if (!hit && !ret)
		ret = ctl_receive(t);
	reaped = ctl_reap(t);
	if (reaped == -EEXIST)
		ret = -EEXIST;
	else if (hit)
		ret = 0;	/* the child had nothing more to do */
	else if (reaped)
		ret = -1;	/* the child failed: trust nothing it wrote */
	if (ret && !hit && t->buf) {
		free(t->buf);
		t->buf = NULL;
	}
	return ret;
}

/*
 * The section for the file open at @fd, from the cache or made by a
 * child, and the file's build-id, into @t; 0, -EEXIST if the file has
 * SFrame of its own, or -1.
 */
static int ctl_generate(struct ctl_talk *t, int fd, const char *name)
{
	int up[2], down[2], ret = -1;

	t->buf = NULL;
	if (ctl_open_copy(&t->cf))
		return -1;
	if (pipe2(up, O_CLOEXEC))
		return -1;
	if (pipe2(down, O_CLOEXEC))
		goto close_up;
	fflush(NULL);
	t->pid = fork();
	if (!t->pid) {
		close(up[0]);
		close(down[1]);
		ctl_child(t, fd, up[1], down[0], name);
	}
	ctl_child_started(&t->wait, name, t->ctx->child_timeout_s);
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	t->in = up[0];
	t->out = down[1];
	if (t->pid > 0)
		ret = ctl_converse(t);
	close(down[1]);
close_up:
	close(up[0]);
	if (up[1] >= 0)
		close(up[1]);
	return ret;
}

/**
 * ctl_open_file() - open a user's file without waiting on it
 * @path: the file
 *
 * A lease makes open() fail with EWOULDBLOCK instead of waiting for its
 * owner (up to lease-break-time), and reading the file leaves its access
 * time alone where we may say so.
 *
 * Return: the descriptor, or -1 (errno set).
 */
int ctl_open_file(const char *path)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;
	int fd = open(path, flags | O_NOATIME);

	if (fd < 0 && errno == EPERM)
		fd = open(path, flags);	/* not ours, and no CAP_FOWNER */
	return fd;
}

static int ctl_file_ioctl(int dev, unsigned long cmd, int fd, u32 flags,
			  const struct ctl_id *id, const u8 *buf, u64 len,
			  u64 vaddr)
{
	struct sframe_unwind_file a = {
		.size = sizeof(a),
		.flags = flags,
		.fd = fd,
		.sframe_vaddr = vaddr,
		.sframe_ptr = (uintptr_t)buf,
		.sframe_len = len,
	};

	/* The kernel checks that the file it sees has this build-id. */
	if (id && id->len) {
		a.build_id_len = id->len;
		memcpy(a.build_id, id->bytes, id->len);
	}
	return ioctl(dev, cmd, &a) ? -errno : 0;
}

/**
 * ctl_drop_file() - drop the sidecar of a file
 * @dev: the device
 * @fd: the file
 *
 * Return: 0, or a negative errno.
 */
int ctl_drop_file(int dev, int fd)
{
	return ctl_file_ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE, fd, 0, NULL,
			      NULL, 0, 0);
}

/*
 * The daemon's workers tell the module that the file open at @fd gets no
 * section, so that no task waits for it (SFRAME_UNWIND_NO_SECTION).
 */
static void ctl_say_failed(const struct ctl_ctx *ctx, int fd)
{
	if (ctx->say_failed)
		ctl_no_section(ctx->dev, fd);
}

/**
 * ctl_no_section() - tell the module that no section can be made for a file
 * @dev: the module's device
 * @fd: the file
 *
 * Tasks that wait at the file's first mapping go on, and later mappings of
 * it do not wait (SFRAME_UNWIND_NO_SECTION).
 *
 * Return: 0 or a negative errno.
 */
int ctl_no_section(int dev, int fd)
{
	return ctl_file_ioctl(dev, SFRAME_UNWIND_IOC_ADD_FILE, fd,
			      SFRAME_UNWIND_NO_SECTION, NULL, NULL, 0, 0);
}

/**
 * ctl_add_one() - generate and register a sidecar
 * @ctx: the device, the cache and the child's deadline
 * @path: where to open the file
 * @name: what to call it in messages
 * @flags: 0 or SFRAME_UNWIND_REPLACE
 * @quiet: say nothing of a file that has SFrame or a sidecar already
 *
 * Return: what happened.
 */
enum ctl_result ctl_add_one(struct ctl_ctx *ctx, const char *path,
			    const char *name, u32 flags, bool quiet)
{
	int fd = ctl_open_file(path);
	struct ctl_talk t = { .ctx = ctx, .cf.fd = fd, .cf.data_fd = -1 };
	enum ctl_result res = CTL_FAILED;
	struct stat st;
	int ret;

	if (fd < 0 && errno == EWOULDBLOCK) {
		fprintf(stderr, "%s: %s: its owner holds a lease on it; skipped for now\n",
			ctl_prog, name);
		return CTL_BUSY;
	}
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: %s: %s\n", ctl_prog, name,
			fd < 0 ? strerror(errno) : "not a regular file");
		goto close_fd;
	}
	if (ctx->expect_ino && st.st_ino != ctx->expect_ino &&
	    !ctl_fs_inode_differs(fd)) {
		/* Mapped there since: that file has an event of its own. */
		res = CTL_BUSY;
		goto close_fd;
	}
	ret = ctl_generate(&t, fd, name);
	if (ret == -EEXIST) {
		if (!quiet)
			printf("%s: has SFrame of its own\n", name);
		res = CTL_HAS_SFRAME;
		goto close_fd;
	}
	if (ret) {
		fprintf(stderr, "%s: %s: no section made (see above)\n",
			ctl_prog, name);
		ctl_say_failed(ctx, fd);
		goto close_fd;
	}
	ret = ctl_file_ioctl(ctx->dev, SFRAME_UNWIND_IOC_ADD_FILE, fd, flags,
			     &t.id, t.buf, t.len, t.vaddr);
	/* Cached once the module took it: a section it refuses is not. */
	if (!ret)
		ctl_cache_store(&ctx->cache, &t.cf, t.id.bytes, t.id.len,
				t.buf, t.len, t.vaddr);
	free(t.buf);
	if (ret == -EEXIST && !(flags & SFRAME_UNWIND_REPLACE) && quiet) {
		res = CTL_ALREADY;
	} else if (ret) {
		fprintf(stderr, "%s: %s: %s\n", ctl_prog, name, ctl_why(-ret));
		ctl_say_failed(ctx, fd);
	} else {
		printf("%s: registered %" PRIu64 " bytes of SFrame V3\n", name,
		       t.len);
		res = CTL_ADDED;
	}
close_fd:
	if (t.cf.data_fd >= 0)
		close(t.cf.data_fd);
	if (fd >= 0)
		close(fd);
	return res;
}

/**
 * ctl_warm_one() - make a file's section and store it in the cache only
 * @ctx: the cache (open) and the child's deadline; no device
 * @fd: the file, opened with ctl_open_file(); the caller closes it
 * @name: what to call it in messages
 *
 * The section is checked with the module's decoder, since no module takes
 * it first (sframectl-warm.c).
 *
 * Return: CTL_ADDED (stored), CTL_ALREADY (the cache has it),
 * CTL_HAS_SFRAME, CTL_UNCACHED (a file the cache does not keep: no
 * build-id, or others may write it) or CTL_FAILED.
 */
enum ctl_result ctl_warm_one(struct ctl_ctx *ctx, int fd, const char *name)
{
	struct ctl_talk t = { .ctx = ctx, .cf.fd = fd, .cf.data_fd = -1 };
	enum ctl_result res = CTL_FAILED;
	unsigned int stores = ctx->cache.stores;
	int ret;

	ret = ctl_generate(&t, fd, name);
	if (ret == -EEXIST) {
		res = CTL_HAS_SFRAME;
	} else if (!ret && t.cf.hit) {
		res = CTL_ALREADY;
	} else if (!ret && !ctl_cache_section_ok(t.buf, t.len, t.vaddr)) {
		fprintf(stderr, "%s: %s: the decoder refuses the section made\n",
			ctl_prog, name);
	} else if (!ret) {
		ctl_cache_store(&ctx->cache, &t.cf, t.id.bytes, t.id.len,
				t.buf, t.len, t.vaddr);
		res = ctx->cache.stores != stores ? CTL_ADDED : CTL_UNCACHED;
	}
	free(t.buf);
	if (t.cf.data_fd >= 0)
		close(t.cf.data_fd);
	return res;
}
