/* SPDX-License-Identifier: GPL-2.0 */
/*
 * md5.h - the MD5 compression function alone (RFC 1321, section 3.4).
 *
 * loop-AES multi-key IVs are MD5 compressions of a sector from a state that
 * is not always MD5's initial one, with a length word that is not always
 * the real length (doc/format.md sections 2.2, 2.3): no finalising MD5 API can
 * express that, so aesloop carries the raw compression function.
 */
#ifndef AESLOOP_MD5_H
#define AESLOOP_MD5_H

#include "aes_types.h"

#define MD5_BLOCK_LEN	64	/* bytes */

/* RFC 1321 section 3.3: the initial state A, B, C, D. */
#define MD5_INIT_A	0x67452301U
#define MD5_INIT_B	0xefcdab89U
#define MD5_INIT_C	0x98badcfeU
#define MD5_INIT_D	0x10325476U

void md5_compress(u32 state[4], const u8 block[MD5_BLOCK_LEN]);

#endif /* AESLOOP_MD5_H */
