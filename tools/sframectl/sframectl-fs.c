// SPDX-License-Identifier: GPL-2.0
/*
 * Which file systems sframectl trusts to answer by themselves.
 *
 * A file on FUSE is served by a process that may be any user's and may
 * never answer: the kernel sends every stat(), open() and read() of it to
 * that process and waits, unkillably once the request was read.  Other
 * file systems could do the same tomorrow, and an overlay passes reads to
 * whatever its layers are.  So sframectl trusts a list, not an exception:
 * the file systems that only root mounts and whose reads the kernel
 * answers from a disk or from memory, or from a server root chose (NFS,
 * SMB, 9p).  Files on any other file system are opened by the daemon's
 * workers only, whose deadline frees the slot (sframectl-pool.c), skipped
 * by sync, and never kept in the cache (sframectl-cache.c).
 *
 * The module's event names the file system of the mapped file by its
 * magic (statfs's f_type), which the kernel knows for sure; sync has only
 * /proc/PID/maps, whose device is looked up by type name in mountinfo.
 * Devices are reused once unmounted, so sync starts each pass with an
 * empty table (ctl_fs_forget()).
 */
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

#include "sframectl.h"

/* The most devices the table keeps; it starts over when full. */
#define CTL_DEVS_MAX		1024
/* The separator before the file system's type in a mountinfo line. */
#define CTL_MI_SEP		" - "

/* A file system of the list, by magic and by mountinfo's type names. */
struct ctl_fs {
	unsigned long magic;
	const char *names[3];
};

static const struct ctl_fs ctl_fs_trusted[] = {
	{ EXT4_SUPER_MAGIC,	{ "ext4", "ext3", "ext2" } },
	{ XFS_SUPER_MAGIC,	{ "xfs" } },
	{ BTRFS_SUPER_MAGIC,	{ "btrfs" } },
	{ F2FS_SUPER_MAGIC,	{ "f2fs" } },
	{ EROFS_SUPER_MAGIC_V1,	{ "erofs" } },
	{ SQUASHFS_MAGIC,	{ "squashfs" } },
	{ ISOFS_SUPER_MAGIC,	{ "iso9660" } },
	{ MSDOS_SUPER_MAGIC,	{ "vfat", "msdos" } },
	{ EXFAT_SUPER_MAGIC,	{ "exfat" } },
	{ TMPFS_MAGIC,		{ "tmpfs" } },
	{ RAMFS_MAGIC,		{ "ramfs", "rootfs" } },
	{ NFS_SUPER_MAGIC,	{ "nfs", "nfs4" } },
	{ SMB2_SUPER_MAGIC,	{ "smb3", "cifs" } },
	{ CIFS_SUPER_MAGIC,	{ "cifs" } },
	{ V9FS_MAGIC,		{ "9p" } },
};

struct ctl_dev {
	unsigned int major, minor;
	bool trusted;
};

static struct ctl_dev ctl_devs[CTL_DEVS_MAX];
static unsigned int ctl_nr_devs;

/**
 * ctl_fs_magic_trusted() - is a file system of the list?
 * @magic: its magic, as statfs() or the module's event gives it
 *
 * Return: true if sframectl may open and cache its files outside a worker.
 */
bool ctl_fs_magic_trusted(unsigned long magic)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ctl_fs_trusted); i++)
		if (ctl_fs_trusted[i].magic == magic)
			return true;
	return false;
}

/* Is @type, a mountinfo type ("ext4 /dev/vda1 rw"), of the list? */
static bool ctl_fs_type_trusted(const char *type)
{
	size_t i, j, len = strcspn(type, " ");
	const char *name;

	for (i = 0; i < ARRAY_SIZE(ctl_fs_trusted); i++)
		for (j = 0; j < ARRAY_SIZE(ctl_fs_trusted[i].names); j++) {
			name = ctl_fs_trusted[i].names[j];
			if (name && strlen(name) == len &&
			    !strncmp(type, name, len))
				return true;
		}
	return false;
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
	d->trusted = ctl_fs_type_trusted(type + strlen(CTL_MI_SEP));
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
 * ctl_fs_forget() - forget the devices met so far
 *
 * A device number is given to another mount once its own is gone: sync
 * calls this first, so that a FUSE mount never passes for the disk that
 * had its number before.
 */
void ctl_fs_forget(void)
{
	ctl_nr_devs = 0;
}

/**
 * ctl_fs_dev_trusted() - is a mapped file on a file system of the list?
 * @major: its device's major number, as /proc/PID/maps gives it
 * @minor: its minor number
 * @pid: a process that maps it
 *
 * A device not met before is looked up in sframectl's mounts, then in
 * @pid's (another mount namespace).  One found in neither (its mount
 * gone) is not trusted: nothing is known of what serves it.
 *
 * Return: true if sframectl may open the file itself.
 */
bool ctl_fs_dev_trusted(unsigned int major, unsigned int minor,
			const char *pid)
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
	return d && d->trusted;
}

/**
 * ctl_fs_inode_differs() - may the file open at @fd show another inode?
 * @fd: a file opened through /proc/PID/map_files
 *
 * On an overlay, /proc/PID/map_files may open the overlay's file, whose
 * inode number (with xino, say) is not the layer's, which the module's
 * event names: there a differing number proves nothing.
 *
 * Return: true if @fd is on an overlay.
 */
bool ctl_fs_inode_differs(int fd)
{
	struct statfs sfs;

	return !fstatfs(fd, &sfs) && sfs.f_type == OVERLAYFS_SUPER_MAGIC;
}
