// SPDX-License-Identifier: GPL-2.0
/*
 * keysetup.c - loop-AES key setup (doc/format.md §3):
 * the base the other keysetup-*.c files share: a context's start and wipe,
 * its error message and warnings, its stored lines.
 *
 * The key setup is the one implementation of: cipher names (§3.1), reading
 * passphrases and key lines (§3.2, §3.3), decrypting gpg key files (§3.3),
 * deriving the single-key key buffer KB (§3.2) and the 64/65 multi-key
 * slots (§3.3), and the random keys of -H random; used by aesloop-pipe and
 * the patched util-linux losetup, mount and swapon.  One file per job:
 *
 *   keysetup.c          this base
 *   keysetup-options.c  the choices: cipher (-e), hash (-H), seed (-S),
 *                       iterations (-C), gpg key file (-K, -G)
 *   keysetup-read.c     key lines from a descriptor, a file or the caller
 *   keysetup-ask.c      a passphrase asked of a person: the terminal, or
 *                       systemd's password agents
 *   keysetup-gpg.c      the key lines of a gpg-encrypted key file
 *   keysetup-derive.c   the keys: hashes, -C, single-key, multi-key, random
 *
 * keysetup.h is their interface; keysetup-internal.h what they share.
 * Hashes come from OpenSSL's libcrypto; AES (for -C) is ours.
 *
 * Secrets (lines, hash input, temporary keys) live in heap buffers that are
 * wiped before they are freed; the caller keeps the result in struct
 * keysetup and wipes it with keysetup_wipe().  Callers lock their memory
 * first (keysetup_lock_memory()) so that none of this reaches swap.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "keysetup-internal.h"

/**
 * ks_error() - set the message of a failure
 * @ks:  the context; the message goes to @ks->errmsg (truncated to fit)
 * @fmt: printf format of one line that names the object and says what is
 *       wrong, never a passphrase or key
 */
void ks_error(struct keysetup *ks, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ks->errmsg, sizeof(ks->errmsg), fmt, ap);
	va_end(ap);
}

/**
 * ks_warn() - warn on stderr at once (doc/format.md §3.3's doubtful key data)
 * @ks:  the context; "@ks->prog: " prefixes the line when set
 * @fmt: printf format of the warning, without "warning: " or newline
 */
void ks_warn(const struct keysetup *ks, const char *fmt, ...)
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

/**
 * ks_drop_lines() - wipe and free every stored line
 * @ks: the context; afterwards no line is stored and the counts are 0
 */
void ks_drop_lines(struct keysetup *ks)
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
 * keysetup_init() - start a key setup (doc/format.md §3)
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

	ks_drop_lines(ks);
	memzero_explicit(ks, sizeof(*ks));
	keysetup_init(ks, prog);
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

/**
 * keysetup_lock_memory() - keep keys out of swap: lock all memory, present
 * and future (mlockall(MCL_CURRENT | MCL_FUTURE))
 * @prog: program name for the messages on stderr
 *
 * Root must have it: a failure then ends the program's key handling.
 * Other users may lack the limit (RLIMIT_MEMLOCK) and go on, warned.
 * (The sanitizer runtime turns mlockall into a no-op that succeeds.)
 *
 * Return: 0 (locked, or a user other than root warned), or -errno of
 * mlockall() for root, with a message printed.
 */
int keysetup_lock_memory(const char *prog)
{
	int e;

	if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0)
		return 0;
	e = errno;
	if (geteuid() == 0) {
		fprintf(stderr, "%s: cannot lock memory (mlockall): %s; refusing to handle keys that could be swapped out\n",
			prog, strerror(e));
		return -e;
	}
	fprintf(stderr, "%s: warning: cannot lock memory (mlockall): %s; keys may be swapped out\n",
		prog, strerror(e));
	return 0;
}
