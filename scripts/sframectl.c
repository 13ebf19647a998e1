// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl: give programs without SFrame generated sections (sidecars).
 *
 *   sframectl add [--replace] FILE...  generate SFrame V3 from each file's
 *                                      .eh_frame and register it for the
 *                                      file's mappings, present and future
 *   sframectl del FILE...              drop those registrations
 *   sframectl del --build-id HEX       ... of a file no path names now
 *   sframectl sync                     add every file that a running
 *                                      process maps executable and that
 *                                      has no SFrame of its own
 *   sframectl daemon                   sync, then add every file that is
 *                                      mapped without SFrame from then on
 *                                      (sframectl-daemon.c)
 *   sframectl list [-p PID] [--json]   what is registered for a process
 *                                      (default: sframectl itself)
 *   sframectl list --sidecars [--json] every sidecar the module keeps
 *
 * Registration needs CAP_SYS_ADMIN or CAP_PERFMON, so sframectl runs as
 * root, and it reads files that any user can create and run.  Each file
 * is therefore parsed in a child process: the file is opened and read into
 * memory first, then the child gives up its privileges (user and group
 * nobody, no supplementary groups) and takes CPU-time and memory limits
 * before it parses a byte; it hands the section back through a pipe.  A hostile ELF
 * costs at most that child.  The parent registers the section with the
 * descriptor the child read, so it is the file the section came from.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <grp.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../include/sframe/format.h"
#include "../include/sframe/version.h"
#include "gen.h"
#include "sframectl.h"

#define CTL_EXIT_USAGE		2
#define CTL_NOBODY		65534
#define CTL_QUERY_MAX		4096
/* Exit codes of the child besides 0 (a section follows) and 1 (failed). */
#define CTL_CHILD_HAS_SFRAME	3
/* What the parent tells the child once it knows the build-id. */
#define CTL_CMD_GENERATE	'g'
#define CTL_CMD_QUIT		'q'
#define CTL_KIB_SHIFT		10
/* The most --cache-max takes: 1 TiB. */
#define CTL_CACHE_MAX_LIMIT	(1ULL << 40)
/* The most --child-timeout takes: an hour. */
#define CTL_CHILD_TIMEOUT_MAX	3600

const char *ctl_prog = "sframectl";
struct ctl_cache ctl_cache = { .dirfd = -1 };

static void ctl_print_usage(FILE *f)
{
	fputs("Usage: sframectl add [--replace] [--child-timeout SECONDS] FILE...\n"
	      "       sframectl del FILE... | --build-id HEX\n"
	      "       sframectl sync [--cache DIR] [--cache-max SIZE] [--child-timeout SECONDS]\n"
	      "       sframectl daemon [--cache DIR | --no-cache] [--cache-max SIZE]\n"
	      "                        [--child-timeout SECONDS]\n"
	      "       sframectl list [-p PID | --sidecars] [--json]\n"
	      "       sframectl --help | --version\n", f);
}

static void ctl_usage(void)
{
	ctl_print_usage(stderr);
	exit(CTL_EXIT_USAGE);
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

/* What an ioctl's errno means here. */
static const char *ctl_why(int err)
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

/* The whole file open at @fd, read (not parsed) with our privileges. */
static int ctl_slurp(int fd, struct elf_file *f)
{
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) || st.st_size <= 0 ||
	    (unsigned long long)st.st_size > CTL_FILE_MAX)
		return -1;
	f->size = st.st_size;
	f->data = malloc(f->size);
	if (!f->data)
		return -1;
	n = pread(fd, f->data, f->size, 0);
	return n == (ssize_t)f->size ? 0 : -1;
}

/* A file's build-id, as the child found it. */
struct ctl_id {
	u32 len;
	u8 bytes[SFRAME_UNWIND_BUILD_ID_MAX];
};

