/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aes-arm64.h - AES-CBC over whole sectors with the ARMv8 Crypto Extensions,
 * for the loop-AES format, as an engine under aes/loop_aes.c (arm64,
 * little-endian, built only with ARM64AES=y).
 *
 * Two layers, as aes-intel/:
 *
 * 1. The assembly (aes-ce.S).  It uses the NEON registers: in the kernel
 *    only between kernel_neon_begin() and kernel_neon_end(), and only on a
 *    CPU with the AES instructions.
 *
 * 2. The glue (aes-arm64.c): the engine "arm64-ce", which checks
 *    may_use_simd(), keeps each NEON section within AESLOOP_ARM64_NEON_BYTES
 *    and falls back to the generic engine where SIMD cannot be used; and
 *    the CPU check.  It provides aesloop_arch_engine() and
 *    aesloop_arch_cpu_has() of ../aes/engines.h.  The multi-key IVs are the
 *    generic C MD5.
 */
#ifndef AESLOOP_AES_ARM64_H
#define AESLOOP_AES_ARM64_H

#include "../aes/aes.h"
#include "../aes/loop_aes.h"
#include "../aes/engines.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

/*
 * Bytes of data per kernel_neon_begin()/kernel_neon_end() section, as on
 * x86 (AESLOOP_INTEL_FPU_BYTES): 32 sectors, four groups of the 8-lane
 * encryption.  The slowest work in one, a single sector's CBC chain bound by
 * the AESE+AESMC latency, is about 10 microseconds at 2 GHz.
 */
#define AESLOOP_ARM64_NEON_BYTES	(16 * 1024)
#define AESLOOP_ARM64_NEON_SECTORS	(AESLOOP_ARM64_NEON_BYTES / LOOP_AES_SECTOR_SIZE)

/* The paths of aesloop_arch_engine() on arm64, slowest first. */
enum aesloop_arm64_path {
	AESLOOP_ARM64_CE,		/* AESE/AESMC/AESD/AESIMC, scalar C MD5 */
	AESLOOP_ARM64_NR_PATHS
};

/* ---------------------------------------------------------------------
 * The assembly.
 *
 * Common contract: @nsect whole 512-byte sectors; @dst equals @src or does
 * not overlap it; nothing needs alignment; @nsect may be 0; all keys of a
 * call have the same length (struct aes_key.rounds); the IV of sector i is
 * the 16 bytes at @ivs + 16 * i.  No sleeping, no allocation.  Stack: 160
 * bytes, the caller's callee-saved registers only; no key material is
 * written to memory, and the round keys are cleared from the vector
 * registers before return.
 *
 * aesloop_cbc_enc_ce() - CBC-encrypt sector i of @src with *@keys[i] and
 * its IV into sector i of @dst, for i < @nsect; 8 sectors side by side,
 * each lane's round keys read from its struct aes_key.
 *
 * aesloop_cbc_enc1_ce() - the same with one key for every sector, its round
 * keys kept in registers.
 *
 * aesloop_cbc_enc1g_ce() - enc1, sector i read from @srcs[i] (512 bytes
 * anywhere) and written to @dst + 512 * i; no source sector may overlap
 * @dst.
 *
 * aesloop_cbc_dec_ce() - CBC-decrypt sector i with *@keys[i] and its IV;
 * @ivs may be NULL for all-zero IVs (multi-key decryption, doc/format.md section
 * 2.2).  One sector after the other, 8 of its blocks at a time.
 */
void aesloop_cbc_enc_ce(const struct aes_key *const *keys, const u8 *ivs,
			u8 *dst, const u8 *src, unsigned int nsect);
void aesloop_cbc_enc1_ce(const struct aes_key *key, const u8 *ivs, u8 *dst,
			 const u8 *src, unsigned int nsect);
void aesloop_cbc_enc1g_ce(const struct aes_key *key, const u8 *ivs, u8 *dst,
			  const u8 *const *srcs, unsigned int nsect);
void aesloop_cbc_dec_ce(const struct aes_key *const *keys, const u8 *ivs,
			u8 *dst, const u8 *src, unsigned int nsect);

#endif /* AESLOOP_AES_ARM64_H */
