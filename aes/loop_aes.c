// SPDX-License-Identifier: GPL-2.0
/*
 * loop_aes.c - loop-AES sector transforms (doc/format.md).
 *
 * Every 512-byte sector is one AES-CBC message of 32 blocks, no padding.
 * S is the IV sector number the caller passes (loop sector plus offset,
 * doc/format.md section 4).  The formats differ in the key and the IV of a sector:
 *
 *  single-key (2.1): key K; IV = S as 64-bit little-endian, then 8 zero bytes.
 *  multi-key v2 (2.2): key K[S % 64]; IV = MD5 compression, from MD5's
 *    initial state, of plaintext bytes 16..463, then of one block holding
 *    bytes 464..511 and the little-endian words S & 0xffffffff,
 *    ((S >> 32) & 0xffffff) | 0x80000000, 4024 and 0; the IV is the state.
 *    Decryption runs CBC with a zero IV (blocks 1..31 chain on ciphertext
 *    and come out right), computes the IV from the plaintext bytes 16..511
 *    and XORs it into bytes 0..15.
 *  multi-key v3 (2.3): as v2, but the MD5 state starts from the compression
 *    of (the first 16 bytes of key 65, 48 zero bytes).
 *
 * Each format is one const table of operations; the bulk work goes to the
 * engine in batches of up to LOOP_AES_BATCH sectors.
 */
#include "loop_aes.h"
#include "md5.h"

/*
 * @encrypt_gather: @encrypt with sector i read from @srcs[i]; NULL where
 * the format needs its plaintext side by side (the multi-key IVs).
 */
struct loop_aes_format {
	void (*encrypt)(const struct loop_aes_ctx *ctx, u8 *dst, const u8 *src,
			unsigned int nsect, u64 sector);
	void (*encrypt_gather)(const struct loop_aes_ctx *ctx, u8 *dst,
			       const u8 *const *srcs, unsigned int nsect,
			       u64 sector);
	void (*decrypt)(const struct loop_aes_ctx *ctx, u8 *dst, const u8 *src,
			unsigned int nsect, u64 sector);
};

static const struct loop_aes_engine *engine = &loop_aes_generic_engine;

/**
 * loop_aes_set_engine() - choose the engine for all volumes
 * @e: the engine; its self-test must have passed
 *
 * Called once at start-up, before any transform runs.
 */
void loop_aes_set_engine(const struct loop_aes_engine *e)
{
	engine = e;
}

/**
 * loop_aes_get_engine() - the engine in use
 *
 * Return: the engine loop_aes_set_engine() chose, or the generic one.
 */
const struct loop_aes_engine *loop_aes_get_engine(void)
{
	return engine;
}

/**
 * loop_aes_multi_iv() - the IV of one multi-key sector (doc/format.md 2.2, 2.3)
 * @seed:   the MD5 state to start from (struct loop_aes_ctx.iv_seed)
 * @plain:  the sector's 512 bytes of plaintext; bytes 16..511 are used
 * @sector: the IV sector number S
 * @iv:     16 bytes of output: the final state words, little-endian
 */
void loop_aes_multi_iv(const u32 seed[4], const u8 *plain, u64 sector,
		       u8 iv[AES_BLOCK_LEN])
{
	u32 st[4] = { seed[0], seed[1], seed[2], seed[3] };
	u8 last[MD5_BLOCK_LEN];
	unsigned int i;

	for (i = 0; i < 7; i++)
		md5_compress(st, plain + 16 + MD5_BLOCK_LEN * i);
	memcpy(last, plain + 464, 48);
	aes_put_le32(last + 48, (u32)sector);
	aes_put_le32(last + 52, (u32)((sector >> 32) & 0xffffff) | 0x80000000U);
	/* The bit length of v2's 503 hashed bytes, kept as it is in v3. */
	aes_put_le32(last + 56, 4024);
	aes_put_le32(last + 60, 0);
	md5_compress(st, last);
	for (i = 0; i < 4; i++)
		aes_put_le32(iv + 4 * i, st[i]);
}

/* The generic engine: one sector after another, portable C. */

