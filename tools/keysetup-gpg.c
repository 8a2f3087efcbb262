// SPDX-License-Identifier: GPL-2.0
/*
 * keysetup-gpg.c - the key lines of a gpg-encrypted key file (-K, -G; spec
 * §3.3): gpg runs with the caller's real IDs, the key file on its standard
 * input and the passphrase on a pipe of its own, never in its arguments or
 * environment.
 */
#define _GNU_SOURCE		/* memfd_create, pipe2, secure_getenv, closefrom */
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keysetup-internal.h"

/* Where gpg is looked for, in this order (as loop-AES and aespipe do). */
static const char * const gpg_paths[] = {
	"/bin/gpg", "/usr/bin/gpg", "/usr/local/bin/gpg",
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

/**
 * ks_gpg_decrypt() - the key lines of a gpg key file (-K, spec §3.3)
 * @ks: the context, with @ks->gpg_key_file set and the passphrase that
 *      unlocks it read as line 0
 *
 * Runs gpg as keysetup_set_gpg() says and replaces the stored lines with
 * the decrypted ones (which wipes the passphrase).
 *
 * Return: 0; -EACCES if gpg could not decrypt (a wrong passphrase);
 * -EINVAL if it decrypted to nothing; -ENOENT and others if gpg could not
 * run or the key file not be read; what ks_read_lines() returns.  The
 * message is in @ks->errmsg, and no line is stored then.
 */
int ks_gpg_decrypt(struct keysetup *ks)
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
			ks_error(ks, "%s: cannot make gpg's home %s: %s", what,
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
		ks_error(ks, "cannot open gpg key file %s: %s",
			 ks->gpg_key_file, strerror(-rc));
		return rc;
	}
	if (ks->gpg_key_limit) {
		key = copy_prefix(key, ks->gpg_key_limit);
		if (key < 0) {
			ks_error(ks, "%s: cannot copy its first %llu bytes for gpg: %s",
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
		ks_error(ks, "%s: cannot set up pipes for gpg: %s", what,
			 strerror(-rc));
		goto out;
	}

	pid = fork();
	if (pid < 0) {
		rc = -errno;
		ks_error(ks, "%s: cannot start gpg: %s", what, strerror(-rc));
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
			ks_error(ks, "%s: cannot run gpg: not found as /bin/gpg, /usr/bin/gpg or /usr/local/bin/gpg (install GnuPG)",
				 what);
		else
			ks_error(ks, "%s: cannot run gpg%s%s: %s", what,
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
	rc = ks_read_lines(ks, outp[0], what, KEYSETUP_MAX_LINES);
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
