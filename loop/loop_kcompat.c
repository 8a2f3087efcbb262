// SPDX-License-Identifier: GPL-2.0
/*
 * loop_kcompat.c - aesloop: the one place that knows kernel API differences.
 *
 * Supported: Debian's 6.1 (bookworm), 6.12 and 7.3 (trixie-backports)
 * kernels.  What differs between them is wrapped here and in
 * loop_kcompat.h, detected by the kernel's own feature macros or, where
 * there is none, by a header probe in Kbuild, so the rest of the driver
 * reads as one code base.  A leaf: nothing here calls back into the driver.
 */
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/kthread.h>

#include "loop_kcompat.h"

#ifndef AESLOOP_FMODE_OPEN
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
/* Before 6.5, bd_prepare_to_claim() took no holder_ops. */
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
 * @set:            its tag set, allocated
 * @queuedata:      the device, for the queue and the disk
 * @max_hw_sectors: the largest request, 512-byte sectors
 *
 * The queue has no write cache until bound (a flush on an unbound device
 * succeeds with nothing to do); from 6.11 on it is non-rotational, before
 * rotational, as the stock driver's.
 *
 * Return: the disk, or an ERR_PTR.
 */
struct gendisk *loop_alloc_disk(struct blk_mq_tag_set *set, void *queuedata,
				unsigned int max_hw_sectors)
{
	struct queue_limits lim = {
		.max_hw_sectors	= max_hw_sectors,
	};

	return blk_mq_alloc_disk(set, &lim, queuedata);
}

/**
 * loop_commit_limits() - set a queue's limits, and leave it frozen
 * @q:        the queue, not frozen
 * @bsize:    logical block size: 512, 1024, 2048 or 4096 bytes
 * @caps:     what the backing file offers (discard, write-zeroes, the
 *            rotational and write-cache flags)
 * @memflags: set to what loop_unfreeze() takes back
 *
 * The queue is frozen on return whatever the outcome, so that the caller
 * can switch its I/O path to the new limits before any request sees them;
 * it calls loop_unfreeze() with @memflags.  The limits lock is taken
 * before the freeze, as the block layer wants.
 *
 * Return: 0 or a negative errno from the block layer (limits unchanged).
 */
int loop_commit_limits(struct request_queue *q, unsigned int bsize,
		       const struct loop_queue_caps *caps,
		       unsigned int *memflags)
{
	struct queue_limits lim = queue_limits_start_update(q);

	lim.logical_block_size = bsize;
	lim.physical_block_size = bsize;
	lim.io_min = bsize;
	lim.discard_granularity = caps->discard_granularity;
	lim.max_hw_discard_sectors = caps->max_discard_sectors;
	lim.max_write_zeroes_sectors = caps->max_write_zeroes_sectors;
	lim.features &= ~BLK_FEAT_WRITE_CACHE;
	if (caps->write_cache)
		lim.features |= BLK_FEAT_WRITE_CACHE;
	if (!caps->keep_rotational) {
		lim.features &= ~BLK_FEAT_ROTATIONAL;
		if (caps->rotational)
			lim.features |= BLK_FEAT_ROTATIONAL;
	}
	*memflags = loop_freeze(q);
	return queue_limits_commit_update(q, &lim);
}

/**
 * loop_clear_limits() - stop offering discard or write-zeroes
 * @q:            the queue of a bound device; called from process context
 *                outside the I/O path
 * @discard:      clear discard
 * @write_zeroes: clear write-zeroes
 *
 * Without a freeze, as the block layer allows for limits that only say
 * what to send next.
 */
void loop_clear_limits(struct request_queue *q, bool discard,
		       bool write_zeroes)
{
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
/*
 * Rotational until bound, as the stock driver of these kernels: blk-wbt
 * takes its latency target from the flag once, when the disk is added
 * (75 ms rotational, 2 ms not), and keeps it whatever the loop is bound
 * to later, so the stock driver's loops all throttle writeback at 75 ms.
 */
struct gendisk *loop_alloc_disk(struct blk_mq_tag_set *set, void *queuedata,
				unsigned int max_hw_sectors)
{
	struct gendisk *disk = blk_mq_alloc_disk(set, queuedata);

	if (!IS_ERR(disk))
		blk_queue_max_hw_sectors(disk->queue, max_hw_sectors);
	return disk;
}

int loop_commit_limits(struct request_queue *q, unsigned int bsize,
		       const struct loop_queue_caps *caps,
		       unsigned int *memflags)
{
	*memflags = loop_freeze(q);
	blk_queue_logical_block_size(q, bsize);
	blk_queue_physical_block_size(q, bsize);
	blk_queue_io_min(q, bsize);
	q->limits.discard_granularity = caps->discard_granularity;
	blk_queue_max_discard_sectors(q, caps->max_discard_sectors);
	blk_queue_max_write_zeroes_sectors(q, caps->max_write_zeroes_sectors);
	blk_queue_write_cache(q, caps->write_cache, false);
	if (!caps->keep_rotational) {
		if (caps->rotational)
			blk_queue_flag_clear(QUEUE_FLAG_NONROT, q);
		else
			blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	}
	return 0;
}

void loop_clear_limits(struct request_queue *q, bool discard,
		       bool write_zeroes)
{
	if (discard) {
		blk_queue_max_discard_sectors(q, 0);
		q->limits.discard_granularity = 0;
	}
	if (write_zeroes)
		blk_queue_max_write_zeroes_sectors(q, 0);
}
#endif
