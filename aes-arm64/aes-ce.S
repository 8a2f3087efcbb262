/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aes-ce.S - AES-CBC over whole 512-byte sectors with the ARMv8 Crypto
 * Extensions (AESE/AESMC/AESD/AESIMC), for the loop-AES format
 * (doc/format.md, sections 1 and 2).
 *
 *   entry point          sectors                  round keys
 *   aesloop_cbc_enc_ce   8 side by side, a key    loaded from each lane's
 *                        per sector               struct aes_key every round
 *   aesloop_cbc_enc1_ce  8 side by side, one key  v16-v30, once per call
 *   aesloop_cbc_enc1g_ce as enc1, sector i read   v16-v30, once per call
 *                        from srcs[i]
 *   aesloop_cbc_dec_ce   one after the other, 8   v16-v30, reloaded when the
 *                        blocks at a time         key pointer changes
 *
 * Why: CBC encryption of a sector is a chain of 32 dependent AES
 * encryptions, bound by the AESE+AESMC latency; 8 independent sectors, one
 * per register, keep the AES pipes busy.  Decryption has no chain.
 *
 * Per 16-byte block of the encryption loop (8 lanes, AES-128, R = 10):
 * one load, one store, one EOR of the plaintext, R AESE, R - 1 AESMC, one
 * EOR of the last round key: 2R + 3 = 23 instructions, 1/8 of the loop's
 * counter and branch; with per-sector keys R + 1 = 11 more loads (the round
 * keys of the lane).  x86's aesni loop: one load, R + 1 = 11 AES ops (the
 * first round's key XOR separate, plus the plaintext XOR), one store: 14.
 * The count is higher here because AESMC is its own instruction, but
 * adjacent AESE+AESMC pairs fuse on Cortex-A76/Neoverse-N1 (latency 2,
 * two per cycle on the two vector pipes, per Arm's optimization guide):
 * R fused pairs per block for 8 lanes is about R / 2 cycles per block when
 * the pipes are full, near 0.35 cycles/byte for AES-128, and a lone chain
 * about 2R cycles per block (1.25 cycles/byte).  Estimates only: there is
 * no arm64 hardware here, and QEMU's timings mean nothing.
 *
 * Register use (encryption): v0-v7 the chains of lanes 0-7 (IV, then
 * ciphertext), v8-v15 their plaintext blocks, v16-v30 the round keys by
 * position (enc1, enc1g), or v16-v31 two banks of the lanes' round keys
 * (enc); x8-x15 each lane's source, x19-x26 each lane's key (enc) or
 * destination (enc1g).  Decryption: v0-v7 eight blocks, v8-v15 their
 * ciphertext, v16-v30 the round keys, v31 the ciphertext before them.
 *
 * Contract (prototypes in aes-arm64.h): all keys of a call have the same
 * length; dst equals src or does not overlap it (enc1g: overlaps no source
 * sector); no alignment is needed; nsect may be 0.  In the kernel the
 * caller holds kernel_neon_begin().  Nothing is spilled to the stack but
 * the caller's callee-saved registers; the round keys are cleared from the
 * vector registers before return.  No branch and no address depends on key
 * or data (only on the key length, the sector count and key pointers).
 */
#include "../aes/asm-offsets.h"
#include "linkage.S"

/* Round keys and data are loaded as a little-endian CPU lays out bytes. */
#ifdef __AARCH64EB__
#error "aes-ce.S is for little-endian arm64 only"
#endif

	.arch		armv8-a+crypto
	.text

/* Lane registers */
lsrc0	.req	x8	/* lane's source, block b (enc, enc1: also dst - DELTA) */
lsrc1	.req	x9
lsrc2	.req	x10
lsrc3	.req	x11
lsrc4	.req	x12
lsrc5	.req	x13
lsrc6	.req	x14
lsrc7	.req	x15
lkey0	.req	x19	/* enc: the lane's key + 16 R - 224 (by position) */
lkey1	.req	x20
lkey2	.req	x21
lkey3	.req	x22
lkey4	.req	x23
lkey5	.req	x24
lkey6	.req	x25
lkey7	.req	x26
ldst0	.req	x19	/* enc1g: the lane's destination, block b */
ldst1	.req	x20
ldst2	.req	x21
ldst3	.req	x22
ldst4	.req	x23
ldst5	.req	x24
ldst6	.req	x25
ldst7	.req	x26

pt0	.req	v8	/* the lane's plaintext block */
pt1	.req	v9
pt2	.req	v10
pt3	.req	v11
pt4	.req	v12
pt5	.req	v13
pt6	.req	v14
pt7	.req	v15

/*
 * Round keys by position p = r + 14 - R (R rounds: 10, 12, 14): the last
 * round key is always k14, and the rounds are one sequence entered at
 * position 0 (AES-256), 2 (AES-192) or 4 (AES-128).
 */
k0	.req	v16
k1	.req	v17
k2	.req	v18
k3	.req	v19
k4	.req	v20
k5	.req	v21
k6	.req	v22
k7	.req	v23
k8	.req	v24
k9	.req	v25
k10	.req	v26
k11	.req	v27
k12	.req	v28
k13	.req	v29
k14	.req	v30

/* enc: lane j's round key at even positions (va) and odd ones (vb) */
va0	.req	v16
va1	.req	v17
va2	.req	v18
va3	.req	v19
va4	.req	v20
va5	.req	v21
va6	.req	v22
va7	.req	v23
vb0	.req	v24
vb1	.req	v25
vb2	.req	v26
vb3	.req	v27
vb4	.req	v28
vb5	.req	v29
vb6	.req	v30
vb7	.req	v31
qa0	.req	q16
qa1	.req	q17
qa2	.req	q18
qa3	.req	q19
qa4	.req	q20
qa5	.req	q21
qa6	.req	q22
qa7	.req	q23
qb0	.req	q24
qb1	.req	q25
qb2	.req	q26
qb3	.req	q27
qb4	.req	q28
qb5	.req	q29
qb6	.req	q30
qb7	.req	q31

/* General registers of every entry point */
KEYS	.req	x0	/* enc, dec: key pointers; enc1, enc1g: the key */
IVS	.req	x1
DST	.req	x2
SRC	.req	x3	/* enc1g: source pointers */
LEFT	.req	x4	/* sectors still to do */
LEFTW	.req	w4
ROUNDS	.req	x5	/* 10, 12 or 14 */
ROUNDSW	.req	w5
DELTA	.req	x6	/* enc, enc1: dst - src - 16 */
BLKS	.req	x7	/* blocks (dec: groups of 8) still to do in a sector */
TMP	.req	x16
TMP2	.req	x17
CNT	.req	x27	/* sectors in the group (enc); the loaded key (dec) */
LAST	.req	x28	/* CNT - 1 */

/*
 * The frame: x29/x30 as a frame record, the callee-saved x19-x28 and the
 * low halves of v8-v15 (d8-d15), AAPCS64.
 */
.macro	_frame_push
	stp		x29, x30, [sp, #-160]!
	mov		x29, sp
	stp		x19, x20, [sp, #16]
	stp		x21, x22, [sp, #32]
	stp		x23, x24, [sp, #48]
	stp		x25, x26, [sp, #64]
	stp		x27, x28, [sp, #80]
	stp		d8, d9, [sp, #96]
	stp		d10, d11, [sp, #112]
	stp		d12, d13, [sp, #128]
	stp		d14, d15, [sp, #144]
.endm

.macro	_frame_pop
	ldp		d14, d15, [sp, #144]
	ldp		d12, d13, [sp, #128]
	ldp		d10, d11, [sp, #112]
	ldp		d8, d9, [sp, #96]
	ldp		x27, x28, [sp, #80]
	ldp		x25, x26, [sp, #64]
	ldp		x23, x24, [sp, #48]
	ldp		x21, x22, [sp, #32]
	ldp		x19, x20, [sp, #16]
	ldp		x29, x30, [sp], #160
.endm

/* The round keys out of the vector registers. */
.macro	_wipe_keys
	movi		v16.16b, #0
	movi		v17.16b, #0
	movi		v18.16b, #0
	movi		v19.16b, #0
	movi		v20.16b, #0
	movi		v21.16b, #0
	movi		v22.16b, #0
	movi		v23.16b, #0
	movi		v24.16b, #0
	movi		v25.16b, #0
	movi		v26.16b, #0
	movi		v27.16b, #0
	movi		v28.16b, #0
	movi		v29.16b, #0
	movi		v30.16b, #0
	movi		v31.16b, #0
.endm

/*
 * _load_keys base: k<p> = the round key at position p, from base + 16 p
 * (base: the schedule's address + 16 R - 224), for the positions of
 * ROUNDS rounds.
 */
.macro	_load_keys	base
	cmp		ROUNDSW, #12
	b.lo		.Lk128\@
	b.eq		.Lk192\@
	ldp		q16, q17, [\base]
.Lk192\@:
	ldp		q18, q19, [\base, #32]
.Lk128\@:
	ldp		q20, q21, [\base, #64]
	ldp		q22, q23, [\base, #96]
	ldp		q24, q25, [\base, #128]
	ldp		q26, q27, [\base, #160]
	ldp		q28, q29, [\base, #192]
	ldr		q30, [\base, #224]
.endm

/*
 * _by_length pos, last, final, arg: the rounds of a key of ROUNDS rounds,
 * as positions: pos p for p = 0 (AES-256), 2 (AES-192) or 4 (AES-128) up
 * to 12, then last 13 and final 14; pos, last and final are the names of
 * macros taking the position and arg.
 */
.macro	_by_length	pos, last, final, arg
	cmp		ROUNDSW, #12
	b.lo		.Lr128\@
	b.eq		.Lr192\@
	\pos		0, \arg
	\pos		1, \arg
.Lr192\@:
	\pos		2, \arg
	\pos		3, \arg
.Lr128\@:
.irp p, 4,5,6,7,8,9,10,11,12
	\pos		\p, \arg
.endr
	\last		13, \arg
	\final		14, \arg
.endm

/* One lane, one register: the helpers below take register numbers. */
.macro	_aese_mc	j, k
	aese		v\j\().16b, \k\().16b
	aesmc		v\j\().16b, v\j\().16b
.endm

.macro	_aese		j, k
	aese		v\j\().16b, \k\().16b
.endm

.macro	_aesd_imc	j, k
	aesd		v\j\().16b, \k\().16b
	aesimc		v\j\().16b, v\j\().16b
.endm

.macro	_aesd		j, k
	aesd		v\j\().16b, \k\().16b
.endm

.macro	_xor		j, k
	eor		v\j\().16b, v\j\().16b, \k\().16b
.endm

/*
 * Lane j's round key at position p into its bank (enc): even positions in
 * va<j>, odd ones in vb<j>, so that the next position's loads need not wait
 * for this position's rounds.
 */
.macro	_lane_key	j, p
.if \p % 2
	ldr		qb\j, [lkey\j, #16 * \p]
.else
	ldr		qa\j, [lkey\j, #16 * \p]
.endif
.endm

.macro	_lane_op	op, j, p
.if \p % 2
	\op		\j, vb\j
.else
	\op		\j, va\j
.endif
.endm

/* Encryption rounds at position p on the 8 chains; multi: keys per lane */
.macro	_enc_pos	p, multi
.if \multi
.irp j, 0,1,2,3,4,5,6,7
	_lane_key	\j, \p
.endr
.irp j, 0,1,2,3,4,5,6,7
	_lane_op	_aese_mc, \j, \p
.endr
.else
.irp j, 0,1,2,3,4,5,6,7
	_aese_mc	\j, k\p
.endr
.endif
.endm

.macro	_enc_last	p, multi
.if \multi
.irp j, 0,1,2,3,4,5,6,7
	_lane_key	\j, \p
.endr
.irp j, 0,1,2,3,4,5,6,7
	_lane_op	_aese, \j, \p
.endr
.else
.irp j, 0,1,2,3,4,5,6,7
	_aese		\j, k\p
.endr
.endif
.endm

.macro	_enc_final	p, multi
.if \multi
.irp j, 0,1,2,3,4,5,6,7
	_lane_key	\j, \p
.endr
.irp j, 0,1,2,3,4,5,6,7
	_lane_op	_xor, \j, \p
.endr
.else
.irp j, 0,1,2,3,4,5,6,7
	_xor		\j, k\p
.endr
.endif
.endm

/*
 * _lane_setup j, multi, gather: lane j of a group of CNT sectors takes
 * sector b = min(j, CNT - 1) of the group.  Lanes past the group's sectors
 * so repeat its last one: the same key, IV and plaintext, loaded by every
 * such lane before any of them stores, and the same ciphertext stored:
 * correct in place too.
 */
.macro	_lane_setup	j, multi, gather
	mov		TMP, #\j
	cmp		CNT, #\j
	csel		TMP, TMP, LAST, hi
	ldr		q\j, [IVS, TMP, lsl #4]
.if \gather
	ldr		lsrc\j, [SRC, TMP, lsl #3]
	add		ldst\j, DST, TMP, lsl #9
.else
	add		lsrc\j, SRC, TMP, lsl #9
.endif
.if \multi
	ldr		TMP2, [KEYS, TMP, lsl #3]
	add		lkey\j, TMP2, ROUNDS, lsl #4
	sub		lkey\j, lkey\j, #224 - AES_KEY_ENC
.endif
.endm

/* Chain ^= the lane's next plaintext block */
.macro	_lane_load	j
	ld1		{pt\j\().16b}, [lsrc\j], #16
	eor		v\j\().16b, v\j\().16b, pt\j\().16b
.endm

.macro	_lane_store	j, gather
.if \gather
	st1		{v\j\().16b}, [ldst\j], #16
.else
	str		q\j, [lsrc\j, DELTA]
.endif
.endm

/*
 * _cbc_enc multi, gather: the body of an encryption entry point.  multi:
 * KEYS is an array of key pointers, else one key for every sector; gather:
 * SRC is an array of source pointers (one key only).
 */
.macro	_cbc_enc	multi, gather
	mov		LEFTW, LEFTW
	cbz		LEFT, .Lout\@
	_frame_push
.if \multi
	ldr		TMP, [KEYS]
	ldr		ROUNDSW, [TMP, #AES_KEY_ROUNDS]
.else
	ldr		ROUNDSW, [KEYS, #AES_KEY_ROUNDS]
	add		TMP, KEYS, ROUNDS, lsl #4
	sub		TMP, TMP, #224 - AES_KEY_ENC
	_load_keys	TMP
.endif
.if !\gather
	sub		DELTA, DST, SRC
	sub		DELTA, DELTA, #16
.endif
.Lgroup\@:
	mov		CNT, #8
	cmp		LEFT, #8
	csel		CNT, LEFT, CNT, lo
	sub		LAST, CNT, #1
.irp j, 0,1,2,3,4,5,6,7
	_lane_setup	\j, \multi, \gather
.endr
	mov		BLKS, #SECTOR_BLOCKS
.Lblock\@:
	/* Every lane's plaintext block is loaded before anything is stored. */
.irp j, 0,1,2,3,4,5,6,7
	_lane_load	\j
.endr
	_by_length	_enc_pos, _enc_last, _enc_final, \multi
.irp j, 0,1,2,3,4,5,6,7
	_lane_store	\j, \gather
.endr
	subs		BLKS, BLKS, #1
	b.ne		.Lblock\@

	add		IVS, IVS, CNT, lsl #4
.if \gather
	add		SRC, SRC, CNT, lsl #3
	add		DST, DST, CNT, lsl #9
.else
	add		SRC, SRC, CNT, lsl #9
.endif
.if \multi
	add		KEYS, KEYS, CNT, lsl #3
.endif
	subs		LEFT, LEFT, CNT
	b.ne		.Lgroup\@
	_wipe_keys
	_frame_pop
.Lout\@:
	ret
.endm

/*
 * void aesloop_cbc_enc_ce(const struct aes_key *const *keys, const u8 *ivs,
 *			   u8 *dst, const u8 *src, unsigned int nsect)
 */
SYM_FUNC_START(aesloop_cbc_enc_ce)
	_cbc_enc	1, 0
SYM_FUNC_END(aesloop_cbc_enc_ce)

/*
 * void aesloop_cbc_enc1_ce(const struct aes_key *key, const u8 *ivs,
 *			    u8 *dst, const u8 *src, unsigned int nsect)
 */
SYM_FUNC_START(aesloop_cbc_enc1_ce)
	_cbc_enc	0, 0
SYM_FUNC_END(aesloop_cbc_enc1_ce)

/*
 * void aesloop_cbc_enc1g_ce(const struct aes_key *key, const u8 *ivs,
 *			     u8 *dst, const u8 *const *srcs,
 *			     unsigned int nsect)
 */
SYM_FUNC_START(aesloop_cbc_enc1g_ce)
	_cbc_enc	0, 1
SYM_FUNC_END(aesloop_cbc_enc1g_ce)

/* Decryption: 8 blocks of one sector, the equivalent inverse cipher */
.macro	_dec_pos	p, unused
.irp j, 0,1,2,3,4,5,6,7
	_aesd_imc	\j, k\p
.endr
.endm

.macro	_dec_last	p, unused
.irp j, 0,1,2,3,4,5,6,7
	_aesd		\j, k\p
.endr
.endm

.macro	_dec_final	p, unused
.irp j, 0,1,2,3,4,5,6,7
	_xor		\j, k\p
.endr
.endm

/*
 * void aesloop_cbc_dec_ce(const struct aes_key *const *keys, const u8 *ivs,
 *			   u8 *dst, const u8 *src, unsigned int nsect)
 *
 * ivs may be NULL: all-zero IVs.  The round keys of aes_key.dec (FIPS-197
 * 5.3.5, the middle ones already InvMixColumns'ed) are what AESD/AESIMC
 * take: AESD is AddRoundKey, InvShiftRows, InvSubBytes; AESIMC is
 * InvMixColumns.
 */
SYM_FUNC_START(aesloop_cbc_dec_ce)
	mov		LEFTW, LEFTW
	cbz		LEFT, .Ldec_out
	_frame_push
	mov		CNT, #0
.Ldec_sector:
	ldr		TMP, [KEYS], #8
	cmp		TMP, CNT
	b.eq		.Ldec_iv
	mov		CNT, TMP
	ldr		ROUNDSW, [TMP, #AES_KEY_ROUNDS]
	add		TMP, TMP, ROUNDS, lsl #4
	add		TMP, TMP, #AES_KEY_DEC - 224
	_load_keys	TMP
.Ldec_iv:
	cbz		IVS, .Ldec_zero_iv
	ld1		{v31.16b}, [IVS], #16
	b		.Ldec_blocks
.Ldec_zero_iv:
	movi		v31.16b, #0
.Ldec_blocks:
	mov		BLKS, #SECTOR_BLOCKS / 8
.Ldec_8:
	/* v0-v7 are decrypted, v8-v15 keep their ciphertext */
	ld1		{v0.16b-v3.16b}, [SRC]
	ld1		{v8.16b-v11.16b}, [SRC], #64
	ld1		{v4.16b-v7.16b}, [SRC]
	ld1		{v12.16b-v15.16b}, [SRC], #64
	_by_length	_dec_pos, _dec_last, _dec_final, 0
	eor		v0.16b, v0.16b, v31.16b
	eor		v1.16b, v1.16b, v8.16b
	eor		v2.16b, v2.16b, v9.16b
	eor		v3.16b, v3.16b, v10.16b
	eor		v4.16b, v4.16b, v11.16b
	eor		v5.16b, v5.16b, v12.16b
	eor		v6.16b, v6.16b, v13.16b
	eor		v7.16b, v7.16b, v14.16b
	mov		v31.16b, v15.16b
	st1		{v0.16b-v3.16b}, [DST], #64
	st1		{v4.16b-v7.16b}, [DST], #64
	subs		BLKS, BLKS, #1
	b.ne		.Ldec_8
	subs		LEFTW, LEFTW, #1
	b.ne		.Ldec_sector
	_wipe_keys
	_frame_pop
.Ldec_out:
	ret
SYM_FUNC_END(aesloop_cbc_dec_ce)
