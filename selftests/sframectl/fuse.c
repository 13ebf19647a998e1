// SPDX-License-Identifier: GPL-2.0
/*
 * sfu_fuse DIR FILE UID SECONDS: a FUSE file system of one user that
 * answers that user and stalls root, as a user who wants the root daemon
 * to wait forever would run it.
 *
 * Started as root, it mounts a FUSE file system at DIR with allow_other
 * (what fusermount does for a user whom /etc/fuse.conf lets), becomes UID
 * and serves one file, DIR/lib.so, with FILE's contents, read before.  A
 * child maps the file's text executable, as UID, and prints "ready".
 * Requests of UID are answered; every request of root (the daemon) is read
 * and never answered, which leaves the asking task waiting, unkillable,
 * for as long as the file system lives.  After SECONDS, or when killed,
 * the server goes, the kernel fails what is pending, and DIR is unmounted
 * by whoever asks.  sframectl_daemon_trust.sh runs it.
 *
 * sfu_fuse DIR FILE UID SECONDS wedge: the same file, with a tail of
 * zeros whose middle page the server never answers, to anybody.  The
 * child maps the file, then holds its own mmap lock for good: one thread
 * reads that page through /proc/self/mem (the read faults it in with the
 * mmap lock held, and waits for the server), another calls mmap() and
 * queues behind it as a writer, so that no one else can take the lock for
 * reading either.  It prints "wedged" when both are under way; only the
 * server's end (SECONDS, or a kill) frees it.  registry_scan_wedge.sh
 * runs it.
 *
 * sfu_fuse DIR FILE UID SECONDS stallread: the same file, whose server
 * answers root's lookups and opens but none of root's READs: a root
 * that opens the file and reads it waits for as long as the file system
 * lives.  sframectl_copy_bound.sh runs it.
 *
 * sfu_fuse DIR FILE UID SECONDS twoface FILE2: a file that says it is
 * root's and answers everyone, with FILE's contents until a read reaches
 * its end, and FILE2's (of the same size) from then on, every read going
 * to the server (direct I/O): what a user's server does to a reader that
 * reads a file twice, once to parse it and once to digest it.  No child
 * maps it.  sframectl_overlay.sh runs it under an overlay.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fuse.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "registry.h"

#define FUSE_ROOT		1	/* the directory's node */
#define FUSE_FILE		2	/* the file's node */
#define FUSE_NAME		"lib.so"
#define FUSE_VALID_S		3600	/* how long the kernel may cache */
#define FUSE_BUF_SIZE		(1 << 20)
#define FUSE_BLOCK		4096
#define FUSE_MODE_FILE		(S_IFREG | 0755)
#define FUSE_MODE_DIR		(S_IFDIR | 0755)
#define FUSE_OPTS_MAX		160
/* The wedge's tail: past readahead of the file's own pages, both ways. */
#define FUSE_WEDGE_TAIL		(8 << 20)
#define FUSE_WEDGE_AT		(4 << 20)
/* How long each of the wedge's steps gets, in microseconds. */
#define FUSE_WEDGE_SETTLE_US	500000

static unsigned char *data;
static size_t data_len;
static size_t file_len;		/* data_len, or with the wedge's tail */
static size_t wedge_at;		/* the page never answered, if a wedge */
static unsigned int owner;
static unsigned int stalled;
/* Twoface: the contents after the first whole read, and its owner. */
static unsigned char *data2;
static bool twoface;
/* Stallread: only root's READs are left pending. */
static bool stallread;

static int reply(int fd, const struct fuse_in_header *in, int error,
		 const void *arg, size_t len)
{
	struct fuse_out_header out = {
		.len = sizeof(out) + len,
		.error = error,
		.unique = in->unique,
	};
	unsigned char buf[sizeof(out) + sizeof(struct fuse_entry_out)];

	if (len > sizeof(buf) - sizeof(out)) {
		/* READ: header and data in one write, as the kernel wants */
		unsigned char *big = malloc(sizeof(out) + len);
		ssize_t n;

		if (!big)
			return -1;
		memcpy(big, &out, sizeof(out));
		memcpy(big + sizeof(out), arg, len);
		n = write(fd, big, sizeof(out) + len);
		free(big);
		return n < 0 ? -1 : 0;
	}
	memcpy(buf, &out, sizeof(out));
	if (len)
		memcpy(buf + sizeof(out), arg, len);
	return write(fd, buf, sizeof(out) + len) < 0 ? -1 : 0;
}

static void fill_attr(struct fuse_attr *a, unsigned long long node)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->mode = node == FUSE_FILE ? FUSE_MODE_FILE : FUSE_MODE_DIR;
	a->size = node == FUSE_FILE ? file_len : 0;
	a->blocks = (a->size + 511) / 512;
	a->nlink = node == FUSE_FILE ? 1 : 2;
	a->uid = twoface ? 0 : owner;
	a->gid = twoface ? 0 : owner;
	a->blksize = FUSE_BLOCK;
}

