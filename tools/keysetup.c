// SPDX-License-Identifier: GPL-2.0
/*
 * keysetup.c - loop-AES key setup (../shared/spec/loop-aes-format.md §3).
 *
 * The one implementation of: cipher names (§3.1), reading passphrases and
 * key lines (§3.2, §3.3), decrypting gpg key files (§3.3), deriving the
 * single-key key buffer KB (§3.2) and the 64/65 multi-key slots (§3.3), and
 * the random keys of -H random; used by aesloop-pipe and the patched
 * util-linux losetup, mount and swapon.  Hashes come from OpenSSL's
 * libcrypto; AES (for -C) is ours.
 *
 * Secrets (lines, hash input, temporary keys) live in heap buffers that are
 * wiped before they are freed; the caller keeps the result in struct
 * keysetup and wipes it with keysetup_wipe().  Callers should mlockall()
 * first so that none of this reaches swap.
 */
#define _GNU_SOURCE		/* memfd_create, secure_getenv */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "aes.h"
#include "keysetup.h"

/* Key-file marks of spec §3.3: this many counted lines select a mode. */
#define MULTI_KEY_V2_LINES	KEYSETUP_MULTI_V2
#define MULTI_KEY_V3_LINES	KEYSETUP_MULTI_V3

/* The tweak of byte 0 of every multi-key slot (spec §3.3). */
#define MULTI_KEY_V2_TWEAK	0x55
#define MULTI_KEY_V3_TWEAK	0xF4

/* Where gpg is looked for, in this order (as loop-AES and aespipe do). */
static const char * const gpg_paths[] = {
	"/bin/gpg", "/usr/bin/gpg", "/usr/local/bin/gpg",
};

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
	ks->unterminated = 0;
}

/**
 * keysetup_init() - start a key setup (spec §3)
 * @ks:   the context to fill; any previous content is ignored (not freed)
 * @prog: program name for warnings on stderr, kept by pointer; may be NULL
 *
 * Sets no cipher (key_len 0), the default hash, no seed, no -C, no gpg,
 * strict key data checks (@lenient 0).
 */
