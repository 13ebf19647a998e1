// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's table of handled files (scripts/sframectl-sync.c), on the
 * host: a file is new once, forgotten on request, marked failed until it
 * is forgotten or changes, and the table holds at
 * most CTL_SEEN_MAX files, the oldest forgotten first; and which devices
 * are FUSE (scripts/sframectl-fuse.c): not the root's, but one no mount
 * has.  TAP on stdout.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "../sframectl.h"

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

/* The root's device is known and not FUSE; a device of no mount is. */
static void fuse_checks(void)
{
	const unsigned int no_minor = 0xfffff;
	struct stat st;

	check(!stat("/", &st) &&
	      !ctl_on_fuse(major(st.st_dev), minor(st.st_dev), "self"),
	      "the root's device is not FUSE");
	check(ctl_on_fuse(0, no_minor, "self"),
	      "a device no mount has counts as FUSE");
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
	fuse_checks();
	printf("1..%u\n# seen-test: %u passed, %u failed\n", tests,
	       tests - failed, failed);
	return failed ? 1 : 0;
}
