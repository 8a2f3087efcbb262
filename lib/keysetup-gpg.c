// SPDX-License-Identifier: GPL-2.0
/*
 * keysetup-gpg.c - the key lines of a gpg-encrypted key file (-K, -G; doc/format.md
 * §3.3): gpg runs with the caller's real IDs, the key file on its standard
 * input and the passphrase on a pipe of its own, never in its arguments or
 * environment.
 */
#define _GNU_SOURCE		/* memfd_create, pipe2, secure_getenv */
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keysetup-internal.h"
#include "aesloop-spawn.h"

/* Where gpg is looked for, in this order (as loop-AES and aespipe do). */
static const char *const gpg_paths[] = {
	"/bin/gpg", "/usr/bin/gpg", "/usr/local/bin/gpg", NULL
};

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

/*
 * gpg's home directory: -G, else $GNUPGHOME, else NULL for gpg's default,
 * ~/.gnupg of the user who runs us; and HOME= for gpg's environment, in
 * @home_env.  0, or -errno with the message set.
 */
static int gpg_home(struct keysetup *ks, const char *what,
		    const char **homedir, char *home_env, size_t len)
{
	struct passwd *pw = getpwuid(getuid());
	char dflt[PATH_MAX];
	int rc;

	*homedir = ks->gpg_home;
	if (!*homedir) {
		*homedir = secure_getenv("GNUPGHOME");
		if (*homedir && !**homedir)
			*homedir = NULL;
	}
	snprintf(home_env, len, "HOME=%s",
		 pw && pw->pw_dir ? pw->pw_dir : *homedir ? *homedir : "/");
	/*
	 * gpg --no-options does not make its default home (~/.gnupg), and
	 * without one it decrypts but exits 2: made here as gpg itself would,
	 * for a user who never ran gpg (a fresh root), never for another user.
	 */
	if (*homedir || !pw || !pw->pw_dir || !*pw->pw_dir ||
	    !strcmp(pw->pw_dir, "/") || geteuid() != getuid())
		return 0;
	if (snprintf(dflt, sizeof(dflt), "%s/.gnupg", pw->pw_dir) <
	    (int)sizeof(dflt) && mkdir(dflt, 0700) && errno != EEXIST) {
		rc = -errno;
		ks_error(ks, "%s: cannot make gpg's home %s: %s", what, dflt,
			 strerror(-rc));
		return rc;
	}
	return 0;
}

/*
 * gpg's command line, into @argv (12 entries): the passphrase on
 * descriptor 3, the key file on stdin, the key lines on stdout.
 */
static void gpg_argv(char **argv, const char *homedir)
{
	int argc = 0;

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
}

/* The key file for gpg's standard input: a descriptor, or -errno. */
static int gpg_open_key(struct keysetup *ks, const char *what)
{
	int key, rc;

	key = open(ks->gpg_key_file, O_RDONLY | O_CLOEXEC);
	if (key < 0) {
		rc = -errno;
		ks_error(ks, "cannot open gpg key file %s: %s",
			 ks->gpg_key_file, strerror(-rc));
		return rc;
	}
	if (!ks->gpg_key_limit)
		return key;
	key = copy_prefix(key, ks->gpg_key_limit);
	if (key < 0)
		ks_error(ks, "%s: cannot copy its first %llu bytes for gpg: %s",
			 what, ks->gpg_key_limit, strerror(-key));
	return key;
}

/*
 * The passphrase (line 0) and a newline to gpg's pipe @fd, which is closed.
 * gpg may be gone already: its exit status says so, not a SIGPIPE.
 */
static void gpg_send_passphrase(const struct keysetup *ks, int fd)
{
	struct sigaction ign, old_pipe;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	if (!keysetup_write_all(fd, ks->lines[0], ks->line_len[0]))
		keysetup_write_all(fd, "\n", 1);
	sigaction(SIGPIPE, &old_pipe, NULL);
	close(fd);
}

/*
 * The key lines gpg writes to @fd (this wipes the passphrase), then the
 * rest of its output unread, so that gpg never blocks on a full pipe.
 */
static int gpg_read_output(struct keysetup *ks, int fd, const char *what)
{
	char drain[512];
	ssize_t n;
	int rc;

	rc = ks_read_lines(ks, fd, what, KEYSETUP_MAX_LINES);
	while ((n = read(fd, drain, sizeof(drain))) > 0 ||
	       (n < 0 && errno == EINTR))
		;
	memzero_explicit(drain, sizeof(drain));
	return rc;
}

