// SPDX-License-Identifier: GPL-2.0
/*
 * engines.c - checking an AES engine and choosing one at start-up, the same
 * for every architecture (engines.h).
 *
 * An engine handles data only after it gave the known answers below and the
 * generic engine's answers on sectors of every shape the driver sends; a CPU
 * (or an emulator) that runs an instruction wrongly, or a bug of ours in one
 * path, then costs speed, not data.
 */
#ifdef __KERNEL__
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt
#include <linux/kernel.h>
#include <linux/slab.h>
#else
#include <assert.h>
#include <stdlib.h>
#endif

#include "engines.h"
#include "asm-offsets.h"

/* The assembly of aes-intel/ and aes-arm64/ reads struct aes_key at these offsets. */
static_assert(offsetof(struct aes_key, enc) == AES_KEY_ENC, "aes_key.enc");
static_assert(offsetof(struct aes_key, dec) == AES_KEY_DEC, "aes_key.dec");
static_assert(offsetof(struct aes_key, rounds) == AES_KEY_ROUNDS,
	      "aes_key.rounds");
static_assert(sizeof(((struct aes_key *)0)->enc) == 15 * AES_BLOCK_LEN,
	      "aes_key.enc holds 15 round keys");
static_assert(LOOP_AES_SECTOR_SIZE == SECTOR_SIZE, "sector size");

#ifdef __KERNEL__
static void *selftest_alloc(size_t len)
{
	return kmalloc(len, GFP_KERNEL);
}

static void selftest_free(void *p)
{
	kfree(p);
}
#else
static void *selftest_alloc(size_t len)
{
	return malloc(len);
}

static void selftest_free(void *p)
{
	free(p);
}
#endif

/*
 * Known answers (from OpenSSL): the sector of bytes (29 i + 7) mod 256,
 * AES-CBC with the key of bytes 0, 1, 2, ... and the single-key IV of
 * sector KAT_SECTOR: the last ciphertext block, which depends on every
 * block before it.  And that sector's v2 IV: MD5 of its bytes 16..511 and
 * KAT_SECTOR as 7 little-endian bytes.
 */
#define KAT_SECTOR	0x0123456789ULL

static const u8 kat_last_block[3][AES_BLOCK_LEN] = {
	{ 0x13, 0xd7, 0xf4, 0xe0, 0x93, 0x5b, 0x0a, 0x70,	/* AES-128 */
	  0xe0, 0x88, 0xbf, 0xce, 0xea, 0xaa, 0x34, 0x2c },
	{ 0x21, 0x6f, 0x1b, 0xea, 0x59, 0x42, 0x50, 0x5d,	/* AES-192 */
	  0x03, 0x79, 0xc8, 0xb6, 0x4f, 0xb2, 0x45, 0x7f },
	{ 0x20, 0x83, 0x6c, 0x17, 0x47, 0x69, 0x1c, 0xe7,	/* AES-256 */
	  0x90, 0xad, 0x0b, 0xe1, 0xfc, 0x83, 0x51, 0xda },
};

static const u8 kat_v2_iv[AES_BLOCK_LEN] = {
	0x23, 0x68, 0x6f, 0xeb, 0x9e, 0x98, 0xd2, 0x4d,
	0xa2, 0xd7, 0x13, 0xcd, 0xa0, 0x34, 0x5a, 0xa3,
};

/*
 * Sectors compared with the generic code: more than one group of the
 * widest per-sector-key interleave (16), and odd, so that the group split
 * and the spare lanes are exercised.
 */
#define ST_SECTORS	19
#define ST_KEYS		5

struct selftest_buf {
	struct aes_key keys[ST_KEYS];
	const struct aes_key *kp[ST_SECTORS];
	const u8 *srcs[ST_SECTORS];
	u8 ivs[ST_SECTORS * AES_BLOCK_LEN];
	u8 ivs2[ST_SECTORS * AES_BLOCK_LEN];
	u8 src[ST_SECTORS * LOOP_AES_SECTOR_SIZE];
	u8 ref[ST_SECTORS * LOOP_AES_SECTOR_SIZE];
	u8 out[ST_SECTORS * LOOP_AES_SECTOR_SIZE];
};

static void plain64_iv(u8 *iv, u64 sector)
{
	aes_put_le32(iv, (u32)sector);
	aes_put_le32(iv + 4, (u32)(sector >> 32));
	memset(iv + 8, 0, 8);
}

static int selftest_kat(const struct loop_aes_engine *e,
			struct selftest_buf *b)
{
	static const u32 md5_init[4] = {
		0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476
	};
	u8 raw[32];
	unsigned int i, k;

	for (i = 0; i < LOOP_AES_SECTOR_SIZE; i++)
		b->src[i] = (u8)(29 * i + 7);
	for (i = 0; i < sizeof(raw); i++)
		raw[i] = (u8)i;
	plain64_iv(b->ivs, KAT_SECTOR);
	for (k = 0; k < 3; k++) {
		if (aes_key_setup(&b->keys[0], raw, 16 + 8 * k))
			return -EINVAL;
		b->kp[0] = &b->keys[0];
		e->cbc_encrypt(b->kp, b->ivs, b->out, b->src, 1);
		if (memcmp(b->out + LOOP_AES_SECTOR_SIZE - AES_BLOCK_LEN,
			   kat_last_block[k], AES_BLOCK_LEN))
			return -EIO;
		e->cbc_decrypt(b->kp, b->ivs, b->out, b->out, 1);
		if (memcmp(b->out, b->src, LOOP_AES_SECTOR_SIZE))
			return -EIO;
	}
	e->multi_ivs(md5_init, b->src, KAT_SECTOR, b->ivs, 1);
	if (memcmp(b->ivs, kat_v2_iv, AES_BLOCK_LEN))
		return -EIO;
	return 0;
}

