// SPDX-License-Identifier: GPL-2.0
/*
 * aes.c - portable AES-128/192/256 (FIPS-197) for aesloop.
 *
 * The fallback for CPUs without AES instructions, and the code whose
 * answers the AES-NI paths are checked against: correct on every host
 * first, then as resistant to cache-timing attacks as table-based AES can
 * cheaply be, then fast.
 *
 * Cache timing.  A look-up into a table with a key-dependent index takes
 * longer when its cache line is not in the cache, and another process (or,
 * for the kernel, user space) can see which lines were used; the classic
 * four 1 KiB "T-tables" give that away block after block.  Here the only
 * tables are the 256-byte S-box, for encryption and the key schedule, and
 * the 256-byte inverse S-box, for decryption: four or eight cache lines.
 * MixColumns and InvMixColumns are computed with shifts and XORs, and
 * before each block every 16-byte stretch of the table it uses is read,
 * by loads the compiler must emit and the state depends on, so every line
 * is in the cache before the first key-dependent look-up and the timing of
 * the look-ups no longer depends on which lines they hit.  This is the
 * technique of the Linux kernel's own generic AES (lib/crypto/aes.c).  It
 * is not constant time: what remains (another core evicting a line in the
 * middle of a block, cache-bank conflicts on old CPUs) is far smaller, but
 * not nothing.  The AES-NI paths have no tables at all.
 *
 * The state is kept as four little-endian column words: byte r of column c
 * is bits 8r..8r+7 of word c, which is how the bytes lie in memory on x86.
 */
#include "aes.h"

/*
 * FIPS-197 Figures 7 and 14.  Every entry is checked by the FIPS-197 and
 * OpenSSL comparisons of tests/host/test_aes.c.
 */
static const u8 sbox[256] = {
	0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5,
	0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76,
	0xca, 0x82, 0xc9, 0x7d, 0xfa, 0x59, 0x47, 0xf0,
	0xad, 0xd4, 0xa2, 0xaf, 0x9c, 0xa4, 0x72, 0xc0,
	0xb7, 0xfd, 0x93, 0x26, 0x36, 0x3f, 0xf7, 0xcc,
	0x34, 0xa5, 0xe5, 0xf1, 0x71, 0xd8, 0x31, 0x15,
	0x04, 0xc7, 0x23, 0xc3, 0x18, 0x96, 0x05, 0x9a,
	0x07, 0x12, 0x80, 0xe2, 0xeb, 0x27, 0xb2, 0x75,
	0x09, 0x83, 0x2c, 0x1a, 0x1b, 0x6e, 0x5a, 0xa0,
	0x52, 0x3b, 0xd6, 0xb3, 0x29, 0xe3, 0x2f, 0x84,
	0x53, 0xd1, 0x00, 0xed, 0x20, 0xfc, 0xb1, 0x5b,
	0x6a, 0xcb, 0xbe, 0x39, 0x4a, 0x4c, 0x58, 0xcf,
	0xd0, 0xef, 0xaa, 0xfb, 0x43, 0x4d, 0x33, 0x85,
	0x45, 0xf9, 0x02, 0x7f, 0x50, 0x3c, 0x9f, 0xa8,
	0x51, 0xa3, 0x40, 0x8f, 0x92, 0x9d, 0x38, 0xf5,
	0xbc, 0xb6, 0xda, 0x21, 0x10, 0xff, 0xf3, 0xd2,
	0xcd, 0x0c, 0x13, 0xec, 0x5f, 0x97, 0x44, 0x17,
	0xc4, 0xa7, 0x7e, 0x3d, 0x64, 0x5d, 0x19, 0x73,
	0x60, 0x81, 0x4f, 0xdc, 0x22, 0x2a, 0x90, 0x88,
	0x46, 0xee, 0xb8, 0x14, 0xde, 0x5e, 0x0b, 0xdb,
	0xe0, 0x32, 0x3a, 0x0a, 0x49, 0x06, 0x24, 0x5c,
	0xc2, 0xd3, 0xac, 0x62, 0x91, 0x95, 0xe4, 0x79,
	0xe7, 0xc8, 0x37, 0x6d, 0x8d, 0xd5, 0x4e, 0xa9,
	0x6c, 0x56, 0xf4, 0xea, 0x65, 0x7a, 0xae, 0x08,
	0xba, 0x78, 0x25, 0x2e, 0x1c, 0xa6, 0xb4, 0xc6,
	0xe8, 0xdd, 0x74, 0x1f, 0x4b, 0xbd, 0x8b, 0x8a,
	0x70, 0x3e, 0xb5, 0x66, 0x48, 0x03, 0xf6, 0x0e,
	0x61, 0x35, 0x57, 0xb9, 0x86, 0xc1, 0x1d, 0x9e,
	0xe1, 0xf8, 0x98, 0x11, 0x69, 0xd9, 0x8e, 0x94,
	0x9b, 0x1e, 0x87, 0xe9, 0xce, 0x55, 0x28, 0xdf,
	0x8c, 0xa1, 0x89, 0x0d, 0xbf, 0xe6, 0x42, 0x68,
	0x41, 0x99, 0x2d, 0x0f, 0xb0, 0x54, 0xbb, 0x16,
};

