// SPDX-License-Identifier: GPL-2.0
// covers: request segments, single-key, multi-key v2, multi-key v3
/*
 * test_segs.c - the transforms over a request's scattered segments
 * (loop_aes_encrypt_segs(), loop_aes_decrypt_segs(): the driver's transfer).
 *
 * Each layout scatters a run of sectors over separately allocated
 * segments, each with guard bytes around it, and checks against the
 * contiguous transforms with the generic engine (which the vector tests
 * pin to the format):
 *
 *  segs-ENGINE-MODE-LAYOUT-enc   the ciphertext equals loop_aes_encrypt()'s
 *                                of the same sectors, and nothing outside
 *                                the destination and no source byte changed
 *  segs-ENGINE-MODE-LAYOUT-dec   decrypting that ciphertext in its segments
 *                                gives the plaintext back, no guard byte
 *                                changed; for multi-key also with a scratch
 *                                of 1 and of 5 sectors (batches cut short)
 *
 * LAYOUT: pages (8-sector segments, as a request of 4 KiB pages), sectors
 * (1-sector segments), one (a single segment of 77 sectors) and mixed (a
 * whole batch and odd pieces).
 *  segs-ENGINE-MODE-random       RANDOM_LAYOUTS layouts of 1 to 300 sectors
 *                                in pieces of 1 to 40, both checks each (a
 *                                failing one is also reported by name)
 *
 * ENGINE: generic, and each path of the CPU's own AES code that it can run
 * (single-key encryption reads each sector where it is, enc1g_*).  MODE: single (AES-128),
 * single256, v2, v3.  Set AESLOOP_SEED to repeat a run.
 */
#include <stdint.h>
#include <time.h>

#include "loop_aes.h"
#include "t_engines.h"
#include "testutil.h"

#define MAX_SEGS	320
#define MAX_SECT	320
#define GUARD		64
#define RANDOM_LAYOUTS	40
#define SECT		LOOP_AES_SECTOR_SIZE

static const char *const mode_names[] = { "single", "single256", "v2", "v3" };

struct layout {
	const char *name;
	unsigned int nseg;
	unsigned int sect[MAX_SEGS];	/* sectors per segment */
};

static u8 plain[MAX_SECT * SECT], ref[MAX_SECT * SECT];
static u8 dst[MAX_SECT * SECT + 2 * GUARD];
static u8 *seg_mem[MAX_SEGS];	/* each segment with GUARD bytes either side */
static struct loop_aes_seg segs[MAX_SEGS];

static struct loop_aes_ctx *make_ctx(unsigned int mode)
{
	static u8 slots[(LOOP_AES_MULTI_KEYS + 1) * LOOP_AES_KEY_SLOT];
	struct loop_aes_ctx *ctx = malloc(loop_aes_ctx_size(LOOP_AES_MULTI_KEYS));

	if (!ctx)
		exit(2);
	rng_fill(slots, sizeof(slots));
	if (mode <= 1)
		loop_aes_setup_single(ctx, slots, mode ? 32 : 16);
	else
		loop_aes_setup_multi(ctx, slots, LOOP_AES_MULTI_KEYS + (mode == 3), 16);
	return ctx;
}

static unsigned int total_sectors(const struct layout *l)
{
	unsigned int i, n = 0;

	for (i = 0; i < l->nseg; i++)
		n += l->sect[i];
	return n;
}

/* Lay @data out in the layout's segments, guards 0xa5 around each. */
static void scatter(const struct layout *l, const u8 *data)
{
	unsigned int i;

	for (i = 0; i < l->nseg; i++) {
		size_t len = (size_t)l->sect[i] * SECT;

		free(seg_mem[i]);
		seg_mem[i] = malloc(len + 2 * GUARD);
		if (!seg_mem[i])
			exit(2);
		memset(seg_mem[i], 0xa5, len + 2 * GUARD);
		memcpy(seg_mem[i] + GUARD, data, len);
		segs[i].data = seg_mem[i] + GUARD;
		segs[i].len = (unsigned int)len;
		data += len;
	}
}

/* Whether the segments hold @data and their guards are untouched. */
static int gathered_equal(const struct layout *l, const u8 *data)
{
	unsigned int i, g;

	for (i = 0; i < l->nseg; i++) {
		size_t len = (size_t)l->sect[i] * SECT;

		if (memcmp(seg_mem[i] + GUARD, data, len))
			return 0;
		for (g = 0; g < GUARD; g++)
			if (seg_mem[i][g] != 0xa5 || seg_mem[i][GUARD + len + g] != 0xa5)
				return 0;
		data += len;
	}
	return 1;
}

static int guards_intact(const u8 *buf, size_t len)
{
	unsigned int g;

	for (g = 0; g < GUARD; g++)
		if (buf[g] != 0x5a || buf[GUARD + len + g] != 0x5a)
			return 0;
	return 1;
}

/*
 * Check one layout; report its two results unless @quiet, and return how
 * many of them failed.
 */
