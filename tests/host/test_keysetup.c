// SPDX-License-Identifier: GPL-2.0
// covers: key setup, passphrase, key file, single-key, multi-key v2, multi-key v3, random keys, test vectors, key wipe
/*
 * test_keysetup.c - known-answer tests of lib/keysetup*.c and the single-key
 * sector transform, from ../shared/vectors (see its README.md).
 *
 * For every case of vectors.tsv whose mode is "single": derive KB with
 * keysetup.c from the key source (the passphrase given directly and through
 * a pipe, or the 1-line key file) and the case's -e/-H/-S/-C, compare it
 * with key_buffer32 of intermediates.tsv; encrypt plain64.img with
 * loop_aes_encrypt() from the case's IV start sector, compare the SHA-256
 * with sha256_ciphertext; decrypt back.  For every v2/v3 case: derive the
 * slots from the key file (read as a file and through a pipe), compare K0,
 * K63 and the v3 seed, encrypt and decrypt plain64.img with them.  Then
 * checks of the parsing and line-reading rules of doc/format.md §3: the line
 * counts, strict and lenient, truncated key files, -H random.
 *
 * Usage: test_keysetup [VECTOR_DIR]
 * The vector folder is VECTOR_DIR, else $AESLOOP_VECTORS, else
 * ../shared/vectors beside the project root (found from this program's
 * path, build/tests/NAME), else ../shared/vectors from the current folder.
 *
 * Prints TAP (tests/host/testutil.h); exits 1 if anything failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "keysetup.h"
#include "loop_aes.h"
#include "testutil.h"

#define IMG_SECTORS	64
#define IMG_LEN		(IMG_SECTORS * LOOP_AES_SECTOR_SIZE)
#define MAX_COLS	16
#define MAX_ROWS	64
/* Key data of the line-reading checks: a passphrase, a line of 26 characters. */
#define PASS		"correct horse battery staple 2026"
#define LONG26		"abcdefghijklmnopqrstuvwxyz"

/* A tab-separated file with a header line, all in memory. */
struct tsv {
	char *text;
	int ncols, nrows;
	char *head[MAX_COLS];
	char *cell[MAX_ROWS][MAX_COLS];
};

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			buf[n] = '\0';
			if (len)
				*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

static int split_fields(char *line, char **out)
{
	int n = 0;

	for (;;) {
		char *tab = strchr(line, '\t');

		if (n == MAX_COLS)
			return -1;
		out[n++] = line;
		if (!tab)
			return n;
		*tab = '\0';
		line = tab + 1;
	}
}

static int load_tsv(struct tsv *t, const char *path)
{
	char *line, *next;

	memset(t, 0, sizeof(*t));
	t->text = read_file(path, NULL);
	if (!t->text)
		return -1;
	for (line = t->text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!t->ncols) {
			t->ncols = split_fields(line, t->head);
			if (t->ncols < 0)
				return -1;
		} else if (t->nrows < MAX_ROWS) {
			if (split_fields(line, t->cell[t->nrows]) != t->ncols)
				return -1;
			t->nrows++;
		}
	}
	return t->ncols > 0 ? 0 : -1;
}

static const char *col(const struct tsv *t, int row, const char *name)
{
	int c;

	for (c = 0; c < t->ncols; c++)
		if (!strcmp(t->head[c], name))
			return t->cell[row][c];
	return NULL;
}

static int find_row(const struct tsv *t, const char *case_name)
{
	int r;

	for (r = 0; r < t->nrows; r++) {
		const char *c = col(t, r, "case");

		if (c && !strcmp(c, case_name))
			return r;
	}
	return -1;
}

static void sha256_hex(const unsigned char *b, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int mdlen = 0;

	if (EVP_Digest(b, n, md, &mdlen, EVP_sha256(), NULL) != 1)
		memset(md, 0, sizeof(md));
	t_hex(out, md, sizeof(md));
}

/* A pipe holding @len bytes of @data, its writing end closed; -1 on error. */
static int pipe_with(const char *data, size_t len)
{
	int fds[2];

	if (pipe(fds))
		return -1;
	if (write(fds[1], data, len) != (ssize_t)len) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	close(fds[1]);
	return fds[0];
}

/* A pipe holding @line and a newline. */
static int pipe_with_line(const char *line)
{
	size_t len = strlen(line);
	char *buf = malloc(len + 1);
	int fd;

	if (!buf)
		return -1;
	memcpy(buf, line, len);
	buf[len] = '\n';
	fd = pipe_with(buf, len + 1);
	free(buf);
	return fd;
}

/* A pipe that holds the whole content of @path. */
static int pipe_of_file(const char *path)
{
	size_t len = 0;
	char *data = read_file(path, &len);
	int fd;

	if (!data)
		return -1;
	fd = pipe_with(data, len);
	free(data);
	return fd;
}

/*
 * Fill @ks from a vector case: cipher, -H, -S, -C from vectors.tsv, and the
 * key source through @how: "direct" (keysetup_set_passphrase), "pipe"
 * (keysetup_read_fd on a pipe holding the passphrase and a newline, or the
 * key file's content) or "file".
 */
