// SPDX-License-Identifier: GPL-2.0
/*
 * aes.c - portable AES-128/192/256 (FIPS-197) for aesloop.
 *
 * The classic four-table implementation: one round of SubBytes, ShiftRows,
 * MixColumns and AddRoundKey is sixteen table lookups and XORs.  It is the
 * fallback for CPUs without AES instructions, so it must be correct on every
 * host first and reasonably fast second (the target is OpenSSL's own C code).
 * Like every table-based AES it leaks key-dependent cache timing; the AES-NI
 * path does not.
 *
 * The state is kept as four little-endian column words: byte r of column c
 * is bits 8r..8r+7 of word c, which is how the bytes lie in memory on x86.
 * The tables are computed by the preprocessor from the S-box below, so they
 * are const data in both the kernel and userspace, with no init step.
 */
#include "aes.h"

/* FIPS-197 Figure 7 (S-box) and Figure 14 (inverse S-box), row by row. */
#define AES_SBOX_LIST(F) \
	F(0x63) F(0x7c) F(0x77) F(0x7b) F(0xf2) F(0x6b) F(0x6f) F(0xc5) \
	F(0x30) F(0x01) F(0x67) F(0x2b) F(0xfe) F(0xd7) F(0xab) F(0x76) \
	F(0xca) F(0x82) F(0xc9) F(0x7d) F(0xfa) F(0x59) F(0x47) F(0xf0) \
	F(0xad) F(0xd4) F(0xa2) F(0xaf) F(0x9c) F(0xa4) F(0x72) F(0xc0) \
	F(0xb7) F(0xfd) F(0x93) F(0x26) F(0x36) F(0x3f) F(0xf7) F(0xcc) \
	F(0x34) F(0xa5) F(0xe5) F(0xf1) F(0x71) F(0xd8) F(0x31) F(0x15) \
	F(0x04) F(0xc7) F(0x23) F(0xc3) F(0x18) F(0x96) F(0x05) F(0x9a) \
	F(0x07) F(0x12) F(0x80) F(0xe2) F(0xeb) F(0x27) F(0xb2) F(0x75) \
	F(0x09) F(0x83) F(0x2c) F(0x1a) F(0x1b) F(0x6e) F(0x5a) F(0xa0) \
	F(0x52) F(0x3b) F(0xd6) F(0xb3) F(0x29) F(0xe3) F(0x2f) F(0x84) \
	F(0x53) F(0xd1) F(0x00) F(0xed) F(0x20) F(0xfc) F(0xb1) F(0x5b) \
	F(0x6a) F(0xcb) F(0xbe) F(0x39) F(0x4a) F(0x4c) F(0x58) F(0xcf) \
	F(0xd0) F(0xef) F(0xaa) F(0xfb) F(0x43) F(0x4d) F(0x33) F(0x85) \
	F(0x45) F(0xf9) F(0x02) F(0x7f) F(0x50) F(0x3c) F(0x9f) F(0xa8) \
	F(0x51) F(0xa3) F(0x40) F(0x8f) F(0x92) F(0x9d) F(0x38) F(0xf5) \
	F(0xbc) F(0xb6) F(0xda) F(0x21) F(0x10) F(0xff) F(0xf3) F(0xd2) \
	F(0xcd) F(0x0c) F(0x13) F(0xec) F(0x5f) F(0x97) F(0x44) F(0x17) \
	F(0xc4) F(0xa7) F(0x7e) F(0x3d) F(0x64) F(0x5d) F(0x19) F(0x73) \
	F(0x60) F(0x81) F(0x4f) F(0xdc) F(0x22) F(0x2a) F(0x90) F(0x88) \
	F(0x46) F(0xee) F(0xb8) F(0x14) F(0xde) F(0x5e) F(0x0b) F(0xdb) \
	F(0xe0) F(0x32) F(0x3a) F(0x0a) F(0x49) F(0x06) F(0x24) F(0x5c) \
	F(0xc2) F(0xd3) F(0xac) F(0x62) F(0x91) F(0x95) F(0xe4) F(0x79) \
	F(0xe7) F(0xc8) F(0x37) F(0x6d) F(0x8d) F(0xd5) F(0x4e) F(0xa9) \
	F(0x6c) F(0x56) F(0xf4) F(0xea) F(0x65) F(0x7a) F(0xae) F(0x08) \
	F(0xba) F(0x78) F(0x25) F(0x2e) F(0x1c) F(0xa6) F(0xb4) F(0xc6) \
	F(0xe8) F(0xdd) F(0x74) F(0x1f) F(0x4b) F(0xbd) F(0x8b) F(0x8a) \
	F(0x70) F(0x3e) F(0xb5) F(0x66) F(0x48) F(0x03) F(0xf6) F(0x0e) \
	F(0x61) F(0x35) F(0x57) F(0xb9) F(0x86) F(0xc1) F(0x1d) F(0x9e) \
	F(0xe1) F(0xf8) F(0x98) F(0x11) F(0x69) F(0xd9) F(0x8e) F(0x94) \
	F(0x9b) F(0x1e) F(0x87) F(0xe9) F(0xce) F(0x55) F(0x28) F(0xdf) \
	F(0x8c) F(0xa1) F(0x89) F(0x0d) F(0xbf) F(0xe6) F(0x42) F(0x68) \
	F(0x41) F(0x99) F(0x2d) F(0x0f) F(0xb0) F(0x54) F(0xbb) F(0x16)

