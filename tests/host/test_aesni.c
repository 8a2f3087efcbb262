// SPDX-License-Identifier: GPL-2.0
// covers: SSSE3, AES-NI, VAES, engine choice, multi-key v2, multi-key v3
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
#include <openssl/md5.h>

#include "aes-intel.h"
#include "t_cbc.h"

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
static const struct asm_path paths[] = {
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

static void check_md5(const char *pname, loop_aes_ivs_fn *md5, int v3,
		      struct bufs *b)
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

/* The multi-key IVs of the paths that have them. */
static void md5_checks(const struct asm_path *p, struct bufs *b)
{
	int v3;

	for (v3 = 0; v3 < 2 && p->md5; v3++)
		check_md5(p->name, p->md5, v3, b);
}

static const char *const engine_names[AESLOOP_INTEL_NR_PATHS] = {
	"ssse3", "aesni", "vaes-avx2", "vaes-avx512"
};

int main(void)
{
	static const struct t_cbc_arch arch = {
		T_CBC_TABLES(engine_names, paths), .path_checks = md5_checks
	};

	return t_cbc_main(&arch);
}
