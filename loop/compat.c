// SPDX-License-Identifier: GPL-2.0
/*
 * compat.c - aesloop: the one place that knows kernel API differences.
 *
 * Supported: Debian's 6.1 (bookworm), 6.12 and 7.3 (trixie-backports)
 * kernels.  What differs between them is wrapped here, detected by the
 * kernel's own feature macros or, where there is none, by a header probe in
 * Kbuild, so the rest of the driver reads as one code base.
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
				 !!(mode & BLK_OPEN_WRITE),
				 !!(mode & BLK_OPEN_EXCL), cmd, arg);
}

static int __maybe_unused lo_compat_ioctl(struct block_device *bdev,
					  blk_mode_t mode, unsigned int cmd,
					  unsigned long arg)
{
	return lo_compat_ioctl_dispatch(bdev->bd_disk->private_data, bdev,
					!!(mode & BLK_OPEN_WRITE),
					!!(mode & BLK_OPEN_EXCL), cmd, arg);
}

/**
 * loop_claim() - claim a loop device exclusively for a reconfiguration
 * @bdev:   the device the ioctl came through
 * @holder: who claims it (the function doing the work, as a token)
 *
 * Return: 0, or -EBUSY when it is claimed already (mounted, say).
 */
int loop_claim(struct block_device *bdev, void *holder)
{
	return bd_prepare_to_claim(bdev, holder, NULL);
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
				 !!(mode & FMODE_WRITE), !!(mode & FMODE_EXCL),
				 cmd, arg);
}

static int __maybe_unused lo_compat_ioctl(struct block_device *bdev,
					  fmode_t mode, unsigned int cmd,
					  unsigned long arg)
{
	return lo_compat_ioctl_dispatch(bdev->bd_disk->private_data, bdev,
					!!(mode & FMODE_WRITE),
					!!(mode & FMODE_EXCL), cmd, arg);
}

int loop_claim(struct block_device *bdev, void *holder)
{
	return bd_prepare_to_claim(bdev, holder);
}
#endif

/**
 * loop_unclaim() - give up a claim loop_claim() took
 * @bdev:   the device
 * @holder: the same token
 */
void loop_unclaim(struct block_device *bdev, void *holder)
{
	bd_abort_claiming(bdev, holder);
}

/**
 * loop_bdev_mapping() - the page cache of a block device
 * @bdev: the block device
 *
 * Return: its address_space.
 */
struct address_space *loop_bdev_mapping(struct block_device *bdev)
{
#ifdef AESLOOP_BDEV_MAPPING
	return bdev->bd_mapping;
#else
	return bdev->bd_inode->i_mapping;
#endif
}

/**
 * loop_bdev_rotational() - whether a block device has rotating media
 * @bdev: the block device
 *
 * bdev_nonrot() became bdev_rot() in 7.x, with blk_queue_rot() beside it
 * as a macro.
 *
 * Return: true for a rotational device.
 */
bool loop_bdev_rotational(struct block_device *bdev)
{
#ifdef blk_queue_rot
	return bdev_rot(bdev);
#else
	return !bdev_nonrot(bdev);
#endif
}

/**
 * loop_media_changed() - tell user space the device's contents changed
 * @disk: the loop device, being bound, unbound or given another file
 *
 * A new disk sequence number and a media-change event.  The events
 * argument went in 6.8; no macro says so, Kbuild's header probe does.
 */
void loop_media_changed(struct gendisk *disk)
{
#ifdef AESLOOP_MEDIA_CHANGE_NO_EVENTS
	disk_force_media_change(disk);
#else
	disk_force_media_change(disk, DISK_EVENT_MEDIA_CHANGE);
#endif
}

/**
 * loop_tag_set_flags() - the BLK_MQ_F_* flags of a device's tag set
 *
 * A stacking driver whose queue runs without an I/O scheduler by default;
 * requests are merged, which needed BLK_MQ_F_SHOULD_MERGE until 6.14 and
 * is always so since (the flag went; Kbuild's header probe tells).
 *
 * Return: the flags.
 */