#define AES_INV_SBOX_LIST(F) \
	F(0x52) F(0x09) F(0x6a) F(0xd5) F(0x30) F(0x36) F(0xa5) F(0x38) \
	F(0xbf) F(0x40) F(0xa3) F(0x9e) F(0x81) F(0xf3) F(0xd7) F(0xfb) \
	F(0x7c) F(0xe3) F(0x39) F(0x82) F(0x9b) F(0x2f) F(0xff) F(0x87) \
	F(0x34) F(0x8e) F(0x43) F(0x44) F(0xc4) F(0xde) F(0xe9) F(0xcb) \
	F(0x54) F(0x7b) F(0x94) F(0x32) F(0xa6) F(0xc2) F(0x23) F(0x3d) \
	F(0xee) F(0x4c) F(0x95) F(0x0b) F(0x42) F(0xfa) F(0xc3) F(0x4e) \
	F(0x08) F(0x2e) F(0xa1) F(0x66) F(0x28) F(0xd9) F(0x24) F(0xb2) \
	F(0x76) F(0x5b) F(0xa2) F(0x49) F(0x6d) F(0x8b) F(0xd1) F(0x25) \
	F(0x72) F(0xf8) F(0xf6) F(0x64) F(0x86) F(0x68) F(0x98) F(0x16) \
	F(0xd4) F(0xa4) F(0x5c) F(0xcc) F(0x5d) F(0x65) F(0xb6) F(0x92) \
	F(0x6c) F(0x70) F(0x48) F(0x50) F(0xfd) F(0xed) F(0xb9) F(0xda) \
	F(0x5e) F(0x15) F(0x46) F(0x57) F(0xa7) F(0x8d) F(0x9d) F(0x84) \
	F(0x90) F(0xd8) F(0xab) F(0x00) F(0x8c) F(0xbc) F(0xd3) F(0x0a) \
	F(0xf7) F(0xe4) F(0x58) F(0x05) F(0xb8) F(0xb3) F(0x45) F(0x06) \
	F(0xd0) F(0x2c) F(0x1e) F(0x8f) F(0xca) F(0x3f) F(0x0f) F(0x02) \
	F(0xc1) F(0xaf) F(0xbd) F(0x03) F(0x01) F(0x13) F(0x8a) F(0x6b) \
	F(0x3a) F(0x91) F(0x11) F(0x41) F(0x4f) F(0x67) F(0xdc) F(0xea) \
	F(0x97) F(0xf2) F(0xcf) F(0xce) F(0xf0) F(0xb4) F(0xe6) F(0x73) \
	F(0x96) F(0xac) F(0x74) F(0x22) F(0xe7) F(0xad) F(0x35) F(0x85) \
	F(0xe2) F(0xf9) F(0x37) F(0xe8) F(0x1c) F(0x75) F(0xdf) F(0x6e) \
	F(0x47) F(0xf1) F(0x1a) F(0x71) F(0x1d) F(0x29) F(0xc5) F(0x89) \
	F(0x6f) F(0xb7) F(0x62) F(0x0e) F(0xaa) F(0x18) F(0xbe) F(0x1b) \
	F(0xfc) F(0x56) F(0x3e) F(0x4b) F(0xc6) F(0xd2) F(0x79) F(0x20) \
	F(0x9a) F(0xdb) F(0xc0) F(0xfe) F(0x78) F(0xcd) F(0x5a) F(0xf4) \
	F(0x1f) F(0xdd) F(0xa8) F(0x33) F(0x88) F(0x07) F(0xc7) F(0x31) \
	F(0xb1) F(0x12) F(0x10) F(0x59) F(0x27) F(0x80) F(0xec) F(0x5f) \
	F(0x60) F(0x51) F(0x7f) F(0xa9) F(0x19) F(0xb5) F(0x4a) F(0x0d) \
	F(0x2d) F(0xe5) F(0x7a) F(0x9f) F(0x93) F(0xc9) F(0x9c) F(0xef) \
	F(0xa0) F(0xe0) F(0x3b) F(0x4d) F(0xae) F(0x2a) F(0xf5) F(0xb0) \
	F(0xc8) F(0xeb) F(0xbb) F(0x3c) F(0x83) F(0x53) F(0x99) F(0x61) \
	F(0x17) F(0x2b) F(0x04) F(0x7e) F(0xba) F(0x77) F(0xd6) F(0x26) \
	F(0xe1) F(0x69) F(0x14) F(0x63) F(0x55) F(0x21) F(0x0c) F(0x7d)

