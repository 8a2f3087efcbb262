/* SPDX-License-Identifier: GPL-2.0 */
/*
 * md5-mb.S - the IVs of loop-AES multi-key mode (doc/format.md sections 2.2 and
 * 2.3), MD5 of many sectors side by side.
 *
 * For each sector: from the given MD5 state (the MD5 initial state for v2,
 * the state seeded with key 65 for v3), the MD5 compression function over
 * plaintext bytes 16..463 (seven blocks), then over one last block: bytes
 * 464..511 followed by the words S & 0xffffffff, ((S >> 32) & 0xffffff) |
 * 0x80000000, 4024 and 0, where S is the sector's IV sector number.  The IV
 * is the four state words, little-endian.  No MD5 padding or length: this
 * is the raw compression function.
 *
 *   variant   sectors side by side                optimised for
 *   avx2      16: two chains of 8 x 32-bit lanes  CPUs with AVX2, no AVX-512
 *   avx512    32: two chains of 16 lanes          AVX-512: rotates (vprold)
 *                                                 and three-input logic
 *                                                 (vpternlogd) are one
 *                                                 instruction each
 *
 * Why: MD5 is a chain of 64 dependent steps per block, about 6 cycles per
 * byte for one message, more than AES-NI costs for the same sector.  One
 * sector per 32-bit lane hashes 8 or 16 sectors in about the time of one,
 * and the steps are still latency-bound then: measured on Zen 5, a second
 * independent chain of 16 lanes costs almost nothing.  So each variant runs
 * two chains (two groups of lanes) at once.
 *
 * Data layout: each block of each lane is loaded as one row (16 words) and
 * the rows are transposed so that a vector holds one message word of every
 * lane of a chain; the message vectors go to the stack and the steps read
 * them from there.  A call is done in rounds of up to LANES sectors; with
 * fewer, the spare lanes hash the round's last sector again (their results
 * are not stored), so no load goes beyond the data and a short round costs
 * no more time than a full one.  The last block reads only bytes 464..511
 * of a sector (masked loads), never past it.
 *
 * Contract (prototypes in aes-intel.h): any nsect (0 does nothing); ivs
 * and data need no alignment and must not overlap; in the kernel the
 * caller holds kernel_fpu_begin().  Stack: 3 KiB (avx512), 1.5 KiB (avx2).
 */
#include "../aes/asm-offsets.h"
#include "linkage.S"

	.section	.rodata
	.p2align	6
/* The 64 additive constants of MD5 (RFC 1321, section 3.4) */
.Lmd5_k:
	.long	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee
	.long	0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501
	.long	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be
	.long	0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821
	.long	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa
	.long	0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8
	.long	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed
	.long	0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a
	.long	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c
	.long	0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70
	.long	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05
	.long	0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665
	.long	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039
	.long	0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1
	.long	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1
	.long	0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391
/* qword lane numbers 0..15, to add to the sector number */
.Llane_lo:
	.quad		0, 1, 2, 3, 4, 5, 6, 7
.Llane_hi:
	.quad		8, 9, 10, 11, 12, 13, 14, 15
.Lones:
	.long		-1, -1, -1, -1, -1, -1, -1, -1
.Lmask24:
	.long		0x00ffffff
.Ltop_bit:
	.long		0x80000000
/* the length word of the format: 4024 bits, whatever the real length */
.Llen_word:
	.long		4024

	.text

/* General registers, both variants */
#define SEED		%rdi		/* the starting state, 4 words */
#define DATA		%rsi		/* the round's first sector */
#define SECTOR		%rdx		/* IV sector number of DATA */
#define IVS		%rcx		/* out: the next sector's IV */
#define LEFT		%r8		/* sectors left, zero-extended */
#define BLK		%r9		/* block b of the round's first sector */
#define NBLK		%r10d		/* blocks left, 8 .. 1 */
#define CNT		%r11		/* sectors in this round */
#define OFF		%rax		/* a lane's sector offset; temporary */

/*
 * Vector registers.  Chain c (0 or 1) has the state vectors Ac, Bc, Cc, Dc
 * (one 32-bit word per lane) and the step temporaries TFc (round function),
 * TKc (message word + constant) and, avx2 only, T2c (rotation).  The
 * transposes use the registers above those.
 */
.macro	_md5_aliases	zmm
.if \zmm
	.set		A0, %zmm0
	.set		B0, %zmm1
	.set		C0, %zmm2
	.set		D0, %zmm3
	.set		A1, %zmm4
	.set		B1, %zmm5
	.set		C1, %zmm6
	.set		D1, %zmm7
	.set		TF0, %zmm8
	.set		TK0, %zmm9
	.set		TF1, %zmm10
	.set		TK1, %zmm11
