/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aesni.S - AES-CBC over whole 512-byte sectors with AES-NI and VAES, for
 * the loop-AES format (doc/format.md, sections 1 and 2).
 *
 * One macro body per direction, instantiated per ISA level:
 *
 *   variant      coding  encryption (chains)          decryption
 *   aesni        SSE     8 xmm: 8 sectors             8 blocks at a time
 *   vaes_avx2    VEX     8 ymm x 2 lanes: 16 sectors  16 blocks at a time
 *   vaes_avx512  EVEX    per-sector keys: 4 zmm x 4   the whole sector at once
 *                        lanes, 16 sectors; one key:  (8 zmm x 4 blocks), round
 *                        8 zmm x 4 lanes, 32 sectors, keys kept in registers
 *                        round keys in registers      while the key repeats
 *   avx (local)  VEX     4 xmm: the VAES variants' path for calls of fewer
 *                        sectors than one register has lanes
 *
 * Why: CBC encryption of a sector is a chain of 32 dependent AES
 * encryptions, so one sector alone is bound by the latency of aesenc (about
 * 2.5 cycles/byte).  Independent sectors go into independent chains, one
 * 128-bit lane each, several lanes per ymm/zmm register and several
 * registers, until the AES units are busy every cycle (two aesenc per cycle
 * at a latency of four: eight registers in flight).  Each lane can have its
 * own key, so multi-key volumes, where consecutive sectors have different
 * keys, interleave too.  Decryption has no chain: the blocks of a sector are
 * decrypted in parallel.  The aesni variant is SSE-coded so that it runs on
 * every AES-NI CPU, AVX or not; the others use no SSE coding at all.
 *
 * The enc1g entry points are enc1 reading sector i from its own address,
 * srcs[i] (a request's pages are scattered), into a contiguous dst: the
 * driver encrypts straight into its bounce area, with no copy first.
 *
 * Contract of every entry point (prototypes in aes-intel.h): all keys of a
 * call have the same length; dst equals src or does not overlap it (enc1g:
 * overlaps no source sector); no alignment is needed; nsect may be 0.  In
 * the kernel the caller holds kernel_fpu_begin().  Round keys copied to the
 * stack are wiped before return.
 */
#include "../aes/asm-offsets.h"
#include "linkage.S"

	.text

/* ------------------------------------------------------------------------
 * Register aliases, redefined per variant by _set_isa.  V<n> is vector
 * register n at the variant's width, X<n> its xmm view.
 */
.macro	_valias		name, n
.if VL == 16
	.set		\name, %xmm\n
.elseif VL == 32
	.set		\name, %ymm\n
.else
	.set		\name, %zmm\n
.endif
.endm

.macro	_set_isa	sse, vl
	.set		SSE, \sse
	.set		VL, \vl
.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	_valias		V\i, \i
	.set		X\i, %xmm\i
.endr
.endm

/* dst ^= src, in the variant's coding */
.macro	_xor		src, dst
.if SSE
	pxor		\src, \dst
.elseif VL == 64
	vpxord		\src, \dst, \dst
.else
	vpxor		\src, \dst, \dst
.endif
.endm

/* One AES round (op: aesenc, aesenclast, aesdec, aesdeclast) on dst */
.macro	_aes		op, k, dst
.if SSE
	\op		\k, \dst
.else
	v\op		\k, \dst, \dst
.endif
.endm

/* 16-byte moves of xmm0..xmm15 */
.macro	_movu16		src, dst
.if SSE
	movdqu		\src, \dst
.else
	vmovdqu		\src, \dst
.endif
.endm

.macro	_mova16		src, dst
.if SSE
	movdqa		\src, \dst
.else
	vmovdqa		\src, \dst
.endif
.endm

/*
 * _lanes_load v, x, disp, base: vector v (xmm view x) gets one
 * 16-byte block per lane, lane l from disp + l * 512 (base).  That is
 * block b of sectors s, s + 1, ... when the address is block b of sector s.
 */
.macro	_lanes_load	v, x, disp, base
	_movu16		\disp(\base), \x
.if VL == 32
	vinserti128	$1, \disp+SECTOR_SIZE(\base), \v, \v
.elseif VL == 64
	vinserti32x4	$1, \disp+SECTOR_SIZE(\base), \v, \v
	vinserti32x4	$2, \disp+2*SECTOR_SIZE(\base), \v, \v
	vinserti32x4	$3, \disp+3*SECTOR_SIZE(\base), \v, \v
.endif
.endm

/* _lanes_store v, x, disp, base, index: the inverse of _lanes_load */
.macro	_lanes_store	v, x, disp, base, index
.if SSE
	movdqu		\x, \disp(\base,\index)
.else
	vmovdqu		\x, \disp(\base,\index)
.endif
.if VL == 32
	vextracti128	$1, \v, \disp+SECTOR_SIZE(\base,\index)
.elseif VL == 64
	vextracti32x4	$1, \v, \disp+SECTOR_SIZE(\base,\index)
	vextracti32x4	$2, \v, \disp+2*SECTOR_SIZE(\base,\index)
	vextracti32x4	$3, \v, \disp+3*SECTOR_SIZE(\base,\index)
.endif
.endm

/*
 * Round keys are addressed by position p = 0..14 rather than by round: round
 * r of a key of R rounds is at position r + 14 - R.  The last round key is
 * then always at position 14, and the rounds are one unrolled sequence
 * entered at position 0 (AES-256), 2 (AES-192) or 4 (AES-128), see
 * _rounds_by_length.
 *
 * _rounds_by_length rounds, first, round, last: expands to
 *	first p0; round p1..p4 for AES-256,
 *	first p2; round p3, p4 for AES-192,
 *	first p4 for AES-128,
 * then round p5..p13 and last p14, where first, round and last are the
 * names of macros taking the position, and rounds the register holding the
 * round count.
 */
.macro	_rounds_by_length	rounds, first, round, last
	cmp		$12, \rounds
	jb		.Laes128\@
	je		.Laes192\@
	\first		0
	\round		1
	\round		2
	jmp		.Lp3\@
.Laes192\@:
	\first		2
.Lp3\@:
	\round		3
	\round		4
	jmp		.Lp5\@
.Laes128\@:
	\first		4
.Lp5\@:
.irp p, 5,6,7,8,9,10,11,12,13
	\round		\p
.endr
	\last		14
.endm

/* ------------------------------------------------------------------------
 * CBC encryption: several sectors, one chain per lane.
 *
 * A group is up to G = NREG * LANES sectors.  Register j takes the sectors
 * base_j .. base_j + LANES - 1 of the group, base_j = min(j * LANES,
 * cnt - LANES).  In a group of cnt < G sectors the last registers so repeat
 * sectors of the ones before.  A repeated sector has the same key, IV and
 * plaintext in both lanes; each of its blocks is loaded by both before
 * either stores, and both store the same ciphertext: correct in place too,
 * and free in time, the spare chains run alongside.  Group sizes keep
 * cnt >= LANES: G while 2G or more sectors are left, all of them when G or
 * fewer, else half.  Calls of fewer than LANES sectors go to the avx variant.
 *
 * Stack frame, rsp aligned to 64:
 *   0             key table: row j (KROW bytes) for register j, position p
 *                 at p * VL, lane l at l * 16 in it.  A single row when
 *                 all sectors share one key (KROW = 0); none when the
 *                 round keys are in registers (KREG).
 *   KT_BYTES      the call's cursors and the group's bases, the SLOT_* below;
 *                 gather: then the lane table, source - destination of each
 *                 lane of the group, row j for register j
 */

/* General registers */
#define DELTA		%rdx		/* dst - src, the whole call (enc1g: 0) */
#define ROUNDS		%r9d		/* 10, 12 or 14, the whole call */
#define ROUNDSQ		%r9
#define BLKS		%r10d		/* block loop: blocks still to do */
#define CNT		%r14		/* setup: sectors in the group */
#define BASE		%r15		/* setup: base_j of register j */
#define LAST		%r10		/* setup: cnt - LANES, the largest base */
#define PTR		%rax		/* setup: a key or IV pointer */
#define DPTR		%r11		/* setup: where a copy goes */
#define CTR		%ecx		/* setup: copy counter */
#define TMP		%r8		/* enc1g: a lane's source - its destination */
/*
 * P<j> (block loop): block b of register j's first sector in the source
 * (gather: in the destination)
 */
	.set		P0, %rax
	.set		P1, %rbx
	.set		P2, %rcx
	.set		P3, %rsi
	.set		P4, %rdi
	.set		P5, %r11
	.set		P6, %r12
	.set		P7, %r13

/*
 * _lanes_gather v, x, j: as _lanes_load for register j, but lane l from
 * its own source, SLOT_TBL row j lane l bytes away from where lane l
 * stores (enc1g); TMP is free in the block loop.
 */
.macro	_lanes_gather	v, x, j
	mov		SLOT_TBL + 8 * \j * LANES(%rsp), TMP
.if SSE
	movdqu		(P\j,TMP), \x
.else
	vmovdqu		(P\j,TMP), \x
.endif
.if VL == 32
	mov		SLOT_TBL + 8 * (\j * LANES + 1)(%rsp), TMP
	vinserti128	$1, SECTOR_SIZE(P\j,TMP), \v, \v
.elseif VL == 64
.irp l, 1,2,3
	mov		SLOT_TBL + 8 * (\j * LANES + \l)(%rsp), TMP
	vinserti32x4	$\l, \l * SECTOR_SIZE(P\j,TMP), \v, \v
.endr
.endif
.endm

/*
 * Vector registers: S<j> = V<j> is register j's chain (IV, then ciphertext
 * block), T<j> = V<8+j> its plaintext block; with KREG the round key at
 * position p is K<p> = V<16+p>.  V15 (xmm15) is the setup's copy temporary;
 * the setup ends before any plaintext is loaded.
 */
.macro	_enc_aliases
.irp j, 0,1,2,3,4,5,6,7
	_valias		S\j, \j
	.set		SX\j, %xmm\j
.endr
	_valias		T0, 8
	_valias		T1, 9
	_valias		T2, 10
	_valias		T3, 11
	_valias		T4, 12
	_valias		T5, 13
	_valias		T6, 14
	_valias		T7, 15
	.set		TX0, %xmm8
	.set		TX1, %xmm9
	.set		TX2, %xmm10
	.set		TX3, %xmm11
	.set		TX4, %xmm12
	.set		TX5, %xmm13
	.set		TX6, %xmm14
	.set		TX7, %xmm15
	_valias		K0, 16
	_valias		K1, 17
	_valias		K2, 18
	_valias		K3, 19
	_valias		K4, 20
	_valias		K5, 21
	_valias		K6, 22
	_valias		K7, 23
	_valias		K8, 24
	_valias		K9, 25
	_valias		K10, 26
	_valias		K11, 27
	_valias		K12, 28
	_valias		K13, 29
	_valias		K14, 30
.endm

/* Copy the R + 1 round keys at PTR to the key table at DPTR, VL apart. */
.macro	_copy_round_keys
	lea		1(ROUNDSQ), CTR
.Lcopy\@:
	_movu16		(PTR), %xmm15
	_mova16		%xmm15, (DPTR)
	add		$16, PTR
	add		$VL, DPTR
	dec		CTR
	jnz		.Lcopy\@
.endm

/* One round at position p for every chain (registers 0 .. NRUN - 1) */
.macro	_enc_round	p
.irp j, 0,1,2,3,4,5,6,7
.if \j < NRUN
.if KREG
	_aes		aesenc, K\p, S\j
.else
	_aes		aesenc, (\j*KROW+\p*VL)(%rsp), S\j
.endif
.endif
.endr
.endm

.macro	_enc_last	p
.irp j, 0,1,2,3,4,5,6,7
.if \j < NRUN
.if KREG
	_aes		aesenclast, K\p, S\j
.else
	_aes		aesenclast, (\j*KROW+\p*VL)(%rsp), S\j
.endif
.endif
.endr
.endm

/* Every chain: state ^= plaintext ^ the round key at position p */
.macro	_enc_first	p
.irp j, 0,1,2,3,4,5,6,7
.if \j < NRUN
.if VL == 64
.if KREG
	vpternlogd	$0x96, K\p, T\j, S\j
.else
	vpternlogd	$0x96, (\j * KROW + \p * VL)(%rsp), T\j, S\j
.endif
.else
	_xor		T\j, S\j
	_xor		(\j*KROW+\p*VL)(%rsp), S\j
.endif
.endif
.endr
.endm

.macro	_enc_block_loop	nrun
	.set		NRUN, \nrun
	mov		$SECTOR_BLOCKS, BLKS
.Lblock\@:
	/* Load every lane's plaintext block before anything is stored. */
.irp j, 0,1,2,3,4,5,6,7
.if \j < NRUN
.if GATHER
	_lanes_gather	T\j, TX\j, \j
.else
	_lanes_load	T\j, TX\j, 0, P\j
.endif
.endif
.endr
	_rounds_by_length	ROUNDS, _enc_first, _enc_round, _enc_last
.irp j, 0,1,2,3,4,5,6,7
.if \j < NRUN
	_lanes_store	S\j, SX\j, 0, P\j, DELTA
.endif
.endr
.irp j, 0,1,2,3,4,5,6,7
.if \j < NRUN
	add		$16, P\j
.endif
.endr
	dec		BLKS
	jnz		.Lblock\@
.endm

/*
 * _cbc_enc name, sse, vl, nreg, onekey, kreg, tiny, gather: one encryption
 * entry point.  onekey: the first argument is one key for every sector
 * (else an array of key pointers); kreg: round keys in V16..V30 (zmm,
 * onekey only); tiny: the function that takes calls of fewer sectors than
 * lanes; gather: the fourth argument is an array of source pointers, one
 * per sector (onekey only).
 */
.macro	_cbc_enc	name, sse, vl, nreg, onekey, kreg, tiny, gather=0
.if \gather && !\onekey
	.error		"gather needs onekey"
.endif
	_set_isa	\sse, \vl
	_enc_aliases
	.set		NREG, \nreg
	.set		LANES, \vl / 16
	.set		G, \nreg * (\vl / 16)
	.set		KREG, \kreg
	.set		GATHER, \gather
.if \onekey
	.set		KROW, 0
.else
	.set		KROW, 15 * \vl
.endif
.if \kreg
	.set		KT_BYTES, 0
.elseif \onekey
	.set		KT_BYTES, 15 * \vl
.else
	.set		KT_BYTES, \nreg * 15 * \vl
.endif
	.set		SLOT_KEYS, KT_BYTES		/* keys array cursor, or the key */
	.set		SLOT_IVS, KT_BYTES + 8		/* IV cursor */
	.set		SLOT_SRC, KT_BYTES + 16		/* source (gather: dst) cursor */
	.set		SLOT_LEFT, KT_BYTES + 24	/* sectors left */
	.set		SLOT_CNT, KT_BYTES + 32		/* sectors in this group */
	.set		SLOT_KSKIP, KT_BYTES + 40	/* (14 - R) * VL */
	.set		SLOT_BASE, KT_BYTES + 48	/* base_j * 8 bytes */
	.set		SLOT_SRCV, KT_BYTES + 112	/* gather: srcs cursor */
	.set		SLOT_TBL, KT_BYTES + 128	/* gather: G lane deltas */
.if \gather
	.set		FRAME, KT_BYTES + 128 + 8 * G
.else
	.set		FRAME, KT_BYTES + 128
.endif

SYM_FUNC_START(\name)
	test		%r8d, %r8d
	jz		.Lnothing\@
.if LANES > 1
	cmp		$LANES, %r8d
	jae		.Lenough\@
	jmp		\tiny
.Lenough\@:
.endif
	push		%rbx
	push		%r12
	push		%r13
	push		%r14
	push		%r15
	push		%rbp
	mov		%rsp, %rbp
	sub		$FRAME, %rsp
	and		$-64, %rsp

	mov		%rdi, SLOT_KEYS(%rsp)
	mov		%rsi, SLOT_IVS(%rsp)
	mov		%r8d, %r8d
	mov		%r8, SLOT_LEFT(%rsp)
.if \gather
	mov		%rcx, SLOT_SRCV(%rsp)
	mov		%rdx, SLOT_SRC(%rsp)
	xor		DELTA, DELTA
.else
	mov		%rcx, SLOT_SRC(%rsp)
	sub		%rcx, DELTA
.endif
.if \onekey
	mov		%rdi, PTR
.else
	mov		(%rdi), PTR
.endif
	mov		AES_KEY_ROUNDS(PTR), ROUNDS
	mov		$14, %r11d
	sub		ROUNDS, %r11d
	imul		$VL, %r11d, %r11d
	mov		%r11, SLOT_KSKIP(%rsp)

.if \kreg
	/* Round keys into K<p>; positions below 14 - R do not exist. */
	lea		AES_KEY_ENC-224(PTR,ROUNDSQ,8), PTR
	lea		(PTR,ROUNDSQ,8), PTR		/* PTR + 16 p is position p */
	cmp		$12, ROUNDS
	jb		.Lk4\@
	je		.Lk2\@
	vbroadcasti32x4	0*16(PTR), K0
	vbroadcasti32x4	1*16(PTR), K1
.Lk2\@:
	vbroadcasti32x4	2*16(PTR), K2
	vbroadcasti32x4	3*16(PTR), K3
.Lk4\@:
	vbroadcasti32x4	4*16(PTR), K4
	vbroadcasti32x4	5*16(PTR), K5
	vbroadcasti32x4	6*16(PTR), K6
	vbroadcasti32x4	7*16(PTR), K7
	vbroadcasti32x4	8*16(PTR), K8
	vbroadcasti32x4	9*16(PTR), K9
	vbroadcasti32x4	10*16(PTR), K10
	vbroadcasti32x4	11*16(PTR), K11
	vbroadcasti32x4	12*16(PTR), K12
	vbroadcasti32x4	13*16(PTR), K13
	vbroadcasti32x4	14*16(PTR), K14
.elseif \onekey
	/* The one row of the key table: the key in every lane. */
.irp l, 0,1,2,3
.if \l < LANES
	mov		SLOT_KEYS(%rsp), PTR
	add		$AES_KEY_ENC, PTR
	mov		SLOT_KSKIP(%rsp), DPTR
	lea		\l * 16(%rsp,DPTR), DPTR
	_copy_round_keys
.endif
.endr
.endif

.Lgroup\@:
	/* cnt = G, all that is left, or half of it (see above) */
	mov		SLOT_LEFT(%rsp), %rax
	test		%rax, %rax
	jz		.Ldone\@
	mov		$G, CNT
	cmp		$2 * G, %rax
	jae		.Lcnt\@
	mov		%rax, CNT
	cmp		$G, %rax
	jbe		.Lcnt\@
	shr		$1, CNT
.Lcnt\@:
	mov		CNT, SLOT_CNT(%rsp)
	lea		-LANES(CNT), LAST

.irp j, 0,1,2,3,4,5,6,7
.if \j < NREG
	mov		$\j * LANES, BASE
	cmp		LAST, BASE
	cmova		LAST, BASE
	mov		BASE, SLOT_BASE + 8 * \j(%rsp)
.if !\onekey
	/* Key table row j: lane l from the key of sector base_j + l. */
.irp l, 0,1,2,3
.if \l < LANES
	mov		SLOT_KEYS(%rsp), PTR
	mov		8 * \l(PTR,BASE,8), PTR
	add		$AES_KEY_ENC, PTR
	mov		SLOT_KSKIP(%rsp), DPTR
	lea		\j * KROW + \l * 16(%rsp,DPTR), DPTR
	_copy_round_keys
.endif
.endr
.endif
	/* The chain starts at the IVs of those sectors. */
	mov		BASE, DPTR
	shl		$4, DPTR
	add		SLOT_IVS(%rsp), DPTR
.if VL == 16
	_movu16		(DPTR), SX\j
.elseif VL == 32
	vmovdqu		(DPTR), SX\j
	vinserti128	$1, 16(DPTR), S\j, S\j
.else
	vmovdqu		(DPTR), SX\j
	vinserti32x4	$1, 16(DPTR), S\j, S\j
	vinserti32x4	$2, 32(DPTR), S\j, S\j
	vinserti32x4	$3, 48(DPTR), S\j, S\j
.endif
.endif
.endr
.if \gather
	/*
	 * Lane l of register j reads sector s = base_j + l from srcs[s] and
	 * stores it at dst + 512 s: the table keeps the difference.
	 */
.irp j, 0,1,2,3,4,5,6,7
.if \j < NREG
	mov		SLOT_BASE + 8 * \j(%rsp), BASE
	mov		BASE, CNT
	shl		$9, CNT
	add		SLOT_SRC(%rsp), CNT
.irp l, 0,1,2,3
.if \l < LANES
	mov		SLOT_SRCV(%rsp), TMP
	mov		8 * \l(TMP,BASE,8), TMP
	sub		CNT, TMP
	sub		$\l * SECTOR_SIZE, TMP
	mov		TMP, SLOT_TBL + 8 * (\j * LANES + \l)(%rsp)
.endif
.endr
.endif
.endr
.endif
	mov		SLOT_SRC(%rsp), CNT
.irp j, 0,1,2,3,4,5,6,7
.if \j < NREG
	mov		SLOT_BASE + 8 * \j(%rsp), P\j
	shl		$9, P\j
	add		CNT, P\j
.endif
.endr

	/*
	 * Only as many registers as the group needs: fewer chains cost
	 * nothing in latency, and spare ones would take AES-unit cycles.
	 */
.if NREG >= 4
	cmpq		$G / 4, SLOT_CNT(%rsp)
	jbe		.Lquarter\@
.endif
	cmpq		$G / 2, SLOT_CNT(%rsp)
	jbe		.Lhalf\@
	_enc_block_loop	NREG
	jmp		.Lnext\@
.Lhalf\@:
	_enc_block_loop	NREG / 2
.if NREG >= 4
	jmp		.Lnext\@
.Lquarter\@:
	_enc_block_loop	NREG / 4
.endif
.Lnext\@:
	/* Next group: advance the cursors by cnt sectors. */
	mov		SLOT_CNT(%rsp), %rax
	sub		%rax, SLOT_LEFT(%rsp)
	mov		%rax, %rcx
	shl		$9, %rcx
	add		%rcx, SLOT_SRC(%rsp)
	mov		%rax, %rcx
	shl		$4, %rcx
	add		%rcx, SLOT_IVS(%rsp)
.if !\onekey || \gather
	shl		$3, %rax
.endif
.if !\onekey
	add		%rax, SLOT_KEYS(%rsp)
.endif
.if \gather
	add		%rax, SLOT_SRCV(%rsp)
.endif
	jmp		.Lgroup\@

.Ldone\@:
.if KT_BYTES
	/* Wipe the round keys off the stack. */
.if SSE
	pxor		%xmm15, %xmm15
.else
	vpxor		%xmm15, %xmm15, %xmm15
.endif
	xor		%eax, %eax
.Lwipe\@:
.if SSE
	movdqa		%xmm15, (%rsp,%rax)
.else
	vmovdqa		%xmm15, (%rsp,%rax)
.endif
	add		$16, %rax
	cmp		$KT_BYTES, %rax
	jb		.Lwipe\@
.endif
	mov		%rbp, %rsp
	pop		%rbp
	pop		%r15
	pop		%r14
	pop		%r13
	pop		%r12
	pop		%rbx
.Lnothing\@:
.if !SSE
	vzeroupper
.endif
	RET
SYM_FUNC_END(\name)
.endm

#undef DELTA
#undef ROUNDS
#undef ROUNDSQ
#undef BLKS
#undef CNT
#undef BASE
#undef LAST
#undef PTR
#undef DPTR
#undef CTR
#undef TMP

/* ------------------------------------------------------------------------
 * CBC decryption, one sector after the other, its blocks in parallel.
 *
 * P_i = D(C_i) ^ C_(i-1) with C_(-1) the IV: the last round key and the
 * previous ciphertext block are XORed first and go into aesdeclast
 * together.  In place, every ciphertext block that a part of the sector
 * still needs is loaded before that part stores; the parts of a sector are
 * done last first, so no part reads what another one wrote.
 */

/* General registers */
#define KEYS		%rdi		/* cursor in the key pointer array */
#define IVS		%rsi		/* cursor in the IVs, or NULL: zero IVs */
#define DST		%rdx
#define SRC		%rcx
#define LEFT		%r8d		/* sectors left */
#define KEY		%r9		/* this sector's key */
#define KD		%r10		/* KD + 16 p: decryption round key at position p */
#define ROUNDS		%r11d		/* 10, 12 or 14, the whole call */
#define ROUNDSQ		%r11
#define LASTKEY		%rax		/* zmm: the key now in K0..K14 */

/* Point KD at position 0 of KEY's decryption round keys. */
.macro	_dec_key_positions
	mov		ROUNDS, %r10d
	shl		$4, KD
	lea		AES_KEY_DEC - 224(KEY,KD), KD
.endm

/*
 * xmm and ymm: V0..V7 hold the part's blocks (one or two per register),
 * KT the round key of the current position, KL the last one, PV the
 * previous-ciphertext vector being combined with KL, IVX the sector's IV.
 */
.macro	_dec_aliases_part
.irp j, 0,1,2,3,4,5,6,7
	_valias		S\j, \j
.endr
	_valias		KT, 8
	_valias		PV, 9
	_valias		KL, 10
	.set		IVX, %xmm11
	.set		IVY, %ymm11
.endm

/* KT (or KL) = the round key at position p, in every 128-bit lane */
.macro	_dec_bcast	p, dst
.if VL == 16
	_movu16		\p*16(KD), \dst
.else
	vbroadcasti128	\p * 16(KD), \dst
.endif
.endm

.macro	_dec_part_first	p
	_dec_bcast	\p, KT
.irp j, 0,1,2,3,4,5,6,7
.if SSE
	movdqu		PART+\j*VL(SRC), S\j
	pxor		KT, S\j
.else
	vpxor		PART + \j * VL(SRC), KT, S\j
.endif
.endr
.endm

.macro	_dec_part_round	p
	_dec_bcast	\p, KT
.irp j, 0,1,2,3,4,5,6,7
	_aes		aesdec, KT, S\j
.endr
.endm

.macro	_dec_part_last	p
	_dec_bcast	\p, KL
.irp j, 0,1,2,3,4,5,6,7
.if PART + \j * VL == 0
	/* the previous block of block 0 is the IV */
.if VL == 16
	_mova16		IVX, PV
.else
	vinserti128	$1, (SRC), IVY, PV
.endif
.else
	/* blocks b - 1 .. of the register's blocks b .. */
	_movu16		PART+\j*VL-16(SRC), PV
.endif
	_xor		KL, PV
	_aes		aesdeclast, PV, S\j
.endr
.irp j, 0,1,2,3,4,5,6,7
	_movu16		S\j, PART+\j*VL(DST)
.endr
.endm

.macro	_cbc_dec_part	name, sse, vl
	_set_isa	\sse, \vl
	_dec_aliases_part
SYM_FUNC_START(\name)
	test		LEFT, LEFT
	jz		.Lnothing\@
	mov		(KEYS), KEY
	mov		AES_KEY_ROUNDS(KEY), ROUNDS
.Lsector\@:
	mov		(KEYS), KEY
	_dec_key_positions
	test		IVS, IVS
	jz		.Lzero_iv\@
	_movu16		(IVS), IVX
	add		$16, IVS
	jmp		.Lhave_iv\@
.Lzero_iv\@:
	_xor		IVX, IVX
.Lhave_iv\@:
	/* parts of 8 * VL bytes, the last first */
.if VL == 16
	.set		PART, 384
	_rounds_by_length	ROUNDS, _dec_part_first, _dec_part_round, _dec_part_last
	.set		PART, 256
	_rounds_by_length	ROUNDS, _dec_part_first, _dec_part_round, _dec_part_last
	.set		PART, 128
	_rounds_by_length	ROUNDS, _dec_part_first, _dec_part_round, _dec_part_last
	.set		PART, 0
	_rounds_by_length	ROUNDS, _dec_part_first, _dec_part_round, _dec_part_last
.else
	.set		PART, 256
	_rounds_by_length	ROUNDS, _dec_part_first, _dec_part_round, _dec_part_last
	.set		PART, 0
	_rounds_by_length	ROUNDS, _dec_part_first, _dec_part_round, _dec_part_last
.endif
	add		$SECTOR_SIZE, SRC
	add		$SECTOR_SIZE, DST
	add		$8, KEYS
	dec		LEFT
	jnz		.Lsector\@
.Lnothing\@:
.if !SSE
	vzeroupper
.endif
	RET
SYM_FUNC_END(\name)
.endm

/*
 * zmm: the whole sector at once.  S<j> = V<j> holds blocks 4j..4j+3, PV<j>
 * = V<8+j> blocks 4j-1..4j+2 XORed with the last round key, K<p> = V<16+p>
 * the round keys, loaded only when the key changes, IVV the IV in all lanes.
 */
.macro	_dec_aliases_zmm
.irp j, 0,1,2,3,4,5,6,7
	_valias		S\j, \j
.endr
	_valias		PV0, 8
	_valias		PV1, 9
	_valias		PV2, 10
	_valias		PV3, 11
	_valias		PV4, 12
	_valias		PV5, 13
	_valias		PV6, 14
	_valias		PV7, 15
	_valias		K0, 16
	_valias		K1, 17
	_valias		K2, 18
	_valias		K3, 19
	_valias		K4, 20
	_valias		K5, 21
	_valias		K6, 22
	_valias		K7, 23
	_valias		K8, 24
	_valias		K9, 25
	_valias		K10, 26
	_valias		K11, 27
	_valias		K12, 28
	_valias		K13, 29
	_valias		K14, 30
	_valias		IVV, 31
.endm

.macro	_dec_zmm_first	p
.irp j, 0,1,2,3,4,5,6,7
	vpxord		\j * 64(SRC), K\p, S\j
.endr
.endm

.macro	_dec_zmm_round	p
.irp j, 0,1,2,3,4,5,6,7
	vaesdec		K\p, S\j, S\j
.endr
.endm

.macro	_dec_zmm_last	p
.irp j, 0,1,2,3,4,5,6,7
	vaesdeclast	PV\j, S\j, S\j
.endr
.endm

.macro	_cbc_dec_zmm	name
	_set_isa	0, 64
	_dec_aliases_zmm
SYM_FUNC_START(\name)
	test		LEFT, LEFT
	jz		.Lnothing\@
	mov		(KEYS), KEY
	mov		AES_KEY_ROUNDS(KEY), ROUNDS
	xor		LASTKEY, LASTKEY
.Lsector\@:
	mov		(KEYS), KEY
	cmp		KEY, LASTKEY
	je		.Lhave_keys\@
	mov		KEY, LASTKEY
	_dec_key_positions
.irp p, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14
	/* positions below 14 - R read other bytes of the key: unused */
	vbroadcasti32x4	\p * 16(KD), K\p
.endr
.Lhave_keys\@:
	test		IVS, IVS
	jz		.Lzero_iv\@
	vbroadcasti32x4	(IVS), IVV
	add		$16, IVS
	jmp		.Lhave_iv\@
.Lzero_iv\@:
	vpxord		IVV, IVV, IVV
.Lhave_iv\@:
	/* PV0 = IV, C0, C1, C2: the top lane of IVV below the lanes of C */
	vmovdqu64	(SRC), PV0
	valignq		$6, IVV, PV0, PV0
.irp j, 1,2,3,4,5,6,7
	vmovdqu64	\j * 64 - 16(SRC), PV\j
.endr
.irp j, 0,1,2,3,4,5,6,7
	vpxord		K14, PV\j, PV\j
.endr
	_rounds_by_length	ROUNDS, _dec_zmm_first, _dec_zmm_round, _dec_zmm_last
.irp j, 0,1,2,3,4,5,6,7
	vmovdqu64	S\j, \j * 64(DST)
.endr
	add		$SECTOR_SIZE, SRC
	add		$SECTOR_SIZE, DST
	add		$8, KEYS
	dec		LEFT
	jnz		.Lsector\@
.Lnothing\@:
	vzeroupper
	RET
SYM_FUNC_END(\name)
.endm

/* ------------------------------------------------------------------------
 * The entry points.
 */

/* AES-NI, SSE coding: every AES-NI CPU */
_cbc_enc	aesloop_cbc_enc_aesni, 1, 16, 8, 0, 0, none
_cbc_enc	aesloop_cbc_enc1_aesni, 1, 16, 8, 1, 0, none
_cbc_enc	aesloop_cbc_enc1g_aesni, 1, 16, 8, 1, 0, none, 1
_cbc_dec_part	aesloop_cbc_dec_aesni, 1, 16

/* xmm, VEX coding: the VAES variants' calls of fewer sectors than lanes */
_cbc_enc	aesloop_cbc_enc_avx, 0, 16, 4, 0, 0, none
_cbc_enc	aesloop_cbc_enc1_avx, 0, 16, 4, 1, 0, none
_cbc_enc	aesloop_cbc_enc1g_avx, 0, 16, 4, 1, 0, none, 1

/* VAES with AVX2 */
_cbc_enc	aesloop_cbc_enc_vaes_avx2, 0, 32, 8, 0, 0, aesloop_cbc_enc_avx
_cbc_enc	aesloop_cbc_enc1_vaes_avx2, 0, 32, 8, 1, 0, aesloop_cbc_enc1_avx
_cbc_enc	aesloop_cbc_enc1g_vaes_avx2, 0, 32, 8, 1, 0, aesloop_cbc_enc1g_avx, 1
_cbc_dec_part	aesloop_cbc_dec_vaes_avx2, 0, 32

/* VAES with AVX-512 */
_cbc_enc	aesloop_cbc_enc_vaes_avx512, 0, 64, 4, 0, 0, aesloop_cbc_enc_avx
_cbc_enc	aesloop_cbc_enc1_vaes_avx512, 0, 64, 8, 1, 1, aesloop_cbc_enc1_avx
_cbc_enc	aesloop_cbc_enc1g_vaes_avx512, 0, 64, 8, 1, 1, aesloop_cbc_enc1g_avx, 1
_cbc_dec_zmm	aesloop_cbc_dec_vaes_avx512
