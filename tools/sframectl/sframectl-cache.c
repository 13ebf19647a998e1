// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl's sidecar cache: sections made once, kept on disk by build-id.
 *
 * Each entry is a file DIR/<build-id in hex>.sframe: a header (magic, the
 * format of the entry, the version of sframectl that made it, the build-id,
 * who could write the file it was made from, that file's SHA-256, the
 * section's link-time address, length and checksum) and the section.  An
 * entry is written to a temporary file in DIR and renamed over its name, so
 * a reader sees a whole entry or none.  On load everything is checked: the
 * header, the length against the file's size, and the section itself with
 * the decoder the module uses; an entry that fails any check is removed
 * and made again.  An entry made by another version of sframectl is made
 * again too, so a fixed generator replaces what an older one wrote.
 *
 * A build-id is bytes in a file that anyone may write, so it only names an
 * entry; what binds the entry to a file is the digest of the file's whole
 * contents, computed here (by the root parent, never by the child that
 * parses the file) and compared on every hit: another file with the same
 * build-id misses and gets a section of its own.  The digest is taken of
 * the sealed copy the child parsed (sframectl-core.c), so the section and
 * the digest come from the same bytes, whatever a second read of the
 * file would give.  The file is digested only when there is an entry to
 * compare it with, or after the module accepted its section, to store
 * one.  An entry is kept for the one user who could write the file (its
 * owner; root's entries are named DIR/<build-id>.sframe, another user's
 * DIR/<build-id>.u<uid>.sframe) and served to files of that owner only,
 * except root's, which serve every file with the same contents.  Files
 * that group or others may write are not cached, nor files on a file
 * system sframectl does not trust (sframectl-fs.c: FUSE, whose server
 * makes up owners and contents, an overlay, any file system not on its
 * list).  An entry is stored only once the module accepted its section.
 *
 * The directory is bounded, in the blocks its entries take on disk and in
 * entries: once a store may have passed a bound (known from the last
 * listing of the directory and what was stored since), entries are
 * removed oldest first (by modification time, which a hit refreshes)
 * until both hold.  A listing also removes the temporary files of writers
 * that died before their rename, once they are CTL_CACHE_STALE_S old.
 * Files without a build-id are not cached: nothing names their contents.
 * The directory itself must be root's and no one else's (mode 0700 or
 * stricter, not a symbolic link), or it is not used.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <sframe/decode.h>
#include <sframe/version.h>
#include "sframectl.h"

#define CTL_CACHE_MAGIC		"SFUCACHE"
/*
 * 2: the writer and the digest of the file.  3: sections may have the
 * module's SP word (sframe-gen --sp-word), so entries of 2 are made again.
 */
#define CTL_CACHE_FORMAT	3
#define CTL_CACHE_SUFFIX	".sframe"
/* A writer's temporary file: ".<entry's name>.<pid>.tmp". */
#define CTL_CACHE_TMP_SUFFIX	".tmp"
/* The age at which a temporary file was left by a writer that died. */
#define CTL_CACHE_STALE_S	600
/* The unit of struct stat's st_blocks on Linux. */
#define CTL_STAT_BLOCK		512
#define CTL_CACHE_VERSION_MAX	32
/* DIR/<build-id>[.u<uid>].sframe */
#define CTL_CACHE_NAME_MAX	(2 * SFRAME_UNWIND_BUILD_ID_MAX + \
				 sizeof(".u4294967295") + \
				 sizeof(CTL_CACHE_SUFFIX))
/* The cache directory's mode: its owner's alone, group and others out. */
#define CTL_CACHE_DIR_MODE	0700
#define CTL_CACHE_DIR_OTHERS	0077
/* The longest reason a directory is refused for. */
#define CTL_CACHE_WHY_MAX	64
/* Mode bits that let users besides a file's owner write it. */
#define CTL_MODE_OTHERS_WRITE	0022
/* The file is read in pieces of this size to digest it. */
#define CTL_DIGEST_CHUNK	(64 << 10)
/* FNV-1a, 64 bits: catches a damaged entry, not a forged one. */
#define CTL_FNV_OFFSET		0xcbf29ce484222325ULL
#define CTL_FNV_PRIME		0x100000001b3ULL

