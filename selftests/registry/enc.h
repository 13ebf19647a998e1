/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SFrame sections for the registry selftests, made with the project's
 * encoder, and the user-space decoder's answer for an address of them.
 */
#ifndef _SELFTESTS_REGISTRY_ENC_H
#define _SELFTESTS_REGISTRY_ENC_H

#include <sframe/encode.h>

/* A function of a test section: every one gets the same two rows. */
struct sfu_test_func {
	u64 start;
	u32 size;
};

/* Offset of the second row; functions must be larger. */
#define SFU_TEST_ROW2		4

s64 enc_test_build(u8 version, u8 abi, bool sorted,
		   const struct sfu_test_func *funcs, u32 nr, u64 vaddr,
		   u8 *buf, size_t cap);
void enc_test_line(const u8 *buf, size_t len, u64 vaddr, u64 pc,
		   char *line, size_t n);

#endif /* _SELFTESTS_REGISTRY_ENC_H */
