// SPDX-License-Identifier: GPL-2.0
/*
 * loop_aes.c - loop-AES sector transforms (../shared/spec/loop-aes-format.md).
 *
 * Single-key mode (spec section 2.1): every 512-byte sector is one AES-CBC
 * message of 32 blocks, no padding, with IV(S) = S as a 64-bit little-endian
 * number followed by eight zero bytes (dm-crypt's "plain64"), where S is the
 * IV sector number the caller passes (loop sector plus offset, section 4).
 */
#include "loop_aes.h"

/**
 * loop_aes_setup_single() - prepare the key of a single-key volume
 * @ctx:     the context to fill
 * @key:     the AES key, @key_len bytes (the first bytes of lo_encrypt_key)
 * @key_len: 16, 24 or 32
 *
 * Return: 0, or -EINVAL for another key length (@ctx is then wiped).
 */
int loop_aes_setup_single(struct loop_aes_ctx *ctx, const u8 *key,
			  unsigned int key_len)
{
	return aes_key_setup(&ctx->key, key, key_len);
}

/**
 * loop_aes_wipe() - erase every key in a context
 * @ctx: the context; zeroed in a way the compiler cannot drop
 */
void loop_aes_wipe(struct loop_aes_ctx *ctx)
{
	memzero_explicit(ctx, sizeof(*ctx));
}

static void plain64_iv(u8 iv[AES_BLOCK_LEN], u64 sector)
{
	aes_put_le32(iv, (u32)sector);
	aes_put_le32(iv + 4, (u32)(sector >> 32));
	memset(iv + 8, 0, 8);
}

/**
 * loop_aes_encrypt() - encrypt whole sectors
 * @ctx:    the volume's keys
 * @dst:    @nsect * 512 bytes of ciphertext; may equal @src, must not
 *          otherwise overlap it
 * @src:    @nsect * 512 bytes of plaintext
 * @nsect:  number of 512-byte sectors
 * @sector: IV sector number of the first sector (spec section 4); the
 *          following sectors take @sector + 1, @sector + 2, ...
 */
void loop_aes_encrypt(const struct loop_aes_ctx *ctx, u8 *dst, const u8 *src,
		      size_t nsect, u64 sector)
{
	u8 iv[AES_BLOCK_LEN];

	for (; nsect; nsect--, sector++) {
		plain64_iv(iv, sector);
		aes_cbc_encrypt(&ctx->key, dst, src, LOOP_AES_SECTOR_SIZE, iv);
		src += LOOP_AES_SECTOR_SIZE;
		dst += LOOP_AES_SECTOR_SIZE;
	}
}

/**
 * loop_aes_decrypt() - decrypt whole sectors
 * @ctx:    the volume's keys
 * @dst:    @nsect * 512 bytes of plaintext; may equal @src, must not
 *          otherwise overlap it
 * @src:    @nsect * 512 bytes of ciphertext
 * @nsect:  number of 512-byte sectors
 * @sector: IV sector number of the first sector, as for loop_aes_encrypt()
 */
void loop_aes_decrypt(const struct loop_aes_ctx *ctx, u8 *dst, const u8 *src,
		      size_t nsect, u64 sector)
{
	u8 iv[AES_BLOCK_LEN];

	for (; nsect; nsect--, sector++) {
		plain64_iv(iv, sector);
		aes_cbc_decrypt(&ctx->key, dst, src, LOOP_AES_SECTOR_SIZE, iv);
		src += LOOP_AES_SECTOR_SIZE;
		dst += LOOP_AES_SECTOR_SIZE;
	}
}