static void generic_cbc_encrypt(const struct aes_key *const *keys,
				const u8 *ivs, u8 *dst, const u8 *src,
				unsigned int nsect)
{
	unsigned int i;

	for (i = 0; i < nsect; i++)
		aes_cbc_encrypt(keys[i], dst + i * LOOP_AES_SECTOR_SIZE,
				src + i * LOOP_AES_SECTOR_SIZE,
				LOOP_AES_SECTOR_SIZE, ivs + i * AES_BLOCK_LEN);
}

static void generic_cbc_decrypt(const struct aes_key *const *keys,
				const u8 *ivs, u8 *dst, const u8 *src,
				unsigned int nsect)
{
	unsigned int i;

	for (i = 0; i < nsect; i++)
		aes_cbc_decrypt(keys[i], dst + i * LOOP_AES_SECTOR_SIZE,
				src + i * LOOP_AES_SECTOR_SIZE,
				LOOP_AES_SECTOR_SIZE, ivs + i * AES_BLOCK_LEN);
}

static void generic_cbc_encrypt_gather(const struct aes_key *key,
				       const u8 *ivs, u8 *dst,
				       const u8 *const *srcs,
				       unsigned int nsect)
{
	unsigned int i;

	for (i = 0; i < nsect; i++)
		aes_cbc_encrypt(key, dst + i * LOOP_AES_SECTOR_SIZE, srcs[i],
				LOOP_AES_SECTOR_SIZE, ivs + i * AES_BLOCK_LEN);
}

/**
 * loop_aes_multi_ivs() - the multi-key IVs of consecutive sectors, in C
 * @seed:   the MD5 state every sector starts from (struct loop_aes_ctx.iv_seed)
 * @plain:  @nsect plaintext sectors, 512 bytes apart
 * @sector: IV sector number of the first; sector i has @sector + i
 * @ivs:    out: 16 bytes per sector
 * @nsect:  sectors, any number
 *
 * loop_aes_multi_iv() for each sector (doc/format.md 2.2 steps 2-4): the generic
 * engine's multi_ivs, and that of the engines without MD5 code of their own.
 */
void loop_aes_multi_ivs(const u32 seed[4], const u8 *plain, u64 sector,
			u8 *ivs, unsigned int nsect)
{
	unsigned int i;

	for (i = 0; i < nsect; i++)
		loop_aes_multi_iv(seed, plain + i * LOOP_AES_SECTOR_SIZE,
				  sector + i, ivs + i * AES_BLOCK_LEN);
}

const struct loop_aes_engine loop_aes_generic_engine = {
	.name		= "generic",
	.cbc_encrypt	= generic_cbc_encrypt,
	.cbc_decrypt	= generic_cbc_decrypt,
	.cbc_encrypt_gather = generic_cbc_encrypt_gather,
	.multi_ivs	= loop_aes_multi_ivs,
};

/* Single-key: the same key everywhere, plain64 IVs. */

static void plain64_ivs(u8 *ivs, u64 sector, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++, sector++, ivs += AES_BLOCK_LEN) {
		aes_put_le32(ivs, (u32)sector);
		aes_put_le32(ivs + 4, (u32)(sector >> 32));
		memset(ivs + 8, 0, 8);
	}
}

static void single_keys(const struct loop_aes_ctx *ctx,
			const struct aes_key **keys, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		keys[i] = &ctx->keys[0];
}

static void single_encrypt(const struct loop_aes_ctx *ctx, u8 *dst,
			   const u8 *src, unsigned int n, u64 sector)
{
	const struct aes_key *keys[LOOP_AES_BATCH] = { NULL };
	u8 ivs[LOOP_AES_BATCH * AES_BLOCK_LEN];

	single_keys(ctx, keys, n);
	plain64_ivs(ivs, sector, n);
	engine->cbc_encrypt(keys, ivs, dst, src, n);
}

static void single_encrypt_gather(const struct loop_aes_ctx *ctx, u8 *dst,
				  const u8 *const *srcs, unsigned int n,
				  u64 sector)
{
	u8 ivs[LOOP_AES_BATCH * AES_BLOCK_LEN];

	plain64_ivs(ivs, sector, n);
	engine->cbc_encrypt_gather(&ctx->keys[0], ivs, dst, srcs, n);
}

