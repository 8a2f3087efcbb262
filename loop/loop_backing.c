// SPDX-License-Identifier: GPL-2.0
/*
 * loop_backing.c - aesloop: what a backing file makes of a loop, decided
 * when it is bound or reconfigured.
 *
 * loop_config.c asks here for the logical block size of a loop bound
 * without one, for what the queue offers over the file (discard,
 * write-zeroes, the rotational and write-cache flags), whether direct I/O
 * suits it, and, with the queue frozen, which way the request path
 * (loop_io.c) sends I/O: as bios to a backing block device, or through the
 * backing file, buffered or direct.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/fs.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/stat.h>

#include "loop.h"

/**
 * loop_bio_target() - the block device a loop sends its bios to, if any
 * @file:   the backing file
 * @offset: where the loop's data starts in @file, bytes
 * @bsize:  the loop's logical block size, bytes
 *
 * A backing block device is driven with bios, no page cache in between,
 * when @offset and @bsize are multiples of its logical block size, so that
 * every request suits it.  Otherwise, and for a regular file, I/O goes
 * through the file (its page cache, or O_DIRECT).
 *
 * Return: the block device, or NULL.
 */
static struct block_device *loop_bio_target(struct file *file,
					    loff_t offset, unsigned int bsize)
{
	struct block_device *bdev = loop_file_bdev(file);
	unsigned int lbs;

	if (!bdev)
		return NULL;
	lbs = bdev_logical_block_size(bdev);
	if (offset % lbs || bsize % lbs)
		return NULL;
	return bdev;
}

/**
 * loop_can_dio() - whether direct I/O on the backing file suits a device
 * @lo:   the device, its offset and logical block size set
 * @file: the backing file
 *
 * Direct I/O needs the file system's support, and the offset and the
 * loop's logical block size (which every request and every segment of it
 * is aligned to) to be multiples of the file's direct I/O alignment: what
 * statx() reports as STATX_DIOALIGN (file offsets and memory), as the
 * stock driver asks from 6.14 on, or where the file system does not say,
 * the logical block size of the device below (the backing device itself,
 * or the file system's).
 *
 * Return: true when direct I/O can be used.
 */
bool loop_can_dio(struct loop_device *lo, struct file *file)
{
	unsigned int bsize = queue_logical_block_size(lo->lo_disk->queue);
	struct inode *inode = file->f_mapping->host;
	struct block_device *bdev = S_ISBLK(inode->i_mode) ? I_BDEV(inode) :
				    inode->i_sb->s_bdev;
	unsigned int align = bdev ? bdev_logical_block_size(bdev) : SECTOR_SIZE;
	unsigned int mem_align = 1;
	struct kstat st;

	if (!(file->f_mode & FMODE_CAN_ODIRECT))
		return false;
	if (!vfs_getattr(&file->f_path, &st, STATX_DIOALIGN, AT_STATX_SYNC_AS_STAT) &&
	    (st.result_mask & STATX_DIOALIGN) && st.dio_offset_align) {
		align = st.dio_offset_align;
		mem_align = st.dio_mem_align;
	}
	return bsize % align == 0 && lo->lo_offset % align == 0 &&
	       mem_align && bsize % mem_align == 0;
}

/**
 * loop_default_block_size() - the logical block size of a loop bound
 *                             without one
 * @file:  the backing file
 * @flags: the lo_flags asked for
 *
 * As the stock driver (6.12's; 6.1's for files opened O_DIRECT): when
 * direct I/O is asked for, by LO_FLAGS_DIRECT_IO or a file opened O_DIRECT,
 * the logical block size of the device below (the backing device, or the
 * file system's), so that direct I/O, and bios to a backing device with
 * 4096-byte sectors, work.  Otherwise 512 bytes, which every backing file
 * takes, through the page cache if need be (loop_update_io_path() says so).
 *
 * Return: the block size in bytes, 512..PAGE_SIZE.
 */
unsigned int loop_default_block_size(struct file *file, u32 flags)
{
	struct inode *inode = file->f_mapping->host;
	struct block_device *bdev = S_ISBLK(inode->i_mode) ? I_BDEV(inode) :
				    inode->i_sb->s_bdev;

	if (!(flags & LO_FLAGS_DIRECT_IO) && !(file->f_flags & O_DIRECT))
		return SECTOR_SIZE;
	return bdev ? bdev_logical_block_size(bdev) : SECTOR_SIZE;
}

/**
 * loop_fill_queue_caps() - work out what a loop's queue offers over a
 *                          backing file
 * @file:   the backing file, or NULL for an unbound device
 * @crypt:  the key the loop has or will have, NULL for none
 * @caps:   filled in
 *
 * As the stock driver: a backing device's rotational flag, or that of the
 * file system's device; discard and write-zeroes as far as the backing
 * device can zero (a discard becomes a zeroing fallocate of the device,
 * so it reads back as zeros), or a punched hole in a file.  Never on an
 * encrypted loop: a hole would read back as garbage, not zeros, and show
 * what is unused.  A bound queue always caches writes, as stock: even
 * where bios could go straight to a backing device without a volatile
 * cache, the I/O path may fall back to its page cache (loop_update_io_path()),
 * and a flush is then what writes it back; one that reaches a device
 * without a cache costs nothing.  An unbound device has none, as stock: a
 * flush there (an fsync of /dev/loopN after its detach, as e2fsprogs'
 * tools do at close) has nothing to write and must not fail.  It keeps
 * the rotational flag its last backing file gave it, as stock.
 */