static int check_layout(const struct loop_aes_engine *e, unsigned int mode,
			const struct loop_aes_ctx *ctx, const struct layout *l,
			int quiet)
{
	static const size_t scratch_sizes[] = { LOOP_AES_SCRATCH, SECT, 5 * SECT };
	static u8 scratch[LOOP_AES_SCRATCH];
	unsigned int n = total_sectors(l), k, nk;
	size_t len = (size_t)n * SECT;
	u64 s = rng_next() >> 20;
	char name[128];
	int ok, failed = 0;

	rng_fill(plain, len);
	loop_aes_set_engine(&loop_aes_generic_engine);
	loop_aes_encrypt(ctx, ref, plain, n, s);

	loop_aes_set_engine(e);
	scatter(l, plain);
	memset(dst, 0x5a, len + 2 * GUARD);
	loop_aes_encrypt_segs(ctx, dst + GUARD, segs, l->nseg, s);
	ok = !memcmp(dst + GUARD, ref, len) && guards_intact(dst, len) &&
	     gathered_equal(l, plain);
	snprintf(name, sizeof(name), "segs-%s-%s-%s-enc", e->name,
		 mode_names[mode], l->name);
	failed += !ok;
	if (!quiet || !ok)
		t_result(ok, name, "%u sectors in %u segments, sector %llu", n,
			 l->nseg, (unsigned long long)s);

	/* Single-key needs no scratch: one round is enough. */
	nk = mode <= 1 ? 1 : sizeof(scratch_sizes) / sizeof(scratch_sizes[0]);
	ok = 1;
	for (k = 0; k < nk && ok; k++) {
		scatter(l, ref);
		loop_aes_decrypt_segs(ctx, segs, l->nseg, s,
				      mode <= 1 ? NULL : scratch, scratch_sizes[k]);
		ok = gathered_equal(l, plain);
	}
	snprintf(name, sizeof(name), "segs-%s-%s-%s-dec", e->name,
		 mode_names[mode], l->name);
	failed += !ok;
	if (!quiet || !ok)
		t_result(ok, name, "%u sectors in %u segments, scratch %zu bytes",
			 n, l->nseg, scratch_sizes[k - 1]);
	loop_aes_set_engine(&loop_aes_generic_engine);
	return failed;
}

static void fixed(struct layout *l, const char *name, unsigned int nseg,
		  unsigned int each)
{
	unsigned int i;

	l->name = name;
	l->nseg = nseg;
	for (i = 0; i < nseg; i++)
		l->sect[i] = each;
}

static void check_engine(const struct loop_aes_engine *e)
{
	static const unsigned int mixed[] = { 3, LOOP_AES_BATCH, 1, 2 * LOOP_AES_BATCH + 5,
					      7, 8, LOOP_AES_BATCH - 1, 9 };
	struct layout l;
	unsigned int mode, i, r;
	char name[96];

	for (mode = 0; mode < 4; mode++) {
		struct loop_aes_ctx *ctx = make_ctx(mode);
		int failed = 0;

		fixed(&l, "pages", 32, 8);
		check_layout(e, mode, ctx, &l, 0);
		fixed(&l, "sectors", 70, 1);
		check_layout(e, mode, ctx, &l, 0);
		fixed(&l, "one", 1, 77);
		check_layout(e, mode, ctx, &l, 0);
		l.name = "mixed";
		l.nseg = sizeof(mixed) / sizeof(mixed[0]);
		for (i = 0; i < l.nseg; i++)
			l.sect[i] = mixed[i];
		check_layout(e, mode, ctx, &l, 0);
		/* One result for all of them; a failing layout is reported too. */
		for (r = 0; r < RANDOM_LAYOUTS; r++) {
			unsigned int want = 1 + (unsigned int)(rng_next() % 300), have = 0;

			l.name = "random";
			for (l.nseg = 0; have < want; l.nseg++) {
				unsigned int piece = 1 + (unsigned int)(rng_next() % 40);

				if (piece > want - have)
					piece = want - have;
				l.sect[l.nseg] = piece;
				have += piece;
			}
			failed += check_layout(e, mode, ctx, &l, 1);
		}
		snprintf(name, sizeof(name), "segs-%s-%s-random", e->name,
			 mode_names[mode]);
		t_result(!failed, name, "%d of %d checks failed", failed,
			 2 * RANDOM_LAYOUTS);
		loop_aes_wipe(ctx);
		free(ctx);
	}
}

int main(void)
{
	const char *env = getenv("AESLOOP_SEED");
	uint64_t seed = env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
	unsigned int i;

	rng_state = seed ? seed : 1;
	t_note("seed %llu", (unsigned long long)seed);
	check_engine(&loop_aes_generic_engine);
	t_each_arch_engine("segs", check_engine);
	for (i = 0; i < MAX_SEGS; i++)
		free(seg_mem[i]);
	return t_exit();
}
