// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit (compat) program with a registry: it registers an SFrame
 * section for a function of its own through the compat ioctl, then spins
 * in main -> compat_a -> compat_b -> compat_leaf, built with frame
 * pointers, for perf_compat.sh.  The module's walker serves 64-bit tasks
 * only, so perf must keep the kernel's own 32-bit frame-pointer walk for
 * this one: every level in the samples, not an empty chain.
 *
 *   sfu_compat SECONDS    prints "registered N" (0 or -errno), then spins
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/sframe_unwind.h>
#include <sframe/encode.h>

#define NOIPA		__attribute__((noipa))
#define WORK		200000
#define SECTION_CAP	1024
#define FUNC_SIZE	16

static unsigned char section[SECTION_CAP];
unsigned int compat_sink;

static inline __attribute__((always_inline)) unsigned int
work(unsigned int h)
{
	unsigned int i;

	for (i = 0; i < WORK; i++)
		h = (h ^ (h >> 13)) * 0x9e3779b1u + i;
	return h;
}

NOIPA unsigned int compat_leaf(unsigned int x)
{
	return work(x) ^ 7;
}

NOIPA unsigned int compat_b(unsigned int x)
{
	return compat_leaf(work(x)) + 1;
}

NOIPA unsigned int compat_a(unsigned int x)
{
	return compat_b(work(x)) + 2;
}

/* An SFrame section for compat_leaf, registered as JIT code. */
static int register_section(void)
{
	static const struct sfu_enc_fre row = {
		.base = SFRAME_BASE_REG_SP, .nr_words = 1, .words = { 8 },
	};
	struct sfu_enc_fde fde = {
		.start = (unsigned long)compat_leaf, .size = FUNC_SIZE,
		.nr_fres = 1, .fres = &row,
	};
	struct sfu_enc_params p = {
		.version = SFRAME_VERSION_3,
		.abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE,
		.flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL,
		.fixed_ra = -8,
		.vaddr = (unsigned long)section,
		.fre_type = SFU_ENC_AUTO,
		.word_size = SFU_ENC_AUTO,
	};
	struct sframe_unwind_region r = { .size = sizeof(r) };
	long long len = sfu_encode(&p, &fde, 1, section, sizeof(section));
	int dev = open(SFRAME_UNWIND_DEVICE, O_RDWR | O_CLOEXEC);

	if (len <= 0 || dev < 0)
		return -EINVAL;
	r.text_start = (unsigned long)compat_leaf;
	r.text_end = r.text_start + FUNC_SIZE;
	r.sframe_start = (unsigned long)section;
	r.sframe_len = len;
	return ioctl(dev, SFRAME_UNWIND_IOC_ADD, &r) ? -errno : 0;
}

int main(int argc, char **argv)
{
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 1);
	unsigned int h = 1;

	printf("registered %d\n", register_section());
	fflush(stdout);
	while (time(NULL) < end)
		h = compat_a(h);
	compat_sink = h;
	return 0;
}