static int setup_case(struct keysetup *ks, const struct tsv *v, int row,
		      const char *dir, const char *how)
{
	const char *src = col(v, row, "key_source");
	const char *hash = col(v, row, "hash");
	const char *seed = col(v, row, "seed");
	const char *iter = col(v, row, "itercountk");
	int rc, fd;

	rc = keysetup_set_cipher(ks, col(v, row, "cipher"));
	if (!rc && strcmp(hash, "default"))
		rc = keysetup_set_hash(ks, hash);
	if (!rc && strcmp(seed, "-"))
		rc = keysetup_set_seed(ks, seed);
	if (!rc && strcmp(iter, "0"))
		rc = keysetup_set_itercountk(ks, iter);
	if (rc)
		return rc;

	if (!strncmp(src, "file:", 5)) {
		char path[PATH_MAX + 64];

		snprintf(path, sizeof(path), "%s/%s", dir, src + 5);
		if (!strcmp(how, "file"))
			return keysetup_read_file(ks, path);
		fd = pipe_of_file(path);
	} else if (strncmp(src, "pass:", 5)) {
		snprintf(ks->errmsg, sizeof(ks->errmsg), "unknown key_source %s", src);
		return -EINVAL;
	} else {
		src += 5;
		if (!strcmp(how, "direct"))
			return keysetup_set_passphrase(ks, src, strlen(src));
		fd = pipe_with_line(src);
	}
	if (fd < 0)
		return -EIO;
	rc = keysetup_read_fd(ks, fd);
	close(fd);
	return rc;
}

/*
 * Encrypt plain64.img with the keys of @ks (the single key, or the slots when
 * @multi) from the case's IV start sector, compare the ciphertext's SHA-256
 * with sha256_ciphertext, decrypt back.
 */
static void check_image(const struct keysetup *ks, int multi, const struct tsv *v,
			int row, const char *how, const unsigned char *plain)
{
	const char *name = col(v, row, "case");
	const char *want = col(v, row, "sha256_ciphertext");
	unsigned long long iv0 = strtoull(col(v, row, "iv_start_sector"), NULL, 10);
	struct loop_aes_ctx *ctx = malloc(loop_aes_ctx_size(multi ? 64 : 1));
	unsigned char *ct = malloc(IMG_LEN), *back = malloc(IMG_LEN);
	char tname[160], hex[65];

	snprintf(tname, sizeof(tname), "encrypt-%s-%s", name, how);
	if (!ctx || !ct || !back ||
	    (multi ? loop_aes_setup_multi(ctx, &ks->slots[0][0], ks->nslots, ks->key_len) :
		     loop_aes_setup_single(ctx, ks->key_buffer, ks->key_len))) {
		t_result(0, tname, "cannot set up the %s (%u-byte keys)",
			 multi ? "multi-key context" : "AES key", ks->key_len);
	} else {
		loop_aes_encrypt(ctx, ct, plain, IMG_SECTORS, iv0);
		sha256_hex(ct, IMG_LEN, hex);
		t_result(!strcmp(hex, want), tname,
			 "SHA-256 of ciphertext %s, expected %s (IV start sector %llu)",
			 hex, want, iv0);
		snprintf(tname, sizeof(tname), "decrypt-%s-%s", name, how);
		loop_aes_decrypt(ctx, back, ct, IMG_SECTORS, iv0);
		t_result(!memcmp(back, plain, IMG_LEN), tname,
			 "decrypting the ciphertext did not give plain64.img back");
		loop_aes_wipe(ctx);
	}
	free(ctx);
	free(ct);
	free(back);
}

/* A single-key case: KB against key_buffer32 of intermediates.tsv. */
static void check_single_keys(const struct keysetup *ks, const struct tsv *v, int row,
			      const struct tsv *im, int irow, const char *tname)
{
	char kbhex[2 * KEYSETUP_KEY_BUFFER_LEN + 1];
	const char *want_kb = col(im, irow, "key_buffer32");
	unsigned int want_bits = (unsigned int)atoi(col(v, row, "key_bits"));

	t_hex(kbhex, ks->key_buffer, KEYSETUP_KEY_BUFFER_LEN);
	t_result(!strcmp(kbhex, want_kb) && ks->key_len * 8 == want_bits, tname,
		 "KB %s (%u-bit key), expected %s (%u-bit); case %s of vectors.tsv",
		 kbhex, ks->key_len * 8, want_kb, want_bits, col(v, row, "case"));
}