struct ctl_cache_hdr {
	char magic[8];
	u32 format;
	u32 build_id_len;
	u8 build_id[SFRAME_UNWIND_BUILD_ID_MAX];
	u32 writer;				/* who could write the file */
	u8 digest[SHA256_DIGEST_LENGTH];	/* of the file */
	char version[CTL_CACHE_VERSION_MAX];	/* sframectl's, NUL-padded */
	u64 vaddr;
	u64 len;
	u64 sum;				/* of the section */
};

/* One entry, as the size bound sees it. */
struct ctl_cache_ent {
	char name[NAME_MAX + 1];
	u64 size;			/* on disk */
	struct timespec mtime;
};

/* The cache directory @dir is refused: say why and what to do. */
static int ctl_cache_refuse(const char *dir, const char *why)
{
	fprintf(stderr, "%s: cache %s: %s; going on without a cache (give a directory of root's, mode 0700, with --cache DIR, or --no-cache)\n",
		ctl_prog, dir, why);
	return -1;
}

/*
 * Is the directory open at @fd root's (sframectl's user's) alone?  Others
 * could otherwise plant entries in it or swap them between check and use.
 */
static int ctl_cache_dir_check(int fd, const char *dir)
{
	char why[CTL_CACHE_WHY_MAX];
	struct stat st;

	if (fstat(fd, &st))
		return ctl_cache_refuse(dir, strerror(errno));
	if (st.st_uid != geteuid()) {
		snprintf(why, sizeof(why), "owned by uid %u, not root",
			 (unsigned int)st.st_uid);
		return ctl_cache_refuse(dir, why);
	}
	if (st.st_mode & CTL_CACHE_DIR_OTHERS) {
		snprintf(why, sizeof(why), "mode %04o lets others in (chmod 700 it)",
			 (unsigned int)(st.st_mode & ~S_IFMT));
		return ctl_cache_refuse(dir, why);
	}
	/* Can we write in it?  A read-only /var says so here. */
	if (faccessat(fd, ".", W_OK, AT_EACCESS))
		return ctl_cache_refuse(dir, strerror(errno));
	return 0;
}

/* Why @dir could not be opened (as a directory, not following a link). */
static int ctl_cache_open_failed(const char *dir)
{
	struct stat st;
	int err = errno;

	if ((err == ENOTDIR || err == ELOOP) && !lstat(dir, &st) &&
	    S_ISLNK(st.st_mode))
		return ctl_cache_refuse(dir, "a symbolic link");
	return ctl_cache_refuse(dir, strerror(err));
}

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
	c->max_entries = CTL_CACHE_MAX_ENTRIES;
	c->listed = false;
	c->dirfd = -1;
	if (mkdir(dir, CTL_CACHE_DIR_MODE) && errno != EEXIST)
		return ctl_cache_refuse(dir, strerror(errno));
	c->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dirfd < 0)
		return ctl_cache_open_failed(dir);
	if (ctl_cache_dir_check(c->dirfd, dir)) {
		close(c->dirfd);
		c->dirfd = -1;
		return -1;
	}
	return 0;
}

void ctl_cache_close(struct ctl_cache *c)
{
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
}

/* The name of @writer's entry for build-id @id. */
static void ctl_cache_name(const u8 *id, size_t id_len, u32 writer,
			   char *name)
{
	size_t i;

	for (i = 0; i < id_len; i++)
		sprintf(name + 2 * i, "%02x", id[i]);
	name += 2 * id_len;
	if (writer)
		name += sprintf(name, ".u%u", (unsigned int)writer);
	memcpy(name, CTL_CACHE_SUFFIX, sizeof(CTL_CACHE_SUFFIX));
}

static u64 ctl_cache_sum(const u8 *buf, u64 len)
{
	u64 h = CTL_FNV_OFFSET, i;

	for (i = 0; i < len; i++)
		h = (h ^ buf[i]) * CTL_FNV_PRIME;
	return h;
}