/* Multiplication in GF(2^8) by small constants, for the table entries. */
#define XT(x)	((((x) << 1) ^ (((x) >> 7) * 0x1b)) & 0xff)
#define M2(x)	XT(x)
#define M3(x)	(XT(x) ^ (x))
#define M4(x)	XT(XT(x))
#define M8(x)	XT(XT(XT(x)))
#define M9(x)	(M8(x) ^ (x))
#define M11(x)	(M8(x) ^ M2(x) ^ (x))
#define M13(x)	(M8(x) ^ M4(x) ^ (x))
#define M14(x)	(M8(x) ^ M4(x) ^ M2(x))

/* A column word from its four bytes, row 0 in the low byte. */
#define COL(r0, r1, r2, r3) \
	((u32)(r0) | (u32)(r1) << 8 | (u32)(r2) << 16 | (u32)(r3) << 24)

/*
 * te<j>[x]: the MixColumns column produced by S-box output s = S[x] sitting
 * in row j, i.e. s times column j of the MixColumns matrix.  td<j> likewise
 * for the inverse S-box and InvMixColumns.
 */
#define TE0(s)	COL(M2(s), s, s, M3(s)),
#define TE1(s)	COL(M3(s), M2(s), s, s),
#define TE2(s)	COL(s, M3(s), M2(s), s),
#define TE3(s)	COL(s, s, M3(s), M2(s)),
#define TD0(s)	COL(M14(s), M9(s), M13(s), M11(s)),
#define TD1(s)	COL(M11(s), M14(s), M9(s), M13(s)),
#define TD2(s)	COL(M13(s), M11(s), M14(s), M9(s)),
#define TD3(s)	COL(M9(s), M13(s), M11(s), M14(s)),
#define BYTE(s)	(s),

static const u8 sbox[256] = { AES_SBOX_LIST(BYTE) };
static const u8 inv_sbox[256] = { AES_INV_SBOX_LIST(BYTE) };
static const u32 te0[256] = { AES_SBOX_LIST(TE0) };
static const u32 te1[256] = { AES_SBOX_LIST(TE1) };
static const u32 te2[256] = { AES_SBOX_LIST(TE2) };
static const u32 te3[256] = { AES_SBOX_LIST(TE3) };
static const u32 td0[256] = { AES_INV_SBOX_LIST(TD0) };
static const u32 td1[256] = { AES_INV_SBOX_LIST(TD1) };
static const u32 td2[256] = { AES_INV_SBOX_LIST(TD2) };
static const u32 td3[256] = { AES_INV_SBOX_LIST(TD3) };

#define B0(w)	((w) & 0xff)
#define B1(w)	(((w) >> 8) & 0xff)
#define B2(w)	(((w) >> 16) & 0xff)
#define B3(w)	((w) >> 24)

static u32 sub_word(u32 w)
{
	return COL(sbox[B0(w)], sbox[B1(w)], sbox[B2(w)], sbox[B3(w)]);
}

/* InvMixColumns of one column: td<j>[S[x]] undoes the inverse S-box. */
static u32 inv_mix_column(u32 w)
{
	return td0[sbox[B0(w)]] ^ td1[sbox[B1(w)]] ^
	       td2[sbox[B2(w)]] ^ td3[sbox[B3(w)]];
}

/**
 * aes_key_setup() - expand an AES key for encryption and decryption
 * @key:     the expanded key to fill
 * @raw:     the cipher key, @raw_len bytes
 * @raw_len: 16, 24 or 32 (AES-128, AES-192, AES-256)
 *
 * Key expansion of FIPS-197 section 5.2, and the decryption round keys of the
 * equivalent inverse cipher, section 5.3.5.
 *
 * Return: 0, or -EINVAL for any other key length (@key is then zeroed).
 */