static void single_decrypt(const struct loop_aes_ctx *ctx, u8 *dst,
			   const u8 *src, unsigned int n, u64 sector)
{
	const struct aes_key *keys[LOOP_AES_BATCH] = { NULL };
	u8 ivs[LOOP_AES_BATCH * AES_BLOCK_LEN];

	single_keys(ctx, keys, n);
	plain64_ivs(ivs, sector, n);
	engine->cbc_decrypt(keys, ivs, dst, src, n);
}

static const struct loop_aes_format single_format = {
	.encrypt	= single_encrypt,
	.encrypt_gather	= single_encrypt_gather,
	.decrypt	= single_decrypt,
};

/* Multi-key v2 and v3: key S % 64, IVs from the plaintext. */

static void multi_keys(const struct loop_aes_ctx *ctx,
		       const struct aes_key **keys, unsigned int n, u64 sector)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		keys[i] = &ctx->keys[(sector + i) % LOOP_AES_MULTI_KEYS];
}

static void multi_encrypt(const struct loop_aes_ctx *ctx, u8 *dst,
			  const u8 *src, unsigned int n, u64 sector)
{
	const struct aes_key *keys[LOOP_AES_BATCH] = { NULL };
	u8 ivs[LOOP_AES_BATCH * AES_BLOCK_LEN];

	multi_keys(ctx, keys, n, sector);
	/*
	 * The IV and the CBC pass both read the plaintext.  @src may change
	 * under us (an O_DIRECT buffer, a MAP_SHARED page under writeback):
	 * read it once, into @dst, and hash and encrypt that copy, or a
	 * sector could pair the IV of one version with the blocks of another
	 * and its first block would decrypt to data nobody wrote.  The IV
	 * pass comes first: the CBC pass overwrites the plaintext.
	 */
	if (dst != src)
		memcpy(dst, src, (size_t)n * LOOP_AES_SECTOR_SIZE);
	engine->multi_ivs(ctx->iv_seed, dst, sector, ivs, n);
	engine->cbc_encrypt(keys, ivs, dst, dst, n);
}

static void multi_decrypt(const struct loop_aes_ctx *ctx, u8 *dst,
			  const u8 *src, unsigned int n, u64 sector)
{
	static const u8 zero_ivs[LOOP_AES_BATCH * AES_BLOCK_LEN];
	const struct aes_key *keys[LOOP_AES_BATCH] = { NULL };
	u8 ivs[LOOP_AES_BATCH * AES_BLOCK_LEN];
	unsigned int i, j;

	multi_keys(ctx, keys, n, sector);
	engine->cbc_decrypt(keys, zero_ivs, dst, src, n);
	engine->multi_ivs(ctx->iv_seed, dst, sector, ivs, n);
	for (i = 0; i < n; i++)
		for (j = 0; j < AES_BLOCK_LEN; j++)
			dst[i * LOOP_AES_SECTOR_SIZE + j] ^= ivs[i * AES_BLOCK_LEN + j];
}

static const struct loop_aes_format multi_format = {
	.encrypt	= multi_encrypt,
	.decrypt	= multi_decrypt,
};

/**
 * loop_aes_ctx_size() - bytes to allocate for a context
 * @nkeys: 1 for single-key, LOOP_AES_MULTI_KEYS for multi-key
 *
 * Return: the size of struct loop_aes_ctx with @nkeys keys.
 */
size_t loop_aes_ctx_size(unsigned int nkeys)
{
	return sizeof(struct loop_aes_ctx) + nkeys * sizeof(struct aes_key);
}

/**
 * loop_aes_setup_single() - prepare the key of a single-key volume (doc/format.md 2.1)
 * @ctx:     loop_aes_ctx_size(1) bytes to fill
 * @key:     the AES key, @key_len bytes (the first bytes of lo_encrypt_key)
 * @key_len: 16, 24 or 32
 *
 * Return: 0, or -EINVAL for another key length (@ctx is then wiped).
 */
int loop_aes_setup_single(struct loop_aes_ctx *ctx, const u8 *key,
			  unsigned int key_len)
{
	ctx->fmt = &single_format;
	ctx->mode = LOOP_AES_SINGLE;
	ctx->nkeys = 1;
	memset(ctx->iv_seed, 0, sizeof(ctx->iv_seed));
	if (aes_key_setup(&ctx->keys[0], key, key_len)) {
		loop_aes_wipe(ctx);
		return -EINVAL;
	}
	return 0;
}

