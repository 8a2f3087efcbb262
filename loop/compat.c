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

#ifdef BLK_FEAT_WRITE_CACHE
/* 6.11 and later: queue limits and features are set as one struct. */

/**
 * loop_alloc_disk() - allocate the gendisk and queue of a new device
 * @lo: the device, with its tag set allocated
 *
 * The queue caches writes (a flush reaches the backing file) and is
 * non-rotational.
 *
 * Return: the disk, or an ERR_PTR.
 */
struct gendisk *loop_alloc_disk(struct loop_device *lo)
{
	struct queue_limits lim = {
		.features = BLK_FEAT_WRITE_CACHE,
	};

	return blk_mq_alloc_disk(&lo->tag_set, &lim, lo);
}

/**
 * loop_set_block_size() - set the logical block size of an unbound device
 * @lo:    the device, lo_mutex held, queue not frozen
 * @bsize: 512, 1024, 2048 or 4096 bytes
 *
 * Return: 0 or a negative errno from the block layer.
 */
int loop_set_block_size(struct loop_device *lo, unsigned int bsize)
{
	struct queue_limits lim = queue_limits_start_update(lo->lo_disk->queue);

	lim.logical_block_size = bsize;
	lim.physical_block_size = bsize;
	lim.io_min = bsize;
	return queue_limits_commit_update(lo->lo_disk->queue, &lim);
}
#else
struct gendisk *loop_alloc_disk(struct loop_device *lo)
{
	struct gendisk *disk = blk_mq_alloc_disk(&lo->tag_set, lo);

	if (!IS_ERR(disk)) {
		blk_queue_write_cache(disk->queue, true, false);
		blk_queue_flag_set(QUEUE_FLAG_NONROT, disk->queue);
	}
	return disk;
}

int loop_set_block_size(struct loop_device *lo, unsigned int bsize)
{
	struct request_queue *q = lo->lo_disk->queue;

	blk_queue_logical_block_size(q, bsize);
	blk_queue_physical_block_size(q, bsize);
	blk_queue_io_min(q, bsize);
	return 0;
}
#endif

const struct block_device_operations lo_fops = {
	.owner		= THIS_MODULE,
	.open		= lo_open,
	.release	= lo_release,
	.ioctl		= lo_ioctl,
	.free_disk	= loop_free_disk,
};
