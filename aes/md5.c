// SPDX-License-Identifier: GPL-2.0
/*
 * md5.c - MD5 compression function (RFC 1321, section 3.4), portable C.
 *
 * The scalar reference for the multi-key IVs: the SIMD code that hashes
 * many sectors at once must give the same state, word for word.  The 64
 * steps are written out, with the sine constants T[i] of the RFC inline,
 * so the compiler keeps the four state words in registers.
 */
#include "md5.h"

static inline u32 rotl32(u32 x, unsigned int n)
{
	return (x << n) | (x >> (32 - n));
}

/* The four auxiliary functions of RFC 1321 section 3.4, in select form. */
static inline u32 md5_f(u32 b, u32 c, u32 d)
{
	return d ^ (b & (c ^ d));
}

static inline u32 md5_g(u32 b, u32 c, u32 d)
{
	return c ^ (d & (b ^ c));
}

static inline u32 md5_h(u32 b, u32 c, u32 d)
{
	return b ^ c ^ d;
}

static inline u32 md5_i(u32 b, u32 c, u32 d)
{
	return c ^ (b | ~d);
}

/* a = b + ((a + f + X[k] + T[i]) <<< s) */
static inline u32 md5_step(u32 a, u32 b, u32 f, u32 xk, u32 t, unsigned int s)
{
	return b + rotl32(a + f + xk + t, s);
}

/**
 * md5_compress() - one MD5 compression step
 * @state: the chaining state A, B, C, D; updated in place
 * @block: 64 bytes of message, read as sixteen little-endian words
 *
 * No padding and no length: the caller builds every block itself.
 */