/* A v2/v3 case: the slots' number and mode, K0, K63 and the v3 seed. */
static void check_multi_keys(const struct keysetup *ks, const struct tsv *v, int row,
			     const struct tsv *im, int irow, const char *tname)
{
	unsigned int want_bits = (unsigned int)atoi(col(v, row, "key_bits"));
	unsigned int want_slots = strcmp(col(v, row, "mode"), "v3") ? 64 : 65;
	char k0[65], k63[65], seed[33];

	t_hex(k0, ks->slots[0], ks->key_len);
	t_hex(k63, ks->slots[63], ks->key_len);
	t_hex(seed, ks->slots[64], 16);
	t_result(ks->nslots == want_slots && ks->key_len * 8 == want_bits &&
		 !strcmp(k0, col(im, irow, "K0")) &&
		 !strcmp(k63, col(im, irow, "K63")) &&
		 (want_slots == 64 || !strcmp(seed, col(im, irow, "v3_seed16"))) &&
		 !strcmp(keysetup_mode_name(ks), want_slots == 64 ?
			 "multi-key-v2" : "multi-key-v3"),
		 tname, "%u slots (%s), %u-bit keys, K0 %s K63 %s seed %s; expected %u, %u-bit, K0 %s K63 %s seed %s",
		 ks->nslots, keysetup_mode_name(ks), ks->key_len * 8, k0, k63,
		 seed, want_slots, want_bits, col(im, irow, "K0"),
		 col(im, irow, "K63"), col(im, irow, "v3_seed16"));
}

/*
 * One case of vectors.tsv, through each way its key source can come: a
 * passphrase directly and through a pipe, a 1-line key file as a file, a
 * v2/v3 key file as a file and through a pipe.  Keys checked against
 * intermediates.tsv, then used on plain64.img.
 */
static void run_case(const struct tsv *v, const struct tsv *im, int row,
		     const char *dir, const unsigned char *plain)
{
	static const char * const pass_hows[] = { "direct", "pipe", NULL };
	static const char * const file_hows[] = { "file", NULL };
	static const char * const multi_hows[] = { "file", "pipe", NULL };
	const char *name = col(v, row, "case");
	int multi = strcmp(col(v, row, "mode"), "single") != 0;
	const char * const *hows = multi ? multi_hows :
		strncmp(col(v, row, "key_source"), "file:", 5) ? pass_hows : file_hows;
	int irow = find_row(im, name);
	char tname[160];

	if (irow < 0) {
		t_result(0, name, "case missing from intermediates.tsv");
		return;
	}
	for (; *hows; hows++) {
		struct keysetup ks;
		int rc;

		keysetup_init(&ks, "test_keysetup");
		snprintf(tname, sizeof(tname), "keysetup-%s-%s", name, *hows);
		rc = setup_case(&ks, v, row, dir, *hows);
		if (!rc)
			rc = keysetup_derive(&ks);
		if (rc) {
			t_result(0, tname, "key setup failed (%d): %s", rc, ks.errmsg);
			keysetup_wipe(&ks);
			continue;
		}
		if (multi)
			check_multi_keys(&ks, v, row, im, irow, tname);
		else
			check_single_keys(&ks, v, row, im, irow, tname);
		check_image(&ks, multi, v, row, *hows, plain);
		keysetup_wipe(&ks);
		if (multi)
			t_result(ks.nslots == 0 && ks.slots[0][0] == 0 &&
				 ks.slots[64][1] == 0, name, "keysetup_wipe left the slots");
	}
}

/* Derive from a passphrase with options; returns rc, KB in @kb if given. */
static int derive(const char *cipher, const char *hash, const char *seed,
		  const char *pass, unsigned char *kb, unsigned int *key_len,
		  char *errmsg, size_t errlen)
{
	struct keysetup ks;
	int rc;

	keysetup_init(&ks, "test_keysetup");
	rc = keysetup_set_cipher(&ks, cipher);
	if (!rc && hash)
		rc = keysetup_set_hash(&ks, hash);
	if (!rc && seed)
		rc = keysetup_set_seed(&ks, seed);
	if (!rc)
		rc = keysetup_set_passphrase(&ks, pass, strlen(pass));
	if (!rc)
		rc = keysetup_derive(&ks);
	if (!rc && kb)
		memcpy(kb, ks.key_buffer, KEYSETUP_KEY_BUFFER_LEN);
	if (!rc && key_len)
		*key_len = ks.key_len;
	if (errmsg)
		snprintf(errmsg, errlen, "%s", rc ? ks.errmsg : "");
	keysetup_wipe(&ks);
	return rc;
}

