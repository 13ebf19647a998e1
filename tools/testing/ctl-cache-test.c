// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl's cache (tools/sframectl/sframectl-cache.c) on the host, under ASan
 * and UBSan: an entry serves only a file with the contents it was made
 * from; a file others may write is not cached; a hit is not stored again;
 * another user's entry is not served for root's file (as root only); and
 * a cache directory that is not root's alone is refused; the bounds count
 * blocks on disk and entries; writers' stale temporary files go; an entry
 * binds the copy that was parsed, not what the file says later; the
 * digest an entry is bound by is the file's SHA-256 (libmd's).  The
 * guest test selftests/sframectl_trust.sh runs the same attacks against
 * the daemon.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sframe/decode.h>
#include <sframe/format.h>

#include "kunit-host.h"
#include "sframectl.h"
#include "sframe_test_sections.h"

#define CACHE_TEST_BASE_MAX	64
#define CACHE_TEST_PATH_MAX	256
#define CACHE_TEST_MAX_BYTES	(1 << 20)
#define CACHE_TEST_MODE		0755
#define CACHE_TEST_SHARED_MODE	0775
#define CACHE_TEST_DIR_MODE	0700
#define CACHE_TEST_PERMS	0777
/* A user other than root, for the owner cases. */
#define CACHE_TEST_UID		1000
/* Entries stored by the bound cases, of which the bounds leave two. */
#define CACHE_TEST_STORES	4
#define CACHE_TEST_KEPT		2
/* A temporary file's age when its writer is long dead, and when not. */
#define CACHE_TEST_OLD_S	3600
#define CACHE_TEST_NEW_S	10
/* NIST's million-byte example for SHA-256: more than one read's worth. */
#define CACHE_TEST_MILLION	1000000
#define CACHE_TEST_HEX_LEN	(2 * SHA256_DIGEST_LENGTH + 1)

const char *ctl_prog = "ctl-cache-test";

/* A scratch directory, a cache in it, and a section to keep. */
struct cache_test {
	char base[CACHE_TEST_BASE_MAX];
	char dir[CACHE_TEST_PATH_MAX];
	struct ctl_cache c;
	u8 id[SFRAME_UNWIND_BUILD_ID_MAX];
	u8 sec[SFU_TEST_BUF_SIZE];
	s64 len;
};

static void cache_test_path(struct cache_test *t, const char *name,
			    char *path)
{
	snprintf(path, CACHE_TEST_PATH_MAX, "%s/%s", t->base, name);
}

/* A file of @t's scratch directory holding @text, of mode @mode. */
static int cache_test_file(struct cache_test *t, const char *name,
			   const char *text, mode_t mode)
{
	char path[CACHE_TEST_PATH_MAX];
	int fd;

	cache_test_path(t, name, path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
	    fchmod(fd, mode))
		return -1;
	return fd;
}

/* The file open at @fd as the cache sees it, its own copy of itself. */
static struct ctl_cache_file cache_test_cf(int fd)
{
	struct ctl_cache_file f = { .fd = fd, .data_fd = fd };
	struct stat st;

	if (!fstat(fd, &st))
		f.data_size = st.st_size;
	return f;
}

static void cache_test_init(struct kunit *test, struct cache_test *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->base, sizeof(t->base), "/tmp/ctl-cache-test.XXXXXX");
	KUNIT_ASSERT_NOT_NULL(test, mkdtemp(t->base));
	cache_test_path(t, "cache", t->dir);
	KUNIT_ASSERT_EQ(test, ctl_cache_open(&t->c, t->dir,
					     CACHE_TEST_MAX_BYTES), 0);
	memset(t->id, 0xab, sizeof(t->id));
	t->len = sfu_test_std_section(SFRAME_VERSION_3, sfu_native_abi(), true,
				      t->sec, sizeof(t->sec), SFU_TEST_VADDR);
	KUNIT_ASSERT_GT(test, t->len, 0);
}

