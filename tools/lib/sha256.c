// SPDX-License-Identifier: GPL-2.0
/*
 * SHA-256 as FIPS 180-4 defines it (sections 4.1.2, 4.2.2, 5.1.1, 5.3.3
 * and 6.2): 512-bit blocks, each expanded into a message schedule of 64
 * words and mixed into eight 32-bit working variables; the message is
 * padded with one 1 bit, zeros and its length in bits (64 bits,
 * big-endian).  Written for the host tools; neither fast nor constant-time,
 * which a digest of public files does not need.
 */
#include <string.h>

#include "sha256.h"

#define SHA256_ROUNDS		64
#define SHA256_SCHEDULE_IN	16	/* words of the block itself */
#define SHA256_LEN_BYTES	8	/* the length field of the padding */
#define SHA256_PAD_FIRST	0x80	/* the 1 bit that ends the message */

/*
 * The first 32 bits of the fractional parts of the cube roots of the first
 * 64 primes (FIPS 180-4 4.2.2).
 */
static const u32 sha256_k[SHA256_ROUNDS] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
	0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
	0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

/*
 * The first 32 bits of the fractional parts of the square roots of the
 * first 8 primes (FIPS 180-4 5.3.3).
 */
static const u32 sha256_h0[SHA256_WORDS] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static inline u32 sha256_rotr(u32 x, unsigned int n)
{
	return (x >> n) | (x << (32 - n));
}

/* The functions of FIPS 180-4 4.1.2. */
static inline u32 sha256_ch(u32 x, u32 y, u32 z)
{
	return (x & y) ^ (~x & z);
}

static inline u32 sha256_maj(u32 x, u32 y, u32 z)
{
	return (x & y) ^ (x & z) ^ (y & z);
}

static inline u32 sha256_big_sigma0(u32 x)
{
	return sha256_rotr(x, 2) ^ sha256_rotr(x, 13) ^ sha256_rotr(x, 22);
}

static inline u32 sha256_big_sigma1(u32 x)
{
	return sha256_rotr(x, 6) ^ sha256_rotr(x, 11) ^ sha256_rotr(x, 25);
}

static inline u32 sha256_sigma0(u32 x)
{
	return sha256_rotr(x, 7) ^ sha256_rotr(x, 18) ^ (x >> 3);
}

static inline u32 sha256_sigma1(u32 x)
{
	return sha256_rotr(x, 17) ^ sha256_rotr(x, 19) ^ (x >> 10);
}

static u32 sha256_load_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static void sha256_store_be32(u8 *p, u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* The working variables a..h of FIPS 180-4 6.2.2. */
struct sha256_vars {
	u32 a, b, c, d, e, f, g, h;
};

/* One round (FIPS 180-4 6.2.2 step 3) with the schedule word @w. */
static inline void sha256_round(struct sha256_vars *v, u32 k, u32 w)
{
	u32 t1 = v->h + sha256_big_sigma1(v->e) + sha256_ch(v->e, v->f, v->g) +
		 k + w;
	u32 t2 = sha256_big_sigma0(v->a) + sha256_maj(v->a, v->b, v->c);

	v->h = v->g;
	v->g = v->f;
	v->f = v->e;
	v->e = v->d + t1;
	v->d = v->c;
	v->c = v->b;
	v->b = v->a;
	v->a = t1 + t2;
}

/* Hash one 512-bit block into @h (FIPS 180-4 6.2.2). */
static void sha256_block(u32 h[SHA256_WORDS], const u8 *block)
{
	struct sha256_vars v = { h[0], h[1], h[2], h[3],
				 h[4], h[5], h[6], h[7] };
	u32 w[SHA256_ROUNDS];
	unsigned int i;

	for (i = 0; i < SHA256_SCHEDULE_IN; i++)
		w[i] = sha256_load_be32(block + 4 * i);
	for (; i < SHA256_ROUNDS; i++)
		w[i] = sha256_sigma1(w[i - 2]) + w[i - 7] +
		       sha256_sigma0(w[i - 15]) + w[i - 16];
	for (i = 0; i < SHA256_ROUNDS; i++)
		sha256_round(&v, sha256_k[i], w[i]);
	h[0] += v.a;
	h[1] += v.b;
	h[2] += v.c;
	h[3] += v.d;
	h[4] += v.e;
	h[5] += v.f;
	h[6] += v.g;
	h[7] += v.h;
}

void sha256_init(struct sha256_ctx *s)
{
	memcpy(s->h, sha256_h0, sizeof(s->h));
	s->len = 0;
}

void sha256_update(struct sha256_ctx *s, const void *data, size_t len)
{
	const u8 *p = data;
	size_t fill = s->len % SHA256_BLOCK_SIZE, n;

	s->len += len;
	while (len) {
		n = SHA256_BLOCK_SIZE - fill;
		if (n > len)
			n = len;
		if (!fill && n == SHA256_BLOCK_SIZE) {
			sha256_block(s->h, p);
		} else {
			memcpy(s->block + fill, p, n);
			if (fill + n == SHA256_BLOCK_SIZE)
				sha256_block(s->h, s->block);
		}
		fill = (fill + n) % SHA256_BLOCK_SIZE;
		p += n;
		len -= n;
	}
}

/* Padding (FIPS 180-4 5.1.1), then the hash value, big-endian. */
void sha256_final(struct sha256_ctx *s,
		  u8 digest[SHA256_DIGEST_SIZE])
{
	u8 pad[SHA256_BLOCK_SIZE + SHA256_LEN_BYTES] = {
		SHA256_PAD_FIRST
	};
	size_t fill = s->len % SHA256_BLOCK_SIZE, n;
	u64 bits = s->len * 8;
	unsigned int i;

	/* The 1 bit and zeros up to 8 bytes short of a block's end. */
	n = SHA256_BLOCK_SIZE - SHA256_LEN_BYTES - fill;
	if (fill >= SHA256_BLOCK_SIZE - SHA256_LEN_BYTES)
		n += SHA256_BLOCK_SIZE;
	for (i = 0; i < SHA256_LEN_BYTES; i++)
		pad[n + i] = bits >> (8 * (SHA256_LEN_BYTES - 1 - i));
	sha256_update(s, pad, n + SHA256_LEN_BYTES);
	for (i = 0; i < SHA256_WORDS; i++)
		sha256_store_be32(digest + 4 * i, s->h[i]);
	memset(s, 0, sizeof(*s));
}

/* The digest of @len bytes at @data, at once. */
void sha256(const void *data, size_t len,
	    u8 digest[SHA256_DIGEST_SIZE])
{
	struct sha256_ctx s;

	sha256_init(&s);
	sha256_update(&s, data, len);
	sha256_final(&s, digest);
}