/*
 * Child: keep only its descriptors, read the file, give up privileges,
 * take limits and the system call filter (sframectl-child.c), then tell
 * the file's build-id on @out; if the parent answers CTL_CMD_GENERATE on @in
 * (its cache has no section for it), parse and generate; the section
 * goes to @out.
 */
static void ctl_child(int fd, int out, int in, const char *name)
{
	/* Shared rows: the section lives in the module's memory only. */
	struct gen_opts o = { .version = SFRAME_VERSION_3,
			      .vaddr = GEN_VADDR_PAST_IMAGE, .in = name,
			      .share_rows = true };
	struct gen_err err;
	struct ctl_id id;
	struct elf_file f;
	u64 len, vaddr;
	char cmd;
	u8 *buf;
	int ret;

	ctl_child_keep(fd, out, in);
	if (ctl_slurp(fd, &f)) {
		fprintf(stderr, "%s: %s: cannot read it\n", ctl_prog, name);
		_exit(1);
	}
	if (!geteuid() && (setgroups(0, NULL) || setgid(CTL_NOBODY) ||
			   setuid(CTL_NOBODY))) {
		perror("sframectl: dropping privileges");
		_exit(1);
	}
	if (ctl_child_confine(fd, name)) {
		perror("sframectl: limits");
		_exit(1);
	}
	memset(&id, 0, sizeof(id));
	id.len = sfu_elf_build_id(&f, id.bytes, sizeof(id.bytes));
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

static int ctl_read_all(int fd, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = ctl_child_read(fd, (u8 *)buf + done, len - done);
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

/* The section the child generates, read from @in; 0 or -1. */
static int ctl_receive(int in, u8 **bufp, u64 *lenp, u64 *vaddrp)
{
	u8 *buf;

	if (ctl_read_all(in, vaddrp, sizeof(*vaddrp)) ||
	    ctl_read_all(in, lenp, sizeof(*lenp)) || !*lenp ||
	    *lenp > CTL_SECTION_MAX)
		return -1;
	buf = malloc(*lenp);
	if (!buf)
		return -1;
	if (ctl_read_all(in, buf, *lenp)) {
		free(buf);
		return -1;
	}
	*bufp = buf;
	return 0;
}

/* 0 if the child ended well, -EEXIST if it found SFrame, else -1. */
static int ctl_reap(pid_t pid)
{
	int status;

	if (ctl_child_wait(pid, &status) || !WIFEXITED(status))
		return -1;
	if (WEXITSTATUS(status) == CTL_CHILD_HAS_SFRAME)
		return -EEXIST;
	return WEXITSTATUS(status) ? -1 : 0;
}

/*
 * Talk to the child of pid @pid: its build-id in @id, then the section
 * from the cache or from the child.
 */
static int ctl_converse(pid_t pid, int in, int out, struct ctl_id *id,
			struct ctl_cache_file *cf, u8 **bufp, u64 *lenp,
			u64 *vaddrp)
{
	char cmd = CTL_CMD_GENERATE;
	int ret, reaped;
	bool hit;

	if (ctl_read_all(in, id, sizeof(*id)) ||
	    id->len > sizeof(id->bytes)) {
		cmd = CTL_CMD_QUIT;
		if (write(out, &cmd, 1) != 1)
			kill(pid, SIGKILL);
		ctl_reap(pid);
		return -1;
	}
	hit = !ctl_cache_load(&ctl_cache, cf, id->bytes, id->len, bufp, lenp,
			      vaddrp);
	if (hit)
		cmd = CTL_CMD_QUIT;
	ret = write(out, &cmd, 1) == 1 ? 0 : -1;
	if (!hit && !ret)
		ret = ctl_receive(in, bufp, lenp, vaddrp);
	reaped = ctl_reap(pid);
	if (reaped == -EEXIST)
		ret = -EEXIST;
	else if (hit)
		ret = 0;	/* the child had nothing more to do */
	else if (reaped)
		ret = -1;	/* the child failed: trust nothing it wrote */
	if (ret && !hit && *bufp) {
		free(*bufp);
		*bufp = NULL;
	}
	return ret;
}

/*
 * The section for the file open at @fd, from the cache or made by a
 * child, and the file's build-id; 0, -EEXIST if the file has SFrame of
 * its own, or -1.
 */
static int ctl_generate(int fd, const char *name, struct ctl_id *id,
			struct ctl_cache_file *cf, u8 **bufp, u64 *lenp,
			u64 *vaddrp)
{
	int up[2], down[2], ret = -1;
	pid_t pid;

	*bufp = NULL;
	if (pipe2(up, O_CLOEXEC))
		return -1;
	if (pipe2(down, O_CLOEXEC))
		goto close_up;
	fflush(NULL);
	pid = fork();
	if (!pid) {
		close(up[0]);
		close(down[1]);
		ctl_child(fd, up[1], down[0], name);
	}
	ctl_child_started(name);
	close(up[1]);
	close(down[0]);
	up[1] = down[0] = -1;
	if (pid > 0)
		ret = ctl_converse(pid, up[0], down[1], id, cf, bufp, lenp,
				   vaddrp);
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
 * ctl_add_one() - generate and register a sidecar
 * @dev: the device
 * @path: where to open the file
 * @name: what to call it in messages
 * @flags: 0 or SFRAME_UNWIND_REPLACE
 * @quiet: say nothing of a file that has SFrame or a sidecar already
 *
 * Return: what happened.
 */
enum ctl_result ctl_add_one(int dev, const char *path, const char *name,
			    u32 flags, bool quiet)
{
	int fd = ctl_open_file(path);
	struct ctl_cache_file cf = { .fd = fd };
	enum ctl_result res = CTL_FAILED;
	u64 len = 0, vaddr = 0;
	struct ctl_id id;
	struct stat st;
	u8 *buf;
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
	ret = ctl_generate(fd, name, &id, &cf, &buf, &len, &vaddr);
	if (ret == -EEXIST) {
		if (!quiet)
			printf("%s: has SFrame of its own\n", name);
		res = CTL_HAS_SFRAME;
		goto close_fd;
	}
	if (ret) {
		fprintf(stderr, "%s: %s: no section made (see above)\n",
			ctl_prog, name);
		goto close_fd;
	}
	ret = ctl_file_ioctl(dev, SFRAME_UNWIND_IOC_ADD_FILE, fd, flags, &id,
			     buf, len, vaddr);
	/* Cached once the module took it: a section it refuses is not. */
	if (!ret)
		ctl_cache_store(&ctl_cache, &cf, id.bytes, id.len, buf, len,
				vaddr);
	free(buf);
	if (ret == -EEXIST && !(flags & SFRAME_UNWIND_REPLACE) && quiet) {
		res = CTL_ALREADY;
	} else if (ret) {
		fprintf(stderr, "%s: %s: %s\n", ctl_prog, name, ctl_why(-ret));
	} else {
		printf("%s: registered %" PRIu64 " bytes of SFrame V3\n", name,
		       len);
		res = CTL_ADDED;
	}
close_fd:
	if (fd >= 0)
		close(fd);
	return res;
}

/* --child-timeout SECONDS: 1 to CTL_CHILD_TIMEOUT_MAX. */
static void ctl_parse_timeout(const char *arg)
{
	char *end;
	unsigned long s = strtoul(arg, &end, 10);

	if (*end || !s || s > CTL_CHILD_TIMEOUT_MAX)
		ctl_usage();
	ctl_child_timeout_s = s;
}

static int ctl_add(int dev, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "replace", no_argument, NULL, 'r' },
		{ "child-timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	u32 flags = 0;
	int c, bad = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'r')
			flags |= SFRAME_UNWIND_REPLACE;
		else if (c == 't')
			ctl_parse_timeout(optarg);
		else
			ctl_usage();
	}
	if (optind == argc)
		ctl_usage();
	for (; optind < argc; optind++)
		bad += ctl_add_one(dev, argv[optind], argv[optind], flags,
				   false) == CTL_FAILED;
	return bad ? 1 : 0;
}

/* Parse a build-id given in hex into @a; false if it is not one. */
static bool ctl_parse_build_id(const char *hex, struct sframe_unwind_file *a)
{
	size_t n = strlen(hex) / 2, i;
	unsigned int byte;

	if (!n || strlen(hex) % 2 || n > SFRAME_UNWIND_BUILD_ID_MAX)
		return false;
	for (i = 0; i < n; i++) {
		if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
			return false;
		a->build_id[i] = byte;
	}
	a->build_id_len = n;
	return true;
}

/* del --build-id HEX: the sidecar of a file no path names any more. */
static int ctl_del_build_id(int dev, const char *hex)
{
	struct sframe_unwind_file a = {
		.size = sizeof(a),
		.flags = SFRAME_UNWIND_BY_BUILD_ID,
		.fd = -1,
	};

	if (!ctl_parse_build_id(hex, &a)) {
		fprintf(stderr, "%s: %s: not a build-id (hex, at most %d bytes)\n",
			ctl_prog, hex, SFRAME_UNWIND_BUILD_ID_MAX);
		return 1;
	}
	if (ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE, &a)) {
		fprintf(stderr, "%s: build-id %s: %s\n", ctl_prog, hex,
			ctl_why(errno));
		return 1;
	}
	printf("build-id %s: dropped\n", hex);
	return 0;
}