static void test_cipher_names(void)
{
	static const struct {
		const char *name;
		unsigned int key_len;	/* 0: must be rejected */
	} cases[] = {
		{ "AES", 16 }, { "aes", 16 }, { "AES128", 16 }, { "aes128", 16 },
		{ "Aes192", 24 }, { "AES256", 32 }, { "aEs256", 32 },
		{ "AES512", 0 }, { "AES64", 0 }, { "twofish", 0 }, { "", 0 },
		{ "AES128 ", 0 }, { "AES-128", 0 }, { "XOR", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct keysetup ks;
		char tname[64];
		int rc;

		keysetup_init(&ks, NULL);
		rc = keysetup_set_cipher(&ks, cases[i].name);
		snprintf(tname, sizeof(tname), "cipher-name-'%s'", cases[i].name);
		if (cases[i].key_len)
			t_result(rc == 0 && ks.key_len == cases[i].key_len, tname,
			      "keysetup_set_cipher(\"%s\") = %d, key_len %u, expected 0 and %u",
			      cases[i].name, rc, ks.key_len, cases[i].key_len);
		else
			t_result(rc == -EINVAL && strstr(ks.errmsg, "unsupported cipher"), tname,
			      "keysetup_set_cipher(\"%s\") = %d (%s), expected -EINVAL with a message",
			      cases[i].name, rc, ks.errmsg);
		keysetup_wipe(&ks);
	}
}

static void test_option_parsing(void)
{
	/* -H and -C arguments; err: NULL accepted, else rejected (-EINVAL) with it in the message. */
	static const struct {
		int iter;	/* 0: keysetup_set_hash, 1: keysetup_set_itercountk */
		const char *arg, *err;
	} cases[] = {
		{ 0, "sha256", NULL }, { 0, "SHA384", NULL }, { 0, "sha512", NULL },
		{ 0, "rmd160", NULL }, { 0, "unhashed1", NULL }, { 0, "UNHASHED2", NULL },
		{ 0, "md5", "unknown password hash" }, { 0, "sha1", "unknown password hash" },
		{ 0, "", "unknown password hash" }, { 0, "sha256x", "unknown password hash" },
		{ 0, "rmd", "unknown password hash" },
		{ 0, "random/", "" }, { 0, "random/9", "" }, { 0, "random/17777", "" },
		{ 0, "random/x", "" }, { 0, "randomx", "" },
		{ 1, "0", NULL }, { 1, "1", NULL }, { 1, "5", NULL }, { 1, "100", NULL },
		{ 1, "", "iteration count" }, { 1, "abc", "iteration count" },
		{ 1, "1x", "iteration count" }, { 1, "-1", "iteration count" },
		{ 1, "+1", "iteration count" }, { 1, " 1", "iteration count" },
		{ 1, "1.5", "iteration count" },
		{ 1, "99999999999999999999999", "iteration count" },
	};
	struct keysetup ks;
	char tname[64];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *what = cases[i].iter ? "itercountk" : "hash-name";
		const char *arg = cases[i].arg, *err = cases[i].err;

		keysetup_init(&ks, NULL);
		rc = cases[i].iter ? keysetup_set_itercountk(&ks, arg) :
				     keysetup_set_hash(&ks, arg);
		if (!err) {
			snprintf(tname, sizeof(tname), "%s-%s", what, arg);
			t_result(rc == 0 && (!cases[i].iter ||
					     ks.itercountk == strtoul(arg, NULL, 10)),
				 tname, "%s(\"%s\") = %d (%s), value %lu", what, arg,
				 rc, ks.errmsg, ks.itercountk);
		} else {
			snprintf(tname, sizeof(tname), "%s-bad-'%s'", what, arg);
			t_result(rc == -EINVAL && strstr(ks.errmsg, err), tname,
				 "%s(\"%s\") = %d (%s), expected -EINVAL", what, arg,
				 rc, ks.errmsg);
		}
	}
	keysetup_init(&ks, NULL);
	rc = keysetup_set_hash(&ks, "random");
	t_result(rc == 0 && ks.hash == KEYSETUP_HASH_RANDOM && ks.random_mode == -1,
		 "hash-name-random", "keysetup_set_hash(\"random\") = %d (%s), mode %d",
		 rc, ks.errmsg, ks.random_mode);
	rc = keysetup_set_hash(&ks, "RANDOM/1777");
	t_result(rc == 0 && ks.hash == KEYSETUP_HASH_RANDOM && ks.random_mode == 01777,
		 "hash-name-random-mode", "keysetup_set_hash(\"RANDOM/1777\") = %d (%s), mode %o",
		 rc, ks.errmsg, (unsigned int)ks.random_mode);
}

/* The minimum passphrase length (20 characters, 1 with rmd160 and unhashed2). */
static void test_min_length(void)
{
	static const struct {
		const char *name, *hash, *seed, *pass;
		int rc;
		const char *err;	/* in the message, if not NULL */
	} cases[] = {
		{ "min-length-19-default", NULL, NULL, "nineteen-characters", -EINVAL, "too short" },
		{ "min-length-20-default", NULL, NULL, "twenty-characters-ok", 0, NULL },
		{ "min-length-seed-not-counted", "sha512", "a-long-seed-does-not-count",
		  "short", -EINVAL, NULL },
		{ "min-length-1-rmd160", "rmd160", NULL, "x", 0, NULL },
		{ "min-length-1-unhashed2", "unhashed2", NULL, "x", 0, NULL },
		{ "min-length-0-rmd160", "rmd160", NULL, "", -EINVAL, NULL },
		{ "min-length-19-unhashed1", "unhashed1", NULL, "nineteen-characters",
		  -EINVAL, NULL },
	};
	char msg[256];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rc = derive("AES128", cases[i].hash, cases[i].seed, cases[i].pass,
			    NULL, NULL, msg, sizeof(msg));
		t_result(rc == cases[i].rc && (!cases[i].err || strstr(msg, cases[i].err)),
			 cases[i].name,
			 "%zu-character passphrase, -H %s, seed %s: rc %d (%s), expected %d %s",
			 strlen(cases[i].pass), cases[i].hash ? cases[i].hash : "default",
			 cases[i].seed ? cases[i].seed : "none", rc, msg, cases[i].rc,
			 cases[i].err ? cases[i].err : "");
	}
}

