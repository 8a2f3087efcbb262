// SPDX-License-Identifier: GPL-2.0
/*
 * keysetup-derive.c - the keys of a loop-AES key setup: which mode the key
 * lines select (doc/format.md §3.3), the passphrase hashes and -C's iterations
 * (§3.2), the single-key key buffer KB, the 64/65 tweaked multi-key slots,
 * and the random keys of -H random.
 */
#include <stdlib.h>
#include <sys/random.h>

#include <openssl/evp.h>

#include "aes.h"
#include "keysetup-internal.h"

/* Key-file marks of doc/format.md §3.3: this many counted lines select a mode. */
#define MULTI_KEY_V2_LINES	KEYSETUP_MULTI_V2
#define MULTI_KEY_V3_LINES	KEYSETUP_MULTI_V3

/* The tweak of byte 0 of every multi-key slot (doc/format.md §3.3). */
#define MULTI_KEY_V2_TWEAK	0x55
#define MULTI_KEY_V3_TWEAK	0xF4

/* One-shot digest of @in into @out (the first @outlen bytes of it). */
static int digest(const EVP_MD *md, const u8 *in, size_t len, u8 *out,
		  size_t outlen)
{
	u8 full[EVP_MAX_MD_SIZE];
	unsigned int full_len = 0;
	int rc = -EIO;

	if (md && EVP_Digest(in, len, full, &full_len, md, NULL) == 1 &&
	    full_len >= outlen) {
		memcpy(out, full, outlen);
		rc = 0;
	}
	memzero_explicit(full, sizeof(full));
	return rc;
}

/* 6-bit value of one unhashed1 character (doc/format.md §3.2). */
static unsigned int unhashed1_value(u8 c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 36;
	if (c == '.')
		return 62;
	if (c == '/')
		return 63;
	return c & 63;
}

/*
 * -H unhashed1: character k of the input, repeated as needed, fills bits
 * 6k..6k+5 of @kb, least significant bit of byte 0 first; 43 characters
 * cover the 256 bits.  @len >= 1.
 */
static void unhashed1(const u8 *in, size_t len, u8 kb[KEYSETUP_KEY_BUFFER_LEN])
{
	unsigned int bit, k;

	memset(kb, 0, KEYSETUP_KEY_BUFFER_LEN);
	for (k = 0, bit = 0; bit < KEYSETUP_KEY_BUFFER_LEN * 8; k++, bit += 6) {
		unsigned int v = unhashed1_value(in[k % len]);
		unsigned int byte = bit / 8, shift = bit % 8;

		kb[byte] |= (u8)(v << shift);
		if (shift > 2 && byte + 1 < KEYSETUP_KEY_BUFFER_LEN)
			kb[byte + 1] |= (u8)(v >> (8 - shift));
	}
}

/*
 * -H rmd160: RIPEMD-160 of the input (20 bytes), then the first 12 bytes
 * of RIPEMD-160 of "A" followed by at most the first 129 input bytes.
 */
static int rmd160_twice(const u8 *in, size_t len, u8 kb[KEYSETUP_KEY_BUFFER_LEN])
{
	const EVP_MD *md = EVP_ripemd160();
	u8 prefixed[1 + 129];
	size_t n = len < 129 ? len : 129;
	int rc;

	rc = digest(md, in, len, kb, 20);
	if (rc)
		return rc;
	prefixed[0] = 'A';
	memcpy(prefixed + 1, in, n);
	rc = digest(md, prefixed, n + 1, kb + 20, 12);
	memzero_explicit(prefixed, sizeof(prefixed));
	return rc;
}

/* The hash that -H (or the key size, for the default) selects. */
static enum keysetup_hash effective_hash(const struct keysetup *ks)
{
	if (ks->hash != KEYSETUP_HASH_DEFAULT)
		return ks->hash;
	if (ks->key_len == 32)
		return KEYSETUP_HASH_SHA512;
	if (ks->key_len == 24)
		return KEYSETUP_HASH_SHA384;
	return KEYSETUP_HASH_SHA256;
}

static const char *hash_name(enum keysetup_hash h)
{
	switch (h) {
	case KEYSETUP_HASH_SHA256:	return "SHA-256";
	case KEYSETUP_HASH_SHA384:	return "SHA-384";
	case KEYSETUP_HASH_SHA512:	return "SHA-512";
	case KEYSETUP_HASH_RMD160:	return "RIPEMD-160";
	default:			return "unhashed";
	}
}

