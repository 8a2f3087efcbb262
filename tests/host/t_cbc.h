/* SPDX-License-Identifier: GPL-2.0 */
/*
 * t_cbc.h - the harness of test_aesni.c and test_arm64ce.c: each path's
 * CBC assembly against the generic C code and OpenSSL (every sector count
 * 1..MAX_SECT, the three key shapes, odd addresses, apart and in place,
 * guards around the output), decryption with zero IVs, each engine
 * against the generic engine through loop_aes, the probe.  A program
 * gives its table of assembly entry points (struct asm_path) and engine
 * names in a struct t_cbc_arch and calls t_cbc_main().
 */
#ifndef AESLOOP_T_CBC_H
#define AESLOOP_T_CBC_H

#include <openssl/evp.h>
#include <stdint.h>
#include <sys/mman.h>

#include "aes.h"
#include "engines.h"
#include "loop_aes.h"
#include "testutil.h"

#define MAX_SECT	40
#define NKEYS		7
#define GUARD		64	/* bytes checked on each side of an output */

static uint64_t seed;

/* The assembly of one path: dec and md5 NULL where it has none. */
struct asm_path {
	const char *name;
	unsigned int path;	/* for aesloop_arch_cpu_has() */
	loop_aes_cbc_fn *enc, *dec;
	loop_aes_cbc1_fn *enc1;
	loop_aes_cbc_gather_fn *enc1g;
	loop_aes_ivs_fn *md5;
};

static const EVP_CIPHER *evp_cbc(unsigned int key_len)
{
	return key_len == 16 ? EVP_aes_128_cbc() :
	       key_len == 24 ? EVP_aes_192_cbc() : EVP_aes_256_cbc();
}

static int openssl_sector(EVP_CIPHER_CTX *c, int enc, const u8 *key,
			  unsigned int key_len, const u8 *iv, u8 *out,
			  const u8 *in)
{
	int n;

	return EVP_CipherInit_ex(c, evp_cbc(key_len), NULL, key, iv, enc) &&
	       EVP_CIPHER_CTX_set_padding(c, 0) &&
	       EVP_CipherUpdate(c, out, &n, in, LOOP_AES_SECTOR_SIZE) &&
	       n == LOOP_AES_SECTOR_SIZE;
}

struct bufs {
	u8 raw[NKEYS][32];
	struct aes_key keys[NKEYS];
	const struct aes_key *kp[MAX_SECT];
	u8 ivs[MAX_SECT * AES_BLOCK_LEN];
	u8 src[MAX_SECT * LOOP_AES_SECTOR_SIZE];
	u8 gen[MAX_SECT * LOOP_AES_SECTOR_SIZE];	/* the generic code's */
	u8 ssl[MAX_SECT * LOOP_AES_SECTOR_SIZE];	/* OpenSSL's */
	u8 area[MAX_SECT * LOOP_AES_SECTOR_SIZE + 2 * GUARD + 16];
};

enum { KEYS_ONE, KEYS_MULTI, KEYS_GATHER };
static const char *const key_modes[] = { "one", "multi", "gather" };

/*
 * One path, key length, direction and key mode (KEYS_*) over every count
 * 1..40.  Returns 1 if all agreed; prints the failed result otherwise.
 */
