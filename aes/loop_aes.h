/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loop_aes.h - the loop-AES sector transforms, on plain memory.
 *
 * This layer knows sectors, IVs and keys, nothing of bios or files: the
 * driver hands it mapped buffers, the userspace tools hand it their own.
 * Underneath, an engine does the bulk work (CBC over several sectors, the
 * multi-key IVs); the generic C engine is always there, faster ones
 * (aes-intel/) are chosen once at start-up with loop_aes_set_engine().
 */
#ifndef AESLOOP_LOOP_AES_H
#define AESLOOP_LOOP_AES_H

#include "aes.h"

/* The format's unit, whatever the block size of the device (doc/format.md section 1). */
#define LOOP_AES_SECTOR_SHIFT	9
#define LOOP_AES_SECTOR_SIZE	512U

/* Multi-key volumes: 64 AES keys, plus the IV seed key in v3 (doc/format.md 2.2, 2.3). */
#define LOOP_AES_MULTI_KEYS	64
#define LOOP_AES_KEY_SLOT	32	/* bytes per key slot in the ioctl payload */

/* Sectors an engine is handed at once: enough to interleave 16 lanes. */
#define LOOP_AES_BATCH		32

enum loop_aes_mode {
	LOOP_AES_SINGLE = 1,	/* doc/format.md 2.1: one key, plain64 IV */
	LOOP_AES_MULTI_V2,	/* doc/format.md 2.2: 64 keys, MD5 IV from the plaintext */
	LOOP_AES_MULTI_V3,	/* doc/format.md 2.3: as v2, MD5 state seeded by key 65 */
};

struct loop_aes_format;

/**
 * struct loop_aes_ctx - the keys of one loop-AES volume
 * @fmt:     the format's operations (single-key or multi-key)
 * @mode:    which format, for reporting
 * @nkeys:   1 (single-key) or 64 (multi-key)
 * @iv_seed: the MD5 state every multi-key IV computation starts from: the
 *           MD5 initial state (v2), or after compressing key 65 (v3)
 * @keys:    @nkeys expanded keys; sector S uses keys[S % nkeys]
 *
 * Holds key material: allocate loop_aes_ctx_size(nkeys) bytes, set up with
 * loop_aes_setup_single() or loop_aes_setup_multi(), erase with
 * loop_aes_wipe().
 */
struct loop_aes_ctx {
	const struct loop_aes_format *fmt;
	enum loop_aes_mode mode;
	unsigned int nkeys;
	u32 iv_seed[4];
	struct aes_key keys[];
};

/*
 * The shapes of the engine operations below, and of the architectures'
 * sector assembly behind them (aes-intel/aes-intel.h,
 * aes-arm64/aes-arm64.h): a key per sector, one key for every sector (the
 * assembly only), one key with each source sector anywhere, the multi-key
 * IVs.
 */
typedef void loop_aes_cbc_fn(const struct aes_key *const *keys, const u8 *ivs,
			     u8 *dst, const u8 *src, unsigned int nsect);
typedef void loop_aes_cbc1_fn(const struct aes_key *key, const u8 *ivs,
			      u8 *dst, const u8 *src, unsigned int nsect);
typedef void loop_aes_cbc_gather_fn(const struct aes_key *key, const u8 *ivs,
				    u8 *dst, const u8 *const *srcs,
				    unsigned int nsect);
typedef void loop_aes_ivs_fn(const u32 seed[4], const u8 *plain, u64 sector,
			     u8 *ivs, unsigned int nsect);

/**
 * struct loop_aes_engine - bulk operations under the sector transforms
 * @name:        shown in logs and in the module's sysfs attribute
 * @cbc_encrypt: CBC-encrypt @nsect independent 512-byte sectors, sector i
 *               with @keys[i] and the 16-byte IV at @ivs + 16 * i; @dst may
 *               equal @src; all keys of a call have the same length;
 *               @nsect <= LOOP_AES_BATCH
 * @cbc_decrypt: the inverse, same contract
 * @cbc_encrypt_gather: @cbc_encrypt with one @key for every sector, sector
 *               i read from the 512 bytes at @srcs[i] and written to @dst +
 *               512 * i; no source sector overlaps @dst; @nsect <=
 *               LOOP_AES_BATCH
 * @multi_ivs:   the multi-key IVs (doc/format.md 2.2 steps 2-4) of @nsect consecutive
 *               plaintext sectors at @plain, the first with IV sector
 *               number @sector, each starting from the MD5 state @seed,
 *               written as 16 bytes each to @ivs
 *
 * Engines are stateless and may be called from several threads at once.
 */
struct loop_aes_engine {
	const char *name;
	loop_aes_cbc_fn *cbc_encrypt;
	loop_aes_cbc_fn *cbc_decrypt;
	loop_aes_cbc_gather_fn *cbc_encrypt_gather;
	loop_aes_ivs_fn *multi_ivs;
};

extern const struct loop_aes_engine loop_aes_generic_engine;

void loop_aes_set_engine(const struct loop_aes_engine *engine);
const struct loop_aes_engine *loop_aes_get_engine(void);

size_t loop_aes_ctx_size(unsigned int nkeys);
int loop_aes_setup_single(struct loop_aes_ctx *ctx, const u8 *key,
			  unsigned int key_len);
int loop_aes_setup_multi(struct loop_aes_ctx *ctx, const u8 *keys,
			 unsigned int count, unsigned int key_len);
void loop_aes_wipe(struct loop_aes_ctx *ctx);
void loop_aes_encrypt(const struct loop_aes_ctx *ctx, u8 *dst, const u8 *src,
		      size_t nsect, u64 sector);
void loop_aes_decrypt(const struct loop_aes_ctx *ctx, u8 *dst, const u8 *src,
		      size_t nsect, u64 sector);
void loop_aes_multi_iv(const u32 seed[4], const u8 *plain, u64 sector,
		       u8 iv[AES_BLOCK_LEN]);
void loop_aes_multi_ivs(const u32 seed[4], const u8 *plain, u64 sector,
			u8 *ivs, unsigned int nsect);

/* Whether the @n sectors of an engine call all have the same key. */
static inline bool loop_aes_one_key(const struct aes_key *const *keys,
				    unsigned int n)
{
	unsigned int i;

	for (i = 1; i < n; i++)
		if (keys[i] != keys[0])
			return false;
	return true;
}

/**
 * struct loop_aes_seg - one piece of a request's data, mapped
 * @data: the bytes
 * @len:  bytes, a multiple of 512
 *
 * A request's pages are scattered in memory; the transforms below take
 * them as a vector of these and still hand the engine whole batches.
 */
struct loop_aes_seg {
	u8 *data;
	unsigned int len;
};

/* Bytes of scratch loop_aes_decrypt_segs() needs for whole batches. */
#define LOOP_AES_SCRATCH	(LOOP_AES_BATCH * LOOP_AES_SECTOR_SIZE)

void loop_aes_encrypt_segs(const struct loop_aes_ctx *ctx, u8 *dst,
			   const struct loop_aes_seg *segs, unsigned int nseg,
			   u64 sector);
void loop_aes_decrypt_segs(const struct loop_aes_ctx *ctx,
			   const struct loop_aes_seg *segs, unsigned int nseg,
			   u64 sector, u8 *scratch, size_t scratch_len);

#endif /* AESLOOP_LOOP_AES_H */
