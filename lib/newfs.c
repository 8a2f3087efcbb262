// SPDX-License-Identifier: GPL-2.0
/*
 * newfs.c - the new volume of phash=random (doc/format.md §7): 65 fresh random keys
 * leave nothing readable on the device, so mount makes a new file system
 * on it and swapon a new swap area, quietly, as loop-AES does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "libaesloop.h"
#include "aesloop-spawn.h"

/*
 * Run @argv from the first of @paths that is there, with no input or
 * output and a PATH of the system's directories; 0 if it exited 0,
 * -ENOENT if it is at none of them, else a negative errno.
 */
static int run_quiet(const char *const paths[], char *const argv[])
{
	char *envp[] = { (char *)"PATH=/sbin:/usr/sbin:/bin:/usr/bin", NULL };
	struct aesloop_spawn sp = {
		.paths = paths,
		.argv = argv,
		.envp = envp,
		.fds = { AESLOOP_SPAWN_NULL, AESLOOP_SPAWN_NULL, AESLOOP_SPAWN_NULL },
		.nfds = 3,
	};
	pid_t pid;
	int rc;

	rc = aesloop_spawn(&sp, &pid);
	if (rc)
		return rc;
	return aesloop_spawn_wait(pid) == 0 ? 0 : -EIO;
}

/**
 * aesloop_mkswap() - swapon, phash=random: a new swap area
 * @dev: the loop device just set up, e.g. "/dev/loop6"
 *
 * mkswap from /sbin or /usr/sbin, its output discarded.
 *
 * Return: 0 if it exited 0, -ENOENT if there is none, else a negative
 * errno (-EIO: it failed).
 */
int aesloop_mkswap(const char *dev)
{
	const char *const paths[] = { "/sbin/mkswap", "/usr/sbin/mkswap", NULL };
	char *argv[] = { (char *)"mkswap", (char *)dev, NULL };

	return run_quiet(paths, argv);
}

/**
 * aesloop_mkfs() - mount, phash=random: a new file system
 * @dev:    the loop device just set up
 * @fstype: the file system type of the mount (-t, or the fstab line's)
 *
 * mkfs.TYPE from /sbin or /usr/sbin, else mkfs -t TYPE, their output
 * discarded.  xfs and reiserfs get -f: they refuse to overwrite what they
 * take for a file system, and the random bytes of a new device may look
 * like one to them.
 *
 * Return: 0 if it exited 0; -EINVAL for a type with a '/' or of more than
 * 32 bytes; -ENOENT if there is no mkfs; else a negative errno (-EIO: it
 * failed).
 */
int aesloop_mkfs(const char *dev, const char *fstype)
{
	char name[48], path1[64], path2[64], *d = (char *)dev, *t = (char *)fstype;
	const char *const direct[] = { path1, path2, NULL };
	const char *const wrapper[] = { "/sbin/mkfs", "/usr/sbin/mkfs", NULL };
	int force = !strcmp(fstype, "xfs") || !strcmp(fstype, "reiserfs"), rc;
	char *argv[] = { name, force ? (char *)"-f" : d, force ? d : NULL, NULL };
	char *argv_t[] = { (char *)"mkfs", (char *)"-t", t,
			   force ? (char *)"-f" : d, force ? d : NULL, NULL };

	if (strchr(fstype, '/') || strlen(fstype) > 32)
		return -EINVAL;
	snprintf(name, sizeof(name), "mkfs.%s", fstype);
	snprintf(path1, sizeof(path1), "/sbin/%s", name);
	snprintf(path2, sizeof(path2), "/usr/sbin/%s", name);
	rc = run_quiet(direct, argv);
	return rc == -ENOENT ? run_quiet(wrapper, argv_t) : rc;
}