/* The section an entry holds, and what it was made from. */
struct ctl_cache_sec {
	const u8 *id;
	size_t id_len;
	u32 writer;
	const u8 *digest;
	u64 vaddr, len, sum;
};

static void ctl_cache_hdr_init(struct ctl_cache_hdr *h,
			       const struct ctl_cache_sec *e)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, CTL_CACHE_MAGIC, sizeof(h->magic));
	h->format = CTL_CACHE_FORMAT;
	h->build_id_len = e->id_len;
	memcpy(h->build_id, e->id, e->id_len);
	h->writer = e->writer;
	memcpy(h->digest, e->digest, sizeof(h->digest));
	snprintf(h->version, sizeof(h->version), "%s", SFU_VERSION);
	h->vaddr = e->vaddr;
	h->len = e->len;
	h->sum = e->sum;
}

/* The SHA-256 (libmd) of the @size bytes of the file open at @fd; 0 or -1. */
static int ctl_cache_digest(int fd, u64 size, u8 *digest)
{
	SHA2_CTX s;
	u64 off = 0;
	ssize_t n;
	u8 *buf;

	buf = malloc(CTL_DIGEST_CHUNK);
	if (!buf)
		return -1;
	SHA256Init(&s);
	while (off < size) {
		n = pread(fd, buf, size - off < CTL_DIGEST_CHUNK ?
			  size - off : CTL_DIGEST_CHUNK, off);
		if (n <= 0)
			break;
		SHA256Update(&s, buf, n);
		off += n;
	}
	free(buf);
	SHA256Final(digest, &s);
	return off == size ? 0 : -1;
}

/*
 * Who alone could have written the file open at @fd: false if the file is
 * not to be cached (others may write it, or it is on a file system
 * sframectl does not trust).  Asked once per file, when first needed.
 */
static bool ctl_cache_file_ok(struct ctl_cache_file *f)
{
	struct statfs sfs;
	struct stat st;

	if (f->checked)
		return f->cacheable;
	f->checked = true;
	f->cacheable = false;
	if (fstat(f->fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_mode & CTL_MODE_OTHERS_WRITE) ||
	    !f->data_size || f->data_size > CTL_FILE_MAX ||
	    fstatfs(f->fd, &sfs) || !ctl_fs_magic_trusted(sfs.f_type))
		return false;
	f->writer = st.st_uid;
	f->cacheable = true;
	return true;
}

/*
 * The digest of a cacheable file, taken the first time an entry is to be
 * compared with it or stored for it: reading a whole file is the cache's
 * largest cost, and a file with no entry needs none until the module has
 * its section.
 */
static bool ctl_cache_file_digest(struct ctl_cache_file *f)
{
	if (!ctl_cache_file_ok(f))
		return false;
	if (!f->digested) {
		f->digested = true;
		if (ctl_cache_digest(f->data_fd, f->data_size, f->digest))
			f->cacheable = false;
	}
	return f->cacheable;
}

/**
 * ctl_cache_section_ok() - does the decoder accept a section of this machine
 * @buf: the section
 * @len: its length
 * @vaddr: its link-time address
 *
 * Return: true if it does.
 */
bool ctl_cache_section_ok(const u8 *buf, u64 len, u64 vaddr)
{
	struct sfu_section sec;

	if (sfu_section_open(&sec, buf, len, vaddr, sfu_native_abi(),
			     SFU_OPEN_VALIDATE))
		return false;
	sfu_section_destroy(&sec);
	return true;
}

/*
 * Read and check @want's entry, open at @fd: the section in *@bufp (to
 * free) and 0; 1 if the entry is whole but was made from other contents
 * (a miss, not a damaged entry); -1 if it is damaged.
 */