static int ctl_del(int dev, int argc, char **argv)
{
	int i, fd, ret, bad = 0;

	if (argc < 2)
		ctl_usage();
	if (!strcmp(argv[1], "--build-id"))
		return argc == 3 ? ctl_del_build_id(dev, argv[2]) :
				   (ctl_usage(), 1);
	for (i = 1; i < argc; i++) {
		fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		ret = fd < 0 ? -errno :
		      ctl_file_ioctl(dev, SFRAME_UNWIND_IOC_DEL_FILE, fd, 0,
				     NULL, NULL, 0, 0);
		if (fd >= 0)
			close(fd);
		if (ret) {
			fprintf(stderr, "%s: %s: %s\n", ctl_prog, argv[i],
				ctl_why(-ret));
			bad++;
		} else {
			printf("%s: dropped\n", argv[i]);
		}
	}
	return bad ? 1 : 0;
}

static const char *ctl_source(u8 source)
{
	switch (source) {
	case SFRAME_UNWIND_SRC_ELF:
		return "elf";
	case SFRAME_UNWIND_SRC_SIDECAR:
		return "sidecar";
	case SFRAME_UNWIND_SRC_JIT:
		return "jit";
	default:
		return "?";
	}
}

/* The path @pid maps at @addr, from /proc/PID/maps. */
static void ctl_path_at(pid_t pid, unsigned long addr, char *out, size_t len)
{
	char path[64], line[CTL_LINE_MAX];
	struct ctl_map m;
	FILE *f;

	snprintf(out, len, "-");
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (ctl_parse_map(line, &m) && addr >= m.start &&
		    addr < m.end) {
			snprintf(out, len, "%s", m.path);
			break;
		}
	fclose(f);
}