void md5_compress(u32 state[4], const u8 block[MD5_BLOCK_LEN])
{
	u32 x[16], a = state[0], b = state[1], c = state[2], d = state[3];
	unsigned int i;

	for (i = 0; i < 16; i++)
		x[i] = aes_get_le32(block + 4 * i);

	/* Round 1 */
	a = md5_step(a, b, md5_f(b, c, d), x[0], 0xd76aa478, 7);
	d = md5_step(d, a, md5_f(a, b, c), x[1], 0xe8c7b756, 12);
	c = md5_step(c, d, md5_f(d, a, b), x[2], 0x242070db, 17);
	b = md5_step(b, c, md5_f(c, d, a), x[3], 0xc1bdceee, 22);
	a = md5_step(a, b, md5_f(b, c, d), x[4], 0xf57c0faf, 7);
	d = md5_step(d, a, md5_f(a, b, c), x[5], 0x4787c62a, 12);
	c = md5_step(c, d, md5_f(d, a, b), x[6], 0xa8304613, 17);
	b = md5_step(b, c, md5_f(c, d, a), x[7], 0xfd469501, 22);
	a = md5_step(a, b, md5_f(b, c, d), x[8], 0x698098d8, 7);
	d = md5_step(d, a, md5_f(a, b, c), x[9], 0x8b44f7af, 12);
	c = md5_step(c, d, md5_f(d, a, b), x[10], 0xffff5bb1, 17);
	b = md5_step(b, c, md5_f(c, d, a), x[11], 0x895cd7be, 22);
	a = md5_step(a, b, md5_f(b, c, d), x[12], 0x6b901122, 7);
	d = md5_step(d, a, md5_f(a, b, c), x[13], 0xfd987193, 12);
	c = md5_step(c, d, md5_f(d, a, b), x[14], 0xa679438e, 17);
	b = md5_step(b, c, md5_f(c, d, a), x[15], 0x49b40821, 22);
	/* Round 2 */
	a = md5_step(a, b, md5_g(b, c, d), x[1], 0xf61e2562, 5);
	d = md5_step(d, a, md5_g(a, b, c), x[6], 0xc040b340, 9);
	c = md5_step(c, d, md5_g(d, a, b), x[11], 0x265e5a51, 14);
	b = md5_step(b, c, md5_g(c, d, a), x[0], 0xe9b6c7aa, 20);
	a = md5_step(a, b, md5_g(b, c, d), x[5], 0xd62f105d, 5);
	d = md5_step(d, a, md5_g(a, b, c), x[10], 0x02441453, 9);
	c = md5_step(c, d, md5_g(d, a, b), x[15], 0xd8a1e681, 14);
	b = md5_step(b, c, md5_g(c, d, a), x[4], 0xe7d3fbc8, 20);
	a = md5_step(a, b, md5_g(b, c, d), x[9], 0x21e1cde6, 5);
	d = md5_step(d, a, md5_g(a, b, c), x[14], 0xc33707d6, 9);
	c = md5_step(c, d, md5_g(d, a, b), x[3], 0xf4d50d87, 14);
	b = md5_step(b, c, md5_g(c, d, a), x[8], 0x455a14ed, 20);
	a = md5_step(a, b, md5_g(b, c, d), x[13], 0xa9e3e905, 5);
	d = md5_step(d, a, md5_g(a, b, c), x[2], 0xfcefa3f8, 9);
	c = md5_step(c, d, md5_g(d, a, b), x[7], 0x676f02d9, 14);
	b = md5_step(b, c, md5_g(c, d, a), x[12], 0x8d2a4c8a, 20);
	/* Round 3 */
	a = md5_step(a, b, md5_h(b, c, d), x[5], 0xfffa3942, 4);
	d = md5_step(d, a, md5_h(a, b, c), x[8], 0x8771f681, 11);
	c = md5_step(c, d, md5_h(d, a, b), x[11], 0x6d9d6122, 16);
	b = md5_step(b, c, md5_h(c, d, a), x[14], 0xfde5380c, 23);
	a = md5_step(a, b, md5_h(b, c, d), x[1], 0xa4beea44, 4);
	d = md5_step(d, a, md5_h(a, b, c), x[4], 0x4bdecfa9, 11);
	c = md5_step(c, d, md5_h(d, a, b), x[7], 0xf6bb4b60, 16);
	b = md5_step(b, c, md5_h(c, d, a), x[10], 0xbebfbc70, 23);
	a = md5_step(a, b, md5_h(b, c, d), x[13], 0x289b7ec6, 4);
	d = md5_step(d, a, md5_h(a, b, c), x[0], 0xeaa127fa, 11);
	c = md5_step(c, d, md5_h(d, a, b), x[3], 0xd4ef3085, 16);
	b = md5_step(b, c, md5_h(c, d, a), x[6], 0x04881d05, 23);
	a = md5_step(a, b, md5_h(b, c, d), x[9], 0xd9d4d039, 4);
	d = md5_step(d, a, md5_h(a, b, c), x[12], 0xe6db99e5, 11);
	c = md5_step(c, d, md5_h(d, a, b), x[15], 0x1fa27cf8, 16);
	b = md5_step(b, c, md5_h(c, d, a), x[2], 0xc4ac5665, 23);
	/* Round 4 */
	a = md5_step(a, b, md5_i(b, c, d), x[0], 0xf4292244, 6);
	d = md5_step(d, a, md5_i(a, b, c), x[7], 0x432aff97, 10);
	c = md5_step(c, d, md5_i(d, a, b), x[14], 0xab9423a7, 15);
	b = md5_step(b, c, md5_i(c, d, a), x[5], 0xfc93a039, 21);
	a = md5_step(a, b, md5_i(b, c, d), x[12], 0x655b59c3, 6);
	d = md5_step(d, a, md5_i(a, b, c), x[3], 0x8f0ccc92, 10);
	c = md5_step(c, d, md5_i(d, a, b), x[10], 0xffeff47d, 15);
	b = md5_step(b, c, md5_i(c, d, a), x[1], 0x85845dd1, 21);
	a = md5_step(a, b, md5_i(b, c, d), x[8], 0x6fa87e4f, 6);
	d = md5_step(d, a, md5_i(a, b, c), x[15], 0xfe2ce6e0, 10);
	c = md5_step(c, d, md5_i(d, a, b), x[6], 0xa3014314, 15);
	b = md5_step(b, c, md5_i(c, d, a), x[13], 0x4e0811a1, 21);
	a = md5_step(a, b, md5_i(b, c, d), x[4], 0xf7537e82, 6);
	d = md5_step(d, a, md5_i(a, b, c), x[11], 0xbd3af235, 10);
	c = md5_step(c, d, md5_i(d, a, b), x[2], 0x2ad7d2bb, 15);
	b = md5_step(b, c, md5_i(c, d, a), x[9], 0xeb86d391, 21);

	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
	/* The block may be key material (the v3 seed, doc/format.md section 2.3). */
	memzero_explicit(x, sizeof(x));
}
