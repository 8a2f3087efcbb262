// SPDX-License-Identifier: GPL-2.0
/*
 * fstab.c - the fstab lines of loop-AES devices, as libmount parses them:
 * losetup -F's line of a loop device, and swapoff's loop of a swap line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libmount.h>

#include "libaesloop.h"
#include "libaesloop-internal.h"

/**
 * aesloop_same_file() - do two paths name the same device or file?
 * @a: a path, or NULL
 * @b: a path, or NULL
 *
 * Also for keydrive.c: a gpg key file that is the backing device itself.
 *
 * Return: 1 for equal paths, block devices of one device number, or files
 * of one device and inode; else 0 (also when either cannot be stat()ed).
 */
int aesloop_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!a || !b)
		return 0;
	if (!strcmp(a, b))
		return 1;
	if (stat(a, &sa) || stat(b, &sb))
		return 0;
	if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode))
		return sa.st_rdev == sb.st_rdev;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * The lines of @fstab, as libmount parses them (escapes, comments, tags);
 * NULL with a message in @err.
 */
static struct libmnt_table *read_fstab(const char *fstab, char *err, size_t errlen)
{
	struct libmnt_table *tb = mnt_new_table();
	int rc = tb ? mnt_table_parse_file(tb, fstab) : -ENOMEM;

	if (rc) {
		snprintf(err, errlen, "cannot read %s: %s", fstab, strerror(-rc));
		mnt_unref_table(tb);
		errno = -rc;
		return NULL;
	}
	return tb;
}

/**
 * aesloop_fstab_lookup() - losetup -F: the fstab line of a loop device
 * @fstab:   the file, e.g. "/etc/fstab"
 * @loopdev: the loop device named on the command line
 * @o:       filled with the loop-AES options of the line whose loop= names
 *           @loopdev (the same path, or the same device); options already
 *           set are kept
 * @source:  if not NULL and *@source is NULL, set to a copy of the line's
 *           device or file (its first field, a tag as written)
 * @err:     a message on failure
 * @errlen:  its size
 *
 * Return: 0; -ENOENT if no line has loop=@loopdev; -EINVAL if more than
 * one has; -errno if @fstab cannot be read; -ENOMEM.
 */
int aesloop_fstab_lookup(const char *fstab, const char *loopdev,
			 struct aesloop_opts *o, char **source,
			 char *err, size_t errlen)
{
	struct libmnt_fs *fs, *match = NULL;
	struct libmnt_table *tb;
	struct libmnt_iter *it;
	const char *src;
	int found = 0, rc = 0;

	tb = read_fstab(fstab, err, errlen);
	if (!tb)
		return -errno;
	it = mnt_new_iter(MNT_ITER_FORWARD);
	if (!it) {
		snprintf(err, errlen, "out of memory reading %s", fstab);
		rc = -ENOMEM;
		goto out;
	}
	while (mnt_table_next_fs(tb, it, &fs) == 0) {
		struct aesloop_opts line;

		aesloop_opts_init(&line);
		rc = aesloop_opts_merge(&line, mnt_fs_get_options(fs));
		if (rc >= 0 && line.loop && aesloop_same_file(line.loop, loopdev)) {
			found++;
			match = fs;
		}
		aesloop_opts_free(&line);
		if (rc == -ENOMEM)
			break;
		rc = 0;
	}
	if (rc) {
		snprintf(err, errlen, "out of memory reading %s", fstab);
	} else if (!found) {
		snprintf(err, errlen, "no line of %s has the option loop=%s",
			 fstab, loopdev);
		rc = -ENOENT;
	} else if (found > 1) {
		snprintf(err, errlen, "%d lines of %s have the option loop=%s: which one is meant?",
			 found, fstab, loopdev);
		rc = -EINVAL;
	} else if (aesloop_opts_merge(o, mnt_fs_get_options(match)) < 0) {
		snprintf(err, errlen, "out of memory reading %s", fstab);
		rc = -ENOMEM;
	} else if (source && !*source) {
		src = mnt_fs_get_source(match);
		*source = strdup(src ? src : "");
		if (!*source) {
			snprintf(err, errlen, "out of memory reading %s", fstab);
			rc = -ENOMEM;
		}
	}
out:
	mnt_free_iter(it);
	mnt_unref_table(tb);
	return rc;
}


/**
 * aesloop_fstab_swap_loop() - swapoff SOURCE: the loop of its swap line
 * @fstab:   e.g. "/etc/fstab"
 * @source:  a swap partition or file; the line may name it by a tag
 *           (UUID=, PARTUUID=...), which libmount resolves
 * @loopdev: set to the loop= of the encrypted swap line of @source
 * @len:     its size
 *
 * Return: 1 if found, else 0.
 */
int aesloop_fstab_swap_loop(const char *fstab, const char *source,
			    char *loopdev, size_t len)
{
	char err[PATH_MAX + 64];
	struct libmnt_table *tb = read_fstab(fstab, err, sizeof(err));
	struct libmnt_cache *cache = mnt_new_cache();
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	int found = 0;

	while (tb && cache && it && !found && mnt_table_next_fs(tb, it, &fs) == 0) {
		struct aesloop_opts o;

		if (!mnt_fs_is_swaparea(fs))
			continue;
		aesloop_opts_init(&o);
		if (aesloop_opts_merge(&o, mnt_fs_get_options(fs)) > 0 && o.encryption &&
		    o.loop && mnt_fs_match_source(fs, source, cache)) {
			snprintf(loopdev, len, "%s", o.loop);
			found = 1;
		}
		aesloop_opts_free(&o);
	}
	mnt_free_iter(it);
	mnt_unref_cache(cache);
	mnt_unref_table(tb);
	return found;
}