static void ctl_hex(const u8 *p, u32 n, char *out)
{
	u32 i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

/*
 * Run the query ioctl @cmd into a buffer of CTL_QUERY_MAX entries of
 * @elem_size bytes; @q->count ends as the number of entries filled.
 * Return: the buffer (the caller frees it), or NULL with errno set.
 */
static void *ctl_query(int dev, unsigned long cmd,
		       struct sframe_unwind_query *q, size_t elem_size)
{
	void *e = calloc(CTL_QUERY_MAX, elem_size);
	int err;

	if (!e)
		return NULL;
	q->count = CTL_QUERY_MAX;
	q->entries = (uintptr_t)e;
	if (ioctl(dev, cmd, q)) {
		err = errno;
		free(e);
		errno = err;
		return NULL;
	}
	if (q->count > CTL_QUERY_MAX)
		q->count = CTL_QUERY_MAX;
	return e;
}

/* list --sidecars [--json]: every sidecar the module keeps. */
static int ctl_list_sidecars(int dev, bool json)
{
	struct sframe_unwind_query q = { .size = sizeof(q) };
	char id[2 * SFRAME_UNWIND_BUILD_ID_MAX + 1];
	struct sframe_unwind_sidecar *e;
	unsigned int i;

	e = ctl_query(dev, SFRAME_UNWIND_IOC_LIST_FILES, &q, sizeof(*e));
	if (!e) {
		fprintf(stderr, "%s: sidecars: %s\n", ctl_prog, ctl_why(errno));
		return 1;
	}
	if (json)
		printf("[");
	for (i = 0; i < q.count; i++) {
		ctl_hex(e[i].build_id, e[i].build_id_len, id);
		if (json)
			printf("%s\n  {\"dev\": %llu, \"ino\": %llu, \"bytes\": %llu, \"build_id\": \"%s\"}",
			       i ? "," : "", (unsigned long long)e[i].dev,
			       (unsigned long long)e[i].ino,
			       (unsigned long long)e[i].sframe_len, id);
		else
			printf("dev %llu ino %llu %8llu bytes build-id %s\n",
			       (unsigned long long)e[i].dev,
			       (unsigned long long)e[i].ino,
			       (unsigned long long)e[i].sframe_len,
			       *id ? id : "-");
	}
	if (json)
		printf("\n]\n");
	free(e);
	return 0;
}

/* @str as a JSON string: quotes, backslashes and control bytes escaped. */
static void ctl_json_str(const char *str)
{
	const unsigned char *c;

	putchar('"');
	for (c = (const unsigned char *)str; *c; c++) {
		if (*c == '"' || *c == '\\')
			printf("\\%c", *c);
		else if (*c < ' ')
			printf("\\u%04x", *c);
		else
			putchar(*c);
	}
	putchar('"');
}

static void ctl_print_entry(const struct sframe_unwind_entry *e,
			    const char *path, bool json, bool first)
{
	if (!json) {
		printf("%#" PRIx64 "-%#" PRIx64 " %-7s v%u %6u fdes %8" PRIu64 " bytes %s\n",
		       (u64)e->text_start, (u64)e->text_end,
		       ctl_source(e->source), e->version, e->nr_fdes,
		       (u64)e->sframe_len, path);
		return;
	}
	printf("%s\n  {\"start\": %" PRIu64 ", \"end\": %" PRIu64 ", \"source\": \"%s\", \"version\": %u, \"fdes\": %u, \"bytes\": %" PRIu64 ", \"path\": ",
	       first ? "" : ",", (u64)e->text_start, (u64)e->text_end,
	       ctl_source(e->source), e->version, e->nr_fdes,
	       (u64)e->sframe_len);
	ctl_json_str(path);
	putchar('}');
}

/* list [-p PID] [--json]: the sections registered for a process. */
static int ctl_list_pid(int dev, pid_t pid, bool json)
{
	struct sframe_unwind_query q = { .size = sizeof(q), .pid = pid };
	struct sframe_unwind_entry *e;
	char path[CTL_PATH_MAX];
	unsigned int i;

	e = ctl_query(dev, SFRAME_UNWIND_IOC_QUERY, &q, sizeof(*e));
	if (!e) {
		fprintf(stderr, "%s: pid %d: %s\n", ctl_prog, q.pid,
			errno == ESRCH ? "no such process" : strerror(errno));
		return 1;
	}
	if (json)
		putchar('[');
	for (i = 0; i < q.count; i++) {
		ctl_path_at(pid ? pid : getpid(), e[i].text_start, path,
			    sizeof(path));
		ctl_print_entry(&e[i], path, json, !i);
	}
	if (json)
		printf("\n]\n");
	free(e);
	return 0;
}

static int ctl_list(int dev, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sidecars", no_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	bool sidecars = false, json = false;
	pid_t pid = 0;
	int c;

	while ((c = getopt_long(argc, argv, "p:", opts, NULL)) != -1) {
		if (c == 's')
			sidecars = true;
		else if (c == 'j')
			json = true;
		else if (c == 'p')
			pid = atoi(optarg);
		else
			ctl_usage();
	}
	if (optind != argc || (sidecars && pid))
		ctl_usage();
	return sidecars ? ctl_list_sidecars(dev, json) :
			  ctl_list_pid(dev, pid, json);
}

/* A size in bytes, with an optional K, M or G; 0 if it is not one. */
static u64 ctl_parse_size(const char *arg)
{
	static const char units[] = "KMG";
	unsigned long long n;
	const char *u;
	char *end;

	n = strtoull(arg, &end, 0);
	if (*end) {
		u = strchr(units, *end);
		if (!u || !*u || end[1])
			return 0;
		n <<= CTL_KIB_SHIFT * (u - units + 1);
	}
	return n <= CTL_CACHE_MAX_LIMIT ? n : 0;
}

/*
 * --cache DIR, --no-cache, --cache-max SIZE and --child-timeout SECONDS
 * of sync and daemon; the cache is on by default (in CTL_CACHE_DIR) for
 * the daemon only.
 */
static void ctl_cache_args(int argc, char **argv, bool on)
{
	static const struct option opts[] = {
		{ "cache", required_argument, NULL, 'c' },
		{ "no-cache", no_argument, NULL, 'n' },
		{ "cache-max", required_argument, NULL, 'm' },
		{ "child-timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	u64 max = CTL_CACHE_MAX;
	const char *dir = CTL_CACHE_DIR;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'c') {
			dir = optarg;
			on = true;
		} else if (c == 'n') {
			on = false;
		} else if (c == 'm') {
			max = ctl_parse_size(optarg);
			if (!max)
				ctl_usage();
		} else if (c == 't') {
			ctl_parse_timeout(optarg);
		} else {
			ctl_usage();
		}
	}
	if (optind != argc)
		ctl_usage();
	if (on)
		ctl_cache_open(&ctl_cache, dir, max);
}

int main(int argc, char **argv)
{
	struct ctl_seen seen = { 0 };
	const char *cmd;
	int dev, ret;

	if (argc < 2)
		ctl_usage();
	/* A child that died leaves a pipe without reader: an error, no signal. */
	signal(SIGPIPE, SIG_IGN);
	cmd = argv[1];
	if (!strcmp(cmd, "--help")) {
		ctl_print_usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("sframectl (sframe-unwind) %s\n", SFU_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "daemon")) {
		ctl_cache_args(argc - 1, argv + 1, true);
		ret = ctl_daemon();
		ctl_cache_close(&ctl_cache);
		return ret;
	}
	if (strcmp(cmd, "add") && strcmp(cmd, "del") && strcmp(cmd, "sync") &&
	    strcmp(cmd, "list"))
		ctl_usage();
	dev = ctl_open_dev();
	if (dev < 0)
		return 1;
	if (!strcmp(cmd, "add"))
		ret = ctl_add(dev, argc - 1, argv + 1);
	else if (!strcmp(cmd, "del"))
		ret = ctl_del(dev, argc - 1, argv + 1);
	else if (!strcmp(cmd, "sync")) {
		ctl_cache_args(argc - 1, argv + 1, false);
		ret = ctl_sync(dev, &seen);
	} else
		ret = ctl_list(dev, argc - 1, argv + 1);
	ctl_seen_free(&seen);
	ctl_cache_close(&ctl_cache);
	close(dev);
	return ret;
}
