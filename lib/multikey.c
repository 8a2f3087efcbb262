// SPDX-License-Identifier: GPL-2.0
/*
 * multikey.c - the 64 or 65 keys of a multi-key loop-AES device (doc/format.md §5),
 * handed to the driver after the loop device is bound.
 */
#define _GNU_SOURCE		/* program_invocation_short_name */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include <linux/loop.h>

#include "libaesloop.h"

/*
 * The driver refuses a key change with EAGAIN while the device's page cache
 * keeps being refilled: typically udev's probe of the device just bound.
 * util-linux retries LOOP_SET_STATUS64 every 250 ms for that; the slots get
 * the same, for up to ten seconds (a probe under emulation is slow).
 */
#define AESLOOP_BUSY_TRIES	40

static int multi_key_ioctl_retry(int fd, unsigned long req, const void *slots)
{
	static const struct timespec delay = { .tv_nsec = 250000000 };
	int tries = 0;

	while (ioctl(fd, req, slots) != 0) {
		if (errno != EAGAIN || ++tries == AESLOOP_BUSY_TRIES)
			return -errno;
		nanosleep(&delay, NULL);
	}
	return 0;
}

/*
 * multi_key_ioctl() - hand the multi-key slots to the driver (§5)
 * @fd: the loop device, after LOOP_SET_STATUS64 (or LOOP_CONFIGURE) set
 *      the AES type and key size
 * @ks: the derived keys; nothing is done for single-key
 *
 * LOOP_MULTI_KEY_SETUP_V3 with 65 slots, LOOP_MULTI_KEY_SETUP with 64.  For
 * -H random keys, a driver without v3 gets v2 (as loop-AES falls back); a
 * v3 driver that stays busy does not.  EAGAIN (a busy page cache, nothing
 * changed) is retried every 250 ms, 40 tries, as util-linux retries
 * LOOP_SET_STATUS64.
 *
 * Return: 0, or -errno of the ioctl.
 */
static int multi_key_ioctl(int fd, const struct keysetup *ks)
{
	int rc;

	if (!ks->nslots)
		return 0;
	if (ks->nslots == KEYSETUP_MULTI_V3) {
		rc = multi_key_ioctl_retry(fd, LOOP_MULTI_KEY_SETUP_V3,
					   ks->slots);
		if (!rc || rc == -EAGAIN || ks->hash != KEYSETUP_HASH_RANDOM)
			return rc;
	}
	return multi_key_ioctl_retry(fd, LOOP_MULTI_KEY_SETUP, ks->slots);
}

/**
 * aesloop_multi_key_setup() - the slots of a device just bound, or no device
 * @fd:  the loop device, bound with the AES key (LOOP_CONFIGURE, or
 *       LOOP_SET_FD and LOOP_SET_STATUS64) by the caller
 * @dev: its name, e.g. "/dev/loop3", for the messages
 * @ks:  the derived keys; nothing is done for single-key
 *
 * The step that losetup, mount and swapon all take after the bind:
 * multi_key_ioctl() (with its EAGAIN retries), and if that fails,
 * "PROG: DEV: multi-key set-up (MODE) failed: ERROR" on stderr and
 * LOOP_CLR_FD, so that no device is left keyed with the first key alone,
 * which does not read a multi-key volume.  A detach that fails is said
 * too.  errno is set to the ioctl's error.
 *
 * Return: 0, or the negative errno of the multi-key ioctl (the device is
 * then detached, or a second message said why not).
 */
int aesloop_multi_key_setup(int fd, const char *dev, const struct keysetup *ks)
{
	int rc = multi_key_ioctl(fd, ks);

	if (!rc)
		return 0;
	fprintf(stderr, "%s: %s: multi-key set-up (%s) failed: %s\n",
		program_invocation_short_name, dev, keysetup_mode_name(ks),
		strerror(-rc));
	if (ioctl(fd, LOOP_CLR_FD, 0) != 0)
		fprintf(stderr, "%s: %s: detach failed: %s\n",
			program_invocation_short_name, dev, strerror(errno));
	errno = -rc;
	return rc;
}