.else
	.set		A0, %ymm0
	.set		B0, %ymm1
	.set		C0, %ymm2
	.set		D0, %ymm3
	.set		A1, %ymm4
	.set		B1, %ymm5
	.set		C1, %ymm6
	.set		D1, %ymm7
	.set		TF0, %ymm8
	.set		TK0, %ymm9
	.set		T20, %ymm10
	.set		TF1, %ymm11
	.set		TK1, %ymm12
	.set		T21, %ymm13
.endif
.endm

/*
 * _step1 f, a, b, c, d, i, g, s, chain: MD5 step i of one chain,
 *	a = b + rotl(a + f(b, c, d) + M[g] + K[i], s)
 * with f one of F, G, H, I of RFC 1321 and M[g] at MSchain + VL * g.  The
 * sum with M[g] + K[i] and with a is off the critical path; only f's last
 * operation, two adds and the rotation wait for b, the previous step's
 * result.
 */
.macro	_step1	f, a, b, c, d, i, g, s, chain
.if MD5_ZMM
	vmovdqa32	MS\chain+64*\g(%rsp), TK\chain
	vpaddd		.Lmd5_k+4*\i(%rip){1to16}, TK\chain, TK\chain
	vpaddd		TK\chain, \a, \a
	/* TF = f(b, c, d) with TF starting as d: imm = truth table */
	vmovdqa32	\d, TF\chain
.ifc \f, F
	vpternlogd	$0xd8, \b, \c, TF\chain
.endif
.ifc \f, G
	vpternlogd	$0xac, \b, \c, TF\chain
.endif
.ifc \f, H
	vpternlogd	$0x96, \b, \c, TF\chain
.endif
.ifc \f, I
	vpternlogd	$0x63, \b, \c, TF\chain
.endif
	vpaddd		TF\chain, \a, \a
	vprold		$\s, \a, \a
	vpaddd		\b, \a, \a
.else
	vpbroadcastd	.Lmd5_k+4*\i(%rip), TK\chain
	vpaddd		MS\chain+32*\g(%rsp), TK\chain, TK\chain
	vpaddd		TK\chain, \a, \a
.ifc \f, F
	/* d ^ (b & (c ^ d)) */
	vpxor		\c, \d, TF\chain
	vpand		\b, TF\chain, TF\chain
	vpxor		\d, TF\chain, TF\chain
.endif
.ifc \f, G
	/* (b & d) + (c & ~d): the two have no bit in common */
	vpandn		\c, \d, TF\chain
	vpaddd		TF\chain, \a, \a
	vpand		\b, \d, TF\chain
.endif
.ifc \f, H
	vpxor		\c, \d, TF\chain
	vpxor		\b, TF\chain, TF\chain
.endif
.ifc \f, I
	/* c ^ (b | ~d) */
	vpxor		.Lones(%rip), \d, TF\chain
	vpor		\b, TF\chain, TF\chain
	vpxor		\c, TF\chain, TF\chain
.endif
	vpaddd		TF\chain, \a, \a
	vpslld		$\s, \a, T2\chain
	vpsrld		$32-\s, \a, \a
	vpor		T2\chain, \a, \a
	vpaddd		\b, \a, \a
.endif
.endm

/* Step i of both chains; the roles of A..D rotate each step. */
.macro	_step	f, a, b, c, d, i, g, s
	_step1		\f, \a\()0, \b\()0, \c\()0, \d\()0, \i, \g, \s, 0
	_step1		\f, \a\()1, \b\()1, \c\()1, \d\()1, \i, \g, \s, 1
.endm