int aes_key_setup(struct aes_key *key, const u8 *raw, unsigned int raw_len)
{
	unsigned int nk = raw_len / 4, words, i, r;
	u32 rcon = 1, t;

	if (raw_len != 16 && raw_len != 24 && raw_len != 32) {
		aes_key_wipe(key);
		return -EINVAL;
	}
	key->rounds = nk + 6;
	words = 4 * (key->rounds + 1);

	for (i = 0; i < nk; i++)
		key->enc[i] = aes_get_le32(raw + 4 * i);
	for (i = nk; i < words; i++) {
		t = key->enc[i - 1];
		if (i % nk == 0) {
			/* RotWord moves byte 0 to the top: a right rotation here. */
			t = sub_word(t >> 8 | t << 24) ^ rcon;
			rcon = XT(rcon);
		} else if (nk > 6 && i % nk == 4) {
			t = sub_word(t);
		}
		key->enc[i] = key->enc[i - nk] ^ t;
	}

	/* Decryption uses the rounds in reverse, inner ones through InvMixColumns. */
	for (r = 0; r <= key->rounds; r++) {
		const u32 *src = key->enc + 4 * (key->rounds - r);
		u32 *dst = key->dec + 4 * r;

		for (i = 0; i < 4; i++)
			dst[i] = (r == 0 || r == key->rounds) ?
				 src[i] : inv_mix_column(src[i]);
	}
	return 0;
}

/**
 * aes_key_wipe() - erase an expanded key
 * @key: the key; all of it is zeroed in a way the compiler cannot drop
 */
void aes_key_wipe(struct aes_key *key)
{
	memzero_explicit(key, sizeof(*key));
}

/* Encrypt one block held as four column words, in place. */
static inline void encrypt_words(const struct aes_key *key, u32 s[4])
{
	const u32 *rk = key->enc;
	u32 s0 = s[0] ^ rk[0], s1 = s[1] ^ rk[1];
	u32 s2 = s[2] ^ rk[2], s3 = s[3] ^ rk[3];
	u32 t0, t1, t2, t3;
	unsigned int r;

	for (r = 1; r < key->rounds; r++) {
		rk += 4;
		/* ShiftRows: row j of column c comes from column c + j. */
		t0 = te0[B0(s0)] ^ te1[B1(s1)] ^ te2[B2(s2)] ^ te3[B3(s3)] ^ rk[0];
		t1 = te0[B0(s1)] ^ te1[B1(s2)] ^ te2[B2(s3)] ^ te3[B3(s0)] ^ rk[1];
		t2 = te0[B0(s2)] ^ te1[B1(s3)] ^ te2[B2(s0)] ^ te3[B3(s1)] ^ rk[2];
		t3 = te0[B0(s3)] ^ te1[B1(s0)] ^ te2[B2(s1)] ^ te3[B3(s2)] ^ rk[3];
		s0 = t0;
		s1 = t1;
		s2 = t2;
		s3 = t3;
	}
	rk += 4;
	/* The last round has no MixColumns. */
	s[0] = COL(sbox[B0(s0)], sbox[B1(s1)], sbox[B2(s2)], sbox[B3(s3)]) ^ rk[0];
	s[1] = COL(sbox[B0(s1)], sbox[B1(s2)], sbox[B2(s3)], sbox[B3(s0)]) ^ rk[1];
	s[2] = COL(sbox[B0(s2)], sbox[B1(s3)], sbox[B2(s0)], sbox[B3(s1)]) ^ rk[2];
	s[3] = COL(sbox[B0(s3)], sbox[B1(s0)], sbox[B2(s1)], sbox[B3(s2)]) ^ rk[3];
}

/* Decrypt one block held as four column words, in place. */
static inline void decrypt_words(const struct aes_key *key, u32 s[4])
{
	const u32 *rk = key->dec;
	u32 s0 = s[0] ^ rk[0], s1 = s[1] ^ rk[1];
	u32 s2 = s[2] ^ rk[2], s3 = s[3] ^ rk[3];
	u32 t0, t1, t2, t3;
	unsigned int r;

	for (r = 1; r < key->rounds; r++) {
		rk += 4;
		/* InvShiftRows: row j of column c comes from column c - j. */
		t0 = td0[B0(s0)] ^ td1[B1(s3)] ^ td2[B2(s2)] ^ td3[B3(s1)] ^ rk[0];
		t1 = td0[B0(s1)] ^ td1[B1(s0)] ^ td2[B2(s3)] ^ td3[B3(s2)] ^ rk[1];
		t2 = td0[B0(s2)] ^ td1[B1(s1)] ^ td2[B2(s0)] ^ td3[B3(s3)] ^ rk[2];
		t3 = td0[B0(s3)] ^ td1[B1(s2)] ^ td2[B2(s1)] ^ td3[B3(s0)] ^ rk[3];
		s0 = t0;
		s1 = t1;
		s2 = t2;
		s3 = t3;
	}
	rk += 4;
	s[0] = COL(inv_sbox[B0(s0)], inv_sbox[B1(s3)],
		   inv_sbox[B2(s2)], inv_sbox[B3(s1)]) ^ rk[0];
	s[1] = COL(inv_sbox[B0(s1)], inv_sbox[B1(s0)],
		   inv_sbox[B2(s3)], inv_sbox[B3(s2)]) ^ rk[1];
	s[2] = COL(inv_sbox[B0(s2)], inv_sbox[B1(s1)],
		   inv_sbox[B2(s0)], inv_sbox[B3(s3)]) ^ rk[2];
	s[3] = COL(inv_sbox[B0(s3)], inv_sbox[B1(s2)],
		   inv_sbox[B2(s1)], inv_sbox[B3(s0)]) ^ rk[3];
}

