// SPDX-License-Identifier: GPL-2.0
/*
 * compat.c - aesloop: the one place that knows kernel API differences.
 *
 * Supported: Debian's 6.1 (bookworm) and 6.12 kernels.  What differs
 * between them is wrapped here, detected by the kernel's own feature macros,
 * so the rest of the driver reads as one code base.
 */
#include "loop.h"

#ifdef BLK_OPEN_WRITE
/* 6.5 and later: open and release take the gendisk, modes are blk_mode_t. */
static int lo_open(struct gendisk *disk, blk_mode_t mode)
{
	return loop_open(disk->private_data);
}

static void lo_release(struct gendisk *disk)
{
	loop_release(disk->private_data);
}

static int lo_ioctl(struct block_device *bdev, blk_mode_t mode,
		    unsigned int cmd, unsigned long arg)
{
	return lo_ioctl_dispatch(bdev->bd_disk->private_data, bdev,
				 !!(mode & BLK_OPEN_WRITE), cmd, arg);
}
#else
static int lo_open(struct block_device *bdev, fmode_t mode)
{
	return loop_open(bdev->bd_disk->private_data);
}

static void lo_release(struct gendisk *disk, fmode_t mode)
{
	loop_release(disk->private_data);
}

static int lo_ioctl(struct block_device *bdev, fmode_t mode,
		    unsigned int cmd, unsigned long arg)
{
	return lo_ioctl_dispatch(bdev->bd_disk->private_data, bdev,
				 !!(mode & FMODE_WRITE), cmd, arg);
}
#endif

const struct block_device_operations lo_fops = {
	.owner		= THIS_MODULE,
	.open		= lo_open,
	.release	= lo_release,
	.ioctl		= lo_ioctl,
	.free_disk	= loop_free_disk,
};