static int do_init(int fd, const struct fuse_in_header *in, const void *arg)
{
	const struct fuse_init_in *ii = arg;
	struct fuse_init_out o = {
		.major = FUSE_KERNEL_VERSION,
		.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
			 ii->minor : FUSE_KERNEL_MINOR_VERSION,
		.max_readahead = ii->max_readahead,
		.max_write = 4096,
		.max_background = 1,
		.congestion_threshold = 1,
		.time_gran = 1,
	};

	return reply(fd, in, 0, &o, sizeof(o));
}

static int do_lookup(int fd, const struct fuse_in_header *in,
		     const char *name)
{
	struct fuse_entry_out e = {
		.nodeid = FUSE_FILE,
		.generation = 1,
		.entry_valid = FUSE_VALID_S,
		.attr_valid = FUSE_VALID_S,
	};

	if (in->nodeid != FUSE_ROOT || strcmp(name, FUSE_NAME))
		return reply(fd, in, -ENOENT, NULL, 0);
	fill_attr(&e.attr, FUSE_FILE);
	return reply(fd, in, 0, &e, sizeof(e));
}

static int do_getattr(int fd, const struct fuse_in_header *in)
{
	struct fuse_attr_out a = { .attr_valid = FUSE_VALID_S };

	fill_attr(&a.attr, in->nodeid);
	return reply(fd, in, 0, &a, sizeof(a));
}

/* Does the READ @r cover the wedge's page? */
static int wedge_read(const struct fuse_read_in *r)
{
	return wedge_at && r->offset <= wedge_at &&
	       wedge_at < r->offset + r->size;
}

static int do_read(int fd, const struct fuse_in_header *in, const void *arg)
{
	const struct fuse_read_in *r = arg;
	unsigned char *zeros;
	size_t len = 0;
	int ret;

	if (wedge_read(r)) {
		fprintf(stderr, "sfu_fuse: stalled the wedge's read at %llu\n",
			(unsigned long long)r->offset);
		return 0;
	}
	if (r->offset < data_len) {
		len = data_len - r->offset;
		if (len > r->size)
			len = r->size;
		ret = reply(fd, in, 0, data + r->offset, len);
		if (twoface && r->offset + len == data_len && data != data2) {
			fprintf(stderr, "sfu_fuse: read to the end, second face from now\n");
			data = data2;
		}
		return ret;
	}
	if (r->offset < file_len) {
		len = file_len - r->offset;
		if (len > r->size)
			len = r->size;
	}
	zeros = calloc(1, len + 1);
	if (!zeros)
		return -1;
	ret = reply(fd, in, 0, len ? zeros : NULL, len);
	free(zeros);
	return ret;
}

/* Is @in a request of root's that is never answered? */
static bool stalls(const struct fuse_in_header *in)
{
	if (in->uid != 0 || twoface)
		return false;
	return !stallread || in->opcode == FUSE_READ;
}

/* One request: answered, or (root's) left pending; -1 when unmounted. */
static int serve_one(int fd, unsigned char *buf)
{
	const struct fuse_in_header *in = (const void *)buf;
	const void *arg = buf + sizeof(*in);
	struct fuse_open_out o = { .fh = 1 };
	/* What an overlay asks its layer for, for its own statfs(). */
	struct fuse_statfs_out sfs = {
		.st = { .bsize = FUSE_BLOCK, .frsize = FUSE_BLOCK,
			.namelen = NAME_MAX },
	};
	ssize_t n = read(fd, buf, FUSE_BUF_SIZE);

	if (n < 0)
		return errno == EINTR || errno == ENOENT ? 0 : -1;
	if ((size_t)n < sizeof(*in))
		return -1;
	if (in->opcode == FUSE_INIT)
		return do_init(fd, in, arg);
	if (in->opcode == FUSE_FORGET || in->opcode == FUSE_BATCH_FORGET ||
	    in->opcode == FUSE_INTERRUPT)
		return 0;
	if (stalls(in)) {
		fprintf(stderr, "sfu_fuse: stalled request %u of root (pid %u), %u so far\n",
			in->opcode, in->pid, ++stalled);
		return 0;
	}
	switch (in->opcode) {
	case FUSE_LOOKUP:
		return do_lookup(fd, in, arg);
	case FUSE_GETATTR:
		return do_getattr(fd, in);
	case FUSE_OPEN:
		if (twoface)
			o.open_flags = FOPEN_DIRECT_IO;
		return reply(fd, in, 0, &o, sizeof(o));
	case FUSE_OPENDIR:
		return reply(fd, in, 0, &o, sizeof(o));
	case FUSE_READ:
		return do_read(fd, in, arg);
	case FUSE_STATFS:
		return reply(fd, in, 0, &sfs, sizeof(sfs));
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_ACCESS:
		return reply(fd, in, 0, NULL, 0);
	default:
		return reply(fd, in, -EOPNOTSUPP, NULL, 0);
	}
}

