/* SPDX-License-Identifier: GPL-2.0 */
/*
 * keysetup.h - loop-AES key setup (../shared/spec/loop-aes-format.md §3),
 * the one implementation shared by aesloop-pipe and the patched losetup.
 *
 * Typical use:
 *
 *	struct keysetup ks;
 *
 *	keysetup_init(&ks, "losetup");
 *	if (keysetup_set_cipher(&ks, "AES128") ||
 *	    keysetup_set_hash(&ks, "sha512") ||          optional, -H
 *	    keysetup_set_seed(&ks, "pepper") ||          optional, -S
 *	    keysetup_set_itercountk(&ks, "100") ||       optional, -C
 *	    keysetup_read_fd(&ks, 0) ||                  or _read_file, _read_tty
 *	    keysetup_derive(&ks))
 *		fail with ks.errmsg (keysetup_wipe() first);
 *	use ks.key_buffer (32 bytes) and ks.key_len (16, 24 or 32);
 *	keysetup_wipe(&ks);
 *
 * Every function that can fail returns 0 or a negative errno value and then
 * leaves a one-line message in @errmsg that names the object and says what
 * is wrong (never the passphrase).  Warnings (spec §3.3: key data with an
 * unexpected number of lines) are written to stderr at once, prefixed with
 * the program name given to keysetup_init().
 *
 * This header needs nothing but <stddef.h> and <stdint.h>, so that it can be
 * included from util-linux's losetup.c as is.
 */
#ifndef AESLOOP_KEYSETUP_H
#define AESLOOP_KEYSETUP_H

#include <stddef.h>
#include <stdint.h>

/* lo_encrypt_type of loop-AES's AES cipher (spec §3.1, §5). */
#define KEYSETUP_CRYPT_AES	16

/* Size of the key buffer KB, and of lo_encrypt_key (spec §3.2, §5). */
#define KEYSETUP_KEY_BUFFER_LEN	32

/* Minimum passphrase length, and length a key line needs to count (§3.2, §3.3). */
#define KEYSETUP_MIN_PASS_LEN	20

/*
 * Longest passphrase or key line, in characters without its terminator.
 * loop-AES and aespipe fail on a line of 4095 or more characters (their
 * 4 KiB buffer holds the NUL too); we draw the line at the same place.
 */
#define KEYSETUP_LINE_MAX	4094

/* At most this many lines are read from a key file or descriptor (§3.3). */
#define KEYSETUP_MAX_LINES	66

/* Longest cipher name kept, as for lo_crypt_name (LO_NAME_SIZE - 1). */
#define KEYSETUP_NAME_MAX	63

/**
 * enum keysetup_hash - the -H choices of spec §3.2
 * @KEYSETUP_HASH_DEFAULT:   by key size: SHA-256, SHA-384, SHA-512
 * @KEYSETUP_HASH_SHA256:    SHA-256
 * @KEYSETUP_HASH_SHA384:    SHA-384, truncated to 32 bytes
 * @KEYSETUP_HASH_SHA512:    SHA-512, truncated to 32 bytes
 * @KEYSETUP_HASH_RMD160:    RIPEMD-160 twice, the second time of "A" + pass
 * @KEYSETUP_HASH_UNHASHED1: 6 bits per character; forces the key length
 * @KEYSETUP_HASH_UNHASHED2: the raw bytes, at most 31, zero-padded
 */
enum keysetup_hash {
	KEYSETUP_HASH_DEFAULT = 0,
	KEYSETUP_HASH_SHA256,
	KEYSETUP_HASH_SHA384,
	KEYSETUP_HASH_SHA512,
	KEYSETUP_HASH_RMD160,
	KEYSETUP_HASH_UNHASHED1,
	KEYSETUP_HASH_UNHASHED2,
};

/**
 * struct keysetup - the options, key lines and result of one key setup
 * @prog:        program name that prefixes warnings on stderr; may be NULL
 * @cipher_name: canonical name for lo_crypt_name: "AES128", "AES192" or
 *               "AES256"; after keysetup_derive() it names the key length
 *               really used (which -H unhashed1 may force)
 * @key_len:     AES key length in bytes, 16, 24 or 32 (0 before
 *               keysetup_set_cipher()); may change in keysetup_derive()
 * @hash:        the -H choice
 * @seed:        the -S seed, appended to the passphrase; NULL means none
 * @itercountk:  the -C count, in thousands of iterations; 0 means none
 * @lines:       the lines read (NUL-terminated, heap, wiped by keysetup_wipe):
 *               @lines[0] is the passphrase; private to keysetup.c
 * @line_len:    length of each of @lines, in bytes
 * @nstored:     how many of @lines are set
 * @source:      where the lines came from, for messages ("key file F",
 *               "passphrase file descriptor N", "/dev/tty", "passphrase")
 * @nkeys:       how many lines of at least KEYSETUP_MIN_PASS_LEN characters
 *               were read before the first shorter one (spec §3.3): 0 or 1
 *               means single-key, 64 multi-key v2, 65 or 66 multi-key v3
 * @key_buffer:  the result: KB of spec §3.2, KEYSETUP_KEY_BUFFER_LEN bytes,
 *               what losetup puts in lo_encrypt_key; the AES key is its
 *               first @key_len bytes
 * @errmsg:      the message of the last failure, NUL-terminated
 *
 * Holds secrets: always finish with keysetup_wipe(), on error paths too.
 */
struct keysetup {
	const char *prog;
	char cipher_name[KEYSETUP_NAME_MAX + 1];
	unsigned int key_len;
	enum keysetup_hash hash;
	const char *seed;
	unsigned long itercountk;
	char *lines[KEYSETUP_MAX_LINES];
	size_t line_len[KEYSETUP_MAX_LINES];
	unsigned int nstored;
	char source[128];
	unsigned int nkeys;
	uint8_t key_buffer[KEYSETUP_KEY_BUFFER_LEN];
	char errmsg[256];
};

void keysetup_init(struct keysetup *ks, const char *prog);
void keysetup_wipe(struct keysetup *ks);

int keysetup_parse_cipher(const char *name, unsigned int *key_len);
int keysetup_set_cipher(struct keysetup *ks, const char *name);
int keysetup_set_hash(struct keysetup *ks, const char *name);
int keysetup_set_seed(struct keysetup *ks, const char *seed);
int keysetup_set_itercountk(struct keysetup *ks, const char *arg);

int keysetup_read_fd(struct keysetup *ks, int fd);
int keysetup_read_file(struct keysetup *ks, const char *path);
int keysetup_read_tty(struct keysetup *ks, const char *prompt);
int keysetup_set_passphrase(struct keysetup *ks, const char *pass, size_t len);

int keysetup_derive(struct keysetup *ks);

#endif /* AESLOOP_KEYSETUP_H */
