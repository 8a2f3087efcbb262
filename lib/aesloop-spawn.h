/* SPDX-License-Identifier: GPL-2.0 */
/*
 * aesloop-spawn.h - how userland starts the programs it needs (gpg for
 * -K, systemd-ask-password without a terminal, mkswap for an encrypted
 * swap): one way, with the descriptors, paths, environment and IDs each
 * names.
 *
 * Secrets never go to a child in its arguments or environment: a
 * passphrase goes through a pipe among @fds.
 */
#ifndef AESLOOP_SPAWN_H
#define AESLOOP_SPAWN_H

#include <sys/types.h>

/* Special entries of struct aesloop_spawn's @fds. */
#define AESLOOP_SPAWN_NULL	(-1)	/* /dev/null, open for reading and writing */
#define AESLOOP_SPAWN_KEEP	(-2)	/* the caller's own descriptor of that number */

/* The most descriptors a child is given (gpg: key, output, errors, passphrase). */
#define AESLOOP_SPAWN_MAX_FDS	4

/**
 * struct aesloop_spawn - a program to start, and what it gets
 * @paths:    where the program may be, tried in this order; NULL-terminated
 * @argv:     its arguments, @argv[0] its name; NULL-terminated
 * @envp:     its whole environment, NULL-terminated; NULL for the caller's
 * @fds:      what the child has as descriptor 0, 1, ... @nfds - 1: a
 *            descriptor of the caller's (any number, also one of 0..@nfds-1),
 *            AESLOOP_SPAWN_NULL or AESLOOP_SPAWN_KEEP.  The child has no other
 *            descriptor of the caller's.
 * @nfds:     how many of @fds are set, at most AESLOOP_SPAWN_MAX_FDS
 * @real_ids: 1: the program runs with the caller's real user and group IDs,
 *            so that a set-user-ID caller's privileges are not passed on
 */
struct aesloop_spawn {
	const char *const *paths;
	char *const *argv;
	char *const *envp;
	int fds[AESLOOP_SPAWN_MAX_FDS];
	unsigned int nfds;
	int real_ids;
};

int aesloop_spawn(const struct aesloop_spawn *sp, pid_t *pid);
int aesloop_spawn_wait(pid_t pid);

#endif /* AESLOOP_SPAWN_H */
