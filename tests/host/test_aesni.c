// SPDX-License-Identifier: GPL-2.0
/*
 * test_aesni.c - the aes-intel paths (INTELAES=y: ssse3, aesni, vaes-*)
 * against the generic C code and OpenSSL.
 *
 *  cpu-PATH                   the path runs here, or skipped with the missing
 *                             feature (every check of that path is skipped)
 *  selftest-PATH              loop_aes_selftest() passes
 *  cbc-PATH-aesN-DIR-KEYS     the assembly (DIR enc or dec; KEYS one: one
 *                             key, enc1_*; multi: a key per sector; gather:
 *                             one key, enc1g_*, each sector read from its
 *                             own address, in reverse order, every other
 *                             one from a mapping of its own, far from the
 *                             destination as the page cache is) equals
 *                             aes_cbc_encrypt/decrypt per sector and OpenSSL
 *                             EVP AES-N-CBC per sector, for every sector
 *                             count 1..40, random keys, IVs and data,
 *                             buffers at odd addresses, apart and in place;
 *                             and never writes outside the sectors
 *  cbc-PATH-dec-zero-iv       decryption with ivs == NULL is zero IVs
 *  md5-PATH-vN                the multi-key IVs of 1..40 sectors equal a
 *                             scalar reference written here from spec 2.2
 *                             (v2: OpenSSL MD5 of bytes 16..511 and S as 7
 *                             bytes; v3: OpenSSL MD5_Transform from the
 *                             seeded state), random S including carries
 *                             across 2^32
 *  engine-PATH-MODE-aesN      loop_aes_encrypt/decrypt through the path's
 *                             engine equal the generic engine for single-key,
 *                             v2 and v3 volumes, 1..40 sectors (more than one
 *                             FPU section), in place
 *  probe                      loop_aes_probe(NULL) picks the best path the
 *                             CPU has
 *
 * Random data comes from a seeded generator; a failure prints the seed and
 * the parameters (set AESLOOP_SEED to repeat a run).
 */
#define OPENSSL_SUPPRESS_DEPRECATED	/* MD5_Transform: the raw compression */
#include <openssl/evp.h>
#include <openssl/md5.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "aes-intel.h"
#include "loop_aes.h"
#include "testutil.h"

#define MAX_SECT	40
#define NKEYS		7
#define GUARD		64	/* bytes checked on each side of an output */

static uint64_t seed;

typedef void cbc_fn(const struct aes_key *const *keys, const u8 *ivs,
		    u8 *dst, const u8 *src, unsigned int nsect);
typedef void cbc1_fn(const struct aes_key *key, const u8 *ivs, u8 *dst,
		     const u8 *src, unsigned int nsect);
typedef void cbc1g_fn(const struct aes_key *key, const u8 *ivs, u8 *dst,
		      const u8 *const *srcs, unsigned int nsect);
typedef void md5_fn(const u32 seed[4], const u8 *data, u64 sector, u8 *ivs,
		    unsigned int nsect);

/*
 * The ssse3 assembly takes a key and a source pointer per sector for every
 * encryption: these give it the other paths' three shapes.
 */
static void ssse3_enc(const struct aes_key *const *keys, const u8 *ivs,
		      u8 *dst, const u8 *src, unsigned int nsect)
{
	const u8 *srcs[MAX_SECT];
	unsigned int i;

	for (i = 0; i < nsect; i++)
		srcs[i] = src + i * LOOP_AES_SECTOR_SIZE;
	aesloop_cbc_enc_ssse3(keys, ivs, dst, srcs, nsect);
}

static void ssse3_enc1g(const struct aes_key *key, const u8 *ivs, u8 *dst,
			const u8 *const *srcs, unsigned int nsect)
{
	const struct aes_key *keys[MAX_SECT];
	unsigned int i;

	for (i = 0; i < nsect; i++)
		keys[i] = key;
	aesloop_cbc_enc_ssse3(keys, ivs, dst, srcs, nsect);
}