/* The 64 steps of one block */
.macro	_md5_block
	_step	F, A, B, C, D, 0, 0, 7
	_step	F, D, A, B, C, 1, 1, 12
	_step	F, C, D, A, B, 2, 2, 17
	_step	F, B, C, D, A, 3, 3, 22
	_step	F, A, B, C, D, 4, 4, 7
	_step	F, D, A, B, C, 5, 5, 12
	_step	F, C, D, A, B, 6, 6, 17
	_step	F, B, C, D, A, 7, 7, 22
	_step	F, A, B, C, D, 8, 8, 7
	_step	F, D, A, B, C, 9, 9, 12
	_step	F, C, D, A, B, 10, 10, 17
	_step	F, B, C, D, A, 11, 11, 22
	_step	F, A, B, C, D, 12, 12, 7
	_step	F, D, A, B, C, 13, 13, 12
	_step	F, C, D, A, B, 14, 14, 17
	_step	F, B, C, D, A, 15, 15, 22
	_step	G, A, B, C, D, 16, 1, 5
	_step	G, D, A, B, C, 17, 6, 9
	_step	G, C, D, A, B, 18, 11, 14
	_step	G, B, C, D, A, 19, 0, 20
	_step	G, A, B, C, D, 20, 5, 5
	_step	G, D, A, B, C, 21, 10, 9
	_step	G, C, D, A, B, 22, 15, 14
	_step	G, B, C, D, A, 23, 4, 20
	_step	G, A, B, C, D, 24, 9, 5
	_step	G, D, A, B, C, 25, 14, 9
	_step	G, C, D, A, B, 26, 3, 14
	_step	G, B, C, D, A, 27, 8, 20
	_step	G, A, B, C, D, 28, 13, 5
	_step	G, D, A, B, C, 29, 2, 9
	_step	G, C, D, A, B, 30, 7, 14
	_step	G, B, C, D, A, 31, 12, 20
	_step	H, A, B, C, D, 32, 5, 4
	_step	H, D, A, B, C, 33, 8, 11
	_step	H, C, D, A, B, 34, 11, 16
	_step	H, B, C, D, A, 35, 14, 23
	_step	H, A, B, C, D, 36, 1, 4
	_step	H, D, A, B, C, 37, 4, 11
	_step	H, C, D, A, B, 38, 7, 16
	_step	H, B, C, D, A, 39, 10, 23
	_step	H, A, B, C, D, 40, 13, 4
	_step	H, D, A, B, C, 41, 0, 11
	_step	H, C, D, A, B, 42, 3, 16
	_step	H, B, C, D, A, 43, 6, 23
	_step	H, A, B, C, D, 44, 9, 4
	_step	H, D, A, B, C, 45, 12, 11
	_step	H, C, D, A, B, 46, 15, 16
	_step	H, B, C, D, A, 47, 2, 23
	_step	I, A, B, C, D, 48, 0, 6
	_step	I, D, A, B, C, 49, 7, 10
	_step	I, C, D, A, B, 50, 14, 15
	_step	I, B, C, D, A, 51, 5, 21
	_step	I, A, B, C, D, 52, 12, 6
	_step	I, D, A, B, C, 53, 3, 10
	_step	I, C, D, A, B, 54, 10, 15
	_step	I, B, C, D, A, 55, 1, 21
	_step	I, A, B, C, D, 56, 8, 6
	_step	I, D, A, B, C, 57, 15, 10
	_step	I, C, D, A, B, 58, 6, 15
	_step	I, B, C, D, A, 59, 13, 21
	_step	I, A, B, C, D, 60, 4, 6
	_step	I, D, A, B, C, 61, 11, 10
	_step	I, C, D, A, B, 62, 2, 15
	_step	I, B, C, D, A, 63, 9, 21
.endm

/*
 * _lane_offsets lanes: OFFS(%rsp)[l] = min(l, cnt - 1) * 512, the sector
 * that lane l hashes.
 */
.macro	_lane_offsets	lanes
	lea		-1(CNT), BLK
	xor		%eax, %eax
.Loff\@:
	mov		%rax, %r10
	cmp		BLK, %r10
	cmova		BLK, %r10
	shl		$9, %r10
	mov		%r10, OFFS(%rsp,%rax,8)
	inc		%eax
	cmp		$\lanes, %eax
	jb		.Loff\@
.endm

/*
 * _store_ivs vl: the final states are at OUT(%rsp): A0, B0, C0, D0, A1,
 * B1, C1, D1, VL bytes each.  Lane l of the round (chain l / (VL / 4),
 * lane l % (VL / 4) in it) becomes IV l, for the cnt lanes of real sectors.
 */
.macro	_store_ivs	vl
	xor		%eax, %eax
.Lout\@:
	mov		%eax, %r9d
	and		$\vl / 4 - 1, %r9d		/* lane in the chain */
	lea		(,%r9,4), %r9
	mov		%eax, %r10d
	and		$\vl / 4, %r10d			/* chain * VL / 4 */
	shl		$4, %r10d			/* chain * 4 * VL */
	add		%r10, %r9
	mov		OUT(%rsp,%r9), %r10d
	mov		%r10d, (IVS)
	mov		OUT+\vl(%rsp,%r9), %r10d
	mov		%r10d, 4(IVS)
	mov		OUT+2*\vl(%rsp,%r9), %r10d
	mov		%r10d, 8(IVS)
	mov		OUT+3*\vl(%rsp,%r9), %r10d
	mov		%r10d, 12(IVS)
	add		$16, IVS
	inc		%eax
	cmp		%r11d, %eax
	jb		.Lout\@
