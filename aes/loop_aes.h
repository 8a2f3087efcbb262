/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loop_aes.h - the loop-AES sector transforms, on plain memory.
 *
 * This layer knows sectors, IVs and keys, nothing of bios or files: the
 * driver hands it mapped buffers, the userspace tools hand it their own.
 */
#ifndef AESLOOP_LOOP_AES_H
#define AESLOOP_LOOP_AES_H

#include "aes.h"

/* The format's unit, whatever the block size of the device (spec section 1). */
#define LOOP_AES_SECTOR_SHIFT	9
#define LOOP_AES_SECTOR_SIZE	512U

/**
 * struct loop_aes_ctx - the keys of one loop-AES volume
 * @key: the AES key of single-key mode (spec section 2.1)
 *
 * Holds key material: set up with loop_aes_setup_single(), erase with
 * loop_aes_wipe().
 */
struct loop_aes_ctx {
	struct aes_key key;
};

int loop_aes_setup_single(struct loop_aes_ctx *ctx, const u8 *key,
			  unsigned int key_len);
void loop_aes_wipe(struct loop_aes_ctx *ctx);
void loop_aes_encrypt(const struct loop_aes_ctx *ctx, u8 *dst, const u8 *src,
		      size_t nsect, u64 sector);
void loop_aes_decrypt(const struct loop_aes_ctx *ctx, u8 *dst, const u8 *src,
		      size_t nsect, u64 sector);

#endif /* AESLOOP_LOOP_AES_H */
