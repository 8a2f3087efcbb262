// SPDX-License-Identifier: GPL-2.0
// covers: AES generic, single-key, test vectors
/*
 * test_aes.c - the generic AES and the single-key sector transform against
 * FIPS-197 and OpenSSL.
 *
 *  aes-fips197-*          FIPS-197 Appendix B and C, both directions
 *  sector-openssl-aesN    10,000 random sectors per key size: equal to
 *                         OpenSSL AES-N-CBC with the plain64 IV (doc/format.md 2.1),
 *                         in runs of 1..16 consecutive sectors, random
 *                         64-bit IV sectors, in place and not; and back
 *  sector-vectors-CASE    the single-key cases of ../shared/vectors with
 *                         their key bytes given: the whole image's SHA-256
 *                         and the first ciphertext blocks
 *  key-size-invalid       key lengths other than 16/24/32 are refused
 *
 * Random data comes from a seeded generator; a failure prints the seed
 * (set AESLOOP_SEED to repeat a run).
 */
#include <openssl/evp.h>
#include <stdint.h>
#include <time.h>

#include "loop_aes.h"
#include "testutil.h"

#define RANDOM_SECTORS	10000
#define MAX_RUN		16

static const EVP_CIPHER *evp_cbc(unsigned int key_len)
{
	return key_len == 16 ? EVP_aes_128_cbc() :
	       key_len == 24 ? EVP_aes_192_cbc() : EVP_aes_256_cbc();
}

/* OpenSSL's view of one sector: AES-CBC, IV = LE64(sector) || 0^64. */
static int openssl_sector(EVP_CIPHER_CTX *c, int enc, const unsigned char *key,
			  unsigned int key_len, uint64_t sector,
			  unsigned char *out, const unsigned char *in)
{
	unsigned char iv[16] = { 0 };
	int n, i;

	for (i = 0; i < 8; i++)
		iv[i] = (unsigned char)(sector >> (8 * i));
	if (!EVP_CipherInit_ex(c, evp_cbc(key_len), NULL, key, iv, enc) ||
	    !EVP_CIPHER_CTX_set_padding(c, 0) ||
	    !EVP_CipherUpdate(c, out, &n, in, LOOP_AES_SECTOR_SIZE) ||
	    n != LOOP_AES_SECTOR_SIZE)
		return -1;
	return 0;
}

static void test_fips197(void)
{
	char line[512], *f[4], name[128];
	unsigned char key[32], pt[16], ct[16], out[16];
	struct aes_key k;
	FILE *tsv;
	char path[4096];
	int rows = 0;

	snprintf(path, sizeof(path), "%s/fips197.tsv", t_vectors_dir());
	tsv = fopen(path, "r");
	if (!tsv) {
		t_result(0, "aes-fips197", "cannot open %s", path);
		return;
	}
	if (!fgets(line, sizeof(line), tsv))	/* header */
		line[0] = 0;
	while (fgets(line, sizeof(line), tsv)) {
		size_t key_len;

		if (t_split_tsv(line, f, 4) != 4)
			continue;
		key_len = strlen(f[1]) / 2;
		snprintf(name, sizeof(name), "aes-fips197-%s", f[0]);
		for (char *p = name; *p; p++)
			if (*p == ' ' || *p == '.')
				*p = '-';
		if (t_unhex(key, key_len, f[1]) || t_unhex(pt, 16, f[2]) ||
		    t_unhex(ct, 16, f[3]) || aes_key_setup(&k, key, key_len)) {
			t_result(0, name, "bad row in %s", path);
			continue;
		}
		aes_encrypt_block(&k, out, pt);
		if (memcmp(out, ct, 16)) {
			char hex[33];

			t_hex(hex, out, 16);
			t_result(0, name, "encrypt gave %s, want %s", hex, f[3]);
			continue;
		}
		aes_decrypt_block(&k, out, ct);
		t_result(!memcmp(out, pt, 16), name, "decrypt does not give %s", f[2]);
		rows++;
	}
	fclose(tsv);
	aes_key_wipe(&k);
	t_result(rows >= 4, "aes-fips197-rows", "only %d rows in %s", rows, path);
}

