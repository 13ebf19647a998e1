// SPDX-License-Identifier: GPL-2.0
/*
 * The host tools' SHA-256 (tools/lib/sha256.c) against the examples of
 * NIST's "SHA-256" example document for FIPS 180-4 (one block, two
 * blocks, a million bytes) and the empty message, at once and fed in
 * pieces of every size that straddles a block's end.
 */
#include "kunit-host.h"
#include "sha256.h"

#define SHA256_HEX_LEN		(2 * SHA256_DIGEST_SIZE + 1)
#define SHA256_MILLION		1000000
/* Pieces of 1 to 65 bytes: every place a block can be cut. */
#define SHA256_PIECE_MAX	(SHA256_BLOCK_SIZE + 1)

struct sha256_vector {
	const char *msg;
	const char *hex;
};

static const struct sha256_vector sha256_vectors[] = {
	{ "",
	  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc",
	  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
	  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
};

static void sha256_hex(const u8 *digest, char *hex)
{
	unsigned int i;

	for (i = 0; i < SHA256_DIGEST_SIZE; i++)
		sprintf(hex + 2 * i, "%02x", digest[i]);
}

static void sha256_test_vectors(struct kunit *test)
{
	u8 digest[SHA256_DIGEST_SIZE];
	char hex[SHA256_HEX_LEN];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sha256_vectors); i++) {
		sha256(sha256_vectors[i].msg, strlen(sha256_vectors[i].msg),
		       digest);
		sha256_hex(digest, hex);
		KUNIT_EXPECT_STREQ(test, hex, sha256_vectors[i].hex);
	}
}

/* The same digest whatever the sizes of the pieces it is given in. */
static void sha256_test_pieces(struct kunit *test)
{
	const struct sha256_vector *v = &sha256_vectors[3];
	size_t len = strlen(v->msg), off, n, piece;
	u8 digest[SHA256_DIGEST_SIZE];
	char hex[SHA256_HEX_LEN];
	struct sha256_ctx s;

	for (piece = 1; piece <= SHA256_PIECE_MAX; piece++) {
		sha256_init(&s);
		for (off = 0; off < len; off += n) {
			n = len - off < piece ? len - off : piece;
			sha256_update(&s, v->msg + off, n);
		}
		sha256_final(&s, digest);
		sha256_hex(digest, hex);
		KUNIT_EXPECT_STREQ(test, hex, v->hex);
	}
}

static void sha256_test_million(struct kunit *test)
{
	u8 *msg = kunit_kzalloc(test, SHA256_MILLION, GFP_KERNEL);
	u8 digest[SHA256_DIGEST_SIZE];
	char hex[SHA256_HEX_LEN];

	KUNIT_ASSERT_NOT_NULL(test, msg);
	memset(msg, 'a', SHA256_MILLION);
	sha256(msg, SHA256_MILLION, digest);
	sha256_hex(digest, hex);
	KUNIT_EXPECT_STREQ(test, hex,
			   "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static struct kunit_case sha256_cases[] = {
	KUNIT_CASE(sha256_test_vectors),
	KUNIT_CASE(sha256_test_pieces),
	KUNIT_CASE(sha256_test_million),
	{}
};

static struct kunit_suite sha256_suite = {
	.name = "sha256",
	.test_cases = sha256_cases,
};

kunit_test_suite(sha256_suite);
