// SPDX-License-Identifier: GPL-2.0
/*
 * multikey.c - the 64 or 65 keys of a multi-key loop-AES device (spec §5),
 * handed to the driver after the loop device is bound.
 */
#define _GNU_SOURCE
#include <errno.h>
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

/**
 * aesloop_multi_key_ioctl() - hand the multi-key slots to the driver (§5)
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
int aesloop_multi_key_ioctl(int fd, const struct keysetup *ks)
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