/**
 * loop_aes_setup_multi() - prepare the keys of a multi-key volume (doc/format.md 2.2, 2.3)
 * @ctx:     loop_aes_ctx_size(LOOP_AES_MULTI_KEYS) bytes to fill
 * @keys:    @count key slots of LOOP_AES_KEY_SLOT bytes each, as in the
 *           LOOP_MULTI_KEY_SETUP(_V3) payload; the first @key_len bytes of
 *           slots 0..63 are the AES keys, the first 16 of slot 64 the v3 seed
 * @count:   64 (v2) or 65 (v3)
 * @key_len: 16, 24 or 32
 *
 * Return: 0, or -EINVAL for another count or key length (@ctx is then wiped).
 */
int loop_aes_setup_multi(struct loop_aes_ctx *ctx, const u8 *keys,
			 unsigned int count, unsigned int key_len)
{
	unsigned int i;

	ctx->fmt = &multi_format;
	ctx->nkeys = LOOP_AES_MULTI_KEYS;
	ctx->iv_seed[0] = MD5_INIT_A;
	ctx->iv_seed[1] = MD5_INIT_B;
	ctx->iv_seed[2] = MD5_INIT_C;
	ctx->iv_seed[3] = MD5_INIT_D;
	if (count == LOOP_AES_MULTI_KEYS + 1) {
		u8 block[MD5_BLOCK_LEN] = { 0 };

		ctx->mode = LOOP_AES_MULTI_V3;
		memcpy(block, keys + LOOP_AES_MULTI_KEYS * LOOP_AES_KEY_SLOT, 16);
		md5_compress(ctx->iv_seed, block);
		memzero_explicit(block, sizeof(block));
	} else if (count == LOOP_AES_MULTI_KEYS) {
		ctx->mode = LOOP_AES_MULTI_V2;
	} else {
		goto fail;
	}
	for (i = 0; i < LOOP_AES_MULTI_KEYS; i++)
		if (aes_key_setup(&ctx->keys[i], keys + i * LOOP_AES_KEY_SLOT,
				  key_len))
			goto fail;
	return 0;
fail:
	loop_aes_wipe(ctx);
	return -EINVAL;
}

/**
 * loop_aes_wipe() - erase every key in a context
 * @ctx: the context; all loop_aes_ctx_size(ctx->nkeys) bytes are zeroed in
 *       a way the compiler cannot drop
 */
void loop_aes_wipe(struct loop_aes_ctx *ctx)
{
	memzero_explicit(ctx, loop_aes_ctx_size(ctx->nkeys));
}

/**
 * loop_aes_encrypt() - encrypt whole sectors
 * @ctx:    the volume's keys
 * @dst:    @nsect * 512 bytes of ciphertext; may equal @src, must not
 *          otherwise overlap it
 * @src:    @nsect * 512 bytes of plaintext
 * @nsect:  number of 512-byte sectors
 * @sector: IV sector number of the first sector (doc/format.md section 4); the
 *          following sectors take @sector + 1, @sector + 2, ...
 *
 * Each byte of @src is read once (multi-key: copied to @dst first, then
 * hashed and encrypted there), so @src may change during the call: each
 * 16-byte block of @dst then decrypts to what that block of @src held at
 * some moment of the call.
 */
void loop_aes_encrypt(const struct loop_aes_ctx *ctx, u8 *dst, const u8 *src,
		      size_t nsect, u64 sector)
{
	while (nsect) {
		unsigned int n = nsect < LOOP_AES_BATCH ? nsect : LOOP_AES_BATCH;

		ctx->fmt->encrypt(ctx, dst, src, n, sector);
		dst += n * LOOP_AES_SECTOR_SIZE;
		src += n * LOOP_AES_SECTOR_SIZE;
		sector += n;
		nsect -= n;
	}
}

/**
 * loop_aes_decrypt() - decrypt whole sectors
 * @ctx:    the volume's keys
 * @dst:    @nsect * 512 bytes of plaintext; may equal @src, must not
 *          otherwise overlap it
 * @src:    @nsect * 512 bytes of ciphertext
 * @nsect:  number of 512-byte sectors
 * @sector: IV sector number of the first sector, as for loop_aes_encrypt()
 */
