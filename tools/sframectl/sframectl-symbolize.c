// SPDX-License-Identifier: GPL-2.0
/*
 * sframectl symbolize: name the frames of the module's stacks after the
 * process is gone.
 *
 * The trace event sframe_unwind_frames gives per frame its address in its
 * file and the file's GNU build-id (or, for a file without one, its device
 * and inode).  This reads a trace as text (the tracefs trace file,
 * trace_pipe, or trace-cmd report), finds the files the events name under
 * the directories given (default: the system's program and library
 * directories; a build-id's debug file under /usr/lib/debug/.build-id
 * gives the symbols where it is installed), and prints each such event as
 * a stack the way perf script does: per frame its address, the function
 * and offset from the file's symbol tables, and the file.  Every other
 * line passes unchanged.  It needs neither the module nor the process.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf-sframe.h"
#include "sframectl.h"

#define SYM_EVENT		"sframe_unwind_frames:"
/* Files one run keeps; an event names at most 16 (kernel/frame_id.h). */
#define SYM_FILES_MAX		4096
/* Frames an event may have: more than the module's max_depth allows. */
#define SYM_DEPTH_MAX		4096
#define SYM_EVENT_FILES_MAX	256
/* Bytes read from the start of a file to find its build-id note. */
#define SYM_PREFIX		(64 * 1024)
#define SYM_NFTW_FDS		16
#define SYM_DEBUG_ROOT		"/usr/lib/debug/"
#define SYM_DEBUG_DIR		SYM_DEBUG_ROOT ".build-id"
#define SYM_DEBUG_SUFFIX	".debug"

static const char *const sym_default_paths[] = {
	"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/libexec", "/usr/local",
	"/opt",
};

struct sym_fn {
	uint64_t start;
	uint64_t size;
	const char *name;
};

/* A file the events name, where it was found, and its functions. */
struct sym_file {
	uint8_t id[SFRAME_UNWIND_BUILD_ID_MAX];
	unsigned int id_len;
	unsigned int major, minor;
	unsigned long long ino;
	char *path;		/* the file found, or NULL */
	char *debug;		/* its debug file, or NULL */
	bool loaded;		/* @fns read (or tried) */
	struct sym_fn *fns;
	size_t nr_fns;
	struct elf_file elf;	/* whose string tables @fns point into */
};

/* One event's fields, as parsed from its line. */
struct sym_event {
	unsigned int nr, nr_files;
	uint64_t addrs[SYM_DEPTH_MAX];
	uint8_t file_of[SYM_DEPTH_MAX];
	uint8_t ids[SYM_EVENT_FILES_MAX * SFRAME_UNWIND_BUILD_ID_MAX];
	uint8_t id_lens[SYM_EVENT_FILES_MAX];
	uint64_t majors[SYM_EVENT_FILES_MAX];
	uint64_t minors[SYM_EVENT_FILES_MAX];
	uint64_t inos[SYM_EVENT_FILES_MAX];
	int files[SYM_EVENT_FILES_MAX];	/* indexes in sym.files */
};

static struct {
	struct sym_file files[SYM_FILES_MAX];
	unsigned int nr_files;
	unsigned int missing;	/* files not found yet */
	struct sym_event ev;
} sym;

/* The text after " KEY=" in @line, or NULL. */
static const char *sym_field(const char *line, const char *key)
{
	size_t len = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if (p > line && p[-1] == ' ' && p[len] == '=')
			return p + len + 1;
		p += len;
	}
	return NULL;
}

/*
 * An array of numbers into @out: "{0x1,0x2}" as the kernel prints it, or
 * "1 2" as trace-cmd (libtraceevent) does; it ends at "}", at the end of
 * the line or at the next field.  Return: its length, or -1.
 */
static int sym_array(const char *line, const char *key, uint64_t *out,
		     unsigned int max)
{
	const char *p = sym_field(line, key);
	unsigned int n = 0;
	uint64_t v;
	char *end;

	if (!p)
		return -1;
	if (*p == '{')
		p++;
	for (;;) {
		while (*p == ',' || *p == ' ')
			p++;
		v = strtoull(p, &end, 0);
		if (end == p)
			break;
		if (*end && *end != ',' && *end != '}' && !isspace(*end))
			return -1;
		if (n == max)
			return -1;
		out[n++] = v;
		p = end;
	}
	return n;
}

