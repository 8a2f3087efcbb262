// SPDX-License-Identifier: GPL-2.0
// covers: changing source
/*
 * test_changing_source.c - encryption from a source that changes while it
 * is read.
 *
 * The driver encrypts a write from the caller's page into its bounce page,
 * and that page can be written to meanwhile (an O_DIRECT buffer, a
 * MAP_SHARED page under writeback).  Whatever the timing, each 16-byte
 * block of every sector written must decrypt to that block of one of the
 * versions the page held.  A multi-key sector whose IV was hashed from
 * other bytes than were encrypted fails that: its first block decrypts to
 * the XOR of two IVs and the plaintext, data nobody wrote.
 *
 * The two versions of the source differ in one byte of each 16-byte block,
 * so a block read at any moment, by any code, is one version or the other:
 * a transform that reads each byte once cannot fail these checks, whatever
 * the threads do, and one that hashes one read and encrypts another fails
 * as soon as the source changed in between.
 *
 *  between-passes-ENGINE-vN   a wrapper around ENGINE switches the source
 *                             to the other version after each multi-key IV
 *                             pass, the worst moment, every time: each
 *                             sector must decrypt to one version, whole
 *  writer-thread-ENGINE-MODE  a second thread keeps switching the source
 *                             between the versions while this one encrypts
 *                             it ITERATIONS times, waiting before each time
 *                             until the writer has made progress (MODE
 *                             single, v2, v3)
 *  writer-thread-segs-ENGINE-MODE  the same through loop_aes_encrypt_segs()
 *                             over one-sector segments, as the driver
 *                             calls it (single-key: the engine reads each
 *                             sector where it is)
 *
 * ENGINE: generic, and each path of the CPU's own AES code that it can run.
 * The ciphertext is decrypted with the generic engine.  Random data comes
 * from a seeded generator; set AESLOOP_SEED to repeat a run.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "loop_aes.h"
#include "t_engines.h"
#include "testutil.h"

/* More than two batches, and not a multiple of one. */
#define NSECT		(2 * LOOP_AES_BATCH + 3)
#define LEN		(NSECT * LOOP_AES_SECTOR_SIZE)
#define NBLOCKS		(LEN / AES_BLOCK_LEN)
#define ITERATIONS	300

static uint64_t seed;

/* The versions, the byte of each block where they differ, the source. */
static u8 ver[2][LEN];
static unsigned int diff_at[NBLOCKS];
static u8 src[LEN], out[LEN], plain[LEN];

static void make_versions(void)
{
	unsigned int i;

	rng_fill(ver[0], LEN);
	memcpy(ver[1], ver[0], LEN);
	for (i = 0; i < NBLOCKS; i++) {
		diff_at[i] = i * AES_BLOCK_LEN + (unsigned int)(rng_next() % AES_BLOCK_LEN);
		ver[1][diff_at[i]] = (u8)~ver[0][diff_at[i]];
	}
	memcpy(src, ver[0], LEN);
}

/* Give the source version @v; the other thread's stores are single bytes. */
static void set_version(unsigned int v)
{
	unsigned int i;

	for (i = 0; i < NBLOCKS; i++)
		__atomic_store_n(&src[diff_at[i]], ver[v][diff_at[i]],
				 __ATOMIC_RELAXED);
}

/*
 * Decrypt out[] with the generic engine and check it.  Returns the number
 * of sectors with a block that is neither version (and the first such
 * sector in *@bad_sector); counts in *@mixed the sectors holding blocks of
 * both versions, and in *@whole_b those that are all version 1.
 */