static inline void load_block(u32 s[4], const u8 *p)
{
	s[0] = aes_get_le32(p);
	s[1] = aes_get_le32(p + 4);
	s[2] = aes_get_le32(p + 8);
	s[3] = aes_get_le32(p + 12);
}

static inline void store_block(u8 *p, const u32 s[4])
{
	aes_put_le32(p, s[0]);
	aes_put_le32(p + 4, s[1]);
	aes_put_le32(p + 8, s[2]);
	aes_put_le32(p + 12, s[3]);
}

/**
 * aes_encrypt_block() - encrypt one 16-byte block (FIPS-197 section 5.1)
 * @key: expanded key
 * @out: 16 bytes of ciphertext; may equal @in
 * @in:  16 bytes of plaintext
 */
void aes_encrypt_block(const struct aes_key *key, u8 *out, const u8 *in)
{
	u32 s[4];

	load_block(s, in);
	encrypt_words(key, s);
	store_block(out, s);
}

/**
 * aes_decrypt_block() - decrypt one 16-byte block (FIPS-197 section 5.3.5)
 * @key: expanded key
 * @out: 16 bytes of plaintext; may equal @in
 * @in:  16 bytes of ciphertext
 */
void aes_decrypt_block(const struct aes_key *key, u8 *out, const u8 *in)
{
	u32 s[4];

	load_block(s, in);
	decrypt_words(key, s);
	store_block(out, s);
}

/**
 * aes_cbc_encrypt() - CBC encryption (NIST SP 800-38A section 6.2)
 * @key: expanded key
 * @dst: @len bytes of ciphertext; may equal @src
 * @src: @len bytes of plaintext
 * @len: a multiple of 16 bytes; no padding is added
 * @iv:  16-byte initialisation vector
 */
void aes_cbc_encrypt(const struct aes_key *key, u8 *dst, const u8 *src,
		     size_t len, const u8 *iv)
{
	u32 s[4], p[4];

	load_block(s, iv);
	for (; len >= AES_BLOCK_LEN; len -= AES_BLOCK_LEN) {
		load_block(p, src);
		s[0] ^= p[0];
		s[1] ^= p[1];
		s[2] ^= p[2];
		s[3] ^= p[3];
		encrypt_words(key, s);
		store_block(dst, s);
		src += AES_BLOCK_LEN;
		dst += AES_BLOCK_LEN;
	}
}

/**
 * aes_cbc_decrypt() - CBC decryption (NIST SP 800-38A section 6.2)
 * @key: expanded key
 * @dst: @len bytes of plaintext; may equal @src
 * @src: @len bytes of ciphertext
 * @len: a multiple of 16 bytes
 * @iv:  16-byte initialisation vector
 */
void aes_cbc_decrypt(const struct aes_key *key, u8 *dst, const u8 *src,
		     size_t len, const u8 *iv)
{
	u32 chain[4], c[4], s[4];

	load_block(chain, iv);
	for (; len >= AES_BLOCK_LEN; len -= AES_BLOCK_LEN) {
		/* Keep the ciphertext: in place, @dst overwrites it. */
		load_block(c, src);
		s[0] = c[0];
		s[1] = c[1];
		s[2] = c[2];
		s[3] = c[3];
		decrypt_words(key, s);
		s[0] ^= chain[0];
		s[1] ^= chain[1];
		s[2] ^= chain[2];
		s[3] ^= chain[3];
		store_block(dst, s);
		chain[0] = c[0];
		chain[1] = c[1];
		chain[2] = c[2];
		chain[3] = c[3];
		src += AES_BLOCK_LEN;
		dst += AES_BLOCK_LEN;
	}
}