/* A string of hexadecimal digit pairs into @out.  Return: bytes, or -1. */
static int sym_hex(const char *line, const char *key, uint8_t *out,
		   unsigned int max)
{
	const char *p = sym_field(line, key);
	unsigned int n = 0, v;

	if (!p)
		return -1;
	while (isxdigit((unsigned char)p[0]) && isxdigit((unsigned char)p[1])) {
		if (n == max || sscanf(p, "%2x", &v) != 1)
			return -1;
		out[n++] = v;
		p += 2;
	}
	return n;
}

/* The fields of a frames event at @line.  Return: 0 or -1. */
static int sym_parse(const char *line, struct sym_event *ev)
{
	int nr, nf, i;

	nr = sym_array(line, "addrs", ev->addrs, SYM_DEPTH_MAX);
	if (nr < 0 || sym_hex(line, "file_of", ev->file_of, nr) != nr)
		return -1;
	nf = sym_hex(line, "build_id_lens", ev->id_lens, SYM_EVENT_FILES_MAX);
	if (nf < 0 ||
	    sym_array(line, "majors", ev->majors, nf) != nf ||
	    sym_array(line, "minors", ev->minors, nf) != nf ||
	    sym_array(line, "inos", ev->inos, nf) != nf ||
	    sym_hex(line, "build_ids", ev->ids, sizeof(ev->ids)) !=
	    nf * SFRAME_UNWIND_BUILD_ID_MAX)
		return -1;
	for (i = 0; i < nf; i++)
		if (ev->id_lens[i] > SFRAME_UNWIND_BUILD_ID_MAX)
			return -1;
	ev->nr = nr;
	ev->nr_files = nf;
	return 0;
}

/* The file @i of @ev in sym.files, added if new; -1 if full. */
static int sym_file_of(const struct sym_event *ev, unsigned int i)
{
	const uint8_t *id = ev->ids + i * SFRAME_UNWIND_BUILD_ID_MAX;
	unsigned int len = ev->id_lens[i];
	struct sym_file *f;
	unsigned int j;

	for (j = 0; j < sym.nr_files; j++) {
		f = &sym.files[j];
		if (len ? f->id_len == len && !memcmp(f->id, id, len) :
		    !f->id_len && f->major == ev->majors[i] &&
		    f->minor == ev->minors[i] && f->ino == ev->inos[i])
			return j;
	}
	if (sym.nr_files == SYM_FILES_MAX)
		return -1;
	f = &sym.files[sym.nr_files];
	memcpy(f->id, id, len);
	f->id_len = len;
	f->major = ev->majors[i];
	f->minor = ev->minors[i];
	f->ino = ev->inos[i];
	sym.missing++;
	return sym.nr_files++;
}

/* Parse the frames event of @line, if it is one, into sym.ev. */
static bool sym_event_at(const char *line)
{
	const char *p = strstr(line, SYM_EVENT);
	unsigned int i;

	if (!p || sym_parse(p, &sym.ev))
		return false;
	for (i = 0; i < sym.ev.nr_files; i++)
		sym.ev.files[i] = sym_file_of(&sym.ev, i);
	return true;
}

/* Build-id @id as hexadecimal into @buf (2 * len + 1 bytes). */
static void sym_id_hex(const uint8_t *id, unsigned int len, char *buf)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	buf[2 * len] = '\0';
}

/* The debug file /usr/lib/debug/.build-id/xx/yyyy.debug of @f, if any. */
static void sym_find_debug(struct sym_file *f)
{
	char hex[2 * SFRAME_UNWIND_BUILD_ID_MAX + 1];
	char *path;

	if (f->id_len < 2)
		return;
	sym_id_hex(f->id, f->id_len, hex);
	if (asprintf(&path, "%s/%.2s/%s%s", SYM_DEBUG_DIR, hex, hex + 2,
		     SYM_DEBUG_SUFFIX) < 0)
		return;
	if (!access(path, R_OK))
		f->debug = path;
	else
		free(path);
}

/* The build-id of the file at @path, from its first SYM_PREFIX bytes. */
static size_t sym_read_build_id(const char *path, uint8_t *id)
{
	static uint8_t buf[SYM_PREFIX];
	struct elf_file ef = { .data = buf };
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	if (n < (ssize_t)sizeof(Elf64_Ehdr))
		return 0;
	ef.size = n;
	return elf_build_id(&ef, id, SFRAME_UNWIND_BUILD_ID_MAX);
}

static bool sym_is_debug_name(const char *name)
{
	size_t len = strlen(name), sl = strlen(SYM_DEBUG_SUFFIX);

	return len >= sl && !strcmp(name + len - sl, SYM_DEBUG_SUFFIX);
}