static void test_random_sectors(unsigned int key_len, uint64_t seed)
{
	unsigned char key[32], *pt, *ct, *ref, *back;
	size_t bytes = MAX_RUN * LOOP_AES_SECTOR_SIZE;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	struct loop_aes_ctx *ctx = malloc(loop_aes_ctx_size(1));
	char name[64];
	int done = 0, bad = 0;

	snprintf(name, sizeof(name), "sector-openssl-aes%u", key_len * 8);
	pt = malloc(bytes);
	ct = malloc(bytes);
	ref = malloc(bytes);
	back = malloc(bytes);
	if (!c || !ctx || !pt || !ct || !ref || !back) {
		t_result(0, name, "out of memory");
		goto out;
	}
	while (done < RANDOM_SECTORS && !bad) {
		size_t n = 1 + rng_next() % MAX_RUN, i;
		uint64_t sector = rng_next();
		int in_place = rng_next() & 1;

		/* Small sector numbers too, where most real data lives. */
		if (rng_next() & 1)
			sector &= 0xffffff;
		rng_fill(key, key_len);
		rng_fill(pt, n * LOOP_AES_SECTOR_SIZE);
		if (loop_aes_setup_single(ctx, key, key_len)) {
			t_result(0, name, "key setup failed");
			goto out;
		}
		for (i = 0; i < n; i++)
			if (openssl_sector(c, 1, key, key_len, sector + i,
					   ref + i * LOOP_AES_SECTOR_SIZE,
					   pt + i * LOOP_AES_SECTOR_SIZE))
				bad = 1;
		if (in_place) {
			memcpy(ct, pt, n * LOOP_AES_SECTOR_SIZE);
			loop_aes_encrypt(ctx, ct, ct, n, sector);
		} else {
			loop_aes_encrypt(ctx, ct, pt, n, sector);
		}
		if (bad || memcmp(ct, ref, n * LOOP_AES_SECTOR_SIZE)) {
			t_result(0, name, "encrypt differs from OpenSSL: seed %llu, %zu sectors from %llu",
				 (unsigned long long)seed, n, (unsigned long long)sector);
			bad = 1;
			break;
		}
		if (in_place) {
			memcpy(back, ct, n * LOOP_AES_SECTOR_SIZE);
			loop_aes_decrypt(ctx, back, back, n, sector);
		} else {
			loop_aes_decrypt(ctx, back, ct, n, sector);
		}
		if (memcmp(back, pt, n * LOOP_AES_SECTOR_SIZE)) {
			t_result(0, name, "decrypt does not invert: seed %llu, %zu sectors from %llu",
				 (unsigned long long)seed, n, (unsigned long long)sector);
			bad = 1;
			break;
		}
		/* And OpenSSL decrypts what we wrote. */
		if (openssl_sector(c, 0, key, key_len, sector, back, ct) ||
		    memcmp(back, pt, LOOP_AES_SECTOR_SIZE)) {
			t_result(0, name, "OpenSSL cannot decrypt it: seed %llu, sector %llu",
				 (unsigned long long)seed, (unsigned long long)sector);
			bad = 1;
			break;
		}
		done += n;
	}
	if (!bad)
		t_result(1, name, "");
	loop_aes_wipe(ctx);
out:
	free(ctx);
	EVP_CIPHER_CTX_free(c);
	free(pt);
	free(ct);
	free(ref);
	free(back);
}

static int sha256_hex(char out[65], const unsigned char *p, size_t n)
{
	unsigned char md[32];
	unsigned int len;

	if (!EVP_Digest(p, n, md, &len, EVP_sha256(), NULL))
		return -1;
	t_hex(out, md, 32);
	return 0;
}