/* Read @path, of @len bytes if @len is not 0, into @buf; its size. */
static size_t load(const char *path, unsigned char **buf, size_t len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || !st.st_size ||
	    (len && (size_t)st.st_size != len))
		return 0;
	*buf = malloc(st.st_size);
	if (!*buf || read(fd, *buf, st.st_size) != st.st_size)
		return 0;
	close(fd);
	return st.st_size;
}

/* The user's program: map DIR/lib.so's text executable and wait. */
static void map_and_wait(const char *dir, unsigned int seconds)
{
	unsigned long page = sysconf(_SC_PAGESIZE), off;
	char path[PATH_MAX];
	Elf64_Phdr text;
	uint64_t span;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, FUSE_NAME);
	fd = open(path, O_RDONLY);
	if (fd < 0 || reg_elf_text(fd, &text, &span)) {
		perror(path);
		_exit(1);
	}
	off = text.p_offset & ~(page - 1);
	if (mmap(NULL, text.p_filesz + text.p_offset - off,
		 PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off) == MAP_FAILED) {
		perror("mmap");
		_exit(1);
	}
	printf("ready\n");
	fflush(stdout);
	sleep(seconds);
	_exit(0);
}

static void *wedge_reader(void *page)
{
	char byte;
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || pread(fd, &byte, 1, (uintptr_t)page) != 1)
		perror("sfu_fuse: /proc/self/mem");
	return NULL;
}

static void *wedge_writer(void *unused)
{
	usleep(FUSE_WEDGE_SETTLE_US);
	if (mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
		perror("sfu_fuse: mmap");
	return NULL;
}

/* The user's wedge: map DIR/lib.so whole, hold its own mmap lock. */
static void wedge(const char *dir, unsigned int seconds)
{
	char path[PATH_MAX];
	pthread_t reader, writer;
	unsigned char *map;
	int fd;

	/* Dumpable again after setresuid(): /proc/self/mem is ours. */
	if (prctl(PR_SET_DUMPABLE, 1)) {
		perror("sfu_fuse: PR_SET_DUMPABLE");
		_exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, FUSE_NAME);
	fd = open(path, O_RDONLY);
	map = fd < 0 ? MAP_FAILED : mmap(NULL, file_len, PROT_READ,
					 MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		perror(path);
		_exit(1);
	}
	/*
	 * Both threads (their stacks are mappings) and stdout's buffer
	 * before the lock is held; the writer waits for the reader.
	 */
	printf("wedging\n");
	if (pthread_create(&writer, NULL, wedge_writer, NULL) ||
	    pthread_create(&reader, NULL, wedge_reader, map + wedge_at)) {
		perror("sfu_fuse: pthread_create");
		_exit(1);
	}
	usleep(2 * FUSE_WEDGE_SETTLE_US);
	printf("wedged\n");
	fflush(stdout);
	sleep(seconds);
	_exit(0);
}

int main(int argc, char **argv)
{
	char opts[FUSE_OPTS_MAX];
	unsigned char *buf;
	time_t end;
	int fd;

	twoface = argc == 7 && !strcmp(argv[5], "twoface");
	stallread = argc == 6 && !strcmp(argv[5], "stallread");
	if (argc != 5 && !twoface && !stallread &&
	    (argc != 6 || strcmp(argv[5], "wedge"))) {
		fprintf(stderr, "usage: sfu_fuse DIR FILE UID SECONDS [wedge | stallread | twoface FILE2]\n");
		return 2;
	}
	owner = atoi(argv[3]);
	buf = malloc(FUSE_BUF_SIZE);
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	data_len = load(argv[2], &data, 0);
	if (!buf || fd < 0 || !data_len ||
	    (twoface && !load(argv[6], &data2, data_len))) {
		perror("sfu_fuse");
		return 1;
	}
	file_len = data_len;
	if (argc == 6 && !stallread) {
		file_len = data_len + FUSE_WEDGE_TAIL;
		wedge_at = (data_len + FUSE_WEDGE_AT) &
			   ~(size_t)(sysconf(_SC_PAGESIZE) - 1);
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=%o,user_id=%u,group_id=%u,allow_other",
		 fd, FUSE_MODE_DIR, owner, owner);
	if (mount("sfu_fuse", argv[1], "fuse.sfu", MS_NOSUID | MS_NODEV,
		  opts) || setresgid(owner, owner, owner) ||
	    setresuid(owner, owner, owner)) {
		perror("sfu_fuse: mount");
		return 1;
	}
	if (!twoface && !fork()) {
		close(fd);	/* the server's alone: its end ends the mount */
		if (wedge_at)
			wedge(argv[1], atoi(argv[4]));
		map_and_wait(argv[1], atoi(argv[4]));
	}
	end = time(NULL) + atoi(argv[4]);
	while (time(NULL) < end && !serve_one(fd, buf))
		;
	fprintf(stderr, "sfu_fuse: done, %u requests of root stalled\n",
		stalled);
	return 0;
}