/* nftw(): is this file one the events name? */
static int sym_visit(const char *path, const struct stat *st, int type,
		     struct FTW *ftw)
{
	uint8_t id[SFRAME_UNWIND_BUILD_ID_MAX];
	size_t len = 0;
	bool read = false;
	unsigned int i;

	/* Debug files have the build-id too, but are not the file. */
	if (type != FTW_F || !S_ISREG(st->st_mode) ||
	    st->st_size < (off_t)sizeof(Elf64_Ehdr) ||
	    !strncmp(path, SYM_DEBUG_ROOT, strlen(SYM_DEBUG_ROOT)) ||
	    sym_is_debug_name(path + ftw->base))
		return 0;
	for (i = 0; i < sym.nr_files; i++) {
		struct sym_file *f = &sym.files[i];

		if (f->path)
			continue;
		if (f->id_len && !read) {
			len = sym_read_build_id(path, id);
			read = true;
		}
		if (f->id_len ? len == f->id_len && !memcmp(id, f->id, len) :
		    major(st->st_dev) == f->major &&
		    minor(st->st_dev) == f->minor && st->st_ino == f->ino) {
			f->path = strdup(path);
			sym.missing--;
		}
	}
	return sym.missing ? 0 : 1;
}

/* Find the files of the events under @paths (the defaults if none). */
static void sym_find_files(char **paths, int nr)
{
	unsigned int i;
	int j;

	for (i = 0; i < sym.nr_files; i++)
		sym_find_debug(&sym.files[i]);
	for (j = 0; j < nr && sym.missing; j++)
		nftw(paths[j], sym_visit, SYM_NFTW_FDS, FTW_PHYS);
	if (nr)
		return;
	for (i = 0; i < ARRAY_SIZE(sym_default_paths) && sym.missing; i++)
		nftw(sym_default_paths[i], sym_visit, SYM_NFTW_FDS,
		     FTW_PHYS | FTW_MOUNT);
}

static int sym_fn_cmp(const void *a, const void *b)
{
	const struct sym_fn *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The functions of one symbol table @sh of @e, added to @f. */
static void sym_load_table(struct sym_file *f, const struct elf_view *e,
			   const uint8_t *sh)
{
	uint64_t off = ELF_RD(e, sh, Elf64_Shdr, sh_offset);
	uint64_t size = ELF_RD(e, sh, Elf64_Shdr, sh_size);
	const uint8_t *strsh = elf_shdr(e, ELF_RD(e, sh, Elf64_Shdr, sh_link));
	uint64_t stroff, strsize, i, nr = size / sizeof(Elf64_Sym);
	struct sym_fn *fns;

	if (!strsh || !elf_in_file(e->f, off, size))
		return;
	stroff = ELF_RD(e, strsh, Elf64_Shdr, sh_offset);
	strsize = ELF_RD(e, strsh, Elf64_Shdr, sh_size);
	if (!strsize || !elf_in_file(e->f, stroff, strsize) ||
	    e->f->data[stroff + strsize - 1])
		return;
	fns = realloc(f->fns, (f->nr_fns + nr) * sizeof(*fns));
	if (!fns)
		return;
	f->fns = fns;
	for (i = 0; i < nr; i++) {
		const uint8_t *s = e->f->data + off + i * sizeof(Elf64_Sym);
		unsigned int type = ELF64_ST_TYPE(ELF_RD(e, s, Elf64_Sym,
							 st_info));
		uint64_t name = ELF_RD(e, s, Elf64_Sym, st_name);
		struct sym_fn *fn = &f->fns[f->nr_fns];

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    ELF_RD(e, s, Elf64_Sym, st_shndx) == SHN_UNDEF ||
		    name >= strsize)
			continue;
		fn->start = ELF_RD(e, s, Elf64_Sym, st_value);
		fn->size = ELF_RD(e, s, Elf64_Sym, st_size);
		fn->name = (const char *)e->f->data + stroff + name;
		f->nr_fns++;
	}
}

/* Read @f's functions: .symtab and .dynsym, of its debug file or itself. */
static void sym_load(struct sym_file *f)
{
	const char *path = f->debug ? f->debug : f->path;
	const uint8_t *sh;
	struct elf_view e;
	uint32_t i, type;

	f->loaded = true;
	if (!path || elf_file_load(path, &f->elf))
		return;
	if (elf_view_init(&e, &f->elf))
		return;
	for (i = 0; (sh = elf_shdr(&e, i)); i++) {
		type = ELF_RD(&e, sh, Elf64_Shdr, sh_type);
		if (type == SHT_SYMTAB || type == SHT_DYNSYM)
			sym_load_table(f, &e, sh);
	}
	qsort(f->fns, f->nr_fns, sizeof(*f->fns), sym_fn_cmp);
}

