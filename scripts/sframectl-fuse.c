// SPDX-License-Identifier: GPL-2.0
/*
 * Files on FUSE: served by a process that may be any user's and may never
 * answer.  The kernel sends every stat(), open() and read() of such a file
 * to that process and waits for it, unkillably once the request was read,
 * so sframectl must not touch one where a stall would hold anything but
 * that file: the daemon leaves them to its workers (sframectl-pool.c),
 * whose deadline then frees the slot, and sync skips them.
 *
 * Whether a device is FUSE comes from /proc/PID/mountinfo, which the kernel
 * answers itself.  The devices met so far are kept in a table, read again
 * when a device is not in it (a new mount).
 */
#include <stdio.h>
#include <string.h>

#include "sframectl.h"

/* The most devices the table keeps; it starts over when full. */
#define CTL_DEVS_MAX		1024
/* The separator before the file system's type in a mountinfo line. */
#define CTL_MI_SEP		" - "
#define CTL_FUSE		"fuse"

struct ctl_dev {
	unsigned int major, minor;
	bool fuse;
};

static struct ctl_dev ctl_devs[CTL_DEVS_MAX];
static unsigned int ctl_nr_devs;

/* Is @type (a mountinfo type: fuse, fuseblk, fuse.sshfs, ...) FUSE's? */
static bool ctl_type_fuse(const char *type)
{
	return !strncmp(type, CTL_FUSE, strlen(CTL_FUSE));
}

static struct ctl_dev *ctl_dev_find(unsigned int major, unsigned int minor)
{
	unsigned int i;

	for (i = 0; i < ctl_nr_devs; i++)
		if (ctl_devs[i].major == major && ctl_devs[i].minor == minor)
			return &ctl_devs[i];
	return NULL;
}

/* Add the device of one mountinfo line, if it is new. */
static void ctl_dev_add_line(const char *line)
{
	unsigned int major, minor;
	const char *type;
	struct ctl_dev *d;

	type = strstr(line, CTL_MI_SEP);
	if (!type || sscanf(line, "%*d %*d %u:%u", &major, &minor) != 2 ||
	    ctl_dev_find(major, minor))
		return;
	if (ctl_nr_devs == CTL_DEVS_MAX)
		ctl_nr_devs = 0;
	d = &ctl_devs[ctl_nr_devs++];
	d->major = major;
	d->minor = minor;
	d->fuse = ctl_type_fuse(type + strlen(CTL_MI_SEP));
}

/* Learn the devices of the mounts in /proc/@who/mountinfo. */
static void ctl_dev_learn(const char *who)
{
	char path[64], line[CTL_LINE_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/mountinfo", who);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		ctl_dev_add_line(line);
	fclose(f);
}

/**
 * ctl_on_fuse() - is a mapped file on FUSE?
 * @major: its device's major number, as /proc/PID/maps or the module's
 *	event gives it
 * @minor: its minor number
 * @pid: a process that maps it
 *
 * A device not met before is looked up in sframectl's mounts, then in
 * @pid's (another mount namespace).  One found in neither (its mount
 * gone) counts as FUSE: nothing is known of what serves it.
 *
 * Return: true if sframectl should leave the file to a worker.
 */
bool ctl_on_fuse(unsigned int major, unsigned int minor, const char *pid)
{
	struct ctl_dev *d = ctl_dev_find(major, minor);

	if (!d) {
		ctl_dev_learn("self");
		d = ctl_dev_find(major, minor);
	}
	if (!d) {
		ctl_dev_learn(pid);
		d = ctl_dev_find(major, minor);
	}
	return !d || d->fuse;
}