static const u8 inv_sbox[256] = {
	0x52, 0x09, 0x6a, 0xd5, 0x30, 0x36, 0xa5, 0x38,
	0xbf, 0x40, 0xa3, 0x9e, 0x81, 0xf3, 0xd7, 0xfb,
	0x7c, 0xe3, 0x39, 0x82, 0x9b, 0x2f, 0xff, 0x87,
	0x34, 0x8e, 0x43, 0x44, 0xc4, 0xde, 0xe9, 0xcb,
	0x54, 0x7b, 0x94, 0x32, 0xa6, 0xc2, 0x23, 0x3d,
	0xee, 0x4c, 0x95, 0x0b, 0x42, 0xfa, 0xc3, 0x4e,
	0x08, 0x2e, 0xa1, 0x66, 0x28, 0xd9, 0x24, 0xb2,
	0x76, 0x5b, 0xa2, 0x49, 0x6d, 0x8b, 0xd1, 0x25,
	0x72, 0xf8, 0xf6, 0x64, 0x86, 0x68, 0x98, 0x16,
	0xd4, 0xa4, 0x5c, 0xcc, 0x5d, 0x65, 0xb6, 0x92,
	0x6c, 0x70, 0x48, 0x50, 0xfd, 0xed, 0xb9, 0xda,
	0x5e, 0x15, 0x46, 0x57, 0xa7, 0x8d, 0x9d, 0x84,
	0x90, 0xd8, 0xab, 0x00, 0x8c, 0xbc, 0xd3, 0x0a,
	0xf7, 0xe4, 0x58, 0x05, 0xb8, 0xb3, 0x45, 0x06,
	0xd0, 0x2c, 0x1e, 0x8f, 0xca, 0x3f, 0x0f, 0x02,
	0xc1, 0xaf, 0xbd, 0x03, 0x01, 0x13, 0x8a, 0x6b,
	0x3a, 0x91, 0x11, 0x41, 0x4f, 0x67, 0xdc, 0xea,
	0x97, 0xf2, 0xcf, 0xce, 0xf0, 0xb4, 0xe6, 0x73,
	0x96, 0xac, 0x74, 0x22, 0xe7, 0xad, 0x35, 0x85,
	0xe2, 0xf9, 0x37, 0xe8, 0x1c, 0x75, 0xdf, 0x6e,
	0x47, 0xf1, 0x1a, 0x71, 0x1d, 0x29, 0xc5, 0x89,
	0x6f, 0xb7, 0x62, 0x0e, 0xaa, 0x18, 0xbe, 0x1b,
	0xfc, 0x56, 0x3e, 0x4b, 0xc6, 0xd2, 0x79, 0x20,
	0x9a, 0xdb, 0xc0, 0xfe, 0x78, 0xcd, 0x5a, 0xf4,
	0x1f, 0xdd, 0xa8, 0x33, 0x88, 0x07, 0xc7, 0x31,
	0xb1, 0x12, 0x10, 0x59, 0x27, 0x80, 0xec, 0x5f,
	0x60, 0x51, 0x7f, 0xa9, 0x19, 0xb5, 0x4a, 0x0d,
	0x2d, 0xe5, 0x7a, 0x9f, 0x93, 0xc9, 0x9c, 0xef,
	0xa0, 0xe0, 0x3b, 0x4d, 0xae, 0x2a, 0xf5, 0xb0,
	0xc8, 0xeb, 0xbb, 0x3c, 0x83, 0x53, 0x99, 0x61,
	0x17, 0x2b, 0x04, 0x7e, 0xba, 0x77, 0xd6, 0x26,
	0xe1, 0x69, 0x14, 0x63, 0x55, 0x21, 0x0c, 0x7d,
};

