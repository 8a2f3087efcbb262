// SPDX-License-Identifier: GPL-2.0
// covers: multi-key v2, multi-key v3, test vectors
/*
 * test_multikey.c - multi-key v2 and v3 (doc/format.md 2.2, 2.3) and the raw MD5
 * compression, against the shared vectors and an OpenSSL reference.
 *
 *  md5-compress-*         md5_compress() equals OpenSSL's MD5_Transform
 *                         on random states and blocks
 *  multi-vectors-CASE     the v2/v3 cases of ../shared/vectors: keys derived
 *                         here from keys64/65.txt with OpenSSL's SHA-2 (spec
 *                         3.3), checked against K0, K63 and the v3 seed
 *                         state; the image's ciphertext SHA-256, IVs of
 *                         sectors 0 and 1; and decryption back
 *  multi-openssl-vN-aesB  2,000 random sectors per mode and key size equal
 *                         to OpenSSL (MD5_Transform for the IV, EVP AES-CBC
 *                         with key S % 64), random 56-bit sector numbers,
 *                         runs of 1..40 sectors; and decryption back
 *
 * Random data comes from a seeded generator; set AESLOOP_SEED to repeat.
 */
#define OPENSSL_SUPPRESS_DEPRECATED	/* MD5_Transform: the raw compression */
#include <openssl/evp.h>
#include <openssl/md5.h>
#include <stdint.h>
#include <time.h>

#include "loop_aes.h"
#include "md5.h"
#include "testutil.h"

#define RANDOM_SECTORS	2000
#define MAX_RUN		40
#define SLOTS		(LOOP_AES_MULTI_KEYS + 1)

static void test_md5_compress(void)
{
	unsigned char block[64];
	int i, ok = 1;

	for (i = 0; i < 1000 && ok; i++) {
		MD5_CTX ref;
		u32 st[4];

		rng_fill(block, sizeof(block));
		MD5_Init(&ref);
		ref.A = st[0] = (u32)rng_next();
		ref.B = st[1] = (u32)rng_next();
		ref.C = st[2] = (u32)rng_next();
		ref.D = st[3] = (u32)rng_next();
		MD5_Transform(&ref, block);
		md5_compress(st, block);
		ok = st[0] == ref.A && st[1] == ref.B && st[2] == ref.C && st[3] == ref.D;
	}
	t_result(ok, "md5-compress-openssl", "differs from MD5_Transform at round %d", i);
}

/* The reference IV: OpenSSL's MD5_Transform over the blocks of spec 2.2. */
static void ref_iv(const u32 seed[4], const unsigned char *p, uint64_t s,
		   unsigned char iv[16])
{
	unsigned char last[64];
	MD5_CTX m;
	int i;

	MD5_Init(&m);
	m.A = seed[0];
	m.B = seed[1];
	m.C = seed[2];
	m.D = seed[3];
	for (i = 0; i < 7; i++)
		MD5_Transform(&m, p + 16 + 64 * i);
	memcpy(last, p + 464, 48);
	for (i = 0; i < 4; i++) {
		last[48 + i] = (unsigned char)(s >> (8 * i));
		last[52 + i] = (unsigned char)(((((s >> 32) & 0xffffff) | 0x80000000ULL)) >> (8 * i));
		last[56 + i] = (unsigned char)(4024 >> (8 * i));
		last[60 + i] = 0;
	}
	MD5_Transform(&m, last);
	for (i = 0; i < 4; i++) {
		u32 w = i == 0 ? m.A : i == 1 ? m.B : i == 2 ? m.C : m.D;

		iv[4 * i] = (unsigned char)w;
		iv[4 * i + 1] = (unsigned char)(w >> 8);
		iv[4 * i + 2] = (unsigned char)(w >> 16);
		iv[4 * i + 3] = (unsigned char)(w >> 24);
	}
}

static const EVP_CIPHER *evp_cbc(unsigned int key_len)
{
	return key_len == 16 ? EVP_aes_128_cbc() :
	       key_len == 24 ? EVP_aes_192_cbc() : EVP_aes_256_cbc();
}

/* Reference encryption of one multi-key sector. */
static int ref_sector(EVP_CIPHER_CTX *c, const unsigned char *slots,
		      unsigned int key_len, const u32 seed[4], uint64_t s,
		      unsigned char *out, const unsigned char *in)
{
	unsigned char iv[16];
	int n;

	ref_iv(seed, in, s, iv);
	if (!EVP_EncryptInit_ex(c, evp_cbc(key_len), NULL,
				slots + (s % 64) * LOOP_AES_KEY_SLOT, iv) ||
	    !EVP_CIPHER_CTX_set_padding(c, 0) ||
	    !EVP_EncryptUpdate(c, out, &n, in, 512) || n != 512)
		return -1;
	return 0;
}