static void ssse3_enc1(const struct aes_key *key, const u8 *ivs, u8 *dst,
		       const u8 *src, unsigned int nsect)
{
	const u8 *srcs[MAX_SECT];
	unsigned int i;

	for (i = 0; i < nsect; i++)
		srcs[i] = src + i * LOOP_AES_SECTOR_SIZE;
	ssse3_enc1g(key, ivs, dst, srcs, nsect);
}

/*
 * The assembly of each path.  "avx" is the xmm/VEX encryption the VAES
 * paths use for calls of fewer sectors than their lanes; it is tested
 * directly at every count too, with the features of vaes-avx2.
 */
static const struct asm_path {
	const char *name;
	enum aesloop_intel_path path;
	cbc_fn *enc, *dec;
	cbc1_fn *enc1;
	cbc1g_fn *enc1g;
	md5_fn *md5;
} paths[] = {
	{ "ssse3", AESLOOP_INTEL_SSSE3, ssse3_enc, aesloop_cbc_dec_ssse3,
	  ssse3_enc1, ssse3_enc1g, NULL },
	{ "aesni", AESLOOP_INTEL_AESNI, aesloop_cbc_enc_aesni,
	  aesloop_cbc_dec_aesni, aesloop_cbc_enc1_aesni,
	  aesloop_cbc_enc1g_aesni, NULL },
	{ "avx", AESLOOP_INTEL_VAES_AVX2, aesloop_cbc_enc_avx,
	  NULL, aesloop_cbc_enc1_avx, aesloop_cbc_enc1g_avx, NULL },
	{ "vaes-avx2", AESLOOP_INTEL_VAES_AVX2, aesloop_cbc_enc_vaes_avx2,
	  aesloop_cbc_dec_vaes_avx2, aesloop_cbc_enc1_vaes_avx2,
	  aesloop_cbc_enc1g_vaes_avx2,
	  aesloop_md5_iv_avx2 },
	{ "vaes-avx512", AESLOOP_INTEL_VAES_AVX512, aesloop_cbc_enc_vaes_avx512,
	  aesloop_cbc_dec_vaes_avx512, aesloop_cbc_enc1_vaes_avx512,
	  aesloop_cbc_enc1g_vaes_avx512,
	  aesloop_md5_iv_avx512 },
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

static int guards_intact(const u8 *area, size_t off, size_t len)
{
	size_t i;

	for (i = 0; i < off; i++)
		if (area[i] != 0xa5)
			return 0;
	for (i = off + len; i < sizeof(((struct bufs *)0)->area); i++)
		if (area[i] != 0xa5)
			return 0;
	return 1;
}

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
			if (!guards_intact(b->area, dof, len)) {
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

/* ---- multi-key IVs ---- */

static void md5_transform_from(u32 st[4], const u8 block[64])
{
	MD5_CTX m;

	MD5_Init(&m);
	m.A = st[0];
	m.B = st[1];
	m.C = st[2];
	m.D = st[3];
	MD5_Transform(&m, block);
	st[0] = m.A;
	st[1] = m.B;
	st[2] = m.C;
	st[3] = m.D;
}

/*
 * Spec 2.2/2.3, written from the spec: v2 as OpenSSL MD5 of bytes 16..511
 * then S as 7 little-endian bytes (which the spec says is the same thing);
 * v3 from the seeded state, block by block with MD5_Transform.
 */
static void ref_iv(int v3, const u32 seeded[4], const u8 *sector_data,
		   u64 s, u8 iv[16])
{
	u8 msg[496 + 7], last[64];
	u32 st[4];
	int i;

	if (!v3) {
		memcpy(msg, sector_data + 16, 496);
		for (i = 0; i < 7; i++)
			msg[496 + i] = (u8)(s >> (8 * i));
		MD5(msg, sizeof(msg), iv);
		return;
	}
	memcpy(st, seeded, sizeof(st));
	for (i = 0; i < 7; i++)
		md5_transform_from(st, sector_data + 16 + 64 * i);
	memcpy(last, sector_data + 464, 48);
	aes_put_le32(last + 48, (u32)s);
	aes_put_le32(last + 52, (u32)((s >> 32) & 0xffffff) | 0x80000000U);
	aes_put_le32(last + 56, 4024);
	aes_put_le32(last + 60, 0);
	md5_transform_from(st, last);
	for (i = 0; i < 4; i++)
		aes_put_le32(iv + 4 * i, st[i]);
}

static void check_md5(const char *pname, md5_fn *md5, int v3, struct bufs *b)
{
	static const u32 init[4] = {
		0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476
	};
	char name[96];
	u32 st[4];
	u8 out[(MAX_SECT + 1) * 16], want[MAX_SECT * 16], block[64] = { 0 };
	unsigned int n, i;

	snprintf(name, sizeof(name), "md5-%s-v%d", pname, v3 ? 3 : 2);
	memcpy(st, init, sizeof(st));
	if (v3) {
		rng_fill(block, 16);	/* key 65's first 16 bytes */
		md5_transform_from(st, block);
	}
	for (n = 1; n <= MAX_SECT; n++) {
		/* sector numbers around 2^32 and up to 2^56 - 1 */
		u64 s = n % 3 ? 0xffffffffULL - n / 2 :
			rng_next() >> (8 + n % 9);
		const u8 *data = b->area + n % 11;

		rng_fill(b->area, sizeof(b->area));
		for (i = 0; i < n; i++)
			ref_iv(v3, st, data + i * 512, s + i, want + i * 16);
		memset(out, 0xa5, sizeof(out));
		md5(st, data, s, out, n);
		if (memcmp(out, want, n * 16)) {
			t_result(0, name, "IVs differ from the reference: seed %llu, %u sectors from %llu",
				 (unsigned long long)seed, n,
				 (unsigned long long)s);
			return;
		}
		for (i = n * 16; i < sizeof(out); i++)
			if (out[i] != 0xa5) {
				t_result(0, name, "wrote past %u IVs", n);
				return;
			}
	}
	t_result(1, name, "");
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

				rng_fill(b->src, len);
				loop_aes_set_engine(&loop_aes_generic_engine);
				loop_aes_encrypt(ctx, b->gen, b->src, n, s);
				loop_aes_set_engine(e);
				memcpy(buf, b->src, len);
				loop_aes_encrypt(ctx, buf, buf, n, s);
				if (memcmp(buf, b->gen, len)) {
					t_result(0, name, "encryption differs from the generic engine: seed %llu, %u sectors from %llu",
						 (unsigned long long)seed, n,
						 (unsigned long long)s);
					ok = 0;
					break;
				}
				loop_aes_decrypt(ctx, buf, buf, n, s);
				if (memcmp(buf, b->src, len)) {
					t_result(0, name, "decryption does not give the plaintext: seed %llu, %u sectors from %llu",
						 (unsigned long long)seed, n,
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

int main(void)
{
	static const char *const engine_names[AESLOOP_INTEL_NR_PATHS] = {
		"ssse3", "aesni", "vaes-avx2", "vaes-avx512"
	};
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	struct bufs *b = calloc(1, sizeof(*b));
	const struct loop_aes_engine *best = NULL;
	const char *env = getenv("AESLOOP_SEED");
	unsigned int i, kl, enc, multi;
	char name[96];
	int v3;

	seed = env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
	rng_state = seed ? seed : 1;
	t_note("seed %llu", (unsigned long long)seed);
	if (!c || !b) {
		t_result(0, "setup", "out of memory");
		return 1;
	}

	for (i = 0; i < AESLOOP_INTEL_NR_PATHS; i++) {
		const struct loop_aes_engine *e = aesloop_arch_engine(i);
		const char *why = NULL;

		snprintf(name, sizeof(name), "cpu-%s", engine_names[i]);
		if (!aesloop_arch_cpu_has(i, &why)) {
			t_skip(name, "this CPU or OS lacks %s", why);
			continue;
		}
		t_result(1, name, "");
		snprintf(name, sizeof(name), "selftest-%s", engine_names[i]);
		t_result(loop_aes_selftest(e) == 0, name, "failed");
		best = e;
		check_engine(e, engine_names[i], b);
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

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const struct asm_path *p = &paths[i];
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
		for (v3 = 0; v3 < 2 && p->md5; v3++)
			check_md5(p->name, p->md5, v3, b);
	}
	EVP_CIPHER_CTX_free(c);
	free(b);
	return t_exit();
}
