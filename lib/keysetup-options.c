// SPDX-License-Identifier: GPL-2.0
/*
 * keysetup-options.c - the choices of a loop-AES key setup (doc/format.md §3.1,
 * §3.2, §3.3): the cipher and key length (-e), the passphrase hash (-H),
 * the seed (-S), the iteration count (-C) and the gpg key file (-K, -G).
 * Each is checked as it is set, so that bad input fails before anything
 * is read or asked.
 */
#include <limits.h>
#include <stdio.h>
#include <strings.h>

#include "keysetup-internal.h"

/**
 * keysetup_parse_cipher() - parse a cipher name (doc/format.md §3.1)
 * @name:    the -e argument: AES, AES128, AES192 or AES256, in any case
 * @key_len: set to the key length in bytes: 16 (AES and AES128), 24 or 32
 *
 * The encrypt type of every accepted name is KEYSETUP_CRYPT_AES.
 *
 * Return: 0, or -EINVAL for any other name (@key_len is then untouched).
 */
int keysetup_parse_cipher(const char *name, unsigned int *key_len)
{
	static const struct {
		const char *name;
		unsigned int key_len;
	} ciphers[] = {
		{ "aes", 16 }, { "aes128", 16 }, { "aes192", 24 }, { "aes256", 32 },
	};
	size_t i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++) {
		if (!strcasecmp(name, ciphers[i].name)) {
			*key_len = ciphers[i].key_len;
			return 0;
		}
	}
	return -EINVAL;
}

/**
 * ks_set_cipher_name() - name the cipher by the key length (doc/format.md §3.1)
 * @ks: the context; @ks->cipher_name becomes "AES" and @ks->key_len in
 *      bits ("AES128", "AES192", "AES256")
 */
void ks_set_cipher_name(struct keysetup *ks)
{
	snprintf(ks->cipher_name, sizeof(ks->cipher_name), "AES%u",
		 ks->key_len * 8);
}

/**
 * keysetup_set_cipher() - choose the cipher and key length (doc/format.md §3.1)
 * @ks:   the context
 * @name: the -e argument, see keysetup_parse_cipher()
 *
 * Sets @ks->key_len and @ks->cipher_name ("AES128" for both AES and AES128).
 *
 * Return: 0, or -EINVAL for an unsupported name (message in @ks->errmsg).
 */
int keysetup_set_cipher(struct keysetup *ks, const char *name)
{
	unsigned int key_len;

	if (keysetup_parse_cipher(name, &key_len)) {
		ks_error(ks, "unsupported cipher '%.64s': use AES128, AES192 or AES256 (AES means AES128)",
			 name ? name : "");
		return -EINVAL;
	}
	ks->key_len = key_len;
	ks_set_cipher_name(ks);
	return 0;
}

/**
 * keysetup_set_hash() - choose the passphrase hash (-H, doc/format.md §3.2)
 * @ks:   the context
 * @name: sha256, sha384, sha512, rmd160, unhashed1, unhashed2, any case;
 *        or random, random/MODE (MODE octal, 0..07777): 65 random keys
 *
 * Return: 0, or -EINVAL for any other name (message in @ks->errmsg).
 */