static void seed_of(u32 seed[4], const unsigned char *slots, unsigned int count)
{
	MD5_CTX m;
	unsigned char block[64] = { 0 };

	seed[0] = MD5_INIT_A;
	seed[1] = MD5_INIT_B;
	seed[2] = MD5_INIT_C;
	seed[3] = MD5_INIT_D;
	if (count != SLOTS)
		return;
	memcpy(block, slots + 64 * LOOP_AES_KEY_SLOT, 16);
	MD5_Init(&m);
	MD5_Transform(&m, block);
	seed[0] = m.A;
	seed[1] = m.B;
	seed[2] = m.C;
	seed[3] = m.D;
}

static void test_random(unsigned int count, unsigned int key_len, uint64_t seed)
{
	unsigned char slots[SLOTS * LOOP_AES_KEY_SLOT];
	size_t bytes = MAX_RUN * 512;
	unsigned char *pt = malloc(bytes), *ct = malloc(bytes), *ref = malloc(bytes);
	struct loop_aes_ctx *ctx = malloc(loop_aes_ctx_size(LOOP_AES_MULTI_KEYS));
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	char name[64];
	int done = 0, bad = 0;
	u32 st[4];

	snprintf(name, sizeof(name), "multi-openssl-v%d-aes%u",
		 count == SLOTS ? 3 : 2, key_len * 8);
	if (!pt || !ct || !ref || !ctx || !c) {
		t_result(0, name, "out of memory");
		goto out;
	}
	while (done < RANDOM_SECTORS && !bad) {
		size_t n = 1 + rng_next() % MAX_RUN, i;
		uint64_t s = rng_next() & 0x00ffffffffffffffULL;

		rng_fill(slots, sizeof(slots));
		rng_fill(pt, n * 512);
		seed_of(st, slots, count);
		if (loop_aes_setup_multi(ctx, slots, count, key_len)) {
			t_result(0, name, "setup failed");
			goto out;
		}
		for (i = 0; i < n; i++)
			if (ref_sector(c, slots, key_len, st, s + i, ref + i * 512,
				       pt + i * 512))
				bad = 1;
		memcpy(ct, pt, n * 512);
		loop_aes_encrypt(ctx, ct, ct, n, s);
		if (bad || memcmp(ct, ref, n * 512)) {
			t_result(0, name, "encrypt differs: seed %llu, %zu sectors from %llu",
				 (unsigned long long)seed, n, (unsigned long long)s);
			bad = 1;
			break;
		}
		loop_aes_decrypt(ctx, ref, ct, n, s);
		if (memcmp(ref, pt, n * 512)) {
			t_result(0, name, "decrypt does not invert: seed %llu, %zu sectors from %llu",
				 (unsigned long long)seed, n, (unsigned long long)s);
			bad = 1;
		}
		done += n;
	}
	if (!bad)
		t_result(1, name, "");
out:
	if (ctx)
		loop_aes_wipe(ctx);
	free(ctx);
	free(pt);
	free(ct);
	free(ref);
	EVP_CIPHER_CTX_free(c);
}

/* Spec 3.3: each line hashed, truncated to 32 bytes, byte 0 tweaked. */
static unsigned int derive_slots(const char *file, const char *hash,
				 unsigned int key_bits, unsigned char *slots)
{
	const EVP_MD *md = !strcmp(hash, "sha512") ? EVP_sha512() :
			   !strcmp(hash, "sha384") ? EVP_sha384() :
			   !strcmp(hash, "sha256") ? EVP_sha256() :
			   key_bits == 128 ? EVP_sha256() :
			   key_bits == 192 ? EVP_sha384() : EVP_sha512();
	size_t len, start = 0, i;
	unsigned char *txt = t_read_file(file, &len), out[64];
	unsigned int count = 0, n;

	if (!txt)
		return 0;
	for (i = 0; i <= len && count < SLOTS; i++) {
		if (i < len && txt[i] != '\n')
			continue;
		if (i - start >= 20) {
			EVP_Digest(txt + start, i - start, out, &n, md, NULL);
			memcpy(slots + count * LOOP_AES_KEY_SLOT, out, 32);
			count++;
		}
		start = i + 1;
	}
	for (i = 0; i < count; i++)
		slots[i * LOOP_AES_KEY_SLOT] ^= count == SLOTS ? 0xf4 : 0x55;
	free(txt);
	return count;
}

