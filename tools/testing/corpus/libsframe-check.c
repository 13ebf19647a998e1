// SPDX-License-Identifier: GPL-2.0
/*
 * libsframe-check: do binutils' own SFrame reader and this project's
 * writer agree on what a standard section is?
 *
 *   libsframe-check LIBSFRAME SECTION...
 *
 * LIBSFRAME is libsframe.so of binutils (3.x reads V3), loaded with
 * dlopen(), so that nothing of binutils is built or linked here.  Each
 * SECTION (a raw section, as sframe-gen -o writes it) is decoded with
 * sframe_decode(), which also swaps a section of the other byte order,
 * and every row of every function is read back.  Prints one line per
 * section, "SECTION: ok, N FDEs, M FREs" or "SECTION: refused: WHY".
 *
 * Exit: 0 if libsframe read every section, 1 if it refused one, 2 on a
 * usage error or if the library cannot be loaded.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Room for one decoded row, more than libsframe's struct needs. */
#define LSF_FRE_ROOM	256

typedef void *(*lsf_decode_fn)(const char *buf, size_t len, int *err);
typedef void (*lsf_free_fn)(void **ctx);
typedef uint32_t (*lsf_num_fidx_fn)(const void *ctx);
typedef int (*lsf_funcdesc_v3_fn)(const void *ctx, unsigned int i,
				  uint32_t *num_fres, uint32_t *size,
				  int64_t *start, unsigned char *info,
				  unsigned char *info2, uint8_t *rep);
typedef int (*lsf_get_fre_fn)(const void *ctx, unsigned int i,
			      unsigned int j, void *fre);
typedef const char *(*lsf_errmsg_fn)(int err);

struct lsf {
	lsf_decode_fn decode;
	lsf_free_fn free;
	lsf_num_fidx_fn num_fidx;
	lsf_funcdesc_v3_fn funcdesc;
	lsf_get_fre_fn get_fre;
	lsf_errmsg_fn errmsg;
};

static int lsf_load(const char *path, struct lsf *l)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "libsframe-check: %s\n", dlerror());
		return -1;
	}
	l->decode = (lsf_decode_fn)dlsym(h, "sframe_decode");
	l->free = (lsf_free_fn)dlsym(h, "sframe_decoder_free");
	l->num_fidx = (lsf_num_fidx_fn)dlsym(h, "sframe_decoder_get_num_fidx");
	l->funcdesc = (lsf_funcdesc_v3_fn)dlsym(h, "sframe_decoder_get_funcdesc_v3");
	l->get_fre = (lsf_get_fre_fn)dlsym(h, "sframe_decoder_get_fre");
	l->errmsg = (lsf_errmsg_fn)dlsym(h, "sframe_errmsg");
	if (!l->decode || !l->free || !l->num_fidx || !l->funcdesc ||
	    !l->get_fre || !l->errmsg) {
		fprintf(stderr, "libsframe-check: %s lacks the V3 reader\n", path);
		return -1;
	}
	return 0;
}

static char *lsf_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf = NULL;

	if (!f)
		return NULL;
	if (!fstat(fileno(f), &st) && st.st_size > 0) {
		buf = malloc(st.st_size);
		if (buf && fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
			free(buf);
			buf = NULL;
		}
		*len = st.st_size;
	}
	fclose(f);
	return buf;
}

/* Every row of every function; 0, or -1 with *@why set. */
static int lsf_rows(const struct lsf *l, void *ctx, uint32_t nr,
		    unsigned long *fres, const char **why)
{
	uint64_t fre[LSF_FRE_ROOM / sizeof(uint64_t)];
	unsigned char info, info2;
	uint32_t num, size, i, j;
	int64_t start;
	uint8_t rep;
	int err;

	for (i = 0; i < nr; i++) {
		err = l->funcdesc(ctx, i, &num, &size, &start, &info, &info2,
				  &rep);
		for (j = 0; !err && j < num; j++)
			err = l->get_fre(ctx, i, j, fre);
		if (err) {
			*why = "a function's rows cannot be read";
			return -1;
		}
		*fres += num;
	}
	return 0;
}

static int lsf_check(const struct lsf *l, const char *path)
{
	unsigned long fres = 0;
	const char *why = NULL;
	void *ctx = NULL;
	size_t len = 0;
	uint32_t nr;
	char *buf;
	int err = 0;

	buf = lsf_slurp(path, &len);
	if (!buf) {
		printf("%s: cannot be read\n", path);
		return -1;
	}
	ctx = l->decode(buf, len, &err);
	if (!ctx) {
		printf("%s: refused: %s\n", path, l->errmsg(err));
		free(buf);
		return -1;
	}
	nr = l->num_fidx(ctx);
	if (lsf_rows(l, ctx, nr, &fres, &why))
		printf("%s: refused: %s\n", path, why);
	else
		printf("%s: ok, %u FDEs, %lu FREs\n", path, nr, fres);
	l->free(&ctx);
	free(buf);
	return why ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct lsf l;
	int i, bad = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: libsframe-check LIBSFRAME SECTION...\n");
		return 2;
	}
	if (lsf_load(argv[1], &l))
		return 2;
	for (i = 2; i < argc; i++)
		bad |= lsf_check(&l, argv[i]) != 0;
	return bad;
}