/*
 * unhashed1 forces the key length from passphrase + seed (loop-AES and
 * aespipe count the seed): 25 + 7 = 32 characters give a 192-bit key.
 */
static void test_unhashed1_seed(void)
{
	unsigned char kb1[32], kb2[32];
	unsigned int len1 = 0, len2 = 0;
	int rc1, rc2;

	rc1 = derive("AES128", "unhashed1", "1234567", "only-25-characters-long..",
		     kb1, &len1, NULL, 0);
	rc2 = derive("AES128", "unhashed1", NULL,
		     "only-25-characters-long..1234567", kb2, &len2, NULL, 0);
	t_result(rc1 == 0 && rc2 == 0 && len1 == 24 && len2 == 24 &&
	      !memcmp(kb1, kb2, 32), "unhashed1-length-counts-seed",
	      "rc %d/%d, key lengths %u/%u (expected 24/24), same KB: %d",
	      rc1, rc2, len1, len2, !memcmp(kb1, kb2, 32));
}

/*
 * Key data from a pipe holding @len bytes of @data: AES128, read, derive,
 * stopping at the first error; @lenient as losetup's lenient mode.
 */
static int derive_pipe(struct keysetup *ks, const char *data, size_t len, int lenient)
{
	int fd = pipe_with(data, len), rc;

	keysetup_init(ks, lenient ? "test_keysetup (warning expected)" : NULL);
	ks->lenient = lenient;
	if (fd < 0)
		return -EIO;
	rc = keysetup_set_cipher(ks, "AES128");
	if (!rc)
		rc = keysetup_read_fd(ks, fd);
	if (!rc)
		rc = keysetup_derive(ks);
	close(fd);
	return rc;
}

/* What a key data case's keys are compared with. */
enum same_as { SAME_NONE, SAME_PASS_KB, SAME_LINE1_KB, SAME_65_SLOTS };

/*
 * Key data made of whole lines and a tail: strict loop-AES reading refuses
 * 63 lines, 2 lines or a cut last line; lenient reading takes what
 * loop-AES takes.  data: NULL, the first lines of 67 long lines (lines *
 * line length + extra bytes), else the string itself.
 */
static const struct line_case {
	const char *name, *data;
	int lines, extra, lenient, rc;
	const char *err1, *err2;	/* in the message, if not NULL */
	int nslots;			/* -1: not checked */
	enum same_as same;
} line_cases[] = {
	{ "lines-66-lenient-v3-first-65", NULL, 66, 0, 1, 0, NULL, NULL, 65, SAME_65_SLOTS },
	{ "lines-63-strict-refused", NULL, 63, 0, 0, -EINVAL, "63 lines",
	  "line 1 as a single-key", -1, SAME_NONE },
	{ "lines-63-lenient-single-key-line-1", NULL, 63, 0, 1, 0, NULL, NULL, 0,
	  SAME_LINE1_KB },
	/* 65 lines, the last one cut (no newline): truncated. */
	{ "lines-65-unterminated-refused", NULL, 65, -5, 0, -EINVAL, "truncated", NULL,
	  -1, SAME_NONE },
	/* ... and cut short of 20 characters: would be v2 silently. */
	{ "lines-64-and-a-cut-line-refused", NULL, 64, 7, 0, -EINVAL, "line 65", NULL,
	  -1, SAME_NONE },
	{ "lines-65-unterminated-lenient", NULL, 65, -5, 1, 0, NULL, NULL, 65, SAME_NONE },
	/* 2 long lines: strict refuses; lenient: line 0 as a passphrase. */
	{ "lines-2-strict-refused", PASS "\n" LONG26 "\n", 0, 0, 0, -EINVAL, "2 lines",
	  NULL, -1, SAME_NONE },
	{ "lines-2-lenient-single-key", PASS "\n" LONG26 "\n", 0, 0, 1, 0, NULL, NULL, -1,
	  SAME_PASS_KB },
	/* A passphrase without newline (echo -n) is fine. */
	{ "lines-single-unterminated-ok", PASS, 0, 0, 0, 0, NULL, NULL, -1, SAME_PASS_KB },
};