static unsigned int check_out(const struct loop_aes_ctx *ctx, u64 s,
			      unsigned int *bad_sector, unsigned int *mixed,
			      unsigned int *whole_b)
{
	unsigned int i, k, bad = 0;

	loop_aes_set_engine(&loop_aes_generic_engine);
	loop_aes_decrypt(ctx, plain, out, NSECT, s);
	for (i = 0; i < NSECT; i++) {
		unsigned int seen[2] = { 0, 0 }, ok = 1;

		for (k = 0; k < LOOP_AES_SECTOR_SIZE / AES_BLOCK_LEN; k++) {
			size_t off = i * LOOP_AES_SECTOR_SIZE + k * AES_BLOCK_LEN;

			if (!memcmp(plain + off, ver[0] + off, AES_BLOCK_LEN))
				seen[0]++;
			else if (!memcmp(plain + off, ver[1] + off, AES_BLOCK_LEN))
				seen[1]++;
			else
				ok = 0;
		}
		if (!ok) {
			if (!bad++)
				*bad_sector = i;
		} else if (seen[0] && seen[1]) {
			(*mixed)++;
		} else if (seen[1]) {
			(*whole_b)++;
		}
	}
	return bad;
}

static struct loop_aes_ctx *setup_ctx(unsigned int mode)
{
	static u8 slots[(LOOP_AES_MULTI_KEYS + 1) * LOOP_AES_KEY_SLOT];
	struct loop_aes_ctx *ctx = malloc(loop_aes_ctx_size(LOOP_AES_MULTI_KEYS));

	if (!ctx)
		return NULL;
	rng_fill(slots, sizeof(slots));
	if (mode == 1)
		loop_aes_setup_single(ctx, slots, 16);
	else
		loop_aes_setup_multi(ctx, slots, LOOP_AES_MULTI_KEYS + (mode == 3), 16);
	return ctx;
}

/* ---- the wrapper: the source changes between the IV and the CBC pass ---- */

static const struct loop_aes_engine *wrapped;
static unsigned int cur_version, ivs_calls;

static void wrap_cbc_encrypt(const struct aes_key *const *keys, const u8 *ivs,
			     u8 *dst, const u8 *s, unsigned int nsect)
{
	wrapped->cbc_encrypt(keys, ivs, dst, s, nsect);
}

static void wrap_cbc_decrypt(const struct aes_key *const *keys, const u8 *ivs,
			     u8 *dst, const u8 *s, unsigned int nsect)
{
	wrapped->cbc_decrypt(keys, ivs, dst, s, nsect);
}

static void wrap_cbc_encrypt_gather(const struct aes_key *key, const u8 *ivs,
				    u8 *dst, const u8 *const *srcs,
				    unsigned int nsect)
{
	wrapped->cbc_encrypt_gather(key, ivs, dst, srcs, nsect);
}

static void wrap_multi_ivs(const u32 iv_seed[4], const u8 *p, u64 sector,
			   u8 *ivs, unsigned int nsect)
{
	wrapped->multi_ivs(iv_seed, p, sector, ivs, nsect);
	cur_version ^= 1;
	set_version(cur_version);
	ivs_calls++;
}

static const struct loop_aes_engine wrap_engine = {
	.name		= "wrapper",
	.cbc_encrypt	= wrap_cbc_encrypt,
	.cbc_decrypt	= wrap_cbc_decrypt,
	.cbc_encrypt_gather = wrap_cbc_encrypt_gather,
	.multi_ivs	= wrap_multi_ivs,
};

static void check_between_passes(const struct loop_aes_engine *e,
				 const char *ename, unsigned int mode)
{
	struct loop_aes_ctx *ctx = setup_ctx(mode);
	unsigned int bad, bad_sector = 0, mixed = 0, whole_b = 0;
	u64 s = rng_next() >> 8;
	char name[96];

	snprintf(name, sizeof(name), "between-passes-%s-v%u", ename, mode);
	if (!ctx) {
		t_result(0, name, "out of memory");
		return;
	}
	wrapped = e;
	cur_version = 0;
	ivs_calls = 0;
	set_version(0);
	loop_aes_set_engine(&wrap_engine);
	loop_aes_encrypt(ctx, out, src, NSECT, s);
	bad = check_out(ctx, s, &bad_sector, &mixed, &whole_b);
	if (ivs_calls == 0)
		t_result(0, name, "the IV pass never ran");
	else if (bad)
		t_result(0, name, "%u of %u sectors decrypt to data neither version holds (first: sector %u of IV sector %llu; seed %llu)",
			 bad, NSECT, bad_sector, (unsigned long long)s,
			 (unsigned long long)seed);
	else
		t_result(!mixed, name, "%u sectors mix the versions, although the source changed only between IV passes (seed %llu)",
			 mixed, (unsigned long long)seed);
	loop_aes_wipe(ctx);
	free(ctx);
}