.endm

/*
 * Save the states of both chains at SAVE(%rsp) (suffix: 32 for the EVEX
 * move of zmm), or add them back.
 */
.macro	_save_states	suffix
.irp r, A0, B0, C0, D0, A1, B1, C1, D1
	vmovdqa\suffix	\r, SAVE+SLOT_\r(%rsp)
.endr
.endm

.macro	_add_states
.irp r, A0, B0, C0, D0, A1, B1, C1, D1
	vpaddd		SAVE+SLOT_\r(%rsp), \r, \r
.endr
.endm

.macro	_state_slots	vl
	.set		SLOT_A0, 0 * \vl
	.set		SLOT_B0, 1 * \vl
	.set		SLOT_C0, 2 * \vl
	.set		SLOT_D0, 3 * \vl
	.set		SLOT_A1, 4 * \vl
	.set		SLOT_B1, 5 * \vl
	.set		SLOT_C1, 6 * \vl
	.set		SLOT_D1, 7 * \vl
.endm

/* ------------------------------------------------------------------------
 * void aesloop_md5_iv_avx512(const u32 seed[4], const u8 *data, u64 sector,
 *			      u8 *ivs, unsigned int nsect)
 *
 * 32 sectors per round, chain c taking lanes 16c .. 16c + 15.  zmm0..11
 * the chains (above), zmm12..14 setup temporaries, zmm15..31 the 16 rows
 * being transposed into message words (one register spare), k1 the row
 * load mask.
 *
 * Stack frame, rsp aligned to 64.
 */
	.set		MS0, 0			/* chain 0's 16 message words */
	.set		MS1, 1024		/* chain 1's */
	.set		SAVE, 2048		/* the 8 state vectors at the block start */
	.set		SW, 2560		/* per chain: S & 0xffffffff, then */
						/* ((S >> 32) & 0xffffff) | 0x80000000 */
	.set		OFFS, 2816		/* 32 lane offsets */
	.set		MD5_FRAME512, 3072

/*
 * Rows of chain c (lanes 16c..) into zmm16..31, transposed; message words
 * to MSc; in the last block words 12..15 from SW and the length.
 */
