/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SHA-256 (FIPS 180-4) for the host tools: what sframectl's cache binds
 * an entry to (the contents of the file it was made from).
 */
#ifndef _SCRIPTS_SHA256_H
#define _SCRIPTS_SHA256_H

#include <stddef.h>

#include "../include/sframe/env.h"

#define SFU_SHA256_DIGEST_SIZE	32
#define SFU_SHA256_BLOCK_SIZE	64
#define SFU_SHA256_WORDS	8

struct sfu_sha256 {
	u32 h[SFU_SHA256_WORDS];	/* the hash value so far */
	u64 len;			/* bytes hashed, in all */
	u8 block[SFU_SHA256_BLOCK_SIZE];	/* a partial block */
};

void sfu_sha256_init(struct sfu_sha256 *s);
void sfu_sha256_update(struct sfu_sha256 *s, const void *data, size_t len);
void sfu_sha256_final(struct sfu_sha256 *s,
		      u8 digest[SFU_SHA256_DIGEST_SIZE]);
void sfu_sha256(const void *data, size_t len,
		u8 digest[SFU_SHA256_DIGEST_SIZE]);

#endif /* _SCRIPTS_SHA256_H */