static int check_cbc(const struct asm_path *p, unsigned int key_len, int enc,
		     int multi, struct bufs *b, EVP_CIPHER_CTX *c,
		     const char *name)
{
	unsigned int n, i, k, inplace;

	for (n = 1; n <= MAX_SECT; n++) {
		size_t len = (size_t)n * LOOP_AES_SECTOR_SIZE;

		for (k = 0; k < NKEYS; k++) {
			rng_fill(b->raw[k], key_len);
			aes_key_setup(&b->keys[k], b->raw[k], key_len);
		}
		rng_fill(b->ivs, n * AES_BLOCK_LEN);
		rng_fill(b->src, len);
		for (i = 0; i < n; i++) {
			k = multi == KEYS_MULTI ?
			    (unsigned int)(rng_next() % NKEYS) : 0;
			b->kp[i] = &b->keys[k];
			if (enc)
				aes_cbc_encrypt(b->kp[i], b->gen + i * 512,
						b->src + i * 512, 512,
						b->ivs + i * 16);
			else
				aes_cbc_decrypt(b->kp[i], b->gen + i * 512,
						b->src + i * 512, 512,
						b->ivs + i * 16);
			if (!openssl_sector(c, enc, b->raw[k], key_len,
					    b->ivs + i * 16, b->ssl + i * 512,
					    b->src + i * 512)) {
				t_result(0, name, "OpenSSL failed");
				return 0;
			}
		}
		if (memcmp(b->gen, b->ssl, len)) {
			t_result(0, name, "generic code differs from OpenSSL: seed %llu, %u sectors",
				 (unsigned long long)seed, n);
			return 0;
		}
		/* gather: the sources must not overlap the destination */
		for (inplace = 0; inplace < 2 - (multi == KEYS_GATHER); inplace++) {
			/* odd offsets: no alignment may be assumed */
			static u8 apart[MAX_SECT * LOOP_AES_SECTOR_SIZE + 16];
			static u8 *far;
			const u8 *srcs[MAX_SECT];
			size_t dof = GUARD + 1 + n % 15;
			u8 *dst = b->area + dof;
			const u8 *src = inplace ? dst : apart + n % 13;

			memset(b->area, 0xa5, sizeof(b->area));
			if (multi == KEYS_GATHER) {
				if (!far)
					far = mmap(NULL, sizeof(apart),
						   PROT_READ | PROT_WRITE,
						   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (far == MAP_FAILED) {
					t_result(0, name, "mmap failed");
					return 0;
				}
				for (i = 0; i < n; i++) {
					srcs[i] = (i % 2 ? src : far + n % 13) +
						  (n - 1 - i) * 512;
					memcpy((u8 *)srcs[i], b->src + i * 512, 512);
				}
				p->enc1g(b->kp[0], b->ivs, dst, srcs, n);
			} else {
				memcpy((u8 *)src, b->src, len);
				if (!enc)
					p->dec(b->kp, b->ivs, dst, src, n);
				else if (multi == KEYS_MULTI)
					p->enc(b->kp, b->ivs, dst, src, n);
				else
					p->enc1(b->kp[0], b->ivs, dst, src, n);
			}
			if (memcmp(dst, b->gen, len)) {
				t_result(0, name, "differs from the generic code and OpenSSL: seed %llu, %u sectors, %s",
					 (unsigned long long)seed, n,
					 inplace ? "in place" : "apart");
				return 0;
			}
			if (!t_guards_intact(b->area, sizeof(b->area), dof, len)) {
				t_result(0, name, "wrote outside the %u sectors: seed %llu",
					 n, (unsigned long long)seed);
				return 0;
			}
		}
	}
	t_result(1, name, "");
	return 1;
}

static void check_dec_zero_iv(const struct asm_path *p, struct bufs *b)
{
	char name[96];
	unsigned int n = 21, i;
	size_t len = n * LOOP_AES_SECTOR_SIZE;

	snprintf(name, sizeof(name), "cbc-%s-dec-zero-iv", p->name);
	rng_fill(b->raw[0], 16);
	aes_key_setup(&b->keys[0], b->raw[0], 16);
	rng_fill(b->src, len);
	memset(b->ivs, 0, n * AES_BLOCK_LEN);
	for (i = 0; i < n; i++) {
		b->kp[i] = &b->keys[0];
		aes_cbc_decrypt(b->kp[i], b->gen + i * 512, b->src + i * 512,
				512, b->ivs);
	}
	p->dec(b->kp, NULL, b->ssl, b->src, n);
	t_result(!memcmp(b->ssl, b->gen, len), name,
		 "ivs == NULL is not zero IVs: seed %llu",
		 (unsigned long long)seed);
}

/* ---- the engines, through loop_aes ---- */

static const char *const mode_names[] = { "single", "v2", "v3" };

static void check_engine(const struct loop_aes_engine *e, const char *pname,
			 struct bufs *b)
{
	static u8 slots[(LOOP_AES_MULTI_KEYS + 1) * LOOP_AES_KEY_SLOT];
	struct loop_aes_ctx *ctx;
	unsigned int mode, kl, n;
	char name[96];

	ctx = malloc(loop_aes_ctx_size(LOOP_AES_MULTI_KEYS));
	if (!ctx) {
		t_result(0, "engine", "out of memory");
		return;
	}
	for (mode = 0; mode < 3; mode++) {
		for (kl = 16; kl <= 32; kl += 8) {
			int ok = 1;

			snprintf(name, sizeof(name), "engine-%s-%s-aes%u", pname,
				 mode_names[mode], kl * 8);
			rng_fill(slots, sizeof(slots));
			if (mode == 0)
				loop_aes_setup_single(ctx, slots, kl);
			else
				loop_aes_setup_multi(ctx, slots,
						     LOOP_AES_MULTI_KEYS + (mode == 2),
						     kl);
			for (n = 1; n <= MAX_SECT && ok; n++) {
				size_t len = (size_t)n * LOOP_AES_SECTOR_SIZE;
				u64 s = rng_next() >> (n % 2 ? 8 : 40);
				u8 *buf = b->area + n % 9;
				const char *wrong = NULL;

				rng_fill(b->src, len);
				loop_aes_set_engine(&loop_aes_generic_engine);
				loop_aes_encrypt(ctx, b->gen, b->src, n, s);
				loop_aes_set_engine(e);
				memcpy(buf, b->src, len);
				loop_aes_encrypt(ctx, buf, buf, n, s);
				if (memcmp(buf, b->gen, len)) {
					wrong = "encryption differs from the generic engine";
				} else {
					loop_aes_decrypt(ctx, buf, buf, n, s);
					if (memcmp(buf, b->src, len))
						wrong = "decryption does not give the plaintext";
				}
				if (wrong) {
					t_result(0, name, "%s: seed %llu, %u sectors from %llu",
						 wrong, (unsigned long long)seed, n,
						 (unsigned long long)s);
					ok = 0;
				}
			}
			loop_aes_set_engine(&loop_aes_generic_engine);
			loop_aes_wipe(ctx);
			if (ok)
				t_result(1, name, "");
		}
	}
	free(ctx);
}

/* What differs between the architectures; T_CBC_TABLES fills the first four. */
struct t_cbc_arch {
	const char *const *engine_names;	/* of each aesloop_arch_engine() */
	unsigned int nengines;
	const struct asm_path *paths;
	unsigned int npaths;
	void (*after_probe)(void);		/* more checks, or NULL */
	/* more checks of a path the CPU has, or NULL */
	void (*path_checks)(const struct asm_path *p, struct bufs *b);
};

#define T_CBC_TABLES(names, asm_paths)						\
	.engine_names = (names),						\
	.nengines = sizeof(names) / sizeof((names)[0]),				\
	.paths = (asm_paths),							\
	.npaths = sizeof(asm_paths) / sizeof((asm_paths)[0])

static int t_cbc_main(const struct t_cbc_arch *arch)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	struct bufs *b = calloc(1, sizeof(*b));
	const struct loop_aes_engine *best = NULL;
	unsigned int i, kl, enc, multi;
	char name[96];

	seed = t_seed();
	if (!c || !b) {
		t_result(0, "setup", "out of memory");
		return 1;
	}

	for (i = 0; i < arch->nengines; i++) {
		const struct loop_aes_engine *e = aesloop_arch_engine(i);
		const char *why = NULL;

		snprintf(name, sizeof(name), "cpu-%s", arch->engine_names[i]);
		if (!aesloop_arch_cpu_has(i, &why)) {
			t_skip(name, "this CPU or OS lacks %s", why);
			continue;
		}
		t_result(1, name, "");
		snprintf(name, sizeof(name), "selftest-%s", arch->engine_names[i]);
		t_result(loop_aes_selftest(e) == 0, name, "failed");
		best = e;
		check_engine(e, arch->engine_names[i], b);
	}
	t_result(loop_aes_probe(NULL) == best, "probe",
		 "picked %s, the best this CPU has is %s",
		 loop_aes_probe(NULL) ? loop_aes_probe(NULL)->name : "none",
		 best ? best->name : "none");
	{
		const char *rejected = "unset";

		loop_aes_probe(&rejected);
		t_result(rejected == NULL, "probe-none-rejected",
			 "%s failed its self-test", rejected);
	}
	if (arch->after_probe)
		arch->after_probe();

	for (i = 0; i < arch->npaths; i++) {
		const struct asm_path *p = &arch->paths[i];
		const char *why = NULL;

		if (!aesloop_arch_cpu_has(p->path, &why)) {
			snprintf(name, sizeof(name), "cbc-%s", p->name);
			t_skip(name, "this CPU or OS lacks %s", why);
			continue;
		}
		for (kl = 16; kl <= 32; kl += 8)
			for (enc = 0; enc < 2; enc++)
				for (multi = KEYS_ONE; multi <= KEYS_GATHER; multi++) {
					if ((!enc && !p->dec) ||
					    (!enc && multi == KEYS_GATHER))
						continue;
					snprintf(name, sizeof(name), "cbc-%s-aes%u-%s-%s",
						 p->name, kl * 8, enc ? "enc" : "dec",
						 key_modes[multi]);
					check_cbc(p, kl, enc, multi, b, c, name);
				}
		if (p->dec)
			check_dec_zero_iv(p, b);
		if (arch->path_checks)
			arch->path_checks(p, b);
	}
	EVP_CIPHER_CTX_free(c);
	free(b);
	return t_exit();
}

#endif /* AESLOOP_T_CBC_H */