void loop_aes_decrypt(const struct loop_aes_ctx *ctx, u8 *dst, const u8 *src,
		      size_t nsect, u64 sector)
{
	while (nsect) {
		unsigned int n = nsect < LOOP_AES_BATCH ? nsect : LOOP_AES_BATCH;

		ctx->fmt->decrypt(ctx, dst, src, n, sector);
		dst += n * LOOP_AES_SECTOR_SIZE;
		src += n * LOOP_AES_SECTOR_SIZE;
		sector += n;
		nsect -= n;
	}
}

/*
 * A walk over a vector of segments, a run of contiguous whole sectors at a
 * time.
 */
struct seg_walk {
	const struct loop_aes_seg *seg, *end;
	unsigned int off;	/* bytes into *seg */
};

/* The next run of at most @max sectors at *@data; 0 when none is left. */
static unsigned int seg_next(struct seg_walk *w, unsigned int max, u8 **data)
{
	unsigned int n;

	while (w->seg < w->end && w->off >= w->seg->len) {
		w->seg++;
		w->off = 0;
	}
	if (w->seg == w->end)
		return 0;
	n = (w->seg->len - w->off) >> LOOP_AES_SECTOR_SHIFT;
	if (n > max)
		n = max;
	*data = w->seg->data + w->off;
	w->off += n << LOOP_AES_SECTOR_SHIFT;
	return n;
}

/* loop_aes_encrypt_segs() of a format that reads each sector where it is */
static void encrypt_segs_gather(const struct loop_aes_ctx *ctx, u8 *dst,
				struct seg_walk *w, u64 sector)
{
	const u8 *srcs[LOOP_AES_BATCH];
	unsigned int fill = 0, n, i;
	u8 *src;

	while ((n = seg_next(w, LOOP_AES_BATCH - fill, &src))) {
		for (i = 0; i < n; i++)
			srcs[fill + i] = src + i * LOOP_AES_SECTOR_SIZE;
		fill += n;
		if (fill < LOOP_AES_BATCH)
			continue;
		ctx->fmt->encrypt_gather(ctx, dst, srcs, fill, sector);
		dst += fill * LOOP_AES_SECTOR_SIZE;
		sector += fill;
		fill = 0;
	}
	if (fill)
		ctx->fmt->encrypt_gather(ctx, dst, srcs, fill, sector);
}

/**
 * loop_aes_encrypt_segs() - encrypt a request's scattered sectors into one
 *                           buffer
 * @ctx:    the volume's keys
 * @dst:    the ciphertext: as many bytes as the segments hold together,
 *          contiguous; must not overlap them
 * @segs:   the plaintext, @nseg segments of whole 512-byte sectors
 * @nseg:   number of segments
 * @sector: IV sector number of the first sector (doc/format.md section 4)
 *
 * The same result as loop_aes_encrypt() over the segments laid end to end,
 * each byte of the segments read once, as loop_aes_encrypt() promises.
 * The engine still gets whole batches of LOOP_AES_BATCH sectors, however
 * small the segments.  Single-key hands it the address of each sector: its
 * CBC reads them where they are.  Multi-key hashes the IVs from sectors
 * side by side, so the plaintext is gathered into @dst a batch at a time
 * and encrypted there while it is in the cache (a segment that holds a
 * whole batch is encrypted from where it is).
 */
void loop_aes_encrypt_segs(const struct loop_aes_ctx *ctx, u8 *dst,
			   const struct loop_aes_seg *segs, unsigned int nseg,
			   u64 sector)
{
	struct seg_walk w = { segs, segs + nseg, 0 };
	unsigned int fill = 0, n;
	u8 *src;

	if (ctx->fmt->encrypt_gather) {
		encrypt_segs_gather(ctx, dst, &w, sector);
		return;
	}
	while ((n = seg_next(&w, LOOP_AES_BATCH - fill, &src))) {
		if (n == LOOP_AES_BATCH) {
			ctx->fmt->encrypt(ctx, dst, src, n, sector);
		} else {
			memcpy(dst + fill * LOOP_AES_SECTOR_SIZE, src,
			       (size_t)n * LOOP_AES_SECTOR_SIZE);
			fill += n;
			if (fill < LOOP_AES_BATCH)
				continue;
			n = fill;
			ctx->fmt->encrypt(ctx, dst, dst, n, sector);
		}
		fill = 0;
		dst += n * LOOP_AES_SECTOR_SIZE;
		sector += n;
	}
	if (fill)
		ctx->fmt->encrypt(ctx, dst, dst, fill, sector);
}

