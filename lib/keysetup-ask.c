// SPDX-License-Identifier: GPL-2.0
/*
 * keysetup-ask.c - the passphrase asked of a person (doc/format.md §3.2): on the
 * terminal with echo off, or, without a terminal, through systemd's
 * password agents.
 */
#define _GNU_SOURCE		/* pipe2 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include "keysetup-internal.h"
#include "aesloop-spawn.h"

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
		ks_error(ks, "cannot write the prompt to /dev/tty: %s",
			 strerror(-rc));
		return rc;
	}
	rc = ks_read_line(fd, out, len, &terminated);
	if (rc == -EMSGSIZE)
		ks_error(ks, "passphrase on /dev/tty is longer than %u characters",
			 KEYSETUP_LINE_MAX);
	else if (rc)
		ks_error(ks, "cannot read the passphrase from /dev/tty: %s",
			 strerror(-rc));
	/* Echo was off, so the user's Enter did not move the cursor. */
	keysetup_write_all(fd, "\n", 1);
	return rc;
}

/**
 * keysetup_read_tty() - ask for the passphrase on the terminal (doc/format.md §3.2)
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

	ks_drop_lines(ks);
	snprintf(ks->source, sizeof(ks->source), "/dev/tty");
	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		ks_error(ks, "cannot ask for the passphrase: cannot open /dev/tty: %s (give it with a passphrase file descriptor or key file instead)",
			 strerror(-rc));
		return rc;
	}
	if (tcgetattr(fd, &tty_saved)) {
		rc = -errno;
		ks_error(ks, "cannot ask for the passphrase: /dev/tty: %s",
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
		ks_error(ks, "cannot turn off echo on /dev/tty: %s",
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
			ks_error(ks, "the passphrases typed on /dev/tty are not identical");
			rc = -EINVAL;
		}
		if (again) {
			memzero_explicit(again, again_len + 1);
			free(again);
		}
		if (rc)
			ks_drop_lines(ks);
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

static const char *const ask_password_paths[] = {
	"/bin/systemd-ask-password", "/usr/bin/systemd-ask-password", NULL
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
 * stdin on /dev/null, the caller's stderr and no other descriptor of the
 * caller's, and gives up after its default time (90 s).
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
	char *argv[] = { (char *)"systemd-ask-password", id_arg, (char *)message,
			 NULL };
	struct aesloop_spawn sp = {
		.paths = ask_password_paths,
		.argv = argv,
		.fds = { AESLOOP_SPAWN_NULL, -1, AESLOOP_SPAWN_KEEP },
		.nfds = 3,
		.real_ids = 1,
	};
	int outp[2], rc, e, terminated;
	pid_t pid;

	ks_drop_lines(ks);
	snprintf(ks->source, sizeof(ks->source), "systemd's password agent");
	if (access("/run/systemd/system", F_OK)) {
		ks_error(ks, "cannot ask for the passphrase: no terminal, and systemd does not run (give it with a passphrase file descriptor or key file instead)");
		return -ENOENT;
	}
	snprintf(id_arg, sizeof(id_arg), "--id=%s", id);
	if (pipe2(outp, O_CLOEXEC)) {
		rc = -errno;
		ks_error(ks, "cannot ask for the passphrase: pipe: %s", strerror(-rc));
		return rc;
	}
	sp.fds[1] = outp[1];
	rc = aesloop_spawn(&sp, &pid);
	close(outp[1]);
	if (rc) {
		close(outp[0]);
		if (rc == -ENOENT)
			ks_error(ks, "cannot ask for the passphrase: no terminal, and systemd-ask-password is not installed");
		else
			ks_error(ks, "cannot ask for the passphrase: cannot run systemd-ask-password: %s",
				 strerror(-rc));
		return rc;
	}
	rc = ks_read_line(outp[0], &ks->lines[0], &ks->line_len[0], &terminated);
	close(outp[0]);
	e = aesloop_spawn_wait(pid);
	if (!rc && (e || !terminated)) {
		memzero_explicit(ks->lines[0], ks->line_len[0]);
		free(ks->lines[0]);
		ks->lines[0] = NULL;
		ks->line_len[0] = 0;
		rc = -ECANCELED;
	}
	if (rc == -ECANCELED)
		ks_error(ks, "no passphrase: systemd-ask-password got no answer (exit %d)", e);
	else if (rc == -EMSGSIZE)
		ks_error(ks, "the passphrase is longer than %u characters", KEYSETUP_LINE_MAX);
	else if (rc)
		ks_error(ks, "cannot read the passphrase from systemd-ask-password: %s",
			 strerror(-rc));
	if (rc)
		return rc;
	ks->nstored = 1;
	ks->nkeys = ks->line_len[0] >= KEYSETUP_MIN_PASS_LEN;
	return 0;
}
