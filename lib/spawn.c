// SPDX-License-Identifier: GPL-2.0
/*
 * spawn.c - start a program with the descriptors, paths,
 * environment and IDs that struct aesloop_spawn names, and wait for it
 * (aesloop-spawn.h).
 *
 * posix_spawn() rather than fork(): the child shares the caller's memory
 * until its exec instead of getting a copy of it (keys included), and an
 * exec that fails is reported to the caller as an error number.
 */
#define _GNU_SOURCE		/* environ, posix_spawn_file_actions_addclosefrom_np */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aesloop-spawn.h"

/* The file actions of @sp; @moved[i] is the caller's @sp->fds[i] dup'ed. */
static int spawn_actions(const struct aesloop_spawn *sp, const int *moved,
			 posix_spawn_file_actions_t *fa)
{
	unsigned int i;
	int rc = 0;

	for (i = 0; !rc && i < sp->nfds; i++) {
		if (sp->fds[i] == AESLOOP_SPAWN_NULL)
			rc = posix_spawn_file_actions_addopen(fa, (int)i, "/dev/null",
							      O_RDWR, 0);
		else if (sp->fds[i] >= 0)
			rc = posix_spawn_file_actions_adddup2(fa, moved[i], (int)i);
	}
	if (!rc)
		rc = posix_spawn_file_actions_addclosefrom_np(fa, (int)sp->nfds);
	return rc;
}

/* posix_spawn() of each of @sp->paths until one starts: 0 or an errno. */
static int spawn_first(const struct aesloop_spawn *sp, pid_t *pid,
		       const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr)
{
	const char *const *path;
	int rc = ENOENT, e;

	for (path = sp->paths; *path; path++) {
		e = posix_spawn(pid, *path, fa, attr, sp->argv,
				sp->envp ? sp->envp : environ);
		if (!e)
			return 0;
		/* "Not there" at one path says less than what another said. */
		if (rc == ENOENT)
			rc = e;
	}
	return rc;
}

/* posix_spawn() with @sp's file actions and IDs: 0 or an errno. */
static int spawn_moved(const struct aesloop_spawn *sp, const int *moved,
		       pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int rc;

	rc = posix_spawn_file_actions_init(&fa);
	if (rc)
		return rc;
	rc = posix_spawnattr_init(&attr);
	if (!rc) {
		rc = spawn_actions(sp, moved, &fa);
		if (!rc && sp->real_ids)
			rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_RESETIDS);
		if (!rc)
			rc = spawn_first(sp, pid, &fa, &attr);
		posix_spawnattr_destroy(&attr);
	}
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/**
 * aesloop_spawn() - start a program
 * @sp:  what to start, and what it gets (struct aesloop_spawn)
 * @pid: set to the child's process ID; wait for it with aesloop_spawn_wait()
 *
 * The caller's descriptors in @sp->fds stay open in the caller; it closes
 * its own copies (the child's ends of pipes, say) once this returns.
 *
 * Return: 0; -EINVAL for more than AESLOOP_SPAWN_MAX_FDS descriptors; the
 * -errno of the exec when the program could be run from none of the paths
 * (-ENOENT when it is at none of them, else the first other error); -errno
 * of setting up the descriptors.  No child is left running on failure.
 */
int aesloop_spawn(const struct aesloop_spawn *sp, pid_t *pid)
{
	int moved[AESLOOP_SPAWN_MAX_FDS], rc = 0;
	unsigned int i;

	if (sp->nfds > AESLOOP_SPAWN_MAX_FDS)
		return -EINVAL;
	/*
	 * Each descriptor is first copied above the numbers the child gets,
	 * so that moving one into place never overwrites another that is
	 * still to be moved (gpg's key file may be the caller's stdout).
	 */
	for (i = 0; i < sp->nfds; i++) {
		moved[i] = -1;
		if (sp->fds[i] >= 0 && !rc) {
			moved[i] = fcntl(sp->fds[i], F_DUPFD_CLOEXEC,
					 AESLOOP_SPAWN_MAX_FDS);
			if (moved[i] < 0)
				rc = errno;
		}
	}
	if (!rc)
		rc = spawn_moved(sp, moved, pid);
	for (i = 0; i < sp->nfds; i++)
		if (moved[i] >= 0)
			close(moved[i]);
	return -rc;
}

/**
 * aesloop_spawn_wait() - wait for a child of aesloop_spawn() to end
 * @pid: its process ID
 *
 * Return: its exit status (0 to 255), or 128 plus the number of the signal
 * that killed it (as a shell reports it), or -errno if it cannot be waited
 * for.
 */
int aesloop_spawn_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