unsigned int loop_tag_set_flags(void)
{
	unsigned int flags = BLK_MQ_F_STACKING | BLK_MQ_F_NO_SCHED_BY_DEFAULT;

#ifdef AESLOOP_MQ_SHOULD_MERGE
	flags |= BLK_MQ_F_SHOULD_MERGE;
#endif
	return flags;
}

/**
 * loop_freeze() - freeze a device's queue: no request in flight or new
 * @q: the queue
 *
 * From 6.15 a freeze also puts the task in a no-I/O allocation scope and
 * returns the flags to restore (Kbuild's header probe tells).
 *
 * Return: what loop_unfreeze() takes back.
 */
unsigned int loop_freeze(struct request_queue *q)
{
#ifdef AESLOOP_FREEZE_MEMFLAGS
	return blk_mq_freeze_queue(q);
#else
	blk_mq_freeze_queue(q);
	return 0;
#endif
}

/**
 * loop_unfreeze() - end a loop_freeze()
 * @q:        the queue
 * @memflags: what loop_freeze() returned
 */
void loop_unfreeze(struct request_queue *q, unsigned int memflags)
{
#ifdef AESLOOP_FREEZE_MEMFLAGS
	blk_mq_unfreeze_queue(q, memflags);
#else
	blk_mq_unfreeze_queue(q);
#endif
}

/**
 * loop_run_worker() - create and start worker @i of device @number
 * @number: the device's index (loopN)
 * @i:      the worker's index on that device
 *
 * Until 6.14 kthread_create_worker() started the thread; since then
 * kthread_run_worker() does (and is a macro, which tells the two apart).
 *
 * Return: the worker, or an ERR_PTR.
 */
struct kthread_worker *loop_run_worker(int number, unsigned int i)
{
#ifdef kthread_run_worker
	return kthread_run_worker(0, "loop%d-%u", number, i);
#else
	return kthread_create_worker(0, "loop%d-%u", number, i);
#endif
}

#ifdef BLK_FEAT_WRITE_CACHE
/* 6.11 and later: queue limits and features are set as one struct. */

/**
 * loop_alloc_disk() - allocate the gendisk and queue of a new device
 * @lo: the device, with its tag set allocated
 *
 * The queue has no write cache until bound (a flush on an unbound device
 * succeeds with nothing to do), is non-rotational, and takes requests of up
 * to LOOP_MAX_HW_SECTORS.
 *
 * Return: the disk, or an ERR_PTR.
 */
struct gendisk *loop_alloc_disk(struct loop_device *lo)
{
	struct queue_limits lim = {
		.max_hw_sectors	= LOOP_MAX_HW_SECTORS,
	};

	return blk_mq_alloc_disk(&lo->tag_set, &lim, lo);
}

/**
 * loop_set_limits() - set a device's queue limits for a backing file
 * @lo:     the device, lo_mutex held, queue not frozen (this freezes it)
 * @file:   the backing file bound or being bound, NULL when unbinding
 * @offset: where the data starts in @file (as it will be), bytes
 * @bsize:  logical block size: 512, 1024, 2048 or 4096 bytes
 * @crypt:  the key the device will have, NULL for none
 *
 * Block size, discard and write-zeroes, the rotational and write-cache
 * flags: see loop_queue_caps().  On a bound device the I/O path follows
 * the new block size in the same freeze (loop_update_io_path()), so no
 * request sees one without the other.
 * What the backing file refused (lo_unsupported) stays off.
 *
 * Return: 0 or a negative errno from the block layer.
 */
int loop_set_limits(struct loop_device *lo, struct file *file, loff_t offset,
		    unsigned int bsize, const struct loop_aes_ctx *crypt)
{
	struct request_queue *q = lo->lo_disk->queue;
	struct loop_queue_caps caps;
	struct queue_limits lim;
	unsigned int memflags;
	int err;

	loop_queue_caps(file, crypt, &caps);
	lim = queue_limits_start_update(q);
	lim.logical_block_size = bsize;
	lim.physical_block_size = bsize;
	lim.io_min = bsize;
	lim.discard_granularity = caps.discard_granularity;
	lim.max_hw_discard_sectors = caps.max_discard_sectors;
	lim.max_write_zeroes_sectors = caps.max_discard_sectors;
	if (test_bit(LO_UNSUPP_DISCARD, &lo->lo_unsupported)) {
		lim.discard_granularity = 0;
		lim.max_hw_discard_sectors = 0;
	}
	if (test_bit(LO_UNSUPP_WRITE_ZEROES, &lo->lo_unsupported))
		lim.max_write_zeroes_sectors = 0;
	lim.features &= ~(BLK_FEAT_WRITE_CACHE | BLK_FEAT_ROTATIONAL);
	if (caps.write_cache)
		lim.features |= BLK_FEAT_WRITE_CACHE;
	if (caps.rotational)
		lim.features |= BLK_FEAT_ROTATIONAL;
	/* The limits lock is taken before the freeze, as the block layer wants. */
	memflags = loop_freeze(q);
	err = queue_limits_commit_update(q, &lim);
	if (!err && lo->lo_state == LO_BOUND)
		loop_update_io_path(lo, false);
	loop_unfreeze(q, memflags);
	return err;
}