int keysetup_set_hash(struct keysetup *ks, const char *name)
{
	static const struct {
		const char *name;
		enum keysetup_hash hash;
	} hashes[] = {
		{ "sha256", KEYSETUP_HASH_SHA256 },
		{ "sha384", KEYSETUP_HASH_SHA384 },
		{ "sha512", KEYSETUP_HASH_SHA512 },
		{ "rmd160", KEYSETUP_HASH_RMD160 },
		{ "unhashed1", KEYSETUP_HASH_UNHASHED1 },
		{ "unhashed2", KEYSETUP_HASH_UNHASHED2 },
	};
	size_t i;

	if (!name)
		name = "";
	for (i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++) {
		if (!strcasecmp(name, hashes[i].name)) {
			ks->hash = hashes[i].hash;
			ks->random_mode = -1;
			return 0;
		}
	}
	if (!strncasecmp(name, "random", 6) && (!name[6] || name[6] == '/')) {
		const char *p = name + 7;
		int mode = 0;

		if (name[6] == '/') {
			if (!*p)
				goto bad_mode;
			for (; *p; p++) {
				if (*p < '0' || *p > '7' || mode > 07777 / 8)
					goto bad_mode;
				mode = mode * 8 + (*p - '0');
			}
		} else {
			mode = -1;
		}
		ks->hash = KEYSETUP_HASH_RANDOM;
		ks->random_mode = mode;
		return 0;
	}
	ks_error(ks, "unknown password hash '%.64s': use sha256, sha384, sha512, rmd160, unhashed1, unhashed2 or random",
		 name);
	return -EINVAL;
bad_mode:
	ks_error(ks, "password hash '%.64s': after 'random/' comes an octal mode such as 1777",
		 name);
	return -EINVAL;
}

/**
 * keysetup_set_seed() - set the passphrase seed (-S, doc/format.md §3.2)
 * @ks:   the context
 * @seed: NUL-terminated string appended to the passphrase before hashing,
 *        kept by pointer (it must outlive keysetup_derive()); NULL or ""
 *        means no seed
 *
 * Return: 0.
 */
int keysetup_set_seed(struct keysetup *ks, const char *seed)
{
	ks->seed = seed;
	return 0;
}

/**
 * keysetup_set_itercountk() - set the -C iteration count (doc/format.md §3.2)
 * @ks:  the context
 * @arg: decimal number of thousands of AES-256 iterations, digits only
 *       (no sign, no spaces); "0" means no iteration
 *
 * Stricter than aespipe, which reads a non-number as 0: a typo must not
 * silently give another key.
 *
 * Return: 0, or -EINVAL if @arg is not such a number or is too large
 * (message in @ks->errmsg).
 */
int keysetup_set_itercountk(struct keysetup *ks, const char *arg)
{
	unsigned long v = 0;
	const char *p;

	if (!arg || !*arg)
		goto bad;
	for (p = arg; *p; p++) {
		unsigned int d;

		if (*p < '0' || *p > '9')
			goto bad;
		d = (unsigned int)(*p - '0');
		if (v > (ULONG_MAX / 1000 - d) / 10) {
			ks_error(ks, "iteration count '%.64s' is too large", arg);
			return -EINVAL;
		}
		v = v * 10 + d;
	}
	ks->itercountk = v;
	return 0;
bad:
	ks_error(ks, "iteration count '%.64s' is not a decimal number (of thousands of iterations)",
		 arg ? arg : "");
	return -EINVAL;
}

/**
 * keysetup_set_gpg() - take the key data from a gpg-encrypted file (-K, -G)
 * @ks:       the context
 * @key_file: the encrypted key file (-K), kept by pointer; NULL or "" for
 *            none
 * @home:     gpg's home directory (-G), kept by pointer; NULL or "" for
 *            gpg's default (that of the user running it)
 *
 * The read functions then read one line, the passphrase that unlocks the
 * file, and keysetup_derive() runs gpg (doc/format.md §3.3): /bin/gpg, /usr/bin/gpg
 * or /usr/local/bin/gpg, with the real user and group IDs of the caller,
 * --batch --no-options --quiet --no-tty --decrypt, the file on its standard
 * input and the passphrase on a pipe given with --passphrase-fd (never in
 * its arguments or environment).  The decrypted text holds the key lines:
 * 1 (a passphrase), 64 or 65.
 *
 * Return: 0.
 */
int keysetup_set_gpg(struct keysetup *ks, const char *key_file,
		     const char *home)
{
	ks->gpg_key_file = key_file && *key_file ? key_file : NULL;
	ks->gpg_home = home && *home ? home : NULL;
	return 0;
}
