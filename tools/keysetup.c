// SPDX-License-Identifier: GPL-2.0
/*
 * keysetup.c - loop-AES key setup (../shared/spec/loop-aes-format.md §3).
 *
 * The one implementation of: cipher names (§3.1), reading passphrases and
 * key lines (§3.2, §3.3), and deriving the single-key key buffer KB (§3.2),
 * used by both aesloop-pipe and the patched util-linux losetup.  Hashes come
 * from OpenSSL's libcrypto; AES (for -C) is ours.
 *
 * Secrets (lines, hash input, temporary keys) live in heap buffers that are
 * wiped before they are freed; the caller keeps the result in struct
 * keysetup and wipes it with keysetup_wipe().  Callers should mlockall()
 * first so that none of this reaches swap.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "aes.h"
#include "keysetup.h"

/* Key-file marks of spec §3.3: this many counted lines select a mode. */
#define MULTI_KEY_V2_LINES	64
#define MULTI_KEY_V3_LINES	65

static void set_error(struct keysetup *ks, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_error(struct keysetup *ks, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ks->errmsg, sizeof(ks->errmsg), fmt, ap);
	va_end(ap);
}

static void warn_user(const struct keysetup *ks, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warn_user(const struct keysetup *ks, const char *fmt, ...)
{
	va_list ap;

	if (ks->prog)
		fprintf(stderr, "%s: ", ks->prog);
	fputs("warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Wipe and free every stored line. */
static void drop_lines(struct keysetup *ks)
{
	unsigned int i;

	for (i = 0; i < ks->nstored; i++) {
		memzero_explicit(ks->lines[i], ks->line_len[i] + 1);
		free(ks->lines[i]);
		ks->lines[i] = NULL;
		ks->line_len[i] = 0;
	}
	ks->nstored = 0;
	ks->nkeys = 0;
}

/**
 * keysetup_init() - start a key setup (spec §3)
 * @ks:   the context to fill; any previous content is ignored (not freed)
 * @prog: program name for warnings on stderr, kept by pointer; may be NULL
 *
 * Sets no cipher (key_len 0), the default hash, no seed and no -C.
 */
void keysetup_init(struct keysetup *ks, const char *prog)
{
	memset(ks, 0, sizeof(*ks));
	ks->prog = prog;
	ks->hash = KEYSETUP_HASH_DEFAULT;
}

/**
 * keysetup_wipe() - erase every secret of a key setup and free its lines (§3)
 * @ks: the context; afterwards it is as keysetup_init() leaves it (with the
 *      same @prog), so it may be used again
 *
 * Safe to call more than once, and on a context where nothing was read.
 */
void keysetup_wipe(struct keysetup *ks)
{
	const char *prog = ks->prog;

	drop_lines(ks);
	memzero_explicit(ks, sizeof(*ks));
	keysetup_init(ks, prog);
}

/**
 * keysetup_parse_cipher() - parse a cipher name (spec §3.1)
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

static void set_cipher_name(struct keysetup *ks)
{
	snprintf(ks->cipher_name, sizeof(ks->cipher_name), "AES%u",
		 ks->key_len * 8);
}

/**
 * keysetup_set_cipher() - choose the cipher and key length (spec §3.1)
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
		set_error(ks, "unsupported cipher '%.64s': use AES128, AES192 or AES256 (AES means AES128)",
			  name ? name : "");
		return -EINVAL;
	}
	ks->key_len = key_len;
	set_cipher_name(ks);
	return 0;
}

/**
 * keysetup_set_hash() - choose the passphrase hash (-H, spec §3.2)
 * @ks:   the context
 * @name: sha256, sha384, sha512, rmd160, unhashed1 or unhashed2, any case
 *
 * Return: 0; -EOPNOTSUPP for "random" (65 random keys, not supported yet);
 * -EINVAL for any other name.  The message is in @ks->errmsg.
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
			return 0;
		}
	}
	if (!strncasecmp(name, "random", 6) && (!name[6] || name[6] == '/')) {
		set_error(ks, "password hash '%.64s' (random keys) is not supported yet",
			  name);
		return -EOPNOTSUPP;
	}
	set_error(ks, "unknown password hash '%.64s': use sha256, sha384, sha512, rmd160, unhashed1 or unhashed2",
		  name);
	return -EINVAL;
}

/**
 * keysetup_set_seed() - set the passphrase seed (-S, spec §3.2)
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
 * keysetup_set_itercountk() - set the -C iteration count (spec §3.2)
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
			set_error(ks, "iteration count '%.64s' is too large", arg);
			return -EINVAL;
		}
		v = v * 10 + d;
	}
	ks->itercountk = v;
	return 0;
bad:
	set_error(ks, "iteration count '%.64s' is not a decimal number (of thousands of iterations)",
		  arg ? arg : "");
	return -EINVAL;
}

/*
 * Read one byte, retrying on EINTR and waiting when the descriptor is
 * non-blocking.  Return 1 for a byte, 0 at end of file, -errno on error.
 */
static int read_byte(int fd, char *c)
{
	for (;;) {
		ssize_t n = read(fd, c, 1);

		if (n == 1)
			return 1;
		if (n == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			if (poll(&pfd, 1, -1) >= 0 || errno == EINTR)
				continue;
		}
		return -errno;
	}
}

/*
 * Read one line of spec §3.2/§3.3: it ends at a newline, a NUL or the end
 * of file (neither terminator is kept; a carriage return is kept).  Bytes
 * are read one at a time so that nothing after the line is consumed.
 * Stores a NUL-terminated heap copy in *@out and its length in *@len.
 * Return 0, -EMSGSIZE if the line is longer than KEYSETUP_LINE_MAX, -ENOMEM,
 * or -errno of a failed read.
 */
static int read_line(int fd, char **out, size_t *len)
{
	char *buf;
	size_t n = 0;
	int rc;

	buf = malloc(KEYSETUP_LINE_MAX + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		char c;

		rc = read_byte(fd, &c);
		if (rc < 0)
			goto fail;
		if (rc == 0 || c == '\n' || c == '\0')
			break;
		if (n == KEYSETUP_LINE_MAX) {
			rc = -EMSGSIZE;
			goto fail;
		}
		buf[n++] = c;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
fail:
	memzero_explicit(buf, KEYSETUP_LINE_MAX + 1);
	free(buf);
	return rc;
}

/*
 * Read key lines from @fd as spec §3.3 says: up to KEYSETUP_MAX_LINES lines,
 * the first one shorter than KEYSETUP_MIN_PASS_LEN ending the list (it is
 * stored all the same: as line 0 it is the passphrase).  @what names the
 * source in messages.
 */
static int read_lines(struct keysetup *ks, int fd, const char *what)
{
	int rc;

	drop_lines(ks);
	snprintf(ks->source, sizeof(ks->source), "%s", what);
	while (ks->nstored < KEYSETUP_MAX_LINES) {
		unsigned int i = ks->nstored;

		rc = read_line(fd, &ks->lines[i], &ks->line_len[i]);
		if (rc == -EMSGSIZE) {
			set_error(ks, "%s: line %u is longer than %u characters",
				  what, i + 1, KEYSETUP_LINE_MAX);
			goto fail;
		} else if (rc) {
			set_error(ks, "%s: cannot read: %s", what, strerror(-rc));
			goto fail;
		}
		ks->nstored++;
		if (ks->line_len[i] < KEYSETUP_MIN_PASS_LEN)
			break;
		ks->nkeys++;
	}
	if (ks->nkeys > 1 && ks->nkeys < MULTI_KEY_V2_LINES)
		warn_user(ks, "%s: unknown key data format: %u lines of %u or more characters (expected 1, 64 or 65); using the first line as a single-key passphrase",
			  what, ks->nkeys, KEYSETUP_MIN_PASS_LEN);
	else if (ks->nkeys > MULTI_KEY_V3_LINES)
		warn_user(ks, "%s: unknown key data format: more than %u lines of %u or more characters; using the first %u (multi-key-v3)",
			  what, MULTI_KEY_V3_LINES, KEYSETUP_MIN_PASS_LEN,
			  MULTI_KEY_V3_LINES);
	return 0;
fail:
	drop_lines(ks);
	return rc;
}

/**
 * keysetup_read_fd() - read the passphrase or key lines from an fd (§3.3)
 * @ks: the context
 * @fd: an open file descriptor (-p FD); read byte by byte up to the end of
 *      the key data (spec §3.3), not closed
 *
 * Lines end at newline or NUL and hold at most KEYSETUP_LINE_MAX characters;
 * up to KEYSETUP_MAX_LINES are read, the first line shorter than
 * KEYSETUP_MIN_PASS_LEN ending the list.  Line 0 is the passphrase.  Warns
 * on stderr, as loop-AES does, if the count of long lines is neither 0, 1,
 * 64 nor 65.
 *
 * Return: 0; -EMSGSIZE for a too long line; -ENOMEM; -errno of a failed
 * read (e.g. -EBADF).  The message is in @ks->errmsg.
 */
int keysetup_read_fd(struct keysetup *ks, int fd)
{
	char what[64];

	snprintf(what, sizeof(what), "passphrase file descriptor %d", fd);
	return read_lines(ks, fd, what);
}

/**
 * keysetup_read_file() - read a cleartext key file (-P FILE, spec §3.3)
 * @ks:   the context
 * @path: the file: one line (a single-key passphrase) or 64/65 key lines
 *
 * Same line rules as keysetup_read_fd().
 *
 * Return: 0, or -errno if the file cannot be opened or read, -EMSGSIZE,
 * -ENOMEM.  The message, naming @path, is in @ks->errmsg.
 */
int keysetup_read_file(struct keysetup *ks, const char *path)
{
	char what[PATH_MAX + 32];
	int fd, rc;

	snprintf(what, sizeof(what), "key file %s", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		drop_lines(ks);
		set_error(ks, "cannot open key file %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = read_lines(ks, fd, what);
	close(fd);
	return rc;
}

/* The terminal being read, for the signal handler. */
static volatile sig_atomic_t tty_fd = -1;
static struct termios tty_saved;

/* Signals that end the process: put the terminal back first. */
static const int tty_fatal_signals[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };

static void tty_signal_handler(int sig)
{
	int fd = tty_fd;

	if (fd >= 0) {
		ssize_t n;

		tcsetattr(fd, TCSAFLUSH, &tty_saved);
		n = write(fd, "\n", 1);	/* on the way out: a failure is moot */
		(void)n;
	}
	/* SA_RESETHAND made the action the default one: die of @sig. */
	raise(sig);
}

static int write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

/**
 * keysetup_read_tty() - ask for the passphrase on the terminal (spec §3.2)
 * @ks:     the context
 * @prompt: text written to the terminal first, e.g. "Password: "
 *
 * Opens /dev/tty, turns echo off (the prompt is shown, the input not), reads one line (newline or NUL ends it,
 * at most KEYSETUP_LINE_MAX characters) and restores the terminal, also
 * when SIGINT, SIGQUIT, SIGTERM or SIGHUP arrive meanwhile (the process then
 * dies of that signal, as it would have).  Job-control stops are held off
 * during the read.  Only one line is read: no multi-key from a terminal.
 *
 * Return: 0; -ENXIO etc. if there is no terminal; -EMSGSIZE for a too long
 * line; -errno of a failed read.  The message is in @ks->errmsg.
 */
int keysetup_read_tty(struct keysetup *ks, const char *prompt)
{
	struct sigaction sa, old[sizeof(tty_fatal_signals) / sizeof(int)];
	sigset_t stops, oldmask;
	struct termios noecho;
	size_t i, nsig = sizeof(tty_fatal_signals) / sizeof(int);
	int fd, rc;

	drop_lines(ks);
	snprintf(ks->source, sizeof(ks->source), "/dev/tty");
	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		set_error(ks, "cannot ask for the passphrase: cannot open /dev/tty: %s (give it with a passphrase file descriptor or key file instead)",
			  strerror(-rc));
		return rc;
	}
	if (tcgetattr(fd, &tty_saved)) {
		rc = -errno;
		set_error(ks, "cannot ask for the passphrase: /dev/tty: %s",
			  strerror(-rc));
		close(fd);
		return rc;
	}

	sigemptyset(&stops);
	sigaddset(&stops, SIGTSTP);
	sigaddset(&stops, SIGTTIN);
	sigaddset(&stops, SIGTTOU);
	sigprocmask(SIG_BLOCK, &stops, &oldmask);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tty_signal_handler;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	tty_fd = fd;
	for (i = 0; i < nsig; i++) {
		sigaction(tty_fatal_signals[i], NULL, &old[i]);
		/* A signal the caller ignores stays ignored. */
		if (old[i].sa_handler != SIG_IGN)
			sigaction(tty_fatal_signals[i], &sa, NULL);
	}

	noecho = tty_saved;
	noecho.c_lflag &= ~(tcflag_t)ECHO;
	if (tcsetattr(fd, TCSAFLUSH, &noecho)) {
		rc = -errno;
		set_error(ks, "cannot turn off echo on /dev/tty: %s",
			  strerror(-rc));
		goto restore;
	}

	rc = write_all(fd, prompt, strlen(prompt));
	if (rc) {
		set_error(ks, "cannot write the prompt to /dev/tty: %s",
			  strerror(-rc));
		goto restore_tty;
	}
	rc = read_line(fd, &ks->lines[0], &ks->line_len[0]);
	if (rc == 0) {
		ks->nstored = 1;
		ks->nkeys = ks->line_len[0] >= KEYSETUP_MIN_PASS_LEN;
	} else if (rc == -EMSGSIZE) {
		set_error(ks, "passphrase on /dev/tty is longer than %u characters",
			  KEYSETUP_LINE_MAX);
	} else {
		set_error(ks, "cannot read the passphrase from /dev/tty: %s",
			  strerror(-rc));
	}
	/* Echo was off, so the user's Enter did not move the cursor. */
	write_all(fd, "\n", 1);

restore_tty:
	/* TCSAFLUSH also drops whatever was typed past a too long line. */
	tcsetattr(fd, TCSAFLUSH, &tty_saved);
restore:
	for (i = 0; i < nsig; i++)
		if (old[i].sa_handler != SIG_IGN)
			sigaction(tty_fatal_signals[i], &old[i], NULL);
	tty_fd = -1;
	memzero_explicit(&tty_saved, sizeof(tty_saved));
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	close(fd);
	return rc;
}

/**
 * keysetup_set_passphrase() - give the passphrase directly (spec §3.2)
 * @ks:   the context
 * @pass: the passphrase bytes, @len of them (copied; the caller wipes its own)
 * @len:  at most KEYSETUP_LINE_MAX
 *
 * For callers that have the passphrase already (tests, other front ends).
 * It is taken as one line, so it may not contain a newline or NUL.
 *
 * Return: 0; -EINVAL for a newline or NUL in @pass; -EMSGSIZE if too
 * long; -ENOMEM.  The message is in @ks->errmsg.
 */
int keysetup_set_passphrase(struct keysetup *ks, const char *pass, size_t len)
{
	char *copy;

	drop_lines(ks);
	if (len > KEYSETUP_LINE_MAX) {
		set_error(ks, "passphrase is longer than %u characters",
			  KEYSETUP_LINE_MAX);
		return -EMSGSIZE;
	}
	if (memchr(pass, '\n', len) || memchr(pass, '\0', len)) {
		set_error(ks, "passphrase contains a newline or NUL byte, which would end it");
		return -EINVAL;
	}
	copy = malloc(len + 1);
	if (!copy) {
		set_error(ks, "out of memory for the passphrase");
		return -ENOMEM;
	}
	memcpy(copy, pass, len);
	copy[len] = '\0';
	snprintf(ks->source, sizeof(ks->source), "passphrase");
	ks->lines[0] = copy;
	ks->line_len[0] = len;
	ks->nstored = 1;
	ks->nkeys = len >= KEYSETUP_MIN_PASS_LEN;
	return 0;
}

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

/* 6-bit value of one unhashed1 character (spec §3.2). */
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

/* Hash @in into the 32-byte buffer @kb with hash @h (spec §3.2). */
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
 * -C (spec §3.2): an AES-256 key from the hash of the input with bit 0 of
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

/**
 * keysetup_derive() - compute the single-key key buffer KB (spec §3.2)
 * @ks: the context, with a cipher set and a passphrase read
 *
 * Hashes passphrase + seed into @ks->key_buffer (32 bytes) with the chosen
 * hash, then applies -C if set.  With -H unhashed1 the key length is forced
 * by the length of passphrase + seed (as loop-AES and aespipe count it):
 * fewer than 32 characters give 16 bytes, 32..42 give 24, 43 or more 32;
 * @ks->key_len and @ks->cipher_name then say so.  The stored lines are
 * wiped before returning, whatever the outcome.
 *
 * Return: 0 with the key in @ks->key_buffer and @ks->key_len; or
 * -EINVAL (no cipher, nothing read, or a passphrase shorter than 20
 * characters, 1 for rmd160 and unhashed2); -EOPNOTSUPP for multi-key key
 * data (64 or 65 lines: not supported yet); -ENOMEM; -EIO if libcrypto
 * failed.  The message is in @ks->errmsg; the key buffer is then zero.
 */
int keysetup_derive(struct keysetup *ks)
{
	enum keysetup_hash h = effective_hash(ks);
	size_t plen, slen, len, min_len;
	u8 *in = NULL;
	int rc;

	memzero_explicit(ks->key_buffer, sizeof(ks->key_buffer));
	if (!ks->key_len) {
		set_error(ks, "no cipher chosen");
		rc = -EINVAL;
		goto out;
	}
	if (!ks->nstored) {
		set_error(ks, "no passphrase read");
		rc = -EINVAL;
		goto out;
	}
	if (ks->nkeys >= MULTI_KEY_V2_LINES) {
		set_error(ks, "%s: %u key lines mean multi-key-%s mode: multi-key is not supported yet",
			  ks->source, ks->nkeys,
			  ks->nkeys == MULTI_KEY_V2_LINES ? "v2" : "v3");
		rc = -EOPNOTSUPP;
		goto out;
	}

	plen = ks->line_len[0];
	min_len = (h == KEYSETUP_HASH_RMD160 || h == KEYSETUP_HASH_UNHASHED2) ?
		  1 : KEYSETUP_MIN_PASS_LEN;
	if (plen < min_len) {
		set_error(ks, "%s: passphrase is too short: it has %zu characters, it must have at least %zu",
			  ks->source, plen, min_len);
		rc = -EINVAL;
		goto out;
	}

	slen = ks->seed ? strlen(ks->seed) : 0;
	len = plen + slen;
	in = malloc(len + 1);
	if (!in) {
		set_error(ks, "out of memory for the key setup");
		rc = -ENOMEM;
		goto out;
	}
	memcpy(in, ks->lines[0], plen);
	if (slen)
		memcpy(in + plen, ks->seed, slen);

	if (h == KEYSETUP_HASH_UNHASHED1) {
		ks->key_len = len >= 43 ? 32 : len >= 32 ? 24 : 16;
		set_cipher_name(ks);
	}

	rc = hash_key(h, in, len, ks->key_buffer);
	if (rc == 0 && ks->itercountk)
		rc = iterate_key(h, in, len, ks->itercountk, ks->key_buffer);
	if (rc == -ENOMEM)
		set_error(ks, "out of memory for the key setup");
	else if (rc)
		set_error(ks, "%s of the passphrase failed (OpenSSL libcrypto)",
			  hash_name(h));
	memzero_explicit(in, len + 1);
	free(in);
out:
	if (rc)
		memzero_explicit(ks->key_buffer, sizeof(ks->key_buffer));
	drop_lines(ks);
	return rc;
}