void keysetup_init(struct keysetup *ks, const char *prog)
{
	memset(ks, 0, sizeof(*ks));
	ks->prog = prog;
	ks->hash = KEYSETUP_HASH_DEFAULT;
	ks->random_mode = -1;
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
	set_error(ks, "unknown password hash '%.64s': use sha256, sha384, sha512, rmd160, unhashed1, unhashed2 or random",
		  name);
	return -EINVAL;
bad_mode:
	set_error(ks, "password hash '%.64s': after 'random/' comes an octal mode such as 1777",
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

/**
 * keysetup_set_gpg() - take the key data from a gpg-encrypted file (-K, -G)
 * @ks:       the context
 * @key_file: the encrypted key file (-K), kept by pointer; NULL or "" for
 *            none
 * @home:     gpg's home directory (-G), kept by pointer; NULL or "" for
 *            gpg's default (that of the user running it)
 *
 * The read functions then read one line, the passphrase that unlocks the
 * file, and keysetup_derive() runs gpg (spec §3.3): /bin/gpg, /usr/bin/gpg
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
 * Stores a NUL-terminated heap copy in *@out and its length in *@len, and
 * in *@terminated whether a newline or NUL ended it (not the end of file).
 * Return 0, -EMSGSIZE if the line is longer than KEYSETUP_LINE_MAX, -ENOMEM,
 * or -errno of a failed read.
 */
static int read_line(int fd, char **out, size_t *len, int *terminated)
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
		if (rc == 0 || c == '\n' || c == '\0') {
			*terminated = rc != 0;
			break;
		}
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
 * Read key lines from @fd as spec §3.3 says: up to @max lines, the first one
 * shorter than KEYSETUP_MIN_PASS_LEN ending the list (it is stored all the
 * same: as line 0 it is the passphrase).  @what names the source in
 * messages.  With a gpg key file set only the passphrase line is read.
 */
static int read_lines(struct keysetup *ks, int fd, const char *what,
		      unsigned int max)
{
	int rc, terminated = 0;

	drop_lines(ks);
	snprintf(ks->source, sizeof(ks->source), "%s", what);
	while (ks->nstored < max) {
		unsigned int i = ks->nstored;

		rc = read_line(fd, &ks->lines[i], &ks->line_len[i], &terminated);
		if (rc == -EMSGSIZE) {
			set_error(ks, "%s: line %u is longer than %u characters",
				  what, i + 1, KEYSETUP_LINE_MAX);
			goto fail;
		} else if (rc) {
			set_error(ks, "%s: cannot read: %s", what, strerror(-rc));
			goto fail;
		}
		ks->nstored++;
		ks->unterminated = !terminated && ks->line_len[i] > 0;
		if (ks->line_len[i] < KEYSETUP_MIN_PASS_LEN)
			break;
		ks->nkeys++;
		if (!terminated)
			break;	/* end of the data */
	}
	return 0;
fail:
	drop_lines(ks);
	return rc;
}

/* How many lines a read function takes: one passphrase for gpg, or all. */
static unsigned int lines_wanted(const struct keysetup *ks)
{
	return ks->gpg_key_file ? 1 : KEYSETUP_MAX_LINES;
}

/**
 * keysetup_read_fd() - read the passphrase or key lines from an fd (§3.3)
 * @ks: the context
 * @fd: an open file descriptor (-p FD); read byte by byte up to the end of
 *      the key data (spec §3.3), not closed
 *
 * Lines end at newline or NUL and hold at most KEYSETUP_LINE_MAX characters;
 * up to KEYSETUP_MAX_LINES are read, the first line shorter than
 * KEYSETUP_MIN_PASS_LEN ending the list.  Line 0 is the passphrase.  With a
 * gpg key file (keysetup_set_gpg()) only one line is read: the passphrase
 * of the gpg file.  keysetup_derive() judges the count of lines.
 *
 * Return: 0; -EMSGSIZE for a too long line; -ENOMEM; -errno of a failed
 * read (e.g. -EBADF).  The message is in @ks->errmsg.
 */
int keysetup_read_fd(struct keysetup *ks, int fd)
{
	char what[64];

	snprintf(what, sizeof(what), "passphrase file descriptor %d", fd);
	return read_lines(ks, fd, what, lines_wanted(ks));
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
	rc = read_lines(ks, fd, what, lines_wanted(ks));
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

/**
 * keysetup_write_all() - write all of a buffer, retrying on EINTR
 * @fd:  file descriptor
 * @buf: @len bytes
 * @len: bytes to write
 *
 * Return: 0, or -errno of the write that failed.
 */
int keysetup_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * One prompt and one line on the terminal @fd (echo already off); the
 * line goes to *@out (heap), its length to *@len.
 */
static int tty_ask(struct keysetup *ks, int fd, const char *prompt,
		   char **out, size_t *len)
{
	int rc, terminated;

	rc = keysetup_write_all(fd, prompt, strlen(prompt));
	if (rc) {
		set_error(ks, "cannot write the prompt to /dev/tty: %s",
			  strerror(-rc));
		return rc;
	}
	rc = read_line(fd, out, len, &terminated);
	if (rc == -EMSGSIZE)
		set_error(ks, "passphrase on /dev/tty is longer than %u characters",
			  KEYSETUP_LINE_MAX);
	else if (rc)
		set_error(ks, "cannot read the passphrase from /dev/tty: %s",
			  strerror(-rc));
	/* Echo was off, so the user's Enter did not move the cursor. */
	keysetup_write_all(fd, "\n", 1);
	return rc;
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
 * With @ks->ask_twice (-T) it asks again ("Retype password: ") and fails if
 * the two differ.
 *
 * Return: 0; -ENXIO etc. if there is no terminal; -EMSGSIZE for a too long
 * line; -EINVAL if the two passphrases of -T differ; -errno of a failed
 * read.  The message is in @ks->errmsg.
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

	rc = tty_ask(ks, fd, prompt, &ks->lines[0], &ks->line_len[0]);
	if (rc == 0) {
		ks->nstored = 1;
		ks->nkeys = ks->line_len[0] >= KEYSETUP_MIN_PASS_LEN;
	}
	if (rc == 0 && ks->ask_twice) {
		char *again = NULL;
		size_t again_len = 0;

		rc = tty_ask(ks, fd, "Retype password: ", &again, &again_len);
		if (rc == 0 && (again_len != ks->line_len[0] ||
				memcmp(again, ks->lines[0], again_len))) {
			set_error(ks, "the passphrases typed on /dev/tty are not identical");
			rc = -EINVAL;
		}
		if (again) {
			memzero_explicit(again, again_len + 1);
			free(again);
		}
		if (rc)
			drop_lines(ks);
	}

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

static const char * const ask_password_paths[] = {
	"/bin/systemd-ask-password", "/usr/bin/systemd-ask-password",
};

/**
 * keysetup_read_agent() - ask for the passphrase through systemd's agents
 * @ks:      the context
 * @message: the question, e.g. "Passphrase for /srv/vol.aes:"
 * @id:      its name for the agents (systemd-ask-password --id)
 *
 * For a caller without a terminal on a system that systemd runs (mount or
 * losetup run by a unit or a script): runs systemd-ask-password, which the
 * console, plymouth, tty and wall agents answer as they answer
 * systemd-cryptsetup, and reads its one line (at most KEYSETUP_LINE_MAX
 * characters) as the passphrase.  It runs with the caller's real IDs,
 * stdin on /dev/null, and gives up after its default time (90 s).
 *
 * Return: 0; -ENOENT if systemd does not run (no /run/systemd/system) or
 * systemd-ask-password is not installed; -ECANCELED if it gave no answer
 * (timed out, or the agent refused); -EMSGSIZE; -errno.  The message is in
 * @ks->errmsg.
 */
int keysetup_read_agent(struct keysetup *ks, const char *message,
			const char *id)
{
	char id_arg[PATH_MAX + 64];
	char *argv[4];
	int outp[2], rc, status = -1, terminated, e;
	size_t i;
	pid_t pid;

	drop_lines(ks);
	snprintf(ks->source, sizeof(ks->source), "systemd's password agent");
	if (access("/run/systemd/system", F_OK)) {
		set_error(ks, "cannot ask for the passphrase: no terminal, and systemd does not run (give it with a passphrase file descriptor or key file instead)");
		return -ENOENT;
	}
	snprintf(id_arg, sizeof(id_arg), "--id=%s", id);
	argv[0] = (char *)"systemd-ask-password";
	argv[1] = id_arg;
	argv[2] = (char *)message;
	argv[3] = NULL;
	if (pipe2(outp, O_CLOEXEC)) {
		rc = -errno;
		set_error(ks, "cannot ask for the passphrase: pipe: %s", strerror(-rc));
		return rc;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(outp[0]);
		close(outp[1]);
		set_error(ks, "cannot ask for the passphrase: fork: %s", strerror(-rc));
		return rc;
	}
	if (pid == 0) {
		/* Not O_CLOEXEC: it may be fd 0 itself, which dup2() leaves as is. */
		int null = open("/dev/null", O_RDONLY);

		if (null < 0 || dup2(null, 0) != 0 || dup2(outp[1], 1) != 1 ||
		    setgid(getgid()) || setuid(getuid()))
			_exit(126);
		if (null != 0)
			close(null);
		for (i = 0; i < sizeof(ask_password_paths) / sizeof(ask_password_paths[0]); i++)
			execv(ask_password_paths[i], argv);
		_exit(127);
	}
	close(outp[1]);
	rc = read_line(outp[0], &ks->lines[0], &ks->line_len[0], &terminated);
	close(outp[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	e = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	if (!rc && (e || !terminated)) {
		memzero_explicit(ks->lines[0], ks->line_len[0]);
		free(ks->lines[0]);
		ks->lines[0] = NULL;
		ks->line_len[0] = 0;
		rc = e == 127 ? -ENOENT : -ECANCELED;
	}
	if (rc == -ENOENT)
		set_error(ks, "cannot ask for the passphrase: no terminal, and systemd-ask-password is not installed");
	else if (rc == -ECANCELED)
		set_error(ks, "no passphrase: systemd-ask-password got no answer (exit %d)", e);
	else if (rc == -EMSGSIZE)
		set_error(ks, "the passphrase is longer than %u characters", KEYSETUP_LINE_MAX);
	else if (rc)
		set_error(ks, "cannot read the passphrase from systemd-ask-password: %s",
			  strerror(-rc));
	if (rc)
		return rc;
	ks->nstored = 1;
	ks->nkeys = ks->line_len[0] >= KEYSETUP_MIN_PASS_LEN;
	return 0;
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
			set_error(ks, "cannot get random keys from the kernel (getrandom): %s",
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
 * A memfd holding the first @limit bytes of @fd (which is closed), so that
 * gpg does not read a whole volume whose first bytes are its key file.
 * Returns the new descriptor or -errno.
 */
static int copy_prefix(int fd, unsigned long long limit)
{
	char buf[4096];
	int m, rc = 0;

	m = memfd_create("aesloop-gpg-key", MFD_CLOEXEC);
	if (m < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while (limit) {
		size_t want = limit < sizeof(buf) ? (size_t)limit : sizeof(buf);
		ssize_t n = read(fd, buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		rc = keysetup_write_all(m, buf, (size_t)n);
		if (rc)
			break;
		limit -= (unsigned long long)n;
	}
	close(fd);
	if (!rc && lseek(m, 0, SEEK_SET) < 0)
		rc = -errno;
	if (rc) {
		close(m);
		return rc;
	}
	return m;
}

/* The last non-empty line gpg wrote to @fd (a memfd), cleaned, in @out. */
static void gpg_last_message(int fd, char *out, size_t outlen)
{
	char buf[2048], *line, *end;
	ssize_t n;

	out[0] = '\0';
	if (fd < 0)
		return;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	end = buf + n;
	while (end > buf && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		*--end = '\0';
	line = end;
	while (line > buf && line[-1] != '\n')
		line--;
	for (end = line; *end; end++)
		if ((unsigned char)*end < ' ' || (unsigned char)*end > '~')
			*end = '?';
	snprintf(out, outlen, "%.200s", line);
}

/* Move @fd to @target in the child, whatever numbers they have. */
static int child_move_fd(int fd, int target)
{
	return dup2(fd, target) == target ? 0 : -1;
}

/*
 * The child: the key file on stdin, the key lines to @out, messages to
 * @err, the passphrase pipe as fd 3, the exec report pipe as fd 4 (closed
 * on a successful exec).  Runs gpg with the caller's real IDs.  Never
 * returns.
 */
static void __attribute__((noreturn))
gpg_child(int key, int out, int err, int pass, int report, char *const argv[],
	  char *const envp[], const char *override)
{
	int hi[5], i, e;

	/* First out of the way of 0..4, then into place. */
	hi[0] = fcntl(key, F_DUPFD, 10);
	hi[1] = fcntl(out, F_DUPFD, 10);
	hi[2] = fcntl(err, F_DUPFD, 10);
	hi[3] = fcntl(pass, F_DUPFD, 10);
	hi[4] = fcntl(report, F_DUPFD, 10);
	for (i = 0; i < 5; i++)
		if (hi[i] < 0 || child_move_fd(hi[i], i))
			goto fail;
	if (fcntl(4, F_SETFD, FD_CLOEXEC))
		goto fail;
	closefrom(5);
	/* gpg runs as the user who ran us, never with our privileges. */
	if (setgid(getgid()) || setuid(getuid()) ||
	    (geteuid() != getuid() || getegid() != getgid()))
		goto fail;
	if (override) {
		execve(override, argv, envp);
	} else {
		for (i = 0; i < (int)(sizeof(gpg_paths) / sizeof(gpg_paths[0])); i++)
			execve(gpg_paths[i], argv, envp);
	}
fail:
	e = errno ? errno : EINVAL;
	if (write(4, &e, sizeof(e)) < 0)
		_exit(126);
	_exit(127);
}

/*
 * -K (spec §3.3): decrypt @ks->gpg_key_file with gpg, the passphrase being
 * line 0, and replace the lines with the decrypted ones.
 */
static int gpg_decrypt(struct keysetup *ks)
{
	char what[PATH_MAX + 32], home_env[PATH_MAX + 8], gpgmsg[256];
	char *argv[12], *envp[3];
	const char *override = secure_getenv("AESLOOP_GPG");
	const char *homedir = ks->gpg_home;
	int key = -1, err = -1, passp[2] = { -1, -1 }, outp[2] = { -1, -1 };
	int reportp[2] = { -1, -1 }, rc, status = 0, child_errno = 0, argc = 0;
	struct sigaction ign, old_pipe;
	struct passwd *pw;
	pid_t pid;
	ssize_t n;

	snprintf(what, sizeof(what), "gpg key file %s", ks->gpg_key_file);
	if (!homedir) {
		homedir = secure_getenv("GNUPGHOME");
		if (homedir && !*homedir)
			homedir = NULL;
	}
	pw = getpwuid(getuid());
	snprintf(home_env, sizeof(home_env), "HOME=%s",
		 pw && pw->pw_dir ? pw->pw_dir : homedir ? homedir : "/");
	/*
	 * gpg --no-options does not make its default home (~/.gnupg), and
	 * without one it decrypts but exits 2: made here as gpg itself would,
	 * for a user who never ran gpg (a fresh root), never for another user.
	 */
	if (!homedir && pw && pw->pw_dir && strcmp(pw->pw_dir, "/") &&
	    *pw->pw_dir && geteuid() == getuid()) {
		char dflt[PATH_MAX];

		if (snprintf(dflt, sizeof(dflt), "%s/.gnupg", pw->pw_dir) <
		    (int)sizeof(dflt) && mkdir(dflt, 0700) && errno != EEXIST) {
			rc = -errno;
			set_error(ks, "%s: cannot make gpg's home %s: %s", what,
				  dflt, strerror(-rc));
			return rc;
		}
	}

	argv[argc++] = (char *)"gpg";
	if (homedir) {
		argv[argc++] = (char *)"--homedir";
		argv[argc++] = (char *)homedir;
	}
	argv[argc++] = (char *)"--no-options";
	argv[argc++] = (char *)"--quiet";
	argv[argc++] = (char *)"--batch";
	argv[argc++] = (char *)"--no-tty";
	argv[argc++] = (char *)"--passphrase-fd";
	argv[argc++] = (char *)"3";
	argv[argc++] = (char *)"--decrypt";
	argv[argc] = NULL;
	envp[0] = home_env;
	envp[1] = (char *)"PATH=/usr/local/bin:/usr/bin:/bin";
	envp[2] = NULL;

	key = open(ks->gpg_key_file, O_RDONLY | O_CLOEXEC);
	if (key < 0) {
		rc = -errno;
		set_error(ks, "cannot open gpg key file %s: %s",
			  ks->gpg_key_file, strerror(-rc));
		return rc;
	}
	if (ks->gpg_key_limit) {
		key = copy_prefix(key, ks->gpg_key_limit);
		if (key < 0) {
			set_error(ks, "%s: cannot copy its first %llu bytes for gpg: %s",
				  what, ks->gpg_key_limit, strerror(-key));
			return key;
		}
	}
	err = memfd_create("aesloop-gpg-stderr", MFD_CLOEXEC);
	if (err < 0)
		err = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (err < 0 || pipe2(passp, O_CLOEXEC) || pipe2(outp, O_CLOEXEC) ||
	    pipe2(reportp, O_CLOEXEC)) {
		rc = -errno;
		set_error(ks, "%s: cannot set up pipes for gpg: %s", what,
			  strerror(-rc));
		goto out;
	}

	pid = fork();
	if (pid < 0) {
		rc = -errno;
		set_error(ks, "%s: cannot start gpg: %s", what, strerror(-rc));
		goto out;
	}
	if (pid == 0)
		gpg_child(key, outp[1], err, passp[0], reportp[1], argv, envp,
			  override);

	close(key);
	close(passp[0]);
	close(outp[1]);
	close(reportp[1]);
	key = passp[0] = outp[1] = reportp[1] = -1;

	/* Did the exec work?  The report pipe closes on exec, or says why not. */
	do {
		n = read(reportp[0], &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(child_errno)) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (child_errno == ENOENT && !override)
			set_error(ks, "%s: cannot run gpg: not found as /bin/gpg, /usr/bin/gpg or /usr/local/bin/gpg (install GnuPG)",
				  what);
		else
			set_error(ks, "%s: cannot run gpg%s%s: %s", what,
				  override ? " " : "", override ? override : "",
				  strerror(child_errno));
		rc = -child_errno;
		goto out;
	}

	/* The passphrase, on its own pipe; gpg may be gone already. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	rc = keysetup_write_all(passp[1], ks->lines[0], ks->line_len[0]);
	if (!rc)
		rc = keysetup_write_all(passp[1], "\n", 1);
	sigaction(SIGPIPE, &old_pipe, NULL);
	close(passp[1]);
	passp[1] = -1;

	/* The key lines (this wipes the passphrase), then the rest unread. */
	rc = read_lines(ks, outp[0], what, KEYSETUP_MAX_LINES);
	{
		char drain[512];

		while ((n = read(outp[0], drain, sizeof(drain))) > 0 ||
		       (n < 0 && errno == EINTR))
			;
		memzero_explicit(drain, sizeof(drain));
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		gpg_last_message(err, gpgmsg, sizeof(gpgmsg));
		drop_lines(ks);
		set_error(ks, "%s: decryption failed (wrong passphrase?)%s%s", what,
			  gpgmsg[0] ? ": " : "", gpgmsg);
		rc = -EACCES;
	} else if (rc) {
		/* read_lines() said why */
	} else if (!ks->nstored || !ks->line_len[0]) {
		drop_lines(ks);
		set_error(ks, "%s: gpg decrypted it to nothing: no key data", what);
		rc = -EINVAL;
	}
out:
	if (key >= 0)
		close(key);
	if (err >= 0)
		close(err);
	if (passp[0] >= 0)
		close(passp[0]);
	if (passp[1] >= 0)
		close(passp[1]);
	if (outp[0] >= 0)
		close(outp[0]);
	if (outp[1] >= 0)
		close(outp[1]);
	if (reportp[0] >= 0)
		close(reportp[0]);
	if (reportp[1] >= 0)
		close(reportp[1]);
	return rc;
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
			warn_user(ks, "%s: line %u ends in a carriage return (CRLF line ends): loop-AES hashes it as part of the key, cryptsetup does not, so cryptsetup would derive other keys",
				  ks->source, i + 1);
			break;
		}
	}
	for (i = 1; mode && i < used && i < ks->nstored; i++) {
		if (ks->line_len[i] != ks->line_len[0]) {
			warn_user(ks, "%s: key lines of unequal length (line %u has %zu characters, line 1 has %zu): loop-AES reads them, cryptsetup refuses such a key file",
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
			set_error(ks, "%s: unknown key data format: more than %u lines of %u or more characters (expected 1, 64 or 65); not guessing (loop-AES would use the first %u, multi-key-v3)",
				  ks->source, MULTI_KEY_V3_LINES,
				  KEYSETUP_MIN_PASS_LEN, MULTI_KEY_V3_LINES);
			return -EINVAL;
		}
		warn_user(ks, "%s: unknown key data format: more than %u lines of %u or more characters (expected 1, 64 or 65); using the first %u (multi-key-v3), as loop-AES does",
			  ks->source, MULTI_KEY_V3_LINES, KEYSETUP_MIN_PASS_LEN,
			  MULTI_KEY_V3_LINES);
		mode = MULTI_KEY_V3_LINES;
	} else if (n > 1) {
		if (!ks->lenient) {
			set_error(ks, "%s: unknown key data format: %u lines of %u or more characters (expected 1, 64 or 65); not guessing (loop-AES would use line 1 as a single-key passphrase)",
				  ks->source, n, KEYSETUP_MIN_PASS_LEN);
			return -EINVAL;
		}
		warn_user(ks, "%s: unknown key data format: %u lines of %u or more characters (expected 1, 64 or 65); using line 1 as a single-key passphrase, as loop-AES does",
			  ks->source, n, KEYSETUP_MIN_PASS_LEN);
		mode = 0;
	} else {
		mode = 0;
	}
	warn_reader_differences(ks, mode);
	if (mode && ks->unterminated) {
		if (!ks->lenient) {
			set_error(ks, "%s: the key data ends in the middle of line %u (no newline after it): the key file may be truncated",
				  ks->source, ks->nstored);
			return -EINVAL;
		}
		warn_user(ks, "%s: the key data ends in the middle of line %u (no newline after it): the key file may be truncated",
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
		set_cipher_name(ks);
	}
	rc = hash_key(h, (const u8 *)ks->lines[0], ks->line_len[0],
		      ks->key_buffer);
	for (r = 0; rc == 0 && r < nslots; r++) {
		rc = hash_key(h, (const u8 *)ks->lines[r], ks->line_len[r],
			      ks->slots[r]);
		ks->slots[r][0] ^= tweak;
	}
	if (rc)
		set_error(ks, "%s of the key lines failed (OpenSSL libcrypto)",
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
		set_error(ks, "%s: passphrase is too short: it has %zu characters, it must have at least %zu",
			  ks->source, plen, min_len);
		return -EINVAL;
	}

	slen = ks->seed ? strlen(ks->seed) : 0;
	len = plen + slen;
	in = malloc(len + 1);
	if (!in) {
		set_error(ks, "out of memory for the key setup");
		return -ENOMEM;
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
	return rc;
}

/**
 * keysetup_derive() - compute the keys (spec §3.2, §3.3)
 * @ks: the context, with a cipher set and a passphrase or key lines read
 *      (nothing to read with -H random)
 *
 * -H random: 65 random keys, multi-key-v3.  Otherwise, with a gpg key file
 * set, first runs gpg (see keysetup_set_gpg()) to get the key lines.  Then
 * by the count of key lines (spec §3.3):
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
		set_error(ks, "no cipher chosen");
		rc = -EINVAL;
		goto out;
	}
	if (h == KEYSETUP_HASH_RANDOM) {
		rc = random_keys(ks);
		goto out;
	}
	if (!ks->nstored) {
		set_error(ks, "no passphrase read");
		rc = -EINVAL;
		goto out;
	}
	if (ks->gpg_key_file) {
		rc = gpg_decrypt(ks);
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
	drop_lines(ks);
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
