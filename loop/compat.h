/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - aesloop: the one place that knows kernel API differences.
 *
 * Supported: Debian's 6.1 (bookworm) and 6.12 kernels.  Everything that
 * differs between them is wrapped here, so the driver reads as one code base.
 */
#ifndef AESLOOP_COMPAT_H
#define AESLOOP_COMPAT_H

#include <linux/version.h>
#include <linux/blkdev.h>

/* 6.5 turned fmode_t into blk_mode_t for block device opens and ioctls. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
typedef blk_mode_t lo_mode_t;
#define lo_mode_write(mode)	((mode) & BLK_OPEN_WRITE)
#else
typedef fmode_t lo_mode_t;
#define lo_mode_write(mode)	((mode) & FMODE_WRITE)
#endif

#endif /* AESLOOP_COMPAT_H */
