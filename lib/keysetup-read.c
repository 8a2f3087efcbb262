// SPDX-License-Identifier: GPL-2.0
/*
 * keysetup-read.c - key material read from a file descriptor (-p), a key
 * file (-P) or handed over by the caller (doc/format.md §3.2, §3.3): the line
 * reader that the terminal, the password agent and gpg's output use too.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "keysetup-internal.h"

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

/**
 * ks_read_line() - read one line of key material (doc/format.md §3.2, §3.3)
 * @fd:         where from; read one byte at a time, so that nothing after
 *              the line is consumed
 * @out:        set to a NUL-terminated heap copy of the line, without its
 *              terminator (a newline, a NUL or the end of file; a carriage
 *              return is kept); the caller wipes and frees it
 * @len:        set to its length in bytes
 * @terminated: set to 1 if a newline or NUL ended it, 0 for the end of file
 *
 * Return: 0; -EMSGSIZE if the line is longer than KEYSETUP_LINE_MAX;
 * -ENOMEM; -errno of a failed read.  Nothing is stored on failure.
 */
int ks_read_line(int fd, char **out, size_t *len, int *terminated)
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

/**
 * ks_read_lines() - read the key lines of doc/format.md §3.3 into a context
 * @ks:   the context; its stored lines are dropped first, @ks->source is
 *        set to @what
 * @fd:   where from
 * @what: the source, for messages ("key file F", ...)
 * @max:  read at most this many lines
 *
 * The first line shorter than KEYSETUP_MIN_PASS_LEN ends the list (it is
 * stored all the same: as line 0 it is the passphrase), and so does the end
 * of the data.  Sets @ks->nstored, @ks->nkeys and @ks->unterminated.
 *
 * Return: 0, or what ks_read_line() returns, with the message in
 * @ks->errmsg and no line stored.
 */
int ks_read_lines(struct keysetup *ks, int fd, const char *what,
		  unsigned int max)
{
	int rc, terminated = 0;

	ks_drop_lines(ks);
	snprintf(ks->source, sizeof(ks->source), "%s", what);
	while (ks->nstored < max) {
		unsigned int i = ks->nstored;

		rc = ks_read_line(fd, &ks->lines[i], &ks->line_len[i], &terminated);
		if (rc == -EMSGSIZE) {
			ks_error(ks, "%s: line %u is longer than %u characters",
				 what, i + 1, KEYSETUP_LINE_MAX);
			goto fail;
		} else if (rc) {
			ks_error(ks, "%s: cannot read: %s", what, strerror(-rc));
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
	ks_drop_lines(ks);
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
 *      the key data (doc/format.md §3.3), not closed
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
	return ks_read_lines(ks, fd, what, lines_wanted(ks));
}

/**
 * keysetup_read_file() - read a cleartext key file (-P FILE, doc/format.md §3.3)
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
		ks_drop_lines(ks);
		ks_error(ks, "cannot open key file %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = ks_read_lines(ks, fd, what, lines_wanted(ks));
	close(fd);
	return rc;
}

/**
 * keysetup_set_passphrase() - give the passphrase directly (doc/format.md §3.2)
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

	ks_drop_lines(ks);
	if (len > KEYSETUP_LINE_MAX) {
		ks_error(ks, "passphrase is longer than %u characters",
			 KEYSETUP_LINE_MAX);
		return -EMSGSIZE;
	}
	if (memchr(pass, '\n', len) || memchr(pass, '\0', len)) {
		ks_error(ks, "passphrase contains a newline or NUL byte, which would end it");
		return -EINVAL;
	}
	copy = malloc(len + 1);
	if (!copy) {
		ks_error(ks, "out of memory for the passphrase");
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
