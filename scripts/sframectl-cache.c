// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl's sidecar cache: sections made once, kept on disk by build-id.
 *
 * Each entry is a file DIR/<build-id in hex>.sframe: a header (magic, the
 * format of the entry, the version of sframectl that made it, the build-id,
 * the section's link-time address, length and checksum) and the section.  An entry
 * is written to a temporary file in DIR and renamed over its name, so a
 * reader sees a whole entry or none.  On load everything is checked: the
 * header, the length against the file's size, and the section itself with
 * the decoder the module uses; an entry that fails any check is removed
 * and made again.  An entry made by another version of sframectl is made
 * again too, so a fixed generator replaces what an older one wrote.
 *
 * The directory is bounded: after each store, entries are removed oldest
 * first (by modification time, which a hit refreshes) until the total is
 * within the limit.  Files without a build-id are not cached: nothing
 * names their contents.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../include/sframe/decode.h"
#include "../include/sframe/version.h"
#include "sframectl.h"

#define CTL_CACHE_MAGIC		"SFUCACHE"
#define CTL_CACHE_FORMAT	1
#define CTL_CACHE_SUFFIX	".sframe"
#define CTL_CACHE_VERSION_MAX	32
/* FNV-1a, 64 bits: catches a damaged entry, not a forged one. */
#define CTL_FNV_OFFSET		0xcbf29ce484222325ULL
#define CTL_FNV_PRIME		0x100000001b3ULL

struct ctl_cache_hdr {
	char magic[8];
	u32 format;
	u32 build_id_len;
	u8 build_id[SFRAME_UNWIND_BUILD_ID_MAX];
	char version[CTL_CACHE_VERSION_MAX];	/* sframectl's, NUL-padded */
	u64 vaddr;
	u64 len;
	u64 sum;				/* of the section */
};

/* One entry, as the size bound sees it. */
struct ctl_cache_ent {
	char name[NAME_MAX + 1];
	off_t size;
	struct timespec mtime;
};

/**
 * ctl_cache_open() - open (and make) the cache directory
 * @c: the cache
 * @dir: its path
 * @max_bytes: the most its entries may take
 *
 * On failure the cache stays off (@c->dirfd < 0) and the message says
 * what to do; sframectl works on without it.
 *
 * Return: 0, or -1.
 */
int ctl_cache_open(struct ctl_cache *c, const char *dir, u64 max_bytes)
{
	c->dir = dir;
	c->max_bytes = max_bytes;
	c->dirfd = -1;
	if (mkdir(dir, 0700) && errno != EEXIST)
		goto fail;
	c->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd < 0)
		goto fail;
	/* Can we write in it?  A read-only /var says so here. */
	if (faccessat(c->dirfd, ".", W_OK, AT_EACCESS)) {
		close(c->dirfd);
		c->dirfd = -1;
		goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "%s: cache %s: %s; going on without a cache (give a writable directory with --cache DIR, or --no-cache)\n",
		ctl_prog, dir, strerror(errno));
	return -1;
}

void ctl_cache_close(struct ctl_cache *c)
{
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
}

static void ctl_cache_name(const u8 *id, size_t id_len, char *name)
{
	size_t i;

	for (i = 0; i < id_len; i++)
		sprintf(name + 2 * i, "%02x", id[i]);
	memcpy(name + 2 * id_len, CTL_CACHE_SUFFIX, sizeof(CTL_CACHE_SUFFIX));
}

static u64 ctl_cache_sum(const u8 *buf, u64 len)
{
	u64 h = CTL_FNV_OFFSET, i;

	for (i = 0; i < len; i++)
		h = (h ^ buf[i]) * CTL_FNV_PRIME;
	return h;
}

static void ctl_cache_hdr_init(struct ctl_cache_hdr *h, const u8 *id,
			       size_t id_len, u64 vaddr, u64 len, u64 sum)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, CTL_CACHE_MAGIC, sizeof(h->magic));
	h->format = CTL_CACHE_FORMAT;
	h->build_id_len = id_len;
	memcpy(h->build_id, id, id_len);
	snprintf(h->version, sizeof(h->version), "%s", SFU_VERSION);
	h->vaddr = vaddr;
	h->len = len;
	h->sum = sum;
}

/* Does @buf hold a section of this machine that the decoder accepts? */
static bool ctl_cache_section_ok(const u8 *buf, u64 len, u64 vaddr)
{
	struct sfu_section sec;
	int ret;

	ret = sfu_section_init(&sec, (unsigned long)buf, len, vaddr,
			       SFU_MEM_KERNEL, sfu_native_abi());
	if (ret)
		return false;
	ret = sfu_section_validate(&sec, SFU_MEM_KERNEL);
	sfu_section_destroy(&sec);
	return !ret;
}

/*
 * Read and check the entry open at @fd; the section in *@bufp (to free),
 * or -1.
 */
static int ctl_cache_read(int fd, const u8 *id, size_t id_len, u8 **bufp,
			  u64 *lenp, u64 *vaddrp)
{
	struct ctl_cache_hdr want, h;
	struct stat st;
	u8 *buf;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (u64)st.st_size < sizeof(h) ||
	    pread(fd, &h, sizeof(h), 0) != sizeof(h))
		return -1;
	ctl_cache_hdr_init(&want, id, id_len, h.vaddr, h.len, h.sum);
	if (memcmp(&h, &want, sizeof(h)) || !h.len ||
	    h.len > CTL_SECTION_MAX || h.len != st.st_size - sizeof(h))
		return -1;
	buf = malloc(h.len);
	if (!buf)
		return -1;
	if (pread(fd, buf, h.len, sizeof(h)) != (ssize_t)h.len ||
	    ctl_cache_sum(buf, h.len) != h.sum ||
	    !ctl_cache_section_ok(buf, h.len, h.vaddr)) {
		free(buf);
		return -1;
	}
	*bufp = buf;
	*lenp = h.len;
	*vaddrp = h.vaddr;
	return 0;
}