/* ---- a writer thread that keeps changing the source ---- */

static unsigned long writer_rounds;
static int writer_stop;

static void *writer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&writer_stop, __ATOMIC_RELAXED)) {
		set_version(1);
		set_version(0);
		__atomic_fetch_add(&writer_rounds, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static const char *const mode_names[] = { "", "single", "v2", "v3" };

static void check_writer_thread(const struct loop_aes_engine *e,
				const char *ename, unsigned int mode, int segs)
{
	static struct loop_aes_seg sector_segs[NSECT];
	struct loop_aes_ctx *ctx = setup_ctx(mode);
	unsigned int it, bad = 0, bad_sector = 0, bad_it = 0, mixed = 0;
	unsigned int whole_b = 0;
	unsigned long seen;
	u64 s = 0, bad_s = 0;
	pthread_t tid;
	char name[96];

	snprintf(name, sizeof(name), "writer-thread-%s%s-%s", segs ? "segs-" : "",
		 ename, mode_names[mode]);
	for (it = 0; it < NSECT; it++) {
		sector_segs[it].data = src + it * LOOP_AES_SECTOR_SIZE;
		sector_segs[it].len = LOOP_AES_SECTOR_SIZE;
	}
	if (!ctx) {
		t_result(0, name, "out of memory");
		return;
	}
	set_version(0);
	writer_stop = 0;
	if (pthread_create(&tid, NULL, writer, NULL)) {
		t_result(0, name, "pthread_create failed");
		free(ctx);
		return;
	}
	for (it = 0; it < ITERATIONS; it++) {
		unsigned int b, first = 0;

		/* The writer must have run since the last round (no sleeps). */
		seen = __atomic_load_n(&writer_rounds, __ATOMIC_ACQUIRE);
		while (__atomic_load_n(&writer_rounds, __ATOMIC_ACQUIRE) == seen)
			sched_yield();
		s = rng_next() >> 8;
		loop_aes_set_engine(e);
		if (segs)
			loop_aes_encrypt_segs(ctx, out, sector_segs, NSECT, s);
		else
			loop_aes_encrypt(ctx, out, src, NSECT, s);
		b = check_out(ctx, s, &first, &mixed, &whole_b);
		if (b && !bad) {
			bad_sector = first;
			bad_it = it;
			bad_s = s;
		}
		bad += b;
	}
	__atomic_store_n(&writer_stop, 1, __ATOMIC_RELAXED);
	pthread_join(tid, NULL);
	loop_aes_set_engine(&loop_aes_generic_engine);
	/* How often the race was really run: not asserted, it is timing. */
	t_note("%s: %u sectors written, %u mixed both versions, %u all of the second",
	       name, ITERATIONS * NSECT, mixed, whole_b);
	t_result(!bad, name, "%u of %u sectors decrypt to data neither version holds (first: round %u, sector %u of IV sector %llu; seed %llu)",
		 bad, ITERATIONS * NSECT, bad_it, bad_sector,
		 (unsigned long long)bad_s, (unsigned long long)seed);
	loop_aes_wipe(ctx);
	free(ctx);
}

static void check_engine(const struct loop_aes_engine *e)
{
	const char *ename = e->name;
	unsigned int mode;

	for (mode = 2; mode <= 3; mode++)
		check_between_passes(e, ename, mode);
	for (mode = 1; mode <= 3; mode++) {
		check_writer_thread(e, ename, mode, 0);
		check_writer_thread(e, ename, mode, 1);
	}
}

int main(void)
{
	const char *env = getenv("AESLOOP_SEED");

	seed = env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
	rng_state = seed ? seed : 1;
	t_note("seed %llu", (unsigned long long)seed);
	make_versions();

	check_engine(&loop_aes_generic_engine);
	t_each_arch_engine("changing-source", check_engine);
	return t_exit();
}