/* The function of @f that @addr is in, or NULL. */
static const struct sym_fn *sym_lookup(struct sym_file *f, uint64_t addr)
{
	size_t lo = 0, hi, mid;
	const struct sym_fn *fn;

	if (!f->loaded)
		sym_load(f);
	hi = f->nr_fns;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (f->fns[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Of the functions starting last at or before @addr, one holding it. */
	while (lo--) {
		fn = &f->fns[lo];
		if (addr - fn->start < fn->size)
			return fn;
		if (lo && f->fns[lo - 1].start != fn->start)
			break;
	}
	return NULL;
}

/* One frame: address, function + offset, file. */
static void sym_print_frame(const struct sym_event *ev, unsigned int i)
{
	char hex[2 * SFRAME_UNWIND_BUILD_ID_MAX + 1];
	uint64_t addr = ev->addrs[i], idx = ev->file_of[i];
	const struct sym_fn *fn = NULL;
	struct sym_file *f;

	if (idx >= ev->nr_files || ev->files[idx] < 0) {
		printf("\t%16" PRIx64 " [unknown] ([anon])\n", addr);
		return;
	}
	f = &sym.files[ev->files[idx]];
	/* Return addresses: the call is the byte before. */
	if (f->path || f->debug)
		fn = sym_lookup(f, i && addr ? addr - 1 : addr);
	if (fn)
		printf("\t%16" PRIx64 " %s+0x%" PRIx64, addr, fn->name,
		       addr - fn->start);
	else
		printf("\t%16" PRIx64 " [unknown]", addr);
	if (f->path) {
		printf(" (%s)\n", f->path);
	} else if (f->id_len) {
		sym_id_hex(f->id, f->id_len, hex);
		printf(" (build-id %s)\n", hex);
	} else {
		printf(" (dev %u:%u ino %llu)\n", f->major, f->minor, f->ino);
	}
}

/* @line, and for a frames event its stack after it. */
static void sym_print_line(const char *line)
{
	unsigned int i;

	fputs(line, stdout);
	if (!sym_event_at(line))
		return;
	for (i = 0; i < sym.ev.nr; i++)
		sym_print_frame(&sym.ev, i);
	putchar('\n');
}

/* Every line of @in, into a growing array.  Return: how many, or -1. */
static ssize_t sym_read_lines(FILE *in, char ***lines)
{
	size_t nr = 0, cap = 0, len = 0;
	char *line = NULL, **l;

	*lines = NULL;
	while (getline(&line, &len, in) >= 0) {
		if (nr == cap) {
			cap = cap ? 2 * cap : 256;
			l = realloc(*lines, cap * sizeof(*l));
			if (!l)
				return -1;
			*lines = l;
		}
		(*lines)[nr++] = line;
		line = NULL;
		len = 0;
	}
	free(line);
	return nr;
}

/**
 * ctl_symbolize() - sframectl symbolize [--path DIR]... [TRACE]
 * @argc: arguments after "symbolize"
 * @argv: them
 *
 * Return: 0, 1 if the trace could not be read or had no frames event, -1
 * for arguments it does not take.
 */
int ctl_symbolize(int argc, char **argv)
{
	char **paths = calloc(argc + 1, sizeof(*paths)), **lines;
	const char *trace = NULL;
	unsigned int events = 0;
	int i, nr_paths = 0;
	ssize_t nr, j;
	FILE *in = stdin;

	if (!paths)
		return 1;
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--path") && i + 1 < argc)
			paths[nr_paths++] = argv[++i];
		else if (!trace && argv[i][0] != '-')
			trace = argv[i];
		else
			return -1;
	}
	if (trace) {
		in = fopen(trace, "r");
		if (!in) {
			perror(trace);
			return 1;
		}
	}
	nr = sym_read_lines(in, &lines);
	if (in != stdin)
		fclose(in);
	if (nr < 0)
		return 1;
	for (j = 0; j < nr; j++)
		events += sym_event_at(lines[j]);
	sym_find_files(paths, nr_paths);
	for (j = 0; j < nr; j++)
		sym_print_line(lines[j]);
	if (!events)
		fprintf(stderr, "%s symbolize: no %s event in the trace\n",
			ctl_prog, SYM_EVENT);
	return events ? 0 : 1;
}