/**
 * ctl_cache_load() - the cached section of a build-id
 * @c: the cache
 * @id: the file's build-id
 * @id_len: its length (0: not cached)
 * @bufp: the section, malloc()ed, on success
 * @lenp: its length
 * @vaddrp: its link-time address
 *
 * A hit refreshes the entry's age.  An entry that fails a check is
 * removed.
 *
 * Return: 0 on a hit, -1 on a miss.
 */
int ctl_cache_load(struct ctl_cache *c, const u8 *id, size_t id_len,
		   u8 **bufp, u64 *lenp, u64 *vaddrp)
{
	char name[2 * SFRAME_UNWIND_BUILD_ID_MAX + sizeof(CTL_CACHE_SUFFIX)];
	int fd, ret;

	if (c->dirfd < 0 || !id_len)
		return -1;
	ctl_cache_name(id, id_len, name);
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = ctl_cache_read(fd, id, id_len, bufp, lenp, vaddrp);
	if (ret) {
		fprintf(stderr, "%s: cache %s/%s: not a valid entry; removed\n",
			ctl_prog, c->dir, name);
		unlinkat(c->dirfd, name, 0);
	} else {
		futimens(fd, NULL);
		c->hits++;
	}
	close(fd);
	return ret;
}

static int ctl_cache_ent_cmp(const void *a, const void *b)
{
	const struct ctl_cache_ent *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return 0;
}

/* The entries of the cache, in *@entsp (to free); their count or -1. */
static ssize_t ctl_cache_list(struct ctl_cache *c,
			      struct ctl_cache_ent **entsp, u64 *total)
{
	struct ctl_cache_ent *ents = NULL, *p;
	size_t nr = 0, cap = 0;
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int fd;

	fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*total = 0;
	while ((d = readdir(dir))) {
		size_t n = strlen(d->d_name);

		if (n <= strlen(CTL_CACHE_SUFFIX) ||
		    strcmp(d->d_name + n - strlen(CTL_CACHE_SUFFIX),
			   CTL_CACHE_SUFFIX) ||
		    fstatat(c->dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (nr == cap) {
			cap = cap ? 2 * cap : 64;
			p = realloc(ents, cap * sizeof(*ents));
			if (!p)
				break;
			ents = p;
		}
		snprintf(ents[nr].name, sizeof(ents[nr].name), "%s",
			 d->d_name);
		ents[nr].size = st.st_size;
		ents[nr].mtime = st.st_mtim;
		*total += st.st_size;
		nr++;
	}
	closedir(dir);
	*entsp = ents;
	return nr;
}

/* Remove the oldest entries until the cache is within its bound. */
static void ctl_cache_trim(struct ctl_cache *c)
{
	struct ctl_cache_ent *ents;
	ssize_t nr, i;
	u64 total;

	nr = ctl_cache_list(c, &ents, &total);
	if (nr < 0)
		return;
	qsort(ents, nr, sizeof(*ents), ctl_cache_ent_cmp);
	for (i = 0; i < nr && total > c->max_bytes; i++)
		if (!unlinkat(c->dirfd, ents[i].name, 0))
			total -= ents[i].size;
	free(ents);
}

static int ctl_write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, (const u8 *)buf + done, len - done);
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

/**
 * ctl_cache_store() - keep a section for a build-id
 * @c: the cache
 * @id: the file's build-id
 * @id_len: its length (0: not cached)
 * @buf: the section
 * @len: its length
 * @vaddr: its link-time address
 *
 * Written to a temporary file, then renamed over the entry's name; the
 * oldest entries then go until the cache is within its bound.  A failure
 * is reported and otherwise ignored: the cache only saves work.
 */
void ctl_cache_store(struct ctl_cache *c, const u8 *id, size_t id_len,
		     const u8 *buf, u64 len, u64 vaddr)
{
	char name[2 * SFRAME_UNWIND_BUILD_ID_MAX + sizeof(CTL_CACHE_SUFFIX)];
	char tmp[sizeof(name) + 32];
	struct ctl_cache_hdr h;
	int fd;

	if (c->dirfd < 0 || !id_len || sizeof(h) + len > c->max_bytes)
		return;
	ctl_cache_name(id, id_len, name);
	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0600);
	if (fd < 0)
		goto fail;
	ctl_cache_hdr_init(&h, id, id_len, vaddr, len, ctl_cache_sum(buf, len));
	if (ctl_write_all(fd, &h, sizeof(h)) || ctl_write_all(fd, buf, len) ||
	    fsync(fd)) {
		close(fd);
		goto remove_tmp;
	}
	close(fd);
	if (renameat(c->dirfd, tmp, c->dirfd, name))
		goto remove_tmp;
	c->stores++;
	ctl_cache_trim(c);
	return;
remove_tmp:
	unlinkat(c->dirfd, tmp, 0);
fail:
	fprintf(stderr, "%s: cache %s: cannot store %s: %s\n", ctl_prog,
		c->dir, name, strerror(errno));
}