void loop_fill_queue_caps(struct file *file, const struct loop_aes_ctx *crypt,
			  struct loop_queue_caps *caps)
{
	struct block_device *bdev;
	struct inode *inode;

	memset(caps, 0, sizeof(*caps));
	if (!file) {
		caps->keep_rotational = true;
		return;
	}
	caps->write_cache = true;
	inode = file->f_mapping->host;
	bdev = loop_file_bdev(file);
	if (bdev) {
		caps->rotational = loop_bdev_rotational(bdev);
		if (!crypt) {
			caps->max_discard_sectors = bdev_write_zeroes_sectors(bdev);
			caps->discard_granularity = bdev_discard_granularity(bdev) ?:
						    bdev_physical_block_size(bdev);
		}
	} else {
		if (inode->i_sb->s_bdev)
			caps->rotational = loop_bdev_rotational(inode->i_sb->s_bdev);
		if (!crypt && file->f_op->fallocate) {
			caps->max_discard_sectors = UINT_MAX >> SECTOR_SHIFT;
			caps->discard_granularity = inode->i_sb->s_blocksize;
		}
	}
	if (!caps->max_discard_sectors)
		caps->discard_granularity = 0;
	caps->max_write_zeroes_sectors = caps->max_discard_sectors;
}

/*
 * Write back and drop the page cache of a backing block device: bios that
 * bypass it must not read data older than it holds, and none of its pages
 * may be written back over theirs later.  The loop's queue is frozen, so
 * reclaim must not write to it meanwhile (swap on this loop).
 */
static int lo_drop_backing_cache(struct loop_device *lo, struct file *file)
{
	struct address_space *mapping = file->f_mapping;
	unsigned int noio = memalloc_noio_save();
	int err;

	err = filemap_write_and_wait(mapping);
	if (!err)
		err = invalidate_inode_pages2(mapping);
	memalloc_noio_restore(noio);
	if (err)
		pr_warn("%s: cannot write back and drop the page cache of %pg (%d)\n",
			lo->lo_disk->disk_name, I_BDEV(mapping->host), err);
	return err;
}

/**
 * loop_update_io_path() - choose between bios and the backing file
 * @lo:    the device: lo_mutex held and the queue frozen (or not yet live);
 *         its backing file, offset and logical block size set
 * @bind:  the backing file is new (LOOP_SET_FD, LOOP_CONFIGURE,
 *         LOOP_CHANGE_FD)
 * @flags: the lo_flags to set, LO_FLAGS_DIRECT_IO as asked for; they are
 *         set once, with LO_FLAGS_DIRECT_IO as it can be
 *
 * Sets @lo->lo_bdev (see loop_bio_target(); NULL for a regular file, also
 * when it replaces a device) and LO_FLAGS_DIRECT_IO: asked for, or the
 * file was opened O_DIRECT (as the stock driver), and possible
 * (loop_can_dio()).  Bios bypass the backing device's page cache, so when
 * I/O starts going as bios (at a bind too: another opener may have left
 * dirty pages), and when it goes back to the page cache (its pages are
 * older than the bios), that cache is written back and dropped.  If that
 * fails, I/O stays in the page cache, which is always correct.  A backing
 * device whose sectors the loop cannot take as bios gets a notice: its
 * page cache needs memory, which swap on the loop cannot count on.
 */
void loop_update_io_path(struct loop_device *lo, bool bind, u32 flags)
{
	struct file *file = lo->lo_backing_file;
	struct block_device *bdev = loop_file_bdev(file), *target;
	unsigned int bsize = queue_logical_block_size(lo->lo_disk->queue);

	if (file->f_flags & O_DIRECT)
		flags |= LO_FLAGS_DIRECT_IO;
	if (!loop_can_dio(lo, file))
		flags &= ~LO_FLAGS_DIRECT_IO;
	if (flags != lo->lo_flags)
		loop_set_flags(lo, flags);

	target = loop_bio_target(file, lo->lo_offset, bsize);
	/* A regular file, maybe in place of a device (LOOP_CHANGE_FD). */
	if (!bdev) {
		lo->lo_bdev = NULL;
		return;
	}
	if (!bind && target == lo->lo_bdev)
		return;
	if (!target) {
		if (!bind)
			lo_drop_backing_cache(lo, file);
		pr_notice("%s: offset %lld and %u-byte blocks do not suit the %u-byte sectors of %pg: I/O goes through its page cache, not safe for swap\n",
			  lo->lo_disk->disk_name, (long long)lo->lo_offset, bsize,
			  bdev_logical_block_size(bdev), bdev);
	} else if (lo_drop_backing_cache(lo, file)) {
		pr_warn("%s: I/O stays in the page cache of %pg\n",
			lo->lo_disk->disk_name, bdev);
		target = NULL;
	}
	lo->lo_bdev = target;
}