static void test_vectors(void)
{
	char line[2048], iline[2048], *f[10], *g[13], path[4096], name[160], got[65];
	unsigned char slots[SLOTS * LOOP_AES_KEY_SLOT], want[32], *img, *ct = NULL, md[32];
	struct loop_aes_ctx *ctx = malloc(loop_aes_ctx_size(LOOP_AES_MULTI_KEYS));
	FILE *tsv, *itsv = NULL;
	size_t img_len;
	int cases = 0;

	img = t_read_file("plain64.img", &img_len);
	snprintf(path, sizeof(path), "%s/vectors.tsv", t_vectors_dir());
	tsv = fopen(path, "r");
	snprintf(path, sizeof(path), "%s/intermediates.tsv", t_vectors_dir());
	itsv = fopen(path, "r");
	if (!ctx || !img || !tsv || !itsv || !(ct = malloc(img_len))) {
		t_result(0, "multi-vectors", "cannot read the vectors in %s", t_vectors_dir());
		goto out;
	}
	while (fgets(line, sizeof(line), tsv)) {
		unsigned int key_bits, count, len;
		uint64_t iv0;
		int found = 0, ok;

		if (t_split_tsv(line, f, 10) < 10 || (strcmp(f[8], "v2") && strcmp(f[8], "v3")))
			continue;
		snprintf(name, sizeof(name), "multi-vectors-%s", f[0]);
		key_bits = (unsigned int)atoi(f[9]);
		iv0 = strtoull(f[6], NULL, 10);
		count = derive_slots(f[2] + 5, f[3], key_bits, slots);
		rewind(itsv);
		while (!found && fgets(iline, sizeof(iline), itsv))
			found = t_split_tsv(iline, g, 13) == 13 && !strcmp(g[0], f[0]);
		if (!found || count != (strcmp(f[8], "v3") ? 64U : 65U)) {
			t_result(0, name, "%u key lines, or no intermediates row", count);
			continue;
		}
		/* The derivation of the oracle itself, against the vectors. */
		t_unhex(want, key_bits / 8, g[5]);
		ok = !memcmp(want, slots, key_bits / 8);
		t_unhex(want, key_bits / 8, g[6]);
		ok = ok && !memcmp(want, slots + 63 * LOOP_AES_KEY_SLOT, key_bits / 8);
		if (!ok || loop_aes_setup_multi(ctx, slots, count, key_bits / 8)) {
			t_result(0, name, "K0/K63 differ from intermediates.tsv, or setup failed");
			continue;
		}
		if (count == SLOTS) {
			unsigned char st[16];

			for (int i = 0; i < 16; i++)
				st[i] = (unsigned char)(ctx->iv_seed[i / 4] >> (8 * (i % 4)));
			t_unhex(want, 16, g[8]);
			if (memcmp(st, want, 16)) {
				t_result(0, name, "v3 seed state differs from %s", g[8]);
				continue;
			}
		}
		loop_aes_encrypt(ctx, ct, img, img_len / 512, iv0);
		EVP_Digest(ct, img_len, md, &len, EVP_sha256(), NULL);
		t_hex(got, md, 32);
		if (strcmp(got, f[7])) {
			t_result(0, name, "ciphertext SHA-256 %s, want %s", got, f[7]);
			continue;
		}
		t_unhex(want, 32, g[11]);
		if (memcmp(ct, want, 32)) {
			t_result(0, name, "first blocks of sector 0 differ");
			continue;
		}
		loop_aes_decrypt(ctx, ct, ct, img_len / 512, iv0);
		t_result(!memcmp(ct, img, img_len), name, "decrypt does not give plain64.img back");
		cases++;
	}
	t_result(cases == 11, "multi-vectors-count", "%d multi-key cases, want 11", cases);
out:
	if (ctx)
		loop_aes_wipe(ctx);
	free(ctx);
	if (tsv)
		fclose(tsv);
	if (itsv)
		fclose(itsv);
	free(img);
	free(ct);
}

static void test_bad_setup(void)
{
	unsigned char slots[SLOTS * LOOP_AES_KEY_SLOT] = { 0 };
	struct loop_aes_ctx *ctx = malloc(loop_aes_ctx_size(LOOP_AES_MULTI_KEYS));
	int ok = ctx &&
		 loop_aes_setup_multi(ctx, slots, 63, 16) == -EINVAL &&
		 loop_aes_setup_multi(ctx, slots, 66, 16) == -EINVAL &&
		 loop_aes_setup_multi(ctx, slots, 64, 7) == -EINVAL &&
		 loop_aes_setup_multi(ctx, slots, 65, 33) == -EINVAL;

	t_result(ok, "multi-setup-invalid", "a bad key count or size was accepted");
	free(ctx);
}

int main(void)
{
	const char *s = getenv("AESLOOP_SEED");
	uint64_t seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);

	rng_state = seed | 1;
	test_md5_compress();
	test_bad_setup();
	test_vectors();
	for (unsigned int k = 16; k <= 32; k += 8) {
		test_random(64, k, seed);
		test_random(65, k, seed);
	}
	return t_exit();
}
