// SPDX-License-Identifier: GPL-2.0
/*
 * corrupt-sframe KIND IN OUT: copy the ELF file IN to OUT with its SFrame
 * section, the one the PT_GNU_SFRAME program header points at, broken in
 * one way.  A host tool: tools/testing/qemu/run.sh builds the corrupt programs
 * and libraries of the registry_corrupt selftest with it.  Handles 64-bit
 * ELF of either byte order and SFrame V1 to V3.
 *
 *   magic   the magic is not 0xdee2
 *   nfdes   the header counts 0x7fffffff functions
 *   fdeoff  the FDE sub-section starts far past the end of the section
 *   freoff  the FRE sub-section starts far past the end of the section
 *   frefde  the first function's rows start far past the FRE sub-section
 *           (found only when the rows are validated)
 *   trunc   PT_GNU_SFRAME is cut to 16 bytes, shorter than the header
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sframe/format.h>

#define BAD_MAGIC	0xdead
#define BAD_COUNT	0x7fffffffu
#define BAD_OFFSET	0x7ffffff0u
#define TRUNC_LEN	16

struct image {
	unsigned char *data;
	size_t size;
	int elf_big;		/* ELF byte order */
	int sf_big;		/* SFrame byte order */
};

static unsigned long long get(const struct image *im, size_t off,
			      unsigned int n, int big)
{
	unsigned long long v = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		v |= (unsigned long long)im->data[off + i] <<
		     (8 * (big ? n - 1 - i : i));
	return v;
}

static void put(struct image *im, size_t off, unsigned long long v,
		unsigned int n, int big)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		im->data[off + i] = v >> (8 * (big ? n - 1 - i : i));
}

static int load(const char *path, struct image *im)
{
	FILE *f = fopen(path, "rb");
	long len;

	if (!f)
		return -1;
	len = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (len < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	im->size = len;
	im->data = malloc(im->size ? im->size : 1);
	if (!im->data || fread(im->data, 1, im->size, f) != im->size) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static int store(const char *path, const struct image *im)
{
	FILE *f = fopen(path, "wb");
	int ret;

	if (!f)
		return -1;
	ret = fwrite(im->data, 1, im->size, f) == im->size ? 0 : -1;
	if (fclose(f))
		ret = -1;
	return ret ? ret : chmod(path, 0755);
}

#define PHDR(f)		offsetof(Elf64_Phdr, f)
#define FIELD_SIZE(t, f) sizeof(((t *)0)->f)
#define EGET(im, off, t, f) \
	get(im, (off) + offsetof(t, f), FIELD_SIZE(t, f), (im)->elf_big)

/* Offset of the PT_GNU_SFRAME program header, or 0. */
static size_t find_phdr(const struct image *im)
{
	size_t phoff, entsize, i, nr, at;

	phoff = EGET(im, 0, Elf64_Ehdr, e_phoff);
	entsize = EGET(im, 0, Elf64_Ehdr, e_phentsize);
	nr = EGET(im, 0, Elf64_Ehdr, e_phnum);
	if (entsize < sizeof(Elf64_Phdr) || phoff > im->size ||
	    nr > (im->size - phoff) / entsize)
		return 0;
	for (i = 0; i < nr; i++) {
		at = phoff + i * entsize;
		if (EGET(im, at, Elf64_Phdr, p_type) == SFRAME_PT_GNU_SFRAME)
			return at;
	}
	return 0;
}

#define SF_HDR(f)	offsetof(struct sframe_header, f)
#define SF_SIZE(f)	FIELD_SIZE(struct sframe_header, f)

static int corrupt(struct image *im, const char *kind, size_t ph)
{
	size_t off = EGET(im, ph, Elf64_Phdr, p_offset);
	size_t len = EGET(im, ph, Elf64_Phdr, p_filesz);
	size_t fde, at;
	unsigned int version;

	if (off > im->size || len > im->size - off ||
	    len < sizeof(struct sframe_header))
		return -1;
	im->sf_big = im->data[off] == (SFRAME_MAGIC >> 8);
	version = im->data[off + offsetof(struct sframe_preamble,
					  sfp_version)];
	fde = off + sizeof(struct sframe_header) +
	      im->data[off + SF_HDR(sfh_auxhdr_len)] +
	      get(im, off + SF_HDR(sfh_fdeoff), SF_SIZE(sfh_fdeoff),
		  im->sf_big);
	if (!strcmp(kind, "magic")) {
		put(im, off, BAD_MAGIC, sizeof(u16), im->sf_big);
	} else if (!strcmp(kind, "nfdes")) {
		put(im, off + SF_HDR(sfh_num_fdes), BAD_COUNT,
		    SF_SIZE(sfh_num_fdes), im->sf_big);
	} else if (!strcmp(kind, "fdeoff")) {
		put(im, off + SF_HDR(sfh_fdeoff), BAD_OFFSET,
		    SF_SIZE(sfh_fdeoff), im->sf_big);
	} else if (!strcmp(kind, "freoff")) {
		put(im, off + SF_HDR(sfh_freoff), BAD_OFFSET,
		    SF_SIZE(sfh_freoff), im->sf_big);
	} else if (!strcmp(kind, "frefde")) {
		at = fde + (version == SFRAME_VERSION_3 ?
			    offsetof(struct sframe_fdi_v3,
				     sfdi_func_start_fre_off) :
			    offsetof(struct sframe_fde_v1,
				     sfde_func_start_fre_off));
		if (at + sizeof(u32) > off + len)
			return -1;
		put(im, at, BAD_OFFSET, sizeof(u32), im->sf_big);
	} else if (!strcmp(kind, "trunc")) {
		put(im, ph + PHDR(p_filesz), TRUNC_LEN,
		    FIELD_SIZE(Elf64_Phdr, p_filesz), im->elf_big);
		put(im, ph + PHDR(p_memsz), TRUNC_LEN,
		    FIELD_SIZE(Elf64_Phdr, p_memsz), im->elf_big);
	} else {
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct image im = { 0 };
	size_t ph;

	if (argc != 4) {
		fprintf(stderr, "usage: corrupt-sframe KIND IN OUT\n"
			"  KIND: magic nfdes fdeoff freoff frefde trunc\n");
		return 2;
	}
	if (load(argv[2], &im)) {
		fprintf(stderr, "corrupt-sframe: %s: %s\n", argv[2],
			strerror(errno));
		return 1;
	}
	if (im.size < sizeof(Elf64_Ehdr) || memcmp(im.data, ELFMAG, SELFMAG) ||
	    im.data[EI_CLASS] != ELFCLASS64) {
		fprintf(stderr, "corrupt-sframe: %s: not a 64-bit ELF file\n",
			argv[2]);
		return 1;
	}
	im.elf_big = im.data[EI_DATA] == ELFDATA2MSB;
	ph = find_phdr(&im);
	if (!ph) {
		fprintf(stderr, "corrupt-sframe: %s: no PT_GNU_SFRAME\n",
			argv[2]);
		return 1;
	}
	if (corrupt(&im, argv[1], ph)) {
		fprintf(stderr, "corrupt-sframe: %s: cannot apply %s\n",
			argv[2], argv[1]);
		return 1;
	}
	if (store(argv[3], &im)) {
		fprintf(stderr, "corrupt-sframe: %s: %s\n", argv[3],
			strerror(errno));
		return 1;
	}
	return 0;
}