/* A column word from its four bytes, row 0 in the low byte. */
#define COL(r0, r1, r2, r3) \
	((u32)(r0) | (u32)(r1) << 8 | (u32)(r2) << 16 | (u32)(r3) << 24)

#define B0(w)	((w) & 0xff)
#define B1(w)	(((w) >> 8) & 0xff)
#define B2(w)	(((w) >> 16) & 0xff)
#define B3(w)	((w) >> 24)

/* Every 16 bytes: each line of any cache whose lines are that long or more. */
#define TOUCH_STRIDE	16

/*
 * Read every TOUCH_STRIDE-th byte of a 256-byte table and return 0 in a
 * way the compiler cannot see through.  The caller XORs the result into
 * the state.  The empty asm statements hide what the table holds and that
 * the mask is zero, so the loads must be made and their result used; the
 * key-dependent look-ups that follow depend on it, so neither the compiler
 * nor the CPU can start those before these have finished.
 */
static inline u32 touch_table(const u8 *table)
{
	u32 acc = 0, zero = 0;
	unsigned int i;

	__asm__("" : "+r"(table));
	for (i = 0; i < 256; i += TOUCH_STRIDE)
		acc |= table[i];
	__asm__("" : "+r"(zero));
	return acc & zero;
}

/* Each byte of @w times x in GF(2^8) (FIPS-197 4.2.1), all four at once. */
static inline u32 xtime4(u32 w)
{
	return ((w & 0x7f7f7f7fU) << 1) ^ (((w >> 7) & 0x01010101U) * 0x1b);
}

/* Byte r of the result is byte r + @n (mod 4) of @w; @n is 1, 2 or 3. */
static inline u32 rotr_bytes(u32 w, unsigned int n)
{
	return w >> (8 * n) | w << (32 - 8 * n);
}

/*
 * MixColumns of one column (FIPS-197 5.1.3): byte r becomes
 * 2 a[r] + 3 a[r+1] + a[r+2] + a[r+3].  With t = a + (a rotated by one
 * byte), that is 2 t[r] + a[r+1] + t[r+2].
 */
static inline u32 mix_column(u32 w)
{
	u32 t = w ^ rotr_bytes(w, 1);

	return xtime4(t) ^ rotr_bytes(w, 1) ^ rotr_bytes(t, 2);
}

/*
 * InvMixColumns of one column (FIPS-197 5.3.3).  Its polynomial
 * {0b}x^3 + {0d}x^2 + {09}x + {0e} is MixColumns' {03}x^3 + {01}x^2 +
 * {01}x + {02} times {04}x^2 + {05} (mod x^4 + 1), so multiply by the
 * latter, a[r] + 4 (a[r] + a[r+2]), then mix.
 */
static inline u32 inv_mix_column(u32 w)
{
	return mix_column(w ^ xtime4(xtime4(w ^ rotr_bytes(w, 2))));
}