static int ctl_cache_read(int fd, struct ctl_cache_sec *want, u8 **bufp)
{
	struct ctl_cache_hdr expect, h;
	struct ctl_cache_sec got;
	struct stat st;
	u8 *buf;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (u64)st.st_size < sizeof(h) ||
	    pread(fd, &h, sizeof(h), 0) != sizeof(h))
		return -1;
	got = *want;
	got.digest = h.digest;
	got.vaddr = h.vaddr;
	got.len = h.len;
	got.sum = h.sum;
	ctl_cache_hdr_init(&expect, &got);
	if (memcmp(&h, &expect, sizeof(h)) || !h.len ||
	    h.len > CTL_SECTION_MAX || h.len != st.st_size - sizeof(h))
		return -1;
	if (memcmp(h.digest, want->digest, sizeof(h.digest)))
		return 1;
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
	want->vaddr = h.vaddr;
	want->len = h.len;
	return 0;
}

/*
 * Load @want's entry (its writer's) for the file @f; 0 on a hit, else -1.
 * The file is digested only if there is an entry to compare it with.
 */
static int ctl_cache_load_as(struct ctl_cache *c, struct ctl_cache_file *f,
			     struct ctl_cache_sec *want, u8 **bufp)
{
	char name[CTL_CACHE_NAME_MAX];
	int fd, ret;

	ctl_cache_name(want->id, want->id_len, want->writer, name);
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!ctl_cache_file_digest(f)) {
		close(fd);
		return -1;
	}
	want->digest = f->digest;
	ret = ctl_cache_read(fd, want, bufp);
	if (ret < 0) {
		fprintf(stderr, "%s: cache %s/%s: not a valid entry; removed\n",
			ctl_prog, c->dir, name);
		unlinkat(c->dirfd, name, 0);
	} else if (!ret) {
		futimens(fd, NULL);
		c->hits++;
	}
	close(fd);
	return ret ? -1 : 0;
}

/**
 * ctl_cache_load() - the cached section of a file
 * @c: the cache
 * @f: the file, as the cache knows it (its descriptor set)
 * @id: its build-id
 * @id_len: its length (0: not cached)
 * @bufp: the section, malloc()ed, on success
 * @lenp: its length
 * @vaddrp: its link-time address
 *
 * Root's entry of the build-id serves any file with the same contents;
 * the entry of the file's owner, a file of that owner only.  A hit
 * refreshes the entry's age.  An entry that fails a check is removed;
 * one made from other contents is a miss.
 *
 * Return: 0 on a hit, -1 on a miss.
 */
int ctl_cache_load(struct ctl_cache *c, struct ctl_cache_file *f,
		   const u8 *id, size_t id_len, u8 **bufp, u64 *lenp,
		   u64 *vaddrp)
{
	struct ctl_cache_sec want = { .id = id, .id_len = id_len };

	if (c->dirfd < 0 || !id_len || !ctl_cache_file_ok(f))
		return -1;
	if (ctl_cache_load_as(c, f, &want, bufp)) {
		want.writer = f->writer;
		if (!f->writer || ctl_cache_load_as(c, f, &want, bufp))
			return -1;
	}
	f->hit = true;
	*lenp = want.len;
	*vaddrp = want.vaddr;
	return 0;
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

static bool ctl_ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n > s && !strcmp(name + n - s, suffix);
}

/* The bytes a file takes on disk, as du counts them. */
static u64 ctl_disk_bytes(const struct stat *st)
{
	return (u64)st->st_blocks * CTL_STAT_BLOCK;
}

/*
 * Remove @name if it is a temporary file that its writer, dead, left
 * behind; true if it is a temporary file at all.
 */
static bool ctl_cache_stale_tmp(struct ctl_cache *c, const char *name)
{
	struct stat st;

	if (name[0] != '.' || !ctl_ends_with(name, CTL_CACHE_TMP_SUFFIX))
		return false;
	if (!fstatat(c->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    st.st_mtime + CTL_CACHE_STALE_S < time(NULL))
		unlinkat(c->dirfd, name, 0);
	return true;
}

/*
 * The entries of the cache, in *@entsp (to free), and the bytes they take
 * on disk, in *@total; their count or -1.  Stale temporary files go.
 */
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
		if (ctl_cache_stale_tmp(c, d->d_name) ||
		    !ctl_ends_with(d->d_name, CTL_CACHE_SUFFIX) ||
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
		ents[nr].size = ctl_disk_bytes(&st);
		ents[nr].mtime = st.st_mtim;
		*total += ents[nr].size;
		nr++;
	}
	closedir(dir);
	*entsp = ents;
	return nr;
}

