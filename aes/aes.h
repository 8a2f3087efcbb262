/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aes.h - portable AES block cipher (FIPS-197), the generic path of aesloop.
 */
#ifndef AESLOOP_AES_H
#define AESLOOP_AES_H

#include "aes_types.h"

#define AES_BLOCK_LEN		16	/* bytes */
#define AES_MAX_ROUNDS		14
#define AES_SCHEDULE_WORDS	(4 * (AES_MAX_ROUNDS + 1))

/**
 * struct aes_key - an expanded AES key, both directions
 * @enc:    encryption round keys, round 0 first, little-endian column words
 * @dec:    round keys of the equivalent inverse cipher (FIPS-197 5.3.5)
 * @rounds: 10, 12 or 14 for 128, 192 or 256-bit keys
 *
 * Holds key material: wipe it with aes_key_wipe() when done.
 */
struct aes_key {
	u32 enc[AES_SCHEDULE_WORDS];
	u32 dec[AES_SCHEDULE_WORDS];
	unsigned int rounds;
};

int aes_key_setup(struct aes_key *key, const u8 *raw, unsigned int raw_len);
void aes_key_wipe(struct aes_key *key);
void aes_encrypt_block(const struct aes_key *key, u8 *out, const u8 *in);
void aes_decrypt_block(const struct aes_key *key, u8 *out, const u8 *in);
void aes_cbc_encrypt(const struct aes_key *key, u8 *dst, const u8 *src,
		     size_t len, const u8 *iv);
void aes_cbc_decrypt(const struct aes_key *key, u8 *dst, const u8 *src,
		     size_t len, const u8 *iv);

#endif /* AESLOOP_AES_H */