static u32 sub_word(u32 w)
{
	w ^= touch_table(sbox);
	return COL(sbox[B0(w)], sbox[B1(w)], sbox[B2(w)], sbox[B3(w)]);
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
			rcon = ((rcon << 1) ^ ((rcon >> 7) * 0x1b)) & 0xff;
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

/*
 * One round's SubBytes and ShiftRows for one output column, as a column
 * word: row j is looked up in @box from the byte of row j of column @cj.
 */
static inline u32 sub_shift(const u8 *box, u32 c0, u32 c1, u32 c2, u32 c3)
{
	return COL(box[B0(c0)], box[B1(c1)], box[B2(c2)], box[B3(c3)]);
}

/* Encrypt one block held as four column words, in place. */
static inline void encrypt_words(const struct aes_key *key, u32 s[4])
{
	const u32 *rk = key->enc;
	u32 s0 = s[0] ^ rk[0], s1 = s[1] ^ rk[1];
	u32 s2 = s[2] ^ rk[2], s3 = s[3] ^ rk[3];
	u32 t0, t1, t2, t3;
	unsigned int r;

	s0 ^= touch_table(sbox);
	for (r = 1; r < key->rounds; r++) {
		rk += 4;
		t0 = mix_column(sub_shift(sbox, s0, s1, s2, s3)) ^ rk[0];
		t1 = mix_column(sub_shift(sbox, s1, s2, s3, s0)) ^ rk[1];
		t2 = mix_column(sub_shift(sbox, s2, s3, s0, s1)) ^ rk[2];
		t3 = mix_column(sub_shift(sbox, s3, s0, s1, s2)) ^ rk[3];
		s0 = t0;
		s1 = t1;
		s2 = t2;
		s3 = t3;
	}
	rk += 4;
	/* The last round has no MixColumns. */
	s[0] = sub_shift(sbox, s0, s1, s2, s3) ^ rk[0];
	s[1] = sub_shift(sbox, s1, s2, s3, s0) ^ rk[1];
	s[2] = sub_shift(sbox, s2, s3, s0, s1) ^ rk[2];
	s[3] = sub_shift(sbox, s3, s0, s1, s2) ^ rk[3];
}

/*
 * Decrypt one block held as four column words, in place: the equivalent
 * inverse cipher (FIPS-197 5.3.5), whose inner round keys went through
 * InvMixColumns in aes_key_setup().  InvShiftRows takes row j of column c
 * from column c - j.
 */
static inline void decrypt_words(const struct aes_key *key, u32 s[4])
{
	const u32 *rk = key->dec;
	u32 s0 = s[0] ^ rk[0], s1 = s[1] ^ rk[1];
	u32 s2 = s[2] ^ rk[2], s3 = s[3] ^ rk[3];
	u32 t0, t1, t2, t3;
	unsigned int r;

	s0 ^= touch_table(inv_sbox);
	for (r = 1; r < key->rounds; r++) {
		rk += 4;
		t0 = inv_mix_column(sub_shift(inv_sbox, s0, s3, s2, s1)) ^ rk[0];
		t1 = inv_mix_column(sub_shift(inv_sbox, s1, s0, s3, s2)) ^ rk[1];
		t2 = inv_mix_column(sub_shift(inv_sbox, s2, s1, s0, s3)) ^ rk[2];
		t3 = inv_mix_column(sub_shift(inv_sbox, s3, s2, s1, s0)) ^ rk[3];
		s0 = t0;
		s1 = t1;
		s2 = t2;
		s3 = t3;
	}
	rk += 4;
	s[0] = sub_shift(inv_sbox, s0, s3, s2, s1) ^ rk[0];
	s[1] = sub_shift(inv_sbox, s1, s0, s3, s2) ^ rk[1];
	s[2] = sub_shift(inv_sbox, s2, s1, s0, s3) ^ rk[2];
	s[3] = sub_shift(inv_sbox, s3, s2, s1, s0) ^ rk[3];
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