static void run_line_cases(const char *data, size_t line, const unsigned char *pass_kb)
{
	unsigned char slots65[65][32], kb1[32];
	struct keysetup ks;
	size_t i;
	int rc;

	/* The references: the first 65 lines alone, line 1 alone. */
	derive_pipe(&ks, data, 65 * line, 0);
	memcpy(slots65, ks.slots, sizeof(slots65));
	keysetup_wipe(&ks);
	derive_pipe(&ks, data, line, 0);
	memcpy(kb1, ks.key_buffer, 32);
	keysetup_wipe(&ks);

	for (i = 0; i < sizeof(line_cases) / sizeof(line_cases[0]); i++) {
		const struct line_case *c = &line_cases[i];
		const char *d = c->data ? c->data : data;
		size_t len = c->data ? strlen(c->data) : c->lines * line + c->extra;
		int same = 1;

		rc = derive_pipe(&ks, d, len, c->lenient);
		if (c->same == SAME_65_SLOTS)
			same = !memcmp(ks.slots, slots65, sizeof(slots65));
		else if (c->same != SAME_NONE)
			same = !memcmp(ks.key_buffer,
				       c->same == SAME_PASS_KB ? pass_kb : kb1, 32);
		t_result(rc == c->rc && (!c->err1 || strstr(ks.errmsg, c->err1)) &&
			 (!c->err2 || strstr(ks.errmsg, c->err2)) &&
			 (c->nslots < 0 || ks.nslots == (unsigned int)c->nslots) && same,
			 c->name, "rc %d (%s), %u slots, same keys as expected: %d; expected rc %d",
			 rc, ks.errmsg, ks.nslots, same, c->rc);
		keysetup_wipe(&ks);
	}
}

/* Length limit: 4094 characters pass, 4095 fail. */
static void test_line_length(void)
{
	char *big = malloc(KEYSETUP_LINE_MAX + 3);
	char tmpl[] = "/tmp/test_keysetup.XXXXXX";
	struct keysetup ks;
	int fd, tfd, rc;

	if (!big)
		return;
	tfd = mkstemp(tmpl);
	memset(big, 'k', KEYSETUP_LINE_MAX + 1);
	big[KEYSETUP_LINE_MAX] = '\n';
	if (tfd >= 0 &&
	    write(tfd, big, KEYSETUP_LINE_MAX + 1) == KEYSETUP_LINE_MAX + 1) {
		keysetup_init(&ks, NULL);
		rc = keysetup_read_file(&ks, tmpl);
		t_result(rc == 0 && ks.line_len[0] == KEYSETUP_LINE_MAX,
		      "lines-4094-characters", "rc %d: %s", rc, ks.errmsg);
		keysetup_wipe(&ks);
	} else {
		t_result(0, "lines-4094-characters", "cannot write %s", tmpl);
	}
	if (tfd >= 0)
		close(tfd);
	unlink(tmpl);

	memset(big, 'k', KEYSETUP_LINE_MAX + 1);
	big[KEYSETUP_LINE_MAX + 1] = '\n';
	fd = pipe_with(big, KEYSETUP_LINE_MAX + 2);
	keysetup_init(&ks, NULL);
	rc = keysetup_read_fd(&ks, fd);
	t_result(rc == -EMSGSIZE && strstr(ks.errmsg, "longer than") &&
	      ks.nstored == 0, "lines-4095-characters-rejected",
	      "rc %d (%s), expected -EMSGSIZE", rc, ks.errmsg);
	close(fd);
	keysetup_wipe(&ks);
	free(big);
}

/* Multi-key files: counted, then derived into 64/65 slots. */
static void test_key_files(const char *dir)
{
	static const char * const files[] = { "keys64.txt", "keys65.txt" };
	static const unsigned int lines[] = { 64, 65 };
	char path[PATH_MAX + 64], tname[64];
	struct keysetup ks;
	int i, rc;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		keysetup_init(&ks, NULL);
		rc = keysetup_set_cipher(&ks, "AES128");
		if (!rc)
			rc = keysetup_read_file(&ks, path);
		snprintf(tname, sizeof(tname), "multi-key-%s-count", files[i]);
		t_result(rc == 0 && ks.nkeys == lines[i], tname,
		      "rc %d (%s), %u key lines, expected %u", rc,
		      ks.errmsg, ks.nkeys, lines[i]);
		rc = keysetup_derive(&ks);
		snprintf(tname, sizeof(tname), "multi-key-%s-derive", files[i]);
		t_result(rc == 0 && ks.nslots == lines[i] && ks.nstored == 0,
			 tname, "keysetup_derive = %d (%s), %u slots, %u lines kept",
			 rc, ks.errmsg, ks.nslots, ks.nstored);
		keysetup_wipe(&ks);
	}
}

/*
 * 67 long lines: at most 66 are read; strict refuses 66, lenient takes the
 * first 65 as loop-AES does (the same slots as those 65 alone); then the
 * other line counts of line_cases.
 */