/* Against the generic code, every key length, one key and several. */
static int selftest_cross(const struct loop_aes_engine *e,
			  struct selftest_buf *b)
{
	const struct loop_aes_engine *g = &loop_aes_generic_engine;
	const size_t len = ST_SECTORS * LOOP_AES_SECTOR_SIZE;
	u32 x = 0x2545f491, seed[4];
	u8 raw[32];
	unsigned int i, k, multi;

	for (i = 0; i < len; i++) {
		x = x * 1103515245 + 12345;
		b->src[i] = (u8)(x >> 23);
	}
	for (i = 0; i < 4; i++)
		seed[i] = aes_get_le32(b->src + 4 * i);
	for (i = 0; i < ST_SECTORS; i++)
		plain64_iv(b->ivs + i * AES_BLOCK_LEN, 0xfffffff0ULL + i);

	for (k = 0; k < 3; k++) {
		for (i = 0; i < ST_KEYS; i++) {
			memcpy(raw, b->src + 32 * i, sizeof(raw));
			if (aes_key_setup(&b->keys[i], raw, 16 + 8 * k))
				return -EINVAL;
		}
		for (multi = 0; multi < 2; multi++) {
			for (i = 0; i < ST_SECTORS; i++)
				b->kp[i] = &b->keys[multi ? (i * 3) % ST_KEYS : 0];
			g->cbc_encrypt(b->kp, b->ivs, b->ref, b->src, ST_SECTORS);
			e->cbc_encrypt(b->kp, b->ivs, b->out, b->src, ST_SECTORS);
			if (memcmp(b->out, b->ref, len))
				return -EIO;
			/* encryption in place, as the multi-key path does */
			memcpy(b->out, b->src, len);
			e->cbc_encrypt(b->kp, b->ivs, b->out, b->out, ST_SECTORS);
			if (memcmp(b->out, b->ref, len))
				return -EIO;
			/* decryption in place */
			e->cbc_decrypt(b->kp, b->ivs, b->out, b->out, ST_SECTORS);
			if (memcmp(b->out, b->src, len))
				return -EIO;
		}
		/* one key, the sectors read in reverse order */
		for (i = 0; i < ST_SECTORS; i++)
			b->srcs[i] = b->src +
				     (ST_SECTORS - 1 - i) * LOOP_AES_SECTOR_SIZE;
		g->cbc_encrypt_gather(&b->keys[0], b->ivs, b->ref, b->srcs,
				      ST_SECTORS);
		e->cbc_encrypt_gather(&b->keys[0], b->ivs, b->out, b->srcs,
				      ST_SECTORS);
		if (memcmp(b->out, b->ref, len))
			return -EIO;
	}
	g->multi_ivs(seed, b->src, 0xfffffff8ULL, b->ivs2, ST_SECTORS);
	e->multi_ivs(seed, b->src, 0xfffffff8ULL, b->ivs, ST_SECTORS);
	if (memcmp(b->ivs, b->ivs2, sizeof(b->ivs)))
		return -EIO;
	return 0;
}

/**
 * loop_aes_selftest() - check an engine before it handles data
 * @engine: an engine of aesloop_arch_engine() whose features the CPU has
 *          (aesloop_arch_cpu_has()), or any other
 *
 * Known answers for each key length and the multi-key IV, then a
 * comparison with the generic engine over 19 sectors: one key and
 * several, apart and in place, one key from scattered sectors, all three
 * key lengths.  May sleep (allocates).
 *
 * Return: 0 if the engine gave the right answers, -EIO if not, -ENOMEM.
 */
int loop_aes_selftest(const struct loop_aes_engine *engine)
{
	struct selftest_buf *b = selftest_alloc(sizeof(*b));
	int err;

	if (!b)
		return -ENOMEM;
	err = selftest_kat(engine, b);
	if (!err)
		err = selftest_cross(engine, b);
	memzero_explicit(b, sizeof(*b));
	selftest_free(b);
	return err;
}

/**
 * loop_aes_probe() - pick the fastest engine this CPU can run
 * @rejected: if not NULL, set to the name of the fastest path whose CPU
 *            features are present but whose self-test failed (an emulator,
 *            a broken CPU, or a bug of ours), or to NULL when there was none
 *
 * Tries this architecture's paths from the fastest down (x86_64:
 * vaes-avx512, vaes-avx2, aesni, ssse3; arm64: see aes-arm64/); the first
 * whose features are present and whose self-test passes wins.  So a slower
 * path of the CPU's own runs where a faster one failed its self-test.  In
 * the kernel each path passed over for its self-test is logged.  Call once
 * at start-up (it may sleep), then hand the result to loop_aes_set_engine().
 *
 * Return: the engine, or NULL: keep the generic one.
 */
const struct loop_aes_engine *loop_aes_probe(const char **rejected)
{
	const struct loop_aes_engine *e;
	unsigned int n, path;

	if (rejected)
		*rejected = NULL;
	for (n = 0; aesloop_arch_engine(n); n++)
		;
	for (path = n; path-- > 0;) {
		int err;

		e = aesloop_arch_engine(path);
		if (!aesloop_arch_cpu_has(path, NULL))
			continue;
		err = loop_aes_selftest(e);
		if (err == 0)
			return e;
#ifdef __KERNEL__
		if (err == -ENOMEM)
			pr_warn("AES path %s could not be self-tested (no memory); not used\n",
				e->name);
		else
			pr_warn("AES path %s failed its self-test on this CPU; not used\n",
				e->name);
#endif
		if (rejected && !*rejected)
			*rejected = e->name;
	}
	return NULL;
}
