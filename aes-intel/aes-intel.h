/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aes-intel.h - AES-NI/VAES sector CBC and multi-buffer MD5 for the loop-AES
 * format, and a constant-time SSSE3 AES for x86 CPUs without AES-NI, as
 * engines under aes/loop_aes.c (built only with INTELAES=y).
 *
 * Two layers:
 *
 * 1. The assembly (aesni.S, aes-ssse3.S, md5-mb.S), one entry point per ISA
 *    level.  It needs the FPU: in the kernel only between kernel_fpu_begin()
 *    and kernel_fpu_end(), and only on a CPU with the level's features.
 *
 * 2. The glue (aes-intel.c): one struct loop_aes_engine per path, which
 *    checks may_use_simd(), keeps each FPU section within
 *    AESLOOP_INTEL_FPU_BYTES and falls back to the generic engine where SIMD
 *    cannot be used; and the CPU feature checks.  It provides
 *    aesloop_arch_engine() and aesloop_arch_cpu_has() of ../aes/engines.h,
 *    through which the driver and the tools self-test and choose a path.
 */
#ifndef AESLOOP_AES_INTEL_H
#define AESLOOP_AES_INTEL_H

#include "../aes/aes.h"
#include "../aes/loop_aes.h"
#include "../aes/engines.h"

#ifndef __KERNEL__
#include <stdbool.h>
#endif

/*
 * Bytes of data per kernel_fpu_begin()/kernel_fpu_end() section.  With
 * preemption off inside, a section must stay short: the slowest work in one
 * is CBC encryption of a single sector at about 1.3 GB/s (one chain, bound by
 * the AES latency), so 16 KiB is at most about 12 microseconds, and about
 * 1 microsecond on the interleaved paths.  It is also 32 sectors, a whole
 * group of the widest interleave, so longer sections would gain nothing
 * (the begin/end pair costs far less than a microsecond once the task's
 * user FPU state is saved).
 */
#define AESLOOP_INTEL_FPU_BYTES		(16 * 1024)
#define AESLOOP_INTEL_FPU_SECTORS	(AESLOOP_INTEL_FPU_BYTES / LOOP_AES_SECTOR_SIZE)

/*
 * The ssse3 engine's sections are shorter: it runs at 0.3-0.4 GB/s on this
 * project's machines and several times slower on the older CPUs it exists
 * for, so 4 KiB (two groups of its four lanes) is about 10 microseconds here.
 */
#define AESLOOP_SSSE3_FPU_SECTORS	8

/* The paths, slowest first. */
enum aesloop_intel_path {
	AESLOOP_INTEL_SSSE3,		/* no AES-NI: vector-permute AES, scalar MD5 */
	AESLOOP_INTEL_AESNI,		/* AES-NI, SSE coding; AVX2 MD5 if present */
	AESLOOP_INTEL_VAES_AVX2,	/* VAES on ymm, AVX2 MD5 */
	AESLOOP_INTEL_VAES_AVX512,	/* VAES on zmm, AVX-512 MD5 */
	AESLOOP_INTEL_NR_PATHS
};

/*
 * enum aesloop_intel_path numbers the paths of aesloop_arch_engine() and
 * aesloop_arch_cpu_has() (../aes/engines.h) on x86_64.
 */

/* ---------------------------------------------------------------------
 * The assembly.
 *
 * Common contract: @nsect whole 512-byte sectors; @dst equals @src or does
 * not overlap it; nothing needs alignment; @nsect may be 0; all keys of a
 * call have the same length (struct aes_key.rounds); the IV of sector i is
 * the 16 bytes at @ivs + 16 * i.  No sleeping, no allocation.  Stack: at
 * most about 4 KiB (per-sector-key encryption copies the round keys of the
 * sectors in flight into a table of up to 3840 bytes, wiped before return).
 */

/*
 * aesloop_cbc_enc_<isa>() - CBC-encrypt sector i of @src with *@keys[i] and
 * its IV into sector i of @dst, for i < @nsect.  Sectors are interleaved,
 * each in its own lanes: 8 (aesni) or 16 (vaes_*) sectors go side by side,
 * so the more sectors per call the better, up to that.
 *
 * aesloop_cbc_enc1_<isa>() - the same with one key for every sector; its
 * round keys are copied once per call (vaes_avx512: kept in registers, and
 * 32 sectors side by side).
 *
 * aesloop_cbc_enc1g_<isa>() - enc1, sector i read from @srcs[i] (512
 * bytes anywhere) and written to @dst + 512 * i; no source sector may
 * overlap @dst.  Whole pages of a request go in without being copied
 * side by side first.
 *
 * aesloop_cbc_dec_<isa>() - CBC-decrypt sector i with *@keys[i] and its
 * IV; @ivs may be NULL for all-zero IVs (multi-key decryption, doc/format.md section
 * 2.2).  One sector after the other, its blocks in parallel; vaes_avx512
 * reloads round keys only when the key pointer changes.
 */
