// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl warm: sections made ahead of use, into the cache only.
 *
 * The daemon registers a file's sidecar after a process has mapped it;
 * with the module's wait at first mapping (first_map_wait_ms) the process
 * waits for it, which costs the process little when the section is in the
 * cache and the time of a parse when it is not.  warm parses ahead: every
 * ELF executable or shared object under the paths given (directories
 * walked without following symbolic links or leaving their file system)
 * that has no SFrame of its own gets its section made, checked with the
 * decoder the module uses, and stored in the cache, as the daemon would
 * store it once the module took it.  Nothing is registered: a cached
 * section costs disk, not kernel memory, until a process maps its file.
 *
 * warm runs at the lowest CPU priority and in the idle I/O class, so a
 * package trigger or a user can start it at any time: it takes only what
 * nothing else wants.  Each file is read and parsed in the confined child
 * of sframectl-core.c, one at a time.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sframectl.h"

/* ioprio_set(2)'s values (linux/ioprio.h is not in every libc's headers). */
#define CTL_IOPRIO_WHO_PROCESS	1
#define CTL_IOPRIO_CLASS_IDLE	3
#define CTL_IOPRIO_CLASS_SHIFT	13
/* The nice value warm runs at: the lowest priority. */
#define CTL_WARM_NICE		19
/* Directories nftw() keeps open at once. */
#define CTL_WARM_FDS		16

/* What warm did, for its summary; nftw() calls back without a context. */
static struct {
	struct ctl_ctx *ctx;
	struct ctl_seen seen;
	struct ctl_tally tally;
	unsigned int bad_paths;
} ctl_warming;

/* Lowest CPU priority, idle I/O class; the children inherit both. */
static void ctl_warm_nice(void)
{
	if (setpriority(PRIO_PROCESS, 0, CTL_WARM_NICE))
		perror("sframectl: setpriority");
	if (syscall(SYS_ioprio_set, CTL_IOPRIO_WHO_PROCESS, 0,
		    CTL_IOPRIO_CLASS_IDLE << CTL_IOPRIO_CLASS_SHIFT))
		perror("sframectl: ioprio_set");
}

/* Is the file open at @fd an ELF executable or shared object? */
static bool ctl_warm_is_elf(int fd)
{
	Elf64_Ehdr eh;

	return pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) &&
	       !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	       eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	       (eh.e_type == ET_EXEC || eh.e_type == ET_DYN);
}

/* One file: once per version, if it is an ELF file of ours. */
static void ctl_warm_file(const char *path, const struct stat *st)
{
	struct ctl_key k = {
		.major = major(st->st_dev), .minor = minor(st->st_dev),
		.ino = st->st_ino, .size = st->st_size,
		.mtime_sec = st->st_mtim.tv_sec,
		.mtime_nsec = st->st_mtim.tv_nsec,
	};
	int fd;

	if (!S_ISREG(st->st_mode) || (u64)st->st_size < sizeof(Elf64_Ehdr) ||
	    (u64)st->st_size > CTL_FILE_MAX ||
	    !ctl_seen_add(&ctl_warming.seen, &k))
		return;
	fd = ctl_open_file(path);
	if (fd < 0) {
		/* Leased by its owner: said; gone since the walk saw it: not. */
		if (errno == EWOULDBLOCK)
			ctl_count(&ctl_warming.tally, CTL_BUSY);
		return;
	}
	if (ctl_warm_is_elf(fd))
		ctl_count(&ctl_warming.tally,
			  ctl_warm_one(ctl_warming.ctx, fd, path));
	close(fd);
}

static int ctl_warm_visit(const char *path, const struct stat *st, int type,
			  struct FTW *ftw)
{
	if (type == FTW_F)
		ctl_warm_file(path, st);
	return 0;
}

/* A path given: a file (followed if a symbolic link) or a directory. */
static void ctl_warm_path(const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		fprintf(stderr, "%s: %s: %s\n", ctl_prog, path,
			strerror(errno));
		ctl_warming.bad_paths++;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		ctl_warm_file(path, &st);
		return;
	}
	if (nftw(path, ctl_warm_visit, CTL_WARM_FDS, FTW_PHYS | FTW_MOUNT)) {
		fprintf(stderr, "%s: %s: %s\n", ctl_prog, path,
			strerror(errno));
		ctl_warming.bad_paths++;
	}
}

/**
 * ctl_warm() - the warm command
 * @ctx: the cache (open) and the child's deadline
 * @paths: files and directories
 * @nr: how many
 *
 * Files whose section cannot be made (no .eh_frame, say) are counted, as
 * the daemon would fail on them too; they are not an error of warm's.
 *
 * Return: 0, or 1 if the cache cannot be used or a path cannot be read.
 */
int ctl_warm(struct ctl_ctx *ctx, char **paths, int nr)
{
	int i;

	if (ctx->cache.dirfd < 0) {
		fprintf(stderr, "%s: warm: no cache to fill\n", ctl_prog);
		return 1;
	}
	ctl_warm_nice();
	ctl_warming.ctx = ctx;
	for (i = 0; i < nr; i++)
		ctl_warm_path(paths[i]);
	ctl_seen_free(&ctl_warming.seen);
	printf("warm: %u sections stored, %u cached already, %u files with SFrame of their own, %u not kept by the cache, %u failed, %u leased\n",
	       ctl_warming.tally.added, ctl_warming.tally.already,
	       ctl_warming.tally.own, ctl_warming.tally.uncached,
	       ctl_warming.tally.failed, ctl_warming.tally.busy);
	return ctl_warming.bad_paths ? 1 : 0;
}