static void cache_test_exit(struct cache_test *t)
{
	char cmd[CACHE_TEST_PATH_MAX + 16];

	ctl_cache_close(&t->c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->base);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", t->base);
}

static void cache_test_store(struct cache_test *t, int fd)
{
	struct ctl_cache_file f = cache_test_cf(fd);

	ctl_cache_store(&t->c, &f, t->id, sizeof(t->id), t->sec, t->len,
			SFU_TEST_VADDR);
}

/* Whether the file open at @fd gets the section from the cache. */
static bool cache_test_hit(struct cache_test *t, int fd)
{
	struct ctl_cache_file f = cache_test_cf(fd);
	u64 len, vaddr;
	u8 *buf;

	if (ctl_cache_load(&t->c, &f, t->id, sizeof(t->id), &buf, &len,
			   &vaddr))
		return false;
	free(buf);
	return f.hit && len == (u64)t->len && vaddr == SFU_TEST_VADDR;
}

/* The entries in @t's cache directory. */
static int cache_test_entries(struct cache_test *t)
{
	DIR *dir = opendir(t->dir);
	struct dirent *d;
	size_t n;
	int nr = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		n = strlen(d->d_name);
		nr += n > strlen(".sframe") &&
		      !strcmp(d->d_name + n - strlen(".sframe"), ".sframe");
	}
	closedir(dir);
	return nr;
}

/* Store CACHE_TEST_STORES entries, each for a file of its own. */
static void cache_test_store_many(struct kunit *test, struct cache_test *t)
{
	char name[] = "f0";
	int i, fd;

	for (i = 0; i < CACHE_TEST_STORES; i++) {
		name[1] = '0' + i;
		fd = cache_test_file(t, name, name, CACHE_TEST_MODE);
		KUNIT_ASSERT_TRUE(test, fd >= 0);
		t->id[0] = i;
		cache_test_store(t, fd);
		close(fd);
	}
	KUNIT_EXPECT_EQ(test, t->c.stores, (unsigned int)CACHE_TEST_STORES);
}

/* The bound counts entries, and the blocks they take, not their bytes. */
static void cache_test_bounds(struct kunit *test)
{
	struct cache_test t;
	struct stat st;
	int fd;

	cache_test_init(test, &t);
	t.c.max_entries = CACHE_TEST_KEPT;
	cache_test_store_many(test, &t);
	KUNIT_EXPECT_EQ(test, cache_test_entries(&t), CACHE_TEST_KEPT);
	cache_test_exit(&t);

	/* Room for two entries and a half on disk, for many by their bytes. */
	cache_test_init(test, &t);
	fd = cache_test_file(&t, "a", "a", CACHE_TEST_MODE);
	KUNIT_ASSERT_TRUE(test, fd >= 0);
	cache_test_store(&t, fd);
	close(fd);
	KUNIT_ASSERT_EQ(test, cache_test_entries(&t), 1);
	KUNIT_ASSERT_EQ(test, fstat(t.c.dirfd, &st), 0);
	t.c.max_bytes = st.st_blksize * CACHE_TEST_KEPT + st.st_blksize / 2;
	KUNIT_ASSERT_GT(test, t.c.max_bytes,
			(u64)(t.len + 512) * CACHE_TEST_STORES);
	t.c.stores = 0;
	cache_test_store_many(test, &t);
	KUNIT_EXPECT_EQ(test, cache_test_entries(&t), CACHE_TEST_KEPT);
	cache_test_exit(&t);
}