static void test_many_lines(void)
{
	size_t line = strlen(LONG26) + 1, total = 67 * line + 4, i;
	char *data = malloc(total + 1), rest[sizeof(LONG26) + 8];
	unsigned char pass_kb[32];
	struct keysetup ks;
	int fd, rc;
	ssize_t n;

	if (!data)
		return;
	for (i = 0; i < 67; i++)
		snprintf(data + i * line, line + 1, "%.*s%c\n",
			 (int)strlen(LONG26) - 1, LONG26, (char)('A' + i % 26));
	memcpy(data + 67 * line, "REST", 4);
	fd = pipe_with(data, total);
	keysetup_init(&ks, "test_keysetup");
	rc = keysetup_set_cipher(&ks, "AES128");
	if (!rc)
		rc = keysetup_read_fd(&ks, fd);
	n = read(fd, rest, sizeof(rest) - 1);
	rest[n > 0 ? n : 0] = '\0';
	t_result(rc == 0 && ks.nkeys == 66 && ks.nstored == 66 &&
		 !strncmp(rest, LONG26, strlen(LONG26) - 1),
		 "lines-at-most-66",
		 "rc %d, %u key lines, %u stored, next in pipe '%.10s' (expected 66, 66, line 67)",
		 rc, ks.nkeys, ks.nstored, rest);
	rc = keysetup_derive(&ks);
	t_result(rc == -EINVAL && strstr(ks.errmsg, "unknown key data format") &&
		 strstr(ks.errmsg, "first 65"),
		 "lines-66-strict-refused", "keysetup_derive = %d (%s)",
		 rc, ks.errmsg);
	close(fd);
	keysetup_wipe(&ks);

	derive("AES128", NULL, NULL, PASS, pass_kb, NULL, NULL, 0);
	run_line_cases(data, line, pass_kb);
	free(data);
}

static void test_random_and_misc(void)
{
	struct keysetup ks;
	int distinct = 1, j, k, rc;

	/* -H random: 65 slots, all different, none zero; nothing read. */
	keysetup_init(&ks, NULL);
	rc = keysetup_set_cipher(&ks, "AES256");
	if (!rc)
		rc = keysetup_set_hash(&ks, "random");
	if (!rc)
		rc = keysetup_derive(&ks);
	for (j = 0; j < 65; j++)
		for (k = j + 1; k < 65; k++)
			if (!memcmp(ks.slots[j], ks.slots[k], 32))
				distinct = 0;
	t_result(rc == 0 && ks.nslots == 65 && distinct &&
		 !memcmp(ks.key_buffer, ks.slots[0], 32) &&
		 !strcmp(keysetup_mode_name(&ks), "multi-key-v3"),
		 "random-65-keys", "rc %d (%s), %u slots, distinct %d",
		 rc, ks.errmsg, ks.nslots, distinct);
	keysetup_wipe(&ks);

	t_result(ks.nstored == 0 && ks.lines[0] == NULL, "wipe-drops-lines",
	      "lines left after keysetup_wipe");

	/* set_passphrase refuses what a line could not hold. */
	keysetup_init(&ks, NULL);
	rc = keysetup_set_passphrase(&ks, "abc\ndefghijklmnopqrstuvwxyz", 27);
	t_result(rc == -EINVAL, "set-passphrase-newline", "rc %d, expected -EINVAL", rc);
	keysetup_wipe(&ks);

	/* derive without a passphrase or a cipher. */
	keysetup_init(&ks, NULL);
	rc = keysetup_set_passphrase(&ks, LONG26, strlen(LONG26));
	if (!rc)
		rc = keysetup_derive(&ks);
	t_result(rc == -EINVAL && strstr(ks.errmsg, "cipher"), "derive-needs-cipher",
	      "rc %d (%s)", rc, ks.errmsg);
	keysetup_wipe(&ks);
	keysetup_init(&ks, NULL);
	rc = keysetup_set_cipher(&ks, "AES256");
	if (!rc)
		rc = keysetup_derive(&ks);
	t_result(rc == -EINVAL && strstr(ks.errmsg, "passphrase"),
	      "derive-needs-passphrase", "rc %d (%s)", rc, ks.errmsg);
	keysetup_wipe(&ks);
}

