/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SHA-256 (FIPS 180-4) for the host tools: what sframectl's cache binds
 * an entry to (the contents of the file it was made from).
 */
#ifndef _SCRIPTS_SHA256_H
#define _SCRIPTS_SHA256_H

#include <stddef.h>

#include <sframe/env.h>

#define SHA256_DIGEST_SIZE	32
#define SHA256_BLOCK_SIZE	64
#define SHA256_WORDS	8

struct sha256_ctx {
	u32 h[SHA256_WORDS];	/* the hash value so far */
	u64 len;			/* bytes hashed, in all */
	u8 block[SHA256_BLOCK_SIZE];	/* a partial block */
};

void sha256_init(struct sha256_ctx *s);
void sha256_update(struct sha256_ctx *s, const void *data, size_t len);
void sha256_final(struct sha256_ctx *s,
		  u8 digest[SHA256_DIGEST_SIZE]);
void sha256(const void *data, size_t len,
	    u8 digest[SHA256_DIGEST_SIZE]);

#endif /* _SCRIPTS_SHA256_H */
