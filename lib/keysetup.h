/* SPDX-License-Identifier: GPL-2.0 */
/*
 * keysetup.h - loop-AES key setup (doc/format.md §3),
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
 *	    keysetup_set_gpg(&ks, "key.gpg", NULL) ||    optional, -K and -G
 *	    keysetup_read_fd(&ks, 0) ||                  or _read_file, _read_tty
 *	    keysetup_derive(&ks))
 *		fail with ks.errmsg (keysetup_wipe() first);
 *	single-key (ks.nslots == 0): use ks.key_buffer (32 bytes) and
 *	ks.key_len (16, 24 or 32);
 *	multi-key (ks.nslots == 64 or 65): ks.slots[0..nslots-1] is the
 *	LOOP_MULTI_KEY_SETUP(_V3) payload, ks.key_buffer what goes into
 *	lo_encrypt_key before it;
 *	keysetup_wipe(&ks);
 *
 * With -H random (keysetup_set_hash(&ks, "random")) nothing is read:
 * keysetup_derive() makes 65 fresh random keys (multi-key-v3).
 *
 * Every function that can fail returns 0 or a negative errno value and then
 * leaves a one-line message in @errmsg that names the object and says what
 * is wrong (never the passphrase).  Warnings (doc/format.md §3.3: key data with an
 * unexpected number of lines, when @lenient allows it) are written to
 * stderr at once, prefixed with the program name given to keysetup_init().
 *
 * This header needs nothing but <stddef.h>, <stdint.h> and the driver's
 * ABI header (found next to it, whatever -I the includer has), so that it
 * can be included from util-linux's losetup.c as is.
 */
#ifndef AESLOOP_KEYSETUP_H
#define AESLOOP_KEYSETUP_H

#include <stddef.h>
#include <stdint.h>

#include "../loop/aesloop_uapi.h"

/* The names the util-linux patches use for LO_CRYPT_AES and -R's ioctl. */
#define KEYSETUP_CRYPT_AES			LO_CRYPT_AES
#define KEYSETUP_LOOP_RECOMPUTE_DEV_SIZE	LOOP_RECOMPUTE_DEV_SIZE

/* Size of the key buffer KB, and of lo_encrypt_key (doc/format.md §3.2, §5). */
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

/*
 * Multi-key (doc/format.md §3.3): the counts of key lines that select a mode, which
 * are the counts of key slots the mode's ioctl takes.
 */
#define KEYSETUP_MULTI_V2	LOOP_MULTI_KEY_SLOTS	/* 64 */
#define KEYSETUP_MULTI_V3	LOOP_MULTI_KEY_SLOTS_V3	/* 65 */

/**
 * enum keysetup_hash - the -H choices of doc/format.md §3.2
 * @KEYSETUP_HASH_DEFAULT:   by key size: SHA-256, SHA-384, SHA-512
 * @KEYSETUP_HASH_SHA256:    SHA-256
 * @KEYSETUP_HASH_SHA384:    SHA-384, truncated to 32 bytes
 * @KEYSETUP_HASH_SHA512:    SHA-512, truncated to 32 bytes
 * @KEYSETUP_HASH_RMD160:    RIPEMD-160 twice, the second time of "A" + pass
 * @KEYSETUP_HASH_UNHASHED1: 6 bits per character; forces the key length
 * @KEYSETUP_HASH_UNHASHED2: the raw bytes, at most 31, zero-padded
 * @KEYSETUP_HASH_RANDOM:    no passphrase: 65 fresh random keys (swap, /tmp)
 */
