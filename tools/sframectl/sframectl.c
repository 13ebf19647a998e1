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
 *   sframectl warm PATH...             make the sections of the ELF files
 *                                      under PATH into the cache, ahead of
 *                                      use (sframectl-warm.c)
 *   sframectl symbolize [--path DIR]... [TRACE]
 *                                      name the frames of the module's
 *                                      sframe_unwind_frames events
 *                                      (sframectl-symbolize.c)
 *   sframectl list [-p PID] [--json]   what is registered for a process
 *                                      (default: sframectl itself)
 *   sframectl list --sidecars [--json] every sidecar the module keeps
 *
 * This file holds the command line and the del and list commands; each
 * file is registered by the core (sframectl-core.c), in a parsing child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <sframe/version.h>
#include "sframectl.h"

#define CTL_EXIT_USAGE		2
#define CTL_QUERY_MAX		4096
#define CTL_KIB_SHIFT		10
/* The most --cache-max takes: 1 TiB. */
#define CTL_CACHE_MAX_LIMIT	(1ULL << 40)
/* The most --child-timeout takes: an hour. */
#define CTL_CHILD_TIMEOUT_MAX	3600

const char *ctl_prog = "sframectl";

static void ctl_print_usage(FILE *f)
{
	fputs("Usage: sframectl add [--replace] [--child-timeout SECONDS] FILE...\n"
	      "       sframectl del FILE... | --build-id HEX\n"
	      "       sframectl sync [--cache DIR] [--cache-max SIZE] [--child-timeout SECONDS]\n"
	      "                      [--copy-max SIZE]\n"
	      "       sframectl daemon [--cache DIR | --no-cache] [--cache-max SIZE]\n"
	      "                        [--child-timeout SECONDS] [--copy-max SIZE]\n"
	      "       sframectl warm [--cache DIR] [--cache-max SIZE] [--child-timeout SECONDS]\n"
	      "                      [--copy-max SIZE] PATH...\n"
	      "       sframectl symbolize [--path DIR]... [TRACE]\n"
	      "       sframectl list [-p PID | --sidecars] [--json]\n"
	      "       sframectl --help | --version\n", f);
}

static void ctl_usage(void)
{
	ctl_print_usage(stderr);
	exit(CTL_EXIT_USAGE);
}

/* --child-timeout SECONDS: 1 to CTL_CHILD_TIMEOUT_MAX. */
static void ctl_parse_timeout(struct ctl_ctx *ctx, const char *arg)
{
	char *end;
	unsigned long s = strtoul(arg, &end, 10);

	if (*end || !s || s > CTL_CHILD_TIMEOUT_MAX)
		ctl_usage();
	ctx->child_timeout_s = s;
}

static int ctl_add(struct ctl_ctx *ctx, int argc, char **argv)
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
			ctl_parse_timeout(ctx, optarg);
		else
			ctl_usage();
	}
	if (optind == argc)
		ctl_usage();
	for (; optind < argc; optind++)
		bad += ctl_add_one(ctx, argv[optind], argv[optind], flags,
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
		ret = fd < 0 ? -errno : ctl_drop_file(dev, fd);
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
 * --cache DIR, --no-cache, --cache-max SIZE, --child-timeout SECONDS and
 * --copy-max SIZE (up to CTL_FILE_MAX) of sync, daemon and warm; the
 * cache is on by default (in CTL_CACHE_DIR) for the daemon and warm.
 */
static int ctl_cache_args(struct ctl_ctx *ctx, int argc, char **argv,
			  bool on, bool paths)
{
	static const struct option opts[] = {
		{ "cache", required_argument, NULL, 'c' },
		{ "no-cache", no_argument, NULL, 'n' },
		{ "cache-max", required_argument, NULL, 'm' },
		{ "child-timeout", required_argument, NULL, 't' },
		{ "copy-max", required_argument, NULL, 'b' },
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
			ctl_parse_timeout(ctx, optarg);
		} else if (c == 'b') {
			ctx->copy_max = ctl_parse_size(optarg);
			if (!ctx->copy_max || ctx->copy_max > CTL_FILE_MAX)
				ctl_usage();
		} else {
			ctl_usage();
		}
	}
	if (paths ? optind == argc : optind != argc)
		ctl_usage();
	if (on)
		ctl_cache_open(&ctx->cache, dir, max);
	return optind;
}

int main(int argc, char **argv)
{
	struct ctl_seen seen = { 0 };
	struct ctl_ctx ctx;
	const char *cmd;
	int i, ret;

	if (argc < 2)
		ctl_usage();
	/* A child that died leaves a pipe without reader: an error, no signal. */
	signal(SIGPIPE, SIG_IGN);
	ctl_ctx_init(&ctx);
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
		ctl_cache_args(&ctx, argc - 1, argv + 1, true, false);
		ret = ctl_daemon(&ctx);
		ctl_cache_close(&ctx.cache);
		return ret;
	}
	if (!strcmp(cmd, "warm")) {
		i = ctl_cache_args(&ctx, argc - 1, argv + 1, true, true);
		ret = ctl_warm(&ctx, argv + 1 + i, argc - 1 - i);
		ctl_cache_close(&ctx.cache);
		return ret;
	}
	if (!strcmp(cmd, "symbolize")) {
		ret = ctl_symbolize(argc - 2, argv + 2);
		if (ret < 0)
			ctl_usage();
		return ret;
	}
	if (strcmp(cmd, "add") && strcmp(cmd, "del") && strcmp(cmd, "sync") &&
	    strcmp(cmd, "list"))
		ctl_usage();
	ctx.dev = ctl_open_dev();
	if (ctx.dev < 0)
		return 1;
	if (!strcmp(cmd, "add"))
		ret = ctl_add(&ctx, argc - 1, argv + 1);
	else if (!strcmp(cmd, "del"))
		ret = ctl_del(ctx.dev, argc - 1, argv + 1);
	else if (!strcmp(cmd, "sync")) {
		ctl_cache_args(&ctx, argc - 1, argv + 1, false, false);
		ret = ctl_sync(&ctx, &seen);
	} else
		ret = ctl_list(ctx.dev, argc - 1, argv + 1);
	ctl_seen_free(&seen);
	ctl_cache_close(&ctx.cache);
	close(ctx.dev);
	return ret;
}