/**
 * ks_gpg_decrypt() - the key lines of a gpg key file (-K, doc/format.md §3.3)
 * @ks: the context, with @ks->gpg_key_file set and the passphrase that
 *      unlocks it read as line 0
 *
 * Runs gpg as keysetup_set_gpg() says and replaces the stored lines with
 * the decrypted ones (which wipes the passphrase).  AESLOOP_GPG (ignored in
 * set-user-ID programs; for tests) names another gpg to run.
 *
 * Return: 0; -EACCES if gpg could not decrypt (a wrong passphrase);
 * -EINVAL if it decrypted to nothing; -ENOENT and others if gpg could not
 * run or the key file not be read; what ks_read_lines() returns.  The
 * message is in @ks->errmsg, and no line is stored then.
 */
int ks_gpg_decrypt(struct keysetup *ks)
{
	char what[PATH_MAX + 32], home_env[PATH_MAX + 8], gpgmsg[256];
	const char *override = secure_getenv("AESLOOP_GPG");
	const char *const override_path[] = { override, NULL };
	int key = -1, err = -1, passp[2] = { -1, -1 }, outp[2] = { -1, -1 };
	int *const fds[] = { &key, &err, &passp[0], &passp[1], &outp[0], &outp[1] };
	char *argv[12], *envp[3];
	const char *homedir;
	struct aesloop_spawn sp = {
		.paths = override ? override_path : gpg_paths,
		.argv = argv,
		.envp = envp,
		.nfds = 4,
		.real_ids = 1,	/* never with our privileges */
	};
	int rc, status;
	unsigned int i;
	pid_t pid;

	snprintf(what, sizeof(what), "gpg key file %s", ks->gpg_key_file);
	rc = gpg_home(ks, what, &homedir, home_env, sizeof(home_env));
	if (rc)
		return rc;
	gpg_argv(argv, homedir);
	envp[0] = home_env;
	envp[1] = (char *)"PATH=/usr/local/bin:/usr/bin:/bin";
	envp[2] = NULL;

	key = gpg_open_key(ks, what);
	if (key < 0)
		return key;
	err = memfd_create("aesloop-gpg-stderr", MFD_CLOEXEC);
	if (err < 0)
		err = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (err < 0 || pipe2(passp, O_CLOEXEC) || pipe2(outp, O_CLOEXEC)) {
		rc = -errno;
		ks_error(ks, "%s: cannot set up pipes for gpg: %s", what,
			 strerror(-rc));
		goto out;
	}

	/* The key file on stdin, the key lines on stdout, the passphrase on 3. */
	sp.fds[0] = key;
	sp.fds[1] = outp[1];
	sp.fds[2] = err;
	sp.fds[3] = passp[0];
	rc = aesloop_spawn(&sp, &pid);
	close(key);
	close(passp[0]);
	close(outp[1]);
	key = passp[0] = outp[1] = -1;
	if (rc) {
		if (rc == -ENOENT && !override)
			ks_error(ks, "%s: cannot run gpg: not found as /bin/gpg, /usr/bin/gpg or /usr/local/bin/gpg (install GnuPG)",
				 what);
		else
			ks_error(ks, "%s: cannot run gpg%s%s: %s", what,
				 override ? " " : "", override ? override : "",
				 strerror(-rc));
		goto out;
	}

	gpg_send_passphrase(ks, passp[1]);
	passp[1] = -1;
	rc = gpg_read_output(ks, outp[0], what);
	status = aesloop_spawn_wait(pid);
	if (status) {
		gpg_last_message(err, gpgmsg, sizeof(gpgmsg));
		ks_drop_lines(ks);
		ks_error(ks, "%s: decryption failed (wrong passphrase?)%s%s", what,
			 gpgmsg[0] ? ": " : "", gpgmsg);
		rc = -EACCES;
	} else if (rc) {
		/* ks_read_lines() said why */
	} else if (!ks->nstored || !ks->line_len[0]) {
		ks_drop_lines(ks);
		ks_error(ks, "%s: gpg decrypted it to nothing: no key data", what);
		rc = -EINVAL;
	}
out:
	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
	return rc;
}