#define AESLOOP_DECLARE_CBC(isa)					\
void aesloop_cbc_enc_##isa(const struct aes_key *const *keys,		\
			   const u8 *ivs, u8 *dst, const u8 *src,	\
			   unsigned int nsect);				\
void aesloop_cbc_enc1_##isa(const struct aes_key *key,			\
			    const u8 *ivs, u8 *dst, const u8 *src,	\
			    unsigned int nsect);			\
void aesloop_cbc_enc1g_##isa(const struct aes_key *key,		\
			     const u8 *ivs, u8 *dst,			\
			     const u8 *const *srcs, unsigned int nsect); \
void aesloop_cbc_dec_##isa(const struct aes_key *const *keys,		\
			   const u8 *ivs, u8 *dst, const u8 *src,	\
			   unsigned int nsect)

AESLOOP_DECLARE_CBC(aesni);		/* AES-NI, SSE coding */
AESLOOP_DECLARE_CBC(vaes_avx2);		/* VAES + AVX2, ymm */
AESLOOP_DECLARE_CBC(vaes_avx512);	/* VAES + AVX512F, zmm */

/*
 * Encryption on xmm with VEX coding (AES-NI + AVX), 4 sectors side by side:
 * where the vaes_* encryption sends calls of fewer sectors than one
 * register has lanes.
 */
void aesloop_cbc_enc_avx(const struct aes_key *const *keys, const u8 *ivs,
			 u8 *dst, const u8 *src, unsigned int nsect);
void aesloop_cbc_enc1_avx(const struct aes_key *key, const u8 *ivs,
			  u8 *dst, const u8 *src, unsigned int nsect);
void aesloop_cbc_enc1g_avx(const struct aes_key *key, const u8 *ivs,
			   u8 *dst, const u8 *const *srcs, unsigned int nsect);

/**
 * aesloop_cbc_enc_ssse3() - CBC-encrypt whole sectors without AES-NI
 * @keys:  @nsect key pointers, sector i with *@keys[i] (all of one length)
 * @ivs:   @nsect 16-byte IVs, sector i's at @ivs + 16 * i
 * @dst:   out: @nsect * 512 bytes, sector i at @dst + 512 * i
 * @srcs:  @nsect pointers to 512 plaintext bytes each, anywhere; a source
 *         sector is either its own destination sector (in place) or
 *         overlaps no destination sector
 * @nsect: sectors, any number (0 too)
 *
 * AES (FIPS-197) with the S-box computed by vector permutes in GF(16)
 * towers (Hamburg, CHES 2009): SSSE3 only, no table in memory indexed by
 * key or data, no branch on them.  Four sectors go side by side; nothing
 * needs alignment.  The caller holds kernel_fpu_begin() in the kernel.
 */
void aesloop_cbc_enc_ssse3(const struct aes_key *const *keys, const u8 *ivs,
			   u8 *dst, const u8 *const *srcs, unsigned int nsect);

/**
 * aesloop_cbc_dec_ssse3() - CBC-decrypt whole sectors without AES-NI
 * @keys:  @nsect key pointers, sector i with *@keys[i] (all of one length)
 * @ivs:   @nsect 16-byte IVs, sector i's at @ivs + 16 * i; NULL: all zero
 * @dst:   out: @nsect * 512 bytes; equals @src or does not overlap it
 * @src:   @nsect * 512 bytes of ciphertext
 * @nsect: sectors, any number (0 too)
 *
 * The equivalent inverse cipher of FIPS-197 5.3.5 on the vector-permute
 * S-box of aesloop_cbc_enc_ssse3(), four blocks of a sector at a time.
 */
void aesloop_cbc_dec_ssse3(const struct aes_key *const *keys, const u8 *ivs,
			   u8 *dst, const u8 *src, unsigned int nsect);

/*
 * aesloop_md5_iv_<isa>() - the multi-key IVs (doc/format.md sections 2.2 step 2-4,
 * and 2.3) of @nsect sectors at once
 * @seed:   the MD5 state every sector starts from: MD5's initial state (v2),
 *          or the state seeded with key 65 (v3)
 * @data:   @nsect plaintext sectors, 512 bytes apart; bytes 16..511 of each
 *          are hashed
 * @sector: IV sector number S of the first sector; sector i has S + i
 * @ivs:    out: 16 bytes per sector; must not overlap @data
 * @nsect:  any number; 16 (avx2) or 32 (avx512) are hashed side by side,
 *          in two chains of 8 or 16 lanes: calls of that many sectors or
 *          more are the most efficient
 *
 * The same signature as struct loop_aes_engine.multi_ivs.
 */
void aesloop_md5_iv_avx2(const u32 seed[4], const u8 *data, u64 sector,
			 u8 *ivs, unsigned int nsect);
void aesloop_md5_iv_avx512(const u32 seed[4], const u8 *data, u64 sector,
			   u8 *ivs, unsigned int nsect);

#endif /* AESLOOP_AES_INTEL_H */