.macro	_message512	chain
	.set		MS, MS\chain
	.set		OFFSC, OFFS + 128 * \chain
	mov		OFFSC+8*0(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm16{%k1}{z}
	mov		OFFSC+8*1(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm17{%k1}{z}
	mov		OFFSC+8*2(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm18{%k1}{z}
	mov		OFFSC+8*3(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm19{%k1}{z}
	mov		OFFSC+8*4(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm20{%k1}{z}
	mov		OFFSC+8*5(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm21{%k1}{z}
	mov		OFFSC+8*6(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm22{%k1}{z}
	mov		OFFSC+8*7(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm23{%k1}{z}
	mov		OFFSC+8*8(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm24{%k1}{z}
	mov		OFFSC+8*9(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm25{%k1}{z}
	mov		OFFSC+8*10(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm26{%k1}{z}
	mov		OFFSC+8*11(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm27{%k1}{z}
	mov		OFFSC+8*12(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm28{%k1}{z}
	mov		OFFSC+8*13(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm29{%k1}{z}
	mov		OFFSC+8*14(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm30{%k1}{z}
	mov		OFFSC+8*15(%rsp), OFF
	vmovdqu32	(BLK,OFF), %zmm31{%k1}{z}
	/*
	 * 16 x 16 transpose of zmm16..31 in four stages of unpacks and
	 * 128-bit shuffles; each pair of inputs gives two outputs, one into
	 * the register the previous pair freed, starting with zmm15.
	 */
	/* rows 2k, 2k+1 -> dword pairs */
	vpunpckldq	%zmm17, %zmm16, %zmm15
	vpunpckhdq	%zmm17, %zmm16, %zmm17
	vpunpckldq	%zmm19, %zmm18, %zmm16
	vpunpckhdq	%zmm19, %zmm18, %zmm19
	vpunpckldq	%zmm21, %zmm20, %zmm18
	vpunpckhdq	%zmm21, %zmm20, %zmm21
	vpunpckldq	%zmm23, %zmm22, %zmm20
	vpunpckhdq	%zmm23, %zmm22, %zmm23
	vpunpckldq	%zmm25, %zmm24, %zmm22
	vpunpckhdq	%zmm25, %zmm24, %zmm25
	vpunpckldq	%zmm27, %zmm26, %zmm24
	vpunpckhdq	%zmm27, %zmm26, %zmm27
	vpunpckldq	%zmm29, %zmm28, %zmm26
	vpunpckhdq	%zmm29, %zmm28, %zmm29
	vpunpckldq	%zmm31, %zmm30, %zmm28
	vpunpckhdq	%zmm31, %zmm30, %zmm31
	/* -> X(g,i): word 4q+i of rows 4g..4g+3 in 128-bit lane q */
	vpunpcklqdq	%zmm16, %zmm15, %zmm30
	vpunpckhqdq	%zmm16, %zmm15, %zmm16
	vpunpcklqdq	%zmm19, %zmm17, %zmm15
	vpunpckhqdq	%zmm19, %zmm17, %zmm19
	vpunpcklqdq	%zmm20, %zmm18, %zmm17
	vpunpckhqdq	%zmm20, %zmm18, %zmm20
	vpunpcklqdq	%zmm23, %zmm21, %zmm18
	vpunpckhqdq	%zmm23, %zmm21, %zmm23
	vpunpcklqdq	%zmm24, %zmm22, %zmm21
	vpunpckhqdq	%zmm24, %zmm22, %zmm24
	vpunpcklqdq	%zmm27, %zmm25, %zmm22
	vpunpckhqdq	%zmm27, %zmm25, %zmm27
	vpunpcklqdq	%zmm28, %zmm26, %zmm25
	vpunpckhqdq	%zmm28, %zmm26, %zmm28
	vpunpcklqdq	%zmm31, %zmm29, %zmm26
	vpunpckhqdq	%zmm31, %zmm29, %zmm31
	/* -> Y: 128-bit lanes q0 q1 / q2 q3 of two row groups */
	vshufi32x4	$0x44, %zmm17, %zmm30, %zmm29
	vshufi32x4	$0xee, %zmm17, %zmm30, %zmm17
	vshufi32x4	$0x44, %zmm25, %zmm21, %zmm30
	vshufi32x4	$0xee, %zmm25, %zmm21, %zmm25
	vshufi32x4	$0x44, %zmm20, %zmm16, %zmm21
	vshufi32x4	$0xee, %zmm20, %zmm16, %zmm20
	vshufi32x4	$0x44, %zmm28, %zmm24, %zmm16
	vshufi32x4	$0xee, %zmm28, %zmm24, %zmm28
	vshufi32x4	$0x44, %zmm18, %zmm15, %zmm24
	vshufi32x4	$0xee, %zmm18, %zmm15, %zmm18
	vshufi32x4	$0x44, %zmm26, %zmm22, %zmm15
	vshufi32x4	$0xee, %zmm26, %zmm22, %zmm26
	vshufi32x4	$0x44, %zmm23, %zmm19, %zmm22
	vshufi32x4	$0xee, %zmm23, %zmm19, %zmm23
	vshufi32x4	$0x44, %zmm31, %zmm27, %zmm19
	vshufi32x4	$0xee, %zmm31, %zmm27, %zmm31
	/* -> message word 4q+i of all 16 rows */
	vshufi32x4	$0x88, %zmm30, %zmm29, %zmm27
	vshufi32x4	$0xdd, %zmm30, %zmm29, %zmm30
	vshufi32x4	$0x88, %zmm25, %zmm17, %zmm29
	vshufi32x4	$0xdd, %zmm25, %zmm17, %zmm25
	vshufi32x4	$0x88, %zmm16, %zmm21, %zmm17
	vshufi32x4	$0xdd, %zmm16, %zmm21, %zmm16
	vshufi32x4	$0x88, %zmm28, %zmm20, %zmm21
	vshufi32x4	$0xdd, %zmm28, %zmm20, %zmm28
	vshufi32x4	$0x88, %zmm15, %zmm24, %zmm20
	vshufi32x4	$0xdd, %zmm15, %zmm24, %zmm15
	vshufi32x4	$0x88, %zmm26, %zmm18, %zmm24
	vshufi32x4	$0xdd, %zmm26, %zmm18, %zmm26
	vshufi32x4	$0x88, %zmm19, %zmm22, %zmm18
	vshufi32x4	$0xdd, %zmm19, %zmm22, %zmm19
	vshufi32x4	$0x88, %zmm31, %zmm23, %zmm22
	vshufi32x4	$0xdd, %zmm31, %zmm23, %zmm31
	/* each message word to its slot */
	vmovdqa32	%zmm27, MS+64*0(%rsp)
	vmovdqa32	%zmm17, MS+64*1(%rsp)
	vmovdqa32	%zmm20, MS+64*2(%rsp)
	vmovdqa32	%zmm18, MS+64*3(%rsp)
	vmovdqa32	%zmm30, MS+64*4(%rsp)
	vmovdqa32	%zmm16, MS+64*5(%rsp)
	vmovdqa32	%zmm15, MS+64*6(%rsp)
	vmovdqa32	%zmm19, MS+64*7(%rsp)
	vmovdqa32	%zmm29, MS+64*8(%rsp)
	vmovdqa32	%zmm21, MS+64*9(%rsp)
	vmovdqa32	%zmm24, MS+64*10(%rsp)
	vmovdqa32	%zmm22, MS+64*11(%rsp)
	vmovdqa32	%zmm25, MS+64*12(%rsp)
	vmovdqa32	%zmm28, MS+64*13(%rsp)
	vmovdqa32	%zmm26, MS+64*14(%rsp)
	vmovdqa32	%zmm31, MS+64*15(%rsp)
	cmp		$1, NBLK
	jne		.Lhave_m\@
	/* last block: words 12..15 are the sector number and the length */
	vmovdqa32	SW+128*\chain(%rsp), %zmm12
	vmovdqa32	%zmm12, MS+64*12(%rsp)
	vmovdqa32	SW+128*\chain+64(%rsp), %zmm12
	vmovdqa32	%zmm12, MS+64*13(%rsp)
	vpbroadcastd	.Llen_word(%rip), %zmm12
	vmovdqa32	%zmm12, MS+64*14(%rsp)
	vpxord		%zmm12, %zmm12, %zmm12
	vmovdqa32	%zmm12, MS+64*15(%rsp)
.Lhave_m\@:
.endm

/* SW for chain c: the sector words of lanes 16c .. 16c + 15 */
.macro	_sector_words512	chain
	lea		16*\chain(SECTOR), OFF
	vpbroadcastq	OFF, %zmm12
	vpaddq		.Llane_lo(%rip), %zmm12, %zmm13
	vpaddq		.Llane_hi(%rip), %zmm12, %zmm14
	vpmovqd		%zmm13, %ymm12
	vpmovqd		%zmm14, %ymm15
	vinserti64x4	$1, %ymm15, %zmm12, %zmm12
	vmovdqa32	%zmm12, SW+128*\chain(%rsp)
	vpsrlq		$32, %zmm13, %zmm13
	vpsrlq		$32, %zmm14, %zmm14
	vpmovqd		%zmm13, %ymm12
	vpmovqd		%zmm14, %ymm15
	vinserti64x4	$1, %ymm15, %zmm12, %zmm12
	vpandd		.Lmask24(%rip){1to16}, %zmm12, %zmm12
	vpord		.Ltop_bit(%rip){1to16}, %zmm12, %zmm12
	vmovdqa32	%zmm12, SW+128*\chain+64(%rsp)
.endm

SYM_FUNC_START(aesloop_md5_iv_avx512)
	.set		MD5_ZMM, 1
	_md5_aliases	1
	_state_slots	64
	test		%r8d, %r8d
	jz		.Lnothing512
	push		%rbp
	mov		%rsp, %rbp
	sub		$MD5_FRAME512, %rsp
	and		$-64, %rsp
	mov		%r8d, %r8d

.Lround512:
	mov		$32, CNT
	cmp		CNT, LEFT
	cmovb		LEFT, CNT
	_lane_offsets	32
	_sector_words512	0
	_sector_words512	1
.irp r, A, B, C, D
	vpbroadcastd	SLOT_\r\()0/16(SEED), \r\()0
	vmovdqa32	\r\()0, \r\()1
.endr
	lea		16(DATA), BLK
	mov		$8, NBLK
	mov		$0xffff, %eax
	kmovw		%eax, %k1

.Lblock512:
	_message512	0
	_message512	1
	_save_states	32
	_md5_block
	_add_states
	add		$64, BLK
	dec		NBLK
	jz		.Lround_done512
	cmp		$1, NBLK
	jne		.Lblock512
	/* the last block: words 0..11 of each row only */
	mov		$0x0fff, %eax
	kmovw		%eax, %k1
	jmp		.Lblock512

.Lround_done512:
	.set		OUT, SAVE
	_save_states	32
	_store_ivs	64
	mov		CNT, %rax
	shl		$9, %rax
	add		%rax, DATA
	add		CNT, SECTOR
	sub		CNT, LEFT
	jnz		.Lround512

	mov		%rbp, %rsp
	pop		%rbp
.Lnothing512:
	vzeroupper
	RET
SYM_FUNC_END(aesloop_md5_iv_avx512)

/* ------------------------------------------------------------------------
 * void aesloop_md5_iv_avx2(const u32 seed[4], const u8 *data, u64 sector,
 *			    u8 *ivs, unsigned int nsect)
 *
 * 16 sectors per round, chain c taking lanes 8c .. 8c + 7.  ymm0..13 the
 * chains (above).  With only 16 registers, the states go to SAVE at the
 * start of each block and come back after the transposes, which use
 * ymm7..15 (8 rows, one spare).
 *
 * Stack frame, rsp aligned to 32.
 */
	.set		MS0, 0			/* chain 0's 16 message words */
	.set		MS1, 512		/* chain 1's */
	.set		SAVE2, 1024		/* the 8 state vectors at the block start */
	.set		SW2, 1280		/* per chain: S & 0xffffffff, then */
						/* ((S >> 32) & 0xffffff) | 0x80000000 */
	.set		OFFS2, 1408		/* 16 lane offsets */
	.set		MD5_FRAME2, 1536

/*
 * 8 rows (half a block of lanes 8c ..) into ymm8..15; @masked: the last
 * block, whose bytes 32..47 only are data, loaded as 16 bytes with the
 * upper lane zeroed.  Not a masked 32-byte load: those bytes may end a
 * page, and QEMU's TCG faults on a masked-out element in the next one.
 */
.macro	_load_rows2	chain, disp, masked
	.set		OFFSC, OFFS2 + 64 * \chain
	mov		OFFSC+8*0(%rsp), OFF
.if \masked
	vmovdqu		\disp(BLK,OFF), %xmm8
.else
	vmovdqu		\disp(BLK,OFF), %ymm8
.endif
	mov		OFFSC+8*1(%rsp), OFF
.if \masked
	vmovdqu		\disp(BLK,OFF), %xmm9
.else
	vmovdqu		\disp(BLK,OFF), %ymm9
.endif
	mov		OFFSC+8*2(%rsp), OFF
.if \masked
	vmovdqu		\disp(BLK,OFF), %xmm10
.else
	vmovdqu		\disp(BLK,OFF), %ymm10
.endif
	mov		OFFSC+8*3(%rsp), OFF
.if \masked
	vmovdqu		\disp(BLK,OFF), %xmm11
.else
	vmovdqu		\disp(BLK,OFF), %ymm11
.endif
	mov		OFFSC+8*4(%rsp), OFF
.if \masked
	vmovdqu		\disp(BLK,OFF), %xmm12
.else
	vmovdqu		\disp(BLK,OFF), %ymm12
.endif
	mov		OFFSC+8*5(%rsp), OFF
.if \masked
	vmovdqu		\disp(BLK,OFF), %xmm13
.else
	vmovdqu		\disp(BLK,OFF), %ymm13
.endif
	mov		OFFSC+8*6(%rsp), OFF
.if \masked
	vmovdqu		\disp(BLK,OFF), %xmm14
.else
	vmovdqu		\disp(BLK,OFF), %ymm14
.endif
	mov		OFFSC+8*7(%rsp), OFF
.if \masked
	vmovdqu		\disp(BLK,OFF), %xmm15
.else
	vmovdqu		\disp(BLK,OFF), %ymm15
.endif
.endm

/* 8 x 8 transpose of ymm8..15 (rows) into message words MSc + 32 * w0.. */
.macro	_transpose8	chain, w0
	vpunpckldq	%ymm9, %ymm8, %ymm7
	vpunpckhdq	%ymm9, %ymm8, %ymm9
	vpunpckldq	%ymm11, %ymm10, %ymm8
	vpunpckhdq	%ymm11, %ymm10, %ymm11
	vpunpckldq	%ymm13, %ymm12, %ymm10
	vpunpckhdq	%ymm13, %ymm12, %ymm13
	vpunpckldq	%ymm15, %ymm14, %ymm12
	vpunpckhdq	%ymm15, %ymm14, %ymm15
	vpunpcklqdq	%ymm8, %ymm7, %ymm14
	vpunpckhqdq	%ymm8, %ymm7, %ymm8
	vpunpcklqdq	%ymm11, %ymm9, %ymm7
	vpunpckhqdq	%ymm11, %ymm9, %ymm11
	vpunpcklqdq	%ymm12, %ymm10, %ymm9
	vpunpckhqdq	%ymm12, %ymm10, %ymm12
	vpunpcklqdq	%ymm15, %ymm13, %ymm10
	vpunpckhqdq	%ymm15, %ymm13, %ymm15
	vperm2i128	$0x20, %ymm9, %ymm14, %ymm13
	vperm2i128	$0x31, %ymm9, %ymm14, %ymm9
	vperm2i128	$0x20, %ymm12, %ymm8, %ymm14
	vperm2i128	$0x31, %ymm12, %ymm8, %ymm12
	vperm2i128	$0x20, %ymm10, %ymm7, %ymm8
	vperm2i128	$0x31, %ymm10, %ymm7, %ymm10
	vperm2i128	$0x20, %ymm15, %ymm11, %ymm7
	vperm2i128	$0x31, %ymm15, %ymm11, %ymm15
	vmovdqa		%ymm13, MS\chain+32*(\w0+0)(%rsp)
	vmovdqa		%ymm14, MS\chain+32*(\w0+1)(%rsp)
	vmovdqa		%ymm8, MS\chain+32*(\w0+2)(%rsp)
	vmovdqa		%ymm7, MS\chain+32*(\w0+3)(%rsp)
	vmovdqa		%ymm9, MS\chain+32*(\w0+4)(%rsp)
	vmovdqa		%ymm12, MS\chain+32*(\w0+5)(%rsp)
	vmovdqa		%ymm10, MS\chain+32*(\w0+6)(%rsp)
	vmovdqa		%ymm15, MS\chain+32*(\w0+7)(%rsp)
.endm

.macro	_message2	chain
	_load_rows2	\chain, 0, 0
	_transpose8	\chain, 0
	cmp		$1, NBLK
	je		.Llast_rows\@
	_load_rows2	\chain, 32, 0
	_transpose8	\chain, 8
	jmp		.Lhave_m\@
.Llast_rows\@:
	/* last block: bytes 32..47 of it only, then the sector words */
	_load_rows2	\chain, 32, 1
	_transpose8	\chain, 8
	vmovdqa		SW2+64*\chain(%rsp), %ymm0
	vmovdqa		%ymm0, MS\chain+32*12(%rsp)
	vmovdqa		SW2+64*\chain+32(%rsp), %ymm0
	vmovdqa		%ymm0, MS\chain+32*13(%rsp)
	vpbroadcastd	.Llen_word(%rip), %ymm0
	vmovdqa		%ymm0, MS\chain+32*14(%rsp)
	vpxor		%ymm0, %ymm0, %ymm0
	vmovdqa		%ymm0, MS\chain+32*15(%rsp)
.Lhave_m\@:
.endm

SYM_FUNC_START(aesloop_md5_iv_avx2)
	.set		MD5_ZMM, 0
	_md5_aliases	0
	_state_slots	32
	.set		SAVE, SAVE2
	.set		OFFS, OFFS2
	test		%r8d, %r8d
	jz		.Lnothing2
	push		%rbp
	mov		%rsp, %rbp
	sub		$MD5_FRAME2, %rsp
	and		$-32, %rsp
	mov		%r8d, %r8d

.Lround2:
	mov		$16, CNT
	cmp		CNT, LEFT
	cmovb		LEFT, CNT
	_lane_offsets	16
	/* S + l for each lane l, split into the two words of the format */
	xor		%eax, %eax
.Lsector_words2:
	lea		(SECTOR,%rax), BLK
	mov		%eax, %r10d
	and		$7, %r10d			/* lane in the chain */
	test		$8, %eax
	jz		.Lchain0_2
	add		$16, %r10d			/* + 64 bytes: chain 1 */
.Lchain0_2:
	mov		%r9d, SW2(%rsp,%r10,4)
	shr		$32, BLK
	and		$0x00ffffff, %r9d
	or		$0x80000000, %r9d
	mov		%r9d, SW2+32(%rsp,%r10,4)
	inc		%eax
	cmp		$16, %eax
	jb		.Lsector_words2

.irp r, A, B, C, D
	vpbroadcastd	SLOT_\r\()0/8(SEED), \r\()0
	vmovdqa		\r\()0, \r\()1
.endr
	lea		16(DATA), BLK
	mov		$8, NBLK

.Lblock2:
	_save_states
	_message2	0
	_message2	1
.irp r, A0, B0, C0, D0, A1, B1, C1, D1
	vmovdqa		SAVE+SLOT_\r(%rsp), \r
.endr
	_md5_block
	_add_states
	add		$64, BLK
	dec		NBLK
	jnz		.Lblock2

	.set		OUT, SAVE
	_save_states
	_store_ivs	32
	mov		CNT, %rax
	shl		$9, %rax
	add		%rax, DATA
	add		CNT, SECTOR
	sub		CNT, LEFT
	jnz		.Lround2

	mov		%rbp, %rsp
	pop		%rbp
.Lnothing2:
	vzeroupper
	RET
SYM_FUNC_END(aesloop_md5_iv_avx2)