static bool ctl_cache_over(const struct ctl_cache *c, u64 bytes,
			   size_t entries)
{
	return bytes > c->max_bytes || entries > c->max_entries;
}

/*
 * Remove the oldest entries until the cache is within its bounds; the
 * directory is listed only if a bound may have been passed since the last
 * listing (or there was none).
 */
static void ctl_cache_trim(struct ctl_cache *c)
{
	struct ctl_cache_ent *ents;
	ssize_t nr, i, left;
	u64 total;

	if (c->listed && !ctl_cache_over(c, c->bytes, c->entries))
		return;
	nr = ctl_cache_list(c, &ents, &total);
	if (nr < 0)
		return;
	qsort(ents, nr, sizeof(*ents), ctl_cache_ent_cmp);
	left = nr;
	for (i = 0; i < nr && ctl_cache_over(c, total, left); i++) {
		if (!unlinkat(c->dirfd, ents[i].name, 0)) {
			total -= ents[i].size;
			left--;
		}
	}
	free(ents);
	c->listed = true;
	c->bytes = total;
	c->entries = left;
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
 * ctl_cache_store() - keep a section the module accepted for a file
 * @c: the cache
 * @f: the file, as ctl_cache_load() left it
 * @id: its build-id
 * @id_len: its length (0: not cached)
 * @buf: the section
 * @len: its length
 * @vaddr: its link-time address
 *
 * Kept as the entry of the file's writer, unless the section came from
 * the cache or the file is not cached.  Written to a temporary file, then
 * renamed over the entry's name; the oldest entries then go until the
 * cache is within its bound.  A failure is reported and otherwise
 * ignored: the cache only saves work.
 */
void ctl_cache_store(struct ctl_cache *c, struct ctl_cache_file *f,
		     const u8 *id, size_t id_len, const u8 *buf, u64 len,
		     u64 vaddr)
{
	struct ctl_cache_sec e = { .id = id, .id_len = id_len,
				   .vaddr = vaddr, .len = len };
	char name[CTL_CACHE_NAME_MAX], tmp[CTL_CACHE_NAME_MAX + 32];
	struct ctl_cache_hdr h;
	struct stat st;
	int fd;

	if (c->dirfd < 0 || !id_len || f->hit ||
	    sizeof(h) + len > c->max_bytes || !ctl_cache_file_digest(f))
		return;
	e.writer = f->writer;
	e.digest = f->digest;
	e.sum = ctl_cache_sum(buf, len);
	ctl_cache_name(id, id_len, e.writer, name);
	snprintf(tmp, sizeof(tmp), ".%s.%d%s", name, (int)getpid(),
		 CTL_CACHE_TMP_SUFFIX);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0600);
	if (fd < 0)
		goto fail;
	ctl_cache_hdr_init(&h, &e);
	if (ctl_write_all(fd, &h, sizeof(h)) || ctl_write_all(fd, buf, len) ||
	    fsync(fd) || fstat(fd, &st)) {
		close(fd);
		goto remove_tmp;
	}
	close(fd);
	if (renameat(c->dirfd, tmp, c->dirfd, name))
		goto remove_tmp;
	c->stores++;
	/* Counted as new even if it replaced one: at worst a listing more. */
	c->bytes += ctl_disk_bytes(&st);
	c->entries++;
	ctl_cache_trim(c);
	return;
remove_tmp:
	unlinkat(c->dirfd, tmp, 0);
fail:
	fprintf(stderr, "%s: cache %s: cannot store %s: %s\n", ctl_prog,
		c->dir, name, strerror(errno));
}