/* A temporary file @age seconds old, in @t's cache directory. */
static void cache_test_tmp(struct kunit *test, struct cache_test *t,
			   const char *name, time_t age)
{
	struct timespec ts[2] = { { .tv_sec = time(NULL) - age },
				  { .tv_sec = time(NULL) - age } };
	int fd;

	fd = openat(t->c.dirfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	KUNIT_ASSERT_TRUE(test, fd >= 0);
	KUNIT_ASSERT_EQ(test, futimens(fd, ts), 0);
	close(fd);
}

/* A store removes what writers that died left, not what they write. */
static void cache_test_stale(struct kunit *test)
{
	struct cache_test t;
	int fd;

	cache_test_init(test, &t);
	cache_test_tmp(test, &t, ".dead.sframe.1.tmp", CACHE_TEST_OLD_S);
	cache_test_tmp(test, &t, ".live.sframe.2.tmp", CACHE_TEST_NEW_S);
	fd = cache_test_file(&t, "a", "a", CACHE_TEST_MODE);
	KUNIT_ASSERT_TRUE(test, fd >= 0);
	cache_test_store(&t, fd);
	close(fd);
	KUNIT_EXPECT_NE(test, faccessat(t.c.dirfd, ".dead.sframe.1.tmp", F_OK,
					0), 0);
	KUNIT_EXPECT_EQ(test, faccessat(t.c.dirfd, ".live.sframe.2.tmp", F_OK,
					0), 0);
	cache_test_exit(&t);
}

/* Same build-id, other contents: a miss, and the entry stays. */
static void cache_test_contents(struct kunit *test)
{
	struct cache_test t;
	int a, b;

	cache_test_init(test, &t);
	a = cache_test_file(&t, "a", "contents of a", CACHE_TEST_MODE);
	b = cache_test_file(&t, "b", "contents of b", CACHE_TEST_MODE);
	KUNIT_ASSERT_TRUE(test, a >= 0 && b >= 0);
	KUNIT_EXPECT_FALSE(test, cache_test_hit(&t, a));
	cache_test_store(&t, a);
	KUNIT_EXPECT_EQ(test, t.c.stores, 1U);
	KUNIT_EXPECT_FALSE(test, cache_test_hit(&t, b));
	KUNIT_EXPECT_TRUE(test, cache_test_hit(&t, a));
	KUNIT_EXPECT_EQ(test, t.c.hits, 1U);
	close(a);
	close(b);
	cache_test_exit(&t);
}

/*
 * A file with no entry is not read on a miss (the daemon registers it
 * first); it is digested when its section is stored, and again compared
 * on the next load, which then hits.
 */
static void cache_test_lazy_digest(struct kunit *test)
{
	struct ctl_cache_file f;
	struct cache_test t;
	u64 len, vaddr;
	u8 *buf = NULL;
	int a;

	cache_test_init(test, &t);
	a = cache_test_file(&t, "a", "contents of a", CACHE_TEST_MODE);
	KUNIT_ASSERT_TRUE(test, a >= 0);
	f = cache_test_cf(a);
	KUNIT_EXPECT_NE(test, ctl_cache_load(&t.c, &f, t.id, sizeof(t.id),
					     &buf, &len, &vaddr), 0);
	KUNIT_EXPECT_TRUE(test, f.checked && f.cacheable);
	KUNIT_EXPECT_FALSE(test, f.digested);
	ctl_cache_store(&t.c, &f, t.id, sizeof(t.id), t.sec, t.len,
			SFU_TEST_VADDR);
	KUNIT_EXPECT_TRUE(test, f.digested);
	KUNIT_EXPECT_EQ(test, t.c.stores, 1U);
	KUNIT_EXPECT_TRUE(test, cache_test_hit(&t, a));
	close(a);
	cache_test_exit(&t);
}

/* The digest of the file open at @fd, as the cache takes it, in hex. */
static void cache_test_digest_hex(struct kunit *test, struct cache_test *t,
				  int fd, char *hex)
{
	struct ctl_cache_file f = cache_test_cf(fd);
	unsigned int i;

	ctl_cache_store(&t->c, &f, t->id, sizeof(t->id), t->sec, t->len,
			SFU_TEST_VADDR);
	KUNIT_ASSERT_TRUE(test, f.digested && f.cacheable);
	for (i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(hex + 2 * i, 3, "%02x", f.digest[i]);
}

/*
 * An entry is bound by the SHA-256 of the file's contents: that of
 * NIST's examples for FIPS 180-4, one block and a million bytes (read in
 * pieces of CTL_DIGEST_CHUNK, the last one short).
 */
static void cache_test_digest(struct kunit *test)
{
	char hex[CACHE_TEST_HEX_LEN];
	struct cache_test t;
	char *million;
	int a, m;

	million = kunit_kzalloc(test, CACHE_TEST_MILLION + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, million);
	memset(million, 'a', CACHE_TEST_MILLION);
	cache_test_init(test, &t);
	a = cache_test_file(&t, "abc", "abc", CACHE_TEST_MODE);
	m = cache_test_file(&t, "million", million, CACHE_TEST_MODE);
	KUNIT_ASSERT_TRUE(test, a >= 0 && m >= 0);
	cache_test_digest_hex(test, &t, a, hex);
	KUNIT_EXPECT_STREQ(test, hex,
			   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	cache_test_digest_hex(test, &t, m, hex);
	KUNIT_EXPECT_STREQ(test, hex,
			   "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	close(a);
	close(m);
	cache_test_exit(&t);
}

/* A hit is not written again; a file others may write is not cached. */
static void cache_test_no_store(struct kunit *test)
{
	struct ctl_cache_file f;
	struct cache_test t;
	u64 len, vaddr;
	u8 *buf = NULL;
	int a, s;

	cache_test_init(test, &t);
	a = cache_test_file(&t, "a", "contents of a", CACHE_TEST_MODE);
	s = cache_test_file(&t, "s", "contents of s", CACHE_TEST_SHARED_MODE);
	KUNIT_ASSERT_TRUE(test, a >= 0 && s >= 0);
	cache_test_store(&t, a);
	f = cache_test_cf(a);
	KUNIT_EXPECT_EQ(test, ctl_cache_load(&t.c, &f, t.id, sizeof(t.id),
					     &buf, &len, &vaddr), 0);
	ctl_cache_store(&t.c, &f, t.id, sizeof(t.id), t.sec, t.len,
			SFU_TEST_VADDR);
	free(buf);
	KUNIT_EXPECT_EQ(test, t.c.stores, 1U);
	cache_test_store(&t, s);
	KUNIT_EXPECT_EQ(test, t.c.stores, 1U);
	KUNIT_EXPECT_FALSE(test, cache_test_hit(&t, s));
	close(a);
	close(s);
	cache_test_exit(&t);
}

/*
 * Another user's entry serves that user's files, not root's, even with
 * the same contents; root's serves everyone's.  Needs root (chown).
 */
static void cache_test_owner(struct kunit *test)
{
	struct cache_test t;
	int user, root, user2;

	if (geteuid()) {
		printf("        # %s: not root: skipped\n", __func__);
		return;
	}
	cache_test_init(test, &t);
	user = cache_test_file(&t, "user", "same", CACHE_TEST_MODE);
	user2 = cache_test_file(&t, "user2", "same", CACHE_TEST_MODE);
	root = cache_test_file(&t, "root", "same", CACHE_TEST_MODE);
	KUNIT_ASSERT_TRUE(test, user >= 0 && user2 >= 0 && root >= 0);
	KUNIT_ASSERT_EQ(test, fchown(user, CACHE_TEST_UID, CACHE_TEST_UID), 0);
	KUNIT_ASSERT_EQ(test, fchown(user2, CACHE_TEST_UID, CACHE_TEST_UID), 0);
	cache_test_store(&t, user);
	KUNIT_EXPECT_FALSE(test, cache_test_hit(&t, root));
	KUNIT_EXPECT_TRUE(test, cache_test_hit(&t, user2));
	cache_test_store(&t, root);
	KUNIT_EXPECT_EQ(test, t.c.stores, 2U);
	KUNIT_ASSERT_EQ(test, fchown(user, 0, 0), 0);
	KUNIT_ASSERT_EQ(test, fchown(user2, CACHE_TEST_UID + 1, 0), 0);
	KUNIT_EXPECT_TRUE(test, cache_test_hit(&t, user2));
	close(user);
	close(user2);
	close(root);
	cache_test_exit(&t);
}

/* @path as the cache directory: refused? */
static bool cache_test_refused(const char *path)
{
	struct ctl_cache c;
	int ret;

	ret = ctl_cache_open(&c, path, CACHE_TEST_MAX_BYTES);
	ctl_cache_close(&c);
	return ret && c.dirfd < 0;
}

/* Only a directory of root's alone is used. */
static void cache_test_dir(struct kunit *test)
{
	char open_dir[CACHE_TEST_PATH_MAX], link[CACHE_TEST_PATH_MAX];
	char user[CACHE_TEST_PATH_MAX];
	struct cache_test t;
	struct stat st;

	cache_test_init(test, &t);
	KUNIT_ASSERT_EQ(test, stat(t.dir, &st), 0);
	KUNIT_EXPECT_EQ(test, st.st_mode & CACHE_TEST_PERMS,
			(unsigned int)CACHE_TEST_DIR_MODE);
	cache_test_path(&t, "open", open_dir);
	KUNIT_ASSERT_EQ(test, mkdir(open_dir, CACHE_TEST_MODE), 0);
	KUNIT_ASSERT_EQ(test, chmod(open_dir, CACHE_TEST_MODE), 0);
	KUNIT_EXPECT_TRUE(test, cache_test_refused(open_dir));
	cache_test_path(&t, "link", link);
	KUNIT_ASSERT_EQ(test, symlink(t.dir, link), 0);
	KUNIT_EXPECT_TRUE(test, cache_test_refused(link));
	if (!geteuid()) {
		cache_test_path(&t, "user", user);
		KUNIT_ASSERT_EQ(test, mkdir(user, CACHE_TEST_DIR_MODE), 0);
		KUNIT_ASSERT_EQ(test, chown(user, CACHE_TEST_UID, 0), 0);
		KUNIT_EXPECT_TRUE(test, cache_test_refused(user));
	}
	cache_test_exit(&t);
}

/*
 * The entry binds the copy of the file that was parsed: a file whose
 * server answered the copy with one text and says another now (written
 * here between the two) is stored under the copy's digest, which the
 * file as it is now does not get, and a file with the copy's text does.
 */
static void cache_test_copy(struct kunit *test)
{
	static const char parsed[] = "contents parsed", now[] = "contents now!";
	struct ctl_cache_file f;
	struct cache_test t;
	int a, copy, b;

	cache_test_init(test, &t);
	a = cache_test_file(&t, "a", now, CACHE_TEST_MODE);
	copy = cache_test_file(&t, "copy", parsed, CACHE_TEST_MODE);
	b = cache_test_file(&t, "b", parsed, CACHE_TEST_MODE);
	KUNIT_ASSERT_TRUE(test, a >= 0 && copy >= 0 && b >= 0);
	f = cache_test_cf(copy);
	f.fd = a;
	ctl_cache_store(&t.c, &f, t.id, sizeof(t.id), t.sec, t.len,
			SFU_TEST_VADDR);
	KUNIT_EXPECT_EQ(test, t.c.stores, 1U);
	KUNIT_EXPECT_FALSE(test, cache_test_hit(&t, a));
	KUNIT_EXPECT_TRUE(test, cache_test_hit(&t, b));
	close(a);
	close(copy);
	close(b);
	cache_test_exit(&t);
}

static struct kunit_case cache_test_cases[] = {
	KUNIT_CASE(cache_test_copy),
	KUNIT_CASE(cache_test_contents),
	KUNIT_CASE(cache_test_lazy_digest),
	KUNIT_CASE(cache_test_digest),
	KUNIT_CASE(cache_test_no_store),
	KUNIT_CASE(cache_test_owner),
	KUNIT_CASE(cache_test_dir),
	KUNIT_CASE(cache_test_bounds),
	KUNIT_CASE(cache_test_stale),
	{}
};

static struct kunit_suite cache_test_suite = {
	.name = "sframectl_cache",
	.test_cases = cache_test_cases,
};

kunit_test_suite(cache_test_suite);
