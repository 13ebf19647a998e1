// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the fuzzer's seed corpus: the reference section of every version
 * and ABI, sorted and unsorted, each behind the 8-byte fuzzer header.
 */
#include <stdio.h>

#include <sframe/decode.h>

#include "sframe_test_sections.h"

static const u8 seed_abis[] = {
	SFRAME_ABI_AMD64_ENDIAN_LITTLE, SFRAME_ABI_AARCH64_ENDIAN_LITTLE,
	SFRAME_ABI_AARCH64_ENDIAN_BIG, SFRAME_ABI_S390X_ENDIAN_BIG,
};

static int write_seed(const char *dir, u8 version, u8 abi, bool sorted)
{
	static u8 buf[SFU_TEST_BUF_SIZE + sizeof(u64)];
	u64 vaddr = SFU_TEST_VADDR;
	char path[4096];
	s64 len;
	FILE *f;

	memcpy(buf, &vaddr, sizeof(vaddr));
	len = sfu_test_std_section(version, abi, sorted, buf + sizeof(vaddr),
				   SFU_TEST_BUF_SIZE, SFU_TEST_VADDR);
	if (len <= 0 || len > SFU_TEST_BUF_SIZE)
		return -1;
	snprintf(path, sizeof(path), "%s/std-v%u-abi%u-%s", dir, version, abi,
		 sorted ? "sorted" : "unsorted");
	f = fopen(path, "wb");
	if (!f)
		return -1;
	fwrite(buf, 1, sizeof(vaddr) + len, f);
	return fclose(f);
}

int main(int argc, char **argv)
{
	unsigned int v, a, s;

	if (argc != 2) {
		fprintf(stderr, "usage: fuzz-seed DIR\n");
		return 2;
	}
	for (v = SFRAME_VERSION_1; v <= SFRAME_VERSION_3; v++)
		for (a = 0; a < ARRAY_SIZE(seed_abis); a++)
			for (s = 0; s < 2; s++)
				if (write_seed(argv[1], v, seed_abis[a], s)) {
					perror(argv[1]);
					return 1;
				}
	return 0;
}
