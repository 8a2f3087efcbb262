// SPDX-License-Identifier: GPL-2.0
/*
 * swap.c - encrypted swap (doc/format.md §7): swapon sets up the loop device of an
 * fstab swap line with loop-AES options (and with phash=random makes a new
 * swap area with fresh keys), swapoff detaches it again, wiping the keys.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/loop.h>

#include "aes_types.h"	/* memzero_explicit() */
#include "libaesloop.h"

/* Parse a loop-AES number: decimal, 0x hexadecimal or 0 octal. */
static int parse_number(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

/* Is @loopdev bound, and to @backing?  1 same, 0 free, -EBUSY another. */
static int loop_bound_to(const char *loopdev, const char *backing)
{
	struct loop_info64 li;
	struct stat st;
	int fd, rc;

	fd = open(loopdev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	rc = ioctl(fd, LOOP_GET_STATUS64, &li);
	close(fd);
	if (rc < 0)
		return 0;
	memzero_explicit(li.lo_encrypt_key, sizeof(li.lo_encrypt_key));
	/* lo_device and lo_inode name the backing file's inode */
	if (stat(backing, &st) == 0 && li.lo_device == st.st_dev &&
	    li.lo_inode == st.st_ino)
		return 1;
	return -EBUSY;
}

/**
 * aesloop_swap_prepare() - swapon: set up the loop of an encrypted swap
 * @source:  the swap partition or file of the fstab line (or command line)
 * @optstr:  its options; an encrypted swap has encryption= and loop=
 * @prog:    program name for messages
 * @passfd:  descriptor with the passphrase or key lines, or -1
 * @attach:  how the caller binds a loop device (swapon: util-linux's loop
 *           context)
 * @loopdev: set to the loop device to swap on
 * @len:     its size
 *
 * Sets the loop device up with the keys of the options: with phash=random
 * 65 fresh random keys, and then mkswap runs on it (a new swap area at
 * every swapon; doc/format.md §7).  A loop device already bound to @source is left
 * as it is.  Messages go to stderr.
 *
 * Return: 1 if @optstr has no encryption= (an ordinary swap), 0 with
 * @loopdev set, or a negative errno.
 */
int aesloop_swap_prepare(const char *source, const char *optstr,
			 const char *prog, int passfd, aesloop_attach_fn attach,
			 char *loopdev, size_t len)
{
	struct aesloop_opts o;
	struct keysetup ks;
	uint64_t data_offset = 0, lo_offset = 0, sizelimit = 0, loinit = 0;
	int rc, iv_free = 0;

	aesloop_opts_init(&o);
	rc = aesloop_opts_merge(&o, optstr ? optstr : "");
	if (rc < 0)
		goto out_opts;
	if (!o.encryption) {
		rc = 1;
		goto out_opts;
	}
	o.passfd = passfd;
	if (!o.loop) {
		fprintf(stderr, "%s: %s: an encrypted swap needs loop=/dev/loopN in its options\n",
			prog, source);
		rc = -EINVAL;
		goto out_opts;
	}
	snprintf(loopdev, len, "%s", o.loop);
	if ((o.offset && parse_number(aesloop_offset_number(o.offset, &iv_free), &data_offset)) ||
	    (o.sizelimit && parse_number(o.sizelimit, &sizelimit)) ||
	    (o.loinit && parse_number(o.loinit, &loinit)) ||
	    (iv_free && (!data_offset || data_offset > INT64_MAX))) {
		fprintf(stderr, "%s: %s: bad offset=, sizelimit= or loinit=\n", prog, source);
		rc = -EINVAL;
		goto out_opts;
	}
	lo_offset = iv_free ? (uint64_t)-(int64_t)data_offset : data_offset;

	rc = loop_bound_to(o.loop, source);
	if (rc == 1) {
		rc = 0;
		goto out_opts;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: %s: %s is in use for another file\n", prog,
			source, o.loop);
		goto out_opts;
	}
	rc = keysetup_lock_memory(prog);
	if (rc)
		goto out_opts;
	rc = aesloop_get_keys(&ks, &o, prog, source, data_offset);
	if (rc) {
		fprintf(stderr, "%s: %s: %s\n", prog, source, ks.errmsg);
		goto out_keys;
	}
	rc = attach(o.loop, source, lo_offset, sizelimit, &ks, loinit);
	if (rc)
		goto out_keys;
	if (ks.hash == KEYSETUP_HASH_RANDOM && aesloop_mkswap(o.loop)) {
		int fd = open(o.loop, O_RDONLY | O_CLOEXEC);

		fprintf(stderr, "%s: %s: mkswap failed on the new encrypted device %s\n",
			prog, source, o.loop);
		if (fd >= 0) {
			ioctl(fd, LOOP_CLR_FD, 0);
			close(fd);
		}
		rc = -EIO;
	}
out_keys:
	keysetup_wipe(&ks);
out_opts:
	aesloop_opts_free(&o);
	return rc;
}

/**
 * aesloop_detach_encrypted() - swapoff: detach an encrypted loop device
 * @dev: a device that was just swapped off
 *
 * Only a loop device with a loop-AES key is detached (which wipes the key
 * in the driver): the one aesloop_swap_prepare() set up.  If it is still
 * open elsewhere, aesloop_detach_notice() says so on stderr.
 *
 * Return: 1 if detached, 0 if @dev is not an encrypted loop, -errno.
 */
int aesloop_detach_encrypted(const char *dev)
{
	struct loop_info64 li;
	struct stat st;
	int fd, rc = 0;

	if (stat(dev, &st) || !S_ISBLK(st.st_mode) || major(st.st_rdev) != 7)
		return 0;
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, LOOP_GET_STATUS64, &li) == 0 && li.lo_encrypt_type) {
		rc = ioctl(fd, LOOP_CLR_FD, 0) == 0 ? 1 : -errno;
	}
	memzero_explicit(&li, sizeof(li));
	close(fd);
	if (rc == 1)
		aesloop_detach_notice(dev, 1, 0);
	return rc;
}