static void test_line_reader(void)
{
	struct keysetup ks;
	char buf[64];
	unsigned char kb_cr[32], kb[32];
	int fd, rc;
	ssize_t n;

	/* The reader takes the key data and nothing more from the descriptor. */
	snprintf(buf, sizeof(buf), "%s\nshort\nREST", LONG26);
	fd = pipe_with(buf, strlen(buf));
	keysetup_init(&ks, NULL);
	rc = keysetup_read_fd(&ks, fd);
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	t_result(rc == 0 && ks.nkeys == 1 && ks.nstored == 2 &&
	      !strcmp(ks.lines[0], LONG26) && !strcmp(buf, "REST"),
	      "lines-stop-at-short-line",
	      "rc %d, %u key lines, %u stored, left in pipe '%s' (expected 1, 2, 'REST')",
	      rc, ks.nkeys, ks.nstored, buf);
	close(fd);
	keysetup_wipe(&ks);

	/* NUL ends a line like newline; CR is kept. */
	fd = pipe_with(LONG26 "\0zzzzzzzzzzzzzzzzzzzzzz\r\n", 51);
	keysetup_init(&ks, NULL);
	rc = keysetup_read_fd(&ks, fd);
	t_result(rc == 0 && ks.nkeys == 2 && !strcmp(ks.lines[0], LONG26) &&
	      ks.line_len[1] == 23 && ks.lines[1][22] == '\r', "lines-nul-ends-cr-kept",
	      "rc %d, %u key lines, second line length %zu (expected 2 lines, 23 with CR)",
	      rc, ks.nkeys, ks.nstored > 1 ? ks.line_len[1] : 0);
	close(fd);
	keysetup_wipe(&ks);

	/* A CR makes another passphrase: key differs from the one without. */
	rc = derive_pipe(&ks, PASS "\r\n", 35, 0);
	memcpy(kb_cr, ks.key_buffer, 32);
	keysetup_wipe(&ks);
	derive("AES128", NULL, NULL, PASS, kb, NULL, NULL, 0);
	t_result(rc == 0 && memcmp(kb, kb_cr, 32), "lines-cr-is-part-of-passphrase",
	      "rc %d; KB with CR equals KB without: %d", rc, !memcmp(kb, kb_cr, 32));

	/* No newline at the end of the data is fine. */
	fd = pipe_with(LONG26, strlen(LONG26));
	keysetup_init(&ks, NULL);
	rc = keysetup_read_fd(&ks, fd);
	t_result(rc == 0 && ks.nkeys == 1 && !strcmp(ks.lines[0], LONG26),
	      "lines-eof-without-newline", "rc %d, %u key lines", rc, ks.nkeys);
	close(fd);
	keysetup_wipe(&ks);

	test_line_length();

	/* Bad descriptor and missing file: clear messages. */
	keysetup_init(&ks, NULL);
	rc = keysetup_read_fd(&ks, 1000);
	t_result(rc == -EBADF && strstr(ks.errmsg, "descriptor 1000"), "read-fd-bad",
	      "rc %d (%s), expected -EBADF naming the descriptor", rc, ks.errmsg);
	rc = keysetup_read_file(&ks, "/nonexistent/key-file");
	t_result(rc == -ENOENT && strstr(ks.errmsg, "/nonexistent/key-file"),
	      "read-file-missing", "rc %d (%s)", rc, ks.errmsg);
	keysetup_wipe(&ks);
}

/* ../shared/vectors beside the project root: exe is ROOT/build/tests/NAME. */
static int default_vector_dir(char *out, size_t len)
{
	char exe[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;
	int up;

	if (n > 0) {
		exe[n] = '\0';
		for (up = 0; up < 3; up++) {
			char *slash = strrchr(exe, '/');

			if (!slash)
				break;
			*slash = '\0';
		}
		snprintf(out, len, "%s/../shared/vectors", exe);
		if (up == 3 && stat(out, &st) == 0)
			return 0;
	}
	snprintf(out, len, "../shared/vectors");
	return 0;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct tsv *v, *im;
	unsigned char *plain;
	size_t plain_len = 0;
	const char *env = getenv("AESLOOP_VECTORS");
	int r, nsingle = 0, nmulti = 0;

	/* Line by line, so that warnings on stderr cannot split a result. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1)
		snprintf(dir, sizeof(dir), "%s", argv[1]);
	else if (env && *env)
		snprintf(dir, sizeof(dir), "%s", env);
	else
		default_vector_dir(dir, sizeof(dir));

	v = malloc(sizeof(*v));
	im = malloc(sizeof(*im));
	if (!v || !im)
		return 2;
	snprintf(path, sizeof(path), "%s/vectors.tsv", dir);
	if (load_tsv(v, path)) {
		t_result(0, "load-vectors", "cannot read %s (set AESLOOP_VECTORS or pass the folder)", path);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/intermediates.tsv", dir);
	if (load_tsv(im, path)) {
		t_result(0, "load-intermediates", "cannot read %s", path);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/plain64.img", dir);
	plain = (unsigned char *)read_file(path, &plain_len);
	if (!plain || plain_len != IMG_LEN) {
		t_result(0, "load-plain64", "cannot read %s as %d bytes", path, IMG_LEN);
		free(plain);
		goto out;
	}

	for (r = 0; r < v->nrows; r++) {
		const char *mode = col(v, r, "mode");

		if (!mode)
			continue;
		if (!strcmp(mode, "single")) {
			nsingle++;
		} else {
			nmulti++;
		}
		run_case(v, im, r, dir, plain);
	}
	t_result(nsingle >= 20, "vector-cases-found",
	      "only %d single-key cases in %s/vectors.tsv", nsingle, dir);
	t_result(nmulti >= 11, "vector-multi-cases-found",
	      "only %d multi-key cases in %s/vectors.tsv", nmulti, dir);
	free(plain);

	test_cipher_names();
	test_option_parsing();
	test_min_length();
	test_unhashed1_seed();
	test_line_reader();
	test_key_files(dir);
	test_many_lines();
	test_random_and_misc();
out:
	free(v->text);
	free(im->text);
	free(v);
	free(im);
	return t_exit();
}
