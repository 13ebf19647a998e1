// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's table of handled files (tools/sframectl/sframectl-sync.c), on the
 * host: a file is new once, forgotten on request, marked failed until it
 * is forgotten or changes, and the table holds at
 * most CTL_SEEN_MAX files, the oldest forgotten first; and which file
 * systems sframectl trusts (tools/sframectl/sframectl-fs.c): its list, by magic
 * and by a device's mount, not FUSE, an overlay, /proc or a device no
 * mount has; and whose a uid is (tools/sframectl/sframectl-subid.c).  TAP on
 * stdout.
 */
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "sframectl.h"

/* What sframectl-sync.c needs of the rest of sframectl. */
const char *ctl_prog = "seen-test";

enum ctl_result ctl_add_one(struct ctl_ctx *ctx, const char *path,
			    const char *name, u32 flags, bool quiet)
{
	return CTL_FAILED;
}

static unsigned int tests, failed;

static void check(bool ok, const char *what)
{
	tests++;
	failed += !ok;
	printf("%sok %u %s\n", ok ? "" : "not ", tests, what);
}

/* The @i-th file: a different inode of one device, one size and time. */
static struct ctl_key key(unsigned int i)
{
	struct ctl_key k = { .major = 8, .minor = 1, .ino = 1000 + i,
			     .size = 4096, .mtime_sec = 1 };

	return k;
}

/* Add files @from to @to - 1; false if one was not new. */
static bool add_all(struct ctl_seen *s, unsigned int from, unsigned int to)
{
	struct ctl_key k;
	bool all = true;

	for (; from < to; from++) {
		k = key(from);
		all &= ctl_seen_add(s, &k);
	}
	return all;
}

/*
 * The root's file system is trusted where it is of the list; /proc, FUSE
 * and a device no mount has are not.
 */
static void fs_checks(void)
{
	const unsigned int no_minor = 0xfffff;
	struct statfs sfs;
	struct stat st;

	if (!stat("/", &st) && !statfs("/", &sfs) &&
	    ctl_fs_magic_trusted(sfs.f_type))
		check(ctl_fs_dev_trusted(major(st.st_dev), minor(st.st_dev),
					 "self"),
		      "the root's device is trusted as its magic is");
	check(!stat("/proc/self", &st) &&
	      !ctl_fs_dev_trusted(major(st.st_dev), minor(st.st_dev), "self"),
	      "/proc's device is not trusted");
	ctl_fs_forget();
	check(!ctl_fs_dev_trusted(0, no_minor, "self"),
	      "a device no mount has is not trusted");
	check(ctl_fs_magic_trusted(EXT4_SUPER_MAGIC) &&
	      !ctl_fs_magic_trusted(FUSE_SUPER_MAGIC) &&
	      !ctl_fs_magic_trusted(OVERLAYFS_SUPER_MAGIC),
	      "ext4 is trusted, FUSE and overlay are not");
}

/*
 * Subordinate uids count as the user they were given to, by name or
 * number; a range of a name no one has, and uids of no range, as
 * themselves; a changed file is read again.
 */
static void subid_checks(void)
{
	char path[] = "/tmp/seen-test-subuid.XXXXXX";
	FILE *f;
	int fd = mkstemp(path);

	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		check(false, "a subuid file");
		return;
	}
	fprintf(f, "2:100000:65536\n1000:200000:65536\n"
		   "no-such-user-here:300000:10\nroot:400000:65536\n"
		   "1001:4294967295:2\n");
	fclose(f);
	ctl_subuid_file = path;
	check(ctl_person(100005) == 2 && ctl_person(265535) == 1000,
	      "subordinate uids count as their user");
	check(ctl_person(400007) == 400000 && ctl_person(0) == 0,
	      "a range given to root (by name) is a person of its own");
	check(ctl_person(300001) == 300001 && ctl_person(265536) == 265536 &&
	      ctl_person(1000) == 1000 && ctl_person(1) == 1,
	      "other uids count as themselves, past 2^32 too");
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "1000:100000:10\n");
		fclose(f);
	}
	check(ctl_person(100005) == 1000 && ctl_person(200000) == 200000,
	      "a changed file is read again");
	unlink(path);
}

int main(void)
{
	struct ctl_seen s = { 0 };
	struct ctl_key k = key(0), changed = key(0);
	const unsigned int over = 100;

	check(ctl_seen_add(&s, &k), "a file is new");
	check(!ctl_seen_add(&s, &k), "... and then handled");
	changed.mtime_nsec = 1;
	check(ctl_seen_add(&s, &changed), "a changed file is new again");
	check(!ctl_seen_failed(&s, &k), "a handled file has not failed");
	ctl_seen_fail(&s, &k);
	check(ctl_seen_failed(&s, &k) && !ctl_seen_failed(&s, &changed),
	      "a file marked failed has, not its changed self");
	ctl_seen_del(&s, &k);
	check(!ctl_seen_failed(&s, &k), "a forgotten file has not failed");
	check(ctl_seen_add(&s, &k), "a file forgotten (a lease) is new again");
	check(!ctl_seen_failed(&s, &k), "... and has not failed again yet");
	ctl_seen_free(&s);
	check(ctl_seen_add(&s, &k), "after ctl_seen_free() every file is new");
	ctl_seen_free(&s);

	check(add_all(&s, 0, CTL_SEEN_MAX + over),
	      "CTL_SEEN_MAX + 100 different files are each new");
	check(s.nr == CTL_SEEN_MAX, "the table holds CTL_SEEN_MAX of them");
	check(!add_all(&s, over + 1, over + 2) &&
	      !add_all(&s, CTL_SEEN_MAX + over - 1, CTL_SEEN_MAX + over),
	      "the newest are handled still");
	check(add_all(&s, 0, 1), "the oldest was forgotten");
	ctl_seen_free(&s);
	fs_checks();
	subid_checks();
	printf("1..%u\n# seen-test: %u passed, %u failed\n", tests,
	       tests - failed, failed);
	return failed ? 1 : 0;
}