/*
 * One batch of a multi-key decryption over scattered sectors: CBC with a
 * zero IV in place, then the IVs (which need the sectors side by side)
 * from a copy of the plaintext in @scratch, XORed into the first blocks.
 * Returns the sectors done.
 */
static unsigned int multi_decrypt_batch(const struct loop_aes_ctx *ctx,
					struct seg_walk *w, u64 sector,
					u8 *scratch, unsigned int max)
{
	static const u8 zero_ivs[LOOP_AES_BATCH * AES_BLOCK_LEN];
	const struct aes_key *keys[LOOP_AES_BATCH] = { NULL };
	u8 ivs[LOOP_AES_BATCH * AES_BLOCK_LEN];
	struct seg_walk again = *w;
	unsigned int fill = 0, n, i, j, k;
	u8 *p;

	multi_keys(ctx, keys, max, sector);
	while (fill < max && (n = seg_next(w, max - fill, &p))) {
		engine->cbc_decrypt(keys + fill, zero_ivs, p, p, n);
		memcpy(scratch + fill * LOOP_AES_SECTOR_SIZE, p,
		       (size_t)n * LOOP_AES_SECTOR_SIZE);
		fill += n;
	}
	engine->multi_ivs(ctx->iv_seed, scratch, sector, ivs, fill);
	for (i = 0; i < fill; i += n) {
		n = seg_next(&again, fill - i, &p);
		for (k = 0; k < n; k++, p += LOOP_AES_SECTOR_SIZE)
			for (j = 0; j < AES_BLOCK_LEN; j++)
				p[j] ^= ivs[(i + k) * AES_BLOCK_LEN + j];
	}
	return fill;
}

/**
 * loop_aes_decrypt_segs() - decrypt a request's scattered sectors in place
 * @ctx:         the volume's keys
 * @segs:        the ciphertext, @nseg segments of whole 512-byte sectors,
 *               replaced by the plaintext
 * @nseg:        number of segments
 * @sector:      IV sector number of the first sector (doc/format.md section 4)
 * @scratch:     @scratch_len bytes the multi-key IVs are computed from;
 *               may be NULL for single-key
 * @scratch_len: bytes, at least 512 for multi-key (with less, only runs of
 *               a whole batch in one segment are decrypted); LOOP_AES_SCRATCH
 *               gives the engine whole batches
 *
 * The same result as loop_aes_decrypt() over the segments laid end to end.
 * Single-key CBC decryption works a sector at a time anyway; multi-key
 * hashes LOOP_AES_BATCH sectors side by side, so their plaintext is copied
 * together into @scratch first (doc/format.md section 2.2).
 */
void loop_aes_decrypt_segs(const struct loop_aes_ctx *ctx,
			   const struct loop_aes_seg *segs, unsigned int nseg,
			   u64 sector, u8 *scratch, size_t scratch_len)
{
	struct seg_walk w = { segs, segs + nseg, 0 };
	size_t batch = scratch_len / LOOP_AES_SECTOR_SIZE;
	unsigned int n;
	u8 *p;

	if (ctx->mode == LOOP_AES_SINGLE) {
		while ((n = seg_next(&w, ~0U, &p))) {
			loop_aes_decrypt(ctx, p, p, n, sector);
			sector += n;
		}
		return;
	}
	if (batch > LOOP_AES_BATCH)
		batch = LOOP_AES_BATCH;
	for (;;) {
		struct seg_walk peek = w;

		/* A whole batch side by side needs no copy. */
		n = seg_next(&peek, LOOP_AES_BATCH, &p);
		if (!n)
			break;
		if (n == LOOP_AES_BATCH) {
			ctx->fmt->decrypt(ctx, p, p, n, sector);
			w = peek;
		} else {
			n = multi_decrypt_batch(ctx, &w, sector, scratch, batch);
		}
		if (!n)
			break;
		sector += n;
	}
}