/* vectors.tsv: case -> expected SHA-256 of the ciphertext image. */
static int vector_sha(const char *name, char *sha, uint64_t *iv_start)
{
	char line[1024], *f[10], path[4096];
	FILE *tsv;
	int found = 0;

	snprintf(path, sizeof(path), "%s/vectors.tsv", t_vectors_dir());
	tsv = fopen(path, "r");
	if (!tsv)
		return -1;
	while (!found && fgets(line, sizeof(line), tsv))
		if (t_split_tsv(line, f, 10) >= 8 && !strcmp(f[0], name)) {
			snprintf(sha, 65, "%s", f[7]);
			*iv_start = strtoull(f[6], NULL, 10);
			found = 1;
		}
	fclose(tsv);
	return found ? 0 : -1;
}

static void test_vectors(void)
{
	char line[2048], *f[13], path[4096], name[160], want[65], got[65];
	unsigned char key[32], first[32], *img, *ct = NULL;
	struct loop_aes_ctx *ctx = malloc(loop_aes_ctx_size(1));
	size_t img_len, nsect;
	uint64_t iv_start;
	FILE *tsv;
	int cases = 0;

	img = t_read_file("plain64.img", &img_len);
	snprintf(path, sizeof(path), "%s/intermediates.tsv", t_vectors_dir());
	tsv = fopen(path, "r");
	if (!ctx || !img || !tsv || img_len % LOOP_AES_SECTOR_SIZE ||
	    !(ct = malloc(img_len))) {
		t_result(0, "sector-vectors", "cannot read plain64.img or %s", path);
		goto out;
	}
	nsect = img_len / LOOP_AES_SECTOR_SIZE;
	while (fgets(line, sizeof(line), tsv)) {
		unsigned int key_len;

		if (t_split_tsv(line, f, 13) != 13 || strcmp(f[1], "single"))
			continue;
		snprintf(name, sizeof(name), "sector-vectors-%s", f[0]);
		key_len = (unsigned int)atoi(f[2]) / 8;
		if (t_unhex(key, key_len, f[4]) || t_unhex(first, 32, f[11]) ||
		    vector_sha(f[0], want, &iv_start) ||
		    loop_aes_setup_single(ctx, key, key_len)) {
			t_result(0, name, "bad row in %s or vectors.tsv", path);
			continue;
		}
		loop_aes_encrypt(ctx, ct, img, nsect, iv_start);
		if (memcmp(ct, first, 32)) {
			t_result(0, name, "first blocks of sector 0 differ from %s", f[11]);
			continue;
		}
		if (sha256_hex(got, ct, img_len) || strcmp(got, want)) {
			t_result(0, name, "ciphertext SHA-256 %s, want %s", got, want);
			continue;
		}
		loop_aes_decrypt(ctx, ct, ct, nsect, iv_start);
		t_result(!memcmp(ct, img, img_len), name, "decrypt does not give plain64.img back");
		cases++;
	}
	loop_aes_wipe(ctx);
	/* vectors/README.md lists 25 single-key cases. */
	t_result(cases >= 20, "sector-vectors-count", "only %d single-key cases found", cases);
out:
	if (tsv)
		fclose(tsv);
	free(ctx);
	free(img);
	free(ct);
}

static void test_bad_key_sizes(void)
{
	static const unsigned int sizes[] = { 0, 7, 15, 17, 31, 33, 64 };
	unsigned char key[64] = { 0 };
	struct loop_aes_ctx *ctx = malloc(loop_aes_ctx_size(1));
	size_t i;
	int ok = ctx != NULL;

	for (i = 0; ok && i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (loop_aes_setup_single(ctx, key, sizes[i]) != -EINVAL)
			ok = 0;
	free(ctx);
	t_result(ok, "key-size-invalid", "a key of a bad length was accepted");
}

int main(void)
{
	const char *s = getenv("AESLOOP_SEED");
	uint64_t seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);

	rng_state = seed | 1;
	test_fips197();
	test_bad_key_sizes();
	test_random_sectors(16, seed);
	test_random_sectors(24, seed);
	test_random_sectors(32, seed);
	test_vectors();
	return t_exit();
}
