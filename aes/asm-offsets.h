/* SPDX-License-Identifier: GPL-2.0 */
/*
 * asm-offsets.h - the layout of struct aes_key (aes/aes.h) and of a sector
 * as the assembly of aes-intel/ and aes-arm64/ reads them.  engines.c checks
 * the offsets against the struct at compile time.
 */
#ifndef AESLOOP_ASM_OFFSETS_H
#define AESLOOP_ASM_OFFSETS_H

#define AES_KEY_ENC		0	/* 15 round keys of 16 bytes */
#define AES_KEY_DEC		240	/* 15 round keys of 16 bytes */
#define AES_KEY_ROUNDS		480	/* u32: 10, 12 or 14 */

#define SECTOR_SIZE		512
#define SECTOR_BLOCKS		32	/* AES blocks in a sector */

#endif /* AESLOOP_ASM_OFFSETS_H */