/**
 * loop_clear_limits() - stop offering discard or write-zeroes
 * @lo:           the device, bound; called from process context outside
 *                the I/O path (loop_limits_work())
 * @discard:      clear discard
 * @write_zeroes: clear write-zeroes
 *
 * Without a freeze, as the block layer allows for limits that only say
 * what to send next.
 */
void loop_clear_limits(struct loop_device *lo, bool discard,
		       bool write_zeroes)
{
	struct request_queue *q = lo->lo_disk->queue;
	struct queue_limits lim = queue_limits_start_update(q);

	if (discard) {
		lim.max_hw_discard_sectors = 0;
		lim.discard_granularity = 0;
	}
	if (write_zeroes)
		lim.max_write_zeroes_sectors = 0;
	queue_limits_commit_update(q, &lim);
}
#else
struct gendisk *loop_alloc_disk(struct loop_device *lo)
{
	struct gendisk *disk = blk_mq_alloc_disk(&lo->tag_set, lo);

	if (!IS_ERR(disk)) {
		blk_queue_flag_set(QUEUE_FLAG_NONROT, disk->queue);
		blk_queue_max_hw_sectors(disk->queue, LOOP_MAX_HW_SECTORS);
	}
	return disk;
}

int loop_set_limits(struct loop_device *lo, struct file *file, loff_t offset,
		    unsigned int bsize, const struct loop_aes_ctx *crypt)
{
	struct request_queue *q = lo->lo_disk->queue;
	struct loop_queue_caps caps;

	loop_queue_caps(file, crypt, &caps);
	blk_mq_freeze_queue(q);
	blk_queue_logical_block_size(q, bsize);
	blk_queue_physical_block_size(q, bsize);
	blk_queue_io_min(q, bsize);
	q->limits.discard_granularity = caps.discard_granularity;
	blk_queue_max_discard_sectors(q, caps.max_discard_sectors);
	blk_queue_max_write_zeroes_sectors(q, caps.max_discard_sectors);
	if (test_bit(LO_UNSUPP_DISCARD, &lo->lo_unsupported)) {
		q->limits.discard_granularity = 0;
		blk_queue_max_discard_sectors(q, 0);
	}
	if (test_bit(LO_UNSUPP_WRITE_ZEROES, &lo->lo_unsupported))
		blk_queue_max_write_zeroes_sectors(q, 0);
	blk_queue_write_cache(q, caps.write_cache, false);
	if (caps.rotational)
		blk_queue_flag_clear(QUEUE_FLAG_NONROT, q);
	else
		blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	if (lo->lo_state == LO_BOUND)
		loop_update_io_path(lo, false);
	blk_mq_unfreeze_queue(q);
	return 0;
}

void loop_clear_limits(struct loop_device *lo, bool discard,
		       bool write_zeroes)
{
	struct request_queue *q = lo->lo_disk->queue;

	if (discard) {
		blk_queue_max_discard_sectors(q, 0);
		q->limits.discard_granularity = 0;
	}
	if (write_zeroes)
		blk_queue_max_write_zeroes_sectors(q, 0);
}
#endif

const struct block_device_operations lo_fops = {
	.owner		= THIS_MODULE,
	.open		= lo_open,
	.release	= lo_release,
	.ioctl		= lo_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl	= lo_compat_ioctl,
#endif
	.free_disk	= loop_free_disk,
};