enum keysetup_hash {
	KEYSETUP_HASH_DEFAULT = 0,
	KEYSETUP_HASH_SHA256,
	KEYSETUP_HASH_SHA384,
	KEYSETUP_HASH_SHA512,
	KEYSETUP_HASH_RMD160,
	KEYSETUP_HASH_UNHASHED1,
	KEYSETUP_HASH_UNHASHED2,
	KEYSETUP_HASH_RANDOM,
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
 * @random_mode: with -H random/MODE, MODE (octal, the permissions mount
 *               gives the root of the new file system); else -1
 * @seed:        the -S seed, appended to the passphrase; NULL means none
 * @itercountk:  the -C count, in thousands of iterations; 0 means none
 * @ask_twice:   -T: keysetup_read_tty() asks twice and compares
 * @lenient:     what to do with key data of an unexpected line count (2..63
 *               or more than 65 lines of 20 characters or more), or whose
 *               last multi-key line has no newline: 0 (the default) refuses
 *               it; 1 does what loop-AES and aespipe do (warns on stderr,
 *               then uses line 1 as a single-key passphrase, or the first
 *               65 lines)
 * @gpg_key_file: -K: the key data is this gpg-encrypted file, decrypted by
 *               running gpg with the passphrase that was read; NULL: none
 * @gpg_home:    -G: gpg's home directory, or NULL
 * @gpg_key_limit: if not 0, gpg reads at most this many bytes of
 *               @gpg_key_file (a key file at the start of the volume itself)
 * @lines:       the lines read (NUL-terminated, heap, wiped by keysetup_wipe):
 *               @lines[0] is the passphrase; private to keysetup*.c
 * @line_len:    length of each of @lines, in bytes
 * @nstored:     how many of @lines are set
 * @unterminated: the last stored line ended at the end of the data, not at
 *               a newline or NUL (and is not empty)
 * @source:      where the lines came from, for messages ("key file F",
 *               "passphrase file descriptor N", "/dev/tty", "passphrase")
 * @nkeys:       how many lines of at least KEYSETUP_MIN_PASS_LEN characters
 *               were read before the first shorter one (doc/format.md §3.3): 0 or 1
 *               means single-key, 64 multi-key v2, 65 or 66 multi-key v3
 * @nslots:      the result's mode: 0 single-key, KEYSETUP_MULTI_V2 or
 *               KEYSETUP_MULTI_V3 (the number of @slots set)
 * @key_buffer:  the result: KB of doc/format.md §3.2, KEYSETUP_KEY_BUFFER_LEN bytes,
 *               what losetup puts in lo_encrypt_key; the AES key is its
 *               first @key_len bytes.  Multi-key: the hash of line 1 without
 *               the tweak (what loop-AES's losetup sets before the
 *               multi-key ioctl; the driver replaces it), or slot 0 for
 *               -H random
 * @slots:       multi-key: the tweaked keys of doc/format.md §3.3, @nslots of them,
 *               LOOP_MULTI_KEY_SLOT_SIZE bytes each: the LOOP_MULTI_KEY_SETUP(_V3)
 *               payload
 * @errmsg:      the message of the last failure, NUL-terminated
 *
 * Holds secrets: always finish with keysetup_wipe(), on error paths too.
 */
struct keysetup {
	const char *prog;
	char cipher_name[KEYSETUP_NAME_MAX + 1];
	unsigned int key_len;
	enum keysetup_hash hash;
	int random_mode;
	const char *seed;
	unsigned long itercountk;
	int ask_twice;
	int lenient;
	const char *gpg_key_file;
	const char *gpg_home;
	unsigned long long gpg_key_limit;
	char *lines[KEYSETUP_MAX_LINES];
	size_t line_len[KEYSETUP_MAX_LINES];
	unsigned int nstored;
	int unterminated;
	char source[128];
	unsigned int nkeys;
	unsigned int nslots;
	uint8_t key_buffer[KEYSETUP_KEY_BUFFER_LEN];
	uint8_t slots[KEYSETUP_MULTI_V3][LOOP_MULTI_KEY_SLOT_SIZE];
	char errmsg[256];
};

void keysetup_init(struct keysetup *ks, const char *prog);
void keysetup_wipe(struct keysetup *ks);

int keysetup_parse_cipher(const char *name, unsigned int *key_len);
int keysetup_set_cipher(struct keysetup *ks, const char *name);
int keysetup_set_hash(struct keysetup *ks, const char *name);
int keysetup_set_seed(struct keysetup *ks, const char *seed);
int keysetup_set_itercountk(struct keysetup *ks, const char *arg);
int keysetup_set_gpg(struct keysetup *ks, const char *key_file,
		     const char *home);

int keysetup_read_fd(struct keysetup *ks, int fd);
int keysetup_read_file(struct keysetup *ks, const char *path);
int keysetup_read_tty(struct keysetup *ks, const char *prompt);
int keysetup_read_agent(struct keysetup *ks, const char *message,
			const char *id);
int keysetup_set_passphrase(struct keysetup *ks, const char *pass, size_t len);

int keysetup_derive(struct keysetup *ks);

const char *keysetup_mode_name(const struct keysetup *ks);
int keysetup_lock_memory(const char *prog);
int keysetup_write_all(int fd, const void *buf, size_t len);

#endif /* AESLOOP_KEYSETUP_H */
