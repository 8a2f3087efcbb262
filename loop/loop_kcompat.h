/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loop_kcompat.h - aesloop: the kernel version layer's interface.
 *
 * The driver calls these instead of the block layer functions whose
 * signatures changed between the supported kernels (6.1, 6.12, 7.3);
 * loop_kcompat.c holds them, and this header the feature tests the driver
 * keys its own differences on (AESLOOP_FMODE_OPEN: the block device
 * methods' signatures, and which bd_prepare_to_claim() loop_claim() calls).
 * Nothing here knows the driver: no struct loop_device, no call into it.
 */
#ifndef AESLOOP_LOOP_KCOMPAT_H
#define AESLOOP_LOOP_KCOMPAT_H

#include <linux/blkdev.h>
#include <linux/fs.h>

struct blk_mq_tag_set;
struct kthread_worker;

#ifndef BLK_OPEN_WRITE
/*
 * Before 6.5, open modes were fmode_t, a block device's open() was given
 * the block device rather than its gendisk, and release() the mode too:
 * loop_main.c defines lo_open() and lo_release() for either.
 */
#define AESLOOP_FMODE_OPEN	/* BLK_OPEN_WRITE is ours from here on */
#define blk_mode_t	fmode_t
#define BLK_OPEN_WRITE	FMODE_WRITE
#define BLK_OPEN_EXCL	FMODE_EXCL
#endif

/**
 * struct loop_queue_caps - what a loop's queue offers over its backing file
 * @discard_granularity:      bytes; 0 when @max_discard_sectors is 0
 * @max_discard_sectors:      largest discard, 512-byte sectors; 0 for none
 * @max_write_zeroes_sectors: largest write-zeroes, 512-byte sectors; 0 for
 *                            none
 * @rotational:               the backing store is a rotating disk
 * @keep_rotational:          unbinding: the flag stays as the last backing
 *                            store set it, as the stock driver leaves it
 * @write_cache:              data passes a volatile cache: flushes are
 *                            needed
 */
struct loop_queue_caps {
	unsigned int	discard_granularity;
	unsigned int	max_discard_sectors;
	unsigned int	max_write_zeroes_sectors;
	bool		rotational;
	bool		keep_rotational;
	bool		write_cache;
};

int loop_claim(struct block_device *bdev, void *holder);
void loop_unclaim(struct block_device *bdev, void *holder);
void loop_media_changed(struct gendisk *disk);
struct address_space *loop_bdev_mapping(struct block_device *bdev);
bool loop_bdev_rotational(struct block_device *bdev);
unsigned int loop_tag_set_flags(void);
unsigned int loop_freeze(struct request_queue *q);
void loop_unfreeze(struct request_queue *q, unsigned int memflags);
struct kthread_worker *loop_run_worker(int number, unsigned int i);
struct gendisk *loop_alloc_disk(struct blk_mq_tag_set *set, void *queuedata,
				unsigned int max_hw_sectors);
int loop_commit_limits(struct request_queue *q, unsigned int bsize,
		       const struct loop_queue_caps *caps,
		       unsigned int *memflags);
void loop_clear_limits(struct request_queue *q, bool discard,
		       bool write_zeroes);

#endif /* AESLOOP_LOOP_KCOMPAT_H */