/* Hash @in into the 32-byte buffer @kb with hash @h (doc/format.md §3.2). */
static int hash_key(enum keysetup_hash h, const u8 *in, size_t len,
		    u8 kb[KEYSETUP_KEY_BUFFER_LEN])
{
	memset(kb, 0, KEYSETUP_KEY_BUFFER_LEN);
	switch (h) {
	case KEYSETUP_HASH_SHA256:
		return digest(EVP_sha256(), in, len, kb, 32);
	case KEYSETUP_HASH_SHA384:
		return digest(EVP_sha384(), in, len, kb, 32);
	case KEYSETUP_HASH_SHA512:
		return digest(EVP_sha512(), in, len, kb, 32);
	case KEYSETUP_HASH_RMD160:
		return rmd160_twice(in, len, kb);
	case KEYSETUP_HASH_UNHASHED1:
		unhashed1(in, len, kb);
		return 0;
	case KEYSETUP_HASH_UNHASHED2:
		memcpy(kb, in, len < 31 ? len : 31);
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * -C (doc/format.md §3.2): an AES-256 key from the hash of the input with bit 0 of
 * its first byte flipped encrypts both halves of @kb, then bytes 8..15 and
 * 16..23 change places; itercountk * 1000 times.  @in is restored.
 */
static int iterate_key(enum keysetup_hash h, u8 *in, size_t len,
		       unsigned long itercountk, u8 kb[KEYSETUP_KEY_BUFFER_LEN])
{
	u8 tempkey[KEYSETUP_KEY_BUFFER_LEN], swap[8];
	struct aes_key *aes;
	unsigned long n;
	int rc;

	aes = malloc(sizeof(*aes));
	if (!aes)
		return -ENOMEM;
	in[0] ^= 1;
	rc = hash_key(h, in, len, tempkey);
	in[0] ^= 1;
	if (rc == 0)
		rc = aes_key_setup(aes, tempkey, sizeof(tempkey));
	for (n = itercountk * 1000; rc == 0 && n; n--) {
		aes_encrypt_block(aes, kb, kb);
		aes_encrypt_block(aes, kb + 16, kb + 16);
		memcpy(swap, kb + 8, 8);
		memcpy(kb + 8, kb + 16, 8);
		memcpy(kb + 16, swap, 8);
	}
	memzero_explicit(swap, sizeof(swap));
	memzero_explicit(tempkey, sizeof(tempkey));
	aes_key_wipe(aes);
	free(aes);
	return rc;
}

/*
 * -H random: 65 fresh random keys (multi-key-v3).  getrandom() waits until
 * the kernel's generator is seeded, so this cannot run on thin entropy.
 */
static int random_keys(struct keysetup *ks)
{
	u8 *p = &ks->slots[0][0];
	size_t len = sizeof(ks->slots), got = 0;

	while (got < len) {
		ssize_t n = getrandom(p + got, len - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ks_error(ks, "cannot get random keys from the kernel (getrandom): %s",
				 strerror(errno));
			return -errno;
		}
		got += (size_t)n;
	}
	ks->nslots = MULTI_KEY_V3_LINES;
	memcpy(ks->key_buffer, ks->slots[0], KEYSETUP_KEY_BUFFER_LEN);
	return 0;
}

/*
 * Spec §3.3: key data that loop-AES and cryptsetup read differently, with
 * @mode's lines used (1 for single-key).  loop-AES's reading is the one
 * kept; the user is told, since cryptsetup would open the volume with
 * other keys or not at all.
 */
static void warn_reader_differences(const struct keysetup *ks, int mode)
{
	unsigned int used = mode ? (unsigned int)mode : 1, i;

	for (i = 0; i < used && i < ks->nstored; i++) {
		if (ks->line_len[i] && ks->lines[i][ks->line_len[i] - 1] == '\r') {
			ks_warn(ks, "%s: line %u ends in a carriage return (CRLF line ends): loop-AES hashes it as part of the key, cryptsetup does not, so cryptsetup would derive other keys",
				ks->source, i + 1);
			break;
		}
	}
	for (i = 1; mode && i < used && i < ks->nstored; i++) {
		if (ks->line_len[i] != ks->line_len[0]) {
			ks_warn(ks, "%s: key lines of unequal length (line %u has %zu characters, line 1 has %zu): loop-AES reads them, cryptsetup refuses such a key file",
				ks->source, i + 1, ks->line_len[i], ks->line_len[0]);
			break;
		}
	}
}

/*
 * Spec §3.3: which mode the lines read select.  Returns 0 (single-key,
 * line 0 is the passphrase), 64 or 65; or a negative errno when the data
 * has a count loop-AES only guesses at and @ks->lenient is off.
 */
static int key_data_mode(struct keysetup *ks)
{
	unsigned int n = ks->nkeys;
	int mode;

	if (n == MULTI_KEY_V2_LINES || n == MULTI_KEY_V3_LINES) {
		mode = (int)n;
	} else if (n > MULTI_KEY_V3_LINES) {
		if (!ks->lenient) {
			ks_error(ks, "%s: unknown key data format: more than %u lines of %u or more characters (expected 1, 64 or 65); not guessing (loop-AES would use the first %u, multi-key-v3)",
				 ks->source, MULTI_KEY_V3_LINES,
				 KEYSETUP_MIN_PASS_LEN, MULTI_KEY_V3_LINES);
			return -EINVAL;
		}
		ks_warn(ks, "%s: unknown key data format: more than %u lines of %u or more characters (expected 1, 64 or 65); using the first %u (multi-key-v3), as loop-AES does",
			ks->source, MULTI_KEY_V3_LINES, KEYSETUP_MIN_PASS_LEN,
			MULTI_KEY_V3_LINES);
		mode = MULTI_KEY_V3_LINES;
	} else if (n > 1) {
		if (!ks->lenient) {
			ks_error(ks, "%s: unknown key data format: %u lines of %u or more characters (expected 1, 64 or 65); not guessing (loop-AES would use line 1 as a single-key passphrase)",
				 ks->source, n, KEYSETUP_MIN_PASS_LEN);
			return -EINVAL;
		}
		ks_warn(ks, "%s: unknown key data format: %u lines of %u or more characters (expected 1, 64 or 65); using line 1 as a single-key passphrase, as loop-AES does",
			ks->source, n, KEYSETUP_MIN_PASS_LEN);
		mode = 0;
	} else {
		mode = 0;
	}
	warn_reader_differences(ks, mode);
	if (mode && ks->unterminated) {
		if (!ks->lenient) {
			ks_error(ks, "%s: the key data ends in the middle of line %u (no newline after it): the key file may be truncated",
				 ks->source, ks->nstored);
			return -EINVAL;
		}
		ks_warn(ks, "%s: the key data ends in the middle of line %u (no newline after it): the key file may be truncated",
			ks->source, ks->nstored);
	}
	return mode;
}

/*
 * Spec §3.3: each of @nslots lines hashed on its own, no seed, no -C; byte
 * 0 tweaked.  KB is the hash of line 0 without the tweak, as loop-AES puts
 * it in lo_encrypt_key before the multi-key ioctl.
 */
static int derive_multi(struct keysetup *ks, enum keysetup_hash h,
			unsigned int nslots)
{
	u8 tweak = nslots == MULTI_KEY_V3_LINES ? MULTI_KEY_V3_TWEAK :
						  MULTI_KEY_V2_TWEAK;
	unsigned int r;
	int rc;

	if (h == KEYSETUP_HASH_UNHASHED1) {
		size_t len = ks->line_len[0];

		ks->key_len = len >= 43 ? 32 : len >= 32 ? 24 : 16;
		ks_set_cipher_name(ks);
	}
	rc = hash_key(h, (const u8 *)ks->lines[0], ks->line_len[0],
		      ks->key_buffer);
	for (r = 0; rc == 0 && r < nslots; r++) {
		rc = hash_key(h, (const u8 *)ks->lines[r], ks->line_len[r],
			      ks->slots[r]);
		ks->slots[r][0] ^= tweak;
	}
	if (rc)
		ks_error(ks, "%s of the key lines failed (OpenSSL libcrypto)",
			 hash_name(h));
	else
		ks->nslots = nslots;
	return rc;
}

/* Spec §3.2: KB from passphrase + seed, then -C. */
static int derive_single(struct keysetup *ks, enum keysetup_hash h)
{
	size_t plen, slen, len, min_len;
	u8 *in;
	int rc;

	plen = ks->line_len[0];
	min_len = (h == KEYSETUP_HASH_RMD160 || h == KEYSETUP_HASH_UNHASHED2) ?
		  1 : KEYSETUP_MIN_PASS_LEN;
	if (plen < min_len) {
		ks_error(ks, "%s: passphrase is too short: it has %zu characters, it must have at least %zu",
			 ks->source, plen, min_len);
		return -EINVAL;
	}

	slen = ks->seed ? strlen(ks->seed) : 0;
	len = plen + slen;
	in = malloc(len + 1);
	if (!in) {
		ks_error(ks, "out of memory for the key setup");
		return -ENOMEM;
	}
	memcpy(in, ks->lines[0], plen);
	if (slen)
		memcpy(in + plen, ks->seed, slen);

	if (h == KEYSETUP_HASH_UNHASHED1) {
		ks->key_len = len >= 43 ? 32 : len >= 32 ? 24 : 16;
		ks_set_cipher_name(ks);
	}

	rc = hash_key(h, in, len, ks->key_buffer);
	if (rc == 0 && ks->itercountk)
		rc = iterate_key(h, in, len, ks->itercountk, ks->key_buffer);
	if (rc == -ENOMEM)
		ks_error(ks, "out of memory for the key setup");
	else if (rc)
		ks_error(ks, "%s of the passphrase failed (OpenSSL libcrypto)",
			 hash_name(h));
	memzero_explicit(in, len + 1);
	free(in);
	return rc;
}

/**
 * keysetup_derive() - compute the keys (doc/format.md §3.2, §3.3)
 * @ks: the context, with a cipher set and a passphrase or key lines read
 *      (nothing to read with -H random)
 *
 * -H random: 65 random keys, multi-key-v3.  Otherwise, with a gpg key file
 * set, first runs gpg (see keysetup_set_gpg()) to get the key lines.  Then
 * by the count of key lines (doc/format.md §3.3):
 *
 * - 64 or 65: multi-key-v2 or v3; each line is hashed on its own with the
 *   chosen hash (no seed, no -C), byte 0 XORed with 0x55 or 0xF4, into
 *   @ks->slots; @ks->nslots says how many;
 * - 0 or 1: single-key; passphrase + seed is hashed into @ks->key_buffer
 *   (32 bytes), then -C is applied;
 * - any other count: refused, unless @ks->lenient, when it warns and does
 *   what loop-AES does: line 1 as a single-key passphrase (2..63 lines), or
 *   the first 65 (66 lines).  Multi-key data whose last line has no newline
 *   is refused (or, lenient, warned about) too: a truncated file.
 *
 * With -H unhashed1 the key length is forced by the length of the hashed
 * text (passphrase + seed, or key line 1), as loop-AES and aespipe count
 * it: fewer than 32 characters give 16 bytes, 32..42 give 24, 43 or more
 * 32; @ks->key_len and @ks->cipher_name then say so.  The stored lines are
 * wiped before returning, whatever the outcome.
 *
 * Return: 0 with the keys in @ks; or -EINVAL (no cipher, nothing read, a
 * passphrase shorter than 20 characters (1 for rmd160 and unhashed2), key
 * data of an unexpected format); -EACCES (gpg could not decrypt), -ENOENT
 * and others (gpg could not run or the key file not be read); -ENOMEM;
 * -EIO if libcrypto failed.  The message is in @ks->errmsg; the key buffer
 * and slots are then zero.
 */
int keysetup_derive(struct keysetup *ks)
{
	enum keysetup_hash h = effective_hash(ks);
	int rc, mode;

	memzero_explicit(ks->key_buffer, sizeof(ks->key_buffer));
	memzero_explicit(ks->slots, sizeof(ks->slots));
	ks->nslots = 0;
	if (!ks->key_len) {
		ks_error(ks, "no cipher chosen");
		rc = -EINVAL;
		goto out;
	}
	if (h == KEYSETUP_HASH_RANDOM) {
		rc = random_keys(ks);
		goto out;
	}
	if (!ks->nstored) {
		ks_error(ks, "no passphrase read");
		rc = -EINVAL;
		goto out;
	}
	if (ks->gpg_key_file) {
		rc = ks_gpg_decrypt(ks);
		if (rc)
			goto out;
	}
	mode = key_data_mode(ks);
	if (mode < 0)
		rc = mode;
	else if (mode)
		rc = derive_multi(ks, h, (unsigned int)mode);
	else
		rc = derive_single(ks, h);
out:
	if (rc) {
		memzero_explicit(ks->key_buffer, sizeof(ks->key_buffer));
		memzero_explicit(ks->slots, sizeof(ks->slots));
		ks->nslots = 0;
	}
	ks_drop_lines(ks);
	return rc;
}

/**
 * keysetup_mode_name() - the mode keysetup_derive() chose, as loop-AES
 * names it
 * @ks: the context
 *
 * Return: "multi-key-v3", "multi-key-v2" or "single-key".
 */
const char *keysetup_mode_name(const struct keysetup *ks)
{
	if (ks->nslots == MULTI_KEY_V3_LINES)
		return "multi-key-v3";
	if (ks->nslots == MULTI_KEY_V2_LINES)
		return "multi-key-v2";
	return "single-key";
}
